/*
 * Pointer constraints the remote app asked for (pointer_constraint), asked
 * of the local compositor on the window's surface while the window has the
 * keyboard focus; what the compositor grants or lifts goes back to the
 * server (pointer_constraint_state). Shortcut inhibition likewise.
 */
#ifndef RV_CONSTRAINT_H
#define RV_CONSTRAINT_H

#include "viewer.h"

void constraint_bind(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name);
void constraint_bind_inhibit(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name);
/* The app asks that the desktop's shortcuts reach it, or no longer. */
void constraint_inhibit(struct rv_window *window, const struct wire_shortcuts_inhibit *msg);
void constraint_set(struct rv_window *window, const struct wire_pointer_constraint *msg);
/* Keyboard focus moved, or the pointer came or went: (un)asks as needed. */
void constraint_update(struct rv_viewer *viewer);
void constraint_window_gone(struct rv_window *window);
/* A new connection: no constraint holds until the server says so again. */
void constraint_reset(struct rv_viewer *viewer);
void constraint_finish(struct rv_viewer *viewer);

#endif
