/*
 * Files across the link (files.h). A group has one of two directions: out
 * (we read local files and send them) or in (we write what the peer sends).
 * The sender announces the group (file_group) and waits for the receiver's
 * first file_ack, which says where to begin: file 0 at byte 0 for a new
 * group, or where a group resumed after a broken link stands. Then file by
 * file: hashed, offered (file_offer: size, SHA-256, path), its bytes sent in
 * order from that point. The receiver writes bytes only in order; what
 * comes out of order (after a reconnect, before the sender heard where to
 * go on) it drops and says where it is, and the sender goes back there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "log.h"

struct file_src {
	char *path; /* ours, absolute */
	char *name; /* as sent: name, or folder/name */
	uint64_t size;
	uint32_t mode;
};

/* A top-level name of a group received, and the one it got here. */
struct top_name {
	char *given, *chosen;
};

struct files_group {
	bool sending;
	uint32_t id, kind, window;
	int32_t x, y;
	uint32_t nfiles;
	uint64_t bytes; /* announced */
	void *peer; /* NULL: away */
	uint64_t gone_us;
	uint64_t started_us;
	uint64_t done; /* bytes of the files before cur */
	uint32_t cur; /* the file under way */
	/* The recent rate: bytes moved in this second and the last. */
	uint64_t rate_at_us, rate_bytes, rate_last;

	/* out */
	struct file_src *src;
	bool started; /* the receiver said where to begin */
	bool offered; /* cur was offered */
	bool hashed;
	uint64_t hash_pos;
	gnutls_hash_hd_t hash;
	uint8_t sha[32];
	int fd;
	uint64_t sent, acked; /* of cur */
	/* The window, grown while acks come back as fast as the least round
	 * trip and shrunk once a round trip where they come later: when
	 * each recent chunk went, to time the acks. */
	uint64_t cwnd, min_rtt_us, cut_us;
	bool grown; /* past its start, where it doubles a round trip */
	uint64_t round_end, round_queue_us; /* this round trip's: its last byte, least queue */
	uint64_t last_round_queue_us; /* the least queue of the round trip before */
	/* Each round trip's delivery (from its start), and the most seen
	 * since the last probe: the window never goes below that times the
	 * round trip. */
	uint64_t round_start_us, round_start_bytes, max_rate;
	/* The next probe of the least round trip; while one goes (until 0),
	 * the least round trip it saw and the window it had; after it, the
	 * window it grows back to (0: none). */
	uint64_t probe_at_us, probe_until_us, probe_min_us, probe_cwnd, regrow_to;
	struct {
		uint64_t end, at_us;
	} sends[256];
	uint32_t nsends;

	/* in */
	bool asking; /* files = ask: until the person answers, nothing comes */
	uint64_t asked_us;
	uint64_t offered_bytes; /* of the files offered so far */
	char tmp[PATH_MAX], final[PATH_MAX];
	bool have_offer;
	uint64_t size, written, ack_sent;
	bool told_gap; /* the sender was told where we are since the last write */
	uint8_t want[32];
	struct top_name *tops;
	int ntops;
};

static void send_msg(struct files *f, void *peer, const struct wire_msg *msg)
{
	if (peer) {
		f->hooks.send(f->hooks.data, peer, msg);
	}
}

/* Names ------------------------------------------------------------------ */

bool files_path_ok(const char *path, size_t len, char *why, size_t why_size)
{
	if (len == 0 || len > WIRE_MAX_FILE_PATH) {
		snprintf(why, why_size, "a name of %zu bytes", len);
		return false;
	}
	int depth = 0;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && path[i] != '/') {
			unsigned char c = (unsigned char)path[i];
			if (c < 0x20 || c == 0x7f || c == '\\') {
				snprintf(why, why_size, "a name with the character 0x%02x", c);
				return false;
			}
			continue;
		}
		size_t part = i - start;
		if (part == 0) {
			snprintf(why, why_size,
				"a name with an empty part (a leading, trailing or "
				"doubled /)");
			return false;
		}
		if (part > FILES_NAME_MAX) {
			snprintf(why, why_size, "a name with a part of %zu bytes", part);
			return false;
		}
		if (path[start] == '.') {
			snprintf(why, why_size, "a name with a part that begins with a dot (%.*s)",
				(int)(part > 32 ? 32 : part), path + start);
			return false;
		}
		if (++depth > FILES_DEPTH) {
			snprintf(why, why_size, "a name more than %d folders deep", FILES_DEPTH);
			return false;
		}
		start = i + 1;
	}
	return true;
}

void files_clean_name(char *name, size_t size)
{
	for (char *p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c == 0x7f || c == '\\' || c == '/') {
			*p = '_';
		}
	}
	if (name[0] == '.') {
		name[0] = '_';
	}
	size_t len = strlen(name);
	if (len > FILES_NAME_MAX) {
		/* Cut in the middle, keeping the extension and whole characters. */
		const char *dot = strrchr(name, '.');
		size_t ext = dot && strlen(dot) < 16 ? strlen(dot) : 0;
		size_t keep = FILES_NAME_MAX - ext;
		while (keep > 0 && ((unsigned char)name[keep] & 0xc0) == 0x80) {
			keep--;
		}
		memmove(name + keep, name + len - ext, ext + 1);
	}
	if (!name[0] && size > 1) {
		snprintf(name, size, "_");
	}
}

bool files_download_dir(char *out, size_t size)
{
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		return false;
	}
	const char *env = getenv("XDG_DOWNLOAD_DIR");
	if (env && env[0] == '/') {
		return snprintf(out, size, "%s", env) < (int)size;
	}
	/* xdg-user-dirs' file: XDG_DOWNLOAD_DIR="$HOME/Downloads". */
	char path[PATH_MAX];
	const char *config = getenv("XDG_CONFIG_HOME");
	if (config && config[0] == '/') {
		snprintf(path, sizeof(path), "%s/user-dirs.dirs", config);
	} else {
		snprintf(path, sizeof(path), "%s/.config/user-dirs.dirs", home);
	}
	FILE *file = fopen(path, "re");
	char line[PATH_MAX];
	while (file && fgets(line, sizeof(line), file)) {
		char *v = line + strspn(line, " \t");
		if (strncmp(v, "XDG_DOWNLOAD_DIR=\"", 18) != 0) {
			continue;
		}
		v += 18;
		char *end = strchr(v, '"');
		if (!end) {
			break;
		}
		*end = '\0';
		int n = strncmp(v, "$HOME/", 6) == 0 ? snprintf(out, size, "%s/%s", home, v + 6)
			: v[0] == '/'		     ? snprintf(out, size, "%s", v)
						     : -1;
		fclose(file);
		return n > 0 && (size_t)n < size;
	}
	if (file) {
		fclose(file);
	}
	return snprintf(out, size, "%s/Downloads", home) < (int)size;
}

/* Groups ----------------------------------------------------------------- */

static void group_free(struct files_group *g)
{
	if (!g) {
		return;
	}
	if (g->fd >= 0) {
		close(g->fd);
	}
	if (g->hash) {
		gnutls_hash_deinit(g->hash, NULL);
	}
	for (uint32_t i = 0; g->src && i < g->nfiles; i++) {
		free(g->src[i].path);
		free(g->src[i].name);
	}
	free(g->src);
	for (int i = 0; i < g->ntops; i++) {
		free(g->tops[i].given);
		free(g->tops[i].chosen);
	}
	free(g->tops);
	free(g);
}

static struct files_group **slot_of(struct files *f, struct files_group *g)
{
	struct files_group **slots = g->sending ? f->out : f->in;
	for (int i = 0; i < FILES_GROUPS; i++) {
		if (slots[i] == g) {
			return &slots[i];
		}
	}
	return NULL;
}

static struct files_group *find(struct files *f, bool sending, uint32_t id)
{
	struct files_group **slots = sending ? f->out : f->in;
	for (int i = 0; i < FILES_GROUPS; i++) {
		if (slots[i] && slots[i]->id == id) {
			return slots[i];
		}
	}
	return NULL;
}

/* The group ends: a half-written file goes, the peer hears why (tell), and
 * so does our side. */
static void end(struct files *f, struct files_group *g, uint32_t status, uint32_t file,
	const char *text, bool tell)
{
	if (tell) {
		send_msg(f, g->peer,
			&(struct wire_msg){.type = WIRE_FILE_DONE,
				.file_done = {.group = g->id,
					.status = status,
					.file = file,
					.text = text,
					.text_len = (uint32_t)strnlen(text, WIRE_MAX_TEXT)}});
	}
	if (!g->sending && g->tmp[0]) {
		unlink(g->tmp);
	}
	if (status != WIRE_FILES_WHOLE || g->sending) {
		f->hooks.ended(f->hooks.data, g->id, g->kind, g->sending, status, text);
	}
	struct files_group **slot = slot_of(f, g);
	if (slot) {
		*slot = NULL;
	}
	group_free(g);
}

static void note_moved(struct files_group *g, uint64_t bytes, uint64_t now_us)
{
	if (now_us - g->rate_at_us >= 1000000) {
		g->rate_last = now_us - g->rate_at_us < 2000000 ? g->rate_bytes : 0;
		g->rate_bytes = 0;
		g->rate_at_us = now_us;
	}
	g->rate_bytes += bytes;
}

void files_init(struct files *f, const struct files_hooks *hooks,
	const struct files_settings *settings)
{
	memset(f, 0, sizeof(*f));
	f->hooks = *hooks;
	f->settings = *settings;
	/* Group ids that differ from one program's run to the next, so a
	 * resumed group is never mistaken for another's. */
	gnutls_rnd(GNUTLS_RND_NONCE, &f->next_id, sizeof(f->next_id));
}

void files_finish(struct files *f)
{
	/* The peer is told, where it is there: nothing waits for us. */
	for (int i = 0; i < FILES_GROUPS; i++) {
		if (f->in[i]) {
			end(f, f->in[i], WIRE_FILES_CANCELLED, f->in[i]->cur,
				"the other side ended", f->in[i]->peer != NULL);
		}
		if (f->out[i]) {
			end(f, f->out[i], WIRE_FILES_CANCELLED, f->out[i]->cur,
				"the other side ended", f->out[i]->peer != NULL);
		}
	}
}

/* Sending ---------------------------------------------------------------- */

struct listing {
	struct file_src *files;
	uint32_t n, cap;
	uint64_t bytes;
	char *err;
	size_t err_size;
};

static bool add_file(struct listing *l, const char *path, const char *name, const struct stat *st)
{
	if (l->n == WIRE_MAX_FILES) {
		snprintf(l->err, l->err_size, "more than %d files", WIRE_MAX_FILES);
		return false;
	}
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;
		struct file_src *grown = realloc(l->files, cap * sizeof(*grown));
		if (!grown) {
			snprintf(l->err, l->err_size, "no memory");
			return false;
		}
		l->files = grown;
		l->cap = cap;
	}
	struct file_src *s = &l->files[l->n];
	s->path = strdup(path);
	s->name = strdup(name);
	s->size = (uint64_t)st->st_size;
	s->mode = st->st_mode & 0777;
	if (!s->path || !s->name) {
		free(s->path);
		free(s->name);
		snprintf(l->err, l->err_size, "no memory");
		return false;
	}
	l->n++;
	l->bytes += s->size;
	return true;
}

/* path (a file or a folder, walked whole), as name. Special files and
 * links inside folders are left out. */
static bool list_path(struct listing *l, const char *path, const char *name, int depth)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		snprintf(l->err, l->err_size, "%.400s: %s", path, strerror(errno));
		return false;
	}
	if (S_ISREG(st.st_mode)) {
		return add_file(l, path, name, &st);
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(l->err, l->err_size, "%.400s is not a file or a folder", path);
		return false;
	}
	if (depth >= FILES_DEPTH) {
		snprintf(l->err, l->err_size, "%.400s: folders more than %d deep", path,
			FILES_DEPTH);
		return false;
	}
	DIR *d = opendir(path);
	if (!d) {
		snprintf(l->err, l->err_size, "%.400s: %s", path, strerror(errno));
		return false;
	}
	struct dirent *e;
	bool ok = true;
	while (ok && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
			continue;
		}
		char child[PATH_MAX], part[FILES_NAME_MAX + 2], inner[WIRE_MAX_FILE_PATH + 1];
		snprintf(part, sizeof(part), "%s", e->d_name);
		files_clean_name(part, sizeof(part));
		struct stat cs;
		if (snprintf(child, sizeof(child), "%s/%s", path, e->d_name) >=
				(int)sizeof(child) ||
			lstat(child, &cs) != 0 || !(S_ISREG(cs.st_mode) || S_ISDIR(cs.st_mode))) {
			continue;
		}
		if (snprintf(inner, sizeof(inner), "%s/%s", name, part) >= (int)sizeof(inner)) {
			snprintf(l->err, l->err_size, "%.400s: a name longer than %d bytes", child,
				WIRE_MAX_FILE_PATH);
			ok = false;
			break;
		}
		ok = list_path(l, child, inner, depth + 1);
	}
	closedir(d);
	if (ok && l->n == 0) {
		snprintf(l->err, l->err_size, "%.400s holds no file", path);
		ok = false;
	}
	return ok;
}

uint32_t files_send(struct files *f, void *peer, uint32_t kind, uint32_t window, int32_t x,
	int32_t y, const char *const *paths, int n, char *err, size_t err_size)
{
	int slot = -1;
	for (int i = 0; i < FILES_GROUPS && slot < 0; i++) {
		if (!f->out[i]) {
			slot = i;
		}
	}
	if (slot < 0) {
		snprintf(err, err_size, "%d groups of files are under way already", FILES_GROUPS);
		return 0;
	}
	struct listing l = {.err = err, .err_size = err_size};
	bool ok = n > 0;
	if (!ok) {
		snprintf(err, err_size, "no file");
	}
	for (int i = 0; ok && i < n; i++) {
		const char *base = strrchr(paths[i], '/');
		char name[FILES_NAME_MAX + 2];
		snprintf(name, sizeof(name), "%s", base ? base + 1 : paths[i]);
		files_clean_name(name, sizeof(name));
		ok = list_path(&l, paths[i], name, 0);
	}
	struct files_group *g = ok ? calloc(1, sizeof(*g)) : NULL;
	if (!g) {
		if (ok) {
			snprintf(err, err_size, "no memory");
		}
		for (uint32_t i = 0; i < l.n; i++) {
			free(l.files[i].path);
			free(l.files[i].name);
		}
		free(l.files);
		return 0;
	}
	if (++f->next_id == 0) {
		f->next_id = 1;
	}
	*g = (struct files_group){
		.sending = true,
		.id = f->next_id,
		.kind = kind,
		.window = window,
		.x = x,
		.y = y,
		.nfiles = l.n,
		.bytes = l.bytes,
		.src = l.files,
		.fd = -1,
	};
	f->out[slot] = g;
	files_adopt(f, peer);
	return g->id;
}

static void announce(struct files *f, struct files_group *g)
{
	g->started = g->offered = false;
	send_msg(f, g->peer,
		&(struct wire_msg){.type = WIRE_FILE_GROUP,
			.file_group = {.group = g->id,
				.kind = g->kind,
				.window = g->window,
				.x = g->x,
				.y = g->y,
				.files = g->nfiles,
				.bytes = g->bytes}});
}

/* The file under way, from its first byte: opened and hashed anew. */
static void begin_file(struct files_group *g)
{
	if (g->fd >= 0) {
		close(g->fd);
		g->fd = -1;
	}
	if (g->hash) {
		gnutls_hash_deinit(g->hash, NULL);
		g->hash = NULL;
	}
	g->hashed = g->offered = false;
	g->hash_pos = g->sent = g->acked = 0;
	g->nsends = 0; /* offsets begin again: the window and round trip stay */
	g->round_end = 0;
	g->round_start_us = 0;
}

/* Hashes a step of the file under way; true once it is hashed. False with
 * the group ended where it cannot be read. */
static bool hash_step(struct files *f, struct files_group *g)
{
	struct file_src *s = &g->src[g->cur];
	if (g->fd < 0) {
		g->fd = open(s->path, O_RDONLY | O_CLOEXEC);
		struct stat st;
		if (g->fd < 0 || fstat(g->fd, &st) != 0 || (uint64_t)st.st_size != s->size) {
			char why[512];
			snprintf(why, sizeof(why), "%.400s %s", s->path,
				g->fd < 0 ? strerror(errno) : "changed while it was being sent");
			end(f, g, WIRE_FILES_CANCELLED, g->cur, why, true);
			return false;
		}
		if (gnutls_hash_init(&g->hash, GNUTLS_DIG_SHA256) < 0) {
			end(f, g, WIRE_FILES_CANCELLED, g->cur, "cannot hash", true);
			return false;
		}
	}
	static uint8_t buf[256 * 1024];
	uint64_t stop = g->hash_pos + FILES_HASH_STEP;
	while (g->hash_pos < s->size && g->hash_pos < stop) {
		ssize_t r = pread(g->fd, buf, sizeof(buf), (off_t)g->hash_pos);
		if (r <= 0) {
			char why[512];
			snprintf(why, sizeof(why), "%.400s: %s", s->path,
				r < 0 ? strerror(errno) : "shorter than it was");
			end(f, g, WIRE_FILES_CANCELLED, g->cur, why, true);
			return false;
		}
		gnutls_hash(g->hash, buf, (size_t)r);
		g->hash_pos += (uint64_t)r;
	}
	if (g->hash_pos < s->size) {
		return false;
	}
	gnutls_hash_deinit(g->hash, g->sha);
	g->hash = NULL;
	g->hashed = true;
	return true;
}

static void offer(struct files *f, struct files_group *g)
{
	struct file_src *s = &g->src[g->cur];
	send_msg(f, g->peer,
		&(struct wire_msg){.type = WIRE_FILE_OFFER,
			.file_offer = {.group = g->id,
				.file = g->cur,
				.size = s->size,
				.mode = s->mode,
				.sha256_len = 32,
				.sha256 = g->sha,
				.path = s->name,
				.path_len = (uint32_t)strlen(s->name)}});
	g->offered = true;
}

/* Sends what the window allows of the file under way. */
static void send_data(struct files *f, struct files_group *g,
	bool (*may_send)(void *data, void *peer), uint64_t now_us)
{
	struct file_src *s = &g->src[g->cur];
	static uint8_t buf[WIRE_MAX_TRANSFER_CHUNK];
	while (g->sent < s->size && g->sent - g->acked < g->cwnd &&
		may_send(f->hooks.data, g->peer)) {
		/* Chunks of a sixteenth of the window (FILES_CHUNK_MIN to 64
		 * KiB), a sixteenth of a round trip on the link: a key queued
		 * behind one waits for little, and the acks that time the
		 * round trip come often. */
		uint64_t chunk = g->cwnd / 16 < FILES_CHUNK_MIN ? FILES_CHUNK_MIN
			: g->cwnd / 16 > sizeof(buf)		? sizeof(buf)
								: g->cwnd / 16;
		uint64_t left = s->size - g->sent;
		size_t want = (size_t)(left < chunk ? left : chunk);
		ssize_t r = pread(g->fd, buf, want, (off_t)g->sent);
		if (r <= 0) {
			char why[512];
			snprintf(why, sizeof(why), "%.400s: %s", s->path,
				r < 0 ? strerror(errno) : "shorter than it was");
			end(f, g, WIRE_FILES_CANCELLED, g->cur, why, true);
			return;
		}
		send_msg(f, g->peer,
			&(struct wire_msg){.type = WIRE_FILE_DATA,
				.file_data = {.group = g->id,
					.file = g->cur,
					.offset = g->sent,
					.data = buf,
					.len = (uint32_t)r}});
		g->sent += (uint64_t)r;
		uint32_t at = g->nsends++ % 256;
		g->sends[at].end = g->sent;
		g->sends[at].at_us = now_us;
		note_moved(g, (uint64_t)r, now_us);
	}
}

/* An ack that moved the window: its round trip (from the chunk it covers
 * to now) against the least one says whether a queue builds. */
static void adapt_window(struct files_group *g, uint64_t received, uint64_t acked_bytes,
	uint64_t now_us)
{
	uint64_t at = 0;
	for (uint32_t k = 0; k < 256 && k < g->nsends; k++) {
		uint32_t i = (g->nsends - 1 - k) % 256;
		if (g->sends[i].end <= received) {
			at = g->sends[i].at_us;
			break;
		}
	}
	if (!at || now_us < at) {
		return;
	}
	uint64_t rtt = now_us - at;
	if (rtt < g->min_rtt_us) {
		g->min_rtt_us = rtt;
	}
	if (g->probe_until_us) {
		/* The queue drains: only the least round trip is measured,
		 * which is the path's from now on (longer, where it changed). */
		g->probe_min_us = rtt < g->probe_min_us ? rtt : g->probe_min_us;
		if (now_us < g->probe_until_us) {
			return;
		}
		g->min_rtt_us = g->probe_min_us;
		/* Back to the window it had, doubling a round trip from the
		 * probe's (at once would be a burst of it all before the keys;
		 * doubling from few bytes in flight sends no faster than the
		 * link until it is full). */
		g->regrow_to = g->probe_cwnd;
		g->max_rate = 0;
		g->probe_until_us = 0;
		g->probe_at_us = now_us + FILES_PROBE_US;
		g->round_end = 0;
		g->round_queue_us = UINT64_MAX;
		g->last_round_queue_us = 0;
		g->round_start_us = 0;
		return;
	}
	if (!g->probe_at_us) {
		g->probe_at_us = now_us + FILES_PROBE_US;
	} else if (now_us >= g->probe_at_us && g->grown) {
		/* A round trip as it is now (what we queued drains in it),
		 * then what is sent with none queued comes back, and the hold. */
		g->probe_until_us = now_us + rtt + 2 * g->min_rtt_us + FILES_PROBE_HOLD_US;
		g->probe_min_us = UINT64_MAX;
		g->probe_cwnd = g->cwnd;
		g->cwnd = FILES_WINDOW_MIN;
		return;
	}
	uint64_t queue = rtt - g->min_rtt_us;
	/* A round trip's least queue: what stays of it, not a burst's. */
	uint64_t round_queue = queue < g->round_queue_us ? queue : g->round_queue_us;
	bool round_ended = received >= g->round_end;
	g->round_queue_us = round_ended ? UINT64_MAX : round_queue;
	if (round_ended) {
		g->round_end = g->sent;
		g->last_round_queue_us = round_queue;
		if (g->round_start_us && now_us > g->round_start_us &&
			received > g->round_start_bytes) {
			uint64_t rate = (received - g->round_start_bytes) * 1000000 /
				(now_us - g->round_start_us);
			g->max_rate = rate > g->max_rate ? rate : g->max_rate;
		}
		g->round_start_us = now_us;
		g->round_start_bytes = received;
	}
	/* What stays of the queue, not one ack's jitter (the host's, the
	 * path's): the least of this sample and the last round trip's. */
	uint64_t standing = queue < g->last_round_queue_us ? queue : g->last_round_queue_us;
	uint64_t before = g->cwnd;
	bool regrowing = g->regrow_to && g->cwnd < g->regrow_to && standing <= FILES_QUEUE_US / 2;
	g->regrow_to = regrowing ? g->regrow_to : 0;
	if (regrowing) {
		g->cwnd += acked_bytes;
	} else if (!g->grown) {
		/* Doubling a round trip until a queue stays (half the most a
		 * round trip long) or a burst's passes the most. */
		if ((round_ended && round_queue >= FILES_QUEUE_US / 2) || queue > FILES_QUEUE_US) {
			g->grown = true;
		} else {
			g->cwnd += acked_bytes;
		}
	} else if (standing > FILES_QUEUE_US) {
		if (now_us - g->cut_us > rtt) {
			/* Once a round trip, to what the link carried with the
			 * queue it may have. */
			g->cwnd = g->cwnd * (g->min_rtt_us + FILES_QUEUE_US / 2) / rtt;
			g->cut_us = now_us;
		}
	} else {
		/* Then toward a queue of half the most (LEDBAT's rule): up to
		 * 1/FILES_GAIN of the window a round trip with none, down as
		 * much at the most. */
		int64_t off = (int64_t)(FILES_QUEUE_US / 2) - (int64_t)standing;
		int64_t step =
			off * (int64_t)acked_bytes / (int64_t)(FILES_QUEUE_US / 2) / FILES_GAIN;
		g->cwnd = step < 0 && (uint64_t)-step >= g->cwnd
			? 0
			: (uint64_t)((int64_t)g->cwnd + step);
	}
	/* Never shrunk below what the link was seen to carry in a round
	 * trip: a delay that is not our queue (acks behind the other way's
	 * traffic, the channel's own pacing of what we give it) must not
	 * starve it. (Only shrinking: a window raised to it at once, after a
	 * probe, would be a burst before the keys.) */
	uint64_t floor = g->max_rate * g->min_rtt_us / 1000000;
	if (g->cwnd < before && g->cwnd < floor) {
		g->cwnd = before < floor ? before : floor;
	}
	g->cwnd = g->cwnd < FILES_WINDOW_MIN ? FILES_WINDOW_MIN
		: g->cwnd > FILES_WINDOW     ? FILES_WINDOW
					     : g->cwnd;
}

bool files_pump(struct files *f, bool (*may_send)(void *data, void *peer), uint64_t now_us)
{
	bool more = false;
	for (int i = 0; i < FILES_GROUPS; i++) {
		struct files_group *g = f->out[i];
		if (!g || !g->peer || !g->started || g->cur >= g->nfiles) {
			continue;
		}
		if (!g->hashed) {
			if (!hash_step(f, g)) {
				more = more || f->out[i] == g; /* not ended: more to hash */
				continue;
			}
		}
		if (!g->offered) {
			offer(f, g);
		}
		send_data(f, g, may_send, now_us);
	}
	return more;
}

bool files_cancel(struct files *f, uint32_t group, bool sending, const char *why)
{
	struct files_group *g = find(f, sending, group);
	if (!g) {
		return false;
	}
	end(f, g, WIRE_FILES_CANCELLED, g->cur, why, true);
	return true;
}

/* The receiver's ack: where it stands. Its first after an announcement
 * says where to begin; then the file it writes and how much of it it has
 * (the next file at 0 once one is whole: the sender moves on at that). */
static bool handle_ack(struct files *f, void *peer, const struct wire_file_ack *m, char *err,
	size_t err_size, uint64_t now_us)
{
	bool paced = f->settings.paced;
	struct files_group *g = find(f, true, m->group);
	if (!g || g->peer != peer) {
		return true; /* ended meanwhile */
	}
	if (m->file > g->nfiles || (m->file < g->nfiles && m->received > g->src[m->file].size) ||
		(m->file == g->nfiles && m->received != 0)) {
		snprintf(err, err_size, "file_ack of group %u: file %u at %llu, of %u files",
			m->group, m->file, (unsigned long long)m->received, g->nfiles);
		return false;
	}
	if (g->started && m->file < g->cur) {
		return true; /* an old one, crossed with what came since */
	}
	if (!g->started || m->file > g->cur) {
		if (!g->started) {
			/* A link (a new one, where the group resumes): its own
			 * round trip and window. */
			g->cwnd = paced ? FILES_WINDOW_PACED : FILES_WINDOW_START;
			g->min_rtt_us = UINT64_MAX;
			g->cut_us = 0;
			g->grown = false;
			g->round_end = 0;
			g->round_queue_us = UINT64_MAX;
			g->last_round_queue_us = 0;
			g->round_start_us = g->round_start_bytes = g->max_rate = 0;
			g->probe_at_us = g->probe_until_us = g->regrow_to = 0;
		}
		g->started = true;
		g->cur = m->file;
		g->done = 0;
		for (uint32_t i = 0; i < m->file; i++) {
			g->done += g->src[i].size;
		}
		begin_file(g);
		g->sent = g->acked = m->received;
		return true;
	}
	if (m->flags & WIRE_FILES_FROM_HERE) {
		/* It dropped what came out of order, or began the file anew:
		 * back to where it is (the chunks timed are gone). */
		g->sent = g->acked = m->received;
		g->nsends = 0;
		g->round_end = 0;
		g->round_start_us = 0;
	} else if (m->received > g->acked) {
		if (!paced) {
			adapt_window(g, m->received, m->received - g->acked, now_us);
		}
		g->acked = m->received;
	}
	if (g->sent < g->acked) {
		g->sent = g->acked;
	}
	return true;
}

/* Receiving -------------------------------------------------------------- */

/* What we wrote: the sender's window moves; from_here, it also sends again
 * from there (what came after was dropped, or the group resumes). */
static void ack(struct files *f, struct files_group *g, bool from_here)
{
	g->ack_sent = g->written;
	send_msg(f, g->peer,
		&(struct wire_msg){.type = WIRE_FILE_ACK,
			.file_ack = {.group = g->id,
				.file = g->cur,
				.received = g->written,
				.flags = from_here ? WIRE_FILES_FROM_HERE : 0}});
}

static void refuse(struct files *f, void *peer, uint32_t group, uint32_t status, uint32_t file,
	const char *why)
{
	send_msg(f, peer,
		&(struct wire_msg){.type = WIRE_FILE_DONE,
			.file_done = {.group = group,
				.status = status,
				.file = file,
				.text = why,
				.text_len = (uint32_t)strlen(why)}});
}

static bool handle_group(struct files *f, void *peer, bool may_take,
	const struct wire_file_group *m, uint64_t now_us)
{
	struct files_group *g = find(f, false, m->group);
	if (g && g->kind == m->kind && g->nfiles == m->files && g->bytes == m->bytes &&
		(!g->peer || g->peer == peer)) {
		/* The same group again (a new link): on from where we are. */
		g->peer = peer;
		if (!g->asking) {
			ack(f, g, true);
		}
		return true;
	}
	char why[256];
	const struct files_settings *s = &f->settings;
	if (!may_take || s->take == FILES_TAKE_NO || (s->take == FILES_TAKE_ASK && !f->hooks.ask)) {
		refuse(f, peer, m->group, WIRE_FILES_REFUSED, 0,
			!may_take ? "a viewer that watches gives no files"
				  : "this side takes no files (files = no)");
		return true;
	}
	if (g ||
		(m->kind != WIRE_FILES_DROP && m->kind != WIRE_FILES_UPLOAD &&
			m->kind != WIRE_FILES_SEND && m->kind != WIRE_FILES_PRINT &&
			m->kind != WIRE_FILES_DRAG)) {
		refuse(f, peer, m->group, WIRE_FILES_REFUSED, 0,
			g ? "a group of that number is under way" : "not a kind of files");
		return true;
	}
	/* A drag's files come only as the answer this side asked for: the
	 * person's drop, so they are not asked about again. */
	bool drag = m->kind == WIRE_FILES_DRAG;
	if (drag && (!s->drag_serial || (uint32_t)m->x != s->drag_serial)) {
		refuse(f, peer, m->group, WIRE_FILES_REFUSED, 0,
			"a drag's files that were not asked for");
		return true;
	}
	int slot = -1;
	for (int i = 0; i < FILES_GROUPS && slot < 0; i++) {
		if (!f->in[i]) {
			slot = i;
		}
	}
	if (slot < 0) {
		snprintf(why, sizeof(why), "%d groups of files are coming in already: try later",
			FILES_GROUPS);
		refuse(f, peer, m->group, WIRE_FILES_REFUSED, 0, why);
		return true;
	}
	if (s->size_limit && m->bytes > s->size_limit * m->files) {
		snprintf(why, sizeof(why),
			"%llu bytes: more than the %llu a file this side takes "
			"(file-size-limit)",
			(unsigned long long)m->bytes, (unsigned long long)s->size_limit);
		refuse(f, peer, m->group, WIRE_FILES_REFUSED, 0, why);
		return true;
	}
	if (mkdir(s->dir, 0755) != 0 && errno != EEXIST) {
		snprintf(why, sizeof(why), "cannot make %.180s: %s", s->dir, strerror(errno));
		refuse(f, peer, m->group, WIRE_FILES_FAILED, 0, why);
		return true;
	}
	struct statvfs vfs;
	if (statvfs(s->dir, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < m->bytes) {
		snprintf(why, sizeof(why), "%llu bytes: more than %.180s has room for",
			(unsigned long long)m->bytes, s->dir);
		refuse(f, peer, m->group, WIRE_FILES_REFUSED, 0, why);
		return true;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		refuse(f, peer, m->group, WIRE_FILES_FAILED, 0, "no memory");
		return true;
	}
	*g = (struct files_group){
		.id = m->group,
		.kind = m->kind,
		.window = m->window,
		.x = m->x,
		.y = m->y,
		.nfiles = m->files,
		.bytes = m->bytes,
		.peer = peer,
		.fd = -1,
	};
	f->in[slot] = g;
	if (drag) {
		f->settings.drag_serial = 0;
	} else if (s->take == FILES_TAKE_ASK) {
		g->asking = true;
		g->asked_us = now_us;
		f->hooks.ask(f->hooks.data, peer, g->id, g->kind, g->nfiles, g->bytes);
		return true;
	}
	ack(f, g, true);
	return true;
}

bool files_answer(struct files *f, uint32_t group, bool yes, const char *why)
{
	struct files_group *g = find(f, false, group);
	if (!g || !g->asking) {
		return false;
	}
	g->asking = false;
	if (yes) {
		ack(f, g, true);
	} else {
		end(f, g, WIRE_FILES_REFUSED, 0, why, true);
	}
	return true;
}

/* A new name in dir like want: want itself, or "name (2).ext" and on. */
static bool unique(char *out, size_t size, const char *dir, const char *want)
{
	const char *dot = strrchr(want, '.');
	size_t stem = dot && dot != want ? (size_t)(dot - want) : strlen(want);
	for (int n = 1; n < 1000; n++) {
		int len = n == 1 ? snprintf(out, size, "%s/%s", dir, want)
				 : snprintf(out, size, "%s/%.*s (%d)%s", dir, (int)stem, want, n,
					   want + stem);
		if (len < 0 || (size_t)len >= size) {
			return false;
		}
		if (access(out, F_OK) != 0 && errno == ENOENT) {
			return true;
		}
	}
	return false;
}

/* The folder a file of the group goes in, and its own name there: the top
 * part of its path is the group's (a new name for it where one is taken),
 * folders under it are made. */
static bool place(struct files_group *g, const char *root, const char *path, char *dir,
	size_t dir_size, const char **leaf, char *why, size_t why_size)
{
	const char *slash = strchr(path, '/');
	size_t top_len = slash ? (size_t)(slash - path) : strlen(path);
	const char *chosen = NULL;
	for (int i = 0; i < g->ntops && !chosen; i++) {
		if (strlen(g->tops[i].given) == top_len &&
			strncmp(g->tops[i].given, path, top_len) == 0) {
			chosen = g->tops[i].chosen;
		}
	}
	if (!slash) {
		/* A file at the top: its own new name, made at the end. */
		snprintf(dir, dir_size, "%s", root);
		*leaf = path;
		return true;
	}
	if (!chosen) {
		char top[FILES_NAME_MAX + 1], full[PATH_MAX];
		snprintf(top, sizeof(top), "%.*s", (int)top_len, path);
		if (!unique(full, sizeof(full), root, top) || mkdir(full, 0755) != 0) {
			snprintf(why, why_size, "cannot make a folder for %.100s in %.200s: %s",
				top, root, strerror(errno));
			return false;
		}
		struct top_name *grown = realloc(g->tops, (size_t)(g->ntops + 1) * sizeof(*grown));
		if (!grown) {
			snprintf(why, why_size, "no memory");
			return false;
		}
		g->tops = grown;
		g->tops[g->ntops].given = strdup(top);
		g->tops[g->ntops].chosen = strdup(full);
		if (!g->tops[g->ntops].given || !g->tops[g->ntops].chosen) {
			snprintf(why, why_size, "no memory");
			return false;
		}
		chosen = g->tops[g->ntops++].chosen;
	}
	/* The folders between, under the one made for this group. */
	const char *last = strrchr(path, '/');
	int n = snprintf(dir, dir_size, "%s%.*s", chosen, (int)(last - slash), slash);
	if (n < 0 || (size_t)n >= dir_size) {
		snprintf(why, why_size, "a name too long for this system");
		return false;
	}
	for (char *p = dir + strlen(chosen) + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
				snprintf(why, why_size, "cannot make %.300s: %s", dir,
					strerror(errno));
				return false;
			}
			*p = '/';
		}
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		snprintf(why, why_size, "cannot make %.300s: %s", dir, strerror(errno));
		return false;
	}
	*leaf = last + 1;
	return true;
}

static void fail(struct files *f, struct files_group *g, uint32_t status, const char *why)
{
	end(f, g, status, g->cur, why, true);
}

static void file_whole(struct files *f, struct files_group *g, uint64_t now_us);

static bool handle_offer(struct files *f, void *peer, const struct wire_file_offer *m, char *err,
	size_t err_size)
{
	struct files_group *g = find(f, false, m->group);
	if (!g || g->peer != peer) {
		return true; /* ended meanwhile */
	}
	if (m->file != g->cur) {
		snprintf(err, err_size, "file_offer of file %u of group %u, while file %u comes",
			m->file, m->group, g->cur);
		return false;
	}
	char why[512];
	if (!files_path_ok(m->path, m->path_len, why, sizeof(why))) {
		char shown[96];
		size_t n = m->path_len < 48 ? m->path_len : 48;
		size_t j = 0;
		for (size_t i = 0; i < n && j + 5 < sizeof(shown); i++) {
			unsigned char c = (unsigned char)m->path[i];
			j += (size_t)snprintf(shown + j, sizeof(shown) - j,
				c < 0x20 || c == 0x7f ? "\\x%02x" : "%c", c);
		}
		char text[640];
		snprintf(text, sizeof(text), "refused: %s (\"%s%s\")", why, shown,
			m->path_len > n ? "..." : "");
		fail(f, g, WIRE_FILES_REFUSED, text);
		return true;
	}
	if (g->have_offer && g->size == m->size && memcmp(g->want, m->sha256, 32) == 0) {
		ack(f, g, true); /* the same file again (resumed): on from what we have */
		return true;
	}
	if (g->have_offer) {
		g->offered_bytes -= g->size; /* another file in its place: it was changed */
	}
	const struct files_settings *s = &f->settings;
	if ((s->size_limit && m->size > s->size_limit) || m->size > g->bytes ||
		g->offered_bytes + m->size > g->bytes) {
		snprintf(why, sizeof(why), "refused: file %u of %llu bytes: more than %s", m->file,
			(unsigned long long)m->size,
			s->size_limit && m->size > s->size_limit ? "a file this side takes "
								   "(file-size-limit)"
								 : "its group announced");
		fail(f, g, WIRE_FILES_REFUSED, why);
		return true;
	}
	if (g->tmp[0]) {
		unlink(g->tmp);
		g->tmp[0] = '\0';
	}
	if (g->fd >= 0) {
		close(g->fd);
		g->fd = -1;
	}
	if (g->hash) {
		gnutls_hash_deinit(g->hash, NULL);
		g->hash = NULL;
	}
	char path[WIRE_MAX_FILE_PATH + 1], dir[PATH_MAX];
	memcpy(path, m->path, m->path_len);
	path[m->path_len] = '\0';
	const char *leaf;
	if (!place(g, s->dir, path, dir, sizeof(dir), &leaf, why, sizeof(why))) {
		fail(f, g, WIRE_FILES_FAILED, why);
		return true;
	}
	/* Named by this process too: a viewer that took a session over from
	 * another on the same desktop takes the group on while the other's
	 * part is still there (until it goes, deleting it). */
	int n = snprintf(g->tmp, sizeof(g->tmp), "%s/.rcomp-%08x-%u-%ld.part", dir, g->id, g->cur,
		(long)getpid());
	n = n > 0 && (size_t)n < sizeof(g->tmp)
		? snprintf(g->final, sizeof(g->final), "%s/%s", dir, leaf)
		: -1;
	if (n < 0 || (size_t)n >= sizeof(g->final)) {
		g->tmp[0] = '\0';
		fail(f, g, WIRE_FILES_FAILED, "a name too long for this system");
		return true;
	}
	g->fd = open(g->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, m->mode & 0755);
	if (g->fd < 0 || gnutls_hash_init(&g->hash, GNUTLS_DIG_SHA256) < 0) {
		snprintf(why, sizeof(why), "cannot write %.300s: %s", g->tmp, strerror(errno));
		g->tmp[0] = '\0';
		fail(f, g, WIRE_FILES_FAILED, why);
		return true;
	}
	g->have_offer = true;
	g->size = m->size;
	memcpy(g->want, m->sha256, 32);
	g->written = 0;
	g->offered_bytes += m->size;
	if (m->size == 0) {
		file_whole(f, g, 0); /* no bytes come for an empty file */
	}
	return true;
}

/* The file under way is whole: checked, and named. */
static void file_whole(struct files *f, struct files_group *g, uint64_t now_us)
{
	uint8_t got[32];
	gnutls_hash_deinit(g->hash, got);
	g->hash = NULL;
	bool ok = close(g->fd) == 0;
	g->fd = -1;
	char why[PATH_MAX + 128];
	if (!ok || memcmp(got, g->want, 32) != 0) {
		snprintf(why, sizeof(why),
			"file %u came with another SHA-256 than it was offered with", g->cur);
		fail(f, g, WIRE_FILES_FAILED, why);
		return;
	}
	/* Never over a file that is there: a numbered name instead. */
	char dir[PATH_MAX], want[FILES_NAME_MAX + 1], final[PATH_MAX];
	const char *slash = strrchr(g->final, '/');
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - g->final), g->final);
	snprintf(want, sizeof(want), "%s", slash + 1);
	bool named = false;
	for (int tries = 0; tries < 3 && !named; tries++) {
		if (!unique(final, sizeof(final), dir, want)) {
			break;
		}
		named = renameat2(AT_FDCWD, g->tmp, AT_FDCWD, final, RENAME_NOREPLACE) == 0;
		if (!named && errno != EEXIST) {
			break;
		}
	}
	if (!named) {
		snprintf(why, sizeof(why), "cannot name %.400s: %s", g->final, strerror(errno));
		fail(f, g, WIRE_FILES_FAILED, why);
		return;
	}
	g->tmp[0] = '\0';
	/* A file at the top is one of the group's items. */
	if (strcmp(dir, f->settings.dir) == 0) {
		struct top_name *grown = realloc(g->tops, (size_t)(g->ntops + 1) * sizeof(*grown));
		if (grown) {
			g->tops = grown;
			g->tops[g->ntops].given = strdup(want);
			g->tops[g->ntops].chosen = strdup(final);
			g->ntops += g->tops[g->ntops].given && g->tops[g->ntops].chosen;
		}
	}
	g->done += g->size;
	g->have_offer = false;
	g->cur++;
	g->written = 0;
	if (g->cur < g->nfiles) {
		ack(f, g, false);
		return;
	}
	/* All of it: where it is, to both sides. */
	char **paths = calloc((size_t)g->ntops + 1, sizeof(*paths));
	int n = 0;
	for (int i = 0; paths && i < g->ntops; i++) {
		paths[n++] = g->tops[i].chosen;
	}
	snprintf(why, sizeof(why), "%s", n == 1 ? paths[0] : f->settings.dir);
	struct files_received r = {
		.group = g->id,
		.kind = g->kind,
		.window = g->window,
		.x = g->x,
		.y = g->y,
		.bytes = g->bytes,
		.n = n,
		.paths = paths,
	};
	void *peer = g->peer;
	ack(f, g, false);
	f->hooks.received(f->hooks.data, peer, &r);
	free(paths);
	(void)now_us;
	end(f, g, WIRE_FILES_WHOLE, g->cur, why, true);
}

static bool handle_data(struct files *f, void *peer, const struct wire_file_data *m,
	uint64_t now_us)
{
	struct files_group *g = find(f, false, m->group);
	if (!g || g->peer != peer) {
		return true; /* ended meanwhile: its bytes are dropped */
	}
	if (m->file != g->cur || !g->have_offer || m->offset != g->written) {
		/* Out of order (resumed, or sent before our ack came): where we
		 * are, once. */
		if (g->ack_sent != g->written || !g->told_gap) {
			g->told_gap = true;
			ack(f, g, true);
		}
		return true;
	}
	if (m->len > g->size - g->written) {
		char why[160];
		snprintf(why, sizeof(why),
			"file %u: more bytes than the %llu it was offered with: deleted", g->cur,
			(unsigned long long)g->size);
		fail(f, g, WIRE_FILES_FAILED, why);
		return true;
	}
	size_t at = 0;
	while (at < m->len) {
		ssize_t w = pwrite(g->fd, m->data + at, m->len - at, (off_t)(g->written + at));
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			char why[PATH_MAX + 64];
			snprintf(why, sizeof(why), "cannot write %.300s: %s", g->tmp,
				strerror(errno));
			fail(f, g, WIRE_FILES_FAILED, why);
			return true;
		}
		at += (size_t)w;
	}
	gnutls_hash(g->hash, m->data, m->len);
	g->written += m->len;
	g->told_gap = false;
	note_moved(g, m->len, now_us);
	if (g->written == g->size) {
		file_whole(f, g, now_us);
	} else if (g->written - g->ack_sent >= FILES_ACK_EVERY) {
		ack(f, g, false);
	}
	return true;
}

bool files_handle(struct files *f, void *peer, bool may_take, const struct wire_msg *msg,
	uint64_t now, char *err, size_t err_size)
{
	switch (msg->type) {
	case WIRE_FILE_GROUP:
		return handle_group(f, peer, may_take, &msg->file_group, now);
	case WIRE_FILE_OFFER:
		return handle_offer(f, peer, &msg->file_offer, err, err_size);
	case WIRE_FILE_DATA:
		return handle_data(f, peer, &msg->file_data, now);
	case WIRE_FILE_ACK:
		return handle_ack(f, peer, &msg->file_ack, err, err_size, now);
	case WIRE_FILE_DONE: {
		const struct wire_file_done *m = &msg->file_done;
		/* From the receiver, of ours; or from the sender (cancelled) of
		 * one coming to us. */
		struct files_group *g = find(f, true, m->group);
		if (!g || g->peer != peer) {
			g = find(f, false, m->group);
		}
		if (g && g->peer == peer) {
			char text[WIRE_MAX_TEXT + 1];
			memcpy(text, m->text, m->text_len);
			text[m->text_len] = '\0';
			end(f, g, m->status, m->file, text, false);
		}
		return true;
	}
	default:
		return true;
	}
}

void files_peer_gone(struct files *f, void *peer, uint64_t now_us)
{
	for (int i = 0; i < FILES_GROUPS; i++) {
		struct files_group *gs[2] = {f->in[i], f->out[i]};
		for (int k = 0; k < 2; k++) {
			if (gs[k] && gs[k]->peer == peer) {
				gs[k]->peer = NULL;
				gs[k]->gone_us = now_us;
				gs[k]->started = false;
			}
		}
	}
}

void files_adopt(struct files *f, void *peer)
{
	if (!peer) {
		return;
	}
	for (int i = 0; i < FILES_GROUPS; i++) {
		struct files_group *g = f->out[i];
		if (g && !g->peer) {
			g->peer = peer;
			announce(f, g);
		}
	}
}

void files_expire(struct files *f, uint64_t now_us)
{
	for (int i = 0; i < FILES_GROUPS; i++) {
		struct files_group *gs[2] = {f->in[i], f->out[i]};
		for (int k = 0; k < 2; k++) {
			if (gs[k] && !gs[k]->peer && now_us - gs[k]->gone_us > FILES_KEEP_US) {
				end(f, gs[k], WIRE_FILES_CANCELLED, gs[k]->cur,
					"its viewer was away too long", false);
			} else if (gs[k] && gs[k]->asking &&
				now_us - gs[k]->asked_us > FILES_ASK_US) {
				end(f, gs[k], WIRE_FILES_REFUSED, 0,
					"refused: not answered within 5 minutes (files = ask)",
					true);
			}
		}
	}
}

int files_progress(const struct files *f, struct files_progress *out, int max, uint64_t now_us)
{
	int n = 0;
	for (int i = 0; i < FILES_GROUPS; i++) {
		const struct files_group *gs[2] = {f->out[i], f->in[i]};
		for (int k = 0; k < 2 && n < max; k++) {
			const struct files_group *g = gs[k];
			if (!g) {
				continue;
			}
			struct files_progress *p = &out[n++];
			*p = (struct files_progress){
				.group = g->id,
				.kind = g->kind,
				.sending = g->sending,
				.waiting = !g->peer,
				.asking = g->asking,
				.total = g->bytes,
				.done = g->done + (g->sending ? g->acked : g->written),
				.rate = now_us - g->rate_at_us < 2000000 ? g->rate_last : 0,
			};
			if (g->nfiles > 1) {
				snprintf(p->name, sizeof(p->name), "%u files", g->nfiles);
			} else if (g->sending) {
				snprintf(p->name, sizeof(p->name), "%s", g->src[0].name);
			} else {
				const char *slash = strrchr(g->final, '/');
				snprintf(p->name, sizeof(p->name), "%s",
					slash ? slash + 1 : "a file");
			}
		}
	}
	return n;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9'    ? c - '0'
		: c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10
				       : -1;
}

int files_uri_paths(char *list, char **paths, int max)
{
	int n = 0;
	char *save = NULL;
	for (char *line = strtok_r(list, "\r\n", &save); line && n < max;
		line = strtok_r(NULL, "\r\n", &save)) {
		if (line[0] == '#') {
			continue;
		}
		char *p = NULL;
		if (strncmp(line, "file:///", 8) == 0) {
			p = line + 7;
		} else if (strncmp(line, "file://localhost/", 17) == 0) {
			p = line + 16;
		}
		if (!p) {
			continue;
		}
		char *out = p;
		for (char *in = p; *in; in++) {
			int hi, lo;
			if (*in == '%' && (hi = hex_digit(in[1])) >= 0 &&
				(lo = hex_digit(in[2])) >= 0) {
				*out++ = (char)(hi * 16 + lo);
				in += 2;
			} else {
				*out++ = *in;
			}
		}
		*out = '\0';
		if (strlen(p) > 1) {
			paths[n++] = p;
		}
	}
	return n;
}

size_t files_put_uri(char *out, size_t size, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = (size_t)snprintf(out, size, "file://");
	for (const unsigned char *p = (const unsigned char *)path; *p && n + 4 < size; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9') || strchr("/-._~", *p)) {
			out[n++] = (char)*p;
		} else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	return n;
}
