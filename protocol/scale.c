#include <pixman.h>
#include <stddef.h>

#include "scale.h"

bool scale_bilinear(const uint32_t *src, int32_t sw, int32_t sh, int32_t src_stride, uint32_t *dst,
	int32_t dw, int32_t dh, int32_t dst_stride)
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
		pixman_image_composite32(PIXMAN_OP_SRC, from, NULL, to, 0, 0, 0, 0, 0, 0, dw, dh);
	}
	if (from) {
		pixman_image_unref(from);
	}
	if (to) {
		pixman_image_unref(to);
	}
	return ok;
}
