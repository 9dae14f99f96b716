/*
 * The HUD (--hud, its key chord): a small overlay in a corner of each
 * window with the numbers that say how the link is doing: the app's and
 * the shown frame rate, the codec, bytes/s, the frames' round trip and
 * input to photon. It is a subsurface of its own above the window, which
 * takes no input, so the remote picture is never drawn over; text is set
 * with fcft and pixman. While it shows, the server sends window_stats once
 * a second (stats_wanted); while it does not, nothing is sent for it.
 */
#ifndef RCOMP_HUD_H
#define RCOMP_HUD_H

#include <stdbool.h>

#include "viewer.h"

/* Shows or hides it on every window. */
void hud_show(struct rv_viewer *viewer, bool shown);
/* A key press (evdev code): true if it was the chord, which toggled the
 * HUD; its press and release are then the viewer's, not the app's. */
bool hud_key(struct rv_viewer *viewer, uint32_t key, bool pressed);
/* A new link is welcomed: ask for the numbers again if they show. */
void hud_link_up(struct rv_viewer *viewer);
void hud_window_stats(struct rv_window *window, const struct wire_window_stats *msg);
/* A video window's encoding (servers of minor 7 or later send it). */
void hud_video_stats(struct rv_window *window, const struct wire_video_stats *msg);
/* The window's size may have changed: the HUD keeps its corner. */
void hud_window_resized(struct rv_window *window);
/* A frame was presented, and how long after its input if it answered one. */
void hud_presented(struct rv_window *window);
void hud_photon(struct rv_window *window, uint64_t photon_us);
void hud_window_finish(struct rv_window *window);
void hud_finish(struct rv_viewer *viewer);

#endif
