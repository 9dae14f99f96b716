/* wl_shm buffers, for windows and the cursor. */
#ifndef RCOMP_SHM_H
#define RCOMP_SHM_H

#include "viewer.h"

/* A w x h ARGB8888 buffer, or XRGB8888 if opaque (the desktop then copies
 * it instead of blending it); *data maps it (w * h * 4 bytes). NULL,
 * logged, on failure. */
struct wl_buffer *shm_buffer_create(struct rv_viewer *viewer, int32_t width, int32_t height,
	bool opaque, void **data);

#endif
