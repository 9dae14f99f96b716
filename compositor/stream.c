/*
 * The video stream of a window in motion: its bit rate from the link, its
 * threads from the session's cores, the time its frames take (for the
 * size they go at, fit.h), and its end in a lossless refresh. On a worker
 * (encode.c), but for encoder_motion.
 */
#include <stdio.h>

#include "cores.h"
#include "log.h"
#include "lossless.h"
#include "monotonic.h"
#include "stream.h"
#include "video.h"

#define INITIAL_BITRATE 4000000
#define MIN_BITRATE 200000

/* Ends the window's video stream, and gives its threads back. */
void stream_drop(struct rc_encoder *enc)
{
	video_encoder_destroy(enc->video);
	enc->video = NULL;
	if (enc->cores_held) {
		cores_give(enc->cores_held);
		enc->cores_held = NULL;
	}
}

/* The video bit rate follows the link: it grows while round trips stay near
 * their minimum (no queue), and drops to below the delivery rate when a
 * queue builds. It never asks for more than the picture needs. */
/* Within MIN_BITRATE and what the picture needs at its frame rate: the
 * stream's picture, which is smaller than the window's when the window goes
 * at a divisor of its size for the frame rate. */
static int64_t clamp_bitrate(const struct rc_encoder *enc, int64_t rate)
{
	int divisor = enc->video_divisor > 1 ? enc->video_divisor : 1;
	int64_t ceiling =
		(int64_t)(enc->width / divisor) * (enc->height / divisor) * enc->link.fps / 4;
	if (rate > ceiling) {
		rate = ceiling;
	}
	return rate < MIN_BITRATE ? MIN_BITRATE : rate;
}

static int64_t video_bitrate(struct rc_encoder *enc, uint64_t now)
{
	const struct rc_encode_link *link = &enc->link;
	int64_t rate = (int64_t)link->rate * 8;
	if (enc->bitrate == 0) {
		enc->bitrate = rate > 0 ? rate * 8 / 10 : INITIAL_BITRATE;
		enc->bitrate_stamp_us = now;
	} else if (now - enc->bitrate_stamp_us >= 250000) {
		enc->bitrate_stamp_us = now;
		double min_rtt = (double)link->min_rtt_us / 1000.0;
		bool queueing = link->rtt_ms > min_rtt * 1.5 + 10.0;
		if (queueing && rate > 0) {
			enc->bitrate = rate * 8 / 10;
		} else if (!queueing) {
			enc->bitrate = enc->bitrate * 115 / 100;
		}
	}
	enc->bitrate = clamp_bitrate(enc, enc->bitrate);
	return enc->bitrate;
}

/* What a video frame would cost now: the bit rate a new stream would get
 * (below the measured delivery rate, within what the picture needs), over
 * the frame rate. */
double stream_frame_bytes(const struct rc_encoder *enc)
{
	int64_t rate = (int64_t)enc->link.rate * 8 * 8 / 10;
	rate = clamp_bitrate(enc, rate > 0 ? rate : INITIAL_BITRATE);
	return (double)rate / 8.0 / enc->link.fps; /* fps > 0: see encoder_send */
}

void stream_stop(struct rc_encoder *enc, pixman_region32_t *damage, const char *why)
{
	log_debug("window %u: back to lossless (%s)", enc->id, why);
	stream_drop(enc);
	enc->in_video = false;
	enc->motion_frames = 0;
	enc->cheap_motion_frames = 0;
	enc->still_frames = 0;
	/* The viewer's copy is lossy: refresh all of it, losslessly. */
	enc->need_reset = true;
	pixman_region32_union_rect(damage, damage, 0, 0, (unsigned)enc->width,
		(unsigned)enc->height);
}

bool stream_start(struct rc_encoder *enc)
{
	char err[256];
	uint64_t now = monotonic_usec();
	enc->bitrate = 0;
	int divisor = enc->video_divisor > 1 ? enc->video_divisor : 1;
	int64_t pixels = (int64_t)(enc->width / divisor) * (enc->height / divisor);
	int threads = 1;
	if (enc->link.cores) {
		threads = cores_take(enc->link.cores, pixels, &enc->video_streams);
		enc->cores_held = enc->link.cores;
	}
	enc->video = video_encoder_create(enc->width, enc->height, divisor, enc->link.fps, threads,
		video_bitrate(enc, now), err, sizeof(err));
	if (!enc->video) {
		stream_drop(enc);
		log_error("window %u stays lossless: %s", enc->id, err);
		enc->video_failed = true;
		return false;
	}
	log_debug("window %u: video with %s on %d threads (%d cores, %d streams now)", enc->id,
		video_encoder_name(enc->video), video_encoder_threads(enc->video),
		enc->link.cores ? enc->link.cores->total : 1, enc->video_streams);
	enc->divisor_frames = 0;
	enc->encode_us = 0;
	enc->in_video = true;
	enc->new_stream = true;
	enc->still_frames = 0;
	enc->last_change_us = now;
	return true;
}

/* What a video frame takes to encode, smoothed, for choosing its size
 * (fit.h, on the event loop). */
static void measure(struct rc_encoder *enc, uint64_t took_us)
{
	enc->encode_us = enc->encode_us ? (enc->encode_us * 7 + took_us) / 8 : took_us;
	enc->divisor_frames++;
}

void stream_send(struct rc_encoder *enc, struct tools *tools, struct image cur,
	pixman_region32_t *damage)
{
	uint64_t now = monotonic_usec();
	if (enc->need_reset) {
		/* A new viewer, or a new size: a new stream. */
		stream_drop(enc);
		enc->need_reset = false;
		if (!stream_start(enc)) {
			enc->need_reset = true;
			enc->in_video = false;
			uint64_t changed;
			double share;
			lossless_send(enc, tools, cur, damage, &changed, &share);
			return;
		}
	}
	pixman_region32_clear(damage);
	struct wire_frame frame = encoder_frame(enc, enc->new_stream ? WIRE_FRAME_RESET : 0);
	bool failed;
	size_t bytes = video_append_frame(enc->video, frame, cur.pixels, cur.stride,
		video_bitrate(enc, now), &enc->out, &failed);
	if (!enc->new_stream) {
		/* A stream's first picture, whole, costs more than the rest. */
		measure(enc, monotonic_usec() - now);
	}
	if (failed) {
		log_error("window %u: video encoding failed; back to lossless", enc->id);
		enc->video_failed = true;
		stream_stop(enc, damage, "encoder failure");
		return;
	}
	if (bytes) {
		enc->new_stream = false;
		enc->produced = true;
	}
}
