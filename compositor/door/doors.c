/*
 * Where viewers connect (see doors.h): the session's unix socket, TCP,
 * QUIC on UDP, the browsers' door, or stdin and stdout. A door accepts and
 * hands each connection to the handshake (handshake.c), which reads its
 * hello; a door checks nothing a hello says.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "address.h"
#include "doors.h"
#include "handshake.h"
#include "log.h"
#include "quic.h"
#include "server.h"
#include "session.h"
#include "status.h"
#include "tcp.h"
#include "web.h"

static void accept_one(struct rc_server *server, int fd, bool tcp)
{
	struct sockaddr_storage addr;
	socklen_t addr_len = sizeof(addr);
	int conn = accept4(fd, (struct sockaddr *)&addr, &addr_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (conn < 0) {
		if (errno != EAGAIN && errno != EINTR) {
			log_error("accepting a viewer failed: %s", strerror(errno));
		}
		return;
	}
	char peer[64] = "", host[48] = "";
	if (tcp) {
		char port[8];
		if (getnameinfo((struct sockaddr *)&addr, addr_len, host, sizeof(host), port,
			    sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
			snprintf(peer, sizeof(peer), "%s port %s", host, port);
		}
		tcp_tune(conn);
	}
	handshake_start(server, conn, conn, tcp, false, -1, host, peer);
}

static int handle_accept(int fd, uint32_t mask, void *data)
{
	accept_one(data, fd, false);
	return 0;
}

static int handle_accept_tcp(int fd, uint32_t mask, void *data)
{
	accept_one(data, fd, true);
	return 0;
}

/* QUIC connections whose handshake proved they hold the token. Their hello
 * carries it again, as over TCP: one check for every network viewer. */
static int handle_accept_udp(int fd, uint32_t mask, void *data)
{
	struct rc_server *server = data;
	char host[QUIC_HOST_MAX], peer[80];
	int conn, port, slot;
	bool watch;
	while ((conn = quic_accept(server->doors.quic, host, &port, &watch, &slot)) >= 0) {
		snprintf(peer, sizeof(peer), "UDP from %s port %d", host, port);
		handshake_start(server, conn, conn, true, !watch, slot, host, peer);
	}
	return 0;
}

/* WebSockets from browsers: their upgrade proved a token (web.c), as a
 * QUIC handshake does, and their hello carries it again, as over TCP. */
static int handle_accept_web(int fd, uint32_t mask, void *data)
{
	struct rc_server *server = data;
	char host[WEB_HOST_MAX], peer[WEB_HOST_MAX + 32];
	int conn, port;
	while ((conn = web_accept(server->doors.web, host, &port)) >= 0) {
		snprintf(peer, sizeof(peer), "a browser at %s port %d", host, port);
		handshake_start(server, conn, conn, true, true, -1, host, peer);
	}
	return 0;
}

static bool listen_web(struct rc_server *server)
{
	struct rc_doors *doors = &server->doors;
	const struct rc_handshake *hs = &server->handshake;
	const struct rc_options *options = &server->options;
	const char *env = getenv("RCOMP_WEB_DIR");
	const char *root = env && *env ? env : RCOMP_WEB_DIR;
	/* A folder without the page, or without what the build generates
	 * for it, would serve a blank page and say nothing. */
	static const char *const needed[] = {WEB_PAGE_FILES};
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", root, needed[i]);
		if (access(path, R_OK) != 0) {
			log_error("cannot serve the page: %s: %s (%s; in a build the page is "
				  "build/web, installed %s)",
				path, strerror(errno),
				env && *env ? "RCOMP_WEB_DIR names that folder"
					    : "its installed place",
				RCOMP_WEB_DIR);
			return false;
		}
	}
	char err[512];
	errno = 0;
	struct web_config config = {
		.spec = options->web_addr,
		.root = root,
		.cert = options->web_cert,
		.key = options->web_key,
		.token = {hs->token, hs->watch_token},
		.token_len = {hs->token_len, hs->watch_token_len},
	};
	doors->web = web_listen(&config, err, sizeof(err));
	if (!doors->web && errno == EADDRINUSE) {
		log_error("cannot listen for browsers on %s: the port is in use; choose another "
			  "with --listen-web ADDR:PORT",
			options->web_addr);
		server->exit_code = RC_EXIT_IN_USE;
		return false;
	}
	if (!doors->web) {
		log_error("cannot listen for browsers: %s", err);
		return false;
	}
	doors->web_source = wl_event_loop_add_fd(server->loop, web_fd(doors->web),
		WL_EVENT_READABLE, handle_accept_web, server);
	return doors->web_source != NULL;
}

static bool listen_udp(struct rc_server *server, const char *spec)
{
	struct rc_doors *doors = &server->doors;
	const struct rc_handshake *hs = &server->handshake;
	char err[256];
	errno = 0;
	doors->quic = quic_listen(spec, (const uint8_t *)hs->token, hs->token_len,
		(const uint8_t *)hs->watch_token, hs->watch_token_len, err, sizeof(err));
	if (!doors->quic && errno == EADDRINUSE) {
		log_error("cannot listen on UDP %s: the port is in use; choose another with "
			  "--listen-udp ADDR:PORT",
			spec);
		server->exit_code = RC_EXIT_IN_USE;
		return false;
	}
	if (!doors->quic) {
		log_error("cannot listen on UDP %s: %s", spec, err);
		return false;
	}
	doors->udp_source = wl_event_loop_add_fd(server->loop, quic_endpoint_fd(doors->quic),
		WL_EVENT_READABLE, handle_accept_udp, server);
	return doors->udp_source != NULL;
}

static bool socket_in_use(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return false;
	}
	bool used = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;
	close(fd);
	return used;
}

static bool bind_path(struct rc_server *server, const char *path, bool quiet_if_used)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr.sun_path)) {
		log_error("socket path is too long: %s", path);
		return false;
	}
	strcpy(addr.sun_path, path);
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_error("%s exists and is not a socket; choose another --socket", path);
			return false;
		}
		if (socket_in_use(&addr)) {
			if (!quiet_if_used) {
				log_error("%s is in use by another rcomp-run: choose another "
					  "--socket, or attach to that session with rcomp-view "
					  "--socket %s",
					path, path);
			}
			server->exit_code = RC_EXIT_IN_USE;
			return false;
		}
		unlink(path); /* left behind by a session that died */
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		log_error("cannot create a socket: %s", strerror(errno));
		return false;
	}
	/* Bound and listening under a name of its own first, then renamed
	 * into place: whoever sees the path can connect (between bind and
	 * listen a connect is refused). */
	struct sockaddr_un tmp = {.sun_family = AF_UNIX};
	int n = snprintf(tmp.sun_path, sizeof(tmp.sun_path), "%s.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp.sun_path)) {
		tmp = addr; /* no room for a longer name: bound in place */
	}
	unlink(tmp.sun_path);
	mode_t old = umask(0177);
	int ret = bind(fd, (struct sockaddr *)&tmp, sizeof(tmp));
	umask(old);
	if (ret < 0 || chmod(tmp.sun_path, 0600) < 0 || listen(fd, 4) < 0 ||
		(strcmp(tmp.sun_path, path) != 0 && rename(tmp.sun_path, path) < 0)) {
		log_error("cannot listen on %s: %s", path, strerror(errno));
		if (ret == 0) {
			unlink(tmp.sun_path);
		}
		close(fd);
		return false;
	}
	server->doors.fd = fd;
	server->doors.path = strdup(path);
	server->doors.source =
		wl_event_loop_add_fd(server->loop, fd, WL_EVENT_READABLE, handle_accept, server);
	return server->doors.path && server->doors.source != NULL;
}

/* ADDR:PORT, [V6ADDR]:PORT or :PORT (every address). */
static bool listen_tcp(struct rc_server *server)
{
	char host[256];
	const char *spec = server->options.tcp_addr, *port;
	if (!address_split(spec, host, sizeof(host), &port)) {
		log_error("--listen-tcp takes ADDR:PORT, [ADDR]:PORT or :PORT, not %s", spec);
		return false;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res;
	int err = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (err) {
		log_error("--listen-tcp %s: %s", spec, gai_strerror(err));
		return false;
	}
	int fd = -1;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int one = 1;
		if (fd >= 0 &&
			(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
				bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 8) < 0)) {
			err = errno;
			close(fd);
			fd = -1;
			errno = err;
		}
	}
	freeaddrinfo(res);
	if (fd < 0 && errno == EADDRINUSE) {
		log_error("cannot listen on TCP %s: the port is in use; choose another with "
			  "--listen-tcp ADDR:PORT",
			spec);
		server->exit_code = RC_EXIT_IN_USE;
		return false;
	}
	if (fd < 0) {
		log_error("cannot listen on TCP %s: %s", spec, strerror(errno));
		return false;
	}
	server->doors.tcp_fd = fd;
	server->doors.tcp_source = wl_event_loop_add_fd(server->loop, fd, WL_EVENT_READABLE,
		handle_accept_tcp, server);
	return server->doors.tcp_source != NULL;
}

/*
 * --offer-udp (rcomp-run --stdio --persist started by rcomp-view ssh): UDP
 * on a port the system picks, keyed by a fresh token that is written
 * nowhere; viewers that ask over ssh are told it with the port (udp_offer).
 * It listens on the address ssh was reached at (SSH_CONNECTION), which the
 * viewer is told too, or on every address.
 */
static void offer_udp(struct rc_server *server)
{
	struct rc_doors *doors = &server->doors;
	const char *ssh = getenv("SSH_CONNECTION"); /* client port server port */
	char address[WIRE_MAX_ADDRESS + 1] = "", spec[WIRE_MAX_ADDRESS + 8];
	if (ssh && sscanf(ssh, "%*s %*s %64s %*s", address) != 1) {
		address[0] = '\0';
	}
	if (!address_is_ip(address, strlen(address))) {
		address[0] = '\0'; /* the viewer's own name for the host, then */
	}
	address_join(spec, sizeof(spec), address[0] ? address : "0.0.0.0", 0);
	if (!handshake_offer_token(server) || !listen_udp(server, spec)) {
		/* The session goes on over ssh alone. */
		log_warning("no UDP for this session: it stays on ssh");
		return;
	}
	doors->offer = true;
	memcpy(doors->offer_address, address, sizeof(address));
}

bool doors_start(struct rc_server *server)
{
	struct rc_doors *doors = &server->doors;
	const struct rc_options *options = &server->options;
	char path[SESSION_PATH_MAX];
	if (options->stdio) {
		/* The one viewer this session has, over ssh: no socket. */
		int flags = fcntl(STDIN_FILENO, F_GETFL);
		if (flags >= 0) {
			fcntl(STDIN_FILENO, F_SETFL, flags | O_NONBLOCK);
		}
		handshake_start(server, STDIN_FILENO, STDOUT_FILENO, false, false, -1, "", "");
		return true;
	}
	if (options->socket_path) {
		if (!bind_path(server, options->socket_path, false)) {
			return false;
		}
		/* Listed and attachable by name like any other session. */
		char real[PATH_MAX];
		if (realpath(doors->path, real) &&
			session_path(path, sizeof(path), server->record.dir, server->record.name,
				"sock")) {
			unlink(path);
			if (symlink(real, path) < 0) {
				log_error("cannot link %s to %s: %s", path, real, strerror(errno));
			}
		}
	} else if (!session_path(path, sizeof(path), server->record.dir, server->record.name,
			   "sock") ||
		!bind_path(server, path, false)) {
		return false;
	}
	if (options->offer_udp) {
		log_info("session %s: listening on %s", server->record.name, doors->path);
		offer_udp(server);
		return true;
	}
	/* Every port opens before anything is said of any: a port in use
	 * is the one line printed. */
	bool network = options->tcp_addr || options->udp_addr || options->web_addr;
	if (network &&
		(!handshake_make_tokens(server) || (options->tcp_addr && !listen_tcp(server)) ||
			(options->udp_addr && !listen_udp(server, options->udp_addr)) ||
			(options->web_addr && !listen_web(server)) ||
			!handshake_write_tokens(server))) {
		return false;
	}
	log_info("session %s: listening on %s", server->record.name, doors->path);
	if (options->tcp_addr) {
		log_info("listening on TCP %s", options->tcp_addr);
		log_warning("TCP streams are not encrypted: anyone on the network path can see "
			    "the windows and the keys typed. Use ssh (rcomp-view ssh HOST -- APP) "
			    "or UDP (--listen-udp: QUIC, encrypted) for an encrypted link.");
	}
	if (options->udp_addr) {
		log_info("listening on UDP %s (QUIC, port %d)", options->udp_addr,
			quic_local_port(doors->quic));
	}
	if (options->web_addr) {
		/* The whole address, as Jupyter prints its: the token is the
		 * user's already (this is their terminal or their log, 0600),
		 * and a browser is opened with it. With --token-file the user
		 * has it, and it is not repeated. */
		const struct rc_handshake *hs = &server->handshake;
		bool own = !options->token_file;
		log_info("listening for browsers: open %s://%s/#token=%.*s",
			options->web_cert ? "https" : "http", options->web_addr,
			own ? (int)hs->token_len : 5, own ? hs->token : "TOKEN");
	}
	return true;
}

void doors_init(struct rc_server *server)
{
	server->doors.fd = server->doors.tcp_fd = -1;
	handshake_init(server);
}

void doors_finish(struct rc_server *server)
{
	struct rc_doors *doors = &server->doors;
	if (doors->source) {
		wl_event_source_remove(doors->source);
		doors->source = NULL;
	}
	if (doors->fd >= 0) {
		close(doors->fd);
		doors->fd = -1;
	}
	if (doors->path) {
		unlink(doors->path);
		free(doors->path);
		doors->path = NULL;
	}
	if (doors->tcp_source) {
		wl_event_source_remove(doors->tcp_source);
		doors->tcp_source = NULL;
	}
	if (doors->tcp_fd >= 0) {
		close(doors->tcp_fd);
		doors->tcp_fd = -1;
	}
	if (doors->udp_source) {
		wl_event_source_remove(doors->udp_source);
		doors->udp_source = NULL;
	}
	if (doors->offer_timer) {
		wl_event_source_remove(doors->offer_timer);
		doors->offer_timer = NULL;
	}
	if (doors->web_source) {
		wl_event_source_remove(doors->web_source);
		doors->web_source = NULL;
	}
	web_close(doors->web);
	doors->web = NULL;
	/* Goodbyes on their way over QUIC arrive before the endpoint goes
	 * (quic_close waits a second at most). */
	quic_close(doors->quic);
	doors->quic = NULL;
	handshake_finish(server);
}
