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
 * Exit status: 0, or 2 on a bad argument, 3 on an I/O error, 4 when the
 * model reports a run-time error (an index out of range). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gdcc_entry(void **args);

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
	for (int i = 0; i < n; i++) {
		char *a = argv[i + 1];
		char kind = a[0];
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
	int status = gdcc_entry(args);
	if (status != 0) {
		fprintf(stderr, "harness: the model stopped with status %d (1: an index out of range)\n", status);
		return 4;
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
