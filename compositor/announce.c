/*
 * Window announcements, to every viewer that knows the window. A new viewer
 * gets window_new for every mapped window (the snapshot), each followed by its scale, size hints, decoration
 * and states, before the frame that maps it locally, so the local
 * compositor places it knowing them.
 */
#include <string.h>

#include "announce.h"
#include "input.h"
#include "log.h"

static int32_t clamp_dim(int32_t v, int32_t min)
{
	return v < min ? min : (v > WIRE_MAX_DIM ? WIRE_MAX_DIM : v);
}

static int32_t clamp_pos(int32_t v)
{
	return v < -WIRE_MAX_DIM ? -WIRE_MAX_DIM : (v > 2 * WIRE_MAX_DIM ? 2 * WIRE_MAX_DIM : v);
}

/* Tells the view's viewer about its window, after the window's last frame
 * to it. */
static void send_to(struct rc_view *view, struct wire_msg msg)
{
	connection_send_window(view->viewer->conn, &view->encoder.queued, &msg);
}

/* Tells every viewer that knows the window. */
static void send_all(struct rc_window *window, struct wire_msg msg)
{
	struct rc_view *view;
	window_for_each_view(view, window, i)
	{
		send_to(view, msg);
	}
}

/* The messages that follow window_new, and later changes of the same. */
static struct wire_msg scale_msg(const struct rc_window *window)
{
	return (struct wire_msg){.type = WIRE_WINDOW_SCALE,
		.window_scale = {.window = window->id, .scale = window->scale}};
}

static struct wire_msg hints_msg(const struct rc_window *window, const int32_t hints[4])
{
	return (struct wire_msg){.type = WIRE_WINDOW_HINTS,
		.window_hints = {window->id, hints[0], hints[1], hints[2], hints[3]}};
}

static struct wire_msg idle_msg(const struct rc_window *window)
{
	return (struct wire_msg){.type = WIRE_WINDOW_IDLE_INHIBIT,
		.window_idle_inhibit = {.window = window->id, .inhibit = window->idle_inhibited}};
}

static struct wire_msg feedback_msg(const struct rc_window *window)
{
	return (struct wire_msg){.type = WIRE_WINDOW_FEEDBACK,
		.window_feedback = {.window = window->id, .on = window->feedback_wanted}};
}

static struct wire_msg decoration_msg(const struct rc_window *window)
{
	return (struct wire_msg){.type = WIRE_WINDOW_DECORATION,
		.window_decoration = {.window = window->id,
			.mode = window->server_side ? WIRE_DECORATION_SERVER_SIDE
						    : WIRE_DECORATION_CLIENT_SIDE}};
}

static struct wire_msg request_msg(const struct rc_window *window, enum wire_request request)
{
	return (struct wire_msg){.type = WIRE_WINDOW_REQUEST,
		.window_request = {.window = window->id, .request = request}};
}

static struct wire_msg parent_msg(const struct rc_window *window, uint32_t parent)
{
	return (struct wire_msg){.type = WIRE_WINDOW_PARENT,
		.window_parent = {.window = window->id, .parent = parent}};
}

/* The toplevel's parent as the viewer knows it: 0 while the parent is not
 * announced to it (announce_window names it once it is). */
static uint32_t parent_id(struct rc_window *window, struct rc_viewer *viewer)
{
	struct rc_window *parent = window->impl->parent(window);
	return parent && window_view(parent, viewer) ? parent->id : 0;
}

/* A toplevel's size hints, within the wire's limits; false if it has none. */
static bool size_hints(struct rc_window *window, int32_t hints[4])
{
	if (window->popup || !window->impl->size_hints(window, hints)) {
		return false;
	}
	for (int i = 0; i < 4; i++) {
		hints[i] = clamp_dim(hints[i], 0);
	}
	return true;
}

static bool announce_popup(struct rc_window *window, struct rc_viewer *viewer, struct wire_msg *msg)
{
	struct rc_window *parent = window_from_id(window->server, window->parent_id);
	if (!parent || !window_view(parent, viewer)) {
		return false;
	}
	*msg = (struct wire_msg){.type = WIRE_POPUP_NEW};
	window->impl->place_popup(window, parent, &msg->popup_new);
	struct wire_popup_new *p = &msg->popup_new;
	p->window = window->id;
	p->parent = parent->id;
	p->anchor_x = clamp_dim(p->anchor_x, -WIRE_MAX_DIM);
	p->anchor_y = clamp_dim(p->anchor_y, -WIRE_MAX_DIM);
	p->anchor_width = clamp_dim(p->anchor_width, 0);
	p->anchor_height = clamp_dim(p->anchor_height, 0);
	p->width = clamp_dim(p->width, 1);
	p->height = clamp_dim(p->height, 1);
	p->anchor = p->anchor <= 8 ? p->anchor : 0;
	p->gravity = p->gravity <= 8 ? p->gravity : 0;
	p->constraint_adjustment &= 63;
	p->offset_x = clamp_dim(p->offset_x, -WIRE_MAX_DIM);
	p->offset_y = clamp_dim(p->offset_y, -WIRE_MAX_DIM);
	return true;
}

bool announce_window(struct rc_window *window, struct rc_view *view)
{
	struct rc_server *server = window->server;
	struct rc_viewer *viewer = view->viewer;
	if (!viewer->conn->welcomed || !window->mapped) {
		return false;
	}
	struct wire_msg msg;
	if (window->popup) {
		if (!announce_popup(window, viewer, &msg)) {
			return false;
		}
	} else {
		const char *title = window->impl->title(window);
		const char *app_id = window->impl->app_id(window);
		msg = (struct wire_msg){
			.type = WIRE_WINDOW_NEW,
			.window_new =
				{
					.window = window->id,
					.parent = parent_id(window, viewer),
					.width = clamp_dim(window->capture.geometry.width, 0),
					.height = clamp_dim(window->capture.geometry.height, 0),
					.title_len = (uint16_t)strnlen(title, WIRE_MAX_TITLE),
					.app_id_len = (uint16_t)strnlen(app_id, WIRE_MAX_APP_ID),
					.title = title,
					.app_id = app_id,
				},
		};
	}
	send_to(view, msg);
	view->announced = true;
	if (window->scale != 1) {
		send_to(view, scale_msg(window));
	}
	if (window->popup) {
		return true;
	}
	/* A new window gets the states the app asked for before it mapped; a
	 * snapshot, its states now. */
	bool first = !window->ever_announced;
	window->ever_announced = true;
	int32_t hints[4];
	if (size_hints(window, hints)) {
		memcpy(window->hints, hints, sizeof(hints));
		send_to(view, hints_msg(window, hints));
	}
	send_to(view, decoration_msg(window));
	if (window->idle_inhibited && viewer->conn->minor >= 9) {
		send_to(view, idle_msg(window));
	}
	if (window->feedback_wanted && viewer->conn->minor >= 11) {
		send_to(view, feedback_msg(window));
	}
	if (window->impl->wants_maximized(window, first)) {
		send_to(view, request_msg(window, WIRE_REQUEST_MAXIMIZE));
	}
	if (window->impl->wants_fullscreen(window, first)) {
		send_to(view, request_msg(window, WIRE_REQUEST_FULLSCREEN));
	}
	/* Children announced before their parent get it now. */
	struct rc_window *child;
	wl_list_for_each(child, &server->windows, link)
	{
		struct rc_view *child_view = window_view(child, viewer);
		if (!child->popup && child_view && child->impl->parent(child) == window) {
			send_to(child_view, parent_msg(child, window->id));
		}
	}
	return true;
}

void announce_destroy(struct rc_window *window)
{
	struct wire_msg msg = {.type = WIRE_WINDOW_DESTROY,
		.window_destroy = {.window = window->id}};
	send_all(window, msg);
	for (int i = 0; i < RC_MAX_VIEWERS; i++) {
		if (window->views[i]) {
			window->views[i]->announced = false;
		}
	}
}

static void send_text(struct rc_window *window, enum wire_type type, const char *text, uint32_t max)
{
	if (window->popup) {
		return;
	}
	uint32_t len = (uint32_t)strnlen(text, max);
	struct wire_msg msg = {.type = type};
	if (type == WIRE_WINDOW_TITLE) {
		msg.window_title = (struct wire_window_title){window->id, text, len};
	} else {
		msg.window_app_id = (struct wire_window_app_id){window->id, text, len};
	}
	send_all(window, msg);
}

void announce_title(struct rc_window *window)
{
	send_text(window, WIRE_WINDOW_TITLE, window->impl->title(window), WIRE_MAX_TITLE);
}

void announce_app_id(struct rc_window *window)
{
	send_text(window, WIRE_WINDOW_APP_ID, window->impl->app_id(window), WIRE_MAX_APP_ID);
}

void announce_parent(struct rc_window *window)
{
	if (window->popup) {
		return;
	}
	struct rc_view *view;
	window_for_each_view(view, window, i)
	{
		send_to(view, parent_msg(window, parent_id(window, view->viewer)));
	}
}

void announce_scale(struct rc_window *window)
{
	send_all(window, scale_msg(window));
}

void announce_request(struct rc_window *window, enum wire_request request)
{
	if (window->popup) {
		return;
	}
	send_all(window, request_msg(window, request));
}

void announce_grab(struct rc_window *window, enum wire_grab kind, uint32_t serial, uint32_t edges,
	int32_t x, int32_t y)
{
	static const char *const names[] = {"", "moved", "resized", "given its menu"};
	/* The press was the input viewer's: its compositor moves the window. */
	struct rc_view *view = window_view(window, window->server->input_viewer);
	struct rc_connection *conn = view ? input_connection(window->server) : NULL;
	uint32_t mark;
	if (!conn || conn->minor < 1 || window->popup) {
		return;
	}
	if (!input_press_mark(window->server, serial, &mark)) {
		log_debug("window %u asked to be %s for serial %u, no recent press", window->id,
			names[kind], serial);
		return;
	}
	struct wire_msg msg = {
		.type = WIRE_WINDOW_GRAB,
		.window_grab = {.window = window->id,
			.kind = kind,
			.mark = mark,
			.edges = kind == WIRE_GRAB_RESIZE ? edges : 0,
			.x = kind == WIRE_GRAB_MENU ? clamp_pos(x) : 0,
			.y = kind == WIRE_GRAB_MENU ? clamp_pos(y) : 0},
	};
	log_debug("window %u asks to be %s (press %u)", window->id, names[kind], mark);
	send_to(view, msg);
	if (kind != WIRE_GRAB_MENU) {
		input_press_taken(window->server, serial);
	}
}

void announce_hints(struct rc_window *window)
{
	int32_t hints[4];
	if (!size_hints(window, hints) || memcmp(hints, window->hints, sizeof(hints)) == 0) {
		return;
	}
	memcpy(window->hints, hints, sizeof(hints));
	send_all(window, hints_msg(window, hints));
}

static void send_all_since(struct rc_window *window, uint32_t minor, struct wire_msg msg)
{
	struct rc_view *view;
	window_for_each_view(view, window, i)
	{
		if (view->viewer->conn->minor >= minor) {
			send_to(view, msg);
		}
	}
}

void announce_idle(struct rc_window *window)
{
	send_all_since(window, 9, idle_msg(window));
}

void announce_feedback(struct rc_window *window)
{
	send_all_since(window, 11, feedback_msg(window));
}

void announce_activate(struct rc_window *window)
{
	send_all_since(window, 9,
		(struct wire_msg){.type = WIRE_WINDOW_ACTIVATE,
			.window_activate = {.window = window->id}});
}

void announce_decoration(struct rc_window *window)
{
	if (window->popup) {
		return;
	}
	send_all(window, decoration_msg(window));
}
