/*
 * The size a window's video goes at to keep its app's frame rate. Chosen
 * on the event loop from what the window achieves: of the ticks at which
 * the app had drawn a new picture, the share that found the encoder still
 * busy with the last one or the link full (its frame then waited, merged
 * into the next), measured over half-second windows; and from what a frame
 * takes to encode, against the interval of the app's own rate (its new
 * pictures a second; a picture that waits through several ticks counts
 * once, or a slow encode would make the app seem faster). Frame rate
 * first (the default), a window that does not keep its rate goes at half
 * its size each way, a quarter of the pixels, and down again where the
 * picture stays large; it tries a larger size again once the smaller one
 * keeps the rate and the larger one's cost would fit (on the threads it
 * would get: on many cores a larger picture gets more). A stream's first
 * second is not judged. A try that fails
 * goes back and doubles the wait before the next (2 s, 4 s, ... 64 s), so
 * a window does not flap between sizes. Pictures also wait for a full
 * link (frames in flight wait for the viewer's acks, which come at its
 * desktop's pace): where that is the CPU (the viewer's, its desktop's, or
 * cores the app shares) a smaller picture helps, where it is the link or
 * a slow local display it does not. So a drop made for pictures that
 * waited is checked: if as many still wait at the smaller size, the window
 * goes back and makes no such drop for HOLD (the encode time still counts).
 * Sharpness first, it keeps its size and says it is too slow.
 *
 * The cores left over go to the picture: at the size it keeps, a stream
 * whose frames would still take under GROW_SHARE of the interval at
 * libx264's next slower preset (superfast, then veryfast: measured on a
 * game clip, +4 to +5 dB PSNR-Y at the same bit rate for 1.2 to 2 times
 * the CPU) moves to it, as a trial with the same waits as a larger size;
 * one that misses its rate steps back to a faster preset before it goes
 * smaller, and a larger size starts again at ultrafast. A faster preset
 * taken for pictures that waited is checked as a smaller size is: where
 * the link makes them wait, a faster preset needs more of it for the same
 * picture, not less (on a 3 Mbit/s link a stream probing past the link's
 * rate had 5 of 30 pictures wait, and stepped from veryfast to ultrafast,
 * 41 dB to 35), so if as many still wait it goes back and takes no
 * faster preset for waits for HOLD (a smaller size may still help). The window's first
 * stream goes, as soon as its first frames are measured, straight to the
 * slowest preset predicted to fit, a trial like any step. Hardware
 * encoders have no presets.
 */
#ifndef RCOMP_FIT_H
#define RCOMP_FIT_H

#include <stdbool.h>
#include <stdint.h>

struct rc_fit {
	int divisor; /* the picture is the window's divided by this each way: 1, 2, 4 */
	int preset; /* libx264's, enum wire_preset: ultrafast to FIT_PRESET_MOST */
	bool slow; /* sharpness first, and its size does not keep the rate */
	char why[160]; /* why it is at its size, for --stats */
	/* The measuring window. */
	uint64_t window_us;
	uint64_t since_us; /* the counts began (the stream at this size, or its run of motion) */
	uint32_t ticks, busy; /* with a new picture; of them, found the encoder busy */
	int bad; /* windows in a row that did not keep the rate */
	double app_fps; /* pictures to send a second, in the last window */
	uint64_t changed_us; /* the divisor changed */
	uint64_t retry_us; /* wait before trying a larger size again */
	bool trial; /* larger than the last size that failed, and not yet proven */
	bool noted; /* that it cannot keep the rate at its size was logged */
	double waited_before; /* share of pictures that waited before a drop for them; 0: none */
	uint64_t hold_until_us; /* no drop for waiting pictures before this */
	/* The same for a faster preset taken for waiting pictures. */
	double preset_waited_before;
	uint64_t preset_hold_until_us;
	bool first_chosen; /* the first stream's preset was chosen from its first frames */
	uint64_t choosing_us; /* the preset's first choosing began; 0: not yet */
};

/* What the encoder says of its stream at this size. */
struct rc_fit_cost {
	int32_t width, height; /* the window's */
	int fps; /* its frame clock's */
	int divisor; /* the stream's now (it may not have taken the fit's yet) */
	int preset; /* the stream's now */
	bool presets; /* its encoder takes presets (libx264; not hardware) */
	uint64_t encode_us; /* a frame's, smoothed; 0: none yet */
	uint32_t frames; /* encoded at this divisor */
	int threads; /* the stream's encoder's */
	int threads_larger; /* what a stream at the next larger size would take */
	bool sharpness_first;
};

/* The slowest preset chosen: veryfast (past it, x264's presets cost more
 * and more for less). */
#define FIT_PRESET_MOST 2

void fit_init(struct rc_fit *fit);
/* A tick had a new picture to send; busy: the encoder was at work on the
 * last, or the link was full. */
void fit_tick(struct rc_fit *fit, bool busy, uint64_t now);
/* The window left video: its counts start afresh (its size stays). */
void fit_idle(struct rc_fit *fit, uint64_t now);
/* Before each frame: may change fit->divisor or fit->preset (then logs
 * it, and returns true: the stream starts again at the new size or
 * preset). */
bool fit_choose(struct rc_fit *fit, uint32_t window, const struct rc_fit_cost *cost, uint64_t now);

#endif
