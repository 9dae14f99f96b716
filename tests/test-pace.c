/* Unit tests of the channel's pacing (protocol/pace.c) against a simulated
 * link: a bottleneck of a given rate and a fixed delay, whose reader
 * acknowledges what it has read a round trip after it was written. The
 * writer writes a record whenever pacing lets it (it fills the link) or on
 * a fixed clock (the app limits it). Time is simulated. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "pace.h"

#define MBIT (1000000 / 8)
#define ACKS 4096

struct sim {
	struct pace pace;
	uint64_t rate, delay_us, free_us, now;
	struct {
		uint64_t received, at_us;
	} acks[ACKS];
	uint32_t nacks;
	uint64_t longest_wait_us; /* of a write that was due */
	bool probed;
};

static void sim_init(struct sim *s, uint64_t rate, uint64_t delay_us)
{
	memset(s, 0, sizeof(*s));
	s->rate = rate;
	s->delay_us = delay_us;
	s->now = 1;
	pace_init(&s->pace);
}

static void sim_write(struct sim *s, uint64_t bytes, bool more_waiting)
{
	pace_wrote(&s->pace, bytes, more_waiting, s->now);
	uint64_t start = s->free_us > s->now ? s->free_us : s->now;
	s->free_us = start + bytes * 1000000 / s->rate;
	if (s->nacks < ACKS) {
		s->acks[s->nacks].received = s->pace.sent;
		s->acks[s->nacks].at_us = s->free_us + s->delay_us;
		s->nacks++;
	}
}

static void sim_deliver(struct sim *s)
{
	uint32_t done = 0;
	while (done < s->nacks && s->acks[done].at_us <= s->now) {
		CHECK(pace_acked(&s->pace, s->acks[done].received, s->acks[done].at_us));
		done++;
	}
	memmove(s->acks, s->acks + done, (s->nacks - done) * sizeof(s->acks[0]));
	s->nacks -= done;
}

/* every_us 0: a write of bytes whenever the budget allows; else one every
 * every_us, as soon as the budget allows. */
static void sim_run(struct sim *s, double seconds, uint64_t bytes, uint64_t every_us)
{
	uint64_t end = s->now + (uint64_t)(seconds * 1e6), next = s->now;
	for (; s->now < end; s->now += 100) {
		sim_deliver(s);
		s->probed |= s->pace.probing;
		if ((every_us == 0 || s->now >= next) && pace_budget(&s->pace) >= bytes) {
			if (every_us && s->now - next > s->longest_wait_us) {
				s->longest_wait_us = s->now - next;
			}
			sim_write(s, bytes, every_us == 0);
			next = s->now + every_us;
		}
	}
}

/* A game's video, 2 KB sixty times a second, on a 20 Mbit/s link of 50 ms:
 * more is in flight than a probe allows, yet none of it filled the link, so
 * no probe holds a frame back. */
static void test_app_limited_never_waits(void)
{
	struct sim s;
	sim_init(&s, 20 * MBIT, 50000);
	sim_run(&s, 1, 2000, 16667); /* the first estimates */
	s.longest_wait_us = 0;
	sim_run(&s, 30, 2000, 16667);
	printf("2 KB at 60 Hz, 50 ms: longest wait %.1f ms, probed %d\n", s.longest_wait_us / 1e3,
		s.probed);
	CHECK(s.longest_wait_us < 1000);
	CHECK(!s.probed);
}

static void test_filling_writer_probes(void)
{
	struct sim s;
	sim_init(&s, 10 * MBIT, 20000);
	sim_run(&s, 10, 8192, 0);
	printf("10 Mbit/s filled for 10 s: probed %d, rate %.2f Mbit/s\n", s.probed,
		(double)pace_rate(&s.pace) / MBIT);
	CHECK(s.probed);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"app_limited_never_waits", test_app_limited_never_waits},
		{"filling_writer_probes", test_filling_writer_probes},
	};
	return check_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
