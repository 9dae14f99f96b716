/*
 * What the monitor's children do, one act each, and answer on their socket
 * (one gate_answer record, with a descriptor for an attach): a login's PAM
 * conversation (root); a session's start, whose child stays as the
 * session's keeper, holding the user's PAM session (root, the session
 * itself as the user); and as the user, the user's sessions, apps, an
 * app's icon, a session's socket, a session's stop.
 */
#ifndef RCOMP_GATE_ACTS_H
#define RCOMP_GATE_ACTS_H

#include "config.h"
#include "ipc.h"

/* In a child of the monitor: does req (its user the login's, checked) and
 * answers on fd; the child then exits. */
void acts_run(const struct gate_config *config, struct gate_request *req, int fd);

#endif
