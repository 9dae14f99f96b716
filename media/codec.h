/*
 * Lossless pixel codec: rectangles of 32-bit pixels XORed against the last
 * frame the peer holds, then compressed with lz4 or zstd.
 */
#ifndef RCOMP_CODEC_H
#define RCOMP_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "wire.h"

/* A view of 32-bit pixels; stride is in pixels. */
struct image {
	uint32_t *pixels;
	int32_t width, height, stride;
};

struct compressor {
	enum wire_compression kind;
	int level;
	/* Bytes traded for speed, frame by frame: lz4 at a higher acceleration,
	 * zstd at its fastest positive level. Where bytes are cheap. */
	bool fast;
	void *zstd; /* ZSTD_CCtx */
	int zstd_level; /* the level the context has now */
};

struct decompressor {
	void *zstd; /* ZSTD_DCtx */
	/* Decompressed frame bytes, kept between frames; never more than the
	 * largest frame's pixels. */
	uint8_t *scratch;
	size_t scratch_size;
};

/* The codecs this build decodes and encodes, as hello's and welcome's caps. */
uint32_t codec_local_caps(void);

/* Parses "none", "lz4", "zstd" or "zstd:LEVEL". */
bool codec_parse_compression(const char *text, enum wire_compression *kind, int *level);
const char *codec_compression_name(enum wire_compression kind);

bool compressor_init(struct compressor *comp, enum wire_compression kind, int level);
void compressor_finish(struct compressor *comp);
/* Appends the compressed form of src to out; false if out refuses the size. */
bool compressor_compress(struct compressor *comp, const uint8_t *src, size_t size,
	struct buffer *out);

bool decompressor_init(struct decompressor *dec);
void decompressor_finish(struct decompressor *dec);
/* Decompresses into exactly raw_size bytes at dst. Returns false if the
 * payload is malformed or does not decompress to exactly raw_size bytes. */
bool decompressor_run(struct decompressor *dec, enum wire_compression kind, const uint8_t *src,
	size_t size, uint8_t *dst, size_t raw_size);

/* Shrinks rect to the bounding box of the pixels that differ between a and b
 * (same size). Returns false when no pixel differs. */
bool codec_rect_shrink(const struct image *a, const struct image *b, struct wire_rect *rect);

/* Writes cur XOR base for each rectangle, row by row, into raw, and copies the
 * rectangles of cur into base. Returns the bytes written. */
size_t codec_diff_encode(const struct image *cur, struct image *base, const struct wire_rect *rects,
	size_t nrects, uint8_t *raw);

/* Copies the rectangles of cur into base. */
void codec_rects_copy(const struct image *cur, struct image *base, const struct wire_rect *rects,
	size_t nrects);

/* Writes the pixels of cur in each rectangle, row by row, into raw: a frame
 * with WIRE_FRAME_REPLACE. Returns the bytes written. */
size_t codec_pixels_encode(const struct image *cur, const struct wire_rect *rects, size_t nrects,
	uint8_t *raw);
/* Writes raw's pixels into img for each rectangle; the rectangles were
 * validated. */
void codec_pixels_apply(struct image *img, const uint8_t *rects, uint32_t nrects,
	const uint8_t *raw);

/* Appends a frame message: frame's fields, its payload raw (raw_size bytes)
 * compressed by comp (which sets the frame's compression and raw size).
 * Returns the bytes appended; 0, with out unchanged, if out refuses them. */
size_t codec_append_frame(struct buffer *out, struct wire_frame frame, struct compressor *comp,
	const uint8_t *raw, size_t raw_size);

/* XORs raw into img for each rectangle; the rectangles were validated. */
void codec_diff_apply(struct image *img, const uint8_t *rects, uint32_t nrects, const uint8_t *raw);

/* Whether the rectangle src of img, and where dx, dy moves it, both lie
 * inside img. */
bool codec_copy_fits(const struct image *img, struct wire_rect src, int32_t dx, int32_t dy);
/* Moves the rectangle src of img by dx, dy (codec_copy_fits holds); what it
 * leaves behind is unchanged. */
void codec_copy(struct image *img, struct wire_rect src, int32_t dx, int32_t dy);

/* Applies a lossless frame that wire_decode accepted to img, which has the
 * frame's size: decompresses the payload into dec's scratch and XORs it in.
 * Returns false, with a reason in err, if the payload does not decompress to
 * exactly raw_size bytes; img may then hold part of the frame. */
bool codec_apply_frame(struct decompressor *dec, struct image *img, const struct wire_frame *frame,
	char *err, size_t err_size);

#endif
