/*
 * Named sessions on one host: where their sockets live, what they record
 * about themselves, and how to find them again. Shared by rcomp-run (which
 * creates, lists and attaches) and rcomp-view (which attaches locally).
 */
#ifndef RCOMP_SESSION_H
#define RCOMP_SESSION_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SESSION_PATH_MAX 108 /* sun_path */

/* Session names are 1 to SESSION_NAME_MAX of [A-Za-z0-9._-], not
 * starting with a dot: safe as a file name and in a shell. The wire
 * carries them as they are (welcome, hello). */
#define SESSION_NAME_MAX 64
bool session_name_ok(const char *name, size_t len);
/* A label a user gives a session: at most this many bytes of UTF-8, no
 * control characters (session_label_ok). */
#define SESSION_LABEL_MAX 120
bool session_label_ok(const char *label, size_t len);

struct session_info {
	char name[SESSION_NAME_MAX + 1];
	char dir[SESSION_PATH_MAX]; /* the session directory it lives in */
	pid_t pid;
	int64_t started; /* wall clock, seconds */
	bool attached; /* a viewer is attached now */
	int viewers; /* how many */
	char app[256]; /* the command line, shortened */
	/* Its windows' titles (toplevels, at most SESSION_TITLES), each ended
	 * by a newline, without control characters. */
	char titles[512];
	int64_t used; /* wall clock, seconds: when a viewer last came or went */
	/* What the session is about (DIR/NAME.about, which rcomp-gate writes
	 * as the user): the desktop entry it was started from, and the name
	 * its user gave it; each empty if none. */
	char entry[128];
	char label[SESSION_LABEL_MAX + 1];
	bool thumb; /* DIR/NAME.thumb: a picture of its windows (a BMP) */
};
#define SESSION_TITLES 8

/*
 * This user's session directories, in the order they are searched: just
 * $RCOMP_DIR if it is set, else
 *  - $XDG_RUNTIME_DIR/rcomp: private by birth, but logind removes it when
 *    the user's last login ends, so only for sessions that end with theirs;
 *  - ${TMPDIR:-/tmp}/rcomp-UID: for sessions that outlive the login
 *    (--persist), and where there is no runtime directory;
 *  - ${XDG_CACHE_HOME:-~/.cache}/rcomp: where those go when the one in /tmp
 *    is not ours to use (another user can make it first).
 * Each must be a directory of ours that no one else may enter.
 */
enum session_dir_kind {
	SESSION_DIR_OVERRIDE,
	SESSION_DIR_RUNTIME,
	SESSION_DIR_TMP,
	SESSION_DIR_CACHE
};
struct session_dir {
	char path[SESSION_PATH_MAX];
	enum session_dir_kind kind;
};
#define SESSION_DIRS_MAX 3
int session_dirs(struct session_dir dirs[SESSION_DIRS_MAX]);

/* Makes (mode 0700) or checks the directory a new session records itself
 * in: the first usable of session_dirs, but not the runtime directory for a
 * durable session. A directory that is not usable is passed over with a
 * warning; $RCOMP_DIR never is. */
bool session_dir_create(char *out, size_t size, bool durable);

/* DIR/NAME.SUFFIX, or false if it does not fit a socket address. */
bool session_path(char *out, size_t size, const char *dir, const char *name, const char *suffix);

/* Writes DIR/NAME.info atomically. */
bool session_write_info(const char *dir, const struct session_info *info);

/* Writes DIR/NAME.about (entry and label, either may be empty)
 * atomically. */
bool session_write_about(const char *dir, const char *name, const char *entry, const char *label);

/* Removes every file of session NAME. */
void session_remove(const char *dir, const char *name);

/*
 * Live sessions in every session directory, oldest first, at most max;
 * files of sessions whose process is gone are removed. Returns the number
 * found, or -1 if a directory could not be read.
 */
int session_list(struct session_info *out, int max);

/*
 * Which of n listed sessions to attach to (verb "--attach") or to stop
 * ("--stop"): the one named name, or with no name the only session, or else
 * the only detached one. Returns its index, or minus the exit status that
 * says why not (RC_EXIT_NO_SESSION, RC_EXIT_SEVERAL, status.h) with the
 * reason and a fix in err that holds wherever verb was typed (rcomp-run, or
 * rcomp-view, here or through ssh).
 */
int session_choose(const struct session_info *infos, int n, const char *name, const char *verb,
	char *err, size_t err_size);

/* The table --list prints (rcomp-run's and rcomp-view's): each session's
 * name, pid, start, viewers, processes and app, or "no sessions". False
 * where the session directory cannot be read. */
bool session_print_list(FILE *out);

#endif
