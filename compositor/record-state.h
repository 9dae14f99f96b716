/*
 * What rcomp-run keeps of the session's record (record.h): types only, for
 * server.h.
 */
#ifndef RCOMP_RECORD_STATE_H
#define RCOMP_RECORD_STATE_H

#include <stdint.h>

#include "session.h"
#include "wire.h"

/* This session on the host (record.c). */
struct rc_record {
	char dir[SESSION_PATH_MAX]; /* empty: not recorded (plain --stdio) */
	char name[SESSION_NAME_MAX + 1];
	uint64_t id; /* random, fixed for the session's life */
	int64_t started;
	char app[256]; /* the command line, for --list */
	int64_t used; /* when a viewer last came or went (wall clock) */
	int viewers; /* how many there were then */
};

#endif
