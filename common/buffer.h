/* A byte buffer with a hard size limit, used for socket input and output. */
#ifndef RCOMP_BUFFER_H
#define RCOMP_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buffer {
	uint8_t *data;
	size_t start; /* first unread byte */
	size_t end; /* one past the last byte */
	size_t capacity; /* bytes allocated */
	size_t limit; /* most bytes it may ever hold */
};

void buffer_init(struct buffer *buf, size_t limit);
void buffer_finish(struct buffer *buf);
/* Returns room for n more bytes at the end, or NULL past the limit. */
uint8_t *buffer_reserve(struct buffer *buf, size_t n);
/* Marks n reserved bytes as written. */
void buffer_commit(struct buffer *buf, size_t n);
bool buffer_append(struct buffer *buf, const void *bytes, size_t n);
void buffer_consume(struct buffer *buf, size_t n);
/* Drops bytes written after offset (an offset in buffer_size() terms). */
void buffer_truncate(struct buffer *buf, size_t size);

/* Grows a scratch allocation *memory of *size bytes to at least need bytes
 * (contents kept). False when out of memory: the old allocation stays. */
bool memory_grow(void **memory, size_t *size, size_t need);

/* The first unread byte; of a buffer never written, NULL (a null pointer
 * plus an offset, even 0, is undefined). */
static inline uint8_t *buffer_head(const struct buffer *buf)
{
	return buf->data ? buf->data + buf->start : NULL;
}

static inline size_t buffer_size(const struct buffer *buf)
{
	return buf->end - buf->start;
}

#endif
