/*
 * A misbehaving app for the fault tests.
 *
 *   abuse-client huge          commits one 16384x16384 buffer (1 GiB of shm,
 *                              only its top-left corner drawn), then idles
 *   abuse-client flood SECONDS commits a 256x256 window as fast as it can,
 *                              never waiting for a frame callback, then
 *                              prints "commits N" and idles
 *
 * Both windows have app_id rcomp-abuse and the mode as their title.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>

#include "xdg-shell-client-protocol.h"

struct app {
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	bool configured;
};

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
	}
}

static void registry_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {registry_global, registry_remove};

static void wm_ping(void *data, struct xdg_wm_base *base, uint32_t serial)
{
	xdg_wm_base_pong(base, serial);
}

static const struct xdg_wm_base_listener wm_listener = {wm_ping};

static void surface_configure(void *data, struct xdg_surface *surface, uint32_t serial)
{
	struct app *app = data;
	xdg_surface_ack_configure(surface, serial);
	app->configured = true;
}

static const struct xdg_surface_listener surface_listener = {surface_configure};

static void toplevel_configure(void *data, struct xdg_toplevel *toplevel, int32_t w, int32_t h,
	struct wl_array *states)
{
}

static void toplevel_close(void *data, struct xdg_toplevel *toplevel)
{
	exit(0);
}

static const struct xdg_toplevel_listener toplevel_listener = {toplevel_configure, toplevel_close};

static struct wl_buffer *make_buffer(struct app *app, int width, int height, uint32_t **data)
{
	size_t size = (size_t)width * height * 4;
	int fd = memfd_create("abuse-client", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		perror("abuse-client: buffer");
		exit(1);
	}
	*data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*data == MAP_FAILED) {
		perror("abuse-client: mmap");
		exit(1);
	}
	struct wl_shm_pool *pool = wl_shm_create_pool(app->shm, fd, (int32_t)size);
	struct wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, width, height, width * 4,
		WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	return buffer;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	bool huge = argc >= 2 && strcmp(argv[1], "huge") == 0;
	bool flood = argc >= 3 && strcmp(argv[1], "flood") == 0;
	if (!huge && !flood) {
		fprintf(stderr, "usage: abuse-client huge | abuse-client flood SECONDS\n");
		return 2;
	}
	struct app app = {0};
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "abuse-client: cannot connect to a Wayland display\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &app);
	wl_display_roundtrip(display);
	if (!app.compositor || !app.shm || !app.wm_base) {
		fprintf(stderr, "abuse-client: missing globals\n");
		return 1;
	}
	xdg_wm_base_add_listener(app.wm_base, &wm_listener, NULL);
	struct wl_surface *surface = wl_compositor_create_surface(app.compositor);
	struct xdg_surface *xdg_surface = xdg_wm_base_get_xdg_surface(app.wm_base, surface);
	xdg_surface_add_listener(xdg_surface, &surface_listener, &app);
	struct xdg_toplevel *toplevel = xdg_surface_get_toplevel(xdg_surface);
	xdg_toplevel_add_listener(toplevel, &toplevel_listener, &app);
	xdg_toplevel_set_title(toplevel, argv[1]);
	xdg_toplevel_set_app_id(toplevel, "rcomp-abuse");
	wl_surface_commit(surface);
	while (!app.configured && wl_display_dispatch(display) >= 0) {
	}

	if (huge) {
		const int side = 16384;
		uint32_t *data;
		struct wl_buffer *buffer = make_buffer(&app, side, side, &data);
		for (int y = 0; y < 256; y++) {
			for (int x = 0; x < 256; x++) {
				data[(size_t)y * side + x] = 0xff2040e0;
			}
		}
		wl_surface_attach(surface, buffer, 0, 0);
		wl_surface_damage_buffer(surface, 0, 0, side, side);
		wl_surface_commit(surface);
		printf("committed %dx%d\n", side, side);
		fflush(stdout);
		while (wl_display_dispatch(display) >= 0) {
		}
		return 0;
	}

	double seconds = atof(argv[2]);
	uint32_t *data[2];
	struct wl_buffer *buffers[2] = {
		make_buffer(&app, 256, 256, &data[0]),
		make_buffer(&app, 256, 256, &data[1]),
	};
	for (int i = 0; i < 256 * 256; i++) {
		data[0][i] = 0xffe02020;
		data[1][i] = 0xff20e020;
	}
	unsigned long commits = 0;
	double end = now_s() + seconds;
	while (now_s() < end) {
		wl_surface_attach(surface, buffers[commits & 1], 0, 0);
		wl_surface_damage_buffer(surface, 0, 0, 256, 256);
		wl_surface_commit(surface);
		commits++;
		/* Flush as fast as the socket takes it; never wait for frames. */
		while (wl_display_flush(display) < 0) {
			if (errno != EAGAIN) {
				fprintf(stderr, "abuse-client: disconnected\n");
				return 1;
			}
			struct pollfd pfd = {wl_display_get_fd(display), POLLOUT, 0};
			poll(&pfd, 1, 100);
		}
		if (wl_display_prepare_read(display) == 0) {
			struct pollfd pfd = {wl_display_get_fd(display), POLLIN, 0};
			if (poll(&pfd, 1, 0) > 0) {
				wl_display_read_events(display);
			} else {
				wl_display_cancel_read(display);
			}
		}
		wl_display_dispatch_pending(display);
	}
	/* End on the green buffer, so a test can tell the last state. */
	wl_surface_attach(surface, buffers[1], 0, 0);
	wl_surface_damage_buffer(surface, 0, 0, 256, 256);
	wl_surface_commit(surface);
	printf("commits %lu\n", commits);
	fflush(stdout);
	while (wl_display_dispatch(display) >= 0) {
	}
	return 0;
}
