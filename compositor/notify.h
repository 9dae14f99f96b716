/* Notifications from the session's apps to the viewers (notify.c). */
#ifndef RCOMP_NOTIFY_H
#define RCOMP_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

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
/* A viewer went: the questions it was asked wait for the next. */
void notify_viewer_gone(struct rc_viewer *viewer);
/* rcomp-run's own question about a group of files (files = ask) to viewer
 * to, as a notification with the actions yes (labelled yes) and no; the
 * answer goes to answer (by: the viewer's number). False where to cannot be
 * asked. */
typedef void notify_answer_fn(struct rc_server *server, uint32_t group, bool yes, uint32_t by);
bool notify_question(struct rc_server *server, struct rc_viewer *to, uint32_t group,
	const char *summary, const char *body, const char *yes, notify_answer_fn *answer);

#endif
