/* Unit tests of scroll detection (compositor/pipeline/scroll.c) on pictures like the
 * ones terminals and editors draw: lines of glyph-like pixels on a plain
 * background, scrolled whole or in part. Each found move is checked to be
 * exact: the old picture moved by it is the new one there. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "scroll.h"

#define BG 0xff1e1e1eu
#define LINE 16 /* pixel rows per text line */

static uint64_t seed = 88172645463325252ull;

static uint32_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (uint32_t)seed;
}

struct picture {
	uint32_t *pixels;
	int32_t width, height;
};

static struct picture picture_new(int32_t w, int32_t h)
{
	struct picture p = {malloc((size_t)w * h * 4), w, h};
	for (size_t i = 0; i < (size_t)w * h; i++) {
		p.pixels[i] = BG;
	}
	return p;
}

static struct image view(struct picture *p)
{
	return (struct image){p->pixels, p->width, p->height, p->width};
}

/* Draws a line of text: glyph cells of 8x12 with random strokes, a blank
 * gap below; length in cells (0: an empty line). */
static void draw_text(struct picture *p, int32_t x0, int32_t x1, int32_t top, int cells)
{
	for (int32_t y = top; y < top + LINE && y < p->height; y++) {
		for (int32_t x = x0; x < x1; x++) {
			p->pixels[(size_t)y * p->width + x] = BG;
		}
	}
	for (int c = 0; c < cells && x0 + c * 8 + 8 <= x1; c++) {
		uint32_t glyph = rnd();
		for (int32_t gy = 2; gy < 14; gy++) {
			for (int32_t gx = 1; gx < 7; gx++) {
				if ((glyph >> ((gy * 7 + gx) % 32)) & 1) {
					p->pixels[(size_t)(top + gy) * p->width + x0 + c * 8 + gx] =
						0xffd0d0d0u - (uint32_t)(gy * 0x010101);
				}
			}
		}
	}
}

static struct picture copy_of(const struct picture *p)
{
	struct picture q = {malloc((size_t)p->width * p->height * 4), p->width, p->height};
	memcpy(q.pixels, p->pixels, (size_t)p->width * p->height * 4);
	return q;
}

/* Moves rows [y0, y1) of columns [x0, x1) by dy, as an app scrolls. */
static void scroll_rows(struct picture *p, int32_t x0, int32_t x1, int32_t y0, int32_t y1,
	int32_t dy)
{
	struct image img = view(p);
	struct wire_rect src = {x0, dy < 0 ? y0 - dy : y0, x1 - x0, y1 - y0 - (dy < 0 ? -dy : dy)};
	codec_copy(&img, src, 0, dy);
}

/* The move is exact, and covers at least want rows and columns. */
static void check_move(const struct picture *old, const struct picture *now,
	const struct scroll_move *m, int32_t want_dy, int32_t want_w, int32_t want_h)
{
	CHECK(m->dx == 0 && m->dy == want_dy);
	CHECK(m->src.width >= want_w && m->src.height >= want_h);
	struct picture moved = copy_of(old);
	struct image img = view(&moved);
	CHECK(codec_copy_fits(&img, m->src, m->dx, m->dy));
	if (codec_copy_fits(&img, m->src, m->dx, m->dy)) {
		codec_copy(&img, m->src, m->dx, m->dy);
		for (int32_t y = m->src.y + m->dy; y < m->src.y + m->dy + m->src.height; y++) {
			size_t at = (size_t)y * now->width + m->src.x;
			CHECK(memcmp(moved.pixels + at, now->pixels + at,
				      (size_t)m->src.width * 4) == 0);
		}
	}
	fprintf(stderr, "  move %dx%d at %d,%d by %d\n", m->src.width, m->src.height, m->src.x,
		m->src.y, m->dy);
	free(moved.pixels);
}

static struct picture terminal(int32_t w, int32_t h, int32_t x0)
{
	struct picture p = picture_new(w, h);
	for (int32_t top = 0; top + LINE <= h; top += LINE) {
		draw_text(&p, x0, w, top, (int)(rnd() % (uint32_t)((w - x0) / 8)));
	}
	return p;
}

static void test_whole(void)
{
	/* A terminal scrolls by one line and prints a new one at the bottom. */
	struct picture old = terminal(640, 384, 0), now = copy_of(&old);
	scroll_rows(&now, 0, 640, 0, 384, -LINE);
	draw_text(&now, 0, 640, 384 - LINE, 60);
	struct rc_scroll s = {0};
	struct scroll_move m;
	struct image a = view(&now), b = view(&old);
	CHECK(scroll_find(&s, &a, &b, (struct wire_rect){0, 0, 640, 384}, &m));
	check_move(&old, &now, &m, -LINE, 640, 384 - 2 * LINE);
	/* Back up by three lines: a pager scrolling back. */
	struct picture up = copy_of(&old);
	scroll_rows(&up, 0, 640, 0, 384, 3 * LINE);
	for (int i = 0; i < 3; i++) {
		draw_text(&up, 0, 640, i * LINE, 50);
	}
	a = view(&up);
	CHECK(scroll_find(&s, &a, &b, (struct wire_rect){0, 0, 640, 384}, &m));
	check_move(&old, &up, &m, 3 * LINE, 640, 384 - 4 * LINE);
	scroll_finish(&s);
	free(old.pixels);
	free(now.pixels);
	free(up.pixels);
}

static void test_status_line(void)
{
	/* Only the lines above a status line scroll; the status line changes. */
	struct picture old = terminal(800, 480, 0), now = copy_of(&old);
	scroll_rows(&now, 0, 800, 0, 480 - LINE, -2 * LINE);
	draw_text(&now, 0, 800, 480 - 3 * LINE, 40);
	draw_text(&now, 0, 800, 480 - 2 * LINE, 70);
	draw_text(&now, 0, 800, 480 - LINE, 99); /* the status line */
	struct rc_scroll s = {0};
	struct scroll_move m;
	struct image a = view(&now), b = view(&old);
	CHECK(scroll_find(&s, &a, &b, (struct wire_rect){0, 0, 800, 480}, &m));
	check_move(&old, &now, &m, -2 * LINE, 800, 480 - 5 * LINE);
	CHECK(m.src.y + m.dy + m.src.height <= 480 - LINE);
	scroll_finish(&s);
	free(old.pixels);
	free(now.pixels);
}

static void test_gutter(void)
{
	/* An editor: a 40-pixel gutter of line numbers that all change, and text
	 * beside it that scrolls. */
	struct picture old = terminal(900, 600, 40);
	for (int32_t top = 0; top + LINE <= 600; top += LINE) {
		draw_text(&old, 0, 40, top, 4);
	}
	struct picture then = copy_of(&old), now = copy_of(&old);
	scroll_rows(&now, 40, 900, 0, 600, -LINE);
	draw_text(&now, 40, 900, 600 - 2 * LINE, 90);
	for (int32_t top = 0; top + LINE <= 600; top += LINE) {
		draw_text(&now, 0, 40, top, 4);
	}
	struct rc_scroll s = {0};
	struct scroll_move m;
	struct image a = view(&now), b = view(&then);
	CHECK(scroll_find(&s, &a, &b, (struct wire_rect){0, 0, 900, 600}, &m));
	check_move(&then, &now, &m, -LINE, 900 - 128 - 40, 600 - 3 * LINE);
	CHECK(m.src.x >= 40);
	scroll_finish(&s);
	free(old.pixels);
	free(now.pixels);
	free(then.pixels);
}

static void test_sparse(void)
{
	/* Mostly blank: a few lines of text near the top move down; the blank
	 * rows below match at any distance and must not win. */
	struct picture old = picture_new(640, 480);
	for (int i = 0; i < 4; i++) {
		draw_text(&old, 0, 640, i * LINE, 30 + i * 5);
	}
	struct picture now = copy_of(&old);
	scroll_rows(&now, 0, 640, 0, 480, LINE);
	draw_text(&now, 0, 640, 0, 20);
	struct rc_scroll s = {0};
	struct scroll_move m;
	struct image a = view(&now), b = view(&old);
	CHECK(scroll_find(&s, &a, &b, (struct wire_rect){0, 0, 640, 480}, &m));
	check_move(&old, &now, &m, LINE, 640, 4 * LINE);
	scroll_finish(&s);
	free(old.pixels);
	free(now.pixels);
}

static void test_no_scroll(void)
{
	/* New text everywhere, or nothing moved: no move is found. */
	struct picture old = terminal(640, 384, 0), now = terminal(640, 384, 0);
	struct rc_scroll s = {0};
	struct scroll_move m;
	struct image a = view(&now), b = view(&old);
	CHECK(!scroll_find(&s, &a, &b, (struct wire_rect){0, 0, 640, 384}, &m));
	a = view(&old);
	CHECK(!scroll_find(&s, &a, &b, (struct wire_rect){0, 0, 640, 384}, &m));
	/* Too small a box to look in. */
	CHECK(!scroll_find(&s, &a, &b, (struct wire_rect){0, 0, 16, 384}, &m));
	scroll_finish(&s);
	free(old.pixels);
	free(now.pixels);
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Not a test: prints how long finding a scroll takes for a full-screen
 * terminal (meson test --benchmark). */
static void bench(void)
{
	static const int32_t sizes[][2] = {{800, 600}, {1920, 1080}, {3840, 2160}};
	for (size_t i = 0; i < 3; i++) {
		int32_t w = sizes[i][0], h = sizes[i][1];
		struct picture old = terminal(w, h, 0), now = copy_of(&old);
		scroll_rows(&now, 0, w, 0, h, -LINE);
		draw_text(&now, 0, w, h - LINE - h % LINE, 80);
		struct rc_scroll s = {0};
		struct scroll_move m;
		struct image a = view(&now), b = view(&old);
		int runs = 0;
		double t0 = now_ms();
		while (now_ms() - t0 < 1000) {
			CHECK(scroll_find(&s, &a, &b, (struct wire_rect){0, 0, w, h}, &m));
			runs++;
		}
		printf("scroll_find %dx%d: %.2f ms\n", w, h, (now_ms() - t0) / runs);
		scroll_finish(&s);
		free(old.pixels);
		free(now.pixels);
	}
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"whole", test_whole},
		{"status_line", test_status_line},
		{"gutter", test_gutter},
		{"sparse", test_sparse},
		{"no_scroll", test_no_scroll},
		{"bench", bench},
	};
	return check_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
