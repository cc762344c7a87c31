/* Fuzz target: a machine description (.md text) -> mdgen's front end
 * (mdgen_check_text: parse, load what it extends, expand classes and
 * foreach, build and check the model, the BURS grammar and the legality
 * table, emit into nothing).  No file is written.
 *
 * `extends "PARENT"` loads PARENT.md from GDCC_FUZZ_MD_DIR, else FUZZ_MD_DIR
 * (a -D of the build: $(abs_srcdir)/tests/md), else tests/md under the
 * working folder, so that seeds extending "toy" reach a real parent.
 *
 * Oracles (unless GDCC_FUZZ_ORACLES=0): every error names its file, and
 * what is printed has no raw control bytes. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mdgen.h"

#ifndef FUZZ_MD_DIR
#define FUZZ_MD_DIR "tests/md"
#endif

static char *name; /* DIR/fuzz.md */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init();
	const char *dir = getenv("GDCC_FUZZ_MD_DIR");
	if (!dir || !*dir)
		dir = FUZZ_MD_DIR;
	size_t n = strlen(dir) + sizeof "/fuzz.md";
	name = malloc(n);
	if (!name)
		abort();
	snprintf(name, n, "%s/fuzz.md", dir);
	return 0;
}

/* Each line of the diagnostics that says "error:" starts with a location
 * (a file name, not "gdcc:"), and no byte is a control other than tab and
 * newline. */
static void check_output(const char *out, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)out[i];
		if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
			fuzz_fail("a raw byte 0x%02x in the diagnostics:\n%s", c, out);
	}
	for (const char *line = out; line < out + len;) {
		const char *eol = memchr(line, '\n', (size_t)(out + len - line));
		if (!eol)
			eol = out + len;
		const char *err = memmem(line, (size_t)(eol - line), ": error: ", 9);
		if (err && strncmp(line, "  ", 2) != 0 && (strncmp(line, "gdcc:", 5) == 0 || err == line))
			fuzz_fail("an error without a file name: %.*s", (int)(eol - line), line);
		line = eol + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!name)
		LLVMFuzzerInitialize(NULL, NULL);
	if (!fuzz_oracles && !fuzz_verbose) {
		mdgen_check_text(name, (const char *)data, size, fuzz_null());
		return 0;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		abort();
	int nerrors = mdgen_check_text(name, (const char *)data, size, m);
	fclose(m);
	if (fuzz_verbose)
		fprintf(stderr, "%s(%d errors)\n", buf, nerrors);
	if (fuzz_oracles) {
		if (nerrors > 0 && !strstr(buf, ": error: "))
			fuzz_fail("%d errors but none printed", nerrors);
		check_output(buf, len);
	}
	free(buf);
	return 0;
}
