/*
 * rcomp-view's data model: one struct rv_viewer per process, one rv_window
 * per remote window, the local outputs and what rcomp-view was asked to do.
 * Types only. A room's own state (the connection, the seat, the clipboard
 * and drags, the text input, the chords) is declared in that room's
 * header, beside its functions; the viewer holds it by value. This header
 * includes only headers that know nothing of the viewer.
 */
#ifndef RCOMP_VIEWER_H
#define RCOMP_VIEWER_H

#include <pixman.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <wayland-client.h>

#include "chord-state.h"
#include "clipboard-state.h"
#include "codec.h"
#include "files.h"
#include "connection-state.h"
#include "idmap.h"
#include "input-state.h"
#include "notify-state.h"
#include "print-state.h"
#include "scaling.h"
#include "textinput-state.h"
#include "wire.h"

struct fcft_font;
struct rv_viewer;
struct xdg_activation_v1;
struct zwp_idle_inhibit_manager_v1;
struct zxdg_output_manager_v1;
struct zxdg_output_v1;
struct zwp_idle_inhibitor_v1;

#define RV_BUFFERS 3
#define RV_FEEDBACKS 4 /* commits awaiting the desktop's word */
#define RV_MAX_WINDOWS 256
/* All window images together; a server asking for more is refused. */
#define RV_MAX_IMAGE_BYTES ((uint64_t)1 << 30)
#define RV_MAX_WINDOW_OUTPUTS 8

/* A local output, for the refresh and scale of the windows on it. */
struct rv_output {
	struct rv_viewer *viewer;
	struct wl_list link; // rv_viewer::outputs
	struct wl_output *output;
	uint32_t name;
	uint32_t refresh_mhz, pending_refresh_mhz;
	int32_t scale, pending_scale;
	/* Its name and logical place, where the desktop has xdg-output. */
	struct zxdg_output_v1 *xdg_output;
	struct rv_output_place {
		char name[WIRE_MAX_OUTPUT_NAME + 1];
		char description[WIRE_MAX_OUTPUT_DESCRIPTION + 1];
		int32_t x, y, width, height;
	} place, pending_place;
	uint32_t place_generation; /* counts its changes */
};

/* A wl_shm buffer of a window's pool, with the damage it has missed. */
struct rv_buffer {
	struct wl_buffer *buffer;
	uint32_t *data;
	size_t size;
	int32_t width, height;
	bool busy; /* held by the compositor */
	bool opaque; /* XRGB8888: for pictures without alpha (video) */
	pixman_region32_t damage; /* image areas newer than this buffer */
};

/* One remote window: a local xdg_toplevel, or an xdg_popup of its parent. */
/* What a remote app's text input asks of input methods (textinput.c). */
struct rv_text_state {
	bool enabled;
	uint32_t cursor, anchor, change_cause, content_hint, content_purpose;
	int32_t rect_x, rect_y, rect_width, rect_height; /* the caret */
	char *text; /* surrounding text */
};

struct rv_window {
	struct rv_viewer *viewer;
	struct wl_list link; // rv_viewer::windows
	uint32_t id;

	struct wl_surface *surface;
	struct xdg_surface *xdg_surface;
	struct xdg_toplevel *xdg_toplevel; /* or, for a popup: */
	struct xdg_popup *xdg_popup;
	struct zxdg_toplevel_decoration_v1 *decoration;
	struct rv_window *parent; /* a popup's parent window */
	bool dismissed; /* the local compositor dismissed the popup */
	char *title; /* as the server last sent it */
	bool disconnected; /* the link is down: shown dimmed, title marked */
	bool stale; /* reattaching: closed at sync unless the snapshot has it */

	/* Local configure: the size and states the local compositor wants,
	 * and what was last asked of the server. */
	bool configured;
	uint32_t ack_serial; /* of the newest configure */
	bool ack_pending; /* not acknowledged: the image does not fit it yet */
	int32_t configure_width, configure_height;
	uint32_t configure_states;
	int32_t requested_width, requested_height;
	uint32_t requested_states;

	/* The remote window's pixels as last received (decode.c). */
	uint32_t *image;
	int32_t width, height; /* image pixels: the window's size times image_scale */
	int32_t scale; /* of frames from now on (window_scale) */
	int32_t image_scale; /* of the image: the scale its last frame came at */
	uint32_t received_seq;
	struct video_decoder *decoder; /* while the server streams video */

	/* Presentation (present.c). */
	struct rv_buffer buffers[RV_BUFFERS];
	pixman_region32_t pending_damage; /* changed since the last commit */
	bool dirty; /* the image is newer than the surface */
	/* Video pictures are decoded straight into a buffer of the pool, not
	 * into image and copied: decoded_into holds the newest picture until it
	 * is committed; newest holds it while image lags behind it, until
	 * present_sync_image brings image up to date (NULL: image is current). */
	struct rv_buffer *decoded_into, *newest;
	/* The size of the buffers wanted now: a video picture smaller than the
	 * window (sent smaller to keep its rate) stays at its own size, and
	 * the desktop scales it through the viewport; 0: the image's size. */
	int32_t buffer_width, buffer_height;
	bool picture_scaled; /* the last picture so: for --stats */
	struct rv_scaling scaling; /* who scales a smaller picture */
	bool copy_pending; /* a copy_rect moved the image: show it with its frame */
	bool has_content; /* a buffer is attached */
	int32_t surface_scale; /* the buffer_scale last committed */
	struct wp_viewport *viewport; /* shows the image at its logical size */
	int32_t shown_width, shown_height; /* the viewport's destination */
	bool locally_decorated; /* the local compositor draws its title bar */
	/* The resize band around it (edges.c): four strips, top, bottom, left
	 * and right, and the window size they were laid out for. */
	struct wl_surface *edge_surface[4];
	struct wl_subsurface *edge_subsurface[4];
	struct wp_viewport *edge_viewport[4];
	int32_t edge_width, edge_height;
	int32_t geometry_width, geometry_height; /* the window geometry last set */
	struct rv_text_state text_state; /* the remote app's text input */
	struct wl_callback *frame_callback;
	/* When the desktop showed the last commits (wp_presentation): what
	 * each picture was, for A/V sync and input to photon. */
	struct rv_feedback {
		struct rv_window *window;
		struct wp_presentation_feedback *feedback;
		uint64_t drawn_us; /* the picture's time_us */
		uint64_t input_sent_us; /* the input it answers was sent: 0 none */
		uint32_t seq; /* the newest frame in the picture */
	} feedback[RV_FEEDBACKS];
	int feedback_next; /* the slot the next commit's question takes */
	/* The last commit's picture, until its frame callback says it is drawn. */
	uint64_t committed_drawn_us, committed_input_sent_us;
	uint32_t committed_seq;
	bool feedback_wanted; /* its app asks when its frames are shown (window_feedback) */
	bool committed_unseen;

	/* The local outputs the window is on, first entered first (output.c). */
	struct rv_output *outputs[RV_MAX_WINDOW_OUTPUTS];
	int noutputs;
	uint32_t reported_refresh_mhz;
	int32_t reported_scale;
	const struct rv_output *reported_place; /* output_place told, and of which change */
	uint32_t reported_place_generation;

	/* The pointer constraint the app asked for (constraint.c), and the
	 * local one while asked. */
	uint32_t constraint_type; /* enum wire_constraint */
	uint32_t constraint_nrects;
	uint8_t constraint_rects[WIRE_MAX_RECTS * WIRE_RECT_SIZE];
	bool constraint_hint, constraint_active;
	int32_t constraint_hint_x, constraint_hint_y; /* 24.8 */
	struct zwp_locked_pointer_v1 *locked;
	struct zwp_confined_pointer_v1 *confined;
	struct zwp_keyboard_shortcuts_inhibitor_v1 *inhibitor; /* the app asked for it */
	struct zwp_idle_inhibitor_v1 *idle_inhibitor; /* desktop.c: the app keeps it awake */

	/* Input to photon: the input_mark the next frame answers (frame_mark),
	 * and that of a frame decoded and not yet presented. */
	uint32_t mark_next, mark_decoded;
	uint64_t drawn_us; /* the newest frame's time_us (the server's clock) */

	/* The HUD (hud.c): its subsurface, the server's last numbers, and
	 * what was presented since they came. */
	struct wl_surface *hud_surface;
	struct wl_subsurface *hud_subsurface;
	int32_t hud_width, hud_height; /* logical */
	struct wire_window_stats hud_stats;
	bool hud_known; /* hud_stats came */
	struct wire_video_stats hud_video;
	bool hud_video_known; /* hud_video came */
	uint32_t hud_presented;
	uint64_t hud_photon_us, hud_since_us;
	uint32_t hud_photons;
	double hud_shown_fps, hud_photon_ms; /* ms: -1 until an input is answered */

	/* For --stats, per second. */
	uint32_t stat_received, stat_presented, stat_callbacks;
	uint64_t stat_bytes;
	uint64_t stat_photon_us; /* input to photon, summed */
	uint32_t stat_photons;
};

/* Where the HUD sits: bits of enum rv_hud_corner (0: top left). */
enum rv_hud_corner {
	RV_HUD_RIGHT = 1 << 0,
	RV_HUD_BOTTOM = 1 << 1,
};

/* How rcomp-view reaches rcomp-run, and so how it reconnects. */
enum rv_transport {
	RV_SOCKET, /* a unix socket; reconnects to it */
	RV_TCP, /* reconnects */
	RV_UDP, /* QUIC; reconnects */
	RV_SSH, /* reconnects with ssh HOST rcomp-run --attach SESSION */
	RV_STDIO, /* stdin/stdout: no reconnection */
	RV_LOCAL, /* rcomp-run --stdio started here: ends with it */
};

/* What rcomp-view was asked to do (main.c parses it). */
struct rv_options {
	enum rv_transport transport;
	const char *target; /* socket path or HOST:PORT */
	char **ssh_args;
	int nssh;
	char **app; /* NULL: attach to a running session */
	const char *attach_name; /* NULL: let rcomp-run choose */
	/* ssh HOST --stop [SESSION] or --list: rcomp-run runs that there, and
	 * no window opens; else NULL */
	const char *remote_command;
	const char *compress, *fps, *remote_bin; /* NULL: rcomp-run's own */
	const char *token_file; /* --tcp's and --udp's token; NULL: $RCOMP_TOKEN */
	/* Where the settings or flags say to connect, until main chooses. */
	const char *want_attach, *want_socket, *want_tcp, *want_udp;
	char token[WIRE_MAX_TOKEN + 1];
	size_t token_len;
	bool app_decorations; /* never ask the local compositor to decorate */
	bool title_host; /* titles begin with the remote host's name */
	bool ssh_udp; /* with ssh: move the session to UDP where the host offers it */
	bool audio; /* play the session's sound (--audio) */
	bool mic; /* send the local default source (--mic) */
	bool share; /* join beside the session's viewers, not take it over */
	bool view_only; /* join to watch: no input (implies share) */
	bool stats;
	uint32_t files; /* enum files_take: the session's files saved, refused or asked */
	uint64_t file_size_limit; /* bytes of one file taken; 0: none */
	bool open_files; /* open what the session sends, once saved */
	bool notifications_off; /* the session's notifications are not shown */
	uint32_t print; /* enum rv_print_action: what a print of the session's becomes */
	bool hud; /* shown from the start */
	struct rv_chord hud_key; /* toggles it */
	uint32_t hud_corner; /* enum rv_hud_corner */
	int verbose;
};

struct rv_viewer {
	struct rv_options options;
	/* The local compositor's globals (registry.c). */
	struct wl_display *display;
	struct wl_registry *registry;
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct zxdg_decoration_manager_v1 *decoration_manager; /* NULL: none here */
	struct wp_viewporter *viewporter; /* NULL: none here */
	struct zwp_idle_inhibit_manager_v1 *idle_manager; /* desktop.c; NULL: none here */
	struct zxdg_output_manager_v1 *xdg_output_manager; /* output.c; NULL: none here */
	struct xdg_activation_v1 *activation; /* desktop.c; NULL: none here */
	struct wp_presentation *presentation; /* NULL: commits count as shown */
	clockid_t presentation_clock;
	bool presentation_works; /* the desktop has answered a feedback */
	struct wl_subcompositor *subcompositor;
	struct wl_buffer *clear_pixel; /* one transparent pixel (edges.c) */
	struct rv_text_input text_input;

	struct rv_connection connection;
	struct rv_seat seat;
	struct rv_clipboard clipboard;
	struct files files; /* handover.c */
	/* A local target's fd for the copies' URIs of an app's drag's files
	 * (handover_drag_files), and the drag_files serial; -1: none. */
	int drag_files_fd;
	uint32_t drag_files_serial;
	/* Transfers under way, as the desktop's notifications tell of them
	 * (handover.c; an index is its notification's tag). */
	struct {
		bool used, sending, shown, dismissed;
		uint32_t group;
		uint64_t since_us, shown_us;
	} told[2 * FILES_GROUPS];
	uint64_t told_us; /* the last look */
	struct rv_notify notify; /* notify.c */
	struct rv_print_job print_jobs[RV_PRINT_JOBS]; /* print.c */
	struct rv_sound *sound; /* sound.c; NULL: none */

	struct wl_list windows; // rv_window::link
	uint32_t max_window_id; /* the highest the server announced: ids are never reused */
	struct idmap window_ids;
	struct wl_list outputs; // rv_output::link

	/* What decoding shares (decode.c). */
	struct decompressor decompressor;
	uint64_t image_bytes;

	bool running;
	int exit_code;
	uint64_t stats_due_us;
	/* The HUD (hud.c): shown or not, its font, and the chord's key while
	 * it is held (+1; 0: none), which the app never hears. */
	bool hud_shown;
	struct fcft_font *hud_font;
	int hud_font_scale;
	bool hud_font_failed;
	uint32_t hud_swallowed;
};

static inline struct rv_window *window_from_id(struct rv_viewer *viewer, uint32_t id)
{
	return idmap_get(&viewer->window_ids, id);
}

/* The window's size in logical (surface) coordinates: its image's over
 * the image's scale. */
static inline void window_logical_size(const struct rv_window *window, int32_t *width,
	int32_t *height)
{
	*width = window->width / window->image_scale;
	*height = window->height / window->image_scale;
}

/* The window whose picture surface is surface (NULL: none of ours; the
 * resize bands, cursor and drag icon are no window's). */

static inline struct rv_window *window_of_surface(struct rv_viewer *viewer,
	struct wl_surface *surface)
{
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		if (surface && window->surface == surface) {
			return window;
		}
	}
	return NULL;
}

#endif
