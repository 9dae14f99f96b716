/*
 * Messages from the viewer, each kind to one handler. A window named by id
 * is looked up here; input for a window the app has just closed is an
 * ordinary race, and is dropped.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clipboard.h"
#include "constraint.h"
#include "cursor.h"
#include "decoration.h"
#include "dnd.h"
#include "dispatch.h"
#include "input.h"
#include "log.h"
#include "quic.h"
#include "record.h"
#include "sound.h"
#include "stats.h"
#include "textinput.h"
#include "video.h"
#include "window.h"

/* A window the viewer may act on: known and mapped. */
static struct rc_window *mapped_window(struct rc_server *server, uint32_t id)
{
	struct rc_window *window = window_from_id(server, id);
	return window && window->mapped ? window : NULL;
}

/* State, not history: a new viewer gets every window as it is now. */
static void send_snapshot(struct rc_server *server)
{
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		window->announced = false;
	}
	wl_list_for_each(window, &server->windows, link)
	{
		window_announce(window);
	}
	cursor_send(server);
	clipboard_offer_all(server);
	constraint_announce_all(server);
	textinput_announce_all(server);
	connection_send(server->connection, &(struct wire_msg){.type = WIRE_SYNC});
}

static void welcome(struct rc_server *server, const struct wire_hello *hello)
{
	struct rc_connection *conn = server->connection;
	if (hello->major != WIRE_VERSION_MAJOR) {
		char text[256];
		snprintf(text, sizeof(text),
			"the viewer speaks wire protocol %u, this rcomp-run %s speaks %u: install "
			"the "
			"same rcomp version on both sides (rcomp-run --version, rcomp-view "
			"--version)",
			hello->major, RCOMP_VERSION, WIRE_VERSION_MAJOR);
		log_error("viewer refused: %s", text);
		connection_goodbye(conn, WIRE_BYE_VERSION, 0, text);
		return;
	}
	encode_context_set_viewer(&server->encode, hello->caps);
	enum wire_compression compression = server->encode.viewer_compression;
	const char *name = server->record.name;
	struct wire_msg msg = {
		.type = WIRE_WELCOME,
		.welcome =
			{
				.magic = WIRE_MAGIC,
				.major = WIRE_VERSION_MAJOR,
				.minor = WIRE_VERSION_MINOR,
				.caps = codec_local_caps() | (server->sound ? WIRE_CAP_AUDIO : 0),
				.compression = compression,
				.session_id = server->record.id,
				.name_len = (uint32_t)strlen(name),
				.name = name,
			},
	};
	connection_send(conn, &msg);
	conn->welcomed = true;
	conn->video = (hello->caps & WIRE_CAP_H264) && video_available();
	conn->copy_rect = hello->caps & WIRE_CAP_COPY_RECT;
	conn->replace = hello->caps & WIRE_CAP_REPLACE;
	conn->minor = hello->minor;
	if (conn->minor >= 1) {
		char host[WIRE_MAX_HOST_NAME + 1] = "";
		if (gethostname(host, sizeof(host)) == 0 && host[0]) {
			host[WIRE_MAX_HOST_NAME] = '\0';
			connection_send(conn,
				&(struct wire_msg){.type = WIRE_HOST_NAME,
					.host_name = {.text = host,
						.len = (uint32_t)strlen(host)}});
		}
	}
	const struct rc_listen *listen = &server->listen;
	if (conn->minor >= 3 && (hello->flags & WIRE_HELLO_UDP_OFFER) && listen->offer) {
		/* A viewer over ssh: it may move the session to UDP. */
		connection_send(conn,
			&(struct wire_msg){.type = WIRE_UDP_OFFER,
				.udp_offer = {.port = (uint32_t)quic_local_port(listen->quic),
					.key_len = (uint32_t)listen->token_len,
					.key = listen->token,
					.address = listen->offer_address,
					.address_len = (uint32_t)strlen(listen->offer_address)}});
	}
	log_info("viewer attached (protocol %u.%u, %s)", hello->major, hello->minor,
		codec_compression_name(compression));
	/* Apps learn who draws their decorations before the snapshot says. */
	decoration_set_viewer(server, hello->caps & WIRE_CAP_SERVER_DECORATIONS);
	send_snapshot(server);
	record_update(server);
	sound_viewer_changed(server, hello->caps & WIRE_CAP_AUDIO);
}

static void frame_ack(struct rc_server *server, const struct wire_frame_ack *msg)
{
	struct rc_window *window = window_from_id(server, msg->window);
	if (!window) {
		return; /* destroyed while the ack was on its way */
	}
	int64_t rtt = connection_acked(server->connection, msg->window, msg->seq);
	if (!encoder_acked(&window->encoder, msg->seq, rtt)) {
		char text[128];
		snprintf(text, sizeof(text), "ack of frame %u of window %u, never sent", msg->seq,
			msg->window);
		connection_refuse(server->connection, text);
	}
}

static void route(struct rc_server *server, const struct wire_msg *msg)
{
	struct rc_window *window;
	char err[160];
	switch (msg->type) {
	case WIRE_HELLO:
		connection_refuse(server->connection, "hello sent twice");
		break;
	case WIRE_KEYMAP:
		input_keymap(server, &msg->keymap);
		break;
	case WIRE_REPEAT_INFO:
		input_repeat_info(server, &msg->repeat_info);
		break;
	case WIRE_CONFIGURE:
		if ((window = mapped_window(server, msg->configure.window))) {
			window_configure(window, msg->configure.width, msg->configure.height,
				msg->configure.states);
		}
		break;
	case WIRE_CLOSE:
		if ((window = mapped_window(server, msg->close.window))) {
			window_close(window);
		}
		break;
	case WIRE_POINTER_MOTION:
		if ((window = mapped_window(server, msg->pointer_motion.window))) {
			input_pointer_motion(server, window, &msg->pointer_motion);
		}
		break;
	case WIRE_POINTER_LEAVE:
		input_pointer_leave(server, &msg->pointer_leave);
		break;
	case WIRE_POINTER_BUTTON:
		input_pointer_button(server, &msg->pointer_button);
		break;
	case WIRE_POINTER_AXIS:
		input_pointer_axis(server, &msg->pointer_axis);
		break;
	case WIRE_POINTER_FRAME:
		input_pointer_frame(server);
		break;
	case WIRE_KEYBOARD_ENTER:
		/* Its frames go first from now on. */
		server->connection->focus = msg->keyboard_enter.window;
		if ((window = mapped_window(server, msg->keyboard_enter.window))) {
			window_focus(window);
			input_keyboard_enter(server, window, &msg->keyboard_enter);
		}
		break;
	case WIRE_KEYBOARD_LEAVE:
		if (server->connection->focus == msg->keyboard_leave.window) {
			server->connection->focus = 0;
		}
		if ((window = mapped_window(server, msg->keyboard_leave.window))) {
			input_keyboard_leave(server, window);
			window_set_activated(window, false);
		}
		break;
	case WIRE_KEY:
		input_key(server, &msg->key);
		break;
	case WIRE_SHORTCUTS_INHIBIT_STATE:
		constraint_inhibit_state(server, &msg->shortcuts_inhibit_state);
		break;
	case WIRE_POINTER_CONSTRAINT_STATE:
		constraint_state(server, &msg->pointer_constraint_state);
		break;
	case WIRE_RELATIVE_MOTION:
		input_relative_motion(server, &msg->relative_motion);
		break;
	case WIRE_TEXT_INPUT_EVENT:
		textinput_event(server, &msg->text_input_event);
		break;
	case WIRE_INPUT_MARK:
		if ((window = mapped_window(server, msg->input_mark.window))) {
			input_mark(server, msg->input_mark.mark);
			window->input_mark = msg->input_mark.mark;
			window->input_mark_armed = false;
		}
		break;
	case WIRE_MODIFIERS:
		input_modifiers(server, &msg->modifiers);
		break;
	case WIRE_FRAME_ACK:
		frame_ack(server, &msg->frame_ack);
		break;
	case WIRE_OUTPUT_INFO:
		if ((window = window_from_id(server, msg->output_info.window))) {
			window_set_output(window, msg->output_info.refresh_mhz,
				msg->output_info.scale);
		}
		break;
	case WIRE_POPUP_DONE:
		if ((window = window_from_id(server, msg->popup_done.window))) {
			window_dismiss(window);
		}
		break;
	case WIRE_DECORATION_MODE:
		if (msg->decoration_mode.mode == WIRE_DECORATION_CLIENT_SIDE) {
			decoration_viewer_refused(server, msg->decoration_mode.window);
		}
		break;
	case WIRE_DND_ENTER:
		if ((window = mapped_window(server, msg->dnd_enter.window))) {
			dnd_enter(server, window, &msg->dnd_enter);
		}
		break;
	case WIRE_DND_MOTION:
		dnd_motion(server, &msg->dnd_motion);
		break;
	case WIRE_DND_LEAVE:
		dnd_leave(server);
		break;
	case WIRE_DND_DROP:
		dnd_drop(server);
		break;
	case WIRE_DND_ACTION:
		dnd_action(server, &msg->dnd_action);
		break;
	case WIRE_DRAG_LOCAL:
		dnd_drag_local(server, &msg->drag_local);
		break;
	case WIRE_STATS_WANTED:
		server->connection->stats_wanted = msg->stats_wanted.on;
		if (msg->stats_wanted.on) {
			stats_start(server);
		}
		break;
	case WIRE_TOUCH_DOWN:
		if ((window = mapped_window(server, msg->touch_down.window))) {
			input_touch_down(server, window, &msg->touch_down);
		}
		break;
	case WIRE_TOUCH_UP:
		input_touch_up(server, &msg->touch_up);
		break;
	case WIRE_TOUCH_MOTION:
		input_touch_motion(server, &msg->touch_motion);
		break;
	case WIRE_TOUCH_FRAME:
		input_touch_frame(server);
		break;
	case WIRE_TOUCH_CANCEL:
		input_touch_cancel(server);
		break;
	case WIRE_SELECTION:
		clipboard_selection(server, &msg->selection);
		break;
	case WIRE_TRANSFER_REQUEST:
		clipboard_request(server, &msg->transfer_request, dnd_out_source(server));
		break;
	case WIRE_TRANSFER_DATA:
	case WIRE_TRANSFER_ACK:
		if (!clipboard_transfer(server, msg, err, sizeof(err))) {
			connection_refuse(server->connection, err);
		}
		break;
	case WIRE_AUDIO:
	case WIRE_AUDIO_END:
		sound_mic(server, msg);
		break;
	default:
		/* The decoder lets through only what a viewer may send. */
		break;
	}
}

static bool handle_message(void *data, const struct wire_msg *msg)
{
	struct rc_server *server = data;
	if (server->connection->welcomed) {
		route(server, msg);
	} else if (msg->type == WIRE_HELLO) {
		welcome(server, &msg->hello);
	} else {
		connection_refuse(server->connection, "the first message must be hello");
	}
	return true;
}

/* The connection is about to go: nothing the viewer held stays. */
static void handle_closed(void *data)
{
	struct rc_server *server = data;
	server->connection = NULL;
	clipboard_viewer_gone(server);
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		window->announced = false;
		window_set_activated(window, false);
	}
	input_viewer_gone(server);
	dnd_viewer_gone(server);
	sound_viewer_changed(server, false);
	record_update(server);
	if (server->options.stdio && server->running) {
		/* stdin/stdout carried the only viewer this session can have. */
		log_info("the viewer on stdio is gone; ending the session");
		server->running = false;
	}
}

static const struct rc_connection_handler handler = {
	.message = handle_message,
	.closed = handle_closed,
};

void dispatch_attach(struct rc_server *server, int fd, const char *peer,
	const struct wire_hello *hello)
{
	if (server->connection) {
		log_info("a new viewer%s%s takes the session over; disconnecting the attached "
			 "one",
			peer[0] ? " from " : "", peer);
		connection_goodbye(server->connection, WIRE_BYE_TAKEN_OVER, 0,
			"another viewer took this session over");
		connection_close_now(server->connection, 0);
	}
	struct rc_connection *conn = connection_create(server->loop, fd, fd, &handler, server);
	if (!conn) {
		log_error("out of memory accepting a viewer");
		return;
	}
	server->connection = conn;
	channel_first_read(&conn->channel);
	welcome(server, hello);
}

bool dispatch_attach_stdio(struct rc_server *server)
{
	server->connection =
		connection_create(server->loop, STDIN_FILENO, STDOUT_FILENO, &handler, server);
	return server->connection != NULL;
}
