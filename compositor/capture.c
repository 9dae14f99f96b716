/*
 * Per-window capture: composites a toplevel's surface tree with pixman into
 * the window's image, cropped to its window geometry, and runs the window's
 * own frame clock, which answers the app's frame callbacks.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <wlr/render/pixman.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/types/wlr_xdg_shell.h>

#include "log.h"
#include "video.h"
#include "server.h"

/* Ticks without damage or frame callbacks before the clock stops. */
#define IDLE_TICKS_BEFORE_STOP 4
/* With no viewer attached, apps get one frame callback in this many ticks. */
#define UNWATCHED_DIVISOR 15

static void free_images(struct rc_window *window)
{
	if (window->image) {
		pixman_image_unref(window->image);
		window->image = NULL;
	}
	free(window->pixels);
	free(window->sent);
	window->pixels = window->sent = NULL;
	window->width = window->height = 0;
}

static bool ensure_images(struct rc_window *window, int32_t width, int32_t height)
{
	if (window->image && width == window->width && height == window->height) {
		return true;
	}
	free_images(window);
	size_t n = (size_t)width * (size_t)height;
	window->pixels = calloc(n, 4);
	window->sent = calloc(n, 4);
	if (!window->pixels || !window->sent) {
		goto error;
	}
	window->image = pixman_image_create_bits_no_clear(PIXMAN_a8r8g8b8, width, height,
		window->pixels, width * 4);
	if (!window->image) {
		goto error;
	}
	window->width = width;
	window->height = height;
	window->need_reset = true;
	pixman_region32_union_rect(&window->damage, &window->damage, 0, 0, width, height);
	return true;
error:
	log_error("out of memory for a %dx%d window", width, height);
	free_images(window);
	return false;
}

struct compose {
	struct rc_window *window;
	pixman_image_t *dst;
};

static void compose_surface(struct wlr_surface *surface, int sx, int sy, void *data)
{
	struct compose *c = data;
	struct wlr_texture *texture = wlr_surface_get_texture(surface);
	if (!texture || !wlr_texture_is_pixman(texture)) {
		return;
	}
	pixman_image_t *src = wlr_pixman_texture_get_image(texture);
	if (!src) {
		return;
	}
	/* Window coordinates times the window's scale are image pixels. */
	int32_t scale = c->window->scale;
	int dx = (sx - c->window->geometry.x) * scale;
	int dy = (sy - c->window->geometry.y) * scale;
	int w = surface->current.width * scale, h = surface->current.height * scale;
	int bw = pixman_image_get_width(src), bh = pixman_image_get_height(src);
	bool scaled = bw != w || bh != h;
	if (scaled) {
		/* A buffer_scale other than ours, or a viewport: sample the
		 * buffer at the size the surface covers in the image. */
		struct pixman_transform transform;
		pixman_transform_init_scale(&transform, pixman_double_to_fixed((double)bw / w),
			pixman_double_to_fixed((double)bh / h));
		pixman_image_set_transform(src, &transform);
		pixman_image_set_filter(src, PIXMAN_FILTER_BILINEAR, NULL, 0);
	}
	pixman_image_composite32(PIXMAN_OP_OVER, src, NULL, c->dst, 0, 0, 0, 0, dx, dy, w, h);
	if (scaled) {
		pixman_image_set_transform(src, NULL);
		pixman_image_set_filter(src, PIXMAN_FILTER_NEAREST, NULL, 0);
	}
}

/* Brings the window's image up to date within its damage. Returns false if
 * there is nothing to capture. */
bool capture_window(struct rc_window *window)
{
	struct wlr_box geo;
	window_get_geometry(window, &geo);
	if (geo.width <= 0 || geo.height <= 0) {
		return false;
	}
	/* Windows past the wire limits are cropped, never refused; the limits
	 * are on image pixels, the window's size times its scale. */
	struct wlr_box full = geo;
	int32_t scale = window->scale;
	if (geo.width > WIRE_MAX_DIM / scale) {
		geo.width = WIRE_MAX_DIM / scale;
	}
	if (geo.height > WIRE_MAX_DIM / scale) {
		geo.height = WIRE_MAX_DIM / scale;
	}
	if ((int64_t)geo.width * geo.height * scale * scale > WIRE_MAX_PIXELS) {
		geo.height = WIRE_MAX_PIXELS / scale / scale / geo.width;
	}
	if ((geo.width != full.width || geo.height != full.height) && !window->crop_logged) {
		log_error("window %u is %dx%d, past the stream's limits (%d per side, %d pixels): "
			  "showing its top-left %dx%d",
			window->id, full.width, full.height, WIRE_MAX_DIM, WIRE_MAX_PIXELS,
			geo.width, geo.height);
		window->crop_logged = true;
	}
	if (geo.x != window->geometry.x || geo.y != window->geometry.y ||
		geo.width != window->geometry.width || geo.height != window->geometry.height) {
		window->geometry = geo;
		window_damage_all(window);
	}
	int32_t width = geo.width * scale, height = geo.height * scale;
	if (!ensure_images(window, width, height)) {
		return false;
	}
	pixman_region32_intersect_rect(&window->damage, &window->damage, 0, 0, width, height);
	if (!pixman_region32_not_empty(&window->damage)) {
		return true;
	}
	pixman_image_set_clip_region32(window->image, &window->damage);
	/* Clear the damaged area, then draw the tree bottom to top. */
	pixman_image_t *clear = pixman_image_create_solid_fill(&(pixman_color_t){0, 0, 0, 0});
	pixman_image_composite32(PIXMAN_OP_SRC, clear, NULL, window->image, 0, 0, 0, 0, 0, 0, width,
		height);
	pixman_image_unref(clear);
	struct compose c = {.window = window, .dst = window->image};
	wlr_surface_for_each_surface(window_surface(window), compose_surface, &c);
	pixman_image_set_clip_region32(window->image, NULL);
	return true;
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

static int handle_tick(int fd, uint32_t mask, void *data)
{
	struct rc_window *window = data;
	struct rc_server *server = window->server;
	uint64_t expirations = 0;
	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN) {
		log_error("frame clock of window %u failed: %s", window->id, strerror(errno));
	}
	window->ticks++;
	if (!window->mapped) {
		return 0;
	}

	bool watched = server->viewer && server->viewer->handshake_done;
	/* Damage keeps the clock going only while someone can receive it; a
	 * viewer that attaches damages every window and restarts its clock. */
	bool busy = watched && (pixman_region32_not_empty(&window->damage) || window->video);
	if (busy && stream_ready_for_frame(server, window)) {
		if (capture_window(window)) {
			stream_send_frame(server, window);
		}
	}

	bool callbacks = false;
	wlr_surface_for_each_surface(window_surface(window), has_callbacks_iter, &callbacks);
	if (callbacks) {
		/* Nobody watching: a trickle keeps apps alive at little cost. */
		if (watched || window->ticks % UNWATCHED_DIVISOR == 0) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			wlr_surface_for_each_surface(window_surface(window), send_frame_done_iter,
				&now);
		}
	}

	if (busy || callbacks) {
		window->idle_ticks = 0;
	} else if (++window->idle_ticks >= IDLE_TICKS_BEFORE_STOP) {
		struct itimerspec off = {0};
		timerfd_settime(window->timer_fd, 0, &off, NULL);
		window->clock_running = false;
	}
	return 0;
}

long capture_frame_interval_ns(const struct rc_window *window)
{
	const struct rc_server *server = window->server;
	if (server->fps_explicit || window->refresh_mhz == 0) {
		return 1000000000L / server->fps;
	}
	/* Between 1 and 240 Hz, whatever the viewer says. */
	uint32_t mhz = window->refresh_mhz;
	mhz = mhz < 1000 ? 1000 : (mhz > 240000 ? 240000 : mhz);
	return (long)(1000000000000LL / mhz);
}

void capture_set_refresh(struct rc_window *window, uint32_t refresh_mhz)
{
	if (window->refresh_mhz == refresh_mhz) {
		return;
	}
	window->refresh_mhz = refresh_mhz;
	log_info("window %u: frame clock %.3f Hz%s", window->id,
		1e9 / capture_frame_interval_ns(window),
		window->server->fps_explicit ? " (--fps)" : " (the viewer's output)");
	if (window->clock_running) {
		window->clock_running = false;
		capture_start_clock(window);
	}
}

void capture_start_clock(struct rc_window *window)
{
	window->idle_ticks = 0;
	if (window->clock_running) {
		return;
	}
	if (window->timer_fd < 0) {
		window->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (window->timer_fd < 0) {
			log_error("cannot create a frame clock: %s", strerror(errno));
			return;
		}
		window->timer = wl_event_loop_add_fd(window->server->loop, window->timer_fd,
			WL_EVENT_READABLE, handle_tick, window);
		if (!window->timer) {
			close(window->timer_fd);
			window->timer_fd = -1;
			return;
		}
	}
	long interval = capture_frame_interval_ns(window);
	/* First tick right away: after idle, the first change goes out at once. */
	struct itimerspec spec = {
		.it_interval = {.tv_sec = interval / 1000000000L,
			.tv_nsec = interval % 1000000000L},
		.it_value = {.tv_sec = 0, .tv_nsec = 1000},
	};
	if (timerfd_settime(window->timer_fd, 0, &spec, NULL) < 0) {
		log_error("cannot start a frame clock: %s", strerror(errno));
		return;
	}
	window->clock_running = true;
}

void capture_finish(struct rc_window *window)
{
	if (window->timer) {
		wl_event_source_remove(window->timer);
		window->timer = NULL;
	}
	if (window->timer_fd >= 0) {
		close(window->timer_fd);
		window->timer_fd = -1;
	}
	free_images(window);
	video_encoder_destroy(window->encoder);
	window->encoder = NULL;
}

/* Writes the window as a binary PPM: what the viewer was last sent. */
bool capture_dump(struct rc_window *window, const char *dir)
{
	if (!window->sent || window->width <= 0) {
		return false;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/window-%u.ppm", dir, window->id);
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		log_error("cannot write %s: %s", tmp, strerror(errno));
		return false;
	}
	fprintf(f, "P6\n%d %d\n255\n", window->width, window->height);
	uint8_t *row = malloc((size_t)window->width * 3);
	if (!row) {
		fclose(f);
		return false;
	}
	for (int32_t y = 0; y < window->height; y++) {
		const uint32_t *src = window->sent + (size_t)y * window->width;
		for (int32_t x = 0; x < window->width; x++) {
			row[x * 3 + 0] = (uint8_t)(src[x] >> 16);
			row[x * 3 + 1] = (uint8_t)(src[x] >> 8);
			row[x * 3 + 2] = (uint8_t)src[x];
		}
		fwrite(row, 3, (size_t)window->width, f);
	}
	free(row);
	bool ok = fclose(f) == 0 && rename(tmp, path) == 0;
	return ok;
}
