/*
 * Unit tests of the wire format. The round trip, the ranges and the flag
 * checks are generated from the message table itself, so a message added
 * there is tested here without a line more; the checks that span fields
 * have a case each.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "channel.h"
#include "check.h"
#include "mime.h"
#include "wire.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Zeros for arrays whose count a test pushes past its limit. */
static const uint8_t zeros[1 << 17];

static uint8_t keys[3 * 4];
static uint8_t rects[2 * WIRE_RECT_SIZE];
static uint8_t frame_payload[(4 * 2 + 2 * 3) * 4];
static uint8_t mime_types[64];

static void init_arrays(void)
{
	wire_put_key(keys, 0, 30);
	wire_put_key(keys, 1, 42);
	wire_put_key(keys, 2, 0xffff);
	wire_put_rect(rects, 0, (struct wire_rect){0, 0, 4, 2});
	wire_put_rect(rects, 1, (struct wire_rect){10, 5, 2, 3});
	for (size_t i = 0; i < sizeof(frame_payload); i++) {
		frame_payload[i] = (uint8_t)(i * 7);
	}
	struct mime_list list = {0};
	mime_list_add(&list, "text/plain", 10);
	mime_list_add(&list, "UTF8_STRING", 11);
	memcpy(mime_types, list.packed, list.used);
}

/* A message with every field at the least its row of messages.h allows:
 * valid wherever the row names no check across fields. */
#define FIELD(type, name)
#define RANGE(type, name, min, max) f->name = (min);
#define BITS(type, name, mask)
#define COUNT(type, name, min, max, array, ctype, size) \
	f->name = (min); \
	f->array = (const ctype *)zeros;
#define REST(array, ctype, len, min, max) \
	f->len = (min); \
	f->array = (const ctype *)zeros;
#define NONE
static struct wire_msg least(enum wire_type type)
{
	struct wire_msg m = {.type = type};
	switch (type) {
#define X(NAME, name, code, sender, fixed, carrier, check) \
	case WIRE_##NAME: { \
		struct wire_##name *f = &m.name; \
		(void)f; \
		WIRE_##NAME##_FIELDS break; \
	}
		WIRE_MESSAGES(X)
#undef X
	}
	return m;
}
#undef FIELD
#undef RANGE
#undef BITS
#undef COUNT
#undef REST
#undef NONE

/* One valid message of every type, with unusual but valid values. */
static struct wire_msg sample(enum wire_type type)
{
	struct wire_msg m = {.type = type};
	switch (type) {
	case WIRE_HELLO:
		m.hello = (struct wire_hello){WIRE_MAGIC, 1, 7, 3, 2, 16, "0123456789abcdef"};
		break;
	case WIRE_KEYMAP:
		m.keymap = (struct wire_keymap){1, "xkb_keymap { };", 15};
		break;
	case WIRE_REPEAT_INFO:
		m.repeat_info = (struct wire_repeat_info){33, 250};
		break;
	case WIRE_CONFIGURE:
		m.configure = (struct wire_configure){7, WIRE_MAX_DIM, 0,
			WIRE_STATE_MAXIMIZED | WIRE_STATE_ACTIVATED};
		break;
	case WIRE_CLOSE:
		m.close.window = 0xfffffffe;
		break;
	case WIRE_POINTER_MOTION:
		m.pointer_motion = (struct wire_pointer_motion){3, -256 * 5 - 3, 256 * 700 + 128};
		break;
	case WIRE_POINTER_LEAVE:
		m.pointer_leave.window = 5;
		break;
	case WIRE_POINTER_BUTTON:
		m.pointer_button = (struct wire_pointer_button){0x110, 1};
		break;
	case WIRE_POINTER_AXIS:
		m.pointer_axis = (struct wire_pointer_axis){1, -2560, -1, 2};
		break;
	case WIRE_KEYBOARD_ENTER:
		m.keyboard_enter = (struct wire_keyboard_enter){9, 3, keys};
		break;
	case WIRE_KEYBOARD_LEAVE:
		m.keyboard_leave.window = 9;
		break;
	case WIRE_KEY:
		m.key = (struct wire_key){0xffff, 1};
		break;
	case WIRE_KEY_CHAR:
		m.key_char = (struct wire_key_char){3, 0x10ffff, 1};
		break;
	case WIRE_MODIFIERS:
		m.modifiers = (struct wire_modifiers){1, 2, 4, 1};
		break;
	case WIRE_FRAME_ACK:
		m.frame_ack = (struct wire_frame_ack){2, 0xffffffff, 0x123456789abcdefull};
		break;
	case WIRE_OUTPUT_INFO:
		m.output_info = (struct wire_output_info){3, 59940, 2};
		break;
	case WIRE_POPUP_DONE:
		m.popup_done.window = 9;
		break;
	case WIRE_DECORATION_MODE:
		m.decoration_mode = (struct wire_decoration_mode){4, WIRE_DECORATION_SERVER_SIDE};
		break;
	case WIRE_TOUCH_DOWN:
		m.touch_down = (struct wire_touch_down){3, -7, 256 * 50 + 128, -256 * 3};
		break;
	case WIRE_TOUCH_UP:
		m.touch_up.id = 12;
		break;
	case WIRE_TOUCH_MOTION:
		m.touch_motion = (struct wire_touch_motion){-7, 256 * 51, 0};
		break;
	case WIRE_WELCOME:
		m.welcome = (struct wire_welcome){WIRE_MAGIC, 1, 7, 3, WIRE_COMPRESS_ZSTD,
			0x0123456789abcdefull, 10, "work-1.x_Y"};
		break;
	case WIRE_GOODBYE:
		m.goodbye = (struct wire_goodbye){-3, WIRE_BYE_BUSY, "busy", 4};
		break;
	case WIRE_WINDOW_NEW:
		m.window_new =
			(struct wire_window_new){1, 0, 640, 480, 5, "t\xc3\xa9rm", 4, "foot"};
		break;
	case WIRE_WINDOW_TITLE:
		m.window_title = (struct wire_window_title){5, "hello", 5};
		break;
	case WIRE_WINDOW_APP_ID:
		m.window_app_id = (struct wire_window_app_id){5, "org.example", 11};
		break;
	case WIRE_WINDOW_DESTROY:
		m.window_destroy.window = 6;
		break;
	case WIRE_FRAME:
		m.frame = (struct wire_frame){
			.window = 4,
			.seq = 99,
			.width = 16,
			.height = 8,
			.codec = WIRE_CODEC_XOR,
			.compression = WIRE_COMPRESS_NONE,
			.flags = WIRE_FRAME_RESET,
			.nrects = 2,
			.rects = rects,
			.raw_size = sizeof(frame_payload),
			.payload = frame_payload,
			.payload_size = sizeof(frame_payload),
		};
		break;
	case WIRE_POPUP_NEW:
		m.popup_new = (struct wire_popup_new){9, 4, -20, 30, 0, 12, 120, WIRE_MAX_DIM, 8, 4,
			63, -WIRE_MAX_DIM, 7, WIRE_POPUP_GRAB};
		break;
	case WIRE_WINDOW_PARENT:
		m.window_parent = (struct wire_window_parent){9, 2};
		break;
	case WIRE_CURSOR:
		m.cursor = (struct wire_cursor){-3, 4, 2, 1, 2,
			(const uint8_t *)"\xff\x00\x00\x80\x01\x02\x03\x04", 8};
		break;
	case WIRE_WINDOW_SCALE:
		m.window_scale = (struct wire_window_scale){4, WIRE_MAX_SCALE};
		break;
	case WIRE_WINDOW_REQUEST:
		m.window_request = (struct wire_window_request){4, WIRE_REQUEST_MINIMIZE};
		break;
	case WIRE_WINDOW_HINTS:
		m.window_hints = (struct wire_window_hints){4, 1, 0, WIRE_MAX_DIM, 300};
		break;
	case WIRE_WINDOW_DECORATION:
		m.window_decoration =
			(struct wire_window_decoration){4, WIRE_DECORATION_CLIENT_SIDE};
		break;
	case WIRE_COPY_RECT:
		m.copy_rect = (struct wire_copy_rect){4, 0, 17, WIRE_MAX_DIM, 100, 0, -17};
		break;
	case WIRE_SELECTION:
		m.selection = (struct wire_selection){WIRE_SELECTION_PRIMARY, 2, mime_types,
			2 + 10 + 2 + 11};
		break;
	case WIRE_DND_ENTER:
		m.dnd_enter = (struct wire_dnd_enter){3, WIRE_MIN_POSITION, WIRE_MAX_POSITION,
			WIRE_DND_ALL, 2, mime_types, 2 + 10 + 2 + 11};
		break;
	case WIRE_DND_MOTION:
		m.dnd_motion = (struct wire_dnd_motion){-256, 256 * 77};
		break;
	case WIRE_DND_LEAVE:
	case WIRE_DND_DROP:
	case WIRE_DND_FINISH:
		break;
	case WIRE_DND_ACTION:
		m.dnd_action.action = WIRE_DND_ASK;
		break;
	case WIRE_DRAG_START:
		m.drag_start = (struct wire_drag_start){3, 9, WIRE_DND_COPY, 2, mime_types,
			2 + 10 + 2 + 11};
		break;
	case WIRE_DRAG_END:
		break;
	case WIRE_DRAG_ICON:
		m.drag_icon = (struct wire_drag_icon){-3, 5, 2, 1, 2,
			(const uint8_t *)"\xff\x00\x00\x80\x01\x02\x03\x04", 8};
		break;
	case WIRE_DRAG_LOCAL:
		m.drag_local = (struct wire_drag_local){WIRE_DRAG_FINISHED, WIRE_DND_MOVE};
		break;
	case WIRE_DND_STATUS:
		m.dnd_status = (struct wire_dnd_status){WIRE_DND_COPY | WIRE_DND_MOVE,
			WIRE_DND_MOVE, "text/plain", 10};
		break;
	case WIRE_TRANSFER_REQUEST:
		m.transfer_request = (struct wire_transfer_request){77, WIRE_SELECTION_CLIPBOARD,
			24, "text/plain;charset=utf-8"};
		break;
	case WIRE_TRANSFER_DATA:
		m.transfer_data = (struct wire_transfer_data){77, WIRE_TRANSFER_END,
			(const uint8_t *)"hello\0world", 11};
		break;
	case WIRE_TRANSFER_ACK:
		m.transfer_ack = (struct wire_transfer_ack){77, WIRE_MAX_TRANSFER_CHUNK,
			WIRE_TRANSFER_CANCEL};
		break;
	case WIRE_FILE_GROUP:
		m.file_group = (struct wire_file_group){0xfffffff0, WIRE_FILES_DROP, 4, 256 * 40,
			-256 * 3, WIRE_MAX_FILES, 1ull << 40, 0};
		break;
	case WIRE_FILE_OFFER:
		m.file_offer = (struct wire_file_offer){9, 3, 5000000000ull, 0755, 32, zeros,
			"photos/2024/a.jpg", 17};
		break;
	case WIRE_FILE_DATA:
		m.file_data = (struct wire_file_data){9, 3, 4000000000ull, zeros,
			WIRE_MAX_TRANSFER_CHUNK};
		break;
	case WIRE_FILE_ACK:
		m.file_ack = (struct wire_file_ack){9, 4, 123456789, WIRE_FILES_FROM_HERE};
		break;
	case WIRE_FILE_DONE:
		m.file_done = (struct wire_file_done){9, WIRE_FILES_REFUSED, 2,
			"refused: a name with a part that begins with a dot", 50};
		break;
	case WIRE_SEND_FILES:
		m.send_files = (struct wire_send_files){2, WIRE_FILES_PRINT,
			"/home/me/a\0/home/me/b\0", 22};
		break;
	case WIRE_SHORTCUTS_INHIBIT_STATE:
		m.shortcuts_inhibit_state = (struct wire_shortcuts_inhibit_state){3, 1};
		break;
	case WIRE_SHORTCUTS_INHIBIT:
		m.shortcuts_inhibit = (struct wire_shortcuts_inhibit){3, 1};
		break;
	case WIRE_WINDOW_GRAB:
		m.window_grab = (struct wire_window_grab){3, WIRE_GRAB_RESIZE, 77, 10, 0, 0};
		break;
	case WIRE_TEXT_INPUT:
		m.text_input = (struct wire_text_input){3, WIRE_TEXT_INPUT_ENABLED, 5, 2, 1, 0x3ff,
			13, -WIRE_MAX_DIM, 2 * WIRE_MAX_DIM, 2, WIRE_MAX_DIM, "hello world", 11};
		break;
	case WIRE_TEXT_INPUT_EVENT:
		m.text_input_event = (struct wire_text_input_event){3, WIRE_TEXT_INPUT_PREEDIT, -1,
			6, 4000, 1, 6, "\xe6\x97\xa5\xe6\x9c\xac", 3, "\xe8\xaa\x9e"};
		break;
	case WIRE_HOST_NAME:
		m.host_name = (struct wire_host_name){"build-7.example.org", 19};
		break;
	case WIRE_NOTIFY:
		m.notify = (struct wire_notify){.id = UINT32_MAX,
			.timeout_ms = -1,
			.urgency = WIRE_NOTE_CRITICAL,
			.app = "mail",
			.app_len = 4,
			.summary = "New mail",
			.summary_len = 8,
			.body = "From: <b>Ada</b>",
			.body_len = 16,
			.icon = "mail-unread",
			.icon_len = 11,
			.actions = "default\0Open\0later\0Remind me\0",
			.actions_len = 29};
		break;
	case WIRE_NOTIFY_CLOSE:
		m.notify_close = (struct wire_notify_close){7, WIRE_NOTE_DISMISSED};
		break;
	case WIRE_NOTIFY_REPLY:
		m.notify_reply = (struct wire_notify_reply){.id = 7,
			.event = WIRE_NOTE_ACTION,
			.action = "default",
			.action_len = 7};
		break;
	case WIRE_WATCH_TOKEN:
		m.watch_token = (struct wire_watch_token){"watch-0123456789abcdef", 22};
		break;
	case WIRE_UDP_OFFER:
		m.udp_offer =
			(struct wire_udp_offer){65535, 16, "0123456789abcdef", "2001:db8::7", 11};
		break;
	case WIRE_STATS_WANTED:
		m.stats_wanted.on = 1;
		break;
	case WIRE_SESSION_VIEWERS:
		m.session_viewers = (struct wire_session_viewers){WIRE_MAX_VIEWERS,
			WIRE_VIEWERS_INPUT | WIRE_VIEWERS_WATCHING};
		break;
	case WIRE_WINDOW_STATS:
		m.window_stats = (struct wire_window_stats){3, WIRE_MAX_FPS, 60, 0xfffffff0, 12345,
			1, WIRE_COMPRESS_ZSTD, 0};
		break;
	case WIRE_VIDEO_STATS:
		m.video_stats = (struct wire_video_stats){3, WIRE_MAX_BITRATE, WIRE_MAX_DIM, 540,
			WIRE_PRESET_HARDWARE, WIRE_MAX_QP, 0};
		break;
	case WIRE_POINTER_CONSTRAINT_STATE:
		m.pointer_constraint_state = (struct wire_pointer_constraint_state){3, 1};
		break;
	case WIRE_POINTER_CONSTRAINT:
		m.pointer_constraint = (struct wire_pointer_constraint){3, WIRE_CONSTRAINT_LOCK,
			256, -256, WIRE_CONSTRAINT_HINT, 1, rects};
		break;
	case WIRE_RELATIVE_MOTION:
		m.relative_motion =
			(struct wire_relative_motion){UINT64_MAX, -256, 512, INT32_MIN, INT32_MAX};
		break;
	case WIRE_INPUT_MARK:
		m.input_mark = (struct wire_input_mark){3, UINT32_MAX};
		break;
	case WIRE_FRAME_MARK:
		m.frame_mark = (struct wire_frame_mark){3, 1};
		break;
	case WIRE_LINK_ACK:
		m.link_ack = (struct wire_link_ack){UINT64_MAX - 1};
		break;
	case WIRE_AUDIO:
		m.audio = (struct wire_audio){.time_us = UINT64_MAX,
			.seq = 7,
			.samples = WIRE_AUDIO_MAX_SAMPLES,
			.data = (const uint8_t *)"abc",
			.size = 3};
		break;
	case WIRE_AUDIO_END:
		m.audio_end = (struct wire_audio_end){7};
		break;
	case WIRE_POINTER_FRAME:
	case WIRE_TOUCH_FRAME:
	case WIRE_TOUCH_CANCEL:
	case WIRE_SYNC:
		break;
	default:
		/* A message with no case here (a new row of messages.h): each
		 * field at its least, as the table says. */
		m = least(type);
		break;
	}
	return m;
}

/* A sender the message allows. */
static enum wire_sender sender_of(enum wire_type type)
{
	return (type & 0xff00) == 0x0200 ? WIRE_FROM_SERVER : WIRE_FROM_VIEWER;
}

static enum wire_status decode_buf(enum wire_sender from, const struct buffer *buf,
	struct wire_msg *m, char *err)
{
	size_t used = 0;
	enum wire_status status =
		wire_decode(from, buffer_head(buf), buffer_size(buf), m, &used, err, 256);
	if (status == WIRE_OK) {
		CHECK(used == buffer_size(buf));
	}
	return status;
}

/* Encodes m and expects the decoder to refuse it; with field, the error must
 * name it. */
static void expect_invalid(const struct wire_msg *m, const char *field)
{
	struct buffer buf;
	buffer_init(&buf, 1 << 20);
	if (!wire_encode(&buf, m)) {
		/* A length past the message's limits: the encoder refuses too,
		 * and the decoder's refusal of such lengths is test_lengths'. */
		buffer_finish(&buf);
		return;
	}
	struct wire_msg out;
	char err[256] = "";
	enum wire_status status = decode_buf(sender_of(m->type), &buf, &out, err);
	if (status != WIRE_INVALID) {
		fprintf(stderr, "  %s with %s out of bounds was accepted\n",
			wire_type_name(m->type), field ? field : "a bad value");
	}
	CHECK(status == WIRE_INVALID);
	if (field && status == WIRE_INVALID && !strstr(err, field)) {
		fprintf(stderr, "  the error does not name %s: %s\n", field, err);
		CHECK(strstr(err, field));
	}
	buffer_finish(&buf);
}

/* Field-by-field comparison, generated from the table. */
#define FIELD(type, name) CHECK(a->name == b->name);
#define RANGE(type, name, min, max) CHECK(a->name == b->name);
#define BITS(type, name, mask) CHECK(a->name == b->name);
#define COUNT(type, name, min, max, array, ctype, size) \
	CHECK(a->name == b->name); \
	CHECK(a->name == 0 || memcmp(a->array, b->array, (size_t)a->name * (size)) == 0);
#define REST(array, ctype, len, min, max) \
	CHECK(a->len == b->len); \
	CHECK(a->len == 0 || memcmp(a->array, b->array, a->len) == 0);
#define NONE
#define X(NAME, name, code, sender, fixed, carrier, check) \
	static void same_##name(const struct wire_##name *a, const struct wire_##name *b) \
	{ \
		(void)a; \
		(void)b; \
		WIRE_##NAME##_FIELDS \
	}
WIRE_MESSAGES(X)
#undef X

static void check_same(const struct wire_msg *a, const struct wire_msg *b)
{
	CHECK(a->type == b->type);
	switch (a->type) {
#define X(NAME, name, code, sender, fixed, carrier, check) \
	case WIRE_##NAME: \
		same_##name(&a->name, &b->name); \
		break;
		WIRE_MESSAGES(X)
#undef X
	}
}
#undef FIELD
#undef RANGE
#undef BITS
#undef COUNT
#undef REST

static void test_roundtrip(void)
{
	struct wire_message_info info;
	for (size_t i = 0; wire_message_info(i, &info); i++) {
		for (int from = WIRE_FROM_VIEWER; from <= WIRE_FROM_SERVER; from++) {
			if (!(info.senders & from)) {
				continue;
			}
			struct wire_msg in = sample(info.type), out;
			struct buffer buf;
			buffer_init(&buf, 1 << 20);
			CHECK(wire_encode(&buf, &in));
			char err[256] = "";
			enum wire_status status =
				decode_buf((enum wire_sender)from, &buf, &out, err);
			if (status != WIRE_OK) {
				fprintf(stderr, "  %s: %s\n", info.name, err);
			}
			CHECK(status == WIRE_OK);
			if (status == WIRE_OK) {
				check_same(&in, &out);
			}
			buffer_finish(&buf);
		}
	}
}

static void test_truncated(void)
{
	/* Every strict prefix of a valid message asks for more, never more. */
	struct wire_message_info info;
	for (size_t i = 0; wire_message_info(i, &info); i++) {
		struct wire_msg in = sample(info.type), out;
		struct buffer buf;
		buffer_init(&buf, 1 << 20);
		CHECK(wire_encode(&buf, &in));
		for (size_t len = 0; len < buffer_size(&buf); len++) {
			size_t used = 0;
			char err[256];
			CHECK(wire_decode(sender_of(info.type), buffer_head(&buf), len, &out, &used,
				      err, sizeof(err)) == WIRE_INCOMPLETE);
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

static void test_lengths(void)
{
	/* Past its most, or below its least, a length is refused from the
	 * header alone, before any body is buffered. */
	struct wire_message_info info;
	for (size_t i = 0; wire_message_info(i, &info); i++) {
		uint32_t lengths[] = {info.max_body + 1, 0xffffffffu, info.min_body - 1};
		for (size_t k = 0; k < N(lengths); k++) {
			if (k == 2 && info.min_body == 0) {
				continue;
			}
			struct buffer buf;
			struct wire_msg m;
			char err[256];
			buffer_init(&buf, 64);
			put_header(&buf, info.type, 0, lengths[k]);
			CHECK(decode_buf(sender_of(info.type), &buf, &m, err) == WIRE_INVALID);
			buffer_finish(&buf);
		}
	}
	/* The largest body of all is bounded. */
	CHECK((uint64_t)WIRE_MAX_BODY < (1ull << 31));
}

static void test_extra_bytes(void)
{
	/* A body longer than its fields says is refused, not skipped. */
	struct wire_message_info info;
	for (size_t i = 0; wire_message_info(i, &info); i++) {
		if (info.min_body == info.max_body && info.max_body == info.fixed) {
			struct wire_msg in = sample(info.type), out;
			struct buffer buf;
			buffer_init(&buf, 1 << 20);
			CHECK(wire_encode(&buf, &in));
			uint8_t zero = 0;
			buffer_append(&buf, &zero, 1);
			uint8_t *len = buffer_head(&buf) + 4;
			len[0]++;
			char err[256];
			CHECK(decode_buf(sender_of(info.type), &buf, &out, err) == WIRE_INVALID);
			buffer_finish(&buf);
		}
	}
	/* A count larger than the body holds. */
	struct buffer buf;
	struct wire_msg m;
	char err[256];
	buffer_init(&buf, 64);
	put_header(&buf, WIRE_KEYBOARD_ENTER, 0, 12);
	uint8_t body[12] = {1, 0, 0, 0, 2, 0, 0, 0, 30, 0, 0, 0};
	buffer_append(&buf, body, sizeof(body));
	CHECK(decode_buf(WIRE_FROM_VIEWER, &buf, &m, err) == WIRE_INVALID);
	buffer_finish(&buf);
}

static void test_unknown(void)
{
	uint16_t bad_types[] = {0, 0x0100, 0x0118, 0x0200, 0x0210, 0x0305, 0xffff};
	for (size_t i = 0; i < N(bad_types); i++) {
		struct buffer buf;
		struct wire_msg m;
		char err[256];
		buffer_init(&buf, 64);
		put_header(&buf, bad_types[i], 0, 0);
		CHECK(decode_buf(WIRE_FROM_VIEWER, &buf, &m, err) == WIRE_INVALID);
		CHECK(decode_buf(WIRE_FROM_SERVER, &buf, &m, err) == WIRE_INVALID);
		buffer_finish(&buf);
	}
	/* Reserved header bits. */
	struct buffer buf;
	struct wire_msg m;
	char err[256];
	buffer_init(&buf, 64);
	put_header(&buf, WIRE_POINTER_FRAME, 1, 0);
	CHECK(decode_buf(WIRE_FROM_VIEWER, &buf, &m, err) == WIRE_INVALID);
	buffer_finish(&buf);
}

static void test_wrong_side(void)
{
	struct wire_message_info info;
	for (size_t i = 0; wire_message_info(i, &info); i++) {
		for (int from = WIRE_FROM_VIEWER; from <= WIRE_FROM_SERVER; from++) {
			if (info.senders & from) {
				continue;
			}
			struct wire_msg in = sample(info.type), out;
			struct buffer buf;
			char err[256];
			buffer_init(&buf, 1 << 20);
			CHECK(wire_encode(&buf, &in));
			CHECK(decode_buf((enum wire_sender)from, &buf, &out, err) == WIRE_INVALID);
			buffer_finish(&buf);
		}
	}
}

/*
 * Every RANGE and COUNT field just past either end of its range, and every
 * BITS field with a bit outside its mask, generated from the table. Counts
 * point into zeros, so that the encoder has the bytes to copy.
 */
#define LOW_u8 0
#define HIGH_u8 UINT8_MAX
#define LOW_u16 0
#define HIGH_u16 UINT16_MAX
#define LOW_u32 0
#define HIGH_u32 UINT32_MAX
#define LOW_i32 INT32_MIN
#define HIGH_i32 INT32_MAX
#define FIELD(type, name)
#define RANGE(type, name, min, max) \
	if ((int64_t)(max) < (int64_t)HIGH_##type) { \
		m = sample(code); \
		f->name = (WIRE_CTYPE_##type)((int64_t)(max) + 1); \
		expect_invalid(&m, #name); \
	} \
	if ((int64_t)(min) > (int64_t)LOW_##type) { \
		m = sample(code); \
		f->name = (WIRE_CTYPE_##type)((int64_t)(min)-1); \
		expect_invalid(&m, #name); \
	}
#define BITS(type, name, mask) \
	if ((WIRE_CTYPE_##type) ~(mask) != 0) { \
		m = sample(code); \
		f->name = (WIRE_CTYPE_##type) ~(mask); \
		expect_invalid(&m, #name); \
	}
#define COUNT(type, name, min, max, array, ctype, size) \
	m = sample(code); \
	f->name = (WIRE_CTYPE_##type)((max) + 1); \
	f->array = (const ctype *)zeros; \
	expect_invalid(&m, NULL); \
	if ((min) > 0) { \
		m = sample(code); \
		f->name = (WIRE_CTYPE_##type)((min)-1); \
		expect_invalid(&m, NULL); \
	}
#define REST(array, ctype, len, min, max)
#define X(NAME, name, code_, sender, fixed, carrier, check) \
	static void bounds_##name(void) \
	{ \
		const enum wire_type code = WIRE_##NAME; \
		struct wire_msg m = sample(code); \
		struct wire_##name *f = &m.name; \
		(void)f; \
		WIRE_##NAME##_FIELDS \
	}
WIRE_MESSAGES(X)
#undef X
#undef FIELD
#undef RANGE
#undef BITS
#undef COUNT
#undef REST
#undef NONE

static void test_bounds(void)
{
#define X(NAME, name, code, sender, fixed, carrier, check) bounds_##name();
	WIRE_MESSAGES(X)
#undef X
}

static void test_magic(void)
{
	struct wire_msg m = sample(WIRE_HELLO);
	m.hello.magic = 0x50545448; /* "HTTP" */
	expect_invalid(&m, "magic");
	m = sample(WIRE_WELCOME);
	m.welcome.magic = 0;
	expect_invalid(&m, "magic");
}

static void test_session_names(void)
{
	const char *bad[] = {"", ".hidden", "a/b", "a b", "x;rm", "\xc3\xa9", ".."};
	for (size_t i = 0; i < N(bad); i++) {
		CHECK(!session_name_ok(bad[i], strlen(bad[i])));
		struct wire_msg m = sample(WIRE_WELCOME);
		m.welcome.name = bad[i];
		m.welcome.name_len = (uint32_t)strlen(bad[i]);
		expect_invalid(&m, NULL);
	}
	CHECK(session_name_ok("0", 1) && session_name_ok("work-2.b_c", 10));
}

static void test_own_parent(void)
{
	struct wire_msg m = sample(WIRE_POPUP_NEW);
	m.popup_new.parent = m.popup_new.window;
	expect_invalid(&m, "parent");
	m = sample(WIRE_WINDOW_PARENT);
	m.window_parent.parent = m.window_parent.window;
	expect_invalid(&m, "parent");
}

static void test_grab_edges(void)
{
	struct wire_msg m = sample(WIRE_WINDOW_GRAB);
	/* Every edge xdg_toplevel.resize takes, and no other. */
	for (uint32_t edges = 0; edges <= 10; edges++) {
		m.window_grab.edges = edges;
		if (edges != 0 && edges != 3 && edges != 7) {
			struct buffer buf;
			buffer_init(&buf, 1 << 16);
			struct wire_msg out;
			char err[256] = "";
			CHECK(wire_encode(&buf, &m));
			CHECK(decode_buf(WIRE_FROM_SERVER, &buf, &out, err) == WIRE_OK);
			buffer_finish(&buf);
		} else {
			expect_invalid(&m, "edges");
		}
	}
	/* A move has no edges. */
	m.window_grab.kind = WIRE_GRAB_MOVE;
	m.window_grab.edges = 4;
	expect_invalid(&m, "edges");
}

static void test_text_input_offsets(void)
{
	struct wire_msg m = sample(WIRE_TEXT_INPUT);
	m.text_input.cursor = 12; /* past "hello world" */
	expect_invalid(&m, "cursor");
	m = sample(WIRE_TEXT_INPUT);
	m.text_input.anchor = 12;
	expect_invalid(&m, "anchor");
	m = sample(WIRE_TEXT_INPUT_EVENT);
	m.text_input_event.preedit_cursor_end = 7; /* past its 6 bytes */
	expect_invalid(&m, "preedit cursor");
	m = sample(WIRE_TEXT_INPUT_EVENT);
	m.text_input_event.flags = 0;
	expect_invalid(&m, "preedit");
}

static void test_dnd_checks(void)
{
	struct wire_msg m = sample(WIRE_DND_ENTER);
	m.dnd_enter.count = 3; /* two types in the body */
	expect_invalid(&m, "MIME");
	m = sample(WIRE_DND_ACTION);
	m.dnd_action.action = WIRE_DND_COPY | WIRE_DND_MOVE;
	expect_invalid(&m, "more than one action");
	m = sample(WIRE_DND_STATUS);
	m.dnd_status.preferred = WIRE_DND_ALL;
	expect_invalid(&m, "more than one action");
}

static void test_cursor_pixels(void)
{
	struct wire_msg m = sample(WIRE_CURSOR);
	m.cursor.width = 0; /* empty on one side only */
	expect_invalid(&m, "cursor");
	m = sample(WIRE_CURSOR);
	m.cursor.pixels_len = 4; /* fewer bytes than 2x1x4 */
	expect_invalid(&m, "cursor");
	m = sample(WIRE_CURSOR);
	m.cursor.width = m.cursor.height = 0;
	m.cursor.pixels_len = 0; /* hidden */
	struct buffer buf;
	buffer_init(&buf, 4096);
	CHECK(wire_encode(&buf, &m));
	char err[256];
	struct wire_msg out;
	CHECK(decode_buf(WIRE_FROM_SERVER, &buf, &out, err) == WIRE_OK);
	buffer_finish(&buf);
}

static void test_mime_types(void)
{
	struct wire_msg m = sample(WIRE_SELECTION);
	m.selection.count = 3; /* more than the types present */
	expect_invalid(&m, "MIME");
	m = sample(WIRE_SELECTION);
	m.selection.count = 1; /* fewer: bytes left over */
	expect_invalid(&m, "MIME");
	static const uint8_t empty_mime[] = {0, 0};
	m = sample(WIRE_SELECTION);
	m.selection.count = 1;
	m.selection.types = empty_mime;
	m.selection.types_len = 2;
	expect_invalid(&m, "MIME");
	static const uint8_t long_mime[] = {0xff, 0xff, 'a'};
	m.selection.types = long_mime;
	m.selection.types_len = 3;
	expect_invalid(&m, "MIME");
	/* They come back as they went. */
	m = sample(WIRE_SELECTION);
	size_t pos = 0, len;
	const char *mime;
	CHECK(mime_next(&m.selection, &pos, &mime, &len) && len == 10 &&
		memcmp(mime, "text/plain", 10) == 0);
	CHECK(mime_next(&m.selection, &pos, &mime, &len) && len == 11 &&
		memcmp(mime, "UTF8_STRING", 11) == 0);
	CHECK(!mime_next(&m.selection, &pos, &mime, &len));
	/* A list refuses what it cannot hold, and compares by content. */
	static struct mime_list a, b;
	CHECK(!mime_list_add(&a, "", 0));
	CHECK(!mime_list_add(&a, (const char *)zeros, WIRE_MAX_MIME + 1));
	for (int i = 0; i < WIRE_MAX_MIME_TYPES; i++) {
		CHECK(mime_list_add(&a, "x/y", 3) && mime_list_add(&b, "x/y", 3));
	}
	CHECK(!mime_list_add(&a, "x/z", 3));
	CHECK(mime_list_has(&a, "x/y", 3) && !mime_list_has(&a, "x/z", 3));
	CHECK(mime_list_equal(&a, &b));
}

static void test_keys(void)
{
	uint8_t bad[4];
	wire_put_key(bad, 0, 0x10000);
	struct wire_msg m = sample(WIRE_KEYBOARD_ENTER);
	m.keyboard_enter.nkeys = 1;
	m.keyboard_enter.keys = bad;
	expect_invalid(&m, "key");
}

static void encode_frame(struct buffer *buf, struct wire_frame f)
{
	struct wire_msg m = {.type = WIRE_FRAME, .frame = f};
	CHECK(wire_encode(buf, &m));
}

static enum wire_status decode_frame(struct wire_frame f)
{
	struct buffer buf;
	buffer_init(&buf, 1 << 20);
	encode_frame(&buf, f);
	struct wire_msg out;
	char err[256];
	enum wire_status status = decode_buf(WIRE_FROM_SERVER, &buf, &out, err);
	buffer_finish(&buf);
	return status;
}

static struct wire_frame one_rect_frame(struct wire_rect r, uint32_t payload)
{
	static uint8_t packed[WIRE_RECT_SIZE];
	wire_put_rect(packed, 0, r);
	return (struct wire_frame){.window = 1,
		.width = 16,
		.height = 8,
		.nrects = 1,
		.rects = packed,
		.raw_size = (uint32_t)(r.width > 0 && r.height > 0 ? (int64_t)r.width * r.height * 4
								   : 0),
		.payload = zeros,
		.payload_size = payload};
}

static void test_frame_rects(void)
{
	struct wire_rect outside[] = {{13, 0, 4, 1}, {0, 7, 1, 2}, {-1, 0, 1, 1}, {0, 0, 0, 1},
		{INT32_MAX, 0, 2, 1}, {0, 0, INT32_MAX, 1}};
	for (size_t i = 0; i < N(outside); i++) {
		CHECK(decode_frame(one_rect_frame(outside[i], 4)) == WIRE_INVALID);
	}
	CHECK(decode_frame(one_rect_frame((struct wire_rect){12, 6, 4, 2}, 32)) == WIRE_OK);
}

static void test_frame_overlaps(void)
{
	/* Rectangles that overlap are refused, so a frame's raw size never
	 * exceeds its pixels: here the whole frame twice over, and the audit's
	 * 63 overlapping windows of the largest size. */
	static uint8_t packed[63 * WIRE_RECT_SIZE];
	struct wire_rect whole = {0, 0, 16, 8}, corner = {15, 7, 1, 1};
	wire_put_rect(packed, 0, whole);
	wire_put_rect(packed, 1, corner);
	struct wire_frame f = {.window = 1,
		.width = 16,
		.height = 8,
		.nrects = 2,
		.rects = packed,
		.raw_size = (16 * 8 + 1) * 4,
		.payload = zeros,
		.payload_size = (16 * 8 + 1) * 4};
	CHECK(decode_frame(f) == WIRE_INVALID);
	wire_put_rect(packed, 1, whole);
	f.raw_size = f.payload_size = 2 * 16 * 8 * 4;
	CHECK(decode_frame(f) == WIRE_INVALID);
	for (uint32_t i = 0; i < 63; i++) {
		wire_put_rect(packed, i, (struct wire_rect){0, 0, 4096, 4096});
	}
	f = (struct wire_frame){.window = 1,
		.width = 4096,
		.height = 4096,
		.compression = WIRE_COMPRESS_LZ4,
		.nrects = 63,
		.rects = packed,
		.raw_size = (uint32_t)(63ull * 4096 * 4096 * 4),
		.payload = zeros,
		.payload_size = 1000};
	CHECK(decode_frame(f) == WIRE_INVALID);
	/* Touching is not overlapping. */
	wire_put_rect(packed, 0, (struct wire_rect){0, 0, 8, 8});
	wire_put_rect(packed, 1, (struct wire_rect){8, 0, 8, 4});
	wire_put_rect(packed, 2, (struct wire_rect){8, 4, 8, 4});
	f = (struct wire_frame){.window = 1,
		.width = 16,
		.height = 8,
		.nrects = 3,
		.rects = packed,
		.raw_size = 16 * 8 * 4,
		.payload = zeros,
		.payload_size = 16 * 8 * 4};
	CHECK(decode_frame(f) == WIRE_OK);
}

static void test_frame_sizes(void)
{
	struct wire_frame f = one_rect_frame((struct wire_rect){0, 0, 4, 2}, 32);
	f.raw_size = 36; /* not the rectangles' area */
	CHECK(decode_frame(f) == WIRE_INVALID);
	f = one_rect_frame((struct wire_rect){0, 0, 4, 2}, 31); /* uncompressed, short */
	CHECK(decode_frame(f) == WIRE_INVALID);
	f = one_rect_frame((struct wire_rect){0, 0, 4, 2}, 32);
	f.width = 4096;
	f.height = 4097; /* more pixels than allowed */
	CHECK(decode_frame(f) == WIRE_INVALID);
}

static void test_video_frames(void)
{
	/* One access unit of the whole window: no rectangles, no compression,
	 * a payload. */
	static const uint8_t au[4] = {0, 0, 1, 0x65};
	struct wire_frame base = {.window = 1,
		.width = 16,
		.height = 8,
		.codec = WIRE_CODEC_H264,
		.payload = au,
		.payload_size = sizeof(au)};
	CHECK(decode_frame(base) == WIRE_OK);
	struct wire_frame f = base;
	f.compression = WIRE_COMPRESS_LZ4;
	CHECK(decode_frame(f) == WIRE_INVALID);
	f = one_rect_frame((struct wire_rect){0, 0, 4, 2}, 4);
	f.codec = WIRE_CODEC_H264;
	CHECK(decode_frame(f) == WIRE_INVALID);
	f = base;
	f.payload_size = 0;
	CHECK(decode_frame(f) == WIRE_INVALID);
	f = base;
	f.flags = WIRE_FRAME_REPLACE;
	CHECK(decode_frame(f) == WIRE_INVALID);
}

static enum wire_status decode_copy(struct wire_copy_rect c)
{
	struct buffer buf;
	buffer_init(&buf, 1 << 16);
	struct wire_msg m = {.type = WIRE_COPY_RECT, .copy_rect = c}, out;
	char err[256];
	CHECK(wire_encode(&buf, &m));
	enum wire_status status = decode_buf(WIRE_FROM_SERVER, &buf, &out, err);
	buffer_finish(&buf);
	return status;
}

static void test_copy_rects(void)
{
	struct wire_copy_rect c =
		{.window = 1, .x = 0, .y = 20, .width = 640, .height = 400, .dx = 0, .dy = -20};
	CHECK(decode_copy(c) == WIRE_OK);
	struct wire_copy_rect still = c;
	still.dy = 0;
	CHECK(decode_copy(still) == WIRE_INVALID);
	struct wire_copy_rect past = c;
	past.y = WIRE_MAX_DIM - 10;
	CHECK(decode_copy(past) == WIRE_INVALID);
	past = c;
	past.x = 1;
	past.width = WIRE_MAX_DIM;
	CHECK(decode_copy(past) == WIRE_INVALID);
	/* Sideways and diagonal moves are the protocol's too. */
	struct wire_copy_rect side = c;
	side.dx = 9;
	CHECK(decode_copy(side) == WIRE_OK);
}

static void test_random(void)
{
	/* Random bytes: decoding never crashes, never reads past the input,
	 * and an OK answer always consumes a plausible length. */
	uint64_t state = 0x9e3779b97f4a7c15ull;
	uint8_t data[256];
	struct wire_message_info info;
	size_t ntypes = 0;
	while (wire_message_info(ntypes, &info)) {
		ntypes++;
	}
	for (int iter = 0; iter < 200000; iter++) {
		size_t len = (size_t)(iter % 256);
		for (size_t i = 0; i < len; i++) {
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			data[i] = (uint8_t)state;
		}
		/* Often a real type and length, so that bodies get parsed. */
		if (len >= 8 && iter % 2) {
			wire_message_info((size_t)(state >> 8) % ntypes, &info);
			uint32_t body = (uint32_t)(len - 8);
			uint8_t h[8] = {(uint8_t)info.type, (uint8_t)(info.type >> 8), 0, 0,
				(uint8_t)body, (uint8_t)(body >> 8), 0, 0};
			memcpy(data, h, 8);
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

/*
 * The specification lists every message with its code, name and the size
 * of its fixed part, as the table does; neither has one the other lacks.
 * PROTOCOL.md's path is the argument after the case name.
 */
static const char *spec_path;

static void test_spec(void)
{
	FILE *f = spec_path ? fopen(spec_path, "r") : NULL;
	CHECK(f);
	if (!f) {
		return;
	}
	static char text[1 << 18];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	struct wire_message_info info;
	size_t messages = 0;
	for (size_t i = 0; wire_message_info(i, &info); i++) {
		char row[128];
		snprintf(row, sizeof(row), "| 0x%04x | `%s` | %u |", info.type, info.name,
			info.fixed);
		if (!strstr(text, row)) {
			fprintf(stderr, "  PROTOCOL.md has no row starting %s\n", row);
			CHECK(strstr(text, row));
		}
		messages++;
	}
	/* Every message row of the spec is one of the table's. */
	size_t rows = 0;
	for (const char *p = text; (p = strstr(p, "\n| 0x")); p++) {
		unsigned code;
		char name[64];
		if (sscanf(p, "\n| 0x%x | `%63[a-z_]` |", &code, name) != 2) {
			continue;
		}
		rows++;
		if (strcmp(wire_type_name(code), name) != 0) {
			fprintf(stderr, "  PROTOCOL.md names 0x%04x %s; the table: %s\n", code,
				name, wire_type_name(code));
			CHECK(strcmp(wire_type_name(code), name) == 0);
		}
	}
	CHECK(rows == messages);
}

/* The corpus the page's decoder is held to (tests/web/wire-verdict.mjs):
 * byte strings, each with the side that sends it, the record class it comes
 * on (-1: outside records, as a first message) and wire.c's verdict, with
 * the channel's refusal of a message on a class that may not carry it.
 * Every valid message on every class, from both sides; each cut short;
 * each header and fixed-part byte changed four ways; and each check across
 * fields broken once. */
static const char *verdict(enum wire_sender from, int cls, const uint8_t *p, size_t n)
{
	if (cls >= 0 && n >= 2 &&
		!channel_carries((enum channel_class)cls, (uint16_t)(p[0] | p[1] << 8))) {
		return "invalid";
	}
	struct wire_msg m;
	size_t used = 0;
	char err[256];
	enum wire_status status = wire_decode(from, p, n, &m, &used, err, sizeof(err));
	if (status == WIRE_OK && used != n) {
		return "trailing";
	}
	return status == WIRE_OK ? "ok" : status == WIRE_INCOMPLETE ? "incomplete" : "invalid";
}

static void emit(enum wire_sender from, int cls, const uint8_t *p, size_t n)
{
	printf("case %s %d ", from == WIRE_FROM_VIEWER ? "VIEWER" : "SERVER", cls);
	for (size_t i = 0; i < n; i++) {
		printf("%02x", p[i]);
	}
	printf(" %s\n", verdict(from, cls, p, n));
}

/* The first class that carries a type. */
static int home_class(uint16_t type)
{
	for (int cls = 0; cls < CHANNEL_CLASSES; cls++) {
		if (channel_carries((enum channel_class)cls, type)) {
			return cls;
		}
	}
	return 0;
}

static void emit_msg(const struct wire_msg *m)
{
	struct buffer buf;
	buffer_init(&buf, WIRE_HEADER_SIZE + WIRE_MAX_BODY);
	CHECK(wire_encode(&buf, m));
	emit(sender_of(m->type), home_class(m->type), buffer_head(&buf), buffer_size(&buf));
	buffer_finish(&buf);
}

static int print_corpus(void)
{
	struct wire_message_info info;
	struct buffer buf;
	buffer_init(&buf, WIRE_HEADER_SIZE + WIRE_MAX_BODY);
	for (size_t i = 0; wire_message_info(i, &info); i++) {
		struct wire_msg m = sample(info.type);
		buffer_consume(&buf, buffer_size(&buf));
		CHECK(wire_encode(&buf, &m));
		const uint8_t *p = buffer_head(&buf);
		size_t n = buffer_size(&buf);
		for (int cls = -1; cls < CHANNEL_CLASSES; cls++) {
			emit(WIRE_FROM_VIEWER, cls, p, n);
			emit(WIRE_FROM_SERVER, cls, p, n);
		}
		enum wire_sender from = sender_of(info.type);
		int home = home_class(info.type);
		size_t cuts[] = {1, 2, 7, WIRE_HEADER_SIZE, n - 1};
		for (size_t c = 0; c < N(cuts); c++) {
			if (cuts[c] < n) {
				emit(from, home, p, cuts[c]);
				/* On a class that may not carry it: refused from its
				 * type alone. */
				emit(from, (home + 1) % CHANNEL_CLASSES, p, cuts[c]);
			}
		}
		uint8_t changed[WIRE_HEADER_SIZE + 256];
		size_t most = n < sizeof(changed) ? n : sizeof(changed);
		size_t reach = WIRE_HEADER_SIZE + info.fixed + 16 < most
			? WIRE_HEADER_SIZE + info.fixed + 16
			: most;
		for (size_t at = 0; at < reach; at++) {
			uint8_t ways[] = {0x00, 0xff, (uint8_t)(p[at] + 1),
				(uint8_t)(p[at] ^ 0x80)};
			for (size_t w = 0; w < N(ways); w++) {
				memcpy(changed, p, most);
				changed[at] = ways[w];
				emit(from, home, changed, most);
			}
		}
	}
	buffer_finish(&buf);
	/* Each check across fields, broken. */
	struct wire_msg m = sample(WIRE_HELLO);
	m.hello.magic ^= 1;
	emit_msg(&m);
	m = sample(WIRE_WELCOME);
	m.welcome.magic ^= 1;
	emit_msg(&m);
	m = sample(WIRE_WELCOME);
	m.welcome.name = ".hidden";
	m.welcome.name_len = 7;
	emit_msg(&m);
	m = sample(WIRE_WELCOME);
	m.welcome.name = "a b";
	m.welcome.name_len = 3;
	emit_msg(&m);
	uint8_t big_keys[4];
	wire_put_key(big_keys, 0, 0x10000);
	m = sample(WIRE_KEYBOARD_ENTER);
	m.keyboard_enter.keys = big_keys;
	m.keyboard_enter.nkeys = 1;
	emit_msg(&m);
	m = sample(WIRE_POPUP_NEW);
	m.popup_new.parent = m.popup_new.window;
	emit_msg(&m);
	m = sample(WIRE_WINDOW_PARENT);
	m.window_parent.parent = m.window_parent.window;
	emit_msg(&m);
	m = sample(WIRE_COPY_RECT);
	m.copy_rect.dx = m.copy_rect.dy = 0;
	emit_msg(&m);
	m = sample(WIRE_COPY_RECT);
	m.copy_rect.x = WIRE_MAX_DIM - 1;
	m.copy_rect.width = 2;
	emit_msg(&m);
	m = sample(WIRE_TEXT_INPUT);
	m.text_input.cursor = m.text_input.text_len + 1;
	emit_msg(&m);
	m = sample(WIRE_TEXT_INPUT_EVENT);
	m.text_input_event.flags = 0;
	m.text_input_event.preedit = "x";
	m.text_input_event.preedit_len = 1;
	emit_msg(&m);
	m = sample(WIRE_WINDOW_GRAB);
	m.window_grab.kind = WIRE_GRAB_RESIZE;
	m.window_grab.edges = 3;
	emit_msg(&m);
	m = sample(WIRE_WINDOW_GRAB);
	m.window_grab.kind = WIRE_GRAB_MOVE;
	m.window_grab.edges = 4;
	emit_msg(&m);
	m = sample(WIRE_CURSOR);
	m.cursor.height = 0;
	emit_msg(&m);
	m = sample(WIRE_CURSOR);
	m.cursor.pixels_len -= 4;
	emit_msg(&m);
	m = sample(WIRE_DRAG_ICON);
	m.drag_icon.width += 1;
	emit_msg(&m);
	m = sample(WIRE_SELECTION);
	m.selection.count += 1;
	emit_msg(&m);
	m = sample(WIRE_DRAG_START);
	m.drag_start.types_len -= 1;
	emit_msg(&m);
	m = sample(WIRE_DND_ENTER);
	m.dnd_enter.count = 1;
	emit_msg(&m);
	m = sample(WIRE_DND_STATUS);
	m.dnd_status.preferred = 3;
	emit_msg(&m);
	m = sample(WIRE_DND_ACTION);
	m.dnd_action.action = 6;
	emit_msg(&m);
	m = sample(WIRE_DRAG_LOCAL);
	m.drag_local.action = 5;
	emit_msg(&m);
	uint8_t bad_rects[2 * WIRE_RECT_SIZE];
	m = sample(WIRE_FRAME);
	wire_put_rect(bad_rects, 0, (struct wire_rect){0, 0, 4, 2});
	wire_put_rect(bad_rects, 1, (struct wire_rect){3, 1, 2, 3});
	m.frame.rects = bad_rects; /* overlapping: 8 + 6 pixels, as the raw size says */
	emit_msg(&m);
	m = sample(WIRE_FRAME);
	wire_put_rect(bad_rects, 0, (struct wire_rect){0, 0, 4, 2});
	wire_put_rect(bad_rects, 1, (struct wire_rect){14, 5, 3, 2});
	m.frame.rects = bad_rects; /* past the frame's edge */
	emit_msg(&m);
	m = sample(WIRE_FRAME);
	m.frame.raw_size += 4;
	emit_msg(&m);
	m = sample(WIRE_FRAME);
	m.frame.codec = WIRE_CODEC_H264;
	emit_msg(&m);
	m = sample(WIRE_FRAME);
	m.frame.width = WIRE_MAX_DIM;
	m.frame.height = WIRE_MAX_DIM;
	emit_msg(&m);
	return check_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"roundtrip", test_roundtrip},
		{"truncated", test_truncated},
		{"lengths", test_lengths},
		{"extra_bytes", test_extra_bytes},
		{"unknown", test_unknown},
		{"wrong_side", test_wrong_side},
		{"bounds", test_bounds},
		{"magic", test_magic},
		{"session_names", test_session_names},
		{"own_parent", test_own_parent},
		{"grab_edges", test_grab_edges},
		{"text_input_offsets", test_text_input_offsets},
		{"dnd_checks", test_dnd_checks},
		{"cursor_pixels", test_cursor_pixels},
		{"mime_types", test_mime_types},
		{"keys", test_keys},
		{"frame_rects", test_frame_rects},
		{"frame_overlaps", test_frame_overlaps},
		{"frame_sizes", test_frame_sizes},
		{"video_frames", test_video_frames},
		{"copy_rects", test_copy_rects},
		{"random", test_random},
		{"spec", test_spec},
	};
	init_arrays();
	if (argc > 1 && strcmp(argv[1], "corpus") == 0) {
		return print_corpus();
	}
	spec_path = argc > 2 ? argv[2] : NULL;
	return check_main(argc, argv, cases, N(cases));
}
