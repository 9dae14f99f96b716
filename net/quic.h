/*
 * rcomp over QUIC (ngtcp2 with GnuTLS): encrypted and authenticated with the
 * session's token as a TLS 1.3 pre-shared key (ECDHE-PSK: both ends prove
 * they hold it, nothing on the path reads or forges a byte, and the token
 * itself never crosses the wire), riding UDP so that a viewer whose address
 * changes keeps its connection (QUIC migration).
 *
 * Each endpoint runs in a thread of its own, so QUIC's timers and
 * acknowledgements never wait for a frame being encoded or decoded; a
 * connection's stream reaches the program as one end of a stream
 * socketpair, nonblocking, which the program reads and writes as it does a
 * TCP socket.
 */
#ifndef RCOMP_QUIC_H
#define RCOMP_QUIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QUIC_KEY_MAX 256

struct quic_endpoint;

/* Whether this build has UDP at all. */
bool quic_supported(void);

/* A server on ADDR:PORT (UDP), keyed by key, and by watch_key too if it
 * is given (NULL: none): a second key, for viewers that may only watch,
 * which a client whose key begins with QUIC_WATCH_PREFIX offers under a
 * PSK identity of its own. quic_endpoint_fd becomes readable when
 * quic_accept has a connection's stream for the program. NULL and a reason
 * in err on failure (errno EADDRINUSE: the port is taken). */
#define QUIC_WATCH_PREFIX "watch-"
/*
 * A key of one viewer, for a viewer the session already has on another
 * link (rcomp-view ssh) to come over to UDP as itself: "move-N-..." with N
 * a slot, 0 to QUIC_MOVE_SLOTS - 1, which a client whose key has that form
 * offers under a PSK identity of its own. quic_accept says which slot's
 * key a connection proved, and the program knows whose it is.
 */
#define QUIC_MOVE_PREFIX "move-"
#define QUIC_MOVE_SLOTS 16
struct quic_endpoint *quic_listen(const char *addr_port, const uint8_t *key, size_t key_len,
	const uint8_t *watch_key, size_t watch_key_len, char *err, size_t err_size);
int quic_endpoint_fd(const struct quic_endpoint *ep);
/* The UDP port it listens on (with port 0 asked, the one it got). */
int quic_local_port(const struct quic_endpoint *ep);
/* The stream of a connection whose handshake completed, or -1 if none
 * waits. The program owns the fd. host gets the address it came from (as
 * text), *port its port, *watch whether it holds the watch key, *move_slot
 * which move key it holds (-1: none). */
#define QUIC_HOST_MAX 48
int quic_accept(struct quic_endpoint *ep, char host[QUIC_HOST_MAX], int *port, bool *watch,
	int *move_slot);
/* Sets slot's move key (len 0: forgets it); false if it is not of the
 * form above, for that slot. */
bool quic_set_move_key(struct quic_endpoint *ep, int slot, const char *key, size_t len);

/* A client of HOST:PORT: returns the connection's stream at once (the
 * program owns the fd; what it writes waits for the handshake), with the
 * endpoint that carries it in *out; -1 and a reason in err if it cannot
 * even start. A handshake that fails, or does not complete within
 * timeout_ms, closes the stream: quic_failure then says why. */
int quic_connect(const char *host_port, const uint8_t *key, size_t key_len, int timeout_ms,
	struct quic_endpoint **out, char *err, size_t err_size);
/* A client's quic_endpoint_fd becomes readable once its handshake has
 * completed. */
/* Why a client's connection ended ("" while it has not, or ended cleanly). */
void quic_failure(struct quic_endpoint *ep, char *out, size_t size);
/* Whether it ended because the server refused the client's key. */
bool quic_key_refused(struct quic_endpoint *ep);

/* Ends the endpoint's thread and its connections (closing them). A
 * server's connections the program has let go of first carry what it wrote
 * last (a goodbye) to their peers, a second at most. */
void quic_close(struct quic_endpoint *ep);

/* The share of datagrams the first connection lost, as its sender has
 * seen it (0 to 1; -1 while too few to say), and its smoothed round trip,
 * as of its last description. */
double quic_loss(struct quic_endpoint *ep);
double quic_rtt_ms(struct quic_endpoint *ep);

/* For --stats: packets and bytes each way, and the path in use. */
void quic_describe(struct quic_endpoint *ep, char *out, size_t size);

#endif
