/*
 * The clipboard and the primary selection, both ways. The local selection
 * is offered to the server by its MIME types; the remote one becomes a
 * local data source. Data moves only when someone pastes, as a transfer
 * (wire/transfer.c).
 */
#include <fcntl.h>
#include <linux/input-event-codes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clipboard.h"
#include "connection.h"
#include "log.h"
#include "monotonic.h"
#include "primary-selection-unstable-v1-client-protocol.h"
#include "shm.h"

struct rv_offer {
	void *proxy; /* wl_data_offer or zwp_primary_selection_offer_v1 */
	bool primary;
	bool own;
	struct mime_list types;
	uint32_t source_actions; /* a drag's */
	struct rv_viewer *viewer;
};

static void offer_destroy(struct rv_offer *offer)
{
	if (!offer) {
		return;
	}
	if (offer->primary) {
		zwp_primary_selection_offer_v1_destroy(offer->proxy);
	} else {
		wl_data_offer_destroy(offer->proxy);
	}
	free(offer);
}

static void offer_add_type(struct rv_offer *offer, const char *mime)
{
	mime_list_add(&offer->types, mime, strlen(mime));
}

static void data_offer_offer(void *data, struct wl_data_offer *proxy, const char *mime)
{
	offer_add_type(data, mime);
}

static void data_offer_source_actions(void *data, struct wl_data_offer *proxy, uint32_t actions)
{
	struct rv_offer *offer = data;
	offer->source_actions = actions & WIRE_DND_ALL;
}

static void data_offer_action(void *data, struct wl_data_offer *proxy, uint32_t action)
{
	/* The local desktop chose the drag's action (or after the drop, took
	 * the one the app picked after an ask): the app hears it. */
	struct rv_offer *offer = data;
	struct rv_viewer *viewer = offer->viewer;
	struct rv_clipboard *c = viewer ? &viewer->clipboard : NULL;
	bool ours = c && (c->dnd_offer == offer || (!c->dnd_offer && c->dnd_dropped == offer));
	if (ours && (action & (action - 1)) == 0) {
		struct wire_msg msg = {.type = WIRE_DND_ACTION,
			.dnd_action = {.action = action & WIRE_DND_ALL}};
		connection_send(viewer, &msg);
	}
}

static const struct wl_data_offer_listener data_offer_listener = {
	.offer = data_offer_offer,
	.source_actions = data_offer_source_actions,
	.action = data_offer_action,
};

static void primary_offer_offer(void *data, struct zwp_primary_selection_offer_v1 *proxy,
	const char *mime)
{
	offer_add_type(data, mime);
}

static const struct zwp_primary_selection_offer_v1_listener primary_offer_listener = {
	.offer = primary_offer_offer,
};

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

static void data_device_data_offer(void *data, struct wl_data_device *device,
	struct wl_data_offer *proxy)
{
	struct rv_offer *offer = calloc(1, sizeof(*offer));
	if (!offer) {
		wl_data_offer_destroy(proxy);
		return;
	}
	offer->proxy = proxy;
	offer->viewer = data;
	wl_data_offer_add_listener(proxy, &data_offer_listener, offer);
}

/* Drags from the local desktop over our windows go to the apps under them;
 * the server answers for the apps (dnd_status) and fetches the data when
 * one takes the drop (a transfer of kind WIRE_SELECTION_DND). */
static void dnd_forget(struct rv_clipboard *c)
{
	if (c->dnd_offer) {
		offer_destroy(c->dnd_offer);
		c->dnd_offer = NULL;
	}
	c->dnd_window = 0;
}

/* An app's drag, carried by the local desktop, over one of our windows:
 * the pointer moves the app's drag there (pointer messages), and its drop
 * is the press's release. */
static void own_pointer(struct rv_viewer *viewer, struct wire_msg msg)
{
	connection_send(viewer, &msg);
	connection_send(viewer, &(struct wire_msg){.type = WIRE_POINTER_FRAME});
}

static void own_forget(struct rv_clipboard *c)
{
	if (c->own_offer) {
		offer_destroy(c->own_offer);
		c->own_offer = NULL;
	}
	c->own_window = 0;
}

static void offer_data(void *source, const char *mime);

static void keep_first(void *first, const char *mime)
{
	if (!*(char *)first) {
		strcpy(first, mime);
	}
}

static void own_enter(struct rv_viewer *viewer, struct rv_window *window, uint32_t serial,
	wl_fixed_t x, wl_fixed_t y, struct rv_offer *offer)
{
	struct rv_clipboard *c = &viewer->clipboard;
	own_forget(c);
	if (!window || !offer) {
		offer_destroy(offer);
		return;
	}
	c->own_offer = offer;
	c->own_window = window->id;
	/* Whether an app takes it there is the app's drag's business: here
	 * the drag is always taken, so that the local desktop drops it. */
	char type[WIRE_MAX_MIME + 1] = "";
	mime_list_each(&offer->types, keep_first, type);
	wl_data_offer_accept(offer->proxy, serial, type[0] ? type : NULL);
	if (wl_data_offer_get_version(offer->proxy) >= WL_DATA_OFFER_SET_ACTIONS_SINCE_VERSION) {
		uint32_t actions = c->drag_actions ? c->drag_actions : WIRE_DND_COPY;
		wl_data_offer_set_actions(offer->proxy, actions, actions & -actions);
	}
	own_pointer(viewer,
		(struct wire_msg){.type = WIRE_POINTER_MOTION,
			.pointer_motion = {.window = window->id, .x = x, .y = y}});
}

static void data_device_enter(void *data, struct wl_data_device *device, uint32_t serial,
	struct wl_surface *surface, wl_fixed_t x, wl_fixed_t y, struct wl_data_offer *proxy)
{
	struct rv_viewer *viewer = data;
	struct rv_clipboard *c = &viewer->clipboard;
	struct rv_offer *offer = proxy ? wl_data_offer_get_user_data(proxy) : NULL;
	struct rv_window *window = window_of_surface(viewer, surface);
	if (c->drag_source) {
		own_enter(viewer, window, serial, x, y, offer);
		return;
	}
	dnd_forget(c);
	if (!offer || !window || offer->types.count == 0 || !viewer->connection.welcomed ||
		viewer->connection.server_minor < 1) {
		/* Not over a remote app, or none to give it to: refuse it. */
		offer_destroy(offer);
		return;
	}
	c->dnd_offer = offer;
	c->dnd_window = window->id;
	c->dnd_serial = serial;
	log_debug("a local drag entered window %u (%u types)", window->id, offer->types.count);
	struct wire_msg msg = {
		.type = WIRE_DND_ENTER,
		.dnd_enter =
			{
				.window = window->id,
				.x = x,
				.y = y,
				.source_actions = offer->source_actions,
				.count = offer->types.count,
				.types = offer->types.packed,
				.types_len = offer->types.used,
			},
	};
	connection_send(viewer, &msg);
}

static void data_device_leave(void *data, struct wl_data_device *device)
{
	struct rv_viewer *viewer = data;
	struct rv_clipboard *c = &viewer->clipboard;
	if (c->own_window) {
		own_pointer(viewer,
			(struct wire_msg){.type = WIRE_POINTER_LEAVE,
				.pointer_leave = {.window = c->own_window}});
		own_forget(c);
	}
	if (c->dnd_offer) {
		connection_send(viewer, &(struct wire_msg){.type = WIRE_DND_LEAVE});
		dnd_forget(c);
	}
}

static void data_device_motion(void *data, struct wl_data_device *device, uint32_t time,
	wl_fixed_t x, wl_fixed_t y)
{
	struct rv_viewer *viewer = data;
	struct rv_clipboard *c = &viewer->clipboard;
	if (c->own_window) {
		own_pointer(viewer,
			(struct wire_msg){.type = WIRE_POINTER_MOTION,
				.pointer_motion = {.window = c->own_window, .x = x, .y = y}});
	}
	if (viewer->clipboard.dnd_offer) {
		struct wire_msg msg = {.type = WIRE_DND_MOTION, .dnd_motion = {.x = x, .y = y}};
		connection_send(viewer, &msg);
	}
}

static void data_device_drop(void *data, struct wl_data_device *device)
{
	struct rv_viewer *viewer = data;
	struct rv_clipboard *c = &viewer->clipboard;
	if (c->own_window) {
		/* Dropped on an app of ours: the press's release drops the app's
		 * drag there, among the apps. */
		c->drag_on_us = true;
		own_pointer(viewer,
			(struct wire_msg){.type = WIRE_POINTER_BUTTON,
				.pointer_button = {.button = c->drag_button, .state = 0}});
		if (wl_data_offer_get_version(c->own_offer->proxy) >=
			WL_DATA_OFFER_FINISH_SINCE_VERSION) {
			wl_data_offer_finish(c->own_offer->proxy);
		}
		own_forget(c);
		return;
	}
	if (!c->dnd_offer) {
		return;
	}
	connection_send(viewer, &(struct wire_msg){.type = WIRE_DND_DROP});
	/* Kept until the app has its data (dnd_finish). */
	offer_destroy(c->dnd_dropped);
	c->dnd_dropped = c->dnd_offer;
	c->dnd_offer = NULL;
	c->dnd_window = 0;
}

void clipboard_dnd_status(struct rv_viewer *viewer, const struct wire_dnd_status *msg)
{
	struct rv_clipboard *c = &viewer->clipboard;
	if (!c->dnd_offer) {
		/* After the drop: the action the app picked after an ask. */
		if (c->dnd_dropped &&
			wl_data_offer_get_version(c->dnd_dropped->proxy) >=
				WL_DATA_OFFER_SET_ACTIONS_SINCE_VERSION) {
			wl_data_offer_set_actions(c->dnd_dropped->proxy, msg->actions,
				msg->preferred & msg->actions);
		}
		return; /* or the drag left meanwhile */
	}
	char type[WIRE_MAX_MIME + 1];
	memcpy(type, msg->mime, msg->mime_len);
	type[msg->mime_len] = '\0';
	bool accepted =
		msg->mime_len > 0 && mime_list_has(&c->dnd_offer->types, type, msg->mime_len);
	wl_data_offer_accept(c->dnd_offer->proxy, c->dnd_serial, accepted ? type : NULL);
	if (wl_data_offer_get_version(c->dnd_offer->proxy) >=
		WL_DATA_OFFER_SET_ACTIONS_SINCE_VERSION) {
		uint32_t preferred = msg->preferred & msg->actions;
		wl_data_offer_set_actions(c->dnd_offer->proxy, msg->actions, preferred);
	}
}

void clipboard_dnd_finish(struct rv_viewer *viewer)
{
	struct rv_clipboard *c = &viewer->clipboard;
	if (!c->dnd_dropped) {
		return;
	}
	if (wl_data_offer_get_version(c->dnd_dropped->proxy) >=
		WL_DATA_OFFER_FINISH_SINCE_VERSION) {
		wl_data_offer_finish(c->dnd_dropped->proxy);
	}
	offer_destroy(c->dnd_dropped);
	c->dnd_dropped = NULL;
}

static void data_device_selection(void *data, struct wl_data_device *device,
	struct wl_data_offer *proxy)
{
	struct rv_viewer *viewer = data;
	set_local_selection(viewer, WIRE_SELECTION_CLIPBOARD,
		proxy ? wl_data_offer_get_user_data(proxy) : NULL);
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
	struct rv_offer *offer = calloc(1, sizeof(*offer));
	if (!offer) {
		zwp_primary_selection_offer_v1_destroy(proxy);
		return;
	}
	offer->proxy = proxy;
	offer->primary = true;
	zwp_primary_selection_offer_v1_add_listener(proxy, &primary_offer_listener, offer);
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

/* A local app pastes the remote selection: fetch it from the server. */
static void request_from_server(struct rv_viewer *viewer, enum wire_selection_kind kind,
	const char *mime, int fd)
{
	struct rv_clipboard *c = &viewer->clipboard;
	if (!viewer->connection.connected) {
		close(fd);
		return;
	}
	if (!transfers_request(&c->transfers, kind, mime, fd)) {
		log_error("clipboard: too many pastes at once; this one gets nothing");
	}
}

static void data_source_target(void *data, struct wl_data_source *source, const char *mime)
{
}

static void data_source_send(void *data, struct wl_data_source *source, const char *mime,
	int32_t fd)
{
	request_from_server(data, WIRE_SELECTION_CLIPBOARD, mime, fd);
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

/* The local drag that carries an app's drag past our windows. */
static void drag_tell(struct rv_viewer *viewer, uint32_t state)
{
	struct rv_clipboard *c = &viewer->clipboard;
	if (c->drag_on_us) {
		return; /* dropped among the apps: theirs to end */
	}
	struct wire_msg msg = {.type = WIRE_DRAG_LOCAL,
		.drag_local = {.state = state, .action = c->drag_action & WIRE_DND_ALL}};
	if (msg.drag_local.action & (msg.drag_local.action - 1)) {
		msg.drag_local.action = 0;
	}
	connection_send(viewer, &msg);
}

static void icon_buffer_release(void *data, struct wl_buffer *buffer)
{
	struct rv_clipboard *c = data;
	if (buffer == c->icon_old_buffer) {
		wl_buffer_destroy(buffer);
		c->icon_old_buffer = NULL;
	}
}

static const struct wl_buffer_listener icon_buffer_listener = {
	.release = icon_buffer_release,
};

static void drop_icon(struct rv_clipboard *c)
{
	if (c->drag_icon) {
		wl_surface_destroy(c->drag_icon);
		c->drag_icon = NULL;
	}
	if (c->icon_buffer) {
		wl_buffer_destroy(c->icon_buffer);
		c->icon_buffer = NULL;
	}
	if (c->icon_old_buffer) {
		wl_buffer_destroy(c->icon_old_buffer);
		c->icon_old_buffer = NULL;
	}
	c->icon_x = c->icon_y = 0;
}

/* The app's drag icon on our local drag's icon surface: the attach offset
 * moves it where the app's is from the pointer. */
void clipboard_drag_icon(struct rv_viewer *viewer, const struct wire_drag_icon *msg)
{
	struct rv_clipboard *c = &viewer->clipboard;
	if (!c->drag_icon) {
		return;
	}
	struct wl_buffer *buffer = NULL;
	if (msg->width > 0) {
		void *pixels;
		buffer = shm_buffer_create(viewer, msg->width, msg->height, false, &pixels);
		if (!buffer) {
			return;
		}
		size_t size = (size_t)msg->width * msg->height * 4;
		memcpy(pixels, msg->pixels, size);
		munmap(pixels, size);
		wl_buffer_add_listener(buffer, &icon_buffer_listener, c);
	}
	if (c->icon_old_buffer) {
		wl_buffer_destroy(c->icon_old_buffer);
	}
	c->icon_old_buffer = c->icon_buffer;
	c->icon_buffer = buffer;
	wl_surface_attach(c->drag_icon, buffer, msg->x - c->icon_x, msg->y - c->icon_y);
	c->icon_x = msg->x;
	c->icon_y = msg->y;
	wl_surface_set_buffer_scale(c->drag_icon, msg->scale);
	wl_surface_damage_buffer(c->drag_icon, 0, 0, INT32_MAX, INT32_MAX);
	wl_surface_commit(c->drag_icon);
}

static void drag_done(struct rv_viewer *viewer)
{
	struct rv_clipboard *c = &viewer->clipboard;
	if (c->drag_source) {
		wl_data_source_destroy(c->drag_source);
		c->drag_source = NULL;
	}
	drop_icon(c);
	own_forget(c);
	c->drag_on_us = false;
	c->drag_action = 0;
}

static void drag_source_target(void *data, struct wl_data_source *source, const char *mime)
{
}

static void drag_source_send(void *data, struct wl_data_source *source, const char *mime,
	int32_t fd)
{
	request_from_server(data, WIRE_SELECTION_DND, mime, fd);
}

static void drag_source_cancelled(void *data, struct wl_data_source *source)
{
	drag_tell(data, WIRE_DRAG_CANCELLED);
	drag_done(data);
}

static void drag_source_drop_performed(void *data, struct wl_data_source *source)
{
	drag_tell(data, WIRE_DRAG_DROPPED);
}

static void drag_source_finished(void *data, struct wl_data_source *source)
{
	drag_tell(data, WIRE_DRAG_FINISHED);
	drag_done(data);
}

static void drag_source_action(void *data, struct wl_data_source *source, uint32_t action)
{
	struct rv_viewer *viewer = data;
	viewer->clipboard.drag_action = action;
}

static const struct wl_data_source_listener drag_source_listener = {
	.target = drag_source_target,
	.send = drag_source_send,
	.cancelled = drag_source_cancelled,
	.dnd_drop_performed = drag_source_drop_performed,
	.dnd_finished = drag_source_finished,
	.action = drag_source_action,
};

void clipboard_drag_start(struct rv_viewer *viewer, const struct wire_drag_start *msg,
	uint32_t serial)
{
	struct rv_clipboard *c = &viewer->clipboard;
	struct rv_window *window = window_from_id(viewer, msg->window);
	drag_done(viewer);
	if (!window || !window->surface || !c->device || !c->manager || serial == 0) {
		c->drag_on_us = false;
		connection_send(viewer,
			&(struct wire_msg){.type = WIRE_DRAG_LOCAL,
				.drag_local = {.state = WIRE_DRAG_CANCELLED}});
		return;
	}
	c->drag_source = wl_data_device_manager_create_data_source(c->manager);
	wl_data_source_add_listener(c->drag_source, &drag_source_listener, viewer);
	static struct mime_list types; /* too large for the stack, and one at a time */
	mime_list_from(&types, msg->count, msg->types, msg->types_len);
	mime_list_each(&types, offer_data, c->drag_source);
	c->drag_actions = msg->source_actions;
	if (wl_data_source_get_version(c->drag_source) >=
			WL_DATA_SOURCE_SET_ACTIONS_SINCE_VERSION &&
		msg->source_actions) {
		wl_data_source_set_actions(c->drag_source, msg->source_actions);
	}
	c->drag_button = viewer->seat.last_button ? viewer->seat.last_button : BTN_LEFT;
	log_debug("window %u: the app's drag goes on here", window->id);
	/* Its icon, which drag_icon fills, shows wherever the pointer goes. */
	c->drag_icon = wl_compositor_create_surface(viewer->compositor);
	wl_data_device_start_drag(c->device, c->drag_source, window->surface, c->drag_icon, serial);
}

void clipboard_drag_end(struct rv_viewer *viewer)
{
	/* Ended among the apps: the local drag goes (the desktop cancels it). */
	viewer->clipboard.drag_on_us = true;
	drag_done(viewer);
}

static void primary_source_send(void *data, struct zwp_primary_selection_source_v1 *source,
	const char *mime, int32_t fd)
{
	request_from_server(data, WIRE_SELECTION_PRIMARY, mime, fd);
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

static void offer_data(void *source, const char *mime)
{
	wl_data_source_offer(source, mime);
}

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
			mime_list_each(&r->types, offer_data, source);
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
	/* A dropped drag's data can no longer be fetched, and an app's drag
	 * is gone with the link. */
	offer_destroy(c->dnd_dropped);
	c->dnd_dropped = NULL;
	c->drag_on_us = true;
	drag_done(viewer);
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
	dnd_forget(c);
	offer_destroy(c->dnd_dropped);
	c->dnd_dropped = NULL;
	c->drag_on_us = true;
	drag_done(viewer);
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
