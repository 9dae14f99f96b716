/*
 * Flow control for the viewer connection. Every frame sent is recorded until
 * the viewer acknowledges it. From the acks come two estimates, in the manner
 * of BBR: the delivery rate (bytes acknowledged over the time they took,
 * max-filtered) and the minimum round trip. Their product is the link's
 * bandwidth-delay product; frames are sent only while the bytes in flight are
 * below about that, so nothing queues beyond what the link holds, and windows
 * keep their newest pixels as damage until there is room.
 *
 * A frame sent while the pipe had room is app-limited (BBR's term): its
 * delivery rate tells what the app sent, not what the link carries, so it
 * may raise the estimate but never lower it. Otherwise a terminal that sends
 * a kilobyte a frame would make a gigabit link look like half a megabit, and
 * every choice made from the rate (video's cost, the bound on bytes in
 * flight) would follow the app instead of the link.
 */
#include <string.h>

#include "flow.h"

/* Before any estimate: enough to start on any link without flooding it. */
#define INITIAL_LIMIT (64 * 1024)
#define MIN_LIMIT (32 * 1024)
/* Headroom over the measured delivery rate x minimum round trip; it lets the
 * estimate grow when the app speeds up. */
#define GAIN 1.25
/* Every so often, send one frame at a time for a moment so that any queue
 * drains and the minimum round trip is measured afresh (BBR's ProbeRTT):
 * otherwise a standing queue would inflate the estimate that sustains it.
 * Only a flow that filled its bound with one of its last frames can have
 * built such a queue; an app-limited one (a game's video on a fast link)
 * is not made to skip frames for it. */
#define PROBE_INTERVAL_US (8 * 1000 * 1000)
#define PROBE_MIN_US (200 * 1000)
/* The min-RTT estimate expires, so probes and path changes take effect. */
#define MIN_RTT_WINDOW_US (10 * 1000 * 1000)

void flow_init(struct flow *flow)
{
	memset(flow, 0, sizeof(*flow));
}

static uint64_t max_rate(const struct flow *flow)
{
	uint64_t best = 0;
	for (int i = 0; i < FLOW_RATE_SAMPLES; i++) {
		if (flow->rate_samples[i] > best) {
			best = flow->rate_samples[i];
		}
	}
	return best;
}

uint64_t flow_limit(const struct flow *flow)
{
	uint64_t rate = max_rate(flow); /* bytes per second */
	if (rate == 0 || flow->min_rtt_us == 0) {
		return INITIAL_LIMIT;
	}
	/* When the link is the bottleneck, rate x min RTT is the pipe plus the
	 * frame being transferred; when the app is, it is what the app needs. */
	uint64_t limit = (uint64_t)((double)rate * (double)flow->min_rtt_us / 1e6 * GAIN);
	return limit < MIN_LIMIT ? MIN_LIMIT : limit;
}

bool flow_can_send(const struct flow *flow, uint64_t now_us)
{
	if (flow->count == 0) {
		return true; /* never stall: one frame may always be in flight */
	}
	if (now_us < flow->probe_until_us) {
		return false;
	}
	return flow->count < FLOW_MAX_FRAMES && flow->in_flight < flow_limit(flow);
}

void flow_sent(struct flow *flow, uint32_t window, uint32_t seq, uint32_t bytes, uint64_t now_us)
{
	if (flow->count == FLOW_MAX_FRAMES) {
		return; /* callers check flow_can_send(); keep the books safe anyway */
	}
	bool app_limited = flow->in_flight + bytes < flow_limit(flow);
	if (flow->delivered_us == 0) {
		/* Before any ack, the delivery clock starts at the first send (as
		 * BBR's): else a frame sent behind a large first one would take
		 * both frames' bytes over its own interval alone (seen: 8.4
		 * Mbit/s measured through a 3 Mbit/s link). */
		flow->delivered_us = now_us;
	}
	flow->frames[flow->count++] = (struct flow_frame){
		.app_limited = app_limited,
		.window = window,
		.seq = seq,
		.bytes = bytes,
		.sent_us = now_us,
		.delivered_at_send = flow->delivered,
		.delivered_us_at_send = flow->delivered_us,
	};
	flow->in_flight += bytes;
	flow->filling = (uint8_t)(flow->filling << 1 | !app_limited);
	if (flow->in_flight > flow->max_in_flight) {
		flow->max_in_flight = flow->in_flight;
	}
}

static void remove_at(struct flow *flow, uint32_t i)
{
	flow->in_flight -= flow->frames[i].bytes;
	memmove(&flow->frames[i], &flow->frames[i + 1],
		(flow->count - i - 1) * sizeof(flow->frames[0]));
	flow->count--;
}

/* The viewer presented frame seq of window and all its earlier ones. */
int64_t flow_acked(struct flow *flow, uint32_t window, uint32_t seq, uint64_t now_us)
{
	int64_t rtt;
	struct flow_frame newest = {0};
	bool found = false;
	for (uint32_t i = 0; i < flow->count;) {
		struct flow_frame *f = &flow->frames[i];
		/* seq - f->seq < 2^31: f is this frame or an earlier one. */
		if (f->window == window && (int32_t)(seq - f->seq) >= 0) {
			flow->delivered += f->bytes;
			newest = *f;
			found = true;
			remove_at(flow, i);
			continue;
		}
		i++;
	}
	if (!found) {
		return -1;
	}
	flow->delivered_us = now_us;
	rtt = (int64_t)(now_us - newest.sent_us);
	if (flow->min_rtt_us == 0 || (uint64_t)rtt < flow->min_rtt_us ||
		now_us - flow->min_rtt_stamp_us > MIN_RTT_WINDOW_US) {
		flow->min_rtt_us = (uint64_t)rtt > 0 ? (uint64_t)rtt : 1;
		flow->min_rtt_stamp_us = now_us;
	}
	/* Delivery rate: bytes acknowledged since this frame was sent, over
	 * the time from the ack before it was sent until now. */
	uint64_t since = newest.delivered_us_at_send;
	uint64_t interval = now_us - since; /* at least the round trip */
	if (interval > 0) {
		uint64_t bytes = flow->delivered - newest.delivered_at_send;
		uint64_t rate = bytes * 1000000 / interval;
		if (!newest.app_limited || rate >= max_rate(flow)) {
			flow->rate_samples[flow->next_sample++ % FLOW_RATE_SAMPLES] = rate;
		}
		flow->measured = flow->measured || !newest.app_limited;
	}
	if (now_us - flow->probe_stamp_us > PROBE_INTERVAL_US) {
		if (flow->filling) {
			uint64_t span = flow->min_rtt_us + flow->min_rtt_us / 2;
			flow->probe_until_us = now_us + (span > PROBE_MIN_US ? span : PROBE_MIN_US);
		}
		flow->probe_stamp_us = now_us;
	}
	return rtt;
}

void flow_forget_window(struct flow *flow, uint32_t window)
{
	for (uint32_t i = 0; i < flow->count;) {
		if (flow->frames[i].window == window) {
			remove_at(flow, i);
			continue;
		}
		i++;
	}
}

uint64_t flow_rate(const struct flow *flow)
{
	return max_rate(flow);
}
