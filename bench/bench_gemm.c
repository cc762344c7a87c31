/* Benchmark harness: gdcc's compiled GEMM (gdcc_entry, from a model
 * y = gemm(a, b, trans_a=TA, trans_b=TB) with a: [M, K] or [K, M], b:
 * [K, N] or [N, K], both inputs) against OpenBLAS's cblas_sgemm on the
 * same data, in the same process, alternating runs; prints the median
 * GFLOP/s of each, their ratio, and gdcc's share of the peak given.  Not a
 * test: see bench/README.md.
 * usage: bench_gemm M N K WORKSPACE_BYTES [TA TB [PEAK_GFLOPS [TRIALS]]]
 * (PEAK_GFLOPS 0: this core's ymm FMA peak, measured first; zmm: its zmm
 * one, for a 512-bit target) */
#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_time.h"

void gdcc_entry(void **args);


/* The FMA peak of this core, measured: 12 independent chains of
 * vfmadd231ps on ymm (8 lanes) or zmm (16) registers (BASELINES.md's
 * "physical limits" row). */
#define FMA12(R)                                                                                                 \
	"vxorps %%" R "0, %%" R "0, %%" R "0\n\tvmovaps %%" R "0, %%" R "12\n\tvmovaps %%" R "0, %%" R "13\n\t1:\n\t" \
	FMA(R, 0) FMA(R, 1) FMA(R, 2) FMA(R, 3) FMA(R, 4) FMA(R, 5) FMA(R, 6) FMA(R, 7) FMA(R, 8) FMA(R, 9)        \
	FMA(R, 10) FMA(R, 11) "dec %0\n\tjnz 1b\n\tvzeroupper"
#define FMA(R, i) "vfmadd231ps %%" R "12, %%" R "13, %%" R #i "\n\t"
static double fma_peak(bool zmm)
{
	double best = 0;
	for (int t = 0; t < 5; t++) {
		long n = 20000000;
		double t0 = now();
		if (zmm)
			__asm__ volatile(FMA12("zmm") : "+r"(n) : : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
					 "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "cc");
		else
			__asm__ volatile(FMA12("ymm") : "+r"(n) : : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
					 "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "cc");
		double g = 12.0 * (zmm ? 32 : 16) * 20000000.0 / (now() - t0) / 1e9;
		if (g > best)
			best = g;
	}
	return best;
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
	int ta = argc > 5 ? atoi(argv[5]) : 0, tb = argc > 6 ? atoi(argv[6]) : 0;
	/* 0: measure it here */
	double peak = argc > 7 ? atof(argv[7]) : 0;
	if (peak <= 0)
		peak = fma_peak(argc > 7 && strcmp(argv[7], "zmm") == 0);
	int trials = argc > 8 ? atoi(argv[8]) : 9;
	float *a = alloc((size_t)M * K), *b = alloc((size_t)K * N), *c1 = alloc((size_t)M * N), *c2 = alloc((size_t)M * N);
	float *w = alloc(ws / 4 + 16);
	srand(1);
	for (size_t i = 0; i < (size_t)M * K; i++)
		a[i] = (float)rand() / RAND_MAX - 0.5f;
	for (size_t i = 0; i < (size_t)K * N; i++)
		b[i] = (float)rand() / RAND_MAX - 0.5f;
	void *args[] = {a, b, c1, w};
	enum CBLAS_TRANSPOSE cta = ta ? CblasTrans : CblasNoTrans, ctb = tb ? CblasTrans : CblasNoTrans;
	int lda = ta ? M : K, ldb = tb ? K : N;
	double flop = 2.0 * M * N * K;
	/* enough repetitions for ~50 ms per timing */
	int reps = (int)(5e9 / flop) + 1;
	double *tg = calloc(trials, sizeof *tg), *tbl = calloc(trials, sizeof *tbl);
	gdcc_entry(args);
	cblas_sgemm(CblasRowMajor, cta, ctb, M, N, K, 1.0f, a, lda, b, ldb, 0.0f, c2, N);
	for (int t = 0; t < trials; t++) {
		double t0 = now();
		for (int r = 0; r < reps; r++)
			gdcc_entry(args);
		double t1 = now();
		for (int r = 0; r < reps; r++)
			cblas_sgemm(CblasRowMajor, cta, ctb, M, N, K, 1.0f, a, lda, b, ldb, 0.0f, c2, N);
		double t2 = now();
		tg[t] = (t1 - t0) / reps;
		tbl[t] = (t2 - t1) / reps;
	}
	double maxerr = 0;
	for (size_t i = 0; i < (size_t)M * N; i++) {
		double e = fabs((double)c1[i] - c2[i]);
		if (e > maxerr)
			maxerr = e;
	}
	qsort(tg, trials, sizeof *tg, cmp);
	qsort(tbl, trials, sizeof *tbl, cmp);
	double g = flop / tg[trials / 2] / 1e9, o = flop / tbl[trials / 2] / 1e9;
	printf("| %dx%dx%d | %c%c | %.1f | %.1f | %.2f |", M, N, K, ta ? 'T' : 'N', tb ? 'T' : 'N', g, o, g / o);
	/* the fastest runs too: under load from other processes the best of
	 * each is the steadier figure */
	printf(" %.2f | %.0f %% | %.0f |", tbl[0] / tg[0], 100 * g / peak, peak);
	printf(" %.2g | %s |\n", maxerr, openblas_get_corename());
	return maxerr > 1e-2 * sqrt((double)K);
}
