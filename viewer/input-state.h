/*
 * What rcomp-view keeps of the local seat (input.h) and the remote cursor
 * (cursor.h): types only, for viewer.h.
 */
#ifndef RCOMP_INPUT_STATE_H
#define RCOMP_INPUT_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-client.h>

struct rv_window;
struct xkb_context;
struct xkb_keymap;
struct xkb_state;
struct zwp_keyboard_shortcuts_inhibit_manager_v1;
struct zwp_pointer_gestures_v1;
struct zwp_pointer_gesture_swipe_v1;
struct zwp_pointer_gesture_pinch_v1;
struct zwp_pointer_gesture_hold_v1;
struct zwp_tablet_manager_v2;
struct zwp_tablet_seat_v2;
struct zwp_pointer_constraints_v1;
struct zwp_relative_pointer_manager_v1;
struct zwp_relative_pointer_v1;

/* Marked input (input_mark) and when it was sent, the newest few. */
#define RV_MARKS 16
struct rv_mark {
	uint32_t mark;
	uint64_t sent_us;
	uint32_t serial; /* the local press's, for a move or resize it causes */
};

/* The local seat (input.c) and the remote cursor (cursor.c). */
struct rv_seat {
	struct wl_seat *seat;
	/* The local pointer's relative motion, where the compositor has it. */
	struct zwp_relative_pointer_manager_v1 *relative_manager;
	struct zwp_relative_pointer_v1 *relative_pointer;
	struct zwp_pointer_constraints_v1 *constraints;
	struct zwp_keyboard_shortcuts_inhibit_manager_v1 *inhibit_manager;
	/* The local touchpad's gestures (gesture.c). */
	struct zwp_pointer_gestures_v1 *gestures;
	uint32_t gestures_version;
	struct zwp_pointer_gesture_swipe_v1 *swipe;
	struct zwp_pointer_gesture_pinch_v1 *pinch;
	struct zwp_pointer_gesture_hold_v1 *hold;
	/* The local tablets' tools (tablet.c). */
	struct zwp_tablet_manager_v2 *tablet_manager;
	struct zwp_tablet_seat_v2 *tablet_seat;
	struct wl_list tablet_objects; /* rv_tablet_object: tablets, tools, pads */
	uint32_t version;
	struct wl_pointer *pointer;
	struct wl_keyboard *keyboard;
	struct wl_touch *touch;
	uint32_t input_serial; /* of the last button or key press, for popup grabs */
	uint32_t last_button; /* the last pressed, which an app's drag started with */
	uint32_t pointer_serial; /* of the last pointer enter, for set_cursor */
	uint32_t keyboard_serial; /* of the last keyboard enter or key, for selections */
	struct rv_window *pointer_focus;
	struct rv_window *keyboard_focus;
	int32_t axis_discrete[2];
	uint32_t axis_source;
	/* The local keyboard's state, sent again on each connection. */
	char *keymap;
	uint32_t keymap_size;
	int32_t repeat_rate, repeat_delay;
	bool have_repeat;
	uint32_t modifiers[4];
	struct rv_mark marks[RV_MARKS];
	uint32_t next_mark;
	/* The remote app's cursor, shown over our windows once it set one. */
	struct wl_surface *cursor_surface;
	struct wl_buffer *cursor_buffer, *cursor_old_buffer; /* old: not released yet */
	bool cursor_set, cursor_hidden;
	int32_t cursor_hotspot_x, cursor_hotspot_y;
	/* The pointer over a window's resize band (edges.c), and its cursor. */
	struct rv_window *edge_focus;
	int32_t edge_x, edge_y; /* the focused strip's place in the band */
	uint32_t edges; /* under the pointer */
	struct wl_cursor_theme *edge_theme;
	int32_t edge_theme_scale;
	struct wl_surface *edge_cursor_surface;
	/* The local keymap and modifiers, for the viewer's own chords (chord.c). */
	struct xkb_context *xkb;
	struct xkb_keymap *xkb_keymap;
	struct xkb_state *xkb_state;
};

#endif
