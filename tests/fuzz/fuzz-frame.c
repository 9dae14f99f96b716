/* libFuzzer harness: frame messages through validation, decompression and
 * the XOR diff applied to a window image, as the viewer does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "wire.h"

/* Keep images small so each input runs fast; the limits are wire.c's. */
#define FUZZ_MAX_PIXELS (256 * 256)

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
		msg.type != WIRE_FRAME || msg.frame.codec != WIRE_CODEC_XOR ||
		(int64_t)msg.frame.width * msg.frame.height > FUZZ_MAX_PIXELS) {
		return 0;
	}
	uint32_t *pixels = calloc((size_t)msg.frame.width * msg.frame.height, 4);
	uint8_t *raw = malloc(msg.frame.raw_size ? msg.frame.raw_size : 1);
	if (pixels && raw &&
		decompressor_run(&dec, msg.frame.compression, msg.frame.payload,
			msg.frame.payload_size, raw, msg.frame.raw_size)) {
		struct image img = {pixels, msg.frame.width, msg.frame.height, msg.frame.width};
		codec_diff_apply(&img, msg.frame.rects, msg.frame.nrects, raw);
	}
	free(raw);
	free(pixels);
	return 0;
}
