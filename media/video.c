/*
 * H.264 encoding and decoding of window images with libavcodec and libswscale.
 * The encoder prefers VAAPI (4:2:0) when a render node opens and falls back to
 * libx264 (4:4:4, or 4:2:0 for pictures past FULL_CHROMA_MAX_PIXELS);
 * the decoder is libavcodec's software H.264 decoder. Both use threads only
 * within a picture (slices), never across pictures, which would delay them.
 */
#include <libavcodec/avcodec.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert.h"
#include "log.h"
#include "scale.h"
#include "video.h"

#define MIN_BITRATE 100000
#define MAX_BITRATE 200000000
/* Frames between refreshes of the whole picture, the stream's safety net
 * (its IDRs with VAAPI, its intra refresh's sweep with libx264). */
#define REFRESH_FRAMES 600

struct video_encoder {
	AVCodecContext *ctx;
	AVFrame *frame; /* software frame: YUV420P, or NV12 for VAAPI upload */
	AVFrame *hw_frame;
	AVBufferRef *hw_device;
	AVPacket *packet;
	struct converter *conv; /* BGRA to the frame's YUV, on the stream's threads */
	int32_t width, height; /* the window's */
	int32_t picture_width, picture_height; /* what is encoded; padded to even */
	int64_t pts;
	int64_t bitrate;
	int threads;
	bool vaapi;
	enum AVPixelFormat chroma; /* libx264's: YUV444P or YUV420P */
	uint32_t *small; /* a smaller picture: the window scaled down, in BGRA */
	double qp; /* the quantizer of its recent pictures, smoothed; 0: none yet */
	int preset; /* libx264's, enum wire_preset */
};

/* Pictures larger than this are 4:2:0. 4:4:4 suits windows of sharp colour
 * edges (text, UI), which 4:2:0 chroma smears (measured on a test pattern,
 * 4:2:0 conversion alone loses blue to 30 dB, 4:4:4 keeps 51 dB); but at
 * 1920x1080 on two cores it costs libx264 1.6 times the time of 4:2:0
 * (23 against 14 ms of CPU a frame), and the viewer's conversion back has
 * no fast path for it (20 ms a frame in libswscale's generic code). A big
 * window in motion is a game or a video, which 4:2:0 is made for, and the
 * lossless refresh once it is still is exact whatever the chroma was. */
#define FULL_CHROMA_MAX_PIXELS (1280 * 800)

bool video_available(void)
{
	return true;
}

static int64_t clamp_bitrate(int64_t bitrate)
{
	return bitrate < MIN_BITRATE ? MIN_BITRATE
				     : (bitrate > MAX_BITRATE ? MAX_BITRATE : bitrate);
}

static void set_rate(AVCodecContext *ctx, int64_t bitrate, int fps)
{
	ctx->bit_rate = bitrate;
	ctx->rc_max_rate = bitrate;
	/* A buffer of about two frames: a frame never takes long to send. */
	ctx->rc_buffer_size = (int)(bitrate * 2 / (fps > 0 ? fps : 60));
}

static const char *render_node(void)
{
	const char *node = getenv("RCOMP_RENDER_NODE");
	if (node && *node) {
		return node;
	}
	return access("/dev/dri/renderD128", R_OK | W_OK) == 0 ? "/dev/dri/renderD128" : NULL;
}

/* Sets up h264_vaapi, or returns false so that libx264 is used instead. */
static bool open_vaapi(struct video_encoder *enc, int32_t w, int32_t h, int fps)
{
	static bool warned;
	const char *node = render_node();
	const AVCodec *codec = avcodec_find_encoder_by_name("h264_vaapi");
	if (!node || !codec) {
		return false;
	}
	if (av_hwdevice_ctx_create(&enc->hw_device, AV_HWDEVICE_TYPE_VAAPI, node, NULL, 0) < 0) {
		if (!warned) {
			log_info("VAAPI does not work on %s; encoding video with libx264", node);
			warned = true;
		}
		return false;
	}
	AVBufferRef *frames_ref = av_hwframe_ctx_alloc(enc->hw_device);
	if (!frames_ref) {
		goto error;
	}
	AVHWFramesContext *frames = (AVHWFramesContext *)frames_ref->data;
	frames->format = AV_PIX_FMT_VAAPI;
	frames->sw_format = AV_PIX_FMT_NV12;
	frames->width = w;
	frames->height = h;
	frames->initial_pool_size = 4;
	if (av_hwframe_ctx_init(frames_ref) < 0) {
		av_buffer_unref(&frames_ref);
		goto error;
	}
	enc->ctx = avcodec_alloc_context3(codec);
	if (!enc->ctx) {
		av_buffer_unref(&frames_ref);
		goto error;
	}
	enc->ctx->width = w;
	enc->ctx->height = h;
	enc->ctx->time_base = (AVRational){1, fps};
	enc->ctx->framerate = (AVRational){fps, 1};
	enc->ctx->pix_fmt = AV_PIX_FMT_VAAPI;
	enc->ctx->max_b_frames = 0;
	enc->ctx->gop_size = REFRESH_FRAMES;
	enc->ctx->hw_frames_ctx = frames_ref;
	set_rate(enc->ctx, enc->bitrate, fps);
	if (avcodec_open2(enc->ctx, codec, NULL) < 0) {
		goto error;
	}
	enc->hw_frame = av_frame_alloc();
	if (!enc->hw_frame ||
		av_hwframe_get_buffer(enc->ctx->hw_frames_ctx, enc->hw_frame, 0) < 0) {
		goto error;
	}
	enc->vaapi = true;
	return true;
error:
	if (!warned) {
		log_info("VAAPI encoding does not work on %s; encoding video with libx264", node);
		warned = true;
	}
	av_frame_free(&enc->hw_frame);
	avcodec_free_context(&enc->ctx);
	av_buffer_unref(&enc->hw_device);
	return false;
}

static bool open_x264(struct video_encoder *enc, int32_t w, int32_t h, int fps, int threads,
	char *err, size_t err_size)
{
	const AVCodec *codec = avcodec_find_encoder_by_name("libx264");
	if (!codec) {
		snprintf(err, err_size, "libavcodec has no libx264 encoder");
		return false;
	}
	enc->ctx = avcodec_alloc_context3(codec);
	if (!enc->ctx) {
		snprintf(err, err_size, "out of memory");
		return false;
	}
	enc->ctx->width = w;
	enc->ctx->height = h;
	enc->ctx->time_base = (AVRational){1, fps};
	enc->ctx->framerate = (AVRational){fps, 1};
	enc->ctx->pix_fmt = enc->chroma;
	enc->ctx->max_b_frames = 0;
	/* The stream is reliable and in order: one IDR at the start suffices,
	 * with a periodic refresh as a safety net. The refresh is libx264's
	 * intra refresh, a column of intra blocks that sweeps the picture in
	 * REFRESH_FRAMES, not an IDR: under a VBV of two frames an IDR is
	 * never large, but it is coarse (measured on a game clip at 800x600,
	 * 3 Mbit/s: PSNR-Y fell from 35.1 to 30.5 dB at each IDR and took 10
	 * frames to come back; with intra refresh the least was 34.4). */
	enc->ctx->gop_size = REFRESH_FRAMES;
	av_opt_set(enc->ctx->priv_data, "intra-refresh", "1", 0);
	/* Sliced threads: each picture cut in as many slices, encoded at once;
	 * frame threads would hold threads - 1 pictures back. */
	enc->ctx->thread_count = threads;
	enc->ctx->thread_type = FF_THREAD_SLICE;
	set_rate(enc->ctx, enc->bitrate, fps);
	av_opt_set(enc->ctx->priv_data, "preset", wire_preset_names[enc->preset], 0);
	av_opt_set(enc->ctx->priv_data, "tune", "zerolatency", 0);
	int ret = avcodec_open2(enc->ctx, codec, NULL);
	if (ret < 0) {
		snprintf(err, err_size, "cannot open libx264: %s", av_err2str(ret));
		return false;
	}
	return true;
}

struct video_encoder *video_encoder_create(int32_t width, int32_t height, int divisor, int fps,
	int threads, int64_t bitrate, int preset, char *err, size_t err_size)
{
	/* libavcodec logs to stderr on its own; keep only its errors. */
	if (log_get_level() < LOG_DEBUG) {
		av_log_set_level(AV_LOG_ERROR);
	}
	struct video_encoder *enc = calloc(1, sizeof(*enc));
	if (!enc) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	divisor = divisor < 1 ? 1 : divisor;
	enc->preset = preset >= 0 && preset < WIRE_PRESET_HARDWARE ? preset : WIRE_PRESET_ULTRAFAST;
	enc->width = width;
	enc->height = height;
	/* At its own size an odd window is padded to even; a smaller picture
	 * is scaled to an even size itself, so the viewer scales the whole of
	 * it back to the window, edge to edge. */
	enc->picture_width = width;
	enc->picture_height = height;
	if (divisor > 1) {
		enc->picture_width = ((width + divisor - 1) / divisor + 1) & ~1;
		enc->picture_height = ((height + divisor - 1) / divisor + 1) & ~1;
	}
	int32_t w = (enc->picture_width + 1) & ~1, h = (enc->picture_height + 1) & ~1;
	enc->bitrate = clamp_bitrate(bitrate);
	enc->chroma =
		(int64_t)w * h > FULL_CHROMA_MAX_PIXELS ? AV_PIX_FMT_YUV420P : AV_PIX_FMT_YUV444P;
	threads = threads < 1 ? 1 : threads;
	if (open_vaapi(enc, w, h, fps)) {
		enc->threads = 1;
	} else if (open_x264(enc, w, h, fps, threads, err, err_size)) {
		enc->threads = threads;
	} else {
		goto error;
	}
	enc->frame = av_frame_alloc();
	enc->packet = av_packet_alloc();
	if (!enc->frame || !enc->packet) {
		snprintf(err, err_size, "out of memory");
		goto error;
	}
	enc->frame->format = enc->vaapi ? AV_PIX_FMT_NV12 : enc->chroma;
	enc->frame->width = w;
	enc->frame->height = h;
	if (av_frame_get_buffer(enc->frame, 0) < 0) {
		snprintf(err, err_size, "out of memory for a %dx%d frame", w, h);
		goto error;
	}
	/* A smaller picture is scaled down by pixman first (scale_down), so
	 * libswscale only converts: its fast paths do not scale. */
	if (divisor > 1) {
		enc->small = malloc((size_t)enc->picture_width * enc->picture_height * 4);
		if (!enc->small) {
			snprintf(err, err_size, "out of memory");
			goto error;
		}
	}
	/* Converted on the threads the stream encodes on: one after the
	 * other, never at once. */
	enc->conv = converter_create(enc->picture_width, enc->picture_height, AV_PIX_FMT_BGRA,
		enc->frame->format, enc->threads);
	if (!enc->conv) {
		snprintf(err, err_size, "cannot convert %dx%d BGRA for the encoder", width, height);
		goto error;
	}
	return enc;
error:
	video_encoder_destroy(enc);
	return NULL;
}

void video_encoder_destroy(struct video_encoder *enc)
{
	if (!enc) {
		return;
	}
	converter_destroy(enc->conv);
	free(enc->small);
	av_packet_free(&enc->packet);
	av_frame_free(&enc->frame);
	av_frame_free(&enc->hw_frame);
	avcodec_free_context(&enc->ctx);
	av_buffer_unref(&enc->hw_device);
	free(enc);
}

/* The quantizer libavcodec reports with each picture (its side data's
 * quality, in lambda units), smoothed over about eight pictures. */
static void note_quality(struct video_encoder *enc, const AVPacket *pkt)
{
	size_t size = 0;
	const uint8_t *stats = av_packet_get_side_data(pkt, AV_PKT_DATA_QUALITY_STATS, &size);
	if (!stats || size < 4) {
		return;
	}
	uint32_t lambda = (uint32_t)stats[0] | (uint32_t)stats[1] << 8 | (uint32_t)stats[2] << 16 |
		(uint32_t)stats[3] << 24;
	double qp = (double)lambda / FF_QP2LAMBDA;
	enc->qp = enc->qp > 0 ? enc->qp + (qp - enc->qp) / 8 : qp;
}

double video_encoder_qp(const struct video_encoder *enc)
{
	return enc->qp;
}

int video_encoder_preset(const struct video_encoder *enc)
{
	return enc->vaapi ? WIRE_PRESET_HARDWARE : enc->preset;
}

bool video_encoder_has_presets(const struct video_encoder *enc)
{
	return !enc->vaapi;
}

const char *video_encoder_name(const struct video_encoder *enc)
{
	return enc->vaapi ? "h264_vaapi" : "libx264";
}

int video_encoder_threads(const struct video_encoder *enc)
{
	return enc->threads;
}

void video_encoder_picture(const struct video_encoder *enc, int32_t *width, int32_t *height)
{
	*width = enc->picture_width;
	*height = enc->picture_height;
}

/* Odd sizes are padded by one row or column: fill it with the edge so the
 * encoder does not spend bits on a seam the viewer never shows. */
static void pad_edges(AVFrame *frame, int32_t width, int32_t height)
{
	bool nv12 = frame->format == AV_PIX_FMT_NV12;
	int planes = nv12 ? 2 : 3;
	bool sub420 = frame->format != AV_PIX_FMT_YUV444P;
	for (int p = 0; p < planes; p++) {
		int sub = (p == 0 || !sub420) ? 0 : 1;
		int pw = (width + sub) >> sub, ph = (height + sub) >> sub;
		int fw = frame->width >> sub, fh = frame->height >> sub;
		int bpp = (nv12 && p == 1) ? 2 : 1;
		uint8_t *data = frame->data[p];
		int stride = frame->linesize[p];
		if (pw < fw) {
			for (int y = 0; y < ph; y++) {
				memcpy(data + (size_t)y * stride + (size_t)pw * bpp,
					data + (size_t)y * stride + (size_t)(pw - 1) * bpp,
					(size_t)bpp);
			}
		}
		if (ph < fh) {
			memcpy(data + (size_t)ph * stride, data + (size_t)(ph - 1) * stride,
				(size_t)fw * bpp);
		}
	}
}

/* The window's pixels to the smaller picture: pixman's bilinear filter,
 * whose SIMD paths take a fraction of what libswscale's general scaler
 * does (1920x1080 to half: 3 against 14 ms of a core here). */
static bool scale_down(struct video_encoder *enc, const uint32_t *pixels, int32_t stride)
{
	return scale_bilinear(pixels, enc->width, enc->height, stride, enc->small,
		enc->picture_width, enc->picture_height, enc->picture_width);
}

bool video_encoder_encode(struct video_encoder *enc, const uint32_t *pixels, int32_t stride,
	int64_t bitrate, struct buffer *out, bool *produced)
{
	*produced = false;
	bitrate = clamp_bitrate(bitrate);
	/* libx264 reconfigures itself when the rate changes between frames;
	 * small changes are not worth a reconfiguration. */
	if (bitrate > enc->bitrate * 11 / 10 || bitrate < enc->bitrate * 9 / 10) {
		enc->bitrate = bitrate;
		int fps = enc->ctx->framerate.num > 0 ? enc->ctx->framerate.num : 60;
		set_rate(enc->ctx, bitrate, fps);
	}
	if (av_frame_make_writable(enc->frame) < 0) {
		return false;
	}
	if (enc->small) {
		if (!scale_down(enc, pixels, stride)) {
			return false;
		}
		pixels = enc->small;
		stride = enc->picture_width;
	}
	uint8_t *src[4] = {(uint8_t *)pixels};
	int src_stride[4] = {stride * 4};
	if (!converter_run(enc->conv, src, src_stride, enc->frame->data, enc->frame->linesize)) {
		return false;
	}
	pad_edges(enc->frame, enc->picture_width, enc->picture_height);
	AVFrame *input = enc->frame;
	if (enc->vaapi) {
		if (av_hwframe_transfer_data(enc->hw_frame, enc->frame, 0) < 0) {
			return false;
		}
		input = enc->hw_frame;
	}
	input->pts = enc->pts++;
	int ret = avcodec_send_frame(enc->ctx, input);
	if (ret < 0) {
		return false;
	}
	for (;;) {
		ret = avcodec_receive_packet(enc->ctx, enc->packet);
		if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) {
			return true;
		}
		if (ret < 0) {
			return false;
		}
		note_quality(enc, enc->packet);
		bool ok = buffer_append(out, enc->packet->data, (size_t)enc->packet->size);
		av_packet_unref(enc->packet);
		if (!ok) {
			return false;
		}
		*produced = true;
	}
}

size_t video_append_frame(struct video_encoder *enc, struct wire_frame frame,
	const uint32_t *pixels, int32_t stride, int64_t bitrate, struct buffer *out, bool *failed)
{
	frame.codec = WIRE_CODEC_H264;
	frame.compression = WIRE_COMPRESS_NONE;
	struct wire_msg msg = {.type = WIRE_FRAME, .frame = frame};
	size_t before = buffer_size(out), start;
	bool produced = false;
	*failed = !wire_begin(out, &msg, &start) ||
		!video_encoder_encode(enc, pixels, stride, bitrate, out, &produced);
	if (*failed || !produced) {
		buffer_truncate(out, before);
		return 0;
	}
	wire_finish(out, start);
	return buffer_size(out) - before;
}

struct video_decoder {
	AVCodecContext *ctx;
	AVFrame *frame;
	AVFrame *sw_frame; /* a hardware picture copied to memory */
	AVBufferRef *hw_device;
	AVPacket *packet;
	/* Reads the parameter sets and slice headers the decoder will see, so a
	 * picture size is known before the decoder sizes anything for it. */
	AVCodecParserContext *parser;
	int coded_width, coded_height; /* the most a slice's picture may have */
	int picture_width, picture_height; /* of the last picture decoded */
	struct converter *conv; /* to BGRA, on the decoder's threads */
	/* BGRA at libswscale's padded stride: a smaller picture before it is
	 * scaled up, or one for a buffer whose rows are too tight */
	uint32_t *scratch;
	size_t scratch_size; /* pixels */
	uint8_t *padded; /* the access unit with the padding libavcodec wants */
	size_t padded_size;
	AVFrame *held; /* decoded, not yet output (while holding) */
	bool holding;
	int32_t window_width, window_height; /* as the last decode was told */
};

int video_decoder_threads(const struct video_decoder *dec)
{
	return dec->ctx->thread_count;
}

void video_decoder_picture(const struct video_decoder *dec, int *width, int *height)
{
	*width = dec->picture_width;
	*height = dec->picture_height;
}

struct video_decoder *video_decoder_create(int32_t width, int32_t height, int threads, char *err,
	size_t err_size)
{
	if (log_get_level() < LOG_DEBUG) {
		av_log_set_level(AV_LOG_ERROR);
	}
	struct video_decoder *dec = calloc(1, sizeof(*dec));
	const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_H264);
	if (!dec || !codec) {
		snprintf(err, err_size, dec ? "libavcodec has no H.264 decoder" : "out of memory");
		free(dec);
		return NULL;
	}
	dec->ctx = avcodec_alloc_context3(codec);
	dec->frame = av_frame_alloc();
	dec->held = av_frame_alloc();
	dec->packet = av_packet_alloc();
	dec->parser = av_parser_init(AV_CODEC_ID_H264);
	if (!dec->ctx || !dec->frame || !dec->held || !dec->packet || !dec->parser) {
		snprintf(err, err_size, "out of memory");
		goto error;
	}
	/* The stream may declare no larger picture than the window's, padded to
	 * whole macroblocks. libavcodec's max_pixels refuses larger picture
	 * buffers (with room for its 64-byte stride alignment), but the H.264
	 * decoder sizes its macroblock tables from the SPS before any buffer
	 * (about 100 bytes a macroblock: 100 MB for 16000x16000), so the parser
	 * screens each access unit first (video_decoder_decode). */
	dec->coded_width = (width + 15) & ~15;
	dec->coded_height = (height + 15) & ~15;
	dec->ctx->max_pixels = (int64_t)((width + 63) & ~63) * dec->coded_height;
	dec->ctx->width = (width + 1) & ~1;
	dec->ctx->height = (height + 1) & ~1;
	/* Output each picture as soon as it is decoded. */
	dec->ctx->flags |= AV_CODEC_FLAG_LOW_DELAY;
	/* Slices on threads of their own: a picture still comes out as soon as
	 * it is decoded (frame threads would hold threads - 1 back). */
	dec->ctx->thread_count = threads < 1 ? 1 : threads;
	dec->ctx->thread_type = FF_THREAD_SLICE;
	/* Hardware decoding where a render node works; libavcodec falls back
	 * to software by itself when the stream is beyond the hardware (VAAPI
	 * has no 4:4:4 H.264, which libx264 streams are). */
	const char *node = render_node();
	if (node &&
		av_hwdevice_ctx_create(&dec->hw_device, AV_HWDEVICE_TYPE_VAAPI, node, NULL, 0) ==
			0) {
		dec->ctx->hw_device_ctx = av_buffer_ref(dec->hw_device);
		dec->sw_frame = av_frame_alloc();
	}
	int ret = avcodec_open2(dec->ctx, codec, NULL);
	if (ret < 0) {
		snprintf(err, err_size, "cannot open the H.264 decoder: %s", av_err2str(ret));
		goto error;
	}
	return dec;
error:
	video_decoder_destroy(dec);
	return NULL;
}

void video_decoder_destroy(struct video_decoder *dec)
{
	if (!dec) {
		return;
	}
	converter_destroy(dec->conv);
	if (dec->parser) {
		av_parser_close(dec->parser);
	}
	av_packet_free(&dec->packet);
	av_frame_free(&dec->frame);
	av_frame_free(&dec->held);
	av_frame_free(&dec->sw_frame);
	avcodec_free_context(&dec->ctx);
	av_buffer_unref(&dec->hw_device);
	free(dec->padded);
	free(dec->scratch);
	free(dec);
}

static bool parse_fits(struct video_decoder *dec, uint8_t *data, size_t size)
{
	uint8_t *parsed;
	int parsed_size;
	av_parser_parse2(dec->parser, dec->ctx, &parsed, &parsed_size, data, (int)size,
		AV_NOPTS_VALUE, AV_NOPTS_VALUE, 0);
	return dec->parser->coded_width <= dec->coded_width &&
		dec->parser->coded_height <= dec->coded_height;
}

/* Whether every slice of the access unit (padded) belongs to a picture the
 * decoder may allocate. The parser reads only up to the first slice of what
 * it is given, so it gets the unit in pieces that each end with one slice:
 * it then sees every parameter set and every slice in the decoder's order. */
static bool screen_access_unit(struct video_decoder *dec, uint8_t *au, size_t size)
{
	dec->parser->flags |= PARSER_FLAG_COMPLETE_FRAMES;
	size_t begin = 0;
	bool in_slice = false;
	for (size_t i = 0; i + 3 < size; i++) {
		if (au[i] != 0 || au[i + 1] != 0 || au[i + 2] != 1) {
			continue;
		}
		if (in_slice) {
			if (!parse_fits(dec, au + begin, i - begin)) {
				return false;
			}
			begin = i;
		}
		unsigned type = au[i + 3] & 0x1f;
		in_slice = type == 1 || type == 5; /* coded slice: non-IDR, IDR */
		i += 2;
	}
	return begin == size || parse_fits(dec, au + begin, size - begin);
}

/* Pixels a row of libswscale's output must have room for. Its SIMD
 * converters (ffmpeg 5.1) write whole blocks of pixels, past the width
 * where the row is not a whole number of them, so a tight buffer
 * overflows on its last row. */
#define SWS_ROW_ALIGN 16
static int32_t sws_row(int32_t width)
{
	return (width + SWS_ROW_ALIGN - 1) & ~(SWS_ROW_ALIGN - 1);
}

/* Room for a width x height picture in BGRA at the padded stride. */
static bool reserve_scratch(struct video_decoder *dec, int32_t width, int32_t height)
{
	size_t need = (size_t)sws_row(width) * (size_t)height;
	if (dec->scratch_size < need) {
		uint32_t *p = realloc(dec->scratch, need * 4);
		if (!p) {
			return false;
		}
		dec->scratch = p;
		dec->scratch_size = need;
	}
	return true;
}

/* The picture's width x height to BGRA, without scaling: libswscale's fast
 * path where the format has one (4:2:0 does). Straight into dst where its
 * rows have the room libswscale needs, else through scratch. */
static bool convert(struct video_decoder *dec, const AVFrame *f, int32_t width, int32_t height,
	uint32_t *dst, int32_t stride)
{
	if (!converter_reuse(&dec->conv, width, height, f->format, AV_PIX_FMT_BGRA,
		    dec->ctx->thread_count)) {
		return false;
	}
	bool direct = stride >= sws_row(width);
	if (!direct && !reserve_scratch(dec, width, height)) {
		return false;
	}
	uint8_t *planes[4] = {(uint8_t *)(direct ? dst : dec->scratch)};
	int strides[4] = {(direct ? stride : sws_row(width)) * 4};
	if (!converter_run(dec->conv, (uint8_t *const *)f->data, f->linesize, planes, strides)) {
		return false;
	}
	if (!direct) {
		for (int32_t y = 0; y < height; y++) {
			memcpy(dst + (size_t)y * (size_t)stride,
				dec->scratch + (size_t)y * (size_t)sws_row(width),
				(size_t)width * 4);
		}
	}
	return true;
}

/* A smaller picture: converted at its own size, then scaled up bilinearly
 * by pixman, whose SIMD paths do it in a fraction of the time libswscale's
 * general scaler takes to convert and scale at once (1920x1080 from half
 * size on this machine: 5 against 20 ms). */
static bool scale_up(struct video_decoder *dec, const AVFrame *f, int32_t width, int32_t height,
	uint32_t *dst, int32_t stride)
{
	return reserve_scratch(dec, f->width, f->height) &&
		convert(dec, f, f->width, f->height, dec->scratch, sws_row(f->width)) &&
		scale_bilinear(dec->scratch, f->width, f->height, sws_row(f->width), dst, width,
			height, stride);
}

bool video_decoder_decode(struct video_decoder *dec, const uint8_t *data, size_t size,
	int32_t width, int32_t height, uint32_t *dst, int32_t stride, bool *decoded, char *err,
	size_t err_size)
{
	*decoded = false;
	if (size == 0 || size > INT32_MAX - AV_INPUT_BUFFER_PADDING_SIZE) {
		snprintf(err, err_size, "empty or oversized video frame");
		return false;
	}
	size_t need = size + AV_INPUT_BUFFER_PADDING_SIZE;
	if (dec->padded_size < need) {
		uint8_t *p = realloc(dec->padded, need);
		if (!p) {
			snprintf(err, err_size, "out of memory");
			return false;
		}
		dec->padded = p;
		dec->padded_size = need;
	}
	memcpy(dec->padded, data, size);
	memset(dec->padded + size, 0, AV_INPUT_BUFFER_PADDING_SIZE);
	if (!screen_access_unit(dec, dec->padded, size)) {
		snprintf(err, err_size,
			"video stream declares a %dx%d picture, the window is %dx%d",
			dec->parser->coded_width, dec->parser->coded_height, width, height);
		return false;
	}
	dec->packet->data = dec->padded;
	dec->packet->size = (int)size;
	int ret = avcodec_send_packet(dec->ctx, dec->packet);
	dec->packet->data = NULL;
	dec->packet->size = 0;
	if (ret < 0) {
		snprintf(err, err_size, "video frame does not decode: %s", av_err2str(ret));
		return false;
	}
	for (;;) {
		ret = avcodec_receive_frame(dec->ctx, dec->frame);
		if (ret == AVERROR(EAGAIN)) {
			return true;
		}
		if (ret < 0) {
			snprintf(err, err_size, "video frame does not decode: %s", av_err2str(ret));
			return false;
		}
		AVFrame *f = dec->frame;
		if (f->format == AV_PIX_FMT_VAAPI && dec->sw_frame) {
			av_frame_unref(dec->sw_frame);
			if (av_hwframe_transfer_data(dec->sw_frame, f, 0) < 0) {
				snprintf(err, err_size, "cannot read a hardware-decoded picture");
				av_frame_unref(f);
				return false;
			}
			av_frame_unref(f);
			f = dec->sw_frame;
		}
		if (f->width > ((width + 1) & ~1) || f->height > ((height + 1) & ~1) ||
			f->width < 2 || f->height < 2) {
			snprintf(err, err_size, "video picture is %dx%d, the window %dx%d",
				f->width, f->height, width, height);
			av_frame_unref(f);
			return false;
		}
		dec->picture_width = f->width;
		dec->picture_height = f->height;
		/* Held apart: receiving the next (even none) clears f. A newer
		 * picture wins. */
		av_frame_unref(dec->held);
		av_frame_move_ref(dec->held, f);
		dec->holding = true;
		dec->window_width = width;
		dec->window_height = height;
		*decoded = true;
		if (dst && !video_decoder_output(dec, dst, stride, width, height)) {
			snprintf(err, err_size, "cannot convert the decoded picture");
			return false;
		}
	}
}

bool video_decoder_output(struct video_decoder *dec, uint32_t *dst, int32_t stride, int32_t width,
	int32_t height)
{
	AVFrame *f = dec->held;
	if (!dec->holding) {
		return false;
	}
	dec->holding = false;
	/* The window padded to even sizes, shown as it is (the padding left
	 * out); a smaller picture at its own size; or scaled up to the
	 * window's. */
	bool ok;
	if (width == dec->window_width && height == dec->window_height &&
		(f->width != ((width + 1) & ~1) || f->height != ((height + 1) & ~1))) {
		ok = scale_up(dec, f, width, height, dst, stride);
	} else if (width <= f->width && height <= f->height) {
		ok = convert(dec, f, width, height, dst, stride);
	} else {
		ok = false;
	}
	av_frame_unref(f);
	return ok;
}
