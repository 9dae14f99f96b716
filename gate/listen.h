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
#include "listen-state.h"

/* config's listen address bound (not yet listening), close-on-exec; -1
 * with why, and in *bind_errno the errno of a failed bind or socket (0
 * where the address itself is at fault). --check-config binds it so too. */
int listen_bind(const struct gate_config *config, int *bind_errno, char *why, size_t why_size);
/* In the monitor, at its start: the socket systemd passed (LISTEN_FDS), or
 * config's listen address bound and listening; -1 and why. */
int listen_socket(const struct gate_config *config, char *why, size_t why_size);

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
