/*
 * One local xdg_toplevel per remote toplevel, one xdg_popup per remote
 * popup: their roles, what the local compositor configures (sent to the
 * server as configure), and what the app asks of its window (titles,
 * parents, states, size hints, decorations).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "constraint.h"
#include "desktop.h"
#include "decode.h"
#include "edges.h"
#include "hud.h"
#include "monotonic.h"
#include "input.h"
#include "log.h"
#include "output.h"
#include "present.h"
#include "textinput.h"
#include "window.h"
#include "xdg-decoration-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

static void surface_enter(void *data, struct wl_surface *surface, struct wl_output *wl_output)
{
	output_window_enter(data, wl_output);
}

static void surface_leave(void *data, struct wl_surface *surface, struct wl_output *wl_output)
{
	output_window_leave(data, wl_output);
}

static const struct wl_surface_listener surface_listener = {
	.enter = surface_enter,
	.leave = surface_leave,
};

static void send_configure(struct rv_window *window)
{
	int32_t w = window->configure_width, h = window->configure_height;
	uint32_t states = window->configure_states;
	if (window->viewer->connection.server_minor < 1) {
		states &= ~(uint32_t)WIRE_STATES_TILED; /* 3.1's */
	}
	if (w <= 0 || h <= 0) {
		/* The local compositor lets us choose: keep the remote size. */
		w = 0;
		h = 0;
	}
	if (w > WIRE_MAX_DIM) {
		w = WIRE_MAX_DIM;
	}
	if (h > WIRE_MAX_DIM) {
		h = WIRE_MAX_DIM;
	}
	if (w == window->requested_width && h == window->requested_height &&
		states == window->requested_states) {
		return;
	}
	if (w == 0 && states == window->requested_states) {
		return;
	}
	int32_t shown_w, shown_h;
	window_logical_size(window, &shown_w, &shown_h);
	if (w == shown_w && h == shown_h && states == window->requested_states) {
		return;
	}
	window->requested_width = w;
	window->requested_height = h;
	window->requested_states = states;
	struct wire_msg msg = {
		.type = WIRE_CONFIGURE,
		.configure = {.window = window->id, .width = w, .height = h, .states = states},
	};
	connection_send(window->viewer, &msg);
}

static void xdg_surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
	struct rv_window *window = data;
	window->ack_serial = serial;
	window->ack_pending = true;
	window->configured = true;
	if (window->xdg_toplevel) {
		send_configure(window);
	}
	present_ack_configure(window);
	/* The band follows the states (a frame's commit applies it). */
	edges_update(window, !window->dirty && window->has_content && window->ack_pending);
	if (window->viewer->connection.watching && window->has_content) {
		/* The room given may have changed: the picture is fitted anew. */
		present_damage_all(window);
		window->dirty = true;
	}
	if (window->dirty) {
		present(window);
	} else if (window->has_content && !window->ack_pending) {
		wl_surface_commit(window->surface);
	}
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

static void toplevel_configure(void *data, struct xdg_toplevel *toplevel, int32_t width,
	int32_t height, struct wl_array *states)
{
	struct rv_window *window = data;
	window->configure_width = width;
	window->configure_height = height;
	uint32_t bits = 0;
	uint32_t *state;
	wl_array_for_each(state, states)
	{
		switch (*state) {
		case XDG_TOPLEVEL_STATE_MAXIMIZED:
			bits |= WIRE_STATE_MAXIMIZED;
			break;
		case XDG_TOPLEVEL_STATE_FULLSCREEN:
			bits |= WIRE_STATE_FULLSCREEN;
			break;
		case XDG_TOPLEVEL_STATE_RESIZING:
			bits |= WIRE_STATE_RESIZING;
			break;
		case XDG_TOPLEVEL_STATE_ACTIVATED:
			bits |= WIRE_STATE_ACTIVATED;
			break;
		case XDG_TOPLEVEL_STATE_TILED_LEFT:
			bits |= WIRE_STATE_TILED_LEFT;
			break;
		case XDG_TOPLEVEL_STATE_TILED_RIGHT:
			bits |= WIRE_STATE_TILED_RIGHT;
			break;
		case XDG_TOPLEVEL_STATE_TILED_TOP:
			bits |= WIRE_STATE_TILED_TOP;
			break;
		case XDG_TOPLEVEL_STATE_TILED_BOTTOM:
			bits |= WIRE_STATE_TILED_BOTTOM;
			break;
		default:
			break;
		}
	}
	window->configure_states = bits;
}

static void toplevel_close(void *data, struct xdg_toplevel *toplevel)
{
	struct rv_window *window = data;
	if (window->disconnected) {
		log_info("window closed while disconnected: giving up on the session");
		window->viewer->running = false;
		window->viewer->exit_code = 1;
		return;
	}
	struct wire_msg msg = {.type = WIRE_CLOSE, .close = {window->id}};
	connection_send(window->viewer, &msg);
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure,
	.close = toplevel_close,
};

static char *copy_text(const char *text, uint32_t len)
{
	char *s = malloc((size_t)len + 1);
	if (s) {
		memcpy(s, text, len);
		s[len] = '\0';
	}
	return s;
}

static void show_title(struct rv_window *window)
{
	if (!window->xdg_toplevel) {
		return;
	}
	struct rv_viewer *viewer = window->viewer;
	const char *title = window->title ? window->title : "";
	const char *host = viewer->options.title_host ? viewer->connection.host_name : "";
	const char *mark = window->disconnected ? "[disconnected] " : "";
	/* "host: title", as ssh users see their remote shells' titles. */
	size_t size = strlen(mark) + strlen(host) + 2 + strlen(title) + 1;
	char *shown = malloc(size);
	if (shown) {
		snprintf(shown, size, "%s%s%s%s", mark, host, host[0] ? ": " : "", title);
		xdg_toplevel_set_title(window->xdg_toplevel, shown);
		free(shown);
	}
}

void window_show_titles(struct rv_viewer *viewer)
{
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		show_title(window);
	}
}

void window_set_title(struct rv_window *window, const char *text, uint32_t len)
{
	char *title = copy_text(text, len);
	if (title) {
		free(window->title);
		window->title = title;
		show_title(window);
	}
}

void window_set_app_id(struct rv_window *window, const char *text, uint32_t len)
{
	char *app_id = copy_text(text, len);
	if (app_id && window->xdg_toplevel) {
		xdg_toplevel_set_app_id(window->xdg_toplevel, app_id);
	}
	free(app_id);
}

void window_grab(struct rv_window *window, const struct wire_window_grab *msg)
{
	struct rv_viewer *viewer = window->viewer;
	uint32_t serial = input_mark_serial(viewer, msg->mark);
	if (!window->xdg_toplevel || !viewer->seat.seat || serial == 0) {
		log_debug("window %u: no local press %u for its move or resize", window->id,
			msg->mark);
		return;
	}
	switch (msg->kind) {
	case WIRE_GRAB_MOVE:
		xdg_toplevel_move(window->xdg_toplevel, viewer->seat.seat, serial);
		break;
	case WIRE_GRAB_RESIZE:
		xdg_toplevel_resize(window->xdg_toplevel, viewer->seat.seat, serial, msg->edges);
		break;
	case WIRE_GRAB_MENU:
		xdg_toplevel_show_window_menu(window->xdg_toplevel, viewer->seat.seat, serial,
			msg->x, msg->y);
		break;
	}
}

/* The app asked for a state: ask the local compositor, whose configure
 * goes back to the app as the answer. */
void window_request(struct rv_window *window, uint32_t request)
{
	struct xdg_toplevel *toplevel = window->xdg_toplevel;
	if (!toplevel) {
		return;
	}
	switch (request) {
	case WIRE_REQUEST_MAXIMIZE:
		xdg_toplevel_set_maximized(toplevel);
		break;
	case WIRE_REQUEST_UNMAXIMIZE:
		xdg_toplevel_unset_maximized(toplevel);
		break;
	case WIRE_REQUEST_FULLSCREEN:
		xdg_toplevel_set_fullscreen(toplevel, NULL);
		break;
	case WIRE_REQUEST_UNFULLSCREEN:
		xdg_toplevel_unset_fullscreen(toplevel);
		break;
	case WIRE_REQUEST_MINIMIZE:
		xdg_toplevel_set_minimized(toplevel);
		break;
	}
	/* Some compositors (weston) act on it at the next commit. */
	if (window->has_content && !window->frame_callback) {
		wl_surface_commit(window->surface);
	}
}

/* Size hints are double-buffered: they apply with the next commit, which
 * for a new window is the one that maps it. */
void window_set_hints(struct rv_window *window, const struct wire_window_hints *msg)
{
	if (!window->xdg_toplevel) {
		return;
	}
	xdg_toplevel_set_min_size(window->xdg_toplevel, msg->min_width, msg->min_height);
	xdg_toplevel_set_max_size(window->xdg_toplevel, msg->max_width, msg->max_height);
	if (window->has_content) {
		wl_surface_commit(window->surface);
	}
}

/* Our compositor will not draw the window's decorations: the app must. */
static void app_decorates(struct rv_window *window)
{
	struct wire_msg msg = {
		.type = WIRE_DECORATION_MODE,
		.decoration_mode = {.window = window->id, .mode = WIRE_DECORATION_CLIENT_SIDE},
	};
	connection_send(window->viewer, &msg);
}

static void decoration_configure(void *data, struct zxdg_toplevel_decoration_v1 *decoration,
	uint32_t mode)
{
	struct rv_window *window = data;
	window->locally_decorated = mode == ZXDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE;
	if (!window->locally_decorated) {
		app_decorates(window);
	}
	/* The configure that follows applies the band, or takes it away. */
}

static const struct zxdg_toplevel_decoration_v1_listener decoration_listener = {
	.configure = decoration_configure,
};

/* Who draws the title bar, as the server decided with the app: the local
 * compositor, or the app in its own pixels, when the window has no
 * decoration object and the compositor leaves it alone. Never both. */
void window_set_decoration(struct rv_window *window, uint32_t mode)
{
	struct rv_viewer *viewer = window->viewer;
	if (mode == WIRE_DECORATION_SERVER_SIDE && !window->decoration &&
		viewer->decoration_manager && window->xdg_toplevel) {
		if (window->has_content) {
			/* xdg-decoration allows it only before the first buffer. */
			app_decorates(window);
			return;
		}
		window->decoration = zxdg_decoration_manager_v1_get_toplevel_decoration(
			viewer->decoration_manager, window->xdg_toplevel);
		zxdg_toplevel_decoration_v1_add_listener(window->decoration, &decoration_listener,
			window);
		zxdg_toplevel_decoration_v1_set_mode(window->decoration,
			ZXDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE);
	} else if (mode == WIRE_DECORATION_CLIENT_SIDE && window->decoration) {
		zxdg_toplevel_decoration_v1_destroy(window->decoration);
		window->decoration = NULL;
		window->locally_decorated = false;
		edges_update(window, true);
	}
}

/* The local toplevel's parent follows the remote one's (0: none), so
 * dialogs stay with their parents. */
void window_set_parent(struct rv_window *window, uint32_t parent_id)
{
	struct rv_window *parent = parent_id ? window_from_id(window->viewer, parent_id) : NULL;
	if (!window->xdg_toplevel || (parent_id && (!parent || !parent->xdg_toplevel))) {
		connection_fail(window->viewer, "window %u cannot have parent %u", window->id,
			parent_id);
		return;
	}
	xdg_toplevel_set_parent(window->xdg_toplevel, parent ? parent->xdg_toplevel : NULL);
}

/* While the link is down the window stays, dimmed and marked in its title,
 * so the user sees at once that it does not answer. */
void window_set_disconnected(struct rv_window *window, bool disconnected)
{
	if (window->disconnected == disconnected) {
		return;
	}
	window->disconnected = disconnected;
	show_title(window);
	if (window->image) {
		present_damage_all(window);
		window->dirty = true;
		present(window);
	}
}

/* The window is in a reattach's snapshot: the same remote window. */
void window_reattach(struct rv_window *window, const struct wire_window_new *msg)
{
	window->stale = false;
	window->scale = 1; /* window_scale follows if not */
	window_set_parent(window, msg->parent);
	window_set_title(window, msg->title, msg->title_len);
	window_set_app_id(window, msg->app_id, msg->app_id_len);
	/* A new stream follows; what the server knew of us is gone. */
	decode_reset(window);
	window->received_seq = 0;
	window->requested_width = msg->width;
	window->requested_height = msg->height;
	window->requested_states = 0;
	output_forget_reports(window);
	output_report(window);
}

static struct rv_window *window_alloc(struct rv_viewer *viewer, uint32_t id);

struct rv_window *window_create(struct rv_viewer *viewer, const struct wire_window_new *msg)
{
	struct rv_window *window = window_alloc(viewer, msg->window);
	if (!window) {
		return NULL;
	}
	window->xdg_toplevel = xdg_surface_get_toplevel(window->xdg_surface);
	xdg_toplevel_add_listener(window->xdg_toplevel, &toplevel_listener, window);

	window_set_title(window, msg->title, msg->title_len);
	window_set_app_id(window, msg->app_id, msg->app_id_len);
	/* The remote size until the first frame says otherwise. */
	window->requested_width = msg->width;
	window->requested_height = msg->height;
	if (msg->parent) {
		window_set_parent(window, msg->parent);
	}
	wl_surface_commit(window->surface);
	return window;
}

static void drop_role(struct rv_window *window)
{
	if (window->xdg_popup) {
		xdg_popup_destroy(window->xdg_popup);
		window->xdg_popup = NULL;
	}
	if (window->decoration) {
		zxdg_toplevel_decoration_v1_destroy(window->decoration);
		window->decoration = NULL;
	}
	if (window->xdg_toplevel) {
		xdg_toplevel_destroy(window->xdg_toplevel);
		window->xdg_toplevel = NULL;
	}
	if (window->xdg_surface) {
		xdg_surface_destroy(window->xdg_surface);
		window->xdg_surface = NULL;
	}
}

static void popup_configure(void *data, struct xdg_popup *popup, int32_t x, int32_t y,
	int32_t width, int32_t height)
{
}

/* The local compositor dismissed the popup (a click outside): the app is
 * told through the server, and its popup_done makes the window go. */
static void popup_done(void *data, struct xdg_popup *popup)
{
	struct rv_window *window = data;
	if (window->dismissed) {
		return;
	}
	window->dismissed = true;
	log_debug("popup %u dismissed here", window->id);
	struct wire_msg msg = {.type = WIRE_POPUP_DONE, .popup_done = {window->id}};
	connection_send(window->viewer, &msg);
}

static void popup_repositioned(void *data, struct xdg_popup *popup, uint32_t token)
{
}

static const struct xdg_popup_listener popup_listener = {
	.configure = popup_configure,
	.popup_done = popup_done,
	.repositioned = popup_repositioned,
};

static struct rv_window *window_alloc(struct rv_viewer *viewer, uint32_t id)
{
	if (wl_list_length(&viewer->windows) >= RV_MAX_WINDOWS) {
		connection_fail(viewer, "the server opened more than %d windows", RV_MAX_WINDOWS);
		return NULL;
	}
	struct rv_window *window = calloc(1, sizeof(*window));
	if (!window) {
		connection_fail(viewer, "out of memory creating a window");
		return NULL;
	}
	if (!idmap_put(&viewer->window_ids, id, window)) {
		free(window);
		connection_fail(viewer, "out of memory creating a window");
		return NULL;
	}
	window->viewer = viewer;
	window->id = id;
	window->scale = window->image_scale = 1;
	window->hud_photon_ms = -1;
	window->hud_since_us = monotonic_usec();
	wl_list_insert(viewer->windows.prev, &window->link);
	window->surface = wl_compositor_create_surface(viewer->compositor);
	present_init(window);
	wl_surface_add_listener(window->surface, &surface_listener, window);
	window->xdg_surface = xdg_wm_base_get_xdg_surface(viewer->wm_base, window->surface);
	xdg_surface_add_listener(window->xdg_surface, &xdg_surface_listener, window);
	return window;
}

struct rv_window *window_create_popup(struct rv_viewer *viewer, const struct wire_popup_new *msg)
{
	struct rv_window *parent = window_from_id(viewer, msg->parent);
	if (!parent || parent->stale || !parent->xdg_surface) {
		/* Its parent was dismissed here already: dismiss it too. */
		if (parent && parent->dismissed) {
			struct wire_msg done = {.type = WIRE_POPUP_DONE,
				.popup_done = {msg->window}};
			connection_send(viewer, &done);
			return NULL;
		}
		connection_fail(viewer, "popup %u has no parent window %u", msg->window,
			msg->parent);
		return NULL;
	}
	struct rv_window *window = window_alloc(viewer, msg->window);
	if (!window) {
		return NULL;
	}
	window->parent = parent;
	struct xdg_positioner *pos = xdg_wm_base_create_positioner(viewer->wm_base);
	xdg_positioner_set_size(pos, msg->width, msg->height);
	xdg_positioner_set_anchor_rect(pos, msg->anchor_x, msg->anchor_y,
		msg->anchor_width > 0 ? msg->anchor_width : 1,
		msg->anchor_height > 0 ? msg->anchor_height : 1);
	xdg_positioner_set_anchor(pos, msg->anchor);
	xdg_positioner_set_gravity(pos, msg->gravity);
	xdg_positioner_set_constraint_adjustment(pos, msg->constraint_adjustment);
	xdg_positioner_set_offset(pos, msg->offset_x, msg->offset_y);
	window->xdg_popup = xdg_surface_get_popup(window->xdg_surface, parent->xdg_surface, pos);
	xdg_positioner_destroy(pos);
	xdg_popup_add_listener(window->xdg_popup, &popup_listener, window);
	if ((msg->flags & WIRE_POPUP_GRAB) && viewer->seat.seat && viewer->seat.input_serial) {
		xdg_popup_grab(window->xdg_popup, viewer->seat.seat, viewer->seat.input_serial);
	}
	window->requested_width = msg->width;
	window->requested_height = msg->height;
	log_debug("popup %u of window %u: %dx%d at anchor %d,%d%s", window->id, parent->id,
		msg->width, msg->height, msg->anchor_x, msg->anchor_y,
		msg->flags & WIRE_POPUP_GRAB ? ", with a grab" : "");
	wl_surface_commit(window->surface);
	return window;
}

static bool is_child_of(struct rv_window *window, void *parent)
{
	return window->parent == parent;
}

void window_destroy_if(struct rv_viewer *viewer, bool (*test)(struct rv_window *, void *),
	void *data)
{
	/* A window takes its popups along, so look again after each. */
	bool found = true;
	while (found) {
		found = false;
		struct rv_window *window;
		wl_list_for_each(window, &viewer->windows, link)
		{
			if (test(window, data)) {
				window_destroy(window);
				found = true;
				break;
			}
		}
	}
}

void window_destroy(struct rv_window *window)
{
	if (!window) {
		return;
	}
	struct rv_viewer *viewer = window->viewer;
	/* Popups go first, topmost first, as xdg-shell demands. */
	window_destroy_if(viewer, is_child_of, window);
	constraint_window_gone(window);
	desktop_window_gone(window);
	input_window_gone(viewer, window);
	textinput_window_gone(window);
	edges_finish(window);
	hud_window_finish(window);
	present_finish(window);
	drop_role(window);
	wl_surface_destroy(window->surface);
	decode_finish(window);
	free(window->title);
	idmap_remove(&viewer->window_ids, window->id);
	wl_list_remove(&window->link);
	free(window);
}
