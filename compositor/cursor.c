/*
 * The cursor: the surface an app under the pointer sets with
 * wl_pointer.set_cursor, and each of its commits, goes to the viewer as the
 * local cursor over our windows. No surface means a hidden cursor.
 */
#include <stdlib.h>
#include <time.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_surface.h>

#include "cursor.h"
#include "log.h"
#include "server.h"
#include "texture.h"

/* Animated cursors wait for frame callbacks: answer them at this pace. */
#define CURSOR_FRAME_MS 16

/* Any hotspot an app gives stays within what the wire allows. */
static int32_t clamp_hotspot(int32_t v)
{
	const int32_t limit = WIRE_MAX_CURSOR * WIRE_MAX_SCALE;
	return v < -limit ? -limit : (v > limit ? limit : v);
}

static void cursor_forget_surface(struct rc_cursor *cursor)
{
	if (cursor->surface) {
		wl_list_remove(&cursor->surface_commit.link);
		wl_list_remove(&cursor->surface_destroy.link);
		cursor->surface = NULL;
	}
}

/* A small surface's picture (a cursor, a drag icon) in a8r8g8b8, whatever
 * the app's buffer format, into pixels (WIRE_MAX_CURSOR^2 words). False if
 * there is none, or it is larger than the wire takes (logged once). */
bool cursor_image(struct wlr_surface *surface, uint32_t *pixels, int32_t *width, int32_t *height,
	int32_t *scale, bool *size_logged)
{
	int bw, bh;
	pixman_image_t *src = surface ? texture_surface_image(surface, &bw, &bh) : NULL;
	if (!src) {
		return false;
	}
	int w = pixman_image_get_width(src), h = pixman_image_get_height(src);
	if (w > WIRE_MAX_CURSOR || h > WIRE_MAX_CURSOR) {
		if (!*size_logged) {
			log_error("an app set a %dx%d cursor or drag icon, larger than %dx%d; it "
				  "is hidden instead",
				w, h, WIRE_MAX_CURSOR, WIRE_MAX_CURSOR);
			*size_logged = true;
		}
		return false;
	}
	pixman_image_t *dst =
		pixman_image_create_bits_no_clear(PIXMAN_a8r8g8b8, w, h, pixels, w * 4);
	if (!dst) {
		return false;
	}
	pixman_image_composite32(PIXMAN_OP_SRC, src, NULL, dst, 0, 0, 0, 0, 0, 0, w, h);
	pixman_image_unref(dst);
	*width = w;
	*height = h;
	int32_t s = surface->current.scale;
	*scale = s >= 1 && s <= WIRE_MAX_SCALE ? s : 1;
	return true;
}

/* The cursor as a message. pixels must hold WIRE_MAX_CURSOR^2 words. */
static void cursor_msg(struct rc_cursor *cursor, struct wire_msg *msg, uint32_t *pixels)
{
	*msg = (struct wire_msg){.type = WIRE_CURSOR, .cursor = {.scale = 1}};
	struct wire_cursor *c = &msg->cursor;
	if (!cursor_image(cursor->surface, pixels, &c->width, &c->height, &c->scale,
		    &cursor->size_logged)) {
		return; /* hidden */
	}
	c->hotspot_x = clamp_hotspot(cursor->hotspot_x);
	c->hotspot_y = clamp_hotspot(cursor->hotspot_y);
	c->pixels = (const uint8_t *)pixels;
	c->pixels_len = (uint32_t)(c->width * c->height * 4);
}

void cursor_send(struct rc_server *server, struct rc_connection *only)
{
	struct rc_cursor *cursor = &server->cursor;
	if (!cursor->set) {
		return; /* no app has set one: the viewers keep their own */
	}
	struct wire_msg msg;
	cursor_msg(cursor, &msg, cursor->pixels);
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		if (viewer->conn->welcomed && (!only || viewer->conn == only)) {
			connection_send(viewer->conn, &msg);
		}
	}
}

static int handle_frame_timer(void *data)
{
	struct rc_cursor *cursor = data;
	if (cursor->surface) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		wlr_surface_send_frame_done(cursor->surface, &now);
	}
	return 0;
}

static void handle_surface_commit(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, cursor.surface_commit);
	struct rc_cursor *cursor = &server->cursor;
	struct wlr_surface *surface = cursor->surface;
	/* wl_surface.attach's offset moves the hotspot the other way. */
	cursor->hotspot_x -= surface->current.dx;
	cursor->hotspot_y -= surface->current.dy;
	cursor_send(server, NULL);
	if (!wl_list_empty(&surface->current.frame_callback_list)) {
		wl_event_source_timer_update(cursor->frame_timer, CURSOR_FRAME_MS);
	}
}

static void handle_surface_destroy(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, cursor.surface_destroy);
	cursor_forget_surface(&server->cursor);
	cursor_send(server, NULL);
}

static void handle_request_set_cursor(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, cursor.request_set_cursor);
	struct rc_cursor *cursor = &server->cursor;
	struct wlr_seat_pointer_request_set_cursor_event *event = data;
	struct wlr_seat *seat = server->seat;
	/* Only the app under the pointer decides the cursor. */
	if (event->seat_client != seat->pointer_state.focused_client) {
		return;
	}
	if (event->surface != cursor->surface) {
		cursor_forget_surface(cursor);
		if (event->surface) {
			cursor->surface = event->surface;
			wl_signal_add(&event->surface->events.commit, &cursor->surface_commit);
			wl_signal_add(&event->surface->events.destroy, &cursor->surface_destroy);
		}
	}
	cursor->set = true;
	cursor->hotspot_x = event->hotspot_x;
	cursor->hotspot_y = event->hotspot_y;
	cursor_send(server, NULL);
}

bool cursor_init(struct rc_server *server)
{
	struct rc_cursor *cursor = &server->cursor;
	cursor->pixels = malloc((size_t)WIRE_MAX_CURSOR * WIRE_MAX_CURSOR * 4);
	cursor->frame_timer = wl_event_loop_add_timer(server->loop, handle_frame_timer, cursor);
	if (!cursor->pixels || !cursor->frame_timer) {
		log_error("out of memory for the cursor");
		return false;
	}
	cursor->surface_commit.notify = handle_surface_commit;
	cursor->surface_destroy.notify = handle_surface_destroy;
	cursor->request_set_cursor.notify = handle_request_set_cursor;
	wl_signal_add(&server->seat->events.request_set_cursor, &cursor->request_set_cursor);
	return true;
}

void cursor_finish(struct rc_server *server)
{
	struct rc_cursor *cursor = &server->cursor;
	cursor_forget_surface(cursor);
	if (cursor->request_set_cursor.link.next) {
		wl_list_remove(&cursor->request_set_cursor.link);
	}
	if (cursor->frame_timer) {
		wl_event_source_remove(cursor->frame_timer);
	}
	free(cursor->pixels);
	cursor->pixels = NULL;
}
