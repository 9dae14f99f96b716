/*
 * rcomp-run: runs a headless wlroots compositor, starts the app in it, and
 * streams each of its windows to one rcomp-view. Options, the order things
 * start and stop in, and the event loop live here.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <wayland-server-core.h>
#include <wlr/backend.h>
#include <wlr/backend/headless.h>
#include <wlr/types/wlr_compositor.h>
#include <wlr/types/wlr_data_device.h>
#include <wlr/types/wlr_relative_pointer_v1.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_viewporter.h>
#include <wlr/util/log.h>

#include "app.h"
#include "clipboard.h"
#include "commands.h"
#include "constraint.h"
#include "cursor.h"
#include "damage.h"
#include "decoration.h"
#include "desktop.h"
#include "bus.h"
#include "notify.h"
#include "print.h"
#include "dispatch.h"
#include "dnd.h"
#include "contenttype.h"
#include "feedback.h"
#include "doors.h"
#include "handshake.h"
#include "input.h"
#include "log.h"
#include "monotonic.h"
#include "output.h"
#include "reaper.h"
#include "record.h"
#include "settings.h"
#include "sound.h"
#include "stats.h"
#include "tablet.h"
#include "handover.h"
#include "textinput.h"
#include "thumb.h"
#include "texture.h"
#include "xdg.h"
#include "xwayland.h"

static const char usage[] =
	"usage: rcomp-run [options] -- APP [ARGS...]\n"
	"       rcomp-run --list\n"
	"       rcomp-run --attach [SESSION]\n"
	"       rcomp-run --stop [SESSION]\n"
	"       rcomp-run [--name SESSION] --send [--to VIEWER] FILE...\n"
	"       rcomp-run [options] --show-config [-- APP]\n"
	"\n"
	"Runs APP in a headless Wayland compositor and streams its windows to rcomp-view.\n"
	"The session outlives its viewers: a viewer that attaches later gets every\n"
	"window as it is now, and a new viewer takes the session over.\n"
	"\n"
	"  --name NAME         name the session (default: the first free number)\n"
	"  --send FILE...      send files (folders whole) to the session's viewers, which\n"
	"                      save them in their download folder; run inside a session\n"
	"                      (RCOMP_SESSION names it), or name it with --name. Waits\n"
	"                      until they are there, and says where\n"
	"  --to VIEWER         with --send: to that viewer only (its number)\n"
	"  --socket PATH       listen for viewers on this unix socket (default:\n"
	"                      SESSION.sock in the session directory: $RCOMP_DIR, or\n"
	"                      $XDG_RUNTIME_DIR/rcomp, or for --persist\n"
	"                      ${TMPDIR:-/tmp}/rcomp-UID, or if that is not ours\n"
	"                      ${XDG_CACHE_HOME:-~/.cache}/rcomp)\n"
	"  --listen-tcp ADDR:PORT  also listen on TCP (not encrypted). Viewers must\n"
	"                      give a token: a new one is written to SESSION.token\n"
	"                      (mode 0600) in the session directory\n"
	"  --listen-udp ADDR:PORT  also listen on UDP: QUIC, encrypted and keyed by the\n"
	"                      token as --listen-tcp's (the token itself never\n"
	"                      crosses the network); rides loss, and a viewer whose\n"
	"                      address changes keeps its session\n"
	"  --listen-web ADDR:PORT  also serve the browser viewer: the page at\n"
	"                      http://ADDR:PORT/#token=TOKEN, with the token as\n"
	"                      --listen-tcp's. Plain HTTP only on a loopback address\n"
	"                      (reach it with ssh -L PORT:localhost:PORT HOST)\n"
	"  --web-cert FILE     with --listen-web: serve HTTPS with this certificate\n"
	"                      (PEM), on any address\n"
	"  --web-key FILE      with --web-cert: the certificate's private key (PEM)\n"
	"  --token-file FILE   with --listen-tcp, --listen-udp or --listen-web: the\n"
	"                      token is the first line of FILE\n"
	"  --watch-token       with --listen-tcp, --listen-udp or --listen-web: also\n"
	"                      write a second token, to SESSION.watch-token (mode\n"
	"                      0600), that admits\n"
	"                      viewers to watch only: no input of theirs reaches the\n"
	"                      apps (the session's token admits viewers with input)\n"
	"  --stall-timeout S   a viewer whose link takes nothing for S seconds while\n"
	"                      something waits for it is dropped (default 10); it may\n"
	"                      reconnect\n"
	"  --stdio             speak to one viewer on stdin/stdout; the session ends\n"
	"                      with it\n"
	"  --persist           with --stdio: the session runs on in the background when\n"
	"                      stdio closes (what rcomp-view ssh uses)\n"
	"  --offer-udp         with --persist: the session also listens on UDP, on a\n"
	"                      port the system picks, keyed by a fresh token that only\n"
	"                      viewers on stdio or the session's socket are told (what\n"
	"                      rcomp-view ssh uses to move the session to UDP)\n"
	"  --list              list this user's sessions\n"
	"  --attach [SESSION]  connect stdin/stdout to a running session (the only\n"
	"                      one, or the only detached one, if not named)\n"
	"  --stop [SESSION]    end a running session (the only one, if not named):\n"
	"                      its apps are asked to close their windows, and ended\n"
	"                      5 s later if they have not; waits until it has ended,\n"
	"                      and says what it had to kill\n"
	"  --grace S           at the session's end, every process it started has S\n"
	"                      seconds from SIGTERM before SIGKILL (default 3)\n"
	"  --log-max MIB       where the session's standard error is a file (its log),\n"
	"                      it keeps at most MIB MiB: its first part and its newest,\n"
	"                      with a line saying how much was dropped (default 8)\n"
	"  --fps N|auto        frame clock of each window, 1-240 (default auto: the\n"
	"                      refresh of the viewer's output the window is on, else 60)\n"
	"  --compress ALGO     none, lz4 (default), zstd or zstd:LEVEL\n"
	"  --codec MODE        auto (default): H.264 video for windows in motion, lossless\n"
	"                      otherwise; lossless: never video; video: video on any change\n"
	"  --motion rate|sharpness  video that cannot be encoded at the window's size\n"
	"                      and rate: rate (default) encodes it smaller and the viewer\n"
	"                      scales it up, back to full size when it can; sharpness\n"
	"                      keeps its size and loses frames\n"
	"  --audio on|off|pulseaudio|pipewire\n"
	"                      a sound server for the session (default on: pulseaudio,\n"
	"                      else pipewire with pipewire-pulse): APP plays into it\n"
	"                      and the viewer hears it; off: APP uses the host's own\n"
	"                      sound server, if any\n"
	"  --files yes|ask|no  take the files the viewers drop on windows or upload (into\n"
	"                      the download folder), ask the viewer with input first,\n"
	"                      or refuse them (default yes)\n"
	"  --file-size-limit MIB  the largest file taken (default 16384; 0: none)\n"
	"  --notifications on|off  the apps' notifications (the session's bus has\n"
	"                      org.freedesktop.Notifications) go to the viewers (on)\n"
	"  --printing on|off   a printer for the apps (a CUPS scheduler of the\n"
	"                      session's, CUPS_SERVER): their prints go to the viewer\n"
	"                      with input as PDFs (on)\n"
	"  --no-xwayland       no X11 apps (else Xwayland starts when the first one\n"
	"                      connects, on the DISPLAY rcomp-run sets for APP)\n"
	"  --stats             print one line per second per window: app and sent fps,\n"
	"                      codec, bytes/s, round trip, frames in flight\n"
	"  --dump-dir DIR      write each window's last sent frame to DIR/window-ID.ppm\n"
	"  -v, --verbose       more logging (twice for wlroots debug logs)\n"
	"  --show-config       print each setting, its value and where it came from\n"
	"                      (default, FILE:LINE, env RCOMP_KEY or flag), and exit\n"
	"  -V, --version       show the version and the wire protocol it speaks\n"
	"  -h, --help          show this help\n"
	"\n"
	"Settings: [run] and [app:NAME] in $XDG_CONFIG_DIRS/rcomp/rcomp.ini and\n"
	"$XDG_CONFIG_HOME/rcomp/rcomp.ini, then RCOMP_<KEY>, then flags; see rcomp(5).\n"
	"Exits with APP's exit status once APP has exited and its windows are gone;\n"
	"see rcomp-run(1) for the statuses of its own failures.\n";

/* The settings: each key is a long option (settings.h). */
static bool set_fps(void *data, const char *value)
{
	struct rc_options *options = data;
	int fps;
	if (!settings_parse_fps(value, &fps)) {
		return false;
	}
	options->fps = fps ? fps : 60;
	options->fps_explicit = fps != 0;
	return true;
}

static bool set_compress(void *data, const char *value)
{
	struct rc_options *options = data;
	return codec_parse_compression(value, &options->compression, &options->compression_level);
}

static bool set_codec(void *data, const char *value)
{
	static const char *const modes[] = {[RC_CODEC_AUTO] = "auto",
		[RC_CODEC_LOSSLESS] = "lossless",
		[RC_CODEC_VIDEO] = "video"};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(value, modes[i]) == 0) {
			((struct rc_options *)data)->codec_mode = (enum rc_codec_mode)i;
			return true;
		}
	}
	return false;
}

static bool set_motion(void *data, const char *value)
{
	struct rc_options *options = data;
	if (strcmp(value, "rate") == 0 || strcmp(value, "sharpness") == 0) {
		options->sharpness_first = value[0] == 's';
		return true;
	}
	return false;
}

static bool set_audio(void *data, const char *value)
{
	static const char *const servers[] =
		{[RC_AUDIO_PULSEAUDIO] = "pulseaudio", [RC_AUDIO_PIPEWIRE] = "pipewire"};
	struct rc_options *options = data;
	bool on;
	if (settings_parse_bool(value, &on)) {
		options->audio = on ? RC_AUDIO_ON : RC_AUDIO_OFF;
		return true;
	}
	for (size_t i = 0; i < sizeof(servers) / sizeof(servers[0]); i++) {
		if (servers[i] && strcmp(value, servers[i]) == 0) {
			options->audio = (enum rc_audio)i;
			return true;
		}
	}
	return false;
}

static bool set_no_xwayland(void *data, const char *value)
{
	bool off;
	if (!settings_parse_bool(value, &off)) {
		return false;
	}
	((struct rc_options *)data)->xwayland = !off;
	return true;
}

static bool set_stall_timeout(void *data, const char *value)
{
	char *end;
	long seconds = strtol(value, &end, 10);
	if (end == value || *end || seconds < 1 || seconds > 3600) {
		return false;
	}
	((struct rc_options *)data)->stall_timeout = (int)seconds;
	return true;
}

static bool set_grace(void *data, const char *value)
{
	char *end;
	double seconds = strtod(value, &end);
	if (end == value || *end || !(seconds >= 0 && seconds <= 600)) {
		return false;
	}
	((struct rc_options *)data)->grace_ms = (int)(seconds * 1000 + 0.5);
	return true;
}

static bool set_log_max(void *data, const char *value)
{
	char *end;
	long mib = strtol(value, &end, 10);
	if (end == value || *end || mib < 1 || mib > 65536) {
		return false;
	}
	((struct rc_options *)data)->log_max = (uint64_t)mib << 20;
	return true;
}

static bool set_files(void *data, const char *value)
{
	static const char *const ways[] =
		{[FILES_TAKE_YES] = "yes", [FILES_TAKE_NO] = "no", [FILES_TAKE_ASK] = "ask"};
	for (uint32_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		if (strcmp(value, ways[i]) == 0) {
			((struct rc_options *)data)->files = i;
			return true;
		}
	}
	return false;
}

static bool set_printing(void *data, const char *value)
{
	bool on;
	if (!settings_parse_bool(value, &on)) {
		return false;
	}
	((struct rc_options *)data)->printing_off = !on;
	return true;
}

static bool set_notifications(void *data, const char *value)
{
	bool on;
	if (!settings_parse_bool(value, &on)) {
		return false;
	}
	((struct rc_options *)data)->notifications_off = !on;
	return true;
}

static bool set_file_size_limit(void *data, const char *value)
{
	char *end;
	long long mib = strtoll(value, &end, 10);
	if (end == value || *end || mib < 0 || mib > 16ll * 1024 * 1024) {
		return false;
	}
	((struct rc_options *)data)->file_size_limit = (uint64_t)mib << 20;
	return true;
}

static bool set_verbose(void *data, const char *value)
{
	bool on;
	struct rc_options *options = data;
	if (settings_parse_bool(value, &on)) {
		options->verbose = on;
		return true;
	}
	if (strcmp(value, "2") == 0) {
		options->verbose = 2;
		return true;
	}
	return false;
}

#define OPTIONS struct rc_options
static const struct settings_key keys[] = {
	SETTINGS_SESSION("name", OPTIONS, name),
	SETTINGS_STRING("socket", "", OPTIONS, socket_path, "a path"),
	SETTINGS_ADDRESS("listen-tcp", OPTIONS, tcp_addr),
	SETTINGS_ADDRESS("listen-udp", OPTIONS, udp_addr),
	SETTINGS_ADDRESS("listen-web", OPTIONS, web_addr),
	SETTINGS_STRING("web-cert", "", OPTIONS, web_cert, "a path"),
	SETTINGS_STRING("web-key", "", OPTIONS, web_key, "a path"),
	SETTINGS_STRING("token-file", "", OPTIONS, token_file, "a path"),
	SETTINGS_FLAG("watch-token", OPTIONS, watch_token),
	SETTINGS_CUSTOM("stall-timeout", "10", false, set_stall_timeout,
		"a number of seconds from 1 to 3600"),
	SETTINGS_CUSTOM("grace", "3", false, set_grace, "a number of seconds from 0 to 600"),
	SETTINGS_CUSTOM("log-max", "8", false, set_log_max, "a number of MiB from 1 to 65536"),
	SETTINGS_CUSTOM("fps", "auto", false, set_fps, "auto or a number from 1 to 240"),
	SETTINGS_CUSTOM("compress", "lz4", false, set_compress,
		"none, lz4, zstd or zstd:LEVEL (1-22)"),
	SETTINGS_CUSTOM("codec", "auto", false, set_codec, "auto, lossless or video"),
	SETTINGS_CUSTOM("motion", "rate", false, set_motion, "rate or sharpness"),
	SETTINGS_CUSTOM("audio", "on", false, set_audio, "on, off, pulseaudio or pipewire"),
	SETTINGS_CUSTOM("files", "yes", false, set_files, "yes, ask or no"),
	SETTINGS_CUSTOM("notifications", "on", false, set_notifications, "on or off"),
	SETTINGS_CUSTOM("printing", "on", false, set_printing, "on or off"),
	SETTINGS_CUSTOM("file-size-limit", "16384", false, set_file_size_limit,
		"a number of MiB, 0 for none"),
	SETTINGS_CUSTOM("no-xwayland", "false", true, set_no_xwayland, "true or false"),
	SETTINGS_FLAG("stats", OPTIONS, stats),
	SETTINGS_STRING("dump-dir", "", OPTIONS, dump_dir, "a directory"),
	SETTINGS_CUSTOM("verbose", "false", true, set_verbose, "true, false, 0, 1 or 2"),
};
#undef OPTIONS

/* wlroots' lines go through rcomp's log: its format, its level, its file
 * and line. What wlroots reports and then handles itself is no error to a
 * user: an X display whose socket another session holds where its lock file
 * cannot be seen (a session in another root on the host) fails to bind, and
 * wlroots takes the next display; a request of the window manager's about
 * an X11 window its app has just destroyed fails with BadWindow (code 3),
 * as X allows at any time, and wlroots drops it. Those lines are debug. */
static void wlroots_log(enum wlr_log_importance importance, const char *fmt, va_list args)
{
	if (importance > wlr_log_get_verbosity()) {
		return; /* wlroots leaves the filter to its callback */
	}
	char text[1024];
	vsnprintf(text, sizeof(text), fmt, args);
	enum log_level level = importance == WLR_ERROR ? LOG_ERROR
		: importance == WLR_INFO	       ? LOG_INFO
						       : LOG_DEBUG;
	char file[128] = "wlroots";
	int line = 0, used = 0;
	const char *said = text;
	if (sscanf(text, "[%127[^]: ]:%d] %n", file, &line, &used) == 2 && used > 0) {
		said = text + used;
	}
	bool handled =
		(strcmp(file, "xwayland/sockets.c") == 0 && strstr(said, "Failed to bind socket") &&
			strstr(said, strerror(EADDRINUSE))) ||
		(strcmp(file, "xwayland/xwm.c") == 0 && strncmp(said, "xcb error:", 10) == 0 &&
			strstr(said, ", code 3,"));
	if (level == LOG_ERROR && handled) {
		level = LOG_DEBUG;
	}
	if (level <= log_get_level()) {
		log_printf(level, file, line, "wlroots: %s", said);
	}
}

/* The command line; then the settings under it. *mode: 0 (run APP), 'L'
 * (--list), 'A' (--attach) or 'C' (--show-config). A status to exit with,
 * or -1 to go on. */
static int parse_args(struct settings *settings, struct rc_options *options, int argc, char **argv,
	int *app_index, int *mode)
{
	static const struct option own[] = {
		{"stdio", no_argument, NULL, 'S'},
		{"persist", no_argument, NULL, 'P'},
		{"offer-udp", no_argument, NULL, 'U'},
		{"list", no_argument, NULL, 'L'},
		{"attach", no_argument, NULL, 'A'},
		{"stop", no_argument, NULL, 'X'},
		{"send", no_argument, NULL, 'F'},
		{"to", required_argument, NULL, 'T'},
		{"show-config", no_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	int opt, verbose = 0;
	settings_init(settings, "rcomp-run", "run", "app", keys, sizeof(keys) / sizeof(keys[0]),
		options);
	const struct option *long_options = settings_getopt(settings, own);
	opterr = 0; /* its complaint and ours would be two lines */
	while ((opt = getopt_long(argc, argv, "+:vhV", long_options, NULL)) != -1) {
		if (settings_option(settings, opt, optarg)) {
			continue;
		}
		switch (opt) {
		case 'S':
			options->stdio = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'P':
			options->persist = true;
			break;
		case 'U':
			options->offer_udp = true;
			break;
		case 'L':
		case 'A':
		case 'X':
		case 'F':
		case 'C':
			*mode = opt;
			break;
		case 'T': {
			char *end;
			long to = strtol(optarg, &end, 10);
			if (end == optarg || *end || to < 1 || to > 1000000) {
				fprintf(stderr,
					"rcomp-run: --to takes a viewer's number (--stats and "
					"the log name them)\n");
				return 2;
			}
			options->send_to = (uint32_t)to;
			break;
		}
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("rcomp-run %s (wire protocol %d.%d)\n", RCOMP_VERSION,
				WIRE_VERSION_MAJOR, WIRE_VERSION_MINOR);
			return 0;
		default:
			return settings_bad_option("rcomp-run", opt, argv);
		}
	}
	if (verbose) {
		settings_flag(settings, "verbose", verbose > 1 ? "2" : "true");
	}
	/* [app:NAME] is for APP's basename. */
	const char *app = NULL;
	if (optind < argc && (*mode == 0 || *mode == 'C')) {
		const char *slash = strrchr(argv[optind], '/');
		app = slash ? slash + 1 : argv[optind];
	}
	int status = settings_resolve(settings, app);
	if (status) {
		return status;
	}
	log_init("rcomp-run", options->verbose >= 1 ? LOG_DEBUG : LOG_INFO);
	*app_index = optind;
	if (*mode == 'C') {
		settings_print(settings, stdout);
		return 0;
	}
	if (*mode == 'F') {
		if (optind >= argc) {
			fprintf(stderr, "rcomp-run: --send needs the files to send\n");
			return 2;
		}
		return -1;
	}
	if (options->send_to) {
		fprintf(stderr, "rcomp-run: --to goes with --send\n");
		return 2;
	}
	if (*mode) {
		if (argc - optind > (*mode == 'A' || *mode == 'X' ? 1 : 0)) {
			fprintf(stderr, "rcomp-run: unexpected argument %s\n", argv[optind]);
			return 2;
		}
		return -1;
	}
	if (optind >= argc) {
		fprintf(stderr, "rcomp-run: no app given\n\n%s", usage);
		return 2;
	}
	if (options->stdio) {
		/* One viewer on stdio: a socket from the settings is not for this run. */
		bool flagged = settings_flagged(settings, "socket") ||
			settings_flagged(settings, "listen-tcp") ||
			settings_flagged(settings, "listen-udp") ||
			settings_flagged(settings, "listen-web");
		if (flagged) {
			fprintf(stderr,
				"rcomp-run: --stdio excludes --socket, --listen-tcp, "
				"--listen-udp and --listen-web; with --persist the session "
				"listens on its own socket\n");
			return 2;
		}
		options->socket_path = NULL;
		options->tcp_addr = NULL;
		options->udp_addr = NULL;
		options->web_addr = NULL;
	}
	if (options->persist && !options->stdio) {
		fprintf(stderr, "rcomp-run: --persist goes with --stdio\n");
		return 2;
	}
	if (options->offer_udp && !options->persist) {
		fprintf(stderr, "rcomp-run: --offer-udp goes with --persist\n");
		return 2;
	}
	bool network = options->tcp_addr || options->udp_addr || options->web_addr;
	if ((options->web_cert || options->web_key) && !options->web_addr) {
		if (settings_flagged(settings, "web-cert") ||
			settings_flagged(settings, "web-key")) {
			fprintf(stderr,
				"rcomp-run: --web-cert and --web-key go with --listen-web\n");
			return 2;
		}
		options->web_cert = options->web_key = NULL;
	}
	if (options->token_file && !network) {
		if (settings_flagged(settings, "token-file")) {
			fprintf(stderr,
				"rcomp-run: --token-file goes with --listen-tcp, "
				"--listen-udp or --listen-web\n");
			return 2;
		}
		options->token_file = NULL;
	}
	if (options->watch_token && !network) {
		if (settings_flagged(settings, "watch-token")) {
			fprintf(stderr,
				"rcomp-run: --watch-token goes with --listen-tcp, --listen-udp "
				"or --listen-web (on the session's socket every viewer is "
				"the session's owner)\n");
			return 2;
		}
		options->watch_token = false;
	}
	wlr_log_init(options->verbose >= 2 ? WLR_DEBUG : WLR_ERROR, wlroots_log);
	return -1;
}

static bool create_compositor(struct rc_server *server)
{
	server->display = wl_display_create();
	if (!server->display) {
		return false;
	}
	server->loop = wl_display_get_event_loop(server->display);
	server->backend = wlr_headless_backend_create(server->display);
	server->renderer = texture_renderer_create();
	if (!server->backend || !server->renderer) {
		log_error("cannot create the headless backend or the renderer");
		return false;
	}
	wlr_renderer_init_wl_display(server->renderer, server->display);
	server->compositor = wlr_compositor_create(server->display, server->renderer);
	server->seat = wlr_seat_create(server->display, "seat0");
	wlr_data_device_manager_create(server->display);
	/* Video players and toolkits scale and crop with viewports. */
	wlr_viewporter_create(server->display);
	/* Games read relative motion (and X11 games through Xwayland). */
	server->relative_pointer = wlr_relative_pointer_manager_v1_create(server->display);
	constraint_init(server);
	desktop_init(server);
	if (!contenttype_init(server->display)) {
		log_error("no content type for the apps: the global could not be made");
	}
	if (!feedback_init(server)) {
		log_error("no presentation feedback for the apps: wlroots would not make it");
	}
	if (!server->compositor || !server->seat || !xdg_init(server)) {
		return false;
	}
	damage_init(server);
	dnd_init(server);
	dnd_out_init(server);
	if (!input_init(server) || !tablet_init(server) || !cursor_init(server) ||
		!decoration_init(server) || !clipboard_init(server) || !textinput_init(server) ||
		!xwayland_init(server) || !thumb_init(server) || !handover_init(server)) {
		return false;
	}
	/* One output so that apps see a monitor (more come, one per scale);
	 * none is rendered to: each window is composited on its own. */
	if (!output_init(server)) {
		return false;
	}
	server->socket_name = wl_display_add_socket_auto(server->display);
	if (!server->socket_name) {
		log_error("cannot create a Wayland socket (is XDG_RUNTIME_DIR writable?)");
		return false;
	}
	if (!wlr_backend_start(server->backend)) {
		log_error("cannot start the headless backend");
		return false;
	}
	return true;
}

static void destroy_compositor(struct rc_server *server)
{
	xwayland_finish(server); /* before its client is cut off */
	wl_display_destroy_clients(server->display);
	handover_finish(server);
	dnd_finish(server);
	thumb_finish(server);
	textinput_finish(server);
	dnd_out_finish(server);
	/* Every window is gone, and with it every encoding job. */
	encode_context_finish(&server->encode);
	cursor_finish(server);
	clipboard_finish(server);
	decoration_finish(server);
	output_finish(server);
	damage_finish(server);
	xdg_finish(server);
	wl_display_destroy(server->display);
	wlr_renderer_destroy(server->renderer);
	tablet_finish(server);
	input_finish(server);
}

static int handle_stop_signal(int signo, void *data)
{
	struct rc_server *server = data;
	log_info("%s: shutting down", strsignal(signo));
	server->running = false;
	server->exit_code = 0;
	return 0;
}

static void run(struct rc_server *server)
{
	while (server->running) {
		wl_display_flush_clients(server->display);
		struct rc_viewer *viewer, *tmp;
		wl_list_for_each_safe(viewer, tmp, &server->viewers, link)
		{
			connection_flush(viewer->conn); /* may end it, and free viewer */
		}
		clipboard_sync(server);
		handover_sync(server);
		if (!server->running) {
			break;
		}
		if (wl_event_loop_dispatch(server->loop, -1) < 0 && errno != EINTR) {
			log_error("event loop failed: %s", strerror(errno));
			break;
		}
	}
}

/* The app has ended: what it played last is still on its way through the
 * session's sink (the capture runs on for a moment after the last stream
 * closes), and goes to the viewers, with the sound's end, before the
 * goodbye. At most this long. */
#define PLAY_OUT_US 1000000

static void play_out(struct rc_server *server)
{
	uint64_t deadline = monotonic_usec() + PLAY_OUT_US;
	while (monotonic_usec() < deadline) {
		/* Sound is the second class: what is queued goes before the
		 * goodbye (control) is, which would overtake it. */
		bool queued = false;
		struct rc_viewer *viewer, *tmp;
		wl_list_for_each_safe(viewer, tmp, &server->viewers, link)
		{
			connection_flush(viewer->conn);
		}
		wl_list_for_each(viewer, &server->viewers, link)
		{
			queued = queued ||
				channel_queued_class(&viewer->conn->channel, CHANNEL_AUDIO) > 0;
		}
		if (!sound_playing_out(server) && !queued) {
			break;
		}
		if (wl_event_loop_dispatch(server->loop, 20) < 0 && errno != EINTR) {
			break;
		}
	}
}

/* Tells the viewers why the session ends, and gives them a moment to
 * read. */
static void say_goodbye(struct rc_server *server, bool started)
{
	enum wire_goodbye_reason reason = WIRE_BYE_SHUTDOWN;
	int32_t status = 0;
	char text[sizeof(server->app.failure) + 64];
	if (server->app.stopping) {
		snprintf(text, sizeof(text), "the session was stopped (rcomp-run --stop)");
	} else if (started && server->app.exited) {
		reason = WIRE_BYE_APP_EXITED;
		status = server->app.status;
		if (server->app.failure[0]) {
			snprintf(text, sizeof(text), "%s", server->app.failure);
		} else {
			snprintf(text, sizeof(text), "the app exited with status %d",
				server->app.status);
		}
	} else {
		snprintf(text, sizeof(text), "rcomp-run is shutting down");
	}
	struct rc_viewer *viewer, *tmp;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		connection_goodbye(viewer->conn, reason, status, text);
	}
	handshake_say_goodbye(server, reason, status, text);
	/* A second for all of them together. */
	uint64_t deadline = monotonic_usec() + 1000000;
	wl_list_for_each_safe(viewer, tmp, &server->viewers, link)
	{
		uint64_t now = monotonic_usec();
		connection_close_now(viewer->conn,
			now < deadline ? (int)((deadline - now) / 1000) : 0);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--reaper") == 0) {
		/* The session's reaper, which app.c runs: not for users. */
		return reaper_main(argc, argv);
	}
	if (argc > 1 && strcmp(argv[1], "--cups-backend") == 0) {
		/* The session printer's CUPS backend, which print.c gives the
		 * session's scheduler: not for users. */
		log_init("rcomp-run", LOG_INFO);
		return command_cups_backend(argc - 2, argv + 2);
	}
	struct rc_server server = {
		.exit_code = 1,
		.next_window_id = 1,
	};
	int app_index = 0, mode = 0, ready_fd = -1;
	log_init("rcomp-run", LOG_INFO);
	/* The options point into the settings: they live as long as the process. */
	static struct settings settings;
	int status = parse_args(&settings, &server.options, argc, argv, &app_index, &mode);
	if (status >= 0) {
		settings_finish(&settings);
		return status;
	}
	wl_list_init(&server.windows);
	wl_list_init(&server.viewers);
	idmap_init(&server.window_ids);
	doors_init(&server);
	/* A peer that goes away is an error return, never a signal. */
	signal(SIGPIPE, SIG_IGN);
	if (mode == 'L') {
		return command_list();
	}
	if (mode == 'A') {
		return command_attach(app_index < argc ? argv[app_index] : NULL);
	}
	if (mode == 'X') {
		return command_stop(app_index < argc ? argv[app_index] : NULL);
	}
	if (mode == 'F') {
		const char *name =
			server.options.name ? server.options.name : getenv("RCOMP_SESSION");
		return command_send(name, server.options.send_to, argv + app_index,
			argc - app_index);
	}
	if (!record_init(&server, argv + app_index)) {
		return server.exit_code;
	}
	if (server.options.persist && !command_persist(&server, &ready_fd)) {
		record_finish(&server);
		return 1;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	server.encode = (struct rc_encode_context){
		.mode = server.options.codec_mode,
		.sharpness_first = server.options.sharpness_first,
		.compression = server.options.compression,
		.compression_level = server.options.compression_level,
		.dump_dir = server.options.dump_dir,
	};
	const char *slow = getenv("RCOMP_TEST_ENCODE_US_PER_MPIXEL");
	if (slow && *slow) {
		server.encode.test_us_per_mpixel = strtoull(slow, NULL, 10);
		log_info("RCOMP_TEST_ENCODE_US_PER_MPIXEL: each video frame takes at least %llu us "
			 "per million pixels (a test's slower machine)",
			(unsigned long long)server.encode.test_us_per_mpixel);
	}
	/* A plain ssh login may have no runtime directory: make a private one,
	 * for our Wayland socket and the app's. */
	char runtime_dir[] = "/tmp/rcomp-run-XXXXXX";
	bool own_runtime_dir = false;
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (!xdg || !*xdg) {
		if (!mkdtemp(runtime_dir)) {
			log_error("XDG_RUNTIME_DIR is not set and no private one can be made: %s",
				strerror(errno));
			return 1;
		}
		setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
		own_runtime_dir = true;
		log_info("XDG_RUNTIME_DIR is not set; using %s", runtime_dir);
	}
	if (!create_compositor(&server) || !encode_context_init(&server.encode, server.loop)) {
		log_error("cannot start the compositor");
		return 1;
	}
	struct wl_event_source *signals[] = {
		wl_event_loop_add_signal(server.loop, SIGINT, handle_stop_signal, &server),
		wl_event_loop_add_signal(server.loop, SIGTERM, handle_stop_signal, &server),
		wl_event_loop_add_signal(server.loop, SIGHUP, handle_stop_signal, &server),
	};
	bool ok = app_init(&server) && stats_init(&server) && doors_start(&server);
	if (ok) {
		if (bus_start(&server)) {
			notify_start(&server);
		}
		print_start(&server);
		sound_start(&server);
		log_info("apps connect to WAYLAND_DISPLAY=%s", server.socket_name);
		ok = app_start(&server, argv + app_index);
	}
	if (ready_fd >= 0) {
		/* The bridge that started us connects now, or says we failed. */
		if (ok) {
			ssize_t n = write(ready_fd, server.record.name, strlen(server.record.name));
			(void)n;
		}
		close(ready_fd);
	}
	server.running = ok;
	run(&server);
	if (ok && server.app.exited) {
		server.exit_code = server.app.status;
		play_out(&server);
	}
	say_goodbye(&server, ok);
	doors_finish(&server);
	record_finish(&server);
	if (server.options.stats) {
		struct rusage self;
		getrusage(RUSAGE_SELF, &self);
		log_info("stats: rcomp-run used %.3f s user, %.3f s system, max RSS %ld KiB",
			(double)self.ru_utime.tv_sec + self.ru_utime.tv_usec / 1e6,
			(double)self.ru_stime.tv_sec + self.ru_stime.tv_usec / 1e6, self.ru_maxrss);
	}
	app_finish(&server);
	sound_finish(&server);
	stats_finish(&server);
	notify_stop(&server); /* its watches are the event loop's */
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		if (signals[i]) {
			wl_event_source_remove(signals[i]);
		}
	}
	destroy_compositor(&server);
	idmap_finish(&server.window_ids);
	/* Nothing the session started outlives it. */
	app_wait_ended(&server);
	if (own_runtime_dir) {
		rmdir(runtime_dir); /* empty now: the display removed its socket */
	}
	char ended[WIRE_MAX_TEXT];
	app_ended_text(&server, ended, sizeof(ended));
	handshake_tell_stoppers(&server, ended);
	settings_finish(&settings);
	app_leave(&server);
	return server.exit_code;
}
