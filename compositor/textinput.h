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
/* The local input method's change, for the app with focus in the window.
 * False where no text input of the app's is enabled there now (it was
 * disabled meanwhile, or never was). */
bool textinput_event(struct rc_server *server, const struct wire_text_input_event *msg);
/* Text committed to the text input the focused app has enabled, as if an
 * input method typed it (a character no key of the keymap types); false
 * where the app has none enabled. */
bool textinput_commit(struct rc_server *server, const char *text);
/* An input method's change that only commits a little text (an on-screen
 * keyboard's character, a browser's insertText, the end of a short
 * composition): the caller types it as characters, in order with the keys
 * around it, once this has cleared the composition's preedit in the app.
 * A text input's commit is not: foot drops a done whose serial is older
 * than its newest commit, which it makes as it moves its cursor for the
 * characters before, and the text is lost (a preedit is sent again with
 * the app's next commit, as it can be sent twice). */
#define TEXTINPUT_PLAIN_MAX 64
bool textinput_plain(struct rc_server *server, const struct wire_text_input_event *msg);

#endif
