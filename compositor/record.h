/*
 * This session on the host: its name (--name, or the first free number),
 * its record in the session directory for rcomp-run --list, and removing
 * both at the end.
 */
#ifndef RCOMP_RECORD_H
#define RCOMP_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "session.h"
#include "wire.h"

struct rc_server;

/* This session on the host (record.c). */
struct rc_record {
	char dir[SESSION_PATH_MAX]; /* empty: not recorded (plain --stdio) */
	char name[WIRE_MAX_SESSION_NAME + 1];
	uint64_t id; /* random, fixed for the session's life */
	int64_t started;
	char app[256]; /* the command line, for --list */
};

/* Names the session and records it; plain --stdio sessions are neither
 * named in the directory nor listed. */
bool record_init(struct rc_server *server, char **app);
/* Writes the record again: a viewer attached or left, the pid changed. */
void record_update(struct rc_server *server);
void record_finish(struct rc_server *server);

#endif
