#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xkbcommon/xkbcommon.h>

#include "chord.h"
#include "log.h"
#include "viewer.h"

bool chord_parse(const char *text, struct rv_chord *out)
{
	*out = (struct rv_chord){0};
	if (strcasecmp(text, "none") == 0) {
		return true;
	}
	static const struct {
		const char *name;
		uint32_t mod;
	} mods[] = {
		{"ctrl", RV_MOD_CTRL},
		{"control", RV_MOD_CTRL},
		{"alt", RV_MOD_ALT},
		{"shift", RV_MOD_SHIFT},
		{"super", RV_MOD_LOGO},
		{"logo", RV_MOD_LOGO},
	};
	const char *part = text;
	while (*part) {
		const char *plus = strchr(part, '+');
		size_t len = plus ? (size_t)(plus - part) : strlen(part);
		if (len == 0 || len > 63) {
			return false;
		}
		char name[64];
		memcpy(name, part, len);
		name[len] = '\0';
		if (!plus) {
			xkb_keysym_t sym = xkb_keysym_from_name(name, XKB_KEYSYM_CASE_INSENSITIVE);
			if (sym == XKB_KEY_NoSymbol) {
				return false;
			}
			out->sym = xkb_keysym_to_lower(sym);
			return true;
		}
		bool known = false;
		for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
			if (strcasecmp(name, mods[i].name) == 0) {
				out->mods |= mods[i].mod;
				known = true;
			}
		}
		if (!known) {
			return false;
		}
		part = plus + 1;
	}
	return false; /* ends with '+': no key */
}

void chord_keymap(struct rv_viewer *viewer, const char *map, size_t len)
{
	struct rv_seat *seat = &viewer->seat;
	if (!seat->xkb) {
		seat->xkb = xkb_context_new(XKB_CONTEXT_NO_FLAGS);
		if (!seat->xkb) {
			return;
		}
	}
	struct xkb_keymap *keymap = xkb_keymap_new_from_buffer(seat->xkb, map, len,
		XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS);
	struct xkb_state *state = keymap ? xkb_state_new(keymap) : NULL;
	if (!state) {
		log_error("the local keymap does not compile: key chords (the HUD's) are off");
		xkb_keymap_unref(keymap);
		return;
	}
	xkb_state_unref(seat->xkb_state);
	xkb_keymap_unref(seat->xkb_keymap);
	seat->xkb_keymap = keymap;
	seat->xkb_state = state;
}

void chord_modifiers(struct rv_viewer *viewer, uint32_t depressed, uint32_t latched,
	uint32_t locked, uint32_t group)
{
	if (viewer->seat.xkb_state) {
		xkb_state_update_mask(viewer->seat.xkb_state, depressed, latched, locked, 0, 0,
			group);
	}
}

bool chord_matches(struct rv_viewer *viewer, const struct rv_chord *chord, uint32_t key)
{
	struct xkb_state *state = viewer->seat.xkb_state;
	if (!chord->sym || !state) {
		return false;
	}
	static const struct {
		const char *name;
		uint32_t mod;
	} mods[] = {
		{XKB_MOD_NAME_CTRL, RV_MOD_CTRL},
		{XKB_MOD_NAME_ALT, RV_MOD_ALT},
		{XKB_MOD_NAME_SHIFT, RV_MOD_SHIFT},
		{XKB_MOD_NAME_LOGO, RV_MOD_LOGO},
	};
	uint32_t held = 0;
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		if (xkb_state_mod_name_is_active(state, mods[i].name, XKB_STATE_MODS_EFFECTIVE) >
			0) {
			held |= mods[i].mod;
		}
	}
	/* evdev codes are xkb keycodes less 8. */
	return held == chord->mods &&
		xkb_keysym_to_lower(xkb_state_key_get_one_sym(state, key + 8)) == chord->sym;
}

void chord_finish(struct rv_viewer *viewer)
{
	xkb_state_unref(viewer->seat.xkb_state);
	xkb_keymap_unref(viewer->seat.xkb_keymap);
	xkb_context_unref(viewer->seat.xkb);
	viewer->seat.xkb_state = NULL;
	viewer->seat.xkb_keymap = NULL;
	viewer->seat.xkb = NULL;
}
