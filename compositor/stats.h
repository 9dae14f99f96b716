/* --stats and the viewer's HUD: once a second, a line for the link and one
 * per window, and window_stats to a viewer that asked. */
#ifndef RCOMP_STATS_H
#define RCOMP_STATS_H

#include "server.h"

bool stats_init(struct rc_server *server);
/* Once a second from now on, for as long as --stats or the viewer wants
 * them (stats_wanted). */
void stats_start(struct rc_server *server);
void stats_finish(struct rc_server *server);

#endif
