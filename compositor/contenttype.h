/*
 * What an app says its surfaces show (wp_content_type_v1), for the
 * window's encoders (contenttype.c).
 */
#ifndef RCOMP_CONTENTTYPE_H
#define RCOMP_CONTENTTYPE_H

#include <stdbool.h>
#include <wayland-server-core.h>

#include "encoder.h" /* enum rc_content */

struct wlr_surface;

bool contenttype_init(struct wl_display *display);
/* What the app last committed for the surface (NULL: none). */
enum rc_content contenttype_of(struct wlr_surface *surface);

#endif
