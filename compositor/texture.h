/*
 * A renderer that only keeps textures, each holding its own copy of the
 * pixels. wlroots' pixman renderer makes a texture that points into the
 * client's wl_shm buffer and holds the buffer until the next one replaces
 * it, so every app keeps one buffer more than it needs (foot: "compositor
 * is not releasing buffers immediately"). Here a commit's damage is copied
 * out (wlroots calls write_pixels) and the buffer is released at once.
 * Nothing is ever rendered with it: each window is composited by capture.c.
 */
#ifndef RCOMP_TEXTURE_H
#define RCOMP_TEXTURE_H

#include <pixman.h>

struct wlr_renderer;
struct wlr_texture;

struct wlr_renderer *texture_renderer_create(void);
/* A texture's pixels, NULL if it is not one of ours. The image keeps only
 * what a window can show of a huge buffer (the wire's limits): the
 * texture's width and height are the buffer's, the image's may be less. */
pixman_image_t *texture_image(struct wlr_texture *texture);

#endif
