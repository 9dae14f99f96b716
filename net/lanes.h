/*
 * Lanes: the session's classes as QUIC datagrams, each class a lane of its
 * own, so a packet lost in one never holds up another.
 *
 * The channel (channel.h) cuts its output into records of one class. Every
 * record of a class but bulk rides its lane: it is cut into k shards that
 * each fit one datagram, and m Reed-Solomon parity shards (ISA-L) go with
 * them, m sized from the loss the sender measures, so that most records
 * lost in part are rebuilt from any k of their shards without a round trip.
 * QUIC tells the sender which datagrams arrived and which were lost; a
 * record that can no longer be rebuilt from what is still in flight gets
 * more parity, never a resend of the same bytes. The receiver hands each
 * lane's records over whole and in order. Bulk and the first message stay
 * on the QUIC stream (reliable, sent last).
 *
 * The link's lane is newest-wins: its records are the link's
 * acknowledgements, each of which says all that those before it said. A
 * record made stale by a newer one is never repaired, none gets parity,
 * and the receiver hands over only a record newer than the last it handed
 * over; the newest is repaired if lost, so the last word always arrives.
 *
 * Lanes are not ordered among themselves, but frames depend on control: a
 * window's frames must come after its window_new. So the frames of every
 * window (focused or not) share one lane, and a frame record waits at the
 * receiver for the control records made before it. Nothing waits for
 * frames: a control message that follows a frame (a window_destroy) may
 * overtake it, and the viewer drops a frame of a window already gone.
 *
 * Nothing here knows QUIC: datagrams go out through lanes_next() and
 * lanes_commit(), their fate comes back through lanes_acked() and
 * lanes_lost(), and what arrives goes in through lanes_receive(). QUIC
 * authenticates every datagram first; a datagram that still breaks this
 * format came from the peer itself, and ends the connection.
 *
 * A datagram: u8 lane (the record's class; the frames lane carries focus
 * records too), u8 k, u8 shard index (below k: data; from k: a parity
 * row), u8 zero, u32 record number in the lane, u32 control records made
 * before it, u16 record size, then the shard. A record's shards are all
 * ceil(size / k) bytes, but for the last data shard, which is what is left.
 */
#ifndef RCOMP_LANES_H
#define RCOMP_LANES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "channel.h"

/* A datagram's most bytes: a shard and its header fit in any QUIC packet
 * of the smallest size a path must carry (1200 bytes, less 40 of QUIC's
 * own: header, connection ID, packet number, AEAD tag, frame header), with
 * 20 to spare for an acknowledgement riding along. Shards are cut when a
 * record is queued, so they must fit whatever path the connection moves
 * to. */
#define LANES_DATAGRAM_MAX 1140
#define LANES_HEADER 14
#define LANES_SHARD_MAX (LANES_DATAGRAM_MAX - LANES_HEADER)
/* Shards of the largest record, and shard indexes in all. */
#define LANES_K_MAX \
	((CHANNEL_RECORD_HEADER + CHANNEL_RECORD_MAX + LANES_SHARD_MAX - 1) / LANES_SHARD_MAX)
#define LANES_INDEXES 255u
/* Records of a lane not yet known to be rebuildable by the receiver. */
#define LANES_WINDOW 256

struct lanes;

struct lanes *lanes_new(void);
void lanes_free(struct lanes *l);

/* Whether records of this class ride a lane (all but bulk). */
bool lanes_carry(enum channel_class cls);

/* ---- sending ---- */

/* Whether the class's lane takes another record now. */
bool lanes_room(const struct lanes *l, enum channel_class cls);
/* Queues one whole record (header included) of a class lanes_carry()
 * takes. False if the lane has no room or memory ran out. */
bool lanes_queue(struct lanes *l, const uint8_t *record, size_t size);
/* The next datagram to send, written to out (LANES_DATAGRAM_MAX bytes), or
 * 0 if none waits. *share: whether it may share a packet with others;
 * never so for a record sent with parity, since one lost packet would
 * take several of its shards. Nothing changes until lanes_commit(): a
 * datagram QUIC refused comes back the same from the next call. */
size_t lanes_next(struct lanes *l, uint8_t *out, uint64_t *id, bool *share);
/* The datagram lanes_next() last gave went out under its id, now (any
 * clock, the one lanes_expire() is given). */
void lanes_commit(struct lanes *l, uint64_t now);
/* QUIC's word on a datagram: the packet with it arrived, or was lost. */
void lanes_acked(struct lanes *l, uint64_t id);
void lanes_lost(struct lanes *l, uint64_t id);
/* QUIC arms no timer for datagrams: the last ones sent before a pause, if
 * lost, would never be declared lost. A record whose shards have all been
 * sent and some are still unanswered after timeout (a probe timeout: about
 * a round trip and its variance) takes them as lost and owes repairs.
 * lanes_deadline() is when the first such wait ends (UINT64_MAX: none). */
void lanes_expire(struct lanes *l, uint64_t now, uint64_t timeout);
uint64_t lanes_deadline(const struct lanes *l, uint64_t timeout);
/* The peer's address changed: what was in flight went to the old one, and
 * is sent again to the new one now, not a probe timeout later. */
void lanes_moved(struct lanes *l);
/* Whether a datagram waits to be sent. */
bool lanes_pending(const struct lanes *l);
/* Whether every record queued can be rebuilt by the receiver. */
bool lanes_idle(const struct lanes *l);

/* ---- receiving ---- */

/* A datagram from the peer. Records made whole go to out, in each lane's
 * order, once lanes_open() was called; until then they wait. False, and the
 * reason in err, if it breaks the format. */
bool lanes_receive(struct lanes *l, const uint8_t *data, size_t len, struct buffer *out, char *err,
	size_t err_size);
/* The stream's first message went to out: records may follow it. */
bool lanes_open(struct lanes *l, struct buffer *out, char *err, size_t err_size);

/* Loss measured, parity and repairs sent, records rebuilt, for --stats. */
void lanes_describe(const struct lanes *l, char *out, size_t size);
/* The loss the sender measures, 0 to 1 (from a guess, until datagrams
 * tell), for its parity. */
double lanes_loss(const struct lanes *l);
/* What it has seen of it alone: the share of its recent datagrams lost,
 * or -1 while too few have a known fate to say. */
double lanes_seen_loss(const struct lanes *l);

#endif
