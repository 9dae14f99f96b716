#include <arpa/inet.h>
#include <gnutls/crypto.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "web-admit.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

enum admit_offer admit_parse_offer(const char *list, size_t len, char proof[ADMIT_PROOF_HEX + 1])
{
	static const char prefix[] = ADMIT_PROOF_PREFIX;
	const size_t prefix_len = sizeof(prefix) - 1;
	bool named = false, keyed = false;
	proof[0] = '\0';
	if (len > 512) {
		return ADMIT_OFFER_NONE;
	}
	size_t i = 0;
	while (i <= len) {
		/* One item: spaces, the item's characters, spaces, then a comma or
		 * the end. */
		while (i < len && is_space(list[i])) {
			i++;
		}
		size_t start = i;
		while (i < len && list[i] != ',' && !is_space(list[i])) {
			i++;
		}
		size_t n = i - start;
		while (i < len && is_space(list[i])) {
			i++;
		}
		if (i < len && list[i] != ',') {
			return ADMIT_OFFER_NONE; /* a space inside an item */
		}
		const char *item = list + start;
		if (n == strlen(ADMIT_PROTOCOL) && memcmp(item, ADMIT_PROTOCOL, n) == 0 && !named) {
			named = true;
		} else if (n == prefix_len + ADMIT_PROOF_HEX &&
			memcmp(item, prefix, prefix_len) == 0 && !keyed) {
			for (size_t k = 0; k < ADMIT_PROOF_HEX; k++) {
				if (!is_hex(item[prefix_len + k])) {
					return ADMIT_OFFER_NONE;
				}
			}
			memcpy(proof, item + prefix_len, ADMIT_PROOF_HEX);
			proof[ADMIT_PROOF_HEX] = '\0';
			keyed = true;
		} else {
			return ADMIT_OFFER_NONE; /* empty, unknown, or given twice */
		}
		i++; /* past the comma, or past the end */
	}
	if (!named) {
		return ADMIT_OFFER_NONE;
	}
	return keyed ? ADMIT_OFFER_KEYED : ADMIT_OFFER_UNKEYED;
}

bool admit_proof(const char *token, size_t len, char out[ADMIT_PROOF_HEX + 1])
{
	static const char text[] = ADMIT_PROOF_TEXT;
	uint8_t mac[ADMIT_PROOF_HEX / 2];
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, token, len, text, sizeof(text) - 1, mac) != 0) {
		return false;
	}
	for (size_t i = 0; i < sizeof(mac); i++) {
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
	}
	return true;
}

bool admit_proof_equal(const char *a, const char *b)
{
	uint8_t diff = 0;
	for (size_t i = 0; i < ADMIT_PROOF_HEX; i++) {
		diff |= (uint8_t)(a[i] ^ b[i]);
	}
	return diff == 0;
}

static bool port_ok(const char *p, size_t n)
{
	if (n < 1 || n > 5) {
		return false;
	}
	unsigned value = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9') {
			return false;
		}
		value = value * 10 + (unsigned)(p[i] - '0');
	}
	return value >= 1 && value <= 65535;
}

bool admit_host_ok(const char *host, size_t len, const char *const *names, int nnames)
{
	char name[256];
	size_t n;
	const char *rest;
	if (len > 0 && host[0] == '[') {
		const char *close = memchr(host, ']', len);
		if (!close) {
			return false;
		}
		n = (size_t)(close - host - 1);
		rest = close + 1;
		if (n >= INET6_ADDRSTRLEN) {
			return false;
		}
		memcpy(name, host + 1, n);
		name[n] = '\0';
		struct in6_addr a6;
		if (inet_pton(AF_INET6, name, &a6) != 1) {
			return false;
		}
		size_t left = len - (size_t)(rest - host);
		return left == 0 || (rest[0] == ':' && port_ok(rest + 1, left - 1));
	}
	const char *colon = memchr(host, ':', len);
	n = colon ? (size_t)(colon - host) : len;
	if (n == 0 || n >= sizeof(name)) {
		return false;
	}
	if (colon && !port_ok(colon + 1, len - n - 1)) {
		return false; /* a second colon (bare IPv6) or no port after it */
	}
	for (size_t i = 0; i < n; i++) {
		char c = host[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '.' || c == '-')) {
			return false;
		}
	}
	memcpy(name, host, n);
	name[n] = '\0';
	struct in_addr a4;
	if (inet_pton(AF_INET, name, &a4) == 1 || strcasecmp(name, "localhost") == 0) {
		return true;
	}
	for (int i = 0; i < nnames; i++) {
		if (names[i] && strcasecmp(name, names[i]) == 0) {
			return true;
		}
	}
	return false;
}

void admit_key(const struct sockaddr *addr, socklen_t len, long uid, char key[ADMIT_KEY_MAX])
{
	char text[INET6_ADDRSTRLEN] = "?";
	bool loopback = false;
	const char *suffix = "";
	if (addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)addr;
		inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
		loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	} else if (addr->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		struct in6_addr a = ((const struct sockaddr_in6 *)addr)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(&a)) {
			inet_ntop(AF_INET, &a.s6_addr[12], text, sizeof(text));
			loopback = a.s6_addr[12] == 127;
		} else if (IN6_IS_ADDR_LOOPBACK(&a)) {
			inet_ntop(AF_INET6, &a, text, sizeof(text));
			loopback = true;
		} else {
			memset(&a.s6_addr[8], 0, 8);
			inet_ntop(AF_INET6, &a, text, sizeof(text));
			suffix = "/64";
		}
	}
	if (loopback && uid >= 0) {
		snprintf(key, ADMIT_KEY_MAX, "%s (uid %ld)", text, uid);
	} else {
		snprintf(key, ADMIT_KEY_MAX, "%s%s", text, suffix);
	}
}

/* The table. */

void admit_init(struct admit *admit, int max_conns, int max_per_addr)
{
	memset(admit, 0, sizeof(*admit));
	if (max_conns > ADMIT_ADDRS) {
		max_conns = ADMIT_ADDRS; /* so a newcomer always finds its address a place */
	}
	if (max_conns > ADMIT_SLOTS / 2) {
		max_conns = ADMIT_SLOTS / 2;
	}
	admit->max_conns = max_conns;
	admit->max_per_addr = max_per_addr;
}

static struct admit_conn *find(const struct admit *admit, const void *id)
{
	if (!id) {
		return NULL;
	}
	for (int i = 0; i < ADMIT_SLOTS; i++) {
		if (admit->slots[i].id == id) {
			return (struct admit_conn *)&admit->slots[i];
		}
	}
	return NULL;
}

static bool counted(enum admit_state state)
{
	return state != ADMIT_REFUSED;
}

static bool unproven(enum admit_state state)
{
	return state == ADMIT_NEW || state == ADMIT_HTTP;
}

static void refill(struct admit_addr *a, uint64_t now_ms)
{
	if (now_ms > a->tries_ms) {
		a->tries += (double)(now_ms - a->tries_ms) / 1000.0 * ADMIT_TRIES_PER_SECOND;
		if (a->tries > ADMIT_TRIES_BURST) {
			a->tries = ADMIT_TRIES_BURST;
		}
	}
	a->tries_ms = now_ms;
}

/* The address key is counted under, made if new: a free place, else the
 * place of an address no connection names that has forgotten its wrong
 * proofs, else the one that gave them longest ago. */
static int address(struct admit *admit, const char *key, uint64_t now_ms)
{
	for (int i = 0; i < admit->naddrs; i++) {
		if (strcmp(admit->addrs[i].key, key) == 0) {
			return i;
		}
	}
	int found = -1;
	if (admit->naddrs < ADMIT_ADDRS) {
		found = admit->naddrs++;
	} else {
		for (int i = 0; i < ADMIT_ADDRS; i++) {
			struct admit_addr *a = &admit->addrs[i];
			if (a->refs > 0) {
				continue;
			}
			refill(a, now_ms);
			if (found < 0 || a->tries >= ADMIT_TRIES_BURST ||
				a->tries_ms < admit->addrs[found].tries_ms) {
				found = i;
			}
			if (a->tries >= ADMIT_TRIES_BURST) {
				break;
			}
		}
	}
	if (found >= 0) {
		struct admit_addr *a = &admit->addrs[found];
		snprintf(a->key, sizeof(a->key), "%s", key);
		a->conns = 0;
		a->refs = 0;
		a->tries = ADMIT_TRIES_BURST;
		a->tries_ms = now_ms;
	}
	return found;
}

static struct admit_conn *oldest_unproven(struct admit *admit, int addr)
{
	struct admit_conn *found = NULL;
	for (int i = 0; i < ADMIT_SLOTS; i++) {
		struct admit_conn *c = &admit->slots[i];
		if (c->id && c->addr == addr && unproven(c->state) &&
			(!found || c->since_ms < found->since_ms)) {
			found = c;
		}
	}
	return found;
}

/* Of the addresses with an unproven connection, the one holding most. */
static int busiest(const struct admit *admit)
{
	bool has[ADMIT_ADDRS] = {false};
	for (int i = 0; i < ADMIT_SLOTS; i++) {
		const struct admit_conn *c = &admit->slots[i];
		if (c->id && unproven(c->state)) {
			has[c->addr] = true;
		}
	}
	int found = -1;
	for (int i = 0; i < admit->naddrs; i++) {
		if (has[i] && (found < 0 || admit->addrs[i].conns > admit->addrs[found].conns)) {
			found = i;
		}
	}
	return found;
}

static uint64_t deadline(enum admit_state state, uint64_t now_ms)
{
	switch (state) {
	case ADMIT_NEW:
		return now_ms + ADMIT_HEADERS_MS;
	case ADMIT_HTTP:
		return now_ms + ADMIT_IDLE_MS;
	case ADMIT_REFUSED:
		return now_ms + ADMIT_REFUSED_MS;
	case ADMIT_KEYED:
		return now_ms + ADMIT_HELLO_MS;
	case ADMIT_TALKING:
		return 0;
	}
	return 0;
}

static void set(struct admit *admit, struct admit_conn *c, enum admit_state state, uint64_t now_ms)
{
	if (counted(c->state) && !counted(state)) {
		admit->nconns--;
		admit->addrs[c->addr].conns--;
	}
	c->state = state;
	c->deadline_ms = deadline(state, now_ms);
}

enum admit_verdict admit_add(struct admit *admit, const void *id, const char *key, uint64_t now_ms,
	const void **evict)
{
	*evict = NULL;
	int a = address(admit, key, now_ms);
	if (a < 0) {
		return ADMIT_OUT_FULL;
	}
	struct admit_conn *victim = NULL;
	enum admit_verdict out = ADMIT_IN;
	if (admit->addrs[a].conns >= admit->max_per_addr) {
		victim = oldest_unproven(admit, a);
		out = ADMIT_OUT_ADDRESS;
	} else if (admit->nconns >= admit->max_conns) {
		int b = busiest(admit);
		victim = b >= 0 ? oldest_unproven(admit, b) : NULL;
		out = ADMIT_OUT_FULL;
	}
	if (out != ADMIT_IN && !victim) {
		return out;
	}
	struct admit_conn *slot = NULL;
	for (int i = 0; i < ADMIT_SLOTS && !slot; i++) {
		if (!admit->slots[i].id) {
			slot = &admit->slots[i];
		}
	}
	if (!slot) {
		return ADMIT_OUT_FULL; /* as many being closed as the table holds */
	}
	if (victim) {
		set(admit, victim, ADMIT_REFUSED, now_ms);
		*evict = victim->id;
	}
	*slot = (struct admit_conn){
		.id = id,
		.addr = a,
		.since_ms = now_ms,
		.deadline_ms = deadline(ADMIT_NEW, now_ms),
		.state = ADMIT_NEW,
	};
	admit->nconns++;
	admit->addrs[a].conns++;
	admit->addrs[a].refs++;
	return victim ? ADMIT_IN_MADE_ROOM : ADMIT_IN;
}

void admit_remove(struct admit *admit, const void *id)
{
	struct admit_conn *c = find(admit, id);
	if (!c) {
		return;
	}
	if (counted(c->state)) {
		admit->nconns--;
		admit->addrs[c->addr].conns--;
	}
	admit->addrs[c->addr].refs--;
	c->id = NULL;
}

bool admit_set(struct admit *admit, const void *id, enum admit_state state, uint64_t now_ms)
{
	struct admit_conn *c = find(admit, id);
	if (!c) {
		return false;
	}
	if (!counted(c->state)) {
		return true; /* being closed already: it stays so */
	}
	set(admit, c, state, now_ms);
	return true;
}

enum admit_state admit_state_of(const struct admit *admit, const void *id)
{
	const struct admit_conn *c = find(admit, id);
	return c ? c->state : ADMIT_REFUSED;
}

int admit_expired(struct admit *admit, uint64_t now_ms, const void **ids, int max)
{
	int n = 0;
	for (int i = 0; i < ADMIT_SLOTS && n < max; i++) {
		struct admit_conn *c = &admit->slots[i];
		if (c->id && c->deadline_ms && c->deadline_ms <= now_ms) {
			ids[n++] = c->id;
			set(admit, c, ADMIT_REFUSED, now_ms);
			c->deadline_ms = 0; /* given once */
		}
	}
	return n;
}

bool admit_may_try(struct admit *admit, const void *id, uint64_t now_ms)
{
	struct admit_conn *c = find(admit, id);
	if (!c) {
		return false;
	}
	struct admit_addr *a = &admit->addrs[c->addr];
	refill(a, now_ms);
	return a->tries >= 1.0;
}

void admit_wrong(struct admit *admit, const void *id, uint64_t now_ms)
{
	struct admit_conn *c = find(admit, id);
	if (!c) {
		return;
	}
	struct admit_addr *a = &admit->addrs[c->addr];
	refill(a, now_ms);
	a->tries = a->tries > 1.0 ? a->tries - 1.0 : 0.0;
}

const char *admit_key_of(const struct admit *admit, const void *id)
{
	const struct admit_conn *c = find(admit, id);
	return c ? admit->addrs[c->addr].key : "?";
}
