/* Failed logins' penalties (gate/penalty.c), in logical time: the burst,
 * the doubling shut-out and its ceiling, forgiveness and decay, and what a
 * guesser gets in a day. */
#include <stdint.h>

#include "check.h"
#include "penalty.h"

/* The gate's rules (monitor.c). */
static const struct penalty_rule address = {5, 2000, 3000, 600 * 1000, 600 * 1000};
static const struct penalty_rule name = {10, 2000, 3000, 3600 * 1000, 3600 * 1000};

/* A guesser that tries as soon as it may, at most once a second, for a
 * day: how many tries reached PAM. */
static int day_of_guessing(const struct penalty_rule *r, uint32_t *longest)
{
	struct penalty p = {0};
	uint64_t t = 0;
	int tries = 0;
	*longest = 0;
	while (t < 86400ull * 1000) {
		uint64_t wait = penalty_wait(&p, r, t);
		if (wait) {
			*longest = wait > *longest ? (uint32_t)wait : *longest;
			t += wait;
			continue;
		}
		penalty_failed(&p, r, t);
		tries++;
		t += 1000;
	}
	return tries;
}

static void test_burst(void)
{
	struct penalty p = {0};
	for (int i = 0; i < 4; i++) {
		CHECK(penalty_wait(&p, &address, 0) == 0);
		penalty_failed(&p, &address, 0);
	}
	CHECK(penalty_wait(&p, &address, 0) == 0);
	penalty_failed(&p, &address, 0); /* the fifth at once: the sixth waits */
	CHECK(penalty_wait(&p, &address, 0) == 3000);
	CHECK(penalty_wait(&p, &address, 2999) == 1);
	CHECK(penalty_wait(&p, &address, 3000) == 0);
	penalty_failed(&p, &address, 3000);
	CHECK(penalty_wait(&p, &address, 3000) == 6000);
}

static void test_ceiling_and_day(void)
{
	uint32_t longest;
	int tries = day_of_guessing(&address, &longest);
	/* A wait is seen a second after the failure that began it. */
	CHECK(longest == 599 * 1000);
	/* 144 a day at the ceiling, the burst and the climb to it. */
	CHECK(tries >= 144 && tries <= 170);
	tries = day_of_guessing(&name, &longest);
	CHECK(longest == 3599 * 1000);
	CHECK(tries >= 24 && tries <= 60);
	printf("a day of guessing: %d tries from one address, %d on one name\n",
		day_of_guessing(&address, &longest), tries);
}

static void test_decay(void)
{
	struct penalty p = {0};
	uint64_t t = 0;
	for (int i = 0; i < 20; i++) {
		t += penalty_wait(&p, &address, t);
		penalty_failed(&p, &address, t);
	}
	CHECK(p.next_ms == 600 * 1000);
	t = p.until_ms;
	/* Right at the shut-out's end: no decay yet. */
	CHECK(penalty_wait(&p, &address, t) == 0 && p.next_ms == 600 * 1000);
	/* Ten quiet minutes after it: half. */
	CHECK(penalty_wait(&p, &address, t + 600 * 1000) == 0);
	CHECK(p.next_ms == 300 * 1000);
	/* Hours: forgotten, and every failure forgiven. */
	uint64_t later = p.decayed_ms + 12ull * 3600 * 1000;
	CHECK(penalty_wait(&p, &address, later) == 0);
	CHECK(p.next_ms == 0 && p.fails == 0);
	for (int i = 0; i < 4; i++) {
		penalty_failed(&p, &address, later);
	}
	CHECK(penalty_wait(&p, &address, later) == 0);
	(void)t;
}

static void test_given_back(void)
{
	struct penalty p = {0};
	for (int i = 0; i < 4; i++) {
		penalty_failed(&p, &address, 0);
	}
	penalty_given_back(&p, &address, 0); /* one of them got in */
	penalty_failed(&p, &address, 0);
	CHECK(penalty_wait(&p, &address, 0) == 0);
	/* Forgiven one each 2 s. */
	CHECK(penalty_wait(&p, &address, 4000) == 0 && p.fails > 1.9 && p.fails < 2.1);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"burst", test_burst},
		{"ceiling", test_ceiling_and_day},
		{"decay", test_decay},
		{"given_back", test_given_back},
	};
	return check_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
