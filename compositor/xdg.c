/*
 * xdg-shell windows. Each toplevel and each popup is a window; a popup is
 * shown as a local popup of the window it belongs to. xdg_surface->data is
 * the window, which decoration.c relies on too.
 */
#include <stdlib.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/types/wlr_xdg_shell.h>
#include <wlr/util/edges.h>

#include "announce.h"
#include "log.h"
#include "window.h"
#include "xdg.h"

struct xdg_window {
	struct rc_window base;
	struct wlr_xdg_surface *xdg;
	/* The size last asked for by the viewer, to skip repeats. */
	int32_t requested_width, requested_height;
	struct wl_listener map;
	struct wl_listener unmap;
	struct wl_listener destroy;
	struct wl_listener commit;
	struct wl_listener set_title;
	struct wl_listener set_app_id;
	struct wl_listener set_parent;
	struct wl_listener request_maximize;
	struct wl_listener request_fullscreen;
	struct wl_listener request_minimize;
	struct wl_listener request_move;
	struct wl_listener request_resize;
	struct wl_listener request_menu;
};

static struct xdg_window *xdg_window(struct rc_window *window)
{
	struct xdg_window *xw = wl_container_of(window, xw, base);
	return xw;
}

static struct wlr_surface *impl_surface(struct rc_window *window)
{
	return xdg_window(window)->xdg->surface;
}

static void impl_geometry(struct rc_window *window, struct wlr_box *box)
{
	wlr_xdg_surface_get_geometry(xdg_window(window)->xdg, box);
}

static struct wlr_xdg_toplevel *toplevel_of(struct rc_window *window)
{
	struct wlr_xdg_surface *xdg = xdg_window(window)->xdg;
	return xdg->role == WLR_XDG_SURFACE_ROLE_TOPLEVEL ? xdg->toplevel : NULL;
}

static const char *impl_title(struct rc_window *window)
{
	struct wlr_xdg_toplevel *toplevel = toplevel_of(window);
	return toplevel && toplevel->title ? toplevel->title : "";
}

static const char *impl_app_id(struct rc_window *window)
{
	struct wlr_xdg_toplevel *toplevel = toplevel_of(window);
	return toplevel && toplevel->app_id ? toplevel->app_id : "";
}

static struct rc_window *impl_parent(struct rc_window *window)
{
	struct wlr_xdg_toplevel *toplevel = toplevel_of(window);
	return toplevel && toplevel->parent ? toplevel->parent->data : NULL;
}

static bool impl_wants_maximized(struct rc_window *window, bool first)
{
	struct wlr_xdg_toplevel *toplevel = toplevel_of(window);
	return toplevel && (first ? toplevel->requested.maximized : toplevel->current.maximized);
}

static bool impl_wants_fullscreen(struct rc_window *window, bool first)
{
	struct wlr_xdg_toplevel *toplevel = toplevel_of(window);
	return toplevel && (first ? toplevel->requested.fullscreen : toplevel->current.fullscreen);
}

static bool impl_size_hints(struct rc_window *window, int32_t hints[4])
{
	struct wlr_xdg_toplevel *toplevel = toplevel_of(window);
	if (!toplevel) {
		return false;
	}
	const struct wlr_xdg_toplevel_state *state = &toplevel->current;
	hints[0] = (int32_t)state->min_width;
	hints[1] = (int32_t)state->min_height;
	hints[2] = (int32_t)state->max_width;
	hints[3] = (int32_t)state->max_height;
	return true;
}

static void impl_place_popup(struct rc_window *window, struct rc_window *parent,
	struct wire_popup_new *place)
{
	/* The app's positioner: its anchor rectangle is relative to the
	 * parent's window geometry, as the local popup's is. */
	struct wlr_xdg_popup *popup = xdg_window(window)->xdg->popup;
	const struct wlr_xdg_positioner *pos = &popup->positioner;
	*place = (struct wire_popup_new){
		.anchor_x = pos->anchor_rect.x,
		.anchor_y = pos->anchor_rect.y,
		.anchor_width = pos->anchor_rect.width,
		.anchor_height = pos->anchor_rect.height,
		.width = pos->size.width,
		.height = pos->size.height,
		.anchor = (uint32_t)pos->anchor,
		.gravity = (uint32_t)pos->gravity,
		.constraint_adjustment = (uint32_t)pos->constraint_adjustment,
		.offset_x = pos->offset.x,
		.offset_y = pos->offset.y,
		.flags = popup->seat ? WIRE_POPUP_GRAB : 0,
	};
}

static void impl_set_activated(struct rc_window *window, bool activated)
{
	struct wlr_xdg_surface *xdg = xdg_window(window)->xdg;
	if (xdg->role == WLR_XDG_SURFACE_ROLE_TOPLEVEL) {
		wlr_xdg_toplevel_set_activated(xdg, activated);
	}
}

static void impl_configure(struct rc_window *window, int32_t width, int32_t height, uint32_t states)
{
	struct xdg_window *xw = xdg_window(window);
	wlr_xdg_toplevel_set_maximized(xw->xdg, states & WIRE_STATE_MAXIMIZED);
	wlr_xdg_toplevel_set_fullscreen(xw->xdg, states & WIRE_STATE_FULLSCREEN);
	wlr_xdg_toplevel_set_resizing(xw->xdg, states & WIRE_STATE_RESIZING);
	/* Tiled: an app that draws its own decorations drops its shadow and
	 * rounded corners on those edges. */
	wlr_xdg_toplevel_set_tiled(xw->xdg,
		(states & WIRE_STATE_TILED_TOP ? WLR_EDGE_TOP : 0) |
			(states & WIRE_STATE_TILED_BOTTOM ? WLR_EDGE_BOTTOM : 0) |
			(states & WIRE_STATE_TILED_LEFT ? WLR_EDGE_LEFT : 0) |
			(states & WIRE_STATE_TILED_RIGHT ? WLR_EDGE_RIGHT : 0));
	if (width != xw->requested_width || height != xw->requested_height) {
		xw->requested_width = width;
		xw->requested_height = height;
		wlr_xdg_toplevel_set_size(xw->xdg, (uint32_t)width, (uint32_t)height);
	}
}

static void impl_close(struct rc_window *window)
{
	wlr_xdg_toplevel_send_close(xdg_window(window)->xdg);
}

static void impl_dismiss(struct rc_window *window)
{
	/* Dismissed locally (a click outside): the app hears popup_done. */
	wlr_xdg_popup_destroy(xdg_window(window)->xdg);
}

static const struct rc_window_impl xdg_impl = {
	.surface = impl_surface,
	.geometry = impl_geometry,
	.title = impl_title,
	.app_id = impl_app_id,
	.parent = impl_parent,
	.wants_maximized = impl_wants_maximized,
	.wants_fullscreen = impl_wants_fullscreen,
	.size_hints = impl_size_hints,
	.place_popup = impl_place_popup,
	.set_activated = impl_set_activated,
	.configure = impl_configure,
	.close = impl_close,
	.dismiss = impl_dismiss,
};

static void handle_map(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, map);
	if (xw->base.popup) {
		struct rc_window *parent =
			window_of_surface(xw->base.server, xw->xdg->popup->parent);
		xw->base.parent_id = parent ? parent->id : 0;
	}
	window_map(&xw->base);
}

static void handle_unmap(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, unmap);
	window_unmap(&xw->base);
}

/* Size hints are double-buffered state: they change with a commit. */
static void handle_commit(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, commit);
	announce_hints(&xw->base);
}

static void handle_set_title(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, set_title);
	window_titled(&xw->base);
}

static void handle_set_app_id(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, set_app_id);
	announce_app_id(&xw->base);
}

static void handle_set_parent(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, set_parent);
	announce_parent(&xw->base);
}

/* The app asks for a state: the viewer asks its compositor, whose answer
 * comes back as a configure. xdg-shell wants a configure in any case. */
static void handle_request_maximize(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, request_maximize);
	announce_request(&xw->base,
		xw->xdg->toplevel->requested.maximized ? WIRE_REQUEST_MAXIMIZE
						       : WIRE_REQUEST_UNMAXIMIZE);
	if (xw->xdg->added) {
		wlr_xdg_surface_schedule_configure(xw->xdg);
	}
}

static void handle_request_fullscreen(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, request_fullscreen);
	announce_request(&xw->base,
		xw->xdg->toplevel->requested.fullscreen ? WIRE_REQUEST_FULLSCREEN
							: WIRE_REQUEST_UNFULLSCREEN);
	if (xw->xdg->added) {
		wlr_xdg_surface_schedule_configure(xw->xdg);
	}
}

static void handle_request_minimize(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, request_minimize);
	announce_request(&xw->base, WIRE_REQUEST_MINIMIZE);
}

/* Title bars drawn by the app: its move, resize and menu go to the local
 * compositor, with the local press that caused them. */
static void handle_request_move(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, request_move);
	struct wlr_xdg_toplevel_move_event *event = data;
	announce_grab(&xw->base, WIRE_GRAB_MOVE, event->serial, 0, 0, 0);
}

static void handle_request_resize(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, request_resize);
	struct wlr_xdg_toplevel_resize_event *event = data;
	announce_grab(&xw->base, WIRE_GRAB_RESIZE, event->serial, event->edges, 0, 0);
}

static void handle_request_menu(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, request_menu);
	struct wlr_xdg_toplevel_show_window_menu_event *event = data;
	/* The app's position is surface-local; the viewer's, window-local. */
	struct wlr_box geometry;
	wlr_xdg_surface_get_geometry(xw->xdg, &geometry);
	announce_grab(&xw->base, WIRE_GRAB_MENU, event->serial, 0, (int32_t)event->x - geometry.x,
		(int32_t)event->y - geometry.y);
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct xdg_window *xw = wl_container_of(listener, xw, destroy);
	struct wl_listener *listeners[] = {&xw->map, &xw->unmap, &xw->destroy, &xw->commit,
		&xw->set_title, &xw->set_app_id, &xw->set_parent, &xw->request_maximize,
		&xw->request_fullscreen, &xw->request_minimize, &xw->request_move,
		&xw->request_resize, &xw->request_menu};
	for (size_t i = 0; i < sizeof(listeners) / sizeof(listeners[0]); i++) {
		wl_list_remove(&listeners[i]->link);
	}
	xw->xdg->data = NULL;
	window_finish(&xw->base);
	free(xw);
}

static void listen_to(struct wl_listener *listener, struct wl_signal *signal,
	wl_notify_func_t notify)
{
	listener->notify = notify;
	wl_signal_add(signal, listener);
}

static void handle_new_xdg_surface(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, new_xdg_surface);
	struct wlr_xdg_surface *xdg = data;
	if (xdg->role != WLR_XDG_SURFACE_ROLE_TOPLEVEL && xdg->role != WLR_XDG_SURFACE_ROLE_POPUP) {
		return;
	}
	struct xdg_window *xw = calloc(1, sizeof(*xw));
	if (!xw || !window_init(&xw->base, server, &xdg_impl)) {
		free(xw);
		return;
	}
	xw->xdg = xdg;
	xdg->data = &xw->base;
	xw->base.popup = xdg->role == WLR_XDG_SURFACE_ROLE_POPUP;
	listen_to(&xw->map, &xdg->events.map, handle_map);
	listen_to(&xw->unmap, &xdg->events.unmap, handle_unmap);
	listen_to(&xw->destroy, &xdg->events.destroy, handle_destroy);
	if (xw->base.popup) {
		struct wl_listener *unused[] = {&xw->commit, &xw->set_title, &xw->set_app_id,
			&xw->set_parent, &xw->request_maximize, &xw->request_fullscreen,
			&xw->request_minimize, &xw->request_move, &xw->request_resize,
			&xw->request_menu};
		for (size_t i = 0; i < sizeof(unused) / sizeof(unused[0]); i++) {
			wl_list_init(&unused[i]->link);
		}
	} else {
		struct wlr_xdg_toplevel *toplevel = xdg->toplevel;
		listen_to(&xw->commit, &xdg->surface->events.commit, handle_commit);
		listen_to(&xw->set_title, &toplevel->events.set_title, handle_set_title);
		listen_to(&xw->set_app_id, &toplevel->events.set_app_id, handle_set_app_id);
		listen_to(&xw->set_parent, &toplevel->events.set_parent, handle_set_parent);
		listen_to(&xw->request_maximize, &toplevel->events.request_maximize,
			handle_request_maximize);
		listen_to(&xw->request_fullscreen, &toplevel->events.request_fullscreen,
			handle_request_fullscreen);
		listen_to(&xw->request_minimize, &toplevel->events.request_minimize,
			handle_request_minimize);
		listen_to(&xw->request_move, &toplevel->events.request_move, handle_request_move);
		listen_to(&xw->request_resize, &toplevel->events.request_resize,
			handle_request_resize);
		listen_to(&xw->request_menu, &toplevel->events.request_show_window_menu,
			handle_request_menu);
	}
	log_debug("new %s, window %u", xw->base.popup ? "popup" : "toplevel", xw->base.id);
}

bool xdg_init(struct rc_server *server)
{
	struct wlr_xdg_shell *shell = wlr_xdg_shell_create(server->display);
	if (!shell) {
		return false;
	}
	server->new_xdg_surface.notify = handle_new_xdg_surface;
	wl_signal_add(&shell->events.new_surface, &server->new_xdg_surface);
	return true;
}

void xdg_finish(struct rc_server *server)
{
	wl_list_remove(&server->new_xdg_surface.link);
}
