/*
 * Presenting a window: the buffers of its pool are reused round-robin, each
 * copying in only the areas it has missed; a commit waits for the previous
 * frame callback, so a burst of frames costs one copy, not many.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "connection.h"
#include "edges.h"
#include "hud.h"
#include "input.h"
#include "monotonic.h"
#include "present.h"
#include "scale.h"
#include "shm.h"
#include "sound.h"
#include "tap.h"
#include "presentation-time-client-protocol.h"
#include "viewporter-client-protocol.h"
#include "xdg-shell-client-protocol.h"

/* Video has no alpha: its pictures go in opaque buffers, which a desktop
 * copies instead of blending (1080p glmark2 through rcomp on headless sway
 * with pixman at 70 Hz: 57-58 frame callbacks a second instead of 55-56). */
static bool wants_opaque(const struct rv_window *window)
{
	return window->decoder != NULL;
}

/* The size of the buffers wanted now (viewer.h). */
static void wanted_size(const struct rv_window *window, int32_t *width, int32_t *height)
{
	bool own = window->buffer_width > 0 && window->buffer_height > 0;
	*width = own ? window->buffer_width : window->width;
	*height = own ? window->buffer_height : window->height;
}

static bool buffer_fits(const struct rv_window *window, const struct rv_buffer *buf)
{
	int32_t w, h;
	wanted_size(window, &w, &h);
	return buf->width == w && buf->height == h && buf->opaque == wants_opaque(window);
}

static void buffer_drop(struct rv_buffer *buf)
{
	if (buf->buffer) {
		wl_buffer_destroy(buf->buffer);
		munmap(buf->data, buf->size);
	}
	buf->buffer = NULL;
	buf->data = NULL;
	buf->busy = false;
}

static void buffer_release(void *data, struct wl_buffer *wl_buffer)
{
	struct rv_window *window = data;
	for (int i = 0; i < RV_BUFFERS; i++) {
		struct rv_buffer *buf = &window->buffers[i];
		if (buf->buffer == wl_buffer) {
			buf->busy = false;
			/* A buffer of an old size or kind is dropped once released. */
			if (!buffer_fits(window, buf)) {
				buffer_drop(buf);
			}
		}
	}
	if (window->dirty) {
		present(window);
	}
}

static const struct wl_buffer_listener buffer_listener = {
	.release = buffer_release,
};

static bool buffer_alloc(struct rv_window *window, struct rv_buffer *buf)
{
	void *data;
	bool opaque = wants_opaque(window);
	int32_t w, h;
	wanted_size(window, &w, &h);
	buf->buffer = shm_buffer_create(window->viewer, w, h, opaque, &data);
	if (!buf->buffer) {
		return false;
	}
	wl_buffer_add_listener(buf->buffer, &buffer_listener, window);
	buf->data = data;
	buf->size = (size_t)w * h * 4;
	buf->width = w;
	buf->height = h;
	buf->opaque = opaque;
	buf->busy = false;
	/* A new buffer has nothing in it: all of it needs copying. */
	pixman_region32_fini(&buf->damage);
	pixman_region32_init_rect(&buf->damage, 0, 0, window->width, window->height);
	return true;
}

static struct rv_buffer *next_buffer(struct rv_window *window)
{
	for (int i = 0; i < RV_BUFFERS; i++) {
		struct rv_buffer *buf = &window->buffers[i];
		if (buf->buffer && !buf->busy && buffer_fits(window, buf)) {
			return buf;
		}
	}
	/* A free buffer of an old kind makes room for one of the new. */
	for (int i = 0; i < RV_BUFFERS; i++) {
		struct rv_buffer *buf = &window->buffers[i];
		if (buf->buffer && !buf->busy) {
			buffer_drop(buf);
		}
	}
	for (int i = 0; i < RV_BUFFERS; i++) {
		struct rv_buffer *buf = &window->buffers[i];
		if (!buf->buffer) {
			return buffer_alloc(window, buf) ? buf : NULL;
		}
	}
	return NULL; /* all busy: present when one is released */
}

struct rv_shown {
	uint64_t drawn_us; /* the picture's time_us */
	uint64_t input_sent_us; /* the input it answers was sent: 0 none */
	uint32_t seq; /* the newest frame in it */
	uint64_t at_us; /* when it reached the screen; 0: never */
	uint32_t refresh_ns; /* the output's; 0: unknown */
	uint32_t flags; /* enum wire_presented_flags */
};

static void shown(struct rv_window *window, const struct rv_shown *s);

static void frame_done(void *data, struct wl_callback *callback, uint32_t time)
{
	struct rv_window *window = data;
	wl_callback_destroy(callback);
	window->frame_callback = NULL;
	window->stat_callbacks++;
	scaling_callback(&window->scaling);
	if (window->committed_unseen && !window->viewer->presentation_works) {
		shown(window,
			&(struct rv_shown){.drawn_us = window->committed_drawn_us,
				.input_sent_us = window->committed_input_sent_us,
				.seq = window->committed_seq,
				.at_us = monotonic_usec(),
				.flags = WIRE_PRESENTED_ESTIMATE});
	}
	window->committed_unseen = false;
	if (window->dirty) {
		present(window);
	}
}

static const struct wl_callback_listener frame_listener = {
	.done = frame_done,
};

/* A picture reached the screen, or never will (at_us 0): the server tells
 * the app (its presentation feedback), and the picture's times measure
 * sound's sync and input to photon. */
static void shown(struct rv_window *window, const struct rv_shown *s)
{
	struct rv_viewer *viewer = window->viewer;
	if (window->feedback_wanted && viewer->connection.server_minor >= 11 && s->seq) {
		struct wire_msg msg = {.type = WIRE_FRAME_PRESENTED,
			.frame_presented = {.window = window->id,
				.seq = s->seq,
				.time_us = s->at_us,
				.refresh_ns = s->refresh_ns,
				.flags = s->flags}};
		connection_send(viewer, &msg);
	}
	if (!s->at_us) {
		return; /* it measures nothing */
	}
	sound_frame_presented(viewer, s->drawn_us, s->at_us);
	if (s->input_sent_us && s->at_us > s->input_sent_us) {
		uint64_t photon_us = s->at_us - s->input_sent_us;
		window->stat_photon_us += photon_us;
		window->stat_photons++;
		hud_photon(window, photon_us);
	}
}

static void feedback_drop(struct rv_feedback *fb)
{
	if (fb->feedback) {
		wp_presentation_feedback_destroy(fb->feedback);
	}
	fb->feedback = NULL;
}

static void feedback_sync_output(void *data, struct wp_presentation_feedback *feedback,
	struct wl_output *output)
{
}

static void feedback_presented(void *data, struct wp_presentation_feedback *feedback,
	uint32_t tv_sec_hi, uint32_t tv_sec_lo, uint32_t tv_nsec, uint32_t refresh, uint32_t seq_hi,
	uint32_t seq_lo, uint32_t flags)
{
	struct rv_feedback *fb = data;
	struct rv_window *window = fb->window;
	uint64_t sec = ((uint64_t)tv_sec_hi << 32) | tv_sec_lo;
	uint64_t at = sec * 1000000 + tv_nsec / 1000;
	clockid_t clock = window->viewer->presentation_clock;
	if (clock != CLOCK_MONOTONIC) {
		/* Another clock: carried over to ours by the two clocks' now. */
		struct timespec ts;
		clock_gettime(clock, &ts);
		uint64_t theirs = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
		at = monotonic_usec() - (theirs > at ? theirs - at : 0);
	}
	window->viewer->presentation_works = true;
	shown(window,
		&(struct rv_shown){.drawn_us = fb->drawn_us,
			.input_sent_us = fb->input_sent_us,
			.seq = fb->seq,
			.at_us = at,
			.refresh_ns = refresh,
			.flags = (flags & WP_PRESENTATION_FEEDBACK_KIND_VSYNC)
				? WIRE_PRESENTED_VSYNC
				: 0});
	feedback_drop(fb);
}

static void feedback_discarded(void *data, struct wp_presentation_feedback *feedback)
{
	struct rv_feedback *fb = data;
	/* Never seen; where the desktop has not yet answered feedback, the
	 * frame callback speaks for the picture instead. */
	if (fb->window->viewer->presentation_works) {
		shown(fb->window, &(struct rv_shown){.seq = fb->seq});
	}
	feedback_drop(fb);
}

static const struct wp_presentation_feedback_listener feedback_listener = {
	.sync_output = feedback_sync_output,
	.presented = feedback_presented,
	.discarded = feedback_discarded,
};

/* Asks the desktop when the commit about to be made is shown. Until it
 * has answered once (a desktop may have wp_presentation and never answer:
 * headless sway 1.7 does not), the frame callback that follows the commit,
 * sent when the desktop has drawn it, stands for the moment. A full table
 * drops the oldest question. */
static void ask_feedback(struct rv_window *window, uint64_t drawn_us, uint64_t input_sent_us)
{
	struct rv_viewer *viewer = window->viewer;
	window->committed_drawn_us = drawn_us;
	window->committed_input_sent_us = input_sent_us;
	window->committed_seq = window->received_seq;
	window->committed_unseen = true;
	if (!viewer->presentation) {
		return;
	}
	/* Taken in turn: the next slot is free, or the oldest question. */
	struct rv_feedback *fb = &window->feedback[window->feedback_next];
	window->feedback_next = (window->feedback_next + 1) % RV_FEEDBACKS;
	feedback_drop(fb);
	fb->window = window;
	fb->drawn_us = drawn_us;
	fb->input_sent_us = input_sent_us;
	fb->seq = window->received_seq;
	fb->feedback = wp_presentation_feedback(viewer->presentation, window->surface);
	wp_presentation_feedback_add_listener(fb->feedback, &feedback_listener, fb);
}

static void send_ack(struct rv_window *window)
{
	struct wire_msg msg = {.type = WIRE_FRAME_ACK};
	msg.frame_ack.window = window->id;
	msg.frame_ack.seq = window->received_seq;
	msg.frame_ack.recv_time_us = monotonic_usec();
	connection_send(window->viewer, &msg);
}

/* Darkens a buffer to show the window is disconnected; the buffer then
 * differs from the image everywhere, so it is marked for a full copy. */
static void dim(struct rv_buffer *buf)
{
	pixman_image_t *dst = pixman_image_create_bits_no_clear(PIXMAN_a8r8g8b8, buf->width,
		buf->height, buf->data, buf->width * 4);
	pixman_image_t *shade = pixman_image_create_solid_fill(&(pixman_color_t){0, 0, 0, 0x9000});
	if (dst && shade) {
		pixman_image_composite32(PIXMAN_OP_ATOP, shade, NULL, dst, 0, 0, 0, 0, 0, 0,
			buf->width, buf->height);
	}
	if (shade) {
		pixman_image_unref(shade);
	}
	if (dst) {
		pixman_image_unref(dst);
	}
	pixman_region32_union_rect(&buf->damage, &buf->damage, 0, 0, (unsigned)buf->width,
		(unsigned)buf->height);
}

/* The size the window is shown at: its logical size; a viewer that only
 * watches cannot resize the app, so where its compositor gives the window
 * less room the picture is scaled down to fit (through the viewport),
 * keeping its shape. */
static void shown_size(const struct rv_window *window, int32_t *width, int32_t *height)
{
	window_logical_size(window, width, height);
	int32_t cw = window->configure_width, ch = window->configure_height;
	if (!window->viewer->connection.watching || !window->viewport || cw <= 0 || ch <= 0 ||
		*width <= 0 || *height <= 0 || (*width <= cw && *height <= ch)) {
		return;
	}
	double fit = (double)cw / *width < (double)ch / *height ? (double)cw / *width
								: (double)ch / *height;
	*width = (int32_t)(*width * fit) > 0 ? (int32_t)(*width * fit) : 1;
	*height = (int32_t)(*height * fit) > 0 ? (int32_t)(*height * fit) : 1;
}

/* A maximized window must be exactly the configured size and a fullscreen
 * one at most that: until the remote app has redrawn to fit, the configure
 * stays unacknowledged and the buffer shown is the old state's (the local
 * compositor may end a client that commits a misfit). */
static bool image_fits_configure(const struct rv_window *window)
{
	int32_t cw = window->configure_width, ch = window->configure_height;
	if (!window->image || cw <= 0 || ch <= 0) {
		return true;
	}
	int32_t w, h;
	shown_size(window, &w, &h);
	if (window->configure_states & WIRE_STATE_MAXIMIZED) {
		return w == cw && h == ch;
	}
	if (window->configure_states & WIRE_STATE_FULLSCREEN) {
		return w <= cw && h <= ch;
	}
	return true;
}

void present_ack_configure(struct rv_window *window)
{
	if (window->ack_pending && image_fits_configure(window)) {
		xdg_surface_ack_configure(window->xdg_surface, window->ack_serial);
		window->ack_pending = false;
	}
}

void present(struct rv_window *window)
{
	if (window->dismissed || !window->configured || !window->dirty || window->frame_callback ||
		!window->image || window->copy_pending) {
		return;
	}
	/* A video picture is in its buffer already; else the buffer copies in
	 * only what it has missed of the image. */
	struct rv_buffer *buf = window->decoded_into;
	if (!buf) {
		/* The image goes whole into a buffer of its own size. */
		present_sync_image(window);
		window->buffer_width = window->buffer_height = 0;
		buf = next_buffer(window);
		if (!buf) {
			return;
		}
		int nmissed = 0;
		pixman_box32_t *missed = pixman_region32_rectangles(&buf->damage, &nmissed);
		for (int i = 0; i < nmissed; i++) {
			int32_t x = missed[i].x1, w = missed[i].x2 - missed[i].x1;
			for (int32_t y = missed[i].y1; y < missed[i].y2; y++) {
				size_t off = (size_t)y * window->width + x;
				memcpy(buf->data + off, window->image + off, (size_t)w * 4);
			}
		}
		pixman_region32_clear(&buf->damage);
	}
	window->decoded_into = NULL;
	if (window->disconnected) {
		present_sync_image(window); /* the picture, before buf is dimmed */
		dim(buf);
		pixman_region32_union_rect(&window->pending_damage, &window->pending_damage, 0, 0,
			(unsigned)buf->width, (unsigned)buf->height);
	}

	present_ack_configure(window);
	wl_surface_attach(window->surface, buf->buffer, 0, 0);
	/* The image at the window's logical size: through the viewport, which
	 * takes any buffer size (a fractional scale's too), else by an integer
	 * buffer scale. */
	int32_t logical_w, logical_h;
	shown_size(window, &logical_w, &logical_h);
	if (window->viewport) {
		if (logical_w != window->shown_width || logical_h != window->shown_height) {
			wp_viewport_set_destination(window->viewport, logical_w, logical_h);
			window->shown_width = logical_w;
			window->shown_height = logical_h;
		}
	} else if (window->image_scale != window->surface_scale) {
		wl_surface_set_buffer_scale(window->surface, window->image_scale);
		window->surface_scale = window->image_scale;
	}
	window->has_content = true;
	edges_update(window, false);
	hud_window_resized(window);
	int n = 0;
	pixman_box32_t *boxes = pixman_region32_rectangles(&window->pending_damage, &n);
	for (int i = 0; i < n; i++) {
		wl_surface_damage_buffer(window->surface, boxes[i].x1, boxes[i].y1,
			boxes[i].x2 - boxes[i].x1, boxes[i].y2 - boxes[i].y1);
	}
	pixman_region32_clear(&window->pending_damage);
	window->frame_callback = wl_surface_frame(window->surface);
	wl_callback_add_listener(window->frame_callback, &frame_listener, window);
	uint64_t input_sent = 0;
	if (window->mark_decoded) {
		input_sent = input_mark_sent(window->viewer, window->mark_decoded);
		window->mark_decoded = 0;
	}
	ask_feedback(window, window->drawn_us, input_sent);
	tap_picture(window->id, buf->data, buf->width, buf->height);
	wl_surface_commit(window->surface);
	buf->busy = true;
	window->has_content = true;
	window->dirty = false;
	window->stat_presented++;
	hud_presented(window);
	send_ack(window);
}

struct rv_buffer *present_video_buffer(struct rv_window *window, int32_t width, int32_t height)
{
	bool own = width != window->width || height != window->height;
	if (own && (!window->viewport || width > window->width || height > window->height)) {
		return NULL; /* only the viewport scales */
	}
	window->buffer_width = own ? width : 0;
	window->buffer_height = own ? height : 0;
	if (window->decoded_into && buffer_fits(window, window->decoded_into)) {
		return window->decoded_into; /* not committed yet: the newer wins */
	}
	window->decoded_into = NULL;
	return window->image ? next_buffer(window) : NULL;
}

void present_video_decoded(struct rv_window *window, struct rv_buffer *buf)
{
	present_damage_all(window); /* every other buffer misses all of it */
	pixman_region32_clear(&buf->damage);
	window->decoded_into = buf;
	window->newest = buf;
}

void present_sync_image(struct rv_window *window)
{
	struct rv_buffer *buf = window->newest;
	window->newest = NULL;
	if (!buf || !buf->data) {
		return;
	}
	if (buf->width == window->width && buf->height == window->height) {
		memcpy(window->image, buf->data, (size_t)window->width * window->height * 4);
		return;
	}
	/* A smaller picture, scaled up as the desktop shows it: only when
	 * something reads the image before the stream's lossless end. */
	scale_bilinear(buf->data, buf->width, buf->height, buf->width, window->image, window->width,
		window->height, window->width);
}

void present_damage(struct rv_window *window, pixman_region32_t *damage)
{
	pixman_region32_union(&window->pending_damage, &window->pending_damage, damage);
	for (int i = 0; i < RV_BUFFERS; i++) {
		pixman_region32_union(&window->buffers[i].damage, &window->buffers[i].damage,
			damage);
	}
}

void present_damage_all(struct rv_window *window)
{
	pixman_region32_t all;
	pixman_region32_init_rect(&all, 0, 0, (unsigned)window->width, (unsigned)window->height);
	present_damage(window, &all);
	pixman_region32_fini(&all);
}

void present_resized(struct rv_window *window)
{
	/* The image is new and the next picture whole: nothing to bring over. */
	window->decoded_into = window->newest = NULL;
	for (int i = 0; i < RV_BUFFERS; i++) {
		struct rv_buffer *buf = &window->buffers[i];
		if (buf->buffer && !buf->busy) {
			buffer_drop(buf);
		}
	}
}

void present_init(struct rv_window *window)
{
	struct rv_viewer *viewer = window->viewer;
	if (viewer->viewporter) {
		window->viewport = wp_viewporter_get_viewport(viewer->viewporter, window->surface);
	}
	window->surface_scale = 1;
	pixman_region32_init(&window->pending_damage);
	for (int i = 0; i < RV_BUFFERS; i++) {
		pixman_region32_init(&window->buffers[i].damage);
	}
}

void present_finish(struct rv_window *window)
{
	if (window->viewport) {
		wp_viewport_destroy(window->viewport);
		window->viewport = NULL;
	}
	if (window->frame_callback) {
		wl_callback_destroy(window->frame_callback);
		window->frame_callback = NULL;
	}
	for (int i = 0; i < RV_BUFFERS; i++) {
		buffer_drop(&window->buffers[i]);
		pixman_region32_fini(&window->buffers[i].damage);
	}
	for (int i = 0; i < RV_FEEDBACKS; i++) {
		feedback_drop(&window->feedback[i]);
	}
	window->decoded_into = window->newest = NULL;
	pixman_region32_fini(&window->pending_damage);
}
