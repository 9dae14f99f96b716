/*
 * What a window's encoder is: its state on the event loop and on the
 * worker that encodes its frames, what a job knows of the session, and a
 * worker's tools. The data the encoding parts share (encode.c, lossless.c,
 * stream.c), below all of them.
 */
#ifndef RCOMP_ENCODER_H
#define RCOMP_ENCODER_H

#include <pixman.h>
#include <stdbool.h>
#include <stdint.h>

#include "buffer.h"
#include "channel.h"
#include "codec.h"
#include "cores.h"
#include "fit.h"
#include "scroll.h"
#include "workers.h"

struct rc_connection;
struct rc_workers;
struct video_encoder;

enum rc_codec_mode {
	RC_CODEC_AUTO, /* video for windows in motion, lossless otherwise */
	RC_CODEC_LOSSLESS, /* never video */
	RC_CODEC_VIDEO, /* video on any change, a lossless refresh once still */
};

/* What one encoding job knows of the session, copied when it is handed to
 * a worker: the job never reads the connection. */
/* What the app says the window shows (wp_content_type_v1): a hint. A
 * game's or a video's motion goes to video at its second moving frame; a
 * photo's video is never smaller than the window (sharpness first). */
enum rc_content {
	RC_CONTENT_NONE,
	RC_CONTENT_PHOTO,
	RC_CONTENT_VIDEO,
	RC_CONTENT_GAME,
};

struct rc_encode_link {
	enum rc_codec_mode mode;
	bool sharpness_first;
	enum rc_content content;
	enum wire_compression compression;
	int compression_level;
	const char *dump_dir;
	uint64_t test_us_per_mpixel; /* the context's */
	bool video, copy_rect, replace; /* what the viewer decodes */
	uint64_t rate; /* delivery rate, bytes per second; 0: unknown */
	uint64_t min_rtt_us;
	double rtt_ms; /* the window's smoothed round trip */
	/* The link's own (link acks, not frames): its minimum round trip and
	 * delivery rate in bytes per second; 0: unknown. */
	uint64_t link_min_rtt_us, link_rate;
	/* Either rate was measured where the link limited it: until then
	 * both are floors (a terminal's small frames say little of a fast
	 * link), and nothing is judged too slow from them. */
	bool measured;
	/* Frame bytes waiting to be written: the link carries less than the
	 * frames made (pacing keeps the queue here, not in the network). */
	uint64_t link_queued;
	int fps;
	int divisor; /* the video's picture is the window's divided by this (fit.h) */
	int preset; /* libx264's, as the fit chose it (fit.h) */
	uint64_t frame_max; /* raw bytes one frame may carry (connection_frame_max) */
	struct cores_budget *cores; /* the session's, shared by its streams */
};

/*
 * One window's encoder. The fields under "the worker's" belong to the job
 * while it runs (job_busy), and to the event loop's thread otherwise; the
 * others are the event loop's only.
 */
/* The link's capacity in bytes per second: the frames' delivery rate or,
 * if higher, the channel's (both keep a sample the sender limited only when
 * it is the highest); 0: not known yet. */
static inline uint64_t encode_link_capacity(const struct rc_encode_link *link)
{
	return link->rate > link->link_rate ? link->rate : link->link_rate;
}

struct rc_encoder {
	uint32_t id; /* the window's */
	enum rc_content content; /* set before encoder_send */
	struct rc_job job;
	void (*encoded)(struct rc_encoder *enc); /* the job is done */

	/* The event loop's. */
	bool reset_asked; /* encoder_reset while the job ran */
	uint32_t epoch; /* counts resets: a job from an older one is stale */
	uint32_t job_epoch;
	uint32_t seq; /* of the last frame sent */
	uint32_t acked; /* newest sequence the viewer presented */
	struct channel_mark queued; /* the last frame, in the send queue */
	struct rc_fit fit; /* the size its video goes at */
	double rtt_ms; /* smoothed, from acks */
	bool video_shown; /* as of the last job, for wants_tick and stats */
	int64_t bitrate_shown;
	const char *video_name;
	int preset_shown; /* enum wire_preset: libx264's, or hardware */
	double qp_shown; /* of its recent pictures; 0: none yet */
	int32_t picture_shown[2]; /* the video's picture: the window's size, or smaller */
	int threads_shown, streams_shown;
	uint64_t encode_us_shown; /* a video frame's, smoothed */
	/* For --stats, per second. */
	uint32_t stat_frames;
	uint32_t stat_copies; /* copy_rects */
	uint64_t stat_bytes;

	/* The job's input and output. */
	struct rc_encode_link link;
	struct image image; /* the window's captured image: not recaptured while busy */
	pixman_region32_t damage; /* taken from the window; what is left goes back */
	uint32_t job_seq; /* the sequence the frame would have */
	uint32_t job_mark; /* the input_mark it answers, 0: none */
	uint64_t job_time_us; /* when the app drew what it sends */
	struct buffer out; /* messages to append to the connection */
	bool produced; /* out holds a frame */
	uint32_t job_copies;

	/* The worker's. */
	uint32_t *sent; /* the copy the viewer holds */
	bool sent_clean; /* all zeros, as calloc made it */
	/* Where the next band starts, when damage is more than a frame may
	 * carry (take_band); and what of a whole picture no band carried yet:
	 * the bands that fill it are no motion, a change again of what the
	 * viewer has of it is. */
	int32_t band_y;
	pixman_region32_t unfilled;
	/* Compressed bytes per raw byte of the last lossless frames (0: none
	 * yet), which sizes a band from the link's capacity (take_band). */
	double lossless_ratio;
	/* The reset that ends video goes whole (up to the link's frame_max):
	 * the viewer zeroes its copy at a reset, and would show black below a
	 * band where it showed the last video picture. */
	bool refresh_whole;
	struct rc_scroll scroll; /* row hashes of sent, to find scrolls */
	bool replace_won; /* new pixels compressed smaller than the XOR last time */
	uint32_t large_frames;
	int32_t width, height;
	bool need_reset; /* the viewer clears its copy: the next frame is whole */
	struct video_encoder *video; /* while in motion the window is one H.264 stream */
	struct cores_budget *cores_held; /* the video's threads were taken from it */
	int video_streams; /* streams sharing the cores when it started */
	bool in_video; /* streaming video now; the viewer's copy is lossy */
	bool video_failed; /* no encoder could be made: stay lossless */
	bool new_stream; /* the next video frame starts a stream */
	int motion_frames, still_frames;
	/* Lossless frames in a row that were motion on a link where bytes are
	 * cheap (bytes_are_cheap): past MOTION_FRAMES they are made fast. */
	int cheap_motion_frames;
	uint32_t fast_frames; /* made fast in this run of motion */
	uint64_t lossless_at_us; /* when the last lossless frame was made */
	uint64_t last_change_us;
	int64_t bitrate;
	uint64_t bitrate_stamp_us;
	bool bitrate_startup; /* doubling until the link is full (stream.c) */
	bool keep_bitrate; /* the next stream is this one at another preset: same link */
	int64_t bitrate_full; /* the capacity when it last grew by a quarter */
	uint32_t bitrate_rounds; /* steps since then; in steady state, all steps */
	/* What a video frame costs: the stream's picture is the window's size
	 * divided by this (the fit's, taken at the next frame); the time a
	 * frame takes to encode, smoothed; frames encoded at this divisor. */
	int video_divisor;
	int video_preset; /* libx264's, the stream's (enum wire_preset) */
	uint64_t encode_us;
	uint32_t divisor_frames;
	uint32_t first_us[8]; /* a stream's first frames' times (stream.c) */
};

/* What a window's video does to keep up (window_stats' motion field). */
enum rc_motion {
	RC_MOTION_FULL = 0, /* full size, at the rate */
	RC_MOTION_SMALLER = 1, /* smaller, to keep the frame rate */
	RC_MOTION_SLOW = 2, /* full size though it cannot keep the rate */
};

/* A worker's own compressor and scratch memory. */
struct tools {
	struct compressor compressor;
	bool ready;
	enum wire_compression kind;
	int level;
	uint8_t *scratch; /* raw XOR diffs */
	size_t scratch_size;
	uint8_t *pixels; /* raw new pixels */
	size_t pixels_size;
	struct buffer alt; /* a frame compressed the other way */
};

/* The frame message of the job's frame, as far as the job knows it. */
static inline struct wire_frame encoder_frame(const struct rc_encoder *enc, uint16_t flags)
{
	return (struct wire_frame){
		.window = enc->id,
		.seq = enc->job_seq,
		.time_us = enc->job_time_us,
		.width = enc->width,
		.height = enc->height,
		.flags = flags,
	};
}

#endif
