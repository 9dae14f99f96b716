/*
 * Drag and drop, both ways (see dnd.h), as the compositor's dnd.c is on its
 * side.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/input-event-codes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "connection.h"
#include "dnd.h"
#include "files.h"
#include "handover.h"
#include "log.h"
#include "offer.h"
#include "shm.h"

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

void dnd_enter(struct rv_viewer *viewer, uint32_t serial, struct wl_surface *surface, wl_fixed_t x,
	wl_fixed_t y, struct wl_data_offer *proxy)
{
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
	c->dnd_x = x;
	c->dnd_y = y;
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

void dnd_leave(struct rv_viewer *viewer)
{
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

void dnd_motion(struct rv_viewer *viewer, wl_fixed_t x, wl_fixed_t y)
{
	struct rv_clipboard *c = &viewer->clipboard;
	if (c->own_window) {
		own_pointer(viewer,
			(struct wire_msg){.type = WIRE_POINTER_MOTION,
				.pointer_motion = {.window = c->own_window, .x = x, .y = y}});
	}
	if (viewer->clipboard.dnd_offer) {
		viewer->clipboard.dnd_x = x;
		viewer->clipboard.dnd_y = y;
		struct wire_msg msg = {.type = WIRE_DND_MOTION, .dnd_motion = {.x = x, .y = y}};
		connection_send(viewer, &msg);
	}
}

/* A drop of local files: their URIs read from the local drag (the source
 * writes them at once; half a second at most), and the files themselves
 * sent to the session, which gives the app a drop of its copies once they
 * are whole. False where the drag holds no local file: it goes as any
 * drag's data does. */
static bool drop_files(struct rv_viewer *viewer, struct rv_clipboard *c)
{
	static const char uri_list[] = "text/uri-list";
	if (viewer->connection.server_minor < 8 ||
		!mime_list_has(&c->dnd_offer->types, uri_list, sizeof(uri_list) - 1)) {
		return false;
	}
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		return false;
	}
	wl_data_offer_receive(c->dnd_offer->proxy, uri_list, fds[1]);
	close(fds[1]);
	wl_display_flush(viewer->display);
	static char list[65536];
	size_t len = 0;
	for (;;) {
		struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
		if (poll(&pfd, 1, 500) <= 0) {
			break;
		}
		ssize_t got = read(fds[0], list + len, sizeof(list) - 1 - len);
		if (got < 0 && errno == EINTR) {
			continue;
		}
		if (got <= 0 || (len += (size_t)got) == sizeof(list) - 1) {
			break;
		}
	}
	close(fds[0]);
	list[len] = '\0';
	char *paths[256];
	int n = files_uri_paths(list, paths, 256);
	if (n == 0) {
		return false;
	}
	if (!handover_drop(viewer, c->dnd_window, c->dnd_x, c->dnd_y, (const char *const *)paths,
		    n)) {
		return false;
	}
	/* The app hears nothing until the copies are whole: the drag leaves
	 * it now, and the session drops the copies there then. */
	connection_send(viewer, &(struct wire_msg){.type = WIRE_DND_LEAVE});
	if (wl_data_offer_get_version(c->dnd_offer->proxy) >= WL_DATA_OFFER_FINISH_SINCE_VERSION) {
		wl_data_offer_finish(c->dnd_offer->proxy);
	}
	log_info("%d local item%s dropped on window %u: to the session, and to the app once "
		 "there",
		n, n == 1 ? "" : "s", c->dnd_window);
	dnd_forget(c);
	return true;
}

void dnd_drop(struct rv_viewer *viewer)
{
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
	if (drop_files(viewer, c)) {
		return;
	}
	connection_send(viewer, &(struct wire_msg){.type = WIRE_DND_DROP});
	/* Kept until the app has its data (dnd_finish). */
	offer_destroy(c->dnd_dropped);
	c->dnd_dropped = c->dnd_offer;
	c->dnd_offer = NULL;
	c->dnd_window = 0;
}

void dnd_status(struct rv_viewer *viewer, const struct wire_dnd_status *msg)
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

void dnd_finish(struct rv_viewer *viewer)
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
void dnd_drag_icon(struct rv_viewer *viewer, const struct wire_drag_icon *msg)
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
	struct rv_viewer *viewer = data;
	/* A list of files: the files themselves come, and the target gets
	 * their copies here. */
	if (strcmp(mime, "text/uri-list") == 0 && viewer->connection.server_minor >= 8 &&
		viewer->connection.welcomed) {
		handover_drag_files(viewer, fd);
		return;
	}
	offer_fetch(viewer, WIRE_SELECTION_DND, mime, fd);
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

void dnd_drag_start(struct rv_viewer *viewer, const struct wire_drag_start *msg, uint32_t serial)
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
	mime_list_each(&types, offer_source_type, c->drag_source);
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

void dnd_drag_end(struct rv_viewer *viewer)
{
	/* Ended among the apps: the local drag goes (the desktop cancels it). */
	viewer->clipboard.drag_on_us = true;
	drag_done(viewer);
}

void dnd_link_down(struct rv_viewer *viewer)
{
	struct rv_clipboard *c = &viewer->clipboard;
	/* A dropped drag's data can no longer be fetched, and an app's drag
	 * is gone with the link. */
	offer_destroy(c->dnd_dropped);
	c->dnd_dropped = NULL;
	c->drag_on_us = true;
	drag_done(viewer);
}

void dnd_end(struct rv_viewer *viewer)
{
	dnd_forget(&viewer->clipboard);
	dnd_link_down(viewer);
}
