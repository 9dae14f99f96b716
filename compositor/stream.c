/*
 * The stream to the viewer: the listening socket (or stdio), the handshake,
 * window announcements and lossless frames out, input and acks in. One viewer
 * at a time; a viewer that attaches gets a snapshot of every window.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>
#include <wlr/types/wlr_xdg_shell.h>
#include <wlr/xwayland.h>

#include "log.h"
#include "video.h"
#include "server.h"

/* Frames are encoded only while less than this is waiting to be written, so
 * a slow link holds at most about one frame plus control messages. */
#define OUT_HIGH_WATER (256 * 1024)
#define OUT_LIMIT ((size_t)WIRE_HEADER_SIZE + WIRE_MAX_BODY + (1u << 20))
/* The largest viewer message is a keymap. */
#define IN_LIMIT ((size_t)WIRE_HEADER_SIZE + 4 + WIRE_MAX_KEYMAP)
/* Rectangles per frame before the damage is sent as its bounding box. */
#define MAX_FRAME_RECTS 64
#define READ_CHUNK (64 * 1024)

static void viewer_destroy(struct rc_viewer *viewer);

static void viewer_error(struct rc_viewer *viewer, const char *text)
{
	struct rc_server *server = viewer->server;
	log_error("viewer sent bad data, disconnecting it: %s", text);
	/* Tell the peer why, then close once that is written. */
	buffer_consume(&viewer->in, buffer_size(&viewer->in));
	stream_goodbye(server, WIRE_BYE_PROTOCOL_ERROR, 0, text);
}

static int32_t clamp_dim(int32_t v, int32_t min)
{
	return v < min ? min : (v > WIRE_MAX_DIM ? WIRE_MAX_DIM : v);
}

void stream_send(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_viewer *viewer = server->viewer;
	if (!viewer || viewer->closing) {
		return;
	}
	if (!wire_encode(&viewer->out, msg)) {
		log_error("viewer is not reading (%zu bytes queued); disconnecting it",
			buffer_size(&viewer->out));
		viewer_destroy(viewer);
	}
}

/* The message that announces a popup; false while its parent is not shown
 * (then neither is it). */
static bool popup_msg(struct rc_server *server, struct rc_window *window, struct wire_msg *msg)
{
	struct rc_window *parent = window_from_id(server, window->parent_id);
	if (!parent || !parent->announced) {
		return false;
	}
	if (window->xwayland) {
		/* An X11 menu: placed where the app put it, relative to its
		 * parent's X position; the local compositor may not move it, or
		 * the app's idea of it would be wrong. */
		struct wlr_xwayland_surface *x = window->xwayland;
		struct wlr_xwayland_surface *px = parent->xwayland;
		int32_t ax = px ? x->x - px->x : 0, ay = px ? x->y - px->y : 0;
		*msg = (struct wire_msg){
			.type = WIRE_POPUP_NEW,
			.popup_new =
				{
					.window = window->id,
					.parent = parent->id,
					.anchor_x = clamp_dim(ax, -WIRE_MAX_DIM),
					.anchor_y = clamp_dim(ay, -WIRE_MAX_DIM),
					.anchor_width = 1,
					.anchor_height = 1,
					.width = clamp_dim(x->width, 1),
					.height = clamp_dim(x->height, 1),
					.anchor = 5, /* top left */
					.gravity = 8, /* bottom right */
				},
		};
		return true;
	}
	struct wlr_xdg_popup *popup = window->xdg_surface->popup;
	const struct wlr_xdg_positioner *pos = &popup->positioner;
	/* The local popup's parent frame starts at the parent's window geometry,
	 * as the positioner's anchor rectangle does. */
	*msg = (struct wire_msg){
		.type = WIRE_POPUP_NEW,
		.popup_new =
			{
				.window = window->id,
				.parent = parent->id,
				.anchor_x = clamp_dim(pos->anchor_rect.x, -WIRE_MAX_DIM),
				.anchor_y = clamp_dim(pos->anchor_rect.y, -WIRE_MAX_DIM),
				.anchor_width = clamp_dim(pos->anchor_rect.width, 0),
				.anchor_height = clamp_dim(pos->anchor_rect.height, 0),
				.width = clamp_dim(pos->size.width, 1),
				.height = clamp_dim(pos->size.height, 1),
				.anchor = pos->anchor <= 8 ? (uint32_t)pos->anchor : 0,
				.gravity = pos->gravity <= 8 ? (uint32_t)pos->gravity : 0,
				.constraint_adjustment = (uint32_t)pos->constraint_adjustment & 63,
				.offset_x = clamp_dim(pos->offset.x, -WIRE_MAX_DIM),
				.offset_y = clamp_dim(pos->offset.y, -WIRE_MAX_DIM),
				.flags = popup->seat ? WIRE_POPUP_GRAB : 0,
			},
	};
	return true;
}

/* The toplevel's parent as the viewer knows it: 0 while the parent is not
 * announced (stream_window_new names it once it is). */
static uint32_t toplevel_parent_id(const struct rc_window *window)
{
	const struct rc_window *p = window_parent(window);
	return p && p->announced ? p->id : 0;
}

void stream_window_parent(struct rc_server *server, struct rc_window *window)
{
	if (!server->viewer || !window->announced || window->popup) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_WINDOW_PARENT,
		.window_parent = {.window = window->id, .parent = toplevel_parent_id(window)},
	};
	stream_send(server, &msg);
}

void stream_window_scale(struct rc_server *server, struct rc_window *window)
{
	if (!server->viewer || !window->announced) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_WINDOW_SCALE,
		.window_scale = {.window = window->id, .scale = window->scale},
	};
	stream_send(server, &msg);
}

void stream_window_decoration(struct rc_server *server, struct rc_window *window)
{
	if (!server->viewer || !window->announced || window->popup) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_WINDOW_DECORATION,
		.window_decoration = {.window = window->id, .mode = window->server_side ? 2 : 1},
	};
	stream_send(server, &msg);
}

void stream_window_request(struct rc_server *server, struct rc_window *window,
	enum wire_window_request request)
{
	if (!server->viewer || !window->announced) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_WINDOW_REQUEST,
		.window_request = {.window = window->id, .request = request},
	};
	stream_send(server, &msg);
}

void stream_window_hints(struct rc_server *server, struct rc_window *window, bool force)
{
	if (window->xwayland) {
		return; /* X11 size hints are not forwarded */
	}
	const struct wlr_xdg_toplevel_state *state = &window->xdg_surface->toplevel->current;
	int32_t hints[4] = {
		clamp_dim((int32_t)state->min_width, 0),
		clamp_dim((int32_t)state->min_height, 0),
		clamp_dim((int32_t)state->max_width, 0),
		clamp_dim((int32_t)state->max_height, 0),
	};
	if (!force && memcmp(hints, window->hints, sizeof(hints)) == 0) {
		return;
	}
	memcpy(window->hints, hints, sizeof(hints));
	if (!server->viewer || !window->announced) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_WINDOW_HINTS,
		.window_hints = {window->id, hints[0], hints[1], hints[2], hints[3]},
	};
	stream_send(server, &msg);
}

void stream_window_new(struct rc_server *server, struct rc_window *window)
{
	if (!server->viewer || !server->viewer->handshake_done || !window->mapped) {
		return;
	}
	struct wire_msg msg;
	if (window->popup) {
		if (!popup_msg(server, window, &msg)) {
			return;
		}
	} else {
		const char *title = window_title(window);
		const char *app_id = window_app_id(window);
		msg = (struct wire_msg){
			.type = WIRE_WINDOW_NEW,
			.window_new =
				{
					.window = window->id,
					.parent = toplevel_parent_id(window),
					.width = clamp_dim(window->geometry.width, 0),
					.height = clamp_dim(window->geometry.height, 0),
					.title_len = (uint32_t)strnlen(title, WIRE_MAX_TITLE),
					.app_id_len = (uint32_t)strnlen(app_id, WIRE_MAX_APP_ID),
					.title = title,
					.app_id = app_id,
				},
		};
	}
	stream_send(server, &msg);
	window->announced = true;
	window->need_reset = true;
	window->acked = window->seq;
	window_damage_all(window);
	if (window->scale != 1) {
		stream_window_scale(server, window);
	}
	if (window->popup) {
		return;
	}
	/* Hints and states come before the first frame maps the local window,
	 * so its compositor places it knowing them. A new window gets the
	 * states the app asked for before it mapped; a snapshot, its states. */
	bool first = !window->ever_announced;
	window->ever_announced = true;
	stream_window_hints(server, window, true);
	stream_window_decoration(server, window);
	if (window_wants_maximized(window, first)) {
		stream_window_request(server, window, WIRE_REQUEST_MAXIMIZE);
	}
	if (window_wants_fullscreen(window, first)) {
		stream_window_request(server, window, WIRE_REQUEST_FULLSCREEN);
	}
	/* Children announced before their parent get it now. */
	struct rc_window *child;
	wl_list_for_each(child, &server->windows, link)
	{
		if (!child->popup && child->announced && window_parent(child) == window) {
			stream_window_parent(server, child);
		}
	}
}

void stream_window_title(struct rc_server *server, struct rc_window *window, bool app_id)
{
	if (!server->viewer || !window->announced) {
		return;
	}
	const char *text = app_id ? window_app_id(window) : window_title(window);
	struct wire_msg msg = {
		.type = app_id ? WIRE_WINDOW_APP_ID : WIRE_WINDOW_TITLE,
		.window_text =
			{
				.window = window->id,
				.len = (uint32_t)strnlen(text,
					app_id ? WIRE_MAX_APP_ID : WIRE_MAX_TITLE),
				.text = text,
			},
	};
	stream_send(server, &msg);
}

void stream_window_destroy(struct rc_server *server, struct rc_window *window)
{
	if (!server->viewer || !window->announced) {
		return;
	}
	window->announced = false;
	/* Its frames in flight will never be acked. */
	flow_forget_window(&server->viewer->flow, window->id);
	window->acked = window->seq;
	struct wire_msg msg = {.type = WIRE_WINDOW_DESTROY, .window_destroy = {window->id}};
	stream_send(server, &msg);
}

void stream_goodbye(struct rc_server *server, enum wire_goodbye_reason reason, int status,
	const char *text)
{
	struct rc_viewer *viewer = server->viewer;
	if (!viewer || viewer->closing) {
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_GOODBYE,
		.goodbye =
			{
				.status = status,
				.reason = reason,
				.text_len = (uint32_t)strnlen(text, WIRE_MAX_TEXT),
				.text = text,
			},
	};
	stream_send(server, &msg);
	if (server->viewer) {
		server->viewer->closing = true;
	}
}

bool stream_ready_for_frame(struct rc_server *server, struct rc_window *window)
{
	struct rc_viewer *viewer = server->viewer;
	/* A window with nothing in flight may always send one frame: else a
	 * window whose clock ticks just after a busy one's could find the
	 * budget spent at every tick and starve. */
	return viewer && viewer->handshake_done && !viewer->closing && window->announced &&
		buffer_size(&viewer->out) < OUT_HIGH_WATER &&
		(window->acked == window->seq || flow_can_send(&viewer->flow, server_time_usec()));
}

static bool ensure_scratch(struct rc_server *server, size_t size)
{
	if (server->scratch_size >= size) {
		return true;
	}
	uint8_t *scratch = realloc(server->scratch, size);
	if (!scratch) {
		return false;
	}
	server->scratch = scratch;
	server->scratch_size = size;
	return true;
}

/* Books a frame just written after `before` bytes of the output buffer. */
static void frame_queued(struct rc_server *server, struct rc_window *window, size_t before,
	uint64_t now)
{
	struct rc_viewer *viewer = server->viewer;
	uint32_t bytes = (uint32_t)(buffer_size(&viewer->out) - before);
	window->seq++;
	window->stat_frames++;
	window->stat_bytes += bytes;
	flow_sent(&viewer->flow, window->id, window->seq, bytes, now);
}

static void send_lossless(struct rc_server *server, struct rc_window *window)
{
	struct rc_viewer *viewer = server->viewer;
	struct image cur = {window->pixels, window->width, window->height, window->width};
	struct image base = {window->sent, window->width, window->height, window->width};
	uint16_t flags = 0;

	if (window->need_reset) {
		memset(window->sent, 0, (size_t)window->width * window->height * 4);
		pixman_region32_union_rect(&window->damage, &window->damage, 0, 0, window->width,
			window->height);
		flags |= WIRE_FRAME_RESET;
	}

	int n = 0;
	pixman_box32_t *boxes = pixman_region32_rectangles(&window->damage, &n);
	pixman_box32_t extents = *pixman_region32_extents(&window->damage);
	if (n > MAX_FRAME_RECTS) {
		boxes = &extents;
		n = 1;
	}
	struct wire_rect rects[MAX_FRAME_RECTS];
	size_t nrects = 0;
	uint64_t raw_size = 0;
	for (int i = 0; i < n; i++) {
		struct wire_rect r = {boxes[i].x1, boxes[i].y1, boxes[i].x2 - boxes[i].x1,
			boxes[i].y2 - boxes[i].y1};
		/* Send only what really changed since the viewer's copy. */
		if (r.width > 0 && r.height > 0 && codec_rect_shrink(&cur, &base, &r)) {
			rects[nrects++] = r;
			raw_size += (uint64_t)r.width * r.height * 4;
		}
	}
	pixman_region32_clear(&window->damage);
	if (nrects == 0 && !(flags & WIRE_FRAME_RESET)) {
		return;
	}
	if (!ensure_scratch(server, raw_size ? raw_size : 1)) {
		log_error("out of memory encoding a frame of window %u", window->id);
		window_damage_all(window);
		return;
	}
	size_t written = codec_diff_encode(&cur, &base, rects, nrects, server->scratch);

	struct wire_msg msg = {
		.type = WIRE_FRAME,
		.frame =
			{
				.window = window->id,
				.seq = window->seq + 1,
				.width = window->width,
				.height = window->height,
				.codec = WIRE_CODEC_XOR,
				.compression = (uint8_t)server->compressor.kind,
				.flags = flags,
				.nrects = (uint32_t)nrects,
				.raw_size = (uint32_t)written,
			},
	};
	size_t before = buffer_size(&viewer->out), start;
	if (!wire_frame_begin(&viewer->out, &msg, rects, &start) ||
		!compressor_compress(&server->compressor, server->scratch, written, &viewer->out)) {
		/* The viewer's copy no longer matches ours: resend it whole. */
		buffer_truncate(&viewer->out, before);
		log_error("cannot queue a frame of window %u; resending it whole", window->id);
		window->need_reset = true;
		window_damage_all(window);
		return;
	}
	wire_frame_finish(&viewer->out, start);
	frame_queued(server, window, before, server_time_usec());
	window->need_reset = false;
	if (server->dump_dir) {
		capture_dump(window, server->dump_dir);
	}
}

/* A window goes to video after this many frames in a row that change at
 * least MOTION_FRACTION of it, and back to lossless after STILL_FRAMES frames
 * that change less than STILL_FRACTION, or when nothing changed for
 * REFRESH_AFTER_US: then a lossless refresh makes text sharp again. */
#define MOTION_FRAMES 3
#define MOTION_FRACTION 0.5
#define STILL_FRAMES 10
#define STILL_FRACTION 0.1
#define REFRESH_AFTER_US (150 * 1000)
#define MIN_VIDEO_PIXELS (64 * 64)
#define INITIAL_BITRATE 4000000
#define MIN_BITRATE 200000

static double damage_fraction(struct rc_window *window)
{
	int n = 0;
	pixman_box32_t *boxes = pixman_region32_rectangles(&window->damage, &n);
	uint64_t area = 0;
	for (int i = 0; i < n; i++) {
		area += (uint64_t)(boxes[i].x2 - boxes[i].x1) *
			(uint64_t)(boxes[i].y2 - boxes[i].y1);
	}
	uint64_t total = (uint64_t)window->width * (uint64_t)window->height;
	return total ? (double)area / (double)total : 0;
}

static int window_fps(struct rc_window *window)
{
	long interval = capture_frame_interval_ns(window);
	return (int)((1000000000L + interval / 2) / interval);
}

/* The video bit rate follows the link: it grows while round trips stay near
 * their minimum (no queue), and drops to below the delivery rate when a
 * queue builds. It never asks for more than the picture needs. */
static int64_t video_bitrate(struct rc_server *server, struct rc_window *window, uint64_t now)
{
	const struct flow *flow = &server->viewer->flow;
	int64_t rate = (int64_t)flow_rate(flow) * 8;
	int64_t ceiling = (int64_t)window->width * window->height * window_fps(window) / 4;
	if (ceiling < MIN_BITRATE) {
		ceiling = MIN_BITRATE;
	}
	if (window->video_bitrate == 0) {
		window->video_bitrate = rate > 0 ? rate * 8 / 10 : INITIAL_BITRATE;
		window->bitrate_stamp_us = now;
	} else if (now - window->bitrate_stamp_us >= 250000) {
		window->bitrate_stamp_us = now;
		double min_rtt = (double)flow->min_rtt_us / 1000.0;
		bool queueing = window->rtt_ms > min_rtt * 1.5 + 10.0;
		if (queueing && rate > 0) {
			window->video_bitrate = rate * 8 / 10;
		} else if (!queueing) {
			window->video_bitrate = window->video_bitrate * 115 / 100;
		}
	}
	if (window->video_bitrate > ceiling) {
		window->video_bitrate = ceiling;
	}
	if (window->video_bitrate < MIN_BITRATE) {
		window->video_bitrate = MIN_BITRATE;
	}
	return window->video_bitrate;
}

static void stop_video(struct rc_window *window, const char *why)
{
	log_debug("window %u: back to lossless (%s)", window->id, why);
	video_encoder_destroy(window->encoder);
	window->encoder = NULL;
	window->video = false;
	window->motion_frames = 0;
	window->still_frames = 0;
	/* The viewer's copy is lossy: refresh all of it, losslessly. */
	window->need_reset = true;
	pixman_region32_union_rect(&window->damage, &window->damage, 0, 0, window->width,
		window->height);
}

static bool start_video(struct rc_server *server, struct rc_window *window)
{
	char err[256];
	uint64_t now = server_time_usec();
	window->video_bitrate = 0;
	window->encoder = video_encoder_create(window->width, window->height, window_fps(window),
		video_bitrate(server, window, now), err, sizeof(err));
	if (!window->encoder) {
		log_error("window %u stays lossless: %s", window->id, err);
		window->video_failed = true;
		return false;
	}
	log_debug("window %u: video with %s", window->id, video_encoder_name(window->encoder));
	window->video = true;
	window->new_stream = true;
	window->still_frames = 0;
	window->last_change_us = now;
	return true;
}

static void send_video(struct rc_server *server, struct rc_window *window)
{
	struct rc_viewer *viewer = server->viewer;
	uint64_t now = server_time_usec();
	if (window->need_reset) {
		/* A new viewer, or a new size: a new stream. */
		video_encoder_destroy(window->encoder);
		window->encoder = NULL;
		window->need_reset = false;
		if (!start_video(server, window)) {
			window->need_reset = true;
			send_lossless(server, window);
			return;
		}
	}
	pixman_region32_clear(&window->damage);
	struct wire_msg msg = {.type = WIRE_FRAME};
	msg.frame.window = window->id;
	msg.frame.seq = window->seq + 1;
	msg.frame.width = window->width;
	msg.frame.height = window->height;
	msg.frame.codec = WIRE_CODEC_H264;
	msg.frame.compression = WIRE_COMPRESS_NONE;
	msg.frame.flags = window->new_stream ? WIRE_FRAME_RESET : 0;
	size_t before = buffer_size(&viewer->out), start;
	bool produced = false;
	if (!wire_frame_begin(&viewer->out, &msg, NULL, &start) ||
		!video_encoder_encode(window->encoder, window->pixels, window->width,
			video_bitrate(server, window, now), &viewer->out, &produced)) {
		buffer_truncate(&viewer->out, before);
		log_error("window %u: video encoding failed; back to lossless", window->id);
		window->video_failed = true;
		stop_video(window, "encoder failure");
		return;
	}
	if (!produced) {
		buffer_truncate(&viewer->out, before);
		return;
	}
	wire_frame_finish(&viewer->out, start);
	window->new_stream = false;
	frame_queued(server, window, before, now);
}

/* Sends what changed in a window: as video while it is in motion, else as a
 * lossless diff; a window leaving video gets a lossless refresh. */
void stream_send_frame(struct rc_server *server, struct rc_window *window)
{
	struct rc_viewer *viewer = server->viewer;
	uint64_t now = server_time_usec();
	bool damaged = pixman_region32_not_empty(&window->damage);

	if (window->video) {
		if (!damaged) {
			if (now - window->last_change_us >= REFRESH_AFTER_US) {
				stop_video(window, "motion stopped");
				send_lossless(server, window);
			}
			return;
		}
		window->last_change_us = now;
		bool still = damage_fraction(window) < STILL_FRACTION;
		window->still_frames = still ? window->still_frames + 1 : 0;
		if (server->codec_mode == RC_CODEC_AUTO && window->still_frames >= STILL_FRAMES) {
			stop_video(window, "little motion");
			send_lossless(server, window);
			return;
		}
		send_video(server, window);
		return;
	}
	if (damaged && server->codec_mode != RC_CODEC_LOSSLESS && viewer->video &&
		!window->video_failed &&
		(int64_t)window->width * window->height >= MIN_VIDEO_PIXELS) {
		bool moving = damage_fraction(window) >= MOTION_FRACTION;
		window->motion_frames = moving ? window->motion_frames + 1 : 0;
		if (server->codec_mode == RC_CODEC_VIDEO ||
			window->motion_frames >= MOTION_FRAMES) {
			if (start_video(server, window)) {
				window->need_reset = false;
				send_video(server, window);
				return;
			}
		}
	}
	if (damaged || window->need_reset) {
		send_lossless(server, window);
	}
}

void stream_print_stats(struct rc_server *server)
{
	struct rc_viewer *viewer = server->viewer;
	if (viewer && viewer->handshake_done) {
		const struct flow *flow = &viewer->flow;
		log_info("stats link: in flight %u frames %.1f KiB (limit %.1f KiB, most %.1f "
			 "KiB), "
			 "delivery %.2f Mbit/s, min rtt %.1f ms",
			flow->count, (double)flow->in_flight / 1024,
			(double)flow_limit(flow) / 1024, (double)flow->max_in_flight / 1024,
			(double)flow_rate(flow) * 8 / 1e6, (double)flow->min_rtt_us / 1000);
	}
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		if (!window->mapped) {
			continue;
		}
		const char *app_id = window_app_id(window);
		char codec[64];
		if (window->video) {
			snprintf(codec, sizeof(codec), "video %s %.2f Mbit/s",
				video_encoder_name(window->encoder),
				(double)window->video_bitrate / 1e6);
		} else {
			snprintf(codec, sizeof(codec), "lossless %s",
				codec_compression_name(server->compressor.kind));
		}
		log_info("stats window %u (%s): app %u fps, sent %u fps, %s, "
			 "%.3f MB/s, rtt %.1f ms, in flight %u",
			window->id, app_id ? app_id : "", window->stat_commits, window->stat_frames,
			codec, (double)window->stat_bytes / 1e6, window->rtt_ms,
			window->seq - window->acked);
		window->stat_commits = window->stat_frames = 0;
		window->stat_bytes = 0;
	}
}

static void handle_ack(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_window *window = window_from_id(server, msg->frame_ack.window);
	if (!window) {
		return; /* destroyed while the ack was on its way */
	}
	uint32_t ahead = msg->frame_ack.seq - window->acked;
	uint32_t outstanding = window->seq - window->acked;
	if (ahead > outstanding) {
		/* An ack for a frame never sent, or an old one: ignore stale,
		 * refuse the impossible. */
		if ((int32_t)ahead > 0) {
			char text[128];
			snprintf(text, sizeof(text), "ack of frame %u of window %u, never sent",
				msg->frame_ack.seq, window->id);
			viewer_error(server->viewer, text);
		}
		return;
	}
	window->acked = msg->frame_ack.seq;
	/* The ack leaves the viewer at presentation, so this is the round
	 * trip plus the time the frame waited for the local frame callback. */
	int64_t rtt =
		flow_acked(&server->viewer->flow, window->id, window->acked, server_time_usec());
	if (rtt >= 0) {
		double ms = (double)rtt / 1000.0;
		window->rtt_ms = window->rtt_ms ? window->rtt_ms * 0.8 + ms * 0.2 : ms;
	}
}

static void handle_hello(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	if (msg->hello.major != WIRE_VERSION_MAJOR) {
		char text[160];
		snprintf(text, sizeof(text),
			"protocol version %u is not supported; this rcomp-run speaks version %u",
			msg->hello.major, WIRE_VERSION_MAJOR);
		log_error("viewer refused: %s", text);
		stream_goodbye(server, WIRE_BYE_VERSION, 0, text);
		return;
	}
	enum wire_compression kind = server->compression;
	if ((kind == WIRE_COMPRESS_LZ4 && !(msg->hello.caps & WIRE_CAP_LZ4)) ||
		(kind == WIRE_COMPRESS_ZSTD && !(msg->hello.caps & WIRE_CAP_ZSTD))) {
		log_info("viewer lacks %s; sending frames uncompressed",
			codec_compression_name(kind));
		kind = WIRE_COMPRESS_NONE;
	}
	compressor_finish(&server->compressor);
	if (!compressor_init(&server->compressor, kind, server->compression_level)) {
		stream_goodbye(server, WIRE_BYE_SHUTDOWN, 0, "out of memory");
		return;
	}
	struct wire_msg welcome = {
		.type = WIRE_WELCOME,
		.welcome =
			{
				.magic = WIRE_MAGIC,
				.major = WIRE_VERSION_MAJOR,
				.minor = WIRE_VERSION_MINOR,
				.caps = WIRE_CAP_LZ4 | WIRE_CAP_ZSTD |
					(video_available() ? WIRE_CAP_H264 : 0),
				.flags = (uint32_t)kind,
				.session_id = server->session_id,
				.name_len = (uint32_t)strlen(server->session_name),
				.name = server->session_name,
			},
	};
	stream_send(server, &welcome);
	viewer->handshake_done = true;
	viewer->video = (msg->hello.caps & WIRE_CAP_H264) && video_available();
	log_info("viewer attached (protocol %u.%u, %s)", msg->hello.major, msg->hello.minor,
		codec_compression_name(kind));
	/* State, not history: a snapshot of every window, then deltas. */
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		window->announced = false;
	}
	/* Apps learn who draws their decorations before the snapshot says. */
	decoration_set_viewer(server, msg->hello.caps & WIRE_CAP_SERVER_DECORATIONS);
	wl_list_for_each(window, &server->windows, link)
	{
		stream_window_new(server, window);
	}
	cursor_send(server);
	clipboard_offer_all(server);
	stream_send(server, &(struct wire_msg){.type = WIRE_SYNC});
	session_update(server);
}

static void dispatch(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	if (!viewer->handshake_done) {
		if (msg->type != WIRE_HELLO) {
			viewer_error(viewer, "the first message must be hello");
			return;
		}
		handle_hello(viewer, msg);
		return;
	}
	switch (msg->type) {
	case WIRE_HELLO:
		viewer_error(viewer, "hello sent twice");
		break;
	case WIRE_FRAME_ACK:
		handle_ack(server, msg);
		break;
	case WIRE_OUTPUT_INFO: {
		struct rc_window *window = window_from_id(server, msg->output_info.window);
		if (window) {
			capture_set_refresh(window, msg->output_info.refresh_mhz);
			output_set_window_scale(window, msg->output_info.scale);
		}
		break;
	}
	case WIRE_SELECTION:
	case WIRE_TRANSFER_REQUEST:
	case WIRE_TRANSFER_DATA:
	case WIRE_TRANSFER_ACK: {
		char err[160];
		if (!clipboard_handle_message(server, msg, err, sizeof(err))) {
			viewer_error(viewer, err);
		}
		break;
	}
	case WIRE_DECORATION_MODE:
		if (msg->decoration_mode.mode == 1) {
			decoration_viewer_refused(server, msg->decoration_mode.window);
		}
		break;
	default:
		input_handle_message(server, msg);
		break;
	}
}

static int handle_readable(int fd, uint32_t mask, void *data)
{
	struct rc_viewer *viewer = data;
	struct rc_server *server = viewer->server;
	if (mask & WL_EVENT_READABLE) {
		uint8_t *dst = buffer_reserve(&viewer->in, READ_CHUNK);
		if (!dst) {
			/* Cannot happen with a valid stream: decoding bounds every
			 * message below the input limit. */
			viewer_error(viewer, "message larger than any allowed");
			return 0;
		}
		ssize_t n = read(viewer->in_fd, dst, READ_CHUNK);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			return 0;
		}
		if (n <= 0) {
			if (n < 0) {
				log_info("viewer connection failed: %s", strerror(errno));
			} else {
				log_info("viewer disconnected");
			}
			viewer_destroy(viewer);
			return 0;
		}
		buffer_commit(&viewer->in, (size_t)n);
	} else if (mask & (WL_EVENT_HANGUP | WL_EVENT_ERROR)) {
		log_info("viewer disconnected");
		viewer_destroy(viewer);
		return 0;
	}

	while (server->viewer == viewer && !viewer->closing) {
		struct wire_msg msg;
		size_t used = 0;
		char err[256];
		enum wire_status status = wire_decode(WIRE_FROM_VIEWER, buffer_head(&viewer->in),
			buffer_size(&viewer->in), &msg, &used, err, sizeof(err));
		if (status == WIRE_INCOMPLETE) {
			break;
		}
		if (status == WIRE_INVALID) {
			viewer_error(viewer, err);
			break;
		}
		dispatch(viewer, &msg);
		if (server->viewer == viewer) {
			buffer_consume(&viewer->in, used);
		}
	}
	return 0;
}

static int handle_writable(int fd, uint32_t mask, void *data)
{
	struct rc_viewer *viewer = data;
	if (mask & (WL_EVENT_HANGUP | WL_EVENT_ERROR)) {
		log_info("viewer disconnected");
		viewer_destroy(viewer);
		return 0;
	}
	stream_flush(viewer->server);
	return 0;
}

static void viewer_destroy(struct rc_viewer *viewer)
{
	if (!viewer) {
		return;
	}
	struct rc_server *server = viewer->server;
	if (viewer->in_source) {
		wl_event_source_remove(viewer->in_source);
	}
	if (viewer->out_source) {
		wl_event_source_remove(viewer->out_source);
	}
	close(viewer->in_fd);
	if (viewer->out_fd != viewer->in_fd) {
		close(viewer->out_fd);
	}
	buffer_finish(&viewer->in);
	buffer_finish(&viewer->out);
	server->viewer = NULL;
	free(viewer);
	/* Pastes in progress end; the local selection is out of reach now. */
	clipboard_viewer_gone(server);

	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		window->announced = false;
	}
	input_viewer_gone(server);
	session_update(server);
	if (server->stdio) {
		/* stdin/stdout carried the only viewer this session can have. */
		log_info("the viewer on stdio is gone; ending the session");
		server->running = false;
	}
}

static struct rc_viewer *viewer_create(struct rc_server *server, int in_fd, int out_fd)
{
	struct rc_viewer *viewer = calloc(1, sizeof(*viewer));
	if (!viewer) {
		return NULL;
	}
	viewer->server = server;
	viewer->in_fd = in_fd;
	viewer->out_fd = out_fd;
	buffer_init(&viewer->in, IN_LIMIT);
	buffer_init(&viewer->out, OUT_LIMIT);
	flow_init(&viewer->flow);
	viewer->in_source = wl_event_loop_add_fd(server->loop, in_fd, WL_EVENT_READABLE,
		handle_readable, viewer);
	viewer->out_source = wl_event_loop_add_fd(server->loop, out_fd, 0, handle_writable, viewer);
	if (!viewer->in_source || !viewer->out_source) {
		server->viewer = viewer;
		viewer_destroy(viewer);
		return NULL;
	}
	server->viewer = viewer;
	return viewer;
}

void stream_flush(struct rc_server *server)
{
	struct rc_viewer *viewer = server->viewer;
	if (!viewer) {
		return;
	}
	while (buffer_size(&viewer->out) > 0) {
		ssize_t n =
			write(viewer->out_fd, buffer_head(&viewer->out), buffer_size(&viewer->out));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			break;
		}
		if (n <= 0) {
			log_info("viewer connection lost: %s", n < 0 ? strerror(errno) : "closed");
			viewer_destroy(viewer);
			return;
		}
		buffer_consume(&viewer->out, (size_t)n);
	}
	if (buffer_size(&viewer->out) == 0 && viewer->closing) {
		viewer_destroy(viewer);
		return;
	}
	clipboard_sync(server);
	/* Ask for writability only while bytes wait: an epoll change is a
	 * syscall, and this runs on every turn of the event loop. A window
	 * that could not send keeps its damage and its clock keeps ticking, so
	 * nothing needs waking here. */
	bool want_writable = buffer_size(&viewer->out) > 0;
	if (want_writable != viewer->writable_armed) {
		viewer->writable_armed = want_writable;
		wl_event_source_fd_update(viewer->out_source,
			want_writable ? WL_EVENT_WRITABLE : 0);
	}
}

/* At most this many connections may be in the handshake at once, each for
 * at most PENDING_TIMEOUT_MS: idle or hostile connections cost a bounded few
 * kilobytes and never disturb the attached viewer. */
#define MAX_PENDING 16
#define PENDING_TIMEOUT_MS 10000

/* Refused connections are logged in a burst of 10 lines, then one a second
 * with a count of those not logged, so a flood cannot fill the log. */
static void log_refusal(struct rc_server *server, const char *peer, const char *why)
{
	uint64_t now = server_time_usec();
	server->refusal_credit += (double)(now - server->refused_log_us) / 1e6;
	server->refused_log_us = now;
	if (server->refusal_credit > 10) {
		server->refusal_credit = 10;
	}
	if (server->refusal_credit < 1) {
		server->refused_unlogged++;
		return;
	}
	server->refusal_credit -= 1;
	if (server->refused_unlogged) {
		log_error("refused a viewer%s%s: %s (%d more refused and not logged)",
			peer[0] ? " from " : "", peer, why, server->refused_unlogged);
	} else {
		log_error("refused a viewer%s%s: %s", peer[0] ? " from " : "", peer, why);
	}
	server->refused_unlogged = 0;
}

static void pending_destroy(struct rc_pending *pending, bool close_fd)
{
	struct rc_server *server = pending->server;
	wl_list_remove(&pending->link);
	server->npending--;
	wl_event_source_remove(pending->source);
	wl_event_source_remove(pending->timeout);
	if (close_fd) {
		close(pending->fd);
	}
	free(pending);
}

/* Says why on fd (a small write to a fresh socket fits its buffer), closes. */
static void refuse(struct rc_pending *pending, enum wire_goodbye_reason reason, const char *text)
{
	session_write_goodbye(pending->fd, reason, 0, text);
	/* Unread bytes would turn our close into a reset that can overtake the
	 * goodbye: drain what has arrived (bounded) first. */
	uint8_t sink[4096];
	for (int i = 0; i < 16 && recv(pending->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; i++) {
	}
	shutdown(pending->fd, SHUT_WR);
	log_refusal(pending->server, pending->peer, text);
	pending_destroy(pending, true);
}

/* A valid hello arrived: this connection becomes the viewer, taking the
 * session over from any viewer attached now. */
static void pending_promote(struct rc_pending *pending, const struct wire_msg *hello)
{
	struct rc_server *server = pending->server;
	int fd = pending->fd;
	bool tcp = pending->tcp;
	char peer[sizeof(pending->peer)];
	memcpy(peer, pending->peer, sizeof(peer));
	if (server->viewer) {
		log_info("a new viewer%s%s takes the session over; disconnecting the attached "
			 "one",
			peer[0] ? " from " : "", peer);
		stream_goodbye(server, WIRE_BYE_TAKEN_OVER, 0,
			"another viewer took this session over");
		stream_flush(server);
		viewer_destroy(server->viewer);
	}
	pending_destroy(pending, false);
	struct rc_viewer *viewer = viewer_create(server, fd, fd);
	if (!viewer) {
		log_error("out of memory accepting a viewer");
		close(fd);
		return;
	}
	viewer->tcp = tcp;
	handle_hello(viewer, hello);
}

static int handle_pending_readable(int fd, uint32_t mask, void *data)
{
	struct rc_pending *pending = data;
	struct rc_server *server = pending->server;
	/* Read exactly what the hello still needs: a header, then its body. */
	struct wire_msg msg;
	for (;;) {
		size_t want = WIRE_HEADER_SIZE, used = 0;
		if (pending->len >= WIRE_HEADER_SIZE) {
			char err[256];
			enum wire_status status = wire_decode(WIRE_FROM_VIEWER, pending->data,
				pending->len, &msg, &used, err, sizeof(err));
			if (status == WIRE_INVALID) {
				refuse(pending, WIRE_BYE_PROTOCOL_ERROR, err);
				return 0;
			}
			if (status == WIRE_OK) {
				break;
			}
			const uint8_t *h = pending->data;
			uint16_t type = (uint16_t)(h[0] | h[1] << 8);
			uint32_t body = (uint32_t)h[4] | (uint32_t)h[5] << 8 |
				(uint32_t)h[6] << 16 | (uint32_t)h[7] << 24;
			want = WIRE_HEADER_SIZE + (size_t)body;
			if (type != WIRE_HELLO || want > sizeof(pending->data)) {
				refuse(pending, WIRE_BYE_PROTOCOL_ERROR,
					"the first message must be hello");
				return 0;
			}
		}
		ssize_t n = read(fd, pending->data + pending->len, want - pending->len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			return 0;
		}
		if (n <= 0) {
			log_debug("a connection closed before its hello");
			pending_destroy(pending, true);
			return 0;
		}
		pending->len += (size_t)n;
	}
	if (msg.type != WIRE_HELLO) {
		refuse(pending, WIRE_BYE_PROTOCOL_ERROR, "the first message must be hello");
		return 0;
	}
	if (pending->tcp && !session_check_token(server, msg.hello.token, msg.hello.token_len)) {
		refuse(pending, WIRE_BYE_UNAUTHORIZED,
			msg.hello.token_len ? "wrong token" : "no token given");
		return 0;
	}
	pending_promote(pending, &msg);
	return 0;
}

static int handle_pending_timeout(void *data)
{
	struct rc_pending *pending = data;
	refuse(pending, WIRE_BYE_PROTOCOL_ERROR, "no hello within 10 seconds");
	return 0;
}

static void accept_one(struct rc_server *server, int fd, bool tcp)
{
	struct sockaddr_storage addr;
	socklen_t addr_len = sizeof(addr);
	int conn = accept4(fd, (struct sockaddr *)&addr, &addr_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (conn < 0) {
		if (errno != EAGAIN && errno != EINTR) {
			log_error("accepting a viewer failed: %s", strerror(errno));
		}
		return;
	}
	char peer[64] = "";
	if (tcp) {
		char host[48], port[8];
		if (getnameinfo((struct sockaddr *)&addr, addr_len, host, sizeof(host), port,
			    sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
			snprintf(peer, sizeof(peer), "%s port %s", host, port);
		}
		int one = 1;
		setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	struct rc_pending *pending =
		server->npending < MAX_PENDING ? calloc(1, sizeof(*pending)) : NULL;
	if (!pending) {
		log_refusal(server, peer, "too many connections in the handshake");
		close(conn);
		return;
	}
	pending->server = server;
	pending->fd = conn;
	pending->tcp = tcp;
	memcpy(pending->peer, peer, sizeof(peer));
	pending->source = wl_event_loop_add_fd(server->loop, conn, WL_EVENT_READABLE,
		handle_pending_readable, pending);
	pending->timeout = wl_event_loop_add_timer(server->loop, handle_pending_timeout, pending);
	if (!pending->source || !pending->timeout) {
		log_error("cannot watch a new connection");
		if (pending->source) {
			wl_event_source_remove(pending->source);
		}
		if (pending->timeout) {
			wl_event_source_remove(pending->timeout);
		}
		close(conn);
		free(pending);
		return;
	}
	wl_list_insert(&server->pending, &pending->link);
	server->npending++;
	wl_event_source_timer_update(pending->timeout, PENDING_TIMEOUT_MS);
}

static int handle_accept(int fd, uint32_t mask, void *data)
{
	accept_one(data, fd, false);
	return 0;
}

static int handle_accept_tcp(int fd, uint32_t mask, void *data)
{
	accept_one(data, fd, true);
	return 0;
}

static bool socket_in_use(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return false;
	}
	bool used = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;
	close(fd);
	return used;
}

static bool bind_path(struct rc_server *server, const char *path, bool quiet_if_used)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr.sun_path)) {
		log_error("socket path is too long: %s", path);
		return false;
	}
	strcpy(addr.sun_path, path);
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_error("%s exists and is not a socket; choose another --socket", path);
			return false;
		}
		if (socket_in_use(&addr)) {
			if (!quiet_if_used) {
				log_error("%s is in use by another rcomp-run", path);
			}
			return false;
		}
		unlink(path); /* left behind by a session that died */
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		log_error("cannot create a socket: %s", strerror(errno));
		return false;
	}
	mode_t old = umask(0177);
	int ret = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (ret < 0 || chmod(path, 0600) < 0 || listen(fd, 4) < 0) {
		log_error("cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return false;
	}
	server->listen_fd = fd;
	server->listen_path = strdup(path);
	server->listen_source =
		wl_event_loop_add_fd(server->loop, fd, WL_EVENT_READABLE, handle_accept, server);
	return server->listen_source != NULL;
}

/* ADDR:PORT, [V6ADDR]:PORT or :PORT (every address). */
static bool listen_tcp(struct rc_server *server)
{
	char host[256];
	const char *spec = server->tcp_addr, *port;
	if (!session_split_host_port(spec, host, sizeof(host), &port)) {
		log_error("--listen-tcp takes ADDR:PORT, [ADDR]:PORT or :PORT, not %s", spec);
		return false;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res;
	int err = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (err) {
		log_error("--listen-tcp %s: %s", spec, gai_strerror(err));
		return false;
	}
	int fd = -1;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int one = 1;
		if (fd >= 0 &&
			(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
				bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 8) < 0)) {
			err = errno;
			close(fd);
			fd = -1;
			errno = err;
		}
	}
	freeaddrinfo(res);
	if (fd < 0) {
		log_error("cannot listen on TCP %s: %s", spec, strerror(errno));
		return false;
	}
	server->tcp_fd = fd;
	server->tcp_source = wl_event_loop_add_fd(server->loop, fd, WL_EVENT_READABLE,
		handle_accept_tcp, server);
	log_info("listening on TCP %s", spec);
	log_error("warning: TCP streams are not encrypted: anyone on the network path can see "
		  "the windows and the keys typed. Use ssh (rcomp-view ssh HOST -- APP) for "
		  "an encrypted link.");
	return server->tcp_source != NULL;
}

bool stream_listen(struct rc_server *server)
{
	char path[SESSION_PATH_MAX];
	if (server->listen_path) {
		const char *given = server->listen_path;
		server->listen_path = NULL;
		if (!bind_path(server, given, false)) {
			return false;
		}
		/* Listed and attachable by name like any other session. */
		char real[PATH_MAX];
		if (realpath(server->listen_path, real) &&
			session_path(path, sizeof(path), server->session_dir, server->session_name,
				"sock")) {
			unlink(path);
			if (symlink(real, path) < 0) {
				log_error("cannot link %s to %s: %s", path, real, strerror(errno));
			}
		}
	} else {
		if (!session_path(path, sizeof(path), server->session_dir, server->session_name,
			    "sock") ||
			!bind_path(server, path, false)) {
			return false;
		}
	}
	log_info("session %s: listening on %s", server->session_name, server->listen_path);
	return !server->tcp_addr || listen_tcp(server);
}

bool stream_attach_stdio(struct rc_server *server)
{
	if (fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK) < 0 ||
		fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK) < 0) {
		log_error("cannot use stdin/stdout: %s", strerror(errno));
		return false;
	}
	return viewer_create(server, STDIN_FILENO, STDOUT_FILENO) != NULL;
}

void stream_finish(struct rc_server *server)
{
	if (server->viewer) {
		/* Give a goodbye a moment to leave. */
		struct timespec deadline;
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		for (int i = 0; i < 100 && server->viewer && buffer_size(&server->viewer->out);
			i++) {
			stream_flush(server);
			if (server->viewer && buffer_size(&server->viewer->out)) {
				nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
			}
		}
		bool stdio = server->stdio;
		server->stdio = false; /* already shutting down */
		viewer_destroy(server->viewer);
		server->stdio = stdio;
	}
	if (server->listen_source) {
		wl_event_source_remove(server->listen_source);
		server->listen_source = NULL;
	}
	if (server->listen_fd >= 0) {
		close(server->listen_fd);
		server->listen_fd = -1;
	}
	if (server->listen_path) {
		unlink(server->listen_path);
		free((char *)server->listen_path);
		server->listen_path = NULL;
	}
	if (server->tcp_source) {
		wl_event_source_remove(server->tcp_source);
		server->tcp_source = NULL;
	}
	if (server->tcp_fd >= 0) {
		close(server->tcp_fd);
		server->tcp_fd = -1;
	}
	struct rc_pending *pending, *tmp;
	wl_list_for_each_safe(pending, tmp, &server->pending, link)
	{
		pending_destroy(pending, true);
	}
	compressor_finish(&server->compressor);
	free(server->scratch);
	server->scratch = NULL;
}
