/*
 * What the app asks of the person's desktop around its window
 * (window_idle_inhibit, window_activate), asked of the local compositor
 * for the local window: an idle inhibitor on its surface, an activation
 * with a token of the local compositor's.
 */
#ifndef RV_DESKTOP_H
#define RV_DESKTOP_H

#include "viewer.h"

void desktop_bind_idle(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name);
void desktop_bind_activation(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name);
void desktop_idle_inhibit(struct rv_window *window, const struct wire_window_idle_inhibit *msg);
void desktop_activate(struct rv_window *window);
void desktop_window_gone(struct rv_window *window);
/* The viewer ends: the local desktop's managers go (after every window). */
void desktop_finish(struct rv_viewer *viewer);

#endif
