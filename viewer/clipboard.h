/*
 * The clipboard and the primary selection, both ways: the local selection
 * is offered to the server by its MIME types, the remote one becomes a
 * local data source, and data moves on paste as a transfer.
 */
#ifndef RCOMP_VIEWER_CLIPBOARD_H
#define RCOMP_VIEWER_CLIPBOARD_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-client.h>

#include "mime.h"
#include "transfer.h"
#include "wire.h"

struct pollfd;
struct rv_offer;
struct rv_viewer;
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

struct pollfd;

void clipboard_init(struct rv_viewer *viewer);
void clipboard_finish(struct rv_viewer *viewer);
/* Gets the seat's data devices, once the seat and managers are bound. */
void clipboard_seat(struct rv_viewer *viewer);
/* A new input serial: a remote selection waiting for one can be set. */
void clipboard_input_serial(struct rv_viewer *viewer);
/* The server's selection changed. */
void clipboard_selection(struct rv_viewer *viewer, const struct wire_selection *msg);
/* The server pastes the local selection. */
void clipboard_request(struct rv_viewer *viewer, const struct wire_transfer_request *msg);
/* transfer_data or transfer_ack. */
void clipboard_transfer(struct rv_viewer *viewer, const struct wire_msg *msg);
void clipboard_link_up(struct rv_viewer *viewer);
void clipboard_link_down(struct rv_viewer *viewer);
/* Ends transfers that stalled; returns the milliseconds until the next
 * may, or -1 when there is none. Call before clipboard_poll_fds. */
int clipboard_expire(struct rv_viewer *viewer);
/* Fills TRANSFER_MAX pollfds, one per transfer slot; apps are read only
 * while the link has room (may_send). */
void clipboard_poll_fds(struct rv_viewer *viewer, struct pollfd *fds, bool may_send);
void clipboard_handle_poll(struct rv_viewer *viewer, const struct pollfd *fds);

#endif
