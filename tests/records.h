/* For tests of transports that carry the channel's classes apart: a byte
 * stream of records, sorted by class. */
#ifndef RCOMP_TEST_RECORDS_H
#define RCOMP_TEST_RECORDS_H

#include <stdbool.h>
#include <string.h>

#include "buffer.h"
#include "channel.h"

/* Each class's records of p (len bytes, all records), in order, appended
 * to by_class[class] (initialized by the caller). False if p is not whole
 * records. */
static inline bool records_by_class(const uint8_t *p, size_t len,
	struct buffer by_class[CHANNEL_CLASSES])
{
	while (len > 0) {
		enum channel_class cls;
		size_t n = channel_record_size(p, len, &cls);
		if (n == 0 || n == SIZE_MAX || n > len || !buffer_append(&by_class[cls], p, n)) {
			return false;
		}
		p += n;
		len -= n;
	}
	return true;
}

/* Whether two buffers hold the same bytes. */
static inline bool same_bytes(const struct buffer *a, const struct buffer *b)
{
	return buffer_size(a) == buffer_size(b) &&
		(buffer_size(a) == 0 ||
			memcmp(buffer_head(a), buffer_head(b), buffer_size(a)) == 0);
}

/* Whether got holds some of want's records (a newest-wins lane's: the
 * link's), in want's order, the last of want among them. */
static inline bool newest_records_of(const struct buffer *got, const struct buffer *want)
{
	const uint8_t *g = buffer_head(got), *w = buffer_head(want);
	size_t glen = buffer_size(got), wlen = buffer_size(want), last = 0;
	enum channel_class cls;
	if (wlen == 0) {
		return glen == 0;
	}
	while (glen > 0) {
		size_t n = channel_record_size(g, glen, &cls);
		if (n == 0 || n == SIZE_MAX || n > glen) {
			return false;
		}
		for (;;) { /* want's next record that is this one */
			size_t m = wlen > 0 ? channel_record_size(w, wlen, &cls) : 0;
			if (m == 0 || m == SIZE_MAX || m > wlen) {
				return false;
			}
			w += m;
			wlen -= m;
			if (m == n && memcmp(w - m, g, n) == 0) {
				break;
			}
		}
		g += n;
		glen -= n;
		last = n;
	}
	return last > 0 && wlen == 0;
}

#endif
