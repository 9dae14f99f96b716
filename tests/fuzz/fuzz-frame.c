/* libFuzzer harness: a stream of server messages through validation, and
 * the frames and copy_rects in it applied to a window image as the viewer
 * does (codec_apply_frame, codec_copy), with the wire's own size limits. A
 * frame of another size starts a new image of that size, as a reset does.
 * The decompressor's scratch lives across inputs as the viewer's does, so a
 * frame that makes it grow beyond the frame's pixels shows under
 * -rss_limit_mb. */
#include <stdint.h>
#include <stdlib.h>

#include "codec.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct decompressor dec;
	static bool ready;
	if (!ready) {
		ready = decompressor_init(&dec);
	}
	struct image img = {0};
	struct wire_msg msg;
	size_t used;
	char err[256];
	while (wire_decode(WIRE_FROM_SERVER, data, size, &msg, &used, err, sizeof(err)) ==
		WIRE_OK) {
		data += used;
		size -= used;
		if (msg.type == WIRE_COPY_RECT) {
			struct wire_rect src = {msg.copy_rect.x, msg.copy_rect.y,
				msg.copy_rect.width, msg.copy_rect.height};
			if (img.pixels &&
				codec_copy_fits(&img, src, msg.copy_rect.dx, msg.copy_rect.dy)) {
				codec_copy(&img, src, msg.copy_rect.dx, msg.copy_rect.dy);
			}
			continue;
		}
		if (msg.type != WIRE_FRAME || msg.frame.codec != WIRE_CODEC_XOR) {
			continue;
		}
		if (msg.frame.width != img.width || msg.frame.height != img.height) {
			/* calloc maps big images lazily: only the rectangles'
			 * pages are touched. */
			free(img.pixels);
			img = (struct image){calloc((size_t)msg.frame.width * msg.frame.height + 1,
						     4),
				msg.frame.width, msg.frame.height, msg.frame.width};
			if (!img.pixels) {
				break;
			}
		}
		if (!codec_apply_frame(&dec, &img, &msg.frame, err, sizeof(err))) {
			break;
		}
	}
	free(img.pixels);
	return 0;
}
