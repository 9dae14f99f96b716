/*
 * A test app that scrolls as terminals and editors do: a 480x336 window of
 * text-like lines with a 40-pixel gutter of line numbers and a status line
 * at the bottom. What it draws depends only on the steps taken, so the same
 * app run directly and through rcomp must look the same, pixel for pixel.
 * Each SIGUSR1 takes one step and prints "step N" once it is committed:
 *   1  the whole window scrolls up three lines; three new lines below
 *   2  the text beside the gutter and above the status line scrolls down
 *      one line; a new line on top; the gutter and status line change
 *   3  that text scrolls up 7 pixels; a square is painted in the gutter and
 *      the status line changes
 *   4  that text scrolls up one line; a new line below it
 *   5+ as 4
 * It redraws the whole window each step (damage everywhere), as a terminal
 * that does not track its own scrolling does.
 *
 *   scroll-client APP_ID
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <wayland-client.h>

#include "xdg-shell-client-protocol.h"

#define WIDTH 480
#define HEIGHT 336
#define LINE 16
#define GUTTER 40
#define NBUFFERS 2
#define BG 0xff202428u

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
	uint32_t canvas[WIDTH * HEIGHT];
	uint64_t seed;
	int step;
	bool configured, running, pending;
};

static uint32_t rnd(struct app *app)
{
	app->seed ^= app->seed << 13;
	app->seed ^= app->seed >> 7;
	app->seed ^= app->seed << 17;
	return (uint32_t)app->seed;
}

static void fill(struct app *app, int x0, int y0, int x1, int y1, uint32_t colour)
{
	for (int y = y0; y < y1; y++) {
		for (int x = x0; x < x1; x++) {
			app->canvas[y * WIDTH + x] = colour;
		}
	}
}

/* A line of glyph-like cells of 8x12 between x0 and x1, top at top (rows
 * outside the window are skipped). */
static void text(struct app *app, int x0, int x1, int top, uint32_t ink)
{
	fill(app, x0, top < 0 ? 0 : top, x1, top + LINE > HEIGHT ? HEIGHT : top + LINE, BG);
	int cells = (int)(rnd(app) % (uint32_t)((x1 - x0) / 8));
	for (int c = 0; c < cells; c++) {
		uint32_t glyph = rnd(app);
		for (int gy = 2; gy < 14; gy++) {
			int y = top + gy;
			for (int gx = 1; gx < 7; gx++) {
				if (y >= 0 && y < HEIGHT && ((glyph >> ((gy * 7 + gx) % 32)) & 1)) {
					app->canvas[y * WIDTH + x0 + c * 8 + gx] =
						ink - (uint32_t)(gy * 0x000a0a0a);
				}
			}
		}
	}
}

static void gutter(struct app *app)
{
	for (int top = 0; top + LINE <= HEIGHT - LINE; top += LINE) {
		text(app, 0, GUTTER, top, 0xff8090a0u);
	}
}

static void status(struct app *app)
{
	fill(app, 0, HEIGHT - LINE, WIDTH, HEIGHT, 0xff304060u);
	text(app, 0, WIDTH, HEIGHT - LINE, 0xfff0f0c0u);
}

/* Moves rows y0 to y1 of columns x0 to x1 by dy. */
static void scroll(struct app *app, int x0, int x1, int y0, int y1, int dy)
{
	size_t bytes = (size_t)(x1 - x0) * 4;
	if (dy < 0) {
		for (int y = y0; y < y1 + dy; y++) {
			memmove(&app->canvas[y * WIDTH + x0], &app->canvas[(y - dy) * WIDTH + x0],
				bytes);
		}
	} else {
		for (int y = y1 - 1; y >= y0 + dy; y--) {
			memmove(&app->canvas[y * WIDTH + x0], &app->canvas[(y - dy) * WIDTH + x0],
				bytes);
		}
	}
}

static void take_step(struct app *app)
{
	int body = HEIGHT - LINE; /* above the status line */
	switch (app->step) {
	case 1:
		scroll(app, 0, WIDTH, 0, HEIGHT, -3 * LINE);
		for (int i = 3; i >= 1; i--) {
			text(app, 0, WIDTH, HEIGHT - i * LINE, 0xffd8d8d8u);
		}
		break;
	case 2:
		scroll(app, GUTTER, WIDTH, 0, body, LINE);
		text(app, GUTTER, WIDTH, 0, 0xffc8e0c8u);
		gutter(app);
		status(app);
		break;
	case 3:
		scroll(app, GUTTER, WIDTH, 0, body, -7);
		text(app, GUTTER, WIDTH, body - 7, 0xffe0c8c8u);
		fill(app, 4, 100, 34, 130, 0xffc04080u);
		status(app);
		break;
	default:
		scroll(app, GUTTER, WIDTH, 0, body, -LINE);
		text(app, GUTTER, WIDTH, body - LINE, 0xffd8d8d8u);
		break;
	}
}

static void buffer_release(void *data, struct wl_buffer *wl_buffer)
{
	struct buffer *buf = data;
	buf->busy = false;
}

static const struct wl_buffer_listener buffer_listener = {.release = buffer_release};

/* Shows the canvas; false while every buffer is held (try again later). */
static bool show(struct app *app)
{
	struct buffer *buf = NULL;
	for (int i = 0; i < NBUFFERS && !buf; i++) {
		if (!app->buffers[i].busy) {
			buf = &app->buffers[i];
		}
	}
	if (!buf) {
		return false;
	}
	memcpy(buf->data, app->canvas, sizeof(app->canvas));
	wl_surface_attach(app->surface, buf->buffer, 0, 0);
	wl_surface_damage_buffer(app->surface, 0, 0, WIDTH, HEIGHT);
	wl_surface_commit(app->surface);
	buf->busy = true;
	return true;
}

static void make_buffers(struct app *app)
{
	size_t size = (size_t)WIDTH * HEIGHT * 4;
	int fd = memfd_create("scroll-client", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)(size * NBUFFERS)) < 0) {
		perror("scroll-client: buffers");
		exit(1);
	}
	uint8_t *data = mmap(NULL, size * NBUFFERS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct wl_shm_pool *pool = wl_shm_create_pool(app->shm, fd, (int32_t)(size * NBUFFERS));
	for (int i = 0; i < NBUFFERS; i++) {
		app->buffers[i].buffer = wl_shm_pool_create_buffer(pool, (int32_t)(size * i), WIDTH,
			HEIGHT, WIDTH * 4, WL_SHM_FORMAT_XRGB8888);
		app->buffers[i].data = (uint32_t *)(data + size * i);
		wl_buffer_add_listener(app->buffers[i].buffer, &buffer_listener, &app->buffers[i]);
	}
	wl_shm_pool_destroy(pool);
	close(fd);
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
		show(app);
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
	static struct app app = {.seed = 0x2545f4914f6cdd1dull, .running = true};
	if (argc != 2) {
		fprintf(stderr, "usage: scroll-client APP_ID\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	struct wl_display *display = wl_display_connect(NULL);
	if (!display || sfd < 0) {
		fprintf(stderr, "scroll-client: cannot connect to a Wayland display\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &app);
	wl_display_roundtrip(display);
	if (!app.compositor || !app.shm || !app.wm_base) {
		fprintf(stderr, "scroll-client: missing globals\n");
		return 1;
	}
	fill(&app, 0, 0, WIDTH, HEIGHT, BG);
	for (int top = 0; top + LINE <= HEIGHT - LINE; top += LINE) {
		text(&app, GUTTER, WIDTH, top, 0xffd8d8d8u);
	}
	gutter(&app);
	status(&app);
	make_buffers(&app);
	app.surface = wl_compositor_create_surface(app.compositor);
	struct xdg_surface *xdg_surface = xdg_wm_base_get_xdg_surface(app.wm_base, app.surface);
	xdg_surface_add_listener(xdg_surface, &xdg_surface_listener, &app);
	struct xdg_toplevel *toplevel = xdg_surface_get_toplevel(xdg_surface);
	xdg_toplevel_add_listener(toplevel, &toplevel_listener, &app);
	xdg_toplevel_set_title(toplevel, argv[1]);
	xdg_toplevel_set_app_id(toplevel, argv[1]);
	xdg_toplevel_set_min_size(toplevel, WIDTH, HEIGHT);
	xdg_toplevel_set_max_size(toplevel, WIDTH, HEIGHT);
	wl_surface_commit(app.surface);

	struct pollfd fds[2] = {
		{.fd = wl_display_get_fd(display), .events = POLLIN},
		{.fd = sfd, .events = POLLIN},
	};
	while (app.running) {
		while (wl_display_prepare_read(display) != 0) {
			wl_display_dispatch_pending(display);
		}
		wl_display_flush(display);
		if (poll(fds, 2, app.pending ? 10 : -1) < 0 && errno != EINTR) {
			wl_display_cancel_read(display);
			break;
		}
		if (fds[0].revents & POLLIN) {
			if (wl_display_read_events(display) < 0) {
				break;
			}
		} else {
			wl_display_cancel_read(display);
		}
		if (wl_display_dispatch_pending(display) < 0) {
			break;
		}
		if (fds[1].revents & POLLIN) {
			struct signalfd_siginfo info;
			if (read(sfd, &info, sizeof(info)) == sizeof(info)) {
				app.step++;
				take_step(&app);
				app.pending = true;
			}
		}
		if (app.pending && app.configured && show(&app)) {
			app.pending = false;
			wl_display_roundtrip(display);
			printf("step %d\n", app.step);
		}
		if (fds[0].revents & (POLLHUP | POLLERR)) {
			break;
		}
	}
	wl_display_disconnect(display);
	return 0;
}
