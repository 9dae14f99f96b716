/*
 * The cursor: the surface an app under the pointer sets with
 * wl_pointer.set_cursor, and each of its commits, goes to the viewer as the
 * local cursor over our windows.
 */
#ifndef RCOMP_CURSOR_H
#define RCOMP_CURSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "cursor-state.h"

struct rc_connection;
struct rc_server;
struct wlr_surface;

bool cursor_init(struct rc_server *server);
void cursor_finish(struct rc_server *server);
/* Tells the viewers the current cursor: all after a change, only the one
 * given in a snapshot. */
void cursor_send(struct rc_server *server, struct rc_connection *only);
/* A small surface's picture (a cursor, a drag icon) in a8r8g8b8 into pixels
 * (WIRE_MAX_CURSOR^2 words); false if none or too large (logged once). */
bool cursor_image(struct wlr_surface *surface, uint32_t *pixels, int32_t *width, int32_t *height,
	int32_t *scale, bool *size_logged);

#endif
