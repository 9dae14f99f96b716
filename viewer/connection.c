/* The viewer's end of the channel; see connection.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "connection.h"
#include "log.h"
#include "viewer.h"

#define IN_LIMIT ((size_t)WIRE_HEADER_SIZE + WIRE_MAX_BODY)
#define OUT_LIMIT ((size_t)8 << 20)
#define READ_CHUNK (256 * 1024)

void connection_open(struct rv_viewer *viewer, int in_fd, int out_fd)
{
	struct rv_connection *conn = &viewer->connection;
	channel_init(&conn->channel, in_fd, out_fd, IN_LIMIT, OUT_LIMIT);
	conn->connected = true;
	conn->write_failed = false;
}

void connection_close(struct rv_viewer *viewer)
{
	struct rv_connection *conn = &viewer->connection;
	if (conn->connected) {
		channel_close(&conn->channel);
	}
	conn->connected = conn->connecting = conn->welcomed = false;
}

void connection_send(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_connection *conn = &viewer->connection;
	/* Nothing but the hello goes to a server that has not answered it: on
	 * TCP it may be anyone until then. What the server must know of us is
	 * sent once it welcomes us. */
	if (!viewer->running || !conn->connected || (!conn->welcomed && msg->type != WIRE_HELLO)) {
		return;
	}
	if (!channel_send(&conn->channel, msg)) {
		log_error("the server is not reading input (%zu bytes queued); disconnecting",
			channel_queued(&conn->channel));
		viewer->running = false;
		viewer->exit_code = 1;
	}
}

void connection_fail(struct rv_viewer *viewer, const char *fmt, ...)
{
	char text[512];
	va_list args;
	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	log_error("the server sent bad data, disconnecting: %s", text);
	viewer->running = false;
	viewer->exit_code = 1;
}

enum channel_status connection_read(struct rv_viewer *viewer, channel_handler handle, char *err,
	size_t err_size)
{
	return channel_read(&viewer->connection.channel, WIRE_FROM_SERVER, READ_CHUNK, handle,
		viewer, err, err_size);
}

void connection_flush(struct rv_viewer *viewer)
{
	struct rv_connection *conn = &viewer->connection;
	if (!conn->write_failed) {
		enum channel_status status = channel_flush(&conn->channel);
		if (status == CHANNEL_OK) {
			return;
		}
		/* The server may have closed after saying why (a goodbye still
		 * unread): stop writing and let reading tell. */
		log_debug("writing to the server failed: %s",
			status == CHANNEL_FAILED ? strerror(errno) : "closed");
		conn->write_failed = true;
	}
	channel_drop_output(&conn->channel);
}
