/* Characters typed as characters: key_char on the session's keymap (keychar.c). */
#ifndef RCOMP_KEYCHAR_H
#define RCOMP_KEYCHAR_H

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

struct rc_server;
struct xkb_keymap;

/* The seat's keyboard takes the keymap of the viewer with input (its spare
 * keys found, none given a character yet). */
void keychar_set_keymap(struct rc_server *server, struct xkb_keymap *keymap);
void keychar_finish(struct rc_server *server);
/* A key that typed a character, pressed or released; false where no key of
 * the keymap types the character: the caller gives it to keychar_spare, or
 * else to the app's text input. */
bool keychar_key(struct rc_server *server, const struct wire_key_char *msg);
/* The character pressed on a spare key, given it in a new keymap; false
 * where no spare key can take it. */
bool keychar_spare(struct rc_server *server, const struct wire_key_char *msg);
/* A character as UTF-8, in out. */
const char *keychar_utf8(uint32_t codepoint, char out[5]);
/* The viewer's own modifiers back, where a held character's are set (a
 * physical key comes). */
void keychar_restore(struct rc_server *server);
/* The viewer's input ended: every character's key goes up, and the
 * modifiers are the viewer's to say. */
void keychar_release_all(struct rc_server *server);

#endif
