/*
 * Encoding and decoding of rcomp wire messages. Decoding validates every field
 * against PROTOCOL.md before the caller sees it; nothing here trusts a peer.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

/* Which sender may use a message type. */
#define TO_SERVER WIRE_FROM_VIEWER
#define TO_VIEWER WIRE_FROM_SERVER

struct type_info {
	uint16_t type;
	const char *name;
	uint8_t direction;
	uint32_t min_body, max_body;
};

#define FRAME_FIXED 28u
#define RECT_SIZE 16u

static const struct type_info types[] = {
	{WIRE_HELLO, "hello", TO_SERVER, 20, 20 + WIRE_MAX_TOKEN},
	{WIRE_KEYMAP, "keymap", TO_SERVER, 5, 4 + WIRE_MAX_KEYMAP},
	{WIRE_REPEAT_INFO, "repeat_info", TO_SERVER, 8, 8},
	{WIRE_CONFIGURE, "configure", TO_SERVER, 16, 16},
	{WIRE_CLOSE, "close", TO_SERVER, 4, 4},
	{WIRE_POINTER_MOTION, "pointer_motion", TO_SERVER, 12, 12},
	{WIRE_POINTER_LEAVE, "pointer_leave", TO_SERVER, 4, 4},
	{WIRE_POINTER_BUTTON, "pointer_button", TO_SERVER, 8, 8},
	{WIRE_POINTER_AXIS, "pointer_axis", TO_SERVER, 16, 16},
	{WIRE_POINTER_FRAME, "pointer_frame", TO_SERVER, 0, 0},
	{WIRE_KEYBOARD_ENTER, "keyboard_enter", TO_SERVER, 8, 8 + 4 * WIRE_MAX_KEYS},
	{WIRE_KEYBOARD_LEAVE, "keyboard_leave", TO_SERVER, 4, 4},
	{WIRE_KEY, "key", TO_SERVER, 8, 8},
	{WIRE_MODIFIERS, "modifiers", TO_SERVER, 16, 16},
	{WIRE_FRAME_ACK, "frame_ack", TO_SERVER, 16, 16},
	{WIRE_OUTPUT_INFO, "output_info", TO_SERVER, 12, 12},
	{WIRE_POPUP_DONE, "popup_done", TO_SERVER, 4, 4},
	{WIRE_DECORATION_MODE, "decoration_mode", TO_SERVER, 8, 8},
	{WIRE_TOUCH_DOWN, "touch_down", TO_SERVER, 16, 16},
	{WIRE_TOUCH_UP, "touch_up", TO_SERVER, 4, 4},
	{WIRE_TOUCH_MOTION, "touch_motion", TO_SERVER, 12, 12},
	{WIRE_TOUCH_FRAME, "touch_frame", TO_SERVER, 0, 0},
	{WIRE_TOUCH_CANCEL, "touch_cancel", TO_SERVER, 0, 0},
	{WIRE_WELCOME, "welcome", TO_VIEWER, 28, 28 + WIRE_MAX_SESSION_NAME},
	{WIRE_GOODBYE, "goodbye", TO_VIEWER, 8, 8 + WIRE_MAX_TEXT},
	{WIRE_WINDOW_NEW, "window_new", TO_VIEWER, 20, 20 + WIRE_MAX_TITLE + WIRE_MAX_APP_ID},
	{WIRE_WINDOW_TITLE, "window_title", TO_VIEWER, 4, 4 + WIRE_MAX_TITLE},
	{WIRE_WINDOW_APP_ID, "window_app_id", TO_VIEWER, 4, 4 + WIRE_MAX_APP_ID},
	{WIRE_WINDOW_DESTROY, "window_destroy", TO_VIEWER, 4, 4},
	{WIRE_FRAME, "frame", TO_VIEWER, FRAME_FIXED, WIRE_MAX_BODY},
	{WIRE_SYNC, "sync", TO_VIEWER, 0, 0},
	{WIRE_POPUP_NEW, "popup_new", TO_VIEWER, 56, 56},
	{WIRE_WINDOW_PARENT, "window_parent", TO_VIEWER, 8, 8},
	{WIRE_WINDOW_SCALE, "window_scale", TO_VIEWER, 8, 8},
	{WIRE_WINDOW_REQUEST, "window_request", TO_VIEWER, 8, 8},
	{WIRE_WINDOW_HINTS, "window_hints", TO_VIEWER, 20, 20},
	{WIRE_WINDOW_DECORATION, "window_decoration", TO_VIEWER, 8, 8},
	{WIRE_SELECTION, "selection", TO_SERVER | TO_VIEWER, 8,
		8 + WIRE_MAX_MIME_TYPES *(2 + WIRE_MAX_MIME)},
	{WIRE_TRANSFER_REQUEST, "transfer_request", TO_SERVER | TO_VIEWER, 13, 12 + WIRE_MAX_MIME},
	{WIRE_TRANSFER_DATA, "transfer_data", TO_SERVER | TO_VIEWER, 8,
		8 + WIRE_MAX_TRANSFER_CHUNK},
	{WIRE_TRANSFER_ACK, "transfer_ack", TO_SERVER | TO_VIEWER, 12, 12},
	{WIRE_CURSOR, "cursor", TO_VIEWER, 20, 20 + WIRE_MAX_CURSOR *WIRE_MAX_CURSOR * 4},
};

static const struct type_info *find_type(uint32_t type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (types[i].type == type) {
			return &types[i];
		}
	}
	return NULL;
}

const char *wire_type_name(uint32_t type)
{
	const struct type_info *info = find_type(type);
	return info ? info->name : "unknown";
}

struct reader {
	const uint8_t *p;
	size_t left;
};

static const uint8_t *get_bytes(struct reader *r, size_t n)
{
	/* Callers check the body size first; this guards our own mistakes. */
	assert(n <= r->left);
	const uint8_t *p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

static uint8_t get_u8(struct reader *r)
{
	return *get_bytes(r, 1);
}

static uint16_t get_u16(struct reader *r)
{
	const uint8_t *p = get_bytes(r, 2);
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_u32(struct reader *r)
{
	const uint8_t *p = get_bytes(r, 4);
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int32_t get_i32(struct reader *r)
{
	return (int32_t)get_u32(r);
}

static uint64_t get_u64(struct reader *r)
{
	uint64_t lo = get_u32(r);
	uint64_t hi = get_u32(r);
	return lo | hi << 32;
}

static void put_u8(uint8_t **p, uint8_t v)
{
	*(*p)++ = v;
}

static void put_u16(uint8_t **p, uint16_t v)
{
	put_u8(p, (uint8_t)v);
	put_u8(p, (uint8_t)(v >> 8));
}

static void put_u32(uint8_t **p, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		put_u8(p, (uint8_t)(v >> (8 * i)));
	}
}

static void put_u64(uint8_t **p, uint64_t v)
{
	put_u32(p, (uint32_t)v);
	put_u32(p, (uint32_t)(v >> 32));
}

static void put_bytes(uint8_t **p, const void *bytes, size_t n)
{
	if (n > 0) {
		memcpy(*p, bytes, n);
		*p += n;
	}
}

struct wire_rect wire_get_rect(const uint8_t *rects, uint32_t i)
{
	struct reader r = {rects + (size_t)i * RECT_SIZE, RECT_SIZE};
	struct wire_rect rect;
	rect.x = get_i32(&r);
	rect.y = get_i32(&r);
	rect.width = get_i32(&r);
	rect.height = get_i32(&r);
	return rect;
}

uint32_t wire_get_key(const uint32_t *keys, uint32_t i)
{
	struct reader r = {(const uint8_t *)keys + (size_t)i * 4, 4};
	return get_u32(&r);
}

bool wire_session_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > WIRE_MAX_SESSION_NAME || name[0] == '.') {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '.' || c == '_' || c == '-')) {
			return false;
		}
	}
	return true;
}

#define INVALID(...) \
	do { \
		snprintf(err, err_size, __VA_ARGS__); \
		return WIRE_INVALID; \
	} while (0)

static bool dim_ok(int32_t v, int32_t min)
{
	return v >= min && v <= WIRE_MAX_DIM;
}

static bool coord_ok(int32_t v)
{
	return v >= -WIRE_MAX_DIM && v <= WIRE_MAX_DIM;
}

static enum wire_status decode_frame(struct reader *r, struct wire_msg *msg, char *err,
	size_t err_size)
{
	msg->frame.window = get_u32(r);
	msg->frame.seq = get_u32(r);
	msg->frame.width = get_i32(r);
	msg->frame.height = get_i32(r);
	msg->frame.codec = get_u8(r);
	msg->frame.compression = get_u8(r);
	msg->frame.flags = get_u16(r);
	msg->frame.nrects = get_u32(r);
	msg->frame.raw_size = get_u32(r);

	int32_t w = msg->frame.width, h = msg->frame.height;
	if (!dim_ok(w, 1) || !dim_ok(h, 1) || (int64_t)w * h > WIRE_MAX_PIXELS) {
		INVALID("frame size %dx%d is outside the limits", w, h);
	}
	if (msg->frame.codec > WIRE_CODEC_H264) {
		INVALID("frame codec %u is unknown", msg->frame.codec);
	}
	if (msg->frame.compression > WIRE_COMPRESS_ZSTD) {
		INVALID("frame compression %u is unknown", msg->frame.compression);
	}
	if (msg->frame.flags & ~(uint16_t)WIRE_FRAME_RESET) {
		INVALID("frame flags 0x%x are unknown", msg->frame.flags);
	}
	if (msg->frame.nrects > WIRE_MAX_RECTS) {
		INVALID("frame has %u rectangles, more than %u", msg->frame.nrects, WIRE_MAX_RECTS);
	}
	if ((uint64_t)msg->frame.nrects * RECT_SIZE > r->left) {
		INVALID("frame is shorter than its %u rectangles", msg->frame.nrects);
	}
	msg->frame.rects = get_bytes(r, (size_t)msg->frame.nrects * RECT_SIZE);
	uint64_t area = 0;
	for (uint32_t i = 0; i < msg->frame.nrects; i++) {
		struct wire_rect rect = wire_get_rect(msg->frame.rects, i);
		if (rect.x < 0 || rect.y < 0 || rect.width < 1 || rect.height < 1 ||
			(int64_t)rect.x + rect.width > w || (int64_t)rect.y + rect.height > h) {
			INVALID("frame rectangle %d,%d %dx%d is outside the %dx%d frame", rect.x,
				rect.y, rect.width, rect.height, w, h);
		}
		area += (uint64_t)rect.width * (uint64_t)rect.height;
	}
	if (area * 4 != msg->frame.raw_size) {
		INVALID("frame raw size %u does not match its rectangles (%llu bytes)",
			msg->frame.raw_size, (unsigned long long)(area * 4));
	}
	msg->frame.payload_size = (uint32_t)r->left;
	msg->frame.payload = get_bytes(r, r->left);
	if (msg->frame.codec == WIRE_CODEC_H264) {
		if (msg->frame.compression != WIRE_COMPRESS_NONE || msg->frame.nrects != 0 ||
			msg->frame.raw_size != 0 || msg->frame.payload_size == 0) {
			INVALID("video frame must have no rectangles, no compression and a "
				"payload");
		}
		return WIRE_OK;
	}
	if (msg->frame.compression == WIRE_COMPRESS_NONE &&
		msg->frame.payload_size != msg->frame.raw_size) {
		INVALID("uncompressed frame payload is %u bytes, expected %u",
			msg->frame.payload_size, msg->frame.raw_size);
	}
	return WIRE_OK;
}

enum wire_status wire_decode(enum wire_sender sender, const uint8_t *data, size_t len,
	struct wire_msg *msg, size_t *used, char *err, size_t err_size)
{
	if (len < WIRE_HEADER_SIZE) {
		return WIRE_INCOMPLETE;
	}
	struct reader hr = {data, WIRE_HEADER_SIZE};
	uint16_t type = get_u16(&hr);
	uint16_t hflags = get_u16(&hr);
	uint32_t body = get_u32(&hr);

	const struct type_info *info = find_type(type);
	if (!info) {
		INVALID("unknown message type 0x%04x", type);
	}
	if (!(info->direction & sender)) {
		INVALID("%s message may not be sent by a %s", info->name,
			sender == WIRE_FROM_VIEWER ? "viewer" : "server");
	}
	if (hflags != 0) {
		INVALID("%s message has reserved header bits 0x%04x set", info->name, hflags);
	}
	/* Reject a bad length before waiting for (or buffering) its body. */
	if (body < info->min_body || body > info->max_body) {
		INVALID("%s message has body length %u, allowed %u to %u", info->name, body,
			info->min_body, info->max_body);
	}
	if (len - WIRE_HEADER_SIZE < body) {
		return WIRE_INCOMPLETE;
	}

	memset(msg, 0, sizeof(*msg));
	msg->type = type;
	struct reader r = {data + WIRE_HEADER_SIZE, body};
	switch (type) {
	case WIRE_HELLO:
		msg->hello.magic = get_u32(&r);
		msg->hello.major = get_u16(&r);
		msg->hello.minor = get_u16(&r);
		msg->hello.caps = get_u32(&r);
		msg->hello.flags = get_u32(&r);
		if (msg->hello.magic != WIRE_MAGIC) {
			INVALID("hello has bad magic 0x%08x: the peer does not speak rcomp",
				msg->hello.magic);
		}
		msg->hello.token_len = get_u32(&r);
		if (msg->hello.token_len != r.left) {
			INVALID("hello token length %u does not match the message",
				msg->hello.token_len);
		}
		msg->hello.token = (const char *)get_bytes(&r, r.left);
		break;
	case WIRE_WELCOME:
		msg->welcome.magic = get_u32(&r);
		msg->welcome.major = get_u16(&r);
		msg->welcome.minor = get_u16(&r);
		msg->welcome.caps = get_u32(&r);
		msg->welcome.flags = get_u32(&r);
		if (msg->welcome.magic != WIRE_MAGIC) {
			INVALID("welcome has bad magic 0x%08x: the peer does not speak rcomp",
				msg->welcome.magic);
		}
		msg->welcome.session_id = get_u64(&r);
		msg->welcome.name_len = get_u32(&r);
		if (msg->welcome.name_len != r.left) {
			INVALID("welcome session name length %u does not match the message",
				msg->welcome.name_len);
		}
		msg->welcome.name = (const char *)get_bytes(&r, r.left);
		if (!wire_session_name_ok(msg->welcome.name, msg->welcome.name_len)) {
			INVALID("welcome has a session name that is empty or not [A-Za-z0-9._-]");
		}
		break;
	case WIRE_SYNC:
		break;
	case WIRE_KEYMAP:
		msg->keymap.format = get_u32(&r);
		msg->keymap.size = (uint32_t)r.left;
		msg->keymap.data = (const char *)get_bytes(&r, r.left);
		if (msg->keymap.format != 1) {
			INVALID("keymap format %u is unknown", msg->keymap.format);
		}
		break;
	case WIRE_REPEAT_INFO:
		msg->repeat_info.rate = get_i32(&r);
		msg->repeat_info.delay = get_i32(&r);
		if (msg->repeat_info.rate < 0 || msg->repeat_info.rate > 1000 ||
			msg->repeat_info.delay < 0 || msg->repeat_info.delay > 60000) {
			INVALID("repeat info rate %d delay %d is out of range",
				msg->repeat_info.rate, msg->repeat_info.delay);
		}
		break;
	case WIRE_CONFIGURE:
		msg->configure.window = get_u32(&r);
		msg->configure.width = get_i32(&r);
		msg->configure.height = get_i32(&r);
		msg->configure.states = get_u32(&r);
		if (!dim_ok(msg->configure.width, 0) || !dim_ok(msg->configure.height, 0)) {
			INVALID("configure size %dx%d is outside the limits", msg->configure.width,
				msg->configure.height);
		}
		if (msg->configure.states & ~(uint32_t)0xf) {
			INVALID("configure states 0x%x are unknown", msg->configure.states);
		}
		break;
	case WIRE_CLOSE:
	case WIRE_POINTER_LEAVE:
	case WIRE_KEYBOARD_LEAVE:
	case WIRE_WINDOW_DESTROY:
	case WIRE_POPUP_DONE:
		msg->close.window = get_u32(&r);
		break;
	case WIRE_CURSOR:
		msg->cursor.hotspot_x = get_i32(&r);
		msg->cursor.hotspot_y = get_i32(&r);
		msg->cursor.width = get_i32(&r);
		msg->cursor.height = get_i32(&r);
		msg->cursor.scale = get_i32(&r);
		if (msg->cursor.width < 0 || msg->cursor.width > WIRE_MAX_CURSOR ||
			msg->cursor.height < 0 || msg->cursor.height > WIRE_MAX_CURSOR ||
			(msg->cursor.width == 0) != (msg->cursor.height == 0)) {
			INVALID("cursor size %dx%d is outside the limits", msg->cursor.width,
				msg->cursor.height);
		}
		if (msg->cursor.scale < 1 || msg->cursor.scale > WIRE_MAX_SCALE) {
			INVALID("cursor scale %d is outside 1-%d", msg->cursor.scale,
				WIRE_MAX_SCALE);
		}
		if (abs(msg->cursor.hotspot_x) > WIRE_MAX_CURSOR * WIRE_MAX_SCALE ||
			abs(msg->cursor.hotspot_y) > WIRE_MAX_CURSOR * WIRE_MAX_SCALE) {
			INVALID("cursor hotspot %d,%d is outside the limits", msg->cursor.hotspot_x,
				msg->cursor.hotspot_y);
		}
		if (r.left != (size_t)msg->cursor.width * (size_t)msg->cursor.height * 4) {
			INVALID("cursor pixels are %zu bytes, not %dx%dx4", r.left,
				msg->cursor.width, msg->cursor.height);
		}
		msg->cursor.pixels = get_bytes(&r, r.left);
		break;
	case WIRE_WINDOW_REQUEST:
		msg->window_request.window = get_u32(&r);
		msg->window_request.request = get_u32(&r);
		if (msg->window_request.request < WIRE_REQUEST_MAXIMIZE ||
			msg->window_request.request > WIRE_REQUEST_MINIMIZE) {
			INVALID("window request %u is unknown", msg->window_request.request);
		}
		break;
	case WIRE_SELECTION: {
		msg->selection.kind = get_u32(&r);
		msg->selection.count = get_u32(&r);
		msg->selection.types_len = (uint32_t)r.left;
		msg->selection.types = get_bytes(&r, r.left);
		if (msg->selection.kind > WIRE_SELECTION_PRIMARY) {
			INVALID("selection kind %u is unknown", msg->selection.kind);
		}
		if (msg->selection.count > WIRE_MAX_MIME_TYPES) {
			INVALID("selection has %u MIME types, more than %d", msg->selection.count,
				WIRE_MAX_MIME_TYPES);
		}
		/* Exactly count well-formed types fill the body. */
		size_t pos = 0, n = 0, mime_len;
		const char *mime;
		while (n < msg->selection.count && wire_mime_next(msg, &pos, &mime, &mime_len)) {
			n++;
		}
		if (n != msg->selection.count || pos != msg->selection.types_len) {
			INVALID("selection MIME types do not match their count %u",
				msg->selection.count);
		}
		break;
	}
	case WIRE_TRANSFER_REQUEST:
		msg->transfer_request.id = get_u32(&r);
		msg->transfer_request.kind = get_u32(&r);
		msg->transfer_request.mime_len = get_u32(&r);
		if (msg->transfer_request.kind > WIRE_SELECTION_PRIMARY) {
			INVALID("transfer kind %u is unknown", msg->transfer_request.kind);
		}
		if (msg->transfer_request.mime_len == 0 ||
			msg->transfer_request.mime_len != r.left) {
			INVALID("transfer_request MIME length %u does not match its body",
				msg->transfer_request.mime_len);
		}
		msg->transfer_request.mime = (const char *)get_bytes(&r, r.left);
		break;
	case WIRE_TRANSFER_DATA:
		msg->transfer_data.id = get_u32(&r);
		msg->transfer_data.flags = get_u32(&r);
		msg->transfer_data.len = (uint32_t)r.left;
		msg->transfer_data.data = get_bytes(&r, r.left);
		if (msg->transfer_data.flags & ~(uint32_t)3) {
			INVALID("transfer_data flags 0x%x are unknown", msg->transfer_data.flags);
		}
		break;
	case WIRE_TRANSFER_ACK:
		msg->transfer_ack.id = get_u32(&r);
		msg->transfer_ack.bytes = get_u32(&r);
		msg->transfer_ack.flags = get_u32(&r);
		if (msg->transfer_ack.flags & ~(uint32_t)1 ||
			msg->transfer_ack.bytes > WIRE_MAX_TRANSFER_CHUNK * 64u) {
			INVALID("transfer_ack of %u bytes, flags 0x%x, is out of bounds",
				msg->transfer_ack.bytes, msg->transfer_ack.flags);
		}
		break;
	case WIRE_WINDOW_DECORATION:
	case WIRE_DECORATION_MODE:
		msg->window_decoration.window = get_u32(&r);
		msg->window_decoration.mode = get_u32(&r);
		if (msg->window_decoration.mode < 1 || msg->window_decoration.mode > 2) {
			INVALID("decoration mode %u is unknown", msg->window_decoration.mode);
		}
		break;
	case WIRE_WINDOW_HINTS:
		msg->window_hints.window = get_u32(&r);
		msg->window_hints.min_width = get_i32(&r);
		msg->window_hints.min_height = get_i32(&r);
		msg->window_hints.max_width = get_i32(&r);
		msg->window_hints.max_height = get_i32(&r);
		if (!dim_ok(msg->window_hints.min_width, 0) ||
			!dim_ok(msg->window_hints.min_height, 0) ||
			!dim_ok(msg->window_hints.max_width, 0) ||
			!dim_ok(msg->window_hints.max_height, 0)) {
			INVALID("window size hints are outside the limits");
		}
		break;
	case WIRE_WINDOW_SCALE:
		msg->window_scale.window = get_u32(&r);
		msg->window_scale.scale = get_i32(&r);
		if (msg->window_scale.scale < 1 || msg->window_scale.scale > WIRE_MAX_SCALE) {
			INVALID("window scale %d is outside 1-%d", msg->window_scale.scale,
				WIRE_MAX_SCALE);
		}
		break;
	case WIRE_WINDOW_PARENT:
		msg->window_parent.window = get_u32(&r);
		msg->window_parent.parent = get_u32(&r);
		if (msg->window_parent.window == 0 ||
			msg->window_parent.parent == msg->window_parent.window) {
			INVALID("window %u cannot have parent %u", msg->window_parent.window,
				msg->window_parent.parent);
		}
		break;
	case WIRE_POPUP_NEW: {
		msg->popup_new.window = get_u32(&r);
		msg->popup_new.parent = get_u32(&r);
		msg->popup_new.anchor_x = get_i32(&r);
		msg->popup_new.anchor_y = get_i32(&r);
		msg->popup_new.anchor_width = get_i32(&r);
		msg->popup_new.anchor_height = get_i32(&r);
		msg->popup_new.width = get_i32(&r);
		msg->popup_new.height = get_i32(&r);
		msg->popup_new.anchor = get_u32(&r);
		msg->popup_new.gravity = get_u32(&r);
		msg->popup_new.constraint_adjustment = get_u32(&r);
		msg->popup_new.offset_x = get_i32(&r);
		msg->popup_new.offset_y = get_i32(&r);
		msg->popup_new.flags = get_u32(&r);
		bool coords_ok = coord_ok(msg->popup_new.anchor_x) &&
			coord_ok(msg->popup_new.anchor_y) && coord_ok(msg->popup_new.offset_x) &&
			coord_ok(msg->popup_new.offset_y);
		if (msg->popup_new.window == 0 || msg->popup_new.parent == 0 ||
			msg->popup_new.window == msg->popup_new.parent) {
			INVALID("popup %u has parent %u", msg->popup_new.window,
				msg->popup_new.parent);
		}
		if (!coords_ok || !dim_ok(msg->popup_new.anchor_width, 0) ||
			!dim_ok(msg->popup_new.anchor_height, 0) ||
			!dim_ok(msg->popup_new.width, 1) || !dim_ok(msg->popup_new.height, 1)) {
			INVALID("popup %u geometry is outside the limits", msg->popup_new.window);
		}
		if (msg->popup_new.anchor > 8 || msg->popup_new.gravity > 8 ||
			msg->popup_new.constraint_adjustment > 63 ||
			msg->popup_new.flags & ~(uint32_t)WIRE_POPUP_GRAB) {
			INVALID("popup %u positioner values are unknown", msg->popup_new.window);
		}
		break;
	}
	case WIRE_POINTER_MOTION:
		msg->pointer_motion.window = get_u32(&r);
		msg->pointer_motion.x = get_i32(&r);
		msg->pointer_motion.y = get_i32(&r);
		if (msg->pointer_motion.x / 256 < -WIRE_MAX_DIM ||
			msg->pointer_motion.x / 256 > 2 * WIRE_MAX_DIM ||
			msg->pointer_motion.y / 256 < -WIRE_MAX_DIM ||
			msg->pointer_motion.y / 256 > 2 * WIRE_MAX_DIM) {
			INVALID("pointer position is outside the limits");
		}
		break;
	case WIRE_POINTER_BUTTON:
		msg->pointer_button.button = get_u32(&r);
		msg->pointer_button.state = get_u32(&r);
		if (msg->pointer_button.state > 1 || msg->pointer_button.button > 0xffff) {
			INVALID("pointer button %u state %u is out of range",
				msg->pointer_button.button, msg->pointer_button.state);
		}
		break;
	case WIRE_POINTER_AXIS:
		msg->pointer_axis.axis = get_u32(&r);
		msg->pointer_axis.value = get_i32(&r);
		msg->pointer_axis.discrete = get_i32(&r);
		msg->pointer_axis.source = get_u32(&r);
		if (msg->pointer_axis.axis > 1 || msg->pointer_axis.source > 3) {
			INVALID("pointer axis %u source %u is out of range", msg->pointer_axis.axis,
				msg->pointer_axis.source);
		}
		break;
	case WIRE_POINTER_FRAME:
	case WIRE_TOUCH_FRAME:
	case WIRE_TOUCH_CANCEL:
		break;
	case WIRE_TOUCH_DOWN:
	case WIRE_TOUCH_MOTION:
		if (type == WIRE_TOUCH_DOWN) {
			msg->touch.window = get_u32(&r);
		}
		msg->touch.id = get_i32(&r);
		msg->touch.x = get_i32(&r);
		msg->touch.y = get_i32(&r);
		if (msg->touch.x / 256 < -WIRE_MAX_DIM || msg->touch.x / 256 > 2 * WIRE_MAX_DIM ||
			msg->touch.y / 256 < -WIRE_MAX_DIM ||
			msg->touch.y / 256 > 2 * WIRE_MAX_DIM) {
			INVALID("touch position is outside the limits");
		}
		break;
	case WIRE_TOUCH_UP:
		msg->touch.id = get_i32(&r);
		break;
	case WIRE_KEYBOARD_ENTER:
		msg->keyboard_enter.window = get_u32(&r);
		msg->keyboard_enter.nkeys = get_u32(&r);
		if (msg->keyboard_enter.nkeys > WIRE_MAX_KEYS ||
			(size_t)msg->keyboard_enter.nkeys * 4 != r.left) {
			INVALID("keyboard enter key count %u does not match its length",
				msg->keyboard_enter.nkeys);
		}
		msg->keyboard_enter.keys = (const uint32_t *)get_bytes(&r, r.left);
		for (uint32_t i = 0; i < msg->keyboard_enter.nkeys; i++) {
			if (wire_get_key(msg->keyboard_enter.keys, i) > 0xffff) {
				INVALID("keyboard enter has key code out of range");
			}
		}
		break;
	case WIRE_KEY:
		msg->key.key = get_u32(&r);
		msg->key.state = get_u32(&r);
		if (msg->key.key > 0xffff || msg->key.state > 1) {
			INVALID("key %u state %u is out of range", msg->key.key, msg->key.state);
		}
		break;
	case WIRE_MODIFIERS:
		msg->modifiers.depressed = get_u32(&r);
		msg->modifiers.latched = get_u32(&r);
		msg->modifiers.locked = get_u32(&r);
		msg->modifiers.group = get_u32(&r);
		break;
	case WIRE_FRAME_ACK:
		msg->frame_ack.window = get_u32(&r);
		msg->frame_ack.seq = get_u32(&r);
		msg->frame_ack.recv_time_us = get_u64(&r);
		break;
	case WIRE_OUTPUT_INFO:
		msg->output_info.window = get_u32(&r);
		msg->output_info.refresh_mhz = get_u32(&r);
		msg->output_info.scale = get_i32(&r);
		if (msg->output_info.refresh_mhz > WIRE_MAX_REFRESH_MHZ ||
			msg->output_info.scale < 1 || msg->output_info.scale > WIRE_MAX_SCALE) {
			INVALID("output refresh %u mHz scale %d is out of range",
				msg->output_info.refresh_mhz, msg->output_info.scale);
		}
		break;
	case WIRE_GOODBYE:
		msg->goodbye.status = get_i32(&r);
		msg->goodbye.reason = get_u32(&r);
		msg->goodbye.text_len = (uint32_t)r.left;
		msg->goodbye.text = (const char *)get_bytes(&r, r.left);
		if (msg->goodbye.reason > WIRE_BYE_NO_SESSION) {
			INVALID("goodbye reason %u is unknown", msg->goodbye.reason);
		}
		break;
	case WIRE_WINDOW_NEW:
		msg->window_new.window = get_u32(&r);
		msg->window_new.parent = get_u32(&r);
		msg->window_new.width = get_i32(&r);
		msg->window_new.height = get_i32(&r);
		msg->window_new.title_len = get_u16(&r);
		msg->window_new.app_id_len = get_u16(&r);
		if (msg->window_new.window == 0) {
			INVALID("window id 0 is reserved");
		}
		if (!dim_ok(msg->window_new.width, 0) || !dim_ok(msg->window_new.height, 0)) {
			INVALID("window size %dx%d is outside the limits", msg->window_new.width,
				msg->window_new.height);
		}
		if (msg->window_new.title_len > WIRE_MAX_TITLE ||
			msg->window_new.app_id_len > WIRE_MAX_APP_ID ||
			(size_t)msg->window_new.title_len + msg->window_new.app_id_len != r.left) {
			INVALID("window_new string lengths %u+%u do not match its body",
				msg->window_new.title_len, msg->window_new.app_id_len);
		}
		msg->window_new.title = (const char *)get_bytes(&r, msg->window_new.title_len);
		msg->window_new.app_id = (const char *)get_bytes(&r, msg->window_new.app_id_len);
		break;
	case WIRE_WINDOW_TITLE:
	case WIRE_WINDOW_APP_ID:
		msg->window_text.window = get_u32(&r);
		msg->window_text.len = (uint32_t)r.left;
		msg->window_text.text = (const char *)get_bytes(&r, r.left);
		break;
	case WIRE_FRAME: {
		enum wire_status status = decode_frame(&r, msg, err, err_size);
		if (status != WIRE_OK) {
			return status;
		}
		break;
	}
	default:
		INVALID("unhandled message type 0x%04x", type);
	}
	assert(r.left == 0);
	*used = WIRE_HEADER_SIZE + body;
	return WIRE_OK;
}

static size_t body_size(const struct wire_msg *msg)
{
	switch (msg->type) {
	case WIRE_HELLO:
		return 20 + (size_t)msg->hello.token_len;
	case WIRE_WELCOME:
		return 28 + (size_t)msg->welcome.name_len;
	case WIRE_SYNC:
		return 0;
	case WIRE_CONFIGURE:
	case WIRE_POINTER_AXIS:
	case WIRE_MODIFIERS:
	case WIRE_FRAME_ACK:
		return 16;
	case WIRE_KEYMAP:
		return 4 + (size_t)msg->keymap.size;
	case WIRE_REPEAT_INFO:
	case WIRE_POINTER_BUTTON:
	case WIRE_KEY:
		return 8;
	case WIRE_CLOSE:
	case WIRE_POINTER_LEAVE:
	case WIRE_KEYBOARD_LEAVE:
	case WIRE_WINDOW_DESTROY:
	case WIRE_POPUP_DONE:
		return 4;
	case WIRE_WINDOW_PARENT:
	case WIRE_WINDOW_SCALE:
	case WIRE_WINDOW_REQUEST:
	case WIRE_WINDOW_DECORATION:
	case WIRE_DECORATION_MODE:
		return 8;
	case WIRE_WINDOW_HINTS:
		return 20;
	case WIRE_SELECTION:
		return 8 + (size_t)msg->selection.types_len;
	case WIRE_TRANSFER_REQUEST:
		return 12 + (size_t)msg->transfer_request.mime_len;
	case WIRE_TRANSFER_DATA:
		return 8 + (size_t)msg->transfer_data.len;
	case WIRE_TRANSFER_ACK:
		return 12;
	case WIRE_CURSOR:
		return 20 + (size_t)msg->cursor.width * (size_t)msg->cursor.height * 4;
	case WIRE_POPUP_NEW:
		return 56;
	case WIRE_POINTER_MOTION:
	case WIRE_OUTPUT_INFO:
		return 12;
	case WIRE_POINTER_FRAME:
	case WIRE_TOUCH_FRAME:
	case WIRE_TOUCH_CANCEL:
		return 0;
	case WIRE_TOUCH_DOWN:
		return 16;
	case WIRE_TOUCH_UP:
		return 4;
	case WIRE_TOUCH_MOTION:
		return 12;
	case WIRE_KEYBOARD_ENTER:
		return 8 + 4 * (size_t)msg->keyboard_enter.nkeys;
	case WIRE_GOODBYE:
		return 8 + (size_t)msg->goodbye.text_len;
	case WIRE_WINDOW_NEW:
		return 20 + (size_t)msg->window_new.title_len + msg->window_new.app_id_len;
	case WIRE_WINDOW_TITLE:
	case WIRE_WINDOW_APP_ID:
		return 4 + (size_t)msg->window_text.len;
	case WIRE_FRAME:
		return FRAME_FIXED + RECT_SIZE * (size_t)msg->frame.nrects +
			msg->frame.payload_size;
	}
	return 0;
}

static void put_header(uint8_t **p, uint16_t type, uint32_t body)
{
	put_u16(p, type);
	put_u16(p, 0);
	put_u32(p, body);
}

bool wire_mime_next(const struct wire_msg *msg, size_t *pos, const char **mime, size_t *len)
{
	const uint8_t *packed = msg->selection.types;
	if (*pos >= msg->selection.types_len || msg->selection.types_len - *pos < 2) {
		return false;
	}
	size_t left = msg->selection.types_len - *pos;
	size_t n = (size_t)packed[*pos] | (size_t)packed[*pos + 1] << 8;
	if (n == 0 || n > WIRE_MAX_MIME || n > left - 2) {
		return false;
	}
	*mime = (const char *)packed + *pos + 2;
	*len = n;
	*pos += 2 + n;
	return true;
}

size_t wire_mime_pack(uint8_t *dst, size_t cap, const char *mime, size_t len)
{
	if (len == 0 || len > WIRE_MAX_MIME || cap < 2 + len) {
		return 0;
	}
	dst[0] = (uint8_t)len;
	dst[1] = (uint8_t)(len >> 8);
	memcpy(dst + 2, mime, len);
	return 2 + len;
}

bool wire_mime_list_add(struct wire_mime_list *list, const char *mime, size_t len)
{
	if (list->count == WIRE_MAX_MIME_TYPES) {
		return false;
	}
	size_t n = wire_mime_pack(list->packed + list->used, sizeof(list->packed) - list->used,
		mime, len);
	list->used += (uint32_t)n;
	list->count += n > 0;
	return n > 0;
}

void wire_mime_list_from_msg(struct wire_mime_list *list, const struct wire_msg *msg)
{
	/* The decoder checked the count and that the types fill the body,
	 * which is no larger than the list. */
	list->count = msg->selection.count;
	list->used = msg->selection.types_len;
	memcpy(list->packed, msg->selection.types, list->used);
}

void wire_mime_list_to_msg(const struct wire_mime_list *list, uint32_t kind, struct wire_msg *msg)
{
	*msg = (struct wire_msg){
		.type = WIRE_SELECTION,
		.selection = {.kind = kind,
			.count = list->count,
			.types = list->packed,
			.types_len = list->used},
	};
}

bool wire_mime_list_has(const struct wire_mime_list *list, const char *mime, size_t len)
{
	struct wire_msg msg;
	wire_mime_list_to_msg(list, 0, &msg);
	size_t pos = 0, n;
	const char *type;
	while (wire_mime_next(&msg, &pos, &type, &n)) {
		if (n == len && memcmp(type, mime, len) == 0) {
			return true;
		}
	}
	return false;
}

bool wire_mime_list_equal(const struct wire_mime_list *a, const struct wire_mime_list *b)
{
	return a->count == b->count && a->used == b->used &&
		memcmp(a->packed, b->packed, a->used) == 0;
}

bool wire_encode(struct buffer *out, const struct wire_msg *msg)
{
	const struct type_info *info = find_type(msg->type);
	size_t body = body_size(msg);
	if (!info || body < info->min_body || body > info->max_body) {
		return false;
	}
	uint8_t *start = buffer_reserve(out, WIRE_HEADER_SIZE + body);
	if (!start) {
		return false;
	}
	uint8_t *p = start;
	put_header(&p, (uint16_t)msg->type, (uint32_t)body);
	switch (msg->type) {
	case WIRE_HELLO:
		put_u32(&p, msg->hello.magic);
		put_u16(&p, msg->hello.major);
		put_u16(&p, msg->hello.minor);
		put_u32(&p, msg->hello.caps);
		put_u32(&p, msg->hello.flags);
		put_u32(&p, msg->hello.token_len);
		put_bytes(&p, msg->hello.token, msg->hello.token_len);
		break;
	case WIRE_WELCOME:
		put_u32(&p, msg->welcome.magic);
		put_u16(&p, msg->welcome.major);
		put_u16(&p, msg->welcome.minor);
		put_u32(&p, msg->welcome.caps);
		put_u32(&p, msg->welcome.flags);
		put_u64(&p, msg->welcome.session_id);
		put_u32(&p, msg->welcome.name_len);
		put_bytes(&p, msg->welcome.name, msg->welcome.name_len);
		break;
	case WIRE_SYNC:
		break;
	case WIRE_KEYMAP:
		put_u32(&p, msg->keymap.format);
		put_bytes(&p, msg->keymap.data, msg->keymap.size);
		break;
	case WIRE_REPEAT_INFO:
		put_u32(&p, (uint32_t)msg->repeat_info.rate);
		put_u32(&p, (uint32_t)msg->repeat_info.delay);
		break;
	case WIRE_CONFIGURE:
		put_u32(&p, msg->configure.window);
		put_u32(&p, (uint32_t)msg->configure.width);
		put_u32(&p, (uint32_t)msg->configure.height);
		put_u32(&p, msg->configure.states);
		break;
	case WIRE_CLOSE:
	case WIRE_POINTER_LEAVE:
	case WIRE_KEYBOARD_LEAVE:
	case WIRE_WINDOW_DESTROY:
	case WIRE_POPUP_DONE:
		put_u32(&p, msg->close.window);
		break;
	case WIRE_CURSOR:
		put_u32(&p, (uint32_t)msg->cursor.hotspot_x);
		put_u32(&p, (uint32_t)msg->cursor.hotspot_y);
		put_u32(&p, (uint32_t)msg->cursor.width);
		put_u32(&p, (uint32_t)msg->cursor.height);
		put_u32(&p, (uint32_t)msg->cursor.scale);
		put_bytes(&p, msg->cursor.pixels,
			(size_t)msg->cursor.width * msg->cursor.height * 4);
		break;
	case WIRE_WINDOW_REQUEST:
		put_u32(&p, msg->window_request.window);
		put_u32(&p, msg->window_request.request);
		break;
	case WIRE_SELECTION:
		put_u32(&p, msg->selection.kind);
		put_u32(&p, msg->selection.count);
		put_bytes(&p, msg->selection.types, msg->selection.types_len);
		break;
	case WIRE_TRANSFER_REQUEST:
		put_u32(&p, msg->transfer_request.id);
		put_u32(&p, msg->transfer_request.kind);
		put_u32(&p, msg->transfer_request.mime_len);
		put_bytes(&p, msg->transfer_request.mime, msg->transfer_request.mime_len);
		break;
	case WIRE_TRANSFER_DATA:
		put_u32(&p, msg->transfer_data.id);
		put_u32(&p, msg->transfer_data.flags);
		put_bytes(&p, msg->transfer_data.data, msg->transfer_data.len);
		break;
	case WIRE_TRANSFER_ACK:
		put_u32(&p, msg->transfer_ack.id);
		put_u32(&p, msg->transfer_ack.bytes);
		put_u32(&p, msg->transfer_ack.flags);
		break;
	case WIRE_WINDOW_DECORATION:
	case WIRE_DECORATION_MODE:
		put_u32(&p, msg->window_decoration.window);
		put_u32(&p, msg->window_decoration.mode);
		break;
	case WIRE_WINDOW_HINTS:
		put_u32(&p, msg->window_hints.window);
		put_u32(&p, (uint32_t)msg->window_hints.min_width);
		put_u32(&p, (uint32_t)msg->window_hints.min_height);
		put_u32(&p, (uint32_t)msg->window_hints.max_width);
		put_u32(&p, (uint32_t)msg->window_hints.max_height);
		break;
	case WIRE_WINDOW_SCALE:
		put_u32(&p, msg->window_scale.window);
		put_u32(&p, (uint32_t)msg->window_scale.scale);
		break;
	case WIRE_WINDOW_PARENT:
		put_u32(&p, msg->window_parent.window);
		put_u32(&p, msg->window_parent.parent);
		break;
	case WIRE_POPUP_NEW: {
		const struct wire_msg *m = msg;
		uint32_t fields[] = {m->popup_new.window, m->popup_new.parent,
			(uint32_t)m->popup_new.anchor_x, (uint32_t)m->popup_new.anchor_y,
			(uint32_t)m->popup_new.anchor_width, (uint32_t)m->popup_new.anchor_height,
			(uint32_t)m->popup_new.width, (uint32_t)m->popup_new.height,
			m->popup_new.anchor, m->popup_new.gravity,
			m->popup_new.constraint_adjustment, (uint32_t)m->popup_new.offset_x,
			(uint32_t)m->popup_new.offset_y, m->popup_new.flags};
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			put_u32(&p, fields[i]);
		}
		break;
	}
	case WIRE_POINTER_MOTION:
		put_u32(&p, msg->pointer_motion.window);
		put_u32(&p, (uint32_t)msg->pointer_motion.x);
		put_u32(&p, (uint32_t)msg->pointer_motion.y);
		break;
	case WIRE_POINTER_BUTTON:
		put_u32(&p, msg->pointer_button.button);
		put_u32(&p, msg->pointer_button.state);
		break;
	case WIRE_POINTER_AXIS:
		put_u32(&p, msg->pointer_axis.axis);
		put_u32(&p, (uint32_t)msg->pointer_axis.value);
		put_u32(&p, (uint32_t)msg->pointer_axis.discrete);
		put_u32(&p, msg->pointer_axis.source);
		break;
	case WIRE_POINTER_FRAME:
	case WIRE_TOUCH_FRAME:
	case WIRE_TOUCH_CANCEL:
		break;
	case WIRE_TOUCH_DOWN:
	case WIRE_TOUCH_MOTION:
		if (msg->type == WIRE_TOUCH_DOWN) {
			put_u32(&p, msg->touch.window);
		}
		put_u32(&p, (uint32_t)msg->touch.id);
		put_u32(&p, (uint32_t)msg->touch.x);
		put_u32(&p, (uint32_t)msg->touch.y);
		break;
	case WIRE_TOUCH_UP:
		put_u32(&p, (uint32_t)msg->touch.id);
		break;
	case WIRE_KEYBOARD_ENTER:
		put_u32(&p, msg->keyboard_enter.window);
		put_u32(&p, msg->keyboard_enter.nkeys);
		for (uint32_t i = 0; i < msg->keyboard_enter.nkeys; i++) {
			put_u32(&p, msg->keyboard_enter.keys[i]);
		}
		break;
	case WIRE_KEY:
		put_u32(&p, msg->key.key);
		put_u32(&p, msg->key.state);
		break;
	case WIRE_MODIFIERS:
		put_u32(&p, msg->modifiers.depressed);
		put_u32(&p, msg->modifiers.latched);
		put_u32(&p, msg->modifiers.locked);
		put_u32(&p, msg->modifiers.group);
		break;
	case WIRE_FRAME_ACK:
		put_u32(&p, msg->frame_ack.window);
		put_u32(&p, msg->frame_ack.seq);
		put_u64(&p, msg->frame_ack.recv_time_us);
		break;
	case WIRE_OUTPUT_INFO:
		put_u32(&p, msg->output_info.window);
		put_u32(&p, msg->output_info.refresh_mhz);
		put_u32(&p, (uint32_t)msg->output_info.scale);
		break;
	case WIRE_GOODBYE:
		put_u32(&p, (uint32_t)msg->goodbye.status);
		put_u32(&p, msg->goodbye.reason);
		put_bytes(&p, msg->goodbye.text, msg->goodbye.text_len);
		break;
	case WIRE_WINDOW_NEW:
		put_u32(&p, msg->window_new.window);
		put_u32(&p, msg->window_new.parent);
		put_u32(&p, (uint32_t)msg->window_new.width);
		put_u32(&p, (uint32_t)msg->window_new.height);
		put_u16(&p, (uint16_t)msg->window_new.title_len);
		put_u16(&p, (uint16_t)msg->window_new.app_id_len);
		put_bytes(&p, msg->window_new.title, msg->window_new.title_len);
		put_bytes(&p, msg->window_new.app_id, msg->window_new.app_id_len);
		break;
	case WIRE_WINDOW_TITLE:
	case WIRE_WINDOW_APP_ID:
		put_u32(&p, msg->window_text.window);
		put_bytes(&p, msg->window_text.text, msg->window_text.len);
		break;
	case WIRE_FRAME:
		/* Frames are written with wire_frame_begin(), payload in place. */
		return false;
	}
	assert((size_t)(p - start) == WIRE_HEADER_SIZE + body);
	buffer_commit(out, WIRE_HEADER_SIZE + body);
	return true;
}

bool wire_frame_begin(struct buffer *out, const struct wire_msg *msg, const struct wire_rect *rects,
	size_t *start)
{
	size_t fixed = WIRE_HEADER_SIZE + FRAME_FIXED + RECT_SIZE * (size_t)msg->frame.nrects;
	if (msg->type != WIRE_FRAME || msg->frame.nrects > WIRE_MAX_RECTS) {
		return false;
	}
	uint8_t *base = buffer_reserve(out, fixed);
	if (!base) {
		return false;
	}
	uint8_t *p = base;
	put_header(&p, WIRE_FRAME, 0); /* length patched by wire_frame_finish() */
	put_u32(&p, msg->frame.window);
	put_u32(&p, msg->frame.seq);
	put_u32(&p, (uint32_t)msg->frame.width);
	put_u32(&p, (uint32_t)msg->frame.height);
	put_u8(&p, msg->frame.codec);
	put_u8(&p, msg->frame.compression);
	put_u16(&p, msg->frame.flags);
	put_u32(&p, msg->frame.nrects);
	put_u32(&p, msg->frame.raw_size);
	for (uint32_t i = 0; i < msg->frame.nrects; i++) {
		put_u32(&p, (uint32_t)rects[i].x);
		put_u32(&p, (uint32_t)rects[i].y);
		put_u32(&p, (uint32_t)rects[i].width);
		put_u32(&p, (uint32_t)rects[i].height);
	}
	*start = buffer_size(out);
	buffer_commit(out, fixed);
	return true;
}

void wire_frame_finish(struct buffer *out, size_t start)
{
	size_t body = buffer_size(out) - start - WIRE_HEADER_SIZE;
	uint8_t *p = buffer_head(out) + start + 4;
	put_u32(&p, (uint32_t)body);
}
