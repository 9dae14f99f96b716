#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <grp.h>
#include <libwebsockets.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "address.h"
#include "bridge.h"
#include "ipc.h"
#include "log.h"
#include "monotonic.h"
#include "net.h"
#include "tcp.h"
#include "web-admit.h"
#include "web.h"
#include "wire.h"

/* Requests to the monitor in flight at once. */
#define MAX_WAITERS 1024
/* WebSockets (viewers) at once. */
#define MAX_BRIDGES 512

enum route {
	ROUTE_NONE,
	ROUTE_ME, /* GET /api/me */
	ROUTE_LOGIN, /* POST /api/login */
	ROUTE_LOGOUT, /* POST /api/logout */
	ROUTE_SESSIONS, /* GET /api/sessions */
	ROUTE_APPS, /* GET /api/apps */
	ROUTE_ICON, /* GET /api/icon?app=ID */
	ROUTE_START, /* POST /api/start */
	ROUTE_STOP, /* POST /api/stop */
};

struct waiter {
	uint32_t id; /* 0: free */
	struct lws *wsi;
};

/* Viewers open, by user (viewers-per-user). */
struct viewers {
	char user[GATE_USER_MAX + 1]; /* empty: free */
	int n;
};

struct net {
	const struct gate_config *config;
	struct lws_context *context;
	struct lws_vhost *vhost;
	struct lws_http_mount mounts[2];
	struct lws_protocols protocols[6];
	int monitor;
	bool tls;
	uint32_t next_id;
	struct waiter waiters[MAX_WAITERS];
	struct admit admit;
	lws_sorted_usec_list_t sweep;
	int bridges;
	struct viewers viewers[MAX_BRIDGES];
	char *names[16]; /* the certificate's: Host headers that name us */
	int nnames;
	bool gone; /* the monitor went */
};

/* A viewer's WebSocket and the session socket the monitor hands over
 * (bridge.c). */
struct gate_bridge {
	struct bridge b;
	struct viewers *user; /* counted among its user's viewers */
};

static void gate_bridge_free(struct bridge *b)
{
	free(b);
}

struct http_pss {
	enum route route;
	struct lws_spa *spa;
	int body; /* bytes of the form so far */
	uint32_t waiting; /* the monitor's answer to this id */
	bool answered;
	struct gate_answer answer;
	uint8_t *text; /* LWS_PRE bytes of room, then the answer's text */
	char addr[GATE_ADDR_MAX + 1];
};

struct ws_pss {
	struct gate_bridge *bridge;
	uint32_t waiting;
	char cookie[GATE_COOKIE_HEX + 1];
	char session[WIRE_MAX_SESSION_NAME + 1];
	uint32_t flags;
	char addr[GATE_ADDR_MAX + 1];
};

/* The cluster's other hosts: up while their gate takes a connection (a
 * thread tries each every PEER_EVERY_MS). */
#define PEER_EVERY_MS 1000
#define PEER_WAIT_MS 500
struct peer {
	struct sockaddr_storage addr;
	socklen_t len;
	bool me;
	atomic_bool up;
	bool tried; /* the watcher's own */
};
static struct peer peers[GATE_HOSTS_MAX];
static atomic_bool peers_stop;

static bool peer_answers(const struct peer *p)
{
	int fd = socket(p->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return false;
	}
	bool up = false;
	if (connect(fd, (const struct sockaddr *)&p->addr, p->len) == 0) {
		up = true;
	} else if (errno == EINPROGRESS) {
		struct pollfd pfd = {.fd = fd, .events = POLLOUT};
		int err = 0;
		socklen_t len = sizeof(err);
		up = poll(&pfd, 1, PEER_WAIT_MS) == 1 &&
			getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
	}
	close(fd);
	return up;
}

static void *watch_peers(void *data)
{
	const struct gate_config *config = data;
	while (!atomic_load(&peers_stop)) {
		for (int i = 0; i < config->nhosts; i++) {
			if (peers[i].me) {
				continue;
			}
			bool up = peer_answers(&peers[i]);
			if (atomic_exchange(&peers[i].up, up) != up || !peers[i].tried) {
				log_info("host %s (%s) is %s", config->hosts[i].name,
					config->hosts[i].addr,
					up ? "up"
					   : "down: its users' logins go to the next host of "
					     "theirs");
			}
			peers[i].tried = true;
		}
		usleep(PEER_EVERY_MS * 1000);
	}
	return NULL;
}

/* The hosts' addresses; false (logged) if one is not an address. */
static bool peers_init(const struct gate_config *config)
{
	for (int i = 0; i < config->nhosts; i++) {
		struct peer *p = &peers[i];
		char host[128];
		const char *port;
		address_split(config->hosts[i].addr, host, sizeof(host), &port);
		struct sockaddr_in *a4 = (struct sockaddr_in *)&p->addr;
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&p->addr;
		if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
			a4->sin_family = AF_INET;
			a4->sin_port = htons((uint16_t)atoi(port));
			p->len = sizeof(*a4);
		} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
			a6->sin6_family = AF_INET6;
			a6->sin6_port = htons((uint16_t)atoi(port));
			p->len = sizeof(*a6);
		} else {
			log_error("[cluster] hosts: %s is not an address (ADDR:PORT)",
				config->hosts[i].addr);
			return false;
		}
		p->me = strcmp(config->hosts[i].name, config->me) == 0;
		atomic_store(&p->up, p->me);
	}
	return true;
}

/* The host of user's sessions: the first in the user's order that is up
 * (this one always is); NULL without a cluster. */
static const char *owner_of(const struct gate_config *config, const char *user)
{
	if (!config->nhosts) {
		return NULL;
	}
	int order[GATE_HOSTS_MAX];
	gate_config_order(config, user, order);
	for (int i = 0; i < config->nhosts; i++) {
		if (atomic_load(&peers[order[i]].up)) {
			return config->hosts[order[i]].name;
		}
	}
	return config->me;
}

static const char *const form_names[] = {"user", "password", "csrf", "app", "name"};
enum { FORM_USER, FORM_PASSWORD, FORM_CSRF, FORM_APP, FORM_NAME, FORM_COUNT };

static uint64_t now_ms(void)
{
	return monotonic_usec() / 1000;
}

static struct net *net_of(struct lws *wsi)
{
	return lws_context_user(lws_get_context(wsi));
}

/* The monitor ------------------------------------------------------------ */

static uint32_t ask(struct net *net, struct gate_request *req, struct lws *wsi)
{
	struct waiter *w = NULL;
	for (int i = 0; i < MAX_WAITERS && !w; i++) {
		if (!net->waiters[i].id) {
			w = &net->waiters[i];
		}
	}
	if (!w || net->gone) {
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
	w->wsi = wsi;
	return req->id;
}

static void forget(struct net *net, uint32_t id)
{
	for (int i = 0; id && i < MAX_WAITERS; i++) {
		if (net->waiters[i].id == id) {
			net->waiters[i] = (struct waiter){0};
		}
	}
}

static void ws_answered(struct net *net, struct lws *wsi, const struct gate_answer *a,
	const char *text, size_t len, int fd)
{
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
		bridge_goodbye(b,
			a->status == GATE_REFUSED ? WIRE_BYE_UNAUTHORIZED : WIRE_BYE_SHUTDOWN,
			a->status == GATE_REFUSED ? "not logged in at the gate (or the login "
						    "expired): log in again"
						  : why);
		if (fd >= 0) {
			close(fd);
		}
		return;
	}
	struct viewers *free_slot = NULL, *mine = NULL;
	for (int i = 0; i < MAX_BRIDGES && !mine; i++) {
		struct viewers *v = &net->viewers[i];
		if (v->user[0] && strcmp(v->user, a->user) == 0) {
			mine = v;
		} else if (!v->user[0] && !free_slot) {
			free_slot = v;
		}
	}
	int most = net->config->viewers_per_user;
	if ((mine && mine->n >= most) || (!mine && !free_slot)) {
		char why[160];
		snprintf(why, sizeof(why),
			"you have %d viewers open at this gate, as many as one may have: close one",
			most);
		log_info("refused a viewer of %s from %s: %s", a->user, pss->addr, why);
		close(fd);
		bridge_goodbye(b, WIRE_BYE_BUSY, why);
		return;
	}
	if (!mine) {
		mine = free_slot;
		snprintf(mine->user, sizeof(mine->user), "%s", a->user);
	}
	mine->n++;
	gb->user = mine;
	if (!bridge_adopt(b, net->vhost, fd, "rcomp-socket")) {
		bridge_goodbye(b, WIRE_BYE_SHUTDOWN, "the gate cannot take the session's socket");
		return;
	}
	/* What the page said while it waited is written first; the socket's
	 * flush lets the page on. */
}

static void http_answered(struct lws *wsi, const struct gate_answer *a, const char *text,
	size_t len)
{
	struct http_pss *pss = lws_wsi_user(wsi);
	if (!pss || !pss->waiting) {
		return;
	}
	pss->waiting = 0;
	pss->answered = true;
	pss->answer = *a;
	pss->answer.len = (uint32_t)len;
	free(pss->text);
	pss->text = malloc(LWS_PRE + len + 1);
	if (pss->text) {
		memcpy(pss->text + LWS_PRE, text, len);
	} else {
		pss->answer.len = 0;
	}
	lws_callback_on_writable(wsi);
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
		for (int i = 0; i < MAX_WAITERS && !wsi; i++) {
			if (net->waiters[i].id == a.id) {
				wsi = net->waiters[i].wsi;
				net->waiters[i] = (struct waiter){0};
			}
		}
		if (!wsi) {
			if (fd >= 0) {
				close(fd); /* it asked, and went */
			}
			continue;
		}
		if (lws_get_protocol(wsi) && strcmp(lws_get_protocol(wsi)->name, "rcomp") == 0) {
			ws_answered(net, wsi, &a, text, len, fd);
		} else {
			if (fd >= 0) {
				close(fd);
			}
			http_answered(wsi, &a, text, len);
		}
	}
}

static int callback_monitor(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
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
static bool host_ok(struct lws *wsi, char *host, size_t size)
{
	struct net *net = net_of(wsi);
	int n = lws_hdr_copy(wsi, host, (int)size, WSI_TOKEN_HOST);
	return n > 0 &&
		admit_host_ok(host, (size_t)n, (const char *const *)net->names, net->nnames);
}

static bool origin_ok(struct net *net, struct lws *wsi)
{
	char origin[256], host[256];
	if (!host_ok(wsi, host, sizeof(host)) ||
		lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN) <= 0) {
		return false;
	}
	const char *scheme = net->tls ? "https://" : "http://";
	size_t n = strlen(scheme);
	return strncmp(origin, scheme, n) == 0 && strcmp(origin + n, host) == 0;
}

static void peer(struct lws *wsi, char *out, size_t size)
{
	snprintf(out, size, "?");
	lws_get_peer_simple(wsi, out, size);
}

static void cookie_of(struct lws *wsi, char *out)
{
	size_t max = GATE_COOKIE_HEX + 1;
	if (lws_http_cookie_get(wsi, "rcomp-gate", out, &max) != 0 || max != GATE_COOKIE_HEX) {
		out[0] = '\0';
	}
}

static enum route route_of(const char *path, int method)
{
	static const struct {
		const char *path;
		int method;
		enum route route;
	} routes[] = {
		{"/me", LWSHUMETH_GET, ROUTE_ME},
		{"/login", LWSHUMETH_POST, ROUTE_LOGIN},
		{"/logout", LWSHUMETH_POST, ROUTE_LOGOUT},
		{"/sessions", LWSHUMETH_GET, ROUTE_SESSIONS},
		{"/apps", LWSHUMETH_GET, ROUTE_APPS},
		{"/icon", LWSHUMETH_GET, ROUTE_ICON},
		{"/start", LWSHUMETH_POST, ROUTE_START},
		{"/stop", LWSHUMETH_POST, ROUTE_STOP},
	};
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (strcmp(path, routes[i].path) == 0 && method == routes[i].method) {
			return routes[i].route;
		}
	}
	return ROUTE_NONE;
}

static const char *form(struct http_pss *pss, int i)
{
	const char *v = pss->spa ? lws_spa_get_string(pss->spa, i) : NULL;
	return v ? v : "";
}

/* A whole answer, written at once: its status code, type and body, a
 * cookie to set and a place to go (each NULL: none). */
static int respond_to(struct lws *wsi, unsigned code, const char *type, const uint8_t *body,
	size_t len, const char *cookie, const char *location)
{
	uint8_t head[LWS_PRE + 1024], *start = head + LWS_PRE, *p = start,
				      *end = head + sizeof(head);
	if (lws_add_http_common_headers(wsi, code, type, len, &p, end) ||
		lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
			(const unsigned char *)"no-store", 8, &p, end) ||
		lws_add_http_header_by_name(wsi, (const unsigned char *)"x-content-type-options:",
			(const unsigned char *)"nosniff", 7, &p, end) ||
		(cookie &&
			lws_add_http_header_by_name(wsi, (const unsigned char *)"set-cookie:",
				(const unsigned char *)cookie, (int)strlen(cookie), &p, end)) ||
		(location &&
			lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_LOCATION,
				(const unsigned char *)location, (int)strlen(location), &p, end)) ||
		lws_finalize_write_http_header(wsi, start, &p, end)) {
		return -1;
	}
	if (len && lws_write(wsi, (uint8_t *)body, len, LWS_WRITE_HTTP_FINAL) < 0) {
		return -1;
	}
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int respond(struct lws *wsi, unsigned code, const char *type, const uint8_t *body,
	size_t len, const char *cookie)
{
	return respond_to(wsi, code, type, body, len, cookie, NULL);
}

/* The same, of text anywhere (copied behind the room lws_write asks). */
static int respond_text(struct lws *wsi, unsigned code, const char *text, size_t len,
	const char *cookie)
{
	uint8_t *body = malloc(LWS_PRE + len);
	if (!body) {
		return -1;
	}
	memcpy(body + LWS_PRE, text, len);
	int r = respond(wsi, code, "application/json", body + LWS_PRE, len, cookie);
	free(body);
	return r;
}

static int respond_error(struct lws *wsi, unsigned code, const char *text)
{
	/* The messages are ours or the monitor's, escaped by log_escape: a
	 * quote or a backslash is all JSON would choke on. */
	char plain[400], json[512];
	snprintf(plain, sizeof(plain), "%s", text);
	for (char *c = plain; *c; c++) {
		if (*c == '"' || *c == '\\') {
			*c = '\'';
		}
	}
	size_t len = (size_t)snprintf(json, sizeof(json), "{\"error\":\"%s\"}", plain);
	return respond_text(wsi, code, json, len, NULL);
}

/* A login for another host's user: the balancer's cookie for that host,
 * and the same request again, which the balancer now takes there. */
static int respond_elsewhere(struct net *net, struct lws *wsi, const char *host)
{
	char cookie[256];
	snprintf(cookie, sizeof(cookie), "%s=%s; Path=/; HttpOnly; SameSite=Strict%s",
		net->config->cookie, host, net->tls ? "; Secure" : "");
	/* 307: the same POST again, there. */
	return respond_to(wsi, 307, "application/json", NULL, 0, cookie, "/api/login");
}

static unsigned http_code(enum gate_status status)
{
	switch (status) {
	case GATE_OK:
		return HTTP_STATUS_OK;
	case GATE_REFUSED:
		return HTTP_STATUS_UNAUTHORIZED;
	case GATE_SLOW:
		return 429;
	case GATE_BUSY:
		return HTTP_STATUS_SERVICE_UNAVAILABLE;
	case GATE_NOT_FOUND:
		return HTTP_STATUS_NOT_FOUND;
	case GATE_LIMIT:
		return HTTP_STATUS_FORBIDDEN;
	default:
		return HTTP_STATUS_INTERNAL_SERVER_ERROR;
	}
}

/* The monitor's answer, as the page reads it. */
static int write_answer(struct net *net, struct lws *wsi, struct http_pss *pss)
{
	const struct gate_answer *a = &pss->answer;
	char text[GATE_TEXT_MAX + 1];
	size_t len = pss->text ? a->len : 0;
	if (a->status != GATE_OK) {
		char why[512];
		log_escape(why, sizeof(why), pss->text ? (char *)pss->text + LWS_PRE : "", len);
		return respond_error(wsi, http_code((enum gate_status)a->status), why);
	}
	char cookie[256];
	const char *set = NULL;
	const char *secure = net->tls ? "; Secure" : "";
	switch (pss->route) {
	case ROUTE_LOGIN:
		snprintf(cookie, sizeof(cookie),
			"rcomp-gate=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%u%s", a->cookie,
			a->max_age, secure);
		set = cookie;
		/* fall through */
	case ROUTE_ME:
		len = (size_t)snprintf(text, sizeof(text), "{\"user\":\"%s\",\"csrf\":\"%s\"}",
			a->user, a->csrf);
		break;
	case ROUTE_LOGOUT:
		snprintf(cookie, sizeof(cookie),
			"rcomp-gate=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0%s", secure);
		set = cookie;
		len = (size_t)snprintf(text, sizeof(text), "{}");
		break;
	case ROUTE_START: {
		char name[WIRE_MAX_SESSION_NAME + 1];
		snprintf(name, sizeof(name), "%.*s", (int)len, (char *)pss->text + LWS_PRE);
		if (!wire_session_name_ok(name, strlen(name))) {
			return respond_error(wsi, HTTP_STATUS_INTERNAL_SERVER_ERROR,
				"the session did not start");
		}
		len = (size_t)snprintf(text, sizeof(text), "{\"name\":\"%s\"}", name);
		break;
	}
	case ROUTE_STOP:
		len = (size_t)snprintf(text, sizeof(text), "{}");
		break;
	case ROUTE_ICON:
		return respond(wsi, HTTP_STATUS_OK, "image/png", pss->text + LWS_PRE, len, NULL);
	default: /* sessions, apps: the monitor's JSON as it is */
		return respond(wsi, HTTP_STATUS_OK, "application/json", pss->text + LWS_PRE, len,
			NULL);
	}
	return respond_text(wsi, HTTP_STATUS_OK, text, len, set);
}

static void http_reset(struct net *net, struct http_pss *pss)
{
	if (pss->spa) {
		lws_spa_destroy(pss->spa);
	}
	forget(net, pss->waiting);
	free(pss->text);
	*pss = (struct http_pss){0};
}

/* The request whole: to the monitor. False: answered already (an error). */
static int http_ask(struct net *net, struct lws *wsi, struct http_pss *pss)
{
	struct gate_request req = {0};
	static const uint32_t ops[] = {
		[ROUTE_ME] = GATE_WHO,
		[ROUTE_LOGIN] = GATE_LOGIN,
		[ROUTE_LOGOUT] = GATE_LOGOUT,
		[ROUTE_SESSIONS] = GATE_LIST,
		[ROUTE_APPS] = GATE_APPS,
		[ROUTE_ICON] = GATE_ICON,
		[ROUTE_START] = GATE_START,
		[ROUTE_STOP] = GATE_STOP,
	};
	req.op = ops[pss->route];
	snprintf(req.addr, sizeof(req.addr), "%s", pss->addr);
	cookie_of(wsi, req.cookie);
	if (pss->route == ROUTE_LOGIN) {
		if (!origin_ok(net, wsi)) {
			return respond_error(wsi, HTTP_STATUS_FORBIDDEN,
				"a login must come from the gate's own page");
		}
		if (!gate_copy(req.user, sizeof(req.user), form(pss, FORM_USER)) ||
			!gate_copy(req.secret, sizeof(req.secret), form(pss, FORM_PASSWORD)) ||
			!req.user[0]) {
			explicit_bzero(req.secret, sizeof(req.secret));
			return respond_error(wsi, HTTP_STATUS_BAD_REQUEST,
				"give a user name and a password");
		}
		const char *owner = owner_of(net->config, req.user);
		if (owner && strcmp(owner, net->config->me) != 0) {
			explicit_bzero(req.secret, sizeof(req.secret));
			lws_spa_destroy(pss->spa);
			pss->spa = NULL;
			char user[GATE_USER_MAX * 4 + 1];
			log_escape(user, sizeof(user), req.user, strlen(req.user));
			log_info("login of %s from %s sent on to %s, the host of its sessions",
				user, pss->addr, owner);
			return respond_elsewhere(net, wsi, owner);
		}
	} else if (!req.cookie[0]) {
		return respond_error(wsi, HTTP_STATUS_UNAUTHORIZED, "Not logged in.");
	}
	gate_copy(req.csrf, sizeof(req.csrf), form(pss, FORM_CSRF));
	if (pss->route == ROUTE_START) {
		gate_copy(req.arg, sizeof(req.arg), form(pss, FORM_APP));
	} else if (pss->route == ROUTE_STOP) {
		gate_copy(req.arg, sizeof(req.arg), form(pss, FORM_NAME));
	} else if (pss->route == ROUTE_ICON) {
		char arg[GATE_ARG_MAX + 8];
		const char *app = lws_get_urlarg_by_name(wsi, "app=", arg, sizeof(arg));
		if (app) {
			gate_copy(req.arg, sizeof(req.arg), app);
		}
	}
	/* The password goes to the monitor and nowhere else. */
	if (pss->spa) {
		lws_spa_destroy(pss->spa);
		pss->spa = NULL;
	}
	pss->waiting = ask(net, &req, wsi);
	if (!pss->waiting) {
		return respond_error(wsi, HTTP_STATUS_SERVICE_UNAVAILABLE,
			"The gate is busy: try again in a moment.");
	}
	return 0;
}

static int callback_api(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	struct net *net = net_of(wsi);
	struct http_pss *pss = user;
	switch (reason) {
	case LWS_CALLBACK_HTTP: {
		http_reset(net, pss);
		char *uri;
		int uri_len;
		int method = lws_http_get_uri_and_method(wsi, &uri, &uri_len);
		/* The path past /api (lws gives it so for a POST, whole for a
		 * GET). */
		const char *path = in ? in : "";
		if (strncmp(path, "/api/", 5) == 0) {
			path += 4;
		}
		pss->route = route_of(path, method);
		peer(wsi, pss->addr, sizeof(pss->addr));
		char host[256];
		if (!host_ok(wsi, host, sizeof(host))) {
			return respond_error(wsi, HTTP_STATUS_BAD_REQUEST,
				"the Host names no address or name of this server");
		}
		if (pss->route == ROUTE_NONE) {
			return respond_error(wsi, HTTP_STATUS_NOT_FOUND, "no such request");
		}
		admit_set(&net->admit, lws_get_network_wsi(wsi), ADMIT_HTTP, now_ms());
		if (method == LWSHUMETH_POST) {
			pss->spa = lws_spa_create(wsi, form_names, FORM_COUNT, GATE_BODY_MAX, NULL,
				NULL);
			return pss->spa ? 0 : -1;
		}
		return http_ask(net, wsi, pss) < 0 ? -1 : 0;
	}
	case LWS_CALLBACK_HTTP_BODY:
		pss->body += (int)len;
		if (!pss->spa || pss->body > GATE_BODY_MAX ||
			lws_spa_process(pss->spa, in, (int)len)) {
			return -1;
		}
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if (!pss->spa) {
			return -1;
		}
		lws_spa_finalize(pss->spa);
		return http_ask(net, wsi, pss) < 0 ? -1 : 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		if (!pss->answered) {
			return 0;
		}
		pss->answered = false;
		return write_answer(net, wsi, pss);
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
	case LWS_CALLBACK_CLOSED_HTTP:
		http_reset(net, pss);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

/* Viewers ---------------------------------------------------------------- */

static bool ws_ok(struct net *net, struct lws *wsi, struct ws_pss *pss)
{
	char offer[128] = "";
	int n = lws_hdr_copy(wsi, offer, sizeof(offer), WSI_TOKEN_PROTOCOL);
	if (n <= 0 || strcmp(offer, "rcomp") != 0 || !origin_ok(net, wsi)) {
		return false;
	}
	cookie_of(wsi, pss->cookie);
	/* lws copies "name=value" and points past the name. */
	char arg[WIRE_MAX_SESSION_NAME + 16], flag[16];
	const char *name = lws_get_urlarg_by_name(wsi, "session=", arg, sizeof(arg));
	if (!pss->cookie[0] || !name || !wire_session_name_ok(name, strlen(name))) {
		return false;
	}
	snprintf(pss->session, sizeof(pss->session), "%s", name);
	const char *share = lws_get_urlarg_by_name(wsi, "share=", flag, sizeof(flag));
	if (share && strcmp(share, "1") == 0) {
		pss->flags |= GATE_OPEN_SHARE;
	}
	peer(wsi, pss->addr, sizeof(pss->addr));
	return net->bridges < MAX_BRIDGES;
}

static int callback_ws(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
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
		pss->waiting = ask(net, &req, wsi);
		if (!pss->waiting) {
			bridge_goodbye(&gb->b, WIRE_BYE_BUSY, "the gate is busy: trying again");
		}
		/* It showed a login's cookie; the monitor bounds how long it
		 * takes to answer (a session that is starting may take
		 * seconds), and the session the hello. */
		admit_set(&net->admit, lws_get_network_wsi(wsi), ADMIT_TALKING, now_ms());
		return 0;
	}
	case LWS_CALLBACK_RECEIVE:
		return bridge_ws_receive(gb ? &gb->b : NULL, wsi, in, len);
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return bridge_ws_writeable(gb ? &gb->b : NULL, wsi);
	case LWS_CALLBACK_CLOSED:
		if (pss) {
			forget(net, pss->waiting);
			pss->waiting = 0;
		}
		if (gb) {
			net->bridges--;
			if (gb->user && --gb->user->n == 0) {
				gb->user->user[0] = '\0';
			}
			gb->user = NULL;
			pss->bridge = NULL;
			bridge_ws_closed(&gb->b);
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
		return 1; /* a WebSocket that names the bridges' own protocol */
	}
	return bridge_socket_callback(wsi, reason, user, in, len);
}

/* Connections ------------------------------------------------------------ */

/* Counted under its address, and room made for it by closing the oldest
 * connection that proved nothing (the browsers' door's rules). */
static bool arrive(struct net *net, struct lws *wsi)
{
	const void *evict;
	enum admit_verdict v = bridge_arrive(&net->admit, wsi, -1, now_ms(), &evict);
	if (v == ADMIT_IN_MADE_ROOM) {
		bridge_close_soon(evict);
	}
	return v == ADMIT_IN || v == ADMIT_IN_MADE_ROOM;
}

static int callback_http(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	struct net *net = net_of(wsi);
	switch (reason) {
	case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
		return arrive(net, wsi) ? 0 : -1;
	case LWS_CALLBACK_WSI_DESTROY:
		admit_remove(&net->admit, wsi);
		return 0;
	case LWS_CALLBACK_FILTER_HTTP_CONNECTION: {
		char host[256];
		if (!host_ok(wsi, host, sizeof(host))) {
			/* A name that resolves to us is what DNS rebinding forges. */
			lws_return_http_status(wsi, HTTP_STATUS_BAD_REQUEST,
				"the Host names no address or name of this server");
			return 1;
		}
		admit_set(&net->admit, lws_get_network_wsi(wsi), ADMIT_HTTP, now_ms());
		return 0;
	}
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return 1;
	case LWS_CALLBACK_RAW_ADOPT:
		return -1;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static void sweep(lws_sorted_usec_list_t *sul)
{
	struct net *net = lws_container_of(sul, struct net, sweep);
	const void *expired[64];
	int n = admit_expired(&net->admit, now_ms(), expired, 64);
	for (int i = 0; i < n; i++) {
		bridge_close_soon(expired[i]);
	}
	lws_sul_schedule(net->context, 0, &net->sweep, sweep, 250 * LWS_US_PER_MS);
}

/* For good: the system user, in the page's directory as its root. */
static bool drop(const struct gate_config *config)
{
	struct passwd *pw = getpwnam(config->user);
	if (!pw) {
		log_error("no system user %s to run the network process as (user = in %s)",
			config->user, config->path);
		return false;
	}
	if (chroot(config->page) != 0 || chdir("/") != 0) {
		log_error("cannot make %s the network process's root: %s", config->page,
			strerror(errno));
		return false;
	}
	if (setgroups(0, NULL) != 0 || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) != 0 ||
		setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) != 0 || setuid(0) == 0) {
		log_error("cannot become %s: %s", config->user, strerror(errno));
		return false;
	}
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	return true;
}

int net_run(const struct gate_config *config, int fd)
{
	static struct net net;
	net.config = config;
	net.monitor = fd;
	net.tls = config->cert[0] != '\0';
	char host[256];
	const char *port;
	if (!address_split(config->listen, host, sizeof(host), &port)) {
		log_error("listen = %s is not ADDR:PORT", config->listen);
		return 1;
	}
	admit_init(&net.admit, config->connections, config->connections_per_address);
	net.mounts[0] = (struct lws_http_mount){
		.mountpoint = "/api",
		.mountpoint_len = 4,
		.origin = "gate-api",
		.origin_protocol = LWSMPRO_CALLBACK,
		.mount_next = &net.mounts[1],
	};
	net.mounts[1] = (struct lws_http_mount){
		.mountpoint = "/",
		.mountpoint_len = 1,
		.origin = "/", /* the page's directory, once it is the root */
		.def = "gate.html",
		.origin_protocol = LWSMPRO_FILE,
	};
	net.protocols[0] = (struct lws_protocols){"http", callback_http, 0, 0};
	net.protocols[1] =
		(struct lws_protocols){"gate-api", callback_api, sizeof(struct http_pss), 0};
	net.protocols[2] =
		(struct lws_protocols){"rcomp", callback_ws, sizeof(struct ws_pss), BRIDGE_CHUNK};
	net.protocols[3] = (struct lws_protocols){"rcomp-socket", callback_socket, 0, BRIDGE_CHUNK};
	net.protocols[4] = (struct lws_protocols){"gate-monitor", callback_monitor, 0, 0};
	lws_set_log_level(LLL_ERR | LLL_WARN, bridge_lws_log);
	struct lws_context_creation_info info = {0};
	info.port = atoi(port);
	info.iface = strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
	info.protocols = net.protocols;
	info.mounts = &net.mounts[0];
	info.user = &net;
	info.gid = (gid_t)-1;
	info.uid = (uid_t)-1;
	info.fd_limit_per_thread = (unsigned)(config->connections + MAX_BRIDGES + 64);
	info.max_http_header_pool = (unsigned short)config->connections;
	info.timeout_secs = 10;
	info.alpn = "http/1.1";
	if (!strchr(info.iface, ':')) {
		info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
	}
	if (net.tls) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.ssl_cert_filepath = config->cert;
		info.ssl_private_key_filepath = config->key;
	}
	if (net.tls) {
		net.nnames = web_cert_names(config->cert, net.names, 16);
	}
	net.context = lws_create_context(&info);
	net.vhost = net.context ? lws_get_vhost_by_name(net.context, "default") : NULL;
	if (!net.vhost) {
		log_error("cannot serve %s%s", config->listen,
			net.tls ? " (is the certificate or the key wrong?)"
				: " (is the port taken?)");
		return 1;
	}
	if (!drop(config)) {
		lws_context_destroy(net.context);
		return 1;
	}
	lws_adopt_desc_t desc = {
		.vh = net.vhost,
		.type = LWS_ADOPT_RAW_FILE_DESC,
		.fd.filefd = fd,
		.vh_prot_name = "gate-monitor",
	};
	if (!lws_adopt_descriptor_vhost_via_info(&desc)) {
		log_error("cannot watch the monitor's socket");
		lws_context_destroy(net.context);
		return 1;
	}
	log_info("serving %s://%s/ as %s", net.tls ? "https" : "http", config->listen,
		config->user);
	lws_sul_schedule(net.context, 0, &net.sweep, sweep, 250 * LWS_US_PER_MS);
	pthread_t watcher;
	bool watching = config->nhosts > 1 && peers_init(config) &&
		pthread_create(&watcher, NULL, watch_peers, (void *)config) == 0;
	if (config->nhosts > 1 && !watching) {
		log_error("cannot watch the cluster's other hosts");
		lws_context_destroy(net.context);
		return 1;
	}
	while (!net.gone && lws_service(net.context, 0) >= 0) {
	}
	if (watching) {
		atomic_store(&peers_stop, true);
		pthread_join(watcher, NULL);
	}
	lws_context_destroy(net.context);
	return 0;
}
