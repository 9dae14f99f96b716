/*
 * rcomp-view: shows the windows of a remote rcomp-run session as local
 * windows. Options, and the order things start and stop in.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clipboard.h"
#include "cursor.h"
#include "dispatch.h"
#include "input.h"
#include "log.h"
#include "loop.h"
#include "output.h"
#include "registry.h"
#include "sound.h"
#include "tcp.h"
#include "transport.h"
#include "window.h"

static const char usage[] =
	"usage: rcomp-view [options] [--attach SESSION | --socket PATH | --tcp HOST:PORT |\n"
	"                  --stdio]\n"
	"       rcomp-view [options] --local -- APP [ARGS...]\n"
	"       rcomp-view [options] ssh [ssh options] HOST -- APP [ARGS...]\n"
	"       rcomp-view [options] ssh [ssh options] HOST --attach [SESSION]\n"
	"\n"
	"Shows the windows of a remote rcomp-run session as local windows. If the link\n"
	"breaks, the windows stay, marked as disconnected, while rcomp-view reconnects\n"
	"with backoff; close one of them to give up.\n"
	"\n"
	"  --attach SESSION    a session on this host (default: the only one, or the\n"
	"                      only detached one; see rcomp-run --list)\n"
	"  --socket PATH       connect to rcomp-run on this unix socket\n"
	"  --tcp HOST:PORT     connect over TCP (not encrypted; prefer ssh)\n"
	"  --token-file FILE   with --tcp: the session's token (else $RCOMP_TOKEN)\n"
	"  --stdio             speak to rcomp-run on stdin/stdout\n"
	"  --local             start rcomp-run --stdio -- APP here (a one-command demo)\n"
	"  --compress ALGO     with --local or ssh: none, lz4, zstd or zstd:LEVEL\n"
	"  --fps N             with --local or ssh: the remote frame clock\n"
	"  --remote-bin PATH   with ssh: rcomp-run on the remote host (default: from PATH)\n"
	"  --app-decorations   let apps draw their own title bars even where the local\n"
	"                      compositor would draw them\n"
	"  --title-host        begin each window's title with the remote host's name\n"
	"                      (\"HOST: title\"), as ssh users see their remote shells\n"
	"  --audio on|off      play the session's sound here (default on)\n"
	"  --mic               send this desktop's default source (the microphone) to\n"
	"                      the session, where apps record it as their default source\n"
	"  --stats             print one line per second per window: frames received and\n"
	"                      presented, bytes/s; and one for sound\n"
	"  -v, --verbose       more logging\n"
	"  -V, --version       show the version and the wire protocol it speaks\n"
	"  -h, --help          show this help\n";

static bool read_token(struct rv_options *options, const char *file)
{
	if (file) {
		return tcp_read_token(file, options->token, &options->token_len);
	}
	const char *env = getenv("RCOMP_TOKEN");
	if (!env) {
		log_error("--tcp needs the session's token: --token-file FILE or $RCOMP_TOKEN");
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

static bool every_window(struct rv_window *window, void *data)
{
	return true;
}

int main(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"socket", required_argument, NULL, 's'},
		{"stdio", no_argument, NULL, 'S'},
		{"local", no_argument, NULL, 'l'},
		{"compress", required_argument, NULL, 'c'},
		{"fps", required_argument, NULL, 'f'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"stats", no_argument, NULL, 'T'},
		{"remote-bin", required_argument, NULL, 'R'},
		{"attach", required_argument, NULL, 'a'},
		{"tcp", required_argument, NULL, 't'},
		{"token-file", required_argument, NULL, 'k'},
		{"app-decorations", no_argument, NULL, 'D'},
		{"audio", required_argument, NULL, 'A'},
		{"mic", no_argument, NULL, 'M'},
		{"title-host", no_argument, NULL, 'H'},
		{0},
	};
	struct rv_viewer viewer = {
		.options = {.remote_bin = "rcomp-run", .transport = RV_SOCKET, .audio = true},
		.running = true,
		.exit_code = 1,
	};
	struct rv_options *options = &viewer.options;
	const char *token_file = NULL, *tcp = NULL;
	bool use_stdio = false, local = false;
	int opt, nmodes = 0;
	while ((opt = getopt_long(argc, argv, "+vhV", long_options, NULL)) != -1) {
		switch (opt) {
		case 's':
			options->target = optarg;
			nmodes++;
			break;
		case 'S':
			use_stdio = true;
			nmodes++;
			break;
		case 'l':
			local = true;
			nmodes++;
			break;
		case 'a':
			if (!wire_session_name_ok(optarg, strlen(optarg))) {
				fprintf(stderr, "rcomp-view: %s is not a session name\n", optarg);
				return 2;
			}
			options->attach_name = optarg;
			nmodes++;
			break;
		case 't':
			tcp = optarg;
			nmodes++;
			break;
		case 'k':
			token_file = optarg;
			break;
		case 'c':
			options->compress = optarg;
			break;
		case 'f':
			options->fps = optarg;
			break;
		case 'v':
			options->verbose++;
			break;
		case 'T':
			options->stats = true;
			break;
		case 'D':
			options->app_decorations = true;
			break;
		case 'H':
			options->title_host = true;
			break;
		case 'A':
			if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
				fprintf(stderr, "rcomp-view: --audio takes on or off\n");
				return 2;
			}
			options->audio = strcmp(optarg, "on") == 0;
			break;
		case 'M':
			options->mic = true;
			break;
		case 'R':
			options->remote_bin = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("rcomp-view %s (wire protocol %d.%d)\n", RCOMP_VERSION,
				WIRE_VERSION_MAJOR, WIRE_VERSION_MINOR);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	log_init("rcomp-view", options->verbose ? LOG_DEBUG : LOG_INFO);
	if (nmodes > 1) {
		fprintf(stderr,
			"rcomp-view: choose one of --attach, --socket, --tcp, --stdio and "
			"--local\n");
		return 2;
	}
	/* rcomp-view ssh [ssh options] HOST -- APP [ARGS]
	 * rcomp-view ssh [ssh options] HOST --attach [SESSION] */
	bool ssh = nmodes == 0 && optind < argc && strcmp(argv[optind], "ssh") == 0;
	if (ssh) {
		int first = optind + 1, end = first;
		while (end < argc && strcmp(argv[end], "--") != 0 &&
			strcmp(argv[end], "--attach") != 0) {
			end++;
		}
		bool attach = end < argc && strcmp(argv[end], "--attach") == 0;
		bool ok = end > first && end < argc && (attach ? argc - end <= 2 : end + 1 < argc);
		if (ok && attach && end + 1 < argc &&
			!wire_session_name_ok(argv[end + 1], strlen(argv[end + 1]))) {
			ok = false;
		}
		if (!ok) {
			fprintf(stderr,
				"rcomp-view: usage: rcomp-view ssh [ssh options] HOST -- APP "
				"[ARGS...]\n"
				"       or: rcomp-view ssh [ssh options] HOST --attach "
				"[SESSION]\n");
			return 2;
		}
		options->transport = RV_SSH;
		options->ssh_args = argv + first;
		options->nssh = end - first;
		if (attach) {
			options->attach_name = end + 1 < argc ? argv[end + 1] : NULL;
		} else {
			options->app = argv + end + 1;
		}
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
		if (!read_token(options, token_file)) {
			return 2;
		}
		log_error("warning: TCP is not encrypted: anyone on the network path can see "
			  "these windows and what you type. ssh is the encrypted path.");
	}
	if (token_file && !tcp) {
		fprintf(stderr, "rcomp-view: --token-file goes with --tcp\n");
		return 2;
	}

	wl_list_init(&viewer.windows);
	wl_list_init(&viewer.outputs);
	idmap_init(&viewer.window_ids);
	clipboard_init(&viewer);
	if (!decompressor_init(&viewer.decompressor)) {
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);

	sound_init(&viewer);
	if (registry_connect(&viewer) && transport_open(&viewer)) {
		dispatch_hello(&viewer);
		loop_run(&viewer);
	}

	window_destroy_if(&viewer, every_window, NULL);
	/* Our end closes: rcomp-run (--local) or the remote bridge sees the
	 * viewer leave; a persistent session runs on. */
	transport_close(&viewer);
	struct rv_output *output, *otmp;
	wl_list_for_each_safe(output, otmp, &viewer.outputs, link)
	{
		output_destroy(output);
	}
	clipboard_finish(&viewer);
	sound_finish(&viewer);
	cursor_finish(&viewer);
	input_finish(&viewer);
	registry_finish(&viewer);
	decompressor_finish(&viewer.decompressor);
	idmap_finish(&viewer.window_ids);
	return viewer.exit_code;
}
