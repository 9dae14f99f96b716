/*
 * The gate's port. The monitor takes it before the network process exists
 * (systemd's, where the gate is socket-activated, or bound itself), so the
 * port stays the gate's while the network process is restarted, and a
 * privileged port needs no privilege in the network process. The network
 * process accepts on it: a connection from one of [gate] proxies (HAProxy
 * with send-proxy-v2) must begin with a PROXY protocol v2 header, whose
 * address is then the browser's; any other is the browser itself. Nothing
 * a client sends in HTTP (X-Forwarded-For and its kind) is believed.
 */
#ifndef RCOMP_GATE_LISTEN_H
#define RCOMP_GATE_LISTEN_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "config.h"

/* In the monitor, at its start: the socket systemd passed (LISTEN_FDS), or
 * config's listen address bound and listening; -1 and why. */
int listen_socket(const struct gate_config *config, char *why, size_t why_size);

/* What the network process keeps of the port and its connections. */
#define LISTEN_PENDING 64 /* connections from proxies whose header is coming */
#define LISTEN_PEERS 8192 /* connections with a proxy's address for them */
#define LISTEN_HEADER_MAX (16 + 256) /* a PROXY v2 header with room for TLVs */
struct listen_peer {
	bool used; /* (a zeroed table is all free: its pages untouched) */
	int fd;
	struct sockaddr_storage addr;
	socklen_t len;
};
struct listen_pending {
	int fd; /* -1: free */
	struct lws *wsi; /* a raw watcher of a copy of fd */
	uint64_t deadline_ms;
	uint8_t head[LISTEN_HEADER_MAX];
	size_t have;
	bool handed; /* to lws, as an HTTP connection */
};
struct listen_state {
	int fd;
	struct listen_peer peers[LISTEN_PEERS];
	struct listen_pending pending[LISTEN_PENDING];
};

struct net;
/* In the network process: accepts on fd from now on. */
bool listen_serve(struct net *net, int fd);
/* The protocols' callbacks: "gate-listen" (the port), "gate-proxy" (a
 * connection whose PROXY header is still coming). */
int listen_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len);
int listen_proxy_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len);
/* The browser's address for a connection: its PROXY header's where a proxy
 * sent one, else the socket's peer. False where neither is known. */
bool listen_peer(struct lws *wsi, struct sockaddr_storage *addr, socklen_t *len);
/* A connection is gone: what was known of it is forgotten. */
void listen_forget(struct lws *wsi);
/* Connections from proxies whose header did not come in time are closed. */
void listen_sweep(struct net *net, uint64_t now_ms);

#endif
