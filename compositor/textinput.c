/*
 * Input methods: apps' text-input-v3, mirrored on the viewer's compositor.
 * The app with keyboard focus enables text input on its surface; the viewer
 * enables the same on its window's surface, where the local input method
 * composes; what the method sends (a preedit, committed text, a deletion
 * around the caret) comes back as one text_input_event, which the app hears
 * as one atomic change. Surrounding text and the caret's rectangle go to
 * the viewer, so the method knows the context and places its candidates
 * beside the caret.
 */
#include <stdlib.h>
#include <string.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_text_input_v3.h>

#include "connection.h"
#include "log.h"
#include "textinput.h"
#include "window.h"

struct rc_text_input {
	struct rc_server *server;
	struct wlr_text_input_v3 *input;
	struct wl_list link; // rc_server::text_inputs
	struct wl_listener enable, commit, disable, destroy;
	uint32_t announced_window; /* told to the viewer as enabled, 0: none */
	bool preedit_shown; /* a preedit of the viewer's input method shows in the app */
	/* The preedit last sent (NULL: none), sent again with the app's next
	 * commit while unconfirmed: an app that committed before our done
	 * came (foot, as it moves its cursor for the keys before) drops that
	 * done, and a preedit is the same whether it comes once or twice. */
	char *preedit;
	int32_t preedit_begin, preedit_end;
	bool unconfirmed;
};

/* Records the preedit just sent in a done, to be sent again. */
static void sent(struct rc_text_input *ti, const char *preedit, int32_t begin, int32_t end)
{
	free(ti->preedit);
	ti->preedit = preedit ? strdup(preedit) : NULL;
	ti->preedit_begin = begin;
	ti->preedit_end = end;
	ti->preedit_shown = preedit && preedit[0];
	ti->unconfirmed = !preedit || ti->preedit; /* without memory: never a wrong one */
}

/* A text input enabled afresh, or gone to another surface, starts with no
 * preedit of ours. */
static void forget(struct rc_text_input *ti)
{
	free(ti->preedit);
	ti->preedit = NULL;
	ti->preedit_shown = false;
	ti->unconfirmed = false;
}

static int32_t clamp(int32_t v, int32_t min, int32_t max)
{
	return v < min ? min : (v > max ? max : v);
}

static void send_state(struct rc_server *server, uint32_t window, bool enabled,
	const struct wlr_text_input_v3_state *state, int dx, int dy)
{
	struct rc_connection *conn = input_connection(server);
	if (!conn || conn->minor < 1) {
		return;
	}
	struct wire_msg msg = {.type = WIRE_TEXT_INPUT, .text_input = {.window = window}};
	struct wire_text_input *t = &msg.text_input;
	if (enabled) {
		const char *text = state->surrounding.text ? state->surrounding.text : "";
		size_t len = strlen(text);
		if (len > WIRE_MAX_TEXT_INPUT) {
			len = 0; /* the protocol's limit, which the app broke: no context */
		}
		t->flags = WIRE_TEXT_INPUT_ENABLED;
		t->text = text;
		t->text_len = (uint32_t)len;
		t->cursor = state->surrounding.cursor <= len ? state->surrounding.cursor : 0;
		t->anchor = state->surrounding.anchor <= len ? state->surrounding.anchor : 0;
		t->change_cause = state->text_change_cause <= 1 ? state->text_change_cause : 1;
		t->content_hint = state->content_type.hint & 0x3ff;
		t->content_purpose =
			state->content_type.purpose <= 13 ? state->content_type.purpose : 0;
		const struct wlr_box *r = &state->cursor_rectangle;
		t->rect_x = clamp(r->x + dx, -WIRE_MAX_DIM, 2 * WIRE_MAX_DIM);
		t->rect_y = clamp(r->y + dy, -WIRE_MAX_DIM, 2 * WIRE_MAX_DIM);
		t->rect_width = clamp(r->width, 0, WIRE_MAX_DIM);
		t->rect_height = clamp(r->height, 0, WIRE_MAX_DIM);
	}
	connection_send(conn, &msg);
}

/* Tells the viewer what the app's text input now is. */
static void announce(struct rc_text_input *ti)
{
	struct rc_server *server = ti->server;
	struct wlr_text_input_v3 *input = ti->input;
	struct rc_window *window =
		input->focused_surface ? window_of_surface(server, input->focused_surface) : NULL;
	int dx = 0, dy = 0;
	bool enabled = input->current_enabled && window && window_shown_to_input(window) &&
		window_surface_at(window, input->focused_surface, &dx, &dy);
	if (enabled) {
		ti->announced_window = window->id;
		send_state(server, window->id, true, &input->current, dx, dy);
	} else if (ti->announced_window) {
		send_state(server, ti->announced_window, false, NULL, 0, 0);
		ti->announced_window = 0;
	}
}

static void handle_enable(struct wl_listener *listener, void *data)
{
	struct rc_text_input *ti = wl_container_of(listener, ti, enable);
	forget(ti);
	announce(ti);
}

static void handle_commit(struct wl_listener *listener, void *data)
{
	struct rc_text_input *ti = wl_container_of(listener, ti, commit);
	if (ti->unconfirmed) {
		/* Once, now with the serial of this commit. */
		ti->unconfirmed = false;
		if (ti->preedit) {
			wlr_text_input_v3_send_preedit_string(ti->input, ti->preedit,
				ti->preedit_begin, ti->preedit_end);
		}
		wlr_text_input_v3_send_done(ti->input);
	}
	announce(ti);
}

static void handle_disable(struct wl_listener *listener, void *data)
{
	struct rc_text_input *ti = wl_container_of(listener, ti, disable);
	forget(ti);
	announce(ti);
}

static void handle_destroy(struct wl_listener *listener, void *data)
{
	struct rc_text_input *ti = wl_container_of(listener, ti, destroy);
	if (ti->announced_window) {
		send_state(ti->server, ti->announced_window, false, NULL, 0, 0);
	}
	wl_list_remove(&ti->enable.link);
	wl_list_remove(&ti->commit.link);
	wl_list_remove(&ti->disable.link);
	wl_list_remove(&ti->destroy.link);
	wl_list_remove(&ti->link);
	forget(ti);
	free(ti);
}

static struct wl_client *client_of(struct wlr_surface *surface)
{
	return surface ? wl_resource_get_client(surface->resource) : NULL;
}

/* A text input follows its client's keyboard focus. */
static void follow_focus(struct rc_text_input *ti, struct wlr_surface *focus)
{
	struct wlr_text_input_v3 *input = ti->input;
	if (input->focused_surface == focus) {
		return;
	}
	if (input->focused_surface) {
		wlr_text_input_v3_send_leave(input);
	}
	forget(ti);
	if (focus && client_of(focus) == wl_resource_get_client(input->resource)) {
		wlr_text_input_v3_send_enter(input, focus);
	}
	announce(ti);
}

static void handle_new_text_input(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, new_text_input);
	struct wlr_text_input_v3 *input = data;
	struct rc_text_input *ti = calloc(1, sizeof(*ti));
	if (!ti) {
		log_error("out of memory for a text input; the app gets no input method");
		return;
	}
	ti->server = server;
	ti->input = input;
	ti->enable.notify = handle_enable;
	wl_signal_add(&input->events.enable, &ti->enable);
	ti->commit.notify = handle_commit;
	wl_signal_add(&input->events.commit, &ti->commit);
	ti->disable.notify = handle_disable;
	wl_signal_add(&input->events.disable, &ti->disable);
	ti->destroy.notify = handle_destroy;
	wl_signal_add(&input->events.destroy, &ti->destroy);
	wl_list_insert(&server->text_inputs, &ti->link);
	follow_focus(ti, server->seat->keyboard_state.focused_surface);
}

static void handle_focus_change(struct wl_listener *listener, void *data)
{
	struct rc_server *server = wl_container_of(listener, server, text_input_focus);
	struct wlr_seat_keyboard_focus_change_event *event = data;
	struct rc_text_input *ti;
	wl_list_for_each(ti, &server->text_inputs, link)
	{
		follow_focus(ti, event->new_surface);
	}
}

bool textinput_init(struct rc_server *server)
{
	wl_list_init(&server->text_inputs);
	struct wlr_text_input_manager_v3 *manager =
		wlr_text_input_manager_v3_create(server->display);
	if (!manager) {
		return false;
	}
	server->new_text_input.notify = handle_new_text_input;
	wl_signal_add(&manager->events.text_input, &server->new_text_input);
	server->text_input_focus.notify = handle_focus_change;
	wl_signal_add(&server->seat->keyboard_state.events.focus_change, &server->text_input_focus);
	return true;
}

void textinput_finish(struct rc_server *server)
{
	wl_list_remove(&server->new_text_input.link);
	wl_list_remove(&server->text_input_focus.link);
}

void textinput_announce_all(struct rc_server *server)
{
	struct rc_text_input *ti;
	wl_list_for_each(ti, &server->text_inputs, link)
	{
		ti->announced_window = 0;
		announce(ti);
	}
}

void textinput_withdraw_all(struct rc_server *server)
{
	struct rc_text_input *ti;
	wl_list_for_each(ti, &server->text_inputs, link)
	{
		if (ti->announced_window) {
			send_state(server, ti->announced_window, false, NULL, 0, 0);
			ti->announced_window = 0;
		}
	}
}

bool textinput_event(struct rc_server *server, const struct wire_text_input_event *msg)
{
	struct rc_text_input *ti;
	wl_list_for_each(ti, &server->text_inputs, link)
	{
		if (ti->announced_window != msg->window || !ti->input->current_enabled) {
			continue;
		}
		/* One atomic change, as the input method made it. Wayland
		 * strings end at the first NUL: copy each into its own. */
		char preedit[WIRE_MAX_TEXT_INPUT + 1], commit[WIRE_MAX_TEXT_INPUT + 1];
		memcpy(preedit, msg->preedit, msg->preedit_len);
		preedit[msg->preedit_len] = '\0';
		memcpy(commit, msg->commit, msg->commit_len);
		commit[msg->commit_len] = '\0';
		if (msg->delete_before || msg->delete_after) {
			wlr_text_input_v3_send_delete_surrounding_text(ti->input,
				msg->delete_before, msg->delete_after);
		}
		if (msg->commit_len) {
			wlr_text_input_v3_send_commit_string(ti->input, commit);
		}
		bool has_preedit = msg->flags & WIRE_TEXT_INPUT_PREEDIT;
		if (has_preedit) {
			/* Without one, done clears the preedit. */
			wlr_text_input_v3_send_preedit_string(ti->input, preedit,
				msg->preedit_cursor_begin, msg->preedit_cursor_end);
		}
		wlr_text_input_v3_send_done(ti->input);
		sent(ti, has_preedit ? preedit : NULL, msg->preedit_cursor_begin,
			msg->preedit_cursor_end);
		log_debug("window %u: the input method's change (%u bytes committed) to the app",
			msg->window, msg->commit_len);
		return true;
	}
	/* The app disabled it meanwhile, or the window went: an ordinary race. */
	log_debug("window %u: an input method's change for no enabled text input", msg->window);
	return false;
}

bool textinput_plain(struct rc_server *server, const struct wire_text_input_event *msg)
{
	if (msg->commit_len == 0 || msg->commit_len > TEXTINPUT_PLAIN_MAX ||
		(msg->flags & WIRE_TEXT_INPUT_PREEDIT) || msg->delete_before || msg->delete_after) {
		return false;
	}
	struct rc_text_input *ti;
	wl_list_for_each(ti, &server->text_inputs, link)
	{
		if (ti->announced_window == msg->window && ti->preedit_shown &&
			ti->input->current_enabled) {
			/* The commit ends a composition: its preedit goes first. */
			wlr_text_input_v3_send_done(ti->input);
			sent(ti, NULL, 0, 0);
		}
	}
	return true;
}

bool textinput_commit(struct rc_server *server, const char *text)
{
	struct wlr_surface *focused = server->seat->keyboard_state.focused_surface;
	struct rc_text_input *ti;
	wl_list_for_each(ti, &server->text_inputs, link)
	{
		if (focused && ti->input->focused_surface == focused &&
			ti->input->current_enabled) {
			wlr_text_input_v3_send_commit_string(ti->input, text);
			wlr_text_input_v3_send_done(ti->input);
			return true;
		}
	}
	return false;
}
