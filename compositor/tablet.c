/* A tablet's tools from the viewer, to the app under them (tablet.h). */
#include <linux/input-event-codes.h>
#include <stdlib.h>
#include <string.h>
#include <wlr/backend/headless.h>
#include <wlr/types/wlr_input_device.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_tablet_pad.h>
#include <wlr/types/wlr_tablet_tool.h>
#include <wlr/types/wlr_tablet_v2.h>
#include <wlr/version.h>

#include "input.h"
#include "log.h"
#include "monotonic.h"
#include "server.h"
#include "tablet.h"

struct rc_tablet_tool {
	bool used;
	struct wlr_tablet_tool tool;
	struct wlr_tablet_v2_tablet_tool *v2;
	uint32_t type, capabilities;
	uint64_t serial;
	uint64_t last_use;
	/* While the tip is down, the surface it went down on keeps it: through
	 * tablets (wlroots' focus, its window coordinates less the surface's),
	 * or as the pointer (emulated: the pointer's own grab). */
	bool down, emulated;
	uint32_t window;
	double grab_dx, grab_dy;
};

/* The viewer's pad: a headless pad device of its shape, whose groups are
 * ours (wlroots frees neither them nor their arrays). */
struct rc_tablet_pad {
	struct wlr_input_device *device;
	struct wlr_tablet_v2_tablet_pad *v2;
	struct wlr_tablet_pad_group groups[WIRE_MAX_PAD_GROUPS];
	unsigned int buttons[WIRE_MAX_PAD_BUTTONS], rings[WIRE_MAX_PAD_RINGS],
		strips[WIRE_MAX_PAD_STRIPS];
	uint32_t shape[5]; /* buttons, rings, strips, groups, modes */
	uint32_t window; /* the window its focus is on; 0: none */
	uint64_t pressed; /* its buttons held down */
	/* The backend's end takes the device (wl_display_destroy), before
	 * tablet_finish; our own emit of its destroy (dropping) does not. */
	struct wl_listener device_destroy;
	bool dropping;
};

struct rc_tablet {
	struct wlr_tablet_manager_v2 *manager;
	struct wlr_input_device *device;
	struct wlr_tablet_v2_tablet *tablet;
	struct rc_tablet_tool tools[RC_TABLET_TOOLS];
	uint64_t uses;
	struct rc_tablet_pad pad;
};

static void pad_drop(struct rc_tablet *t);

bool tablet_init(struct rc_server *server)
{
	struct rc_tablet *t = calloc(1, sizeof(*t));
	if (!t) {
		return false;
	}
	t->manager = wlr_tablet_v2_create(server->display);
	t->device = wlr_headless_add_input_device(server->backend, WLR_INPUT_DEVICE_TABLET_TOOL);
	if (!t->manager || !t->device) {
		log_error("cannot create the tablet");
		free(t);
		return false;
	}
	t->tablet = wlr_tablet_create(t->manager, server->seat, t->device);
	if (!t->tablet) {
		log_error("cannot create the tablet");
		free(t);
		return false;
	}
	server->tablet = t;
	return true;
}

static void tool_forget(struct rc_tablet_tool *tool)
{
	if (tool->used) {
		/* wlroots' tool goes with ours, and apps hear it removed. */
		wl_signal_emit(&tool->tool.events.destroy, &tool->tool);
		tool->used = false;
		tool->v2 = NULL;
	}
}

void tablet_finish(struct rc_server *server)
{
	struct rc_tablet *t = server->tablet;
	if (!t) {
		return;
	}
	for (int i = 0; i < RC_TABLET_TOOLS; i++) {
		tool_forget(&t->tools[i]);
	}
	pad_drop(t);
	free(t);
	server->tablet = NULL;
}

static enum wlr_tablet_tool_type wlr_type(uint32_t type)
{
	switch (type) {
	case WIRE_TABLET_ERASER:
		return WLR_TABLET_TOOL_TYPE_ERASER;
	case WIRE_TABLET_BRUSH:
		return WLR_TABLET_TOOL_TYPE_BRUSH;
	case WIRE_TABLET_PENCIL:
		return WLR_TABLET_TOOL_TYPE_PENCIL;
	case WIRE_TABLET_AIRBRUSH:
		return WLR_TABLET_TOOL_TYPE_AIRBRUSH;
	case WIRE_TABLET_MOUSE:
		return WLR_TABLET_TOOL_TYPE_MOUSE;
	case WIRE_TABLET_LENS:
		return WLR_TABLET_TOOL_TYPE_LENS;
	default: /* a pen, or a finger, which wlroots has no type for */
		return WLR_TABLET_TOOL_TYPE_PEN;
	}
}

/* The tool of that type and serial; made where there is none, in a free
 * place or the one used longest ago (which apps hear removed). */
static struct rc_tablet_tool *tool_for(struct rc_server *server, const struct wire_tablet *msg)
{
	struct rc_tablet *t = server->tablet;
	struct rc_tablet_tool *oldest = &t->tools[0];
	for (int i = 0; i < RC_TABLET_TOOLS; i++) {
		struct rc_tablet_tool *tool = &t->tools[i];
		if (tool->used && tool->type == msg->tool_type && tool->serial == msg->serial &&
			tool->capabilities == msg->capabilities) {
			tool->last_use = ++t->uses;
			return tool;
		}
		if (oldest->used && (!tool->used || tool->last_use < oldest->last_use)) {
			oldest = tool;
		}
	}
	tool_forget(oldest);
	struct rc_tablet_tool *tool = oldest;
	*tool = (struct rc_tablet_tool){.used = true,
		.type = msg->tool_type,
		.capabilities = msg->capabilities,
		.serial = msg->serial,
		.last_use = ++t->uses};
	uint32_t c = msg->capabilities;
	tool->tool = (struct wlr_tablet_tool){.type = wlr_type(msg->tool_type),
		.hardware_serial = msg->serial,
		.tilt = c & WIRE_TABLET_HAS_TILT,
		.pressure = c & WIRE_TABLET_HAS_PRESSURE,
		.distance = c & WIRE_TABLET_HAS_DISTANCE,
		.rotation = c & WIRE_TABLET_HAS_ROTATION,
		.slider = c & WIRE_TABLET_HAS_SLIDER,
		.wheel = c & WIRE_TABLET_HAS_WHEEL};
	wl_signal_init(&tool->tool.events.destroy);
	tool->v2 = wlr_tablet_tool_create(t->manager, server->seat, &tool->tool);
	if (!tool->v2) {
		tool->used = false;
		return NULL;
	}
	return tool;
}

/* The tool as the pointer, for an app that has not bound tablets. */
static void emulate(struct rc_server *server, struct rc_window *window, struct rc_tablet_tool *tool,
	const struct wire_tablet *msg)
{
	uint32_t c = msg->changed;
	if (c & (WIRE_TABLET_IN | WIRE_TABLET_MOTION)) {
		input_pointer_motion(server, window,
			&(struct wire_pointer_motion){.window = window->id,
				.x = msg->x,
				.y = msg->y});
	}
	if (c & WIRE_TABLET_DOWN) {
		input_pointer_button(server,
			&(struct wire_pointer_button){.button = BTN_LEFT, .state = 1});
	}
	if (c & WIRE_TABLET_BUTTON) {
		input_pointer_button(server,
			&(struct wire_pointer_button){.button = msg->button,
				.state = msg->button_state});
	}
	if ((c & WIRE_TABLET_UP) || (tool->down && (c & WIRE_TABLET_OUT))) {
		input_pointer_button(server,
			&(struct wire_pointer_button){.button = BTN_LEFT, .state = 0});
	}
	input_pointer_frame(server);
}

/* wlroots 0.15 sends a tool's wheel with its two arguments swapped (the
 * clicks as the degrees, 24.8, and the degrees as the clicks): they go
 * swapped in, so that they come out right. */
static void send_wheel(struct wlr_tablet_v2_tablet_tool *v2, int32_t degrees_24_8, int32_t clicks)
{
#if WLR_VERSION_MAJOR == 0 && WLR_VERSION_MINOR <= 15
	wlr_send_tablet_v2_tablet_tool_wheel(v2, clicks, degrees_24_8);
#else
	wlr_send_tablet_v2_tablet_tool_wheel(v2, degrees_24_8 / 256.0, clicks);
#endif
}

void tablet_event(struct rc_server *server, struct rc_window *window, const struct wire_tablet *msg)
{
	struct rc_tablet *t = server->tablet;
	struct rc_tablet_tool *tool = t ? tool_for(server, msg) : NULL;
	if (!tool) {
		return;
	}
	uint32_t c = msg->changed;
	double wx = msg->x / 256.0, wy = msg->y / 256.0;
	double sx = 0, sy = 0;
	struct wlr_surface *surface;
	if (tool->down && !tool->emulated) {
		/* The surface the tip went down on keeps it. */
		surface = tool->window == window->id ? tool->v2->focused_surface : NULL;
		sx = wx - tool->grab_dx;
		sy = wy - tool->grab_dy;
	} else {
		surface = window_surface_under(window, wx, wy, &sx, &sy);
	}
	bool tablets = surface && wlr_surface_accepts_tablet_v2(t->tablet, surface);
	if (tool->down ? tool->emulated : !tablets) {
		if (tool->v2->focused_surface) {
			wlr_send_tablet_v2_tablet_tool_proximity_out(tool->v2);
		}
		if (surface) {
			emulate(server, window, tool, msg);
		}
	} else if (surface && !(c & WIRE_TABLET_OUT)) {
		struct wlr_tablet_v2_tablet_tool *v2 = tool->v2;
		bool entered = v2->focused_surface != surface;
		wlr_send_tablet_v2_tablet_tool_proximity_in(v2, t->tablet, surface);
		if (entered || (c & WIRE_TABLET_MOTION)) {
			wlr_send_tablet_v2_tablet_tool_motion(v2, sx, sy);
		}
		if (c & WIRE_TABLET_PRESSURE) {
			wlr_send_tablet_v2_tablet_tool_pressure(v2, msg->pressure / 65535.0);
		}
		if (c & WIRE_TABLET_DISTANCE) {
			wlr_send_tablet_v2_tablet_tool_distance(v2, msg->distance / 65535.0);
		}
		if (c & WIRE_TABLET_TILT) {
			wlr_send_tablet_v2_tablet_tool_tilt(v2, msg->tilt_x / 256.0,
				msg->tilt_y / 256.0);
		}
		if (c & WIRE_TABLET_ROTATION) {
			wlr_send_tablet_v2_tablet_tool_rotation(v2, msg->rotation / 256.0);
		}
		if (c & WIRE_TABLET_SLIDER) {
			wlr_send_tablet_v2_tablet_tool_slider(v2, msg->slider / 65535.0);
		}
		if (c & WIRE_TABLET_WHEEL) {
			send_wheel(v2, msg->wheel, msg->wheel_clicks);
		}
		if (c & WIRE_TABLET_DOWN) {
			wlr_send_tablet_v2_tablet_tool_down(v2);
		}
		if (c & WIRE_TABLET_BUTTON) {
			wlr_send_tablet_v2_tablet_tool_button(v2, msg->button,
				msg->button_state ? ZWP_TABLET_PAD_V2_BUTTON_STATE_PRESSED
						  : ZWP_TABLET_PAD_V2_BUTTON_STATE_RELEASED);
		}
		if (c & WIRE_TABLET_UP) {
			wlr_send_tablet_v2_tablet_tool_up(v2);
		}
	} else if (tool->v2->focused_surface) {
		wlr_send_tablet_v2_tablet_tool_proximity_out(tool->v2);
	}
	if ((c & WIRE_TABLET_DOWN) && !tool->down && surface) {
		tool->down = true;
		tool->emulated = !tablets;
		tool->window = window->id;
		tool->grab_dx = wx - sx;
		tool->grab_dy = wy - sy;
	}
	if (c & (WIRE_TABLET_UP | WIRE_TABLET_OUT)) {
		tool->down = false;
	}
}

/* The pad lets go of its buttons and leaves the window it is on. */
static void pad_leave(struct rc_server *server)
{
	struct rc_tablet_pad *pad = &server->tablet->pad;
	if (!pad->v2) {
		return;
	}
	for (uint32_t b = 0; pad->pressed; b++) {
		if (pad->pressed & (UINT64_C(1) << b)) {
			wlr_send_tablet_v2_tablet_pad_button(pad->v2, b, monotonic_msec(),
				ZWP_TABLET_PAD_V2_BUTTON_STATE_RELEASED);
			pad->pressed &= ~(UINT64_C(1) << b);
		}
	}
	struct rc_window *window = pad->window ? window_from_id(server, pad->window) : NULL;
	struct wlr_surface *surface = window ? window_surface(window) : NULL;
	if (surface) {
		wlr_send_tablet_v2_tablet_pad_leave(pad->v2, surface);
	}
	pad->window = 0;
}

/* wlroots 0.15 frees a v2 pad without the modes of its groups: freed here,
 * just before it goes. */
static void free_v2_groups(struct rc_tablet_pad *pad)
{
#if WLR_VERSION_MAJOR == 0 && WLR_VERSION_MINOR <= 15
	free(pad->v2->groups);
	pad->v2->groups = NULL;
	pad->v2->group_count = 0;
#endif
}

static void pad_drop(struct rc_tablet *t)
{
	struct rc_tablet_pad *pad = &t->pad;
	if (pad->v2) {
		/* wlroots' v2 pad listens for its device's end: it goes, and
		 * apps hear it removed. The device stays the backend's, to be
		 * shaped anew. */
		free_v2_groups(pad);
		pad->dropping = true;
		wl_signal_emit(&pad->device->events.destroy, pad->device);
		pad->dropping = false;
	}
	pad->v2 = NULL;
	pad->window = 0;
	pad->pressed = 0;
}

static void handle_device_destroy(struct wl_listener *listener, void *data)
{
	struct rc_tablet_pad *pad = wl_container_of(listener, pad, device_destroy);
	if (pad->dropping) {
		return;
	}
	if (pad->v2) {
		free_v2_groups(pad); /* ours runs before the v2 pad's */
	}
	wl_list_remove(&pad->device_destroy.link);
	pad->device = NULL;
	pad->v2 = NULL;
	pad->window = 0;
	pad->pressed = 0;
}

/* Group g's share of total buttons (rings, strips) among groups, in turn:
 * written at *at, which moves past them; how many in *count. */
static unsigned int *share(unsigned int **at, uint32_t total, uint32_t groups, uint32_t g,
	size_t *count)
{
	unsigned int *mine = *at;
	*count = 0;
	for (uint32_t i = g; i < total; i += groups) {
		mine[(*count)++] = i;
	}
	*at += *count;
	return mine;
}

/* A pad of the viewer's shape: its buttons, rings and strips shared among
 * its groups in turn (the wire carries how many, not which group each
 * is in), each group with the modes the viewer's first has. */
static bool pad_shape(struct rc_tablet *t, struct rc_server *server,
	const struct wire_tablet_pad *msg)
{
	struct rc_tablet_pad *pad = &t->pad;
	uint32_t shape[5] = {msg->buttons, msg->rings, msg->strips, msg->groups ? msg->groups : 1,
		msg->modes};
	if (pad->v2 && !memcmp(shape, pad->shape, sizeof(shape))) {
		return true;
	}
	pad_drop(t);
	memcpy(pad->shape, shape, sizeof(shape));
	if (!pad->device) {
		pad->device =
			wlr_headless_add_input_device(server->backend, WLR_INPUT_DEVICE_TABLET_PAD);
		if (!pad->device || !pad->device->tablet_pad) {
			log_error("cannot create the tablet's pad");
			pad->device = NULL;
			return false;
		}
		pad->device_destroy.notify = handle_device_destroy;
		wl_signal_add(&pad->device->events.destroy, &pad->device_destroy);
	}
	/* Read by wlroots once, as its v2 pad is made: ours to change while
	 * there is none. */
	struct wlr_tablet_pad *wlr_pad = pad->device->tablet_pad;
	wl_list_init(&wlr_pad->groups);
	wlr_pad->button_count = shape[0];
	wlr_pad->ring_count = shape[1];
	wlr_pad->strip_count = shape[2];
	/* Button, ring or strip i is in group i mod groups. */
	uint32_t groups = shape[3];
	unsigned int *buttons = pad->buttons, *rings = pad->rings, *strips = pad->strips;
	for (uint32_t g = 0; g < groups; g++) {
		struct wlr_tablet_pad_group *group = &pad->groups[g];
		*group = (struct wlr_tablet_pad_group){.mode_count = shape[4] ? shape[4] : 1};
		group->buttons = share(&buttons, shape[0], groups, g, &group->button_count);
		group->rings = share(&rings, shape[1], groups, g, &group->ring_count);
		group->strips = share(&strips, shape[2], groups, g, &group->strip_count);
		wl_list_insert(wlr_pad->groups.prev, &group->link);
	}
	pad->v2 = wlr_tablet_pad_create(t->manager, server->seat, pad->device);
	if (!pad->v2) {
		log_error("cannot create the tablet's pad");
		pad_drop(t);
		return false;
	}
	log_debug("the tablet's pad: %u buttons, %u rings, %u strips, %u groups of %u modes",
		shape[0], shape[1], shape[2], shape[3], shape[4]);
	return true;
}

/* wlroots 0.15 sends a ring's position as the angle's 24.8 bits (the
 * degrees cast to an integer, a 256th of them): it goes in as 24.8, so that
 * it comes out right. Below 0: the finger left. */
static void send_ring(struct wlr_tablet_v2_tablet_pad *v2, uint32_t ring, int32_t degrees_24_8,
	bool finger)
{
#if WLR_VERSION_MAJOR == 0 && WLR_VERSION_MINOR <= 15
	double position = degrees_24_8;
#else
	double position = degrees_24_8 / 256.0;
#endif
	wlr_send_tablet_v2_tablet_pad_ring(v2, ring, degrees_24_8 < 0 ? -1 : position, finger,
		monotonic_msec());
}

void tablet_pad_event(struct rc_server *server, const struct wire_tablet_pad *msg)
{
	struct rc_tablet *t = server->tablet;
	if (!t) {
		return;
	}
	struct rc_tablet_pad *pad = &t->pad;
	if (msg->event == WIRE_PAD_ENTER) {
		pad_leave(server);
		struct rc_window *window = window_from_id(server, msg->window);
		struct wlr_surface *surface =
			window && window->mapped ? window_surface(window) : NULL;
		if (surface && pad_shape(t, server, msg)) {
			pad->window = window->id;
			wlr_send_tablet_v2_tablet_pad_enter(pad->v2, t->tablet, surface);
		}
		return;
	}
	if (msg->event == WIRE_PAD_LEAVE) {
		pad_leave(server);
		return;
	}
	if (!pad->v2 || !pad->window || msg->window != pad->window) {
		return; /* not where the pad is: an event from before its enter */
	}
	uint32_t n = msg->number;
	switch (msg->event) {
	case WIRE_PAD_BUTTON:
		if (n < pad->shape[0] && msg->value >= 0 && msg->value <= 1) {
			uint64_t bit = UINT64_C(1) << n;
			pad->pressed = msg->value ? pad->pressed | bit : pad->pressed & ~bit;
			wlr_send_tablet_v2_tablet_pad_button(pad->v2, n, monotonic_msec(),
				msg->value ? ZWP_TABLET_PAD_V2_BUTTON_STATE_PRESSED
					   : ZWP_TABLET_PAD_V2_BUTTON_STATE_RELEASED);
		}
		break;
	case WIRE_PAD_RING:
		if (n < pad->shape[1]) {
			send_ring(pad->v2, n, msg->value, msg->finger);
		}
		break;
	case WIRE_PAD_STRIP:
		if (n < pad->shape[2] && msg->value <= 65535) {
			wlr_send_tablet_v2_tablet_pad_strip(pad->v2, n,
				msg->value < 0 ? -1 : msg->value / 65535.0, msg->finger,
				monotonic_msec());
		}
		break;
	case WIRE_PAD_MODE:
		if (n < pad->shape[3] && msg->value >= 0 && (uint32_t)msg->value < pad->shape[4]) {
			wlr_send_tablet_v2_tablet_pad_mode(pad->v2, n, (uint32_t)msg->value,
				monotonic_msec());
		}
		break;
	}
}

void tablet_window_gone(struct rc_server *server, struct rc_window *window)
{
	if (server->tablet && server->tablet->pad.window == window->id) {
		pad_leave(server);
	}
}

void tablet_viewer_gone(struct rc_server *server)
{
	struct rc_tablet *t = server->tablet;
	for (int i = 0; t && i < RC_TABLET_TOOLS; i++) {
		struct rc_tablet_tool *tool = &t->tools[i];
		if (tool->used) {
			wlr_send_tablet_v2_tablet_tool_up(tool->v2);
			wlr_send_tablet_v2_tablet_tool_proximity_out(tool->v2);
			tool->down = false;
		}
	}
	if (t) {
		pad_leave(server);
	}
}
