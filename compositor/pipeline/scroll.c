/*
 * Scroll detection by row hashes, as Xpra and RDP servers do it.
 *
 * The window is cut into at most MAX_BANDS vertical bands (a gutter or a
 * side panel that does not scroll then spoils only its own band), and each
 * row of each band has a 64-bit hash, in the new image and in the old (the
 * copy the viewer holds). A new row whose hash is that of exactly one old
 * row votes for the distance between them; the distance with the most votes
 * wins. The bands that moved by it, and the longest run of rows that did,
 * make the rectangle; its edges are then widened pixel by pixel as far as
 * every row still matches.
 *
 * Cost: the new image's rows in the box are hashed once; the old image's
 * hashes are kept from frame to frame (the old image within a box sent is
 * the new one of that frame), so they are hashed only when unknown. Rows
 * are matched by their band hashes: a 64-bit hash per 128 pixels or more.
 */
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "scroll.h"

#define MIN_WIDTH 32 /* pixels: a box narrower is not worth looking in */
#define MIN_RUN 8 /* rows a copy moves at the least */
#define BAND_WIDTH 128
#define MAX_BANDS 8
#define MIN_VOTES 3 /* rows that moved by the same distance */
/* A band moved when this share of its rows is found at the new place. */
#define BAND_MATCH_PERCENT 80

/* A hash table slot: 0 empty, else the row + 1, with DUPLICATE set when
 * more than one old row has that hash. */
#define DUPLICATE 0x80000000u

static inline uint64_t mix(uint64_t h, uint64_t w)
{
	h ^= w;
	h *= 0x9e3779b97f4a7c15u;
	return h ^ (h >> 29);
}

/* A hash of n pixels; four independent lanes keep the multiplier busy. */
static uint64_t hash_span(const uint32_t *p, int32_t n)
{
	uint64_t a = 1, b = 2, c = 3, d = 4;
	int32_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w[4];
		memcpy(w, p + i, sizeof(w));
		a = mix(a, w[0]);
		b = mix(b, w[1]);
		c = mix(c, w[2]);
		d = mix(d, w[3]);
	}
	for (; i < n; i++) {
		a = mix(a, p[i]);
	}
	return mix(mix(mix(mix(a, b), c), d), (uint64_t)n);
}

static const uint32_t *row_at(const struct image *img, int32_t x, int32_t y)
{
	return img->pixels + (size_t)y * img->stride + x;
}

static int32_t band_x(const struct rc_scroll *s, int32_t k)
{
	return (int32_t)((int64_t)k * s->width / s->bands);
}

/* The band grid follows the image size; a new size forgets every hash. */
static bool fit(struct rc_scroll *s, int32_t width, int32_t height)
{
	if (s->width == width && s->height == height) {
		return true;
	}
	int32_t bands = width / BAND_WIDTH;
	bands = bands < 1 ? 1 : bands > MAX_BANDS ? MAX_BANDS : bands;
	size_t cells = (size_t)bands * (size_t)height;
	size_t table = 1;
	while (table < (size_t)height * 2) {
		table <<= 1;
	}
	if (!memory_grow((void **)&s->cur, &s->cur_size, cells * sizeof(uint64_t)) ||
		!memory_grow((void **)&s->old, &s->old_size, cells * sizeof(uint64_t)) ||
		!memory_grow((void **)&s->known, &s->known_size, cells) ||
		!memory_grow((void **)&s->slots, &s->slots_size, table * sizeof(uint32_t)) ||
		!memory_grow((void **)&s->votes, &s->votes_size, (2 * (size_t)height + 1) * 4)) {
		s->width = s->height = 0;
		return false;
	}
	s->width = width;
	s->height = height;
	s->bands = bands;
	s->table = table;
	memset(s->known, 0, cells);
	s->hashed = (struct wire_rect){0};
	return true;
}

/* Counts the distances by which rows of one band moved: a new row whose
 * hash is that of exactly one old row (not at its own place) votes for their
 * distance. Rows y0 to y1 of the image. */
static void vote(struct rc_scroll *s, const uint64_t *hc, const uint64_t *hb, int32_t y0,
	int32_t y1)
{
	size_t mask = s->table - 1;
	memset(s->slots, 0, s->table * sizeof(uint32_t));
	for (int32_t r = y0; r < y1; r++) {
		for (size_t i = hb[r] & mask;; i = (i + 1) & mask) {
			uint32_t slot = s->slots[i];
			if (slot == 0) {
				s->slots[i] = (uint32_t)r + 1;
				break;
			}
			if (hb[(slot & ~DUPLICATE) - 1] == hb[r]) {
				s->slots[i] = slot | DUPLICATE;
				break;
			}
		}
	}
	for (int32_t r = y0; r < y1; r++) {
		if (hc[r] == hb[r]) {
			continue; /* the same as before: no news */
		}
		for (size_t i = hc[r] & mask;; i = (i + 1) & mask) {
			uint32_t slot = s->slots[i];
			if (slot == 0) {
				break;
			}
			int32_t row = (int32_t)(slot & ~DUPLICATE) - 1;
			if (hb[row] == hc[r]) {
				if (!(slot & DUPLICATE)) {
					s->votes[r - row + s->height]++;
				}
				break;
			}
		}
	}
}

/* Whether every band from k0 to k1 of new row r is old row r - dy. */
static bool row_moved(const struct rc_scroll *s, int32_t k0, int32_t k1, int32_t r, int32_t dy)
{
	for (int32_t k = k0; k <= k1; k++) {
		size_t at = (size_t)k * s->height;
		if (s->cur[at + r] != s->old[at + r - dy]) {
			return false;
		}
	}
	return true;
}

static bool row_changed(const struct rc_scroll *s, int32_t k0, int32_t k1, int32_t r)
{
	return !row_moved(s, k0, k1, r, 0);
}

bool scroll_find(struct rc_scroll *s, const struct image *cur, const struct image *base,
	struct wire_rect box, struct scroll_move *move)
{
	s->hashed = (struct wire_rect){0};
	if (box.x < 0 || box.y < 0 || box.x + box.width > cur->width ||
		box.y + box.height > cur->height || box.width < MIN_WIDTH ||
		box.height < 2 * MIN_RUN || !fit(s, cur->width, cur->height)) {
		return false;
	}
	int32_t y0 = box.y, y1 = box.y + box.height;
	int32_t k0 = 0, k1 = s->bands - 1;
	while (band_x(s, k0 + 1) <= box.x) {
		k0++;
	}
	while (band_x(s, k1) >= box.x + box.width) {
		k1--;
	}
	for (int32_t k = k0; k <= k1; k++) {
		int32_t x = band_x(s, k), w = band_x(s, k + 1) - x;
		size_t at = (size_t)k * s->height;
		for (int32_t r = y0; r < y1; r++) {
			s->cur[at + r] = hash_span(row_at(cur, x, r), w);
			if (!s->known[at + r]) {
				s->old[at + r] = hash_span(row_at(base, x, r), w);
				s->known[at + r] = 1;
			}
		}
	}
	/* The hashes of the new image in the box, for scroll_sent. */
	s->hashed = box;
	s->hashed_k0 = k0;
	s->hashed_k1 = k1;

	memset(s->votes, 0, (2 * (size_t)s->height + 1) * 4);
	for (int32_t k = k0; k <= k1; k++) {
		size_t at = (size_t)k * s->height;
		vote(s, s->cur + at, s->old + at, y0, y1);
	}
	int32_t dy = 0;
	uint32_t most = 0;
	for (int32_t d = -box.height + 1; d < box.height; d++) {
		if (d != 0 && s->votes[d + s->height] > most) {
			most = s->votes[d + s->height];
			dy = d;
		}
	}
	if (most < MIN_VOTES) {
		return false;
	}
	/* New rows whose old row is in the box too. */
	int32_t r0 = dy > 0 ? y0 + dy : y0, r1 = dy < 0 ? y1 + dy : y1;

	/* The widest run of bands that moved as a whole. */
	int32_t m0 = -1, m1 = -1, run = -1;
	for (int32_t k = k0; k <= k1 + 1; k++) {
		bool moved = false;
		if (k <= k1) {
			int32_t found = 0;
			for (int32_t r = r0; r < r1; r++) {
				found += row_moved(s, k, k, r, dy);
			}
			moved = found * 100 >= (r1 - r0) * BAND_MATCH_PERCENT;
		}
		if (moved && run < 0) {
			run = k;
		} else if (!moved && run >= 0) {
			if (m0 < 0 || k - run > m1 - m0 + 1) {
				m0 = run;
				m1 = k - 1;
			}
			run = -1;
		}
	}
	if (m0 < 0) {
		return false;
	}

	/* The run of rows that moved that gains most: rows that differ where
	 * they are but are found moved. */
	int32_t best_start = 0, best_end = 0, gain = 0, best_gain = 0, start = r0;
	for (int32_t r = r0; r <= r1; r++) {
		if (r < r1 && row_moved(s, m0, m1, r, dy)) {
			gain += row_changed(s, m0, m1, r);
			continue;
		}
		if (r - start >= MIN_RUN && gain > best_gain) {
			best_gain = gain;
			best_start = start;
			best_end = r;
		}
		start = r + 1;
		gain = 0;
	}
	if (best_gain < MIN_VOTES) {
		return false;
	}

	/* Bands may reach past the box: keep to the box, then widen pixel by
	 * pixel as far as every row still matches. */
	int32_t x0 = band_x(s, m0), x1 = band_x(s, m1 + 1);
	int32_t left = 0, right = 0;
	if (x0 < box.x) {
		x0 = box.x;
	} else {
		left = x0 - box.x;
	}
	if (x1 > box.x + box.width) {
		x1 = box.x + box.width;
	} else {
		right = box.x + box.width - x1;
	}
	for (int32_t r = best_start; r < best_end && (left > 0 || right > 0); r++) {
		const uint32_t *c = row_at(cur, 0, r), *b = row_at(base, 0, r - dy);
		int32_t n = 0;
		while (n < left && c[x0 - 1 - n] == b[x0 - 1 - n]) {
			n++;
		}
		left = n;
		n = 0;
		while (n < right && c[x1 + n] == b[x1 + n]) {
			n++;
		}
		right = n;
	}
	x0 -= left;
	x1 += right;
	*move = (struct scroll_move){
		.src = {x0, best_start - dy, x1 - x0, best_end - best_start},
		.dx = 0,
		.dy = dy,
	};
	return true;
}

/* Within box: the new image's hashes become the old image's where keep
 * and scroll_find took them for this very box; elsewhere the old image's
 * are forgotten. */
static void box_done(struct rc_scroll *s, struct wire_rect box, bool keep)
{
	if (!s->width || box.width <= 0 || box.height <= 0) {
		return;
	}
	int32_t y0 = box.y < 0 ? 0 : box.y;
	int32_t y1 = box.y + box.height > s->height ? s->height : box.y + box.height;
	struct wire_rect h = s->hashed;
	bool same = keep && h.x == box.x && h.y == box.y && h.width == box.width &&
		h.height == box.height;
	for (int32_t k = 0; k < s->bands; k++) {
		int32_t x = band_x(s, k), w = band_x(s, k + 1) - x;
		if (x + w <= box.x || x >= box.x + box.width) {
			continue; /* untouched */
		}
		size_t at = (size_t)k * s->height;
		if (same && k >= s->hashed_k0 && k <= s->hashed_k1) {
			/* The old image there is now the new one. */
			memcpy(s->old + at + y0, s->cur + at + y0, (size_t)(y1 - y0) * 8);
		} else {
			memset(s->known + at + y0, 0, (size_t)(y1 - y0));
		}
	}
	s->hashed = (struct wire_rect){0};
}

void scroll_sent(struct rc_scroll *s, struct wire_rect box)
{
	box_done(s, box, true);
}

void scroll_changed(struct rc_scroll *s, struct wire_rect box)
{
	box_done(s, box, false);
}

void scroll_forget(struct rc_scroll *s)
{
	s->width = s->height = 0;
	s->hashed = (struct wire_rect){0};
}

void scroll_finish(struct rc_scroll *s)
{
	free(s->cur);
	free(s->old);
	free(s->known);
	free(s->slots);
	free(s->votes);
	*s = (struct rc_scroll){0};
}
