/*
 * The app: the child process rcomp-run starts, and the session's end once
 * the app has exited and its windows (and anything it left running) are
 * gone.
 */
#ifndef RCOMP_APP_H
#define RCOMP_APP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct rc_server;
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

bool app_init(struct rc_server *server);
/* Ends what the app left running, then forgets it. */
void app_finish(struct rc_server *server);
/* Starts argv with our WAYLAND_DISPLAY and, if any, our DISPLAY. */
bool app_start(struct rc_server *server, char **argv);
/* Ends the session if the app has exited and nothing of it is left. */
void app_check_exit(struct rc_server *server);
/* Ends the session, asked to (rcomp-run --stop): the apps are asked to
 * close their windows, and are ended with it if they have not within a
 * few seconds. */
void app_stop(struct rc_server *server);

#endif
