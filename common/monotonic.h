/* The monotonic clock, in the units the two programs count in. */
#ifndef RCOMP_MONOTONIC_H
#define RCOMP_MONOTONIC_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monotonic_usec(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
}

/* Wraps every 49 days, as Wayland event times do. */
static inline uint32_t monotonic_msec(void)
{
	return (uint32_t)(monotonic_usec() / 1000);
}

#endif
