/* npusim: run an npu-systolic program (the assembly gdcc emits) on gdcc's
 * cycle-approximate simulator.
 *
 *   npusim --target T [--param NAME=VALUE]... [--stats FILE]
 *          [--max-instructions N] [--entry NAME] PROG.s ARG...
 *
 * ARG as runtime/harness.c takes them: i:FILE:BYTES (input), o:FILE:BYTES
 * (output), w:BYTES (workspace).  Exit status: 0; 2 bad argument or load
 * error; 3 I/O error; 4 the model returned non-zero; 5 a simulation error.
 * Every message starts with "npusim: error:" or "FILE:LINE:COL: error:";
 * the output files (o: and --stats) are written all or none. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdcc_limits.h"
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
	      "  --max-tensor-bytes N  the largest i: or o: buffer (default 4G; K, M, G, T suffixes;\n"
	      "                        also GDCC_MAX_TENSOR_BYTES)\n"
	      "  --max-workspace-bytes N  the largest w: buffer (default 16G; GDCC_MAX_WORKSPACE_BYTES)\n"
	      "PROG.s is read from a regular file of at most 2 GiB.  The output files (o: and --stats)\n"
	      "are written when the run succeeds, all of them or none.\n"
	      "Exit status: 0 ok, 2 bad argument or load error, 3 I/O error, 4 the model returned\n"
	      "non-zero (a run-time error), 5 a simulation error.\n",
	      out);
}

#define NPUSIM_MAX_PROGRAM_BYTES ((uint64_t)2 << 30)

/* Messages quote input (a program line, an argument): they are written
 * with fput_escaped (util.h), the rule of gdcc's driver. */
static void errorf(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void errorf(const char *file, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	char *line = xasprintf("%s: error: %s\n", file ? file : "npusim", m);
	fput_escaped(stderr, line, strlen(line));
	free(line);
	free(m);
}

static int print_diags(Diag *d, int status)
{
	for (int i = 0; i < d->n; i++)
		if (!d->entries[i].loc.file)
			d->entries[i].loc.file = "npusim";
	diag_print(d, stderr); /* (it escapes what the messages quote) */
	return status;
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

/* ---- output files: all or none -------------------------------------------------
 * Each is written to PATH.tmpPID beside the file a symlink names (or the
 * path), and all are renamed into place once every one is written; a path
 * that exists and is not a regular file (a device, a FIFO) is written
 * directly, after the others are staged. */
typedef struct {
	const char *path;   /* as given */
	char *final;        /* symlinks resolved */
	char *tmp;          /* NULL: direct */
	const void *data;   /* NULL: the statistics */
	size_t size;
	bool renamed;
} OutFile;

static bool write_one(const OutFile *o, const NpuSim *s, const char *to)
{
	FILE *f = fopen(to, "wb");
	if (!f) {
		errorf(NULL, "cannot create '%s': %s", o->path, strerror(errno));
		return false;
	}
	if (o->data) {
		if (o->size)
			fwrite(o->data, 1, o->size, f);
	} else {
		npusim_stats_json(s, f);
	}
	int e = ferror(f) ? (errno ? errno : EIO) : 0;
	if (fclose(f) != 0 && !e)
		e = errno;
	if (e) {
		errorf(NULL, "cannot write '%s': %s", o->path, strerror(e));
		return false;
	}
	return true;
}

static bool write_outputs(OutFile *outs, int n, const NpuSim *s)
{
	bool ok = true;
	for (int i = 0; i < n; i++) {
		OutFile *o = &outs[i];
		struct stat st;
		o->final = realpath(o->path, NULL);
		if (!o->final)
			o->final = xstrdup(o->path);
		if (stat(o->final, &st) == 0 && S_ISDIR(st.st_mode)) {
			errorf(NULL, "cannot write '%s': %s", o->path, strerror(EISDIR));
			ok = false;
			break;
		}
		if (stat(o->final, &st) == 0 && !S_ISREG(st.st_mode))
			continue; /* direct */
		o->tmp = xasprintf("%s.tmp%ld", o->final, (long)getpid());
		if (!write_one(o, s, o->tmp)) {
			unlink(o->tmp);
			ok = false;
			break;
		}
	}
	for (int i = 0; ok && i < n; i++)
		if (!outs[i].tmp)
			ok = write_one(&outs[i], s, outs[i].final);
	for (int i = 0; ok && i < n; i++) {
		if (!outs[i].tmp)
			continue;
		if (rename(outs[i].tmp, outs[i].final) != 0) {
			errorf(NULL, "cannot write '%s': %s", outs[i].path, strerror(errno));
			ok = false;
		} else {
			outs[i].renamed = true;
		}
	}
	for (int i = 0; i < n; i++) {
		if (!ok && outs[i].tmp)
			unlink(outs[i].renamed ? outs[i].final : outs[i].tmp);
		free(outs[i].tmp);
		free(outs[i].final);
	}
	return ok;
}

/* The program text: a regular file, at most NPUSIM_MAX_PROGRAM_BYTES. */
static char *read_program(const char *path, size_t *len, int *status)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		errorf(path, "cannot read the program: %s", strerror(errno));
		*status = 3;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		errorf(path, "%s", S_ISDIR(st.st_mode) ? "is a directory, not a program" : "not a regular file");
		*status = 2;
		return NULL;
	}
	if ((uint64_t)st.st_size > NPUSIM_MAX_PROGRAM_BYTES) {
		errorf(path, "the program is %lld bytes, above the limit of %llu bytes", (long long)st.st_size,
		       (unsigned long long)NPUSIM_MAX_PROGRAM_BYTES);
		*status = 2;
		return NULL;
	}
	char *text = read_file(path, len);
	if (!text) {
		errorf(path, "cannot read the program: %s", strerror(errno));
		*status = 3;
	} else if (strlen(text) != *len) {
		errorf(path, "a NUL byte in the program text");
		*status = 2;
		free(text);
		text = NULL;
	}
	return text;
}

/* Read exactly n bytes of an input. */
static bool read_input(const char *file, void *buf, size_t n)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		errorf(file, "cannot read the input: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		errorf(file, "is a directory, not an input");
		close(fd);
		return false;
	}
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, (char *)buf + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			errorf(file, "cannot read the input: %s", strerror(errno));
			close(fd);
			return false;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	if (got < n) {
		errorf(file, "holds %zu bytes, fewer than the %zu its argument says", got, n);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	const char *target = NULL, *stats = NULL, *prog = NULL, *entry = "gdcc_entry";
	const char **settings = xcalloc((size_t)argc + 1, sizeof *settings);
	int nsettings = 0, status = 0;
	uint64_t max_insns = 0;
	char *lerr = NULL;
	if (!limits_from_env(&lerr)) {
		errorf(NULL, "%s", lerr);
		free(lerr);
		free(settings);
		return 2;
	}
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
		const char *opts[] = {"--target", "--param", "--stats", "--max-instructions", "--entry",
				      "--max-tensor-bytes", "--max-workspace-bytes"};
		int which = -1;
		for (int k = 0; k < 7; k++)
			if (strlen(opts[k]) == nl && strncmp(a, opts[k], nl) == 0)
				which = k;
		if (which < 0) {
			errorf(NULL, "unknown option '%s' (see --help)", a);
			free(settings);
			return 2;
		}
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else {
			errorf(NULL, "%s needs a value", a);
			free(settings);
			return 2;
		}
		switch (which) {
		case 0: target = val; break;
		case 1: settings[nsettings++] = val; break;
		case 2: stats = val; break;
		case 4: entry = val; break;
		case 5:
		case 6: {
			uint64_t v;
			if (!parse_byte_size(val, &v)) {
				errorf(NULL, "%s needs a byte count (a positive number with an optional K, M, G or T suffix), got '%s'",
				       opts[which], val);
				free(settings);
				return 2;
			}
			Limits l = *limits();
			if (which == 5)
				l.max_tensor_bytes = v;
			else
				l.max_workspace_bytes = v;
			limits_set(&l);
			break;
		}
		default: {
			char *end;
			double v = strtod(val, &end);
			if (*end || !(v >= 1) || v > 1.8e19) {
				errorf(NULL, "bad --max-instructions '%s'", val);
				free(settings);
				return 2;
			}
			max_insns = (uint64_t)v;
		}
		}
	}
	if (i >= argc) {
		errorf(NULL, "no program (see --help)");
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
	/* the arguments first (no file read before they are all valid) */
	for (int k = 0; k < nbufs && !status; k++) {
		char *a = xstrdup(argv[i + k]);
		char kind = a[0];
		char *rest = a + 2, *colon = strrchr(rest, ':');
		if ((kind != 'i' && kind != 'o' && kind != 'w') || a[1] != ':' || (kind != 'w' && (!colon || colon == rest))) {
			errorf(NULL, "bad argument '%s' (i:FILE:BYTES, o:FILE:BYTES or w:BYTES)", argv[i + k]);
			status = 2;
			free(a);
			break;
		}
		if (kind != 'w') {
			*colon = 0;
			outs[k] = xstrdup(rest); /* (the file, for now) */
			rest = colon + 1;
		}
		uint64_t limit = kind == 'w' ? limits()->max_workspace_bytes : limits()->max_tensor_bytes;
		if (!parse_size(rest, &sizes[k])) {
			errorf(NULL, "bad size in argument '%s'", argv[i + k]);
			status = 2;
		} else if ((uint64_t)sizes[k] > limit) {
			errorf(NULL, "argument '%s': %zu bytes is above the limit of %llu bytes (%s)", argv[i + k], sizes[k],
			       (unsigned long long)limit, kind == 'w' ? "--max-workspace-bytes" : "--max-tensor-bytes");
			status = 2;
		}
		free(a);
	}
	const Target *t = NULL;
	if (!status && !target) {
		errorf(NULL, "no --target (the target the program was compiled for)");
		status = 2;
	}
	if (!status) {
		t = target_lookup(target);
		if (!t) {
			errorf(NULL, "unknown target '%s'", target);
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
	size_t len = 0;
	if (!status)
		text = read_program(prog, &len, &status);
	if (!status && !npusim_load(s, text, prog, &d))
		status = print_diags(&d, 2);
	/* GDCC_RUN_FILL=BYTE: the workspace and outputs start filled with it
	 * (as the run harness does; docs/npusim.md) */
	const char *fill = getenv("GDCC_RUN_FILL");
	int fill_byte = fill && *fill ? (int)strtol(fill, NULL, 0) & 0xff : 0;
	for (int k = 0; k < nbufs && !status; k++) {
		bufs[k] = calloc(sizes[k] ? sizes[k] : 1, 1);
		if (bufs[k] && fill_byte && argv[i + k][0] != 'i')
			memset(bufs[k], fill_byte, sizes[k]);
		if (!bufs[k]) {
			errorf(NULL, "argument '%s': cannot allocate %zu bytes", argv[i + k], sizes[k]);
			status = 3;
		} else if (argv[i + k][0] == 'i') {
			if (!read_input(outs[k], bufs[k], sizes[k]))
				status = 3;
		}
		if (argv[i + k][0] == 'i') {
			free(outs[k]);
			outs[k] = NULL;
		}
	}
	if (!status && !npusim_has_function(s, entry)) { /* a load error, not a run failure */
		errorf(prog, "no function '%s' in the program (--entry names another)", entry);
		status = 2;
	}
	if (!status) {
		if (max_insns)
			npusim_set_max_instructions(s, max_insns);
		int64_t ret = 0;
		bool ok = npusim_run(s, entry, nbufs, bufs, sizes, &ret, &d);
		if (!ok) {
			status = print_diags(&d, 5);
		} else if (ret != 0) {
			errorf(NULL, "the model stopped with status %lld (1: an index out of range)", (long long)ret);
			status = 4;
		} else {
			OutFile *of = xcalloc((size_t)nbufs + 1, sizeof *of);
			int nof = 0;
			for (int k = 0; k < nbufs; k++)
				if (outs[k])
					of[nof++] = (OutFile){outs[k], NULL, NULL, bufs[k], sizes[k], false};
			if (stats)
				of[nof++] = (OutFile){stats, NULL, NULL, NULL, 0, false};
			if (!write_outputs(of, nof, s))
				status = 3;
			free(of);
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
