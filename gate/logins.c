/*
 * The monitor's logins and their file (logins.h). The file is a line per
 * login: "v1 KEY CSRF USER ADDR CREATED LAST", the key and the token in
 * hex, the times the wall clock's in milliseconds (the monotonic clock
 * starts again with the machine). It is written whole to a new file that
 * then takes its place, so a crash leaves the old or the new.
 */
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "logins.h"

/* How often a login's use (its idle time) reaches the file: a restart
 * may add this much to an idle time. */
#define TOUCH_EVERY_MS 60000

static uint64_t wall_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static bool key_of(const char *cookie, uint8_t key[LOGIN_KEY_BYTES])
{
	return gnutls_hash_fast(GNUTLS_DIG_SHA256, cookie, strlen(cookie), key) == 0;
}

bool logins_same_key(const uint8_t *a, const uint8_t *b)
{
	uint8_t diff = 0;
	for (int i = 0; i < LOGIN_KEY_BYTES; i++) {
		diff |= (uint8_t)(a[i] ^ b[i]);
	}
	return diff == 0;
}

static void hex(char *out, const uint8_t *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * n] = '\0';
}

static bool unhex(const char *text, uint8_t *out, size_t n)
{
	if (strlen(text) != 2 * n) {
		return false;
	}
	for (size_t i = 0; i < 2 * n; i++) {
		char c = text[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (v < 0) {
			return false;
		}
		out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | v : v << 4);
	}
	return true;
}

static bool hex_digits(const char *text, size_t n)
{
	uint8_t scratch[64];
	return n / 2 <= sizeof(scratch) && unhex(text, scratch, n / 2);
}

/* A user name as the file may hold it: what useradd makes. */
static bool plain_name(const char *name)
{
	if (!*name) {
		return false;
	}
	for (const char *c = name; *c; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			    (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-' ||
			    *c == '@' || *c == '$')) {
			return false;
		}
	}
	return true;
}

/* Root's and nobody else's: a directory, or a regular file. */
static bool root_only(const struct stat *st, bool dir)
{
	return st->st_uid == 0 && !(st->st_mode & 077) &&
		(dir ? S_ISDIR(st->st_mode) : S_ISREG(st->st_mode));
}

static void parse_line(struct logins *logins, const char *line, int lifetime_s, int idle_s,
	uint64_t now_ms, uint64_t wall)
{
	char v[4], key[2 * LOGIN_KEY_BYTES + 2], csrf[GATE_CSRF_HEX + 2], user[GATE_USER_MAX + 2],
		addr[GATE_ADDR_MAX + 2];
	unsigned long long created, last;
	if (sscanf(line, "%3s %65s %33s %33s %81s %llu %llu", v, key, csrf, user, addr, &created,
		    &last) != 7 ||
		strcmp(v, "v1") != 0 || strlen(csrf) != GATE_CSRF_HEX ||
		!hex_digits(csrf, GATE_CSRF_HEX) || strlen(user) > GATE_USER_MAX ||
		!plain_name(user) || strlen(addr) > GATE_ADDR_MAX || !gate_addr_ok(addr)) {
		return;
	}
	/* Its age and idle time, on the wall clock; gone if either is past. */
	uint64_t age = wall > created ? wall - created : 0;
	uint64_t idle = wall > last ? wall - last : 0;
	if (age >= (uint64_t)lifetime_s * 1000 || idle >= (uint64_t)idle_s * 1000) {
		return;
	}
	for (int i = 0; i < LOGINS_MAX; i++) {
		struct login *l = &logins->all[i];
		if (l->used) {
			continue;
		}
		if (!unhex(key, l->key, LOGIN_KEY_BYTES)) {
			return;
		}
		l->used = true;
		memcpy(l->csrf, csrf, sizeof(l->csrf));
		/* Both were checked to fit (parse_line's first test). */
		memcpy(l->user, user, strlen(user) + 1);
		memcpy(l->addr, addr, strlen(addr) + 1);
		/* On the monotonic clock, where that reaches back so far. */
		l->created_ms = now_ms > age ? now_ms - age : 0;
		l->last_ms = now_ms > idle ? now_ms - idle : 0;
		return;
	}
}

void logins_load(struct logins *logins, const char *state_dir, int lifetime_s, int idle_s,
	uint64_t now_ms)
{
	/* logins is zeroed (the monitor's is static): what is not used is
	 * not touched, so it costs no memory. */
	logins->path[0] = '\0';
	if (!state_dir || !state_dir[0]) {
		return;
	}
	if (mkdir(state_dir, 0700) != 0 && errno != EEXIST) {
		log_error("cannot make %s: %s: logins are not kept across restarts", state_dir,
			strerror(errno));
		return;
	}
	struct stat st;
	if (lstat(state_dir, &st) != 0 || !root_only(&st, true)) {
		log_error("%s is not a directory of root's alone (mode 0700): logins are not kept "
			  "across restarts",
			state_dir);
		return;
	}
	snprintf(logins->path, sizeof(logins->path), "%s/logins", state_dir);
	int fd = open(logins->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT) {
			log_error("cannot read %s: %s", logins->path, strerror(errno));
		}
		return;
	}
	FILE *f = fstat(fd, &st) == 0 && root_only(&st, false) ? fdopen(fd, "re") : NULL;
	if (!f) {
		log_error("%s is not a file of root's alone: its logins are not read",
			logins->path);
		close(fd);
		return;
	}
	uint64_t wall = wall_ms();
	char line[512];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		parse_line(logins, line, lifetime_s, idle_s, now_ms, wall);
	}
	fclose(f);
	for (int i = 0; i < LOGINS_MAX; i++) {
		n += logins->all[i].used;
	}
	if (n) {
		log_info("%d logins kept from before the gate started", n);
	}
	logins->written_ms = now_ms;
}

void logins_save(struct logins *logins, uint64_t now_ms, bool force)
{
	if (!logins->path[0] ||
		!(force || logins->dirty ||
			(logins->touched && now_ms - logins->written_ms >= TOUCH_EVERY_MS))) {
		return;
	}
	char tmp[sizeof(logins->path) + 8];
	snprintf(tmp, sizeof(tmp), "%s.new", logins->path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "we") : NULL;
	if (!f) {
		log_error("cannot write %s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		return;
	}
	uint64_t wall = wall_ms();
	for (int i = 0; i < LOGINS_MAX; i++) {
		const struct login *l = &logins->all[i];
		if (!l->used) {
			continue;
		}
		char key[2 * LOGIN_KEY_BYTES + 1];
		hex(key, l->key, LOGIN_KEY_BYTES);
		fprintf(f, "v1 %s %s %s %s %llu %llu\n", key, l->csrf, l->user, l->addr,
			(unsigned long long)(wall - (now_ms - l->created_ms)),
			(unsigned long long)(wall - (now_ms - l->last_ms)));
	}
	bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, logins->path) != 0) {
		log_error("cannot write %s: %s", logins->path, strerror(errno));
		unlink(tmp);
		return;
	}
	logins->dirty = logins->touched = false;
	logins->written_ms = now_ms;
}

struct login *logins_find(struct logins *logins, const char *cookie)
{
	uint8_t key[LOGIN_KEY_BYTES];
	if (strlen(cookie) != GATE_COOKIE_HEX || !key_of(cookie, key)) {
		return NULL;
	}
	struct login *found = NULL;
	for (int i = 0; i < LOGINS_MAX; i++) {
		struct login *l = &logins->all[i];
		if (l->used && logins_same_key(l->key, key)) {
			found = l;
		}
	}
	return found;
}

struct login *logins_add(struct logins *logins, const char *user, const char *addr, uint64_t now_ms,
	char cookie[GATE_COOKIE_HEX + 1])
{
	struct login *slot = NULL;
	for (int i = 0; i < LOGINS_MAX && !slot; i++) {
		if (!logins->all[i].used) {
			slot = &logins->all[i];
		}
	}
	if (!slot) {
		/* Full: the login idle longest goes. */
		slot = &logins->all[0];
		for (int i = 1; i < LOGINS_MAX; i++) {
			if (logins->all[i].last_ms < slot->last_ms) {
				slot = &logins->all[i];
			}
		}
		log_info("login of %s from %s ended to make room for a new one", slot->user,
			slot->addr);
	}
	memset(slot, 0, sizeof(*slot));
	if (!gate_random_hex(cookie, GATE_COOKIE_HEX / 2) ||
		!gate_random_hex(slot->csrf, GATE_CSRF_HEX / 2) || !key_of(cookie, slot->key)) {
		memset(slot, 0, sizeof(*slot));
		explicit_bzero(cookie, GATE_COOKIE_HEX + 1);
		return NULL;
	}
	slot->used = true;
	snprintf(slot->user, sizeof(slot->user), "%s", user);
	snprintf(slot->addr, sizeof(slot->addr), "%s", addr);
	slot->created_ms = slot->last_ms = now_ms;
	logins->dirty = true;
	return slot;
}

void logins_remove(struct logins *logins, struct login *login)
{
	memset(login, 0, sizeof(*login));
	logins->dirty = true;
}
