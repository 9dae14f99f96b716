/*
 * What rcomp-run keeps of the apps' cursor (cursor.h): types only, for
 * server.h.
 */
#ifndef RCOMP_CURSOR_STATE_H
#define RCOMP_CURSOR_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-server-core.h>

struct wlr_surface;

/* The cursor the app under the pointer set (cursor.c). */
struct rc_cursor {
	bool set; /* an app has set a cursor (or hidden it) */
	struct wlr_surface *surface; /* NULL: hidden */
	int32_t hotspot_x, hotspot_y;
	bool size_logged;
	uint32_t *pixels; /* WIRE_MAX_CURSOR^2, for the message */
	struct wl_event_source *frame_timer;
	struct wl_listener request_set_cursor;
	struct wl_listener surface_commit;
	struct wl_listener surface_destroy;
};

#endif
