/*
 * Window lifecycle. A shell creates a window when the app makes a toplevel,
 * a popup or an X11 window, maps and unmaps it, and finishes it when the
 * app's object goes; from map to unmap the viewer sees it.
 */
#include <stdlib.h>
#include <wlr/types/wlr_surface.h>

#include "announce.h"
#include "app.h"
#include "desktop.h"
#include "dnd.h"
#include "feedback.h"
#include "frame.h"
#include "input.h"
#include "log.h"
#include "output.h"
#include "record.h"
#include "tablet.h"
#include "viewers.h"
#include "window.h"

/* The window's frame interval: the refresh of the viewer's output it is on,
 * unless --fps says otherwise, within 1 to 240 Hz. */
static long frame_interval_ns(const struct rc_window *window)
{
	const struct rc_options *options = &window->server->options;
	if (options->fps_explicit || window->refresh_mhz == 0) {
		return 1000000000L / options->fps;
	}
	uint32_t mhz = window->refresh_mhz;
	mhz = mhz < 1000 ? 1000 : (mhz > 240000 ? 240000 : mhz);
	return (long)(1000000000000LL / mhz);
}

bool window_init(struct rc_window *window, struct rc_server *server,
	const struct rc_window_impl *impl)
{
	window->server = server;
	window->impl = impl;
	window->id = server->next_window_id++;
	window->scale = 1;
	if (!idmap_put(&server->window_ids, window->id, window)) {
		log_error("out of memory creating a window; the app's window will not show");
		return false;
	}
	pixman_region32_init(&window->damage);
	clock_init(&window->clock, server->loop, frame_interval_ns(window), frame_tick);
	wl_list_insert(server->windows.prev, &window->link);
	return true;
}

/* Every viewer's next frame is whole, and each encodes its own until they
 * are found in step again. */
static void reset_views(struct rc_window *window)
{
	for (int i = 0; i < RC_MAX_VIEWERS; i++) {
		struct rc_view *view = window->views[i];
		if (view) {
			encoder_reset(&view->encoder);
			view->lead = NULL;
			view->in_job = false;
		}
	}
}

static void hide(struct rc_window *window)
{
	struct rc_view *view;
	window_for_each_view(view, window, i)
	{
		/* Its frames in flight will never be acked. */
		connection_forget_window(view->viewer->conn, window->id);
	}
	announce_destroy(window);
	reset_views(window);
	for (int i = 0; i < RC_MAX_VIEWERS; i++) {
		if (window->views[i]) {
			pixman_region32_clear(&window->views[i]->damage);
		}
	}
}

void window_finish(struct rc_window *window)
{
	struct rc_server *server = window->server;
	if (window->mapped) {
		hide(window);
	}
	input_window_gone(server, window);
	dnd_window_gone(server, window);
	tablet_window_gone(server, window);
	wl_list_remove(&window->link);
	idmap_remove(&server->window_ids, window->id);
	clock_finish(&window->clock);
	/* The encoders first: a job may be reading the captured image. */
	views_free(window);
	feedback_window_finish(window);
	capture_finish(&window->capture);
	pixman_region32_fini(&window->damage);
	app_check_exit(server);
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
		*find = (struct find_surface){surface, sx, sy, true};
	}
}

bool window_surface_at(struct rc_window *window, struct wlr_surface *surface, int *x, int *y)
{
	struct wlr_surface *root = window_surface(window);
	struct find_surface find = {.surface = surface};
	if (root) {
		wlr_surface_for_each_surface(root, find_surface_iter, &find);
	}
	*x = find.sx - window->capture.geometry.x;
	*y = find.sy - window->capture.geometry.y;
	return find.found;
}

void window_damage_all(struct rc_window *window)
{
	pixman_region32_union_rect(&window->damage, &window->damage, 0, 0, WIRE_MAX_DIM,
		WIRE_MAX_DIM);
	clock_start(&window->clock);
}

void window_announce(struct rc_window *window, struct rc_viewer *viewer)
{
	struct rc_view *view = view_get(window, viewer, frame_encoded);
	if (view && announce_window(window, view)) {
		/* Its next frame is whole; the others' go on as they were. */
		encoder_reset(&view->encoder);
		pixman_region32_union_rect(&view->damage, &view->damage, 0, 0, WIRE_MAX_DIM,
			WIRE_MAX_DIM);
		clock_start(&window->clock);
	}
}

void window_announce_all(struct rc_window *window)
{
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &window->server->viewers, link)
	{
		if (viewer->conn->welcomed && !window_view(window, viewer)) {
			window_announce(window, viewer);
		}
	}
}

void window_titled(struct rc_window *window)
{
	announce_title(window);
	record_update(window->server);
}

void window_map(struct rc_window *window)
{
	window->mapped = true;
	if (window->popup) {
		/* Drawn at its parent's scale from the start. */
		struct rc_window *parent = window_from_id(window->server, window->parent_id);
		window->scale = parent ? parent->scale : 1;
	}
	output_window_enter(window);
	struct wlr_box geometry;
	window->impl->geometry(window, &geometry);
	capture_place(&window->capture, window->id, geometry, window->scale);
	log_debug("window %u mapped, %dx%d", window->id, window->capture.geometry.width,
		window->capture.geometry.height);
	window_damage_all(window);
	desktop_window_mapped(window);
	window_announce_all(window);
	record_update(window->server);
	if (window->server->app.stopping) {
		/* A window that appears while the session stops is asked too. */
		window_close(window);
	}
}

void window_unmap(struct rc_window *window)
{
	window->mapped = false;
	hide(window);
	record_update(window->server);
	input_window_gone(window->server, window);
	dnd_window_gone(window->server, window);
	tablet_window_gone(window->server, window);
	app_check_exit(window->server);
}

void window_set_output(struct rc_window *window, uint32_t refresh_mhz, int32_t scale)
{
	if (window->refresh_mhz != refresh_mhz) {
		window->refresh_mhz = refresh_mhz;
		clock_set_interval(&window->clock, frame_interval_ns(window));
		log_info("window %u: frame clock %.3f Hz%s", window->id,
			1e9 / window->clock.interval_ns,
			window->server->options.fps_explicit ? " (--fps)"
							     : " (the viewer's output)");
	}
	if (scale == window->scale || !output_window_can_enter(window->server, scale)) {
		return;
	}
	output_window_leave(window);
	window->scale = scale;
	output_window_enter(window);
	log_info("window %u: scale %d (the viewer's output)", window->id, scale);
	reset_views(window);
	window_damage_all(window);
	announce_scale(window);
}

void window_set_activated(struct rc_window *window, bool activated)
{
	if (!window->popup) {
		window->impl->set_activated(window, activated);
	}
}

void window_focus(struct rc_window *window)
{
	struct rc_window *other;
	wl_list_for_each(other, &window->server->windows, link)
	{
		if (other != window && other->mapped && other->id != window->parent_id) {
			window_set_activated(other, false);
		}
	}
	window_set_activated(window, true);
}

void window_configure(struct rc_window *window, int32_t width, int32_t height, uint32_t states)
{
	if (window->popup) {
		return;
	}
	/* The local compositor says which window is active, keyboard or not. */
	window_set_activated(window, states & WIRE_STATE_ACTIVATED);
	window->impl->configure(window, width, height, states);
}

void window_close(struct rc_window *window)
{
	if (!window->popup) {
		window->impl->close(window);
	}
}

void window_dismiss(struct rc_window *window)
{
	if (window->popup) {
		window->impl->dismiss(window);
	}
}
