/*
 * Windows: one rc_window per xdg toplevel or popup (and, through
 * xwayland.c, per X11 window), what they are made of whichever shell made
 * them, and damage tracking for every surface in a window's tree.
 */

#include <stdlib.h>
#include <wlr/types/wlr_compositor.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/types/wlr_xdg_shell.h>
#include <wlr/util/region.h>
#include <wlr/xwayland.h>

#include "log.h"
#include "server.h"

struct rc_window *window_from_id(struct rc_server *server, uint32_t id)
{
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		if (window->id == id) {
			return window;
		}
	}
	return NULL;
}

void window_damage_all(struct rc_window *window)
{
	pixman_region32_union_rect(&window->damage, &window->damage, 0, 0, WIRE_MAX_DIM,
		WIRE_MAX_DIM);
	capture_start_clock(window);
}

/* The window a surface belongs to: its root's toplevel or popup, or X11
 * window. Each popup is a window of its own, shown as a local popup. */
static struct rc_window *window_of_surface(struct wlr_surface *surface)
{
	struct wlr_surface *root = surface ? wlr_surface_get_root_surface(surface) : NULL;
	if (root && wlr_surface_is_xdg_surface(root)) {
		struct wlr_xdg_surface *xdg = wlr_xdg_surface_from_wlr_surface(root);
		return xdg ? xdg->data : NULL;
	}
	if (root && wlr_surface_is_xwayland_surface(root)) {
		struct wlr_xwayland_surface *x = wlr_xwayland_surface_from_wlr_surface(root);
		return x ? x->data : NULL;
	}
	return NULL;
}

struct wlr_surface *window_surface(const struct rc_window *window)
{
	return window->xwayland ? window->xwayland->surface : window->xdg_surface->surface;
}

void window_get_geometry(const struct rc_window *window, struct wlr_box *box)
{
	if (window->xwayland) {
		/* X11 windows are their surface, no shadows around. */
		struct wlr_surface *surface = window->xwayland->surface;
		*box = (struct wlr_box){0, 0, surface ? surface->current.width : 0,
			surface ? surface->current.height : 0};
		return;
	}
	wlr_xdg_surface_get_geometry(window->xdg_surface, box);
}

const char *window_title(const struct rc_window *window)
{
	const char *title = window->xwayland ? window->xwayland->title
		: window->popup		     ? NULL
					     : window->xdg_surface->toplevel->title;
	return title ? title : "";
}

const char *window_app_id(const struct rc_window *window)
{
	const char *app_id = window->xwayland ? window->xwayland->class
		: window->popup		      ? NULL
					      : window->xdg_surface->toplevel->app_id;
	return app_id ? app_id : "";
}

struct rc_window *window_parent(const struct rc_window *window)
{
	if (window->popup) {
		return NULL;
	}
	if (window->xwayland) {
		struct wlr_xwayland_surface *parent = window->xwayland->parent;
		return parent ? parent->data : NULL;
	}
	struct wlr_xdg_surface *parent = window->xdg_surface->toplevel->parent;
	return parent ? parent->data : NULL;
}

bool window_wants_maximized(const struct rc_window *window, bool first)
{
	if (window->xwayland) {
		return window->xwayland->maximized_horz && window->xwayland->maximized_vert;
	}
	const struct wlr_xdg_toplevel *toplevel = window->xdg_surface->toplevel;
	return first ? toplevel->requested.maximized : toplevel->current.maximized;
}

bool window_wants_fullscreen(const struct rc_window *window, bool first)
{
	if (window->xwayland) {
		return window->xwayland->fullscreen;
	}
	const struct wlr_xdg_toplevel *toplevel = window->xdg_surface->toplevel;
	return first ? toplevel->requested.fullscreen : toplevel->current.fullscreen;
}

struct find_surface {
	struct wlr_surface *surface;
	int sx, sy;
	bool found;
};

static void find_surface_iter(struct wlr_surface *surface, int sx, int sy, void *data)
{
	struct find_surface *find = data;
	if (surface == find->surface && !find->found) {
		find->sx = sx;
		find->sy = sy;
		find->found = true;
	}
}

/* Commits per second above which an app is said to flood. Each commit only
 * adds damage, so flooding costs the app's own CPU and a little of ours;
 * frames still go out at the window's clock with the newest pixels. The
 * clock is read once per FLOOD_COMMITS commits, not on each: a flood of
 * them is exactly when this path is hot. */
#define FLOOD_COMMITS 1024

static void note_commit_rate(struct rc_window *window)
{
	if (++window->rate_commits < FLOOD_COMMITS) {
		return;
	}
	uint64_t now = server_time_usec();
	uint64_t elapsed = now - window->rate_start_us;
	if (elapsed < 1000000 && !window->flood_logged) {
		const char *app_id = window->popup ? "a popup" : window_app_id(window);
		log_error("window %u (%s) commits %llu times a second without waiting for frame "
			  "callbacks; only its newest content is sent",
			window->id, *app_id ? app_id : "no app id",
			(unsigned long long)(FLOOD_COMMITS * 1000000ull / (elapsed ? elapsed : 1)));
		window->flood_logged = true;
	}
	window->rate_commits = 0;
	window->rate_start_us = now;
}

static void handle_surface_commit(struct wl_listener *listener, void *data)
{
	struct rc_surface *rs = wl_container_of(listener, rs, commit);
	struct rc_window *window = window_of_surface(rs->surface);
	if (!window || !window->mapped) {
		return;
	}
	if (rs->surface == window_surface(window)) {
		window->stat_commits++;
		note_commit_rate(window);
		if (!window->popup && !window->xwayland) {
			stream_window_hints(rs->server, window, false);
		}
	}
	struct find_surface find = {.surface = rs->surface};
	wlr_surface_for_each_surface(window_surface(window), find_surface_iter, &find);
	if (!find.found) {
		/* Not in the drawn tree (an unmapped subsurface): nothing to show. */
		return;
	}
	pixman_region32_t damage;
	pixman_region32_init(&damage);
	wlr_surface_get_effective_damage(rs->surface, &damage);
	pixman_region32_translate(&damage, find.sx - window->geometry.x,
		find.sy - window->geometry.y);
	if (window->scale != 1) {
		wlr_region_scale(&damage, &damage, (float)window->scale);
	}
	pixman_region32_union(&window->damage, &window->damage, &damage);
	pixman_region32_fini(&damage);
	capture_start_clock(window);
}

static void handle_subsurface_change(struct rc_subsurface *rss)
{
	struct rc_window *window = window_of_surface(rss->subsurface->parent);
	if (window && window->mapped) {
		/* Placement changes have no fine damage: redraw all; the diff
		 * against the last frame sent keeps the bytes small. */
		window_damage_all(window);
	}
}

static void handle_subsurface_map(struct wl_listener *listener, void *data)
{
	struct rc_subsurface *rss = wl_container_of(listener, rss, map);
	struct rc_window *window = window_of_surface(rss->subsurface->parent);
	if (window && window->mapped) {
		output_window_enter(window);
	}
	handle_subsurface_change(rss);
}

static void handle_subsurface_unmap(struct wl_listener *listener, void *data)
{
	struct rc_subsurface *rss = wl_container_of(listener, rss, unmap);
	handle_subsurface_change(rss);
}

static void handle_subsurface_destroy(struct wl_listener *listener, void *data)
{
	struct rc_subsurface *rss = wl_container_of(listener, rss, destroy);
	wl_list_remove(&rss->map.link);
	wl_list_remove(&rss->unmap.link);
	wl_list_remove(&rss->destroy.link);
	free(rss);
}

static void handle_new_subsurface(struct wl_listener *listener, void *data)
{
	struct rc_surface *rs = wl_container_of(listener, rs, new_subsurface);
	struct wlr_subsurface *subsurface = data;
	struct rc_subsurface *rss = calloc(1, sizeof(*rss));
	if (!rss) {
		log_error("out of memory tracking a subsurface");
		return;
	}
	rss->server = rs->server;
	rss->subsurface = subsurface;
	rss->map.notify = handle_subsurface_map;
	wl_signal_add(&subsurface->events.map, &rss->map);
	rss->unmap.notify = handle_subsurface_unmap;
	wl_signal_add(&subsurface->events.unmap, &rss->unmap);
	rss->destroy.notify = handle_subsurface_destroy;
	wl_signal_add(&subsurface->events.destroy, &rss->destroy);
}

static void handle_surface_destroy(struct wl_listener *listener, void *data)
{
	struct rc_surface *rs = wl_container_of(listener, rs, destroy);
	wl_list_remove(&rs->commit.link);
	wl_list_remove(&rs->new_subsurface.link);
	wl_list_remove(&rs->destroy.link);
	free(rs);
}

static void handle_new_surface(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, new_surface);
	struct wlr_surface *surface = data;
	struct rc_surface *rs = calloc(1, sizeof(*rs));
	if (!rs) {
		log_error("out of memory tracking a surface");
		return;
	}
	rs->server = server;
	rs->surface = surface;
	rs->commit.notify = handle_surface_commit;
	wl_signal_add(&surface->events.commit, &rs->commit);
	rs->new_subsurface.notify = handle_new_subsurface;
	wl_signal_add(&surface->events.new_subsurface, &rs->new_subsurface);
	rs->destroy.notify = handle_surface_destroy;
	wl_signal_add(&surface->events.destroy, &rs->destroy);
}

void window_mapped(struct rc_window *window)
{
	window->mapped = true;
	if (window->popup) {
		/* Drawn at its parent's scale from the start. */
		struct rc_window *parent = window_from_id(window->server, window->parent_id);
		window->scale = parent ? parent->scale : 1;
	}
	output_window_enter(window);
	window_get_geometry(window, &window->geometry);
	log_debug("window %u mapped, %dx%d", window->id, window->geometry.width,
		window->geometry.height);
	window->need_reset = true;
	window_damage_all(window);
	stream_window_new(window->server, window);
}

static void handle_map(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, map);
	if (window->popup) {
		struct rc_window *parent = window_of_surface(window->xdg_surface->popup->parent);
		window->parent_id = parent ? parent->id : 0;
	}
	window_mapped(window);
}

void window_unmapped(struct rc_window *window)
{
	window->mapped = false;
	stream_window_destroy(window->server, window);
	input_window_gone(window->server, window);
	server_check_exit(window->server);
}

void window_handle_unmap(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, unmap);
	window_unmapped(window);
}

void window_handle_set_title(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, set_title);
	stream_window_title(window->server, window, false);
}

void window_handle_set_app_id(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, set_app_id);
	stream_window_title(window->server, window, true);
}

void window_handle_set_parent(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, set_parent);
	stream_window_parent(window->server, window);
}

/* The app asks for a state: the viewer asks its compositor, whose answer
 * comes back as a configure. xdg-shell wants a configure in any case. */
static void handle_request_maximize(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, request_maximize);
	stream_window_request(window->server, window,
		window->xdg_surface->toplevel->requested.maximized ? WIRE_REQUEST_MAXIMIZE
								   : WIRE_REQUEST_UNMAXIMIZE);
	if (window->xdg_surface->added) {
		wlr_xdg_surface_schedule_configure(window->xdg_surface);
	}
}

static void handle_request_fullscreen(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, request_fullscreen);
	stream_window_request(window->server, window,
		window->xdg_surface->toplevel->requested.fullscreen ? WIRE_REQUEST_FULLSCREEN
								    : WIRE_REQUEST_UNFULLSCREEN);
	if (window->xdg_surface->added) {
		wlr_xdg_surface_schedule_configure(window->xdg_surface);
	}
}

static void handle_request_minimize(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, request_minimize);
	stream_window_request(window->server, window, WIRE_REQUEST_MINIMIZE);
}

void window_destroyed(struct rc_window *window)
{
	struct rc_server *server = window->server;
	if (window->mapped) {
		stream_window_destroy(server, window);
	}
	input_window_gone(server, window);
	wl_list_remove(&window->link);
	capture_finish(window);
	pixman_region32_fini(&window->damage);
	free(window);
	server_check_exit(server);
}

struct rc_window *window_create(struct rc_server *server)
{
	struct rc_window *window = calloc(1, sizeof(*window));
	if (!window) {
		log_error("out of memory creating a window; the app's window will not show");
		return NULL;
	}
	window->server = server;
	window->id = server->next_window_id++;
	window->timer_fd = -1;
	window->scale = 1;
	pixman_region32_init(&window->damage);
	wl_list_insert(server->windows.prev, &window->link);
	return window;
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct rc_window *window = wl_container_of(listener, window, destroy);
	wl_list_remove(&window->map.link);
	wl_list_remove(&window->unmap.link);
	wl_list_remove(&window->destroy.link);
	wl_list_remove(&window->set_title.link);
	wl_list_remove(&window->set_app_id.link);
	wl_list_remove(&window->set_parent.link);
	wl_list_remove(&window->request_maximize.link);
	wl_list_remove(&window->request_fullscreen.link);
	wl_list_remove(&window->request_minimize.link);
	window->xdg_surface->data = NULL;
	window_destroyed(window);
}

static void handle_new_xdg_surface(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, new_xdg_surface);
	struct wlr_xdg_surface *xdg_surface = data;
	if (xdg_surface->role != WLR_XDG_SURFACE_ROLE_TOPLEVEL &&
		xdg_surface->role != WLR_XDG_SURFACE_ROLE_POPUP) {
		return;
	}
	struct rc_window *window = window_create(server);
	if (!window) {
		return;
	}
	window->xdg_surface = xdg_surface;
	xdg_surface->data = window;

	window->map.notify = handle_map;
	wl_signal_add(&xdg_surface->events.map, &window->map);
	window->unmap.notify = window_handle_unmap;
	wl_signal_add(&xdg_surface->events.unmap, &window->unmap);
	window->destroy.notify = handle_destroy;
	wl_signal_add(&xdg_surface->events.destroy, &window->destroy);
	window->popup = xdg_surface->role == WLR_XDG_SURFACE_ROLE_POPUP;
	if (window->popup) {
		wl_list_init(&window->set_title.link);
		wl_list_init(&window->set_app_id.link);
		wl_list_init(&window->set_parent.link);
		wl_list_init(&window->request_maximize.link);
		wl_list_init(&window->request_fullscreen.link);
		wl_list_init(&window->request_minimize.link);
	} else {
		window->set_title.notify = window_handle_set_title;
		wl_signal_add(&xdg_surface->toplevel->events.set_title, &window->set_title);
		window->set_app_id.notify = window_handle_set_app_id;
		wl_signal_add(&xdg_surface->toplevel->events.set_app_id, &window->set_app_id);
		window->set_parent.notify = window_handle_set_parent;
		wl_signal_add(&xdg_surface->toplevel->events.set_parent, &window->set_parent);
		struct wlr_xdg_toplevel *toplevel = xdg_surface->toplevel;
		window->request_maximize.notify = handle_request_maximize;
		wl_signal_add(&toplevel->events.request_maximize, &window->request_maximize);
		window->request_fullscreen.notify = handle_request_fullscreen;
		wl_signal_add(&toplevel->events.request_fullscreen, &window->request_fullscreen);
		window->request_minimize.notify = handle_request_minimize;
		wl_signal_add(&toplevel->events.request_minimize, &window->request_minimize);
	}
	log_debug("new %s, window %u", window->popup ? "popup" : "toplevel", window->id);
}

void xdg_init(struct rc_server *server)
{
	wl_list_init(&server->windows);
	server->next_window_id = 1;
	server->new_surface.notify = handle_new_surface;
	wl_signal_add(&server->compositor->events.new_surface, &server->new_surface);
	server->new_xdg_surface.notify = handle_new_xdg_surface;
	wl_signal_add(&server->xdg_shell->events.new_surface, &server->new_xdg_surface);
}
