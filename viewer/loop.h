/*
 * The event loop: the local compositor, the link to rcomp-run and the
 * clipboard's pipes in one poll, with the reconnect timer and --stats.
 */
#ifndef RCOMP_LOOP_H
#define RCOMP_LOOP_H

#include "viewer.h"

/* Runs until the session ends, rcomp-view gives up, or SIGINT/SIGTERM. */
void loop_run(struct rv_viewer *viewer);

#endif
