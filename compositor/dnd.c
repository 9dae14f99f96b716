/*
 * Drags from the local desktop into the apps. While the viewer's drag is
 * over a window, the app's surface under it gets a drag as a local app's
 * would: a wl_data_offer of ours with the drag's types and actions, then
 * enter, motion, leave or drop on its data device. What the app accepts
 * goes back to the viewer (dnd_status), which answers the local desktop
 * with it; the data, when the app receives it, is fetched from the viewer
 * like a paste (a transfer of kind WIRE_SELECTION_DND).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wlr/types/wlr_data_device.h>
#include <wlr/types/wlr_seat.h>

#include "clipboard.h"
#include "connection.h"
#include "cursor.h"
#include "dnd.h"
#include "input.h"
#include "log.h"
#include "monotonic.h"
#include "server.h"

static struct rc_dnd *dnd_of(struct wl_resource *offer)
{
	return wl_resource_get_user_data(offer);
}

/* A preferred action as the wire takes it: one of them, or none. */
static uint32_t one_action(uint32_t preferred)
{
	return (preferred & (preferred - 1)) == 0 ? preferred & WIRE_DND_ALL : 0;
}

static void files_answered(struct rc_dnd *d);
static void files_end(struct rc_dnd *d, const char *why);

static void tell_status(struct rc_dnd *d)
{
	struct rc_server *server = d->server;
	if (d->files) {
		files_answered(d); /* our own drop: no viewer's drag to tell */
		return;
	}
	if (!input_connection(server)) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_DND_STATUS,
		.dnd_status =
			{
				.actions = d->dest_actions & WIRE_DND_ALL,
				.preferred = d->preferred,
				.mime = d->accepted,
				.mime_len = (uint32_t)strlen(d->accepted),
			},
	};
	connection_send(input_connection(server), &msg);
}

static void offer_accept(struct wl_client *client, struct wl_resource *resource, uint32_t serial,
	const char *mime)
{
	struct rc_dnd *d = dnd_of(resource);
	if (!d || d->offer != resource) {
		return;
	}
	size_t len = mime ? strlen(mime) : 0;
	if (len > WIRE_MAX_MIME || (mime && !mime_list_has(&d->types, mime, len))) {
		len = 0; /* a type we never offered: no acceptance */
	}
	memcpy(d->accepted, mime ? mime : "", len);
	d->accepted[len] = '\0';
	tell_status(d);
}

static void offer_receive(struct wl_client *client, struct wl_resource *resource, const char *mime,
	int32_t fd)
{
	struct rc_dnd *d = dnd_of(resource);
	if (!d || d->offer != resource || !mime_list_has(&d->types, mime, strlen(mime))) {
		close(fd);
		return;
	}
	clipboard_request_from_viewer(d->server, WIRE_SELECTION_DND, mime, fd);
}

static void offer_destroy(struct wl_client *client, struct wl_resource *resource)
{
	wl_resource_destroy(resource);
}

static void offer_finish(struct wl_client *client, struct wl_resource *resource)
{
	/* Before a drop: a client error the protocol names; ignored here. */
}

static void offer_set_actions(struct wl_client *client, struct wl_resource *resource,
	uint32_t actions, uint32_t preferred)
{
	struct rc_dnd *d = dnd_of(resource);
	if (!d || d->offer != resource) {
		return;
	}
	d->dest_actions = actions & WIRE_DND_ALL;
	d->preferred = one_action(preferred);
	tell_status(d);
}

/* A dropped drag's offer: the app receives its data and finishes, even
 * while the next drag is under way. */
struct rc_dropped {
	struct rc_server *server;
	struct mime_list types;
	bool finished;
	char *data; /* a drop of files: their URIs, ours to write; else the viewer's */
	size_t len;
};

/* Bytes written to an app's fd as it reads them, the loop never waiting
 * on it. */
struct rc_writer {
	int fd;
	char *data;
	size_t len, at;
	struct wl_event_source *source;
};

static void writer_free(struct rc_writer *w)
{
	if (w->source) {
		wl_event_source_remove(w->source);
	}
	close(w->fd);
	free(w->data);
	free(w);
}

static int handle_writable(int fd, uint32_t mask, void *data)
{
	struct rc_writer *w = data;
	while (w->at < w->len) {
		ssize_t n = write(w->fd, w->data + w->at, w->len - w->at);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && errno == EAGAIN && !(mask & (WL_EVENT_HANGUP | WL_EVENT_ERROR))) {
			return 0;
		}
		if (n <= 0) {
			break;
		}
		w->at += (size_t)n;
	}
	writer_free(w);
	return 0;
}

static void write_to_app(struct rc_server *server, int fd, const char *data, size_t len)
{
	struct rc_writer *w = calloc(1, sizeof(*w));
	if (!w || !(w->data = malloc(len ? len : 1))) {
		free(w);
		close(fd);
		return;
	}
	memcpy(w->data, data, len);
	w->fd = fd;
	w->len = len;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	w->source = wl_event_loop_add_fd(server->loop, fd, WL_EVENT_WRITABLE, handle_writable, w);
	if (!w->source) {
		writer_free(w);
	}
}

static void dropped_accept(struct wl_client *client, struct wl_resource *resource, uint32_t serial,
	const char *mime)
{
}

static void dropped_receive(struct wl_client *client, struct wl_resource *resource,
	const char *mime, int32_t fd)
{
	struct rc_dropped *dropped = wl_resource_get_user_data(resource);
	if (!mime_list_has(&dropped->types, mime, strlen(mime))) {
		close(fd);
		return;
	}
	if (dropped->data) {
		write_to_app(dropped->server, fd, dropped->data, dropped->len);
		return;
	}
	clipboard_request_from_viewer(dropped->server, WIRE_SELECTION_DND, mime, fd);
}

static void dropped_finish(struct wl_client *client, struct wl_resource *resource)
{
	struct rc_dropped *dropped = wl_resource_get_user_data(resource);
	if (!dropped->finished && !dropped->data && input_connection(dropped->server)) {
		connection_send(input_connection(dropped->server),
			&(struct wire_msg){.type = WIRE_DND_FINISH});
	}
	dropped->finished = true;
	if (dropped->server->dnd.dropped == resource) {
		dropped->server->dnd.dropped = NULL;
	}
}

/* After an ask, the app picks the final action: the local desktop hears it
 * from the viewer's offer, and its answer comes back as dnd_action. */
static void dropped_set_actions(struct wl_client *client, struct wl_resource *resource,
	uint32_t actions, uint32_t preferred)
{
	struct rc_dropped *dropped = wl_resource_get_user_data(resource);
	struct rc_server *server = dropped->server;
	if (dropped->finished || dropped->data || server->dnd.dropped != resource ||
		!input_connection(server)) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_DND_STATUS,
		.dnd_status = {.actions = actions & WIRE_DND_ALL,
			.preferred = one_action(preferred)},
	};
	connection_send(input_connection(server), &msg);
}

static const struct wl_data_offer_interface dropped_impl = {
	.accept = dropped_accept,
	.receive = dropped_receive,
	.destroy = offer_destroy,
	.finish = dropped_finish,
	.set_actions = dropped_set_actions,
};

static void handle_dropped_destroy(struct wl_resource *resource)
{
	/* Gone without finish (version < 3, or the app gave up): done too. */
	dropped_finish(NULL, resource);
	struct rc_dropped *dropped = wl_resource_get_user_data(resource);
	free(dropped->data);
	free(dropped);
}

static const struct wl_data_offer_interface offer_impl = {
	.accept = offer_accept,
	.receive = offer_receive,
	.destroy = offer_destroy,
	.finish = offer_finish,
	.set_actions = offer_set_actions,
};

static void handle_offer_resource_destroy(struct wl_resource *resource)
{
	struct rc_dnd *d = dnd_of(resource);
	if (d && d->offer == resource) {
		d->offer = NULL;
	}
}

/* The offer no longer speaks for the drag (left, or a new one). */
static void offer_inert(struct rc_dnd *d)
{
	if (d->offer) {
		wl_resource_set_user_data(d->offer, NULL);
		d->offer = NULL;
	}
	d->device = NULL;
	d->accepted[0] = '\0';
	d->dest_actions = d->preferred = 0;
	if (d->surface) {
		wl_list_remove(&d->surface_destroy.link);
		d->surface = NULL;
	}
}

static void handle_surface_destroy(struct wl_listener *listener, void *data)
{
	struct rc_dnd *d = wl_container_of(listener, d, surface_destroy);
	offer_inert(d);
	tell_status(d);
}

static void send_type(void *offer, const char *mime)
{
	wl_data_offer_send_offer(offer, mime);
}

/* The target's data device, with the offer made for it. */
static bool enter_surface(struct rc_dnd *d, struct wlr_surface *surface, double sx, double sy)
{
	struct rc_server *server = d->server;
	struct wl_client *client = wl_resource_get_client(surface->resource);
	struct wlr_seat_client *seat_client = wlr_seat_client_for_wl_client(server->seat, client);
	if (!seat_client || wl_list_empty(&seat_client->data_devices)) {
		return false; /* an app without a data device takes no drops */
	}
	struct wl_resource *device = wl_resource_from_link(seat_client->data_devices.next);
	uint32_t version = (uint32_t)wl_resource_get_version(device);
	struct wl_resource *offer =
		wl_resource_create(client, &wl_data_offer_interface, (int)version, 0);
	if (!offer) {
		wl_client_post_no_memory(client);
		return false;
	}
	wl_resource_set_implementation(offer, &offer_impl, d, handle_offer_resource_destroy);
	wl_data_device_send_data_offer(device, offer);
	mime_list_each(&d->types, send_type, offer);
	if (version >= WL_DATA_OFFER_SOURCE_ACTIONS_SINCE_VERSION) {
		wl_data_offer_send_source_actions(offer, d->source_actions);
	}
	d->offer = offer;
	d->device = device;
	d->surface = surface;
	d->surface_destroy.notify = handle_surface_destroy;
	wl_signal_add(&surface->events.destroy, &d->surface_destroy);
	wl_data_device_send_enter(device, wl_display_next_serial(server->display),
		surface->resource, wl_fixed_from_double(sx), wl_fixed_from_double(sy), offer);
	return true;
}

static void leave_surface(struct rc_dnd *d)
{
	if (d->device && d->offer) {
		wl_data_device_send_leave(d->device);
	}
	offer_inert(d);
}

/* The drag at window coordinates x, y of window: the surface under it gets
 * it (motion), or the one it left a leave and the new one an enter. */
static void move_to(struct rc_dnd *d, struct rc_window *window, double x, double y)
{
	double sx = 0, sy = 0;
	struct wlr_surface *surface = window ? window_surface_under(window, x, y, &sx, &sy) : NULL;
	if (surface == d->surface && surface) {
		if (d->device) {
			wl_data_device_send_motion(d->device, monotonic_msec(),
				wl_fixed_from_double(sx), wl_fixed_from_double(sy));
		}
		return;
	}
	bool had = d->surface != NULL;
	leave_surface(d);
	if (surface) {
		enter_surface(d, surface, sx, sy);
	}
	if (had || d->surface) {
		tell_status(d); /* a new target has accepted nothing yet */
	}
}

void dnd_init(struct rc_server *server)
{
	server->dnd.server = server;
}

void dnd_enter(struct rc_server *server, struct rc_window *window, const struct wire_dnd_enter *msg)
{
	struct rc_dnd *d = &server->dnd;
	if (d->files) {
		files_end(d, "a drag from the viewer came over them first");
	}
	leave_surface(d);
	mime_list_from(&d->types, msg->count, msg->types, msg->types_len);
	d->source_actions = msg->source_actions;
	d->window = window->id;
	d->active = true;
	log_debug("a local drag entered window %u (%u types)", window->id, msg->count);
	move_to(d, window, msg->x / 256.0, msg->y / 256.0);
}

void dnd_motion(struct rc_server *server, const struct wire_dnd_motion *msg)
{
	struct rc_dnd *d = &server->dnd;
	if (d->active) {
		move_to(d, window_from_id(server, d->window), msg->x / 256.0, msg->y / 256.0);
	}
}

void dnd_leave(struct rc_server *server)
{
	struct rc_dnd *d = &server->dnd;
	leave_surface(d);
	d->active = false;
}

void dnd_drop(struct rc_server *server)
{
	struct rc_dnd *d = &server->dnd;
	if (!d->active) {
		return;
	}
	d->active = false;
	bool taken = d->device && d->offer && d->accepted[0] &&
		(wl_resource_get_version(d->offer) < WL_DATA_OFFER_ACTION_SINCE_VERSION ||
			d->action != 0);
	if (!taken) {
		leave_surface(d);
		return;
	}
	struct rc_dropped *dropped = calloc(1, sizeof(*dropped));
	if (!dropped) {
		leave_surface(d);
		return;
	}
	log_debug("a local drag dropped on window %u as %s", d->window, d->accepted);
	dropped->server = server;
	dropped->types = d->types;
	/* The offer is the app's now, to receive from and finish. */
	wl_resource_set_implementation(d->offer, &dropped_impl, dropped, handle_dropped_destroy);
	wl_data_device_send_drop(d->device);
	d->dropped = d->offer;
	d->offer = NULL;
	offer_inert(d);
}

/* Files dropped on a window ----------------------------------------------- */

static void files_end(struct rc_dnd *d, const char *why)
{
	if (why) {
		log_warning("the files dropped on window %u are in place, but %s", d->window, why);
	}
	if (d->files_timer) {
		wl_event_source_timer_update(d->files_timer, 0);
	}
	leave_surface(d);
	d->active = false;
	free(d->files);
	d->files = NULL;
}

static int handle_files_timer(void *data)
{
	files_end(data, "the app under them did not take them as a drop");
	return 0;
}

/* The app under the drop answered the enter: dropped as soon as it takes
 * the URIs by copy. */
static void files_answered(struct rc_dnd *d)
{
	if (!d->offer || !d->accepted[0]) {
		return; /* not yet, or not this type: the timer gives it up */
	}
	uint32_t copy = WL_DATA_DEVICE_MANAGER_DND_ACTION_COPY;
	if (wl_resource_get_version(d->offer) >= WL_DATA_OFFER_ACTION_SINCE_VERSION) {
		if (!(d->dest_actions & copy)) {
			return;
		}
		wl_data_offer_send_action(d->offer, copy);
	}
	struct rc_dropped *dropped = calloc(1, sizeof(*dropped));
	if (!dropped) {
		files_end(d, "there was no memory for the drop");
		return;
	}
	dropped->server = d->server;
	dropped->types = d->types;
	dropped->data = d->files;
	dropped->len = d->files_len;
	d->files = NULL;
	wl_resource_set_implementation(d->offer, &dropped_impl, dropped, handle_dropped_destroy);
	wl_data_device_send_drop(d->device);
	log_info("the files went to window %u as a drop", d->window);
	d->dropped = d->offer;
	d->offer = NULL;
	offer_inert(d);
	d->active = false;
	if (d->files_timer) {
		wl_event_source_timer_update(d->files_timer, 0);
	}
}

void dnd_drop_files(struct rc_server *server, struct rc_window *window, int32_t x, int32_t y,
	char *uris, size_t len)
{
	struct rc_dnd *d = &server->dnd;
	if (d->files) {
		files_end(d, "another drop came first");
	}
	leave_surface(d);
	static const uint8_t uri_list[] = {13, 0, 't', 'e', 'x', 't', '/', 'u', 'r', 'i', '-', 'l',
		'i', 's', 't'};
	mime_list_from(&d->types, 1, uri_list, sizeof(uri_list));
	d->source_actions = WL_DATA_DEVICE_MANAGER_DND_ACTION_COPY;
	d->window = window->id;
	d->active = true;
	d->files = uris;
	d->files_len = len;
	if (!d->files_timer) {
		d->files_timer = wl_event_loop_add_timer(server->loop, handle_files_timer, d);
	}
	move_to(d, window, x / 256.0, y / 256.0);
	if (!d->surface) {
		files_end(d, "no app under them takes drops");
		return;
	}
	/* A motion after the enter, as a hand's drag has: toolkits (GTK)
	 * decide whether they take it at a motion. */
	move_to(d, window, x / 256.0, y / 256.0);
	if (d->files && d->files_timer) {
		wl_event_source_timer_update(d->files_timer, 2000);
	}
}

void dnd_finish(struct rc_server *server)
{
	struct rc_dnd *d = &server->dnd;
	free(d->files);
	d->files = NULL;
	if (d->files_timer) {
		wl_event_source_remove(d->files_timer);
		d->files_timer = NULL;
	}
}

void dnd_action(struct rc_server *server, const struct wire_dnd_action *msg)
{
	struct rc_dnd *d = &server->dnd;
	/* The drag's, or after the drop the dropped offer's final one. */
	struct wl_resource *offer = d->offer;
	if (offer) {
		d->action = msg->action;
	} else {
		offer = d->dropped;
	}
	if (offer && wl_resource_get_version(offer) >= WL_DATA_OFFER_ACTION_SINCE_VERSION) {
		wl_data_offer_send_action(offer, msg->action);
	}
}

void dnd_viewer_gone(struct rc_server *server)
{
	struct rc_dnd *d = &server->dnd;
	if (d->files) {
		return; /* a drop of files is the session's own */
	}
	leave_surface(d);
	d->active = false;
}

void dnd_window_gone(struct rc_server *server, struct rc_window *window)
{
	struct rc_dnd *d = &server->dnd;
	if (d->files && d->window == window->id) {
		files_end(d, "their window closed before the drop");
	} else if (d->active && d->window == window->id) {
		leave_surface(d);
		d->active = false;
	}
}

/*
 * Drags from the apps. wlroots carries an app's drag between the apps'
 * surfaces; the viewer starts a local drag from the same press, so that
 * over our windows the pointer keeps moving the app's drag (a drag between
 * two remote windows stays remote), and elsewhere the local desktop carries
 * it to local apps: drag_local says how that ended, and the app's source
 * hears it as from a target of its own.
 */
static void forget_icon(struct rc_drag_out *out);

static void forget_out(struct rc_server *server)
{
	struct rc_drag_out *out = &server->drag_out;
	forget_icon(out);
	if (out->source) {
		wl_list_remove(&out->source_destroy.link);
		out->source = NULL;
	}
	if (out->drag) {
		wl_list_remove(&out->drag_destroy.link);
		out->drag = NULL;
	}
}

static void handle_out_source_destroy(struct wl_listener *listener, void *data)
{
	struct rc_drag_out *out = wl_container_of(listener, out, source_destroy);
	wl_list_remove(&out->source_destroy.link);
	out->source = NULL;
}

static void handle_out_drag_destroy(struct wl_listener *listener, void *data)
{
	struct rc_drag_out *out = wl_container_of(listener, out, drag_destroy);
	struct rc_server *server = wl_container_of(out, server, drag_out);
	wl_list_remove(&out->drag_destroy.link);
	out->drag = NULL;
	forget_icon(out); /* the icon goes with the drag */
	if (!out->local) {
		/* Ended among the apps (dropped on one, or cancelled). */
		if (out->told && input_connection(server)) {
			connection_send(input_connection(server),
				&(struct wire_msg){.type = WIRE_DRAG_END});
		}
		if (out->source) {
			wl_list_remove(&out->source_destroy.link);
			out->source = NULL;
		}
	}
}

/* The drag's icon, for the viewer's local drag: sent at each commit, with
 * where its corner is from the pointer (the attach offsets move it). */
static void send_icon(struct rc_server *server)
{
	struct rc_drag_out *out = &server->drag_out;
	if (!out->told || !input_connection(server)) {
		return;
	}
	struct wire_msg msg = {.type = WIRE_DRAG_ICON, .drag_icon = {.scale = 1}};
	struct wire_drag_icon *icon = &msg.drag_icon;
	const int32_t limit = WIRE_MAX_CURSOR * WIRE_MAX_SCALE;
	if (out->icon &&
		cursor_image(out->icon, server->cursor.pixels, &icon->width, &icon->height,
			&icon->scale, &out->icon_size_logged)) {
		icon->pixels = (const uint8_t *)server->cursor.pixels;
		icon->pixels_len = (uint32_t)(icon->width * icon->height * 4);
	}
	icon->x = out->icon_x < -limit ? -limit : (out->icon_x > limit ? limit : out->icon_x);
	icon->y = out->icon_y < -limit ? -limit : (out->icon_y > limit ? limit : out->icon_y);
	connection_send(input_connection(server), &msg);
}

static void forget_icon(struct rc_drag_out *out)
{
	if (out->icon) {
		wl_list_remove(&out->icon_commit.link);
		wl_list_remove(&out->icon_destroy.link);
		out->icon = NULL;
	}
}

static void handle_icon_commit(struct wl_listener *listener, void *data)
{
	struct rc_drag_out *out = wl_container_of(listener, out, icon_commit);
	struct rc_server *server = wl_container_of(out, server, drag_out);
	out->icon_x += out->icon->current.dx;
	out->icon_y += out->icon->current.dy;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	wlr_surface_send_frame_done(out->icon, &now);
	send_icon(server);
}

static void handle_icon_destroy(struct wl_listener *listener, void *data)
{
	struct rc_drag_out *out = wl_container_of(listener, out, icon_destroy);
	struct rc_server *server = wl_container_of(out, server, drag_out);
	forget_icon(out);
	send_icon(server);
}

static void handle_request_start_drag(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, request_start_drag);
	struct wlr_seat_request_start_drag_event *event = data;
	struct wlr_seat *seat = server->seat;
	if (!wlr_seat_validate_pointer_grab_serial(seat, event->origin, event->serial)) {
		log_debug("a drag refused: its serial names no press");
		if (event->drag->source) {
			wlr_data_source_destroy(event->drag->source);
		}
		return;
	}
	forget_out(server);
	struct rc_drag_out *out = &server->drag_out;
	out->local = out->told = false;
	out->drag = event->drag;
	out->drag_destroy.notify = handle_out_drag_destroy;
	wl_signal_add(&event->drag->events.destroy, &out->drag_destroy);
	struct wlr_data_source *source = event->drag->source;
	if (source) {
		out->source = source;
		out->source_destroy.notify = handle_out_source_destroy;
		wl_signal_add(&source->events.destroy, &out->source_destroy);
	}
	wlr_seat_start_pointer_drag(seat, event->drag, event->serial);
	/* The viewer carries it past our windows, if it can. */
	struct rc_window *window = window_of_surface(server, event->origin);
	uint32_t mark;
	struct rc_connection *conn = input_connection(server);
	if (!source || !window || !window_shown_to_input(window) || !input_connection(server) ||
		conn->minor < 1 || !input_press_mark(server, event->serial, &mark)) {
		return;
	}
	struct mime_list types = {0};
	char **t;
	wl_array_for_each(t, &source->mime_types)
	{
		mime_list_add(&types, *t, strlen(*t));
	}
	if (types.count == 0) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_DRAG_START,
		.drag_start =
			{
				.window = window->id,
				.mark = mark,
				.source_actions = source->actions & WIRE_DND_ALL,
				.count = types.count,
				.types = types.packed,
				.types_len = types.used,
			},
	};
	connection_send(conn, &msg);
	out->told = true;
	log_debug("window %u started a drag (%u types)", window->id, types.count);
	if (event->drag->icon) {
		out->icon = event->drag->icon->surface;
		out->icon_x = out->icon_y = 0;
		out->icon_commit.notify = handle_icon_commit;
		wl_signal_add(&out->icon->events.commit, &out->icon_commit);
		out->icon_destroy.notify = handle_icon_destroy;
		wl_signal_add(&out->icon->events.destroy, &out->icon_destroy);
		send_icon(server);
	}
}

void dnd_drag_local(struct rc_server *server, const struct wire_drag_local *msg)
{
	struct rc_drag_out *out = &server->drag_out;
	struct wlr_data_source *source = out->source;
	switch (msg->state) {
	case WIRE_DRAG_DROPPED:
		if (!out->drag || !source) {
			return;
		}
		/* The app's drag ends here; its source lives on for the data. */
		out->local = true;
		wlr_data_source_dnd_action(source,
			(enum wl_data_device_manager_dnd_action)msg->action);
		wlr_data_source_dnd_drop(source);
		wlr_seat_pointer_end_grab(server->seat);
		input_release_unheard(server);
		break;
	case WIRE_DRAG_FINISHED:
		if (out->local && source) {
			/* A target that was asked picked the action at the drop. */
			if (msg->action && msg->action != (uint32_t)source->current_dnd_action) {
				wlr_data_source_dnd_action(source,
					(enum wl_data_device_manager_dnd_action)msg->action);
			}
			wlr_data_source_dnd_finish(source);
		}
		forget_out(server);
		break;
	case WIRE_DRAG_CANCELLED:
		if (out->drag && source && !out->local) {
			out->local = true;
			wlr_seat_pointer_end_grab(server->seat);
			input_release_unheard(server);
			wlr_data_source_destroy(source); /* the app hears it cancelled */
		}
		forget_out(server);
		break;
	}
}

struct wlr_data_source *dnd_out_source(struct rc_server *server)
{
	return server->drag_out.local ? server->drag_out.source : NULL;
}

void dnd_out_init(struct rc_server *server)
{
	server->request_start_drag.notify = handle_request_start_drag;
	wl_signal_add(&server->seat->events.request_start_drag, &server->request_start_drag);
}

void dnd_out_finish(struct rc_server *server)
{
	forget_out(server);
	wl_list_remove(&server->request_start_drag.link);
}
