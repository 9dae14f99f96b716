#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <libwebsockets.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "address.h"
#include "bridge.h"
#include "buffer.h"
#include "log.h"
#include "monotonic.h"
#include "tcp.h"
#include "web-admit.h"
#include "web.h"
#include "wire.h"

/* Sockets made for WebSockets and not yet taken by the program: listen.c
 * bounds the handshakes, this the queue in front of it. */
#define MAX_WAITING 16
/* WebSockets open at once, before or after their hello. */
#define MAX_BRIDGES 64
/* Connections from browsers at once (HTTP and WebSocket), in all and from
 * one address (web-admit.c's key); the thread's table holds more, for the
 * sockets of the WebSockets' bridges and those being closed for room. */
#define MAX_CONNECTIONS 256
#define MAX_PER_ADDRESS 32
#define TABLE_SIZE 640
/* Reasons for refusals, each logged on its own. */
#define MAX_REASONS 16
/* Names a certificate may give this server. */
#define MAX_NAMES 16
#define CHUNK BRIDGE_CHUNK
/* How long web_close waits for the WebSockets open to take what their
 * sockets said last (the session's goodbye) and close. */
#define WEB_CLOSE_MS 1000

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
	/* web_close's deadline (now_ms()) for the browsers still open, 0
	 * while it serves */
	atomic_uint_fast64_t stop_at_ms;
	int event; /* eventfd: readable while waiting[] has a socket */
	pthread_mutex_t lock;
	struct waiting waiting[MAX_WAITING];
	int nwaiting;
	char proofs[2][ADMIT_PROOF_HEX + 1]; /* the tokens' proofs */
	int nproofs;
	char *names[MAX_NAMES]; /* the certificate's */
	int nnames;
	/* the web thread's alone */
	struct admit admit;
	lws_sorted_usec_list_t sweep;
	int bridges;
	struct refusals {
		const char *why;
		int count; /* since its last line */
		uint64_t at_ms; /* its last line */
	} refusals[MAX_REASONS];
};

/* One WebSocket and its socket (bridge.c): lives until both have closed. */
struct web_bridge {
	struct bridge b;
	struct web *web;
	bool counted; /* in web->bridges: one the program reads */
	bool heard; /* the page's first bytes came */
};

static void web_bridge_free(struct bridge *b)
{
	free(b);
}

/* A connection refused or closed at the door: for each reason, one line
 * a second at most, with how many went for it since its last line. why
 * is a string literal: its address names the reason. */
static void refusal(struct web *web, struct lws *wsi, const char *why)
{
	char peer[WEB_HOST_MAX] = "?";
	lws_get_peer_simple(wsi, peer, sizeof(peer));
	uint64_t now = monotonic_usec() / 1000;
	struct refusals *r = NULL;
	for (int i = 0; i < MAX_REASONS && !r; i++) {
		if (web->refusals[i].why == why || !web->refusals[i].why) {
			r = &web->refusals[i];
		}
	}
	if (!r) {
		r = &web->refusals[MAX_REASONS - 1];
	}
	r->why = why;
	r->count++;
	if (!r->at_ms || now - r->at_ms >= 1000) {
		char more[48] = "";
		if (r->count > 1) {
			snprintf(more, sizeof(more), " (%d like it since the last such line)",
				r->count - 1);
		}
		log_info("refused a connection at the browsers' door from %s (counted as %s): %s%s",
			peer, admit_key_of(&web->admit, lws_get_network_wsi(wsi)), why, more);
		r->at_ms = now;
		r->count = 0;
	}
}

/* The counts refusal() held back, once their second is over. */
static void refusals_flush(struct web *web, uint64_t now)
{
	for (int i = 0; i < MAX_REASONS && web->refusals[i].why; i++) {
		struct refusals *r = &web->refusals[i];
		if (r->count && now - r->at_ms >= 1000) {
			log_info("refused %d more connections at the browsers' door: %s", r->count,
				r->why);
			r->count = 0;
			r->at_ms = now;
		}
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

static uint64_t now_ms(void)
{
	return monotonic_usec() / 1000;
}

/* A new WebSocket: its socket pair, one end kept here, the other queued
 * for the program with the browser's address as the door counts it. */
static bool bridge_open(struct web *web, struct lws *wsi, struct web_bridge **slot)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
		log_error("cannot make a socket for a WebSocket: %s", strerror(errno));
		return false;
	}
	struct web_bridge *b = calloc(1, sizeof(*b));
	pthread_mutex_lock(&web->lock);
	bool room = b && web->nwaiting < MAX_WAITING;
	if (room) {
		struct waiting *w = &web->waiting[web->nwaiting++];
		w->fd = sv[1];
		snprintf(w->host, sizeof(w->host), "%s",
			admit_key_of(&web->admit, lws_get_network_wsi(wsi)));
		w->port = tcp_peer_port(lws_get_socket_fd(wsi));
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
	b->b.ws = wsi;
	b->b.release = web_bridge_free;
	b->counted = true;
	/* On failure lws has closed sv[0]: the program reads an end at once. */
	bool adopted = bridge_adopt(&b->b, web->vhost, sv[0], "rcomp-socket");
	*slot = b;
	web->bridges++;
	uint64_t one = 1;
	if (write(web->event, &one, sizeof(one)) < 0) {
		/* the counter is full: it is readable anyway */
	}
	return adopted;
}

/* A WebSocket that showed a wrong proof, or came while its address must
 * wait: it is told why in a goodbye, as the program tells a viewer, and
 * closed once that is written. */
static bool bridge_refuse(struct lws *wsi, struct web_bridge **slot,
	enum wire_goodbye_reason reason, const char *text)
{
	struct web_bridge *b = calloc(1, sizeof(*b));
	if (!b) {
		return false;
	}
	b->web = lws_context_user(lws_get_context(wsi));
	b->b.ws = wsi;
	b->b.release = web_bridge_free;
	if (!bridge_goodbye(&b->b, reason, text)) {
		free(b->b.to_ws);
		free(b);
		return false;
	}
	*slot = b;
	return true;
}

/* Whether the request's Host names this server (web-admit.c says which
 * do), copied into host. */
static bool host_ok(struct web *web, struct lws *wsi, char *host, size_t size)
{
	int n = lws_hdr_copy(wsi, host, (int)size, WSI_TOKEN_HOST);
	return n > 0 &&
		admit_host_ok(host, (size_t)n, (const char *const *)web->names, web->nnames);
}

/* Whether a WebSocket is for the page: the Host is ours, the Origin the
 * page's own, and the subprotocol the page's with the token's proof.
 * verdict says what its hello will meet. */
enum verdict {
	VERDICT_PROVEN,
	VERDICT_WRONG, /* a proof of no token of this session */
	VERDICT_WAIT, /* its address gave too many wrong proofs: not checked */
};

struct ws_session {
	struct web_bridge *bridge;
	enum verdict verdict;
};

static bool websocket_ok(struct web *web, struct lws *wsi, enum verdict *verdict)
{
	char origin[256] = "", host[256] = "", offer[600] = "";
	if (!host_ok(web, wsi, host, sizeof(host))) {
		refusal(web, wsi, "its Host names no address or name of this server");
		return false;
	}
	if (lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN) < 0 ||
		!origin_ok(origin, host, web->tls)) {
		refusal(web, wsi, "its page is not this server's (Origin and Host differ)");
		return false;
	}
	int n = lws_hdr_copy(wsi, offer, sizeof(offer), WSI_TOKEN_PROTOCOL);
	char proof[ADMIT_PROOF_HEX + 1];
	switch (n < 0 ? ADMIT_OFFER_NONE : admit_parse_offer(offer, (size_t)n, proof)) {
	case ADMIT_OFFER_NONE:
		refusal(web, wsi, "a WebSocket for another subprotocol than rcomp's");
		return false;
	case ADMIT_OFFER_UNKEYED:
		refusal(web, wsi,
			"a WebSocket without the token's proof (a page of an older rcomp?)");
		return false;
	case ADMIT_OFFER_KEYED:
		break;
	}
	if (web->bridges >= MAX_BRIDGES) {
		refusal(web, wsi, "too many WebSockets");
		return false;
	}
	struct lws *net = lws_get_network_wsi(wsi);
	uint64_t now = now_ms();
	if (!admit_may_try(&web->admit, net, now)) {
		refusal(web, wsi, "its address gave too many wrong tokens: it must wait");
		*verdict = VERDICT_WAIT;
		admit_set(&web->admit, net, ADMIT_REFUSED, now);
		return true;
	}
	bool proven = false;
	for (int i = 0; i < web->nproofs; i++) {
		proven |= admit_proof_equal(proof, web->proofs[i]);
	}
	if (!proven) {
		refusal(web, wsi, "wrong token");
		admit_wrong(&web->admit, net, now);
		*verdict = VERDICT_WRONG;
		admit_set(&web->admit, net, ADMIT_REFUSED, now);
		return true;
	}
	*verdict = VERDICT_PROVEN;
	admit_set(&web->admit, net, ADMIT_KEYED, now);
	return true;
}

static int callback_ws(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	struct web *web = lws_context_user(lws_get_context(wsi));
	struct ws_session *session = user;
	struct web_bridge *b = session ? session->bridge : NULL;
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return websocket_ok(web, wsi, &session->verdict) ? 0 : 1;
	case LWS_CALLBACK_ESTABLISHED:
		session->bridge = NULL;
		switch (session->verdict) {
		case VERDICT_PROVEN:
			return bridge_open(web, wsi, &session->bridge) ? 0 : -1;
		case VERDICT_WRONG:
			return bridge_refuse(wsi, &session->bridge, WIRE_BYE_UNAUTHORIZED,
				       "wrong token")
				? 0
				: -1;
		case VERDICT_WAIT:
			return bridge_refuse(wsi, &session->bridge, WIRE_BYE_BUSY,
				       "too many wrong tokens from this address: trying again")
				? 0
				: -1;
		}
		return -1;
	case LWS_CALLBACK_RECEIVE:
		/* Its hello has begun: the program's deadline for it is the
		 * one that counts now. */
		if (b && b->counted && !b->heard) {
			b->heard = true;
			admit_set(&web->admit, lws_get_network_wsi(wsi), ADMIT_TALKING, now_ms());
		}
		return bridge_ws_receive(b ? &b->b : NULL, wsi, in, len);
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return bridge_ws_writeable(b ? &b->b : NULL, wsi);
	case LWS_CALLBACK_CLOSED:
		if (b) {
			web->bridges -= b->counted;
			session->bridge = NULL;
			bridge_ws_closed(&b->b);
		}
		return 0;
	default:
		return 0;
	}
}

static int callback_socket(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	if (reason == LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION) {
		/* A WebSocket that names the bridges' own protocol. */
		refusal(lws_context_user(lws_get_context(wsi)), wsi,
			"a WebSocket for another subprotocol than rcomp's");
		return 1;
	}
	return bridge_socket_callback(wsi, reason, user, in, len);
}

/* A new connection from a browser: counted under its address, and room
 * made for it by closing the oldest that proved nothing. */
static bool arrive(struct web *web, struct lws *wsi)
{
	const void *evict;
	long uid = tcp_peer_uid(lws_get_socket_fd(wsi));
	switch (bridge_arrive(&web->admit, wsi, uid, now_ms(), &evict)) {
	case ADMIT_IN:
		return true;
	case ADMIT_IN_MADE_ROOM:
		refusal(web, (struct lws *)evict, "closed to make room for a newer connection");
		bridge_close_soon(evict);
		return true;
	case ADMIT_OUT_ADDRESS:
		refusal(web, wsi, "its address holds as many connections as one may, all proven");
		return false;
	case ADMIT_OUT_FULL:
		refusal(web, wsi, "the door holds as many connections as it may, all proven");
		return false;
	}
	return false;
}

/* A whole HTTP request: GET or HEAD, to this server by name. */
static bool request_ok(struct web *web, struct lws *wsi)
{
	char *uri, host[256];
	int uri_len;
	int method = lws_http_get_uri_and_method(wsi, &uri, &uri_len);
	if (method != LWSHUMETH_GET && method != LWSHUMETH_HEAD) {
		refusal(web, wsi, "a request other than GET or HEAD");
		return false;
	}
	if (!host_ok(web, wsi, host, sizeof(host))) {
		refusal(web, wsi, "its Host names no address or name of this server");
		return false;
	}
	admit_set(&web->admit, lws_get_network_wsi(wsi), ADMIT_HTTP, now_ms());
	return true;
}

/* The vhost's first protocol: every connection starts here, HTTP stays. */
static int callback_http(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	struct web *web = lws_context_user(lws_get_context(wsi));
	switch (reason) {
	case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
		return arrive(web, wsi) ? 0 : -1;
	case LWS_CALLBACK_WSI_DESTROY:
		admit_remove(&web->admit, wsi);
		return 0;
	case LWS_CALLBACK_FILTER_HTTP_CONNECTION:
		return request_ok(web, wsi) ? 0 : 1;
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		if (strcasecmp(in, "websocket") != 0) {
			refusal(web, wsi, "an upgrade to another protocol than WebSocket");
			return -1;
		}
		return 0;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		/* A WebSocket whose subprotocol list names none of ours (or
		 * none at all, as new WebSocket(url) sends). */
		refusal(web, wsi, "a WebSocket for another subprotocol than rcomp's");
		return 1;
	case LWS_CALLBACK_RAW_ADOPT:
		/* lws turns a CONNECT into a raw socket of this protocol's. */
		refusal(web, wsi, "a CONNECT request");
		return -1;
	case LWS_CALLBACK_RAW_RX:
		return -1;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

/* Closes what is past its deadline, every quarter second. */
static void sweep(lws_sorted_usec_list_t *sul)
{
	struct web *web = lws_container_of(sul, struct web, sweep);
	const void *expired[64];
	int n = admit_expired(&web->admit, now_ms(), expired, 64);
	for (int i = 0; i < n; i++) {
		refusal(web, (struct lws *)expired[i],
			"nothing came in time (a request's headers, "
			"or a WebSocket's hello)");
		bridge_close_soon(expired[i]);
	}
	refusals_flush(web, now_ms());
	lws_sul_schedule(web->context, 0, &web->sweep, sweep, 250 * LWS_US_PER_MS);
}

/* Until web_close: then on while a WebSocket is open (its socket's last
 * bytes, a goodbye, go to the browser before it closes) and the deadline
 * allows. The sweep wakes it four times a second. */
static void *serve(void *data)
{
	struct web *web = data;
	for (;;) {
		uint64_t stop_at = atomic_load(&web->stop_at_ms);
		if (stop_at && (web->bridges == 0 || now_ms() >= stop_at)) {
			break;
		}
		if (lws_service(web->context, 0) < 0) {
			break;
		}
	}
	return NULL;
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

int web_cert_names(const char *path, char **names, int max)
{
	gnutls_datum_t pem = {0};
	gnutls_x509_crt_t crt = NULL;
	int n = 0;
	if (gnutls_load_file(path, &pem) < 0 || gnutls_x509_crt_init(&crt) < 0 ||
		gnutls_x509_crt_import(crt, &pem, GNUTLS_X509_FMT_PEM) < 0) {
		goto out;
	}
	char name[256];
	for (unsigned seq = 0; n < max; seq++) {
		size_t size = sizeof(name) - 1;
		int type = gnutls_x509_crt_get_subject_alt_name(crt, seq, name, &size, NULL);
		if (type < 0) {
			break;
		}
		if (type == GNUTLS_SAN_DNSNAME) {
			name[size] = '\0';
			names[n++] = strdup(name);
		}
	}
	size_t size = sizeof(name);
	if (n == 0 && max > 0 &&
		gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, name,
			&size) == 0) {
		names[n++] = strdup(name);
	}
out:
	if (crt) {
		gnutls_x509_crt_deinit(crt);
	}
	gnutls_free(pem.data);
	return n;
}

struct web *web_listen(const struct web_config *config, char *err, size_t err_size)
{
	const char *spec = config->spec, *root = config->root, *cert = config->cert,
		   *key = config->key;
	char addr[256];
	int port;
	if (!address_listen(spec, addr, sizeof(addr), &port)) {
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
	if (!tls && !address_is_loopback(addr)) {
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
	for (int i = 0; i < 2; i++) {
		if (config->token_len[i] &&
			!admit_proof(config->token[i], config->token_len[i],
				web->proofs[web->nproofs++])) {
			snprintf(err, err_size, "cannot compute the token's proof");
			web_close(web);
			return NULL;
		}
	}
	if (tls) {
		web->nnames = web_cert_names(cert, web->names, MAX_NAMES);
	}
	admit_init(&web->admit, MAX_CONNECTIONS, MAX_PER_ADDRESS);
	snprintf(web->root, sizeof(web->root), "%s", root);
	web->mount.mountpoint = "/";
	web->mount.mountpoint_len = 1;
	web->mount.origin = web->root;
	web->mount.def = "index.html";
	web->mount.origin_protocol = LWSMPRO_FILE;
	web->protocols[0] = (struct lws_protocols){"http", callback_http, 0, 0};
	web->protocols[1] =
		(struct lws_protocols){"rcomp", callback_ws, sizeof(struct ws_session), CHUNK};
	web->protocols[2] = (struct lws_protocols){"rcomp-socket", callback_socket, 0, CHUNK};

	struct lws_context_creation_info info = {0};
	bridge_door_info(&info, addr, port, cert, key);
	info.protocols = web->protocols;
	info.mounts = &web->mount;
	info.user = web;
	info.fd_limit_per_thread = TABLE_SIZE;
	info.max_http_header_pool = MAX_CONNECTIONS;
	web->context = web->event >= 0 ? lws_create_context(&info) : NULL;
	web->vhost = web->context ? lws_get_vhost_by_name(web->context, "default") : NULL;
	if (!web->vhost) {
		snprintf(err, err_size, "libwebsockets cannot serve %s%s", spec,
			tls ? " (is the certificate or the key wrong?)" : "");
		errno = EINVAL;
		web_close(web);
		return NULL;
	}
	lws_sul_schedule(web->context, 0, &web->sweep, sweep, 250 * LWS_US_PER_MS);
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
	/* Sockets the program never took end now, so that their WebSockets
	 * close as the others do. */
	pthread_mutex_lock(&web->lock);
	for (int i = 0; i < web->nwaiting; i++) {
		close(web->waiting[i].fd);
	}
	web->nwaiting = 0;
	pthread_mutex_unlock(&web->lock);
	if (web->started) {
		atomic_store(&web->stop_at_ms, now_ms() + WEB_CLOSE_MS);
		lws_cancel_service(web->context);
		pthread_join(web->thread, NULL);
	}
	if (web->context) {
		lws_context_destroy(web->context);
	}
	if (web->event >= 0) {
		close(web->event);
	}
	for (int i = 0; i < web->nnames; i++) {
		free(web->names[i]);
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
