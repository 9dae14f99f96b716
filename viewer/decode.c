/*
 * Frames into window images. The validated message says how big the image
 * is; the memory all images take together is bounded, and a server that
 * asks for more is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "cores.h"
#include "decode.h"
#include "log.h"
#include "monotonic.h"
#include "present.h"
#include "video.h"

static bool resize_image(struct rv_window *window, int32_t width, int32_t height)
{
	struct rv_viewer *viewer = window->viewer;
	uint64_t old = (uint64_t)window->width * window->height * 4;
	uint64_t size = (uint64_t)width * height * 4;
	if (viewer->image_bytes - old + size > RV_MAX_IMAGE_BYTES) {
		connection_fail(viewer, "server windows need more than %llu MiB of pixels",
			(unsigned long long)(RV_MAX_IMAGE_BYTES >> 20));
		return false;
	}
	uint32_t *image = calloc(size / 4, 4);
	if (!image) {
		connection_fail(viewer, "out of memory for a %dx%d window", width, height);
		return false;
	}
	free(window->image);
	viewer->image_bytes = viewer->image_bytes - old + size;
	window->image = image;
	window->width = width;
	window->height = height;
	present_resized(window);
	return true;
}

static void apply_video(struct rv_window *window, const struct wire_frame *msg)
{
	struct rv_viewer *viewer = window->viewer;
	char err[256];
	if (msg->flags & WIRE_FRAME_RESET) {
		log_debug("window %u: frame %u starts a video stream", window->id, msg->seq);
		video_decoder_destroy(window->decoder);
		scaling_reset(&window->scaling);
		/* A thread per slice the picture can have: threads past the
		 * encoder's slices would wait (libx264 cuts as many as it has
		 * threads, which follow the same rule). */
		int threads = cores_for_picture((int64_t)window->width * window->height,
			cores_available());
		window->decoder = video_decoder_create(window->width, window->height, threads, err,
			sizeof(err));
		if (!window->decoder) {
			connection_fail(viewer, "window %u: cannot decode video: %s", window->id,
				err);
			return;
		}
	}
	if (!window->decoder) {
		connection_fail(viewer, "video frame of window %u without a stream start",
			window->id);
		return;
	}
	bool decoded = false;
	if (!video_decoder_decode(window->decoder, msg->payload, msg->payload_size, window->width,
		    window->height, NULL, 0, &decoded, err, sizeof(err))) {
		connection_fail(viewer, "frame %u of window %u: %s", msg->seq, window->id, err);
		return;
	}
	window->received_seq = msg->seq;
	if (decoded) {
		/* A picture sent smaller than the window stays at its size, and
		 * the desktop scales it (the viewport), unless the desktop falls
		 * behind doing so (scaling.h); the window's own size, padded to
		 * even, is shown without the padding. */
		int pw, ph;
		bool smaller = decode_picture_smaller(window, &pw, &ph);
		uint64_t now = monotonic_usec();
		scaling_picture(&window->scaling, smaller, now);
		scaling_judge(&window->scaling, window->id, window->reported_refresh_mhz, now);
		bool desktop = smaller && !window->scaling.self;
		int32_t w = desktop ? pw : window->width, h = desktop ? ph : window->height;
		struct rv_buffer *buf = present_video_buffer(window, w, h);
		window->picture_scaled = desktop && buf;
		if (buf &&
			video_decoder_output(window->decoder, buf->data, buf->width, buf->width,
				buf->height)) {
			present_video_decoded(window, buf);
		} else if (!buf &&
			video_decoder_output(window->decoder, window->image, window->width,
				window->width, window->height)) {
			/* All buffers busy: the whole picture is in the image. */
			window->newest = NULL;
			present_damage_all(window);
		} else {
			connection_fail(viewer, "frame %u of window %u: cannot convert its picture",
				msg->seq, window->id);
			return;
		}
	}
	/* Even with no picture yet, presenting acks the frame's arrival. */
	window->dirty = true;
	present(window);
}

static void apply_lossless(struct rv_window *window, const struct wire_frame *msg, bool reset)
{
	struct rv_viewer *viewer = window->viewer;
	if (reset && window->decoder) {
		/* Back to lossless: the stream is over. */
		decode_reset(window);
	}
	struct image img = {window->image, window->width, window->height, window->width};
	char err[256];
	if (!codec_apply_frame(&viewer->decompressor, &img, msg, err, sizeof(err))) {
		connection_fail(viewer, "frame %u of window %u: %s", msg->seq, window->id, err);
		return;
	}

	pixman_region32_t damage;
	if (reset) {
		pixman_region32_init_rect(&damage, 0, 0, (unsigned)window->width,
			(unsigned)window->height);
	} else {
		pixman_region32_init(&damage);
		for (uint32_t i = 0; i < msg->nrects; i++) {
			struct wire_rect r = wire_get_rect(msg->rects, i);
			pixman_region32_union_rect(&damage, &damage, r.x, r.y, (unsigned)r.width,
				(unsigned)r.height);
		}
	}
	present_damage(window, &damage);
	pixman_region32_fini(&damage);
	window->received_seq = msg->seq;
	window->dirty = true;
	present(window);
}

void decode_copy(struct rv_window *window, const struct wire_copy_rect *msg)
{
	present_sync_image(window);
	struct image img = {window->image, window->width, window->height, window->width};
	struct wire_rect src = {msg->x, msg->y, msg->width, msg->height};
	if (!window->image || !codec_copy_fits(&img, src, msg->dx, msg->dy)) {
		connection_fail(window->viewer,
			"copy_rect of window %u moves %dx%d at %d,%d by %d,%d, outside its %dx%d "
			"picture",
			window->id, msg->width, msg->height, msg->x, msg->y, msg->dx, msg->dy,
			window->width, window->height);
		return;
	}
	codec_copy(&img, src, msg->dx, msg->dy);
	pixman_region32_t moved;
	pixman_region32_init_rect(&moved, msg->x + msg->dx, msg->y + msg->dy, (unsigned)msg->width,
		(unsigned)msg->height);
	present_damage(window, &moved);
	pixman_region32_fini(&moved);
	window->copy_pending = true;
}

void decode_frame(struct rv_window *window, const struct wire_frame *msg)
{
	window->copy_pending = false;
	if (window->mark_next) {
		window->mark_decoded = window->mark_next;
		window->mark_next = 0;
	}
	window->stat_received++;
	log_debug("window %u: frame %u received", window->id, msg->seq);
	window->stat_bytes += msg->payload_size;
	window->drawn_us = msg->time_us;
	bool reset = msg->flags & WIRE_FRAME_RESET;
	if (msg->codec != WIRE_CODEC_H264) {
		present_sync_image(window); /* a diff is made against the newest picture */
	}
	/* A buffer must be a whole number of surface pixels at its scale. */
	window->image_scale = msg->width % window->scale == 0 && msg->height % window->scale == 0
		? window->scale
		: 1;
	if (msg->width != window->width || msg->height != window->height) {
		if (!reset) {
			connection_fail(window->viewer,
				"frame of window %u changes its size without a reset", window->id);
			return;
		}
		if (!resize_image(window, msg->width, msg->height)) {
			return;
		}
	} else if (reset && msg->codec == WIRE_CODEC_XOR) {
		memset(window->image, 0, (size_t)window->width * window->height * 4);
	}
	if (msg->codec == WIRE_CODEC_H264) {
		apply_video(window, msg);
	} else {
		apply_lossless(window, msg, reset);
	}
}

bool decode_picture_smaller(const struct rv_window *window, int *pw, int *ph)
{
	video_decoder_picture(window->decoder, pw, ph);
	return *pw < (window->width & ~1) || *ph < (window->height & ~1);
}

void decode_reset(struct rv_window *window)
{
	present_sync_image(window); /* before buffers of the video's kind go */
	video_decoder_destroy(window->decoder);
	window->decoder = NULL;
}

void decode_finish(struct rv_window *window)
{
	decode_reset(window);
	window->viewer->image_bytes -= (uint64_t)window->width * window->height * 4;
	free(window->image);
	window->image = NULL;
	window->width = window->height = 0;
}
