/*
 * Headless outputs, one per scale in use. They are never rendered to; they
 * exist so that each window's surfaces enter an output with the scale of
 * the local output the viewer shows it on, and the app renders at it.
 */
#ifndef RCOMP_OUTPUT_H
#define RCOMP_OUTPUT_H

#include "server.h"

/* The scale-1 output, so that apps see a monitor. */
bool output_init(struct rc_server *server);
void output_finish(struct rc_server *server);
/* Whether windows can be at scale (its output exists or can be made). */
bool output_window_can_enter(struct rc_server *server, int32_t scale);
/* Says every surface of the window is on the output of its scale, or no
 * longer is. */
void output_window_enter(struct rc_window *window);
void output_window_leave(struct rc_window *window);

#endif
