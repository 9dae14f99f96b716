/*
 * The connection to rcomp-run, as rcomp-view holds it: a channel that is up
 * or down, messages sent only while it is up (input from a dead link must
 * never reach the app late), and what to do with a server that breaks the
 * protocol. transport.c opens and reopens it.
 */
#ifndef RCOMP_VIEWER_CONNECTION_H
#define RCOMP_VIEWER_CONNECTION_H

#include <stdbool.h>
#include <stdint.h>

#include "connection-state.h"
#include "channel.h"
#include "wire.h"

struct rv_viewer;

/* The link is up on these fds (taken). */
void connection_open(struct rv_viewer *viewer, int in_fd, int out_fd);
/* The link is down: fds closed, everything queued or half-read dropped. */
void connection_close(struct rv_viewer *viewer);

/* Queues a message for the server; dropped while the link is down, and,
 * but for the hello, until the server welcomes us. */
void connection_send(struct rv_viewer *viewer, const struct wire_msg *msg);
/* The server sent bad data: says what, and ends rcomp-view. */
void connection_fail(struct rv_viewer *viewer, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reads what arrived and hands each whole message to handle. */
enum channel_status connection_read(struct rv_viewer *viewer, channel_handler handle, char *err,
	size_t err_size);
/* Writes what is queued; a server that stopped reading is left to say why
 * in what it sent last. */
void connection_flush(struct rv_viewer *viewer);

#endif
