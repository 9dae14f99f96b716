/* The session's printer: a CUPS scheduler of its own (print.c). */
#ifndef RCOMP_PRINT_H
#define RCOMP_PRINT_H

#include <stdbool.h>
#include <sys/types.h>

struct rc_server;

/* Starts the session's cupsd with its one queue and waits until it
 * answers. False after a line saying why (the session goes on without). */
bool print_start(struct rc_server *server);
/* Ends it and removes its folder; quiet where there is none. */
void print_stop(struct rc_server *server);
/* CUPS_SERVER for the apps (its socket), or NULL. */
const char *print_server(const struct rc_server *server);
bool print_owns_pid(const struct rc_server *server, pid_t pid);
void print_exited(struct rc_server *server, int status);

#endif
