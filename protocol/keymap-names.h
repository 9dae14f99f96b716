/*
 * A keymap by its names (keymap format 2, which the browser viewer sends):
 * "layout\nvariant\noptions", lines that are not there empty. The names
 * are file names to xkbcommon, so only the characters names are made of
 * pass, never a path: no '/', no '.', no byte outside the set.
 */
#ifndef RCOMP_KEYMAP_NAMES_H
#define RCOMP_KEYMAP_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEYMAP_NAMES_MAX 255

struct keymap_names {
	char text[KEYMAP_NAMES_MAX + 1];
	const char *layout, *variant, *options; /* in text; "" where absent */
};

/* Splits size bytes of data into names; false, with why in err, where
 * they are too long or hold a byte no name has. */
bool keymap_names_parse(struct keymap_names *names, const uint8_t *data, uint32_t size, char *err,
	size_t err_size);

#endif
