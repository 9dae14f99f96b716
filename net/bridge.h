/*
 * A viewer's WebSocket bridged to a socket of the session's, as the
 * browsers' door (web.c) and rcomp-gate both do it with libwebsockets: the
 * WebSocket's binary messages' bytes one way, the socket's bytes as binary
 * messages the other, one chunk in flight each way, so a browser that
 * stops reading holds up its own socket and no more. A bridge lives until
 * both sides have closed; then its owner's release() frees it (a bridge is
 * the first member of the owner's struct).
 */
#ifndef RCOMP_BRIDGE_H
#define RCOMP_BRIDGE_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* The most either way holds in flight: one chunk, until it is written. */
#define BRIDGE_CHUNK 65536

struct bridge {
	struct lws *ws, *raw;
	uint8_t *to_ws, *to_sock; /* LWS_PRE bytes of room, then the bytes */
	size_t to_ws_len, to_sock_len;
	bool refused; /* a goodbye is all the WebSocket gets: what it says is not read */
	bool spoke; /* the session's bytes have gone to the WebSocket: records from now on */
	uint16_t close_code; /* a goodbye after that: WebSocket close 4000 + its reason */
	char close_text[124]; /* and its words, as the close's reason */
	bool adopted; /* its socket was given (bridge_adopt): raw NULL is its end */
	void (*release)(struct bridge *b); /* both sides are gone */
};

/* OpenSSL's names (lws speaks TLS through OpenSSL here): ECDHE with
 * AES-GCM or ChaCha20-Poly1305. */
#define BRIDGE_TLS12_CIPHERS \
	"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:" \
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:" \
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
/* What every door that bridges sets up alike in its libwebsockets context
 * (info zeroed first): its address (IPv6 only for an address with a
 * colon), HTTP/1.1 alone (never h2 by ALPN: one protocol to guard), TLS
 * with cert and key where cert is given (1.2 with BRIDGE_TLS12_CIPHERS,
 * or 1.3), the security headers on every answer (bridge.c), a 10 s
 * timeout, no change of user by the library, lws's warnings into our log,
 * and a service buffer of BRIDGE_CHUNK: lws reads an adopted socket into
 * that buffer, not the protocol's rx_buffer_size, so at its default 4 KiB
 * a frame went to the browser as a WebSocket message each 4 KiB. The door
 * adds its protocols, mounts, user and limits. */
void bridge_door_info(struct lws_context_creation_info *info, const char *iface, int port,
	const char *cert, const char *key);

/* Its socket side: fd adopted on vh as protocol (whose callback is
 * bridge_socket_callback's). False if libwebsockets would not (it has then
 * closed fd). */
bool bridge_adopt(struct bridge *b, struct lws_vhost *vh, int fd, const char *protocol);

/* The WebSocket is told why in a goodbye, as rcomp-run tells a viewer, and
 * closed once that is written. Once the session has spoken, its stream is
 * records and a chunk may end inside one, so a goodbye of the door's own
 * cannot be put in it: the WebSocket closes with code 4000 + reason and
 * text as the close's reason (at most 123 bytes), which the page reads as
 * that goodbye. False without memory. */
bool bridge_goodbye(struct bridge *b, enum wire_goodbye_reason reason, const char *text);

/* The WebSocket side's events, for its protocol's callback; each returns
 * what the callback returns. */
int bridge_ws_receive(struct bridge *b, struct lws *wsi, const void *in, size_t len);
/* Writes what waits for the WebSocket; once the socket has gone (or the
 * bridge refused), the WebSocket closes after it. */
int bridge_ws_writeable(struct bridge *b, struct lws *wsi);
void bridge_ws_closed(struct bridge *b);

/* The socket side's protocol callback (LWS_CALLBACK_RAW_*). */
int bridge_socket_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len);

/* A new connection at a door: counted under its address (with uid, the
 * local user of a loopback peer, or -1) in admit, as web-admit.c says;
 * *evict: a connection to close to make room for it (NULL: none). The
 * verdict; ADMIT_OUT_ADDRESS also where its address cannot be read. */
struct admit;
enum admit_verdict bridge_arrive(struct admit *admit, struct lws *wsi, long uid, uint64_t now_ms,
	const void **evict);

/* Closes a connection soon (not from within its own callbacks). */
void bridge_close_soon(const void *wsi);

/* libwebsockets' log lines, in ours at the debug level. */
void bridge_lws_log(int level, const char *line);

#endif
