/*
 * The apps a user may start from the gate: the freedesktop desktop entries
 * of the user's and the system's data directories ($XDG_DATA_HOME, then
 * $XDG_DATA_DIRS; a user's entry hides the system's of the same id,
 * unless an allow-list names what may run),
 * without those marked NoDisplay or Hidden, those whose TryExec is not
 * installed, those that need a terminal, and those the administrator's
 * allow-list leaves out. Read as the user, in a child of the monitor.
 */
#ifndef RCOMP_GATE_APPS_H
#define RCOMP_GATE_APPS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

#define APPS_MAX 256
#define APP_ARGS_MAX 32

struct app {
	char id[128]; /* foot.desktop's is "foot"; org/x.desktop's "org-x" */
	char name[128];
	char icon[256];
	char exec[1024];
	bool shown; /* not NoDisplay, Hidden, a terminal's, or without its TryExec */
};

/* The apps (shown or not: a hidden entry still hides the system's),
 * sorted by name; how many. The user's own entries count unless the
 * administrator's allow-list says what runs and [apps] own is not yes:
 * then an allowed id is the system's entry, never one a user wrote. */
int apps_read(struct app *apps, int max, const struct gate_config *config);

/* The app of id that may be started, or NULL. */
const struct app *apps_find(const struct app *apps, int n, const struct gate_config *config,
	const char *id);

/* JSON: {"apps": [{"id": .., "name": .., "icon": true|false}, ...]} of
 * those shown and allowed, with "empty": why, where none is; into out (size
 * bytes). Its length, or -1 if it did not fit. */
int apps_json(const struct app *apps, int n, const struct gate_config *config, char *out,
	size_t size);

/* An app's Exec split into arguments as the specification quotes them,
 * field codes dropped (no files or URLs are passed). argv ends with NULL
 * and points into buf. False if it is not well formed or too long. */
bool apps_argv(const struct app *app, char *buf, size_t size, char *argv[APP_ARGS_MAX + 1]);

/* The icon's file: the Icon key's path, or the hicolor theme's or
 * pixmaps' largest PNG of that name. False if none is found. */
bool apps_icon_path(const struct app *app, char *out, size_t size);

#endif
