/* libFuzzer harness: bytes as an H.264 access unit for a 64x48 window,
 * through the viewer's decoder. The first byte picks a new stream. */
#include <stdint.h>
#include <stdlib.h>

#include "video.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct video_decoder *dec;
	static uint32_t pixels[64 * 48];
	char err[256];
	if (size < 2) {
		return 0;
	}
	if (!dec || (data[0] & 1)) {
		video_decoder_destroy(dec);
		dec = video_decoder_create(64, 48, 1, err, sizeof(err));
		if (!dec) {
			abort();
		}
	}
	bool decoded;
	(void)video_decoder_decode(dec, data + 1, size - 1, 64, 48, pixels, 64, &decoded, err,
		sizeof(err));
	return 0;
}
