/* The gdcc driver: parses the command line, runs the pipeline stages in
 * order and reports errors once, at the top.
 *
 *   gdcc [--emit=ir] [-o FILE] [-t TARGET] MODEL     check a model
 *   gdcc run MODEL [--input N=F.npy]... [--output N=F.npy]... [--seed N]
 *
 * Exit status: 0 success, 1 invalid input (model, .npy), 2 bad command
 * line, 3 failure while running (a kernel error, an unwritable file). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "config.h"
#include "frontend.h"
#include "interp.h"
#include "legality.h"
#include "npy.h"
#include "ops.h"
#include "printer.h"
#include "rng.h"
#include "target.h"
#include "util.h"
#include "verify.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_RUN = 3 };

static void usage(FILE *out)
{
	fputs("usage: gdcc [OPTIONS] MODEL.ir\n"
	      "       gdcc run MODEL.ir [--input NAME=FILE.npy]... [--output NAME=FILE.npy]...\n"
	      "                [--output-dir DIR] [--seed N] [--print] [-t TARGET]\n"
	      "\n"
	      "Check a model, print it back, or run it with the reference interpreter.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output=FILE    write the result (--emit) to FILE instead of stdout\n"
	      "  -t, --target=TARGET  check the model against TARGET's legality table\n"
	      "      --emit=STAGE     print a stage: ir (the verified graph in model.ir syntax),\n"
	      "                       legality (each node's decision on the -t target)\n"
	      "      --list-ops       list the op table: operands, results, attributes\n"
	      "      --list-targets   list the targets this build knows\n"
	      "      --print-legality print the -t target's legality table (no model needed)\n"
	      "      --format=FORMAT  json (default), csv or md, for --print-legality\n"
	      "  -h, --help           show this help and exit\n"
	      "  -V, --version        show the version and exit\n"
	      "\n"
	      "run options:\n"
	      "      --input NAME=FILE.npy   value of input NAME (others are generated from the seed)\n"
	      "      --output NAME=FILE.npy  write output NAME to FILE\n"
	      "      --output-dir DIR        write every output not named by --output to DIR/NAME.npy\n"
	      "      --seed N                seed for generated inputs (default 0)\n"
	      "      --print                 print a summary and the leading values of each output\n"
	      "      -t TARGET               (running on a target arrives with the backend)\n"
	      "\n"
	      "Exit status: 0 success, 1 invalid input, 2 bad command line, 3 run failure.\n"
	      "See gdcc(1) and docs/ir.md.\n",
	      out);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("gdcc: error: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\ngdcc: try 'gdcc --help'\n", stderr);
	return EXIT_USAGE;
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

/* Check the model; NULL after printing the errors. */
static Graph *load_and_verify(const char *path, Diag *d)
{
	Graph *g = load_model(path, d);
	if (g && !graph_verify(g, d)) {
		graph_free(g);
		g = NULL;
	}
	return g;
}

static int finish(Diag *d, int status)
{
	diag_print(d, stderr);
	diag_free(d);
	return status;
}

/* Write through fn to a temporary file beside `path`, renamed into place
 * only when everything was written: no partial output file is ever left.
 * No path, or "-": standard output. */
typedef void (*Writer)(FILE *out, const void *ctx);

static int write_output(const char *path, Writer fn, const void *ctx)
{
	if (!path || strcmp(path, "-") == 0) {
		fn(stdout, ctx);
		return fflush(stdout) == 0 ? 0 : EXIT_RUN;
	}
	char *tmp = xasprintf("%s.tmp%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "gdcc: error: cannot create '%s': %s\n", path, strerror(errno));
		free(tmp);
		return EXIT_RUN;
	}
	fn(f, ctx);
	bool ok = !ferror(f);
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, path) != 0) {
		fprintf(stderr, "gdcc: error: cannot write '%s': %s\n", path, strerror(errno));
		remove(tmp);
		free(tmp);
		return EXIT_RUN;
	}
	free(tmp);
	return 0;
}

static void write_ir(FILE *out, const void *g) { print_graph(out, g); }

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
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	const char *out = NULL, *emit = NULL, *target_name = NULL, *format = NULL;
	bool print_legality = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:t:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': target_name = optarg; break;
		case 'e':
			if (strcmp(optarg, "ir") != 0 && strcmp(optarg, "legality") != 0)
				return usage_error("unknown --emit stage '%s' (known: ir, legality)", optarg);
			emit = optarg;
			break;
		case 'f': format = optarg; break;
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
	if (out && !emit)
		return usage_error("-o needs something to write: use --emit=ir%s", "");
	if (emit && strcmp(emit, "legality") == 0 && !target)
		return usage_error("--emit=legality needs a target: -t TARGET%s", "");
	Diag d;
	diag_init(&d);
	Graph *g = load_and_verify(argv[optind], &d);
	if (!g)
		return finish(&d, EXIT_INPUT);
	int rc = 0;
	if (target && !legality_check(g, target, &d, NULL))
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
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	Binding ins[64], outs[64];
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
			Binding *b = c == 'i' ? &ins[nins] : &outs[nouts];
			if ((c == 'i' ? nins : nouts) == 64) {
				rc = usage_error("too many bindings (at most 64)%s", "");
				goto done;
			}
			if (!parse_binding(optarg, b)) {
				rc = usage_error("expected NAME=FILE.npy, got '%s'", optarg);
				goto done;
			}
			(c == 'i' ? nins++ : nouts++);
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
		case 't': target = optarg; break;
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
	if (target) {
		if (!target_lookup(target))
			rc = unknown_target(target);
		else
			rc = usage_error("run -t %s: running on a target arrives with the backend; "
					 "'gdcc -t TARGET MODEL' checks legality", target);
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
		Value *v = graph_find_value(g, ins[i].name);
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
		char *err = NULL;
		if (!npy_read(ins[i].file, &inputs[k], &err)) {
			diag_error(&d, loc_at(ins[i].file, 0, 0), "%s", err);
			free(err);
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
		Value *v = graph_find_value(g, outs[i].name);
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
	if (!interp_run(g, inputs, outputs, &d)) {
		rc = EXIT_RUN;
		goto out;
	}
	for (int k = 0; k < g->noutputs; k++) {
		if (print || (!outfile[k] && !outdir && nouts == 0))
			print_summary(g->outputs[k], outputs[k]);
		char *err = NULL;
		if (outfile[k] && !npy_write(outfile[k], outputs[k], &err)) {
			diag_error(&d, loc_at(outfile[k], 0, 0), "%s", err);
			free(err);
			/* Leave no partial result set behind. */
			for (int j = 0; j < k; j++)
				if (outfile[j])
					remove(outfile[j]);
			rc = EXIT_RUN;
			break;
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
	return rc;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	return cmd_check(argc, argv);
}
