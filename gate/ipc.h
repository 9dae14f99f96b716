/*
 * What rcomp-gate's two processes say to each other, over one
 * SOCK_SEQPACKET socket pair: the network process (unprivileged: TLS, HTTP,
 * WebSockets) asks, the monitor (root: PAM, sessions as their users)
 * answers. Each request is one fixed-size record; each answer a header and
 * up to GATE_TEXT_MAX bytes of text (JSON or a message for the person), with
 * a descriptor alongside for GATE_OPEN. The monitor trusts nothing a
 * request says: a request is refused whole unless its every string ends
 * inside its field, and every privileged act names a login cookie that the
 * monitor itself made.
 */
#ifndef RCOMP_GATE_IPC_H
#define RCOMP_GATE_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GATE_COOKIE_HEX 64 /* 256 random bits */
#define GATE_CSRF_HEX 32
#define GATE_USER_MAX 32 /* a login name, as useradd allows */
#define GATE_SECRET_MAX 256 /* a password */
#define GATE_ADDR_MAX 80
#define GATE_ARG_MAX 256 /* an app's desktop id or a session's name */
#define GATE_LABEL_MAX 120 /* SESSION_LABEL_MAX */
#define GATE_TEXT_MAX 65536

enum gate_op {
	GATE_LOGIN = 1, /* user, secret, addr: a cookie */
	GATE_WHO, /* cookie: its user and CSRF token, or refused */
	GATE_LOGOUT, /* cookie: revoked */
	GATE_LIST, /* cookie: the user's sessions, JSON */
	GATE_APPS, /* cookie: the apps the user may start, JSON */
	GATE_START, /* cookie, arg (an app's id): a new session's name */
	GATE_STOP, /* cookie, arg (a session's name) */
	GATE_OPEN, /* cookie, arg (a session's name): its socket, as a descriptor */
	GATE_ICON, /* cookie, arg (an app's id): its icon's bytes */
	GATE_RENAME, /* cookie, arg (a session's name), label: the session's label set */
	GATE_THUMB, /* cookie, arg (a session's name): its picture's bytes (a BMP) */
	GATE_CLOSED, /* id: the OPEN whose viewer has ended; not answered */
};

enum gate_status {
	GATE_OK = 0,
	GATE_REFUSED, /* a wrong login, or a cookie that is not (or no longer) one */
	GATE_SLOW, /* too many failed logins: wait; the text says how long */
	GATE_BUSY, /* the monitor does as much at once as it may: try again */
	GATE_NOT_FOUND, /* no such app or session of this user */
	GATE_FAILED, /* it could not be done; the text says why */
	GATE_LIMIT, /* a limit of the user's (sessions, viewers) */
	/* Unasked, to an OPEN's id: its viewer ends (its login ended: a
	 * logout, an expiry); the text says why. */
	GATE_ENDED,
};

/* GATE_OPEN's flags: what the viewer asks of the session; and, set by the
 * monitor alone, that the session has just started (its socket may be
 * waited for). */
#define GATE_OPEN_SHARE 1u
#define GATE_OPEN_WATCH 2u
#define GATE_OPEN_WAIT 4u

struct gate_request {
	uint32_t op, id; /* id: the network process's, echoed in the answer */
	uint32_t flags;
	char cookie[GATE_COOKIE_HEX + 1];
	char csrf[GATE_CSRF_HEX + 1]; /* the page's token: asked of LOGOUT, START, STOP, RENAME */
	char user[GATE_USER_MAX + 1];
	char secret[GATE_SECRET_MAX + 1];
	char addr[GATE_ADDR_MAX + 1]; /* the browser's, for the log and the throttle */
	char arg[GATE_ARG_MAX + 1];
	char label[GATE_LABEL_MAX + 1]; /* RENAME's: what the user calls the session */
};

struct gate_answer {
	uint32_t id;
	int32_t status; /* enum gate_status */
	uint32_t len; /* text's bytes after this header */
	char user[GATE_USER_MAX + 1];
	char cookie[GATE_COOKIE_HEX + 1]; /* GATE_LOGIN's */
	char csrf[GATE_CSRF_HEX + 1]; /* GATE_LOGIN's and GATE_WHO's */
	uint32_t max_age; /* GATE_LOGIN's: the cookie's lifetime, seconds */
};

/* Whether every string of a request ends inside its field, its op is one
 * of ours, and its address is an address (IPv4 or IPv6, as the network
 * process read it off its socket; "?" where it could not): the network
 * side cannot write a log line through it. */
bool gate_request_ok(const struct gate_request *req);
bool gate_addr_ok(const char *addr);

/* Sends a request (one record). False if the socket failed. */
bool gate_send_request(int fd, const struct gate_request *req);
/* Sends an answer with len bytes of text, and fd (if >= 0) alongside. */
bool gate_send_answer(int fd, const struct gate_answer *answer, const void *text, size_t len,
	int passfd);
/*
 * Receives one record of at most size bytes into buf; *passfd gets a
 * descriptor that came with it (close-on-exec) or -1. Returns its length,
 * 0 at the end, -1 on an error (errno EAGAIN: nothing yet).
 */
ssize_t gate_receive(int fd, void *buf, size_t size, int *passfd);

/* bytes random bytes (getrandom) as hex into out (2 * bytes + 1). */
bool gate_random_hex(char *out, size_t bytes);

/* Copies text into a field of size bytes; false if it does not fit. */
bool gate_copy(char *field, size_t size, const char *text);

#endif
