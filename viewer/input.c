/*
 * Local input to the server: the seat's pointer, keyboard and touch events
 * become wire messages for the window under the pointer, with keyboard
 * focus, or under the finger. Held keys are never sent on a new link: a
 * press from before a break must not reach the app late.
 */
#include <stdlib.h>
#include <linux/input-event-codes.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "chord.h"
#include "clipboard.h"
#include "connection.h"
#include "constraint.h"
#include "gesture.h"
#include "tablet.h"
#include "cursor.h"
#include "edges.h"
#include "hud.h"
#include "input.h"
#include "monotonic.h"
#include "relative-pointer-unstable-v1-client-protocol.h"
#include "textinput.h"
#include "log.h"

static void send_motion(struct rv_viewer *viewer, wl_fixed_t x, wl_fixed_t y)
{
	if (!viewer->seat.pointer_focus) {
		return;
	}
	/* wl_fixed_t is 24.8 fixed point, as on the wire. */
	struct wire_msg msg = {
		.type = WIRE_POINTER_MOTION,
		.pointer_motion = {.window = viewer->seat.pointer_focus->id, .x = x, .y = y},
	};
	connection_send(viewer, &msg);
}

static void pointer_frame_if_old(struct rv_viewer *viewer)
{
	if (viewer->seat.version < WL_POINTER_FRAME_SINCE_VERSION) {
		connection_send(viewer, &(struct wire_msg){.type = WIRE_POINTER_FRAME});
	}
}

static void pointer_enter(void *data, struct wl_pointer *pointer, uint32_t serial,
	struct wl_surface *surface, wl_fixed_t x, wl_fixed_t y)
{
	struct rv_viewer *viewer = data;
	viewer->seat.pointer_focus = window_of_surface(viewer, surface);
	viewer->seat.pointer_serial = serial;
	viewer->seat.edge_focus = edges_window(viewer, surface);
	if (viewer->seat.edge_focus) {
		/* A resize band of ours: the app hears nothing of it. */
		edges_strip_origin(viewer->seat.edge_focus, surface, &viewer->seat.edge_x,
			&viewer->seat.edge_y);
		viewer->seat.edges = edges_at(viewer->seat.edge_focus, viewer->seat.edge_x,
			viewer->seat.edge_y, x, y);
		edges_cursor(viewer, viewer->seat.edge_focus, viewer->seat.edges);
		return;
	}
	cursor_show(viewer);
	send_motion(viewer, x, y);
	pointer_frame_if_old(viewer);
}

static void pointer_leave(void *data, struct wl_pointer *pointer, uint32_t serial,
	struct wl_surface *surface)
{
	struct rv_viewer *viewer = data;
	if (viewer->seat.pointer_focus) {
		struct wire_msg msg = {
			.type = WIRE_POINTER_LEAVE,
			.pointer_leave = {viewer->seat.pointer_focus->id},
		};
		connection_send(viewer, &msg);
		pointer_frame_if_old(viewer);
	}
	viewer->seat.pointer_focus = NULL;
	viewer->seat.edge_focus = NULL;
}

static void pointer_motion(void *data, struct wl_pointer *pointer, uint32_t time, wl_fixed_t x,
	wl_fixed_t y)
{
	struct rv_viewer *viewer = data;
	struct rv_seat *seat = &viewer->seat;
	if (seat->edge_focus) {
		uint32_t edges = edges_at(seat->edge_focus, seat->edge_x, seat->edge_y, x, y);
		if (edges != seat->edges) {
			seat->edges = edges;
			edges_cursor(viewer, seat->edge_focus, edges);
		}
		return;
	}
	send_motion(viewer, x, y);
	pointer_frame_if_old(viewer);
}

/* Marks an input to window for input-to-photon: the server says which frame
 * first answers it (frame_mark), and present.c measures until it shows. */
static void mark_input(struct rv_viewer *viewer, struct rv_window *window, uint32_t serial)
{
	struct rv_seat *seat = &viewer->seat;
	if (++seat->next_mark == 0) {
		seat->next_mark = 1;
	}
	seat->marks[seat->next_mark % RV_MARKS] = (struct rv_mark){.mark = seat->next_mark,
		.sent_us = monotonic_usec(),
		.serial = serial};
	struct wire_msg msg = {.type = WIRE_INPUT_MARK,
		.input_mark = {.window = window->id, .mark = seat->next_mark}};
	connection_send(viewer, &msg);
}

uint64_t input_mark_sent(struct rv_viewer *viewer, uint32_t mark)
{
	struct rv_mark *m = &viewer->seat.marks[mark % RV_MARKS];
	return m->mark == mark ? m->sent_us : 0;
}

uint32_t input_mark_serial(struct rv_viewer *viewer, uint32_t mark)
{
	struct rv_mark *m = &viewer->seat.marks[mark % RV_MARKS];
	return m->mark == mark && mark != 0 ? m->serial : 0;
}

static void relative_motion(void *data, struct zwp_relative_pointer_v1 *relative, uint32_t utime_hi,
	uint32_t utime_lo, wl_fixed_t dx, wl_fixed_t dy, wl_fixed_t dx_unaccel,
	wl_fixed_t dy_unaccel)
{
	struct rv_viewer *viewer = data;
	if (!viewer->seat.pointer_focus) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_RELATIVE_MOTION,
		.relative_motion =
			{
				.time_us = (uint64_t)utime_hi << 32 | utime_lo,
				.dx = dx,
				.dy = dy,
				.dx_unaccel = dx_unaccel,
				.dy_unaccel = dy_unaccel,
			},
	};
	connection_send(viewer, &msg);
}

static const struct zwp_relative_pointer_v1_listener relative_listener = {
	.relative_motion = relative_motion,
};

void input_relative_pointer(struct rv_viewer *viewer)
{
	struct rv_seat *seat = &viewer->seat;
	if (seat->relative_manager && seat->pointer && !seat->relative_pointer) {
		seat->relative_pointer =
			zwp_relative_pointer_manager_v1_get_relative_pointer(seat->relative_manager,
				seat->pointer);
		zwp_relative_pointer_v1_add_listener(seat->relative_pointer, &relative_listener,
			viewer);
	}
}

static void pointer_button(void *data, struct wl_pointer *pointer, uint32_t serial, uint32_t time,
	uint32_t button, uint32_t state)
{
	struct rv_viewer *viewer = data;
	if (state == WL_POINTER_BUTTON_STATE_PRESSED) {
		viewer->seat.input_serial = serial;
		viewer->seat.last_button = button;
		if (viewer->seat.edge_focus && button == BTN_LEFT) {
			edges_resize(viewer, viewer->seat.edge_focus, serial, viewer->seat.edges);
			return;
		}
	}
	if (!viewer->seat.pointer_focus || button > 0xffff) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_POINTER_BUTTON,
		.pointer_button = {.button = button, .state = state ? 1 : 0},
	};
	connection_send(viewer, &msg);
	if (state) {
		mark_input(viewer, viewer->seat.pointer_focus, serial);
	}
	pointer_frame_if_old(viewer);
}

static void pointer_axis(void *data, struct wl_pointer *pointer, uint32_t time, uint32_t axis,
	wl_fixed_t value)
{
	struct rv_viewer *viewer = data;
	if (!viewer->seat.pointer_focus || axis > 1) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_POINTER_AXIS,
		.pointer_axis =
			{
				.axis = axis,
				.value = value,
				.discrete = viewer->seat.axis_discrete[axis],
				.source = viewer->seat.axis_source,
			},
	};
	viewer->seat.axis_discrete[axis] = 0;
	connection_send(viewer, &msg);
	pointer_frame_if_old(viewer);
}

static void pointer_frame(void *data, struct wl_pointer *pointer)
{
	struct rv_viewer *viewer = data;
	viewer->seat.axis_source = 0;
	connection_send(viewer, &(struct wire_msg){.type = WIRE_POINTER_FRAME});
}

static void pointer_axis_source(void *data, struct wl_pointer *pointer, uint32_t source)
{
	struct rv_viewer *viewer = data;
	viewer->seat.axis_source = source <= 3 ? source : 0;
}

static void pointer_axis_stop(void *data, struct wl_pointer *pointer, uint32_t time, uint32_t axis)
{
}

static void pointer_axis_discrete(void *data, struct wl_pointer *pointer, uint32_t axis,
	int32_t discrete)
{
	struct rv_viewer *viewer = data;
	if (axis <= 1) {
		viewer->seat.axis_discrete[axis] = discrete;
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
		free(viewer->seat.keymap);
		viewer->seat.keymap = copy;
		viewer->seat.keymap_size = len;
		chord_keymap(viewer, copy, len);
		struct wire_msg msg = {
			.type = WIRE_KEYMAP,
			.keymap = {.format = 1, .size = len, .data = copy},
		};
		connection_send(viewer, &msg);
	}
	munmap(map, size);
}

/* What the server must know of the local keyboard, on a new connection.
 * Keys held now are not sent: a press from before the link broke must not
 * reach the app late. */
void input_send_state(struct rv_viewer *viewer)
{
	if (viewer->seat.keymap) {
		struct wire_msg msg = {
			.type = WIRE_KEYMAP,
			.keymap = {.format = 1,
				.size = viewer->seat.keymap_size,
				.data = viewer->seat.keymap},
		};
		connection_send(viewer, &msg);
	}
	if (viewer->seat.have_repeat) {
		struct wire_msg msg = {
			.type = WIRE_REPEAT_INFO,
			.repeat_info = {.rate = viewer->seat.repeat_rate,
				.delay = viewer->seat.repeat_delay},
		};
		connection_send(viewer, &msg);
	}
	struct wire_msg mods = {
		.type = WIRE_MODIFIERS,
		.modifiers = {viewer->seat.modifiers[0], viewer->seat.modifiers[1],
			viewer->seat.modifiers[2], viewer->seat.modifiers[3]},
	};
	connection_send(viewer, &mods);
	if (viewer->seat.keyboard_focus) {
		struct wire_msg msg = {
			.type = WIRE_KEYBOARD_ENTER,
			.keyboard_enter = {.window = viewer->seat.keyboard_focus->id, .nkeys = 0},
		};
		connection_send(viewer, &msg);
	}
}

static void keyboard_enter(void *data, struct wl_keyboard *keyboard, uint32_t serial,
	struct wl_surface *surface, struct wl_array *keys)
{
	struct rv_viewer *viewer = data;
	struct rv_window *window = window_of_surface(viewer, surface);
	viewer->seat.keyboard_focus = window;
	viewer->seat.keyboard_serial = serial;
	clipboard_input_serial(viewer);
	constraint_update(viewer);
	if (!window) {
		return;
	}
	uint8_t codes[WIRE_MAX_KEYS * 4];
	uint32_t n = 0;
	uint32_t *key;
	wl_array_for_each(key, keys)
	{
		if (n < WIRE_MAX_KEYS && *key <= 0xffff) {
			wire_put_key(codes, n++, *key);
		}
	}
	struct wire_msg msg = {
		.type = WIRE_KEYBOARD_ENTER,
		.keyboard_enter = {.window = window->id, .nkeys = n, .keys = codes},
	};
	connection_send(viewer, &msg);
	constraint_update(viewer);
}

static void keyboard_leave(void *data, struct wl_keyboard *keyboard, uint32_t serial,
	struct wl_surface *surface)
{
	struct rv_viewer *viewer = data;
	if (viewer->seat.keyboard_focus) {
		struct wire_msg msg = {
			.type = WIRE_KEYBOARD_LEAVE,
			.keyboard_leave = {viewer->seat.keyboard_focus->id},
		};
		connection_send(viewer, &msg);
	}
	viewer->seat.keyboard_focus = NULL;
	constraint_update(viewer);
}

static void keyboard_key(void *data, struct wl_keyboard *keyboard, uint32_t serial, uint32_t time,
	uint32_t key, uint32_t state)
{
	struct rv_viewer *viewer = data;
	if (state == WL_KEYBOARD_KEY_STATE_PRESSED) {
		viewer->seat.input_serial = serial;
	}
	viewer->seat.keyboard_serial = serial;
	clipboard_input_serial(viewer);
	if (!viewer->seat.keyboard_focus || key > 0xffff ||
		hud_key(viewer, key, state == WL_KEYBOARD_KEY_STATE_PRESSED)) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_KEY,
		.key = {.key = key, .state = state == WL_KEYBOARD_KEY_STATE_PRESSED ? 1 : 0},
	};
	connection_send(viewer, &msg);
	if (state == WL_KEYBOARD_KEY_STATE_PRESSED) {
		mark_input(viewer, viewer->seat.keyboard_focus, serial);
	}
}

static void keyboard_modifiers(void *data, struct wl_keyboard *keyboard, uint32_t serial,
	uint32_t depressed, uint32_t latched, uint32_t locked, uint32_t group)
{
	struct rv_viewer *viewer = data;
	viewer->seat.modifiers[0] = depressed;
	viewer->seat.modifiers[1] = latched;
	viewer->seat.modifiers[2] = locked;
	viewer->seat.modifiers[3] = group;
	chord_modifiers(viewer, depressed, latched, locked, group);
	struct wire_msg msg = {
		.type = WIRE_MODIFIERS,
		.modifiers = {depressed, latched, locked, group},
	};
	connection_send(viewer, &msg);
}

static void keyboard_repeat_info(void *data, struct wl_keyboard *keyboard, int32_t rate,
	int32_t delay)
{
	struct rv_viewer *viewer = data;
	viewer->seat.repeat_rate = rate < 0 ? 0 : (rate > 1000 ? 1000 : rate);
	viewer->seat.repeat_delay = delay < 0 ? 0 : (delay > 60000 ? 60000 : delay);
	viewer->seat.have_repeat = true;
	struct wire_msg msg = {
		.type = WIRE_REPEAT_INFO,
		.repeat_info = {.rate = viewer->seat.repeat_rate,
			.delay = viewer->seat.repeat_delay},
	};
	connection_send(viewer, &msg);
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
	struct rv_window *window = window_of_surface(viewer, surface);
	viewer->seat.input_serial = serial;
	struct rv_window *edged = edges_window(viewer, surface);
	if (edged) {
		int32_t ox, oy;
		edges_strip_origin(edged, surface, &ox, &oy);
		edges_resize(viewer, edged, serial, edges_at(edged, ox, oy, x, y));
		return;
	}
	if (window) {
		struct wire_msg msg = {
			.type = WIRE_TOUCH_DOWN,
			.touch_down = {.window = window->id, .id = id, .x = x, .y = y},
		};
		connection_send(viewer, &msg);
		mark_input(viewer, window, serial);
	}
}

static void touch_up(void *data, struct wl_touch *touch, uint32_t serial, uint32_t time, int32_t id)
{
	struct wire_msg msg = {.type = WIRE_TOUCH_UP, .touch_up = {.id = id}};
	connection_send(data, &msg);
}

static void touch_motion(void *data, struct wl_touch *touch, uint32_t time, int32_t id,
	wl_fixed_t x, wl_fixed_t y)
{
	struct wire_msg msg = {.type = WIRE_TOUCH_MOTION,
		.touch_motion = {.id = id, .x = x, .y = y}};
	connection_send(data, &msg);
}

static void touch_frame(void *data, struct wl_touch *touch)
{
	connection_send(data, &(struct wire_msg){.type = WIRE_TOUCH_FRAME});
}

static void touch_cancel(void *data, struct wl_touch *touch)
{
	connection_send(data, &(struct wire_msg){.type = WIRE_TOUCH_CANCEL});
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
	if (want_touch && !viewer->seat.touch) {
		viewer->seat.touch = wl_seat_get_touch(seat);
		wl_touch_add_listener(viewer->seat.touch, &touch_listener, viewer);
	} else if (!want_touch && viewer->seat.touch) {
		connection_send(viewer, &(struct wire_msg){.type = WIRE_TOUCH_CANCEL});
		wl_touch_destroy(viewer->seat.touch);
		viewer->seat.touch = NULL;
	}
	bool want_pointer = caps & WL_SEAT_CAPABILITY_POINTER;
	bool want_keyboard = caps & WL_SEAT_CAPABILITY_KEYBOARD;
	if (want_pointer && !viewer->seat.pointer) {
		viewer->seat.pointer = wl_seat_get_pointer(seat);
		wl_pointer_add_listener(viewer->seat.pointer, &pointer_listener, viewer);
		input_relative_pointer(viewer);
		gesture_pointer(viewer);
		constraint_update(viewer);
	} else if (!want_pointer && viewer->seat.pointer) {
		if (viewer->seat.pointer_focus) {
			struct wire_msg msg = {.type = WIRE_POINTER_LEAVE};
			msg.pointer_leave.window = viewer->seat.pointer_focus->id;
			connection_send(viewer, &msg);
			connection_send(viewer, &(struct wire_msg){.type = WIRE_POINTER_FRAME});
		}
		if (viewer->seat.relative_pointer) {
			zwp_relative_pointer_v1_destroy(viewer->seat.relative_pointer);
			viewer->seat.relative_pointer = NULL;
		}
		gesture_pointer_gone(viewer);
		wl_pointer_destroy(viewer->seat.pointer);
		viewer->seat.pointer = NULL;
		constraint_update(viewer);
		viewer->seat.pointer_focus = NULL;
	}
	if (want_keyboard && !viewer->seat.keyboard) {
		viewer->seat.keyboard = wl_seat_get_keyboard(seat);
		wl_keyboard_add_listener(viewer->seat.keyboard, &keyboard_listener, viewer);
	} else if (!want_keyboard && viewer->seat.keyboard) {
		/* No leave event comes with a lost keyboard: say it ourselves, so
		 * the server releases held keys. */
		if (viewer->seat.keyboard_focus) {
			struct wire_msg msg = {.type = WIRE_KEYBOARD_LEAVE};
			msg.keyboard_leave.window = viewer->seat.keyboard_focus->id;
			connection_send(viewer, &msg);
		}
		wl_keyboard_destroy(viewer->seat.keyboard);
		viewer->seat.keyboard = NULL;
		viewer->seat.keyboard_focus = NULL;
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
	viewer->seat.seat = seat;
	viewer->seat.version = version;
	wl_seat_add_listener(seat, &seat_listener, viewer);
	tablet_want(viewer);
}

void input_finish(struct rv_viewer *viewer)
{
	if (viewer->seat.touch) {
		wl_touch_destroy(viewer->seat.touch);
	}
	if (viewer->seat.relative_pointer) {
		zwp_relative_pointer_v1_destroy(viewer->seat.relative_pointer);
	}
	if (viewer->seat.relative_manager) {
		zwp_relative_pointer_manager_v1_destroy(viewer->seat.relative_manager);
	}
	constraint_finish(viewer);
	edges_seat_finish(viewer);
	textinput_finish(viewer);
	chord_finish(viewer);
	gesture_finish(viewer);
	tablet_finish(viewer);
	if (viewer->seat.pointer) {
		wl_pointer_destroy(viewer->seat.pointer);
	}
	if (viewer->seat.keyboard) {
		wl_keyboard_destroy(viewer->seat.keyboard);
	}
	if (viewer->seat.seat) {
		wl_seat_destroy(viewer->seat.seat);
	}
	free(viewer->seat.keymap);
	viewer->seat.keymap = NULL;
}

void input_window_gone(struct rv_viewer *viewer, struct rv_window *window)
{
	tablet_window_gone(viewer, window);
	if (viewer->seat.pointer_focus == window) {
		viewer->seat.pointer_focus = NULL;
	}
	if (viewer->seat.edge_focus == window) {
		viewer->seat.edge_focus = NULL;
	}
	if (viewer->seat.keyboard_focus == window) {
		viewer->seat.keyboard_focus = NULL;
	}
}
