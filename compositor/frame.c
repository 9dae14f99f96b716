/*
 * One tick of a window's frame clock. The clock owns the app's frame rate:
 * frame callbacks are answered here at the window's refresh whatever the
 * network does, and a frame goes out only when the connection has room, so
 * the newest pixels win and nothing superseded is queued.
 */
#include <time.h>
#include <wlr/types/wlr_surface.h>

#include "frame.h"
#include "monotonic.h"
#include "server.h"
#include "texture.h"

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

/* Capture, and hand the image to the encoder's worker. */
static void send(struct rc_window *window)
{
	struct rc_server *server = window->server;
	struct wlr_box geometry;
	window->impl->geometry(window, &geometry);
	struct image image = capture_update(&window->capture, window->id, window_surface(window),
		geometry, window->scale, &window->damage);
	if (!image.pixels) {
		return;
	}
	long interval = window->clock.interval_ns;
	int fps = (int)((1000000000L + interval / 2) / interval);
	/* The first frame captured after the app answered an input says so. */
	uint32_t mark = window->input_mark_armed ? window->input_mark : 0;
	if (mark) {
		window->input_mark = 0;
		window->input_mark_armed = false;
	}
	uint64_t drawn = window->drawn_us ? window->drawn_us : monotonic_usec();
	window->drawn_us = 0;
	encoder_send(&window->encoder, &server->encode, server->connection, image, &window->damage,
		fps, mark, drawn);
}

/* Whether the window has something to send and the link takes it now. */
static bool ready(struct rc_window *window)
{
	struct rc_server *server = window->server;
	return !encoder_busy(&window->encoder) &&
		(pixman_region32_not_empty(&window->damage) ||
			encoder_wants_tick(&window->encoder)) &&
		connection_may_send_frame(server->connection, encoder_in_flight(&window->encoder),
			window->encoder.queued);
}

void frame_encoded(struct rc_encoder *enc)
{
	struct rc_window *window = wl_container_of(enc, window, encoder);
	encoder_deliver(enc, window->server->connection, &window->damage);
	/* A frame that waited on this one goes now: encoding that ends just
	 * after a tick would otherwise cost a whole tick, and a window whose
	 * encode takes most of a tick would send at half its rate. */
	if (window->frame_waits && window->mapped && window_surface(window) &&
		server_watched(window->server)) {
		window->frame_waits = false;
		if (ready(window)) {
			send(window);
		}
	}
}

void frame_tick(struct rc_clock *clock)
{
	struct rc_window *window = wl_container_of(clock, window, clock);
	struct rc_server *server = window->server;
	struct wlr_surface *surface = window_surface(window);
	if (!window->mapped || !surface) {
		clock_tick_done(clock, false);
		return;
	}
	/* Damage keeps the clock going only while someone can receive it; a
	 * viewer that attaches damages every window and restarts its clock. */
	bool watched = server_watched(server);
	/* While its last frame is being encoded the window's image stays as
	 * it is, and new damage waits for the next tick after. */
	bool encoding = encoder_busy(&window->encoder);
	bool busy = watched && window->announced &&
		(encoding || pixman_region32_not_empty(&window->damage) ||
			encoder_wants_tick(&window->encoder));
	window->frame_waits = busy && encoding;
	if (busy) {
		encoder_tick(&window->encoder, encoding);
	}
	if (busy && !encoding && ready(window)) {
		send(window);
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
