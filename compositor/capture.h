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
#include <wlr/util/box.h>

#include "codec.h"

struct wlr_surface;

struct rc_capture {
	pixman_image_t *image; /* over pixels */
	uint32_t *pixels;
	int32_t width, height; /* image pixels: the geometry times the scale */
	bool crop_logged;
};

/*
 * The window geometry to capture: geometry cut to the stream's limits at
 * scale (the first crop of a window is logged, with id).
 */
struct wlr_box capture_crop(struct rc_capture *cap, uint32_t id, struct wlr_box geometry,
	int32_t scale);

/*
 * Brings the image up to date within damage (image pixels) for the surface
 * tree of root, whose window geometry is geo (from capture_crop) at scale.
 * A new size reallocates the image and damages all of it. False if there is
 * nothing to capture (an empty geometry) or no memory.
 */
bool capture_update(struct rc_capture *cap, struct wlr_surface *root, struct wlr_box geo,
	int32_t scale, pixman_region32_t *damage);

/* The image as the encoders read it. */
struct image capture_image(const struct rc_capture *cap);

void capture_finish(struct rc_capture *cap);

#endif
