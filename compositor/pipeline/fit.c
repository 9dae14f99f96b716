/*
 * Choosing the video's size for the frame rate (see fit.h).
 */
#include <stdio.h>

#include "fit.h"
#include "log.h"
#include "wire.h"

#define WINDOW_US 500000
/* A window keeps the rate while at most this share of its ticks found the
 * encoder busy. */
#define BUSY_SHARE 0.1
/* Windows in a row that must fail before the size drops: about a second. */
#define BAD_WINDOWS 2
/* Frames at a size before its encode time says anything. */
#define SETTLE_FRAMES 8
/* A stream's first second (its encoder's threads starting, its first
 * keyframe, the link's estimates for its frames) says nothing of whether
 * it keeps the rate: on 16 cores a 1080p stream that then sent 60 a
 * second had sent 21 in its first, and dropped to half size for it. */
#define STARTUP_US 1000000
/* The first preset is chosen over at least this much of the stream. */
#define CHOOSING_US 500000
/* A larger size gets more threads where there are cores for them, and
 * its frames take less than in proportion: slices on more threads cost
 * more in all (measured on 16 cores: 1080p took 4.2 ms a frame on 15
 * threads where its half took 3.4 ms on 3; a quarter of the pixels on a
 * fifth of the threads predicts 2.7 ms). */
#define THREAD_LOSS 1.6
/* A frame may take this share of the interval to encode; past it, the app,
 * the capture and the send, which share the cores, make it miss. */
#define ENCODE_SHARE 0.75
/* A larger size is tried when its frames would take under this share. */
#define GROW_SHARE 0.5
#define RETRY_FIRST_US 2000000
#define RETRY_MOST_US 64000000
/* A larger size that kept the rate this long is proven. */
#define PROVEN_US 4000000
/* A drop for waiting pictures helped if the share that waits fell below
 * this part of what it was: a quarter of the pixels, or a faster preset
 * (a frame's cost by 1.3 to 1.5, and the waits with it where the encoder
 * made them). */
#define HELPED 0.6
#define HELPED_PRESET 0.8
#define HOLD_US 30000000
#define MAX_DIVISOR 4
/* Pictures are not made smaller than this (a quarter of 4K each way is
 * 960x540; 1080p stops at half). */
#define MIN_PIXELS (640 * 360)
/* What a frame costs at each preset, against ultrafast: measured with
 * libx264 on 2 threads, a glmark2 clip at 800x600 (4:4:4) and 1920x1080
 * (4:2:0), CPU time per frame: superfast 1.2-1.5, veryfast 1.6-2.0; taken
 * at the top, so a trial is seldom wrong. */
static const double preset_cost[FIT_PRESET_MOST + 1] = {1.0, 1.5, 2.1};

void fit_init(struct rc_fit *fit)
{
	*fit = (struct rc_fit){.divisor = 1, .retry_us = RETRY_FIRST_US};
}

void fit_tick(struct rc_fit *fit, bool busy, uint64_t now)
{
	if (fit->window_us == 0) {
		fit->window_us = fit->since_us = now;
	}
	fit->ticks++;
	fit->busy += busy;
}

void fit_idle(struct rc_fit *fit, uint64_t now)
{
	fit->window_us = now;
	fit->since_us = now;
	fit->ticks = fit->busy = 0;
	fit->bad = 0;
}

static const char *size_name(int divisor, char *buf, size_t size)
{
	if (divisor == 1) {
		return "full size";
	}
	snprintf(buf, size, "1/%d size", divisor);
	return buf;
}

/* A trial that failed: the next waits twice as long. */
static void back_off(struct rc_fit *fit)
{
	fit->retry_us = fit->retry_us * 2 < RETRY_MOST_US ? fit->retry_us * 2 : RETRY_MOST_US;
}

static void change_preset(struct rc_fit *fit, uint32_t window, int preset, uint64_t now,
	const char *why)
{
	log_info("window %u: video at %s%s", window, wire_preset_names[preset], why);
	fit->preset = preset;
	fit->noted = false;
	fit->changed_us = now;
	fit_idle(fit, now);
}

static void change(struct rc_fit *fit, uint32_t window, int divisor, uint64_t now, const char *verb,
	const char *why)
{
	char name[24]; /* "1/%d size" for any int */
	log_info("window %u: video %s %s%s%s", window, verb, size_name(divisor, name, sizeof(name)),
		divisor > 1 ? " each way" : "", why);
	fit->divisor = divisor;
	fit->preset_waited_before = 0; /* a preset's check is void at another size */
	fit->noted = false;
	fit->changed_us = now;
	fit_idle(fit, now); /* measured afresh at the new size */
}

bool fit_choose(struct rc_fit *fit, uint32_t window, const struct rc_fit_cost *cost, uint64_t now)
{
	if (fit->window_us == 0) {
		fit->window_us = now;
	}
	fit->divisor = fit->divisor < 1 ? 1 : fit->divisor;
	/* The interval that matters is the app's: a window drawn at 20 fps
	 * has 50 ms a frame, whatever its clock's rate. */
	double clock_fps = cost->fps > 0 ? cost->fps : 60;
	double fps = fit->app_fps > 0 && fit->app_fps < clock_fps ? fit->app_fps : clock_fps;
	double interval_us = 1e6 / fps;
	fit->preset = cost->presets ? fit->preset : 0;
	bool current = cost->divisor == fit->divisor && cost->preset == fit->preset;
	bool settled = current && cost->frames >= SETTLE_FRAMES;
	bool too_slow = settled && cost->encode_us > ENCODE_SHARE * interval_us;
	bool judged = false, keeps = false;
	uint32_t ticks = fit->ticks, busy = fit->busy;
	if (now - fit->window_us >= WINDOW_US) {
		double seconds = (double)(now - fit->window_us) / 1e6;
		bool started = fit->window_us >= fit->since_us + STARTUP_US;
		fit->app_fps = ticks / seconds;
		fit->window_us = now;
		fit->ticks = fit->busy = 0;
		/* Too few pictures to judge: the app is all but idle. */
		judged = started && ticks >= 4 && current;
		if (judged) {
			keeps = busy <= BUSY_SHARE * ticks;
			fit->bad = keeps ? 0 : fit->bad + 1;
		}
	}
	if (judged && fit->waited_before > 0 && now - fit->changed_us >= 2 * WINDOW_US) {
		/* The first whole window at the smaller size says whether
		 * it helped. */
		double waited = (double)busy / ticks;
		double before = fit->waited_before;
		fit->waited_before = 0;
		if (!too_slow && waited > BUSY_SHARE && waited >= HELPED * before) {
			char reason[160];
			snprintf(reason, sizeof(reason),
				": %.0f%% of pictures waited at the smaller size, %.0f%% at the "
				"larger; "
				"the link or the viewer sets the rate, not the size",
				waited * 100, before * 100);
			fit->hold_until_us = now + HOLD_US;
			fit->trial = false;
			change(fit, window, fit->divisor / 2, now, "back at", reason);
			return true;
		}
	}
	if (judged && fit->preset_waited_before > 0 && now - fit->changed_us >= 2 * WINDOW_US) {
		/* The same for a faster preset. */
		double waited = (double)busy / ticks;
		double before = fit->preset_waited_before;
		fit->preset_waited_before = 0;
		if (!too_slow && waited > BUSY_SHARE && waited >= HELPED_PRESET * before &&
			fit->preset < FIT_PRESET_MOST) {
			char reason[160];
			snprintf(reason, sizeof(reason),
				": %.0f%% of pictures waited at %s, %.0f%% at %s; the link or the "
				"viewer sets the rate, not the encoder",
				waited * 100, wire_preset_names[fit->preset], before * 100,
				wire_preset_names[fit->preset + 1]);
			fit->preset_hold_until_us = now + HOLD_US;
			fit->trial = false;
			change_preset(fit, window, fit->preset + 1, now, reason);
			return true;
		}
	}
	bool held = now < fit->hold_until_us;
	bool preset_held = now < fit->preset_hold_until_us;
	bool waits = fit->bad >= BAD_WINDOWS;
	if (too_slow || (waits && (!held || (fit->preset > 0 && !preset_held)))) {
		char why[112];
		if (too_slow) {
			snprintf(why, sizeof(why),
				"a %dx%d frame took %.1f ms to encode, %.1f ms allowed",
				cost->width / fit->divisor, cost->height / fit->divisor,
				(double)cost->encode_us / 1000, ENCODE_SHARE * interval_us / 1000);
		} else {
			snprintf(why, sizeof(why), "%u of %u pictures waited to be sent", busy,
				ticks);
		}
		fit->first_chosen = true; /* a step back ends the first choosing */
		if (fit->preset > 0 && (too_slow || !preset_held)) {
			/* A faster preset first, at the same size. */
			if (fit->trial) {
				back_off(fit);
			}
			fit->trial = false;
			fit->waited_before = 0;
			fit->preset_waited_before =
				too_slow ? 0 : (double)busy / (ticks ? ticks : 1);
			char reason[176];
			snprintf(reason, sizeof(reason), " to keep %.0f fps: %s", fps, why);
			change_preset(fit, window, fit->preset - 1, now, reason);
			return true;
		}
		int next = fit->divisor * 2;
		bool can_shrink = next <= MAX_DIVISOR &&
			(fit->divisor == 1 ||
				(int64_t)(cost->width / next) * (cost->height / next) >=
					MIN_PIXELS);
		if (cost->sharpness_first || !can_shrink) {
			if (!fit->noted) {
				log_info("window %u: video cannot keep %.0f fps at its size (%s); "
					 "%s",
					window, fps, why,
					cost->sharpness_first ? "sharpness first keeps its size"
							      : "it goes no smaller");
				fit->noted = true;
			}
			fit->slow = cost->sharpness_first;
			if (fit->slow) {
				snprintf(fit->why, sizeof(fit->why), "%s", why);
			}
			return false;
		}
		if (fit->trial) {
			/* The larger size was tried too soon: wait longer. */
			back_off(fit);
		}
		fit->trial = false;
		fit->waited_before = too_slow ? 0 : (double)busy / (ticks ? ticks : 1);
		snprintf(fit->why, sizeof(fit->why), "at %s %s",
			fit->divisor == 1 ? "full size" : "the larger size", why);
		char reason[176];
		snprintf(reason, sizeof(reason), " to keep %.0f fps: %s (frame rate first)", fps,
			why);
		change(fit, window, next, now, "at", reason);
		return true;
	}
	if (judged && keeps && !too_slow) {
		fit->slow = false;
		fit->noted = false;
	}
	/* The window's first stream: once its first frames have said what a
	 * frame takes at ultrafast, it goes at once to the slowest preset
	 * predicted to take under GROW_SHARE of the interval (a trial, as any
	 * step), not a step every few seconds: the picture is sharp within
	 * half a second of motion's start, not after 4 to 6. The first frames
	 * at the preset chosen say again what a frame takes, and where that
	 * leaves room for a slower one it goes on at once too: the table is
	 * taken at the top, and a preset's true cost is the picture's (at
	 * 800x600 on 2 shared cores superfast took 1.15 times ultrafast where
	 * the table says 1.5; a step to veryfast 3 s later was the picture's
	 * last change of more than 1 dB). The choosing lasts while a preset
	 * leaves room for a slower one, and at least CHOOSING_US: the first
	 * frames of a stream on shared cores are slow for reasons that pass
	 * (the viewer decoding its first pictures; at 800x600, 3.0 ms at
	 * ultrafast in one run, 4.3 in the next, which left no room). */
	/* What a frame would take at ultrafast, and so at any preset. */
	double ultrafast_us = (double)cost->encode_us / preset_cost[fit->preset];
	if (cost->presets && !fit->first_chosen && settled && !too_slow) {
		int best = fit->preset;
		while (best < FIT_PRESET_MOST &&
			ultrafast_us * preset_cost[best + 1] < GROW_SHARE * interval_us) {
			best++;
		}
		if (fit->choosing_us == 0) {
			fit->choosing_us = now;
		}
		fit->first_chosen = best == fit->preset && now - fit->choosing_us >= CHOOSING_US;
		if (best > fit->preset) {
			char reason[112];
			snprintf(reason, sizeof(reason),
				": its first frames took %.1f ms at %s, %.1f ms allowed",
				(double)cost->encode_us / 1000, wire_preset_names[fit->preset],
				interval_us / 1000);
			fit->trial = true;
			change_preset(fit, window, best, now, reason);
			return true;
		}
	}
	if (fit->trial && now - fit->changed_us >= PROVEN_US) {
		fit->trial = false;
		fit->retry_us = RETRY_FIRST_US;
	}
	/* A larger size, where this one keeps the rate and a frame of the
	 * larger one (four times the pixels, on the threads it would get)
	 * would take under half the interval. */
	int threads = cost->threads > 0 ? cost->threads : 1;
	int threads_larger = cost->threads_larger > threads ? cost->threads_larger : threads;
	double larger_us = ultrafast_us * 4 * threads / threads_larger *
		(threads_larger > threads ? THREAD_LOSS : 1.0);
	if (fit->divisor > 1 && judged && keeps && settled &&
		now - fit->changed_us >= fit->retry_us && larger_us < GROW_SHARE * interval_us) {
		char reason[112];
		snprintf(reason, sizeof(reason),
			": a frame would take about %.1f ms on %d threads, %.1f ms allowed",
			larger_us / 1000, threads_larger, interval_us / 1000);
		fit->trial = true;
		fit->preset = 0; /* a larger size starts fast */
		change(fit, window, fit->divisor / 2, now, "back at", reason);
		return true;
	}
	/* A slower preset, a sharper picture at the same bit rate, where the
	 * size keeps the rate and a frame at it would take under half the
	 * interval. */
	if (cost->presets && fit->preset < FIT_PRESET_MOST && judged && keeps && settled &&
		now - fit->changed_us >= fit->retry_us) {
		double next_us = ultrafast_us * preset_cost[fit->preset + 1];
		if (next_us < GROW_SHARE * interval_us) {
			char reason[112];
			snprintf(reason, sizeof(reason),
				": a frame would take about %.1f ms, %.1f ms allowed",
				next_us / 1000, interval_us / 1000);
			fit->trial = true;
			change_preset(fit, window, fit->preset + 1, now, reason);
			return true;
		}
	}
	return false;
}
