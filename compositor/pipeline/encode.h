/*
 * Encoding: each window's captured image becomes frames on the connection,
 * as a lossless diff against the copy the viewer holds (lz4/zstd), or as
 * H.264 while the window is in motion, with a lossless refresh once it
 * stops. The codec is chosen per window, frame by frame, and frames are
 * encoded on worker threads, one at a time per window.
 */
#ifndef RCOMP_ENCODE_H
#define RCOMP_ENCODE_H

#include "encoder.h"

/* What every window's encoder shares: the options, and the workers that
 * encode. */
struct rc_encode_context {
	enum rc_codec_mode mode;
	bool sharpness_first; /* video that cannot keep the rate keeps its size */
	enum wire_compression compression; /* asked for; the viewer may lack it */
	int compression_level;
	const char *dump_dir; /* --dump-dir: each window's last sent frame */
	/* RCOMP_TEST_ENCODE_US_PER_MPIXEL, for tests only: a video frame takes
	 * at least this long per million pixels of its picture, as on a
	 * slower machine, so that a test of the fit's choices (fit.h) sets
	 * what a frame costs instead of waiting for this machine to be slow.
	 * 0: frames take what they take. */
	uint64_t test_us_per_mpixel;
	struct rc_workers *workers;
	struct cores_budget cores; /* for the video streams' threads */
};

enum rc_motion encoder_motion(const struct rc_encoder *enc);

/* The workers start with the event loop, and end before it. */
bool encode_context_init(struct rc_encode_context *ctx, struct wl_event_loop *loop);
/* The compression a viewer's frames use: the one asked for, if the viewer
 * can decode it (its hello's caps). */
enum wire_compression encode_context_compression(const struct rc_encode_context *ctx,
	uint32_t viewer_caps);
void encode_context_finish(struct rc_encode_context *ctx);

/* encoded runs on the event loop's thread when a frame is encoded. */
bool encoder_init(struct rc_encoder *enc, uint32_t id, void (*encoded)(struct rc_encoder *enc));
/* Waits for a running job, drops a waiting one. */
void encoder_finish(struct rc_encoder *enc, struct rc_encode_context *ctx);
/* A new viewer, or a new scale: the next frame is whole, and the frames in
 * flight will never be acknowledged; a frame being encoded is dropped. */
void encoder_reset(struct rc_encoder *enc);
/* Encoding now: the window's image must not change, and damage waits. */
static inline bool encoder_busy(const struct rc_encoder *enc)
{
	return job_busy(&enc->job);
}
/* Whether a frame must go out even without new damage: a whole frame is
 * due, or the video stream ends with a lossless refresh once still. */
bool encoder_wants_tick(const struct rc_encoder *enc);
/* Whether a frame of this window is waiting for its ack. */
bool encoder_in_flight(const struct rc_encoder *enc);
/* A tick of the window's clock had a new picture to send; busy: the
 * encoder was still at work on the last frame, or the link was full, so
 * this tick's picture waits. Counted while the window is in video, for
 * keeping its rate. */
void encoder_tick(struct rc_encoder *enc, bool busy);

/*
 * Hands what changed in image (damage, in image pixels, is taken) to a
 * worker: it is encoded as video while the window is in motion, else as a
 * lossless diff. The image must stay as it is until encoded is called.
 * fps is the window's frame rate, for the video encoder; seq, the frame's
 * number (the window's, rising, shared by all its viewers); input_mark, the
 * viewer's input the frame answers (0: none); drawn_us, when the app drew
 * it (the frame's time, which the viewer syncs sound to).
 */
void encoder_send(struct rc_encoder *enc, struct rc_encode_context *ctx, struct rc_connection *conn,
	struct image image, pixman_region32_t *damage, int fps, uint32_t seq, uint32_t input_mark,
	uint64_t drawn_us);
/* From encoded: queues the frame on the connection (NULL: none now, the
 * frame is dropped), gives back any damage left, and books the frame. */
void encoder_deliver(struct rc_encoder *enc, struct rc_connection *conn, pixman_region32_t *damage);

/*
 * Encoding once for viewers in step: a follower's encoder makes nothing of
 * its own while it follows; its viewer gets the frames of the lead's.
 */
/* From the lead's encoded, before the lead's own encoder_deliver: queues
 * the lead's frame for the follower enc's viewer on conn (after a
 * frame_mark of input_mark, if not 0), gives back any damage left, books
 * it. A follower reset meanwhile, or a frame dropped, leaves enc wanting a
 * whole frame. */
void encoder_deliver_copy(struct rc_encoder *enc, const struct rc_encoder *lead,
	struct rc_connection *conn, uint32_t input_mark, pixman_region32_t *damage);
/* Idle, and streaming video (or its last frame was). */
bool encoder_streaming(const struct rc_encoder *enc);
/* Its next frame is whole (a new viewer, a new size or scale). */
bool encoder_wants_whole(const struct rc_encoder *enc);
/* The encoder's viewer gets a lead's new stream from its start: it waits
 * for no whole frame of its own. */
void encoder_follow(struct rc_encoder *enc);
/* Whether two idle encoders' viewers hold the same lossless picture (and
 * so would be sent the same bytes): one may follow the other. */
bool encoder_can_share(const struct rc_encoder *a, const struct rc_encoder *b);
/* A follower goes its own way: its encoder takes the lead's state (the
 * picture its viewer holds is the lead's), or, where that is not known
 * (the lead mid-job or mid-stream), starts whole. */
void encoder_take_state(struct rc_encoder *enc, const struct rc_encoder *lead);

/* The viewer presented frame seq: false if it was never sent (the viewer
 * broke the protocol). rtt_us < 0: unknown. */
bool encoder_acked(struct rc_encoder *enc, uint32_t seq, int64_t rtt_us);

/* "video x264 1.20 Mbit/s" or "lossless lz4", for --stats. */
void encoder_describe(const struct rc_encoder *enc, char *out, size_t size);

#endif
