/*
 * quic-idle: connections that prove a key and then say nothing. Keeps N
 * QUIC connections to HOST:PORT open with the token in FILE (the watch
 * token, whose "watch-" prefix names its identity, or the session's): each
 * completes its handshake and never sends a hello. One the server closes
 * is opened again, so the pressure lasts until SIGTERM; then it prints how
 * many it opened and how many the server closed.
 *
 *   quic-idle HOST:PORT TOKEN-FILE N
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quic.h"
#include "token.h"

#define MAX_IDLE 64

static volatile sig_atomic_t stop;

static void handle_stop(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	char token[256];
	size_t token_len;
	int n = argc == 4 ? atoi(argv[3]) : 0;
	if (n < 1 || n > MAX_IDLE) {
		fprintf(stderr, "usage: quic-idle HOST:PORT TOKEN-FILE N (N at most %d)\n",
			MAX_IDLE);
		return 2;
	}
	if (!token_read(argv[2], token, &token_len)) {
		return 1;
	}
	signal(SIGTERM, handle_stop);
	signal(SIGINT, handle_stop);
	struct quic_endpoint *eps[MAX_IDLE] = {NULL};
	int fds[MAX_IDLE];
	unsigned opened = 0, closed = 0;
	for (int i = 0; i < n; i++) {
		fds[i] = -1;
	}
	while (!stop) {
		for (int i = 0; i < n; i++) {
			if (fds[i] >= 0) {
				continue;
			}
			char err[256];
			fds[i] = quic_connect(argv[1], (const uint8_t *)token, token_len, 5000,
				&eps[i], err, sizeof(err));
			if (fds[i] < 0) {
				fprintf(stderr, "quic-idle: %s\n", err);
				return 1;
			}
			opened++;
		}
		struct pollfd pfd[MAX_IDLE];
		for (int i = 0; i < n; i++) {
			pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		}
		if (poll(pfd, (nfds_t)n, 100) <= 0) {
			continue;
		}
		char buf[4096];
		for (int i = 0; i < n; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) {
				continue;
			}
			/* The server's goodbye, then its end: drained, and gone. */
			ssize_t got;
			while ((got = read(fds[i], buf, sizeof(buf))) > 0) {
			}
			if (got == 0 || (pfd[i].revents & (POLLHUP | POLLERR))) {
				close(fds[i]);
				quic_close(eps[i]);
				fds[i] = -1;
				eps[i] = NULL;
				closed++;
			}
		}
	}
	for (int i = 0; i < n; i++) {
		if (fds[i] >= 0) {
			close(fds[i]);
			quic_close(eps[i]);
		}
	}
	printf("%u opened, %u closed by the server\n", opened, closed);
	return 0;
}
