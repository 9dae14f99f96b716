/*
 * What rcomp-run keeps of the app (app.h): types only, for server.h.
 */
#ifndef RCOMP_APP_STATE_H
#define RCOMP_APP_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "procs.h"

struct wl_event_source;

/* The app (app.c), and the session's reaper that runs it (reaper.h). */
struct rc_app {
	pid_t pid;
	uint64_t started_us;
	bool exited;
	int status;
	uint64_t exited_us;
	char failure[256]; /* it could not be run: why ("" if it ran) */
	bool stopping; /* the session was asked to end (app_stop) */
	struct wl_event_source *stop_timer;
	struct wl_event_source *sigchld, *exit_check, *status_source;
	int idle_checks;
	pid_t reaper; /* 0: none (any more) */
	int control, status_fd; /* the pipes to and from it; -1: closed */
	bool empty; /* nothing of the app's runs any more */
	bool ending; /* the reaper was asked to end the session's processes */
	bool told_ended;
	struct procs_ended ended; /* what ending them took, all told */
};

#endif
