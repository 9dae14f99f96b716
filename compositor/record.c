/* This session's name and record; common/session.c keeps the directory. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "server.h"
#include "status.h"
#include "record.h"
#include "shell.h"

/* The command line for --list, shortened to fit. */
static void describe_app(char *out, size_t size, char **argv)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; argv[i] && len + 1 < size; i++) {
		int n = snprintf(out + len, size - len, "%s%s", i ? " " : "", argv[i]);
		if (n < 0) {
			break;
		}
		len += (size_t)n;
	}
	for (char *p = out; *p; p++) {
		if (*p == '\n' || *p == '\r') {
			*p = ' ';
		}
	}
}

/* Whether a session NAME runs (among the n listed) or its socket path is in
 * use by anything else. */
static bool name_taken(const char *dir, const struct session_info *infos, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(infos[i].name, name) == 0) {
			return true;
		}
	}
	char path[SESSION_PATH_MAX];
	struct stat st;
	return !session_path(path, sizeof(path), dir, name, "sock") || lstat(path, &st) == 0;
}

void record_update(struct rc_server *server)
{
	struct rc_record *record = &server->record;
	if (!record->dir[0]) {
		return;
	}
	if (!record->used || record->viewers != server->nviewers) {
		record->used = (int64_t)time(NULL);
		record->viewers = server->nviewers;
	}
	struct session_info info = {
		.pid = getpid(),
		.started = record->started,
		.attached = server->nviewers > 0,
		.viewers = server->nviewers,
		.used = record->used,
	};
	snprintf(info.name, sizeof(info.name), "%s", record->name);
	snprintf(info.app, sizeof(info.app), "%s", record->app);
	/* The toplevels' titles, for lists of sessions (rcomp-gate's page). */
	size_t used = 0;
	int count = 0;
	struct rc_window *window;
	wl_list_for_each(window, &server->windows, link)
	{
		if (!window->mapped || window->popup || count == SESSION_TITLES) {
			continue;
		}
		const char *title = window->impl->title(window);
		size_t len = strnlen(title, 120); /* never NULL */
		if (used + len + 2 > sizeof(info.titles)) {
			break;
		}
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)title[i];
			info.titles[used++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
		}
		info.titles[used++] = '\n';
		info.titles[used] = '\0';
		count++;
	}
	if (!session_write_info(record->dir, &info)) {
		log_error("cannot record session %s in %s", record->name, record->dir);
	}
}

bool record_init(struct rc_server *server, char **app)
{
	struct rc_record *record = &server->record;
	if (getrandom(&record->id, sizeof(record->id), 0) != (ssize_t)sizeof(record->id)) {
		log_error("cannot get random bytes: %s", strerror(errno));
		return false;
	}
	record->started = (int64_t)time(NULL);
	describe_app(record->app, sizeof(record->app), app);
	if (server->options.stdio && !server->options.persist) {
		/* Tied to its one viewer: nothing to list or attach to. */
		snprintf(record->name, sizeof(record->name), "stdio-%ld", (long)getpid());
		return true;
	}
	/* A --persist session outlives the login: not in the runtime dir. */
	if (!session_dir_create(record->dir, sizeof(record->dir), server->options.persist)) {
		record->dir[0] = '\0';
		return false;
	}
	/* Listing first also clears the records of sessions that died. Names
	 * are unique across all the session directories. */
	static struct session_info infos[256];
	int n = session_list(infos, 256);
	const char *name = server->options.name;
	if (name) {
		if (name_taken(record->dir, infos, n, name)) {
			log_error("a session named %s is running already: choose another --name, "
				  "or attach to it with rcomp-view --attach %s",
				name, name);
			server->exit_code = RC_EXIT_IN_USE;
			record->dir[0] = '\0';
			return false;
		}
		snprintf(record->name, sizeof(record->name), "%s", name);
	} else {
		int i = 0;
		do {
			snprintf(record->name, sizeof(record->name), "%d", i);
		} while (name_taken(record->dir, infos, n, record->name) && ++i < 1000);
	}
	record_update(server);
	return true;
}

void record_finish(struct rc_server *server)
{
	struct rc_record *record = &server->record;
	if (record->dir[0] && record->name[0]) {
		session_remove(record->dir, record->name);
	}
	/* Windows that go after this (the apps ended last) write nothing. */
	record->dir[0] = '\0';
}
