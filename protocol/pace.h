/*
 * Pacing one direction of a connection. The peer acknowledges the bytes it
 * has read (link_ack); from the acks come, in the manner of BBR, the
 * delivery rate (bytes acknowledged over the time they took, the largest
 * recent sample) and the minimum round trip. Bytes unacknowledged are kept
 * near their product, so what waits in kernel buffers, ssh's pipe or a slow
 * link is about one round trip's worth, and a key press queued now is
 * written behind at most that, not behind seconds of a paste.
 */
#ifndef RCOMP_PACE_H
#define RCOMP_PACE_H

#include <stdbool.h>
#include <stdint.h>

#define PACE_WRITES 64
#define PACE_SAMPLES 16

struct pace_write {
	uint64_t end; /* pace::sent after it */
	uint64_t sent_us;
	uint64_t delivered; /* pace::delivered when it was written */
	uint64_t delivered_us; /* the time of that ack (or of the write) */
	bool app_limited; /* written with room to spare */
};

struct pace {
	uint64_t sent, delivered; /* bytes written, bytes the peer has read */
	uint64_t delivered_us;
	struct pace_write writes[PACE_WRITES]; /* unacknowledged, oldest first */
	uint32_t nwrites;
	struct {
		uint64_t rate; /* bytes per second */
		uint64_t at_us;
	} samples[PACE_SAMPLES];
	uint32_t next_sample;
	uint64_t min_rtt_us, min_rtt_stamp_us;
	/* Now and then the pipe is drained for a moment, so that a standing
	 * queue cannot pass for the round trip (BBR's ProbeRTT). */
	bool probing;
	uint8_t filling; /* a bit a write, newest lowest: it reached the limit */
	/* A write the link limited was acknowledged: the rate is a measure of
	 * the link, not only a floor under it. */
	bool measured;
	uint64_t probe_due_us; /* when the next probe starts */
	uint64_t probe_start_us;
	uint64_t probe_mark; /* sent, when the pipe had drained: its ack ends the probe */
};

void pace_init(struct pace *pace);
/* Bytes written and not yet acknowledged. */
static inline uint64_t pace_in_flight(const struct pace *pace)
{
	return pace->sent - pace->delivered;
}
/* Bytes per second; 0 before any estimate. */
uint64_t pace_rate(const struct pace *pace);
/* The most bytes that may be unacknowledged. */
uint64_t pace_limit(const struct pace *pace);
/* How much may be written now: at least one record's worth when nothing
 * is in flight, so a connection never stalls. */
uint64_t pace_budget(const struct pace *pace);
/* The size of one record: a few milliseconds of the link, 1 to 16 KiB, so
 * a lower class delays a higher one by little on any link. */
uint32_t pace_chunk(const struct pace *pace);
/* bytes were written; more_waiting: something is still queued. */
void pace_wrote(struct pace *pace, uint64_t bytes, bool more_waiting, uint64_t now_us);
/* The peer has read received bytes in all. False if it claims more than
 * was ever written: a protocol error. */
bool pace_acked(struct pace *pace, uint64_t received, uint64_t now_us);

#endif
