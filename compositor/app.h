/*
 * The app: the child process rcomp-run starts through the session's reaper
 * (reaper.h), and the session's end once the app has exited and its
 * windows (and anything it left running) are gone.
 */
#ifndef RCOMP_APP_H
#define RCOMP_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "app-state.h"

struct rc_server;

bool app_init(struct rc_server *server);
/* Starts argv, through the reaper, with our WAYLAND_DISPLAY and, if any,
 * our DISPLAY; where our standard error is a file, the reaper keeps it
 * within --log-max from then on. */
bool app_start(struct rc_server *server, char **argv);
/* Ends the session if the app has exited and nothing of it is left. */
void app_check_exit(struct rc_server *server);
/* Ends the session, asked to (rcomp-run --stop): the apps are asked to
 * close their windows, and are ended with it once they have, or if they
 * have not within a few seconds. */
void app_stop(struct rc_server *server);
/* The session ends: the reaper ends every process the app started
 * (SIGTERM, then SIGKILL after --grace), while the rest of rcomp-run goes;
 * the event sources go now. */
void app_finish(struct rc_server *server);
/* Waits for the reaper to say what it ended, then ends what is left of
 * our own children the same way. */
void app_wait_ended(struct rc_server *server);
/* What a stopper is told: the session ended, and what it had to kill. */
void app_ended_text(const struct rc_server *server, char *out, size_t size);
/* Last: our standard output and error back from the reaper, which writes
 * the log's last bytes and leaves. */
void app_leave(struct rc_server *server);

#endif
