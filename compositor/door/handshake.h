/*
 * Getting in: every connection a door hands over (the session's unix
 * socket, TCP, QUIC, a browser's WebSocket, or stdin and stdout) waits here
 * until its hello is read and checked; then it is the session's viewer.
 * At most 16 wait at once on each of the unix socket and the network, each
 * for at most 10 s, and they never disturb the attached viewers. The
 * session's tokens are made and written here.
 */
#ifndef RCOMP_HANDSHAKE_H
#define RCOMP_HANDSHAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "door-state.h"
#include "wire.h"

struct rc_server;

void handshake_init(struct rc_server *server);
/* Closes every connection still waiting. */
void handshake_finish(struct rc_server *server);

/* The session's token (a new one, or --token-file's) and --watch-token's,
 * in memory, for the doors that open; written to the session's directory
 * once they are open. */
bool handshake_make_tokens(struct rc_server *server);
bool handshake_write_tokens(struct rc_server *server);
/* --offer-udp: a fresh token that is written nowhere. */
bool handshake_offer_token(struct rc_server *server);

/* A new connection, read on fd and written on out_fd (the same but for
 * stdio), waits for its hello. tcp: from the network (TCP, UDP or a
 * browser), so its hello must carry the token; keyed: its QUIC handshake
 * proved the session's key; move_slot: the viewer slot whose move key it
 * proved (-1: none); host: its address, peer: how the log names it. */
void handshake_start(struct rc_server *server, int fd, int out_fd, bool tcp, bool keyed,
	int move_slot, const char *host, const char *peer);

/* Tells those that asked the session to end (rcomp-run --stop) that it
 * has, in text (what ending it took): the last thing it does. */
void handshake_tell_stoppers(struct rc_server *server, const char *text);
/* Tells every viewer still on its way in why the session ends, as the
 * attached ones are told: one moving over to UDP (its hello not yet
 * taken) would else find its new link closed with no word, and its old
 * one given up. */
void handshake_say_goodbye(struct rc_server *server, enum wire_goodbye_reason reason,
	int32_t status, const char *text);

#endif
