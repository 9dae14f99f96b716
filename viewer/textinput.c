/*
 * Input methods. The local compositor's text-input-v3 follows our keyboard
 * focus; when the remote app in the focused window takes text (the server's
 * text_input), the viewer enables text input on that window's surface with
 * the app's surrounding text, content type and caret rectangle, so the
 * local input method composes for it and places its candidates beside the
 * caret. Each done of the method goes back as one text_input_event.
 */
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "log.h"
#include "text-input-unstable-v3-client-protocol.h"
#include "textinput.h"
#include "viewer.h"

static void clear_pending(struct rv_text_input *ti)
{
	free(ti->preedit);
	free(ti->commit);
	ti->preedit = ti->commit = NULL;
	ti->has_preedit = false;
	ti->preedit_begin = ti->preedit_end = 0;
	ti->delete_before = ti->delete_after = 0;
}

/* The local text input mirrors the remote one of the window it entered. */
static void apply(struct rv_viewer *viewer)
{
	struct rv_text_input *ti = &viewer->text_input;
	struct rv_window *window = ti->entered;
	if (!ti->input) {
		return;
	}
	if (!window || !window->text_state.enabled) {
		if (ti->enabled) {
			zwp_text_input_v3_disable(ti->input);
			zwp_text_input_v3_commit(ti->input);
			ti->enabled = false;
		}
		return;
	}
	const struct rv_text_state *s = &window->text_state;
	if (!ti->enabled) {
		zwp_text_input_v3_enable(ti->input);
		ti->enabled = true;
	}
	zwp_text_input_v3_set_surrounding_text(ti->input, s->text ? s->text : "",
		(int32_t)s->cursor, (int32_t)s->anchor);
	zwp_text_input_v3_set_text_change_cause(ti->input, s->change_cause);
	zwp_text_input_v3_set_content_type(ti->input, s->content_hint, s->content_purpose);
	/* Window coordinates are our surface's: the picture is the window. */
	zwp_text_input_v3_set_cursor_rectangle(ti->input, s->rect_x, s->rect_y, s->rect_width,
		s->rect_height);
	zwp_text_input_v3_commit(ti->input);
}

void textinput_state(struct rv_window *window, const struct wire_text_input *msg)
{
	struct rv_text_state *s = &window->text_state;
	char *text = malloc((size_t)msg->text_len + 1);
	if (!text) {
		return;
	}
	memcpy(text, msg->text, msg->text_len);
	text[msg->text_len] = '\0';
	free(s->text);
	*s = (struct rv_text_state){
		.enabled = msg->flags & WIRE_TEXT_INPUT_ENABLED,
		.cursor = msg->cursor,
		.anchor = msg->anchor,
		.change_cause = msg->change_cause,
		.content_hint = msg->content_hint,
		.content_purpose = msg->content_purpose,
		.rect_x = msg->rect_x,
		.rect_y = msg->rect_y,
		.rect_width = msg->rect_width,
		.rect_height = msg->rect_height,
		.text = text,
	};
	log_debug("window %u: text input %s", window->id, s->enabled ? "enabled" : "disabled");
	if (window->viewer->text_input.entered == window) {
		apply(window->viewer);
	}
}

static void handle_enter(void *data, struct zwp_text_input_v3 *input, struct wl_surface *surface)
{
	struct rv_viewer *viewer = data;
	viewer->text_input.entered = window_of_surface(viewer, surface);
	viewer->text_input.enabled = false; /* a new focus starts disabled */
	apply(viewer);
}

static void handle_leave(void *data, struct zwp_text_input_v3 *input, struct wl_surface *surface)
{
	struct rv_viewer *viewer = data;
	struct rv_text_input *ti = &viewer->text_input;
	if (ti->enabled) {
		zwp_text_input_v3_disable(ti->input);
		zwp_text_input_v3_commit(ti->input);
	}
	ti->entered = NULL;
	ti->enabled = false;
	clear_pending(ti);
}

static char *copy_limited(const char *text)
{
	/* Longer than the wire takes: cut at a UTF-8 character's start. */
	size_t len = text ? strlen(text) : 0;
	if (len > WIRE_MAX_TEXT_INPUT) {
		len = WIRE_MAX_TEXT_INPUT;
		while (len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80) {
			len--;
		}
	}
	char *copy = malloc(len + 1);
	if (copy) {
		memcpy(copy, text ? text : "", len);
		copy[len] = '\0';
	}
	return copy;
}

static void handle_preedit(void *data, struct zwp_text_input_v3 *input, const char *text,
	int32_t cursor_begin, int32_t cursor_end)
{
	struct rv_text_input *ti = &((struct rv_viewer *)data)->text_input;
	free(ti->preedit);
	ti->preedit = copy_limited(text);
	ti->has_preedit = ti->preedit != NULL;
	ti->preedit_begin = cursor_begin;
	ti->preedit_end = cursor_end;
}

static void handle_commit(void *data, struct zwp_text_input_v3 *input, const char *text)
{
	struct rv_text_input *ti = &((struct rv_viewer *)data)->text_input;
	free(ti->commit);
	ti->commit = copy_limited(text);
}

static void handle_delete(void *data, struct zwp_text_input_v3 *input, uint32_t before,
	uint32_t after)
{
	struct rv_text_input *ti = &((struct rv_viewer *)data)->text_input;
	ti->delete_before = before <= WIRE_MAX_TEXT_INPUT ? before : WIRE_MAX_TEXT_INPUT;
	ti->delete_after = after <= WIRE_MAX_TEXT_INPUT ? after : WIRE_MAX_TEXT_INPUT;
}

static int32_t caret(int32_t v, uint32_t len)
{
	return v < -1 ? -1 : (v > (int32_t)len ? (int32_t)len : v);
}

static void handle_done(void *data, struct zwp_text_input_v3 *input, uint32_t serial)
{
	struct rv_viewer *viewer = data;
	struct rv_text_input *ti = &viewer->text_input;
	struct rv_window *window = ti->entered;
	if (window && window->text_state.enabled && viewer->connection.server_minor >= 1) {
		uint32_t preedit_len = ti->preedit ? (uint32_t)strlen(ti->preedit) : 0;
		struct wire_msg msg = {
			.type = WIRE_TEXT_INPUT_EVENT,
			.text_input_event =
				{
					.window = window->id,
					.flags = ti->has_preedit ? WIRE_TEXT_INPUT_PREEDIT : 0,
					.preedit_cursor_begin =
						caret(ti->preedit_begin, preedit_len),
					.preedit_cursor_end = caret(ti->preedit_end, preedit_len),
					.delete_before = ti->delete_before,
					.delete_after = ti->delete_after,
					.preedit_len = (uint16_t)preedit_len,
					.preedit = ti->preedit ? ti->preedit : "",
					.commit_len = ti->commit ? (uint16_t)strlen(ti->commit) : 0,
					.commit = ti->commit ? ti->commit : "",
				},
		};
		connection_send(viewer, &msg);
		log_debug("window %u: the input method's change to the app", window->id);
	} else {
		log_debug("an input method's change for no remote text input (%s)",
			window ? "disabled" : "no window");
	}
	clear_pending(ti);
}

static const struct zwp_text_input_v3_listener text_input_listener = {
	.enter = handle_enter,
	.leave = handle_leave,
	.preedit_string = handle_preedit,
	.commit_string = handle_commit,
	.delete_surrounding_text = handle_delete,
	.done = handle_done,
};

void textinput_bind(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name)
{
	viewer->text_input.manager =
		wl_registry_bind(registry, name, &zwp_text_input_manager_v3_interface, 1);
}

void textinput_seat(struct rv_viewer *viewer)
{
	struct rv_text_input *ti = &viewer->text_input;
	if (ti->manager && viewer->seat.seat && !ti->input) {
		ti->input =
			zwp_text_input_manager_v3_get_text_input(ti->manager, viewer->seat.seat);
		zwp_text_input_v3_add_listener(ti->input, &text_input_listener, viewer);
	}
}

void textinput_window_gone(struct rv_window *window)
{
	struct rv_text_input *ti = &window->viewer->text_input;
	if (ti->entered == window) {
		ti->entered = NULL;
	}
	free(window->text_state.text);
	window->text_state = (struct rv_text_state){0};
}

void textinput_link_down(struct rv_viewer *viewer)
{
	/* The snapshot of the next link says again who takes text. */
	struct rv_window *window;
	wl_list_for_each(window, &viewer->windows, link)
	{
		free(window->text_state.text);
		window->text_state = (struct rv_text_state){0};
	}
	apply(viewer);
}

void textinput_finish(struct rv_viewer *viewer)
{
	struct rv_text_input *ti = &viewer->text_input;
	clear_pending(ti);
	if (ti->input) {
		zwp_text_input_v3_destroy(ti->input);
	}
	if (ti->manager) {
		zwp_text_input_manager_v3_destroy(ti->manager);
	}
	ti->input = NULL;
	ti->manager = NULL;
}
