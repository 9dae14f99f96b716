/* Unit tests of who scales a smaller video picture (viewer/scaling.c), in
 * simulated time: pictures arrive at the stream's rate, and the desktop's
 * frame callbacks come at what a model of it shows, which depends on who
 * scales. */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "scaling.h"

struct desk {
	struct rv_scaling s;
	uint64_t now;
	int fps; /* pictures a second, each smaller than the window */
	/* What the desktop shows a second: while it scales, and while the
	 * viewer does (the refresh bounds both). */
	int shown_desktop, shown_viewer;
	uint32_t refresh_mhz;
	int changes;
};

static void desk_init(struct desk *d, int fps, int shown_desktop, int shown_viewer,
	uint32_t refresh_mhz)
{
	*d = (struct desk){.now = 1000000,
		.fps = fps,
		.shown_desktop = shown_desktop,
		.shown_viewer = shown_viewer,
		.refresh_mhz = refresh_mhz};
	scaling_reset(&d->s);
}

static void desk_run(struct desk *d, int ms)
{
	uint64_t end = d->now + (uint64_t)ms * 1000, step = 1000000 / (uint64_t)d->fps;
	double owed = 0;
	while (d->now < end) {
		scaling_picture(&d->s, true, d->now);
		if (scaling_judge(&d->s, 1, d->refresh_mhz, d->now)) {
			d->changes++;
		}
		/* A callback for each picture the desktop shows. */
		owed += (double)(d->s.self ? d->shown_viewer : d->shown_desktop) / d->fps;
		while (owed >= 1) {
			scaling_callback(&d->s);
			owed -= 1;
		}
		d->now += step;
	}
}

/* A desktop that shows 44 of 60 pictures while it scales them hands the
 * scaling to the viewer within three seconds; at 56 then, it stays so. */
static void test_slow_desktop(void)
{
	struct desk d;
	desk_init(&d, 60, 44, 56, 60000);
	desk_run(&d, 3100);
	printf("44 of 60 shown: %s scales\n", d.s.self ? "the viewer" : "the desktop");
	CHECK(d.s.self);
	desk_run(&d, 20000);
	CHECK(d.s.self && d.changes == 1);
}

/* Where the viewer's scaling does not help (the desktop is slow anyway),
 * the desktop scales again and keeps it for the stream; a new stream tries
 * again. */
static void test_no_help(void)
{
	struct desk d;
	desk_init(&d, 60, 44, 44, 60000);
	desk_run(&d, 6000);
	printf("no help: %d changes, %s scales\n", d.changes,
		d.s.self ? "the viewer" : "the desktop");
	CHECK(!d.s.self && d.changes == 2);
	desk_run(&d, 30000);
	CHECK(!d.s.self && d.changes == 2);
	scaling_reset(&d.s);
	desk_run(&d, 2500);
	CHECK(d.s.self);
}

/* A desktop that keeps up keeps the scaling, and one that shows its
 * refresh (60 of a 120 fps stream on a 60 Hz output) is not slow. */
static void test_keeps_up(void)
{
	struct desk d;
	desk_init(&d, 60, 59, 60, 60000);
	desk_run(&d, 20000);
	CHECK(!d.s.self && d.changes == 0);
	desk_init(&d, 120, 60, 60, 60000);
	desk_run(&d, 20000);
	CHECK(!d.s.self && d.changes == 0);
	/* The same with the refresh not known is taken as slow. */
	desk_init(&d, 120, 60, 60, 0);
	desk_run(&d, 2500);
	CHECK(d.s.self);
}

/* A few pictures a second say nothing of the desktop. */
static void test_few_pictures(void)
{
	struct desk d;
	desk_init(&d, 5, 2, 5, 60000);
	desk_run(&d, 20000);
	CHECK(!d.s.self && d.changes == 0);
}

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		{"slow_desktop", test_slow_desktop},
		{"no_help", test_no_help},
		{"keeps_up", test_keeps_up},
		{"few_pictures", test_few_pictures},
	};
	return check_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
