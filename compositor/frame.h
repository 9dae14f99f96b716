/*
 * The frame path of one window, run by its clock: capture the damage,
 * encode it, queue it on the connection; then answer the app's frame
 * callbacks. Data moves one way, and nothing here reaches back up.
 */
#ifndef RCOMP_FRAME_H
#define RCOMP_FRAME_H

#include "clock.h"

/* A window's clock ticked (the tick function of its struct rc_clock). */
void frame_tick(struct rc_clock *clock);

#endif
