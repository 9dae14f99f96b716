/*
 * A session's processes; see procs.h. /proc is read with open, read and
 * getdents64 into static tables: no allocation, no stdio, so a child
 * forked from a threaded process may call it. One caller at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procs.h"

/* The processes of the host this looks at: more than any machine here
 * runs; past it, the rest is not seen (and is ended on a later look). */
#define TABLE_MAX 65536
#define SLOTS (2 * TABLE_MAX) /* a power of two */
/* While waiting for processes to end: how often to look again. */
#define LOOK_EVERY_MS 10
/* SIGKILL is not ignored: what is left after this long is not ours. */
#define KILL_ROUNDS 100

struct entry {
	pid_t pid, ppid;
	bool zombie;
	int8_t below; /* -1 not known yet, 0 no, 1 yes */
};

static struct entry table[TABLE_MAX];
static int32_t slots[SLOTS]; /* index + 1 of the entry with that pid; 0 empty */
static pid_t found[PROCS_MAX];
static pid_t asked[PROCS_MAX], killed[PROCS_MAX];

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
	while (nanosleep(&t, &t) < 0 && errno == EINTR) {
	}
}

/* "/proc/PID/stat" into path, without snprintf. */
static void stat_path(char path[32], pid_t pid)
{
	char digits[16];
	int n = 0;
	unsigned long v = (unsigned long)pid;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < (int)sizeof(digits));
	memcpy(path, "/proc/", 6);
	int at = 6;
	while (n > 0) {
		path[at++] = digits[--n];
	}
	memcpy(path + at, "/stat", 6);
}

/* The parent and state of pid, from /proc/PID/stat: "PID (COMM) S PPID ...",
 * where COMM may hold anything, parentheses too. */
static bool read_stat(pid_t pid, pid_t *ppid, bool *zombie)
{
	char path[32], buf[512];
	stat_path(path, pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return false;
	}
	ssize_t n;
	do {
		n = read(fd, buf, sizeof(buf) - 1);
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0) {
		return false;
	}
	buf[n] = '\0';
	char *close_paren = NULL;
	for (char *c = buf; *c; c++) {
		if (*c == ')') {
			close_paren = c;
		}
	}
	if (!close_paren || close_paren[1] != ' ' || !close_paren[2] || close_paren[3] != ' ') {
		return false;
	}
	*zombie = close_paren[2] == 'Z' || close_paren[2] == 'X';
	long v = 0;
	const char *d = close_paren + 4;
	if (*d < '0' || *d > '9') {
		return false;
	}
	while (*d >= '0' && *d <= '9') {
		v = v * 10 + (*d++ - '0');
	}
	*ppid = (pid_t)v;
	return true;
}

static uint32_t slot_of(pid_t pid)
{
	return ((uint32_t)pid * 2654435761u) & (SLOTS - 1);
}

static int index_of(pid_t pid)
{
	for (uint32_t s = slot_of(pid);; s = (s + 1) & (SLOTS - 1)) {
		if (slots[s] == 0) {
			return -1;
		}
		if (table[slots[s] - 1].pid == pid) {
			return slots[s] - 1;
		}
	}
}

/* Every process of the host into table; returns how many, or -1. */
static int read_all(void)
{
	int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		return -1;
	}
	memset(slots, 0, sizeof(slots));
	int n = 0;
	char buf[8192] __attribute__((aligned(8)));
	for (;;) {
		long got = syscall(SYS_getdents64, dir, buf, sizeof(buf));
		if (got < 0 && errno == EINTR) {
			continue;
		}
		if (got <= 0) {
			break;
		}
		for (long at = 0; at < got;) {
			/* struct linux_dirent64: ino, off, reclen, type, name. */
			unsigned short reclen;
			memcpy(&reclen, buf + at + 16, sizeof(reclen));
			const char *name = buf + at + 19;
			at += reclen;
			long pid = 0;
			const char *c = name;
			for (; *c >= '0' && *c <= '9'; c++) {
				pid = pid * 10 + (*c - '0');
			}
			if (c == name || *c || pid <= 0 || n == TABLE_MAX) {
				continue;
			}
			struct entry e = {.pid = (pid_t)pid, .below = -1};
			if (!read_stat(e.pid, &e.ppid, &e.zombie)) {
				continue; /* gone meanwhile */
			}
			table[n] = e;
			uint32_t s = slot_of(e.pid);
			while (slots[s]) {
				s = (s + 1) & (SLOTS - 1);
			}
			slots[s] = n + 1;
			n++;
		}
	}
	close(dir);
	return n;
}

/* Whether entry i is below root and not below spare: found by walking up
 * its parents, and remembered for each on the way. A chain deeper than
 * DEPTH_MAX (or a loop of numbers reused while /proc was read) counts as
 * not below: what is deeper is ended on a later look, once what is above
 * it has ended and its orphans have come back to the subreaper. */
#define DEPTH_MAX 256
static bool is_below(int i, pid_t root, pid_t spare)
{
	static int chain[DEPTH_MAX];
	int depth = 0, at = i;
	int8_t answer = 0;
	for (;;) {
		struct entry *e = &table[at];
		if (e->below >= 0) {
			answer = e->below;
			break;
		}
		chain[depth++] = at;
		if (e->pid == spare || e->pid == root) {
			answer = 0;
			break;
		}
		if (e->ppid == root) {
			answer = 1;
			break;
		}
		int parent = index_of(e->ppid);
		if (parent < 0 || depth == DEPTH_MAX) {
			answer = 0;
			break;
		}
		at = parent;
	}
	while (depth > 0) {
		table[chain[--depth]].below = answer;
	}
	return table[i].below == 1;
}

static int tree(pid_t root, pid_t spare, pid_t *out, int max)
{
	int n = read_all();
	if (n < 0) {
		return -1;
	}
	int count = 0;
	for (int i = 0; i < n; i++) {
		if (!table[i].zombie && is_below(i, root, spare)) {
			if (out && count < max) {
				out[count] = table[i].pid;
			}
			count++;
		}
	}
	return count;
}

int procs_below(pid_t root, pid_t *out, int max)
{
	return tree(root, 0, out, max);
}

static bool listed(const pid_t *set, int n, pid_t pid)
{
	for (int i = 0; i < n; i++) {
		if (set[i] == pid) {
			return true;
		}
	}
	return false;
}

bool procs_signal_below(pid_t root, pid_t pid, int sig)
{
	/* The process pid names now, held; then whether it is still below
	 * root: its parent is root or is itself below root, or it is an
	 * orphan root took in. */
	int fd = -1;
#ifdef SYS_pidfd_open
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	pid_t ppid;
	bool zombie;
	bool ok = read_stat(pid, &ppid, &zombie) && !zombie &&
		(ppid == root || (index_of(ppid) >= 0 && table[index_of(ppid)].below == 1) ||
			ppid == getpid());
	if (ok) {
#ifdef SYS_pidfd_send_signal
		if (fd >= 0) {
			ok = syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) == 0;
		} else
#endif
		{
			ok = kill(pid, sig) == 0;
		}
	}
	if (fd >= 0) {
		close(fd);
	}
	return ok;
}

static void reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
}

struct procs_ended procs_end_below(int grace_ms, pid_t spare)
{
	struct procs_ended ended = {0};
	pid_t self = getpid();
	uint64_t deadline = now_ms() + (uint64_t)(grace_ms > 0 ? grace_ms : 0);
	int nasked = 0, nkilled = 0;
	for (;;) {
		reap();
		int n = tree(self, spare, found, PROCS_MAX);
		if (n <= 0) {
			return ended;
		}
		if (now_ms() >= deadline) {
			break;
		}
		n = n < PROCS_MAX ? n : PROCS_MAX;
		for (int i = 0; i < n; i++) {
			if (!listed(asked, nasked, found[i]) && nasked < PROCS_MAX) {
				asked[nasked++] = found[i];
				ended.asked++;
				procs_signal_below(self, found[i], SIGTERM);
				/* A stopped process acts on it only once it runs. */
				procs_signal_below(self, found[i], SIGCONT);
			}
		}
		sleep_ms(LOOK_EVERY_MS);
	}
	for (int round = 0; round < KILL_ROUNDS; round++) {
		int n = tree(self, spare, found, PROCS_MAX);
		if (n <= 0) {
			return ended;
		}
		n = n < PROCS_MAX ? n : PROCS_MAX;
		bool any = false;
		for (int i = 0; i < n; i++) {
			if (procs_signal_below(self, found[i], SIGKILL)) {
				any = true;
				if (!listed(killed, nkilled, found[i]) && nkilled < PROCS_MAX) {
					killed[nkilled++] = found[i];
					ended.killed++;
				}
			}
		}
		sleep_ms(any ? 1 : LOOK_EVERY_MS);
		reap();
	}
	int n = tree(self, spare, NULL, 0);
	ended.left = n > 0 ? n : 0;
	return ended;
}
