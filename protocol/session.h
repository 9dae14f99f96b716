/*
 * Named sessions on one host: where their sockets live, what they record
 * about themselves, and how to find them again. Shared by rcomp-run (which
 * creates, lists and attaches) and rcomp-view (which attaches locally).
 */
#ifndef RCOMP_SESSION_H
#define RCOMP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire.h"

#define SESSION_PATH_MAX 108 /* sun_path */

struct session_info {
	char name[WIRE_MAX_SESSION_NAME + 1];
	pid_t pid;
	int64_t started; /* wall clock, seconds */
	bool attached; /* a viewer is attached now */
	char app[256]; /* the command line, shortened */
};

/*
 * This user's session directory: $RCOMP_DIR if set, else /tmp/rcomp-UID. Not
 * XDG_RUNTIME_DIR: logind removes it when the last login ends, which is
 * exactly when a detached session must stay reachable. With create, makes it
 * (mode 0700). Refuses a directory that is not ours or that others can enter.
 */
bool session_dir(char *out, size_t size, bool create);

/* DIR/NAME.SUFFIX, or false if it does not fit a socket address. */
bool session_path(char *out, size_t size, const char *dir, const char *name, const char *suffix);

/* Writes DIR/NAME.info atomically. */
bool session_write_info(const char *dir, const struct session_info *info);

/* Removes every file of session NAME. */
void session_remove(const char *dir, const char *name);

/*
 * Live sessions in DIR, oldest first, at most max; files of sessions whose
 * process is gone are removed. Returns the number found, or -1.
 */
int session_list(const char *dir, struct session_info *out, int max);

/*
 * Which of n listed sessions to attach to: the one named name, or with no
 * name the only session, or else the only detached one. Returns its index,
 * or -1 with the reason in err.
 */
int session_choose(const struct session_info *infos, int n, const char *name, char *err,
	size_t err_size);

#endif
