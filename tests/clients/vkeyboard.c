/*
 * A virtual keyboard with a chosen layout, for the test rig. Reads commands
 * on stdin, one a line:
 *   layout NAME     compiles the xkb keymap of that layout (evdev rules) and
 *                   makes it this keyboard's keymap
 *   press CODE      evdev key code, e.g. 21 for KEY_Y
 *   release CODE
 *   tap CODE        press and release
 *   sync            prints "ok" once the compositor has handled all before it
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>
#include <xkbcommon/xkbcommon.h>

#include "virtual-keyboard-unstable-v1-client-protocol.h"

static struct zwp_virtual_keyboard_manager_v1 *manager;
static struct wl_seat *seat;
/* wlroots leaves a virtual keyboard's modifiers to its client: we keep the
 * xkb state and send them after every key, as a real keyboard's would be. */
static struct xkb_state *state;

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
	const char *interface, uint32_t version)
{
	if (strcmp(interface, zwp_virtual_keyboard_manager_v1_interface.name) == 0) {
		manager = wl_registry_bind(registry, name,
			&zwp_virtual_keyboard_manager_v1_interface, 1);
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

static bool set_layout(struct zwp_virtual_keyboard_v1 *keyboard, struct xkb_context *xkb,
	const char *layout)
{
	struct xkb_rule_names names = {.rules = "evdev", .model = "pc105", .layout = layout};
	struct xkb_keymap *keymap = xkb_keymap_new_from_names(xkb, &names, 0);
	if (!keymap) {
		fprintf(stderr, "vkeyboard: no keymap for layout %s\n", layout);
		return false;
	}
	char *text = xkb_keymap_get_as_string(keymap, XKB_KEYMAP_FORMAT_TEXT_V1);
	xkb_state_unref(state);
	state = xkb_state_new(keymap);
	xkb_keymap_unref(keymap);
	size_t size = strlen(text) + 1;
	int fd = memfd_create("vkeyboard-keymap", MFD_CLOEXEC);
	bool ok = fd >= 0 && write(fd, text, size) == (ssize_t)size;
	free(text);
	if (!ok) {
		perror("vkeyboard: keymap");
		return false;
	}
	zwp_virtual_keyboard_v1_keymap(keyboard, WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1, fd,
		(uint32_t)size);
	close(fd);
	return true;
}

static void key(struct zwp_virtual_keyboard_v1 *keyboard, uint32_t code, bool pressed)
{
	zwp_virtual_keyboard_v1_key(keyboard, now_ms(), code, pressed);
	xkb_state_update_key(state, code + 8, pressed ? XKB_KEY_DOWN : XKB_KEY_UP);
	zwp_virtual_keyboard_v1_modifiers(keyboard,
		xkb_state_serialize_mods(state, XKB_STATE_MODS_DEPRESSED),
		xkb_state_serialize_mods(state, XKB_STATE_MODS_LATCHED),
		xkb_state_serialize_mods(state, XKB_STATE_MODS_LOCKED),
		xkb_state_serialize_layout(state, XKB_STATE_LAYOUT_EFFECTIVE));
}

int main(int argc, char **argv)
{
	struct wl_display *display = wl_display_connect(NULL);
	if (!display) {
		fprintf(stderr, "vkeyboard: cannot connect to a Wayland display\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, NULL);
	wl_display_roundtrip(display);
	if (!manager || !seat) {
		fprintf(stderr, "vkeyboard: the compositor has no virtual keyboard manager\n");
		return 1;
	}
	struct xkb_context *xkb = xkb_context_new(XKB_CONTEXT_NO_FLAGS);
	struct zwp_virtual_keyboard_v1 *keyboard =
		zwp_virtual_keyboard_manager_v1_create_virtual_keyboard(manager, seat);
	/* A keymap must come before any key. */
	if (!xkb || !set_layout(keyboard, xkb, "us")) {
		return 1;
	}
	wl_display_roundtrip(display);
	setvbuf(stdout, NULL, _IOLBF, 0);
	char line[256], word[64];
	while (fgets(line, sizeof(line), stdin)) {
		int code;
		if (sscanf(line, "layout %63s", word) == 1) {
			if (!set_layout(keyboard, xkb, word)) {
				return 1;
			}
		} else if (sscanf(line, "press %d", &code) == 1) {
			key(keyboard, (uint32_t)code, true);
		} else if (sscanf(line, "release %d", &code) == 1) {
			key(keyboard, (uint32_t)code, false);
		} else if (sscanf(line, "tap %d", &code) == 1) {
			key(keyboard, (uint32_t)code, true);
			key(keyboard, (uint32_t)code, false);
		} else if (strncmp(line, "sync", 4) == 0) {
			wl_display_roundtrip(display);
			printf("ok\n");
		}
		if (wl_display_flush(display) < 0) {
			fprintf(stderr, "vkeyboard: lost the compositor\n");
			return 1;
		}
	}
	zwp_virtual_keyboard_v1_destroy(keyboard);
	wl_display_roundtrip(display);
	wl_display_disconnect(display);
	xkb_state_unref(state);
	xkb_context_unref(xkb);
	return 0;
}
