/*
 * What drag and drop keeps (dnd.h): types only, for server.h.
 */
#ifndef RCOMP_DND_STATE_H
#define RCOMP_DND_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-server-core.h>

#include "mime.h"
#include "wire.h"

struct rc_server;
struct wlr_data_source;
struct wlr_drag;
struct wlr_surface;

/* A drag from the local desktop over a window (dnd.c). */
struct rc_dnd {
	struct rc_server *server;
	bool active; /* between dnd_enter and dnd_leave or dnd_drop */
	uint32_t window;
	struct mime_list types;
	uint32_t source_actions, action; /* action: the local desktop's choice */
	/* The surface under it, the offer we made its app, and its answer. */
	struct wlr_surface *surface;
	struct wl_listener surface_destroy;
	struct wl_resource *offer, *device;
	char accepted[WIRE_MAX_MIME + 1]; /* "": none */
	uint32_t dest_actions, preferred;
	/* The offer of the last drop, until its app finishes: where it picks
	 * the final action after an ask. */
	struct wl_resource *dropped;
	/* Files dropped on a window, come whole (handover.c): the drop is
	 * ours, its data their URIs, made once the app under them answers
	 * the enter (or given up after a while). */
	char *files; /* text/uri-list; NULL: a viewer's drag */
	size_t files_len;
	struct wl_event_source *files_timer;
};

/* An app's drag (dnd.c): wlroots' while over the apps; its source, for a
 * drop on a local app. */
struct rc_drag_out {
	struct wlr_drag *drag;
	struct wlr_data_source *source;
	struct wl_listener drag_destroy, source_destroy;
	bool told; /* the viewer carries it too */
	bool local; /* dropped on a local app: the source is the viewer's now */
	struct wlr_surface *icon; /* its icon, and where its corner is */
	int32_t icon_x, icon_y;
	bool icon_size_logged;
	struct wl_listener icon_commit, icon_destroy;
};

#endif
