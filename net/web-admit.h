/*
 * What a connection to the browsers' door must show, and what each address
 * may hold before it has shown it. The checks of a request (a Host that
 * names this server, the page's subprotocol and the token's proof in it)
 * and the table of the door's connections by address, with a deadline for
 * each and room made for a newcomer by closing the oldest connection that
 * has proved nothing. No libwebsockets here: web.c asks, this answers, so
 * the tests and the fuzzer reach every rule.
 */
#ifndef RCOMP_WEB_ADMIT_H
#define RCOMP_WEB_ADMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The page's subprotocol, and the prefix of the item that carries the
 * proof: "rcomp-key." then ADMIT_PROOF_HEX lowercase hex digits. */
#define ADMIT_PROTOCOL "rcomp"
#define ADMIT_PROOF_PREFIX "rcomp-key."
#define ADMIT_PROOF_HEX 64
/* What the proof is made of: HMAC-SHA256 keyed by the token over this. */
#define ADMIT_PROOF_TEXT "rcomp browser upgrade"

/* An address's key as the table counts it, with room for the local user. */
#define ADMIT_KEY_MAX 72

/* Connections the door's table can hold (those asked for, and those being
 * closed to make room for them), and addresses it remembers. */
#define ADMIT_SLOTS 640
#define ADMIT_ADDRS 512

/* Deadlines, in milliseconds: a request's headers from the connection's
 * start or the last request; a refusal's last bytes; the hello after a
 * WebSocket opens. */
#define ADMIT_HEADERS_MS 4000
#define ADMIT_IDLE_MS 5000
#define ADMIT_REFUSED_MS 2000
#define ADMIT_HELLO_MS 5000

/* Wrong proofs an address may give at once, and how many more it may give
 * each second after them. */
#define ADMIT_TRIES_BURST 5
#define ADMIT_TRIES_PER_SECOND 0.5

enum admit_offer {
	ADMIT_OFFER_NONE, /* no "rcomp", something else, or a malformed list */
	ADMIT_OFFER_UNKEYED, /* "rcomp" alone: a page that carries no proof */
	ADMIT_OFFER_KEYED, /* "rcomp" and one proof */
};

/* Reads a Sec-WebSocket-Protocol list (len bytes, not terminated). Each
 * item is "rcomp" or a proof, each at most once; proof gets the proof's
 * hex digits with a terminating zero. */
enum admit_offer admit_parse_offer(const char *list, size_t len, char proof[ADMIT_PROOF_HEX + 1]);

/* The proof of token (len bytes) the page computes: HMAC-SHA256 of
 * ADMIT_PROOF_TEXT keyed by the token, in lowercase hex. False only if the
 * library cannot compute it. */
bool admit_proof(const char *token, size_t len, char out[ADMIT_PROOF_HEX + 1]);

/* Whether two proofs are the same, in time that does not depend on where
 * they differ. */
bool admit_proof_equal(const char *a, const char *b);

/* Whether a Host header (len bytes, not terminated) names this server: an
 * address literal (a name that resolves to us is what DNS rebinding
 * forges; a literal is what the browser itself connected to), localhost,
 * or one of names (the certificate's), with or without a port. */
bool admit_host_ok(const char *host, size_t len, const char *const *names, int nnames);

/* The key an address is counted under: IPv4 whole, IPv6 by its /64 (what
 * one subscriber is given), IPv4 in IPv6 as IPv4; on loopback, where every
 * local user and every ssh -L is the same address, also the local user
 * (uid) that the peer's socket belongs to, when known (uid >= 0). */
void admit_key(const struct sockaddr *addr, socklen_t len, long uid, char key[ADMIT_KEY_MAX]);

enum admit_state {
	ADMIT_NEW, /* accepted, its first request not yet whole */
	ADMIT_HTTP, /* served a request; may ask for another */
	ADMIT_REFUSED, /* being refused or closed: goes soon */
	ADMIT_KEYED, /* a WebSocket that showed the token's proof, before its hello */
	ADMIT_TALKING, /* that WebSocket's hello came: the program's now */
};

struct admit_conn {
	const void *id; /* NULL: a free slot */
	int addr; /* index into addrs */
	uint64_t since_ms, deadline_ms; /* deadline 0: none */
	enum admit_state state;
};

struct admit_addr {
	char key[ADMIT_KEY_MAX];
	int conns;
	int refs; /* slots that name it, those being closed included */
	double tries; /* wrong proofs it may still give */
	uint64_t tries_ms; /* when tries was last brought up to date */
};

struct admit {
	int max_conns, max_per_addr;
	int nconns; /* live connections, not those being closed for room */
	struct admit_conn slots[ADMIT_SLOTS];
	struct admit_addr addrs[ADMIT_ADDRS];
	int naddrs;
};

enum admit_verdict {
	ADMIT_IN, /* admitted */
	ADMIT_IN_MADE_ROOM, /* admitted, and *evict is to be closed for it */
	ADMIT_OUT_ADDRESS, /* refused: its address holds its share, all proven */
	ADMIT_OUT_FULL, /* refused: the table holds only proven connections */
};

void admit_init(struct admit *admit, int max_conns, int max_per_addr);
/* A new connection id from key, at now_ms. At its address's share, the
 * address's oldest unproven connection makes way; with the table full,
 * the oldest unproven one of the address holding the most. */
enum admit_verdict admit_add(struct admit *admit, const void *id, const char *key, uint64_t now_ms,
	const void **evict);
/* The connection is gone (unknown ids are ignored: the door's own sockets). */
void admit_remove(struct admit *admit, const void *id);
/* Its state now, with the deadline that state gives from now_ms. False
 * for an id the table does not hold. */
bool admit_set(struct admit *admit, const void *id, enum admit_state state, uint64_t now_ms);
enum admit_state admit_state_of(const struct admit *admit, const void *id);
/* Up to max connections whose deadline has passed, each then marked
 * refused (so it is given once); how many. */
int admit_expired(struct admit *admit, uint64_t now_ms, const void **ids, int max);

/* Whether id's address may have a proof checked now; false while it has
 * given its wrong proofs and must wait. */
bool admit_may_try(struct admit *admit, const void *id, uint64_t now_ms);
/* id gave a wrong proof. */
void admit_wrong(struct admit *admit, const void *id, uint64_t now_ms);
/* The key id is counted under ("?" for an unknown id). */
const char *admit_key_of(const struct admit *admit, const void *id);

#endif
