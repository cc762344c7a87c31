/* A main() for the fuzz targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput once on each file named on the command line (a
 * folder: every file in it, in name order), printing each file's name to
 * stderr first, so that a crash names its input.  Used by
 * tests/fuzz_corpus.sh to run the corpora and the regression inputs in
 * `make check` with the ordinary (and the sanitizer) build.
 *
 *   run-NAME FILE|DIR...      exit 0 when every input ran
 *
 * FUZZ_INPUT_TIMEOUT=N: an input that runs longer than N seconds ends the
 * program with exit status 124 (as timeout(1)), after naming it. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* Targets may leave it out. */
#pragma weak LLVMFuzzerInitialize

static int ninputs;
static unsigned timeout_s;
static const char *current;

static void on_alarm(int sig)
{
	(void)sig;
	static const char a[] = "standalone: timed out: ";
	ssize_t r = write(2, a, sizeof a - 1);
	r = write(2, current, strlen(current));
	r = write(2, "\n", 1);
	(void)r;
	_exit(124);
}

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "standalone: %s: %s\n", path, strerror(errno));
		return 1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0)
		if ((len += n) == cap)
			buf = realloc(buf, cap *= 2);
	bool bad = !buf || ferror(f);
	fclose(f);
	if (bad) {
		fprintf(stderr, "standalone: %s: cannot read\n", path);
		free(buf);
		return 1;
	}
	/* Exactly len bytes, as libFuzzer passes them: a read past the end is
	 * an ASan report. */
	uint8_t *data = malloc(len ? len : 1);
	if (!data)
		abort();
	if (len)
		memcpy(data, buf, len);
	free(buf);
	fprintf(stderr, "standalone: running %s (%zu bytes)\n", path, len);
	fflush(stderr);
	current = path;
	alarm(timeout_s);
	LLVMFuzzerTestOneInput(data, len);
	alarm(0);
	free(data);
	ninputs++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "standalone: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	DIR *dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "standalone: %s: %s\n", path, strerror(errno));
		return 1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap && !(names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names)))
			abort();
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		if (!(names[n] = malloc(len)))
			abort();
		snprintf(names[n++], len, "%s/%s", path, e->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof *names, cmp_names);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (stat(names[i], &st) == 0 && !S_ISDIR(st.st_mode))
			rc |= run_file(names[i]);
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	const char *t = getenv("FUZZ_INPUT_TIMEOUT");
	if (t && *t) {
		char *end;
		unsigned long v = strtoul(t, &end, 10);
		if (*end || v == 0 || v > 86400) {
			fprintf(stderr, "standalone: FUZZ_INPUT_TIMEOUT='%s' is not a number of seconds\n", t);
			return 2;
		}
		timeout_s = (unsigned)v;
		signal(SIGALRM, on_alarm);
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	int rc = 0;
	for (int i = 1; i < argc; i++)
		rc |= run_path(argv[i]);
	fprintf(stderr, "standalone: %d inputs run\n", ninputs);
	return rc;
}
