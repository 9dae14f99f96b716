/*
 * What rcomp-view keeps of the session's notifications (notify.h): types
 * only, for viewer.h.
 */
#ifndef RCOMP_NOTIFY_STATE_H
#define RCOMP_NOTIFY_STATE_H

#include <stdbool.h>
#include <stdint.h>

#define RV_NOTES 64 /* shown at once: the oldest's answers are forgotten past it */

struct DBusConnection;
struct rv_viewer;

struct rv_notify {
	struct DBusConnection *bus; /* NULL: not reached yet, or none */
	bool unreachable; /* no session bus here */
	bool said_no_bus; /* at the first notification, once */
	char why[160];
	bool said_no_daemon;
	int slot; /* the pending calls' data slot; -1: none */
	/* The session's id of each shown notification, and this desktop's;
	 * or rcomp-view's own question about a group of files (files = ask):
	 * its group + 1 (0: none). */
	struct {
		uint32_t remote, local, question;
		/* Or rcomp-view's word on a transfer under way: its tag + 1;
		 * local 0 until the daemon answers; closing: it ended before. */
		uint32_t transfer;
		bool closing;
	} map[RV_NOTES];
	int count;
	/* Where the answers to rcomp-view's own questions go (notify_question). */
	void (*answer)(struct rv_viewer *viewer, uint32_t group, bool yes);
	/* Where a transfer's Cancel, or its dismissal, goes (notify_transfer). */
	void (*transfer_event)(struct rv_viewer *viewer, uint32_t tag, bool cancel);
};

#endif
