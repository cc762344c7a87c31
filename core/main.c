/* The gdcc driver: parses the command line, runs the pipeline stages in
 * order and reports errors once, at the top.
 *
 *   gdcc [--emit=ir] [-o FILE] [-t TARGET] MODEL     check a model
 *   gdcc run MODEL [--input N=F.npy]... [--output N=F.npy]... [--seed N]
 *
 * Exit status: 0 success, 1 invalid input (model, .npy), 2 bad command
 * line, 3 failure while running (a kernel error, an unwritable file). */
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "config.h"
#include "codegen.h"
#include "frontend.h"
#include "gdcc_limits.h"
#include "interp.h"
#include "legality.h"
#include "npy.h"
#include "import.h"
#include "onnx.h"
#include "ops.h"
#include "npusim.h"
#include "place.h"
#include "printer.h"
#include "reduce.h"
#include "rng.h"
#include "target.h"
#include "util.h"
#include "verify.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_RUN = 3, EXIT_MISMATCH = 4 };

static void usage(FILE *out)
{
	fputs("usage: gdcc [OPTIONS] MODEL.ir\n"
	      "       gdcc run MODEL.ir [--input NAME=FILE.npy]... [--output NAME=FILE.npy]...\n"
	      "                [--output-dir DIR] [--seed N] [--print] [-t TARGET]\n"
	      "       gdcc import MODEL.onnx [-o MODEL.ir]\n"
	      "       gdcc reduce MODEL.ir CONDITION [-o OUT.ir] [-- COMMAND... {} ...]\n"
	      "\n"
	      "Check a model, print it back, or run it with the reference interpreter.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output=FILE    write the result (--emit) to FILE instead of stdout\n"
	      "  -t, --target=TARGET  check the model against TARGET's legality table\n"
	      "  -S                   compile for the -t target: assembly to -o FILE (and a\n"
	      "                       manifest to FILE.json)\n"
	      "      --emit=STAGE     print a stage: ir (the verified graph in model.ir syntax),\n"
	      "                       legality (each node's decision on the -t target),\n"
	      "                       placement (which nodes run on the target, which on its\n"
	      "                       host, and the transfers), loops (the Loop IR), mir\n"
	      "                       (instructions after allocation)\n"
	      "      --host=TARGET    where a target's fallback nodes run (default: the .md's\n"
	      "                       param host, e.g. x86-avx2 for npu-systolic)\n"
	      "      --param NAME=VALUE  override a parameter of the -t target's .md (e.g.\n"
	      "                       array_rows=32); also for run\n"
	      "      --report=FILE    with -S (or run -t): the compilation report as JSON\n"
	      "      --print-after=PASS  dump to stderr after lower (trees), select or allocate\n"
	      "      --list-ops       list the op table: operands, results, attributes\n"
	      "      --list-targets   list the targets this build knows\n"
	      "      --print-legality print the -t target's legality table (no model needed)\n"
	      "      --format=FORMAT  json (default), csv or md, for --print-legality\n"
	      "      --max-tensor-bytes=N     the largest tensor (default 4G; K, M, G, T suffixes)\n"
	      "      --max-workspace-bytes=N  all of a model's tensors, and a program's workspace\n"
	      "                               (default 16G)\n"
	      "      --max-model-bytes=N      the longest model file or .pb input read (default 2G)\n"
	      "                       (the limits also for run and import; and from GDCC_MAX_TENSOR_BYTES,\n"
	      "                       GDCC_MAX_WORKSPACE_BYTES, GDCC_MAX_MODEL_BYTES)\n"
	      "  -h, --help           show this help and exit\n"
	      "  -V, --version        show the version and exit\n"
	      "\n"
	      "run options:\n"
	      "      --input NAME=FILE.npy   value of input NAME (others are generated from the seed)\n"
	      "      --output NAME=FILE.npy  write output NAME to FILE\n"
	      "      --output-dir DIR        write every output not named by --output to DIR/NAME.npy\n"
	      "      --seed N                seed for generated inputs (default 0)\n"
	      "      --print                 print a summary and the leading values of each output\n"
	      "      -t TARGET               compile for TARGET, assemble, link and run there\n"
	      "      --check                 with -t: also run the reference and compare\n"
	      "      --vlen N                with a scalable-vector target: run at VLEN N bits\n"
	      "      --onnx-test DIR         inputs from DIR/input_N.pb, outputs compared with\n"
	      "                              DIR/output_N.pb by ONNX's rule (1e-7 + 1e-3 |ref|)\n"
	      "\n"
	      "import: the ONNX model as model.ir text, to -o FILE (weights to FILE's stem\n"
	      "  .NAME.npy beside it; small constants inline) or, weightless, to stdout.\n"
	      "  MODEL may be .onnx wherever MODEL.ir is taken.\n"
	      "\n"
	      "Output files are written all or none, when the command succeeds.\n"
	      "Exit status: 0 success, 1 invalid input, 2 bad command line, 3 run failure,\n"
	      "4 --check mismatch.\n"
	      "See gdcc(1) and docs/ir.md.\n",
	      out);
}

/* ---- messages ----------------------------------------------------------------
 * Everything gdcc prints on stderr goes through fput_escaped (util.h): a message can
 * quote input (a name, a source line, the bytes of a binary file, an
 * argument), and a control character or a byte that is not part of
 * well-formed UTF-8 is written as \xHH, so no input garbles the terminal. */

/* "gdcc: error: MESSAGE" on stderr, escaped. */
static void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void errorf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	char *line = xasprintf("gdcc: error: %s\n", m);
	fput_escaped(stderr, line, strlen(line));
	free(line);
	free(m);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	errorf("%s", m);
	free(m);
	fputs("gdcc: try 'gdcc --help'\n", stderr);
	return EXIT_USAGE;
}

/* Print a sink's messages (diag_print escapes what they quote). */
static void print_diags(Diag *d)
{
	diag_print(d, stderr);
}


/* ---- resource limits ----------------------------------------------------------
 * --max-tensor-bytes and --max-workspace-bytes (gdcc_limits.h: checked by the
 * verifier, the readers and, for the workspace, here after compiling), and
 * --max-model-bytes: the most bytes read from a model file (model.ir text, a
 * .onnx) or a TensorProto (.pb) input.  Each also from the environment
 * (GDCC_MAX_TENSOR_BYTES, GDCC_MAX_WORKSPACE_BYTES, GDCC_MAX_MODEL_BYTES); the
 * command line wins. */
#define GDCC_DEFAULT_MAX_MODEL_BYTES ((uint64_t)2 << 30)
static uint64_t max_model_bytes = GDCC_DEFAULT_MAX_MODEL_BYTES;

enum { OPT_MAX_TENSOR = 0x100, OPT_MAX_WORKSPACE, OPT_MAX_MODEL };
#define LIMIT_OPTIONS \
	{"max-tensor-bytes", required_argument, NULL, OPT_MAX_TENSOR}, \
	{"max-workspace-bytes", required_argument, NULL, OPT_MAX_WORKSPACE}, \
	{"max-model-bytes", required_argument, NULL, OPT_MAX_MODEL}

/* A limit option (c one of OPT_MAX_*): 0, or EXIT_USAGE after the message. */
static int limit_option(int c, const char *arg)
{
	static const char *const names[] = {"--max-tensor-bytes", "--max-workspace-bytes", "--max-model-bytes"};
	uint64_t v;
	if (!parse_byte_size(arg, &v))
		return usage_error("%s needs a byte count (a positive number with an optional K, M, G or T suffix), got '%s'",
				   names[c - OPT_MAX_TENSOR], arg);
	Limits l = *limits();
	if (c == OPT_MAX_TENSOR)
		l.max_tensor_bytes = v;
	else if (c == OPT_MAX_WORKSPACE)
		l.max_workspace_bytes = v;
	else
		max_model_bytes = v;
	limits_set(&l);
	return 0;
}

static int limits_from_environment(void)
{
	char *err = NULL;
	if (!limits_from_env(&err)) {
		errorf("%s", err);
		free(err);
		return EXIT_USAGE;
	}
	const char *s = getenv("GDCC_MAX_MODEL_BYTES");
	if (s && *s && !parse_byte_size(s, &max_model_bytes)) {
		errorf("GDCC_MAX_MODEL_BYTES='%s' is not a byte count (a positive number with an optional K, M, G or T suffix)", s);
		return EXIT_USAGE;
	}
	return 0;
}

static void list_ops(void)
{
	for (int i = 0; i < OP_COUNT; i++) {
		const OpInfo *o = &op_info[i];
		char in[32], out[32];
		if (o->max_in < 0)
			snprintf(in, sizeof in, "%d+", o->min_in);
		else if (o->min_in == o->max_in)
			snprintf(in, sizeof in, "%d", o->min_in);
		else
			snprintf(in, sizeof in, "%d-%d", o->min_in, o->max_in);
		if (o->max_out < 0)
			snprintf(out, sizeof out, "%d+", o->min_out);
		else if (o->min_out == o->max_out)
			snprintf(out, sizeof out, "%d", o->min_out);
		else
			snprintf(out, sizeof out, "%d-%d", o->min_out, o->max_out);
		printf("%-18s in %-4s out %-4s %s\n", o->name, in, out, o->summary);
		for (const AttrSpec *s = o->attrs; s->name; s++)
			printf("%-18s   %s: %s%s\n", "", s->name, attr_kind_name(s->kind), s->required ? " (required)" : "");
	}
}

static double front_seconds[2]; /* parse+verify, legality: for --report */
static const char *onnx_specialize_dir; /* run --onnx-test: integer inputs become constants */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- reading inputs ------------------------------------------------------------ */
static Loc model_loc; /* the model's graph, for messages about the whole program */

/* Open a file that is read whole (`what`: "model", "input"): a directory,
 * or a regular file above --max-model-bytes, is an error; so is a file that
 * is not a regular one unless may_stream (then the reader caps it).  -1
 * after the error in d. */
static int open_whole(const char *path, const char *what, bool may_stream, Diag *d)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		diag_error(d, loc_at(path, 0, 0), "cannot read %s: %s", what, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char *why = NULL;
	if (S_ISDIR(st.st_mode)) {
		why = xasprintf("is a directory, not a %s file", what);
	} else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max_model_bytes) {
		char *h = bytes_str((uint64_t)st.st_size, NULL), *l = bytes_str(max_model_bytes, "--max-model-bytes");
		why = xasprintf("the %s file is %s, above the limit of %s", what, h, l);
		free(h);
		free(l);
	} else if (!S_ISREG(st.st_mode) && !may_stream) {
		why = xstrdup("not a regular file (an .onnx or .pb file is read from a regular file)");
	}
	if (why) {
		diag_error(d, loc_at(path, 0, 0), "%s", why);
		free(why);
		close(fd);
		return -1;
	}
	return fd;
}

/* Read model text from a file, a pipe or a device, at most --max-model-bytes;
 * NULL after the error in d. */
static char *read_model_text(const char *path, size_t *len, Diag *d)
{
	int fd = open_whole(path, "model", true, d);
	if (fd < 0)
		return NULL;
	bool too_long;
	char *buf = read_fd_limited(fd, max_model_bytes, len, &too_long);
	int e = errno;
	close(fd);
	if (!buf && too_long) {
		char *l = bytes_str(max_model_bytes, "--max-model-bytes");
		diag_error(d, loc_at(path, 0, 0), "the model is longer than the limit of %s", l);
		free(l);
	} else if (!buf) {
		diag_error(d, loc_at(path, 0, 0), "cannot read model: %s", strerror(e));
	}
	return buf;
}

static Graph *read_model(const char *path, Diag *d)
{
	if (onnx_is_model(path)) {
		int fd = open_whole(path, "model", false, d);
		if (fd < 0)
			return NULL;
		close(fd);
		return onnx_load_specialized(path, onnx_specialize_dir, d);
	}
	size_t len;
	char *text = read_model_text(path, &len, d);
	if (!text)
		return NULL;
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, (size_t)(slash - path + (slash == path))) : NULL;
	Graph *g = parse_model(path, dir, text, len, d);
	free(dir);
	free(text);
	return g;
}

/* A TensorProto input (read whole: a regular file within --max-model-bytes). */
static Tensor *read_pb(const char *path, Diag *d)
{
	int fd = open_whole(path, "input", false, d);
	if (fd < 0)
		return NULL;
	close(fd);
	char *err = NULL;
	Tensor *t = onnx_load_tensor(path, &err);
	if (!t) {
		diag_error(d, loc_at(path, 0, 0), "%s", err);
		free(err);
	}
	return t;
}

/* An .npy input (npy_read checks its header against the limits). */
static Tensor *read_npy(const char *path, Diag *d)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		diag_error(d, loc_at(path, 0, 0), "is a directory, not an .npy file");
		return NULL;
	}
	char *err = NULL;
	Tensor *t = NULL;
	if (!npy_read(path, &t, &err)) {
		diag_error(d, loc_at(path, 0, 0), "%s", err);
		free(err);
		return NULL;
	}
	return t;
}

/* Check the model; NULL after reporting the errors into d. */
static Graph *load_and_verify(const char *path, Diag *d)
{
	double t0 = now();
	model_loc = loc_at(path, 0, 0);
	Graph *g = read_model(path, d);
	if (g)
		model_loc = g->loc;
	if (g && !graph_verify(g, d)) {
		graph_free(g);
		g = NULL;
	}
	front_seconds[0] = now() - t0;
	return g;
}

static int finish(Diag *d, int status)
{
	print_diags(d);
	diag_free(d);
	return status;
}

/* ---- output files ----------------------------------------------------------------
 * Every file a command writes (-o, the .s.json manifest, .host.s, --report,
 * run's .npy outputs, import's weights) is staged, and all of them are
 * committed together when the command succeeds (main: outputs_commit), or
 * all removed when it fails (outputs_abort): a command writes all of its
 * outputs or none.  By what the path names:
 *  - nothing, or a regular file: a temporary file beside it (PATH.tmpPID),
 *    renamed over it at commit (a file it replaces keeps its mode);
 *  - a symlink: its target (followed to the end, also when that does not
 *    exist yet) is written as above, and the link stays a link;
 *  - an existing file that is not a regular one (a device such as /dev/null
 *    or /dev/full, a FIFO, a terminal): staged in $TMPDIR, then written into
 *    it at commit, opened for writing but neither created nor truncated
 *    (what gcc -o /dev/null does);
 *  - standard output (no -o, or -o -): staged in memory, written at commit;
 *  - a directory: an error.
 * Write errors (ENOSPC, EIO) name the path and fail the command (status 3).
 * The temporaries are also removed at exit and on SIGINT, SIGTERM, SIGHUP,
 * SIGPIPE and SIGABRT. */
typedef void (*Writer)(FILE *out, const void *ctx);

typedef enum { OUT_RENAME, OUT_COPY, OUT_STDOUT, OUT_REMOVE, OUT_RMDIR } OutKind;

typedef struct {
	OutKind kind;
	char *path;      /* as given, for messages */
	char *final;     /* the file written (symlinks resolved, its folder canonical) */
	char *tmp;       /* the staged file (OUT_RENAME, OUT_COPY) */
	char *mem;       /* OUT_STDOUT: the text */
	size_t memlen;
	bool keep_mode;  /* OUT_RENAME over an existing file: give the new one its mode */
	mode_t mode;
	bool done;       /* committed */
} Output;

static Output **staged;
static int nstaged;
static volatile sig_atomic_t staged_count; /* what the signal handler may walk */

static void remove_temps(void)
{
	for (int i = 0; i < staged_count; i++) {
		Output *o = staged[i];
		if (o->tmp && !o->done && o->kind != OUT_RMDIR)
			unlink(o->tmp);
	}
	for (int i = 0; i < staged_count; i++)
		if (staged[i]->kind == OUT_RMDIR)
			rmdir(staged[i]->final);
}

static void on_fatal_signal(int sig)
{
	remove_temps();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void staged_push(Output *o)
{
	static bool handlers;
	if (!handlers) {
		handlers = true;
		static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGABRT};
		for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = on_fatal_signal;
			sigemptyset(&sa.sa_mask);
			struct sigaction old;
			if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
				continue; /* (nohup) */
			sigaction(sigs[i], &sa, NULL);
		}
		atexit(remove_temps);
	}
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	staged = xrealloc(staged, (size_t)(nstaged + 1) * sizeof *staged);
	staged[nstaged++] = o;
	staged_count = nstaged;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void output_free(Output *o)
{
	free(o->path);
	free(o->final);
	free(o->tmp);
	free(o->mem);
	free(o);
}

static void staged_clear(void)
{
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	for (int i = 0; i < nstaged; i++)
		output_free(staged[i]);
	free(staged);
	staged = NULL;
	nstaged = 0;
	staged_count = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Remove everything staged, and what a commit already put in place. */
static void outputs_abort(void)
{
	for (int i = 0; i < nstaged; i++) {
		Output *o = staged[i];
		if ((o->kind == OUT_RENAME || o->kind == OUT_COPY) && !o->done)
			unlink(o->tmp);
		else if (o->kind == OUT_RENAME && o->done)
			unlink(o->final);
	}
	for (int i = 0; i < nstaged; i++)
		if (staged[i]->kind == OUT_RMDIR)
			rmdir(staged[i]->final);
	staged_clear();
}

/* The folder part and the last component of a path ("." for none). */
static void split_path(const char *path, char **dir, char **base)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		*dir = xstrdup(".");
		*base = xstrdup(path);
	} else {
		*dir = slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
		*base = xstrdup(slash + 1);
	}
}

/* The file writing `path` writes: symlinks followed (a dangling one to the
 * name it points at), the folder made canonical.  NULL with errno set when
 * that cannot be found. */
static char *resolve_output(const char *path)
{
	char *cur = xstrdup(path);
	int hops = 0;
	for (;;) {
		struct stat st;
		if (lstat(cur, &st) != 0) {
			if (errno != ENOENT) {
				free(cur);
				return NULL;
			}
			break;
		}
		if (!S_ISLNK(st.st_mode))
			break;
		if (++hops > 40) {
			free(cur);
			errno = ELOOP;
			return NULL;
		}
		size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 256;
		char *target;
		ssize_t n;
		for (;;) {
			target = xmalloc(cap);
			n = readlink(cur, target, cap);
			if (n < 0 || (size_t)n < cap)
				break;
			free(target);
			cap *= 2;
		}
		if (n < 0) {
			int e = errno;
			free(target);
			free(cur);
			errno = e;
			return NULL;
		}
		target[n] = 0;
		char *next;
		if (target[0] == '/') {
			next = target;
		} else {
			char *dir, *base;
			split_path(cur, &dir, &base);
			next = xasprintf("%s/%s", dir, target);
			free(dir);
			free(base);
			free(target);
		}
		free(cur);
		cur = next;
	}
	char *dir, *base;
	split_path(cur, &dir, &base);
	free(cur);
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		free(dir);
		free(base);
		errno = EISDIR;
		return NULL;
	}
	char *canon = realpath(dir, NULL);
	int e = errno;
	free(dir);
	if (!canon) {
		free(base);
		errno = e;
		return NULL;
	}
	char *r = xasprintf("%s%s%s", canon, canon[strlen(canon) - 1] == '/' ? "" : "/", base);
	free(canon);
	free(base);
	return r;
}

/* Stage an output.  stdout_dash: "-" (and NULL) mean standard output.
 * adopt: an already written file to commit as `path` (import's weights,
 * written into a staging folder beside it).  NULL and *rc after the message. */
static Output *stage(const char *path, bool stdout_dash, const char *adopt, int *rc)
{
	Output *o = xcalloc(1, sizeof *o);
	if (!path || (stdout_dash && strcmp(path, "-") == 0)) {
		o->kind = OUT_STDOUT;
		o->path = xstrdup("standard output");
		staged_push(o);
		return o;
	}
	o->path = xstrdup(path);
	o->final = resolve_output(path);
	struct stat st;
	if (!o->final) {
		errorf("cannot create '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (lstat(o->final, &st) != 0) {
		if (errno != ENOENT) {
			errorf("cannot create '%s': %s", path, strerror(errno));
			goto fail;
		}
		o->kind = OUT_RENAME;
	} else if (S_ISDIR(st.st_mode)) {
		errorf("cannot write '%s': %s", path, strerror(EISDIR));
		goto fail;
	} else if (S_ISREG(st.st_mode)) {
		o->kind = OUT_RENAME;
		o->keep_mode = true;
		o->mode = st.st_mode & 07777;
	} else {
		o->kind = OUT_COPY;
	}
	for (int i = 0; i < nstaged; i++) {
		const Output *p = staged[i];
		if (p->kind == OUT_RENAME && o->kind == OUT_RENAME && strcmp(p->final, o->final) == 0) {
			if (strcmp(p->path, path) == 0)
				errorf("'%s' is named for two outputs", path);
			else
				errorf("'%s' and '%s' name the same file, for two outputs", p->path, path);
			output_free(o);
			*rc = EXIT_USAGE;
			return NULL;
		}
	}
	if (adopt) {
		o->tmp = xstrdup(adopt);
		staged_push(o);
		return o;
	}
	if (o->kind == OUT_COPY) {
		const char *td = getenv("TMPDIR");
		o->tmp = xasprintf("%s/gdcc-out-XXXXXX", td && *td ? td : "/tmp");
		int fd = mkstemp(o->tmp);
		if (fd < 0) {
			errorf("cannot create a temporary file for '%s' (%s): %s", path, o->tmp, strerror(errno));
			goto fail;
		}
		close(fd);
	} else {
		for (int k = 0;; k++) {
			o->tmp = k ? xasprintf("%s.tmp%ld.%d", o->final, (long)getpid(), k)
				   : xasprintf("%s.tmp%ld", o->final, (long)getpid());
			int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
			if (fd >= 0) {
				close(fd);
				break;
			}
			if (errno != EEXIST || k == 100) {
				errorf("cannot create '%s': %s", path, strerror(errno));
				goto fail;
			}
			free(o->tmp);
		}
	}
	staged_push(o);
	return o;
fail:
	free(o->tmp);
	o->tmp = NULL;
	output_free(o);
	*rc = EXIT_RUN;
	return NULL;
}

/* Stage `path` for a writer that takes a file name (npy_write): the name
 * to write, or NULL and *rc after the message. */
static const char *stage_file(const char *path, int *rc)
{
	Output *o = stage(path, false, NULL, rc);
	return o ? o->tmp : NULL;
}

/* At commit, remove `path` if it is a regular file (a stale output). */
static void stage_remove(const char *path)
{
	Output *o = xcalloc(1, sizeof *o);
	o->kind = OUT_REMOVE;
	o->path = xstrdup(path);
	o->final = xstrdup(path);
	staged_push(o);
}

/* A staging folder, removed at the end (after its files are committed). */
static void stage_rmdir(const char *dir)
{
	Output *o = xcalloc(1, sizeof *o);
	o->kind = OUT_RMDIR;
	o->path = xstrdup(dir);
	o->final = xstrdup(dir);
	staged_push(o);
}

/* Write through fn into the staged file for `path` (no path, or "-":
 * standard output).  0, or an exit status after the message. */
static int write_output(const char *path, Writer fn, const void *ctx)
{
	int rc = 0;
	Output *o = stage(path, true, NULL, &rc);
	if (!o)
		return rc;
	FILE *f = o->kind == OUT_STDOUT ? open_memstream(&o->mem, &o->memlen) : fopen(o->tmp, "wb");
	if (!f) {
		errorf("cannot create '%s': %s", o->kind == OUT_STDOUT ? "standard output" : path, strerror(errno));
		return EXIT_RUN;
	}
	fn(f, ctx);
	int e = 0;
	if (ferror(f))
		e = errno ? errno : EIO;
	if (fclose(f) != 0 && !e)
		e = errno;
	if (e) {
		errorf("cannot write '%s': %s", o->path, strerror(e));
		return EXIT_RUN;
	}
	return 0;
}

/* Does -o name a file that can have others beside it (the .s.json
 * manifest, the .host.s)?  Not standard output, nor a device or FIFO
 * (gdcc -S -o /dev/null writes nothing else). */
static bool names_a_file(const char *out)
{
	struct stat st;
	if (!out || strcmp(out, "-") == 0)
		return false;
	return stat(out, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode);
}

/* Copy a staged file into an existing non-regular file. */
static bool copy_into(const char *from, const char *to, int *err)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		*err = errno;
		return false;
	}
	int out = open(to, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (out < 0) {
		*err = errno;
		close(in);
		return false;
	}
	char buf[1 << 16];
	bool ok = true;
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0) {
				*err = errno;
				ok = false;
			}
			break;
		}
		for (ssize_t w = 0; ok && w < n;) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				*err = k < 0 ? errno : EIO;
				ok = false;
			} else {
				w += k;
			}
		}
		if (!ok)
			break;
	}
	close(in);
	if (close(out) != 0 && ok) {
		*err = errno;
		ok = false;
	}
	return ok;
}

/* Put every staged output in place: standard output first, then the
 * devices and FIFOs, then the renames.  0, or EXIT_RUN after the message
 * with nothing left behind. */
static int outputs_commit(void)
{
	int rc = 0;
	for (int i = 0; rc == 0 && i < nstaged; i++) {
		Output *o = staged[i];
		if (o->kind != OUT_STDOUT)
			continue;
		if ((o->memlen && fwrite(o->mem, 1, o->memlen, stdout) != o->memlen) || fflush(stdout) != 0) {
			errorf("cannot write to standard output: %s", strerror(errno));
			rc = EXIT_RUN;
		}
		o->done = true;
	}
	for (int i = 0; rc == 0 && i < nstaged; i++) {
		Output *o = staged[i];
		int e = 0;
		if (o->kind != OUT_COPY)
			continue;
		if (!copy_into(o->tmp, o->final, &e)) {
			errorf("cannot write '%s': %s", o->path, strerror(e));
			rc = EXIT_RUN;
		}
		unlink(o->tmp);
		o->done = true;
	}
	for (int i = 0; rc == 0 && i < nstaged; i++) {
		Output *o = staged[i];
		if (o->kind != OUT_RENAME)
			continue;
		if (o->keep_mode)
			chmod(o->tmp, o->mode);
		if (rename(o->tmp, o->final) != 0) {
			errorf("cannot write '%s': %s", o->path, strerror(errno));
			rc = EXIT_RUN;
		} else {
			o->done = true;
		}
	}
	if (rc) {
		outputs_abort();
		return rc;
	}
	for (int i = 0; i < nstaged; i++) {
		Output *o = staged[i];
		struct stat st;
		if (o->kind == OUT_REMOVE && lstat(o->final, &st) == 0 && S_ISREG(st.st_mode))
			unlink(o->final);
	}
	for (int i = 0; i < nstaged; i++)
		if (staged[i]->kind == OUT_RMDIR)
			rmdir(staged[i]->final);
	staged_clear();
	return 0;
}

static void write_ir(FILE *out, const void *g) { print_graph(out, g); }
static void fputs_writer(FILE *out, const void *text) { fputs(text ? text : "", out); }

typedef struct {
	const Target *t;
	LegalityFormat format;
} LegalityJob;

static void write_legality(FILE *out, const void *ctx)
{
	const LegalityJob *j = ctx;
	legality_export(out, j->t, j->format);
}

typedef struct {
	const Graph *g;
	const Target *t;
} DecisionJob;

static void write_decisions(FILE *out, const void *ctx)
{
	const DecisionJob *j = ctx;
	Diag d;
	diag_init(&d);
	legality_check(j->g, j->t, &d, out);
	diag_free(&d);
}

typedef struct {
	const Program *p;
	uint64_t hash;
} ProgramJob;

static void write_asm(FILE *out, const void *ctx) { program_emit(out, ((const ProgramJob *)ctx)->p); }
static void write_manifest(FILE *out, const void *ctx)
{
	const ProgramJob *j = ctx;
	program_manifest(out, j->p, j->hash);
}
static void write_mir(FILE *out, const void *ctx) { mfunc_dump(out, ((const ProgramJob *)ctx)->p->f); }

/* The content hash of a compilation: the model as printed (its meaning,
 * not its formatting), the target's .md, and the compiler's version. */
static uint64_t content_hash(const Graph *g, const Target *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	print_graph(f, g);
	fprintf(f, "%016llx gdcc %s", (unsigned long long)t->md_hash, PACKAGE_VERSION);
	fclose(f);
	uint64_t h = XXH3_64bits(buf, len);
	free(buf);
	return h;
}

static const char *report_path; /* --report=FILE */
static const char *host_name;   /* --host=TARGET */
/* --param NAME=VALUE: the target's .md params overridden (compile and run) */
static const char **param_settings;
static int nparam_settings;
static Target *param_target;

static int add_param_setting(const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return 0;
	param_settings = xrealloc(param_settings, (size_t)(nparam_settings + 1) * sizeof *param_settings);
	param_settings[nparam_settings++] = arg;
	return 1;
}

/* t with the --param overrides, or t; NULL after the message (a bad
 * command line: a param the target does not have, a bad value). */
static const Target *with_params(const Target *t)
{
	if (!t || !nparam_settings)
		return t;
	for (int i = 0; i < nparam_settings; i++) {
		const char *eq = strchr(param_settings[i], '=');
		char *name = xstrndup(param_settings[i], (size_t)(eq - param_settings[i]));
		bool known = target_param(t, name) != NULL;
		if (!known) {
			char *list = xstrdup("");
			for (int k = 0; k < t->nparams; k++) {
				char *l = xasprintf("%s%s%s", list, k ? ", " : "", t->params[k].name);
				free(list);
				list = l;
			}
			usage_error("--param %s: target '%s' has no param '%s' (%s%s)", param_settings[i], t->name, name,
				    t->nparams ? "its params: " : "it has none", list);
			free(list);
			free(name);
			return NULL;
		}
		free(name);
	}
	Diag d;
	diag_init(&d);
	param_target = target_with_params(t, nparam_settings, param_settings, &d);
	/* (the simulator's library names itself in these: gdcc says them) */
	for (int i = 0; i < d.n; i++)
		if (d.entries[i].loc.file && strcmp(d.entries[i].loc.file, "npusim") == 0)
			d.entries[i].loc.file = NULL;
	print_diags(&d);
	diag_free(&d);
	return param_target;
}
static const char *placed_emit; /* --emit=placement|loops|mir of a placed model, or NULL (-S) */

/* A placed model's report gathers one report per segment and the
 * simulator's statistics of each device run. */
static bool collect_reports;
static char **collected, **sim_stats;
static int ncollected, nsim_stats;
static void collected_add(char *text)
{
	collected = xrealloc(collected, (size_t)(ncollected + 1) * sizeof *collected);
	collected[ncollected++] = text;
}
static void collected_free(void)
{
	for (int i = 0; i < ncollected; i++)
		free(collected[i]);
	for (int i = 0; i < nsim_stats; i++)
		free(sim_stats[i]);
	free(collected);
	free(sim_stats);
	collected = sim_stats = NULL;
	ncollected = nsim_stats = 0;
}

static void write_report(FILE *out, const void *ctx)
{
	const ProgramJob *j = ctx;
	program_report(out, j->p, j->hash, front_seconds);
}

/* Why the last compile() returned NULL: EXIT_INPUT (the model), or EXIT_RUN
 * (its report could not be written). */
static int compile_status = EXIT_INPUT;

static Program *compile(const Graph *g, const Target *t, FILE *loops, Diag *d)
{
	compile_status = EXIT_INPUT;
	double t0 = now();
	bool ok = legality_check(g, t, d, NULL);
	front_seconds[1] = now() - t0;
	if (!ok)
		return NULL;
	Program *p = codegen(g, t, loops, d);
	if (p && (p->workspace_bytes < 0 || (uint64_t)p->workspace_bytes > limits()->max_workspace_bytes)) {
		char *w = bytes_str((uint64_t)p->workspace_bytes, NULL),
		     *l = bytes_str(limits()->max_workspace_bytes, "--max-workspace-bytes");
		if (p->workspace_bytes < 0)
			diag_error(d, model_loc, "the program compiled for %s needs a workspace larger than 2^63 bytes",
				   t->name);
		else
			diag_error(d, model_loc,
				   "the program compiled for %s needs a workspace of %s, above the limit of %s",
				   t->name, w, l);
		free(w);
		free(l);
		program_free(p);
		return NULL;
	}
	if (p && collect_reports) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		program_report(m, p, content_hash(g, t), front_seconds);
		fclose(m);
		collected_add(buf);
	} else if (p && report_path) {
		ProgramJob job = {p, content_hash(g, t)};
		int wrc = write_output(report_path, write_report, &job);
		if (wrc != 0) {
			compile_status = wrc;
			program_free(p);
			return NULL;
		}
	}
	return p;
}

typedef struct {
	const Placement *pl;
	uint64_t hash;
} PlacedJob;

/* The report of a placed model: the placement, each segment's program
 * report, and the simulator's statistics of each device segment run. */
static void write_placed_report(FILE *o, const void *ctx)
{
	const PlacedJob *j = ctx;
	fprintf(o, "{\n  \"schema\": \"gdcc.report\",\n  \"schema_version\": 1,\n  \"generator\": \"gdcc %s\",\n",
		PACKAGE_VERSION);
	fprintf(o, "  \"model\": \"%s\",\n  \"target\": \"%s\",\n  \"content_hash\": \"%016llx\",\n  \"placement\": ",
		j->pl->g->name, j->pl->device->name, (unsigned long long)j->hash);
	placement_json(o, j->pl, "  ");
	fputs(",\n  \"segments\": [", o);
	for (int i = 0; i < ncollected; i++)
		fprintf(o, "%s\n%s", i ? "," : "", collected[i]);
	fputs("],\n  \"simulator\": [", o);
	for (int i = 0; i < nsim_stats; i++)
		fprintf(o, "%s\n%s", i ? "," : "", sim_stats[i]);
	fputs("]\n}\n", o);
}

static void write_placement(FILE *out, const void *ctx) { placement_print(out, ctx); }

typedef struct {
	const Placement *pl;
	Program **progs;
	uint64_t hash;
	bool host_part;   /* the host's segments, else the device's */
} PlacedAsmJob;

static void write_placed_asm(FILE *o, const void *ctx)
{
	const PlacedAsmJob *j = ctx;
	fprintf(o, "# %s part of %s placed on %s with host %s: segments run in order, values passed as listed in the manifest\n",
		j->host_part ? "host" : "device", j->pl->g->name, j->pl->device->name, j->pl->host->name);
	for (int k = 0; k < j->pl->nsegs; k++)
		if (j->pl->segs[k].host == j->host_part)
			program_emit(o, j->progs[k]);
}

static void write_placed_manifest(FILE *o, const void *ctx)
{
	const PlacedAsmJob *j = ctx;
	fprintf(o, "{\n  \"schema\": \"gdcc.manifest\",\n  \"schema_version\": 1,\n  \"generator\": \"gdcc %s\",\n",
		PACKAGE_VERSION);
	fprintf(o, "  \"target\": \"%s\",\n  \"host\": \"%s\",\n  \"model\": \"%s\",\n  \"content_hash\": \"%016llx\",\n",
		j->pl->device->name, j->pl->host->name, j->pl->g->name, (unsigned long long)j->hash);
	fputs("  \"placement\": ", o);
	placement_json(o, j->pl, "  ");
	fputs(",\n  \"programs\": [", o);
	for (int k = 0; k < j->pl->nsegs; k++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		program_manifest(m, j->progs[k], j->hash);
		fclose(m);
		fprintf(o, "%s\n%s", k ? "," : "", buf);
		free(buf);
	}
	fputs("]\n}\n", o);
}

/* -S (or --emit=placement) of a model placed on a target and its host:
 * OUT gets the device's segments, OUT without .s plus .host.s the host's,
 * OUT.json the manifest (placement, transfers, each segment's arguments). */
static int compile_placed(const Graph *g, const Target *t, const Target *host, const char *out, Diag *d)
{
	Placement *pl = place_graph(g, t, host, d);
	if (!pl)
		return EXIT_INPUT;
	int rc = 0;
	Program **progs = xcalloc((size_t)pl->nsegs, sizeof *progs);
	char **names = xcalloc((size_t)pl->nsegs, sizeof *names);
	collect_reports = report_path != NULL;
	bool loops = placed_emit && strcmp(placed_emit, "loops") == 0, mir = placed_emit && strcmp(placed_emit, "mir") == 0;
	char *text = NULL;
	size_t tlen = 0;
	FILE *ts = loops || mir ? open_memstream(&text, &tlen) : NULL;
	for (int k = 0; k < pl->nsegs && rc == 0; k++) {
		names[k] = xasprintf("gdcc_seg%d", k);
		codegen_entry = names[k];
		if (ts)
			fprintf(ts, "# segment %d on %s%s\n", k, pl->segs[k].t->name, pl->segs[k].host ? " (host)" : "");
		progs[k] = compile(pl->segs[k].g, pl->segs[k].t, loops ? ts : NULL, d);
		codegen_entry = "gdcc_entry";
		if (!progs[k])
			rc = compile_status;
		else if (mir)
			mfunc_dump(ts, progs[k]->f);
	}
	if (ts)
		fclose(ts);
	uint64_t hash = content_hash(g, t);
	if (rc == 0 && ts) {
		rc = write_output(out, fputs_writer, text);
	} else if (rc == 0 && placed_emit) {
		rc = write_output(out, write_placement, pl);
	} else if (rc == 0) {
		bool any_host = false;
		for (int k = 0; k < pl->nsegs; k++)
			any_host |= pl->segs[k].host;
		PlacedAsmJob job = {pl, progs, hash, false};
		rc = write_output(out, write_placed_asm, &job);
		if (rc == 0 && names_a_file(out)) {
			size_t n = strlen(out);
			char *hpath = n > 2 && strcmp(out + n - 2, ".s") == 0 ? xasprintf("%.*s.host.s", (int)(n - 2), out)
									    : xasprintf("%s.host.s", out);
			if (any_host) {
				job.host_part = true;
				rc = write_output(hpath, write_placed_asm, &job);
			} else {
				stage_remove(hpath); /* (a stale one from an earlier compile) */
			}
			free(hpath);
			char *mpath = xasprintf("%s.json", out);
			if (rc == 0)
				rc = write_output(mpath, write_placed_manifest, &job);
			free(mpath);
		} else if (rc == 0 && any_host) {
			job.host_part = true;
			rc = write_output(out, write_placed_asm, &job);
		}
	}
	if (rc == 0 && report_path) {
		PlacedJob job = {pl, hash};
		rc = write_output(report_path, write_placed_report, &job);
	}
	collect_reports = false;
	collected_free();
	free(text);
	for (int k = 0; k < pl->nsegs; k++) {
		program_free(progs[k]);
		free(names[k]);
	}
	free(progs);
	free(names);
	placement_free(pl);
	return rc;
}

static void list_targets(void)
{
	printf("%-16s %-24s %-22s %-28s %s\n", "target", "isa", "vector", "dtypes", "description");
	for (int i = 0; i < gdcc_ntargets; i++) {
		const Target *t = gdcc_targets[i];
		char vec[64], dts[64] = "";
		if (t->scalable)
			snprintf(vec, sizeof vec, "scalable %d-%d bits", t->vector_bits, t->vlen_max);
		else
			snprintf(vec, sizeof vec, "fixed %d bits", t->vector_bits);
		size_t k = 0;
		for (int dt = DT_F32; dt < DT_COUNT; dt++)
			if (t->dtypes & (1u << dt))
				k += snprintf(dts + k, sizeof dts - k, "%s%s", k ? "," : "", dtype_name((DType)dt));
		printf("%-16s %-24s %-22s %-28s %s%s%s\n", t->name, t->isa, vec, dts, t->md_file,
		       t->parent ? ", extends " : "", t->parent ? t->parent : "");
	}
}

static int unknown_target(const char *name)
{
	fprintf(stderr, "gdcc: error: unknown target '%s' (known:", name);
	for (int i = 0; i < gdcc_ntargets; i++)
		fprintf(stderr, " %s", gdcc_targets[i]->name);
	fprintf(stderr, "%s)\ngdcc: try 'gdcc --list-targets'\n", gdcc_ntargets ? "" : " none");
	return EXIT_USAGE;
}

static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"target", required_argument, NULL, 't'},
		{"emit", required_argument, NULL, 'e'},
		{"format", required_argument, NULL, 'f'},
		{"list-ops", no_argument, NULL, 'L'},
		{"list-targets", no_argument, NULL, 'T'},
		{"print-legality", no_argument, NULL, 'P'},
		{"report", required_argument, NULL, 'R'},
		{"print-after", required_argument, NULL, 'A'},
		{"host", required_argument, NULL, 'H'},
		{"param", required_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		LIMIT_OPTIONS,
		{0},
	};
	const char *out = NULL, *emit = NULL, *target_name = NULL, *format = NULL;
	bool print_legality = false, assemble = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:t:hVS", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': target_name = optarg; break;
		case 'S': assemble = true; break;
		case 'R': report_path = optarg; break;
		case 'H': host_name = optarg; break;
		case 'M':
			if (!add_param_setting(optarg))
				return usage_error("--param needs NAME=VALUE, got '%s'", optarg);
			break;
		case 'A': {
			static const char *const passes[] = {"lower", "select", "allocate"};
			int k = 0;
			while (k < 3 && strcmp(optarg, passes[k]) != 0)
				k++;
			if (k == 3)
				return usage_error("unknown --print-after pass '%s' (known: lower, select, allocate)", optarg);
			codegen_print_after[k] = stderr;
			break;
		}
		case 'e':
			if (strcmp(optarg, "ir") != 0 && strcmp(optarg, "legality") != 0 && strcmp(optarg, "loops") != 0 &&
			    strcmp(optarg, "mir") != 0 && strcmp(optarg, "placement") != 0)
				return usage_error("unknown --emit stage '%s' (known: ir, legality, placement, loops, mir)", optarg);
			emit = optarg;
			break;
		case 'f': format = optarg; break;
		case OPT_MAX_TENSOR:
		case OPT_MAX_WORKSPACE:
		case OPT_MAX_MODEL:
			if (limit_option(c, optarg))
				return EXIT_USAGE;
			break;
		case 'L': list_ops(); return 0;
		case 'T': list_targets(); return 0;
		case 'P': print_legality = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("gdcc %s\n", PACKAGE_VERSION); return 0;
		case ':': return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	const Target *target = NULL;
	if (target_name && !(target = target_lookup(target_name)))
		return unknown_target(target_name);
	if (nparam_settings && !target)
		return usage_error("--param overrides a target's parameters: give -t TARGET%s", "");
	if (nparam_settings && !(target = with_params(target)))
		return EXIT_USAGE;
	LegalityFormat lf = LEGALITY_JSON;
	if (format) {
		if (!print_legality)
			return usage_error("--format applies to --print-legality%s", "");
		if (strcmp(format, "json") == 0)
			lf = LEGALITY_JSON;
		else if (strcmp(format, "csv") == 0)
			lf = LEGALITY_CSV;
		else if (strcmp(format, "md") == 0)
			lf = LEGALITY_MD;
		else
			return usage_error("unknown --format '%s' (known: json, csv, md)", format);
	}
	if (print_legality) {
		if (!target)
			return usage_error("--print-legality needs a target: -t TARGET (see --list-targets)%s", "");
		if (optind < argc)
			return usage_error("--print-legality takes no model ('%s')", argv[optind]);
		LegalityJob job = {target, lf};
		return write_output(out, write_legality, &job);
	}
	if (optind >= argc)
		return usage_error("no model given%s", "");
	if (optind + 1 < argc)
		return usage_error("more than one model given ('%s' too)", argv[optind + 1]);
	if (out && !emit && !assemble)
		return usage_error("-o needs something to write: use -S or --emit=STAGE%s", "");
	if (emit && assemble)
		return usage_error("-S and --emit=%s: choose one", emit);
	if (((emit && strcmp(emit, "ir") != 0) || assemble) && !target)
		return usage_error("this output needs a target: -t TARGET (see --list-targets)%s", "");
	if (report_path && !assemble && !(emit && (strcmp(emit, "loops") == 0 || strcmp(emit, "mir") == 0 ||
						 strcmp(emit, "placement") == 0)))
		return usage_error("--report is the report of a compilation: give -S (or --emit=loops, mir or placement)%s", "");
	Diag d;
	diag_init(&d);
	Graph *g = load_and_verify(argv[optind], &d);
	if (!g)
		return finish(&d, EXIT_INPUT);
	int rc = 0;
	const Target *host = target ? place_host(target, host_name, &d) : NULL;
	if (diag_has_errors(&d)) {
		graph_free(g);
		return finish(&d, EXIT_USAGE);
	}
	if (host && (assemble || (emit && (strcmp(emit, "placement") == 0 || strcmp(emit, "loops") == 0 || strcmp(emit, "mir") == 0)))) {
		placed_emit = emit;
		rc = compile_placed(g, target, host, out, &d);
		graph_free(g);
		return finish(&d, rc);
	}
	if (emit && strcmp(emit, "placement") == 0) {
		/* no host: everything runs on the target (or is an error) */
		Placement *pl = place_graph(g, target, NULL, &d);
		rc = pl ? write_output(out, write_placement, pl) : EXIT_INPUT;
		placement_free(pl);
		graph_free(g);
		return finish(&d, rc);
	}
	if (assemble || (emit && (strcmp(emit, "loops") == 0 || strcmp(emit, "mir") == 0))) {
		bool loops = emit && strcmp(emit, "loops") == 0;
		char *lbuf = NULL;
		size_t llen = 0;
		FILE *lstream = loops ? open_memstream(&lbuf, &llen) : NULL;
		Program *p = compile(g, target, lstream, &d);
		if (lstream)
			fclose(lstream);
		if (!p) {
			rc = compile_status;
		} else {
			ProgramJob job = {p, content_hash(g, target)};
			if (assemble) {
				rc = write_output(out, write_asm, &job);
				if (rc == 0 && names_a_file(out)) {
					char *mpath = xasprintf("%s.json", out);
					rc = write_output(mpath, write_manifest, &job);
					free(mpath);
				}
			} else if (loops) {
				rc = write_output(out, fputs_writer, lbuf);
			} else {
				rc = write_output(out, write_mir, &job);
			}
			program_free(p);
		}
		free(lbuf);
	} else if (target && !legality_check(g, target, &d, NULL))
		rc = EXIT_INPUT;
	else if (emit && strcmp(emit, "ir") == 0)
		rc = write_output(out, write_ir, g);
	else if (emit) {
		DecisionJob job = {g, target};
		rc = write_output(out, write_decisions, &job);
	}
	graph_free(g);
	return finish(&d, rc);
}

/* ---- running compiled code -------------------------------------------------- */
/* The NPU simulator: $GDCC_NPUSIM, the build tree's, or the installed one. */
static const char *npusim_path(void)
{
	const char *env = getenv("GDCC_NPUSIM");
	if (env && *env)
		return env;
#ifdef GDCC_NPUSIM_BUILD
	struct stat st;
	if (stat(GDCC_NPUSIM_BUILD, &st) == 0)
		return GDCC_NPUSIM_BUILD;
#endif
	return GDCC_BINDIR "/npusim";
}

/* A target's command template with {name} replaced (values shell-quoted). */
/* A word for sh: in single quotes, each ' as '\'' */
static char *shell_quote(const char *v)
{
	size_t n = 3;
	for (const char *q = v; *q; q++)
		n += *q == '\'' ? 4 : 1;
	char *r = xmalloc(n), *o = r;
	*o++ = '\'';
	for (const char *q = v; *q; q++) {
		if (*q == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *q;
		}
	}
	*o++ = '\'';
	*o = 0;
	return r;
}

static char *fill_command(const char *tmpl, const char *const *keys, const char *const *vals, int n)
{
	size_t cap = 256, len = 0;
	char *out = xmalloc(cap);
	for (const char *s = tmpl; *s;) {
		const char *piece = s;
		size_t plen = 1;
		char *quoted = NULL;
		if (*s == '{') {
			for (int i = 0; i < n; i++) {
				size_t kl = strlen(keys[i]);
				if (strncmp(s + 1, keys[i], kl) == 0 && s[1 + kl] == '}') {
					piece = quoted = shell_quote(vals[i]);
					plen = strlen(quoted);
					s += kl + 1;
					break;
				}
			}
		}
		s++;
		if (len + plen + 1 > cap)
			out = xrealloc(out, cap = 2 * (len + plen + 1));
		memcpy(out + len, piece, plen);
		len += plen;
		free(quoted);
	}
	out[len] = 0;
	return out;
}

static const char *runtime_dir(void)
{
	const char *env = getenv("GDCC_RUNTIME_DIR");
	if (env && *env)
		return env;
	struct stat st;
	if (stat(GDCC_RUNTIME_BUILD, &st) == 0)
		return GDCC_RUNTIME_BUILD;
	return GDCC_RUNTIME_DIR;
}

static bool write_raw(const char *path, const Tensor *t)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	size_t n = tensor_bytes(t);
	bool ok = (n == 0 || fwrite(t->data, 1, n, f) == n);
	return (fclose(f) == 0) && ok;
}

static bool read_raw(const char *path, Tensor *t)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	size_t n = tensor_bytes(t);
	bool ok = (n == 0 || fread(t->data, 1, n, f) == n);
	fclose(f);
	return ok;
}

/* Compile g for t, link it with the run harness, run it on inputs; fills
 * outputs.  Returns 0 or an exit status, after reporting into d. */
static const char *run_vlen; /* run --vlen N: the vector length a scalable target runs at */

static int run_on_target(const Graph *g, const Target *t, Tensor *const *inputs, Tensor **outputs, Diag *d)
{
	Program *p = compile(g, t, NULL, d);
	if (!p)
		return compile_status;
	const ParamInfo *link = target_param(t, "link"), *run = target_param(t, "run"), *harness = target_param(t, "harness");
	if (!link || !link->str || !run || !run->str || ((!harness || !harness->str) && strstr(link->str, "{harness}"))) {
		diag_error(d, loc_at(NULL, 0, 0), "%s: the .md does not say how to link and run a program (params link, run, harness)",
			   t->name);
		program_free(p);
		return EXIT_RUN;
	}
	/* in $TMPDIR (default /tmp), so that whoever runs us (gdcc reduce, a
	 * test) can keep what a killed run leaves behind in its own folder */
	const char *tmpdir = getenv("TMPDIR");
	char *dir = xasprintf("%s/gdcc-run-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(dir)) {
		diag_error(d, loc_at(NULL, 0, 0), "cannot create a temporary folder in %s: %s",
			   tmpdir && *tmpdir ? tmpdir : "/tmp", strerror(errno));
		free(dir);
		program_free(p);
		return EXIT_RUN;
	}
	int rc = 0;
	char *asm_path = xasprintf("%s/model.s", dir), *prog = xasprintf("%s/model", dir);
	char *harness_path = xasprintf("%s/%s", runtime_dir(), harness && harness->str ? harness->str : "");
	char *stats_path = xasprintf("%s/stats.json", dir);
	char **files = xcalloc((size_t)(g->ninputs + g->noutputs), sizeof *files);
	ProgramJob job = {p, 0};
	FILE *af = fopen(asm_path, "w");
	if (!af) {
		diag_error(d, loc_at(asm_path, 0, 0), "cannot create: %s", strerror(errno));
		rc = EXIT_RUN;
		goto out;
	}
	write_asm(af, &job);
	if (fclose(af) != 0) {
		diag_error(d, loc_at(asm_path, 0, 0), "cannot write: %s", strerror(errno));
		rc = EXIT_RUN;
		goto out;
	}
	{
		const char *keys[] = {"out", "in", "harness"}, *vals[] = {prog, asm_path, harness_path};
		char *cmd = fill_command(link->str, keys, vals, 3);
		char *full = xasprintf("%s 2>'%s/link.log'", cmd, dir);
		int st = system(full);
		if (st != 0) {
			char *log = xasprintf("%s/link.log", dir);
			size_t len;
			char *text = read_file(log, &len);
			diag_error(d, loc_at(NULL, 0, 0), "%s: assembling and linking failed (%s):\n%s", t->name, cmd,
				   text ? text : "");
			free(text);
			free(log);
			rc = EXIT_RUN;
		}
		free(full);
		free(cmd);
		if (rc)
			goto out;
	}
	{
		size_t cap = 1024, len = 0;
		char *args = xmalloc(cap);
		args[0] = 0;
		for (int i = 0; i < g->ninputs + g->noutputs; i++) {
			bool in = i < g->ninputs;
			files[i] = xasprintf("%s/%s%d.bin", dir, in ? "in" : "out", in ? i : i - g->ninputs);
			const Value *v = in ? g->inputs[i] : g->outputs[i - g->ninputs];
			if (in && !write_raw(files[i], inputs[i])) {
				diag_error(d, loc_at(files[i], 0, 0), "cannot write: %s", strerror(errno));
				rc = EXIT_RUN;
			}
			char *a = xasprintf(" '%c:%s:%lld'", in ? 'i' : 'o', files[i],
					    (long long)(shape_numel(&v->type.shape) * (int64_t)dtype_size(v->type.dtype)));
			if (len + strlen(a) + 64 > cap)
				args = xrealloc(args, cap = 2 * (len + strlen(a) + 64));
			strcpy(args + len, a);
			len += strlen(a);
			free(a);
		}
		snprintf(args + len, cap - len, " 'w:%lld'", (long long)p->workspace_bytes);
		char vlen[32];
		const ParamInfo *vd = target_param(t, "vlen_default");
		snprintf(vlen, sizeof vlen, "%s", run_vlen ? run_vlen : vd && vd->n ? "" : "");
		if (!run_vlen && vd && vd->n)
			snprintf(vlen, sizeof vlen, "%d", (int)vd->values[0]);
		const char *keys[] = {"prog", "vlen", "npusim", "target", "stats"},
			   *vals[] = {prog, vlen, npusim_path(), t->name, stats_path};
		/* {params}: the --param overrides, for the simulator */
		char *tmpl = xstrdup(run->str), *at = strstr(tmpl, "{params}");
		if (at) {
			size_t tcap = strlen(tmpl) + 1;
			for (int i = 0; i < nparam_settings; i++)
				tcap += 4 * strlen(param_settings[i]) + 16;
			char *tt = xmalloc(tcap);
			size_t tl = (size_t)(at - tmpl);
			memcpy(tt, tmpl, tl);
			tt[tl] = 0;
			for (int i = 0; i < nparam_settings && t == param_target; i++) {
				/* shell-quoted: ' becomes '\'' */
				tl += (size_t)sprintf(tt + tl, " --param '");
				for (const char *q = param_settings[i]; *q; q++)
					tl += (size_t)(*q == '\'' ? sprintf(tt + tl, "'\\''") : sprintf(tt + tl, "%c", *q));
				tl += (size_t)sprintf(tt + tl, "'");
			}
			strcpy(tt + tl, at + strlen("{params}"));
			free(tmpl);
			tmpl = tt;
		}
		char *cmd = fill_command(tmpl, keys, vals, 5);
		free(tmpl);
		char *full = xasprintf("%s%s", cmd, args);
		/* the simulator checks its buffers against the same limits */
		char lim[32];
		snprintf(lim, sizeof lim, "%" PRIu64, limits()->max_tensor_bytes);
		setenv("GDCC_MAX_TENSOR_BYTES", lim, 1);
		snprintf(lim, sizeof lim, "%" PRIu64, limits()->max_workspace_bytes);
		setenv("GDCC_MAX_WORKSPACE_BYTES", lim, 1);
		int st = rc ? 0 : system(full);
		if (st != 0) {
			diag_error(d, loc_at(NULL, 0, 0), "%s: the compiled model failed (%s, status %d)", t->name, cmd,
				   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			rc = EXIT_RUN;
		}
		free(cmd);
		free(full);
		free(args);
	}
	if (rc == 0 && strstr(run->str, "{stats}")) {
		size_t len;
		char *text = read_file(stats_path, &len);
		if (text) {
			sim_stats = xrealloc(sim_stats, (size_t)(nsim_stats + 1) * sizeof *sim_stats);
			sim_stats[nsim_stats++] = text;
		}
	}
	for (int i = 0; rc == 0 && i < g->noutputs; i++) {
		const Value *v = g->outputs[i];
		outputs[i] = tensor_new(v->type.dtype, &v->type.shape);
		if (!read_raw(files[g->ninputs + i], outputs[i])) {
			diag_error(d, loc_at(files[g->ninputs + i], 0, 0), "cannot read the output");
			rc = EXIT_RUN;
		}
	}
out:
	for (int i = 0; i < g->ninputs + g->noutputs; i++) {
		if (files[i])
			remove(files[i]);
		free(files[i]);
	}
	free(files);
	remove(asm_path);
	remove(prog);
	char *log = xasprintf("%s/link.log", dir);
	remove(log);
	free(log);
	remove(stats_path);
	free(stats_path);
	rmdir(dir);
	free(dir);
	free(asm_path);
	free(prog);
	free(harness_path);
	program_free(p);
	return rc;
}

static Tensor *tensor_dup(const Tensor *t)
{
	Tensor *c = tensor_new(t->type.dtype, &t->type.shape);
	if (tensor_bytes(t))
		memcpy(c->data, t->data, tensor_bytes(t));
	return c;
}

/* Run a model on a target: directly, or placed on the target and its host
 * (each segment compiled for where it runs; the device's through its
 * simulator), passing the values between them. */
static int run_model(const Graph *g, const Target *t, Tensor *const *inputs, Tensor **outputs, Diag *d)
{
	const Target *host = place_host(t, host_name, d);
	if (diag_has_errors(d))
		return EXIT_INPUT;
	if (!host)
		return run_on_target(g, t, inputs, outputs, d);
	Placement *pl = place_graph(g, t, host, d);
	if (!pl)
		return EXIT_INPUT;
	Tensor **env = xcalloc((size_t)g->nvalues, sizeof *env);
	bool *owned = xcalloc((size_t)g->nvalues, sizeof *owned);
	for (int i = 0; i < g->ninputs; i++)
		env[g->inputs[i]->id] = inputs[i];
	collect_reports = report_path != NULL;
	int rc = 0;
	for (int k = 0; k < pl->nsegs && rc == 0; k++) {
		const Segment *s = &pl->segs[k];
		Tensor **sin = xcalloc((size_t)s->g->ninputs + 1, sizeof *sin);
		Tensor **sout = xcalloc((size_t)s->g->noutputs + 1, sizeof *sout);
		for (int i = 0; i < s->g->ninputs; i++)
			sin[i] = env[graph_find_value(g, s->g->inputs[i]->name)->id];
		rc = run_on_target(s->g, s->t, sin, sout, d);
		for (int i = 0; i < s->g->noutputs; i++) {
			int id = graph_find_value(g, s->g->outputs[i]->name)->id;
			if (rc == 0) {
				env[id] = sout[i];
				owned[id] = true;
			} else {
				tensor_free(sout[i]);
			}
		}
		free(sin);
		free(sout);
	}
	for (int i = 0; i < g->noutputs && rc == 0; i++) {
		const Value *v = g->outputs[i];
		if (env[v->id]) {
			outputs[i] = tensor_dup(env[v->id]);
		} else {
			/* a constant output */
			outputs[i] = tensor_new(v->type.dtype, &v->type.shape);
			if (!v->def || !materialize_constant(v->def, outputs[i], d))
				rc = EXIT_RUN;
		}
	}
	if (rc == 0 && report_path) {
		PlacedJob job = {pl, content_hash(g, t)};
		if (write_output(report_path, write_placed_report, &job) != 0)
			rc = EXIT_RUN;
	}
	collect_reports = false;
	collected_free();
	for (int i = 0; i < g->nvalues; i++)
		if (owned[i])
			tensor_free(env[i]);
	free(env);
	free(owned);
	placement_free(pl);
	return rc;
}

/* |got - want| <= atol + rtol |want| elementwise (docs/backend.md). */
enum { CHECK_ULP_NOTE = 0 };
static const double check_rtol = 1e-4, check_atol = 1e-5;

static bool compare(const char *name, const Tensor *got, const Tensor *want)
{
	double max_abs = 0, max_rel = 0;
	int64_t bad = 0, n = tensor_numel(want);
	for (int64_t i = 0; i < n; i++) {
		double g = tensor_get_f(got, i), w = tensor_get_f(want, i);
		if (g == w || (isnan(g) && isnan(w)))
			continue; /* equal, infinities and NaNs included */
		double err = fabs(g - w);
		if (isnan(g) != isnan(w) || isinf(w) || !(err <= check_atol + check_rtol * fabs(w)))
			bad++;
		if (err > max_abs)
			max_abs = err;
		if (w != 0 && err / fabs(w) > max_rel)
			max_rel = err / fabs(w);
	}
	printf("%s: max abs error %.3g, max rel error %.3g, %lld of %lld outside atol %g + rtol %g: %s\n", name, max_abs,
	       max_rel, (long long)bad, (long long)n, check_atol, check_rtol, bad ? "MISMATCH" : "ok");
	return bad == 0;
}

/* ---- gdcc run ------------------------------------------------------------ */
typedef struct {
	char *name;
	char *file;
} Binding;

static bool parse_binding(const char *arg, Binding *b)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || !eq[1])
		return false;
	b->name = xstrndup(arg, (size_t)(eq - arg));
	b->file = xstrdup(eq + 1);
	return true;
}

static void print_summary(const Value *v, const Tensor *t)
{
	char ty[160];
	type_str(&t->type, ty, sizeof ty);
	int64_t n = tensor_numel(t);
	double lo = INFINITY, hi = -INFINITY, sum = 0;
	for (int64_t i = 0; i < n; i++) {
		double x = tensor_get_f(t, i);
		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
		sum += x;
	}
	uint64_t h = XXH3_64bits(t->data, tensor_bytes(t));
	printf("%s : %s  min %.6g  max %.6g  mean %.6g  xxh3 %016llx\n", v->name, ty, n ? lo : 0, n ? hi : 0,
	       n ? sum / (double)n : 0, (unsigned long long)h);
	printf("  [");
	for (int64_t i = 0; i < n && i < 8; i++)
		printf("%s%.7g", i ? ", " : "", tensor_get_f(t, i));
	printf("%s]\n", n > 8 ? ", ..." : "");
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"input", required_argument, NULL, 'i'},
		{"output", required_argument, NULL, 'o'},
		{"output-dir", required_argument, NULL, 'D'},
		{"seed", required_argument, NULL, 's'},
		{"print", no_argument, NULL, 'p'},
		{"target", required_argument, NULL, 't'},
		{"check", no_argument, NULL, 'c'},
		{"report", required_argument, NULL, 'R'},
		{"vlen", required_argument, NULL, 'L'},
		{"onnx-test", required_argument, NULL, 'O'},
		{"host", required_argument, NULL, 'H'},
		{"param", required_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		LIMIT_OPTIONS,
		{0},
	};
	bool check = false;
	const char *onnx_test = NULL;
	Binding *ins = NULL, *outs = NULL;
	int nins = 0, nouts = 0, rc = 0;
	const char *outdir = NULL, *target = NULL;
	uint64_t seed = 0;
	bool print = false;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
		case 'o': {
			Binding b;
			if (!parse_binding(optarg, &b)) {
				rc = usage_error("expected NAME=FILE.npy, got '%s'", optarg);
				goto done;
			}
			Binding **v = c == 'i' ? &ins : &outs;
			int *n = c == 'i' ? &nins : &nouts;
			*v = xrealloc(*v, (size_t)(*n + 1) * sizeof **v);
			(*v)[(*n)++] = b;
			break;
		}
		case 'D': outdir = optarg; break;
		case 's': {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-') {
				rc = usage_error("--seed needs a non-negative integer, got '%s'", optarg);
				goto done;
			}
			seed = v;
			break;
		}
		case 'p': print = true; break;
		case 'c': check = true; break;
		case 'O': onnx_test = onnx_specialize_dir = optarg; break;
		case 'H': host_name = optarg; break;
		case 'M':
			if (!add_param_setting(optarg)) {
				rc = usage_error("--param needs NAME=VALUE, got '%s'", optarg);
				goto done;
			}
			break;
		case 'R': report_path = optarg; break;
		case 'L': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 32 || v > 65536 || (v & (v - 1))) {
				rc = usage_error("--vlen needs a power of two number of bits, got '%s'", optarg);
				goto done;
			}
			run_vlen = optarg;
			break;
		}
		case 't': target = optarg; break;
		case OPT_MAX_TENSOR:
		case OPT_MAX_WORKSPACE:
		case OPT_MAX_MODEL:
			if ((rc = limit_option(c, optarg)))
				goto done;
			break;
		case 'h': usage(stdout); goto done;
		case ':': rc = usage_error("option '%s' needs an argument", argv[optind - 1]); goto done;
		default: rc = usage_error("unknown option '%s'", argv[optind - 1]); goto done;
		}
	}
	if (optind >= argc) {
		rc = usage_error("run: no model given%s", "");
		goto done;
	}
	if (optind + 1 < argc) {
		rc = usage_error("run: more than one model given ('%s' too)", argv[optind + 1]);
		goto done;
	}
	const Target *tgt = NULL;
	if (target && !(tgt = target_lookup(target))) {
		rc = unknown_target(target);
		goto done;
	}
	if (nparam_settings && !tgt) {
		rc = usage_error("--param overrides a target's parameters: give -t TARGET%s", "");
		goto done;
	}
	if (nparam_settings && !(tgt = with_params(tgt))) {
		rc = EXIT_USAGE;
		goto done;
	}
	if (report_path && !tgt) {
		rc = usage_error("--report is the report of a compilation: give -t TARGET%s", "");
		goto done;
	}
	if (check && !tgt) {
		rc = usage_error("--check compares a target's results with the reference: give -t TARGET%s", "");
		goto done;
	}
	Diag d;
	diag_init(&d);
	Graph *g = load_and_verify(argv[optind], &d);
	if (!g) {
		rc = finish(&d, EXIT_INPUT);
		goto done;
	}
	Tensor **inputs = xcalloc(g->ninputs, sizeof *inputs);
	Tensor **outputs = xcalloc(g->noutputs, sizeof *outputs);
	char **outfile = xcalloc(g->noutputs, sizeof *outfile);
	bool ok = true;
	for (int i = 0; i < nins; i++) {
		Value *v = graph_find_input(g, ins[i].name);
		int k = 0;
		while (k < g->ninputs && g->inputs[k] != v)
			k++;
		if (k == g->ninputs) {
			diag_error(&d, loc_at(NULL, 0, 0), "--input %s: the model has no input named '%s'", ins[i].name, ins[i].name);
			ok = false;
			continue;
		}
		if (inputs[k]) {
			diag_error(&d, loc_at(NULL, 0, 0), "--input %s is given twice", ins[i].name);
			ok = false;
			continue;
		}
		size_t fl = strlen(ins[i].file);
		bool pb = fl > 3 && strcmp(ins[i].file + fl - 3, ".pb") == 0;
		if (!(inputs[k] = pb ? read_pb(ins[i].file, &d) : read_npy(ins[i].file, &d))) {
			ok = false;
			continue;
		}
		if (inputs[k]->type.dtype != v->type.dtype || !shape_eq(&inputs[k]->type.shape, &v->type.shape)) {
			char want[160], got[160];
			type_str(&v->type, want, sizeof want);
			type_str(&inputs[k]->type, got, sizeof got);
			diag_error(&d, loc_at(ins[i].file, 0, 0), "holds %s but input '%s' is %s", got, v->name, want);
			ok = false;
		}
	}
	for (int i = 0; i < nouts; i++) {
		Value *v = graph_find_output(g, outs[i].name);
		int k = 0;
		while (k < g->noutputs && g->outputs[k] != v)
			k++;
		if (k == g->noutputs) {
			diag_error(&d, loc_at(NULL, 0, 0), "--output %s: the model has no output named '%s'", outs[i].name, outs[i].name);
			ok = false;
		} else if (outfile[k]) {
			diag_error(&d, loc_at(NULL, 0, 0), "--output %s is given twice", outs[i].name);
			ok = false;
		} else {
			outfile[k] = xstrdup(outs[i].file);
		}
	}
	for (int k = 0; onnx_test && ok && k < g->ninputs; k++) {
		if (inputs[k])
			continue;
		int origin = g->input_origin ? g->input_origin[k] : k;
		char *path = xasprintf("%s/input_%d.pb", onnx_test, origin);
		inputs[k] = read_pb(path, &d);
		const Value *v = g->inputs[k];
		if (!inputs[k]) {
			ok = false;
		} else if (inputs[k]->type.dtype != v->type.dtype || !shape_eq(&inputs[k]->type.shape, &v->type.shape)) {
			char want[160], got[160];
			type_str(&v->type, want, sizeof want);
			type_str(&inputs[k]->type, got, sizeof got);
			diag_error(&d, loc_at(path, 0, 0), "holds %s but input '%s' is %s", got, v->name, want);
			ok = false;
		}
		free(path);
	}
	for (int k = 0; outdir && k < g->noutputs; k++)
		if (!outfile[k])
			outfile[k] = xasprintf("%s/%s.npy", outdir, g->outputs[k]->name);
	if (!ok) {
		rc = EXIT_INPUT;
		goto out;
	}
	for (int k = 0; k < g->ninputs; k++)
		if (!inputs[k]) {
			const Value *v = g->inputs[k];
			inputs[k] = tensor_new(v->type.dtype, &v->type.shape);
			fill_random_input(inputs[k], rng_derive(seed, (uint64_t)k));
		}
	if (tgt) {
		int st = run_model(g, tgt, inputs, outputs, &d);
		if (st) {
			rc = st;
			goto out;
		}
		if (check) {
			Tensor **ref = xcalloc(g->noutputs, sizeof *ref);
			if (!interp_run(g, inputs, ref, &d)) {
				rc = EXIT_RUN;
			} else {
				for (int k = 0; k < g->noutputs; k++)
					if (!compare(g->outputs[k]->name, outputs[k], ref[k]))
						rc = EXIT_MISMATCH;
			}
			for (int k = 0; k < g->noutputs; k++)
				tensor_free(ref[k]);
			free(ref);
			if (rc)
				goto out;
		}
	} else if (!interp_run(g, inputs, outputs, &d)) {
		rc = EXIT_RUN;
		goto out;
	}
	for (int k = 0; onnx_test && k < g->noutputs; k++) {
		/* ONNX's rule: same dtype and shape, |out - ref| <= 1e-7 + 1e-3 |ref| */
		char *path = xasprintf("%s/output_%d.pb", onnx_test, k);
		Tensor *ref = read_pb(path, &d);
		if (!ref) {
			rc = EXIT_RUN;
		} else if (ref->type.dtype != outputs[k]->type.dtype || !shape_eq(&ref->type.shape, &outputs[k]->type.shape)) {
			char want[160], got[160];
			type_str(&ref->type, want, sizeof want);
			type_str(&outputs[k]->type, got, sizeof got);
			printf("%s: %s, expected %s: MISMATCH\n", g->outputs[k]->name, got, want);
			rc = EXIT_MISMATCH;
		} else {
			int64_t bad = 0, n = tensor_numel(ref);
			double worst = 0;
			for (int64_t i = 0; i < n; i++) {
				double x = tensor_get_f(outputs[k], i), r = tensor_get_f(ref, i);
				if (x == r || (isnan(x) && isnan(r)))
					continue;
				double e = fabs(x - r);
				if (!(e <= 1e-7 + 1e-3 * fabs(r)))
					bad++;
				if (e > worst)
					worst = e;
			}
			printf("%s: max abs error %.3g, %lld of %lld outside 1e-7 + 1e-3 |ref| (ONNX): %s\n", g->outputs[k]->name,
			       worst, (long long)bad, (long long)n, bad ? "MISMATCH" : "ok");
			if (bad)
				rc = EXIT_MISMATCH;
		}
		tensor_free(ref);
		free(path);
	}
	for (int k = 0; k < g->noutputs; k++) {
		if (print || (!outfile[k] && !outdir && nouts == 0 && !check && !onnx_test))
			print_summary(g->outputs[k], outputs[k]);
		if (!outfile[k] || rc)
			continue;
		/* staged: all of them are put in place when the command succeeds */
		const char *to = stage_file(outfile[k], &rc);
		char *err = NULL;
		if (to && !npy_write(to, outputs[k], &err)) {
			diag_error(&d, loc_at(outfile[k], 0, 0), "%s", err);
			free(err);
			rc = EXIT_RUN;
		}
	}
out:
	for (int k = 0; k < g->ninputs; k++)
		tensor_free(inputs[k]);
	for (int k = 0; k < g->noutputs; k++) {
		tensor_free(outputs[k]);
		free(outfile[k]);
	}
	free(inputs);
	free(outputs);
	free(outfile);
	graph_free(g);
	rc = finish(&d, rc);
done:
	for (int i = 0; i < nins; i++)
		free(ins[i].name), free(ins[i].file);
	for (int i = 0; i < nouts; i++)
		free(outs[i].name), free(outs[i].file);
	free(ins);
	free(outs);
	return rc;
}

typedef struct {
	const Graph *g;
	const char *source;
} ImportJob;

static void write_import(FILE *out, const void *ctx)
{
	const ImportJob *j = ctx;
	import_print_header(out, j->source, j->g);
	print_graph(out, j->g);
}

static int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		LIMIT_OPTIONS,
		{0},
	};
	const char *out = NULL;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return 0;
		case OPT_MAX_TENSOR:
		case OPT_MAX_WORKSPACE:
		case OPT_MAX_MODEL:
			if (limit_option(c, optarg))
				return EXIT_USAGE;
			break;
		case ':': return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("import: no model given%s", "");
	if (optind + 1 < argc)
		return usage_error("import: more than one model given ('%s' too)", argv[optind + 1]);
	const char *path = argv[optind];
	if (!onnx_is_model(path))
		return usage_error("import: '%s' is not a .onnx file", path);
	if (out && strcmp(out, "-") == 0)
		out = NULL;
	Diag d;
	diag_init(&d);
	Graph *g = load_and_verify(path, &d);
	if (!g)
		return finish(&d, EXIT_INPUT);
	/* The weights are written into a staging folder beside the output, then
	 * committed with it (renamed beside it): all of them or none.  An output
	 * that is not a regular file (a device, a FIFO) has nowhere to put them. */
	ImportLog log = {0};
	char *err = NULL, *sdir = NULL, *sout = NULL, *odir = NULL, *obase = NULL;
	int rc = 0;
	struct stat ost;
	if (out && stat(out, &ost) == 0 && S_ISDIR(ost.st_mode)) {
		errorf("cannot write '%s': %s", out, strerror(EISDIR));
		rc = EXIT_RUN;
	} else if (out && !(stat(out, &ost) == 0 && !S_ISREG(ost.st_mode))) {
		split_path(out, &odir, &obase);
		sdir = xasprintf("%s/.gdcc-import-XXXXXX", odir);
		if (!mkdtemp(sdir)) {
			errorf("cannot create '%s': %s", out, strerror(errno));
			rc = EXIT_RUN;
		} else {
			stage_rmdir(sdir);
			sout = xasprintf("%s/%s", sdir, obase);
		}
	}
	if (rc) {
		/* (the message is out) */
	} else if (!import_externalize(g, sout, &log, &err)) {
		diag_error(&d, loc_at(path, 0, 0), "%s", err);
		free(err);
		import_log_remove_files(&log);
		rc = EXIT_INPUT;
	} else {
		for (int i = 0; rc == 0 && i < log.nfiles; i++) {
			const char *slash = strrchr(log.files[i], '/');
			char *final = xasprintf("%s/%s", odir, slash ? slash + 1 : log.files[i]);
			if (!stage(final, false, log.files[i], &rc))
				import_log_remove_files(&log);
			free(final);
		}
		ImportJob job = {g, path};
		if (rc == 0)
			rc = write_output(out, write_import, &job);
	}
	import_log_free(&log);
	free(sdir);
	free(sout);
	free(odir);
	free(obase);
	graph_free(g);
	return finish(&d, rc);
}

int main(int argc, char **argv)
{
	int rc = limits_from_environment();
	if (rc)
		return rc;
	if (argc > 1 && strcmp(argv[1], "import") == 0)
		rc = cmd_import(argc - 1, argv + 1);
	else if (argc > 1 && strcmp(argv[1], "run") == 0)
		rc = cmd_run(argc - 1, argv + 1);
	else if (argc > 1 && strcmp(argv[1], "reduce") == 0)
		rc = cmd_reduce(argv[0], argc - 1, argv + 1);
	else
		rc = cmd_check(argc, argv);
	/* every output file, or none */
	if (rc == 0)
		rc = outputs_commit();
	else
		outputs_abort();
	if (param_target)
		target_copy_free(param_target);
	free(param_settings);
	return rc;
}
