/*
 * Encoding and decoding of rcomp wire messages, generated from the table in
 * messages.h: each message's fields are read, range-checked and written by
 * code that expands its row, so the encoder, the decoder and the limits
 * cannot disagree. Checks that span fields follow, each the named check its
 * row gives (check_NAME).
 * Nothing here trusts a peer.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

#define VIEWER WIRE_FROM_VIEWER
#define SERVER WIRE_FROM_SERVER
#define BOTH (WIRE_FROM_VIEWER | WIRE_FROM_SERVER)

#define WIRE_SIZE_u8 1
#define WIRE_SIZE_u16 2
#define WIRE_SIZE_u32 4
#define WIRE_SIZE_i32 4
#define WIRE_SIZE_u64 8

/* Sizes of each message's body: the fixed part, and the least and the most
 * a valid body may have, from its fields. */
#define FIELD(type, name) +WIRE_SIZE_##type
#define RANGE(type, name, min, max) +WIRE_SIZE_##type
#define BITS(type, name, mask) +WIRE_SIZE_##type
#define COUNT(type, name, min, max, array, ctype, size) +WIRE_SIZE_##type
#define REST(array, ctype, len, min, max)
#define NONE
#define X(NAME, name, code, sender, fixed, carrier, check) FIXED_##NAME = 0 WIRE_##NAME##_FIELDS,
enum { WIRE_MESSAGES(X) };
#undef X
#define X(NAME, name, code, sender, fixed, carrier, check) \
	static_assert(FIXED_##NAME == (fixed), #name "'s fields do not add up to its size");
WIRE_MESSAGES(X)
#undef X
#undef FIELD
#undef RANGE
#undef BITS
#undef COUNT
#undef REST

#define FIELD(type, name)
#define RANGE(type, name, min, max)
#define BITS(type, name, mask)
#define COUNT(type, name, min, max, array, ctype, size) +(uint64_t)(min) * (size)
#define REST(array, ctype, len, min, max) +(uint64_t)(min)
#define X(NAME, name, code, sender, fixed, carrier, check) \
	MIN_##NAME = FIXED_##NAME WIRE_##NAME##_FIELDS,
enum { WIRE_MESSAGES(X) };
#undef X
#undef COUNT
#undef REST
#define COUNT(type, name, min, max, array, ctype, size) +(uint64_t)(max) * (size)
#define REST(array, ctype, len, min, max) +(uint64_t)(max)
#define X(NAME, name, code, sender, fixed, carrier, check) \
	static_assert(FIXED_##NAME WIRE_##NAME##_FIELDS <= WIRE_MAX_BODY, \
		#name " may be larger than WIRE_MAX_BODY");
WIRE_MESSAGES(X)
#undef X

struct type_info {
	uint16_t type;
	uint8_t senders;
	const char *name;
	uint32_t fixed, min_body, max_body;
};

#define X(NAME, name, code, sender, fixed, carrier, check) \
	{code, sender, #name, FIXED_##NAME, MIN_##NAME, \
		(uint32_t)(FIXED_##NAME WIRE_##NAME##_FIELDS)},
static const struct type_info types[] = {WIRE_MESSAGES(X)};
#undef X
#undef FIELD
#undef RANGE
#undef BITS
#undef COUNT
#undef REST
#undef NONE

static const struct type_info *find_type(uint32_t type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (types[i].type == type) {
			return &types[i];
		}
	}
	return NULL;
}

const char *const wire_preset_names[WIRE_PRESET_HARDWARE + 1] = {"ultrafast", "superfast",
	"veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo",
	"hardware"};

const char *wire_type_name(uint32_t type)
{
	const struct type_info *info = find_type(type);
	return info ? info->name : "unknown";
}

bool wire_message_info(size_t index, struct wire_message_info *info)
{
	if (index >= sizeof(types) / sizeof(types[0])) {
		return false;
	}
	const struct type_info *t = &types[index];
	*info = (struct wire_message_info){t->type, t->name, t->senders, t->fixed, t->min_body,
		t->max_body};
	return true;
}

/* Little-endian fields. Readers are used only after the body's length was
 * checked against the message's fields, so they cannot run past it. */
struct reader {
	const uint8_t *p;
	size_t left;
};

static const uint8_t *get_bytes(struct reader *r, size_t n)
{
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

static void put_i32(uint8_t **p, int32_t v)
{
	put_u32(p, (uint32_t)v);
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
	struct reader r = {rects + (size_t)i * WIRE_RECT_SIZE, WIRE_RECT_SIZE};
	struct wire_rect rect;
	rect.x = get_i32(&r);
	rect.y = get_i32(&r);
	rect.width = get_i32(&r);
	rect.height = get_i32(&r);
	return rect;
}

void wire_put_rect(uint8_t *rects, uint32_t i, struct wire_rect rect)
{
	uint8_t *p = rects + (size_t)i * WIRE_RECT_SIZE;
	put_i32(&p, rect.x);
	put_i32(&p, rect.y);
	put_i32(&p, rect.width);
	put_i32(&p, rect.height);
}

uint32_t wire_get_key(const uint8_t *keys, uint32_t i)
{
	struct reader r = {keys + (size_t)i * 4, 4};
	return get_u32(&r);
}

void wire_put_key(uint8_t *keys, uint32_t i, uint32_t key)
{
	uint8_t *p = keys + (size_t)i * 4;
	put_u32(&p, key);
}

#define INVALID(...) \
	do { \
		snprintf(err, err_size, __VA_ARGS__); \
		return WIRE_INVALID; \
	} while (0)

/* Widened so that one comparison serves every field type. */
#define OUTSIDE(v, min, max) ((int64_t)(v) < (int64_t)(min) || (int64_t)(v) > (int64_t)(max))

/*
 * The generated readers: for each message, the fixed part field by field
 * with its range, then its arrays. The caller checked that the body has at
 * least the fixed part.
 */
#define FIELD(type, name) m->name = get_##type(r);
#define RANGE(type, name, min, max) \
	m->name = get_##type(r); \
	if (OUTSIDE(m->name, min, max)) { \
		INVALID("%s %s %lld is outside %lld to %lld", msg_name, #name, (long long)m->name, \
			(long long)(min), (long long)(max)); \
	}
#define BITS(type, name, mask) \
	m->name = get_##type(r); \
	if (m->name & ~(WIRE_CTYPE_##type)(mask)) { \
		INVALID("%s %s 0x%llx has unknown bits", msg_name, #name, \
			(unsigned long long)m->name); \
	}
#define COUNT(type, name, min, max, array, ctype, size) RANGE(type, name, min, max)
#define REST(array, ctype, len, min, max)
#define NONE
#define X(NAME, name, code, sender, fixed, carrier, check) \
	static enum wire_status read_fixed_##name(struct reader *r, struct wire_##name *m, \
		char *err, size_t err_size) \
	{ \
		static const char msg_name[] = #name; \
		(void)msg_name; \
		(void)r; \
		(void)m; \
		(void)err; \
		(void)err_size; \
		WIRE_##NAME##_FIELDS; \
		return WIRE_OK; \
	}
WIRE_MESSAGES(X)
#undef X
#undef FIELD
#undef RANGE
#undef BITS
#undef COUNT
#undef REST

#define FIELD(type, name)
#define RANGE(type, name, min, max)
#define BITS(type, name, mask)
#define COUNT(type, name, min, max, array, ctype, size) \
	if ((uint64_t)m->name * (size) > r->left) { \
		INVALID("%s is shorter than its %s (%llu)", msg_name, #name, \
			(unsigned long long)m->name); \
	} \
	m->array = (const ctype *)get_bytes(r, (size_t)m->name * (size));
#define REST(array, ctype, len, min, max) \
	if (OUTSIDE(r->left, min, max)) { \
		INVALID("%s %s is %zu bytes, allowed %lld to %lld", msg_name, #array, r->left, \
			(long long)(min), (long long)(max)); \
	} \
	m->len = (uint32_t)r->left; \
	m->array = (const ctype *)get_bytes(r, r->left);
#define X(NAME, name, code, sender, fixed, carrier, check) \
	static enum wire_status read_arrays_##name(struct reader *r, struct wire_##name *m, \
		char *err, size_t err_size) \
	{ \
		static const char msg_name[] = #name; \
		(void)msg_name; \
		(void)m; \
		WIRE_##NAME##_FIELDS; \
		if (r->left != 0) { \
			INVALID("%s has %zu bytes more than its fields", msg_name, r->left); \
		} \
		return WIRE_OK; \
	}
WIRE_MESSAGES(X)
#undef X
#undef COUNT
#undef REST

/* The generated writers. Sizes: the body without and with the REST part. */
#define COUNT(type, name, min, max, array, ctype, size) +(size_t)m->name *(size)
#define REST(array, ctype, len, min, max)
#define X(NAME, name, code, sender, fixed, carrier, check) \
	static size_t arrays_size_##name(const struct wire_##name *m) \
	{ \
		(void)m; \
		return 0 WIRE_##NAME##_FIELDS; \
	}
WIRE_MESSAGES(X)
#undef X
#undef COUNT
#undef REST
#define COUNT(type, name, min, max, array, ctype, size)
#define REST(array, ctype, len, min, max) +(size_t)m->len
#define X(NAME, name, code, sender, fixed, carrier, check) \
	static size_t rest_size_##name(const struct wire_##name *m) \
	{ \
		(void)m; \
		return 0 WIRE_##NAME##_FIELDS; \
	}
WIRE_MESSAGES(X)
#undef X
#undef FIELD
#undef RANGE
#undef BITS
#undef COUNT
#undef REST

#define FIELD(type, name) put_##type(p, m->name);
#define RANGE(type, name, min, max) put_##type(p, m->name);
#define BITS(type, name, mask) put_##type(p, m->name);
#define COUNT(type, name, min, max, array, ctype, size) put_##type(p, m->name);
#define REST(array, ctype, len, min, max)
#define X(NAME, name, code, sender, fixed, carrier, check) \
	static void write_fixed_##name(uint8_t **p, const struct wire_##name *m) \
	{ \
		(void)p; \
		(void)m; \
		WIRE_##NAME##_FIELDS \
	}
WIRE_MESSAGES(X)
#undef X
#undef FIELD
#undef RANGE
#undef BITS
#undef COUNT
#define FIELD(type, name)
#define RANGE(type, name, min, max)
#define BITS(type, name, mask)
#define COUNT(type, name, min, max, array, ctype, size) \
	put_bytes(p, m->array, (size_t)m->name *(size));
#define X(NAME, name, code, sender, fixed, carrier, check) \
	static void write_arrays_##name(uint8_t **p, const struct wire_##name *m) \
	{ \
		(void)p; \
		(void)m; \
		WIRE_##NAME##_FIELDS \
	}
WIRE_MESSAGES(X)
#undef X
#undef COUNT
#undef REST
#define COUNT(type, name, min, max, array, ctype, size)
#define REST(array, ctype, len, min, max) put_bytes(p, m->array, m->len);
#define X(NAME, name, code, sender, fixed, carrier, check) \
	static void write_rest_##name(uint8_t **p, const struct wire_##name *m) \
	{ \
		(void)p; \
		(void)m; \
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

/* The checks that span fields, each named in its messages' rows of
 * messages.h (the page has the same, by name, in web/wire.js). */
static enum wire_status check_frame(const struct wire_msg *msg, char *err, size_t err_size)
{
	const struct wire_frame *f = &msg->frame;
	int32_t w = f->width, h = f->height;
	if ((int64_t)w * h > WIRE_MAX_PIXELS) {
		INVALID("frame size %dx%d is more than %d pixels", w, h, WIRE_MAX_PIXELS);
	}
	uint64_t area = 0;
	for (uint32_t i = 0; i < f->nrects; i++) {
		struct wire_rect rect = wire_get_rect(f->rects, i);
		if (rect.x < 0 || rect.y < 0 || rect.width < 1 || rect.height < 1 ||
			(int64_t)rect.x + rect.width > w || (int64_t)rect.y + rect.height > h) {
			INVALID("frame rectangle %d,%d %dx%d is outside the %dx%d frame", rect.x,
				rect.y, rect.width, rect.height, w, h);
		}
		/* Rectangles may touch but not overlap: a frame never carries a
		 * pixel twice, so its raw size is at most the frame's pixels. At
		 * most WIRE_MAX_RECTS rectangles keep this pairwise test cheap. */
		for (uint32_t j = 0; j < i; j++) {
			struct wire_rect other = wire_get_rect(f->rects, j);
			if (rect.x < other.x + other.width && other.x < rect.x + rect.width &&
				rect.y < other.y + other.height && other.y < rect.y + rect.height) {
				INVALID("frame rectangles %u and %u overlap", j, i);
			}
		}
		area += (uint64_t)rect.width * (uint64_t)rect.height;
	}
	if (area * 4 != f->raw_size) {
		INVALID("frame raw size %u does not match its rectangles (%llu bytes)", f->raw_size,
			(unsigned long long)(area * 4));
	}
	if (f->codec == WIRE_CODEC_H264) {
		if (f->compression != WIRE_COMPRESS_NONE || f->nrects != 0 ||
			f->payload_size == 0 || (f->flags & WIRE_FRAME_REPLACE)) {
			INVALID("video frame must have no rectangles, no compression, no replace "
				"flag and a payload");
		}
	} else if (f->compression == WIRE_COMPRESS_NONE && f->payload_size != f->raw_size) {
		INVALID("uncompressed frame payload is %u bytes, expected %u", f->payload_size,
			f->raw_size);
	}
	return WIRE_OK;
}

/* Exactly count well-formed MIME types (u16 length, bytes) fill types. */
static bool types_fit(uint32_t count, const uint8_t *packed, uint32_t types_len)
{
	size_t pos = 0;
	for (uint32_t n = 0; n < count; n++) {
		size_t left = types_len - pos;
		size_t len = left < 2 ? 0 : (size_t)packed[pos] | (size_t)packed[pos + 1] << 8;
		if (len == 0 || len > WIRE_MAX_MIME || len > left - 2) {
			return false;
		}
		pos += 2 + len;
	}
	return pos == types_len;
}

static enum wire_status check_none(const struct wire_msg *msg, char *err, size_t err_size)
{
	(void)msg;
	(void)err;
	(void)err_size;
	return WIRE_OK;
}

static enum wire_status check_hello(const struct wire_msg *msg, char *err, size_t err_size)
{
	if (msg->hello.magic != WIRE_MAGIC) {
		INVALID("hello has bad magic 0x%08x: the peer does not speak rcomp",
			msg->hello.magic);
	}
	return WIRE_OK;
}

static enum wire_status check_welcome(const struct wire_msg *msg, char *err, size_t err_size)
{
	if (msg->welcome.magic != WIRE_MAGIC) {
		INVALID("welcome has bad magic 0x%08x: the peer does not speak rcomp",
			msg->welcome.magic);
	}
	if (!session_name_ok(msg->welcome.name, msg->welcome.name_len)) {
		INVALID("welcome has a session name that is not [A-Za-z0-9._-]");
	}
	return WIRE_OK;
}

static enum wire_status check_keys(const struct wire_msg *msg, char *err, size_t err_size)
{
	for (uint32_t i = 0; i < msg->keyboard_enter.nkeys; i++) {
		if (wire_get_key(msg->keyboard_enter.keys, i) > 0xffff) {
			INVALID("keyboard_enter has key code out of range");
		}
	}
	return WIRE_OK;
}

static enum wire_status check_popup_parent(const struct wire_msg *msg, char *err, size_t err_size)
{
	if (msg->popup_new.window == msg->popup_new.parent) {
		INVALID("popup %u is its own parent", msg->popup_new.window);
	}
	return WIRE_OK;
}

static enum wire_status check_copy_rect(const struct wire_msg *msg, char *err, size_t err_size)
{
	if (msg->copy_rect.dx == 0 && msg->copy_rect.dy == 0) {
		INVALID("copy_rect of window %u moves nothing", msg->copy_rect.window);
	}
	if ((int64_t)msg->copy_rect.x + msg->copy_rect.width > WIRE_MAX_DIM ||
		(int64_t)msg->copy_rect.y + msg->copy_rect.height > WIRE_MAX_DIM) {
		INVALID("copy_rect of window %u reaches past %d pixels", msg->copy_rect.window,
			WIRE_MAX_DIM);
	}
	return WIRE_OK;
}

static enum wire_status check_text_input(const struct wire_msg *msg, char *err, size_t err_size)
{
	if (msg->text_input.cursor > msg->text_input.text_len ||
		msg->text_input.anchor > msg->text_input.text_len) {
		INVALID("text_input of window %u: cursor or anchor past its %u bytes of "
			"text",
			msg->text_input.window, msg->text_input.text_len);
	}
	return WIRE_OK;
}

static enum wire_status check_preedit(const struct wire_msg *msg, char *err, size_t err_size)
{
	if (!(msg->text_input_event.flags & WIRE_TEXT_INPUT_PREEDIT) &&
		msg->text_input_event.preedit_len != 0) {
		INVALID("text_input_event of window %u: preedit text without the preedit "
			"flag",
			msg->text_input_event.window);
	}
	if (msg->text_input_event.preedit_cursor_begin >
			(int32_t)msg->text_input_event.preedit_len ||
		msg->text_input_event.preedit_cursor_end >
			(int32_t)msg->text_input_event.preedit_len) {
		INVALID("text_input_event of window %u: preedit cursor past its %u bytes",
			msg->text_input_event.window, msg->text_input_event.preedit_len);
	}
	return WIRE_OK;
}

static enum wire_status check_grab_edges(const struct wire_msg *msg, char *err, size_t err_size)
{
	/* The edges xdg_toplevel.resize takes, and only for a resize. */
	if (msg->window_grab.kind == WIRE_GRAB_RESIZE
			? msg->window_grab.edges == 0 || (msg->window_grab.edges & 3) == 3 ||
				(msg->window_grab.edges & 12) == 12
			: msg->window_grab.edges != 0) {
		INVALID("window_grab of window %u with edges %u", msg->window_grab.window,
			msg->window_grab.edges);
	}
	return WIRE_OK;
}

static enum wire_status check_window_parent(const struct wire_msg *msg, char *err, size_t err_size)
{
	if (msg->window_parent.parent == msg->window_parent.window) {
		INVALID("window %u is its own parent", msg->window_parent.window);
	}
	return WIRE_OK;
}

/* A picture's pixels, a cursor's or a drag icon's: 4 bytes each. */
static enum wire_status check_pixels(const struct wire_msg *msg, char *err, size_t err_size)
{
	bool cursor = msg->type == WIRE_CURSOR;
	const char *what = cursor ? "cursor" : "drag icon";
	int32_t w = cursor ? msg->cursor.width : msg->drag_icon.width;
	int32_t h = cursor ? msg->cursor.height : msg->drag_icon.height;
	uint32_t len = cursor ? msg->cursor.pixels_len : msg->drag_icon.pixels_len;
	if ((w == 0) != (h == 0)) {
		INVALID("%s size %dx%d is empty on one side only", what, w, h);
	}
	if (len != (uint32_t)w * (uint32_t)h * 4) {
		INVALID("%s pixels are %u bytes, not %dx%dx4", what, len, w, h);
	}
	return WIRE_OK;
}

static enum wire_status check_mime_types(const struct wire_msg *msg, char *err, size_t err_size)
{
	uint32_t count, types_len;
	const uint8_t *packed;
	switch (msg->type) {
	case WIRE_SELECTION:
		count = msg->selection.count;
		packed = msg->selection.types;
		types_len = msg->selection.types_len;
		break;
	case WIRE_DRAG_START:
		count = msg->drag_start.count;
		packed = msg->drag_start.types;
		types_len = msg->drag_start.types_len;
		break;
	default: /* WIRE_DND_ENTER */
		count = msg->dnd_enter.count;
		packed = msg->dnd_enter.types;
		types_len = msg->dnd_enter.types_len;
		break;
	}
	if (!types_fit(count, packed, types_len)) {
		INVALID("%s MIME types do not match their count %u", wire_type_name(msg->type),
			count);
	}
	return WIRE_OK;
}

static enum wire_status check_one_action(const struct wire_msg *msg, char *err, size_t err_size)
{
	uint32_t one = msg->type == WIRE_DRAG_LOCAL ? msg->drag_local.action
		: msg->type == WIRE_DND_ACTION	    ? msg->dnd_action.action
						    : msg->dnd_status.preferred;
	if (one & (one - 1)) {
		INVALID("%s names more than one action (%u)", wire_type_name(msg->type), one);
	}
	return WIRE_OK;
}

/* The check across fields its row of messages.h names. */
static enum wire_status check_message(const struct wire_msg *msg, char *err, size_t err_size)
{
	switch (msg->type) {
#define X(NAME, name, code, sender, fixed, carrier, check) \
	case WIRE_##NAME: \
		return check_##check(msg, err, err_size);
		WIRE_MESSAGES(X)
#undef X
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
	if (!(info->senders & sender)) {
		INVALID("%s message may not be sent by a %s", info->name,
			sender == WIRE_FROM_VIEWER ? "viewer" : "server");
	}
	if (hflags != 0) {
		INVALID("%s message has reserved header bits 0x%04x set", info->name, hflags);
	}
	/* Refuse a bad length before waiting for (or buffering) its body. */
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
	enum wire_status status = WIRE_INVALID;
	switch (type) {
#define X(NAME, name, code, sender, fixed, carrier, check) \
	case WIRE_##NAME: \
		status = read_fixed_##name(&r, &msg->name, err, err_size); \
		if (status == WIRE_OK) { \
			status = read_arrays_##name(&r, &msg->name, err, err_size); \
		} \
		break;
		WIRE_MESSAGES(X)
#undef X
	}
	if (status == WIRE_OK) {
		status = check_message(msg, err, err_size);
	}
	if (status != WIRE_OK) {
		return status;
	}
	*used = WIRE_HEADER_SIZE + body;
	return WIRE_OK;
}

static void put_header(uint8_t **p, uint16_t type, uint32_t body)
{
	put_u16(p, type);
	put_u16(p, 0);
	put_u32(p, body);
}

/* Appends all but the REST part; *rest gets its size. */
static bool begin(struct buffer *out, const struct wire_msg *msg, size_t *start, size_t *rest)
{
	const struct type_info *info = find_type(msg->type);
	size_t head = 0;
	*rest = 0;
	switch (msg->type) {
#define X(NAME, name, code, sender, fixed, carrier, check) \
	case WIRE_##NAME: \
		head = FIXED_##NAME + arrays_size_##name(&msg->name); \
		*rest = rest_size_##name(&msg->name); \
		break;
		WIRE_MESSAGES(X)
#undef X
	}
	if (!info || head + *rest < info->min_body || head + *rest > info->max_body) {
		return false;
	}
	uint8_t *base = buffer_reserve(out, WIRE_HEADER_SIZE + head);
	if (!base) {
		return false;
	}
	uint8_t *p = base;
	put_header(&p, (uint16_t)msg->type, (uint32_t)(head + *rest));
	switch (msg->type) {
#define X(NAME, name, code, sender, fixed, carrier, check) \
	case WIRE_##NAME: \
		write_fixed_##name(&p, &msg->name); \
		write_arrays_##name(&p, &msg->name); \
		break;
		WIRE_MESSAGES(X)
#undef X
	}
	assert((size_t)(p - base) == WIRE_HEADER_SIZE + head);
	*start = buffer_size(out);
	buffer_commit(out, WIRE_HEADER_SIZE + head);
	return true;
}

bool wire_begin(struct buffer *out, const struct wire_msg *msg, size_t *start)
{
	size_t rest;
	return begin(out, msg, start, &rest);
}

void wire_finish(struct buffer *out, size_t start)
{
	size_t body = buffer_size(out) - start - WIRE_HEADER_SIZE;
	uint8_t *p = buffer_head(out) + start + 4;
	put_u32(&p, (uint32_t)body);
}

bool wire_encode(struct buffer *out, const struct wire_msg *msg)
{
	size_t start, rest;
	if (!begin(out, msg, &start, &rest)) {
		return false;
	}
	uint8_t *p = rest ? buffer_reserve(out, rest) : NULL;
	if (rest && !p) {
		buffer_truncate(out, start);
		return false;
	}
	switch (msg->type) {
#define X(NAME, name, code, sender, fixed, carrier, check) \
	case WIRE_##NAME: \
		write_rest_##name(&p, &msg->name); \
		break;
		WIRE_MESSAGES(X)
#undef X
	}
	buffer_commit(out, rest);
	return true;
}

bool wire_version_refused(uint32_t major, const char *peer, const char *program, char *text,
	size_t size)
{
	if (major == WIRE_VERSION_MAJOR) {
		return false;
	}
	snprintf(text, size,
		"%s speaks wire protocol %u, this %s %s speaks %u: install the same rcomp version "
		"on both sides (rcomp-run --version, rcomp-view --version)",
		peer, major, program, RCOMP_VERSION, WIRE_VERSION_MAJOR);
	return true;
}
