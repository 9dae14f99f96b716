/*
 * The remote app's cursor, shown as the local cursor while the pointer is
 * over one of our windows.
 */
#ifndef RCOMP_VIEWER_CURSOR_H
#define RCOMP_VIEWER_CURSOR_H

#include "viewer.h"

/* The server's cursor changed (or it is hidden). */
void cursor_set(struct rv_viewer *viewer, const struct wire_cursor *msg);
/* Shows it, once the app has set one, if the pointer is over our window. */
void cursor_show(struct rv_viewer *viewer);
void cursor_finish(struct rv_viewer *viewer);

#endif
