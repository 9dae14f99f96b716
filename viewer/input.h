/* The local seat's input, forwarded to the server (see input.c). */
#ifndef RCOMP_VIEWER_INPUT_H
#define RCOMP_VIEWER_INPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-client.h>

#include "input-state.h"

struct rv_viewer;
struct rv_window;

void input_seat_init(struct rv_viewer *viewer, struct wl_seat *seat, uint32_t version);
void input_finish(struct rv_viewer *viewer);
/* The window goes: it has no focus any more. */
void input_window_gone(struct rv_viewer *viewer, struct rv_window *window);
/* What the server must know of the local keyboard, on a new link. */
void input_send_state(struct rv_viewer *viewer);
/* Asks for relative motion once there is a pointer and the manager. */
void input_relative_pointer(struct rv_viewer *viewer);
/* When input_mark mark was sent (monotonic us), 0 if it is too old. */
uint64_t input_mark_sent(struct rv_viewer *viewer, uint32_t mark);
/* The local serial of the press marked mark, 0 if it is no longer kept. */
uint32_t input_mark_serial(struct rv_viewer *viewer, uint32_t mark);

#endif
