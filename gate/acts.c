#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acts.h"
#include "apps.h"
#include "json.h"
#include "log.h"
#include "monotonic.h"
#include "procs.h"
#include "session.h"
#include "user.h"
#include "wire.h"

/* How long an attach waits for a session that is starting to listen. */
#define OPEN_WAIT_MS 5000
#define SESSIONS_MAX 64

static uint64_t now_ms(void)
{
	return monotonic_usec() / 1000;
}

static void child_answer(int fd, enum gate_status status, const char *text, int passfd)
{
	struct gate_answer a = {.status = status};
	gate_send_answer(fd, &a, text, text ? strlen(text) : 0, passfd);
}

static void child_answer_bytes(int fd, const void *bytes, size_t len)
{
	struct gate_answer a = {.status = GATE_OK};
	gate_send_answer(fd, &a, bytes, len, -1);
}

static int list_sessions(struct session_info *infos)
{
	int n = session_list(infos, SESSIONS_MAX);
	return n < 0 ? 0 : n;
}

static void do_list(int fd)
{
	static struct session_info infos[SESSIONS_MAX];
	static char out[GATE_TEXT_MAX];
	int n = list_sessions(infos);
	struct json j = {out, sizeof(out), 0, false};
	json_put(&j, "[");
	for (int i = 0; i < n; i++) {
		struct json before = j;
		json_put(&j, i ? ",{\"name\":" : "{\"name\":");
		json_string(&j, infos[i].name, strlen(infos[i].name));
		json_put(&j, ",\"app\":");
		json_string(&j, infos[i].app, strlen(infos[i].app));
		json_put(&j, ",\"titles\":[");
		for (const char *t = infos[i].titles; *t;) {
			size_t tn = strcspn(t, "\n");
			if (t != infos[i].titles) {
				json_put(&j, ",");
			}
			json_string(&j, t, tn);
			t += tn + (t[tn] == '\n');
		}
		json_put(&j, "],\"label\":");
		json_string(&j, infos[i].label, strlen(infos[i].label));
		json_put(&j, ",\"entry\":");
		json_string(&j, infos[i].entry, strlen(infos[i].entry));
		char tail[160];
		snprintf(tail, sizeof(tail),
			",\"started\":%lld,\"used\":%lld,\"viewers\":%d,\"pid\":%d,\"thumb\":%s}",
			(long long)infos[i].started, (long long)infos[i].used, infos[i].viewers,
			(int)infos[i].pid, infos[i].thumb ? "true" : "false");
		json_put(&j, tail);
		if (j.full) {
			j = before; /* the sessions that fit */
			j.full = false;
			break;
		}
	}
	json_put(&j, "]");
	child_answer_bytes(fd, out, j.len);
}

static void do_apps(int fd, const struct gate_config *config)
{
	static struct app apps[APPS_MAX];
	int n = apps_read(apps, APPS_MAX, config);
	static char out[GATE_TEXT_MAX];
	int len = apps_json(apps, n, config, out, sizeof(out));
	if (len < 0) {
		child_answer(fd, GATE_FAILED, "too many apps to list", -1);
		return;
	}
	child_answer_bytes(fd, out, (size_t)len);
}

static void do_icon(int fd, const struct gate_config *config, const char *id)
{
	static struct app apps[APPS_MAX];
	int n = apps_read(apps, APPS_MAX, config);
	const struct app *app = apps_find(apps, n, config, id);
	char path[4096];
	static uint8_t bytes[GATE_TEXT_MAX];
	FILE *f = app && apps_icon_path(app, path, sizeof(path)) ? fopen(path, "re") : NULL;
	size_t len = f ? fread(bytes, 1, sizeof(bytes), f) : 0;
	bool whole = f && feof(f);
	if (f) {
		fclose(f);
	}
	static const uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	if (!whole || len < 8 || memcmp(bytes, png, 8) != 0) {
		child_answer(fd, GATE_NOT_FOUND, "no icon", -1);
		return;
	}
	child_answer_bytes(fd, bytes, len);
}

static const struct session_info *find_session(struct session_info *infos, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(infos[i].name, name) == 0) {
			return &infos[i];
		}
	}
	return NULL;
}

static void do_open(int fd, const char *name, uint32_t flags)
{
	static struct session_info infos[SESSIONS_MAX];
	/* A session that has just started may not listen yet; any other is
	 * there or not (a made-up name holds no act for seconds). */
	uint64_t until = now_ms() + (flags & GATE_OPEN_WAIT ? OPEN_WAIT_MS : 0);
	for (;;) {
		int n = list_sessions(infos);
		const struct session_info *s = find_session(infos, n, name);
		char path[SESSION_PATH_MAX];
		if (s && session_path(path, sizeof(path), s->dir, s->name, "sock")) {
			int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			struct sockaddr_un addr = {.sun_family = AF_UNIX};
			snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
			if (sock >= 0 &&
				connect(sock, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
				child_answer(fd, GATE_OK, NULL, sock);
				return;
			}
			if (sock >= 0) {
				close(sock);
			}
		}
		if (now_ms() >= until) {
			child_answer(fd, GATE_NOT_FOUND, "no such session of yours is running", -1);
			return;
		}
		usleep(50000);
	}
}

/* The user's own name for a session (empty: its windows' titles again),
 * kept beside it with the entry it came from. */
static void do_rename(int fd, const char *name, const char *label)
{
	static struct session_info infos[SESSIONS_MAX];
	int n = list_sessions(infos);
	const struct session_info *s = find_session(infos, n, name);
	if (!s) {
		child_answer(fd, GATE_NOT_FOUND, "no such session of yours is running", -1);
		return;
	}
	bool ok = session_write_about(s->dir, s->name, s->entry, label);
	child_answer(fd, ok ? GATE_OK : GATE_FAILED, ok ? NULL : "the name could not be kept", -1);
}

/* A session's picture (rcomp-run's thumb.c): a BMP, checked as one. */
static void do_thumb(int fd, const char *name)
{
	static struct session_info infos[SESSIONS_MAX];
	static uint8_t bytes[GATE_TEXT_MAX];
	int n = list_sessions(infos);
	const struct session_info *s = find_session(infos, n, name);
	char path[SESSION_PATH_MAX];
	FILE *f = s && session_path(path, sizeof(path), s->dir, s->name, "thumb")
		? fopen(path, "re")
		: NULL;
	size_t len = f ? fread(bytes, 1, sizeof(bytes), f) : 0;
	bool whole = f && feof(f);
	if (f) {
		fclose(f);
	}
	if (!whole || len < 54 || bytes[0] != 'B' || bytes[1] != 'M') {
		child_answer(fd, GATE_NOT_FOUND, "no picture of that session", -1);
		return;
	}
	child_answer_bytes(fd, bytes, len);
}

static void do_stop(int fd, const struct gate_config *config, const char *name)
{
	static struct session_info infos[SESSIONS_MAX];
	int n = list_sessions(infos);
	if (!find_session(infos, n, name)) {
		child_answer(fd, GATE_NOT_FOUND, "no such session of yours is running", -1);
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		execl(config->rcomp_run, config->rcomp_run, "--stop", name, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	bool ok = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	child_answer(fd, ok ? GATE_OK : GATE_FAILED, ok ? NULL : "the session did not stop", -1);
}

/*
 * A new session, as the user, in the child made for it: the app is one
 * the user may start, the user is under the limit, and rcomp-run runs it
 * under a new name. What the child says goes back on report (close-on-exec,
 * so a good exec says nothing more).
 */
static void start_as_user(int report, const struct gate_config *config, const char *id)
{
	static struct app apps[APPS_MAX];
	int n = apps_read(apps, APPS_MAX, config);
	const struct app *app = apps_find(apps, n, config, id);
	char buf[2048], *argv[APP_ARGS_MAX + 1];
	if (!app || !apps_argv(app, buf, sizeof(buf), argv)) {
		dprintf(report, "%d no app %s to start", GATE_NOT_FOUND, id);
		_exit(1);
	}
	static struct session_info infos[SESSIONS_MAX];
	if (list_sessions(infos) >= config->sessions_per_user) {
		dprintf(report,
			"%d you have %d sessions, as many as one may have here: stop one first",
			GATE_LIMIT, config->sessions_per_user);
		_exit(1);
	}
	char name[SESSION_NAME_MAX + 1], tag[9];
	if (!gate_random_hex(tag, 4)) {
		dprintf(report, "%d no random bytes", GATE_FAILED);
		_exit(1);
	}
	/* The app's id, in the characters a session's name may have. */
	int len = snprintf(name, sizeof(name), "%.40s", app->id);
	for (int i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '.' || c == '_' || c == '-')) {
			name[i] = '-';
		}
	}
	snprintf(name + len, sizeof(name) - (size_t)len, "-%s", tag);
	char *args[APP_ARGS_MAX + 8];
	int a = 0;
	args[a++] = (char *)config->rcomp_run;
	args[a++] = "--name";
	args[a++] = name;
	args[a++] = "--";
	for (int i = 0; argv[i]; i++) {
		args[a++] = argv[i];
	}
	args[a] = NULL;
	/* Its log where --persist puts a session's: DIR/NAME.log. */
	char dir[SESSION_PATH_MAX] = "", log[SESSION_PATH_MAX];
	int logfd = session_dir_create(dir, sizeof(dir), false) &&
			session_path(log, sizeof(log), dir, name, "log")
		? open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)
		: -1;
	if (logfd >= 0) {
		dup2(logfd, STDOUT_FILENO);
		dup2(logfd, STDERR_FILENO);
		close(logfd);
	}
	/* Where it came from, so that the page can start it again. */
	if (dir[0] && !session_write_about(dir, name, app->id, "")) {
		log_warning("cannot note session %s's entry in %s", name, dir);
	}
	dprintf(report, "%d %s", GATE_OK, name);
	execv(config->rcomp_run, args);
	dprintf(report, "\n%d cannot run %s: %s", GATE_FAILED, config->rcomp_run, strerror(errno));
	_exit(127);
}

/* What is left of a session once its rcomp-run has gone (killed, or
 * crashed, before its reaper could end it all) has this long from SIGTERM
 * to SIGKILL: rcomp-run's own default grace. */
#define KEEPER_GRACE_MS 3000

/* The keeper: root, it holds the user's PAM session for the session's life,
 * and is the child subreaper of everything in it, so that whatever of the
 * session outlives its rcomp-run comes back to it to be ended. */
static void do_start(int fd, const struct gate_config *config, const struct gate_user *user,
	const struct gate_request *req)
{
	char why[256];
	char **env = NULL;
	struct gate_pam *pam =
		gate_pam_open(config->pam_service, user->name, req->addr, &env, why, sizeof(why));
	if (!pam) {
		child_answer(fd, GATE_FAILED, why, -1);
		return;
	}
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		child_answer(fd, GATE_FAILED, "cannot make a pipe", -1);
		gate_pam_close(pam, env);
		return;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid_t pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		/* The session leads a process group of its own. */
		setsid();
		if (!gate_become(user, env, pipefd[1])) {
			dprintf(pipefd[1], "%d cannot become %s: %s", GATE_FAILED, user->name,
				strerror(errno));
			_exit(1);
		}
		start_as_user(pipefd[1], config, req->arg);
	}
	close(pipefd[1]);
	char said[512];
	size_t len = 0;
	ssize_t r;
	while (len < sizeof(said) - 1 &&
		(r = read(pipefd[0], said + len, sizeof(said) - 1 - len)) != 0) {
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			break;
		}
		len += (size_t)r;
	}
	close(pipefd[0]);
	said[len] = '\0';
	/* The last line is the verdict: "0 NAME", or a status and why. */
	char *last = strrchr(said, '\n');
	last = last ? last + 1 : said;
	char *text = strchr(last, ' ');
	int status = pid > 0 && text ? atoi(last) : GATE_FAILED;
	child_answer(fd, (enum gate_status)status, text ? text + 1 : "the session did not start",
		-1);
	close(fd);
	if (pid > 0) {
		int ws;
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
		}
		/* rcomp-run ends what it started before it exits; what is
		 * left here, it could not (it was killed). */
		struct procs_ended e = procs_end_below(KEEPER_GRACE_MS, 0);
		if (e.asked > 0) {
			log_info("session of %s ended with %d processes left running: %d ended at "
				 "SIGTERM, %d killed%s",
				user->name, e.asked, e.asked - e.killed, e.killed,
				e.left ? ", some could not be ended" : "");
		}
	}
	gate_pam_close(pam, env);
}

static void do_login(int fd, const struct gate_config *config, const struct gate_request *req)
{
	char why[256] = "";
	struct gate_user user;
	bool ok = gate_pam_login(config->pam_service, req->user, req->secret, req->addr, why,
		sizeof(why));
	if (ok && !gate_user_find(req->user, &user)) {
		ok = false;
		snprintf(why, sizeof(why), "root and accounts without a home may not log in here");
	}
	if (ok && !config->shells_any && !gate_user_login_shell(&user)) {
		/* Answered as a wrong password is; the log says why. */
		ok = false;
		snprintf(why, sizeof(why), "the account's shell (%.200s) is no login shell",
			user.shell);
	}
	child_answer(fd, ok ? GATE_OK : GATE_REFUSED, why, -1);
}

void acts_run(const struct gate_config *config, struct gate_request *req, int fd)
{
	signal(SIGCHLD, SIG_DFL);
	if (req->op == GATE_LOGIN) {
		do_login(fd, config, req);
		return;
	}
	struct gate_user user;
	if (!gate_user_find(req->user, &user)) {
		child_answer(fd, GATE_FAILED, "the account is gone", -1);
		return;
	}
	if (!config->shells_any && !gate_user_login_shell(&user)) {
		/* Its shell was taken away since it logged in. */
		child_answer(fd, GATE_REFUSED, "the account may not log in here", -1);
		return;
	}
	if (req->op == GATE_START) {
		do_start(fd, config, &user, req);
		return;
	}
	if (!gate_become(&user, NULL, fd)) {
		child_answer(fd, GATE_FAILED, "cannot become the user", -1);
		return;
	}
	switch (req->op) {
	case GATE_LIST:
		do_list(fd);
		break;
	case GATE_APPS:
		do_apps(fd, config);
		break;
	case GATE_ICON:
		do_icon(fd, config, req->arg);
		break;
	case GATE_OPEN:
		do_open(fd, req->arg, req->flags);
		break;
	case GATE_STOP:
		do_stop(fd, config, req->arg);
		break;
	case GATE_RENAME:
		do_rename(fd, req->arg, req->label);
		break;
	case GATE_THUMB:
		do_thumb(fd, req->arg);
		break;
	default:
		child_answer(fd, GATE_FAILED, "not an act of a child", -1);
	}
}
