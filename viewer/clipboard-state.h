/*
 * What rcomp-view keeps of the clipboards and drags (clipboard.h, dnd.h):
 * types only, for viewer.h.
 */
#ifndef RCOMP_CLIPBOARD_STATE_H
#define RCOMP_CLIPBOARD_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-client.h>

#include "mime.h"
#include "transfer.h"

struct rv_offer;
struct zwp_primary_selection_device_manager_v1;
struct zwp_primary_selection_device_v1;
struct zwp_primary_selection_source_v1;

/* The remote selection of one kind, until it can be set locally. */
struct rv_remote {
	bool pending;
	struct mime_list types;
};

/* Clipboard and primary selection (clipboard.c). */
struct rv_clipboard {
	struct wl_data_device_manager *manager;
	struct zwp_primary_selection_device_manager_v1 *primary_manager;
	struct wl_data_device *device;
	struct zwp_primary_selection_device_v1 *primary_device;
	struct rv_offer *selection[2]; /* the local selections, by kind */
	/* A local drag over a window, and the last one dropped on one (kept
	 * until the app has its data). */
	struct rv_offer *dnd_offer, *dnd_dropped;
	uint32_t dnd_window, dnd_serial;
	wl_fixed_t dnd_x, dnd_y; /* where the drag is over dnd_window */
	/* An app's drag carried here (drag_start): our local drag's source,
	 * the actions and button it started with, what the desktop chose; and
	 * the offer of it while it is over one of our windows. */
	struct wl_data_source *drag_source;
	uint32_t drag_actions, drag_button, drag_action;
	bool drag_on_us; /* dropped on our window: the apps end it */
	struct rv_offer *own_offer;
	uint32_t own_window;
	/* Its icon (drag_icon): the surface, the buffers as for the cursor, and
	 * the offset applied so far. */
	struct wl_surface *drag_icon;
	struct wl_buffer *icon_buffer, *icon_old_buffer;
	int32_t icon_x, icon_y;
	struct wl_data_source *source; /* ours: the remote clipboard */
	struct zwp_primary_selection_source_v1 *primary_source;
	struct rv_remote remote[2];
	/* The types our source of that kind offers, while it is the local
	 * selection or on its way to be: an offer of these is ours. */
	struct mime_list offered[2];
	/* We told the server of a local selection of that kind it still holds:
	 * only then may we tell it that selection went. */
	bool announced[2];
	struct transfers transfers;
};

#endif
