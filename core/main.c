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
#include "npy.h"
#include "ops.h"
#include "printer.h"
#include "rng.h"
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
	      "  -t, --target=TARGET  the target to compile for (none is built yet: see --list-targets)\n"
	      "      --emit=ir        print the verified graph in model.ir syntax\n"
	      "      --list-ops       list the op table: operands, results, attributes\n"
	      "      --list-targets   list the targets this build knows\n"
	      "  -h, --help           show this help and exit\n"
	      "  -V, --version        show the version and exit\n"
	      "\n"
	      "run options:\n"
	      "      --input NAME=FILE.npy   value of input NAME (others are generated from the seed)\n"
	      "      --output NAME=FILE.npy  write output NAME to FILE\n"
	      "      --output-dir DIR        write every output not named by --output to DIR/NAME.npy\n"
	      "      --seed N                seed for generated inputs (default 0)\n"
	      "      --print                 print a summary and the leading values of each output\n"
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

/* Write to a temporary file beside `path`, renamed into place only when
 * everything was written: no partial output file is ever left. */
static int emit_ir(const Graph *g, const char *path)
{
	if (!path || strcmp(path, "-") == 0) {
		print_graph(stdout, g);
		return fflush(stdout) == 0 ? 0 : EXIT_RUN;
	}
	char *tmp = xasprintf("%s.tmp%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "gdcc: error: cannot create '%s': %s\n", path, strerror(errno));
		free(tmp);
		return EXIT_RUN;
	}
	print_graph(f, g);
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

static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"target", required_argument, NULL, 't'},
		{"emit", required_argument, NULL, 'e'},
		{"list-ops", no_argument, NULL, 'L'},
		{"list-targets", no_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	const char *out = NULL, *emit = NULL, *target = NULL;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:t:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': target = optarg; break;
		case 'e':
			if (strcmp(optarg, "ir") != 0)
				return usage_error("unknown --emit stage '%s' (known: ir)", optarg);
			emit = optarg;
			break;
		case 'L': list_ops(); return 0;
		case 'T': puts("(no targets in this build yet)"); return 0;
		case 'h': usage(stdout); return 0;
		case 'V': printf("gdcc %s\n", PACKAGE_VERSION); return 0;
		case ':': return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("no model given%s", "");
	if (optind + 1 < argc)
		return usage_error("more than one model given ('%s' too)", argv[optind + 1]);
	if (target)
		return usage_error("unknown target '%s' (this build has no targets yet; see --list-targets)", target);
	if (out && !emit)
		return usage_error("-o needs something to write: use --emit=ir%s", "");
	Diag d;
	diag_init(&d);
	Graph *g = load_and_verify(argv[optind], &d);
	if (!g)
		return finish(&d, EXIT_INPUT);
	int rc = emit ? emit_ir(g, out) : 0;
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
		rc = usage_error("unknown target '%s' (this build has no targets yet; see --list-targets)", target);
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
