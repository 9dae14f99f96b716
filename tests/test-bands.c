/* Unit tests of the band pool (media/bands.c) and the banded scaling
 * (media/scale.c). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bands.h"
#include "check.h"
#include "scale.h"

#define BANDS 64

struct count {
	atomic_int runs[BANDS];
	atomic_int threads_seen;
};

static void count_band(void *data, int i)
{
	struct count *c = data;
	atomic_fetch_add(&c->runs[i], 1);
	/* Some work, so that helpers take bands too. */
	uint64_t x = 0;
	for (int k = 0; k < 200000; k++) {
		x += (uint64_t)k * (uint64_t)i;
	}
	atomic_fetch_add(&c->threads_seen, (int)(x & 1));
}

static void *caller(void *data)
{
	for (int round = 0; round < 50; round++) {
		bands_run(BANDS, count_band, data);
	}
	return NULL;
}

/* Four threads at once each run 50 calls of 64 bands on a pool of three
 * helpers: every band of every call runs exactly once, and each call
 * returns only when all of its bands have run. */
static void test_every_band_once(void)
{
	CHECK(bands_init(3));
	CHECK(bands_threads() == 3);
	struct count counts[4];
	memset(counts, 0, sizeof(counts));
	pthread_t threads[4];
	for (int t = 0; t < 4; t++) {
		pthread_create(&threads[t], NULL, caller, &counts[t]);
	}
	for (int t = 0; t < 4; t++) {
		pthread_join(threads[t], NULL);
	}
	for (int t = 0; t < 4; t++) {
		for (int i = 0; i < BANDS; i++) {
			CHECK(atomic_load(&counts[t].runs[i]) == 50);
		}
	}
	bands_finish();
	CHECK(bands_threads() == 0);
}

static void pattern(uint32_t *p, int w, int h)
{
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			p[y * w + x] = 0xff000000u | (uint32_t)((x * 7) & 0xff) << 16 |
				(uint32_t)((y * 13) & 0xff) << 8 |
				(uint32_t)(((x / 9 + y / 5) & 1) * 255);
		}
	}
}

/* A 1920x1080 picture scaled to half and back up is the same on a pool of
 * seven helpers (in bands) as on the caller alone. */
static void test_scale_in_bands_is_exact(void)
{
	const int w = 1920, h = 1080, sw = 960, sh = 540;
	uint32_t *src = malloc((size_t)w * h * 4), *half[2], *back[2];
	pattern(src, w, h);
	for (int pass = 0; pass < 2; pass++) {
		CHECK(bands_init(pass ? 7 : 0));
		printf("bands for 1080p rows on %d helpers: %d\n", bands_threads(),
			bands_count(h, (long)w * 4));
		CHECK(bands_count(h, (long)w * 4) == (pass ? 8 : 1));
		half[pass] = malloc((size_t)sw * sh * 4);
		back[pass] = malloc((size_t)w * h * 4);
		CHECK(scale_bilinear(src, w, h, w, half[pass], sw, sh, sw));
		CHECK(scale_bilinear(half[pass], sw, sh, sw, back[pass], w, h, w));
		bands_finish();
	}
	CHECK(memcmp(half[0], half[1], (size_t)sw * sh * 4) == 0);
	CHECK(memcmp(back[0], back[1], (size_t)w * h * 4) == 0);
	for (int pass = 0; pass < 2; pass++) {
		free(half[pass]);
		free(back[pass]);
	}
	free(src);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"every_band_once", test_every_band_once},
		{"scale_exact", test_scale_in_bands_is_exact},
	};
	return check_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
