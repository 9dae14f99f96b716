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

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum settings_type {
	SETTINGS_CUSTOM, /* set checks and stores it */
	SETTINGS_BOOL, /* a bool at offset: true/false, yes/no, on/off or 1/0 */
	SETTINGS_STRING, /* a const char * at offset, NULL when empty */
	SETTINGS_SESSION, /* the same, a session name (session_name_ok) */
	SETTINGS_ADDRESS, /* the same, HOST:PORT, [V6ADDR]:PORT or :PORT */
};

struct settings_key {
	const char *name; /* the key, and its long option --name */
	/* The default as --show-config prints it; "" for none. */
	const char *fallback;
	bool flag; /* the option takes no value (--stats); the key, true or false */
	enum settings_type type;
	size_t offset; /* in the program's options, for BOOL and STRING */
	/* CUSTOM: checks value and stores it in the program's options; false
	 * if the key does not take it. Called for the default first. */
	bool (*set)(void *options, const char *value);
	const char *expects; /* what it takes, for the error: "a number from 1 to 240" */
};

/* A flag: --name, or name = true|false. */
#define SETTINGS_FLAG(key, type, field) \
	{ \
		(key), "false", true, SETTINGS_BOOL, offsetof(type, field), NULL, "true or false" \
	}
/* --name on|off. */
#define SETTINGS_ON_OFF(key, fallback, type, field) \
	{ \
		(key), (fallback), false, SETTINGS_BOOL, offsetof(type, field), NULL, "on or off" \
	}
#define SETTINGS_STRING(key, fallback, type, field, expects) \
	{ \
		(key), (fallback), false, SETTINGS_STRING, offsetof(type, field), NULL, (expects) \
	}
#define SETTINGS_SESSION(key, type, field) \
	{ \
		(key), "", false, SETTINGS_SESSION, offsetof(type, field), NULL, \
			"1 to 64 of A-Z a-z 0-9 . _ - (not starting with a dot)" \
	}
#define SETTINGS_ADDRESS(key, type, field) \
	{ \
		(key), "", false, SETTINGS_ADDRESS, offsetof(type, field), NULL, "HOST:PORT" \
	}
#define SETTINGS_CUSTOM(key, fallback, flag, set, expects) \
	{ \
		(key), (fallback), (flag), SETTINGS_CUSTOM, 0, (set), (expects) \
	}

/* getopt_long returns SETTINGS_OPTION + i for key i (settings_getopt). */
#define SETTINGS_OPTION 0x1000

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
	struct option *getopt; /* settings_getopt's */
};

void settings_init(struct settings *settings, const char *program, const char *section,
	const char *kind, const struct settings_key *keys, size_t nkeys, void *options);
/* What a program says when getopt_long returns '?' (an option it does not
 * know) or ':' (one without its value; the option string begins "+:" or
 * ":" and opterr is 0): one line naming it and pointing to --help, on
 * stderr. Returns the exit status for it, 2. */
int settings_bad_option(const char *program, int opt, char **argv);
/* The long options of getopt_long: the program's own (up to their {0}),
 * then one per key, which returns SETTINGS_OPTION + its index. The
 * settings keep them until settings_finish. */
struct option *settings_getopt(struct settings *settings, const struct option *own);
/* A key given on the command line (value NULL: a flag, so "true"); false if
 * no key has that name. */
bool settings_flag(struct settings *settings, const char *name, const char *value);
/* The same, for the key getopt_long returned (SETTINGS_OPTION + index). */
bool settings_option(struct settings *settings, int opt, const char *value);
/* Reads the files and the environment, for the app or host named subject
 * (NULL: none), and stores every layer's values. 0, or 2 after printing one
 * line that names the file, the line and the key of a bad value. Unknown
 * keys and sections are warnings. */
int settings_resolve(struct settings *settings, const char *subject);
/* Whether name was given on the command line (before or after
 * settings_resolve). */
bool settings_flagged(const struct settings *settings, const char *name);
/* Every key: "key = value  # source". */
void settings_print(const struct settings *settings, FILE *out);
/* Where key's value came from: "default", "flag --name", ... */
const char *settings_source(const struct settings *settings, const char *name);
void settings_finish(struct settings *settings);

/* What the keys take: true/false (also yes/no, on/off, 1/0). */
bool settings_parse_bool(const char *value, bool *out);
/* A frame rate: 1 to 240, or "auto" (0). */
bool settings_parse_fps(const char *value, int *out);

#endif
