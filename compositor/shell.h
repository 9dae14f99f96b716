/*
 * What differs between xdg-shell and X11 windows: the interface xdg.c and
 * xwayland.c implement, each for its own windows (window_init takes it);
 * nothing else asks which kind a window is.
 */
#ifndef RCOMP_SHELL_H
#define RCOMP_SHELL_H

#include <stdbool.h>
#include <stdint.h>
#include <wlr/util/box.h>

#include "wire.h"

struct rc_window;
struct wlr_surface;

struct rc_window_impl {
	struct wlr_surface *(*surface)(struct rc_window *window); /* NULL: none yet */
	/* The window geometry in surface coordinates (CSD shadows outside). */
	void (*geometry)(struct rc_window *window, struct wlr_box *box);
	const char *(*title)(struct rc_window *window); /* never NULL */
	const char *(*app_id)(struct rc_window *window); /* never NULL */
	struct rc_window *(*parent)(struct rc_window *window); /* toplevels; or NULL */
	/* The states the app wants: before its first map, what it asked for. */
	bool (*wants_maximized)(struct rc_window *window, bool first);
	bool (*wants_fullscreen)(struct rc_window *window, bool first);
	/* min w, min h, max w, max h (0: none); false if the shell has none. */
	bool (*size_hints)(struct rc_window *window, int32_t hints[4]);
	/* Where a popup goes, relative to its parent's window geometry. */
	void (*place_popup)(struct rc_window *window, struct rc_window *parent,
		struct wire_popup_new *place);
	/* What the local compositor decided, through the viewer. */
	void (*set_activated)(struct rc_window *window, bool activated);
	void (*configure)(struct rc_window *window, int32_t width, int32_t height, uint32_t states);
	void (*close)(struct rc_window *window);
	/* A popup dismissed locally (a click outside). */
	void (*dismiss)(struct rc_window *window);
};

#endif
