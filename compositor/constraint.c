/* Pointer constraints, mirrored on the viewer's compositor; see constraint.h. */
#include <stdlib.h>
#include <wlr/types/wlr_keyboard_shortcuts_inhibit_v1.h>
#include <wlr/types/wlr_pointer_constraints_v1.h>
#include <wlr/types/wlr_seat.h>

#include "connection.h"
#include "constraint.h"
#include "log.h"
#include "window.h"
#include "xwayland-keyboard-grab-unstable-v1-protocol.h"

struct rc_constraint {
	struct rc_server *server;
	struct wlr_pointer_constraint_v1 *constraint;
	bool active; /* the app was told so */
	struct wl_listener set_region, destroy;
};

static int32_t fixed(double v)
{
	double f = v * 256.0;
	if (f < WIRE_MIN_POSITION) {
		return WIRE_MIN_POSITION;
	}
	return f > WIRE_MAX_POSITION ? WIRE_MAX_POSITION : (int32_t)f;
}

/* Tells the viewer of the constraint (or, gone, that there is none). */
static void announce(struct rc_server *server, struct wlr_pointer_constraint_v1 *c, bool gone)
{
	struct rc_window *window = window_of_surface(server, c->surface);
	if (!window || !window_shown_to_input(window) || !input_connection(server)) {
		return;
	}
	/* Surface-local to window coordinates. */
	int dx, dy;
	if (!window_surface_at(window, c->surface, &dx, &dy)) {
		return;
	}
	uint8_t rects[WIRE_MAX_RECTS * WIRE_RECT_SIZE];
	int n = 0;
	pixman_box32_t *boxes = pixman_region32_rectangles(&c->region, &n);
	if (n > WIRE_MAX_RECTS) {
		boxes = pixman_region32_extents(&c->region);
		n = 1;
	}
	for (int i = 0; i < n; i++) {
		wire_put_rect(rects, (uint32_t)i,
			(struct wire_rect){boxes[i].x1 + dx, boxes[i].y1 + dy,
				boxes[i].x2 - boxes[i].x1, boxes[i].y2 - boxes[i].y1});
	}
	bool hint = c->type == WLR_POINTER_CONSTRAINT_V1_LOCKED &&
		(c->current.committed & WLR_POINTER_CONSTRAINT_V1_STATE_CURSOR_HINT);
	struct wire_msg msg = {
		.type = WIRE_POINTER_CONSTRAINT,
		.pointer_constraint =
			{
				.window = window->id,
				.type = gone ? WIRE_CONSTRAINT_NONE
					: c->type == WLR_POINTER_CONSTRAINT_V1_LOCKED
					? WIRE_CONSTRAINT_LOCK
					: WIRE_CONSTRAINT_CONFINE,
				.hint_x = hint ? fixed(c->current.cursor_hint.x + dx) : 0,
				.hint_y = hint ? fixed(c->current.cursor_hint.y + dy) : 0,
				.flags = hint ? WIRE_CONSTRAINT_HINT : 0,
				.nrects = gone ? 0 : (uint32_t)n,
				.rects = rects,
			},
	};
	log_debug("window %u: the app %s the pointer", window->id,
		gone						      ? "frees"
			: c->type == WLR_POINTER_CONSTRAINT_V1_LOCKED ? "locks"
								      : "confines");
	connection_send(input_connection(server), &msg);
}

static void handle_set_region(struct wl_listener *listener, void *data)
{
	struct rc_constraint *rc = wl_container_of(listener, rc, set_region);
	announce(rc->server, rc->constraint, false);
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct rc_constraint *rc = wl_container_of(listener, rc, destroy);
	announce(rc->server, rc->constraint, true);
	wl_list_remove(&rc->set_region.link);
	wl_list_remove(&rc->destroy.link);
	rc->constraint->data = NULL;
	free(rc);
}

static void handle_new_constraint(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, new_constraint);
	struct wlr_pointer_constraint_v1 *c = data;
	struct rc_constraint *rc = calloc(1, sizeof(*rc));
	if (!rc) {
		log_error("out of memory for a pointer constraint");
		return;
	}
	rc->server = server;
	rc->constraint = c;
	c->data = rc;
	rc->set_region.notify = handle_set_region;
	wl_signal_add(&c->events.set_region, &rc->set_region);
	rc->destroy.notify = handle_destroy;
	wl_signal_add(&c->events.destroy, &rc->destroy);
	announce(server, c, false);
}

/* Shortcut inhibitors: one listener each, for its end. */
struct rc_inhibitor {
	struct rc_server *server;
	struct wlr_keyboard_shortcuts_inhibitor_v1 *inhibitor;
	struct wl_listener destroy;
};

static void announce_inhibit(struct rc_server *server, struct wlr_surface *surface, bool on)
{
	struct rc_window *window = window_of_surface(server, surface);
	if (window && window_shown_to_input(window) && input_connection(server)) {
		struct wire_msg msg = {.type = WIRE_SHORTCUTS_INHIBIT,
			.shortcuts_inhibit = {.window = window->id, .inhibit = on}};
		connection_send(input_connection(server), &msg);
	}
}

static void handle_inhibitor_destroy(struct wl_listener *listener, void *data)
{
	struct rc_inhibitor *ri = wl_container_of(listener, ri, destroy);
	announce_inhibit(ri->server, ri->inhibitor->surface, false);
	wl_list_remove(&ri->destroy.link);
	ri->inhibitor->data = NULL;
	free(ri);
}

static void handle_new_inhibitor(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, new_inhibitor);
	struct wlr_keyboard_shortcuts_inhibitor_v1 *inhibitor = data;
	struct rc_inhibitor *ri = calloc(1, sizeof(*ri));
	if (!ri) {
		log_error("out of memory for a shortcut inhibitor");
		return;
	}
	ri->server = server;
	ri->inhibitor = inhibitor;
	inhibitor->data = ri;
	ri->destroy.notify = handle_inhibitor_destroy;
	wl_signal_add(&inhibitor->events.destroy, &ri->destroy);
	announce_inhibit(server, inhibitor->surface, true);
}

void constraint_inhibit_state(struct rc_server *server,
	const struct wire_shortcuts_inhibit_state *msg)
{
	struct rc_window *window = window_from_id(server, msg->window);
	if (!window || !window->mapped || !server->inhibit) {
		return; /* an ordinary race: the window just went */
	}
	struct wlr_keyboard_shortcuts_inhibitor_v1 *inhibitor;
	wl_list_for_each(inhibitor, &server->inhibit->inhibitors, link)
	{
		if (window_of_surface(server, inhibitor->surface) != window ||
			inhibitor->active == (msg->active != 0)) {
			continue;
		}
		if (msg->active) {
			wlr_keyboard_shortcuts_inhibitor_v1_activate(inhibitor);
		} else {
			wlr_keyboard_shortcuts_inhibitor_v1_deactivate(inhibitor);
		}
	}
}

/*
 * Xwayland's keyboard grabs (xwayland-keyboard-grab-unstable-v1): an X11
 * game that grabs the keyboard (XGrabKeyboard, as SDL does for a
 * keyboard-grabbed window) makes Xwayland ask for one on its window's
 * surface, which is what an inhibitor is to a Wayland app. wlroots 0.15 has
 * no helper for it; the protocol is two requests.
 */
struct rc_grab {
	struct rc_server *server;
	struct wlr_surface *surface; /* NULL once either side is gone */
	struct wl_list link; // rc_server::keyboard_grabs
	struct wl_listener surface_destroy;
};

static void grab_end(struct rc_grab *grab)
{
	if (grab->surface) {
		announce_inhibit(grab->server, grab->surface, false);
		wl_list_remove(&grab->surface_destroy.link);
		wl_list_remove(&grab->link);
		grab->surface = NULL;
	}
}

static void handle_grab_surface_destroy(struct wl_listener *listener, void *data)
{
	struct rc_grab *grab = wl_container_of(listener, grab, surface_destroy);
	grab_end(grab);
}

static void handle_grab_resource_destroy(struct wl_resource *resource)
{
	struct rc_grab *grab = wl_resource_get_user_data(resource);
	grab_end(grab);
	free(grab);
}

static void handle_destroy_request(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static const struct zwp_xwayland_keyboard_grab_v1_interface grab_impl = {
	.destroy = handle_destroy_request,
};

static void handle_grab_keyboard(struct wl_client *client, struct wl_resource *manager, uint32_t id,
	struct wl_resource *surface_resource, struct wl_resource *seat)
{
	struct rc_server *server = wl_resource_get_user_data(manager);
	struct rc_grab *grab = calloc(1, sizeof(*grab));
	struct wl_resource *resource = grab
		? wl_resource_create(client, &zwp_xwayland_keyboard_grab_v1_interface,
			  wl_resource_get_version(manager), id)
		: NULL;
	if (!resource) {
		free(grab);
		wl_client_post_no_memory(client);
		return;
	}
	grab->server = server;
	grab->surface = wlr_surface_from_resource(surface_resource);
	wl_resource_set_implementation(resource, &grab_impl, grab, handle_grab_resource_destroy);
	grab->surface_destroy.notify = handle_grab_surface_destroy;
	wl_signal_add(&grab->surface->events.destroy, &grab->surface_destroy);
	wl_list_insert(&server->keyboard_grabs, &grab->link);
	announce_inhibit(server, grab->surface, true);
}

static const struct zwp_xwayland_keyboard_grab_manager_v1_interface grab_manager_impl = {
	.destroy = handle_destroy_request,
	.grab_keyboard = handle_grab_keyboard,
};

static void bind_grab_manager(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	struct wl_resource *resource = wl_resource_create(client,
		&zwp_xwayland_keyboard_grab_manager_v1_interface, (int)version, id);
	if (!resource) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(resource, &grab_manager_impl, data, NULL);
}

void constraint_init(struct rc_server *server)
{
	wl_list_init(&server->keyboard_grabs);
	wl_global_create(server->display, &zwp_xwayland_keyboard_grab_manager_v1_interface, 1,
		server, bind_grab_manager);
	server->inhibit = wlr_keyboard_shortcuts_inhibit_v1_create(server->display);
	if (server->inhibit) {
		server->new_inhibitor.notify = handle_new_inhibitor;
		wl_signal_add(&server->inhibit->events.new_inhibitor, &server->new_inhibitor);
	}
	server->constraints = wlr_pointer_constraints_v1_create(server->display);
	if (server->constraints) {
		server->new_constraint.notify = handle_new_constraint;
		wl_signal_add(&server->constraints->events.new_constraint, &server->new_constraint);
	}
}

void constraint_announce_all(struct rc_server *server)
{
	if (server->inhibit) {
		struct wlr_keyboard_shortcuts_inhibitor_v1 *inhibitor;
		wl_list_for_each(inhibitor, &server->inhibit->inhibitors, link)
		{
			if (inhibitor->active) {
				/* The new viewer has yet to inhibit its shortcuts. */
				wlr_keyboard_shortcuts_inhibitor_v1_deactivate(inhibitor);
			}
			announce_inhibit(server, inhibitor->surface, true);
		}
	}
	struct rc_grab *grab;
	wl_list_for_each(grab, &server->keyboard_grabs, link)
	{
		announce_inhibit(server, grab->surface, true);
	}
	if (!server->constraints) {
		return;
	}
	struct wlr_pointer_constraint_v1 *c, *tmp;
	wl_list_for_each_safe(c, tmp, &server->constraints->constraints, link)
	{
		struct rc_constraint *rc = c->data;
		if (rc && rc->active) {
			/* The new viewer has yet to apply it. */
			wlr_pointer_constraint_v1_send_deactivated(c);
			if (!c->data) {
				continue; /* a oneshot constraint ends when deactivated */
			}
			rc->active = false;
		}
		announce(server, c, false);
	}
}

void constraint_withdraw_all(struct rc_server *server)
{
	if (server->inhibit) {
		struct wlr_keyboard_shortcuts_inhibitor_v1 *inhibitor;
		wl_list_for_each(inhibitor, &server->inhibit->inhibitors, link)
		{
			announce_inhibit(server, inhibitor->surface, false);
		}
	}
	struct rc_grab *grab;
	wl_list_for_each(grab, &server->keyboard_grabs, link)
	{
		announce_inhibit(server, grab->surface, false);
	}
	if (server->constraints) {
		struct wlr_pointer_constraint_v1 *c;
		wl_list_for_each(c, &server->constraints->constraints, link)
		{
			announce(server, c, true);
		}
	}
}

bool constraint_pointer_locked(struct rc_server *server)
{
	struct wlr_surface *surface = server->seat->pointer_state.focused_surface;
	if (!server->constraints || !surface) {
		return false;
	}
	struct wlr_pointer_constraint_v1 *c =
		wlr_pointer_constraints_v1_constraint_for_surface(server->constraints, surface,
			server->seat);
	struct rc_constraint *rc = c ? c->data : NULL;
	return rc && rc->active && c->type == WLR_POINTER_CONSTRAINT_V1_LOCKED;
}

void constraint_state(struct rc_server *server, const struct wire_pointer_constraint_state *msg)
{
	struct rc_window *window = window_from_id(server, msg->window);
	if (!window || !window->mapped || !server->constraints) {
		return; /* an ordinary race: the window just went */
	}
	struct wlr_pointer_constraint_v1 *c;
	wl_list_for_each(c, &server->constraints->constraints, link)
	{
		struct rc_constraint *rc = c->data;
		if (!rc || window_of_surface(server, c->surface) != window ||
			rc->active == (msg->active != 0)) {
			continue;
		}
		log_debug("window %u: the viewer %s the constraint", window->id,
			msg->active ? "holds" : "ended");
		if (msg->active) {
			rc->active = true;
			wlr_pointer_constraint_v1_send_activated(c);
		} else {
			rc->active = false;
			wlr_pointer_constraint_v1_send_deactivated(c);
		}
		return;
	}
}
