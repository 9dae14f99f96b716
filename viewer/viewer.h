/*
 * rcomp-view: the local side. One struct rv_viewer per process; one rv_window
 * per remote toplevel, shown as a local xdg_toplevel.
 */
#ifndef RCOMP_VIEWER_H
#define RCOMP_VIEWER_H

#include <pixman.h>
#include <stdbool.h>
#include <stdint.h>
#include <wayland-client.h>

#include "buffer.h"
#include "codec.h"
#include "transfer.h"
#include "wire.h"

struct pollfd;
struct rv_offer;

/* The remote selection of one kind, until it can be set locally. */
struct rv_remote {
	bool pending;
	struct wire_mime_list types;
};

/* Clipboard and primary selection (clipboard.c). */
struct rv_clipboard {
	struct wl_data_device_manager *manager;
	struct zwp_primary_selection_device_manager_v1 *primary_manager;
	struct wl_data_device *device;
	struct zwp_primary_selection_device_v1 *primary_device;
	struct rv_offer *selection[2]; /* the local selections, by kind */
	struct wl_data_source *source; /* ours: the remote clipboard */
	struct zwp_primary_selection_source_v1 *primary_source;
	struct rv_remote remote[2];
	bool expect_own[2]; /* we just set that selection: its offer is ours */
	struct transfers transfers;
};

#define RV_BUFFERS 3
#define RV_MAX_WINDOWS 256
/* All window images together; a server asking for more is refused. */
#define RV_MAX_IMAGE_BYTES ((uint64_t)1 << 30)

struct rv_viewer;

/* A local output, for the refresh and scale of the windows on it. */
struct rv_output {
	struct rv_viewer *viewer;
	struct wl_list link; // rv_viewer::outputs
	struct wl_output *output;
	uint32_t name;
	uint32_t refresh_mhz, pending_refresh_mhz;
	int32_t scale, pending_scale;
};

#define RV_MAX_WINDOW_OUTPUTS 8

/* A wl_shm buffer of the pool, with the damage it has missed. */
struct rv_buffer {
	struct wl_buffer *buffer;
	uint32_t *data;
	size_t size;
	int32_t width, height;
	bool busy; /* held by the compositor */
	pixman_region32_t damage; /* image areas newer than this buffer */
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
	struct wl_callback *frame_callback;
	bool configured;
	uint32_t ack_serial; /* of the newest configure */
	bool ack_pending; /* not acknowledged: the image does not fit it yet */
	bool has_content; /* a buffer is attached */

	/* The remote window's pixels as last received. */
	uint32_t *image;
	int32_t width, height; /* image pixels: the window's size times image_scale */
	int32_t scale; /* of frames from now on (window_scale) */
	int32_t image_scale; /* of the image: the scale its last frame came at */
	int32_t surface_scale; /* the buffer_scale last committed */
	pixman_region32_t pending_damage; /* changed since the last commit */
	bool dirty;
	uint32_t received_seq;
	struct video_decoder *decoder; /* while the server streams video */
	/* For --stats, per second. */
	uint32_t stat_received, stat_presented;
	uint64_t stat_bytes;
	struct rv_buffer buffers[RV_BUFFERS];

	/* The local outputs the window is on, first entered first. */
	struct rv_output *outputs[RV_MAX_WINDOW_OUTPUTS];
	int noutputs;
	uint32_t reported_refresh_mhz;
	int32_t reported_scale;

	/* Local configure: the size and states the local compositor wants. */
	int32_t configure_width, configure_height;
	uint32_t configure_states;
	int32_t requested_width, requested_height;
	uint32_t requested_states;

	char *title; /* as the server last sent it */
	bool disconnected; /* the link is down: shown dimmed, title marked */
	bool stale; /* reattaching: closed at sync unless the snapshot has it */
};

/* How rcomp-view reaches rcomp-run, and so how it reconnects. */
enum rv_transport {
	RV_SOCKET, /* a unix socket; reconnects to it */
	RV_TCP, /* reconnects */
	RV_SSH, /* reconnects with ssh HOST rcomp-run --attach SESSION */
	RV_STDIO, /* stdin/stdout: no reconnection */
	RV_LOCAL, /* rcomp-run --stdio started here: ends with it */
};

struct rv_viewer {
	struct wl_display *display;
	struct wl_registry *registry;
	struct wl_compositor *compositor;
	struct wl_shm *shm;
	struct xdg_wm_base *wm_base;
	struct zxdg_decoration_manager_v1 *decoration_manager; /* NULL: none here */
	bool app_decorations; /* --app-decorations: never use decoration_manager */
	struct wl_seat *seat;
	uint32_t seat_version;
	struct wl_pointer *pointer;
	struct wl_keyboard *keyboard;
	struct wl_touch *touch;

	uint32_t input_serial; /* of the last button or key press, for popup grabs */
	uint32_t pointer_serial; /* of the last pointer enter, for set_cursor */
	uint32_t keyboard_serial; /* of the last keyboard enter or key, for selections */
	struct rv_clipboard clipboard;
	struct rv_window *pointer_focus;
	/* The remote app's cursor, shown over our windows once it set one. */
	struct wl_surface *cursor_surface;
	struct wl_buffer *cursor_buffer, *cursor_old_buffer; /* old: not released yet */
	bool cursor_set, cursor_hidden;
	int32_t cursor_hotspot_x, cursor_hotspot_y;
	struct rv_window *keyboard_focus;
	int32_t axis_discrete[2];
	uint32_t axis_source;

	/* The link to rcomp-run. */
	enum rv_transport transport;
	const char *target; /* socket path or HOST:PORT */
	char **ssh_args;
	int nssh;
	char **app; /* NULL with --attach */
	const char *attach_name; /* NULL: let rcomp-run choose */
	const char *compress, *fps, *remote_bin;
	int verbose;
	char token[WIRE_MAX_TOKEN + 1];
	size_t token_len;
	bool connected; /* in_fd/out_fd are open */
	bool connecting; /* a TCP connect is under way */
	bool ever_welcomed;
	uint64_t retry_at_us; /* 0: no retry pending */
	int retry_ms;
	uint64_t session_id;
	char session_name[WIRE_MAX_SESSION_NAME + 1];
	bool resyncing; /* between welcome and sync of a reattach */

	/* Local keyboard state, sent again on each (re)connection. */
	char *keymap;
	uint32_t keymap_size;
	int32_t repeat_rate, repeat_delay;
	bool have_repeat;
	uint32_t modifiers[4];

	int in_fd, out_fd;
	struct buffer in, out;
	bool welcomed;
	bool write_failed; /* the server stopped reading; read its last words */
	struct decompressor decompressor;
	uint8_t *raw;
	size_t raw_size;
	uint64_t image_bytes;

	struct wl_list windows; // rv_window::link
	struct wl_list outputs; // rv_output::link
	bool running;
	int exit_code;
	pid_t child; /* rcomp-run started by --local */
	bool stats;
	uint64_t stats_due_us;
};

/* main.c */
uint64_t viewer_time_usec(void);
void viewer_send(struct rv_viewer *viewer, const struct wire_msg *msg);
void viewer_fail(struct rv_viewer *viewer, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* window.c */
struct rv_window *window_create(struct rv_viewer *viewer, const struct wire_msg *msg);
struct rv_window *window_create_popup(struct rv_viewer *viewer, const struct wire_msg *msg);
void window_set_parent(struct rv_window *window, uint32_t parent_id);
void window_set_scale(struct rv_window *window, int32_t scale);
/* A w x h ARGB8888 wl_shm buffer; *data maps it (size w*h*4). NULL, logged,
 * on failure. */
struct wl_buffer *viewer_shm_buffer(struct rv_viewer *viewer, int32_t width, int32_t height,
	void **data);
void window_request(struct rv_window *window, uint32_t request);
void window_set_hints(struct rv_window *window, const struct wire_msg *msg);
void window_set_decoration(struct rv_window *window, uint32_t mode);
void window_destroy(struct rv_window *window);
struct rv_window *window_from_id(struct rv_viewer *viewer, uint32_t id);
void window_set_text(struct rv_window *window, const struct wire_msg *msg);
void window_reattach(struct rv_window *window, const struct wire_msg *msg);
void window_set_disconnected(struct rv_window *window, bool disconnected);
bool window_apply_frame(struct rv_window *window, const struct wire_msg *msg);
void window_present(struct rv_window *window);
void window_report_output(struct rv_window *window);
void window_output_gone(struct rv_window *window, struct rv_output *output);
void output_add(struct rv_viewer *viewer, uint32_t name, uint32_t version);
void output_remove(struct rv_viewer *viewer, uint32_t name);
void output_destroy(struct rv_output *output);
extern const struct xdg_wm_base_listener wm_base_listener;

/* input.c */
void input_seat_init(struct rv_viewer *viewer, struct wl_seat *seat, uint32_t version);
void input_finish(struct rv_viewer *viewer);
void input_window_gone(struct rv_viewer *viewer, struct rv_window *window);
void input_send_state(struct rv_viewer *viewer);
void input_set_cursor(struct rv_viewer *viewer, const struct wire_msg *msg);

/* clipboard.c */
void clipboard_init(struct rv_viewer *viewer);
void clipboard_finish(struct rv_viewer *viewer);
/* Gets the seat's data devices, once the seat and managers are bound. */
void clipboard_seat(struct rv_viewer *viewer);
/* A new input serial: a remote selection waiting for one can be set. */
void clipboard_input_serial(struct rv_viewer *viewer);
void clipboard_handle_message(struct rv_viewer *viewer, const struct wire_msg *msg);
void clipboard_link_up(struct rv_viewer *viewer);
void clipboard_link_down(struct rv_viewer *viewer);
/* Fills TRANSFER_MAX pollfds, one per transfer slot. */
void clipboard_poll_fds(struct rv_viewer *viewer, struct pollfd *fds, bool may_send);
void clipboard_handle_poll(struct rv_viewer *viewer, const struct pollfd *fds);

#endif
