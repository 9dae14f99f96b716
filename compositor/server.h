/*
 * rcomp-run's data model: one struct rc_server per process, the viewers, the
 * windows and each viewer's view of a window. Types only, and the few
 * inline accessors every room needs. A room's own state (the doors, the
 * handshake, input, the cursor, the clipboard, drag and drop, the app, the
 * session's record) is declared in that room's header, beside its
 * functions; the server holds it by value. This header includes only
 * headers that know nothing of the server.
 */
#ifndef RCOMP_SERVER_H
#define RCOMP_SERVER_H

#include <pixman.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <wayland-server-core.h>
#include <wlr/types/wlr_surface.h>
#include <wlr/util/box.h>

#include "app-state.h"
#include "capture.h"
#include "clipboard-state.h"
#include "clock.h"
#include "connection.h"
#include "cursor-state.h"
#include "dnd-state.h"
#include "door-state.h"
#include "encode.h"
#include "files.h"
#include "idmap.h"
#include "input-state.h"
#include "log.h"
#include "record-state.h"
#include "session.h"
#include "shell.h"
#include "wire.h"

struct rc_server;
struct xkb_keymap;
struct rc_window;
struct wlr_keyboard_shortcuts_inhibit_manager_v1;
struct wlr_pointer_constraints_v1;
struct wlr_relative_pointer_manager_v1;
struct wlr_surface;

/* The most viewers a session has at once. */
#define RC_MAX_VIEWERS 16
/* rcomp-run --send at once (handover.c). */
#define RC_SENDERS 4
struct rc_sender;

/*
 * One viewer of the session (viewers.c): its connection, and what it may
 * do. Every viewer sees every window; one at a time has input.
 */
struct rc_viewer {
	struct rc_server *server;
	struct rc_connection *conn;
	struct wl_list link; // rc_server::viewers, oldest first
	int slot; /* its index in each window's views */
	uint32_t number; /* 1 for the session's first viewer, and on: for log lines */
	bool view_only; /* admitted to watch: no input of any kind */
	bool audio; /* wants the apps' sound */
	bool server_decorations; /* its compositor draws decorations */
	/* What it last said of its keyboard and pointer while another had
	 * input: applied when it takes input. */
	struct xkb_keymap *keymap;
	bool repeat_known, modifiers_known;
	struct wire_repeat_info repeat;
	struct wire_modifiers modifiers;
	uint32_t refused; /* input refused (view only), for the log */
	/* Its key for coming over to UDP as itself (door/offer.c): told
	 * it in its udp_offer. */
	char move_key[WIRE_MAX_TOKEN + 1];
	size_t move_key_len;
	bool offer_due; /* asked for a UDP offer, which waits for the app to settle */
	/* Its clock less rcomp-run's (feedback.c): the largest sample of this
	 * span of 5 s and the last, each a frame_ack's time less its arrival,
	 * and half the link's least round trip. */
	bool offset_known;
	int64_t offset_span[2];
	uint64_t offset_span_us; /* when this span began */
	int64_t offset_said; /* the offset last logged */
};

/*
 * A window as one viewer gets it (frame.c): the damage captured since its
 * last frame, its own encoder (the copy it holds, its codec and rate), and
 * whether it was told of the window.
 */
/* A viewer's output under a window, as its desktop's xdg-output tells it
 * (output_place), text cleaned. */
struct rc_place {
	int32_t x, y, width, height, scale;
	char name[WIRE_MAX_OUTPUT_NAME + 1];
	char description[WIRE_MAX_OUTPUT_DESCRIPTION + 1];
};

struct rc_view {
	struct rc_window *window;
	struct rc_viewer *viewer;
	bool announced; /* window_new or popup_new went to this viewer */
	pixman_region32_t damage; /* image pixels */
	uint64_t drawn_us; /* when the app drew the oldest damage in it; 0: none */
	uint32_t input_mark; /* the input its next frame answers; 0: none */
	/* Its viewer's output under the window (output_info), which the
	 * window follows while that viewer has input. */
	bool output_known;
	uint32_t refresh_mhz;
	int32_t scale;
	bool place_known; /* and its name and place (output_place) */
	struct rc_place place;
	/* Encoding once: the view whose frames this one's viewer gets too
	 * (NULL: it encodes its own); for a follower, whether it gets the
	 * lead's frame being encoded, and the input_mark that frame answers
	 * for its viewer. */
	struct rc_view *lead;
	uint64_t left_us; /* when it last left a lead */
	uint64_t restarted_us; /* a lead's: when its stream last started anew for another */
	bool in_job;
	uint32_t job_mark;
	/* Raw bytes its viewer's frames hold for the frame being encoded for
	 * it (connection_reserve); 0: none. */
	uint64_t reserved;
	struct rc_encoder encoder;
};

/* An app's commit sampled for a frame (feedback.c): it waits for the next
 * frame to the viewer that presents the window, then for that viewer's
 * word on when the frame was shown. */
#define RC_FEEDBACKS 32
struct wlr_presentation_feedback;
struct rc_feedback {
	struct wlr_presentation_feedback *feedback;
	bool sent; /* in frame seq, to viewer number */
	uint32_t seq, viewer;
};

/* One remote toplevel or popup, streamed as one local window. */
struct rc_window {
	struct rc_server *server;
	const struct rc_window_impl *impl;
	struct wl_list link; // rc_server::windows
	uint32_t id;
	bool mapped;
	bool popup; /* shown as a local popup of parent_id */
	uint32_t parent_id; /* a popup's parent window, at map */
	/* The scale of its surfaces' output, and of its image: image pixels are
	 * window coordinates times this. */
	int32_t scale;
	uint32_t refresh_mhz; /* of the viewer's output it is on; 0: unknown */
	struct rc_output *place_output; /* output.c: its viewer output's; NULL: its scale's */

	/* The frame path: damage not yet captured (image pixels), the clock
	 * that drives it, the captured image, and each viewer's view of it
	 * (by viewer slot; NULL: none yet). */
	pixman_region32_t damage;
	struct rc_clock clock;
	struct rc_capture capture;
	struct rc_view *views[RC_MAX_VIEWERS];
	uint32_t frame_seq; /* the last frame's number, to any viewer */
	struct rc_feedback feedback[RC_FEEDBACKS]; /* oldest first */
	int nfeedback;
	bool feedback_wanted; /* the viewers were told its app asks for feedback */
	uint64_t feedback_sampled_us; /* when a capture last found some */
	uint64_t share_checked_us; /* when views were last compared, to share */

	/* What the viewers have been told (announce.c). */
	bool ever_announced;
	int32_t hints[4]; /* the size hints last sent */
	bool server_side; /* decorated by the viewer's compositor (decoration.c) */
	bool idle_inhibited; /* the app keeps the screen awake (desktop.c) */

	/* Commits (damage.c): a rate to name an app that floods, and stats. */
	uint32_t rate_commits;
	uint64_t rate_start_us;
	bool flood_logged;
	/* The input viewer's newest input_mark for the window (0: none), and
	 * whether the app has committed since: then the next frame answers it. */
	uint32_t input_mark;
	bool input_mark_armed;
	uint32_t stat_commits;
	uint64_t drawn_us; /* first commit since the last frame; 0: none */
	/* Commits that damaged it, and that count at the last tick: a tick
	 * that finds them equal has no new picture (frame.c). */
	uint32_t pictures, pictures_ticked;
	/* A tick found an encoder busy: the next frames go as soon as all are
	 * done, not a whole tick later. */
	bool frame_waits;
};

static inline struct wlr_surface *window_surface(struct rc_window *window)
{
	return window->impl->surface(window);
}

/* The surface of window's own tree (its popups are windows of their own)
 * under window coordinates wx, wy, and the point in its coordinates; NULL
 * if none is there. */
static inline struct wlr_surface *window_surface_under(struct rc_window *window, double wx,
	double wy, double *sx, double *sy)
{
	const struct wlr_box *geo = &window->capture.geometry;
	return wlr_surface_surface_at(window_surface(window), wx + geo->x, wy + geo->y, sx, sy);
}

/* What rcomp-run was asked to do (main.c parses it). */
/* --audio: which sound server the session runs, if any. */
enum rc_audio {
	RC_AUDIO_OFF,
	RC_AUDIO_ON, /* PulseAudio where it is installed, else PipeWire */
	RC_AUDIO_PULSEAUDIO,
	RC_AUDIO_PIPEWIRE,
};

struct rc_options {
	int fps;
	bool fps_explicit; /* --fps given: it overrides the viewer's refresh */
	enum rc_codec_mode codec_mode;
	bool sharpness_first; /* --motion sharpness: never video smaller than the window */
	enum wire_compression compression;
	int compression_level;
	const char *socket_path; /* --socket */
	bool stdio;
	bool persist;
	bool offer_udp; /* --offer-udp: UDP on a port of the system's, a fresh key */
	const char *dump_dir;
	bool stats;
	bool xwayland;
	const char *name; /* --name */
	const char *tcp_addr; /* --listen-tcp */
	const char *udp_addr; /* --listen-udp */
	const char *web_addr; /* --listen-web */
	const char *web_cert, *web_key; /* --web-cert, --web-key: TLS for it */
	const char *token_file;
	bool watch_token; /* --watch-token: a second token, for watching only */
	int stall_timeout; /* --stall-timeout: seconds a viewer's link may take nothing */
	int grace_ms; /* --grace: from SIGTERM to SIGKILL of what the session started */
	uint64_t log_max; /* --log-max: the most a session's log file may hold, bytes */
	enum rc_audio audio; /* --audio: a sound server for the session */
	uint32_t files; /* enum files_take: the viewers' files taken, refused or asked */
	bool notifications_off; /* --notifications off: the apps' are not shown */
	bool printing_off; /* --printing off: no printer for the session */
	uint32_t send_to; /* --send --to VIEWER; 0: every viewer */
	uint64_t file_size_limit; /* --file-size-limit: bytes of one file taken; 0: none */
	int verbose;
};

/* The session's D-Bus session bus (bus.c). */
struct rc_bus {
	pid_t pid; /* 0: none; the leader of its own process group */
	char socket[SESSION_PATH_MAX];
	char dir[SESSION_PATH_MAX]; /* a private one, where the session is not recorded */
	char address[SESSION_PATH_MAX + 16]; /* unix:path=SOCKET */
};

/* The session's printer (print.c). */
struct rc_print {
	pid_t pid; /* cupsd; 0: none; the leader of its own process group */
	char dir[SESSION_PATH_MAX]; /* its settings, spool and socket */
	char socket[SESSION_PATH_MAX + 16]; /* CUPS_SERVER */
};

/* Notifications on the session's bus (notify.c). */
struct DBusConnection;
#define RC_NOTES 32 /* open notifications kept for viewers yet to come */

/* A notification still open: what a viewer that attaches later is shown. */
struct rc_note {
	uint32_t id;
	uint32_t question; /* rcomp-run's own about a group of files: its id + 1 */
	struct rc_viewer *asked; /* the one viewer a question went to */
	uint32_t urgency;
	int32_t timeout_ms; /* -1: the daemon's; 0: never */
	uint64_t shown_us; /* when the app sent it */
	char *strings; /* app, summary, body, icon and actions, one allocation */
	uint16_t app_len, summary_len, body_len, icon_len;
	uint32_t actions_len;
};

struct rc_notify {
	struct DBusConnection *bus; /* NULL: none */
	struct wl_event_source *dispatch_idle;
	uint32_t last_id;
	struct rc_note notes[RC_NOTES]; /* the open ones, oldest first */
	int count;
	/* Where the answers to rcomp-run's own questions go (notify_question). */
	void (*answer)(struct rc_server *server, uint32_t group, bool yes, uint32_t by);
};

struct rc_output; /* output.c: one per scale in use, and per viewer output named */
struct wlr_output_layout;
struct wlr_server_decoration_manager;
struct rc_tablet;
#define RC_MAX_NAMED_OUTPUTS 8
struct rc_sound; /* sound.c */

struct rc_server {
	struct rc_options options;
	struct wl_display *display;
	struct wl_event_loop *loop;
	struct wlr_backend *backend;
	struct wlr_renderer *renderer;
	struct wlr_compositor *compositor;
	struct wlr_seat *seat;
	struct wlr_relative_pointer_manager_v1 *relative_pointer;
	struct wlr_presentation *presentation;
	const char *socket_name; /* WAYLAND_DISPLAY for the app */
	const char *x11_display; /* DISPLAY for the app; NULL: no X11 */

	struct wl_list windows; // rc_window::link
	struct idmap window_ids;
	uint32_t next_window_id;

	/* The viewers (viewers.c), the one with input, and what their frames
	 * share. */
	struct wl_list viewers; // rc_viewer::link
	int nviewers;
	uint32_t viewers_ever;
	bool welcomed_ever; /* some viewer has been welcomed */
	bool replacing; /* a viewer's old link goes as it comes on another */
	struct rc_viewer *input_viewer; /* NULL: none with input */
	struct rc_encode_context encode;
	bool server_decorations; /* the input viewer's compositor draws decorations */

	struct rc_record record;
	struct rc_app app;
	struct rc_doors doors;
	struct rc_handshake handshake;
	struct rc_input input;
	struct rc_tablet *tablet; /* tablet.c */
	struct rc_cursor cursor;
	struct rc_clipboard clipboard;
	struct rc_dnd dnd;
	struct rc_drag_out drag_out;
	struct wl_listener request_start_drag;
	struct rc_sound *sound; /* NULL: the session is silent */
	struct rc_output *outputs[WIRE_MAX_SCALE + 1]; /* by scale, made on demand */
	struct rc_output *named_outputs[RC_MAX_NAMED_OUTPUTS]; /* the viewers' (output_place) */
	struct wlr_output_layout *output_layout; /* where xdg-output says they are */
	struct wl_list decorations; // rc_decoration::link
	struct wl_listener new_decoration;
	struct wlr_server_decoration_manager *kde_decorations; /* decoration.c */
	struct wl_listener new_kde_decoration;
	struct wl_listener new_surface; /* damage.c */
	struct wlr_pointer_constraints_v1 *constraints; /* constraint.c */
	struct wl_listener new_constraint;
	struct wlr_keyboard_shortcuts_inhibit_manager_v1 *inhibit;
	struct wl_listener new_inhibitor;
	struct wlr_idle_inhibit_manager_v1 *idle; /* desktop.c */
	struct wl_listener new_idle_inhibitor;
	struct wl_listener request_activate;
	struct wl_list keyboard_grabs; // rc_grab::link (constraint.c), Xwayland's
	struct wl_list text_inputs; // rc_text_input::link (textinput.c)
	struct wl_listener new_text_input;
	struct wl_listener text_input_focus; /* the seat's keyboard focus moved */
	struct wl_listener new_xdg_surface; /* xdg.c */
	struct wlr_xwayland *xwayland;
	struct wl_listener new_x11_surface; /* xwayland.c */
	uint32_t x11_focus; /* the X11 window last activated: menus' parent */
	struct wl_event_source *stats_timer;
	bool stats_armed; /* the timer is set: somebody wants the numbers */
	struct rc_bus bus;
	struct rc_notify notify;
	struct rc_print print;
	struct files files; /* handover.c: files to and from the viewers */
	/* An app's drag's text/uri-list, read for a viewer's drag_files. */
	struct {
		int fd; /* -1: none under way */
		struct wl_event_source *source, *timer;
		char *text;
		size_t len;
		uint32_t viewer, serial; /* the viewer's number, and its serial */
	} drag_list;
	struct wl_event_source *files_timer, *files_idle;
	struct rc_sender *senders[RC_SENDERS]; /* rcomp-run --send, waiting */
	uint32_t files_sent[RC_MAX_VIEWERS]; /* the groups handover_send made last */
	struct wl_event_source *thumb_timer; /* thumb.c */
	bool thumb_due; /* the session's picture is written when it fires */

	bool running;
	int exit_code;
};

static inline struct rc_window *window_from_id(struct rc_server *server, uint32_t id)
{
	return idmap_get(&server->window_ids, id);
}

/* The window a surface belongs to: its root's toplevel, popup or X11 window. */
static inline struct rc_window *window_of_surface(struct rc_server *server,
	struct wlr_surface *surface)
{
	struct wlr_surface *root = surface ? wlr_surface_get_root_surface(surface) : NULL;
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		if (root && window_surface(window) == root) {
			return window;
		}
	}
	return NULL;
}

/* Some viewer is attached and welcomed: windows are shown to it. */
static inline bool server_watched(const struct rc_server *server)
{
	const struct rc_viewer *viewer;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		if (viewer->conn->welcomed) {
			return true;
		}
	}
	return false;
}

/* The connection of the viewer with input, once welcomed; else NULL.
 * Clipboard, drag and drop, text input and pointer constraints talk to it
 * alone. */
static inline struct rc_connection *input_connection(const struct rc_server *server)
{
	const struct rc_viewer *viewer = server->input_viewer;
	return viewer && viewer->conn->welcomed ? viewer->conn : NULL;
}

/* The view of window for viewer, if it was told of the window. */
static inline struct rc_view *window_view(const struct rc_window *window,
	const struct rc_viewer *viewer)
{
	struct rc_view *view = viewer ? window->views[viewer->slot] : NULL;
	return view && view->announced ? view : NULL;
}

/* Every view of the window that its viewer was told of and is welcomed. */
#define window_for_each_view(view, window, i) \
	for (int i = 0; i < RC_MAX_VIEWERS; i++) \
		if (((view) = (window)->views[i]) && (view)->announced && \
			(view)->viewer->conn->welcomed)

/* The viewer with input was told of window. */
static inline bool window_shown_to_input(const struct rc_window *window)
{
	return input_connection(window->server) &&
		window_view(window, window->server->input_viewer);
}

#endif
