/*
 * Clipboard data between a local fd and the peer: the sending side reads
 * its fd in chunks and sends transfer_data; the receiving side writes them
 * to its fd and acknowledges what it wrote. At most TRANSFER_WINDOW bytes
 * are unacknowledged per transfer, so both sides stay bounded whatever the
 * size, and neither event loop ever blocks on a pasting app.
 */
#ifndef RCOMP_TRANSFER_H
#define RCOMP_TRANSFER_H

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

#define TRANSFER_MAX 16 /* at once, per connection */
#define TRANSFER_WINDOW (256 * 1024)
/* Either side reads from its app only while its own output queue is below
 * this, so a large paste shares the link with frames instead of queueing
 * ahead of them. */
#define TRANSFER_HIGH_WATER (1024 * 1024)
/* A transfer in which no byte moved for this long ends, and the peer is
 * told: a peer or app that never answers cannot hold a paste or a slot.
 * X toolkits wait as long for a selection owner. */
#define TRANSFER_IDLE_US (5 * 1000000)
/* Once bytes have moved, the peer has shown it answers, and a longer
 * pause is the link's: TCP through 10% loss, retransmissions backing off
 * on a loaded machine, was seen to move nothing for 5 s in the middle of
 * a 1 MiB paste. The QUIC link's own idle timeout is as long. */
#define TRANSFER_STALL_US (15 * 1000000)

struct transfer {
	uint32_t id;
	int fd; /* -1: a free slot */
	bool sending; /* we read fd; else we write it */
	uint64_t bytes; /* moved so far */
	uint32_t in_flight; /* sending: sent and not yet acknowledged */
	/* Receiving: what arrived and is not yet written. */
	uint8_t *buf;
	uint32_t head, len;
	uint32_t unacked; /* written since the last ack */
	bool end; /* no more data will arrive */
	uint64_t active_us; /* when a byte last moved, or it started */
};

struct transfers {
	struct transfer slots[TRANSFER_MAX];
	/* Sends one message to the peer. */
	void (*send)(void *data, const struct wire_msg *msg);
	/* Called when a transfer ends, before its fd is closed: for the event
	 * loop to forget the fd, and for a log line. */
	void (*done)(void *data, struct transfer *tr, bool ok);
	void *data;
	uint32_t next_id; /* of our next request */
};

void transfers_init(struct transfers *t, void (*send)(void *, const struct wire_msg *),
	void (*done)(void *, struct transfer *, bool), void *data);
/* Ends every transfer: the peer is gone. */
void transfers_finish(struct transfers *t);
/* Takes fd (nonblocking is set here). NULL, with fd closed, when full. */
struct transfer *transfers_start(struct transfers *t, uint32_t id, int fd, bool sending);
/* Asks the peer for its selection of kind as mime, to be written to fd
 * (taken: closed on failure). False if it cannot be asked. */
bool transfers_request(struct transfers *t, uint32_t kind, const char *mime, int fd);
/* Tells the peer that its request id gets no data. */
void transfers_refuse(struct transfers *t, uint32_t id);
/* The poll events the transfer's fd waits for now; may_send is false while
 * the connection's own output is backed up. */
short transfers_events(const struct transfer *tr, bool may_send);
/* The fd is ready (or failed): moves what it can. */
void transfers_handle_fd(struct transfers *t, struct transfer *tr);
/* Ends the transfers in which nothing moved for TRANSFER_IDLE_US before now
 * (TRANSFER_STALL_US once some bytes have),
 * telling the peer. Returns the microseconds until the next one may expire,
 * or -1 if there is no transfer. */
int64_t transfers_expire(struct transfers *t, uint64_t now);
/* transfer_data or transfer_ack from the peer. False (err set) if the peer
 * broke the protocol, e.g. sent more than the window. */
bool transfers_handle_message(struct transfers *t, const struct wire_msg *msg, char *err,
	size_t err_size);

#endif
