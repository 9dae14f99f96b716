/*
 * The clipboard and the primary selection, both ways: the local selection
 * is offered to the server by its MIME types, the remote one becomes a
 * local data source, and data moves on paste as a transfer.
 */
#ifndef RCOMP_VIEWER_CLIPBOARD_H
#define RCOMP_VIEWER_CLIPBOARD_H

#include <stdbool.h>
#include <stdint.h>
#include <wayland-client.h>

#include "clipboard-state.h"
#include "wire.h"

struct pollfd;
struct rv_viewer;

void clipboard_init(struct rv_viewer *viewer);
void clipboard_finish(struct rv_viewer *viewer);
/* Gets the seat's data devices, once the seat and managers are bound. */
void clipboard_seat(struct rv_viewer *viewer);
/* A new input serial: a remote selection waiting for one can be set. */
void clipboard_input_serial(struct rv_viewer *viewer);
/* The server's selection changed. */
void clipboard_selection(struct rv_viewer *viewer, const struct wire_selection *msg);
/* The server pastes the local selection. */
void clipboard_request(struct rv_viewer *viewer, const struct wire_transfer_request *msg);
/* transfer_data or transfer_ack. */
void clipboard_transfer(struct rv_viewer *viewer, const struct wire_msg *msg);
void clipboard_link_up(struct rv_viewer *viewer);
void clipboard_link_down(struct rv_viewer *viewer);
/* Ends transfers that stalled; returns the milliseconds until the next
 * may, or -1 when there is none. Call before clipboard_poll_fds. */
int clipboard_expire(struct rv_viewer *viewer);
/* Fills TRANSFER_MAX pollfds, one per transfer slot; apps are read only
 * while the link has room (may_send). */
void clipboard_poll_fds(struct rv_viewer *viewer, struct pollfd *fds, bool may_send);
void clipboard_handle_poll(struct rv_viewer *viewer, const struct pollfd *fds);

#endif
