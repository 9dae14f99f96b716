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
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "session.h"
#include "video.h"
#include "viewer.h"
#include "primary-selection-unstable-v1-client-protocol.h"
#include "xdg-decoration-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define IN_LIMIT ((size_t)WIRE_HEADER_SIZE + WIRE_MAX_BODY)
#define OUT_LIMIT ((size_t)8 << 20)
#define CLIPBOARD_HIGH_WATER (1024 * 1024)
#define READ_CHUNK (256 * 1024)

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
	/* Nothing is queued while the link is down: input from then must never
	 * reach the app late. */
	if (!viewer->running || !viewer->connected) {
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
	} else if (strcmp(interface, zxdg_decoration_manager_v1_interface.name) == 0 &&
		!viewer->app_decorations) {
		viewer->decoration_manager =
			wl_registry_bind(registry, name, &zxdg_decoration_manager_v1_interface, 1);
	} else if (strcmp(interface, wl_data_device_manager_interface.name) == 0) {
		viewer->clipboard.manager = wl_registry_bind(registry, name,
			&wl_data_device_manager_interface, version < 3 ? version : 3);
	} else if (strcmp(interface, zwp_primary_selection_device_manager_v1_interface.name) == 0) {
		viewer->clipboard.primary_manager = wl_registry_bind(registry, name,
			&zwp_primary_selection_device_manager_v1_interface, 1);
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
	case WIRE_BYE_TAKEN_OVER:
		log_info("disconnected: %s", text);
		viewer->exit_code = 0;
		break;
	case WIRE_BYE_NO_SESSION:
		log_error("%s", text);
		viewer->exit_code = 1;
		break;
	default:
		log_error("the server refused this viewer: %s", text);
		viewer->exit_code = 1;
		break;
	}
}

static void handle_welcome(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	char name[WIRE_MAX_SESSION_NAME + 1];
	memcpy(name, msg->welcome.name, msg->welcome.name_len);
	name[msg->welcome.name_len] = '\0';
	if (viewer->ever_welcomed && msg->welcome.session_id != viewer->session_id) {
		log_error("the session is gone: a different session answers now");
		viewer->running = false;
		viewer->exit_code = 1;
		return;
	}
	bool reattach = viewer->ever_welcomed;
	viewer->welcomed = viewer->ever_welcomed = true;
	viewer->session_id = msg->welcome.session_id;
	memcpy(viewer->session_name, name, sizeof(name));
	viewer->retry_ms = 0;
	log_info("%s session %s (protocol %u.%u, %s)", reattach ? "reattached to" : "attached to",
		name, msg->welcome.major, msg->welcome.minor,
		codec_compression_name(msg->welcome.flags));
	/* State, not history: the snapshot says which windows still exist. */
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		window->stale = true;
	}
	viewer->resyncing = true;
}

static void handle_sync(struct rv_viewer *viewer)
{
	struct rv_window *window, *tmp;
	wl_list_for_each_safe(window, tmp, &viewer->windows, link)
	{
		if (window->stale) {
			window_destroy(window);
		} else {
			window_set_disconnected(window, false);
		}
	}
	viewer->resyncing = false;
	log_debug("snapshot complete");
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
		handle_welcome(viewer, msg);
		return;
	case WIRE_SYNC:
		handle_sync(viewer);
		return;
	case WIRE_CURSOR:
		input_set_cursor(viewer, msg);
		return;
	case WIRE_SELECTION:
	case WIRE_TRANSFER_REQUEST:
	case WIRE_TRANSFER_DATA:
	case WIRE_TRANSFER_ACK:
		clipboard_handle_message(viewer, msg);
		return;
	case WIRE_POPUP_NEW:
		if (window_from_id(viewer, msg->popup_new.window)) {
			viewer_fail(viewer, "window %u created twice", msg->popup_new.window);
			return;
		}
		window_create_popup(viewer, msg);
		return;
	case WIRE_GOODBYE:
		handle_goodbye(viewer, msg);
		return;
	case WIRE_WINDOW_NEW:
		window = window_from_id(viewer, msg->window_new.window);
		if (window && window->stale) {
			window_reattach(window, msg);
			return;
		}
		if (window) {
			viewer_fail(viewer, "window %u created twice", msg->window_new.window);
			return;
		}
		window_create(viewer, msg);
		return;
	default:
		break;
	}

	uint32_t id = msg->type == WIRE_FRAME	      ? msg->frame.window
		: msg->type == WIRE_WINDOW_DESTROY    ? msg->window_destroy.window
		: msg->type == WIRE_WINDOW_PARENT     ? msg->window_parent.window
		: msg->type == WIRE_WINDOW_SCALE      ? msg->window_scale.window
		: msg->type == WIRE_WINDOW_REQUEST    ? msg->window_request.window
		: msg->type == WIRE_WINDOW_HINTS      ? msg->window_hints.window
		: msg->type == WIRE_WINDOW_DECORATION ? msg->window_decoration.window
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
	case WIRE_WINDOW_PARENT:
		window_set_parent(window, msg->window_parent.parent);
		break;
	case WIRE_WINDOW_SCALE:
		window_set_scale(window, msg->window_scale.scale);
		break;
	case WIRE_WINDOW_REQUEST:
		window_request(window, msg->window_request.request);
		break;
	case WIRE_WINDOW_HINTS:
		window_set_hints(window, msg);
		break;
	case WIRE_WINDOW_DECORATION:
		window_set_decoration(window, msg->window_decoration.mode);
		break;
	case WIRE_FRAME:
		window_apply_frame(window, msg);
		break;
	default:
		viewer_fail(viewer, "unexpected %s", wire_type_name(msg->type));
		break;
	}
}

static void link_lost(struct rv_viewer *viewer, const char *why);

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
		link_lost(viewer, n < 0 ? strerror(errno) : "closed");
		return;
	}
	buffer_commit(&viewer->in, (size_t)n);
	while (viewer->running && viewer->connected) {
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

static void flush_server(struct rv_viewer *viewer)
{
	if (viewer->write_failed) {
		buffer_consume(&viewer->out, buffer_size(&viewer->out));
		return;
	}
	while (buffer_size(&viewer->out) > 0) {
		ssize_t n =
			write(viewer->out_fd, buffer_head(&viewer->out), buffer_size(&viewer->out));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			return;
		}
		if (n <= 0) {
			/* The server may have closed after saying why (a goodbye
			 * still unread): stop writing and let reading tell. */
			log_debug("writing to the server failed: %s",
				n < 0 ? strerror(errno) : "closed");
			viewer->write_failed = true;
			buffer_consume(&viewer->out, buffer_size(&viewer->out));
			return;
		}
		buffer_consume(&viewer->out, (size_t)n);
	}
}

static int connect_socket(const char *path, bool quiet)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr.sun_path)) {
		log_error("socket path is too long: %s", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int err = errno;
		if (quiet) {
			log_debug("cannot connect to rcomp-run at %s: %s", path, strerror(errno));
		} else {
			log_error("cannot connect to rcomp-run at %s: %s", path, strerror(errno));
		}
		if (fd >= 0) {
			close(fd);
		}
		errno = err;
		return -1;
	}
	return fd;
}

/* Starts a nonblocking TCP connect to HOST:PORT or [HOST]:PORT; the event
 * loop finishes it, so a dead host never freezes the windows. */
static int connect_tcp(const char *spec, bool quiet)
{
	char host[256];
	const char *port;
	if (!session_split_host_port(spec, host, sizeof(host), &port) || !host[0]) {
		log_error("--tcp takes HOST:PORT, not %s", spec);
		return -1;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res;
	int err = getaddrinfo(host, port, &hints, &res);
	if (err) {
		if (quiet) {
			log_debug("cannot resolve %s: %s", spec, gai_strerror(err));
		} else {
			log_error("cannot resolve %s: %s", spec, gai_strerror(err));
		}
		return -1;
	}
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0 && errno != EINPROGRESS) {
		log_debug("cannot connect to %s: %s", spec, strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd >= 0) {
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
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

/* The rcomp-run command line: `bin --stdio [--persist] options -- APP` for a
 * new session, `bin --attach [SESSION]` to reattach. NULL-terminated; NULL
 * when out of memory. */
static char **run_argv(struct rv_viewer *viewer, const char *bin, bool persist)
{
	int nargs = 0;
	while (viewer->app && viewer->app[nargs]) {
		nargs++;
	}
	char **argv = calloc((size_t)nargs + 12, sizeof(char *));
	if (!argv) {
		return NULL;
	}
	int i = 0;
	argv[i++] = (char *)bin;
	if (viewer->verbose) {
		argv[i++] = "-v";
	}
	if (!viewer->app) {
		argv[i++] = "--attach";
		const char *name =
			viewer->ever_welcomed ? viewer->session_name : viewer->attach_name;
		if (name) {
			argv[i++] = (char *)name;
		}
		return argv;
	}
	argv[i++] = "--stdio";
	if (persist) {
		argv[i++] = "--persist";
	}
	if (viewer->compress) {
		argv[i++] = "--compress";
		argv[i++] = (char *)viewer->compress;
	}
	if (viewer->fps) {
		argv[i++] = "--fps";
		argv[i++] = (char *)viewer->fps;
	}
	argv[i++] = "--";
	for (int j = 0; j < nargs; j++) {
		argv[i++] = viewer->app[j];
	}
	return argv;
}

static int start_local(struct rv_viewer *viewer)
{
	char path[PATH_MAX];
	find_rcomp_run(path, sizeof(path));
	char **argv = run_argv(viewer, path, false);
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

/* rcomp-view ssh [ssh options] HOST -- APP: rcomp-run --stdio --persist on
 * HOST over ssh's own stdin and stdout, so no port is opened anywhere. Once
 * the session has a name, reconnecting runs rcomp-run --attach NAME. */
static int start_ssh(struct rv_viewer *viewer)
{
	if (viewer->ever_welcomed) {
		viewer->app = NULL; /* from now on: reattach to this session */
	}
	char **remote = run_argv(viewer, viewer->remote_bin, true);
	struct buffer command;
	buffer_init(&command, 1 << 20);
	bool ok = remote != NULL;
	for (int i = 0; ok && remote[i]; i++) {
		ok = shell_quote(&command, remote[i]);
	}
	ok = ok && buffer_append(&command, "", 1);
	char **argv = calloc((size_t)viewer->nssh + 4, sizeof(char *));
	int fd = -1;
	if (ok && argv) {
		int i = 0;
		argv[i++] = "ssh";
		argv[i++] = "-T"; /* no terminal: the stream is binary */
		for (int j = 0; j < viewer->nssh; j++) {
			argv[i++] = viewer->ssh_args[j];
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

/* A local session's socket: the named one, or the only one, or the only
 * detached one. */
static bool find_local_session(struct rv_viewer *viewer, char *path, size_t size)
{
	char dir[SESSION_PATH_MAX];
	if (!session_dir(dir, sizeof(dir), false)) {
		return false;
	}
	if (viewer->ever_welcomed) {
		/* The same session again; connecting tells whether it lives. */
		return session_path(path, size, dir, viewer->session_name, "sock");
	}
	struct session_info infos[256];
	char err[256];
	int n = session_list(dir, infos, 256);
	int i = n >= 0 ? session_choose(infos, n, viewer->attach_name, err, sizeof(err)) : -1;
	if (i < 0) {
		log_error("%s", n >= 0 ? err : "cannot read the session directory");
		return false;
	}
	return session_path(path, size, dir, infos[i].name, "sock");
}

static void send_hello(struct rv_viewer *viewer)
{
	struct wire_msg hello = {
		.type = WIRE_HELLO,
		.hello =
			{
				.magic = WIRE_MAGIC,
				.major = WIRE_VERSION_MAJOR,
				.minor = WIRE_VERSION_MINOR,
				.caps = WIRE_CAP_LZ4 | WIRE_CAP_ZSTD |
					(video_available() ? WIRE_CAP_H264 : 0) |
					(viewer->decoration_manager ? WIRE_CAP_SERVER_DECORATIONS
								    : 0),
				.token_len = (uint32_t)viewer->token_len,
				.token = viewer->token,
			},
	};
	viewer_send(viewer, &hello);
	input_send_state(viewer);
	clipboard_link_up(viewer);
}

/* Opens the link to rcomp-run. Returns false if it cannot be started now. */
static bool link_open(struct rv_viewer *viewer)
{
	bool retry = viewer->ever_welcomed || viewer->retry_ms > 0;
	int fd = -1;
	switch (viewer->transport) {
	case RV_SOCKET: {
		char path[PATH_MAX];
		const char *target = viewer->target;
		if (!target) {
			if (!find_local_session(viewer, path, sizeof(path))) {
				if (retry) {
					log_error("the session is gone");
					viewer->running = false;
				}
				return false;
			}
			target = path;
		}
		fd = connect_socket(target, retry);
		if (fd < 0 && retry && (errno == ECONNREFUSED || errno == ENOENT)) {
			/* Nothing listens on a local socket: no link to wait for,
			 * the session itself has ended. */
			log_error("the session is gone: nothing listens on %s", target);
			viewer->running = false;
			return false;
		}
		break;
	}
	case RV_TCP:
		fd = connect_tcp(viewer->target, retry);
		viewer->connecting = fd >= 0;
		break;
	case RV_SSH:
		fd = start_ssh(viewer);
		break;
	case RV_LOCAL:
		fd = start_local(viewer);
		break;
	case RV_STDIO:
		viewer->in_fd = STDIN_FILENO;
		viewer->out_fd = STDOUT_FILENO;
		fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
		fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK);
		viewer->connected = true;
		send_hello(viewer);
		return true;
	}
	if (fd < 0) {
		return false;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	viewer->in_fd = viewer->out_fd = fd;
	viewer->connected = true;
	viewer->write_failed = false;
	send_hello(viewer);
	return true;
}

static void link_close(struct rv_viewer *viewer)
{
	if (viewer->connected && viewer->transport != RV_STDIO) {
		close(viewer->in_fd);
	}
	viewer->connected = viewer->connecting = viewer->welcomed = false;
	viewer->in_fd = viewer->out_fd = -1;
	clipboard_link_down(viewer);
	buffer_consume(&viewer->in, buffer_size(&viewer->in));
	buffer_consume(&viewer->out, buffer_size(&viewer->out));
	if (viewer->child > 0) {
		/* ssh or rcomp-run: our end is closed, and a broken link may
		 * leave ssh waiting for its timeout. */
		if (viewer->transport == RV_SSH) {
			kill(viewer->child, SIGTERM);
		}
		int status;
		waitpid(viewer->child, &status, 0);
		viewer->child = 0;
	}
}

#define RETRY_FIRST_MS 250
#define RETRY_MAX_MS 8000

static void schedule_retry(struct rv_viewer *viewer)
{
	viewer->retry_ms = viewer->retry_ms ? viewer->retry_ms * 2 : RETRY_FIRST_MS;
	if (viewer->retry_ms > RETRY_MAX_MS) {
		viewer->retry_ms = RETRY_MAX_MS;
	}
	viewer->retry_at_us = viewer_time_usec() + (uint64_t)viewer->retry_ms * 1000;
	log_info("reconnecting in %.2f s", viewer->retry_ms / 1000.0);
}

/* The link broke without a goodbye: keep the windows, marked, and try
 * again with backoff where the transport allows it. */
static void link_lost(struct rv_viewer *viewer, const char *why)
{
	bool was_welcomed = viewer->welcomed;
	link_close(viewer);
	bool can_retry = viewer->transport == RV_SOCKET || viewer->transport == RV_TCP ||
		(viewer->transport == RV_SSH && viewer->ever_welcomed);
	if (!can_retry) {
		log_error("the connection to the server was lost: %s", why);
		viewer->running = false;
		viewer->exit_code = 1;
		return;
	}
	if (was_welcomed || !viewer->retry_ms) {
		log_error("the connection to the server was lost (%s); windows stay until it "
			  "returns",
			why);
	}
	/* Popups are fleeting: they go now, and come back with the snapshot if
	 * the app still shows them. */
	struct rv_window *window;
	bool found = true;
	while (found) {
		found = false;
		wl_list_for_each(window, &viewer->windows, link)
		{
			if (window->parent) {
				window_destroy(window);
				found = true;
				break;
			}
		}
	}
	wl_list_for_each(window, &viewer->windows, link)
	{
		window_set_disconnected(window, true);
	}
	viewer->resyncing = false;
	schedule_retry(viewer);
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
	clipboard_seat(viewer);
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

static int poll_timeout(struct rv_viewer *viewer)
{
	int timeout = stats_timeout(viewer);
	if (viewer->retry_at_us) {
		uint64_t now = viewer_time_usec();
		int retry = now >= viewer->retry_at_us
			? 0
			: (int)((viewer->retry_at_us - now) / 1000) + 1;
		timeout = timeout < 0 || retry < timeout ? retry : timeout;
	}
	return timeout;
}

static void maybe_retry(struct rv_viewer *viewer)
{
	if (!viewer->retry_at_us || viewer_time_usec() < viewer->retry_at_us) {
		return;
	}
	viewer->retry_at_us = 0;
	if (!link_open(viewer) && viewer->running) {
		schedule_retry(viewer);
	}
}

/* A TCP connect finished: it worked or it did not. */
static void finish_connect(struct rv_viewer *viewer)
{
	int err = 0;
	socklen_t len = sizeof(err);
	viewer->connecting = false;
	if (getsockopt(viewer->in_fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
		link_lost(viewer, strerror(err ? err : errno));
	}
}

static void run(struct rv_viewer *viewer)
{
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
		if (viewer->connected && !viewer->connecting) {
			flush_server(viewer);
		}
		if (!viewer->running) {
			wl_display_cancel_read(viewer->display);
			break;
		}
		bool up = viewer->connected;
		bool want_out = up && (viewer->connecting || buffer_size(&viewer->out));
		struct pollfd fds[3 + TRANSFER_MAX] = {
			{.fd = wl_display_get_fd(viewer->display), .events = POLLIN},
			{.fd = up ? viewer->in_fd : -1, .events = viewer->connecting ? 0 : POLLIN},
			{.fd = up ? viewer->out_fd : -1, .events = want_out ? POLLOUT : 0},
		};
		if (viewer->out_fd == viewer->in_fd) {
			fds[1].events |= fds[2].events;
			fds[2].fd = -1;
		}
		/* Clipboard data is read only while the server keeps up. */
		clipboard_poll_fds(viewer, fds + 3,
			up && buffer_size(&viewer->out) < CLIPBOARD_HIGH_WATER);
		if (poll(fds, sizeof(fds) / sizeof(fds[0]), poll_timeout(viewer)) < 0) {
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
		if (up && viewer->connected && viewer->connecting &&
			(fds[1].revents & (POLLOUT | POLLHUP | POLLERR))) {
			finish_connect(viewer);
		} else if (up && viewer->connected &&
			(fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			read_server(viewer);
		}
		clipboard_handle_poll(viewer, fds + 3);
		maybe_retry(viewer);
	}
	if (stop_signal) {
		log_info("%s: closing", strsignal(stop_signal));
		viewer->exit_code = 0;
	}
}

static bool read_token(struct rv_viewer *viewer, const char *file)
{
	if (file) {
		return session_read_token(file, viewer->token, &viewer->token_len);
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
	memcpy(viewer->token, env, len);
	viewer->token_len = len;
	return true;
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
		{"attach", required_argument, NULL, 'a'},
		{"tcp", required_argument, NULL, 't'},
		{"token-file", required_argument, NULL, 'k'},
		{"app-decorations", no_argument, NULL, 'D'},
		{0},
	};
	struct rv_viewer viewer = {.in_fd = -1,
		.out_fd = -1,
		.running = true,
		.exit_code = 1,
		.remote_bin = "rcomp-run",
		.transport = RV_SOCKET};
	clipboard_init(&viewer);
	const char *token_file = NULL, *tcp = NULL;
	bool use_stdio = false, local = false;
	int opt, nmodes = 0;
	while ((opt = getopt_long(argc, argv, "+vh", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			viewer.target = optarg;
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
			viewer.attach_name = optarg;
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
			viewer.compress = optarg;
			break;
		case 'f':
			viewer.fps = optarg;
			break;
		case 'v':
			viewer.verbose++;
			break;
		case 'T':
			viewer.stats = true;
			break;
		case 'D':
			viewer.app_decorations = true;
			break;
		case 'R':
			viewer.remote_bin = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	log_init("rcomp-view", viewer.verbose ? LOG_DEBUG : LOG_INFO);
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
		viewer.transport = RV_SSH;
		viewer.ssh_args = argv + first;
		viewer.nssh = end - first;
		if (attach) {
			viewer.attach_name = end + 1 < argc ? argv[end + 1] : NULL;
		} else {
			viewer.app = argv + end + 1;
		}
	} else if (local) {
		if (optind >= argc) {
			fprintf(stderr,
				"rcomp-view: --local needs an app: rcomp-view --local -- APP\n");
			return 2;
		}
		viewer.transport = RV_LOCAL;
		viewer.app = argv + optind;
	} else if (optind < argc) {
		fprintf(stderr, "rcomp-view: unexpected argument %s\n", argv[optind]);
		return 2;
	} else if (use_stdio) {
		viewer.transport = RV_STDIO;
	} else if (tcp) {
		viewer.transport = RV_TCP;
		viewer.target = tcp;
		if (!read_token(&viewer, token_file)) {
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
	buffer_init(&viewer.in, IN_LIMIT);
	buffer_init(&viewer.out, OUT_LIMIT);
	if (!decompressor_init(&viewer.decompressor)) {
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = {.sa_handler = handle_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (connect_wayland(&viewer) && link_open(&viewer)) {
		run(&viewer);
	}

	struct rv_window *window, *tmp;
	wl_list_for_each_safe(window, tmp, &viewer.windows, link)
	{
		window_destroy(window);
	}
	/* Our end closes: rcomp-run (--local) or the remote bridge sees the
	 * viewer leave; a persistent session runs on. */
	link_close(&viewer);
	struct rv_output *output, *otmp;
	wl_list_for_each_safe(output, otmp, &viewer.outputs, link)
	{
		output_destroy(output);
	}
	clipboard_finish(&viewer);
	input_finish(&viewer);
	if (viewer.wm_base) {
		xdg_wm_base_destroy(viewer.wm_base);
	}
	if (viewer.shm) {
		wl_shm_destroy(viewer.shm);
	}
	if (viewer.decoration_manager) {
		zxdg_decoration_manager_v1_destroy(viewer.decoration_manager);
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
