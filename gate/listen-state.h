/*
 * What the network process keeps of the gate's port and its connections
 * (listen.c's state), apart from its functions so that net-state.h holds
 * it without including them.
 */
#ifndef RCOMP_GATE_LISTEN_STATE_H
#define RCOMP_GATE_LISTEN_STATE_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

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

#endif
