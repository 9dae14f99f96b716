/* Clipboard transfers with credit-based flow control; see transfer.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "monotonic.h"
#include "transfer.h"

void transfers_init(struct transfers *t, void (*send)(void *, const struct wire_msg *),
	void (*done)(void *, struct transfer *, bool), void *data)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < TRANSFER_MAX; i++) {
		t->slots[i].fd = -1;
	}
	t->send = send;
	t->done = done;
	t->data = data;
}

static void end_transfer(struct transfers *t, struct transfer *tr, bool ok)
{
	if (t->done) {
		t->done(t->data, tr, ok);
	}
	close(tr->fd);
	free(tr->buf);
	memset(tr, 0, sizeof(*tr));
	tr->fd = -1;
}

void transfers_finish(struct transfers *t)
{
	for (int i = 0; i < TRANSFER_MAX; i++) {
		if (t->slots[i].fd >= 0) {
			end_transfer(t, &t->slots[i], false);
		}
	}
}

static struct transfer *find(struct transfers *t, uint32_t id, bool sending)
{
	for (int i = 0; i < TRANSFER_MAX; i++) {
		struct transfer *tr = &t->slots[i];
		if (tr->fd >= 0 && tr->id == id && tr->sending == sending) {
			return tr;
		}
	}
	return NULL;
}

struct transfer *transfers_start(struct transfers *t, uint32_t id, int fd, bool sending)
{
	for (int i = 0; i < TRANSFER_MAX; i++) {
		struct transfer *tr = &t->slots[i];
		if (tr->fd < 0) {
			memset(tr, 0, sizeof(*tr));
			tr->id = id;
			tr->fd = fd;
			tr->sending = sending;
			tr->active_us = monotonic_usec();
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
			return tr;
		}
	}
	close(fd);
	return NULL;
}

bool transfers_request(struct transfers *t, uint32_t kind, const char *mime, int fd)
{
	size_t len = strlen(mime);
	if (len == 0 || len > WIRE_MAX_MIME) {
		close(fd);
		return false;
	}
	uint32_t id = ++t->next_id;
	if (!transfers_start(t, id, fd, false)) {
		return false;
	}
	struct wire_msg msg = {
		.type = WIRE_TRANSFER_REQUEST,
		.transfer_request = {.id = id,
			.kind = kind,
			.mime_len = (uint32_t)len,
			.mime = mime},
	};
	t->send(t->data, &msg);
	return true;
}

void transfers_refuse(struct transfers *t, uint32_t id)
{
	struct wire_msg msg = {
		.type = WIRE_TRANSFER_DATA,
		.transfer_data = {.id = id, .flags = WIRE_TRANSFER_END | WIRE_TRANSFER_FAILED},
	};
	t->send(t->data, &msg);
}

short transfers_events(const struct transfer *tr, bool may_send)
{
	if (tr->sending) {
		return may_send && tr->in_flight < TRANSFER_WINDOW ? POLLIN : 0;
	}
	return tr->len > 0 ? POLLOUT : 0;
}

static void send_data(struct transfers *t, struct transfer *tr, const uint8_t *data, uint32_t len,
	uint32_t flags)
{
	struct wire_msg msg = {
		.type = WIRE_TRANSFER_DATA,
		.transfer_data = {.id = tr->id, .flags = flags, .len = len, .data = data},
	};
	t->send(t->data, &msg);
}

static void send_ack(struct transfers *t, struct transfer *tr, uint32_t flags)
{
	struct wire_msg msg = {
		.type = WIRE_TRANSFER_ACK,
		.transfer_ack = {.id = tr->id, .bytes = tr->unacked, .flags = flags},
	};
	tr->unacked = 0;
	t->send(t->data, &msg);
}

static void handle_readable(struct transfers *t, struct transfer *tr)
{
	static uint8_t chunk[WIRE_MAX_TRANSFER_CHUNK];
	uint32_t room = TRANSFER_WINDOW - tr->in_flight;
	size_t want = room < sizeof(chunk) ? room : sizeof(chunk);
	if (want == 0) {
		return;
	}
	ssize_t n = read(tr->fd, chunk, want);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		return;
	}
	if (n < 0) {
		send_data(t, tr, NULL, 0, WIRE_TRANSFER_END | WIRE_TRANSFER_FAILED);
		end_transfer(t, tr, false);
		return;
	}
	if (n == 0) {
		send_data(t, tr, NULL, 0, WIRE_TRANSFER_END);
		end_transfer(t, tr, true);
		return;
	}
	tr->in_flight += (uint32_t)n;
	tr->bytes += (uint64_t)n;
	tr->active_us = monotonic_usec();
	send_data(t, tr, chunk, (uint32_t)n, 0);
}

static void handle_writable(struct transfers *t, struct transfer *tr)
{
	while (tr->len > 0) {
		ssize_t n = write(tr->fd, tr->buf + tr->head, tr->len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			break;
		}
		if (n <= 0) {
			/* The pasting app went away: the sender may stop. */
			send_ack(t, tr, WIRE_TRANSFER_CANCEL);
			end_transfer(t, tr, false);
			return;
		}
		tr->head += (uint32_t)n;
		tr->len -= (uint32_t)n;
		tr->unacked += (uint32_t)n;
		tr->bytes += (uint64_t)n;
		tr->active_us = monotonic_usec();
	}
	if (tr->len == 0) {
		tr->head = 0;
	}
	if (tr->end && tr->len == 0) {
		end_transfer(t, tr, true);
		return;
	}
	/* Acknowledge in big steps, or when drained, so the sender goes on. */
	if (tr->unacked >= WIRE_MAX_TRANSFER_CHUNK || (tr->len == 0 && tr->unacked > 0)) {
		send_ack(t, tr, 0);
	}
}

void transfers_handle_fd(struct transfers *t, struct transfer *tr)
{
	if (tr->sending) {
		handle_readable(t, tr);
	} else {
		handle_writable(t, tr);
	}
}

int64_t transfers_expire(struct transfers *t, uint64_t now)
{
	int64_t next = -1;
	for (int i = 0; i < TRANSFER_MAX; i++) {
		struct transfer *tr = &t->slots[i];
		if (tr->fd < 0) {
			continue;
		}
		uint64_t idle = tr->bytes > 0 ? TRANSFER_STALL_US : TRANSFER_IDLE_US;
		int64_t left = (int64_t)(tr->active_us + idle - now);
		if (left > 0) {
			next = next < 0 || left < next ? left : next;
			continue;
		}
		if (tr->sending) {
			send_data(t, tr, NULL, 0, WIRE_TRANSFER_END | WIRE_TRANSFER_FAILED);
		} else if (!tr->end) {
			send_ack(t, tr, WIRE_TRANSFER_CANCEL);
		}
		end_transfer(t, tr, false);
	}
	return next;
}

bool transfers_handle_message(struct transfers *t, const struct wire_msg *msg, char *err,
	size_t err_size)
{
	if (msg->type == WIRE_TRANSFER_ACK) {
		struct transfer *tr = find(t, msg->transfer_ack.id, true);
		if (!tr) {
			return true; /* it ended meanwhile */
		}
		if (msg->transfer_ack.bytes > tr->in_flight) {
			snprintf(err, err_size, "transfer %u acknowledged %u bytes, %u were sent",
				tr->id, msg->transfer_ack.bytes, tr->in_flight);
			return false;
		}
		tr->in_flight -= msg->transfer_ack.bytes;
		if (msg->transfer_ack.bytes > 0) {
			tr->active_us = monotonic_usec();
		}
		if (msg->transfer_ack.flags & WIRE_TRANSFER_CANCEL) {
			end_transfer(t, tr, false);
		}
		return true;
	}
	struct transfer *tr = find(t, msg->transfer_data.id, false);
	if (!tr) {
		return true; /* cancelled here meanwhile: drop what was in flight */
	}
	uint32_t len = msg->transfer_data.len;
	if (tr->end || len > TRANSFER_WINDOW - tr->len) {
		snprintf(err, err_size, "transfer %u sent past its window", tr->id);
		return false;
	}
	if (len > 0) {
		if (!tr->buf && !(tr->buf = malloc(TRANSFER_WINDOW))) {
			end_transfer(t, tr, false);
			return true;
		}
		if (tr->head + tr->len + len > TRANSFER_WINDOW) {
			memmove(tr->buf, tr->buf + tr->head, tr->len);
			tr->head = 0;
		}
		memcpy(tr->buf + tr->head + tr->len, msg->transfer_data.data, len);
		tr->len += len;
	}
	tr->active_us = monotonic_usec();
	if (msg->transfer_data.flags & WIRE_TRANSFER_FAILED) {
		end_transfer(t, tr, false);
		return true;
	}
	if (msg->transfer_data.flags & WIRE_TRANSFER_END) {
		tr->end = true;
	}
	/* Try at once: most pasting apps are waiting. */
	handle_writable(t, tr);
	return true;
}
