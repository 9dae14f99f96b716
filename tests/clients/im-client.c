/*
 * An input method for the test rig (input-method-unstable-v2, on headless
 * sway). Reads commands on stdin, one a line:
 *   preedit B E TEXT   the composing text, its caret from byte B to E
 *   commit TEXT        text to insert
 *   delete B A         bytes to delete before and after the caret
 *   done               sends them, as one change (commit with the serial)
 *   sync               prints "ok" on stdout once the compositor has
 *                      handled all before it
 * and prints what the compositor says on stderr, a line each:
 *   activate, deactivate, surrounding TEXT|CURSOR|ANCHOR, cause N,
 *   content HINT PURPOSE, done, unavailable,
 *   rectangle X Y W H    where the text input's caret is, relative to the
 *                        focused surface (its candidate popup's anchor)
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>

#include "input-method-unstable-v2-client-protocol.h"

static struct zwp_input_method_manager_v2 *manager;
static struct wl_seat *seat;
static struct wl_compositor *compositor;
static struct wl_shm *shm;
static uint32_t dones; /* the serial a commit names */

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
	const char *interface, uint32_t version)
{
	if (strcmp(interface, zwp_input_method_manager_v2_interface.name) == 0) {
		manager =
			wl_registry_bind(registry, name, &zwp_input_method_manager_v2_interface, 1);
	} else if (strcmp(interface, wl_seat_interface.name) == 0 && !seat) {
		seat = wl_registry_bind(registry, name, &wl_seat_interface, 1);
	} else if (strcmp(interface, wl_compositor_interface.name) == 0) {
		compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 1);
	} else if (strcmp(interface, wl_shm_interface.name) == 0) {
		shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
	}
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

static void im_activate(void *data, struct zwp_input_method_v2 *im)
{
	fprintf(stderr, "activate\n");
}

static void im_deactivate(void *data, struct zwp_input_method_v2 *im)
{
	fprintf(stderr, "deactivate\n");
}

static void im_surrounding(void *data, struct zwp_input_method_v2 *im, const char *text,
	uint32_t cursor, uint32_t anchor)
{
	fprintf(stderr, "surrounding %s|%u|%u\n", text, cursor, anchor);
}

static void im_cause(void *data, struct zwp_input_method_v2 *im, uint32_t cause)
{
	fprintf(stderr, "cause %u\n", cause);
}

static void im_content(void *data, struct zwp_input_method_v2 *im, uint32_t hint, uint32_t purpose)
{
	fprintf(stderr, "content %u %u\n", hint, purpose);
}

static void im_done(void *data, struct zwp_input_method_v2 *im)
{
	dones++;
	fprintf(stderr, "done\n");
}

static void im_unavailable(void *data, struct zwp_input_method_v2 *im)
{
	fprintf(stderr, "unavailable\n");
}

static const struct zwp_input_method_v2_listener im_listener = {
	.activate = im_activate,
	.deactivate = im_deactivate,
	.surrounding_text = im_surrounding,
	.text_change_cause = im_cause,
	.content_type = im_content,
	.done = im_done,
	.unavailable = im_unavailable,
};

static void popup_rectangle(void *data, struct zwp_input_popup_surface_v2 *popup, int32_t x,
	int32_t y, int32_t width, int32_t height)
{
	fprintf(stderr, "rectangle %d %d %d %d\n", x, y, width, height);
}

static const struct zwp_input_popup_surface_v2_listener popup_listener = {
	.text_input_rectangle = popup_rectangle,
};

/* The candidate popup: a small surface the compositor places at the caret. */
static void make_popup(struct zwp_input_method_v2 *im)
{
	if (!compositor || !shm) {
		return;
	}
	int w = 8, h = 8, size = w * h * 4;
	int fd = memfd_create("im-popup", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, size) < 0) {
		return;
	}
	uint32_t *pixels = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pixels != MAP_FAILED) {
		for (int i = 0; i < w * h; i++) {
			pixels[i] = 0xffe020e0;
		}
		munmap(pixels, (size_t)size);
	}
	struct wl_shm_pool *pool = wl_shm_create_pool(shm, fd, size);
	struct wl_buffer *buffer =
		wl_shm_pool_create_buffer(pool, 0, w, h, w * 4, WL_SHM_FORMAT_ARGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	struct wl_surface *surface = wl_compositor_create_surface(compositor);
	struct zwp_input_popup_surface_v2 *popup =
		zwp_input_method_v2_get_input_popup_surface(im, surface);
	zwp_input_popup_surface_v2_add_listener(popup, &popup_listener, NULL);
	wl_surface_attach(surface, buffer, 0, 0);
	wl_surface_commit(surface);
}

int main(void)
{
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "im-client: cannot connect to a Wayland display\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, NULL);
	wl_display_roundtrip(display);
	if (!manager || !seat) {
		fprintf(stderr, "im-client: the compositor has no input method manager\n");
		return 1;
	}
	struct zwp_input_method_v2 *im =
		zwp_input_method_manager_v2_get_input_method(manager, seat);
	zwp_input_method_v2_add_listener(im, &im_listener, NULL);
	make_popup(im);
	wl_display_roundtrip(display);
	setvbuf(stdout, NULL, _IOLBF, 0);
	setvbuf(stderr, NULL, _IOLBF, 0);
	setvbuf(stdin, NULL, _IONBF, 0); /* poll sees every line still unread */
	char line[4096];
	struct pollfd fds[2] = {
		{.fd = STDIN_FILENO, .events = POLLIN},
		{.fd = wl_display_get_fd(display), .events = POLLIN},
	};
	for (;;) {
		wl_display_flush(display);
		if (poll(fds, 2, -1) < 0) {
			return 1;
		}
		if (fds[1].revents & POLLIN) {
			if (wl_display_dispatch(display) < 0) {
				fprintf(stderr, "im-client: lost the compositor\n");
				return 1;
			}
		}
		if (!(fds[0].revents & (POLLIN | POLLHUP))) {
			continue;
		}
		if (!fgets(line, sizeof(line), stdin)) {
			break;
		}
		line[strcspn(line, "\n")] = '\0';
		int a, b, n = 0;
		if (sscanf(line, "preedit %d %d %n", &a, &b, &n) == 2 && n > 0) {
			zwp_input_method_v2_set_preedit_string(im, line + n, a, b);
		} else if (strncmp(line, "commit ", 7) == 0) {
			zwp_input_method_v2_commit_string(im, line + 7);
		} else if (sscanf(line, "delete %d %d", &a, &b) == 2) {
			zwp_input_method_v2_delete_surrounding_text(im, (uint32_t)a, (uint32_t)b);
		} else if (strcmp(line, "done") == 0) {
			zwp_input_method_v2_commit(im, dones);
		} else if (strcmp(line, "sync") == 0) {
			wl_display_roundtrip(display);
			printf("ok\n");
		}
	}
	zwp_input_method_v2_destroy(im);
	wl_display_roundtrip(display);
	wl_display_disconnect(display);
	return 0;
}
