/* MIME type lists in their wire form; see mime.h. */
#include <string.h>

#include "mime.h"

bool mime_next(const struct wire_selection *selection, size_t *pos, const char **mime, size_t *len)
{
	const uint8_t *packed = selection->types;
	if (*pos >= selection->types_len || selection->types_len - *pos < 2) {
		return false;
	}
	size_t left = selection->types_len - *pos;
	size_t n = (size_t)packed[*pos] | (size_t)packed[*pos + 1] << 8;
	if (n == 0 || n > WIRE_MAX_MIME || n > left - 2) {
		return false;
	}
	*mime = (const char *)packed + *pos + 2;
	*len = n;
	*pos += 2 + n;
	return true;
}

bool mime_list_add(struct mime_list *list, const char *mime, size_t len)
{
	if (list->count == WIRE_MAX_MIME_TYPES || len == 0 || len > WIRE_MAX_MIME ||
		sizeof(list->packed) - list->used < 2 + len) {
		return false;
	}
	uint8_t *dst = list->packed + list->used;
	dst[0] = (uint8_t)len;
	dst[1] = (uint8_t)(len >> 8);
	memcpy(dst + 2, mime, len);
	list->used += (uint32_t)(2 + len);
	list->count++;
	return true;
}

void mime_list_from_msg(struct mime_list *list, const struct wire_selection *selection)
{
	/* The decoder checked the count and that the types fill the body,
	 * which is no larger than the list. */
	list->count = selection->count;
	list->used = selection->types_len;
	memcpy(list->packed, selection->types, list->used);
}

void mime_list_to_msg(const struct mime_list *list, uint32_t kind, struct wire_msg *msg)
{
	*msg = (struct wire_msg){
		.type = WIRE_SELECTION,
		.selection = {.kind = kind,
			.count = list->count,
			.types = list->packed,
			.types_len = list->used},
	};
}

bool mime_list_has(const struct mime_list *list, const char *mime, size_t len)
{
	struct wire_msg msg;
	mime_list_to_msg(list, 0, &msg);
	size_t pos = 0, n;
	const char *type;
	while (mime_next(&msg.selection, &pos, &type, &n)) {
		if (n == len && memcmp(type, mime, len) == 0) {
			return true;
		}
	}
	return false;
}

bool mime_list_equal(const struct mime_list *a, const struct mime_list *b)
{
	return a->count == b->count && a->used == b->used &&
		memcmp(a->packed, b->packed, a->used) == 0;
}
