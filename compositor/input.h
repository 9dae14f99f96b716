/*
 * The seat: keys, pointer and touch from the viewer, delivered to the app's
 * surfaces through a headless keyboard and wlroots' seat. Windows come
 * resolved from their ids; an event for a window that is gone never gets
 * here.
 */
#ifndef RCOMP_INPUT_H
#define RCOMP_INPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "input-state.h"
#include "wire.h"

struct rc_server;
struct rc_window;
struct xkb_keymap;

bool input_init(struct rc_server *server);
void input_finish(struct rc_server *server);

/* A viewer's keymap, compiled (NULL, logged: it does not compile); the
 * caller holds the reference. */
struct xkb_keymap *input_compile_keymap(struct rc_server *server, const struct wire_keymap *msg);
/* The seat's keyboard takes the keymap of the viewer with input. */
void input_set_keymap(struct rc_server *server, struct xkb_keymap *keymap);
void input_repeat_info(struct rc_server *server, const struct wire_repeat_info *msg);
void input_keyboard_enter(struct rc_server *server, struct rc_window *window,
	const struct wire_keyboard_enter *msg);
void input_keyboard_leave(struct rc_server *server, struct rc_window *window);
void input_key(struct rc_server *server, const struct wire_key *msg);
void input_modifiers(struct rc_server *server, const struct wire_modifiers *msg);

void input_relative_motion(struct rc_server *server, const struct wire_relative_motion *msg);
void input_pointer_motion(struct rc_server *server, struct rc_window *window,
	const struct wire_pointer_motion *msg);
void input_pointer_leave(struct rc_server *server, const struct wire_pointer_leave *msg);
void input_pointer_button(struct rc_server *server, const struct wire_pointer_button *msg);
void input_pointer_axis(struct rc_server *server, const struct wire_pointer_axis *msg);
void input_pointer_frame(struct rc_server *server);
/* A touchpad's gesture, to the app under the pointer. */
void input_gesture(struct rc_server *server, const struct wire_gesture *msg);

void input_touch_down(struct rc_server *server, struct rc_window *window,
	const struct wire_touch_down *msg);
void input_touch_up(struct rc_server *server, const struct wire_touch_up *msg);
void input_touch_motion(struct rc_server *server, const struct wire_touch_motion *msg);
void input_touch_frame(struct rc_server *server);
void input_touch_cancel(struct rc_server *server);

/* The viewer's input_mark for window: it names the press just sent. */
void input_mark(struct rc_server *server, uint32_t mark);
/* The viewer's mark of the press the seat gave serial, false if that was
 * no recent press. */
bool input_press_mark(struct rc_server *server, uint32_t serial, uint32_t *mark);
/* The local desktop takes the pointer (or the touch) of the press with
 * serial, for a move or resize: the app's implicit grab ends as it does
 * under a desktop, with a leave (a cancel) and no release. */
void input_press_taken(struct rc_server *server, uint32_t serial);
/* The pointer's buttons go up with the app hearing only a leave. */
void input_release_unheard(struct rc_server *server);

/* The viewer left: no key, button or finger stays down. */
void input_viewer_gone(struct rc_server *server);
/* The window unmapped or went: its grabs and touch points end. */
void input_window_gone(struct rc_server *server, struct rc_window *window);

#endif
