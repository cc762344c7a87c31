/* A C program that links a model compiled by gdcc (examples/c-api/README.md):
 *
 *   gdcc -c examples/mlp.ir -t x86-avx2 -o mlp.o --header=mlp.h
 *   cc -std=c17 -I. examples/c-api/main.c mlp.o -lm -o mlp-demo
 *   ./mlp-demo                          run on a generated input, print the result
 *   ./mlp-demo write-input x.npy        write that input (for gdcc run --input x=x.npy)
 *   ./mlp-demo check LOGITS.npy PROBS.npy
 *                                       run and compare with reference outputs
 *                                       (|got - want| <= 1e-5 + 1e-4 |want|, as
 *                                       gdcc run --check); exit 1 on a mismatch
 *
 * Everything about the model comes from mlp.h: the argument order, the
 * shapes and sizes, the workspace size, the alignment, and mlp_run. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp.h"

/* A buffer as the header asks: MLP_ALIGNMENT-aligned (aligned_alloc wants a
 * multiple of the alignment). */
static void *buffer(size_t bytes)
{
	size_t n = (bytes + MLP_ALIGNMENT - 1) / MLP_ALIGNMENT * MLP_ALIGNMENT;
	void *p = aligned_alloc(MLP_ALIGNMENT, n ? n : MLP_ALIGNMENT);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

/* An f32 .npy file (format 1.0) of `n` values with the given shape. */
static int write_npy(const char *path, const float *v, size_t n, const int64_t *shape, int rank)
{
	char dict[256];
	int k = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
	for (int i = 0; i < rank; i++)
		k += snprintf(dict + k, sizeof dict - (size_t)k, "%lld,%s", (long long)shape[i], i + 1 < rank ? " " : "");
	k += snprintf(dict + k, sizeof dict - (size_t)k, "), }");
	size_t hlen = 10 + (size_t)k + 1, pad = (64 - hlen % 64) % 64;
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	uint16_t len = (uint16_t)((size_t)k + pad + 1);
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fputc(len & 0xff, f);
	fputc(len >> 8, f);
	fwrite(dict, 1, (size_t)k, f);
	for (size_t i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
	fwrite(v, sizeof *v, n, f);
	return fclose(f) == 0 ? 0 : -1;
}

/* The data of an f32 .npy file holding `n` values (header checked loosely:
 * the magic, '<f4', and the size). */
static float *read_npy(const char *path, size_t n)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return NULL;
	}
	unsigned char h[12];
	float *v = NULL;
	if (fread(h, 1, 10, f) != 10 || memcmp(h, "\x93NUMPY", 6) != 0) {
		fprintf(stderr, "%s: not an .npy file\n", path);
		goto out;
	}
	size_t hl = h[8] | (size_t)h[9] << 8;
	if (h[6] >= 2) { /* format 2.0 and 3.0: a 4-byte header length */
		if (fread(h + 10, 1, 2, f) != 2)
			goto out;
		hl = h[8] | (size_t)h[9] << 8 | (size_t)h[10] << 16 | (size_t)h[11] << 24;
	}
	char *dict = malloc(hl + 1);
	if (!dict || fread(dict, 1, hl, f) != hl) {
		fprintf(stderr, "%s: truncated header\n", path);
		free(dict);
		goto out;
	}
	dict[hl] = 0;
	bool f4 = strstr(dict, "'<f4'") != NULL;
	free(dict);
	if (!f4) {
		fprintf(stderr, "%s: not float32\n", path);
		goto out;
	}
	v = malloc(n * sizeof *v + 1);
	if (!v || fread(v, sizeof *v, n, f) != n || fgetc(f) != EOF) {
		fprintf(stderr, "%s: does not hold %zu float32 values\n", path, n);
		free(v);
		v = NULL;
	}
out:
	fclose(f);
	return v;
}

static int compare(const char *what, const float *got, const float *want, size_t n)
{
	size_t bad = 0;
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double e = fabs((double)got[i] - (double)want[i]);
		if (!(e <= 1e-5 + 1e-4 * fabs((double)want[i])))
			bad++;
		if (e > worst || isnan(e))
			worst = e;
	}
	printf("%s: max abs error %.3g, %zu of %zu outside 1e-5 + 1e-4 |ref|: %s\n", what, worst, bad, n,
	       bad ? "MISMATCH" : "ok");
	return bad != 0;
}

int main(int argc, char **argv)
{
	/* the input: a deterministic pattern */
	float *x = buffer(MLP_X_BYTES);
	for (size_t i = 0; i < MLP_X_NUMEL; i++)
		x[i] = (float)sin(0.001 * (double)i) * 0.5f;
	if (argc == 3 && strcmp(argv[1], "write-input") == 0) {
		static const int64_t shape[] = MLP_X_SHAPE;
		if (write_npy(argv[2], x, MLP_X_NUMEL, shape, MLP_X_RANK) != 0) {
			perror(argv[2]);
			return 2;
		}
		return 0;
	}
	if (!(argc == 1 || (argc == 4 && strcmp(argv[1], "check") == 0))) {
		fprintf(stderr, "usage: %s [write-input X.npy | check LOGITS.npy PROBS.npy]\n", argv[0]);
		return 2;
	}
	float *logits = buffer(MLP_LOGITS_BYTES), *probs = buffer(MLP_PROBS_BYTES);
	void *ws = buffer(MLP_WORKSPACE_BYTES);
	int st = mlp_run(x, logits, probs, ws);
	if (st != 0) {
		fprintf(stderr, "mlp_run failed (%d)\n", st);
		return 2;
	}
	int rc = 0;
	if (argc == 4) {
		float *wl = read_npy(argv[2], MLP_LOGITS_NUMEL), *wp = read_npy(argv[3], MLP_PROBS_NUMEL);
		if (!wl || !wp)
			return 2;
		rc |= compare(MLP_LOGITS_NAME, logits, wl, MLP_LOGITS_NUMEL);
		rc |= compare(MLP_PROBS_NAME, probs, wp, MLP_PROBS_NUMEL);
		free(wl);
		free(wp);
	} else {
		/* each row's most likely class, and the first row's probabilities */
		printf("%s: %s[%d, %d]; first rows' classes:", MLP_PROBS_NAME, MLP_PROBS_DTYPE, MLP_PROBS_DIM0, MLP_PROBS_DIM1);
		for (int r = 0; r < 8 && r < MLP_PROBS_DIM0; r++) {
			int best = 0;
			for (int c = 1; c < MLP_PROBS_DIM1; c++)
				if (probs[r * MLP_PROBS_DIM1 + c] > probs[r * MLP_PROBS_DIM1 + best])
					best = c;
			printf(" %d", best);
		}
		printf("\nrow 0:");
		for (int c = 0; c < MLP_PROBS_DIM1; c++)
			printf(" %.4f", probs[c]);
		printf("\n");
	}
	free(x);
	free(logits);
	free(probs);
	free(ws);
	return rc;
}
