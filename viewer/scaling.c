/*
 * Who scales a smaller video picture (see scaling.h).
 */
#include "scaling.h"
#include "log.h"

#define WINDOW_US 1000000
/* The desktop keeps up while its callbacks are at least this share of the
 * pictures' rate. */
#define KEEPS_UP 0.9
#define SLOW_WINDOWS 2
/* Fewer pictures a second than this say nothing of the desktop. */
#define MIN_PICTURES 10
/* The viewer's scaling helped if the callbacks' share rose this much. */
#define HELPED 0.05

void scaling_reset(struct rv_scaling *s)
{
	*s = (struct rv_scaling){0};
}

void scaling_picture(struct rv_scaling *s, bool smaller, uint64_t now)
{
	if (s->window_us == 0) {
		s->window_us = now;
	}
	s->pictures += smaller;
}

void scaling_callback(struct rv_scaling *s)
{
	s->callbacks++;
}

bool scaling_judge(struct rv_scaling *s, uint32_t window, uint32_t refresh_mhz, uint64_t now)
{
	if (s->window_us == 0 || now - s->window_us < WINDOW_US) {
		return false;
	}
	double seconds = (double)(now - s->window_us) / 1e6;
	double pictures = s->pictures / seconds, callbacks = s->callbacks / seconds;
	bool enough = s->pictures >= MIN_PICTURES * seconds;
	s->window_us = now;
	s->pictures = s->callbacks = 0;
	/* What the desktop can show: the pictures' rate, or its refresh. */
	double limit = pictures;
	if (refresh_mhz > 0 && refresh_mhz / 1000.0 < limit) {
		limit = refresh_mhz / 1000.0;
	}
	double share = limit > 0 ? callbacks / limit : 1;
	if (s->judging) {
		if (!enough) {
			return false; /* judged at the next second with pictures */
		}
		s->judging = false;
		if (share < s->share_before + HELPED) {
			s->self = false;
			s->settled = true;
			log_info("window %u: scaling its pictures here did not help the desktop "
				 "(%.0f of %.0f a second shown, %.0f before): the desktop scales "
				 "them again",
				window, callbacks, limit, s->share_before * limit);
			return true;
		}
		return false;
	}
	if (s->self || s->settled || !enough) {
		s->slow = 0;
		return false;
	}
	s->slow = share < KEEPS_UP ? s->slow + 1 : 0;
	if (s->slow < SLOW_WINDOWS) {
		return false;
	}
	s->self = true;
	s->judging = true;
	s->share_before = share;
	log_info("window %u: the desktop shows %.0f of %.0f pictures a second while it scales "
		 "them; the viewer scales them itself",
		window, callbacks, limit);
	return true;
}
