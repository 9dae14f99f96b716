/*
 * The rcomp wire format: limits, the values fields take, and validated
 * encoding and decoding of the messages declared in messages.h.
 * PROTOCOL.md is the specification; this file and messages.h follow it.
 */
#ifndef RCOMP_WIRE_H
#define RCOMP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "session.h" /* SESSION_NAME_MAX, session_name_ok */

#define WIRE_MAGIC 0x504d4352u /* "RCMP" little-endian */
#define WIRE_VERSION_MAJOR 3
#define WIRE_VERSION_MINOR 12

#define WIRE_HEADER_SIZE 8

/* Limits. Every length and count a peer sends is checked against these. */
#define WIRE_MAX_DIM 8192
#define WIRE_MAX_PIXELS (4096 * 4096)
#define WIRE_MAX_RECTS 256 /* per frame; they may not overlap */
#define WIRE_MAX_TITLE 1024
#define WIRE_MAX_APP_ID 256
#define WIRE_MAX_TEXT 1024
#define WIRE_MAX_KEYMAP (1024 * 1024)
#define WIRE_MAX_KEYS 256
#define WIRE_MAX_TOKEN 128
#define WIRE_MAX_HOST_NAME 255
/* A local output's name and description (xdg-output), as output_place
 * carries them. */
#define WIRE_MAX_OUTPUT_NAME 63
#define WIRE_MAX_OUTPUT_DESCRIPTION 127
#define WIRE_MAX_ADDRESS 64 /* an IP address as text */
#define WIRE_MAX_VIEWERS 16 /* of one session at once */
#define WIRE_MAX_FPS 100000 /* window_stats: commits per second */
#define WIRE_MAX_BITRATE 1000000000u /* video_stats: bit/s */
/* video_stats: libx264's quantizer (past 51, H.264's coarsest step, it
 * zeroes more coefficients) */
#define WIRE_MAX_QP 69

/* video_stats: the encoder's speed setting, libx264's presets fastest
 * first, or a hardware encoder. */
enum wire_preset {
	WIRE_PRESET_ULTRAFAST,
	WIRE_PRESET_SUPERFAST,
	WIRE_PRESET_VERYFAST,
	WIRE_PRESET_FASTER,
	WIRE_PRESET_FAST,
	WIRE_PRESET_MEDIUM,
	WIRE_PRESET_SLOW,
	WIRE_PRESET_SLOWER,
	WIRE_PRESET_VERYSLOW,
	WIRE_PRESET_PLACEBO,
	WIRE_PRESET_HARDWARE,
};
/* Their names, as libx264 spells them ("hardware" last). */
extern const char *const wire_preset_names[WIRE_PRESET_HARDWARE + 1];
#define WIRE_MAX_TEXT_INPUT 4000 /* surrounding, preedit or commit text */
#define WIRE_MAX_REFRESH_MHZ 1000000
#define WIRE_MAX_SCALE 16
#define WIRE_MAX_CURSOR 256 /* cursor image side, in buffer pixels */
#define WIRE_MAX_MIME_TYPES 64
#define WIRE_MAX_TOUCH_POINTS 16 /* down at once */
#define WIRE_MAX_MIME 256 /* bytes of one MIME type */
#define WIRE_MAX_TRANSFER_CHUNK 65536
#define WIRE_MAX_FILES 4096 /* in one group of files */
#define WIRE_MAX_FILE_PATH 1024 /* a file's relative path, in bytes */
#define WIRE_MAX_SEND_PATHS 65536 /* send_files: the paths, in bytes */
#define WIRE_MAX_NOTE_NAME 256 /* notify: an app's name, a summary, an icon's, an action's */
#define WIRE_MAX_NOTE_BODY 4096
#define WIRE_MAX_NOTE_ACTIONS 4096 /* notify: the actions' keys and labels */
#define WIRE_MAX_RAW (WIRE_MAX_PIXELS * 4)
#define WIRE_RECT_SIZE 16
/* A frame's payload may exceed its raw size a little when the data does not
 * compress (the lz4/zstd worst-case bounds). */
#define WIRE_MAX_PAYLOAD (WIRE_MAX_RAW + WIRE_MAX_RAW / 128 + 65536)
/* The largest body of any message: a frame's. */
#define WIRE_MAX_BODY (36 + WIRE_MAX_RECTS * WIRE_RECT_SIZE + WIRE_MAX_PAYLOAD)

enum wire_compression {
	WIRE_COMPRESS_NONE = 0,
	WIRE_COMPRESS_LZ4 = 1,
	WIRE_COMPRESS_ZSTD = 2,
};

/* hello's flags */
enum wire_hello_flags {
	/* the viewer came over ssh and takes a udp_offer (minor 3) */
	WIRE_HELLO_UDP_OFFER = 1u << 0,
	/* join beside the viewers there, instead of taking the session over
	 * (minor 4) */
	WIRE_HELLO_SHARE = 1u << 1,
	/* join to watch only: no input of any kind (minor 4; implies share) */
	WIRE_HELLO_VIEW_ONLY = 1u << 2,
	/* end the session (rcomp-run --stop; minor 5): its apps are asked to
	 * close their windows, then ended */
	WIRE_HELLO_STOP = 1u << 3,
	/* send files to the viewers (rcomp-run --send; minor 8): a
	 * send_files follows; only on the session's own socket */
	WIRE_HELLO_SEND = 1u << 4,
	WIRE_HELLO_ALL = 0x1f, /* any other bit is refused */
};

/* session_viewers' flags: what this viewer may do */
enum wire_viewers_flags {
	WIRE_VIEWERS_INPUT = 1u << 0, /* its input reaches the apps now */
	WIRE_VIEWERS_WATCHING = 1u << 1, /* it was admitted to watch only */
};

enum wire_caps {
	WIRE_CAP_LZ4 = 1u << 0,
	WIRE_CAP_ZSTD = 1u << 1,
	WIRE_CAP_H264 = 1u << 2,
	/* hello: the local compositor draws decorations (xdg-decoration) */
	WIRE_CAP_SERVER_DECORATIONS = 1u << 3,
	/* hello: the viewer applies copy_rect */
	WIRE_CAP_COPY_RECT = 1u << 4,
	/* hello: the viewer applies lossless frames with WIRE_FRAME_REPLACE */
	WIRE_CAP_REPLACE = 1u << 5,
	/* hello: send the apps' sound; welcome: the session has a sound server
	 * (it takes the viewer's microphone) */
	WIRE_CAP_AUDIO = 1u << 6,
};

/* Sound is Opus, 48 kHz stereo; a packet holds 2.5 to 60 ms. */
#define WIRE_AUDIO_RATE 48000
#define WIRE_AUDIO_CHANNELS 2
#define WIRE_AUDIO_MIN_SAMPLES 120
#define WIRE_AUDIO_MAX_SAMPLES 2880
#define WIRE_MAX_AUDIO 4000 /* bytes of one packet */

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
	/* lossless: the raw bytes are the new pixels, not XORed with the old */
	WIRE_FRAME_REPLACE = 1u << 1,
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
	/* 3.1: the local compositor tiles the window against these edges */
	WIRE_STATE_TILED_LEFT = 1u << 4,
	WIRE_STATE_TILED_RIGHT = 1u << 5,
	WIRE_STATE_TILED_TOP = 1u << 6,
	WIRE_STATE_TILED_BOTTOM = 1u << 7,
	WIRE_STATES_TILED = 0xf0,
	WIRE_STATES_ALL = 0xff,
};

enum wire_selection_kind {
	WIRE_SELECTION_CLIPBOARD = 0,
	WIRE_SELECTION_PRIMARY = 1,
	WIRE_SELECTION_DND = 2, /* 3.1, transfer_request only: the drag's data */
};

/* Drag and drop actions, as wl_data_device_manager's. */
enum wire_dnd_actions {
	WIRE_DND_COPY = 1u << 0,
	WIRE_DND_MOVE = 1u << 1,
	WIRE_DND_ASK = 1u << 2,
	WIRE_DND_ALL = 7,
};

/* What became of an app's drag outside our windows (drag_local). */
enum wire_drag_state {
	WIRE_DRAG_DROPPED = 1, /* on a local app, which takes action */
	WIRE_DRAG_FINISHED = 2, /* that app has the data */
	WIRE_DRAG_CANCELLED = 3, /* dropped on nothing that took it */
};

enum wire_transfer_flags {
	WIRE_TRANSFER_END = 1u << 0, /* transfer_data: the last bytes */
	WIRE_TRANSFER_FAILED = 1u << 1, /* transfer_data: no data will come */
	WIRE_TRANSFER_CANCEL = 1u << 0, /* transfer_ack: the reader went away */
};

/* What a group of files is for (file_group). */
enum wire_files_kind {
	WIRE_FILES_DROP = 1, /* dropped on a window: the app gets the drop */
	WIRE_FILES_UPLOAD = 2, /* given to the session: its download folder */
	WIRE_FILES_SEND = 3, /* rcomp-run --send: the person's download folder */
	WIRE_FILES_PRINT = 4, /* an app's print, one PDF */
	WIRE_FILES_DRAG = 5, /* an app's drag dropped on the viewer's desktop */
};

/* What became of a notification the viewer shows (notify_reply). */
enum wire_note_event {
	WIRE_NOTE_ACTION = 1, /* an action was invoked: its key ("default": a click) */
	WIRE_NOTE_CLOSED = 2, /* it closed, for reason */
};

/* Why a notification closed (notify_reply, notify_close): the spec's. */
enum wire_note_reason {
	WIRE_NOTE_EXPIRED = 1,
	WIRE_NOTE_DISMISSED = 2, /* by the person */
	WIRE_NOTE_CLOSED_BY_APP = 3, /* CloseNotification */
	WIRE_NOTE_OTHER = 4,
};

enum wire_note_urgency {
	WIRE_NOTE_LOW = 0,
	WIRE_NOTE_NORMAL = 1,
	WIRE_NOTE_CRITICAL = 2,
};

/* file_ack's flags */
enum wire_files_ack_flags {
	/* send from received on: what came after it was dropped (out of
	 * order), or a group resumes there */
	WIRE_FILES_FROM_HERE = 1u << 0,
};

/* How a group of files ended (file_done). */
enum wire_files_status {
	WIRE_FILES_WHOLE = 0, /* the receiver has each file, checked */
	WIRE_FILES_CANCELLED = 1, /* either side gave it up */
	WIRE_FILES_REFUSED = 2, /* the receiver does not take it (settings, limits, names) */
	WIRE_FILES_FAILED = 3, /* a file came wrong or could not be written */
};

/* A pointer constraint an app asked for (pointer_constraint). */
enum wire_constraint {
	WIRE_CONSTRAINT_NONE = 0,
	WIRE_CONSTRAINT_LOCK = 1,
	WIRE_CONSTRAINT_CONFINE = 2,
};
enum wire_constraint_flags {
	WIRE_CONSTRAINT_HINT = 1u << 0, /* hint_x, hint_y say where the pointer ends */
};

/* What an app asks of its window (window_request). */
enum wire_request {
	WIRE_REQUEST_MAXIMIZE = 1,
	WIRE_REQUEST_UNMAXIMIZE = 2,
	WIRE_REQUEST_FULLSCREEN = 3,
	WIRE_REQUEST_UNFULLSCREEN = 4,
	WIRE_REQUEST_MINIMIZE = 5,
};

/* What an app's press asked the local compositor to do (window_grab). */
enum wire_grab {
	WIRE_GRAB_MOVE = 1,
	WIRE_GRAB_RESIZE = 2,
	WIRE_GRAB_MENU = 3,
};

/* How a frame was shown (frame_presented). */
enum wire_presented_flags {
	WIRE_PRESENTED_VSYNC = 1 << 0, /* in step with the output's refresh */
	WIRE_PRESENTED_ESTIMATE = 1 << 1, /* the desktop's frame callback, not its feedback */
};

/* A tablet's tool (tablet): its type, as zwp_tablet_tool_v2 numbers them. */
enum wire_tablet_tool_type {
	WIRE_TABLET_PEN = 0x140,
	WIRE_TABLET_ERASER = 0x141,
	WIRE_TABLET_BRUSH = 0x142,
	WIRE_TABLET_PENCIL = 0x143,
	WIRE_TABLET_AIRBRUSH = 0x144,
	WIRE_TABLET_FINGER = 0x145,
	WIRE_TABLET_MOUSE = 0x146,
	WIRE_TABLET_LENS = 0x147,
};
/* What the tool has. */
#define WIRE_TABLET_HAS_TILT 0x1u
#define WIRE_TABLET_HAS_PRESSURE 0x2u
#define WIRE_TABLET_HAS_DISTANCE 0x4u
#define WIRE_TABLET_HAS_ROTATION 0x8u
#define WIRE_TABLET_HAS_SLIDER 0x10u
#define WIRE_TABLET_HAS_WHEEL 0x20u
#define WIRE_TABLET_CAPABILITIES 0x3fu
/* What one frame of it says, in this order. */
#define WIRE_TABLET_IN 0x1u /* came into proximity over the window */
#define WIRE_TABLET_MOTION 0x2u /* x, y */
#define WIRE_TABLET_PRESSURE 0x4u
#define WIRE_TABLET_DISTANCE 0x8u
#define WIRE_TABLET_TILT 0x10u
#define WIRE_TABLET_ROTATION 0x20u
#define WIRE_TABLET_SLIDER 0x40u
#define WIRE_TABLET_WHEEL 0x80u
#define WIRE_TABLET_DOWN 0x100u /* the tip touched */
#define WIRE_TABLET_BUTTON 0x200u /* button, button_state */
#define WIRE_TABLET_UP 0x400u
#define WIRE_TABLET_OUT 0x800u /* left proximity */
#define WIRE_TABLET_CHANGES 0xfffu

/* A tablet's pad (tablet_pad): its buttons, rings and strips, and the
 * modes of its groups. */
enum wire_pad_event {
	WIRE_PAD_ENTER = 1, /* the pad's focus came to the window: its shape */
	WIRE_PAD_LEAVE = 2,
	WIRE_PAD_BUTTON = 3, /* number, value 0 released or 1 pressed */
	WIRE_PAD_RING = 4, /* number, value 24.8 degrees or -1: the finger left */
	WIRE_PAD_STRIP = 5, /* number, value 0-65535 or -1: the finger left */
	WIRE_PAD_MODE = 6, /* number: the group, value: its mode */
};
#define WIRE_MAX_PAD_BUTTONS 64
#define WIRE_MAX_PAD_RINGS 4
#define WIRE_MAX_PAD_STRIPS 4
#define WIRE_MAX_PAD_GROUPS 4
#define WIRE_MAX_PAD_MODES 16

/* A touchpad's gestures (gesture). */
enum wire_gesture_kind {
	WIRE_GESTURE_SWIPE = 1,
	WIRE_GESTURE_PINCH = 2,
	WIRE_GESTURE_HOLD = 3,
};
enum wire_gesture_phase {
	WIRE_GESTURE_BEGIN = 0,
	WIRE_GESTURE_UPDATE = 1,
	WIRE_GESTURE_END = 2,
};
#define WIRE_MAX_FINGERS 10

/* Input methods (text_input, text_input_event). */
enum wire_text_input_flags {
	WIRE_TEXT_INPUT_ENABLED = 1u << 0, /* text_input: the app takes text */
	WIRE_TEXT_INPUT_PREEDIT = 1u << 0, /* text_input_event: preedit follows */
};

/* Who draws a window's title bar (window_decoration, decoration_mode). */
enum wire_decoration {
	WIRE_DECORATION_CLIENT_SIDE = 1, /* the app, in its own pixels */
	WIRE_DECORATION_SERVER_SIDE = 2, /* the local compositor */
};

/* Who may send a message: decoding refuses messages from the wrong side. */
enum wire_sender {
	WIRE_FROM_VIEWER = 1,
	WIRE_FROM_SERVER = 2,
};

#include "messages.h"

enum wire_type {
#define X(NAME, name, code, sender, fixed, carrier, check) WIRE_##NAME = code,
	WIRE_MESSAGES(X)
#undef X
};

/* One struct per message, its fields as messages.h declares them. Arrays
 * point into the buffer a message was decoded from and stay valid until that
 * buffer is consumed. */
#define WIRE_CTYPE_u8 uint8_t
#define WIRE_CTYPE_u16 uint16_t
#define WIRE_CTYPE_u32 uint32_t
#define WIRE_CTYPE_i32 int32_t
#define WIRE_CTYPE_u64 uint64_t
#define FIELD(type, name) WIRE_CTYPE_##type name;
#define RANGE(type, name, min, max) WIRE_CTYPE_##type name;
#define BITS(type, name, mask) WIRE_CTYPE_##type name;
#define COUNT(type, name, min, max, array, ctype, size) \
	WIRE_CTYPE_##type name; \
	const ctype *array;
#define REST(array, ctype, len, min, max) \
	const ctype *array; \
	uint32_t len;
#define NONE char empty; /* C wants a member */
#define X(NAME, name, code, sender, fixed, carrier, check) \
	struct wire_##name { \
		WIRE_##NAME##_FIELDS \
	};
WIRE_MESSAGES(X)
#undef X
#undef FIELD
#undef RANGE
#undef BITS
#undef COUNT
#undef REST
#undef NONE

struct wire_msg {
	enum wire_type type;
	union {
#define X(NAME, name, code, sender, fixed, carrier, check) struct wire_##name name;
		WIRE_MESSAGES(X)
#undef X
	};
};

struct wire_rect {
	int32_t x, y, width, height;
};

enum wire_status {
	WIRE_OK = 1,
	WIRE_INCOMPLETE = 0,
	WIRE_INVALID = -1,
};

/*
 * Decodes one message from the front of data. Returns WIRE_OK and sets *used,
 * WIRE_INCOMPLETE if more bytes are needed (never more than WIRE_HEADER_SIZE +
 * WIRE_MAX_BODY in all, and the length is checked from the header alone), or
 * WIRE_INVALID with a human-readable reason in err.
 */
enum wire_status wire_decode(enum wire_sender sender, const uint8_t *data, size_t len,
	struct wire_msg *msg, size_t *used, char *err, size_t err_size);

/* Appends one encoded message. False if a field breaks the protocol or the
 * buffer refuses the size; nothing is appended then. */
bool wire_encode(struct buffer *out, const struct wire_msg *msg);

/* For a message whose last part (its REST array, a frame's payload) the
 * caller writes in place: wire_begin() appends all but that part, the caller
 * appends it, wire_finish() sets the length. *start is the message's offset
 * in buffer_size() terms. */
bool wire_begin(struct buffer *out, const struct wire_msg *msg, size_t *start);
void wire_finish(struct buffer *out, size_t start);

struct wire_rect wire_get_rect(const uint8_t *rects, uint32_t i);
void wire_put_rect(uint8_t *rects, uint32_t i, struct wire_rect rect);
uint32_t wire_get_key(const uint8_t *keys, uint32_t i);
void wire_put_key(uint8_t *keys, uint32_t i, uint32_t key);

const char *wire_type_name(uint32_t type);

/* The messages in declaration order, for tests and tools: false past the
 * end. */
struct wire_message_info {
	uint16_t type;
	const char *name;
	uint8_t senders; /* enum wire_sender bits */
	uint32_t fixed, min_body, max_body;
};
bool wire_message_info(size_t index, struct wire_message_info *info);

/* Whether a peer that speaks wire protocol major is refused: another major
 * version. text then says why and what to do, naming the peer ("the
 * viewer", "the remote rcomp-run") and this program ("rcomp-run"). */
bool wire_version_refused(uint32_t major, const char *peer, const char *program, char *text,
	size_t size);

#endif
