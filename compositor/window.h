/*
 * Windows: their lifecycle, whichever shell made them (xdg.c and xwayland.c
 * call in here, and implement struct rc_window_impl), what the viewer asks
 * of them, and their damage and scale.
 */
#ifndef RCOMP_WINDOW_H
#define RCOMP_WINDOW_H

#include "server.h"

/* A new window of a shell, embedded in the shell's own struct: gets its id
 * and joins the server's windows. False when out of memory. */
bool window_init(struct rc_window *window, struct rc_server *server,
	const struct rc_window_impl *impl);
/* The shell's object is gone: the window leaves everything. */
void window_finish(struct rc_window *window);

/* Where surface's top-left corner is in window coordinates (the window's
 * geometry taken out); false if it is not in the window's drawn tree. */
bool window_surface_at(struct rc_window *window, struct wlr_surface *surface, int *x, int *y);

void window_map(struct rc_window *window);
/* Its title changed: the viewers are told, and the session's record. */
void window_titled(struct rc_window *window);
void window_unmap(struct rc_window *window);
/* Shows the window to one viewer (a snapshot): it is announced, and that
 * viewer's next frame of it is whole. */
void window_announce(struct rc_window *window, struct rc_viewer *viewer);
/* Shows the window to every viewer that does not know it yet (a map). */
void window_announce_all(struct rc_window *window);

/* Everything must be captured again: a change without fine damage. */
void window_damage_all(struct rc_window *window);
/* The input viewer's output under the window: its refresh runs the window's clock
 * (unless --fps), its scale is the scale the app renders at. */
void window_set_output(struct rc_window *window, uint32_t refresh_mhz, int32_t scale);

/* What the local compositor decided, through the viewer. */
void window_configure(struct rc_window *window, int32_t width, int32_t height, uint32_t states);
void window_set_activated(struct rc_window *window, bool activated);
/* Keyboard focus: this window is the active one (a popup's parent stays so). */
void window_focus(struct rc_window *window);
void window_close(struct rc_window *window);
void window_dismiss(struct rc_window *window);

#endif
