/*
 * The exit statuses of both programs' own failures, one per cause a user
 * can meet, so that scripts can tell them apart (documented in rcomp-run(1)
 * and rcomp-view(1)). Once an app runs, both programs exit with its status
 * instead, as ssh does with the remote command's.
 */
#ifndef RCOMP_STATUS_H
#define RCOMP_STATUS_H

enum rc_status {
	RC_EXIT_FAILURE = 1, /* anything not below */
	RC_EXIT_USAGE = 2, /* a bad option, argument or setting */
	RC_EXIT_NO_DISPLAY = 3, /* rcomp-view: no local Wayland display */
	RC_EXIT_IN_USE = 4, /* rcomp-run: the socket, port or session name is taken */
	RC_EXIT_NO_SESSION = 5, /* no session of that name, or none at all */
	RC_EXIT_SEVERAL = 6, /* several sessions, and none named */
	RC_EXIT_TOKEN = 7, /* the session refused the TCP token */
	RC_EXIT_SSH = 8, /* ssh could not reach or log in to the host */
	RC_EXIT_NO_REMOTE = 9, /* no rcomp-run to start (on the remote host, for ssh) */
	RC_EXIT_VERSION = 10, /* the other side speaks another protocol version */
};

#endif
