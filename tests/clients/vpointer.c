/*
 * A virtual pointer for the test rig. Reads commands on stdin, one a line:
 *   move X Y        absolute position in the output layout (extent W H below)
 *   by DX DY        relative motion, as a mouse makes (a locked pointer passes
 *                   it on to the app; an absolute move would jump back)
 *   press BUTTON    linux button code, e.g. 272 for the left button
 *   release BUTTON
 *   scroll DY       vertical scroll by DY
 *   sync            prints "ok" once the compositor has handled all before it
 * argv: the layout width and height.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wayland-client.h>

#include "virtual-pointer-unstable-v1-client-protocol.h"

static struct zwlr_virtual_pointer_manager_v1 *manager;
static struct wl_seat *seat;

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
	const char *interface, uint32_t version)
{
	if (strcmp(interface, zwlr_virtual_pointer_manager_v1_interface.name) == 0) {
		manager = wl_registry_bind(registry, name,
			&zwlr_virtual_pointer_manager_v1_interface, 1);
	} else if (strcmp(interface, wl_seat_interface.name) == 0 && !seat) {
		seat = wl_registry_bind(registry, name, &wl_seat_interface, 1);
	}
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

static uint32_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: vpointer LAYOUT_WIDTH LAYOUT_HEIGHT < commands\n");
		return 2;
	}
	uint32_t extent_w = (uint32_t)atoi(argv[1]), extent_h = (uint32_t)atoi(argv[2]);
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "vpointer: cannot connect to a Wayland display\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, NULL);
	wl_display_roundtrip(display);
	if (!manager) {
		fprintf(stderr, "vpointer: the compositor has no virtual pointer manager\n");
		return 1;
	}
	struct zwlr_virtual_pointer_v1 *pointer =
		zwlr_virtual_pointer_manager_v1_create_virtual_pointer(manager, seat);
	wl_display_roundtrip(display);
	setvbuf(stdout, NULL, _IOLBF, 0);
	char line[256];
	while (fgets(line, sizeof(line), stdin)) {
		int a, b;
		if (sscanf(line, "move %d %d", &a, &b) == 2) {
			zwlr_virtual_pointer_v1_motion_absolute(pointer, now_ms(), (uint32_t)a,
				(uint32_t)b, extent_w, extent_h);
			zwlr_virtual_pointer_v1_frame(pointer);
		} else if (sscanf(line, "by %d %d", &a, &b) == 2) {
			/* A mouse's motion: the only kind a locked pointer passes on. */
			zwlr_virtual_pointer_v1_motion(pointer, now_ms(), wl_fixed_from_int(a),
				wl_fixed_from_int(b));
			zwlr_virtual_pointer_v1_frame(pointer);
		} else if (sscanf(line, "press %d", &a) == 1) {
			zwlr_virtual_pointer_v1_button(pointer, now_ms(), (uint32_t)a, 1);
			zwlr_virtual_pointer_v1_frame(pointer);
		} else if (sscanf(line, "release %d", &a) == 1) {
			zwlr_virtual_pointer_v1_button(pointer, now_ms(), (uint32_t)a, 0);
			zwlr_virtual_pointer_v1_frame(pointer);
		} else if (sscanf(line, "scroll %d", &a) == 1) {
			zwlr_virtual_pointer_v1_axis(pointer, now_ms(), 0, wl_fixed_from_int(a));
			zwlr_virtual_pointer_v1_frame(pointer);
		} else if (strncmp(line, "sync", 4) == 0) {
			wl_display_roundtrip(display);
			printf("ok\n");
		}
		if (wl_display_flush(display) < 0) {
			fprintf(stderr, "vpointer: lost the compositor\n");
			return 1;
		}
	}
	zwlr_virtual_pointer_v1_destroy(pointer);
	wl_display_roundtrip(display);
	wl_display_disconnect(display);
	return 0;
}
