/* MIME type lists in their wire form; see mime.h. */
#include <string.h>

#include "mime.h"

static bool next_packed(const uint8_t *packed, size_t types_len, size_t *pos, const char **mime,
	size_t *len)
{
	if (*pos >= types_len || types_len - *pos < 2) {
		return false;
	}
	size_t left = types_len - *pos;
	size_t n = (size_t)packed[*pos] | (size_t)packed[*pos + 1] << 8;
	if (n == 0 || n > WIRE_MAX_MIME || n > left - 2) {
		return false;
	}
	*mime = (const char *)packed + *pos + 2;
	*len = n;
	*pos += 2 + n;
	return true;
}

bool mime_next(const struct wire_selection *selection, size_t *pos, const char **mime, size_t *len)
{
	return next_packed(selection->types, selection->types_len, pos, mime, len);
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

void mime_list_from(struct mime_list *list, uint32_t count, const uint8_t *types,
	uint32_t types_len)
{
	/* The decoder checked the count and that the types fill the body,
	 * which is no larger than the list. */
	list->count = count;
	list->used = types_len;
	memcpy(list->packed, types, types_len);
}

void mime_list_from_msg(struct mime_list *list, const struct wire_selection *selection)
{
	mime_list_from(list, selection->count, selection->types, selection->types_len);
}

void mime_list_each(const struct mime_list *list, void (*fn)(void *data, const char *mime),
	void *data)
{
	size_t pos = 0, len;
	const char *mime;
	while (next_packed(list->packed, list->used, &pos, &mime, &len)) {
		char type[WIRE_MAX_MIME + 1];
		memcpy(type, mime, len);
		type[len] = '\0';
		fn(data, type);
	}
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
	size_t pos = 0, n;
	const char *type;
	while (next_packed(list->packed, list->used, &pos, &type, &n)) {
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
