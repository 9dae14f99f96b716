/*
 * The five ways to reach rcomp-run, and reconnection with backoff
 * (0.25 s, doubling to 8 s) after a link breaks.
 */
#ifndef RCOMP_TRANSPORT_H
#define RCOMP_TRANSPORT_H

#include <poll.h>

#include "viewer.h"

/* Opens the link (a TCP connect may still be under way). False if it
 * cannot be opened now; viewer->running is false if it never will. */
bool transport_open(struct rv_viewer *viewer);
/* Closes the link, and ends the ssh or rcomp-run it ran over. */
void transport_close(struct rv_viewer *viewer);
/* Whether this way of connecting can be tried again. */
/* After a link that cannot be retried ended: says why, in one line with
 * the fix (ssh failed, no rcomp-run there, or why), and returns the exit
 * status for it (status.h). */
int transport_explain_failure(struct rv_viewer *viewer, const char *why);
/* rcomp-view ssh HOST --stop [SESSION] or --list: runs rcomp-run so there,
 * and returns its exit status (or ssh's, told apart as for a session). */
int transport_ssh_command(struct rv_viewer *viewer);
bool transport_can_retry(const struct rv_viewer *viewer);
void transport_schedule_retry(struct rv_viewer *viewer);
/* Milliseconds until a retry is due, or -1. */
int transport_retry_timeout(const struct rv_viewer *viewer);
/* Tries again if it is time: true if the link is open now. */
bool transport_retry(struct rv_viewer *viewer);
/* A TCP connect finished: false (errno set) if it failed. */
bool transport_finish_connect(struct rv_viewer *viewer);

/*
 * ssh introductions: over ssh, the viewer asks for a UDP offer (the hello
 * says so); the host answers with a port and a fresh key, and the viewer
 * tries a QUIC handshake in the background while the session goes on over
 * ssh. Once it completes the session moves to UDP (dispatch_move_to_udp,
 * called by the loop); if it fails, the viewer says so once and stays on
 * ssh.
 */
bool transport_wants_udp_offer(const struct rv_viewer *viewer);
void transport_udp_offer(struct rv_viewer *viewer, const struct wire_udp_offer *offer);
/* The handshake's two fds to poll (fd -1: none), and what they said: true
 * when it completed (the caller moves the session: dispatch_move_to_udp);
 * a failure is said here, once, and the try dropped. */
void transport_probe_poll(struct rv_viewer *viewer, struct pollfd *fds);
bool transport_probe_ready(struct rv_viewer *viewer, const struct pollfd *fds);
/* The move keeps the old link (its fd and ssh) open, unread, until the
 * session has welcomed the viewer on the new one; then it goes. */
void transport_keep_old(struct rv_viewer *viewer);
void transport_drop_old(struct rv_viewer *viewer);

#endif
