/*
 * One tick of a window's frame clock. The clock owns the app's frame rate:
 * frame callbacks are answered here at the window's refresh whatever the
 * network does. The window is captured once a tick for all its viewers, and
 * a frame goes to each viewer only when its own connection has room, so the
 * newest pixels win, nothing superseded is queued, and a slow viewer never
 * holds back a fast one.
 */
#include <time.h>
#include <wlr/types/wlr_surface.h>

#include "frame.h"
#include "monotonic.h"
#include "server.h"
#include "texture.h"
#include "viewers.h"

/* With no viewer attached, apps get one frame callback in this many ticks:
 * a trickle keeps them alive at little cost. */
#define UNWATCHED_DIVISOR 15

static void settle_iter(struct wlr_surface *surface, int sx, int sy, void *data)
{
	texture_surface_settle(surface);
}

static void send_frame_done_iter(struct wlr_surface *surface, int sx, int sy, void *data)
{
	wlr_surface_send_frame_done(surface, data);
}

static void has_callbacks_iter(struct wlr_surface *surface, int sx, int sy, void *data)
{
	bool *any = data;
	if (!wl_list_empty(&surface->current.frame_callback_list)) {
		*any = true;
	}
}

/* Some view's encoder is at work: the image must stay as it is. */
static bool any_busy(struct rc_window *window)
{
	for (int i = 0; i < RC_MAX_VIEWERS; i++) {
		if (window->views[i] && encoder_busy(&window->views[i]->encoder)) {
			return true;
		}
	}
	return false;
}

/* Whether the view has something to send and its link takes it now. */
static bool ready(struct rc_view *view)
{
	struct rc_window *window = view->window;
	struct rc_encoder *enc = &view->encoder;
	return !encoder_busy(enc) &&
		(pixman_region32_not_empty(&window->damage) ||
			pixman_region32_not_empty(&view->damage) || encoder_wants_tick(enc)) &&
		connection_may_send_frame(view->viewer->conn, encoder_in_flight(enc), enc->queued);
}

/* Captures what changed, once for all views: each gets the damage, so one
 * that does not send now (its link is full) sends all of it later. */
static struct image capture(struct rc_window *window)
{
	struct wlr_box geometry;
	window->impl->geometry(window, &geometry);
	struct image image = capture_update(&window->capture, window->id, window_surface(window),
		geometry, window->scale, &window->damage);
	if (!image.pixels) {
		return image;
	}
	/* The first frame captured after the app answered an input says so,
	 * to the viewer that gave it. */
	struct rc_view *input_view = window_view(window, window->server->input_viewer);
	if (window->input_mark_armed) {
		if (input_view) {
			input_view->input_mark = window->input_mark;
		}
		window->input_mark = 0;
		window->input_mark_armed = false;
	}
	if (pixman_region32_not_empty(&window->damage)) {
		uint64_t drawn = window->drawn_us ? window->drawn_us : monotonic_usec();
		struct rc_view *view;
		window_for_each_view(view, window, i)
		{
			pixman_region32_union(&view->damage, &view->damage, &window->damage);
			if (!view->drawn_us) {
				view->drawn_us = drawn;
			}
		}
		pixman_region32_clear(&window->damage);
		window->drawn_us = 0;
	}
	return image;
}

/* Hands the image to the view's encoder, with what changed since its last
 * frame. */
static void send(struct rc_view *view, struct image image)
{
	struct rc_window *window = view->window;
	long interval = window->clock.interval_ns;
	int fps = (int)((1000000000L + interval / 2) / interval);
	pixman_region32_intersect_rect(&view->damage, &view->damage, 0, 0, (unsigned)image.width,
		(unsigned)image.height);
	uint64_t drawn = view->drawn_us ? view->drawn_us : monotonic_usec();
	uint32_t mark = view->input_mark;
	view->drawn_us = 0;
	view->input_mark = 0;
	encoder_send(&view->encoder, &window->server->encode, view->viewer->conn, image,
		&view->damage, fps, mark, drawn);
}

/* Captures once and sends to each view that is ready; none may be busy. */
static void send_ready(struct rc_window *window)
{
	struct rc_view *view;
	bool any = false;
	window_for_each_view(view, window, i)
	{
		any = any || ready(view);
	}
	if (!any) {
		return;
	}
	struct image image = capture(window);
	if (!image.pixels) {
		return;
	}
	window_for_each_view(view, window, i)
	{
		if (ready(view)) {
			send(view, image);
		}
	}
}

void frame_encoded(struct rc_encoder *enc)
{
	struct rc_view *view = wl_container_of(enc, view, encoder);
	struct rc_window *window = view->window;
	encoder_deliver(enc, view->viewer->conn, &view->damage);
	/* Frames that waited on this one go now: encoding that ends just
	 * after a tick would otherwise cost a whole tick, and a window whose
	 * encode takes most of a tick would send at half its rate. */
	if (window->frame_waits && window->mapped && window_surface(window) && !any_busy(window)) {
		window->frame_waits = false;
		send_ready(window);
	}
}

void frame_tick(struct rc_clock *clock)
{
	struct rc_window *window = wl_container_of(clock, window, clock);
	struct wlr_surface *surface = window_surface(window);
	if (!window->mapped || !surface) {
		clock_tick_done(clock, false);
		return;
	}
	/* Damage keeps the clock going only while someone can receive it; a
	 * viewer that attaches damages every window and restarts its clock. */
	bool watched = false, work = false;
	struct rc_view *view;
	window_for_each_view(view, window, i)
	{
		watched = true;
		work = work || pixman_region32_not_empty(&view->damage) ||
			encoder_wants_tick(&view->encoder);
	}
	/* While a frame is being encoded the window's image stays as it is,
	 * and new damage waits for the next tick after. */
	bool encoding = any_busy(window);
	bool busy = watched && (encoding || work || pixman_region32_not_empty(&window->damage));
	window->frame_waits = busy && encoding;
	if (busy) {
		window_for_each_view(view, window, i)
		{
			encoder_tick(&view->encoder, encoding);
		}
	}
	if (busy && !encoding) {
		send_ready(window);
	}

	/* Each buffer committed since the last tick is copied (if capture did
	 * not) and released before the app hears it may draw again, so it never
	 * finds its last buffer busy. One copy a tick, however often it commits. */
	wlr_surface_for_each_surface(surface, settle_iter, NULL);
	bool callbacks = false;
	wlr_surface_for_each_surface(surface, has_callbacks_iter, &callbacks);
	if (callbacks && (watched || clock->ticks % UNWATCHED_DIVISOR == 0)) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		wlr_surface_for_each_surface(surface, send_frame_done_iter, &now);
	}
	clock_tick_done(clock, busy || callbacks);
}
