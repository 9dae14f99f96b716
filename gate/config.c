#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <ini.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "address.h"
#include "config.h"

#ifndef RCOMP_BIN_DIR
#define RCOMP_BIN_DIR "/usr/bin"
#endif

/* Reading: every problem is counted and, with print, said (one line each,
 * FILE:LINE first); the first is in err. */
struct parse {
	struct gate_config *config;
	char *err;
	size_t err_size;
	bool print;
	int problems;
	FILE *file;
	int line; /* of the line inih has just read */
};

static void parse_problem(struct parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void parse_problem(struct parse *p, const char *fmt, ...)
{
	char text[1024];
	va_list args;
	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	if (p->problems++ == 0) {
		snprintf(p->err, p->err_size, "%s", text);
	}
	if (p->print) {
		printf("rcomp-gate: %s\n", text);
	}
}

/* inih's reader: fgets, counting lines, and saying which line is not one
 * of an ini file (a section, NAME = VALUE, a comment or blank), so that
 * every such line is reported, not only inih's first. */
static char *read_line(char *str, int num, void *stream)
{
	struct parse *p = stream;
	if (!fgets(str, num, p->file)) {
		return NULL;
	}
	p->line++;
	const char *t = str + strspn(str, " \t");
	size_t len = strcspn(t, "\r\n");
	/* (An indented line continues the value above it, as inih takes it.) */
	bool fine = len == 0 || t != str || *t == ';' || *t == '#' ||
		(*t == '[' && memchr(t, ']', len)) || memchr(t, '=', len) || memchr(t, ':', len);
	if (!fine) {
		parse_problem(p,
			"%s:%d: not a line of an ini file (a [section], NAME = VALUE, or "
			"a comment)",
			p->config->path, p->line);
	}
	return str;
}

static bool set_text(char *field, size_t size, const char *value)
{
	size_t n = strlen(value);
	if (n >= size) {
		return false;
	}
	memcpy(field, value, n + 1);
	return true;
}

static bool set_int(int *field, const char *value, int least, int most)
{
	char *end;
	errno = 0;
	long v = strtol(value, &end, 10);
	if (errno || end == value || *end || v < least || v > most) {
		return false;
	}
	*field = (int)v;
	return true;
}

static void add_allowed(struct gate_config *config, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	for (char *tok = copy ? strtok_r(copy, ", \t", &save) : NULL;
		tok && config->nallow < GATE_ALLOW_MAX; tok = strtok_r(NULL, ", \t", &save)) {
		size_t n = strlen(tok);
		if (n > 8 && strcmp(tok + n - 8, ".desktop") == 0) {
			tok[n - 8] = '\0';
		}
		config->allow[config->nallow++] = strdup(tok);
	}
	free(copy);
}

/* "ADDR, ADDR ...": IPv4 or IPv6 addresses. */
static bool add_proxies(struct gate_config *config, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	bool ok = copy != NULL;
	for (char *tok = copy ? strtok_r(copy, ", \t", &save) : NULL; tok && ok;
		tok = strtok_r(NULL, ", \t", &save)) {
		ok = config->nproxies < GATE_PROXIES_MAX;
		if (!ok) {
			break;
		}
		struct sockaddr_storage *ss = &config->proxies[config->nproxies];
		memset(ss, 0, sizeof(*ss));
		struct sockaddr_in *four = (struct sockaddr_in *)ss;
		struct sockaddr_in6 *six = (struct sockaddr_in6 *)ss;
		if (inet_pton(AF_INET, tok, &four->sin_addr) == 1) {
			four->sin_family = AF_INET;
		} else if (inet_pton(AF_INET6, tok, &six->sin6_addr) == 1) {
			six->sin6_family = AF_INET6;
		} else {
			ok = false;
			break;
		}
		config->nproxies++;
	}
	free(copy);
	return ok;
}

/* "NAME=ADDR:PORT NAME=ADDR:PORT ...". */
static bool add_hosts(struct gate_config *config, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	bool ok = copy != NULL;
	for (char *tok = copy ? strtok_r(copy, ", \t", &save) : NULL; tok && ok;
		tok = strtok_r(NULL, ", \t", &save)) {
		char *eq = strchr(tok, '=');
		char host[128];
		int port;
		ok = eq && eq != tok && config->nhosts < GATE_HOSTS_MAX;
		if (ok) {
			*eq = '\0';
			struct gate_host *h = &config->hosts[config->nhosts++];
			ok = set_text(h->name, sizeof(h->name), tok) &&
				set_text(h->addr, sizeof(h->addr), eq + 1) &&
				address_listen(h->addr, host, sizeof(host), &port);
		}
	}
	free(copy);
	return ok;
}

static int on_entry(void *data, const char *section, const char *name, const char *value)
{
	struct parse *p = data;
	struct gate_config *c = p->config;
	bool ok = true, known = true;
	if (strcmp(section, "gate") == 0) {
		if (strcmp(name, "listen") == 0) {
			ok = set_text(c->listen, sizeof(c->listen), value);
		} else if (strcmp(name, "cert") == 0) {
			ok = set_text(c->cert, sizeof(c->cert), value);
		} else if (strcmp(name, "key") == 0) {
			ok = set_text(c->key, sizeof(c->key), value);
		} else if (strcmp(name, "user") == 0) {
			ok = set_text(c->user, sizeof(c->user), value);
		} else if (strcmp(name, "pam-service") == 0) {
			ok = set_text(c->pam_service, sizeof(c->pam_service), value) &&
				!strchr(value, '/');
		} else if (strcmp(name, "page") == 0) {
			ok = set_text(c->page, sizeof(c->page), value);
		} else if (strcmp(name, "rcomp-run") == 0) {
			ok = set_text(c->rcomp_run, sizeof(c->rcomp_run), value);
		} else if (strcmp(name, "idle") == 0) {
			ok = set_int(&c->idle_s, value, 1, 30 * 86400);
		} else if (strcmp(name, "lifetime") == 0) {
			ok = set_int(&c->lifetime_s, value, 1, 365 * 86400);
		} else if (strcmp(name, "sessions-per-user") == 0) {
			ok = set_int(&c->sessions_per_user, value, 1, 64);
		} else if (strcmp(name, "viewers-per-user") == 0) {
			ok = set_int(&c->viewers_per_user, value, 1, 64);
		} else if (strcmp(name, "logins-at-once") == 0) {
			ok = set_int(&c->logins_at_once, value, 1, 64);
		} else if (strcmp(name, "connections") == 0) {
			ok = set_int(&c->connections, value, 16, 4096);
		} else if (strcmp(name, "connections-per-address") == 0) {
			ok = set_int(&c->connections_per_address, value, 4, 4096);
		} else if (strcmp(name, "proxies") == 0) {
			ok = add_proxies(c, value);
		} else if (strcmp(name, "state") == 0) {
			ok = set_text(c->state, sizeof(c->state), value) &&
				(!*value || *value == '/');
		} else if (strcmp(name, "shells") == 0) {
			ok = strcmp(value, "login") == 0 || strcmp(value, "any") == 0;
			c->shells_any = strcmp(value, "any") == 0;
		} else if (strcmp(name, "tls-ciphers") == 0) {
			ok = set_text(c->tls_ciphers, sizeof(c->tls_ciphers), value);
		} else if (strcmp(name, "title") == 0) {
			ok = set_text(c->title, sizeof(c->title), value) &&
				session_label_ok(value, strlen(value));
		} else {
			known = false;
		}
	} else if (strcmp(section, "cluster") == 0) {
		if (strcmp(name, "hosts") == 0) {
			ok = add_hosts(c, value);
		} else if (strcmp(name, "me") == 0) {
			ok = set_text(c->me, sizeof(c->me), value);
		} else if (strcmp(name, "cookie") == 0) {
			ok = set_text(c->cookie, sizeof(c->cookie), value) && *value &&
				!strpbrk(value, "=; ,\t");
		} else {
			known = false;
		}
	} else if (strcmp(section, "apps") == 0 && strcmp(name, "allow") == 0) {
		add_allowed(c, value);
	} else if (strcmp(section, "apps") == 0 && strcmp(name, "own") == 0) {
		ok = strcmp(value, "yes") == 0 || strcmp(value, "no") == 0;
		c->apps_own = strcmp(value, "yes") == 0;
	} else {
		known = false;
	}
	if (!known || !ok) {
		parse_problem(p, "%s:%d: [%s] %s = %s: %s", c->path, p->line, section, name, value,
			known ? "not a value it takes" : "no such setting");
	}
	return 1;
}

/* Reads path; with print, says every problem. How many there were. */
static int config_read(struct gate_config *config, const char *path, char *err, size_t err_size,
	bool print)
{
	*config = (struct gate_config){
		.idle_s = 30 * 60,
		.lifetime_s = 12 * 3600,
		.sessions_per_user = 4,
		.viewers_per_user = 8,
		.logins_at_once = 16,
		.connections = 512,
		.connections_per_address = 64,
	};
	snprintf(config->path, sizeof(config->path), "%s", path);
	snprintf(config->listen, sizeof(config->listen), "0.0.0.0:8443");
	snprintf(config->user, sizeof(config->user), "rcomp-gate");
	snprintf(config->state, sizeof(config->state), "/var/lib/rcomp-gate");
	snprintf(config->pam_service, sizeof(config->pam_service), "rcomp");
	snprintf(config->page, sizeof(config->page), "%s", RCOMP_WEB_DIR);
	snprintf(config->rcomp_run, sizeof(config->rcomp_run), "%s/rcomp-run", RCOMP_BIN_DIR);
	/* The host's name, as the login page calls it, unless [gate] title. */
	if (gethostname(config->title, sizeof(config->title) - 1) != 0) {
		config->title[0] = '\0';
	}
	config->title[sizeof(config->title) - 1] = '\0';
	struct parse p = {config, err, err_size, print, 0, fopen(path, "r"), 0};
	if (!p.file) {
		parse_problem(&p, "cannot read %s: %s", path, strerror(errno));
		return p.problems;
	}
	int line = ini_parse_stream(read_line, &p, on_entry, &p);
	fclose(p.file);
	if (line > 0 && p.problems == 0) {
		/* inih's own rule, where ours let the line pass. */
		parse_problem(&p, "%s:%d: not a line of an ini file", path, line);
	}
	if (!config->cert[0] != !config->key[0]) {
		parse_problem(&p, "%s: TLS needs both cert and key", path);
	}
	char host[128];
	int port;
	if (!address_listen(config->listen, host, sizeof(host), &port)) {
		parse_problem(&p, "%s: listen = %s is not ADDR:PORT", path, config->listen);
	} else if (!config->cert[0] && !address_is_loopback(host)) {
		parse_problem(&p,
			"%s: listen = %s needs cert and key: plain HTTP is served only on a "
			"loopback address",
			path, config->listen);
	}
	if (!config->cookie[0]) {
		snprintf(config->cookie, sizeof(config->cookie), "RCOMPHOST");
	}
	if (config->nhosts) {
		bool found = false;
		for (int i = 0; i < config->nhosts; i++) {
			found |= strcmp(config->hosts[i].name, config->me) == 0;
		}
		if (!found) {
			parse_problem(&p,
				"%s: [cluster] me = %s names none of its hosts: give this host's "
				"name",
				path, config->me);
		}
	}
	return p.problems;
}

bool gate_config_read(struct gate_config *config, const char *path, char *err, size_t err_size)
{
	return config_read(config, path, err, err_size, false) == 0;
}

int gate_config_read_all(struct gate_config *config, const char *path)
{
	char err[16];
	return config_read(config, path, err, sizeof(err), true);
}

static uint64_t rendezvous(const char *host, const char *user)
{
	char text[256];
	int n = snprintf(text, sizeof(text), "%s\n%s", host, user);
	uint8_t digest[32];
	if (n < 0 || gnutls_hash_fast(GNUTLS_DIG_SHA256, text, (size_t)n, digest) < 0) {
		return 0;
	}
	uint64_t v = 0;
	for (int i = 0; i < 8; i++) {
		v = v << 8 | digest[i];
	}
	return v;
}

void gate_config_order(const struct gate_config *config, const char *user, int *order)
{
	uint64_t score[GATE_HOSTS_MAX];
	for (int i = 0; i < config->nhosts; i++) {
		score[i] = rendezvous(config->hosts[i].name, user);
		int j = i;
		while (j > 0 && score[order[j - 1]] < score[i]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
}

void gate_config_finish(struct gate_config *config)
{
	for (int i = 0; i < config->nallow; i++) {
		free(config->allow[i]);
	}
	config->nallow = 0;
}

bool gate_config_allows(const struct gate_config *config, const char *id)
{
	if (config->nallow == 0) {
		return true;
	}
	for (int i = 0; i < config->nallow; i++) {
		if (strcmp(config->allow[i], id) == 0) {
			return true;
		}
	}
	return false;
}
