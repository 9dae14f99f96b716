/*
 * A channel: the byte stream between rcomp-run and rcomp-view, as either end
 * holds it. Two fds (often one socket), bounded input decoded into messages,
 * and bounded output queued by class and written without blocking. Both
 * programs read and flush through here; what a message means is theirs.
 *
 * After the first message each way (hello, welcome or a refusal), every
 * byte travels in records of one class, at most CHANNEL_RECORD_MAX bytes,
 * so the writer can put a key press between two pieces of a frame or a
 * paste. The writer takes the highest class that has something queued,
 * record by record: a lower class never delays a higher one by more than
 * one record, except that bulk keeps a sixteenth of the bytes so a paste
 * always finishes. Writes are paced (pace.h): the peer acknowledges what it
 * read, and about one round trip of data is ever unacknowledged.
 */
#ifndef RCOMP_CHANNEL_H
#define RCOMP_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "buffer.h"
#include "pace.h"
#include "wire.h"

enum channel_class {
	CHANNEL_CONTROL = 0, /* control, input and acks */
	CHANNEL_AUDIO = 1, /* sound */
	CHANNEL_FOCUS = 2, /* frames of the window with local keyboard focus */
	CHANNEL_FRAMES = 3, /* frames of the other windows */
	CHANNEL_BULK = 4, /* clipboard data */
	/* link_acks alone: first, and never held back by pacing, since they
	 * are what lets the other side's pacing go on */
	CHANNEL_LINK = 5,
	CHANNEL_CLASSES = 6,
};

/* Each message's carrier (its row of messages.h): the class it is sent on,
 * and the classes that may carry it (a bit each). */
#define CHANNEL_SENT_CONTROL CHANNEL_CONTROL
#define CHANNEL_SENT_WINDOW CHANNEL_CONTROL
#define CHANNEL_SENT_FRAMES CHANNEL_FRAMES
#define CHANNEL_SENT_BULK CHANNEL_BULK
#define CHANNEL_SENT_LINK CHANNEL_LINK
#define CHANNEL_SENT_AUDIO CHANNEL_AUDIO
#define CHANNEL_CARRIES_CONTROL (1u << CHANNEL_CONTROL)
#define CHANNEL_CARRIES_WINDOW (1u << CHANNEL_CONTROL | 1u << CHANNEL_FOCUS | 1u << CHANNEL_FRAMES)
#define CHANNEL_CARRIES_FRAMES (1u << CHANNEL_FOCUS | 1u << CHANNEL_FRAMES)
#define CHANNEL_CARRIES_BULK (1u << CHANNEL_BULK)
#define CHANNEL_CARRIES_LINK (1u << CHANNEL_LINK)
#define CHANNEL_CARRIES_AUDIO (1u << CHANNEL_AUDIO)
/* Whether a record class may carry a message of this type (its row's
 * carrier); one that may not is a protocol error. */
bool channel_carries(enum channel_class cls, uint16_t type);
/* What one side reads between two link_acks it sends. */
#define CHANNEL_ACK_BYTES 1024

#define CHANNEL_RECORD_HEADER 4
#define CHANNEL_RECORD_MAX 16384

struct channel {
	int in_fd, out_fd; /* -1: closed */
	uint64_t serial; /* tells this channel's marks from another's */
	bool in_records, out_records; /* past the first message */
	struct buffer raw; /* bytes read, not yet split into classes */
	struct buffer in[CHANNEL_CLASSES]; /* each class's messages, in order */
	struct buffer out[CHANNEL_CLASSES];
	uint64_t added[CHANNEL_CLASSES], taken[CHANNEL_CLASSES]; /* bytes, ever */
	struct buffer wire; /* records made and not yet written */
	size_t plain; /* bytes at the front of wire that are not records */
	struct pace pace;
	uint64_t received, acked; /* record bytes read; the count last acknowledged */
	uint64_t bulk_credit;
	bool blocked; /* the last write would have blocked */
	bool unpaced; /* closing: write what is queued regardless */
	uint64_t writes; /* write calls, for stats */
	uint64_t written; /* bytes written, ever */
};

enum channel_status {
	CHANNEL_OK, /* as far as it could go now */
	CHANNEL_CLOSED, /* the peer closed its end */
	CHANNEL_FAILED, /* an I/O error; errno says which */
	CHANNEL_INVALID, /* the peer broke the protocol; err says how */
};

/* Takes the fds (set nonblocking here). in_limit bounds each class's input
 * (the largest message this side accepts), out_limit each class's queue. */
void channel_init(struct channel *ch, int in_fd, int out_fd, size_t in_limit, size_t out_limit);
/* The peer's first message was read before the channel was made (a hello
 * the listener checked): all input is records. */
static inline void channel_first_read(struct channel *ch)
{
	ch->in_records = true;
}
/* A class's queue limit other than out_limit. */
static inline void channel_set_out_limit(struct channel *ch, enum channel_class cls, size_t limit)
{
	ch->out[cls].limit = limit;
}
/* Closes the fds and frees the buffers. */
void channel_close(struct channel *ch);

/* Queues one message in its class: clipboard data in bulk, frames in
 * frames, the rest in control (the first message ever goes first, as it
 * is). False if the queue would pass its limit: the peer is not reading. */
bool channel_send(struct channel *ch, const struct wire_msg *msg);
/* Queues one message in the given class, which must carry it. */
bool channel_send_to(struct channel *ch, enum channel_class cls, const struct wire_msg *msg);
/* Queues messages already encoded, in a class that carries them. */
bool channel_append(struct channel *ch, enum channel_class cls, const uint8_t *bytes, size_t n);
size_t channel_queued(const struct channel *ch);
static inline size_t channel_queued_class(const struct channel *ch, enum channel_class cls)
{
	return buffer_size(&ch->out[cls]);
}
/* A place in a class's queue: the end of something queued there. A mark
 * of another channel (or none) counts as taken. */
struct channel_mark {
	uint64_t serial;
	enum channel_class cls;
	uint64_t end; /* the class's added[] count after it */
};
static inline struct channel_mark channel_mark(const struct channel *ch, enum channel_class cls)
{
	return (struct channel_mark){ch->serial, cls, ch->added[cls]};
}
/* Whether everything queued up to the mark has gone into records. */
static inline bool channel_taken(const struct channel *ch, struct channel_mark mark)
{
	return mark.serial != ch->serial || ch->taken[mark.cls] >= mark.end;
}
/* Drops all output (a peer being dropped) or all input. */
void channel_drop_output(struct channel *ch);
void channel_drop_input(struct channel *ch);
/* Whether the fd must be polled for writing: the kernel refused bytes. Data
 * held back by pacing goes when an ack arrives, on a read. */
static inline bool channel_blocked(const struct channel *ch)
{
	return ch->blocked && (channel_queued(ch) > 0);
}

/* A message for the handler; it returns false to stop reading, after which
 * the channel is not touched again (the handler may have closed it). */
typedef bool (*channel_handler)(void *data, const struct wire_msg *msg);

/*
 * Reads once, up to chunk bytes, and hands every whole message to handle.
 * Bytes of a message not yet whole wait for the next read; a length past the
 * limits, a bad record or a message in the wrong class is refused at once.
 * The peer's acks (link_ack) are taken here and never reach handle.
 */
enum channel_status channel_read(struct channel *ch, enum wire_sender from, size_t chunk,
	channel_handler handle, void *data, char *err, size_t err_size);
/* Writes what is queued, as pacing allows, until done or the fd would block;
 * acknowledges what was read. */
enum channel_status channel_flush(struct channel *ch);

/* The pacing state in a line, for --stats: the link's rate and minimum
 * round trip, bytes unacknowledged and their limit, bytes queued. */
void channel_describe(const struct channel *ch, char *out, size_t size);

/*
 * The framing, for a transport that carries classes apart (lanes.h). Each
 * returns the size of the unit at the front of p: the first message (its
 * header and body), or one record (its header and bytes), with *cls its
 * class. 0: more bytes are needed to tell; SIZE_MAX: not a valid unit.
 */
size_t channel_first_size(const uint8_t *p, size_t n);
size_t channel_record_size(const uint8_t *p, size_t n, enum channel_class *cls);

/* Writes one small message straight to fd, first on its stream, where no
 * channel exists: a goodbye to a connection being refused. */
void channel_write_once(int fd, const struct wire_msg *msg);
/* The goodbye that tells a connection why it ends before it has a channel
 * (a refusal, a session that ended, none to attach to), the same way: one
 * write of one message. */
void channel_write_goodbye(int fd, enum wire_goodbye_reason reason, int32_t status,
	const char *text);

#endif
