/*
 * QUIC endpoints (quic.h): a thread per endpoint owns its UDP socket and
 * its connections; each connection carries one bidirectional stream, which
 * it copies to and from its end of a socketpair. Stream bytes read from the
 * program stay buffered until the peer acknowledges them (QUIC may send
 * them again); bytes received are taken from the peer only as fast as the
 * program reads them (the stream's flow control window moves with what was
 * written to the socketpair), so memory stays bounded both ways.
 */
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "quic.h"

#define MAX_CONNS 16
#define MAX_CIDS 8
#define SCID_LEN 16
#define PACKET_MAX 1452
#define SEND_MAX (8u << 20) /* read from the program, not yet acknowledged */
#define RECV_WINDOW (4u << 20) /* the peer may send this far ahead of our reads */
#define IDLE_TIMEOUT_NS (30ull * NGTCP2_SECONDS)
#define PSK_USER "rcomp"

static const char priority[] =
	"NORMAL:-VERS-ALL:+VERS-TLS1.3:-KX-ALL:+ECDHE-PSK:-CIPHER-ALL:+AES-128-GCM:"
	"+AES-256-GCM:+CHACHA20-POLY1305:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:"
	"%DISABLE_TLS13_COMPAT_MODE";

struct conn {
	struct quic_endpoint *ep;
	bool used;
	ngtcp2_conn *conn;
	gnutls_session_t tls;
	ngtcp2_crypto_conn_ref ref;
	ngtcp2_cid cids[MAX_CIDS]; /* ours, by which the peer's packets find us */
	int ncids;
	ngtcp2_cid odcid; /* the client's first destination, until it moves on */
	struct sockaddr_storage local;
	socklen_t local_len;
	int64_t stream_id; /* -1 until there is one */
	int fd; /* our end of the socketpair; the program has the other */
	int user_fd; /* until the program takes it */
	bool announced; /* handshake done, user_fd offered */
	bool app_eof; /* the program closed its end */
	bool fin_sent;
	bool closing;
	uint8_t *sbuf; /* from the program: acknowledged bytes are dropped */
	/* sbuf is a ring: QUIC keeps pointers into it until the peer
	 * acknowledges the bytes, so they never move. Totals since the start. */
	uint64_t s_acked, s_sent, s_read;
	uint8_t *rbuf; /* from the peer, not yet written to the program */
	size_t r_head, r_len;
	ngtcp2_connection_close_error error;
};

struct quic_endpoint {
	bool server;
	int udp;
	int wake[2]; /* the program to the thread: stop */
	int ready[2]; /* the thread to the program: a connection to accept */
	pthread_t thread;
	bool thread_started;
	gnutls_datum_t key;
	gnutls_psk_server_credentials_t psk_server;
	gnutls_psk_client_credentials_t psk_client;
	struct sockaddr_storage local;
	socklen_t local_len;
	struct sockaddr_storage remote; /* a client's server */
	socklen_t remote_len;
	pthread_mutex_t lock; /* the stats and the accept queue */
	struct conn conns[MAX_CONNS];
	int accept_queue[MAX_CONNS];
	int naccept;
	char failure[256]; /* a client's connection failed: why */
	int netlink; /* a client's: address changes (-1: none) */
	uint64_t packets_in, packets_out, bytes_in, bytes_out, dropped, migrations;
};

static void follow_address(struct quic_endpoint *ep);

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NGTCP2_SECONDS + (uint64_t)ts.tv_nsec;
}

static void set_err(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

static bool random_bytes(void *out, size_t len)
{
	return gnutls_rnd(GNUTLS_RND_RANDOM, out, len) == 0;
}

/* The address text ADDR:PORT, [V6]:PORT or HOST:PORT. */
static bool resolve(const char *addr_port, bool passive, struct sockaddr_storage *out,
	socklen_t *out_len, char *err, size_t err_size)
{
	char host[256];
	const char *colon = strrchr(addr_port, ':');
	if (!colon || colon == addr_port || (size_t)(colon - addr_port) >= sizeof(host)) {
		set_err(err, err_size, "%s is not ADDRESS:PORT", addr_port);
		return false;
	}
	const char *h = addr_port;
	size_t hlen = (size_t)(colon - addr_port);
	if (h[0] == '[' && hlen >= 2 && h[hlen - 1] == ']') {
		h++;
		hlen -= 2;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	struct addrinfo hints = {.ai_socktype = SOCK_DGRAM, .ai_flags = passive ? AI_PASSIVE : 0};
	struct addrinfo *res;
	int rv = getaddrinfo(host, colon + 1, &hints, &res);
	if (rv != 0) {
		set_err(err, err_size, "cannot resolve %s: %s", addr_port, gai_strerror(rv));
		return false;
	}
	memcpy(out, res->ai_addr, res->ai_addrlen);
	*out_len = res->ai_addrlen;
	freeaddrinfo(res);
	return true;
}

/* ---- the connection's callbacks ---- */

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
	struct conn *c = ref->user_data;
	return c->conn;
}

static void rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
	(void)ctx;
	if (!random_bytes(dest, len)) {
		memset(dest, 0, len);
	}
}

static int new_cid_cb(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t cidlen,
	void *user_data)
{
	struct conn *c = user_data;
	if (!random_bytes(cid->data, cidlen) ||
		!random_bytes(token, NGTCP2_STATELESS_RESET_TOKENLEN)) {
		return NGTCP2_ERR_CALLBACK_FAILURE;
	}
	cid->datalen = cidlen;
	if (c->ncids < MAX_CIDS) {
		c->cids[c->ncids++] = *cid;
	}
	return 0;
}

static int remove_cid_cb(ngtcp2_conn *conn, const ngtcp2_cid *cid, void *user_data)
{
	struct conn *c = user_data;
	for (int i = 0; i < c->ncids; i++) {
		if (ngtcp2_cid_eq(&c->cids[i], cid)) {
			c->cids[i] = c->cids[--c->ncids];
			break;
		}
	}
	return 0;
}

static int handshake_completed_cb(ngtcp2_conn *conn, void *user_data)
{
	struct conn *c = user_data;
	if (!c->ep->server && c->stream_id < 0) {
		if (ngtcp2_conn_open_bidi_stream(conn, &c->stream_id, NULL) != 0) {
			return NGTCP2_ERR_CALLBACK_FAILURE;
		}
	}
	return 0;
}

static int stream_open_cb(ngtcp2_conn *conn, int64_t stream_id, void *user_data)
{
	struct conn *c = user_data;
	/* Client-initiated bidirectional streams have the two low bits 0. */
	if (c->stream_id < 0 && (stream_id & 0x3) == 0) {
		c->stream_id = stream_id;
	}
	return 0;
}

/* What waits for the program goes to it as far as it reads; what it took
 * opens the window by as much. */
static void flush_to_program(struct conn *c)
{
	size_t written = 0;
	while (c->r_len > 0) {
		ssize_t n = write(c->fd, c->rbuf + c->r_head, c->r_len);
		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				c->app_eof = true; /* the program is gone */
				c->r_len = 0;
			}
			break;
		}
		c->r_head += (size_t)n;
		c->r_len -= (size_t)n;
		written += (size_t)n;
	}
	if (c->r_len == 0) {
		c->r_head = 0;
	}
	if (written && c->stream_id >= 0) {
		ngtcp2_conn_extend_max_stream_offset(c->conn, c->stream_id, written);
		ngtcp2_conn_extend_max_offset(c->conn, written);
	}
}

static int recv_stream_data_cb(ngtcp2_conn *conn, uint32_t flags, int64_t stream_id,
	uint64_t offset, const uint8_t *data, size_t datalen, void *user_data,
	void *stream_user_data)
{
	struct conn *c = user_data;
	if (stream_id != c->stream_id) {
		return 0; /* one stream is all rcomp opens */
	}
	/* The window keeps the peer to RECV_WINDOW beyond what the program
	 * read, so this fits. */
	if (c->r_head + c->r_len + datalen > RECV_WINDOW) {
		memmove(c->rbuf, c->rbuf + c->r_head, c->r_len);
		c->r_head = 0;
	}
	if (c->r_len + datalen > RECV_WINDOW) {
		return NGTCP2_ERR_CALLBACK_FAILURE;
	}
	if (datalen > 0) { /* a FIN alone comes with no data at all */
		memcpy(c->rbuf + c->r_head + c->r_len, data, datalen);
		c->r_len += datalen;
	}
	flush_to_program(c);
	if (flags & NGTCP2_STREAM_DATA_FLAG_FIN) {
		c->closing = true; /* the peer is done: so are we, once flushed */
	}
	return 0;
}

static int acked_cb(ngtcp2_conn *conn, int64_t stream_id, uint64_t offset, uint64_t datalen,
	void *user_data, void *stream_user_data)
{
	struct conn *c = user_data;
	if (stream_id != c->stream_id || offset != c->s_acked || datalen > c->s_sent - c->s_acked) {
		return 0;
	}
	/* Acknowledged in order, from the front: that room is free again. */
	c->s_acked += datalen;
	return 0;
}

static const ngtcp2_callbacks base_callbacks = {
	.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
	.encrypt = ngtcp2_crypto_encrypt_cb,
	.decrypt = ngtcp2_crypto_decrypt_cb,
	.hp_mask = ngtcp2_crypto_hp_mask_cb,
	.recv_stream_data = recv_stream_data_cb,
	.acked_stream_data_offset = acked_cb,
	.stream_open = stream_open_cb,
	.handshake_completed = handshake_completed_cb,
	.rand = rand_cb,
	.get_new_connection_id = new_cid_cb,
	.remove_connection_id = remove_cid_cb,
	.update_key = ngtcp2_crypto_update_key_cb,
	.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
	.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
	.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
	.version_negotiation = ngtcp2_crypto_version_negotiation_cb,
};

/* ---- TLS ---- */

static int psk_server_cb(gnutls_session_t session, const char *username, gnutls_datum_t *key)
{
	struct conn *c = ((ngtcp2_crypto_conn_ref *)gnutls_session_get_ptr(session))->user_data;
	if (strcmp(username, PSK_USER) != 0) {
		return -1;
	}
	key->data = gnutls_malloc(c->ep->key.size);
	if (!key->data) {
		return -1;
	}
	memcpy(key->data, c->ep->key.data, c->ep->key.size);
	key->size = c->ep->key.size;
	return 0;
}

static bool tls_init(struct conn *c, char *err, size_t err_size)
{
	struct quic_endpoint *ep = c->ep;
	unsigned flags = ep->server ? GNUTLS_SERVER : GNUTLS_CLIENT;
	int rv = gnutls_init(&c->tls, flags | GNUTLS_NO_END_OF_EARLY_DATA);
	if (rv != 0) {
		set_err(err, err_size, "gnutls_init: %s", gnutls_strerror(rv));
		return false;
	}
	rv = ep->server ? ngtcp2_crypto_gnutls_configure_server_session(c->tls)
			: ngtcp2_crypto_gnutls_configure_client_session(c->tls);
	if (rv != 0) {
		set_err(err, err_size, "cannot set QUIC up in GnuTLS");
		return false;
	}
	rv = gnutls_priority_set_direct(c->tls, priority, NULL);
	if (rv == 0) {
		rv = ep->server ? gnutls_credentials_set(c->tls, GNUTLS_CRD_PSK, ep->psk_server)
				: gnutls_credentials_set(c->tls, GNUTLS_CRD_PSK, ep->psk_client);
	}
	if (rv != 0) {
		set_err(err, err_size, "GnuTLS: %s", gnutls_strerror(rv));
		return false;
	}
	c->ref.get_conn = get_conn;
	c->ref.user_data = c;
	gnutls_session_set_ptr(c->tls, &c->ref);
	const gnutls_datum_t alpn = {(unsigned char *)QUIC_ALPN, sizeof(QUIC_ALPN) - 1};
	gnutls_alpn_set_protocols(c->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY);
	return true;
}

/* ---- connections ---- */

static void conn_settings(ngtcp2_settings *settings, ngtcp2_transport_params *params)
{
	ngtcp2_settings_default(settings);
	settings->handshake_timeout = 10 * NGTCP2_SECONDS;
	settings->initial_ts = now_ns();
	/* BBR: random loss is no reason to slow down, a full queue is. */
	settings->cc_algo = NGTCP2_CC_ALGO_BBR;
	settings->max_tx_udp_payload_size = PACKET_MAX;
	ngtcp2_transport_params_default(params);
	params->initial_max_stream_data_bidi_local = RECV_WINDOW;
	params->initial_max_stream_data_bidi_remote = RECV_WINDOW;
	params->initial_max_data = RECV_WINDOW;
	params->initial_max_streams_bidi = 1;
	params->initial_max_streams_uni = 0;
	params->max_idle_timeout = IDLE_TIMEOUT_NS;
	params->active_connection_id_limit = MAX_CIDS;
}

static void conn_free(struct conn *c)
{
	if (c->conn) {
		ngtcp2_conn_del(c->conn);
	}
	if (c->tls) {
		gnutls_deinit(c->tls);
	}
	if (c->fd >= 0) {
		close(c->fd);
	}
	if (c->user_fd >= 0) {
		close(c->user_fd);
	}
	free(c->sbuf);
	free(c->rbuf);
	memset(c, 0, sizeof(*c));
	c->fd = c->user_fd = -1;
}

static struct conn *conn_alloc(struct quic_endpoint *ep, char *err, size_t err_size)
{
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &ep->conns[i];
		if (c->used) {
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->used = true;
		c->ep = ep;
		c->stream_id = -1;
		c->fd = c->user_fd = -1;
		int pair[2];
		c->sbuf = malloc(SEND_MAX);
		c->rbuf = malloc(RECV_WINDOW);
		if (!c->sbuf || !c->rbuf ||
			socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) <
				0) {
			set_err(err, err_size, "no room for a connection: %s", strerror(errno));
			conn_free(c);
			return NULL;
		}
		c->fd = pair[0];
		c->user_fd = pair[1];
		/* The program's end blocks as a TCP socket's does by default. */
		fcntl(c->user_fd, F_SETFL, fcntl(c->user_fd, F_GETFL) & ~O_NONBLOCK);
		return c;
	}
	set_err(err, err_size, "too many connections");
	return NULL;
}

static void send_packet(struct quic_endpoint *ep, const ngtcp2_path *path, const uint8_t *data,
	size_t len)
{
	ssize_t n;
	do {
		n = sendto(ep->udp, data, len, 0, path->remote.addr, path->remote.addrlen);
	} while (n < 0 && errno == EINTR);
	pthread_mutex_lock(&ep->lock);
	if (n == (ssize_t)len) {
		ep->packets_out++;
		ep->bytes_out += len;
	} else {
		ep->dropped++; /* a full socket: QUIC sends it again */
	}
	pthread_mutex_unlock(&ep->lock);
}

/* Reads what the program wrote, into what waits to be acknowledged. */
static void read_program(struct conn *c)
{
	while (!c->app_eof && c->s_read - c->s_acked < SEND_MAX) {
		size_t at = (size_t)(c->s_read % SEND_MAX);
		size_t room = SEND_MAX - (size_t)(c->s_read - c->s_acked);
		size_t chunk = SEND_MAX - at < room ? SEND_MAX - at : room;
		ssize_t n = read(c->fd, c->sbuf + at, chunk);
		if (n == 0) {
			c->app_eof = true;
		} else if (n < 0) {
			if (errno != EAGAIN && errno != EINTR) {
				c->app_eof = true;
			}
			break;
		} else {
			c->s_read += (uint64_t)n;
		}
	}
}

/* Writes packets while QUIC has something to send; false once the
 * connection is over. */
static bool conn_write(struct conn *c)
{
	uint8_t buf[PACKET_MAX];
	ngtcp2_path_storage ps;
	ngtcp2_path_storage_zero(&ps);
	ngtcp2_pkt_info pi;
	uint64_t ts = now_ns();
	/* A packet under construction (NGTCP2_ERR_WRITE_MORE) is always
	 * finished before this returns: ngtcp2 asserts so when reading next. */
	for (int packets = 0; packets < 64;) {
		ngtcp2_vec vec[2];
		size_t nvec = 0;
		int64_t sid = -1;
		uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;
		if (c->stream_id >= 0 && ngtcp2_conn_get_handshake_completed(c->conn)) {
			sid = c->stream_id;
			size_t unsent = (size_t)(c->s_read - c->s_sent);
			size_t at = (size_t)(c->s_sent % SEND_MAX);
			if (unsent > 0) {
				/* The ring's unsent bytes, in two pieces where it wraps. */
				vec[0].base = c->sbuf + at;
				vec[0].len = SEND_MAX - at < unsent ? SEND_MAX - at : unsent;
				nvec = 1;
				if (vec[0].len < unsent) {
					vec[1].base = c->sbuf;
					vec[1].len = unsent - vec[0].len;
					nvec = 2;
				}
			}
			if (c->app_eof && !c->fin_sent) {
				flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
			} else if (nvec == 0) {
				sid = -1;
			}
		}
		ngtcp2_ssize accepted = -1;
		ngtcp2_ssize n = ngtcp2_conn_writev_stream(c->conn, &ps.path, &pi, buf, sizeof(buf),
			&accepted, flags, sid, nvec ? vec : NULL, nvec, ts);
		if (accepted > 0) {
			c->s_sent += (uint64_t)accepted;
		}
		if (accepted >= 0 && (flags & NGTCP2_WRITE_STREAM_FLAG_FIN) &&
			c->s_sent == c->s_read) {
			c->fin_sent = true;
		}
		if (n == NGTCP2_ERR_WRITE_MORE) {
			continue;
		}
		if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED || n == NGTCP2_ERR_STREAM_SHUT_WR) {
			/* Nothing more of the stream for now: send the rest. */
			n = ngtcp2_conn_writev_stream(c->conn, &ps.path, &pi, buf, sizeof(buf),
				NULL, 0, -1, NULL, 0, ts);
		}
		if (n < 0) {
			ngtcp2_connection_close_error_set_transport_error_liberr(&c->error, (int)n,
				NULL, 0);
			return false;
		}
		if (n == 0) {
			return true;
		}
		send_packet(c->ep, &ps.path, buf, (size_t)n);
		packets++;
	}
	return true;
}

static void conn_close(struct conn *c)
{
	if (c->conn && !ngtcp2_conn_is_in_closing_period(c->conn) &&
		!ngtcp2_conn_is_in_draining_period(c->conn)) {
		uint8_t buf[PACKET_MAX];
		ngtcp2_path_storage ps;
		ngtcp2_path_storage_zero(&ps);
		ngtcp2_pkt_info pi;
		ngtcp2_ssize n = ngtcp2_conn_write_connection_close(c->conn, &ps.path, &pi, buf,
			sizeof(buf), &c->error, now_ns());
		if (n > 0) {
			send_packet(c->ep, &ps.path, buf, (size_t)n);
		}
	}
	conn_free(c);
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

/* A client's first packet: a new connection, if it is one. */
static struct conn *server_accept(struct quic_endpoint *ep, const uint8_t *data, size_t len,
	const struct sockaddr *from, socklen_t from_len)
{
	ngtcp2_pkt_hd hd;
	if (ngtcp2_accept(&hd, data, len) != 0) {
		return NULL;
	}
	char err[256];
	struct conn *c = conn_alloc(ep, err, sizeof(err));
	if (!c) {
		return NULL;
	}
	ngtcp2_cid scid;
	scid.datalen = SCID_LEN;
	if (!random_bytes(scid.data, scid.datalen)) {
		conn_free(c);
		return NULL;
	}
	c->cids[c->ncids++] = scid;
	c->odcid = hd.dcid;
	ngtcp2_settings settings;
	ngtcp2_transport_params params;
	conn_settings(&settings, &params);
	params.original_dcid = hd.dcid;
	params.stateless_reset_token_present = 1;
	if (!random_bytes(params.stateless_reset_token, sizeof(params.stateless_reset_token))) {
		conn_free(c);
		return NULL;
	}
	ngtcp2_callbacks callbacks = base_callbacks;
	callbacks.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
	ngtcp2_path path = {{(struct sockaddr *)&ep->local, ep->local_len},
		{(struct sockaddr *)from, from_len}, NULL};
	if (ngtcp2_conn_server_new(&c->conn, &hd.scid, &scid, &path, hd.version, &callbacks,
		    &settings, &params, NULL, c) != 0 ||
		!tls_init(c, err, sizeof(err))) {
		conn_free(c);
		return NULL;
	}
	ngtcp2_conn_set_tls_native_handle(c->conn, c->tls);
	return c;
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

static void offer(struct conn *c)
{
	struct quic_endpoint *ep = c->ep;
	if (c->announced || !ngtcp2_conn_get_handshake_completed(c->conn)) {
		return;
	}
	c->announced = true;
	pthread_mutex_lock(&ep->lock);
	if (ep->naccept < MAX_CONNS) {
		ep->accept_queue[ep->naccept++] = c->user_fd;
		c->user_fd = -1;
	}
	pthread_mutex_unlock(&ep->lock);
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
			c = server_accept(ep, buf, (size_t)n, (struct sockaddr *)&from, from_len);
		}
		if (!c) {
			continue;
		}
		ngtcp2_path path = {{(struct sockaddr *)&ep->local, ep->local_len},
			{(struct sockaddr *)&from, from_len}, NULL};
		ngtcp2_pkt_info pi = {0};
		int rv = ngtcp2_conn_read_pkt(c->conn, &path, &pi, buf, (size_t)n, now_ns());
		if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_DROP_CONN) {
			if (!ep->server) {
				/* Closed by the server: in the handshake, a TLS alert
				 * (0x100 + alert) is a key that does not match. */
				ngtcp2_connection_close_error cc;
				ngtcp2_conn_get_connection_close_error(c->conn, &cc);
				bool tls = cc.type ==
						NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_TRANSPORT &&
					(cc.error_code & ~0xffull) == NGTCP2_CRYPTO_ERROR;
				if (ngtcp2_conn_get_handshake_completed(c->conn)) {
					fail(ep, "the server closed the connection");
				} else {
					fail(ep, "%s",
						tls ? "the server refused the handshake: the "
						      "session key does not match"
						    : "the server closed the connection in the "
						      "handshake");
				}
			}
			conn_free(c);
			continue;
		}
		if (rv != 0) {
			if (!ngtcp2_conn_get_handshake_completed(c->conn) && !ep->server) {
				fail(ep, "QUIC handshake: %s",
					rv == NGTCP2_ERR_CRYPTO ? "the key does not match"
								: ngtcp2_strerror(rv));
			}
			if (rv == NGTCP2_ERR_CRYPTO) {
				ngtcp2_connection_close_error_set_transport_error_tls_alert(
					&c->error, ngtcp2_conn_get_tls_alert(c->conn), NULL, 0);
			} else {
				ngtcp2_connection_close_error_set_transport_error_liberr(&c->error,
					rv, NULL, 0);
			}
			conn_close(c);
			continue;
		}
		offer(c);
	}
}

static void *endpoint_thread(void *data)
{
	struct quic_endpoint *ep = data;
	for (;;) {
		struct pollfd pfd[3 + MAX_CONNS];
		int map[3 + MAX_CONNS];
		int n = 0;
		pfd[n++] = (struct pollfd){.fd = ep->wake[0], .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = ep->udp, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = ep->netlink, .events = POLLIN};
		uint64_t now = now_ns(), next = UINT64_MAX;
		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &ep->conns[i];
			if (!c->used) {
				continue;
			}
			uint64_t expiry = ngtcp2_conn_get_expiry(c->conn);
			next = expiry < next ? expiry : next;
			short events = 0;
			if (!c->app_eof && c->s_read - c->s_acked < SEND_MAX && c->stream_id >= 0) {
				events |= POLLIN;
			}
			if (c->r_len > 0) {
				events |= POLLOUT;
			}
			map[n] = i;
			pfd[n++] = (struct pollfd){.fd = c->fd, .events = events};
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
			break; /* quic_close */
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
			if (pfd[k].revents & POLLOUT) {
				flush_to_program(c);
			}
			if (pfd[k].revents & (POLLIN | POLLHUP)) {
				read_program(c);
			}
		}
		now = now_ns();
		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &ep->conns[i];
			if (!c->used) {
				continue;
			}
			if (ngtcp2_conn_get_expiry(c->conn) <= now) {
				int rv = ngtcp2_conn_handle_expiry(c->conn, now);
				if (rv != 0) {
					if (!ep->server) {
						fail(ep, "%s",
							ngtcp2_conn_get_handshake_completed(c->conn)
								? "no answer from the server for "
								  "30 s"
								: "no answer to the QUIC "
								  "handshake");
					}
					conn_free(c); /* idle or timed out: nothing to say */
					continue;
				}
			}
			bool all_acked = c->s_acked == c->s_read;
			bool done = c->fin_sent && all_acked && c->closing && c->r_len == 0;
			if (!conn_write(c) || done ||
				(c->app_eof && c->r_len == 0 && c->fin_sent && all_acked)) {
				conn_close(c);
			}
		}
	}
	for (int i = 0; i < MAX_CONNS; i++) {
		if (ep->conns[i].used) {
			conn_close(&ep->conns[i]);
		}
	}
	return NULL;
}

static struct quic_endpoint *endpoint_new(bool server, const uint8_t *key, size_t key_len,
	char *err, size_t err_size)
{
	if (key_len == 0 || key_len > QUIC_KEY_MAX) {
		set_err(err, err_size, "the session key must be 1 to %d bytes", QUIC_KEY_MAX);
		return NULL;
	}
	struct quic_endpoint *ep = calloc(1, sizeof(*ep));
	if (!ep) {
		set_err(err, err_size, "out of memory");
		return NULL;
	}
	ep->server = server;
	ep->udp = ep->wake[0] = ep->wake[1] = ep->ready[0] = ep->ready[1] = ep->netlink = -1;
	for (int i = 0; i < MAX_CONNS; i++) {
		ep->conns[i].fd = ep->conns[i].user_fd = -1;
	}
	pthread_mutex_init(&ep->lock, NULL);
	ep->key.data = gnutls_malloc(key_len);
	if (!ep->key.data || pipe2(ep->wake, O_CLOEXEC | O_NONBLOCK) < 0 ||
		pipe2(ep->ready, O_CLOEXEC | O_NONBLOCK) < 0) {
		set_err(err, err_size, "cannot set an endpoint up: %s", strerror(errno));
		quic_close(ep);
		return NULL;
	}
	memcpy(ep->key.data, key, key_len);
	ep->key.size = (unsigned)key_len;
	int rv = server ? gnutls_psk_allocate_server_credentials(&ep->psk_server)
			: gnutls_psk_allocate_client_credentials(&ep->psk_client);
	if (rv == 0 && server) {
		gnutls_psk_set_server_credentials_function(ep->psk_server, psk_server_cb);
	} else if (rv == 0) {
		rv = gnutls_psk_set_client_credentials(ep->psk_client, PSK_USER, &ep->key,
			GNUTLS_PSK_KEY_RAW);
	}
	if (rv != 0) {
		set_err(err, err_size, "GnuTLS: %s", gnutls_strerror(rv));
		quic_close(ep);
		return NULL;
	}
	return ep;
}

static bool open_udp(struct quic_endpoint *ep, int family, const struct sockaddr *bind_to,
	socklen_t bind_len, char *err, size_t err_size)
{
	ep->udp = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (ep->udp < 0) {
		set_err(err, err_size, "cannot open a UDP socket: %s", strerror(errno));
		return false;
	}
	if (bind_to && bind(ep->udp, bind_to, bind_len) < 0) {
		set_err(err, err_size, "cannot bind UDP: %s", strerror(errno));
		return false;
	}
	ep->local_len = sizeof(ep->local);
	if (getsockname(ep->udp, (struct sockaddr *)&ep->local, &ep->local_len) < 0) {
		set_err(err, err_size, "getsockname: %s", strerror(errno));
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
			int rv = ngtcp2_conn_initiate_immediate_migration(c->conn, &path, now_ns());
			pthread_mutex_lock(&ep->lock);
			ep->migrations += rv == 0;
			pthread_mutex_unlock(&ep->lock);
		}
	}
}

static bool start_thread(struct quic_endpoint *ep, char *err, size_t err_size)
{
	if (pthread_create(&ep->thread, NULL, endpoint_thread, ep) != 0) {
		set_err(err, err_size, "cannot start the QUIC thread");
		return false;
	}
	ep->thread_started = true;
	return true;
}

struct quic_endpoint *quic_listen(const char *addr_port, const uint8_t *key, size_t key_len,
	char *err, size_t err_size)
{
	struct quic_endpoint *ep = endpoint_new(true, key, key_len, err, err_size);
	if (!ep) {
		return NULL;
	}
	struct sockaddr_storage addr;
	socklen_t addr_len;
	if (!resolve(addr_port, true, &addr, &addr_len, err, err_size) ||
		!open_udp(ep, addr.ss_family, (struct sockaddr *)&addr, addr_len, err, err_size) ||
		!start_thread(ep, err, err_size)) {
		quic_close(ep);
		return NULL;
	}
	return ep;
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

int quic_accept(struct quic_endpoint *ep)
{
	char drain[64];
	while (read(ep->ready[0], drain, sizeof(drain)) > 0) {
	}
	int fd = -1;
	pthread_mutex_lock(&ep->lock);
	if (ep->naccept > 0) {
		fd = ep->accept_queue[0];
		memmove(ep->accept_queue, ep->accept_queue + 1,
			(size_t)(ep->naccept - 1) * sizeof(int));
		ep->naccept--;
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
	/* Address changes, to move the connection along with this machine. */
	ep->netlink = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (ep->netlink >= 0) {
		struct sockaddr_nl nl = {.nl_family = AF_NETLINK,
			.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR};
		if (bind(ep->netlink, (struct sockaddr *)&nl, sizeof(nl)) < 0) {
			close(ep->netlink);
			ep->netlink = -1; /* no roaming, the rest works */
		}
	}
	struct conn *c = conn_alloc(ep, err, err_size);
	if (!c) {
		quic_close(ep);
		return -1;
	}
	ngtcp2_cid dcid, scid;
	dcid.datalen = NGTCP2_MIN_INITIAL_DCIDLEN;
	scid.datalen = SCID_LEN;
	if (!random_bytes(dcid.data, dcid.datalen) || !random_bytes(scid.data, scid.datalen)) {
		set_err(err, err_size, "no random numbers");
		quic_close(ep);
		return -1;
	}
	c->cids[c->ncids++] = scid;
	ngtcp2_settings settings;
	ngtcp2_transport_params params;
	conn_settings(&settings, &params);
	settings.handshake_timeout = (uint64_t)timeout_ms * NGTCP2_MILLISECONDS;
	ngtcp2_callbacks callbacks = base_callbacks;
	callbacks.client_initial = ngtcp2_crypto_client_initial_cb;
	callbacks.recv_retry = ngtcp2_crypto_recv_retry_cb;
	ngtcp2_path path = {{(struct sockaddr *)&ep->local, ep->local_len},
		{(struct sockaddr *)&ep->remote, ep->remote_len}, NULL};
	if (ngtcp2_conn_client_new(&c->conn, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &callbacks,
		    &settings, &params, NULL, c) != 0 ||
		!tls_init(c, err, err_size)) {
		if (!*err) {
			set_err(err, err_size, "cannot start a QUIC connection");
		}
		quic_close(ep);
		return -1;
	}
	ngtcp2_conn_set_tls_native_handle(c->conn, c->tls);
	/* The program writes at once; the stream opens with the handshake. */
	int fd = c->user_fd;
	c->user_fd = -1;
	c->announced = true;
	if (!conn_write(c) || !start_thread(ep, err, err_size)) {
		if (!*err) {
			set_err(err, err_size, "cannot send to %s", host_port);
		}
		close(fd);
		quic_close(ep);
		return -1;
	}
	*out = ep;
	return fd;
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
				conn_free(&ep->conns[i]);
			}
		}
	}
	for (int i = 0; i < ep->naccept; i++) {
		close(ep->accept_queue[i]);
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
	pthread_mutex_destroy(&ep->lock);
	free(ep);
}

void quic_describe(struct quic_endpoint *ep, char *out, size_t size)
{
	pthread_mutex_lock(&ep->lock);
	snprintf(out, size,
		"udp %llu packets in (%.2f MB), %llu out (%.2f MB), %llu not sent, %llu moves",
		(unsigned long long)ep->packets_in, (double)ep->bytes_in / 1e6,
		(unsigned long long)ep->packets_out, (double)ep->bytes_out / 1e6,
		(unsigned long long)ep->dropped, (unsigned long long)ep->migrations);
	pthread_mutex_unlock(&ep->lock);
}
