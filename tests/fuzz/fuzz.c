/* Helpers shared by the fuzz targets (fuzz.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gdcc_limits.h"

bool fuzz_oracles = true, fuzz_verbose;

void fuzz_init(void)
{
	Limits l = {FUZZ_MAX_TENSOR_BYTES, FUZZ_MAX_WORKSPACE_BYTES};
	limits_set(&l);
	const char *s = getenv("GDCC_FUZZ_ORACLES");
	if (s && strcmp(s, "0") == 0)
		fuzz_oracles = false;
	s = getenv("GDCC_FUZZ_VERBOSE");
	fuzz_verbose = s && strcmp(s, "1") == 0;
}

void fuzz_done(const Diag *d)
{
	if (fuzz_verbose)
		diag_print(d, stderr);
}

bool fuzz_skip_model(const uint8_t *data, size_t size)
{
	static const char *const bad[] = {"dev/", "proc/", "sys/", "fd/"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (memmem(data, size, bad[i], strlen(bad[i])))
			return true;
	return false;
}

FILE *fuzz_null(void)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w"))) {
		perror("fuzz: /dev/null");
		abort();
	}
	return null;
}

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("fuzz: oracle failed: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

void fuzz_check_diags(const Diag *d, bool ok, const char *what)
{
	/* Into memory rather than /dev/null, so that what is printed is
	 * really formatted (and read back by ASan when freed). */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		abort();
	diag_print(d, m);
	fclose(m);
	free(buf);
	if (!fuzz_oracles)
		return;
	if (!ok && !diag_has_errors(d))
		fuzz_fail("%s failed without an error message", what);
	for (int i = 0; i < d->n; i++)
		if (d->entries[i].level == DIAG_ERROR && !d->entries[i].loc.file)
			fuzz_fail("%s: an error without a file name: %s", what, d->entries[i].msg);
}

uint64_t fuzz_check_graph(const Graph *g)
{
	uint64_t total = 0;
	for (int i = 0; i < g->nvalues; i++) {
		const Value *v = g->values[i];
		uint64_t bytes;
		if (!v->typed) {
			if (fuzz_oracles)
				fuzz_fail("verified graph: value '%s' has no type", v->name);
			continue;
		}
		if (!type_bytes_checked(v->type.dtype, &v->type.shape, &bytes)) {
			if (fuzz_oracles)
				fuzz_fail("verified graph: the size of '%s' overflows", v->name);
			return UINT64_MAX;
		}
		if (bytes > limits()->max_tensor_bytes && fuzz_oracles)
			fuzz_fail("verified graph: '%s' is %llu bytes, above the limit of %llu", v->name,
				  (unsigned long long)bytes, (unsigned long long)limits()->max_tensor_bytes);
		if (!add_u64(total, bytes, &total))
			return UINT64_MAX;
	}
	return total;
}
