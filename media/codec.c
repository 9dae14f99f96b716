/* Lossless pixel codec: XOR diff against the previous frame, then lz4 or zstd. */
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "codec.h"
#include "video.h"

#define ZSTD_DEFAULT_LEVEL 3
/* lz4's acceleration for fast frames: bytes for speed, where bytes are cheap */
#define LZ4_FAST_ACCELERATION 8

uint32_t codec_local_caps(void)
{
	return WIRE_CAP_LZ4 | WIRE_CAP_ZSTD | WIRE_CAP_COPY_RECT | WIRE_CAP_REPLACE |
		(video_available() ? WIRE_CAP_H264 : 0);
}

bool codec_parse_compression(const char *text, enum wire_compression *kind, int *level)
{
	*level = 0;
	if (strcmp(text, "none") == 0) {
		*kind = WIRE_COMPRESS_NONE;
		return true;
	}
	if (strcmp(text, "lz4") == 0) {
		*kind = WIRE_COMPRESS_LZ4;
		return true;
	}
	if (strncmp(text, "zstd", 4) == 0) {
		*kind = WIRE_COMPRESS_ZSTD;
		*level = ZSTD_DEFAULT_LEVEL;
		if (text[4] == '\0') {
			return true;
		}
		if (text[4] != ':') {
			return false;
		}
		char *end;
		long v = strtol(text + 5, &end, 10);
		if (*end != '\0' || end == text + 5 || v < 1 || v > ZSTD_maxCLevel()) {
			return false;
		}
		*level = (int)v;
		return true;
	}
	return false;
}

const char *codec_compression_name(enum wire_compression kind)
{
	switch (kind) {
	case WIRE_COMPRESS_NONE:
		return "none";
	case WIRE_COMPRESS_LZ4:
		return "lz4";
	case WIRE_COMPRESS_ZSTD:
		return "zstd";
	}
	return "unknown";
}

bool compressor_init(struct compressor *comp, enum wire_compression kind, int level)
{
	*comp = (struct compressor){.kind = kind, .level = level};
	if (kind == WIRE_COMPRESS_ZSTD) {
		comp->zstd = ZSTD_createCCtx();
		if (!comp->zstd) {
			return false;
		}
		ZSTD_CCtx_setParameter(comp->zstd, ZSTD_c_compressionLevel, level);
		comp->zstd_level = level;
	}
	return true;
}

void compressor_finish(struct compressor *comp)
{
	ZSTD_freeCCtx(comp->zstd);
	comp->zstd = NULL;
}

bool compressor_compress(struct compressor *comp, const uint8_t *src, size_t size,
	struct buffer *out)
{
	if (size == 0) {
		return true;
	}
	switch (comp->kind) {
	case WIRE_COMPRESS_NONE:
		return buffer_append(out, src, size);
	case WIRE_COMPRESS_LZ4: {
		if (size > LZ4_MAX_INPUT_SIZE) {
			return false;
		}
		int bound = LZ4_compressBound((int)size);
		uint8_t *dst = buffer_reserve(out, (size_t)bound);
		if (!dst) {
			return false;
		}
		int n = LZ4_compress_fast((const char *)src, (char *)dst, (int)size, bound,
			comp->fast ? LZ4_FAST_ACCELERATION : 1);
		if (n <= 0) {
			return false;
		}
		buffer_commit(out, (size_t)n);
		return true;
	}
	case WIRE_COMPRESS_ZSTD: {
		size_t bound = ZSTD_compressBound(size);
		uint8_t *dst = buffer_reserve(out, bound);
		if (!dst) {
			return false;
		}
		int level = comp->fast && comp->level > 1 ? 1 : comp->level;
		if (level != comp->zstd_level) {
			ZSTD_CCtx_setParameter(comp->zstd, ZSTD_c_compressionLevel, level);
			comp->zstd_level = level;
		}
		size_t n = ZSTD_compress2(comp->zstd, dst, bound, src, size);
		if (ZSTD_isError(n)) {
			return false;
		}
		buffer_commit(out, n);
		return true;
	}
	}
	return false;
}

bool decompressor_init(struct decompressor *dec)
{
	*dec = (struct decompressor){.zstd = ZSTD_createDCtx()};
	return dec->zstd != NULL;
}

void decompressor_finish(struct decompressor *dec)
{
	ZSTD_freeDCtx(dec->zstd);
	free(dec->scratch);
	*dec = (struct decompressor){0};
}

bool decompressor_run(struct decompressor *dec, enum wire_compression kind, const uint8_t *src,
	size_t size, uint8_t *dst, size_t raw_size)
{
	switch (kind) {
	case WIRE_COMPRESS_NONE:
		if (size != raw_size) {
			return false;
		}
		if (size > 0) {
			memcpy(dst, src, size);
		}
		return true;
	case WIRE_COMPRESS_LZ4: {
		if (raw_size == 0) {
			return size == 0;
		}
		if (size > LZ4_MAX_INPUT_SIZE || raw_size > LZ4_MAX_INPUT_SIZE) {
			return false;
		}
		/* The _safe variant never writes past raw_size nor reads past size. */
		int n = LZ4_decompress_safe((const char *)src, (char *)dst, (int)size,
			(int)raw_size);
		return n >= 0 && (size_t)n == raw_size;
	}
	case WIRE_COMPRESS_ZSTD: {
		if (raw_size == 0) {
			return size == 0;
		}
		/* A frame that declares a different content size is refused before
		 * any work; the output is bounded by raw_size in any case. */
		unsigned long long declared = ZSTD_getFrameContentSize(src, size);
		if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != raw_size) {
			return false;
		}
		size_t n = ZSTD_decompressDCtx(dec->zstd, dst, raw_size, src, size);
		return !ZSTD_isError(n) && n == raw_size;
	}
	}
	return false;
}

static bool row_differs(const uint32_t *a, const uint32_t *b, int32_t x0, int32_t x1)
{
	return memcmp(a + x0, b + x0, (size_t)(x1 - x0) * 4) != 0;
}

bool codec_rect_shrink(const struct image *a, const struct image *b, struct wire_rect *rect)
{
	int32_t x0 = rect->x, x1 = rect->x + rect->width;
	int32_t y0 = rect->y, y1 = rect->y + rect->height;
	const uint32_t *pa, *pb;

	while (y0 < y1) {
		pa = a->pixels + (size_t)y0 * a->stride;
		pb = b->pixels + (size_t)y0 * b->stride;
		if (row_differs(pa, pb, x0, x1)) {
			break;
		}
		y0++;
	}
	if (y0 == y1) {
		return false;
	}
	while (y1 - 1 > y0) {
		pa = a->pixels + (size_t)(y1 - 1) * a->stride;
		pb = b->pixels + (size_t)(y1 - 1) * b->stride;
		if (row_differs(pa, pb, x0, x1)) {
			break;
		}
		y1--;
	}
	/* Columns: find the leftmost and rightmost differing pixel in the rows. */
	int32_t left = x1, right = x0;
	for (int32_t y = y0; y < y1; y++) {
		pa = a->pixels + (size_t)y * a->stride;
		pb = b->pixels + (size_t)y * b->stride;
		for (int32_t x = x0; x < left; x++) {
			if (pa[x] != pb[x]) {
				left = x;
				break;
			}
		}
		for (int32_t x = x1 - 1; x >= right; x--) {
			if (pa[x] != pb[x]) {
				right = x + 1;
				break;
			}
		}
	}
	if (left >= right) {
		return false;
	}
	rect->x = left;
	rect->y = y0;
	rect->width = right - left;
	rect->height = y1 - y0;
	return true;
}

size_t codec_diff_encode(const struct image *cur, struct image *base, const struct wire_rect *rects,
	size_t nrects, uint8_t *raw)
{
	uint8_t *out = raw;
	for (size_t i = 0; i < nrects; i++) {
		const struct wire_rect *r = &rects[i];
		for (int32_t y = r->y; y < r->y + r->height; y++) {
			const uint32_t *src = cur->pixels + (size_t)y * cur->stride + r->x;
			uint32_t *dst = base->pixels + (size_t)y * base->stride + r->x;
			uint32_t *o = (uint32_t *)(void *)out;
			for (int32_t x = 0; x < r->width; x++) {
				uint32_t v = src[x];
				uint32_t d = v ^ dst[x];
				memcpy(&o[x], &d, 4);
				dst[x] = v;
			}
			out += (size_t)r->width * 4;
		}
	}
	return (size_t)(out - raw);
}

void codec_rects_copy(const struct image *cur, struct image *base, const struct wire_rect *rects,
	size_t nrects)
{
	for (size_t i = 0; i < nrects; i++) {
		const struct wire_rect *r = &rects[i];
		for (int32_t y = r->y; y < r->y + r->height; y++) {
			memcpy(base->pixels + (size_t)y * base->stride + r->x,
				cur->pixels + (size_t)y * cur->stride + r->x, (size_t)r->width * 4);
		}
	}
}

size_t codec_pixels_encode(const struct image *cur, const struct wire_rect *rects, size_t nrects,
	uint8_t *raw)
{
	uint8_t *out = raw;
	for (size_t i = 0; i < nrects; i++) {
		const struct wire_rect *r = &rects[i];
		for (int32_t y = r->y; y < r->y + r->height; y++) {
			memcpy(out, cur->pixels + (size_t)y * cur->stride + r->x,
				(size_t)r->width * 4);
			out += (size_t)r->width * 4;
		}
	}
	return (size_t)(out - raw);
}

void codec_pixels_apply(struct image *img, const uint8_t *rects, uint32_t nrects,
	const uint8_t *raw)
{
	const uint8_t *in = raw;
	for (uint32_t i = 0; i < nrects; i++) {
		struct wire_rect r = wire_get_rect(rects, i);
		for (int32_t y = r.y; y < r.y + r.height; y++) {
			memcpy(img->pixels + (size_t)y * img->stride + r.x, in,
				(size_t)r.width * 4);
			in += (size_t)r.width * 4;
		}
	}
}

void codec_diff_apply(struct image *img, const uint8_t *rects, uint32_t nrects, const uint8_t *raw)
{
	const uint8_t *in = raw;
	for (uint32_t i = 0; i < nrects; i++) {
		struct wire_rect r = wire_get_rect(rects, i);
		for (int32_t y = r.y; y < r.y + r.height; y++) {
			uint32_t *dst = img->pixels + (size_t)y * img->stride + r.x;
			for (int32_t x = 0; x < r.width; x++) {
				uint32_t d;
				memcpy(&d, in + (size_t)x * 4, 4);
				dst[x] ^= d;
			}
			in += (size_t)r.width * 4;
		}
	}
}

bool codec_copy_fits(const struct image *img, struct wire_rect src, int32_t dx, int32_t dy)
{
	int64_t x = src.x, y = src.y, w = src.width, h = src.height;
	return w > 0 && h > 0 && x >= 0 && y >= 0 && x + w <= img->width && y + h <= img->height &&
		x + dx >= 0 && y + dy >= 0 && x + dx + w <= img->width && y + dy + h <= img->height;
}

void codec_copy(struct image *img, struct wire_rect src, int32_t dx, int32_t dy)
{
	size_t bytes = (size_t)src.width * 4;
	/* Rows in the order that never reads one already overwritten. */
	for (int32_t i = 0; i < src.height; i++) {
		int32_t row = dy > 0 ? src.y + src.height - 1 - i : src.y + i;
		uint32_t *from = img->pixels + (size_t)row * img->stride + src.x;
		uint32_t *to = img->pixels + (size_t)(row + dy) * img->stride + (src.x + dx);
		memmove(to, from, bytes);
	}
}

bool codec_apply_frame(struct decompressor *dec, struct image *img, const struct wire_frame *frame,
	char *err, size_t err_size)
{
	/* wire_decode refused overlapping rectangles, so raw_size is at most the
	 * frame's pixels; this only guards the promise. */
	if (frame->width != img->width || frame->height != img->height ||
		frame->raw_size > (uint64_t)img->width * img->height * 4) {
		snprintf(err, err_size, "frame of %u bytes does not fit a %dx%d image",
			frame->raw_size, img->width, img->height);
		return false;
	}
	const uint8_t *raw = frame->payload;
	if (frame->compression == WIRE_COMPRESS_NONE) {
		/* The payload is the raw bytes: XOR them in where they lie. */
		if (frame->payload_size != frame->raw_size) {
			snprintf(err, err_size, "payload of %u bytes is not its %u raw bytes",
				frame->payload_size, frame->raw_size);
			return false;
		}
	} else {
		if (dec->scratch_size < frame->raw_size) {
			uint8_t *scratch = realloc(dec->scratch, frame->raw_size);
			if (!scratch) {
				snprintf(err, err_size, "out of memory for a frame of %u bytes",
					frame->raw_size);
				return false;
			}
			dec->scratch = scratch;
			dec->scratch_size = frame->raw_size;
		}
		if (!decompressor_run(dec, frame->compression, frame->payload, frame->payload_size,
			    dec->scratch, frame->raw_size)) {
			snprintf(err, err_size, "payload does not decompress to its %u bytes",
				frame->raw_size);
			return false;
		}
		raw = dec->scratch;
	}
	if (frame->flags & WIRE_FRAME_REPLACE) {
		codec_pixels_apply(img, frame->rects, frame->nrects, raw);
	} else {
		codec_diff_apply(img, frame->rects, frame->nrects, raw);
	}
	return true;
}

size_t codec_append_frame(struct buffer *out, struct wire_frame frame, struct compressor *comp,
	const uint8_t *raw, size_t raw_size)
{
	frame.compression = (uint8_t)comp->kind;
	frame.raw_size = (uint32_t)raw_size;
	struct wire_msg msg = {.type = WIRE_FRAME, .frame = frame};
	size_t before = buffer_size(out), start;
	if (!wire_begin(out, &msg, &start) || !compressor_compress(comp, raw, raw_size, out)) {
		buffer_truncate(out, before);
		return 0;
	}
	wire_finish(out, start);
	return buffer_size(out) - before;
}
