/*
 * Work cut in bands, run at once on a pool of threads the whole process
 * shares: a picture's rows converted, scaled or copied band by band. The
 * caller works on its own bands too, so a call always finishes even when
 * every pool thread is busy with another's; nothing is queued past the
 * call. Any thread may call; calls from several threads share the pool.
 */
#ifndef RCOMP_BANDS_H
#define RCOMP_BANDS_H

#include <stdbool.h>

/* Starts the pool with threads helpers (the cores to use, less the
 * caller's own). 0: calls run their bands on the caller alone. Once, at
 * start-up, before any bands_run. */
bool bands_init(int threads);
void bands_finish(void);
/* The helpers the pool has. */
int bands_threads(void);

/* Runs fn(data, i) for i in 0..n-1, on the caller and the pool at once,
 * and returns when all have run. */
void bands_run(int n, void (*fn)(void *data, int i), void *data);

/* How many bands of rows a picture of rows rows, each row_bytes long, is
 * worth cutting into: none thinner than what pays for a hand-off (about
 * 256 KiB), at most one per thread. */
int bands_count(int rows, long row_bytes);

#endif
