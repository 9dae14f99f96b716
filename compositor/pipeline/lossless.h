/*
 * The lossless frame (lossless.c), on a worker.
 */
#ifndef RCOMP_LOSSLESS_H
#define RCOMP_LOSSLESS_H

#include "encoder.h"

/* The viewer's copy follows the image's size; a new size starts whole. */
bool lossless_fit(struct rc_encoder *enc, struct image image);
/* Encodes what changed as a lossless frame into enc->out; returns its bytes
 * (0: none) and, in *changed, how many pixels the diff carries. A frame of
 * one band of the damage returns, in *share, the part of the damage it
 * holds; what it left waits in damage. */
size_t lossless_send(struct rc_encoder *enc, struct tools *tools, struct image cur,
	pixman_region32_t *damage, uint64_t *changed, double *share);
uint64_t region_area(pixman_region32_t *region);

#endif
