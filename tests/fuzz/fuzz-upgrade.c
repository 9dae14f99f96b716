/* libFuzzer harness: what the browsers' door parses of an upgrade before
 * anything is proved (net/web-admit.c): the subprotocol list with the
 * token's proof, and the Host header; then the door's table driven by the
 * same bytes. Each input is split at its first zero byte: before it the
 * subprotocol list, after it the Host; both are given unterminated, as
 * libwebsockets' copies are not trusted to be. The table's invariants are
 * checked after every step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web-admit.h"

static void check_offer(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	char proof[ADMIT_PROOF_HEX + 1];
	enum admit_offer offer = admit_parse_offer(copy, size, proof);
	if (offer == ADMIT_OFFER_KEYED) {
		/* The proof is 64 lowercase hex digits found in the input. */
		if (strlen(proof) != ADMIT_PROOF_HEX ||
			strspn(proof, "0123456789abcdef") != ADMIT_PROOF_HEX ||
			!memmem(copy, size, proof, ADMIT_PROOF_HEX)) {
			abort();
		}
	}
	if (offer != ADMIT_OFFER_NONE && !memmem(copy, size, ADMIT_PROTOCOL, 5)) {
		abort();
	}
	free(copy);
}

static void check_host(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"rcomp.example.org"};
	char *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	if (admit_host_ok(copy, size, names, 1) && size == 0) {
		abort();
	}
	free(copy);
}

static void check_table(const struct admit *admit)
{
	int live = 0;
	int per[ADMIT_ADDRS] = {0};
	for (int i = 0; i < ADMIT_SLOTS; i++) {
		const struct admit_conn *c = &admit->slots[i];
		if (c->id && c->state != ADMIT_REFUSED) {
			live++;
			per[c->addr]++;
		}
	}
	if (live != admit->nconns || live > admit->max_conns + 1) {
		abort();
	}
	for (int i = 0; i < admit->naddrs; i++) {
		if (per[i] != admit->addrs[i].conns || per[i] > admit->max_per_addr) {
			abort();
		}
	}
}

static void drive_table(const uint8_t *data, size_t size)
{
	static struct admit admit;
	static char ids[64];
	admit_init(&admit, 24, 6);
	uint64_t now = 0;
	for (size_t i = 0; i + 1 < size; i += 2) {
		const void *id = &ids[data[i] & 63];
		uint8_t arg = data[i + 1];
		now += arg & 15;
		const void *evict, *expired[8];
		char key[8];
		switch (data[i] >> 6) {
		case 0:
			if (admit_state_of(&admit, id) == ADMIT_REFUSED) {
				admit_remove(&admit, id); /* an id is added once */
				snprintf(key, sizeof(key), "k%u", arg >> 4);
				admit_add(&admit, id, key, now, &evict);
			}
			break;
		case 1:
			admit_remove(&admit, id);
			break;
		case 2:
			admit_set(&admit, id, (enum admit_state)(arg % 5), now);
			break;
		case 3:
			if (arg & 128) {
				admit_expired(&admit, now * 100, expired, 8);
			} else if (admit_may_try(&admit, id, now)) {
				admit_wrong(&admit, id, now);
			}
			break;
		}
		check_table(&admit);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *zero = memchr(data, 0, size);
	size_t first = zero ? (size_t)(zero - data) : size;
	check_offer(data, first);
	if (zero) {
		check_host(zero + 1, size - first - 1);
	}
	drive_table(data, size);
	return 0;
}
