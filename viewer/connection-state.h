/*
 * What rcomp-view keeps of its link to rcomp-run (connection.h,
 * transport.h): types only, for viewer.h.
 */
#ifndef RCOMP_CONNECTION_STATE_H
#define RCOMP_CONNECTION_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "channel.h"
#include "wire.h"

struct quic_endpoint;

/* The connection to rcomp-run (connection.c, transport.c). */
struct rv_connection {
	struct channel channel;
	bool connected; /* the channel's fds are open */
	bool connecting; /* a TCP connect is under way */
	bool welcomed; /* on this link */
	bool ever_welcomed;
	bool write_failed; /* the server stopped reading; read its last words */
	uint64_t session_id;
	char session_name[SESSION_NAME_MAX + 1];
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

#endif
