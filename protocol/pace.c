/*
 * Pacing from acknowledged bytes; see pace.h.
 *
 * A write made while the pipe had room and nothing else waited is
 * app-limited: its delivery rate tells what we sent, not what the link
 * carries, so it may raise the estimate but never lower it. The estimate is
 * the largest sample of the last few round trips counted back from the
 * newest sample the link limited, so when the link slows the old rate ages
 * out within about a second, and while an app sends little the rate the
 * link last showed is kept.
 */
#include <string.h>

#include "pace.h"

/* Before any estimate: enough to start on any link without flooding it. */
#define INITIAL_LIMIT (32 * 1024)
/* Never less: a few records, and more than the peer reads between acks. */
#define MIN_LIMIT (4 * 1024)
#define MIN_RTT_US 2000
/* Unacknowledged bytes over rate x minimum round trip: 1.5. Above 1 the
 * pipe stays full while acks are late, and the rate estimate can grow; what
 * is over 1 waits in the bottleneck's queue, half a round trip of delay.
 * Measured with a paste at 1 Mbit/s, 20 ms: 2 let a key wait 59 ms (median),
 * 1.5 32 ms, both at 95% of the link. */
#define GAIN_NUM 3
#define GAIN_DEN 2
/* Samples this many minimum round trips older than the newest are
 * forgotten, within these bounds. */
#define RATE_WINDOW_RTTS 10
#define RATE_WINDOW_MIN_US (200 * 1000)
#define RATE_WINDOW_MAX_US (1000 * 1000)
/* The minimum round trip expires, so path changes take effect. */
#define MIN_RTT_WINDOW_US (10 * 1000 * 1000)
/* A probe drains the pipe to MIN_LIMIT every PROBE_INTERVAL_US, the first
 * soon after the first ack (the first burst may have queued), and ends when
 * a write made after the drain is acknowledged, or after PROBE_MAX_US.
 * Only a writer that filled its limit in one of its last writes can have
 * built a queue: one that writes less than the link carries (a game's
 * video on a fast link) is not held back for it. */
#define PROBE_FIRST_US (500 * 1000)
#define PROBE_INTERVAL_US (3 * 1000 * 1000)
#define PROBE_MAX_US (500 * 1000)
/* A record carries about this much of the link's time. */
#define CHUNK_US 8000
#define CHUNK_MIN 1024
#define CHUNK_MAX 16384

void pace_init(struct pace *pace)
{
	memset(pace, 0, sizeof(*pace));
}

static uint64_t rate_window(const struct pace *pace)
{
	uint64_t window = pace->min_rtt_us * RATE_WINDOW_RTTS;
	if (window < RATE_WINDOW_MIN_US) {
		return RATE_WINDOW_MIN_US;
	}
	return window > RATE_WINDOW_MAX_US ? RATE_WINDOW_MAX_US : window;
}

uint64_t pace_rate(const struct pace *pace)
{
	uint64_t newest = 0, best = 0;
	for (int i = 0; i < PACE_SAMPLES; i++) {
		if (pace->samples[i].at_us > newest) {
			newest = pace->samples[i].at_us;
		}
	}
	uint64_t window = rate_window(pace);
	for (int i = 0; i < PACE_SAMPLES; i++) {
		if (pace->samples[i].at_us + window >= newest && pace->samples[i].rate > best) {
			best = pace->samples[i].rate;
		}
	}
	return best;
}

uint64_t pace_limit(const struct pace *pace)
{
	if (pace->probing) {
		return MIN_LIMIT;
	}
	uint64_t rate = pace_rate(pace);
	if (rate == 0 || pace->min_rtt_us == 0) {
		return INITIAL_LIMIT;
	}
	/* Below a few milliseconds the round trip is the two programs' turns
	 * of their event loops more than the link: count at least that. */
	uint64_t rtt = pace->min_rtt_us > MIN_RTT_US ? pace->min_rtt_us : MIN_RTT_US;
	uint64_t limit = rate * rtt / 1000000 * GAIN_NUM / GAIN_DEN;
	return limit < MIN_LIMIT ? MIN_LIMIT : limit;
}

uint32_t pace_chunk(const struct pace *pace)
{
	uint64_t rate = pace_rate(pace);
	if (rate == 0) {
		return CHUNK_MAX;
	}
	uint64_t chunk = rate * CHUNK_US / 1000000;
	if (chunk < CHUNK_MIN) {
		return CHUNK_MIN;
	}
	return chunk > CHUNK_MAX ? CHUNK_MAX : (uint32_t)chunk;
}

uint64_t pace_budget(const struct pace *pace)
{
	uint64_t in_flight = pace_in_flight(pace), limit = pace_limit(pace);
	if (in_flight == 0) {
		uint64_t chunk = pace_chunk(pace);
		return limit > chunk ? limit : chunk;
	}
	return in_flight < limit ? limit - in_flight : 0;
}

void pace_wrote(struct pace *pace, uint64_t bytes, bool more_waiting, uint64_t now_us)
{
	if (bytes == 0) {
		return;
	}
	/* While probing, the pipe is held nearly empty on purpose: that rate
	 * says nothing of the link either. */
	bool app_limited =
		pace->probing || (!more_waiting && pace_in_flight(pace) + bytes < pace_limit(pace));
	/* After an idle pipe, delivery is timed from this write, not from
	 * the last ack before the pause. */
	bool idle = pace_in_flight(pace) == 0;
	pace->filling = (uint8_t)(pace->filling << 1 | !app_limited);
	if (pace->probing && !pace->probe_mark && pace_in_flight(pace) <= MIN_LIMIT) {
		pace->probe_mark = pace->sent + bytes;
	}
	pace->sent += bytes;
	if (pace->nwrites == PACE_WRITES) {
		/* Merge into the newest: its sample then covers both writes. */
		pace->writes[PACE_WRITES - 1].end = pace->sent;
		pace->writes[PACE_WRITES - 1].app_limited &= app_limited;
		return;
	}
	pace->writes[pace->nwrites++] = (struct pace_write){
		.end = pace->sent,
		.sent_us = now_us,
		.delivered = pace->delivered,
		.delivered_us = idle || !pace->delivered_us ? now_us : pace->delivered_us,
		.app_limited = app_limited,
	};
}

static void add_sample(struct pace *pace, uint64_t rate, bool app_limited, uint64_t now_us)
{
	pace->measured = pace->measured || !app_limited;
	if (app_limited && rate < pace_rate(pace)) {
		return;
	}
	pace->samples[pace->next_sample++ % PACE_SAMPLES].rate = rate;
	pace->samples[(pace->next_sample - 1) % PACE_SAMPLES].at_us = now_us;
}

/* Starts and ends probes of the round trip. */
static void probe(struct pace *pace, uint64_t received, uint64_t now_us)
{
	if (pace->probing) {
		if ((pace->probe_mark && received >= pace->probe_mark) ||
			now_us - pace->probe_start_us > PROBE_MAX_US) {
			pace->probing = false;
			pace->probe_due_us = now_us + PROBE_INTERVAL_US;
		}
		return;
	}
	if (!pace->probe_due_us) {
		pace->probe_due_us = now_us + PROBE_FIRST_US;
	} else if (now_us >= pace->probe_due_us) {
		if (pace_in_flight(pace) <= MIN_LIMIT || !pace->filling) {
			/* Little in flight, or less than the limit: the samples
			 * are true round trips. */
			pace->probe_due_us = now_us + PROBE_INTERVAL_US;
			return;
		}
		pace->probing = true;
		pace->probe_start_us = now_us;
		pace->probe_mark = 0;
	}
}

bool pace_acked(struct pace *pace, uint64_t received, uint64_t now_us)
{
	if (received > pace->sent) {
		return false;
	}
	if (received <= pace->delivered) {
		return true; /* nothing new */
	}
	pace->delivered = received;
	pace->delivered_us = now_us;
	probe(pace, received, now_us);
	/* The newest write read whole gives the samples. */
	uint32_t done = 0;
	while (done < pace->nwrites && pace->writes[done].end <= received) {
		done++;
	}
	if (done == 0) {
		return true;
	}
	struct pace_write w = pace->writes[done - 1];
	memmove(pace->writes, pace->writes + done, (pace->nwrites - done) * sizeof(w));
	pace->nwrites -= done;

	uint64_t rtt = now_us > w.sent_us ? now_us - w.sent_us : 1;
	if (pace->min_rtt_us == 0 || rtt < pace->min_rtt_us ||
		now_us - pace->min_rtt_stamp_us > MIN_RTT_WINDOW_US) {
		pace->min_rtt_us = rtt;
		pace->min_rtt_stamp_us = now_us;
	}
	uint64_t interval = now_us - w.delivered_us;
	if (interval > 0) {
		add_sample(pace, (received - w.delivered) * 1000000 / interval, w.app_limited,
			now_us);
	}
	return true;
}
