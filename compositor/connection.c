/*
 * The viewer's connection: nonblocking reads into the channel, messages to
 * the handler, the send queue flushed on every turn of the event loop, and
 * the books of frames in flight. Errors close this connection alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "connection.h"
#include "log.h"
#include "monotonic.h"
#include "transfer.h"

/* Frames are encoded only while less than this is waiting to be written, so
 * a slow link holds at most about one frame plus control messages. */
#define OUT_HIGH_WATER (256 * 1024)
#define OUT_LIMIT ((size_t)WIRE_HEADER_SIZE + WIRE_MAX_BODY + (1u << 20))
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

struct rc_connection *connection_create(struct wl_event_loop *loop, int in_fd, int out_fd,
	const struct rc_connection_handler *handler, void *data)
{
	struct rc_connection *conn = calloc(1, sizeof(*conn));
	if (!conn) {
		close(in_fd);
		if (out_fd != in_fd) {
			close(out_fd);
		}
		return NULL;
	}
	channel_init(&conn->channel, in_fd, out_fd, IN_LIMIT, OUT_LIMIT);
	flow_init(&conn->flow);
	conn->handler = handler;
	conn->data = data;
	conn->in_source =
		wl_event_loop_add_fd(loop, in_fd, WL_EVENT_READABLE, handle_readable, conn);
	conn->out_source = wl_event_loop_add_fd(loop, out_fd, 0, handle_writable, conn);
	if (!conn->in_source || !conn->out_source) {
		if (conn->in_source) {
			wl_event_source_remove(conn->in_source);
		}
		if (conn->out_source) {
			wl_event_source_remove(conn->out_source);
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
	channel_close(&conn->channel);
	free(conn);
}

void connection_send(struct rc_connection *conn, const struct wire_msg *msg)
{
	if (conn->closing) {
		return;
	}
	if (!channel_send(&conn->channel, msg)) {
		log_error("viewer is not reading (%zu bytes queued); disconnecting it",
			channel_queued(&conn->channel));
		/* Dropped at the next flush; nothing queued matters now. */
		buffer_consume(&conn->channel.out, channel_queued(&conn->channel));
		conn->closing = true;
		set_writable(conn, true);
	}
}

bool connection_send_encoded(struct rc_connection *conn, const uint8_t *bytes, size_t size)
{
	return !conn->closing && buffer_append(&conn->channel.out, bytes, size);
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
	set_writable(conn, true);
}

void connection_refuse(struct rc_connection *conn, const char *text)
{
	log_error("viewer sent bad data, disconnecting it: %s", text);
	/* Tell the peer why, then close once that is written. */
	buffer_consume(&conn->channel.in, buffer_size(&conn->channel.in));
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
	if (channel_queued(&conn->channel) == 0 && conn->closing) {
		connection_destroy(conn);
		return;
	}
	/* A window that could not send keeps its damage and its clock keeps
	 * ticking, so nothing needs waking when the queue drains. */
	set_writable(conn, channel_queued(&conn->channel) > 0);
}

void connection_close_now(struct rc_connection *conn, int wait_ms)
{
	/* Give a goodbye a moment to leave. */
	for (int waited = 0;; waited += 10) {
		if (channel_flush(&conn->channel) != CHANNEL_OK ||
			channel_queued(&conn->channel) == 0 || waited >= wait_ms) {
			break;
		}
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	connection_destroy(conn);
}

bool connection_may_send_frame(const struct rc_connection *conn, bool window_in_flight)
{
	/* A window with nothing in flight may always send one frame: else a
	 * window whose clock ticks just after a busy one's could find the
	 * budget spent at every tick and starve. */
	return conn->welcomed && !conn->closing &&
		channel_queued(&conn->channel) < OUT_HIGH_WATER &&
		(!window_in_flight || flow_can_send(&conn->flow, monotonic_usec()));
}

bool connection_may_send_bulk(const struct rc_connection *conn)
{
	return !conn->closing && channel_queued(&conn->channel) < TRANSFER_HIGH_WATER;
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
