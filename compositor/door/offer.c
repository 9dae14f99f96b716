/*
 * A viewer over ssh may come over to the session's UDP (--offer-udp), as
 * itself (see offer.h).
 */
#include <stdio.h>
#include <string.h>

#include "connection.h"
#include "monotonic.h"
#include "offer.h"
#include "quic.h"
#include "token.h"

/* A key of the viewer's own for coming over to the session's UDP as itself
 * (--offer-udp): known to the UDP door until the viewer leaves. */
static bool make_move_key(struct rc_viewer *viewer)
{
	struct quic_endpoint *quic = viewer->server->doors.quic;
	char prefix[24];
	snprintf(prefix, sizeof(prefix), "%s%d-", QUIC_MOVE_PREFIX, viewer->slot);
	return quic && token_random(viewer->move_key, &viewer->move_key_len, prefix) &&
		quic_set_move_key(quic, viewer->slot, viewer->move_key, viewer->move_key_len);
}

/* A viewer over ssh may come over to UDP, as itself; not while the app may
 * still fail to start or end at once (an app that cannot be run, a script
 * that exits): the session's goodbye, with the app's status, would go to
 * the link the viewer is leaving. */
#define OFFER_AFTER_US 1000000

static void send_offer(struct rc_viewer *viewer)
{
	struct rc_server *server = viewer->server;
	const struct rc_doors *doors = &server->doors;
	viewer->offer_due = false;
	if (server->app.exited || viewer->conn->closing || !make_move_key(viewer)) {
		return;
	}
	connection_send(viewer->conn,
		&(struct wire_msg){.type = WIRE_UDP_OFFER,
			.udp_offer = {.port = (uint32_t)quic_local_port(doors->quic),
				.key_len = (uint32_t)viewer->move_key_len,
				.key = viewer->move_key,
				.address = doors->offer_address,
				.address_len = (uint32_t)strlen(doors->offer_address)}});
}

static int handle_offer_timer(void *data)
{
	struct rc_server *server = data;
	struct rc_viewer *viewer;
	wl_list_for_each(viewer, &server->viewers, link)
	{
		if (viewer->offer_due) {
			send_offer(viewer);
		}
	}
	return 0;
}

void offer_udp(struct rc_viewer *viewer)
{
	struct rc_server *server = viewer->server;
	uint64_t now = monotonic_usec(), ready = server->app.started_us + OFFER_AFTER_US;
	if (now >= ready) {
		send_offer(viewer);
		return;
	}
	if (!server->doors.offer_timer) {
		server->doors.offer_timer =
			wl_event_loop_add_timer(server->loop, handle_offer_timer, server);
	}
	viewer->offer_due = true;
	if (server->doors.offer_timer) {
		wl_event_source_timer_update(server->doors.offer_timer,
			(int)((ready - now + 999) / 1000));
	}
}
