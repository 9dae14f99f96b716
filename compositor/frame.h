/*
 * The frame path of one window, run by its clock: capture the damage, hand
 * it to an encoder's worker, queue what comes back on the connection; then
 * answer the app's frame callbacks. Data moves one way, and nothing here reaches back up.
 */
#ifndef RCOMP_FRAME_H
#define RCOMP_FRAME_H

#include "clock.h"

struct rc_encoder;

/* A window's clock ticked (the tick function of its struct rc_clock). */
void frame_tick(struct rc_clock *clock);
/* A window's frame was encoded (the encoded function of its encoder): it
 * joins the connection's queue. */
void frame_encoded(struct rc_encoder *enc);

#endif
