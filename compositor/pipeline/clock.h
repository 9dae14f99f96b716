/*
 * A window's frame clock: a timerfd that ticks at the window's refresh and
 * calls its tick function. It runs while there is work and stops by itself
 * after a few idle ticks; anything that creates work starts it.
 */
#ifndef RCOMP_CLOCK_H
#define RCOMP_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-server-core.h>

struct rc_clock {
	struct wl_event_loop *loop;
	void (*tick)(struct rc_clock *clock);
	int fd; /* -1 until first started */
	struct wl_event_source *source;
	long interval_ns;
	bool running;
	int idle_ticks;
	uint64_t ticks; /* since creation */
};

void clock_init(struct rc_clock *clock, struct wl_event_loop *loop, long interval_ns,
	void (*tick)(struct rc_clock *clock));
void clock_finish(struct rc_clock *clock);
/* Runs the clock, with a first tick at once; a running clock forgets its
 * idle ticks. */
void clock_start(struct rc_clock *clock);
/* A new interval; a running clock restarts at it. */
void clock_set_interval(struct rc_clock *clock, long interval_ns);
/* Ends a tick: a tick that did no work counts towards stopping. */
void clock_tick_done(struct rc_clock *clock, bool worked);

#endif
