#include <errno.h>
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
#include "api.h"
#include "bridge.h"
#include "ipc.h"
#include "log.h"
#include "monotonic.h"
#include "net-state.h"
#include "net.h"
#include "peers.h"
#include "viewers.h"
#include "tcp.h"
#include "web-admit.h"
#include "web.h"
#include "wire.h"

uint64_t net_now_ms(void)
{
	return monotonic_usec() / 1000;
}

struct net *net_of(struct lws *wsi)
{
	return lws_context_user(lws_get_context(wsi));
}

/* The monitor ------------------------------------------------------------ */

uint32_t net_ask(struct net *net, struct gate_request *req, struct lws *wsi)
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

void net_forget(struct net *net, uint32_t id)
{
	for (int i = 0; id && i < MAX_WAITERS; i++) {
		if (net->waiters[i].id == id) {
			net->waiters[i] = (struct waiter){0};
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
			viewers_answered(wsi, &a, text, len, fd);
		} else {
			if (fd >= 0) {
				close(fd);
			}
			api_answered(wsi, &a, text, len);
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
	lws_get_peer_simple(wsi, out, size);
}

void net_cookie_of(struct lws *wsi, char *out)
{
	size_t max = GATE_COOKIE_HEX + 1;
	if (lws_http_cookie_get(wsi, "rcomp-gate", out, &max) != 0 || max != GATE_COOKIE_HEX) {
		out[0] = '\0';
	}
}

/* Connections ------------------------------------------------------------ */

/* Counted under its address, and room made for it by closing the oldest
 * connection that proved nothing (the browsers' door's rules). */
static bool arrive(struct net *net, struct lws *wsi)
{
	const void *evict;
	enum admit_verdict v = bridge_arrive(&net->admit, wsi, -1, net_now_ms(), &evict);
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
		if (!net_host_ok(wsi, host, sizeof(host))) {
			/* A name that resolves to us is what DNS rebinding forges. */
			lws_return_http_status(wsi, HTTP_STATUS_BAD_REQUEST,
				"the Host names no address or name of this server");
			return 1;
		}
		admit_set(&net->admit, lws_get_network_wsi(wsi), ADMIT_HTTP, net_now_ms());
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
	int n = admit_expired(&net->admit, net_now_ms(), expired, 64);
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
	net.protocols[1] = (struct lws_protocols){"gate-api", api_callback, api_pss_size, 0};
	net.protocols[2] =
		(struct lws_protocols){"rcomp", viewers_callback, viewers_pss_size, BRIDGE_CHUNK};
	net.protocols[3] =
		(struct lws_protocols){"rcomp-socket", viewers_socket_callback, 0, BRIDGE_CHUNK};
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
	if (!peers_start(config)) {
		lws_context_destroy(net.context);
		return 1;
	}
	while (!net.gone && lws_service(net.context, 0) >= 0) {
	}
	peers_stop();
	lws_context_destroy(net.context);
	return 0;
}
