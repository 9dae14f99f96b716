/*
 * Key chords the viewer keeps for itself (the HUD's toggle): the local
 * keymap and modifiers in an xkb state, so that a chord is matched by the
 * keysym the user sees on the key, in whatever layout.
 */
#ifndef RCOMP_CHORD_H
#define RCOMP_CHORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rv_viewer;

/* A key chord of the viewer's own (chord.c): these modifiers, this key. */
enum rv_chord_mod {
	RV_MOD_CTRL = 1 << 0,
	RV_MOD_ALT = 1 << 1,
	RV_MOD_SHIFT = 1 << 2,
	RV_MOD_LOGO = 1 << 3,
};

struct rv_chord {
	uint32_t mods; /* enum rv_chord_mod: exactly these held */
	uint32_t sym; /* the key's keysym, lower case; 0: no chord */
};

/* "ctrl+alt+shift+h": modifiers (ctrl, alt, shift, super or logo) and one
 * keysym name (xkbcommon's, any case); "none" for no chord. */
bool chord_parse(const char *text, struct rv_chord *out);
/* The local keymap (XKB text) and modifier state, as wl_keyboard gives them. */
void chord_keymap(struct rv_viewer *viewer, const char *map, size_t len);
void chord_modifiers(struct rv_viewer *viewer, uint32_t depressed, uint32_t latched,
	uint32_t locked, uint32_t group);
/* Whether pressing key (an evdev code) with the modifiers held now is chord. */
bool chord_matches(struct rv_viewer *viewer, const struct rv_chord *chord, uint32_t key);
void chord_finish(struct rv_viewer *viewer);

#endif
