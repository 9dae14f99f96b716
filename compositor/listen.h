/*
 * Where viewers connect: the session's unix socket, TCP with a token, and
 * the connections still in their handshake (at most 16, each for at most
 * 10 s), which never disturb the attached viewer.
 */
#ifndef RCOMP_LISTEN_H
#define RCOMP_LISTEN_H

#include "server.h"

void listen_init(struct rc_server *server);
/* Binds the socket (and TCP, writing or reading the token). */
bool listen_start(struct rc_server *server);
void listen_finish(struct rc_server *server);
/* Tells those that asked the session to end (rcomp-run --stop) that it
 * has: the last thing it does. */
void listen_tell_stoppers(struct rc_server *server);
/* Tells every viewer still on its way in why the session ends, as the
 * attached ones are told: one moving over to UDP (its hello not yet
 * taken) would else find its new link closed with no word, and its old
 * one given up. */
void listen_say_goodbye(struct rc_server *server, enum wire_goodbye_reason reason, int32_t status,
	const char *text);

#endif
