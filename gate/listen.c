/*
 * The gate's port (listen.h): taken by the monitor, accepted on by the
 * network process, with HAProxy's PROXY protocol v2 read from the
 * configured proxies before a connection is handed to libwebsockets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "address.h"
#include "listen.h"
#include "log.h"
#include "net-state.h"

/* A proxy's header has this long to come whole (HAProxy sends it with the
 * connection). */
#define HEADER_WAIT_MS 2000

static const uint8_t signature[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49,
	0x54, 0x0a};

/* An address as the proxies list compares it: IPv4 in IPv6 as IPv4. */
static void normal(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *six = (struct sockaddr_in6 *)ss;
	if (ss->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&six->sin6_addr)) {
		struct sockaddr_in four = {.sin_family = AF_INET, .sin_port = six->sin6_port};
		memcpy(&four.sin_addr, &six->sin6_addr.s6_addr[12], 4);
		memset(ss, 0, sizeof(*ss));
		memcpy(ss, &four, sizeof(four));
	}
}

/* The monitor's side ------------------------------------------------------ */

static int activated(char *why, size_t why_size)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	if (!pid || !fds || atol(pid) != (long)getpid() || atoi(fds) < 1) {
		return -1;
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	int fd = 3; /* SD_LISTEN_FDS_START */
	int listening = 0, type = 0;
	socklen_t n = sizeof(listening), m = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &n) != 0 || !listening ||
		getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &m) != 0 || type != SOCK_STREAM) {
		snprintf(why, why_size, "the socket systemd passed is not a listening TCP socket");
		return -2;
	}
	return fd;
}

int listen_bind(const struct gate_config *config, int *bind_errno, char *why, size_t why_size)
{
	char host[128], port[16];
	int p;
	*bind_errno = 0;
	if (!address_listen(config->listen, host, sizeof(host), &p)) {
		snprintf(why, why_size, "listen = %s is not ADDR:PORT", config->listen);
		return -1;
	}
	snprintf(port, sizeof(port), "%d", p);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV};
	struct addrinfo *res;
	int err = getaddrinfo(host, port, &hints, &res);
	if (err) {
		snprintf(why, why_size, "listen = %s: %s", config->listen, gai_strerror(err));
		return -1;
	}
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
		bind(fd, res->ai_addr, res->ai_addrlen) != 0) {
		*bind_errno = errno;
		snprintf(why, why_size, "cannot listen on %s: %s%s", config->listen,
			strerror(errno), errno == EADDRINUSE ? " (is the port taken?)" : "");
		if (fd >= 0) {
			close(fd);
		}
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

int listen_socket(const struct gate_config *config, char *why, size_t why_size)
{
	int fd = activated(why, why_size);
	if (fd == -2) {
		return -1;
	}
	if (fd >= 0) {
		/* Plain HTTP on loopback only, whoever made the socket. */
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		char host[INET6_ADDRSTRLEN] = "?";
		if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0) {
			normal(&ss);
			inet_ntop(ss.ss_family,
				ss.ss_family == AF_INET
					? (const void *)&((struct sockaddr_in *)&ss)->sin_addr
					: (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr,
				host, sizeof(host));
		}
		if (!config->cert[0] && !address_is_loopback(host)) {
			snprintf(why, why_size,
				"the socket systemd passed is on %s, not a loopback address: plain "
				"HTTP is served only on loopback (give cert and key)",
				host);
			return -1;
		}
		log_info("listening on the socket systemd passed (rcomp-gate.socket)");
	} else {
		int bind_errno = 0;
		fd = listen_bind(config, &bind_errno, why, why_size);
		if (fd >= 0 && listen(fd, 512) != 0) {
			snprintf(why, why_size, "cannot listen on %s: %s", config->listen,
				strerror(errno));
			close(fd);
			fd = -1;
		}
		if (fd < 0) {
			return -1;
		}
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/* The network process's side ---------------------------------------------- */

static bool from_proxy(const struct gate_config *config, const struct sockaddr_storage *ss)
{
	for (int i = 0; i < config->nproxies; i++) {
		const struct sockaddr_storage *p = &config->proxies[i];
		if (p->ss_family != ss->ss_family) {
			continue;
		}
		if (ss->ss_family == AF_INET &&
			memcmp(&((const struct sockaddr_in *)p)->sin_addr,
				&((const struct sockaddr_in *)ss)->sin_addr, 4) == 0) {
			return true;
		}
		if (ss->ss_family == AF_INET6 &&
			memcmp(&((const struct sockaddr_in6 *)p)->sin6_addr,
				&((const struct sockaddr_in6 *)ss)->sin6_addr, 16) == 0) {
			return true;
		}
	}
	return false;
}

/* The entry of fd, or (fd -1) a free one; NULL if none. */
static struct listen_peer *peer_of(struct listen_state *l, int fd)
{
	for (int i = 0; i < LISTEN_PEERS; i++) {
		struct listen_peer *p = &l->peers[i];
		if (fd < 0 ? !p->used : p->used && p->fd == fd) {
			return p;
		}
	}
	return NULL;
}

bool listen_serve(struct net *net, int fd)
{
	struct listen_state *l = &net->listen;
	l->fd = fd;
	for (int i = 0; i < LISTEN_PENDING; i++) {
		l->pending[i].fd = -1;
	}
	lws_adopt_desc_t desc = {
		.vh = net->vhost,
		.type = LWS_ADOPT_RAW_FILE_DESC,
		.fd.filefd = fd,
		.vh_prot_name = "gate-listen",
	};
	return lws_adopt_descriptor_vhost_via_info(&desc) != NULL;
}

/* A connection from a proxy: its header is read as it comes, on a copy of
 * its descriptor that lws watches, before the connection itself goes to
 * lws. */
static void await_header(struct net *net, int fd, const struct sockaddr_storage *from)
{
	struct listen_state *l = &net->listen;
	struct listen_pending *p = NULL;
	for (int i = 0; i < LISTEN_PENDING && !p; i++) {
		if (l->pending[i].fd < 0) {
			p = &l->pending[i];
		}
	}
	int copy = p ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (copy < 0) {
		close(fd);
		return;
	}
	*p = (struct listen_pending){.fd = fd, .deadline_ms = net_now_ms() + HEADER_WAIT_MS};
	lws_adopt_desc_t desc = {
		.vh = net->vhost,
		.type = LWS_ADOPT_RAW_FILE_DESC,
		.fd.filefd = copy,
		.vh_prot_name = "gate-proxy",
		.opaque = p,
	};
	p->wsi = lws_adopt_descriptor_vhost_via_info(&desc);
	if (!p->wsi) {
		close(copy);
		close(fd);
		p->fd = -1;
	}
	(void)from;
}

static void accept_all(struct net *net)
{
	struct listen_state *l = &net->listen;
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			return; /* EAGAIN, or out of descriptors until one closes */
		}
		normal(&ss);
		/* As lws's own listener sets its connections: no Nagle delay
		 * on a frame's last segment behind an ack. */
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		/* A number is reused as soon as it is closed: what was known of
		 * the last connection by that number is not this one's. */
		struct listen_peer *stale = peer_of(l, fd);
		if (stale) {
			stale->used = false;
		}
		if (from_proxy(net->config, &ss)) {
			await_header(net, fd, &ss);
		} else if (!lws_adopt_socket_vhost(net->vhost, fd)) {
			/* lws closed it */
		}
	}
}

int listen_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	if (reason == LWS_CALLBACK_RAW_RX_FILE) {
		accept_all(net_of(wsi));
	}
	return 0;
}

/* The header whole: the browser's address in *addr (for LOCAL, a proxy's
 * own check, none: *len 0). False if it is no PROXY v2 header of TCP. */
static bool parse_header(const uint8_t *h, size_t n, struct sockaddr_storage *addr, socklen_t *len)
{
	memset(addr, 0, sizeof(*addr));
	*len = 0;
	if (n < 16 || memcmp(h, signature, sizeof(signature)) != 0 || (h[12] >> 4) != 2) {
		return false;
	}
	int command = h[12] & 15;
	if (command == 0) {
		return true; /* LOCAL */
	}
	size_t body = (size_t)h[14] << 8 | h[15];
	if (command != 1 || n < 16 + body) {
		return false;
	}
	if (h[13] == 0x11 && body >= 12) {
		struct sockaddr_in *a = (struct sockaddr_in *)addr;
		a->sin_family = AF_INET;
		memcpy(&a->sin_addr, h + 16, 4);
		memcpy(&a->sin_port, h + 24, 2);
		*len = sizeof(*a);
		return true;
	}
	if (h[13] == 0x21 && body >= 36) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)addr;
		a->sin6_family = AF_INET6;
		memcpy(&a->sin6_addr, h + 16, 16);
		memcpy(&a->sin6_port, h + 48, 2);
		*len = sizeof(*a);
		normal(addr);
		*len = addr->ss_family == AF_INET ? sizeof(struct sockaddr_in) : *len;
		return true;
	}
	return false;
}

/* Reads what is due of p's header: exactly its length, so that the first
 * byte of HTTP stays in the socket for lws. 1: whole, 0: more to come,
 * -1: not a header (or the connection ended). */
static int read_header(struct listen_pending *p)
{
	size_t need = 16;
	if (p->have >= 16) {
		need = 16 + ((size_t)p->head[14] << 8 | p->head[15]);
		if (need > sizeof(p->head)) {
			return -1;
		}
	}
	ssize_t got = read(p->fd, p->head + p->have, need - p->have);
	if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
		return -1;
	}
	if (got > 0) {
		p->have += (size_t)got;
	}
	if (p->have >= 12 && memcmp(p->head, signature, 12) != 0) {
		return -1;
	}
	if (p->have < 16) {
		return 0;
	}
	size_t whole = 16 + ((size_t)p->head[14] << 8 | p->head[15]);
	return whole > sizeof(p->head) ? -1 : p->have == whole ? 1 : 0;
}

int listen_proxy_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	struct net *net = net_of(wsi);
	struct listen_pending *p = lws_get_opaque_user_data(wsi);
	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE: {
		if (!p || p->fd < 0) {
			return -1;
		}
		int r = read_header(p);
		if (r == 0) {
			return 0;
		}
		struct sockaddr_storage addr;
		socklen_t alen;
		if (r < 0 || !parse_header(p->head, p->have, &addr, &alen)) {
			log_info("a connection from a proxy came without a PROXY protocol v2 "
				 "header: "
				 "closed (give HAProxy's server lines send-proxy-v2)");
			return -1;
		}
		struct listen_peer *peer = alen ? peer_of(&net->listen, -1) : NULL;
		if (peer) {
			*peer = (struct listen_peer){.used = true,
				.fd = p->fd,
				.addr = addr,
				.len = alen};
		}
		if (alen && !peer) {
			return -1; /* no room to remember whose it is */
		}
		p->handed = true;
		if (!lws_adopt_socket_vhost(net->vhost, p->fd) && peer) {
			peer->used = false;
		}
		return -1; /* the copy goes; the connection is lws's */
	}
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (p && p->fd >= 0) {
			if (!p->handed) {
				close(p->fd);
			}
			p->fd = -1;
		}
		return 0;
	default:
		return 0;
	}
}

void listen_sweep(struct net *net, uint64_t now_ms)
{
	for (int i = 0; i < LISTEN_PENDING; i++) {
		struct listen_pending *p = &net->listen.pending[i];
		if (p->fd >= 0 && p->wsi && now_ms >= p->deadline_ms) {
			lws_set_timeout(p->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
			p->deadline_ms = UINT64_MAX;
		}
	}
}

bool listen_peer(struct lws *wsi, struct sockaddr_storage *addr, socklen_t *len)
{
	struct net *net = net_of(wsi);
	int fd = lws_get_socket_fd(lws_get_network_wsi(wsi));
	struct listen_peer *p = fd >= 0 ? peer_of(&net->listen, fd) : NULL;
	if (p) {
		memcpy(addr, &p->addr, sizeof(*addr));
		*len = p->len;
		return true;
	}
	*len = sizeof(*addr);
	if (fd < 0 || getpeername(fd, (struct sockaddr *)addr, len) != 0) {
		return false;
	}
	normal(addr);
	if (addr->ss_family == AF_INET) {
		*len = sizeof(struct sockaddr_in);
	}
	return true;
}

void listen_forget(struct lws *wsi)
{
	if (lws_get_network_wsi(wsi) != wsi) {
		return;
	}
	int fd = lws_get_socket_fd(wsi);
	struct listen_peer *p = fd >= 0 ? peer_of(&net_of(wsi)->listen, fd) : NULL;
	if (p) {
		p->used = false;
	}
}
