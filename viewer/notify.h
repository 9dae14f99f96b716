/* The session's notifications on this desktop's daemon (notify.c). */
#ifndef RCOMP_VIEWER_NOTIFY_H
#define RCOMP_VIEWER_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

struct pollfd;
struct rv_viewer;

void notify_init(struct rv_viewer *viewer);
void notify_finish(struct rv_viewer *viewer);
void notify_show(struct rv_viewer *viewer, const struct wire_notify *msg);
void notify_close(struct rv_viewer *viewer, const struct wire_notify_close *msg);
/* rcomp-view's own news (a file saved), as a notification of "rcomp". */
void notify_local(struct rv_viewer *viewer, const char *summary, const char *body);
/* A question about a group of files (files = ask), its actions yes (labelled
 * yes) and no; the answer goes to answer (a dismissal is a no). False where
 * it cannot be asked (no notification daemon here). */
typedef void notify_answer_fn(struct rv_viewer *viewer, uint32_t group, bool yes);
bool notify_question(struct rv_viewer *viewer, uint32_t group, const char *summary,
	const char *body, const char *yes, notify_answer_fn *answer);
/* rcomp-view's own word on a transfer under way (tag: the caller's), one
 * notification a tag, replaced in place by each call, with an action
 * "Cancel": that action (cancel) and a dismissal (not) go to event. False
 * where it is not shown (notifications off, no daemon, the last call's
 * not answered yet). */
typedef void notify_transfer_fn(struct rv_viewer *viewer, uint32_t tag, bool cancel);
bool notify_transfer(struct rv_viewer *viewer, uint32_t tag, const char *summary, const char *body,
	notify_transfer_fn *event);
/* The transfer ended: its notification goes. */
void notify_transfer_end(struct rv_viewer *viewer, uint32_t tag);
void notify_poll_fd(struct rv_viewer *viewer, struct pollfd *pfd);
void notify_handle_poll(struct rv_viewer *viewer, const struct pollfd *pfd);

#endif
