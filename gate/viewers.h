/*
 * Viewers at the gate: a WebSocket that shows a login's cookie asks the
 * monitor for its session's socket, and is bridged to it (net/bridge.c);
 * the monitor counts each user's viewers (viewers-per-user) and ends a
 * login's with it.
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

/* The monitor ends the viewer of its OPEN open (its login ended): told
 * why (text), its session's socket closed at once. */
struct net;
void viewers_end(struct net *net, uint32_t open, const char *text, size_t len);

#endif
