/*
 * Decoding: a frame from the server becomes the window's image, as a
 * lossless XOR diff (after lz4/zstd) or an H.264 picture, and is then
 * presented.
 */
#ifndef RCOMP_DECODE_H
#define RCOMP_DECODE_H

#include "viewer.h"

void decode_frame(struct rv_window *window, const struct wire_frame *msg);
/* Moves part of the image, as the frame that follows expects; nothing is
 * shown until that frame. */
void decode_copy(struct rv_window *window, const struct wire_copy_rect *msg);
/* A new stream follows (a reattach): the video decoder goes. */
void decode_reset(struct rv_window *window);
/* The window's video picture is smaller than the window (its own size is
 * padded to even); *pw, *ph: the picture's size. */
bool decode_picture_smaller(const struct rv_window *window, int *pw, int *ph);
/* The window goes: its image and decoder with it. */
void decode_finish(struct rv_window *window);

#endif
