/* Pointer lock and confinement, mirrored locally; see constraint.h. */
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "constraint.h"
#include "log.h"
#include "keyboard-shortcuts-inhibit-unstable-v1-client-protocol.h"
#include "pointer-constraints-unstable-v1-client-protocol.h"

void constraint_bind(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name)
{
	viewer->seat.constraints =
		wl_registry_bind(registry, name, &zwp_pointer_constraints_v1_interface, 1);
}

void constraint_bind_inhibit(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name)
{
	viewer->seat.inhibit_manager = wl_registry_bind(registry, name,
		&zwp_keyboard_shortcuts_inhibit_manager_v1_interface, 1);
}

static void tell_inhibit(struct rv_window *window, bool active)
{
	log_debug("window %u: the local desktop's shortcuts %s", window->id,
		active ? "inhibited" : "back");
	struct wire_msg msg = {.type = WIRE_SHORTCUTS_INHIBIT_STATE,
		.shortcuts_inhibit_state = {.window = window->id, .active = active}};
	connection_send(window->viewer, &msg);
}

static void inhibit_active(void *data, struct zwp_keyboard_shortcuts_inhibitor_v1 *inhibitor)
{
	tell_inhibit(data, true);
}

static void inhibit_inactive(void *data, struct zwp_keyboard_shortcuts_inhibitor_v1 *inhibitor)
{
	tell_inhibit(data, false);
}

static const struct zwp_keyboard_shortcuts_inhibitor_v1_listener inhibit_listener = {
	.active = inhibit_active,
	.inactive = inhibit_inactive,
};

void constraint_inhibit(struct rv_window *window, const struct wire_shortcuts_inhibit *msg)
{
	struct rv_seat *seat = &window->viewer->seat;
	if (msg->inhibit && !window->inhibitor && seat->inhibit_manager && seat->seat) {
		window->inhibitor = zwp_keyboard_shortcuts_inhibit_manager_v1_inhibit_shortcuts(
			seat->inhibit_manager, window->surface, seat->seat);
		zwp_keyboard_shortcuts_inhibitor_v1_add_listener(window->inhibitor,
			&inhibit_listener, window);
	} else if (!msg->inhibit && window->inhibitor) {
		zwp_keyboard_shortcuts_inhibitor_v1_destroy(window->inhibitor);
		window->inhibitor = NULL;
	}
}

static void tell(struct rv_window *window, bool active)
{
	if (window->constraint_active == active) {
		return;
	}
	window->constraint_active = active;
	struct wire_msg msg = {.type = WIRE_POINTER_CONSTRAINT_STATE,
		.pointer_constraint_state = {.window = window->id, .active = active}};
	connection_send(window->viewer, &msg);
}

static void locked(void *data, struct zwp_locked_pointer_v1 *lock)
{
	tell(data, true);
}

static void unlocked(void *data, struct zwp_locked_pointer_v1 *lock)
{
	tell(data, false);
}

static const struct zwp_locked_pointer_v1_listener lock_listener = {
	.locked = locked,
	.unlocked = unlocked,
};

static void confined(void *data, struct zwp_confined_pointer_v1 *confine)
{
	tell(data, true);
}

static void unconfined(void *data, struct zwp_confined_pointer_v1 *confine)
{
	tell(data, false);
}

static const struct zwp_confined_pointer_v1_listener confine_listener = {
	.confined = confined,
	.unconfined = unconfined,
};

/* Lifts the local constraint, if any. */
static void release(struct rv_window *window)
{
	if (window->locked) {
		zwp_locked_pointer_v1_destroy(window->locked);
		window->locked = NULL;
	}
	if (window->confined) {
		zwp_confined_pointer_v1_destroy(window->confined);
		window->confined = NULL;
	}
	tell(window, false);
}

static struct wl_region *region_of(struct rv_window *window)
{
	if (window->constraint_nrects == 0) {
		return NULL; /* the whole surface */
	}
	struct wl_region *region = wl_compositor_create_region(window->viewer->compositor);
	for (uint32_t i = 0; i < window->constraint_nrects; i++) {
		struct wire_rect r = wire_get_rect(window->constraint_rects, i);
		wl_region_add(region, r.x, r.y, r.width, r.height);
	}
	return region;
}

/* A constraint's region and cursor hint take effect with the surface's
 * next commit; a still window may not commit again for a long time, and a
 * hint not yet committed is lost when the lock ends. Nothing new is
 * attached: the window's picture stays as it is. */
static void apply_now(struct rv_window *window)
{
	if (window->has_content) {
		wl_surface_commit(window->surface);
	}
}

/* Asks the local compositor for the window's constraint. */
static void ask(struct rv_window *window)
{
	struct rv_seat *seat = &window->viewer->seat;
	struct wl_region *region = region_of(window);
	if (window->constraint_type == WIRE_CONSTRAINT_LOCK) {
		window->locked = zwp_pointer_constraints_v1_lock_pointer(seat->constraints,
			window->surface, seat->pointer, region,
			ZWP_POINTER_CONSTRAINTS_V1_LIFETIME_PERSISTENT);
		zwp_locked_pointer_v1_add_listener(window->locked, &lock_listener, window);
		if (window->constraint_hint) {
			zwp_locked_pointer_v1_set_cursor_position_hint(window->locked,
				window->constraint_hint_x, window->constraint_hint_y);
		}
	} else {
		window->confined = zwp_pointer_constraints_v1_confine_pointer(seat->constraints,
			window->surface, seat->pointer, region,
			ZWP_POINTER_CONSTRAINTS_V1_LIFETIME_PERSISTENT);
		zwp_confined_pointer_v1_add_listener(window->confined, &confine_listener, window);
	}
	if (region) {
		wl_region_destroy(region);
	}
	apply_now(window);
}

static void update(struct rv_window *window)
{
	struct rv_seat *seat = &window->viewer->seat;
	bool wanted = window->constraint_type != WIRE_CONSTRAINT_NONE && seat->constraints &&
		seat->pointer && seat->keyboard_focus == window;
	bool asked = window->locked || window->confined;
	if (wanted && !asked) {
		ask(window);
	} else if (!wanted && asked) {
		release(window);
	}
}

void constraint_set(struct rv_window *window, const struct wire_pointer_constraint *msg)
{
	bool same = msg->type == window->constraint_type;
	if (!same) {
		release(window); /* another kind is asked afresh */
	}
	window->constraint_type = msg->type;
	window->constraint_nrects = msg->nrects;
	memcpy(window->constraint_rects, msg->rects, (size_t)msg->nrects * WIRE_RECT_SIZE);
	window->constraint_hint = msg->flags & WIRE_CONSTRAINT_HINT;
	window->constraint_hint_x = msg->hint_x;
	window->constraint_hint_y = msg->hint_y;
	if (same && (window->locked || window->confined)) {
		/* A new region or hint. */
		struct wl_region *region = region_of(window);
		if (window->locked) {
			zwp_locked_pointer_v1_set_region(window->locked, region);
			if (window->constraint_hint) {
				zwp_locked_pointer_v1_set_cursor_position_hint(window->locked,
					window->constraint_hint_x, window->constraint_hint_y);
			}
		} else {
			zwp_confined_pointer_v1_set_region(window->confined, region);
		}
		if (region) {
			wl_region_destroy(region);
		}
		apply_now(window);
		return;
	}
	update(window);
}

void constraint_update(struct rv_viewer *viewer)
{
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		update(window);
	}
}

void constraint_window_gone(struct rv_window *window)
{
	if (window->locked) {
		zwp_locked_pointer_v1_destroy(window->locked);
	}
	if (window->confined) {
		zwp_confined_pointer_v1_destroy(window->confined);
	}
	if (window->inhibitor) {
		zwp_keyboard_shortcuts_inhibitor_v1_destroy(window->inhibitor);
	}
	window->locked = NULL;
	window->confined = NULL;
	window->inhibitor = NULL;
}

void constraint_reset(struct rv_viewer *viewer)
{
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		constraint_window_gone(window);
		window->constraint_type = WIRE_CONSTRAINT_NONE;
		window->constraint_active = false;
	}
}

void constraint_finish(struct rv_viewer *viewer)
{
	if (viewer->seat.constraints) {
		zwp_pointer_constraints_v1_destroy(viewer->seat.constraints);
		viewer->seat.constraints = NULL;
	}
	if (viewer->seat.inhibit_manager) {
		zwp_keyboard_shortcuts_inhibit_manager_v1_destroy(viewer->seat.inhibit_manager);
		viewer->seat.inhibit_manager = NULL;
	}
}
