/*
 * Drag and drop, both ways. A drag of the local desktop over our windows
 * goes to the apps under it (dnd_enter, dnd_status, a drop's data fetched
 * by the server as a transfer of kind WIRE_SELECTION_DND); an app's drag
 * is carried past our windows by a local drag of ours (drag_start), with
 * the app's icon, and ends where the local desktop drops it.
 */
#ifndef RCOMP_VIEWER_DND_H
#define RCOMP_VIEWER_DND_H

#include <wayland-client.h>

#include "viewer.h"

/* The seat's data device says (clipboard.c has its listener). */
void dnd_enter(struct rv_viewer *viewer, uint32_t serial, struct wl_surface *surface, wl_fixed_t x,
	wl_fixed_t y, struct wl_data_offer *proxy);
void dnd_leave(struct rv_viewer *viewer);
void dnd_motion(struct rv_viewer *viewer, wl_fixed_t x, wl_fixed_t y);
void dnd_drop(struct rv_viewer *viewer);

/* The app under a local drag answered (dnd_status); the one that took a
 * drop has its data (dnd_finish). */
void dnd_status(struct rv_viewer *viewer, const struct wire_dnd_status *msg);
void dnd_finish(struct rv_viewer *viewer);
/* An app's drag: carried locally (drag_start), or ended among the apps.
 * serial: the local press the app's drag started with (0: not kept). */
void dnd_drag_start(struct rv_viewer *viewer, const struct wire_drag_start *msg, uint32_t serial);
void dnd_drag_end(struct rv_viewer *viewer);
void dnd_drag_icon(struct rv_viewer *viewer, const struct wire_drag_icon *msg);

/* The link went: a dropped drag's data can no longer come, and an app's
 * drag is gone. */
void dnd_link_down(struct rv_viewer *viewer);
/* The viewer ends: every drag with it. */
void dnd_end(struct rv_viewer *viewer);

#endif
