/* npusim: run an npu-systolic program (the assembly gdcc emits) on gdcc's
 * cycle-approximate simulator.
 *
 *   npusim --target T [--param NAME=VALUE]... [--stats FILE]
 *          [--max-instructions N] [--entry NAME] PROG.s ARG...
 *
 * ARG as runtime/harness.c takes them: i:FILE:BYTES (input), o:FILE:BYTES
 * (output), w:BYTES (workspace).  Exit status: 0; 2 bad argument or load
 * error; 3 I/O error; 4 the model returned non-zero; 5 a simulation error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npusim.h"
#include "util.h"

static void usage(FILE *out)
{
	fputs("usage: npusim --target T [--param NAME=VALUE]... [--stats FILE] [--max-instructions N]\n"
	      "              PROG.s ARG...\n"
	      "  ARG: i:FILE:BYTES (an input read from FILE), o:FILE:BYTES (an output written to FILE),\n"
	      "       w:BYTES (a zero-filled workspace); the entry gdcc_entry gets their addresses.\n"
	      "  --target T            the target the program was compiled for (its .md's tables)\n"
	      "  --param NAME=VALUE    override a param of the target (repeatable)\n"
	      "  --stats FILE          write the statistics as JSON (schema gdcc.npusim 1)\n"
	      "  --max-instructions N  stop with an error after N instructions (default 2e10)\n"
	      "  --entry NAME          the function to call (default gdcc_entry)\n"
	      "Exit status: 0 ok, 2 bad argument or load error, 3 I/O error, 4 the model returned\n"
	      "non-zero (a run-time error), 5 a simulation error.\n",
	      out);
}

static int print_diags(Diag *d, int status)
{
	diag_print(d, stderr);
	return status;
}

static bool write_stats(const NpuSim *s, const char *path)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "npusim: cannot write %s: %s\n", tmp, strerror(errno));
		free(tmp);
		return false;
	}
	npusim_stats_json(s, f);
	bool ok = !ferror(f);
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) != 0) {
		fprintf(stderr, "npusim: cannot write %s\n", path);
		remove(tmp);
		free(tmp);
		return false;
	}
	free(tmp);
	return true;
}

static bool parse_size(const char *str, size_t *out)
{
	char *end;
	errno = 0;
	if (!*str || *str == '-')
		return false;
	unsigned long long v = strtoull(str, &end, 10);
	if (errno || *end || v > ((size_t)1 << 40))
		return false;
	*out = (size_t)v;
	return true;
}

int main(int argc, char **argv)
{
	const char *target = NULL, *stats = NULL, *prog = NULL, *entry = "gdcc_entry";
	const char **settings = xcalloc((size_t)argc + 1, sizeof *settings);
	int nsettings = 0, status = 0;
	uint64_t max_insns = 0;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			free(settings);
			return 0;
		}
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] != '-')
			break;
		const char *val = NULL;
		const char *eq = strchr(a, '=');
		size_t nl = eq ? (size_t)(eq - a) : strlen(a);
		const char *opts[] = {"--target", "--param", "--stats", "--max-instructions", "--entry"};
		int which = -1;
		for (int k = 0; k < 5; k++)
			if (strlen(opts[k]) == nl && strncmp(a, opts[k], nl) == 0)
				which = k;
		if (which < 0) {
			fprintf(stderr, "npusim: unknown option '%s' (see --help)\n", a);
			free(settings);
			return 2;
		}
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else {
			fprintf(stderr, "npusim: %s needs a value\n", a);
			free(settings);
			return 2;
		}
		switch (which) {
		case 0: target = val; break;
		case 1: settings[nsettings++] = val; break;
		case 2: stats = val; break;
		case 4: entry = val; break;
		default: {
			char *end;
			double v = strtod(val, &end);
			if (*end || !(v >= 1) || v > 1.8e19) {
				fprintf(stderr, "npusim: bad --max-instructions '%s'\n", val);
				free(settings);
				return 2;
			}
			max_insns = (uint64_t)v;
		}
		}
	}
	if (i >= argc) {
		fprintf(stderr, "npusim: no program (see --help)\n");
		free(settings);
		return 2;
	}
	prog = argv[i++];
	int nbufs = argc - i;
	void **bufs = xcalloc((size_t)nbufs + 1, sizeof *bufs);
	size_t *sizes = xcalloc((size_t)nbufs + 1, sizeof *sizes);
	char **outs = xcalloc((size_t)nbufs + 1, sizeof *outs);
	Diag d;
	diag_init(&d);
	Target *copy = NULL;
	NpuSim *s = NULL;
	char *text = NULL;
	for (int k = 0; k < nbufs && !status; k++) {
		char *a = xstrdup(argv[i + k]);
		char kind = a[0];
		char *rest = a + 2, *colon = strrchr(rest, ':');
		if ((kind != 'i' && kind != 'o' && kind != 'w') || a[1] != ':' || (kind != 'w' && (!colon || colon == rest))) {
			fprintf(stderr, "npusim: bad argument '%s' (i:FILE:BYTES, o:FILE:BYTES or w:BYTES)\n", argv[i + k]);
			status = 2;
			free(a);
			break;
		}
		const char *file = NULL;
		if (kind != 'w') {
			*colon = 0;
			file = rest;
			rest = colon + 1;
		}
		if (!parse_size(rest, &sizes[k])) {
			fprintf(stderr, "npusim: bad size in argument '%s'\n", argv[i + k]);
			status = 2;
			free(a);
			break;
		}
		bufs[k] = xcalloc(sizes[k] ? sizes[k] : 1, 1);
		if (kind == 'i') {
			FILE *f = fopen(file, "rb");
			if (!f || fread(bufs[k], 1, sizes[k], f) != sizes[k]) {
				fprintf(stderr, "npusim: cannot read %zu bytes from %s\n", sizes[k], file);
				status = 3;
			}
			if (f)
				fclose(f);
		} else if (kind == 'o') {
			outs[k] = xstrdup(file);
		}
		free(a);
	}
	const Target *t = NULL;
	if (!status && !target) {
		fprintf(stderr, "npusim: no --target (the target the program was compiled for)\n");
		status = 2;
	}
	if (!status) {
		t = target_lookup(target);
		if (!t) {
			fprintf(stderr, "npusim: unknown target '%s'\n", target);
			status = 2;
		}
	}
	if (!status && nsettings > 0) {
		copy = target_with_params(t, nsettings, settings, &d);
		if (!copy)
			status = print_diags(&d, 2);
		t = copy;
	}
	if (!status) {
		s = npusim_new(t, &d);
		if (!s)
			status = print_diags(&d, 2);
	}
	if (!status) {
		size_t len;
		text = read_file(prog, &len);
		if (!text) {
			fprintf(stderr, "npusim: cannot read %s\n", prog);
			status = 3;
		} else if (strlen(text) != len) {
			fprintf(stderr, "npusim: %s: a NUL byte in the program text\n", prog);
			status = 2;
		}
	}
	if (!status && !npusim_load(s, text, prog, &d))
		status = print_diags(&d, 2);
	if (!status) {
		if (max_insns)
			npusim_set_max_instructions(s, max_insns);
		int64_t ret = 0;
		bool ok = npusim_run(s, entry, nbufs, bufs, sizes, &ret, &d);
		if (stats && !write_stats(s, stats))
			status = 3;
		if (!ok) {
			status = print_diags(&d, 5);
		} else if (ret != 0) {
			fprintf(stderr, "npusim: the model stopped with status %lld (1: an index out of range)\n", (long long)ret);
			status = 4;
		} else if (!status) {
			for (int k = 0; k < nbufs; k++) {
				if (!outs[k])
					continue;
				FILE *f = fopen(outs[k], "wb");
				bool wok = f && fwrite(bufs[k], 1, sizes[k], f) == sizes[k];
				if (f && fclose(f) != 0)
					wok = false;
				if (!wok) {
					fprintf(stderr, "npusim: cannot write %s\n", outs[k]);
					status = 3;
					break;
				}
			}
		}
	}
	for (int k = 0; k < nbufs; k++) {
		free(bufs[k]);
		free(outs[k]);
	}
	free(bufs);
	free(sizes);
	free(outs);
	free(settings);
	free(text);
	npusim_free(s);
	target_copy_free(copy);
	diag_free(&d);
	return status;
}
