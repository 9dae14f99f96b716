/*
 * Headless outputs, one per scale in use, and one per output of the input
 * viewer's desktop that it names (output_place, at most
 * RC_MAX_NAMED_OUTPUTS). They are never rendered to; they exist so that each
 * window's surfaces enter an output with the scale of the local output the
 * viewer shows it on, and the app renders at it, and so that apps asking
 * xdg-output (Xwayland, SDL, toolkits) see that output's name and logical
 * place and size.
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
/* The output the window is on (its surfaces entered it); NULL: none yet. */
struct wlr_output *output_of_window(struct rc_window *window);
void output_window_leave(struct rc_window *window);
/* The window is on this viewer output (output_place): it goes onto an output
 * of that name, place and logical size, which xdg-output tells apps. */
void output_window_place(struct rc_window *window, const struct rc_place *place);

#endif
