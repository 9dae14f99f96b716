/*
 * A measuring aid: with RCOMP_VIEW_TAP naming a file (a FIFO, as
 * tools/bench_quality.py makes), rcomp-view writes there every picture it
 * hands the desktop, as it hands it: a tap_header, then width x height
 * XRGB8888 pixels, rows packed. The writes block, so whatever reads must
 * keep up; a failed write stops the tap (logged), never the viewer.
 */
#ifndef RCOMP_VIEWER_TAP_H
#define RCOMP_VIEWER_TAP_H

#include <stdint.h>

#define TAP_MAGIC 0x50415452u /* "RTAP" */
/* The same with width x height bytes of luma in place of the pixels, as
 * tools/bench_quality.py writes what the browser page painted. */
#define TAP_MAGIC_LUMA 0x4c415452u /* "RTAL" */

struct tap_header {
	uint32_t magic;
	uint32_t window;
	int32_t width, height;
	uint64_t us; /* CLOCK_MONOTONIC at the commit */
};

/* One picture of window, about to be committed. */
void tap_picture(uint32_t window, const uint32_t *pixels, int32_t width, int32_t height);

#endif
