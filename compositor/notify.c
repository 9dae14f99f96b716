/*
 * Notifications: rcomp-run serves org.freedesktop.Notifications on the
 * session's own bus (bus.c), so notify-send, mail and chat clients and
 * builds reach the person. Each notification (its app, summary, body, icon,
 * urgency, actions and timeout; a replacement keeps its id) goes to every
 * viewer, watchers too; the viewers show them on their own desktop's
 * notification daemon (rcomp-view) or the browser's (the page), and an
 * action or a close comes back as the spec's ActionInvoked and
 * NotificationClosed signals. libdbus, its watches and timeouts on the
 * compositor's event loop.
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus.h"
#include "connection.h"
#include "log.h"
#include "monotonic.h"
#include "notify.h"
#include "server.h"

#define PATH "/org/freedesktop/Notifications"
#define IFACE "org.freedesktop.Notifications"

/* Watches and timeouts: libdbus's file descriptors and timers on our loop
 * (wl_event_loop_add_fd dups the fd, so a read and a write watch of one
 * socket are two sources). */
static int handle_watch(int fd, uint32_t mask, void *data)
{
	DBusWatch *watch = data;
	unsigned flags = (mask & WL_EVENT_READABLE ? DBUS_WATCH_READABLE : 0) |
		(mask & WL_EVENT_WRITABLE ? DBUS_WATCH_WRITABLE : 0) |
		(mask & WL_EVENT_HANGUP ? DBUS_WATCH_HANGUP : 0) |
		(mask & WL_EVENT_ERROR ? DBUS_WATCH_ERROR : 0);
	dbus_watch_handle(watch, flags);
	return 0;
}

static uint32_t watch_mask(DBusWatch *watch)
{
	if (!dbus_watch_get_enabled(watch)) {
		return 0;
	}
	unsigned flags = dbus_watch_get_flags(watch);
	return (flags & DBUS_WATCH_READABLE ? WL_EVENT_READABLE : 0) |
		(flags & DBUS_WATCH_WRITABLE ? WL_EVENT_WRITABLE : 0);
}

static dbus_bool_t add_watch(DBusWatch *watch, void *data)
{
	struct rc_server *server = data;
	struct wl_event_source *source = wl_event_loop_add_fd(server->loop,
		dbus_watch_get_unix_fd(watch), watch_mask(watch), handle_watch, watch);
	if (!source) {
		return FALSE;
	}
	dbus_watch_set_data(watch, source, NULL);
	return TRUE;
}

static void remove_watch(DBusWatch *watch, void *data)
{
	struct wl_event_source *source = dbus_watch_get_data(watch);
	if (source) {
		wl_event_source_remove(source);
	}
	dbus_watch_set_data(watch, NULL, NULL);
}

static void toggle_watch(DBusWatch *watch, void *data)
{
	struct wl_event_source *source = dbus_watch_get_data(watch);
	if (source) {
		wl_event_source_fd_update(source, watch_mask(watch));
	}
}

static int handle_timeout(void *data)
{
	dbus_timeout_handle(data);
	return 0;
}

static void arm(DBusTimeout *timeout)
{
	struct wl_event_source *source = dbus_timeout_get_data(timeout);
	if (source) {
		wl_event_source_timer_update(source,
			dbus_timeout_get_enabled(timeout) ? dbus_timeout_get_interval(timeout) : 0);
	}
}

static dbus_bool_t add_timeout(DBusTimeout *timeout, void *data)
{
	struct rc_server *server = data;
	struct wl_event_source *source =
		wl_event_loop_add_timer(server->loop, handle_timeout, timeout);
	if (!source) {
		return FALSE;
	}
	dbus_timeout_set_data(timeout, source, NULL);
	arm(timeout);
	return TRUE;
}

static void remove_timeout(DBusTimeout *timeout, void *data)
{
	struct wl_event_source *source = dbus_timeout_get_data(timeout);
	if (source) {
		wl_event_source_remove(source);
	}
	dbus_timeout_set_data(timeout, NULL, NULL);
}

static void toggle_timeout(DBusTimeout *timeout, void *data)
{
	arm(timeout);
}

static void handle_dispatch_idle(void *data)
{
	struct rc_server *server = data;
	struct rc_notify *n = &server->notify;
	n->dispatch_idle = NULL;
	while (n->bus && dbus_connection_dispatch(n->bus) == DBUS_DISPATCH_DATA_REMAINS) {
	}
}

static void dispatch_status(DBusConnection *bus, DBusDispatchStatus status, void *data)
{
	struct rc_server *server = data;
	struct rc_notify *n = &server->notify;
	if (status == DBUS_DISPATCH_DATA_REMAINS && !n->dispatch_idle) {
		n->dispatch_idle =
			wl_event_loop_add_idle(server->loop, handle_dispatch_idle, server);
	}
}

/* Notifications ---------------------------------------------------------- */

/* A string's first bytes that fit max, cut at a character's start. */
static uint32_t fit(const char *s, uint32_t max)
{
	size_t len = strlen(s);
	if (len <= max) {
		return (uint32_t)len;
	}
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80) {
		max--;
	}
	return max;
}

static void send_all(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		if (viewer->conn->welcomed && viewer->conn->minor >= 8) {
			connection_send(viewer->conn, msg);
		}
	}
}

static void signal_closed(struct rc_notify *n, uint32_t id, uint32_t reason)
{
	DBusMessage *m = dbus_message_new_signal(PATH, IFACE, "NotificationClosed");
	if (m &&
		dbus_message_append_args(m, DBUS_TYPE_UINT32, &id, DBUS_TYPE_UINT32, &reason,
			DBUS_TYPE_INVALID)) {
		dbus_connection_send(n->bus, m, NULL);
	}
	if (m) {
		dbus_message_unref(m);
	}
}

/* The open notes: kept so that a viewer attaching later is shown them. */
static int find_note(struct rc_notify *n, uint32_t id)
{
	for (int i = 0; i < n->count; i++) {
		if (n->notes[i].id == id) {
			return i;
		}
	}
	return -1;
}

static void drop_note(struct rc_notify *n, int i)
{
	free(n->notes[i].strings);
	memmove(&n->notes[i], &n->notes[i + 1], (size_t)(n->count - i - 1) * sizeof(n->notes[0]));
	n->count--;
}

static void keep_note(struct rc_notify *n, const struct wire_notify *msg)
{
	size_t len = (size_t)msg->app_len + msg->summary_len + msg->body_len + msg->icon_len +
		msg->actions_len;
	char *strings = malloc(len ? len : 1);
	if (!strings) {
		return; /* shown to the viewers there are; not to later ones */
	}
	int i = find_note(n, msg->id);
	if (i >= 0) {
		drop_note(n, i); /* replaced: it goes last, as the newest */
	} else if (n->count == RC_NOTES) {
		drop_note(n, 0); /* the oldest is no longer shown to viewers to come */
	}
	struct rc_note *note = &n->notes[n->count++];
	*note = (struct rc_note){.id = msg->id,
		.urgency = msg->urgency,
		.timeout_ms = msg->timeout_ms,
		.shown_us = monotonic_usec(),
		.strings = strings,
		.app_len = (uint16_t)msg->app_len,
		.summary_len = (uint16_t)msg->summary_len,
		.body_len = (uint16_t)msg->body_len,
		.icon_len = (uint16_t)msg->icon_len,
		.actions_len = msg->actions_len};
	char *at = strings;
	memcpy(at, msg->app, msg->app_len);
	at += msg->app_len;
	memcpy(at, msg->summary, msg->summary_len);
	at += msg->summary_len;
	memcpy(at, msg->body, msg->body_len);
	at += msg->body_len;
	memcpy(at, msg->icon, msg->icon_len);
	at += msg->icon_len;
	memcpy(at, msg->actions, msg->actions_len);
}

static DBusHandlerResult reply_error(DBusConnection *bus, DBusMessage *msg, const char *why)
{
	DBusMessage *r = dbus_message_new_error(msg, DBUS_ERROR_INVALID_ARGS, why);
	if (r) {
		dbus_connection_send(bus, r, NULL);
		dbus_message_unref(r);
	}
	return DBUS_HANDLER_RESULT_HANDLED;
}

static DBusHandlerResult notify(struct rc_server *server, DBusMessage *msg)
{
	struct rc_notify *n = &server->notify;
	if (!dbus_message_has_signature(msg, "susssasa{sv}i")) {
		return reply_error(n->bus, msg, "Notify takes (susssasa{sv}i)");
	}
	DBusMessageIter it, sub;
	dbus_message_iter_init(msg, &it);
	const char *app, *icon, *summary, *body;
	uint32_t replaces;
	int32_t timeout;
	dbus_message_iter_get_basic(&it, &app);
	dbus_message_iter_next(&it);
	dbus_message_iter_get_basic(&it, &replaces);
	dbus_message_iter_next(&it);
	dbus_message_iter_get_basic(&it, &icon);
	dbus_message_iter_next(&it);
	dbus_message_iter_get_basic(&it, &summary);
	dbus_message_iter_next(&it);
	dbus_message_iter_get_basic(&it, &body);
	dbus_message_iter_next(&it);
	/* The actions, key and label each, NUL-ended, as many as fit. */
	static char actions[WIRE_MAX_NOTE_ACTIONS];
	uint32_t actions_len = 0, pair_end = 0;
	int strings = 0;
	dbus_message_iter_recurse(&it, &sub);
	while (dbus_message_iter_get_arg_type(&sub) == DBUS_TYPE_STRING) {
		const char *s;
		dbus_message_iter_get_basic(&sub, &s);
		uint32_t len = fit(s, WIRE_MAX_NOTE_NAME - 1);
		if (actions_len + len + 1 > sizeof(actions)) {
			break;
		}
		memcpy(actions + actions_len, s, len);
		actions_len += len;
		actions[actions_len++] = '\0';
		if (++strings % 2 == 0) {
			pair_end = actions_len; /* keys and labels come in pairs */
		}
		dbus_message_iter_next(&sub);
	}
	actions_len = pair_end;
	dbus_message_iter_next(&it);
	uint32_t urgency = 1;
	dbus_message_iter_recurse(&it, &sub);
	while (dbus_message_iter_get_arg_type(&sub) == DBUS_TYPE_DICT_ENTRY) {
		DBusMessageIter entry, value;
		const char *key;
		dbus_message_iter_recurse(&sub, &entry);
		dbus_message_iter_get_basic(&entry, &key);
		dbus_message_iter_next(&entry);
		dbus_message_iter_recurse(&entry, &value);
		if (strcmp(key, "urgency") == 0 &&
			dbus_message_iter_get_arg_type(&value) == DBUS_TYPE_BYTE) {
			unsigned char u;
			dbus_message_iter_get_basic(&value, &u);
			urgency = u <= 2 ? u : 2;
		}
		dbus_message_iter_next(&sub);
	}
	dbus_message_iter_next(&it);
	dbus_message_iter_get_basic(&it, &timeout);
	/* Its id: the one it replaces, where that is ours; else a new one. */
	uint32_t id = replaces && replaces <= n->last_id ? replaces : ++n->last_id;
	if (id == 0) {
		id = n->last_id = 1;
	}
	struct wire_msg out = {.type = WIRE_NOTIFY,
		.notify = {.id = id,
			.timeout_ms = timeout < -1 ? -1 : (timeout > 86400000 ? 86400000 : timeout),
			.urgency = urgency,
			.app = app,
			.app_len = fit(app, WIRE_MAX_NOTE_NAME),
			.summary = summary,
			.summary_len = fit(summary, WIRE_MAX_NOTE_NAME),
			.body = body,
			.body_len = fit(body, WIRE_MAX_NOTE_BODY),
			.icon = icon,
			.icon_len = fit(icon, WIRE_MAX_NOTE_NAME),
			.actions = actions,
			.actions_len = actions_len}};
	if (server->options.notifications_off) {
		log_debug("a notification of %s not shown (--notifications off)", app);
	} else {
		keep_note(n, &out.notify);
		send_all(server, &out);
		log_debug("notification %u of %s to the viewers", id, app);
	}
	DBusMessage *r = dbus_message_new_method_return(msg);
	if (r && dbus_message_append_args(r, DBUS_TYPE_UINT32, &id, DBUS_TYPE_INVALID)) {
		dbus_connection_send(n->bus, r, NULL);
	}
	if (r) {
		dbus_message_unref(r);
	}
	return DBUS_HANDLER_RESULT_HANDLED;
}

static DBusHandlerResult handle_message(DBusConnection *bus, DBusMessage *msg, void *data)
{
	struct rc_server *server = data;
	if (dbus_message_is_method_call(msg, IFACE, "Notify")) {
		return notify(server, msg);
	}
	DBusMessage *r = NULL;
	if (dbus_message_is_method_call(msg, IFACE, "GetCapabilities")) {
		static const char *caps[] = {"body", "actions", "icon-static"};
		const char **p = caps;
		r = dbus_message_new_method_return(msg);
		if (r) {
			dbus_message_append_args(r, DBUS_TYPE_ARRAY, DBUS_TYPE_STRING, &p,
				(int)(sizeof(caps) / sizeof(caps[0])), DBUS_TYPE_INVALID);
		}
	} else if (dbus_message_is_method_call(msg, IFACE, "GetServerInformation")) {
		const char *name = "rcomp", *vendor = "rcomp", *version = RCOMP_VERSION,
			   *spec = "1.2";
		r = dbus_message_new_method_return(msg);
		if (r) {
			dbus_message_append_args(r, DBUS_TYPE_STRING, &name, DBUS_TYPE_STRING,
				&vendor, DBUS_TYPE_STRING, &version, DBUS_TYPE_STRING, &spec,
				DBUS_TYPE_INVALID);
		}
	} else if (dbus_message_is_method_call(msg, IFACE, "CloseNotification")) {
		uint32_t id;
		if (!dbus_message_get_args(msg, NULL, DBUS_TYPE_UINT32, &id, DBUS_TYPE_INVALID)) {
			return reply_error(bus, msg, "CloseNotification takes (u)");
		}
		int i = find_note(&server->notify, id);
		if (i >= 0) {
			drop_note(&server->notify, i);
			send_all(server,
				&(struct wire_msg){.type = WIRE_NOTIFY_CLOSE,
					.notify_close = {.id = id,
						.reason = WIRE_NOTE_CLOSED_BY_APP}});
			signal_closed(&server->notify, id, WIRE_NOTE_CLOSED_BY_APP);
		}
		r = dbus_message_new_method_return(msg);
	} else {
		return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
	}
	if (r) {
		dbus_connection_send(bus, r, NULL);
		dbus_message_unref(r);
	}
	return DBUS_HANDLER_RESULT_HANDLED;
}

bool notify_start(struct rc_server *server)
{
	struct rc_notify *n = &server->notify;
	const char *address = bus_address(server);
	if (!address) {
		return false;
	}
	DBusError err;
	dbus_error_init(&err);
	n->bus = dbus_connection_open_private(address, &err);
	if (!n->bus || !dbus_bus_register(n->bus, &err)) {
		log_warning("no notifications: cannot reach the session's bus: %s",
			err.message ? err.message : "no memory");
		dbus_error_free(&err);
		notify_stop(server);
		return false;
	}
	dbus_connection_set_exit_on_disconnect(n->bus, FALSE);
	int got = dbus_bus_request_name(n->bus, IFACE, DBUS_NAME_FLAG_DO_NOT_QUEUE, &err);
	if (got != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
		log_warning("no notifications: %s is someone else's on the session's bus%s%s",
			IFACE, err.message ? ": " : "", err.message ? err.message : "");
		dbus_error_free(&err);
		notify_stop(server);
		return false;
	}
	static const DBusObjectPathVTable vtable = {.message_function = handle_message};
	if (!dbus_connection_register_object_path(n->bus, PATH, &vtable, server) ||
		!dbus_connection_set_watch_functions(n->bus, add_watch, remove_watch, toggle_watch,
			server, NULL) ||
		!dbus_connection_set_timeout_functions(n->bus, add_timeout, remove_timeout,
			toggle_timeout, server, NULL)) {
		log_warning("no notifications: no memory");
		notify_stop(server);
		return false;
	}
	dbus_connection_set_dispatch_status_function(n->bus, dispatch_status, server, NULL);
	dispatch_status(n->bus, dbus_connection_get_dispatch_status(n->bus), server);
	log_debug("notifications: %s on the session's bus", IFACE);
	return true;
}

void notify_stop(struct rc_server *server)
{
	struct rc_notify *n = &server->notify;
	while (n->count > 0) {
		drop_note(n, n->count - 1);
	}
	if (n->bus) {
		/* Closing dispatches what is left: nothing of it is ours now. */
		dbus_connection_set_dispatch_status_function(n->bus, NULL, NULL, NULL);
		dbus_connection_set_watch_functions(n->bus, NULL, NULL, NULL, NULL, NULL);
		dbus_connection_set_timeout_functions(n->bus, NULL, NULL, NULL, NULL, NULL);
		dbus_connection_close(n->bus);
		dbus_connection_unref(n->bus);
		n->bus = NULL;
	}
	if (n->dispatch_idle) {
		wl_event_source_remove(n->dispatch_idle);
		n->dispatch_idle = NULL;
	}
}

void notify_reply(struct rc_viewer *viewer, const struct wire_notify_reply *msg)
{
	struct rc_server *server = viewer->server;
	struct rc_notify *n = &server->notify;
	int i = find_note(n, msg->id);
	if (i >= 0 && n->notes[i].question) {
		/* Ours, about a group of files: the viewer asked answers it. */
		if (viewer != n->notes[i].asked) {
			return;
		}
		uint32_t group = n->notes[i].question - 1;
		bool yes = msg->event == WIRE_NOTE_ACTION && msg->action_len == 3 &&
			memcmp(msg->action, "yes", 3) == 0;
		drop_note(n, i);
		n->answer(server, group, yes, viewer->number);
		return;
	}
	if (!n->bus || i < 0 || viewer->view_only) {
		return; /* closed already, or none of ours; a watcher sees them and
			 * acts on none, its closes its own */
	}
	if (msg->event == WIRE_NOTE_ACTION) {
		char key[WIRE_MAX_NOTE_NAME + 1];
		memcpy(key, msg->action, msg->action_len);
		key[msg->action_len] = '\0';
		const char *k = key;
		uint32_t id = msg->id;
		DBusMessage *m = dbus_message_new_signal(PATH, IFACE, "ActionInvoked");
		if (m &&
			dbus_message_append_args(m, DBUS_TYPE_UINT32, &id, DBUS_TYPE_STRING, &k,
				DBUS_TYPE_INVALID)) {
			dbus_connection_send(n->bus, m, NULL);
		}
		if (m) {
			dbus_message_unref(m);
		}
		log_debug("notification %u: action %s from viewer %u", id, key, viewer->number);
		return;
	}
	/* Closed on one viewer: on the others too, and the app hears why. */
	uint32_t reason = msg->reason ? msg->reason : WIRE_NOTE_OTHER;
	drop_note(n, i);
	struct rc_viewer *other;
	wl_list_for_each(other, &server->viewers, link)
	{
		if (other != viewer && other->conn->welcomed && other->conn->minor >= 8) {
			connection_send(other->conn,
				&(struct wire_msg){.type = WIRE_NOTIFY_CLOSE,
					.notify_close = {.id = msg->id, .reason = reason}});
		}
	}
	signal_closed(n, msg->id, reason);
}

void notify_viewer_welcomed(struct rc_viewer *viewer)
{
	struct rc_server *server = viewer->server;
	struct rc_notify *n = &server->notify;
	if (viewer->conn->minor < 8) {
		return;
	}
	uint64_t now = monotonic_usec();
	for (int i = 0; i < n->count;) {
		struct rc_note *note = &n->notes[i];
		if (note->question) {
			/* Asked again of the viewer with input, where the one
			 * asked went away. */
			if (note->asked || viewer != server->input_viewer || viewer->view_only) {
				i++;
				continue;
			}
			note->asked = viewer;
		}
		int64_t left = note->timeout_ms;
		if (note->timeout_ms > 0) {
			left -= (int64_t)((now - note->shown_us) / 1000);
			if (left <= 0) {
				/* It expired with no one to show it to. */
				signal_closed(n, note->id, WIRE_NOTE_EXPIRED);
				drop_note(n, i);
				continue;
			}
		}
		const char *at = note->strings;
		struct wire_msg out = {.type = WIRE_NOTIFY,
			.notify = {.id = note->id,
				.timeout_ms = (int32_t)left,
				.urgency = note->urgency,
				.app = at,
				.app_len = note->app_len,
				.summary = at + note->app_len,
				.summary_len = note->summary_len,
				.body = at + note->app_len + note->summary_len,
				.body_len = note->body_len,
				.icon = at + note->app_len + note->summary_len + note->body_len,
				.icon_len = note->icon_len,
				.actions = at + note->app_len + note->summary_len + note->body_len +
					note->icon_len,
				.actions_len = note->actions_len}};
		connection_send(viewer->conn, &out);
		i++;
	}
}

bool notify_question(struct rc_server *server, struct rc_viewer *to, uint32_t group,
	const char *summary, const char *body, const char *yes, notify_answer_fn *answer)
{
	struct rc_notify *n = &server->notify;
	n->answer = answer;
	if (!to || to->view_only || to->conn->minor < 8 || !to->conn->welcomed) {
		return false;
	}
	char actions[WIRE_MAX_NOTE_NAME * 2];
	int len = snprintf(actions, sizeof(actions), "yes%c%s%cno%cRefuse%c", 0, yes, 0, 0, 0);
	uint32_t id = ++n->last_id;
	struct wire_msg out = {.type = WIRE_NOTIFY,
		.notify = {.id = id,
			.timeout_ms = 0,
			.urgency = WIRE_NOTE_NORMAL,
			.app = "rcomp",
			.app_len = 5,
			.summary = summary,
			.summary_len = fit(summary, WIRE_MAX_NOTE_NAME),
			.body = body,
			.body_len = fit(body, WIRE_MAX_NOTE_BODY),
			.icon = "",
			.icon_len = 0,
			.actions = actions,
			.actions_len = (uint32_t)len}};
	keep_note(n, &out.notify);
	int i = find_note(n, id);
	if (i < 0) {
		return false;
	}
	n->notes[i].question = group + 1;
	n->notes[i].asked = to;
	connection_send(to->conn, &out);
	return true;
}

void notify_viewer_gone(struct rc_viewer *viewer)
{
	struct rc_notify *n = &viewer->server->notify;
	for (int i = 0; i < n->count; i++) {
		if (n->notes[i].asked == viewer) {
			n->notes[i].asked = NULL; /* asked of the next viewer with input */
		}
	}
}
