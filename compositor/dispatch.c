/*
 * The viewers as the session sees them: each one's hello and the snapshot
 * it gets, who has input and how it moves, and each kind of message to one
 * handler through one gate for input. A window named by id is looked up
 * here; input for a window the app has just closed is an ordinary race,
 * and is dropped.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xkbcommon/xkbcommon.h>

#include "app.h"
#include "clipboard.h"
#include "constraint.h"
#include "cursor.h"
#include "decoration.h"
#include "dispatch.h"
#include "dnd.h"
#include "feedback.h"
#include "handover.h"
#include "input.h"
#include "keychar.h"
#include "log.h"
#include "notify.h"
#include "output.h"
#include "quic.h"
#include "record.h"
#include "sound.h"
#include "stats.h"
#include "tablet.h"
#include "textinput.h"
#include "video.h"
#include "viewers.h"
#include "window.h"

/* A window the viewer may act on: known and mapped. */
static struct rc_window *mapped_window(struct rc_server *server, uint32_t id)
{
	struct rc_window *window = window_from_id(server, id);
	return window && window->mapped ? window : NULL;
}

/* Tells each viewer how many watch, and whether its input counts. */
static void send_viewers(struct rc_server *server)
{
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		struct rc_connection *conn = viewer->conn;
		if (!conn->welcomed || conn->minor < 4) {
			continue;
		}
		uint32_t flags = (viewer == server->input_viewer ? WIRE_VIEWERS_INPUT : 0) |
			(viewer->view_only ? WIRE_VIEWERS_WATCHING : 0);
		connection_send(conn,
			&(struct wire_msg){.type = WIRE_SESSION_VIEWERS,
				.session_viewers = {.count = (uint32_t)server->nviewers,
					.flags = flags}});
	}
}

/* Whether any viewer wants the apps' sound. */
static bool sound_wanted(struct rc_server *server)
{
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		if (viewer->audio && viewer->conn->welcomed) {
			return true;
		}
	}
	return false;
}

/* The input of the viewer that had it ends as if it had left: keys and
 * buttons up, touches cancelled, its selection and drags gone, its pointer
 * constraints and input methods lifted. */
static void end_input(struct rc_server *server)
{
	if (!server->input_viewer) {
		return;
	}
	constraint_withdraw_all(server);
	textinput_withdraw_all(server);
	clipboard_viewer_gone(server);
	tablet_viewer_gone(server);
	input_viewer_gone(server);
	dnd_viewer_gone(server);
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		window_set_activated(window, false);
	}
	server->input_viewer = NULL;
}

/* The viewer's input reaches the apps from now on, with its keymap, its
 * keyboard focus, its modifiers and its output; it gets the selection, the
 * pointer constraints and the input methods. */
static void take_input(struct rc_viewer *viewer)
{
	struct rc_server *server = viewer->server;
	if (server->input_viewer == viewer) {
		return;
	}
	bool had = server->input_viewer != NULL;
	end_input(server);
	server->input_viewer = viewer;
	if (had) {
		log_info("viewer %u has input now", viewer->number);
	}
	if (viewer->keymap) {
		input_set_keymap(server, viewer->keymap);
	}
	if (viewer->repeat_known) {
		input_repeat_info(server, &viewer->repeat);
	}
	decoration_set_viewer(server, viewer->server_decorations);
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		struct rc_view *view = window_view(window, viewer);
		if (view && view->output_known) {
			window_set_output(window, view->refresh_mhz, view->scale);
		}
		if (view && view->place_known) {
			output_window_place(window, &view->place);
		}
	}
	window = window_from_id(server, viewer->conn->focus);
	if (window && window->mapped) {
		window_focus(window);
		input_keyboard_enter(server, window,
			&(struct wire_keyboard_enter){.window = window->id});
	}
	if (viewer->modifiers_known) {
		input_modifiers(server, &viewer->modifiers);
	}
	if (viewer->conn->welcomed) {
		clipboard_offer_all(server);
		constraint_announce_all(server);
		textinput_announce_all(server);
	}
	send_viewers(server);
}

/* State, not history: a new viewer gets every window as it is now. */
static void send_snapshot(struct rc_viewer *viewer)
{
	struct rc_server *server = viewer->server;
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		window_announce(window, viewer);
	}
	cursor_send(server, viewer->conn);
	connection_send(viewer->conn, &(struct wire_msg){.type = WIRE_SYNC});
}

/* A viewer whose hello was read: welcomed, told the state of things, and
 * (takes_input) given input. */
static void welcome(struct rc_viewer *viewer, const struct wire_hello *hello, bool takes_input)
{
	struct rc_server *server = viewer->server;
	struct rc_connection *conn = viewer->conn;
	conn->compression = encode_context_compression(&server->encode, hello->caps);
	const char *name = server->record.name;
	struct wire_msg msg = {
		.type = WIRE_WELCOME,
		.welcome =
			{
				.magic = WIRE_MAGIC,
				.major = WIRE_VERSION_MAJOR,
				.minor = WIRE_VERSION_MINOR,
				.caps = codec_local_caps() | (server->sound ? WIRE_CAP_AUDIO : 0),
				.compression = conn->compression,
				.session_id = server->record.id,
				.name_len = (uint32_t)strlen(name),
				.name = name,
			},
	};
	connection_send(conn, &msg);
	conn->welcomed = true;
	server->welcomed_ever = true;
	conn->video = (hello->caps & WIRE_CAP_H264) && video_available();
	conn->copy_rect = hello->caps & WIRE_CAP_COPY_RECT;
	conn->replace = hello->caps & WIRE_CAP_REPLACE;
	conn->minor = hello->minor;
	viewer->audio = hello->caps & WIRE_CAP_AUDIO;
	viewer->server_decorations = hello->caps & WIRE_CAP_SERVER_DECORATIONS;
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
	const struct rc_handshake *hs = &server->handshake;
	if (conn->minor >= 8 && !viewer->view_only && hs->watch_token_len) {
		/* Its way to hand out a link that only watches. */
		connection_send(conn,
			&(struct wire_msg){.type = WIRE_WATCH_TOKEN,
				.watch_token = {.token = hs->watch_token,
					.len = (uint32_t)hs->watch_token_len}});
	}
	char who[80] = "";
	if (server->nviewers > 1 || viewer->view_only) {
		snprintf(who, sizeof(who), "%s; the session has %d viewer%s",
			viewer->view_only ? ", to watch only" : "", server->nviewers,
			server->nviewers == 1 ? "" : "s");
	}
	log_info("viewer attached (viewer %u, protocol %u.%u, %s)%s", viewer->number, hello->major,
		hello->minor, codec_compression_name(conn->compression), who);
	if (!viewer->view_only) {
		/* Apps learn who draws their decorations before the snapshot
		 * says. */
		decoration_set_viewer(server, viewer->server_decorations);
	}
	send_snapshot(viewer);
	/* The newest full viewer has input: it gets the selection, the
	 * constraints and the input methods before it acts (and every viewer
	 * hears of it). */
	if (takes_input) {
		take_input(viewer);
	} else {
		send_viewers(server);
	}
	record_update(server);
	sound_viewer_changed(server, sound_wanted(server));
	handover_viewer_welcomed(viewer);
	notify_viewer_welcomed(viewer);
	/* An app that ended before this first viewer came: it hears how. */
	app_check_exit(server);
}

static void frame_ack(struct rc_viewer *viewer, const struct wire_frame_ack *msg)
{
	struct rc_window *window = window_from_id(viewer->server, msg->window);
	if (!window) {
		return; /* destroyed while the ack was on its way */
	}
	struct rc_view *view = window->views[viewer->slot];
	int64_t rtt = connection_acked(viewer->conn, msg->window, msg->seq);
	if (!view || !encoder_acked(&view->encoder, msg->seq, rtt)) {
		char text[128];
		snprintf(text, sizeof(text), "ack of frame %u of window %u, never sent", msg->seq,
			msg->window);
		connection_refuse(viewer->conn, text);
		return;
	}
	feedback_acked(viewer, window, msg->seq, msg->recv_time_us);
}

/* Whether a message is input that acts on an app: from a viewer with full
 * rights that is not the input viewer, it takes input first. */
static bool acts(const struct wire_msg *msg)
{
	switch (msg->type) {
	case WIRE_CLOSE:
	case WIRE_POINTER_AXIS:
	case WIRE_TOUCH_DOWN:
	case WIRE_TEXT_INPUT_EVENT:
	case WIRE_DND_ENTER:
		return true;
	case WIRE_POINTER_BUTTON:
		return msg->pointer_button.state != 0;
	case WIRE_KEY:
		return msg->key.state != 0;
	case WIRE_KEY_CHAR:
		return msg->key_char.state != 0;
	case WIRE_TABLET:
		return (msg->tablet.changed & WIRE_TABLET_DOWN) ||
			((msg->tablet.changed & WIRE_TABLET_BUTTON) && msg->tablet.button_state);
	case WIRE_TABLET_PAD:
		return msg->tablet_pad.event == WIRE_PAD_BUTTON && msg->tablet_pad.value == 1;
	default:
		return false;
	}
}

/* The gate every input passes: a viewer admitted to watch has none (what
 * it tries is refused and counted, logged once); a full viewer's input
 * reaches the apps while it has input, and an input that acts gives it
 * input. What the others send meanwhile is theirs alone and dropped. */
static bool may_input(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	if (viewer->view_only) {
		if (viewer->refused++ == 0) {
			log_info("viewer %u watches only: its %s is refused, as is all its "
				 "input",
				viewer->number, wire_type_name(msg->type));
		}
		log_debug("viewer %u: %s refused (it watches only)", viewer->number,
			wire_type_name(msg->type));
		return false;
	}
	if (viewer != server->input_viewer && acts(msg)) {
		take_input(viewer);
	}
	return viewer == server->input_viewer;
}

/* Text up to its first NUL or control character, as a C string. */
static void clean_text(char *dst, size_t size, const char *src, uint32_t len)
{
	size_t n = 0;
	while (n < len && n + 1 < size) {
		unsigned char c = (unsigned char)src[n];
		if (c < 0x20 || c == 0x7f) {
			break;
		}
		dst[n++] = (char)c;
	}
	dst[n] = '\0';
}

/* An output_place as kept; false where its name is empty once cleaned. */
static bool place_from(struct rc_place *place, const struct wire_output_place *msg)
{
	struct rc_place next = {.x = msg->x,
		.y = msg->y,
		.width = msg->width,
		.height = msg->height,
		.scale = msg->scale};
	clean_text(next.name, sizeof(next.name), msg->name, msg->name_len);
	clean_text(next.description, sizeof(next.description), msg->description,
		msg->description_len);
	if (next.name[0] == '\0') {
		return false;
	}
	*place = next;
	return true;
}

/* What a viewer says of itself whoever has input: kept for when it
 * takes input, applied now if it has it. */
static void keep(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	bool has_input = viewer == server->input_viewer;
	struct rc_window *window;
	struct rc_view *view;
	if (viewer->view_only &&
		(msg->type == WIRE_KEYMAP || msg->type == WIRE_REPEAT_INFO ||
			msg->type == WIRE_MODIFIERS)) {
		return; /* it never takes input: no keymap is compiled for it */
	}
	switch (msg->type) {
	case WIRE_KEYMAP: {
		struct xkb_keymap *keymap = input_compile_keymap(server, &msg->keymap);
		if (keymap) {
			xkb_keymap_unref(viewer->keymap);
			viewer->keymap = keymap;
			if (has_input) {
				input_set_keymap(server, keymap);
			}
		}
		break;
	}
	case WIRE_REPEAT_INFO:
		viewer->repeat = msg->repeat_info;
		viewer->repeat_known = true;
		if (has_input) {
			input_repeat_info(server, &msg->repeat_info);
		}
		break;
	case WIRE_MODIFIERS:
		viewer->modifiers = msg->modifiers;
		viewer->modifiers_known = true;
		if (has_input) {
			input_modifiers(server, &msg->modifiers);
		}
		break;
	case WIRE_OUTPUT_INFO:
		window = window_from_id(server, msg->output_info.window);
		if (window && (view = window->views[viewer->slot])) {
			view->output_known = true;
			view->refresh_mhz = msg->output_info.refresh_mhz;
			view->scale = msg->output_info.scale;
		}
		if (window && has_input) {
			window_set_output(window, msg->output_info.refresh_mhz,
				msg->output_info.scale);
		}
		break;
	case WIRE_OUTPUT_PLACE:
		window = window_from_id(server, msg->output_place.window);
		if (window && (view = window->views[viewer->slot]) &&
			place_from(&view->place, &msg->output_place)) {
			view->place_known = true;
			if (has_input) {
				output_window_place(window, &view->place);
			}
		}
		break;
	case WIRE_KEYBOARD_ENTER:
		/* Its frames go first to this viewer from now on. */
		viewer->conn->focus = msg->keyboard_enter.window;
		if (has_input && (window = mapped_window(server, msg->keyboard_enter.window))) {
			window_focus(window);
			input_keyboard_enter(server, window, &msg->keyboard_enter);
		}
		break;
	case WIRE_KEYBOARD_LEAVE:
		if (viewer->conn->focus == msg->keyboard_leave.window) {
			viewer->conn->focus = 0;
		}
		if (has_input && (window = mapped_window(server, msg->keyboard_leave.window))) {
			input_keyboard_leave(server, window);
			window_set_activated(window, false);
		}
		break;
	default:
		break;
	}
}

/* Each message a viewer may send has its handler here, on_NAME: one for
 * every row of messages.h that a viewer or both sides send (route() is
 * generated from the rows, so a row without one does not build). */
static void on_hello(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	connection_refuse(viewer->conn, "hello sent twice");
}

static void on_keymap(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	keep(viewer, msg);
}

static void on_repeat_info(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	keep(viewer, msg);
}

static void on_modifiers(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	keep(viewer, msg);
}

static void on_output_info(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	keep(viewer, msg);
}

static void on_output_place(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	keep(viewer, msg);
}

static void on_keyboard_enter(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	keep(viewer, msg);
}

static void on_keyboard_leave(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	keep(viewer, msg);
}

static void on_frame_ack(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	frame_ack(viewer, &msg->frame_ack);
}

static void on_frame_presented(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	const struct wire_frame_presented *m = &msg->frame_presented;
	struct rc_window *window = window_from_id(viewer->server, m->window);
	if (window && !feedback_presented(viewer, window, m)) {
		char text[128];
		snprintf(text, sizeof(text), "frame %u of window %u shown, never sent", m->seq,
			m->window);
		connection_refuse(viewer->conn, text);
	}
}

static void on_stats_wanted(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	viewer->conn->stats_wanted = msg->stats_wanted.on;
	if (msg->stats_wanted.on) {
		stats_start(server);
	}
}

static void on_transfer_data(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	char err[160];
	/* A transfer of the viewer that had input may still be under
	 * way: it ended when input moved, and what comes of it is
	 * dropped. */
	if (viewer == server->input_viewer && !clipboard_transfer(server, msg, err, sizeof(err))) {
		connection_refuse(viewer->conn, err);
	}
}

static void on_transfer_ack(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	char err[160];
	/* A transfer of the viewer that had input may still be under
	 * way: it ended when input moved, and what comes of it is
	 * dropped. */
	if (viewer == server->input_viewer && !clipboard_transfer(server, msg, err, sizeof(err))) {
		connection_refuse(viewer->conn, err);
	}
}

static void on_configure(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	struct rc_window *window;
	if ((window = mapped_window(server, msg->configure.window))) {
		window_configure(window, msg->configure.width, msg->configure.height,
			msg->configure.states);
	}
}

static void on_close(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	struct rc_window *window;
	if ((window = mapped_window(server, msg->close.window))) {
		window_close(window);
	}
}

static void on_pointer_motion(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	struct rc_window *window;
	/* A locked pointer stays where the lock began: a late absolute
	 * motion (the viewer's lock was still being taken, or the local
	 * desktop moved its cursor) would move Xwayland's pointer under
	 * a game that reads the lock's relative motion. */
	if ((window = mapped_window(server, msg->pointer_motion.window)) &&
		!constraint_pointer_locked(server)) {
		input_pointer_motion(server, window, &msg->pointer_motion);
	}
}

static void on_pointer_leave(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	input_pointer_leave(server, &msg->pointer_leave);
}

static void on_pointer_button(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	input_pointer_button(server, &msg->pointer_button);
}

static void on_pointer_axis(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	input_pointer_axis(server, &msg->pointer_axis);
}

static void on_pointer_frame(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	input_pointer_frame(server);
}

static void on_gesture(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	input_gesture(viewer->server, &msg->gesture);
}

static void on_tablet(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	struct rc_window *window = mapped_window(server, msg->tablet.window);
	if (window) {
		tablet_event(server, window, &msg->tablet);
	}
}

static void on_tablet_pad(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	tablet_pad_event(viewer->server, &msg->tablet_pad);
}

static void on_key(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	input_key(server, &msg->key);
}

/* A character pressed (or released) as itself: on a key of the keymap that
 * types it, else on a spare key, else as the app's text input. A spare key
 * comes before the text input: a key is in order with the keys around it,
 * and a text input's commit is not (foot drops one whose done names a state
 * older than its newest, as when it has just moved its cursor for the
 * characters before: they were lost). */
static void press_char(struct rc_server *server, const struct wire_key_char *m)
{
	char text[5];
	if (!keychar_key(server, m) && !keychar_spare(server, m) &&
		!textinput_commit(server, keychar_utf8(m->codepoint, text))) {
		log_warning("cannot type U+%04X: no key of the keymap types it, no spare key is "
			    "left and the app takes no text input",
			m->codepoint);
	}
}

static void on_key_char(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	press_char(server, &msg->key_char);
}

static void on_shortcuts_inhibit_state(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	constraint_inhibit_state(server, &msg->shortcuts_inhibit_state);
}

static void on_pointer_constraint_state(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	constraint_state(server, &msg->pointer_constraint_state);
}

static void on_relative_motion(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	input_relative_motion(server, &msg->relative_motion);
}

/* A character typed as itself (key_char's press and release). */
static void type_char(struct rc_server *server, uint32_t codepoint)
{
	struct wire_key_char m = {.codepoint = codepoint, .state = 1};
	press_char(server, &m);
	m.state = 0;
	keychar_key(server, &m);
}

static void on_text_input_event(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	const struct wire_text_input_event *m = &msg->text_input_event;
	if (!textinput_plain(server, m) &&
		(textinput_event(server, m) || m->preedit_len || m->delete_before ||
			m->delete_after)) {
		return;
	}
	/* A little text committed alone (textinput_plain), or text committed
	 * for a text input the app has just disabled (the viewer could not
	 * know): typed as characters, so none is lost. */
	for (uint32_t i = 0; i < m->commit_len;) {
		unsigned char c = (unsigned char)m->commit[i];
		int n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
		uint32_t cp = c < 0x80 ? c : c & (0x3f >> (n - 1));
		for (int k = 1; k < n && i + (uint32_t)k < m->commit_len; k++) {
			cp = cp << 6 | ((unsigned char)m->commit[i + (uint32_t)k] & 0x3f);
		}
		i += (uint32_t)n;
		if (cp >= 0x20 && cp != 0x7f && cp <= 0x10ffff) {
			type_char(server, cp);
		}
	}
}

static void on_input_mark(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	struct rc_window *window;
	if ((window = mapped_window(server, msg->input_mark.window))) {
		input_mark(server, msg->input_mark.mark);
		window->input_mark = msg->input_mark.mark;
		window->input_mark_armed = false;
	}
}

static void on_popup_done(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	struct rc_window *window;
	if ((window = window_from_id(server, msg->popup_done.window))) {
		window_dismiss(window);
	}
}

static void on_decoration_mode(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	if (msg->decoration_mode.mode == WIRE_DECORATION_CLIENT_SIDE) {
		decoration_viewer_refused(server, msg->decoration_mode.window);
	}
}

static void on_dnd_enter(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	struct rc_window *window;
	if ((window = mapped_window(server, msg->dnd_enter.window))) {
		dnd_enter(server, window, &msg->dnd_enter);
	}
}

static void on_dnd_motion(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	dnd_motion(server, &msg->dnd_motion);
}

static void on_dnd_leave(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	dnd_leave(server);
}

static void on_dnd_drop(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	dnd_drop(server);
}

static void on_dnd_action(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	dnd_action(server, &msg->dnd_action);
}

static void on_drag_local(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	dnd_drag_local(server, &msg->drag_local);
}

static void on_touch_down(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	struct rc_window *window;
	if ((window = mapped_window(server, msg->touch_down.window))) {
		input_touch_down(server, window, &msg->touch_down);
	}
}

static void on_touch_up(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	input_touch_up(server, &msg->touch_up);
}

static void on_touch_motion(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	input_touch_motion(server, &msg->touch_motion);
}

static void on_touch_frame(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	input_touch_frame(server);
}

static void on_touch_cancel(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	input_touch_cancel(server);
}

static void on_selection(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	clipboard_selection(server, &msg->selection);
}

static void on_transfer_request(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	clipboard_request(server, &msg->transfer_request, dnd_out_source(server));
}

static void on_file(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	char err[256];
	if (!handover_handle(viewer, msg, err, sizeof(err))) {
		connection_refuse(viewer->conn, err);
	}
}

static void on_notify_reply(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	notify_reply(viewer, &msg->notify_reply);
}

static void on_drag_files(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	handover_drag_files(viewer, msg->drag_files.serial);
}

static void on_send_files(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	connection_refuse(viewer->conn, "send_files comes only after a hello that asks to send");
}

static void on_file_group(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	on_file(viewer, msg);
}

static void on_file_offer(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	on_file(viewer, msg);
}

static void on_file_data(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	on_file(viewer, msg);
}

static void on_file_ack(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	on_file(viewer, msg);
}

static void on_file_done(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	on_file(viewer, msg);
}

static void on_audio(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	sound_mic(server, msg);
}

static void on_audio_end(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	struct rc_server *server = viewer->server;
	sound_mic(server, msg);
}

static void on_link_ack(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	/* The channel takes link_acks as it reads (channel.c): none reaches
	 * here. */
}

/* What a viewer says of itself, its acks and its transfers: a watcher's
 * counts too. Everything else is input, and goes only from a viewer that
 * may give it. */
static bool is_input(uint16_t type)
{
	switch (type) {
	case WIRE_HELLO:
	case WIRE_KEYMAP:
	case WIRE_REPEAT_INFO:
	case WIRE_MODIFIERS:
	case WIRE_OUTPUT_INFO:
	case WIRE_OUTPUT_PLACE:
	case WIRE_KEYBOARD_ENTER:
	case WIRE_KEYBOARD_LEAVE:
	case WIRE_FRAME_ACK:
	case WIRE_FRAME_PRESENTED:
	case WIRE_STATS_WANTED:
	case WIRE_TRANSFER_DATA:
	case WIRE_TRANSFER_ACK:
	case WIRE_LINK_ACK:
	/* Files: a watcher's are refused by the files room, which answers
	 * with why; its acks of files sent to it count. */
	case WIRE_FILE_GROUP:
	case WIRE_FILE_OFFER:
	case WIRE_FILE_DATA:
	case WIRE_FILE_ACK:
	case WIRE_FILE_DONE:
	/* A watcher closes the notifications it was shown (notify.c). */
	case WIRE_NOTIFY_REPLY:
		return false;
	default:
		return true;
	}
}

static void route(struct rc_viewer *viewer, const struct wire_msg *msg)
{
	if (is_input(msg->type) && !may_input(viewer, msg)) {
		return;
	}
	switch (msg->type) {
#define FROM_VIEWER(NAME, name) \
	case WIRE_##NAME: \
		on_##name(viewer, msg); \
		return;
#define FROM_BOTH FROM_VIEWER
#define FROM_SERVER(NAME, name)
#define X(NAME, name, code, sender, fixed, carrier, check) FROM_##sender(NAME, name)
		WIRE_MESSAGES(X)
#undef X
#undef FROM_VIEWER
#undef FROM_BOTH
#undef FROM_SERVER
	default:
		/* The decoder lets through only what a viewer may send. */
		break;
	}
}

/* A viewer is welcomed as it attaches: its hello was read and checked
 * before (handshake.c). */
static bool handle_message(void *data, const struct wire_msg *msg)
{
	route(data, msg);
	return true;
}

/* The connection is about to go: nothing the viewer held stays, and the
 * newest full viewer left takes input if it had it. */
static void handle_closed(void *data)
{
	struct rc_viewer *viewer = data;
	struct rc_server *server = viewer->server;
	handover_viewer_gone(viewer);
	notify_viewer_gone(viewer);
	bool had_input = server->input_viewer == viewer;
	if (had_input) {
		end_input(server);
	}
	if (viewer->refused) {
		log_info("viewer %u left; %u of its inputs were refused (it watched only)",
			viewer->number, viewer->refused);
	}
	if (viewer->move_key_len && server->doors.quic) {
		/* Its key to come over to UDP as itself (door/offer.c) opens
		 * nothing now. */
		quic_set_move_key(server->doors.quic, viewer->slot, "", 0);
	}
	viewer_free(viewer);
	if (server->replacing) {
		/* The same viewer comes back on another link at once: it
		 * says what changed (dispatch_attach). */
		return;
	}
	struct rc_viewer *next = NULL, *other;
	wl_list_for_each(other, &server->viewers, link)
	{
		if (!other->view_only && other->conn->welcomed && !other->conn->closing) {
			next = other;
		}
	}
	if (had_input && next) {
		take_input(next);
	}
	send_viewers(server);
	sound_viewer_changed(server, sound_wanted(server));
	record_update(server);
	if (server->options.stdio && server->running && server->nviewers == 0) {
		/* stdin/stdout carried the only viewer this session can have. */
		log_info("the viewer on stdio is gone; ending the session");
		server->running = false;
	}
}

static const struct rc_connection_handler handler = {
	.message = handle_message,
	.closed = handle_closed,
};

/* A connection for a new viewer; NULL (fds closed) when out of memory. */
static struct rc_viewer *add_viewer(struct rc_server *server, int in_fd, int out_fd, bool view_only)
{
	/* The handshake turns away a viewer beyond RC_MAX_VIEWERS before this. */
	struct rc_viewer *viewer = viewer_new(server, view_only);
	if (!viewer) {
		log_error("out of memory accepting a viewer");
		close(in_fd);
		if (out_fd != in_fd) {
			close(out_fd);
		}
		return NULL;
	}
	char name[32];
	snprintf(name, sizeof(name), "viewer %u", viewer->number);
	viewer->conn = connection_create(server->loop, in_fd, out_fd,
		server->options.stall_timeout * 1000, name, &handler, viewer);
	if (!viewer->conn) {
		log_error("out of memory accepting a viewer");
		viewer_free(viewer);
		return NULL;
	}
	return viewer;
}

struct rc_viewer *dispatch_attach(struct rc_server *server, int fd, int out_fd,
	const struct wire_hello *hello, bool view_only, bool takes_input, uint32_t number)
{
	struct rc_viewer *viewer = add_viewer(server, fd, out_fd, view_only);
	if (!viewer) {
		return NULL;
	}
	if (number) {
		viewer->number = number;
		snprintf(viewer->conn->name, sizeof(viewer->conn->name), "viewer %u", number);
	}
	channel_first_read(&viewer->conn->channel);
	welcome(viewer, hello, takes_input);
	return viewer;
}
