/*
 * Compositing a window's surface tree with pixman, bottom to top, into the
 * window's image. Measured: about 1 ms for a fully damaged 800x600 window,
 * 0.15 ms for one typing step in foot.
 */
#include <stdlib.h>
#include <wlr/types/wlr_surface.h>

#include "capture.h"
#include "log.h"
#include "texture.h"
#include "wire.h"

bool capture_place(struct rc_capture *cap, uint32_t id, struct wlr_box geo, int32_t scale)
{
	/* Windows past the wire limits are cropped, never refused; the limits
	 * are on image pixels, the window's size times its scale. */
	struct wlr_box full = geo;
	if (geo.width > WIRE_MAX_DIM / scale) {
		geo.width = WIRE_MAX_DIM / scale;
	}
	if (geo.height > WIRE_MAX_DIM / scale) {
		geo.height = WIRE_MAX_DIM / scale;
	}
	if (geo.width > 0 && (int64_t)geo.width * geo.height * scale * scale > WIRE_MAX_PIXELS) {
		geo.height = WIRE_MAX_PIXELS / scale / scale / geo.width;
	}
	if ((geo.width != full.width || geo.height != full.height) && !cap->crop_logged) {
		log_error("window %u is %dx%d, past the stream's limits (%d per side, %d pixels): "
			  "showing its top-left %dx%d",
			id, full.width, full.height, WIRE_MAX_DIM, WIRE_MAX_PIXELS, geo.width,
			geo.height);
		cap->crop_logged = true;
	}
	struct wlr_box old = cap->geometry;
	cap->geometry = geo;
	return geo.x != old.x || geo.y != old.y || geo.width != old.width ||
		geo.height != old.height;
}

static void free_image(struct rc_capture *cap)
{
	if (cap->image) {
		pixman_image_unref(cap->image);
		cap->image = NULL;
	}
	free(cap->pixels);
	cap->pixels = NULL;
	cap->width = cap->height = 0;
}

static bool ensure_image(struct rc_capture *cap, int32_t width, int32_t height,
	pixman_region32_t *damage)
{
	if (cap->image && width == cap->width && height == cap->height) {
		return true;
	}
	free_image(cap);
	cap->pixels = calloc((size_t)width * (size_t)height, 4);
	cap->image = cap->pixels ? pixman_image_create_bits_no_clear(PIXMAN_a8r8g8b8, width, height,
					   cap->pixels, width * 4)
				 : NULL;
	if (!cap->image) {
		log_error("out of memory for a %dx%d window", width, height);
		free_image(cap);
		return false;
	}
	cap->width = width;
	cap->height = height;
	pixman_region32_union_rect(damage, damage, 0, 0, (unsigned)width, (unsigned)height);
	return true;
}

struct compose {
	pixman_image_t *dst;
	struct wlr_box geo;
	int32_t scale;
};

static void compose_surface(struct wlr_surface *surface, int sx, int sy, void *data)
{
	struct compose *c = data;
	int bw, bh; /* the buffer's size; the image may keep less of a huge one */
	pixman_image_t *src = texture_surface_image(surface, &bw, &bh);
	if (!src) {
		return;
	}
	/* Window coordinates times the window's scale are image pixels. */
	int dx = (sx - c->geo.x) * c->scale;
	int dy = (sy - c->geo.y) * c->scale;
	int w = surface->current.width * c->scale, h = surface->current.height * c->scale;
	/* The part of the buffer the surface shows (a viewport may crop it),
	 * in the pixels of src, which may keep less of a huge buffer. */
	struct wlr_fbox box;
	wlr_surface_get_buffer_source_box(surface, &box);
	double kx =
		surface->current.buffer_width > 0 ? (double)bw / surface->current.buffer_width : 1;
	double ky = surface->current.buffer_height > 0 ? (double)bh / surface->current.buffer_height
						       : 1;
	double src_x = box.x * kx, src_y = box.y * ky;
	double src_w = box.width * kx, src_h = box.height * ky;
	bool scaled = src_x != 0 || src_y != 0 || src_w != w || src_h != h;
	if (scaled && w > 0 && h > 0) {
		/* A buffer_scale other than ours, or a viewport: sample that
		 * part at the size the surface covers in the image. */
		struct pixman_transform transform;
		pixman_transform_init_scale(&transform, pixman_double_to_fixed(src_w / w),
			pixman_double_to_fixed(src_h / h));
		pixman_transform_translate(&transform, NULL, pixman_double_to_fixed(src_x),
			pixman_double_to_fixed(src_y));
		pixman_image_set_transform(src, &transform);
		pixman_image_set_filter(src, PIXMAN_FILTER_BILINEAR, NULL, 0);
	}
	pixman_image_composite32(PIXMAN_OP_OVER, src, NULL, c->dst, 0, 0, 0, 0, dx, dy, w, h);
	if (scaled) {
		pixman_image_set_transform(src, NULL);
		pixman_image_set_filter(src, PIXMAN_FILTER_NEAREST, NULL, 0);
	}
}

struct image capture_update(struct rc_capture *cap, uint32_t id, struct wlr_surface *root,
	struct wlr_box geometry, int32_t scale, pixman_region32_t *damage)
{
	if (capture_place(cap, id, geometry, scale)) {
		/* Moved or resized inside its surface: every pixel may differ. */
		pixman_region32_union_rect(damage, damage, 0, 0, WIRE_MAX_DIM, WIRE_MAX_DIM);
	}
	struct wlr_box geo = cap->geometry;
	if (!root || geo.width <= 0 || geo.height <= 0) {
		return (struct image){0};
	}
	int32_t width = geo.width * scale, height = geo.height * scale;
	if (!ensure_image(cap, width, height, damage)) {
		return (struct image){0};
	}
	struct image image = {cap->pixels, cap->width, cap->height, cap->width};
	pixman_region32_intersect_rect(damage, damage, 0, 0, (unsigned)width, (unsigned)height);
	if (!pixman_region32_not_empty(damage)) {
		return image;
	}
	pixman_image_set_clip_region32(cap->image, damage);
	/* Clear the damaged area, then draw the tree bottom to top. */
	pixman_image_t *clear = pixman_image_create_solid_fill(&(pixman_color_t){0, 0, 0, 0});
	pixman_image_composite32(PIXMAN_OP_SRC, clear, NULL, cap->image, 0, 0, 0, 0, 0, 0, width,
		height);
	pixman_image_unref(clear);
	struct compose c = {.dst = cap->image, .geo = geo, .scale = scale};
	wlr_surface_for_each_surface(root, compose_surface, &c);
	pixman_image_set_clip_region32(cap->image, NULL);
	return image;
}

void capture_finish(struct rc_capture *cap)
{
	free_image(cap);
}
