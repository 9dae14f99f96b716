/*
 * The offer to a viewer over ssh (rcomp-run --offer-udp) to come over to
 * the session's UDP as itself: a key of its own, known to the QUIC door
 * until it leaves, told with the port and address once the app has
 * settled.
 */
#ifndef RCOMP_OFFER_H
#define RCOMP_OFFER_H

#include "server.h"

/* The viewer asked in its hello: it is told now, or once the app has run a
 * second. */
void offer_udp(struct rc_viewer *viewer);
/* The viewer leaves: its key no longer opens the door. */
void offer_forget(struct rc_viewer *viewer);

#endif
