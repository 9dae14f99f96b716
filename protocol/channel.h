/*
 * A channel: the byte stream between rcomp-run and rcomp-view, as either end
 * holds it. Two fds (often one socket), a bounded input buffer decoded into
 * messages, a bounded output queue written without blocking. Both programs
 * read and flush through here; what a message means is theirs.
 */
#ifndef RCOMP_CHANNEL_H
#define RCOMP_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "buffer.h"
#include "wire.h"

struct channel {
	int in_fd, out_fd; /* -1: closed */
	struct buffer in, out;
	uint64_t writes; /* write calls, for stats */
};

enum channel_status {
	CHANNEL_OK, /* as far as it could go now */
	CHANNEL_CLOSED, /* the peer closed its end */
	CHANNEL_FAILED, /* an I/O error; errno says which */
	CHANNEL_INVALID, /* the peer broke the protocol; err says how */
};

/* Takes the fds (set nonblocking here); the buffers hold at most the limits. */
void channel_init(struct channel *ch, int in_fd, int out_fd, size_t in_limit, size_t out_limit);
/* Closes the fds and frees the buffers. */
void channel_close(struct channel *ch);

/* Queues one message. False if the output queue would pass its limit: the
 * peer is not reading. */
bool channel_send(struct channel *ch, const struct wire_msg *msg);
static inline size_t channel_queued(const struct channel *ch)
{
	return buffer_size(&ch->out);
}

/* A message for the handler; it returns false to stop reading, after which
 * the channel is not touched again (the handler may have closed it). */
typedef bool (*channel_handler)(void *data, const struct wire_msg *msg);

/*
 * Reads once, up to chunk bytes, and hands every whole message to handle.
 * Bytes of a message not yet whole wait for the next read; a length past the
 * limits is refused from the header alone.
 */
enum channel_status channel_read(struct channel *ch, enum wire_sender from, size_t chunk,
	channel_handler handle, void *data, char *err, size_t err_size);
/* Writes what is queued until done or the fd would block. */
enum channel_status channel_flush(struct channel *ch);

/* Writes one small message straight to fd, first on its stream, where no
 * channel exists: a goodbye to a connection being refused. */
void channel_write_once(int fd, const struct wire_msg *msg);

#endif
