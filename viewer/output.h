/*
 * Local outputs, and which of them each window is on: the first one a
 * window entered gives its refresh and scale, which the server hears of
 * (output_info) to run the window's clock and pick its scale.
 */
#ifndef RCOMP_VIEWER_OUTPUT_H
#define RCOMP_VIEWER_OUTPUT_H

#include "viewer.h"

void output_add(struct rv_viewer *viewer, uint32_t name, uint32_t version);
void output_remove(struct rv_viewer *viewer, uint32_t name);
void output_destroy(struct rv_output *output);
/* The desktop's xdg-output: each output's name and logical place, which the
 * server hears of with the window's scale (output_place). */
void output_bind_places(struct rv_viewer *viewer, uint32_t name, uint32_t version);
void output_finish_places(struct rv_viewer *viewer);
/* The window's surface entered or left a local output. */
void output_window_enter(struct rv_window *window, struct wl_output *wl_output);
void output_window_leave(struct rv_window *window, struct wl_output *wl_output);
/* Tells the server the window's output, if that changed (or after
 * output_forget_reports, again). */
void output_report(struct rv_window *window);
void output_forget_reports(struct rv_window *window);

#endif
