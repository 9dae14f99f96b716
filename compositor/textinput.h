/* Input methods: apps' text-input-v3, mirrored by the viewer (textinput.c). */
#ifndef RCOMP_TEXTINPUT_H
#define RCOMP_TEXTINPUT_H

#include "server.h"

bool textinput_init(struct rc_server *server);
void textinput_finish(struct rc_server *server);
/* The viewer that takes input learns of the enabled text inputs. */
void textinput_announce_all(struct rc_server *server);
/* The viewer that gives up input hears they are all disabled. */
void textinput_withdraw_all(struct rc_server *server);
/* The local input method's change, for the app with focus in the window. */
void textinput_event(struct rc_server *server, const struct wire_text_input_event *msg);

#endif
