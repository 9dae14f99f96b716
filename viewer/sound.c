/*
 * The viewer's sound (sound.h).
 *
 * libpulse's threaded main loop runs the streams; the event loop decodes
 * each packet as it arrives and writes it to the playback stream under the
 * loop's lock. The stream's own buffer is the jitter buffer: playback
 * starts once START_US is buffered, a packet that would make what waits
 * pass MAX_US (plus what keeping step with the frames needs) is dropped,
 * and what waited longer than the link's jitter needed over the last
 * second is cut from the next packets, so latency never grows with the
 * link's hiccups. Until the stream is first heard playing (a local sink
 * waking from idle can take a second to start) its latency says nothing,
 * so what was written but not read is held to START_US + TARGET_US and
 * the rest dropped: no backlog waits for the sink. When the server
 * says the sound ended, the stream plays out and is corked, so a silent
 * session wakes nobody.
 *
 * In step with frames: the server stamps frames (when the app drew them)
 * and sound (when it played) with its own clock. The viewer knows when it
 * showed each frame and when each sample will be heard, both by its clock,
 * so (heard - stamp) - (shown - stamp) compares the two delays whatever the
 * clocks' offset. Sound that would be heard more than SYNC_US before its
 * picture waits (silence is inserted); sound that runs late is dropped.
 */
#include <opus.h>
#include <pulse/pulseaudio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "connection.h"
#include "log.h"
#include "monotonic.h"
#include "sound.h"

#define START_US 20000 /* buffered before playback starts */
#define MAX_US 60000 /* waiting above this (plus sync) drops packets */
#define TARGET_US 20000 /* what the stream holds once the link is steady */
#define FLOOR_WINDOW_US 1000000
#define TRIM_SLACK_US 5000
#define SYNC_US 40000 /* sound and pictures within this of each other */
#define SYNC_MAX_US 300000 /* the most sound is held back for slow pictures */
#define SYNC_EVERY_US 500000
#define VIDEO_FRESH_US 2000000 /* a picture this old says nothing of the link */

struct rv_sound {
	pa_threaded_mainloop *loop;
	pa_context *context;
	pa_stream *play, *mic;
	bool failed; /* no local sound server: said once */
	bool ending; /* the server's sound ended; cork when played out */
	bool corked;
	/* The stream was heard playing since it last started. Until then
	 * its latency says nothing (a sink waking from idle can take a second
	 * to start), so what waits is bounded by what was written. */
	bool flowing;

	OpusDecoder *decoder;
	int16_t pcm[WIRE_AUDIO_MAX_SAMPLES * WIRE_AUDIO_CHANNELS];
	uint32_t next_seq;
	bool have_seq;

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
	uint32_t packets, gaps, late, underruns;
	int64_t trimmed_us;
	/* The least that waited in the stream this window, and what is still
	 * to be cut. */
	int64_t floor_us, trim_us;
	uint64_t floor_at_us;
	int64_t offset_us; /* audio_delay - video_delay, for the line */
	uint64_t latency_us;
};

static void handle_underflow(pa_stream *stream, void *data)
{
	struct rv_sound *s = data;
	if (s->ending) {
		pa_operation *op = pa_stream_cork(stream, 1, NULL, NULL);
		if (op) {
			pa_operation_unref(op);
		}
		s->corked = true;
		s->ending = false;
		s->flowing = false;
	} else {
		s->underruns++;
	}
}

static void make_play(struct rv_sound *s)
{
	static const pa_sample_spec spec = {
		.format = PA_SAMPLE_S16LE,
		.rate = WIRE_AUDIO_RATE,
		.channels = WIRE_AUDIO_CHANNELS,
	};
	s->play = pa_stream_new(s->context, "remote apps", &spec, NULL);
	if (!s->play) {
		return;
	}
	pa_stream_set_underflow_callback(s->play, handle_underflow, s);
	pa_buffer_attr attr = {
		.maxlength = (uint32_t)pa_usec_to_bytes(MAX_US + SYNC_MAX_US + 100000, &spec),
		.tlength = (uint32_t)pa_usec_to_bytes(MAX_US, &spec),
		.prebuf = (uint32_t)pa_usec_to_bytes(START_US, &spec),
		.minreq = (uint32_t)-1,
		.fragsize = (uint32_t)-1,
	};
	if (pa_stream_connect_playback(s->play, NULL, &attr,
		    PA_STREAM_ADJUST_LATENCY | PA_STREAM_INTERPOLATE_TIMING |
			    PA_STREAM_AUTO_TIMING_UPDATE,
		    NULL, NULL) < 0) {
		pa_stream_unref(s->play);
		s->play = NULL;
	}
}

static void handle_mic_read(pa_stream *stream, size_t nbytes, void *data)
{
	struct rv_sound *s = data;
	const void *pcm;
	size_t n;
	while (pa_stream_readable_size(stream) > 0) {
		if (pa_stream_peek(stream, &pcm, &n) < 0 || n == 0) {
			break;
		}
		if (s->mic_on) {
			if (!s->framer.running) {
				audio_framer_start(&s->framer,
					monotonic_usec() -
						audio_samples_us(n / AUDIO_SAMPLE_BYTES));
			}
			audio_framer_push(&s->framer, pcm, n, &s->queue);
		}
		pa_stream_drop(stream);
	}
}

static void make_mic(struct rv_sound *s)
{
	static const pa_sample_spec spec = {
		.format = PA_SAMPLE_S16LE,
		.rate = WIRE_AUDIO_RATE,
		.channels = WIRE_AUDIO_CHANNELS,
	};
	s->mic = pa_stream_new(s->context, "microphone", &spec, NULL);
	if (!s->mic) {
		return;
	}
	pa_stream_set_read_callback(s->mic, handle_mic_read, s);
	pa_buffer_attr attr = {.maxlength = (uint32_t)-1, .fragsize = AUDIO_FRAME_BYTES};
	if (pa_stream_connect_record(s->mic, NULL, &attr, PA_STREAM_ADJUST_LATENCY) < 0) {
		pa_stream_unref(s->mic);
		s->mic = NULL;
	}
}

static void set_mic(struct rv_sound *s, bool on)
{
	s->mic_on = on;
	if (on && !s->mic && !s->failed && pa_context_get_state(s->context) == PA_CONTEXT_READY) {
		make_mic(s);
		return;
	}
	if (s->mic && pa_stream_get_state(s->mic) == PA_STREAM_READY) {
		if (on) {
			pa_operation *op = pa_stream_flush(s->mic, NULL, NULL);
			if (op) {
				pa_operation_unref(op);
			}
		}
		pa_operation *op = pa_stream_cork(s->mic, !on, NULL, NULL);
		if (op) {
			pa_operation_unref(op);
		}
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
	int err;
	s->decoder = opus_decoder_create(WIRE_AUDIO_RATE, WIRE_AUDIO_CHANNELS, &err);
	if (!s->decoder || !audio_queue_init(&s->queue) ||
		!audio_framer_init(&s->framer, OPUS_APPLICATION_VOIP)) {
		sound_finish(viewer);
	}
}

/* The local sound server is reached only once there is sound to play or a
 * microphone to send: a viewer of silent apps never touches it. */
static bool reach_local(struct rv_viewer *viewer)
{
	struct rv_sound *s = viewer->sound;
	if (s->loop || s->failed) {
		return s->loop != NULL;
	}
	s->loop = pa_threaded_mainloop_new();
	if (!s->loop) {
		s->failed = true;
		return false;
	}
	s->context = pa_context_new(pa_threaded_mainloop_get_api(s->loop), "rcomp-view");
	if (s->context) {
		pa_context_set_state_callback(s->context, handle_context, viewer);
	}
	if (!s->context || pa_context_connect(s->context, NULL, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0 ||
		pa_threaded_mainloop_start(s->loop) < 0) {
		log_error("no sound here: cannot reach the local sound server (%s)",
			s->context ? pa_strerror(pa_context_errno(s->context)) : "out of memory");
		if (s->context) {
			pa_context_unref(s->context);
		}
		pa_threaded_mainloop_free(s->loop);
		s->context = NULL;
		s->loop = NULL;
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
	if (s->loop) {
		pa_threaded_mainloop_stop(s->loop);
	}
	if (s->play) {
		pa_stream_disconnect(s->play);
		pa_stream_unref(s->play);
	}
	if (s->mic) {
		pa_stream_disconnect(s->mic);
		pa_stream_unref(s->mic);
	}
	if (s->context) {
		pa_context_set_state_callback(s->context, NULL, NULL);
		pa_context_disconnect(s->context);
		pa_context_unref(s->context);
	}
	if (s->loop) {
		pa_threaded_mainloop_free(s->loop);
	}
	if (s->decoder) {
		opus_decoder_destroy(s->decoder);
	}
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
	s->have_seq = false;
	if (!mic || !reach_local(viewer)) {
		return;
	}
	pa_threaded_mainloop_lock(s->loop);
	set_mic(s, true);
	pa_threaded_mainloop_unlock(s->loop);
}

void sound_link_down(struct rv_viewer *viewer)
{
	struct rv_sound *s = viewer->sound;
	if (!s || !s->loop) {
		return;
	}
	pa_threaded_mainloop_lock(s->loop);
	set_mic(s, false);
	/* What is buffered plays out; the session's sound resumes on reattach. */
	s->ending = true;
	pa_threaded_mainloop_unlock(s->loop);
	audio_queue_clear(&s->queue);
}

static int64_t smooth(int64_t old, int64_t sample, bool have)
{
	return have ? old + (sample - old) / 4 : sample;
}

void sound_frame_presented(struct rv_viewer *viewer, uint64_t drawn_us)
{
	struct rv_sound *s = viewer->sound;
	if (!s || !drawn_us) {
		return;
	}
	uint64_t now = monotonic_usec();
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
		/* Sound early: hold it back by enough to land mid-window. */
		int64_t add = -offset - SYNC_US / 2;
		if (s->extra_us + add > SYNC_MAX_US) {
			add = SYNC_MAX_US - s->extra_us;
		}
		size_t bytes = (size_t)(add * WIRE_AUDIO_RATE / 1000000) * AUDIO_SAMPLE_BYTES;
		void *zero = calloc(1, bytes);
		if (zero && pa_stream_write(s->play, zero, bytes, free, 0, PA_SEEK_RELATIVE) == 0) {
			s->extra_us += add;
			s->audio_delay += add;
		} else {
			free(zero);
		}
		s->synced_at_us = now;
	} else if (offset > SYNC_US && s->extra_us > 0) {
		/* Sound late: hold back less; the drop rule takes it out. */
		int64_t less = offset - SYNC_US / 2;
		s->extra_us = less > s->extra_us ? 0 : s->extra_us - less;
		s->synced_at_us = now;
	}
}

/* Loop lock held. The least sound that waited in the stream over each
 * second is what the link's jitter did not need: past the target it is cut,
 * from the packets that arrive next. How many of this packet's samples to
 * skip. */
static int trim(struct rv_sound *s, int64_t waiting, uint64_t now, int samples)
{
	if (!s->floor_at_us || waiting < s->floor_us) {
		s->floor_us = waiting;
	}
	if (!s->floor_at_us) {
		s->floor_at_us = now;
	}
	if (now - s->floor_at_us >= FLOOR_WINDOW_US) {
		int64_t excess = s->floor_us - (TARGET_US + s->extra_us);
		if (excess > TRIM_SLACK_US) {
			s->trim_us += excess;
		}
		s->floor_at_us = now;
		s->floor_us = waiting;
	}
	if (s->trim_us <= 0) {
		return 0;
	}
	int64_t skip = s->trim_us * WIRE_AUDIO_RATE / 1000000;
	if (skip > samples) {
		skip = samples;
	}
	s->trim_us -= (int64_t)audio_samples_us((uint64_t)skip);
	s->trimmed_us += (int64_t)audio_samples_us((uint64_t)skip);
	return (int)skip;
}

static void play(struct rv_sound *s, const struct wire_audio *msg, int samples)
{
	if (!s->play && pa_context_get_state(s->context) == PA_CONTEXT_READY) {
		make_play(s);
	}
	if (!s->play || pa_stream_get_state(s->play) != PA_STREAM_READY) {
		return; /* still connecting: this packet is lost */
	}
	s->ending = false;
	if (s->corked) {
		pa_operation *op = pa_stream_cork(s->play, 0, NULL, NULL);
		if (op) {
			pa_operation_unref(op);
		}
		s->corked = false;
	}
	pa_usec_t latency = 0;
	int negative = 0;
	bool known = pa_stream_get_latency(s->play, &latency, &negative) == 0 && !negative;
	uint64_t now = monotonic_usec();
	int skip = 0;
	if (known) {
		/* What waits in the stream, without the device's own latency. */
		const pa_timing_info *timing = pa_stream_get_timing_info(s->play);
		pa_usec_t device = timing ? timing->sink_usec : 0;
		int64_t waiting = latency > device ? (int64_t)(latency - device) : 0;
		if (timing && timing->playing) {
			s->flowing = true;
		} else if (timing && !s->flowing) {
			/* Not playing yet: keep no more than the start needs and
			 * the target, so no backlog waits for the sink. */
			int64_t queued = timing->write_index - timing->read_index;
			waiting = queued > 0 ? (int64_t)pa_bytes_to_usec((uint64_t)queued,
						       pa_stream_get_sample_spec(s->play))
					     : 0;
			if (waiting > START_US + TARGET_US + s->extra_us) {
				s->late++;
				return;
			}
		}
		if (waiting > MAX_US + s->extra_us) {
			s->late++; /* the buffer is full: late sound goes */
			return;
		}
		skip = trim(s, waiting, now, samples);
	}
	size_t bytes = (size_t)(samples - skip) * AUDIO_SAMPLE_BYTES;
	if (bytes &&
		pa_stream_write(s->play, s->pcm + skip * WIRE_AUDIO_CHANNELS, bytes, NULL, 0,
			PA_SEEK_RELATIVE) < 0) {
		return;
	}
	s->packets++;
	samples -= skip;
	if (known) {
		/* The packet's last sample is heard after what is buffered. */
		int64_t heard = (int64_t)(now + latency + audio_samples_us((uint64_t)samples));
		int64_t delay =
			heard - (int64_t)(msg->time_us + audio_samples_us((uint64_t)samples));
		s->audio_delay = smooth(s->audio_delay, delay, s->have_audio);
		s->have_audio = true;
		s->latency_us = latency;
		keep_step(s, now);
	}
}

void sound_message(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_sound *s = viewer->sound;
	if (!s || !viewer->options.audio || !reach_local(viewer)) {
		return;
	}
	if (msg->type == WIRE_AUDIO_END) {
		pa_threaded_mainloop_lock(s->loop);
		s->ending = true;
		s->have_audio = false;
		pa_threaded_mainloop_unlock(s->loop);
		s->have_seq = false;
		return;
	}
	const struct wire_audio *a = &msg->audio;
	if (s->have_seq && a->seq != s->next_seq) {
		s->gaps++;
	}
	s->next_seq = a->seq + 1;
	s->have_seq = true;
	int samples = opus_decode(s->decoder, a->data, (opus_int32)a->size, s->pcm,
		WIRE_AUDIO_MAX_SAMPLES, 0);
	if (samples <= 0) {
		s->gaps++; /* a packet Opus cannot read is a hole in the sound */
		return;
	}
	pa_threaded_mainloop_lock(s->loop);
	play(s, a, samples);
	pa_threaded_mainloop_unlock(s->loop);
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
	if (!s || !s->loop) {
		return;
	}
	pa_threaded_mainloop_lock(s->loop);
	if (s->packets) {
		char sync[48] = "";
		if (s->have_video && s->have_audio) {
			snprintf(sync, sizeof(sync), ", a/v %+.0f ms", (double)s->offset_us / 1000);
		}
		snprintf(out, size,
			"sound %u packets, %u gaps, %u late dropped, %.0f ms trimmed, %u "
			"underruns, "
			"latency %.0f ms%s",
			s->packets, s->gaps, s->late, (double)s->trimmed_us / 1000, s->underruns,
			(double)s->latency_us / 1000, sync);
	}
	s->packets = s->gaps = s->late = s->underruns = 0;
	s->trimmed_us = 0;
	pa_threaded_mainloop_unlock(s->loop);
}
