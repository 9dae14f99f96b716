/*
 * Unit tests of the QUIC endpoints (net/quic.c): a real server and a
 * real client over loopback UDP, their streams read and written as the
 * programs read and write sockets.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "check.h"
#include "quic.h"
#include "records.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define KEY "5f0c2a9e8b7d4f6a1e3c5b7d9f0a2c4e"

static bool write_all(int fd, const uint8_t *data, size_t len)
{
	while (len > 0) {
		struct pollfd pfd = {.fd = fd, .events = POLLOUT};
		if (poll(&pfd, 1, 10000) <= 0) {
			return false;
		}
		ssize_t n = write(fd, data, len);
		if (n <= 0) {
			return false;
		}
		data += n;
		len -= (size_t)n;
	}
	return true;
}

static bool read_all(int fd, uint8_t *data, size_t len)
{
	while (len > 0) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, 10000) <= 0) {
			return false;
		}
		ssize_t n = read(fd, data, len);
		if (n <= 0) {
			return false;
		}
		data += n;
		len -= (size_t)n;
	}
	return true;
}

static struct quic_endpoint *listen_any(char *addr, size_t size)
{
	char err[256];
	struct quic_endpoint *server = quic_listen("127.0.0.1:0", (const uint8_t *)KEY, strlen(KEY),
		NULL, 0, err, sizeof(err));
	if (!server) {
		fprintf(stderr, "quic_listen: %s\n", err);
		return NULL;
	}
	snprintf(addr, size, "127.0.0.1:%d", quic_local_port(server));
	return server;
}

static int accept_one(struct quic_endpoint *server)
{
	struct pollfd pfd = {.fd = quic_endpoint_fd(server), .events = POLLIN};
	for (int i = 0; i < 100; i++) {
		char host[QUIC_HOST_MAX];
		int port;
		bool watch;
		int slot;
		int fd = quic_accept(server, host, &port, &watch, &slot);
		if (fd >= 0) {
			return fd;
		}
		poll(&pfd, 1, 100);
	}
	return -1;
}

struct echo {
	int fd;
	size_t len;
	bool ok;
};

static void *echo_thread(void *data)
{
	struct echo *e = data;
	uint8_t *buf = malloc(e->len);
	e->ok = buf && read_all(e->fd, buf, e->len) && write_all(e->fd, buf, e->len);
	free(buf);
	return NULL;
}

/* A session's bytes, as a channel writes them: a first message, then
 * records of every class, len bytes in all. */
static void make_session_bytes(uint8_t *out, size_t len)
{
	size_t at = 0, body = 100;
	uint8_t header[8] = {1, 0, 0, 0, (uint8_t)body, 0, 0, 0};
	memcpy(out, header, sizeof(header));
	for (size_t i = 0; i < body; i++) {
		out[8 + i] = (uint8_t)i;
	}
	at = 8 + body;
	for (unsigned r = 0; at < len; r++) {
		size_t left = len - at - CHANNEL_RECORD_HEADER;
		size_t n = 1 + (r * 7919u) % CHANNEL_RECORD_MAX;
		if (n > left || left - n < CHANNEL_RECORD_HEADER + 1) {
			n = left; /* the last, or what would leave too little after */
		}
		if (n > CHANNEL_RECORD_MAX) {
			n = CHANNEL_RECORD_MAX / 2;
		}
		/* Every class but the link's, whose lane keeps only the newest
		 * (test-lanes has it). */
		out[at] = (uint8_t)(r % CHANNEL_CLASSES == CHANNEL_LINK ? CHANNEL_CONTROL
									: r % CHANNEL_CLASSES);
		out[at + 1] = 0;
		out[at + 2] = (uint8_t)n;
		out[at + 3] = (uint8_t)(n >> 8);
		for (size_t i = 0; i < n; i++) {
			out[at + CHANNEL_RECORD_HEADER + i] = (uint8_t)(i * 7 + r);
		}
		at += CHANNEL_RECORD_HEADER + n;
	}
}

/* The first message, then each class's record bytes in order: what a
 * transport must keep (it may interleave classes as it likes). */
static bool same_session(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t first = channel_first_size(a, len);
	if (first == 0 || first == SIZE_MAX || memcmp(a, b, first) != 0) {
		return false;
	}
	struct buffer ca[CHANNEL_CLASSES], cb[CHANNEL_CLASSES];
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		buffer_init(&ca[c], len);
		buffer_init(&cb[c], len);
	}
	bool same = records_by_class(a + first, len - first, ca) &&
		records_by_class(b + first, len - first, cb);
	for (int c = 0; c < CHANNEL_CLASSES; c++) {
		same = same && same_bytes(&ca[c], &cb[c]);
		buffer_finish(&ca[c]);
		buffer_finish(&cb[c]);
	}
	return same;
}

/* A session's bytes written at one end arrive at the other, both ways,
 * more of them than either end's buffers hold: the first message first,
 * each class whole and in order. */
static void stream_both_ways(void)
{
	char addr[64], err[256];
	struct quic_endpoint *server = listen_any(addr, sizeof(addr));
	CHECK(server != NULL);
	if (!server) {
		return;
	}
	struct quic_endpoint *client;
	int cfd = quic_connect(addr, (const uint8_t *)KEY, strlen(KEY), 5000, &client, err,
		sizeof(err));
	CHECK(cfd >= 0);
	if (cfd < 0) {
		fprintf(stderr, "quic_connect: %s\n", err);
		quic_close(server);
		return;
	}
	int sfd = accept_one(server);
	CHECK(sfd >= 0);
	size_t len = 24u << 20;
	uint8_t *out = malloc(len), *back = malloc(len);
	make_session_bytes(out, len);
	struct echo e = {.fd = sfd, .len = len};
	pthread_t t;
	pthread_create(&t, NULL, echo_thread, &e);
	/* Writing all before reading any would fill both ways' buffers. */
	size_t sent = 0, got = 0;
	while (got < len) {
		struct pollfd pfd = {.fd = cfd, .events = POLLIN | (sent < len ? POLLOUT : 0)};
		if (poll(&pfd, 1, 10000) <= 0) {
			break;
		}
		if ((pfd.revents & POLLOUT) && sent < len) {
			size_t chunk = len - sent < 65536 ? len - sent : 65536;
			ssize_t n = write(cfd, out + sent, chunk);
			sent += n > 0 ? (size_t)n : 0;
		}
		if (pfd.revents & POLLIN) {
			ssize_t n = read(cfd, back + got, len - got);
			if (n <= 0) {
				break;
			}
			got += (size_t)n;
		}
	}
	pthread_join(t, NULL);
	CHECK(e.ok);
	CHECK(got == len && same_session(out, back, len));
	char stats[160];
	quic_describe(client, stats, sizeof(stats));
	printf("client: %s\n", stats);
	free(out);
	free(back);
	/* The client's end closed: the server's end reads its end. */
	close(cfd);
	uint8_t byte;
	struct pollfd pfd = {.fd = sfd, .events = POLLIN};
	CHECK(poll(&pfd, 1, 5000) == 1 && read(sfd, &byte, 1) == 0);
	close(sfd);
	quic_close(client);
	quic_close(server);
}

/* The stream of a client whose connection fails ends, and the endpoint
 * says why. */
static void ends_with_reason(const char *addr, const char *key, int timeout_ms)
{
	char err[256] = "", why[256] = "";
	struct quic_endpoint *client;
	int cfd = quic_connect(addr, (const uint8_t *)key, strlen(key), timeout_ms, &client, err,
		sizeof(err));
	CHECK(cfd >= 0);
	if (cfd < 0) {
		fprintf(stderr, "quic_connect: %s\n", err);
		return;
	}
	/* What the program writes before the handshake waits for it; a
	 * refusal that came first has closed the other end already (the
	 * programs ignore SIGPIPE, as this does). */
	signal(SIGPIPE, SIG_IGN);
	ssize_t wrote = write(cfd, "hello", 5);
	CHECK(wrote == 5 || (wrote < 0 && errno == EPIPE));
	struct pollfd pfd = {.fd = cfd, .events = POLLIN};
	uint8_t byte;
	CHECK(poll(&pfd, 1, timeout_ms + 5000) == 1 && read(cfd, &byte, 1) <= 0);
	quic_failure(client, why, sizeof(why));
	CHECK(why[0] != '\0');
	printf("ended: %s\n", why);
	close(cfd);
	quic_close(client);
}

/* A client with another key gets no connection, and is told why. */
static void wrong_key(void)
{
	char addr[64];
	struct quic_endpoint *server = listen_any(addr, sizeof(addr));
	CHECK(server != NULL);
	if (!server) {
		return;
	}
	ends_with_reason(addr, "00000000000000000000000000000000", 3000);
	char host[QUIC_HOST_MAX];
	int port;
	bool watch;
	int slot;
	CHECK(quic_accept(server, host, &port, &watch, &slot) < 0);
	quic_close(server);
}

/* Nobody listening: the client gives up at its timeout, with a reason. */
static void nobody_there(void)
{
	ends_with_reason("127.0.0.1:9", KEY, 500);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"both_ways", stream_both_ways},
		{"wrong_key", wrong_key},
		{"nobody", nobody_there},
	};
	return check_main(argc, argv, cases, N(cases));
}
