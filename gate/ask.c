#include <arpa/inet.h>
#include <errno.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "listen.h"
#include "log.h"
#include "monotonic.h"
#include "net-state.h"
#include "web-admit.h"

/* The monitor ------------------------------------------------------------ */

static bool known(const struct net *net, const char *addr)
{
	for (int i = 0; i < KNOWN_ADDRESSES; i++) {
		if (net->known[i][0] && strcmp(net->known[i], addr) == 0) {
			return true;
		}
	}
	return false;
}

uint32_t net_ask(struct net *net, struct gate_request *req, struct lws *wsi,
	net_answered_fn answered)
{
	struct waiter *w = NULL;
	for (int i = 0; i < MAX_WAITERS && !w; i++) {
		if (!net->waiters[i].id) {
			w = &net->waiters[i];
		}
	}
	if (!w || net->gone) {
		explicit_bzero(req->secret, sizeof(req->secret));
		return 0;
	}
	bool stranger = !req->cookie[0] && !known(net, req->addr);
	int mine = 0, strangers = 0;
	for (int i = 0; i < MAX_WAITERS; i++) {
		const struct waiter *o = &net->waiters[i];
		mine += o->id &&
			(req->cookie[0] ? strcmp(o->cookie, req->cookie) == 0
					: !o->cookie[0] && strcmp(o->addr, req->addr) == 0);
		strangers += o->id && o->stranger;
	}
	if (mine >= (req->cookie[0] ? ASKS_PER_LOGIN : ASKS_PER_ADDRESS) ||
		(stranger && strangers >= STRANGERS_IN_FLIGHT)) {
		explicit_bzero(req->secret, sizeof(req->secret));
		return 0;
	}
	if (++net->next_id == 0) {
		net->next_id = 1;
	}
	req->id = net->next_id;
	bool sent = gate_send_request(net->monitor, req);
	explicit_bzero(req->secret, sizeof(req->secret));
	if (!sent) {
		return 0;
	}
	w->id = req->id;
	w->op = req->op;
	w->stranger = stranger;
	w->wsi = wsi;
	w->answered = answered;
	snprintf(w->cookie, sizeof(w->cookie), "%s", req->cookie);
	snprintf(w->addr, sizeof(w->addr), "%s", req->addr);
	return req->id;
}

void net_forget(struct net *net, uint32_t id)
{
	for (int i = 0; id && i < MAX_WAITERS; i++) {
		if (net->waiters[i].id == id) {
			net->waiters[i].wsi = NULL;
			net->waiters[i].answered = NULL;
			net->waiters[i].left_ms = net_now_ms();
		}
	}
}

void net_forget_orphans(struct net *net, uint64_t now_ms)
{
	for (int i = 0; i < MAX_WAITERS; i++) {
		struct waiter *w = &net->waiters[i];
		if (w->id && !w->wsi && now_ms - w->left_ms >= ASK_ORPHAN_MS) {
			*w = (struct waiter){0};
		}
	}
}

static uint8_t answer_buf[sizeof(struct gate_answer) + GATE_TEXT_MAX];

/* The monitor's answers, each to the connection that asked. */
static void monitor_readable(struct net *net)
{
	for (;;) {
		int fd;
		ssize_t n = gate_receive(net->monitor, answer_buf, sizeof(answer_buf), &fd);
		if (n < 0 && errno == EAGAIN) {
			return;
		}
		if (n < (ssize_t)sizeof(struct gate_answer)) {
			if (fd >= 0) {
				close(fd);
			}
			log_error("the monitor is gone: the gate ends");
			net->gone = true;
			lws_cancel_service(net->context);
			return;
		}
		struct gate_answer a;
		memcpy(&a, answer_buf, sizeof(a));
		size_t len = (size_t)n - sizeof(a);
		const char *text = (const char *)answer_buf + sizeof(a);
		struct lws *wsi = NULL;
		net_answered_fn answered = NULL;
		for (int i = 0; i < MAX_WAITERS; i++) {
			if (a.id && net->waiters[i].id == a.id) {
				wsi = net->waiters[i].wsi;
				answered = net->waiters[i].answered;
				if (net->waiters[i].op == GATE_LOGIN && a.status == GATE_OK &&
					!known(net, net->waiters[i].addr)) {
					snprintf(net->known[net->known_next], sizeof(net->known[0]),
						"%s", net->waiters[i].addr);
					net->known_next = (net->known_next + 1) % KNOWN_ADDRESSES;
				}
				net->waiters[i] = (struct waiter){0};
			}
		}
		if (!wsi) {
			if (fd >= 0) {
				/* It asked, and went: a viewer the monitor let
				 * through is counted there no more. */
				close(fd);
				struct gate_request closed = {.op = GATE_CLOSED,
					.id = a.id,
					.addr = "?"};
				gate_send_request(net->monitor, &closed);
			}
			if (a.status == GATE_ENDED && net->viewer_ended) {
				net->viewer_ended(net, a.id, text, len);
			}
			continue;
		}
		answered(wsi, &a, text, len, fd);
	}
}

int net_monitor_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	struct net *net = net_of(wsi);
	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
		monitor_readable(net);
		return net->gone ? -1 : 0;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		net->gone = true;
		return 0;
	default:
		return 0;
	}
}

/* Requests --------------------------------------------------------------- */

/* The request's Host is ours: an address literal, localhost, or a name of
 * the certificate's (web-admit.c's rule, as the browsers' door). */
bool net_host_ok(struct lws *wsi, char *host, size_t size)
{
	struct net *net = net_of(wsi);
	int n = lws_hdr_copy(wsi, host, (int)size, WSI_TOKEN_HOST);
	return n > 0 &&
		admit_host_ok(host, (size_t)n, (const char *const *)net->names, net->nnames);
}

bool net_origin_ok(struct net *net, struct lws *wsi)
{
	char origin[256], host[256];
	if (!net_host_ok(wsi, host, sizeof(host)) ||
		lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN) <= 0) {
		return false;
	}
	const char *scheme = net->tls ? "https://" : "http://";
	size_t n = strlen(scheme);
	return strncmp(origin, scheme, n) == 0 && strcmp(origin + n, host) == 0;
}

void net_peer(struct lws *wsi, char *out, size_t size)
{
	snprintf(out, size, "?");
	struct sockaddr_storage addr;
	socklen_t len;
	if (!listen_peer(wsi, &addr, &len)) {
		return;
	}
	const void *where = addr.ss_family == AF_INET
		? (const void *)&((struct sockaddr_in *)&addr)->sin_addr
		: (const void *)&((struct sockaddr_in6 *)&addr)->sin6_addr;
	if (!inet_ntop(addr.ss_family, where, out, (socklen_t)size)) {
		snprintf(out, size, "?");
	}
}

void net_cookie_of(struct lws *wsi, char *out)
{
	size_t max = GATE_COOKIE_HEX + 1;
	if (lws_http_cookie_get(wsi, "rcomp-gate", out, &max) != 0 || max != GATE_COOKIE_HEX) {
		out[0] = '\0';
	}
}
