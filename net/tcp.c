/* TCP between the two programs: the sockets' settings and who is at the other end. */
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tcp.h"

/* The pacing keeps about 1.5 round trips of data unacknowledged; this
 * bounds what the kernel itself holds unsent beyond the window. */
#define NOTSENT_LOWAT (16 * 1024)

void tcp_tune(int fd)
{
	int one = 1, lowat = NOTSENT_LOWAT;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat));
}

int tcp_peer_port(int fd)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	if (getpeername(fd, (struct sockaddr *)&addr, &len) != 0) {
		return 0;
	}
	if (addr.ss_family == AF_INET) {
		return ntohs(((struct sockaddr_in *)&addr)->sin_port);
	}
	if (addr.ss_family == AF_INET6) {
		return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
	}
	return 0;
}

/* Fills a sock_diag socket id with addr's address and port. */
static void diag_end(const struct sockaddr_storage *addr, __be16 *port, __be32 out[4])
{
	if (addr->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)addr;
		*port = a->sin_port;
		memcpy(out, &a->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)addr;
		*port = a->sin6_port;
		memcpy(out, &a->sin6_addr, 16);
	}
}

long tcp_peer_uid(int fd)
{
	struct sockaddr_storage local, peer;
	socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
	if (getsockname(fd, (struct sockaddr *)&local, &local_len) != 0 ||
		getpeername(fd, (struct sockaddr *)&peer, &peer_len) != 0 ||
		(peer.ss_family != AF_INET && peer.ss_family != AF_INET6) ||
		peer.ss_family != local.ss_family) {
		return -1;
	}
	bool loopback;
	if (peer.ss_family == AF_INET) {
		loopback = (ntohl(((struct sockaddr_in *)&peer)->sin_addr.s_addr) >> 24) == 127;
	} else {
		const struct in6_addr *a = &((struct sockaddr_in6 *)&peer)->sin6_addr;
		loopback = IN6_IS_ADDR_LOOPBACK(a) ||
			(IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	if (!loopback) {
		return -1;
	}
	/* The peer's socket, seen from its side: its port and address are the
	 * source, ours the destination. The kernel answers with its owner. */
	struct {
		struct nlmsghdr header;
		struct inet_diag_req_v2 req;
	} ask = {
		.header = {.nlmsg_len = sizeof(ask),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST},
		.req = {.sdiag_family = (uint8_t)peer.ss_family,
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_states = ~0u,
			.id = {.idiag_cookie = {INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE}}},
	};
	diag_end(&peer, &ask.req.id.idiag_sport, ask.req.id.idiag_src);
	diag_end(&local, &ask.req.id.idiag_dport, ask.req.id.idiag_dst);
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0) {
		return -1;
	}
	struct timeval wait = {.tv_usec = 100000};
	setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
	long uid = -1;
	union {
		struct nlmsghdr header;
		uint8_t bytes[1024];
	} reply;
	if (send(nl, &ask, sizeof(ask), 0) == (ssize_t)sizeof(ask)) {
		ssize_t n = recv(nl, &reply, sizeof(reply), 0);
		if (n >= (ssize_t)(NLMSG_LENGTH(sizeof(struct inet_diag_msg))) &&
			NLMSG_OK(&reply.header, (size_t)n) &&
			reply.header.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
			const struct inet_diag_msg *msg = NLMSG_DATA(&reply.header);
			uid = (long)msg->idiag_uid;
		}
	}
	close(nl);
	return uid;
}
