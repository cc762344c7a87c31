/* What the benchmark harnesses share: a monotonic clock in seconds and a
 * qsort comparison of doubles (for medians). */
#ifndef GDCC_BENCH_TIME_H
#define GDCC_BENCH_TIME_H

#include <time.h>

static inline double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#endif
