/*
 * The session's notifications on this desktop: each notify from the
 * session becomes a notification of the local desktop's own daemon (its
 * org.freedesktop.Notifications on the session bus: mako, dunst, GNOME's,
 * KDE's), its app named with the session's host; an action invoked or a
 * close there goes back to the app. rcomp-view's own news (a file saved)
 * goes the same way. libdbus, on the viewer's poll loop; the bus is reached
 * at the first notification, and where there is none that is said once.
 */
#include <dbus/dbus.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "log.h"
#include "notify.h"
#include "viewer.h"

#define DEST "org.freedesktop.Notifications"
#define PATH "/org/freedesktop/Notifications"

static void forget(struct rv_notify *n, int i)
{
	n->map[i] = n->map[--n->count];
}

static int find_local(struct rv_notify *n, uint32_t local)
{
	for (int i = 0; i < n->count; i++) {
		if (n->map[i].local == local) {
			return i;
		}
	}
	return -1;
}

static int find_remote(struct rv_notify *n, uint32_t remote)
{
	for (int i = 0; i < n->count; i++) {
		if (n->map[i].remote == remote) {
			return i;
		}
	}
	return -1;
}

static int find_transfer(struct rv_notify *n, uint32_t tag)
{
	for (int i = 0; i < n->count; i++) {
		if (n->map[i].transfer == tag + 1) {
			return i;
		}
	}
	return -1;
}

static void close_local(struct rv_notify *n, uint32_t local)
{
	DBusMessage *m = dbus_message_new_method_call(DEST, PATH, DEST, "CloseNotification");
	if (m && dbus_message_append_args(m, DBUS_TYPE_UINT32, &local, DBUS_TYPE_INVALID)) {
		dbus_connection_send(n->bus, m, NULL);
		dbus_connection_flush(n->bus);
	}
	if (m) {
		dbus_message_unref(m);
	}
}

/* The daemon's signals: an action, a close, of one of ours. */
static DBusHandlerResult filter(DBusConnection *bus, DBusMessage *msg, void *data)
{
	struct rv_viewer *viewer = data;
	struct rv_notify *n = &viewer->notify;
	uint32_t local, reason;
	const char *key;
	if (dbus_message_is_signal(msg, DEST, "ActionInvoked") &&
		dbus_message_get_args(msg, NULL, DBUS_TYPE_UINT32, &local, DBUS_TYPE_STRING, &key,
			DBUS_TYPE_INVALID)) {
		int i = find_local(n, local);
		if (i >= 0 && n->map[i].question) {
			uint32_t group = n->map[i].question - 1;
			forget(n, i);
			close_local(n, local); /* answered: the question goes */
			n->answer(viewer, group, strcmp(key, "yes") == 0);
		} else if (i >= 0 && n->map[i].transfer) {
			uint32_t tag = n->map[i].transfer - 1;
			if (strcmp(key, "cancel") == 0) {
				forget(n, i);
				close_local(n, local);
				n->transfer_event(viewer, tag, true);
			}
		} else if (i >= 0 && n->map[i].remote) {
			size_t len = strnlen(key, WIRE_MAX_NOTE_NAME);
			connection_send(viewer,
				&(struct wire_msg){.type = WIRE_NOTIFY_REPLY,
					.notify_reply = {.id = n->map[i].remote,
						.event = WIRE_NOTE_ACTION,
						.action = key,
						.action_len = (uint32_t)len}});
		}
	} else if (dbus_message_is_signal(msg, DEST, "NotificationClosed") &&
		dbus_message_get_args(msg, NULL, DBUS_TYPE_UINT32, &local, DBUS_TYPE_UINT32,
			&reason, DBUS_TYPE_INVALID)) {
		int i = find_local(n, local);
		if (i >= 0 && n->map[i].question) {
			uint32_t group = n->map[i].question - 1;
			forget(n, i);
			n->answer(viewer, group, false); /* dismissed: a no */
		} else if (i >= 0 && n->map[i].transfer) {
			uint32_t tag = n->map[i].transfer - 1;
			forget(n, i);
			n->transfer_event(viewer, tag, false); /* dismissed: shown no more */
		} else if (i >= 0) {
			if (n->map[i].remote) {
				connection_send(viewer,
					&(struct wire_msg){.type = WIRE_NOTIFY_REPLY,
						.notify_reply = {.id = n->map[i].remote,
							.event = WIRE_NOTE_CLOSED,
							.reason = reason >= 1 && reason <= 4
								? reason
								: 4}});
			}
			forget(n, i);
		}
	}
	return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
}

/* The desktop's bus, reached at the start (the first notification then
 * waits for no connection); where there is none, that is said at the
 * first notification, once. */
static bool reach(struct rv_viewer *viewer)
{
	struct rv_notify *n = &viewer->notify;
	if (n->bus) {
		return true;
	}
	if (n->unreachable) {
		if (!n->said_no_bus) {
			n->said_no_bus = true;
			log_warning("the session's notifications are not shown: this desktop has "
				    "no "
				    "session bus (%s)",
				n->why);
		}
		return false;
	}
	DBusError err;
	dbus_error_init(&err);
	n->bus = dbus_bus_get_private(DBUS_BUS_SESSION, &err);
	if (!n->bus) {
		snprintf(n->why, sizeof(n->why), "%s", err.message ? err.message : "no memory");
		dbus_error_free(&err);
		n->unreachable = true;
		return false;
	}
	dbus_connection_set_exit_on_disconnect(n->bus, FALSE);
	dbus_bus_add_match(n->bus, "type='signal',interface='" DEST "'", NULL);
	dbus_connection_add_filter(n->bus, filter, viewer, NULL);
	return true;
}

/* What a Notify call was for: a notification of the session's (its id), a
 * question of ours about a group of files, or our word on a transfer. */
#define QUESTION ((uint64_t)1 << 32)
#define TRANSFER ((uint64_t)1 << 33)

/* The daemon's answer to our word on a transfer (local 0: none). */
static void transfer_answered(struct rv_notify *n, uint32_t tag, uint32_t local)
{
	int i = find_transfer(n, tag);
	if (i >= 0 && local && !n->map[i].closing) {
		n->map[i].local = local;
		return;
	}
	if (i >= 0) {
		forget(n, i);
	}
	if (local) {
		close_local(n, local); /* it ended while the daemon answered */
	}
}

/* The daemon's answer: the local id of a notification of the session's,
 * or of a question. */
static void answered(DBusPendingCall *call, void *data)
{
	struct rv_viewer *viewer = data;
	struct rv_notify *n = &viewer->notify;
	DBusMessage *reply = dbus_pending_call_steal_reply(call);
	uint64_t what = (uint64_t)(uintptr_t)dbus_pending_call_get_data(call, n->slot);
	uint32_t remote = what & (QUESTION | TRANSFER) ? 0 : (uint32_t)what;
	uint32_t question = what & QUESTION ? (uint32_t)what + 1 : 0;
	uint32_t local;
	bool got = reply &&
		dbus_message_get_args(reply, NULL, DBUS_TYPE_UINT32, &local, DBUS_TYPE_INVALID);
	if (what & TRANSFER) {
		transfer_answered(n, (uint32_t)what, got ? local : 0);
	} else if (got) {
		int i = remote ? find_remote(n, remote) : -1;
		if ((remote || question) && i < 0) {
			if (n->count == RV_NOTES) {
				forget(n, 0); /* the oldest is forgotten: its answers go nowhere */
			}
			i = n->count++;
		}
		if (i >= 0) {
			n->map[i].remote = remote;
			n->map[i].local = local;
			n->map[i].question = question;
			n->map[i].transfer = 0;
			n->map[i].closing = false;
		}
	} else {
		if (reply && !n->said_no_daemon) {
			n->said_no_daemon = true;
			log_warning("the session's notifications are not shown: this desktop's "
				    "notification daemon did not answer (%s)",
				dbus_message_get_error_name(reply));
		}
		if (question) {
			n->answer(viewer, question - 1, false);
		}
	}
	if (reply) {
		dbus_message_unref(reply);
	}
	dbus_pending_call_unref(call);
}

static bool show(struct rv_viewer *viewer, uint64_t what, uint32_t replaces, const char *app,
	const char *summary, const char *body, const char *icon, const char *const *actions,
	int nactions, uint32_t urgency, int32_t timeout)
{
	struct rv_notify *n = &viewer->notify;
	if (!reach(viewer)) {
		return false;
	}
	DBusMessage *m = dbus_message_new_method_call(DEST, PATH, DEST, "Notify");
	if (!m) {
		return false;
	}
	DBusMessageIter it, sub, entry, value;
	dbus_message_iter_init_append(m, &it);
	dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &app);
	dbus_message_iter_append_basic(&it, DBUS_TYPE_UINT32, &replaces);
	dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &icon);
	dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &summary);
	dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &body);
	dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "s", &sub);
	for (int k = 0; k < nactions; k++) {
		dbus_message_iter_append_basic(&sub, DBUS_TYPE_STRING, &actions[k]);
	}
	dbus_message_iter_close_container(&it, &sub);
	dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &sub);
	const char *key = "urgency";
	unsigned char u = (unsigned char)urgency;
	dbus_message_iter_open_container(&sub, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
	dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
	dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "y", &value);
	dbus_message_iter_append_basic(&value, DBUS_TYPE_BYTE, &u);
	dbus_message_iter_close_container(&entry, &value);
	dbus_message_iter_close_container(&sub, &entry);
	dbus_message_iter_close_container(&it, &sub);
	dbus_message_iter_append_basic(&it, DBUS_TYPE_INT32, &timeout);
	DBusPendingCall *call = NULL;
	bool sent = dbus_connection_send_with_reply(n->bus, m, &call, 5000) && call;
	if (sent) {
		if (n->slot < 0) {
			dbus_pending_call_allocate_data_slot(&n->slot);
		}
		dbus_pending_call_set_data(call, n->slot, (void *)(uintptr_t)what, NULL);
		dbus_pending_call_set_notify(call, answered, viewer, NULL);
	}
	dbus_message_unref(m);
	dbus_connection_flush(n->bus);
	return sent;
}

void notify_init(struct rv_viewer *viewer)
{
	viewer->notify = (struct rv_notify){.slot = -1};
	if (!viewer->options.notifications_off) {
		reach(viewer);
	}
}

void notify_finish(struct rv_viewer *viewer)
{
	struct rv_notify *n = &viewer->notify;
	if (n->bus) {
		dbus_connection_close(n->bus);
		dbus_connection_unref(n->bus);
		n->bus = NULL;
	}
	if (n->slot >= 0) {
		dbus_pending_call_free_data_slot(&n->slot);
	}
}

/* NUL-ended strings packed in a byte string, as pointers into a copy. */
static int unpack(const char *packed, uint32_t len, char *copy, const char **out, int max)
{
	memcpy(copy, packed, len);
	int n = 0;
	for (uint32_t at = 0; at < len && n < max;) {
		const char *s = copy + at;
		size_t l = strnlen(s, len - at);
		if (at + l >= len) {
			break; /* not NUL-ended: the rest is left out */
		}
		out[n++] = s;
		at += (uint32_t)l + 1;
	}
	return n & ~1; /* keys and labels, in pairs */
}

void notify_show(struct rv_viewer *viewer, const struct wire_notify *msg)
{
	if (viewer->options.notifications_off) {
		return;
	}
	char app[WIRE_MAX_NOTE_NAME + WIRE_MAX_HOST_NAME + 8], summary[WIRE_MAX_NOTE_NAME + 1],
		body[WIRE_MAX_NOTE_BODY + 1], icon[WIRE_MAX_NOTE_NAME + 1];
	const char *host = viewer->connection.host_name;
	snprintf(app, sizeof(app), "%.*s%s%s%s", (int)msg->app_len, msg->app,
		host[0] ? " (on " : "", host, host[0] ? ")" : "");
	snprintf(summary, sizeof(summary), "%.*s", (int)msg->summary_len, msg->summary);
	snprintf(body, sizeof(body), "%.*s", (int)msg->body_len, msg->body);
	/* An icon of the remote host's is no name here: a path is left out. */
	snprintf(icon, sizeof(icon), "%.*s",
		msg->icon_len && msg->icon[0] != '/' ? (int)msg->icon_len : 0, msg->icon);
	static char copy[WIRE_MAX_NOTE_ACTIONS];
	const char *actions[64];
	int nactions = unpack(msg->actions, msg->actions_len, copy, actions, 64);
	int i = find_remote(&viewer->notify, msg->id);
	show(viewer, msg->id, i >= 0 ? viewer->notify.map[i].local : 0, app, summary, body, icon,
		actions, nactions, msg->urgency, msg->timeout_ms);
}

void notify_close(struct rv_viewer *viewer, const struct wire_notify_close *msg)
{
	struct rv_notify *n = &viewer->notify;
	int i = find_remote(n, msg->id);
	if (i < 0 || !n->bus) {
		return;
	}
	uint32_t local = n->map[i].local;
	forget(n, i); /* the close it brings is ours: not told back */
	close_local(n, local);
}

void notify_local(struct rv_viewer *viewer, const char *summary, const char *body)
{
	if (viewer->options.notifications_off) {
		return;
	}
	show(viewer, 0, 0, "rcomp", summary, body, "", NULL, 0, 1, -1);
}

bool notify_question(struct rv_viewer *viewer, uint32_t group, const char *summary,
	const char *body, const char *yes, notify_answer_fn *answer)
{
	viewer->notify.answer = answer;
	const char *actions[] = {"yes", yes, "no", "Refuse"};
	return show(viewer, QUESTION | group, 0, "rcomp", summary, body, "", actions, 4, 1, 0);
}

bool notify_transfer(struct rv_viewer *viewer, uint32_t tag, const char *summary, const char *body,
	notify_transfer_fn *event)
{
	struct rv_notify *n = &viewer->notify;
	if (viewer->options.notifications_off) {
		return false;
	}
	int i = find_transfer(n, tag);
	if (i >= 0 && !n->map[i].local) {
		return false; /* the last is not answered yet */
	}
	n->transfer_event = event;
	const char *actions[] = {"cancel", "Cancel"};
	/* Low urgency: it goes on by itself, and says so until it ends. */
	if (!show(viewer, TRANSFER | tag, i >= 0 ? n->map[i].local : 0, "rcomp", summary, body, "",
		    actions, 2, 0, 0)) {
		return false;
	}
	if (i < 0) {
		if (n->count == RV_NOTES) {
			forget(n, 0);
		}
		i = n->count++;
		memset(&n->map[i], 0, sizeof(n->map[i]));
		n->map[i].transfer = tag + 1;
	}
	return true;
}

void notify_transfer_end(struct rv_viewer *viewer, uint32_t tag)
{
	struct rv_notify *n = &viewer->notify;
	int i = find_transfer(n, tag);
	if (i < 0) {
		return;
	}
	if (!n->map[i].local) {
		n->map[i].closing = true; /* closed when the daemon answers */
		return;
	}
	uint32_t local = n->map[i].local;
	forget(n, i);
	close_local(n, local);
}

void notify_poll_fd(struct rv_viewer *viewer, struct pollfd *pfd)
{
	struct rv_notify *n = &viewer->notify;
	int fd = -1;
	pfd->fd = n->bus && dbus_connection_get_unix_fd(n->bus, &fd) ? fd : -1;
	pfd->events =
		POLLIN | (n->bus && dbus_connection_has_messages_to_send(n->bus) ? POLLOUT : 0);
}

void notify_handle_poll(struct rv_viewer *viewer, const struct pollfd *pfd)
{
	struct rv_notify *n = &viewer->notify;
	if (!n->bus || pfd->fd < 0 || !pfd->revents) {
		return;
	}
	if (!dbus_connection_read_write(n->bus, 0)) {
		log_warning(
			"this desktop's session bus went away: notifications are no longer shown");
		notify_finish(viewer);
		n->unreachable = true;
		n->said_no_bus = true; /* said just now */
		return;
	}
	while (dbus_connection_dispatch(n->bus) == DBUS_DISPATCH_DATA_REMAINS) {
	}
}
