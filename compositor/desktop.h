/*
 * What an app asks of the desktop around its windows, beyond pictures and
 * input: that the screen stay awake while a window shows (idle-inhibit),
 * that a window be activated (xdg-activation, on tokens of this
 * session's), and that one app's dialog sit on another's window
 * (xdg-foreign, wholly here).
 */
#ifndef RCOMP_DESKTOP_H
#define RCOMP_DESKTOP_H

#include <stdbool.h>

#include "server.h"

bool desktop_init(struct rc_server *server);
/* The window maps: whether an app keeps the screen awake while it shows
 * (an idle inhibitor made on its surface before), for its window_new. */
void desktop_window_mapped(struct rc_window *window);

#endif
