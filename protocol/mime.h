/*
 * A selection's MIME types as the selection message carries them: each a
 * u16 length and its bytes. Both programs keep their selections' types in
 * this form, so comparing and forwarding them costs nothing.
 */
#ifndef RCOMP_MIME_H
#define RCOMP_MIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct mime_list {
	uint32_t count;
	uint32_t used;
	uint8_t packed[WIRE_MAX_MIME_TYPES * (2 + WIRE_MAX_MIME)];
};

/* Walks the types of a decoded selection message: *pos starts at 0. False
 * at the end. */
bool mime_next(const struct wire_selection *selection, size_t *pos, const char **mime, size_t *len);
/* Appends one type; false, the list unchanged, if it is full or the type is
 * empty or too long. */
bool mime_list_add(struct mime_list *list, const char *mime, size_t len);
/* Copies a decoded message's types (count of them packed in types). */
void mime_list_from(struct mime_list *list, uint32_t count, const uint8_t *types,
	uint32_t types_len);
void mime_list_from_msg(struct mime_list *list, const struct wire_selection *selection);
/* Calls fn with each type, as a string. */
void mime_list_each(const struct mime_list *list, void (*fn)(void *data, const char *mime),
	void *data);
/* Makes msg a selection of kind with the list's types (pointing into it). */
void mime_list_to_msg(const struct mime_list *list, uint32_t kind, struct wire_msg *msg);
bool mime_list_has(const struct mime_list *list, const char *mime, size_t len);
bool mime_list_equal(const struct mime_list *a, const struct mime_list *b);

#endif
