/* Benchmark harness: gdcc's compiled matmul (gdcc_entry, from a model
 * y = matmul(a, b) with a: [M, K], b: [K, N]) against OpenBLAS's
 * cblas_sgemm on the same data, in the same process, alternating runs;
 * prints the median GFLOP/s of each and their ratio.  Not a test: see
 * bench/README.md.  usage: bench_gemm M N K WORKSPACE_BYTES [TRIALS] */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void gdcc_entry(void **args);

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static float *alloc(size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, n * sizeof(float) + 64))
		exit(3);
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
	size_t ws = (size_t)atoll(argv[4]);
	int trials = argc > 5 ? atoi(argv[5]) : 9;
	float *a = alloc((size_t)M * K), *b = alloc((size_t)K * N), *c1 = alloc((size_t)M * N), *c2 = alloc((size_t)M * N);
	float *w = alloc(ws / 4 + 16);
	srand(1);
	for (size_t i = 0; i < (size_t)M * K; i++)
		a[i] = (float)rand() / RAND_MAX - 0.5f;
	for (size_t i = 0; i < (size_t)K * N; i++)
		b[i] = (float)rand() / RAND_MAX - 0.5f;
	void *args[] = {a, b, c1, w};
	double flop = 2.0 * M * N * K;
	/* enough repetitions for ~50 ms per timing */
	int reps = (int)(5e9 / flop) + 1;
	double *tg = calloc(trials, sizeof *tg), *tb = calloc(trials, sizeof *tb);
	gdcc_entry(args);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c2, N);
	for (int t = 0; t < trials; t++) {
		double t0 = now();
		for (int r = 0; r < reps; r++)
			gdcc_entry(args);
		double t1 = now();
		for (int r = 0; r < reps; r++)
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c2, N);
		double t2 = now();
		tg[t] = (t1 - t0) / reps;
		tb[t] = (t2 - t1) / reps;
	}
	double maxerr = 0;
	for (size_t i = 0; i < (size_t)M * N; i++) {
		double e = fabs((double)c1[i] - c2[i]);
		if (e > maxerr)
			maxerr = e;
	}
	qsort(tg, trials, sizeof *tg, cmp);
	qsort(tb, trials, sizeof *tb, cmp);
	double g = flop / tg[trials / 2] / 1e9, o = flop / tb[trials / 2] / 1e9;
	printf("%dx%dx%d  gdcc %.1f GFLOP/s  openblas %.1f GFLOP/s  ratio %.2f  (max |diff| %.2g)\n", M, N, K, g, o, g / o, maxerr);
	return 0;
}
