/*
 * The network process's state, shared by its rooms: net.c (connections,
 * the process), api.c (the page's requests), viewers.c (viewers'
 * WebSockets), peers.c (the cluster's other hosts), and ask.c, below them
 * all: the monitor's socket, and what each request's headers say.
 */
#ifndef RCOMP_GATE_NET_STATE_H
#define RCOMP_GATE_NET_STATE_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ipc.h"
#include "listen-state.h"
#include "monotonic.h"
#include "web-admit.h"

/* Requests to the monitor in flight at once. */
#define MAX_WAITERS 1024
/* WebSockets (viewers) at once. */
#define MAX_BRIDGES 512

/* The monitor's answer to a request of wsi's (fd: a descriptor that came
 * with it, or -1; the callee takes it). */
typedef void (*net_answered_fn)(struct lws *wsi, const struct gate_answer *a, const char *text,
	size_t len, int fd);

struct gate_bridge;

struct waiter {
	uint32_t id; /* 0: free */
	uint32_t op; /* enum gate_op */
	bool stranger; /* no login, from an address none has logged in from */
	struct lws *wsi; /* NULL: the asker went, the monitor has not answered */
	net_answered_fn answered;
	uint64_t left_ms; /* when the asker went */
	/* Whose it is: a login's cookie, or (none) the address that asks. */
	char cookie[GATE_COOKIE_HEX + 1];
	char addr[GATE_ADDR_MAX + 1];
};

/* Requests to the monitor in flight at once for one login (its cookie),
 * and for one address without a login (logins): past these, a request is
 * answered "busy" here and costs the monitor nothing. */
#define ASKS_PER_LOGIN 8
/* A request whose asker went still counts against its owner until the
 * monitor answers it (a flood of WebSockets closed at once would
 * otherwise fill the monitor's socket ahead of every other user), or
 * until this long has passed, where an answer was lost. */
#define ASK_ORPHAN_MS 60000
#define ASKS_PER_ADDRESS 8
/* Strangers' requests (logins from addresses none has logged in from here)
 * in flight at once: past this a stranger is answered "busy" here, so that
 * a flood of them never fills the monitor's socket ahead of a user's
 * requests (the monitor keeps a reserve of PAM conversations for known
 * addresses the same way). */
#define STRANGERS_IN_FLIGHT 64
/* Addresses a login succeeded from, the newest kept. */
#define KNOWN_ADDRESSES 256

struct net {
	const struct gate_config *config;
	struct lws_context *context;
	struct lws_vhost *vhost;
	struct lws_http_mount mounts[2];
	const char *page_missing; /* a file the page needs, not in its folder */
	struct lws_protocols protocols[9]; /* the last all zero */
	int monitor;
	bool tls;
	uint32_t next_id;
	struct waiter waiters[MAX_WAITERS];
	char known[KNOWN_ADDRESSES][GATE_ADDR_MAX + 1];
	int known_next;
	struct admit admit;
	lws_sorted_usec_list_t sweep;
	int bridges;
	struct gate_bridge *opened[MAX_BRIDGES]; /* viewers the monitor let through */
	char *names[16]; /* the certificate's: Host headers that name us */
	int nnames;
	bool gone; /* the monitor went */
	/* An open viewer's session ended (the monitor's GATE_ENDED for it):
	 * viewers_end, set where the protocols are (net.c), so that the
	 * monitor's conversation (ask.c) calls no file above it. */
	void (*viewer_ended)(struct net *net, uint32_t open, const char *text, size_t len);
	struct listen_state listen; /* the port, and whose each connection is */
};

/* The net of a connection's context; the clock its timeouts use. */
static inline struct net *net_of(struct lws *wsi)
{
	return lws_context_user(lws_get_context(wsi));
}

static inline uint64_t net_now_ms(void)
{
	return monotonic_usec() / 1000;
}

/* Sends req to the monitor for wsi, whose answer goes to answered; its id
 * (0: it could not be sent). The secret is wiped either way. */
uint32_t net_ask(struct net *net, struct gate_request *req, struct lws *wsi,
	net_answered_fn answered);
/* An answer no longer wanted (its connection went). */
void net_forget(struct net *net, uint32_t id);
/* Frees the requests whose askers went ASK_ORPHAN_MS ago. */
void net_forget_orphans(struct net *net, uint64_t now_ms);

/* The monitor's socket's protocol callback (a raw file of lws's). */
int net_monitor_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len);

/* The request's Host is ours (copied into host); its Origin the gate's
 * page's; the browser's address; the login cookie (empty: none). */
bool net_host_ok(struct lws *wsi, char *host, size_t size);
bool net_origin_ok(struct net *net, struct lws *wsi);
void net_peer(struct lws *wsi, char *out, size_t size);
void net_cookie_of(struct lws *wsi, char *out);

#endif
