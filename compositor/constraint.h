/*
 * What a game asks of the desktop, mirrored on the viewer's compositor.
 * Pointer constraints (pointer-constraints-unstable-v1): an app locks or
 * confines the pointer over its window; the viewer asks its own compositor
 * for the same on the local window and says when it holds, and only then
 * is the app told its constraint is active. Shortcut inhibition
 * (keyboard-shortcuts-inhibit-unstable-v1) goes the same way.
 */
#ifndef RCOMP_CONSTRAINT_H
#define RCOMP_CONSTRAINT_H

#include "server.h"

void constraint_init(struct rc_server *server);
/* Tells the viewer that takes input of every constraint, after the
 * windows. */
void constraint_announce_all(struct rc_server *server);
/* Tells the viewer that gives up input to lift them all. */
void constraint_withdraw_all(struct rc_server *server);
/* Whether the surface with the pointer holds an active lock: the pointer
 * then stays where the lock began, and the app hears relative motion only
 * (pointer-constraints). */
bool constraint_pointer_locked(struct rc_server *server);
/* The viewer applied or lifted a window's constraint locally. */
void constraint_state(struct rc_server *server, const struct wire_pointer_constraint_state *msg);
/* The local compositor now inhibits its shortcuts for a window, or not. */
void constraint_inhibit_state(struct rc_server *server,
	const struct wire_shortcuts_inhibit_state *msg);

#endif
