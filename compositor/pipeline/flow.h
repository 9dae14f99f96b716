/* Flow control for the viewer connection: frames in flight, delivery rate
 * and round-trip estimates, and the bound on bytes in flight. */
#ifndef RCOMP_FLOW_H
#define RCOMP_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#define FLOW_MAX_FRAMES 64
#define FLOW_RATE_SAMPLES 16

struct flow_frame {
	uint32_t window, seq, bytes;
	uint64_t sent_us;
	uint64_t delivered_at_send; /* flow::delivered when it was sent */
	uint64_t delivered_us_at_send; /* time of the last ack before it was sent */
	bool app_limited; /* sent with room to spare: its rate says little of the link */
};

struct flow {
	struct flow_frame frames[FLOW_MAX_FRAMES]; /* unacknowledged, oldest first */
	uint32_t count;
	uint64_t in_flight; /* bytes of those frames */
	uint64_t max_in_flight; /* the most ever, for stats and tests */
	uint64_t delivered; /* bytes acknowledged in all */
	uint64_t delivered_us; /* time of the last ack */
	uint64_t rate_samples[FLOW_RATE_SAMPLES]; /* bytes per second */
	uint32_t next_sample;
	uint64_t min_rtt_us, min_rtt_stamp_us;
	uint64_t probe_until_us, probe_stamp_us; /* one frame at a time until then */
	uint8_t filling; /* a bit a frame, newest lowest: it was not app-limited */
	/* A frame the link limited was acknowledged: the rate is a measure
	 * of the link, not only a floor under it. */
	bool measured;
};

void flow_init(struct flow *flow);
bool flow_can_send(const struct flow *flow, uint64_t now_us);
/* The bound on bytes in flight: about the bandwidth-delay product. */
uint64_t flow_limit(const struct flow *flow);
uint64_t flow_rate(const struct flow *flow);
void flow_sent(struct flow *flow, uint32_t window, uint32_t seq, uint32_t bytes, uint64_t now_us);
/* Returns the round trip of the newest frame acknowledged, or -1 if the ack
 * matched no frame in flight. */
int64_t flow_acked(struct flow *flow, uint32_t window, uint32_t seq, uint64_t now_us);
/* Drops the frames of a window that is gone: they will never be acked. */
void flow_forget_window(struct flow *flow, uint32_t window);

#endif
