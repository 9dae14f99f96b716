/* Buffered, bounded, nonblocking message I/O; see channel.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "channel.h"

static void set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0 && !(flags & O_NONBLOCK)) {
		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	}
}

void channel_init(struct channel *ch, int in_fd, int out_fd, size_t in_limit, size_t out_limit)
{
	ch->in_fd = in_fd;
	ch->out_fd = out_fd;
	set_nonblocking(in_fd);
	if (out_fd != in_fd) {
		set_nonblocking(out_fd);
	}
	buffer_init(&ch->in, in_limit);
	buffer_init(&ch->out, out_limit);
}

void channel_close(struct channel *ch)
{
	if (ch->in_fd >= 0) {
		close(ch->in_fd);
	}
	if (ch->out_fd >= 0 && ch->out_fd != ch->in_fd) {
		close(ch->out_fd);
	}
	ch->in_fd = ch->out_fd = -1;
	buffer_finish(&ch->in);
	buffer_finish(&ch->out);
}

bool channel_send(struct channel *ch, const struct wire_msg *msg)
{
	return wire_encode(&ch->out, msg);
}

enum channel_status channel_read(struct channel *ch, enum wire_sender from, size_t chunk,
	channel_handler handle, void *data, char *err, size_t err_size)
{
	/* Never past the limit: what is buffered is the front of one message
	 * the header said fits, so there is room for the rest of it. */
	size_t room = ch->in.limit - buffer_size(&ch->in);
	if (chunk > room) {
		chunk = room;
	}
	uint8_t *dst = chunk ? buffer_reserve(&ch->in, chunk) : NULL;
	if (!dst) {
		/* Cannot happen with a valid stream: decoding bounds every message
		 * below the input limit. */
		snprintf(err, err_size, "a message larger than any allowed");
		return CHANNEL_INVALID;
	}
	ssize_t n = read(ch->in_fd, dst, chunk);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		return CHANNEL_OK;
	}
	if (n <= 0) {
		return n == 0 ? CHANNEL_CLOSED : CHANNEL_FAILED;
	}
	buffer_commit(&ch->in, (size_t)n);
	for (;;) {
		struct wire_msg msg;
		size_t used = 0;
		enum wire_status status = wire_decode(from, buffer_head(&ch->in),
			buffer_size(&ch->in), &msg, &used, err, err_size);
		if (status == WIRE_INCOMPLETE) {
			return CHANNEL_OK;
		}
		if (status == WIRE_INVALID) {
			return CHANNEL_INVALID;
		}
		if (!handle(data, &msg)) {
			return CHANNEL_OK;
		}
		buffer_consume(&ch->in, used);
	}
}

enum channel_status channel_flush(struct channel *ch)
{
	while (buffer_size(&ch->out) > 0) {
		ssize_t n = write(ch->out_fd, buffer_head(&ch->out), buffer_size(&ch->out));
		ch->writes++;
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			return CHANNEL_OK;
		}
		if (n <= 0) {
			return n == 0 ? CHANNEL_CLOSED : CHANNEL_FAILED;
		}
		buffer_consume(&ch->out, (size_t)n);
	}
	return CHANNEL_OK;
}

void channel_write_once(int fd, const struct wire_msg *msg)
{
	struct buffer out;
	buffer_init(&out, 4096);
	if (wire_encode(&out, msg)) {
		/* Small and first on its stream: it fits the pipe or socket. */
		ssize_t n = write(fd, buffer_head(&out), buffer_size(&out));
		(void)n;
	}
	buffer_finish(&out);
}
