/*
 * Messages from the server, each kind to one handler, and the session's
 * life across links. State, not history: after a reattach the snapshot says
 * which windows still exist; nothing typed while the link was down is
 * replayed.
 */
#include <string.h>

#include "clipboard.h"
#include "constraint.h"
#include "desktop.h"
#include "connection.h"
#include "cursor.h"
#include "decode.h"
#include "dnd.h"
#include "dispatch.h"
#include "handover.h"
#include "hud.h"
#include "input.h"
#include "log.h"
#include "notify.h"
#include "status.h"
#include "sound.h"
#include "tablet.h"
#include "textinput.h"
#include "transport.h"
#include "window.h"

void dispatch_hello(struct rv_viewer *viewer)
{
	struct wire_msg hello = {
		.type = WIRE_HELLO,
		.hello =
			{
				.magic = WIRE_MAGIC,
				.major = WIRE_VERSION_MAJOR,
				.minor = WIRE_VERSION_MINOR,
				.caps = codec_local_caps() | sound_caps(viewer) |
					(viewer->decoration_manager ? WIRE_CAP_SERVER_DECORATIONS
								    : 0),
				.flags = (transport_wants_udp_offer(viewer) ? WIRE_HELLO_UDP_OFFER
									    : 0) |
					(viewer->options.share ? WIRE_HELLO_SHARE : 0) |
					(viewer->options.view_only ? WIRE_HELLO_VIEW_ONLY : 0),
				.token_len = (uint32_t)viewer->options.token_len,
				.token = viewer->options.token,
			},
	};
	connection_send(viewer, &hello);
}

/* Who else watches, and whether this viewer's input counts: logged when it
 * changes, shown on the HUD. */
static void session_viewers(struct rv_viewer *viewer, const struct wire_session_viewers *msg)
{
	struct rv_connection *conn = &viewer->connection;
	bool input = msg->flags & WIRE_VIEWERS_INPUT;
	bool watching = msg->flags & WIRE_VIEWERS_WATCHING;
	if (conn->viewers != msg->count || conn->has_input != input || conn->watching != watching) {
		log_info("%u viewer%s of session %s; this one %s", msg->count,
			msg->count == 1 ? "" : "s", conn->session_name,
			watching ? "watches only"
				 : (input ? "has input"
					  : "has input again when it types or clicks"));
	}
	conn->viewers = msg->count;
	conn->has_input = input;
	conn->watching = watching;
}

static void goodbye(struct rv_viewer *viewer, const struct wire_goodbye *msg)
{
	/* The server's words, safe for the terminal they are printed on. */
	char text[WIRE_MAX_TEXT * 4 + 1];
	log_escape(text, sizeof(text), msg->text, msg->text_len);
	viewer->running = false;
	switch (msg->reason) {
	case WIRE_BYE_APP_EXITED:
		if (msg->status == 126 || msg->status == 127) {
			/* The app could not be run: the server says why. */
			if (viewer->options.transport == RV_SSH) {
				log_error("on %s: %s",
					viewer->options.ssh_args[viewer->options.nssh - 1], text);
			} else {
				log_error("%s", text);
			}
		} else {
			log_info("session ended: %s", text);
		}
		viewer->exit_code = msg->status >= 0 && msg->status < 256 ? msg->status : 1;
		break;
	case WIRE_BYE_SHUTDOWN:
		log_info("session ended: %s", text);
		viewer->exit_code = 0;
		break;
	case WIRE_BYE_TAKEN_OVER:
		log_info("disconnected: %s", text);
		viewer->exit_code = 0;
		break;
	case WIRE_BYE_NO_SESSION:
		/* rcomp-run --attach on the remote host: its status is ours,
		 * and its words came through ssh's stderr, which is ours. */
		if (viewer->options.transport != RV_SSH) {
			log_error("%s", text);
		}
		viewer->exit_code = msg->status > 0 && msg->status < 256 ? msg->status : 1;
		break;
	case WIRE_BYE_UNAUTHORIZED:
		log_error("the session refused the token (%s): give the one in SESSION.token in "
			  "the remote session directory, with --token-file FILE or $RCOMP_TOKEN",
			text);
		viewer->exit_code = RC_EXIT_TOKEN;
		break;
	case WIRE_BYE_VERSION:
		log_error("the remote side speaks another protocol version: %s", text);
		viewer->exit_code = RC_EXIT_VERSION;
		break;
	default:
		log_error("the server refused this viewer: %s", text);
		viewer->exit_code = 1;
		break;
	}
}

static void welcome(struct rv_viewer *viewer, const struct wire_welcome *msg)
{
	struct rv_connection *conn = &viewer->connection;
	if (conn->welcomed) {
		connection_fail(viewer, "welcome sent twice");
		return;
	}
	char text[256];
	if (wire_version_refused(msg->major, "the remote rcomp-run", "rcomp-view", text,
		    sizeof(text))) {
		log_error("%s", text);
		viewer->running = false;
		viewer->exit_code = RC_EXIT_VERSION;
		return;
	}
	/* The snapshot says again which constraints hold, and who takes text. */
	constraint_reset(viewer);
	textinput_link_down(viewer);
	if (conn->ever_welcomed && msg->session_id != conn->session_id) {
		log_error("the session is gone: a different session answers now");
		viewer->running = false;
		viewer->exit_code = 1;
		return;
	}
	bool reattach = conn->ever_welcomed;
	conn->welcomed = conn->ever_welcomed = true;
	conn->session_id = msg->session_id;
	memcpy(conn->session_name, msg->name, msg->name_len);
	conn->session_name[msg->name_len] = '\0';
	conn->host_name[0] = '\0'; /* host_name follows from a server of minor 1 */
	conn->server_minor = msg->minor;
	conn->retry_ms = 0;
	if (conn->moving) {
		/* The same session on another link: it was said as it moved. */
		conn->moving = false;
		transport_drop_old(viewer);
		log_debug("on UDP: session %s (protocol %u.%u, %s)", conn->session_name, msg->major,
			msg->minor, codec_compression_name(msg->compression));
	} else {
		log_info("%s session %s (protocol %u.%u, %s)",
			reattach ? "reattached to" : "attached to", conn->session_name, msg->major,
			msg->minor, codec_compression_name(msg->compression));
	}
	/* The snapshot says which windows still exist. */
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		window->stale = true;
	}
	/* Now, and only to a server that answered, what it must know of us. */
	input_send_state(viewer);
	tablet_link_up(viewer);
	clipboard_link_up(viewer);
	sound_link_up(viewer, msg->caps);
	hud_link_up(viewer);
	handover_link_up(viewer);
}

static bool is_stale(struct rv_window *window, void *data)
{
	return window->stale;
}

static void sync_done(struct rv_viewer *viewer)
{
	window_destroy_if(viewer, is_stale, NULL);
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		window_set_disconnected(window, false);
	}
	log_debug("snapshot complete");
}

static void window_new(struct rv_viewer *viewer, const struct wire_window_new *msg)
{
	struct rv_window *window = window_from_id(viewer, msg->window);
	if (msg->window > viewer->max_window_id) {
		viewer->max_window_id = msg->window;
	}
	if (window && window->stale) {
		window_reattach(window, msg);
	} else if (window) {
		connection_fail(viewer, "window %u created twice", msg->window);
	} else {
		window_create(viewer, msg);
	}
}

static void popup_new(struct rv_viewer *viewer, const struct wire_popup_new *msg)
{
	if (msg->window > viewer->max_window_id) {
		viewer->max_window_id = msg->window;
	}
	if (window_from_id(viewer, msg->window)) {
		connection_fail(viewer, "window %u created twice", msg->window);
	} else {
		window_create_popup(viewer, msg);
	}
}

/* The window a message names; a server naming one it never announced
 * breaks the protocol. One announced and gone is no error: over UDP the
 * classes travel apart (lanes.h), and a frame may trail its window's
 * destroy. The server never gives an id twice. */
static struct rv_window *known_window(struct rv_viewer *viewer, const struct wire_msg *msg,
	uint32_t id)
{
	struct rv_window *window = window_from_id(viewer, id);
	if (!window && id != 0 && id <= viewer->max_window_id) {
		log_debug("%s for window %u, which is gone", wire_type_name(msg->type), id);
	} else if (!window) {
		connection_fail(viewer, "%s for unknown window %u", wire_type_name(msg->type), id);
	}
	return window;
}

/* Each message a server may send has its handler here, on_NAME: one for
 * every row of messages.h that the server or both sides send (route() is
 * generated from the rows, so a row without one does not build). */
static void on_welcome(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	welcome(viewer, &msg->welcome);
}

static void on_goodbye(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	goodbye(viewer, &msg->goodbye);
}

static void on_sync(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	sync_done(viewer);
}

static void on_window_new(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	window_new(viewer, &msg->window_new);
}

static void on_popup_new(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	popup_new(viewer, &msg->popup_new);
}

static void on_window_title(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_title.window))) {
		window_set_title(window, msg->window_title.text, msg->window_title.len);
	}
}

static void on_window_app_id(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_app_id.window))) {
		window_set_app_id(window, msg->window_app_id.text, msg->window_app_id.len);
	}
}

static void on_window_destroy(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_destroy.window))) {
		window_destroy(window);
	}
}

static void on_window_parent(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_parent.window))) {
		window_set_parent(window, msg->window_parent.parent);
	}
}

static void on_window_scale(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_scale.window))) {
		window->scale = msg->window_scale.scale;
	}
}

static void on_window_request(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_request.window))) {
		window_request(window, msg->window_request.request);
	}
}

static void on_dnd_status(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	dnd_status(viewer, &msg->dnd_status);
}

static void on_dnd_finish(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	dnd_finish(viewer);
}

static void on_drag_start(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	dnd_drag_start(viewer, &msg->drag_start, input_mark_serial(viewer, msg->drag_start.mark));
}

static void on_drag_no_files(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	handover_drag_no_files(viewer, msg->drag_no_files.serial);
}

static void on_drag_end(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	dnd_drag_end(viewer);
}

static void on_drag_icon(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	dnd_drag_icon(viewer, &msg->drag_icon);
}

static void on_text_input(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->text_input.window))) {
		textinput_state(window, &msg->text_input);
	}
}

static void on_window_grab(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_grab.window))) {
		window_grab(window, &msg->window_grab);
	}
}

static void on_video_stats(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->video_stats.window))) {
		hud_video_stats(window, &msg->video_stats);
	}
}

static void on_window_stats(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_stats.window))) {
		hud_window_stats(window, &msg->window_stats);
	}
}

static void on_udp_offer(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	transport_udp_offer(viewer, &msg->udp_offer);
}

static void on_session_viewers(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	session_viewers(viewer, &msg->session_viewers);
}

static void on_host_name(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	memcpy(viewer->connection.host_name, msg->host_name.text, msg->host_name.len);
	viewer->connection.host_name[msg->host_name.len] = '\0';
	window_show_titles(viewer);
}

static void on_watch_token(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	/* The page hands out links with it; rcomp-view has none to give. */
}

static void on_notify(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	notify_show(viewer, &msg->notify);
}

static void on_notify_close(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	notify_close(viewer, &msg->notify_close);
}

static void on_window_hints(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_hints.window))) {
		window_set_hints(window, &msg->window_hints);
	}
}

static void on_window_decoration(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_decoration.window))) {
		window_set_decoration(window, msg->window_decoration.mode);
	}
}

static void on_frame(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->frame.window))) {
		decode_frame(window, &msg->frame);
	}
}

static void on_copy_rect(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->copy_rect.window))) {
		decode_copy(window, &msg->copy_rect);
	}
}

static void on_shortcuts_inhibit(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->shortcuts_inhibit.window))) {
		constraint_inhibit(window, &msg->shortcuts_inhibit);
	}
}

static void on_window_idle_inhibit(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_idle_inhibit.window))) {
		desktop_idle_inhibit(window, &msg->window_idle_inhibit);
	}
}

static void on_window_activate(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_activate.window))) {
		desktop_activate(window);
	}
}

static void on_window_feedback(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->window_feedback.window))) {
		window->feedback_wanted = msg->window_feedback.on;
	}
}

static void on_pointer_constraint(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->pointer_constraint.window))) {
		constraint_set(window, &msg->pointer_constraint);
	}
}

static void on_audio(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	sound_message(viewer, msg);
}

static void on_audio_end(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	sound_message(viewer, msg);
}

static void on_frame_mark(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	if ((window = known_window(viewer, msg, msg->frame_mark.window))) {
		window->mark_next = msg->frame_mark.mark;
	}
}

static void on_cursor(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	cursor_set(viewer, &msg->cursor);
}

static void on_selection(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	clipboard_selection(viewer, &msg->selection);
}

static void on_transfer_request(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	clipboard_request(viewer, &msg->transfer_request);
}

static void on_file_group(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	handover_handle(viewer, msg);
}

static void on_file_offer(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	handover_handle(viewer, msg);
}

static void on_file_data(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	handover_handle(viewer, msg);
}

static void on_file_ack(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	handover_handle(viewer, msg);
}

static void on_file_done(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	handover_handle(viewer, msg);
}

static void on_transfer_data(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	clipboard_transfer(viewer, msg);
}

static void on_transfer_ack(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	clipboard_transfer(viewer, msg);
}

static void on_link_ack(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	/* The channel takes link_acks as it reads (channel.c): none reaches
	 * here. */
}

static void route(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	switch (msg->type) {
#define FROM_SERVER(NAME, name) \
	case WIRE_##NAME: \
		on_##name(viewer, msg); \
		return;
#define FROM_BOTH FROM_SERVER
#define FROM_VIEWER(NAME, name)
#define X(NAME, name, code, sender, fixed, carrier, check) FROM_##sender(NAME, name)
		WIRE_MESSAGES(X)
#undef X
#undef FROM_VIEWER
#undef FROM_BOTH
#undef FROM_SERVER
	default:
		/* The decoder lets through only what a server may send. */
		break;
	}
}

bool dispatch_message(void *data, const struct wire_msg *msg)
{
	struct rv_viewer *viewer = data;
	if (!viewer->connection.welcomed && msg->type != WIRE_WELCOME &&
		msg->type != WIRE_GOODBYE) {
		connection_fail(viewer, "%s before welcome", wire_type_name(msg->type));
	} else {
		route(viewer, msg);
	}
	return viewer->running && viewer->connection.connected;
}

static bool is_popup(struct rv_window *window, void *data)
{
	return window->parent != NULL;
}

/* The link is closed: what lived on it ends. Popups are fleeting: they go
 * now, and come back with the snapshot if the app still shows them. */
static void link_down(struct rv_viewer *viewer)
{
	transport_close(viewer);
	clipboard_link_down(viewer);
	handover_link_down(viewer);
	sound_link_down(viewer);
	window_destroy_if(viewer, is_popup, NULL);
}

void dispatch_move_to_udp(struct rv_viewer *viewer)
{
	struct rv_connection *conn = &viewer->connection;
	struct quic_endpoint *ep = conn->probe;
	int fd = conn->probe_fd;
	conn->probe = NULL;
	/* Make before break: the ssh link stays open, unread, until the
	 * session welcomes us on UDP, where it drops that link itself as we
	 * come over (so nobody counts us twice, or not at all); then ssh and
	 * its bridge end, and the session, persistent, stays. */
	transport_keep_old(viewer);
	link_down(viewer);
	viewer->options.transport = RV_UDP;
	viewer->options.target = conn->udp_target;
	memcpy(viewer->options.token, conn->udp_key, conn->udp_key_len);
	viewer->options.token_len = conn->udp_key_len;
	conn->quic = ep;
	conn->ssh_introduced = true;
	conn->moving = true;
	connection_open(viewer, fd, fd);
	log_info("the session moves to UDP at %s (QUIC); ssh is done", conn->udp_target);
	dispatch_hello(viewer);
}

void dispatch_link_lost(struct rv_viewer *viewer, const char *why)
{
	struct rv_connection *conn = &viewer->connection;
	bool was_welcomed = conn->welcomed;
	conn->moving = false;
	transport_drop_old(viewer);
	link_down(viewer);
	if (conn->quic_failure[0]) {
		why = conn->quic_failure; /* what QUIC knows of it */
	}
	if (!transport_can_retry(viewer)) {
		viewer->running = false;
		viewer->exit_code = transport_explain_failure(viewer, why);
		return;
	}
	if (was_welcomed || !conn->retry_ms) {
		log_warning("the connection to the server was lost (%s); windows stay until it "
			    "returns",
			why);
	}
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		window_set_disconnected(window, true);
	}
	transport_schedule_retry(viewer);
}
