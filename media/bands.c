/*
 * The band pool (bands.h): a list of calls with bands left, under one
 * mutex; a helper takes the next band of the oldest call, and the caller
 * takes its own until none is left, then waits for the ones helpers run.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "bands.h"

#define MAX_HELPERS 63
#define MIN_BAND_BYTES (256 * 1024)

struct call {
	void (*fn)(void *data, int i);
	void *data;
	int n, next, done;
	pthread_cond_t finished;
	struct call *link;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work;
	struct call *calls; /* with bands not yet taken, oldest first */
	pthread_t threads[MAX_HELPERS];
	int count;
	bool stopping;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER};

/* Takes the next band of call (the lock held); drops the call from the
 * list once its last band is taken. */
static int take(struct call *call)
{
	int i = call->next++;
	if (call->next == call->n) {
		struct call **p = &pool.calls;
		while (*p && *p != call) {
			p = &(*p)->link;
		}
		if (*p) {
			*p = call->link;
		}
	}
	return i;
}

static void run_band(struct call *call, int i)
{
	pthread_mutex_unlock(&pool.lock);
	call->fn(call->data, i);
	pthread_mutex_lock(&pool.lock);
	if (++call->done == call->n) {
		pthread_cond_signal(&call->finished);
	}
}

static void *helper(void *unused)
{
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		while (!pool.stopping && !pool.calls) {
			pthread_cond_wait(&pool.work, &pool.lock);
		}
		if (pool.stopping) {
			break;
		}
		struct call *call = pool.calls;
		run_band(call, take(call));
	}
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

bool bands_init(int threads)
{
	threads = threads > MAX_HELPERS ? MAX_HELPERS : threads;
	/* Helpers take no signals: the event loop handles them. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < threads; i++) {
		if (pthread_create(&pool.threads[pool.count], NULL, helper, NULL) != 0) {
			break;
		}
		pool.count++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pool.count == (threads > 0 ? threads : 0);
}

void bands_finish(void)
{
	pthread_mutex_lock(&pool.lock);
	pool.stopping = true;
	pthread_cond_broadcast(&pool.work);
	pthread_mutex_unlock(&pool.lock);
	for (int i = 0; i < pool.count; i++) {
		pthread_join(pool.threads[i], NULL);
	}
	pool.count = 0;
	pool.stopping = false;
}

int bands_threads(void)
{
	return pool.count;
}

void bands_run(int n, void (*fn)(void *data, int i), void *data)
{
	if (n <= 1 || pool.count == 0) {
		for (int i = 0; i < n; i++) {
			fn(data, i);
		}
		return;
	}
	struct call call = {.fn = fn, .data = data, .n = n};
	pthread_cond_init(&call.finished, NULL);
	pthread_mutex_lock(&pool.lock);
	struct call **tail = &pool.calls;
	while (*tail) {
		tail = &(*tail)->link;
	}
	*tail = &call;
	pthread_cond_broadcast(&pool.work);
	while (call.next < call.n) {
		run_band(&call, take(&call));
	}
	while (call.done < call.n) {
		pthread_cond_wait(&call.finished, &pool.lock);
	}
	pthread_mutex_unlock(&pool.lock);
	pthread_cond_destroy(&call.finished);
}

int bands_count(int rows, long row_bytes)
{
	long total = (long)rows * row_bytes;
	long n = total / MIN_BAND_BYTES;
	long most = pool.count + 1;
	n = n > most ? most : n;
	n = n > rows ? rows : n;
	return n < 1 ? 1 : (int)n;
}
