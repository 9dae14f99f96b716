/*
 * Files handed over between the person and the session (protocol/files.h):
 * what a viewer drops on a window or uploads is written into the session
 * user's download folder, and a drop is then the app's, as the URIs of the
 * copies (dnd.c); what rcomp-run --send names goes to the viewers. Bytes go
 * while the viewer's bulk queue has room, so keys and frames never wait
 * behind them; a viewer that leaves finds its groups waiting when it (or
 * the next) comes back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wlr/types/wlr_data_device.h>

#include "channel.h"
#include "connection.h"
#include "dnd.h"
#include "handover.h"
#include "log.h"
#include "notify.h"
#include "monotonic.h"
#include "server.h"

static const char *kind_name(uint32_t kind)
{
	switch (kind) {
	case WIRE_FILES_DROP:
		return "dropped";
	case WIRE_FILES_UPLOAD:
		return "uploaded";
	case WIRE_FILES_SEND:
		return "sent";
	default:
		return "printed";
	}
}

static void send_hook(void *data, void *peer, const struct wire_msg *msg)
{
	struct rc_viewer *viewer = peer;
	if (viewer->conn->minor >= 8) {
		connection_send(viewer->conn, msg);
	}
}

static bool may_send(void *data, void *peer)
{
	struct rc_viewer *viewer = peer;
	return connection_may_send_bulk(viewer->conn);
}

static void received_hook(void *data, void *peer, const struct files_received *r)
{
	struct rc_server *server = data;
	log_info("%d item%s %s by viewer %u (%llu bytes): %s%s", r->n, r->n == 1 ? "" : "s",
		kind_name(r->kind), peer ? ((struct rc_viewer *)peer)->number : 0,
		(unsigned long long)r->bytes, r->n ? r->paths[0] : "", r->n > 1 ? " and more" : "");
	if (r->kind != WIRE_FILES_DROP) {
		return;
	}
	struct rc_window *window = window_from_id(server, r->window);
	if (!window || !window->mapped) {
		log_warning("the files dropped are in %s; their window is gone",
			server->files.settings.dir);
		return;
	}
	size_t size = 0;
	for (int i = 0; i < r->n; i++) {
		size += 7 + 3 * strlen(r->paths[i]) + 3;
	}
	char *uris = malloc(size + 1);
	if (!uris) {
		return;
	}
	size_t len = 0;
	for (int i = 0; i < r->n; i++) {
		len += files_put_uri(uris + len, size + 1 - len, r->paths[i]);
		len += (size_t)snprintf(uris + len, size + 1 - len, "\r\n");
	}
	dnd_drop_files(server, window, r->x, r->y, uris, len);
}

/* An rcomp-run --send that waits for its groups to end (one a viewer),
 * told then how each did. */
struct rc_sender {
	struct rc_server *server;
	int fd;
	struct wl_event_source *source;
	struct buffer in; /* its send_files, until it is whole */
	uint32_t groups[RC_MAX_VIEWERS];
	int ngroups, left;
	bool failed;
	char said[2048];
	size_t said_len;
};

static void sender_free(struct rc_sender *s)
{
	struct rc_server *server = s->server;
	for (int i = 0; i < RC_SENDERS; i++) {
		if (server->senders[i] == s) {
			server->senders[i] = NULL;
		}
	}
	if (s->source) {
		wl_event_source_remove(s->source);
	}
	close(s->fd);
	buffer_finish(&s->in);
	free(s);
}

/* status: 0 whole, 1 failed, 2 no viewer to send to (a print waits). */
static void sender_answer(struct rc_sender *s, int status, const char *text)
{
	channel_write_goodbye(s->fd, WIRE_BYE_SHUTDOWN, status, text);
	sender_free(s);
}

/* A group of an --send ended: its sender hears how once all have. */
static void tell_sender(struct rc_server *server, uint32_t group, uint32_t status, const char *text)
{
	static const char *const how[] = {"whole", "cancelled", "refused", "failed"};
	for (int i = 0; i < RC_SENDERS; i++) {
		struct rc_sender *s = server->senders[i];
		for (int k = 0; s && k < s->ngroups; k++) {
			if (s->groups[k] != group) {
				continue;
			}
			s->groups[k] = 0;
			s->failed = s->failed || status != WIRE_FILES_WHOLE;
			int n = snprintf(s->said + s->said_len, sizeof(s->said) - s->said_len,
				"%s%s%s", s->said_len ? "; " : "",
				status == WIRE_FILES_WHOLE ? "" : how[status & 3],
				status == WIRE_FILES_WHOLE ? text : "");
			if (n > 0 && (size_t)n < sizeof(s->said) - s->said_len) {
				s->said_len += (size_t)n;
			}
			if (status != WIRE_FILES_WHOLE) {
				n = snprintf(s->said + s->said_len, sizeof(s->said) - s->said_len,
					": %s", text);
				if (n > 0 && (size_t)n < sizeof(s->said) - s->said_len) {
					s->said_len += (size_t)n;
				}
			}
			if (--s->left == 0) {
				sender_answer(s, s->failed ? 1 : 0, s->said);
			}
			return;
		}
	}
}

static void ended_hook(void *data, uint32_t group, uint32_t kind, bool sending, uint32_t status,
	const char *text)
{
	static const char *const how[] = {"whole", "cancelled", "refused", "failed"};
	if (sending) {
		tell_sender(data, group, status, text);
	}
	if (status == WIRE_FILES_WHOLE) {
		log_info("files %s to a viewer: %s", kind_name(kind), text);
	} else {
		log_warning("files %s %s a viewer: %s: %s", kind_name(kind),
			sending ? "to" : "from", how[status < 4 ? status : 3], text);
	}
}

static int handle_tick(void *data)
{
	handover_sync(data);
	return 0;
}

static void handle_idle(void *data)
{
	struct rc_server *server = data;
	server->files_idle = NULL;
	handover_sync(server);
}

/* files = ask: the viewer with input is asked (the one that gives them,
 * where none has input), in a notification. */
static void ask_hook(void *data, void *peer, uint32_t group, uint32_t kind, uint32_t files,
	uint64_t bytes)
{
	struct rc_server *server = data;
	struct rc_viewer *from = peer;
	struct rc_viewer *to = server->input_viewer ? server->input_viewer : from;
	char summary[160], body[4200];
	snprintf(summary, sizeof(summary), "Viewer %u gives the session %u file%s (%.1f MB)",
		from->number, files, files == 1 ? "" : "s", bytes / 1e6);
	snprintf(body, sizeof(body), "Take %s into %.4000s?", files == 1 ? "it" : "them",
		server->files.settings.dir);
	if (!notify_question(server, to, group, summary, body, "Take", handover_answer)) {
		handover_answer(server, group, false, 0);
		return;
	}
	log_info("%s: viewer %u is asked (files = ask)", summary, to->number);
}

void handover_answer(struct rc_server *server, uint32_t group, bool yes, uint32_t by)
{
	char why[128];
	snprintf(why, sizeof(why),
		by ? "refused: the person at viewer %u said no (files = ask)"
		   : "refused: no viewer could be asked (files = ask)",
		by);
	if (files_answer(&server->files, group, yes, why)) {
		log_info("files from a viewer: %s", yes ? "taken, as asked" : why);
		handover_sync(server);
	}
}

bool handover_init(struct rc_server *server)
{
	struct files_settings settings = {
		.size_limit = server->options.file_size_limit,
		.take = server->options.files,
		.paced = true, /* the channel's pacer keeps the link's queue short */
	};
	if (!files_download_dir(settings.dir, sizeof(settings.dir))) {
		log_warning("no download folder (HOME is not set): the viewers' files are refused");
		settings.take = FILES_TAKE_NO;
	}
	struct files_hooks hooks = {
		.send = send_hook,
		.received = received_hook,
		.ended = ended_hook,
		.ask = ask_hook,
		.data = server,
	};
	files_init(&server->files, &hooks, &settings);
	server->drag_list.fd = -1;
	server->files_timer = wl_event_loop_add_timer(server->loop, handle_tick, server);
	return server->files_timer != NULL;
}

/* The drag's list ---------------------------------------------------- */

#define DRAG_LIST_MAX 65536 /* bytes of a drag's text/uri-list */
#define DRAG_LIST_MS 5000 /* an app that has not written it by then never will */

static struct rc_viewer *viewer_of(struct rc_server *server, uint32_t number)
{
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		if (viewer->number == number) {
			return viewer;
		}
	}
	return NULL;
}

static void no_drag_files(struct rc_viewer *viewer, uint32_t serial)
{
	connection_send(viewer->conn,
		&(struct wire_msg){.type = WIRE_DRAG_NO_FILES,
			.drag_no_files = {.serial = serial}});
}

static void drag_list_end(struct rc_server *server)
{
	if (server->drag_list.source) {
		wl_event_source_remove(server->drag_list.source);
	}
	if (server->drag_list.timer) {
		wl_event_source_remove(server->drag_list.timer);
	}
	if (server->drag_list.fd >= 0) {
		close(server->drag_list.fd);
	}
	free(server->drag_list.text);
	server->drag_list.source = server->drag_list.timer = NULL;
	server->drag_list.text = NULL;
	server->drag_list.fd = -1;
}

/* The list is whole (or cut short): its files go, if it names any. */
static void drag_list_done(struct rc_server *server)
{
	struct rc_viewer *viewer = viewer_of(server, server->drag_list.viewer);
	uint32_t serial = server->drag_list.serial;
	uint32_t group = 0;
	if (viewer && server->drag_list.text) {
		server->drag_list.text[server->drag_list.len] = '\0';
		static char *paths[256];
		int n = files_uri_paths(server->drag_list.text, paths, 256);
		char err[256] = "";
		if (n > 0) {
			group = files_send(&server->files, viewer, WIRE_FILES_DRAG, 0,
				(int32_t)serial, 0, (const char *const *)paths, n, err,
				sizeof(err));
			if (!group) {
				log_warning("a drag's files cannot go to viewer %u: %s",
					viewer->number, err);
			} else {
				log_info("%d item%s of a drag go to viewer %u's desktop", n,
					n == 1 ? "" : "s", viewer->number);
			}
		}
	}
	drag_list_end(server);
	if (viewer && !group) {
		no_drag_files(viewer, serial);
	}
	if (group) {
		handover_sync(server);
	}
}

static int handle_drag_list(int fd, uint32_t mask, void *data)
{
	struct rc_server *server = data;
	size_t room = DRAG_LIST_MAX - server->drag_list.len;
	ssize_t got = read(fd, server->drag_list.text + server->drag_list.len, room);
	if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
		return 0;
	}
	if (got > 0) {
		server->drag_list.len += (size_t)got;
	}
	if (got <= 0 || server->drag_list.len == DRAG_LIST_MAX) {
		drag_list_done(server);
	}
	return 0;
}

static int handle_drag_list_timer(void *data)
{
	struct rc_server *server = data;
	log_warning("the app did not give its drag's list within %d s", DRAG_LIST_MS / 1000);
	drag_list_done(server);
	return 0;
}

void handover_drag_files(struct rc_viewer *viewer, uint32_t serial)
{
	struct rc_server *server = viewer->server;
	struct wlr_data_source *source = dnd_out_source(server);
	bool listed = false;
	char **t;
	if (source) {
		wl_array_for_each(t, &source->mime_types)
		{
			listed = listed || strcmp(*t, "text/uri-list") == 0;
		}
	}
	if (!listed || server->drag_list.fd >= 0) {
		no_drag_files(viewer, serial); /* none, or one list at a time */
		return;
	}
	int fds[2];
	server->drag_list.text = malloc(DRAG_LIST_MAX + 1);
	if (!server->drag_list.text || pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
		free(server->drag_list.text);
		server->drag_list.text = NULL;
		no_drag_files(viewer, serial);
		return;
	}
	server->drag_list.fd = fds[0];
	server->drag_list.len = 0;
	server->drag_list.viewer = viewer->number;
	server->drag_list.serial = serial;
	server->drag_list.source = wl_event_loop_add_fd(server->loop, fds[0], WL_EVENT_READABLE,
		handle_drag_list, server);
	server->drag_list.timer =
		wl_event_loop_add_timer(server->loop, handle_drag_list_timer, server);
	if (server->drag_list.timer) {
		wl_event_source_timer_update(server->drag_list.timer, DRAG_LIST_MS);
	}
	wlr_data_source_send(source, "text/uri-list", fds[1]); /* it closes fds[1] */
	if (!server->drag_list.source || !server->drag_list.timer) {
		drag_list_done(server);
	}
}

void handover_finish(struct rc_server *server)
{
	drag_list_end(server);
	for (int i = 0; i < RC_SENDERS; i++) {
		if (server->senders[i]) {
			sender_answer(server->senders[i], 1, "the session ended");
		}
	}
	files_finish(&server->files);
	if (server->files_timer) {
		wl_event_source_remove(server->files_timer);
		server->files_timer = NULL;
	}
	if (server->files_idle) {
		wl_event_source_remove(server->files_idle);
		server->files_idle = NULL;
	}
}

void handover_sync(struct rc_server *server)
{
	uint64_t now = monotonic_usec();
	files_expire(&server->files, now);
	bool more = files_pump(&server->files, may_send, now);
	if (more && !server->files_idle) {
		/* Hashing goes on at the next turn, after what else is due. */
		server->files_idle = wl_event_loop_add_idle(server->loop, handle_idle, server);
	}
	/* Groups waiting for a viewer expire; the rates need a look now and
	 * then. */
	struct files_progress p;
	if (server->files_timer) {
		wl_event_source_timer_update(server->files_timer,
			files_progress(&server->files, &p, 1, now) ? 1000 : 0);
	}
}

bool handover_handle(struct rc_viewer *viewer, const struct wire_msg *msg, char *err,
	size_t err_size)
{
	return files_handle(&viewer->server->files, viewer, !viewer->view_only, msg,
		monotonic_usec(), err, err_size);
}

void handover_viewer_gone(struct rc_viewer *viewer)
{
	files_peer_gone(&viewer->server->files, viewer, monotonic_usec());
}

void handover_viewer_welcomed(struct rc_viewer *viewer)
{
	if (!viewer->view_only && viewer->conn->minor >= 8) {
		files_adopt(&viewer->server->files, viewer);
	}
}

static bool takes_files(const struct rc_viewer *viewer, uint32_t to)
{
	return !viewer->view_only && viewer->conn->minor >= 8 && viewer->conn->welcomed &&
		(!to || viewer->number == to);
}

int handover_send(struct rc_server *server, uint32_t to, uint32_t kind, const char *const *paths,
	int n, char *err, size_t err_size)
{
	int groups = 0;
	/* A print goes to one viewer: the person's with input, else the first
	 * that takes files. */
	struct rc_viewer *only = NULL;
	if (kind == WIRE_FILES_PRINT && !to) {
		only = server->input_viewer && takes_files(server->input_viewer, 0)
			? server->input_viewer
			: NULL;
		struct rc_viewer *v;
		wl_list_for_each(v, &server->viewers, link)
		{
			if (!only && takes_files(v, 0)) {
				only = v;
			}
		}
	}
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		if (!takes_files(viewer, to) || (only && viewer != only)) {
			continue;
		}
		uint32_t id =
			files_send(&server->files, viewer, kind, 0, 0, 0, paths, n, err, err_size);
		if (!id) {
			for (int k = 0; k < groups; k++) {
				files_cancel(&server->files, server->files_sent[k], true,
					"given up: the files could not go to every viewer");
			}
			return -1;
		}
		server->files_sent[groups++] = id;
		if (kind == WIRE_FILES_PRINT) {
			log_info("a print of the session's to viewer %u", viewer->number);
		}
	}
	if (groups == 0) {
		snprintf(err, err_size,
			to ? "no viewer %u that takes files is attached"
			   : "no viewer that takes files is attached",
			to);
		return HANDOVER_NO_VIEWER;
	}
	handover_sync(server);
	return groups;
}

void handover_stats(struct rc_server *server, void (*line)(const char *text))
{
	struct files_progress p[2 * FILES_GROUPS];
	int n = files_progress(&server->files, p, 2 * FILES_GROUPS, monotonic_usec());
	for (int i = 0; i < n; i++) {
		char text[256];
		uint64_t left = p[i].total > p[i].done ? p[i].total - p[i].done : 0;
		snprintf(text, sizeof(text), "files %s %s: %s, %.1f of %.1f MB, %.1f Mbit/s%s%s",
			kind_name(p[i].kind), p[i].sending ? "to a viewer" : "from a viewer",
			p[i].name, p[i].done / 1e6, p[i].total / 1e6, p[i].rate * 8 / 1e6,
			p[i].waiting ? ", waiting for its viewer" : "",
			p[i].rate && !p[i].waiting ? "" : "");
		size_t len = strlen(text);
		if (p[i].rate && !p[i].waiting) {
			snprintf(text + len, sizeof(text) - len, ", %.0f s left",
				(double)left / (double)p[i].rate);
		}
		line(text);
	}
}

/* The sender's request, read as it comes; its files go once it is whole.
 * A sender that goes away cancels what it asked for. */
static int handle_sender(int fd, uint32_t mask, void *data)
{
	struct rc_sender *s = data;
	struct rc_server *server = s->server;
	if (s->ngroups) {
		/* Waiting for the groups: it may only go away. */
		char byte;
		if (read(fd, &byte, 1) <= 0 || (mask & (WL_EVENT_HANGUP | WL_EVENT_ERROR))) {
			for (int k = 0; k < s->ngroups; k++) {
				if (s->groups[k]) {
					files_cancel(&server->files, s->groups[k], true,
						"rcomp-run --send went away");
				}
			}
			sender_free(s);
		}
		return 0;
	}
	uint8_t *dst = buffer_reserve(&s->in, 16384);
	ssize_t n = dst ? read(fd, dst, 16384) : -1;
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		return 0;
	}
	if (n <= 0) {
		sender_free(s);
		return 0;
	}
	buffer_commit(&s->in, (size_t)n);
	struct wire_msg msg;
	size_t used;
	char err[256];
	enum wire_status status = wire_decode(WIRE_FROM_VIEWER, buffer_head(&s->in),
		buffer_size(&s->in), &msg, &used, err, sizeof(err));
	if (status == WIRE_INCOMPLETE) {
		return 0;
	}
	if (status != WIRE_OK || msg.type != WIRE_SEND_FILES ||
		msg.send_files.paths[msg.send_files.paths_len - 1] != '\0') {
		sender_answer(s, 1,
			status != WIRE_OK
				? err
				: "send_files, its paths each ended by a NUL, must follow");
		return 0;
	}
	const char *paths[256];
	int count = 0;
	for (const char *p = msg.send_files.paths;
		p < msg.send_files.paths + msg.send_files.paths_len && count < 256;
		p += strlen(p) + 1) {
		if (p[0] != '/') {
			sender_answer(s, 1, "a path that is not absolute");
			return 0;
		}
		paths[count++] = p;
	}
	if (msg.send_files.kind == WIRE_FILES_PRINT && count != 1) {
		sender_answer(s, 1, "a print is one PDF");
		return 0;
	}
	int groups = handover_send(server, msg.send_files.to, msg.send_files.kind, paths, count,
		err, sizeof(err));
	if (groups < 0) {
		sender_answer(s, groups == HANDOVER_NO_VIEWER ? 2 : 1, err);
		return 0;
	}
	s->left = groups;
	for (int k = 0; k < groups && k < RC_MAX_VIEWERS; k++) {
		s->groups[s->ngroups++] = server->files_sent[k];
	}
	if (msg.send_files.kind != WIRE_FILES_PRINT) {
		log_info("rcomp-run --send: %d path%s to %d viewer%s", count, count == 1 ? "" : "s",
			groups, groups == 1 ? "" : "s");
	}
	return 0;
}

void handover_add_sender(struct rc_server *server, int fd)
{
	int slot = -1;
	for (int i = 0; i < RC_SENDERS && slot < 0; i++) {
		if (!server->senders[i]) {
			slot = i;
		}
	}
	struct rc_sender *s = slot >= 0 ? calloc(1, sizeof(*s)) : NULL;
	if (!s) {
		channel_write_goodbye(fd, WIRE_BYE_BUSY, 1,
			"other files are being sent: try again when they are there");
		close(fd);
		return;
	}
	s->server = server;
	s->fd = fd;
	buffer_init(&s->in, WIRE_HEADER_SIZE + 4 + WIRE_MAX_SEND_PATHS);
	s->source = wl_event_loop_add_fd(server->loop, fd, WL_EVENT_READABLE, handle_sender, s);
	server->senders[slot] = s;
	if (!s->source) {
		sender_free(s);
	}
}
