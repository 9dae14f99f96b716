/*
 * A test app: a 400x300 toplevel with a 100x100 subsurface at (100,100). It
 * prints every pointer and keyboard event it receives, naming the surface
 * and the surface-local position, so tests can check where input landed. A
 * left click on the main surface toggles its colour. argv[1] optionally sets
 * its title and app_id.
 *
 * A press of the back button (BTN_SIDE) on the main surface asks for an
 * interactive resize from the bottom-right corner, as a resize grip an app
 * draws does, and prints "resize-asked"; configures print "configure W H".
 *
 * A right click opens a 120x80 blue popup with a grab, its top-left corner at
 * the pointer; a right click in a popup opens a nested 100x60 orange one.
 * A middle click (or Escape) closes the topmost popup from the app's side. Popups print
 * "popup-open N", "popup-done N" (dismissed by the compositor) and
 * "popup-closed N" (closed by the app).
 *
 * Touch prints "touch-down ID SURFACE X Y", "touch-motion ID X Y",
 * "touch-up ID", "touch-frame" and "touch-cancel".
 *
 * Keys print "key CODE pressed|released" and, for a press, "keysym NAME":
 * what the key types under the keymap and modifiers the compositor sent.
 *
 * Where the compositor offers relative-pointer-unstable-v1, relative motion
 * prints "relative DX DY unaccel DX DY". Where it offers pointer
 * constraints, the L key locks the pointer over the main surface (cursor
 * hint 10,20), the C key confines it there, and the U key ends either; the
 * compositor's answers print "locked", "unlocked", "confined" and
 * "unconfined". The I key asks that the desktop's shortcuts reach the app
 * (keyboard-shortcuts-inhibit) and O withdraws that; the answers print
 * "inhibit-active" and "inhibit-inactive".
 *
 * Where it offers text-input-unstable-v3, the app takes text from input
 * methods while it has keyboard focus: surrounding text "hello world" with
 * the caret after "hello", content hint spellcheck (2) and purpose email (6),
 * and its caret at 30,40 2x16 on the main surface. It prints "ti-enter",
 * "ti-leave", "ti-preedit TEXT|BEGIN|END", "ti-commit TEXT",
 * "ti-delete BEFORE AFTER" and "ti-done".
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>
#include <xkbcommon/xkbcommon.h>

#include "keyboard-shortcuts-inhibit-unstable-v1-client-protocol.h"
#include "pointer-constraints-unstable-v1-client-protocol.h"
#include "pointer-gestures-unstable-v1-client-protocol.h"
#include "tablet-unstable-v2-client-protocol.h"
#include "relative-pointer-unstable-v1-client-protocol.h"
#include "text-input-unstable-v3-client-protocol.h"
#include "xdg-shell-client-protocol.h"

struct app {
	struct wl_compositor *compositor;
	struct wl_subcompositor *subcompositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct wl_seat *seat;
	struct wl_display *display;
	struct xdg_surface *xdg_surface;
	struct xdg_toplevel *toplevel;
	struct wl_surface *main, *sub;
	struct wl_surface *pointer_surface;
	struct wl_pointer *pointer;
	struct zwp_relative_pointer_manager_v1 *relative_manager;
	struct zwp_relative_pointer_v1 *relative;
	struct zwp_pointer_gestures_v1 *gestures;
	uint32_t gestures_version;
	struct zwp_pointer_gesture_swipe_v1 *swipe;
	struct zwp_pointer_gesture_pinch_v1 *pinch;
	struct zwp_pointer_gesture_hold_v1 *hold;
	struct zwp_tablet_manager_v2 *tablet_manager;
	struct zwp_tablet_seat_v2 *tablet_seat;
	struct zwp_tablet_v2 *tablets[4];
	struct zwp_tablet_tool_v2 *tools[8];
	uint32_t tool_types[8];
	struct zwp_pointer_constraints_v1 *constraints;
	struct zwp_locked_pointer_v1 *lock;
	struct zwp_confined_pointer_v1 *confine;
	struct zwp_keyboard_shortcuts_inhibit_manager_v1 *inhibit_manager;
	struct zwp_keyboard_shortcuts_inhibitor_v1 *inhibitor;
	struct zwp_text_input_manager_v3 *text_input_manager;
	struct zwp_text_input_v3 *text_input;
	struct wl_keyboard *keyboard;
	struct wl_touch *touch;
	struct xkb_context *xkb;
	struct xkb_keymap *keymap;
	struct xkb_state *xkb_state;
	int width, height;
	uint32_t colour;
	bool configured, running;
	double px, py; /* the pointer, surface-local */
	struct popup {
		struct wl_surface *surface;
		struct xdg_surface *xdg_surface;
		struct xdg_popup *xdg_popup;
		int width, height;
		uint32_t colour;
		bool configured;
	} popups[4];
	int npopups;
};

static void close_popups_from(struct app *app, int first, const char *why);

static const char *surface_name(struct app *app, struct wl_surface *surface)
{
	static const char *const names[] = {"popup0", "popup1", "popup2", "popup3"};
	for (int i = 0; i < app->npopups; i++) {
		if (surface == app->popups[i].surface) {
			return names[i];
		}
	}
	return surface == app->main ? "main" : surface == app->sub ? "sub" : "other";
}

/* Buffers not yet released, destroyed at exit. */
static struct wl_buffer *live_buffers[16];

static void buffer_release(void *data, struct wl_buffer *buffer)
{
	for (int i = 0; i < 16; i++) {
		if (live_buffers[i] == buffer) {
			live_buffers[i] = NULL;
		}
	}
	wl_buffer_destroy(buffer);
}

static const struct wl_buffer_listener buffer_listener = {.release = buffer_release};

static void fill(struct app *app, struct wl_surface *surface, int w, int h, uint32_t colour)
{
	size_t size = (size_t)w * h * 4;
	int fd = memfd_create("input-client", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		perror("input-client: buffer");
		exit(1);
	}
	uint32_t *data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	for (size_t i = 0; i < (size_t)w * h; i++) {
		data[i] = colour;
	}
	munmap(data, size);
	struct wl_shm_pool *pool = wl_shm_create_pool(app->shm, fd, (int32_t)size);
	struct wl_buffer *buffer =
		wl_shm_pool_create_buffer(pool, 0, w, h, w * 4, WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	wl_buffer_add_listener(buffer, &buffer_listener, NULL);
	for (int i = 0; i < 16; i++) {
		if (!live_buffers[i]) {
			live_buffers[i] = buffer;
			break;
		}
	}
	wl_surface_attach(surface, buffer, 0, 0);
	wl_surface_damage_buffer(surface, 0, 0, w, h);
}

static void pointer_enter(void *data, struct wl_pointer *p, uint32_t serial,
	struct wl_surface *surface, wl_fixed_t x, wl_fixed_t y)
{
	struct app *app = data;
	app->pointer_surface = surface;
	app->px = wl_fixed_to_double(x);
	app->py = wl_fixed_to_double(y);
	printf("enter %s %.2f %.2f\n", surface_name(app, surface), wl_fixed_to_double(x),
		wl_fixed_to_double(y));
}

static void pointer_leave(void *data, struct wl_pointer *p, uint32_t serial,
	struct wl_surface *surface)
{
	struct app *app = data;
	printf("leave %s\n", surface_name(app, surface));
	app->pointer_surface = NULL;
}

static void pointer_motion(void *data, struct wl_pointer *p, uint32_t time, wl_fixed_t x,
	wl_fixed_t y)
{
	struct app *app = data;
	app->px = wl_fixed_to_double(x);
	app->py = wl_fixed_to_double(y);
	printf("motion %s %.2f %.2f\n", surface_name(app, app->pointer_surface),
		wl_fixed_to_double(x), wl_fixed_to_double(y));
}

static void popup_xdg_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
	struct popup *popup = data;
	xdg_surface_ack_configure(xdg_surface, serial);
	popup->configured = true;
}

static const struct xdg_surface_listener popup_surface_listener = {
	.configure = popup_xdg_configure,
};

static void popup_configure(void *data, struct xdg_popup *xdg_popup, int32_t x, int32_t y,
	int32_t w, int32_t h)
{
}

static struct app *the_app;

static void popup_done(void *data, struct xdg_popup *xdg_popup)
{
	struct app *app = the_app;
	for (int i = 0; i < app->npopups; i++) {
		if (app->popups[i].xdg_popup == xdg_popup) {
			close_popups_from(app, i, "done");
			return;
		}
	}
}

static void popup_repositioned(void *data, struct xdg_popup *xdg_popup, uint32_t token)
{
}

static const struct xdg_popup_listener popup_listener = {
	.configure = popup_configure,
	.popup_done = popup_done,
	.repositioned = popup_repositioned,
};

/* Topmost first, as xdg-shell demands. */
static void close_popups_from(struct app *app, int first, const char *why)
{
	while (app->npopups > first) {
		struct popup *popup = &app->popups[--app->npopups];
		printf("popup-%s %d\n", why, app->npopups);
		if (app->pointer_surface == popup->surface) {
			app->pointer_surface = NULL;
		}
		xdg_popup_destroy(popup->xdg_popup);
		xdg_surface_destroy(popup->xdg_surface);
		wl_surface_destroy(popup->surface);
		memset(popup, 0, sizeof(*popup));
	}
	fflush(stdout);
}

static void open_popup(struct app *app, uint32_t serial)
{
	struct xdg_surface *parent = NULL;
	int depth = -1;
	if (app->pointer_surface == app->main) {
		close_popups_from(app, 0, "closed");
		parent = app->xdg_surface;
	}
	for (int i = 0; i < app->npopups; i++) {
		if (app->pointer_surface == app->popups[i].surface) {
			depth = i;
		}
	}
	if (depth >= 0 && depth + 1 < 4) {
		close_popups_from(app, depth + 1, "closed");
		parent = app->popups[depth].xdg_surface;
	}
	if (!parent) {
		return;
	}
	struct popup *popup = &app->popups[app->npopups];
	bool nested = app->npopups > 0;
	popup->width = nested ? 100 : 120;
	popup->height = nested ? 60 : 80;
	popup->colour = nested ? 0xffe08020 : 0xff2040e0;
	struct xdg_positioner *pos = xdg_wm_base_create_positioner(app->wm_base);
	xdg_positioner_set_size(pos, popup->width, popup->height);
	xdg_positioner_set_anchor_rect(pos, (int32_t)app->px, (int32_t)app->py, 1, 1);
	xdg_positioner_set_anchor(pos, XDG_POSITIONER_ANCHOR_TOP_LEFT);
	xdg_positioner_set_gravity(pos, XDG_POSITIONER_GRAVITY_BOTTOM_RIGHT);
	popup->surface = wl_compositor_create_surface(app->compositor);
	popup->xdg_surface = xdg_wm_base_get_xdg_surface(app->wm_base, popup->surface);
	xdg_surface_add_listener(popup->xdg_surface, &popup_surface_listener, popup);
	popup->xdg_popup = xdg_surface_get_popup(popup->xdg_surface, parent, pos);
	xdg_positioner_destroy(pos);
	xdg_popup_add_listener(popup->xdg_popup, &popup_listener, popup);
	xdg_popup_grab(popup->xdg_popup, app->seat, serial);
	wl_surface_commit(popup->surface);
	app->npopups++;
	while (!popup->configured && wl_display_roundtrip(app->display) >= 0 && popup->xdg_popup) {
	}
	if (!popup->xdg_popup) {
		return; /* dismissed at once */
	}
	fill(app, popup->surface, popup->width, popup->height, popup->colour);
	wl_surface_commit(popup->surface);
	printf("popup-open %d\n", app->npopups - 1);
	fflush(stdout);
}

static void pointer_button(void *data, struct wl_pointer *p, uint32_t serial, uint32_t time,
	uint32_t button, uint32_t state)
{
	struct app *app = data;
	printf("button %s %u %s\n", surface_name(app, app->pointer_surface), button,
		state ? "pressed" : "released");
	if (state && button == 0x111 /* BTN_RIGHT */) {
		open_popup(app, serial);
		return;
	}
	if (state && button == 0x113 /* BTN_SIDE */ && app->pointer_surface == app->main) {
		xdg_toplevel_resize(app->toplevel, app->seat, serial,
			XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_RIGHT);
		printf("resize-asked\n");
		return;
	}
	if (state && button == 0x112 /* BTN_MIDDLE */ && app->npopups > 0) {
		close_popups_from(app, app->npopups - 1, "closed");
		return;
	}
	if (state && app->pointer_surface == app->main) {
		app->colour = app->colour == 0xff404040 ? 0xffc03030 : 0xff404040;
		fill(app, app->main, app->width, app->height, app->colour);
		wl_surface_commit(app->main);
	}
}

static void pointer_axis(void *data, struct wl_pointer *p, uint32_t time, uint32_t axis,
	wl_fixed_t value)
{
	printf("axis %u %.2f\n", axis, wl_fixed_to_double(value));
}

static void pointer_frame(void *data, struct wl_pointer *p)
{
	fflush(stdout);
}

static void pointer_axis_source(void *data, struct wl_pointer *p, uint32_t source)
{
}

static void pointer_axis_stop(void *data, struct wl_pointer *p, uint32_t time, uint32_t axis)
{
}

static void pointer_axis_discrete(void *data, struct wl_pointer *p, uint32_t axis, int32_t d)
{
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

static void keyboard_keymap(void *data, struct wl_keyboard *k, uint32_t format, int32_t fd,
	uint32_t size)
{
	struct app *app = data;
	printf("keymap %u bytes\n", size);
	fflush(stdout);
	char *text = format == WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1
		? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0)
		: MAP_FAILED;
	close(fd);
	if (text == MAP_FAILED) {
		return;
	}
	struct xkb_keymap *keymap = xkb_keymap_new_from_buffer(app->xkb, text, strnlen(text, size),
		XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS);
	munmap(text, size);
	if (!keymap) {
		printf("keymap-invalid\n");
		return;
	}
	xkb_state_unref(app->xkb_state);
	xkb_keymap_unref(app->keymap);
	app->keymap = keymap;
	app->xkb_state = xkb_state_new(keymap);
}

static void keyboard_enter(void *data, struct wl_keyboard *k, uint32_t serial,
	struct wl_surface *surface, struct wl_array *keys)
{
	struct app *app = data;
	/* The keys the compositor says are already held. */
	printf("key-enter %s held:", surface_name(app, surface));
	uint32_t *key;
	wl_array_for_each(key, keys)
	{
		printf(" %u", *key);
	}
	printf("\n");
	fflush(stdout);
}

static void keyboard_leave(void *data, struct wl_keyboard *k, uint32_t serial,
	struct wl_surface *surface)
{
	printf("key-leave\n");
	fflush(stdout);
}

static void ti_enter(void *data, struct zwp_text_input_v3 *ti, struct wl_surface *surface)
{
	printf("ti-enter\n");
	fflush(stdout);
	zwp_text_input_v3_enable(ti);
	zwp_text_input_v3_set_surrounding_text(ti, "hello world", 5, 5);
	zwp_text_input_v3_set_text_change_cause(ti, ZWP_TEXT_INPUT_V3_CHANGE_CAUSE_OTHER);
	zwp_text_input_v3_set_content_type(ti, ZWP_TEXT_INPUT_V3_CONTENT_HINT_SPELLCHECK,
		ZWP_TEXT_INPUT_V3_CONTENT_PURPOSE_EMAIL);
	zwp_text_input_v3_set_cursor_rectangle(ti, 30, 40, 2, 16);
	zwp_text_input_v3_commit(ti);
}

static void ti_leave(void *data, struct zwp_text_input_v3 *ti, struct wl_surface *surface)
{
	printf("ti-leave\n");
	fflush(stdout);
	zwp_text_input_v3_disable(ti);
	zwp_text_input_v3_commit(ti);
}

static void ti_preedit(void *data, struct zwp_text_input_v3 *ti, const char *text, int32_t begin,
	int32_t end)
{
	printf("ti-preedit %s|%d|%d\n", text ? text : "", begin, end);
	fflush(stdout);
}

static void ti_commit(void *data, struct zwp_text_input_v3 *ti, const char *text)
{
	printf("ti-commit %s\n", text ? text : "");
	fflush(stdout);
}

static void ti_delete(void *data, struct zwp_text_input_v3 *ti, uint32_t before, uint32_t after)
{
	printf("ti-delete %u %u\n", before, after);
	fflush(stdout);
}

static void ti_done(void *data, struct zwp_text_input_v3 *ti, uint32_t serial)
{
	printf("ti-done\n");
	fflush(stdout);
}

static const struct zwp_text_input_v3_listener text_input_listener = {
	.enter = ti_enter,
	.leave = ti_leave,
	.preedit_string = ti_preedit,
	.commit_string = ti_commit,
	.delete_surrounding_text = ti_delete,
	.done = ti_done,
};

static void say(const char *what)
{
	printf("%s\n", what);
	fflush(stdout);
}

static void on_locked(void *data, struct zwp_locked_pointer_v1 *l)
{
	say("locked");
}

static void on_unlocked(void *data, struct zwp_locked_pointer_v1 *l)
{
	say("unlocked");
}

static const struct zwp_locked_pointer_v1_listener lock_listener = {on_locked, on_unlocked};

static void on_confined(void *data, struct zwp_confined_pointer_v1 *c)
{
	say("confined");
}

static void on_unconfined(void *data, struct zwp_confined_pointer_v1 *c)
{
	say("unconfined");
}

static const struct zwp_confined_pointer_v1_listener confine_listener = {on_confined,
	on_unconfined};

static void on_inhibit_active(void *data, struct zwp_keyboard_shortcuts_inhibitor_v1 *i)
{
	say("inhibit-active");
}

static void on_inhibit_inactive(void *data, struct zwp_keyboard_shortcuts_inhibitor_v1 *i)
{
	say("inhibit-inactive");
}

static const struct zwp_keyboard_shortcuts_inhibitor_v1_listener inhibit_listener =
	{on_inhibit_active, on_inhibit_inactive};

/* L locks, C confines, U ends either; I inhibits shortcuts, O stops. */
static void constrain(struct app *app, uint32_t key)
{
	if (key == 23 /* KEY_I */ && app->inhibit_manager && !app->inhibitor) {
		app->inhibitor = zwp_keyboard_shortcuts_inhibit_manager_v1_inhibit_shortcuts(
			app->inhibit_manager, app->main, app->seat);
		zwp_keyboard_shortcuts_inhibitor_v1_add_listener(app->inhibitor, &inhibit_listener,
			app);
		return;
	}
	if (key == 24 /* KEY_O */ && app->inhibitor) {
		zwp_keyboard_shortcuts_inhibitor_v1_destroy(app->inhibitor);
		app->inhibitor = NULL;
		return;
	}
	if (!app->constraints || !app->pointer) {
		return;
	}
	if (key == 22 /* KEY_U */) {
		if (app->lock) {
			zwp_locked_pointer_v1_destroy(app->lock);
			app->lock = NULL;
		}
		if (app->confine) {
			zwp_confined_pointer_v1_destroy(app->confine);
			app->confine = NULL;
		}
	} else if (key == 38 /* KEY_L */ && !app->lock && !app->confine) {
		app->lock = zwp_pointer_constraints_v1_lock_pointer(app->constraints, app->main,
			app->pointer, NULL, ZWP_POINTER_CONSTRAINTS_V1_LIFETIME_PERSISTENT);
		zwp_locked_pointer_v1_add_listener(app->lock, &lock_listener, app);
		zwp_locked_pointer_v1_set_cursor_position_hint(app->lock, wl_fixed_from_int(10),
			wl_fixed_from_int(20));
		wl_surface_commit(app->main);
	} else if (key == 46 /* KEY_C */ && !app->lock && !app->confine) {
		app->confine =
			zwp_pointer_constraints_v1_confine_pointer(app->constraints, app->main,
				app->pointer, NULL, ZWP_POINTER_CONSTRAINTS_V1_LIFETIME_PERSISTENT);
		zwp_confined_pointer_v1_add_listener(app->confine, &confine_listener, app);
	}
}

static void keyboard_key(void *data, struct wl_keyboard *k, uint32_t serial, uint32_t time,
	uint32_t key, uint32_t state)
{
	struct app *app = data;
	printf("key %u %s\n", key, state ? "pressed" : "released");
	if (state && app->xkb_state) {
		/* What the key types under the keymap and modifiers we were given. */
		char name[64];
		xkb_keysym_t sym = xkb_state_key_get_one_sym(app->xkb_state, key + 8);
		xkb_keysym_get_name(sym, name, sizeof(name));
		printf("keysym %s\n", name);
	}
	fflush(stdout);
	if (state && key == 1 /* KEY_ESC */ && app->npopups > 0) {
		close_popups_from(app, app->npopups - 1, "closed");
	}
	if (state) {
		constrain(app, key);
	}
}

static void keyboard_modifiers(void *data, struct wl_keyboard *k, uint32_t serial,
	uint32_t depressed, uint32_t latched, uint32_t locked, uint32_t group)
{
	struct app *app = data;
	if (app->xkb_state) {
		xkb_state_update_mask(app->xkb_state, depressed, latched, locked, 0, 0, group);
	}
	printf("modifiers %u %u %u %u\n", depressed, latched, locked, group);
	fflush(stdout);
}

static void keyboard_repeat_info(void *data, struct wl_keyboard *k, int32_t rate, int32_t delay)
{
	printf("repeat %d %d\n", rate, delay);
	fflush(stdout);
}

static const struct wl_keyboard_listener keyboard_listener = {
	.keymap = keyboard_keymap,
	.enter = keyboard_enter,
	.leave = keyboard_leave,
	.key = keyboard_key,
	.modifiers = keyboard_modifiers,
	.repeat_info = keyboard_repeat_info,
};

static void touch_down(void *data, struct wl_touch *touch, uint32_t serial, uint32_t time,
	struct wl_surface *surface, int32_t id, wl_fixed_t x, wl_fixed_t y)
{
	printf("touch-down %d %s %.2f %.2f\n", id, surface_name(data, surface),
		wl_fixed_to_double(x), wl_fixed_to_double(y));
}

static void touch_up(void *data, struct wl_touch *touch, uint32_t serial, uint32_t time, int32_t id)
{
	printf("touch-up %d\n", id);
}

static void touch_motion(void *data, struct wl_touch *touch, uint32_t time, int32_t id,
	wl_fixed_t x, wl_fixed_t y)
{
	printf("touch-motion %d %.2f %.2f\n", id, wl_fixed_to_double(x), wl_fixed_to_double(y));
}

static void touch_frame(void *data, struct wl_touch *touch)
{
	printf("touch-frame\n");
}

static void touch_cancel(void *data, struct wl_touch *touch)
{
	printf("touch-cancel\n");
}

static const struct wl_touch_listener touch_listener = {
	.down = touch_down,
	.up = touch_up,
	.motion = touch_motion,
	.frame = touch_frame,
	.cancel = touch_cancel,
};

static void relative_motion(void *data, struct zwp_relative_pointer_v1 *relative, uint32_t utime_hi,
	uint32_t utime_lo, wl_fixed_t dx, wl_fixed_t dy, wl_fixed_t dx_unaccel,
	wl_fixed_t dy_unaccel)
{
	printf("relative %.2f %.2f unaccel %.2f %.2f\n", wl_fixed_to_double(dx),
		wl_fixed_to_double(dy), wl_fixed_to_double(dx_unaccel),
		wl_fixed_to_double(dy_unaccel));
}

static const struct zwp_relative_pointer_v1_listener relative_listener = {
	.relative_motion = relative_motion,
};

static void want_relative(struct app *app)
{
	if (app->relative_manager && app->pointer && !app->relative) {
		app->relative =
			zwp_relative_pointer_manager_v1_get_relative_pointer(app->relative_manager,
				app->pointer);
		zwp_relative_pointer_v1_add_listener(app->relative, &relative_listener, app);
	}
}

/* A touchpad's gestures, printed as they come. */
static void swipe_begin(void *data, struct zwp_pointer_gesture_swipe_v1 *g, uint32_t serial,
	uint32_t time, struct wl_surface *surface, uint32_t fingers)
{
	printf("gesture swipe begin %u\n", fingers);
}

static void swipe_update(void *data, struct zwp_pointer_gesture_swipe_v1 *g, uint32_t time,
	wl_fixed_t dx, wl_fixed_t dy)
{
	printf("gesture swipe update %.2f %.2f\n", wl_fixed_to_double(dx), wl_fixed_to_double(dy));
}

static void swipe_end(void *data, struct zwp_pointer_gesture_swipe_v1 *g, uint32_t serial,
	uint32_t time, int32_t cancelled)
{
	printf("gesture swipe end %d\n", cancelled);
}

static const struct zwp_pointer_gesture_swipe_v1_listener swipe_listener = {
	.begin = swipe_begin,
	.update = swipe_update,
	.end = swipe_end,
};

static void pinch_begin(void *data, struct zwp_pointer_gesture_pinch_v1 *g, uint32_t serial,
	uint32_t time, struct wl_surface *surface, uint32_t fingers)
{
	printf("gesture pinch begin %u\n", fingers);
}

static void pinch_update(void *data, struct zwp_pointer_gesture_pinch_v1 *g, uint32_t time,
	wl_fixed_t dx, wl_fixed_t dy, wl_fixed_t scale, wl_fixed_t rotation)
{
	printf("gesture pinch update %.2f %.2f scale %.3f rotation %.2f\n", wl_fixed_to_double(dx),
		wl_fixed_to_double(dy), wl_fixed_to_double(scale), wl_fixed_to_double(rotation));
}

static void pinch_end(void *data, struct zwp_pointer_gesture_pinch_v1 *g, uint32_t serial,
	uint32_t time, int32_t cancelled)
{
	printf("gesture pinch end %d\n", cancelled);
}

static const struct zwp_pointer_gesture_pinch_v1_listener pinch_listener = {
	.begin = pinch_begin,
	.update = pinch_update,
	.end = pinch_end,
};

static void hold_begin(void *data, struct zwp_pointer_gesture_hold_v1 *g, uint32_t serial,
	uint32_t time, struct wl_surface *surface, uint32_t fingers)
{
	printf("gesture hold begin %u\n", fingers);
}

static void hold_end(void *data, struct zwp_pointer_gesture_hold_v1 *g, uint32_t serial,
	uint32_t time, int32_t cancelled)
{
	printf("gesture hold end %d\n", cancelled);
}

static const struct zwp_pointer_gesture_hold_v1_listener hold_listener = {
	.begin = hold_begin,
	.end = hold_end,
};

/* A tablet's tools, printed as they come: "tablet ..." lines. */
static int tool_index(struct app *app, struct zwp_tablet_tool_v2 *tool)
{
	for (int i = 0; i < 8; i++) {
		if (app->tools[i] == tool) {
			return i;
		}
	}
	return 0;
}

static void tool_type(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t type)
{
	struct app *app = data;
	app->tool_types[tool_index(app, tool)] = type;
}

static void tool_serial(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t hi, uint32_t lo)
{
	printf("tablet tool serial %llu\n", (unsigned long long)hi << 32 | lo);
}

static void tool_id_wacom(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t hi, uint32_t lo)
{
}

static void tool_capability(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t capability)
{
	printf("tablet tool capability %u\n", capability);
}

static void tool_done(void *data, struct zwp_tablet_tool_v2 *tool)
{
	struct app *app = data;
	printf("tablet tool 0x%x\n", app->tool_types[tool_index(app, tool)]);
}

static void tool_removed(void *data, struct zwp_tablet_tool_v2 *tool)
{
	struct app *app = data;
	printf("tablet tool removed\n");
	app->tools[tool_index(app, tool)] = NULL;
	zwp_tablet_tool_v2_destroy(tool);
}

static void tool_proximity_in(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t serial,
	struct zwp_tablet_v2 *tablet, struct wl_surface *surface)
{
	printf("tablet in %s\n", surface_name(data, surface));
}

static void tool_proximity_out(void *data, struct zwp_tablet_tool_v2 *tool)
{
	printf("tablet out\n");
}

static void tool_down(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t serial)
{
	printf("tablet down\n");
}

static void tool_up(void *data, struct zwp_tablet_tool_v2 *tool)
{
	printf("tablet up\n");
}

static void tool_motion(void *data, struct zwp_tablet_tool_v2 *tool, wl_fixed_t x, wl_fixed_t y)
{
	printf("tablet motion %.2f %.2f\n", wl_fixed_to_double(x), wl_fixed_to_double(y));
}

static void tool_pressure(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t pressure)
{
	printf("tablet pressure %u\n", pressure);
}

static void tool_distance(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t distance)
{
	printf("tablet distance %u\n", distance);
}

static void tool_tilt(void *data, struct zwp_tablet_tool_v2 *tool, wl_fixed_t x, wl_fixed_t y)
{
	printf("tablet tilt %.2f %.2f\n", wl_fixed_to_double(x), wl_fixed_to_double(y));
}

static void tool_rotation(void *data, struct zwp_tablet_tool_v2 *tool, wl_fixed_t degrees)
{
	printf("tablet rotation %.2f\n", wl_fixed_to_double(degrees));
}

static void tool_slider(void *data, struct zwp_tablet_tool_v2 *tool, int32_t position)
{
	printf("tablet slider %d\n", position);
}

static void tool_wheel(void *data, struct zwp_tablet_tool_v2 *tool, wl_fixed_t degrees,
	int32_t clicks)
{
	printf("tablet wheel %.2f %d\n", wl_fixed_to_double(degrees), clicks);
}

static void tool_button(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t serial,
	uint32_t button, uint32_t state)
{
	printf("tablet button 0x%x %u\n", button, state);
}

static void tool_frame(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t time)
{
	printf("tablet frame\n");
}

static const struct zwp_tablet_tool_v2_listener tool_listener = {
	.type = tool_type,
	.hardware_serial = tool_serial,
	.hardware_id_wacom = tool_id_wacom,
	.capability = tool_capability,
	.done = tool_done,
	.removed = tool_removed,
	.proximity_in = tool_proximity_in,
	.proximity_out = tool_proximity_out,
	.down = tool_down,
	.up = tool_up,
	.motion = tool_motion,
	.pressure = tool_pressure,
	.distance = tool_distance,
	.tilt = tool_tilt,
	.rotation = tool_rotation,
	.slider = tool_slider,
	.wheel = tool_wheel,
	.button = tool_button,
	.frame = tool_frame,
};

static void tablet_name(void *data, struct zwp_tablet_v2 *tablet, const char *name)
{
}

static void tablet_id(void *data, struct zwp_tablet_v2 *tablet, uint32_t vid, uint32_t pid)
{
}

static void tablet_path(void *data, struct zwp_tablet_v2 *tablet, const char *path)
{
}

static void tablet_done(void *data, struct zwp_tablet_v2 *tablet)
{
	printf("tablet added\n");
}

static void tablet_removed(void *data, struct zwp_tablet_v2 *tablet)
{
	struct app *app = data;
	for (int i = 0; i < 4; i++) {
		if (app->tablets[i] == tablet) {
			app->tablets[i] = NULL;
		}
	}
	zwp_tablet_v2_destroy(tablet);
}

static const struct zwp_tablet_v2_listener tablet_listener = {
	.name = tablet_name,
	.id = tablet_id,
	.path = tablet_path,
	.done = tablet_done,
	.removed = tablet_removed,
};

static void seat_tablet_added(void *data, struct zwp_tablet_seat_v2 *seat,
	struct zwp_tablet_v2 *tablet)
{
	struct app *app = data;
	for (int i = 0; i < 4; i++) {
		if (!app->tablets[i]) {
			app->tablets[i] = tablet;
			zwp_tablet_v2_add_listener(tablet, &tablet_listener, app);
			return;
		}
	}
	zwp_tablet_v2_destroy(tablet);
}

static void seat_tool_added(void *data, struct zwp_tablet_seat_v2 *seat,
	struct zwp_tablet_tool_v2 *tool)
{
	struct app *app = data;
	for (int i = 0; i < 8; i++) {
		if (!app->tools[i]) {
			app->tools[i] = tool;
			app->tool_types[i] = 0;
			zwp_tablet_tool_v2_add_listener(tool, &tool_listener, app);
			return;
		}
	}
	zwp_tablet_tool_v2_destroy(tool);
}

/* A tablet's pad, printed as it comes: "pad ..." lines. */
static void ring_source(void *data, struct zwp_tablet_pad_ring_v2 *ring, uint32_t source)
{
	printf("pad ring %u source %u\n", (unsigned)(uintptr_t)data, source);
}

static void ring_angle(void *data, struct zwp_tablet_pad_ring_v2 *ring, wl_fixed_t degrees)
{
	printf("pad ring %u angle %.2f\n", (unsigned)(uintptr_t)data, wl_fixed_to_double(degrees));
}

static void ring_stop(void *data, struct zwp_tablet_pad_ring_v2 *ring)
{
	printf("pad ring %u stop\n", (unsigned)(uintptr_t)data);
}

static void ring_frame(void *data, struct zwp_tablet_pad_ring_v2 *ring, uint32_t time)
{
	printf("pad ring frame\n");
}

static const struct zwp_tablet_pad_ring_v2_listener ring_listener = {
	.source = ring_source,
	.angle = ring_angle,
	.stop = ring_stop,
	.frame = ring_frame,
};

static void strip_source(void *data, struct zwp_tablet_pad_strip_v2 *strip, uint32_t source)
{
	printf("pad strip %u source %u\n", (unsigned)(uintptr_t)data, source);
}

static void strip_position(void *data, struct zwp_tablet_pad_strip_v2 *strip, uint32_t position)
{
	printf("pad strip %u position %u\n", (unsigned)(uintptr_t)data, position);
}

static void strip_stop(void *data, struct zwp_tablet_pad_strip_v2 *strip)
{
	printf("pad strip %u stop\n", (unsigned)(uintptr_t)data);
}

static void strip_frame(void *data, struct zwp_tablet_pad_strip_v2 *strip, uint32_t time)
{
	printf("pad strip frame\n");
}

static const struct zwp_tablet_pad_strip_v2_listener strip_listener = {
	.source = strip_source,
	.position = strip_position,
	.stop = strip_stop,
	.frame = strip_frame,
};

/* Rings and strips are numbered in the order they come, over all groups. */
static unsigned pad_rings, pad_strips;

static void group_buttons(void *data, struct zwp_tablet_pad_group_v2 *group,
	struct wl_array *buttons)
{
	printf("pad group %u buttons", (unsigned)(uintptr_t)data);
	uint32_t *b;
	wl_array_for_each(b, buttons)
	{
		printf(" %u", *b);
	}
	printf("\n");
}

static void group_ring(void *data, struct zwp_tablet_pad_group_v2 *group,
	struct zwp_tablet_pad_ring_v2 *ring)
{
	zwp_tablet_pad_ring_v2_add_listener(ring, &ring_listener, (void *)(uintptr_t)pad_rings++);
}

static void group_strip(void *data, struct zwp_tablet_pad_group_v2 *group,
	struct zwp_tablet_pad_strip_v2 *strip)
{
	zwp_tablet_pad_strip_v2_add_listener(strip, &strip_listener,
		(void *)(uintptr_t)pad_strips++);
}

static void group_modes(void *data, struct zwp_tablet_pad_group_v2 *group, uint32_t modes)
{
	printf("pad group %u modes %u\n", (unsigned)(uintptr_t)data, modes);
}

static void group_done(void *data, struct zwp_tablet_pad_group_v2 *group)
{
}

static void group_mode_switch(void *data, struct zwp_tablet_pad_group_v2 *group, uint32_t time,
	uint32_t serial, uint32_t mode)
{
	printf("pad group %u mode %u\n", (unsigned)(uintptr_t)data, mode);
}

static const struct zwp_tablet_pad_group_v2_listener group_listener = {
	.buttons = group_buttons,
	.ring = group_ring,
	.strip = group_strip,
	.modes = group_modes,
	.done = group_done,
	.mode_switch = group_mode_switch,
};

static unsigned pad_groups;

static void pad_group(void *data, struct zwp_tablet_pad_v2 *pad,
	struct zwp_tablet_pad_group_v2 *group)
{
	zwp_tablet_pad_group_v2_add_listener(group, &group_listener,
		(void *)(uintptr_t)pad_groups++);
}

static void pad_path(void *data, struct zwp_tablet_pad_v2 *pad, const char *path)
{
}

static void pad_buttons(void *data, struct zwp_tablet_pad_v2 *pad, uint32_t buttons)
{
	printf("pad buttons %u\n", buttons);
}

static void pad_done(void *data, struct zwp_tablet_pad_v2 *pad)
{
	printf("pad added: %u rings, %u strips\n", pad_rings, pad_strips);
}

static void pad_button(void *data, struct zwp_tablet_pad_v2 *pad, uint32_t time, uint32_t button,
	uint32_t state)
{
	printf("pad button %u %u\n", button, state);
}

static void pad_enter(void *data, struct zwp_tablet_pad_v2 *pad, uint32_t serial,
	struct zwp_tablet_v2 *tablet, struct wl_surface *surface)
{
	printf("pad enter %s\n", surface_name(data, surface));
}

static void pad_leave(void *data, struct zwp_tablet_pad_v2 *pad, uint32_t serial,
	struct wl_surface *surface)
{
	printf("pad leave %s\n", surface_name(data, surface));
}

static void pad_removed(void *data, struct zwp_tablet_pad_v2 *pad)
{
	printf("pad removed\n");
	pad_rings = pad_strips = pad_groups = 0;
	zwp_tablet_pad_v2_destroy(pad);
}

static const struct zwp_tablet_pad_v2_listener pad_listener = {
	.group = pad_group,
	.path = pad_path,
	.buttons = pad_buttons,
	.done = pad_done,
	.button = pad_button,
	.enter = pad_enter,
	.leave = pad_leave,
	.removed = pad_removed,
};

static void seat_pad_added(void *data, struct zwp_tablet_seat_v2 *seat,
	struct zwp_tablet_pad_v2 *pad)
{
	zwp_tablet_pad_v2_add_listener(pad, &pad_listener, data);
}

static const struct zwp_tablet_seat_v2_listener tablet_seat_listener = {
	.tablet_added = seat_tablet_added,
	.tool_added = seat_tool_added,
	.pad_added = seat_pad_added,
};

static void want_tablets(struct app *app)
{
	if (app->tablet_manager && app->seat && !app->tablet_seat) {
		app->tablet_seat =
			zwp_tablet_manager_v2_get_tablet_seat(app->tablet_manager, app->seat);
		zwp_tablet_seat_v2_add_listener(app->tablet_seat, &tablet_seat_listener, app);
	}
}

static void want_gestures(struct app *app)
{
	if (!app->gestures || !app->pointer || app->swipe) {
		return;
	}
	app->swipe = zwp_pointer_gestures_v1_get_swipe_gesture(app->gestures, app->pointer);
	zwp_pointer_gesture_swipe_v1_add_listener(app->swipe, &swipe_listener, app);
	app->pinch = zwp_pointer_gestures_v1_get_pinch_gesture(app->gestures, app->pointer);
	zwp_pointer_gesture_pinch_v1_add_listener(app->pinch, &pinch_listener, app);
	if (app->gestures_version >= 3) {
		app->hold = zwp_pointer_gestures_v1_get_hold_gesture(app->gestures, app->pointer);
		zwp_pointer_gesture_hold_v1_add_listener(app->hold, &hold_listener, app);
	}
}

static void seat_capabilities(void *data, struct wl_seat *seat, uint32_t caps)
{
	struct app *app = data;
	if ((caps & WL_SEAT_CAPABILITY_TOUCH) && !app->touch) {
		app->touch = wl_seat_get_touch(seat);
		wl_touch_add_listener(app->touch, &touch_listener, app);
	}
	if ((caps & WL_SEAT_CAPABILITY_POINTER) && !app->pointer) {
		app->pointer = wl_seat_get_pointer(seat);
		wl_pointer_add_listener(app->pointer, &pointer_listener, app);
		want_relative(app);
		want_gestures(app);
	}
	if ((caps & WL_SEAT_CAPABILITY_KEYBOARD) && !app->keyboard) {
		app->keyboard = wl_seat_get_keyboard(seat);
		wl_keyboard_add_listener(app->keyboard, &keyboard_listener, app);
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

static void registry_global(void *data, struct wl_registry *registry, uint32_t name,
	const char *interface, uint32_t version)
{
	struct app *app = data;
	if (strcmp(interface, wl_compositor_interface.name) == 0) {
		app->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
	} else if (strcmp(interface, wl_subcompositor_interface.name) == 0) {
		app->subcompositor =
			wl_registry_bind(registry, name, &wl_subcompositor_interface, 1);
	} else if (strcmp(interface, wl_shm_interface.name) == 0) {
		app->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
	} else if (strcmp(interface, xdg_wm_base_interface.name) == 0) {
		app->wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(app->wm_base, &wm_base_listener, app);
	} else if (strcmp(interface, wl_seat_interface.name) == 0) {
		app->seat = wl_registry_bind(registry, name, &wl_seat_interface,
			version < 5 ? version : 5);
		wl_seat_add_listener(app->seat, &seat_listener, app);
		want_tablets(app);
	} else if (strcmp(interface, zwp_keyboard_shortcuts_inhibit_manager_v1_interface.name) ==
		0) {
		app->inhibit_manager = wl_registry_bind(registry, name,
			&zwp_keyboard_shortcuts_inhibit_manager_v1_interface, 1);
	} else if (strcmp(interface, zwp_text_input_manager_v3_interface.name) == 0) {
		app->text_input_manager =
			wl_registry_bind(registry, name, &zwp_text_input_manager_v3_interface, 1);
	} else if (strcmp(interface, zwp_pointer_constraints_v1_interface.name) == 0) {
		app->constraints =
			wl_registry_bind(registry, name, &zwp_pointer_constraints_v1_interface, 1);
	} else if (strcmp(interface, zwp_relative_pointer_manager_v1_interface.name) == 0) {
		app->relative_manager = wl_registry_bind(registry, name,
			&zwp_relative_pointer_manager_v1_interface, 1);
		want_relative(app);
	} else if (strcmp(interface, zwp_tablet_manager_v2_interface.name) == 0 &&
		!getenv("INPUT_CLIENT_NO_TABLET")) {
		app->tablet_manager =
			wl_registry_bind(registry, name, &zwp_tablet_manager_v2_interface, 1);
		want_tablets(app);
	} else if (strcmp(interface, zwp_pointer_gestures_v1_interface.name) == 0) {
		app->gestures_version = version < 3 ? version : 3;
		app->gestures = wl_registry_bind(registry, name, &zwp_pointer_gestures_v1_interface,
			app->gestures_version);
		want_gestures(app);
	}
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

static void xdg_surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
	struct app *app = data;
	xdg_surface_ack_configure(xdg_surface, serial);
	if (!app->configured) {
		app->configured = true;
		fill(app, app->main, app->width, app->height, app->colour);
		wl_surface_commit(app->main);
	}
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

static void toplevel_configure(void *data, struct xdg_toplevel *toplevel, int32_t w, int32_t h,
	struct wl_array *states)
{
	printf("configure %d %d\n", w, h);
	fflush(stdout);
}

static void toplevel_close(void *data, struct xdg_toplevel *toplevel)
{
	struct app *app = data;
	/* INPUT_CLIENT_IGNORE_CLOSE: an app that will not close (for what
	 * ends it anyway). */
	bool ignore = getenv("INPUT_CLIENT_IGNORE_CLOSE") != NULL;
	printf("close%s\n", ignore ? " (ignored)" : "");
	fflush(stdout);
	app->running = ignore;
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure,
	.close = toplevel_close,
};

int main(int argc, char **argv)
{
	struct app app = {.width = 400, .height = 300, .colour = 0xff404040, .running = true};
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct wl_display *display = wl_display_connect(NULL);
	app.display = display;
	app.xkb = xkb_context_new(XKB_CONTEXT_NO_FLAGS);
	the_app = &app;
	if (!display) {
		fprintf(stderr, "input-client: cannot connect to a Wayland display\n");
		return 1;
	}
	struct wl_registry *registry = wl_display_get_registry(display);
	wl_registry_add_listener(registry, &registry_listener, &app);
	wl_display_roundtrip(display);
	if (!app.compositor || !app.subcompositor || !app.shm || !app.wm_base) {
		fprintf(stderr, "input-client: missing globals\n");
		return 1;
	}
	if (app.text_input_manager && app.seat) {
		app.text_input =
			zwp_text_input_manager_v3_get_text_input(app.text_input_manager, app.seat);
		zwp_text_input_v3_add_listener(app.text_input, &text_input_listener, &app);
	}
	app.main = wl_compositor_create_surface(app.compositor);
	app.sub = wl_compositor_create_surface(app.compositor);
	struct wl_subsurface *subsurface =
		wl_subcompositor_get_subsurface(app.subcompositor, app.sub, app.main);
	wl_subsurface_set_position(subsurface, 100, 100);
	wl_subsurface_set_desync(subsurface);
	fill(&app, app.sub, 100, 100, 0xff20c020);
	wl_surface_commit(app.sub);

	struct xdg_surface *xdg_surface = xdg_wm_base_get_xdg_surface(app.wm_base, app.main);
	app.xdg_surface = xdg_surface;
	xdg_surface_add_listener(xdg_surface, &xdg_surface_listener, &app);
	struct xdg_toplevel *toplevel = xdg_surface_get_toplevel(xdg_surface);
	app.toplevel = toplevel;
	xdg_toplevel_add_listener(toplevel, &toplevel_listener, &app);
	/* argv[1], if given, names the window (title and app_id). */
	xdg_toplevel_set_title(toplevel, argc > 1 ? argv[1] : "rcomp input test");
	xdg_toplevel_set_app_id(toplevel, argc > 1 ? argv[1] : "rcomp-input-test");
	wl_surface_commit(app.main);

	while (app.running && wl_display_dispatch(display) >= 0) {
	}
	xdg_toplevel_destroy(toplevel);
	xdg_surface_destroy(xdg_surface);
	wl_subsurface_destroy(subsurface);
	wl_surface_destroy(app.sub);
	wl_surface_destroy(app.main);
	for (int i = 0; i < 16; i++) {
		if (live_buffers[i]) {
			wl_buffer_destroy(live_buffers[i]);
		}
	}
	if (app.lock) {
		zwp_locked_pointer_v1_destroy(app.lock);
	}
	if (app.confine) {
		zwp_confined_pointer_v1_destroy(app.confine);
	}
	if (app.inhibitor) {
		zwp_keyboard_shortcuts_inhibitor_v1_destroy(app.inhibitor);
	}
	if (app.relative) {
		zwp_relative_pointer_v1_destroy(app.relative);
	}
	if (app.relative_manager) {
		zwp_relative_pointer_manager_v1_destroy(app.relative_manager);
	}
	if (app.constraints) {
		zwp_pointer_constraints_v1_destroy(app.constraints);
	}
	if (app.inhibit_manager) {
		zwp_keyboard_shortcuts_inhibit_manager_v1_destroy(app.inhibit_manager);
	}
	for (int i = 0; i < 8; i++) {
		if (app.tools[i]) {
			zwp_tablet_tool_v2_destroy(app.tools[i]);
		}
	}
	for (int i = 0; i < 4; i++) {
		if (app.tablets[i]) {
			zwp_tablet_v2_destroy(app.tablets[i]);
		}
	}
	if (app.tablet_seat) {
		zwp_tablet_seat_v2_destroy(app.tablet_seat);
	}
	if (app.tablet_manager) {
		zwp_tablet_manager_v2_destroy(app.tablet_manager);
	}
	if (app.swipe) {
		zwp_pointer_gesture_swipe_v1_destroy(app.swipe);
	}
	if (app.pinch) {
		zwp_pointer_gesture_pinch_v1_destroy(app.pinch);
	}
	if (app.hold) {
		zwp_pointer_gesture_hold_v1_destroy(app.hold);
	}
	if (app.gestures) {
		zwp_pointer_gestures_v1_destroy(app.gestures);
	}
	if (app.text_input) {
		zwp_text_input_v3_destroy(app.text_input);
	}
	if (app.text_input_manager) {
		zwp_text_input_manager_v3_destroy(app.text_input_manager);
	}
	if (app.pointer) {
		wl_pointer_destroy(app.pointer);
	}
	if (app.keyboard) {
		wl_keyboard_destroy(app.keyboard);
	}
	if (app.touch) {
		wl_touch_destroy(app.touch);
	}
	if (app.seat) {
		wl_seat_destroy(app.seat);
	}
	xdg_wm_base_destroy(app.wm_base);
	wl_shm_destroy(app.shm);
	wl_subcompositor_destroy(app.subcompositor);
	wl_compositor_destroy(app.compositor);
	wl_registry_destroy(registry);
	wl_display_disconnect(display);
	xkb_state_unref(app.xkb_state);
	xkb_keymap_unref(app.keymap);
	xkb_context_unref(app.xkb);
	return 0;
}
