/* mdgen, the program: reads the machine descriptions and writes the C
 * tables of every target plus the registry (gen/mdgen.c does the work):
 *
 *   mdgen [-r ROOT] -o targets_gen.c (LIST | FILE.md)...
 *
 * Exit status: 0, 1 after errors in the inputs, 2 for a bad command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdgen.h"
#include "util.h"

/* "mdgen: error: WHAT 'ARG'" (ARG escaped), then the usage. */
static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "mdgen: error: %s", what);
	if (arg) {
		fputs(" '", stderr);
		fput_escaped(stderr, arg, strlen(arg));
		fputc('\'', stderr);
	}
	fputc('\n', stderr);
	fputs("usage: mdgen [-r ROOT] -o OUTPUT.c (LIST | FILE.md)...\n"
	      "Each LIST names target files (without .md), one per line, relative to the list's folder.\n"
	      "-r ROOT: write file names relative to ROOT into the tables.\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *root = NULL;
	const char **inputs = malloc((size_t)argc * sizeof *inputs);
	int ninputs = 0;
	if (!inputs) {
		fputs("mdgen: fatal: out of memory\n", stderr);
		return 3;
	}
	for (int i = 1; i < argc; i++) {
		if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "-r") == 0) && i + 1 >= argc) {
			free(inputs);
			return usage_error("option needs an argument:", argv[i]);
		} else if (strcmp(argv[i], "-o") == 0) {
			out = argv[++i];
		} else if (strcmp(argv[i], "-r") == 0) {
			root = argv[++i];
		} else if (argv[i][0] == '-') {
			free(inputs);
			return usage_error("unknown option", argv[i]);
		} else {
			inputs[ninputs++] = argv[i];
		}
	}
	if (!out || ninputs == 0) {
		free(inputs);
		return usage_error(!out ? "no output file (-o OUTPUT.c)" : "no input (a LIST or FILE.md)", NULL);
	}
	int status = mdgen_generate(inputs, ninputs, out, root);
	free(inputs);
	return status;
}
