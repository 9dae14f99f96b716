/*
 * Counting cores, and sharing them among video streams. The share is
 * fixed for a stream's life (libx264 cannot change its thread count), and
 * streams are short-lived (each run of motion, each new size or viewer is
 * a new one), so shares follow the load without a stream being restarted
 * for it.
 */
#include <sched.h>
#include <unistd.h>

#include "cores.h"

int cores_available(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		int n = CPU_COUNT(&set);
		if (n > 0) {
			return n;
		}
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (int)n;
}

int cores_for_picture(int64_t pixels, int most)
{
	int64_t use = pixels / CORES_PIXELS_PER_THREAD;
	int threads = use < most ? (int)use : most;
	return threads < 1 ? 1 : threads;
}

void cores_budget_init(struct cores_budget *budget, int total)
{
	budget->total = total < 1 ? 1 : total;
	atomic_init(&budget->streams, 0);
}

int cores_take(struct cores_budget *budget, int64_t pixels, int *streams)
{
	int n = atomic_fetch_add(&budget->streams, 1) + 1;
	if (streams) {
		*streams = n;
	}
	return cores_share(budget, pixels, n);
}

int cores_share(const struct cores_budget *budget, int64_t pixels, int streams)
{
	return cores_for_picture(pixels, budget->total / (streams > 0 ? streams : 1));
}

void cores_give(struct cores_budget *budget)
{
	atomic_fetch_sub(&budget->streams, 1);
}
