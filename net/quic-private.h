/* Inside the QUIC endpoints (quic.c, the endpoint and its thread;
 * quic-conn.c, one connection: its callbacks, TLS and stream buffers). */
#ifndef RCOMP_QUIC_PRIVATE_H
#define RCOMP_QUIC_PRIVATE_H

#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "buffer.h"
#include "lanes.h"
#include "log.h"

struct quic_endpoint;

/* Connections of an endpoint, live or in the handshake (quic-door.c says
 * who gets one). */
#define MAX_CONNS 64
/* Handshakes that did not prove their address the door takes at once,
 * and those one address may hold. */
#define UNVALIDATED_MAX 4
#define HANDSHAKES_PER_ADDRESS 4
#define MAX_CIDS 8
/* Connection IDs: 8 random bytes (QUIC's least for an Initial), as every
 * packet carries one. */
#define SCID_LEN 8
#define PACKET_MAX 1452
#define SEND_MAX (8u << 20) /* read from the program, not yet acknowledged */
#define RECV_WINDOW (4u << 20) /* the peer may send this far ahead of our reads */
/* Read from the program and not yet routed: a record and a read more. */
#define STAGED_MAX (CHANNEL_RECORD_HEADER + CHANNEL_RECORD_MAX + 65536)
/* Whole units waiting for the program: the stream adds to them only below
 * the first, the lanes (whose peer is held to about a round trip by the
 * program's own pacing) up to the second. */
#define TO_PROGRAM_SOFT (4u << 20)
#define TO_PROGRAM_MAX (64u << 20)
/* A path that carries nothing for this long is gone: the viewer reconnects
 * (over ssh again, where ssh introduced it). Its client sends a PING after
 * a third of it without traffic, so an idle session stays up and a NAT
 * keeps its binding (one packet each way every 5 s). */
#define IDLE_TIMEOUT_NS (15ull * NGTCP2_SECONDS)
#define KEEP_ALIVE_NS (5ull * NGTCP2_SECONDS)
/* How long QUIC's own packets (an acknowledgement, mostly) wait for one of
 * ours to ride: less than the 25 ms acknowledgement delay the peer is
 * promised. */
#define HOLD_NS (20ull * NGTCP2_MILLISECONDS)
/* How long a server's quic_close lets the goodbyes its program wrote reach
 * their peers before it closes what is left. */
#define CLOSE_DRAIN_NS (1000ull * NGTCP2_MILLISECONDS)
#define HOLD_LOSS 0.01 /* and only below this loss */
#define PSK_USER "rcomp"
#define PSK_WATCH_USER "rcomp-watch" /* a key that admits watching */
#define PSK_MOVE_USER "rcomp-move-" /* then a slot: one viewer's key (quic.h) */
/* quic.h's QUIC_MOVE_SLOTS, QUIC_KEY_MAX and QUIC_HOST_MAX (quic.c asserts
 * they agree): this header stands below the public one. */
#define MOVE_SLOTS 16
#define KEY_MAX 256
#define HOST_MAX 48
#define QUIC_ALPN "rcomp/1"

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
	struct sockaddr_storage peer; /* where its packets last came from */
	socklen_t peer_len;
	bool validated; /* a server's: its address was proved by a Retry token */
	bool watch; /* a server's: the peer holds the watch key, not the key */
	/* A server's: the peer's ClientHello named the key or a move key and
	 * its binder held (a wrong one ends the connection at once). */
	bool full_key;
	int move_slot; /* a server's: the move key the peer holds; -1: none */
	uint64_t started; /* a server's: when its first Initial came */
	int64_t stream_id; /* -1 until there is one */
	int fd; /* our end of the socketpair; the program has the other */
	int user_fd; /* until the program takes it */
	bool announced; /* handshake done, user_fd offered */
	bool app_eof; /* the program closed its end */
	bool fin_sent;
	bool closing;
	/* From the program: bytes not yet a whole unit (the first message or
	 * a record), then each unit to its lane or to the stream. */
	struct buffer staged;
	bool first_out; /* the program's first message went to the stream */
	struct lanes *lanes;
	uint8_t *sbuf; /* the stream's bytes: acknowledged bytes are dropped */
	/* sbuf is a ring: QUIC keeps pointers into it until the peer
	 * acknowledges the bytes, so they never move. Totals since the start. */
	uint64_t s_acked, s_sent, s_read;
	/* From the peer: stream bytes not yet a whole unit, and whole units
	 * (stream and lanes) for the program. */
	struct buffer stream_in;
	bool first_in; /* the peer's first message went to the program */
	struct buffer to_program;
	char why[256]; /* the peer broke the lanes' format: how */
	unsigned turn; /* packets written: every 16th offers the stream first */
	uint64_t hold_until; /* an acknowledgement waits for a packet of ours */
	uint64_t heartbeat_at; /* the last heartbeat on the stream */
	ngtcp2_connection_close_error error;
};

/* What a server's door did since it last said so (quic-door.c). */
struct quic_door {
	unsigned retries, evicted, bad_tokens, turned_away;
	uint64_t reported_at;
};

/* A connection whose handshake is done, for the program to take. */
struct quic_offer {
	int fd;
	bool watch;
	int move_slot;
	char host[HOST_MAX];
	int port;
};

struct quic_endpoint {
	bool server;
	int udp;
	int wake[2]; /* the program to the thread: stop */
	int ready[2]; /* the thread to the program: a connection to accept */
	pthread_t thread;
	bool thread_started;
	gnutls_datum_t key;
	gnutls_datum_t watch_key; /* a server's; size 0: none */
	/* A server's move keys (quic_set_move_key), under the lock: the
	 * program sets them, the handshakes read them. */
	char move_keys[MOVE_SLOTS][KEY_MAX];
	size_t move_key_lens[MOVE_SLOTS];
	gnutls_psk_server_credentials_t psk_server;
	gnutls_psk_client_credentials_t psk_client;
	struct sockaddr_storage local;
	socklen_t local_len;
	struct sockaddr_storage remote; /* a client's server */
	socklen_t remote_len;
	pthread_mutex_t lock; /* the stats, the accept queue, the move keys */
	struct conn conns[MAX_CONNS];
	struct quic_offer accept_queue[MAX_CONNS];
	int naccept;
	uint8_t secret[32]; /* a server's: seals its Retry tokens */
	struct quic_door door;
	char failure[256]; /* a client's connection failed: why */
	bool key_refused; /* a client's: the server refused its key */
	struct log_limit refusals; /* a server's: log lines of refused keys */
	int netlink; /* a client's: address changes (-1: none) */
	uint64_t packets_in, packets_out, bytes_in, bytes_out, dropped, migrations;
	uint64_t packets_datagrams; /* of packets_out, those with a lane's datagram */
	char lanes[192]; /* the first connection's lanes, described now and then */
	double loss; /* and the loss they have seen (-1: too little to say) */
	uint64_t rtt_ns; /* and its smoothed round trip */
	uint64_t described_at;
};

/* A server endpoint with neither socket nor thread (quic_listen gives it
 * both): for a harness that hands it packets itself. */
struct quic_endpoint *quic_endpoint_server(const uint8_t *key, size_t key_len, char *err,
	size_t err_size);
/* A client's first Initial: a new connection, if the door lets it in
 * (else it may have been sent a Retry); NULL if not. */
struct conn *quic_door_accept(struct quic_endpoint *ep, const uint8_t *data, size_t len,
	const struct sockaddr *from, socklen_t from_len);
/* Logs what the door refused, at most once a second; and when it next may. */
void quic_door_report(struct quic_endpoint *ep, uint64_t now);
uint64_t quic_door_deadline(const struct quic_endpoint *ep);

uint64_t quic_now_ns(void);
void quic_set_err(char *err, size_t size, const char *fmt, ...);
bool quic_random(void *out, size_t len);
extern const ngtcp2_callbacks quic_callbacks;
void quic_conn_settings(ngtcp2_settings *settings, ngtcp2_transport_params *params);
bool quic_tls_init(struct conn *c, char *err, size_t err_size);
/* The server's pre-shared key for a client that names itself "rcomp". */
int quic_psk_server_cb(gnutls_session_t session, const char *username, gnutls_datum_t *key);
/* A free slot of the endpoint with its buffers and socketpair; NULL and a
 * reason in err if there is none. */
struct conn *quic_conn_alloc(struct quic_endpoint *ep, char *err, size_t err_size);
void quic_conn_free(struct conn *c);
/* Says goodbye to the peer (CONNECTION_CLOSE), then frees. */
void quic_conn_close(struct conn *c);
void quic_read_program(struct conn *c);
bool quic_flush_to_program(struct conn *c);
/* How long a datagram may go unanswered before it counts as lost. */
uint64_t quic_conn_probe_timeout(struct conn *c);
/* Whether nothing the program wrote waits to be taken by the peer. */
bool quic_conn_all_acked(const struct conn *c);
bool quic_conn_write(struct conn *c);
/* datagrams: the packet carries a lane's datagram (for the stats). */
void quic_send_packet(struct quic_endpoint *ep, const ngtcp2_path *path, const uint8_t *data,
	size_t len, bool datagrams);

#endif
