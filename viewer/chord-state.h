/*
 * A key chord of the viewer's own (chord.h): types only, for viewer.h.
 */
#ifndef RCOMP_CHORD_STATE_H
#define RCOMP_CHORD_STATE_H

#include <stdint.h>

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

#endif
