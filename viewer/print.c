/*
 * The session's prints here: each arrives as a PDF (kind print, saved in
 * the download folder like a sent file) and is printed on this computer's
 * default printer with lp, or opened, or only saved (the print setting);
 * each way, the desktop's notification says what became of it and where
 * the PDF is. lp runs beside the loop, which reads what it says.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "notify.h"
#include "print.h"
#include "viewer.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The folder part of path, for "in DIR". */
static void folder_of(char *out, size_t size, const char *path)
{
	const char *name = base_name(path);
	snprintf(out, size, "%.*s", (int)(name - path - (name > path)), path);
}

void print_open(const char *path)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (fork() == 0) {
			execlp("xdg-open", "xdg-open", path, (char *)NULL);
			_exit(127);
		}
		_exit(0);
	}
	if (pid > 0) {
		waitpid(pid, NULL, 0);
	}
}

static bool start_lp(struct rv_viewer *viewer, const char *path)
{
	struct rv_print_job *job = NULL;
	for (int i = 0; i < RV_PRINT_JOBS && !job; i++) {
		if (!viewer->print_jobs[i].pid) {
			job = &viewer->print_jobs[i];
		}
	}
	int out[2];
	if (!job || pipe2(out, O_CLOEXEC) < 0) {
		return false;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(out[0]);
		close(out[1]);
		return false;
	}
	if (pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		dup2(out[1], STDERR_FILENO);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
		}
		execlp("lp", "lp", "-t", base_name(path), "--", path, (char *)NULL);
		dprintf(STDERR_FILENO, "lp is not installed (Debian: cups-client)");
		_exit(127);
	}
	close(out[1]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	*job = (struct rv_print_job){.pid = pid, .fd = out[0]};
	snprintf(job->path, sizeof(job->path), "%s", path);
	return true;
}

void print_received(struct rv_viewer *viewer, const char *path)
{
	char folder[PATH_MAX], summary[300], body[PATH_MAX + 64];
	const char *name = base_name(path);
	folder_of(folder, sizeof(folder), path);
	switch (viewer->options.print) {
	case RV_PRINT_LP:
		if (start_lp(viewer, path)) {
			return; /* said when lp has answered */
		}
		log_warning("the session's print %s was not printed: %d prints are being "
			    "handed to lp already; it is in %s",
			name, RV_PRINT_JOBS, folder);
		snprintf(summary, sizeof(summary), "%.200s was not printed", name);
		snprintf(body, sizeof(body), "other prints are under way; the PDF is in %s",
			folder);
		break;
	case RV_PRINT_OPEN:
		print_open(path);
		snprintf(summary, sizeof(summary), "Print %.200s opened", name);
		snprintf(body, sizeof(body), "the PDF is in %s", folder);
		break;
	default:
		snprintf(summary, sizeof(summary), "Print %.200s saved", name);
		snprintf(body, sizeof(body), "in %s", folder);
		break;
	}
	notify_local(viewer, summary, body);
}

static void ended(struct rv_viewer *viewer, struct rv_print_job *job)
{
	int status = 0;
	waitpid(job->pid, &status, 0);
	close(job->fd);
	while (job->said_len && (job->said[job->said_len - 1] == '\n')) {
		job->said_len--;
	}
	job->said[job->said_len] = '\0';
	char folder[PATH_MAX], summary[300], body[PATH_MAX + 600];
	const char *name = base_name(job->path);
	folder_of(folder, sizeof(folder), job->path);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		log_info("the session's print %s went to this computer's default printer (%s)",
			name, job->said);
		snprintf(summary, sizeof(summary), "Printed %.200s", name);
		snprintf(body, sizeof(body), "on this computer's default printer; the PDF is in %s",
			folder);
	} else {
		log_warning("the session's print %s was not printed: lp said: %s; it is in %s",
			name, job->said_len ? job->said : "nothing", folder);
		snprintf(summary, sizeof(summary), "%.200s was not printed", name);
		snprintf(body, sizeof(body), "lp said: %s; the PDF is in %s",
			job->said_len ? job->said : "nothing", folder);
	}
	notify_local(viewer, summary, body);
	*job = (struct rv_print_job){0};
}

void print_poll_fds(struct rv_viewer *viewer, struct pollfd *pfds)
{
	for (int i = 0; i < RV_PRINT_JOBS; i++) {
		const struct rv_print_job *job = &viewer->print_jobs[i];
		pfds[i] = (struct pollfd){.fd = job->pid ? job->fd : -1, .events = POLLIN};
	}
}

void print_handle_poll(struct rv_viewer *viewer, const struct pollfd *pfds)
{
	for (int i = 0; i < RV_PRINT_JOBS; i++) {
		struct rv_print_job *job = &viewer->print_jobs[i];
		if (!job->pid || pfds[i].fd < 0 || !pfds[i].revents) {
			continue;
		}
		char buf[512];
		ssize_t n = read(job->fd, buf, sizeof(buf));
		if (n > 0) {
			size_t room = sizeof(job->said) - 1 - job->said_len;
			size_t take = (size_t)n < room ? (size_t)n : room;
			memcpy(job->said + job->said_len, buf, take);
			job->said_len += take;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			ended(viewer, job);
		}
	}
}

void print_finish(struct rv_viewer *viewer)
{
	for (int i = 0; i < RV_PRINT_JOBS; i++) {
		struct rv_print_job *job = &viewer->print_jobs[i];
		if (job->pid) {
			/* lp hands the job over in a moment: let it end. */
			waitpid(job->pid, NULL, 0);
			close(job->fd);
			*job = (struct rv_print_job){0};
		}
	}
}
