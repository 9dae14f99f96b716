/*
 * xdg-decoration: an app that asks who draws its title bar is told "the
 * compositor" when the viewer's own compositor can draw it, and "you"
 * otherwise, so a window never has two title bars or none. Before the
 * first viewer, the answer is "the compositor". KDE's server decoration
 * (GTK 3's only way to ask) says the same as its default mode, which GTK 3
 * reads as it starts; a window whose app then asks for the server's is
 * decorated by the viewer's compositor.
 */
#include <stdlib.h>
#include <wlr/types/wlr_server_decoration.h>
#include <wlr/types/wlr_xdg_decoration_v1.h>
#include <wlr/types/wlr_xdg_shell.h>

#include "announce.h"
#include "decoration.h"
#include "log.h"

struct rc_decoration {
	struct rc_server *server;
	struct wlr_xdg_toplevel_decoration_v1 *decoration;
	struct wl_list link; // rc_server::decorations
	struct wl_listener request_mode;
	struct wl_listener destroy;
};

static struct rc_window *window_of(struct rc_decoration *d)
{
	return d->decoration->surface ? d->decoration->surface->data : NULL;
}

static void apply_mode(struct rc_decoration *d)
{
	bool server_side = d->server->server_decorations;
	wlr_xdg_toplevel_decoration_v1_set_mode(d->decoration,
		server_side ? WLR_XDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE
			    : WLR_XDG_TOPLEVEL_DECORATION_V1_MODE_CLIENT_SIDE);
	struct rc_window *window = window_of(d);
	if (window && window->server_side != server_side) {
		window->server_side = server_side;
		announce_decoration(window);
	}
}

static void handle_request_mode(struct wl_listener *listener, void *data)
{
	struct rc_decoration *d = wl_container_of(listener, d, request_mode);
	/* Whatever the app prefers, the viewer's compositor decides. */
	apply_mode(d);
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct rc_decoration *d = wl_container_of(listener, d, destroy);
	struct rc_window *window = window_of(d);
	if (window && window->server_side) {
		window->server_side = false;
		announce_decoration(window);
	}
	wl_list_remove(&d->request_mode.link);
	wl_list_remove(&d->destroy.link);
	wl_list_remove(&d->link);
	free(d);
}

static void handle_new_decoration(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, new_decoration);
	struct wlr_xdg_toplevel_decoration_v1 *decoration = data;
	struct rc_decoration *d = calloc(1, sizeof(*d));
	if (!d) {
		log_error("out of memory for a decoration; the app draws its own");
		return;
	}
	d->server = server;
	d->decoration = decoration;
	d->request_mode.notify = handle_request_mode;
	wl_signal_add(&decoration->events.request_mode, &d->request_mode);
	d->destroy.notify = handle_destroy;
	wl_signal_add(&decoration->events.destroy, &d->destroy);
	wl_list_insert(&server->decorations, &d->link);
	apply_mode(d);
}

/* KDE's server decoration of one surface. */
struct rc_kde_decoration {
	struct rc_server *server;
	struct wlr_server_decoration *decoration;
	struct wl_listener mode;
	struct wl_listener destroy;
};

static struct rc_window *kde_window(struct wlr_server_decoration *decoration)
{
	struct wlr_surface *surface = decoration->surface;
	if (!surface || !wlr_surface_is_xdg_surface(surface)) {
		return NULL;
	}
	struct wlr_xdg_surface *xdg = wlr_xdg_surface_from_wlr_surface(surface);
	return xdg && xdg->role == WLR_XDG_SURFACE_ROLE_TOPLEVEL ? xdg->data : NULL;
}

static void kde_set(struct rc_server *server, struct rc_window *window, bool server_side)
{
	if (window && window->server_side != server_side) {
		window->server_side = server_side;
		announce_decoration(window);
	}
}

static void handle_kde_mode(struct wl_listener *listener, void *data)
{
	struct rc_kde_decoration *d = wl_container_of(listener, d, mode);
	/* The app's choice stands (the protocol lets it); the viewer's
	 * compositor draws the title bar only where it can. */
	kde_set(d->server, kde_window(d->decoration),
		d->decoration->mode == WLR_SERVER_DECORATION_MANAGER_MODE_SERVER &&
			d->server->server_decorations);
}

static void handle_kde_destroy(struct wl_listener *listener, void *data)
{
	struct rc_kde_decoration *d = wl_container_of(listener, d, destroy);
	struct rc_window *window = kde_window(d->decoration);
	if (window && window->server_side &&
		d->decoration->mode == WLR_SERVER_DECORATION_MANAGER_MODE_SERVER) {
		kde_set(d->server, window, false);
	}
	wl_list_remove(&d->mode.link);
	wl_list_remove(&d->destroy.link);
	free(d);
}

static void handle_new_kde_decoration(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, new_kde_decoration);
	struct wlr_server_decoration *decoration = data;
	struct rc_kde_decoration *d = calloc(1, sizeof(*d));
	if (!d) {
		log_error("out of memory for a decoration; the app draws its own");
		return;
	}
	d->server = server;
	d->decoration = decoration;
	d->mode.notify = handle_kde_mode;
	wl_signal_add(&decoration->events.mode, &d->mode);
	d->destroy.notify = handle_kde_destroy;
	wl_signal_add(&decoration->events.destroy, &d->destroy);
	handle_kde_mode(&d->mode, NULL);
}

bool decoration_init(struct rc_server *server)
{
	wl_list_init(&server->decorations);
	/* Until a viewer says (and after, what the last one said): most
	 * desktops draw title bars, and apps that hear "draw your own" may
	 * switch toolkits for good (SDL2 to libdecor) before a viewer comes. */
	server->server_decorations = true;
	struct wlr_xdg_decoration_manager_v1 *manager =
		wlr_xdg_decoration_manager_v1_create(server->display);
	if (!manager) {
		return false;
	}
	server->new_decoration.notify = handle_new_decoration;
	wl_signal_add(&manager->events.new_toplevel_decoration, &server->new_decoration);
	server->kde_decorations = wlr_server_decoration_manager_create(server->display);
	if (!server->kde_decorations) {
		return false;
	}
	wlr_server_decoration_manager_set_default_mode(server->kde_decorations,
		WLR_SERVER_DECORATION_MANAGER_MODE_SERVER);
	server->new_kde_decoration.notify = handle_new_kde_decoration;
	wl_signal_add(&server->kde_decorations->events.new_decoration, &server->new_kde_decoration);
	return true;
}

void decoration_set_viewer(struct rc_server *server, bool server_decorations)
{
	if (server->server_decorations == server_decorations) {
		return;
	}
	server->server_decorations = server_decorations;
	/* Apps that start from now on (GTK 3 reads it once). */
	wlr_server_decoration_manager_set_default_mode(server->kde_decorations,
		server_decorations ? WLR_SERVER_DECORATION_MANAGER_MODE_SERVER
				   : WLR_SERVER_DECORATION_MANAGER_MODE_CLIENT);
	struct rc_decoration *d;
	wl_list_for_each(d, &server->decorations, link)
	{
		apply_mode(d);
	}
}

/* The viewer's compositor will not draw this window's decorations after
 * all: the app draws its own. */
void decoration_viewer_refused(struct rc_server *server, uint32_t window_id)
{
	struct rc_decoration *d;
	wl_list_for_each(d, &server->decorations, link)
	{
		struct rc_window *window = window_of(d);
		if (window && window->id == window_id && window->server_side) {
			wlr_xdg_toplevel_decoration_v1_set_mode(d->decoration,
				WLR_XDG_TOPLEVEL_DECORATION_V1_MODE_CLIENT_SIDE);
			window->server_side = false;
			log_info("window %u: the viewer's compositor will not decorate it; "
				 "the app draws its own title bar",
				window_id);
		}
	}
}

void decoration_finish(struct rc_server *server)
{
	wl_list_remove(&server->new_decoration.link);
	wl_list_remove(&server->new_kde_decoration.link);
}
