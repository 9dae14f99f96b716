/*
 * rcomp-view: connects to the local compositor and to rcomp-run, and shows
 * each remote window as a local one. Options, the connection to the server,
 * message dispatch and the event loop live here.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "video.h"
#include "viewer.h"
#include "xdg-shell-client-protocol.h"

#define IN_LIMIT ((size_t)WIRE_HEADER_SIZE + WIRE_MAX_BODY)
#define OUT_LIMIT ((size_t)8 << 20)
#define READ_CHUNK (256 * 1024)

static const char usage[] =
	"usage: rcomp-view [options] [--socket PATH | --stdio]\n"
	"       rcomp-view [options] --local -- APP [ARGS...]\n"
	"       rcomp-view [options] ssh [ssh options] HOST -- APP [ARGS...]\n"
	"\n"
	"Shows the windows of a remote rcomp-run session as local windows.\n"
	"\n"
	"  --socket PATH       connect to rcomp-run on this unix socket\n"
	"                      (default: $XDG_RUNTIME_DIR/rcomp-0.sock)\n"
	"  --stdio             speak to rcomp-run on stdin/stdout\n"
	"  --local             start rcomp-run --stdio -- APP here (a one-command demo)\n"
	"  --compress ALGO     with --local or ssh: none, lz4, zstd or zstd:LEVEL\n"
	"  --fps N             with --local or ssh: the remote frame clock\n"
	"  --remote-bin PATH   with ssh: rcomp-run on the remote host (default: from PATH)\n"
	"  --stats             print one line per second per window: frames received and\n"
	"                      presented, bytes/s\n"
	"  -v, --verbose       more logging\n"
	"  -h, --help          show this help\n";

static volatile sig_atomic_t stop_signal;

static void handle_signal(int signo)
{
	stop_signal = signo;
}

void viewer_fail(struct rv_viewer *viewer, const char *fmt, ...)
{
	char text[512];
	va_list args;
	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	log_error("the server sent bad data, disconnecting: %s", text);
	viewer->running = false;
	viewer->exit_code = 1;
}

void viewer_send(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	if (!viewer->running) {
		return;
	}
	if (!wire_encode(&viewer->out, msg)) {
		log_error("the server is not reading input (%zu bytes queued); disconnecting",
			buffer_size(&viewer->out));
		viewer->running = false;
		viewer->exit_code = 1;
	}
}

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
	const char *interface, uint32_t version)
{
	struct rv_viewer *viewer = data;
	if (strcmp(interface, wl_compositor_interface.name) == 0) {
		viewer->compositor = wl_registry_bind(registry, name, &wl_compositor_interface,
			version < 4 ? version : 4);
	} else if (strcmp(interface, wl_shm_interface.name) == 0) {
		viewer->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
	} else if (strcmp(interface, xdg_wm_base_interface.name) == 0) {
		viewer->wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(viewer->wm_base, &wm_base_listener, viewer);
	} else if (strcmp(interface, wl_output_interface.name) == 0) {
		output_add(viewer, name, version);
	} else if (strcmp(interface, wl_seat_interface.name) == 0 && !viewer->seat) {
		uint32_t v = version < 5 ? version : 5;
		struct wl_seat *seat = wl_registry_bind(registry, name, &wl_seat_interface, v);
		input_seat_init(viewer, seat, v);
	}
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
	struct rv_viewer *viewer = data;
	output_remove(viewer, name);
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

static void handle_goodbye(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	char text[WIRE_MAX_TEXT + 1];
	memcpy(text, msg->goodbye.text, msg->goodbye.text_len);
	text[msg->goodbye.text_len] = '\0';
	viewer->running = false;
	switch (msg->goodbye.reason) {
	case WIRE_BYE_APP_EXITED:
		log_info("session ended: %s", text);
		viewer->exit_code = msg->goodbye.status >= 0 && msg->goodbye.status < 256
			? msg->goodbye.status
			: 1;
		break;
	case WIRE_BYE_SHUTDOWN:
		log_info("session ended: %s", text);
		viewer->exit_code = 0;
		break;
	default:
		log_error("the server refused this viewer: %s", text);
		viewer->exit_code = 1;
		break;
	}
}

static void dispatch(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	if (!viewer->welcomed && msg->type != WIRE_WELCOME && msg->type != WIRE_GOODBYE) {
		viewer_fail(viewer, "%s before welcome", wire_type_name(msg->type));
		return;
	}
	struct rv_window *window = NULL;
	switch (msg->type) {
	case WIRE_WELCOME:
		if (viewer->welcomed) {
			viewer_fail(viewer, "welcome sent twice");
			return;
		}
		if (msg->welcome.major != WIRE_VERSION_MAJOR) {
			viewer_fail(viewer, "server speaks protocol %u, this viewer %u",
				msg->welcome.major, WIRE_VERSION_MAJOR);
			return;
		}
		viewer->welcomed = true;
		log_debug("attached: protocol %u.%u, %s", msg->welcome.major, msg->welcome.minor,
			codec_compression_name(msg->welcome.flags));
		return;
	case WIRE_GOODBYE:
		handle_goodbye(viewer, msg);
		return;
	case WIRE_WINDOW_NEW:
		if (window_from_id(viewer, msg->window_new.window)) {
			viewer_fail(viewer, "window %u created twice", msg->window_new.window);
			return;
		}
		window_create(viewer, msg);
		return;
	default:
		break;
	}

	uint32_t id = msg->type == WIRE_FRAME	   ? msg->frame.window
		: msg->type == WIRE_WINDOW_DESTROY ? msg->window_destroy.window
						   : msg->window_text.window;
	window = window_from_id(viewer, id);
	if (!window) {
		viewer_fail(viewer, "%s for unknown window %u", wire_type_name(msg->type), id);
		return;
	}
	switch (msg->type) {
	case WIRE_WINDOW_TITLE:
	case WIRE_WINDOW_APP_ID:
		window_set_text(window, msg);
		break;
	case WIRE_WINDOW_DESTROY:
		window_destroy(window);
		break;
	case WIRE_FRAME:
		window_apply_frame(window, msg);
		break;
	default:
		viewer_fail(viewer, "unexpected %s", wire_type_name(msg->type));
		break;
	}
}

static void read_server(struct rv_viewer *viewer)
{
	uint8_t *dst = buffer_reserve(&viewer->in, READ_CHUNK);
	if (!dst) {
		viewer_fail(viewer, "message larger than any allowed");
		return;
	}
	ssize_t n = read(viewer->in_fd, dst, READ_CHUNK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		return;
	}
	if (n <= 0) {
		log_error("the connection to the server was lost%s%s", n < 0 ? ": " : "",
			n < 0 ? strerror(errno) : "");
		viewer->running = false;
		viewer->exit_code = 1;
		return;
	}
	buffer_commit(&viewer->in, (size_t)n);
	while (viewer->running) {
		struct wire_msg msg;
		size_t used;
		char err[256];
		enum wire_status status = wire_decode(WIRE_FROM_SERVER, buffer_head(&viewer->in),
			buffer_size(&viewer->in), &msg, &used, err, sizeof(err));
		if (status == WIRE_INCOMPLETE) {
			break;
		}
		if (status == WIRE_INVALID) {
			viewer_fail(viewer, "%s", err);
			break;
		}
		dispatch(viewer, &msg);
		buffer_consume(&viewer->in, used);
	}
}

static bool flush_server(struct rv_viewer *viewer)
{
	if (viewer->write_failed) {
		buffer_consume(&viewer->out, buffer_size(&viewer->out));
		return true;
	}
	while (buffer_size(&viewer->out) > 0) {
		ssize_t n =
			write(viewer->out_fd, buffer_head(&viewer->out), buffer_size(&viewer->out));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			return true;
		}
		if (n <= 0) {
			/* The server may have closed after saying why (a goodbye
			 * still unread): stop writing and let reading tell. */
			log_debug("writing to the server failed: %s",
				n < 0 ? strerror(errno) : "closed");
			viewer->write_failed = true;
			buffer_consume(&viewer->out, buffer_size(&viewer->out));
			return true;
		}
		buffer_consume(&viewer->out, (size_t)n);
	}
	return true;
}

static int connect_socket(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr.sun_path)) {
		log_error("socket path is too long: %s", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		log_error("cannot connect to rcomp-run at %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		return -1;
	}
	return fd;
}

/* rcomp-run next to this binary (installed, or in the build tree), else PATH. */
static void find_rcomp_run(char *out, size_t size)
{
	const char *env = getenv("RCOMP_RUN");
	if (env && *env) {
		snprintf(out, size, "%s", env);
		return;
	}
	char self[PATH_MAX - 64]; /* room for the suffixes below */
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			const char *candidates[] = {"/rcomp-run", "/../compositor/rcomp-run"};
			for (size_t i = 0; i < 2; i++) {
				snprintf(out, size, "%s%s", self, candidates[i]);
				if (access(out, X_OK) == 0) {
					return;
				}
			}
		}
	}
	snprintf(out, size, "rcomp-run");
}

/* Runs argv with a socket pair on its stdin and stdout; returns our end. */
static int start_child(struct rv_viewer *viewer, char **argv)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		log_error("cannot create a socket pair: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		log_error("cannot start %s: %s", argv[0], strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(sv[1], STDIN_FILENO);
		dup2(sv[1], STDOUT_FILENO);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "rcomp-view: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(sv[1]);
	viewer->child = pid;
	return sv[0];
}

/* rcomp-run --stdio's options and the app, after `head` (which the caller
 * fills) in a NULL-terminated array; NULL when out of memory. */
static char **run_argv(char **head, int nhead, char **app, const char *compress, const char *fps,
	int verbose)
{
	int nargs = 0;
	while (app[nargs]) {
		nargs++;
	}
	char **argv = calloc((size_t)(nhead + nargs + 10), sizeof(char *));
	if (!argv) {
		return NULL;
	}
	int i = 0;
	for (int j = 0; j < nhead; j++) {
		argv[i++] = head[j];
	}
	argv[i++] = "--stdio";
	if (compress) {
		argv[i++] = "--compress";
		argv[i++] = (char *)compress;
	}
	if (fps) {
		argv[i++] = "--fps";
		argv[i++] = (char *)fps;
	}
	if (verbose) {
		argv[i++] = "-v";
	}
	argv[i++] = "--";
	for (int j = 0; j < nargs; j++) {
		argv[i++] = app[j];
	}
	return argv;
}

static int start_local(struct rv_viewer *viewer, char **app, const char *compress, const char *fps,
	int verbose)
{
	char path[PATH_MAX];
	find_rcomp_run(path, sizeof(path));
	char *head[] = {path};
	char **argv = run_argv(head, 1, app, compress, fps, verbose);
	int fd = argv ? start_child(viewer, argv) : -1;
	free(argv);
	return fd;
}

/* Quotes s for a POSIX shell: ssh hands the remote command to one. */
static bool shell_quote(struct buffer *out, const char *s)
{
	bool ok = buffer_append(out, "'", 1);
	for (; *s && ok; s++) {
		ok = *s == '\'' ? buffer_append(out, "'\\''", 4) : buffer_append(out, s, 1);
	}
	return ok && buffer_append(out, "' ", 2);
}

/* rcomp-view ssh [ssh options] HOST -- APP: rcomp-run --stdio on HOST, over
 * ssh's own stdin and stdout, so no port is opened anywhere. */
static int start_ssh(struct rv_viewer *viewer, char **ssh_args, int nssh, char **app,
	const char *compress, const char *fps, const char *remote_bin, int verbose)
{
	char *head[] = {(char *)remote_bin};
	char **remote = run_argv(head, 1, app, compress, fps, verbose);
	struct buffer command;
	buffer_init(&command, 1 << 20);
	bool ok = remote != NULL;
	for (int i = 0; ok && remote[i]; i++) {
		ok = shell_quote(&command, remote[i]);
	}
	ok = ok && buffer_append(&command, "", 1);
	char **argv = calloc((size_t)nssh + 4, sizeof(char *));
	int fd = -1;
	if (ok && argv) {
		int i = 0;
		argv[i++] = "ssh";
		argv[i++] = "-T"; /* no terminal: the stream is binary */
		for (int j = 0; j < nssh; j++) {
			argv[i++] = ssh_args[j];
		}
		argv[i++] = (char *)buffer_head(&command);
		fd = start_child(viewer, argv);
	} else {
		log_error("the remote command is too long");
	}
	free(argv);
	free(remote);
	buffer_finish(&command);
	return fd;
}

static bool connect_wayland(struct rv_viewer *viewer)
{
	viewer->display = wl_display_connect(NULL);
	if (!viewer->display) {
		log_error("cannot connect to the local Wayland compositor (is WAYLAND_DISPLAY "
			  "set?)");
		return false;
	}
	viewer->registry = wl_display_get_registry(viewer->display);
	wl_registry_add_listener(viewer->registry, &registry_listener, viewer);
	wl_display_roundtrip(viewer->display);
	if (!viewer->compositor || !viewer->shm || !viewer->wm_base) {
		log_error("the local compositor lacks wl_compositor, wl_shm or xdg_wm_base");
		return false;
	}
	wl_display_roundtrip(viewer->display); /* seat capabilities, keymap */
	return true;
}

uint64_t viewer_time_usec(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
}

static void print_stats(struct rv_viewer *viewer)
{
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		log_info("stats window %u: received %u fps, presented %u fps, %.3f MB/s, %s",
			window->id, window->stat_received, window->stat_presented,
			(double)window->stat_bytes / 1e6, window->decoder ? "video" : "lossless");
		window->stat_received = window->stat_presented = 0;
		window->stat_bytes = 0;
	}
}

/* Milliseconds until the next stats line, or -1 without --stats. */
static int stats_timeout(struct rv_viewer *viewer)
{
	if (!viewer->stats) {
		return -1;
	}
	uint64_t now = viewer_time_usec();
	if (viewer->stats_due_us == 0) {
		viewer->stats_due_us = now + 1000000;
	}
	if (now >= viewer->stats_due_us) {
		print_stats(viewer);
		viewer->stats_due_us += 1000000;
		if (viewer->stats_due_us < now) {
			viewer->stats_due_us = now + 1000000;
		}
	}
	return (int)((viewer->stats_due_us - now) / 1000) + 1;
}

static void run(struct rv_viewer *viewer)
{
	struct wire_msg hello = {
		.type = WIRE_HELLO,
		.hello =
			{
				.magic = WIRE_MAGIC,
				.major = WIRE_VERSION_MAJOR,
				.minor = WIRE_VERSION_MINOR,
				.caps = WIRE_CAP_LZ4 | WIRE_CAP_ZSTD |
					(video_available() ? WIRE_CAP_H264 : 0),
			},
	};
	/* The hello goes first, before any input the roundtrips queued. */
	struct buffer queued = viewer->out;
	buffer_init(&viewer->out, OUT_LIMIT);
	viewer_send(viewer, &hello);
	buffer_append(&viewer->out, buffer_head(&queued), buffer_size(&queued));
	buffer_finish(&queued);

	while (viewer->running && !stop_signal) {
		while (wl_display_prepare_read(viewer->display) != 0) {
			if (wl_display_dispatch_pending(viewer->display) < 0) {
				break;
			}
		}
		if (wl_display_flush(viewer->display) < 0 && errno != EAGAIN) {
			wl_display_cancel_read(viewer->display);
			log_error("the local compositor connection failed: %s", strerror(errno));
			viewer->exit_code = 1;
			break;
		}
		if (!flush_server(viewer) || !viewer->running) {
			wl_display_cancel_read(viewer->display);
			break;
		}
		struct pollfd fds[3] = {
			{.fd = wl_display_get_fd(viewer->display), .events = POLLIN},
			{.fd = viewer->in_fd, .events = POLLIN},
			{.fd = viewer->out_fd, .events = buffer_size(&viewer->out) ? POLLOUT : 0},
		};
		int nfds = viewer->out_fd == viewer->in_fd ? 2 : 3;
		if (nfds == 2 && buffer_size(&viewer->out)) {
			fds[1].events |= POLLOUT;
		}
		if (poll(fds, (nfds_t)nfds, stats_timeout(viewer)) < 0) {
			wl_display_cancel_read(viewer->display);
			if (errno == EINTR) {
				continue;
			}
			log_error("poll failed: %s", strerror(errno));
			break;
		}
		if (fds[0].revents & POLLIN) {
			if (wl_display_read_events(viewer->display) < 0) {
				log_error("the local compositor connection failed: %s",
					strerror(errno));
				viewer->exit_code = 1;
				break;
			}
		} else {
			wl_display_cancel_read(viewer->display);
		}
		if (fds[0].revents & (POLLHUP | POLLERR)) {
			log_error("the local compositor went away");
			viewer->exit_code = 1;
			break;
		}
		if (wl_display_dispatch_pending(viewer->display) < 0) {
			log_error("the local compositor connection failed: %s", strerror(errno));
			viewer->exit_code = 1;
			break;
		}
		if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			read_server(viewer);
		}
	}
	if (stop_signal) {
		log_info("%s: closing", strsignal(stop_signal));
		viewer->exit_code = 0;
	}
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{"socket", required_argument, NULL, 's'},
		{"stdio", no_argument, NULL, 'S'},
		{"local", no_argument, NULL, 'l'},
		{"compress", required_argument, NULL, 'c'},
		{"fps", required_argument, NULL, 'f'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"stats", no_argument, NULL, 'T'},
		{"remote-bin", required_argument, NULL, 'R'},
		{0},
	};
	const char *remote_bin = "rcomp-run";
	bool stats = false;
	const char *socket_path = NULL, *compress = NULL, *fps = NULL;
	bool use_stdio = false, local = false;
	int verbose = 0, opt;
	while ((opt = getopt_long(argc, argv, "+vh", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			socket_path = optarg;
			break;
		case 'S':
			use_stdio = true;
			break;
		case 'l':
			local = true;
			break;
		case 'c':
			compress = optarg;
			break;
		case 'f':
			fps = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'T':
			stats = true;
			break;
		case 'R':
			remote_bin = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	log_init("rcomp-view", verbose ? LOG_DEBUG : LOG_INFO);
	if ((socket_path != NULL) + use_stdio + local > 1) {
		fprintf(stderr, "rcomp-view: choose one of --socket, --stdio and --local\n");
		return 2;
	}
	/* rcomp-view ssh [ssh options] HOST -- APP [ARGS] */
	bool ssh = !local && optind < argc && strcmp(argv[optind], "ssh") == 0;
	int ssh_first = optind + 1, ssh_end = ssh_first;
	if (ssh) {
		while (ssh_end < argc && strcmp(argv[ssh_end], "--") != 0) {
			ssh_end++;
		}
		if (ssh_end == ssh_first || ssh_end + 1 >= argc || socket_path || use_stdio) {
			fprintf(stderr,
				"rcomp-view: usage: rcomp-view ssh [ssh options] HOST -- APP "
				"[ARGS...]\n");
			return 2;
		}
	}
	if (local && optind >= argc) {
		fprintf(stderr, "rcomp-view: --local needs an app: rcomp-view --local -- APP\n");
		return 2;
	}
	if (!local && !ssh && optind < argc) {
		fprintf(stderr, "rcomp-view: unexpected argument %s\n", argv[optind]);
		return 2;
	}

	struct rv_viewer viewer = {.in_fd = -1,
		.out_fd = -1,
		.running = true,
		.exit_code = 1,
		.stats = stats};
	wl_list_init(&viewer.windows);
	wl_list_init(&viewer.outputs);
	buffer_init(&viewer.in, IN_LIMIT);
	buffer_init(&viewer.out, OUT_LIMIT);
	if (!decompressor_init(&viewer.decompressor)) {
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = {.sa_handler = handle_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (!connect_wayland(&viewer)) {
		return 1;
	}
	if (ssh) {
		viewer.in_fd = viewer.out_fd =
			start_ssh(&viewer, argv + ssh_first, ssh_end - ssh_first,
				argv + ssh_end + 1, compress, fps, remote_bin, verbose);
	} else if (local) {
		viewer.in_fd = viewer.out_fd =
			start_local(&viewer, argv + optind, compress, fps, verbose);
	} else if (use_stdio) {
		viewer.in_fd = STDIN_FILENO;
		viewer.out_fd = STDOUT_FILENO;
	} else {
		char path[PATH_MAX];
		if (!socket_path) {
			const char *dir = getenv("XDG_RUNTIME_DIR");
			snprintf(path, sizeof(path), "%s/rcomp-0.sock", dir ? dir : "/tmp");
			socket_path = path;
		}
		viewer.in_fd = viewer.out_fd = connect_socket(socket_path);
	}
	if (viewer.in_fd >= 0) {
		fcntl(viewer.in_fd, F_SETFL, fcntl(viewer.in_fd, F_GETFL) | O_NONBLOCK);
		fcntl(viewer.out_fd, F_SETFL, fcntl(viewer.out_fd, F_GETFL) | O_NONBLOCK);
		run(&viewer);
	}

	struct rv_window *window, *tmp;
	wl_list_for_each_safe(window, tmp, &viewer.windows, link)
	{
		window_destroy(window);
	}
	if (viewer.in_fd >= 0 && !use_stdio) {
		close(viewer.in_fd);
	}
	if (viewer.child > 0) {
		/* Our end is closed: rcomp-run sees the viewer leave and ends. */
		int status;
		waitpid(viewer.child, &status, 0);
	}
	struct rv_output *output, *otmp;
	wl_list_for_each_safe(output, otmp, &viewer.outputs, link)
	{
		output_destroy(output);
	}
	input_finish(&viewer);
	if (viewer.wm_base) {
		xdg_wm_base_destroy(viewer.wm_base);
	}
	if (viewer.shm) {
		wl_shm_destroy(viewer.shm);
	}
	if (viewer.compositor) {
		wl_compositor_destroy(viewer.compositor);
	}
	if (viewer.registry) {
		wl_registry_destroy(viewer.registry);
	}
	if (viewer.display) {
		wl_display_disconnect(viewer.display);
	}
	decompressor_finish(&viewer.decompressor);
	buffer_finish(&viewer.in);
	buffer_finish(&viewer.out);
	free(viewer.raw);
	return viewer.exit_code;
}
