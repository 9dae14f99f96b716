/*
 * One local xdg_toplevel per remote window: a pool of wl_shm buffers reused
 * round-robin, damaged regions copied in, presented at the pace of the local
 * frame callbacks with the newest frame winning, and acks back to the server.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "video.h"
#include "viewer.h"
#include "xdg-decoration-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

static void wm_base_ping(void *data, struct xdg_wm_base *wm_base, uint32_t serial)
{
	xdg_wm_base_pong(wm_base, serial);
}

const struct xdg_wm_base_listener wm_base_listener = {
	.ping = wm_base_ping,
};

struct rv_window *window_from_id(struct rv_viewer *viewer, uint32_t id)
{
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		if (window->id == id) {
			return window;
		}
	}
	return NULL;
}

static void buffer_release(void *data, struct wl_buffer *wl_buffer)
{
	struct rv_window *window = data;
	for (int i = 0; i < RV_BUFFERS; i++) {
		struct rv_buffer *buf = &window->buffers[i];
		if (buf->buffer == wl_buffer) {
			buf->busy = false;
			/* A buffer of an old size is dropped once released. */
			if (buf->width != window->width || buf->height != window->height) {
				wl_buffer_destroy(buf->buffer);
				munmap(buf->data, buf->size);
				buf->buffer = NULL;
				buf->data = NULL;
			}
		}
	}
	if (window->dirty) {
		window_present(window);
	}
}

static const struct wl_buffer_listener buffer_listener = {
	.release = buffer_release,
};

static void buffer_drop(struct rv_buffer *buf)
{
	if (buf->buffer) {
		wl_buffer_destroy(buf->buffer);
		munmap(buf->data, buf->size);
	}
	buf->buffer = NULL;
	buf->data = NULL;
	buf->busy = false;
}

struct wl_buffer *viewer_shm_buffer(struct rv_viewer *viewer, int32_t width, int32_t height,
	void **data)
{
	size_t size = (size_t)width * height * 4;
	int fd = memfd_create("rcomp-buffer", MFD_CLOEXEC);
	if (fd < 0) {
		log_error("cannot create a buffer: %s", strerror(errno));
		return NULL;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		log_error("cannot size a %zu byte buffer: %s", size, strerror(errno));
		close(fd);
		return NULL;
	}
	*data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*data == MAP_FAILED) {
		log_error("cannot map a buffer: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	struct wl_shm_pool *pool = wl_shm_create_pool(viewer->shm, fd, (int32_t)size);
	struct wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, width, height, width * 4,
		WL_SHM_FORMAT_ARGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	return buffer;
}

static bool buffer_alloc(struct rv_window *window, struct rv_buffer *buf)
{
	void *data;
	buf->buffer = viewer_shm_buffer(window->viewer, window->width, window->height, &data);
	if (!buf->buffer) {
		return false;
	}
	wl_buffer_add_listener(buf->buffer, &buffer_listener, window);
	buf->data = data;
	buf->size = (size_t)window->width * window->height * 4;
	buf->width = window->width;
	buf->height = window->height;
	buf->busy = false;
	/* A new buffer has nothing in it: all of it needs copying. */
	pixman_region32_fini(&buf->damage);
	pixman_region32_init_rect(&buf->damage, 0, 0, window->width, window->height);
	return true;
}

static struct rv_buffer *next_buffer(struct rv_window *window)
{
	for (int i = 0; i < RV_BUFFERS; i++) {
		struct rv_buffer *buf = &window->buffers[i];
		if (buf->buffer && !buf->busy && buf->width == window->width &&
			buf->height == window->height) {
			return buf;
		}
	}
	for (int i = 0; i < RV_BUFFERS; i++) {
		struct rv_buffer *buf = &window->buffers[i];
		if (!buf->buffer) {
			return buffer_alloc(window, buf) ? buf : NULL;
		}
	}
	return NULL; /* all busy: present when one is released */
}

static void frame_done(void *data, struct wl_callback *callback, uint32_t time)
{
	struct rv_window *window = data;
	wl_callback_destroy(callback);
	window->frame_callback = NULL;
	if (window->dirty) {
		window_present(window);
	}
}

static const struct wl_callback_listener frame_listener = {
	.done = frame_done,
};

static void send_ack(struct rv_window *window)
{
	struct wire_msg msg = {.type = WIRE_FRAME_ACK};
	msg.frame_ack.window = window->id;
	msg.frame_ack.seq = window->received_seq;
	msg.frame_ack.recv_time_us = viewer_time_usec();
	viewer_send(window->viewer, &msg);
}

/* Darkens a buffer to show the window is disconnected; the buffer then
 * differs from the image everywhere, so it is marked for a full copy. */
static void dim(struct rv_buffer *buf)
{
	pixman_image_t *dst = pixman_image_create_bits_no_clear(PIXMAN_a8r8g8b8, buf->width,
		buf->height, buf->data, buf->width * 4);
	pixman_image_t *shade = pixman_image_create_solid_fill(&(pixman_color_t){0, 0, 0, 0x9000});
	if (dst && shade) {
		pixman_image_composite32(PIXMAN_OP_ATOP, shade, NULL, dst, 0, 0, 0, 0, 0, 0,
			buf->width, buf->height);
	}
	if (shade) {
		pixman_image_unref(shade);
	}
	if (dst) {
		pixman_image_unref(dst);
	}
	pixman_region32_union_rect(&buf->damage, &buf->damage, 0, 0, (unsigned)buf->width,
		(unsigned)buf->height);
}

static void mark_all_damaged(struct rv_window *window);

/* A maximized window must be exactly the configured size and a fullscreen
 * one at most that: until the remote app has redrawn to fit, the configure
 * stays unacknowledged and the buffer shown is the old state's (the local
 * compositor may end a client that commits a misfit). */
static bool image_fits_configure(const struct rv_window *window)
{
	int32_t cw = window->configure_width, ch = window->configure_height;
	if (!window->image || cw <= 0 || ch <= 0) {
		return true;
	}
	int32_t w = window->width / window->image_scale, h = window->height / window->image_scale;
	if (window->configure_states & WIRE_STATE_MAXIMIZED) {
		return w == cw && h == ch;
	}
	if (window->configure_states & WIRE_STATE_FULLSCREEN) {
		return w <= cw && h <= ch;
	}
	return true;
}

static void ack_if_fits(struct rv_window *window)
{
	if (window->ack_pending && image_fits_configure(window)) {
		xdg_surface_ack_configure(window->xdg_surface, window->ack_serial);
		window->ack_pending = false;
	}
}

void window_present(struct rv_window *window)
{
	if (window->dismissed || !window->configured || !window->dirty || window->frame_callback ||
		!window->image) {
		return;
	}
	struct rv_buffer *buf = next_buffer(window);
	if (!buf) {
		return;
	}
	/* Copy in only what this buffer has missed. */
	int n = 0;
	pixman_box32_t *boxes = pixman_region32_rectangles(&buf->damage, &n);
	for (int i = 0; i < n; i++) {
		int32_t x = boxes[i].x1, w = boxes[i].x2 - boxes[i].x1;
		for (int32_t y = boxes[i].y1; y < boxes[i].y2; y++) {
			size_t off = (size_t)y * window->width + x;
			memcpy(buf->data + off, window->image + off, (size_t)w * 4);
		}
	}
	pixman_region32_clear(&buf->damage);
	if (window->disconnected) {
		dim(buf);
		pixman_region32_union_rect(&window->pending_damage, &window->pending_damage, 0, 0,
			(unsigned)buf->width, (unsigned)buf->height);
	}

	ack_if_fits(window);
	wl_surface_attach(window->surface, buf->buffer, 0, 0);
	if (window->image_scale != window->surface_scale) {
		wl_surface_set_buffer_scale(window->surface, window->image_scale);
		window->surface_scale = window->image_scale;
	}
	boxes = pixman_region32_rectangles(&window->pending_damage, &n);
	for (int i = 0; i < n; i++) {
		wl_surface_damage_buffer(window->surface, boxes[i].x1, boxes[i].y1,
			boxes[i].x2 - boxes[i].x1, boxes[i].y2 - boxes[i].y1);
	}
	pixman_region32_clear(&window->pending_damage);
	window->frame_callback = wl_surface_frame(window->surface);
	wl_callback_add_listener(window->frame_callback, &frame_listener, window);
	wl_surface_commit(window->surface);
	buf->busy = true;
	window->has_content = true;
	window->dirty = false;
	window->stat_presented++;
	send_ack(window);
}

static bool resize_image(struct rv_window *window, int32_t width, int32_t height)
{
	struct rv_viewer *viewer = window->viewer;
	uint64_t old = (uint64_t)window->width * window->height * 4;
	uint64_t size = (uint64_t)width * height * 4;
	if (viewer->image_bytes - old + size > RV_MAX_IMAGE_BYTES) {
		viewer_fail(viewer, "server windows need more than %llu MiB of pixels",
			(unsigned long long)(RV_MAX_IMAGE_BYTES >> 20));
		return false;
	}
	uint32_t *image = calloc(size / 4, 4);
	if (!image) {
		viewer_fail(viewer, "out of memory for a %dx%d window", width, height);
		return false;
	}
	free(window->image);
	viewer->image_bytes = viewer->image_bytes - old + size;
	window->image = image;
	window->width = width;
	window->height = height;
	for (int i = 0; i < RV_BUFFERS; i++) {
		struct rv_buffer *buf = &window->buffers[i];
		if (buf->buffer && !buf->busy) {
			buffer_drop(buf);
		}
	}
	return true;
}

static void mark_all_damaged(struct rv_window *window)
{
	pixman_region32_union_rect(&window->pending_damage, &window->pending_damage, 0, 0,
		(unsigned)window->width, (unsigned)window->height);
	for (int i = 0; i < RV_BUFFERS; i++) {
		pixman_region32_union_rect(&window->buffers[i].damage, &window->buffers[i].damage,
			0, 0, (unsigned)window->width, (unsigned)window->height);
	}
}

static bool apply_video(struct rv_window *window, const struct wire_msg *msg)
{
	struct rv_viewer *viewer = window->viewer;
	char err[256];
	if (msg->frame.flags & WIRE_FRAME_RESET) {
		video_decoder_destroy(window->decoder);
		window->decoder = video_decoder_create(err, sizeof(err));
		if (!window->decoder) {
			viewer_fail(viewer, "window %u: cannot decode video: %s", window->id, err);
			return false;
		}
	}
	if (!window->decoder) {
		viewer_fail(viewer, "video frame of window %u without a stream start", window->id);
		return false;
	}
	bool decoded = false;
	if (!video_decoder_decode(window->decoder, msg->frame.payload, msg->frame.payload_size,
		    window->width, window->height, window->image, window->width, &decoded, err,
		    sizeof(err))) {
		viewer_fail(viewer, "frame %u of window %u: %s", msg->frame.seq, window->id, err);
		return false;
	}
	window->received_seq = msg->frame.seq;
	if (decoded) {
		mark_all_damaged(window);
	}
	/* Even with no picture yet, presenting acks the frame's arrival. */
	window->dirty = true;
	window_present(window);
	return true;
}

bool window_apply_frame(struct rv_window *window, const struct wire_msg *msg)
{
	struct rv_viewer *viewer = window->viewer;
	window->stat_received++;
	window->stat_bytes += msg->frame.payload_size;
	bool reset = msg->frame.flags & WIRE_FRAME_RESET;
	/* A buffer must be a whole number of surface pixels at its scale. */
	window->image_scale =
		msg->frame.width % window->scale == 0 && msg->frame.height % window->scale == 0
		? window->scale
		: 1;
	if (msg->frame.width != window->width || msg->frame.height != window->height) {
		if (!reset) {
			viewer_fail(viewer, "frame of window %u changes its size without a reset",
				window->id);
			return false;
		}
		if (!resize_image(window, msg->frame.width, msg->frame.height)) {
			return false;
		}
	} else if (reset && msg->frame.codec == WIRE_CODEC_XOR) {
		memset(window->image, 0, (size_t)window->width * window->height * 4);
	}
	if (msg->frame.codec == WIRE_CODEC_H264) {
		return apply_video(window, msg);
	}
	if (reset && window->decoder) {
		/* Back to lossless: the stream is over. */
		video_decoder_destroy(window->decoder);
		window->decoder = NULL;
	}
	if (viewer->raw_size < msg->frame.raw_size) {
		uint8_t *raw = realloc(viewer->raw, msg->frame.raw_size);
		if (!raw) {
			viewer_fail(viewer, "out of memory decoding a frame");
			return false;
		}
		viewer->raw = raw;
		viewer->raw_size = msg->frame.raw_size;
	}
	if (!decompressor_run(&viewer->decompressor, msg->frame.compression, msg->frame.payload,
		    msg->frame.payload_size, viewer->raw, msg->frame.raw_size)) {
		viewer_fail(viewer, "frame %u of window %u does not decompress to its %u bytes",
			msg->frame.seq, window->id, msg->frame.raw_size);
		return false;
	}
	struct image img = {window->image, window->width, window->height, window->width};
	codec_diff_apply(&img, msg->frame.rects, msg->frame.nrects, viewer->raw);

	pixman_region32_t damage;
	if (reset) {
		pixman_region32_init_rect(&damage, 0, 0, window->width, window->height);
	} else {
		pixman_region32_init(&damage);
		for (uint32_t i = 0; i < msg->frame.nrects; i++) {
			struct wire_rect r = wire_get_rect(msg->frame.rects, i);
			pixman_region32_union_rect(&damage, &damage, r.x, r.y, (unsigned)r.width,
				(unsigned)r.height);
		}
	}
	pixman_region32_union(&window->pending_damage, &window->pending_damage, &damage);
	for (int i = 0; i < RV_BUFFERS; i++) {
		pixman_region32_union(&window->buffers[i].damage, &window->buffers[i].damage,
			&damage);
	}
	pixman_region32_fini(&damage);
	window->received_seq = msg->frame.seq;
	window->dirty = true;
	window_present(window);
	return true;
}

/* Tells the server the refresh and scale of the output the window is on
 * (the first it entered), so its frame clock matches the local display. */
void window_report_output(struct rv_window *window)
{
	if (window->noutputs == 0) {
		return;
	}
	struct rv_output *output = window->outputs[0];
	uint32_t refresh = output->refresh_mhz <= WIRE_MAX_REFRESH_MHZ ? output->refresh_mhz : 0;
	int32_t scale = output->scale >= 1 && output->scale <= WIRE_MAX_SCALE ? output->scale : 1;
	if (refresh == window->reported_refresh_mhz && scale == window->reported_scale) {
		return;
	}
	window->reported_refresh_mhz = refresh;
	window->reported_scale = scale;
	struct wire_msg msg = {.type = WIRE_OUTPUT_INFO};
	msg.output_info.window = window->id;
	msg.output_info.refresh_mhz = refresh;
	msg.output_info.scale = scale;
	viewer_send(window->viewer, &msg);
}

void window_output_gone(struct rv_window *window, struct rv_output *output)
{
	for (int i = 0; i < window->noutputs; i++) {
		if (window->outputs[i] == output) {
			memmove(&window->outputs[i], &window->outputs[i + 1],
				(size_t)(window->noutputs - i - 1) * sizeof(window->outputs[0]));
			window->noutputs--;
			i--;
		}
	}
	window_report_output(window);
}

static struct rv_output *output_of(struct rv_viewer *viewer, struct wl_output *wl_output)
{
	struct rv_output *output;
	wl_list_for_each(output, &viewer->outputs, link)
	{
		if (output->output == wl_output) {
			return output;
		}
	}
	return NULL;
}

static void surface_enter(void *data, struct wl_surface *surface, struct wl_output *wl_output)
{
	struct rv_window *window = data;
	struct rv_output *output = output_of(window->viewer, wl_output);
	if (!output || window->noutputs == RV_MAX_WINDOW_OUTPUTS) {
		return;
	}
	window->outputs[window->noutputs++] = output;
	window_report_output(window);
}

static void surface_leave(void *data, struct wl_surface *surface, struct wl_output *wl_output)
{
	struct rv_window *window = data;
	struct rv_output *output = output_of(window->viewer, wl_output);
	if (output) {
		window_output_gone(window, output);
	}
}

static const struct wl_surface_listener surface_listener = {
	.enter = surface_enter,
	.leave = surface_leave,
};

static void output_geometry(void *data, struct wl_output *wl_output, int32_t x, int32_t y,
	int32_t pw, int32_t ph, int32_t subpixel, const char *make, const char *model,
	int32_t transform)
{
}

static void output_mode(void *data, struct wl_output *wl_output, uint32_t flags, int32_t width,
	int32_t height, int32_t refresh)
{
	struct rv_output *output = data;
	if (flags & WL_OUTPUT_MODE_CURRENT) {
		output->pending_refresh_mhz = refresh > 0 ? (uint32_t)refresh : 0;
	}
}

static void output_done(void *data, struct wl_output *wl_output)
{
	struct rv_output *output = data;
	output->refresh_mhz = output->pending_refresh_mhz;
	output->scale = output->pending_scale;
	struct rv_window *window;
	wl_list_for_each(window, &output->viewer->windows, link)
	{
		window_report_output(window);
	}
}

static void output_scale(void *data, struct wl_output *wl_output, int32_t factor)
{
	struct rv_output *output = data;
	output->pending_scale = factor;
}

static const struct wl_output_listener output_listener = {
	.geometry = output_geometry,
	.mode = output_mode,
	.done = output_done,
	.scale = output_scale,
};

void output_add(struct rv_viewer *viewer, uint32_t name, uint32_t version)
{
	if (version < 2) {
		return; /* no done event to know when its state is complete */
	}
	struct rv_output *output = calloc(1, sizeof(*output));
	if (!output) {
		return;
	}
	output->viewer = viewer;
	output->name = name;
	output->scale = output->pending_scale = 1;
	output->output = wl_registry_bind(viewer->registry, name, &wl_output_interface, 2);
	wl_output_add_listener(output->output, &output_listener, output);
	wl_list_insert(&viewer->outputs, &output->link);
}

void output_destroy(struct rv_output *output)
{
	struct rv_window *window;
	wl_list_for_each(window, &output->viewer->windows, link)
	{
		window_output_gone(window, output);
	}
	wl_output_destroy(output->output);
	wl_list_remove(&output->link);
	free(output);
}

void output_remove(struct rv_viewer *viewer, uint32_t name)
{
	struct rv_output *output;
	wl_list_for_each(output, &viewer->outputs, link)
	{
		if (output->name == name) {
			output_destroy(output);
			return;
		}
	}
}

static void send_configure(struct rv_window *window)
{
	int32_t w = window->configure_width, h = window->configure_height;
	uint32_t states = window->configure_states;
	if (w <= 0 || h <= 0) {
		/* The local compositor lets us choose: keep the remote size. */
		w = 0;
		h = 0;
	}
	if (w > WIRE_MAX_DIM) {
		w = WIRE_MAX_DIM;
	}
	if (h > WIRE_MAX_DIM) {
		h = WIRE_MAX_DIM;
	}
	if (w == window->requested_width && h == window->requested_height &&
		states == window->requested_states) {
		return;
	}
	if (w == 0 && states == window->requested_states) {
		return;
	}
	if (w == window->width / window->image_scale && h == window->height / window->image_scale &&
		states == window->requested_states) {
		return;
	}
	window->requested_width = w;
	window->requested_height = h;
	window->requested_states = states;
	struct wire_msg msg = {
		.type = WIRE_CONFIGURE,
		.configure = {.window = window->id, .width = w, .height = h, .states = states},
	};
	viewer_send(window->viewer, &msg);
}

static void xdg_surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial)
{
	struct rv_window *window = data;
	window->ack_serial = serial;
	window->ack_pending = true;
	window->configured = true;
	if (window->xdg_toplevel) {
		send_configure(window);
	}
	ack_if_fits(window);
	if (window->dirty) {
		window_present(window);
	} else if (window->has_content && !window->ack_pending) {
		wl_surface_commit(window->surface);
	}
}

static const struct xdg_surface_listener xdg_surface_listener = {
	.configure = xdg_surface_configure,
};

static void toplevel_configure(void *data, struct xdg_toplevel *toplevel, int32_t width,
	int32_t height, struct wl_array *states)
{
	struct rv_window *window = data;
	window->configure_width = width;
	window->configure_height = height;
	uint32_t bits = 0;
	uint32_t *state;
	wl_array_for_each(state, states)
	{
		switch (*state) {
		case XDG_TOPLEVEL_STATE_MAXIMIZED:
			bits |= WIRE_STATE_MAXIMIZED;
			break;
		case XDG_TOPLEVEL_STATE_FULLSCREEN:
			bits |= WIRE_STATE_FULLSCREEN;
			break;
		case XDG_TOPLEVEL_STATE_RESIZING:
			bits |= WIRE_STATE_RESIZING;
			break;
		case XDG_TOPLEVEL_STATE_ACTIVATED:
			bits |= WIRE_STATE_ACTIVATED;
			break;
		default:
			break;
		}
	}
	window->configure_states = bits;
}

static void toplevel_close(void *data, struct xdg_toplevel *toplevel)
{
	struct rv_window *window = data;
	if (window->disconnected) {
		log_info("window closed while disconnected: giving up on the session");
		window->viewer->running = false;
		window->viewer->exit_code = 1;
		return;
	}
	struct wire_msg msg = {.type = WIRE_CLOSE, .close = {window->id}};
	viewer_send(window->viewer, &msg);
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure,
	.close = toplevel_close,
};

static char *copy_text(const char *text, uint32_t len)
{
	char *s = malloc((size_t)len + 1);
	if (s) {
		memcpy(s, text, len);
		s[len] = '\0';
	}
	return s;
}

static void show_title(struct rv_window *window)
{
	if (!window->xdg_toplevel) {
		return;
	}
	const char *title = window->title ? window->title : "";
	if (!window->disconnected) {
		xdg_toplevel_set_title(window->xdg_toplevel, title);
		return;
	}
	static const char mark[] = "[disconnected] ";
	char *marked = malloc(sizeof(mark) + strlen(title));
	if (marked) {
		memcpy(marked, mark, sizeof(mark) - 1);
		strcpy(marked + sizeof(mark) - 1, title);
		xdg_toplevel_set_title(window->xdg_toplevel, marked);
		free(marked);
	}
}

static void set_title(struct rv_window *window, const char *text, uint32_t len)
{
	char *title = copy_text(text, len);
	if (title) {
		free(window->title);
		window->title = title;
		show_title(window);
	}
}

static void set_app_id(struct rv_window *window, const char *text, uint32_t len)
{
	char *app_id = copy_text(text, len);
	if (app_id && window->xdg_toplevel) {
		xdg_toplevel_set_app_id(window->xdg_toplevel, app_id);
	}
	free(app_id);
}

void window_set_text(struct rv_window *window, const struct wire_msg *msg)
{
	if (msg->type == WIRE_WINDOW_TITLE) {
		set_title(window, msg->window_text.text, msg->window_text.len);
		return;
	}
	set_app_id(window, msg->window_text.text, msg->window_text.len);
}

/* The local toplevel's parent follows the remote one's (0: none), so
 * dialogs stay with their parents. */
/* The app asked for a state: ask the local compositor, whose configure
 * goes back to the app as the answer. */
void window_request(struct rv_window *window, uint32_t request)
{
	struct xdg_toplevel *toplevel = window->xdg_toplevel;
	if (!toplevel) {
		return;
	}
	switch (request) {
	case WIRE_REQUEST_MAXIMIZE:
		xdg_toplevel_set_maximized(toplevel);
		break;
	case WIRE_REQUEST_UNMAXIMIZE:
		xdg_toplevel_unset_maximized(toplevel);
		break;
	case WIRE_REQUEST_FULLSCREEN:
		xdg_toplevel_set_fullscreen(toplevel, NULL);
		break;
	case WIRE_REQUEST_UNFULLSCREEN:
		xdg_toplevel_unset_fullscreen(toplevel);
		break;
	case WIRE_REQUEST_MINIMIZE:
		xdg_toplevel_set_minimized(toplevel);
		break;
	}
	/* Some compositors (weston) act on it at the next commit. */
	if (window->has_content && !window->frame_callback) {
		wl_surface_commit(window->surface);
	}
}

/* Size hints are double-buffered: they apply with the next commit, which
 * for a new window is the one that maps it. */
void window_set_hints(struct rv_window *window, const struct wire_msg *msg)
{
	if (!window->xdg_toplevel) {
		return;
	}
	xdg_toplevel_set_min_size(window->xdg_toplevel, msg->window_hints.min_width,
		msg->window_hints.min_height);
	xdg_toplevel_set_max_size(window->xdg_toplevel, msg->window_hints.max_width,
		msg->window_hints.max_height);
	if (window->has_content) {
		wl_surface_commit(window->surface);
	}
}

/* Our compositor will not draw the window's decorations: the app must. */
static void app_decorates(struct rv_window *window)
{
	struct wire_msg msg = {
		.type = WIRE_DECORATION_MODE,
		.decoration_mode = {.window = window->id, .mode = 1},
	};
	viewer_send(window->viewer, &msg);
}

static void decoration_configure(void *data, struct zxdg_toplevel_decoration_v1 *decoration,
	uint32_t mode)
{
	if (mode != ZXDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE) {
		app_decorates(data);
	}
}

static const struct zxdg_toplevel_decoration_v1_listener decoration_listener = {
	.configure = decoration_configure,
};

/* Who draws the title bar, as the server decided with the app: the local
 * compositor (2), or the app in its own pixels (1), when the window has no
 * decoration object and the compositor leaves it alone. Never both. */
void window_set_decoration(struct rv_window *window, uint32_t mode)
{
	struct rv_viewer *viewer = window->viewer;
	if (mode == 2 && !window->decoration && viewer->decoration_manager &&
		window->xdg_toplevel) {
		if (window->has_content) {
			/* xdg-decoration allows it only before the first buffer. */
			app_decorates(window);
			return;
		}
		window->decoration = zxdg_decoration_manager_v1_get_toplevel_decoration(
			viewer->decoration_manager, window->xdg_toplevel);
		zxdg_toplevel_decoration_v1_add_listener(window->decoration, &decoration_listener,
			window);
		zxdg_toplevel_decoration_v1_set_mode(window->decoration,
			ZXDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE);
	} else if (mode == 1 && window->decoration) {
		zxdg_toplevel_decoration_v1_destroy(window->decoration);
		window->decoration = NULL;
	}
}

void window_set_scale(struct rv_window *window, int32_t scale)
{
	window->scale = scale;
}

void window_set_parent(struct rv_window *window, uint32_t parent_id)
{
	struct rv_window *parent = parent_id ? window_from_id(window->viewer, parent_id) : NULL;
	if (!window->xdg_toplevel || (parent_id && (!parent || !parent->xdg_toplevel))) {
		viewer_fail(window->viewer, "window %u cannot have parent %u", window->id,
			parent_id);
		return;
	}
	xdg_toplevel_set_parent(window->xdg_toplevel, parent ? parent->xdg_toplevel : NULL);
}

/* While the link is down the window stays, dimmed and marked in its title,
 * so the user sees at once that it does not answer. */
void window_set_disconnected(struct rv_window *window, bool disconnected)
{
	if (window->disconnected == disconnected) {
		return;
	}
	window->disconnected = disconnected;
	show_title(window);
	if (window->image) {
		mark_all_damaged(window);
		window->dirty = true;
		window_present(window);
	}
}

/* The window is in a reattach's snapshot: the same remote window. */
void window_reattach(struct rv_window *window, const struct wire_msg *msg)
{
	window->stale = false;
	window->scale = 1; /* window_scale follows if not */
	window_set_parent(window, msg->window_new.parent);
	set_title(window, msg->window_new.title, msg->window_new.title_len);
	set_app_id(window, msg->window_new.app_id, msg->window_new.app_id_len);
	/* A new stream follows; what the server knew of us is gone. */
	video_decoder_destroy(window->decoder);
	window->decoder = NULL;
	window->received_seq = 0;
	window->reported_refresh_mhz = 0;
	window->reported_scale = 0;
	window->requested_width = msg->window_new.width;
	window->requested_height = msg->window_new.height;
	window->requested_states = 0;
	window_report_output(window);
}

static struct rv_window *window_alloc(struct rv_viewer *viewer, uint32_t id);

struct rv_window *window_create(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window = window_alloc(viewer, msg->window_new.window);
	if (!window) {
		return NULL;
	}
	window->xdg_toplevel = xdg_surface_get_toplevel(window->xdg_surface);
	xdg_toplevel_add_listener(window->xdg_toplevel, &toplevel_listener, window);

	set_title(window, msg->window_new.title, msg->window_new.title_len);
	set_app_id(window, msg->window_new.app_id, msg->window_new.app_id_len);
	/* The remote size until the first frame says otherwise. */
	window->requested_width = msg->window_new.width;
	window->requested_height = msg->window_new.height;
	wl_list_insert(viewer->windows.prev, &window->link);
	if (msg->window_new.parent) {
		window_set_parent(window, msg->window_new.parent);
	}
	wl_surface_commit(window->surface);
	return window;
}

static void drop_role(struct rv_window *window)
{
	if (window->xdg_popup) {
		xdg_popup_destroy(window->xdg_popup);
		window->xdg_popup = NULL;
	}
	if (window->decoration) {
		zxdg_toplevel_decoration_v1_destroy(window->decoration);
		window->decoration = NULL;
	}
	if (window->xdg_toplevel) {
		xdg_toplevel_destroy(window->xdg_toplevel);
		window->xdg_toplevel = NULL;
	}
	if (window->xdg_surface) {
		xdg_surface_destroy(window->xdg_surface);
		window->xdg_surface = NULL;
	}
}

static void popup_configure(void *data, struct xdg_popup *popup, int32_t x, int32_t y,
	int32_t width, int32_t height)
{
}

/* The local compositor dismissed the popup (a click outside): the app is
 * told through the server, and its popup_done makes the window go. */
static void popup_done(void *data, struct xdg_popup *popup)
{
	struct rv_window *window = data;
	if (window->dismissed) {
		return;
	}
	window->dismissed = true;
	log_debug("popup %u dismissed here", window->id);
	struct wire_msg msg = {.type = WIRE_POPUP_DONE, .popup_done = {window->id}};
	viewer_send(window->viewer, &msg);
}

static void popup_repositioned(void *data, struct xdg_popup *popup, uint32_t token)
{
}

static const struct xdg_popup_listener popup_listener = {
	.configure = popup_configure,
	.popup_done = popup_done,
	.repositioned = popup_repositioned,
};

static struct rv_window *window_alloc(struct rv_viewer *viewer, uint32_t id)
{
	if (wl_list_length(&viewer->windows) >= RV_MAX_WINDOWS) {
		viewer_fail(viewer, "the server opened more than %d windows", RV_MAX_WINDOWS);
		return NULL;
	}
	struct rv_window *window = calloc(1, sizeof(*window));
	if (!window) {
		viewer_fail(viewer, "out of memory creating a window");
		return NULL;
	}
	window->viewer = viewer;
	window->id = id;
	window->scale = window->image_scale = window->surface_scale = 1;
	pixman_region32_init(&window->pending_damage);
	for (int i = 0; i < RV_BUFFERS; i++) {
		pixman_region32_init(&window->buffers[i].damage);
	}
	window->surface = wl_compositor_create_surface(viewer->compositor);
	wl_surface_add_listener(window->surface, &surface_listener, window);
	window->xdg_surface = xdg_wm_base_get_xdg_surface(viewer->wm_base, window->surface);
	xdg_surface_add_listener(window->xdg_surface, &xdg_surface_listener, window);
	return window;
}

struct rv_window *window_create_popup(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *parent = window_from_id(viewer, msg->popup_new.parent);
	if (!parent || parent->stale || !parent->xdg_surface) {
		/* Its parent was dismissed here already: dismiss it too. */
		if (parent && parent->dismissed) {
			struct wire_msg done = {.type = WIRE_POPUP_DONE,
				.popup_done = {msg->popup_new.window}};
			viewer_send(viewer, &done);
			return NULL;
		}
		viewer_fail(viewer, "popup %u has no parent window %u", msg->popup_new.window,
			msg->popup_new.parent);
		return NULL;
	}
	struct rv_window *window = window_alloc(viewer, msg->popup_new.window);
	if (!window) {
		return NULL;
	}
	window->parent = parent;
	struct xdg_positioner *pos = xdg_wm_base_create_positioner(viewer->wm_base);
	xdg_positioner_set_size(pos, msg->popup_new.width, msg->popup_new.height);
	xdg_positioner_set_anchor_rect(pos, msg->popup_new.anchor_x, msg->popup_new.anchor_y,
		msg->popup_new.anchor_width > 0 ? msg->popup_new.anchor_width : 1,
		msg->popup_new.anchor_height > 0 ? msg->popup_new.anchor_height : 1);
	xdg_positioner_set_anchor(pos, msg->popup_new.anchor);
	xdg_positioner_set_gravity(pos, msg->popup_new.gravity);
	xdg_positioner_set_constraint_adjustment(pos, msg->popup_new.constraint_adjustment);
	xdg_positioner_set_offset(pos, msg->popup_new.offset_x, msg->popup_new.offset_y);
	window->xdg_popup = xdg_surface_get_popup(window->xdg_surface, parent->xdg_surface, pos);
	xdg_positioner_destroy(pos);
	xdg_popup_add_listener(window->xdg_popup, &popup_listener, window);
	if ((msg->popup_new.flags & WIRE_POPUP_GRAB) && viewer->seat && viewer->input_serial) {
		xdg_popup_grab(window->xdg_popup, viewer->seat, viewer->input_serial);
	}
	window->requested_width = msg->popup_new.width;
	window->requested_height = msg->popup_new.height;
	log_debug("popup %u of window %u: %dx%d at anchor %d,%d%s", window->id, parent->id,
		msg->popup_new.width, msg->popup_new.height, msg->popup_new.anchor_x,
		msg->popup_new.anchor_y,
		msg->popup_new.flags & WIRE_POPUP_GRAB ? ", with a grab" : "");
	wl_surface_commit(window->surface);
	wl_list_insert(viewer->windows.prev, &window->link);
	return window;
}

void window_destroy(struct rv_window *window)
{
	if (!window) {
		return;
	}
	struct rv_viewer *viewer = window->viewer;
	/* Popups go first, topmost first, as xdg-shell demands. */
	struct rv_window *child, *tmp;
	wl_list_for_each_safe(child, tmp, &viewer->windows, link)
	{
		if (child->parent == window) {
			window_destroy(child);
		}
	}
	input_window_gone(viewer, window);
	if (window->frame_callback) {
		wl_callback_destroy(window->frame_callback);
	}
	for (int i = 0; i < RV_BUFFERS; i++) {
		buffer_drop(&window->buffers[i]);
		pixman_region32_fini(&window->buffers[i].damage);
	}
	drop_role(window);
	wl_surface_destroy(window->surface);
	pixman_region32_fini(&window->pending_damage);
	video_decoder_destroy(window->decoder);
	viewer->image_bytes -= (uint64_t)window->width * window->height * 4;
	free(window->image);
	free(window->title);
	wl_list_remove(&window->link);
	free(window);
}
