/*
 * Frame clocks. The headless backend's own frame timer has whole-millisecond
 * resolution and drifts (53-56 fps for 60 Hz); a timerfd per window ticks
 * exactly at the refresh it is given.
 */
#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

/* Ticks without work before the clock stops. */
#define IDLE_TICKS_BEFORE_STOP 4

static int handle_timer(int fd, uint32_t mask, void *data)
{
	struct rc_clock *clock = data;
	uint64_t expirations = 0;
	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN) {
		log_error("a frame clock failed: %s", strerror(errno));
	}
	clock->ticks++;
	clock->tick(clock);
	return 0;
}

void clock_init(struct rc_clock *clock, struct wl_event_loop *loop, long interval_ns,
	void (*tick)(struct rc_clock *clock))
{
	*clock = (struct rc_clock){
		.loop = loop,
		.tick = tick,
		.fd = -1,
		.interval_ns = interval_ns,
	};
}

void clock_finish(struct rc_clock *clock)
{
	if (clock->source) {
		wl_event_source_remove(clock->source);
		clock->source = NULL;
	}
	if (clock->fd >= 0) {
		close(clock->fd);
		clock->fd = -1;
	}
	clock->running = false;
}

static void arm(struct rc_clock *clock, long first_ns, long interval_ns)
{
	struct itimerspec spec = {
		.it_interval = {.tv_sec = interval_ns / 1000000000L,
			.tv_nsec = interval_ns % 1000000000L},
		.it_value = {.tv_sec = first_ns / 1000000000L, .tv_nsec = first_ns % 1000000000L},
	};
	if (timerfd_settime(clock->fd, 0, &spec, NULL) < 0) {
		log_error("cannot set a frame clock: %s", strerror(errno));
		return;
	}
	clock->running = first_ns != 0;
}

void clock_start(struct rc_clock *clock)
{
	clock->idle_ticks = 0;
	if (clock->running) {
		return;
	}
	if (clock->fd < 0) {
		clock->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (clock->fd < 0) {
			log_error("cannot create a frame clock: %s", strerror(errno));
			return;
		}
		clock->source = wl_event_loop_add_fd(clock->loop, clock->fd, WL_EVENT_READABLE,
			handle_timer, clock);
		if (!clock->source) {
			close(clock->fd);
			clock->fd = -1;
			return;
		}
	}
	/* The first tick right away: after idle, the first change goes out
	 * at once. */
	arm(clock, 1000, clock->interval_ns);
}

void clock_set_interval(struct rc_clock *clock, long interval_ns)
{
	clock->interval_ns = interval_ns;
	if (clock->running) {
		clock->running = false;
		clock_start(clock);
	}
}

void clock_tick_done(struct rc_clock *clock, bool worked)
{
	if (worked) {
		clock->idle_ticks = 0;
	} else if (++clock->idle_ticks >= IDLE_TICKS_BEFORE_STOP && clock->running) {
		arm(clock, 0, 0);
	}
}
