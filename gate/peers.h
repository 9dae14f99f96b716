/*
 * The cluster's other hosts (rcomp-gate's [cluster]): a thread tries each
 * once a second and logs each change, and a user's host is the first of the
 * user's rendezvous order that answers (this one always does).
 */
#ifndef RCOMP_GATE_PEERS_H
#define RCOMP_GATE_PEERS_H

#include <stdbool.h>

#include "config.h"

/* Starts watching the other hosts (none to watch: nothing to do). False
 * (logged) if a host's address is not one, or the thread does not start. */
bool peers_start(const struct gate_config *config);
void peers_stop(void);

/* The host of user's sessions; NULL without a cluster. */
const char *peers_owner_of(const struct gate_config *config, const char *user);

#endif
