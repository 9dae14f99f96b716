/*
 * rcomp-gate: one HTTPS door for every user of a host. The monitor (this
 * process, root) forks the network process (net.c), which drops to the
 * gate's system user; the two talk over one socket pair (ipc.h).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "listen.h"
#include "log.h"
#include "monitor.h"
#include "monotonic.h"
#include "net.h"
#include "settings.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rcomp-gate [--config FILE] [--check-config] [-v]\n"
		"  one HTTPS door for every user of this host: logins through PAM,\n"
		"  sessions run as their users (see rcomp-gate(8))\n"
		"  --config FILE   the configuration (default " GATE_CONFIG_DEFAULT ")\n"
		"  --check-config  say what is wrong with the configuration and the\n"
		"                  certificate, and exit (0: nothing)\n"
		"  -v, --verbose   log more\n");
}

/* What the gate keeps of what started it: no descriptor but the three
 * standard ones (and systemd's socket, where it passed one), and of the
 * environment the sanitizers' settings and systemd's alone, PATH the
 * system's. The gate runs itself anew with that environment, so that none
 * of the launcher's is left even in its process's first pages (what
 * /proc/PID/environ shows); sessions get a login's (gate_become). */
static void start_clean(char **argv)
{
	extern char **environ;
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	bool activated = pid && fds && atol(pid) == (long)getpid() && atoi(fds) >= 1;
	int first = activated ? 4 : 3;
	if (syscall(SYS_close_range, first, ~0u, 0) != 0) {
		for (int fd = first; fd < 65536; fd++) {
			close(fd);
		}
	}
	static const char path[] =
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	static const char *const kept[] = {"LISTEN_PID=", "LISTEN_FDS=", "LISTEN_FDNAMES=",
		"NOTIFY_SOCKET=", "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS="};
	char *clean[sizeof(kept) / sizeof(kept[0]) + 2];
	size_t n = 0;
	bool already = true;
	clean[n++] = (char *)path;
	for (char **e = environ; *e; e++) {
		bool keep = false;
		for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]) && !keep; i++) {
			keep = strncmp(*e, kept[i], strlen(kept[i])) == 0;
		}
		if (keep && n < sizeof(clean) / sizeof(clean[0]) - 1) {
			clean[n++] = *e;
		} else if (strcmp(*e, path) != 0) {
			already = false;
		}
	}
	clean[n] = NULL;
	if (already) {
		return;
	}
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len > 0) {
		self[len] = '\0';
		execve(self, argv, clean);
	}
	/* Not run anew: the environment is cleared here, at least. */
	clearenv();
	for (size_t i = 0; i < n; i++) {
		putenv(clean[i]);
	}
}

int main(int argc, char **argv)
{
	start_clean(argv);
	static const struct option options[] = {
		{"config", required_argument, NULL, 'c'},
		{"check-config", no_argument, NULL, 'k'},
		{"verbose", no_argument, NULL, 'v'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *path = GATE_CONFIG_DEFAULT;
	bool check = false;
	enum log_level level = LOG_INFO;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:vh", options, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'k':
			check = true;
			break;
		case 'v':
			level = LOG_DEBUG;
			break;
		case 'V':
			printf("rcomp-gate %s\n", RCOMP_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return settings_bad_option("rcomp-gate", c, argv);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rcomp-gate: unexpected argument %s: see rcomp-gate --help\n",
			argv[optind]);
		return 2;
	}
	log_init("rcomp-gate", level);
	if (check) {
		return check_config(path) ? 1 : 0;
	}
	static struct gate_config config;
	char err[512];
	if (!gate_config_read(&config, path, err, sizeof(err))) {
		log_error("%s", err);
		return 1;
	}
	if (geteuid() != 0) {
		log_error("rcomp-gate runs as root: it checks passwords and starts sessions as "
			  "their users (its network side drops to %s)",
			config.user);
		return 1;
	}
	/* Room for every connection the configuration allows, and the
	 * viewers' bridges (two descriptors each). */
	struct rlimit files;
	if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
		files.rlim_cur = files.rlim_max;
		setrlimit(RLIMIT_NOFILE, &files);
	}
	/* The port is the monitor's: systemd's (rcomp-gate.socket) or bound
	 * here, before the network process, which is restarted on it. */
	int listen_fd = listen_socket(&config, err, sizeof(err));
	if (listen_fd < 0) {
		log_error("%s", err);
		return 1;
	}
	int status = 0;
	uint64_t restarts_ms[5] = {0};
	for (int round = 0;; round++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
			log_error("cannot make a socket pair: %s", strerror(errno));
			return 1;
		}
		pid_t pid = fork();
		if (pid < 0) {
			log_error("cannot fork: %s", strerror(errno));
			return 1;
		}
		if (pid == 0) {
			close(sv[0]);
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			_exit(net_run(&config, sv[1], listen_fd));
		}
		close(sv[1]);
		status = monitor_run(&config, sv[0], listen_fd);
		/* The network process is ended before it sees the monitor's
		 * socket close, which it would take for the monitor's death. */
		kill(pid, SIGTERM);
		close(sv[0]);
		int ws = 0;
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
		}
		if (status != MONITOR_RESTART) {
			if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0) {
				status = WEXITSTATUS(ws);
			}
			break;
		}
		/* One that ends at once, again and again (a certificate that
		 * went bad, say), is started once a second, not in a loop. */
		uint64_t now = monotonic_usec() / 1000;
		if (round >= 5 && now - restarts_ms[round % 5] < 5000) {
			sleep(1);
		}
		restarts_ms[round % 5] = now;
	}
	gate_config_finish(&config);
	return status;
}
