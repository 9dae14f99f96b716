/*
 * Files handed over between this desktop and the session
 * (protocol/files.h): what the session sends (rcomp-run --send) is saved
 * into the local download folder, and opened only where --open-files says;
 * local files dropped on a remote window go to the session, which gives them
 * to the app once whole. A broken link holds a group until the session
 * answers again, and it goes on from where it stood.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "connection.h"
#include "handover.h"
#include "log.h"
#include "notify.h"
#include "offer.h"
#include "print.h"
#include "monotonic.h"
#include "viewer.h"

static void send_hook(void *data, void *peer, const struct wire_msg *msg)
{
	struct rv_viewer *viewer = data;
	if (viewer->connection.server_minor >= 8) {
		connection_send(viewer, msg);
	}
}

static bool may_send(void *data, void *peer)
{
	struct rv_viewer *viewer = data;
	struct rv_connection *conn = &viewer->connection;
	return conn->connected && conn->welcomed &&
		channel_queued_class(&conn->channel, CHANNEL_BULK) < TRANSFER_HIGH_WATER;
}

/* The drag's target gets what it asked for: the copies' URIs, or nothing
 * (n 0) where the files did not come. */
static void drag_files_answer(struct rv_viewer *viewer, char *const *paths, int n)
{
	int fd = viewer->drag_files_fd;
	viewer->drag_files_fd = -1;
	viewer->files.settings.drag_serial = 0;
	if (fd < 0) {
		return;
	}
	static char uris[65536];
	size_t len = 0;
	for (int i = 0; i < n && len + 8 < sizeof(uris); i++) {
		len += files_put_uri(uris + len, sizeof(uris) - 2 - len, paths[i]);
		uris[len++] = '\r';
		uris[len++] = '\n';
	}
	/* A list this small fits the pipe: the target reads it when it will. */
	for (size_t done = 0; done < len;) {
		ssize_t w = write(fd, uris + done, len - done);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			break;
		}
		done += (size_t)w;
	}
	close(fd);
}

void handover_drag_files(struct rv_viewer *viewer, int fd)
{
	static uint32_t last;
	if (viewer->drag_files_fd >= 0) {
		/* The target asked again: the files on their way answer this. */
		close(viewer->drag_files_fd);
		viewer->drag_files_fd = fd;
		return;
	}
	last = last % (1u << 20) + 1; /* as a file_group's x */
	viewer->drag_files_fd = fd;
	viewer->drag_files_serial = last;
	viewer->files.settings.drag_serial = last;
	connection_send(viewer,
		&(struct wire_msg){.type = WIRE_DRAG_FILES, .drag_files = {.serial = last}});
}

void handover_drag_no_files(struct rv_viewer *viewer, uint32_t serial)
{
	if (viewer->drag_files_fd < 0 || serial != viewer->drag_files_serial) {
		return;
	}
	int fd = viewer->drag_files_fd;
	viewer->drag_files_fd = -1;
	viewer->files.settings.drag_serial = 0;
	offer_fetch(viewer, WIRE_SELECTION_DND, "text/uri-list", fd);
}

static void received_hook(void *data, void *peer, const struct files_received *r)
{
	struct rv_viewer *viewer = data;
	if (r->kind == WIRE_FILES_DRAG) {
		log_info("%d item%s of the app's drag came (%llu bytes): %s%s", r->n,
			r->n == 1 ? "" : "s", (unsigned long long)r->bytes, r->n ? r->paths[0] : "",
			r->n > 1 ? ", ..." : "");
		if ((uint32_t)r->x == viewer->drag_files_serial) {
			drag_files_answer(viewer, r->paths, r->n);
		}
		return;
	}
	if (r->kind == WIRE_FILES_PRINT) {
		for (int i = 0; i < r->n; i++) {
			log_info("the session printed %s (%llu bytes)", r->paths[i],
				(unsigned long long)r->bytes);
			print_received(viewer, r->paths[i]);
		}
		return;
	}
	for (int i = 0; i < r->n; i++) {
		log_info("the session sent %s (%llu bytes in all)", r->paths[i],
			(unsigned long long)r->bytes);
		if (viewer->options.open_files) {
			print_open(r->paths[i]);
		}
	}
	if (r->n > 0) {
		char summary[160], body[PATH_MAX + 16];
		const char *name = strrchr(r->paths[0], '/');
		name = name ? name + 1 : r->paths[0];
		if (r->n == 1) {
			snprintf(summary, sizeof(summary), "Saved %.120s", name);
		} else {
			snprintf(summary, sizeof(summary), "Saved %d files", r->n);
		}
		snprintf(body, sizeof(body), "in %.*s",
			(int)(name - r->paths[0] - (name > r->paths[0])), r->paths[0]);
		notify_local(viewer, summary, body);
	}
}

static void ended_hook(void *data, uint32_t group, uint32_t kind, bool sending, uint32_t status,
	const char *text)
{
	static const char *const how[] = {"whole", "cancelled", "refused", "failed"};
	if (kind == WIRE_FILES_DRAG && status != WIRE_FILES_WHOLE) {
		drag_files_answer(data, NULL, 0); /* the target gets nothing */
	}
	if (status == WIRE_FILES_WHOLE) {
		log_info("the files went to the session: %s", text);
	} else {
		log_warning("files %s the session: %s: %s", sending ? "to" : "from",
			how[status < 4 ? status : 3], text);
	}
}

/* files = ask: the desktop's notification asks the person. */
static void ask_hook(void *data, void *peer, uint32_t group, uint32_t kind, uint32_t files,
	uint64_t bytes)
{
	struct rv_viewer *viewer = data;
	char summary[160], body[PATH_MAX + 64];
	const char *what = kind == WIRE_FILES_PRINT ? "prints" : "sends";
	if (files == 1) {
		snprintf(summary, sizeof(summary), "The session %s a file (%.1f MB)", what,
			bytes / 1e6);
	} else {
		snprintf(summary, sizeof(summary), "The session %s %u files (%.1f MB)", what, files,
			bytes / 1e6);
	}
	snprintf(body, sizeof(body), "Save %s in %s?", files == 1 ? "it" : "them",
		viewer->files.settings.dir);
	if (!notify_question(viewer, group, summary, body, "Save", handover_answer)) {
		log_warning("files = ask, and this desktop has no notification daemon to ask "
			    "with: the session's files are refused");
		handover_answer(viewer, group, false);
		return;
	}
	log_info("%s: asked", summary);
}

/* A transfer is told of once it has gone TELL_AFTER_US, and its word
 * renewed each TELL_EVERY_US: what has come, the rate, the time left, and
 * a Cancel. */
#define TELL_AFTER_US 1000000
#define TELL_EVERY_US 2000000

static void told_event(struct rv_viewer *viewer, uint32_t tag, bool cancel)
{
	if (tag >= 2 * FILES_GROUPS || !viewer->told[tag].used) {
		return;
	}
	viewer->told[tag].shown = false;
	viewer->told[tag].dismissed = true; /* told of no more */
	if (cancel &&
		files_cancel(&viewer->files, viewer->told[tag].group, viewer->told[tag].sending,
			"the person at the viewer cancelled it")) {
		log_info("files %s the session: cancelled, as the person said",
			viewer->told[tag].sending ? "to" : "from");
	}
}

static void tell(struct rv_viewer *viewer, uint64_t now)
{
	if (now - viewer->told_us < TELL_AFTER_US / 4) {
		return;
	}
	viewer->told_us = now;
	struct files_progress p[2 * FILES_GROUPS];
	int n = files_progress(&viewer->files, p, 2 * FILES_GROUPS, now);
	bool seen[2 * FILES_GROUPS] = {false};
	const char *host =
		viewer->connection.host_name[0] ? viewer->connection.host_name : "the session";
	for (int k = 0; k < n; k++) {
		if (p[k].asking) {
			continue;
		}
		int t = -1;
		for (int i = 0; i < 2 * FILES_GROUPS && t < 0; i++) {
			t = viewer->told[i].used && viewer->told[i].group == p[k].group &&
					viewer->told[i].sending == p[k].sending
				? i
				: -1;
		}
		for (int i = 0; i < 2 * FILES_GROUPS && t < 0; i++) {
			if (!viewer->told[i].used) {
				t = i;
				viewer->told[i].used = true;
				viewer->told[i].group = p[k].group;
				viewer->told[i].sending = p[k].sending;
				viewer->told[i].since_us = now;
			}
		}
		if (t < 0) {
			continue;
		}
		seen[t] = true;
		if (viewer->told[t].dismissed || now - viewer->told[t].since_us < TELL_AFTER_US ||
			(viewer->told[t].shown && now - viewer->told[t].shown_us < TELL_EVERY_US)) {
			continue;
		}
		char summary[160], body[160], left[48] = "";
		snprintf(summary, sizeof(summary), "%s %s %s %.64s",
			p[k].sending ? "Sending" : "Receiving", p[k].name,
			p[k].sending ? "to" : "from", host);
		uint64_t rest = p[k].total > p[k].done ? p[k].total - p[k].done : 0;
		if (p[k].waiting) {
			snprintf(left, sizeof(left), ", waiting for the link");
		} else if (p[k].rate) {
			snprintf(left, sizeof(left), " at %.1f Mbit/s, %.0f s left",
				p[k].rate * 8 / 1e6, (double)rest / (double)p[k].rate);
		}
		snprintf(body, sizeof(body), "%.1f of %.1f MB%s", p[k].done / 1e6, p[k].total / 1e6,
			left);
		if (notify_transfer(viewer, (uint32_t)t, summary, body, told_event)) {
			viewer->told[t].shown = true;
			viewer->told[t].shown_us = now;
		}
	}
	for (int i = 0; i < 2 * FILES_GROUPS; i++) {
		if (viewer->told[i].used && !seen[i]) {
			/* It ended (the news of how comes on its own). */
			notify_transfer_end(viewer, (uint32_t)i);
			memset(&viewer->told[i], 0, sizeof(viewer->told[i]));
		}
	}
}

void handover_answer(struct rv_viewer *viewer, uint32_t group, bool yes)
{
	if (files_answer(&viewer->files, group, yes,
		    yes ? "" : "refused: the person at the viewer said no")) {
		log_info("the session's files: %s",
			yes ? "taken, as the person said" : "refused, as the person said");
	}
}

bool handover_init(struct rv_viewer *viewer)
{
	viewer->drag_files_fd = -1;
	struct files_settings settings = {
		.size_limit = viewer->options.file_size_limit,
		.take = viewer->options.files,
	};
	if (!files_download_dir(settings.dir, sizeof(settings.dir))) {
		log_warning(
			"no download folder (HOME is not set): the session's files are refused");
		settings.take = FILES_TAKE_NO;
	}
	struct files_hooks hooks = {
		.send = send_hook,
		.received = received_hook,
		.ended = ended_hook,
		.ask = ask_hook,
		.data = viewer,
	};
	files_init(&viewer->files, &hooks, &settings);
	return true;
}

void handover_finish(struct rv_viewer *viewer)
{
	for (int i = 0; i < 2 * FILES_GROUPS; i++) {
		if (viewer->told[i].used) {
			notify_transfer_end(viewer, (uint32_t)i);
		}
	}
	drag_files_answer(viewer, NULL, 0);
	files_finish(&viewer->files);
}

bool handover_sync(struct rv_viewer *viewer)
{
	uint64_t now = monotonic_usec();
	files_expire(&viewer->files, now);
	bool more = files_pump(&viewer->files, may_send, now);
	tell(viewer, now);
	return more;
}

void handover_handle(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	char err[256];
	if (!files_handle(&viewer->files, viewer, true, msg, monotonic_usec(), err, sizeof(err))) {
		connection_fail(viewer, "%s", err);
	}
}

void handover_link_down(struct rv_viewer *viewer)
{
	files_peer_gone(&viewer->files, viewer, monotonic_usec());
	if (viewer->files.settings.drag_serial) {
		drag_files_answer(viewer, NULL, 0); /* asked, and no answer came */
	}
}

void handover_link_up(struct rv_viewer *viewer)
{
	if (viewer->connection.server_minor >= 8) {
		files_adopt(&viewer->files, viewer);
	}
}

uint32_t handover_drop(struct rv_viewer *viewer, uint32_t window, int32_t x, int32_t y,
	const char *const *paths, int n)
{
	char err[512];
	if (viewer->connection.server_minor < 8) {
		log_warning("the files dropped cannot go: rcomp-run there is older than files");
		return 0;
	}
	uint32_t group = files_send(&viewer->files, viewer->connection.welcomed ? viewer : NULL,
		WIRE_FILES_DROP, window, x, y, paths, n, err, sizeof(err));
	if (!group) {
		log_warning("the files dropped cannot go to the session: %s", err);
	}
	return group;
}

void handover_stats(struct rv_viewer *viewer, void (*line)(const char *text))
{
	struct files_progress p[2 * FILES_GROUPS];
	int n = files_progress(&viewer->files, p, 2 * FILES_GROUPS, monotonic_usec());
	for (int i = 0; i < n; i++) {
		uint64_t left = p[i].total > p[i].done ? p[i].total - p[i].done : 0;
		char eta[32] = "";
		if (p[i].rate && !p[i].waiting) {
			snprintf(eta, sizeof(eta), ", %.0f s left",
				(double)left / (double)p[i].rate);
		}
		char text[256];
		snprintf(text, sizeof(text),
			"files %s the session: %s, %.1f of %.1f MB, %.1f Mbit/s%s%s",
			p[i].sending ? "to" : "from", p[i].name, p[i].done / 1e6, p[i].total / 1e6,
			p[i].rate * 8 / 1e6, p[i].waiting ? ", waiting for the link" : "", eta);
		line(text);
	}
}
