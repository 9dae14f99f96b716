/* libFuzzer harness: a byte stream from either peer through the real
 * decoder, message after message, and through a real channel (the first
 * message as it is, then records of each class), as rcomp-run and
 * rcomp-view read it. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "channel.h"
#include "wire.h"

static bool any(void *data, const struct wire_msg *msg)
{
	return true;
}

static void through_channel(const uint8_t *data, size_t size, enum wire_sender from)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		return;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	struct channel ch;
	channel_init(&ch, sv[1], sv[1], 1 << 20, 1 << 16);
	size_t pos = 0;
	for (;;) {
		if (pos < size) {
			ssize_t n = write(sv[0], data + pos, size - pos);
			pos += n > 0 ? (size_t)n : 0;
			if (pos == size) {
				shutdown(sv[0], SHUT_WR);
			}
		} else if (size == 0) {
			shutdown(sv[0], SHUT_WR);
		}
		char err[256];
		if (channel_read(&ch, from, 64 * 1024, any, NULL, err, sizeof(err)) != CHANNEL_OK) {
			break;
		}
	}
	channel_close(&ch);
	close(sv[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int sender = WIRE_FROM_VIEWER; sender <= WIRE_FROM_SERVER; sender++) {
		size_t pos = 0;
		while (pos < size) {
			struct wire_msg msg;
			size_t used = 0;
			char err[256];
			enum wire_status status = wire_decode((enum wire_sender)sender, data + pos,
				size - pos, &msg, &used, err, sizeof(err));
			if (status != WIRE_OK) {
				break;
			}
			/* Touch what the receivers read. */
			if (msg.type == WIRE_FRAME && msg.frame.nrects > 0) {
				struct wire_rect r =
					wire_get_rect(msg.frame.rects, msg.frame.nrects - 1);
				(void)r;
			}
			if (msg.type == WIRE_KEYBOARD_ENTER && msg.keyboard_enter.nkeys > 0) {
				(void)wire_get_key(msg.keyboard_enter.keys,
					msg.keyboard_enter.nkeys - 1);
			}
			pos += used;
		}
		through_channel(data, size, (enum wire_sender)sender);
	}
	return 0;
}
