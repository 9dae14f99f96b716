#include <errno.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "json.h"
#include "log.h"
#include "net-state.h"
#include "peers.h"
#include "wire.h"

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
	ROUTE_RENAME, /* POST /api/rename */
	ROUTE_THUMB, /* GET /api/thumb?name=NAME */
	ROUTE_ABOUT, /* GET /api/about: the gate's title, for anyone */
};

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

const size_t api_pss_size = sizeof(struct http_pss);

static const char *const form_names[] = {"user", "password", "csrf", "app", "name", "label"};
enum { FORM_USER, FORM_PASSWORD, FORM_CSRF, FORM_APP, FORM_NAME, FORM_LABEL, FORM_COUNT };

static void api_answered(struct lws *wsi, const struct gate_answer *a, const char *text, size_t len,
	int fd)
{
	if (fd >= 0) {
		close(fd); /* none is asked for */
	}
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
		{"/rename", LWSHUMETH_POST, ROUTE_RENAME},
		{"/thumb", LWSHUMETH_GET, ROUTE_THUMB},
		{"/about", LWSHUMETH_GET, ROUTE_ABOUT},
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

/* The form goes, its strings wiped first: a password must not stay in
 * this process once its request has gone to the monitor, however the
 * request ended (answered, refused, cut, or followed by another on the
 * same connection). */
static void form_destroy(struct http_pss *pss)
{
	if (!pss->spa) {
		return;
	}
	/* A field still coming (a body cut short) is in the form's storage
	 * but not yet filed as a field, so not wiped below: end it first. Two
	 * zero digits end any %xx it stopped inside, '&' ends the field, and
	 * lws files it. (After lws_spa_finalize this is ignored.) */
	(void)lws_spa_process(pss->spa, "00&", 3);
	for (int i = 0; i < FORM_COUNT; i++) {
		char *v = (char *)lws_spa_get_string(pss->spa, i);
		int n = lws_spa_get_length(pss->spa, i);
		if (v && n > 0) {
			explicit_bzero(v, (size_t)n);
		}
	}
	lws_spa_destroy(pss->spa);
	pss->spa = NULL;
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
	char buf[2048]; /* room for text escaped twice over */
	struct json j = {buf, sizeof(buf), 0, false};
	json_put(&j, "{\"error\":");
	json_string(&j, text, strlen(text));
	json_put(&j, "}");
	return respond_text(wsi, code, buf, j.len, NULL);
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
		char name[SESSION_NAME_MAX + 1];
		snprintf(name, sizeof(name), "%.*s", (int)len, (char *)pss->text + LWS_PRE);
		if (!session_name_ok(name, strlen(name))) {
			return respond_error(wsi, HTTP_STATUS_INTERNAL_SERVER_ERROR,
				"the session did not start");
		}
		len = (size_t)snprintf(text, sizeof(text), "{\"name\":\"%s\"}", name);
		break;
	}
	case ROUTE_STOP:
	case ROUTE_RENAME:
		len = (size_t)snprintf(text, sizeof(text), "{}");
		break;
	case ROUTE_ICON:
		return respond(wsi, HTTP_STATUS_OK, "image/png", pss->text + LWS_PRE, len, NULL);
	case ROUTE_THUMB:
		return respond(wsi, HTTP_STATUS_OK, "image/bmp", pss->text + LWS_PRE, len, NULL);
	default: /* sessions, apps: the monitor's JSON as it is */
		return respond(wsi, HTTP_STATUS_OK, "application/json", pss->text + LWS_PRE, len,
			NULL);
	}
	return respond_text(wsi, HTTP_STATUS_OK, text, len, set);
}

static void http_reset(struct net *net, struct http_pss *pss)
{
	form_destroy(pss);
	net_forget(net, pss->waiting);
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
		[ROUTE_RENAME] = GATE_RENAME,
		[ROUTE_THUMB] = GATE_THUMB,
	};
	req.op = ops[pss->route];
	snprintf(req.addr, sizeof(req.addr), "%s", pss->addr);
	net_cookie_of(wsi, req.cookie);
	if (pss->route == ROUTE_LOGIN) {
		if (!net_origin_ok(net, wsi)) {
			form_destroy(pss);
			return respond_error(wsi, HTTP_STATUS_FORBIDDEN,
				"a login must come from the gate's own page");
		}
		if (!gate_copy(req.user, sizeof(req.user), form(pss, FORM_USER)) ||
			!gate_copy(req.secret, sizeof(req.secret), form(pss, FORM_PASSWORD)) ||
			!req.user[0]) {
			explicit_bzero(req.secret, sizeof(req.secret));
			form_destroy(pss);
			return respond_error(wsi, HTTP_STATUS_BAD_REQUEST,
				"give a user name and a password");
		}
		const char *owner = peers_owner_of(net->config, req.user);
		if (owner && strcmp(owner, net->config->me) != 0) {
			explicit_bzero(req.secret, sizeof(req.secret));
			form_destroy(pss);
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
	} else if (pss->route == ROUTE_RENAME) {
		gate_copy(req.arg, sizeof(req.arg), form(pss, FORM_NAME));
		if (!gate_copy(req.label, sizeof(req.label), form(pss, FORM_LABEL))) {
			form_destroy(pss);
			return respond_error(wsi, HTTP_STATUS_BAD_REQUEST,
				"a session's name is at most 120 bytes");
		}
	} else if (pss->route == ROUTE_ICON || pss->route == ROUTE_THUMB) {
		char arg[GATE_ARG_MAX + 8];
		const char *v = lws_get_urlarg_by_name(wsi,
			pss->route == ROUTE_ICON ? "app=" : "name=", arg, sizeof(arg));
		if (v) {
			gate_copy(req.arg, sizeof(req.arg), v);
		}
	}
	/* The password goes to the monitor and nowhere else. */
	form_destroy(pss);
	pss->waiting = net_ask(net, &req, wsi, api_answered);
	if (!pss->waiting) {
		return respond_error(wsi, HTTP_STATUS_SERVICE_UNAVAILABLE,
			"The gate is busy: try again in a moment.");
	}
	return 0;
}

int api_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
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
		net_peer(wsi, pss->addr, sizeof(pss->addr));
		/* Its Host was checked, and its connection counted as one
		 * that asked, for every request (net.c). */
		if (pss->route == ROUTE_NONE) {
			return respond_error(wsi, HTTP_STATUS_NOT_FOUND, "no such request");
		}
		if (pss->route == ROUTE_ABOUT) {
			/* What the login page shows before anyone logs in. */
			char text[512];
			struct json j = {text, sizeof(text), 0, false};
			json_put(&j, "{\"title\":");
			json_string(&j, net->config->title, strlen(net->config->title));
			json_put(&j, "}");
			return respond_text(wsi, HTTP_STATUS_OK, text, j.len, NULL);
		}
		if (method == LWSHUMETH_POST) {
			pss->spa = lws_spa_create(wsi, form_names, FORM_COUNT, GATE_BODY_MAX, NULL,
				NULL);
			return pss->spa ? 0 : -1;
		}
		return http_ask(net, wsi, pss) < 0 ? -1 : 0;
	}
	case LWS_CALLBACK_HTTP_BODY: {
		pss->body += (int)len;
		bool bad = !pss->spa || pss->body > GATE_BODY_MAX ||
			lws_spa_process(pss->spa, in, (int)len);
		/* The body as it came (the password, url-encoded) is in lws's
		 * read buffer: the form holds what it needs of it now. */
		explicit_bzero(in, len);
		return bad ? -1 : 0;
	}
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
