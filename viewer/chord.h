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

#include "chord-state.h"

struct rv_viewer;

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
