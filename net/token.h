/* The token a viewer presents at any door: read from a file of the user's
 * own, or made new from random bytes. */
#ifndef RCOMP_TOKEN_H
#define RCOMP_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

/* Reads a token: the first line of path, 1 to WIRE_MAX_TOKEN characters,
 * from a regular file of ours that nobody else may read or write. Logs why
 * and returns false if it cannot. */
bool token_read(const char *path, char *token, size_t *len);
/* A new token, 256 random bits as hex after prefix, in token (which holds
 * it and a NUL); false (logged) without random bytes. */
bool token_random(char *token, size_t *len, const char *prefix);

#endif
