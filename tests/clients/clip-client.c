/*
 * A test app that plays a recorded clip as a game draws: one picture a
 * frame callback, each frame's index drawn into it (tests/clients/mark.h).
 * It shows the clip's first frame, still, for STILL seconds, prints
 * "motion T" (T: CLOCK_MONOTONIC microseconds) and then draws frame 1, 2,
 * ... of the clip (round again after the last) on each frame callback for
 * SECONDS, then exits; with GO, motion waits also for that file to exist
 * (the bench makes it once the viewer shows the first picture, whatever
 * the link took to carry it). With TYPING, it first types for that many
 * seconds, as a terminal does over the same link before a game starts:
 * ten glyphs a second (8x16 pixels each, lines of them below the mark),
 * each a small damage of its own. The clip is raw XRGB8888 (ffmpeg's bgr0) pictures
 * of WIDTH x HEIGHT, one after another; tools/bench_quality.py records it
 * and compares what a viewer showed with the same frames.
 *
 *   clip-client CLIP WIDTH HEIGHT [STILL [SECONDS [GO [TYPING]]]]
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>

#include "mark.h"
#include "xdg-shell-client-protocol.h"

#define NBUFFERS 3

struct buffer {
	struct wl_buffer *buffer;
	uint32_t *data;
	bool busy;
};

struct app {
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct wl_surface *surface;
	struct buffer buffers[NBUFFERS];
	int width, height;
	const uint32_t *clip;
	long frames; /* in the clip */
	double still, seconds;
	const char *go; /* motion waits for this file too */
	double typing; /* seconds of typing before motion */
	double typing_at; /* elapsed, when typing began; 0: not yet */
	long typed; /* glyphs typed */
	struct timespec start;
	double motion_at; /* elapsed, when motion began */
	long drawn; /* pictures drawn since motion began */
	bool configured, still_drawn, moving, running;
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
	int fd = memfd_create("clip-client", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)(size * NBUFFERS)) < 0) {
		perror("clip-client: buffers");
		exit(1);
	}
	uint8_t *data = mmap(NULL, size * NBUFFERS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (data == MAP_FAILED) {
		perror("clip-client: buffers");
		exit(1);
	}
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

static void redraw(struct app *app);

static void frame_done(void *data, struct wl_callback *callback, uint32_t time)
{
	struct app *app = data;
	wl_callback_destroy(callback);
	redraw(app);
}

static const struct wl_callback_listener frame_listener = {.done = frame_done};

/* The still picture with the glyphs typed so far, the newest damaged. */
static void type(struct app *app, double now)
{
	struct wl_callback *cb = wl_surface_frame(app->surface);
	wl_callback_add_listener(cb, &frame_listener, app);
	long due = (long)((now - app->typing_at) * 10);
	struct buffer *buf = NULL;
	for (int i = 0; i < NBUFFERS && due > app->typed; i++) {
		if (!app->buffers[i].busy) {
			buf = &app->buffers[i];
		}
	}
	int per_line = (app->width - 20) / 9, lines = (app->height - MARK_SIZE - 40) / 18;
	if (buf && per_line > 0 && lines > 0) {
		size_t pixels = (size_t)app->width * app->height;
		memcpy(buf->data, app->clip, pixels * 4);
		mark_draw(buf->data, app->width, 0);
		int gx = 0, gy = 0;
		for (long n = 0; n <= app->typed; n++) {
			gx = 10 + (int)(n % per_line) * 9;
			gy = MARK_SIZE + 20 + (int)((n / per_line) % lines) * 18;
			uint32_t bits = (uint32_t)n * 2654435761u;
			for (int y = 0; y < 16; y++) {
				for (int x = 0; x < 8; x++) {
					bool on = (bits >> ((y / 2) * 4 + x / 2) & 1) && y > 1 &&
						y < 14;
					buf->data[(size_t)(gy + y) * app->width + gx + x] =
						on ? 0xffe0e0e0u : 0xff101010u;
				}
			}
		}
		wl_surface_attach(app->surface, buf->buffer, 0, 0);
		wl_surface_damage_buffer(app->surface, gx, gy, 8, 16);
		buf->busy = true;
		app->typed++;
	}
	wl_surface_commit(app->surface);
}

static void redraw(struct app *app)
{
	double now = elapsed(app);
	if (app->moving && now >= app->motion_at + app->seconds) {
		printf("done after %ld frames\n", app->drawn);
		fflush(stdout);
		app->running = false;
		return;
	}
	bool ready = !app->moving && app->still_drawn && now >= app->still &&
		(!app->go || access(app->go, F_OK) == 0);
	if (ready && app->typing > 0 && app->typing_at == 0) {
		app->typing_at = now;
		printf("typing\n");
		fflush(stdout);
	}
	bool typing = ready && app->typing_at > 0 && now < app->typing_at + app->typing;
	if (typing) {
		type(app, now);
		return;
	}
	if (ready) {
		app->moving = true;
		app->motion_at = now;
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		printf("motion %lld\n", (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000);
		fflush(stdout);
	}
	struct buffer *buf = NULL;
	for (int i = 0; i < NBUFFERS; i++) {
		if (!app->buffers[i].busy) {
			buf = &app->buffers[i];
			break;
		}
	}
	struct wl_callback *cb = wl_surface_frame(app->surface);
	wl_callback_add_listener(cb, &frame_listener, app);
	/* Still, the first picture is drawn once and the callbacks only wait
	 * for motion; with all buffers held, the next callback tries again. */
	if (buf && (app->moving || !app->still_drawn)) {
		long index = app->moving ? (app->drawn + 1) % app->frames : 0;
		size_t pixels = (size_t)app->width * app->height;
		memcpy(buf->data, app->clip + pixels * (size_t)index, pixels * 4);
		mark_draw(buf->data, app->width, (uint32_t)index);
		wl_surface_attach(app->surface, buf->buffer, 0, 0);
		wl_surface_damage_buffer(app->surface, 0, 0, app->width, app->height);
		buf->busy = true;
		if (app->moving) {
			app->drawn++;
		}
		app->still_drawn = true;
	}
	wl_surface_commit(app->surface);
}

static void wm_base_ping(void *data, struct xdg_wm_base *wm_base, uint32_t serial)
{
	xdg_wm_base_pong(wm_base, serial);
}

static const struct xdg_wm_base_listener wm_base_listener = {.ping = wm_base_ping};

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
	const char *interface, uint32_t version)
{
	struct app *app = data;
	if (strcmp(interface, wl_compositor_interface.name) == 0) {
		app->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
	} else if (strcmp(interface, wl_shm_interface.name) == 0) {
		app->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
	} else if (strcmp(interface, xdg_wm_base_interface.name) == 0) {
		app->wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(app->wm_base, &wm_base_listener, app);
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

/* The clip, mapped: its frames of width x height, or NULL. */
static const uint32_t *map_clip(const char *path, int width, int height, long *frames)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(path);
		return NULL;
	}
	size_t frame = (size_t)width * height * 4;
	*frames = (long)((size_t)st.st_size / frame);
	if (*frames < 2 || *frames > (long)MARK_MODULO) {
		fprintf(stderr, "clip-client: %s holds %ld frames of %dx%d (2 to %u wanted)\n",
			path, *frames, width, height, MARK_MODULO);
		close(fd);
		return NULL;
	}
	void *p = mmap(NULL, (size_t)*frames * frame, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror(path);
		return NULL;
	}
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr,
			"usage: clip-client CLIP WIDTH HEIGHT [STILL [SECONDS [GO [TYPING]]]]\n");
		return 2;
	}
	struct app app = {.width = atoi(argv[2]), .height = atoi(argv[3]), .running = true};
	app.still = argc > 4 ? atof(argv[4]) : 2.0;
	app.seconds = argc > 5 ? atof(argv[5]) : 10.0;
	app.go = argc > 6 && *argv[6] ? argv[6] : NULL;
	app.typing = argc > 7 ? atof(argv[7]) : 0;
	if (app.width < MARK_BITS * MARK_SIZE || app.height < MARK_SIZE || app.width > 4096 ||
		app.height > 4096) {
		fprintf(stderr, "clip-client: bad size\n");
		return 2;
	}
	app.clip = map_clip(argv[1], app.width, app.height, &app.frames);
	if (!app.clip) {
		return 1;
	}
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "clip-client: cannot connect to a Wayland display\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &app);
	wl_display_roundtrip(display);
	if (!app.compositor || !app.shm || !app.wm_base) {
		fprintf(stderr, "clip-client: missing globals\n");
		return 1;
	}
	make_buffers(&app);
	app.surface = wl_compositor_create_surface(app.compositor);
	struct xdg_surface *xdg_surface = xdg_wm_base_get_xdg_surface(app.wm_base, app.surface);
	xdg_surface_add_listener(xdg_surface, &xdg_surface_listener, &app);
	struct xdg_toplevel *toplevel = xdg_surface_get_toplevel(xdg_surface);
	xdg_toplevel_add_listener(toplevel, &toplevel_listener, &app);
	xdg_toplevel_set_title(toplevel, "rcomp clip test");
	xdg_toplevel_set_app_id(toplevel, "rcomp-clip-test");
	wl_surface_commit(app.surface);
	while (app.running && wl_display_dispatch(display) >= 0) {
	}
	wl_display_disconnect(display);
	return 0;
}
