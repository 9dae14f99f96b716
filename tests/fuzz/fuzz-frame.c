/* libFuzzer harness: frame messages through validation, decompression and
 * the XOR diff applied to a window image of the frame's size, as the viewer
 * does them (codec_apply_frame), with the wire's own size limits. The
 * decompressor's scratch lives across inputs as the viewer's does, so a frame
 * that makes it grow beyond the frame's pixels shows under -rss_limit_mb. */
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
	struct wire_msg msg;
	size_t used;
	char err[256];
	if (wire_decode(WIRE_FROM_SERVER, data, size, &msg, &used, err, sizeof(err)) != WIRE_OK ||
		msg.type != WIRE_FRAME || msg.frame.codec != WIRE_CODEC_XOR) {
		return 0;
	}
	/* calloc maps big images lazily: only the rectangles' pages are touched. */
	uint32_t *pixels = calloc((size_t)msg.frame.width * msg.frame.height + 1, 4);
	if (pixels) {
		struct image img = {pixels, msg.frame.width, msg.frame.height, msg.frame.width};
		(void)codec_apply_frame(&dec, &img, &msg.frame, err, sizeof(err));
	}
	free(pixels);
	return 0;
}
