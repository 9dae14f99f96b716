/*
 * Opus framing and the thread-to-loop packet queue (audio.h).
 */
#include <opus.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "audio.h"
#include "log.h"

bool audio_queue_init(struct audio_queue *q)
{
	*q = (struct audio_queue){0};
	q->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->fd < 0) {
		return false;
	}
	pthread_mutex_init(&q->lock, NULL);
	return true;
}

void audio_queue_finish(struct audio_queue *q)
{
	if (q->fd >= 0) {
		close(q->fd);
		pthread_mutex_destroy(&q->lock);
	}
	q->fd = -1;
}

static void wake(struct audio_queue *q)
{
	uint64_t one = 1;
	ssize_t n = write(q->fd, &one, sizeof(one));
	(void)n; /* the counter is full: the loop is woken already */
}

static void push(struct audio_queue *q, const struct audio_packet *p)
{
	pthread_mutex_lock(&q->lock);
	if (q->count == AUDIO_QUEUE) {
		/* The loop is behind: the oldest sound is the least worth. */
		q->head = (q->head + 1) % AUDIO_QUEUE;
		q->count--;
		q->dropped++;
	}
	q->packets[(q->head + q->count) % AUDIO_QUEUE] = *p;
	q->count++;
	q->end = false;
	pthread_mutex_unlock(&q->lock);
	wake(q);
}

void audio_queue_end(struct audio_queue *q, uint32_t seq)
{
	pthread_mutex_lock(&q->lock);
	q->end = true;
	q->end_seq = seq;
	pthread_mutex_unlock(&q->lock);
	wake(q);
}

bool audio_queue_pop(struct audio_queue *q, struct audio_packet *out, bool *end)
{
	bool got = true;
	*end = false;
	pthread_mutex_lock(&q->lock);
	if (q->count) {
		*out = q->packets[q->head];
		q->head = (q->head + 1) % AUDIO_QUEUE;
		q->count--;
	} else if (q->end) {
		*end = true;
		out->seq = q->end_seq;
		q->end = false;
	} else {
		uint64_t n;
		ssize_t r = read(q->fd, &n, sizeof(n));
		(void)r; /* empty: a push after this wakes the loop again */
		got = false;
	}
	pthread_mutex_unlock(&q->lock);
	return got;
}

void audio_queue_clear(struct audio_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->count = 0;
	q->end = false;
	pthread_mutex_unlock(&q->lock);
}

bool audio_framer_init(struct audio_framer *f, int application)
{
	*f = (struct audio_framer){0};
	int err;
	f->encoder = opus_encoder_create(WIRE_AUDIO_RATE, WIRE_AUDIO_CHANNELS, application, &err);
	if (!f->encoder) {
		log_error("cannot make an Opus encoder: %s", opus_strerror(err));
		return false;
	}
	opus_encoder_ctl(f->encoder, OPUS_SET_BITRATE(AUDIO_BITRATE));
	/* A third of the default effort: at this bit rate no difference a
	 * listener hears, and Opus is a third of rcomp-run's sound work. Playing
	 * a tone (tools/bench_sound.py --only cost), rcomp-run took 2.0-2.3% of
	 * a core at 5 and 1.6-1.9% at 3; the viewer 1.5% and 1.3-1.5%. */
	opus_encoder_ctl(f->encoder, OPUS_SET_COMPLEXITY(AUDIO_COMPLEXITY));
	/* Silence costs a byte or two a packet; the link is spared the rest. */
	opus_encoder_ctl(f->encoder, OPUS_SET_DTX(1));
	return true;
}

void audio_framer_finish(struct audio_framer *f)
{
	if (f->encoder) {
		opus_encoder_destroy(f->encoder);
	}
	f->encoder = NULL;
}

void audio_framer_start(struct audio_framer *f, uint64_t start_us)
{
	f->fill = 0;
	f->start_us = start_us;
	f->samples = 0;
	f->running = true;
	opus_encoder_ctl(f->encoder, OPUS_RESET_STATE);
}

static void encode(struct audio_framer *f, struct audio_queue *q)
{
	struct audio_packet p = {
		.time_us = f->start_us + audio_samples_us(f->samples),
		.seq = f->seq,
		.samples = AUDIO_FRAME_SAMPLES,
	};
	f->samples += AUDIO_FRAME_SAMPLES;
	opus_int32 n = opus_encode(f->encoder, (const opus_int16 *)f->pcm, AUDIO_FRAME_SAMPLES,
		p.data, sizeof(p.data));
	if (n < 0) {
		log_error("Opus encoding failed: %s", opus_strerror(n));
		return;
	}
	if (n <= 2) {
		/* DTX: nothing worth sending. The receiver plays silence where
		 * packets are missing. */
		return;
	}
	p.size = (uint16_t)n;
	f->seq++;
	push(q, &p);
}

void audio_framer_push(struct audio_framer *f, const void *data, size_t bytes,
	struct audio_queue *q)
{
	const uint8_t *in = data;
	while (bytes) {
		size_t take = AUDIO_FRAME_BYTES - f->fill;
		if (take > bytes) {
			take = bytes;
		}
		if (in) {
			memcpy(f->pcm + f->fill, in, take);
			in += take;
		} else {
			memset(f->pcm + f->fill, 0, take); /* a hole the server reported */
		}
		f->fill += take;
		bytes -= take;
		if (f->fill == AUDIO_FRAME_BYTES) {
			encode(f, q);
			f->fill = 0;
		}
	}
}

void audio_framer_stop(struct audio_framer *f, struct audio_queue *q)
{
	if (f->running) {
		/* The last partial frame, and what Opus holds back as its
		 * lookahead, go out padded with silence: the tail is played,
		 * never cut. */
		if (f->fill) {
			audio_framer_push(f, NULL, AUDIO_FRAME_BYTES - f->fill, q);
		}
		audio_framer_push(f, NULL, AUDIO_FRAME_BYTES, q);
		audio_queue_end(q, f->seq - 1);
	}
	f->running = false;
	f->fill = 0;
}
