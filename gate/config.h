/*
 * rcomp-gate's configuration: /etc/rcomp/gate.ini (or --config), read by
 * the monitor before anything else, and checked whole by --check-config.
 */
#ifndef RCOMP_GATE_CONFIG_H
#define RCOMP_GATE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "session.h"

#define GATE_CONFIG_DEFAULT "/etc/rcomp/gate.ini"
#define GATE_ALLOW_MAX 64
#define GATE_HOSTS_MAX 32
#define GATE_PROXIES_MAX 16

/* One host of a cluster of gates behind a balancer. */
struct gate_host {
	char name[64]; /* the balancer's cookie value for it (HAProxy's "cookie NAME") */
	char addr[128]; /* ADDR:PORT, where the other gates reach it */
};

struct gate_config {
	char path[4096];
	/* [gate] */
	char listen[128]; /* ADDR:PORT */
	char cert[4096], key[4096]; /* PEM; both empty: plain HTTP, loopback only */
	char user[64]; /* the network process runs as this system user */
	char pam_service[64];
	char page[4096]; /* the browser viewer's files, and the gate's page */
	char rcomp_run[4096]; /* the program sessions run */
	int idle_s, lifetime_s; /* a login's idle and absolute expiry */
	int sessions_per_user, viewers_per_user;
	int logins_at_once; /* PAM conversations at once */
	int connections, connections_per_address;
	/* TLS 1.2's cipher suites, in OpenSSL's names (lws speaks TLS through
	 * OpenSSL); empty: ECDHE with an AEAD only (bridge.h). */
	char tls_ciphers[512];
	/* Balancers in front (HAProxy with send-proxy-v2): a connection from
	 * one of these addresses begins with a PROXY v2 header that names the
	 * browser (listen.h). */
	struct sockaddr_storage proxies[GATE_PROXIES_MAX];
	int nproxies;
	/* Where the monitor keeps what outlives a restart (its logins), root's
	 * alone; empty: nothing is kept. */
	char state[4096];
	/* [cluster]: each user's sessions live on one host, the first
	 * (that answers) in the user's rendezvous order of hosts. */
	struct gate_host hosts[GATE_HOSTS_MAX];
	int nhosts;
	char me[64]; /* this host's name among them */
	char title[SESSION_LABEL_MAX + 1]; /* [gate] title: the page's name for the host */
	char cookie[64]; /* the balancer's persistence cookie */
	/* [apps] */
	char *allow[GATE_ALLOW_MAX]; /* desktop ids; none: every app */
	int nallow;
	bool apps_own; /* own = yes: a user's entry may stand for an allowed id */
	bool shells_any; /* [gate] shells = any: accounts without a login shell too */
};

/* Reads path into config (defaults first). False with why in err (the
 * first problem). */
bool gate_config_read(struct gate_config *config, const char *path, char *err, size_t err_size);
/* The same, saying every problem on stdout, one line each ("rcomp-gate:
 * FILE:LINE: ..."); how many there were. config holds what was read. */
int gate_config_read_all(struct gate_config *config, const char *path);
void gate_config_finish(struct gate_config *config);

/* The cluster's hosts in user's rendezvous order (the highest hash of
 * host and user first): order gets indexes into config->hosts. */
void gate_config_order(const struct gate_config *config, const char *user, int *order);

/* Whether an app's desktop id (foot.desktop's is "foot") is allowed. */
bool gate_config_allows(const struct gate_config *config, const char *id);

#endif
