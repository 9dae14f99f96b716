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
#include <unistd.h>

#include "log.h"
#include "session.h"

bool session_dir(char *out, size_t size, bool create)
{
	const char *env = getenv("RCOMP_DIR");
	int n = env && *env ? snprintf(out, size, "%s", env)
			    : snprintf(out, size, "/tmp/rcomp-%u", (unsigned)getuid());
	if (n < 0 || (size_t)n >= size ||
		(size_t)n + 1 + WIRE_MAX_SESSION_NAME + 6 >= SESSION_PATH_MAX) {
		log_error("session directory path is too long: %s", out);
		return false;
	}
	if (create && mkdir(out, 0700) < 0 && errno != EEXIST) {
		log_error("cannot create the session directory %s: %s", out, strerror(errno));
		return false;
	}
	struct stat st;
	if (lstat(out, &st) < 0) {
		if (!create && errno == ENOENT) {
			return true; /* no sessions yet */
		}
		log_error("cannot use the session directory %s: %s", out, strerror(errno));
		return false;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
		log_error("refusing the session directory %s: it must be a directory of user %u "
			  "with mode 0700",
			out, (unsigned)getuid());
		return false;
	}
	return true;
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
	fprintf(f, "pid=%ld\nstarted=%lld\nattached=%d\napp=%s\n", (long)info->pid,
		(long long)info->started, info->attached ? 1 : 0, info->app);
	bool ok = fclose(f) == 0 && rename(tmp, path) == 0;
	if (!ok) {
		unlink(tmp);
	}
	return ok;
}

void session_remove(const char *dir, const char *name)
{
	static const char *const suffixes[] = {"sock", "info", "token", "log"};
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
			info->attached = line[9] == '1';
		} else if (strncmp(line, "app=", 4) == 0) {
			size_t len = strnlen(line + 4, sizeof(info->app) - 1);
			memcpy(info->app, line + 4, len);
			info->app[len] = '\0';
		}
	}
	fclose(f);
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

int session_list(const char *dir, struct session_info *out, int max)
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
		char name[WIRE_MAX_SESSION_NAME + 1];
		if (len - 5 > WIRE_MAX_SESSION_NAME) {
			continue;
		}
		memcpy(name, entry->d_name, len - 5);
		name[len - 5] = '\0';
		if (!wire_session_name_ok(name, len - 5)) {
			continue;
		}
		struct session_info info;
		if (!read_info(dir, name, &info) || (kill(info.pid, 0) < 0 && errno == ESRCH)) {
			/* Its process is gone: a session that was killed. */
			session_remove(dir, name);
			continue;
		}
		out[n++] = info;
	}
	closedir(d);
	qsort(out, (size_t)n, sizeof(*out), by_start);
	return n;
}

int session_choose(const struct session_info *infos, int n, const char *name, char *err,
	size_t err_size)
{
	if (name) {
		for (int i = 0; i < n; i++) {
			if (strcmp(infos[i].name, name) == 0) {
				return i;
			}
		}
		snprintf(err, err_size, "no session named %s (rcomp-run --list)", name);
		return -1;
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
		snprintf(err, err_size, "no session is running");
	} else {
		snprintf(err, err_size, "%d sessions are running: name one (rcomp-run --list)", n);
	}
	return -1;
}
