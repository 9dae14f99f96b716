/*
 * The desktop around the windows (desktop.h). An idle inhibitor is the
 * app's on a surface; the window it belongs to keeps the viewers' screens
 * awake while any of them lives (window_idle_inhibit, to every viewer: a
 * person watching a film through a watcher's viewer wants the same). An
 * activation request, on a token wlroots made for this session's app,
 * goes to every viewer of the window (window_activate), whose desktop
 * decides between focus and urgency by its own rule.
 */
#include <stdlib.h>
#include <wlr/types/wlr_idle_inhibit_v1.h>
#include <wlr/types/wlr_xdg_activation_v1.h>
#include <wlr/types/wlr_xdg_foreign_registry.h>
#include <wlr/types/wlr_xdg_foreign_v1.h>
#include <wlr/types/wlr_xdg_foreign_v2.h>

#include "announce.h"
#include "desktop.h"
#include "log.h"

struct rc_idle_inhibitor {
	struct rc_server *server;
	struct wlr_idle_inhibitor_v1 *inhibitor;
	struct wl_listener destroy;
};

static bool inhibits(struct rc_server *server, struct rc_window *window,
	const struct wlr_idle_inhibitor_v1 *except)
{
	struct wlr_idle_inhibitor_v1 *inhibitor;
	wl_list_for_each(inhibitor, &server->idle->inhibitors, link)
	{
		if (inhibitor != except &&
			window_of_surface(server, inhibitor->surface) == window) {
			return true;
		}
	}
	return false;
}

void desktop_window_mapped(struct rc_window *window)
{
	struct rc_server *server = window->server;
	window->idle_inhibited = server->idle && !window->popup && inhibits(server, window, NULL);
}

/* The window's inhibitors changed (except: one that is ending). */
static void idle_changed(struct rc_server *server, struct wlr_surface *surface,
	const struct wlr_idle_inhibitor_v1 *except)
{
	struct rc_window *window = window_of_surface(server, surface);
	if (!window || window->popup || !window->mapped) {
		return; /* told when it maps (announce_window) */
	}
	bool on = inhibits(server, window, except);
	if (on != window->idle_inhibited) {
		window->idle_inhibited = on;
		log_debug("window %u: the app %s the screen awake", window->id,
			on ? "keeps" : "no longer keeps");
		announce_idle(window);
	}
}

static void handle_inhibitor_destroy(struct wl_listener *listener, void *data)
{
	struct rc_idle_inhibitor *ri = wl_container_of(listener, ri, destroy);
	idle_changed(ri->server, ri->inhibitor->surface, ri->inhibitor);
	wl_list_remove(&ri->destroy.link);
	free(ri);
}

static void handle_new_idle_inhibitor(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, new_idle_inhibitor);
	struct wlr_idle_inhibitor_v1 *inhibitor = data;
	struct rc_idle_inhibitor *ri = calloc(1, sizeof(*ri));
	if (!ri) {
		log_error("out of memory for an idle inhibitor: the screen may sleep");
		return;
	}
	ri->server = server;
	ri->inhibitor = inhibitor;
	ri->destroy.notify = handle_inhibitor_destroy;
	wl_signal_add(&inhibitor->events.destroy, &ri->destroy);
	idle_changed(server, inhibitor->surface, NULL);
}

static void handle_request_activate(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, request_activate);
	struct wlr_xdg_activation_v1_request_activate_event *event = data;
	struct rc_window *window = window_of_surface(server, event->surface);
	if (!window || window->popup || !window->mapped) {
		log_debug("an activation request for no window shown: ignored");
		return;
	}
	log_debug("window %u: the app asks that it be activated", window->id);
	announce_activate(window);
}

bool desktop_init(struct rc_server *server)
{
	server->idle = wlr_idle_inhibit_v1_create(server->display);
	if (server->idle) {
		server->new_idle_inhibitor.notify = handle_new_idle_inhibitor;
		wl_signal_add(&server->idle->events.new_inhibitor, &server->new_idle_inhibitor);
	}
	struct wlr_xdg_activation_v1 *activation = wlr_xdg_activation_v1_create(server->display);
	if (activation) {
		server->request_activate.notify = handle_request_activate;
		wl_signal_add(&activation->events.request_activate, &server->request_activate);
	}
	/* A portal's file chooser, or any app's dialog, on another app's
	 * window: wlroots sets the parent, which the viewers hear of as any
	 * parent (window_parent). */
	struct wlr_xdg_foreign_registry *registry =
		wlr_xdg_foreign_registry_create(server->display);
	if (registry) {
		wlr_xdg_foreign_v1_create(server->display, registry);
		wlr_xdg_foreign_v2_create(server->display, registry);
	}
	if (!server->idle || !activation || !registry) {
		log_warning("no idle-inhibit, xdg-activation or xdg-foreign for the apps: out of "
			    "memory");
	}
	return true;
}
