/*
 * The connection to rcomp-run, as rcomp-view holds it: a channel that is up
 * or down, messages sent only while it is up (input from a dead link must
 * never reach the app late), and what to do with a server that breaks the
 * protocol. transport.c opens and reopens it.
 */
#ifndef RCOMP_VIEWER_CONNECTION_H
#define RCOMP_VIEWER_CONNECTION_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "channel.h"
#include "wire.h"

struct quic_endpoint;
struct rv_viewer;

/* The connection to rcomp-run (connection.c, transport.c). */
struct rv_connection {
	struct channel channel;
	bool connected; /* the channel's fds are open */
	bool connecting; /* a TCP connect is under way */
	bool welcomed; /* on this link */
	bool ever_welcomed;
	bool write_failed; /* the server stopped reading; read its last words */
	uint64_t session_id;
	char session_name[WIRE_MAX_SESSION_NAME + 1];
	uint16_t server_minor; /* what the server understands */
	char host_name[WIRE_MAX_HOST_NAME + 1]; /* "": not told */
	/* session_viewers: how many watch the session (0: not told), whether
	 * this viewer's input reaches the apps, whether it only watches. */
	uint32_t viewers;
	bool has_input, watching;
	uint64_t retry_at_us; /* 0: no retry pending */
	int retry_ms;
	pid_t child; /* ssh, or rcomp-run started by --local */
	int child_status; /* how the last one exited: its status, or -1 */
	char local_run[PATH_MAX]; /* --local: the rcomp-run started */
	struct quic_endpoint *quic; /* --udp: the link's endpoint */
	char quic_failure[256]; /* why the last QUIC link ended, if it says */
	bool key_refused; /* and it ended because the server refused our key */
	/* rcomp-view ssh: the host's UDP offer while it is tried (probe_fd:
	 * the stream, -1 when none), then the UDP link's address and key */
	struct quic_endpoint *probe;
	int probe_fd;
	bool udp_tried;
	bool ssh_introduced; /* the session moved from ssh to UDP */
	bool moving; /* and its first welcome there has not come yet */
	int old_fd; /* meanwhile the ssh link, unread (-1: none) */
	pid_t old_child;
	char udp_target[WIRE_MAX_ADDRESS + 16];
	char udp_key[WIRE_MAX_TOKEN + 1];
	size_t udp_key_len;
};

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
