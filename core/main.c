/* The gdcc driver: parses the command line, runs the pipeline stages in
 * order and reports errors once, at the top.
 *
 *   gdcc [--emit=ir] [-o FILE] [-t TARGET] MODEL     check a model
 *   gdcc run MODEL [--input N=F.npy]... [--output N=F.npy]... [--seed N]
 *
 * Exit status: 0 success, 1 invalid input (model, .npy), 2 bad command
 * line, 3 failure while running (a kernel error, an unwritable file). */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
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
#include "compile.h"
#include "driver.h"
#include "frontend.h"
#include "gdcc_limits.h"
#include "interp.h"
#include "legality.h"
#include "npy.h"
#include "import.h"
#include "onnx.h"
#include "ops.h"
#include "npusim.h"
#include "pipeline.h"
#include "shard.h"
#include "profile.h"
#include "place.h"
#include "printer.h"
#include "reduce.h"
#include "rng.h"
#include "run.h"
#include "hostcpu.h"
#include "target.h"
#include "util.h"
#include "verify.h"


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
	      "                       manifest to FILE.json, the weights to FILE without .s\n"
	      "                       plus .weights.bin, which the assembly names by its\n"
	      "                       absolute path)\n"
	      "  -c                   compile and assemble (the .md's assembler): an object\n"
	      "                       file to -o FILE (default: MODEL's name with .o)\n"
	      "      --weights=inline|FILE  with -S: the constant data inline in the\n"
	      "                       assembly, or in FILE\n"
	      "      --header=FILE    with -S or -c: a C header declaring the entry point, the\n"
	      "                       inputs' and outputs' shapes and a typed wrapper\n"
	      "                       (docs/c-api.md)\n"
	      "      --entry=NAME     the entry function's name (default gdcc_entry)\n"
	      "      --bind NAME=FILE.npy  an ONNX model specialized to this value of its\n"
	      "                       input NAME (an integer input that decides a shape)\n"
	      "      --emit=STAGE     print a stage: ir (the verified graph in model.ir syntax),\n"
	      "                       sharding (every value's sharding over the mesh and the\n"
	      "                       collectives, with their bytes),\n"
	      "                       legality (each node's decision on the -t target),\n"
	      "                       placement (which nodes run on the target, which on its\n"
	      "                       host, and the transfers), loops (the Loop IR), mir\n"
	      "                       (instructions after allocation)\n"
	      "      --mesh NAME=SIZE,...  a device mesh for the model (as model.ir's 'mesh')\n"
	      "      --shard NAME=[AXIS,...]  a value split over mesh axes (_: whole), as\n"
	      "                       model.ir's 'shard'\n"
	      "      --parallel=data|tensor|pipeline|auto --devices N  a strategy: the\n"
	      "                       inputs split by batch, the weights split Megatron-style\n"
	      "                       (column then row parallel), N stages of consecutive\n"
	      "                       layers, or (auto, with -t) the one the cost model finds\n"
	      "                       fastest\n"
	      "      --micro-batches M  a pipeline's batch in M micro-batches, the stages\n"
	      "                       working on consecutive ones at once\n"
	      "      --link-gbps G, --link-latency-us L  the links between devices for the\n"
	      "                       cost model (default 100 Gb/s, 5 us)\n"
	      "      --host=TARGET    where a target's fallback nodes run (default: the .md's\n"
	      "                       param host, e.g. x86-avx2 for npu-systolic)\n"
	      "      --param NAME=VALUE  override a parameter of the -t target's .md (e.g.\n"
	      "                       array_rows=32); also for run\n"
	      "      --report=FILE    with -S (or run -t): the compilation report as JSON\n"
	      "  -O0, -O1, -O2        optimization: -O0 none, -O1 the graph rewrites that compute\n"
	      "                       the same operations and memory reuse, -O2 (default) also\n"
	      "                       those that change the arithmetic within the tolerance\n"
	      "                       (batchnorm folding, matmul + bias as gemm, exported GELU)\n"
	      "                       and fusion grouping (also for run)\n"
	      "      --print-after=PASS  dump to stderr after PASS (graph passes: model.ir;\n"
	      "                       legalize, plan-memory, lower, select, allocate, emit:\n"
	      "                       their own dumps); 'all': after every pass\n"
	      "      --disable-pass=NAME  skip a graph pass (plan-memory: one slot per value)\n"
	      "      --verify-each    verify the IR after every pass (on in checking builds)\n"
	      "      --list-passes    list the pipeline's passes in order\n"
	      "      --list-ops       list the op table: operands, results, attributes\n"
	      "      --list-targets   list the targets this build knows, and how each one's code\n"
	      "                       runs here (native, qemu, simulator, or why not);\n"
	      "                       -t native: the widest native one this CPU runs\n"
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
	      "      --input NAME=FILE.npy   value of input NAME (others are generated from the seed);\n"
	      "                              an ONNX model's integer inputs are specialized to it\n"
	      "      --output NAME=FILE.npy  write output NAME to FILE\n"
	      "      --output-dir DIR        write every output not named by --output to DIR/NAME.npy\n"
	      "      --seed N                seed for generated inputs (default 0)\n"
	      "      --print                 print a summary and the leading values of each output\n"
	      "      -t TARGET               compile for TARGET, assemble, link and run there\n"
	      "      --check                 with -t: also run the reference and compare\n"
	      "      --vlen N                with a scalable-vector target: run at VLEN N bits\n"
	      "      --profile[=FILE]        with -t: time each kernel (a build with each kernel its\n"
	      "                              own function); print a table, FILE gets it as JSON\n"
	      "                              (- for stdout, the table then on stderr; docs/profile.md)\n"
	      "      --profile-runs N        timed repetitions, the median reported (default 5)\n"
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

/* The option getopt_long just rejected: a short one by its letter (in
 * "-SX" or "-X value" argv[optind - 1] is not it), a long one as written. */
static const char *rejected_option(char **argv)
{
	static char shortopt[3];
	if (optopt > 0 && optopt < 0x80) {
		shortopt[0] = '-';
		shortopt[1] = (char)optopt;
		return shortopt;
	}
	return argv[optind - 1];
}

/* Print a sink's messages (diag_print escapes what they quote). */
static void print_diags(Diag *d)
{
	diag_print(d, stderr);
}


/* ---- the pass manager's options ---------------------------------------------------
 * -O0/-O1/-O2, --print-after=PASS, --disable-pass=NAME, --verify-each: the
 * same for -S and run. */
enum { OPT_VERIFY_EACH = 0x180, OPT_DISABLE_PASS, OPT_LIST_PASSES, OPT_ONNX_TEST, OPT_PROFILE, OPT_PROFILE_RUNS };
#define PASS_OPTIONS \
	{"print-after", required_argument, NULL, 'A'}, \
	{"verify-each", no_argument, NULL, OPT_VERIFY_EACH}, \
	{"disable-pass", required_argument, NULL, OPT_DISABLE_PASS}, \
	{"list-passes", no_argument, NULL, OPT_LIST_PASSES}

/* A pass option (c one of 'O', 'A', OPT_*): 0, or EXIT_USAGE after the
 * message; -1 when c is not one. */
static int pass_option(Options *o, int c, const char *arg)
{
	char *err;
	switch (c) {
	case 'O':
		if (strcmp(arg, "0") != 0 && strcmp(arg, "1") != 0 && strcmp(arg, "2") != 0)
			return usage_error("-O%s: the optimization levels are -O0, -O1 and -O2", arg);
		o->opt_level = arg[0] - '0';
		return 0;
	case 'A':
	case OPT_DISABLE_PASS:
		if ((err = pipeline_unknown_pass(arg, c == 'A'))) {
			usage_error("%s%s: %s", c == 'A' ? "--print-after=" : "--disable-pass=", arg, err);
			free(err);
			return EXIT_USAGE;
		}
		if (c == 'A' && strcmp(arg, "all") == 0) {
			o->print_all = true;
		} else if (c == 'A') {
			o->print_after = xrealloc(o->print_after, (size_t)(o->nprint_after + 1) * sizeof *o->print_after);
			o->print_after[o->nprint_after++] = arg;
		} else {
			o->disabled = xrealloc(o->disabled, (size_t)(o->ndisabled + 1) * sizeof *o->disabled);
			o->disabled[o->ndisabled++] = arg;
		}
		return 0;
	case OPT_VERIFY_EACH: o->verify_each = true; return 0;
	default: return -1;
	}
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
enum { OPT_MESH = 0x1c0, OPT_SHARD, OPT_PARALLEL, OPT_DEVICES, OPT_LINK_GBPS, OPT_LINK_LATENCY, OPT_MICRO_BATCHES };
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
		printf("%-18s in %-4s out %-4s %s%s\n", o->name, in, out, o->summary,
		       o->shard == SHARD_COLLECTIVE ? " [collective: inserted by the sharding pass]" : "");
		for (const AttrSpec *s = o->attrs; s->name; s++)
			printf("%-18s   %s: %s%s\n", "", s->name, attr_kind_name(s->kind), s->required ? " (required)" : "");
	}
}



/* ---- reading inputs ------------------------------------------------------------ */

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

/* The model at path (model.ir text, or .onnx: with run --onnx-test DIR its
 * integer inputs become constants from DIR's test data). */
static Graph *read_model(const char *path, Options *o, Diag *d)
{
	if (onnx_is_model(path)) {
		int fd = open_whole(path, "model", false, d);
		if (fd < 0)
			return NULL;
		close(fd);
		return onnx_load_bound(path, o->onnx_test, o->binds, o->nbinds, d);
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

/* A TensorProto input (read whole: a regular file within --max-model-bytes),
 * or part of a sequence or optional (onnx_load_part). */
static Tensor *read_pb_part(const char *path, int part, Diag *d)
{
	int fd = open_whole(path, "input", false, d);
	if (fd < 0)
		return NULL;
	close(fd);
	char *err = NULL;
	Tensor *t = onnx_load_part(path, part, &err);
	if (!t) {
		diag_error(d, loc_at(path, 0, 0), "%s", err);
		free(err);
	}
	return t;
}

static Tensor *read_pb(const char *path, Diag *d)
{
	return read_pb_part(path, ONNX_WHOLE, d);
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

/* Add a binding NAME=FILE (.npy or .pb) to o's; false after the message
 * (into d). */
static bool add_binding(Options *o, const char *name, const char *file, Diag *d)
{
	size_t fl = strlen(file);
	bool pb = fl > 3 && strcmp(file + fl - 3, ".pb") == 0;
	Tensor *t = pb ? read_pb(file, d) : read_npy(file, d);
	if (!t)
		return false;
	for (int i = 0; i < o->nbinds; i++)
		if (strcmp(o->binds[i].name, name) == 0) {
			diag_error(d, loc_at(NULL, 0, 0), "--bind %s is given twice", name);
			tensor_free(t);
			return false;
		}
	o->binds = xrealloc(o->binds, (size_t)(o->nbinds + 1) * sizeof *o->binds);
	o->binds[o->nbinds++] = (OnnxBinding){xstrdup(name), t, false};
	return true;
}

/* Check the model; NULL after reporting the errors into d. */
static Graph *load_and_verify(const char *path, Options *o, Diag *d)
{
	double t0 = now_seconds();
	o->model_loc = loc_at(path, 0, 0);
	if (o->nbinds && !onnx_is_model(path)) {
		diag_error(d, loc_at(path, 0, 0), "--bind specializes an ONNX model's inputs; a model.ir's shapes are already static");
		return NULL;
	}
	Graph *g = read_model(path, o, d);
	if (g)
		o->model_loc = g->loc;
	if (g && !graph_verify(g, d)) {
		graph_free(g);
		g = NULL;
	}
	o->front_seconds[0] = now_seconds() - t0;
	return g;
}

static int finish(Diag *d, int status)
{
	print_diags(d);
	diag_free(d);
	return status;
}


static void write_ir(FILE *out, const void *g) { print_graph(out, g); }

typedef struct {
	Graph *g;
	ShardReport r;
} ShardJob;

static void write_sharding(FILE *out, const void *ctx)
{
	const ShardJob *j = ctx;
	shard_print(out, j->g, &j->r);
}

static LinkModel link_model(const Options *o)
{
	return (LinkModel){o->link_gbps > 0 ? o->link_gbps : 100, o->link_latency_us > 0 ? o->link_latency_us : 5};
}

/* --parallel=auto: each strategy applied to a fresh copy of the model
 * (read again), propagated and estimated on t; the fastest one's, and the
 * table of all into o->auto_table.  PARALLEL_NONE after an error. */
static Parallel choose_strategy(const char *path, Options *o, const Target *t, Diag *d)
{
	static const char *const names[] = {[PARALLEL_DATA] = "data", [PARALLEL_TENSOR] = "tensor",
					     [PARALLEL_PIPELINE] = "pipeline"};
	if (!t) {
		diag_error(d, loc_at(NULL, 0, 0), "--parallel=auto chooses by the target's cost model: give -t TARGET");
		return PARALLEL_NONE;
	}
	LinkModel l = link_model(o);
	Parallel best = PARALLEL_NONE;
	double best_s = 0;
	size_t cap = 1024, len = 0;
	char *tab = xmalloc(cap);
	len += (size_t)snprintf(tab, cap, "# --parallel=auto on %d devices, estimated on %s (links %g Gb/s, %g us):\n",
				o->devices, t->name, l.gbps, l.latency_us);
	for (Parallel p = PARALLEL_DATA; p <= PARALLEL_PIPELINE; p++) {
		Diag scratch;
		diag_init(&scratch);
		Graph *h = load_and_verify(path, o, &scratch);
		ShardReport r = {.target = t, .link = l};
		ShardEstimate e;
		bool ok = h && shard_apply_strategy(h, p, o->devices, &scratch) && shard_resolve(h, &scratch) &&
			  shard_propagate(h, &r, &scratch) && shard_estimate(h, t, &l, &e);
		char line[256];
		if (ok)
			snprintf(line, sizeof line, "#   %-8s compute %9.3f ms, communication %9.3f ms, step %9.3f ms\n", names[p],
				 e.compute_s * 1e3, e.comm_s * 1e3, e.step_s * 1e3);
		else
			snprintf(line, sizeof line, "#   %-8s not applicable here\n", names[p]);
		if (len + strlen(line) + 1 > cap)
			tab = xrealloc(tab, cap = 2 * (len + strlen(line) + 1));
		strcpy(tab + len, line);
		len += strlen(line);
		if (ok && (best == PARALLEL_NONE || e.step_s < best_s)) {
			best = p;
			best_s = e.step_s;
		}
		shard_report_free(&r);
		graph_free(h);
		diag_free(&scratch);
	}
	/* per layer group: 4 groups of about equal work, each data- or
	 * tensor-parallel; greedily, group by group, from all data */
	enum { G = 4 };
	bool modes[G] = {false}, best_modes[G] = {false};
	double mixed_s = -1;
	for (int q = -1; q < G; q++) {
		bool trial[G];
		memcpy(trial, best_modes, sizeof trial);
		if (q >= 0)
			trial[q] = true;
		Diag scratch;
		diag_init(&scratch);
		Graph *h = load_and_verify(path, o, &scratch);
		ShardReport r = {.target = t, .link = l};
		ShardEstimate e;
		if (h && shard_apply_groups(h, trial, G, o->devices, &scratch) && shard_resolve(h, &scratch) &&
		    shard_propagate(h, &r, &scratch) && shard_estimate(h, t, &l, &e) && (mixed_s < 0 || e.step_s < mixed_s)) {
			mixed_s = e.step_s;
			memcpy(best_modes, trial, sizeof trial);
		}
		shard_report_free(&r);
		graph_free(h);
		diag_free(&scratch);
	}
	(void)modes;
	if (mixed_s >= 0) {
		char line[256];
		snprintf(line, sizeof line, "#   per layer group (%s, %s, %s, %s): step %9.3f ms\n", best_modes[0] ? "tensor" : "data",
			 best_modes[1] ? "tensor" : "data", best_modes[2] ? "tensor" : "data", best_modes[3] ? "tensor" : "data",
			 mixed_s * 1e3);
		if (len + strlen(line) + 1 > cap)
			tab = xrealloc(tab, cap = 2 * (len + strlen(line) + 1));
		strcpy(tab + len, line);
		len += strlen(line);
	}
	o->auto_ngroups = 0;
	if (mixed_s >= 0 && (best == PARALLEL_NONE || mixed_s < best_s * 0.99)) {
		memcpy(o->auto_tensor, best_modes, sizeof best_modes);
		o->auto_ngroups = G;
		best = PARALLEL_AUTO;
	}
	if (best == PARALLEL_NONE) {
		diag_error(d, loc_at(NULL, 0, 0), "--parallel=auto: no strategy applies to this model");
		free(tab);
		return best;
	}
	char line[128];
	snprintf(line, sizeof line, "# chosen: %s (the shortest estimated step)\n",
		 best == PARALLEL_AUTO ? "per layer group" : names[best]);
	tab = xrealloc(tab, len + strlen(line) + 1);
	strcpy(tab + len, line);
	free(o->auto_table);
	o->auto_table = tab;
	return best;
}

/* The command line's mesh, shardings or strategy, then every annotation
 * checked against the typed graph. */
static bool apply_sharding(Graph *g, const char *path, Options *o, const Target *t, Diag *d)
{
	if (o->mesh_text && !shard_mesh_from_text(g, o->mesh_text, d))
		return false;
	for (int i = 0; i < o->nshard_texts; i++)
		if (!shard_annot_from_text(g, o->shard_texts[i], d))
			return false;
	Parallel p = (Parallel)o->parallel;
	if (p == PARALLEL_AUTO && (p = choose_strategy(path, o, t, d)) == PARALLEL_NONE)
		return false;
	if (p == PARALLEL_AUTO) {
		if (!shard_apply_groups(g, o->auto_tensor, o->auto_ngroups, o->devices, d))
			return false;
	} else if (p && !shard_apply_strategy(g, p, o->devices, d)) {
		return false;
	}
	if (o->micro_batches > 1 && !shard_set_micro_batches(g, o->micro_batches, d))
		return false;
	return shard_resolve(g, d);
}

static bool compiles_anything(bool assemble, bool object, const char *emit)
{
	return assemble || object || (emit && strcmp(emit, "ir") != 0 && strcmp(emit, "sharding") != 0);
}

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

/* --param NAME=VALUE: the target's .md params overridden (compile and run) */
static int add_param_setting(Options *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return 0;
	o->param_settings = xrealloc(o->param_settings, (size_t)(o->nparam_settings + 1) * sizeof *o->param_settings);
	o->param_settings[o->nparam_settings++] = arg;
	return 1;
}

/* t with the --param overrides, or t; NULL after the message (a bad
 * command line: a param the target does not have, a bad value). */
static const Target *with_params(Options *o, const Target *t)
{
	if (!t || !o->nparam_settings)
		return t;
	for (int i = 0; i < o->nparam_settings; i++) {
		const char *eq = strchr(o->param_settings[i], '=');
		char *name = xstrndup(o->param_settings[i], (size_t)(eq - o->param_settings[i]));
		bool known = target_param(t, name) != NULL;
		if (!known) {
			char *list = xstrdup("");
			for (int k = 0; k < t->nparams; k++) {
				char *l = xasprintf("%s%s%s", list, k ? ", " : "", t->params[k].name);
				free(list);
				list = l;
			}
			usage_error("--param %s: target '%s' has no param '%s' (%s%s)", o->param_settings[i], t->name, name,
				    t->nparams ? "its params: " : "it has none", list);
			free(list);
			free(name);
			return NULL;
		}
		free(name);
	}
	Diag d;
	diag_init(&d);
	Target *pt = target_with_params(t, o->nparam_settings, o->param_settings, &d);
	o->param_target = pt;
	/* (the overrides stay what the target's strategies accept: mdgen checked the .md) */
	if (pt && !target_check_strategy_params(pt, &d))
		pt = NULL;
	/* (the simulator's library names itself in these: gdcc says them) */
	for (int i = 0; i < d.n; i++)
		if (d.entries[i].loc.file && strcmp(d.entries[i].loc.file, "npusim") == 0)
			d.entries[i].loc.file = NULL;
	print_diags(&d);
	diag_free(&d);
	return pt;
}

/* The targets, with how their code runs here (native, under qemu, in the
 * simulator, or why not) and which one -t native picks. */
static void list_targets(void)
{
	printf("%-16s %-34s %-22s %-20s %-34s %s\n", "target", "isa", "vector", "dtypes", "runs here", "description");
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
		char why[200], here[240];
		bool ok = target_runs_here(t, why, sizeof why);
		snprintf(here, sizeof here, "%s%s%s", ok ? target_runs_on(t) : "no: ", ok ? "" : why,
			 ok && t == target_native() ? " (-t native)" : "");
		printf("%-16s %-34s %-22s %-20s %-34s %s%s%s\n", t->name, t->isa, vec, dts, here, t->md_file,
		       t->parent ? ", extends " : "", t->parent ? t->parent : "");
	}
}

/* A target by name; "native": the native target with the widest vectors
 * that runs here. */
static const Target *lookup_target(const char *name)
{
	return strcmp(name, "native") == 0 ? target_native() : target_lookup(name);
}

static int unknown_target(const char *name)
{
	if (strcmp(name, "native") == 0) {
		fprintf(stderr, "gdcc: error: -t native: no target's code runs natively on this machine (see gdcc --list-targets)\n");
		return EXIT_USAGE;
	}
	fprintf(stderr, "gdcc: error: unknown target '%s' (known:", name);
	for (int i = 0; i < gdcc_ntargets; i++)
		fprintf(stderr, " %s", gdcc_targets[i]->name);
	fprintf(stderr, "%s)\ngdcc: try 'gdcc --list-targets'\n", gdcc_ntargets ? "" : " none");
	return EXIT_USAGE;
}

/* --mesh, --shard, --parallel, --devices into o: 0, or a usage error's status. */
static int shard_option(Options *o, int c, const char *arg)
{
	switch (c) {
	case OPT_MESH: o->mesh_text = arg; break;
	case OPT_SHARD:
		o->shard_texts = xrealloc(o->shard_texts, (size_t)(o->nshard_texts + 1) * sizeof *o->shard_texts);
		o->shard_texts[o->nshard_texts++] = arg;
		break;
	case OPT_PARALLEL:
		if (strcmp(arg, "data") == 0)
			o->parallel = PARALLEL_DATA;
		else if (strcmp(arg, "tensor") == 0)
			o->parallel = PARALLEL_TENSOR;
		else if (strcmp(arg, "pipeline") == 0)
			o->parallel = PARALLEL_PIPELINE;
		else if (strcmp(arg, "auto") == 0)
			o->parallel = PARALLEL_AUTO;
		else
			return usage_error("unknown --parallel '%s' (known: data, tensor, pipeline, auto)", arg);
		break;
	case OPT_LINK_GBPS:
	case OPT_LINK_LATENCY: {
		char *end;
		double v = strtod(arg, &end);
		if (*end || end == arg || !(v > 0) || v > 1e9)
			return usage_error("--%s needs a positive number, got '%s'",
					   c == OPT_LINK_GBPS ? "link-gbps" : "link-latency-us", arg);
		if (c == OPT_LINK_GBPS)
			o->link_gbps = v;
		else
			o->link_latency_us = v;
		break;
	}
	default: { /* OPT_DEVICES, OPT_MICRO_BATCHES */
		char *end;
		long v = strtol(arg, &end, 10);
		const char *what = c == OPT_DEVICES ? "devices" : "micro-batches";
		if (*end || end == arg || v < 1 || v > 65536)
			return usage_error("--%s needs a count from 1 to 65536, got '%s'", what, arg);
		if (c == OPT_DEVICES)
			o->devices = (int)v;
		else
			o->micro_batches = (int)v;
		break;
	}
	}
	return 0;
}

/* The combinations of those that make sense: 0, or a usage error's status. */
static int shard_options_check(const Options *o)
{
	if (o->parallel && !o->devices)
		return usage_error("--parallel needs --devices N%s", "");
	if (o->devices && !o->parallel)
		return usage_error("--devices goes with --parallel=data|tensor|pipeline (or declare a mesh: --mesh)%s", "");
	if (o->parallel && (o->mesh_text || o->nshard_texts))
		return usage_error("--parallel chooses the mesh and the shardings: not with --mesh or --shard%s", "");
	if (o->nshard_texts && !o->mesh_text)
		return usage_error("--shard needs a mesh: --mesh NAME=SIZE,...%s", "");
	if (o->micro_batches && o->parallel != PARALLEL_PIPELINE)
		return usage_error("--micro-batches goes with --parallel=pipeline%s", "");
	return 0;
}

static int check_with(Options *o, int argc, char **argv)
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
		{"host", required_argument, NULL, 'H'},
		{"param", required_argument, NULL, 'M'},
		{"weights", required_argument, NULL, 'W'},
		{"header", required_argument, NULL, 'I'},
		{"entry", required_argument, NULL, 'E'},
		{"bind", required_argument, NULL, 'B'},
		{"mesh", required_argument, NULL, OPT_MESH},
		{"shard", required_argument, NULL, OPT_SHARD},
		{"parallel", required_argument, NULL, OPT_PARALLEL},
		{"devices", required_argument, NULL, OPT_DEVICES},
		{"link-gbps", required_argument, NULL, OPT_LINK_GBPS},
		{"link-latency-us", required_argument, NULL, OPT_LINK_LATENCY},
		{"micro-batches", required_argument, NULL, OPT_MICRO_BATCHES},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		LIMIT_OPTIONS,
		PASS_OPTIONS,
		{0},
	};
	const char *out = NULL, *emit = NULL, *target_name = NULL, *format = NULL;
	bool print_legality = false, assemble = false, object = false, entry_given = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:t:O::hVSc", opts, NULL)) != -1) {
		int pr = pass_option(o, c, c == 'O' && !optarg ? "1" : optarg);
		if (pr >= 0) {
			if (pr > 0)
				return pr;
			continue;
		}
		switch (c) {
		case 'o': out = optarg; break;
		case 't': target_name = optarg; break;
		case 'S': assemble = true; break;
		case 'c': object = true; break;
		case 'W':
			if (!*optarg)
				return usage_error("--weights needs 'inline' or a file name%s", "");
			o->weights = optarg;
			break;
		case 'I':
			if (!*optarg)
				return usage_error("--header needs a file name%s", "");
			o->header_path = optarg;
			break;
		case 'E': {
			bool id = (isalpha((unsigned char)optarg[0]) || optarg[0] == '_');
			for (const char *q = optarg; id && *q; q++)
				id = isalnum((unsigned char)*q) || *q == '_';
			if (!id)
				return usage_error("--entry=%s: the entry function's name must be a C identifier", optarg);
			o->entry = optarg;
			entry_given = true;
			break;
		}
		case 'R': o->report_path = optarg; break;
		case 'H': o->host_name = optarg; break;
		case 'M':
			if (!add_param_setting(o, optarg))
				return usage_error("--param needs NAME=VALUE, got '%s'", optarg);
			break;
		case 'B': {
			const char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !eq[1])
				return usage_error("--bind needs NAME=FILE.npy, got '%s'", optarg);
			char *name = xstrndup(optarg, (size_t)(eq - optarg));
			Diag bd;
			diag_init(&bd);
			bool ok = add_binding(o, name, eq + 1, &bd);
			free(name);
			if (!ok)
				return finish(&bd, EXIT_INPUT);
			diag_free(&bd);
			break;
		}
		case 'e':
			if (strcmp(optarg, "ir") != 0 && strcmp(optarg, "legality") != 0 && strcmp(optarg, "loops") != 0 &&
			    strcmp(optarg, "mir") != 0 && strcmp(optarg, "placement") != 0 && strcmp(optarg, "sharding") != 0)
				return usage_error("unknown --emit stage '%s' (known: ir, sharding, legality, placement, loops, mir)",
						   optarg);
			emit = optarg;
			break;
		case OPT_MESH:
		case OPT_SHARD:
		case OPT_PARALLEL:
		case OPT_LINK_GBPS:
		case OPT_LINK_LATENCY:
		case OPT_MICRO_BATCHES:
		case OPT_DEVICES: {
			int sr = shard_option(o, c, optarg);
			if (sr)
				return sr;
			break;
		}
		case 'f': format = optarg; break;
		case OPT_MAX_TENSOR:
		case OPT_MAX_WORKSPACE:
		case OPT_MAX_MODEL:
			if (limit_option(c, optarg))
				return EXIT_USAGE;
			break;
		case 'L': list_ops(); return 0;
		case 'T': list_targets(); return 0;
		case OPT_LIST_PASSES: pipeline_list(stdout); return 0;
		case 'P': print_legality = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("gdcc %s\n", PACKAGE_VERSION); return 0;
		case ':': return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default: return usage_error("unknown option '%s'", rejected_option(argv));
		}
	}
	const Target *target = NULL;
	if (target_name && !(target = lookup_target(target_name)))
		return unknown_target(target_name);
	if (o->nparam_settings && !target)
		return usage_error("--param overrides a target's parameters: give -t TARGET%s", "");
	if (o->nparam_settings && !(target = with_params(o, target)))
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
	if (out && !emit && !assemble && !object)
		return usage_error("-o needs something to write: use -S, -c or --emit=STAGE%s", "");
	if (object && assemble)
		return usage_error("-S and -c: choose one (-S writes assembly, -c an object file)%s", "");
	if (emit && (assemble || object))
		return usage_error("%s and --emit=%s: choose one", assemble ? "-S" : "-c", emit);
	int sr = shard_options_check(o);
	if (sr)
		return sr;
	bool sharding_emit = emit && strcmp(emit, "sharding") == 0;
	if (((emit && strcmp(emit, "ir") != 0 && !sharding_emit) || assemble || object) && !target)
		return usage_error("this output needs a target: -t TARGET (see --list-targets)%s", "");
	if (o->weights && !assemble)
		return usage_error("--weights applies to -S (-c puts the weights in the object)%s", "");
	if (o->header_path && !assemble && !object)
		return usage_error("--header writes the C header of a compilation: give -S or -c%s", "");
	if (entry_given && !assemble && !object && !(emit && (strcmp(emit, "loops") == 0 || strcmp(emit, "mir") == 0)))
		return usage_error("--entry names the entry function of a compilation: give -S or -c%s", "");
	char *default_obj = NULL;
	if (object) {
		const ParamInfo *as = target_param(target, "assemble");
		if (!as || !as->str)
			return usage_error("-c: target '%s' has no object files: its .md has no param assemble (%s); "
					   "use -S for its assembly", target->name, target->md_file);
		if (out && strcmp(out, "-") == 0)
			return usage_error("-c writes an object file, not to standard output: give -o FILE%s", "");
		if (!out) {
			const char *b = strrchr(argv[optind], '/');
			b = b ? b + 1 : argv[optind];
			const char *dot = strrchr(b, '.');
			default_obj = xasprintf("%.*s.o", (int)(dot && dot != b ? dot - b : (ptrdiff_t)strlen(b)), b);
			out = default_obj;
		}
	}
	if ((o->nprint_after || o->print_all) && !assemble && !(emit && (strcmp(emit, "loops") == 0 || strcmp(emit, "mir") == 0)))
		return usage_error("--print-after shows a compilation's passes: give -S (or --emit=loops or mir)%s", "");
	if (o->report_path && !assemble && !object && !(emit && (strcmp(emit, "loops") == 0 || strcmp(emit, "mir") == 0 ||
						 strcmp(emit, "placement") == 0)))
		return usage_error("--report is the report of a compilation: give -S or -c (or --emit=loops, mir or placement)%s", "");
	Diag d;
	diag_init(&d);
	Graph *g = load_and_verify(argv[optind], o, &d);
	for (int i = 0; g && i < o->nbinds; i++)
		if (!o->binds[i].used) {
			diag_error(&d, loc_at(NULL, 0, 0), "--bind %s: the model has no integer input '%s', nor a value it needs "
				   "when compiling by that name", o->binds[i].name, o->binds[i].name);
			graph_free(g);
			g = NULL;
		}
	if (g && !apply_sharding(g, argv[optind], o, target, &d)) {
		graph_free(g);
		g = NULL;
	}
	if (g && g->mesh.naxes && !sharding_emit && !(emit && strcmp(emit, "ir") == 0) && (compiles_anything(assemble, object, emit) || target)) {
		diag_error(&d, g->mesh.loc, "the model is sharded over a mesh of %" PRId64 " devices: its programs, one per device, "
			   "are made and run by 'gdcc run -t TARGET' (over MPI); writing them out (-S, -c, --emit of a compilation) "
			   "is not supported yet; --emit=sharding shows the partitioning", shard_mesh_devices(&g->mesh));
		graph_free(g);
		g = NULL;
	}
	if (!g) {
		free(default_obj);
		return finish(&d, EXIT_INPUT);
	}
	int rc = 0;
	const Target *host = target ? place_host(target, o->host_name, &d) : NULL;
	if (!diag_has_errors(&d) && host && (object || o->header_path || entry_given))
		diag_error(&d, loc_at(NULL, 0, 0), "%s: a model placed on %s and its host %s has several entry points "
			   "(segments): -c, --header and --entry are for one target", object ? "-c" : o->header_path ? "--header" : "--entry",
			   target->name, host->name);
	if (diag_has_errors(&d)) {
		graph_free(g);
		free(default_obj);
		return finish(&d, EXIT_USAGE);
	}
	bool compiles = assemble || object || (emit && (strcmp(emit, "loops") == 0 || strcmp(emit, "mir") == 0));
	if (compiles || (host && emit && strcmp(emit, "placement") == 0)) {
		/* the pass manager: the graph passes on the whole model, then the
		 * target stages, on the target alone or on each placed segment */
		Session s;
		session_init(&s, o);
		if (!compile_graph(&s, g, &d))
			rc = EXIT_INPUT;
		else if (host)
			rc = compile_placed(&s, g, target, host, emit, out, &d);
		else if (object)
			rc = compile_to_object(&s, g, target, out, &d);
		else
			rc = compile_to_file(&s, g, target, emit, out, &d);
		session_free(&s);
	} else if (emit && strcmp(emit, "placement") == 0) {
		/* no host: everything runs on the target (or is an error) */
		Placement *pl = place_graph(g, target, NULL, &d);
		rc = pl ? write_output(out, write_placement, pl) : EXIT_INPUT;
		placement_free(pl);
	} else if (target && !legality_check(g, target, &d, NULL)) {
		rc = EXIT_INPUT;
	} else if (sharding_emit) {
		if (!g->mesh.naxes) {
			diag_error(&d, g->loc, "--emit=sharding: the model has no mesh (declare one, or give --mesh or --parallel)");
			rc = EXIT_INPUT;
		} else {
			ShardJob job = {g, {.target = target, .link = link_model(o)}};
			job.r.alternatives = o->auto_table;
			o->auto_table = NULL;
			rc = shard_propagate(g, &job.r, &d) ? write_output(out, write_sharding, &job) : EXIT_INPUT;
			shard_report_free(&job.r);
		}
	} else if (emit && strcmp(emit, "ir") == 0) {
		rc = write_output(out, write_ir, g);
	} else if (emit) {
		DecisionJob job = {g, target};
		rc = write_output(out, write_decisions, &job);
	}
	graph_free(g);
	free(default_obj);
	return finish(&d, rc);
}

static int cmd_check(int argc, char **argv)
{
	Options o;
	options_init(&o);
	int rc = check_with(&o, argc, argv);
	options_free(&o);
	return rc;
}


/* |got - want| <= atol + rtol |want| elementwise (docs/backend.md); the
 * integer and bool dtypes exactly. */
enum { CHECK_ULP_NOTE = 0 };
static const double check_rtol = 1e-4, check_atol = 1e-5;

static bool compare(const char *name, const Tensor *got, const Tensor *want)
{
	double max_abs = 0, max_rel = 0;
	int64_t bad = 0, n = tensor_numel(want);
	if (want->type.dtype != DT_F32) {
		for (int64_t i = 0; i < n; i++) {
			int64_t g = tensor_get_i(got, i), w = tensor_get_i(want, i);
			if (g == w)
				continue;
			bad++;
			double err = fabs((double)g - (double)w);
			if (err > max_abs)
				max_abs = err;
			if (w != 0 && err / fabs((double)w) > max_rel)
				max_rel = err / fabs((double)w);
		}
		printf("%s: max abs error %.3g, max rel error %.3g, %lld of %lld outside atol 0 + rtol 0: %s\n", name, max_abs,
		       max_rel, (long long)bad, (long long)n, bad ? "MISMATCH" : "ok");
		return bad == 0;
	}
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

/* --check: each output against the reference's (when rc is still 0 and
 * there is one), the reference freed; rc, or EXIT_MISMATCH. */
static int compare_and_free(const Graph *g, Tensor **outputs, Tensor **ref, int rc)
{
	for (int k = 0; rc == 0 && ref && k < g->noutputs; k++)
		if (!compare(g->outputs[k]->name, outputs[k], ref[k]))
			rc = EXIT_MISMATCH;
	for (int k = 0; ref && k < g->noutputs; k++)
		tensor_free(ref[k]);
	free(ref);
	return rc;
}

static int run_with(Options *o, int argc, char **argv)
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
		{"onnx-test", required_argument, NULL, OPT_ONNX_TEST},
		{"host", required_argument, NULL, 'H'},
		{"param", required_argument, NULL, 'M'},
		{"profile", optional_argument, NULL, OPT_PROFILE},
		{"profile-runs", required_argument, NULL, OPT_PROFILE_RUNS},
		{"mesh", required_argument, NULL, OPT_MESH},
		{"shard", required_argument, NULL, OPT_SHARD},
		{"parallel", required_argument, NULL, OPT_PARALLEL},
		{"devices", required_argument, NULL, OPT_DEVICES},
		{"link-gbps", required_argument, NULL, OPT_LINK_GBPS},
		{"link-latency-us", required_argument, NULL, OPT_LINK_LATENCY},
		{"micro-batches", required_argument, NULL, OPT_MICRO_BATCHES},
		{"help", no_argument, NULL, 'h'},
		LIMIT_OPTIONS,
		PASS_OPTIONS,
		{0},
	};
	bool check = false, profile_runs_given = false;
	const char *onnx_test = NULL;
	Binding *ins = NULL, *outs = NULL;
	int nins = 0, nouts = 0, rc = 0;
	const char *outdir = NULL, *target = NULL;
	uint64_t seed = 0;
	bool print = false;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":t:O::h", opts, NULL)) != -1) {
		int pr = pass_option(o, c, c == 'O' && !optarg ? "1" : optarg);
		if (pr > 0) {
			rc = pr;
			goto done;
		}
		if (pr == 0)
			continue;
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
		case OPT_ONNX_TEST: onnx_test = o->onnx_test = optarg; break;
		case OPT_PROFILE:
			if (optarg && !*optarg) {
				rc = usage_error("--profile=FILE needs a file name (or --profile alone: the table only)%s", "");
				goto done;
			}
			o->profile = true;
			o->profile_path = optarg;
			break;
		case OPT_PROFILE_RUNS: {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || v < 1 || v > 1000000) {
				rc = usage_error("--profile-runs needs a number of runs from 1 to 1000000, got '%s'", optarg);
				goto done;
			}
			o->profile_runs = (int)v;
			profile_runs_given = true;
			break;
		}
		case 'H': o->host_name = optarg; break;
		case 'M':
			if (!add_param_setting(o, optarg)) {
				rc = usage_error("--param needs NAME=VALUE, got '%s'", optarg);
				goto done;
			}
			break;
		case 'R': o->report_path = optarg; break;
		case 'L': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 32 || v > 65536 || (v & (v - 1))) {
				rc = usage_error("--vlen needs a power of two number of bits, got '%s'", optarg);
				goto done;
			}
			o->vlen = optarg;
			break;
		}
		case 't': target = optarg; break;
		case OPT_MESH:
		case OPT_SHARD:
		case OPT_PARALLEL:
		case OPT_LINK_GBPS:
		case OPT_LINK_LATENCY:
		case OPT_MICRO_BATCHES:
		case OPT_DEVICES:
			if ((rc = shard_option(o, c, optarg)))
				goto done;
			break;
		case OPT_MAX_TENSOR:
		case OPT_MAX_WORKSPACE:
		case OPT_MAX_MODEL:
			if ((rc = limit_option(c, optarg)))
				goto done;
			break;
		case 'h': usage(stdout); goto done;
		case ':': rc = usage_error("option '%s' needs an argument", argv[optind - 1]); goto done;
		default: rc = usage_error("unknown option '%s'", rejected_option(argv)); goto done;
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
	if (target && !(tgt = lookup_target(target))) {
		rc = unknown_target(target);
		goto done;
	}

	if (o->nparam_settings && !tgt) {
		rc = usage_error("--param overrides a target's parameters: give -t TARGET%s", "");
		goto done;
	}
	if (o->nparam_settings && !(tgt = with_params(o, tgt))) {
		rc = EXIT_USAGE;
		goto done;
	}
	if ((o->nprint_after || o->print_all) && !tgt) {
		rc = usage_error("--print-after shows a compilation's passes: give -t TARGET%s", "");
		goto done;
	}
	if (o->report_path && !tgt) {
		rc = usage_error("--report is the report of a compilation: give -t TARGET%s", "");
		goto done;
	}
	if ((rc = shard_options_check(o)))
		goto done;
	bool sharded_opts = o->mesh_text || o->parallel;
	if (check && !tgt && !sharded_opts) {
		rc = usage_error("--check compares a target's results with the reference: give -t TARGET%s", "");
		goto done;
	}
	if (profile_runs_given && !o->profile) {
		rc = usage_error("--profile-runs sets how often --profile repeats the run: give --profile too%s", "");
		goto done;
	}
	if (o->profile && !tgt) {
		rc = usage_error("--profile times the kernels of a compiled model: give -t TARGET%s", "");
		goto done;
	}
	if (o->profile) {
		char *why = profile_unsupported(tgt);
		if (!why && o->host_name)
			why = xasprintf("--profile is not supported for a model placed on %s and a host (--host %s): profile it "
					"on one target", tgt->name, o->host_name);
		if (why) {
			errorf("%s", why);
			free(why);
			rc = EXIT_USAGE;
			goto done;
		}
		/* the JSON's file, staged now: an unwritable one fails before anything runs */
		if (o->profile_path && strcmp(o->profile_path, "-") != 0 &&
		    !(o->profile_tmp = stage_file(o->profile_path, &rc)))
			goto done;
	}
	Diag d;
	diag_init(&d);
	/* an ONNX model's integer inputs given with --input: its values
	 * specialize the model (shapes they decide become static), as
	 * --onnx-test does */
	if (onnx_is_model(argv[optind]))
		for (int i = 0; i < nins; i++) {
			size_t fl = strlen(ins[i].file);
			bool pb = fl > 3 && strcmp(ins[i].file + fl - 3, ".pb") == 0;
			TensorType ty;
			char *err = NULL;
			if (pb || !npy_read_header(ins[i].file, &ty, &err) || dtype_is_int(ty.dtype))
				add_binding(o, ins[i].name, ins[i].file, &d);
			free(err);
		}
	Graph *g = diag_has_errors(&d) ? NULL : load_and_verify(argv[optind], o, &d);
	if (g && !apply_sharding(g, argv[optind], o, tgt, &d)) {
		graph_free(g);
		g = NULL;
	}
	if (g && g->mesh.naxes && tgt && (o->profile || o->host_name || o->report_path)) {
		diag_error(&d, g->mesh.loc, "%s: not for a model sharded over several devices yet",
			   o->profile ? "--profile" : o->host_name ? "--host" : "--report");
		graph_free(g);
		g = NULL;
	}
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
		bool consumed = false; /* (a value the model was specialized to) */
		for (int j = 0; j < o->nbinds; j++)
			consumed |= o->binds[j].used && strcmp(o->binds[j].name, ins[i].name) == 0;
		if (k == g->ninputs && consumed)
			continue;
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
		inputs[k] = read_pb_part(path, g->input_part ? g->input_part[k] : ONNX_WHOLE, &d);
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
	if (tgt && g->mesh.naxes) {
		/* one program per device, over MPI; compared with the whole
		 * graph's reference run when --check */
		Tensor **ref = NULL;
		if (check) {
			ref = xcalloc(g->noutputs, sizeof *ref);
			if (!interp_run(g, inputs, ref, &d))
				rc = EXIT_RUN;
		}
		ShardReport sr = {0};
		Session s;
		session_init(&s, o);
		if (rc == 0 && !shard_propagate(g, &sr, &d))
			rc = EXIT_INPUT;
		if (rc == 0 && o->auto_table)
			fputs(o->auto_table, stdout);
		SpmdTimes tm;
		if (rc == 0)
			rc = run_spmd(&s, g, tgt, inputs, outputs, &tm, &d);
		ShardEstimate est;
		LinkModel lm = link_model(o);
		if (rc == 0 && shard_estimate(g, tgt, &lm, &est))
			printf("spmd: %" PRId64 " devices on %s over MPI: estimated compute %.3f ms, communication %.3f ms; "
			       "measured compute %.3f ms (the busiest device; each segment a program started, its values "
			       "through files), collectives %.3f ms, mpirun %.3f ms\n",
			       shard_mesh_devices(&g->mesh), tgt->name, est.compute_s * 1e3, est.comm_s * 1e3, tm.run_s * 1e3,
			       tm.coll_s * 1e3, tm.wall_s * 1e3);
		/* --parallel=auto: the other strategies run and measured too */
		for (Parallel p = PARALLEL_DATA; rc == 0 && o->parallel == PARALLEL_AUTO && p <= PARALLEL_PIPELINE; p++) {
			Diag scratch;
			diag_init(&scratch);
			Graph *h = load_and_verify(argv[optind], o, &scratch);
			ShardReport hr = {0};
			Tensor **hout = xcalloc(g->noutputs, sizeof *hout);
			SpmdTimes ht;
			static const char *const pn[] = {"", "data", "tensor", "pipeline"};
			if (h && shard_apply_strategy(h, p, o->devices, &scratch) && shard_resolve(h, &scratch) &&
			    shard_propagate(h, &hr, &scratch) && shard_estimate(h, tgt, &lm, &est) &&
			    run_spmd(&s, h, tgt, inputs, hout, &ht, &scratch) == 0)
				printf("spmd: --parallel=auto, %-8s estimated step %9.3f ms; measured compute %9.3f ms, collectives "
				       "%9.3f ms, mpirun %9.3f ms\n", pn[p], est.step_s * 1e3, ht.run_s * 1e3, ht.coll_s * 1e3,
				       ht.wall_s * 1e3);
			else
				printf("spmd: --parallel=auto, %-8s not applicable here\n", pn[p]);
			for (int k = 0; k < g->noutputs; k++)
				tensor_free(hout[k]);
			free(hout);
			shard_report_free(&hr);
			graph_free(h);
			diag_free(&scratch);
		}
		session_free(&s);
		shard_report_free(&sr);
		if ((rc = compare_and_free(g, outputs, ref, rc)))
			goto out;
	} else if (tgt) {
		/* the reference first (on the model as read), then the target's
		 * compilation, whose graph passes rewrite g */
		Tensor **ref = NULL;
		if (check) {
			ref = xcalloc(g->noutputs, sizeof *ref);
			if (!interp_run(g, inputs, ref, &d))
				rc = EXIT_RUN;
		}
		Session s;
		session_init(&s, o);
		if (rc == 0 && !compile_graph(&s, g, &d))
			rc = EXIT_INPUT;
		if (rc == 0)
			rc = run_model(&s, g, tgt, inputs, outputs, &d);
		session_free(&s);
		if ((rc = compare_and_free(g, outputs, ref, rc)))
			goto out;
	} else if (g->mesh.naxes) {
		/* the devices simulated here, each on its part; the whole
		 * graph's reference run is what they must give */
		Tensor **ref = xcalloc(g->noutputs, sizeof *ref);
		ShardReport sr = {0};
		if (!interp_run(g, inputs, ref, &d) || !shard_propagate(g, &sr, &d) || !shard_simulate(g, inputs, outputs, &d))
			rc = EXIT_RUN;
		int ncoll = 0;
		for (int i = 0; i < g->nnodes; i++)
			ncoll += op_info[g->nodes[i]->op].shard == SHARD_COLLECTIVE;
		if (rc == 0)
			printf("spmd: %" PRId64 " devices simulated (%d collective and local resharding nodes); each output against "
			       "the whole graph's:\n", shard_mesh_devices(&g->mesh), ncoll);
		for (int k = 0; rc == 0 && k < g->noutputs; k++)
			if (!compare(g->outputs[k]->name, outputs[k], ref[k]))
				rc = EXIT_MISMATCH;
		for (int k = 0; k < g->noutputs; k++)
			tensor_free(ref[k]);
		free(ref);
		shard_report_free(&sr);
		if (rc)
			goto out;
	} else if (!interp_run(g, inputs, outputs, &d)) {
		rc = EXIT_RUN;
		goto out;
	}
	for (int k = 0; onnx_test && k < g->noutputs; k++) {
		/* ONNX's rule: same dtype and shape, |out - ref| <= 1e-7 + 1e-3 |ref| */
		char *path = xasprintf("%s/output_%d.pb", onnx_test, g->output_origin ? g->output_origin[k] : k);
		Tensor *ref = read_pb_part(path, g->output_part ? g->output_part[k] : ONNX_WHOLE, &d);
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
		bool json_stdout = o->profile_path && strcmp(o->profile_path, "-") == 0; /* (keeps stdout JSON) */
		if (print || (!outfile[k] && !outdir && nouts == 0 && !check && !onnx_test && !json_stdout))
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

static int cmd_run(int argc, char **argv)
{
	Options o;
	options_init(&o);
	int rc = run_with(&o, argc, argv);
	options_free(&o);
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
		default: return usage_error("unknown option '%s'", rejected_option(argv));
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
	Options o;
	options_init(&o);
	Graph *g = load_and_verify(path, &o, &d);
	options_free(&o);
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
			if (!stage_adopt(final, log.files[i], &rc))
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
	return rc;
}
