/* The process tree (common/procs.c): found below a subreaper, ended with
 * SIGTERM and, after the grace, SIGKILL, however its processes hide. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "procs.h"

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Waits until root has n processes below it. */
static bool wait_count(pid_t root, int n)
{
	for (int i = 0; i < 500; i++) {
		if (procs_below(root, NULL, 0) == n) {
			return true;
		}
		usleep(10000);
	}
	return false;
}

/* A child that ignores SIGTERM, with a child of its own in a new session
 * that ignores it too, and a grandchild there that does not. Each of the
 * three says it is ready (its signal disposition set) with a byte on a
 * pipe, which stubborn() reads before it returns: counting them in /proc
 * is not enough, as the grandchild exists before it has undone the
 * SIG_IGN it was born with. */
static pid_t stubborn(void)
{
	int ready[2];
	if (pipe(ready) != 0) {
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(ready[0]);
		signal(SIGTERM, SIG_IGN);
		(void)!write(ready[1], "c", 1);
		if (fork() == 0) {
			setsid();
			(void)!write(ready[1], "g", 1);
			if (fork() == 0) {
				signal(SIGTERM, SIG_DFL);
				(void)!write(ready[1], "d", 1);
				close(ready[1]);
				for (;;) {
					pause();
				}
			}
			close(ready[1]);
			for (;;) {
				pause();
			}
		}
		close(ready[1]);
		for (;;) {
			pause();
		}
	}
	close(ready[1]);
	char said[3];
	size_t got = 0;
	while (pid > 0 && got < sizeof(said)) {
		ssize_t n = read(ready[0], said + got, sizeof(said) - got);
		if (n <= 0) {
			break;
		}
		got += (size_t)n;
	}
	close(ready[0]);
	return got == sizeof(said) ? pid : -1;
}

static void test_counts(void)
{
	pid_t child = stubborn();
	CHECK(child > 0);
	CHECK(wait_count(getpid(), 3));
	pid_t found[8];
	int n = procs_below(getpid(), found, 8);
	CHECK(n == 3);
	bool has_child = false;
	for (int i = 0; i < n && i < 8; i++) {
		has_child = has_child || found[i] == child;
	}
	CHECK(has_child);
	CHECK(procs_below(child, NULL, 0) == 2);
	struct procs_ended e = procs_end_below(200, 0);
	CHECK(e.killed == 2);
	CHECK(procs_below(getpid(), NULL, 0) == 0);
}

static void test_grace(void)
{
	/* One that ends at SIGTERM, one that does not. */
	pid_t polite = fork();
	if (polite == 0) {
		for (;;) {
			pause();
		}
	}
	pid_t child = stubborn();
	CHECK(polite > 0 && child > 0);
	CHECK(wait_count(getpid(), 4));
	uint64_t t0 = now_ms();
	struct procs_ended e = procs_end_below(300, 0);
	uint64_t took = now_ms() - t0;
	CHECK(e.asked == 4);
	/* The polite one and the grandchild ended at SIGTERM. */
	CHECK(e.killed == 2);
	CHECK(e.left == 0);
	CHECK(took >= 300 && took < 2000);
	CHECK(procs_below(getpid(), NULL, 0) == 0);
}

static void test_polite(void)
{
	pid_t a = fork();
	if (a == 0) {
		for (;;) {
			pause();
		}
	}
	CHECK(wait_count(getpid(), 1));
	uint64_t t0 = now_ms();
	struct procs_ended e = procs_end_below(3000, 0);
	CHECK(e.asked == 1 && e.killed == 0);
	/* Nothing waits out the grace once all have ended. */
	CHECK(now_ms() - t0 < 1000);
}

static void test_spare(void)
{
	pid_t spared = fork();
	if (spared == 0) {
		for (;;) {
			pause();
		}
	}
	pid_t child = stubborn();
	CHECK(wait_count(getpid(), 4));
	struct procs_ended e = procs_end_below(100, spared);
	CHECK(e.killed == 2);
	CHECK(procs_below(getpid(), NULL, 0) == 1);
	CHECK(kill(spared, 0) == 0);
	kill(spared, SIGKILL);
	waitpid(spared, NULL, 0);
	(void)child;
}

static void test_stopped(void)
{
	/* A stopped process ends at SIGTERM too: it is let run to take it. */
	pid_t a = fork();
	if (a == 0) {
		for (;;) {
			pause();
		}
	}
	CHECK(wait_count(getpid(), 1));
	kill(a, SIGSTOP);
	struct procs_ended e = procs_end_below(2000, 0);
	CHECK(e.asked == 1 && e.killed == 0);
}

int main(int argc, char **argv)
{
	/* Orphans come back here, as to rcomp-run's reaper. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	static const struct check_case cases[] = {
		{"counts", test_counts},
		{"grace", test_grace},
		{"polite", test_polite},
		{"spare", test_spare},
		{"stopped", test_stopped},
	};
	return check_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
