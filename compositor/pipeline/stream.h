/*
 * A window's video stream (stream.c), on a worker.
 */
#ifndef RCOMP_STREAM_H
#define RCOMP_STREAM_H

#include "encoder.h"

/* Starts the window's stream at its size for the frame rate: false (and
 * video_failed) if no encoder opens. */
bool stream_start(struct rc_encoder *enc);
/* Encodes the image as the stream's next frame into enc->out (a new
 * stream first where one is due). */
void stream_send(struct rc_encoder *enc, struct tools *tools, struct image cur,
	pixman_region32_t *damage);
/* Back to lossless: the stream ends, and all of the window is damaged for
 * its exact refresh. */
void stream_stop(struct rc_encoder *enc, pixman_region32_t *damage, const char *why);
/* Ends the stream, and gives its threads back. */
void stream_drop(struct rc_encoder *enc);
/* What a video frame would cost now, in bytes. */
double stream_frame_bytes(const struct rc_encoder *enc);

#endif
