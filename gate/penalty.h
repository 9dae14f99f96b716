/*
 * Failed logins' penalties, as OpenSSH's PerSourcePenalties: a source (an
 * address's prefix, or a user name) may fail a burst of tries (forgiven
 * one by one as time passes); past it, it is shut out, and each failure
 * from then on shuts it out again for twice as long, up to a ceiling,
 * until it has been quiet long enough: the shut-out halves for each decay
 * without a failure after it ended, and is forgotten below the first. Pure functions of the time given, so the
 * schedule is tested in logical time (tests/test-penalty.c).
 */
#ifndef RCOMP_GATE_PENALTY_H
#define RCOMP_GATE_PENALTY_H

#include <stdint.h>

struct penalty_rule {
	int burst; /* failures at once or in a row before the first shut-out */
	uint32_t forgive_ms; /* one failure forgiven each this long */
	uint32_t first_ms, most_ms; /* the first shut-out, and the ceiling */
	uint32_t decay_ms; /* the shut-out halves each this long without a failure */
};

struct penalty {
	double fails; /* not yet forgiven */
	uint32_t next_ms; /* the next shut-out's length (0: first_ms) */
	uint64_t until_ms; /* shut out until then */
	uint64_t at_ms; /* when fails were last brought up to date */
	uint64_t decayed_ms; /* next_ms decays from then on */
};

/* How long the source must wait before it may try (0: it may now). */
uint64_t penalty_wait(struct penalty *p, const struct penalty_rule *r, uint64_t now_ms);
/* A try that counts as a failure (from its start: tries at once count as
 * tries in a row): past the burst, a shut-out begins. */
void penalty_failed(struct penalty *p, const struct penalty_rule *r, uint64_t now_ms);
/* A try that succeeded is given back (the shut-out it may have begun
 * stands: a guesser who got in once was not slowed the less). */
void penalty_given_back(struct penalty *p, const struct penalty_rule *r, uint64_t now_ms);

#endif
