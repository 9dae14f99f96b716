/*
 * Local windows for remote ones: toplevels and popups, and what the server
 * says of them. Their pixels are decode.c's and present.c's.
 */
#ifndef RCOMP_VIEWER_WINDOW_H
#define RCOMP_VIEWER_WINDOW_H

#include "viewer.h"

struct rv_window *window_create(struct rv_viewer *viewer, const struct wire_window_new *msg);
struct rv_window *window_create_popup(struct rv_viewer *viewer, const struct wire_popup_new *msg);
/* The window is in a reattach's snapshot: the same remote window. */
void window_reattach(struct rv_window *window, const struct wire_window_new *msg);
/* Destroys the window and its popups. NULL is ignored. */
void window_destroy(struct rv_window *window);
/* Destroys every window test accepts (and their popups). */
void window_destroy_if(struct rv_viewer *viewer, bool (*test)(struct rv_window *, void *),
	void *data);

void window_set_title(struct rv_window *window, const char *text, uint32_t len);
void window_set_app_id(struct rv_window *window, const char *text, uint32_t len);
void window_set_parent(struct rv_window *window, uint32_t parent_id);
/* The app asked for a state: the local compositor is asked, and its
 * configure goes back to the app as the answer. */
void window_request(struct rv_window *window, uint32_t request);
/* The app asked to be moved, resized or to show its window menu: the local
 * compositor does it, for the local press the server names. */
void window_grab(struct rv_window *window, const struct wire_window_grab *msg);
/* The titles of all windows again (the host name came or went). */
void window_show_titles(struct rv_viewer *viewer);
void window_set_hints(struct rv_window *window, const struct wire_window_hints *msg);
void window_set_decoration(struct rv_window *window, uint32_t mode);
/* While the link is down the window stays, dimmed and marked in its title. */
void window_set_disconnected(struct rv_window *window, bool disconnected);

#endif
