/*
 * The viewer's sound (sound.h).
 *
 * libpulse's threaded main loop runs the streams. Packets go into a playout
 * (media/playout.c) as they arrive, and frames come out of it into the
 * playback stream, under the loop's lock, both when a packet arrives and
 * when the stream asks for more (its requests are the playback clock).
 * Playback starts once START_US is buffered; after the stream has run dry,
 * it resumes only once it holds the sink's latency (resume_deep). When what
 * waits in the stream falls under LOW_US and the next packet is not there,
 * the playout conceals (Opus's FEC or loss concealment) rather than let the
 * sound stop; a late packet plays after its stand-in. The stream is
 * variable-rate: over each second what waited is held near TARGET_US, plus
 * the margin the link's jitter has shown, by playing up to 2% faster or
 * slower, which absorbs the two clocks' drift and follows the jitter
 * without cutting a sample. Only past LIMIT_US (a link that stopped for
 * seconds) is sound thrown away. Until the stream is first heard playing (a
 * local sink waking from idle can take a second to start) its latency says
 * nothing, so what was written but not read is held to what it waits for
 * plus TARGET_US: no backlog waits for the sink. When the server says the
 * sound ended, the stream plays out and is corked, so a silent session
 * wakes nobody.
 *
 * In step with frames: the server stamps frames (when the app drew them)
 * and sound (when it played) with its own clock. The viewer knows when it
 * showed each frame and when each sample will be heard, both by its clock,
 * so (heard - stamp) - (shown - stamp) compares the two delays whatever the
 * clocks' offset. Sound that would be heard more than SYNC_US before its
 * picture is held back (the playout's target grows, and the pace fills it);
 * sound that runs late is held back less.
 */
#include <opus.h>
#include <pulse/pulseaudio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audio.h"
#include "connection.h"
#include "log.h"
#include "monotonic.h"
#include "playout.h"
#include "pulse.h"
#include "sound.h"

#define START_US 20000 /* buffered before playback starts */
#define LOW_US 10000 /* waiting under this: conceal rather than run dry */
#define TARGET_US 20000 /* what waits on average once steady, before jitter's margin */
#define STREAM_US 150000 /* the stream's own target length: the most it holds */
#define REQUEST_US 5000 /* how often the stream asks for more */
#define LIMIT_US 200000 /* waiting above this (plus sync) throws sound away */
#define DRY_AGAIN_US 500000 /* run dry twice within this: resume deeper */
#define SYNC_US 40000 /* sound and pictures within this of each other */
#define SYNC_MAX_US 300000 /* the most sound is held back for slow pictures */
#define SYNC_EVERY_US 500000
#define VIDEO_FRESH_US 2000000 /* a picture this old says nothing of the link */

struct rv_sound {
	struct pulse pulse;
	pa_stream *play, *mic;
	bool failed; /* no local sound server: said once */
	bool ending; /* the server's sound ended; cork when played out */
	bool corked;
	/* The stream was heard playing since it last started. Until then
	 * its latency says nothing (a sink waking from idle can take a second
	 * to start), so what waits is bounded by what was written. */
	bool flowing;
	uint64_t prebuf_us; /* held before it plays: START_US, or deep */
	uint64_t dry_at_us; /* the last underrun */

	struct playout playout;
	int16_t pcm[WIRE_AUDIO_MAX_SAMPLES * WIRE_AUDIO_CHANNELS];
	uint32_t rate_hz; /* the playback stream's pace */

	/* Keeping step: smoothed delays (local time minus server stamp). */
	int64_t video_delay, audio_delay;
	bool have_video, have_audio;
	uint64_t video_at_us; /* when the last frame was shown */
	int64_t extra_us; /* held back for the pictures */
	uint64_t synced_at_us;

	/* The microphone (--mic). */
	bool mic_on;
	struct audio_framer framer;
	struct audio_queue queue;

	/* Stats since the last line. */
	uint32_t packets, underruns;
	int64_t offset_us; /* audio_delay - video_delay, for the line */
	uint64_t latency_us;
};

/* What the stream asks of the sound server; prebuf_us: what it holds
 * before it plays, at the start and after running dry. (tlength is what is
 * asked, not what the server made of it: the server, adjusting latency,
 * splits what is asked between the sink and the stream again.) */
static pa_buffer_attr stream_attr(pa_usec_t prebuf_us)
{
	const pa_sample_spec *spec = &pulse_wire_spec;
	return (pa_buffer_attr){
		.maxlength = (uint32_t)pa_usec_to_bytes(LIMIT_US + SYNC_MAX_US + 100000, spec),
		.tlength = (uint32_t)pa_usec_to_bytes(STREAM_US, spec),
		.prebuf = (uint32_t)pa_usec_to_bytes(prebuf_us, spec),
		.minreq = (uint32_t)pa_usec_to_bytes(REQUEST_US, spec),
		.fragsize = (uint32_t)-1,
	};
}

/* Loop lock held. The stream ran dry again soon after it resumed. As a
 * stream resumes, the sink renders up to its whole latency ahead at once;
 * one that resumes with only START_US can run dry again at once, and
 * PulseAudio ends each of those underruns with a rewind that drops part of
 * what was written: a cycle that does not settle (seen: 50 underruns and 50
 * stand-ins a second for as long as the sound lasted). Once the stream has
 * run dry twice within DRY_AGAIN_US, it resumes only when it holds the
 * sink's latency. One underrun alone (a sink that starts late) does not
 * make every later resume wait longer. A sound that starts afresh starts at
 * START_US again. */
static void resume_deep(struct rv_sound *s, bool deep)
{
	const pa_timing_info *timing = pa_stream_get_timing_info(s->play);
	uint64_t prebuf = START_US;
	if (deep) {
		if (!timing || !timing->configured_sink_usec) {
			return;
		}
		prebuf = timing->configured_sink_usec + REQUEST_US;
		prebuf = prebuf > STREAM_US / 2 ? STREAM_US / 2 : prebuf;
	}
	if (prebuf == s->prebuf_us) {
		return;
	}
	pa_buffer_attr attr = stream_attr(prebuf);
	pulse_forget(pa_stream_set_buffer_attr(s->play, &attr, NULL, NULL));
	s->prebuf_us = prebuf;
}

/* Loop lock held. The sound ends: what the stream holds plays, even less
 * than it waits for before it plays. */
static void play_what_is_held(struct rv_sound *s)
{
	if (s->play && !s->corked) {
		pulse_forget(pa_stream_trigger(s->play, NULL, NULL));
	}
}

static void handle_underflow(pa_stream *stream, void *data)
{
	struct rv_sound *s = data;
	if (s->ending) {
		pulse_forget(pa_stream_cork(stream, 1, NULL, NULL));
		s->corked = true;
		s->ending = false;
		s->flowing = false;
		s->dry_at_us = 0;
		resume_deep(s, false);
	} else {
		s->underruns++; /* a gap the playout could not fill */
		uint64_t now = monotonic_usec();
		if (s->dry_at_us && now - s->dry_at_us < DRY_AGAIN_US) {
			resume_deep(s, true);
		}
		s->dry_at_us = now;
	}
}

static void fill(struct rv_sound *s, bool arrived);

static void handle_write(pa_stream *stream, size_t nbytes, void *data)
{
	fill(data, false);
}

static void make_play(struct rv_sound *s)
{
	const pa_sample_spec *spec = &pulse_wire_spec;
	s->play = pa_stream_new(s->pulse.context, "remote apps", spec, NULL);
	if (!s->play) {
		return;
	}
	pa_stream_set_underflow_callback(s->play, handle_underflow, s);
	pa_stream_set_write_callback(s->play, handle_write, s);
	pa_buffer_attr attr = stream_attr(START_US);
	s->prebuf_us = START_US;
	s->rate_hz = WIRE_AUDIO_RATE;
	if (pa_stream_connect_playback(s->play, NULL, &attr,
		    PA_STREAM_ADJUST_LATENCY | PA_STREAM_INTERPOLATE_TIMING |
			    PA_STREAM_AUTO_TIMING_UPDATE | PA_STREAM_VARIABLE_RATE,
		    NULL, NULL) < 0) {
		pa_stream_unref(s->play);
		s->play = NULL;
	}
}

static void handle_mic_read(pa_stream *stream, size_t nbytes, void *data)
{
	struct rv_sound *s = data;
	pulse_read(stream, s->mic_on, &s->framer, &s->queue);
}

static void make_mic(struct rv_sound *s)
{
	s->mic = pulse_record(&s->pulse, "microphone", NULL, PA_STREAM_ADJUST_LATENCY,
		handle_mic_read, s);
}

static void set_mic(struct rv_sound *s, bool on)
{
	s->mic_on = on;
	if (on && !s->mic && !s->failed &&
		pa_context_get_state(s->pulse.context) == PA_CONTEXT_READY) {
		make_mic(s);
		return;
	}
	if (s->mic && pa_stream_get_state(s->mic) == PA_STREAM_READY) {
		if (on) {
			pulse_forget(pa_stream_flush(s->mic, NULL, NULL));
		}
		pulse_forget(pa_stream_cork(s->mic, !on, NULL, NULL));
	}
	if (!on) {
		audio_framer_stop(&s->framer, &s->queue);
	}
}

static void handle_context(pa_context *c, void *data)
{
	struct rv_viewer *viewer = data;
	struct rv_sound *s = viewer->sound;
	switch (pa_context_get_state(c)) {
	case PA_CONTEXT_READY:
		if (s->mic_on) {
			make_mic(s);
		}
		break;
	case PA_CONTEXT_FAILED:
	case PA_CONTEXT_TERMINATED:
		if (!s->failed) {
			log_error("no sound here: cannot reach the local sound server (%s); the "
				  "session's sound is dropped",
				pa_strerror(pa_context_errno(c)));
		}
		s->failed = true;
		break;
	default:
		break;
	}
}

void sound_init(struct rv_viewer *viewer)
{
	if (!viewer->options.audio && !viewer->options.mic) {
		return;
	}
	struct rv_sound *s = calloc(1, sizeof(*s));
	if (!s) {
		return;
	}
	viewer->sound = s;
	s->queue.fd = -1;
	if (!playout_init(&s->playout) || !audio_queue_init(&s->queue) ||
		!audio_framer_init(&s->framer, OPUS_APPLICATION_VOIP)) {
		sound_finish(viewer);
	}
}

/* The local sound server is reached only once there is sound to play or a
 * microphone to send: a viewer of silent apps never touches it. */
static bool reach_local(struct rv_viewer *viewer)
{
	struct rv_sound *s = viewer->sound;
	if (s->pulse.loop || s->failed) {
		return s->pulse.loop != NULL;
	}
	const char *error;
	if (!pulse_open(&s->pulse, "rcomp-view", NULL, handle_context, viewer, &error)) {
		log_error("no sound here: cannot reach the local sound server (%s)", error);
		s->failed = true;
		return false;
	}
	return true;
}

void sound_finish(struct rv_viewer *viewer)
{
	struct rv_sound *s = viewer->sound;
	if (!s) {
		return;
	}
	pa_stream *streams[] = {s->play, s->mic};
	pulse_close(&s->pulse, streams, 2);
	s->play = s->mic = NULL;
	playout_finish(&s->playout);
	audio_framer_finish(&s->framer);
	audio_queue_finish(&s->queue);
	free(s);
	viewer->sound = NULL;
}

uint32_t sound_caps(struct rv_viewer *viewer)
{
	return viewer->sound && viewer->options.audio ? WIRE_CAP_AUDIO : 0;
}

void sound_link_up(struct rv_viewer *viewer, uint32_t server_caps)
{
	struct rv_sound *s = viewer->sound;
	if (!s) {
		return;
	}
	bool mic = viewer->options.mic && (server_caps & WIRE_CAP_AUDIO);
	if (viewer->options.mic && !mic) {
		log_info("the session has no sound server: the microphone stays here");
	}
	if (s->pulse.loop) {
		/* A session reattached may number its sound afresh. */
		pa_threaded_mainloop_lock(s->pulse.loop);
		playout_reset(&s->playout);
		pa_threaded_mainloop_unlock(s->pulse.loop);
	}
	if (!mic || !reach_local(viewer)) {
		return;
	}
	pa_threaded_mainloop_lock(s->pulse.loop);
	set_mic(s, true);
	pa_threaded_mainloop_unlock(s->pulse.loop);
}

void sound_play_out(struct rv_viewer *viewer, int most_ms)
{
	struct rv_sound *s = viewer->sound;
	if (!s || !s->pulse.loop) {
		return;
	}
	pa_threaded_mainloop_lock(s->pulse.loop);
	bool playing = s->play && !s->corked;
	if (playing && !s->ending) {
		/* The session ended before its sound did: what came plays. */
		playout_end(&s->playout, s->playout.newest);
		s->ending = true;
		fill(s, false);
		play_what_is_held(s);
	}
	pa_threaded_mainloop_unlock(s->pulse.loop);
	for (int waited = 0; playing && waited < most_ms; waited += 10) {
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
		pa_threaded_mainloop_lock(s->pulse.loop);
		playing = !s->corked && s->ending;
		pa_threaded_mainloop_unlock(s->pulse.loop);
	}
}

void sound_link_down(struct rv_viewer *viewer)
{
	struct rv_sound *s = viewer->sound;
	if (!s || !s->pulse.loop) {
		return;
	}
	pa_threaded_mainloop_lock(s->pulse.loop);
	set_mic(s, false);
	/* What is buffered plays out; the session's sound resumes on reattach. */
	s->ending = true;
	playout_end(&s->playout, s->playout.cursor - 1);
	play_what_is_held(s);
	pa_threaded_mainloop_unlock(s->pulse.loop);
	audio_queue_clear(&s->queue);
}

static int64_t smooth(int64_t old, int64_t sample, bool have)
{
	return have ? old + (sample - old) / 4 : sample;
}

void sound_frame_presented(struct rv_viewer *viewer, uint64_t drawn_us, uint64_t shown_us)
{
	struct rv_sound *s = viewer->sound;
	if (!s || !drawn_us) {
		return;
	}
	uint64_t now = shown_us;
	/* Only pictures drawn since the last one shown measure the link;
	 * a still window presents old content. */
	int64_t delay = (int64_t)(now - drawn_us);
	s->video_delay = smooth(s->video_delay, delay,
		s->have_video && now - s->video_at_us < VIDEO_FRESH_US);
	s->have_video = true;
	s->video_at_us = now;
}

/* Loop lock held. How far ahead of the pictures the sound is heard, and
 * what to hold back for it. */
static void keep_step(struct rv_sound *s, uint64_t now)
{
	bool fresh = s->have_video && now - s->video_at_us < VIDEO_FRESH_US;
	if (!fresh || !s->have_audio) {
		s->extra_us = 0;
		return;
	}
	int64_t offset = s->audio_delay - s->video_delay; /* > 0: sound late */
	s->offset_us = offset;
	if (now - s->synced_at_us < SYNC_EVERY_US) {
		return;
	}
	if (offset < -SYNC_US && s->extra_us < SYNC_MAX_US) {
		/* Sound early: hold it back by enough to land mid-window. The
		 * pace plays it in slower, never a gap. */
		int64_t add = -offset - SYNC_US / 2;
		if (s->extra_us + add > SYNC_MAX_US) {
			add = SYNC_MAX_US - s->extra_us;
		}
		s->extra_us += add;
		s->synced_at_us = now;
	} else if (offset > SYNC_US && s->extra_us > 0) {
		/* Sound late: hold back less; the pace plays it away. */
		int64_t less = offset - SYNC_US / 2;
		s->extra_us = less > s->extra_us ? 0 : s->extra_us - less;
		s->synced_at_us = now;
	}
}

/* Loop lock held. What waits in the stream to be played, and how long until
 * what is written now is heard (that and the device's own latency). The
 * stream asks for what it lacks of its target length, so the target less
 * what it asks for is exactly what it holds, as of its last request. (Its
 * interpolated clock, tried first, read from empty to full within a second
 * here and made the pace swing.) Until the stream is first heard playing,
 * what was written and not read. False while the stream cannot say. */
static bool measure(struct rv_sound *s, int64_t *latency_us, int64_t *waiting_us)
{
	const pa_buffer_attr *attr = pa_stream_get_buffer_attr(s->play);
	const pa_timing_info *timing = pa_stream_get_timing_info(s->play);
	size_t asked = pa_stream_writable_size(s->play);
	if (!attr || !timing || asked == (size_t)-1) {
		return false;
	}
	if (timing->playing) {
		s->flowing = true;
	}
	uint64_t held = attr->tlength > asked ? attr->tlength - asked : 0;
	if (!s->flowing) {
		int64_t queued = timing->write_index - timing->read_index;
		held = queued > 0 ? (uint64_t)queued : 0;
	}
	*waiting_us = (int64_t)pa_bytes_to_usec(held, pa_stream_get_sample_spec(s->play));
	*latency_us = *waiting_us + (int64_t)timing->sink_usec;
	return true;
}

/* Loop lock held. The pace the playout asks for, told to the stream when it
 * moved by more than a step a listener could tell from the last. */
static void set_pace(struct rv_sound *s, double rate)
{
	uint32_t hz = (uint32_t)(WIRE_AUDIO_RATE * rate + 0.5);
	uint32_t step = WIRE_AUDIO_RATE / 2000; /* 0.05% */
	if (hz + step > s->rate_hz && hz < s->rate_hz + step) {
		return;
	}
	pa_operation *op = pa_stream_update_sample_rate(s->play, hz, NULL, NULL);
	if (op) {
		pa_operation_unref(op);
		s->rate_hz = hz;
	}
}

/* Loop lock held. Frames from the playout into the stream: whatever is
 * ready, and a stand-in when the stream would otherwise run dry. arrived:
 * a packet just came, so what waits now measures the link. */
static void fill(struct rv_sound *s, bool arrived)
{
	if (!s->play || pa_stream_get_state(s->play) != PA_STREAM_READY) {
		return;
	}
	int64_t latency = 0, waiting = 0;
	bool known = measure(s, &latency, &waiting);
	uint64_t now = monotonic_usec();
	if (known && s->flowing) {
		set_pace(s, playout_pace(&s->playout, waiting, TARGET_US + s->extra_us, now));
	}
	/* Before the stream plays, no backlog; after, nothing beyond the
	 * limit. */
	int64_t most = (s->flowing ? LIMIT_US : (int64_t)s->prebuf_us + TARGET_US) + s->extra_us;
	for (;;) {
		if (waiting > most && playout_skip(&s->playout, s->pcm)) {
			continue;
		}
		uint64_t stamp;
		bool urgent = known && s->flowing && waiting < LOW_US;
		int samples = playout_next(&s->playout, urgent, s->pcm, &stamp);
		if (samples <= 0) {
			break;
		}
		size_t bytes = (size_t)samples * AUDIO_SAMPLE_BYTES;
		if (pa_stream_write(s->play, s->pcm, bytes, NULL, 0, PA_SEEK_RELATIVE) < 0) {
			break;
		}
		int64_t played = (int64_t)audio_samples_us((uint64_t)samples);
		waiting += played;
		latency += played;
		if (s->corked) {
			pulse_forget(pa_stream_cork(s->play, 0, NULL, NULL));
			s->corked = false;
		}
		if (stamp) {
			s->packets++;
		}
		if (stamp && known) {
			/* This frame's last sample is heard once all before it is. */
			int64_t delay =
				(int64_t)now + latency - (int64_t)(stamp + (uint64_t)played);
			s->audio_delay = smooth(s->audio_delay, delay, s->have_audio);
			s->have_audio = true;
			s->latency_us = (uint64_t)latency;
		}
	}
	if (known) {
		keep_step(s, now);
	}
}

void sound_message(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_sound *s = viewer->sound;
	if (!s || !viewer->options.audio || !reach_local(viewer)) {
		return;
	}
	pa_threaded_mainloop_lock(s->pulse.loop);
	if (msg->type == WIRE_AUDIO_END) {
		playout_end(&s->playout, msg->audio_end.seq);
		s->ending = true;
		s->have_audio = false;
		fill(s, false);
		play_what_is_held(s); /* a sound shorter than START_US too */
	} else {
		const struct wire_audio *a = &msg->audio;
		if (!s->play && pa_context_get_state(s->pulse.context) == PA_CONTEXT_READY) {
			make_play(s);
		}
		s->ending = false;
		playout_put(&s->playout, a->seq, a->time_us, a->data, (uint16_t)a->size);
		fill(s, true);
	}
	pa_threaded_mainloop_unlock(s->pulse.loop);
}

void sound_poll_fd(struct rv_viewer *viewer, struct pollfd *fd)
{
	struct rv_sound *s = viewer->sound;
	fd->fd = s && viewer->options.mic ? s->queue.fd : -1;
	fd->events = POLLIN;
}

void sound_handle_poll(struct rv_viewer *viewer, const struct pollfd *fd)
{
	struct rv_sound *s = viewer->sound;
	if (!s || fd->fd < 0 || !(fd->revents & POLLIN)) {
		return;
	}
	struct rv_connection *conn = &viewer->connection;
	struct audio_packet p;
	bool end;
	while (audio_queue_pop(&s->queue, &p, &end)) {
		if (!conn->connected || !conn->welcomed) {
			continue;
		}
		struct wire_msg msg;
		if (end) {
			msg = (struct wire_msg){.type = WIRE_AUDIO_END, .audio_end = {p.seq}};
		} else if (channel_queued_class(&conn->channel, CHANNEL_AUDIO) > 1536) {
			continue; /* the link is slower than the voice: drop, never queue */
		} else {
			msg = (struct wire_msg){
				.type = WIRE_AUDIO,
				.audio = {.time_us = p.time_us,
					.seq = p.seq,
					.samples = p.samples,
					.data = p.data,
					.size = p.size},
			};
		}
		connection_send(viewer, &msg);
	}
}

void sound_describe(struct rv_viewer *viewer, char *out, size_t size)
{
	struct rv_sound *s = viewer->sound;
	*out = '\0';
	if (!s || !s->pulse.loop) {
		return;
	}
	pa_threaded_mainloop_lock(s->pulse.loop);
	if (s->packets) {
		char sync[48] = "";
		if (s->have_video && s->have_audio) {
			snprintf(sync, sizeof(sync), ", a/v %+.0f ms", (double)s->offset_us / 1000);
		}
		struct playout *p = &s->playout;
		snprintf(out, size,
			"sound %u packets, %u lost, %u late, %u concealed (%u from FEC), %u "
			"underruns, pace %+.2f%%, latency %.0f ms%s",
			s->packets, p->lost, p->late, p->concealed, p->recovered, s->underruns,
			((double)s->rate_hz / WIRE_AUDIO_RATE - 1) * 100,
			(double)s->latency_us / 1000, sync);
	}
	s->packets = s->underruns = 0;
	s->playout.lost = s->playout.late = s->playout.concealed = s->playout.recovered = 0;
	pa_threaded_mainloop_unlock(s->pulse.loop);
}
