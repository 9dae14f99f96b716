/*
 * This session on the host: its name (--name, or the first free number),
 * its record in the session directory for rcomp-run --list, and removing
 * both at the end.
 */
#ifndef RCOMP_RECORD_H
#define RCOMP_RECORD_H

#include <stdbool.h>

#include "record-state.h"

struct rc_server;

/* Names the session and records it; plain --stdio sessions are neither
 * named in the directory nor listed. */
bool record_init(struct rc_server *server, char **app);
/* Writes the record again: a viewer attached or left, the pid changed. */
void record_update(struct rc_server *server);
void record_finish(struct rc_server *server);

#endif
