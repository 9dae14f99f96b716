/*
 * rcomp-run --list, --attach and --stop, and --persist's move to the
 * background: the commands that reach a session from outside it.
 */
#ifndef RCOMP_COMMANDS_H
#define RCOMP_COMMANDS_H

#include "server.h"

/* rcomp-run --list: prints this user's sessions. The exit status. */
int command_list(void);
/* rcomp-run --attach [NAME]: bridges stdio to a session. The exit status. */
int command_attach(const char *name);
/* rcomp-run --stop [NAME]: ends a session, waiting until it has. The exit
 * status. */
int command_stop(const char *name);
/* rcomp-run --send [--to VIEWER] FILE...: sends files to the viewers of
 * session name (NULL: the only one), waiting until they are there. The
 * exit status. */
int command_send(const char *name, uint32_t to, char **files, int n);
/* rcomp-run --cups-backend ARGS: the session printer's CUPS backend (its
 * queue's device is rcomp:SESSION-SOCKET): the job's PDF goes to the
 * session's viewer as a print. CUPS's backend exit status. */
int command_cups_backend(int argc, char **argv);
/*
 * --persist: the session becomes a daemon and this process a bridge from
 * stdio to it, so that the session outlives the ssh connection that
 * started it. Returns in the daemon, with *ready to write the session's
 * name to once it listens; the bridge exits here.
 */
bool command_persist(struct rc_server *server, int *ready);

#endif
