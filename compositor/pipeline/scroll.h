/*
 * Finding scrolls: the part of a window that moved up or down since the
 * copy the viewer holds, so that it goes as one copy_rect and the diff of
 * what is new instead of a diff of everything that moved.
 */
#ifndef RCOMP_SCROLL_H
#define RCOMP_SCROLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"

/* Row hashes kept from frame to frame, and scratch. */
struct rc_scroll {
	int32_t width, height, bands; /* the image the hashes are of */
	size_t table; /* hash table slots, a power of two */
	uint64_t *cur; /* per band and row: the new image's, in the last box */
	uint64_t *old; /* the old image's, where known */
	uint8_t *known;
	uint32_t *slots; /* hash table of one band's old rows */
	uint32_t *votes; /* per vertical distance */
	size_t cur_size, old_size, known_size, slots_size, votes_size;
	struct wire_rect hashed; /* the box cur holds, for scroll_sent */
	int32_t hashed_k0, hashed_k1;
};

/* The rectangle src of the old image that, moved by dx, dy, is exactly the
 * new image there. */
struct scroll_move {
	struct wire_rect src;
	int32_t dx, dy;
};

/*
 * Looks in box (where the new image may differ from the old) for a vertical
 * scroll of part of it: rows of cur that are rows of base, all moved by the
 * same distance. Finds the largest such rectangle, exact to the pixel; false
 * if there is none worth a copy_rect. cur and base are the same size.
 */
bool scroll_find(struct rc_scroll *scroll, const struct image *cur, const struct image *base,
	struct wire_rect box, struct scroll_move *move);

/* The old image became the new one within box (a frame of it went out):
 * the new image's hashes there, if scroll_find took them for this box, are
 * the old image's from now on. */
void scroll_sent(struct rc_scroll *scroll, struct wire_rect box);
/* The old image changed within box, not all of it to the new one (a band
 * of a larger change went, after a copy_rect): its hashes there are
 * forgotten. */
void scroll_changed(struct rc_scroll *scroll, struct wire_rect box);
/* The old image changed some other way: no hash of it is known. */
void scroll_forget(struct rc_scroll *scroll);
void scroll_finish(struct rc_scroll *scroll);

#endif
