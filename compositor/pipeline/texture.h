/*
 * A renderer that only keeps textures, and the pixels of each surface.
 * wlroots' pixman renderer makes a texture that points into the client's
 * wl_shm buffer and holds the buffer until the next one replaces it, so
 * every app keeps one buffer more than it needs (foot: "compositor is not
 * releasing buffers immediately"); copying each commit instead costs a copy
 * per commit, a thousand a second for an unpaced game. Here a commit's
 * buffer is held until the window's next frame, copied (its damage only)
 * and released then; a buffer superseded before that is released uncopied.
 * Nothing is ever rendered with the renderer: capture.c composites windows.
 */
#ifndef RCOMP_TEXTURE_H
#define RCOMP_TEXTURE_H

#include <pixman.h>

struct wlr_renderer;
struct wlr_surface;

struct wlr_renderer *texture_renderer_create(void);
/* After each commit of the surface: its damage waits to be copied. */
void texture_surface_commit(struct wlr_surface *surface);
/* The surface's pixels as of its newest buffer, which is copied now if it
 * was not, and released; NULL if it has none. The image keeps only what a
 * window can show of a huge buffer (the wire's limits): *width and *height
 * are the buffer's, the image's may be less. */
pixman_image_t *texture_surface_image(struct wlr_surface *surface, int *width, int *height);
/* Copies the surface's newest buffer if it was not, and releases it. */
void texture_surface_settle(struct wlr_surface *surface);

#endif
