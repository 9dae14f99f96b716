/* --stats: once a second, a line for the link and one per window. */
#ifndef RCOMP_STATS_H
#define RCOMP_STATS_H

#include "server.h"

bool stats_init(struct rc_server *server);
void stats_finish(struct rc_server *server);

#endif
