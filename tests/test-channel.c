/*
 * Unit tests of the channel both programs read and flush through, over a
 * real socket pair.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "channel.h"
#include "check.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct seen {
	int count;
	uint32_t last_window;
	int stop_after;
};

static bool handle(void *data, const struct wire_msg *msg)
{
	struct seen *seen = data;
	seen->count++;
	seen->last_window = msg->close.window;
	return seen->count != seen->stop_after;
}

static void pair_sized(struct channel *a, struct channel *b, size_t limit)
{
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	channel_init(a, sv[0], sv[0], limit, limit);
	channel_init(b, sv[1], sv[1], limit, limit);
}

static void pair(struct channel *a, struct channel *b)
{
	pair_sized(a, b, 1 << 16);
}

/* Both ends past their first message: what follows travels in records. */
static void start(struct channel *a, struct channel *b)
{
	struct wire_msg first = {.type = WIRE_CLOSE, .close = {.window = 999}};
	struct seen seen = {0};
	char err[256];
	CHECK(channel_send(a, &first) && channel_send(b, &first));
	CHECK(channel_flush(a) == CHANNEL_OK && channel_flush(b) == CHANNEL_OK);
	CHECK(channel_read(a, WIRE_FROM_VIEWER, 4096, handle, &seen, err, sizeof(err)) ==
		CHANNEL_OK);
	CHECK(channel_read(b, WIRE_FROM_VIEWER, 4096, handle, &seen, err, sizeof(err)) ==
		CHANNEL_OK);
	CHECK(seen.count == 2 && a->in_records && b->out_records);
}

static void test_byte_by_byte(void)
{
	/* A message arriving a byte at a time is handed over once, whole: the
	 * first message as it is, and one after it in a record. */
	struct channel a, b;
	pair(&a, &b);
	struct wire_msg msg = {.type = WIRE_CLOSE, .close = {.window = 42}};
	for (int round = 0; round < 2; round++) {
		CHECK(channel_send(&a, &msg));
		struct buffer *wire = &a.wire;
		if (round == 1) {
			/* Make the record without writing it. */
			a.out_fd = -1;
			CHECK(channel_flush(&a) == CHANNEL_FAILED);
			a.out_fd = a.in_fd;
		}
		size_t size = buffer_size(wire);
		CHECK(size == (round == 0 ? 12u : 12u + CHANNEL_RECORD_HEADER));
		struct seen seen = {0};
		char err[256];
		for (size_t i = 0; i < size; i++) {
			CHECK(write(a.out_fd, buffer_head(wire) + i, 1) == 1);
			CHECK(channel_read(&b, WIRE_FROM_VIEWER, 4096, handle, &seen, err,
				      sizeof(err)) == CHANNEL_OK);
			CHECK(seen.count == (i + 1 == size ? 1 : 0));
		}
		buffer_consume(wire, size);
		a.plain = 0;
		CHECK(seen.last_window == 42);
	}
	channel_close(&a);
	channel_close(&b);
}

static void test_many_and_stop(void)
{
	/* Many messages in one read are handed over in order; a handler that
	 * stops leaves the rest for the next read. */
	struct channel a, b;
	pair(&a, &b);
	start(&a, &b);
	for (uint32_t i = 1; i <= 10; i++) {
		struct wire_msg msg = {.type = WIRE_CLOSE, .close = {.window = i}};
		CHECK(channel_send(&a, &msg));
	}
	CHECK(channel_flush(&a) == CHANNEL_OK && channel_queued(&a) == 0);
	struct seen seen = {.stop_after = 4};
	char err[256];
	CHECK(channel_read(&b, WIRE_FROM_VIEWER, 4096, handle, &seen, err, sizeof(err)) ==
		CHANNEL_OK);
	CHECK(seen.count == 4 && seen.last_window == 4);
	channel_close(&a);
	channel_close(&b);
}

/* Writes raw bytes to b after its first message and says what b made of
 * them. */
static enum channel_status feed(const uint8_t *bytes, size_t n, const char *want)
{
	struct channel a, b;
	pair(&a, &b);
	start(&a, &b);
	CHECK(write(a.out_fd, bytes, n) == (ssize_t)n);
	struct seen seen = {0};
	char err[256] = "";
	enum channel_status status =
		channel_read(&b, WIRE_FROM_VIEWER, 4096, handle, &seen, err, sizeof(err));
	if (want) {
		CHECK(strstr(err, want) != NULL && seen.count == 0);
		if (!strstr(err, want)) {
			fprintf(stderr, "  wanted \"%s\", got \"%s\"\n", want, err);
		}
	}
	channel_close(&a);
	channel_close(&b);
	return status;
}

static void test_refusals(void)
{
	struct channel a, b;
	pair(&a, &b);
	/* A peer's bad first message is refused with a reason. */
	static const uint8_t junk[8] = {0xff, 0xff, 0, 0, 0, 0, 0, 0};
	CHECK(write(a.out_fd, junk, sizeof(junk)) == (ssize_t)sizeof(junk));
	struct seen seen = {0};
	char err[256] = "";
	CHECK(channel_read(&b, WIRE_FROM_VIEWER, 4096, handle, &seen, err, sizeof(err)) ==
		CHANNEL_INVALID);
	CHECK(strstr(err, "unknown message type") != NULL && seen.count == 0);
	/* So are bad records, and messages in a class that does not carry
	 * them: a key press in bulk, clipboard data in control. */
	static const uint8_t bad_class[] = {9, 0, 12, 0, 0x05, 0x01, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0};
	static const uint8_t flags[] = {0, 1, 12, 0, 0x05, 0x01, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0};
	static const uint8_t empty[] = {0, 0, 0, 0};
	static const uint8_t too_long[] = {0, 0, 0x01, 0x40};
	static const uint8_t key_in_bulk[] = {CHANNEL_BULK, 0, 16, 0, 0x0d, 0x01, 0, 0, 8, 0, 0, 0,
		1, 0, 0, 0, 1, 0, 0, 0};
	static const uint8_t data_in_control[] = {CHANNEL_CONTROL, 0, 16, 0, 0x03, 0x03, 0, 0, 8, 0,
		0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
	CHECK(feed(bad_class, sizeof(bad_class), "bad record") == CHANNEL_INVALID);
	CHECK(feed(flags, sizeof(flags), "bad record") == CHANNEL_INVALID);
	CHECK(feed(empty, sizeof(empty), "bad record") == CHANNEL_INVALID);
	CHECK(feed(too_long, sizeof(too_long), "bad record") == CHANNEL_INVALID);
	CHECK(feed(key_in_bulk, sizeof(key_in_bulk), "key message in the bulk class") ==
		CHANNEL_INVALID);
	CHECK(feed(data_in_control, sizeof(data_in_control),
		      "transfer_data message in the control class") == CHANNEL_INVALID);
	/* An ack for more than was ever sent is a lie. */
	static const uint8_t ack[] = {CHANNEL_LINK, 0, 16, 0, 0x01, 0x04, 0, 0, 8, 0, 0, 0, 1, 0, 0,
		0, 0, 0, 0, 0};
	CHECK(feed(ack, sizeof(ack), "an ack for 1 bytes, of 0 sent") == CHANNEL_INVALID);
	/* An output queue refuses to grow past its limit (the first message
	 * goes ahead of the queues). */
	struct channel small;
	channel_init(&small, dup(a.out_fd), dup(a.out_fd), 64, 16);
	struct wire_msg msg = {.type = WIRE_CLOSE, .close = {.window = 1}};
	CHECK(channel_send(&small, &msg) && channel_send(&small, &msg) &&
		!channel_send(&small, &msg));
	channel_close(&small);
	/* The peer's end closing is told apart from an error. */
	channel_close(&a);
	CHECK(channel_read(&b, WIRE_FROM_VIEWER, 4096, handle, &seen, err, sizeof(err)) ==
		CHANNEL_CLOSED);
	channel_close(&b);
}

struct order {
	int count, key_at, data_at; /* when the key and the first data came */
};

static bool note_order(void *data, const struct wire_msg *msg)
{
	struct order *o = data;
	o->count++;
	if (msg->type == WIRE_KEY && !o->key_at) {
		o->key_at = o->count;
	}
	if (msg->type == WIRE_TRANSFER_DATA && !o->data_at) {
		o->data_at = o->count;
	}
	return true;
}

static void test_priority(void)
{
	/* A key pressed while a megabyte of clipboard data waits goes out
	 * behind at most what pacing let out before it: here the first 32 KiB
	 * of the data, less than one of its 64 KiB messages. */
	struct channel a, b;
	pair_sized(&a, &b, 2 << 20);
	start(&a, &b);
	static uint8_t chunk[WIRE_MAX_TRANSFER_CHUNK];
	for (int i = 0; i < 16; i++) {
		struct wire_msg data = {.type = WIRE_TRANSFER_DATA,
			.transfer_data = {.id = 1, .data = chunk, .len = sizeof(chunk)}};
		CHECK(channel_send(&a, &data));
	}
	CHECK(channel_flush(&a) == CHANNEL_OK);
	CHECK(a.pace.sent > 0 && a.pace.sent <= 48 * 1024 && channel_queued(&a) > 900 * 1024);
	struct wire_msg key = {.type = WIRE_KEY, .key = {.key = 30, .state = 1}};
	CHECK(channel_send(&a, &key));
	/* Nothing more goes until the peer has read and acknowledged. */
	uint64_t sent = a.pace.sent;
	CHECK(channel_flush(&a) == CHANNEL_OK && a.pace.sent == sent && !channel_blocked(&a));
	struct order order = {0};
	char err[256] = "";
	for (int round = 0; round < 200 && !order.data_at; round++) {
		CHECK(channel_read(&b, WIRE_FROM_VIEWER, 1 << 20, note_order, &order, err,
			      sizeof(err)) == CHANNEL_OK);
		CHECK(channel_flush(&b) == CHANNEL_OK);
		struct seen acks = {0};
		channel_read(&a, WIRE_FROM_SERVER, 4096, handle, &acks, err, sizeof(err));
		CHECK(acks.count == 0); /* acks never reach the handler */
		CHECK(channel_flush(&a) == CHANNEL_OK);
	}
	printf("key %d, first data %d, %llu bytes sent\n", order.key_at, order.data_at,
		(unsigned long long)a.pace.sent);
	CHECK(order.key_at == 1 && order.data_at == 2);
	channel_close(&a);
	channel_close(&b);
}

static bool take_keymap(void *data, const struct wire_msg *msg)
{
	uint32_t *size = data;
	*size = msg->type == WIRE_KEYMAP ? msg->keymap.size : 0;
	return true;
}

static void test_largest_message(void)
{
	/* The largest legal message fits an input buffer sized for it, however
	 * the reads fall: a keymap of WIRE_MAX_KEYMAP bytes, in records, read
	 * in 64 KiB chunks. */
	struct channel writer, reader;
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	channel_init(&writer, sv[0], sv[0], 1 << 16, 2 << 20);
	channel_init(&reader, sv[1], sv[1], WIRE_HEADER_SIZE + 4 + WIRE_MAX_KEYMAP, 64);
	start(&writer, &reader);
	char *text = malloc(WIRE_MAX_KEYMAP);
	memset(text, 'k', WIRE_MAX_KEYMAP);
	struct wire_msg msg = {.type = WIRE_KEYMAP,
		.keymap = {.format = 1, .data = text, .size = WIRE_MAX_KEYMAP}};
	CHECK(channel_send(&writer, &msg));
	writer.unpaced = true;
	uint32_t got = 0;
	char err[256] = "";
	enum channel_status status = CHANNEL_OK;
	while ((channel_queued(&writer) || !got) && status == CHANNEL_OK) {
		CHECK(channel_flush(&writer) == CHANNEL_OK);
		status = channel_read(&reader, WIRE_FROM_VIEWER, 64 * 1024, take_keymap, &got, err,
			sizeof(err));
	}
	if (status != CHANNEL_OK) {
		fprintf(stderr, "  refused: %s\n", err);
	}
	CHECK(status == CHANNEL_OK && got == WIRE_MAX_KEYMAP);
	free(text);
	channel_close(&writer);
	channel_close(&reader);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"byte_by_byte", test_byte_by_byte},
		{"many_and_stop", test_many_and_stop},
		{"refusals", test_refusals},
		{"largest_message", test_largest_message},
		{"priority", test_priority},
	};
	return check_main(argc, argv, cases, N(cases));
}
