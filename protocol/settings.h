/*
 * Settings of both programs, in layers, lowest to highest: defaults, the
 * files ($XDG_CONFIG_DIRS/rcomp/rcomp.ini, then $XDG_CONFIG_HOME/rcomp/
 * rcomp.ini; the program's section, then the app's or host's section over
 * it), the environment (RCOMP_<KEY>), then the command line. Every key is a
 * long option of the same name. Files are read with libinih.
 *
 * Each layer's value goes through the key's own check and store, in layer
 * order, so a bad value anywhere is found, the highest one stays, and
 * --show-config can say where each came from.
 */
#ifndef RCOMP_SETTINGS_H
#define RCOMP_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct settings_key {
	const char *name; /* the key, and its long option --name */
	/* The default as --show-config prints it; "" for none. A flag's
	 * default is "false" (a flag takes true or false in a file). */
	const char *fallback;
	/* Checks value and stores it in the program's options; false if the key
	 * does not take it. Called for the default first. */
	bool (*set)(void *options, const char *value);
	const char *expects; /* what it takes, for the error: "a number from 1 to 240" */
};

/* Where a value came from, for --show-config and errors. */
struct settings_value {
	char *value;
	char *source; /* "default", "FILE:LINE", "FILE:LINE [app:foot]", "env RCOMP_FPS", "flag --fps" */
};

struct settings {
	const char *program; /* "rcomp-run" */
	const char *section; /* "run" */
	const char *kind; /* "app" or "host": the sections over it */
	const struct settings_key *keys;
	size_t nkeys;
	void *options;
	struct settings_value *values; /* one per key: the highest so far */
	/* The command line's, in order, until settings_resolve. */
	struct settings_flag {
		size_t key;
		char *value;
	} * flags;
	size_t nflags;
};

void settings_init(struct settings *settings, const char *program, const char *section,
	const char *kind, const struct settings_key *keys, size_t nkeys, void *options);
/* A key given on the command line (value NULL: a flag, so "true"); false if
 * no key has that name. */
bool settings_flag(struct settings *settings, const char *name, const char *value);
/* Reads the files and the environment, for the app or host named subject
 * (NULL: none), and stores every layer's values. 0, or 2 after printing one
 * line that names the file, the line and the key of a bad value. Unknown
 * keys and sections are warnings. */
int settings_resolve(struct settings *settings, const char *subject);
/* Every key: "key = value  # source". */
void settings_print(const struct settings *settings, FILE *out);
/* Where key's value came from: "default", "flag --name", ... */
const char *settings_source(const struct settings *settings, const char *name);
void settings_finish(struct settings *settings);

/* What the keys take: true/false (also yes/no, on/off, 1/0). */
bool settings_parse_bool(const char *value, bool *out);

#endif
