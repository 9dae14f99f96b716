/*
 * Input from the viewer into the remote seat: keymap, keys, modifiers and
 * repeat info through a headless keyboard; pointer events to the surface under
 * the pointer, with an implicit grab while buttons are held; window requests
 * (configure, close).
 */

#include <stdlib.h>
#include <string.h>
#include <wlr/backend/headless.h>
#include <wlr/interfaces/wlr_keyboard.h>
#include <wlr/types/wlr_input_device.h>
#include <wlr/types/wlr_keyboard.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_xdg_shell.h>
#include <xkbcommon/xkbcommon.h>

#include "log.h"
#include "server.h"

bool input_init(struct rc_server *server)
{
	server->xkb = xkb_context_new(XKB_CONTEXT_NO_FLAGS);
	if (!server->xkb) {
		log_error("cannot create an xkb context");
		return false;
	}
	server->keyboard =
		wlr_headless_add_input_device(server->backend, WLR_INPUT_DEVICE_KEYBOARD);
	if (!server->keyboard) {
		log_error("cannot create the headless keyboard");
		return false;
	}
	/* A default keymap until the viewer sends the local one. */
	struct xkb_keymap *keymap =
		xkb_keymap_new_from_names(server->xkb, NULL, XKB_KEYMAP_COMPILE_NO_FLAGS);
	if (!keymap) {
		log_error("cannot compile the default keymap (is xkb-data installed?)");
		return false;
	}
	wlr_keyboard_set_keymap(server->keyboard->keyboard, keymap);
	xkb_keymap_unref(keymap);
	wlr_keyboard_set_repeat_info(server->keyboard->keyboard, 25, 600);
	wlr_seat_set_keyboard(server->seat, server->keyboard);
	wlr_seat_set_capabilities(server->seat,
		WL_SEAT_CAPABILITY_POINTER | WL_SEAT_CAPABILITY_KEYBOARD |
			WL_SEAT_CAPABILITY_TOUCH);
	return true;
}

void input_finish(struct rc_server *server)
{
	xkb_context_unref(server->xkb);
	server->xkb = NULL;
}

static void release_all(struct rc_server *server)
{
	uint32_t now = server_time_msec();
	/* No key may stick on the remote side when the viewer leaves. */
	for (uint32_t i = 0; i < server->nkeys_down; i++) {
		wlr_seat_keyboard_notify_key(server->seat, now, server->keys_down[i],
			WL_KEYBOARD_KEY_STATE_RELEASED);
	}
	server->nkeys_down = 0;
	server->buttons_down = 0;
	server->grab_surface = NULL;
	wlr_seat_pointer_notify_clear_focus(server->seat);
	wlr_seat_keyboard_notify_clear_focus(server->seat);
}

static void set_activated(struct rc_window *window, bool activated)
{
	if (window->popup) {
		return;
	}
	if (window->xwayland) {
		xwayland_activate(window, activated);
	} else if (window->xdg_surface->role == WLR_XDG_SURFACE_ROLE_TOPLEVEL) {
		wlr_xdg_toplevel_set_activated(window->xdg_surface, activated);
	}
}

/* Touch points of one window (or of all, window 0) end as a cancelled
 * gesture: the app must not take them as taps. */
static void cancel_touch(struct rc_server *server, uint32_t window)
{
	for (int i = 0; i < WIRE_MAX_TOUCH_POINTS; i++) {
		struct rc_touch_point *p = &server->touch[i];
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

void input_viewer_gone(struct rc_server *server)
{
	release_all(server);
	cancel_touch(server, 0);
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		set_activated(window, false);
	}
}

void input_window_gone(struct rc_server *server, struct rc_window *window)
{
	cancel_touch(server, window->id);
	if (server->pointer_window == window->id) {
		server->pointer_window = 0;
		server->buttons_down = 0;
		server->grab_surface = NULL;
	}
}

static void set_keymap(struct rc_server *server, const struct wire_msg *msg)
{
	struct xkb_keymap *keymap = xkb_keymap_new_from_buffer(server->xkb, msg->keymap.data,
		msg->keymap.size, XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS);
	if (!keymap) {
		log_error("the viewer's keymap does not compile; keeping the previous one");
		return;
	}
	wlr_keyboard_set_keymap(server->keyboard->keyboard, keymap);
	xkb_keymap_unref(keymap);
}

static void track_key(struct rc_server *server, uint32_t key, bool pressed)
{
	for (uint32_t i = 0; i < server->nkeys_down; i++) {
		if (server->keys_down[i] == key) {
			if (!pressed) {
				server->keys_down[i] = server->keys_down[--server->nkeys_down];
			}
			return;
		}
	}
	if (pressed && server->nkeys_down < WIRE_MAX_KEYS) {
		server->keys_down[server->nkeys_down++] = key;
	}
}

static void keyboard_enter(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_window *window = window_from_id(server, msg->keyboard_enter.window);
	if (!window || !window->mapped) {
		return;
	}
	server->nkeys_down = 0;
	uint32_t keys[WIRE_MAX_KEYS];
	for (uint32_t i = 0; i < msg->keyboard_enter.nkeys; i++) {
		keys[i] = wire_get_key(msg->keyboard_enter.keys, i);
		track_key(server, keys[i], true);
	}
	struct rc_window *other;
	wl_list_for_each(other, &server->windows, link)
	{
		if (other != window && other->mapped && other->id != window->parent_id) {
			set_activated(other, false);
		}
	}
	set_activated(window, true);
	/* The local compositor already decided focus, grabs included: enter
	 * directly, past any popup grab of our own seat (which would drop it). */
	wlr_seat_keyboard_enter(server->seat, window_surface(window), keys,
		msg->keyboard_enter.nkeys, &server->keyboard->keyboard->modifiers);
}

static void keyboard_leave(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_window *window = window_from_id(server, msg->keyboard_leave.window);
	if (!window || !window->mapped) {
		return;
	}
	struct wlr_surface *focused = server->seat->keyboard_state.focused_surface;
	if (focused == window_surface(window)) {
		release_all(server);
	}
	set_activated(window, false);
}

static void pointer_motion(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_window *window = window_from_id(server, msg->pointer_motion.window);
	uint32_t now = server_time_msec();
	if (!window || !window->mapped) {
		return;
	}
	double wx = msg->pointer_motion.x / 256.0, wy = msg->pointer_motion.y / 256.0;
	if (server->buttons_down && server->grab_surface && server->pointer_window == window->id) {
		/* Implicit grab: the pressed surface keeps the pointer. */
		wlr_seat_pointer_notify_motion(server->seat, now, wx - server->grab_dx,
			wy - server->grab_dy);
		return;
	}
	server->pointer_window = window->id;
	double sx = wx + window->geometry.x, sy = wy + window->geometry.y;
	double subx = 0, suby = 0;
	/* The window's own tree: its popups are windows of their own. */
	struct wlr_surface *surface =
		wlr_surface_surface_at(window_surface(window), sx, sy, &subx, &suby);
	if (!surface) {
		wlr_seat_pointer_notify_clear_focus(server->seat);
		return;
	}
	server->grab_dx = wx - subx;
	server->grab_dy = wy - suby;
	if (server->seat->pointer_state.focused_surface != surface) {
		wlr_seat_pointer_notify_enter(server->seat, surface, subx, suby);
	}
	wlr_seat_pointer_notify_motion(server->seat, now, subx, suby);
}

static struct rc_touch_point *touch_point(struct rc_server *server, int32_t id)
{
	for (int i = 0; i < WIRE_MAX_TOUCH_POINTS; i++) {
		if (server->touch[i].used && server->touch[i].id == id) {
			return &server->touch[i];
		}
	}
	return NULL;
}

static void touch_down(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_window *window = window_from_id(server, msg->touch.window);
	if (!window || !window->mapped || touch_point(server, msg->touch.id)) {
		return;
	}
	struct rc_touch_point *p = NULL;
	for (int i = 0; i < WIRE_MAX_TOUCH_POINTS && !p; i++) {
		p = server->touch[i].used ? NULL : &server->touch[i];
	}
	double wx = msg->touch.x / 256.0, wy = msg->touch.y / 256.0;
	double subx = 0, suby = 0;
	struct wlr_surface *surface = wlr_surface_surface_at(window_surface(window),
		wx + window->geometry.x, wy + window->geometry.y, &subx, &suby);
	if (!p || !surface) {
		return; /* more fingers than we track, or none on the app */
	}
	/* The point stays with the surface it went down on. */
	*p = (struct rc_touch_point){.used = true,
		.id = msg->touch.id,
		.window = window->id,
		.dx = wx - subx,
		.dy = wy - suby};
	wlr_seat_touch_notify_down(server->seat, surface, server_time_msec(), p->id, subx, suby);
}

static void touch_motion(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_touch_point *p = touch_point(server, msg->touch.id);
	if (p) {
		wlr_seat_touch_notify_motion(server->seat, server_time_msec(), p->id,
			msg->touch.x / 256.0 - p->dx, msg->touch.y / 256.0 - p->dy);
	}
}

static void touch_up(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_touch_point *p = touch_point(server, msg->touch.id);
	if (p) {
		wlr_seat_touch_notify_up(server->seat, server_time_msec(), p->id);
		p->used = false;
	}
}

static void pointer_button(struct rc_server *server, const struct wire_msg *msg)
{
	bool pressed = msg->pointer_button.state == 1;
	if (pressed) {
		if (server->buttons_down == 0) {
			server->grab_surface = server->seat->pointer_state.focused_surface;
		}
		server->buttons_down++;
	} else if (server->buttons_down > 0) {
		server->buttons_down--;
		if (server->buttons_down == 0) {
			server->grab_surface = NULL;
		}
	}
	wlr_seat_pointer_notify_button(server->seat, server_time_msec(), msg->pointer_button.button,
		pressed ? WLR_BUTTON_PRESSED : WLR_BUTTON_RELEASED);
}

static void configure(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_window *window = window_from_id(server, msg->configure.window);
	if (!window || !window->mapped || window->popup) {
		return;
	}
	uint32_t states = msg->configure.states;
	/* The local compositor says which window is active, keyboard or not. */
	set_activated(window, states & WIRE_STATE_ACTIVATED);
	if (window->xwayland) {
		xwayland_configure(window, msg->configure.width, msg->configure.height, states);
		return;
	}
	struct wlr_xdg_surface *xdg = window->xdg_surface;
	wlr_xdg_toplevel_set_maximized(xdg, states & WIRE_STATE_MAXIMIZED);
	wlr_xdg_toplevel_set_fullscreen(xdg, states & WIRE_STATE_FULLSCREEN);
	wlr_xdg_toplevel_set_resizing(xdg, states & WIRE_STATE_RESIZING);
	if (msg->configure.width != window->requested_width ||
		msg->configure.height != window->requested_height) {
		window->requested_width = msg->configure.width;
		window->requested_height = msg->configure.height;
		wlr_xdg_toplevel_set_size(xdg, (uint32_t)msg->configure.width,
			(uint32_t)msg->configure.height);
	}
}

void input_handle_message(struct rc_server *server, const struct wire_msg *msg)
{
	struct wlr_keyboard *kbd = server->keyboard->keyboard;
	switch (msg->type) {
	case WIRE_KEYMAP:
		set_keymap(server, msg);
		break;
	case WIRE_REPEAT_INFO:
		wlr_keyboard_set_repeat_info(kbd, msg->repeat_info.rate, msg->repeat_info.delay);
		break;
	case WIRE_KEYBOARD_ENTER:
		keyboard_enter(server, msg);
		break;
	case WIRE_KEYBOARD_LEAVE:
		keyboard_leave(server, msg);
		break;
	case WIRE_KEY:
		if (!server->seat->keyboard_state.focused_surface) {
			break;
		}
		track_key(server, msg->key.key, msg->key.state == 1);
		wlr_seat_keyboard_notify_key(server->seat, server_time_msec(), msg->key.key,
			msg->key.state ? WL_KEYBOARD_KEY_STATE_PRESSED
				       : WL_KEYBOARD_KEY_STATE_RELEASED);
		break;
	case WIRE_MODIFIERS:
		wlr_keyboard_notify_modifiers(kbd, msg->modifiers.depressed, msg->modifiers.latched,
			msg->modifiers.locked, msg->modifiers.group);
		wlr_seat_keyboard_notify_modifiers(server->seat, &kbd->modifiers);
		break;
	case WIRE_POINTER_MOTION:
		pointer_motion(server, msg);
		break;
	case WIRE_POINTER_LEAVE:
		if (server->buttons_down == 0 &&
			server->pointer_window == msg->pointer_leave.window) {
			server->pointer_window = 0;
			wlr_seat_pointer_notify_clear_focus(server->seat);
		}
		break;
	case WIRE_POINTER_BUTTON:
		pointer_button(server, msg);
		break;
	case WIRE_POINTER_AXIS:
		wlr_seat_pointer_notify_axis(server->seat, server_time_msec(),
			(enum wlr_axis_orientation)msg->pointer_axis.axis,
			msg->pointer_axis.value / 256.0, msg->pointer_axis.discrete,
			(enum wlr_axis_source)msg->pointer_axis.source);
		break;
	case WIRE_POINTER_FRAME:
		wlr_seat_pointer_notify_frame(server->seat);
		break;
	case WIRE_TOUCH_DOWN:
		touch_down(server, msg);
		break;
	case WIRE_TOUCH_MOTION:
		touch_motion(server, msg);
		break;
	case WIRE_TOUCH_UP:
		touch_up(server, msg);
		break;
	case WIRE_TOUCH_FRAME:
		wlr_seat_touch_notify_frame(server->seat);
		break;
	case WIRE_TOUCH_CANCEL:
		cancel_touch(server, 0);
		break;
	case WIRE_CONFIGURE:
		configure(server, msg);
		break;
	case WIRE_CLOSE: {
		struct rc_window *window = window_from_id(server, msg->close.window);
		if (window && window->mapped && !window->popup) {
			if (window->xwayland) {
				xwayland_close(window);
			} else {
				wlr_xdg_toplevel_send_close(window->xdg_surface);
			}
		}
		break;
	}
	case WIRE_POPUP_DONE: {
		/* Dismissed locally (a click outside): dismiss it here too. */
		struct rc_window *window = window_from_id(server, msg->popup_done.window);
		/* X11 menus close themselves, on the click that dismissed them. */
		if (window && window->popup && !window->xwayland) {
			wlr_xdg_popup_destroy(window->xdg_surface);
		}
		break;
	}
	default:
		break;
	}
}
