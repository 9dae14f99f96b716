/*
 * Unit tests of the lanes (net/lanes.c): records through a simulated
 * path that loses datagrams, with QUIC's word on each datagram played back
 * to the sender as QUIC would give it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lanes.h"
#include "records.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t rng_state = 1;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* Teaches a sender a loss rate: QUIC's word on 2000 datagrams, one in
 * `every` lost (0: none). A new sender guesses a little loss. */
static void teach(struct lanes *l, int every)
{
	for (int i = 0; i < 2000; i++) {
		if (every && i % every == 0) {
			lanes_lost(l, UINT64_MAX);
		} else {
			lanes_acked(l, UINT64_MAX);
		}
	}
}

/* One record of class cls, n bytes of payload, numbered r. */
static size_t make_record(uint8_t *out, enum channel_class cls, size_t n, unsigned r)
{
	out[0] = (uint8_t)cls;
	out[1] = 0;
	out[2] = (uint8_t)n;
	out[3] = (uint8_t)(n >> 8);
	for (size_t i = 0; i < n; i++) {
		out[CHANNEL_RECORD_HEADER + i] = (uint8_t)(i * 31 + r * 7 + cls);
	}
	return CHANNEL_RECORD_HEADER + n;
}

struct flight {
	uint64_t id;
	uint8_t data[LANES_DATAGRAM_MAX];
	size_t len;
	bool lost;
};

struct run {
	unsigned records, datagrams, lost, parity;
	bool ok;
};

/*
 * Sends `records` records of the datagram classes through a path losing
 * `loss_pct` percent, each datagram's fate told back after `delay`
 * datagrams (a round trip), and checks that the receiver hands over each
 * class's records whole and in order.
 */
static struct run send_through(unsigned records, unsigned loss_pct, unsigned delay,
	size_t max_payload, bool open_late)
{
	static const enum channel_class classes[] = {CHANNEL_CONTROL, CHANNEL_AUDIO, CHANNEL_FOCUS,
		CHANNEL_FRAMES, CHANNEL_LINK};
	struct lanes *a = lanes_new(), *b = lanes_new();
	teach(a, loss_pct ? 100 / (int)loss_pct : 0);
	struct buffer out, expect[CHANNEL_CLASSES];
	buffer_init(&out, 1u << 30);
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		buffer_init(&expect[c], 1u << 30);
	}
	struct flight *flights = calloc(4096, sizeof(*flights));
	unsigned head = 0, tail = 0; /* flights[tail..head) await their fate */
	unsigned queued = 0;
	struct run run = {.ok = true};
	bool share;
	char err[256] = "";
	uint8_t record[CHANNEL_RECORD_HEADER + CHANNEL_RECORD_MAX];
	bool opened = !open_late;
	unsigned parity_sent = 0;
	if (opened) {
		CHECK(lanes_open(b, &out, err, sizeof(err)));
	}
	for (unsigned step = 0; step < 2000000 && run.ok; step++) {
		/* Queue while the lanes take more. */
		while (queued < records) {
			enum channel_class cls = classes[rnd() % N(classes)];
			size_t n = 1 + rnd() % max_payload;
			size_t size = make_record(record, cls, n, queued);
			if (!lanes_room(a, cls)) {
				break;
			}
			CHECK(lanes_queue(a, record, size));
			buffer_append(&expect[cls], record, size);
			queued++;
		}
		if (!opened && queued == records) {
			CHECK(lanes_open(b, &out, err, sizeof(err)));
			opened = true;
		}
		/* Send one datagram if any waits and the path has room. */
		bool sent = false;
		if (head - tail < delay) {
			struct flight *f = &flights[head % 4096];
			f->len = lanes_next(a, f->data, &f->id, &share);
			if (f->len > 0) {
				lanes_commit(a, 0);
				parity_sent += f->data[2] >= f->data[1];
				f->lost = rnd() % 100 < loss_pct;
				run.datagrams++;
				run.lost += f->lost;
				if (!f->lost &&
					!lanes_receive(b, f->data, f->len, &out, err,
						sizeof(err))) {
					fprintf(stderr, "receive: %s\n", err);
					run.ok = false;
				}
				head++;
				sent = true;
			}
		}
		/* A round trip later, QUIC's word on the oldest. */
		if (head - tail >= delay || (!sent && head != tail)) {
			struct flight *f = &flights[tail % 4096];
			if (f->lost) {
				lanes_lost(a, f->id);
			} else {
				lanes_acked(a, f->id);
			}
			tail++;
		}
		if (!sent && head == tail && queued == records && lanes_idle(a)) {
			break;
		}
	}
	run.records = queued;
	run.parity = parity_sent;
	CHECK(lanes_idle(a));
	/* Each class's records, in order, in what came out. */
	struct buffer got[CHANNEL_CLASSES];
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		buffer_init(&got[c], 1u << 30);
	}
	if (!records_by_class(buffer_head(&out), buffer_size(&out), got)) {
		run.ok = false;
	}
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		if (c == CHANNEL_LINK ? !newest_records_of(&got[c], &expect[c])
				      : !same_bytes(&got[c], &expect[c])) {
			fprintf(stderr, "class %d: %zu bytes of %zu\n", c, buffer_size(&got[c]),
				buffer_size(&expect[c]));
			run.ok = false;
		}
		buffer_finish(&got[c]);
		buffer_finish(&expect[c]);
	}
	char sender[256], receiver[256];
	lanes_describe(a, sender, sizeof(sender));
	lanes_describe(b, receiver, sizeof(receiver));
	printf("%u records, %u%% loss: %u datagrams, %u lost\n  sender %s\n  receiver %s\n", queued,
		loss_pct, run.datagrams, run.lost, sender, receiver);
	buffer_finish(&out);
	free(flights);
	lanes_free(a);
	lanes_free(b);
	return run;
}

/* Without loss every record arrives, in order, with no parity. */
/* What a user is told of the loss is what was seen: nothing while too few
 * datagrams have a known fate, never the guess the sender starts from,
 * and then the share lost. */
static void test_seen_loss(void)
{
	struct lanes *l = lanes_new();
	CHECK(lanes_loss(l) > 0); /* the sender's guess, for its parity */
	CHECK(lanes_seen_loss(l) < 0);
	for (int i = 0; i < 20; i++) {
		lanes_acked(l, UINT64_MAX);
	}
	CHECK(lanes_seen_loss(l) < 0);
	teach(l, 0);
	CHECK(lanes_seen_loss(l) == 0);
	teach(l, 20);
	double seen = lanes_seen_loss(l);
	CHECK(seen > 0.04 && seen < 0.06);
	lanes_free(l);
}

static void test_clean(void)
{
	struct run r = send_through(2000, 0, 20, CHANNEL_RECORD_MAX, false);
	CHECK(r.ok);
	CHECK(r.records == 2000);
	CHECK(r.parity == 0);
}

/* Through 5%, 20% and 50% loss every record still arrives, each class
 * in order: parity rebuilds most, repairs the rest. */
static void test_loss(void)
{
	CHECK(send_through(2000, 5, 20, CHANNEL_RECORD_MAX, false).ok);
	CHECK(send_through(2000, 20, 40, 3000, false).ok);
	CHECK(send_through(500, 50, 40, 3000, false).ok);
}

/* Records made whole before the first message reached the program wait
 * for it, and then come in order. */
static void test_open_late(void)
{
	CHECK(send_through(200, 5, 20, 4000, true).ok);
}

/* Parity follows the loss measured: none on a clean path, and at 5% loss
 * enough that a record missing a shard is rebuilt without waiting. */
static void test_parity_follows_loss(void)
{
	struct lanes *a = lanes_new(), *b = lanes_new();
	uint8_t record[CHANNEL_RECORD_HEADER + CHANNEL_RECORD_MAX], dg[LANES_DATAGRAM_MAX];
	uint64_t id;
	bool share;
	size_t size = make_record(record, CHANNEL_FRAMES, 10000, 1);
	teach(a, 0);
	CHECK(lanes_queue(a, record, size));
	char err[256];
	struct buffer out;
	buffer_init(&out, 1 << 20);
	CHECK(lanes_open(b, &out, err, sizeof(err)));
	unsigned n = 0;
	size_t len;
	while ((len = lanes_next(a, dg, &id, &share)) > 0) {
		lanes_commit(a, 0);
		CHECK(lanes_receive(b, dg, len, &out, err, sizeof(err)));
		lanes_acked(a, id);
		n++;
	}
	CHECK(n == 9); /* 10004 bytes in shards of at most 1130: 9, no parity */
	CHECK(buffer_size(&out) == size);
	buffer_consume(&out, size);
	teach(a, 20); /* 5% */
	printf("measured loss %.3f\n", lanes_loss(a));
	CHECK(lanes_loss(a) > 0.03 && lanes_loss(a) < 0.07);
	CHECK(lanes_queue(a, record, size));
	/* Lose the first two data shards: the parity that follows rebuilds
	 * the record with no repair asked for. */
	unsigned sent = 0, parity = 0;
	while ((len = lanes_next(a, dg, &id, &share)) > 0) {
		lanes_commit(a, 0);
		parity += dg[2] >= dg[1];
		if (sent++ >= 2) {
			CHECK(lanes_receive(b, dg, len, &out, err, sizeof(err)));
		}
	}
	printf("%u data shards and %u parity at that loss\n", sent - parity, parity);
	CHECK(parity >= 2);
	CHECK(buffer_size(&out) == size && memcmp(buffer_head(&out), record, size) == 0);
	buffer_finish(&out);
	lanes_free(a);
	lanes_free(b);
}

/* A sender taught a clean path (one datagram a record), and a receiver
 * handing records over into out. */
static void open_pair(struct lanes **a, struct lanes **b, struct buffer *out)
{
	char err[256];
	*a = lanes_new();
	*b = lanes_new();
	buffer_init(out, 1 << 20);
	CHECK(lanes_open(*b, out, err, sizeof(err)));
	teach(*a, 0);
}

/* A frame record made after a control record (a window's frames after
 * its window_new) is held until the control record arrives, however late;
 * control never waits for frames. */
static void test_frames_wait_for_control(void)
{
	struct lanes *a, *b;
	struct buffer out;
	open_pair(&a, &b, &out);
	uint8_t record[CHANNEL_RECORD_HEADER + 64], dg[3][LANES_DATAGRAM_MAX];
	size_t len[3];
	uint64_t id;
	bool share;
	char err[256];
	size_t control = make_record(record, CHANNEL_CONTROL, 10, 1);
	CHECK(lanes_queue(a, record, control));
	size_t focus = make_record(record, CHANNEL_FOCUS, 20, 2);
	CHECK(lanes_queue(a, record, focus));
	size_t frame = make_record(record, CHANNEL_FRAMES, 30, 3);
	CHECK(lanes_queue(a, record, frame));
	for (int i = 0; i < 3; i++) {
		len[i] = lanes_next(a, dg[i], &id, &share);
		CHECK(len[i] > 0);
		lanes_commit(a, 0);
	}
	/* The frames first: nothing comes out. */
	CHECK(lanes_receive(b, dg[1], len[1], &out, err, sizeof(err)));
	CHECK(lanes_receive(b, dg[2], len[2], &out, err, sizeof(err)));
	CHECK(buffer_size(&out) == 0);
	/* The control record: it, then both frames, in the order made. */
	CHECK(lanes_receive(b, dg[0], len[0], &out, err, sizeof(err)));
	CHECK(buffer_size(&out) == control + focus + frame);
	const uint8_t *p = buffer_head(&out);
	CHECK(p && p[0] == CHANNEL_CONTROL && p[control] == CHANNEL_FOCUS &&
		p[control + focus] == CHANNEL_FRAMES);
	buffer_finish(&out);
	lanes_free(a);
	lanes_free(b);
}

/* When the peer moves, what was in flight went to its old address: the
 * record is owed again at once, as fresh parity, and the receiver rebuilds
 * it from that alone. */
static void test_moved(void)
{
	struct lanes *a, *b;
	struct buffer out;
	open_pair(&a, &b, &out);
	uint8_t record[CHANNEL_RECORD_HEADER + 64], dg[LANES_DATAGRAM_MAX];
	uint64_t id;
	bool share;
	char err[256];
	size_t size = make_record(record, CHANNEL_CONTROL, 40, 1);
	CHECK(lanes_queue(a, record, size));
	CHECK(lanes_next(a, dg, &id, &share) > 0);
	lanes_commit(a, 0); /* to the old address: never arrives */
	CHECK(lanes_next(a, dg, &id, &share) == 0);
	lanes_moved(a);
	size_t len = lanes_next(a, dg, &id, &share);
	CHECK(len > 0 && dg[2] == 1); /* a parity row, not the same bytes */
	lanes_commit(a, 0);
	CHECK(lanes_receive(b, dg, len, &out, err, sizeof(err)));
	CHECK(buffer_size(&out) == size && memcmp(buffer_head(&out), record, size) == 0);
	buffer_finish(&out);
	lanes_free(a);
	lanes_free(b);
}

/* The link's acknowledgements are newest-wins: one made stale by a newer
 * one is never repaired, even when lost; the newest is, if lost; the
 * receiver hands over only records newer than the last, so a stale one
 * that comes late is dropped. None gets parity, whatever the loss. */
static void test_link_newest_wins(void)
{
	struct lanes *a, *b;
	struct buffer out;
	open_pair(&a, &b, &out);
	teach(a, 10); /* 10% loss: other lanes would get parity */
	uint8_t rec[3][CHANNEL_RECORD_HEADER + 16], dg[3][LANES_DATAGRAM_MAX],
		spare[LANES_DATAGRAM_MAX];
	size_t size[3], len[3];
	uint64_t id[3], spare_id;
	bool share;
	char err[256];
	for (int i = 0; i < 3; i++) {
		size[i] = make_record(rec[i], CHANNEL_LINK, 12, (unsigned)i);
	}
	/* The first goes, and is lost; the second goes and arrives. */
	CHECK(lanes_queue(a, rec[0], size[0]));
	len[0] = lanes_next(a, dg[0], &id[0], &share);
	CHECK(len[0] > 0 && dg[0][2] < dg[0][1]);
	lanes_commit(a, 0);
	CHECK(lanes_next(a, spare, &spare_id, &share) == 0); /* no parity */
	CHECK(lanes_queue(a, rec[1], size[1]));
	len[1] = lanes_next(a, dg[1], &id[1], &share);
	CHECK(len[1] > 0);
	lanes_commit(a, 0);
	lanes_lost(a, id[0]);
	CHECK(lanes_next(a, spare, &spare_id, &share) == 0); /* stale: no repair */
	CHECK(lanes_receive(b, dg[1], len[1], &out, err, sizeof(err)));
	CHECK(buffer_size(&out) == size[1] && memcmp(buffer_head(&out), rec[1], size[1]) == 0);
	buffer_consume(&out, size[1]);
	lanes_acked(a, id[1]);
	CHECK(lanes_idle(a));
	/* The first, late, says less than what was handed over: dropped. */
	CHECK(lanes_receive(b, dg[0], len[0], &out, err, sizeof(err)));
	CHECK(buffer_size(&out) == 0);
	/* The newest, lost, is repaired, and arrives. */
	CHECK(lanes_queue(a, rec[2], size[2]));
	len[2] = lanes_next(a, dg[2], &id[2], &share);
	lanes_commit(a, 0);
	lanes_lost(a, id[2]);
	len[2] = lanes_next(a, dg[2], &id[2], &share);
	CHECK(len[2] > 0);
	lanes_commit(a, 0);
	CHECK(lanes_receive(b, dg[2], len[2], &out, err, sizeof(err)));
	CHECK(buffer_size(&out) == size[2] && memcmp(buffer_head(&out), rec[2], size[2]) == 0);
	buffer_finish(&out);
	lanes_free(a);
	lanes_free(b);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"clean", test_clean},
		{"loss", test_loss},
		{"open_late", test_open_late},
		{"parity", test_parity_follows_loss},
		{"order", test_frames_wait_for_control},
		{"moved", test_moved},
		{"link_newest", test_link_newest_wins},
		{"seen_loss", test_seen_loss},
	};
	return check_main(argc, argv, cases, N(cases));
}
