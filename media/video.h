/*
 * The video codec: one H.264 stream per window through libavcodec, from and
 * to 32-bit BGRA window images. libx264 with zero-latency settings and no
 * B-frames; VAAPI where a render node works.
 */
#ifndef RCOMP_VIDEO_H
#define RCOMP_VIDEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "wire.h"

struct video_encoder;
struct video_decoder;

/* Whether this build has video at all. */
bool video_available(void);

/* width and height are the window's; the stream's picture is that divided
 * by divisor (1: the window's own size; 2: half of it each way, a quarter
 * of the pixels to convert and encode), rounded up and padded to even.
 * threads: libx264's, as slices of each picture encoded at once (no frame
 * threads: they would hold frames back); 1 or more. preset: libx264's, an
 * enum wire_preset short of WIRE_PRESET_HARDWARE (a hardware encoder has
 * none). */
struct video_encoder *video_encoder_create(int32_t width, int32_t height, int divisor, int fps,
	int threads, int64_t bitrate, int preset, char *err, size_t err_size);
void video_encoder_destroy(struct video_encoder *enc);
const char *video_encoder_name(const struct video_encoder *enc);
/* libx264's preset (enum wire_preset; WIRE_PRESET_HARDWARE for VAAPI), and
 * the quantizer of its recent pictures (libx264's QP, 0 to 69: lower is
 * sharper; past 51, H.264's coarsest step, it zeroes more; 0 before the
 * first). */
int video_encoder_preset(const struct video_encoder *enc);
bool video_encoder_has_presets(const struct video_encoder *enc);
double video_encoder_qp(const struct video_encoder *enc);
/* The threads it encodes on (1 for hardware), and its picture's size. */
int video_encoder_threads(const struct video_encoder *enc);
void video_encoder_picture(const struct video_encoder *enc, int32_t *width, int32_t *height);
/* Encodes one image (stride in pixels) at the given bit rate and appends the
 * access unit to out. *produced is false if the encoder held the frame back. */
bool video_encoder_encode(struct video_encoder *enc, const uint32_t *pixels, int32_t stride,
	int64_t bitrate, struct buffer *out, bool *produced);

/* Encodes one image and appends it as a frame message with frame's fields
 * (codec and compression are set here). Returns the bytes appended: 0 if
 * the encoder held the frame back, or, with *failed, if encoding or the
 * buffer failed; out is unchanged then. */
size_t video_append_frame(struct video_encoder *enc, struct wire_frame frame,
	const uint32_t *pixels, int32_t stride, int64_t bitrate, struct buffer *out, bool *failed);

/* A decoder for a window of width x height: a stream that declares a larger
 * picture is refused before anything is allocated for it. A smaller picture
 * (a stream encoded smaller to keep its frame rate) is scaled up to fill the
 * window. threads: a stream of several slices a picture decodes its slices
 * on up to this many threads at once, with no picture held back. */
struct video_decoder *video_decoder_create(int32_t width, int32_t height, int threads, char *err,
	size_t err_size);
int video_decoder_threads(const struct video_decoder *dec);
void video_decoder_destroy(struct video_decoder *dec);
/* The size of the last picture decoded (0 before any): the window's, padded
 * to even, or smaller. */
void video_decoder_picture(const struct video_decoder *dec, int *width, int *height);
/* Decodes one access unit of a width x height window into dst (the window's
 * size, stride in pixels, opaque BGRA). Returns false with a reason if the
 * data does not decode to a picture that fits the window. *decoded is false
 * if no picture came out yet. With dst NULL the picture is held for
 * video_decoder_output, which may place it at its own size. */
bool video_decoder_decode(struct video_decoder *dec, const uint8_t *data, size_t size,
	int32_t width, int32_t height, uint32_t *dst, int32_t stride, bool *decoded, char *err,
	size_t err_size);
/* The picture held, into dst of width x height: the window's size (a
 * smaller picture scaled up to it), or at most the picture's own
 * (video_decoder_picture) as it is, where something else scales it. False
 * if none is held, or it does not convert. */
bool video_decoder_output(struct video_decoder *dec, uint32_t *dst, int32_t stride, int32_t width,
	int32_t height);

#endif
