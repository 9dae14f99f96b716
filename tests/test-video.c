/* Unit tests of the H.264 video path: quality of the round trip on a moving
 * test pattern, odd sizes, and refusal of data that is not video. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "video.h"

/* A gradient with moving bars and a checkered block: smooth areas, edges
 * and motion, as a window in motion has. */
static void draw(uint32_t *p, int w, int h, int t)
{
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			uint32_t r = (uint32_t)((x + t * 3) % w * 255 / w);
			uint32_t g = (uint32_t)(y * 255 / h);
			uint32_t b = (uint32_t)(((x / 16 + y / 16 + t / 4) & 1) ? 200 : 60);
			if ((x - t * 5) % 97 < 12 && (x - t * 5) % 97 >= 0) {
				r = g = b = 240;
			}
			p[y * w + x] = 0xff000000u | r << 16 | g << 8 | b;
		}
	}
}

static double psnr(const uint32_t *a, const uint32_t *b, int w, int h)
{
	double se = 0;
	for (int i = 0; i < w * h; i++) {
		for (int s = 0; s < 24; s += 8) {
			double d = (double)((a[i] >> s) & 0xff) - (double)((b[i] >> s) & 0xff);
			se += d * d;
		}
	}
	double mse = se / (w * h * 3.0);
	return mse == 0 ? 99.0 : 10.0 * log10(255.0 * 255.0 / mse);
}

static void roundtrip(int w, int h)
{
	char err[256];
	struct video_encoder *enc = video_encoder_create(w, h, 60, 8000000, err, sizeof(err));
	struct video_decoder *dec = video_decoder_create(err, sizeof(err));
	CHECK(enc && dec);
	if (!enc || !dec) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	uint32_t *src = malloc((size_t)w * h * 4), *out = malloc((size_t)w * h * 4);
	struct buffer au;
	buffer_init(&au, 64 << 20);
	int pictures = 0;
	double worst = 99;
	size_t bytes = 0;
	for (int t = 0; t < 40; t++) {
		draw(src, w, h, t);
		bool produced = false, decoded = false;
		CHECK(video_encoder_encode(enc, src, w, 8000000, &au, &produced));
		CHECK(produced); /* zero latency: every frame comes out at once */
		bytes += buffer_size(&au);
		CHECK(video_decoder_decode(dec, buffer_head(&au), buffer_size(&au), w, h, out, w,
			&decoded, err, sizeof(err)));
		buffer_consume(&au, buffer_size(&au));
		CHECK(decoded); /* and is decoded at once: no frame of delay */
		if (decoded) {
			pictures++;
			/* The first frames settle the rate control. */
			if (t >= 10) {
				double q = psnr(src, out, w, h);
				worst = q < worst ? q : worst;
			}
			CHECK((out[0] >> 24) == 0xff);
		}
	}
	printf("%dx%d with %s: %d pictures, worst PSNR %.1f dB, %.0f kbit/frame\n", w, h,
		video_encoder_name(enc), pictures, worst, bytes * 8 / 40 / 1000.0);
	CHECK(worst >= 35.0);
	buffer_finish(&au);
	free(src);
	free(out);
	video_encoder_destroy(enc);
	video_decoder_destroy(dec);
}

static void test_psnr(void)
{
	roundtrip(320, 240);
}

static void test_odd(void)
{
	roundtrip(201, 157);
}

static void test_garbage(void)
{
	char err[256];
	struct video_decoder *dec = video_decoder_create(err, sizeof(err));
	CHECK(dec != NULL);
	uint32_t *out = calloc(64 * 64, 4);
	uint8_t junk[4096];
	uint64_t s = 88172645463325252ull;
	for (int iter = 0; iter < 50; iter++) {
		for (size_t i = 0; i < sizeof(junk); i++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			junk[i] = (uint8_t)s;
		}
		bool decoded = true;
		/* Either refused or no picture: never a picture out of noise. */
		(void)video_decoder_decode(dec, junk, sizeof(junk), 64, 64, out, 64, &decoded, err,
			sizeof(err));
		CHECK(!decoded);
	}
	/* A valid stream of another size is refused. */
	struct video_encoder *enc = video_encoder_create(96, 96, 60, 2000000, err, sizeof(err));
	CHECK(enc != NULL);
	uint32_t *src = calloc(96 * 96, 4);
	struct buffer au;
	buffer_init(&au, 1 << 20);
	bool produced = false, decoded = false;
	CHECK(video_encoder_encode(enc, src, 96, 2000000, &au, &produced) && produced);
	struct video_decoder *fresh = video_decoder_create(err, sizeof(err));
	CHECK(!video_decoder_decode(fresh, buffer_head(&au), buffer_size(&au), 64, 64, out, 64,
		&decoded, err, sizeof(err)));
	buffer_finish(&au);
	free(src);
	free(out);
	video_encoder_destroy(enc);
	video_decoder_destroy(fresh);
	video_decoder_destroy(dec);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"psnr", test_psnr},
		{"odd", test_odd},
		{"garbage", test_garbage},
	};
	return check_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
