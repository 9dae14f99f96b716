/*
 * The monitor's acts for a user: PAM's conversation, and becoming the user
 * in a child process, exactly as a login over ssh would: the user's groups,
 * HOME, USER, LOGNAME, SHELL and PATH, what PAM's session adds to the
 * environment, the user's runtime directory where there is one, and no
 * descriptor but the three standard ones and those the caller keeps.
 */
#ifndef RCOMP_GATE_USER_H
#define RCOMP_GATE_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ipc.h"

struct gate_user {
	char name[GATE_USER_MAX + 1];
	uid_t uid;
	gid_t gid;
	char home[1024];
	char shell[256];
};

/* The account name names; false if there is none (or it is root's). */
bool gate_user_find(const char *name, struct gate_user *user);
/* Whether the account's shell is a login shell, as su and sshd judge it:
 * one /etc/shells lists, and not nologin or false (an account for SFTP
 * only, or locked down, gets no command through the gate either). */
bool gate_user_login_shell(const struct gate_user *user);

/*
 * PAM's authentication and account stacks for user with password, from
 * addr (PAM_RHOST). Returns true if both pass; else why (for the log, never
 * for the browser) in why. PAM's own failure delay is left to the caller,
 * which answers every failure at the same time.
 */
bool gate_pam_login(const char *service, const char *user, const char *password, const char *addr,
	char *why, size_t why_size);

/* A PAM session for user (account, credentials, session stacks), held by the
 * calling process until gate_pam_close; the environment it gives in *env
 * (NULL-terminated, to free with gate_pam_close). NULL and why on failure. */
struct gate_pam;
struct gate_pam *gate_pam_open(const char *service, const char *user, const char *addr, char ***env,
	char *why, size_t why_size);
void gate_pam_close(struct gate_pam *pam, char **env);

/*
 * In a child process: becomes user, for good (groups, gid, uid, checked),
 * with a login's environment (env: PAM's, may be NULL) and HOME as the
 * working directory; every descriptor above 2 is closed but keep (-1:
 * none). False (with errno) if any step failed: the child must then exit.
 */
bool gate_become(const struct gate_user *user, char **env, int keep);

#endif
