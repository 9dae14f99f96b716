/*
 * The session's viewers as data: a slot for each, and each window's view
 * for each (its damage, encoder and what it was told). What a viewer may
 * do, and its messages, are dispatch.c's.
 */
#ifndef RCOMP_VIEWERS_H
#define RCOMP_VIEWERS_H

#include "server.h"

/* A new viewer in a free slot, joined to the list (its conn is the
 * caller's to set); NULL if the session has RC_MAX_VIEWERS or no memory. */
struct rc_viewer *viewer_new(struct rc_server *server, bool view_only);
/* The viewer is gone: its views go, and with them its encoders (a job
 * running for one is waited for). */
void viewer_free(struct rc_viewer *viewer);

/* The view of window for viewer, made on first use (not yet announced,
 * its encoder calling encoded with each frame made); NULL when out of
 * memory. */
struct rc_view *view_get(struct rc_window *window, struct rc_viewer *viewer,
	void (*encoded)(struct rc_encoder *enc));
/* The window is gone: all of its views go. */
void views_free(struct rc_window *window);

#endif
