/*
 * The app's process, through the session's reaper (reaper.h): rcomp-run
 * starts the reaper, the reaper the app, and everything the app starts is
 * the reaper's to end. rcomp-run hears from it when the app exits and when
 * nothing it started is left (sh -c 'foot &' keeps the session for as long
 * as foot runs), and asks it to end them all when the session ends: SIGTERM,
 * then SIGKILL after the grace (--grace). rcomp-run is a child subreaper
 * too, for what it starts itself (the sound server, Xwayland), and ends
 * what is left of those the same way before it exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"
#include "bus.h"
#include "print.h"
#include "log.h"
#include "monotonic.h"
#include "procs.h"
#include "reaper.h"
#include "sound.h"

extern char **environ;

/* How long rcomp-run waits for the reaper to say the app started. */
#define START_WAIT_MS 10000
/* Beyond the grace: what the reaper may take to say what it ended. */
#define END_SLACK_MS 3000
/* And to let go once the log's last bytes are written. */
#define LEAVE_WAIT_MS 3000

/* A session that outlives its stdio (--persist) waits this long after its
 * app exited for its first viewer, the one that started it, to be told. */
#define FIRST_VIEWER_WAIT_US 10000000

void app_check_exit(struct rc_server *server)
{
	struct rc_app *app = &server->app;
	if (!server->running) {
		return;
	}
	if (app->stopping && wl_list_empty(&server->windows)) {
		/* Asked to stop, and every window has closed: what is left is
		 * ended with the session, now. */
		server->running = false;
		return;
	}
	if (!app->exited) {
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
	if (app->empty) {
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

static void app_exited(struct rc_server *server, int status)
{
	struct rc_app *app = &server->app;
	if (app->exited) {
		return;
	}
	app->exited = true;
	app->exited_us = monotonic_usec();
	app->status = status;
	if (!app->failure[0]) {
		log_info("app exited with status %d", app->status);
	}
}

static void reaper_gone(struct rc_server *server, int status)
{
	struct rc_app *app = &server->app;
	app->reaper = 0;
	if (!app->ending) {
		log_error("the session's reaper ended (status %d): the app's processes are no "
			  "longer watched, and the session ends",
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		app_exited(server, 1);
	}
	app->empty = true;
}

static void handle_message(struct rc_server *server, const struct reaper_msg *msg)
{
	struct rc_app *app = &server->app;
	switch (msg->say) {
	case REAPER_STARTED:
		app->pid = msg->a;
		break;
	case REAPER_FAILED:
		break; /* only the first message says this (app_start) */
	case REAPER_EXITED:
		app_exited(server, msg->a);
		break;
	case REAPER_EMPTY:
		app->empty = true;
		break;
	case REAPER_ENDED:
		app->ended.asked += msg->a;
		app->ended.killed += msg->b;
		app->ended.left += msg->c;
		app->told_ended = true;
		break;
	}
}

/* Reads what the reaper said; false once its pipe has ended. */
static bool read_status(struct rc_server *server)
{
	struct rc_app *app = &server->app;
	struct reaper_msg msgs[32];
	ssize_t n = read(app->status_fd, msgs, sizeof(msgs));
	if (n < 0) {
		return errno == EAGAIN || errno == EINTR;
	}
	if (n == 0) {
		return false;
	}
	/* Each is written whole (under PIPE_BUF), so they are read whole. */
	for (size_t i = 0; i < (size_t)n / sizeof(msgs[0]); i++) {
		handle_message(server, &msgs[i]);
	}
	return true;
}

static int handle_status(int fd, uint32_t mask, void *data)
{
	struct rc_server *server = data;
	struct rc_app *app = &server->app;
	if (!read_status(server)) {
		wl_event_source_remove(app->status_source);
		app->status_source = NULL;
		app->empty = true;
	}
	app_check_exit(server);
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
		} else if (bus_owns_pid(server, pid)) {
			bus_exited(server, status);
		} else if (print_owns_pid(server, pid)) {
			print_exited(server, status);
		} else if (pid == app->reaper) {
			if (app->status_source && !app->ending) {
				/* What it said before it went. */
				while (read_status(server)) {
				}
			}
			reaper_gone(server, status);
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
	log_info("the apps did not close their windows within %d s of being asked to: ending "
		 "them",
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
	app->control = app->status_fd = -1;
	app->sigchld = wl_event_loop_add_signal(server->loop, SIGCHLD, handle_sigchld, server);
	app->exit_check = wl_event_loop_add_timer(server->loop, handle_exit_check, server);
	app->stop_timer = wl_event_loop_add_timer(server->loop, handle_stop_timer, server);
	return app->sigchld && app->exit_check && app->stop_timer;
}

void app_finish(struct rc_server *server)
{
	struct rc_app *app = &server->app;
	if (app->control >= 0) {
		/* The session's processes end now, while the compositor goes:
		 * an app that cleans up through it on SIGTERM is let go when
		 * its connection ends. */
		app->ending = true;
		ssize_t n = write(app->control, "E", 1);
		(void)n;
		close(app->control);
		app->control = -1;
	}
	struct wl_event_source **sources[] = {&app->sigchld, &app->exit_check, &app->stop_timer,
		&app->status_source};
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		if (*sources[i]) {
			wl_event_source_remove(*sources[i]);
			*sources[i] = NULL;
		}
	}
}

static uint64_t now_ms(void)
{
	return monotonic_usec() / 1000;
}

void app_wait_ended(struct rc_server *server)
{
	struct rc_app *app = &server->app;
	int grace = server->options.grace_ms;
	if (app->status_fd >= 0) {
		fcntl(app->status_fd, F_SETFL, fcntl(app->status_fd, F_GETFL) & ~O_NONBLOCK);
		uint64_t until = now_ms() + (uint64_t)grace + END_SLACK_MS;
		while (!app->told_ended && now_ms() < until) {
			struct pollfd pfd = {.fd = app->status_fd, .events = POLLIN};
			if (poll(&pfd, 1, (int)(until - now_ms())) <= 0 || !read_status(server)) {
				break;
			}
		}
		close(app->status_fd);
		app->status_fd = -1;
	}
	/* The session's sound server goes once its apps have: ended before
	 * them, an app still playing says "Connection terminated" in the
	 * session's log. Its bus goes with it. */
	sound_end_server(server);
	print_stop(server);
	bus_stop(server); /* rcomp-run left it with the event loop (notify_stop) */
	/* What is left of ours: the sound server's helpers, an Xwayland that
	 * did not go with the compositor. The reaper, still writing the
	 * log's last bytes, is spared. */
	struct procs_ended own = procs_end_below(grace, app->reaper);
	app->ended.asked += own.asked;
	app->ended.killed += own.killed;
	app->ended.left += own.left;
	if (app->ended.killed > 0) {
		log_info("%d of the session's processes did not end within %.1f s of SIGTERM: "
			 "killed",
			app->ended.killed, grace / 1000.0);
	}
	if (app->ended.left > 0) {
		log_error("%d of the session's processes could not be ended (not ours to signal: "
			  "a set-user-ID program's?)",
			app->ended.left);
	}
}

void app_ended_text(const struct rc_server *server, char *out, size_t size)
{
	const struct rc_app *app = &server->app;
	int n = snprintf(out, size, "the session has ended");
	if (n > 0 && (size_t)n < size && app->ended.killed > 0) {
		snprintf(out + n, size - (size_t)n,
			"; %d of its processes did not end within %.1f s of SIGTERM and were "
			"killed",
			app->ended.killed, server->options.grace_ms / 1000.0);
	}
}

void app_leave(struct rc_server *server)
{
	struct rc_app *app = &server->app;
	/* The app's processes are gone, and with them the output pipe's
	 * writers: the reaper writes what is left of it, and leaves. */
	uint64_t until = now_ms() + LEAVE_WAIT_MS;
	while (app->reaper > 0) {
		int status;
		pid_t got = waitpid(app->reaper, &status, WNOHANG);
		if (got == app->reaper || (got < 0 && errno != EINTR)) {
			app->reaper = 0;
			break;
		}
		if (now_ms() >= until) {
			kill(app->reaper, SIGKILL);
			waitpid(app->reaper, NULL, 0);
			app->reaper = 0;
			break;
		}
		struct timespec t = {.tv_nsec = 5000000};
		nanosleep(&t, NULL);
	}
}

static bool regular_file(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* The app's environment: ours, with our WAYLAND_DISPLAY, our sound server,
 * our X display (never an outer one: without ours, X11 apps fail instead of
 * appearing somewhere else) and the session's name (RCOMP_SESSION, for
 * rcomp-run --send). Made before the fork. */
static char **app_environment(struct rc_server *server)
{
	const char *sound = sound_server_address(server);
	const struct {
		const char *key, *value;
		bool keep_outer; /* where ours is NULL, the host's stays */
	} set[] = {
		{"WAYLAND_DISPLAY", server->socket_name, false},
		{"WAYLAND_SOCKET", NULL, false},
		{"DISPLAY", server->x11_display, false},
		{"PULSE_SERVER", sound, true},
		{"RCOMP_SESSION", server->record.name[0] ? server->record.name : NULL, false},
		{"DBUS_SESSION_BUS_ADDRESS", bus_address(server), false},
		{"CUPS_SERVER", print_server(server), false},
	};
	const size_t nset = sizeof(set) / sizeof(set[0]);
	size_t n = 0;
	while (environ[n]) {
		n++;
	}
	char **env = calloc(n + nset + 1, sizeof(*env));
	if (!env) {
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;
		for (size_t j = 0; j < nset && !replaced; j++) {
			size_t len = strlen(set[j].key);
			replaced = strncmp(environ[i], set[j].key, len) == 0 &&
				environ[i][len] == '=' && (set[j].value || !set[j].keep_outer);
		}
		if (!replaced) {
			env[k++] = environ[i];
		}
	}
	for (size_t j = 0; j < nset; j++) {
		if (set[j].value && asprintf(&env[k], "%s=%s", set[j].key, set[j].value) >= 0) {
			k++;
		}
	}
	env[k] = NULL;
	return env;
}

/* The strings app_environment made (the rest are environ's). */
static void free_environment(char **env)
{
	if (!env) {
		return;
	}
	for (size_t i = 0; env[i]; i++) {
		bool ours = false;
		for (size_t j = 0; environ[j] && !ours; j++) {
			ours = environ[j] == env[i];
		}
		if (!ours) {
			free(env[i]);
		}
	}
	free(env);
}

/* In the child: fd at number to, whatever numbers the others have now. */
static void place(int *fds, int count, int first)
{
	int high[8];
	for (int i = 0; i < count; i++) {
		high[i] = fds[i] >= 0 ? fcntl(fds[i], F_DUPFD, 100) : -1;
	}
	for (int i = 0; i < count; i++) {
		if (high[i] >= 0) {
			dup2(high[i], first + i);
		}
	}
}

static void close_from(int first)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, first, ~0u, 0) == 0) {
		return;
	}
#endif
	long most = sysconf(_SC_OPEN_MAX);
	for (long fd = first; fd < (most > 0 && most < 65536 ? most : 65536); fd++) {
		close((int)fd);
	}
}

bool app_start(struct rc_server *server, char **argv)
{
	struct rc_app *app = &server->app;
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[len > 0 ? len : 0] = '\0';
	bool keep_log = regular_file(STDERR_FILENO);
	bool stdout_log = keep_log && !server->options.stdio && regular_file(STDOUT_FILENO);
	if (keep_log) {
		/* Everyone's lines go at its end, whatever the reaper cuts. */
		fcntl(STDERR_FILENO, F_SETFL, fcntl(STDERR_FILENO, F_GETFL) | O_APPEND);
	}
	int control[2] = {-1, -1}, status[2] = {-1, -1}, output[2] = {-1, -1}, log = -1;
	int null = server->options.stdio ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
	if (pipe2(control, O_CLOEXEC) < 0 || pipe2(status, O_CLOEXEC) < 0 ||
		(keep_log && pipe2(output, O_CLOEXEC) < 0)) {
		log_error("cannot start %s: %s", argv[0], strerror(errno));
		goto fail;
	}
	log = keep_log ? fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3) : -1;
	char grace[16], log_max[24];
	snprintf(grace, sizeof(grace), "%d", server->options.grace_ms);
	snprintf(log_max, sizeof(log_max), "%llu", (unsigned long long)server->options.log_max);
	size_t argc = 0;
	while (argv[argc]) {
		argc++;
	}
	char **args = calloc(argc + 10, sizeof(*args));
	char **env = app_environment(server);
	if (!args || !env) {
		log_error("cannot start %s: out of memory", argv[0]);
		free(args);
		free_environment(env);
		goto fail;
	}
	const char *head[] = {"rcomp-run", "--reaper", "3", "4", keep_log ? "5" : "-1",
		keep_log ? "6" : "-1", grace, log_max, "--"};
	for (size_t i = 0; i < 9; i++) {
		args[i] = (char *)head[i];
	}
	for (size_t i = 0; i < argc; i++) {
		args[9 + i] = argv[i];
	}
	pid_t pid = fork();
	if (pid == 0) {
		/* System calls only from here: a child of a process with
		 * threads. 0-2 become what the app gets. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (server->options.stdio) {
			/* stdin/stdout carry the stream: keep the app off them. */
			if (null >= 0) {
				dup2(null, STDIN_FILENO);
			}
			dup2(STDERR_FILENO, STDOUT_FILENO);
		}
		if (keep_log) {
			dup2(output[1], STDERR_FILENO);
			if (stdout_log || server->options.stdio) {
				dup2(output[1], STDOUT_FILENO);
			}
		}
		int fds[4] = {control[0], status[1], output[0], log};
		place(fds, 4, 3);
		close_from(7);
		if (self[0]) {
			execve(self, args, env);
		}
		/* No rcomp-run to run (it was replaced on disk, say): this
		 * child is the reaper. */
		_exit(reaper_run(3, 4, keep_log ? 5 : -1, keep_log ? 6 : -1,
			server->options.grace_ms, server->options.log_max, argv, env));
	}
	free(args);
	free_environment(env);
	if (pid < 0) {
		log_error("cannot start %s: %s", argv[0], strerror(errno));
		goto fail;
	}
	close(control[0]);
	close(status[1]);
	app->reaper = pid;
	app->control = control[1];
	app->status_fd = status[0];
	app->started_us = monotonic_usec();
	if (keep_log) {
		close(output[0]);
		close(output[1]);
		close(log);
	}
	if (null >= 0) {
		close(null);
	}
	struct reaper_msg first = {0};
	struct pollfd pfd = {.fd = app->status_fd, .events = POLLIN};
	ssize_t n = poll(&pfd, 1, START_WAIT_MS) == 1 ? read(app->status_fd, &first, sizeof(first))
						      : -1;
	if (n != (ssize_t)sizeof(first) ||
		(first.say != REAPER_STARTED && first.say != REAPER_FAILED)) {
		log_error("cannot start %s: the session's reaper did not start it", argv[0]);
		snprintf(app->failure, sizeof(app->failure),
			"%s cannot be run: the session's "
			"reaper did not start",
			argv[0]);
	} else if (first.say == REAPER_FAILED) {
		/* As a shell says it, and with a shell's status: the viewer
		 * says it once and exits with it. */
		snprintf(app->failure, sizeof(app->failure), "%s cannot be run: %s", argv[0],
			strerror(first.a));
		if (!server->options.stdio) {
			log_error("%s", app->failure); /* else its viewer says it */
		}
	} else {
		app->pid = first.a;
	}
	fcntl(app->status_fd, F_SETFL, fcntl(app->status_fd, F_GETFL) | O_NONBLOCK);
	app->status_source = wl_event_loop_add_fd(server->loop, app->status_fd, WL_EVENT_READABLE,
		handle_status, server);
	return true;
fail:
	for (int i = 0; i < 2; i++) {
		int *ends[] = {&control[i], &status[i], &output[i]};
		for (int j = 0; j < 3; j++) {
			if (*ends[j] >= 0) {
				close(*ends[j]);
			}
		}
	}
	if (null >= 0) {
		close(null);
	}
	if (log >= 0) {
		close(log);
	}
	return false;
}
