/* Drag and drop between the apps and the local desktop (dnd.c). */
#ifndef RCOMP_DND_H
#define RCOMP_DND_H

#include <stdbool.h>
#include <stdint.h>

#include "dnd-state.h"
#include "wire.h"

struct rc_server;
struct rc_window;
struct wlr_data_source;

void dnd_init(struct rc_server *server);
void dnd_enter(struct rc_server *server, struct rc_window *window,
	const struct wire_dnd_enter *msg);
void dnd_motion(struct rc_server *server, const struct wire_dnd_motion *msg);
void dnd_leave(struct rc_server *server);
void dnd_drop(struct rc_server *server);
void dnd_action(struct rc_server *server, const struct wire_dnd_action *msg);
/* Files come whole from a drop at x, y (24.8) of window: the app under
 * them gets them as a drop of text/uri-list (uris, taken). */
void dnd_drop_files(struct rc_server *server, struct rc_window *window, int32_t x, int32_t y,
	char *uris, size_t len);
void dnd_finish(struct rc_server *server);
/* The viewer left, or the window went: the drag over it ends. */
void dnd_viewer_gone(struct rc_server *server);
void dnd_window_gone(struct rc_server *server, struct rc_window *window);

/* Drags from the apps: the viewer's word on one outside our windows, and
 * the source a drop there takes its data from (NULL: none). */
void dnd_out_init(struct rc_server *server);
void dnd_out_finish(struct rc_server *server);
void dnd_drag_local(struct rc_server *server, const struct wire_drag_local *msg);
struct wlr_data_source *dnd_out_source(struct rc_server *server);

#endif
