/* The session's own D-Bus session bus (bus.c). */
#ifndef RCOMP_BUS_H
#define RCOMP_BUS_H

#include <stdbool.h>
#include <sys/types.h>

struct rc_server;

/* Starts dbus-daemon for the session and waits until it answers. False
 * after a warning saying why (the session goes on without). */
bool bus_start(struct rc_server *server);
/* Ends it; quiet where there is none. */
void bus_stop(struct rc_server *server);
/* DBUS_SESSION_BUS_ADDRESS for the apps, or NULL. */
const char *bus_address(const struct rc_server *server);
/* A daemon of the session's (the bus, the printer) listening at the unix
 * socket path takes a connection: it is up. */
bool daemon_answers(const char *path);
bool bus_owns_pid(const struct rc_server *server, pid_t pid);
void bus_exited(struct rc_server *server, int status);

#endif
