/*
 * Where viewers connect: the session's unix socket and, with --listen-tcp,
 * TCP with a token. A new connection waits here until its hello is read
 * and, on TCP, its token checked; only then does it reach the session and
 * take it over.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "address.h"
#include "app.h"
#include "channel.h"
#include "dispatch.h"
#include "listen.h"
#include "log.h"
#include "monotonic.h"
#include "quic.h"
#include "status.h"
#include "tcp.h"
#include "token.h"
#include "web.h"

/* A connection that has not finished its hello yet. It reads the hello
 * exactly, so whatever follows stays in the socket for the connection. */
struct rc_pending {
	struct rc_server *server;
	struct wl_list link; // rc_listen::pending
	int fd;
	bool tcp; /* from the network: TCP or UDP */
	/* UDP: the handshake proved the session's key (not the watch key),
	 * so no connection that did not may take its place. */
	bool keyed;
	int move_slot; /* UDP: the viewer slot whose move key it proved; -1: none */
	char host[WEB_HOST_MAX]; /* from the network: the address it comes from */
	char peer[80];
	struct wl_event_source *source, *timeout;
	size_t len;
	uint8_t data[WIRE_HEADER_SIZE + 20 + WIRE_MAX_TOKEN];
};

/* The shortest token --token-file may give: 24 characters, 96 bits even as
 * hex, which no guesser reaches at the rate the doors answer. */
#define MIN_TOKEN 24

static bool read_token_file(struct rc_listen *listen, const char *path)
{
	if (!token_read(path, listen->token, &listen->token_len)) {
		return false;
	}
	if (listen->token_len < MIN_TOKEN) {
		log_error("the token in %s is shorter than %d characters: anyone who reaches the "
			  "port could guess it; make one with: openssl rand -hex 16 > %s",
			path, MIN_TOKEN, path);
		return false;
	}
	return true;
}

static bool random_token(struct rc_listen *listen)
{
	return token_random(listen->token, &listen->token_len, "");
}

/* token, written to DIR/NAME.SUFFIX with mode 0600. */
static bool write_token(struct rc_server *server, const char *token, const char *suffix,
	const char *what)
{
	char path[SESSION_PATH_MAX];
	if (!session_path(path, sizeof(path), server->record.dir, server->record.name, suffix)) {
		return false;
	}
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		log_error("cannot write the token file %s: %s", path, strerror(errno));
		return false;
	}
	char line[WIRE_MAX_TOKEN + 2];
	int len = snprintf(line, sizeof(line), "%s\n", token);
	bool ok = write(fd, line, (size_t)len) == len;
	close(fd);
	if (ok) {
		log_info("%s %s (mode 0600)", what, path);
	}
	return ok;
}

/* The session's token, in memory: a new random one, or --token-file's. */
static bool make_token(struct rc_server *server)
{
	struct rc_listen *listen = &server->listen;
	const char *file = server->options.token_file;
	return file ? read_token_file(listen, file) : random_token(listen);
}

/* --watch-token: a second one; its prefix tells a QUIC client to offer it
 * under the watch identity. */
static bool make_watch_token(struct rc_server *server)
{
	struct rc_listen *listen = &server->listen;
	return token_random(listen->watch_token, &listen->watch_token_len, QUIC_WATCH_PREFIX);
}

/* The tokens made here, to DIR/NAME.token and DIR/NAME.watch-token, once
 * the ports they open are open. */
static bool write_tokens(struct rc_server *server)
{
	struct rc_listen *listen = &server->listen;
	return (server->options.token_file ||
		       write_token(server, listen->token, "token",
			       "viewers on TCP or UDP must give the token in")) &&
		(!listen->watch_token_len ||
			write_token(server, listen->watch_token, "watch-token",
				"viewers that give the token in this file may watch only:"));
}

static bool token_ok(const char *want, size_t want_len, const char *token, size_t len)
{
	/* Constant time in the token's content. */
	uint8_t diff = len != want_len;
	for (size_t i = 0; i < want_len; i++) {
		diff |= (uint8_t)(want[i] ^ (i < len ? token[i] : 0));
	}
	return want_len > 0 && diff == 0;
}

/* At most this many connections may be in the handshake at once on each
 * of the unix socket and the network (TCP and UDP), each for at most
 * PENDING_TIMEOUT_MS: idle or hostile connections cost a bounded few
 * kilobytes and never disturb the attached viewer. The network has its own
 * share, so that nobody who can reach a port can keep the owner off the
 * unix socket. There one address holds only a few, by its real address
 * (the QUIC door gives it), and a full share makes room by dropping its
 * oldest connection, never one whose QUIC handshake proved the session's
 * key for one that did not: a flood from many addresses, or watchers that
 * never say hello, delay the owner but cannot keep it out. */
#define MAX_PENDING 16
#define MAX_PENDING_PER_HOST 4
#define PENDING_TIMEOUT_MS 10000

/* Refused connections are logged in a burst, then one a second with a
 * count of those not logged, so a flood cannot fill the log. */
static void log_refusal(struct rc_server *server, const char *peer, const char *why)
{
	unsigned skipped;
	if (!log_limit_pass(&server->listen.refusals, monotonic_usec(), &skipped)) {
		return;
	}
	if (skipped) {
		log_error("refused a viewer%s%s: %s (%u more refused and not logged)",
			peer[0] ? " from " : "", peer, why, skipped);
	} else {
		log_error("refused a viewer%s%s: %s", peer[0] ? " from " : "", peer, why);
	}
}

static void pending_destroy(struct rc_pending *pending, bool close_fd)
{
	struct rc_server *server = pending->server;
	wl_list_remove(&pending->link);
	server->listen.npending[pending->tcp]--;
	wl_event_source_remove(pending->source);
	wl_event_source_remove(pending->timeout);
	if (close_fd) {
		close(pending->fd);
	}
	free(pending);
}

/* A goodbye in one write (a small write to a fresh socket fits its buffer). */
static void write_goodbye(int fd, enum wire_goodbye_reason reason, int32_t status, const char *text)
{
	struct wire_msg msg = {
		.type = WIRE_GOODBYE,
		.goodbye = {.reason = reason,
			.status = status,
			.text = text,
			.text_len = (uint32_t)strnlen(text, WIRE_MAX_TEXT)},
	};
	channel_write_once(fd, &msg);
}

/* Says why on the pending connection, and closes it. */
static void say_bye(struct rc_pending *pending, enum wire_goodbye_reason reason, int32_t status,
	const char *text)
{
	write_goodbye(pending->fd, reason, status, text);
	/* Unread bytes would turn our close into a reset that can overtake the
	 * goodbye: drain what has arrived (bounded) first. */
	uint8_t sink[4096];
	for (int i = 0; i < 16 && recv(pending->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; i++) {
	}
	shutdown(pending->fd, SHUT_WR);
	pending_destroy(pending, true);
}

static void refuse(struct rc_pending *pending, enum wire_goodbye_reason reason, const char *text)
{
	log_refusal(pending->server, pending->peer, text);
	say_bye(pending, reason, 0, text);
}

/* A valid hello arrived: the connection is the session's now. */
static void pending_promote(struct rc_pending *pending, const struct wire_msg *hello,
	bool view_only, struct rc_viewer *replaces)
{
	struct rc_server *server = pending->server;
	int fd = pending->fd;
	char peer[sizeof(pending->peer)];
	memcpy(peer, pending->peer, sizeof(peer));
	pending_destroy(pending, false);
	dispatch_attach(server, fd, peer, &hello->hello, view_only, replaces);
}

/* rcomp-run --stop: the session ends, and the one that asked is told when
 * it has; a watcher may not ask. */
static void stop(struct rc_pending *pending, bool watch)
{
	struct rc_listen *listen = &pending->server->listen;
	if (watch) {
		refuse(pending, WIRE_BYE_UNAUTHORIZED,
			"a viewer that may only watch cannot stop "
			"the session");
		return;
	}
	if (listen->nstoppers == sizeof(listen->stoppers) / sizeof(listen->stoppers[0])) {
		refuse(pending, WIRE_BYE_BUSY, "the session is stopping already");
		return;
	}
	struct rc_server *server = pending->server;
	listen->stoppers[listen->nstoppers++] = pending->fd;
	pending_destroy(pending, false);
	app_stop(server);
}

/* The viewer whose move key a connection proved in its QUIC handshake and
 * gave again in its hello; NULL if none. */
static struct rc_viewer *mover(struct rc_pending *pending, const struct wire_hello *hello)
{
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &pending->server->viewers, link)
	{
		if (viewer->slot == pending->move_slot &&
			token_ok(viewer->move_key, viewer->move_key_len, hello->token,
				hello->token_len)) {
			return viewer;
		}
	}
	return NULL;
}

static int handle_pending_readable(int fd, uint32_t mask, void *data)
{
	struct rc_pending *pending = data;
	struct rc_server *server = pending->server;
	/* Read exactly what the hello still needs: a header, then its body. */
	struct wire_msg msg;
	for (;;) {
		size_t want = WIRE_HEADER_SIZE, used = 0;
		if (pending->len >= WIRE_HEADER_SIZE) {
			char err[256];
			enum wire_status status = wire_decode(WIRE_FROM_VIEWER, pending->data,
				pending->len, &msg, &used, err, sizeof(err));
			if (status == WIRE_INVALID) {
				refuse(pending, WIRE_BYE_PROTOCOL_ERROR, err);
				return 0;
			}
			if (status == WIRE_OK) {
				break;
			}
			const uint8_t *h = pending->data;
			uint16_t type = (uint16_t)(h[0] | h[1] << 8);
			uint32_t body = (uint32_t)h[4] | (uint32_t)h[5] << 8 |
				(uint32_t)h[6] << 16 | (uint32_t)h[7] << 24;
			want = WIRE_HEADER_SIZE + (size_t)body;
			if (type != WIRE_HELLO || want > sizeof(pending->data)) {
				refuse(pending, WIRE_BYE_PROTOCOL_ERROR,
					"the first message must be hello");
				return 0;
			}
		}
		ssize_t n = read(fd, pending->data + pending->len, want - pending->len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			return 0;
		}
		if (n <= 0) {
			log_debug("a connection closed before its hello");
			pending_destroy(pending, true);
			return 0;
		}
		pending->len += (size_t)n;
	}
	if (msg.type != WIRE_HELLO) {
		refuse(pending, WIRE_BYE_PROTOCOL_ERROR, "the first message must be hello");
		return 0;
	}
	/* On the network the token says who may do what: the session's admits
	 * a full viewer, the watch token (--watch-token) one that watches. */
	const struct rc_listen *listen = &server->listen;
	if (pending->move_slot >= 0) {
		struct rc_viewer *viewer = mover(pending, &msg.hello);
		if (!viewer) {
			refuse(pending, WIRE_BYE_UNAUTHORIZED, "the viewer it comes for is gone");
			return 0;
		}
		pending_promote(pending, &msg, false, viewer);
		return 0;
	}
	bool full_token =
		token_ok(listen->token, listen->token_len, msg.hello.token, msg.hello.token_len);
	if (pending->tcp && !full_token &&
		!token_ok(listen->watch_token, listen->watch_token_len, msg.hello.token,
			msg.hello.token_len)) {
		refuse(pending, WIRE_BYE_UNAUTHORIZED,
			msg.hello.token_len ? "wrong token" : "no token given");
		return 0;
	}
	if (msg.hello.major != WIRE_VERSION_MAJOR) {
		/* Before it takes anything over: the attached viewer stays. */
		char text[256];
		snprintf(text, sizeof(text),
			"the viewer speaks wire protocol %u, this rcomp-run %s speaks %u: install "
			"the "
			"same rcomp version on both sides (rcomp-run --version, rcomp-view "
			"--version)",
			msg.hello.major, RCOMP_VERSION, WIRE_VERSION_MAJOR);
		refuse(pending, WIRE_BYE_VERSION, text);
		return 0;
	}
	bool watch = pending->tcp && !full_token;
	if (msg.hello.flags & WIRE_HELLO_STOP) {
		stop(pending, watch);
		return 0;
	}
	if ((watch || (msg.hello.flags & (WIRE_HELLO_SHARE | WIRE_HELLO_VIEW_ONLY))) &&
		server->nviewers >= RC_MAX_VIEWERS) {
		/* Before anything is taken over: the viewers there stay. */
		refuse(pending, WIRE_BYE_BUSY, "this session has as many viewers as it takes");
		return 0;
	}
	pending_promote(pending, &msg, watch, NULL);
	return 0;
}

static int handle_pending_timeout(void *data)
{
	struct rc_pending *pending = data;
	refuse(pending, WIRE_BYE_PROTOCOL_ERROR, "no hello within 10 seconds");
	return 0;
}

/* The oldest network connection waiting for its hello, from host (NULL:
 * any), that one which proved the key or not (keyed) may replace. */
static struct rc_pending *oldest(struct rc_listen *listen, const char *host, bool keyed)
{
	struct rc_pending *pending, *found = NULL;
	wl_list_for_each(pending, &listen->pending, link)
	{
		if (pending->tcp && (!host || strcmp(pending->host, host) == 0) &&
			(keyed || !pending->keyed)) {
			found = pending; /* the list is newest first */
		}
	}
	return found;
}

/* Whether a new connection from host may wait for its hello; on the
 * network, one of its address's, or a full share, drops its oldest to let
 * it. */
static bool make_room(struct rc_server *server, bool tcp, bool keyed, const char *host,
	const char *peer)
{
	struct rc_listen *listen = &server->listen;
	if (!tcp) {
		if (listen->npending[0] < MAX_PENDING) {
			return true;
		}
		log_refusal(server, peer, "too many connections in the handshake");
		return false;
	}
	int from_host = 0;
	struct rc_pending *pending;
	wl_list_for_each(pending, &listen->pending, link)
	{
		from_host += pending->tcp && strcmp(pending->host, host) == 0;
	}
	const char *why = "too many connections from one address in the handshake";
	struct rc_pending *drop = NULL;
	if (from_host >= MAX_PENDING_PER_HOST) {
		drop = oldest(listen, host, keyed);
	} else if (listen->npending[1] >= MAX_PENDING) {
		drop = oldest(listen, NULL, keyed);
		why = "too many connections in the handshake";
	} else {
		return true;
	}
	if (!drop) {
		log_refusal(server, peer, why);
		return false;
	}
	refuse(drop, WIRE_BYE_BUSY, why);
	return true;
}

/* A new connection: it waits for its hello. tcp: from the network (TCP or
 * UDP), so its hello must carry the token. */
static void pending_start(struct rc_server *server, int conn, bool tcp, bool keyed, int move_slot,
	const char *host, const char *peer)
{
	if (!make_room(server, tcp, keyed, host, peer)) {
		close(conn);
		return;
	}
	struct rc_pending *pending = calloc(1, sizeof(*pending));
	if (!pending) {
		log_error("out of memory accepting a connection");
		close(conn);
		return;
	}
	pending->server = server;
	pending->fd = conn;
	pending->tcp = tcp;
	pending->keyed = keyed;
	pending->move_slot = move_slot;
	snprintf(pending->host, sizeof(pending->host), "%s", host);
	snprintf(pending->peer, sizeof(pending->peer), "%s", peer);
	pending->source = wl_event_loop_add_fd(server->loop, conn, WL_EVENT_READABLE,
		handle_pending_readable, pending);
	pending->timeout = wl_event_loop_add_timer(server->loop, handle_pending_timeout, pending);
	if (!pending->source || !pending->timeout) {
		log_error("cannot watch a new connection");
		if (pending->source) {
			wl_event_source_remove(pending->source);
		}
		if (pending->timeout) {
			wl_event_source_remove(pending->timeout);
		}
		close(conn);
		free(pending);
		return;
	}
	wl_list_insert(&server->listen.pending, &pending->link);
	server->listen.npending[tcp]++;
	wl_event_source_timer_update(pending->timeout, PENDING_TIMEOUT_MS);
}

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
	pending_start(server, conn, tcp, false, -1, host, peer);
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
	while ((conn = quic_accept(server->listen.quic, host, &port, &watch, &slot)) >= 0) {
		snprintf(peer, sizeof(peer), "UDP from %s port %d", host, port);
		pending_start(server, conn, true, !watch, slot, host, peer);
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
	while ((conn = web_accept(server->listen.web, host, &port)) >= 0) {
		snprintf(peer, sizeof(peer), "a browser at %s port %d", host, port);
		pending_start(server, conn, true, true, -1, host, peer);
	}
	return 0;
}

static bool listen_web(struct rc_server *server)
{
	struct rc_listen *listen = &server->listen;
	const struct rc_options *options = &server->options;
	const char *root = getenv("RCOMP_WEB_DIR");
	char err[512];
	errno = 0;
	struct web_config config = {
		.spec = options->web_addr,
		.root = root && *root ? root : RCOMP_WEB_DIR,
		.cert = options->web_cert,
		.key = options->web_key,
		.token = {listen->token, listen->watch_token},
		.token_len = {listen->token_len, listen->watch_token_len},
	};
	listen->web = web_listen(&config, err, sizeof(err));
	if (!listen->web && errno == EADDRINUSE) {
		log_error("cannot listen for browsers on %s: the port is in use; choose another "
			  "with --listen-web ADDR:PORT",
			options->web_addr);
		server->exit_code = RC_EXIT_IN_USE;
		return false;
	}
	if (!listen->web) {
		log_error("cannot listen for browsers: %s", err);
		return false;
	}
	listen->web_source = wl_event_loop_add_fd(server->loop, web_fd(listen->web),
		WL_EVENT_READABLE, handle_accept_web, server);
	return listen->web_source != NULL;
}

static bool listen_udp(struct rc_server *server, const char *spec)
{
	struct rc_listen *listen = &server->listen;
	char err[256];
	errno = 0;
	listen->quic = quic_listen(spec, (const uint8_t *)listen->token, listen->token_len,
		(const uint8_t *)listen->watch_token, listen->watch_token_len, err, sizeof(err));
	if (!listen->quic && errno == EADDRINUSE) {
		log_error("cannot listen on UDP %s: the port is in use; choose another with "
			  "--listen-udp ADDR:PORT",
			spec);
		server->exit_code = RC_EXIT_IN_USE;
		return false;
	}
	if (!listen->quic) {
		log_error("cannot listen on UDP %s: %s", spec, err);
		return false;
	}
	listen->udp_source = wl_event_loop_add_fd(server->loop, quic_endpoint_fd(listen->quic),
		WL_EVENT_READABLE, handle_accept_udp, server);
	return listen->udp_source != NULL;
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
	server->listen.fd = fd;
	server->listen.path = strdup(path);
	server->listen.source =
		wl_event_loop_add_fd(server->loop, fd, WL_EVENT_READABLE, handle_accept, server);
	return server->listen.path && server->listen.source != NULL;
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
	server->listen.tcp_fd = fd;
	server->listen.tcp_source = wl_event_loop_add_fd(server->loop, fd, WL_EVENT_READABLE,
		handle_accept_tcp, server);
	return server->listen.tcp_source != NULL;
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
	struct rc_listen *listen = &server->listen;
	const char *ssh = getenv("SSH_CONNECTION"); /* client port server port */
	char address[WIRE_MAX_ADDRESS + 1] = "", spec[WIRE_MAX_ADDRESS + 8];
	if (ssh && sscanf(ssh, "%*s %*s %64s %*s", address) != 1) {
		address[0] = '\0';
	}
	if (!address_is_ip(address, strlen(address))) {
		address[0] = '\0'; /* the viewer's own name for the host, then */
	}
	address_join(spec, sizeof(spec), address[0] ? address : "0.0.0.0", 0);
	if (!random_token(listen) || !listen_udp(server, spec)) {
		/* The session goes on over ssh alone. */
		log_warning("no UDP for this session: it stays on ssh");
		return;
	}
	listen->offer = true;
	memcpy(listen->offer_address, address, sizeof(address));
}

bool listen_start(struct rc_server *server)
{
	struct rc_listen *listen = &server->listen;
	const struct rc_options *options = &server->options;
	char path[SESSION_PATH_MAX];
	if (options->socket_path) {
		if (!bind_path(server, options->socket_path, false)) {
			return false;
		}
		/* Listed and attachable by name like any other session. */
		char real[PATH_MAX];
		if (realpath(listen->path, real) &&
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
		log_info("session %s: listening on %s", server->record.name, listen->path);
		offer_udp(server);
		return true;
	}
	/* Every port opens before anything is said of any: a port in use
	 * is the one line printed. */
	bool network = options->tcp_addr || options->udp_addr || options->web_addr;
	if (network &&
		(!make_token(server) || (options->watch_token && !make_watch_token(server)) ||
			(options->tcp_addr && !listen_tcp(server)) ||
			(options->udp_addr && !listen_udp(server, options->udp_addr)) ||
			(options->web_addr && !listen_web(server)) || !write_tokens(server))) {
		return false;
	}
	log_info("session %s: listening on %s", server->record.name, listen->path);
	if (options->tcp_addr) {
		log_info("listening on TCP %s", options->tcp_addr);
		log_warning("TCP streams are not encrypted: anyone on the network path can see "
			    "the windows and the keys typed. Use ssh (rcomp-view ssh HOST -- APP) "
			    "or UDP (--listen-udp: QUIC, encrypted) for an encrypted link.");
	}
	if (options->udp_addr) {
		log_info("listening on UDP %s (QUIC, port %d)", options->udp_addr,
			quic_local_port(listen->quic));
	}
	if (options->web_addr) {
		log_info("listening for browsers on %s://%s/ (open it with #token=TOKEN, the "
			 "token in the session's token file)",
			options->web_cert ? "https" : "http", options->web_addr);
	}
	return true;
}

void listen_tell_stoppers(struct rc_server *server)
{
	struct rc_listen *listen = &server->listen;
	for (int i = 0; i < listen->nstoppers; i++) {
		write_goodbye(listen->stoppers[i], WIRE_BYE_SHUTDOWN, server->exit_code,
			"the session has ended");
		close(listen->stoppers[i]);
	}
	listen->nstoppers = 0;
}

void listen_say_goodbye(struct rc_server *server, enum wire_goodbye_reason reason, int32_t status,
	const char *text)
{
	struct rc_pending *pending, *tmp;
	wl_list_for_each_safe(pending, tmp, &server->listen.pending, link)
	{
		say_bye(pending, reason, status, text);
	}
}

void listen_init(struct rc_server *server)
{
	struct rc_listen *listen = &server->listen;
	listen->fd = listen->tcp_fd = -1;
	wl_list_init(&listen->pending);
}

void listen_finish(struct rc_server *server)
{
	struct rc_listen *listen = &server->listen;
	if (listen->source) {
		wl_event_source_remove(listen->source);
		listen->source = NULL;
	}
	if (listen->fd >= 0) {
		close(listen->fd);
		listen->fd = -1;
	}
	if (listen->path) {
		unlink(listen->path);
		free(listen->path);
		listen->path = NULL;
	}
	if (listen->tcp_source) {
		wl_event_source_remove(listen->tcp_source);
		listen->tcp_source = NULL;
	}
	if (listen->tcp_fd >= 0) {
		close(listen->tcp_fd);
		listen->tcp_fd = -1;
	}
	if (listen->udp_source) {
		wl_event_source_remove(listen->udp_source);
		listen->udp_source = NULL;
	}
	if (listen->offer_timer) {
		wl_event_source_remove(listen->offer_timer);
		listen->offer_timer = NULL;
	}
	if (listen->web_source) {
		wl_event_source_remove(listen->web_source);
		listen->web_source = NULL;
	}
	web_close(listen->web);
	listen->web = NULL;
	/* Goodbyes on their way over QUIC arrive before the endpoint goes:
	 * its thread sends them and closes each connection once its peer
	 * has them all (a second at most). */
	for (int waited = 0; quic_flushing(listen->quic) && waited < 1000; waited += 10) {
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	quic_close(listen->quic);
	listen->quic = NULL;
	struct rc_pending *pending, *tmp;
	wl_list_for_each_safe(pending, tmp, &listen->pending, link)
	{
		pending_destroy(pending, true);
	}
}
