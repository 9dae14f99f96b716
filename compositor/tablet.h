/*
 * A tablet's tools from the viewer (tablet): one tablet on the seat
 * (zwp_tablet_manager_v2, wlroots' tablet v2 over a headless tablet
 * device), each tool the viewer names by its type and serial made on it as
 * it first comes, at most RC_TABLET_TOOLS. An app that has bound tablets
 * hears the tool with its axes; another app hears it as the pointer, the
 * tip as the left button, as sway gives a tablet to such apps.
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
/* The viewer with input went: every tool leaves proximity, a tip down is
 * lifted. */
void tablet_viewer_gone(struct rc_server *server);

#endif
