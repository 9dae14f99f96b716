/*
 * Messages from the server, each kind to one handler, and the session's
 * life across links. State, not history: after a reattach the snapshot says
 * which windows still exist; nothing typed while the link was down is
 * replayed.
 */
#include <string.h>

#include "clipboard.h"
#include "constraint.h"
#include "connection.h"
#include "cursor.h"
#include "decode.h"
#include "dnd.h"
#include "dispatch.h"
#include "hud.h"
#include "input.h"
#include "log.h"
#include "status.h"
#include "sound.h"
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
	clipboard_link_up(viewer);
	sound_link_up(viewer, msg->caps);
	hud_link_up(viewer);
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

static void route(struct rv_viewer *viewer, const struct wire_msg *msg)
{
	struct rv_window *window;
	switch (msg->type) {
	case WIRE_WELCOME:
		welcome(viewer, &msg->welcome);
		break;
	case WIRE_GOODBYE:
		goodbye(viewer, &msg->goodbye);
		break;
	case WIRE_SYNC:
		sync_done(viewer);
		break;
	case WIRE_WINDOW_NEW:
		window_new(viewer, &msg->window_new);
		break;
	case WIRE_POPUP_NEW:
		popup_new(viewer, &msg->popup_new);
		break;
	case WIRE_WINDOW_TITLE:
		if ((window = known_window(viewer, msg, msg->window_title.window))) {
			window_set_title(window, msg->window_title.text, msg->window_title.len);
		}
		break;
	case WIRE_WINDOW_APP_ID:
		if ((window = known_window(viewer, msg, msg->window_app_id.window))) {
			window_set_app_id(window, msg->window_app_id.text, msg->window_app_id.len);
		}
		break;
	case WIRE_WINDOW_DESTROY:
		if ((window = known_window(viewer, msg, msg->window_destroy.window))) {
			window_destroy(window);
		}
		break;
	case WIRE_WINDOW_PARENT:
		if ((window = known_window(viewer, msg, msg->window_parent.window))) {
			window_set_parent(window, msg->window_parent.parent);
		}
		break;
	case WIRE_WINDOW_SCALE:
		if ((window = known_window(viewer, msg, msg->window_scale.window))) {
			window->scale = msg->window_scale.scale;
		}
		break;
	case WIRE_WINDOW_REQUEST:
		if ((window = known_window(viewer, msg, msg->window_request.window))) {
			window_request(window, msg->window_request.request);
		}
		break;
	case WIRE_DND_STATUS:
		dnd_status(viewer, &msg->dnd_status);
		break;
	case WIRE_DND_FINISH:
		dnd_finish(viewer);
		break;
	case WIRE_DRAG_START:
		dnd_drag_start(viewer, &msg->drag_start,
			input_mark_serial(viewer, msg->drag_start.mark));
		break;
	case WIRE_DRAG_END:
		dnd_drag_end(viewer);
		break;
	case WIRE_DRAG_ICON:
		dnd_drag_icon(viewer, &msg->drag_icon);
		break;
	case WIRE_TEXT_INPUT:
		if ((window = known_window(viewer, msg, msg->text_input.window))) {
			textinput_state(window, &msg->text_input);
		}
		break;
	case WIRE_WINDOW_GRAB:
		if ((window = known_window(viewer, msg, msg->window_grab.window))) {
			window_grab(window, &msg->window_grab);
		}
		break;
	case WIRE_VIDEO_STATS:
		if ((window = known_window(viewer, msg, msg->video_stats.window))) {
			hud_video_stats(window, &msg->video_stats);
		}
		break;
	case WIRE_WINDOW_STATS:
		if ((window = known_window(viewer, msg, msg->window_stats.window))) {
			hud_window_stats(window, &msg->window_stats);
		}
		break;
	case WIRE_UDP_OFFER:
		transport_udp_offer(viewer, &msg->udp_offer);
		break;
	case WIRE_SESSION_VIEWERS:
		session_viewers(viewer, &msg->session_viewers);
		break;
	case WIRE_HOST_NAME:
		memcpy(viewer->connection.host_name, msg->host_name.text, msg->host_name.len);
		viewer->connection.host_name[msg->host_name.len] = '\0';
		window_show_titles(viewer);
		break;
	case WIRE_WINDOW_HINTS:
		if ((window = known_window(viewer, msg, msg->window_hints.window))) {
			window_set_hints(window, &msg->window_hints);
		}
		break;
	case WIRE_WINDOW_DECORATION:
		if ((window = known_window(viewer, msg, msg->window_decoration.window))) {
			window_set_decoration(window, msg->window_decoration.mode);
		}
		break;
	case WIRE_FRAME:
		if ((window = known_window(viewer, msg, msg->frame.window))) {
			decode_frame(window, &msg->frame);
		}
		break;
	case WIRE_COPY_RECT:
		if ((window = known_window(viewer, msg, msg->copy_rect.window))) {
			decode_copy(window, &msg->copy_rect);
		}
		break;
	case WIRE_SHORTCUTS_INHIBIT:
		if ((window = known_window(viewer, msg, msg->shortcuts_inhibit.window))) {
			constraint_inhibit(window, &msg->shortcuts_inhibit);
		}
		break;
	case WIRE_POINTER_CONSTRAINT:
		if ((window = known_window(viewer, msg, msg->pointer_constraint.window))) {
			constraint_set(window, &msg->pointer_constraint);
		}
		break;
	case WIRE_AUDIO:
	case WIRE_AUDIO_END:
		sound_message(viewer, msg);
		break;
	case WIRE_FRAME_MARK:
		if ((window = known_window(viewer, msg, msg->frame_mark.window))) {
			window->mark_next = msg->frame_mark.mark;
		}
		break;
	case WIRE_CURSOR:
		cursor_set(viewer, &msg->cursor);
		break;
	case WIRE_SELECTION:
		clipboard_selection(viewer, &msg->selection);
		break;
	case WIRE_TRANSFER_REQUEST:
		clipboard_request(viewer, &msg->transfer_request);
		break;
	case WIRE_TRANSFER_DATA:
	case WIRE_TRANSFER_ACK:
		clipboard_transfer(viewer, msg);
		break;
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
		log_error("the connection to the server was lost (%s); windows stay until it "
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
