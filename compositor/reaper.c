/*
 * The session's reaper (reaper.h). It runs as rcomp-run --reaper, exec'd
 * from a child of rcomp-run, or, where that exec fails, in that child
 * itself: so nothing here allocates or uses stdio (a child of a process
 * with threads may only make system calls).
 *
 * Descriptors: 0-2 are what the app gets; 3 the control pipe's read end,
 * 4 the status pipe's write end, 5 the read end of the pipe the app's
 * output comes in on, 6 the log (both -1 where the log is no file). The
 * log is opened for appending: rcomp-run (and what it started itself,
 * the sound server, Xwayland) append their own lines to it at once, the
 * reaper appends the app's output.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procs.h"
#include "reaper.h"

/* After the session's processes have ended, and rcomp-run is gone, what
 * still holds the output pipe (a server of rcomp-run's own) has this long
 * to let go before the reaper leaves. */
#define DRAIN_MS 2000
#define CHUNK (64 * 1024)

struct reaper {
	int control, status, output, log;
	/* The log opened again to read and write it anywhere (log is as
	 * rcomp-run's standard error was opened: for writing, appending);
	 * -1 where it cannot be: the log then stops at its cap. */
	int edit;
	bool full; /* stopped at its cap, for want of edit */
	int grace_ms;
	uint64_t log_max;
	pid_t app;
	bool app_exited, said_empty, ended, control_gone;
	/* The log: what its first part ends at (kept for good once the log
	 * first reaches its cap), and what was dropped after it in all. */
	uint64_t head_end, marker_len, dropped;
};

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void say(struct reaper *r, enum reaper_say what, int32_t a, int32_t b, int32_t c)
{
	struct reaper_msg msg = {.say = what, .a = a, .b = b, .c = c};
	/* Under PIPE_BUF: whole or not at all. Where rcomp-run is gone, no
	 * one hears it. */
	ssize_t n = write(r->status, &msg, sizeof(msg));
	(void)n;
}

/* Decimal digits of v at out; returns their count. */
static size_t put_number(char *out, uint64_t v)
{
	char digits[24];
	size_t n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++) {
		out[i] = digits[n - 1 - i];
	}
	return n;
}

static size_t put_text(char *out, const char *text)
{
	size_t n = strlen(text);
	memcpy(out, text, n);
	return n;
}

static bool write_all_at(int fd, const char *buf, size_t n, off_t at)
{
	while (n > 0) {
		ssize_t w = pwrite(fd, buf, n, at);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			return false;
		}
		buf += w;
		n -= (size_t)w;
		at += w;
	}
	return true;
}

/* Where the line holding offset at (or the next) starts, reading at most
 * a chunk ahead; at itself where no newline is near. */
static uint64_t line_start(int fd, uint64_t at, uint64_t end, bool backward)
{
	static char buf[4096];
	uint64_t from = backward ? (at > sizeof(buf) ? at - sizeof(buf) : 0) : at;
	uint64_t to = backward ? at : (at + sizeof(buf) < end ? at + sizeof(buf) : end);
	ssize_t n = to > from ? pread(fd, buf, (size_t)(to - from), (off_t)from) : 0;
	if (n <= 0) {
		return at;
	}
	if (backward) {
		for (ssize_t i = n - 1; i >= 0; i--) {
			if (buf[i] == '\n') {
				return from + (uint64_t)i + 1;
			}
		}
		return at;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			return from + (uint64_t)i + 1;
		}
	}
	return at;
}

static uint64_t log_size(struct reaper *r)
{
	struct stat st;
	return fstat(r->edit, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Moves [from, end) of the log to at; returns where it ended, or 0. */
static uint64_t move_down(struct reaper *r, uint64_t from, uint64_t end, uint64_t at)
{
	static char buf[CHUNK];
	while (from < end) {
		size_t n = end - from < sizeof(buf) ? (size_t)(end - from) : sizeof(buf);
		ssize_t got = pread(r->edit, buf, n, (off_t)from);
		if (got <= 0 || !write_all_at(r->edit, buf, (size_t)got, (off_t)at)) {
			return 0;
		}
		from += (uint64_t)got;
		at += (uint64_t)got;
	}
	return at;
}

/*
 * The log is past its cap: it keeps its first quarter (what the session
 * said first, as it started) and the newest half of the rest, with a line
 * between them saying how much was dropped there. The newest is moved down
 * over the oldest, and the file cut where it now ends. What others append
 * meanwhile is moved too, until the log stops growing; a line appended
 * between the last look and the cut is lost.
 */
static void compact(struct reaper *r, uint64_t end)
{
	if (r->head_end == 0) {
		r->head_end = line_start(r->edit, r->log_max / 4, end, true);
	}
	uint64_t keep = r->log_max / 2;
	uint64_t from = end > keep ? end - keep : 0;
	uint64_t after = r->head_end + r->marker_len;
	from = from > after ? line_start(r->edit, from, end, false) : after;
	r->dropped += from - after;
	char marker[256];
	size_t m = put_text(marker, "[rcomp-run: ");
	m += put_number(marker + m, r->dropped);
	m += put_text(marker + m,
		" bytes of the session's output were dropped here in all: its "
		"log keeps its first ");
	m += put_number(marker + m, r->head_end / 1024);
	m += put_text(marker + m, " KiB and newest ");
	m += put_number(marker + m, keep / 1024);
	m += put_text(marker + m, " KiB (log-max)]\n");
	if (!write_all_at(r->edit, marker, m, (off_t)r->head_end)) {
		return;
	}
	r->marker_len = m;
	uint64_t to = move_down(r, from, end, r->head_end + m);
	for (int round = 0; to && round < 8; round++) {
		uint64_t grown = log_size(r);
		if (grown <= end) {
			break;
		}
		to = move_down(r, end, grown, to);
		end = grown;
	}
	if (to) {
		int got = ftruncate(r->edit, (off_t)to);
		(void)got;
	}
}

/* Without a way to edit the log, it stops at its cap, and says so. */
static void stop_at_cap(struct reaper *r, size_t n)
{
	if (!r->full) {
		r->full = true;
		char marker[160];
		size_t m = put_text(marker,
			"\n[rcomp-run: the session's log reached its cap ("
			"log-max): what the session writes now is dropped]\n");
		ssize_t w = write(r->log, marker, m);
		(void)w;
	}
	r->dropped += n;
}

/* Appends what the session wrote, keeping the log under its cap. */
static void log_append(struct reaper *r, const char *buf, size_t n)
{
	struct stat st;
	uint64_t end = fstat(r->log, &st) == 0 ? (uint64_t)st.st_size : 0;
	if (r->full || (end + n > r->log_max && r->edit < 0)) {
		stop_at_cap(r, n);
		return;
	}
	if (end + n > r->log_max) {
		compact(r, end);
	}
	while (n > 0) {
		ssize_t w = write(r->log, buf, n);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			return; /* a full disk: the rest of this chunk is lost */
		}
		buf += w;
		n -= (size_t)w;
	}
}

/* The output has ended: a log stopped at its cap says what it dropped. */
static void log_done(struct reaper *r)
{
	if (!r->full) {
		return;
	}
	char line[128];
	size_t m = put_text(line, "[rcomp-run: ");
	m += put_number(line + m, r->dropped);
	m += put_text(line + m, " bytes of the session's output were dropped at the cap]\n");
	ssize_t w = write(r->log, line, m);
	(void)w;
}

/* Reads what is waiting on the output pipe; false at its end. */
static bool drain(struct reaper *r)
{
	static char buf[CHUNK];
	ssize_t n = read(r->output, buf, sizeof(buf));
	if (n < 0) {
		return errno == EINTR || errno == EAGAIN;
	}
	if (n == 0) {
		return false;
	}
	log_append(r, buf, (size_t)n);
	return true;
}

static void reap(struct reaper *r)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == r->app && !r->app_exited) {
			r->app_exited = true;
			int code = WIFEXITED(status)
				? WEXITSTATUS(status)
				: (WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1);
			say(r, REAPER_EXITED, code, 0, 0);
		}
	}
	if (pid < 0 && errno == ECHILD && r->app_exited && !r->said_empty) {
		r->said_empty = true;
		say(r, REAPER_EMPTY, 0, 0, 0);
	}
}

/* The app, in a child of ours: 0-2 as they are, its own process group,
 * the signals as a new process has them. */
static pid_t start_app(struct reaper *r, char **argv, char **envp)
{
	int report[2];
	if (pipe2(report, O_CLOEXEC) < 0) {
		say(r, REAPER_FAILED, errno, 0, 0);
		return -1;
	}
	pid_t self = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		say(r, REAPER_FAILED, errno, 0, 0);
		close(report[0]);
		close(report[1]);
		return -1;
	}
	if (pid == 0) {
		close(report[0]);
		static const int reset[] = {SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGPIPE, SIGCHLD};
		for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++) {
			signal(reset[i], SIG_DFL);
		}
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* Should the reaper itself be killed, the app goes with it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != self) {
			_exit(1); /* it was, before the line above */
		}
		setpgid(0, 0);
		execvpe(argv[0], argv, envp);
		int err = errno;
		ssize_t n = write(report[1], &err, sizeof(err));
		(void)n;
		_exit(err == ENOENT ? 127 : 126);
	}
	close(report[1]);
	setpgid(pid, pid);
	int err;
	ssize_t n;
	do {
		n = read(report[0], &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n == (ssize_t)sizeof(err)) {
		say(r, REAPER_FAILED, err, 0, 0);
	} else {
		say(r, REAPER_STARTED, pid, 0, 0);
	}
	return pid;
}

static void end_all(struct reaper *r)
{
	struct procs_ended e = procs_end_below(r->grace_ms, 0);
	r->ended = true;
	reap(r);
	say(r, REAPER_ENDED, e.asked, e.killed, e.left);
}

static int run(struct reaper *r, char **argv, char **envp)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_NAME, "rcomp-reaper");
	/* rcomp-run says when the session ends: a terminal's ^C, a hangup or
	 * a stop meant for rcomp-run does not end the reaper first. */
	static const int ignore[] = {SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGPIPE};
	for (size_t i = 0; i < sizeof(ignore) / sizeof(ignore[0]); i++) {
		signal(ignore[i], SIG_IGN);
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	int own[] = {r->control, r->status, r->output, r->log};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		if (own[i] >= 0) {
			fcntl(own[i], F_SETFD, FD_CLOEXEC);
		}
	}
	r->edit = -1;
	if (r->log >= 0) {
		char path[32] = "/proc/self/fd/";
		path[14] = (char)('0' + r->log % 10); /* a descriptor of 0-9: see above */
		path[15] = '\0';
		r->edit = r->log < 10 ? open(path, O_RDWR | O_CLOEXEC) : -1;
		fcntl(r->output, F_SETFL, fcntl(r->output, F_GETFL) | O_NONBLOCK);
	}
	r->app = start_app(r, argv, envp);
	if (r->output >= 0) {
		/* The app has the output pipe's write end as its 1 and 2: the
		 * reaper keeps none, so the pipe ends when the writers do. */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			close(null);
		}
	}
	if (r->app < 0) {
		r->app_exited = true;
	}
	uint64_t leave_at = 0;
	for (;;) {
		reap(r);
		if (r->ended && r->output < 0) {
			return 0;
		}
		if (r->ended && r->control_gone && !leave_at) {
			leave_at = now_ms() + DRAIN_MS;
		}
		if (leave_at && now_ms() >= leave_at) {
			return 0;
		}
		struct pollfd fds[3] = {
			{.fd = r->control_gone || r->ended ? -1 : r->control, .events = POLLIN},
			{.fd = r->output, .events = POLLIN},
			{.fd = sigfd, .events = POLLIN},
		};
		int timeout = leave_at ? (int)(leave_at - now_ms()) : -1;
		if (poll(fds, 3, sigfd < 0 ? 100 : timeout) < 0 && errno != EINTR) {
			return 1;
		}
		if (fds[2].revents & POLLIN) {
			struct signalfd_siginfo info;
			while (read(sigfd, &info, sizeof(info)) == sizeof(info)) {
			}
		}
		if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (!drain(r)) {
				log_done(r);
				close(r->output);
				r->output = -1;
			}
		}
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char byte;
			ssize_t n = read(r->control, &byte, 1);
			if (n <= 0) {
				/* rcomp-run is gone, however it went. */
				r->control_gone = true;
			}
			end_all(r);
		}
	}
}

/* A small number from text, or -1. */
static long number(const char *text)
{
	long v = 0;
	bool negative = *text == '-';
	text += negative;
	if (!*text) {
		return -1;
	}
	for (; *text; text++) {
		if (*text < '0' || *text > '9' || v > 1L << 40) {
			return -1;
		}
		v = v * 10 + (*text - '0');
	}
	return negative ? -v : v;
}

int reaper_run(int control, int status, int output, int log, int grace_ms, uint64_t log_max,
	char **argv, char **envp)
{
	struct reaper r = {
		.control = control,
		.status = status,
		.output = output,
		.log = log,
		.grace_ms = grace_ms,
		.log_max = log_max < REAPER_LOG_MIN ? REAPER_LOG_MIN : log_max,
	};
	return run(&r, argv, envp);
}

int reaper_main(int argc, char **argv)
{
	extern char **environ;
	/* --reaper CONTROL STATUS OUTPUT LOG GRACE_MS LOG_MAX -- APP... */
	if (argc < 10 || strcmp(argv[8], "--") != 0) {
		return 2;
	}
	long v[6];
	for (int i = 0; i < 6; i++) {
		v[i] = number(argv[2 + i]);
		if (v[i] < -1) {
			return 2;
		}
	}
	if (v[0] < 0 || v[1] < 0 || v[4] < 0 || v[5] < 0) {
		return 2;
	}
	return reaper_run((int)v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4], (uint64_t)v[5],
		argv + 9, environ);
}
