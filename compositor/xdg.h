/* xdg-shell windows: toplevels and popups (see xdg.c). */
#ifndef RCOMP_XDG_H
#define RCOMP_XDG_H

#include "server.h"

bool xdg_init(struct rc_server *server);
void xdg_finish(struct rc_server *server);

#endif
