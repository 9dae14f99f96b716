/*
 * The monitor's logins: each a cookie's SHA-256 (the cookie itself is
 * only ever the browser's), its CSRF token, user, address and times; kept
 * in a root-only file under the gate's state directory, so that a restart
 * or an upgrade costs no one their login.
 */
#ifndef RCOMP_GATE_LOGINS_H
#define RCOMP_GATE_LOGINS_H

#include <stdbool.h>
#include <stdint.h>

#include "ipc.h"

#define LOGINS_MAX 4096
#define LOGIN_KEY_BYTES 32

struct login {
	bool used;
	uint8_t key[LOGIN_KEY_BYTES]; /* SHA-256 of the cookie */
	char csrf[GATE_CSRF_HEX + 1];
	char user[GATE_USER_MAX + 1];
	char addr[GATE_ADDR_MAX + 1];
	uint64_t created_ms, last_ms; /* the monotonic clock's */
};

struct logins {
	struct login all[LOGINS_MAX];
	char path[4200]; /* the file; empty: none is kept */
	bool dirty; /* changed since written: a new login or one that ended */
	bool touched; /* used since written (its idle time only) */
	uint64_t written_ms;
};

/* Into logins, zeroed: the logins the file under state_dir holds, expired
 * ones left out (with
 * lifetime_s, idle_s); a directory that is not root's alone, or a file
 * that is not, is refused with a line in the log, and nothing read. */
void logins_load(struct logins *logins, const char *state_dir, int lifetime_s, int idle_s,
	uint64_t now_ms);
/* Writes the file if a login came or went, or (every minute) if one was
 * used; force: now, whatever changed. */
void logins_save(struct logins *logins, uint64_t now_ms, bool force);

/* The login of cookie (64 hex digits), or NULL; its key in key. */
struct login *logins_find(struct logins *logins, const char *cookie);
/* A new login, its cookie in cookie (the one and only copy), or NULL;
 * full, the login idle longest makes room (it is logged). */
struct login *logins_add(struct logins *logins, const char *user, const char *addr, uint64_t now_ms,
	char cookie[GATE_COOKIE_HEX + 1]);
void logins_remove(struct logins *logins, struct login *login);
/* Two keys the same, in time that does not depend on where they differ. */
bool logins_same_key(const uint8_t *a, const uint8_t *b);

#endif
