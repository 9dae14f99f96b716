/*
 * The offer to a viewer over ssh (rcomp-run --offer-udp) to come over to
 * the session's UDP as itself: a key of its own, known to the QUIC door
 * until it leaves (dispatch.c forgets it then), told with the port and
 * address once the app has settled.
 */
#ifndef RCOMP_OFFER_H
#define RCOMP_OFFER_H

#include "server.h"

/* The viewer asked in its hello: it is told now, or once the app has run a
 * second. */
void offer_udp(struct rc_viewer *viewer);

#endif
