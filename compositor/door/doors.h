/*
 * Where viewers connect: the session's unix socket; with --listen-tcp,
 * --listen-udp and --listen-web, TCP, QUIC and the browsers' door, all
 * with the session's token; with --stdio, stdin and stdout (one viewer,
 * over ssh); with --offer-udp, a QUIC door for viewers over ssh to come
 * over to. Each connection goes to the handshake (handshake.h).
 */
#ifndef RCOMP_DOORS_H
#define RCOMP_DOORS_H

#include <stdbool.h>

#include "wire.h"

struct quic_endpoint;
struct rc_server;
struct web;
struct wl_event_source;

/* The doors (door/doors.c). */
struct rc_doors {
	int fd, tcp_fd;
	struct quic_endpoint *quic; /* --listen-udp or --offer-udp */
	struct wl_event_source *udp_source;
	struct web *web; /* --listen-web */
	struct wl_event_source *web_source;
	char *path; /* the unix socket we bound */
	struct wl_event_source *source, *tcp_source;
	/* --offer-udp: where viewers that ask are told to come ("": the host
	 * they reached over ssh); the port is the endpoint's, the key the token */
	bool offer;
	char offer_address[WIRE_MAX_ADDRESS + 1];
	struct wl_event_source *offer_timer; /* offers that wait (door/offer.c) */
};

void doors_init(struct rc_server *server);
/* Opens the doors the options ask for (making the tokens, and writing them
 * once every port is open); false, said, if one cannot open. */
bool doors_start(struct rc_server *server);
/* Closes them and every connection still in its handshake. */
void doors_finish(struct rc_server *server);

#endif
