/*
 * Encoding: each window's captured image becomes frames on the connection,
 * as a lossless diff against the copy the viewer holds (lz4/zstd), or as
 * H.264 while the window is in motion, with a lossless refresh once it
 * stops. The codec is chosen per window, frame by frame.
 */
#ifndef RCOMP_ENCODE_H
#define RCOMP_ENCODE_H

#include <pixman.h>
#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "scroll.h"

struct rc_connection;
struct video_encoder;

enum rc_codec_mode {
	RC_CODEC_AUTO, /* video for windows in motion, lossless otherwise */
	RC_CODEC_LOSSLESS, /* never video */
	RC_CODEC_VIDEO, /* video on any change, a lossless refresh once still */
};

/* What every window's encoder shares: the options, the compressor of the
 * current connection and a scratch buffer for raw diffs. */
struct rc_encode_context {
	enum rc_codec_mode mode;
	enum wire_compression compression; /* asked for; the viewer may lack it */
	int compression_level;
	const char *dump_dir; /* --dump-dir: each window's last sent frame */
	struct compressor compressor;
	uint8_t *scratch; /* raw XOR diffs */
	size_t scratch_size;
	uint8_t *pixels; /* raw new pixels */
	size_t pixels_size;
	struct buffer alt; /* a frame compressed the other way */
};

/* One window's encoding state. */
struct rc_encoder {
	uint32_t id; /* the window's */
	uint32_t *sent; /* the copy the viewer holds */
	struct rc_scroll scroll; /* row hashes of sent, to find scrolls */
	bool replace_won; /* new pixels compressed smaller than the XOR last time */
	uint32_t large_frames;
	int32_t width, height;
	bool need_reset; /* the viewer clears its copy: the next frame is whole */
	uint32_t seq; /* of the last frame sent */
	uint32_t acked; /* newest sequence the viewer presented */
	double rtt_ms; /* smoothed, from acks */

	/* Video: while in motion the window is one H.264 stream. */
	struct video_encoder *video;
	bool in_video; /* streaming video now; the viewer's copy is lossy */
	bool video_failed; /* no encoder could be made: stay lossless */
	bool new_stream; /* the next video frame starts a stream */
	int motion_frames, still_frames;
	uint64_t last_change_us;
	int64_t bitrate;
	uint64_t bitrate_stamp_us;

	/* For --stats, per second. */
	uint32_t stat_frames;
	uint32_t stat_copies; /* copy_rects */
	uint64_t stat_bytes;
};

/* The compressor follows what the viewer can decode (its hello's caps). */
bool encode_context_init(struct rc_encode_context *ctx);
bool encode_context_set_viewer(struct rc_encode_context *ctx, uint32_t viewer_caps);
void encode_context_finish(struct rc_encode_context *ctx);

void encoder_init(struct rc_encoder *enc, uint32_t id);
void encoder_finish(struct rc_encoder *enc);
/* A new viewer, or a new scale: the next frame is whole, and the frames in
 * flight will never be acknowledged. */
void encoder_reset(struct rc_encoder *enc);
/* Whether a frame must go out even without new damage: a whole frame is
 * due, or the video stream ends with a lossless refresh once still. */
bool encoder_wants_tick(const struct rc_encoder *enc);
/* Whether a frame of this window is waiting for its ack. */
bool encoder_in_flight(const struct rc_encoder *enc);

/*
 * Sends what changed in image (damage, in image pixels, is consumed) to the
 * connection: as video while the window is in motion, else as a lossless
 * diff. fps is the window's frame rate, for the video encoder.
 */
void encoder_send(struct rc_encoder *enc, struct rc_encode_context *ctx, struct rc_connection *conn,
	struct image image, pixman_region32_t *damage, int fps);

/* The viewer presented frame seq: false if it was never sent (the viewer
 * broke the protocol). rtt_us < 0: unknown. */
bool encoder_acked(struct rc_encoder *enc, uint32_t seq, int64_t rtt_us);

/* "video x264 1.20 Mbit/s" or "lossless lz4", for --stats. */
void encoder_describe(const struct rc_encoder *enc, const struct rc_encode_context *ctx, char *out,
	size_t size);

#endif
