#include <libavutil/frame.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#include <stdlib.h>

#include "convert.h"

struct converter {
	struct SwsContext *sws;
	int32_t width, height;
	enum AVPixelFormat from, to;
	int threads;
	/* The pictures as libswscale's frame API takes them: planes that are
	 * the caller's, behind a reference that frees nothing. */
	AVFrame *src, *dst;
};

struct converter *converter_create(int32_t width, int32_t height, enum AVPixelFormat from,
	enum AVPixelFormat to, int threads)
{
	struct converter *conv = calloc(1, sizeof(*conv));
	if (!conv) {
		return NULL;
	}
	conv->width = width;
	conv->height = height;
	conv->from = from;
	conv->to = to;
	conv->threads = threads < 1 ? 1 : threads;
	conv->sws = sws_alloc_context();
	conv->src = av_frame_alloc();
	conv->dst = av_frame_alloc();
	if (!conv->sws || !conv->src || !conv->dst) {
		goto error;
	}
	struct SwsContext *s = conv->sws;
	if (av_opt_set_int(s, "srcw", width, 0) < 0 || av_opt_set_int(s, "srch", height, 0) < 0 ||
		av_opt_set_int(s, "dstw", width, 0) < 0 ||
		av_opt_set_int(s, "dsth", height, 0) < 0 ||
		av_opt_set_int(s, "src_format", from, 0) < 0 ||
		av_opt_set_int(s, "dst_format", to, 0) < 0 ||
		av_opt_set_int(s, "sws_flags", SWS_BILINEAR, 0) < 0 ||
		av_opt_set_int(s, "threads", conv->threads, 0) < 0 ||
		sws_init_context(s, NULL, NULL) < 0) {
		goto error;
	}
	return conv;
error:
	converter_destroy(conv);
	return NULL;
}

void converter_destroy(struct converter *conv)
{
	if (!conv) {
		return;
	}
	sws_freeContext(conv->sws);
	av_frame_free(&conv->src);
	av_frame_free(&conv->dst);
	free(conv);
}

bool converter_reuse(struct converter **conv, int32_t width, int32_t height,
	enum AVPixelFormat from, enum AVPixelFormat to, int threads)
{
	struct converter *c = *conv;
	threads = threads < 1 ? 1 : threads;
	if (c && c->width == width && c->height == height && c->from == from && c->to == to &&
		c->threads == threads) {
		return true;
	}
	converter_destroy(c);
	*conv = converter_create(width, height, from, to, threads);
	return *conv != NULL;
}

int converter_threads(const struct converter *conv)
{
	return conv->threads;
}

static void keep(void *opaque, uint8_t *data)
{
	(void)opaque;
	(void)data;
}

/* The caller's planes as a frame of the conversion's size. */
static bool wrap(AVFrame *frame, const struct converter *conv, enum AVPixelFormat format,
	uint8_t *const planes[4], const int strides[4])
{
	frame->width = conv->width;
	frame->height = conv->height;
	frame->format = format;
	for (int i = 0; i < 4; i++) {
		frame->data[i] = planes[i];
		frame->linesize[i] = planes[i] ? strides[i] : 0;
	}
	frame->buf[0] = av_buffer_create(planes[0], 1, keep, NULL, 0);
	return frame->buf[0] != NULL;
}

bool converter_run(struct converter *conv, uint8_t *const src[4], const int src_stride[4],
	uint8_t *const dst[4], const int dst_stride[4])
{
	bool ok = wrap(conv->src, conv, conv->from, src, src_stride) &&
		wrap(conv->dst, conv, conv->to, dst, dst_stride) &&
		sws_scale_frame(conv->sws, conv->dst, conv->src) >= 0;
	av_frame_unref(conv->src);
	av_frame_unref(conv->dst);
	return ok;
}
