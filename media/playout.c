/*
 * The receiving end of a sound stream (playout.h).
 */
#include <opus.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "playout.h"

#define PACE_WINDOW_US 1000000

bool playout_init(struct playout *p)
{
	*p = (struct playout){.rate = 1.0, .frame_samples = AUDIO_FRAME_SAMPLES};
	int err;
	p->decoder = opus_decoder_create(WIRE_AUDIO_RATE, WIRE_AUDIO_CHANNELS, &err);
	p->slots = calloc(PLAYOUT_SLOTS, sizeof(*p->slots));
	if (!p->decoder || !p->slots) {
		playout_finish(p);
		return false;
	}
	return true;
}

void playout_finish(struct playout *p)
{
	if (p->decoder) {
		opus_decoder_destroy(p->decoder);
	}
	free(p->slots);
	p->decoder = NULL;
	p->slots = NULL;
}

static struct playout_slot *slot(struct playout *p, uint32_t seq)
{
	struct playout_slot *s = &p->slots[seq % PLAYOUT_SLOTS];
	return s->have && s->seq == seq ? s : NULL;
}

void playout_reset(struct playout *p)
{
	for (int i = 0; i < PLAYOUT_SLOTS; i++) {
		p->slots[i].have = false;
	}
	p->started = false;
	p->ended = false;
	p->owed = 0;
	p->stalled = 0;
}

int playout_waiting(const struct playout *p)
{
	if (!p->started) {
		return 0;
	}
	int n = 0;
	for (int i = 0; i < PLAYOUT_SLOTS; i++) {
		const struct playout_slot *s = &p->slots[i];
		n += s->have && s->seq - p->cursor < PLAYOUT_SLOTS;
	}
	return n;
}

bool playout_put(struct playout *p, uint32_t seq, uint64_t time_us, const uint8_t *data,
	uint16_t size)
{
	if (size == 0 || size > WIRE_MAX_AUDIO) {
		return false;
	}
	int32_t ahead = (int32_t)(seq - p->cursor);
	if (p->started && ahead < 0 && ahead > -PLAYOUT_SLOTS) {
		p->late++; /* its time was concealed already */
		return false;
	}
	if (!p->started || ahead < 0 || ahead >= PLAYOUT_SLOTS) {
		/* The first packet, or one so far off that what is held is of
		 * another time (a sender that started again): a fresh run. */
		playout_reset(p);
		p->started = true;
		p->cursor = seq;
		p->newest = seq;
	}
	if (p->ended && (int32_t)(seq - p->end_seq) > 0) {
		p->ended = false; /* the next run follows on */
	}
	struct playout_slot *s = &p->slots[seq % PLAYOUT_SLOTS];
	s->have = true;
	s->seq = seq;
	s->size = size;
	s->time_us = time_us;
	memcpy(s->data, data, size);
	if ((int32_t)(seq - p->newest) > 0) {
		p->newest = seq;
	}
	return true;
}

void playout_end(struct playout *p, uint32_t seq)
{
	p->ended = true;
	p->end_seq = seq;
}

static int decode(struct playout *p, const uint8_t *data, int size, bool fec, int16_t *pcm)
{
	/* A concealed frame is as long as the last one; a packet says its own. */
	int most = fec || !data ? p->frame_samples : WIRE_AUDIO_MAX_SAMPLES;
	int n = opus_decode(p->decoder, data, size, pcm, most, fec);
	if (n <= 0 && data) {
		/* A packet Opus cannot read is a lost one. */
		n = opus_decode(p->decoder, NULL, 0, pcm, p->frame_samples, 0);
	}
	return n > 0 ? n : 0;
}

/* The packet at the cursor played or given up: the cursor moves on. */
static void advance(struct playout *p)
{
	struct playout_slot *s = slot(p, p->cursor);
	if (s) {
		s->have = false;
	}
	p->cursor++;
}

/* Whether a packet after the cursor is held, so the one at the cursor is
 * known lost (a stream never reorders; a datagram link may, and then the
 * caller waits for urgent before this matters). */
static bool later_held(const struct playout *p)
{
	return p->started && (int32_t)(p->newest - p->cursor) > 0;
}

int playout_next(struct playout *p, bool urgent, int16_t *pcm, uint64_t *time_us)
{
	*time_us = 0;
	if (!p->started) {
		return 0;
	}
	for (;;) {
		struct playout_slot *s = slot(p, p->cursor);
		if (s) {
			int n = decode(p, s->data, s->size, false, pcm);
			*time_us = s->time_us;
			advance(p);
			p->owed = 0;
			p->stalled = 0;
			if (n > 0) {
				p->frame_samples = n;
			}
			return n;
		}
		if (!urgent) {
			return 0;
		}
		if (later_held(p)) {
			p->lost++;
			if (p->owed > 0) {
				/* Its time was already filled while we waited. */
				p->owed--;
				advance(p);
				continue;
			}
			/* The next packet may carry this one again, coarser. */
			struct playout_slot *next = slot(p, p->cursor + 1);
			int n = next ? decode(p, next->data, next->size, true, pcm)
				     : decode(p, NULL, 0, false, pcm);
			p->recovered += next != NULL;
			p->concealed++;
			advance(p);
			return n;
		}
		if ((p->ended && (int32_t)(p->cursor - p->end_seq) > 0) ||
			p->stalled >= PLAYOUT_STALL_FRAMES) {
			return 0;
		}
		/* Late: stand in for it, and play it when it comes. */
		p->owed++;
		p->stalled++;
		p->concealed++;
		return decode(p, NULL, 0, false, pcm);
	}
}

bool playout_skip(struct playout *p, int16_t *pcm)
{
	struct playout_slot *s = p->started ? slot(p, p->cursor) : NULL;
	if (!s) {
		return false;
	}
	decode(p, s->data, s->size, false, pcm);
	advance(p);
	p->late++;
	return true;
}

double playout_pace(struct playout *p, int64_t waiting_us, int64_t target_us, uint64_t now_us)
{
	/* Time stood in for a late packet is time the buffer was short by. */
	int64_t deficit = (int64_t)p->owed * (int64_t)audio_samples_us((uint64_t)p->frame_samples);
	p->deficit_us = deficit > p->deficit_us ? deficit : p->deficit_us;
	p->waited_us += waiting_us;
	p->samples++;
	if (!p->window_at_us) {
		p->window_at_us = now_us;
	}
	if (now_us - p->window_at_us < PACE_WINDOW_US) {
		return p->rate;
	}
	/* A second that needed a stand-in grows the margin by what it
	 * needed; it shrinks only after several seconds that needed none, so
	 * one calm second after a stall does not undo the room it showed. */
	if (p->deficit_us > 0) {
		p->margin_us += p->deficit_us;
		p->margin_us =
			p->margin_us > PLAYOUT_MARGIN_MAX_US ? PLAYOUT_MARGIN_MAX_US : p->margin_us;
		p->calm = 0;
	} else if (++p->calm >= PLAYOUT_PACE_MEMORY) {
		p->margin_us = p->margin_us * 3 / 4;
	}
	/* Half the difference played away in the next second. */
	int64_t mean = p->waited_us / p->samples;
	double rate = 1.0 + (double)(mean - target_us - p->margin_us) / 2e6;
	if (rate > 1.0 + PLAYOUT_RATE_MAX) {
		rate = 1.0 + PLAYOUT_RATE_MAX;
	} else if (rate < 1.0 - PLAYOUT_RATE_MAX) {
		rate = 1.0 - PLAYOUT_RATE_MAX;
	}
	p->rate = rate;
	p->window_at_us = now_us;
	p->waited_us = 0;
	p->samples = 0;
	p->deficit_us = 0;
	return p->rate;
}
