/*
 * rcomp-view: shows the windows of a remote rcomp-run session as local
 * windows. Options, and the order things start and stop in.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bands.h"
#include "chord.h"
#include "clipboard.h"
#include "handover.h"
#include "cores.h"
#include "cursor.h"
#include "desktop.h"
#include "dispatch.h"
#include "hud.h"
#include "input.h"
#include "log.h"
#include "loop.h"
#include "notify.h"
#include "output.h"
#include "print.h"
#include "registry.h"
#include "settings.h"
#include "sound.h"
#include "token.h"
#include "transport.h"
#include "window.h"

static const char usage[] =
	"usage: rcomp-view [options] [--attach SESSION | --socket PATH | --tcp HOST:PORT |\n"
	"                  --udp HOST:PORT | --stdio]\n"
	"       rcomp-view [options] --local -- APP [ARGS...]\n"
	"       rcomp-view [options] ssh [ssh options] HOST -- APP [ARGS...]\n"
	"       rcomp-view [options] ssh [ssh options] HOST --attach [SESSION]\n"
	"       rcomp-view [options] ssh [ssh options] HOST --stop [SESSION]\n"
	"       rcomp-view [ssh [ssh options] HOST] --list\n"
	"       rcomp-view [options] --show-config [ssh [ssh options] HOST ...]\n"
	"\n"
	"Shows the windows of a remote rcomp-run session as local windows. If the link\n"
	"breaks, the windows stay, marked as disconnected, while rcomp-view reconnects\n"
	"with backoff; close one of them to give up.\n"
	"\n"
	"  --attach SESSION    a session on this host (default: the only one, or the\n"
	"                      only detached one; see --list)\n"
	"  --list              list the sessions on this host (after ssh HOST: there)\n"
	"  --socket PATH       connect to rcomp-run on this unix socket\n"
	"  --tcp HOST:PORT     connect over TCP (not encrypted; prefer ssh)\n"
	"  --udp HOST:PORT     connect over UDP: QUIC, encrypted and keyed by the\n"
	"                      session's token; rides packet loss, and a change of\n"
	"                      this machine's address (rcomp-run --listen-udp)\n"
	"  --token-file FILE   with --tcp or --udp: the session's token (else\n"
	"                      $RCOMP_TOKEN)\n"
	"  --stdio             speak to rcomp-run on stdin/stdout\n"
	"  --local             start rcomp-run --stdio -- APP here (a one-command demo)\n"
	"  --compress ALGO     with --local or ssh: none, lz4, zstd or zstd:LEVEL\n"
	"                      (default: rcomp-run's own setting)\n"
	"  --fps N|auto        with --local or ssh: the remote frame clock (default:\n"
	"                      rcomp-run's own setting)\n"
	"  --remote-bin PATH   with ssh: rcomp-run on the remote host (default: from PATH)\n"
	"  --ssh-udp on|off    with ssh: once the session runs, move it to UDP (QUIC, a\n"
	"                      port and a fresh key the host gives over ssh), and stay\n"
	"                      on ssh where UDP is blocked (default on)\n"
	"  --app-decorations   let apps draw their own title bars even where the local\n"
	"                      compositor would draw them\n"
	"  --title-host        begin each window's title with the remote host's name\n"
	"                      (\"HOST: title\"), as ssh users see their remote shells\n"
	"  --audio on|off      play the session's sound here (default on)\n"
	"  --mic               send this desktop's default source (the microphone) to\n"
	"                      the session, where apps record it as their default source\n"
	"  --share             join the session beside the viewers already there, each\n"
	"                      at its own pace, instead of taking it over\n"
	"  --view-only         join it to watch: no key, pointer, touch, clipboard, drag\n"
	"                      or resize of this viewer reaches the apps (implies\n"
	"                      --share; a session's watch token admits only this)\n"
	"  --stats             print one line per second per window: frames received and\n"
	"                      presented, bytes/s; and one for sound and each file transfer\n"
	"  --files yes|ask|no  save what the session sends (rcomp-run --send, prints) in\n"
	"                      the download folder, ask first (a notification), or\n"
	"                      refuse it (default yes)\n"
	"  --file-size-limit MIB  the largest file saved (default 16384; 0: none)\n"
	"  --open-files        open what the session sends once it is saved (xdg-open)\n"
	"  --print lp|save|open  what a print of the session's (a PDF, saved in the\n"
	"                      download folder) becomes: printed on this computer's\n"
	"                      default printer with lp, only saved, or opened (lp)\n"
	"  --notifications on|off  show the session's notifications on this desktop's\n"
	"                      notification daemon (on)\n"
	"  --hud               show each window's numbers in a corner of it: app and\n"
	"                      shown fps, codec, bytes/s, round trip, input to photon\n"
	"  --hud-key CHORD     the keys that show and hide it (default\n"
	"                      ctrl+alt+shift+h; none: no keys)\n"
	"  --hud-corner CORNER top-left (default), top-right, bottom-left or bottom-right\n"
	"  -v, --verbose       more logging\n"
	"  --show-config       print each setting, its value and where it came from\n"
	"                      (default, FILE:LINE, env RCOMP_KEY or flag), and exit;\n"
	"                      with ssh HOST ..., what that host gets\n"
	"  -V, --version       show the version and the wire protocol it speaks\n"
	"  -h, --help          show this help\n"
	"\n"
	"Settings: [view] and [host:NAME] in $XDG_CONFIG_DIRS/rcomp/rcomp.ini and\n"
	"$XDG_CONFIG_HOME/rcomp/rcomp.ini, then RCOMP_<KEY>, then flags; see rcomp(5).\n";

static bool read_token(struct rv_options *options, const char *file)
{
	if (file) {
		return token_read(file, options->token, &options->token_len);
	}
	const char *env = getenv("RCOMP_TOKEN");
	if (!env) {
		log_error("%s needs the session's token: --token-file FILE or $RCOMP_TOKEN",
			options->transport == RV_UDP ? "--udp" : "--tcp");
		return false;
	}
	size_t len = strcspn(env, "\r\n");
	if (len == 0 || len > WIRE_MAX_TOKEN) {
		log_error("the token must be 1 to %d characters", WIRE_MAX_TOKEN);
		return false;
	}
	memcpy(options->token, env, len);
	options->token_len = len;
	return true;
}

/* The settings: each key is a long option (settings.h). */
static bool set_compress(void *data, const char *value)
{
	enum wire_compression kind;
	int level;
	((struct rv_options *)data)->compress = *value ? value : NULL;
	return !*value || codec_parse_compression(value, &kind, &level);
}

static bool set_fps(void *data, const char *value)
{
	int fps;
	((struct rv_options *)data)->fps = *value ? value : NULL;
	return !*value || settings_parse_fps(value, &fps);
}

static bool set_remote_bin(void *data, const char *value)
{
	((struct rv_options *)data)->remote_bin = value;
	return *value != '\0';
}

static bool set_files(void *data, const char *value)
{
	static const char *const ways[] =
		{[FILES_TAKE_YES] = "yes", [FILES_TAKE_NO] = "no", [FILES_TAKE_ASK] = "ask"};
	for (uint32_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		if (strcmp(value, ways[i]) == 0) {
			((struct rv_options *)data)->files = i;
			return true;
		}
	}
	return false;
}

static bool set_file_size_limit(void *data, const char *value)
{
	char *end;
	long long mib = strtoll(value, &end, 10);
	if (end == value || *end || mib < 0 || mib > 16ll * 1024 * 1024) {
		return false;
	}
	((struct rv_options *)data)->file_size_limit = (uint64_t)mib << 20;
	return true;
}

static bool set_notifications(void *data, const char *value)
{
	bool on;
	if (!settings_parse_bool(value, &on)) {
		return false;
	}
	((struct rv_options *)data)->notifications_off = !on;
	return true;
}

static bool set_print(void *data, const char *value)
{
	static const char *const ways[] =
		{[RV_PRINT_LP] = "lp", [RV_PRINT_SAVE] = "save", [RV_PRINT_OPEN] = "open"};
	for (uint32_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		if (strcmp(value, ways[i]) == 0) {
			((struct rv_options *)data)->print = i;
			return true;
		}
	}
	return false;
}

static bool set_verbose(void *data, const char *value)
{
	bool on;
	if (!settings_parse_bool(value, &on)) {
		return false;
	}
	((struct rv_options *)data)->verbose = on;
	return true;
}

static bool set_hud_key(void *data, const char *value)
{
	return chord_parse(value, &((struct rv_options *)data)->hud_key);
}

static bool set_hud_corner(void *data, const char *value)
{
	static const char *const corners[] = {
		[0] = "top-left",
		[RV_HUD_RIGHT] = "top-right",
		[RV_HUD_BOTTOM] = "bottom-left",
		[RV_HUD_RIGHT | RV_HUD_BOTTOM] = "bottom-right",
	};
	for (uint32_t i = 0; i < sizeof(corners) / sizeof(corners[0]); i++) {
		if (strcmp(value, corners[i]) == 0) {
			((struct rv_options *)data)->hud_corner = i;
			return true;
		}
	}
	return false;
}

#define OPTIONS struct rv_options
static const struct settings_key keys[] = {
	SETTINGS_SESSION("attach", OPTIONS, want_attach),
	SETTINGS_STRING("socket", "", OPTIONS, want_socket, "a path"),
	SETTINGS_ADDRESS("tcp", OPTIONS, want_tcp),
	SETTINGS_ADDRESS("udp", OPTIONS, want_udp),
	SETTINGS_STRING("token-file", "", OPTIONS, token_file, "a path"),
	SETTINGS_CUSTOM("compress", "", false, set_compress,
		"none, lz4, zstd or zstd:LEVEL (1-22)"),
	SETTINGS_CUSTOM("fps", "", false, set_fps, "auto or a number from 1 to 240"),
	SETTINGS_CUSTOM("remote-bin", "rcomp-run", false, set_remote_bin, "a command"),
	SETTINGS_FLAG("app-decorations", OPTIONS, app_decorations),
	SETTINGS_FLAG("title-host", OPTIONS, title_host),
	SETTINGS_ON_OFF("ssh-udp", "on", OPTIONS, ssh_udp),
	SETTINGS_ON_OFF("audio", "on", OPTIONS, audio),
	SETTINGS_FLAG("mic", OPTIONS, mic),
	SETTINGS_FLAG("share", OPTIONS, share),
	SETTINGS_FLAG("view-only", OPTIONS, view_only),
	SETTINGS_FLAG("stats", OPTIONS, stats),
	SETTINGS_CUSTOM("files", "yes", false, set_files, "yes, ask or no"),
	SETTINGS_CUSTOM("file-size-limit", "16384", false, set_file_size_limit,
		"a number of MiB, 0 for none"),
	SETTINGS_FLAG("open-files", OPTIONS, open_files),
	SETTINGS_CUSTOM("notifications", "on", false, set_notifications, "on or off"),
	SETTINGS_CUSTOM("print", "lp", false, set_print, "lp, save or open"),
	SETTINGS_FLAG("hud", OPTIONS, hud),
	SETTINGS_CUSTOM("hud-key", "ctrl+alt+shift+h", false, set_hud_key,
		"MODIFIER+...+KEY (ctrl, alt, shift, super; an xkb keysym name) or none"),
	SETTINGS_CUSTOM("hud-corner", "top-left", false, set_hud_corner,
		"top-left, top-right, bottom-left or bottom-right"),
	SETTINGS_CUSTOM("verbose", "false", true, set_verbose, "true or false"),
};
#undef OPTIONS

static bool every_window(struct rv_window *window, void *data)
{
	return true;
}

/* rcomp-view ssh [ssh options] HOST -- APP [ARGS]
 * rcomp-view ssh [ssh options] HOST --attach [SESSION]
 * from argv[first] on (after "ssh"); false if it is neither. */
/* What ends ssh's arguments: index in ends, or -1. */
static const char *const ends[] = {"--", "--attach", "--stop", "--list"};
static int ssh_end(const char *arg)
{
	for (int k = 0; k < (int)(sizeof(ends) / sizeof(ends[0])); k++) {
		if (strcmp(arg, ends[k]) == 0) {
			return k;
		}
	}
	return -1;
}

static bool parse_ssh(struct rv_options *options, int argc, char **argv, int first)
{
	int end = first, which = -1;
	while (end < argc && (which = ssh_end(argv[end])) < 0) {
		end++;
	}
	if (end == first || which < 0) {
		return false;
	}
	/* --list takes nothing after it; --attach and --stop a session's
	 * name or nothing; -- the app. */
	int after = argc - end - 1;
	bool named = which == 1 || which == 2;
	if ((which == 0 && after < 1) || (which == 3 && after > 0) || (named && after > 1) ||
		(named && after == 1 && !session_name_ok(argv[end + 1], strlen(argv[end + 1])))) {
		return false;
	}
	options->remote_command = which >= 2 ? ends[which] : NULL;
	options->transport = RV_SSH;
	options->ssh_args = argv + first;
	options->nssh = end - first;
	if (named) {
		options->attach_name = after == 1 ? argv[end + 1] : NULL;
	} else if (which == 0) {
		options->app = argv + end + 1;
	}
	return true;
}

/* [host:NAME] is for the host as ssh is given it, without a user@. */
static const char *ssh_host(const struct rv_options *options)
{
	const char *host = options->ssh_args[options->nssh - 1];
	const char *at = strrchr(host, '@');
	return at ? at + 1 : host;
}

int main(int argc, char **argv)
{
	static const struct option own[] = {
		{"stdio", no_argument, NULL, 'S'},
		{"local", no_argument, NULL, 'l'},
		{"show-config", no_argument, NULL, 'C'},
		{"list", no_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	struct rv_viewer viewer = {
		.options = {.transport = RV_SOCKET},
		.connection = {.old_fd = -1},
		.running = true,
		.exit_code = 1,
	};
	struct rv_options *options = &viewer.options;
	/* The options point into the settings: they live as long as the process. */
	static struct settings settings;
	settings_init(&settings, "rcomp-view", "view", "host", keys, sizeof(keys) / sizeof(keys[0]),
		options);
	const struct option *long_options = settings_getopt(&settings, own);
	bool use_stdio = false, local = false, show_config = false, list = false;
	int opt;
	log_init("rcomp-view", LOG_INFO);
	opterr = 0; /* its complaint and ours would be two lines */
	while ((opt = getopt_long(argc, argv, "+:vhV", long_options, NULL)) != -1) {
		if (settings_option(&settings, opt, optarg)) {
			continue;
		}
		switch (opt) {
		case 'S':
			use_stdio = true;
			break;
		case 'l':
			local = true;
			break;
		case 'v':
			settings_flag(&settings, "verbose", NULL);
			break;
		case 'C':
			show_config = true;
			break;
		case 'L':
			list = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("rcomp-view %s (wire protocol %d.%d)\n", RCOMP_VERSION,
				WIRE_VERSION_MAJOR, WIRE_VERSION_MINOR);
			return 0;
		default:
			return settings_bad_option("rcomp-view", opt, argv);
		}
	}
	/* Where to connect: the command line's choice, else the settings'. */
	static const char *const places[] = {"attach", "socket", "tcp", "udp"};
	int nmodes = use_stdio + local;
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		nmodes += settings_flagged(&settings, places[i]);
	}
	if (nmodes > 1) {
		fprintf(stderr,
			"rcomp-view: choose one of --attach, --socket, --tcp, --udp, --stdio "
			"and --local\n");
		return 2;
	}
	bool ssh = nmodes == 0 && optind < argc && strcmp(argv[optind], "ssh") == 0;
	if (ssh && !parse_ssh(options, argc, argv, optind + 1)) {
		fprintf(stderr,
			"rcomp-view: after ssh: [ssh options] HOST, then -- APP [ARGS...], "
			"--attach [SESSION], --stop [SESSION] or --list; see rcomp-view --help\n");
		return 2;
	}
	int status = settings_resolve(&settings, ssh ? ssh_host(options) : NULL);
	if (status) {
		return status;
	}
	log_init("rcomp-view", options->verbose ? LOG_DEBUG : LOG_INFO);
	if (show_config) {
		settings_print(&settings, stdout);
		settings_finish(&settings);
		return 0;
	}
	if (list && (nmodes || ssh)) {
		fprintf(stderr,
			"rcomp-view: --list lists this host's sessions; for another's: "
			"rcomp-view ssh HOST --list\n");
		return 2;
	}
	if (list) {
		settings_finish(&settings);
		return session_print_list(stdout) ? 0 : 1;
	}
	if (ssh && options->remote_command) {
		/* rcomp-run --stop or --list there; no window is needed. */
		status = transport_ssh_command(&viewer);
		settings_finish(&settings);
		return status;
	}
	const char *from[4] = {0};
	const char **wants[4] = {&options->want_attach, &options->want_socket, &options->want_tcp,
		&options->want_udp};
	int wanted = 0;
	for (size_t i = 0; i < 4; i++) {
		if (*wants[i] && (nmodes || ssh) && !settings_flagged(&settings, places[i])) {
			*wants[i] = NULL; /* the command line chose another way */
		}
		if (*wants[i]) {
			from[wanted++] = places[i];
		}
	}
	if (wanted > 1) {
		fprintf(stderr,
			"rcomp-view: the settings say where to connect twice: %s (%s) and %s (%s); "
			"keep one\n",
			from[0], settings_source(&settings, from[0]), from[1],
			settings_source(&settings, from[1]));
		return 2;
	}
	const char *tcp = options->want_tcp, *udp = options->want_udp;
	if (options->want_attach) {
		options->attach_name = options->want_attach;
	}
	if (options->want_socket) {
		options->target = options->want_socket;
	}
	if (ssh) {
		/* parsed above */
	} else if (local) {
		if (optind >= argc) {
			fprintf(stderr,
				"rcomp-view: --local needs an app: rcomp-view --local -- APP\n");
			return 2;
		}
		options->transport = RV_LOCAL;
		options->app = argv + optind;
	} else if (optind < argc) {
		fprintf(stderr, "rcomp-view: unexpected argument %s\n", argv[optind]);
		return 2;
	} else if (use_stdio) {
		options->transport = RV_STDIO;
	} else if (tcp) {
		options->transport = RV_TCP;
		options->target = tcp;
		if (!read_token(options, options->token_file)) {
			return 2;
		}
		log_warning("TCP is not encrypted: anyone on the network path can see "
			    "these windows and what you type. ssh is the encrypted path.");
	} else if (udp) {
		options->transport = RV_UDP;
		options->target = udp;
		if (!read_token(options, options->token_file)) {
			return 2;
		}
	}
	if (options->token_file && !tcp && !udp && settings_flagged(&settings, "token-file")) {
		fprintf(stderr, "rcomp-view: --token-file goes with --tcp or --udp\n");
		return 2;
	}

	wl_list_init(&viewer.windows);
	wl_list_init(&viewer.outputs);
	wl_list_init(&viewer.seat.tablet_objects);
	idmap_init(&viewer.window_ids);
	clipboard_init(&viewer);
	handover_init(&viewer);
	notify_init(&viewer);
	if (!decompressor_init(&viewer.decompressor)) {
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	/* Pictures are converted and scaled in bands on the other cores. */
	bands_init(cores_available() - 1);

	sound_init(&viewer);
	viewer.hud_shown = options->hud;
	if (registry_connect(&viewer) && transport_open(&viewer)) {
		dispatch_hello(&viewer);
		loop_run(&viewer);
	}

	window_destroy_if(&viewer, every_window, NULL);
	sound_play_out(&viewer, 1000);
	/* Our end closes: rcomp-run (--local) or the remote bridge sees the
	 * viewer leave; a persistent session runs on. */
	transport_close(&viewer);
	transport_drop_old(&viewer);
	struct rv_output *output, *otmp;
	wl_list_for_each_safe(output, otmp, &viewer.outputs, link)
	{
		output_destroy(output);
	}
	output_finish_places(&viewer);
	clipboard_finish(&viewer);
	handover_finish(&viewer);
	print_finish(&viewer);
	notify_finish(&viewer);
	sound_finish(&viewer);
	hud_finish(&viewer);
	cursor_finish(&viewer);
	input_finish(&viewer);
	desktop_finish(&viewer);
	registry_finish(&viewer);
	decompressor_finish(&viewer.decompressor);
	idmap_finish(&viewer.window_ids);
	settings_finish(&settings);
	bands_finish();
	return viewer.exit_code;
}
