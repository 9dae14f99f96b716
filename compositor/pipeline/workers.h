/*
 * Worker threads for work that must not hold up the event loop (encoding
 * frames). A job runs on a worker; its result is handed back on the event
 * loop's thread, where its done function runs. Each job is one object that
 * is queued at most once: its owner submits it again only after done, so a
 * caller that is busy simply skips, and nothing piles up.
 */
#ifndef RCOMP_WORKERS_H
#define RCOMP_WORKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <wayland-server-core.h>

enum rc_job_state {
	RC_JOB_IDLE,
	RC_JOB_QUEUED,
	RC_JOB_RUNNING,
	RC_JOB_DONE, /* run, waiting for the loop's thread */
};

struct rc_job {
	/* On a worker. local is that worker's own zeroed area (of the size
	 * given to workers_create), for scratch memory it keeps. */
	void (*run)(struct rc_job *job, void *local);
	/* On the event loop's thread, once run returned. */
	void (*done)(struct rc_job *job);
	enum rc_job_state state; /* changes under the pool's lock */
	bool busy; /* submitted and not yet done: the loop's thread's own */
	struct wl_list link;
};

struct rc_workers;

/* threads workers, each with local_size bytes of its own that
 * local_finish frees when the pool ends. NULL if none can start. */
struct rc_workers *workers_create(struct wl_event_loop *loop, int threads, size_t local_size,
	void (*local_finish)(void *local));
/* Jobs still queued are dropped; running ones finish first. */
void workers_destroy(struct rc_workers *workers);

static inline bool job_busy(const struct rc_job *job)
{
	return job->busy;
}

/* Queues an idle job. */
void workers_submit(struct rc_workers *workers, struct rc_job *job);
/* Makes the job idle without its done being called: taken from the queue,
 * or waited for if it runs now. For an owner that goes away. */
void workers_cancel(struct rc_workers *workers, struct rc_job *job);

/* How many workers suit this process: one per core it may use (its
 * affinity), at least one, at most sixteen. */
int workers_default_count(void);
/* The threads the pool has (0 for none). */
int workers_count(const struct rc_workers *workers);

#endif
