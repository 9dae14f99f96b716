/*
 * A session's processes: the descendants of a process, found in /proc,
 * counted, and ended (SIGTERM, a grace period, then SIGKILL). Shared by
 * rcomp-run, its reaper and the gate's keeper of a session. Nothing here
 * allocates or uses stdio: it runs in a child forked from a process with
 * threads.
 */
#ifndef RCOMP_PROCS_H
#define RCOMP_PROCS_H

#include <stdbool.h>
#include <sys/types.h>

/* The most processes of one tree counted or ended at once; a tree larger
 * than that is ended a part at a time. */
#define PROCS_MAX 4096

/* The live processes below root (its children, theirs, and so on; not
 * zombies), at most max of them into out (which may be NULL). Returns how
 * many were found, or -1 where /proc cannot be read. */
int procs_below(pid_t root, pid_t *out, int max);

struct procs_ended {
	int asked; /* processes sent SIGTERM */
	int killed; /* still alive after the grace (or born since): sent SIGKILL */
	int left; /* alive even so: not ours to end (a set-user-ID program's) */
};

/*
 * Ends every process below the caller, which is their child subreaper (so
 * that each orphan comes back to it to be reaped): SIGTERM to each, again
 * to each that appears meanwhile, until none is left or grace_ms have
 * passed; then SIGKILL to what is left, until none is. spare, if not 0, is
 * a child left alone (with what is below it). Reaps the caller's children
 * as they end; returns what it had to do.
 */
struct procs_ended procs_end_below(int grace_ms, pid_t spare);

/* Sends sig to pid if it is still the process below root that it was when
 * looked up (a pid file descriptor: a number reused meanwhile is not
 * signalled). */
bool procs_signal_below(pid_t root, pid_t pid, int sig);

#endif
