/*
 * Encoding frames: the codec choice per window, the job on a worker, and
 * the frame's way into the connection's send queue. The lossless diff
 * (after any scroll) is lossless.c's, the video stream stream.c's.
 *
 * The choice (written down in doc/how-it-works.md) is made from what each
 * codec would cost, not from how much was damaged. A window goes to video
 * only after MOTION_FRAMES lossless frames in a row, each drawn within two
 * frame intervals of the last (a change after a pause, a page turned, counts
 * afresh), that each changed at least MOTION_FRACTION of it (after any
 * scroll was taken out: lossless.c finds the scroll before it cuts bands)
 * and each cost more than VIDEO_GAIN times what a video frame would at the
 * bit rate video would get now, on a link where bytes are not cheap
 * (bytes_are_cheap: a local link with room for lossless, where video would
 * only cost CPU). A frame counts once for each LATE_US the link takes to
 * carry it (at its delivery rate, once the link was measured full: small
 * frames measure only a floor under its rate): where lossless cannot keep
 * pace, motion is seen at once.
 * A frame that brings the count to MOTION_FRAMES and would itself take
 * LATE_US or more is not sent: its picture goes as the stream's first, so
 * no picture waits behind a lossless one that takes seconds. (A large
 * change that then stops, a page turned on a slow link, is seen first as
 * video and, REFRESH_AFTER_US later, sharp: sooner than lossless alone.)
 * On such a link, motion frame after frame is made fast (see encode_frame):
 * compressed fast, with the scroll search mostly skipped.
 * First pictures, resizes and every other reset frame are
 * lossless and do not count, nor do the bands that fill them out (a band
 * is what the link carries in about 100 ms, lossless.c), so a new window is
 * never sent as video, unless it changes again much of what its bands
 * have carried while they still fill it, at more than a video frame would
 * cost (a game's first picture on a slow link: motion waits behind one
 * band, not the whole picture; a terminal's new line is not that); a
 * scrolling terminal changes only its new lines and typing little, so both
 * stay lossless. A window leaves video after STILL_FRAMES frames that change
 * less than STILL_FRACTION, or when nothing changed for REFRESH_AFTER_US;
 * the way back is a whole lossless frame, so text ends sharp.
 *
 * Encoding runs on a worker thread. encoder_send captures nothing: it takes
 * the window's damage and a copy of what it needs from the connection (the
 * link), and queues the window's job; the job writes its messages into the
 * encoder's own buffer; encoder_deliver, back on the event loop, appends
 * them to the connection. While a job runs the window skips its ticks, so
 * a newer picture merges into the next frame instead of queueing.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bands.h"
#include "connection.h"
#include "cores.h"
#include "encode.h"
#include "log.h"
#include "lossless.h"
#include "monotonic.h"
#include "stream.h"
#include "video.h"
#include "workers.h"

#define MOTION_FRAMES 4
#define LATE_US (100 * 1000)
#define MOTION_FRACTION 0.1
#define VIDEO_GAIN 2
/* A link whose least round trip is under this is local: a unix socket or
 * loopback answers in well under a millisecond on an idle host, a wired LAN
 * in a few tenths, but a busy host's own scheduling adds to it (1.1 ms
 * measured on a unix socket, the sanitizers' build beside three busy
 * loops on 2 cores); the rate bytes_are_cheap asks keeps a slower LAN out. */
#define LOCAL_RTT_US 2000
#define STILL_FRAMES 10
#define STILL_FRACTION 0.1
#define REFRESH_AFTER_US (150 * 1000)
#define MIN_VIDEO_PIXELS (64 * 64)

static void tools_finish(void *local)
{
	struct tools *tools = local;
	if (tools->ready) {
		compressor_finish(&tools->compressor);
		buffer_finish(&tools->alt);
	}
	free(tools->scratch);
	free(tools->pixels);
}

static bool tools_ready(struct tools *tools, const struct rc_encode_link *link)
{
	if (tools->ready && tools->kind == link->compression &&
		tools->level == link->compression_level) {
		return true;
	}
	if (tools->ready) {
		compressor_finish(&tools->compressor);
	} else {
		buffer_init(&tools->alt, WIRE_HEADER_SIZE + WIRE_MAX_BODY);
	}
	tools->ready = true;
	tools->kind = link->compression;
	tools->level = link->compression_level;
	if (!compressor_init(&tools->compressor, link->compression, link->compression_level)) {
		compressor_finish(&tools->compressor);
		buffer_finish(&tools->alt);
		tools->ready = false;
		return false;
	}
	return true;
}

bool encode_context_init(struct rc_encode_context *ctx, struct wl_event_loop *loop)
{
	int cores = cores_available();
	cores_budget_init(&ctx->cores, cores);
	/* Big pictures are scaled and copied in bands on the other cores. */
	bands_init(cores - 1);
	ctx->workers =
		workers_create(loop, workers_default_count(), sizeof(struct tools), tools_finish);
	return ctx->workers != NULL;
}

enum wire_compression encode_context_compression(const struct rc_encode_context *ctx,
	uint32_t viewer_caps)
{
	/* The configured one where the viewer decodes it, else the nearest it
	 * does: a browser decodes lz4 in its page, not zstd. */
	enum wire_compression kind = ctx->compression;
	if (kind == WIRE_COMPRESS_ZSTD && !(viewer_caps & WIRE_CAP_ZSTD)) {
		kind = WIRE_COMPRESS_LZ4;
	}
	if (kind == WIRE_COMPRESS_LZ4 && !(viewer_caps & WIRE_CAP_LZ4)) {
		kind = WIRE_COMPRESS_NONE;
	}
	if (kind != ctx->compression) {
		log_info("viewer lacks %s; sending frames %s%s",
			codec_compression_name(ctx->compression),
			kind == WIRE_COMPRESS_NONE ? "uncompressed" : "in ",
			kind == WIRE_COMPRESS_NONE ? "" : codec_compression_name(kind));
	}
	return kind;
}

void encode_context_finish(struct rc_encode_context *ctx)
{
	workers_destroy(ctx->workers);
	ctx->workers = NULL;
	bands_finish();
}

static void encode_run(struct rc_job *job, void *local);

static void encode_done(struct rc_job *job)
{
	struct rc_encoder *enc = wl_container_of(job, enc, job);
	enc->encoded(enc);
}

/* A frame (a copy_rect and its diff) in the encoder's buffer. */
#define OUT_LIMIT (2 * WIRE_HEADER_SIZE + 64 + WIRE_MAX_BODY)
/* Past this, the buffer is given back after each frame. */
#define OUT_KEEP (4u << 20)

bool encoder_init(struct rc_encoder *enc, uint32_t id, void (*encoded)(struct rc_encoder *enc))
{
	*enc = (struct rc_encoder){.id = id, .need_reset = true, .encoded = encoded};
	fit_init(&enc->fit);
	enc->job.run = encode_run;
	enc->job.done = encode_done;
	wl_list_init(&enc->job.link);
	pixman_region32_init(&enc->damage);
	pixman_region32_init(&enc->unfilled);
	buffer_init(&enc->out, OUT_LIMIT);
	return true;
}

void encoder_finish(struct rc_encoder *enc, struct rc_encode_context *ctx)
{
	if (ctx->workers) {
		workers_cancel(ctx->workers, &enc->job);
	}
	stream_drop(enc);
	scroll_finish(&enc->scroll);
	free(enc->sent);
	pixman_region32_fini(&enc->damage);
	pixman_region32_fini(&enc->unfilled);
	buffer_finish(&enc->out);
	*enc = (struct rc_encoder){.id = enc->id};
}

void encoder_reset(struct rc_encoder *enc)
{
	/* need_reset is the worker's while it runs; this reaches it at the
	 * next hand-off, and the frame being encoded now is dropped. */
	enc->reset_asked = true;
	enc->epoch++;
	enc->acked = enc->seq;
}

bool encoder_wants_tick(const struct rc_encoder *enc)
{
	return enc->video_shown || enc->reset_asked || (!encoder_busy(enc) && enc->need_reset);
}

bool encoder_in_flight(const struct rc_encoder *enc)
{
	return enc->acked != enc->seq;
}

bool encoder_acked(struct rc_encoder *enc, uint32_t seq, int64_t rtt_us)
{
	uint32_t ahead = seq - enc->acked;
	uint32_t outstanding = enc->seq - enc->acked;
	if (ahead > outstanding) {
		/* Old acks are ignored; one for a frame never sent is refused. */
		return (int32_t)ahead <= 0;
	}
	enc->acked = seq;
	/* The ack leaves the viewer at presentation, so this is the round
	 * trip plus the time the frame waited for the local frame callback. */
	if (rtt_us >= 0) {
		double ms = (double)rtt_us / 1000.0;
		enc->rtt_ms = enc->rtt_ms ? enc->rtt_ms * 0.8 + ms * 0.2 : ms;
	}
	return true;
}

static double damage_fraction(const struct rc_encoder *enc, pixman_region32_t *damage)
{
	uint64_t total = (uint64_t)enc->width * (uint64_t)enc->height;
	return total ? (double)region_area(damage) / (double)total : 0;
}

/* How many frames of motion a lossless frame of bytes counts for: one for
 * each LATE_US the link takes to carry it at its delivery rate (the
 * frames' or, if higher, the channel's), at least one; MOTION_FRAMES at
 * most. One while the rate is only a floor (link.measured): a terminal's
 * first page, on a link its small frames measured slow, is no sign that
 * lossless cannot keep pace. */
static int motion_weight(const struct rc_encoder *enc, size_t bytes)
{
	uint64_t rate = encode_link_capacity(&enc->link);
	if (rate == 0 || !enc->link.measured) {
		return 1;
	}
	uint64_t us = (uint64_t)bytes * 1000000 / rate;
	uint64_t n = us / LATE_US;
	return n < 1 ? 1 : (n > MOTION_FRAMES ? MOTION_FRAMES : (int)n);
}

/* Where bytes are cheap, lossless is the cheaper codec: on a local link (a
 * unix socket, loopback, a fast LAN: the link's minimum round trip under
 * LOCAL_RTT_US) that carries lossless at the frame rate in a quarter of its
 * measured rate, video would only spend CPU at both ends (x264 here, the
 * decoder there) that an app on the same cores would rather have. */
static bool bytes_are_cheap(const struct rc_encoder *enc, size_t bytes)
{
	const struct rc_encode_link *link = &enc->link;
	return link->link_min_rtt_us > 0 && link->link_min_rtt_us < LOCAL_RTT_US &&
		(uint64_t)bytes * (uint64_t)link->fps * 4 < link->link_rate;
}

enum rc_motion encoder_motion(const struct rc_encoder *enc)
{
	if (!enc->video_shown) {
		return RC_MOTION_FULL;
	}
	return enc->video_divisor > 1 ? RC_MOTION_SMALLER
				      : (enc->fit.slow ? RC_MOTION_SLOW : RC_MOTION_FULL);
}

/* The codec choice and the encoding, on a worker. */
static void encode_frame(struct rc_encoder *enc, struct tools *tools)
{
	struct image image = enc->image;
	pixman_region32_t *damage = &enc->damage;
	if (!lossless_fit(enc, image)) {
		pixman_region32_clear(damage);
		return;
	}
	if (enc->link.divisor > 0 && enc->link.divisor != enc->video_divisor) {
		/* A new size for the frame rate (fit.h): a stream in motion
		 * starts again at it. */
		enc->video_divisor = enc->link.divisor;
		enc->need_reset = enc->need_reset || enc->in_video;
	}
	if (enc->link.preset != enc->video_preset) {
		/* A preset for the cores at hand (fit.h): the same, at the
		 * bit rate the stream had reached (the link is the same). */
		enc->video_preset = enc->link.preset;
		enc->keep_bitrate = enc->in_video && !enc->need_reset;
		enc->need_reset = enc->need_reset || enc->in_video;
	}
	uint64_t now = monotonic_usec();
	struct lossless_sent sent;
	bool damaged = pixman_region32_not_empty(damage);
	enum rc_codec_mode mode = enc->link.mode;
	if (enc->in_video) {
		if (!damaged) {
			if (now - enc->last_change_us >= REFRESH_AFTER_US) {
				stream_stop(enc, damage, "motion stopped");
				lossless_send(enc, tools, image, damage, &sent);
			}
			return;
		}
		enc->last_change_us = now;
		bool still = damage_fraction(enc, damage) < STILL_FRACTION;
		enc->still_frames = still ? enc->still_frames + 1 : 0;
		if (mode == RC_CODEC_AUTO && enc->still_frames >= STILL_FRAMES) {
			stream_stop(enc, damage, "little motion");
			lossless_send(enc, tools, image, damage, &sent);
			return;
		}
		stream_send(enc, tools, image, damage);
		return;
	}
	/* What only fills out a picture (after a refresh, say: bands still
	 * fill it, and nothing of the part the viewer has changed again)
	 * stays lossless, also where video is forced. */
	bool refilling = false;
	if (pixman_region32_not_empty(&enc->unfilled) && !enc->need_reset) {
		pixman_region32_t had;
		pixman_region32_init(&had);
		pixman_region32_subtract(&had, damage, &enc->unfilled);
		refilling = !pixman_region32_not_empty(&had);
		pixman_region32_fini(&had);
	}
	/* Motion is frame after frame: the app drew this frame's change
	 * within two frame intervals of the last lossless frame (a game does,
	 * also one the link holds back), not after a pause (a page turned,
	 * even a few times a second): a change after a pause counts afresh. */
	bool sustained =
		enc->job_time_us <= enc->lossless_at_us + 2000000u / (unsigned)enc->link.fps;
	int motion_before = sustained ? enc->motion_frames : 0;
	/* An app that says its surface shows a game or a video moves: one
	 * frame of motion is enough to tell. */
	int motion_needed = enc->link.content >= RC_CONTENT_VIDEO ? 1 : MOTION_FRAMES;
	if (damaged && !refilling && mode != RC_CODEC_LOSSLESS && enc->link.video &&
		!enc->video_failed && (int64_t)enc->width * enc->height >= MIN_VIDEO_PIXELS &&
		(mode == RC_CODEC_VIDEO || (motion_before >= motion_needed && !enc->need_reset))) {
		if (stream_start(enc)) {
			if (mode != RC_CODEC_VIDEO) {
				log_debug("window %u: motion: to video after %d frames' worth "
					  "(%d needed%s)",
					enc->id, motion_before, motion_needed,
					motion_needed < MOTION_FRAMES ? ", as the app says it moves"
								      : "");
			}
			enc->need_reset = false;
			stream_send(enc, tools, image, damage);
			return;
		}
	}
	if (damaged || enc->need_reset) {
		bool reset = enc->need_reset;
		/* Sustained motion where bytes are cheap: what matters is the
		 * CPU the app shares, so compress fast and mostly skip the
		 * scroll search (a 3D scene does not scroll). Sustained is
		 * frame after frame at the frame rate, not a page now and then:
		 * a pager's pages stay small. */
		bool next = now - enc->lossless_at_us <= 2000000u / (unsigned)enc->link.fps;
		bool fast = enc->cheap_motion_frames >= MOTION_FRAMES && next && !reset;
		tools->compressor.fast = fast;
		enc->fast_frames = fast ? enc->fast_frames + 1 : 0;
		size_t out_before = buffer_size(&enc->out);
		bool produced_before = enc->produced;
		size_t bytes = lossless_send(enc, tools, image, damage, &sent);
		tools->compressor.fast = false;
		/* Motion is what lossless carries dearly: much of the window,
		 * frame after frame, at more than video would cost, both
		 * weighed after the scroll went as a copy_rect. A band stands
		 * for the damage it is part of (whole: what all of it would
		 * cost). While bands still fill a whole picture, the bands
		 * that fill it are no motion; much of the part the viewer has
		 * changing again is, where carrying that change again would
		 * cost more than a video frame (at what this frame's pixels
		 * cost): a game's moving picture, not a terminal's new line. */
		double video = stream_frame_bytes(enc);
		size_t whole = sent.share > 0 ? (size_t)((double)bytes / sent.share) : bytes;
		double area = (double)enc->width * enc->height;
		bool motion;
		if (sent.filling) {
			double per_pixel = sent.changed ? (double)bytes / (double)sent.changed
							: enc->lossless_ratio * 4;
			motion = bytes && !reset && sent.again > 0 &&
				(double)sent.again >= MOTION_FRACTION * (double)sent.have &&
				(double)sent.again * per_pixel > VIDEO_GAIN * video;
		} else {
			motion = bytes && !reset &&
				(double)sent.changed / sent.share >= MOTION_FRACTION * area;
		}
		bool cheap = bytes_are_cheap(enc, whole);
		bool moving = motion && (double)whole > VIDEO_GAIN * video && !cheap;
		int weight = moving ? motion_weight(enc, whole) : 0;
		if (moving && weight > 1 && motion_before + weight >= MOTION_FRAMES &&
			mode == RC_CODEC_AUTO && enc->link.video && !enc->video_failed &&
			(int64_t)enc->width * enc->height >= MIN_VIDEO_PIXELS) {
			/* Lossless cannot keep pace: this picture goes as video,
			 * now. What lossless_send made is dropped; the viewer's copy
			 * it updated is rebuilt by the refresh that ends video. */
			buffer_truncate(&enc->out, out_before);
			enc->produced = produced_before;
			if (stream_start(enc)) {
				log_debug("window %u: video at once: a lossless picture of %zu "
					  "bytes "
					  "would take %d00 ms or more",
					enc->id, whole, weight);
				stream_send(enc, tools, image, damage);
				return;
			}
			/* No stream: the lossless picture, whole, after all. */
			enc->need_reset = true;
			pixman_region32_union_rect(damage, damage, 0, 0, (unsigned)enc->width,
				(unsigned)enc->height);
			return;
		}
		if (bytes || reset) {
			enc->motion_frames = moving ? motion_before + weight : 0;
			enc->cheap_motion_frames =
				motion && cheap ? (next ? enc->cheap_motion_frames + 1 : 1) : 0;
			enc->lossless_at_us = now;
		}
		log_debug("window %u: lossless %zu bytes%s%s, %llu of %dx%d changed%s, video ~%.0f "
			  "bytes%s; link %.2f ms, %.0f Mbit/s",
			enc->id, bytes, enc->job_copies ? " after a copy_rect" : "",
			fast ? " (fast)" : "", (unsigned long long)sent.changed, enc->width,
			enc->height, sent.share < 1 ? " in a band" : "", video,
			bytes && cheap ? " (bytes are cheap: a local link)" : "",
			(double)enc->link.link_min_rtt_us / 1000,
			(double)enc->link.link_rate * 8 / 1e6);
	}
}

static void encode_run(struct rc_job *job, void *local)
{
	struct rc_encoder *enc = wl_container_of(job, enc, job);
	struct tools *tools = local;
	if (!tools_ready(tools, &enc->link)) {
		log_error("out of memory for a compressor; window %u waits", enc->id);
		return;
	}
	encode_frame(enc, tools);
}

void encoder_tick(struct rc_encoder *enc, bool busy)
{
	uint64_t now = monotonic_usec();
	if (!enc->video_shown) {
		/* Lossless frames cost what they cost: video is measured
		 * afresh. */
		fit_idle(&enc->fit, now);
		return;
	}
	fit_tick(&enc->fit, busy, now);
}

/* The size the next video frame goes at, from what the last ones did. */
static void choose_size(struct rc_encoder *enc, int fps, bool sharpness_first)
{
	if (!enc->video_shown) {
		return;
	}
	int divisor = enc->video_divisor > 1 ? enc->video_divisor : 1;
	int threads = enc->video ? video_encoder_threads(enc->video) : 1;
	int threads_larger = threads;
	if (divisor > 1 && enc->link.cores) {
		/* As stream_start() would take them, among as many streams. */
		int larger = divisor / 2;
		threads_larger = cores_share(enc->link.cores,
			(int64_t)(enc->width / larger) * (enc->height / larger),
			enc->video_streams);
	}
	struct rc_fit_cost cost = {
		.width = enc->width,
		.height = enc->height,
		.fps = fps,
		.divisor = divisor,
		.preset = enc->video_preset,
		.presets = !enc->video || video_encoder_has_presets(enc->video),
		.encode_us = enc->encode_us,
		.frames = enc->divisor_frames,
		.threads = threads,
		.threads_larger = threads_larger,
		.sharpness_first = sharpness_first,
	};
	fit_choose(&enc->fit, enc->id, &cost, monotonic_usec());
}

void encoder_send(struct rc_encoder *enc, struct rc_encode_context *ctx, struct rc_connection *conn,
	struct image image, pixman_region32_t *damage, int fps, uint32_t seq, uint32_t input_mark,
	uint64_t drawn_us)
{
	assert(!encoder_busy(enc));
	fps = fps > 0 ? fps : 60;
	bool sharpness_first = ctx->sharpness_first || enc->content == RC_CONTENT_PHOTO;
	choose_size(enc, fps, sharpness_first);
	enc->job_mark = input_mark;
	enc->job_time_us = drawn_us;
	enc->link = (struct rc_encode_link){
		.mode = ctx->mode,
		.sharpness_first = sharpness_first,
		.content = enc->content,
		.compression = conn->compression,
		.compression_level = ctx->compression_level,
		.dump_dir = ctx->dump_dir,
		.test_us_per_mpixel = ctx->test_us_per_mpixel,
		.video = conn->video,
		.copy_rect = conn->copy_rect,
		.replace = conn->replace,
		.rate = flow_rate(&conn->flow),
		.min_rtt_us = conn->flow.min_rtt_us,
		.rtt_ms = enc->rtt_ms,
		.link_min_rtt_us = conn->channel.pace.min_rtt_us,
		.link_rate = pace_rate(&conn->channel.pace),
		.measured = conn->flow.measured || conn->channel.pace.measured,
		.link_queued = channel_queued_class(&conn->channel, CHANNEL_FOCUS) +
			channel_queued_class(&conn->channel, CHANNEL_FRAMES),
		.fps = fps,
		.divisor = enc->fit.divisor,
		.preset = enc->fit.preset,
		.frame_max = connection_frame_max(conn),
		.cores = &ctx->cores,
	};
	if (enc->reset_asked) {
		enc->need_reset = true;
		enc->reset_asked = false;
	}
	enc->image = image;
	pixman_region32_copy(&enc->damage, damage);
	pixman_region32_clear(damage);
	enc->job_seq = seq;
	enc->job_epoch = enc->epoch;
	enc->job_copies = 0;
	enc->produced = false;
	buffer_truncate(&enc->out, 0);
	workers_submit(ctx->workers, &enc->job);
}

/* Queues the frame made's job made (enc's own, or its lead's) for enc's
 * viewer, and books it as enc's. */
static void queue_frame(struct rc_encoder *enc, const struct rc_encoder *made,
	struct rc_connection *conn, uint32_t input_mark)
{
	size_t bytes = buffer_size(&made->out);
	if (!connection_send_frame(conn, enc->id, input_mark, buffer_head(&made->out), bytes,
		    &enc->queued)) {
		log_error("viewer is not reading; frames of window %u wait", enc->id);
		enc->reset_asked = true;
		return;
	}
	enc->seq = made->job_seq;
	enc->stat_frames++;
	enc->stat_copies += made->job_copies;
	enc->stat_bytes += bytes;
	connection_frame_sent(conn, enc->id, enc->seq, (uint32_t)bytes, monotonic_usec());
	log_debug("window %u: frame %u sent, %zu bytes", enc->id, enc->seq, bytes);
}

void encoder_deliver(struct rc_encoder *enc, struct rc_connection *conn, pixman_region32_t *damage)
{
	enc->video_shown = enc->in_video;
	enc->bitrate_shown = enc->bitrate;
	enc->video_name = enc->video ? video_encoder_name(enc->video) : NULL;
	enc->preset_shown = enc->video ? video_encoder_preset(enc->video) : 0;
	enc->qp_shown = enc->video ? video_encoder_qp(enc->video) : 0;
	if (enc->video) {
		video_encoder_picture(enc->video, &enc->picture_shown[0], &enc->picture_shown[1]);
	}
	enc->threads_shown = enc->video ? video_encoder_threads(enc->video) : 0;
	enc->encode_us_shown = enc->encode_us;
	enc->streams_shown = enc->video_streams;
	/* Damage the job did not send (a failure, or a refresh it asked for)
	 * waits for the next frame. */
	pixman_region32_union(damage, damage, &enc->damage);
	pixman_region32_clear(&enc->damage);
	size_t bytes = buffer_size(&enc->out);
	if (enc->job_epoch != enc->epoch || !conn || !conn->welcomed || conn->closing) {
		/* The viewer was reset (or left) meanwhile: the frame was meant
		 * for a copy it no longer holds. The next one is whole. */
		enc->reset_asked = true;
	} else if (enc->produced && bytes) {
		queue_frame(enc, enc, conn, enc->job_mark);
	}
	buffer_truncate(&enc->out, 0);
	if (enc->out.capacity > OUT_KEEP) {
		buffer_finish(&enc->out);
		buffer_init(&enc->out, OUT_LIMIT);
	}
}

void encoder_deliver_copy(struct rc_encoder *enc, const struct rc_encoder *lead,
	struct rc_connection *conn, uint32_t input_mark, pixman_region32_t *damage)
{
	enc->video_shown = lead->in_video;
	enc->bitrate_shown = lead->bitrate;
	enc->video_name = lead->video ? video_encoder_name(lead->video) : NULL;
	enc->preset_shown = lead->video ? video_encoder_preset(lead->video) : 0;
	enc->qp_shown = lead->video ? video_encoder_qp(lead->video) : 0;
	enc->picture_shown[0] = lead->picture_shown[0];
	enc->picture_shown[1] = lead->picture_shown[1];
	enc->threads_shown = lead->video ? video_encoder_threads(lead->video) : 0;
	enc->encode_us_shown = lead->encode_us;
	enc->streams_shown = lead->video_streams;
	enc->link.compression = lead->link.compression;
	enc->link.cores = lead->link.cores;
	enc->video_divisor = lead->video_divisor;
	enc->video_preset = lead->video_preset;
	enc->fit = lead->fit;
	enc->encode_us = lead->encode_us;
	pixman_region32_union(damage, damage, &lead->damage);
	size_t bytes = buffer_size(&lead->out);
	if (lead->job_epoch != lead->epoch || enc->reset_asked || !conn || !conn->welcomed ||
		conn->closing) {
		enc->reset_asked = true;
	} else if (lead->produced && bytes) {
		queue_frame(enc, lead, conn, input_mark);
	}
}

bool encoder_streaming(const struct rc_encoder *enc)
{
	return !encoder_busy(enc) && (enc->in_video || enc->video_shown);
}

bool encoder_wants_whole(const struct rc_encoder *enc)
{
	return enc->reset_asked || (!encoder_busy(enc) && enc->need_reset);
}

void encoder_follow(struct rc_encoder *enc)
{
	/* The whole picture it waits for comes in the lead's new stream, and
	 * a stream of its own ends. */
	enc->reset_asked = false;
	enc->need_reset = false;
	stream_drop(enc);
	enc->in_video = false;
}

/* The part of enc's copy its picture has filled since its last reset: the
 * rest (unfilled) is zero, and may never have been touched. */
static void filled(const struct rc_encoder *enc, pixman_region32_t *out)
{
	pixman_region32_init_rect(out, 0, 0, (unsigned)enc->width, (unsigned)enc->height);
	pixman_region32_subtract(out, out, (pixman_region32_t *)&enc->unfilled);
}

/* pixman_region32_equal compares extents too, and an emptied region keeps
 * wherever its extents collapsed: two empty regions may differ by it. */
static bool same_region(const pixman_region32_t *a, const pixman_region32_t *b)
{
	pixman_region32_t *x = (pixman_region32_t *)a, *y = (pixman_region32_t *)b;
	bool empty_x = !pixman_region32_not_empty(x), empty_y = !pixman_region32_not_empty(y);
	return empty_x || empty_y ? empty_x && empty_y : pixman_region32_equal(x, y);
}

bool encoder_can_share(const struct rc_encoder *a, const struct rc_encoder *b)
{
	if (encoder_busy(a) || encoder_busy(b) || !a->sent || !b->sent || a->in_video ||
		b->in_video || a->video_shown || b->video_shown || a->need_reset || b->need_reset ||
		a->reset_asked || b->reset_asked || a->width != b->width ||
		a->height != b->height || !same_region(&a->unfilled, &b->unfilled)) {
		return false;
	}
	/* Both are zero where unfilled: compare the rest only. Reading the
	 * untouched rest would make it resident (on some kernels a read of a
	 * fresh page takes a page), a whole window for a viewer that never
	 * reads. */
	pixman_region32_t same;
	filled(a, &same);
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(&same, &n);
	bool equal = true;
	for (int i = 0; i < n && equal; i++) {
		for (int32_t y = boxes[i].y1; y < boxes[i].y2 && equal; y++) {
			size_t at = (size_t)y * (size_t)a->width + (size_t)boxes[i].x1;
			equal = memcmp(a->sent + at, b->sent + at,
					(size_t)(boxes[i].x2 - boxes[i].x1) * 4) == 0;
		}
	}
	pixman_region32_fini(&same);
	return equal;
}

void encoder_take_state(struct rc_encoder *enc, const struct rc_encoder *lead)
{
	if (encoder_busy(lead) || lead->in_video || lead->video_shown || !lead->sent ||
		lead->need_reset || lead->reset_asked) {
		/* Mid-stream or mid-job: what the viewer holds is not known
		 * here; its next frame is whole. */
		encoder_reset(enc);
		return;
	}
	bool fresh = !enc->sent || enc->width != lead->width || enc->height != lead->height;
	if (fresh) {
		free(enc->sent);
		enc->sent = calloc((size_t)lead->width * (size_t)lead->height, 4);
		if (!enc->sent) {
			enc->width = enc->height = 0;
			encoder_reset(enc);
			return;
		}
		enc->width = lead->width;
		enc->height = lead->height;
	}
	/* The lead's copy is zero where its picture is still unfilled (a reset
	 * cleared it, and no band has reached there since). Copy only what is
	 * filled: a fresh copy leaves the rest untouched, so a viewer that
	 * never reads, beside others in step, holds the rows it was sent and
	 * not a whole window (64 MiB at 4096x4096). */
	pixman_region32_t done;
	filled(lead, &done);
	int n;
	const pixman_box32_t *boxes = pixman_region32_rectangles(&done, &n);
	for (int i = 0; i < n; i++) {
		for (int32_t y = boxes[i].y1; y < boxes[i].y2; y++) {
			size_t at = (size_t)y * (size_t)lead->width + (size_t)boxes[i].x1;
			memcpy(enc->sent + at, lead->sent + at,
				(size_t)(boxes[i].x2 - boxes[i].x1) * 4);
		}
	}
	if (!fresh) {
		boxes = pixman_region32_rectangles((pixman_region32_t *)&lead->unfilled, &n);
		for (int i = 0; i < n; i++) {
			for (int32_t y = boxes[i].y1; y < boxes[i].y2; y++) {
				size_t at = (size_t)y * (size_t)lead->width + (size_t)boxes[i].x1;
				memset(enc->sent + at, 0, (size_t)(boxes[i].x2 - boxes[i].x1) * 4);
			}
		}
	}
	enc->sent_clean = fresh && !pixman_region32_not_empty(&done);
	pixman_region32_fini(&done);
	pixman_region32_copy(&enc->unfilled, &lead->unfilled);
	enc->band_y = lead->band_y;
	scroll_forget(&enc->scroll);
	stream_drop(enc);
	enc->in_video = enc->new_stream = false;
	/* Its motion counts stay its own: they weigh its link. */
	enc->replace_won = lead->replace_won;
	enc->large_frames = lead->large_frames;
	enc->lossless_at_us = lead->lossless_at_us;
	enc->last_change_us = lead->last_change_us;
	enc->video_divisor = lead->video_divisor;
	enc->video_preset = lead->video_preset;
	enc->fit = lead->fit;
}

void encoder_describe(const struct rc_encoder *enc, char *out, size_t size)
{
	if (enc->video_shown && enc->video_name) {
		int cores = enc->link.cores ? enc->link.cores->total : 1;
		int n = snprintf(out, size,
			"video %s %.2f Mbit/s on %d thread%s (%d core%s, %d stream%s), "
			"%.1f ms a frame, %s at QP %.0f",
			enc->video_name, (double)enc->bitrate_shown / 1e6, enc->threads_shown,
			enc->threads_shown == 1 ? "" : "s", cores, cores == 1 ? "" : "s",
			enc->streams_shown, enc->streams_shown == 1 ? "" : "s",
			(double)enc->encode_us_shown / 1000, wire_preset_names[enc->preset_shown],
			enc->qp_shown);
		if (n > 0 && (size_t)n < size && encoder_motion(enc) == RC_MOTION_SMALLER) {
			snprintf(out + n, size - (size_t)n, " at 1/%d size for the frame rate (%s)",
				enc->video_divisor, enc->fit.why);
		} else if (n > 0 && (size_t)n < size && encoder_motion(enc) == RC_MOTION_SLOW) {
			snprintf(out + n, size - (size_t)n,
				" too slow for the frame rate (%s; sharpness first)", enc->fit.why);
		}
	} else {
		snprintf(out, size, "lossless %s", codec_compression_name(enc->link.compression));
	}
}
