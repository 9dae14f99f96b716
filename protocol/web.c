#include <arpa/inet.h>
#include <errno.h>
#include <libwebsockets.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "tcp.h"
#include "web.h"

/* Sockets made for WebSockets and not yet taken by the program: listen.c
 * bounds the handshakes, this the queue in front of it. */
#define MAX_WAITING 16
/* WebSockets open at once, before or after their hello. */
#define MAX_BRIDGES 64
/* Connections of any kind the thread serves at once (HTTP included). */
#define MAX_CONNECTIONS 256
/* The most either way holds in flight: one chunk, until it is written. */
#define CHUNK 65536

struct waiting {
	int fd;
	char host[WEB_HOST_MAX];
	int port;
};

struct web {
	struct lws_context *context;
	struct lws_vhost *vhost;
	struct lws_http_mount mount;
	struct lws_protocols protocols[4];
	char root[4096];
	bool tls;
	pthread_t thread;
	bool started;
	atomic_bool stopping;
	int event; /* eventfd: readable while waiting[] has a socket */
	pthread_mutex_t lock;
	struct waiting waiting[MAX_WAITING];
	int nwaiting;
	/* the web thread's alone */
	int bridges;
	time_t refused_at;
	int refused;
};

/* One WebSocket and its socket: lives until both have closed. */
struct bridge {
	struct web *web;
	struct lws *ws, *raw;
	uint8_t *to_ws, *to_sock; /* LWS_PRE bytes of room, then the bytes */
	size_t to_ws_len, to_sock_len;
};

static void bridge_release(struct bridge *b)
{
	if (b->ws || b->raw) {
		return;
	}
	free(b->to_ws);
	free(b->to_sock);
	free(b);
}

/* Appends bytes to a chunk in flight (LWS_PRE room first); false past
 * twice the chunk, which flow control never lets happen. */
static bool take(uint8_t **buf, size_t *len, const void *in, size_t n)
{
	if (*len + n > 2 * CHUNK) {
		return false;
	}
	uint8_t *p = realloc(*buf, LWS_PRE + *len + n);
	if (!p) {
		return false;
	}
	memcpy(p + LWS_PRE + *len, in, n);
	*buf = p;
	*len += n;
	return true;
}

/* Writes the chunk in flight on wsi (as protocol says), then lets other
 * read again: one chunk each way at most. False if the write failed. */
static bool flush(struct lws *wsi, uint8_t *buf, size_t *len, enum lws_write_protocol protocol,
	struct lws *other)
{
	if (!*len) {
		return true;
	}
	int n = lws_write(wsi, buf + LWS_PRE, *len, protocol);
	*len = 0;
	if (n < 0) {
		return false;
	}
	if (other) {
		lws_rx_flow_control(other, 1);
	}
	return true;
}

static void refusal(struct web *web, struct lws *wsi, const char *why)
{
	char peer[WEB_HOST_MAX] = "?";
	lws_get_peer_simple(wsi, peer, sizeof(peer));
	time_t now = time(NULL);
	web->refused++;
	if (now != web->refused_at) {
		log_info("refused a WebSocket from %s: %s (%d refused this second)", peer, why,
			web->refused);
		web->refused_at = now;
		web->refused = 0;
	}
}

/* Whether the browser's Origin header names the page this door serves:
 * the scheme it serves and the Host it was asked for. */
static bool origin_ok(const char *origin, const char *host, bool tls)
{
	const char *scheme = tls ? "https://" : "http://";
	size_t n = strlen(scheme);
	return origin && host && *host && strncmp(origin, scheme, n) == 0 &&
		strcmp(origin + n, host) == 0;
}

/* The browser's address as the program logs and bounds it. */
static void peer_of(struct lws *wsi, char host[WEB_HOST_MAX], int *port)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	*port = 0;
	snprintf(host, WEB_HOST_MAX, "?");
	if (getpeername(lws_get_socket_fd(wsi), (struct sockaddr *)&addr, &len) != 0) {
		return;
	}
	if (addr.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&addr;
		inet_ntop(AF_INET, &a->sin_addr, host, WEB_HOST_MAX);
		*port = ntohs(a->sin_port);
	} else if (addr.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&addr;
		inet_ntop(AF_INET6, &a->sin6_addr, host, WEB_HOST_MAX);
		*port = ntohs(a->sin6_port);
	}
}

/* A new WebSocket: its socket pair, one end kept here, the other queued
 * for the program. */
static bool bridge_open(struct web *web, struct lws *wsi, struct bridge **slot)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
		log_error("cannot make a socket for a WebSocket: %s", strerror(errno));
		return false;
	}
	struct bridge *b = calloc(1, sizeof(*b));
	pthread_mutex_lock(&web->lock);
	bool room = b && web->nwaiting < MAX_WAITING;
	if (room) {
		struct waiting *w = &web->waiting[web->nwaiting++];
		w->fd = sv[1];
		peer_of(wsi, w->host, &w->port);
	}
	pthread_mutex_unlock(&web->lock);
	if (!room) {
		close(sv[0]);
		close(sv[1]);
		free(b);
		refusal(web, wsi, "too many WebSockets waiting for the program");
		return false;
	}
	b->web = web;
	b->ws = wsi;
	lws_adopt_desc_t desc = {
		.vh = web->vhost,
		.type = LWS_ADOPT_SOCKET,
		.fd.sockfd = sv[0],
		.vh_prot_name = "rcomp-socket",
		.opaque = b,
	};
	/* On failure lws has closed sv[0]: the program reads an end at once. */
	b->raw = lws_adopt_descriptor_vhost_via_info(&desc);
	*slot = b;
	web->bridges++;
	uint64_t one = 1;
	if (write(web->event, &one, sizeof(one)) < 0) {
		/* the counter is full: it is readable anyway */
	}
	return b->raw != NULL;
}

static int callback_ws(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	struct web *web = lws_context_user(lws_get_context(wsi));
	struct bridge **slot = user, *b = slot ? *slot : NULL;
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
		char origin[256] = "", host[256] = "";
		if (lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN) < 0 ||
			lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST) < 0 ||
			!origin_ok(origin, host, web->tls)) {
			refusal(web, wsi, "its page is not this server's (Origin and Host differ)");
			return 1;
		}
		if (web->bridges >= MAX_BRIDGES) {
			refusal(web, wsi, "too many WebSockets");
			return 1;
		}
		return 0;
	}
	case LWS_CALLBACK_ESTABLISHED:
		*slot = NULL;
		return bridge_open(web, wsi, slot) ? 0 : -1;
	case LWS_CALLBACK_RECEIVE:
		if (!b || !b->raw) {
			return -1;
		}
		if (!lws_frame_is_binary(wsi)) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE,
				(unsigned char *)"binary only", 11);
			return -1;
		}
		if (!take(&b->to_sock, &b->to_sock_len, in, len)) {
			return -1;
		}
		lws_rx_flow_control(wsi, 0);
		lws_callback_on_writable(b->raw);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		if (!b) {
			return -1;
		}
		if (!flush(wsi, b->to_ws, &b->to_ws_len, LWS_WRITE_BINARY, b->raw)) {
			return -1;
		}
		if (!b->raw) {
			/* The program closed: what it sent is out; now the close. */
			lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
			return -1;
		}
		return 0;
	case LWS_CALLBACK_CLOSED:
		if (b) {
			web->bridges--;
			b->ws = NULL;
			*slot = NULL;
			if (b->raw) {
				lws_callback_on_writable(b->raw);
			}
			bridge_release(b);
		}
		return 0;
	default:
		return 0;
	}
}

static int callback_socket(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	struct bridge *b = lws_get_opaque_user_data(wsi);
	switch (reason) {
	case LWS_CALLBACK_RAW_RX:
		if (!b || !b->ws) {
			return -1;
		}
		if (!take(&b->to_ws, &b->to_ws_len, in, len)) {
			return -1;
		}
		lws_rx_flow_control(wsi, 0);
		lws_callback_on_writable(b->ws);
		return 0;
	case LWS_CALLBACK_RAW_WRITEABLE:
		if (!b) {
			return -1;
		}
		if (!flush(wsi, b->to_sock, &b->to_sock_len, LWS_WRITE_RAW, b->ws)) {
			return -1;
		}
		/* The browser went: the program reads the end once the last
		 * bytes are in. */
		return b->ws ? 0 : -1;
	case LWS_CALLBACK_RAW_CLOSE:
		if (b) {
			b->raw = NULL;
			lws_set_opaque_user_data(wsi, NULL);
			if (b->ws) {
				lws_callback_on_writable(b->ws);
			}
			bridge_release(b);
		}
		return 0;
	default:
		return 0;
	}
}

static void *serve(void *data)
{
	struct web *web = data;
	while (!atomic_load(&web->stopping)) {
		if (lws_service(web->context, 0) < 0) {
			break;
		}
	}
	return NULL;
}

static void lws_log(int level, const char *line)
{
	size_t n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) {
		n--;
	}
	log_debug("libwebsockets: %.*s", (int)n, line);
}

static bool loopback(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, addr, &a4) == 1) {
		return (ntohl(a4.s_addr) >> 24) == 127;
	}
	return inet_pton(AF_INET6, addr, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* ADDR:PORT or [ADDR]:PORT (tcp.c splits it as --listen-tcp's); "localhost"
 * is 127.0.0.1. */
static bool parse_spec(const char *spec, char *addr, size_t addr_size, int *port)
{
	const char *digits;
	if (!tcp_split_host_port(spec, addr, addr_size, &digits) || !*addr) {
		return false;
	}
	if (strcmp(addr, "localhost") == 0) {
		snprintf(addr, addr_size, "127.0.0.1");
	}
	char *end;
	long p = strtol(digits, &end, 10);
	if (*end || p < 1 || p > 65535) {
		return false;
	}
	*port = (int)p;
	return true;
}

/* Whether addr:port can be bound: lws says only that its vhost failed. */
static int bind_error(const char *addr, int port)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	int family;
	if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
		len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
		len = sizeof(struct sockaddr_in6);
	} else {
		return EADDRNOTAVAIL;
	}
	ss.ss_family = (sa_family_t)family;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return errno;
	}
	int on = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	int e = bind(fd, (struct sockaddr *)&ss, len) == 0 ? 0 : errno;
	close(fd);
	return e;
}

struct web *web_listen(const char *spec, const char *root, const char *cert, const char *key,
	char *err, size_t err_size)
{
	char addr[256];
	int port;
	if (!parse_spec(spec, addr, sizeof(addr), &port)) {
		snprintf(err, err_size, "%s is not ADDR:PORT (for example 127.0.0.1:8080)", spec);
		errno = EINVAL;
		return NULL;
	}
	bool tls = cert || key;
	if (tls && !(cert && key)) {
		snprintf(err, err_size, "TLS needs both --web-cert and --web-key");
		errno = EINVAL;
		return NULL;
	}
	if (!tls && !loopback(addr)) {
		snprintf(err, err_size,
			"plain HTTP is served only on a loopback address (127.0.0.1:%d, reached "
			"with ssh -L %d:localhost:%d HOST); on %s give --web-cert and --web-key "
			"for TLS",
			port, port, port, addr);
		errno = EINVAL;
		return NULL;
	}
	for (const char *f = cert; tls && f; f = f == cert ? key : NULL) {
		if (access(f, R_OK) != 0) {
			snprintf(err, err_size, "cannot read %s: %s", f, strerror(errno));
			errno = EINVAL;
			return NULL;
		}
	}
	char index[4200];
	snprintf(index, sizeof(index), "%s/index.html", root);
	if (access(index, R_OK) != 0) {
		snprintf(err, err_size, "the browser viewer's page is not at %s: %s", index,
			strerror(errno));
		errno = ENOENT;
		return NULL;
	}
	int in_use = bind_error(addr, port);
	if (in_use) {
		snprintf(err, err_size, "cannot listen on %s: %s", spec, strerror(in_use));
		errno = in_use;
		return NULL;
	}
	struct web *web = calloc(1, sizeof(*web));
	if (!web) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	web->tls = tls;
	web->event = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&web->lock, NULL);
	snprintf(web->root, sizeof(web->root), "%s", root);
	web->mount.mountpoint = "/";
	web->mount.mountpoint_len = 1;
	web->mount.origin = web->root;
	web->mount.def = "index.html";
	web->mount.origin_protocol = LWSMPRO_FILE;
	web->protocols[0] = (struct lws_protocols){"http", lws_callback_http_dummy, 0, 0};
	web->protocols[1] =
		(struct lws_protocols){"rcomp", callback_ws, sizeof(struct bridge *), CHUNK};
	web->protocols[2] = (struct lws_protocols){"rcomp-socket", callback_socket, 0, CHUNK};

	lws_set_log_level(LLL_ERR | LLL_WARN, lws_log);
	struct lws_context_creation_info info = {0};
	info.port = port;
	info.iface = addr;
	info.protocols = web->protocols;
	info.mounts = &web->mount;
	info.user = web;
	info.gid = (gid_t)-1;
	info.uid = (uid_t)-1;
	info.fd_limit_per_thread = MAX_CONNECTIONS;
	info.timeout_secs = 10;
	if (!strchr(addr, ':')) {
		info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
	}
	if (tls) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.ssl_cert_filepath = cert;
		info.ssl_private_key_filepath = key;
	}
	web->context = web->event >= 0 ? lws_create_context(&info) : NULL;
	web->vhost = web->context ? lws_get_vhost_by_name(web->context, "default") : NULL;
	if (!web->vhost) {
		snprintf(err, err_size, "libwebsockets cannot serve %s%s", spec,
			tls ? " (is the certificate or the key wrong?)" : "");
		errno = EINVAL;
		web_close(web);
		return NULL;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	web->started = pthread_create(&web->thread, NULL, serve, web) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!web->started) {
		snprintf(err, err_size, "cannot start the web thread");
		web_close(web);
		return NULL;
	}
	return web;
}

void web_close(struct web *web)
{
	if (!web) {
		return;
	}
	if (web->started) {
		atomic_store(&web->stopping, true);
		lws_cancel_service(web->context);
		pthread_join(web->thread, NULL);
	}
	if (web->context) {
		lws_context_destroy(web->context);
	}
	for (int i = 0; i < web->nwaiting; i++) {
		close(web->waiting[i].fd);
	}
	if (web->event >= 0) {
		close(web->event);
	}
	pthread_mutex_destroy(&web->lock);
	free(web);
}

int web_fd(const struct web *web)
{
	return web->event;
}

int web_accept(struct web *web, char host[WEB_HOST_MAX], int *port)
{
	uint64_t count;
	int fd = -1;
	pthread_mutex_lock(&web->lock);
	if (web->nwaiting > 0) {
		struct waiting w = web->waiting[0];
		memmove(&web->waiting[0], &web->waiting[1],
			(size_t)(web->nwaiting - 1) * sizeof(web->waiting[0]));
		web->nwaiting--;
		fd = w.fd;
		snprintf(host, WEB_HOST_MAX, "%s", w.host);
		*port = w.port;
	}
	if (web->nwaiting == 0 && read(web->event, &count, sizeof(count)) < 0) {
		/* nothing was counted */
	}
	pthread_mutex_unlock(&web->lock);
	return fd;
}
