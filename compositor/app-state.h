/*
 * What rcomp-run keeps of the app (app.h): types only, for server.h.
 */
#ifndef RCOMP_APP_STATE_H
#define RCOMP_APP_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct wl_event_source;

/* The app (app.c). */
struct rc_app {
	pid_t pid;
	uint64_t started_us;
	bool exited;
	int status;
	uint64_t exited_us;
	char failure[256]; /* it could not be run: why ("" if it ran) */
	bool stopping; /* the session was asked to end (app_stop) */
	struct wl_event_source *stop_timer;
	struct wl_event_source *sigchld, *exit_check;
	int idle_checks;
};

#endif
