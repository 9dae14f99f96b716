/*
 * The session as rcomp-view sees it: the hello a new link opens with, the
 * welcome, goodbye and snapshot that answer it, one handler for each kind of
 * message the server sends, and what a broken link does to the windows.
 */
#ifndef RCOMP_VIEWER_DISPATCH_H
#define RCOMP_VIEWER_DISPATCH_H

#include "viewer.h"

/* The link is open: the hello; the rest of what the server must know of
 * us follows its welcome. */
void dispatch_hello(struct rv_viewer *viewer);
/* A message from the server (a channel_handler). */
bool dispatch_message(void *data, const struct wire_msg *msg);
/* The link broke without a goodbye: the windows stay, marked, while
 * reconnecting where the way allows; else rcomp-view ends. */
void dispatch_link_lost(struct rv_viewer *viewer, const char *why);
/* The UDP the host offered answered: the session moves there, as a
 * reattach in the same windows, and ssh ends. */
void dispatch_move_to_udp(struct rv_viewer *viewer);

#endif
