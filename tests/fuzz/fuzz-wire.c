/* libFuzzer harness: a byte stream from either peer through the real
 * decoder, message after message, as rcomp-run and rcomp-view read it. */
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

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
	}
	return 0;
}
