/*
 * Drag and drop for the tests: a 300x200 window, argv[2] its title and
 * app_id, in one of two roles (argv[1]).
 *
 *   dnd-client source NAME
 *     A left press starts a drag offering "application/x-rcomp-test" and
 *     "text/plain" (DND_BYTES bytes, byte i being (i * 31 + 7) & 0xff),
 *     copy or move, its icon a 32x32 magenta square from the pointer. Prints "source-target MIME", "source-action N",
 *     "source-sent N", "source-drop-performed", "source-finished" and
 *     "source-cancelled"; and "pointer-enter" when the pointer enters.
 *   dnd-client target NAME
 *     Takes drops of "application/x-rcomp-test", preferring move. Prints
 *     "target-enter", "target-leave", "target-action N", and for a drop
 *     "target-dropped LENGTH FNV1A32" once all its data is read.
 *
 *     With DND_URIS in its environment it offers "text/uri-list" alone,
 *     that text its data, as a file manager's drag of files does.
 *   dnd-client files NAME
 *     Takes drops of "text/uri-list" by copy, as a file manager or a
 *     document viewer does. Prints "target-enter", and for a drop
 *     "target-file PATH" for each file:// URI of the list (decoded), then
 *     "target-files N".
 *
 * With a third argument "ask", the source offers copy, move or ask, and
 * the target prefers ask: at the drop it asks its user, who picks move (it
 * sets move, waits to hear it agreed, then reads).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>

#include "xdg-shell-client-protocol.h"

#define DND_BYTES 300000
#define TEST_MIME "application/x-rcomp-test"

struct app {
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct wl_seat *seat;
	struct wl_pointer *pointer;
	struct wl_data_device_manager *manager;
	struct wl_data_device *device;
	struct wl_surface *surface;
	struct wl_display *display;
	bool source, configured, running;
	bool ask; /* offer and prefer ask, then pick move at the drop */
	bool dropping; /* the leave after a drop keeps the offer until finish */
	uint32_t colour;
	/* target: the drag over us */
	struct wl_data_offer *offer;
	bool has_type;
	bool files; /* the files role: text/uri-list */
	uint32_t action;
};

static void say(const char *fmt, const char *s, long n)
{
	printf(fmt, s ? s : "", n);
	printf("\n");
	fflush(stdout);
}

static struct wl_buffer *make_buffer(struct app *app, int w, int h, uint32_t colour)
{
	int size = w * h * 4;
	int fd = memfd_create("dnd-client", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, size) < 0) {
		exit(1);
	}
	uint32_t *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	for (int i = 0; i < w * h; i++) {
		p[i] = colour;
	}
	munmap(p, (size_t)size);
	struct wl_shm_pool *pool = wl_shm_create_pool(app->shm, fd, size);
	struct wl_buffer *buffer =
		wl_shm_pool_create_buffer(pool, 0, w, h, w * 4, WL_SHM_FORMAT_ARGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	return buffer;
}

static void draw(struct app *app)
{
	int w = 300, h = 200;
	struct wl_buffer *buffer = make_buffer(app, w, h, app->colour);
	wl_surface_attach(app->surface, buffer, 0, 0);
	wl_surface_damage_buffer(app->surface, 0, 0, w, h);
	wl_surface_commit(app->surface);
}

/* Source side. */
static void source_target(void *data, struct wl_data_source *source, const char *mime)
{
	say("source-target %s", mime, 0);
}

static void source_send(void *data, struct wl_data_source *source, const char *mime, int32_t fd)
{
	const char *uris = getenv("DND_URIS");
	if (uris) {
		size_t len = strlen(uris), done = 0;
		while (done < len) {
			ssize_t n = write(fd, uris + done, len - done);
			if (n <= 0 && errno != EINTR) {
				break;
			}
			done += n > 0 ? (size_t)n : 0;
		}
		close(fd);
		say("source-sent%s %ld", "", (long)done);
		return;
	}
	static uint8_t bytes[DND_BYTES];
	for (int i = 0; i < DND_BYTES; i++) {
		bytes[i] = (uint8_t)((i * 31 + 7) & 0xff);
	}
	long sent = 0;
	while (sent < DND_BYTES) {
		ssize_t n = write(fd, bytes + sent, (size_t)(DND_BYTES - sent));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		sent += n;
	}
	close(fd);
	say("source-sent%s %ld", "", sent);
}

static void source_cancelled(void *data, struct wl_data_source *source)
{
	say("source-cancelled%s", "", 0);
	wl_data_source_destroy(source);
}

static void source_drop_performed(void *data, struct wl_data_source *source)
{
	say("source-drop-performed%s", "", 0);
}

static void source_finished(void *data, struct wl_data_source *source)
{
	say("source-finished%s", "", 0);
	wl_data_source_destroy(source);
}

static void source_action(void *data, struct wl_data_source *source, uint32_t action)
{
	say("source-action%s %ld", "", action);
}

static const struct wl_data_source_listener source_listener = {
	.target = source_target,
	.send = source_send,
	.cancelled = source_cancelled,
	.dnd_drop_performed = source_drop_performed,
	.dnd_finished = source_finished,
	.action = source_action,
};

static void pointer_enter(void *data, struct wl_pointer *p, uint32_t serial,
	struct wl_surface *surface, wl_fixed_t x, wl_fixed_t y)
{
	say("pointer-enter%s", "", 0);
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
	if (!app->source || button != 0x110 || state != WL_POINTER_BUTTON_STATE_PRESSED) {
		return;
	}
	struct wl_data_source *source = wl_data_device_manager_create_data_source(app->manager);
	wl_data_source_add_listener(source, &source_listener, app);
	if (getenv("DND_URIS")) {
		wl_data_source_offer(source, "text/uri-list");
	} else {
		wl_data_source_offer(source, TEST_MIME);
		wl_data_source_offer(source, "text/plain");
	}
	wl_data_source_set_actions(source,
		WL_DATA_DEVICE_MANAGER_DND_ACTION_COPY | WL_DATA_DEVICE_MANAGER_DND_ACTION_MOVE |
			(app->ask ? WL_DATA_DEVICE_MANAGER_DND_ACTION_ASK : 0));
	/* Its icon: 32x32 magenta, its corner at the pointer (attached after
	 * start_drag gave the surface its role). */
	struct wl_surface *icon = wl_compositor_create_surface(app->compositor);
	wl_data_device_start_drag(app->device, source, app->surface, icon, serial);
	struct wl_buffer *buffer = make_buffer(app, 32, 32, 0xffe020e0);
	wl_surface_attach(icon, buffer, 0, 0);
	wl_surface_damage_buffer(icon, 0, 0, 32, 32);
	wl_surface_commit(icon);
	say("source-drag-started%s", "", 0);
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

/* Target side. */
static void offer_offer(void *data, struct wl_data_offer *offer, const char *mime)
{
	struct app *app = data;
	if (strcmp(mime, app->files ? "text/uri-list" : TEST_MIME) == 0) {
		app->has_type = true;
	}
}

static void offer_source_actions(void *data, struct wl_data_offer *offer, uint32_t actions)
{
}

static void offer_action(void *data, struct wl_data_offer *offer, uint32_t action)
{
	struct app *app = data;
	app->action = action;
	say("target-action%s %ld", "", action);
}

static const struct wl_data_offer_listener offer_listener = {
	.offer = offer_offer,
	.source_actions = offer_source_actions,
	.action = offer_action,
};

static void device_data_offer(void *data, struct wl_data_device *device,
	struct wl_data_offer *offer)
{
	struct app *app = data;
	app->has_type = false;
	wl_data_offer_add_listener(offer, &offer_listener, app);
}

static void device_enter(void *data, struct wl_data_device *device, uint32_t serial,
	struct wl_surface *surface, wl_fixed_t x, wl_fixed_t y, struct wl_data_offer *offer)
{
	struct app *app = data;
	if (app->source || !offer) {
		return;
	}
	app->offer = offer;
	say("target-enter%s", "", 0);
	if (app->files) {
		wl_data_offer_accept(offer, serial, app->has_type ? "text/uri-list" : NULL);
		wl_data_offer_set_actions(offer, WL_DATA_DEVICE_MANAGER_DND_ACTION_COPY,
			WL_DATA_DEVICE_MANAGER_DND_ACTION_COPY);
		return;
	}
	wl_data_offer_accept(offer, serial, app->has_type ? TEST_MIME : NULL);
	uint32_t ask = app->ask ? WL_DATA_DEVICE_MANAGER_DND_ACTION_ASK : 0;
	wl_data_offer_set_actions(offer,
		WL_DATA_DEVICE_MANAGER_DND_ACTION_COPY | WL_DATA_DEVICE_MANAGER_DND_ACTION_MOVE |
			ask,
		ask ? ask : WL_DATA_DEVICE_MANAGER_DND_ACTION_MOVE);
}

static void device_leave(void *data, struct wl_data_device *device)
{
	struct app *app = data;
	if (app->offer && !app->dropping) {
		say("target-leave%s", "", 0);
		wl_data_offer_destroy(app->offer);
		app->offer = NULL;
	}
}

static void device_motion(void *data, struct wl_data_device *device, uint32_t time, wl_fixed_t x,
	wl_fixed_t y)
{
}

static void device_drop(void *data, struct wl_data_device *device)
{
	struct app *app = data;
	if (!app->offer) {
		return;
	}
	app->dropping = true;
	if (app->action == WL_DATA_DEVICE_MANAGER_DND_ACTION_ASK) {
		/* The user picks move from the menu a target shows at an ask. */
		say("target-asked%s", "", 0);
		wl_data_offer_set_actions(app->offer, WL_DATA_DEVICE_MANAGER_DND_ACTION_MOVE,
			WL_DATA_DEVICE_MANAGER_DND_ACTION_MOVE);
		while (app->action != WL_DATA_DEVICE_MANAGER_DND_ACTION_MOVE) {
			if (wl_display_dispatch(app->display) < 0) {
				return;
			}
		}
	}
	int fds[2];
	if (pipe(fds) < 0) {
		return;
	}
	if (app->files) {
		wl_data_offer_receive(app->offer, "text/uri-list", fds[1]);
		close(fds[1]);
		wl_display_flush(app->display);
		static char list[65536];
		size_t got = 0;
		ssize_t n;
		while ((n = read(fds[0], list + got, sizeof(list) - 1 - got)) > 0) {
			got += (size_t)n;
		}
		close(fds[0]);
		list[got] = '\0';
		int count = 0;
		for (char *line = strtok(list, "\r\n"); line; line = strtok(NULL, "\r\n")) {
			if (strncmp(line, "file://", 7) != 0) {
				continue;
			}
			char path[4096];
			size_t k = 0;
			for (const char *p = line + 7; *p && k + 1 < sizeof(path); p++) {
				unsigned v;
				if (*p == '%' && sscanf(p + 1, "%2x", &v) == 1) {
					path[k++] = (char)v;
					p += 2;
				} else {
					path[k++] = *p;
				}
			}
			path[k] = '\0';
			printf("target-file %s\n", path);
			count++;
		}
		printf("target-files %d\n", count);
		fflush(stdout);
		wl_data_offer_finish(app->offer);
		wl_data_offer_destroy(app->offer);
		app->offer = NULL;
		app->dropping = false;
		return;
	}
	wl_data_offer_receive(app->offer, TEST_MIME, fds[1]);
	close(fds[1]);
	wl_display_flush(app->display);
	uint32_t hash = 2166136261u;
	long len = 0;
	uint8_t buf[65536];
	for (;;) {
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		for (ssize_t i = 0; i < n; i++) {
			hash = (hash ^ buf[i]) * 16777619u;
		}
		len += n;
	}
	close(fds[0]);
	printf("target-dropped %ld %u action %u\n", len, hash, app->action);
	fflush(stdout);
	wl_data_offer_finish(app->offer);
	wl_data_offer_destroy(app->offer);
	app->offer = NULL;
	app->dropping = false;
}

static void device_selection(void *data, struct wl_data_device *device, struct wl_data_offer *offer)
{
	if (offer) {
		wl_data_offer_destroy(offer);
	}
}

static const struct wl_data_device_listener device_listener = {
	.data_offer = device_data_offer,
	.enter = device_enter,
	.leave = device_leave,
	.motion = device_motion,
	.drop = device_drop,
	.selection = device_selection,
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

static void xdg_surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
	struct app *app = data;
	xdg_surface_ack_configure(xdg_surface, serial);
	if (!app->configured) {
		app->configured = true;
		draw(app);
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
	} else if (strcmp(interface, wl_seat_interface.name) == 0 && !app->seat) {
		app->seat = wl_registry_bind(registry, name, &wl_seat_interface, 1);
		wl_seat_add_listener(app->seat, &seat_listener, app);
	} else if (strcmp(interface, wl_data_device_manager_interface.name) == 0) {
		app->manager =
			wl_registry_bind(registry, name, &wl_data_device_manager_interface, 3);
	}
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "ask") != 0) ||
		(strcmp(argv[1], "source") != 0 && strcmp(argv[1], "target") != 0 &&
			strcmp(argv[1], "files") != 0)) {
		fprintf(stderr, "usage: dnd-client source|target|files NAME [ask]\n");
		return 2;
	}
	struct app app = {.source = strcmp(argv[1], "source") == 0,
		.files = strcmp(argv[1], "files") == 0,
		.ask = argc == 4,
		.running = true};
	app.colour = app.source ? 0xff20c0c0 : 0xffc0c020;
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "dnd-client: no Wayland display\n");
		return 1;
	}
	app.display = display;
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &app);
	wl_display_roundtrip(display);
	if (!app.compositor || !app.shm || !app.wm_base || !app.seat || !app.manager) {
		fprintf(stderr, "dnd-client: missing globals\n");
		return 1;
	}
	app.device = wl_data_device_manager_get_data_device(app.manager, app.seat);
	wl_data_device_add_listener(app.device, &device_listener, &app);
	app.surface = wl_compositor_create_surface(app.compositor);
	struct xdg_surface *xdg_surface = xdg_wm_base_get_xdg_surface(app.wm_base, app.surface);
	xdg_surface_add_listener(xdg_surface, &xdg_surface_listener, &app);
	struct xdg_toplevel *toplevel = xdg_surface_get_toplevel(xdg_surface);
	xdg_toplevel_add_listener(toplevel, &toplevel_listener, &app);
	xdg_toplevel_set_title(toplevel, argv[2]);
	xdg_toplevel_set_app_id(toplevel, argv[2]);
	wl_surface_commit(app.surface);
	while (app.running && wl_display_dispatch(display) >= 0) {
	}
	wl_display_disconnect(display);
	return 0;
}
