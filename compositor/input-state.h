/*
 * What the seat keeps of the viewer's input (input.h): types only, for
 * server.h.
 */
#ifndef RCOMP_INPUT_STATE_H
#define RCOMP_INPUT_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

struct wlr_input_device;
struct wlr_pointer_gestures_v1;
struct wlr_surface;
struct xkb_context;
struct xkb_keymap;

/* A finger down, on the surface it touched first. */
struct rc_touch_point {
	bool used;
	int32_t id;
	uint32_t window;
	double dx, dy; /* window coordinates minus surface-local ones */
};

/* Characters typed as characters (keychar.c): the keymap the viewer gave,
 * the characters put on its spare keys, the character keys held, and the
 * viewer's modifiers while a held character's are set. */
#define RC_SPARE_CHARS 16
#define RC_CHARS_HELD 32

struct rc_keychar {
	struct xkb_keymap *base; /* the viewer's keymap, without spare characters */
	struct rc_spare_char {
		uint32_t keycode; /* xkb's: a key of base that types nothing */
		uint32_t codepoint; /* 0: free */
		uint64_t used; /* when it was last typed, in uses */
	} spare[RC_SPARE_CHARS];
	uint32_t nspare;
	uint64_t uses;
	struct rc_char_held {
		uint32_t key, codepoint; /* as the viewer named it */
		uint32_t keycode; /* evdev's, pressed for it */
	} held[RC_CHARS_HELD];
	uint32_t nheld;
	bool mods_set; /* a held character's modifiers are the seat's now */
	uint32_t mods_keycode; /* evdev's, of the character that set them */
	uint32_t restore[4]; /* the viewer's: depressed, latched, locked, group */
};

/* The seat's input from the viewer (input.c). */
#define RC_PRESSES 8

struct rc_input {
	struct wlr_input_device *keyboard;
	struct xkb_context *xkb;
	uint32_t buttons_down;
	struct wlr_surface *grab_surface; /* implicit grab while buttons are held */
	double grab_dx, grab_dy; /* window coords minus surface-local coords */
	uint32_t pointer_window;
	struct rc_touch_point touch[WIRE_MAX_TOUCH_POINTS];
	uint32_t keys_down[WIRE_MAX_KEYS];
	uint32_t nkeys_down;
	/* The newest presses (buttons, touches): the seat's serial of each,
	 * which an app's move or resize names, and the viewer's input_mark for
	 * it (0 until it comes), which names the local press. A ring. */
	struct rc_press {
		uint32_t serial, mark;
		bool touch;
	} presses[RC_PRESSES];
	uint32_t npresses;
	struct rc_keychar chars;
	/* A touchpad's gestures (zwp_pointer_gestures_v1), and the kind of
	 * the one under way (0: none): a begin ends one left open, and an
	 * update or end of another kind is dropped. */
	struct wlr_pointer_gestures_v1 *gestures;
	uint32_t gesture;
};

#endif
