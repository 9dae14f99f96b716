/* Unit tests of the wire format: round trips and rejection of bad input. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "wire.h"

static const uint32_t keys[] = {30, 42, 0xffff};
static const struct wire_rect frame_rects[] = {{0, 0, 4, 2}, {10, 5, 2, 3}};

/* One message of every type, with unusual but valid values. */
static struct wire_msg sample(enum wire_type type)
{
	struct wire_msg m = {.type = type};
	switch (type) {
	case WIRE_HELLO:
		m.hello.magic = WIRE_MAGIC;
		m.hello.major = 1;
		m.hello.minor = 7;
		m.hello.caps = 3;
		m.hello.flags = 2;
		m.hello.token = "0123456789abcdef";
		m.hello.token_len = 16;
		break;
	case WIRE_WELCOME:
		m.welcome.magic = WIRE_MAGIC;
		m.welcome.major = 1;
		m.welcome.minor = 7;
		m.welcome.caps = 3;
		m.welcome.flags = 2;
		m.welcome.session_id = 0x0123456789abcdefull;
		m.welcome.name = "work-1.x_Y";
		m.welcome.name_len = 10;
		break;
	case WIRE_KEYMAP:
		m.keymap.format = 1;
		m.keymap.data = "xkb_keymap { };";
		m.keymap.size = 15;
		break;
	case WIRE_REPEAT_INFO:
		m.repeat_info.rate = 33;
		m.repeat_info.delay = 250;
		break;
	case WIRE_CONFIGURE:
		m.configure.window = 7;
		m.configure.width = WIRE_MAX_DIM;
		m.configure.height = 0;
		m.configure.states = WIRE_STATE_MAXIMIZED | WIRE_STATE_ACTIVATED;
		break;
	case WIRE_SYNC:
		break;
	case WIRE_POPUP_DONE:
		m.popup_done.window = 9;
		break;
	case WIRE_CURSOR:
		m.cursor.hotspot_x = -3;
		m.cursor.hotspot_y = 4;
		m.cursor.width = 2;
		m.cursor.height = 1;
		m.cursor.scale = 2;
		m.cursor.pixels = (const uint8_t *)"\xff\x00\x00\x80\x01\x02\x03\x04";
		break;
	case WIRE_WINDOW_REQUEST:
		m.window_request.window = 4;
		m.window_request.request = WIRE_REQUEST_MINIMIZE;
		break;
	case WIRE_TOUCH_DOWN:
	case WIRE_TOUCH_MOTION:
		m.touch.window = type == WIRE_TOUCH_DOWN ? 3 : 0;
		m.touch.id = -7;
		m.touch.x = 256 * 50 + 128;
		m.touch.y = -256 * 3;
		break;
	case WIRE_TOUCH_UP:
		m.touch.id = 12;
		break;
	case WIRE_TOUCH_FRAME:
	case WIRE_TOUCH_CANCEL:
		break;
	case WIRE_SELECTION: {
		static uint8_t packed[64];
		size_t n = wire_mime_pack(packed, sizeof(packed), "text/plain", 10);
		n += wire_mime_pack(packed + n, sizeof(packed) - n, "UTF8_STRING", 11);
		m.selection.kind = WIRE_SELECTION_PRIMARY;
		m.selection.count = 2;
		m.selection.types = packed;
		m.selection.types_len = (uint32_t)n;
		break;
	}
	case WIRE_TRANSFER_REQUEST:
		m.transfer_request.id = 77;
		m.transfer_request.kind = WIRE_SELECTION_CLIPBOARD;
		m.transfer_request.mime = "text/plain;charset=utf-8";
		m.transfer_request.mime_len = 24;
		break;
	case WIRE_TRANSFER_DATA:
		m.transfer_data.id = 77;
		m.transfer_data.flags = WIRE_TRANSFER_END;
		m.transfer_data.data = (const uint8_t *)"hello\0world";
		m.transfer_data.len = 11;
		break;
	case WIRE_TRANSFER_ACK:
		m.transfer_ack.id = 77;
		m.transfer_ack.bytes = WIRE_MAX_TRANSFER_CHUNK;
		m.transfer_ack.flags = WIRE_TRANSFER_CANCEL;
		break;
	case WIRE_DECORATION_MODE:
	case WIRE_WINDOW_DECORATION:
		m.window_decoration.window = 4;
		m.window_decoration.mode = 2;
		break;
	case WIRE_WINDOW_HINTS:
		m.window_hints.window = 4;
		m.window_hints.min_width = 1;
		m.window_hints.min_height = 0;
		m.window_hints.max_width = WIRE_MAX_DIM;
		m.window_hints.max_height = 300;
		break;
	case WIRE_WINDOW_SCALE:
		m.window_scale.window = 4;
		m.window_scale.scale = WIRE_MAX_SCALE;
		break;
	case WIRE_WINDOW_PARENT:
		m.window_parent.window = 9;
		m.window_parent.parent = 2;
		break;
	case WIRE_POPUP_NEW:
		m.popup_new.window = 9;
		m.popup_new.parent = 4;
		m.popup_new.anchor_x = -20;
		m.popup_new.anchor_y = 30;
		m.popup_new.anchor_width = 0;
		m.popup_new.anchor_height = 12;
		m.popup_new.width = 120;
		m.popup_new.height = WIRE_MAX_DIM;
		m.popup_new.anchor = 8;
		m.popup_new.gravity = 4;
		m.popup_new.constraint_adjustment = 63;
		m.popup_new.offset_x = -WIRE_MAX_DIM;
		m.popup_new.offset_y = 7;
		m.popup_new.flags = WIRE_POPUP_GRAB;
		break;
	case WIRE_CLOSE:
	case WIRE_POINTER_LEAVE:
	case WIRE_KEYBOARD_LEAVE:
	case WIRE_WINDOW_DESTROY:
		m.close.window = 0xfffffffe;
		break;
	case WIRE_POINTER_MOTION:
		m.pointer_motion.window = 3;
		m.pointer_motion.x = -256 * 5 - 3;
		m.pointer_motion.y = 256 * 700 + 128;
		break;
	case WIRE_POINTER_BUTTON:
		m.pointer_button.button = 0x110;
		m.pointer_button.state = 1;
		break;
	case WIRE_POINTER_AXIS:
		m.pointer_axis.axis = 1;
		m.pointer_axis.value = -2560;
		m.pointer_axis.discrete = -1;
		m.pointer_axis.source = 2;
		break;
	case WIRE_POINTER_FRAME:
		break;
	case WIRE_KEYBOARD_ENTER:
		m.keyboard_enter.window = 9;
		m.keyboard_enter.nkeys = 3;
		m.keyboard_enter.keys = keys;
		break;
	case WIRE_KEY:
		m.key.key = 0xffff;
		m.key.state = 1;
		break;
	case WIRE_MODIFIERS:
		m.modifiers.depressed = 1;
		m.modifiers.latched = 2;
		m.modifiers.locked = 4;
		m.modifiers.group = 1;
		break;
	case WIRE_OUTPUT_INFO:
		m.output_info.window = 3;
		m.output_info.refresh_mhz = 59940;
		m.output_info.scale = 2;
		break;
	case WIRE_FRAME_ACK:
		m.frame_ack.window = 2;
		m.frame_ack.seq = 0xffffffff;
		m.frame_ack.recv_time_us = 0x123456789abcdefull;
		break;
	case WIRE_GOODBYE:
		m.goodbye.status = -3;
		m.goodbye.reason = WIRE_BYE_BUSY;
		m.goodbye.text = "busy";
		m.goodbye.text_len = 4;
		break;
	case WIRE_WINDOW_NEW:
		m.window_new.window = 1;
		m.window_new.parent = 0;
		m.window_new.width = 640;
		m.window_new.height = 480;
		m.window_new.title = "t\xc3\xa9rm";
		m.window_new.title_len = 5;
		m.window_new.app_id = "foot";
		m.window_new.app_id_len = 4;
		break;
	case WIRE_WINDOW_TITLE:
	case WIRE_WINDOW_APP_ID:
		m.window_text.window = 5;
		m.window_text.text = "hello";
		m.window_text.len = 5;
		break;
	case WIRE_FRAME:
		break;
	}
	return m;
}

static const enum wire_type viewer_types[] = {WIRE_HELLO, WIRE_KEYMAP, WIRE_REPEAT_INFO,
	WIRE_CONFIGURE, WIRE_CLOSE, WIRE_POINTER_MOTION, WIRE_POINTER_LEAVE, WIRE_POINTER_BUTTON,
	WIRE_POINTER_AXIS, WIRE_POINTER_FRAME, WIRE_KEYBOARD_ENTER, WIRE_KEYBOARD_LEAVE, WIRE_KEY,
	WIRE_MODIFIERS, WIRE_FRAME_ACK, WIRE_OUTPUT_INFO, WIRE_POPUP_DONE, WIRE_DECORATION_MODE,
	WIRE_TOUCH_DOWN, WIRE_TOUCH_UP, WIRE_TOUCH_MOTION, WIRE_TOUCH_FRAME, WIRE_TOUCH_CANCEL};
static const enum wire_type server_types[] = {WIRE_WELCOME, WIRE_GOODBYE, WIRE_WINDOW_NEW,
	WIRE_WINDOW_TITLE, WIRE_WINDOW_APP_ID, WIRE_WINDOW_DESTROY, WIRE_SYNC, WIRE_POPUP_NEW,
	WIRE_WINDOW_PARENT, WIRE_CURSOR, WIRE_WINDOW_SCALE, WIRE_WINDOW_REQUEST, WIRE_WINDOW_HINTS,
	WIRE_WINDOW_DECORATION};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Messages either peer may send. */
static const enum wire_type both_types[] = {WIRE_SELECTION, WIRE_TRANSFER_REQUEST,
	WIRE_TRANSFER_DATA, WIRE_TRANSFER_ACK};

static enum wire_sender sender_of(enum wire_type type)
{
	return (type & 0xff00) == 0x0100 ? WIRE_FROM_VIEWER : WIRE_FROM_SERVER;
}

/* Encodes a frame with the given payload. */
static void encode_frame(struct buffer *buf, uint32_t nrects, const struct wire_rect *rects,
	const uint8_t *payload, uint32_t payload_size, uint32_t raw_size)
{
	struct wire_msg m = {.type = WIRE_FRAME};
	m.frame.window = 4;
	m.frame.seq = 99;
	m.frame.width = 16;
	m.frame.height = 8;
	m.frame.codec = WIRE_CODEC_XOR;
	m.frame.compression = WIRE_COMPRESS_NONE;
	m.frame.flags = WIRE_FRAME_RESET;
	m.frame.nrects = nrects;
	m.frame.raw_size = raw_size;
	size_t start;
	CHECK(wire_frame_begin(buf, &m, rects, &start));
	CHECK(buffer_append(buf, payload, payload_size));
	wire_frame_finish(buf, start);
}

static enum wire_status decode(enum wire_sender from, struct buffer *buf, struct wire_msg *m,
	size_t *used)
{
	char err[256];
	return wire_decode(from, buffer_head(buf), buffer_size(buf), m, used, err, sizeof(err));
}

static void check_same(const struct wire_msg *a, const struct wire_msg *b)
{
	CHECK(a->type == b->type);
	switch (a->type) {
	case WIRE_KEYMAP:
		CHECK(a->keymap.format == b->keymap.format && a->keymap.size == b->keymap.size);
		CHECK(memcmp(a->keymap.data, b->keymap.data, a->keymap.size) == 0);
		break;
	case WIRE_KEYBOARD_ENTER:
		CHECK(a->keyboard_enter.window == b->keyboard_enter.window);
		CHECK(a->keyboard_enter.nkeys == b->keyboard_enter.nkeys);
		for (uint32_t i = 0; i < a->keyboard_enter.nkeys; i++) {
			CHECK(wire_get_key(b->keyboard_enter.keys, i) == a->keyboard_enter.keys[i]);
		}
		break;
	case WIRE_GOODBYE:
		CHECK(a->goodbye.status == b->goodbye.status);
		CHECK(a->goodbye.reason == b->goodbye.reason);
		CHECK(a->goodbye.text_len == b->goodbye.text_len);
		CHECK(memcmp(a->goodbye.text, b->goodbye.text, a->goodbye.text_len) == 0);
		break;
	case WIRE_WINDOW_NEW:
		CHECK(a->window_new.window == b->window_new.window);
		CHECK(a->window_new.parent == b->window_new.parent);
		CHECK(a->window_new.width == b->window_new.width);
		CHECK(a->window_new.height == b->window_new.height);
		CHECK(a->window_new.title_len == b->window_new.title_len);
		CHECK(a->window_new.app_id_len == b->window_new.app_id_len);
		CHECK(memcmp(a->window_new.title, b->window_new.title, a->window_new.title_len) ==
			0);
		CHECK(memcmp(a->window_new.app_id, b->window_new.app_id,
			      a->window_new.app_id_len) == 0);
		break;
	case WIRE_POPUP_NEW:
		CHECK(memcmp(&a->popup_new, &b->popup_new, sizeof(a->popup_new)) == 0);
		break;
	case WIRE_SELECTION:
		CHECK(a->selection.kind == b->selection.kind);
		CHECK(a->selection.count == b->selection.count);
		CHECK(a->selection.types_len == b->selection.types_len);
		CHECK(memcmp(a->selection.types, b->selection.types, a->selection.types_len) == 0);
		break;
	case WIRE_TRANSFER_REQUEST:
		CHECK(a->transfer_request.id == b->transfer_request.id);
		CHECK(a->transfer_request.kind == b->transfer_request.kind);
		CHECK(a->transfer_request.mime_len == b->transfer_request.mime_len);
		CHECK(memcmp(a->transfer_request.mime, b->transfer_request.mime,
			      a->transfer_request.mime_len) == 0);
		break;
	case WIRE_TRANSFER_DATA:
		CHECK(a->transfer_data.id == b->transfer_data.id);
		CHECK(a->transfer_data.flags == b->transfer_data.flags);
		CHECK(a->transfer_data.len == b->transfer_data.len);
		CHECK(memcmp(a->transfer_data.data, b->transfer_data.data, a->transfer_data.len) ==
			0);
		break;
	case WIRE_CURSOR:
		CHECK(a->cursor.hotspot_x == b->cursor.hotspot_x &&
			a->cursor.hotspot_y == b->cursor.hotspot_y);
		CHECK(a->cursor.width == b->cursor.width && a->cursor.height == b->cursor.height);
		CHECK(a->cursor.scale == b->cursor.scale);
		CHECK(memcmp(a->cursor.pixels, b->cursor.pixels,
			      (size_t)a->cursor.width * a->cursor.height * 4) == 0);
		break;
	case WIRE_HELLO:
		CHECK(a->hello.magic == b->hello.magic && a->hello.major == b->hello.major);
		CHECK(a->hello.minor == b->hello.minor && a->hello.caps == b->hello.caps);
		CHECK(a->hello.flags == b->hello.flags);
		CHECK(a->hello.token_len == b->hello.token_len);
		CHECK(memcmp(a->hello.token, b->hello.token, a->hello.token_len) == 0);
		break;
	case WIRE_WELCOME:
		CHECK(a->welcome.magic == b->welcome.magic && a->welcome.major == b->welcome.major);
		CHECK(a->welcome.minor == b->welcome.minor && a->welcome.caps == b->welcome.caps);
		CHECK(a->welcome.flags == b->welcome.flags);
		CHECK(a->welcome.session_id == b->welcome.session_id);
		CHECK(a->welcome.name_len == b->welcome.name_len);
		CHECK(memcmp(a->welcome.name, b->welcome.name, a->welcome.name_len) == 0);
		break;
	case WIRE_WINDOW_TITLE:
	case WIRE_WINDOW_APP_ID:
		CHECK(a->window_text.window == b->window_text.window);
		CHECK(a->window_text.len == b->window_text.len);
		CHECK(memcmp(a->window_text.text, b->window_text.text, a->window_text.len) == 0);
		break;
	default:
		/* Fixed-size messages: every field is in the union's first bytes. */
		CHECK(memcmp(&a->frame_ack, &b->frame_ack, sizeof(a->frame_ack)) == 0);
		break;
	}
}

static void test_roundtrip(void)
{
	const enum wire_type *lists[] = {viewer_types, server_types};
	size_t sizes[] = {N(viewer_types), N(server_types)};
	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; i < sizes[l]; i++) {
			struct wire_msg in = sample(lists[l][i]), out;
			struct buffer buf;
			buffer_init(&buf, 1 << 20);
			CHECK(wire_encode(&buf, &in));
			size_t used = 0;
			CHECK(decode(sender_of(in.type), &buf, &out, &used) == WIRE_OK);
			CHECK(used == buffer_size(&buf));
			check_same(&in, &out);
			buffer_finish(&buf);
		}
	}
	for (size_t i = 0; i < N(both_types); i++) {
		for (int from = WIRE_FROM_VIEWER; from <= WIRE_FROM_SERVER; from++) {
			struct wire_msg in = sample(both_types[i]), out;
			struct buffer b;
			buffer_init(&b, 1 << 20);
			CHECK(wire_encode(&b, &in));
			size_t used = 0;
			CHECK(decode((enum wire_sender)from, &b, &out, &used) == WIRE_OK);
			check_same(&in, &out);
			buffer_finish(&b);
		}
	}
	/* MIME types come back as they went. */
	struct wire_msg sel = sample(WIRE_SELECTION);
	size_t pos = 0, len;
	const char *mime;
	CHECK(wire_mime_next(&sel, &pos, &mime, &len) && len == 10 &&
		memcmp(mime, "text/plain", 10) == 0);
	CHECK(wire_mime_next(&sel, &pos, &mime, &len) && len == 11 &&
		memcmp(mime, "UTF8_STRING", 11) == 0);
	CHECK(!wire_mime_next(&sel, &pos, &mime, &len));
	uint8_t small[8];
	CHECK(wire_mime_pack(small, sizeof(small), "text/plain", 10) == 0);
	/* Frames, with rectangles and payload. */
	struct buffer buf;
	buffer_init(&buf, 1 << 20);
	uint8_t payload[(4 * 2 + 2 * 3) * 4];
	for (size_t i = 0; i < sizeof(payload); i++) {
		payload[i] = (uint8_t)(i * 7);
	}
	encode_frame(&buf, 2, frame_rects, payload, sizeof(payload), sizeof(payload));
	struct wire_msg out;
	size_t used;
	CHECK(decode(WIRE_FROM_SERVER, &buf, &out, &used) == WIRE_OK);
	CHECK(out.frame.window == 4 && out.frame.seq == 99 && out.frame.width == 16);
	CHECK(out.frame.nrects == 2 && out.frame.flags == WIRE_FRAME_RESET);
	struct wire_rect r = wire_get_rect(out.frame.rects, 1);
	CHECK(r.x == 10 && r.y == 5 && r.width == 2 && r.height == 3);
	CHECK(out.frame.payload_size == sizeof(payload));
	CHECK(memcmp(out.frame.payload, payload, sizeof(payload)) == 0);
	buffer_finish(&buf);
}

static void test_truncated(void)
{
	/* Every strict prefix of a valid message asks for more, never more. */
	for (size_t i = 0; i < N(viewer_types) + N(server_types); i++) {
		enum wire_type type =
			i < N(viewer_types) ? viewer_types[i] : server_types[i - N(viewer_types)];
		struct wire_msg in = sample(type), out;
		struct buffer buf;
		buffer_init(&buf, 1 << 20);
		CHECK(wire_encode(&buf, &in));
		for (size_t len = 0; len < buffer_size(&buf); len++) {
			size_t used = 0;
			char err[256];
			CHECK(wire_decode(sender_of(type), buffer_head(&buf), len, &out, &used, err,
				      sizeof(err)) == WIRE_INCOMPLETE);
		}
		buffer_finish(&buf);
	}
}

static void put_header(struct buffer *buf, uint16_t type, uint16_t flags, uint32_t len)
{
	uint8_t h[8] = {(uint8_t)type, (uint8_t)(type >> 8), (uint8_t)flags, (uint8_t)(flags >> 8),
		(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
	buffer_append(buf, h, 8);
}

static void test_oversized(void)
{
	struct buffer buf;
	struct wire_msg m;
	size_t used;
	/* A declared length past the limit is refused from the header alone,
	 * before any body is buffered. */
	uint32_t lengths[] = {0xffffffffu, WIRE_MAX_BODY + 1};
	for (size_t i = 0; i < N(lengths); i++) {
		buffer_init(&buf, 64);
		put_header(&buf, WIRE_FRAME, 0, lengths[i]);
		CHECK(decode(WIRE_FROM_SERVER, &buf, &m, &used) == WIRE_INVALID);
		buffer_finish(&buf);
	}
	buffer_init(&buf, 64);
	put_header(&buf, WIRE_KEYMAP, 0, 4 + WIRE_MAX_KEYMAP + 1);
	CHECK(decode(WIRE_FROM_VIEWER, &buf, &m, &used) == WIRE_INVALID);
	buffer_finish(&buf);
	/* Fixed-size messages with extra bytes. */
	buffer_init(&buf, 64);
	put_header(&buf, WIRE_KEY, 0, 9);
	CHECK(decode(WIRE_FROM_VIEWER, &buf, &m, &used) == WIRE_INVALID);
	buffer_finish(&buf);
	/* A title longer than allowed cannot be encoded or decoded. */
	static char title[WIRE_MAX_TITLE + 1];
	struct wire_msg t = sample(WIRE_WINDOW_TITLE);
	t.window_text.text = title;
	t.window_text.len = sizeof(title);
	buffer_init(&buf, 1 << 20);
	CHECK(!wire_encode(&buf, &t));
	put_header(&buf, WIRE_WINDOW_TITLE, 0, 4 + sizeof(title));
	CHECK(decode(WIRE_FROM_SERVER, &buf, &m, &used) == WIRE_INVALID);
	buffer_finish(&buf);
	/* A buffer refuses to grow past its limit. */
	buffer_init(&buf, 16);
	CHECK(!wire_encode(&buf, &t));
	CHECK(buffer_reserve(&buf, 17) == NULL);
	buffer_finish(&buf);
}

static void test_unknown(void)
{
	struct buffer buf;
	struct wire_msg m;
	size_t used;
	uint16_t bad_types[] = {0, 0x0100, 0x0112, 0x0200, 0x020a, 0xffff};
	for (size_t i = 0; i < N(bad_types); i++) {
		buffer_init(&buf, 64);
		put_header(&buf, bad_types[i], 0, 0);
		CHECK(decode(WIRE_FROM_VIEWER, &buf, &m, &used) == WIRE_INVALID);
		CHECK(decode(WIRE_FROM_SERVER, &buf, &m, &used) == WIRE_INVALID);
		buffer_finish(&buf);
	}
	/* Reserved header bits. */
	buffer_init(&buf, 64);
	put_header(&buf, WIRE_POINTER_FRAME, 1, 0);
	CHECK(decode(WIRE_FROM_VIEWER, &buf, &m, &used) == WIRE_INVALID);
	buffer_finish(&buf);
	/* Messages from the wrong side. */
	for (size_t i = 0; i < N(viewer_types); i++) {
		struct wire_msg in = sample(viewer_types[i]);
		buffer_init(&buf, 1 << 20);
		CHECK(wire_encode(&buf, &in));
		CHECK(decode(WIRE_FROM_SERVER, &buf, &m, &used) == WIRE_INVALID);
		buffer_finish(&buf);
	}
	for (size_t i = 0; i < N(server_types); i++) {
		struct wire_msg in = sample(server_types[i]);
		buffer_init(&buf, 1 << 20);
		CHECK(wire_encode(&buf, &in));
		CHECK(decode(WIRE_FROM_VIEWER, &buf, &m, &used) == WIRE_INVALID);
		buffer_finish(&buf);
	}
	/* A peer that does not speak rcomp. */
	struct wire_msg hello = sample(WIRE_HELLO);
	hello.hello.magic = 0x50545448; /* "HTTP" */
	buffer_init(&buf, 64);
	CHECK(wire_encode(&buf, &hello));
	CHECK(decode(WIRE_FROM_VIEWER, &buf, &m, &used) == WIRE_INVALID);
	buffer_finish(&buf);
}

static void expect_invalid(struct wire_msg in)
{
	struct buffer buf;
	struct wire_msg m;
	size_t used;
	buffer_init(&buf, 1 << 20);
	if (wire_encode(&buf, &in)) {
		CHECK(decode(sender_of(in.type), &buf, &m, &used) == WIRE_INVALID);
	}
	buffer_finish(&buf);
}

static void expect_invalid_frame(uint32_t nrects, const struct wire_rect *rects,
	uint32_t payload_size, uint32_t raw_size, int width, int height, int compression, int flags)
{
	static uint8_t payload[4096];
	struct buffer buf;
	struct wire_msg m = {.type = WIRE_FRAME};
	size_t used, start;
	buffer_init(&buf, 1 << 20);
	m.frame.window = 1;
	m.frame.width = width;
	m.frame.height = height;
	m.frame.compression = (uint8_t)compression;
	m.frame.flags = (uint16_t)flags;
	m.frame.nrects = nrects;
	m.frame.raw_size = raw_size;
	CHECK(wire_frame_begin(&buf, &m, rects, &start));
	CHECK(buffer_append(&buf, payload, payload_size));
	wire_frame_finish(&buf, start);
	CHECK(decode(WIRE_FROM_SERVER, &buf, &m, &used) == WIRE_INVALID);
	buffer_finish(&buf);
}

static void test_limits(void)
{
	struct wire_msg m;
	/* Tokens and session names. */
	static const char long_text[WIRE_MAX_TOKEN + 2] = {0};
	m = sample(WIRE_HELLO);
	m.hello.token = long_text;
	m.hello.token_len = WIRE_MAX_TOKEN + 1;
	expect_invalid(m);
	const char *bad_names[] = {"", ".hidden", "a/b", "a b", "x;rm", "\xc3\xa9"};
	for (size_t i = 0; i < N(bad_names); i++) {
		m = sample(WIRE_WELCOME);
		m.welcome.name = bad_names[i];
		m.welcome.name_len = (uint32_t)strlen(bad_names[i]);
		expect_invalid(m);
	}
	CHECK(wire_session_name_ok("0", 1) && wire_session_name_ok("work-2.b_c", 10));
	CHECK(!wire_session_name_ok("..", 2));
	/* Popups. */
	m = sample(WIRE_POPUP_NEW);
	m.popup_new.parent = m.popup_new.window;
	expect_invalid(m);
	m = sample(WIRE_WINDOW_PARENT);
	m.window_parent.parent = m.window_parent.window;
	expect_invalid(m);
	m = sample(WIRE_WINDOW_PARENT);
	m.window_parent.window = 0;
	expect_invalid(m);
	m = sample(WIRE_WINDOW_SCALE);
	m.window_scale.scale = 0;
	expect_invalid(m);
	m = sample(WIRE_WINDOW_REQUEST);
	m.window_request.request = 0;
	expect_invalid(m);
	m = sample(WIRE_WINDOW_HINTS);
	m.window_hints.max_height = -1;
	expect_invalid(m);
	m = sample(WIRE_WINDOW_DECORATION);
	m.window_decoration.mode = 3;
	expect_invalid(m);
	m = sample(WIRE_TOUCH_DOWN);
	m.touch.x = INT32_MIN;
	expect_invalid(m);
	/* Clipboard. */
	m = sample(WIRE_SELECTION);
	m.selection.count = 3; /* more than the types present */
	expect_invalid(m);
	m = sample(WIRE_SELECTION);
	m.selection.count = 1; /* fewer: bytes left over */
	expect_invalid(m);
	m = sample(WIRE_SELECTION);
	m.selection.kind = 2;
	expect_invalid(m);
	static const uint8_t empty_mime[] = {0, 0};
	m = sample(WIRE_SELECTION);
	m.selection.count = 1;
	m.selection.types = empty_mime;
	m.selection.types_len = 2;
	expect_invalid(m);
	static const uint8_t long_mime[] = {0xff, 0xff, 'a'};
	m.selection.types = long_mime;
	m.selection.types_len = 3;
	expect_invalid(m);
	m = sample(WIRE_TRANSFER_REQUEST);
	m.transfer_request.kind = 5;
	expect_invalid(m);
	m = sample(WIRE_TRANSFER_DATA);
	m.transfer_data.flags = 4;
	expect_invalid(m);
	m = sample(WIRE_TRANSFER_ACK);
	m.transfer_ack.flags = 2;
	expect_invalid(m);
	/* Cursors. */
	m = sample(WIRE_CURSOR);
	m.cursor.scale = 0;
	expect_invalid(m);
	m = sample(WIRE_CURSOR);
	m.cursor.hotspot_x = -WIRE_MAX_CURSOR * WIRE_MAX_SCALE - 1;
	expect_invalid(m);
	m = sample(WIRE_CURSOR);
	m.cursor.width = 0;
	expect_invalid(m);
	m = sample(WIRE_POPUP_NEW);
	m.popup_new.width = 0;
	expect_invalid(m);
	m = sample(WIRE_POPUP_NEW);
	m.popup_new.anchor_x = WIRE_MAX_DIM + 1;
	expect_invalid(m);
	m = sample(WIRE_POPUP_NEW);
	m.popup_new.gravity = 9;
	expect_invalid(m);
	m = sample(WIRE_POPUP_NEW);
	m.popup_new.flags = 2;
	expect_invalid(m);
	m = sample(WIRE_CONFIGURE);
	m.configure.width = WIRE_MAX_DIM + 1;
	expect_invalid(m);
	m = sample(WIRE_CONFIGURE);
	m.configure.height = -1;
	expect_invalid(m);
	m = sample(WIRE_CONFIGURE);
	m.configure.states = 1u << 8;
	expect_invalid(m);
	m = sample(WIRE_KEY);
	m.key.state = 2;
	expect_invalid(m);
	m = sample(WIRE_KEY);
	m.key.key = 0x10000;
	expect_invalid(m);
	m = sample(WIRE_POINTER_BUTTON);
	m.pointer_button.state = 7;
	expect_invalid(m);
	m = sample(WIRE_POINTER_AXIS);
	m.pointer_axis.axis = 2;
	expect_invalid(m);
	m = sample(WIRE_POINTER_MOTION);
	m.pointer_motion.x = INT32_MAX;
	expect_invalid(m);
	m = sample(WIRE_REPEAT_INFO);
	m.repeat_info.rate = -1;
	expect_invalid(m);
	m = sample(WIRE_KEYMAP);
	m.keymap.format = 2;
	expect_invalid(m);
	m = sample(WIRE_WINDOW_NEW);
	m.window_new.window = 0;
	expect_invalid(m);
	m = sample(WIRE_WINDOW_NEW);
	m.window_new.width = WIRE_MAX_DIM + 1;
	expect_invalid(m);
	m = sample(WIRE_GOODBYE);
	m.goodbye.reason = 99;
	expect_invalid(m);
	m = sample(WIRE_OUTPUT_INFO);
	m.output_info.scale = 0;
	expect_invalid(m);
	m = sample(WIRE_OUTPUT_INFO);
	m.output_info.refresh_mhz = WIRE_MAX_REFRESH_MHZ + 1;
	expect_invalid(m);

	/* keyboard_enter whose count disagrees with its length. */
	struct buffer buf;
	size_t used;
	buffer_init(&buf, 64);
	put_header(&buf, WIRE_KEYBOARD_ENTER, 0, 12);
	uint8_t body[12] = {1, 0, 0, 0, 2, 0, 0, 0, 30, 0, 0, 0};
	buffer_append(&buf, body, sizeof(body));
	CHECK(decode(WIRE_FROM_VIEWER, &buf, &m, &used) == WIRE_INVALID);
	buffer_finish(&buf);

	/* Frames. */
	struct wire_rect ok = {0, 0, 4, 2};
	expect_invalid_frame(1, &ok, 32, 32, 0, 8, 0, 0); /* zero width */
	expect_invalid_frame(1, &ok, 32, 32, WIRE_MAX_DIM + 1, 8, 0, 0);
	expect_invalid_frame(1, &ok, 32, 32, 4096, 4097, 0, 0); /* too many pixels */
	expect_invalid_frame(1, &ok, 32, 32, 16, 8, 3, 0); /* unknown compression */
	{
		/* Video frames take no rectangles, no compression, a payload. */
		struct buffer vb;
		struct wire_msg vm = {.type = WIRE_FRAME};
		size_t vstart, vused;
		static const uint8_t au[4] = {0, 0, 1, 0x65};
		for (int variant = 0; variant < 4; variant++) {
			buffer_init(&vb, 4096);
			vm.frame.window = 1;
			vm.frame.width = 16;
			vm.frame.height = 8;
			vm.frame.codec = WIRE_CODEC_H264;
			vm.frame.compression =
				variant == 1 ? WIRE_COMPRESS_LZ4 : WIRE_COMPRESS_NONE;
			vm.frame.nrects = variant == 2 ? 1 : 0;
			vm.frame.raw_size = variant == 2 ? 32 : 0;
			CHECK(wire_frame_begin(&vb, &vm, &ok, &vstart));
			if (variant != 3) {
				CHECK(buffer_append(&vb, au, sizeof(au)));
			}
			wire_frame_finish(&vb, vstart);
			enum wire_status st = decode(WIRE_FROM_SERVER, &vb, &vm, &vused);
			CHECK(variant == 0 ? st == WIRE_OK : st == WIRE_INVALID);
			buffer_finish(&vb);
		}
	}
	expect_invalid_frame(1, &ok, 32, 32, 16, 8, 0, 2); /* unknown flag */
	{
		struct buffer cb;
		struct wire_msg cm = {.type = WIRE_FRAME};
		size_t cstart, cused;
		buffer_init(&cb, 4096);
		cm.frame.window = 1;
		cm.frame.width = 16;
		cm.frame.height = 8;
		cm.frame.codec = 2; /* unknown codec */
		CHECK(wire_frame_begin(&cb, &cm, &ok, &cstart));
		wire_frame_finish(&cb, cstart);
		CHECK(decode(WIRE_FROM_SERVER, &cb, &cm, &cused) == WIRE_INVALID);
		buffer_finish(&cb);
	}
	expect_invalid_frame(1, &ok, 32, 36, 16, 8, 0, 0); /* raw size mismatch */
	expect_invalid_frame(1, &ok, 31, 32, 16, 8, 0, 0); /* payload mismatch */
	struct wire_rect outside[] = {{13, 0, 4, 1}, {0, 7, 1, 2}, {-1, 0, 1, 1}, {0, 0, 0, 1},
		{INT32_MAX, 0, 2, 1}, {0, 0, INT32_MAX, 1}};
	for (size_t i = 0; i < N(outside); i++) {
		expect_invalid_frame(1, &outside[i], 4, 4, 16, 8, 0, 0);
	}
	/* More rectangles than the limit, or than the body holds. */
	buffer_init(&buf, 1 << 20);
	put_header(&buf, WIRE_FRAME, 0, 28);
	uint8_t fixed[28] = {1, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0xff,
		0xff, 0, 0, 0, 0, 0, 0};
	buffer_append(&buf, fixed, sizeof(fixed));
	CHECK(decode(WIRE_FROM_SERVER, &buf, &m, &used) == WIRE_INVALID);
	buffer_finish(&buf);
	fixed[20] = 2;
	fixed[21] = 0;
	buffer_init(&buf, 1 << 20);
	put_header(&buf, WIRE_FRAME, 0, 28 + 16);
	buffer_append(&buf, fixed, sizeof(fixed));
	buffer_append(&buf, &ok, 16);
	CHECK(decode(WIRE_FROM_SERVER, &buf, &m, &used) == WIRE_INVALID);
	buffer_finish(&buf);
}

static void test_random(void)
{
	/* Random bytes: decoding never crashes, never reads past the input,
	 * and an OK answer always consumes a plausible length. */
	uint64_t state = 0x9e3779b97f4a7c15ull;
	uint8_t data[256];
	for (int iter = 0; iter < 200000; iter++) {
		size_t len = (size_t)(iter % 256);
		for (size_t i = 0; i < len; i++) {
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			data[i] = (uint8_t)state;
		}
		/* Often use a real type so that bodies get parsed. */
		if (len >= 2 && iter % 2) {
			uint16_t types[] = {0x0101, 0x0104, 0x010b, 0x0203, 0x0207, 0x0202};
			uint16_t t = types[(state >> 8) % N(types)];
			data[0] = (uint8_t)t;
			data[1] = (uint8_t)(t >> 8);
			if (len >= 8) {
				data[2] = data[3] = 0;
				uint32_t body = (uint32_t)(len - 8);
				memcpy(data + 4, &body, 4);
			}
		}
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, data, len);
		struct wire_msg m;
		size_t used = 0;
		char err[256];
		for (int from = 1; from <= 2; from++) {
			enum wire_status s = wire_decode((enum wire_sender)from, copy, len, &m,
				&used, err, sizeof(err));
			if (s == WIRE_OK) {
				CHECK(used <= len && used >= WIRE_HEADER_SIZE);
			}
		}
		free(copy);
	}
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"roundtrip", test_roundtrip},
		{"truncated", test_truncated},
		{"oversized", test_oversized},
		{"unknown", test_unknown},
		{"limits", test_limits},
		{"random", test_random},
	};
	return check_main(argc, argv, cases, N(cases));
}
