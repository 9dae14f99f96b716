/* A byte buffer with a hard size limit. */
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

void buffer_init(struct buffer *buf, size_t limit)
{
	*buf = (struct buffer){.limit = limit};
}

void buffer_finish(struct buffer *buf)
{
	free(buf->data);
	*buf = (struct buffer){.limit = buf->limit};
}

uint8_t *buffer_reserve(struct buffer *buf, size_t n)
{
	size_t used = buf->end - buf->start;
	if (n > buf->limit || used > buf->limit - n) {
		return NULL;
	}
	if (buf->end + n <= buf->capacity) {
		return buf->data + buf->end;
	}
	/* Move unread bytes to the front before growing. */
	if (buf->start > 0) {
		memmove(buf->data, buf->data + buf->start, used);
		buf->start = 0;
		buf->end = used;
		if (used + n <= buf->capacity) {
			return buf->data + buf->end;
		}
	}
	size_t capacity = buf->capacity ? buf->capacity : 4096;
	while (capacity < used + n) {
		capacity *= 2;
	}
	if (capacity > buf->limit) {
		capacity = buf->limit;
	}
	uint8_t *data = realloc(buf->data, capacity);
	if (!data) {
		return NULL;
	}
	buf->data = data;
	buf->capacity = capacity;
	return buf->data + buf->end;
}

void buffer_commit(struct buffer *buf, size_t n)
{
	buf->end += n;
}

bool buffer_append(struct buffer *buf, const void *bytes, size_t n)
{
	uint8_t *dst = buffer_reserve(buf, n);
	if (!dst) {
		return false;
	}
	if (n > 0) {
		memcpy(dst, bytes, n);
	}
	buf->end += n;
	return true;
}

void buffer_consume(struct buffer *buf, size_t n)
{
	buf->start += n;
	if (buf->start >= buf->end) {
		buf->start = buf->end = 0;
	}
	/* Give back memory after a burst, keeping a working size. */
	if (buf->start == 0 && buf->end == 0 && buf->capacity > (4u << 20)) {
		free(buf->data);
		buf->data = NULL;
		buf->capacity = 0;
	}
}

void buffer_truncate(struct buffer *buf, size_t size)
{
	if (size < buf->end - buf->start) {
		buf->end = buf->start + size;
	}
}

bool memory_grow(void **memory, size_t *size, size_t need)
{
	if (*size >= need) {
		return true;
	}
	void *bigger = realloc(*memory, need);
	if (!bigger) {
		return false;
	}
	*memory = bigger;
	*size = need;
	return true;
}
