/* Keymap names from a viewer; see keymap-names.h. */
#include "keymap-names.h"

#include <stdio.h>
#include <string.h>

static bool name_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		(c != '\0' && strchr("_-+,:()", c));
}

bool keymap_names_parse(struct keymap_names *names, const uint8_t *data, uint32_t size, char *err,
	size_t err_size)
{
	if (size > KEYMAP_NAMES_MAX) {
		snprintf(err, err_size, "the keymap names are longer than %d bytes",
			KEYMAP_NAMES_MAX);
		return false;
	}
	for (uint32_t i = 0; i < size; i++) {
		if (data[i] != '\n' && !name_char(data[i])) {
			snprintf(err, err_size, "the keymap names have a byte 0x%02x no name has",
				data[i]);
			return false;
		}
	}
	memcpy(names->text, data, size);
	names->text[size] = '\0';
	/* Lines that are not there are empty: the text's own end. */
	char *rest = names->text;
	const char *fields[3];
	for (int i = 0; i < 3; i++) {
		fields[i] = rest ? strsep(&rest, "\n") : &names->text[size];
	}
	names->layout = fields[0];
	names->variant = fields[1];
	names->options = fields[2];
	return true;
}
