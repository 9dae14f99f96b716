/*
 * Session directory and session records. A session NAME owns DIR/NAME.sock
 * (its listening socket), DIR/NAME.info (a few key=value lines), and
 * optionally DIR/NAME.log and DIR/NAME.token.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "procs.h"
#include "session.h"
#include "status.h"

bool session_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > SESSION_NAME_MAX || name[0] == '.') {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '.' || c == '_' || c == '-')) {
			return false;
		}
	}
	return true;
}

/* Room for DIR/NAME.token in a socket address. */
static bool dir_fits(const char *dir)
{
	return strlen(dir) + 1 + SESSION_NAME_MAX + 6 < SESSION_PATH_MAX;
}

/* Adds a + b unless it does not fit. */
static void add_dir(struct session_dir *dirs, int *n, enum session_dir_kind kind, const char *a,
	const char *b)
{
	int len = snprintf(dirs[*n].path, SESSION_PATH_MAX, "%s%s", a, b);
	if (len > 0 && len < SESSION_PATH_MAX) {
		dirs[(*n)++].kind = kind;
	}
}

static bool absolute(const char *path)
{
	return path && path[0] == '/';
}

int session_dirs(struct session_dir dirs[SESSION_DIRS_MAX])
{
	int n = 0;
	const char *env = getenv("RCOMP_DIR");
	if (env && *env) {
		add_dir(dirs, &n, SESSION_DIR_OVERRIDE, env, "");
		return n;
	}
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	if (absolute(runtime)) {
		add_dir(dirs, &n, SESSION_DIR_RUNTIME, runtime, "/rcomp");
	}
	const char *tmp = getenv("TMPDIR");
	char uid[32];
	snprintf(uid, sizeof(uid), "/rcomp-%u", (unsigned)getuid());
	add_dir(dirs, &n, SESSION_DIR_TMP, absolute(tmp) ? tmp : "/tmp", uid);
	const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (absolute(cache)) {
		add_dir(dirs, &n, SESSION_DIR_CACHE, cache, "/rcomp");
	} else if (absolute(home)) {
		add_dir(dirs, &n, SESSION_DIR_CACHE, home, "/.cache/rcomp");
	}
	return n;
}

/* Whether dir is a directory of ours that no one else may enter; if not,
 * why in why. Missing is not usable, with errno ENOENT. */
static bool dir_usable(const char *dir, char *why, size_t why_size)
{
	struct stat st;
	if (lstat(dir, &st) < 0) {
		snprintf(why, why_size, "%s", strerror(errno));
		return false;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, why_size, "it is not a directory");
	} else if (st.st_uid != getuid()) {
		snprintf(why, why_size, "it belongs to user %u", (unsigned)st.st_uid);
	} else if (st.st_mode & 077) {
		snprintf(why, why_size, "others may enter it (mode %03o, not 700)",
			(unsigned)(st.st_mode & 0777));
	} else {
		return true;
	}
	errno = EPERM;
	return false;
}

static bool make_dir(const char *dir, bool parent, char *why, size_t why_size)
{
	if (!dir_fits(dir)) {
		snprintf(why, why_size, "its path is too long for a socket address");
		return false;
	}
	if (parent) {
		/* ~/.cache may not exist yet: make it as private as ours. */
		char up[SESSION_PATH_MAX];
		snprintf(up, sizeof(up), "%s", dir);
		char *slash = strrchr(up, '/');
		if (slash && slash != up) {
			*slash = '\0';
			(void)mkdir(up, 0700);
		}
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(why, why_size, "%s", strerror(errno));
		return false;
	}
	return dir_usable(dir, why, why_size);
}

bool session_dir_create(char *out, size_t size, bool durable)
{
	struct session_dir dirs[SESSION_DIRS_MAX];
	char why[160];
	int n = session_dirs(dirs);
	for (int i = 0; i < n; i++) {
		const struct session_dir *dir = &dirs[i];
		if (durable && dir->kind == SESSION_DIR_RUNTIME) {
			continue; /* gone when the login ends */
		}
		if (make_dir(dir->path, dir->kind == SESSION_DIR_CACHE, why, sizeof(why))) {
			snprintf(out, size, "%s", dir->path);
			return true;
		}
		if (dir->kind == SESSION_DIR_OVERRIDE || i == n - 1) {
			log_error("cannot use the session directory %s: %s", dir->path, why);
			return false;
		}
		log_info("passing over the session directory %s (%s): trying %s", dir->path, why,
			dirs[i + 1].path);
	}
	log_error("no session directory: set RCOMP_DIR");
	return false;
}

bool session_path(char *out, size_t size, const char *dir, const char *name, const char *suffix)
{
	int n = snprintf(out, size, "%s/%s.%s", dir, name, suffix);
	return n > 0 && (size_t)n < size && (size_t)n < SESSION_PATH_MAX;
}

bool session_write_info(const char *dir, const struct session_info *info)
{
	char path[SESSION_PATH_MAX], tmp[SESSION_PATH_MAX + 8];
	if (!session_path(path, sizeof(path), dir, info->name, "info")) {
		return false;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		return false;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return false;
	}
	fprintf(f, "pid=%ld\nstarted=%lld\nattached=%d\nused=%lld\napp=%s\n", (long)info->pid,
		(long long)info->started, info->viewers > 0 ? info->viewers : info->attached,
		(long long)info->used, info->app);
	for (const char *t = info->titles; *t;) {
		size_t n = strcspn(t, "\n");
		fprintf(f, "title=%.*s\n", (int)n, t);
		t += n + (t[n] == '\n');
	}
	bool ok = fclose(f) == 0 && rename(tmp, path) == 0;
	if (!ok) {
		unlink(tmp);
	}
	return ok;
}

bool session_label_ok(const char *label, size_t len)
{
	if (len > SESSION_LABEL_MAX) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)label[i];
		if (c < 0x20 || c == 0x7f) {
			return false;
		}
	}
	return true;
}

bool session_write_about(const char *dir, const char *name, const char *entry, const char *label)
{
	char path[SESSION_PATH_MAX], tmp[SESSION_PATH_MAX + 8];
	if (!session_path(path, sizeof(path), dir, name, "about") ||
		!session_label_ok(label, strlen(label)) ||
		!session_label_ok(entry, strlen(entry))) {
		return false;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		return false;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return false;
	}
	fprintf(f, "entry=%s\nlabel=%s\n", entry, label);
	bool ok = fclose(f) == 0 && rename(tmp, path) == 0;
	if (!ok) {
		unlink(tmp);
	}
	return ok;
}

/* DIR/NAME.about, where there is one. */
static void read_about(const char *dir, const char *name, struct session_info *info)
{
	char path[SESSION_PATH_MAX];
	FILE *f = session_path(path, sizeof(path), dir, name, "about") ? fopen(path, "re") : NULL;
	if (!f) {
		return;
	}
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		size_t len = strlen(line);
		if (strncmp(line, "entry=", 6) == 0 && session_label_ok(line + 6, len - 6) &&
			len - 6 < sizeof(info->entry)) {
			memcpy(info->entry, line + 6, len - 5);
		} else if (strncmp(line, "label=", 6) == 0 && session_label_ok(line + 6, len - 6)) {
			memcpy(info->label, line + 6, len - 5);
		}
	}
	fclose(f);
}

void session_remove(const char *dir, const char *name)
{
	static const char *const suffixes[] = {"sock", "info", "token", "watch-token", "log",
		"about", "thumb"};
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char path[SESSION_PATH_MAX];
		if (session_path(path, sizeof(path), dir, name, suffixes[i])) {
			unlink(path);
		}
	}
}

static bool read_info(const char *dir, const char *name, struct session_info *info)
{
	char path[SESSION_PATH_MAX];
	if (!session_path(path, sizeof(path), dir, name, "info")) {
		return false;
	}
	FILE *f = fopen(path, "re");
	if (!f) {
		return false;
	}
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", name);
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "pid=", 4) == 0) {
			info->pid = (pid_t)strtol(line + 4, NULL, 10);
		} else if (strncmp(line, "started=", 8) == 0) {
			info->started = strtoll(line + 8, NULL, 10);
		} else if (strncmp(line, "attached=", 9) == 0) {
			/* How many viewers are attached. */
			long n = strtol(line + 9, NULL, 10);
			info->viewers = n > 0 && n < 1000 ? (int)n : 0;
			info->attached = info->viewers > 0;
		} else if (strncmp(line, "used=", 5) == 0) {
			info->used = strtoll(line + 5, NULL, 10);
		} else if (strncmp(line, "app=", 4) == 0) {
			size_t len = strnlen(line + 4, sizeof(info->app) - 1);
			memcpy(info->app, line + 4, len);
			info->app[len] = '\0';
		} else if (strncmp(line, "title=", 6) == 0) {
			size_t used = strlen(info->titles), len = strlen(line + 6);
			if (used + len + 2 <= sizeof(info->titles)) {
				memcpy(info->titles + used, line + 6, len);
				info->titles[used + len] = '\n';
				info->titles[used + len + 1] = '\0';
			}
		}
	}
	fclose(f);
	read_about(dir, name, info);
	struct stat st;
	info->thumb = session_path(path, sizeof(path), dir, name, "thumb") &&
		stat(path, &st) == 0 && S_ISREG(st.st_mode);
	return info->pid > 0;
}

static int by_start(const void *a, const void *b)
{
	const struct session_info *x = a, *y = b;
	if (x->started != y->started) {
		return x->started < y->started ? -1 : 1;
	}
	return strcmp(x->name, y->name);
}

static int list_dir(const char *dir, struct session_info *out, int max)
{
	DIR *d = opendir(dir);
	if (!d) {
		return errno == ENOENT ? 0 : -1;
	}
	int n = 0;
	struct dirent *entry;
	while ((entry = readdir(d)) && n < max) {
		size_t len = strlen(entry->d_name);
		if (len < 6 || strcmp(entry->d_name + len - 5, ".sock") != 0) {
			continue;
		}
		char name[SESSION_NAME_MAX + 1];
		if (len - 5 > SESSION_NAME_MAX) {
			continue;
		}
		memcpy(name, entry->d_name, len - 5);
		name[len - 5] = '\0';
		if (!session_name_ok(name, len - 5)) {
			continue;
		}
		struct session_info *info = &out[n];
		if (!read_info(dir, name, info) || (kill(info->pid, 0) < 0 && errno == ESRCH)) {
			/* Its process is gone: a session that was killed. */
			session_remove(dir, name);
			continue;
		}
		size_t dir_len = strnlen(dir, sizeof(info->dir) - 1);
		memcpy(info->dir, dir, dir_len);
		info->dir[dir_len] = '\0';
		n++;
	}
	closedir(d);
	return n;
}

int session_list(struct session_info *out, int max)
{
	struct session_dir dirs[SESSION_DIRS_MAX];
	char why[160];
	int ndirs = session_dirs(dirs), n = 0;
	for (int i = 0; i < ndirs; i++) {
		const char *dir = dirs[i].path;
		if (!dir_usable(dir, why, sizeof(why))) {
			if (errno == ENOENT) {
				continue;
			}
			if (dirs[i].kind == SESSION_DIR_OVERRIDE) {
				log_error("cannot use the session directory %s: %s", dir, why);
				return -1;
			}
			/* Not ours: nothing of ours is in it. */
			log_debug("passing over %s: %s", dir, why);
			continue;
		}
		int found = list_dir(dir, out + n, max - n);
		if (found < 0) {
			log_error("cannot read the session directory %s: %s", dir, strerror(errno));
			return -1;
		}
		n += found;
	}
	qsort(out, (size_t)n, sizeof(*out), by_start);
	return n;
}

int session_choose(const struct session_info *infos, int n, const char *name, const char *verb,
	char *err, size_t err_size)
{
	if (name) {
		for (int i = 0; i < n; i++) {
			if (strcmp(infos[i].name, name) == 0) {
				return i;
			}
		}
		snprintf(err, err_size,
			"no session named %s is running: --list shows those that are", name);
		return -RC_EXIT_NO_SESSION;
	}
	int detached = 0, chosen = -1;
	for (int i = 0; i < n; i++) {
		if (!infos[i].attached) {
			detached++;
			chosen = i;
		}
	}
	if (n == 1) {
		return 0;
	}
	if (detached == 1) {
		return chosen;
	}
	if (n == 0) {
		snprintf(err, err_size, "%s",
			strcmp(verb, "--stop") == 0
				? "no session is running: there is none to stop"
				: "no session is running: start one with rcomp-run -- APP (from "
				  "your desktop: rcomp-view ssh HOST -- APP)");
		return -RC_EXIT_NO_SESSION;
	}
	size_t len = (size_t)snprintf(err, err_size, "%d sessions are running (", n);
	for (int i = 0; i < n && len < err_size; i++) {
		len += (size_t)snprintf(err + len, err_size - len, "%s%s", i ? ", " : "",
			infos[i].name);
	}
	if (len < err_size) {
		snprintf(err + len, err_size - len, ") and none is named: choose one with %s NAME",
			verb);
	}
	return -RC_EXIT_SEVERAL;
}

bool session_print_list(FILE *out)
{
	static struct session_info infos[256];
	int n = session_list(infos, 256);
	if (n < 0) {
		return false;
	}
	if (n == 0) {
		fprintf(out, "no sessions\n");
		return true;
	}
	fprintf(out, "%-16s %8s  %-19s  %-11s  %9s  %s\n", "SESSION", "PID", "STARTED", "VIEWERS",
		"PROCESSES", "APP");
	for (int i = 0; i < n; i++) {
		char when[32] = "?";
		time_t t = (time_t)infos[i].started;
		struct tm tm;
		if (localtime_r(&t, &tm)) {
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		}
		char viewers[24] = "detached";
		if (infos[i].viewers > 0) {
			snprintf(viewers, sizeof(viewers), "%d attached", infos[i].viewers);
		}
		/* What runs in it: rcomp-run's reaper, sound server and
		 * Xwayland, and all the app has started. */
		char procs[16] = "?";
		int below = procs_below(infos[i].pid, NULL, 0);
		if (below >= 0) {
			snprintf(procs, sizeof(procs), "%d", below);
		}
		fprintf(out, "%-16s %8ld  %-19s  %-11s  %9s  %s\n", infos[i].name,
			(long)infos[i].pid, when, viewers, procs, infos[i].app);
	}
	return true;
}
