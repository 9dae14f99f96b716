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
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "monitor.h"
#include "net.h"

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

int main(int argc, char **argv)
{
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
	while ((c = getopt_long(argc, argv, "c:vh", options, NULL)) != -1) {
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
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	log_init("rcomp-gate", level);
	if (check) {
		return gate_config_check(path) ? 1 : 0;
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
		int status = net_run(&config, sv[1]);
		_exit(status);
	}
	close(sv[1]);
	int status = monitor_run(&config, sv[0]);
	close(sv[0]);
	kill(pid, SIGTERM);
	int ws;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
	}
	if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0) {
		status = WEXITSTATUS(ws);
	}
	gate_config_finish(&config);
	return status;
}
