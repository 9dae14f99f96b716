/* A tablet's tools from the viewer, to the app under them (tablet.h). */
#include <linux/input-event-codes.h>
#include <stdlib.h>
#include <wlr/backend/headless.h>
#include <wlr/types/wlr_input_device.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_tablet_tool.h>
#include <wlr/types/wlr_tablet_v2.h>
#include <wlr/version.h>

#include "input.h"
#include "log.h"
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

struct rc_tablet {
	struct wlr_tablet_manager_v2 *manager;
	struct wlr_input_device *device;
	struct wlr_tablet_v2_tablet *tablet;
	struct rc_tablet_tool tools[RC_TABLET_TOOLS];
	uint64_t uses;
};

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
}
