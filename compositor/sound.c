/*
 * The session's sound server and what flows through it (sound.h).
 *
 * The server is the session's own (sound_daemon.c: PulseAudio, or PipeWire
 * with pipewire-pulse), on a socket in the session's sound directory, with a
 * null sink "rcomp" the apps play into (the default sink), and a null sink
 * "rcomp_mic" whose monitor is the default source, for the viewer's
 * microphone. Each session has its own, so sessions never hear each other.
 *
 * We are a client of it through libpulse's threaded main loop: its callbacks
 * run on the loop's own thread with the loop's lock held. The capture stream
 * of the apps' sound is corked unless a viewer that wants sound is attached
 * and some app has a stream open, so an idle session costs nothing, and a
 * detached one builds no backlog. Encoded packets cross to the event loop
 * through an audio_queue.
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
#include "pulse.h"
#include "sound.h"
#include "sound_daemon.h"

#define SINK "rcomp"
#define MIC_SINK "rcomp_mic"
/* After the last app stream goes, capture this long: what it played last
 * is still on its way through the sink. */
#define TAIL_US 300000
/* Sound the link has not taken within this many bytes is dropped. */
#define QUEUED_MAX 1536
#define MIC_BUFFER_US 40000
#define SETUP_WAIT_US 5000000 /* for a server whose client makes its sinks */

struct rc_sound {
	struct rc_server *server;
	struct sound_daemon daemon;

	struct pulse pulse;
	pa_stream *capture, *mic;
	uint32_t own_client;

	/* Under the loop's lock. */
	bool want; /* a viewer that wants sound is attached */
	bool corked;
	bool failed;
	bool set_up; /* subscribed and capturing */
	bool timed_out; /* setting up the sinks took too long */
	bool op_failed; /* the last operation waited for was refused */
	bool default_is_ours; /* the server's default sink is the session's */
	int playing; /* app streams open */
	int counting;
	pa_time_event *tail;
	struct audio_framer framer;

	struct audio_queue queue;
	struct wl_event_source *queue_source;

	OpusDecoder *mic_decoder;
	int16_t mic_pcm[WIRE_AUDIO_MAX_SAMPLES * WIRE_AUDIO_CHANNELS];

	/* Stats, event loop only. */
	uint64_t sent_packets, sent_bytes, late;
	/* Event loop only: packets went to viewers, and the end has not. */
	bool streaming;
};

/* The loop's thread, lock held, from here on. */

static void cork(struct rc_sound *s, bool corked)
{
	if (!s->capture || pa_stream_get_state(s->capture) != PA_STREAM_READY ||
		s->corked == corked) {
		return;
	}
	s->corked = corked;
	if (!corked) {
		/* Whatever waited while corked is old. */
		pulse_forget(pa_stream_flush(s->capture, NULL, NULL));
	}
	pulse_forget(pa_stream_cork(s->capture, corked, NULL, NULL));
	if (corked) {
		audio_framer_stop(&s->framer, &s->queue);
	}
}

static void handle_tail(pa_mainloop_api *api, pa_time_event *e, const struct timeval *tv,
	void *data)
{
	struct rc_sound *s = data;
	api->time_free(e);
	s->tail = NULL;
	cork(s, true);
}

static void update(struct rc_sound *s)
{
	bool run = s->want && s->playing > 0;
	if (run || !s->want) {
		if (s->tail) {
			pa_threaded_mainloop_get_api(s->pulse.loop)->time_free(s->tail);
			s->tail = NULL;
		}
		cork(s, !run);
	} else if (!s->corked && !s->tail) {
		s->tail = pa_context_rttime_new(s->pulse.context, pa_rtclock_now() + TAIL_US,
			handle_tail, s);
	}
}

static void handle_read(pa_stream *stream, size_t nbytes, void *data)
{
	struct rc_sound *s = data;
	pulse_read(stream, !s->corked, &s->framer, &s->queue);
}

static void handle_sink_input(pa_context *c, const pa_sink_input_info *info, int eol, void *data)
{
	struct rc_sound *s = data;
	if (eol) {
		s->playing = s->counting;
		s->counting = 0;
		update(s);
		return;
	}
	/* Our own stream (the microphone) is not an app playing. */
	if (info && info->client != s->own_client && !info->corked) {
		s->counting++;
	}
}

static void count_playing(struct rc_sound *s)
{
	s->counting = 0;
	pulse_forget(pa_context_get_sink_input_info_list(s->pulse.context, handle_sink_input, s));
}

static void handle_event(pa_context *c, pa_subscription_event_type_t type, uint32_t index,
	void *data)
{
	count_playing(data);
}

static void start_capture(struct rc_sound *s)
{
	s->corked = true;
	s->capture = pulse_record(&s->pulse, "apps", SINK ".monitor",
		PA_STREAM_ADJUST_LATENCY | PA_STREAM_START_CORKED, handle_read, s);
	if (!s->capture) {
		log_error("no sound: cannot capture the session's sink: %s",
			pa_strerror(pa_context_errno(s->pulse.context)));
	}
}

static void handle_capture_state(struct rc_sound *s)
{
	if (s->capture && pa_stream_get_state(s->capture) == PA_STREAM_READY) {
		update(s);
	}
}

static void handle_stream_state(pa_stream *stream, void *data)
{
	handle_capture_state(data);
}

/* The sinks exist: watch the apps' streams and capture what they play. */
static void set_up(struct rc_sound *s)
{
	pa_context *c = s->pulse.context;
	s->set_up = true;
	s->own_client = pa_context_get_index(c);
	pa_context_set_subscribe_callback(c, handle_event, s);
	pulse_forget(pa_context_subscribe(c, PA_SUBSCRIPTION_MASK_SINK_INPUT, NULL, NULL));
	start_capture(s);
	if (s->capture) {
		pa_stream_set_state_callback(s->capture, handle_stream_state, s);
	}
	count_playing(s);
}

static void handle_context(pa_context *c, void *data)
{
	struct rc_sound *s = data;
	switch (pa_context_get_state(c)) {
	case PA_CONTEXT_READY:
		if (sound_daemon_client_makes_sinks(&s->daemon)) {
			pa_threaded_mainloop_signal(s->pulse.loop, 0); /* make_sinks goes on */
		} else {
			set_up(s);
		}
		break;
	case PA_CONTEXT_FAILED:
	case PA_CONTEXT_TERMINATED:
		if (!s->failed) {
			log_error("no sound: the session's sound server went away (%s)",
				pa_strerror(pa_context_errno(c)));
		}
		s->failed = true;
		pa_threaded_mainloop_signal(s->pulse.loop, 0);
		break;
	default:
		break;
	}
}

/* Making the sinks over the protocol, waited for on the event loop's
 * thread before the app starts, so the app's first stream finds them. */

static void handle_done(pa_context *c, int success, void *data)
{
	struct rc_sound *s = data;
	s->op_failed = !success;
	pa_threaded_mainloop_signal(s->pulse.loop, 0);
}

static void handle_loaded(pa_context *c, uint32_t index, void *data)
{
	pa_threaded_mainloop_signal(((struct rc_sound *)data)->pulse.loop, 0);
}

static void handle_setup_timeout(pa_mainloop_api *api, pa_time_event *e, const struct timeval *tv,
	void *data)
{
	struct rc_sound *s = data;
	s->timed_out = true;
	pa_threaded_mainloop_signal(s->pulse.loop, 0);
}

/* Lock held. False if the server failed or took too long. */
static bool finish_op(struct rc_sound *s, pa_operation *op)
{
	if (!op) {
		return false;
	}
	while (pa_operation_get_state(op) == PA_OPERATION_RUNNING && !s->failed && !s->timed_out) {
		pa_threaded_mainloop_wait(s->pulse.loop);
	}
	bool done = pa_operation_get_state(op) == PA_OPERATION_DONE;
	pa_operation_unref(op);
	return done;
}

/* Lock held. A default is refused until the session manager (wireplumber)
 * has come up, which it does beside pipewire-pulse: ask again until then. */
static bool set_default(struct rc_sound *s, bool sink, const char *name)
{
	while (!s->failed && !s->timed_out) {
		s->op_failed = false;
		pa_operation *op = sink
			? pa_context_set_default_sink(s->pulse.context, name, handle_done, s)
			: pa_context_set_default_source(s->pulse.context, name, handle_done, s);
		if (!finish_op(s, op)) {
			return false;
		}
		if (!s->op_failed) {
			return true;
		}
		pa_threaded_mainloop_unlock(s->pulse.loop);
		nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
		pa_threaded_mainloop_lock(s->pulse.loop);
	}
	return false;
}

static void handle_server_info(pa_context *c, const pa_server_info *info, void *data)
{
	struct rc_sound *s = data;
	s->default_is_ours =
		info && info->default_sink_name && strcmp(info->default_sink_name, SINK) == 0;
	pa_threaded_mainloop_signal(s->pulse.loop, 0);
}

/* Lock held. Until the session manager has made our sink the default it
 * routes new streams by (wireplumber, slow to come up on a loaded machine),
 * an app that starts plays nowhere: wait for it. */
static bool await_default_sink(struct rc_sound *s)
{
	while (!s->failed && !s->timed_out) {
		s->default_is_ours = false;
		if (!finish_op(s,
			    pa_context_get_server_info(s->pulse.context, handle_server_info, s))) {
			return false;
		}
		if (s->default_is_ours) {
			return true;
		}
		pa_threaded_mainloop_unlock(s->pulse.loop);
		nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
		pa_threaded_mainloop_lock(s->pulse.loop);
	}
	return false;
}

static bool make_sinks(struct rc_sound *s)
{
	char args[160];
	pa_threaded_mainloop_lock(s->pulse.loop);
	pa_time_event *timeout = pa_context_rttime_new(s->pulse.context,
		pa_rtclock_now() + SETUP_WAIT_US, handle_setup_timeout, s);
	while (pa_context_get_state(s->pulse.context) != PA_CONTEXT_READY && !s->failed &&
		!s->timed_out) {
		pa_threaded_mainloop_wait(s->pulse.loop);
	}
	bool ok = !s->failed && !s->timed_out;
	snprintf(args, sizeof(args),
		"sink_name=" SINK " rate=%d channels=%d norewinds=1 "
		"sink_properties=device.description=rcomp",
		WIRE_AUDIO_RATE, WIRE_AUDIO_CHANNELS);
	ok = ok &&
		finish_op(s,
			pa_context_load_module(s->pulse.context, "module-null-sink", args,
				handle_loaded, s));
	snprintf(args, sizeof(args),
		"sink_name=" MIC_SINK " rate=%d channels=%d "
		"sink_properties=device.description=rcomp-microphone",
		WIRE_AUDIO_RATE, WIRE_AUDIO_CHANNELS);
	ok = ok &&
		finish_op(s,
			pa_context_load_module(s->pulse.context, "module-null-sink", args,
				handle_loaded, s));
	ok = ok && set_default(s, true, SINK) && set_default(s, false, MIC_SINK ".monitor") &&
		await_default_sink(s);
	if (timeout && !s->timed_out) {
		pa_threaded_mainloop_get_api(s->pulse.loop)->time_free(timeout);
	}
	if (ok) {
		set_up(s);
	}
	pa_threaded_mainloop_unlock(s->pulse.loop);
	if (!ok) {
		log_error("no sound: %s did not make the session's sinks%s; the app runs without "
			  "sound",
			sound_daemon_name(&s->daemon), s->timed_out ? " in time" : "");
	}
	return ok;
}

/* The event loop's side. */

/* To every viewer that wants sound; one whose link is slower than the
 * sound loses packets, never the others. */
static void send_packet(struct rc_server *server, const struct audio_packet *p, bool end)
{
	struct rc_sound *s = server->sound;
	if (!s->want) {
		return;
	}
	struct wire_msg msg;
	if (end) {
		msg = (struct wire_msg){.type = WIRE_AUDIO_END, .audio_end = {.seq = p->seq}};
	} else {
		msg = (struct wire_msg){
			.type = WIRE_AUDIO,
			.audio = {.time_us = p->time_us,
				.seq = p->seq,
				.samples = p->samples,
				.data = p->data,
				.size = p->size},
		};
	}
	bool sent = false;
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		struct rc_connection *conn = viewer->conn;
		if (!viewer->audio || !conn->welcomed || conn->closing) {
			continue;
		}
		if (!end && channel_queued_class(&conn->channel, CHANNEL_AUDIO) > QUEUED_MAX) {
			s->late++; /* the link is slower than the sound: drop, never queue */
			continue;
		}
		connection_send(conn, &msg);
		sent = true;
	}
	if (sent && !end) {
		s->sent_packets++;
		s->sent_bytes += p->size;
	}
	s->streaming = !end && (sent || s->streaming);
}

bool sound_playing_out(struct rc_server *server)
{
	struct rc_sound *s = server->sound;
	return s && s->want && s->streaming;
}

static int handle_queue(int fd, uint32_t mask, void *data)
{
	struct rc_server *server = data;
	struct audio_packet p;
	bool end;
	while (audio_queue_pop(&server->sound->queue, &p, &end)) {
		send_packet(server, &p, end);
	}
	return 0;
}

static void stop(struct rc_sound *s)
{
	pa_stream *streams[] = {s->capture, s->mic};
	pulse_close(&s->pulse, streams, 2);
	s->capture = s->mic = NULL;
	if (s->queue_source) {
		wl_event_source_remove(s->queue_source);
		s->queue_source = NULL;
	}
	audio_queue_finish(&s->queue);
	audio_framer_finish(&s->framer);
	if (s->mic_decoder) {
		opus_decoder_destroy(s->mic_decoder);
		s->mic_decoder = NULL;
	}
}

static bool connect_client(struct rc_server *server)
{
	struct rc_sound *s = server->sound;
	if (!audio_queue_init(&s->queue) ||
		!audio_framer_init(&s->framer, OPUS_APPLICATION_RESTRICTED_LOWDELAY)) {
		return false;
	}
	s->queue_source = wl_event_loop_add_fd(server->loop, s->queue.fd, WL_EVENT_READABLE,
		handle_queue, server);
	if (!s->queue_source) {
		return false;
	}
	const char *error;
	if (!pulse_open(&s->pulse, "rcomp-run", s->daemon.address, handle_context, s, &error)) {
		log_error("no sound: cannot connect to the session's sound server: %s", error);
		return false;
	}
	return true;
}

void sound_start(struct rc_server *server)
{
	if (!server->options.audio) {
		return;
	}
	struct rc_sound *s = calloc(1, sizeof(*s));
	if (!s) {
		return;
	}
	s->server = server;
	s->queue.fd = -1;
	server->sound = s;
	if (!sound_daemon_start(&s->daemon, server->options.audio, &server->record)) {
		goto fail;
	}
	if (!connect_client(server)) {
		log_error("no sound: cannot capture the session's sound");
		goto fail;
	}
	if (sound_daemon_client_makes_sinks(&s->daemon) && !make_sinks(s)) {
		goto fail;
	}
	return;
fail:
	sound_finish(server);
	sound_end_server(server);
}

void sound_finish(struct rc_server *server)
{
	struct rc_sound *s = server->sound;
	if (!s) {
		return;
	}
	stop(s);
}

void sound_end_server(struct rc_server *server)
{
	struct rc_sound *s = server->sound;
	if (!s) {
		return;
	}
	sound_daemon_stop(&s->daemon);
	free(s);
	server->sound = NULL;
}

const char *sound_server_address(const struct rc_server *server)
{
	return server->sound ? server->sound->daemon.address : NULL;
}

bool sound_owns_pid(const struct rc_server *server, pid_t pid)
{
	return server->sound && server->sound->daemon.pid == pid && pid > 0;
}

void sound_daemon_exited(struct rc_server *server, int status)
{
	struct rc_sound *s = server->sound;
	log_error("the session's sound server exited (status %d); the session goes on without "
		  "sound",
		status);
	s->daemon.pid = 0;
	pa_threaded_mainloop_lock(s->pulse.loop);
	s->failed = true;
	pa_threaded_mainloop_unlock(s->pulse.loop);
}

void sound_viewer_changed(struct rc_server *server, bool wants)
{
	struct rc_sound *s = server->sound;
	if (!s || !s->pulse.loop) {
		return;
	}
	pa_threaded_mainloop_lock(s->pulse.loop);
	s->want = wants;
	if (!s->failed) {
		update(s);
	}
	if (!wants) {
		audio_queue_clear(&s->queue);
	}
	pa_threaded_mainloop_unlock(s->pulse.loop);
}

static void make_mic(struct rc_sound *s)
{
	s->mic = pa_stream_new(s->pulse.context, "microphone", &pulse_wire_spec, NULL);
	if (!s->mic) {
		return;
	}
	uint32_t bytes = (uint32_t)pa_usec_to_bytes(MIC_BUFFER_US, &pulse_wire_spec);
	pa_buffer_attr attr = {
		.maxlength = bytes * 2,
		.tlength = bytes,
		.prebuf = bytes / 2,
		.minreq = (uint32_t)-1,
	};
	if (pa_stream_connect_playback(s->mic, MIC_SINK, &attr, PA_STREAM_ADJUST_LATENCY, NULL,
		    NULL) < 0) {
		pa_stream_unref(s->mic);
		s->mic = NULL;
	}
}

void sound_mic(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_sound *s = server->sound;
	if (!s || !s->pulse.loop || msg->type != WIRE_AUDIO) {
		return; /* no sound server: the microphone has nowhere to go */
	}
	if (!s->mic_decoder) {
		int err;
		s->mic_decoder = opus_decoder_create(WIRE_AUDIO_RATE, WIRE_AUDIO_CHANNELS, &err);
		if (!s->mic_decoder) {
			return;
		}
	}
	int n = opus_decode(s->mic_decoder, msg->audio.data, (opus_int32)msg->audio.size,
		s->mic_pcm, WIRE_AUDIO_MAX_SAMPLES, 0);
	if (n <= 0) {
		return; /* a packet Opus cannot read is lost sound, not a broken peer */
	}
	size_t bytes = (size_t)n * AUDIO_SAMPLE_BYTES;
	pa_threaded_mainloop_lock(s->pulse.loop);
	if (!s->failed && !s->mic) {
		make_mic(s);
	}
	if (s->mic && pa_stream_get_state(s->mic) == PA_STREAM_READY &&
		pa_stream_writable_size(s->mic) >= bytes) {
		pa_stream_write(s->mic, s->mic_pcm, bytes, NULL, 0, PA_SEEK_RELATIVE);
	}
	pa_threaded_mainloop_unlock(s->pulse.loop);
}

void sound_describe(struct rc_server *server, char *out, size_t size)
{
	struct rc_sound *s = server->sound;
	*out = '\0';
	if (!s || !s->sent_packets) {
		return;
	}
	snprintf(out, size, "sound %llu packets, %.1f kbit/s, %llu dropped",
		(unsigned long long)s->sent_packets, (double)s->sent_bytes * 8 / 1000,
		(unsigned long long)(s->late + s->queue.dropped));
	s->sent_packets = s->sent_bytes = 0;
}
