/*
 * Characters typed as characters (key_char): a viewer whose keymap may not
 * be the session's (a browser's layout, an on-screen keyboard, a scripted
 * key event) names the character a key typed, and the seat types that
 * character: on the key it came from where that key types it at some level,
 * else on the first key of the session's keymap that does, with the
 * modifiers and group that level needs; a character no key types goes onto a
 * spare key of the keymap (one that types nothing), which the apps get as a
 * new keymap, else to the app's text input where it has one (a text input's
 * commit is not in order with the keys around it, so it comes last).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wlr/interfaces/wlr_keyboard.h>
#include <wlr/types/wlr_input_device.h>
#include <wlr/types/wlr_keyboard.h>
#include <wlr/types/wlr_seat.h>
#include <xkbcommon/xkbcommon.h>

#include "keychar.h"
#include "log.h"
#include "monotonic.h"
#include "server.h"

/* The lowest and highest keycode of xkb's that every client can take (X11's
 * range, for Xwayland's apps). */
#define XKB_FIRST 8
#define XKB_LAST 255

static struct wlr_keyboard *keyboard_of(struct rc_server *server)
{
	return server->input.keyboard->keyboard;
}

static bool types_nothing(struct xkb_keymap *keymap, xkb_keycode_t kc)
{
	xkb_layout_index_t layouts = xkb_keymap_num_layouts_for_key(keymap, kc);
	for (xkb_layout_index_t l = 0; l < layouts; l++) {
		xkb_level_index_t levels = xkb_keymap_num_levels_for_key(keymap, kc, l);
		for (xkb_level_index_t v = 0; v < levels; v++) {
			const xkb_keysym_t *syms;
			if (xkb_keymap_key_get_syms_by_level(keymap, kc, l, v, &syms) > 0) {
				return false;
			}
		}
	}
	return true;
}

void keychar_set_keymap(struct rc_server *server, struct xkb_keymap *keymap)
{
	struct rc_keychar *kc = &server->input.chars;
	keychar_restore(server);
	if (keymap != kc->base) {
		xkb_keymap_unref(kc->base);
		kc->base = xkb_keymap_ref(keymap);
	}
	/* The spare keys, highest first: named keys that type nothing. */
	kc->nspare = 0;
	xkb_keycode_t last = xkb_keymap_max_keycode(keymap);
	xkb_keycode_t first = xkb_keymap_min_keycode(keymap);
	for (xkb_keycode_t k = last < XKB_LAST ? last : XKB_LAST;
		k >= first && k >= XKB_FIRST && kc->nspare < RC_SPARE_CHARS; k--) {
		if (xkb_keymap_key_get_name(keymap, k) && types_nothing(keymap, k)) {
			kc->spare[kc->nspare++] = (struct rc_spare_char){.keycode = k};
		}
	}
	wlr_keyboard_set_keymap(keyboard_of(server), keymap);
}

void keychar_finish(struct rc_server *server)
{
	xkb_keymap_unref(server->input.chars.base);
	server->input.chars.base = NULL;
}

void keychar_restore(struct rc_server *server)
{
	struct rc_keychar *kc = &server->input.chars;
	if (!kc->mods_set) {
		return;
	}
	kc->mods_set = false;
	struct wlr_keyboard *kbd = keyboard_of(server);
	wlr_keyboard_notify_modifiers(kbd, kc->restore[0], kc->restore[1], kc->restore[2],
		kc->restore[3]);
	wlr_seat_keyboard_notify_modifiers(server->seat, &kbd->modifiers);
}

static void notify_key(struct rc_server *server, uint32_t key, bool pressed)
{
	wlr_seat_keyboard_notify_key(server->seat, monotonic_msec(), key,
		pressed ? WL_KEYBOARD_KEY_STATE_PRESSED : WL_KEYBOARD_KEY_STATE_RELEASED);
}

void keychar_release_all(struct rc_server *server)
{
	struct rc_keychar *kc = &server->input.chars;
	for (uint32_t i = 0; i < kc->nheld; i++) {
		notify_key(server, kc->held[i].keycode, false);
	}
	kc->nheld = 0;
	kc->mods_set = false;
}

/* Where a character is: a key, its layout (group) and level. */
struct place {
	xkb_keycode_t keycode;
	xkb_layout_index_t layout;
	xkb_level_index_t level;
};

static bool level_types(struct xkb_keymap *keymap, const struct place *p, uint32_t codepoint,
	xkb_keysym_t sym)
{
	const xkb_keysym_t *syms;
	if (xkb_keymap_key_get_syms_by_level(keymap, p->keycode, p->layout, p->level, &syms) != 1) {
		return false;
	}
	return syms[0] == sym || xkb_keysym_to_utf32(syms[0]) == codepoint;
}

/* The character on one key, the group in use first. */
static bool on_key(struct xkb_keymap *keymap, xkb_keycode_t keycode, xkb_layout_index_t group,
	uint32_t codepoint, xkb_keysym_t sym, struct place *out)
{
	xkb_layout_index_t layouts = xkb_keymap_num_layouts_for_key(keymap, keycode);
	for (xkb_layout_index_t i = 0; i < layouts; i++) {
		xkb_layout_index_t l = (group + i) % layouts;
		xkb_level_index_t levels = xkb_keymap_num_levels_for_key(keymap, keycode, l);
		for (xkb_level_index_t v = 0; v < levels; v++) {
			*out = (struct place){keycode, l, v};
			if (level_types(keymap, out, codepoint, sym)) {
				return true;
			}
		}
	}
	return false;
}

/* The first key that types the character: the group in use before the
 * others, lower levels (fewer modifiers) before higher, and lower keycodes
 * (the main block before the keypad) first. */
static bool anywhere(struct xkb_keymap *keymap, xkb_layout_index_t group, uint32_t codepoint,
	xkb_keysym_t sym, struct place *out)
{
	xkb_layout_index_t layouts = xkb_keymap_num_layouts(keymap);
	xkb_keycode_t first = xkb_keymap_min_keycode(keymap);
	xkb_keycode_t last = xkb_keymap_max_keycode(keymap);
	if (first < XKB_FIRST) {
		first = XKB_FIRST;
	}
	if (last > XKB_LAST) {
		last = XKB_LAST;
	}
	for (xkb_layout_index_t i = 0; i < layouts; i++) {
		xkb_layout_index_t l = (group + i) % layouts;
		for (xkb_level_index_t v = 0; v < 8; v++) {
			for (xkb_keycode_t k = first; k <= last; k++) {
				if (l >= xkb_keymap_num_layouts_for_key(keymap, k) ||
					v >= xkb_keymap_num_levels_for_key(keymap, k, l)) {
					continue;
				}
				*out = (struct place){k, l, v};
				if (level_types(keymap, out, codepoint, sym)) {
					return true;
				}
			}
		}
	}
	return false;
}

/* The modifiers a level needs: of the masks that reach it, the one with
 * fewest modifiers. */
static xkb_mod_mask_t mods_for(struct xkb_keymap *keymap, const struct place *p)
{
	xkb_mod_mask_t masks[16];
	size_t n = xkb_keymap_key_get_mods_for_level(keymap, p->keycode, p->layout, p->level, masks,
		sizeof(masks) / sizeof(masks[0]));
	xkb_mod_mask_t best = 0;
	int fewest = 33;
	for (size_t i = 0; i < n; i++) {
		int bits = __builtin_popcount(masks[i]);
		if (bits < fewest) {
			fewest = bits;
			best = masks[i];
		}
	}
	return best;
}

/* The viewer's Ctrl, Alt and Super, which a character keeps: a character
 * typed with Ctrl held (a phone's latched Ctrl and its keyboard's c) is
 * Ctrl and that character's key, as on a desktop. */
static xkb_mod_mask_t shortcut_mods(struct xkb_keymap *keymap,
	const struct wlr_keyboard_modifiers *viewer)
{
	static const char *const names[] = {XKB_MOD_NAME_CTRL, XKB_MOD_NAME_ALT, XKB_MOD_NAME_LOGO};
	xkb_mod_mask_t keep = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		xkb_mod_index_t m = xkb_keymap_mod_get_index(keymap, names[i]);
		if (m != XKB_MOD_INVALID) {
			keep |= 1u << m;
		}
	}
	return (viewer->depressed | viewer->latched | viewer->locked) & keep;
}

/* The keymap the apps get: the viewer's, with each spare key typing its
 * character. NULL (logged) where it does not compile. */
static struct xkb_keymap *with_spares(struct rc_server *server)
{
	struct rc_keychar *kc = &server->input.chars;
	char *text = xkb_keymap_get_as_string(kc->base, XKB_KEYMAP_FORMAT_TEXT_V1);
	char *symbols = text ? strstr(text, "xkb_symbols") : NULL;
	char *open = symbols ? strchr(symbols, '{') : NULL;
	if (!open) {
		free(text);
		log_warning("the keymap has no symbols section to add a character to");
		return NULL;
	}
	size_t head = (size_t)(open + 1 - text);
	size_t cap = strlen(text) + RC_SPARE_CHARS * 128 + 1;
	char *out = malloc(cap);
	if (!out) {
		free(text);
		return NULL;
	}
	memcpy(out, text, head);
	size_t len = head;
	for (uint32_t i = 0; i < kc->nspare; i++) {
		const struct rc_spare_char *s = &kc->spare[i];
		if (!s->codepoint) {
			continue;
		}
		char sym[64];
		xkb_keysym_get_name(xkb_utf32_to_keysym(s->codepoint), sym, sizeof(sym));
		len += (size_t)snprintf(out + len, cap - len, "\n\tkey <%s> { [ %s ] };",
			xkb_keymap_key_get_name(kc->base, s->keycode), sym);
	}
	memcpy(out + len, open + 1, strlen(open + 1) + 1);
	free(text);
	struct xkb_keymap *keymap = xkb_keymap_new_from_string(server->input.xkb, out,
		XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS);
	free(out);
	if (!keymap) {
		log_warning("the keymap with the characters typed on spare keys does not compile");
	}
	return keymap;
}

/* Puts the character on a spare key (the least recently typed one's, when
 * all are taken) and gives the apps the keymap with it. */
static bool put_on_spare(struct rc_server *server, uint32_t codepoint, struct place *out)
{
	struct rc_keychar *kc = &server->input.chars;
	if (!kc->base || kc->nspare == 0) {
		return false;
	}
	struct rc_spare_char *pick = &kc->spare[0];
	for (uint32_t i = 0; i < kc->nspare; i++) {
		struct rc_spare_char *s = &kc->spare[i];
		if (!s->codepoint || s->used < pick->used) {
			pick = s;
			if (!s->codepoint) {
				break;
			}
		}
	}
	/* A key still held keeps its character. */
	for (uint32_t i = 0; i < kc->nheld; i++) {
		if (kc->held[i].keycode + 8 == pick->keycode) {
			return false;
		}
	}
	pick->codepoint = codepoint;
	pick->used = ++kc->uses;
	struct xkb_keymap *keymap = with_spares(server);
	if (!keymap) {
		pick->codepoint = 0;
		return false;
	}
	wlr_keyboard_set_keymap(keyboard_of(server), keymap);
	xkb_keymap_unref(keymap);
	*out = (struct place){pick->keycode, 0, 0};
	log_debug("the character U+%04X typed on the spare key <%s>", codepoint,
		xkb_keymap_key_get_name(kc->base, pick->keycode));
	return true;
}

static void note_spare_use(struct rc_keychar *kc, xkb_keycode_t keycode)
{
	for (uint32_t i = 0; i < kc->nspare; i++) {
		if (kc->spare[i].keycode == keycode && kc->spare[i].codepoint) {
			kc->spare[i].used = ++kc->uses;
		}
	}
}

const char *keychar_utf8(uint32_t cp, char out[5])
{
	int n;
	if (cp < 0x80) {
		out[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		out[0] = (char)(0xf0 | (cp >> 18));
		out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	out[n] = '\0';
	return out;
}

/* Presses the character's key with its level's modifiers, held until its
 * release (an app's repeat types the same character), the viewer's back at
 * its release or the next key. */
static void press_at(struct rc_server *server, const struct wire_key_char *msg,
	const struct place *p, const struct wlr_keyboard_modifiers *viewer)
{
	struct rc_keychar *kc = &server->input.chars;
	struct wlr_keyboard *kbd = keyboard_of(server);
	note_spare_use(kc, p->keycode);
	if (kc->nheld == RC_CHARS_HELD) {
		/* Never released (a viewer's bug): the oldest goes up. */
		notify_key(server, kc->held[0].keycode, false);
		memmove(&kc->held[0], &kc->held[1], sizeof(kc->held[0]) * (RC_CHARS_HELD - 1));
		kc->nheld--;
	}
	uint32_t evdev = p->keycode - 8;
	for (uint32_t i = 0; i < kc->nheld; i++) {
		if (kc->held[i].keycode == evdev) {
			/* The same key for another character: up first. */
			notify_key(server, evdev, false);
			kc->held[i] = kc->held[--kc->nheld];
			break;
		}
	}
	kc->held[kc->nheld++] = (struct rc_char_held){msg->key, msg->codepoint, evdev};
	kc->restore[0] = viewer->depressed;
	kc->restore[1] = viewer->latched;
	kc->restore[2] = viewer->locked;
	kc->restore[3] = viewer->group;
	wlr_keyboard_notify_modifiers(kbd,
		mods_for(kbd->keymap, p) | shortcut_mods(kbd->keymap, viewer), 0, 0, p->layout);
	wlr_seat_keyboard_notify_modifiers(server->seat, &kbd->modifiers);
	kc->mods_set = true;
	kc->mods_keycode = evdev;
	notify_key(server, evdev, true);
}

static bool held(struct rc_keychar *kc, const struct wire_key_char *msg)
{
	for (uint32_t i = 0; i < kc->nheld; i++) {
		if (kc->held[i].key == msg->key && kc->held[i].codepoint == msg->codepoint) {
			return true;
		}
	}
	return false;
}

static bool press(struct rc_server *server, const struct wire_key_char *msg)
{
	struct rc_keychar *kc = &server->input.chars;
	struct wlr_keyboard *kbd = keyboard_of(server);
	if (held(kc, msg)) {
		return true; /* already down */
	}
	keychar_restore(server);
	xkb_keysym_t sym = xkb_utf32_to_keysym(msg->codepoint);
	if (sym == XKB_KEY_NoSymbol || !kbd->keymap) {
		log_debug("U+%04X: no keysym types it", msg->codepoint);
		return true;
	}
	struct place p;
	xkb_layout_index_t group = kbd->modifiers.group;
	if ((msg->key && msg->key + 8 <= XKB_LAST &&
		    on_key(kbd->keymap, msg->key + 8, group, msg->codepoint, sym, &p)) ||
		anywhere(kbd->keymap, group, msg->codepoint, sym, &p)) {
		press_at(server, msg, &p, &kbd->modifiers);
		return true;
	}
	return false;
}

bool keychar_spare(struct rc_server *server, const struct wire_key_char *msg)
{
	struct wlr_keyboard *kbd = keyboard_of(server);
	/* The viewer's own, before the new keymap clears them. */
	struct wlr_keyboard_modifiers viewer = kbd->modifiers;
	struct place p;
	if (!put_on_spare(server, msg->codepoint, &p)) {
		return false;
	}
	press_at(server, msg, &p, &viewer);
	return true;
}

static void release(struct rc_server *server, const struct wire_key_char *msg)
{
	struct rc_keychar *kc = &server->input.chars;
	for (uint32_t i = 0; i < kc->nheld; i++) {
		struct rc_char_held h = kc->held[i];
		if (h.key != msg->key || h.codepoint != msg->codepoint) {
			continue;
		}
		kc->held[i] = kc->held[--kc->nheld];
		notify_key(server, h.keycode, false);
		if (kc->mods_set && kc->mods_keycode == h.keycode) {
			keychar_restore(server);
		}
		return;
	}
}

bool keychar_key(struct rc_server *server, const struct wire_key_char *msg)
{
	if (!server->seat->keyboard_state.focused_surface) {
		return true;
	}
	if (msg->state) {
		return press(server, msg);
	}
	release(server, msg);
	return true;
}
