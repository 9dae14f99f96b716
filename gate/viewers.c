#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge.h"
#include "log.h"
#include "net-state.h"
#include "viewers.h"
#include "wire.h"

/* A viewer's WebSocket and the session socket the monitor hands over
 * (bridge.c); open: the OPEN's id, by which the monitor counts it among
 * its user's viewers and may end it (its login ended). */
struct gate_bridge {
	struct bridge b;
	uint32_t open;
	struct lws *wsi;
};

static void gate_bridge_free(struct bridge *b)
{
	free(b);
}

struct ws_pss {
	struct gate_bridge *bridge;
	uint32_t waiting;
	char cookie[GATE_COOKIE_HEX + 1];
	char session[SESSION_NAME_MAX + 1];
	uint32_t flags;
	char addr[GATE_ADDR_MAX + 1];
};

const size_t viewers_pss_size = sizeof(struct ws_pss);

static void viewers_answered(struct lws *wsi, const struct gate_answer *a, const char *text,
	size_t len, int fd)
{
	struct net *net = net_of(wsi);
	struct ws_pss *pss = lws_wsi_user(wsi);
	struct gate_bridge *gb = pss ? pss->bridge : NULL;
	struct bridge *b = gb ? &gb->b : NULL;
	if (!b) {
		if (fd >= 0) {
			close(fd);
		}
		return;
	}
	pss->waiting = 0;
	if (a->status != GATE_OK || fd < 0) {
		char why[256];
		log_escape(why, sizeof(why), text, len);
		if (a->status == GATE_LIMIT) {
			log_info("refused a viewer of %s from %s: %s", a->user, pss->addr, why);
		}
		bridge_goodbye(b,
			a->status == GATE_REFUSED	      ? WIRE_BYE_UNAUTHORIZED
				: a->status == GATE_LIMIT     ? WIRE_BYE_BUSY
				: a->status == GATE_NOT_FOUND ? WIRE_BYE_NO_SESSION
							      : WIRE_BYE_SHUTDOWN,
			a->status == GATE_REFUSED ? "not logged in at the gate (or the login "
						    "expired): log in again"
						  : why);
		if (fd >= 0) {
			close(fd);
		}
		return;
	}
	/* The monitor counts it among its user's viewers (viewers-per-user)
	 * from now until it is told this one ended. */
	gb->open = a->id;
	gb->wsi = wsi;
	for (int i = 0; i < MAX_BRIDGES; i++) {
		if (!net->opened[i]) {
			net->opened[i] = gb;
			break;
		}
	}
	if (!bridge_adopt(b, net->vhost, fd, "rcomp-socket")) {
		bridge_goodbye(b, WIRE_BYE_SHUTDOWN, "the gate cannot take the session's socket");
		return;
	}
	/* What the page said while it waited is written first; the socket's
	 * flush lets the page on. */
}

static bool ws_ok(struct net *net, struct lws *wsi, struct ws_pss *pss)
{
	char offer[128] = "";
	int n = lws_hdr_copy(wsi, offer, sizeof(offer), WSI_TOKEN_PROTOCOL);
	if (n <= 0 || strcmp(offer, "rcomp") != 0 || !net_origin_ok(net, wsi)) {
		return false;
	}
	net_cookie_of(wsi, pss->cookie);
	/* lws copies "name=value" and points past the name. */
	char arg[SESSION_NAME_MAX + 16], flag[16];
	const char *name = lws_get_urlarg_by_name(wsi, "session=", arg, sizeof(arg));
	if (!pss->cookie[0] || !name || !session_name_ok(name, strlen(name))) {
		return false;
	}
	snprintf(pss->session, sizeof(pss->session), "%s", name);
	const char *share = lws_get_urlarg_by_name(wsi, "share=", flag, sizeof(flag));
	if (share && strcmp(share, "1") == 0) {
		pss->flags |= GATE_OPEN_SHARE;
	}
	net_peer(wsi, pss->addr, sizeof(pss->addr));
	return net->bridges < MAX_BRIDGES;
}

int viewers_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	struct net *net = net_of(wsi);
	struct ws_pss *pss = user;
	struct gate_bridge *gb = pss ? pss->bridge : NULL;
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return ws_ok(net, wsi, pss) ? 0 : 1;
	case LWS_CALLBACK_ESTABLISHED: {
		gb = calloc(1, sizeof(*gb));
		if (!gb) {
			return -1;
		}
		gb->b.ws = wsi;
		gb->b.release = gate_bridge_free;
		pss->bridge = gb;
		net->bridges++;
		struct gate_request req = {.op = GATE_OPEN, .flags = pss->flags};
		memcpy(req.cookie, pss->cookie, sizeof(req.cookie));
		memcpy(req.arg, pss->session, sizeof(pss->session));
		snprintf(req.addr, sizeof(req.addr), "%s", pss->addr);
		/* What the page says before its socket comes waits in the
		 * bridge, which holds one chunk. */
		pss->waiting = net_ask(net, &req, wsi, viewers_answered);
		if (!pss->waiting) {
			bridge_goodbye(&gb->b, WIRE_BYE_BUSY, "the gate is busy: trying again");
		}
		/* It showed a login's cookie; the monitor bounds how long it
		 * takes to answer (a session that is starting may take
		 * seconds), and the session the hello. */
		admit_set(&net->admit, lws_get_network_wsi(wsi), ADMIT_TALKING, net_now_ms());
		return 0;
	}
	case LWS_CALLBACK_RECEIVE:
		return bridge_ws_receive(gb ? &gb->b : NULL, wsi, in, len);
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return bridge_ws_writeable(gb ? &gb->b : NULL, wsi);
	case LWS_CALLBACK_CLOSED:
		if (pss) {
			net_forget(net, pss->waiting);
			pss->waiting = 0;
		}
		if (gb) {
			net->bridges--;
			if (gb->open) {
				/* The monitor counts it no more. */
				struct gate_request req = {.op = GATE_CLOSED,
					.id = gb->open,
					.addr = "?"};
				gate_send_request(net->monitor, &req);
				for (int i = 0; i < MAX_BRIDGES; i++) {
					if (net->opened[i] == gb) {
						net->opened[i] = NULL;
					}
				}
				gb->open = 0;
			}
			gb->wsi = NULL;
			pss->bridge = NULL;
			bridge_ws_closed(&gb->b);
		}
		return 0;
	default:
		return 0;
	}
}

void viewers_end(struct net *net, uint32_t open, const char *text, size_t len)
{
	for (int i = 0; i < MAX_BRIDGES; i++) {
		struct gate_bridge *gb = net->opened[i];
		if (gb && gb->open == open) {
			char why[256];
			log_escape(why, sizeof(why), text, len);
			bridge_goodbye(&gb->b, WIRE_BYE_UNAUTHORIZED, why);
			if (gb->b.raw) {
				/* The session's side goes now: no key reaches it
				 * from here on. */
				bridge_close_soon(gb->b.raw);
			}
		}
	}
}

int viewers_socket_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	if (reason == LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION) {
		return 1; /* a WebSocket that names the bridges' own protocol */
	}
	return bridge_socket_callback(wsi, reason, user, in, len);
}
