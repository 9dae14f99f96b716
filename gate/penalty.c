/* Failed logins' penalties (penalty.h). */
#include "penalty.h"

/* Forgiveness and decay up to now. */
static void catch_up(struct penalty *p, const struct penalty_rule *r, uint64_t now_ms)
{
	if (now_ms > p->at_ms) {
		double forgiven = (double)(now_ms - p->at_ms) / r->forgive_ms;
		p->fails = p->fails > forgiven ? p->fails - forgiven : 0;
		p->at_ms = now_ms;
	}
	/* The next shut-out halves for each decay without a failure; below
	 * the first, it is forgotten. */
	while (p->next_ms && now_ms >= p->decayed_ms + r->decay_ms) {
		p->decayed_ms += r->decay_ms;
		p->next_ms = p->next_ms / 2 >= r->first_ms ? p->next_ms / 2 : 0;
	}
}

uint64_t penalty_wait(struct penalty *p, const struct penalty_rule *r, uint64_t now_ms)
{
	catch_up(p, r, now_ms);
	return p->until_ms > now_ms ? p->until_ms - now_ms : 0;
}

void penalty_failed(struct penalty *p, const struct penalty_rule *r, uint64_t now_ms)
{
	catch_up(p, r, now_ms);
	p->fails += 1;
	/* Once shut out, every failure shuts it out again, for twice as
	 * long, until a decay has let it go. */
	if (!p->next_ms && p->fails + 0.5 < r->burst) {
		/* (Half a try of slack: what a few milliseconds forgave of
		 * tries at once does not let one more through.) */
		return;
	}
	uint32_t length = p->next_ms ? p->next_ms : r->first_ms;
	p->until_ms = now_ms + length;
	p->next_ms = length >= r->most_ms / 2 ? r->most_ms : length * 2;
	/* The quiet that decays it begins when the shut-out ends. */
	p->decayed_ms = p->until_ms;
}

void penalty_given_back(struct penalty *p, const struct penalty_rule *r, uint64_t now_ms)
{
	catch_up(p, r, now_ms);
	p->fails = p->fails > 1 ? p->fails - 1 : 0;
}
