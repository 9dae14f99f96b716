/* Resize edges around windows that draw their own decorations (edges.c). */
#ifndef RCOMP_EDGES_H
#define RCOMP_EDGES_H

#include "viewer.h"

/* Adds, resizes or removes the band around window as its size, states and
 * decorations now ask, and sets its window geometry; commit: also commit
 * the window's surface (else the caller's next commit applies it). */
void edges_update(struct rv_window *window, bool commit);
void edges_finish(struct rv_window *window);

/* The window whose band surface is, or NULL. */
struct rv_window *edges_window(struct rv_viewer *viewer, struct wl_surface *surface);
/* Where in the band (whose origin is the band's top left corner) the strip
 * that is surface starts. */
void edges_strip_origin(struct rv_window *window, struct wl_surface *surface, int32_t *x,
	int32_t *y);
/* The xdg_toplevel.resize_edge at a point of window's band, given in
 * the coordinates of a strip that starts at origin_x, origin_y. */
uint32_t edges_at(struct rv_window *window, int32_t origin_x, int32_t origin_y, wl_fixed_t sx,
	wl_fixed_t sy);
/* Shows the local cursor for those edges. */
void edges_cursor(struct rv_viewer *viewer, struct rv_window *window, uint32_t edges);
/* A press in the band: the local compositor resizes the window. */
void edges_resize(struct rv_viewer *viewer, struct rv_window *window, uint32_t serial,
	uint32_t edges);
void edges_seat_finish(struct rv_viewer *viewer);

#endif
