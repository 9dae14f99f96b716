/*
 * Encoding frames: the codec choice per window, the lossless diff (after any
 * scroll) and the video stream, written straight into the connection's send
 * queue.
 *
 * The choice (written down in the README) is made from what each codec would
 * cost, not from how much was damaged. A window goes to video only after
 * MOTION_FRAMES lossless frames in a row that each changed at least
 * MOTION_FRACTION of it (after any scroll was taken out) and each cost more
 * than VIDEO_GAIN times what a video frame would at the bit rate video
 * would get now, on a link where bytes are not cheap (bytes_are_cheap: a
 * local link with room for lossless, where video would only cost CPU).
 * On such a link, motion frame after frame is made fast (see encode_frame):
 * compressed fast, with the scroll search mostly skipped.
 * First pictures, resizes and every other reset frame are
 * lossless and do not count, so a new window is never sent as video; a
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

#include "connection.h"
#include "cores.h"
#include "encode.h"
#include "log.h"
#include "monotonic.h"
#include "video.h"
#include "workers.h"

/* Rectangles per frame before the damage is sent as its bounding box. */
#define MAX_FRAME_RECTS 64
static_assert(MAX_FRAME_RECTS <= WIRE_MAX_RECTS, "the encoder sends what the wire allows");

#define MOTION_FRAMES 4
#define MOTION_FRACTION 0.1
#define VIDEO_GAIN 2
#define LOCAL_RTT_US 1000 /* a link whose round trip is under this is local */
/* In cheap motion the scroll search runs only on every this many frames:
 * enough to find a scroll that starts, which ends the motion. */
#define FAST_SCROLL_EVERY 8
#define STILL_FRAMES 10
#define STILL_FRACTION 0.1
#define REFRESH_AFTER_US (150 * 1000)
#define MIN_VIDEO_PIXELS (64 * 64)
#define INITIAL_BITRATE 4000000
#define MIN_BITRATE 200000

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
	cores_budget_init(&ctx->cores, cores_available());
	ctx->workers =
		workers_create(loop, workers_default_count(), sizeof(struct tools), tools_finish);
	return ctx->workers != NULL;
}

enum wire_compression encode_context_compression(const struct rc_encode_context *ctx,
	uint32_t viewer_caps)
{
	enum wire_compression kind = ctx->compression;
	if ((kind == WIRE_COMPRESS_LZ4 && !(viewer_caps & WIRE_CAP_LZ4)) ||
		(kind == WIRE_COMPRESS_ZSTD && !(viewer_caps & WIRE_CAP_ZSTD))) {
		log_info("viewer lacks %s; sending frames uncompressed",
			codec_compression_name(kind));
		kind = WIRE_COMPRESS_NONE;
	}
	return kind;
}

void encode_context_finish(struct rc_encode_context *ctx)
{
	workers_destroy(ctx->workers);
	ctx->workers = NULL;
}

static void encode_run(struct rc_job *job, void *local);

/* Ends the window's video stream, and gives its threads back. */
static void drop_video(struct rc_encoder *enc)
{
	video_encoder_destroy(enc->video);
	enc->video = NULL;
	if (enc->cores_held) {
		cores_give(enc->cores_held);
		enc->cores_held = NULL;
	}
}

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
	drop_video(enc);
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

/* The viewer's copy follows the image's size; a new size starts whole. */
static bool fit_sent(struct rc_encoder *enc, struct image image)
{
	if (enc->sent && enc->width == image.width && enc->height == image.height) {
		return true;
	}
	free(enc->sent);
	enc->sent = calloc((size_t)image.width * (size_t)image.height, 4);
	if (!enc->sent) {
		log_error("out of memory for a %dx%d window", image.width, image.height);
		enc->width = enc->height = 0;
		return false;
	}
	enc->width = image.width;
	enc->height = image.height;
	enc->sent_clean = true;
	enc->need_reset = true;
	return true;
}

/* Writes the copy the viewer was sent as a binary PPM, for tests. */
static void dump(const struct rc_encoder *enc, const char *dir)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/window-%u.ppm", dir, enc->id);
	/* Each viewer's encoder writes its own, and the last rename wins. */
	snprintf(tmp, sizeof(tmp), "%s.%lx.tmp", path, (unsigned long)(uintptr_t)enc);
	FILE *f = fopen(tmp, "wb");
	uint8_t *row = malloc((size_t)enc->width * 3);
	if (!f || !row) {
		log_error("cannot write %s: %s", tmp, strerror(errno));
		if (f) {
			fclose(f);
		}
		free(row);
		return;
	}
	fprintf(f, "P6\n%d %d\n255\n", enc->width, enc->height);
	for (int32_t y = 0; y < enc->height; y++) {
		const uint32_t *src = enc->sent + (size_t)y * enc->width;
		for (int32_t x = 0; x < enc->width; x++) {
			row[x * 3 + 0] = (uint8_t)(src[x] >> 16);
			row[x * 3 + 1] = (uint8_t)(src[x] >> 8);
			row[x * 3 + 2] = (uint8_t)src[x];
		}
		fwrite(row, 3, (size_t)enc->width, f);
	}
	free(row);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		log_error("cannot write %s: %s", path, strerror(errno));
	}
}

/* Moves what scrolled in the viewer's copy with a copy_rect, appended to
 * out: the diff that follows then carries only what is new. */
static bool send_scroll(struct rc_encoder *enc, struct buffer *out, struct image cur,
	struct wire_rect box)
{
	struct image base = {enc->sent, enc->width, enc->height, enc->width};
	struct scroll_move move;
	if (!scroll_find(&enc->scroll, &cur, &base, box, &move)) {
		return false;
	}
	struct wire_msg msg = {
		.type = WIRE_COPY_RECT,
		.copy_rect = {enc->id, move.src.x, move.src.y, move.src.width, move.src.height,
			move.dx, move.dy},
	};
	if (!wire_encode(out, &msg)) {
		return false;
	}
	codec_copy(&base, move.src, move.dx, move.dy);
	enc->job_copies++;
	return true;
}

/*
 * A frame's payload is the XOR with the viewer's copy (near zero where
 * little changed) or the new pixels (WIRE_FRAME_REPLACE; better where the
 * content is new, as a new page of text: XOR would mix two pages' glyphs).
 * Small frames try both and send the smaller; large ones try both every
 * TRY_BOTH_EVERY frames and otherwise make only the last winner. A whole
 * frame is XOR with zeros, the pixels themselves.
 */
#define TRY_BOTH_BYTES (256 * 1024)
#define TRY_BOTH_EVERY 8

struct payloads {
	bool diff, pixels; /* which to make: the XOR, the new pixels */
	bool both; /* and compare */
};

static struct payloads choose_payloads(struct rc_encoder *enc, bool reset, uint64_t raw)
{
	bool replace = enc->link.replace && !reset;
	bool both = replace && (raw <= TRY_BOTH_BYTES || enc->large_frames++ % TRY_BOTH_EVERY == 0);
	bool pixels = replace && (both || enc->replace_won);
	return (struct payloads){.diff = !pixels || both, .pixels = pixels, .both = both};
}

/* Appends the frame with the payload chosen, or the smaller of both. */
static bool append_payload(struct rc_encoder *enc, struct tools *tools, struct payloads made,
	struct wire_frame frame, size_t raw)
{
	struct buffer *out = &enc->out;
	struct compressor *comp = &tools->compressor;
	struct wire_frame replace = frame;
	replace.flags |= WIRE_FRAME_REPLACE;
	if (!made.both) {
		return made.pixels ? codec_append_frame(out, replace, comp, tools->pixels, raw) > 0
				   : codec_append_frame(out, frame, comp, tools->scratch, raw) > 0;
	}
	size_t start = buffer_size(out);
	size_t diff = codec_append_frame(out, frame, comp, tools->scratch, raw);
	buffer_truncate(&tools->alt, 0);
	size_t pixels = codec_append_frame(&tools->alt, replace, comp, tools->pixels, raw);
	enc->replace_won = pixels && (!diff || pixels < diff);
	if (!enc->replace_won) {
		return diff > 0;
	}
	buffer_truncate(out, start);
	return buffer_append(out, buffer_head(&tools->alt), pixels);
}

static uint64_t region_area(pixman_region32_t *region)
{
	int n = 0;
	pixman_box32_t *boxes = pixman_region32_rectangles(region, &n);
	uint64_t area = 0;
	for (int i = 0; i < n; i++) {
		area += (uint64_t)(boxes[i].x2 - boxes[i].x1) *
			(uint64_t)(boxes[i].y2 - boxes[i].y1);
	}
	return area;
}

/*
 * A frame carries at most link.frame_max raw bytes (the link's say, see
 * connection_frame_max): more damage than that goes as a band of rows, and
 * the rest waits in the damage for the next frames, which take the bands
 * below in turn (from the newest image, as all damage does), so a slow or
 * stalled viewer holds at most a band of a huge window, not the window.
 * Moves what lies outside this frame's band from damage to rest; returns
 * the share of the damaged pixels the band holds (1: all).
 */
static double take_band(struct rc_encoder *enc, pixman_region32_t *damage, pixman_region32_t *rest)
{
	pixman_box32_t extents = *pixman_region32_extents(damage);
	uint64_t row = (uint64_t)(extents.x2 - extents.x1) * 4;
	int32_t rows = row ? (int32_t)(enc->link.frame_max / row) : 0;
	rows = rows > 0 ? rows : 1;
	if ((int64_t)(extents.y2 - extents.y1) <= rows) {
		enc->band_y = 0;
		return 1;
	}
	/* From where the last band ended, wrapping, so every row gets its
	 * turn while the window changes everywhere at every tick. */
	int32_t y0 =
		enc->band_y > extents.y1 && enc->band_y < extents.y2 ? enc->band_y : extents.y1;
	uint64_t all = region_area(damage);
	pixman_region32_copy(rest, damage);
	pixman_region32_intersect_rect(damage, damage, extents.x1, y0,
		(unsigned)(extents.x2 - extents.x1), (unsigned)rows);
	if (!pixman_region32_not_empty(damage)) {
		/* Nothing damaged in that band: the next one down, from the top. */
		pixman_region32_intersect_rect(damage, rest, extents.x1, extents.y1,
			(unsigned)(extents.x2 - extents.x1), (unsigned)rows);
		y0 = extents.y1;
	}
	pixman_region32_subtract(rest, rest, damage);
	enc->band_y = y0 + rows;
	uint64_t band = region_area(damage);
	return all ? (double)band / (double)all : 1;
}

/* Encodes what changed as a lossless frame into enc->out; returns its bytes
 * (0: none) and, in *changed, how many pixels the diff carries. A frame of
 * one band of the damage (take_band) returns, in *share, the part of the
 * damage it holds; what it left waits in damage. */
static size_t send_lossless(struct rc_encoder *enc, struct tools *tools, struct image cur,
	pixman_region32_t *damage, uint64_t *changed, double *share)
{
	*changed = 0;
	struct image base = {enc->sent, enc->width, enc->height, enc->width};
	uint16_t flags = 0;
	if (enc->need_reset) {
		if (!enc->sent_clean) {
			memset(enc->sent, 0, (size_t)enc->width * enc->height * 4);
			enc->sent_clean = true;
		}
		scroll_forget(&enc->scroll);
		pixman_region32_union_rect(damage, damage, 0, 0, (unsigned)enc->width,
			(unsigned)enc->height);
		flags |= WIRE_FRAME_RESET;
	}
	pixman_region32_t rest;
	pixman_region32_init(&rest);
	*share = take_band(enc, damage, &rest);
	/* What of a whole picture this frame leaves, the next bands fill. */
	if (flags & WIRE_FRAME_RESET) {
		pixman_region32_copy(&enc->unfilled, &rest);
	} else {
		pixman_region32_subtract(&enc->unfilled, &enc->unfilled, damage);
	}

	struct buffer *out = &enc->out;
	size_t before = buffer_size(out);
	pixman_box32_t extents = *pixman_region32_extents(damage);
	struct wire_rect box = {extents.x1, extents.y1, extents.x2 - extents.x1,
		extents.y2 - extents.y1};
	/* fast_frames is 0 unless this frame is made fast (encode_frame); a
	 * band of a larger change is no scroll. */
	bool search = enc->fast_frames % FAST_SCROLL_EVERY == 0 && *share == 1;
	bool copied = !(flags & WIRE_FRAME_RESET) && enc->link.copy_rect && search &&
		send_scroll(enc, out, cur, box);

	int n = 0;
	pixman_box32_t *boxes = pixman_region32_rectangles(damage, &n);
	if (n > MAX_FRAME_RECTS) {
		boxes = &extents;
		n = 1;
	}
	struct wire_rect rects[MAX_FRAME_RECTS];
	uint8_t packed[MAX_FRAME_RECTS * WIRE_RECT_SIZE];
	uint32_t nrects = 0;
	uint64_t raw_size = 0;
	for (int i = 0; i < n; i++) {
		struct wire_rect r = {boxes[i].x1, boxes[i].y1, boxes[i].x2 - boxes[i].x1,
			boxes[i].y2 - boxes[i].y1};
		/* Send only what really changed since the viewer's copy. */
		if (r.width > 0 && r.height > 0 && codec_rect_shrink(&cur, &base, &r)) {
			wire_put_rect(packed, nrects, r);
			rects[nrects++] = r;
			raw_size += (uint64_t)r.width * r.height * 4;
		}
	}
	/* What this frame does not carry waits for the next. */
	pixman_region32_copy(damage, &rest);
	pixman_region32_fini(&rest);
	if (nrects == 0 && !(flags & WIRE_FRAME_RESET) && !copied) {
		scroll_sent(&enc->scroll, box);
		return 0;
	}
	struct payloads made = choose_payloads(enc, flags & WIRE_FRAME_RESET, raw_size);
	size_t need = raw_size ? raw_size : 1;
	if ((made.diff && !memory_grow((void **)&tools->scratch, &tools->scratch_size, need)) ||
		(made.pixels && !memory_grow((void **)&tools->pixels, &tools->pixels_size, need))) {
		log_error("out of memory encoding a frame of window %u; resending it whole",
			enc->id);
		buffer_truncate(out, before);
		enc->need_reset = true;
		return 0;
	}
	if (made.pixels) {
		codec_pixels_encode(&cur, rects, nrects, tools->pixels);
	}
	if (made.diff) {
		codec_diff_encode(&cur, &base, rects, nrects, tools->scratch);
	} else {
		codec_rects_copy(&cur, &base, rects, nrects);
	}
	enc->sent_clean = false;
	size_t written = (size_t)raw_size;

	struct wire_frame frame = {
		.window = enc->id,
		.seq = enc->job_seq,
		.time_us = enc->job_time_us,
		.width = enc->width,
		.height = enc->height,
		.codec = WIRE_CODEC_XOR,
		.flags = flags,
		.nrects = nrects,
		.rects = packed,
	};
	if (!append_payload(enc, tools, made, frame, written)) {
		/* The viewer's copy no longer matches ours: resend it whole. */
		log_error("cannot encode a frame of window %u; resending it whole", enc->id);
		buffer_truncate(out, before);
		enc->need_reset = true;
		return 0;
	}
	/* The copy_rect and its frame count as one frame. */
	enc->produced = true;
	enc->need_reset = false;
	scroll_sent(&enc->scroll, box);
	if (enc->link.dump_dir) {
		dump(enc, enc->link.dump_dir);
	}
	*changed = raw_size / 4;
	return buffer_size(out) - before;
}

static double damage_fraction(const struct rc_encoder *enc, pixman_region32_t *damage)
{
	uint64_t total = (uint64_t)enc->width * (uint64_t)enc->height;
	return total ? (double)region_area(damage) / (double)total : 0;
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
static double video_frame_bytes(const struct rc_encoder *enc)
{
	int64_t rate = (int64_t)enc->link.rate * 8 * 8 / 10;
	rate = clamp_bitrate(enc, rate > 0 ? rate : INITIAL_BITRATE);
	return (double)rate / 8.0 / enc->link.fps; /* fps > 0: see encoder_send */
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

static void stop_video(struct rc_encoder *enc, pixman_region32_t *damage, const char *why)
{
	log_debug("window %u: back to lossless (%s)", enc->id, why);
	drop_video(enc);
	enc->in_video = false;
	enc->motion_frames = 0;
	enc->cheap_motion_frames = 0;
	enc->still_frames = 0;
	/* The viewer's copy is lossy: refresh all of it, losslessly. */
	enc->need_reset = true;
	pixman_region32_union_rect(damage, damage, 0, 0, (unsigned)enc->width,
		(unsigned)enc->height);
}

static bool start_video(struct rc_encoder *enc)
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
		drop_video(enc);
		log_error("window %u stays lossless: %s", enc->id, err);
		enc->video_failed = true;
		return false;
	}
	enc->video_threads = video_encoder_threads(enc->video);
	log_debug("window %u: video with %s on %d threads (%d cores, %d streams now)", enc->id,
		video_encoder_name(enc->video), enc->video_threads,
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

enum rc_motion encoder_motion(const struct rc_encoder *enc)
{
	if (!enc->video_shown) {
		return RC_MOTION_FULL;
	}
	return enc->video_divisor > 1 ? RC_MOTION_SMALLER
				      : (enc->fit.slow ? RC_MOTION_SLOW : RC_MOTION_FULL);
}

static void send_video(struct rc_encoder *enc, struct tools *tools, struct image cur,
	pixman_region32_t *damage)
{
	uint64_t now = monotonic_usec();
	if (enc->need_reset) {
		/* A new viewer, or a new size: a new stream. */
		drop_video(enc);
		enc->need_reset = false;
		if (!start_video(enc)) {
			enc->need_reset = true;
			enc->in_video = false;
			uint64_t changed;
			double share;
			send_lossless(enc, tools, cur, damage, &changed, &share);
			return;
		}
	}
	pixman_region32_clear(damage);
	struct wire_frame frame = {
		.window = enc->id,
		.seq = enc->job_seq,
		.time_us = enc->job_time_us,
		.width = enc->width,
		.height = enc->height,
		.flags = enc->new_stream ? WIRE_FRAME_RESET : 0,
	};
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
		stop_video(enc, damage, "encoder failure");
		return;
	}
	if (bytes) {
		enc->new_stream = false;
		enc->produced = true;
	}
}

/* The codec choice and the encoding, on a worker. */
static void encode_frame(struct rc_encoder *enc, struct tools *tools)
{
	struct image image = enc->image;
	pixman_region32_t *damage = &enc->damage;
	if (!fit_sent(enc, image)) {
		pixman_region32_clear(damage);
		return;
	}
	if (enc->link.divisor > 0 && enc->link.divisor != enc->video_divisor) {
		/* A new size for the frame rate (fit.h): a stream in motion
		 * starts again at it. */
		enc->video_divisor = enc->link.divisor;
		enc->need_reset = enc->need_reset || enc->in_video;
	}
	uint64_t now = monotonic_usec();
	uint64_t changed;
	double share;
	bool damaged = pixman_region32_not_empty(damage);
	enum rc_codec_mode mode = enc->link.mode;
	if (enc->in_video) {
		if (!damaged) {
			if (now - enc->last_change_us >= REFRESH_AFTER_US) {
				stop_video(enc, damage, "motion stopped");
				send_lossless(enc, tools, image, damage, &changed, &share);
			}
			return;
		}
		enc->last_change_us = now;
		bool still = damage_fraction(enc, damage) < STILL_FRACTION;
		enc->still_frames = still ? enc->still_frames + 1 : 0;
		if (mode == RC_CODEC_AUTO && enc->still_frames >= STILL_FRAMES) {
			stop_video(enc, damage, "little motion");
			send_lossless(enc, tools, image, damage, &changed, &share);
			return;
		}
		send_video(enc, tools, image, damage);
		return;
	}
	if (damaged && mode != RC_CODEC_LOSSLESS && enc->link.video && !enc->video_failed &&
		(int64_t)enc->width * enc->height >= MIN_VIDEO_PIXELS &&
		(mode == RC_CODEC_VIDEO ||
			(enc->motion_frames >= MOTION_FRAMES && !enc->need_reset))) {
		if (start_video(enc)) {
			enc->need_reset = false;
			send_video(enc, tools, image, damage);
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
		bool filling = pixman_region32_not_empty(&enc->unfilled);
		size_t bytes = send_lossless(enc, tools, image, damage, &changed, &share);
		tools->compressor.fast = false;
		/* Motion is what lossless carries dearly: much of the window,
		 * frame after frame, at more than video would cost. A band
		 * stands for the damage it is part of; the bands that fill a
		 * whole picture are no motion. */
		double video = video_frame_bytes(enc);
		size_t whole = share > 0 ? (size_t)((double)bytes / share) : bytes;
		bool motion = bytes && !reset && !filling &&
			(double)changed / share >= MOTION_FRACTION * enc->width * enc->height;
		bool cheap = bytes_are_cheap(enc, whole);
		bool moving = motion && (double)whole > VIDEO_GAIN * video && !cheap;
		if (bytes || reset) {
			enc->motion_frames = moving ? enc->motion_frames + 1 : 0;
			enc->cheap_motion_frames =
				motion && cheap ? (next ? enc->cheap_motion_frames + 1 : 1) : 0;
			enc->lossless_at_us = now;
		}
		log_debug("window %u: lossless %zu bytes%s, %llu of %dx%d changed, video ~%.0f "
			  "bytes%s",
			enc->id, bytes, fast ? " (fast)" : "", (unsigned long long)changed,
			enc->width, enc->height, video,
			bytes && cheap ? " (bytes are cheap: a local link)" : "");
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
	struct rc_fit_cost cost = {
		.width = enc->width,
		.height = enc->height,
		.fps = fps,
		.divisor = enc->video_divisor > 1 ? enc->video_divisor : 1,
		.encode_us = enc->encode_us,
		.frames = enc->divisor_frames,
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
	choose_size(enc, fps, ctx->sharpness_first);
	enc->job_mark = input_mark;
	enc->job_time_us = drawn_us;
	enc->link = (struct rc_encode_link){
		.mode = ctx->mode,
		.sharpness_first = ctx->sharpness_first,
		.compression = conn->compression,
		.compression_level = ctx->compression_level,
		.dump_dir = ctx->dump_dir,
		.video = conn->video,
		.copy_rect = conn->copy_rect,
		.replace = conn->replace,
		.rate = flow_rate(&conn->flow),
		.min_rtt_us = conn->flow.min_rtt_us,
		.rtt_ms = enc->rtt_ms,
		.link_min_rtt_us = conn->channel.pace.min_rtt_us,
		.link_rate = pace_rate(&conn->channel.pace),
		.fps = fps,
		.divisor = enc->fit.divisor,
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
	enc->threads_shown = enc->video ? enc->video_threads : 0;
	enc->encode_us_shown = enc->encode_us;
	enc->streams_shown = enc->video_streams;
	enc->cores_shown = enc->link.cores ? enc->link.cores->total : 1;
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
	enc->threads_shown = lead->video ? lead->video_threads : 0;
	enc->encode_us_shown = lead->encode_us;
	enc->streams_shown = lead->video_streams;
	enc->cores_shown = lead->link.cores ? lead->link.cores->total : 1;
	enc->link.compression = lead->link.compression;
	enc->video_divisor = lead->video_divisor;
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
	drop_video(enc);
	enc->in_video = false;
}

bool encoder_can_share(const struct rc_encoder *a, const struct rc_encoder *b)
{
	return !encoder_busy(a) && !encoder_busy(b) && a->sent && b->sent && !a->in_video &&
		!b->in_video && !a->video_shown && !b->video_shown && !a->need_reset &&
		!b->need_reset && !a->reset_asked && !b->reset_asked && a->width == b->width &&
		a->height == b->height &&
		memcmp(a->sent, b->sent, (size_t)a->width * (size_t)a->height * 4) == 0;
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
	size_t size = (size_t)lead->width * (size_t)lead->height * 4;
	if (!enc->sent || enc->width != lead->width || enc->height != lead->height) {
		free(enc->sent);
		enc->sent = malloc(size);
		if (!enc->sent) {
			enc->width = enc->height = 0;
			encoder_reset(enc);
			return;
		}
		enc->width = lead->width;
		enc->height = lead->height;
	}
	memcpy(enc->sent, lead->sent, size);
	enc->sent_clean = false;
	pixman_region32_copy(&enc->unfilled, &lead->unfilled);
	enc->band_y = lead->band_y;
	scroll_forget(&enc->scroll);
	drop_video(enc);
	enc->in_video = enc->new_stream = false;
	/* Its motion counts stay its own: they weigh its link. */
	enc->replace_won = lead->replace_won;
	enc->large_frames = lead->large_frames;
	enc->lossless_at_us = lead->lossless_at_us;
	enc->last_change_us = lead->last_change_us;
	enc->video_divisor = lead->video_divisor;
	enc->fit = lead->fit;
}

void encoder_describe(const struct rc_encoder *enc, char *out, size_t size)
{
	if (enc->video_shown && enc->video_name) {
		int n = snprintf(out, size,
			"video %s %.2f Mbit/s on %d thread%s (%d core%s, %d stream%s), "
			"%.1f ms a frame",
			enc->video_name, (double)enc->bitrate_shown / 1e6, enc->threads_shown,
			enc->threads_shown == 1 ? "" : "s", enc->cores_shown,
			enc->cores_shown == 1 ? "" : "s", enc->streams_shown,
			enc->streams_shown == 1 ? "" : "s", (double)enc->encode_us_shown / 1000);
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
