#include <arpa/inet.h>
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
#include "logins.h"
#include "monitor.h"
#include "penalty.h"
#include "monotonic.h"
#include "web-admit.h"
#include "wire.h"

/* Acts in flight at once (children), and logins held. */
#define MAX_JOBS 64
#define MAX_BUCKETS 4096
/* A child that has not answered by then is killed and its act fails. */
#define JOB_TIMEOUT_MS 15000
/* One logged-in user's acts in flight at once: however many requests one
 * user sends, the others' acts have the rest of the slots. */
#define ACTS_PER_USER 8
/* Failed logins' answers waiting for their second (GATE_FAIL_ANSWER_MS),
 * out of the jobs' slots; past this many, one is answered at once. */
#define MAX_HELD 1024
/* Sessions' keepers (a START's child, which holds the session's PAM
 * session while it runs), and how long a session that has started may
 * still be starting (an attach waits for its socket that long). */
#define MAX_KEEPERS 4096
#define STARTING_MS 5000
/* Addresses that logged in (a user's own machines): their logins keep a
 * share of the PAM conversations that strangers' never take. */
#define MAX_KNOWN 4096
#define KNOWN_FOR_MS (30ull * 86400 * 1000)

struct job {
	pid_t pid; /* 0: a free slot */
	int fd; /* the monitor's end of the child's socket pair */
	struct gate_request req; /* its secret wiped */
	uint64_t started_ms;
	bool pam; /* a login's PAM conversation, counted in logins_at_once */
	bool stranger; /* and from an address that has not logged in */
};

struct held {
	uint32_t id; /* 0: free */
	uint64_t due_ms;
};

struct keeper {
	pid_t pid; /* 0: free */
	char user[GATE_USER_MAX + 1];
	char name[GATE_ARG_MAX + 1]; /* the session's, once it started */
	uint64_t started_ms;
};

/* Viewers the monitor let through (an OPEN answered with the session's
 * socket), until the network process says they ended: counted per user,
 * and ended with their login. */
#define MAX_VIEWERS 4096
struct viewer {
	uint32_t id; /* the OPEN's; 0: free */
	char user[GATE_USER_MAX + 1];
	uint8_t login[LOGIN_KEY_BYTES]; /* its login's key */
};

struct known {
	char addr[ADMIT_KEY_MAX]; /* addr_key's; empty: free */
	char user[GATE_USER_MAX + 1]; /* who logged in from there */
	uint64_t at_ms;
};

struct bucket {
	char key[ADMIT_KEY_MAX + GATE_USER_MAX + 4]; /* "a:ADDR" or "u:NAME"; empty: free */
	struct penalty p;
	uint64_t used_ms;
};

struct monitor {
	const struct gate_config *config;
	int net, listen;
	struct job jobs[MAX_JOBS];
	struct logins logins;
	struct bucket buckets[MAX_BUCKETS];
	struct held held[MAX_HELD];
	struct keeper keepers[MAX_KEEPERS];
	struct known known[MAX_KNOWN];
	struct viewer viewers[MAX_VIEWERS];
	int logins_at_once, strangers_at_once;
	uint64_t swept_ms;
	bool started;
	uint8_t text[sizeof(struct gate_answer) + GATE_TEXT_MAX];
};

static uint64_t now_ms(void)
{
	return monotonic_usec() / 1000;
}

/* A name a peer typed, as a log line may hold it: control characters and
 * bad UTF-8 as \xNN, so that no name writes a line of its own. */
#define SHOWN_MAX (GATE_USER_MAX * 4 + 1)
static const char *shown(const char *name, char out[SHOWN_MAX])
{
	log_escape(out, SHOWN_MAX, name, strnlen(name, GATE_USER_MAX));
	return out;
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

/* What an address counts as, as the browsers' door counts it (admit_key):
 * IPv4 by address, IPv6 by its /64 (one machine or one network's worth:
 * 2^64 addresses of one attacker are one source), IPv4 in IPv6 as IPv4.
 * The address is one gate_request_ok let through: an address, or "?". */
#define KEY_MAX ADMIT_KEY_MAX
static void addr_key(const char *addr, char out[KEY_MAX])
{
	struct sockaddr_in6 six = {.sin6_family = AF_INET6};
	struct sockaddr_in four = {.sin_family = AF_INET};
	if (inet_pton(AF_INET6, addr, &six.sin6_addr) == 1) {
		admit_key((struct sockaddr *)&six, sizeof(six), -1, out);
	} else if (inet_pton(AF_INET, addr, &four.sin_addr) == 1) {
		admit_key((struct sockaddr *)&four, sizeof(four), -1, out);
	} else {
		snprintf(out, KEY_MAX, "%s", addr);
	}
}

/* Addresses that logged in --------------------------------------------- */

/* An address that logged in (as user, where user is not NULL) within
 * KNOWN_FOR_MS, or NULL. */
static struct known *known_of(struct monitor *m, const char *addr, const char *user, uint64_t now)
{
	char key[KEY_MAX];
	addr_key(addr, key);
	for (int i = 0; i < MAX_KNOWN; i++) {
		struct known *k = &m->known[i];
		if (k->addr[0] && strcmp(k->addr, key) == 0 &&
			(!user || strcmp(k->user, user) == 0) && now - k->at_ms < KNOWN_FOR_MS) {
			return k;
		}
	}
	return NULL;
}

static void known_add(struct monitor *m, const char *addr, const char *user, uint64_t now)
{
	struct known *slot = known_of(m, addr, user, now);
	for (int i = 0; i < MAX_KNOWN && !slot; i++) {
		if (!m->known[i].addr[0]) {
			slot = &m->known[i];
		}
	}
	if (!slot) {
		slot = &m->known[0]; /* full: the one that logged in longest ago goes */
		for (int i = 1; i < MAX_KNOWN; i++) {
			if (m->known[i].at_ms < slot->at_ms) {
				slot = &m->known[i];
			}
		}
	}
	addr_key(addr, slot->addr);
	snprintf(slot->user, sizeof(slot->user), "%s", user);
	slot->at_ms = now;
}

/* Acts and sessions per user --------------------------------------------- */

static int acts_of(const struct monitor *m, const char *user)
{
	int n = 0;
	for (int i = 0; i < MAX_JOBS; i++) {
		const struct job *j = &m->jobs[i];
		n += j->pid && !j->pam && strcmp(j->req.user, user) == 0;
	}
	return n;
}

static int keepers_of(const struct monitor *m, const char *user)
{
	int n = 0;
	for (int i = 0; i < MAX_KEEPERS; i++) {
		n += m->keepers[i].pid && strcmp(m->keepers[i].user, user) == 0;
	}
	return n;
}

/* The user's viewers, open or being opened. */
static int viewers_of(const struct monitor *m, const char *user)
{
	int n = 0;
	for (int i = 0; i < MAX_VIEWERS; i++) {
		n += m->viewers[i].id && strcmp(m->viewers[i].user, user) == 0;
	}
	for (int i = 0; i < MAX_JOBS; i++) {
		const struct job *j = &m->jobs[i];
		n += j->pid && j->req.op == GATE_OPEN && strcmp(j->req.user, user) == 0;
	}
	return n;
}

static void viewer_add(struct monitor *m, const struct gate_request *req)
{
	struct login *l = logins_find(&m->logins, req->cookie);
	for (int i = 0; l && i < MAX_VIEWERS; i++) {
		struct viewer *v = &m->viewers[i];
		if (!v->id) {
			v->id = req->id;
			memcpy(v->user, req->user, sizeof(v->user));
			memcpy(v->login, l->key, sizeof(v->login));
			return;
		}
	}
}

/* A login has ended: so do its viewers, told why. */
static void viewers_end(struct monitor *m, const uint8_t *login, const char *why)
{
	for (int i = 0; i < MAX_VIEWERS; i++) {
		struct viewer *v = &m->viewers[i];
		if (v->id && logins_same_key(v->login, login)) {
			answer(m, v->id, GATE_ENDED, why, NULL);
			memset(v, 0, sizeof(*v));
		}
	}
}

static bool has_viewers(const struct monitor *m, const uint8_t *login)
{
	for (int i = 0; i < MAX_VIEWERS; i++) {
		if (m->viewers[i].id && logins_same_key(m->viewers[i].login, login)) {
			return true;
		}
	}
	return false;
}

static struct keeper *keeper_of(struct monitor *m, pid_t pid)
{
	for (int i = 0; i < MAX_KEEPERS; i++) {
		if (m->keepers[i].pid == pid) {
			return &m->keepers[i];
		}
	}
	return NULL;
}

/* Whether user's session name started within STARTING_MS: an attach to
 * it may wait for its socket. Any other name is tried once. */
static bool starting(struct monitor *m, const char *user, const char *name, uint64_t now)
{
	for (int i = 0; i < MAX_KEEPERS; i++) {
		const struct keeper *k = &m->keepers[i];
		if (k->pid && strcmp(k->user, user) == 0 && strcmp(k->name, name) == 0 &&
			now - k->started_ms < STARTING_MS) {
			return true;
		}
	}
	return false;
}

static void hold(struct monitor *m, uint32_t id, uint64_t due)
{
	for (int i = 0; i < MAX_HELD; i++) {
		if (!m->held[i].id) {
			m->held[i] = (struct held){id, due};
			return;
		}
	}
	answer(m, id, GATE_REFUSED, "Wrong user name or password.", NULL);
}

/* Failed logins --------------------------------------------------------- */

/* Per address (its prefix: addr_key): a burst of GATE_FAIL_BURST, then a
 * shut-out of 3 s (a failure's answer takes 1 s: the first outlasts it)
 * that doubles with each failure up to 10 min, halving each 10 min without
 * one: a guesser from one source gets about 144 tries a day. Per user
 * name, from addresses that never logged in as that user: twice the
 * burst, then 3 s doubling up to an hour, halving each hour: about 24 a
 * day however many addresses guess. The user's own machines
 * (an address that logged in as the user before) are never shut out by
 * the name's penalty. */
static const struct penalty_rule address_rule = {GATE_FAIL_BURST, GATE_FAIL_EVERY_MS, 3000,
	600 * 1000, 600 * 1000};
static const struct penalty_rule name_rule = {2 * GATE_FAIL_BURST, GATE_FAIL_EVERY_MS, 3000,
	3600 * 1000, 3600 * 1000};

static struct bucket *bucket(struct monitor *m, const char *kind, const char *name, uint64_t now)
{
	char key[sizeof(m->buckets[0].key)];
	snprintf(key, sizeof(key), "%s:%s", kind, name);
	struct bucket *least = NULL;
	for (int i = 0; i < MAX_BUCKETS; i++) {
		struct bucket *b = &m->buckets[i];
		if (b->key[0] && strcmp(b->key, key) == 0) {
			b->used_ms = now;
			return b;
		}
		/* Room is made by a source that is shut out of nothing and
		 * has failed least, the one used longest ago among those. */
		bool idle = !b->key[0] || b->p.until_ms <= now;
		bool least_idle = least && (!least->key[0] || least->p.until_ms <= now);
		if (!least || (idle && !least_idle) ||
			(idle == least_idle &&
				(b->p.fails < least->p.fails ||
					(b->p.fails == least->p.fails &&
						b->used_ms < least->used_ms)))) {
			least = b;
		}
	}
	memset(least, 0, sizeof(*least));
	snprintf(least->key, sizeof(least->key), "%s", key);
	least->p.at_ms = least->p.decayed_ms = least->used_ms = now;
	return least;
}

/* The seconds a login from addr for user must wait, 0 if none. */
static int must_wait(struct monitor *m, const char *user, const char *addr, uint64_t now)
{
	char key[KEY_MAX];
	addr_key(addr, key);
	uint64_t a = penalty_wait(&bucket(m, "a", key, now)->p, &address_rule, now);
	uint64_t u = known_of(m, addr, user, now)
		? 0
		: penalty_wait(&bucket(m, "u", user, now)->p, &name_rule, now);
	uint64_t wait = a > u ? a : u;
	return wait ? (int)((wait + 999) / 1000) : 0;
}

/* A try counts as a failure from its start (so tries at once are slowed
 * as tries in a row are), and is given back if it succeeds. */
static void tried(struct monitor *m, const char *user, const char *addr, uint64_t now, int n)
{
	char key[KEY_MAX];
	addr_key(addr, key);
	struct bucket *a = bucket(m, "a", key, now), *u = bucket(m, "u", user, now);
	if (n > 0) {
		penalty_failed(&a->p, &address_rule, now);
		penalty_failed(&u->p, &name_rule, now);
	} else {
		penalty_given_back(&a->p, &address_rule, now);
		penalty_given_back(&u->p, &name_rule, now);
	}
}

/* Logins ---------------------------------------------------------------- */

/* A login ends: its viewers with it, told why. */
static void login_end(struct monitor *m, struct login *l, const char *why)
{
	viewers_end(m, l->key, why);
	logins_remove(&m->logins, l);
}

/* Whether l has expired (and is ended now): past its lifetime, or idle,
 * where a viewer open counts as use. */
static bool login_expired(struct monitor *m, struct login *l, uint64_t now)
{
	const struct gate_config *c = m->config;
	if (has_viewers(m, l->key)) {
		l->last_ms = now;
		m->logins.touched = true;
	}
	const char *why = now - l->created_ms >= (uint64_t)c->lifetime_s * 1000 ? "its lifetime"
		: now - l->last_ms >= (uint64_t)c->idle_s * 1000		? "idle"
										: NULL;
	if (!why) {
		return false;
	}
	log_info("login of %s from %s expired (%s)", l->user, l->addr, why);
	login_end(m, l,
		"your login at the gate expired: log in again to go on (the session runs on)");
	return true;
}

static struct login *login_of(struct monitor *m, const char *cookie, uint64_t now)
{
	struct login *found = logins_find(&m->logins, cookie);
	if (!found || login_expired(m, found, now)) {
		return NULL;
	}
	found->last_ms = now;
	m->logins.touched = true;
	return found;
}

static bool spawn(struct monitor *m, const struct gate_request *req, bool stranger)
{
	struct job *job = NULL;
	for (int i = 0; i < MAX_JOBS && !job; i++) {
		if (!m->jobs[i].pid) {
			job = &m->jobs[i];
		}
	}
	int sv[2];
	if (!job) {
		log_error("busy: %d acts and PAM conversations at once already", MAX_JOBS);
		return false;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		log_error("busy: no socket for an act: %s", strerror(errno));
		return false;
	}
	pid_t pid = fork();
	if (pid < 0) {
		log_error("busy: cannot start an act: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return false;
	}
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		close(sv[0]);
		close(m->net);
		/* The port is the gate's alone: a session's keeper, which
		 * outlives the gate, must not hold it open. */
		close(m->listen);
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
		job->stranger = stranger;
		m->logins_at_once++;
		m->strangers_at_once += stranger;
	}
	if (req->op == GATE_START) {
		/* The act's child stays as the session's keeper: the user's
		 * sessions are counted here, at once. */
		struct keeper *k = keeper_of(m, 0);
		if (k) {
			*k = (struct keeper){.pid = pid, .started_ms = job->started_ms};
			snprintf(k->user, sizeof(k->user), "%s", req->user);
		}
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
		m->strangers_at_once -= job->stranger;
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
			known_add(m, req->addr, req->user, now);
			char cookie[GATE_COOKIE_HEX + 1];
			struct login *l = logins_add(&m->logins, req->user, req->addr, now, cookie);
			if (!l) {
				answer(m, req->id, GATE_FAILED, "no random bytes for a cookie",
					NULL);
			} else {
				char u[SHOWN_MAX];
				log_info("login: %s from %s", shown(req->user, u), req->addr);
				struct gate_answer a = {.max_age = (uint32_t)m->config->lifetime_s};
				memcpy(a.cookie, cookie, sizeof(a.cookie));
				explicit_bzero(cookie, sizeof(cookie));
				memcpy(a.csrf, l->csrf, sizeof(a.csrf));
				memcpy(a.user, l->user, sizeof(a.user));
				answer(m, req->id, GATE_OK, NULL, &a);
			}
			job_end(m, job);
			return;
		}
		char u[SHOWN_MAX];
		log_info("login failed: %s from %s: %s", shown(req->user, u), req->addr,
			got ? said : "PAM's child ended without a word");
		/* Answered when every failure is, whatever the reason; its
		 * slot is free now. */
		hold(m, req->id, job->started_ms + GATE_FAIL_ANSWER_MS);
		job_end(m, job);
		return;
	}
	if (req->op == GATE_OPEN && got && got->status == GATE_OK && passfd >= 0) {
		viewer_add(m, req);
	}
	if (req->op == GATE_START && got && got->status == GATE_OK) {
		struct keeper *k = keeper_of(m, job->pid);
		if (k) {
			snprintf(k->name, sizeof(k->name), "%.*s", (int)len, text);
			k->started_ms = now;
		}
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
	if (req->op == GATE_CLOSED) {
		/* A viewer of an OPEN's ended; nothing is answered. */
		for (int i = 0; req->id && i < MAX_VIEWERS; i++) {
			if (m->viewers[i].id == req->id) {
				memset(&m->viewers[i], 0, sizeof(m->viewers[i]));
			}
		}
		return;
	}
	if (req->op == GATE_LOGIN) {
		int wait = must_wait(m, req->user, req->addr, now);
		if (wait) {
			char text[160];
			snprintf(text, sizeof(text),
				"Too many failed logins for this name or from this address: try "
				"again "
				"in %d s.",
				wait);
			char u[SHOWN_MAX];
			log_info("login slowed: %s from %s (wait %d s)", shown(req->user, u),
				req->addr, wait);
			answer(m, req->id, GATE_SLOW, text, NULL);
		} else {
			/* A quarter of the conversations (one at least) are
			 * kept for addresses that have logged in: a flood of
			 * strangers' logins never keeps a user's own machine
			 * out. */
			int most = m->config->logins_at_once;
			int reserve = most / 4 > 0 ? most / 4 : 1;
			bool stranger = !known_of(m, req->addr, NULL, now);
			if (m->logins_at_once >= most ||
				(stranger && m->strangers_at_once >= most - reserve) ||
				!spawn(m, req, stranger)) {
				answer(m, req->id, GATE_BUSY,
					"The gate is busy: try again in a moment.", NULL);
			} else {
				tried(m, req->user, req->addr, now, 1);
			}
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
	bool changes = req->op == GATE_LOGOUT || req->op == GATE_START || req->op == GATE_STOP ||
		req->op == GATE_RENAME;
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
		login_end(m, login,
			"you logged out of the gate: log in again to go on (the session runs on)");
		answer(m, req->id, GATE_OK, NULL, NULL);
		return;
	case GATE_LIST:
	case GATE_APPS:
	case GATE_ICON:
	case GATE_START:
	case GATE_STOP:
	case GATE_OPEN:
	case GATE_RENAME:
	case GATE_THUMB:
		if (req->op != GATE_LIST && req->op != GATE_APPS && !req->arg[0]) {
			answer(m, req->id, GATE_NOT_FOUND, "no name given", NULL);
			return;
		}
		if (req->op == GATE_RENAME && !session_label_ok(req->label, strlen(req->label))) {
			answer(m, req->id, GATE_FAILED,
				"a session's name is at most 120 bytes, with no control characters",
				NULL);
			return;
		}
		if ((req->op == GATE_OPEN || req->op == GATE_STOP || req->op == GATE_RENAME ||
			    req->op == GATE_THUMB) &&
			!session_name_ok(req->arg, strlen(req->arg))) {
			answer(m, req->id, GATE_NOT_FOUND, "no such session of yours is running",
				NULL);
			return;
		}
		/* The user is the login's, never the request's. */
		memcpy(req->user, login->user, sizeof(req->user));
		if (acts_of(m, req->user) >= ACTS_PER_USER) {
			answer(m, req->id, GATE_BUSY,
				"You have as many requests at the gate at once as one may have: "
				"wait for them.",
				NULL);
			return;
		}
		if (req->op == GATE_OPEN &&
			viewers_of(m, req->user) >= m->config->viewers_per_user) {
			char text[160];
			snprintf(text, sizeof(text),
				"you have %d viewers open at this gate, as many as one may have: "
				"close one",
				m->config->viewers_per_user);
			answer(m, req->id, GATE_LIMIT, text, NULL);
			return;
		}
		if (req->op == GATE_START &&
			keepers_of(m, req->user) >= m->config->sessions_per_user) {
			char text[160];
			snprintf(text, sizeof(text),
				"you have %d sessions, as many as one may have here: stop one "
				"first",
				m->config->sessions_per_user);
			answer(m, req->id, GATE_LIMIT, text, NULL);
			return;
		}
		/* Only a session of the user's that has just started is waited
		 * for; any other name is tried once. */
		req->flags &= ~GATE_OPEN_WAIT;
		if (req->op == GATE_OPEN && starting(m, req->user, req->arg, now)) {
			req->flags |= GATE_OPEN_WAIT;
		}
		if (!spawn(m, req, false)) {
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
static void reap(struct monitor *m)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		struct keeper *k = keeper_of(m, pid);
		if (k) {
			memset(k, 0, sizeof(*k));
		}
	}
}

static volatile sig_atomic_t stopping;

static void handle_stop(int signo)
{
	(void)signo;
	stopping = 1;
}

int monitor_run(const struct gate_config *config, int fd, int listen_fd)
{
	static struct monitor m;
	m.config = config;
	m.net = fd;
	m.listen = listen_fd;
	/* A new network process: the old one's viewers and waiting answers
	 * went with it; logins, sessions and acts in flight stay. */
	if (m.started) {
		memset(m.viewers, 0, sizeof(m.viewers));
		memset(m.held, 0, sizeof(m.held));
	} else {
		m.started = true;
		for (int i = 0; i < MAX_JOBS; i++) {
			m.jobs[i].fd = -1;
		}
		/* A restart (an upgrade's, systemctl's) costs no one their
		 * login. */
		logins_load(&m.logins, config->state, config->lifetime_s, config->idle_s, now_ms());
	}
	signal(SIGPIPE, SIG_IGN);
	struct sigaction stop = {.sa_handler = handle_stop};
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGINT, &stop, NULL);
	for (;;) {
		reap(&m);
		/* What changed is on disk before anything else happens. */
		logins_save(&m.logins, now_ms(), false);
		if (stopping) {
			logins_save(&m.logins, now_ms(), true);
			log_info("stopping: the logins are kept for the next start");
			return 0;
		}
		struct pollfd fds[MAX_JOBS + 1];
		struct job *of[MAX_JOBS + 1];
		int n = 0;
		fds[n] = (struct pollfd){.fd = m.net, .events = POLLIN};
		of[n++] = NULL;
		uint64_t now = now_ms(), next = now + 1000;
		if (now - m.swept_ms >= 1000) {
			/* Logins that expired end their viewers within a second. */
			m.swept_ms = now;
			for (int i = 0; i < LOGINS_MAX; i++) {
				if (m.logins.all[i].used) {
					login_expired(&m, &m.logins.all[i], now);
				}
			}
			logins_save(&m.logins, now, false);
		}
		for (int i = 0; i < MAX_HELD; i++) {
			struct held *h = &m.held[i];
			if (h->id && h->due_ms <= now) {
				answer(&m, h->id, GATE_REFUSED, "Wrong user name or password.",
					NULL);
				h->id = 0;
			} else if (h->id) {
				next = h->due_ms < next ? h->due_ms : next;
			}
		}
		for (int i = 0; i < MAX_JOBS; i++) {
			struct job *job = &m.jobs[i];
			if (!job->pid) {
				continue;
			}
			if (now - job->started_ms >= JOB_TIMEOUT_MS) {
				kill(job->pid, SIGKILL);
				char u[SHOWN_MAX];
				log_info("%s of %s took too long: ended",
					op_name(job->req.op) ? op_name(job->req.op) : "an act",
					shown(job->req.user, u));
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
		if (stopping) {
			continue; /* written and ended at the top */
		}
		for (int i = 1; i < n; i++) {
			if (fds[i].revents && of[i]->pid) {
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
				log_warning("the network process is gone: starting a new one");
				return MONITOR_RESTART;
			}
			if (got == (ssize_t)sizeof(req) && gate_request_ok(&req)) {
				request(&m, &req);
			} else if (got > 0) {
				/* It is not believed further: a new one takes its
				 * place, the logins and sessions as they were. */
				log_error(
					"a malformed request from the network process: it is ended "
					"and a new one started");
				explicit_bzero(&req, sizeof(req));
				return MONITOR_RESTART;
			}
			explicit_bzero(&req, sizeof(req));
		}
	}
}
