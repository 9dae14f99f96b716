/*
 * A small picture of the session for lists of sessions (rcomp-gate's
 * page): its largest window as the viewers last got it, scaled into
 * THUMB_WIDTH x THUMB_HEIGHT with pixman and written as DIR/NAME.thumb, a
 * 24-bit BMP (what every browser shows, with no image library here). It is
 * written a few seconds after the picture changed, never more often, and
 * only from what was captured for a viewer: a session nobody has seen has
 * none.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "server.h"
#include "thumb.h"

#define THUMB_WIDTH 160
#define THUMB_HEIGHT 100
#define THUMB_DELAY_MS 3000

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

/* The picture of the largest mapped toplevel, or NULL. */
static struct rc_window *largest(struct rc_server *server)
{
	struct rc_window *best = NULL, *window;
	int64_t area = 0;
	wl_list_for_each(window, &server->windows, link)
	{
		const struct rc_capture *cap = &window->capture;
		int64_t a = (int64_t)cap->width * cap->height;
		if (window->mapped && !window->popup && cap->image && cap->pixels && a > area) {
			best = window;
			area = a;
		}
	}
	return best;
}

/* The BMP's bytes: a header, then rows bottom up, each padded to 4 bytes. */
static uint8_t *encode_bmp(pixman_image_t *small, int w, int h, size_t *size)
{
	size_t stride = ((size_t)w * 3 + 3) & ~(size_t)3;
	*size = 54 + stride * (size_t)h;
	uint8_t *bmp = calloc(1, *size);
	if (!bmp) {
		return NULL;
	}
	bmp[0] = 'B';
	bmp[1] = 'M';
	put32(bmp + 2, (uint32_t)*size);
	put32(bmp + 10, 54);
	put32(bmp + 14, 40);
	put32(bmp + 18, (uint32_t)w);
	put32(bmp + 22, (uint32_t)h);
	put16(bmp + 26, 1);
	put16(bmp + 28, 24);
	put32(bmp + 34, (uint32_t)(stride * (size_t)h));
	const uint32_t *px = pixman_image_get_data(small);
	int src_stride = pixman_image_get_stride(small) / 4;
	for (int y = 0; y < h; y++) {
		uint8_t *row = bmp + 54 + stride * (size_t)(h - 1 - y);
		for (int x = 0; x < w; x++) {
			uint32_t p = px[(size_t)y * (size_t)src_stride + (size_t)x];
			row[x * 3] = (uint8_t)p; /* blue */
			row[x * 3 + 1] = (uint8_t)(p >> 8);
			row[x * 3 + 2] = (uint8_t)(p >> 16);
		}
	}
	return bmp;
}

static bool write_file(const char *path, const uint8_t *bytes, size_t size)
{
	char tmp[SESSION_PATH_MAX + 8];
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		return false;
	}
	bool ok = write(fd, bytes, size) == (ssize_t)size;
	ok = close(fd) == 0 && ok && rename(tmp, path) == 0;
	if (!ok) {
		unlink(tmp);
	}
	return ok;
}

static void write_thumb(struct rc_server *server)
{
	struct rc_record *record = &server->record;
	struct rc_window *window = largest(server);
	char path[SESSION_PATH_MAX];
	if (!window || !record->dir[0] ||
		!session_path(path, sizeof(path), record->dir, record->name, "thumb")) {
		return;
	}
	const struct rc_capture *cap = &window->capture;
	/* Fit the box, keeping the window's shape. */
	double scale = (double)THUMB_WIDTH / cap->width;
	if ((double)THUMB_HEIGHT / cap->height < scale) {
		scale = (double)THUMB_HEIGHT / cap->height;
	}
	if (scale > 1) {
		scale = 1;
	}
	int w = (int)(cap->width * scale), h = (int)(cap->height * scale);
	w = w < 1 ? 1 : w;
	h = h < 1 ? 1 : h;
	pixman_image_t *small = pixman_image_create_bits(PIXMAN_x8r8g8b8, w, h, NULL, 0);
	if (!small) {
		return;
	}
	/* An image of its own over the capture's pixels: the encoders read
	 * the capture's image, whose transform stays theirs. */
	pixman_image_t *src = pixman_image_create_bits(pixman_image_get_format(cap->image),
		cap->width, cap->height, cap->pixels, pixman_image_get_stride(cap->image));
	if (!src) {
		pixman_image_unref(small);
		return;
	}
	pixman_transform_t t;
	pixman_transform_init_scale(&t, pixman_double_to_fixed((double)cap->width / w),
		pixman_double_to_fixed((double)cap->height / h));
	pixman_image_set_transform(src, &t);
	pixman_image_set_filter(src, PIXMAN_FILTER_GOOD, NULL, 0);
	pixman_image_composite32(PIXMAN_OP_SRC, src, NULL, small, 0, 0, 0, 0, 0, 0, w, h);
	pixman_image_unref(src);
	size_t size;
	uint8_t *bmp = encode_bmp(small, w, h, &size);
	pixman_image_unref(small);
	if (bmp && !write_file(path, bmp, size)) {
		log_debug("cannot write the session's picture %s", path);
	}
	free(bmp);
}

static int handle_timer(void *data)
{
	struct rc_server *server = data;
	server->thumb_due = false;
	write_thumb(server);
	return 0;
}

bool thumb_init(struct rc_server *server)
{
	server->thumb_timer = wl_event_loop_add_timer(server->loop, handle_timer, server);
	return server->thumb_timer != NULL;
}

void thumb_finish(struct rc_server *server)
{
	if (server->thumb_timer) {
		wl_event_source_remove(server->thumb_timer);
		server->thumb_timer = NULL;
	}
}

void thumb_changed(struct rc_server *server)
{
	if (server->thumb_due || !server->thumb_timer || !server->record.dir[0]) {
		return;
	}
	server->thumb_due = true;
	wl_event_source_timer_update(server->thumb_timer, THUMB_DELAY_MS);
}
