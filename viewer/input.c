/*
 * Local input to the server: the seat's pointer and keyboard events become
 * wire messages for the window under the pointer or with keyboard focus.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "viewer.h"

static struct rv_window *window_of(struct rv_viewer *viewer, struct wl_surface *surface)
{
	if (!surface) {
		return NULL;
	}
	/* Only our own windows' surfaces carry user data we set. */
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		if (window->surface == surface) {
			return window;
		}
	}
	return NULL;
}

static void send_motion(struct rv_viewer *viewer, wl_fixed_t x, wl_fixed_t y)
{
	if (!viewer->pointer_focus) {
		return;
	}
	/* wl_fixed_t is 24.8 fixed point, as on the wire. */
	struct wire_msg msg = {
		.type = WIRE_POINTER_MOTION,
		.pointer_motion = {.window = viewer->pointer_focus->id, .x = x, .y = y},
	};
	viewer_send(viewer, &msg);
}

static void pointer_frame_if_old(struct rv_viewer *viewer)
{
	if (viewer->seat_version < WL_POINTER_FRAME_SINCE_VERSION) {
		viewer_send(viewer, &(struct wire_msg){.type = WIRE_POINTER_FRAME});
	}
}

/* Shows the remote cursor while the pointer is over one of our windows. */
static void apply_cursor(struct rv_viewer *viewer)
{
	if (!viewer->pointer || !viewer->pointer_focus || !viewer->cursor_set) {
		return;
	}
	wl_pointer_set_cursor(viewer->pointer, viewer->pointer_serial,
		viewer->cursor_hidden ? NULL : viewer->cursor_surface, viewer->cursor_hotspot_x,
		viewer->cursor_hotspot_y);
}

static void cursor_buffer_release(void *data, struct wl_buffer *buffer)
{
	struct rv_viewer *viewer = data;
	if (buffer == viewer->cursor_old_buffer) {
		wl_buffer_destroy(buffer);
		viewer->cursor_old_buffer = NULL;
	}
}

static const struct wl_buffer_listener cursor_buffer_listener = {
	.release = cursor_buffer_release,
};

static struct wl_buffer *cursor_buffer(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	void *data;
	struct wl_buffer *buffer =
		viewer_shm_buffer(viewer, msg->cursor.width, msg->cursor.height, &data);
	if (buffer) {
		size_t size = (size_t)msg->cursor.width * msg->cursor.height * 4;
		memcpy(data, msg->cursor.pixels, size);
		munmap(data, size);
		wl_buffer_add_listener(buffer, &cursor_buffer_listener, viewer);
	}
	return buffer;
}

void input_set_cursor(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	viewer->cursor_set = true;
	viewer->cursor_hidden = msg->cursor.width == 0;
	viewer->cursor_hotspot_x = msg->cursor.hotspot_x;
	viewer->cursor_hotspot_y = msg->cursor.hotspot_y;
	if (!viewer->cursor_hidden) {
		if (!viewer->cursor_surface) {
			viewer->cursor_surface = wl_compositor_create_surface(viewer->compositor);
		}
		struct wl_buffer *buffer = cursor_buffer(viewer, msg);
		if (!buffer) {
			return;
		}
		/* The old buffer goes when the compositor releases it; one older
		 * still is surely unused by now. */
		if (viewer->cursor_old_buffer) {
			wl_buffer_destroy(viewer->cursor_old_buffer);
		}
		viewer->cursor_old_buffer = viewer->cursor_buffer;
		viewer->cursor_buffer = buffer;
		wl_surface_attach(viewer->cursor_surface, buffer, 0, 0);
		wl_surface_set_buffer_scale(viewer->cursor_surface, msg->cursor.scale);
		wl_surface_damage_buffer(viewer->cursor_surface, 0, 0, INT32_MAX, INT32_MAX);
		wl_surface_commit(viewer->cursor_surface);
	}
	apply_cursor(viewer);
}

static void pointer_enter(void *data, struct wl_pointer *pointer, uint32_t serial,
	struct wl_surface *surface, wl_fixed_t x, wl_fixed_t y)
{
	struct rv_viewer *viewer = data;
	viewer->pointer_focus = window_of(viewer, surface);
	viewer->pointer_serial = serial;
	apply_cursor(viewer);
	send_motion(viewer, x, y);
	pointer_frame_if_old(viewer);
}

static void pointer_leave(void *data, struct wl_pointer *pointer, uint32_t serial,
	struct wl_surface *surface)
{
	struct rv_viewer *viewer = data;
	if (viewer->pointer_focus) {
		struct wire_msg msg = {
			.type = WIRE_POINTER_LEAVE,
			.pointer_leave = {viewer->pointer_focus->id},
		};
		viewer_send(viewer, &msg);
		pointer_frame_if_old(viewer);
	}
	viewer->pointer_focus = NULL;
}

static void pointer_motion(void *data, struct wl_pointer *pointer, uint32_t time, wl_fixed_t x,
	wl_fixed_t y)
{
	struct rv_viewer *viewer = data;
	send_motion(viewer, x, y);
	pointer_frame_if_old(viewer);
}

static void pointer_button(void *data, struct wl_pointer *pointer, uint32_t serial, uint32_t time,
	uint32_t button, uint32_t state)
{
	struct rv_viewer *viewer = data;
	if (state == WL_POINTER_BUTTON_STATE_PRESSED) {
		viewer->input_serial = serial;
	}
	if (!viewer->pointer_focus || button > 0xffff) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_POINTER_BUTTON,
		.pointer_button = {.button = button, .state = state ? 1 : 0},
	};
	viewer_send(viewer, &msg);
	pointer_frame_if_old(viewer);
}

static void pointer_axis(void *data, struct wl_pointer *pointer, uint32_t time, uint32_t axis,
	wl_fixed_t value)
{
	struct rv_viewer *viewer = data;
	if (!viewer->pointer_focus || axis > 1) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_POINTER_AXIS,
		.pointer_axis =
			{
				.axis = axis,
				.value = value,
				.discrete = viewer->axis_discrete[axis],
				.source = viewer->axis_source,
			},
	};
	viewer->axis_discrete[axis] = 0;
	viewer_send(viewer, &msg);
	pointer_frame_if_old(viewer);
}

static void pointer_frame(void *data, struct wl_pointer *pointer)
{
	struct rv_viewer *viewer = data;
	viewer->axis_source = 0;
	viewer_send(viewer, &(struct wire_msg){.type = WIRE_POINTER_FRAME});
}

static void pointer_axis_source(void *data, struct wl_pointer *pointer, uint32_t source)
{
	struct rv_viewer *viewer = data;
	viewer->axis_source = source <= 3 ? source : 0;
}

static void pointer_axis_stop(void *data, struct wl_pointer *pointer, uint32_t time, uint32_t axis)
{
}

static void pointer_axis_discrete(void *data, struct wl_pointer *pointer, uint32_t axis,
	int32_t discrete)
{
	struct rv_viewer *viewer = data;
	if (axis <= 1) {
		viewer->axis_discrete[axis] = discrete;
	}
}

static const struct wl_pointer_listener pointer_listener = {
	.enter = pointer_enter,
	.leave = pointer_leave,
	.motion = pointer_motion,
	.button = pointer_button,
	.axis = pointer_axis,
	.frame = pointer_frame,
	.axis_source = pointer_axis_source,
	.axis_stop = pointer_axis_stop,
	.axis_discrete = pointer_axis_discrete,
};

static void keyboard_keymap(void *data, struct wl_keyboard *keyboard, uint32_t format, int32_t fd,
	uint32_t size)
{
	struct rv_viewer *viewer = data;
	if (format != WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1 || size == 0 || size > WIRE_MAX_KEYMAP) {
		log_error("local keymap (format %u, %u bytes) cannot be forwarded", format, size);
		close(fd);
		return;
	}
	char *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		log_error("cannot read the local keymap");
		return;
	}
	/* The text ends with a NUL that the server does not need. Kept, to
	 * send again on each reconnection. */
	uint32_t len = (uint32_t)strnlen(map, size);
	char *copy = len > 0 ? malloc(len) : NULL;
	if (copy) {
		memcpy(copy, map, len);
		free(viewer->keymap);
		viewer->keymap = copy;
		viewer->keymap_size = len;
		struct wire_msg msg = {
			.type = WIRE_KEYMAP,
			.keymap = {.format = 1, .size = len, .data = copy},
		};
		viewer_send(viewer, &msg);
	}
	munmap(map, size);
}

/* What the server must know of the local keyboard, on a new connection.
 * Keys held now are not sent: a press from before the link broke must not
 * reach the app late. */
void input_send_state(struct rv_viewer *viewer)
{
	if (viewer->keymap) {
		struct wire_msg msg = {
			.type = WIRE_KEYMAP,
			.keymap = {.format = 1,
				.size = viewer->keymap_size,
				.data = viewer->keymap},
		};
		viewer_send(viewer, &msg);
	}
	if (viewer->have_repeat) {
		struct wire_msg msg = {
			.type = WIRE_REPEAT_INFO,
			.repeat_info = {.rate = viewer->repeat_rate, .delay = viewer->repeat_delay},
		};
		viewer_send(viewer, &msg);
	}
	struct wire_msg mods = {
		.type = WIRE_MODIFIERS,
		.modifiers = {viewer->modifiers[0], viewer->modifiers[1], viewer->modifiers[2],
			viewer->modifiers[3]},
	};
	viewer_send(viewer, &mods);
	if (viewer->keyboard_focus) {
		struct wire_msg msg = {
			.type = WIRE_KEYBOARD_ENTER,
			.keyboard_enter = {.window = viewer->keyboard_focus->id, .nkeys = 0},
		};
		viewer_send(viewer, &msg);
	}
}

static void keyboard_enter(void *data, struct wl_keyboard *keyboard, uint32_t serial,
	struct wl_surface *surface, struct wl_array *keys)
{
	struct rv_viewer *viewer = data;
	struct rv_window *window = window_of(viewer, surface);
	viewer->keyboard_focus = window;
	viewer->keyboard_serial = serial;
	clipboard_input_serial(viewer);
	if (!window) {
		return;
	}
	uint32_t codes[WIRE_MAX_KEYS];
	uint32_t n = 0;
	uint32_t *key;
	wl_array_for_each(key, keys)
	{
		if (n < WIRE_MAX_KEYS && *key <= 0xffff) {
			codes[n++] = *key;
		}
	}
	struct wire_msg msg = {
		.type = WIRE_KEYBOARD_ENTER,
		.keyboard_enter = {.window = window->id, .nkeys = n, .keys = codes},
	};
	viewer_send(viewer, &msg);
}

static void keyboard_leave(void *data, struct wl_keyboard *keyboard, uint32_t serial,
	struct wl_surface *surface)
{
	struct rv_viewer *viewer = data;
	if (viewer->keyboard_focus) {
		struct wire_msg msg = {
			.type = WIRE_KEYBOARD_LEAVE,
			.keyboard_leave = {viewer->keyboard_focus->id},
		};
		viewer_send(viewer, &msg);
	}
	viewer->keyboard_focus = NULL;
}

static void keyboard_key(void *data, struct wl_keyboard *keyboard, uint32_t serial, uint32_t time,
	uint32_t key, uint32_t state)
{
	struct rv_viewer *viewer = data;
	if (state == WL_KEYBOARD_KEY_STATE_PRESSED) {
		viewer->input_serial = serial;
	}
	viewer->keyboard_serial = serial;
	clipboard_input_serial(viewer);
	if (!viewer->keyboard_focus || key > 0xffff) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_KEY,
		.key = {.key = key, .state = state == WL_KEYBOARD_KEY_STATE_PRESSED ? 1 : 0},
	};
	viewer_send(viewer, &msg);
}

static void keyboard_modifiers(void *data, struct wl_keyboard *keyboard, uint32_t serial,
	uint32_t depressed, uint32_t latched, uint32_t locked, uint32_t group)
{
	struct rv_viewer *viewer = data;
	viewer->modifiers[0] = depressed;
	viewer->modifiers[1] = latched;
	viewer->modifiers[2] = locked;
	viewer->modifiers[3] = group;
	struct wire_msg msg = {
		.type = WIRE_MODIFIERS,
		.modifiers = {depressed, latched, locked, group},
	};
	viewer_send(viewer, &msg);
}

static void keyboard_repeat_info(void *data, struct wl_keyboard *keyboard, int32_t rate,
	int32_t delay)
{
	struct rv_viewer *viewer = data;
	viewer->repeat_rate = rate < 0 ? 0 : (rate > 1000 ? 1000 : rate);
	viewer->repeat_delay = delay < 0 ? 0 : (delay > 60000 ? 60000 : delay);
	viewer->have_repeat = true;
	struct wire_msg msg = {
		.type = WIRE_REPEAT_INFO,
		.repeat_info = {.rate = viewer->repeat_rate, .delay = viewer->repeat_delay},
	};
	viewer_send(viewer, &msg);
}

static const struct wl_keyboard_listener keyboard_listener = {
	.keymap = keyboard_keymap,
	.enter = keyboard_enter,
	.leave = keyboard_leave,
	.key = keyboard_key,
	.modifiers = keyboard_modifiers,
	.repeat_info = keyboard_repeat_info,
};

/* Touch: each point is reported in coordinates of the window it went down
 * on, which the server keeps for it. */
static void touch_down(void *data, struct wl_touch *touch, uint32_t serial, uint32_t time,
	struct wl_surface *surface, int32_t id, wl_fixed_t x, wl_fixed_t y)
{
	struct rv_viewer *viewer = data;
	struct rv_window *window = window_of(viewer, surface);
	viewer->input_serial = serial;
	if (window) {
		struct wire_msg msg = {
			.type = WIRE_TOUCH_DOWN,
			.touch = {.window = window->id, .id = id, .x = x, .y = y},
		};
		viewer_send(viewer, &msg);
	}
}

static void touch_up(void *data, struct wl_touch *touch, uint32_t serial, uint32_t time, int32_t id)
{
	struct wire_msg msg = {.type = WIRE_TOUCH_UP, .touch = {.id = id}};
	viewer_send(data, &msg);
}

static void touch_motion(void *data, struct wl_touch *touch, uint32_t time, int32_t id,
	wl_fixed_t x, wl_fixed_t y)
{
	struct wire_msg msg = {.type = WIRE_TOUCH_MOTION, .touch = {.id = id, .x = x, .y = y}};
	viewer_send(data, &msg);
}

static void touch_frame(void *data, struct wl_touch *touch)
{
	viewer_send(data, &(struct wire_msg){.type = WIRE_TOUCH_FRAME});
}

static void touch_cancel(void *data, struct wl_touch *touch)
{
	viewer_send(data, &(struct wire_msg){.type = WIRE_TOUCH_CANCEL});
}

static const struct wl_touch_listener touch_listener = {
	.down = touch_down,
	.up = touch_up,
	.motion = touch_motion,
	.frame = touch_frame,
	.cancel = touch_cancel,
};

static void seat_capabilities(void *data, struct wl_seat *seat, uint32_t caps)
{
	struct rv_viewer *viewer = data;
	bool want_touch = caps & WL_SEAT_CAPABILITY_TOUCH;
	if (want_touch && !viewer->touch) {
		viewer->touch = wl_seat_get_touch(seat);
		wl_touch_add_listener(viewer->touch, &touch_listener, viewer);
	} else if (!want_touch && viewer->touch) {
		viewer_send(viewer, &(struct wire_msg){.type = WIRE_TOUCH_CANCEL});
		wl_touch_destroy(viewer->touch);
		viewer->touch = NULL;
	}
	bool want_pointer = caps & WL_SEAT_CAPABILITY_POINTER;
	bool want_keyboard = caps & WL_SEAT_CAPABILITY_KEYBOARD;
	if (want_pointer && !viewer->pointer) {
		viewer->pointer = wl_seat_get_pointer(seat);
		wl_pointer_add_listener(viewer->pointer, &pointer_listener, viewer);
	} else if (!want_pointer && viewer->pointer) {
		if (viewer->pointer_focus) {
			struct wire_msg msg = {.type = WIRE_POINTER_LEAVE};
			msg.pointer_leave.window = viewer->pointer_focus->id;
			viewer_send(viewer, &msg);
			viewer_send(viewer, &(struct wire_msg){.type = WIRE_POINTER_FRAME});
		}
		wl_pointer_destroy(viewer->pointer);
		viewer->pointer = NULL;
		viewer->pointer_focus = NULL;
	}
	if (want_keyboard && !viewer->keyboard) {
		viewer->keyboard = wl_seat_get_keyboard(seat);
		wl_keyboard_add_listener(viewer->keyboard, &keyboard_listener, viewer);
	} else if (!want_keyboard && viewer->keyboard) {
		/* No leave event comes with a lost keyboard: say it ourselves, so
		 * the server releases held keys. */
		if (viewer->keyboard_focus) {
			struct wire_msg msg = {.type = WIRE_KEYBOARD_LEAVE};
			msg.keyboard_leave.window = viewer->keyboard_focus->id;
			viewer_send(viewer, &msg);
		}
		wl_keyboard_destroy(viewer->keyboard);
		viewer->keyboard = NULL;
		viewer->keyboard_focus = NULL;
	}
}

static void seat_name(void *data, struct wl_seat *seat, const char *name)
{
}

static const struct wl_seat_listener seat_listener = {
	.capabilities = seat_capabilities,
	.name = seat_name,
};

void input_seat_init(struct rv_viewer *viewer, struct wl_seat *seat, uint32_t version)
{
	viewer->seat = seat;
	viewer->seat_version = version;
	wl_seat_add_listener(seat, &seat_listener, viewer);
}

void input_finish(struct rv_viewer *viewer)
{
	if (viewer->touch) {
		wl_touch_destroy(viewer->touch);
	}
	if (viewer->pointer) {
		wl_pointer_destroy(viewer->pointer);
	}
	if (viewer->keyboard) {
		wl_keyboard_destroy(viewer->keyboard);
	}
	if (viewer->seat) {
		wl_seat_destroy(viewer->seat);
	}
	free(viewer->keymap);
	viewer->keymap = NULL;
	if (viewer->cursor_buffer) {
		wl_buffer_destroy(viewer->cursor_buffer);
	}
	if (viewer->cursor_old_buffer) {
		wl_buffer_destroy(viewer->cursor_old_buffer);
	}
	if (viewer->cursor_surface) {
		wl_surface_destroy(viewer->cursor_surface);
	}
}

void input_window_gone(struct rv_viewer *viewer, struct rv_window *window)
{
	if (viewer->pointer_focus == window) {
		viewer->pointer_focus = NULL;
	}
	if (viewer->keyboard_focus == window) {
		viewer->keyboard_focus = NULL;
	}
}
