/*
 * The lossless frame: the diff (or the new pixels) of what changed against
 * the copy the viewer holds, after any scroll moved with a copy_rect, in
 * bands where it is more than a frame may carry. On a worker (encode.c).
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "lossless.h"

/* Rectangles per frame before the damage is sent as its bounding box. */
#define MAX_FRAME_RECTS 64
static_assert(MAX_FRAME_RECTS <= WIRE_MAX_RECTS, "the encoder sends what the wire allows");
/* In cheap motion the scroll search runs only on every this many frames:
 * enough to find a scroll that starts, which ends the motion. */
#define FAST_SCROLL_EVERY 8

/* The viewer's copy follows the image's size; a new size starts whole. */
bool lossless_fit(struct rc_encoder *enc, struct image image)
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
 * out: the diff that follows then carries only what is new. The rectangle
 * moved to is, in *to, exactly the new image. */
static bool send_scroll(struct rc_encoder *enc, struct buffer *out, struct image cur,
	struct wire_rect box, struct wire_rect *to)
{
	struct image base = {enc->sent, enc->width, enc->height, enc->width};
	struct scroll_move move;
	if (!scroll_find(&enc->scroll, &cur, &base, box, &move)) {
		return false;
	}
	*to = (struct wire_rect){move.src.x + move.dx, move.src.y + move.dy, move.src.width,
		move.src.height};
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

uint64_t region_area(pixman_region32_t *region)
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

/* Keeps of damage only the runs of rows that differ from the viewer's
 * copy: after a scroll moved most of it there, what is left is what is
 * new (a line or two of a terminal), which a band then holds whole. */
static void damage_shrink(struct rc_encoder *enc, struct image cur, pixman_region32_t *damage)
{
	pixman_region32_t left;
	pixman_region32_init(&left);
	int n = 0;
	pixman_box32_t *boxes = pixman_region32_rectangles(damage, &n);
	for (int i = 0; i < n; i++) {
		size_t bytes = (size_t)(boxes[i].x2 - boxes[i].x1) * 4;
		int32_t run = -1;
		for (int32_t y = boxes[i].y1; y <= boxes[i].y2; y++) {
			bool differs = y < boxes[i].y2 &&
				memcmp(cur.pixels + (size_t)y * cur.stride + boxes[i].x1,
					enc->sent + (size_t)y * enc->width + boxes[i].x1,
					bytes) != 0;
			if (differs && run < 0) {
				run = y;
			} else if (!differs && run >= 0) {
				pixman_region32_union_rect(&left, &left, boxes[i].x1, run,
					(unsigned)(boxes[i].x2 - boxes[i].x1), (unsigned)(y - run));
				run = -1;
			}
		}
	}
	pixman_region32_copy(damage, &left);
	pixman_region32_fini(&left);
}

/* A band is what the link carries in about BAND_US, so that motion which
 * starts while a large picture fills waits behind one band, not behind
 * seconds of them in one frame (a 1080p first picture is 2 MB or more of
 * lz4: 6 s at 3 Mbit/s). Its raw bytes come from the link's capacity and
 * the window's last compression ratio (all raw until one is known), at
 * least BAND_MIN_RAW (a frame's own cost, a header and a round of the
 * compressor, stays small beside it), at most the link's frame_max. Until
 * the link is measured a band is BAND_FIRST_RAW: a second at 2 Mbit/s if
 * nothing compresses, and a round trip on a LAN, whose measure then lets
 * the rest go at once. */
#define BAND_US (100 * 1000)
#define BAND_MIN_RAW (16 * 1024)
#define BAND_FIRST_RAW (256 * 1024)

static uint64_t band_bytes(const struct rc_encoder *enc)
{
	uint64_t max = enc->link.frame_max;
	uint64_t rate = encode_link_capacity(&enc->link);
	if (rate == 0) {
		return BAND_FIRST_RAW < max ? BAND_FIRST_RAW : max;
	}
	double ratio = enc->lossless_ratio > 0 ? enc->lossless_ratio : 1;
	double raw = (double)rate * BAND_US / 1e6 / ratio;
	raw = raw > BAND_MIN_RAW ? raw : BAND_MIN_RAW;
	return raw < (double)max ? (uint64_t)raw : max;
}

/*
 * A frame carries at most a band's raw bytes (band_bytes; on a local link,
 * the link's frame_max, see connection_frame_max): more damage than that
 * goes as a band of rows, and the rest waits in the damage for the next
 * frames, which take the bands below in turn (from the newest image, as
 * all damage does), so a slow or stalled viewer holds at most a band of a
 * huge window, not the window.
 * Moves what lies outside this frame's band from damage to rest; returns
 * the share of the damaged pixels the band holds (1: all).
 */
static double take_band(struct rc_encoder *enc, pixman_region32_t *damage, pixman_region32_t *rest)
{
	pixman_box32_t extents = *pixman_region32_extents(damage);
	uint64_t row = (uint64_t)(extents.x2 - extents.x1) * 4;
	uint64_t most = enc->refresh_whole ? enc->link.frame_max : band_bytes(enc);
	enc->refresh_whole = false;
	int32_t rows = row ? (int32_t)(most / row) : 0;
	rows = rows > 0 ? rows : 1;
	/* What the frame would carry: the damage, or its extents where it
	 * has more rectangles than a frame sends (lossless_send). A scroll's
	 * new lines at the top and the bottom go in one frame. */
	int n = 0;
	pixman_region32_rectangles(damage, &n);
	uint64_t raw = n > MAX_FRAME_RECTS
		? (uint64_t)(extents.x2 - extents.x1) * (uint64_t)(extents.y2 - extents.y1) * 4
		: region_area(damage) * 4;
	if ((int64_t)(extents.y2 - extents.y1) <= rows || raw <= most) {
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

/* Forgets the row hashes where the viewer's copy is not yet the new image
 * (a band of a larger change went); keeps them where it now is. */
static void scroll_done(struct rc_encoder *enc, struct wire_rect searched, bool whole,
	struct wire_rect band)
{
	if (searched.width > 0 && whole) {
		scroll_sent(&enc->scroll, searched);
	} else if (searched.width > 0) {
		scroll_changed(&enc->scroll, searched);
	} else {
		scroll_sent(&enc->scroll, band);
	}
}

/* Encodes what changed as a lossless frame into enc->out; returns its bytes
 * (0: none) and fills *sent (lossless.h). */
size_t lossless_send(struct rc_encoder *enc, struct tools *tools, struct image cur,
	pixman_region32_t *damage, struct lossless_sent *sent)
{
	*sent = (struct lossless_sent){.share = 1};
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
	struct buffer *out = &enc->out;
	size_t before = buffer_size(out);
	/* The scroll search comes before the band is cut: a scroll of more
	 * than a band (a terminal on a link measured slow) is still one
	 * copy_rect, and what it leaves, a line or two, is what the band
	 * holds and what the codec's choice weighs. fast_frames is 0 unless
	 * this frame is made fast (encode_frame). */
	pixman_box32_t all = *pixman_region32_extents(damage);
	struct wire_rect searched = {0};
	bool copied = false;
	struct wire_rect to = {0};
	if (!(flags & WIRE_FRAME_RESET) && enc->link.copy_rect &&
		enc->fast_frames % FAST_SCROLL_EVERY == 0 && pixman_region32_not_empty(damage)) {
		searched = (struct wire_rect){all.x1, all.y1, all.x2 - all.x1, all.y2 - all.y1};
		copied = send_scroll(enc, out, cur, searched, &to);
	}
	/* Damage the viewer's copy already holds (what a scroll moved there,
	 * what an app damaged but drew the same) needs no band: before bands
	 * are cut, damage keeps only what differs. A row that differs costs
	 * the compare up to its first difference, so a picture in motion
	 * costs little more. */
	if (!(flags & WIRE_FRAME_RESET) && (copied || region_area(damage) * 4 > band_bytes(enc))) {
		damage_shrink(enc, cur, damage);
		/* What the copy filled is the new image, no longer zero, so no
		 * longer unfilled (encode.c's sharing reads unfilled as zero);
		 * and what no longer differs was filled. */
		pixman_region32_t moved;
		pixman_region32_init_rect(&moved, to.x, to.y, (unsigned)to.width,
			(unsigned)to.height);
		pixman_region32_subtract(&enc->unfilled, &enc->unfilled, &moved);
		pixman_region32_fini(&moved);
		pixman_region32_intersect(&enc->unfilled, &enc->unfilled, damage);
	}
	/* While bands still fill a whole picture: what of the part the
	 * viewer has changed again, after the scroll. */
	sent->filling = !(flags & WIRE_FRAME_RESET) && pixman_region32_not_empty(&enc->unfilled);
	if (sent->filling) {
		pixman_region32_t had;
		pixman_region32_init(&had);
		pixman_region32_subtract(&had, damage, &enc->unfilled);
		sent->again = region_area(&had);
		pixman_region32_fini(&had);
		sent->have =
			(uint64_t)enc->width * (uint64_t)enc->height - region_area(&enc->unfilled);
	}
	pixman_region32_t rest;
	pixman_region32_init(&rest);
	sent->share = take_band(enc, damage, &rest);
	/* What of a whole picture this frame leaves, the next bands fill. */
	if (flags & WIRE_FRAME_RESET) {
		pixman_region32_copy(&enc->unfilled, &rest);
	} else {
		pixman_region32_subtract(&enc->unfilled, &enc->unfilled, damage);
	}

	pixman_box32_t extents = *pixman_region32_extents(damage);
	struct wire_rect box = {extents.x1, extents.y1, extents.x2 - extents.x1,
		extents.y2 - extents.y1};
	bool whole = sent->share == 1;

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
		scroll_done(enc, searched, whole, box);
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

	struct wire_frame frame = encoder_frame(enc, flags);
	frame.codec = WIRE_CODEC_XOR;
	frame.nrects = nrects;
	frame.rects = packed;
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
	scroll_done(enc, searched, whole, box);
	if (enc->link.dump_dir) {
		dump(enc, enc->link.dump_dir);
	}
	sent->changed = raw_size / 4;
	size_t bytes = buffer_size(out) - before;
	sent->bytes = bytes;
	if (raw_size >= BAND_MIN_RAW) {
		/* For the next band's size, from frames of a band's size or
		 * more (a smaller one's header and copy_rect weigh more than
		 * its pixels): the newest counts half. */
		double ratio = (double)bytes / (double)raw_size;
		enc->lossless_ratio =
			enc->lossless_ratio > 0 ? (enc->lossless_ratio + ratio) / 2 : ratio;
	}
	return bytes;
}
