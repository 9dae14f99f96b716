/*
 * Viewers at the gate: a WebSocket that shows a login's cookie asks the
 * monitor for its session's socket, and is bridged to it (net/bridge.c);
 * each user's viewers are counted (viewers-per-user).
 */
#ifndef RCOMP_GATE_VIEWERS_H
#define RCOMP_GATE_VIEWERS_H

#include <libwebsockets.h>

#include "ipc.h"

extern const size_t viewers_pss_size;

/* The "rcomp" protocol (the viewers' WebSockets) and "rcomp-socket" (the
 * sessions' sockets). */
int viewers_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len);
int viewers_socket_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len);

#endif
