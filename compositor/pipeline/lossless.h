/*
 * The lossless frame (lossless.c), on a worker.
 */
#ifndef RCOMP_LOSSLESS_H
#define RCOMP_LOSSLESS_H

#include "encoder.h"

/* The viewer's copy follows the image's size; a new size starts whole. */
bool lossless_fit(struct rc_encoder *enc, struct image image);
/* What a lossless frame carried, for the choice of codec (encode.c). */
struct lossless_sent {
	size_t bytes; /* the frame's, a copy_rect before it included; 0: none */
	uint64_t changed; /* pixels its diff carries */
	/* The part of the damage (after any scroll) its band holds; what it
	 * left waits in the damage. 1: all. */
	double share;
	/* While bands still fill a whole picture (filling), the pixels of
	 * the part the viewer has that changed again, after any scroll
	 * (again), and of that part (have). */
	bool filling;
	uint64_t again, have;
};

/* Encodes what changed as a lossless frame into enc->out, a copy_rect of
 * what scrolled first; returns its bytes (0: none) and fills *sent. */
size_t lossless_send(struct rc_encoder *enc, struct tools *tools, struct image cur,
	pixman_region32_t *damage, struct lossless_sent *sent);
uint64_t region_area(pixman_region32_t *region);

#endif
