/*
 * The clipboard and the primary selection, both ways. An app's selection is
 * offered to the viewer by its MIME types only; data moves when someone
 * pastes, as a transfer (protocol/transfer.c). The viewer's local selection
 * becomes a data source here whose data is fetched from the viewer.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wlr/types/wlr_data_control_v1.h>
#include <wlr/types/wlr_data_device.h>
#include <wlr/types/wlr_primary_selection.h>
#include <wlr/types/wlr_primary_selection_v1.h>
#include <wlr/types/wlr_seat.h>

#include "clipboard.h"
#include "log.h"
#include "mime.h"
#include "monotonic.h"
#include "server.h"

/* The viewer's selection, as a source apps here can paste from. */
struct remote_source {
	struct wlr_data_source base;
	struct wlr_primary_selection_source primary;
	struct rc_server *server;
};

static const struct wlr_data_source_impl remote_impl;
static const struct wlr_primary_selection_source_impl remote_primary_impl;

/* Asks the viewer for the data, to be written to fd. */
void clipboard_request_from_viewer(struct rc_server *server, enum wire_selection_kind kind,
	const char *mime, int fd)
{
	struct rc_clipboard *c = &server->clipboard;
	if (!input_connection(server)) {
		close(fd);
		return;
	}
	if (!transfers_request(&c->transfers, kind, mime, fd)) {
		log_error("clipboard: too many pastes at once; this one gets nothing");
		return;
	}
	clipboard_sync(server);
}

static void remote_send(struct wlr_data_source *source, const char *mime, int32_t fd)
{
	struct remote_source *r = wl_container_of(source, r, base);
	clipboard_request_from_viewer(r->server, WIRE_SELECTION_CLIPBOARD, mime, fd);
}

static void remote_destroy(struct wlr_data_source *source)
{
	struct remote_source *r = wl_container_of(source, r, base);
	free(r);
}

static const struct wlr_data_source_impl remote_impl = {
	.send = remote_send,
	.destroy = remote_destroy,
};

static void remote_primary_send(struct wlr_primary_selection_source *source, const char *mime,
	int fd)
{
	struct remote_source *r = wl_container_of(source, r, primary);
	clipboard_request_from_viewer(r->server, WIRE_SELECTION_PRIMARY, mime, fd);
}

static void remote_primary_destroy(struct wlr_primary_selection_source *source)
{
	struct remote_source *r = wl_container_of(source, r, primary);
	free(r);
}

static const struct wlr_primary_selection_source_impl remote_primary_impl = {
	.send = remote_primary_send,
	.destroy = remote_primary_destroy,
};

/* The app's selection of that kind, or NULL if there is none or it is the
 * viewer's own. */
static struct wl_array *app_mime_types(struct rc_server *server, enum wire_selection_kind kind)
{
	if (kind == WIRE_SELECTION_CLIPBOARD) {
		struct wlr_data_source *s = server->seat->selection_source;
		return s && s->impl != &remote_impl ? &s->mime_types : NULL;
	}
	struct wlr_primary_selection_source *p = server->seat->primary_selection_source;
	return p && p->impl != &remote_primary_impl ? &p->mime_types : NULL;
}

static bool has_selection(struct rc_server *server, enum wire_selection_kind kind)
{
	return kind == WIRE_SELECTION_CLIPBOARD ? server->seat->selection_source != NULL
						: server->seat->primary_selection_source != NULL;
}

static void offer_to_viewer(struct rc_server *server, enum wire_selection_kind kind,
	bool only_if_set)
{
	struct wl_array *types = app_mime_types(server, kind);
	/* No app's selection: the viewer's own (nothing to tell it), or none,
	 * which a new viewer need not hear of. */
	if (!input_connection(server) || (!types && (only_if_set || has_selection(server, kind)))) {
		return;
	}
	static struct mime_list list;
	list.count = list.used = 0;
	char **mime;
	if (types) {
		wl_array_for_each(mime, types)
		{
			mime_list_add(&list, *mime, strnlen(*mime, WIRE_MAX_MIME + 1));
		}
	}
	struct wire_msg msg;
	mime_list_to_msg(&list, kind, &msg);
	connection_send(input_connection(server), &msg);
}

static void handle_request_set_selection(struct wl_listener *listener, void *data)
{
	struct rc_server *server =
		wl_container_of(listener, server, clipboard.request_set_selection);
	struct wlr_seat_request_set_selection_event *event = data;
	wlr_seat_set_selection(server->seat, event->source, event->serial);
}

static void handle_request_set_primary_selection(struct wl_listener *listener, void *data)
{
	struct rc_server *server =
		wl_container_of(listener, server, clipboard.request_set_primary_selection);
	struct wlr_seat_request_set_primary_selection_event *event = data;
	wlr_seat_set_primary_selection(server->seat, event->source, event->serial);
}

static void handle_set_selection(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, clipboard.set_selection);
	offer_to_viewer(server, WIRE_SELECTION_CLIPBOARD, false);
}

static void handle_set_primary_selection(struct wl_listener *listener, void *data)
{
	struct rc_server *server =
		wl_container_of(listener, server, clipboard.set_primary_selection);
	offer_to_viewer(server, WIRE_SELECTION_PRIMARY, false);
}

/* Clears the selection of that kind if it is the viewer's. */
static void clear_viewers(struct rc_server *server, enum wire_selection_kind kind)
{
	struct wlr_seat *seat = server->seat;
	uint32_t serial = wl_display_next_serial(server->display);
	if (kind == WIRE_SELECTION_PRIMARY) {
		struct wlr_primary_selection_source *p = seat->primary_selection_source;
		if (p && p->impl == &remote_primary_impl) {
			wlr_seat_set_primary_selection(seat, NULL, serial);
		}
	} else {
		struct wlr_data_source *s = seat->selection_source;
		if (s && s->impl == &remote_impl) {
			wlr_seat_set_selection(seat, NULL, serial);
		}
	}
}

void clipboard_selection(struct rc_server *server, const struct wire_selection *msg)
{
	struct wlr_seat *seat = server->seat;
	uint32_t serial = wl_display_next_serial(server->display);
	bool primary = msg->kind == WIRE_SELECTION_PRIMARY;
	if (msg->count == 0) {
		/* The viewer's selection went: that clears only the viewer's own,
		 * never one an app made since. */
		clear_viewers(server, msg->kind);
		return;
	}
	struct remote_source *r = calloc(1, sizeof(*r));
	if (!r) {
		log_error("clipboard: out of memory; the local selection is not offered");
		return;
	}
	r->server = server;
	struct wl_array *types;
	if (primary) {
		wlr_primary_selection_source_init(&r->primary, &remote_primary_impl);
		types = &r->primary.mime_types;
	} else {
		wlr_data_source_init(&r->base, &remote_impl);
		types = &r->base.mime_types;
	}
	size_t pos = 0, len;
	const char *mime;
	while (mime_next(msg, &pos, &mime, &len)) {
		char **slot = wl_array_add(types, sizeof(*slot));
		if (!slot || !(*slot = strndup(mime, len))) {
			if (slot) {
				types->size -= sizeof(*slot);
			}
			break;
		}
	}
	if (primary) {
		wlr_seat_set_primary_selection(seat, &r->primary, serial);
	} else {
		wlr_seat_set_selection(seat, &r->base, serial);
	}
}

static bool mime_offered(struct wl_array *types, const char *mime, size_t len)
{
	char **t;
	wl_array_for_each(t, types)
	{
		if (strlen(*t) == len && memcmp(*t, mime, len) == 0) {
			return true;
		}
	}
	return false;
}

void clipboard_request(struct rc_server *server, const struct wire_transfer_request *msg,
	struct wlr_data_source *drag_source)
{
	struct rc_clipboard *c = &server->clipboard;
	enum wire_selection_kind kind = msg->kind;
	struct wl_array *types = kind != WIRE_SELECTION_DND ? app_mime_types(server, kind)
		: drag_source				    ? &drag_source->mime_types
							    : NULL;
	const char *mime = msg->mime;
	size_t len = msg->mime_len;
	char type[WIRE_MAX_MIME + 1];
	int fds[2];
	if (!types || !mime_offered(types, mime, len) || pipe2(fds, O_CLOEXEC) < 0) {
		transfers_refuse(&c->transfers, msg->id);
		return;
	}
	memcpy(type, mime, len);
	type[len] = '\0';
	/* The source's owner writes to fds[1] (and it is closed here). */
	if (kind == WIRE_SELECTION_DND) {
		wlr_data_source_send(drag_source, type, fds[1]);
	} else if (kind == WIRE_SELECTION_CLIPBOARD) {
		wlr_data_source_send(server->seat->selection_source, type, fds[1]);
	} else {
		wlr_primary_selection_source_send(server->seat->primary_selection_source, type,
			fds[1]);
	}
	if (!transfers_start(&c->transfers, msg->id, fds[0], true)) {
		log_error("clipboard: too many pastes at once; this one gets nothing");
		transfers_refuse(&c->transfers, msg->id);
	}
	clipboard_sync(server);
}

bool clipboard_transfer(struct rc_server *server, const struct wire_msg *msg, char *err,
	size_t err_size)
{
	bool ok = transfers_handle_message(&server->clipboard.transfers, msg, err, err_size);
	clipboard_sync(server);
	return ok;
}

static int handle_fd(int fd, uint32_t mask, void *data)
{
	struct rc_server *server = data;
	struct rc_clipboard *c = &server->clipboard;
	for (size_t i = 0; i < TRANSFER_MAX; i++) {
		if (c->transfers.slots[i].fd == fd) {
			transfers_handle_fd(&c->transfers, &c->transfers.slots[i]);
			break;
		}
	}
	clipboard_sync(server);
	return 0;
}

static void transfer_send(void *data, const struct wire_msg *msg)
{
	struct rc_server *server = data;
	if (input_connection(server)) {
		connection_send(input_connection(server), msg);
	}
}

static void transfer_done(void *data, struct transfer *tr, bool ok)
{
	struct rc_server *server = data;
	struct rc_clipboard *c = &server->clipboard;
	size_t i = (size_t)(tr - c->transfers.slots);
	if (c->sources[i]) {
		wl_event_source_remove(c->sources[i]);
		c->sources[i] = NULL;
	}
	log_info("clipboard: %s %llu bytes %s the viewer", ok ? "moved" : "gave up after",
		(unsigned long long)tr->bytes, tr->sending ? "to" : "from");
}

static int handle_idle_timer(void *data)
{
	clipboard_sync(data);
	return 0;
}

void clipboard_sync(struct rc_server *server)
{
	struct rc_clipboard *c = &server->clipboard;
	/* Stalled transfers end first, so no watch is left on a closed fd. */
	int64_t next = transfers_expire(&c->transfers, monotonic_usec());
	if (c->idle_timer) {
		wl_event_source_timer_update(c->idle_timer, next < 0 ? 0 : (int)(next / 1000) + 1);
	}
	struct rc_connection *conn = input_connection(server);
	bool may_send = conn && connection_may_send_bulk(conn);
	for (size_t i = 0; i < TRANSFER_MAX; i++) {
		struct transfer *tr = &c->transfers.slots[i];
		if (tr->fd < 0) {
			continue;
		}
		if (!c->sources[i]) {
			c->sources[i] =
				wl_event_loop_add_fd(server->loop, tr->fd, 0, handle_fd, server);
			c->masks[i] = 0;
			if (!c->sources[i]) {
				continue;
			}
		}
		short events = transfers_events(tr, may_send);
		uint32_t mask = (events & POLLIN ? WL_EVENT_READABLE : 0) |
			(events & POLLOUT ? WL_EVENT_WRITABLE : 0);
		/* This runs on every turn of the loop: change the watch (a
		 * syscall) only when it changes. */
		if (mask != c->masks[i]) {
			c->masks[i] = mask;
			wl_event_source_fd_update(c->sources[i], mask);
		}
	}
}

void clipboard_viewer_gone(struct rc_server *server)
{
	transfers_finish(&server->clipboard.transfers);
	/* Nobody can paste what the viewer held: apps see no selection rather
	 * than one that gives nothing. The next viewer offers its own. */
	clear_viewers(server, WIRE_SELECTION_CLIPBOARD);
	clear_viewers(server, WIRE_SELECTION_PRIMARY);
}

bool clipboard_init(struct rc_server *server)
{
	struct rc_clipboard *c = &server->clipboard;
	transfers_init(&c->transfers, transfer_send, transfer_done, server);
	c->idle_timer = wl_event_loop_add_timer(server->loop, handle_idle_timer, server);
	if (!c->idle_timer || !wlr_primary_selection_v1_device_manager_create(server->display) ||
		!wlr_data_control_manager_v1_create(server->display)) {
		return false;
	}
	struct wlr_seat *seat = server->seat;
	c->request_set_selection.notify = handle_request_set_selection;
	wl_signal_add(&seat->events.request_set_selection, &c->request_set_selection);
	c->request_set_primary_selection.notify = handle_request_set_primary_selection;
	wl_signal_add(&seat->events.request_set_primary_selection,
		&c->request_set_primary_selection);
	c->set_selection.notify = handle_set_selection;
	wl_signal_add(&seat->events.set_selection, &c->set_selection);
	c->set_primary_selection.notify = handle_set_primary_selection;
	wl_signal_add(&seat->events.set_primary_selection, &c->set_primary_selection);
	return true;
}

void clipboard_offer_all(struct rc_server *server)
{
	/* A session without a selection leaves the local one alone. */
	offer_to_viewer(server, WIRE_SELECTION_CLIPBOARD, true);
	offer_to_viewer(server, WIRE_SELECTION_PRIMARY, true);
}

void clipboard_finish(struct rc_server *server)
{
	struct rc_clipboard *c = &server->clipboard;
	transfers_finish(&c->transfers);
	if (c->idle_timer) {
		wl_event_source_remove(c->idle_timer);
		c->idle_timer = NULL;
	}
	wl_list_remove(&c->request_set_selection.link);
	wl_list_remove(&c->request_set_primary_selection.link);
	wl_list_remove(&c->set_selection.link);
	wl_list_remove(&c->set_primary_selection.link);
}
