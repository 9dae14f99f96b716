/*
 * Colour conversion between the windows' BGRA and the video's YUV, by
 * libswscale, on threads of its own: each converts a band of the output's
 * rows, and the bands come out as the whole picture does. Only libswscale's
 * frame API threads (ffmpeg 5.1: sws_scale_frame; sws_scale runs on the
 * caller alone), and its dst-slice API gives wrong rows from a context
 * without threads, so the bands are its own, not the band pool's.
 */
#ifndef RCOMP_CONVERT_H
#define RCOMP_CONVERT_H

#include <libavutil/pixfmt.h>
#include <stdbool.h>
#include <stdint.h>

struct converter;

/* A width x height conversion from one format to another, without
 * scaling, on threads threads (1: the caller's alone). NULL if libswscale
 * has no such conversion or is out of memory. */
struct converter *converter_create(int32_t width, int32_t height, enum AVPixelFormat from,
	enum AVPixelFormat to, int threads);
void converter_destroy(struct converter *conv);

/* *conv if it is this conversion, else a new one in its place (the old
 * one destroyed). False, with *conv NULL, where converter_create fails. */
bool converter_reuse(struct converter **conv, int32_t width, int32_t height,
	enum AVPixelFormat from, enum AVPixelFormat to, int threads);

/* The threads it converts on. */
int converter_threads(const struct converter *conv);

/* Converts the planes of src into those of dst (each plane's pointer and
 * stride in bytes; as many as the formats have). dst's rows must have the
 * room libswscale's SIMD writes past the width (video.c's SWS_ROW_ALIGN). */
bool converter_run(struct converter *conv, uint8_t *const src[4], const int src_stride[4],
	uint8_t *const dst[4], const int dst_stride[4]);

#endif
