/*
 * Input from the viewer into the remote seat: keymap, keys, modifiers and
 * repeat info through a headless keyboard; pointer events to the surface
 * under the pointer, with an implicit grab while buttons are held; touch
 * points on the surface they went down on.
 */
#include <stdlib.h>
#include <string.h>
#include <wlr/backend/headless.h>
#include <wlr/interfaces/wlr_keyboard.h>
#include <wlr/types/wlr_input_device.h>
#include <wlr/types/wlr_keyboard.h>
#include <wlr/types/wlr_pointer_gestures_v1.h>
#include <wlr/types/wlr_relative_pointer_v1.h>
#include <wlr/types/wlr_seat.h>
#include <xkbcommon/xkbcommon.h>

#include "input.h"
#include "keychar.h"
#include "keymap-names.h"
#include "log.h"
#include "monotonic.h"
#include "server.h"

bool input_init(struct rc_server *server)
{
	struct rc_input *input = &server->input;
	input->xkb = xkb_context_new(XKB_CONTEXT_NO_FLAGS);
	if (!input->xkb) {
		log_error("cannot create an xkb context");
		return false;
	}
	input->keyboard = wlr_headless_add_input_device(server->backend, WLR_INPUT_DEVICE_KEYBOARD);
	if (!input->keyboard) {
		log_error("cannot create the headless keyboard");
		return false;
	}
	/* A default keymap until the viewer sends the local one. */
	struct xkb_keymap *keymap =
		xkb_keymap_new_from_names(input->xkb, NULL, XKB_KEYMAP_COMPILE_NO_FLAGS);
	if (!keymap) {
		log_error("cannot compile the default keymap (is xkb-data installed?)");
		return false;
	}
	keychar_set_keymap(server, keymap);
	xkb_keymap_unref(keymap);
	/* Pinch to zoom, swipe, hold: the viewer's touchpad's. */
	input->gestures = wlr_pointer_gestures_v1_create(server->display);
	wlr_keyboard_set_repeat_info(input->keyboard->keyboard, 25, 600);
	wlr_seat_set_keyboard(server->seat, input->keyboard);
	wlr_seat_set_capabilities(server->seat,
		WL_SEAT_CAPABILITY_POINTER | WL_SEAT_CAPABILITY_KEYBOARD |
			WL_SEAT_CAPABILITY_TOUCH);
	return true;
}

void input_finish(struct rc_server *server)
{
	keychar_finish(server);
	xkb_context_unref(server->input.xkb);
	server->input.xkb = NULL;
}

static void release_all(struct rc_server *server)
{
	struct rc_input *input = &server->input;
	uint32_t now = monotonic_msec();
	/* No key may stick on the remote side when the viewer leaves. */
	for (uint32_t i = 0; i < input->nkeys_down; i++) {
		wlr_seat_keyboard_notify_key(server->seat, now, input->keys_down[i],
			WL_KEYBOARD_KEY_STATE_RELEASED);
	}
	input->nkeys_down = 0;
	keychar_release_all(server);
	input->buttons_down = 0;
	input->grab_surface = NULL;
	wlr_seat_pointer_notify_clear_focus(server->seat);
	wlr_seat_keyboard_notify_clear_focus(server->seat);
}

/* Touch points of one window (or of all, window 0) end as a cancelled
 * gesture: the app must not take them as taps. */
static void cancel_touch(struct rc_server *server, uint32_t window)
{
	for (int i = 0; i < WIRE_MAX_TOUCH_POINTS; i++) {
		struct rc_touch_point *p = &server->input.touch[i];
		if (p->used && (window == 0 || p->window == window)) {
			struct wlr_touch_point *point =
				wlr_seat_touch_get_point(server->seat, p->id);
			if (point && point->surface) {
				wlr_seat_touch_notify_cancel(server->seat, point->surface);
			}
			p->used = false;
		}
	}
}

static void gesture_end(struct rc_server *server, uint32_t kind, bool cancelled);

void input_viewer_gone(struct rc_server *server)
{
	if (server->input.gesture) {
		gesture_end(server, server->input.gesture, true);
	}
	release_all(server);
	cancel_touch(server, 0);
}

void input_window_gone(struct rc_server *server, struct rc_window *window)
{
	struct rc_input *input = &server->input;
	cancel_touch(server, window->id);
	if (input->pointer_window == window->id) {
		input->pointer_window = 0;
		input->buttons_down = 0;
		input->grab_surface = NULL;
	}
}

/* A keymap by its names (format 2), checked by keymap-names.c. */
static struct xkb_keymap *compile_names(struct rc_server *server, const struct wire_keymap *msg)
{
	struct keymap_names n;
	char err[128];
	if (!keymap_names_parse(&n, (const uint8_t *)msg->data, msg->size, err, sizeof(err))) {
		log_warning("the viewer's keymap: %s; keeping the previous keymap", err);
		return NULL;
	}
	struct xkb_rule_names names = {
		.layout = n.layout[0] ? n.layout : NULL,
		.variant = n.variant[0] ? n.variant : NULL,
		.options = n.options[0] ? n.options : NULL,
	};
	struct xkb_keymap *keymap =
		xkb_keymap_new_from_names(server->input.xkb, &names, XKB_KEYMAP_COMPILE_NO_FLAGS);
	if (keymap) {
		log_info("keymap: layout \"%s\" variant \"%s\" options \"%s\"", n.layout, n.variant,
			n.options);
	} else {
		log_error("no keymap for layout \"%s\" variant \"%s\" options \"%s\"; keeping "
			  "the previous one",
			n.layout, n.variant, n.options);
	}
	return keymap;
}

struct xkb_keymap *input_compile_keymap(struct rc_server *server, const struct wire_keymap *msg)
{
	if (msg->format == 2) {
		return compile_names(server, msg);
	}
	struct xkb_keymap *keymap = xkb_keymap_new_from_buffer(server->input.xkb, msg->data,
		msg->size, XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS);
	if (!keymap) {
		log_warning("the viewer's keymap does not compile; keeping the previous one");
	}
	return keymap;
}

void input_set_keymap(struct rc_server *server, struct xkb_keymap *keymap)
{
	keychar_set_keymap(server, keymap);
}

void input_repeat_info(struct rc_server *server, const struct wire_repeat_info *msg)
{
	wlr_keyboard_set_repeat_info(server->input.keyboard->keyboard, msg->rate, msg->delay);
}

static void track_key(struct rc_input *input, uint32_t key, bool pressed)
{
	for (uint32_t i = 0; i < input->nkeys_down; i++) {
		if (input->keys_down[i] == key) {
			if (!pressed) {
				input->keys_down[i] = input->keys_down[--input->nkeys_down];
			}
			return;
		}
	}
	if (pressed && input->nkeys_down < WIRE_MAX_KEYS) {
		input->keys_down[input->nkeys_down++] = key;
	}
}

void input_keyboard_enter(struct rc_server *server, struct rc_window *window,
	const struct wire_keyboard_enter *msg)
{
	struct rc_input *input = &server->input;
	input->nkeys_down = 0;
	uint32_t keys[WIRE_MAX_KEYS];
	for (uint32_t i = 0; i < msg->nkeys; i++) {
		keys[i] = wire_get_key(msg->keys, i);
		track_key(input, keys[i], true);
	}
	/* The local compositor already decided focus, grabs included: enter
	 * directly, past any popup grab of our own seat (which would drop it). */
	wlr_seat_keyboard_enter(server->seat, window_surface(window), keys, msg->nkeys,
		&input->keyboard->keyboard->modifiers);
}

void input_keyboard_leave(struct rc_server *server, struct rc_window *window)
{
	struct wlr_surface *focused = server->seat->keyboard_state.focused_surface;
	if (focused && focused == window_surface(window)) {
		release_all(server);
	}
}

void input_key(struct rc_server *server, const struct wire_key *msg)
{
	if (!server->seat->keyboard_state.focused_surface) {
		return;
	}
	if (msg->state) {
		keychar_restore(server);
	}
	track_key(&server->input, msg->key, msg->state == 1);
	wlr_seat_keyboard_notify_key(server->seat, monotonic_msec(), msg->key,
		msg->state ? WL_KEYBOARD_KEY_STATE_PRESSED : WL_KEYBOARD_KEY_STATE_RELEASED);
}

void input_modifiers(struct rc_server *server, const struct wire_modifiers *msg)
{
	struct wlr_keyboard *kbd = server->input.keyboard->keyboard;
	/* The viewer's word on its modifiers outranks a held character's. */
	server->input.chars.mods_set = false;
	wlr_keyboard_notify_modifiers(kbd, msg->depressed, msg->latched, msg->locked, msg->group);
	wlr_seat_keyboard_notify_modifiers(server->seat, &kbd->modifiers);
}

/* A press the viewer marks next (input_mark follows it). */
static void note_press(struct rc_server *server, uint32_t serial, bool touch)
{
	struct rc_input *input = &server->input;
	input->presses[input->npresses++ % RC_PRESSES] =
		(struct rc_press){.serial = serial, .touch = touch};
}

void input_mark(struct rc_server *server, uint32_t mark)
{
	/* Key presses are marked too: only a press not yet marked takes it. */
	struct rc_input *input = &server->input;
	if (input->npresses > 0) {
		struct rc_press *newest = &input->presses[(input->npresses - 1) % RC_PRESSES];
		if (newest->mark == 0) {
			newest->mark = mark;
		}
	}
}

static struct rc_press *press_of(struct rc_server *server, uint32_t serial)
{
	for (int i = 0; i < RC_PRESSES && serial != 0; i++) {
		struct rc_press *p = &server->input.presses[i];
		if (p->serial == serial && p->mark != 0) {
			return p;
		}
	}
	return NULL;
}

bool input_press_mark(struct rc_server *server, uint32_t serial, uint32_t *mark)
{
	struct rc_press *p = press_of(server, serial);
	*mark = p ? p->mark : 0;
	return p != NULL;
}

void input_press_taken(struct rc_server *server, uint32_t serial)
{
	struct rc_press *p = press_of(server, serial);
	if (p && p->touch) {
		cancel_touch(server, 0);
		return;
	}
	input_release_unheard(server);
}

void input_release_unheard(struct rc_server *server)
{
	struct rc_input *input = &server->input;
	/* Leave first, so that the seat forgets its buttons unheard. */
	wlr_seat_pointer_notify_clear_focus(server->seat);
	struct wlr_seat_pointer_state *state = &server->seat->pointer_state;
	uint32_t buttons[WLR_POINTER_BUTTONS_CAP];
	size_t n = state->button_count;
	memcpy(buttons, state->buttons, n * sizeof(buttons[0]));
	for (size_t i = 0; i < n; i++) {
		wlr_seat_pointer_notify_button(server->seat, monotonic_msec(), buttons[i],
			WLR_BUTTON_RELEASED);
	}
	input->buttons_down = 0;
	input->grab_surface = NULL;
	input->pointer_window = 0;
}

void input_relative_motion(struct rc_server *server, const struct wire_relative_motion *msg)
{
	/* To the app under the pointer, if it bound relative-pointer. */
	if (server->relative_pointer && server->seat->pointer_state.focused_surface) {
		wlr_relative_pointer_manager_v1_send_relative_motion(server->relative_pointer,
			server->seat, msg->time_us, msg->dx / 256.0, msg->dy / 256.0,
			msg->dx_unaccel / 256.0, msg->dy_unaccel / 256.0);
	}
}

void input_pointer_motion(struct rc_server *server, struct rc_window *window,
	const struct wire_pointer_motion *msg)
{
	struct rc_input *input = &server->input;
	uint32_t now = monotonic_msec();
	double wx = msg->x / 256.0, wy = msg->y / 256.0;
	/* An app's drag goes to whatever surface is under the pointer. */
	if (input->buttons_down && input->grab_surface && input->pointer_window == window->id &&
		!server->seat->drag) {
		/* Implicit grab: the pressed surface keeps the pointer. */
		wlr_seat_pointer_notify_motion(server->seat, now, wx - input->grab_dx,
			wy - input->grab_dy);
		return;
	}
	input->pointer_window = window->id;
	double subx = 0, suby = 0;
	struct wlr_surface *surface = window_surface_under(window, wx, wy, &subx, &suby);
	if (!surface) {
		wlr_seat_pointer_notify_clear_focus(server->seat);
		return;
	}
	input->grab_dx = wx - subx;
	input->grab_dy = wy - suby;
	if (server->seat->pointer_state.focused_surface != surface) {
		wlr_seat_pointer_notify_enter(server->seat, surface, subx, suby);
	}
	wlr_seat_pointer_notify_motion(server->seat, now, subx, suby);
}

void input_pointer_leave(struct rc_server *server, const struct wire_pointer_leave *msg)
{
	struct rc_input *input = &server->input;
	if ((input->buttons_down == 0 || server->seat->drag) &&
		input->pointer_window == msg->window) {
		input->pointer_window = 0;
		wlr_seat_pointer_notify_clear_focus(server->seat);
	}
}

void input_pointer_button(struct rc_server *server, const struct wire_pointer_button *msg)
{
	struct rc_input *input = &server->input;
	bool pressed = msg->state == 1;
	if (pressed) {
		if (input->buttons_down == 0) {
			input->grab_surface = server->seat->pointer_state.focused_surface;
		}
		input->buttons_down++;
	} else if (input->buttons_down > 0) {
		input->buttons_down--;
		if (input->buttons_down == 0) {
			input->grab_surface = NULL;
		}
	}
	uint32_t serial = wlr_seat_pointer_notify_button(server->seat, monotonic_msec(),
		msg->button, pressed ? WLR_BUTTON_PRESSED : WLR_BUTTON_RELEASED);
	if (pressed) {
		note_press(server, serial, false);
	}
}

void input_pointer_axis(struct rc_server *server, const struct wire_pointer_axis *msg)
{
	wlr_seat_pointer_notify_axis(server->seat, monotonic_msec(),
		(enum wlr_axis_orientation)msg->axis, msg->value / 256.0, msg->discrete,
		(enum wlr_axis_source)msg->source);
}

void input_pointer_frame(struct rc_server *server)
{
	wlr_seat_pointer_notify_frame(server->seat);
}

static void gesture_end(struct rc_server *server, uint32_t kind, bool cancelled)
{
	struct wlr_pointer_gestures_v1 *g = server->input.gestures;
	uint32_t t = monotonic_msec();
	if (kind == WIRE_GESTURE_SWIPE) {
		wlr_pointer_gestures_v1_send_swipe_end(g, server->seat, t, cancelled);
	} else if (kind == WIRE_GESTURE_PINCH) {
		wlr_pointer_gestures_v1_send_pinch_end(g, server->seat, t, cancelled);
	} else {
		wlr_pointer_gestures_v1_send_hold_end(g, server->seat, t, cancelled);
	}
	server->input.gesture = 0;
}

void input_gesture(struct rc_server *server, const struct wire_gesture *msg)
{
	struct rc_input *input = &server->input;
	struct wlr_pointer_gestures_v1 *g = input->gestures;
	uint32_t t = monotonic_msec();
	if (!g) {
		return;
	}
	if (msg->phase == WIRE_GESTURE_BEGIN) {
		if (input->gesture) {
			gesture_end(server, input->gesture, true);
		}
		input->gesture = msg->kind;
		if (msg->kind == WIRE_GESTURE_SWIPE) {
			wlr_pointer_gestures_v1_send_swipe_begin(g, server->seat, t, msg->fingers);
		} else if (msg->kind == WIRE_GESTURE_PINCH) {
			wlr_pointer_gestures_v1_send_pinch_begin(g, server->seat, t, msg->fingers);
		} else {
			wlr_pointer_gestures_v1_send_hold_begin(g, server->seat, t, msg->fingers);
		}
		return;
	}
	if (msg->kind != input->gesture) {
		return; /* not the one under way */
	}
	if (msg->phase == WIRE_GESTURE_END) {
		gesture_end(server, msg->kind, msg->cancelled);
	} else if (msg->kind == WIRE_GESTURE_SWIPE) {
		wlr_pointer_gestures_v1_send_swipe_update(g, server->seat, t, msg->dx / 256.0,
			msg->dy / 256.0);
	} else if (msg->kind == WIRE_GESTURE_PINCH) {
		wlr_pointer_gestures_v1_send_pinch_update(g, server->seat, t, msg->dx / 256.0,
			msg->dy / 256.0, msg->scale / 65536.0, msg->rotation / 256.0);
	}
}

static struct rc_touch_point *touch_point(struct rc_server *server, int32_t id)
{
	for (int i = 0; i < WIRE_MAX_TOUCH_POINTS; i++) {
		if (server->input.touch[i].used && server->input.touch[i].id == id) {
			return &server->input.touch[i];
		}
	}
	return NULL;
}

void input_touch_down(struct rc_server *server, struct rc_window *window,
	const struct wire_touch_down *msg)
{
	if (touch_point(server, msg->id)) {
		return;
	}
	struct rc_touch_point *p = NULL;
	for (int i = 0; i < WIRE_MAX_TOUCH_POINTS && !p; i++) {
		p = server->input.touch[i].used ? NULL : &server->input.touch[i];
	}
	double wx = msg->x / 256.0, wy = msg->y / 256.0;
	double subx = 0, suby = 0;
	struct wlr_surface *surface = window_surface_under(window, wx, wy, &subx, &suby);
	if (!p || !surface) {
		return; /* more fingers than we track, or none on the app */
	}
	/* The point stays with the surface it went down on. */
	*p = (struct rc_touch_point){.used = true,
		.id = msg->id,
		.window = window->id,
		.dx = wx - subx,
		.dy = wy - suby};
	note_press(server,
		wlr_seat_touch_notify_down(server->seat, surface, monotonic_msec(), p->id, subx,
			suby),
		true);
}

void input_touch_motion(struct rc_server *server, const struct wire_touch_motion *msg)
{
	struct rc_touch_point *p = touch_point(server, msg->id);
	if (p) {
		wlr_seat_touch_notify_motion(server->seat, monotonic_msec(), p->id,
			msg->x / 256.0 - p->dx, msg->y / 256.0 - p->dy);
	}
}

void input_touch_up(struct rc_server *server, const struct wire_touch_up *msg)
{
	struct rc_touch_point *p = touch_point(server, msg->id);
	if (p) {
		wlr_seat_touch_notify_up(server->seat, monotonic_msec(), p->id);
		p->used = false;
	}
}

void input_touch_frame(struct rc_server *server)
{
	wlr_seat_touch_notify_frame(server->seat);
}

void input_touch_cancel(struct rc_server *server)
{
	cancel_touch(server, 0);
}
