/*
 * The app: the child process rcomp-run starts, and the session's end once
 * the app has exited and its windows (and anything it left running) are
 * gone.
 */
#ifndef RCOMP_APP_H
#define RCOMP_APP_H

#include <stdbool.h>

#include "app-state.h"

struct rc_server;

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
