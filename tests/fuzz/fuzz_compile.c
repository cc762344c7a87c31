/* Fuzz target: model.ir text -> parse, verify, then the whole compile path
 * of `gdcc -S -t TARGET` to assembly, through the pass manager: the graph
 * passes at -O2 with the verifier after each (--verify-each), placement on
 * the target and its host (targets whose .md names a host, like
 * npu-systolic), then per program (segment) legalization, memory planning,
 * lowering to the Loop IR, selection, allocation and emission, the
 * manifest and the report.  Nothing is assembled or run;
 * the output goes to /dev/null.
 *
 * The target: the GDCC_FUZZ_TARGET environment variable, else what the
 * program's name says after "compile-" (one binary per target, all from
 * this file: run-compile-x86-avx2, fuzz-compile-npu-systolic, ...), else
 * FUZZ_TARGET if it was defined when compiling. */
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "frontend.h"
#include "fuzz.h"
#include "legality.h"
#include "pipeline.h"
#include "place.h"
#include "printer.h"
#include "target.h"
#include "verify.h"

static const Target *target, *host;
static Options opts;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	const char *name = getenv("GDCC_FUZZ_TARGET");
	const char *prog = argc && argv && *argc > 0 && (*argv)[0] ? (*argv)[0] : "";
	prog = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	prog = strstr(prog, "compile-");
	if ((!name || !*name) && prog)
		name = prog + strlen("compile-");
#ifdef FUZZ_TARGET
	if (!name || !*name)
		name = FUZZ_TARGET;
#endif
	if (!name || !*name) {
		fputs("fuzz_compile: no target: name the program *compile-TARGET or set GDCC_FUZZ_TARGET\n", stderr);
		exit(2);
	}
	if (!(target = target_lookup(name))) {
		fprintf(stderr, "fuzz_compile: unknown target '%s'\n", name);
		exit(2);
	}
	Diag d;
	diag_init(&d);
	host = place_host(target, NULL, &d);
	if (diag_has_errors(&d)) {
		diag_print(&d, stderr);
		exit(2);
	}
	diag_free(&d);
	options_init(&opts);
	opts.verify_each = true;
	opts.dump = fuzz_null();
	return 0;
}

/* compile_program() of core/compile.c: the target stages. */
static Program *compile_one(const Graph *g, const Target *t, const char *entry, Diag *d)
{
	opts.entry = entry;
	Program *p = pipeline_target(g, t, &opts, NULL, fuzz_null(), d);
	fuzz_check_diags(d, p != NULL, "compile");
	return p;
}

/* Everything -S writes for one program: assembly (data inline, and with
 * a weights file), weights, manifest, header, report, and the --emit=mir
 * dump. */
static void emit_one(const Program *p)
{
	static const double front[2];
	FILE *o = fuzz_null();
	WeightsRef w = {"m \"weights\".bin", 64};
	program_emit(o, p, NULL);
	program_emit(o, p, &w);
	program_write_weights(o, p);
	program_manifest(o, p, 0, NULL);
	program_manifest(o, p, 0, &w);
	program_header(o, p, "m.h");
	program_report(o, p, 0, front, NULL, 0);
	mfunc_dump(o, p->f);
}

static void compile_placed(const Graph *g, Diag *d)
{
	Placement *pl = place_graph(g, target, host, d);
	fuzz_check_diags(d, pl != NULL, "placement");
	if (!pl)
		return;
	placement_print(fuzz_null(), pl);
	placement_json(fuzz_null(), pl, "  ");
	for (int k = 0; k < pl->nsegs; k++) {
		char entry[32];
		snprintf(entry, sizeof entry, "gdcc_seg%d", k);
		Program *p = compile_one(pl->segs[k].g, pl->segs[k].t, entry, d);
		if (!p)
			break;
		emit_one(p);
		program_free(p);
	}
	placement_free(pl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_skip_model(data, size))
		return 0;
	Diag d;
	diag_init(&d);
	Graph *g = parse_model("fuzz.ir", NULL, (const char *)data, size, &d);
	bool ok = g && graph_verify(g, &d);
	fuzz_check_diags(&d, ok, "parse and verify");
	/* (the limits keep every tensor small; a model whose tensors still
	 * total more than this is not compiled, to keep runs fast) */
	if (ok && fuzz_check_graph(g) <= FUZZ_MAX_WORKSPACE_BYTES) {
		print_graph(fuzz_null(), g); /* (the content hash prints it) */
		/* the graph passes: they fail only on an internal error (a pass
		 * that broke the graph, caught by the verifier): a bug */
		if (!pipeline_graph(g, &opts, NULL, &d)) {
			diag_print(&d, stderr);
			fputs("fuzz_compile: the graph passes failed\n", stderr);
			abort();
		}
		if (host) {
			compile_placed(g, &d);
		} else {
			Program *p = compile_one(g, target, "gdcc_entry", &d);
			if (p)
				emit_one(p);
			program_free(p);
		}
		fuzz_check_diags(&d, true, "compile");
	}
	fuzz_done(&d);
	graph_free(g);
	diag_free(&d);
	return 0;
}
