/* Input methods: the remote app's text input on the local one (textinput.c). */
#ifndef RCOMP_VIEWER_TEXTINPUT_H
#define RCOMP_VIEWER_TEXTINPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "textinput-state.h"

struct rv_viewer;
struct rv_window;
struct wire_text_input;
struct wl_registry;

void textinput_bind(struct rv_viewer *viewer, struct wl_registry *registry, uint32_t name);
/* Once the seat is known: the local text input. */
void textinput_seat(struct rv_viewer *viewer);
/* The server says what the app in window now takes. */
void textinput_state(struct rv_window *window, const struct wire_text_input *msg);
void textinput_window_gone(struct rv_window *window);
/* A new link: what the apps took is told again in its snapshot. */
void textinput_link_down(struct rv_viewer *viewer);
void textinput_finish(struct rv_viewer *viewer);

#endif
