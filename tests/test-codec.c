/* Unit tests of the lossless codec on noise, gradients and text-like images. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "codec.h"

#define W 301
#define H 173

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint32_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static void fill_noise(uint32_t *p)
{
	for (int i = 0; i < W * H; i++) {
		p[i] = next_random();
	}
}

static void fill_gradient(uint32_t *p)
{
	for (int y = 0; y < H; y++) {
		for (int x = 0; x < W; x++) {
			uint32_t r = (uint32_t)(x * 255 / (W - 1));
			uint32_t g = (uint32_t)(y * 255 / (H - 1));
			uint32_t b = (uint32_t)((x + y) & 0xff);
			p[y * W + x] = 0xff000000u | r << 16 | g << 8 | b;
		}
	}
}

/* A 5x7 bitmap font for a few glyphs, drawn with grey antialiasing edges,
 * line after line like a terminal. */
static const uint8_t glyphs[][7] = {
	{0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}, /* A */
	{0x1e, 0x11, 0x1e, 0x11, 0x11, 0x11, 0x1e}, /* B */
	{0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e}, /* C */
	{0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* 1 */
	{0x0e, 0x11, 0x01, 0x06, 0x08, 0x10, 0x1f}, /* 2 */
	{0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* space */
};

static void fill_text(uint32_t *p, unsigned seed)
{
	for (int i = 0; i < W * H; i++) {
		p[i] = 0xff101010;
	}
	for (int row = 0; row + 9 <= H; row += 10) {
		for (int col = 0; col + 7 <= W; col += 7) {
			const uint8_t *g = glyphs[(unsigned)(row * 31 + col * 7 + (int)seed) % 6];
			for (int y = 0; y < 7; y++) {
				for (int x = 0; x < 5; x++) {
					if (g[y] & (0x10 >> x)) {
						p[(row + y) * W + col + x] = 0xffd0d0d0;
						if (col + x + 1 < W && !(g[y] & (0x08 >> x))) {
							p[(row + y) * W + col + x + 1] = 0xff707070;
						}
					}
				}
			}
		}
	}
}

static const char *const compressions[] = {"none", "lz4", "zstd", "zstd:1", "zstd:19"};

/* Sends next as a diff against prev through one compression and checks the
 * receiver ends up with next exactly. */
static void roundtrip(const uint32_t *prev, const uint32_t *next, const char *compression,
	bool shrink)
{
	enum wire_compression kind;
	int level;
	CHECK(codec_parse_compression(compression, &kind, &level));
	struct compressor comp;
	struct decompressor dec;
	CHECK(compressor_init(&comp, kind, level));
	CHECK(decompressor_init(&dec));

	uint32_t *sender_base = malloc(W * H * 4);
	uint32_t *receiver = malloc(W * H * 4);
	memcpy(sender_base, prev, W * H * 4);
	memcpy(receiver, prev, W * H * 4);
	struct image cur = {(uint32_t *)next, W, H, W};
	struct image base = {sender_base, W, H, W};
	struct image recv = {receiver, W, H, W};

	/* Damage as an app would report it: a few overlapping-free bands. */
	struct wire_rect rects[4] = {{0, 0, W, 40}, {0, 40, 100, 60}, {100, 40, W - 100, 60},
		{0, 100, W, H - 100}};
	size_t n = 0;
	struct wire_rect sent[4];
	for (size_t i = 0; i < 4; i++) {
		struct wire_rect r = rects[i];
		if (!shrink || codec_rect_shrink(&cur, &base, &r)) {
			sent[n++] = r;
		}
	}
	uint8_t *raw = malloc(W * H * 4);
	size_t raw_size = codec_diff_encode(&cur, &base, sent, n, raw);
	CHECK(memcmp(sender_base, next, W * H * 4) == 0);

	struct buffer payload;
	buffer_init(&payload, WIRE_MAX_BODY);
	CHECK(compressor_compress(&comp, raw, raw_size, &payload));
	if (kind == WIRE_COMPRESS_NONE) {
		CHECK(buffer_size(&payload) == raw_size);
	}
	uint8_t *unpacked = malloc(raw_size ? raw_size : 1);
	CHECK(decompressor_run(&dec, kind, buffer_head(&payload), buffer_size(&payload), unpacked,
		raw_size));
	CHECK(memcmp(unpacked, raw, raw_size) == 0);

	/* The receiver applies the frame as it comes off the wire. */
	uint8_t wire_rects[4 * WIRE_RECT_SIZE];
	for (size_t i = 0; i < n; i++) {
		wire_put_rect(wire_rects, (uint32_t)i, sent[i]);
	}
	struct buffer out;
	buffer_init(&out, WIRE_MAX_BODY + WIRE_HEADER_SIZE);
	struct wire_frame frame = {.window = 1,
		.width = W,
		.height = H,
		.nrects = (uint32_t)n,
		.rects = wire_rects};
	CHECK(codec_append_frame(&out, frame, &comp, raw, raw_size) == buffer_size(&out));
	struct wire_msg msg;
	size_t used;
	char err[256];
	CHECK(wire_decode(WIRE_FROM_SERVER, buffer_head(&out), buffer_size(&out), &msg, &used, err,
		      sizeof(err)) == WIRE_OK);
	CHECK(codec_apply_frame(&dec, &recv, &msg.frame, err, sizeof(err)));
	buffer_finish(&out);
	CHECK(memcmp(receiver, next, W * H * 4) == 0);

	/* The same rectangles as new pixels (replace) give the same picture. */
	uint32_t *replaced = malloc(W * H * 4);
	memcpy(replaced, prev, W * H * 4);
	struct image rimg = {replaced, W, H, W};
	uint8_t *pixels = malloc(raw_size ? raw_size : 1);
	CHECK(codec_pixels_encode(&cur, sent, n, pixels) == raw_size);
	frame.flags = WIRE_FRAME_REPLACE;
	buffer_init(&out, WIRE_MAX_BODY + WIRE_HEADER_SIZE);
	CHECK(codec_append_frame(&out, frame, &comp, pixels, raw_size) == buffer_size(&out));
	CHECK(wire_decode(WIRE_FROM_SERVER, buffer_head(&out), buffer_size(&out), &msg, &used, err,
		      sizeof(err)) == WIRE_OK);
	CHECK(codec_apply_frame(&dec, &rimg, &msg.frame, err, sizeof(err)));
	CHECK(memcmp(replaced, next, W * H * 4) == 0);
	buffer_finish(&out);
	free(pixels);
	free(replaced);

	free(unpacked);
	buffer_finish(&payload);
	free(raw);
	free(sender_base);
	free(receiver);
	compressor_finish(&comp);
	decompressor_finish(&dec);
}

static void run_all(void (*make_prev)(uint32_t *), void (*make_next)(uint32_t *))
{
	uint32_t *prev = calloc(W * H, 4), *next = calloc(W * H, 4);
	if (make_prev) {
		make_prev(prev);
	}
	make_next(next);
	for (size_t i = 0; i < sizeof(compressions) / sizeof(compressions[0]); i++) {
		roundtrip(prev, next, compressions[i], false);
		roundtrip(prev, next, compressions[i], true);
	}
	free(prev);
	free(next);
}

static void text_a(uint32_t *p)
{
	fill_text(p, 0);
}

static void text_b(uint32_t *p)
{
	fill_text(p, 3);
	/* A scrolled-by-one-line look plus a changed cursor cell. */
	p[50 * W + 60] = 0xffffffff;
}

static void test_noise(void)
{
	run_all(NULL, fill_noise);
	run_all(fill_gradient, fill_noise);
}

static void test_gradient(void)
{
	run_all(NULL, fill_gradient);
	run_all(fill_noise, fill_gradient);
}

static void test_text(void)
{
	run_all(NULL, text_a);
	run_all(text_a, text_b);
	run_all(text_a, text_a); /* nothing changed */
}

static void test_shrink(void)
{
	uint32_t *a = calloc(W * H, 4), *b = calloc(W * H, 4);
	struct image ia = {a, W, H, W}, ib = {b, W, H, W};
	struct wire_rect r = {0, 0, W, H};
	CHECK(!codec_rect_shrink(&ia, &ib, &r));
	b[17 * W + 33] = 1;
	b[90 * W + 200] = 1;
	r = (struct wire_rect){0, 0, W, H};
	CHECK(codec_rect_shrink(&ia, &ib, &r));
	CHECK(r.x == 33 && r.y == 17 && r.width == 200 - 33 + 1 && r.height == 90 - 17 + 1);
	/* A damage rectangle that misses the change finds nothing. */
	r = (struct wire_rect){0, 0, 30, 30};
	CHECK(!codec_rect_shrink(&ia, &ib, &r));
	free(a);
	free(b);
}

static void test_corrupt(void)
{
	/* Damaged payloads fail cleanly, and never write past raw_size. */
	uint32_t *img = malloc(W * H * 4);
	fill_text(img, 1);
	struct decompressor dec;
	CHECK(decompressor_init(&dec));
	const enum wire_compression kinds[] = {WIRE_COMPRESS_LZ4, WIRE_COMPRESS_ZSTD};
	for (int k = 0; k < 2; k++) {
		struct compressor comp;
		CHECK(compressor_init(&comp, kinds[k], 3));
		struct buffer payload;
		buffer_init(&payload, WIRE_MAX_BODY);
		CHECK(compressor_compress(&comp, (uint8_t *)img, W * H * 4, &payload));
		size_t raw_size = W * H * 4;
		uint8_t *out = malloc(raw_size + 64);
		/* Right payload, wrong declared size: refused. */
		CHECK(!decompressor_run(&dec, kinds[k], buffer_head(&payload),
			buffer_size(&payload), out, raw_size - 4));
		/* Truncated payload. */
		CHECK(!decompressor_run(&dec, kinds[k], buffer_head(&payload),
			buffer_size(&payload) / 2, out, raw_size));
		/* Flipped bytes: either refused, or exactly raw_size bytes. */
		for (int iter = 0; iter < 200; iter++) {
			uint8_t *p = buffer_head(&payload);
			size_t at = next_random() % buffer_size(&payload);
			uint8_t old = p[at];
			p[at] ^= (uint8_t)(1 + next_random() % 255);
			memset(out + raw_size, 0xab, 64);
			(void)decompressor_run(&dec, kinds[k], p, buffer_size(&payload), out,
				raw_size);
			for (int i = 0; i < 64; i++) {
				CHECK(out[raw_size + (size_t)i] == 0xab);
			}
			p[at] = old;
		}
		/* Random garbage. */
		uint8_t junk[512];
		for (size_t i = 0; i < sizeof(junk); i++) {
			junk[i] = (uint8_t)next_random();
		}
		CHECK(!decompressor_run(&dec, kinds[k], junk, sizeof(junk), out, raw_size));
		free(out);
		buffer_finish(&payload);
		compressor_finish(&comp);
	}
	decompressor_finish(&dec);
	free(img);
}

static void test_parse(void)
{
	enum wire_compression kind;
	int level;
	CHECK(codec_parse_compression("lz4", &kind, &level) && kind == WIRE_COMPRESS_LZ4);
	CHECK(codec_parse_compression("zstd:7", &kind, &level) && kind == WIRE_COMPRESS_ZSTD &&
		level == 7);
	CHECK(!codec_parse_compression("zstd:0", &kind, &level));
	CHECK(!codec_parse_compression("zstd:99", &kind, &level));
	CHECK(!codec_parse_compression("zstd:", &kind, &level));
	CHECK(!codec_parse_compression("zstdx", &kind, &level));
	CHECK(!codec_parse_compression("gzip", &kind, &level));
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"noise", test_noise},
		{"gradient", test_gradient},
		{"text", test_text},
		{"shrink", test_shrink},
		{"corrupt", test_corrupt},
		{"parse", test_parse},
	};
	return check_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
