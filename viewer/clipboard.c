/*
 * The clipboard and the primary selection, both ways. The local selection
 * is offered to the server by its MIME types; the remote one becomes a
 * local data source. Data moves only when someone pastes, as a transfer
 * (protocol/transfer.c). The seat's data device is ours; what it says of drags
 * goes to dnd.c, and what a local offer is, to offer.c.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clipboard.h"
#include "connection.h"
#include "dnd.h"
#include "log.h"
#include "monotonic.h"
#include "offer.h"
#include "primary-selection-unstable-v1-client-protocol.h"

/* Tells the server what the local selection of one kind offers, if that
 * is news to it. */
static void send_selection(struct rv_viewer *viewer, enum wire_selection_kind kind)
{
	struct rv_clipboard *c = &viewer->clipboard;
	struct rv_offer *offer = c->selection[kind];
	struct wire_msg msg;
	if (offer && offer->own) {
		/* The server's own selection, shown here: it holds an app's. */
		c->announced[kind] = false;
		return;
	}
	if (!offer || offer->types.count == 0) {
		/* The local selection went. That matters to the server only if it
		 * holds the one we announced, and never when a remote selection
		 * waits to be shown here: it is newer than ours. */
		if (!c->announced[kind] || c->remote[kind].pending) {
			return;
		}
		static const struct mime_list none;
		log_debug("clipboard: the local %s selection went",
			kind == WIRE_SELECTION_PRIMARY ? "primary" : "clipboard");
		c->announced[kind] = false;
		mime_list_to_msg(&none, kind, &msg);
		connection_send(viewer, &msg);
		return;
	}
	/* A local copy is newer than a remote one still waiting for a serial. */
	c->remote[kind].pending = false;
	c->announced[kind] = true;
	log_debug("clipboard: offering the local %s selection (%u types)",
		kind == WIRE_SELECTION_PRIMARY ? "primary" : "clipboard", offer->types.count);
	mime_list_to_msg(&offer->types, kind, &msg);
	connection_send(viewer, &msg);
}

static bool own_source(struct rv_clipboard *c, enum wire_selection_kind kind)
{
	return kind == WIRE_SELECTION_CLIPBOARD ? c->source != NULL : c->primary_source != NULL;
}

static void set_local_selection(struct rv_viewer *viewer, enum wire_selection_kind kind,
	struct rv_offer *offer)
{
	struct rv_clipboard *c = &viewer->clipboard;
	if (c->selection[kind] != offer) {
		offer_destroy(c->selection[kind]);
		c->selection[kind] = offer;
	}
	/* The compositor shows us our own selection as an offer of the same
	 * types. Ours stays the selection until the compositor cancels our
	 * source, which it does before it tells us of anyone else's. */
	if (offer && own_source(c, kind) && mime_list_equal(&offer->types, &c->offered[kind])) {
		offer->own = true;
	}
	send_selection(viewer, kind);
}

static void data_device_selection(void *data, struct wl_data_device *device,
	struct wl_data_offer *proxy)
{
	struct rv_viewer *viewer = data;
	set_local_selection(viewer, WIRE_SELECTION_CLIPBOARD,
		proxy ? wl_data_offer_get_user_data(proxy) : NULL);
}

static void data_device_data_offer(void *data, struct wl_data_device *device,
	struct wl_data_offer *proxy)
{
	offer_new(data, proxy);
}

/* Drags over our windows are dnd.c's. */
static void data_device_enter(void *data, struct wl_data_device *device, uint32_t serial,
	struct wl_surface *surface, wl_fixed_t x, wl_fixed_t y, struct wl_data_offer *proxy)
{
	dnd_enter(data, serial, surface, x, y, proxy);
}

static void data_device_leave(void *data, struct wl_data_device *device)
{
	dnd_leave(data);
}

static void data_device_motion(void *data, struct wl_data_device *device, uint32_t time,
	wl_fixed_t x, wl_fixed_t y)
{
	dnd_motion(data, x, y);
}

static void data_device_drop(void *data, struct wl_data_device *device)
{
	dnd_drop(data);
}

static const struct wl_data_device_listener data_device_listener = {
	.data_offer = data_device_data_offer,
	.enter = data_device_enter,
	.leave = data_device_leave,
	.motion = data_device_motion,
	.drop = data_device_drop,
	.selection = data_device_selection,
};

static void primary_device_data_offer(void *data, struct zwp_primary_selection_device_v1 *device,
	struct zwp_primary_selection_offer_v1 *proxy)
{
	offer_new_primary(proxy);
}

static void primary_device_selection(void *data, struct zwp_primary_selection_device_v1 *device,
	struct zwp_primary_selection_offer_v1 *proxy)
{
	struct rv_viewer *viewer = data;
	set_local_selection(viewer, WIRE_SELECTION_PRIMARY,
		proxy ? zwp_primary_selection_offer_v1_get_user_data(proxy) : NULL);
}

static const struct zwp_primary_selection_device_v1_listener primary_device_listener = {
	.data_offer = primary_device_data_offer,
	.selection = primary_device_selection,
};

static void data_source_target(void *data, struct wl_data_source *source, const char *mime)
{
}

static void data_source_send(void *data, struct wl_data_source *source, const char *mime,
	int32_t fd)
{
	offer_fetch(data, WIRE_SELECTION_CLIPBOARD, mime, fd);
}

static void data_source_cancelled(void *data, struct wl_data_source *source)
{
	struct rv_viewer *viewer = data;
	if (viewer->clipboard.source == source) {
		viewer->clipboard.source = NULL;
	}
	wl_data_source_destroy(source);
}

static const struct wl_data_source_listener data_source_listener = {
	.target = data_source_target,
	.send = data_source_send,
	.cancelled = data_source_cancelled,
};

static void primary_source_send(void *data, struct zwp_primary_selection_source_v1 *source,
	const char *mime, int32_t fd)
{
	offer_fetch(data, WIRE_SELECTION_PRIMARY, mime, fd);
}

static void primary_source_cancelled(void *data, struct zwp_primary_selection_source_v1 *source)
{
	struct rv_viewer *viewer = data;
	if (viewer->clipboard.primary_source == source) {
		viewer->clipboard.primary_source = NULL;
	}
	zwp_primary_selection_source_v1_destroy(source);
}

static const struct zwp_primary_selection_source_v1_listener primary_source_listener = {
	.send = primary_source_send,
	.cancelled = primary_source_cancelled,
};

static void offer_primary(void *source, const char *mime)
{
	zwp_primary_selection_source_v1_offer(source, mime);
}

/* The remote selection becomes the local one. Setting a selection takes
 * the serial of recent input, so without keyboard focus it waits. */
static void apply_remote(struct rv_viewer *viewer, enum wire_selection_kind kind)
{
	struct rv_clipboard *c = &viewer->clipboard;
	struct rv_remote *r = &c->remote[kind];
	uint32_t serial = viewer->seat.keyboard_serial;
	if (!r->pending || !serial) {
		return;
	}
	r->pending = false;
	log_debug("clipboard: the remote %s selection (%u types) becomes the local one",
		kind == WIRE_SELECTION_PRIMARY ? "primary" : "clipboard", r->types.count);
	/* A remote selection that went clears only ours, never one a local
	 * app made since. */
	if (r->types.count == 0 &&
		!(kind == WIRE_SELECTION_CLIPBOARD ? (void *)c->source
						   : (void *)c->primary_source)) {
		return;
	}
	c->offered[kind] = r->types;
	if (kind == WIRE_SELECTION_CLIPBOARD && c->device) {
		struct wl_data_source *source = NULL;
		if (r->types.count > 0) {
			source = wl_data_device_manager_create_data_source(c->manager);
			wl_data_source_add_listener(source, &data_source_listener, viewer);
			mime_list_each(&r->types, offer_source_type, source);
		}
		wl_data_device_set_selection(c->device, source, serial);
		c->source = source;
	} else if (kind == WIRE_SELECTION_PRIMARY && c->primary_device) {
		struct zwp_primary_selection_source_v1 *source = NULL;
		if (r->types.count > 0) {
			source = zwp_primary_selection_device_manager_v1_create_source(
				c->primary_manager);
			zwp_primary_selection_source_v1_add_listener(source,
				&primary_source_listener, viewer);
			mime_list_each(&r->types, offer_primary, source);
		}
		zwp_primary_selection_device_v1_set_selection(c->primary_device, source, serial);
		c->primary_source = source;
	}
}

void clipboard_input_serial(struct rv_viewer *viewer)
{
	apply_remote(viewer, WIRE_SELECTION_CLIPBOARD);
	apply_remote(viewer, WIRE_SELECTION_PRIMARY);
}

void clipboard_request(struct rv_viewer *viewer, const struct wire_transfer_request *msg)
{
	struct rv_clipboard *c = &viewer->clipboard;
	struct rv_offer *offer = msg->kind == WIRE_SELECTION_DND
		? (c->dnd_dropped ? c->dnd_dropped : c->dnd_offer)
		: c->selection[msg->kind];
	char type[WIRE_MAX_MIME + 1];
	size_t len = msg->mime_len;
	memcpy(type, msg->mime, len);
	type[len] = '\0';
	int fds[2];
	if (!offer || offer->own || !mime_list_has(&offer->types, type, len) ||
		pipe2(fds, O_CLOEXEC) < 0) {
		transfers_refuse(&c->transfers, msg->id);
		return;
	}
	if (offer->primary) {
		zwp_primary_selection_offer_v1_receive(offer->proxy, type, fds[1]);
	} else {
		wl_data_offer_receive(offer->proxy, type, fds[1]);
	}
	close(fds[1]);
	wl_display_flush(viewer->display);
	if (!transfers_start(&c->transfers, msg->id, fds[0], true)) {
		transfers_refuse(&c->transfers, msg->id);
	}
}

void clipboard_selection(struct rv_viewer *viewer, const struct wire_selection *msg)
{
	struct rv_remote *r = &viewer->clipboard.remote[msg->kind];
	mime_list_from_msg(&r->types, msg);
	log_debug("clipboard: the server's %s selection offers %u types",
		msg->kind == WIRE_SELECTION_PRIMARY ? "primary" : "clipboard", r->types.count);
	r->pending = true;
	/* The server tells us only of selections not ours: it holds none of
	 * ours now. */
	viewer->clipboard.announced[msg->kind] = false;
	apply_remote(viewer, msg->kind);
}

void clipboard_transfer(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	char err[160];
	if (!transfers_handle_message(&viewer->clipboard.transfers, msg, err, sizeof(err))) {
		connection_fail(viewer, "%s", err);
	}
}

void clipboard_link_up(struct rv_viewer *viewer)
{
	/* A new server connection holds nothing of ours: offer a local
	 * selection, but an empty one is no news and would clear nothing. */
	viewer->clipboard.announced[WIRE_SELECTION_CLIPBOARD] = false;
	viewer->clipboard.announced[WIRE_SELECTION_PRIMARY] = false;
	send_selection(viewer, WIRE_SELECTION_CLIPBOARD);
	send_selection(viewer, WIRE_SELECTION_PRIMARY);
}

void clipboard_link_down(struct rv_viewer *viewer)
{
	struct rv_clipboard *c = &viewer->clipboard;
	transfers_finish(&c->transfers);
	dnd_link_down(viewer);
}

static void transfer_send(void *data, const struct wire_msg *msg)
{
	connection_send(data, msg);
}

static void transfer_done(void *data, struct transfer *tr, bool ok)
{
	log_debug("clipboard: %s %llu bytes %s the server", ok ? "moved" : "gave up after",
		(unsigned long long)tr->bytes, tr->sending ? "to" : "from");
}

void clipboard_init(struct rv_viewer *viewer)
{
	struct rv_clipboard *c = &viewer->clipboard;
	transfers_init(&c->transfers, transfer_send, transfer_done, viewer);
}

void clipboard_seat(struct rv_viewer *viewer)
{
	struct rv_clipboard *c = &viewer->clipboard;
	if (!viewer->seat.seat) {
		return;
	}
	if (c->manager && !c->device) {
		c->device = wl_data_device_manager_get_data_device(c->manager, viewer->seat.seat);
		wl_data_device_add_listener(c->device, &data_device_listener, viewer);
	}
	if (c->primary_manager && !c->primary_device) {
		c->primary_device =
			zwp_primary_selection_device_manager_v1_get_device(c->primary_manager,
				viewer->seat.seat);
		zwp_primary_selection_device_v1_add_listener(c->primary_device,
			&primary_device_listener, viewer);
	}
}

int clipboard_expire(struct rv_viewer *viewer)
{
	int64_t next = transfers_expire(&viewer->clipboard.transfers, monotonic_usec());
	return next < 0 ? -1 : (int)(next / 1000) + 1;
}

void clipboard_poll_fds(struct rv_viewer *viewer, struct pollfd *fds, bool may_send)
{
	struct rv_clipboard *c = &viewer->clipboard;
	for (int i = 0; i < TRANSFER_MAX; i++) {
		struct transfer *tr = &c->transfers.slots[i];
		fds[i].fd = tr->fd;
		fds[i].events = tr->fd >= 0 ? transfers_events(tr, may_send) : 0;
		fds[i].revents = 0;
	}
}

void clipboard_handle_poll(struct rv_viewer *viewer, const struct pollfd *fds)
{
	struct rv_clipboard *c = &viewer->clipboard;
	for (int i = 0; i < TRANSFER_MAX; i++) {
		struct transfer *tr = &c->transfers.slots[i];
		if (tr->fd >= 0 && tr->fd == fds[i].fd && fds[i].revents) {
			transfers_handle_fd(&c->transfers, tr);
		}
	}
}

void clipboard_finish(struct rv_viewer *viewer)
{
	struct rv_clipboard *c = &viewer->clipboard;
	transfers_finish(&c->transfers);
	for (int k = 0; k < 2; k++) {
		offer_destroy(c->selection[k]);
		c->selection[k] = NULL;
	}
	dnd_end(viewer);
	if (c->source) {
		wl_data_source_destroy(c->source);
	}
	if (c->primary_source) {
		zwp_primary_selection_source_v1_destroy(c->primary_source);
	}
	if (c->device) {
		wl_data_device_destroy(c->device);
	}
	if (c->primary_device) {
		zwp_primary_selection_device_v1_destroy(c->primary_device);
	}
	if (c->manager) {
		wl_data_device_manager_destroy(c->manager);
	}
	if (c->primary_manager) {
		zwp_primary_selection_device_manager_v1_destroy(c->primary_manager);
	}
}
