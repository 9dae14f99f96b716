/*
 * The viewers, as the session sees them: each one's hello and the snapshot
 * it gets, who has input, one handler for each kind of message they send,
 * and what a viewer's leaving undoes. Input flows from here down into the rooms; nothing below
 * calls back up.
 */
#ifndef RCOMP_DISPATCH_H
#define RCOMP_DISPATCH_H

#include "server.h"

/* A connection whose hello was read and checked (handshake.c) becomes a
 * viewer, is welcomed and told the state of things: read on fd, written on
 * out_fd (both taken). view_only: it may only watch; takes_input: it gets
 * input now; number: the number it keeps from another link (0: a new
 * one). The viewer; NULL (the fds closed) when out of memory. */
struct rc_viewer *dispatch_attach(struct rc_server *server, int fd, int out_fd,
	const struct wire_hello *hello, bool view_only, bool takes_input, uint32_t number);

#endif
