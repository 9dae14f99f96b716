/*
 * A frame's index, drawn into its picture where lossy coding keeps it: a
 * row of MARK_BITS squares of MARK_SIZE pixels along the top-left edge,
 * white for a 1 and black for a 0, least significant first. A square is
 * two 16x16 macroblocks wide at full size and one at half size, so a
 * coder at any bit rate keeps its mean near black or white; the reader
 * looks at each square's middle half only, where no neighbour bleeds.
 * The rows the mark occupies (MARK_SIZE of them) are left out of quality
 * measures. Shared by clip-client (which draws it), quality-probe (which
 * reads it from what the viewer showed) and test-mark.
 */
#ifndef RCOMP_TEST_MARK_H
#define RCOMP_TEST_MARK_H

#include <stdint.h>

#define MARK_BITS 12
#define MARK_SIZE 32
#define MARK_MODULO (1u << MARK_BITS)

/* Full-range BT.601 luma of an XRGB8888 pixel: what quality is measured
 * on, the same for the app's frame and the viewer's. */
static inline uint8_t mark_luma(uint32_t p)
{
	uint32_t r = p >> 16 & 0xff, g = p >> 8 & 0xff, b = p & 0xff;
	return (uint8_t)((77 * r + 150 * g + 29 * b + 128) >> 8);
}

/* Draws index (mod MARK_MODULO) on an XRGB8888 picture of width x height
 * (stride in pixels), which must be at least MARK_BITS * MARK_SIZE wide
 * and MARK_SIZE tall. */
static inline void mark_draw(uint32_t *pixels, int stride, uint32_t index)
{
	for (int bit = 0; bit < MARK_BITS; bit++) {
		uint32_t v = (index >> bit & 1) ? 0xffffffffu : 0xff000000u;
		for (int y = 0; y < MARK_SIZE; y++) {
			uint32_t *row = pixels + (long)y * stride + bit * MARK_SIZE;
			for (int x = 0; x < MARK_SIZE; x++) {
				row[x] = v;
			}
		}
	}
}

/* The index on a luma picture shown at scale (its width over the app's:
 * 1 at full size, 0.5 at half), or -1 where a square is neither black
 * nor white (the picture is not one of ours, or is a blend of two). */
static inline int mark_read(const uint8_t *luma, int stride, int width, int height, double scale)
{
	int size = (int)(MARK_SIZE * scale);
	if (size < 4 || MARK_BITS * size > width || size > height) {
		return -1;
	}
	int index = 0;
	for (int bit = 0; bit < MARK_BITS; bit++) {
		int x0 = bit * size + size / 4, y0 = size / 4, n = 0;
		uint32_t sum = 0;
		for (int y = y0; y < y0 + size / 2; y++) {
			for (int x = x0; x < x0 + size / 2; x++) {
				sum += luma[(long)y * stride + x];
				n++;
			}
		}
		uint32_t mean = sum / (uint32_t)n;
		if (mean > 64 && mean < 192) {
			return -1;
		}
		index |= (mean >= 192) << bit;
	}
	return index;
}

#endif
