/*
 * The app's process. rcomp-run is a child subreaper, so an app that starts
 * more (sh -c 'foot &') keeps the session for as long as they run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"
#include "log.h"
#include "monotonic.h"
#include "sound.h"

/* Whether anything of the app's still runs: a child of ours that is not
 * the sound server (a subreaper inherits the app's orphans). */
static bool have_children(struct rc_server *server)
{
	DIR *tasks = opendir("/proc/self/task");
	if (!tasks) {
		siginfo_t info;
		return waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 || errno != ECHILD;
	}
	bool found = false;
	struct dirent *task;
	while (!found && (task = readdir(tasks))) {
		if (task->d_name[0] == '.') {
			continue;
		}
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/children", task->d_name);
		FILE *f = fopen(path, "re");
		if (!f) {
			continue;
		}
		long pid;
		while (!found && fscanf(f, "%ld", &pid) == 1) {
			found = !sound_owns_pid(server, (pid_t)pid);
		}
		fclose(f);
	}
	closedir(tasks);
	return found;
}

/* A session that outlives its stdio (--persist) waits this long after its
 * app exited for its first viewer, the one that started it, to be told. */
#define FIRST_VIEWER_WAIT_US 10000000

void app_check_exit(struct rc_server *server)
{
	struct rc_app *app = &server->app;
	if (!app->exited || !server->running) {
		return;
	}
	if (server->options.persist && !server->welcomed_ever && !app->stopping &&
		monotonic_usec() - app->exited_us < FIRST_VIEWER_WAIT_US) {
		/* Its viewer is on its way through the bridge: it hears the
		 * app's status, whenever the app ended. */
		wl_event_source_timer_update(app->exit_check, 250);
		return;
	}
	if (!wl_list_empty(&server->windows)) {
		app->idle_checks = 0;
		return;
	}
	if (!have_children(server)) {
		server->running = false;
		return;
	}
	/* Descendants live on without windows: give them a moment to open one,
	 * and end the session once no Wayland client is left. */
	if (wl_list_empty(wl_display_get_client_list(server->display))) {
		if (++app->idle_checks >= 3) {
			server->running = false;
			return;
		}
	} else {
		app->idle_checks = 0;
	}
	wl_event_source_timer_update(app->exit_check, 1000);
}

static int handle_exit_check(void *data)
{
	app_check_exit(data);
	return 0;
}

static int handle_sigchld(int signo, void *data)
{
	struct rc_server *server = data;
	struct rc_app *app = &server->app;
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (sound_owns_pid(server, pid)) {
			sound_daemon_exited(server, status);
			continue;
		}
		if (pid != app->pid) {
			continue;
		}
		app->exited = true;
		app->exited_us = monotonic_usec();
		if (WIFEXITED(status)) {
			app->status = WEXITSTATUS(status);
		} else if (WIFSIGNALED(status)) {
			app->status = 128 + WTERMSIG(status);
		}
		if (!app->failure[0]) {
			log_info("app exited with status %d", app->status);
		}
	}
	app_check_exit(server);
	return 0;
}

/* Apps asked to close their windows have this long to end on their own. */
#define STOP_GRACE_MS 5000

static int handle_stop_timer(void *data)
{
	struct rc_server *server = data;
	log_info("the apps did not end within %d s of being asked to: ending them",
		STOP_GRACE_MS / 1000);
	server->running = false; /* app_finish ends what is left */
	return 0;
}

void app_stop(struct rc_server *server)
{
	struct rc_app *app = &server->app;
	if (app->stopping) {
		return;
	}
	app->stopping = true;
	server->exit_code = 0;
	log_info("asked to stop (rcomp-run --stop): the apps are asked to close their windows");
	struct rc_window *window, *tmp;
	wl_list_for_each_safe(window, tmp, &server->windows, link)
	{
		if (!window->popup) {
			window->impl->close(window);
		}
	}
	wl_event_source_timer_update(app->stop_timer, STOP_GRACE_MS);
	app_check_exit(server);
}

bool app_init(struct rc_server *server)
{
	struct rc_app *app = &server->app;
	app->sigchld = wl_event_loop_add_signal(server->loop, SIGCHLD, handle_sigchld, server);
	app->exit_check = wl_event_loop_add_timer(server->loop, handle_exit_check, server);
	app->stop_timer = wl_event_loop_add_timer(server->loop, handle_stop_timer, server);
	return app->sigchld && app->exit_check && app->stop_timer;
}

void app_finish(struct rc_server *server)
{
	struct rc_app *app = &server->app;
	if (app->pid > 0 && have_children(server)) {
		/* Whatever the app left running belongs to this session. */
		kill(-app->pid, SIGTERM);
	}
	if (app->sigchld) {
		wl_event_source_remove(app->sigchld);
	}
	if (app->exit_check) {
		wl_event_source_remove(app->exit_check);
	}
	if (app->stop_timer) {
		wl_event_source_remove(app->stop_timer);
	}
	app->sigchld = app->exit_check = app->stop_timer = NULL;
}

bool app_start(struct rc_server *server, char **argv)
{
	/* The child writes errno here if exec fails; exec closes it. */
	int report[2];
	if (pipe2(report, O_CLOEXEC) < 0) {
		log_error("cannot start %s: %s", argv[0], strerror(errno));
		return false;
	}
	pid_t pid = fork();
	if (pid < 0) {
		log_error("cannot start %s: %s", argv[0], strerror(errno));
		close(report[0]);
		close(report[1]);
		return false;
	}
	if (pid == 0) {
		close(report[0]);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		setpgid(0, 0);
		setenv("WAYLAND_DISPLAY", server->socket_name, 1);
		unsetenv("WAYLAND_SOCKET");
		/* The session's own sound server; without one, whatever the
		 * host has (--audio off). */
		const char *sound = sound_server_address(server);
		if (sound) {
			setenv("PULSE_SERVER", sound, 1);
		}
		/* Our Xwayland, never an outer X server: without ours, X11 apps
		 * fail instead of appearing somewhere else. */
		if (server->x11_display) {
			setenv("DISPLAY", server->x11_display, 1);
		} else {
			unsetenv("DISPLAY");
		}
		if (server->options.stdio) {
			/* stdin/stdout carry the stream: keep the app off them. */
			int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (null >= 0) {
				dup2(null, STDIN_FILENO);
			}
			dup2(STDERR_FILENO, STDOUT_FILENO);
		}
		execvp(argv[0], argv);
		int err = errno;
		ssize_t n = write(report[1], &err, sizeof(err));
		(void)n;
		_exit(err == ENOENT ? 127 : 126);
	}
	close(report[1]);
	setpgid(pid, pid);
	struct rc_app *app = &server->app;
	app->pid = pid;
	app->started_us = monotonic_usec();
	int err;
	ssize_t n;
	do {
		n = read(report[0], &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n == (ssize_t)sizeof(err)) {
		/* As a shell says it, and with a shell's status: the viewer
		 * says it once and exits with it. */
		snprintf(app->failure, sizeof(app->failure), "%s cannot be run: %s", argv[0],
			strerror(err));
		if (!server->options.stdio) {
			log_error("%s", app->failure); /* else its viewer says it */
		}
	}
	return true;
}
