/*
 * The attached viewer, as the session sees it: its hello and the snapshot
 * it gets, one handler for each kind of message it sends, and what its
 * leaving undoes. Input flows from here down into the rooms; nothing below
 * calls back up.
 */
#ifndef RCOMP_DISPATCH_H
#define RCOMP_DISPATCH_H

#include "server.h"

/* A connection whose hello was read (and on TCP its token checked) takes
 * the session over. fd is taken; peer names it in log lines ("" for a unix
 * socket). */
void dispatch_attach(struct rc_server *server, int fd, const char *peer,
	const struct wire_hello *hello);
/* The one viewer of an rcomp-run --stdio, on stdin and stdout. */
bool dispatch_attach_stdio(struct rc_server *server);

#endif
