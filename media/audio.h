/*
 * Sound as both programs carry it: Opus packets of 10 ms, 48 kHz stereo,
 * made from PCM a sound server hands over on its own thread, and a small
 * bounded queue that takes them from that thread to the event loop (an
 * eventfd says when). rcomp-run sends the apps' sound this way, rcomp-view
 * its microphone.
 */
#ifndef RCOMP_AUDIO_H
#define RCOMP_AUDIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define AUDIO_FRAME_SAMPLES 480 /* per channel: 10 ms */
#define AUDIO_SAMPLE_BYTES (2 * WIRE_AUDIO_CHANNELS) /* s16le, interleaved */
#define AUDIO_FRAME_BYTES (AUDIO_FRAME_SAMPLES * AUDIO_SAMPLE_BYTES)
#define AUDIO_BITRATE 96000 /* bit/s: music stays clean, well under 128 */
#define AUDIO_COMPLEXITY 3 /* of Opus's 0-10 */
#define AUDIO_PACKET_MAX 1276 /* Opus's own bound for one frame */
#define AUDIO_QUEUE 16 /* packets: 160 ms, then the oldest goes */

static inline uint64_t audio_samples_us(uint64_t samples)
{
	return samples * 1000000 / WIRE_AUDIO_RATE;
}

struct audio_packet {
	uint64_t time_us;
	uint32_t seq;
	uint16_t samples, size;
	uint8_t data[AUDIO_PACKET_MAX];
};

/* From the sound server's thread to the event loop. */
struct audio_queue {
	pthread_mutex_t lock;
	struct audio_packet packets[AUDIO_QUEUE];
	unsigned head, count;
	bool end; /* the stream stopped after the queued packets */
	uint32_t end_seq;
	uint64_t dropped; /* packets the event loop did not take in time */
	int fd; /* eventfd: readable while something is queued */
};

bool audio_queue_init(struct audio_queue *q);
void audio_queue_finish(struct audio_queue *q);
/* Takes the next packet (true), or the stream's end (true, *end set), or
 * nothing (false). Clears the eventfd once empty. */
bool audio_queue_pop(struct audio_queue *q, struct audio_packet *out, bool *end);
/* Forgets what is queued: nobody listens now. */
void audio_queue_clear(struct audio_queue *q);
void audio_queue_end(struct audio_queue *q, uint32_t seq);

struct OpusEncoder;

/* Cuts PCM into 10 ms frames and encodes each into the queue. */
struct audio_framer {
	struct OpusEncoder *encoder;
	uint8_t pcm[AUDIO_FRAME_BYTES];
	size_t fill;
	uint64_t start_us; /* the time of the stream's first sample */
	uint64_t samples; /* encoded since */
	uint32_t seq;
	bool running;
};

/* For the given Opus application (OPUS_APPLICATION_*). */
bool audio_framer_init(struct audio_framer *f, int application);
void audio_framer_finish(struct audio_framer *f);
/* The stream (re)starts; its first sample was taken at start_us. */
void audio_framer_start(struct audio_framer *f, uint64_t start_us);
/* bytes of s16le stereo; whole frames go to the queue. */
void audio_framer_push(struct audio_framer *f, const void *data, size_t bytes,
	struct audio_queue *q);
/* The stream stopped: a partial frame is padded with silence and sent, as
 * is one more of silence (Opus's lookahead), then the queue is told. */
void audio_framer_stop(struct audio_framer *f, struct audio_queue *q);

#endif
