/*
 * rcomp-gate's privileged half, as OpenSSH's monitor: it alone runs as
 * root, and it does only what needs root, each act in a child of its own:
 * the PAM conversation of a login, a session started as its user (the
 * child holds the user's PAM session for the session's life), and, as the
 * user, the user's session list, apps, and session sockets, the last
 * handed to the network process as a descriptor. It keeps the logins:
 * random cookies, bound to their user, with idle and absolute expiry, and
 * the failed logins of each address and each user name, which it slows.
 */
#ifndef RCOMP_GATE_MONITOR_H
#define RCOMP_GATE_MONITOR_H

#include "config.h"

/* Failed logins: an address may fail this many at once, then one every
 * FAIL_EVERY_MS; a user name twice as many. Every failure is answered
 * FAIL_ANSWER_MS after its request, whatever PAM took. */
#define GATE_FAIL_BURST 5
#define GATE_FAIL_EVERY_MS 2000
#define GATE_FAIL_ANSWER_MS 1000

/* Serves the network process on fd until it ends or misbehaves (a
 * malformed request: it is not believed further), MONITOR_RESTART: the
 * caller ends it and starts a new one on the same port (listen_fd, which
 * the monitor's children close) and calls again, the logins and sessions
 * as they were; 0 when the gate is stopped (SIGTERM), 1 on an error. */
#define MONITOR_RESTART 3
int monitor_run(const struct gate_config *config, int fd, int listen_fd);

#endif
