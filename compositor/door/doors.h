/*
 * Where viewers connect: the session's unix socket; with --listen-tcp,
 * --listen-udp and --listen-web, TCP, QUIC and the browsers' door, all
 * with the session's token; with --stdio, stdin and stdout (one viewer,
 * over ssh); with --offer-udp, a QUIC door for viewers over ssh to come
 * over to. Each connection goes to the handshake (handshake.h).
 */
#ifndef RCOMP_DOORS_H
#define RCOMP_DOORS_H

#include <stdbool.h>

#include "door-state.h"

struct rc_server;

void doors_init(struct rc_server *server);
/* Opens the doors the options ask for (making the tokens, and writing them
 * once every port is open); false, said, if one cannot open. */
bool doors_start(struct rc_server *server);
/* Closes them and every connection still in its handshake. */
void doors_finish(struct rc_server *server);

#endif
