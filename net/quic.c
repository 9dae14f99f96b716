/*
 * QUIC endpoints (quic.h): a thread per endpoint owns its UDP socket and
 * its connections (quic-conn.c), finds each packet's connection by its
 * connection ID, accepts a server's new ones, follows a client's address
 * changes, and hands each connection's stream to the program as one end of
 * a socketpair.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "address.h"
#include "log.h"
#include "quic-private.h"
#include "quic.h"

static void follow_address(struct quic_endpoint *ep);

static_assert(QUIC_MOVE_SLOTS == MOVE_SLOTS && QUIC_KEY_MAX == KEY_MAX && QUIC_HOST_MAX == HOST_MAX,
	"quic-private.h's sizes are quic.h's");

/* The slot of a move key ("move-N-..."), or -1. */
static int move_slot(const char *key, size_t len)
{
	size_t prefix = strlen(QUIC_MOVE_PREFIX);
	if (len <= prefix + 2 || memcmp(key, QUIC_MOVE_PREFIX, prefix) != 0) {
		return -1;
	}
	int slot = 0, digits = 0;
	size_t i = prefix;
	for (; i < len && key[i] >= '0' && key[i] <= '9' && digits < 3; i++, digits++) {
		slot = slot * 10 + (key[i] - '0');
	}
	if (!digits || i >= len || key[i] != '-' || slot >= QUIC_MOVE_SLOTS) {
		return -1;
	}
	return slot;
}

/* The address text ADDR:PORT, [V6]:PORT or HOST:PORT. */
static bool resolve(const char *addr_port, bool passive, struct sockaddr_storage *out,
	socklen_t *out_len, char *err, size_t err_size)
{
	char host[256];
	const char *port;
	if (!address_split(addr_port, host, sizeof(host), &port) || !host[0]) {
		quic_set_err(err, err_size, "%s is not ADDRESS:PORT", addr_port);
		return false;
	}
	struct addrinfo hints = {.ai_socktype = SOCK_DGRAM, .ai_flags = passive ? AI_PASSIVE : 0};
	struct addrinfo *res;
	int rv = getaddrinfo(host, port, &hints, &res);
	if (rv != 0) {
		quic_set_err(err, err_size, "cannot resolve %s: %s", addr_port, gai_strerror(rv));
		return false;
	}
	memcpy(out, res->ai_addr, res->ai_addrlen);
	*out_len = res->ai_addrlen;
	freeaddrinfo(res);
	return true;
}

static struct conn *find_conn(struct quic_endpoint *ep, const uint8_t *dcid, size_t len)
{
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &ep->conns[i];
		if (!c->used) {
			continue;
		}
		for (int k = 0; k < c->ncids; k++) {
			if (c->cids[k].datalen == len && memcmp(c->cids[k].data, dcid, len) == 0) {
				return c;
			}
		}
		if (c->odcid.datalen == len && memcmp(c->odcid.data, dcid, len) == 0) {
			return c;
		}
	}
	return NULL;
}

static void fail(struct quic_endpoint *ep, const char *fmt, ...)
{
	pthread_mutex_lock(&ep->lock);
	if (!ep->failure[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(ep->failure, sizeof(ep->failure), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&ep->lock);
}

/* The peer broke the lanes' or the stream's format: says so where it is
 * heard, and tells the peer why as the connection closes. */
static void report(struct conn *c)
{
	if (!c->why[0]) {
		return;
	}
	if (c->ep->server) {
		log_warning("a UDP viewer broke the protocol: %s; it is dropped", c->why);
	} else {
		fail(c->ep, "the server broke the protocol: %s", c->why);
	}
	ngtcp2_connection_close_error_set_application_error(&c->error, 1, (uint8_t *)c->why,
		strlen(c->why));
}

static void set_key_refused(struct quic_endpoint *ep, bool refused)
{
	pthread_mutex_lock(&ep->lock);
	ep->key_refused = refused;
	pthread_mutex_unlock(&ep->lock);
}

/* A client whose handshake failed on its key: a line in the log, as a
 * wrong TCP token gets, but at most a few a second. */
static void refused_key(struct conn *c)
{
	unsigned skipped;
	char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
	if (!log_limit_pass(&c->ep->refusals, quic_now_ns() / 1000, &skipped)) {
		return;
	}
	getnameinfo((struct sockaddr *)&c->peer, c->peer_len, host, sizeof(host), port,
		sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
	log_warning("refused a viewer from %s port %s (UDP): its key does not match the session's "
		    "token%s",
		host, port, skipped ? " (more refused and not logged)" : "");
}

/* A server's peer that changed address (a viewer roaming, a NAT
 * rebinding): what QUIC sent the old address will not arrive. */
static void follow_peer(struct conn *c)
{
	const ngtcp2_path *path = ngtcp2_conn_get_path(c->conn);
	socklen_t len = path->remote.addrlen;
	if (!c->ep->server || len > sizeof(c->peer)) {
		return;
	}
	if (c->peer_len == len && memcmp(&c->peer, path->remote.addr, len) == 0) {
		return;
	}
	if (c->peer_len) {
		lanes_moved(c->lanes);
		pthread_mutex_lock(&c->ep->lock);
		c->ep->migrations++;
		pthread_mutex_unlock(&c->ep->lock);
	}
	memcpy(&c->peer, path->remote.addr, len);
	c->peer_len = len;
}

static void offer(struct conn *c)
{
	struct quic_endpoint *ep = c->ep;
	if (c->announced || !ngtcp2_conn_get_handshake_completed(c->conn)) {
		return;
	}
	c->announced = true;
	if (ep->server) {
		struct quic_offer o = {.fd = c->user_fd,
			.watch = c->watch,
			.move_slot = c->move_slot};
		char port[NI_MAXSERV];
		if (getnameinfo((struct sockaddr *)&c->peer, c->peer_len, o.host, sizeof(o.host),
			    port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
			o.port = atoi(port);
		}
		pthread_mutex_lock(&ep->lock);
		if (ep->naccept < MAX_CONNS) {
			ep->accept_queue[ep->naccept++] = o;
			c->user_fd = -1;
		}
		pthread_mutex_unlock(&ep->lock);
	}
	char one = 1;
	if (write(ep->ready[1], &one, 1) < 0) {
		/* the program learns at its next accept */
	}
}

static void read_packets(struct quic_endpoint *ep)
{
	uint8_t buf[65536];
	for (int i = 0; i < 256; i++) {
		struct sockaddr_storage from;
		socklen_t from_len = sizeof(from);
		ssize_t n = recvfrom(ep->udp, buf, sizeof(buf), MSG_DONTWAIT,
			(struct sockaddr *)&from, &from_len);
		if (n <= 0) {
			return;
		}
		pthread_mutex_lock(&ep->lock);
		ep->packets_in++;
		ep->bytes_in += (uint64_t)n;
		pthread_mutex_unlock(&ep->lock);
		ngtcp2_version_cid vc;
		if (ngtcp2_pkt_decode_version_cid(&vc, buf, (size_t)n, SCID_LEN) != 0) {
			continue; /* not QUIC, or a version we do not speak: dropped */
		}
		struct conn *c = find_conn(ep, vc.dcid, vc.dcidlen);
		if (!c && ep->server) {
			c = quic_door_accept(ep, buf, (size_t)n, (struct sockaddr *)&from,
				from_len);
		}
		if (!c) {
			continue;
		}
		ngtcp2_path path = {{(struct sockaddr *)&ep->local, ep->local_len},
			{(struct sockaddr *)&from, from_len}, NULL};
		ngtcp2_pkt_info pi = {0};
		int rv = ngtcp2_conn_read_pkt(c->conn, &path, &pi, buf, (size_t)n, quic_now_ns());
		if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_DROP_CONN) {
			if (!ep->server) {
				/* Closed by the server: in the handshake, a TLS alert
				 * (0x100 + alert) is a key that does not match. */
				ngtcp2_connection_close_error cc;
				ngtcp2_conn_get_connection_close_error(c->conn, &cc);
				bool tls = cc.type ==
						NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_TRANSPORT &&
					(cc.error_code & ~0xffull) == NGTCP2_CRYPTO_ERROR;
				if (ngtcp2_conn_get_handshake_completed(c->conn) &&
					cc.type ==
						NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION &&
					cc.reasonlen > 0) {
					char why[256];
					log_escape(why, sizeof(why), (const char *)cc.reason,
						cc.reasonlen);
					fail(ep, "the server closed the connection: %s", why);
				} else if (ngtcp2_conn_get_handshake_completed(c->conn)) {
					fail(ep, "the server closed the connection");
				} else {
					set_key_refused(ep, tls);
					fail(ep, "%s",
						tls ? "the server refused the handshake: the "
						      "session key does not match"
						    : "the server closed the connection in the "
						      "handshake");
				}
			}
			quic_conn_free(c);
			continue;
		}
		if (rv != 0) {
			bool handshake = !ngtcp2_conn_get_handshake_completed(c->conn);
			if (handshake && !ep->server) {
				set_key_refused(ep, rv == NGTCP2_ERR_CRYPTO);
				fail(ep, "QUIC handshake: %s",
					rv == NGTCP2_ERR_CRYPTO ? "the key does not match"
								: ngtcp2_strerror(rv));
			} else if (handshake && rv == NGTCP2_ERR_CRYPTO) {
				refused_key(c);
			}
			if (rv == NGTCP2_ERR_CALLBACK_FAILURE && c->why[0]) {
				report(c);
			} else if (rv == NGTCP2_ERR_CRYPTO) {
				ngtcp2_connection_close_error_set_transport_error_tls_alert(
					&c->error, ngtcp2_conn_get_tls_alert(c->conn), NULL, 0);
			} else {
				ngtcp2_connection_close_error_set_transport_error_liberr(&c->error,
					rv, NULL, 0);
			}
			quic_conn_close(c);
			continue;
		}
		follow_peer(c);
		offer(c);
	}
}

/* The first connection's lanes, for quic_describe() in the program's
 * thread. */
static void describe_lanes(struct quic_endpoint *ep)
{
	char text[sizeof(ep->lanes)] = "";
	double loss = -1;
	uint64_t rtt = 0;
	for (int i = 0; i < MAX_CONNS; i++) {
		if (ep->conns[i].used) {
			lanes_describe(ep->conns[i].lanes, text, sizeof(text));
			loss = lanes_seen_loss(ep->conns[i].lanes);
			ngtcp2_conn_stat cs;
			ngtcp2_conn_get_conn_stat(ep->conns[i].conn, &cs);
			rtt = cs.smoothed_rtt;
			break;
		}
	}
	pthread_mutex_lock(&ep->lock);
	memcpy(ep->lanes, text, sizeof(text));
	ep->loss = loss;
	ep->rtt_ns = rtt;
	pthread_mutex_unlock(&ep->lock);
}

static void *endpoint_thread(void *data)
{
	struct quic_endpoint *ep = data;
	uint64_t drain_until = 0; /* a server told to stop: its goodbyes' deadline */
	for (;;) {
		struct pollfd pfd[3 + MAX_CONNS];
		int map[3 + MAX_CONNS];
		int n = 0;
		pfd[n++] = (struct pollfd){.fd = drain_until ? -1 : ep->wake[0], .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = ep->udp, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = ep->netlink, .events = POLLIN};
		uint64_t now = quic_now_ns(), next = UINT64_MAX;
		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &ep->conns[i];
			if (!c->used) {
				continue;
			}
			/* While QUIC's own packets wait (quic_conn_write), until
			 * then; else QUIC's timers and the lanes' tail. */
			uint64_t expiry = c->hold_until;
			if (!expiry) {
				uint64_t tail =
					lanes_deadline(c->lanes, quic_conn_probe_timeout(c));
				expiry = ngtcp2_conn_get_expiry(c->conn);
				expiry = tail < expiry ? tail : expiry;
			}
			next = expiry < next ? expiry : next;
			short events = 0;
			if (!c->app_eof && buffer_size(&c->staged) < STAGED_MAX &&
				c->stream_id >= 0) {
				events |= POLLIN;
			}
			if (buffer_size(&c->to_program) > 0) {
				events |= POLLOUT;
			}
			map[n] = i;
			pfd[n++] = (struct pollfd){.fd = c->fd, .events = events};
		}
		if (ep->server) {
			uint64_t report = quic_door_deadline(ep);
			next = report < next ? report : next;
		}
		if (drain_until) {
			next = drain_until < next ? drain_until : next;
		}
		int timeout = -1;
		if (next != UINT64_MAX) {
			uint64_t wait = next > now ? next - now : 0;
			timeout = (int)((wait + NGTCP2_MILLISECONDS - 1) / NGTCP2_MILLISECONDS);
		}
		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR) {
			break;
		}
		if (pfd[0].revents & POLLIN) {
			/* quic_close. A server's program has written its goodbyes
			 * and let go of its ends: they may not have been read yet.
			 * Each connection closes once its peer has them all (below);
			 * one still owned, or never given a stream, has nothing to
			 * wait for. */
			if (!ep->server) {
				break;
			}
			drain_until = quic_now_ns() + CLOSE_DRAIN_NS;
			pthread_mutex_lock(&ep->lock);
			for (int i = 0; i < ep->naccept; i++) {
				close(ep->accept_queue[i].fd); /* never taken: its EOF */
			}
			ep->naccept = 0;
			pthread_mutex_unlock(&ep->lock);
			for (int i = 0; i < MAX_CONNS; i++) {
				if (ep->conns[i].used && ep->conns[i].stream_id < 0) {
					quic_conn_close(&ep->conns[i]);
				}
			}
		}
		if (pfd[1].revents & POLLIN) {
			read_packets(ep);
		}
		if (pfd[2].revents & POLLIN) {
			follow_address(ep);
		}
		for (int k = 3; k < n; k++) {
			struct conn *c = &ep->conns[map[k]];
			if (!c->used) {
				continue;
			}
			if ((pfd[k].revents & POLLOUT) && !quic_flush_to_program(c)) {
				report(c);
				quic_conn_close(c);
				continue;
			}
			if (pfd[k].revents & (POLLIN | POLLHUP)) {
				quic_read_program(c);
			}
		}
		now = quic_now_ns();
		if (ep->server) {
			quic_door_report(ep, now);
		}
		if (now - ep->described_at > 250 * NGTCP2_MILLISECONDS) {
			describe_lanes(ep);
			ep->described_at = now;
		}
		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &ep->conns[i];
			if (!c->used) {
				continue;
			}
			lanes_expire(c->lanes, now, quic_conn_probe_timeout(c));
			if (ngtcp2_conn_get_expiry(c->conn) <= now) {
				int rv = ngtcp2_conn_handle_expiry(c->conn, now);
				if (rv != 0) {
					if (!ep->server) {
						fail(ep, "%s",
							ngtcp2_conn_get_handshake_completed(c->conn)
								? "no answer from the server for "
								  "15 s"
								: "no answer to the QUIC "
								  "handshake");
					}
					quic_conn_free(c); /* idle or timed out: nothing to say */
					continue;
				}
			}
			if (ep->server && c->app_eof && c->stream_id < 0) {
				/* The program let go of a peer that never opened
				 * its stream (no hello): nothing can carry a
				 * goodbye, so the connection's close says it. */
				static const char why[] = "refused before a hello";
				ngtcp2_connection_close_error_set_application_error(&c->error, 1,
					(const uint8_t *)why, sizeof(why) - 1);
				quic_conn_close(c);
				continue;
			}
			bool all_acked = quic_conn_all_acked(c);
			bool flushed = buffer_size(&c->to_program) == 0;
			bool done = c->fin_sent && all_acked && c->closing && flushed;
			if (!quic_conn_write(c) || done ||
				(c->app_eof && flushed && c->fin_sent && all_acked)) {
				quic_conn_close(c);
			}
		}
		if (drain_until) {
			bool left = false;
			for (int i = 0; i < MAX_CONNS; i++) {
				left = left || ep->conns[i].used;
			}
			if (!left || now >= drain_until) {
				break;
			}
		}
	}
	for (int i = 0; i < MAX_CONNS; i++) {
		if (ep->conns[i].used) {
			quic_conn_close(&ep->conns[i]);
		}
	}
	return NULL;
}

static struct quic_endpoint *endpoint_new(bool server, const uint8_t *key, size_t key_len,
	char *err, size_t err_size)
{
	if (key_len == 0 || key_len > QUIC_KEY_MAX) {
		quic_set_err(err, err_size, "the session key must be 1 to %d bytes", QUIC_KEY_MAX);
		return NULL;
	}
	struct quic_endpoint *ep = calloc(1, sizeof(*ep));
	if (!ep) {
		quic_set_err(err, err_size, "out of memory");
		return NULL;
	}
	ep->server = server;
	ep->udp = ep->wake[0] = ep->wake[1] = ep->ready[0] = ep->ready[1] = ep->netlink = -1;
	for (int i = 0; i < MAX_CONNS; i++) {
		ep->conns[i].fd = ep->conns[i].user_fd = -1;
	}
	pthread_mutex_init(&ep->lock, NULL);
	ep->key.data = gnutls_malloc(key_len);
	if (!ep->key.data || !quic_random(ep->secret, sizeof(ep->secret)) ||
		pipe2(ep->wake, O_CLOEXEC | O_NONBLOCK) < 0 ||
		pipe2(ep->ready, O_CLOEXEC | O_NONBLOCK) < 0) {
		quic_set_err(err, err_size, "cannot set an endpoint up: %s", strerror(errno));
		quic_close(ep);
		return NULL;
	}
	memcpy(ep->key.data, key, key_len);
	ep->key.size = (unsigned)key_len;
	int rv = server ? gnutls_psk_allocate_server_credentials(&ep->psk_server)
			: gnutls_psk_allocate_client_credentials(&ep->psk_client);
	if (rv == 0 && server) {
		gnutls_psk_set_server_credentials_function(ep->psk_server, quic_psk_server_cb);
	} else if (rv == 0) {
		bool watch = key_len > strlen(QUIC_WATCH_PREFIX) &&
			memcmp(key, QUIC_WATCH_PREFIX, strlen(QUIC_WATCH_PREFIX)) == 0;
		int slot = move_slot((const char *)key, key_len);
		char user[32];
		snprintf(user, sizeof(user), "%s%d", PSK_MOVE_USER, slot);
		rv = gnutls_psk_set_client_credentials(ep->psk_client,
			slot >= 0 ? user : (watch ? PSK_WATCH_USER : PSK_USER), &ep->key,
			GNUTLS_PSK_KEY_RAW);
	}
	if (rv != 0) {
		quic_set_err(err, err_size, "GnuTLS: %s", gnutls_strerror(rv));
		quic_close(ep);
		return NULL;
	}
	return ep;
}

struct quic_endpoint *quic_endpoint_server(const uint8_t *key, size_t key_len, char *err,
	size_t err_size)
{
	return endpoint_new(true, key, key_len, err, err_size);
}

static bool open_udp(struct quic_endpoint *ep, int family, const struct sockaddr *bind_to,
	socklen_t bind_len, char *err, size_t err_size)
{
	ep->udp = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (ep->udp < 0) {
		quic_set_err(err, err_size, "cannot open a UDP socket: %s", strerror(errno));
		return false;
	}
	if (bind_to && bind(ep->udp, bind_to, bind_len) < 0) {
		quic_set_err(err, err_size, "cannot bind UDP: %s", strerror(errno));
		return false;
	}
	ep->local_len = sizeof(ep->local);
	if (getsockname(ep->udp, (struct sockaddr *)&ep->local, &ep->local_len) < 0) {
		quic_set_err(err, err_size, "getsockname: %s", strerror(errno));
		return false;
	}
	return true;
}

/* The address the kernel sends from towards a client's server, with the
 * port of our socket. */
static bool route_source(struct quic_endpoint *ep, struct sockaddr_storage *out, socklen_t *out_len)
{
	bool found = false;
	int probe = socket(ep->remote.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&ep->remote, ep->remote_len) == 0) {
		struct sockaddr_storage local;
		socklen_t local_len = sizeof(local);
		struct sockaddr_storage bound;
		socklen_t bound_len = sizeof(bound);
		if (getsockname(probe, (struct sockaddr *)&local, &local_len) == 0 &&
			getsockname(ep->udp, (struct sockaddr *)&bound, &bound_len) == 0) {
			if (local.ss_family == AF_INET) {
				((struct sockaddr_in *)&local)->sin_port =
					((struct sockaddr_in *)&bound)->sin_port;
			} else if (local.ss_family == AF_INET6) {
				((struct sockaddr_in6 *)&local)->sin6_port =
					((struct sockaddr_in6 *)&bound)->sin6_port;
			}
			*out = local;
			*out_len = local_len;
			found = true;
		}
	}
	if (probe >= 0) {
		close(probe);
	}
	return found;
}

/* A client whose address changed (a new network): the connection goes on
 * from the new one, which the server validates within a round trip. */
static void follow_address(struct quic_endpoint *ep)
{
	char drain[4096];
	while (recv(ep->netlink, drain, sizeof(drain), MSG_DONTWAIT) > 0) {
	}
	struct sockaddr_storage now;
	socklen_t now_len;
	if (!route_source(ep, &now, &now_len) ||
		(now_len == ep->local_len && memcmp(&now, &ep->local, now_len) == 0)) {
		return;
	}
	ep->local = now;
	ep->local_len = now_len;
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &ep->conns[i];
		if (c->used && ngtcp2_conn_get_handshake_completed(c->conn)) {
			ngtcp2_path path = {{(struct sockaddr *)&ep->local, ep->local_len},
				{(struct sockaddr *)&ep->remote, ep->remote_len}, NULL};
			int rv = ngtcp2_conn_initiate_immediate_migration(c->conn, &path,
				quic_now_ns());
			pthread_mutex_lock(&ep->lock);
			ep->migrations += rv == 0;
			pthread_mutex_unlock(&ep->lock);
		}
	}
}

static bool start_thread(struct quic_endpoint *ep, char *err, size_t err_size)
{
	if (pthread_create(&ep->thread, NULL, endpoint_thread, ep) != 0) {
		quic_set_err(err, err_size, "cannot start the QUIC thread");
		return false;
	}
	ep->thread_started = true;
	return true;
}

struct quic_endpoint *quic_listen(const char *addr_port, const uint8_t *key, size_t key_len,
	const uint8_t *watch_key, size_t watch_key_len, char *err, size_t err_size)
{
	struct quic_endpoint *ep = endpoint_new(true, key, key_len, err, err_size);
	if (!ep) {
		return NULL;
	}
	if (watch_key && watch_key_len) {
		if (watch_key_len > QUIC_KEY_MAX ||
			!(ep->watch_key.data = gnutls_malloc(watch_key_len))) {
			quic_set_err(err, err_size, "the watch key must be 1 to %d bytes",
				QUIC_KEY_MAX);
			quic_close(ep);
			return NULL;
		}
		memcpy(ep->watch_key.data, watch_key, watch_key_len);
		ep->watch_key.size = (unsigned)watch_key_len;
	}
	struct sockaddr_storage addr;
	socklen_t addr_len;
	if (!resolve(addr_port, true, &addr, &addr_len, err, err_size) ||
		!open_udp(ep, addr.ss_family, (struct sockaddr *)&addr, addr_len, err, err_size) ||
		!start_thread(ep, err, err_size)) {
		int saved = errno; /* EADDRINUSE: a port in use */
		quic_close(ep);
		errno = saved;
		return NULL;
	}
	return ep;
}

bool quic_set_move_key(struct quic_endpoint *ep, int slot, const char *key, size_t len)
{
	if (slot < 0 || slot >= QUIC_MOVE_SLOTS || len > QUIC_KEY_MAX ||
		(len && move_slot(key, len) != slot)) {
		return false;
	}
	pthread_mutex_lock(&ep->lock);
	memcpy(ep->move_keys[slot], key, len);
	ep->move_key_lens[slot] = len;
	pthread_mutex_unlock(&ep->lock);
	return true;
}

bool quic_supported(void)
{
	return true;
}

int quic_endpoint_fd(const struct quic_endpoint *ep)
{
	return ep->ready[0];
}

int quic_local_port(const struct quic_endpoint *ep)
{
	if (ep->local.ss_family == AF_INET6) {
		return ntohs(((const struct sockaddr_in6 *)&ep->local)->sin6_port);
	}
	return ntohs(((const struct sockaddr_in *)&ep->local)->sin_port);
}

int quic_accept(struct quic_endpoint *ep, char host[QUIC_HOST_MAX], int *port, bool *watch,
	int *move_slot)
{
	char drain[64];
	while (read(ep->ready[0], drain, sizeof(drain)) > 0) {
	}
	int fd = -1;
	pthread_mutex_lock(&ep->lock);
	if (ep->naccept > 0) {
		struct quic_offer o = ep->accept_queue[0];
		memmove(ep->accept_queue, ep->accept_queue + 1,
			(size_t)(ep->naccept - 1) * sizeof(ep->accept_queue[0]));
		ep->naccept--;
		fd = o.fd;
		memcpy(host, o.host, QUIC_HOST_MAX);
		*port = o.port;
		*watch = o.watch;
		*move_slot = o.move_slot;
	}
	pthread_mutex_unlock(&ep->lock);
	return fd;
}

int quic_connect(const char *host_port, const uint8_t *key, size_t key_len, int timeout_ms,
	struct quic_endpoint **out, char *err, size_t err_size)
{
	*out = NULL;
	struct quic_endpoint *ep = endpoint_new(false, key, key_len, err, err_size);
	if (!ep) {
		return -1;
	}
	if (!resolve(host_port, false, &ep->remote, &ep->remote_len, err, err_size) ||
		!open_udp(ep, ep->remote.ss_family, NULL, 0, err, err_size)) {
		quic_close(ep);
		return -1;
	}
	route_source(ep, &ep->local, &ep->local_len);
	/* Address changes, to move the connection along with this machine;
	 * and route changes, as the route to the server from a new address
	 * may come only after the address (until it does, the source stays
	 * the old one). */
	ep->netlink = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (ep->netlink >= 0) {
		struct sockaddr_nl nl = {.nl_family = AF_NETLINK,
			.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE |
				RTMGRP_IPV6_ROUTE};
		if (bind(ep->netlink, (struct sockaddr *)&nl, sizeof(nl)) < 0) {
			close(ep->netlink);
			ep->netlink = -1; /* no roaming, the rest works */
		}
	}
	struct conn *c = quic_conn_alloc(ep, err, err_size);
	if (!c) {
		quic_close(ep);
		return -1;
	}
	ngtcp2_cid dcid, scid;
	dcid.datalen = NGTCP2_MIN_INITIAL_DCIDLEN;
	scid.datalen = SCID_LEN;
	if (!quic_random(dcid.data, dcid.datalen) || !quic_random(scid.data, scid.datalen)) {
		quic_set_err(err, err_size, "no random numbers");
		quic_close(ep);
		return -1;
	}
	c->cids[c->ncids++] = scid;
	ngtcp2_settings settings;
	ngtcp2_transport_params params;
	quic_conn_settings(&settings, &params);
	settings.handshake_timeout = (uint64_t)timeout_ms * NGTCP2_MILLISECONDS;
	ngtcp2_callbacks callbacks = quic_callbacks;
	callbacks.client_initial = ngtcp2_crypto_client_initial_cb;
	callbacks.recv_retry = ngtcp2_crypto_recv_retry_cb;
	ngtcp2_path path = {{(struct sockaddr *)&ep->local, ep->local_len},
		{(struct sockaddr *)&ep->remote, ep->remote_len}, NULL};
	if (ngtcp2_conn_client_new(&c->conn, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &callbacks,
		    &settings, &params, NULL, c) != 0 ||
		!quic_tls_init(c, err, err_size)) {
		if (!*err) {
			quic_set_err(err, err_size, "cannot start a QUIC connection");
		}
		quic_close(ep);
		return -1;
	}
	ngtcp2_conn_set_tls_native_handle(c->conn, c->tls);
	ngtcp2_conn_set_keep_alive_timeout(c->conn, KEEP_ALIVE_NS);
	/* The program writes at once; the stream opens with the handshake. */
	int fd = c->user_fd;
	c->user_fd = -1;
	if (!quic_conn_write(c) || !start_thread(ep, err, err_size)) {
		if (!*err) {
			quic_set_err(err, err_size, "cannot send to %s", host_port);
		}
		close(fd);
		quic_close(ep);
		return -1;
	}
	*out = ep;
	return fd;
}

bool quic_key_refused(struct quic_endpoint *ep)
{
	pthread_mutex_lock(&ep->lock);
	bool refused = ep->key_refused;
	pthread_mutex_unlock(&ep->lock);
	return refused;
}

void quic_failure(struct quic_endpoint *ep, char *out, size_t size)
{
	pthread_mutex_lock(&ep->lock);
	snprintf(out, size, "%s", ep->failure);
	pthread_mutex_unlock(&ep->lock);
}

void quic_close(struct quic_endpoint *ep)
{
	if (!ep) {
		return;
	}
	if (ep->thread_started) {
		char one = 1;
		if (write(ep->wake[1], &one, 1) < 0) {
			/* the thread polls the pipe: it cannot be full of one byte */
		}
		pthread_join(ep->thread, NULL);
	} else {
		for (int i = 0; i < MAX_CONNS; i++) {
			if (ep->conns[i].used) {
				quic_conn_free(&ep->conns[i]);
			}
		}
	}
	for (int i = 0; i < ep->naccept; i++) {
		close(ep->accept_queue[i].fd);
	}
	int fds[] = {ep->udp, ep->wake[0], ep->wake[1], ep->ready[0], ep->ready[1], ep->netlink};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (fds[i] >= 0) {
			close(fds[i]);
		}
	}
	if (ep->psk_server) {
		gnutls_psk_free_server_credentials(ep->psk_server);
	}
	if (ep->psk_client) {
		gnutls_psk_free_client_credentials(ep->psk_client);
	}
	gnutls_free(ep->key.data);
	gnutls_free(ep->watch_key.data);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
}

double quic_loss(struct quic_endpoint *ep)
{
	pthread_mutex_lock(&ep->lock);
	double loss = ep->loss;
	pthread_mutex_unlock(&ep->lock);
	return loss;
}

double quic_rtt_ms(struct quic_endpoint *ep)
{
	pthread_mutex_lock(&ep->lock);
	double rtt = (double)ep->rtt_ns / 1e6;
	pthread_mutex_unlock(&ep->lock);
	return rtt;
}

void quic_describe(struct quic_endpoint *ep, char *out, size_t size)
{
	pthread_mutex_lock(&ep->lock);
	snprintf(out, size,
		"udp %llu packets in (%.2f MB), %llu out (%.2f MB; %llu with datagrams), %llu not "
		"sent, %llu moves%s%s",
		(unsigned long long)ep->packets_in, (double)ep->bytes_in / 1e6,
		(unsigned long long)ep->packets_out, (double)ep->bytes_out / 1e6,
		(unsigned long long)ep->packets_datagrams, (unsigned long long)ep->dropped,
		(unsigned long long)ep->migrations, ep->lanes[0] ? "; " : "", ep->lanes);
	pthread_mutex_unlock(&ep->lock);
}
