/*
 * The clipboard and the primary selection, both ways: an app's selection is
 * offered to the viewer by its MIME types, the viewer's becomes a data
 * source here, and data moves on paste as a transfer (protocol/transfer.c).
 */
#ifndef RCOMP_CLIPBOARD_H
#define RCOMP_CLIPBOARD_H

#include <stddef.h>
#include <stdint.h>

#include "clipboard-state.h"
#include "wire.h"

struct rc_server;
struct wlr_data_source;

bool clipboard_init(struct rc_server *server);
void clipboard_finish(struct rc_server *server);
/* The viewer's local selection changed: apps here may paste it. */
void clipboard_selection(struct rc_server *server, const struct wire_selection *msg);
/* The viewer pastes an app's selection, or (kind WIRE_SELECTION_DND) takes
 * the data of drag_source, an app's drag dropped on a local app (NULL:
 * none). */
void clipboard_request(struct rc_server *server, const struct wire_transfer_request *msg,
	struct wlr_data_source *drag_source);
/* transfer_data or transfer_ack; false (err set) if the viewer broke the
 * protocol. */
bool clipboard_transfer(struct rc_server *server, const struct wire_msg *msg, char *err,
	size_t err_size);
/* Brings the transfers' fd watches up to date: apps are read only while
 * the connection has room for bulk data. */
void clipboard_sync(struct rc_server *server);
/* Tells a new viewer the apps' selections (their types only). */
void clipboard_offer_all(struct rc_server *server);
/* Pastes in progress end; the local selection is out of reach now. */
void clipboard_viewer_gone(struct rc_server *server);

/* Asks the viewer for its selection of kind (or the drag's data) as mime,
 * written to fd (taken). */
void clipboard_request_from_viewer(struct rc_server *server, enum wire_selection_kind kind,
	const char *mime, int fd);

#endif
