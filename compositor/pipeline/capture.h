/*
 * Capture: a window's surface tree composited with pixman into one image,
 * cropped to its window geometry (so client-side shadows stay remote) and to
 * the stream's limits. Only damaged areas are redrawn.
 */
#ifndef RCOMP_CAPTURE_H
#define RCOMP_CAPTURE_H

#include <pixman.h>
#include <stdbool.h>
#include <stdint.h>
#include <wayland-util.h>
#include <wlr/util/box.h>

#include "codec.h"

struct wlr_surface;

struct rc_capture {
	/* The window geometry in surface coordinates, cut to the limits: the
	 * image covers exactly this box, and coordinates on the wire are
	 * relative to its corner. */
	struct wlr_box geometry;
	pixman_image_t *image; /* over pixels */
	uint32_t *pixels;
	int32_t width, height; /* image pixels: the geometry times the scale */
	bool crop_logged;
	/* The surfaces of the tree as the bands draw them, bottom to top:
	 * kept from frame to frame, so that drawing allocates nothing. */
	struct wl_array layers; /* struct capture_layer */
};

/*
 * Takes the window geometry (cut to the stream's limits at scale; the first
 * crop of a window is logged, with id). True if it changed.
 */
bool capture_place(struct rc_capture *cap, uint32_t id, struct wlr_box geometry, int32_t scale);

/*
 * Brings the image up to date within damage (image pixels) for the surface
 * tree of root at window geometry and scale. A new geometry damages all of
 * it. Returns the image as the encoders read it; its pixels are NULL if
 * there is nothing to capture (an empty geometry) or no memory.
 */
struct image capture_update(struct rc_capture *cap, uint32_t id, struct wlr_surface *root,
	struct wlr_box geometry, int32_t scale, pixman_region32_t *damage);

void capture_finish(struct rc_capture *cap);

#endif
