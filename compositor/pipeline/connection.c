/*
 * The viewer's connection: nonblocking reads into the channel, messages to
 * the handler, the send queue flushed on every turn of the event loop, and
 * the books of frames in flight. Errors close this connection alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "connection.h"
#include "log.h"
#include "monotonic.h"
#include "transfer.h"

/* The frames classes' queues: what a viewer's frames hold is kept well
 * under this (connection_may_send_frame); reaching it means a bug, and
 * the viewer is dropped. */
#define OUT_LIMIT (4 * ((size_t)WIRE_HEADER_SIZE + WIRE_MAX_BODY))
/* The other classes': far more than a snapshot of many windows, a burst
 * of cursors or a second of sound. */
#define OUT_LIMIT_SMALL (16u << 20)
/* One frame's raw bytes before the viewer has acknowledged a frame, and
 * after (a 4K window whole). */
#define FRAME_RAW_MIN (1u << 20)
#define FRAME_RAW_MAX (32u << 20)
/* The largest viewer message is a keymap. */
#define IN_LIMIT ((size_t)WIRE_HEADER_SIZE + 4 + WIRE_MAX_KEYMAP)
#define READ_CHUNK (64 * 1024)

static void set_writable(struct rc_connection *conn, bool writable)
{
	/* An epoll change is a syscall, and flushing runs on every turn of
	 * the loop: change it only when it changes. */
	if (writable != conn->writable_armed) {
		conn->writable_armed = writable;
		wl_event_source_fd_update(conn->out_source, writable ? WL_EVENT_WRITABLE : 0);
	}
}

static bool handle_message(void *data, const struct wire_msg *msg)
{
	struct rc_connection *conn = data;
	return conn->handler->message(conn->data, msg) && !conn->closing;
}

static int handle_readable(int fd, uint32_t mask, void *data)
{
	struct rc_connection *conn = data;
	if (conn->closing) {
		/* Nothing more is read from a viewer we are saying goodbye to. */
		wl_event_source_fd_update(conn->in_source, 0);
		return 0;
	}
	if (!(mask & WL_EVENT_READABLE)) {
		log_info("viewer disconnected");
		connection_destroy(conn);
		return 0;
	}
	char err[256];
	enum channel_status status = channel_read(&conn->channel, WIRE_FROM_VIEWER, READ_CHUNK,
		handle_message, conn, err, sizeof(err));
	switch (status) {
	case CHANNEL_OK:
		break;
	case CHANNEL_CLOSED:
		log_info("viewer disconnected");
		connection_destroy(conn);
		break;
	case CHANNEL_FAILED:
		log_info("viewer connection failed: %s", strerror(errno));
		connection_destroy(conn);
		break;
	case CHANNEL_INVALID:
		connection_refuse(conn, err);
		break;
	}
	return 0;
}

static int handle_writable(int fd, uint32_t mask, void *data)
{
	struct rc_connection *conn = data;
	if (mask & (WL_EVENT_HANGUP | WL_EVENT_ERROR)) {
		log_info("viewer disconnected");
		connection_destroy(conn);
		return 0;
	}
	connection_flush(conn);
	return 0;
}

/* The link took nothing for the stall timeout while something waited:
 * the viewer is dropped. */
static int handle_stall_timer(void *data)
{
	struct rc_connection *conn = data;
	conn->stall_armed = false;
	if (!conn->waiting_since_us) {
		return 0;
	}
	uint64_t waited_ms = (monotonic_usec() - conn->waiting_since_us) / 1000;
	if (waited_ms < (uint64_t)conn->stall_timeout_ms) {
		conn->stall_armed = true;
		wl_event_source_timer_update(conn->stall_timer,
			conn->stall_timeout_ms - (int)waited_ms);
		return 0;
	}
	log_warning("%s took nothing for %.0f s with %zu KiB waiting for it: dropping it (it may "
		    "reconnect; --stall-timeout sets how long)",
		conn->name, (double)waited_ms / 1000, channel_queued(&conn->channel) / 1024);
	connection_destroy(conn);
	return 0;
}

struct rc_connection *connection_create(struct wl_event_loop *loop, int in_fd, int out_fd,
	int stall_timeout_ms, const char *name, const struct rc_connection_handler *handler,
	void *data)
{
	struct rc_connection *conn = calloc(1, sizeof(*conn));
	if (!conn) {
		close(in_fd);
		if (out_fd != in_fd) {
			close(out_fd);
		}
		return NULL;
	}
	channel_init(&conn->channel, in_fd, out_fd, IN_LIMIT, OUT_LIMIT_SMALL);
	channel_set_out_limit(&conn->channel, CHANNEL_FOCUS, OUT_LIMIT);
	channel_set_out_limit(&conn->channel, CHANNEL_FRAMES, OUT_LIMIT);
	flow_init(&conn->flow);
	conn->handler = handler;
	conn->data = data;
	conn->stall_timeout_ms = stall_timeout_ms;
	snprintf(conn->name, sizeof(conn->name), "%s", name);
	conn->in_source =
		wl_event_loop_add_fd(loop, in_fd, WL_EVENT_READABLE, handle_readable, conn);
	conn->out_source = wl_event_loop_add_fd(loop, out_fd, 0, handle_writable, conn);
	conn->stall_timer = wl_event_loop_add_timer(loop, handle_stall_timer, conn);
	if (!conn->in_source || !conn->out_source || !conn->stall_timer) {
		if (conn->in_source) {
			wl_event_source_remove(conn->in_source);
		}
		if (conn->out_source) {
			wl_event_source_remove(conn->out_source);
		}
		if (conn->stall_timer) {
			wl_event_source_remove(conn->stall_timer);
		}
		channel_close(&conn->channel);
		free(conn);
		return NULL;
	}
	return conn;
}

void connection_destroy(struct rc_connection *conn)
{
	if (!conn) {
		return;
	}
	conn->handler->closed(conn->data);
	wl_event_source_remove(conn->in_source);
	wl_event_source_remove(conn->out_source);
	wl_event_source_remove(conn->stall_timer);
	channel_close(&conn->channel);
	free(conn);
}

/* The queue passed its limit: the viewer is not reading. */
static void not_reading(struct rc_connection *conn)
{
	log_error("viewer is not reading (%zu bytes queued); disconnecting it",
		channel_queued(&conn->channel));
	/* Dropped at the next flush; nothing queued matters now. */
	channel_drop_output(&conn->channel);
	conn->closing = true;
	conn->channel.unpaced = true;
	set_writable(conn, true);
}

void connection_send(struct rc_connection *conn, const struct wire_msg *msg)
{
	if (conn->closing) {
		return;
	}
	if (!channel_send(&conn->channel, msg)) {
		not_reading(conn);
	}
}

void connection_send_window(struct rc_connection *conn, struct channel_mark *last,
	const struct wire_msg *msg)
{
	if (channel_taken(&conn->channel, *last)) {
		connection_send(conn, msg);
		return;
	}
	if (conn->closing) {
		return;
	}
	if (!channel_send_to(&conn->channel, last->cls, msg)) {
		not_reading(conn);
		return;
	}
	*last = channel_mark(&conn->channel, last->cls);
}

bool connection_send_frame(struct rc_connection *conn, uint32_t window, uint32_t input_mark,
	const uint8_t *bytes, size_t size, struct channel_mark *mark)
{
	enum channel_class cls = window == conn->focus ? CHANNEL_FOCUS : CHANNEL_FRAMES;
	struct wire_msg answer = {.type = WIRE_FRAME_MARK,
		.frame_mark = {.window = window, .mark = input_mark}};
	if (conn->closing || (input_mark && !channel_send_to(&conn->channel, cls, &answer)) ||
		!channel_append(&conn->channel, cls, bytes, size)) {
		return false;
	}
	*mark = channel_mark(&conn->channel, cls);
	return true;
}

void connection_goodbye(struct rc_connection *conn, enum wire_goodbye_reason reason, int status,
	const char *text)
{
	struct wire_msg msg = {
		.type = WIRE_GOODBYE,
		.goodbye =
			{
				.status = status,
				.reason = reason,
				.text = text,
				.text_len = (uint32_t)strnlen(text, WIRE_MAX_TEXT),
			},
	};
	connection_send(conn, &msg);
	conn->closing = true;
	/* A peer being dropped may no longer acknowledge. */
	conn->channel.unpaced = true;
	set_writable(conn, true);
}

void connection_refuse(struct rc_connection *conn, const char *text)
{
	log_error("viewer sent bad data, disconnecting it: %s", text);
	/* Tell the peer why, then close once that is written. */
	channel_drop_input(&conn->channel);
	connection_goodbye(conn, WIRE_BYE_PROTOCOL_ERROR, 0, text);
}

void connection_flush(struct rc_connection *conn)
{
	enum channel_status status = channel_flush(&conn->channel);
	if (status != CHANNEL_OK) {
		log_info("viewer connection lost: %s",
			status == CHANNEL_FAILED ? strerror(errno) : "closed");
		connection_destroy(conn);
		return;
	}
	size_t queued = channel_queued(&conn->channel);
	if (queued == 0 && conn->closing) {
		connection_destroy(conn);
		return;
	}
	/* Progress: the link took bytes, or nothing waits for it. */
	if (conn->channel.written != conn->written || queued == 0) {
		conn->written = conn->channel.written;
		conn->waiting_since_us = 0;
	} else if (!conn->waiting_since_us) {
		conn->waiting_since_us = monotonic_usec();
		if (!conn->stall_armed && conn->stall_timeout_ms > 0) {
			conn->stall_armed = true;
			wl_event_source_timer_update(conn->stall_timer, conn->stall_timeout_ms);
		}
	}
	/* A window that could not send keeps its damage and its clock keeps
	 * ticking, so nothing needs waking when the queue drains; what pacing
	 * holds back goes when an ack is read. */
	set_writable(conn, channel_blocked(&conn->channel));
}

void connection_close_now(struct rc_connection *conn, int wait_ms)
{
	/* Give a goodbye a moment to leave. */
	conn->channel.unpaced = true;
	for (int waited = 0;; waited += 10) {
		if (channel_flush(&conn->channel) != CHANNEL_OK ||
			channel_queued(&conn->channel) == 0 || waited >= wait_ms) {
			break;
		}
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	connection_destroy(conn);
}

/* Frames that may be in flight while the link itself has room, whatever
 * the bandwidth-delay product says: one being decoded and shown, the next
 * encoded and on its way. */
#define PIPELINE_FRAMES 2

/* Everything written has left, and the link holds under half of what its
 * pace allows: a frame sent now waits behind nothing. */
static bool link_has_room(const struct rc_connection *conn)
{
	const struct pace *pace = &conn->channel.pace;
	return channel_queued(&conn->channel) == 0 && pace_in_flight(pace) < pace_limit(pace) / 2;
}

uint64_t connection_frame_max(const struct rc_connection *conn)
{
	/* It proved it reads once it acknowledged a frame. */
	return conn->flow.delivered > 0 ? FRAME_RAW_MAX : FRAME_RAW_MIN;
}

/* Frames queued for the viewer and being encoded for it. */
static uint64_t frames_held(const struct rc_connection *conn)
{
	return channel_queued_class(&conn->channel, CHANNEL_FOCUS) +
		channel_queued_class(&conn->channel, CHANNEL_FRAMES) + conn->reserved;
}

void connection_reserve(struct rc_connection *conn, uint64_t bytes)
{
	conn->reserved += bytes;
}

void connection_release(struct rc_connection *conn, uint64_t bytes)
{
	conn->reserved = conn->reserved > bytes ? conn->reserved - bytes : 0;
}

bool connection_may_send_frame(const struct rc_connection *conn, bool window_in_flight,
	struct channel_mark last, uint64_t estimate)
{
	/* A window with nothing in flight may always send one frame: else a
	 * window whose clock ticks just after a busy one's could find the
	 * budget spent at every tick and starve. The frames' own estimate
	 * (flow.c) counts the viewer's decoding and showing as pipe, so where
	 * one frame is larger than rate x round trip it would allow one at a
	 * time, and the rate would be capped by the round trip while the link
	 * idles: there a second may go. */
	if (!conn->welcomed || conn->closing || !channel_taken(&conn->channel, last)) {
		return false;
	}
	uint64_t held = frames_held(conn);
	if (held > 0 && held + estimate > 2 * connection_frame_max(conn)) {
		return false;
	}
	return !window_in_flight || flow_can_send(&conn->flow, monotonic_usec()) ||
		(conn->flow.count < PIPELINE_FRAMES && link_has_room(conn));
}

bool connection_may_send_bulk(const struct rc_connection *conn)
{
	return !conn->closing &&
		channel_queued_class(&conn->channel, CHANNEL_BULK) < TRANSFER_HIGH_WATER;
}

void connection_frame_sent(struct rc_connection *conn, uint32_t window, uint32_t seq,
	uint32_t bytes, uint64_t now_us)
{
	conn->frames++;
	flow_sent(&conn->flow, window, seq, bytes, now_us);
}

int64_t connection_acked(struct rc_connection *conn, uint32_t window, uint32_t seq)
{
	return flow_acked(&conn->flow, window, seq, monotonic_usec());
}

void connection_forget_window(struct rc_connection *conn, uint32_t window)
{
	flow_forget_window(&conn->flow, window);
}
