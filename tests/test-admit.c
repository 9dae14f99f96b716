/* Unit tests for the browsers' door's rules (net/web-admit.c): what
 * an upgrade must show, which Hosts name us, how addresses are counted,
 * and who makes way for a newcomer. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "web-admit.h"

#define PROOF "5f4e733631a99690009d9db6190a5d399d38ac231fcfb32457a07c399abe79ef"

static enum admit_offer offer(const char *list)
{
	char proof[ADMIT_PROOF_HEX + 1];
	return admit_parse_offer(list, strlen(list), proof);
}

static void offers(void)
{
	char proof[ADMIT_PROOF_HEX + 1];
	const char *page = "rcomp, rcomp-key." PROOF;
	CHECK(admit_parse_offer(page, strlen(page), proof) == ADMIT_OFFER_KEYED);
	CHECK(strcmp(proof, PROOF) == 0);
	CHECK(offer("rcomp-key." PROOF ",rcomp") == ADMIT_OFFER_KEYED);
	CHECK(offer(" rcomp ,\trcomp-key." PROOF " ") == ADMIT_OFFER_KEYED);
	CHECK(offer("rcomp") == ADMIT_OFFER_UNKEYED);
	/* Everything else is no offer of the page's. */
	CHECK(offer("") == ADMIT_OFFER_NONE);
	CHECK(offer("rcomp-key." PROOF) == ADMIT_OFFER_NONE);
	CHECK(offer("http") == ADMIT_OFFER_NONE);
	CHECK(offer("rcomp-socket") == ADMIT_OFFER_NONE);
	CHECK(offer("rcomp, http") == ADMIT_OFFER_NONE);
	CHECK(offer("rcomp, rcomp") == ADMIT_OFFER_NONE);
	CHECK(offer("rcomp,") == ADMIT_OFFER_NONE);
	CHECK(offer(",rcomp") == ADMIT_OFFER_NONE);
	CHECK(offer("rc omp") == ADMIT_OFFER_NONE);
	CHECK(offer("RCOMP") == ADMIT_OFFER_NONE);
	CHECK(offer("rcomp, rcomp-key." PROOF ", rcomp-key." PROOF) == ADMIT_OFFER_NONE);
	CHECK(offer("rcomp, rcomp-key.5F4E733631A99690009D9DB6190A5D399D38AC231FCFB32457A07C399ABE"
		    "79EF") == ADMIT_OFFER_NONE);
	CHECK(offer("rcomp, rcomp-key.5f4e") == ADMIT_OFFER_NONE);
	CHECK(offer("rcomp, rcomp-key." PROOF "0") == ADMIT_OFFER_NONE);
	/* Not terminated: only len bytes are read. */
	CHECK(admit_parse_offer("rcompX", 5, proof) == ADMIT_OFFER_UNKEYED);
}

static void proofs(void)
{
	/* What Python's hmac gives for the browser tests' token. */
	char proof[ADMIT_PROOF_HEX + 1];
	const char *token = "browser-test-token-0123456789";
	CHECK(admit_proof(token, strlen(token), proof));
	CHECK(strcmp(proof, PROOF) == 0);
	CHECK(admit_proof_equal(proof, PROOF));
	proof[63] ^= 1;
	CHECK(!admit_proof_equal(proof, PROOF));
	proof[63] ^= 1;
	proof[0] ^= 1;
	CHECK(!admit_proof_equal(proof, PROOF));
}

static bool host(const char *h)
{
	static const char *const names[] = {"rcomp.example.org", "desk"};
	return admit_host_ok(h, strlen(h), names, 2);
}

static void hosts(void)
{
	CHECK(host("127.0.0.1:8080"));
	CHECK(host("127.0.0.5"));
	CHECK(host("localhost:9000"));
	CHECK(host("LocalHost"));
	CHECK(host("[::1]:8080"));
	CHECK(host("[::1]"));
	CHECK(host("192.0.2.7:443"));
	CHECK(host("rcomp.example.org"));
	CHECK(host("RCOMP.example.org:8443"));
	CHECK(host("desk:1"));
	/* Names that are not ours, and what only looks like an address. */
	CHECK(!host("evil.example:8080"));
	CHECK(!host("localhost.evil.example"));
	CHECK(!host("127.0.0.1.evil.example"));
	CHECK(!host("evil.rcomp.example.org"));
	CHECK(!host("rcomp.example.org.evil.example"));
	CHECK(!host("127.1"));
	CHECK(!host("0x7f.0.0.1"));
	CHECK(!host(""));
	CHECK(!host(":8080"));
	CHECK(!host("localhost:"));
	CHECK(!host("localhost:0"));
	CHECK(!host("localhost:65536"));
	CHECK(!host("localhost:80:80"));
	CHECK(!host("::1"));
	CHECK(!host("[::1"));
	CHECK(!host("[::1]x"));
	CHECK(!host("[evil.example]:80"));
	CHECK(!host("local host"));
	CHECK(!host("localhost/x"));
	CHECK(admit_host_ok("localhost", 9, NULL, 0));
	/* Not terminated: only len bytes are read. */
	CHECK(admit_host_ok("localhost.evil", 9, NULL, 0));
}

static void keys(void)
{
	char key[ADMIT_KEY_MAX];
	struct sockaddr_in a4 = {.sin_family = AF_INET};
	inet_pton(AF_INET, "192.0.2.7", &a4.sin_addr);
	admit_key((struct sockaddr *)&a4, sizeof(a4), 1000, key);
	CHECK(strcmp(key, "192.0.2.7") == 0); /* the user counts on loopback only */
	inet_pton(AF_INET, "127.0.0.1", &a4.sin_addr);
	admit_key((struct sockaddr *)&a4, sizeof(a4), 1000, key);
	CHECK(strcmp(key, "127.0.0.1 (uid 1000)") == 0);
	admit_key((struct sockaddr *)&a4, sizeof(a4), -1, key);
	CHECK(strcmp(key, "127.0.0.1") == 0);
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
	inet_pton(AF_INET6, "2001:db8:1:2:3:4:5:6", &a6.sin6_addr);
	admit_key((struct sockaddr *)&a6, sizeof(a6), -1, key);
	CHECK(strcmp(key, "2001:db8:1:2::/64") == 0);
	char other[ADMIT_KEY_MAX];
	inet_pton(AF_INET6, "2001:db8:1:2:ffff:4:5:7", &a6.sin6_addr);
	admit_key((struct sockaddr *)&a6, sizeof(a6), -1, other);
	CHECK(strcmp(key, other) == 0);
	inet_pton(AF_INET6, "::ffff:192.0.2.7", &a6.sin6_addr);
	admit_key((struct sockaddr *)&a6, sizeof(a6), -1, key);
	CHECK(strcmp(key, "192.0.2.7") == 0);
	inet_pton(AF_INET6, "::1", &a6.sin6_addr);
	admit_key((struct sockaddr *)&a6, sizeof(a6), 7, key);
	CHECK(strcmp(key, "::1 (uid 7)") == 0);
}

/* Connection ids: addresses of this array's elements. */
static char ids[1000];

static void address_share(void)
{
	static struct admit admit;
	admit_init(&admit, 100, 4);
	const void *evict;
	for (int i = 0; i < 4; i++) {
		CHECK(admit_add(&admit, &ids[i], "a", (uint64_t)i, &evict) == ADMIT_IN);
	}
	/* The fifth from a makes its oldest unproven one go. */
	CHECK(admit_add(&admit, &ids[4], "a", 10, &evict) == ADMIT_IN_MADE_ROOM);
	CHECK(evict == &ids[0]);
	CHECK(admit_state_of(&admit, &ids[0]) == ADMIT_REFUSED);
	/* Another address is not touched. */
	CHECK(admit_add(&admit, &ids[5], "b", 11, &evict) == ADMIT_IN);
	/* Proven ones never make way: with all four proven, a fifth is refused. */
	for (int i = 1; i <= 4; i++) {
		CHECK(admit_set(&admit, &ids[i], i % 2 ? ADMIT_KEYED : ADMIT_TALKING, 12));
	}
	CHECK(admit_add(&admit, &ids[6], "a", 13, &evict) == ADMIT_OUT_ADDRESS);
	CHECK(evict == NULL);
	/* One of them goes: there is room again. */
	admit_remove(&admit, &ids[2]);
	CHECK(admit_add(&admit, &ids[6], "a", 14, &evict) == ADMIT_IN);
	/* The refused one's end changes no count. */
	admit_remove(&admit, &ids[0]);
	CHECK(admit_add(&admit, &ids[7], "a", 15, &evict) == ADMIT_IN_MADE_ROOM);
	CHECK(evict == &ids[6]);
}

static void table_full(void)
{
	static struct admit admit;
	admit_init(&admit, 10, 8);
	const void *evict;
	/* a holds 6 (2 proven), b 3, c 1: the table is full. */
	int n = 0;
	for (int i = 0; i < 6; i++) {
		CHECK(admit_add(&admit, &ids[n++], "a", 100 + (uint64_t)i, &evict) == ADMIT_IN);
	}
	admit_set(&admit, &ids[0], ADMIT_TALKING, 200);
	admit_set(&admit, &ids[1], ADMIT_HTTP, 200);
	admit_set(&admit, &ids[2], ADMIT_KEYED, 200);
	for (int i = 0; i < 3; i++) {
		CHECK(admit_add(&admit, &ids[n++], "b", 50 + (uint64_t)i, &evict) == ADMIT_IN);
	}
	CHECK(admit_add(&admit, &ids[n++], "c", 10, &evict) == ADMIT_IN);
	/* A newcomer from d: the oldest unproven one of a, which holds most
	 * (ids[1], older than b's and c's do not count). */
	CHECK(admit_add(&admit, &ids[n++], "d", 300, &evict) == ADMIT_IN_MADE_ROOM);
	CHECK(evict == &ids[1]);
	CHECK(admit_add(&admit, &ids[n++], "d", 301, &evict) == ADMIT_IN_MADE_ROOM);
	CHECK(evict == &ids[3]);
	/* A table of proven connections refuses. */
	static struct admit proven;
	admit_init(&proven, 3, 3);
	for (int i = 0; i < 3; i++) {
		CHECK(admit_add(&proven, &ids[100 + i], "a", 0, &evict) == ADMIT_IN);
		admit_set(&proven, &ids[100 + i], ADMIT_KEYED, 0);
	}
	CHECK(admit_add(&proven, &ids[103], "b", 1, &evict) == ADMIT_OUT_FULL);
}

static void deadlines(void)
{
	static struct admit admit;
	admit_init(&admit, 100, 10);
	const void *evict, *expired[8];
	admit_add(&admit, &ids[0], "a", 0, &evict); /* headers due at 4000 */
	admit_add(&admit, &ids[1], "a", 0, &evict);
	admit_set(&admit, &ids[1], ADMIT_HTTP, 3000); /* the next request due at 8000 */
	admit_add(&admit, &ids[2], "a", 0, &evict);
	admit_set(&admit, &ids[2], ADMIT_KEYED, 1000); /* its hello due at 6000 */
	admit_add(&admit, &ids[3], "a", 0, &evict);
	admit_set(&admit, &ids[3], ADMIT_KEYED, 1000);
	admit_set(&admit, &ids[3], ADMIT_TALKING, 1500); /* no deadline */
	CHECK(admit_expired(&admit, 3999, expired, 8) == 0);
	CHECK(admit_expired(&admit, 4000, expired, 8) == 1 && expired[0] == &ids[0]);
	CHECK(admit_expired(&admit, 4000, expired, 8) == 0); /* given once */
	CHECK(admit_expired(&admit, 6000, expired, 8) == 1 && expired[0] == &ids[2]);
	CHECK(admit_expired(&admit, 8000, expired, 8) == 1 && expired[0] == &ids[1]);
	CHECK(admit_expired(&admit, 1000000, expired, 8) == 0);
	CHECK(admit_state_of(&admit, &ids[3]) == ADMIT_TALKING);
}

static void wrong_tokens(void)
{
	static struct admit admit;
	admit_init(&admit, 100, 10);
	const void *evict;
	admit_add(&admit, &ids[0], "a", 0, &evict);
	admit_add(&admit, &ids[1], "b", 0, &evict);
	for (int i = 0; i < ADMIT_TRIES_BURST; i++) {
		CHECK(admit_may_try(&admit, &ids[0], 0));
		admit_wrong(&admit, &ids[0], 0);
	}
	CHECK(!admit_may_try(&admit, &ids[0], 0));
	CHECK(admit_may_try(&admit, &ids[1], 0)); /* another address may */
	/* One more try each 1 / ADMIT_TRIES_PER_SECOND seconds. */
	uint64_t wait = (uint64_t)(1000 / ADMIT_TRIES_PER_SECOND);
	CHECK(!admit_may_try(&admit, &ids[0], wait - 10));
	CHECK(admit_may_try(&admit, &ids[0], wait));
	admit_wrong(&admit, &ids[0], wait);
	CHECK(!admit_may_try(&admit, &ids[0], wait + 10));
	/* The address is remembered after its connections go. */
	admit_remove(&admit, &ids[0]);
	admit_add(&admit, &ids[2], "a", wait + 20, &evict);
	CHECK(!admit_may_try(&admit, &ids[2], wait + 20));
}

static void many_addresses(void)
{
	/* More addresses than the table remembers, one connection each, come
	 * and go: each finds a place. */
	static struct admit admit;
	admit_init(&admit, 200, 4);
	const void *evict;
	for (int i = 0; i < 3 * ADMIT_ADDRS; i++) {
		char key[32];
		snprintf(key, sizeof(key), "10.0.%d.%d", i / 256, i % 256);
		CHECK(admit_add(&admit, &ids[i % 10], key, (uint64_t)i, &evict) == ADMIT_IN);
		CHECK(strcmp(admit_key_of(&admit, &ids[i % 10]), key) == 0);
		admit_remove(&admit, &ids[i % 10]);
	}
	CHECK(admit.nconns == 0);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"offers", offers},
		{"proofs", proofs},
		{"hosts", hosts},
		{"keys", keys},
		{"address_share", address_share},
		{"table_full", table_full},
		{"deadlines", deadlines},
		{"wrong_tokens", wrong_tokens},
		{"many_addresses", many_addresses},
	};
	return check_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
