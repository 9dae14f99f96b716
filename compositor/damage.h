/*
 * Damage: every wl_surface of every app is watched, and each commit becomes
 * damage of the window it belongs to, which starts that window's clock.
 */
#ifndef RCOMP_DAMAGE_H
#define RCOMP_DAMAGE_H

#include "server.h"

void damage_init(struct rc_server *server);
void damage_finish(struct rc_server *server);

#endif
