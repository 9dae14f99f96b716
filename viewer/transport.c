/*
 * How rcomp-view reaches rcomp-run, five ways: a unix socket (a session on
 * this host, by name or path), TCP with a token, ssh running rcomp-run on
 * its stdin and stdout, stdin/stdout themselves, or rcomp-run started here
 * (--local). A broken link is tried again with backoff where the way allows:
 * the same socket, the same address, or ssh with rcomp-run --attach NAME.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "address.h"
#include "connection.h"
#include "log.h"
#include "monotonic.h"
#include "quic.h"
#include "session.h"
#include "status.h"
#include "tcp.h"
#include "transport.h"

#define RETRY_FIRST_MS 250
#define RETRY_MAX_MS 8000
#define UDP_HANDSHAKE_MS 5000 /* then the link counts as down, and is retried */

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
	if (!address_split(spec, host, sizeof(host), &port) || !host[0]) {
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
		tcp_tune(fd);
	}
	return fd;
}

/* A QUIC connection to HOST:PORT: its stream at once, the handshake under
 * way in the endpoint's thread (what is written waits for it); a failed
 * handshake ends the stream, and quic_failure says why. */
static int connect_udp(struct rv_viewer *viewer, bool quiet)
{
	struct rv_connection *conn = &viewer->connection;
	char err[256];
	conn->quic_failure[0] = '\0';
	conn->key_refused = false;
	int fd = quic_connect(viewer->options.target, (const uint8_t *)viewer->options.token,
		viewer->options.token_len, UDP_HANDSHAKE_MS, &conn->quic, err, sizeof(err));
	if (fd < 0) {
		if (quiet) {
			log_debug("cannot connect over UDP to %s: %s", viewer->options.target, err);
		} else {
			log_error("cannot connect over UDP to %s: %s", viewer->options.target, err);
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
	viewer->connection.child = pid;
	return sv[0];
}

/* The rcomp-run command line: `bin --stdio [--persist] options -- APP` for a
 * new session, `bin --attach [SESSION]` to reattach. NULL-terminated; NULL
 * when out of memory. */
static char **run_argv(struct rv_viewer *viewer, const char *bin, bool persist)
{
	int nargs = 0;
	const struct rv_options *options = &viewer->options;
	struct rv_connection *conn = &viewer->connection;
	while (options->app && options->app[nargs]) {
		nargs++;
	}
	char **argv = calloc((size_t)nargs + 12, sizeof(char *));
	if (!argv) {
		return NULL;
	}
	int i = 0;
	argv[i++] = (char *)bin;
	if (options->verbose) {
		argv[i++] = "-v";
	}
	if (!options->app) {
		argv[i++] = "--attach";
		const char *name = conn->ever_welcomed ? conn->session_name : options->attach_name;
		if (name) {
			argv[i++] = (char *)name;
		}
		return argv;
	}
	argv[i++] = "--stdio";
	if (persist) {
		argv[i++] = "--persist";
		if (options->ssh_udp && quic_supported()) {
			argv[i++] = "--offer-udp";
		}
	}
	if (options->compress) {
		argv[i++] = "--compress";
		argv[i++] = (char *)options->compress;
	}
	if (options->fps) {
		argv[i++] = "--fps";
		argv[i++] = (char *)options->fps;
	}
	argv[i++] = "--";
	for (int j = 0; j < nargs; j++) {
		argv[i++] = options->app[j];
	}
	return argv;
}

static int start_local(struct rv_viewer *viewer)
{
	char *path = viewer->connection.local_run;
	find_rcomp_run(path, sizeof(viewer->connection.local_run));
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

int transport_ssh_command(struct rv_viewer *viewer)
{
	const struct rv_options *options = &viewer->options;
	const char *host = options->ssh_args[options->nssh - 1];
	struct buffer command;
	buffer_init(&command, 1 << 16);
	bool ok = shell_quote(&command, options->remote_bin) &&
		shell_quote(&command, options->remote_command) &&
		(!options->attach_name || shell_quote(&command, options->attach_name)) &&
		buffer_append(&command, "", 1);
	char **argv = calloc((size_t)options->nssh + 4, sizeof(char *));
	int status = RC_EXIT_FAILURE;
	if (ok && argv) {
		int i = 0;
		argv[i++] = "ssh";
		argv[i++] = "-T";
		for (int j = 0; j < options->nssh; j++) {
			argv[i++] = options->ssh_args[j];
		}
		argv[i++] = (char *)buffer_head(&command);
		pid_t pid = fork();
		if (pid == 0) {
			execvp(argv[0], argv);
			fprintf(stderr, "rcomp-view: cannot run ssh: %s\n", strerror(errno));
			_exit(127);
		}
		int wstatus;
		if (pid > 0 && waitpid(pid, &wstatus, 0) == pid && WIFEXITED(wstatus)) {
			status = WEXITSTATUS(wstatus);
		}
	}
	/* rcomp-run --stop or --list said what happened on its stdout or stderr; what
	 * ssh or the shell say of their own failures needs our words. */
	if (status == 255) {
		log_error("ssh could not reach or log in to %s (its own words are above): check "
			  "that ssh %s works",
			host, host);
		status = RC_EXIT_SSH;
	} else if (status == 127 || status == 126) {
		log_error("%s cannot be run on %s: install rcomp there, or give its path with "
			  "--remote-bin PATH",
			options->remote_bin, host);
		status = RC_EXIT_NO_REMOTE;
	}
	free(argv);
	buffer_finish(&command);
	return status;
}

/* rcomp-view ssh [ssh options] HOST -- APP: rcomp-run --stdio --persist on
 * HOST over ssh's own stdin and stdout, so no port is opened anywhere. Once
 * the session has a name, reconnecting runs rcomp-run --attach NAME. */
static int start_ssh(struct rv_viewer *viewer)
{
	if (viewer->connection.ever_welcomed) {
		viewer->options.app = NULL; /* from now on: reattach to this session */
	}
	char **remote = run_argv(viewer, viewer->options.remote_bin, true);
	struct buffer command;
	buffer_init(&command, 1 << 20);
	bool ok = remote != NULL;
	for (int i = 0; ok && remote[i]; i++) {
		ok = shell_quote(&command, remote[i]);
	}
	ok = ok && buffer_append(&command, "", 1);
	char **argv = calloc((size_t)viewer->options.nssh + 4, sizeof(char *));
	int fd = -1;
	if (ok && argv) {
		int i = 0;
		argv[i++] = "ssh";
		argv[i++] = "-T"; /* no terminal: the stream is binary */
		for (int j = 0; j < viewer->options.nssh; j++) {
			argv[i++] = viewer->options.ssh_args[j];
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
 * detached one; when reconnecting, the same one again. */
static bool find_local_session(struct rv_viewer *viewer, char *path, size_t size)
{
	static struct session_info infos[256];
	char err[256];
	int n = session_list(infos, 256);
	const char *name = viewer->connection.ever_welcomed ? viewer->connection.session_name
							    : viewer->options.attach_name;
	int i = n >= 0 ? session_choose(infos, n, name, "--attach", err, sizeof(err))
		       : -RC_EXIT_FAILURE;
	if (i < 0) {
		if (!viewer->connection.ever_welcomed) {
			log_error("%s", n >= 0 ? err : "cannot read the session directory");
			viewer->exit_code = -i;
		}
		return false;
	}
	return session_path(path, size, infos[i].dir, infos[i].name, "sock");
}

/* Opens the link to rcomp-run. Returns false if it cannot be started now. */
bool transport_open(struct rv_viewer *viewer)
{
	struct rv_connection *conn = &viewer->connection;
	bool retry = conn->ever_welcomed || conn->retry_ms > 0;
	int fd = -1;
	switch (viewer->options.transport) {
	case RV_SOCKET: {
		char path[PATH_MAX];
		const char *target = viewer->options.target;
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
		fd = connect_tcp(viewer->options.target, retry);
		break;
	case RV_UDP:
		fd = connect_udp(viewer, retry);
		break;
	case RV_SSH:
		fd = start_ssh(viewer);
		break;
	case RV_LOCAL:
		fd = start_local(viewer);
		break;
	case RV_STDIO:
		connection_open(viewer, STDIN_FILENO, STDOUT_FILENO);
		return true;
	}
	if (fd < 0) {
		return false;
	}
	connection_open(viewer, fd, fd);
	conn->connecting = viewer->options.transport == RV_TCP;
	return true;
}

void transport_close(struct rv_viewer *viewer)
{
	struct rv_connection *conn = &viewer->connection;
	connection_close(viewer);
	if (conn->quic) {
		quic_failure(conn->quic, conn->quic_failure, sizeof(conn->quic_failure));
		conn->key_refused = quic_key_refused(conn->quic);
		quic_close(conn->quic);
		conn->quic = NULL;
	}
	if (conn->child > 0) {
		/* ssh or rcomp-run: our end is closed, and a broken link may
		 * leave ssh waiting for its timeout. A link that ended before
		 * any welcome is ssh failing, or the remote command: let it end
		 * on its own, so that its status tells which. */
		int status = 0;
		bool reaped = false;
		if (viewer->options.transport == RV_SSH && !conn->ever_welcomed) {
			for (int i = 0; i < 100 && !reaped; i++) {
				reaped = waitpid(conn->child, &status, WNOHANG) == conn->child;
				if (!reaped) {
					usleep(20000);
				}
			}
		}
		if (!reaped && viewer->options.transport == RV_SSH) {
			kill(conn->child, SIGTERM);
		}
		if (!reaped) {
			waitpid(conn->child, &status, 0);
		}
		conn->child_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		conn->child = 0;
	}
}

int transport_explain_failure(struct rv_viewer *viewer, const char *why)
{
	const struct rv_options *options = &viewer->options;
	int status = viewer->connection.child_status;
	bool ssh = options->transport == RV_SSH;
	const char *host = ssh ? options->ssh_args[options->nssh - 1] : "this host";
	if (ssh && status == 255) {
		log_error("ssh could not reach or log in to %s (its own words are above): check "
			  "that ssh %s works",
			host, host);
		return RC_EXIT_SSH;
	}
	if (ssh && (status == 127 || status == 126)) {
		log_error("%s cannot be run on %s: install rcomp there, or give its path with "
			  "--remote-bin PATH",
			options->remote_bin, host);
		return RC_EXIT_NO_REMOTE;
	}
	if (options->transport == RV_LOCAL && (status == 127 || status == 126)) {
		log_error("%s cannot be run: install rcomp, put rcomp-run beside rcomp-view or "
			  "on PATH, or name it with RCOMP_RUN",
			viewer->connection.local_run);
		return RC_EXIT_NO_REMOTE;
	}
	const struct rv_connection *conn = &viewer->connection;
	if (options->transport == RV_UDP && conn->key_refused) {
		log_error("the session refused the token (its QUIC key does not match): give the "
			  "one in SESSION.token in the remote session directory, with --token-file "
			  "FILE or $RCOMP_TOKEN");
		return RC_EXIT_TOKEN;
	}
	if (options->transport == RV_UDP && !conn->ever_welcomed) {
		log_error("no answer from %s over UDP (%s): is rcomp-run --listen-udp running "
			  "there, on that port, and does the network let UDP through?",
			options->target, why);
		return RC_EXIT_NO_SESSION;
	}
	if (options->transport == RV_TCP && !conn->ever_welcomed) {
		log_error("cannot reach %s over TCP (%s): is rcomp-run --listen-tcp running there, "
			  "on that port?",
			options->target, why);
		return RC_EXIT_NO_SESSION;
	}
	bool child = ssh || options->transport == RV_LOCAL;
	if (child && !viewer->connection.ever_welcomed && status >= RC_EXIT_USAGE &&
		status <= RC_EXIT_VERSION) {
		/* rcomp-run refused to start, and said why on its stderr,
		 * which is ours: one line is enough, and its status is ours. */
		return status;
	}
	if (child && !viewer->connection.ever_welcomed && status != -1) {
		log_error("rcomp-run%s%s ended with status %d before the session started (its own "
			  "words, if any, are above)",
			ssh ? " on " : "", ssh ? host : "", status);
		return RC_EXIT_FAILURE;
	}
	log_error("the connection to the server was lost: %s", why);
	return RC_EXIT_FAILURE;
}

bool transport_can_retry(const struct rv_viewer *viewer)
{
	/* Only a session that was attached: a link that never got there
	 * has a reason, which waiting would not change. One whose key the
	 * server refuses now is another session. */
	enum rv_transport transport = viewer->options.transport;
	const struct rv_connection *conn = &viewer->connection;
	return conn->ever_welcomed && !conn->key_refused &&
		(transport == RV_SOCKET || transport == RV_TCP || transport == RV_UDP ||
			transport == RV_SSH);
}

void transport_schedule_retry(struct rv_viewer *viewer)
{
	struct rv_connection *conn = &viewer->connection;
	if (conn->ssh_introduced && viewer->options.transport == RV_UDP) {
		/* UDP may be what broke (a network that blocks it): ssh
		 * brings the session back, and offers UDP again. */
		viewer->options.transport = RV_SSH;
		conn->udp_tried = false;
		log_info("the UDP link is lost: back to ssh, which offers UDP again");
	}
	conn->retry_ms = conn->retry_ms ? conn->retry_ms * 2 : RETRY_FIRST_MS;
	if (conn->retry_ms > RETRY_MAX_MS) {
		conn->retry_ms = RETRY_MAX_MS;
	}
	conn->retry_at_us = monotonic_usec() + (uint64_t)conn->retry_ms * 1000;
	log_info("reconnecting in %.2f s", conn->retry_ms / 1000.0);
}

int transport_retry_timeout(const struct rv_viewer *viewer)
{
	const struct rv_connection *conn = &viewer->connection;
	if (!conn->retry_at_us) {
		return -1;
	}
	uint64_t now = monotonic_usec();
	return now >= conn->retry_at_us ? 0 : (int)((conn->retry_at_us - now) / 1000) + 1;
}

bool transport_retry(struct rv_viewer *viewer)
{
	struct rv_connection *conn = &viewer->connection;
	if (!conn->retry_at_us || monotonic_usec() < conn->retry_at_us) {
		return false;
	}
	conn->retry_at_us = 0;
	if (transport_open(viewer)) {
		return true;
	}
	if (viewer->running) {
		transport_schedule_retry(viewer);
	}
	return false;
}

bool transport_finish_connect(struct rv_viewer *viewer)
{
	int err = 0;
	socklen_t len = sizeof(err);
	viewer->connection.connecting = false;
	if (getsockopt(viewer->connection.channel.in_fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
		return false;
	}
	errno = err;
	return err == 0;
}

void transport_keep_old(struct rv_viewer *viewer)
{
	struct rv_connection *conn = &viewer->connection;
	transport_drop_old(viewer);
	conn->old_fd = conn->channel.in_fd;
	conn->old_child = conn->child;
	if (conn->channel.out_fd != conn->channel.in_fd && conn->channel.out_fd >= 0) {
		close(conn->channel.out_fd);
	}
	conn->channel.in_fd = conn->channel.out_fd = -1;
	conn->child = 0;
}

void transport_drop_old(struct rv_viewer *viewer)
{
	struct rv_connection *conn = &viewer->connection;
	if (conn->old_fd >= 0) {
		close(conn->old_fd);
		conn->old_fd = -1;
	}
	if (conn->old_child > 0) {
		kill(conn->old_child, SIGTERM);
		waitpid(conn->old_child, NULL, 0);
		conn->old_child = 0;
	}
}

/* ---- ssh introductions ---- */

bool transport_wants_udp_offer(const struct rv_viewer *viewer)
{
	return viewer->options.transport == RV_SSH && viewer->options.ssh_udp &&
		!viewer->connection.udp_tried && quic_supported();
}

void transport_udp_offer(struct rv_viewer *viewer, const struct wire_udp_offer *offer)
{
	struct rv_connection *conn = &viewer->connection;
	const struct rv_options *options = &viewer->options;
	if (!transport_wants_udp_offer(viewer) || conn->probe) {
		return;
	}
	conn->udp_tried = true;
	/* The address the host was reached at over ssh, or else the name ssh
	 * was given (less its user@). */
	char host[WIRE_MAX_ADDRESS + 1];
	if (address_is_ip(offer->address, offer->address_len)) {
		memcpy(host, offer->address, offer->address_len);
		host[offer->address_len] = '\0';
	} else {
		const char *name = options->ssh_args[options->nssh - 1];
		const char *at = strrchr(name, '@');
		snprintf(host, sizeof(host), "%s", at ? at + 1 : name);
	}
	address_join(conn->udp_target, sizeof(conn->udp_target), host, offer->port);
	memcpy(conn->udp_key, offer->key, offer->key_len);
	conn->udp_key_len = offer->key_len;
	char err[256];
	int fd = quic_connect(conn->udp_target, (const uint8_t *)conn->udp_key, conn->udp_key_len,
		UDP_HANDSHAKE_MS, &conn->probe, err, sizeof(err));
	if (fd < 0) {
		conn->probe = NULL;
		log_warning("UDP to %s: %s; the session stays on ssh", conn->udp_target, err);
		return;
	}
	conn->probe_fd = fd;
	log_info("the host offers UDP at %s: trying it", conn->udp_target);
}

void transport_probe_poll(struct rv_viewer *viewer, struct pollfd *fds)
{
	struct rv_connection *conn = &viewer->connection;
	fds[0] = (struct pollfd){.fd = conn->probe ? quic_endpoint_fd(conn->probe) : -1,
		.events = POLLIN};
	fds[1] = (struct pollfd){.fd = conn->probe ? conn->probe_fd : -1, .events = POLLIN};
}

bool transport_probe_ready(struct rv_viewer *viewer, const struct pollfd *fds)
{
	struct rv_connection *conn = &viewer->connection;
	if (!conn->probe) {
		return false;
	}
	if (fds[0].revents & POLLIN) {
		return true;
	}
	if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
		/* The stream ended before the handshake did. */
		char why[256];
		quic_failure(conn->probe, why, sizeof(why));
		log_warning("UDP to %s is blocked (%s): the session stays on ssh", conn->udp_target,
			why[0] ? why : "no answer");
		close(conn->probe_fd);
		quic_close(conn->probe);
		conn->probe = NULL;
	}
	return false;
}
