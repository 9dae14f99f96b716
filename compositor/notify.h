/* Notifications from the session's apps to the viewers (notify.c). */
#ifndef RCOMP_NOTIFY_H
#define RCOMP_NOTIFY_H

#include <stdbool.h>

#include "wire.h"

struct rc_server;
struct rc_viewer;

/* Serves org.freedesktop.Notifications on the session's bus. False after a
 * warning (no bus, the name taken): the session goes on without. */
bool notify_start(struct rc_server *server);
void notify_stop(struct rc_server *server);
/* A viewer's word on a notification it shows: an action, or its close. */
void notify_reply(struct rc_viewer *viewer, const struct wire_notify_reply *msg);
/* A viewer just welcomed is shown the notifications still open. */
void notify_viewer_welcomed(struct rc_viewer *viewer);

#endif
