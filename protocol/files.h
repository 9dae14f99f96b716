/*
 * Files across the link, either way (PROTOCOL.md, "Files"): a group of
 * files (a drop, an upload, rcomp-run --send, a print) is announced with its
 * count and bytes; each file is offered with its size and SHA-256 ahead of
 * its bytes, which go in the bulk class, a window of a group's
 * unacknowledged: as much as the link carries without a queue past
 * FILES_QUEUE_US over its least round trip (the acks' delay says), so that
 * a key sent behind a transfer waits no longer than that. The receiver writes each under a temporary name, checks
 * its size and hash, and only then renames it into place, never over a file
 * that is there (a numbered name instead); a file is whole or absent. A
 * group whose peer goes away waits for it (or the next viewer) to come back
 * and goes on from the last byte the receiver wrote. Everything a peer
 * announces (names, sizes, counts) is checked before anything is made.
 */
#ifndef RCOMP_FILES_H
#define RCOMP_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define FILES_GROUPS 8 /* each way at once */
#define FILES_WINDOW (4 * 1024 * 1024) /* a group's bytes unacknowledged, at most */
#define FILES_WINDOW_MIN (16 * 1024) /* ... and at least */
#define FILES_GAIN 8 /* the window grows by 1/16 a round trip with no queue */
#define FILES_WINDOW_START (64 * 1024)
#define FILES_WINDOW_PACED (1024 * 1024)
/* The queue a transfer may build on the link, over its least round trip:
 * keys behind it wait no longer (the window shrinks past it). */
#define FILES_QUEUE_US 12000
/* Every FILES_PROBE_US the window drops to FILES_WINDOW_MIN for a round
 * trip, two least ones and FILES_PROBE_HOLD_US more, so that our queue
 * drains and the least round trip is measured again, and the most the
 * link delivered is forgotten (BBR's PROBE_RTT, less often: it costs 1-9%
 * of the rate, the most on long fat paths): a path that changed under a
 * transfer (QUIC roaming to a slower network) is the new path's after the
 * next probe. */
#define FILES_PROBE_US 20000000
#define FILES_PROBE_HOLD_US 50000
#define FILES_CHUNK_MIN 2048 /* bytes of a file_data, at least (but a file's last) */
#define FILES_ACK_EVERY FILES_CHUNK_MIN /* the receiver says what it wrote: each chunk */
#define FILES_KEEP_US (600ull * 1000000) /* a group whose peer went away waits this long */
#define FILES_HASH_STEP (4 * 1024 * 1024) /* bytes hashed a turn of the loop */
#define FILES_DEPTH 16 /* folders in folders */
#define FILES_NAME_MAX 255 /* bytes of one part of a path */

/* Whether the person's files are taken (files = in the settings). */
enum files_take {
	FILES_TAKE_YES,
	FILES_TAKE_NO,
	FILES_TAKE_ASK, /* the hooks' ask, answered with files_answer */
};

#define FILES_ASK_US (300ull * 1000000) /* a question unanswered this long is a no */

struct files_settings {
	uint64_t size_limit; /* bytes of one file received; 0: none */
	enum files_take take;
	char dir[4096]; /* where received files go (made if missing) */
	/* The link paces what this side sends (rcomp-run's): a fixed window
	 * of FILES_WINDOW_PACED; else the window follows the acks' delay. */
	bool paced;
	/* The drag_files serial whose answer (a group of kind drag) this side
	 * takes, once; 0: none. */
	uint32_t drag_serial;
};

/* A group received whole: where its files are. */
struct files_received {
	uint32_t group, kind, window;
	int32_t x, y; /* a drop's place, 24.8 window coordinates */
	uint64_t bytes;
	int n; /* top-level items (files and folders) */
	char **paths; /* absolute */
};

/* One group, as --stats and the HUDs show it. */
struct files_progress {
	uint32_t group, kind;
	bool sending; /* ours to the peer; else the peer's to us */
	bool waiting; /* its peer is away */
	bool asking; /* waiting for the person's answer (files = ask) */
	char name[64]; /* its first file's name, or "N files" */
	uint64_t done, total; /* bytes */
	uint64_t rate; /* bytes per second, recently */
};

struct files_hooks {
	/* One message to peer (a file_data goes in the bulk class). */
	void (*send)(void *data, void *peer, const struct wire_msg *msg);
	/* A group from peer is whole: its files are in place. */
	void (*received)(void *data, void *peer, const struct files_received *r);
	/* A group ended that we sent (status: enum wire_files_status), or that
	 * came to us and was cancelled or failed; text: where, or why. */
	void (*ended)(void *data, uint32_t group, uint32_t kind, bool sending, uint32_t status,
		const char *text);
	/* files = ask: peer offers a group (kind, files, bytes); nothing comes
	 * until files_answer. NULL: asking cannot be done, and it is a no. */
	void (*ask)(void *data, void *peer, uint32_t group, uint32_t kind, uint32_t files,
		uint64_t bytes);
	void *data;
};

struct files_group;

struct files {
	struct files_hooks hooks;
	struct files_settings settings;
	struct files_group *in[FILES_GROUPS], *out[FILES_GROUPS];
	uint32_t next_id;
};

void files_init(struct files *f, const struct files_hooks *hooks,
	const struct files_settings *settings);
/* Every group ends: what was half received is deleted. */
void files_finish(struct files *f);

/* The download folder: $XDG_DOWNLOAD_DIR, the user-dirs.dirs one, or
 * ~/Downloads. */
bool files_download_dir(char *out, size_t size);

/* Sends paths (files, and folders whole) to peer as a group of kind; for a
 * drop, at window's x, y. Its id, or 0 with err (nothing to send, too
 * many, unreadable). */
uint32_t files_send(struct files *f, void *peer, uint32_t kind, uint32_t window, int32_t x,
	int32_t y, const char *const *paths, int n, char *err, size_t err_size);
/* Gives up a group we send (sending) or receive, telling its peer why.
 * False if there is none. */
bool files_cancel(struct files *f, uint32_t group, bool sending, const char *why);

/* Hashes and sends what the windows allow: may_send(peer) says the peer's
 * bulk queue has room. True while work is left that needs no message to go
 * on (hashing): call again on the next turn. */
bool files_pump(struct files *f, bool (*may_send)(void *data, void *peer), uint64_t now_us);

/* A file_* message from peer. Refusals (names, sizes, settings) are
 * answered with file_done; false, with err, only where peer broke the
 * protocol. may_take: peer may send us files (not a watcher). */
/* The paths of a text/uri-list's file:// URIs (of this host), each decoded
 * in place in list; how many (at most max). */
int files_uri_paths(char *list, char **paths, int max);
/* path as a file:// URI in out (bytes outside RFC 3986's unreserved and '/'
 * escaped; cut to fit size, not ended): its length. */
size_t files_put_uri(char *out, size_t size, const char *path);

bool files_handle(struct files *f, void *peer, bool may_take, const struct wire_msg *msg,
	uint64_t now_us, char *err, size_t err_size);

/* The person's answer to an ask: the group comes, or is refused (why:
 * what its sender is told). False where no such question is open. */
bool files_answer(struct files *f, uint32_t group, bool yes, const char *why);

/* peer is gone: its groups wait FILES_KEEP_US for it or another. */
void files_peer_gone(struct files *f, void *peer, uint64_t now_us);
/* peer is here (a viewer attached, a link came back): groups waiting for
 * a peer are announced to it again, and go on from where it is. */
void files_adopt(struct files *f, void *peer);
/* Ends groups that waited too long. */
void files_expire(struct files *f, uint64_t now_us);

/* The groups under way, at most max; how many. */
int files_progress(const struct files *f, struct files_progress *out, int max, uint64_t now_us);

/* A name a peer gave for a file: a relative path of parts, each 1 to
 * FILES_NAME_MAX bytes, no "." or "..", no leading dot, no control
 * characters or backslash, at most FILES_DEPTH deep. False with why. */
bool files_path_ok(const char *path, size_t len, char *why, size_t why_size);
/* A local name made one a peer takes: a leading dot and control
 * characters become '_', a long name is cut (its extension kept). */
void files_clean_name(char *name, size_t size);

#endif
