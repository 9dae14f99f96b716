/*
 * Getting in (see handshake.h): every connection a door hands over waits
 * here until its hello is read whole and checked (the protocol's version,
 * on the network the token, what it asks: to stop the session, to share,
 * to watch, to come over from another link); only then does it reach the
 * session (dispatch.c), taking it over if it asked to. What a connection
 * may hold before then is bounded, and every refusal says why in one
 * goodbye, the same writer as everywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app.h"
#include "channel.h"
#include "dispatch.h"
#include "handshake.h"
#include "handover.h"
#include "log.h"
#include "monotonic.h"
#include "offer.h"
#include "quic.h"
#include "session.h"
#include "token.h"
#include "web.h"

/* A connection that has not finished its hello yet. It reads the hello
 * exactly, so whatever follows stays in the socket for the connection. */
struct rc_pending {
	struct rc_server *server;
	struct wl_list link; // rc_handshake::pending
	int fd, out_fd; /* out_fd: fd, or stdout for the viewer on stdio */
	bool stdio; /* the one viewer an rcomp-run --stdio has */
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

static bool read_token_file(struct rc_handshake *hs, const char *path)
{
	if (!token_read(path, hs->token, &hs->token_len)) {
		return false;
	}
	if (hs->token_len < MIN_TOKEN) {
		log_error("the token in %s is shorter than %d characters: anyone who reaches the "
			  "port could guess it; make one with: openssl rand -hex 16 > %s",
			path, MIN_TOKEN, path);
		return false;
	}
	return true;
}

bool handshake_offer_token(struct rc_server *server)
{
	struct rc_handshake *hs = &server->handshake;
	return token_random(hs->token, &hs->token_len, "");
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

/* The session's token, in memory: a new random one, or --token-file's;
 * and with --watch-token a second one, whose prefix tells a QUIC client to
 * offer it under the watch identity. */
bool handshake_make_tokens(struct rc_server *server)
{
	struct rc_handshake *hs = &server->handshake;
	const char *file = server->options.token_file;
	return (file ? read_token_file(hs, file) : handshake_offer_token(server)) &&
		(!server->options.watch_token ||
			token_random(hs->watch_token, &hs->watch_token_len, QUIC_WATCH_PREFIX));
}

bool handshake_write_tokens(struct rc_server *server)
{
	struct rc_handshake *hs = &server->handshake;
	/* The doors that ask for it, as the user opened them. */
	const struct rc_options *o = &server->options;
	char what[96];
	snprintf(what, sizeof(what), "viewers %s%s%s%s%s must give the token in",
		o->tcp_addr ? "on TCP" : "",
		o->tcp_addr && (o->udp_addr || o->web_addr) ? ", " : "",
		o->udp_addr ? "on UDP" : "", o->udp_addr && o->web_addr ? ", " : "",
		o->web_addr ? "in a browser" : "");
	return (server->options.token_file || write_token(server, hs->token, "token", what)) &&
		(!hs->watch_token_len ||
			write_token(server, hs->watch_token, "watch-token",
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
 * count of those not logged, so a flood cannot fill the log. A warning:
 * the door held (the viewer refused hears why, as its own error). */
static void log_refusal(struct rc_server *server, const char *peer, const char *why)
{
	unsigned skipped;
	if (!log_limit_pass(&server->handshake.refusals, monotonic_usec(), &skipped)) {
		return;
	}
	if (skipped) {
		log_warning("refused a viewer%s%s: %s (%u more refused and not logged)",
			peer[0] ? " from " : "", peer, why, skipped);
	} else {
		log_warning("refused a viewer%s%s: %s", peer[0] ? " from " : "", peer, why);
	}
}

static void pending_destroy(struct rc_pending *pending, bool close_fd)
{
	struct rc_server *server = pending->server;
	wl_list_remove(&pending->link);
	server->handshake.npending[pending->tcp]--;
	wl_event_source_remove(pending->source);
	wl_event_source_remove(pending->timeout);
	if (close_fd) {
		close(pending->fd);
		if (pending->out_fd != pending->fd) {
			close(pending->out_fd);
		}
		if (pending->stdio && server->running) {
			/* stdin/stdout carried the only viewer this session can
			 * have. */
			log_info("the viewer on stdio is gone; ending the session");
			server->running = false;
		}
	}
	free(pending);
}

/* Says why on the pending connection (one write: a small one to a fresh
 * socket or pipe fits its buffer), and closes it. */
static void say_bye(struct rc_pending *pending, enum wire_goodbye_reason reason, int32_t status,
	const char *text)
{
	channel_write_goodbye(pending->out_fd, reason, status, text);
	/* Unread bytes would turn our close into a reset that can overtake the
	 * goodbye: drain what has arrived (bounded) first. */
	uint8_t sink[4096];
	for (int i = 0; i < 16 && recv(pending->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; i++) {
	}
	shutdown(pending->out_fd, SHUT_WR);
	pending_destroy(pending, true);
}

static void refuse(struct rc_pending *pending, enum wire_goodbye_reason reason, const char *text)
{
	log_refusal(pending->server, pending->peer, text);
	say_bye(pending, reason, 0, text);
}

/* A valid hello arrived: the connection is the session's now. One that
 * comes over from another link (ssh to UDP) replaces its old one, quietly,
 * and stays what it was; one that neither shares nor watches takes the
 * session over from those attached. */
static void pending_promote(struct rc_pending *pending, const struct wire_hello *hello,
	bool view_only, struct rc_viewer *replaces)
{
	struct rc_server *server = pending->server;
	int fd = pending->fd, out_fd = pending->out_fd;
	char peer[sizeof(pending->peer)];
	memcpy(peer, pending->peer, sizeof(peer));
	pending_destroy(pending, false);
	bool takes_input = true;
	uint32_t number = 0;
	if (replaces) {
		log_info("viewer %u comes over to %s", replaces->number, peer);
		view_only = replaces->view_only;
		takes_input = server->input_viewer == replaces;
		number = replaces->number;
		server->replacing = true;
		connection_destroy(replaces->conn);
		server->replacing = false;
	}
	view_only = view_only || (hello->flags & WIRE_HELLO_VIEW_ONLY);
	bool share = replaces || view_only || (hello->flags & WIRE_HELLO_SHARE);
	if (!share && server->nviewers > 0) {
		log_info("a new viewer%s%s takes the session over; disconnecting the %d "
			 "attached",
			peer[0] ? " from " : "", peer, server->nviewers);
		struct rc_viewer *viewer, *tmp;
		wl_list_for_each(viewer, &server->viewers, link)
		{
			connection_goodbye(viewer->conn, WIRE_BYE_TAKEN_OVER, 0,
				"another viewer took this session over");
		}
		wl_list_for_each_safe(viewer, tmp, &server->viewers, link)
		{
			connection_close_now(viewer->conn, 0);
		}
	}
	struct rc_viewer *viewer = dispatch_attach(server, fd, out_fd, hello, view_only,
		takes_input && !view_only, number);
	if (viewer && viewer->conn->minor >= 3 && (hello->flags & WIRE_HELLO_UDP_OFFER) &&
		server->doors.offer) {
		/* It asked, over ssh, to come over to UDP as itself. */
		offer_udp(viewer);
	}
}

/* rcomp-run --stop: the session ends, and the one that asked is told when
 * it has; a watcher may not ask. */
static void stop(struct rc_pending *pending, bool watch)
{
	struct rc_handshake *hs = &pending->server->handshake;
	if (watch) {
		refuse(pending, WIRE_BYE_UNAUTHORIZED,
			"a viewer that may only watch cannot stop "
			"the session");
		return;
	}
	if (hs->nstoppers == sizeof(hs->stoppers) / sizeof(hs->stoppers[0])) {
		refuse(pending, WIRE_BYE_BUSY, "the session is stopping already");
		return;
	}
	struct rc_server *server = pending->server;
	hs->stoppers[hs->nstoppers++] = pending->fd;
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
	const struct rc_handshake *hs = &server->handshake;
	if (pending->move_slot >= 0) {
		struct rc_viewer *viewer = mover(pending, &msg.hello);
		if (!viewer) {
			refuse(pending, WIRE_BYE_UNAUTHORIZED, "the viewer it comes for is gone");
			return 0;
		}
		pending_promote(pending, &msg.hello, false, viewer);
		return 0;
	}
	bool full_token = token_ok(hs->token, hs->token_len, msg.hello.token, msg.hello.token_len);
	if (pending->tcp && !full_token &&
		!token_ok(hs->watch_token, hs->watch_token_len, msg.hello.token,
			msg.hello.token_len)) {
		refuse(pending, WIRE_BYE_UNAUTHORIZED,
			msg.hello.token_len ? "wrong token" : "no token given");
		return 0;
	}
	char text[256];
	if (wire_version_refused(msg.hello.major, "the viewer", "rcomp-run", text, sizeof(text))) {
		/* Before it takes anything over: the attached viewer stays. */
		refuse(pending, WIRE_BYE_VERSION, text);
		return 0;
	}
	bool watch = pending->tcp && !full_token;
	if (msg.hello.flags & WIRE_HELLO_STOP) {
		stop(pending, watch);
		return 0;
	}
	if (msg.hello.flags & WIRE_HELLO_SEND) {
		/* Paths name files of this host: only its own socket, the
		 * session user's, may ask. */
		if (pending->tcp || pending->stdio) {
			refuse(pending, WIRE_BYE_UNAUTHORIZED,
				"files are sent with rcomp-run --send on the session's host");
			return 0;
		}
		int sender = pending->fd;
		pending_destroy(pending, false);
		handover_add_sender(server, sender);
		return 0;
	}
	if ((watch || (msg.hello.flags & (WIRE_HELLO_SHARE | WIRE_HELLO_VIEW_ONLY))) &&
		server->nviewers >= RC_MAX_VIEWERS) {
		/* Before anything is taken over: the viewers there stay. */
		refuse(pending, WIRE_BYE_BUSY, "this session has as many viewers as it takes");
		return 0;
	}
	pending_promote(pending, &msg.hello, watch, NULL);
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
static struct rc_pending *oldest(struct rc_handshake *hs, const char *host, bool keyed)
{
	struct rc_pending *pending, *found = NULL;
	wl_list_for_each(pending, &hs->pending, link)
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
	struct rc_handshake *hs = &server->handshake;
	if (!tcp) {
		if (hs->npending[0] < MAX_PENDING) {
			return true;
		}
		log_refusal(server, peer, "too many connections in the handshake");
		return false;
	}
	int from_host = 0;
	struct rc_pending *pending;
	wl_list_for_each(pending, &hs->pending, link)
	{
		from_host += pending->tcp && strcmp(pending->host, host) == 0;
	}
	const char *why = "too many connections from one address in the handshake";
	struct rc_pending *drop = NULL;
	if (from_host >= MAX_PENDING_PER_HOST) {
		drop = oldest(hs, host, keyed);
	} else if (hs->npending[1] >= MAX_PENDING) {
		drop = oldest(hs, NULL, keyed);
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

void handshake_start(struct rc_server *server, int conn, int out_fd, bool tcp, bool keyed,
	int move_slot, const char *host, const char *peer)
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
	pending->out_fd = out_fd;
	pending->stdio = out_fd != conn;
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
	wl_list_insert(&server->handshake.pending, &pending->link);
	server->handshake.npending[tcp]++;
	wl_event_source_timer_update(pending->timeout, PENDING_TIMEOUT_MS);
}

void handshake_tell_stoppers(struct rc_server *server, const char *text)
{
	struct rc_handshake *hs = &server->handshake;
	for (int i = 0; i < hs->nstoppers; i++) {
		channel_write_goodbye(hs->stoppers[i], WIRE_BYE_SHUTDOWN, server->exit_code, text);
		close(hs->stoppers[i]);
	}
	hs->nstoppers = 0;
}

void handshake_say_goodbye(struct rc_server *server, enum wire_goodbye_reason reason,
	int32_t status, const char *text)
{
	struct rc_pending *pending, *tmp;
	wl_list_for_each_safe(pending, tmp, &server->handshake.pending, link)
	{
		say_bye(pending, reason, status, text);
	}
}

void handshake_init(struct rc_server *server)
{
	wl_list_init(&server->handshake.pending);
}

void handshake_finish(struct rc_server *server)
{
	struct rc_pending *pending, *tmp;
	wl_list_for_each_safe(pending, tmp, &server->handshake.pending, link)
	{
		pending_destroy(pending, true);
	}
}
