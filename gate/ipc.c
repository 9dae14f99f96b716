#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ipc.h"

static bool ends(const char *field, size_t size)
{
	return memchr(field, '\0', size) != NULL;
}

bool gate_addr_ok(const char *addr)
{
	struct in6_addr a;
	return strcmp(addr, "?") == 0 || inet_pton(AF_INET, addr, &a) == 1 ||
		inet_pton(AF_INET6, addr, &a) == 1;
}

bool gate_request_ok(const struct gate_request *req)
{
	return req->op >= GATE_LOGIN && req->op <= GATE_CLOSED &&
		ends(req->cookie, sizeof(req->cookie)) && ends(req->csrf, sizeof(req->csrf)) &&
		ends(req->user, sizeof(req->user)) && ends(req->secret, sizeof(req->secret)) &&
		ends(req->addr, sizeof(req->addr)) && ends(req->arg, sizeof(req->arg)) &&
		ends(req->label, sizeof(req->label)) && gate_addr_ok(req->addr);
}

static bool send_all(int fd, struct iovec *iov, int n, int passfd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n};
	if (passfd >= 0) {
		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &passfd, sizeof(int));
	}
	ssize_t r;
	do {
		r = sendmsg(fd, &msg, MSG_NOSIGNAL);
	} while (r < 0 && errno == EINTR);
	return r >= 0;
}

bool gate_send_request(int fd, const struct gate_request *req)
{
	struct iovec iov = {(void *)req, sizeof(*req)};
	return send_all(fd, &iov, 1, -1);
}

bool gate_send_answer(int fd, const struct gate_answer *answer, const void *text, size_t len,
	int passfd)
{
	if (len > GATE_TEXT_MAX) {
		len = GATE_TEXT_MAX;
	}
	struct gate_answer head = *answer;
	head.len = (uint32_t)len;
	struct iovec iov[2] = {{&head, sizeof(head)}, {(void *)text, len}};
	return send_all(fd, iov, len ? 2 : 1, passfd);
}

ssize_t gate_receive(int fd, void *buf, size_t size, int *passfd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {buf, size};
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	*passfd = -1;
	ssize_t n;
	do {
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		return -1;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
			c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int got;
			memcpy(&got, CMSG_DATA(c), sizeof(int));
			if (*passfd < 0) {
				*passfd = got;
			} else {
				close(got);
			}
		}
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		if (*passfd >= 0) {
			close(*passfd);
			*passfd = -1;
		}
		errno = EMSGSIZE;
		return -1;
	}
	return n;
}

bool gate_copy(char *field, size_t size, const char *text)
{
	size_t n = strlen(text);
	if (n >= size) {
		return false;
	}
	memcpy(field, text, n + 1);
	return true;
}

bool gate_random_hex(char *out, size_t bytes)
{
	uint8_t raw[64];
	if (bytes > sizeof(raw) || getrandom(raw, bytes, 0) != (ssize_t)bytes) {
		return false;
	}
	for (size_t i = 0; i < bytes; i++) {
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	}
	explicit_bzero(raw, sizeof(raw));
	return true;
}
