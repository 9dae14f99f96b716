/*
 * What the doors (door/doors.h) and the handshake (door/handshake.h) keep:
 * types only, for server.h.
 */
#ifndef RCOMP_DOOR_STATE_H
#define RCOMP_DOOR_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <wayland-util.h>

#include "log.h"
#include "wire.h"

struct quic_endpoint;
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

/* Connections in their handshake, and the tokens (door/handshake.c). */
struct rc_handshake {
	struct wl_list pending; // rc_pending::link, newest first
	int npending[2]; /* on the unix socket or stdio, on the network */
	char token[WIRE_MAX_TOKEN + 1];
	size_t token_len;
	/* --watch-token: admits viewers that watch only; empty: none */
	char watch_token[WIRE_MAX_TOKEN + 1];
	size_t watch_token_len;
	struct log_limit refusals; /* refusal log lines */
	/* Those that asked the session to end (rcomp-run --stop): told once
	 * it has (handshake_tell_stoppers). */
	int stoppers[4];
	int nstoppers;
};

#endif
