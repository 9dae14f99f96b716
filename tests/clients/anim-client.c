/*
 * A test app that animates, then stops: for SECONDS it redraws all of its
 * 480x360 window on every frame callback (a moving pattern, as a game or a
 * video would), then draws one still picture full of fine detail (one-pixel
 * lines, coloured edges, text-like marks) and prints "still". Tests use it to
 * see a window go to video and come back to lossless with no corruption.
 * A click anywhere toggles a red block (for input-to-photon measurements).
 * With SLOW_AFTER and SLOW_FPS, from SLOW_AFTER seconds on it draws at most
 * SLOW_FPS frames a second (a game whose scene got lighter).
 * With ANIM_UNTIL=PATH in its environment it also stops as soon as PATH
 * exists (SECONDS then is only the most it moves): a test stops the motion
 * once it has seen what it waits for, however late its viewer came.
 * With ANIM_CONTENT_TYPE=photo|video|game it says its surface shows that
 * (wp_content_type_v1) before its first commit.
 *
 *   anim-client SECONDS [WIDTH HEIGHT [SLOW_AFTER SLOW_FPS]]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>

#include "content-type-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define NBUFFERS 3

struct buffer {
	struct wl_buffer *buffer;
	uint32_t *data;
	bool busy;
};

struct app {
	struct wl_compositor *compositor;
	struct wp_content_type_manager_v1 *content_types; /* NULL: not offered */
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct wl_seat *seat;
	struct wl_pointer *pointer;
	struct wl_surface *surface;
	struct buffer buffers[NBUFFERS];
	int width, height;
	double seconds;
	double slow_after, slow_fps; /* 0: always at the frame callbacks' rate */
	double drawn_at; /* elapsed, at the last picture */
	const char *until; /* ANIM_UNTIL: stop once this exists; NULL: none */
	struct timespec start;
	int frame;
	bool configured, still, running, red;
};

static double elapsed(struct app *app)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - app->start.tv_sec) +
		(double)(now.tv_nsec - app->start.tv_nsec) / 1e9;
}

static void buffer_release(void *data, struct wl_buffer *wl_buffer)
{
	struct buffer *buf = data;
	buf->busy = false;
}

static const struct wl_buffer_listener buffer_listener = {.release = buffer_release};

static void make_buffers(struct app *app)
{
	size_t size = (size_t)app->width * app->height * 4;
	int fd = memfd_create("anim-client", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)(size * NBUFFERS)) < 0) {
		perror("anim-client: buffers");
		exit(1);
	}
	uint8_t *data = mmap(NULL, size * NBUFFERS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct wl_shm_pool *pool = wl_shm_create_pool(app->shm, fd, (int32_t)(size * NBUFFERS));
	for (int i = 0; i < NBUFFERS; i++) {
		app->buffers[i].buffer = wl_shm_pool_create_buffer(pool, (int32_t)(size * i),
			app->width, app->height, app->width * 4, WL_SHM_FORMAT_XRGB8888);
		app->buffers[i].data = (uint32_t *)(data + size * i);
		wl_buffer_add_listener(app->buffers[i].buffer, &buffer_listener, &app->buffers[i]);
	}
	wl_shm_pool_destroy(pool);
	close(fd);
}

static void draw_motion(struct app *app, uint32_t *p)
{
	int t = app->frame;
	for (int y = 0; y < app->height; y++) {
		for (int x = 0; x < app->width; x++) {
			uint32_t r = (uint32_t)((x + t * 4) & 0xff);
			uint32_t g = (uint32_t)((y * 2 + t * 3) & 0xff);
			uint32_t b = (uint32_t)(((x + y + t * 6) / 24 & 1) ? 220 : 40);
			p[y * app->width + x] = 0xff000000u | r << 16 | g << 8 | b;
		}
	}
}

/* Fine detail that any lossy codec would blur: lossless must restore it. */
static void draw_still(struct app *app, uint32_t *p)
{
	for (int y = 0; y < app->height; y++) {
		for (int x = 0; x < app->width; x++) {
			uint32_t v;
			if (y < 40) {
				v = ((x ^ y) & 1) ? 0xffffffff : 0xff000000; /* 1-pixel checks */
			} else if (x % 9 < 5 && y % 13 < 7 && ((x * 7 + y * 3) % 5) != 0) {
				v = 0xffe0e0e0 - (uint32_t)((x / 9 + y / 13) % 7) * 0x00101010;
			} else {
				v = 0xff101828 + (uint32_t)((x * 255 / app->width) << 16);
			}
			if (x % 60 == 0 || y % 45 == 0) {
				v = 0xffff0000 >> ((x / 60 + y / 45) % 3 * 8) | 0xff000000;
			}
			p[y * app->width + x] = v;
		}
	}
	if (app->red) {
		for (int y = 100; y < 160; y++) {
			for (int x = 100; x < 160; x++) {
				p[y * app->width + x] = 0xffd02020;
			}
		}
	}
}

static void redraw(struct app *app);

static void frame_done(void *data, struct wl_callback *callback, uint32_t time)
{
	struct app *app = data;
	wl_callback_destroy(callback);
	redraw(app);
}

static const struct wl_callback_listener frame_listener = {.done = frame_done};

static void redraw(struct app *app)
{
	struct buffer *buf = NULL;
	for (int i = 0; i < NBUFFERS; i++) {
		if (!app->buffers[i].busy) {
			buf = &app->buffers[i];
			break;
		}
	}
	double now = elapsed(app);
	bool moving = now < app->seconds && !(app->until && access(app->until, F_OK) == 0);
	/* The first picture is never early: a surface with no buffer yet gets
	 * no frame callbacks. */
	bool early = moving && app->frame > 0 && app->slow_fps > 0 && now >= app->slow_after &&
		now - app->drawn_at < 1.0 / app->slow_fps;
	if (!buf || early) {
		/* All held, or too early: try again at the next frame. */
		struct wl_callback *cb = wl_surface_frame(app->surface);
		wl_callback_add_listener(cb, &frame_listener, app);
		wl_surface_commit(app->surface);
		return;
	}
	if (moving) {
		draw_motion(app, buf->data);
	} else {
		draw_still(app, buf->data);
	}
	app->drawn_at = now;
	app->frame++;
	wl_surface_attach(app->surface, buf->buffer, 0, 0);
	wl_surface_damage_buffer(app->surface, 0, 0, app->width, app->height);
	if (moving) {
		struct wl_callback *cb = wl_surface_frame(app->surface);
		wl_callback_add_listener(cb, &frame_listener, app);
	}
	wl_surface_commit(app->surface);
	buf->busy = true;
	if (!moving && !app->still) {
		app->still = true;
		printf("still after %d frames\n", app->frame);
		fflush(stdout);
	}
}

static void pointer_enter(void *data, struct wl_pointer *p, uint32_t serial,
	struct wl_surface *surface, wl_fixed_t x, wl_fixed_t y)
{
}

static void pointer_leave(void *data, struct wl_pointer *p, uint32_t serial,
	struct wl_surface *surface)
{
}

static void pointer_motion(void *data, struct wl_pointer *p, uint32_t time, wl_fixed_t x,
	wl_fixed_t y)
{
}

static void pointer_button(void *data, struct wl_pointer *p, uint32_t serial, uint32_t time,
	uint32_t button, uint32_t state)
{
	struct app *app = data;
	if (state && app->still) {
		app->red = !app->red;
		printf("click %d\n", app->red);
		fflush(stdout);
		redraw(app);
	}
}

static void pointer_axis(void *data, struct wl_pointer *p, uint32_t time, uint32_t axis,
	wl_fixed_t value)
{
}

static const struct wl_pointer_listener pointer_listener = {
	.enter = pointer_enter,
	.leave = pointer_leave,
	.motion = pointer_motion,
	.button = pointer_button,
	.axis = pointer_axis,
};

static void seat_capabilities(void *data, struct wl_seat *seat, uint32_t caps)
{
	struct app *app = data;
	if ((caps & WL_SEAT_CAPABILITY_POINTER) && !app->pointer) {
		app->pointer = wl_seat_get_pointer(seat);
		wl_pointer_add_listener(app->pointer, &pointer_listener, app);
	}
}

static void seat_name(void *data, struct wl_seat *seat, const char *name)
{
}

static const struct wl_seat_listener seat_listener = {
	.capabilities = seat_capabilities,
	.name = seat_name,
};

static void wm_base_ping(void *data, struct xdg_wm_base *wm_base, uint32_t serial)
{
	xdg_wm_base_pong(wm_base, serial);
}

static const struct xdg_wm_base_listener wm_base_listener = {.ping = wm_base_ping};

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
	const char *interface, uint32_t version)
{
	struct app *app = data;
	if (strcmp(interface, wp_content_type_manager_v1_interface.name) == 0) {
		app->content_types =
			wl_registry_bind(registry, name, &wp_content_type_manager_v1_interface, 1);
	} else if (strcmp(interface, wl_compositor_interface.name) == 0) {
		app->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
	} else if (strcmp(interface, wl_shm_interface.name) == 0) {
		app->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
	} else if (strcmp(interface, xdg_wm_base_interface.name) == 0) {
		app->wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(app->wm_base, &wm_base_listener, app);
	} else if (strcmp(interface, wl_seat_interface.name) == 0 && !app->seat) {
		app->seat = wl_registry_bind(registry, name, &wl_seat_interface, 1);
		wl_seat_add_listener(app->seat, &seat_listener, app);
	}
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

static void xdg_surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
	struct app *app = data;
	xdg_surface_ack_configure(xdg_surface, serial);
	if (!app->configured) {
		app->configured = true;
		clock_gettime(CLOCK_MONOTONIC, &app->start);
		redraw(app);
	}
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

static void toplevel_configure(void *data, struct xdg_toplevel *toplevel, int32_t w, int32_t h,
	struct wl_array *states)
{
}

static void toplevel_close(void *data, struct xdg_toplevel *toplevel)
{
	struct app *app = data;
	app->running = false;
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure,
	.close = toplevel_close,
};

int main(int argc, char **argv)
{
	struct app app = {.width = 480, .height = 360, .running = true};
	app.seconds = argc > 1 ? atof(argv[1]) : 2.0;
	app.until = getenv("ANIM_UNTIL");
	if (argc > 3) {
		app.width = atoi(argv[2]);
		app.height = atoi(argv[3]);
	}
	if (argc > 5) {
		app.slow_after = atof(argv[4]);
		app.slow_fps = atof(argv[5]);
	}
	if (app.width < 1 || app.height < 1 || app.width > 4096 || app.height > 4096) {
		fprintf(stderr, "anim-client: bad size\n");
		return 2;
	}
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "anim-client: cannot connect to a Wayland display\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &app);
	wl_display_roundtrip(display);
	if (!app.compositor || !app.shm || !app.wm_base) {
		fprintf(stderr, "anim-client: missing globals\n");
		return 1;
	}
	make_buffers(&app);
	app.surface = wl_compositor_create_surface(app.compositor);
	/* ANIM_CONTENT_TYPE: what the surface says it shows. */
	const char *type = getenv("ANIM_CONTENT_TYPE");
	struct wp_content_type_v1 *content_type = NULL;
	if (type && app.content_types) {
		uint32_t t = strcmp(type, "game") == 0 ? WP_CONTENT_TYPE_V1_TYPE_GAME
			: strcmp(type, "video") == 0   ? WP_CONTENT_TYPE_V1_TYPE_VIDEO
			: strcmp(type, "photo") == 0   ? WP_CONTENT_TYPE_V1_TYPE_PHOTO
						       : WP_CONTENT_TYPE_V1_TYPE_NONE;
		content_type =
			wp_content_type_manager_v1_get_surface_content_type(app.content_types,
				app.surface);
		wp_content_type_v1_set_content_type(content_type, t);
	} else if (type) {
		fprintf(stderr, "anim-client: no wp_content_type_manager_v1\n");
		return 1;
	}
	struct xdg_surface *xdg_surface = xdg_wm_base_get_xdg_surface(app.wm_base, app.surface);
	xdg_surface_add_listener(xdg_surface, &xdg_surface_listener, &app);
	struct xdg_toplevel *toplevel = xdg_surface_get_toplevel(xdg_surface);
	xdg_toplevel_add_listener(toplevel, &toplevel_listener, &app);
	xdg_toplevel_set_title(toplevel, "rcomp anim test");
	xdg_toplevel_set_app_id(toplevel, "rcomp-anim-test");
	wl_surface_commit(app.surface);
	while (app.running && wl_display_dispatch(display) >= 0) {
	}
	for (int i = 0; i < NBUFFERS; i++) {
		wl_buffer_destroy(app.buffers[i].buffer);
	}
	munmap(app.buffers[0].data, (size_t)app.width * app.height * 4 * NBUFFERS);
	if (app.pointer) {
		wl_pointer_destroy(app.pointer);
	}
	if (app.seat) {
		wl_seat_destroy(app.seat);
	}
	if (content_type) {
		wp_content_type_v1_destroy(content_type);
	}
	if (app.content_types) {
		wp_content_type_manager_v1_destroy(app.content_types);
	}
	xdg_toplevel_destroy(toplevel);
	xdg_surface_destroy(xdg_surface);
	wl_surface_destroy(app.surface);
	xdg_wm_base_destroy(app.wm_base);
	wl_shm_destroy(app.shm);
	wl_compositor_destroy(app.compositor);
	wl_registry_destroy(registry);
	wl_display_disconnect(display);
	return 0;
}
