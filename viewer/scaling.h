/*
 * Who scales a video picture sent smaller than its window: the desktop
 * (through the surface's viewport, no CPU of ours) or the viewer (in bands,
 * as it does where there is no viewport). The desktop does, until its frame
 * callbacks fall below the rate pictures arrive at (or its output's
 * refresh, if lower: a 120 fps stream on a 60 Hz output is no sign of a
 * slow desktop) for SLOW_WINDOWS seconds in a row while it scales: then the
 * viewer scales them itself. Its first second doing so says whether that
 * helped: if the callbacks did not come closer to the pictures' rate, the
 * desktop scales again, and for the rest of the stream it does. A new
 * stream starts with the desktop. Measured on a headless sway (pixman) at
 * 1280x720 with a 1080p game sent at half size: 44-45 fps shown through the
 * viewport, 46-56 scaled by the viewer.
 */
#ifndef RV_SCALING_H
#define RV_SCALING_H

#include <stdbool.h>
#include <stdint.h>

struct rv_scaling {
	bool self; /* the viewer scales */
	bool settled; /* tried, and the answer holds for the stream */
	uint64_t window_us; /* the measuring second began; 0: not yet */
	uint32_t pictures; /* decoded smaller than the window, this second */
	uint32_t callbacks; /* the desktop's frame callbacks, this second */
	int slow; /* seconds in a row the desktop fell behind while scaling */
	double share_before; /* callbacks per picture when the viewer took it */
	bool judging; /* the first second since the viewer took it */
};

void scaling_reset(struct rv_scaling *s);
/* A picture decoded; smaller: sent smaller than its window. */
void scaling_picture(struct rv_scaling *s, bool smaller, uint64_t now);
void scaling_callback(struct rv_scaling *s);
/* Once a second or more: may change s->self (and logs why). refresh_mhz:
 * the output's, 0 if not known. */
bool scaling_judge(struct rv_scaling *s, uint32_t window, uint32_t refresh_mhz, uint64_t now);

#endif
