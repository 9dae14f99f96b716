/*
 * Scaling a BGRA picture with pixman's bilinear filter (its SIMD paths
 * take a fraction of libswscale's general scaler), edges padded: the one
 * way rcomp scales pictures on the CPU, down before encoding and up where
 * the desktop cannot.
 */
#ifndef RCOMP_SCALE_H
#define RCOMP_SCALE_H

#include <stdbool.h>
#include <stdint.h>

/* src (sw x sh, stride in pixels) scaled to fill dst (dw x dh), in bands
 * of rows on the band pool (bands.h). False if pixman cannot take the
 * images. */
bool scale_bilinear(const uint32_t *src, int32_t sw, int32_t sh, int32_t src_stride, uint32_t *dst,
	int32_t dw, int32_t dh, int32_t dst_stride);

#endif
