/* The run harness: loads the arguments of a compiled model from raw files,
 * calls its entry point, and writes the outputs back.  It is compiled once,
 * at build time, for each target's host architecture; gdcc links it with the
 * assembly it generated (`gdcc run -t TARGET`).
 *
 *   harness ARG...      ARG: i:FILE:BYTES (input), o:FILE:BYTES (output),
 *                       w:BYTES (the workspace, last)
 *
 * GDCC_RUN_FILL=BYTE (e.g. 0xff): the workspace and the outputs start filled
 * with that byte instead of zeros, so that a program that read a byte it
 * had not written (a memory plan that let two live values share bytes)
 * shows it (tests/opt_levels.sh).
 *
 *   p:FILE:RUNS         (gdcc run --profile) the program was compiled with each
 *                       kernel a function of its own (gdcc_profile_kernels):
 *                       they run in order once (the outputs, kept), then RUNS
 *                       more times, each kernel timed (CLOCK_MONOTONIC); FILE
 *                       gets the times (below) and the outputs must come out
 *                       the same every time.
 *
 * The times file, text, one record a line:
 *   gdcc-profile-times 1
 *   runs RUNS
 *   kernels N
 *   kernel I MEDIAN_NS MIN_NS MAX_NS     (N lines, I = 0 .. N-1)
 *   rest MEDIAN_NS MIN_NS MAX_NS         (the entry: what follows the kernels)
 *   total MEDIAN_NS MIN_NS MAX_NS        (a whole run, per run)
 *
 * Exit status: 0, or 2 on a bad argument, 3 on an I/O error, 4 when the
 * model reports a run-time error (an index out of range), 5 when a
 * profiled run's outputs differ between repetitions. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* a normal program defines gdcc_entry, a profiled one the table (weak:
 * each is absent from the other) */
extern int gdcc_entry(void **args) __attribute__((weak));
extern int (*const gdcc_profile_kernels[])(void **args) __attribute__((weak));
extern const int gdcc_profile_nkernels __attribute__((weak));

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* median, min and max of the n values at v[0], v[stride], ... (sorted in tmp) */
static void stats(const int64_t *v, int n, int stride, int64_t *tmp, FILE *f, const char *what)
{
	for (int r = 0; r < n; r++)
		tmp[r] = v[(size_t)r * (size_t)stride];
	qsort(tmp, (size_t)n, sizeof *tmp, cmp_i64);
	int64_t med = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
	fprintf(f, "%s %lld %lld %lld\n", what, (long long)med, (long long)tmp[0], (long long)tmp[n - 1]);
}

/* The profiled run: 0, or an exit status after the message. */
static int profile(void **args, int n, const char *const *files, const size_t *sizes, const char *path, long runs)
{
	int nk = gdcc_profile_nkernels, nf = nk + 1; /* the kernels, then the rest */
	int64_t *t = calloc((size_t)runs * (size_t)(nf + 1), sizeof *t), *tmp = calloc((size_t)runs, sizeof *tmp);
	void **keep = calloc((size_t)(n > 0 ? n : 1), sizeof *keep);
	if (!t || !tmp || !keep)
		return 3;
	for (long r = -1; r < runs; r++) {
		/* run -1: the outputs every later run must reproduce */
		int64_t *row = r >= 0 ? t + (size_t)r * (size_t)(nf + 1) : NULL, start = now_ns();
		for (int k = 0; k < nf; k++) {
			int64_t t0 = now_ns();
			int status = gdcc_profile_kernels[k](args);
			int64_t t1 = now_ns();
			if (status != 0) {
				fprintf(stderr, "harness: the model stopped with status %d in %s %d (1: an index out of range)\n",
					status, k < nk ? "kernel" : "what follows kernel", k < nk ? k : nk - 1);
				return 4;
			}
			if (row)
				row[k] = t1 - t0;
		}
		if (row)
			row[nf] = now_ns() - start;
		for (int i = 0; i < n; i++) {
			if (!files[i])
				continue;
			if (r < 0) {
				if (!(keep[i] = malloc(sizes[i] ? sizes[i] : 1)))
					return 3;
				memcpy(keep[i], args[i], sizes[i]);
			} else if (memcmp(keep[i], args[i], sizes[i]) != 0) {
				fprintf(stderr, "harness: output %s differs between the first run and run %ld: the program "
						"reads bytes it has not written in that run, so it cannot be timed by repeating it\n",
					files[i], r + 2);
				return 5;
			}
		}
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "harness: cannot write %s\n", path);
		return 3;
	}
	fprintf(f, "gdcc-profile-times 1\nruns %ld\nkernels %d\n", runs, nk);
	for (int k = 0; k < nf; k++) {
		char what[48];
		snprintf(what, sizeof what, k < nk ? "kernel %d" : "rest", k);
		stats(t + k, (int)runs, nf + 1, tmp, f, what);
	}
	stats(t + nf, (int)runs, nf + 1, tmp, f, "total");
	if (fclose(f) != 0) {
		fprintf(stderr, "harness: cannot write %s\n", path);
		return 3;
	}
	for (int i = 0; i < n; i++)
		free(keep[i]);
	free(keep);
	free(t);
	free(tmp);
	return 0;
}

static void *alloc(size_t bytes)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0)
		return NULL;
	memset(p, 0, bytes ? bytes : 64);
	return p;
}

int main(int argc, char **argv)
{
	int n = argc - 1;
	void **args = calloc((size_t)(n > 0 ? n : 1), sizeof *args);
	char **files = calloc((size_t)(n > 0 ? n : 1), sizeof *files);
	size_t *sizes = calloc((size_t)(n > 0 ? n : 1), sizeof *sizes);
	if (!args || !files || !sizes)
		return 3;
	const char *fill = getenv("GDCC_RUN_FILL");
	int fill_byte = fill && *fill ? (int)strtol(fill, NULL, 0) & 0xff : 0;
	const char *prof = NULL;
	long runs = 0;
	for (int i = 0; i < n; i++) {
		char *a = argv[i + 1];
		char kind = a[0];
		if (kind == 'p' && a[1] == ':') {
			/* p:FILE:RUNS, not an argument of the model */
			char *colon = strrchr(a + 2, ':'), *end;
			runs = colon ? strtol(colon + 1, &end, 10) : 0;
			if (!colon || colon == a + 2 || *end || runs < 1 || runs > 1000000) {
				fprintf(stderr, "harness: bad argument '%s' (p:FILE:RUNS, RUNS 1 to 1000000)\n", a);
				return 2;
			}
			*colon = 0;
			prof = a + 2;
			memmove(argv + i + 1, argv + i + 2, (size_t)(n - i - 1) * sizeof *argv);
			n--;
			i--;
			continue;
		}
		if ((kind != 'i' && kind != 'o' && kind != 'w') || a[1] != ':') {
			fprintf(stderr, "harness: bad argument '%s'\n", a);
			return 2;
		}
		char *rest = a + 2, *colon = strrchr(rest, ':');
		if (kind != 'w') {
			if (!colon) {
				fprintf(stderr, "harness: bad argument '%s'\n", a);
				return 2;
			}
			*colon = 0;
			files[i] = rest;
			rest = colon + 1;
		}
		sizes[i] = (size_t)strtoull(rest, NULL, 10);
		args[i] = alloc(sizes[i]);
		if (!args[i])
			return 3;
		if (kind != 'i' && fill_byte)
			memset(args[i], fill_byte, sizes[i]);
		if (kind == 'i') {
			FILE *f = fopen(files[i], "rb");
			if (!f || fread(args[i], 1, sizes[i], f) != sizes[i]) {
				fprintf(stderr, "harness: cannot read %s\n", files[i]);
				return 3;
			}
			fclose(f);
			files[i] = NULL;
		}
	}
	if (prof && !gdcc_profile_kernels) {
		fprintf(stderr, "harness: p: given, but the program was not compiled for profiling (gdcc run --profile)\n");
		return 2;
	}
	if (!prof && !gdcc_entry && !gdcc_profile_kernels) {
		fprintf(stderr, "harness: the program defines neither gdcc_entry nor gdcc_profile_kernels\n");
		return 2;
	}
	if (prof) {
		int st = profile(args, n, (const char *const *)files, sizes, prof, runs);
		if (st)
			return st;
	} else if (gdcc_entry) {
		int status = gdcc_entry(args);
		if (status != 0) {
			fprintf(stderr, "harness: the model stopped with status %d (1: an index out of range)\n", status);
			return 4;
		}
	} else {
		/* a profiled program run plainly: its kernels, in order */
		for (int k = 0; k <= gdcc_profile_nkernels; k++) {
			int status = gdcc_profile_kernels[k](args);
			if (status != 0) {
				fprintf(stderr, "harness: the model stopped with status %d (1: an index out of range)\n", status);
				return 4;
			}
		}
	}
	for (int i = 0; i < n; i++) {
		if (!files[i])
			continue;
		FILE *f = fopen(files[i], "wb");
		if (!f || fwrite(args[i], 1, sizes[i], f) != sizes[i] || fclose(f) != 0) {
			fprintf(stderr, "harness: cannot write %s\n", files[i]);
			return 3;
		}
	}
	for (int i = 0; i < n; i++)
		free(args[i]);
	free(args);
	free(files);
	free(sizes);
	return 0;
}
