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
#include "listen.h"
#include "log.h"
#include "monotonic.h"
#include "net-state.h"
#include "net.h"
#include "peers.h"
#include "sandbox.h"
#include "viewers.h"
#include "tcp.h"
#include "web-admit.h"
#include "web.h"
#include "wire.h"

/* Connections ------------------------------------------------------------ */

/* Counted under its address, and room made for it by closing the oldest
 * connection that proved nothing (the browsers' door's rules). */
static bool arrive(struct net *net, struct lws *wsi)
{
	const void *evict = NULL;
	struct sockaddr_storage addr;
	socklen_t len;
	char key[ADMIT_KEY_MAX];
	/* The browser's address, a proxy's header's where one sent it. */
	if (!listen_peer(wsi, &addr, &len)) {
		return false;
	}
	admit_key((struct sockaddr *)&addr, len, -1, key);
	enum admit_verdict v = admit_add(&net->admit, wsi, key, net_now_ms(), &evict);
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
		listen_forget(wsi);
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

/* The page's folder lacks a file the page needs (the build's messages.js,
 * say): every page asked for says so, not a blank page. */
static int callback_no_page(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
	size_t len)
{
	struct net *net = net_of(wsi);
	if (reason != LWS_CALLBACK_HTTP) {
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
	char body[2048];
	int n = snprintf(body, sizeof(body),
		"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>rcomp-gate: "
		"the page is missing</title></head><body><h1>This gate cannot show its page</h1>"
		"<p>The page's folder (<code>page =</code> in the gate's settings) has no "
		"<code>%s</code>. In a build the page is <code>build/web</code>, made by "
		"<code>ninja -C build</code>; installed, the rcomp package puts it in "
		"<code>/usr/share/rcomp/web</code>. <code>rcomp-gate --check-config</code> says "
		"the same.</p></body></html>",
		net->page_missing);
	uint8_t head[LWS_PRE + 512], *start = head + LWS_PRE, *p = start,
				     *end = head + sizeof(head);
	if (lws_add_http_common_headers(wsi, HTTP_STATUS_INTERNAL_SERVER_ERROR, "text/html",
		    (lws_filepos_t)n, &p, end) ||
		lws_finalize_write_http_header(wsi, start, &p, end)) {
		return 1;
	}
	uint8_t out[LWS_PRE + sizeof(body)];
	memcpy(out + LWS_PRE, body, (size_t)n);
	if (lws_write(wsi, out + LWS_PRE, (size_t)n, LWS_WRITE_HTTP_FINAL) != n) {
		return 1;
	}
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* The first file of the page that its folder lacks, or NULL. */
static const char *page_missing(const char *dir)
{
	static const char *const needed[] = {WEB_PAGE_FILES, WEB_GATE_PAGE};
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		char path[4096 + 32];
		snprintf(path, sizeof(path), "%s/%s", dir, needed[i]);
		if (access(path, R_OK) != 0) {
			return needed[i];
		}
	}
	return NULL;
}

static void sweep(lws_sorted_usec_list_t *sul)
{
	struct net *net = lws_container_of(sul, struct net, sweep);
	const void *expired[64];
	int n = admit_expired(&net->admit, net_now_ms(), expired, 64);
	for (int i = 0; i < n; i++) {
		bridge_close_soon(expired[i]);
	}
	listen_sweep(net, net_now_ms());
	net_forget_orphans(net, net_now_ms());
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

int net_run(const struct gate_config *config, int fd, int listen_fd)
{
	static struct net net;
	net.config = config;
	net.monitor = fd;
	net.tls = config->cert[0] != '\0';
	char host[128];
	int port; /* gate_config_read checked it */
	address_listen(config->listen, host, sizeof(host), &port);
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
	net.page_missing = page_missing(config->page);
	if (net.page_missing) {
		log_error("the page's folder %s has no %s: every page is an error page that says "
			  "so "
			  "(page = in %s; in a build it is build/web)",
			config->page, net.page_missing, config->path);
		net.mounts[1].origin = "gate-no-page";
		net.mounts[1].origin_protocol = LWSMPRO_CALLBACK;
		net.mounts[1].def = NULL;
	}
	net.viewer_ended = viewers_end;
	net.protocols[0] = (struct lws_protocols){"http", callback_http, 0, 0};
	net.protocols[1] = (struct lws_protocols){"gate-api", api_callback, api_pss_size, 0};
	net.protocols[2] =
		(struct lws_protocols){"rcomp", viewers_callback, viewers_pss_size, BRIDGE_CHUNK};
	net.protocols[3] =
		(struct lws_protocols){"rcomp-socket", viewers_socket_callback, 0, BRIDGE_CHUNK};
	net.protocols[4] = (struct lws_protocols){"gate-monitor", net_monitor_callback, 0, 0};
	net.protocols[5] = (struct lws_protocols){"gate-listen", listen_callback, 0, 0};
	net.protocols[6] = (struct lws_protocols){"gate-proxy", listen_proxy_callback, 0, 0};
	net.protocols[7] = (struct lws_protocols){"gate-no-page", callback_no_page, 0, 0};
	struct lws_context_creation_info info = {0};
	bridge_door_info(&info, host, port, config->cert, config->key);
	/* The monitor took the port (listen.h): lws accepts nothing itself. */
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	if (net.tls && config->tls_ciphers[0]) {
		info.ssl_cipher_list = config->tls_ciphers;
	}
	info.protocols = net.protocols;
	info.mounts = &net.mounts[0];
	info.user = &net;
	info.fd_limit_per_thread = (unsigned)(config->connections + MAX_BRIDGES + 64);
	info.max_http_header_pool = (unsigned short)config->connections;
	if (net.tls) {
		net.nnames = web_cert_names(config->cert, net.names, 16);
	}
	net.context = lws_create_context(&info);
	net.vhost = net.context ? lws_get_vhost_by_name(net.context, "default") : NULL;
	if (!net.vhost) {
		log_error("cannot serve %s%s", config->listen,
			net.tls ? " (is the certificate or the key wrong?)" : "");
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
	if (!lws_adopt_descriptor_vhost_via_info(&desc) || !listen_serve(&net, listen_fd)) {
		log_error("cannot watch the monitor's socket or the gate's port");
		lws_context_destroy(net.context);
		return 1;
	}
	log_info("serving %s://%s/ as %s", net.tls ? "https" : "http", config->listen,
		config->user);
	lws_sul_schedule(net.context, 0, &net.sweep, sweep, 250 * LWS_US_PER_MS);
	if (!peers_start(config) || !sandbox_enter()) {
		lws_context_destroy(net.context);
		return 1;
	}
	while (!net.gone && lws_service(net.context, 0) >= 0) {
	}
	peers_stop();
	lws_context_destroy(net.context);
	return 0;
}
