/*
 * Unit tests of the channel both programs read and flush through, over a
 * real socket pair.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static void pair(struct channel *a, struct channel *b)
{
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	channel_init(a, sv[0], sv[0], 1 << 16, 1 << 16);
	channel_init(b, sv[1], sv[1], 1 << 16, 1 << 16);
}

static void test_byte_by_byte(void)
{
	/* A message arriving a byte at a time is handed over once, whole. */
	struct channel a, b;
	pair(&a, &b);
	struct buffer out;
	buffer_init(&out, 64);
	struct wire_msg msg = {.type = WIRE_CLOSE, .close = {.window = 42}};
	CHECK(wire_encode(&out, &msg));
	struct seen seen = {0};
	char err[256];
	for (size_t i = 0; i < buffer_size(&out); i++) {
		CHECK(write(a.out_fd, buffer_head(&out) + i, 1) == 1);
		CHECK(channel_read(&b, WIRE_FROM_VIEWER, 4096, handle, &seen, err, sizeof(err)) ==
			CHANNEL_OK);
		CHECK(seen.count == (i + 1 == buffer_size(&out) ? 1 : 0));
	}
	CHECK(seen.last_window == 42);
	buffer_finish(&out);
	channel_close(&a);
	channel_close(&b);
}

static void test_many_and_stop(void)
{
	/* Many messages in one read are handed over in order; a handler that
	 * stops leaves the rest for the next read. */
	struct channel a, b;
	pair(&a, &b);
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

static void test_refusals(void)
{
	struct channel a, b;
	pair(&a, &b);
	/* A peer's bad message is refused with a reason. */
	static const uint8_t junk[8] = {0xff, 0xff, 0, 0, 0, 0, 0, 0};
	CHECK(write(a.out_fd, junk, sizeof(junk)) == (ssize_t)sizeof(junk));
	struct seen seen = {0};
	char err[256] = "";
	CHECK(channel_read(&b, WIRE_FROM_VIEWER, 4096, handle, &seen, err, sizeof(err)) ==
		CHANNEL_INVALID);
	CHECK(strstr(err, "unknown message type") != NULL && seen.count == 0);
	/* An output queue refuses to grow past its limit. */
	struct channel small;
	channel_init(&small, dup(a.out_fd), dup(a.out_fd), 64, 16);
	struct wire_msg msg = {.type = WIRE_CLOSE, .close = {.window = 1}};
	CHECK(channel_send(&small, &msg) && !channel_send(&small, &msg));
	channel_close(&small);
	/* The peer's end closing is told apart from an error. */
	channel_close(&a);
	CHECK(channel_read(&b, WIRE_FROM_VIEWER, 4096, handle, &seen, err, sizeof(err)) ==
		CHANNEL_CLOSED);
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
	 * the reads fall: a keymap of WIRE_MAX_KEYMAP bytes, read in 64 KiB
	 * chunks. */
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	struct channel reader;
	channel_init(&reader, sv[1], sv[1], WIRE_HEADER_SIZE + 4 + WIRE_MAX_KEYMAP, 64);
	char *text = malloc(WIRE_MAX_KEYMAP);
	memset(text, 'k', WIRE_MAX_KEYMAP);
	struct buffer out;
	buffer_init(&out, 2 << 20);
	struct wire_msg msg = {.type = WIRE_KEYMAP,
		.keymap = {.format = 1, .data = text, .size = WIRE_MAX_KEYMAP}};
	CHECK(wire_encode(&out, &msg));
	size_t sent = 0;
	uint32_t got = 0;
	char err[256] = "";
	enum channel_status status = CHANNEL_OK;
	while ((sent < buffer_size(&out) || !got) && status == CHANNEL_OK) {
		if (sent < buffer_size(&out)) {
			ssize_t n = write(sv[0], buffer_head(&out) + sent,
				buffer_size(&out) - sent < 40000 ? buffer_size(&out) - sent
								 : 40000);
			sent += n > 0 ? (size_t)n : 0;
		}
		status = channel_read(&reader, WIRE_FROM_VIEWER, 64 * 1024, take_keymap, &got, err,
			sizeof(err));
	}
	if (status != CHANNEL_OK) {
		fprintf(stderr, "  refused: %s\n", err);
	}
	CHECK(status == CHANNEL_OK && got == WIRE_MAX_KEYMAP);
	buffer_finish(&out);
	free(text);
	close(sv[0]);
	channel_close(&reader);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"byte_by_byte", test_byte_by_byte},
		{"many_and_stop", test_many_and_stop},
		{"refusals", test_refusals},
		{"largest_message", test_largest_message},
	};
	return check_main(argc, argv, cases, N(cases));
}
