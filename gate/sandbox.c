/*
 * The network process's box (sandbox.h): a seccomp filter (libseccomp)
 * that allows the system calls it makes once serving, all its threads
 * alike. What it does not allow raises SIGSYS, which says which call it
 * was in the log and ends the process; the monitor starts a new one.
 */
#include <errno.h>
#include <seccomp.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sandbox.h"

/* Serving: sockets, files of the page (read only, in the chroot), memory,
 * time, threads' locks, signals' returns, randomness for TLS, and the
 * cluster's checks of the other hosts (a socket and a connect each). */
static const int allowed[] = {
	SCMP_SYS(read),
	SCMP_SYS(write),
	SCMP_SYS(readv),
	SCMP_SYS(writev),
	SCMP_SYS(pread64),
	SCMP_SYS(recvfrom),
	SCMP_SYS(recvmsg),
	SCMP_SYS(sendto),
	SCMP_SYS(sendmsg),
	SCMP_SYS(poll),
	SCMP_SYS(ppoll),
	SCMP_SYS(epoll_create1),
	SCMP_SYS(epoll_ctl),
	SCMP_SYS(epoll_wait),
	SCMP_SYS(epoll_pwait),
	SCMP_SYS(accept4),
	SCMP_SYS(socket),
	SCMP_SYS(connect),
	SCMP_SYS(shutdown),
	SCMP_SYS(getsockopt),
	SCMP_SYS(setsockopt),
	SCMP_SYS(getsockname),
	SCMP_SYS(getpeername),
	SCMP_SYS(close),
	SCMP_SYS(fcntl),
	SCMP_SYS(dup),
	SCMP_SYS(ioctl),
	SCMP_SYS(pipe2),
	SCMP_SYS(eventfd2),
	SCMP_SYS(openat),
	SCMP_SYS(fstat),
	SCMP_SYS(newfstatat),
	SCMP_SYS(statx),
	SCMP_SYS(lseek),
	SCMP_SYS(mmap),
	SCMP_SYS(munmap),
	SCMP_SYS(mremap),
	SCMP_SYS(mprotect),
	SCMP_SYS(madvise),
	SCMP_SYS(brk),
	SCMP_SYS(futex),
	SCMP_SYS(clock_gettime),
	SCMP_SYS(gettimeofday),
	SCMP_SYS(clock_nanosleep),
	SCMP_SYS(nanosleep),
	SCMP_SYS(getrandom),
	SCMP_SYS(getpid),
	SCMP_SYS(gettid),
	SCMP_SYS(getuid),
	SCMP_SYS(geteuid),
	SCMP_SYS(rt_sigreturn),
	SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(sched_yield),
	SCMP_SYS(restart_syscall),
	SCMP_SYS(exit),
	SCMP_SYS(exit_group),
	SCMP_SYS(set_robust_list),
	SCMP_SYS(rseq),
};

static void handle_sigsys(int signo, siginfo_t *info, void *context)
{
	(void)signo;
	(void)context;
	/* write(2) only: this is a signal handler. */
	static const char head[] = "rcomp-gate: error: the network process made a system call "
				   "its filter does not allow (",
			  tail[] = "): it ends, and the monitor starts a new one\n";
	char line[sizeof(head) + 16 + sizeof(tail)], digits[16];
	size_t n = 0, d = 0;
	unsigned v = (unsigned)info->si_syscall;
	do {
		digits[d++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && d < sizeof(digits));
	memcpy(line, head, sizeof(head) - 1);
	n = sizeof(head) - 1;
	while (d) {
		line[n++] = digits[--d];
	}
	memcpy(line + n, tail, sizeof(tail) - 1);
	n += sizeof(tail) - 1;
	ssize_t w = write(STDERR_FILENO, line, n);
	(void)w;
	_exit(70);
}

bool sandbox_enter(void)
{
	struct sigaction sys = {.sa_sigaction = handle_sigsys, .sa_flags = SA_SIGINFO};
	sigaction(SIGSYS, &sys, NULL);
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	if (!ctx) {
		log_error("cannot make the network process's system call filter");
		return false;
	}
	int err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	/* A binary tree of the calls, not a list: each call the bridges make
	 * costs a few comparisons. */
	if (!err) {
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	}
	for (size_t i = 0; !err && i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	}
	if (!err) {
		err = seccomp_load(ctx);
	}
	seccomp_release(ctx);
	if (err) {
		log_error("cannot load the network process's system call filter: %s",
			strerror(-err));
		return false;
	}
	return true;
}
