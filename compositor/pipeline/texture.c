/*
 * Textures that lend a surface's pixels to capture.c. Each commit's wl_shm
 * buffer is held until the window's next frame and then copied, only where
 * damaged, into pixels the surface keeps; a buffer superseded before that is
 * released uncopied, and none is held past the frame that shows it.
 */
#include <drm_fourcc.h>
#include <stdlib.h>
#include <string.h>
#include <wlr/render/interface.h>
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/util/addon.h>

#include "bands.h"
#include "log.h"
#include "texture.h"
#include "wire.h"

/* A texture keeps at most the top-left part of its buffer that a window's
 * picture can show: WIRE_MAX_DIM wide and WIRE_MAX_PIXELS in all, as
 * capture.c crops windows. An app's 16384x16384 buffer then costs 64 MiB
 * here, not 1 GiB. */
#define KEEP_DIM WIRE_MAX_DIM
#define KEEP_PIXELS WIRE_MAX_PIXELS

struct format {
	uint32_t drm;
	pixman_format_code_t pixman;
	int bytes; /* per pixel */
	bool alpha;
};

/* What wl_shm offers apps: the formats pixman reads. */
static const struct format formats[] = {
	{DRM_FORMAT_ARGB8888, PIXMAN_a8r8g8b8, 4, true},
	{DRM_FORMAT_XRGB8888, PIXMAN_x8r8g8b8, 4, false},
	{DRM_FORMAT_ABGR8888, PIXMAN_a8b8g8r8, 4, true},
	{DRM_FORMAT_XBGR8888, PIXMAN_x8b8g8r8, 4, false},
	{DRM_FORMAT_RGBA8888, PIXMAN_r8g8b8a8, 4, true},
	{DRM_FORMAT_RGBX8888, PIXMAN_r8g8b8x8, 4, false},
	{DRM_FORMAT_BGRA8888, PIXMAN_b8g8r8a8, 4, true},
	{DRM_FORMAT_BGRX8888, PIXMAN_b8g8r8x8, 4, false},
	{DRM_FORMAT_ARGB2101010, PIXMAN_a2r10g10b10, 4, true},
	{DRM_FORMAT_XRGB2101010, PIXMAN_x2r10g10b10, 4, false},
	{DRM_FORMAT_ABGR2101010, PIXMAN_a2b10g10r10, 4, true},
	{DRM_FORMAT_XBGR2101010, PIXMAN_x2b10g10r10, 4, false},
	{DRM_FORMAT_RGB565, PIXMAN_r5g6b5, 2, false},
	{DRM_FORMAT_BGR565, PIXMAN_b5g6r5, 2, false},
};
#define FORMATS (sizeof(formats) / sizeof(formats[0]))

static const struct format *find_format(uint32_t drm)
{
	for (size_t i = 0; i < FORMATS; i++) {
		if (formats[i].drm == drm) {
			return &formats[i];
		}
	}
	return NULL;
}

/*
 * A texture is one commit's buffer, locked until its pixels are copied out:
 * wlroots makes one per commit, because write_pixels declines to update an
 * old one in place. The copy is made once per frame, not once per commit,
 * into the surface's own pixels (struct pixels below); a buffer superseded
 * before then is released without ever being copied. An app that commits a
 * thousand times a second then costs sixty copies.
 */
struct texture {
	struct wlr_texture base; /* the buffer's size */
	struct wlr_buffer *source; /* locked until copied; then NULL */
	const struct format *format;
};

static const struct wlr_texture_impl texture_impl;

static struct texture *texture_of(struct wlr_texture *wlr_texture)
{
	if (!wlr_texture || wlr_texture->impl != &texture_impl) {
		return NULL;
	}
	struct texture *texture = wl_container_of(wlr_texture, texture, base);
	return texture;
}

static void texture_release(struct texture *texture)
{
	if (texture->source) {
		wlr_buffer_unlock(texture->source);
		texture->source = NULL;
	}
}

static bool texture_is_opaque(struct wlr_texture *wlr_texture)
{
	struct texture *texture = wl_container_of(wlr_texture, texture, base);
	return !texture->format->alpha;
}

/* Declines, so that each commit makes a texture of its own buffer. */
static bool texture_write_pixels(struct wlr_texture *wlr_texture, uint32_t stride, uint32_t width,
	uint32_t height, uint32_t src_x, uint32_t src_y, uint32_t dst_x, uint32_t dst_y,
	const void *data)
{
	return false;
}

static void texture_destroy(struct wlr_texture *wlr_texture)
{
	struct texture *texture = wl_container_of(wlr_texture, texture, base);
	texture_release(texture);
	free(texture);
}

static const struct wlr_texture_impl texture_impl = {
	.is_opaque = texture_is_opaque,
	.write_pixels = texture_write_pixels,
	.destroy = texture_destroy,
};

static struct wlr_texture *renderer_texture_from_buffer(struct wlr_renderer *renderer,
	struct wlr_buffer *buffer)
{
	void *data;
	uint32_t drm_format;
	size_t stride;
	if (!wlr_buffer_begin_data_ptr_access(buffer, WLR_BUFFER_DATA_PTR_ACCESS_READ, &data,
		    &drm_format, &stride)) {
		/* Not wl_shm: rcomp-run offers no other kind. */
		return NULL;
	}
	wlr_buffer_end_data_ptr_access(buffer);
	const struct format *format = find_format(drm_format);
	if (!format) {
		log_error("an app committed a buffer of unknown format 0x%08x", drm_format);
		return NULL;
	}
	if (buffer->width <= 0 || buffer->height <= 0) {
		return NULL;
	}
	struct texture *texture = calloc(1, sizeof(*texture));
	if (!texture) {
		log_error("out of memory for a %dx%d surface", buffer->width, buffer->height);
		return NULL;
	}
	texture->format = format;
	texture->source = wlr_buffer_lock(buffer);
	wlr_texture_init(&texture->base, &texture_impl, (uint32_t)buffer->width,
		(uint32_t)buffer->height);
	return &texture->base;
}

/* A surface's pixels, as of the last buffer copied, kept across commits. */
struct pixels {
	struct wlr_addon addon;
	pixman_image_t *image; /* the buffer's top-left part, at most KEEP_DIM per side */
	uint32_t width, height; /* the buffer's size */
	const struct format *format;
	pixman_region32_t damage; /* buffer pixels that differ from the image */
};

static void pixels_destroy(struct wlr_addon *addon)
{
	struct pixels *pixels = wl_container_of(addon, pixels, addon);
	wlr_addon_finish(&pixels->addon);
	if (pixels->image) {
		pixman_image_unref(pixels->image);
	}
	pixman_region32_fini(&pixels->damage);
	free(pixels);
}

static const struct wlr_addon_interface pixels_addon = {
	.name = "rcomp-pixels",
	.destroy = pixels_destroy,
};

static struct pixels *pixels_of(struct wlr_surface *surface, bool create)
{
	struct wlr_addon *addon = wlr_addon_find(&surface->addons, surface, &pixels_addon);
	struct pixels *pixels;
	if (addon || !create) {
		return addon ? wl_container_of(addon, pixels, addon) : NULL;
	}
	pixels = calloc(1, sizeof(*pixels));
	if (!pixels) {
		log_error("out of memory for a surface");
		return NULL;
	}
	pixman_region32_init(&pixels->damage);
	wlr_addon_init(&pixels->addon, &surface->addons, surface, &pixels_addon);
	return pixels;
}

void texture_surface_commit(struct wlr_surface *surface)
{
	struct pixels *pixels = pixels_of(surface, true);
	if (pixels) {
		pixman_region32_union(&pixels->damage, &pixels->damage, &surface->buffer_damage);
	}
}

/* The image for a buffer of this size and format, empty, all of it damaged. */
static bool pixels_fit(struct pixels *pixels, const struct texture *texture)
{
	uint32_t width = texture->base.width, height = texture->base.height;
	if (pixels->image && pixels->width == width && pixels->height == height &&
		pixels->format == texture->format) {
		return true;
	}
	if (pixels->image) {
		pixman_image_unref(pixels->image);
	}
	uint32_t kept_width = width < KEEP_DIM ? width : KEEP_DIM;
	uint32_t most_rows = KEEP_PIXELS / kept_width;
	uint32_t kept_height = height < most_rows ? height : most_rows;
	/* pixman allocates the pixels itself when given none. */
	pixels->image = pixman_image_create_bits_no_clear(texture->format->pixman, (int)kept_width,
		(int)kept_height, NULL, 0);
	if (!pixels->image) {
		log_error("out of memory for a %ux%u surface", width, height);
		return false;
	}
	pixels->width = width;
	pixels->height = height;
	pixels->format = texture->format;
	pixman_region32_union_rect(&pixels->damage, &pixels->damage, 0, 0, width, height);
	return true;
}

/* A copy of damaged boxes, cut in bands of rows (bands.h): a 4K buffer
 * is 33 MB. */
struct copy {
	uint8_t *dst;
	const uint8_t *src;
	size_t dst_stride, src_stride;
	int bytes;
	const pixman_box32_t *boxes;
	int nboxes;
	int32_t top, rows;
	int bands;
};

static void copy_band(void *data, int band)
{
	const struct copy *c = data;
	int32_t y0 = c->top + (int32_t)((int64_t)c->rows * band / c->bands);
	int32_t y1 = c->top + (int32_t)((int64_t)c->rows * (band + 1) / c->bands);
	for (int i = 0; i < c->nboxes; i++) {
		const pixman_box32_t *b = &c->boxes[i];
		size_t x = (size_t)b->x1 * c->bytes, len = (size_t)(b->x2 - b->x1) * c->bytes;
		int32_t from = b->y1 > y0 ? b->y1 : y0, to = b->y2 < y1 ? b->y2 : y1;
		for (int32_t y = from; y < to; y++) {
			memcpy(c->dst + (size_t)y * c->dst_stride + x,
				c->src + (size_t)y * c->src_stride + x, len);
		}
	}
}

/* Copies the damaged part of the texture's buffer that the image keeps. */
static void pixels_copy(struct pixels *pixels, struct texture *texture)
{
	void *data;
	uint32_t drm_format;
	size_t stride;
	if (!wlr_buffer_begin_data_ptr_access(texture->source, WLR_BUFFER_DATA_PTR_ACCESS_READ,
		    &data, &drm_format, &stride)) {
		return;
	}
	int kept_width = pixman_image_get_width(pixels->image);
	int kept_height = pixman_image_get_height(pixels->image);
	pixman_region32_intersect_rect(&pixels->damage, &pixels->damage, 0, 0, (unsigned)kept_width,
		(unsigned)kept_height);
	const pixman_box32_t *extents = pixman_region32_extents(&pixels->damage);
	struct copy copy = {
		.dst = (uint8_t *)pixman_image_get_data(pixels->image),
		.src = data,
		.dst_stride = (size_t)pixman_image_get_stride(pixels->image),
		.src_stride = stride,
		.bytes = texture->format->bytes,
		.top = extents->y1,
		.rows = extents->y2 - extents->y1,
	};
	copy.boxes = pixman_region32_rectangles(&pixels->damage, &copy.nboxes);
	if (copy.nboxes > 0 && copy.rows > 0) {
		copy.bands = bands_count(copy.rows, (long)(extents->x2 - extents->x1) * copy.bytes);
		bands_run(copy.bands, copy_band, &copy);
	}
	wlr_buffer_end_data_ptr_access(texture->source);
}

void texture_surface_settle(struct wlr_surface *surface)
{
	int width, height;
	texture_surface_image(surface, &width, &height);
}

pixman_image_t *texture_surface_image(struct wlr_surface *surface, int *width, int *height)
{
	struct texture *texture = texture_of(wlr_surface_get_texture(surface));
	struct pixels *pixels = texture ? pixels_of(surface, true) : NULL;
	if (!pixels) {
		return NULL;
	}
	if (texture->source) {
		if (pixels_fit(pixels, texture)) {
			pixels_copy(pixels, texture);
		}
		pixman_region32_clear(&pixels->damage);
		texture_release(texture);
	}
	if (!pixels->image || pixels->width != texture->base.width ||
		pixels->height != texture->base.height) {
		return NULL;
	}
	*width = (int)pixels->width;
	*height = (int)pixels->height;
	return pixels->image;
}

static const uint32_t *renderer_shm_formats(struct wlr_renderer *renderer, size_t *len)
{
	static uint32_t drm[FORMATS];
	for (size_t i = 0; i < FORMATS; i++) {
		drm[i] = formats[i].drm;
	}
	*len = FORMATS;
	return drm;
}

static uint32_t renderer_buffer_caps(struct wlr_renderer *renderer)
{
	return 0; /* it renders into no buffer */
}

/* wlroots wants drawing functions; nothing in rcomp-run draws with this
 * renderer, so they are never called, and would draw nothing. */
static void renderer_begin(struct wlr_renderer *renderer, uint32_t width, uint32_t height)
{
}

static void renderer_clear(struct wlr_renderer *renderer, const float color[static 4])
{
}

static void renderer_scissor(struct wlr_renderer *renderer, struct wlr_box *box)
{
}

static bool renderer_render_subtexture(struct wlr_renderer *renderer, struct wlr_texture *texture,
	const struct wlr_fbox *box, const float matrix[static 9], float alpha)
{
	return false;
}

static void renderer_render_quad(struct wlr_renderer *renderer, const float color[static 4],
	const float matrix[static 9])
{
}

static void renderer_destroy(struct wlr_renderer *renderer)
{
	free(renderer);
}

static const struct wlr_renderer_impl renderer_impl = {
	.begin = renderer_begin,
	.clear = renderer_clear,
	.scissor = renderer_scissor,
	.render_subtexture_with_matrix = renderer_render_subtexture,
	.render_quad_with_matrix = renderer_render_quad,
	.get_shm_texture_formats = renderer_shm_formats,
	.get_render_buffer_caps = renderer_buffer_caps,
	.texture_from_buffer = renderer_texture_from_buffer,
	.destroy = renderer_destroy,
};

struct wlr_renderer *texture_renderer_create(void)
{
	struct wlr_renderer *renderer = calloc(1, sizeof(*renderer));
	if (renderer) {
		wlr_renderer_init(renderer, &renderer_impl);
	}
	return renderer;
}
