/*
 * One QUIC connection (quic-private.h): ngtcp2's callbacks, the TLS 1.3
 * session keyed by the pre-shared token, and the stream's two buffers
 * between QUIC and the program's socketpair. Stream bytes read from the
 * program stay in a ring until the peer acknowledges them (QUIC may send
 * them again, from where they lie); bytes received are taken from the peer
 * only as fast as the program reads them.
 */
#include <errno.h>
#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "quic-private.h"

static const char priority[] =
	"NORMAL:-VERS-ALL:+VERS-TLS1.3:-KX-ALL:+ECDHE-PSK:-CIPHER-ALL:+AES-128-GCM:"
	"+AES-256-GCM:+CHACHA20-POLY1305:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:"
	"%DISABLE_TLS13_COMPAT_MODE";

uint64_t quic_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NGTCP2_SECONDS + (uint64_t)ts.tv_nsec;
}

void quic_set_err(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

bool quic_random(void *out, size_t len)
{
	return gnutls_rnd(GNUTLS_RND_RANDOM, out, len) == 0;
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
	if (!quic_random(dest, len)) {
		memset(dest, 0, len);
	}
}

static int new_cid_cb(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t cidlen,
	void *user_data)
{
	struct conn *c = user_data;
	if (!quic_random(cid->data, cidlen) ||
		!quic_random(token, NGTCP2_STATELESS_RESET_TOKENLEN)) {
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

/*
 * ngtcp2 0.12 arms no probe timer for packets of datagrams alone: if every
 * packet in flight is lost, nothing is ever declared lost, the congestion
 * window stays full of them, and both ends wait for each other. So while a
 * lane has records not known to be rebuilt, a heartbeat goes on the stream
 * once a round trip: stream data QUIC retransmits and probes for, which
 * brings the acknowledgements that declare the datagrams' fate. It is a
 * record header no channel writes (class 0xff, length 0), taken out at the
 * far end.
 */
static const uint8_t heartbeat[CHANNEL_RECORD_HEADER] = {0xff, 0, 0, 0};

/* Moves the stream's whole units to the program's queue while it is short,
 * and opens the stream's window by as much: the first message, after which
 * the lanes' records may follow, then records. False if the peer broke the
 * framing. */
static bool stream_units(struct conn *c)
{
	size_t moved = 0;
	while (buffer_size(&c->to_program) < TO_PROGRAM_SOFT) {
		const uint8_t *p = buffer_head(&c->stream_in);
		size_t n = buffer_size(&c->stream_in);
		enum channel_class cls;
		if (c->first_in && n >= sizeof(heartbeat) &&
			memcmp(p, heartbeat, sizeof(heartbeat)) == 0) {
			/* Ours, not the program's. */
			buffer_consume(&c->stream_in, sizeof(heartbeat));
			moved += sizeof(heartbeat);
			continue;
		}
		size_t unit =
			c->first_in ? channel_record_size(p, n, &cls) : channel_first_size(p, n);
		if (unit == SIZE_MAX) {
			snprintf(c->why, sizeof(c->why), "the stream is not records");
			return false;
		}
		if (unit == 0 || unit > n) {
			break;
		}
		if (!buffer_append(&c->to_program, p, unit)) {
			snprintf(c->why, sizeof(c->why), "no room for the program's input");
			return false;
		}
		buffer_consume(&c->stream_in, unit);
		moved += unit;
		if (!c->first_in) {
			c->first_in = true;
			if (!lanes_open(c->lanes, &c->to_program, c->why, sizeof(c->why))) {
				return false;
			}
		}
	}
	if (moved && c->stream_id >= 0) {
		ngtcp2_conn_extend_max_stream_offset(c->conn, c->stream_id, moved);
		ngtcp2_conn_extend_max_offset(c->conn, moved);
	}
	return true;
}

/* What waits for the program goes to it as far as it reads. False if the
 * peer broke the stream's framing. */
bool quic_flush_to_program(struct conn *c)
{
	for (;;) {
		while (buffer_size(&c->to_program) > 0) {
			ssize_t n = write(c->fd, buffer_head(&c->to_program),
				buffer_size(&c->to_program));
			if (n <= 0) {
				if (n < 0 && errno != EAGAIN && errno != EINTR) {
					c->app_eof = true; /* the program is gone */
					buffer_consume(&c->to_program, buffer_size(&c->to_program));
				}
				break;
			}
			buffer_consume(&c->to_program, (size_t)n);
		}
		size_t before = buffer_size(&c->stream_in);
		if (!stream_units(c)) {
			return false;
		}
		if (buffer_size(&c->stream_in) == before || buffer_size(&c->to_program) == 0 ||
			c->app_eof) {
			return true;
		}
	}
}

static int fail_cb(struct conn *c)
{
	ngtcp2_connection_close_error_set_application_error(&c->error, 1, (uint8_t *)c->why,
		strlen(c->why));
	return NGTCP2_ERR_CALLBACK_FAILURE;
}

static int recv_stream_data_cb(ngtcp2_conn *conn, uint32_t flags, int64_t stream_id,
	uint64_t offset, const uint8_t *data, size_t datalen, void *user_data,
	void *stream_user_data)
{
	struct conn *c = user_data;
	if (stream_id != c->stream_id) {
		return 0; /* one stream is all rcomp opens */
	}
	/* The window keeps the peer to RECV_WINDOW beyond what went to the
	 * program's queue, so this fits. */
	if (datalen > 0 && !buffer_append(&c->stream_in, data, datalen)) {
		snprintf(c->why, sizeof(c->why), "the stream passed its window");
		return fail_cb(c);
	}
	if (!quic_flush_to_program(c)) {
		return fail_cb(c);
	}
	if (flags & NGTCP2_STREAM_DATA_FLAG_FIN) {
		c->closing = true; /* the peer is done: so are we, once flushed */
	}
	return 0;
}

static int recv_datagram_cb(ngtcp2_conn *conn, uint32_t flags, const uint8_t *data, size_t datalen,
	void *user_data)
{
	struct conn *c = user_data;
	if (!lanes_receive(c->lanes, data, datalen, &c->to_program, c->why, sizeof(c->why)) ||
		!quic_flush_to_program(c)) {
		return fail_cb(c);
	}
	return 0;
}

static int ack_datagram_cb(ngtcp2_conn *conn, uint64_t id, void *user_data)
{
	struct conn *c = user_data;
	lanes_acked(c->lanes, id);
	return 0;
}

static int lost_datagram_cb(ngtcp2_conn *conn, uint64_t id, void *user_data)
{
	struct conn *c = user_data;
	lanes_lost(c->lanes, id);
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

const ngtcp2_callbacks quic_callbacks = {
	.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
	.encrypt = ngtcp2_crypto_encrypt_cb,
	.decrypt = ngtcp2_crypto_decrypt_cb,
	.hp_mask = ngtcp2_crypto_hp_mask_cb,
	.recv_stream_data = recv_stream_data_cb,
	.recv_datagram = recv_datagram_cb,
	.ack_datagram = ack_datagram_cb,
	.lost_datagram = lost_datagram_cb,
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

int quic_psk_server_cb(gnutls_session_t session, const char *username, gnutls_datum_t *key)
{
	struct conn *c = ((ngtcp2_crypto_conn_ref *)gnutls_session_get_ptr(session))->user_data;
	const gnutls_datum_t *want = NULL;
	struct quic_endpoint *ep = c->ep;
	gnutls_datum_t move = {0};
	if (strcmp(username, PSK_USER) == 0) {
		want = &ep->key;
		c->full_key = true;
	} else if (strcmp(username, PSK_WATCH_USER) == 0 && ep->watch_key.size) {
		want = &ep->watch_key;
		c->watch = true;
	} else if (strncmp(username, PSK_MOVE_USER, strlen(PSK_MOVE_USER)) == 0) {
		/* One viewer's key: a copy, under the lock the program sets
		 * them with. */
		char *end;
		const char *n = username + strlen(PSK_MOVE_USER);
		long slot = strtol(n, &end, 10);
		if (end == n || *end || slot < 0 || slot >= MOVE_SLOTS) {
			return -1;
		}
		pthread_mutex_lock(&ep->lock);
		size_t len = ep->move_key_lens[slot];
		move.data = len ? gnutls_malloc(len) : NULL;
		if (move.data) {
			memcpy(move.data, ep->move_keys[slot], len);
			move.size = (unsigned)len;
		}
		pthread_mutex_unlock(&ep->lock);
		if (!move.data) {
			return -1;
		}
		c->move_slot = (int)slot;
		c->full_key = true;
		*key = move;
		return 0;
	}
	if (!want) {
		return -1;
	}
	key->data = gnutls_malloc(want->size);
	if (!key->data) {
		return -1;
	}
	memcpy(key->data, want->data, want->size);
	key->size = want->size;
	return 0;
}

bool quic_tls_init(struct conn *c, char *err, size_t err_size)
{
	struct quic_endpoint *ep = c->ep;
	unsigned flags = ep->server ? GNUTLS_SERVER : GNUTLS_CLIENT;
	int rv = gnutls_init(&c->tls, flags | GNUTLS_NO_END_OF_EARLY_DATA);
	if (rv != 0) {
		quic_set_err(err, err_size, "gnutls_init: %s", gnutls_strerror(rv));
		return false;
	}
	rv = ep->server ? ngtcp2_crypto_gnutls_configure_server_session(c->tls)
			: ngtcp2_crypto_gnutls_configure_client_session(c->tls);
	if (rv != 0) {
		quic_set_err(err, err_size, "cannot set QUIC up in GnuTLS");
		return false;
	}
	rv = gnutls_priority_set_direct(c->tls, priority, NULL);
	if (rv == 0) {
		rv = ep->server ? gnutls_credentials_set(c->tls, GNUTLS_CRD_PSK, ep->psk_server)
				: gnutls_credentials_set(c->tls, GNUTLS_CRD_PSK, ep->psk_client);
	}
	if (rv != 0) {
		quic_set_err(err, err_size, "GnuTLS: %s", gnutls_strerror(rv));
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

void quic_conn_settings(ngtcp2_settings *settings, ngtcp2_transport_params *params)
{
	ngtcp2_settings_default(settings);
	settings->handshake_timeout = 10 * NGTCP2_SECONDS;
	settings->initial_ts = quic_now_ns();
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
	/* A DATAGRAM frame: its type and length, then a lane's datagram. */
	params->max_datagram_frame_size = LANES_DATAGRAM_MAX + 16;
}

void quic_conn_free(struct conn *c)
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
	buffer_finish(&c->staged);
	buffer_finish(&c->stream_in);
	buffer_finish(&c->to_program);
	lanes_free(c->lanes);
	memset(c, 0, sizeof(*c));
	c->fd = c->user_fd = -1;
}

struct conn *quic_conn_alloc(struct quic_endpoint *ep, char *err, size_t err_size)
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
		c->move_slot = -1;
		c->fd = c->user_fd = -1;
		int pair[2];
		c->lanes = lanes_new();
		buffer_init(&c->staged, STAGED_MAX);
		buffer_init(&c->stream_in, RECV_WINDOW);
		buffer_init(&c->to_program, TO_PROGRAM_MAX);
		if (!c->lanes ||
			socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) <
				0) {
			quic_set_err(err, err_size, "no room for a connection: %s",
				strerror(errno));
			quic_conn_free(c);
			return NULL;
		}
		c->fd = pair[0];
		c->user_fd = pair[1];
		return c;
	}
	quic_set_err(err, err_size, "too many connections");
	return NULL;
}

/* Whether the stream's ring has room for n more bytes. The ring is made
 * when the program first writes, so a handshake that never completes holds
 * none of it. */
static bool ring_room(struct conn *c, size_t n)
{
	if (!c->sbuf && !(c->sbuf = malloc(SEND_MAX))) {
		return false; /* tried again at the program's next bytes */
	}
	return SEND_MAX - (c->s_read - c->s_acked) >= n;
}

/* Copies n bytes into the stream's ring, which has room for them. */
static void ring_put(struct conn *c, const uint8_t *p, size_t n)
{
	size_t at = (size_t)(c->s_read % SEND_MAX);
	size_t first = SEND_MAX - at < n ? SEND_MAX - at : n;
	memcpy(c->sbuf + at, p, first);
	memcpy(c->sbuf, p + first, n - first);
	c->s_read += n;
}

/* The size of the unit at the front of what the program wrote (0 or more
 * than is staged: not whole yet), and its class (bulk for the first). */
static size_t staged_unit(const struct conn *c, enum channel_class *cls)
{
	const uint8_t *p = buffer_head(&c->staged);
	size_t n = buffer_size(&c->staged);
	*cls = CHANNEL_BULK;
	size_t unit = c->first_out ? channel_record_size(p, n, cls) : channel_first_size(p, n);
	/* Not ours to judge: it goes on the stream, and the peer refuses it. */
	return unit == SIZE_MAX ? n : unit;
}

/* Sends each whole unit the program wrote on its way: the first message and
 * bulk to the stream's ring, the other classes to their lanes, while each
 * has room. True when what stays staged is less than a unit. */
static bool route(struct conn *c)
{
	for (;;) {
		const uint8_t *p = buffer_head(&c->staged);
		enum channel_class cls;
		size_t unit = staged_unit(c, &cls);
		if (unit == 0 || unit > buffer_size(&c->staged)) {
			return true;
		}
		if (lanes_carry(cls) && c->first_out) {
			if (!lanes_queue(c->lanes, p, unit)) {
				return false;
			}
		} else {
			if (!ring_room(c, unit)) {
				return false;
			}
			ring_put(c, p, unit);
		}
		c->first_out = true;
		buffer_consume(&c->staged, unit);
	}
}

/* Reads what the program wrote, and routes it. */
void quic_read_program(struct conn *c)
{
	while (!c->app_eof && buffer_size(&c->staged) < STAGED_MAX) {
		size_t room = STAGED_MAX - buffer_size(&c->staged);
		uint8_t *dst = buffer_reserve(&c->staged, room);
		if (!dst) {
			break;
		}
		ssize_t n = read(c->fd, dst, room);
		if (n == 0) {
			c->app_eof = true;
		} else if (n < 0) {
			if (errno != EAGAIN && errno != EINTR) {
				c->app_eof = true;
			}
			break;
		} else {
			buffer_commit(&c->staged, (size_t)n);
			if (!route(c)) {
				break;
			}
		}
	}
}

/* Whether what stays staged is less than a unit: all else was routed. */
static bool routed(const struct conn *c)
{
	enum channel_class cls;
	size_t unit = staged_unit(c, &cls);
	return unit == 0 || unit > buffer_size(&c->staged);
}

/* QUIC's probe timeout (RFC 9002): the smoothed round trip, four times its
 * variance, and the peer's most delay of an acknowledgement (the default
 * 25 ms: neither end changes it). */
uint64_t quic_conn_probe_timeout(struct conn *c)
{
	ngtcp2_conn_stat cs;
	ngtcp2_conn_get_conn_stat(c->conn, &cs);
	uint64_t var = 4 * cs.rttvar > NGTCP2_MILLISECONDS ? 4 * cs.rttvar : NGTCP2_MILLISECONDS;
	return cs.smoothed_rtt + var + 25 * NGTCP2_MILLISECONDS;
}

bool quic_conn_all_acked(const struct conn *c)
{
	return routed(c) && c->s_acked == c->s_read && lanes_idle(c->lanes);
}

/* Sends a packet QUIC made, counting it among those with datagrams if it
 * carries one. */
static void send_packet(struct conn *c, const ngtcp2_path *path, const uint8_t *data, size_t len,
	bool *carrying)
{
	quic_send_packet(c->ep, path, data, len, *carrying);
	*carrying = false;
}

/* The heartbeat (see above), once a round trip while lanes have records in
 * flight, where the ring has room. */
static void beat(struct conn *c, uint64_t now)
{
	if (!c->first_out || lanes_idle(c->lanes) || !ring_room(c, sizeof(heartbeat))) {
		return;
	}
	ngtcp2_conn_stat cs;
	ngtcp2_conn_get_conn_stat(c->conn, &cs);
	if (now >= c->heartbeat_at + cs.smoothed_rtt) {
		ring_put(c, heartbeat, sizeof(heartbeat));
		c->heartbeat_at = now;
	}
}

/* Writes packets while QUIC has something to send; false once the
 * connection is over. */
bool quic_conn_write(struct conn *c)
{
	uint8_t buf[PACKET_MAX];
	ngtcp2_path_storage ps;
	ngtcp2_path_storage_zero(&ps);
	ngtcp2_pkt_info pi;
	uint64_t ts = quic_now_ns();
	bool ready = ngtcp2_conn_get_handshake_completed(c->conn);
	bool datagrams = ready;
	bool carrying = false; /* the packet being made has a lane's datagram */
	bool alive = true;
	route(c);
	if (ready) {
		beat(c, ts);
	}
	/* ngtcp2 0.12 acknowledges about SRTT/8 after a packet, and has no
	 * setting for it: on a link where the program sends a little every
	 * frame, that is a packet of its own per frame each way. With nothing
	 * of ours to send, QUIC's packets wait (HOLD_NS) for one of ours to
	 * ride along; but not on a lossy link, where the acknowledgements are
	 * what brings repairs (at 5% loss, holding them cost a second of 47
	 * fps instead of 52). */
	bool ours =
		lanes_pending(c->lanes) || c->s_read > c->s_sent || (c->app_eof && !c->fin_sent);
	if (ready && !ours && !c->closing && !c->app_eof && lanes_loss(c->lanes) < HOLD_LOSS) {
		if (!c->hold_until) {
			c->hold_until = ts + HOLD_NS;
		}
		if (ts < c->hold_until) {
			return true;
		}
	}
	c->hold_until = 0;
	/* A packet under construction (NGTCP2_ERR_WRITE_MORE) is always
	 * finished before this returns: ngtcp2 asserts so when reading next. */
	for (int packets = 0; packets < 64;) {
		/* Datagrams first (every class but bulk), but the stream gets
		 * one packet in sixteen, so a paste always moves on. */
		bool stream_turn = (c->turn & 15) == 15 && c->s_read > c->s_sent;
		if (datagrams && !stream_turn) {
			uint8_t dgram[LANES_DATAGRAM_MAX];
			uint64_t id;
			bool share;
			size_t dlen = lanes_next(c->lanes, dgram, &id, &share);
			if (dlen > 0) {
				int accepted = 0;
				ngtcp2_vec v = {dgram, dlen};
				ngtcp2_ssize n = ngtcp2_conn_writev_datagram(c->conn, &ps.path, &pi,
					buf, sizeof(buf), &accepted,
					share ? NGTCP2_WRITE_DATAGRAM_FLAG_MORE
					      : NGTCP2_WRITE_DATAGRAM_FLAG_NONE,
					id, &v, 1, ts);
				if (n == NGTCP2_ERR_WRITE_MORE) {
					/* In the packet, which has room for more. */
					lanes_commit(c->lanes, ts);
					carrying = true;
					continue;
				}
				if (n < 0) {
					ngtcp2_connection_close_error_set_transport_error_liberr(
						&c->error, (int)n, NULL, 0);
					alive = false;
					break;
				}
				if (accepted) {
					lanes_commit(c->lanes, ts);
				}
				if (n == 0) {
					datagrams = false; /* congestion: what else may go */
					continue;
				}
				carrying |= accepted != 0;
				send_packet(c, &ps.path, buf, (size_t)n, &carrying);
				c->turn++;
				packets++;
				continue;
			}
			datagrams = false;
		}
		ngtcp2_vec vec[2];
		size_t nvec = 0;
		int64_t sid = -1;
		uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;
		if (c->stream_id >= 0 && ready) {
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
			/* The end of the stream comes after every lane's last
			 * record can be rebuilt, so nothing is lost behind it. */
			if (c->app_eof && !c->fin_sent && routed(c) && lanes_idle(c->lanes)) {
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
			alive = false;
			break;
		}
		if (n == 0) {
			if (datagrams && stream_turn) {
				c->turn++; /* the stream could not: back to datagrams */
				continue;
			}
			break;
		}
		send_packet(c, &ps.path, buf, (size_t)n, &carrying);
		c->turn++;
		packets++;
		datagrams = ready;
	}
	/* ngtcp2 paces the packets of the next call from here. */
	ngtcp2_conn_update_pkt_tx_time(c->conn, ts);
	return alive;
}

void quic_conn_close(struct conn *c)
{
	if (c->conn && !ngtcp2_conn_is_in_closing_period(c->conn) &&
		!ngtcp2_conn_is_in_draining_period(c->conn)) {
		uint8_t buf[PACKET_MAX];
		ngtcp2_path_storage ps;
		ngtcp2_path_storage_zero(&ps);
		ngtcp2_pkt_info pi;
		ngtcp2_ssize n = ngtcp2_conn_write_connection_close(c->conn, &ps.path, &pi, buf,
			sizeof(buf), &c->error, quic_now_ns());
		if (n > 0) {
			quic_send_packet(c->ep, &ps.path, buf, (size_t)n, false);
		}
	}
	quic_conn_free(c);
}

void quic_send_packet(struct quic_endpoint *ep, const ngtcp2_path *path, const uint8_t *data,
	size_t len, bool datagrams)
{
	ssize_t n;
	do {
		n = sendto(ep->udp, data, len, 0, path->remote.addr, path->remote.addrlen);
	} while (n < 0 && errno == EINTR);
	pthread_mutex_lock(&ep->lock);
	if (n == (ssize_t)len) {
		ep->packets_out++;
		ep->packets_datagrams += datagrams;
		ep->bytes_out += len;
	} else {
		ep->dropped++; /* a full socket: QUIC sends it again */
	}
	pthread_mutex_unlock(&ep->lock);
}
