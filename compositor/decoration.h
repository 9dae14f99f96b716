/*
 * xdg-decoration: an app that asks who draws its title bar is told "the
 * compositor" when the viewer's own compositor can draw it, and "you"
 * otherwise, so a window never has two title bars or none.
 */
#ifndef RCOMP_DECORATION_H
#define RCOMP_DECORATION_H

#include "server.h"

bool decoration_init(struct rc_server *server);
void decoration_finish(struct rc_server *server);
/* The viewer's compositor can (or cannot) draw decorations: tell every app. */
void decoration_set_viewer(struct rc_server *server, bool server_decorations);
/* The viewer's compositor will not decorate this window after all. */
void decoration_viewer_refused(struct rc_server *server, uint32_t window_id);

#endif
