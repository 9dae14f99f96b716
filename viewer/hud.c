#include <fcft/fcft.h>
#include <pixman.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "chord.h"
#include "codec.h"
#include "connection.h"
#include "files.h"
#include "hud.h"
#include "log.h"
#include "monotonic.h"
#include "quic.h"
#include "shm.h"
#include "video.h"

#define HUD_MARGIN 8 /* from the window's corner, logical pixels */
#define HUD_PAD 4 /* around the text, logical pixels */
#define HUD_LINES 8
#define HUD_FILES 2 /* lines for files under way, at most */
#define HUD_LINE_MAX 64

static bool font_ready(struct rv_viewer *viewer, int scale)
{
	if (viewer->hud_font && viewer->hud_font_scale == scale) {
		return true;
	}
	if (viewer->hud_font_failed) {
		return false;
	}
	if (!viewer->hud_font && !fcft_init(FCFT_LOG_COLORIZE_NEVER, false, FCFT_LOG_CLASS_ERROR)) {
		viewer->hud_font_failed = true;
		log_error("the HUD has no fonts: fcft cannot start");
		return false;
	}
	char attrs[32];
	snprintf(attrs, sizeof(attrs), "dpi=%d", 96 * scale);
	const char *names[] = {"monospace:size=9"};
	struct fcft_font *font = fcft_from_name(1, names, attrs);
	if (!font) {
		viewer->hud_font_failed = true;
		log_error("the HUD has no fonts: no monospace font is installed (fontconfig)");
		return false;
	}
	fcft_destroy(viewer->hud_font);
	viewer->hud_font = font;
	viewer->hud_font_scale = scale;
	return true;
}

/* The next code point of UTF-8 text at *s (advanced), U+FFFD for bad bytes. */
static uint32_t next_utf32(const char **s)
{
	const unsigned char *p = (const unsigned char *)*s;
	uint32_t cp;
	int extra;
	if (p[0] < 0x80) {
		cp = p[0];
		extra = 0;
	} else if ((p[0] & 0xe0) == 0xc0) {
		cp = p[0] & 0x1f;
		extra = 1;
	} else if ((p[0] & 0xf0) == 0xe0) {
		cp = p[0] & 0x0f;
		extra = 2;
	} else {
		*s += 1;
		return 0xfffd;
	}
	for (int i = 1; i <= extra; i++) {
		if ((p[i] & 0xc0) != 0x80) {
			*s += i;
			return 0xfffd;
		}
		cp = cp << 6 | (p[i] & 0x3f);
	}
	*s += 1 + extra;
	return cp;
}

static int text_width(struct fcft_font *font, const char *text)
{
	int width = 0;
	while (*text) {
		const struct fcft_glyph *g =
			fcft_rasterize_char_utf32(font, next_utf32(&text), FCFT_SUBPIXEL_NONE);
		width += g ? g->advance.x : 0;
	}
	return width;
}

static void draw_text(pixman_image_t *dst, struct fcft_font *font, pixman_image_t *color,
	const char *text, int x, int baseline)
{
	while (*text) {
		const struct fcft_glyph *g =
			fcft_rasterize_char_utf32(font, next_utf32(&text), FCFT_SUBPIXEL_NONE);
		if (!g) {
			continue;
		}
		if (pixman_image_get_format(g->pix) == PIXMAN_a8r8g8b8) {
			/* A colour glyph is its own source. */
			pixman_image_composite32(PIXMAN_OP_OVER, g->pix, NULL, dst, 0, 0, 0, 0,
				x + g->x, baseline - g->y, g->width, g->height);
		} else {
			pixman_image_composite32(PIXMAN_OP_OVER, color, g->pix, dst, 0, 0, 0, 0,
				x + g->x, baseline - g->y, g->width, g->height);
		}
		x += g->advance.x;
	}
}

/* Each group of files under way (to or from the session), a line each from
 * lines[n]; the count of lines then. */
static int describe_files(struct rv_viewer *viewer, char lines[HUD_LINES][HUD_LINE_MAX], int n)
{
	struct files_progress p[HUD_FILES];
	int count = files_progress(&viewer->files, p, HUD_FILES, monotonic_usec());
	for (int i = 0; i < count && n < HUD_LINES; i++) {
		if (p[i].asking) {
			continue;
		}
		char *line = lines[n++];
		int len = snprintf(line, HUD_LINE_MAX, "%s %.16s %.1f/%.1f MB ",
			p[i].sending ? "\xe2\x86\x91" : "\xe2\x86\x93", p[i].name, p[i].done / 1e6,
			p[i].total / 1e6);
		if (len <= 0 || len >= HUD_LINE_MAX) {
			continue;
		}
		if (p[i].waiting) {
			snprintf(line + len, HUD_LINE_MAX - (size_t)len, "waiting");
		} else if (p[i].rate && p[i].total > p[i].done) {
			snprintf(line + len, HUD_LINE_MAX - (size_t)len, "%.1f Mbit/s %.0f s",
				(double)p[i].rate * 8 / 1e6,
				(double)(p[i].total - p[i].done) / (double)p[i].rate);
		} else {
			snprintf(line + len, HUD_LINE_MAX - (size_t)len, "%.1f Mbit/s",
				(double)p[i].rate * 8 / 1e6);
		}
	}
	return n;
}

/* What the HUD says of window now, a line each. */
static int describe(struct rv_window *window, char lines[HUD_LINES][HUD_LINE_MAX])
{
	const struct rv_connection *conn = &window->viewer->connection;
	if (!window->hud_known) {
		snprintf(lines[0], HUD_LINE_MAX, "%s",
			conn->welcomed && conn->server_minor < 2
				? "rcomp-run is too old for the HUD"
				: "waiting for the numbers");
		return 1;
	}
	const struct wire_window_stats *s = &window->hud_stats;
	snprintf(lines[0], HUD_LINE_MAX, "app %u fps  shown %.0f fps", s->app_fps,
		window->hud_shown_fps);
	static const char *const motion[] = {"", " smaller for the rate",
		" slow (sharpness first)"};
	/* Video's threads: the server's encoding it, and this side's decoding. */
	char threads[32] = "";
	if (s->video && s->threads && window->decoder) {
		snprintf(threads, sizeof(threads), " %u+%d thr", s->threads,
			video_decoder_threads(window->decoder));
	}
	snprintf(lines[1], HUD_LINE_MAX, "%s %s%s%s  %.2f MB/s", s->video ? "video" : "lossless",
		s->video ? "H.264" : codec_compression_name(s->compression), threads,
		s->video && s->motion < 3 ? motion[s->motion] : "", (double)s->bytes / 1e6);
	/* The encoder's side of the picture: its speed setting, its quantizer
	 * (lower is sharper), its bit rate and the size it encodes at. */
	int n = 2;
	const struct wire_video_stats *v = &window->hud_video;
	if (s->video && window->hud_video_known) {
		snprintf(lines[n++], HUD_LINE_MAX, "%s QP %u  %.1f Mbit/s  %ux%u",
			wire_preset_names[v->preset], v->qp, (double)v->bitrate / 1e6, v->width,
			v->height);
	}
	/* The link's round trip: QUIC's, with the loss it has seen once it
	 * can say, or what the channel's pacing measured; before either, the
	 * frames' (which adds decoding and the desktop's frame). */
	if (conn->quic) {
		double loss = quic_loss(conn->quic);
		int len = snprintf(lines[n], HUD_LINE_MAX, "UDP rtt %.1f ms",
			quic_rtt_ms(conn->quic));
		if (loss >= 0 && len > 0 && len < HUD_LINE_MAX) {
			snprintf(lines[n] + len, HUD_LINE_MAX - (size_t)len, ", %.1f%% lost",
				loss * 100);
		}
	} else {
		uint64_t rtt_us =
			conn->channel.pace.min_rtt_us ? conn->channel.pace.min_rtt_us : s->rtt_us;
		snprintf(lines[n], HUD_LINE_MAX, "rtt %.1f ms", (double)rtt_us / 1000);
	}
	if (window->hud_photon_ms >= 0) {
		snprintf(lines[n + 1], HUD_LINE_MAX, "input\xe2\x86\x92photon %.1f ms",
			window->hud_photon_ms);
	} else {
		snprintf(lines[n + 1], HUD_LINE_MAX, "input\xe2\x86\x92photon -");
	}
	if (conn->viewers > 1 || conn->watching) {
		snprintf(lines[n + 2], HUD_LINE_MAX, "%u viewer%s, %s", conn->viewers,
			conn->viewers == 1 ? "" : "s",
			conn->watching ? "watching"
				       : (conn->has_input ? "input here" : "input elsewhere"));
		return describe_files(window->viewer, lines, n + 3);
	}
	return describe_files(window->viewer, lines, n + 2);
}

static void place(struct rv_window *window, int32_t width, int32_t height)
{
	struct rv_viewer *viewer = window->viewer;
	int32_t w, h;
	window_logical_size(window, &w, &h);
	int32_t x = HUD_MARGIN, y = HUD_MARGIN;
	if (viewer->options.hud_corner & RV_HUD_RIGHT) {
		x = w - HUD_MARGIN - width;
	}
	if (viewer->options.hud_corner & RV_HUD_BOTTOM) {
		y = h - HUD_MARGIN - height;
	}
	wl_subsurface_set_position(window->hud_subsurface, x < 0 ? 0 : x, y < 0 ? 0 : y);
}

static void draw(struct rv_window *window)
{
	struct rv_viewer *viewer = window->viewer;
	/* The scale of the window's pixels: the local output's. */
	int scale = window->image_scale;
	if (!window->xdg_toplevel || !viewer->subcompositor || !font_ready(viewer, scale)) {
		return;
	}
	struct fcft_font *font = viewer->hud_font;
	char lines[HUD_LINES][HUD_LINE_MAX];
	int n = describe(window, lines);
	int text_w = 0;
	for (int i = 0; i < n; i++) {
		int w = text_width(font, lines[i]);
		text_w = w > text_w ? w : text_w;
	}
	int pad = HUD_PAD * scale;
	/* Whole logical pixels, so that it lands on the output's grid. */
	int32_t width = (text_w + 2 * pad + scale - 1) / scale;
	int32_t height = (n * font->height + 2 * pad + scale - 1) / scale;
	void *data;
	struct wl_buffer *buffer =
		shm_buffer_create(viewer, width * scale, height * scale, false, &data);
	if (!buffer) {
		return;
	}
	pixman_image_t *image = pixman_image_create_bits(PIXMAN_a8r8g8b8, width * scale,
		height * scale, data, width * scale * 4);
	pixman_color_t background = {0x1000, 0x1000, 0x1000, 0xd000}; /* premultiplied */
	pixman_color_t white = {0xffff, 0xffff, 0xffff, 0xffff};
	pixman_image_t *fill = pixman_image_create_solid_fill(&background);
	pixman_image_t *color = pixman_image_create_solid_fill(&white);
	pixman_image_composite32(PIXMAN_OP_SRC, fill, NULL, image, 0, 0, 0, 0, 0, 0, width * scale,
		height * scale);
	for (int i = 0; i < n; i++) {
		draw_text(image, font, color, lines[i], pad, pad + i * font->height + font->ascent);
	}
	pixman_image_unref(color);
	pixman_image_unref(fill);
	pixman_image_unref(image);
	munmap(data, (size_t)width * scale * height * scale * 4);

	bool created = !window->hud_surface;
	if (created) {
		window->hud_surface = wl_compositor_create_surface(viewer->compositor);
		/* Pointer and touch pass through it to the app's picture. */
		struct wl_region *none = wl_compositor_create_region(viewer->compositor);
		wl_surface_set_input_region(window->hud_surface, none);
		wl_region_destroy(none);
		window->hud_subsurface = wl_subcompositor_get_subsurface(viewer->subcompositor,
			window->hud_surface, window->surface);
		wl_subsurface_set_desync(window->hud_subsurface);
		wl_subsurface_place_above(window->hud_subsurface, window->surface);
	}
	window->hud_width = width;
	window->hud_height = height;
	place(window, width, height);
	wl_surface_set_buffer_scale(window->hud_surface, scale);
	wl_surface_attach(window->hud_surface, buffer, 0, 0);
	wl_surface_damage_buffer(window->hud_surface, 0, 0, width * scale, height * scale);
	wl_surface_commit(window->hud_surface);
	/* The compositor has the pixels; the memory is never written again. */
	wl_buffer_destroy(buffer);
	/* Its place is the parent's state: it applies with the parent's commit. */
	wl_surface_commit(window->surface);
}

static void hide(struct rv_window *window)
{
	if (window->hud_surface) {
		hud_window_finish(window);
		wl_surface_commit(window->surface);
	}
}

static void want_stats(struct rv_viewer *viewer, bool on)
{
	struct rv_connection *conn = &viewer->connection;
	if (conn->welcomed && conn->server_minor >= 2) {
		struct wire_msg msg = {.type = WIRE_STATS_WANTED, .stats_wanted = {.on = on}};
		connection_send(viewer, &msg);
	}
}

void hud_show(struct rv_viewer *viewer, bool shown)
{
	viewer->hud_shown = shown;
	want_stats(viewer, shown);
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		if (shown) {
			window->hud_since_us = monotonic_usec();
			window->hud_presented = 0;
			draw(window);
		} else {
			hide(window);
		}
	}
}

bool hud_key(struct rv_viewer *viewer, uint32_t key, bool pressed)
{
	if (pressed && chord_matches(viewer, &viewer->options.hud_key, key)) {
		viewer->hud_swallowed = key + 1;
		hud_show(viewer, !viewer->hud_shown);
		return true;
	}
	if (!pressed && viewer->hud_swallowed == key + 1) {
		viewer->hud_swallowed = 0;
		return true;
	}
	return false;
}

void hud_link_up(struct rv_viewer *viewer)
{
	if (viewer->hud_shown) {
		want_stats(viewer, true);
	}
}

void hud_video_stats(struct rv_window *window, const struct wire_video_stats *msg)
{
	window->hud_video = *msg;
	window->hud_video_known = true;
}

void hud_window_stats(struct rv_window *window, const struct wire_window_stats *msg)
{
	uint64_t now = monotonic_usec();
	uint64_t elapsed = now - window->hud_since_us;
	window->hud_stats = *msg;
	window->hud_shown_fps = window->hud_since_us && elapsed > 0
		? window->hud_presented * 1e6 / (double)elapsed
		: 0;
	if (window->hud_photons) {
		window->hud_photon_ms = (double)window->hud_photon_us / window->hud_photons / 1000;
	}
	window->hud_known = true;
	window->hud_presented = 0;
	window->hud_photon_us = 0;
	window->hud_photons = 0;
	window->hud_since_us = now;
	if (window->viewer->hud_shown) {
		draw(window);
	}
}

void hud_window_resized(struct rv_window *window)
{
	/* Only a corner away from the top left moves with the size; the new
	 * place applies with the commit that shows the new size. */
	if (window->hud_subsurface && window->viewer->options.hud_corner) {
		place(window, window->hud_width, window->hud_height);
	}
}

void hud_presented(struct rv_window *window)
{
	window->hud_presented++;
}

void hud_photon(struct rv_window *window, uint64_t photon_us)
{
	window->hud_photon_us += photon_us;
	window->hud_photons++;
}

void hud_window_finish(struct rv_window *window)
{
	if (window->hud_subsurface) {
		wl_subsurface_destroy(window->hud_subsurface);
	}
	if (window->hud_surface) {
		wl_surface_destroy(window->hud_surface);
	}
	window->hud_subsurface = NULL;
	window->hud_surface = NULL;
}

void hud_finish(struct rv_viewer *viewer)
{
	if (viewer->hud_font) {
		fcft_destroy(viewer->hud_font);
		fcft_fini();
		viewer->hud_font = NULL;
	}
}
