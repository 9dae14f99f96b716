/*
 * Presentation: each window's image reaches its local surface through a
 * small pool of wl_shm buffers, at the pace of the local frame callbacks,
 * the newest frame winning; each commit acknowledges the newest frame to
 * the server.
 */
#ifndef RCOMP_PRESENT_H
#define RCOMP_PRESENT_H

#include "viewer.h"

void present_init(struct rv_window *window);
void present_finish(struct rv_window *window);
/* Commits the image if it is newer and the compositor is ready for it. */
void present(struct rv_window *window);
/* A buffer a whole video picture of width x height may be decoded into
 * (the image's size, or a smaller picture's own where the window has a
 * viewport), or NULL (then into the image): the picture then goes to the
 * desktop without a copy. */
struct rv_buffer *present_video_buffer(struct rv_window *window, int32_t width, int32_t height);
/* A whole picture was decoded into buf, the newest the window has. */
void present_video_decoded(struct rv_window *window, struct rv_buffer *buf);
/* Brings the image up to date with the newest picture, before anything
 * reads or changes it. */
void present_sync_image(struct rv_window *window);
/* Areas of the image that changed (image pixels). */
void present_damage(struct rv_window *window, pixman_region32_t *damage);
void present_damage_all(struct rv_window *window);
/* The image has a new size: buffers of the old one go once released. */
void present_resized(struct rv_window *window);
/* Acknowledges the newest configure, once the image fits it. */
void present_ack_configure(struct rv_window *window);

#endif
