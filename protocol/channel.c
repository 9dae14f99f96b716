/* Buffered, bounded, nonblocking, prioritized message I/O; see channel.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "monotonic.h"

/* Bytes read and not yet split: a read's worth and a partial record. */
#define RAW_LIMIT (256 * 1024)
/* Records made per write, at most: about one write per frame on fast links. */
#define WIRE_BATCH (4u << 20)
/* The reader acknowledges once this much arrived since its last ack. */
/* Bulk gets one record in this many while higher classes are busy. */
#define BULK_SHARE 16

static const char *const class_names[CHANNEL_CLASSES] = {"control", "audio", "focus", "frames",
	"bulk", "link"};

static void set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0 && !(flags & O_NONBLOCK)) {
		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	}
}

void channel_init(struct channel *ch, int in_fd, int out_fd, size_t in_limit, size_t out_limit)
{
	static uint64_t serials;
	*ch = (struct channel){.in_fd = in_fd, .out_fd = out_fd, .serial = ++serials};
	set_nonblocking(in_fd);
	if (out_fd != in_fd) {
		set_nonblocking(out_fd);
	}
	buffer_init(&ch->raw, RAW_LIMIT);
	for (int i = 0; i < CHANNEL_CLASSES; i++) {
		buffer_init(&ch->in[i], in_limit);
		buffer_init(&ch->out[i], out_limit);
	}
	buffer_init(&ch->wire,
		WIRE_BATCH + 2 * (CHANNEL_RECORD_HEADER + CHANNEL_RECORD_MAX) + WIRE_HEADER_SIZE +
			WIRE_MAX_BODY);
	pace_init(&ch->pace);
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
	buffer_finish(&ch->raw);
	for (int i = 0; i < CHANNEL_CLASSES; i++) {
		buffer_finish(&ch->in[i]);
		buffer_finish(&ch->out[i]);
	}
	buffer_finish(&ch->wire);
}

size_t channel_queued(const struct channel *ch)
{
	size_t n = buffer_size(&ch->wire);
	for (int i = 0; i < CHANNEL_CLASSES; i++) {
		n += buffer_size(&ch->out[i]);
	}
	return n;
}

/* The class a message is sent on, from its row's carrier (messages.h). */
static enum channel_class class_of(enum wire_type type)
{
	switch (type) {
#define X(NAME, name, code, sender, fixed, carrier, check) \
	case WIRE_##NAME: \
		return CHANNEL_SENT_##carrier;
		WIRE_MESSAGES(X)
#undef X
	}
	return CHANNEL_CONTROL;
}

bool channel_send(struct channel *ch, const struct wire_msg *msg)
{
	return channel_send_to(ch, class_of(msg->type), msg);
}

bool channel_send_to(struct channel *ch, enum channel_class cls, const struct wire_msg *msg)
{
	if (!ch->out_records) {
		/* The first message goes as it is: a peer of any version can read
		 * a hello, a welcome or a refusal. */
		size_t before = buffer_size(&ch->wire);
		if (!wire_encode(&ch->wire, msg)) {
			return false;
		}
		ch->plain += buffer_size(&ch->wire) - before;
		ch->out_records = true;
		return true;
	}
	size_t before = buffer_size(&ch->out[cls]);
	if (!wire_encode(&ch->out[cls], msg)) {
		return false;
	}
	ch->added[cls] += buffer_size(&ch->out[cls]) - before;
	return true;
}

bool channel_append(struct channel *ch, enum channel_class cls, const uint8_t *bytes, size_t n)
{
	if (!ch->out_records || !buffer_append(&ch->out[cls], bytes, n)) {
		return false;
	}
	ch->added[cls] += n;
	return true;
}

void channel_drop_output(struct channel *ch)
{
	for (int i = 0; i < CHANNEL_CLASSES; i++) {
		ch->taken[i] += buffer_size(&ch->out[i]);
		buffer_consume(&ch->out[i], buffer_size(&ch->out[i]));
	}
	buffer_consume(&ch->wire, buffer_size(&ch->wire));
	ch->plain = 0;
}

void channel_drop_input(struct channel *ch)
{
	buffer_consume(&ch->raw, buffer_size(&ch->raw));
	for (int i = 0; i < CHANNEL_CLASSES; i++) {
		buffer_consume(&ch->in[i], buffer_size(&ch->in[i]));
	}
}

/* Which messages each class carries; anything else is a protocol error.
 * A window's own messages may follow its frames, so that they stay in order
 * with them. */
bool channel_carries(enum channel_class cls, uint16_t type)
{
	switch (type) {
#define X(NAME, name, code, sender, fixed, carrier, check) \
	case WIRE_##NAME: \
		return (CHANNEL_CARRIES_##carrier >> cls) & 1;
		WIRE_MESSAGES(X)
#undef X
	}
	return cls == CHANNEL_CONTROL; /* an unknown type: the decoder refuses it */
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* Hands over the whole messages of one class. 1: go on; 0: the handler
 * stopped; -1: invalid. */
static int deliver(struct channel *ch, enum channel_class cls, enum wire_sender from,
	channel_handler handle, void *data, char *err, size_t err_size)
{
	struct buffer *in = &ch->in[cls];
	for (;;) {
		if (buffer_size(in) >= 2 && ch->in_records &&
			!channel_carries(cls, get16(buffer_head(in)))) {
			snprintf(err, err_size, "a %s message in the %s class",
				wire_type_name(get16(buffer_head(in))), class_names[cls]);
			return -1;
		}
		struct wire_msg msg;
		size_t used = 0;
		enum wire_status status = wire_decode(from, buffer_head(in), buffer_size(in), &msg,
			&used, err, err_size);
		if (status == WIRE_INCOMPLETE) {
			return 1;
		}
		if (status == WIRE_INVALID) {
			return -1;
		}
		if (msg.type == WIRE_LINK_ACK) {
			if (!pace_acked(&ch->pace, msg.link_ack.received, monotonic_usec())) {
				snprintf(err, err_size, "an ack for %llu bytes, of %llu sent",
					(unsigned long long)msg.link_ack.received,
					(unsigned long long)ch->pace.sent);
				return -1;
			}
		} else if (!handle(data, &msg)) {
			return 0;
		}
		buffer_consume(in, used);
		if (!ch->in_records) {
			ch->in_records = true;
			return 1;
		}
	}
}

/* Splits raw bytes into the class buffers, delivering as it goes. */
static enum channel_status split(struct channel *ch, enum wire_sender from, channel_handler handle,
	void *data, char *err, size_t err_size)
{
	struct buffer *raw = &ch->raw;
	if (!ch->in_records) {
		/* The first message, as it is. */
		size_t n = buffer_size(raw);
		struct buffer *first = &ch->in[CHANNEL_CONTROL];
		if (!buffer_append(first, buffer_head(raw), n)) {
			snprintf(err, err_size, "a first message larger than any allowed");
			return CHANNEL_INVALID;
		}
		buffer_consume(raw, n);
		int r = deliver(ch, CHANNEL_CONTROL, from, handle, data, err, err_size);
		if (r <= 0) {
			return r < 0 ? CHANNEL_INVALID : CHANNEL_OK;
		}
		if (!ch->in_records) {
			return CHANNEL_OK;
		}
		/* What followed the first message is records: give it back. */
		size_t rest = buffer_size(first);
		uint8_t *dst = buffer_reserve(raw, rest);
		if (!dst) {
			snprintf(err, err_size, "too much after the first message");
			return CHANNEL_INVALID;
		}
		memcpy(dst, buffer_head(first), rest);
		buffer_commit(raw, rest);
		buffer_consume(first, rest);
	}
	while (buffer_size(raw) >= CHANNEL_RECORD_HEADER) {
		const uint8_t *h = buffer_head(raw);
		uint32_t cls = h[0], flags = h[1], len = get16(h + 2);
		if (cls >= CHANNEL_CLASSES || flags != 0 || len == 0 || len > CHANNEL_RECORD_MAX) {
			snprintf(err, err_size, "a bad record (class %u, flags %u, %u bytes)", cls,
				flags, len);
			return CHANNEL_INVALID;
		}
		if (buffer_size(raw) < CHANNEL_RECORD_HEADER + len) {
			break;
		}
		if (!buffer_append(&ch->in[cls], h + CHANNEL_RECORD_HEADER, len)) {
			snprintf(err, err_size, "a %s message larger than any allowed",
				class_names[cls]);
			return CHANNEL_INVALID;
		}
		buffer_consume(raw, CHANNEL_RECORD_HEADER + len);
		ch->received += CHANNEL_RECORD_HEADER + len;
		int r = deliver(ch, (enum channel_class)cls, from, handle, data, err, err_size);
		if (r <= 0) {
			return r < 0 ? CHANNEL_INVALID : CHANNEL_OK;
		}
	}
	return CHANNEL_OK;
}

size_t channel_first_size(const uint8_t *p, size_t n)
{
	if (n < WIRE_HEADER_SIZE) {
		return 0;
	}
	uint32_t body =
		(uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
	return body > WIRE_MAX_BODY ? SIZE_MAX : WIRE_HEADER_SIZE + (size_t)body;
}

size_t channel_record_size(const uint8_t *p, size_t n, enum channel_class *cls)
{
	if (n < CHANNEL_RECORD_HEADER) {
		return 0;
	}
	uint32_t len = get16(p + 2);
	if (p[0] >= CHANNEL_CLASSES || p[1] != 0 || len == 0 || len > CHANNEL_RECORD_MAX) {
		return SIZE_MAX;
	}
	*cls = (enum channel_class)p[0];
	return CHANNEL_RECORD_HEADER + len;
}

enum channel_status channel_read(struct channel *ch, enum wire_sender from, size_t chunk,
	channel_handler handle, void *data, char *err, size_t err_size)
{
	size_t room = ch->raw.limit - buffer_size(&ch->raw);
	if (chunk > room) {
		chunk = room;
	}
	uint8_t *dst = chunk ? buffer_reserve(&ch->raw, chunk) : NULL;
	if (!dst) {
		/* Cannot happen with a valid stream: split() leaves less than a
		 * record in raw. */
		snprintf(err, err_size, "a record larger than any allowed");
		return CHANNEL_INVALID;
	}
	ssize_t n = read(ch->in_fd, dst, chunk);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		return CHANNEL_OK;
	}
	if (n <= 0) {
		return n == 0 ? CHANNEL_CLOSED : CHANNEL_FAILED;
	}
	buffer_commit(&ch->raw, (size_t)n);
	return split(ch, from, handle, data, err, err_size);
}

/* The class the next record comes from, or -1. */
static int pick(struct channel *ch, uint32_t chunk)
{
	if (buffer_size(&ch->out[CHANNEL_LINK]) > 0) {
		return CHANNEL_LINK;
	}
	bool bulk = buffer_size(&ch->out[CHANNEL_BULK]) > 0;
	if (bulk && ch->bulk_credit >= (uint64_t)(BULK_SHARE - 1) * chunk) {
		return CHANNEL_BULK;
	}
	for (int i = 0; i < CHANNEL_BULK; i++) {
		if (buffer_size(&ch->out[i]) > 0) {
			return i;
		}
	}
	return bulk ? CHANNEL_BULK : -1;
}

/* Makes records from the queues, highest class first, as pacing allows. */
static void make_records(struct channel *ch)
{
	uint64_t budget = ch->unpaced ? UINT64_MAX : pace_budget(&ch->pace);
	uint32_t chunk = pace_chunk(&ch->pace);
	while (buffer_size(&ch->wire) < WIRE_BATCH) {
		int cls = pick(ch, chunk);
		if (cls < 0 || (budget == 0 && cls != CHANNEL_LINK)) {
			break;
		}
		struct buffer *q = &ch->out[cls];
		size_t n = buffer_size(q) < chunk ? buffer_size(q) : chunk;
		uint8_t *dst = buffer_reserve(&ch->wire, CHANNEL_RECORD_HEADER + n);
		if (!dst) {
			break;
		}
		dst[0] = (uint8_t)cls;
		dst[1] = 0;
		dst[2] = (uint8_t)(n & 0xff);
		dst[3] = (uint8_t)(n >> 8);
		memcpy(dst + CHANNEL_RECORD_HEADER, buffer_head(q), n);
		buffer_commit(&ch->wire, CHANNEL_RECORD_HEADER + n);
		buffer_consume(q, n);
		ch->taken[cls] += n;
		if (cls == CHANNEL_BULK) {
			ch->bulk_credit = 0;
		} else if (buffer_size(&ch->out[CHANNEL_BULK]) > 0) {
			ch->bulk_credit += n;
		}
		uint64_t cost = CHANNEL_RECORD_HEADER + n;
		if (cls != CHANNEL_LINK) {
			budget = budget > cost ? budget - cost : 0;
		}
	}
}

enum channel_status channel_flush(struct channel *ch)
{
	if (ch->out_records && ch->received - ch->acked >= CHANNEL_ACK_BYTES) {
		struct wire_msg ack = {.type = WIRE_LINK_ACK,
			.link_ack = {.received = ch->received}};
		if (channel_send(ch, &ack)) {
			ch->acked = ch->received;
		}
	}
	ch->blocked = false;
	for (;;) {
		if (buffer_size(&ch->wire) == 0) {
			make_records(ch);
		}
		if (buffer_size(&ch->wire) == 0) {
			return CHANNEL_OK;
		}
		ssize_t n = write(ch->out_fd, buffer_head(&ch->wire), buffer_size(&ch->wire));
		ch->writes++;
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			ch->blocked = true;
			return CHANNEL_OK;
		}
		if (n <= 0) {
			return n == 0 ? CHANNEL_CLOSED : CHANNEL_FAILED;
		}
		ch->written += (uint64_t)n;
		size_t plain = (size_t)n < ch->plain ? (size_t)n : ch->plain;
		ch->plain -= plain;
		buffer_consume(&ch->wire, (size_t)n);
		pace_wrote(&ch->pace, (uint64_t)n - plain, channel_queued(ch) > 0,
			monotonic_usec());
	}
}

void channel_describe(const struct channel *ch, char *out, size_t size)
{
	const struct pace *p = &ch->pace;
	snprintf(out, size,
		"link %.2f Mbit/s, min rtt %.1f ms, unacked %.1f of %.1f KiB, queued %.1f KiB",
		(double)pace_rate(p) * 8 / 1e6, (double)p->min_rtt_us / 1000,
		(double)pace_in_flight(p) / 1024, (double)pace_limit(p) / 1024,
		(double)channel_queued(ch) / 1024);
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

void channel_write_goodbye(int fd, enum wire_goodbye_reason reason, int32_t status,
	const char *text)
{
	struct wire_msg msg = {
		.type = WIRE_GOODBYE,
		.goodbye = {.reason = reason,
			.status = status,
			.text = text,
			.text_len = (uint32_t)strnlen(text, WIRE_MAX_TEXT)},
	};
	channel_write_once(fd, &msg);
}
