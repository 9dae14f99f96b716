/*
 * The session's reaper: a small process between rcomp-run and the app
 * (rcomp-run --reaper, run by app.c). It is the child subreaper of
 * everything the app starts, so it outlives rcomp-run to end them however
 * rcomp-run ends (SIGKILL and crashes too), and it keeps the session's log
 * within its cap when the log is a file.
 *
 * What it says to rcomp-run, on the status pipe, as struct reaper_msg;
 * what rcomp-run says to it, on the control pipe: any byte, or the pipe's
 * end, means "end every process of the session now".
 */
#ifndef RCOMP_REAPER_H
#define RCOMP_REAPER_H

#include <stdint.h>

enum reaper_say {
	REAPER_STARTED = 1, /* a: the app's pid */
	REAPER_FAILED, /* a: the errno its exec failed with */
	REAPER_EXITED, /* a: the app's status, as a shell gives it */
	REAPER_EMPTY, /* the app has exited and nothing it started is left */
	REAPER_ENDED, /* a, b, c: processes sent SIGTERM, then SIGKILL, and left */
};

struct reaper_msg {
	int32_t say; /* enum reaper_say */
	int32_t a, b, c;
};

/* The most a session's log may grow to, and the least it may be set to. */
#define REAPER_LOG_MIN (1u << 20)

/* rcomp-run --reaper CONTROL STATUS OUTPUT LOG GRACE_MS LOG_MAX -- APP...:
 * the descriptors it was handed (OUTPUT and LOG -1 where the log is not a
 * file). Returns the status to exit with. */
int reaper_main(int argc, char **argv);
/* The same, in a child of rcomp-run that could not exec it: the
 * descriptors (-1: none), the grace, the log's cap, the app and its
 * environment. */
int reaper_run(int control, int status, int output, int log, int grace_ms, uint64_t log_max,
	char **argv, char **envp);

#endif
