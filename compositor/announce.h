/*
 * Announcements: the messages that tell the viewer about windows (new,
 * gone, title, parent, scale, states, size hints, decorations). Each is
 * sent only to a viewer that has been told of the window.
 */
#ifndef RCOMP_ANNOUNCE_H
#define RCOMP_ANNOUNCE_H

#include "server.h"

/* window_new (or popup_new) and what follows it, to the view's viewer; the
 * view is announced. False while the viewer is not welcomed, or for a
 * popup whose parent it was not shown. */
bool announce_window(struct rc_window *window, struct rc_view *view);
void announce_destroy(struct rc_window *window);
void announce_title(struct rc_window *window);
void announce_app_id(struct rc_window *window);
void announce_parent(struct rc_window *window);
void announce_scale(struct rc_window *window);
void announce_request(struct rc_window *window, enum wire_request request);
/* The app asked to be moved, resized or to show its window menu for the
 * press with serial: the viewer asks its compositor, with the local press. */
void announce_grab(struct rc_window *window, enum wire_grab kind, uint32_t serial, uint32_t edges,
	int32_t x, int32_t y);
/* The size hints, if they changed since last sent. */
void announce_hints(struct rc_window *window);
void announce_decoration(struct rc_window *window);
/* window_idle_inhibit (window->idle_inhibited) and window_activate, to the
 * viewers of minor 9 or later. */
void announce_idle(struct rc_window *window);
/* Whether the window's app asks for presentation feedback (feedback.c),
 * to every viewer of minor 11 or later: they tell when its frames are
 * shown only while it does. */
void announce_feedback(struct rc_window *window);
void announce_activate(struct rc_window *window);

#endif
