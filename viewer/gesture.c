/* The local touchpad's gestures, to the session (gesture.h). */
#include "connection.h"
#include "gesture.h"
#include "pointer-gestures-unstable-v1-client-protocol.h"

static void send(struct rv_viewer *viewer, struct wire_gesture g)
{
	/* Over a window of ours, to a session that knows gestures. */
	if (!viewer->seat.pointer_focus || viewer->connection.server_minor < 9) {
		return;
	}
	connection_send(viewer, &(struct wire_msg){.type = WIRE_GESTURE, .gesture = g});
}

static uint32_t fingers(uint32_t n)
{
	return n < WIRE_MAX_FINGERS ? n : WIRE_MAX_FINGERS;
}

static void swipe_begin(void *data, struct zwp_pointer_gesture_swipe_v1 *g, uint32_t serial,
	uint32_t time, struct wl_surface *surface, uint32_t n)
{
	send(data,
		(struct wire_gesture){.kind = WIRE_GESTURE_SWIPE,
			.phase = WIRE_GESTURE_BEGIN,
			.fingers = fingers(n)});
}

static void swipe_update(void *data, struct zwp_pointer_gesture_swipe_v1 *g, uint32_t time,
	wl_fixed_t dx, wl_fixed_t dy)
{
	send(data,
		(struct wire_gesture){.kind = WIRE_GESTURE_SWIPE,
			.phase = WIRE_GESTURE_UPDATE,
			.dx = dx,
			.dy = dy});
}

static void swipe_end(void *data, struct zwp_pointer_gesture_swipe_v1 *g, uint32_t serial,
	uint32_t time, int32_t cancelled)
{
	send(data,
		(struct wire_gesture){.kind = WIRE_GESTURE_SWIPE,
			.phase = WIRE_GESTURE_END,
			.cancelled = cancelled != 0});
}

static const struct zwp_pointer_gesture_swipe_v1_listener swipe_listener = {
	.begin = swipe_begin,
	.update = swipe_update,
	.end = swipe_end,
};

static void pinch_begin(void *data, struct zwp_pointer_gesture_pinch_v1 *g, uint32_t serial,
	uint32_t time, struct wl_surface *surface, uint32_t n)
{
	send(data,
		(struct wire_gesture){.kind = WIRE_GESTURE_PINCH,
			.phase = WIRE_GESTURE_BEGIN,
			.fingers = fingers(n)});
}

static void pinch_update(void *data, struct zwp_pointer_gesture_pinch_v1 *g, uint32_t time,
	wl_fixed_t dx, wl_fixed_t dy, wl_fixed_t scale, wl_fixed_t rotation)
{
	/* wl_fixed_t is 24.8: the scale goes as 16.16. */
	send(data,
		(struct wire_gesture){.kind = WIRE_GESTURE_PINCH,
			.phase = WIRE_GESTURE_UPDATE,
			.dx = dx,
			.dy = dy,
			.scale = scale < 0 ? 0 : (scale > 0x7fffff ? 0x7fffffff : scale * 256),
			.rotation = rotation});
}

static void pinch_end(void *data, struct zwp_pointer_gesture_pinch_v1 *g, uint32_t serial,
	uint32_t time, int32_t cancelled)
{
	send(data,
		(struct wire_gesture){.kind = WIRE_GESTURE_PINCH,
			.phase = WIRE_GESTURE_END,
			.cancelled = cancelled != 0});
}

static const struct zwp_pointer_gesture_pinch_v1_listener pinch_listener = {
	.begin = pinch_begin,
	.update = pinch_update,
	.end = pinch_end,
};

static void hold_begin(void *data, struct zwp_pointer_gesture_hold_v1 *g, uint32_t serial,
	uint32_t time, struct wl_surface *surface, uint32_t n)
{
	send(data,
		(struct wire_gesture){.kind = WIRE_GESTURE_HOLD,
			.phase = WIRE_GESTURE_BEGIN,
			.fingers = fingers(n)});
}

static void hold_end(void *data, struct zwp_pointer_gesture_hold_v1 *g, uint32_t serial,
	uint32_t time, int32_t cancelled)
{
	send(data,
		(struct wire_gesture){.kind = WIRE_GESTURE_HOLD,
			.phase = WIRE_GESTURE_END,
			.cancelled = cancelled != 0});
}

static const struct zwp_pointer_gesture_hold_v1_listener hold_listener = {
	.begin = hold_begin,
	.end = hold_end,
};

void gesture_bind(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name,
	uint32_t version)
{
	struct rv_seat *seat = &viewer->seat;
	seat->gestures_version = version < 3 ? version : 3;
	seat->gestures = wl_registry_bind(registry, name, &zwp_pointer_gestures_v1_interface,
		seat->gestures_version);
	gesture_pointer(viewer);
}

void gesture_pointer(struct rv_viewer *viewer)
{
	struct rv_seat *seat = &viewer->seat;
	if (!seat->gestures || !seat->pointer || seat->swipe) {
		return;
	}
	seat->swipe = zwp_pointer_gestures_v1_get_swipe_gesture(seat->gestures, seat->pointer);
	zwp_pointer_gesture_swipe_v1_add_listener(seat->swipe, &swipe_listener, viewer);
	seat->pinch = zwp_pointer_gestures_v1_get_pinch_gesture(seat->gestures, seat->pointer);
	zwp_pointer_gesture_pinch_v1_add_listener(seat->pinch, &pinch_listener, viewer);
	if (seat->gestures_version >= 3) {
		seat->hold =
			zwp_pointer_gestures_v1_get_hold_gesture(seat->gestures, seat->pointer);
		zwp_pointer_gesture_hold_v1_add_listener(seat->hold, &hold_listener, viewer);
	}
}

void gesture_pointer_gone(struct rv_viewer *viewer)
{
	struct rv_seat *seat = &viewer->seat;
	if (seat->swipe) {
		zwp_pointer_gesture_swipe_v1_destroy(seat->swipe);
	}
	if (seat->pinch) {
		zwp_pointer_gesture_pinch_v1_destroy(seat->pinch);
	}
	if (seat->hold) {
		zwp_pointer_gesture_hold_v1_destroy(seat->hold);
	}
	seat->swipe = NULL;
	seat->pinch = NULL;
	seat->hold = NULL;
}

void gesture_finish(struct rv_viewer *viewer)
{
	gesture_pointer_gone(viewer);
	if (viewer->seat.gestures) {
		zwp_pointer_gestures_v1_destroy(viewer->seat.gestures);
		viewer->seat.gestures = NULL;
	}
}
