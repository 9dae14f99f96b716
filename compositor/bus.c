/*
 * The session's own D-Bus session bus, as it has its own sound server:
 * dbus-daemon --session listening on DIR/NAME.bus beside the session's
 * socket, its address the apps' DBUS_SESSION_BUS_ADDRESS, ended after the
 * apps. Notifications (notify-send), portals, dconf and the many programs
 * that want a bus find one, and never the host's or another session's.
 */
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
#include <time.h>
#include <unistd.h>

#include "bus.h"
#include "log.h"
#include "server.h"

#define READY_WAIT_MS 5000
#define STOP_WAIT_MS 1000

bool daemon_answers(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool up = fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
	if (fd >= 0) {
		close(fd);
	}
	return up;
}

bool bus_start(struct rc_server *server)
{
	struct rc_bus *bus = &server->bus;
	*bus = (struct rc_bus){0};
	const struct rc_record *record = &server->record;
	if (record->dir[0]) {
		if (!session_path(bus->socket, sizeof(bus->socket), record->dir, record->name,
			    "bus")) {
			log_warning("no session bus: the session directory's path is too long");
			return false;
		}
	} else {
		/* A session that is not recorded (plain --stdio): a private
		 * directory of its own. */
		const char *runtime = getenv("XDG_RUNTIME_DIR");
		snprintf(bus->dir, sizeof(bus->dir), "%.80s/rcomp-bus-XXXXXX",
			runtime && *runtime ? runtime : "/tmp");
		if (!mkdtemp(bus->dir)) {
			bus->dir[0] = '\0';
			log_warning("no session bus: cannot make a directory for it: %s",
				strerror(errno));
			return false;
		}
		if (snprintf(bus->socket, sizeof(bus->socket), "%.100s/bus", bus->dir) >=
			(int)sizeof(bus->socket)) {
			log_warning("no session bus: its directory's path is too long");
			bus_stop(server);
			return false;
		}
	}
	unlink(bus->socket); /* a killed session's */
	snprintf(bus->address, sizeof(bus->address), "unix:path=%s", bus->socket);
	pid_t pid = fork();
	if (pid < 0) {
		log_warning("no session bus: cannot start dbus-daemon: %s", strerror(errno));
		return false;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0); /* not the app's group: ending the app's leftovers spares it */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		/* Its lines (activations, the fd limit it may not raise) are
		 * its own business, not the session log's. */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		char address[sizeof(bus->address) + 16];
		snprintf(address, sizeof(address), "--address=%s", bus->address);
		execlp("dbus-daemon", "dbus-daemon", "--session", "--nofork", "--nopidfile",
			address, (char *)NULL);
		_exit(127);
	}
	bus->pid = pid;
	for (int waited = 0; waited < READY_WAIT_MS; waited += 5) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			bus->pid = 0;
			log_warning("no session bus: dbus-daemon %s (status %d): apps that want a "
				    "bus "
				    "go without",
				WIFEXITED(status) && WEXITSTATUS(status) == 127
					? "is not installed "
					  "(dbus-daemon)"
					: "did not start",
				WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			bus_stop(server);
			return false;
		}
		if (daemon_answers(bus->socket)) {
			log_debug("the session's bus at %s", bus->address);
			return true;
		}
		nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
	}
	log_warning("no session bus: dbus-daemon did not answer within %d s", READY_WAIT_MS / 1000);
	bus_stop(server);
	return false;
}

void bus_stop(struct rc_server *server)
{
	struct rc_bus *bus = &server->bus;
	if (bus->pid > 0) {
		kill(-bus->pid, SIGTERM);
		for (int waited = 0; waited < STOP_WAIT_MS; waited += 10) {
			if (waitpid(bus->pid, NULL, WNOHANG) != 0) {
				break;
			}
			nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
		}
		bus->pid = 0;
	}
	if (bus->socket[0]) {
		unlink(bus->socket);
	}
	if (bus->dir[0]) {
		rmdir(bus->dir);
	}
	bus->address[0] = '\0';
	bus->socket[0] = bus->dir[0] = '\0';
}

const char *bus_address(const struct rc_server *server)
{
	return server->bus.address[0] ? server->bus.address : NULL;
}

bool bus_owns_pid(const struct rc_server *server, pid_t pid)
{
	return pid > 0 && server->bus.pid == pid;
}

void bus_exited(struct rc_server *server, int status)
{
	log_warning("the session's bus exited (status %d); its apps lose it",
		WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	server->bus.pid = 0;
}
