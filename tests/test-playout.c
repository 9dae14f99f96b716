/*
 * Unit tests of the sound playout (media/playout.c): real Opus packets of
 * a tone in, frames out, with packets lost, late, ended and out of reach.
 */
#include <math.h>
#include <opus.h>
#include <stdlib.h>

#include "audio.h"
#include "check.h"
#include "playout.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define TONE_PACKETS 64

struct packet {
	uint8_t data[AUDIO_PACKET_MAX];
	int size;
};

static struct packet tone[TONE_PACKETS];
static int16_t pcm[WIRE_AUDIO_MAX_SAMPLES * WIRE_AUDIO_CHANNELS];

/* 640 ms of a 440 Hz tone as 10 ms Opus packets, as rcomp-run makes them. */
static void make_tone(void)
{
	int err;
	OpusEncoder *enc = opus_encoder_create(WIRE_AUDIO_RATE, WIRE_AUDIO_CHANNELS,
		OPUS_APPLICATION_RESTRICTED_LOWDELAY, &err);
	CHECK(enc != NULL);
	opus_encoder_ctl(enc, OPUS_SET_BITRATE(AUDIO_BITRATE));
	int16_t frame[AUDIO_FRAME_SAMPLES * WIRE_AUDIO_CHANNELS];
	for (int k = 0; k < TONE_PACKETS; k++) {
		for (int i = 0; i < AUDIO_FRAME_SAMPLES; i++) {
			double t = (double)(k * AUDIO_FRAME_SAMPLES + i) / WIRE_AUDIO_RATE;
			int16_t v = (int16_t)(16000 * sin(2 * M_PI * 440 * t));
			frame[2 * i] = frame[2 * i + 1] = v;
		}
		tone[k].size = opus_encode(enc, frame, AUDIO_FRAME_SAMPLES, tone[k].data,
			sizeof(tone[k].data));
		CHECK(tone[k].size > 2);
	}
	opus_encoder_destroy(enc);
}

static bool put(struct playout *p, uint32_t seq)
{
	return playout_put(p, seq, 1000000 + (uint64_t)seq * 10000, tone[seq % TONE_PACKETS].data,
		(uint16_t)tone[seq % TONE_PACKETS].size);
}

/* The loudest sample of a frame: concealment of a steady tone stays loud. */
static int peak(int samples)
{
	int m = 0;
	for (int i = 0; i < samples * WIRE_AUDIO_CHANNELS; i++) {
		m = abs(pcm[i]) > m ? abs(pcm[i]) : m;
	}
	return m;
}

static void test_in_order(void)
{
	struct playout p;
	CHECK(playout_init(&p));
	uint64_t t;
	CHECK(playout_next(&p, true, pcm, &t) == 0); /* nothing yet, nothing made up */
	for (uint32_t seq = 100; seq < 110; seq++) {
		CHECK(put(&p, seq));
	}
	CHECK(playout_waiting(&p) == 10);
	for (uint32_t seq = 100; seq < 110; seq++) {
		CHECK(playout_next(&p, false, pcm, &t) == AUDIO_FRAME_SAMPLES);
		CHECK(t == 1000000 + (uint64_t)seq * 10000);
	}
	CHECK(playout_next(&p, false, pcm, &t) == 0);
	CHECK(p.lost == 0 && p.concealed == 0 && p.late == 0);
	playout_finish(&p);
}

static void test_lost_is_concealed(void)
{
	struct playout p;
	CHECK(playout_init(&p));
	uint64_t t;
	for (uint32_t seq = 0; seq < 8; seq++) {
		CHECK(put(&p, seq));
		CHECK(playout_next(&p, false, pcm, &t) == AUDIO_FRAME_SAMPLES);
	}
	/* 8 and 9 never come; 10 does. Not urgent: wait, it may be late. */
	CHECK(put(&p, 10));
	CHECK(playout_next(&p, false, pcm, &t) == 0);
	/* Urgent: 8 from concealment, 9 from 10's FEC or concealment, then 10. */
	CHECK(playout_next(&p, true, pcm, &t) == AUDIO_FRAME_SAMPLES && t == 0);
	CHECK(peak(AUDIO_FRAME_SAMPLES) > 4000);
	CHECK(playout_next(&p, true, pcm, &t) == AUDIO_FRAME_SAMPLES && t == 0);
	CHECK(playout_next(&p, true, pcm, &t) == AUDIO_FRAME_SAMPLES && t != 0);
	CHECK(p.lost == 2 && p.concealed == 2 && p.recovered == 1);
	playout_finish(&p);
}

static void test_late_stretches(void)
{
	struct playout p;
	CHECK(playout_init(&p));
	uint64_t t;
	for (uint32_t seq = 0; seq < 8; seq++) {
		CHECK(put(&p, seq));
		CHECK(playout_next(&p, false, pcm, &t) == AUDIO_FRAME_SAMPLES);
	}
	/* 8 is late: two frames stand in for it, then it plays itself. */
	CHECK(playout_next(&p, true, pcm, &t) == AUDIO_FRAME_SAMPLES && t == 0);
	CHECK(playout_next(&p, true, pcm, &t) == AUDIO_FRAME_SAMPLES && t == 0);
	CHECK(put(&p, 8));
	CHECK(playout_next(&p, true, pcm, &t) == AUDIO_FRAME_SAMPLES);
	CHECK(t == 1000000 + 8 * 10000);
	CHECK(p.lost == 0 && p.concealed == 2 && p.late == 0);
	/* Concealment that stood in while 9 was awaited, when 9 proves lost,
	 * is its time: 10 follows at once. */
	CHECK(playout_next(&p, true, pcm, &t) == AUDIO_FRAME_SAMPLES && t == 0);
	CHECK(put(&p, 10));
	CHECK(playout_next(&p, true, pcm, &t) == AUDIO_FRAME_SAMPLES);
	CHECK(t == 1000000 + 10 * 10000);
	CHECK(p.lost == 1 && p.concealed == 3);
	/* A packet whose time was played is dropped. */
	CHECK(!put(&p, 9) && p.late == 1);
	playout_finish(&p);
}

static void test_stall_and_end(void)
{
	struct playout p;
	CHECK(playout_init(&p));
	uint64_t t;
	CHECK(put(&p, 0));
	CHECK(playout_next(&p, true, pcm, &t) == AUDIO_FRAME_SAMPLES);
	int concealed = 0;
	while (playout_next(&p, true, pcm, &t) > 0) {
		concealed++;
		CHECK(concealed <= PLAYOUT_STALL_FRAMES);
		if (concealed > PLAYOUT_STALL_FRAMES) {
			break;
		}
	}
	CHECK(concealed == PLAYOUT_STALL_FRAMES);
	/* The next run plays as soon as it comes. */
	CHECK(put(&p, 1));
	CHECK(playout_next(&p, true, pcm, &t) == AUDIO_FRAME_SAMPLES && t != 0);
	/* An ended run is not concealed past its end. */
	CHECK(put(&p, 2));
	playout_end(&p, 2);
	CHECK(playout_next(&p, true, pcm, &t) == AUDIO_FRAME_SAMPLES);
	CHECK(playout_next(&p, true, pcm, &t) == 0);
	/* A packet far ahead starts a fresh run. */
	CHECK(put(&p, 5000));
	CHECK(playout_next(&p, false, pcm, &t) == AUDIO_FRAME_SAMPLES);
	CHECK(t == 1000000 + 5000 * 10000);
	/* Bytes a peer sent that no packet can be are refused. */
	CHECK(!playout_put(&p, 5001, 0, tone[0].data, 0));
	CHECK(!playout_put(&p, 5001, 0, tone[0].data, WIRE_MAX_AUDIO + 1));
	playout_finish(&p);
}

static void test_pace(void)
{
	struct playout p;
	CHECK(playout_init(&p));
	uint64_t now = 1000;
	/* Steady at the target: as sent. */
	for (int i = 0; i < 300; i++, now += 10000) {
		CHECK(playout_pace(&p, 15000, 15000, now) == 1.0);
	}
	/* Twenty ms more than needed waits all along: faster, within bounds. */
	double rate = 1.0;
	for (int i = 0; i < 300; i++, now += 10000) {
		rate = playout_pace(&p, 35000, 15000, now);
	}
	CHECK(rate > 1.0 && rate <= 1.0 + PLAYOUT_RATE_MAX);
	/* Far too little: slower, no further than the bound. */
	for (int i = 0; i < 300; i++, now += 10000) {
		rate = playout_pace(&p, -500000, 15000, now);
	}
	CHECK(rate == 1.0 - PLAYOUT_RATE_MAX);
	/* A late packet stood in for: the margin grows by it, so what was
	 * enough before is now too little, until calm seconds shrink it. */
	uint64_t t;
	CHECK(put(&p, 0));
	CHECK(playout_next(&p, false, pcm, &t) > 0);
	for (int i = 0; i < 5; i++) {
		CHECK(playout_next(&p, true, pcm, &t) > 0); /* 50 ms stood in */
	}
	for (int i = 0; i < 101; i++, now += 10000) {
		rate = playout_pace(&p, 15000, 15000, now);
	}
	CHECK(p.margin_us >= 50000 && rate < 1.0);
	CHECK(put(&p, 1));
	CHECK(playout_next(&p, true, pcm, &t) > 0 && p.owed == 0);
	for (int i = 0; i < 1000; i++, now += 10000) {
		rate = playout_pace(&p, 15000, 15000, now);
	}
	CHECK(p.margin_us < 50000 && rate > 1.0 - PLAYOUT_RATE_MAX);
	playout_finish(&p);
}

int main(int argc, char **argv)
{
	make_tone();
	static const struct check_case cases[] = {
		{"in_order", test_in_order},
		{"lost", test_lost_is_concealed},
		{"late", test_late_stretches},
		{"stall", test_stall_and_end},
		{"pace", test_pace},
	};
	return check_main(argc, argv, cases, N(cases));
}
