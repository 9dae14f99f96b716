/*
 * The session's sound server and what flows through it (sound.h).
 *
 * The daemon is pulseaudio itself, started with a script of our own: the
 * native protocol on a socket in the session's sound directory, a null sink
 * "rcomp" the apps play into (the default sink), and a null sink "rcomp_mic"
 * whose monitor is the default source, for the viewer's microphone. Each
 * session has its own, so sessions never hear each other.
 *
 * We are a client of it through libpulse's threaded main loop: its callbacks
 * run on the loop's own thread with the loop's lock held. The capture stream
 * of the apps' sound is corked unless a viewer that wants sound is attached
 * and some app has a stream open, so an idle session costs nothing, and a
 * detached one builds no backlog. Encoded packets cross to the event loop
 * through an audio_queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <opus.h>
#include <pulse/pulseaudio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audio.h"
#include "connection.h"
#include "log.h"
#include "monotonic.h"
#include "sound.h"

#define SINK "rcomp"
#define MIC_SINK "rcomp_mic"
/* After the last app stream goes, capture this long: what it played last
 * is still on its way through the sink. */
#define TAIL_US 300000
/* Sound the link has not taken within this many bytes is dropped. */
#define QUEUED_MAX 1536
#define MIC_BUFFER_US 40000
#define DAEMON_WAIT_MS 5000

struct rc_sound {
	struct rc_server *server;
	pid_t daemon; /* 0: none */
	char dir[SESSION_PATH_MAX];
	char socket[SESSION_PATH_MAX];
	char address[SESSION_PATH_MAX + 16]; /* unix:SOCKET */
	bool dir_made;

	pa_threaded_mainloop *loop;
	pa_context *context;
	pa_stream *capture, *mic;
	uint32_t own_client;

	/* Under the loop's lock. */
	bool want; /* a viewer that wants sound is attached */
	bool corked;
	bool failed;
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
};

static void remove_tree(struct rc_sound *s)
{
	static const char *const files[] = {"native", "default.pa", ".config/pulse/cookie"};
	char path[SESSION_PATH_MAX + 32];
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", s->dir, files[i]);
		unlink(path);
	}
	/* What the daemon keeps for itself (runtime and state directories)
	 * holds nothing we rely on; try, and leave what is not empty. */
	static const char *const dirs[] = {"runtime", "state", ".config/pulse", ".config"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", s->dir, dirs[i]);
		rmdir(path);
	}
	rmdir(s->dir);
}

/* DIR/NAME.sound beside the session's socket, or a private directory in
 * the runtime directory for a session that is not recorded. */
static bool make_dir(struct rc_sound *s, const struct rc_record *record)
{
	if (record->dir[0] &&
		session_path(s->dir, sizeof(s->dir), record->dir, record->name, "sound") &&
		strlen(s->dir) + strlen("/native") < SESSION_PATH_MAX) {
		if (mkdir(s->dir, 0700) == 0 || errno == EEXIST) {
			s->dir_made = true;
			return true;
		}
	}
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	int n = snprintf(s->dir, sizeof(s->dir), "%s/rcomp-sound-XXXXXX",
		runtime && *runtime ? runtime : "/tmp");
	if (n <= 0 || (size_t)n + strlen("/native") >= SESSION_PATH_MAX || !mkdtemp(s->dir)) {
		return false;
	}
	s->dir_made = true;
	return true;
}

static bool write_script(struct rc_sound *s, char *path, size_t size)
{
	snprintf(path, size, "%s/default.pa", s->dir);
	FILE *f = fopen(path, "we");
	if (!f) {
		return false;
	}
	fprintf(f,
		"load-module module-native-protocol-unix auth-anonymous=1 socket=%s\n"
		"load-module module-null-sink sink_name=" SINK " rate=%d channels=%d "
		"sink_properties=device.description=rcomp\n"
		"load-module module-null-sink sink_name=" MIC_SINK " rate=%d channels=%d "
		"sink_properties=device.description=rcomp-microphone\n"
		"load-module module-always-sink\n"
		"load-module module-suspend-on-idle timeout=1\n"
		"set-default-sink " SINK "\n"
		"set-default-source " MIC_SINK ".monitor\n",
		s->socket, WIRE_AUDIO_RATE, WIRE_AUDIO_CHANNELS, WIRE_AUDIO_RATE,
		WIRE_AUDIO_CHANNELS);
	return fclose(f) == 0;
}

static pid_t spawn_daemon(struct rc_sound *s, const char *script)
{
	pid_t pid = fork();
	if (pid != 0) {
		return pid;
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0); /* not in the app's group: ending the app's leftovers spares it */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
	}
	dup2(STDERR_FILENO, STDOUT_FILENO); /* stdout may carry the stream (--stdio) */
	char runtime[SESSION_PATH_MAX + 16], state[SESSION_PATH_MAX + 16];
	snprintf(runtime, sizeof(runtime), "%s/runtime", s->dir);
	snprintf(state, sizeof(state), "%s/state", s->dir);
	setenv("PULSE_RUNTIME_PATH", runtime, 1);
	setenv("PULSE_STATE_PATH", state, 1);
	setenv("HOME", s->dir, 1); /* its cookie and config: nothing of the user's */
	unsetenv("PULSE_SERVER");
	/* Without shared memory: pulseaudio 16's memfd path logs errors with
	 * some clients (its issue 824), and sound is a few hundred KB/s. */
	execlp("pulseaudio", "pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1",
		"--use-pid-file=no", "--disable-shm=yes", "--log-target=stderr",
		"--log-level=error", "-F", script, (char *)NULL);
	_exit(127);
}

/* Until the daemon answers on its socket, or gives up. */
static bool wait_ready(struct rc_sound *s, int *status)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", s->socket);
	for (int waited = 0; waited < DAEMON_WAIT_MS; waited += 5) {
		if (waitpid(s->daemon, status, WNOHANG) == s->daemon) {
			s->daemon = 0;
			return false;
		}
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
			close(fd);
			return true;
		}
		if (fd >= 0) {
			close(fd);
		}
		nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
	}
	*status = -1;
	return false;
}

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
		pa_operation *op = pa_stream_flush(s->capture, NULL, NULL);
		if (op) {
			pa_operation_unref(op);
		}
	}
	pa_operation *op = pa_stream_cork(s->capture, corked, NULL, NULL);
	if (op) {
		pa_operation_unref(op);
	}
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
			pa_threaded_mainloop_get_api(s->loop)->time_free(s->tail);
			s->tail = NULL;
		}
		cork(s, !run);
	} else if (!s->corked && !s->tail) {
		s->tail = pa_context_rttime_new(s->context, pa_rtclock_now() + TAIL_US, handle_tail,
			s);
	}
}

static void handle_read(pa_stream *stream, size_t nbytes, void *data)
{
	struct rc_sound *s = data;
	const void *pcm;
	size_t n;
	while (pa_stream_readable_size(stream) > 0) {
		if (pa_stream_peek(stream, &pcm, &n) < 0 || n == 0) {
			break;
		}
		if (!s->corked) {
			if (!s->framer.running) {
				/* Its last sample was played just now. */
				uint64_t now = monotonic_usec();
				audio_framer_start(&s->framer,
					now - audio_samples_us(n / AUDIO_SAMPLE_BYTES));
			}
			audio_framer_push(&s->framer, pcm, n, &s->queue);
		}
		pa_stream_drop(stream);
	}
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
	pa_operation *op = pa_context_get_sink_input_info_list(s->context, handle_sink_input, s);
	if (op) {
		pa_operation_unref(op);
	}
}

static void handle_event(pa_context *c, pa_subscription_event_type_t type, uint32_t index,
	void *data)
{
	count_playing(data);
}

static void start_capture(struct rc_sound *s)
{
	static const pa_sample_spec spec = {
		.format = PA_SAMPLE_S16LE,
		.rate = WIRE_AUDIO_RATE,
		.channels = WIRE_AUDIO_CHANNELS,
	};
	s->capture = pa_stream_new(s->context, "apps", &spec, NULL);
	if (!s->capture) {
		return;
	}
	pa_stream_set_read_callback(s->capture, handle_read, s);
	pa_buffer_attr attr = {
		.maxlength = (uint32_t)-1,
		.fragsize = AUDIO_FRAME_BYTES, /* 10 ms a read */
	};
	s->corked = true;
	if (pa_stream_connect_record(s->capture, SINK ".monitor", &attr,
		    PA_STREAM_ADJUST_LATENCY | PA_STREAM_START_CORKED) < 0) {
		log_error("no sound: cannot capture the session's sink: %s",
			pa_strerror(pa_context_errno(s->context)));
		pa_stream_unref(s->capture);
		s->capture = NULL;
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

static void handle_context(pa_context *c, void *data)
{
	struct rc_sound *s = data;
	switch (pa_context_get_state(c)) {
	case PA_CONTEXT_READY:
		s->own_client = pa_context_get_index(c);
		pa_context_set_subscribe_callback(c, handle_event, s);
		pa_operation *op =
			pa_context_subscribe(c, PA_SUBSCRIPTION_MASK_SINK_INPUT, NULL, NULL);
		if (op) {
			pa_operation_unref(op);
		}
		start_capture(s);
		if (s->capture) {
			pa_stream_set_state_callback(s->capture, handle_stream_state, s);
		}
		count_playing(s);
		break;
	case PA_CONTEXT_FAILED:
	case PA_CONTEXT_TERMINATED:
		if (!s->failed) {
			log_error("no sound: the session's sound server went away (%s)",
				pa_strerror(pa_context_errno(c)));
		}
		s->failed = true;
		break;
	default:
		break;
	}
}

/* The event loop's side. */

static void send_packet(struct rc_server *server, const struct audio_packet *p, bool end)
{
	struct rc_sound *s = server->sound;
	struct rc_connection *conn = server->connection;
	if (!server_watched(server) || conn->closing || !s->want) {
		return;
	}
	struct wire_msg msg;
	if (end) {
		msg = (struct wire_msg){.type = WIRE_AUDIO_END, .audio_end = {.seq = p->seq}};
	} else {
		if (channel_queued_class(&conn->channel, CHANNEL_AUDIO) > QUEUED_MAX) {
			s->late++; /* the link is slower than the sound: drop, never queue */
			return;
		}
		msg = (struct wire_msg){
			.type = WIRE_AUDIO,
			.audio = {.time_us = p->time_us,
				.seq = p->seq,
				.samples = p->samples,
				.data = p->data,
				.size = p->size},
		};
		s->sent_packets++;
		s->sent_bytes += p->size;
	}
	connection_send(conn, &msg);
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
	if (s->loop) {
		pa_threaded_mainloop_stop(s->loop);
	}
	if (s->capture) {
		pa_stream_disconnect(s->capture);
		pa_stream_unref(s->capture);
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
	s->capture = s->mic = NULL;
	s->context = NULL;
	s->loop = NULL;
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
	s->loop = pa_threaded_mainloop_new();
	if (!s->queue_source || !s->loop) {
		return false;
	}
	s->context = pa_context_new(pa_threaded_mainloop_get_api(s->loop), "rcomp-run");
	if (!s->context) {
		return false;
	}
	pa_context_set_state_callback(s->context, handle_context, s);
	if (pa_context_connect(s->context, s->address, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0) {
		log_error("no sound: cannot connect to the session's sound server: %s",
			pa_strerror(pa_context_errno(s->context)));
		return false;
	}
	return pa_threaded_mainloop_start(s->loop) == 0;
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
	char script[SESSION_PATH_MAX + 16];
	if (!make_dir(s, &server->record)) {
		log_error("no sound: cannot make a directory for the sound server: %s",
			strerror(errno));
		goto fail;
	}
	if (snprintf(s->socket, sizeof(s->socket), "%s/native", s->dir) >= (int)sizeof(s->socket) ||
		snprintf(s->address, sizeof(s->address), "unix:%s", s->socket) >=
			(int)sizeof(s->address)) {
		log_error("no sound: the path %s is too long for a socket", s->dir);
		goto fail;
	}
	if (!write_script(s, script, sizeof(script))) {
		log_error("no sound: cannot write %s: %s", script, strerror(errno));
		goto fail;
	}
	s->daemon = spawn_daemon(s, script);
	if (s->daemon < 0) {
		s->daemon = 0;
		log_error("no sound: cannot start pulseaudio: %s", strerror(errno));
		goto fail;
	}
	int status = 0;
	if (!wait_ready(s, &status)) {
		if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 127) {
			log_error("no sound: pulseaudio is not installed (Debian: apt install "
				  "pulseaudio); the app runs without sound");
		} else {
			log_error("no sound: pulseaudio did not start; the app runs without sound");
		}
		goto fail;
	}
	if (!connect_client(server)) {
		log_error("no sound: cannot capture the session's sound");
		goto fail;
	}
	log_debug("sound server at %s", s->address);
	return;
fail:
	sound_finish(server);
}

void sound_finish(struct rc_server *server)
{
	struct rc_sound *s = server->sound;
	if (!s) {
		return;
	}
	stop(s);
	if (s->daemon > 0) {
		kill(s->daemon, SIGTERM);
		/* It exits at once; a daemon that does not is not waited for. */
		for (int i = 0; i < 100; i++) {
			if (waitpid(s->daemon, NULL, WNOHANG) != 0) {
				break;
			}
			nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
		}
	}
	if (s->dir_made) {
		remove_tree(s);
	}
	free(s);
	server->sound = NULL;
}

const char *sound_server_address(const struct rc_server *server)
{
	return server->sound ? server->sound->address : NULL;
}

bool sound_owns_pid(const struct rc_server *server, pid_t pid)
{
	return server->sound && server->sound->daemon == pid && pid > 0;
}

void sound_daemon_exited(struct rc_server *server, int status)
{
	struct rc_sound *s = server->sound;
	log_error("the session's sound server exited (status %d); the session goes on without "
		  "sound",
		status);
	s->daemon = 0;
	pa_threaded_mainloop_lock(s->loop);
	s->failed = true;
	pa_threaded_mainloop_unlock(s->loop);
}

void sound_viewer_changed(struct rc_server *server, bool wants)
{
	struct rc_sound *s = server->sound;
	if (!s || !s->loop) {
		return;
	}
	pa_threaded_mainloop_lock(s->loop);
	s->want = wants;
	if (!s->failed) {
		update(s);
	}
	if (!wants) {
		audio_queue_clear(&s->queue);
	}
	pa_threaded_mainloop_unlock(s->loop);
}

static void make_mic(struct rc_sound *s)
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
	uint32_t bytes = (uint32_t)pa_usec_to_bytes(MIC_BUFFER_US, &spec);
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
	if (!s || !s->loop || msg->type != WIRE_AUDIO) {
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
	pa_threaded_mainloop_lock(s->loop);
	if (!s->failed && !s->mic) {
		make_mic(s);
	}
	if (s->mic && pa_stream_get_state(s->mic) == PA_STREAM_READY &&
		pa_stream_writable_size(s->mic) >= bytes) {
		pa_stream_write(s->mic, s->mic_pcm, bytes, NULL, 0, PA_SEEK_RELATIVE);
	}
	pa_threaded_mainloop_unlock(s->loop);
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
