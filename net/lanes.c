/*
 * Lanes (lanes.h): records as datagrams with Reed-Solomon parity from
 * ISA-L's Cauchy matrices, in which any k rows of a generator can be
 * inverted, so any k shards of a record rebuild it.
 */
#include <isa-l/erasure_code.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lanes.h"

/* The lanes in the order their datagrams go out: acks of the link and
 * control first, then sound, then frames. */
static const enum channel_class send_order[] = {
	CHANNEL_LINK,
	CHANNEL_CONTROL,
	CHANNEL_AUDIO,
	CHANNEL_FRAMES,
};

/* The most a record may stay unrebuildable, per lane: control and sound
 * are waited on by a person, frames are soon followed by the next one. */
static const double target_failure[CHANNEL_CLASSES] = {
	[CHANNEL_CONTROL] = 0.002,
	[CHANNEL_AUDIO] = 0.01,
	[CHANNEL_FRAMES] = 0.01,
	[CHANNEL_LINK] = 0.002,
};

/* The link's acknowledgements count bytes read in all: each one says all
 * that those before it said. Their lane is newest-wins: a record made
 * stale by a newer one is never repaired, and the receiver hands over only
 * a record newer than the last it handed over, skipping any lost. The
 * newest one is repaired if lost, so the last word always arrives. */
static bool newest_wins(enum channel_class cls)
{
	return cls == CHANNEL_LINK;
}

/* Below this loss no parity is sent: QUIC's word on a loss brings a
 * repair within about a round trip, and the link pays nothing for it. */
#define LOSS_FLOOR 0.003
#define LOSS_START 0.01
/* Loss is averaged over about this many datagrams; what is seen of it is
 * told once this many fates are known. */
#define LOSS_SPAN 256.0
#define LOSS_SEEN_MIN 50.0

#define BITWORDS ((LANES_INDEXES + 63) / 64)

struct out_rec {
	bool used;
	uint32_t seq, after; /* after: control records queued before it */
	uint16_t size, shard;
	uint8_t k, acked_count;
	bool parity; /* sent with parity: its shards go in packets apart */
	uint16_t owed; /* shards to send now */
	uint16_t fresh; /* the next index never sent; LANES_INDEXES: none left */
	uint64_t last_sent; /* when its last shard went, in the caller's clock */
	uint64_t sent[BITWORDS], acked[BITWORDS], lost[BITWORDS];
	uint8_t *data; /* k shards, the last padded with zeros */
};

struct in_rec {
	bool used, done;
	uint32_t seq, after;
	uint16_t size, shard;
	uint8_t k, have;
	uint8_t index[LANES_K_MAX]; /* the shard in each slot, in arrival order */
	uint8_t *shards; /* k slots; once done, the record itself */
};

struct lane {
	struct out_rec out[LANES_WINDOW];
	uint32_t base, next; /* the oldest record not yet rebuildable; the next number */
	struct in_rec in[LANES_WINDOW];
	uint32_t expected; /* the next record to hand over */
};

struct lanes {
	struct lane lane[CHANNEL_CLASSES];
	uint8_t *gen[LANES_K_MAX + 1]; /* LANES_INDEXES x k generator, per k */
	bool open;
	double loss;
	double seen_lost, seen; /* weighted counts of fates known (measure) */
	struct {
		struct out_rec *rec; /* NULL: nothing given by lanes_next() */
		uint8_t index;
	} pending;
	uint64_t datagrams, parity, repairs, rebuilt, tails;
};

static bool get_bit(const uint64_t *bits, unsigned i)
{
	return (bits[i / 64] >> (i % 64)) & 1;
}

static void set_bit(uint64_t *bits, unsigned i, bool on)
{
	if (on) {
		bits[i / 64] |= 1ull << (i % 64);
	} else {
		bits[i / 64] &= ~(1ull << (i % 64));
	}
}

static uint64_t make_id(enum channel_class cls, uint32_t seq, uint8_t index)
{
	return (uint64_t)cls << 40 | (uint64_t)index << 32 | seq;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Shards of a record of size bytes, and their size. */
static uint8_t shards_for(size_t size)
{
	return (uint8_t)((size + LANES_SHARD_MAX - 1) / LANES_SHARD_MAX);
}

static uint16_t shard_size(size_t size, uint8_t k)
{
	return (uint16_t)((size + k - 1) / k);
}

struct lanes *lanes_new(void)
{
	struct lanes *l = calloc(1, sizeof(struct lanes));
	if (l) {
		/* Until datagrams tell, a link is taken to lose a little: the
		 * first records of a lossy link get parity, and on a clean one
		 * the guess is forgotten within a few hundred datagrams. */
		l->loss = LOSS_START;
	}
	return l;
}

void lanes_free(struct lanes *l)
{
	if (!l) {
		return;
	}
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		for (int i = 0; i < LANES_WINDOW; i++) {
			free(l->lane[c].out[i].data);
			free(l->lane[c].in[i].shards);
		}
	}
	for (int k = 0; k <= LANES_K_MAX; k++) {
		free(l->gen[k]);
	}
	free(l);
}

bool lanes_carry(enum channel_class cls)
{
	return cls < CHANNEL_CLASSES && cls != CHANNEL_BULK;
}

/* The lane of a class: frames of the focused window share the frames lane,
 * so a window's frames stay in order when its focus changes. */
static enum channel_class lane_of(enum channel_class cls)
{
	return cls == CHANNEL_FOCUS ? CHANNEL_FRAMES : cls;
}

/* The generator for k data shards: k rows of identity, then Cauchy rows. */
static const uint8_t *generator(struct lanes *l, uint8_t k)
{
	if (!l->gen[k]) {
		l->gen[k] = malloc((size_t)LANES_INDEXES * k);
		if (l->gen[k]) {
			gf_gen_cauchy1_matrix(l->gen[k], LANES_INDEXES, k);
		}
	}
	return l->gen[k];
}

/* ---- sending ---- */

bool lanes_room(const struct lanes *l, enum channel_class cls)
{
	if (!lanes_carry(cls)) {
		return false;
	}
	const struct lane *lane = &l->lane[lane_of(cls)];
	return lane->next - lane->base < LANES_WINDOW;
}

/* The fewest parity shards for which k data shards fail (more than m of the
 * k + m lost) less often than the lane's target, at the measured loss. */
static uint8_t parity_for(const struct lanes *l, enum channel_class cls, uint8_t k)
{
	/* A little pessimism: the measure lags a change of the link. */
	double p = l->loss * 1.25 + 0.005;
	if (l->loss < LOSS_FLOOR || newest_wins(cls)) {
		return 0;
	}
	if (p > 0.5) {
		p = 0.5;
	}
	for (unsigned m = 1; m + k < LANES_INDEXES && m <= 2u * k + 4u; m++) {
		unsigned n = k + m;
		/* P(at most m of n lost) = sum of the binomial terms to m. */
		double term = pow(1 - p, n), sum = term;
		for (unsigned j = 1; j <= m; j++) {
			term *= (double)(n - j + 1) / j * p / (1 - p);
			sum += term;
		}
		if (1 - sum < target_failure[cls]) {
			return (uint8_t)m;
		}
	}
	return (uint8_t)(2u * k + 4 < LANES_INDEXES - k ? 2u * k + 4 : LANES_INDEXES - k);
}

bool lanes_queue(struct lanes *l, const uint8_t *record, size_t size)
{
	if (size <= CHANNEL_RECORD_HEADER || size > CHANNEL_RECORD_HEADER + CHANNEL_RECORD_MAX) {
		return false;
	}
	if (!lanes_room(l, record[0])) {
		return false;
	}
	enum channel_class cls = lane_of(record[0]);
	struct lane *lane = &l->lane[cls];
	if (newest_wins(cls)) {
		/* The records before this one are stale: let them go. */
		for (; lane->base != lane->next; lane->base++) {
			struct out_rec *old = &lane->out[lane->base % LANES_WINDOW];
			if (l->pending.rec == old) {
				l->pending.rec = NULL;
			}
			free(old->data);
			*old = (struct out_rec){0};
		}
	}
	struct out_rec *rec = &lane->out[lane->next % LANES_WINDOW];
	uint8_t k = shards_for(size);
	uint16_t shard = shard_size(size, k);
	uint8_t *data = calloc(k, shard);
	if (!data || !generator(l, k)) {
		free(data);
		return false;
	}
	memcpy(data, record, size);
	*rec = (struct out_rec){
		.used = true,
		.seq = lane->next,
		.after = l->lane[CHANNEL_CONTROL].next,
		.size = (uint16_t)size,
		.shard = shard,
		.k = k,
		.data = data,
	};
	uint8_t m = parity_for(l, cls, k);
	rec->owed = (uint16_t)(k + m);
	rec->parity = m > 0;
	l->parity += m;
	lane->next++;
	return true;
}

/* The record of a lane numbered seq, if it is still kept. */
static struct out_rec *find_out(struct lanes *l, enum channel_class cls, uint32_t seq)
{
	if (cls >= CHANNEL_CLASSES) {
		return NULL;
	}
	struct out_rec *rec = &l->lane[cls].out[seq % LANES_WINDOW];
	return rec->used && rec->seq == seq ? rec : NULL;
}

/* An index to send next: a fresh one while any is left, else one lost. */
static int pick_index(const struct out_rec *rec)
{
	if (rec->fresh < LANES_INDEXES) {
		return rec->fresh;
	}
	for (unsigned i = 0; i < LANES_INDEXES; i++) {
		if (get_bit(rec->lost, i)) {
			return (int)i;
		}
	}
	return -1;
}

size_t lanes_next(struct lanes *l, uint8_t *out, uint64_t *id, bool *share)
{
	l->pending.rec = NULL;
	for (size_t o = 0; o < sizeof(send_order) / sizeof(send_order[0]); o++) {
		enum channel_class cls = send_order[o];
		struct lane *lane = &l->lane[cls];
		for (uint32_t seq = lane->base; seq != lane->next; seq++) {
			struct out_rec *rec = find_out(l, cls, seq);
			if (!rec || rec->owed == 0) {
				continue;
			}
			int index = pick_index(rec);
			if (index < 0) {
				rec->owed = 0; /* all in flight: QUIC will say */
				continue;
			}
			out[0] = (uint8_t)cls;
			out[1] = rec->k;
			out[2] = (uint8_t)index;
			out[3] = 0;
			put32(out + 4, rec->seq);
			put32(out + 8, rec->after);
			put16(out + 12, rec->size);
			uint8_t *payload = out + LANES_HEADER;
			size_t len = rec->shard;
			if (index < rec->k) {
				size_t at = (size_t)index * rec->shard;
				len = rec->size - at < len ? rec->size - at : len;
				memcpy(payload, rec->data + at, len);
			} else {
				/* One parity row: the dot product of its
				 * coefficients with the k data shards. */
				uint8_t tables[32 * LANES_K_MAX];
				uint8_t *src[LANES_K_MAX];
				const uint8_t *row = generator(l, rec->k) + (size_t)index * rec->k;
				ec_init_tables(rec->k, 1, (uint8_t *)row, tables);
				for (unsigned i = 0; i < rec->k; i++) {
					src[i] = rec->data + (size_t)i * rec->shard;
				}
				ec_encode_data(rec->shard, rec->k, 1, tables, src, &payload);
			}
			*id = make_id(cls, rec->seq, (uint8_t)index);
			*share = !rec->parity;
			l->pending.rec = rec;
			l->pending.index = (uint8_t)index;
			return LANES_HEADER + len;
		}
	}
	return 0;
}

void lanes_commit(struct lanes *l, uint64_t now)
{
	struct out_rec *rec = l->pending.rec;
	uint8_t index = l->pending.index;
	if (!rec) {
		return;
	}
	l->pending.rec = NULL;
	set_bit(rec->sent, index, true);
	set_bit(rec->lost, index, false);
	rec->last_sent = now;
	if (index == rec->fresh) {
		rec->fresh++;
	}
	rec->owed--;
	l->datagrams++;
}

static void measure(struct lanes *l, bool lost)
{
	l->loss += ((lost ? 1.0 : 0.0) - l->loss) / LOSS_SPAN;
	/* The same average of what was seen alone, without the guess it
	 * starts from: what a user is told. */
	l->seen_lost = l->seen_lost * (1 - 1 / LOSS_SPAN) + (lost ? 1.0 : 0.0);
	l->seen = l->seen * (1 - 1 / LOSS_SPAN) + 1.0;
}

/* The oldest record not yet rebuildable. */
static void advance(struct lane *lane)
{
	while (lane->base != lane->next && !lane->out[lane->base % LANES_WINDOW].used) {
		lane->base++;
	}
}

void lanes_acked(struct lanes *l, uint64_t id)
{
	enum channel_class cls = (enum channel_class)(id >> 40);
	uint8_t index = (uint8_t)(id >> 32);
	measure(l, false);
	struct out_rec *rec = find_out(l, cls, (uint32_t)id);
	if (!rec || get_bit(rec->acked, index)) {
		return;
	}
	set_bit(rec->acked, index, true);
	set_bit(rec->lost, index, false);
	if (++rec->acked_count >= rec->k) {
		/* The receiver holds k shards: it has rebuilt the record. */
		free(rec->data);
		if (l->pending.rec == rec) {
			l->pending.rec = NULL;
		}
		*rec = (struct out_rec){0};
		advance(&l->lane[cls]);
	}
}

static unsigned count(const uint64_t *a, const uint64_t *not1, const uint64_t *not2)
{
	unsigned n = 0;
	for (unsigned w = 0; w < BITWORDS; w++) {
		n += (unsigned)__builtin_popcountll(a[w] & ~not1[w] & ~not2[w]);
	}
	return n;
}

/* The record's shards in flight, neither acknowledged nor lost. */
static unsigned flying(const struct out_rec *rec)
{
	return count(rec->sent, rec->acked, rec->lost);
}

void lanes_lost(struct lanes *l, uint64_t id)
{
	enum channel_class cls = (enum channel_class)(id >> 40);
	uint8_t index = (uint8_t)(id >> 32);
	measure(l, true);
	struct out_rec *rec = find_out(l, cls, (uint32_t)id);
	if (!rec || get_bit(rec->acked, index) || !get_bit(rec->sent, index)) {
		return;
	}
	set_bit(rec->lost, index, true);
	/* What may still arrive: shards in flight and shards still owed. */
	unsigned hope = rec->acked_count + flying(rec) + rec->owed;
	if (hope < rec->k) {
		rec->owed = (uint16_t)(rec->owed + rec->k - hope);
		l->repairs += rec->k - hope;
	}
}

/* Whether the record waits on shards QUIC may never give word of: the
 * last ones sent, with nothing after them to be acknowledged. */
static bool tail_waits(const struct out_rec *rec)
{
	return rec->used && rec->owed == 0 && flying(rec) > 0;
}

uint64_t lanes_deadline(const struct lanes *l, uint64_t timeout)
{
	uint64_t first = UINT64_MAX;
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		const struct lane *lane = &l->lane[c];
		for (uint32_t seq = lane->base; seq != lane->next; seq++) {
			const struct out_rec *rec = &lane->out[seq % LANES_WINDOW];
			if (tail_waits(rec) && rec->last_sent + timeout < first) {
				first = rec->last_sent + timeout;
			}
		}
	}
	return first;
}

/* The record's shards in flight are taken as lost (an acknowledgement that
 * still comes counts all the same), and what it lacks is owed. */
static void give_up_flight(struct lanes *l, struct out_rec *rec)
{
	for (unsigned w = 0; w < BITWORDS; w++) {
		rec->lost[w] |= rec->sent[w] & ~rec->acked[w];
	}
	if (rec->acked_count + rec->owed < rec->k) {
		unsigned more = rec->k - rec->acked_count - rec->owed;
		rec->owed = (uint16_t)(rec->owed + more);
		l->repairs += more;
	}
}

void lanes_expire(struct lanes *l, uint64_t now, uint64_t timeout)
{
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		struct lane *lane = &l->lane[c];
		for (uint32_t seq = lane->base; seq != lane->next; seq++) {
			struct out_rec *rec = &lane->out[seq % LANES_WINDOW];
			if (tail_waits(rec) && now >= rec->last_sent + timeout) {
				give_up_flight(l, rec);
				l->tails++;
			}
		}
	}
}

void lanes_moved(struct lanes *l)
{
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		struct lane *lane = &l->lane[c];
		for (uint32_t seq = lane->base; seq != lane->next; seq++) {
			struct out_rec *rec = &lane->out[seq % LANES_WINDOW];
			if (rec->used && flying(rec) > 0) {
				give_up_flight(l, rec);
			}
		}
	}
}

bool lanes_pending(const struct lanes *l)
{
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		const struct lane *lane = &l->lane[c];
		for (uint32_t seq = lane->base; seq != lane->next; seq++) {
			const struct out_rec *rec = &lane->out[seq % LANES_WINDOW];
			if (rec->used && rec->owed > 0) {
				return true;
			}
		}
	}
	return false;
}

bool lanes_idle(const struct lanes *l)
{
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		if (l->lane[c].base != l->lane[c].next) {
			return false;
		}
	}
	return true;
}

/* ---- receiving ---- */

static void set_err(char *err, size_t size, const char *what, const uint8_t *h)
{
	snprintf(err, size, "a datagram %s (lane %u, k %u, shard %u, record %u of %u bytes)", what,
		h[0], h[1], h[2], get32(h + 4), get16(h + 12));
}

/* Rebuilds the record from its k shards: the data shards missing are the
 * inverse of the generator's rows that arrived, times what arrived. */
static bool rebuild(struct lanes *l, struct in_rec *rec)
{
	uint8_t k = rec->k;
	uint8_t *slot[LANES_K_MAX];
	int where[LANES_K_MAX]; /* each data shard's slot, or -1 */
	for (unsigned i = 0; i < k; i++) {
		where[i] = -1;
		slot[i] = rec->shards + (size_t)i * rec->shard;
	}
	unsigned missing = 0;
	for (unsigned s = 0; s < k; s++) {
		if (rec->index[s] < k) {
			where[rec->index[s]] = (int)s;
		}
	}
	for (unsigned i = 0; i < k; i++) {
		missing += where[i] < 0;
	}
	uint8_t *record = malloc((size_t)k * rec->shard);
	if (!record) {
		return false;
	}
	if (missing > 0) {
		const uint8_t *gen = generator(l, k);
		uint8_t rows[LANES_K_MAX * LANES_K_MAX], inverse[LANES_K_MAX * LANES_K_MAX];
		uint8_t decode[LANES_K_MAX * LANES_K_MAX], tables[32 * LANES_K_MAX * LANES_K_MAX];
		uint8_t *outs[LANES_K_MAX];
		if (!gen) {
			free(record);
			return false;
		}
		for (unsigned s = 0; s < k; s++) {
			memcpy(rows + s * k, gen + (size_t)rec->index[s] * k, k);
		}
		if (gf_invert_matrix(rows, inverse, k) != 0) {
			free(record); /* cannot happen with distinct Cauchy rows */
			return false;
		}
		unsigned n = 0;
		for (unsigned i = 0; i < k; i++) {
			if (where[i] < 0) {
				memcpy(decode + n * k, inverse + i * k, k);
				outs[n++] = record + (size_t)i * rec->shard;
			}
		}
		ec_init_tables(k, (int)n, decode, tables);
		ec_encode_data(rec->shard, k, (int)n, tables, slot, outs);
		l->rebuilt++;
	}
	for (unsigned i = 0; i < k; i++) {
		if (where[i] >= 0) {
			memcpy(record + (size_t)i * rec->shard, slot[where[i]], rec->shard);
		}
	}
	free(rec->shards);
	rec->shards = record;
	rec->done = true;
	return true;
}

/* A newest-wins lane forgets the records before seq, whole or not, and
 * waits for seq next. */
static void skip_to(struct lane *lane, uint32_t seq)
{
	for (unsigned i = 0; i < LANES_WINDOW; i++) {
		struct in_rec *rec = &lane->in[i];
		if (rec->used && (int32_t)(seq - rec->seq) > 0) {
			free(rec->shards);
			*rec = (struct in_rec){0};
		}
	}
	lane->expected = seq;
}

/* Hands over the lane's records that are whole, in order; a frame record
 * once the control records made before it are. */
static bool deliver(struct lanes *l, enum channel_class cls, struct buffer *out, char *err,
	size_t err_size)
{
	struct lane *lane = &l->lane[cls];
	for (;;) {
		struct in_rec *rec = &lane->in[lane->expected % LANES_WINDOW];
		if (!rec->used || !rec->done || rec->seq != lane->expected) {
			return true;
		}
		if (cls == CHANNEL_FRAMES &&
			(int32_t)(rec->after - l->lane[CHANNEL_CONTROL].expected) > 0) {
			return true; /* until control catches up */
		}
		const uint8_t *h = rec->shards;
		if (h[0] >= CHANNEL_CLASSES || lane_of(h[0]) != cls || h[1] != 0 ||
			get16(h + 2) + CHANNEL_RECORD_HEADER != rec->size) {
			snprintf(err, err_size,
				"record %u of lane %u is not one record of its class (class %u, "
				"flags %u, %u of %u bytes)",
				rec->seq, cls, h[0], h[1], get16(h + 2), rec->size);
			return false;
		}
		if (!buffer_append(out, rec->shards, rec->size)) {
			snprintf(err, err_size, "the program is not reading: %zu bytes wait for it",
				buffer_size(out));
			return false;
		}
		free(rec->shards);
		*rec = (struct in_rec){0};
		lane->expected++;
	}
}

bool lanes_receive(struct lanes *l, const uint8_t *data, size_t len, struct buffer *out, char *err,
	size_t err_size)
{
	if (len < LANES_HEADER) {
		snprintf(err, err_size, "a datagram of %zu bytes, less than its header", len);
		return false;
	}
	enum channel_class cls = data[0];
	uint8_t k = data[1], index = data[2];
	uint32_t seq = get32(data + 4), after = get32(data + 8);
	uint16_t size = get16(data + 12);
	if (!lanes_carry(cls) || lane_of(cls) != cls || data[3] != 0) {
		set_err(err, err_size, "of no lane", data);
		return false;
	}
	if (size <= CHANNEL_RECORD_HEADER || size > CHANNEL_RECORD_HEADER + CHANNEL_RECORD_MAX ||
		k != shards_for(size) || index >= LANES_INDEXES) {
		set_err(err, err_size, "with a bad shape", data);
		return false;
	}
	uint16_t shard = shard_size(size, k);
	size_t expect = shard;
	if (index < k && (size_t)index * shard + shard > size) {
		expect = size - (size_t)index * shard;
	}
	if (len - LANES_HEADER != expect) {
		set_err(err, err_size, "whose shard has the wrong size", data);
		return false;
	}
	struct lane *lane = &l->lane[cls];
	uint32_t ahead = seq - lane->expected;
	if (ahead >= 0x80000000u) {
		return true; /* a record handed over already: a late shard */
	}
	if (newest_wins(cls) && ahead > 0) {
		skip_to(lane, seq); /* what came before it says less */
		ahead = 0;
	}
	if (ahead >= LANES_WINDOW) {
		set_err(err, err_size, "beyond the window", data);
		return false;
	}
	struct in_rec *rec = &lane->in[seq % LANES_WINDOW];
	if (!rec->used) {
		uint8_t *shards = malloc((size_t)k * shard);
		if (!shards) {
			snprintf(err, err_size, "out of memory");
			return false;
		}
		*rec = (struct in_rec){.used = true,
			.seq = seq,
			.after = after,
			.size = size,
			.shard = shard,
			.k = k,
			.shards = shards};
	} else if (rec->seq != seq || rec->size != size || rec->after != after) {
		set_err(err, err_size, "that contradicts an earlier shard", data);
		return false;
	}
	if (rec->done) {
		return true;
	}
	for (unsigned s = 0; s < rec->have; s++) {
		if (rec->index[s] == index) {
			return true; /* a shard sent again after a spurious loss */
		}
	}
	uint8_t *slot = rec->shards + (size_t)rec->have * shard;
	memcpy(slot, data + LANES_HEADER, expect);
	memset(slot + expect, 0, shard - expect);
	rec->index[rec->have++] = index;
	if (rec->have == k && !rebuild(l, rec)) {
		snprintf(err, err_size, "out of memory");
		return false;
	}
	if (!l->open) {
		return true;
	}
	/* Control made whole may free frames that wait for it. */
	return deliver(l, cls, out, err, err_size) &&
		(cls != CHANNEL_CONTROL || deliver(l, CHANNEL_FRAMES, out, err, err_size));
}

bool lanes_open(struct lanes *l, struct buffer *out, char *err, size_t err_size)
{
	l->open = true;
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		if (lanes_carry((enum channel_class)c) &&
			(int)lane_of((enum channel_class)c) == c &&
			!deliver(l, (enum channel_class)c, out, err, err_size)) {
			return false;
		}
	}
	return true;
}

double lanes_loss(const struct lanes *l)
{
	return l->loss;
}

double lanes_seen_loss(const struct lanes *l)
{
	return l->seen >= LOSS_SEEN_MIN ? l->seen_lost / l->seen : -1;
}

void lanes_describe(const struct lanes *l, char *out, size_t size)
{
	/* What was lost of the datagrams seen (none yet: too few to say), and
	 * apart from it the guess parity is sized for, which starts at
	 * LOSS_START before any is seen and is no measurement. */
	char lost[48] = "too few datagrams yet to measure loss";
	double seen = lanes_seen_loss(l);
	if (seen >= 0) {
		snprintf(lost, sizeof(lost), "%.1f%% of datagrams lost", seen * 100);
	}
	snprintf(out, size,
		"lanes: %s (parity sized for %.1f%%), %llu datagrams (%llu parity, %llu repairs, "
		"%llu tails), %llu records rebuilt",
		lost, l->loss * 100, (unsigned long long)l->datagrams,
		(unsigned long long)l->parity, (unsigned long long)l->repairs,
		(unsigned long long)l->tails, (unsigned long long)l->rebuilt);
}
