/* Builds without libavcodec (meson -Dvideo=disabled): every window stays
 * lossless, and asking for video says why it cannot be had. */
#include <stdio.h>

#include "video.h"

bool video_available(void)
{
	return false;
}

struct video_encoder *video_encoder_create(int32_t width, int32_t height, int divisor, int fps,
	int threads, int64_t bitrate, int preset, char *err, size_t err_size)
{
	snprintf(err, err_size, "rcomp was built without video (meson -Dvideo=enabled)");
	return NULL;
}

void video_encoder_destroy(struct video_encoder *enc)
{
}

const char *video_encoder_name(const struct video_encoder *enc)
{
	return "none";
}

int video_encoder_preset(const struct video_encoder *enc)
{
	return WIRE_PRESET_ULTRAFAST;
}

bool video_encoder_has_presets(const struct video_encoder *enc)
{
	return false;
}

double video_encoder_qp(const struct video_encoder *enc)
{
	return 0;
}

int video_encoder_threads(const struct video_encoder *enc)
{
	return 0;
}

void video_encoder_picture(const struct video_encoder *enc, int32_t *width, int32_t *height)
{
	*width = *height = 0;
}

bool video_encoder_encode(struct video_encoder *enc, const uint32_t *pixels, int32_t stride,
	int64_t bitrate, struct buffer *out, bool *produced)
{
	*produced = false;
	return false;
}

size_t video_append_frame(struct video_encoder *enc, struct wire_frame frame,
	const uint32_t *pixels, int32_t stride, int64_t bitrate, struct buffer *out, bool *failed)
{
	*failed = true;
	return 0;
}

struct video_decoder *video_decoder_create(int32_t width, int32_t height, int threads, char *err,
	size_t err_size)
{
	snprintf(err, err_size, "this rcomp-view was built without video");
	return NULL;
}

int video_decoder_threads(const struct video_decoder *dec)
{
	return 0;
}

bool video_decoder_output(struct video_decoder *dec, uint32_t *dst, int32_t stride, int32_t width,
	int32_t height)
{
	return false;
}

void video_decoder_picture(const struct video_decoder *dec, int *width, int *height)
{
	*width = *height = 0;
}

void video_decoder_destroy(struct video_decoder *dec)
{
}

bool video_decoder_decode(struct video_decoder *dec, const uint8_t *data, size_t size,
	int32_t width, int32_t height, uint32_t *dst, int32_t stride, bool *decoded, char *err,
	size_t err_size)
{
	*decoded = false;
	snprintf(err, err_size, "this rcomp-view was built without video");
	return false;
}
