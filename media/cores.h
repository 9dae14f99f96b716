/*
 * The cores a program may use, and one budget of them for the threads
 * that encode or decode video: each stream takes a share when it starts
 * and gives it back when it ends, so two games in one session do not each
 * take every core.
 */
#ifndef RCOMP_CORES_H
#define RCOMP_CORES_H

#include <stdatomic.h>
#include <stdint.h>

/* The cores this process may run on (its CPU affinity, as taskset sets
 * it), at least 1. */
int cores_available(void);

struct cores_budget {
	int total; /* cores to share */
	atomic_int streams; /* streams holding a share now */
};

void cores_budget_init(struct cores_budget *budget, int total);

/* Pictures smaller than this many pixels a thread gain nothing from more
 * threads: their slices would be too thin to pay for themselves. */
#define CORES_PIXELS_PER_THREAD (128 * 1024)

/* Threads a picture of pixels pixels can use, at most most, at least 1. */
int cores_for_picture(int64_t pixels, int most);

/*
 * Threads for a new stream of pixels pixels a picture: its fair share of
 * the budget among the streams now holding one (this one included), no
 * more than the picture can use, at least 1. *streams is set to how many
 * share the budget now. Until cores_give, the stream counts. Any thread.
 */
int cores_take(struct cores_budget *budget, int64_t pixels, int *streams);
/* What cores_take gives a picture of pixels pixels among streams streams
 * (at least 1), without taking it. */
int cores_share(const struct cores_budget *budget, int64_t pixels, int streams);
void cores_give(struct cores_budget *budget);

#endif
