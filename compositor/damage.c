/*
 * Commits to damage. A commit anywhere in a window's surface tree damages
 * the window where that surface is drawn; subsurfaces that map, unmap or
 * move have no fine damage, and redraw the whole window (the diff against
 * the viewer's copy keeps the bytes small).
 */
#include <stdlib.h>
#include <string.h>
#include <wlr/types/wlr_compositor.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/util/region.h>

#include "damage.h"
#include "log.h"
#include "monotonic.h"
#include "output.h"
#include "texture.h"
#include "window.h"

/* Every wl_surface. */
struct rc_surface {
	struct rc_server *server;
	struct wlr_surface *surface;
	struct wl_listener commit;
	struct wl_listener new_subsurface;
	struct wl_listener destroy;
};

struct rc_subsurface {
	struct rc_server *server;
	struct wlr_subsurface *subsurface;
	struct wl_listener map;
	struct wl_listener unmap;
	struct wl_listener destroy;
};

/* Commits per second above which an app is said to flood. Each commit only
 * adds damage, so flooding costs the app's own CPU and a little of ours;
 * frames still go out at the window's clock with the newest pixels. The
 * clock is read once per FLOOD_COMMITS commits, not on each: a flood of
 * them is exactly when this path is hot. */
#define FLOOD_COMMITS 1024

static void note_commit_rate(struct rc_window *window)
{
	window->stat_commits++;
	/* When the next frame's content began: the clock is read once a
	 * frame, not once a commit. */
	if (!window->drawn_us) {
		window->drawn_us = monotonic_usec();
	}
	if (++window->rate_commits < FLOOD_COMMITS) {
		return;
	}
	uint64_t now = monotonic_usec();
	uint64_t elapsed = now - window->rate_start_us;
	if (elapsed < 1000000 && !window->flood_logged) {
		const char *app_id = window->impl->app_id(window);
		char name[WIRE_MAX_APP_ID * 4 + 1];
		log_escape(name, sizeof(name), app_id, strnlen(app_id, WIRE_MAX_APP_ID));
		log_warning("window %u (%s) commits %llu times a second without waiting for frame "
			    "callbacks; only its newest content is sent",
			window->id, *name ? name : "no app id",
			(unsigned long long)(FLOOD_COMMITS * 1000000ull / (elapsed ? elapsed : 1)));
		window->flood_logged = true;
	}
	window->rate_commits = 0;
	window->rate_start_us = now;
}

static void handle_surface_commit(struct wl_listener *listener, void *data)
{
	struct rc_surface *rs = wl_container_of(listener, rs, commit);
	texture_surface_commit(rs->surface);
	struct rc_window *window = window_of_surface(rs->server, rs->surface);
	if (!window || !window->mapped) {
		/* No frame will copy its buffer: copy and release it now.
		 * A window's surfaces keep theirs until its next tick. */
		texture_surface_settle(rs->surface);
		return;
	}
	struct wlr_surface *root = window_surface(window);
	if (rs->surface == root) {
		note_commit_rate(window);
	}
	int x, y;
	if (!window_surface_at(window, rs->surface, &x, &y)) {
		/* Not in the drawn tree (an unmapped subsurface): nothing to show. */
		texture_surface_settle(rs->surface);
		return;
	}
	pixman_region32_t damage;
	pixman_region32_init(&damage);
	wlr_surface_get_effective_damage(rs->surface, &damage);
	pixman_region32_translate(&damage, x, y);
	if (window->scale != 1) {
		wlr_region_scale(&damage, &damage, (float)window->scale);
	}
	if (pixman_region32_not_empty(&damage)) {
		window->pictures++;
	}
	pixman_region32_union(&window->damage, &window->damage, &damage);
	pixman_region32_fini(&damage);
	/* The app's answer to the viewer's newest input, if it waited for one. */
	window->input_mark_armed = window->input_mark != 0;
	clock_start(&window->clock);
}

static void subsurface_changed(struct rc_subsurface *rss, bool mapped)
{
	struct rc_window *window = window_of_surface(rss->server, rss->subsurface->parent);
	if (window && window->mapped) {
		if (mapped) {
			output_window_enter(window);
		}
		window_damage_all(window);
	}
}

static void handle_subsurface_map(struct wl_listener *listener, void *data)
{
	struct rc_subsurface *rss = wl_container_of(listener, rss, map);
	subsurface_changed(rss, true);
}

static void handle_subsurface_unmap(struct wl_listener *listener, void *data)
{
	struct rc_subsurface *rss = wl_container_of(listener, rss, unmap);
	subsurface_changed(rss, false);
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

void damage_init(struct rc_server *server)
{
	server->new_surface.notify = handle_new_surface;
	wl_signal_add(&server->compositor->events.new_surface, &server->new_surface);
}

void damage_finish(struct rc_server *server)
{
	wl_list_remove(&server->new_surface.link);
}
