/*
 * rcomp-run: the remote side. One struct rc_server per process; windows,
 * tracked surfaces and the viewer connection hang off it.
 */
#ifndef RCOMP_SERVER_H
#define RCOMP_SERVER_H

#include <pixman.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <wayland-server-core.h>
#include <wlr/util/box.h>

#include "buffer.h"
#include "codec.h"
#include "flow.h"
#include "session.h"
#include "transfer.h"
#include "wire.h"

struct rc_server;

/* One remote toplevel, streamed as one local window. */
struct rc_window {
	struct rc_server *server;
	struct wl_list link; // rc_server::windows
	uint32_t id;
	struct wlr_xdg_surface *xdg_surface; /* or, for an X11 window: */
	struct wlr_xwayland_surface *xwayland;
	bool mapped;
	bool popup; /* an xdg_popup: shown as a local popup of parent */
	uint32_t parent_id; /* the popup's parent window, at map */
	/* The scale its surfaces' output has, and its image is captured at:
	 * image pixels are window coordinates times this. */
	int32_t scale;

	/* Window geometry in surface coordinates at the last capture; the
	 * captured image covers exactly this box, so CSD shadows are cut off. */
	struct wlr_box geometry;
	/* Damage since the last frame sent, in image pixels. */
	pixman_region32_t damage;
	/* The composited window and the copy the viewer holds. */
	pixman_image_t *image;
	uint32_t *pixels;
	uint32_t *sent;
	int32_t width, height;
	bool need_reset; /* the viewer must clear its copy: next frame is whole */
	bool announced; /* WINDOW_NEW was sent to the current viewer */

	uint32_t seq; /* sequence of the last frame sent */
	uint32_t acked; /* newest sequence the viewer presented */

	/* The window's own frame clock. */
	int timer_fd;
	struct wl_event_source *timer;
	uint32_t refresh_mhz; /* of the viewer's output; 0: the default */
	bool clock_running;
	int idle_ticks;
	uint64_t ticks;

	/* Video: while in motion the window is one H.264 stream. */
	struct video_encoder *encoder;
	bool video; /* streaming video now; the viewer's copy is lossy */
	bool video_failed; /* no encoder could be made: stay lossless */
	bool new_stream; /* the next video frame starts a stream */
	int motion_frames, still_frames;
	uint64_t last_change_us;
	int64_t video_bitrate;
	uint64_t bitrate_stamp_us;

	/* Commit rate, to name an app that floods; crops said once. */
	uint32_t rate_commits;
	uint64_t rate_start_us;
	bool flood_logged, crop_logged;

	/* Statistics for --stats, reset every second. */
	uint32_t stat_commits, stat_frames;
	uint64_t stat_bytes;
	double rtt_ms; /* smoothed, from acks */

	/* Sizes asked for by the viewer, to skip repeats. */
	int32_t requested_width, requested_height;

	struct wl_listener map;
	struct wl_listener unmap;
	struct wl_listener destroy;
	struct wl_listener set_title;
	struct wl_listener set_app_id;
	struct wl_listener set_parent;
	struct wl_listener request_maximize;
	struct wl_listener request_fullscreen;
	struct wl_listener request_minimize;
	struct wl_listener request_configure; /* X11 */
	/* The size hints the viewer was last told. */
	int32_t hints[4];
	bool ever_announced;
	bool server_side; /* decorated by the viewer's compositor */
};

/* Every wl_surface, so that commits anywhere in a window's tree damage it. */
struct rc_surface {
	struct rc_server *server;
	struct wlr_surface *surface;
	struct wl_listener commit;
	struct wl_listener new_subsurface;
	struct wl_listener destroy;
};

struct rc_subsurface {
	struct rc_server *server;
	struct wlr_subsurface *subsurface;
	struct wl_listener map;
	struct wl_listener unmap;
	struct wl_listener destroy;
};

/* Clipboard and primary selection (clipboard.c). */
struct rc_clipboard {
	struct rc_server *server;
	struct transfers transfers;
	struct wl_event_source *sources[TRANSFER_MAX]; /* by transfer slot */
	uint32_t masks[TRANSFER_MAX]; /* what each source waits for now */
	struct wl_listener request_set_selection;
	struct wl_listener request_set_primary_selection;
	struct wl_listener set_selection;
	struct wl_listener set_primary_selection;
};

/* A headless output of one scale (output.c). */
struct rc_output {
	struct rc_server *server;
	struct wlr_output *output;
	int32_t scale;
	struct wl_listener bind;
};

/* A finger down, on the surface it touched first. */
struct rc_touch_point {
	bool used;
	int32_t id;
	uint32_t window;
	double dx, dy; /* window coordinates minus surface-local ones */
};

/* The cursor the app under the pointer set (cursor.c). */
struct rc_cursor {
	struct rc_server *server;
	bool set; /* an app has set a cursor (or hidden it) */
	struct wlr_surface *surface; /* NULL: hidden */
	int32_t hotspot_x, hotspot_y;
	bool size_logged;
	uint32_t *pixels; /* WIRE_MAX_CURSOR^2, for the message */
	struct wl_event_source *frame_timer;
	struct wl_listener request_set_cursor;
	struct wl_listener surface_commit;
	struct wl_listener surface_destroy;
};

/* A connection that has not finished its hello yet. It reads the hello
 * exactly, so whatever follows stays in the socket for the viewer. */
struct rc_pending {
	struct rc_server *server;
	struct wl_list link; // rc_server::pending
	int fd;
	bool tcp;
	char peer[64];
	struct wl_event_source *source, *timeout;
	size_t len;
	uint8_t data[WIRE_HEADER_SIZE + 20 + WIRE_MAX_TOKEN];
};

/* The connection to the one viewer. */
struct rc_viewer {
	struct rc_server *server;
	int in_fd, out_fd;
	struct wl_event_source *in_source, *out_source;
	struct buffer in, out;
	bool handshake_done;
	bool video; /* the viewer decodes H.264 */
	bool closing; /* flush what is queued, then close */
	struct flow flow;
	bool writable_armed; /* out_source waits for WL_EVENT_WRITABLE */
	bool tcp;
};

struct rc_server {
	struct wl_display *display;
	struct wl_event_loop *loop;
	struct wlr_backend *backend;
	struct wlr_renderer *renderer;
	struct wlr_allocator *allocator;
	struct wlr_compositor *compositor;
	struct wlr_xdg_shell *xdg_shell;
	struct wlr_seat *seat;
	struct wlr_input_device *keyboard;
	struct xkb_context *xkb;
	struct rc_cursor cursor;
	struct rc_clipboard clipboard;
	bool xwayland_enabled; /* not --no-xwayland */
	struct wlr_xwayland *xwayland;
	struct wl_listener new_x11_surface;
	uint32_t x11_focus; /* the X11 window last activated: menus' parent */
	struct rc_output *outputs[WIRE_MAX_SCALE + 1]; /* by scale, made on demand */
	struct wl_list decorations; // rc_decoration::link
	struct wl_listener new_decoration;
	bool server_decorations; /* the (last) viewer's compositor draws them */
	const char *socket_name;

	struct wl_listener new_surface;
	struct wl_listener new_xdg_surface;

	struct wl_list windows; // rc_window::link
	uint32_t next_window_id;

	/* Options. */
	int fps;
	bool fps_explicit; /* --fps given: it overrides the viewer's refresh */
	enum rc_codec_mode { RC_CODEC_AUTO, RC_CODEC_LOSSLESS, RC_CODEC_VIDEO } codec_mode;
	enum wire_compression compression;
	int compression_level;
	const char *listen_path;
	bool stdio;
	const char *dump_dir;
	bool stats;
	struct wl_event_source *stats_timer;

	/* The app. */
	pid_t app_pid;
	bool app_exited;
	int app_status;
	struct wl_event_source *exit_check;
	int exit_idle_checks;

	/* Pointer state for implicit grabs. */
	uint32_t buttons_down;
	struct wlr_surface *grab_surface;
	double grab_dx, grab_dy; /* window coords minus surface-local coords */
	uint32_t pointer_window;
	struct rc_touch_point touch[WIRE_MAX_TOUCH_POINTS];
	uint32_t keys_down[WIRE_MAX_KEYS];
	uint32_t nkeys_down;

	/* The session. */
	char session_dir[SESSION_PATH_MAX];
	char session_name[WIRE_MAX_SESSION_NAME + 1];
	uint64_t session_id;
	int64_t started;
	char app_desc[256];
	const char *name; /* --name */
	bool persist; /* --persist */
	const char *tcp_addr; /* --listen-tcp */
	const char *token_file; /* --token-file */
	char token[WIRE_MAX_TOKEN + 1];
	size_t token_len;

	/* Viewer transport. */
	int listen_fd, tcp_fd;
	struct wl_event_source *listen_source, *tcp_source;
	struct wl_list pending; // rc_pending::link
	int npending;
	uint64_t refused_log_us; /* rate limit for refusal log lines */
	double refusal_credit;
	int refused_unlogged;
	struct rc_viewer *viewer;
	struct compressor compressor;
	uint8_t *scratch; /* raw diff bytes of one frame */
	size_t scratch_size;

	bool running;
	int exit_code;
};

/* xdg.c */
void xdg_init(struct rc_server *server);
struct rc_window *window_from_id(struct rc_server *server, uint32_t id);
void window_damage_all(struct rc_window *window);
/* What a window is made of, whichever shell made it (xdg-shell or X11). */
struct wlr_surface *window_surface(const struct rc_window *window);
void window_get_geometry(const struct rc_window *window, struct wlr_box *box);
const char *window_title(const struct rc_window *window); /* never NULL */
const char *window_app_id(const struct rc_window *window); /* never NULL */
/* The toplevel's parent window, or NULL. */
struct rc_window *window_parent(const struct rc_window *window);
/* The state the app wants: before its first map, what it asked for. */
bool window_wants_maximized(const struct rc_window *window, bool first);
bool window_wants_fullscreen(const struct rc_window *window, bool first);
/* A new window: creates it with its id, on the server's list. */
struct rc_window *window_create(struct rc_server *server);
void window_mapped(struct rc_window *window);
void window_unmapped(struct rc_window *window);
void window_destroyed(struct rc_window *window);
/* Handlers any shell's window uses for these signals. */
void window_handle_unmap(struct wl_listener *listener, void *data);
void window_handle_set_title(struct wl_listener *listener, void *data);
void window_handle_set_app_id(struct wl_listener *listener, void *data);
void window_handle_set_parent(struct wl_listener *listener, void *data);

/* xwayland.c */
bool xwayland_init(struct rc_server *server);
void xwayland_finish(struct rc_server *server);
void xwayland_activate(struct rc_window *window, bool activated);
void xwayland_configure(struct rc_window *window, int32_t width, int32_t height, uint32_t states);
void xwayland_close(struct rc_window *window);

/* capture.c */
bool capture_window(struct rc_window *window);
void capture_start_clock(struct rc_window *window);
void capture_set_refresh(struct rc_window *window, uint32_t refresh_mhz);
long capture_frame_interval_ns(const struct rc_window *window);
void capture_finish(struct rc_window *window);
bool capture_dump(struct rc_window *window, const char *dir);

/* stream.c */
bool stream_listen(struct rc_server *server);
bool stream_attach_stdio(struct rc_server *server);
void stream_finish(struct rc_server *server);
bool stream_ready_for_frame(struct rc_server *server, struct rc_window *window);
void stream_send_frame(struct rc_server *server, struct rc_window *window);
void stream_window_new(struct rc_server *server, struct rc_window *window);
void stream_window_title(struct rc_server *server, struct rc_window *window, bool app_id);
void stream_window_parent(struct rc_server *server, struct rc_window *window);
void stream_window_destroy(struct rc_server *server, struct rc_window *window);
void stream_goodbye(struct rc_server *server, enum wire_goodbye_reason reason, int status,
	const char *text);
void stream_flush(struct rc_server *server);
/* Queues one message for the viewer, if one is attached. */
void stream_send(struct rc_server *server, const struct wire_msg *msg);

void stream_window_scale(struct rc_server *server, struct rc_window *window);
void stream_window_request(struct rc_server *server, struct rc_window *window,
	enum wire_window_request request);
/* Sends the toplevel's size hints if they changed (or force). */
void stream_window_hints(struct rc_server *server, struct rc_window *window, bool force);

void stream_window_decoration(struct rc_server *server, struct rc_window *window);

/* decoration.c */
bool decoration_init(struct rc_server *server);
void decoration_finish(struct rc_server *server);
/* The viewer's compositor can (or cannot) draw decorations: tell every app. */
void decoration_set_viewer(struct rc_server *server, bool server_decorations);
void decoration_viewer_refused(struct rc_server *server, uint32_t window_id);

/* output.c */
bool output_init(struct rc_server *server);
void output_finish(struct rc_server *server);
/* Says every surface of the window is on the output of its scale. */
void output_window_enter(struct rc_window *window);
void output_set_window_scale(struct rc_window *window, int32_t scale);

/* clipboard.c */
/* Transfers read from apps only while the viewer's output is below this. */
#define CLIPBOARD_HIGH_WATER (1024 * 1024)
bool clipboard_init(struct rc_server *server);
void clipboard_finish(struct rc_server *server);
/* Selection and transfer messages from the viewer; false: it broke the
 * protocol (err says how). */
bool clipboard_handle_message(struct rc_server *server, const struct wire_msg *msg, char *err,
	size_t err_size);
/* Brings the transfers' fd watches up to date. */
void clipboard_sync(struct rc_server *server);
/* Tells a new viewer the apps' selections (their types only). */
void clipboard_offer_all(struct rc_server *server);
void clipboard_viewer_gone(struct rc_server *server);

/* cursor.c */
bool cursor_init(struct rc_server *server);
void cursor_finish(struct rc_server *server);
/* Tells the viewer the current cursor (after a change, or in a snapshot). */
void cursor_send(struct rc_server *server);

/* session.c */
int session_main_list(void);
/* Writes one goodbye on fd: why a connection ends before it is a viewer. */
void session_write_goodbye(int fd, enum wire_goodbye_reason reason, int status, const char *text);
int session_main_attach(const char *name);
bool session_prepare(struct rc_server *server, char **app);
bool session_daemonize(struct rc_server *server, int *ready);
void session_update(struct rc_server *server);
void session_finish(struct rc_server *server);
bool session_check_token(const struct rc_server *server, const char *token, size_t len);

/* input.c */
bool input_init(struct rc_server *server);
void input_finish(struct rc_server *server);
void input_handle_message(struct rc_server *server, const struct wire_msg *msg);
void input_viewer_gone(struct rc_server *server);
void input_window_gone(struct rc_server *server, struct rc_window *window);

void stream_print_stats(struct rc_server *server);

/* main.c */
void server_check_exit(struct rc_server *server);
uint32_t server_time_msec(void);
uint64_t server_time_usec(void);

#endif
