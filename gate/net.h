/*
 * rcomp-gate's network process: it alone speaks TLS, HTTP and WebSocket
 * (libwebsockets), as an unprivileged system user, chrooted into the
 * page's directory. It serves the gate's page and the browser viewer's,
 * passes logins and acts to the monitor and its answers back, and bridges
 * each viewer's WebSocket to the session socket the monitor hands it. It
 * keeps no password past the request that carried it, and opens no
 * session socket itself.
 */
#ifndef RCOMP_GATE_NET_H
#define RCOMP_GATE_NET_H

#include "config.h"

/*
 * Drops to the configured user and serves the gate's port (listen_fd,
 * the monitor's: listen.h) until the monitor (on fd) goes. The exit
 * status.
 */
int net_run(const struct gate_config *config, int fd, int listen_fd);

#endif
