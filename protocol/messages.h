/*
 * Every wire message, declared once. wire.h turns this table into the
 * message structs and wire.c into the encoder, the validating decoder, the
 * size limits and the names; PROTOCOL.md describes the same rows, and
 * tests/test-wire.c checks that the two agree. Include only from wire.h.
 *
 * WIRE_MESSAGES lists X(NAME, name, code, sender, fixed, carrier, check):
 * the enum name, the struct and field-list name, the type code, who may send
 * it (VIEWER, SERVER or BOTH), the size of its fixed part in bytes, which the
 * code checks against the fields at compile time, the record classes that
 * carry it and its check across fields:
 *   carrier  CONTROL  sent and carried on the control class alone
 *            WINDOW   sent on control; carried there or, to stay in order
 *                     with a window's frames, on the focus or frames class
 *            FRAMES   sent on the frames class; carried on focus or frames
 *            BULK, LINK, AUDIO   sent and carried on that class alone
 *            (channel.c's class_of and class_carries, and the page's, come
 *            from this column: a message on a class that may not carry it
 *            is a protocol error)
 *   check    none, or the name of the check that spans its fields (a
 *            rectangle inside its frame): wire.c's check_NAME, and the
 *            page's CHECKS.NAME in web/wire.js for what a server sends
 *
 * WIRE_<NAME>_FIELDS lists the body in wire order:
 *   FIELD(type, name)             any value
 *   RANGE(type, name, min, max)   min <= value <= max, else a protocol error
 *   BITS(type, name, mask)        no bit outside mask may be set
 *   COUNT(type, name, min, max, array, ctype, size)
 *                                 a count (min to max) on the wire here; its
 *                                 array, count x size bytes, follows the fixed
 *                                 part (in the order the counts come)
 *   REST(array, ctype, len, min, max)
 *                                 the rest of the body, min to max bytes,
 *                                 after any counted arrays
 *   NONE                          an empty body
 * type is u8, u16, u32, i32 or u64, little-endian on the wire.
 */
#ifndef RCOMP_MESSAGES_H
#define RCOMP_MESSAGES_H

#define WIRE_MESSAGES(X) \
	/* viewer to server */ \
	X(HELLO, hello, 0x0101, VIEWER, 20, CONTROL, hello) \
	X(KEYMAP, keymap, 0x0102, VIEWER, 4, CONTROL, none) \
	X(REPEAT_INFO, repeat_info, 0x0103, VIEWER, 8, CONTROL, none) \
	X(CONFIGURE, configure, 0x0104, VIEWER, 16, CONTROL, none) \
	X(CLOSE, close, 0x0105, VIEWER, 4, CONTROL, none) \
	X(POINTER_MOTION, pointer_motion, 0x0106, VIEWER, 12, CONTROL, none) \
	X(POINTER_LEAVE, pointer_leave, 0x0107, VIEWER, 4, CONTROL, none) \
	X(POINTER_BUTTON, pointer_button, 0x0108, VIEWER, 8, CONTROL, none) \
	X(POINTER_AXIS, pointer_axis, 0x0109, VIEWER, 16, CONTROL, none) \
	X(POINTER_FRAME, pointer_frame, 0x010a, VIEWER, 0, CONTROL, none) \
	X(KEYBOARD_ENTER, keyboard_enter, 0x010b, VIEWER, 8, CONTROL, keys) \
	X(KEYBOARD_LEAVE, keyboard_leave, 0x010c, VIEWER, 4, CONTROL, none) \
	X(KEY, key, 0x010d, VIEWER, 8, CONTROL, none) \
	X(MODIFIERS, modifiers, 0x010e, VIEWER, 16, CONTROL, none) \
	X(FRAME_ACK, frame_ack, 0x010f, VIEWER, 16, CONTROL, none) \
	X(OUTPUT_INFO, output_info, 0x0110, VIEWER, 12, CONTROL, none) \
	X(POPUP_DONE, popup_done, 0x0111, VIEWER, 4, CONTROL, none) \
	X(DECORATION_MODE, decoration_mode, 0x0112, VIEWER, 8, CONTROL, none) \
	X(TOUCH_DOWN, touch_down, 0x0113, VIEWER, 16, CONTROL, none) \
	X(TOUCH_UP, touch_up, 0x0114, VIEWER, 4, CONTROL, none) \
	X(TOUCH_MOTION, touch_motion, 0x0115, VIEWER, 12, CONTROL, none) \
	X(TOUCH_FRAME, touch_frame, 0x0116, VIEWER, 0, CONTROL, none) \
	X(TOUCH_CANCEL, touch_cancel, 0x0117, VIEWER, 0, CONTROL, none) \
	X(INPUT_MARK, input_mark, 0x0118, VIEWER, 8, CONTROL, none) \
	X(RELATIVE_MOTION, relative_motion, 0x0119, VIEWER, 24, CONTROL, none) \
	X(POINTER_CONSTRAINT_STATE, pointer_constraint_state, 0x011a, VIEWER, 8, CONTROL, none) \
	X(SHORTCUTS_INHIBIT_STATE, shortcuts_inhibit_state, 0x011b, VIEWER, 8, CONTROL, none) \
	X(TEXT_INPUT_EVENT, text_input_event, 0x011c, VIEWER, 28, CONTROL, preedit) \
	X(DND_ENTER, dnd_enter, 0x011d, VIEWER, 20, CONTROL, mime_types) \
	X(DND_MOTION, dnd_motion, 0x011e, VIEWER, 8, CONTROL, none) \
	X(DND_LEAVE, dnd_leave, 0x011f, VIEWER, 0, CONTROL, none) \
	X(DND_DROP, dnd_drop, 0x0120, VIEWER, 0, CONTROL, none) \
	X(DND_ACTION, dnd_action, 0x0121, VIEWER, 4, CONTROL, one_action) \
	X(DRAG_LOCAL, drag_local, 0x0122, VIEWER, 8, CONTROL, one_action) \
	X(STATS_WANTED, stats_wanted, 0x0123, VIEWER, 4, CONTROL, none) \
	X(KEY_CHAR, key_char, 0x0124, VIEWER, 12, CONTROL, none) \
	X(SEND_FILES, send_files, 0x0125, VIEWER, 8, CONTROL, none) \
	X(NOTIFY_REPLY, notify_reply, 0x0126, VIEWER, 12, CONTROL, none) \
	X(DRAG_FILES, drag_files, 0x0127, VIEWER, 4, CONTROL, none) \
	X(GESTURE, gesture, 0x0128, VIEWER, 32, CONTROL, none) \
	X(OUTPUT_PLACE, output_place, 0x0129, VIEWER, 28, CONTROL, none) \
	X(TABLET, tablet, 0x012a, VIEWER, 72, CONTROL, none) \
	X(FRAME_PRESENTED, frame_presented, 0x012b, VIEWER, 24, CONTROL, none) \
	X(TABLET_PAD, tablet_pad, 0x012c, VIEWER, 40, CONTROL, none) \
	/* server to viewer */ \
	X(WELCOME, welcome, 0x0201, SERVER, 28, CONTROL, welcome) \
	X(GOODBYE, goodbye, 0x0202, SERVER, 8, CONTROL, none) \
	X(WINDOW_NEW, window_new, 0x0203, SERVER, 20, WINDOW, none) \
	X(WINDOW_TITLE, window_title, 0x0204, SERVER, 4, WINDOW, none) \
	X(WINDOW_APP_ID, window_app_id, 0x0205, SERVER, 4, WINDOW, none) \
	X(WINDOW_DESTROY, window_destroy, 0x0206, SERVER, 4, WINDOW, none) \
	X(FRAME, frame, 0x0207, SERVER, 36, FRAMES, frame) \
	X(SYNC, sync, 0x0208, SERVER, 0, CONTROL, none) \
	X(POPUP_NEW, popup_new, 0x0209, SERVER, 56, WINDOW, popup_parent) \
	X(WINDOW_PARENT, window_parent, 0x020a, SERVER, 8, WINDOW, window_parent) \
	X(CURSOR, cursor, 0x020b, SERVER, 20, CONTROL, pixels) \
	X(WINDOW_SCALE, window_scale, 0x020c, SERVER, 8, WINDOW, none) \
	X(WINDOW_REQUEST, window_request, 0x020d, SERVER, 8, WINDOW, none) \
	X(WINDOW_HINTS, window_hints, 0x020e, SERVER, 20, WINDOW, none) \
	X(WINDOW_DECORATION, window_decoration, 0x020f, SERVER, 8, WINDOW, none) \
	X(COPY_RECT, copy_rect, 0x0210, SERVER, 28, FRAMES, copy_rect) \
	X(FRAME_MARK, frame_mark, 0x0211, SERVER, 8, FRAMES, none) \
	X(POINTER_CONSTRAINT, pointer_constraint, 0x0212, SERVER, 24, CONTROL, none) \
	X(SHORTCUTS_INHIBIT, shortcuts_inhibit, 0x0213, SERVER, 8, CONTROL, none) \
	X(WINDOW_GRAB, window_grab, 0x0214, SERVER, 24, CONTROL, grab_edges) \
	X(HOST_NAME, host_name, 0x0215, SERVER, 0, CONTROL, none) \
	X(TEXT_INPUT, text_input, 0x0216, SERVER, 44, CONTROL, text_input) \
	X(DND_STATUS, dnd_status, 0x0217, SERVER, 8, CONTROL, one_action) \
	X(DND_FINISH, dnd_finish, 0x0218, SERVER, 0, CONTROL, none) \
	X(DRAG_START, drag_start, 0x0219, SERVER, 16, CONTROL, mime_types) \
	X(DRAG_END, drag_end, 0x021a, SERVER, 0, CONTROL, none) \
	X(DRAG_ICON, drag_icon, 0x021b, SERVER, 20, CONTROL, pixels) \
	X(WINDOW_STATS, window_stats, 0x021c, SERVER, 24, CONTROL, none) \
	X(UDP_OFFER, udp_offer, 0x021d, SERVER, 8, CONTROL, none) \
	X(SESSION_VIEWERS, session_viewers, 0x021e, SERVER, 8, CONTROL, none) \
	X(VIDEO_STATS, video_stats, 0x021f, SERVER, 16, CONTROL, none) \
	X(WATCH_TOKEN, watch_token, 0x0220, SERVER, 0, CONTROL, none) \
	X(NOTIFY, notify, 0x0221, SERVER, 20, CONTROL, none) \
	X(NOTIFY_CLOSE, notify_close, 0x0222, SERVER, 8, CONTROL, none) \
	X(DRAG_NO_FILES, drag_no_files, 0x0223, SERVER, 4, CONTROL, none) \
	X(WINDOW_IDLE_INHIBIT, window_idle_inhibit, 0x0224, SERVER, 8, WINDOW, none) \
	X(WINDOW_ACTIVATE, window_activate, 0x0225, SERVER, 4, WINDOW, none) \
	X(WINDOW_FEEDBACK, window_feedback, 0x0226, SERVER, 8, WINDOW, none) \
	/* either way: clipboard and primary selection */ \
	X(SELECTION, selection, 0x0301, BOTH, 8, CONTROL, mime_types) \
	X(TRANSFER_REQUEST, transfer_request, 0x0302, BOTH, 12, CONTROL, none) \
	X(TRANSFER_DATA, transfer_data, 0x0303, BOTH, 8, BULK, none) \
	X(TRANSFER_ACK, transfer_ack, 0x0304, BOTH, 12, CONTROL, none) \
	X(FILE_GROUP, file_group, 0x0305, BOTH, 36, CONTROL, none) \
	X(FILE_OFFER, file_offer, 0x0306, BOTH, 24, CONTROL, none) \
	X(FILE_DATA, file_data, 0x0307, BOTH, 16, BULK, none) \
	X(FILE_ACK, file_ack, 0x0308, BOTH, 20, CONTROL, none) \
	X(FILE_DONE, file_done, 0x0309, BOTH, 12, CONTROL, none) \
	/* either way: the link */ \
	X(LINK_ACK, link_ack, 0x0401, BOTH, 8, LINK, none) \
	/* either way: sound (the app's out, the microphone in) */ \
	X(AUDIO, audio, 0x0501, BOTH, 16, AUDIO, none) \
	X(AUDIO_END, audio_end, 0x0502, BOTH, 4, AUDIO, none)

/* Pointer and touch positions: 24.8 fixed point, window coordinates. */
#define WIRE_MIN_POSITION (-WIRE_MAX_DIM * 256)
#define WIRE_MAX_POSITION (2 * WIRE_MAX_DIM * 256)

#define WIRE_HELLO_FIELDS \
	FIELD(u32, magic) /* WIRE_MAGIC; else the peer does not speak rcomp */ \
	FIELD(u16, major) \
	FIELD(u16, minor) \
	FIELD(u32, caps) /* enum wire_caps */ \
	BITS(u32, flags, WIRE_HELLO_ALL) \
	COUNT(u32, token_len, 0, WIRE_MAX_TOKEN, token, char, 1)
#define WIRE_KEYMAP_FIELDS \
	RANGE(u32, format, 1, 2) /* 1 xkb text v1; 2 names: input.c */ \
	REST(data, char, size, 1, WIRE_MAX_KEYMAP)
#define WIRE_REPEAT_INFO_FIELDS \
	RANGE(i32, rate, 0, 1000) \
	RANGE(i32, delay, 0, 60000)
#define WIRE_CONFIGURE_FIELDS \
	FIELD(u32, window) \
	RANGE(i32, width, 0, WIRE_MAX_DIM) \
	RANGE(i32, height, 0, WIRE_MAX_DIM) \
	BITS(u32, states, WIRE_STATES_ALL)
#define WIRE_CLOSE_FIELDS FIELD(u32, window)
#define WIRE_POINTER_MOTION_FIELDS \
	FIELD(u32, window) \
	RANGE(i32, x, WIRE_MIN_POSITION, WIRE_MAX_POSITION) \
	RANGE(i32, y, WIRE_MIN_POSITION, WIRE_MAX_POSITION)
#define WIRE_POINTER_LEAVE_FIELDS FIELD(u32, window)
#define WIRE_POINTER_BUTTON_FIELDS \
	RANGE(u32, button, 0, 0xffff) \
	RANGE(u32, state, 0, 1)
#define WIRE_POINTER_AXIS_FIELDS \
	RANGE(u32, axis, 0, 1) \
	FIELD(i32, value) \
	FIELD(i32, discrete) \
	RANGE(u32, source, 0, 3)
#define WIRE_POINTER_FRAME_FIELDS NONE
#define WIRE_GESTURE_FIELDS \
	RANGE(u32, kind, WIRE_GESTURE_SWIPE, WIRE_GESTURE_HOLD) \
	RANGE(u32, phase, WIRE_GESTURE_BEGIN, WIRE_GESTURE_END) \
	RANGE(u32, fingers, 0, WIRE_MAX_FINGERS) /* begin */ \
	RANGE(u32, cancelled, 0, 1) /* end */ \
	FIELD(i32, dx) /* 24.8, update: since the last */ \
	FIELD(i32, dy) \
	RANGE(i32, scale, 0, 0x7fffffff) /* 16.16, a pinch's update: since its begin */ \
	FIELD(i32, rotation) /* 24.8 degrees clockwise, a pinch's update: since the last */
#define WIRE_TABLET_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, tool_type, WIRE_TABLET_PEN, WIRE_TABLET_LENS) \
	BITS(u32, capabilities, WIRE_TABLET_CAPABILITIES) \
	FIELD(u64, serial) /* the tool's hardware serial; 0: unknown */ \
	BITS(u32, changed, WIRE_TABLET_CHANGES) \
	RANGE(i32, x, WIRE_MIN_POSITION, WIRE_MAX_POSITION) /* 24.8, in the window */ \
	RANGE(i32, y, WIRE_MIN_POSITION, WIRE_MAX_POSITION) \
	RANGE(u32, pressure, 0, 65535) \
	RANGE(u32, distance, 0, 65535) \
	RANGE(i32, tilt_x, -90 * 256, 90 * 256) /* 24.8 degrees */ \
	RANGE(i32, tilt_y, -90 * 256, 90 * 256) \
	RANGE(i32, rotation, 0, 360 * 256) /* 24.8 degrees */ \
	RANGE(i32, slider, -65535, 65535) \
	FIELD(i32, wheel) /* 24.8 degrees */ \
	FIELD(i32, wheel_clicks) \
	RANGE(u32, button, 0, 0x2ff) /* evdev's */ \
	RANGE(u32, button_state, 0, 1)
#define WIRE_TABLET_PAD_FIELDS \
	FIELD(u32, window) /* where the pad's focus is; 0: none */ \
	RANGE(u32, event, WIRE_PAD_ENTER, WIRE_PAD_MODE) \
	RANGE(u32, number, 0, WIRE_MAX_PAD_BUTTONS - 1) /* a button, ring or strip; a group */ \
	RANGE(i32, value, -1, 360 * 256) \
	RANGE(u32, finger, 0, 1) /* a ring's or strip's: touched by a finger */ \
	RANGE(u32, buttons, 0, WIRE_MAX_PAD_BUTTONS) /* enter: the pad's shape */ \
	RANGE(u32, rings, 0, WIRE_MAX_PAD_RINGS) \
	RANGE(u32, strips, 0, WIRE_MAX_PAD_STRIPS) \
	RANGE(u32, groups, 0, WIRE_MAX_PAD_GROUPS) \
	RANGE(u32, modes, 0, WIRE_MAX_PAD_MODES) /* each group's */
#define WIRE_KEYBOARD_ENTER_FIELDS \
	FIELD(u32, window) \
	COUNT(u32, nkeys, 0, WIRE_MAX_KEYS, keys, uint8_t, 4) /* wire_get_key() */
#define WIRE_KEYBOARD_LEAVE_FIELDS FIELD(u32, window)
#define WIRE_KEY_FIELDS \
	RANGE(u32, key, 0, 0xffff) \
	RANGE(u32, state, 0, 1)
#define WIRE_KEY_CHAR_FIELDS \
	RANGE(u32, key, 0, 0xffff) /* where it was typed; 0: not said */ \
	RANGE(u32, codepoint, 0x20, 0x10ffff) /* what it typed */ \
	RANGE(u32, state, 0, 1)
#define WIRE_NOTIFY_REPLY_FIELDS \
	FIELD(u32, id) \
	RANGE(u32, event, WIRE_NOTE_ACTION, WIRE_NOTE_CLOSED) \
	RANGE(u32, reason, 0, 4) /* closed: as NotificationClosed's */ \
	REST(action, char, action_len, 0, WIRE_MAX_NOTE_NAME) /* invoked: its key */
#define WIRE_DRAG_FILES_FIELDS FIELD(u32, serial) /* the viewer's, named again in the answer */
#define WIRE_DRAG_NO_FILES_FIELDS FIELD(u32, serial)
#define WIRE_SEND_FILES_FIELDS \
	FIELD(u32, to) /* a viewer's number; 0: every viewer that takes files */ \
	RANGE(u32, kind, WIRE_FILES_SEND, WIRE_FILES_PRINT) /* print: one PDF, to one viewer */ \
	REST(paths, char, paths_len, 2, WIRE_MAX_SEND_PATHS) /* absolute, each ended by a NUL */
#define WIRE_MODIFIERS_FIELDS \
	FIELD(u32, depressed) \
	FIELD(u32, latched) \
	FIELD(u32, locked) \
	FIELD(u32, group)
#define WIRE_FRAME_ACK_FIELDS \
	FIELD(u32, window) \
	FIELD(u32, seq) \
	FIELD(u64, recv_time_us)
#define WIRE_FRAME_PRESENTED_FIELDS \
	FIELD(u32, window) \
	FIELD(u32, seq) \
	FIELD(u64, time_us) /* the viewer's monotonic clock; 0: never shown */ \
	FIELD(u32, refresh_ns) /* its output's; 0: unknown */ \
	BITS(u32, flags, WIRE_PRESENTED_VSYNC | WIRE_PRESENTED_ESTIMATE)
#define WIRE_OUTPUT_INFO_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, refresh_mhz, 0, WIRE_MAX_REFRESH_MHZ) \
	RANGE(i32, scale, 1, WIRE_MAX_SCALE)
#define WIRE_OUTPUT_PLACE_FIELDS \
	FIELD(u32, window) \
	RANGE(i32, x, WIRE_MIN_POSITION, WIRE_MAX_POSITION) /* logical */ \
	RANGE(i32, y, WIRE_MIN_POSITION, WIRE_MAX_POSITION) \
	RANGE(i32, width, 1, WIRE_MAX_DIM) \
	RANGE(i32, height, 1, WIRE_MAX_DIM) \
	RANGE(i32, scale, 1, WIRE_MAX_SCALE) /* wl_output's */ \
	COUNT(u32, name_len, 1, WIRE_MAX_OUTPUT_NAME, name, char, 1) \
	REST(description, char, description_len, 0, WIRE_MAX_OUTPUT_DESCRIPTION)
#define WIRE_POPUP_DONE_FIELDS FIELD(u32, window)
#define WIRE_DECORATION_MODE_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, mode, WIRE_DECORATION_CLIENT_SIDE, WIRE_DECORATION_SERVER_SIDE)
#define WIRE_TOUCH_DOWN_FIELDS \
	FIELD(u32, window) \
	FIELD(i32, id) \
	RANGE(i32, x, WIRE_MIN_POSITION, WIRE_MAX_POSITION) \
	RANGE(i32, y, WIRE_MIN_POSITION, WIRE_MAX_POSITION)
#define WIRE_TOUCH_UP_FIELDS FIELD(i32, id)
#define WIRE_TOUCH_MOTION_FIELDS \
	FIELD(i32, id) \
	RANGE(i32, x, WIRE_MIN_POSITION, WIRE_MAX_POSITION) \
	RANGE(i32, y, WIRE_MIN_POSITION, WIRE_MAX_POSITION)
#define WIRE_TOUCH_FRAME_FIELDS NONE
#define WIRE_TOUCH_CANCEL_FIELDS NONE

#define WIRE_WELCOME_FIELDS \
	FIELD(u32, magic) \
	FIELD(u16, major) \
	FIELD(u16, minor) \
	FIELD(u32, caps) \
	RANGE(u32, compression, 0, WIRE_COMPRESS_ZSTD) /* what frames use */ \
	FIELD(u64, session_id) \
	COUNT(u32, name_len, 1, SESSION_NAME_MAX, name, char, 1)
#define WIRE_GOODBYE_FIELDS \
	FIELD(i32, status) \
	RANGE(u32, reason, 0, WIRE_BYE_NO_SESSION) \
	REST(text, char, text_len, 0, WIRE_MAX_TEXT)
#define WIRE_WINDOW_NEW_FIELDS \
	RANGE(u32, window, 1, UINT32_MAX) \
	FIELD(u32, parent) \
	RANGE(i32, width, 0, WIRE_MAX_DIM) \
	RANGE(i32, height, 0, WIRE_MAX_DIM) \
	COUNT(u16, title_len, 0, WIRE_MAX_TITLE, title, char, 1) \
	COUNT(u16, app_id_len, 0, WIRE_MAX_APP_ID, app_id, char, 1)
#define WIRE_WINDOW_TITLE_FIELDS \
	FIELD(u32, window) \
	REST(text, char, len, 0, WIRE_MAX_TITLE)
#define WIRE_WINDOW_APP_ID_FIELDS \
	FIELD(u32, window) \
	REST(text, char, len, 0, WIRE_MAX_APP_ID)
#define WIRE_WINDOW_DESTROY_FIELDS FIELD(u32, window)
#define WIRE_FRAME_FIELDS \
	FIELD(u32, window) \
	FIELD(u32, seq) \
	RANGE(i32, width, 1, WIRE_MAX_DIM) \
	RANGE(i32, height, 1, WIRE_MAX_DIM) \
	RANGE(u8, codec, 0, WIRE_CODEC_H264) \
	RANGE(u8, compression, 0, WIRE_COMPRESS_ZSTD) \
	BITS(u16, flags, WIRE_FRAME_RESET | WIRE_FRAME_REPLACE) \
	FIELD(u64, time_us) /* the sender's clock when the app drew it */ \
	COUNT(u32, nrects, 0, WIRE_MAX_RECTS, rects, uint8_t, \
		WIRE_RECT_SIZE) /* wire_get_rect() */ \
	RANGE(u32, raw_size, 0, WIRE_MAX_RAW) \
	REST(payload, uint8_t, payload_size, 0, WIRE_MAX_PAYLOAD)
#define WIRE_SYNC_FIELDS NONE
#define WIRE_POPUP_NEW_FIELDS \
	RANGE(u32, window, 1, UINT32_MAX) \
	RANGE(u32, parent, 1, UINT32_MAX) \
	RANGE(i32, anchor_x, -WIRE_MAX_DIM, WIRE_MAX_DIM) \
	RANGE(i32, anchor_y, -WIRE_MAX_DIM, WIRE_MAX_DIM) \
	RANGE(i32, anchor_width, 0, WIRE_MAX_DIM) \
	RANGE(i32, anchor_height, 0, WIRE_MAX_DIM) \
	RANGE(i32, width, 1, WIRE_MAX_DIM) \
	RANGE(i32, height, 1, WIRE_MAX_DIM) \
	RANGE(u32, anchor, 0, 8) /* xdg_positioner.anchor */ \
	RANGE(u32, gravity, 0, 8) \
	BITS(u32, constraint_adjustment, 63) \
	RANGE(i32, offset_x, -WIRE_MAX_DIM, WIRE_MAX_DIM) \
	RANGE(i32, offset_y, -WIRE_MAX_DIM, WIRE_MAX_DIM) \
	BITS(u32, flags, WIRE_POPUP_GRAB)
#define WIRE_WINDOW_PARENT_FIELDS \
	RANGE(u32, window, 1, UINT32_MAX) \
	FIELD(u32, parent) /* 0: none */
#define WIRE_CURSOR_FIELDS \
	RANGE(i32, hotspot_x, -WIRE_MAX_CURSOR *WIRE_MAX_SCALE, WIRE_MAX_CURSOR *WIRE_MAX_SCALE) \
	RANGE(i32, hotspot_y, -WIRE_MAX_CURSOR *WIRE_MAX_SCALE, WIRE_MAX_CURSOR *WIRE_MAX_SCALE) \
	RANGE(i32, width, 0, WIRE_MAX_CURSOR) /* 0x0: hidden */ \
	RANGE(i32, height, 0, WIRE_MAX_CURSOR) \
	RANGE(i32, scale, 1, WIRE_MAX_SCALE) \
	REST(pixels, uint8_t, pixels_len, 0, WIRE_MAX_CURSOR *WIRE_MAX_CURSOR * 4)
#define WIRE_WINDOW_SCALE_FIELDS \
	FIELD(u32, window) \
	RANGE(i32, scale, 1, WIRE_MAX_SCALE)
#define WIRE_WINDOW_REQUEST_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, request, WIRE_REQUEST_MAXIMIZE, WIRE_REQUEST_MINIMIZE)
#define WIRE_WINDOW_HINTS_FIELDS \
	FIELD(u32, window) \
	RANGE(i32, min_width, 0, WIRE_MAX_DIM) \
	RANGE(i32, min_height, 0, WIRE_MAX_DIM) \
	RANGE(i32, max_width, 0, WIRE_MAX_DIM) \
	RANGE(i32, max_height, 0, WIRE_MAX_DIM)
#define WIRE_WINDOW_DECORATION_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, mode, WIRE_DECORATION_CLIENT_SIDE, WIRE_DECORATION_SERVER_SIDE)
#define WIRE_COPY_RECT_FIELDS \
	FIELD(u32, window) \
	RANGE(i32, x, 0, WIRE_MAX_DIM - 1) \
	RANGE(i32, y, 0, WIRE_MAX_DIM - 1) \
	RANGE(i32, width, 1, WIRE_MAX_DIM) \
	RANGE(i32, height, 1, WIRE_MAX_DIM) \
	RANGE(i32, dx, -WIRE_MAX_DIM, WIRE_MAX_DIM) \
	RANGE(i32, dy, -WIRE_MAX_DIM, WIRE_MAX_DIM)

#define WIRE_SELECTION_FIELDS \
	RANGE(u32, kind, 0, WIRE_SELECTION_PRIMARY) \
	RANGE(u32, count, 0, WIRE_MAX_MIME_TYPES) /* 0: the selection is cleared */ \
	REST(types, uint8_t, types_len, 0, WIRE_MAX_MIME_TYPES *(2 + WIRE_MAX_MIME))
#define WIRE_TRANSFER_REQUEST_FIELDS \
	FIELD(u32, id) /* chosen by the requester */ \
	RANGE(u32, kind, 0, WIRE_SELECTION_DND) \
	COUNT(u32, mime_len, 1, WIRE_MAX_MIME, mime, char, 1)
#define WIRE_TRANSFER_DATA_FIELDS \
	FIELD(u32, id) \
	BITS(u32, flags, WIRE_TRANSFER_END | WIRE_TRANSFER_FAILED) \
	REST(data, uint8_t, len, 0, WIRE_MAX_TRANSFER_CHUNK)
#define WIRE_TRANSFER_ACK_FIELDS \
	FIELD(u32, id) \
	RANGE(u32, bytes, 0, WIRE_MAX_TRANSFER_CHUNK * 64) /* written since the last ack */ \
	BITS(u32, flags, WIRE_TRANSFER_CANCEL)

#define WIRE_FILE_GROUP_FIELDS \
	RANGE(u32, group, 1, UINT32_MAX) /* the sender's id */ \
	RANGE(u32, kind, WIRE_FILES_DROP, WIRE_FILES_DRAG) \
	FIELD(u32, window) /* a drop's window; else 0 */ \
	/* a drop's place, 24.8; a drag's: x is its drag_files serial */ \
	RANGE(i32, x, WIRE_MIN_POSITION, WIRE_MAX_POSITION) \
	RANGE(i32, y, WIRE_MIN_POSITION, WIRE_MAX_POSITION) \
	RANGE(u32, files, 1, WIRE_MAX_FILES) \
	FIELD(u64, bytes) /* of all its files */ \
	BITS(u32, flags, 0)
#define WIRE_FILE_OFFER_FIELDS \
	FIELD(u32, group) \
	FIELD(u32, file) /* 0 to files - 1, in order */ \
	FIELD(u64, size) \
	BITS(u32, mode, 0777) \
	COUNT(u32, sha256_len, 32, 32, sha256, uint8_t, 1) \
	REST(path, char, path_len, 1, WIRE_MAX_FILE_PATH) /* relative: name or folder/name */
#define WIRE_FILE_DATA_FIELDS \
	FIELD(u32, group) \
	FIELD(u32, file) \
	FIELD(u64, offset) \
	REST(data, uint8_t, len, 1, WIRE_MAX_TRANSFER_CHUNK)
#define WIRE_FILE_ACK_FIELDS \
	FIELD(u32, group) \
	FIELD(u32, file) \
	FIELD(u64, received) /* of that file, written in order */ \
	BITS(u32, flags, WIRE_FILES_FROM_HERE)
#define WIRE_FILE_DONE_FIELDS \
	FIELD(u32, group) \
	RANGE(u32, status, WIRE_FILES_WHOLE, WIRE_FILES_FAILED) \
	FIELD(u32, file) /* the file it failed at; else 0 */ \
	REST(text, char, text_len, 0, WIRE_MAX_TEXT) /* where they are, or why not */

#define WIRE_INPUT_MARK_FIELDS \
	FIELD(u32, window) \
	FIELD(u32, mark) /* the viewer's count of marked input */

#define WIRE_RELATIVE_MOTION_FIELDS \
	FIELD(u64, time_us) \
	FIELD(i32, dx) /* 24.8, accelerated */ \
	FIELD(i32, dy) \
	FIELD(i32, dx_unaccel) /* 24.8, as the device moved */ \
	FIELD(i32, dy_unaccel)

#define WIRE_POINTER_CONSTRAINT_STATE_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, active, 0, 1) /* the local compositor applies the constraint */

#define WIRE_POINTER_CONSTRAINT_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, type, 0, 2) /* enum wire_constraint */ \
	RANGE(i32, hint_x, WIRE_MIN_POSITION, WIRE_MAX_POSITION) /* 24.8 */ \
	RANGE(i32, hint_y, WIRE_MIN_POSITION, WIRE_MAX_POSITION) \
	BITS(u32, flags, WIRE_CONSTRAINT_HINT) \
	COUNT(u32, nrects, 0, WIRE_MAX_RECTS, rects, uint8_t, WIRE_RECT_SIZE)

#define WIRE_SHORTCUTS_INHIBIT_STATE_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, active, 0, 1) /* the local compositor inhibits its shortcuts */

#define WIRE_WINDOW_IDLE_INHIBIT_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, inhibit, 0, 1) /* the app keeps the screen awake (1), or no longer (0) */

#define WIRE_WINDOW_ACTIVATE_FIELDS FIELD(u32, window)

#define WIRE_WINDOW_FEEDBACK_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, on, 0, 1) /* its app asks when its frames are shown (1), or no longer (0) */

#define WIRE_SHORTCUTS_INHIBIT_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, inhibit, 0, 1) /* the app asks (1) or no longer asks (0) */

#define WIRE_WINDOW_GRAB_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, kind, WIRE_GRAB_MOVE, WIRE_GRAB_MENU) \
	FIELD(u32, mark) /* the input_mark of the press that asked for it */ \
	RANGE(u32, edges, 0, 10) /* resize: xdg_toplevel.resize_edge; wire.c */ \
	RANGE(i32, x, -WIRE_MAX_DIM, 2 * WIRE_MAX_DIM) /* menu: window coordinates */ \
	RANGE(i32, y, -WIRE_MAX_DIM, 2 * WIRE_MAX_DIM)

#define WIRE_TEXT_INPUT_FIELDS \
	FIELD(u32, window) \
	BITS(u32, flags, WIRE_TEXT_INPUT_ENABLED) \
	FIELD(u32, cursor) /* byte offsets in the text: wire.c */ \
	FIELD(u32, anchor) \
	RANGE(u32, change_cause, 0, 1) /* text-input-v3 change_cause */ \
	BITS(u32, content_hint, 0x3ff) /* text-input-v3 content_hint */ \
	RANGE(u32, content_purpose, 0, 13) /* text-input-v3 content_purpose */ \
	RANGE(i32, rect_x, -WIRE_MAX_DIM, 2 * WIRE_MAX_DIM) /* the caret, window coords */ \
	RANGE(i32, rect_y, -WIRE_MAX_DIM, 2 * WIRE_MAX_DIM) \
	RANGE(i32, rect_width, 0, WIRE_MAX_DIM) \
	RANGE(i32, rect_height, 0, WIRE_MAX_DIM) \
	REST(text, char, text_len, 0, WIRE_MAX_TEXT_INPUT) /* surrounding text */

#define WIRE_TEXT_INPUT_EVENT_FIELDS \
	FIELD(u32, window) \
	BITS(u32, flags, WIRE_TEXT_INPUT_PREEDIT) \
	RANGE(i32, preedit_cursor_begin, -1, WIRE_MAX_TEXT_INPUT) \
	RANGE(i32, preedit_cursor_end, -1, WIRE_MAX_TEXT_INPUT) \
	RANGE(u32, delete_before, 0, WIRE_MAX_TEXT_INPUT) \
	RANGE(u32, delete_after, 0, WIRE_MAX_TEXT_INPUT) \
	COUNT(u16, preedit_len, 0, WIRE_MAX_TEXT_INPUT, preedit, char, 1) \
	COUNT(u16, commit_len, 0, WIRE_MAX_TEXT_INPUT, commit, char, 1)

#define WIRE_DND_ENTER_FIELDS \
	FIELD(u32, window) \
	RANGE(i32, x, WIRE_MIN_POSITION, WIRE_MAX_POSITION) \
	RANGE(i32, y, WIRE_MIN_POSITION, WIRE_MAX_POSITION) \
	BITS(u32, source_actions, WIRE_DND_ALL) \
	RANGE(u32, count, 1, WIRE_MAX_MIME_TYPES) \
	REST(types, uint8_t, types_len, 3, WIRE_MAX_MIME_TYPES *(2 + WIRE_MAX_MIME))
#define WIRE_DND_MOTION_FIELDS \
	RANGE(i32, x, WIRE_MIN_POSITION, WIRE_MAX_POSITION) \
	RANGE(i32, y, WIRE_MIN_POSITION, WIRE_MAX_POSITION)
#define WIRE_DND_LEAVE_FIELDS NONE
#define WIRE_DND_DROP_FIELDS NONE
#define WIRE_DND_ACTION_FIELDS BITS(u32, action, WIRE_DND_ALL) /* one, or none */
#define WIRE_DND_STATUS_FIELDS \
	BITS(u32, actions, WIRE_DND_ALL) \
	BITS(u32, preferred, WIRE_DND_ALL) /* one, or none */ \
	REST(mime, char, mime_len, 0, WIRE_MAX_MIME) /* accepted; empty: none */
#define WIRE_DND_FINISH_FIELDS NONE

#define WIRE_DRAG_START_FIELDS \
	FIELD(u32, window) \
	FIELD(u32, mark) /* the input_mark of the press that started it */ \
	BITS(u32, source_actions, WIRE_DND_ALL) \
	RANGE(u32, count, 1, WIRE_MAX_MIME_TYPES) \
	REST(types, uint8_t, types_len, 3, WIRE_MAX_MIME_TYPES *(2 + WIRE_MAX_MIME))
#define WIRE_DRAG_END_FIELDS NONE
#define WIRE_DRAG_ICON_FIELDS \
	RANGE(i32, x, -WIRE_MAX_CURSOR *WIRE_MAX_SCALE, WIRE_MAX_CURSOR *WIRE_MAX_SCALE) \
	RANGE(i32, y, -WIRE_MAX_CURSOR *WIRE_MAX_SCALE, WIRE_MAX_CURSOR *WIRE_MAX_SCALE) \
	RANGE(i32, width, 0, WIRE_MAX_CURSOR) /* 0x0: none */ \
	RANGE(i32, height, 0, WIRE_MAX_CURSOR) \
	RANGE(i32, scale, 1, WIRE_MAX_SCALE) \
	REST(pixels, uint8_t, pixels_len, 0, WIRE_MAX_CURSOR *WIRE_MAX_CURSOR * 4)
#define WIRE_DRAG_LOCAL_FIELDS \
	RANGE(u32, state, WIRE_DRAG_DROPPED, WIRE_DRAG_CANCELLED) \
	BITS(u32, action, WIRE_DND_ALL) /* one, or none */

#define WIRE_HOST_NAME_FIELDS REST(text, char, len, 1, WIRE_MAX_HOST_NAME)
#define WIRE_WATCH_TOKEN_FIELDS REST(token, char, len, 16, WIRE_MAX_TOKEN)
#define WIRE_NOTIFY_FIELDS \
	RANGE(u32, id, 1, UINT32_MAX) /* the session's; a replacement keeps it */ \
	RANGE(i32, timeout_ms, -1, 86400000) /* -1: the desktop's own; 0: never */ \
	RANGE(u32, urgency, 0, 2) /* low, normal, critical */ \
	COUNT(u16, app_len, 0, WIRE_MAX_NOTE_NAME, app, char, 1) \
	COUNT(u16, summary_len, 0, WIRE_MAX_NOTE_NAME, summary, char, 1) \
	COUNT(u16, body_len, 0, WIRE_MAX_NOTE_BODY, body, char, 1) \
	COUNT(u16, icon_len, 0, WIRE_MAX_NOTE_NAME, icon, char, 1) \
	REST(actions, char, actions_len, 0, WIRE_MAX_NOTE_ACTIONS) /* key, label: each NUL-ended */
#define WIRE_NOTIFY_CLOSE_FIELDS \
	FIELD(u32, id) \
	/* as NotificationClosed: 1 expired, 2 dismissed, 3 closed, 4 other */ \
	RANGE(u32, reason, 1, 4)

#define WIRE_STATS_WANTED_FIELDS RANGE(u32, on, 0, 1)
#define WIRE_UDP_OFFER_FIELDS \
	RANGE(u32, port, 1, 65535) \
	COUNT(u32, key_len, 16, WIRE_MAX_TOKEN, key, char, 1) \
	REST(address, char, address_len, 0, WIRE_MAX_ADDRESS)
#define WIRE_SESSION_VIEWERS_FIELDS \
	RANGE(u32, count, 1, WIRE_MAX_VIEWERS) /* viewers of the session, this one included */ \
	BITS(u32, flags, WIRE_VIEWERS_INPUT | WIRE_VIEWERS_WATCHING)
#define WIRE_WINDOW_STATS_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, app_fps, 0, WIRE_MAX_FPS) /* the app's commits in the last second */ \
	RANGE(u32, sent_fps, 0, WIRE_MAX_FPS) /* frames sent of it */ \
	FIELD(u32, bytes) /* of them, in that second */ \
	FIELD(u32, rtt_us) /* the window's frame round trip */ \
	RANGE(u8, video, 0, 1) /* its frames are video now */ \
	RANGE(u8, compression, WIRE_COMPRESS_NONE, WIRE_COMPRESS_ZSTD) \
	RANGE(u8, motion, 0, 2) /* 1: video smaller, for the rate; 2: too slow for it */ \
	FIELD(u8, threads) /* encoding its video; 0: not video, or not said */

#define WIRE_VIDEO_STATS_FIELDS \
	FIELD(u32, window) \
	RANGE(u32, bitrate, 0, WIRE_MAX_BITRATE) /* bit/s its video is encoded at now */ \
	RANGE(u16, width, 0, WIRE_MAX_DIM) /* the picture encoded (smaller: scaled down) */ \
	RANGE(u16, height, 0, WIRE_MAX_DIM) \
	RANGE(u8, preset, 0, WIRE_PRESET_HARDWARE) /* libx264's, enum wire_preset */ \
	RANGE(u8, qp, 0, WIRE_MAX_QP) /* of its recent pictures; lower is sharper */ \
	RANGE(u16, reserved, 0, 0)

#define WIRE_FRAME_MARK_FIELDS \
	FIELD(u32, window) \
	FIELD(u32, mark) /* the input_mark the next frame of window answers */

#define WIRE_LINK_ACK_FIELDS FIELD(u64, received) /* record bytes read in all */

#define WIRE_AUDIO_FIELDS \
	FIELD(u64, time_us) /* the sender's clock at the packet's first sample */ \
	FIELD(u32, seq) \
	RANGE(u32, samples, WIRE_AUDIO_MIN_SAMPLES, WIRE_AUDIO_MAX_SAMPLES) \
	REST(data, uint8_t, size, 1, WIRE_MAX_AUDIO) /* one Opus packet */
#define WIRE_AUDIO_END_FIELDS FIELD(u32, seq) /* the last packet's */

#endif
