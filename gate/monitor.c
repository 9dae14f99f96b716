#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acts.h"
#include "ipc.h"
#include "log.h"
#include "monitor.h"
#include "monotonic.h"
#include "wire.h"

/* Acts in flight at once (children), and logins held. */
#define MAX_JOBS 64
#define MAX_LOGINS 4096
#define MAX_BUCKETS 1024
/* A child that has not answered by then is killed and its act fails. */
#define JOB_TIMEOUT_MS 15000

struct job {
	pid_t pid; /* 0: a free slot */
	int fd; /* the monitor's end of the child's socket pair */
	struct gate_request req; /* its secret wiped */
	uint64_t started_ms, due_ms; /* due: a failed login's answer is held until then */
	bool held;
	bool pam; /* a login's PAM conversation, counted in logins_at_once */
};

struct login {
	char cookie[GATE_COOKIE_HEX + 1]; /* empty: a free slot */
	char csrf[GATE_CSRF_HEX + 1];
	char user[GATE_USER_MAX + 1];
	char addr[GATE_ADDR_MAX + 1];
	uint64_t created_ms, last_ms;
};

struct bucket {
	char key[GATE_ADDR_MAX + GATE_USER_MAX + 4];
	double fails; /* failures not yet forgiven */
	uint64_t at_ms;
};

struct monitor {
	const struct gate_config *config;
	int net;
	struct job jobs[MAX_JOBS];
	struct login logins[MAX_LOGINS];
	struct bucket buckets[MAX_BUCKETS];
	int logins_at_once;
	uint8_t text[sizeof(struct gate_answer) + GATE_TEXT_MAX];
};

static uint64_t now_ms(void)
{
	return monotonic_usec() / 1000;
}

static bool same(const char *a, const char *b, size_t n)
{
	uint8_t diff = 0;
	for (size_t i = 0; i < n; i++) {
		diff |= (uint8_t)(a[i] ^ b[i]);
	}
	return diff == 0;
}

static void answer(struct monitor *m, uint32_t id, enum gate_status status, const char *text,
	const struct gate_answer *extra)
{
	struct gate_answer a = extra ? *extra : (struct gate_answer){0};
	a.id = id;
	a.status = status;
	if (!gate_send_answer(m->net, &a, text, text ? strlen(text) : 0, -1)) {
		log_error("cannot answer the network process: %s", strerror(errno));
	}
}

/* Failed logins --------------------------------------------------------- */

static struct bucket *bucket(struct monitor *m, const char *kind, const char *name, uint64_t now)
{
	char key[sizeof(m->buckets[0].key)];
	snprintf(key, sizeof(key), "%s:%s", kind, name);
	struct bucket *least = &m->buckets[0];
	for (int i = 0; i < MAX_BUCKETS; i++) {
		struct bucket *b = &m->buckets[i];
		double forgiven = (double)(now - b->at_ms) / GATE_FAIL_EVERY_MS;
		b->fails = b->fails > forgiven ? b->fails - forgiven : 0;
		b->at_ms = now;
		if (b->key[0] && strcmp(b->key, key) == 0) {
			return b;
		}
		if (!b->key[0] || b->fails < least->fails) {
			least = b;
		}
	}
	snprintf(least->key, sizeof(least->key), "%s", key);
	least->fails = 0;
	least->at_ms = now;
	return least;
}

/* The seconds a login from addr for user must wait, 0 if none. */
static int must_wait(struct monitor *m, const char *user, const char *addr, uint64_t now)
{
	double a = bucket(m, "a", addr, now)->fails - (GATE_FAIL_BURST - 1);
	double u = bucket(m, "u", user, now)->fails - (2 * GATE_FAIL_BURST - 1);
	double over = a > u ? a : u;
	return over > 0 ? (int)(over * GATE_FAIL_EVERY_MS / 1000) + 1 : 0;
}

/* A try counts as a failure from its start (so tries at once are slowed
 * as tries in a row are), and is given back if it succeeds. */
static void tried(struct monitor *m, const char *user, const char *addr, uint64_t now, double n)
{
	struct bucket *a = bucket(m, "a", addr, now), *u = bucket(m, "u", user, now);
	a->fails = a->fails + n > 0 ? a->fails + n : 0;
	u->fails = u->fails + n > 0 ? u->fails + n : 0;
}

/* Logins ---------------------------------------------------------------- */

static struct login *login_of(struct monitor *m, const char *cookie, uint64_t now)
{
	if (strlen(cookie) != GATE_COOKIE_HEX) {
		return NULL;
	}
	struct login *found = NULL;
	for (int i = 0; i < MAX_LOGINS; i++) {
		struct login *l = &m->logins[i];
		if (l->cookie[0] && same(l->cookie, cookie, GATE_COOKIE_HEX)) {
			found = l;
		}
	}
	if (!found) {
		return NULL;
	}
	const struct gate_config *c = m->config;
	const char *why = now - found->created_ms >= (uint64_t)c->lifetime_s * 1000 ? "its lifetime"
		: now - found->last_ms >= (uint64_t)c->idle_s * 1000		    ? "idle"
										    : NULL;
	if (why) {
		log_info("login of %s from %s expired (%s)", found->user, found->addr, why);
		memset(found, 0, sizeof(*found));
		return NULL;
	}
	found->last_ms = now;
	return found;
}

static struct login *login_new(struct monitor *m, const char *user, const char *addr, uint64_t now)
{
	struct login *slot = NULL;
	for (int i = 0; i < MAX_LOGINS && !slot; i++) {
		if (!m->logins[i].cookie[0]) {
			slot = &m->logins[i];
		}
	}
	if (!slot) {
		/* Full: the login idle longest goes. */
		slot = &m->logins[0];
		for (int i = 1; i < MAX_LOGINS; i++) {
			if (m->logins[i].last_ms < slot->last_ms) {
				slot = &m->logins[i];
			}
		}
		log_info("login of %s from %s ended to make room for a new one", slot->user,
			slot->addr);
	}
	memset(slot, 0, sizeof(*slot));
	if (!gate_random_hex(slot->cookie, GATE_COOKIE_HEX / 2) ||
		!gate_random_hex(slot->csrf, GATE_CSRF_HEX / 2)) {
		memset(slot, 0, sizeof(*slot));
		return NULL;
	}
	snprintf(slot->user, sizeof(slot->user), "%s", user);
	snprintf(slot->addr, sizeof(slot->addr), "%s", addr);
	slot->created_ms = slot->last_ms = now;
	return slot;
}

static bool spawn(struct monitor *m, const struct gate_request *req)
{
	struct job *job = NULL;
	for (int i = 0; i < MAX_JOBS && !job; i++) {
		if (!m->jobs[i].pid) {
			job = &m->jobs[i];
		}
	}
	int sv[2];
	if (!job || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		return false;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return false;
	}
	if (pid == 0) {
		close(sv[0]);
		close(m->net);
		struct gate_request copy = *req;
		acts_run(m->config, &copy, sv[1]);
		explicit_bzero(copy.secret, sizeof(copy.secret));
		_exit(0);
	}
	close(sv[1]);
	*job = (struct job){.pid = pid, .fd = sv[0], .req = *req, .started_ms = now_ms()};
	explicit_bzero(job->req.secret, sizeof(job->req.secret));
	if (req->op == GATE_LOGIN) {
		job->pam = true;
		m->logins_at_once++;
	}
	return true;
}

static void job_end(struct monitor *m, struct job *job)
{
	if (job->fd >= 0) {
		close(job->fd);
	}
	if (job->pam) {
		m->logins_at_once--;
	}
	memset(job, 0, sizeof(*job));
	job->fd = -1;
}

static const char *op_name(uint32_t op)
{
	switch (op) {
	case GATE_START:
		return "start";
	case GATE_STOP:
		return "stop";
	case GATE_OPEN:
		return "attach";
	default:
		return NULL;
	}
}

/* What a child answered, or (got < 0) that it ended without an answer. */
static void job_answered(struct monitor *m, struct job *job, const struct gate_answer *got,
	const char *text, size_t len, int passfd)
{
	const struct gate_request *req = &job->req;
	char said[512];
	log_escape(said, sizeof(said), text ? text : "", text ? len : 0);
	uint64_t now = now_ms();
	if (req->op == GATE_LOGIN) {
		if (got && got->status == GATE_OK) {
			tried(m, req->user, req->addr, now, -1);
			struct login *l = login_new(m, req->user, req->addr, now);
			if (!l) {
				answer(m, req->id, GATE_FAILED, "no random bytes for a cookie",
					NULL);
			} else {
				log_info("login: %s from %s", req->user, req->addr);
				struct gate_answer a = {.max_age = (uint32_t)m->config->lifetime_s};
				memcpy(a.cookie, l->cookie, sizeof(a.cookie));
				memcpy(a.csrf, l->csrf, sizeof(a.csrf));
				memcpy(a.user, l->user, sizeof(a.user));
				answer(m, req->id, GATE_OK, NULL, &a);
			}
			job_end(m, job);
			return;
		}
		log_info("login failed: %s from %s: %s", req->user, req->addr,
			got ? said : "PAM's child ended without a word");
		/* Answered when every failure is, whatever the reason. */
		job->held = true;
		job->due_ms = job->started_ms + GATE_FAIL_ANSWER_MS;
		close(job->fd);
		job->fd = -1;
		job->pam = false;
		m->logins_at_once--;
		return;
	}
	const char *verb = op_name(req->op);
	struct gate_answer a = {0};
	memcpy(a.user, req->user, sizeof(a.user));
	a.id = req->id;
	a.status = got ? got->status : GATE_FAILED;
	if (!got) {
		text = "the act ended without an answer";
		len = strlen(text);
	}
	if (verb) {
		if (a.status == GATE_OK) {
			log_info("%s: %s from %s: session %s", verb, req->user, req->addr,
				req->op == GATE_START ? said : req->arg);
		} else {
			log_info("%s refused: %s from %s: %s", verb, req->user, req->addr,
				got ? said : text);
		}
	}
	if (!gate_send_answer(m->net, &a, text, len, passfd)) {
		log_error("cannot answer the network process: %s", strerror(errno));
	}
	if (passfd >= 0) {
		close(passfd);
	}
	job_end(m, job);
}

static void job_readable(struct monitor *m, struct job *job)
{
	int passfd;
	ssize_t n = gate_receive(job->fd, m->text, sizeof(m->text), &passfd);
	if (n < 0 && errno == EAGAIN) {
		return;
	}
	if (n < (ssize_t)sizeof(struct gate_answer)) {
		if (passfd >= 0) {
			close(passfd);
		}
		job_answered(m, job, NULL, NULL, 0, -1);
		return;
	}
	struct gate_answer got;
	memcpy(&got, m->text, sizeof(got));
	size_t len = (size_t)n - sizeof(got);
	job_answered(m, job, &got, (const char *)m->text + sizeof(got), len, passfd);
}

/* Requests -------------------------------------------------------------- */

static void request(struct monitor *m, struct gate_request *req)
{
	uint64_t now = now_ms();
	if (req->op == GATE_LOGIN) {
		int wait = must_wait(m, req->user, req->addr, now);
		if (wait) {
			char text[160];
			snprintf(text, sizeof(text),
				"Too many failed logins for this name or from this address: try "
				"again "
				"in %d s.",
				wait);
			log_info("login slowed: %s from %s (wait %d s)", req->user, req->addr,
				wait);
			answer(m, req->id, GATE_SLOW, text, NULL);
		} else if (m->logins_at_once >= m->config->logins_at_once || !spawn(m, req)) {
			answer(m, req->id, GATE_BUSY, "The gate is busy: try again in a moment.",
				NULL);
		} else {
			tried(m, req->user, req->addr, now, 1);
		}
		explicit_bzero(req->secret, sizeof(req->secret));
		return;
	}
	struct login *login = login_of(m, req->cookie, now);
	if (!login) {
		answer(m, req->id, GATE_REFUSED, "Not logged in (or the login expired).", NULL);
		return;
	}
	struct gate_answer who = {0};
	memcpy(who.user, login->user, sizeof(who.user));
	memcpy(who.csrf, login->csrf, sizeof(who.csrf));
	bool changes = req->op == GATE_LOGOUT || req->op == GATE_START || req->op == GATE_STOP;
	if (changes &&
		(strlen(req->csrf) != GATE_CSRF_HEX ||
			!same(req->csrf, login->csrf, GATE_CSRF_HEX))) {
		log_info("refused a request of %s from %s without the page's token (CSRF?)",
			login->user, req->addr);
		answer(m, req->id, GATE_REFUSED, "The request did not come from the gate's page.",
			NULL);
		return;
	}
	switch (req->op) {
	case GATE_WHO:
		answer(m, req->id, GATE_OK, NULL, &who);
		return;
	case GATE_LOGOUT:
		log_info("logout: %s from %s", login->user, req->addr);
		memset(login, 0, sizeof(*login));
		answer(m, req->id, GATE_OK, NULL, NULL);
		return;
	case GATE_LIST:
	case GATE_APPS:
	case GATE_ICON:
	case GATE_START:
	case GATE_STOP:
	case GATE_OPEN:
		if (req->op != GATE_LIST && req->op != GATE_APPS && !req->arg[0]) {
			answer(m, req->id, GATE_NOT_FOUND, "no name given", NULL);
			return;
		}
		if ((req->op == GATE_OPEN || req->op == GATE_STOP) &&
			!wire_session_name_ok(req->arg, strlen(req->arg))) {
			answer(m, req->id, GATE_NOT_FOUND, "no such session of yours is running",
				NULL);
			return;
		}
		/* The user is the login's, never the request's. */
		memcpy(req->user, login->user, sizeof(req->user));
		if (!spawn(m, req)) {
			answer(m, req->id, GATE_BUSY, "The gate is busy: try again in a moment.",
				NULL);
		}
		return;
	default:
		answer(m, req->id, GATE_FAILED, "not a request", NULL);
	}
}

/* Children that ended: the acts' (whose sockets said so already) and the
 * sessions' keepers. */
static void reap(void)
{
	int status;
	while (waitpid(-1, &status, WNOHANG) > 0) {
	}
}

int monitor_run(const struct gate_config *config, int fd)
{
	static struct monitor m;
	m.config = config;
	m.net = fd;
	for (int i = 0; i < MAX_JOBS; i++) {
		m.jobs[i].fd = -1;
	}
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		reap();
		struct pollfd fds[MAX_JOBS + 1];
		struct job *of[MAX_JOBS + 1];
		int n = 0;
		fds[n] = (struct pollfd){.fd = m.net, .events = POLLIN};
		of[n++] = NULL;
		uint64_t now = now_ms(), next = now + 1000;
		for (int i = 0; i < MAX_JOBS; i++) {
			struct job *job = &m.jobs[i];
			if (!job->pid) {
				continue;
			}
			if (job->held) {
				if (job->due_ms <= now) {
					answer(&m, job->req.id, GATE_REFUSED,
						"Wrong user name or password.", NULL);
					job_end(&m, job);
					continue;
				}
				next = job->due_ms < next ? job->due_ms : next;
				continue;
			}
			if (now - job->started_ms >= JOB_TIMEOUT_MS) {
				kill(job->pid, SIGKILL);
				log_info("%s of %s took too long: ended",
					op_name(job->req.op) ? op_name(job->req.op) : "an act",
					job->req.user);
				job_answered(&m, job, NULL, NULL, 0, -1);
				continue;
			}
			fds[n] = (struct pollfd){.fd = job->fd, .events = POLLIN};
			of[n++] = job;
		}
		int r = poll(fds, (nfds_t)n, (int)(next - now));
		if (r < 0 && errno != EINTR) {
			log_error("poll: %s", strerror(errno));
			return 1;
		}
		for (int i = 1; i < n; i++) {
			if (fds[i].revents && of[i]->pid && !of[i]->held) {
				job_readable(&m, of[i]);
			}
		}
		if (fds[0].revents) {
			struct gate_request req;
			int passfd;
			ssize_t got = gate_receive(m.net, &req, sizeof(req), &passfd);
			if (passfd >= 0) {
				close(passfd);
			}
			if (got == 0 || (got < 0 && errno != EAGAIN)) {
				log_info("the network process is gone: the gate ends");
				return 0;
			}
			if (got == (ssize_t)sizeof(req) && gate_request_ok(&req)) {
				request(&m, &req);
			} else if (got > 0) {
				log_error("a malformed request from the network process: the gate "
					  "ends");
				return 1;
			}
			explicit_bzero(&req, sizeof(req));
		}
	}
}
