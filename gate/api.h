/*
 * The gate's page's requests (/api/...): a login, who is logged in, a
 * logout, the user's sessions and apps, an app's icon, a start, a stop. Each
 * is read whole (a form of at most GATE_BODY_MAX), passed to the monitor,
 * and its answer written back as JSON.
 */
#ifndef RCOMP_GATE_API_H
#define RCOMP_GATE_API_H

#include <libwebsockets.h>

#include "ipc.h"

/* The most a request's form (its body) may hold. */
#define GATE_BODY_MAX 2048

/* Per connection of the "gate-api" protocol. */
struct http_pss;
extern const size_t api_pss_size;

int api_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len);

#endif
