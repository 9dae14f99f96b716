/* RCOMP_VIEW_TAP: every picture shown, written out for measuring (tap.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "monotonic.h"
#include "tap.h"

static int tap_fd = -2; /* -2: not looked at yet; -1: none */

static int tap_open(void)
{
	const char *path = getenv("RCOMP_VIEW_TAP");
	if (!path || !*path) {
		return -1;
	}
	/* A FIFO's open waits for its reader. */
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		log_error("RCOMP_VIEW_TAP %s: %s; pictures are not tapped", path, strerror(errno));
		return -1;
	}
	fcntl(fd, F_SETPIPE_SZ, 1 << 20); /* fewer wakeups; not a pipe: no harm */
	log_info("tapping every picture shown to %s", path);
	return fd;
}

static int write_all(int fd, const void *src, size_t n)
{
	const uint8_t *p = src;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void tap_picture(uint32_t window, const uint32_t *pixels, int32_t width, int32_t height)
{
	if (tap_fd == -2) {
		tap_fd = tap_open();
	}
	if (tap_fd < 0 || !pixels || width <= 0 || height <= 0) {
		return;
	}
	struct tap_header h = {.magic = TAP_MAGIC,
		.window = window,
		.width = width,
		.height = height,
		.us = monotonic_usec()};
	if (write_all(tap_fd, &h, sizeof(h)) < 0 ||
		write_all(tap_fd, pixels, (size_t)width * height * 4) < 0) {
		log_error("RCOMP_VIEW_TAP: %s; no more pictures are tapped", strerror(errno));
		close(tap_fd);
		tap_fd = -1;
	}
}
