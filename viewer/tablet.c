/* The local tablets' tools, to the session (tablet.h). */
#include <stdlib.h>

#include "connection.h"
#include "tablet-unstable-v2-client-protocol.h"
#include "tablet.h"

/* Each object the tablet seat gave us, to let go of at the end. */
struct rv_tablet_object {
	struct wl_list link; /* rv_seat::tablet_objects */
	struct rv_viewer *viewer;
	struct wl_proxy *proxy;
	void (*destroy)(struct wl_proxy *proxy);
	/* A tool's: what it is, and the frame being gathered. */
	struct wire_tablet frame;
	/* A pad's: its shape and where its focus is; a ring's or a strip's:
	 * its number and the event being gathered. Rings, strips and groups
	 * go with their pad (owner). */
	struct wire_tablet_pad pad;
	struct rv_tablet_object *owner;
};

static void object_destroy(struct rv_tablet_object *o)
{
	o->destroy(o->proxy);
	wl_list_remove(&o->link);
	free(o);
}

static void destroy_tablet(struct wl_proxy *p)
{
	zwp_tablet_v2_destroy((struct zwp_tablet_v2 *)p);
}

static void destroy_tool(struct wl_proxy *p)
{
	zwp_tablet_tool_v2_destroy((struct zwp_tablet_tool_v2 *)p);
}

static void destroy_pad(struct wl_proxy *p)
{
	zwp_tablet_pad_v2_destroy((struct zwp_tablet_pad_v2 *)p);
}

static struct rv_tablet_object *object_new(struct rv_viewer *viewer, void *proxy,
	void (*destroy)(struct wl_proxy *))
{
	struct rv_tablet_object *o = calloc(1, sizeof(*o));
	if (!o) {
		destroy(proxy);
		return NULL;
	}
	o->viewer = viewer;
	o->proxy = proxy;
	o->destroy = destroy;
	wl_list_insert(&viewer->seat.tablet_objects, &o->link);
	return o;
}

/* A tool's frame, to the session: over a window of ours, to a session that
 * knows tablets. */
static void send_frame(struct rv_tablet_object *o)
{
	struct rv_viewer *viewer = o->viewer;
	struct wire_tablet *f = &o->frame;
	if (f->changed && f->window && viewer->connection.server_minor >= 10) {
		connection_send(viewer, &(struct wire_msg){.type = WIRE_TABLET, .tablet = *f});
	}
	if (f->changed & WIRE_TABLET_OUT) {
		f->window = 0;
	}
	f->changed = 0;
	f->wheel = 0;
	f->wheel_clicks = 0;
}

static void tool_type(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t type)
{
	struct rv_tablet_object *o = data;
	if (type >= WIRE_TABLET_PEN && type <= WIRE_TABLET_LENS) {
		o->frame.tool_type = type;
	}
}

static void tool_serial(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t hi, uint32_t lo)
{
	struct rv_tablet_object *o = data;
	o->frame.serial = (uint64_t)hi << 32 | lo;
}

static void tool_id_wacom(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t hi, uint32_t lo)
{
}

static void tool_capability(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t capability)
{
	/* The protocol's 1 (tilt) to 6 (wheel) are the wire's bits 0 to 5. */
	struct rv_tablet_object *o = data;
	if (capability >= 1 && capability <= 6) {
		o->frame.capabilities |= 1u << (capability - 1);
	}
}

static void tool_done(void *data, struct zwp_tablet_tool_v2 *tool)
{
}

static void tool_removed(void *data, struct zwp_tablet_tool_v2 *tool)
{
	object_destroy(data);
}

static void tool_proximity_in(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t serial,
	struct zwp_tablet_v2 *tablet, struct wl_surface *surface)
{
	struct rv_tablet_object *o = data;
	struct rv_window *window = surface ? window_of_surface(o->viewer, surface) : NULL;
	o->frame.window = window ? window->id : 0;
	o->frame.changed |= WIRE_TABLET_IN;
}

static void tool_proximity_out(void *data, struct zwp_tablet_tool_v2 *tool)
{
	struct rv_tablet_object *o = data;
	o->frame.changed |= WIRE_TABLET_OUT;
}

static void tool_down(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t serial)
{
	struct rv_tablet_object *o = data;
	o->viewer->seat.input_serial = serial;
	o->frame.changed |= WIRE_TABLET_DOWN;
}

static void tool_up(void *data, struct zwp_tablet_tool_v2 *tool)
{
	struct rv_tablet_object *o = data;
	o->frame.changed |= WIRE_TABLET_UP;
}

static int32_t clamp(int32_t v, int32_t min, int32_t max)
{
	return v < min ? min : (v > max ? max : v);
}

static void tool_motion(void *data, struct zwp_tablet_tool_v2 *tool, wl_fixed_t x, wl_fixed_t y)
{
	/* wl_fixed_t is 24.8, as on the wire. */
	struct rv_tablet_object *o = data;
	o->frame.x = clamp(x, WIRE_MIN_POSITION, WIRE_MAX_POSITION);
	o->frame.y = clamp(y, WIRE_MIN_POSITION, WIRE_MAX_POSITION);
	o->frame.changed |= WIRE_TABLET_MOTION;
}

static void tool_pressure(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t pressure)
{
	struct rv_tablet_object *o = data;
	o->frame.pressure = pressure > 65535 ? 65535 : pressure;
	o->frame.changed |= WIRE_TABLET_PRESSURE;
}

static void tool_distance(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t distance)
{
	struct rv_tablet_object *o = data;
	o->frame.distance = distance > 65535 ? 65535 : distance;
	o->frame.changed |= WIRE_TABLET_DISTANCE;
}

static void tool_tilt(void *data, struct zwp_tablet_tool_v2 *tool, wl_fixed_t x, wl_fixed_t y)
{
	struct rv_tablet_object *o = data;
	o->frame.tilt_x = clamp(x, -90 * 256, 90 * 256);
	o->frame.tilt_y = clamp(y, -90 * 256, 90 * 256);
	o->frame.changed |= WIRE_TABLET_TILT;
}

static void tool_rotation(void *data, struct zwp_tablet_tool_v2 *tool, wl_fixed_t degrees)
{
	struct rv_tablet_object *o = data;
	int32_t r = degrees % (360 * 256);
	o->frame.rotation = r < 0 ? r + 360 * 256 : r;
	o->frame.changed |= WIRE_TABLET_ROTATION;
}

static void tool_slider(void *data, struct zwp_tablet_tool_v2 *tool, int32_t position)
{
	struct rv_tablet_object *o = data;
	o->frame.slider = clamp(position, -65535, 65535);
	o->frame.changed |= WIRE_TABLET_SLIDER;
}

static void tool_wheel(void *data, struct zwp_tablet_tool_v2 *tool, wl_fixed_t degrees,
	int32_t clicks)
{
	struct rv_tablet_object *o = data;
	o->frame.wheel += degrees;
	o->frame.wheel_clicks += clicks;
	o->frame.changed |= WIRE_TABLET_WHEEL;
}

static void tool_button(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t serial,
	uint32_t button, uint32_t state)
{
	struct rv_tablet_object *o = data;
	if (button > 0x2ff) {
		return;
	}
	if (o->frame.changed & WIRE_TABLET_BUTTON) {
		/* One button a message: the one before goes first. */
		uint32_t rest =
			o->frame.changed & ~(WIRE_TABLET_BUTTON | WIRE_TABLET_UP | WIRE_TABLET_OUT);
		uint32_t later = o->frame.changed & (WIRE_TABLET_UP | WIRE_TABLET_OUT);
		o->frame.changed = rest | WIRE_TABLET_BUTTON;
		send_frame(o);
		o->frame.changed = later;
	}
	if (state) {
		o->viewer->seat.input_serial = serial;
	}
	o->frame.button = button;
	o->frame.button_state = state ? 1 : 0;
	o->frame.changed |= WIRE_TABLET_BUTTON;
}

static void tool_frame(void *data, struct zwp_tablet_tool_v2 *tool, uint32_t time)
{
	send_frame(data);
}

static const struct zwp_tablet_tool_v2_listener tool_listener = {
	.type = tool_type,
	.hardware_serial = tool_serial,
	.hardware_id_wacom = tool_id_wacom,
	.capability = tool_capability,
	.done = tool_done,
	.removed = tool_removed,
	.proximity_in = tool_proximity_in,
	.proximity_out = tool_proximity_out,
	.down = tool_down,
	.up = tool_up,
	.motion = tool_motion,
	.pressure = tool_pressure,
	.distance = tool_distance,
	.tilt = tool_tilt,
	.rotation = tool_rotation,
	.slider = tool_slider,
	.wheel = tool_wheel,
	.button = tool_button,
	.frame = tool_frame,
};

static void tablet_name(void *data, struct zwp_tablet_v2 *tablet, const char *name)
{
}

static void tablet_id(void *data, struct zwp_tablet_v2 *tablet, uint32_t vid, uint32_t pid)
{
}

static void tablet_path(void *data, struct zwp_tablet_v2 *tablet, const char *path)
{
}

static void tablet_done(void *data, struct zwp_tablet_v2 *tablet)
{
}

static void tablet_removed(void *data, struct zwp_tablet_v2 *tablet)
{
	object_destroy(data);
}

static const struct zwp_tablet_v2_listener tablet_listener = {
	.name = tablet_name,
	.id = tablet_id,
	.path = tablet_path,
	.done = tablet_done,
	.removed = tablet_removed,
};

static void seat_tablet_added(void *data, struct zwp_tablet_seat_v2 *seat,
	struct zwp_tablet_v2 *tablet)
{
	struct rv_tablet_object *o = object_new(data, tablet, destroy_tablet);
	if (o) {
		zwp_tablet_v2_add_listener(tablet, &tablet_listener, o);
	}
}

static void seat_tool_added(void *data, struct zwp_tablet_seat_v2 *seat,
	struct zwp_tablet_tool_v2 *tool)
{
	struct rv_tablet_object *o = object_new(data, tool, destroy_tool);
	if (o) {
		o->frame.tool_type = WIRE_TABLET_PEN;
		zwp_tablet_tool_v2_add_listener(tool, &tool_listener, o);
	}
}

static void destroy_group(struct wl_proxy *p)
{
	zwp_tablet_pad_group_v2_destroy((struct zwp_tablet_pad_group_v2 *)p);
}

static void destroy_ring(struct wl_proxy *p)
{
	zwp_tablet_pad_ring_v2_destroy((struct zwp_tablet_pad_ring_v2 *)p);
}

static void destroy_strip(struct wl_proxy *p)
{
	zwp_tablet_pad_strip_v2_destroy((struct zwp_tablet_pad_strip_v2 *)p);
}

/* An event of a pad, to the session: where its focus is on a window of
 * ours, to a session that knows pads. */
static void pad_send(struct rv_tablet_object *pad, uint32_t event, uint32_t number, int32_t value,
	bool finger)
{
	struct rv_viewer *viewer = pad->viewer;
	if (!pad->pad.window || viewer->connection.server_minor < 12) {
		return;
	}
	struct wire_tablet_pad m = pad->pad;
	m.event = event;
	m.number = number;
	m.value = value;
	m.finger = finger;
	connection_send(viewer, &(struct wire_msg){.type = WIRE_TABLET_PAD, .tablet_pad = m});
}

/* A ring's or strip's event, gathered until its frame. */
static void dial_source(struct rv_tablet_object *o, uint32_t source)
{
	/* Both protocols' sources: 1 a finger. */
	o->pad.finger = source == ZWP_TABLET_PAD_RING_V2_SOURCE_FINGER;
}

static void dial_value(struct rv_tablet_object *o, uint32_t event, int32_t value)
{
	o->pad.value = value; /* -1: the finger left */
	o->pad.event = event;
}

static void dial_frame(struct rv_tablet_object *o)
{
	if (o->pad.event && o->pad.number != UINT32_MAX) {
		pad_send(o->owner, o->pad.event, o->pad.number, o->pad.value, o->pad.finger);
	}
	o->pad.event = 0;
}

static void ring_source(void *data, struct zwp_tablet_pad_ring_v2 *ring, uint32_t source)
{
	dial_source(data, source);
}

static void ring_angle(void *data, struct zwp_tablet_pad_ring_v2 *ring, wl_fixed_t degrees)
{
	/* wl_fixed_t is 24.8, as on the wire. */
	int32_t d = degrees % (360 * 256);
	dial_value(data, WIRE_PAD_RING, d < 0 ? d + 360 * 256 : d);
}

static void ring_stop(void *data, struct zwp_tablet_pad_ring_v2 *ring)
{
	dial_value(data, WIRE_PAD_RING, -1);
}

static void ring_frame(void *data, struct zwp_tablet_pad_ring_v2 *ring, uint32_t time)
{
	dial_frame(data);
}

static const struct zwp_tablet_pad_ring_v2_listener ring_listener = {
	.source = ring_source,
	.angle = ring_angle,
	.stop = ring_stop,
	.frame = ring_frame,
};

static void strip_source(void *data, struct zwp_tablet_pad_strip_v2 *strip, uint32_t source)
{
	dial_source(data, source);
}

static void strip_position(void *data, struct zwp_tablet_pad_strip_v2 *strip, uint32_t position)
{
	dial_value(data, WIRE_PAD_STRIP, position > 65535 ? 65535 : (int32_t)position);
}

static void strip_stop(void *data, struct zwp_tablet_pad_strip_v2 *strip)
{
	dial_value(data, WIRE_PAD_STRIP, -1);
}

static void strip_frame(void *data, struct zwp_tablet_pad_strip_v2 *strip, uint32_t time)
{
	dial_frame(data);
}

static const struct zwp_tablet_pad_strip_v2_listener strip_listener = {
	.source = strip_source,
	.position = strip_position,
	.stop = strip_stop,
	.frame = strip_frame,
};

static void group_buttons(void *data, struct zwp_tablet_pad_group_v2 *group,
	struct wl_array *buttons)
{
	/* The pad numbers its buttons over all groups: the wire does too. */
}

/* A ring or strip of the group's pad, numbered in the order they come. */
static void dial_added(struct rv_tablet_object *group, void *proxy, bool ring)
{
	struct rv_tablet_object *pad = group->owner;
	uint32_t *count = ring ? &pad->pad.rings : &pad->pad.strips;
	uint32_t max = ring ? WIRE_MAX_PAD_RINGS : WIRE_MAX_PAD_STRIPS;
	struct rv_tablet_object *o =
		object_new(group->viewer, proxy, ring ? destroy_ring : destroy_strip);
	if (!o) {
		return;
	}
	o->owner = pad;
	/* More than the wire carries: not heard (it goes with its pad). */
	o->pad.number = *count < max ? (*count)++ : UINT32_MAX;
	if (ring) {
		zwp_tablet_pad_ring_v2_add_listener(proxy, &ring_listener, o);
	} else {
		zwp_tablet_pad_strip_v2_add_listener(proxy, &strip_listener, o);
	}
}

static void group_ring(void *data, struct zwp_tablet_pad_group_v2 *group,
	struct zwp_tablet_pad_ring_v2 *ring)
{
	dial_added(data, ring, true);
}

static void group_strip(void *data, struct zwp_tablet_pad_group_v2 *group,
	struct zwp_tablet_pad_strip_v2 *strip)
{
	dial_added(data, strip, false);
}

static void group_modes(void *data, struct zwp_tablet_pad_group_v2 *group, uint32_t modes)
{
	struct rv_tablet_object *o = data;
	struct wire_tablet_pad *shape = &o->owner->pad;
	modes = modes > WIRE_MAX_PAD_MODES ? WIRE_MAX_PAD_MODES : modes;
	shape->modes = modes > shape->modes ? modes : shape->modes;
}

static void group_done(void *data, struct zwp_tablet_pad_group_v2 *group)
{
}

static void group_mode_switch(void *data, struct zwp_tablet_pad_group_v2 *group, uint32_t time,
	uint32_t serial, uint32_t mode)
{
	struct rv_tablet_object *o = data;
	if (o->pad.number < WIRE_MAX_PAD_GROUPS && mode < WIRE_MAX_PAD_MODES) {
		pad_send(o->owner, WIRE_PAD_MODE, o->pad.number, (int32_t)mode, false);
	}
}

static const struct zwp_tablet_pad_group_v2_listener group_listener = {
	.buttons = group_buttons,
	.ring = group_ring,
	.strip = group_strip,
	.modes = group_modes,
	.done = group_done,
	.mode_switch = group_mode_switch,
};

static void pad_group(void *data, struct zwp_tablet_pad_v2 *pad,
	struct zwp_tablet_pad_group_v2 *group)
{
	struct rv_tablet_object *p = data;
	struct rv_tablet_object *o = object_new(p->viewer, group, destroy_group);
	if (o) {
		o->owner = p;
		o->pad.number = p->pad.groups;
		if (p->pad.groups < WIRE_MAX_PAD_GROUPS) {
			p->pad.groups++;
		}
		zwp_tablet_pad_group_v2_add_listener(group, &group_listener, o);
	}
}

static void pad_path(void *data, struct zwp_tablet_pad_v2 *pad, const char *path)
{
}

static void pad_buttons(void *data, struct zwp_tablet_pad_v2 *pad, uint32_t buttons)
{
	struct rv_tablet_object *o = data;
	o->pad.buttons = buttons > WIRE_MAX_PAD_BUTTONS ? WIRE_MAX_PAD_BUTTONS : buttons;
}

static void pad_done(void *data, struct zwp_tablet_pad_v2 *pad)
{
}

static void pad_button(void *data, struct zwp_tablet_pad_v2 *pad, uint32_t time, uint32_t button,
	uint32_t state)
{
	struct rv_tablet_object *o = data;
	if (button < o->pad.buttons) {
		pad_send(o, WIRE_PAD_BUTTON, button, state ? 1 : 0, false);
	}
}

static void pad_enter(void *data, struct zwp_tablet_pad_v2 *pad, uint32_t serial,
	struct zwp_tablet_v2 *tablet, struct wl_surface *surface)
{
	struct rv_tablet_object *o = data;
	struct rv_window *window = surface ? window_of_surface(o->viewer, surface) : NULL;
	o->pad.window = window ? window->id : 0;
	pad_send(o, WIRE_PAD_ENTER, 0, 0, false);
}

static void pad_leave(void *data, struct zwp_tablet_pad_v2 *pad, uint32_t serial,
	struct wl_surface *surface)
{
	struct rv_tablet_object *o = data;
	pad_send(o, WIRE_PAD_LEAVE, 0, 0, false);
	o->pad.window = 0;
}

static void pad_removed(void *data, struct zwp_tablet_pad_v2 *pad)
{
	struct rv_tablet_object *o = data, *other, *tmp;
	pad_send(o, WIRE_PAD_LEAVE, 0, 0, false);
	/* Its groups, rings and strips go with it (a group's first). */
	wl_list_for_each_safe(other, tmp, &o->viewer->seat.tablet_objects, link)
	{
		if (other->owner == o && other->destroy != destroy_group) {
			object_destroy(other);
		}
	}
	wl_list_for_each_safe(other, tmp, &o->viewer->seat.tablet_objects, link)
	{
		if (other->owner == o) {
			object_destroy(other);
		}
	}
	object_destroy(o);
}

static const struct zwp_tablet_pad_v2_listener pad_listener = {
	.group = pad_group,
	.path = pad_path,
	.buttons = pad_buttons,
	.done = pad_done,
	.button = pad_button,
	.enter = pad_enter,
	.leave = pad_leave,
	.removed = pad_removed,
};

static void seat_pad_added(void *data, struct zwp_tablet_seat_v2 *seat,
	struct zwp_tablet_pad_v2 *pad)
{
	struct rv_tablet_object *o = object_new(data, pad, destroy_pad);
	if (o) {
		zwp_tablet_pad_v2_add_listener(pad, &pad_listener, o);
	}
}

static const struct zwp_tablet_seat_v2_listener seat_listener = {
	.tablet_added = seat_tablet_added,
	.tool_added = seat_tool_added,
	.pad_added = seat_pad_added,
};

void tablet_bind(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name)
{
	if (viewer->seat.tablet_manager) {
		return;
	}
	viewer->seat.tablet_manager =
		wl_registry_bind(registry, name, &zwp_tablet_manager_v2_interface, 1);
	tablet_want(viewer);
}

void tablet_want(struct rv_viewer *viewer)
{
	struct rv_seat *seat = &viewer->seat;
	if (!seat->tablet_manager || !seat->seat || seat->tablet_seat) {
		return;
	}
	seat->tablet_seat = zwp_tablet_manager_v2_get_tablet_seat(seat->tablet_manager, seat->seat);
	zwp_tablet_seat_v2_add_listener(seat->tablet_seat, &seat_listener, viewer);
}

void tablet_window_gone(struct rv_viewer *viewer, struct rv_window *window)
{
	struct rv_tablet_object *o;
	wl_list_for_each(o, &viewer->seat.tablet_objects, link)
	{
		if (o->destroy == destroy_tool && o->frame.window == window->id) {
			o->frame.window = 0;
		}
		if (o->destroy == destroy_pad && o->pad.window == window->id) {
			o->pad.window = 0;
		}
	}
}

void tablet_link_up(struct rv_viewer *viewer)
{
	struct rv_tablet_object *o;
	wl_list_for_each(o, &viewer->seat.tablet_objects, link)
	{
		if (o->destroy == destroy_pad) {
			pad_send(o, WIRE_PAD_ENTER, 0, 0, false);
		}
	}
}

void tablet_finish(struct rv_viewer *viewer)
{
	struct rv_seat *seat = &viewer->seat;
	struct rv_tablet_object *o, *tmp;
	wl_list_for_each_safe(o, tmp, &seat->tablet_objects, link)
	{
		object_destroy(o);
	}
	if (seat->tablet_seat) {
		zwp_tablet_seat_v2_destroy(seat->tablet_seat);
		seat->tablet_seat = NULL;
	}
	if (seat->tablet_manager) {
		zwp_tablet_manager_v2_destroy(seat->tablet_manager);
		seat->tablet_manager = NULL;
	}
}
