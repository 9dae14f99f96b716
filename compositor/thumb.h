/* A small picture of the session for lists of sessions (thumb.c). */
#ifndef RCOMP_THUMB_H
#define RCOMP_THUMB_H

#include <stdbool.h>

struct rc_server;

bool thumb_init(struct rc_server *server);
void thumb_finish(struct rc_server *server);
/* A window's picture changed (captured for a viewer): the session's is
 * written again a few seconds from now. */
void thumb_changed(struct rc_server *server);

#endif
