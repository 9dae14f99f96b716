/*
 * What a viewer showed, against what the app drew. Reads the pictures
 * rcomp-view wrote to its tap (RCOMP_VIEW_TAP, viewer/tap.c), or their
 * luma as the bench took it from the browser page (TAP_MAGIC_LUMA); each carries the index clip-client drew into it (mark.h), so it
 * is compared with that frame of the clip: PSNR of the luma (full-range
 * BT.601) and SSIM (8x8 windows every 4 pixels, as x264's), both over the
 * picture below the mark's rows. A picture shown smaller than the clip
 * (the desktop scales it up through the viewport) is scaled up first,
 * bilinearly, as the desktop does. Writes a line for each picture:
 *
 *   shown US INDEX PSNR SSIM WIDTH HEIGHT
 *
 * (US: CLOCK_MONOTONIC microseconds at its commit; INDEX -1 and no
 * numbers where no mark was read; PSNR 99 for a picture equal to its
 * frame). The pictures are kept, as luma, until the tap closes, so that
 * measuring costs the viewer nothing while it runs.
 *
 *   quality-probe CLIP WIDTH HEIGHT TAP
 *
 * (TAP: the FIFO rcomp-view writes to, opened here, which waits for it.)
 */
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../viewer/tap.h"
#include "mark.h"

#define MAX_PICTURES 20000

struct picture {
	uint64_t us;
	int index;
	int width, height; /* as shown */
	uint8_t *luma; /* at the clip's size */
};

static bool read_all(int fd, void *dst, size_t n)
{
	uint8_t *p = dst;
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r <= 0) {
			return false;
		}
		p += r;
		n -= (size_t)r;
	}
	return true;
}

static void to_luma(const uint32_t *px, uint8_t *luma, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		luma[i] = mark_luma(px[i]);
	}
}

/* src (sw x sh) scaled bilinearly to dst (dw x dh), pixel centres aligned. */
static void scale_up(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh)
{
	for (int y = 0; y < dh; y++) {
		double fy = (y + 0.5) * sh / dh - 0.5;
		int y0 = fy < 0 ? 0 : (int)fy;
		int y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
		double wy = fy < 0 ? 0 : fy - y0;
		for (int x = 0; x < dw; x++) {
			double fx = (x + 0.5) * sw / dw - 0.5;
			int x0 = fx < 0 ? 0 : (int)fx;
			int x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
			double wx = fx < 0 ? 0 : fx - x0;
			double top = src[y0 * sw + x0] * (1 - wx) + src[y0 * sw + x1] * wx;
			double bottom = src[y1 * sw + x0] * (1 - wx) + src[y1 * sw + x1] * wx;
			dst[y * dw + x] = (uint8_t)(top * (1 - wy) + bottom * wy + 0.5);
		}
	}
}

static double psnr(const uint8_t *a, const uint8_t *b, int width, int height, int top)
{
	uint64_t sse = 0;
	for (int y = top; y < height; y++) {
		for (int x = 0; x < width; x++) {
			int d = a[y * width + x] - b[y * width + x];
			sse += (uint64_t)(d * d);
		}
	}
	if (sse == 0) {
		return 99;
	}
	double mse = (double)sse / ((double)width * (height - top));
	double v = 10 * log10(255.0 * 255.0 / mse);
	return v > 99 ? 99 : v;
}

static double ssim(const uint8_t *a, const uint8_t *b, int width, int height, int top)
{
	const double c1 = (0.01 * 255) * (0.01 * 255), c2 = (0.03 * 255) * (0.03 * 255);
	double sum = 0;
	long n = 0;
	for (int y = top; y + 8 <= height; y += 4) {
		for (int x = 0; x + 8 <= width; x += 4) {
			uint32_t sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
			for (int j = 0; j < 8; j++) {
				const uint8_t *pa = a + (y + j) * width + x,
					      *pb = b + (y + j) * width + x;
				for (int i = 0; i < 8; i++) {
					sa += pa[i];
					sb += pb[i];
					saa += pa[i] * pa[i];
					sbb += pb[i] * pb[i];
					sab += pa[i] * pb[i];
				}
			}
			double ma = sa / 64.0, mb = sb / 64.0;
			double va = saa / 64.0 - ma * ma, vb = sbb / 64.0 - mb * mb;
			double cov = sab / 64.0 - ma * mb;
			sum += ((2 * ma * mb + c1) * (2 * cov + c2)) /
				((ma * ma + mb * mb + c1) * (va + vb + c2));
			n++;
		}
	}
	return n ? sum / n : 1;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: quality-probe CLIP WIDTH HEIGHT TAP\n");
		return 2;
	}
	int width = atoi(argv[2]), height = atoi(argv[3]);
	if (width < MARK_BITS * MARK_SIZE || height <= MARK_SIZE + 8 || width > 8192 ||
		height > 8192) {
		fprintf(stderr, "quality-probe: bad size\n");
		return 2;
	}
	size_t pixels = (size_t)width * height;
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	long frames = (long)((size_t)st.st_size / (pixels * 4));
	const uint32_t *clip = frames > 0
		? mmap(NULL, (size_t)frames * pixels * 4, PROT_READ, MAP_PRIVATE, fd, 0)
		: MAP_FAILED;
	close(fd);
	if (clip == MAP_FAILED) {
		fprintf(stderr, "quality-probe: %s holds no frame of %dx%d\n", argv[1], width,
			height);
		return 1;
	}
	int tap = open(argv[4], O_RDONLY | O_CLOEXEC);
	if (tap < 0) {
		perror(argv[4]);
		return 1;
	}
	static struct picture pics[MAX_PICTURES];
	int count = 0;
	uint32_t *px = NULL;
	uint8_t *shown = NULL;
	size_t px_size = 0;
	struct tap_header h;
	while (count < MAX_PICTURES && read_all(tap, &h, sizeof(h))) {
		bool luma = h.magic == TAP_MAGIC_LUMA;
		if ((h.magic != TAP_MAGIC && !luma) || h.width < 1 || h.height < 1 ||
			h.width > 8192 || h.height > 8192) {
			fprintf(stderr, "quality-probe: not a tap stream\n");
			return 1;
		}
		size_t n = (size_t)h.width * h.height;
		if (n > px_size) {
			px = realloc(px, n * 4);
			shown = realloc(shown, n);
			px_size = n;
		}
		if (!px || !shown ||
			!read_all(tap, luma ? (void *)shown : (void *)px, luma ? n : n * 4)) {
			break;
		}
		struct picture *p = &pics[count];
		p->us = h.us;
		p->width = h.width;
		p->height = h.height;
		p->luma = malloc(pixels);
		if (!p->luma) {
			break;
		}
		if (!luma) {
			to_luma(px, shown, n);
		}
		double scale = (double)h.width / width;
		p->index = mark_read(shown, h.width, h.width, h.height, scale);
		if ((size_t)h.width == (size_t)width && (size_t)h.height == (size_t)height) {
			memcpy(p->luma, shown, pixels);
		} else {
			scale_up(shown, h.width, h.height, p->luma, width, height);
		}
		count++;
	}
	uint8_t *ref = malloc(pixels);
	for (int i = 0; ref && i < count; i++) {
		struct picture *p = &pics[i];
		if (p->index < 0 || p->index >= frames) {
			printf("shown %llu -1 - - %d %d\n", (unsigned long long)p->us, p->width,
				p->height);
			continue;
		}
		to_luma(clip + pixels * (size_t)p->index, ref, pixels);
		printf("shown %llu %d %.3f %.5f %d %d\n", (unsigned long long)p->us, p->index,
			psnr(p->luma, ref, width, height, MARK_SIZE),
			ssim(p->luma, ref, width, height, MARK_SIZE), p->width, p->height);
		free(p->luma);
	}
	return 0;
}
