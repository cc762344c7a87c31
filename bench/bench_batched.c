/* Benchmark harness for batched matmul (attention's shapes): gdcc's
 * batched kernel (bat_entry: y = matmul(a, b) over B batches, b given
 * as is or as the transpose of an input) against B calls of gdcc's 2-D
 * kernel of one batch (one_entry) and B calls of OpenBLAS's cblas_sgemm,
 * in the same process, alternating, medians: the per-batch overhead is
 * the first ratio.  usage: bench_batched B M N K TRANS_B WS_BATCHED WS_ONE */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_time.h"

void bat_entry(void **args);
void one_entry(void **args);


static void *alloc(size_t bytes)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, bytes + 64))
		exit(3);
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 8)
		return 2;
	int B = atoi(argv[1]), M = atoi(argv[2]), N = atoi(argv[3]), K = atoi(argv[4]), tb = atoi(argv[5]);
	size_t wsb = (size_t)atoll(argv[6]), ws1 = (size_t)atoll(argv[7]);
	float *a = alloc((size_t)B * M * K * 4), *b = alloc((size_t)B * K * N * 4);
	float *y = alloc((size_t)B * M * N * 4), *y2 = alloc((size_t)B * M * N * 4);
	char *w = alloc(wsb > ws1 ? wsb : ws1);
	srand(1);
	for (size_t i = 0; i < (size_t)B * M * K; i++)
		a[i] = (float)rand() / RAND_MAX - 0.5f;
	for (size_t i = 0; i < (size_t)B * K * N; i++)
		b[i] = (float)rand() / RAND_MAX - 0.5f;
	double flop = 2.0 * B * M * N * K;
	int reps = (int)(2e9 / flop) + 1;
	enum { T = 9 };
	double tg[T], t1[T], to[T];
	for (int t = 0; t < T; t++) {
		double s = now();
		for (int r = 0; r < reps; r++) {
			void *args[] = {a, b, y, w};
			bat_entry(args);
		}
		double e = now();
		tg[t] = (e - s) / reps;
		s = now();
		for (int r = 0; r < reps; r++)
			for (int q = 0; q < B; q++) {
				void *args[] = {a + (size_t)q * M * K, b + (size_t)q * K * N, y2 + (size_t)q * M * N, w};
				one_entry(args);
			}
		e = now();
		t1[t] = (e - s) / reps;
		s = now();
		for (int r = 0; r < reps; r++)
			for (int q = 0; q < B; q++)
				cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, a + (size_t)q * M * K,
					    K, b + (size_t)q * K * N, tb ? K : N, 0.0f, y2 + (size_t)q * M * N, N);
		e = now();
		to[t] = (e - s) / reps;
	}
	qsort(tg, T, sizeof *tg, cmp);
	qsort(t1, T, sizeof *t1, cmp);
	qsort(to, T, sizeof *to, cmp);
	printf("| %d x %dx%dx%d | %s | %.1f | %.1f | %.1f | %.3f | %.2f |\n", B, M, N, K, tb ? "NT" : "NN", flop / tg[T / 2] / 1e9,
	       flop / t1[T / 2] / 1e9, flop / to[T / 2] / 1e9, tg[T / 2] / t1[T / 2], to[T / 2] / tg[T / 2]);
	return 0;
}
