/*
 * X11 apps through Xwayland, started when the first X11 client connects
 * (wlroots' lazy mode). Each X11 window is a window like an xdg one; an
 * override-redirect window (a menu, a tooltip) is a popup of the X11 window
 * that last had focus, placed where the app put it.
 */
#include <stdlib.h>
#include <wlr/xwayland.h>
#include <xcb/xproto.h>

#include "log.h"
#include "server.h"

static void handle_map(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, map);
	struct rc_server *server = window->server;
	window->popup = window->xwayland->override_redirect;
	if (window->popup) {
		/* The focused X11 window, else any mapped one. */
		struct rc_window *parent = window_from_id(server, server->x11_focus);
		if (!parent || !parent->mapped || !parent->xwayland || parent->popup) {
			parent = NULL;
			struct rc_window *w;
			wl_list_for_each(w, &server->windows, link)
			{
				if (w->xwayland && w->mapped && !w->popup) {
					parent = w;
				}
			}
		}
		window->parent_id = parent ? parent->id : 0;
	}
	window_mapped(window);
}

/* X11 windows place and size themselves until they are shown; after that
 * the local compositor decides, through the viewer. */
static void handle_request_configure(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, request_configure);
	struct wlr_xwayland_surface_configure_event *event = data;
	wlr_xwayland_surface_configure(window->xwayland, event->x, event->y, event->width,
		event->height);
}

static void handle_request_maximize(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, request_maximize);
	struct wlr_xwayland_surface *x = window->xwayland;
	stream_window_request(window->server, window,
		x->maximized_horz && x->maximized_vert ? WIRE_REQUEST_MAXIMIZE
						       : WIRE_REQUEST_UNMAXIMIZE);
}

static void handle_request_fullscreen(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, request_fullscreen);
	stream_window_request(window->server, window,
		window->xwayland->fullscreen ? WIRE_REQUEST_FULLSCREEN : WIRE_REQUEST_UNFULLSCREEN);
}

static void handle_request_minimize(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, request_minimize);
	struct wlr_xwayland_minimize_event *event = data;
	if (event->minimize) {
		stream_window_request(window->server, window, WIRE_REQUEST_MINIMIZE);
	}
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, destroy);
	struct wl_listener *listeners[] = {&window->map, &window->unmap, &window->destroy,
		&window->set_title, &window->set_app_id, &window->set_parent,
		&window->request_configure, &window->request_maximize, &window->request_fullscreen,
		&window->request_minimize};
	for (size_t i = 0; i < sizeof(listeners) / sizeof(listeners[0]); i++) {
		wl_list_remove(&listeners[i]->link);
	}
	window->xwayland->data = NULL;
	window_destroyed(window);
}

static void handle_new_surface(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, new_x11_surface);
	struct wlr_xwayland_surface *x = data;
	struct rc_window *window = window_create(server);
	if (!window) {
		return;
	}
	window->xwayland = x;
	x->data = window;
	struct {
		struct wl_listener *listener;
		struct wl_signal *signal;
		wl_notify_func_t notify;
	} table[] = {
		{&window->map, &x->events.map, handle_map},
		{&window->unmap, &x->events.unmap, window_handle_unmap},
		{&window->destroy, &x->events.destroy, handle_destroy},
		{&window->set_title, &x->events.set_title, window_handle_set_title},
		{&window->set_app_id, &x->events.set_class, window_handle_set_app_id},
		{&window->set_parent, &x->events.set_parent, window_handle_set_parent},
		{&window->request_configure, &x->events.request_configure,
			handle_request_configure},
		{&window->request_maximize, &x->events.request_maximize, handle_request_maximize},
		{&window->request_fullscreen, &x->events.request_fullscreen,
			handle_request_fullscreen},
		{&window->request_minimize, &x->events.request_minimize, handle_request_minimize},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		table[i].listener->notify = table[i].notify;
		wl_signal_add(table[i].signal, table[i].listener);
	}
	log_debug("new X11 window %u%s", window->id,
		x->override_redirect ? " (override-redirect)" : "");
}

void xwayland_activate(struct rc_window *window, bool activated)
{
	struct wlr_xwayland_surface *x = window->xwayland;
	wlr_xwayland_surface_activate(x, activated);
	if (activated) {
		wlr_xwayland_surface_restack(x, NULL, XCB_STACK_MODE_ABOVE);
		window->server->x11_focus = window->id;
	}
}

void xwayland_configure(struct rc_window *window, int32_t width, int32_t height, uint32_t states)
{
	struct wlr_xwayland_surface *x = window->xwayland;
	if (width > 0 && height > 0 && width <= UINT16_MAX && height <= UINT16_MAX) {
		wlr_xwayland_surface_configure(x, x->x, x->y, (uint16_t)width, (uint16_t)height);
	}
	wlr_xwayland_surface_set_maximized(x, states & WIRE_STATE_MAXIMIZED);
	wlr_xwayland_surface_set_fullscreen(x, states & WIRE_STATE_FULLSCREEN);
}

void xwayland_close(struct rc_window *window)
{
	wlr_xwayland_surface_close(window->xwayland);
}

bool xwayland_init(struct rc_server *server)
{
	if (!server->xwayland_enabled) {
		return true;
	}
	server->xwayland = wlr_xwayland_create(server->display, server->compositor, true);
	if (!server->xwayland) {
		log_error("cannot set up Xwayland (see above); X11 apps will not run");
		return true;
	}
	wlr_xwayland_set_seat(server->xwayland, server->seat);
	server->new_x11_surface.notify = handle_new_surface;
	wl_signal_add(&server->xwayland->events.new_surface, &server->new_x11_surface);
	log_info("X11 apps connect to DISPLAY=%s (Xwayland starts when one does)",
		server->xwayland->display_name);
	return true;
}

void xwayland_finish(struct rc_server *server)
{
	if (!server->xwayland) {
		return;
	}
	wl_list_remove(&server->new_x11_surface.link);
	wlr_xwayland_destroy(server->xwayland);
	server->xwayland = NULL;
}
