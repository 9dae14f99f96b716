/*
 * The viewers, as the session sees them: each one's hello and the snapshot
 * it gets, who has input, one handler for each kind of message they send,
 * and what a viewer's leaving undoes. Input flows from here down into the rooms; nothing below
 * calls back up.
 */
#ifndef RCOMP_DISPATCH_H
#define RCOMP_DISPATCH_H

#include "server.h"

/* A connection whose hello was read (and on TCP its token checked) takes
 * the session over, or joins the viewers there if its hello asks to share
 * or it may only watch (view_only: its token was the watch token). fd is
 * taken; peer names it in log lines ("" for a unix socket). replaces: a
 * viewer this one is, on another link (it proved that viewer's move key):
 * the old link goes, and the viewer stays what it was. */
void dispatch_attach(struct rc_server *server, int fd, const char *peer,
	const struct wire_hello *hello, bool view_only, struct rc_viewer *replaces);
/* The one viewer of an rcomp-run --stdio, on stdin and stdout. */
bool dispatch_attach_stdio(struct rc_server *server);

#endif
