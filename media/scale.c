#include <pixman.h>
#include <stddef.h>

#include "bands.h"
#include "scale.h"

/* Rows y0 to y1 of the scaled picture: each pixel depends on the source
 * alone, so bands come out as the whole picture does. */
static bool scale_rows(const uint32_t *src, int32_t sw, int32_t sh, int32_t src_stride,
	uint32_t *dst, int32_t dw, int32_t dh, int32_t dst_stride, int32_t y0, int32_t y1)
{
	pixman_image_t *from =
		pixman_image_create_bits(PIXMAN_a8r8g8b8, sw, sh, (uint32_t *)src, src_stride * 4);
	pixman_image_t *to = pixman_image_create_bits(PIXMAN_a8r8g8b8, dw, dh, dst, dst_stride * 4);
	bool ok = from && to;
	if (ok) {
		pixman_transform_t scale;
		pixman_transform_init_scale(&scale, pixman_double_to_fixed((double)sw / dw),
			pixman_double_to_fixed((double)sh / dh));
		pixman_image_set_transform(from, &scale);
		pixman_image_set_filter(from, PIXMAN_FILTER_BILINEAR, NULL, 0);
		pixman_image_set_repeat(from, PIXMAN_REPEAT_PAD);
		pixman_image_composite32(PIXMAN_OP_SRC, from, NULL, to, 0, y0, 0, 0, 0, y0, dw,
			y1 - y0);
	}
	if (from) {
		pixman_image_unref(from);
	}
	if (to) {
		pixman_image_unref(to);
	}
	return ok;
}

struct job {
	const uint32_t *src;
	int32_t sw, sh, src_stride;
	uint32_t *dst;
	int32_t dw, dh, dst_stride;
	int bands;
	bool failed;
};

static void scale_band(void *data, int i)
{
	struct job *job = data;
	int32_t y0 = (int32_t)((int64_t)job->dh * i / job->bands);
	int32_t y1 = (int32_t)((int64_t)job->dh * (i + 1) / job->bands);
	if (!scale_rows(job->src, job->sw, job->sh, job->src_stride, job->dst, job->dw, job->dh,
		    job->dst_stride, y0, y1)) {
		job->failed = true;
	}
}

bool scale_bilinear(const uint32_t *src, int32_t sw, int32_t sh, int32_t src_stride, uint32_t *dst,
	int32_t dw, int32_t dh, int32_t dst_stride)
{
	struct job job = {src, sw, sh, src_stride, dst, dw, dh, dst_stride,
		bands_count(dh, (long)dw * 4), false};
	bands_run(job.bands, scale_band, &job);
	return !job.failed;
}
