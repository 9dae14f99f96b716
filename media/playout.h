/*
 * The receiving end of a sound stream: a jitter buffer of Opus packets in
 * sequence order that hands out 10 ms frames to play, conceals what is lost
 * or late (Opus's in-band FEC from the next packet where it has some, its
 * packet loss concealment otherwise) and says how fast to play so that what
 * waits follows the link's jitter. It never cuts or splices sound: a lost
 * packet is concealed, a late one stretches the stream (the concealment
 * stands in until it comes), and too much waiting is played away a little
 * faster. No I/O: the caller feeds packets and asks for frames.
 */
#ifndef RCOMP_PLAYOUT_H
#define RCOMP_PLAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

#define PLAYOUT_SLOTS 64 /* packets: 640 ms of 10 ms frames */
/* Concealment in a row before the stream is let run dry: past this the
 * sound has stopped, not stuttered (and Opus's concealment has faded). */
#define PLAYOUT_STALL_FRAMES 20
#define PLAYOUT_RATE_MAX 0.02 /* the most the pace moves from 1 */
#define PLAYOUT_PACE_MEMORY 4 /* calm seconds before the margin shrinks */
#define PLAYOUT_MARGIN_MAX_US 150000

struct OpusDecoder;

struct playout_slot {
	bool have;
	uint32_t seq;
	uint16_t size;
	uint64_t time_us;
	uint8_t data[WIRE_MAX_AUDIO];
};

struct playout {
	struct OpusDecoder *decoder;
	struct playout_slot *slots; /* PLAYOUT_SLOTS, by seq modulo */
	bool started; /* cursor means something */
	uint32_t cursor; /* the next sequence number to play */
	uint32_t newest; /* the highest sequence number held */
	bool ended;
	uint32_t end_seq; /* with ended: the last packet of the run */
	int owed; /* concealed frames played while nothing was known lost */
	int stalled; /* concealed frames in a row */
	int frame_samples; /* of the last frame: what a concealment is */

	/* The pace, over windows of a second: what waited on average, the
	 * most stood in for in a row, and the margin jitter has shown. */
	uint64_t window_at_us;
	int64_t waited_us;
	int64_t samples;
	int64_t deficit_us;
	int64_t margin_us;
	int calm; /* windows in a row with nothing stood in for */
	double rate; /* 1: as sent; above: played faster */

	/* Counts for --stats, cleared by the caller. */
	uint32_t lost; /* packets that never came */
	uint32_t late; /* packets that came after their time */
	uint32_t concealed; /* frames played that no packet gave */
	uint32_t recovered; /* of those, from the next packet's FEC */
};

bool playout_init(struct playout *p);
void playout_finish(struct playout *p);

/* A packet from the link. False if it came too late to be played (or
 * cannot be held); it is then counted and dropped. */
bool playout_put(struct playout *p, uint32_t seq, uint64_t time_us, const uint8_t *data,
	uint16_t size);
/* The sender's run of sound ended with seq: play out, conceal no further. */
void playout_end(struct playout *p, uint32_t seq);
/* Nothing to play and nothing owed: the next packet begins a fresh run. */
void playout_reset(struct playout *p);
/* Packets held and not yet played. */
int playout_waiting(const struct playout *p);

/*
 * The next frame into pcm (WIRE_AUDIO_MAX_SAMPLES per channel, interleaved),
 * or 0 when there is nothing to play yet. urgent: the listener runs out of
 * sound unless a frame is written now, so conceal rather than wait. *time_us
 * is the sender's stamp of a frame a packet gave, 0 for a concealed one.
 */
int playout_next(struct playout *p, bool urgent, int16_t *pcm, uint64_t *time_us);
/* A frame that must go to keep latency bounded: decoded (so the decoder
 * keeps step) and thrown away. False if none is held. */
bool playout_skip(struct playout *p, int16_t *pcm);

/*
 * The pace to play at, from what waits (waiting_us, measured as packets
 * arrive and as the listener asks for more): over each second its mean is
 * compared with target_us plus a margin, and the rate is set to play half
 * the difference away in the next second, within PLAYOUT_RATE_MAX. The
 * margin grows by the longest run stood in for a late packet in a second,
 * and shrinks by a quarter after PLAYOUT_PACE_MEMORY seconds without one.
 * A clock that runs apart at the two ends and a jitter that changes are
 * both followed this way, with no sample cut.
 */
double playout_pace(struct playout *p, int64_t waiting_us, int64_t target_us, uint64_t now_us);

#endif
