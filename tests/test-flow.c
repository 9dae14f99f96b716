/* Unit tests of flow control (compositor/pipeline/flow.c) against a simulated link: a
 * bottleneck of a given rate and a fixed delay, fed by a sender that sends a
 * frame whenever flow control lets it (link-limited) or on a fixed clock
 * (app-limited). Time is simulated, so the results do not depend on the
 * machine. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "flow.h"

struct link {
	uint64_t rate; /* bytes per second */
	uint64_t delay_us; /* one way and back, beside the transmission */
	uint64_t free_us; /* when the bottleneck is next idle */
	struct {
		uint32_t seq;
		uint64_t ack_us;
	} acks[FLOW_MAX_FRAMES];
	uint32_t nacks;
};

static void link_send(struct link *l, uint32_t seq, uint32_t bytes, uint64_t now)
{
	uint64_t start = l->free_us > now ? l->free_us : now;
	l->free_us = start + (uint64_t)bytes * 1000000 / l->rate;
	l->acks[l->nacks].seq = seq;
	l->acks[l->nacks].ack_us = l->free_us + l->delay_us;
	l->nacks++;
}

static void link_deliver(struct link *l, struct flow *flow, uint64_t now)
{
	while (l->nacks > 0 && l->acks[0].ack_us <= now) {
		flow_acked(flow, 1, l->acks[0].seq, l->acks[0].ack_us);
		l->nacks--;
		for (uint32_t i = 0; i < l->nacks; i++) {
			l->acks[i] = l->acks[i + 1];
		}
	}
}

/* The longest a due frame waited for flow control, in run(). */
static uint64_t longest_wait_us;

/* Runs for seconds of simulated time. every_us 0: a frame of bytes
 * whenever flow control allows (the link limits); else one every every_us
 * (the app limits). */
static void run(struct flow *flow, struct link *l, uint32_t *seq, double seconds, uint32_t bytes,
	uint64_t every_us, uint64_t *now)
{
	uint64_t end = *now + (uint64_t)(seconds * 1e6), next = *now;
	for (; *now < end; *now += 100) {
		link_deliver(l, flow, *now);
		bool due = every_us == 0 || *now >= next;
		if (due && l->nacks < FLOW_MAX_FRAMES && flow_can_send(flow, *now)) {
			if (every_us && *now - next > longest_wait_us) {
				longest_wait_us = *now - next;
			}
			flow_sent(flow, 1, ++*seq, bytes, *now);
			link_send(l, *seq, bytes, *now);
			next = *now + every_us;
		}
	}
}

#define MBIT (1000000 / 8)

/* A sender and its link, from the start. */
struct sim {
	struct flow flow;
	struct link link;
	uint32_t seq;
	uint64_t now;
};

static void sim_init(struct sim *s, uint64_t rate, uint64_t delay_us)
{
	*s = (struct sim){.link = {.rate = rate, .delay_us = delay_us}, .now = 1};
	flow_init(&s->flow);
}

static void sim_run(struct sim *s, double seconds, uint32_t bytes, uint64_t every_us)
{
	run(&s->flow, &s->link, &s->seq, seconds, bytes, every_us, &s->now);
}

static void test_link_limited(void)
{
	struct sim s;
	sim_init(&s, 10 * MBIT, 20000);
	sim_run(&s, 5, 16 * 1024, 0);
	uint64_t rate = flow_rate(&s.flow);
	printf("10 Mbit/s link: estimate %.2f Mbit/s\n", (double)rate / MBIT);
	CHECK(rate > 8 * MBIT && rate < 12 * MBIT);
}

/* The first frames of a session: a large picture, and another sent while
 * the first is still on its way, as a window's first lossless pictures go
 * through a 3 Mbit/s link; the viewer presents the newer only, whose ack
 * covers both. That ack must not count the first's bytes over the
 * second's own interval (it measured 8.4 Mbit/s so). */
static void test_first_frames(void)
{
	struct sim s;
	sim_init(&s, 3 * MBIT, 20000);
	flow_sent(&s.flow, 1, ++s.seq, 300 * 1024, s.now);
	link_send(&s.link, s.seq, 300 * 1024, s.now);
	s.now += 700000;
	flow_sent(&s.flow, 1, ++s.seq, 400 * 1024, s.now);
	link_send(&s.link, s.seq, 400 * 1024, s.now);
	s.link.acks[0] = s.link.acks[1]; /* the first is never presented alone */
	s.link.nacks = 1;
	s.now += 10 * 1000000;
	link_deliver(&s.link, &s.flow, s.now);
	uint64_t rate = flow_rate(&s.flow);
	printf("3 Mbit/s link, two large first frames: estimate %.2f Mbit/s\n",
		(double)rate / MBIT);
	CHECK(rate > 2 * MBIT && rate <= 3 * MBIT + MBIT / 10);
}

static void test_app_limited_keeps_rate(void)
{
	struct sim s;
	sim_init(&s, 50 * MBIT, 2000);
	sim_run(&s, 2, 64 * 1024, 0);
	uint64_t before = flow_rate(&s.flow);
	/* A terminal: a kilobyte a frame, sixty frames a second. */
	sim_run(&s, 10, 1024, 16667);
	uint64_t after = flow_rate(&s.flow);
	printf("50 Mbit/s link: %.2f Mbit/s filled, %.2f Mbit/s after 10 s of 1 KB frames\n",
		(double)before / MBIT, (double)after / MBIT);
	CHECK(before > 40 * MBIT);
	CHECK(after >= before);
}

static void test_slower_link_followed(void)
{
	struct sim s;
	sim_init(&s, 50 * MBIT, 10000);
	sim_run(&s, 3, 64 * 1024, 0);
	s.link.rate = 5 * MBIT;
	sim_run(&s, 5, 64 * 1024, 0);
	uint64_t rate = flow_rate(&s.flow);
	printf("50 then 5 Mbit/s: estimate %.2f Mbit/s\n", (double)rate / MBIT);
	CHECK(rate > 4 * MBIT && rate < 6 * MBIT);
}

/* A game's video on a link with room to spare: no frame waits, not even
 * for the probe of the minimum round trip, which only a flow that filled
 * its bound needs. */
static void test_app_limited_never_waits(void)
{
	struct sim s;
	sim_init(&s, 20 * MBIT, 50000);
	longest_wait_us = 0;
	sim_run(&s, 30, 2000, 16667);
	printf("2 KB frames at 60 fps, 50 ms round trip: longest wait %.1f ms, %u frames\n",
		longest_wait_us / 1e3, s.seq);
	CHECK(longest_wait_us < 1000);
	CHECK(s.seq >= 30 * 1000000 / 16700 - 1); /* due times fall on 100 us steps */
}

/* A flow that fills its bound still probes, so its own queue cannot keep
 * the minimum round trip up. */
static void test_filled_flow_probes(void)
{
	struct sim s;
	sim_init(&s, 10 * MBIT, 20000);
	sim_run(&s, 12, 16 * 1024, 0);
	printf("10 Mbit/s filled for 12 s: probed until %.1f s\n", s.flow.probe_until_us / 1e6);
	CHECK(s.flow.probe_until_us > 8000000);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"first_frames", test_first_frames},
		{"link_limited", test_link_limited},
		{"app_limited", test_app_limited_keeps_rate},
		{"slower", test_slower_link_followed},
		{"app_limited_never_waits", test_app_limited_never_waits},
		{"filled_flow_probes", test_filled_flow_probes},
	};
	return check_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
