/*
 * A test app for the window-model tests. Each SIGUSR1 moves it one step on;
 * it prints "step N" once the step's requests are flushed.
 *
 *   model-client subsurfaces
 *     A 200x150 grey toplevel with three subsurfaces: A, red 60x60 at
 *     (20,20), synchronized; C, magenta 20x20 at (10,10) of A, synchronized;
 *     B, yellow 80x80 at (160,110) placed below the toplevel's surface and
 *     desynchronized, so the window is 240x190 and B shows only outside the
 *     grey. Step 1 moves A to (100,40), turns C cyan and unmaps B.
 *
 *   model-client subsurfaces K
 *     The same with every size and place times K (a picture big enough to
 *     be composited in bands).
 *
 *   model-client windows
 *     A 300x200 blue toplevel "model main". Step 1 opens a 160x100 green
 *     dialog "model dialog" whose parent is the main window; step 2 opens a
 *     second 200x120 orange toplevel "model other" with no parent; step 3
 *     destroys the dialog; step 4 destroys "model other"; step 5 renames the
 *     main window "model renamed", app_id rcomp-model-renamed.
 *
 *   model-client cursor
 *     A 300x200 blue toplevel "model cursor" that sets a 16x16 magenta cursor
 *     with its hotspot at (8,8) whenever the pointer enters. Step 1 changes
 *     it to a 24x24 cyan one with the hotspot at (0,0); step 2 hides it.
 *
 *   model-client scale
 *     A 200x150 toplevel "model scale" drawn at the scale of the output its
 *     surface is on (buffer_scale), as a checkerboard of single buffer
 *     pixels, black and white. It prints "scale N" each time it draws.
 *
 *   model-client states
 *     A 300x200 toplevel "model states" whose minimum and maximum size are
 *     both 300x200. It prints "configure W H STATES" for each configure.
 *     Steps: 1 set_fullscreen, 2 unset_fullscreen, 3 set_maximized,
 *     4 unset_maximized, 5 set_minimized.
 *
 *   model-client maximize
 *     The same window without size hints, taking the size each configure
 *     gives, as a compositor that maximizes expects; steps: 1 set_maximized,
 *     2 unset_maximized, 3 set_minimized.
 *
 * Every window has app_id rcomp-model. In windows mode they take the size a
 * configure gives; elsewhere they keep their own.
 * Closing the main window ends the app.
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

struct app;

struct toplevel {
	struct app *app;
	struct wl_surface *surface;
	struct xdg_surface *xdg_surface;
	struct xdg_toplevel *xdg_toplevel;
	int width, height;
	uint32_t colour;
	int pending_width, pending_height; /* from the last configure; 0: ours */
	bool configured;
};

struct app {
	struct wl_display *display;
	struct wl_compositor *compositor;
	struct wl_subcompositor *subcompositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct wl_seat *seat;
	struct wl_pointer *pointer;
	bool running;
	bool states; /* states or maximize mode: print configures */
	bool maximize_only;
	bool follow_configure; /* windows mode: take the size a configure gives */
	int step;
	int k; /* subsurfaces: sizes and places times this */
	struct toplevel *main, *dialog, *other;
	/* subsurfaces mode */
	struct wl_surface *a, *b, *c;
	struct wl_subsurface *sub_a, *sub_b, *sub_c;
	/* scale mode */
	bool scale_mode;
	struct {
		struct wl_output *output;
		int32_t scale;
	} outputs[8];
	int noutputs;
	struct wl_output *entered[8];
	int nentered;
	int32_t drawn_scale;
	/* cursor mode */
	struct wl_surface *cursor;
	uint32_t enter_serial;
};

static void buffer_release(void *data, struct wl_buffer *buffer)
{
	wl_buffer_destroy(buffer);
}

static const struct wl_buffer_listener buffer_listener = {.release = buffer_release};

/* Attaches a new w x h buffer of one colour to surface (not committed). */
static void fill(struct app *app, struct wl_surface *surface, int w, int h, uint32_t colour)
{
	size_t size = (size_t)w * h * 4;
	int fd = memfd_create("model-client", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		perror("model-client: buffer");
		exit(1);
	}
	uint32_t *data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (data == MAP_FAILED) {
		perror("model-client: mmap");
		exit(1);
	}
	for (size_t i = 0; i < (size_t)w * h; i++) {
		data[i] = colour;
	}
	munmap(data, size);
	struct wl_shm_pool *pool = wl_shm_create_pool(app->shm, fd, (int32_t)size);
	struct wl_buffer *buffer =
		wl_shm_pool_create_buffer(pool, 0, w, h, w * 4, WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	wl_buffer_add_listener(buffer, &buffer_listener, NULL);
	wl_surface_attach(surface, buffer, 0, 0);
	wl_surface_damage_buffer(surface, 0, 0, w, h);
}

/* scale mode: a checkerboard of buffer pixels at the surface's scale. */
static void draw_checkerboard(struct app *app)
{
	int32_t scale = 1;
	for (int i = 0; i < app->nentered; i++) {
		for (int j = 0; j < app->noutputs; j++) {
			if (app->outputs[j].output == app->entered[i] &&
				app->outputs[j].scale > scale) {
				scale = app->outputs[j].scale;
			}
		}
	}
	struct toplevel *t = app->main;
	if (!app->scale_mode || !t->configured || scale == app->drawn_scale) {
		return;
	}
	app->drawn_scale = scale;
	int w = t->width * scale, h = t->height * scale;
	size_t size = (size_t)w * h * 4;
	int fd = memfd_create("model-client", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		exit(1);
	}
	uint32_t *data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (data == MAP_FAILED) {
		exit(1);
	}
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			data[y * w + x] = (x + y) % 2 ? 0xffffffff : 0xff000000;
		}
	}
	munmap(data, size);
	struct wl_shm_pool *pool = wl_shm_create_pool(app->shm, fd, (int32_t)size);
	struct wl_buffer *buffer =
		wl_shm_pool_create_buffer(pool, 0, w, h, w * 4, WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	wl_buffer_add_listener(buffer, &buffer_listener, NULL);
	wl_surface_attach(t->surface, buffer, 0, 0);
	wl_surface_set_buffer_scale(t->surface, scale);
	wl_surface_damage_buffer(t->surface, 0, 0, w, h);
	wl_surface_commit(t->surface);
	printf("scale %d\n", scale);
}

static void surface_enter(void *data, struct wl_surface *surface, struct wl_output *output)
{
	struct app *app = data;
	if (app->nentered < 8) {
		app->entered[app->nentered++] = output;
	}
	draw_checkerboard(app);
}

static void surface_leave(void *data, struct wl_surface *surface, struct wl_output *output)
{
	struct app *app = data;
	for (int i = 0; i < app->nentered; i++) {
		if (app->entered[i] == output) {
			app->entered[i] = app->entered[--app->nentered];
			break;
		}
	}
	draw_checkerboard(app);
}

static const struct wl_surface_listener surface_listener = {
	.enter = surface_enter,
	.leave = surface_leave,
};

static void output_geometry(void *data, struct wl_output *output, int32_t x, int32_t y, int32_t pw,
	int32_t ph, int32_t subpixel, const char *make, const char *model, int32_t transform)
{
}

static void output_mode(void *data, struct wl_output *output, uint32_t flags, int32_t w, int32_t h,
	int32_t refresh)
{
}

static void output_done(void *data, struct wl_output *output)
{
	draw_checkerboard(data);
}

static void output_scale(void *data, struct wl_output *output, int32_t factor)
{
	struct app *app = data;
	for (int i = 0; i < app->noutputs; i++) {
		if (app->outputs[i].output == output) {
			app->outputs[i].scale = factor;
		}
	}
}

static const struct wl_output_listener output_listener = {
	.geometry = output_geometry,
	.mode = output_mode,
	.done = output_done,
	.scale = output_scale,
};

static void xdg_surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
	struct toplevel *t = data;
	xdg_surface_ack_configure(xdg_surface, serial);
	bool resized = t->app->follow_configure && t->pending_width > 0 && t->pending_height > 0 &&
		(t->pending_width != t->width || t->pending_height != t->height);
	if (resized) {
		t->width = t->pending_width;
		t->height = t->pending_height;
	}
	if (t->app->drawn_scale != 0 && t == t->app->main) {
		return; /* scale mode: drawn by draw_checkerboard */
	}
	if (!t->configured || resized) {
		t->configured = true;
		fill(t->app, t->surface, t->width, t->height, t->colour);
		wl_surface_commit(t->surface);
	}
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

static void toplevel_configure(void *data, struct xdg_toplevel *xdg_toplevel, int32_t w, int32_t h,
	struct wl_array *states)
{
	struct toplevel *t = data;
	t->pending_width = w;
	t->pending_height = h;
	if (t->app->states) {
		printf("configure %d %d", w, h);
		uint32_t *state;
		wl_array_for_each(state, states)
		{
			printf(" %s",
				*state == XDG_TOPLEVEL_STATE_MAXIMIZED		  ? "maximized"
					: *state == XDG_TOPLEVEL_STATE_FULLSCREEN ? "fullscreen"
					: *state == XDG_TOPLEVEL_STATE_ACTIVATED  ? "activated"
										  : "other");
		}
		printf("\n");
	}
}

static void toplevel_close(void *data, struct xdg_toplevel *xdg_toplevel)
{
	struct toplevel *t = data;
	printf("close %s\n", t == t->app->main ? "main" : t == t->app->dialog ? "dialog" : "other");
	if (t == t->app->main) {
		t->app->running = false;
	}
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure,
	.close = toplevel_close,
};

static struct toplevel *toplevel_create(struct app *app, const char *title, int w, int h,
	uint32_t colour, struct toplevel *parent)
{
	struct toplevel *t = calloc(1, sizeof(*t));
	if (!t) {
		exit(1);
	}
	t->app = app;
	t->width = w;
	t->height = h;
	t->colour = colour;
	t->surface = wl_compositor_create_surface(app->compositor);
	t->xdg_surface = xdg_wm_base_get_xdg_surface(app->wm_base, t->surface);
	xdg_surface_add_listener(t->xdg_surface, &xdg_surface_listener, t);
	t->xdg_toplevel = xdg_surface_get_toplevel(t->xdg_surface);
	xdg_toplevel_add_listener(t->xdg_toplevel, &toplevel_listener, t);
	xdg_toplevel_set_title(t->xdg_toplevel, title);
	xdg_toplevel_set_app_id(t->xdg_toplevel, "rcomp-model");
	if (parent) {
		xdg_toplevel_set_parent(t->xdg_toplevel, parent->xdg_toplevel);
	}
	wl_surface_commit(t->surface);
	return t;
}

static void toplevel_destroy(struct toplevel *t)
{
	if (!t) {
		return;
	}
	xdg_toplevel_destroy(t->xdg_toplevel);
	xdg_surface_destroy(t->xdg_surface);
	wl_surface_destroy(t->surface);
	free(t);
}

static void pointer_enter(void *data, struct wl_pointer *pointer, uint32_t serial,
	struct wl_surface *surface, wl_fixed_t x, wl_fixed_t y)
{
	struct app *app = data;
	app->enter_serial = serial;
	if (app->cursor && app->step == 0) {
		fill(app, app->cursor, 16, 16, 0xffe020e0);
		wl_surface_commit(app->cursor);
		wl_pointer_set_cursor(pointer, serial, app->cursor, 8, 8);
	}
	printf("pointer-enter\n");
}

static void pointer_leave(void *data, struct wl_pointer *pointer, uint32_t serial,
	struct wl_surface *surface)
{
}

static void pointer_motion(void *data, struct wl_pointer *pointer, uint32_t time, wl_fixed_t x,
	wl_fixed_t y)
{
}

static void pointer_button(void *data, struct wl_pointer *pointer, uint32_t serial, uint32_t time,
	uint32_t button, uint32_t state)
{
}

static void pointer_axis(void *data, struct wl_pointer *pointer, uint32_t time, uint32_t axis,
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
	if (strcmp(interface, wl_compositor_interface.name) == 0) {
		app->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
	} else if (strcmp(interface, wl_subcompositor_interface.name) == 0) {
		app->subcompositor =
			wl_registry_bind(registry, name, &wl_subcompositor_interface, 1);
	} else if (strcmp(interface, wl_shm_interface.name) == 0) {
		app->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
	} else if (strcmp(interface, xdg_wm_base_interface.name) == 0) {
		app->wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(app->wm_base, &wm_base_listener, app);
	} else if (strcmp(interface, wl_output_interface.name) == 0 && app->noutputs < 8) {
		struct wl_output *output =
			wl_registry_bind(registry, name, &wl_output_interface, 2);
		app->outputs[app->noutputs].output = output;
		app->outputs[app->noutputs].scale = 1;
		app->noutputs++;
		wl_output_add_listener(output, &output_listener, app);
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

static struct wl_subsurface *subsurface_create(struct app *app, struct wl_surface *surface,
	struct wl_surface *parent, int x, int y)
{
	struct wl_subsurface *sub =
		wl_subcompositor_get_subsurface(app->subcompositor, surface, parent);
	wl_subsurface_set_position(sub, x, y);
	return sub;
}

static void subsurfaces_start(struct app *app)
{
	int k = app->k;
	app->main = toplevel_create(app, "model subsurfaces", 200 * k, 150 * k, 0xff808080, NULL);
	app->a = wl_compositor_create_surface(app->compositor);
	app->b = wl_compositor_create_surface(app->compositor);
	app->c = wl_compositor_create_surface(app->compositor);
	app->sub_a = subsurface_create(app, app->a, app->main->surface, 20 * k, 20 * k);
	app->sub_c = subsurface_create(app, app->c, app->a, 10 * k, 10 * k);
	app->sub_b = subsurface_create(app, app->b, app->main->surface, 160 * k, 110 * k);
	wl_subsurface_place_below(app->sub_b, app->main->surface);
	wl_subsurface_set_desync(app->sub_b);
	/* Synchronized: these apply with the toplevel's first commit. */
	fill(app, app->c, 20 * k, 20 * k, 0xffe020e0);
	wl_surface_commit(app->c);
	fill(app, app->a, 60 * k, 60 * k, 0xffe02020);
	wl_surface_commit(app->a);
	fill(app, app->b, 80 * k, 80 * k, 0xffe0e020);
	wl_surface_commit(app->b);
}

static void subsurfaces_step(struct app *app)
{
	if (app->step != 1) {
		return;
	}
	int k = app->k;
	/* A's move and C's colour wait for the toplevel's commit. */
	wl_subsurface_set_position(app->sub_a, 100 * k, 40 * k);
	fill(app, app->c, 20 * k, 20 * k, 0xff20e0e0);
	wl_surface_commit(app->c);
	wl_surface_commit(app->a);
	/* B is desynchronized: unmapped at once. */
	wl_surface_attach(app->b, NULL, 0, 0);
	wl_surface_commit(app->b);
	wl_surface_commit(app->main->surface);
}

static void windows_step(struct app *app)
{
	switch (app->step) {
	case 1:
		app->dialog = toplevel_create(app, "model dialog", 160, 100, 0xff20c020, app->main);
		break;
	case 2:
		app->other = toplevel_create(app, "model other", 200, 120, 0xffe08020, NULL);
		break;
	case 3:
		toplevel_destroy(app->dialog);
		app->dialog = NULL;
		break;
	case 4:
		toplevel_destroy(app->other);
		app->other = NULL;
		break;
	case 5:
		xdg_toplevel_set_title(app->main->xdg_toplevel, "model renamed");
		xdg_toplevel_set_app_id(app->main->xdg_toplevel, "rcomp-model-renamed");
		break;
	}
}

static void states_step(struct app *app)
{
	struct xdg_toplevel *toplevel = app->main->xdg_toplevel;
	switch (app->maximize_only ? app->step + 2 : app->step) {
	case 1:
		xdg_toplevel_set_fullscreen(toplevel, NULL);
		break;
	case 2:
		xdg_toplevel_unset_fullscreen(toplevel);
		break;
	case 3:
		xdg_toplevel_set_maximized(toplevel);
		break;
	case 4:
		xdg_toplevel_unset_maximized(toplevel);
		break;
	case 5:
		xdg_toplevel_set_minimized(toplevel);
		break;
	}
}

static void cursor_step(struct app *app)
{
	if (!app->pointer) {
		return;
	}
	if (app->step == 1) {
		fill(app, app->cursor, 24, 24, 0xff20e0e0);
		wl_surface_commit(app->cursor);
		wl_pointer_set_cursor(app->pointer, app->enter_serial, app->cursor, 0, 0);
	} else if (app->step == 2) {
		wl_pointer_set_cursor(app->pointer, app->enter_serial, NULL, 0, 0);
	}
}

int main(int argc, char **argv)
{
	struct app app = {.running = true, .k = 1};
	bool subsurfaces = (argc == 2 || argc == 3) && strcmp(argv[1], "subsurfaces") == 0;
	if (subsurfaces && argc == 3) {
		app.k = atoi(argv[2]);
		subsurfaces = app.k >= 1 && app.k <= 16;
	}
	bool windows = argc == 2 && strcmp(argv[1], "windows") == 0;
	bool cursor = argc == 2 && strcmp(argv[1], "cursor") == 0;
	bool scale = argc == 2 && strcmp(argv[1], "scale") == 0;
	app.maximize_only = argc == 2 && strcmp(argv[1], "maximize") == 0;
	app.states = app.maximize_only || (argc == 2 && strcmp(argv[1], "states") == 0);
	if (!subsurfaces && !windows && !cursor && !scale && !app.states) {
		fprintf(stderr,
			"usage: model-client subsurfaces [K] | windows | cursor | scale | "
			"states | maximize\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	app.display = wl_display_connect(NULL);
	if (!app.display || sfd < 0) {
		fprintf(stderr, "model-client: cannot connect to a Wayland display\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(app.display);
	wl_registry_add_listener(registry, &registry_listener, &app);
	wl_display_roundtrip(app.display);
	if (!app.compositor || !app.subcompositor || !app.shm || !app.wm_base) {
		fprintf(stderr, "model-client: missing globals\n");
		return 1;
	}
	if (subsurfaces) {
		subsurfaces_start(&app);
	} else if (app.states) {
		app.main = toplevel_create(&app, "model states", 300, 200, 0xff2040e0, NULL);
		if (app.maximize_only) {
			app.follow_configure = true;
		} else {
			xdg_toplevel_set_min_size(app.main->xdg_toplevel, 300, 200);
			xdg_toplevel_set_max_size(app.main->xdg_toplevel, 300, 200);
			wl_surface_commit(app.main->surface);
		}
	} else if (scale) {
		app.scale_mode = true;
		app.main = toplevel_create(&app, "model scale", 200, 150, 0xff000000, NULL);
		wl_surface_add_listener(app.main->surface, &surface_listener, &app);
	} else if (cursor) {
		app.main = toplevel_create(&app, "model cursor", 300, 200, 0xff2040e0, NULL);
		app.cursor = wl_compositor_create_surface(app.compositor);
	} else {
		app.follow_configure = true;
		app.main = toplevel_create(&app, "model main", 300, 200, 0xff2040e0, NULL);
	}
	printf("ready\n");

	struct pollfd fds[2] = {
		{.fd = wl_display_get_fd(app.display), .events = POLLIN},
		{.fd = sfd, .events = POLLIN},
	};
	while (app.running) {
		while (wl_display_prepare_read(app.display) != 0) {
			wl_display_dispatch_pending(app.display);
		}
		wl_display_flush(app.display);
		if (poll(fds, 2, -1) < 0 && errno != EINTR) {
			wl_display_cancel_read(app.display);
			break;
		}
		if (fds[0].revents & POLLIN) {
			if (wl_display_read_events(app.display) < 0) {
				break;
			}
		} else {
			wl_display_cancel_read(app.display);
		}
		if (wl_display_dispatch_pending(app.display) < 0) {
			break;
		}
		if (fds[1].revents & POLLIN) {
			struct signalfd_siginfo info;
			if (read(sfd, &info, sizeof(info)) == sizeof(info)) {
				app.step++;
				if (subsurfaces) {
					subsurfaces_step(&app);
				} else if (cursor) {
					cursor_step(&app);
				} else if (app.states) {
					states_step(&app);
				} else {
					windows_step(&app);
				}
				wl_display_roundtrip(app.display);
				printf("step %d\n", app.step);
			}
		}
		if (fds[0].revents & (POLLHUP | POLLERR)) {
			break;
		}
	}
	toplevel_destroy(app.other);
	toplevel_destroy(app.dialog);
	toplevel_destroy(app.main);
	/* Every proxy goes, so that a sanitizer build's leak check is clean. */
	for (int i = 0; i < app.noutputs; i++) {
		wl_output_destroy(app.outputs[i].output);
	}
	if (app.pointer) {
		wl_pointer_destroy(app.pointer);
	}
	if (app.seat) {
		wl_seat_destroy(app.seat);
	}
	xdg_wm_base_destroy(app.wm_base);
	wl_shm_destroy(app.shm);
	wl_subcompositor_destroy(app.subcompositor);
	wl_compositor_destroy(app.compositor);
	wl_registry_destroy(registry);
	wl_display_disconnect(app.display);
	return 0;
}
