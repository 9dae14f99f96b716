/* X11 apps through Xwayland (see xwayland.c). */
#ifndef RCOMP_XWAYLAND_H
#define RCOMP_XWAYLAND_H

#include "server.h"

/* Starts lazily, with --no-xwayland not at all; sets server->x11_display. */
bool xwayland_init(struct rc_server *server);
void xwayland_finish(struct rc_server *server);

#endif
