/* The local compositor and its globals (see registry.c). */
#ifndef RCOMP_REGISTRY_H
#define RCOMP_REGISTRY_H

#include "viewer.h"

/* Connects to $WAYLAND_DISPLAY and binds what rcomp-view needs; false,
 * logged, if it cannot. */
bool registry_connect(struct rv_viewer *viewer);
/* Releases the globals and disconnects. */
void registry_finish(struct rv_viewer *viewer);

#endif
