/*
 * The video stream of a window in motion: its bit rate from the link, its
 * threads from the session's cores, the time its frames take (for the
 * size they go at, fit.h), and its end in a lossless refresh. On a worker
 * (encode.c), but for encoder_motion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The video bit rate follows the link's capacity, as BBR paces a flow: the
 * capacity is the link's delivery rate (the frames' or, if higher, the
 * channel's; both keep a sample the sender limited only when it is the
 * highest, so what an app sent slowly does not pass for the link), and a
 * stream never asks for more than the picture needs (its quantizer at
 * QP_ENOUGH or under: the rate holds) or may take (clamp_bitrate).
 * - Startup: a new stream starts at 0.8 of the capacity known, which
 *   after lossless traffic may still be less than the link carries, and
 *   doubles each STARTUP_STEP_US (or two round trips, if longer) until the
 *   capacity stops growing by a quarter for three steps (the link is
 *   full: 0.9 of it from then on), a queue builds, or the picture needs
 *   no more.
 * - Then, each 250 ms: a queue (more than two frames' bytes waiting to be
 *   written, or frame round trips past 1.5 times their least plus 10 ms
 *   while the stream asks more than the capacity) takes it to 0.8 of the
 *   delivery rate; otherwise it grows by 15%, up to 1.25 times the
 *   capacity: enough past it that a link that got faster is seen, not so
 *   far that the flow (flow.c) skips every other frame (with no bound it
 *   reached 6.8 Mbit/s on a 3 Mbit/s link, the flow keeping the queue
 *   away, and half the frames were skipped). It is never brought down to the capacity: while the stream
 *   is what limits the link, the capacity measured is the stream's own
 *   rate, and a bound below it would spiral down (seen: 6.1 to 4.1 Mbit/s
 *   in 2 s on an 8 Mbit/s link). */
#define STARTUP_STEP_US (100 * 1000)
#define STEADY_STEP_US (250 * 1000)

/* What the picture needs is said by the coder: while libx264's quantizer
 * for the recent pictures is at or under QP_ENOUGH the rate grows no more,
 * and under QP_PLENTY it comes down by a tenth a step (at QP 16-20 a game
 * clip measured 42-45 dB PSNR-Y; past that, bits buy little a player sees
 * and cost the link, and the CABAC coding at both ends). CEILING_BPP, bits
 * per pixel per frame, bounds it too. Measured with bench_quality at 16
 * Mbit/s, 20 ms, on 2 cores that rcomp-run, the app and rcomp-view share:
 * a ceiling of 0.5 instead of 0.25 took the 800x600 clips from 39.5 to 42.0
 * dB (neverball) and 43.0 to 46.4 (glmark2), 1080p at half size from 31.5
 * to 33.0, but cost 2 to 6 of about 50 pictures a second: frame rate
 * first, it stays at 0.25 until a viewer on cores of its own says more. */
#define QP_ENOUGH 20.0
#define QP_PLENTY 17.0
#define CEILING_BPP 0.25

/* Within MIN_BITRATE and what the picture may take at its frame rate: the
 * stream's picture, which is smaller than the window's when the window goes
 * at a divisor of its size for the frame rate. */
static int64_t clamp_bitrate(const struct rc_encoder *enc, int64_t rate)
{
	int divisor = enc->video_divisor > 1 ? enc->video_divisor : 1;
	int64_t ceiling = (int64_t)((double)(enc->width / divisor) * (enc->height / divisor) *
		enc->link.fps * CEILING_BPP);
	if (rate > ceiling) {
		rate = ceiling;
	}
	return rate < MIN_BITRATE ? MIN_BITRATE : rate;
}

static int64_t video_bitrate(struct rc_encoder *enc, uint64_t now)
{
	const struct rc_encode_link *link = &enc->link;
	int64_t rate = (int64_t)link->rate * 8;
	int64_t capacity = (int64_t)encode_link_capacity(link) * 8; /* bit/s */
	uint64_t step = STEADY_STEP_US;
	if (enc->bitrate_startup) {
		step = 2 * link->min_rtt_us > STARTUP_STEP_US ? 2 * link->min_rtt_us
							      : STARTUP_STEP_US;
	}
	if (enc->bitrate == 0) {
		enc->bitrate = capacity > 0 ? capacity * 8 / 10 : INITIAL_BITRATE;
		enc->bitrate_stamp_us = now;
		enc->bitrate_startup = true;
		enc->bitrate_full = capacity;
		enc->bitrate_rounds = 0;
	} else if (now - enc->bitrate_stamp_us >= step) {
		enc->bitrate_stamp_us = now;
		enc->bitrate_rounds++;
		/* A queue: frames wait here to be written (the link is paced,
		 * so this is where one builds), more than two of them; or the
		 * frames' round trip grew while the stream asks more than the
		 * link's capacity (the flow then holds frames back before they
		 * queue). The round trip alone is no sign of one: it includes
		 * the viewer's decoding and its desktop's frame, and on a busy
		 * viewer it grew past the bound while the link had room (the bit
		 * rate fell from 7.0 to 3.7 Mbit/s on an 8 Mbit/s link). */
		double frame_bytes = (double)enc->bitrate / 8 / (link->fps > 0 ? link->fps : 60);
		double min_rtt = (double)link->min_rtt_us / 1000.0;
		bool late = link->rtt_ms > min_rtt * 1.5 + 10.0;
		bool queueing = (double)link->link_queued > 2 * frame_bytes ||
			(late && capacity > 0 && enc->bitrate > capacity * 11 / 10);
		double qp = enc->video ? video_encoder_qp(enc->video) : 0;
		bool enough = qp > 0 && qp <= QP_ENOUGH;
		if (queueing && rate > 0) {
			enc->bitrate = rate * 8 / 10;
			enc->bitrate_startup = false;
		} else if (enough) {
			/* The picture needs no more. */
			enc->bitrate_startup = false;
			if (qp < QP_PLENTY) {
				enc->bitrate = enc->bitrate * 9 / 10;
			}
		} else if (enc->bitrate_startup) {
			if (capacity >= enc->bitrate_full * 5 / 4) {
				enc->bitrate_full = capacity;
				enc->bitrate_rounds = 0;
			}
			if (enc->bitrate_rounds >= 3 && capacity > 0) {
				enc->bitrate = capacity * 9 / 10; /* the link is full */
				enc->bitrate_startup = false;
				enc->bitrate_rounds = 0;
			} else {
				enc->bitrate *= 2;
			}
		} else if (!queueing) {
			int64_t grown = enc->bitrate * 115 / 100;
			int64_t cap = capacity * 5 / 4;
			enc->bitrate = capacity > 0 && grown > cap
				? (enc->bitrate > cap ? enc->bitrate : cap)
				: grown;
		}
	}
	int64_t clamped = clamp_bitrate(enc, enc->bitrate);
	if (clamped < enc->bitrate) {
		enc->bitrate_startup = false; /* the picture needs no more */
	}
	enc->bitrate = clamped;
	return enc->bitrate;
}

/* What a video frame would cost now: the bit rate a new stream would get
 * (below the measured delivery rate, within what the picture needs), over
 * the frame rate. */
double stream_frame_bytes(const struct rc_encoder *enc)
{
	int64_t rate = (int64_t)encode_link_capacity(&enc->link) * 8 * 8 / 10;
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
	enc->refresh_whole = true;
	pixman_region32_union_rect(damage, damage, 0, 0, (unsigned)enc->width,
		(unsigned)enc->height);
}

bool stream_start(struct rc_encoder *enc)
{
	char err[256];
	uint64_t now = monotonic_usec();
	if (!enc->keep_bitrate) {
		enc->bitrate = 0;
	}
	enc->keep_bitrate = false;
	int divisor = enc->video_divisor > 1 ? enc->video_divisor : 1;
	int64_t pixels = (int64_t)(enc->width / divisor) * (enc->height / divisor);
	int threads = 1;
	if (enc->link.cores) {
		threads = cores_take(enc->link.cores, pixels, &enc->video_streams);
		enc->cores_held = enc->link.cores;
	}
	enc->video = video_encoder_create(enc->width, enc->height, divisor, enc->link.fps, threads,
		video_bitrate(enc, now), enc->video_preset, err, sizeof(err));
	if (!enc->video) {
		stream_drop(enc);
		log_error("window %u stays lossless: %s", enc->id, err);
		enc->video_failed = true;
		return false;
	}
	log_debug("window %u: video with %s %s on %d threads (%d cores, %d streams now)", enc->id,
		video_encoder_name(enc->video), wire_preset_names[video_encoder_preset(enc->video)],
		video_encoder_threads(enc->video), enc->link.cores ? enc->link.cores->total : 1,
		enc->video_streams);
	enc->divisor_frames = 0;
	enc->encode_us = 0;
	enc->in_video = true;
	enc->new_stream = true;
	enc->still_frames = 0;
	enc->last_change_us = now;
	return true;
}

/* What a video frame takes to encode, smoothed, for choosing its size
 * and preset (fit.h, on the event loop). Its start is the stream's first
 * FIRST_FRAMES frames: their mean until there are that many, then the
 * third quickest of them; from there a moving average that gives each new
 * one an eighth. A stream's first frames are slow for reasons that pass
 * (its threads starting, the viewer starting to decode, the app's own
 * start of motion on the same cores): seeded with the first frame alone
 * the average kept a slow start for long, and even their mean did (800x600
 * on 2 shared cores, frames 1-8: 9.8, 5.6, 4.0, 5.4, 4.7, 5.0, 10.8, 11.2
 * ms, mean 7.1, then 3-5 ms from the tenth on; the third quickest, 5.0,
 * is what followed). */
#define FIRST_FRAMES 8
_Static_assert(sizeof(((struct rc_encoder *)0)->first_us) == FIRST_FRAMES * sizeof(uint32_t),
	"first_us holds FIRST_FRAMES");

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void measure(struct rc_encoder *enc, uint64_t took_us)
{
	uint32_t n = enc->divisor_frames;
	if (n < FIRST_FRAMES) {
		enc->first_us[n] = took_us > UINT32_MAX ? UINT32_MAX : (uint32_t)took_us;
		enc->encode_us = (enc->encode_us * n + took_us) / (n + 1);
		if (n + 1 == FIRST_FRAMES) {
			uint32_t sorted[FIRST_FRAMES];
			memcpy(sorted, enc->first_us, sizeof(sorted));
			qsort(sorted, FIRST_FRAMES, sizeof(sorted[0]), cmp_u32);
			enc->encode_us = sorted[2];
		}
	} else {
		enc->encode_us = (enc->encode_us * 7 + took_us) / 8;
	}
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
			struct lossless_sent sent;
			lossless_send(enc, tools, cur, damage, &sent);
			return;
		}
	}
	pixman_region32_clear(damage);
	struct wire_frame frame = encoder_frame(enc, enc->new_stream ? WIRE_FRAME_RESET : 0);
	bool failed;
	size_t bytes = video_append_frame(enc->video, frame, cur.pixels, cur.stride,
		video_bitrate(enc, now), &enc->out, &failed);
	if (enc->link.test_us_per_mpixel) {
		/* A test's slower machine (encode.h): this worker is busy for
		 * that long, as a slower encoder would keep it. */
		int divisor = enc->video_divisor > 1 ? enc->video_divisor : 1;
		uint64_t pixels =
			(uint64_t)(enc->width / divisor) * (uint64_t)(enc->height / divisor);
		uint64_t until = now + enc->link.test_us_per_mpixel * pixels / 1000000;
		for (uint64_t t = monotonic_usec(); t < until; t = monotonic_usec()) {
			usleep((useconds_t)(until - t));
		}
	}
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
