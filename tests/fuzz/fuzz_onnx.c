/* Fuzz target: ONNX ModelProto bytes -> the importer (onnx_load_buffer:
 * protobuf parsing, translation, import-time folding) -> the verifier.  A
 * graph that verifies is also
 *   - run by the reference interpreter on random inputs, for about one
 *     input in eight (chosen by the input's hash, so runs repeat), when
 *     its tensors are small (1 MiB in all) and so is an estimate of the
 *     work of its nodes;
 *   - written as model.ir the way `gdcc import` does without -o (weights
 *     inline; a model with larger ones is refused, which is fine), and
 *     that text must parse and verify. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "frontend.h"
#include "fuzz.h"
#include "import.h"
#include "interp.h"
#include "onnx.h"
#include "printer.h"
#include "verify.h"

enum { RUN_MAX_BYTES = 1 << 20 };
#define RUN_MAX_WORK 50000000.0

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init();
	return 0;
}

/* A bound on the reference kernels' work: per node, its result's elements
 * times all its operands' elements. */
static double work(const Graph *g)
{
	double w = 0;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		double in = 1, out = 0;
		for (int k = 0; k < n->nin; k++)
			in += (double)shape_numel(&n->in[k]->type.shape);
		for (int k = 0; k < n->nout; k++)
			out += (double)shape_numel(&n->out[k]->type.shape);
		w += in * (out + 1);
	}
	return w;
}

static void run(const Graph *g, uint64_t seed)
{
	Tensor **in = calloc((size_t)g->ninputs + 1, sizeof *in);
	Tensor **out = calloc((size_t)g->noutputs + 1, sizeof *out);
	if (!in || !out)
		abort();
	for (int i = 0; i < g->ninputs; i++) {
		in[i] = tensor_new(g->inputs[i]->type.dtype, &g->inputs[i]->type.shape);
		fill_random_input(in[i], seed + (uint64_t)i);
	}
	Diag d;
	diag_init(&d);
	bool ok = interp_run(g, in, out, &d);
	fuzz_check_diags(&d, ok, "interp");
	for (int i = 0; i < g->ninputs; i++)
		tensor_free(in[i]);
	for (int i = 0; ok && i < g->noutputs; i++)
		tensor_free(out[i]);
	free(in);
	free(out);
	diag_free(&d);
}

/* `gdcc import` without -o, into memory; what it writes must read back. */
static void import_text(Graph *g)
{
	ImportLog log = {0};
	char *err = NULL;
	bool ok = import_externalize(g, NULL, &log, &err);
	if (!ok && !err && fuzz_oracles)
		fuzz_fail("import_externalize failed without a message");
	free(err);
	if (log.nfiles && fuzz_oracles)
		fuzz_fail("import_externalize without a path wrote %d files", log.nfiles);
	import_log_free(&log);
	if (!ok)
		return;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		abort();
	import_print_header(m, "fuzz.onnx", g);
	print_graph(m, g);
	fclose(m);
	Diag d;
	diag_init(&d);
	Graph *g2 = parse_model("imported.ir", NULL, text, len, &d);
	bool ok2 = g2 && graph_verify(g2, &d);
	if (!ok2 && fuzz_oracles) {
		diag_print(&d, stderr);
		fuzz_fail("the imported model.ir does not verify:\n%s", text);
	}
	graph_free(g2);
	diag_free(&d);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Diag d;
	diag_init(&d);
	Graph *g = onnx_load_buffer("fuzz.onnx", data, size, &d);
	fuzz_check_diags(&d, g != NULL, "import");
	bool ok = g && graph_verify(g, &d);
	if (g)
		fuzz_check_diags(&d, ok, "verify");
	if (ok) {
		uint64_t bytes = fuzz_check_graph(g);
		uint64_t h = XXH3_64bits(data, size);
		if ((h & 7) == 0 && bytes < RUN_MAX_BYTES && work(g) < RUN_MAX_WORK)
			run(g, h >> 3);
		import_text(g);
	}
	fuzz_done(&d);
	graph_free(g);
	diag_free(&d);
	return 0;
}
