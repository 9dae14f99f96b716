/*
 * The gate's JSON, written into a fixed buffer: what does not fit marks the
 * writer full, and the caller says what a full one means.
 */
#ifndef RCOMP_GATE_JSON_H
#define RCOMP_GATE_JSON_H

#include <stdbool.h>
#include <stddef.h>

struct json {
	char *buf;
	size_t size, len; /* buf holds len bytes and a NUL */
	bool full; /* something did not fit */
};

/* text as it is (JSON's own punctuation, numbers). */
void json_put(struct json *j, const char *text);
/* n bytes of text from an app, a user or a peer as a JSON string: made
 * valid UTF-8 without control characters first (log_escape's \xNN). */
void json_string(struct json *j, const char *text, size_t n);

#endif
