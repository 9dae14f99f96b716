/*
 * Resize edges for windows that draw their own decorations. Such an app
 * keeps its resize borders in the shadow around its window geometry, and
 * the shadow stays remote (the capture is the window geometry). So while a
 * local window floats with no title bar of the local compositor's, an
 * invisible band of RV_EDGE logical pixels around it takes the pointer: the
 * local cursor shows which edge, and a press (or a touch) there resizes the
 * window through the local compositor, as a local app's border would.
 *
 * The band is four subsurfaces below the window's surface, one strip per
 * side, each one transparent pixel stretched by wp_viewporter; the window
 * geometry set on the window leaves them out, so the local compositor
 * places and tiles the window alone. Strips, not one surface under the
 * whole window: a surface there is blended again under every frame the
 * window shows (a software compositor spent about a millisecond on it per
 * 1080p frame), and strips lie outside the window's damage.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <wayland-cursor.h>

#include "edges.h"
#include "log.h"
#include "shm.h"
#include "viewporter-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define RV_EDGE 8 /* the band's width, logical pixels */
#define RV_CORNER 20 /* how far along an edge a corner reaches */

static bool wanted(struct rv_window *window)
{
	struct rv_viewer *viewer = window->viewer;
	uint32_t covering = WIRE_STATE_MAXIMIZED | WIRE_STATE_FULLSCREEN | WIRE_STATES_TILED;
	return window->xdg_toplevel && viewer->viewporter && viewer->subcompositor &&
		window->has_content && !window->locally_decorated &&
		!(window->configure_states & covering);
}

static struct wl_buffer *clear_pixel(struct rv_viewer *viewer)
{
	if (!viewer->clear_pixel) {
		void *data;
		viewer->clear_pixel = shm_buffer_create(viewer, 1, 1, false, &data);
		if (viewer->clear_pixel) {
			memset(data, 0, 4);
			munmap(data, 4);
		}
	}
	return viewer->clear_pixel;
}

static void drop(struct rv_window *window)
{
	for (int i = 0; i < 4; i++) {
		if (window->edge_viewport[i]) {
			wp_viewport_destroy(window->edge_viewport[i]);
		}
		if (window->edge_subsurface[i]) {
			wl_subsurface_destroy(window->edge_subsurface[i]);
		}
		if (window->edge_surface[i]) {
			wl_surface_destroy(window->edge_surface[i]);
		}
		window->edge_viewport[i] = NULL;
		window->edge_subsurface[i] = NULL;
		window->edge_surface[i] = NULL;
	}
	window->edge_width = window->edge_height = 0;
}

/* Strip i of a w x h window: its place in the band (origin at the band's
 * top left corner, RV_EDGE above and left of the window) and its size. */
static void strip_box(int i, int32_t w, int32_t h, int32_t box[4])
{
	switch (i) {
	case 0: /* top, with both corners */
		box[0] = 0, box[1] = 0, box[2] = w + 2 * RV_EDGE, box[3] = RV_EDGE;
		break;
	case 1: /* bottom, with both corners */
		box[0] = 0, box[1] = RV_EDGE + h, box[2] = w + 2 * RV_EDGE, box[3] = RV_EDGE;
		break;
	case 2: /* left */
		box[0] = 0, box[1] = RV_EDGE, box[2] = RV_EDGE, box[3] = h;
		break;
	default: /* right */
		box[0] = RV_EDGE + w, box[1] = RV_EDGE, box[2] = RV_EDGE, box[3] = h;
		break;
	}
}

void edges_update(struct rv_window *window, bool commit)
{
	struct rv_viewer *viewer = window->viewer;
	int32_t w, h;
	window_logical_size(window, &w, &h);
	bool changed = false;
	if (!wanted(window) || w <= 0 || h <= 0) {
		changed = window->edge_surface[0] != NULL;
		drop(window);
	} else if (!window->edge_surface[0] || w != window->edge_width ||
		h != window->edge_height) {
		struct wl_buffer *pixel = clear_pixel(viewer);
		if (!pixel) {
			return;
		}
		for (int i = 0; i < 4; i++) {
			int32_t box[4];
			strip_box(i, w, h, box);
			if (!window->edge_surface[i]) {
				window->edge_surface[i] =
					wl_compositor_create_surface(viewer->compositor);
				window->edge_subsurface[i] =
					wl_subcompositor_get_subsurface(viewer->subcompositor,
						window->edge_surface[i], window->surface);
				wl_subsurface_place_below(window->edge_subsurface[i],
					window->surface);
				window->edge_viewport[i] =
					wp_viewporter_get_viewport(viewer->viewporter,
						window->edge_surface[i]);
				wl_surface_attach(window->edge_surface[i], pixel, 0, 0);
			}
			/* Positions apply with the parent's next commit. */
			wl_subsurface_set_position(window->edge_subsurface[i], box[0] - RV_EDGE,
				box[1] - RV_EDGE);
			wp_viewport_set_destination(window->edge_viewport[i], box[2], box[3]);
			wl_surface_damage_buffer(window->edge_surface[i], 0, 0, 1, 1);
			wl_surface_commit(window->edge_surface[i]);
		}
		window->edge_width = w;
		window->edge_height = h;
		changed = true;
	}
	if (w > 0 && h > 0 && (w != window->geometry_width || h != window->geometry_height)) {
		/* The window is the picture, never the band around it; set with
		 * each new size, as a maximized window must match its configure. */
		xdg_surface_set_window_geometry(window->xdg_surface, 0, 0, w, h);
		window->geometry_width = w;
		window->geometry_height = h;
		changed = true;
	}
	if (changed && commit) {
		wl_surface_commit(window->surface);
	}
}

void edges_finish(struct rv_window *window)
{
	drop(window);
}

struct rv_window *edges_window(struct rv_viewer *viewer, struct wl_surface *surface)
{
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		for (int i = 0; i < 4 && surface; i++) {
			if (window->edge_surface[i] == surface) {
				return window;
			}
		}
	}
	return NULL;
}

void edges_strip_origin(struct rv_window *window, struct wl_surface *surface, int32_t *x,
	int32_t *y)
{
	*x = *y = 0;
	for (int i = 0; i < 4; i++) {
		if (window->edge_surface[i] == surface) {
			int32_t box[4];
			strip_box(i, window->edge_width, window->edge_height, box);
			*x = box[0];
			*y = box[1];
		}
	}
}

uint32_t edges_at(struct rv_window *window, int32_t origin_x, int32_t origin_y, wl_fixed_t sx,
	wl_fixed_t sy)
{
	/* In window coordinates: the band lies outside 0..w, 0..h. */
	double x = wl_fixed_to_double(sx) + origin_x - RV_EDGE;
	double y = wl_fixed_to_double(sy) + origin_y - RV_EDGE;
	int32_t w = window->edge_width, h = window->edge_height;
	uint32_t edges = 0;
	if (y < 0) {
		edges |= XDG_TOPLEVEL_RESIZE_EDGE_TOP;
	} else if (y >= h) {
		edges |= XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM;
	}
	if (x < 0) {
		edges |= XDG_TOPLEVEL_RESIZE_EDGE_LEFT;
	} else if (x >= w) {
		edges |= XDG_TOPLEVEL_RESIZE_EDGE_RIGHT;
	}
	/* Corners reach a little along each edge, where a hand aims. */
	if (edges == XDG_TOPLEVEL_RESIZE_EDGE_TOP || edges == XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM) {
		edges |= x < RV_CORNER ? XDG_TOPLEVEL_RESIZE_EDGE_LEFT
				       : (x >= w - RV_CORNER ? XDG_TOPLEVEL_RESIZE_EDGE_RIGHT : 0);
	} else if (edges == XDG_TOPLEVEL_RESIZE_EDGE_LEFT ||
		edges == XDG_TOPLEVEL_RESIZE_EDGE_RIGHT) {
		edges |= y < RV_CORNER ? XDG_TOPLEVEL_RESIZE_EDGE_TOP
				       : (y >= h - RV_CORNER ? XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM : 0);
	}
	return edges;
}

static const char *cursor_name(uint32_t edges)
{
	switch (edges) {
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP:
		return "top_side";
	case XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM:
		return "bottom_side";
	case XDG_TOPLEVEL_RESIZE_EDGE_LEFT:
		return "left_side";
	case XDG_TOPLEVEL_RESIZE_EDGE_RIGHT:
		return "right_side";
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP_LEFT:
		return "top_left_corner";
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP_RIGHT:
		return "top_right_corner";
	case XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_LEFT:
		return "bottom_left_corner";
	default:
		return "bottom_right_corner";
	}
}

void edges_cursor(struct rv_viewer *viewer, struct rv_window *window, uint32_t edges)
{
	struct rv_seat *seat = &viewer->seat;
	int32_t scale = window->image_scale > 0 ? window->image_scale : 1;
	if (!seat->pointer || edges == 0) {
		return;
	}
	if (!seat->edge_theme || seat->edge_theme_scale != scale) {
		if (seat->edge_theme) {
			wl_cursor_theme_destroy(seat->edge_theme);
		}
		const char *size_env = getenv("XCURSOR_SIZE");
		int size = size_env && atoi(size_env) > 0 ? atoi(size_env) : 24;
		seat->edge_theme =
			wl_cursor_theme_load(getenv("XCURSOR_THEME"), size * scale, viewer->shm);
		seat->edge_theme_scale = scale;
	}
	struct wl_cursor *cursor = seat->edge_theme
		? wl_cursor_theme_get_cursor(seat->edge_theme, cursor_name(edges))
		: NULL;
	if (!cursor || cursor->image_count == 0) {
		return; /* the compositor's own cursor stays */
	}
	struct wl_cursor_image *image = cursor->images[0];
	if (!seat->edge_cursor_surface) {
		seat->edge_cursor_surface = wl_compositor_create_surface(viewer->compositor);
	}
	wl_surface_attach(seat->edge_cursor_surface, wl_cursor_image_get_buffer(image), 0, 0);
	wl_surface_set_buffer_scale(seat->edge_cursor_surface, scale);
	wl_surface_damage_buffer(seat->edge_cursor_surface, 0, 0, INT32_MAX, INT32_MAX);
	wl_surface_commit(seat->edge_cursor_surface);
	wl_pointer_set_cursor(seat->pointer, seat->pointer_serial, seat->edge_cursor_surface,
		(int32_t)image->hotspot_x / scale, (int32_t)image->hotspot_y / scale);
}

void edges_resize(struct rv_viewer *viewer, struct rv_window *window, uint32_t serial,
	uint32_t edges)
{
	if (edges && window->xdg_toplevel && viewer->seat.seat) {
		log_debug("window %u: resizing from edges %u", window->id, edges);
		xdg_toplevel_resize(window->xdg_toplevel, viewer->seat.seat, serial, edges);
	}
}

void edges_seat_finish(struct rv_viewer *viewer)
{
	struct rv_seat *seat = &viewer->seat;
	if (seat->edge_cursor_surface) {
		wl_surface_destroy(seat->edge_cursor_surface);
		seat->edge_cursor_surface = NULL;
	}
	if (seat->edge_theme) {
		wl_cursor_theme_destroy(seat->edge_theme);
		seat->edge_theme = NULL;
	}
	if (viewer->clear_pixel) {
		wl_buffer_destroy(viewer->clear_pixel);
		viewer->clear_pixel = NULL;
	}
}
