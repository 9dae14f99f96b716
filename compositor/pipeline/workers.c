/*
 * The worker pool: one queue of jobs under a mutex, threads that wait on a
 * condition for it, and an eventfd that wakes the event loop when results
 * wait. A job is on at most one list (queued or done) at a time.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cores.h"
#include "log.h"
#include "workers.h"

#define MAX_WORKERS 16

struct rc_workers {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a job was queued, or the pool stops */
	pthread_cond_t finished; /* a job finished running */
	struct wl_list queued, done; /* rc_job::link */
	bool stopping;
	int eventfd;
	struct wl_event_source *source;
	int count;
	pthread_t threads[MAX_WORKERS];
	void *locals[MAX_WORKERS];
	void (*local_finish)(void *local);
};

struct start {
	struct rc_workers *workers;
	void *local;
};

static void *worker_main(void *data)
{
	struct start start = *(struct start *)data;
	free(data);
	struct rc_workers *workers = start.workers;
	pthread_mutex_lock(&workers->lock);
	for (;;) {
		while (!workers->stopping && wl_list_empty(&workers->queued)) {
			pthread_cond_wait(&workers->work, &workers->lock);
		}
		if (workers->stopping) {
			break;
		}
		struct rc_job *job = wl_container_of(workers->queued.next, job, link);
		wl_list_remove(&job->link);
		job->state = RC_JOB_RUNNING;
		pthread_mutex_unlock(&workers->lock);

		job->run(job, start.local);

		pthread_mutex_lock(&workers->lock);
		job->state = RC_JOB_DONE;
		bool wake = wl_list_empty(&workers->done);
		wl_list_insert(workers->done.prev, &job->link);
		pthread_cond_broadcast(&workers->finished);
		if (wake) {
			uint64_t one = 1;
			ssize_t n = write(workers->eventfd, &one, sizeof(one));
			(void)n; /* a full counter still wakes the loop */
		}
	}
	pthread_mutex_unlock(&workers->lock);
	return NULL;
}

/* Results, on the loop's thread: each job leaves the pool before its done
 * runs, so done may submit it again (or its owner may go). */
static int handle_done(int fd, uint32_t mask, void *data)
{
	struct rc_workers *workers = data;
	uint64_t count;
	ssize_t n = read(fd, &count, sizeof(count));
	(void)n;
	for (;;) {
		pthread_mutex_lock(&workers->lock);
		struct rc_job *job = NULL;
		if (!wl_list_empty(&workers->done)) {
			job = wl_container_of(workers->done.next, job, link);
			wl_list_remove(&job->link);
			wl_list_init(&job->link);
			job->state = RC_JOB_IDLE;
		}
		pthread_mutex_unlock(&workers->lock);
		if (!job) {
			return 0;
		}
		job->busy = false;
		job->done(job);
	}
}

int workers_default_count(void)
{
	int cores = cores_available();
	return cores > MAX_WORKERS ? MAX_WORKERS : cores;
}

struct rc_workers *workers_create(struct wl_event_loop *loop, int threads, size_t local_size,
	void (*local_finish)(void *local))
{
	struct rc_workers *workers = calloc(1, sizeof(*workers));
	if (!workers) {
		return NULL;
	}
	pthread_mutex_init(&workers->lock, NULL);
	pthread_cond_init(&workers->work, NULL);
	pthread_cond_init(&workers->finished, NULL);
	wl_list_init(&workers->queued);
	wl_list_init(&workers->done);
	workers->local_finish = local_finish;
	workers->eventfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	workers->source = workers->eventfd >= 0 ? wl_event_loop_add_fd(loop, workers->eventfd,
							  WL_EVENT_READABLE, handle_done, workers)
						: NULL;
	if (!workers->source) {
		log_error("cannot start worker threads: %s", strerror(errno));
		workers_destroy(workers);
		return NULL;
	}
	if (threads > MAX_WORKERS) {
		threads = MAX_WORKERS;
	}
	/* Workers take no signals: the event loop handles them. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < threads; i++) {
		struct start *start = malloc(sizeof(*start));
		workers->locals[i] = calloc(1, local_size ? local_size : 1);
		if (!start || !workers->locals[i]) {
			free(start);
			break;
		}
		*start = (struct start){workers, workers->locals[i]};
		int err = pthread_create(&workers->threads[i], NULL, worker_main, start);
		if (err) {
			log_error("cannot start a worker thread: %s", strerror(err));
			free(start);
			break;
		}
		workers->count++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (workers->count == 0) {
		workers_destroy(workers);
		return NULL;
	}
	return workers;
}

void workers_destroy(struct rc_workers *workers)
{
	if (!workers) {
		return;
	}
	pthread_mutex_lock(&workers->lock);
	workers->stopping = true;
	pthread_cond_broadcast(&workers->work);
	pthread_mutex_unlock(&workers->lock);
	for (int i = 0; i < workers->count; i++) {
		pthread_join(workers->threads[i], NULL);
	}
	for (int i = 0; i < MAX_WORKERS; i++) {
		if (workers->locals[i] && workers->local_finish) {
			workers->local_finish(workers->locals[i]);
		}
		free(workers->locals[i]);
	}
	/* What is left waits no more. */
	struct rc_job *job, *tmp;
	wl_list_for_each_safe(job, tmp, &workers->queued, link)
	{
		wl_list_remove(&job->link);
		wl_list_init(&job->link);
		job->state = RC_JOB_IDLE;
		job->busy = false;
	}
	wl_list_for_each_safe(job, tmp, &workers->done, link)
	{
		wl_list_remove(&job->link);
		wl_list_init(&job->link);
		job->state = RC_JOB_IDLE;
		job->busy = false;
	}
	if (workers->source) {
		wl_event_source_remove(workers->source);
	}
	if (workers->eventfd >= 0) {
		close(workers->eventfd);
	}
	pthread_cond_destroy(&workers->finished);
	pthread_cond_destroy(&workers->work);
	pthread_mutex_destroy(&workers->lock);
	free(workers);
}

void workers_submit(struct rc_workers *workers, struct rc_job *job)
{
	pthread_mutex_lock(&workers->lock);
	if (job->state == RC_JOB_IDLE) {
		job->busy = true;
		job->state = RC_JOB_QUEUED;
		wl_list_insert(workers->queued.prev, &job->link);
		pthread_cond_signal(&workers->work);
	}
	pthread_mutex_unlock(&workers->lock);
}

void workers_cancel(struct rc_workers *workers, struct rc_job *job)
{
	pthread_mutex_lock(&workers->lock);
	while (job->state == RC_JOB_RUNNING) {
		pthread_cond_wait(&workers->finished, &workers->lock);
	}
	if (job->state == RC_JOB_QUEUED || job->state == RC_JOB_DONE) {
		wl_list_remove(&job->link);
		wl_list_init(&job->link);
	}
	job->state = RC_JOB_IDLE;
	job->busy = false;
	pthread_mutex_unlock(&workers->lock);
}

int workers_count(const struct rc_workers *workers)
{
	return workers ? workers->count : 0;
}
