/*
 * The local tablets' tools (zwp_tablet_manager_v2 on the local desktop): a
 * pen, an eraser and the like over a window go to the session (tablet),
 * one message per frame, whose app under the tool gets them as a tool of
 * the same type and serial. A pad (its buttons, rings, strips and modes)
 * goes to the session with its shape while its focus is on a window of
 * ours (tablet_pad), and the session makes a pad of that shape.
 */
#ifndef RV_TABLET_H
#define RV_TABLET_H

#include "viewer.h"

void tablet_bind(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name);
/* The seat or the manager came: the seat's tablets are listened to. */
void tablet_want(struct rv_viewer *viewer);
void tablet_window_gone(struct rv_viewer *viewer, struct rv_window *window);
/* A server welcomed us (a reattach too): a pad on one of our windows is
 * said to be there again. */
void tablet_link_up(struct rv_viewer *viewer);
void tablet_finish(struct rv_viewer *viewer);

#endif
