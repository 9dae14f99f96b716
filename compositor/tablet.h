/*
 * A tablet's tools from the viewer (tablet): one tablet on the seat
 * (zwp_tablet_manager_v2, wlroots' tablet v2 over a headless tablet
 * device), each tool the viewer names by its type and serial made on it as
 * it first comes, at most RC_TABLET_TOOLS. An app that has bound tablets
 * hears the tool with its axes; another app hears it as the pointer, the
 * tip as the left button, as sway gives a tablet to such apps. The
 * viewer's pad (its buttons, rings, strips and modes) is one pad on the
 * same tablet, shaped as the viewer's.
 */
#ifndef RCOMP_TABLET_H
#define RCOMP_TABLET_H

#include <stdbool.h>

#include "wire.h"

struct rc_server;
struct rc_window;

#define RC_TABLET_TOOLS 8

bool tablet_init(struct rc_server *server);
void tablet_finish(struct rc_server *server);
/* One frame of a tool over window, from the viewer with input. */
void tablet_event(struct rc_server *server, struct rc_window *window,
	const struct wire_tablet *msg);
/* One event of the viewer's pad (tablet_pad): the pad takes the shape the
 * viewer says at each enter (a new one where it differs: apps hear the old
 * removed), and enters the named window's surface, as the local pad enters
 * the local window with the keyboard's focus. */
void tablet_pad_event(struct rc_server *server, const struct wire_tablet_pad *msg);
/* The viewer with input went: every tool leaves proximity, a tip down is
 * lifted, the pad's buttons are released and it leaves. */
void tablet_viewer_gone(struct rc_server *server);
/* The window goes: the pad leaves it. */
void tablet_window_gone(struct rc_server *server, struct rc_window *window);

#endif
