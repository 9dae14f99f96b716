/*
 * The cursor: the surface an app under the pointer sets with
 * wl_pointer.set_cursor, and each of its commits, goes to the viewer as the
 * local cursor over our windows.
 */
#ifndef RCOMP_CURSOR_H
#define RCOMP_CURSOR_H

#include "server.h"

bool cursor_init(struct rc_server *server);
void cursor_finish(struct rc_server *server);
/* Tells the viewer the current cursor (after a change, or in a snapshot). */
void cursor_send(struct rc_server *server);

#endif
