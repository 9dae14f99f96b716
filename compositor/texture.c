/*
 * Textures as pixman images of their own. A texture is made from a buffer
 * the client lends us (wl_shm, through the buffer's data pointer) by copying
 * it; later commits of the same size and format copy only their damage.
 * Either way no lock on the client's buffer outlives the commit.
 */
#include <drm_fourcc.h>
#include <stdlib.h>
#include <string.h>
#include <wlr/render/interface.h>
#include <wlr/types/wlr_buffer.h>

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

struct texture {
	struct wlr_texture base; /* the buffer's size */
	pixman_image_t *image; /* its top-left part, at most KEEP_DIM per side */
	uint32_t kept_width, kept_height;
	const struct format *format;
};

static const struct wlr_texture_impl texture_impl;

pixman_image_t *texture_image(struct wlr_texture *wlr_texture)
{
	if (!wlr_texture || wlr_texture->impl != &texture_impl) {
		return NULL;
	}
	struct texture *texture = wl_container_of(wlr_texture, texture, base);
	return texture->image;
}

static bool texture_is_opaque(struct wlr_texture *wlr_texture)
{
	struct texture *texture = wl_container_of(wlr_texture, texture, base);
	return !texture->format->alpha;
}

/* Copies a width x height block at (src_x, src_y) of the client's data to
 * (dst_x, dst_y). wlroots checked the size and format already. */
static bool texture_write_pixels(struct wlr_texture *wlr_texture, uint32_t stride, uint32_t width,
	uint32_t height, uint32_t src_x, uint32_t src_y, uint32_t dst_x, uint32_t dst_y,
	const void *data)
{
	struct texture *texture = wl_container_of(wlr_texture, texture, base);
	uint32_t w = wlr_texture->width, h = wlr_texture->height;
	if (dst_x > w || dst_y > h || width > w - dst_x || height > h - dst_y) {
		return false;
	}
	/* What lies past the kept part is not kept. */
	if (dst_x >= texture->kept_width || dst_y >= texture->kept_height) {
		return true;
	}
	if (width > texture->kept_width - dst_x) {
		width = texture->kept_width - dst_x;
	}
	if (height > texture->kept_height - dst_y) {
		height = texture->kept_height - dst_y;
	}
	int bytes = texture->format->bytes;
	uint8_t *dst = (uint8_t *)pixman_image_get_data(texture->image);
	size_t dst_stride = (size_t)pixman_image_get_stride(texture->image);
	const uint8_t *src = data;
	for (uint32_t y = 0; y < height; y++) {
		memcpy(dst + (dst_y + y) * dst_stride + (size_t)dst_x * bytes,
			src + (src_y + y) * (size_t)stride + (size_t)src_x * bytes,
			(size_t)width * bytes);
	}
	return true;
}

static void texture_destroy(struct wlr_texture *wlr_texture)
{
	struct texture *texture = wl_container_of(wlr_texture, texture, base);
	pixman_image_unref(texture->image);
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
	const struct format *format = find_format(drm_format);
	if (buffer->width <= 0 || buffer->height <= 0) {
		wlr_buffer_end_data_ptr_access(buffer);
		return NULL;
	}
	struct texture *texture = format ? calloc(1, sizeof(*texture)) : NULL;
	if (texture) {
		texture->kept_width = buffer->width < KEEP_DIM ? (uint32_t)buffer->width : KEEP_DIM;
		uint32_t most_rows = KEEP_PIXELS / texture->kept_width;
		texture->kept_height =
			(uint32_t)buffer->height < most_rows ? (uint32_t)buffer->height : most_rows;
		/* pixman allocates the pixels itself when given none. */
		texture->image = pixman_image_create_bits_no_clear(format->pixman,
			(int)texture->kept_width, (int)texture->kept_height, NULL, 0);
	}
	if (!texture || !texture->image) {
		wlr_buffer_end_data_ptr_access(buffer);
		if (!format) {
			log_error("an app committed a buffer of unknown format 0x%08x", drm_format);
		} else {
			log_error("out of memory for a %dx%d surface", buffer->width,
				buffer->height);
		}
		free(texture);
		return NULL;
	}
	texture->format = format;
	wlr_texture_init(&texture->base, &texture_impl, (uint32_t)buffer->width,
		(uint32_t)buffer->height);
	texture_write_pixels(&texture->base, (uint32_t)stride, (uint32_t)buffer->width,
		(uint32_t)buffer->height, 0, 0, 0, 0, data);
	wlr_buffer_end_data_ptr_access(buffer);
	return &texture->base;
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
