/* libFuzzer harness: keymap names from a viewer (protocol/keymap-names.c),
 * the one parser of the browser viewer's input that is ours. Whatever the
 * bytes, what passes names no path: each name is within the copy, holds
 * only name characters, and the three with their separators are the
 * input's own bytes. */
#include <stdlib.h>
#include <string.h>

#include "keymap-names.h"

static void check_name(const struct keymap_names *n, const char *name)
{
	if (name < n->text || name > n->text + KEYMAP_NAMES_MAX) {
		abort();
	}
	for (const char *p = name; *p; p++) {
		if (*p == '/' || *p == '.' || *p == '\n' || *p == '\\') {
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keymap_names n;
	char err[128];
	uint32_t len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	if (!keymap_names_parse(&n, data, len, err, sizeof(err))) {
		if (!err[0]) {
			abort(); /* a refusal says why */
		}
		return 0;
	}
	check_name(&n, n.layout);
	check_name(&n, n.variant);
	check_name(&n, n.options);
	/* The names are the input's first lines, in order. */
	size_t a = strlen(n.layout), b = strlen(n.variant);
	if (memcmp(data, n.layout, a) != 0 ||
		(a < size && (data[a] != '\n' || memcmp(data + a + 1, n.variant, b) != 0))) {
		abort();
	}
	return 0;
}
