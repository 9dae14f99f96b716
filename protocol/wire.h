/*
 * The rcomp wire format: message types, limits, and validated encoding and
 * decoding. PROTOCOL.md is the specification; this file follows it.
 */
#ifndef RCOMP_WIRE_H
#define RCOMP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"

#define WIRE_MAGIC 0x504d4352u /* "RCMP" little-endian */
#define WIRE_VERSION_MAJOR 1
#define WIRE_VERSION_MINOR 0

#define WIRE_HEADER_SIZE 8

/* Limits. Every length and count a peer sends is checked against these. */
#define WIRE_MAX_DIM 8192
#define WIRE_MAX_PIXELS (4096 * 4096)
#define WIRE_MAX_RECTS 4096
#define WIRE_MAX_TITLE 1024
#define WIRE_MAX_APP_ID 256
#define WIRE_MAX_TEXT 1024
#define WIRE_MAX_KEYMAP (1024 * 1024)
#define WIRE_MAX_KEYS 256
#define WIRE_MAX_TOKEN 128
#define WIRE_MAX_SESSION_NAME 64
#define WIRE_MAX_REFRESH_MHZ 1000000
#define WIRE_MAX_SCALE 16
#define WIRE_MAX_CURSOR 256 /* cursor image side, in buffer pixels */
#define WIRE_MAX_MIME_TYPES 64
#define WIRE_MAX_TOUCH_POINTS 16 /* down at once */
#define WIRE_MAX_MIME 256 /* bytes of one MIME type */
#define WIRE_MAX_TRANSFER_CHUNK 65536
#define WIRE_MAX_RAW ((uint32_t)WIRE_MAX_PIXELS * 4)
/* A frame body: fixed part, rectangles and a payload that may exceed the raw
 * size a little when data does not compress (lz4/zstd worst-case bounds). */
#define WIRE_MAX_BODY (WIRE_MAX_RAW + WIRE_MAX_RAW / 128 + 65536)

enum wire_type {
	/* viewer to server */
	WIRE_HELLO = 0x0101,
	WIRE_KEYMAP = 0x0102,
	WIRE_REPEAT_INFO = 0x0103,
	WIRE_CONFIGURE = 0x0104,
	WIRE_CLOSE = 0x0105,
	WIRE_POINTER_MOTION = 0x0106,
	WIRE_POINTER_LEAVE = 0x0107,
	WIRE_POINTER_BUTTON = 0x0108,
	WIRE_POINTER_AXIS = 0x0109,
	WIRE_POINTER_FRAME = 0x010a,
	WIRE_KEYBOARD_ENTER = 0x010b,
	WIRE_KEYBOARD_LEAVE = 0x010c,
	WIRE_KEY = 0x010d,
	WIRE_MODIFIERS = 0x010e,
	WIRE_FRAME_ACK = 0x010f,
	WIRE_OUTPUT_INFO = 0x0110,
	WIRE_POPUP_DONE = 0x0111,
	WIRE_DECORATION_MODE = 0x0112,
	WIRE_TOUCH_DOWN = 0x0113,
	WIRE_TOUCH_UP = 0x0114,
	WIRE_TOUCH_MOTION = 0x0115,
	WIRE_TOUCH_FRAME = 0x0116,
	WIRE_TOUCH_CANCEL = 0x0117,
	/* server to viewer */
	WIRE_WELCOME = 0x0201,
	WIRE_GOODBYE = 0x0202,
	WIRE_WINDOW_NEW = 0x0203,
	WIRE_WINDOW_TITLE = 0x0204,
	WIRE_WINDOW_APP_ID = 0x0205,
	WIRE_WINDOW_DESTROY = 0x0206,
	WIRE_FRAME = 0x0207,
	WIRE_SYNC = 0x0208,
	WIRE_POPUP_NEW = 0x0209,
	WIRE_WINDOW_PARENT = 0x020a,
	WIRE_CURSOR = 0x020b,
	WIRE_WINDOW_SCALE = 0x020c,
	WIRE_WINDOW_REQUEST = 0x020d,
	WIRE_WINDOW_HINTS = 0x020e,
	WIRE_WINDOW_DECORATION = 0x020f,

	/* Either way: clipboard and primary selection. */
	WIRE_SELECTION = 0x0301,
	WIRE_TRANSFER_REQUEST = 0x0302,
	WIRE_TRANSFER_DATA = 0x0303,
	WIRE_TRANSFER_ACK = 0x0304,
};

enum wire_compression {
	WIRE_COMPRESS_NONE = 0,
	WIRE_COMPRESS_LZ4 = 1,
	WIRE_COMPRESS_ZSTD = 2,
};

enum wire_caps {
	WIRE_CAP_LZ4 = 1u << 0,
	WIRE_CAP_ZSTD = 1u << 1,
	WIRE_CAP_H264 = 1u << 2,
	/* hello: the local compositor draws decorations (xdg-decoration) */
	WIRE_CAP_SERVER_DECORATIONS = 1u << 3,
};

enum wire_codec {
	/* Rectangles of XRGB/ARGB8888 pixels XORed with the previous frame. */
	WIRE_CODEC_XOR = 0,
	/* One H.264 access unit of the whole window, padded to even sizes. */
	WIRE_CODEC_H264 = 1,
};

enum wire_frame_flags {
	/* The viewer clears its copy first: the diff base is all zeros. For
	 * video: a new stream starts here (the viewer makes a new decoder). */
	WIRE_FRAME_RESET = 1u << 0,
};

enum wire_goodbye_reason {
	WIRE_BYE_APP_EXITED = 0,
	WIRE_BYE_SHUTDOWN = 1,
	WIRE_BYE_BUSY = 2,
	WIRE_BYE_PROTOCOL_ERROR = 3,
	WIRE_BYE_VERSION = 4,
	WIRE_BYE_TAKEN_OVER = 5,
	WIRE_BYE_UNAUTHORIZED = 6,
	WIRE_BYE_NO_SESSION = 7,
};

enum wire_popup_flags {
	/* The app asked for an explicit grab: the local popup takes one. */
	WIRE_POPUP_GRAB = 1u << 0,
};

enum wire_toplevel_state {
	WIRE_STATE_MAXIMIZED = 1u << 0,
	WIRE_STATE_FULLSCREEN = 1u << 1,
	WIRE_STATE_RESIZING = 1u << 2,
	WIRE_STATE_ACTIVATED = 1u << 3,
};

enum wire_selection_kind {
	WIRE_SELECTION_CLIPBOARD = 0,
	WIRE_SELECTION_PRIMARY = 1,
};

enum wire_transfer_flags {
	WIRE_TRANSFER_END = 1u << 0, /* transfer_data: the last bytes */
	WIRE_TRANSFER_FAILED = 1u << 1, /* transfer_data: no data will come */
	WIRE_TRANSFER_CANCEL = 1u << 0, /* transfer_ack: the reader went away */
};

/* What an app asks of its window (window_request). */
enum wire_window_request {
	WIRE_REQUEST_MAXIMIZE = 1,
	WIRE_REQUEST_UNMAXIMIZE = 2,
	WIRE_REQUEST_FULLSCREEN = 3,
	WIRE_REQUEST_UNFULLSCREEN = 4,
	WIRE_REQUEST_MINIMIZE = 5,
};

struct wire_rect {
	int32_t x, y, width, height;
};

/* A decoded message. Pointers refer into the buffer it was decoded from and
 * stay valid until that buffer is consumed. */
struct wire_msg {
	enum wire_type type;
	union {
		struct {
			uint32_t magic;
			uint16_t major, minor;
			uint32_t caps;
			uint32_t flags;
			uint32_t token_len; /* 0 on unix sockets and stdio */
			const char *token;
		} hello;
		struct {
			uint32_t magic;
			uint16_t major, minor;
			uint32_t caps;
			uint32_t flags; /* the compression frames use */
			uint64_t session_id; /* random, fixed for the session's life */
			uint32_t name_len;
			const char *name; /* what rcomp-run --attach takes */
		} welcome;
		struct {
			uint32_t format;
			uint32_t size;
			const char *data;
		} keymap;
		struct {
			int32_t rate, delay;
		} repeat_info;
		struct {
			uint32_t window;
			int32_t width, height;
			uint32_t states;
		} configure;
		struct {
			uint32_t window;
		} close, pointer_leave, keyboard_leave, window_destroy, popup_done;
		struct {
			uint32_t window, parent; /* parent 0: none */
		} window_parent;
		struct {
			uint32_t window;
			int32_t scale; /* of the frames that follow */
		} window_scale;
		struct {
			uint32_t window;
			uint32_t request; /* enum wire_window_request */
		} window_request;
		struct {
			uint32_t window;
			int32_t min_width, min_height, max_width, max_height; /* 0: none */
		} window_hints;
		struct {
			uint32_t window;
			uint32_t mode; /* 1: the app draws its own, 2: the local compositor */
		} window_decoration, decoration_mode;
		struct {
			uint32_t window; /* touch_down only */
			int32_t id;
			int32_t x, y; /* 24.8 fixed point, window-geometry coordinates of
				       * the window the point went down on */
		} touch;
		struct {
			uint32_t kind; /* enum wire_selection_kind */
			uint32_t count; /* MIME types; 0: the selection is cleared */
			/* count times: u16 length, bytes; read with wire_mime_next() */
			const uint8_t *types;
			uint32_t types_len;
		} selection;
		struct {
			uint32_t id; /* chosen by the requester */
			uint32_t kind;
			uint32_t mime_len;
			const char *mime;
		} transfer_request;
		struct {
			uint32_t id, flags;
			uint32_t len; /* at most WIRE_MAX_TRANSFER_CHUNK */
			const uint8_t *data;
		} transfer_data;
		struct {
			uint32_t id;
			uint32_t bytes; /* written out since the last ack */
			uint32_t flags;
		} transfer_ack;
		struct {
			int32_t hotspot_x, hotspot_y; /* surface-local */
			int32_t width, height; /* buffer pixels; 0x0: hidden */
			int32_t scale; /* the cursor buffer's scale */
			const uint8_t *pixels; /* width*height ARGB8888, premultiplied */
		} cursor;
		struct {
			uint32_t window, parent;
			/* As the app's xdg_positioner, relative to the parent
			 * window's geometry (which is its frame's origin). */
			int32_t anchor_x, anchor_y, anchor_width, anchor_height;
			int32_t width, height;
			uint32_t anchor, gravity, constraint_adjustment;
			int32_t offset_x, offset_y;
			uint32_t flags; /* WIRE_POPUP_GRAB */
		} popup_new;
		struct {
			uint32_t window;
			int32_t x, y; /* 24.8 fixed point, window-geometry coordinates */
		} pointer_motion;
		struct {
			uint32_t button, state;
		} pointer_button;
		struct {
			uint32_t axis;
			int32_t value; /* 24.8 fixed point */
			int32_t discrete;
			uint32_t source;
		} pointer_axis;
		struct {
			uint32_t window;
			uint32_t nkeys;
			const uint32_t *keys; /* may be unaligned: read with wire_get_key() */
		} keyboard_enter;
		struct {
			uint32_t key, state;
		} key;
		struct {
			uint32_t depressed, latched, locked, group;
		} modifiers;
		struct {
			uint32_t window, seq;
			uint64_t recv_time_us;
		} frame_ack;
		struct {
			uint32_t window;
			uint32_t refresh_mhz; /* 0: unknown */
			int32_t scale;
		} output_info;
		struct {
			int32_t status;
			uint32_t reason;
			uint32_t text_len;
			const char *text;
		} goodbye;
		struct {
			uint32_t window, parent;
			int32_t width, height;
			uint32_t title_len, app_id_len;
			const char *title, *app_id;
		} window_new;
		struct {
			uint32_t window;
			uint32_t len;
			const char *text;
		} window_text; /* WINDOW_TITLE and WINDOW_APP_ID */
		struct {
			uint32_t window, seq;
			int32_t width, height;
			uint8_t codec, compression;
			uint16_t flags;
			uint32_t nrects;
			uint32_t raw_size;
			const uint8_t *rects; /* nrects * 16 bytes: read with wire_get_rect() */
			uint32_t payload_size;
			const uint8_t *payload;
		} frame;
	};
};

/* Who may send a message: decoding rejects messages from the wrong side. */
enum wire_sender {
	WIRE_FROM_VIEWER = 1,
	WIRE_FROM_SERVER = 2,
};

enum wire_status {
	WIRE_OK = 1,
	WIRE_INCOMPLETE = 0,
	WIRE_INVALID = -1,
};

/*
 * Decodes one message from the front of data. Returns WIRE_OK and sets *used,
 * WIRE_INCOMPLETE if more bytes are needed (never more than WIRE_HEADER_SIZE +
 * WIRE_MAX_BODY in all), or WIRE_INVALID with a human-readable reason in err.
 */
enum wire_status wire_decode(enum wire_sender sender, const uint8_t *data, size_t len,
	struct wire_msg *msg, size_t *used, char *err, size_t err_size);

/* Walks the MIME types of a decoded selection message: *pos starts at 0.
 * False at the end. */
bool wire_mime_next(const struct wire_msg *msg, size_t *pos, const char **mime, size_t *len);
/* Appends one MIME type to a selection's types at dst (cap bytes free);
 * returns the bytes used, 0 if it does not fit or is too long. */
size_t wire_mime_pack(uint8_t *dst, size_t cap, const char *mime, size_t len);

/* A selection's MIME types, packed as the selection message carries them. */
struct wire_mime_list {
	uint32_t count;
	uint32_t used;
	uint8_t packed[WIRE_MAX_MIME_TYPES * (2 + WIRE_MAX_MIME)];
};

/* Appends one type; false, the list unchanged, if it is full or the type
 * is empty or too long. */
bool wire_mime_list_add(struct wire_mime_list *list, const char *mime, size_t len);
/* Copies a decoded selection message's types. */
void wire_mime_list_from_msg(struct wire_mime_list *list, const struct wire_msg *msg);
/* Makes msg a selection of kind with the list's types (pointing into it). */
void wire_mime_list_to_msg(const struct wire_mime_list *list, uint32_t kind, struct wire_msg *msg);
bool wire_mime_list_has(const struct wire_mime_list *list, const char *mime, size_t len);
bool wire_mime_list_equal(const struct wire_mime_list *a, const struct wire_mime_list *b);

/* Appends one encoded message. Returns false if the buffer refuses the size. */
bool wire_encode(struct buffer *out, const struct wire_msg *msg);

/* Starts a FRAME message whose payload the caller appends next and finishes
 * with wire_frame_finish(). Returns the offset of the message. */
bool wire_frame_begin(struct buffer *out, const struct wire_msg *msg, const struct wire_rect *rects,
	size_t *start);
void wire_frame_finish(struct buffer *out, size_t start);

struct wire_rect wire_get_rect(const uint8_t *rects, uint32_t i);
uint32_t wire_get_key(const uint32_t *keys, uint32_t i);

const char *wire_type_name(uint32_t type);

/* Session names are 1 to WIRE_MAX_SESSION_NAME of [A-Za-z0-9._-], not
 * starting with a dot: safe as a file name and in a shell. */
bool wire_session_name_ok(const char *name, size_t len);

#endif
