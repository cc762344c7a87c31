/* pass_canonicalize: for each rewrite, the graph before and after (ops and
 * node counts), the reference interpreter's results on random inputs
 * unchanged, the graph's inputs and outputs unchanged, and the cases where
 * the rewrite must not fire. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "printer.h"
#include "test_util.h"
#include "util.h"

/* ---- helpers ----------------------------------------------------------- */

/* Nodes that are not constants. */
static int count_compute(const Graph *g) { return g->nnodes - t_count_op(g, OP_CONSTANT); }

/* The -O level the pass runs at: 1 (every rewrite bit for bit) unless a
 * test sets 2 (matmul + bias -> gemm).  Each test runs in its own process. */
static int opt = 1;

/* Runs the pass on g (asserting success and a well-formed result: the
 * structure check and the verifier pass); returns the changes it made. */
static int canon(Graph *g)
{
	int changes = t_run_pass(g, pass_canonicalize, (PassContext){.opt_level = opt});
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i]->nout; k++)
			cr_assert(g->nodes[i]->out[k]->typed, "'%s' is untyped", g->nodes[i]->out[k]->name);
	return changes;
}

static Graph *check_canon_once(const char *text, double tol, int *changes);

/* The model as gdcc --emit=ir prints it: every result annotated. */
static char *printed(const char *text)
{
	Graph *g = t_model(text);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	print_graph(f, g);
	fclose(f);
	graph_free(g);
	return buf;
}

/* check_canon_once on the text, and on its printed form (whose every
 * result carries a written type, which rewrites must keep consistent):
 * both give the same graph. */
static Graph *check_canon(const char *text, double tol, int *changes)
{
	Graph *g = check_canon_once(text, tol, changes);
	char *p = printed(text);
	int ch2;
	Graph *g2 = check_canon_once(p, tol, &ch2);
	free(p);
	cr_assert_eq(g2->nnodes, g->nnodes, "the annotated model canonicalizes the same");
	for (int i = 0; i < g->nnodes; i++)
		cr_assert_eq(g2->nodes[i]->op, g->nodes[i]->op);
	graph_free(g2);
	return g;
}

/* The model parsed twice: one graph canonicalized, one not.  Asserts the
 * interfaces are equal (input and output names, types, order) and the
 * outputs on random inputs (two seeds) agree: bit for bit when tol is 0,
 * else within tol relative (and tol absolute): t_assert_same_results.
 * Returns the canonicalized graph (and the changes in *changes). */
static Graph *check_canon_once(const char *text, double tol, int *changes)
{
	Graph *g0 = t_model(text), *g1 = t_model(text);
	int ch = canon(g1);
	if (changes)
		*changes = ch;
	for (uint64_t seed = 1; seed <= 2; seed++)
		t_assert_same_results(g0, g1, seed * 31, tol, tol);
	graph_free(g0);
	return g1;
}

/* ---- identity and dropout ---------------------------------------------- */

Test(canonicalize, identity_removed)
{
	int ch;
	Graph *g = check_canon("graph g {\n  input x : f32[3, 4]\n  a = identity(x)\n  r = relu(a)\n"
			       "  b = identity(r)\n  y = identity(b)\n  output y\n}\n",
			       0, &ch);
	cr_assert_eq(t_count_op(g, OP_IDENTITY), 0);
	cr_assert_eq(g->nnodes, 1);
	cr_assert_eq(g->outputs[0]->def->op, OP_RELU, "the relu's result took the output's name");
	cr_assert_eq(ch, 3);
	graph_free(g);
}

Test(canonicalize, identity_of_an_input_as_output_kept)
{
	/* y cannot become x: x is an input, y an output with its own name */
	int ch;
	Graph *g = check_canon("graph g {\n  input x : f32[3]\n  y = identity(x)\n  z = neg(x)\n  output y, z\n}\n", 0, &ch);
	cr_assert_eq(t_count_op(g, OP_IDENTITY), 1);
	cr_assert_eq(ch, 0);
	graph_free(g);
}

Test(canonicalize, identity_of_an_output_kept)
{
	Graph *g = check_canon("graph g {\n  input x : f32[3]\n  r = relu(x)\n  y = identity(r)\n  output r, y\n}\n", 0, NULL);
	cr_assert_eq(t_count_op(g, OP_IDENTITY), 1);
	graph_free(g);
}

Test(canonicalize, dropout_in_inference_removed)
{
	Graph *g = check_canon("graph g {\n  input x : f32[2, 5]\n  r = relu(x)\n  d = dropout(r, ratio=0.3)\n"
			       "  e, m = dropout(d, training_mode=0)\n  y = neg(e)\n  output y\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_DROPOUT), 0);
	cr_assert_eq(g->nnodes, 2);
	graph_free(g);
}

Test(canonicalize, dropout_with_its_mask_used_kept)
{
	Graph *g = check_canon("graph g {\n  input x : f32[2, 5]\n  r = relu(x)\n  e, m = dropout(r)\n  y = neg(e)\n"
			       "  output y, m\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_DROPOUT), 1);
	graph_free(g);
}

/* ---- views ------------------------------------------------------------- */

Test(canonicalize, view_chain_becomes_one_reshape)
{
	int ch;
	Graph *g = check_canon("graph g {\n  input x : f32[2, 3, 4]\n  r = relu(x)\n  a = reshape(r, shape=[6, 4])\n"
			       "  b = flatten(a, axis=0)\n  c = unsqueeze(b, axes=[0])\n  d = squeeze(c, axes=[0, 1])\n"
			       "  e = reshape(d, shape=[4, -1])\n  y = neg(e)\n  output y\n}\n",
			       0, &ch);
	cr_assert_eq(count_compute(g), 3, "relu, one reshape, neg");
	const Node *r = t_find_op(g, OP_RESHAPE);
	cr_assert_not_null(r);
	cr_assert_eq(r->in[0]->def->op, OP_RELU, "from the first operand");
	const int64_t *s;
	cr_assert_eq(attr_ints(r, "shape", &s), 2);
	cr_assert(s[0] == 4 && s[1] == 6, "to the final shape");
	cr_assert_eq(ch, 4);
	graph_free(g);
}

Test(canonicalize, view_chain_to_own_shape_removed)
{
	Graph *g = check_canon("graph g {\n  input x : f32[2, 3, 4]\n  r = relu(x)\n  a = flatten(r, axis=1)\n"
			       "  b = unsqueeze(a, axes=[2])\n  c = reshape(b, shape=[2, 3, 4])\n  y = neg(c)\n"
			       "  z = squeeze(y)\n  output z\n}\n",
			       0, NULL);
	cr_assert_eq(count_compute(g), 2, "relu and neg");
	cr_assert_eq(g->outputs[0]->def->op, OP_NEG);
	graph_free(g);
}

Test(canonicalize, view_chain_with_a_shared_middle)
{
	/* a has two users: it stays, and the final view reads r directly */
	Graph *g = check_canon("graph g {\n  input x : f32[2, 6]\n  r = relu(x)\n  a = reshape(r, shape=[3, 4])\n"
			       "  b = flatten(a, axis=0)\n  y = neg(b)\n  z = abs(a)\n  output y, z\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_RESHAPE), 2);
	cr_assert_eq(t_count_op(g, OP_FLATTEN), 0);
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->op == OP_RESHAPE)
			cr_assert_eq(g->nodes[i]->in[0]->def->op, OP_RELU);
	graph_free(g);
}

Test(canonicalize, view_of_an_input_to_an_output_kept)
{
	/* reshape(reshape(x)) back to x's shape, as an output: it cannot be
	 * x, so one reshape of x stays */
	Graph *g = check_canon("graph g {\n  input x : f32[2, 6]\n  a = reshape(x, shape=[3, 4])\n"
			       "  y = reshape(a, shape=[2, 6])\n  output y\n}\n",
			       0, NULL);
	cr_assert_eq(count_compute(g), 1);
	cr_assert_eq(g->nodes[0]->op, OP_RESHAPE);
	cr_assert(g->nodes[0]->in[0]->is_input);
	graph_free(g);
}

Test(canonicalize, empty_tensor_views)
{
	/* a 0 in the final shape is a size (allowzero), not "copy the dim" */
	Graph *g = check_canon("graph g {\n  input x : f32[0, 3]\n  r = relu(x)\n  a = unsqueeze(r, axes=[0])\n"
			       "  b = flatten(a, axis=1)\n  y = neg(b)\n  output y\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_RESHAPE), 1);
	cr_assert_eq(t_count_op(g, OP_UNSQUEEZE) + t_count_op(g, OP_FLATTEN), 0);
	const Node *r = t_find_op(g, OP_RESHAPE);
	cr_assert_eq(attr_i(r, "allowzero"), 1);
	cr_assert(r->out[0]->type.shape.dim[0] == 1 && r->out[0]->type.shape.dim[1] == 0);
	graph_free(g);
	g = check_canon("graph g {\n  input x : f32[0, 3]\n  r = relu(x)\n  a = reshape(r, shape=[3, 0], allowzero=1)\n"
			"  b = unsqueeze(a, axes=[0])\n  y = neg(b)\n  output y\n}\n",
			0, NULL);
	cr_assert_eq(t_count_op(g, OP_RESHAPE), 1);
	cr_assert_eq(t_count_op(g, OP_UNSQUEEZE), 0);
	graph_free(g);
}

Test(canonicalize, shape_preserving_data_movement_removed)
{
	Graph *g = check_canon("graph g {\n  input x : f32[2, 3]\n  r = relu(x)\n  a = expand(r, shape=[2, 3])\n"
			       "  b = concat(a, axis=0)\n  c = slice(b, starts=[0], ends=[100], axes=[1])\n"
			       "  d = pad(c, pads=[0, 0, 0, 0])\n  e = transpose(d, perm=[0, 1])\n  f = split(e, axis=1)\n"
			       "  y = neg(f)\n  output y\n}\n",
			       0, NULL);
	cr_assert_eq(count_compute(g), 2, "relu and neg");
	graph_free(g);
}

Test(canonicalize, reversing_slice_and_shifting_pad_kept)
{
	Graph *g = check_canon("graph g {\n  input x : f32[2, 3]\n  r = relu(x)\n"
			       "  c = slice(r, starts=[-1], ends=[-100], axes=[1], steps=[-1])\n"
			       "  d = pad(c, pads=[0, 1, 0, -1])\n  e = transpose(d, perm=[1, 0])\n  y = neg(e)\n  output y\n}\n",
			       0, NULL);
	cr_assert_eq(count_compute(g), 5);
	graph_free(g);
}

/* ---- transposes -------------------------------------------------------- */

Test(canonicalize, transpose_of_transpose_composed)
{
	Graph *g = check_canon("graph g {\n  input x : f32[2, 3, 4]\n  r = relu(x)\n  a = transpose(r, perm=[1, 2, 0])\n"
			       "  b = transpose(a, perm=[0, 2, 1])\n  y = neg(b)\n  output y\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_TRANSPOSE), 1);
	const Node *t = t_find_op(g, OP_TRANSPOSE);
	cr_assert_eq(t->in[0]->def->op, OP_RELU);
	const int64_t *p;
	cr_assert_eq(attr_ints(t, "perm", &p), 3);
	cr_assert(p[0] == 1 && p[1] == 0 && p[2] == 2, "perm [%lld, %lld, %lld]", (long long)p[0], (long long)p[1],
		  (long long)p[2]);
	graph_free(g);
}

Test(canonicalize, transposes_composing_to_identity_removed)
{
	/* the default perm (reversed) twice, and a 3-cycle three times */
	Graph *g = check_canon("graph g {\n  input x : f32[2, 3, 4]\n  r = relu(x)\n  a = transpose(r)\n  b = transpose(a)\n"
			       "  c = transpose(b, perm=[1, 2, 0])\n  d = transpose(c, perm=[1, 2, 0])\n"
			       "  e = transpose(d, perm=[1, 2, 0])\n  y = neg(e)\n  output y\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_TRANSPOSE), 0);
	cr_assert_eq(count_compute(g), 2);
	graph_free(g);
}

Test(canonicalize, transpose_with_another_user_kept)
{
	Graph *g = check_canon("graph g {\n  input x : f32[2, 3]\n  r = relu(x)\n  a = transpose(r)\n  b = transpose(a)\n"
			       "  y = neg(b)\n  output y, a\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_TRANSPOSE), 1, "a stays (an output); b is r");
	cr_assert_eq(t_find_op(g, OP_NEG)->in[0]->def->op, OP_RELU);
	graph_free(g);
}

/* ---- gemm and matmul with constant weights ----------------------------- */

static const char *linear2 =
	"graph g {\n  input x : f32[5, 8]\n  const w1 : f32[6, 8] = normal(seed=1, mean=0, std=0.5)\n"
	"  const b1 : f32[6] = random(seed=2)\n  const w2 : f32[3, 6] = normal(seed=3, mean=0, std=0.5)\n"
	"  h = gemm(x, w1, b1, trans_b=1)\n  r = relu(h)\n  y = gemm(r, w2, trans_b=1, alpha=0.5)\n  output y\n}\n";

Test(canonicalize, gemm_trans_b_constant_transposed_at_compile_time)
{
	int ch;
	Graph *g = check_canon(linear2, 0, &ch);
	cr_assert_eq(ch, 2);
	cr_assert_eq(t_count_op(g, OP_GEMM), 2);
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 3, "w1^T, b1, w2^T: the originals are gone");
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		if (n->op != OP_GEMM)
			continue;
		cr_assert_eq(attr_i(n, "trans_b"), 0);
		const Value *b = n->in[1];
		cr_assert_eq(b->def->op, OP_CONSTANT);
		cr_assert_eq(b->def->init.kind, INIT_TENSOR);
		cr_assert_eq(b->type.shape.dim[0], n->in[0]->type.shape.dim[1], "B is [K, N]");
	}
	cr_assert_float_eq(attr_f(g->outputs[0]->def, "alpha"), 0.5, 0, "other attributes kept");
	graph_free(g);
}

Test(canonicalize, gemm_shared_weight_transposed_once)
{
	Graph *g = check_canon("graph g {\n  input x : f32[4, 8]\n  input z : f32[2, 8]\n"
			       "  const w : f32[6, 8] = random(seed=4)\n  a = gemm(x, w, trans_b=1)\n"
			       "  b = gemm(z, w, trans_b=1)\n  output a, b\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 1);
	const Node *c = t_find_op(g, OP_CONSTANT);
	cr_assert_eq(c->out[0]->nusers, 2);
	cr_assert(c->out[0]->type.shape.dim[0] == 8 && c->out[0]->type.shape.dim[1] == 6);
	graph_free(g);
}

Test(canonicalize, gemm_weight_used_elsewhere_kept_too)
{
	Graph *g = check_canon("graph g {\n  input x : f32[4, 8]\n  const w : f32[6, 8] = random(seed=4)\n"
			       "  a = gemm(x, w, trans_b=1)\n  b = relu(w)\n  output a, b\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 2, "w (relu reads it) and w^T");
	cr_assert_eq(attr_i(t_find_op(g, OP_GEMM), "trans_b"), 0);
	graph_free(g);
}

Test(canonicalize, gemm_trans_b_of_a_computed_b_kept)
{
	int ch;
	Graph *g = check_canon("graph g {\n  input x : f32[4, 8]\n  input w : f32[6, 8]\n"
			       "  a = gemm(x, w, trans_b=1)\n  output a\n}\n",
			       0, &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(attr_i(t_find_op(g, OP_GEMM), "trans_b"), 1);
	graph_free(g);
}

Test(canonicalize, gemm_trans_b_of_a_transpose_reads_its_operand)
{
	Graph *g = check_canon("graph g {\n  input x : f32[4, 8]\n  input w : f32[8, 6]\n  t = transpose(w)\n"
			       "  a = gemm(x, t, trans_b=1)\n  output a\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_TRANSPOSE), 0);
	const Node *m = t_find_op(g, OP_GEMM);
	cr_assert(m->in[1]->is_input);
	cr_assert_eq(attr_i(m, "trans_b"), 0);
	graph_free(g);
}

Test(canonicalize, matmul_of_transposed_constant_folded)
{
	Graph *g = check_canon("graph g {\n  input x : f32[2, 4, 8]\n  input z : f32[3, 8]\n"
			       "  const w : f32[6, 8] = normal(seed=9, mean=0, std=1)\n  t = transpose(w)\n"
			       "  a = matmul(x, t)\n  b = matmul(z, t)\n  output a, b\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_TRANSPOSE), 0);
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 1, "one folded constant for both");
	const Node *c = t_find_op(g, OP_CONSTANT);
	cr_assert(c->out[0]->type.shape.dim[0] == 8 && c->out[0]->type.shape.dim[1] == 6);
	graph_free(g);
}

Test(canonicalize, gemm_and_matmul_share_one_transposed_weight)
{
	Graph *g = check_canon("graph g {\n  input z : f32[4, 8]\n  const w : f32[6, 8] = random(seed=2)\n"
			       "  const b : f32[6] = random(seed=3)\n  g1 = gemm(z, w, b, trans_b=1)\n  t = transpose(w)\n"
			       "  m = matmul(z, t)\n  s = sub(g1, m)\n  output s\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 2, "b and one w^T");
	cr_assert_eq(t_count_op(g, OP_TRANSPOSE), 0);
	cr_assert(t_find_op(g, OP_GEMM)->in[1] == t_find_op(g, OP_MATMUL)->in[1]);
	graph_free(g);
}

Test(canonicalize, matmul_of_identity_transpose_of_a_constant)
{
	/* t is an output (so it stays) and transposes by the identity: the
	 * matmul reads w itself, not w^T */
	Graph *g = check_canon("graph g {\n  input z : f32[4, 8]\n  const w : f32[8, 6] = random(seed=2)\n"
			       "  t = transpose(w, perm=[0, 1])\n  m = matmul(z, t)\n  output m, t\n}\n",
			       0, NULL);
	const Node *m = t_find_op(g, OP_MATMUL);
	cr_assert_eq(m->in[1]->def->op, OP_CONSTANT);
	cr_assert(m->in[1]->type.shape.dim[0] == 8 && m->in[1]->type.shape.dim[1] == 6);
	graph_free(g);
}

Test(canonicalize, matmul_of_transposed_input_kept)
{
	int ch;
	Graph *g = check_canon("graph g {\n  input x : f32[4, 8]\n  input w : f32[6, 8]\n  t = transpose(w)\n"
			       "  a = matmul(x, t)\n  output a\n}\n",
			       0, &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(t_count_op(g, OP_TRANSPOSE), 1);
	graph_free(g);
}

/* ---- matmul + bias -> gemm --------------------------------------------- */

Test(canonicalize, matmul_add_becomes_gemm)
{
	opt = 2;
	int ch;
	Graph *g = check_canon("graph g {\n  input x : f32[5, 8]\n  const w : f32[8, 6] = normal(seed=1, mean=0, std=1)\n"
			       "  const b : f32[6] = random(seed=2)\n  const c : f32[1, 6] = random(seed=3)\n"
			       "  const w2 : f32[6, 6] = normal(seed=4, mean=0, std=1)\n"
			       "  h = matmul(x, w)\n  a = add(h, b)\n  r = relu(a)\n  h2 = matmul(r, w2)\n  y = add(c, h2)\n"
			       "  output y\n}\n",
			       1e-6, &ch);
	cr_assert_eq(ch, 2);
	cr_assert_eq(t_count_op(g, OP_MATMUL), 0);
	cr_assert_eq(t_count_op(g, OP_ADD), 0);
	cr_assert_eq(t_count_op(g, OP_GEMM), 2);
	const Node *m = g->outputs[0]->def;
	cr_assert_eq(m->op, OP_GEMM, "the output is the gemm's result");
	cr_assert_eq(m->nin, 3);
	cr_assert_str_eq(m->in[2]->name, "c");
	const Value *a = graph_find_value(g, "a");
	cr_assert(a && a->def->op == OP_GEMM, "the gemm's result has the add's name");
	cr_assert_float_eq(attr_f(m, "alpha"), 1.0, 0);
	cr_assert_float_eq(attr_f(m, "beta"), 1.0, 0);
	graph_free(g);
}

Test(canonicalize, matmul_add_of_rank_3_through_views)
{
	/* BERT's projections: [1, S, H] x [H, H] + [H] */
	opt = 2;
	Graph *g = check_canon("graph g {\n  input x : f32[2, 7, 8]\n  const w : f32[8, 6] = normal(seed=1, mean=0, std=1)\n"
			       "  const b : f32[6] = random(seed=2)\n  r = relu(x)\n  h = matmul(r, w)\n  a = add(h, b)\n"
			       "  y = neg(a)\n  output y\n}\n",
			       1e-6, NULL);
	cr_assert_eq(t_count_op(g, OP_GEMM), 1);
	cr_assert_eq(t_count_op(g, OP_RESHAPE), 2);
	const Node *m = t_find_op(g, OP_GEMM);
	cr_assert(m->in[0]->type.shape.rank == 2 && m->in[0]->type.shape.dim[0] == 14 && m->in[0]->type.shape.dim[1] == 8);
	cr_assert(m->out[0]->type.shape.rank == 2 && m->out[0]->type.shape.dim[0] == 14);
	cr_assert_str_eq(m->out[0]->name, "a", "the gemm has the add's name");
	const Value *nd = graph_find_value(g, "a.nd");
	cr_assert(nd && nd->def->op == OP_RESHAPE && nd->def->in[0] == m->out[0], "the view back");
	graph_free(g);
}

Test(canonicalize, matmul_add_of_a_viewed_2d_operand_reads_it)
{
	/* a = reshape of a 2-D value: the gemm reads that value, no reshape in */
	opt = 2;
	Graph *g = check_canon("graph g {\n  input x : f32[14, 8]\n  const w : f32[8, 6] = random(seed=1)\n"
			       "  const b : f32[6] = random(seed=2)\n  r = relu(x)\n  v = reshape(r, shape=[2, 7, 8])\n"
			       "  h = matmul(v, w)\n  a = add(h, b)\n  y = reshape(a, shape=[14, 6])\n  output y\n}\n",
			       1e-6, NULL);
	cr_assert_eq(t_count_op(g, OP_RESHAPE), 0, "in and out views both collapse");
	cr_assert_eq(t_find_op(g, OP_GEMM)->in[0]->def->op, OP_RELU);
	cr_assert_eq(g->outputs[0]->def->op, OP_GEMM);
	graph_free(g);
}

Test(canonicalize, matmul_add_waits_for_O2)
{
	/* -O1 keeps every result bit for bit: the reference gemm rounds once
	 * where matmul + add round twice */
	const char *text = "graph g {\n  input x : f32[5, 8]\n  const w : f32[8, 6] = random(seed=1)\n"
			   "  const b : f32[6] = random(seed=2)\n  h = matmul(x, w)\n  a = add(h, b)\n  output a\n}\n";
	int ch;
	Graph *g = check_canon(text, 0, &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(t_count_op(g, OP_MATMUL), 1);
	graph_free(g);
	opt = 2;
	g = check_canon(text, 1e-6, &ch);
	cr_assert_eq(ch, 1);
	cr_assert_eq(t_count_op(g, OP_GEMM), 1);
	graph_free(g);
}

Test(canonicalize, matmul_add_must_not_fire)
{
	opt = 2;
	const char *cases[] = {
		/* the product is used twice */
		"graph g {\n  input x : f32[5, 8]\n  const w : f32[8, 6] = random(seed=1)\n  const b : f32[6] = random(seed=2)\n"
		"  h = matmul(x, w)\n  a = add(h, b)\n  y = mul(a, h)\n  output y\n}\n",
		/* the product is an output */
		"graph g {\n  input x : f32[5, 8]\n  const w : f32[8, 6] = random(seed=1)\n  const b : f32[6] = random(seed=2)\n"
		"  h = matmul(x, w)\n  a = add(h, b)\n  output a, h\n}\n",
		/* B is not a constant */
		"graph g {\n  input x : f32[5, 8]\n  input w : f32[8, 6]\n  const b : f32[6] = random(seed=2)\n"
		"  h = matmul(x, w)\n  a = add(h, b)\n  output a\n}\n",
		/* the bias is not a constant */
		"graph g {\n  input x : f32[5, 8]\n  const w : f32[8, 6] = random(seed=1)\n  input b : f32[6]\n"
		"  h = matmul(x, w)\n  a = add(h, b)\n  output a\n}\n",
		/* the bias varies along rows (a column) */
		"graph g {\n  input x : f32[5, 8]\n  const w : f32[8, 6] = random(seed=1)\n  const b : f32[5, 1] = random(seed=2)\n"
		"  h = matmul(x, w)\n  a = add(h, b)\n  output a\n}\n",
		/* the bias broadcasts the result to a bigger shape */
		"graph g {\n  input x : f32[5, 8]\n  const w : f32[8, 6] = random(seed=1)\n  const b : f32[3, 1, 6] = random(seed=2)\n"
		"  h = matmul(x, w)\n  a = add(h, b)\n  output a\n}\n",
		/* B is batched (3-D) */
		"graph g {\n  input x : f32[2, 5, 8]\n  const w : f32[2, 8, 6] = random(seed=1)\n  const b : f32[6] = random(seed=2)\n"
		"  h = matmul(x, w)\n  a = add(h, b)\n  output a\n}\n",
		/* integers: gemm is f32 only */
		"graph g {\n  input x : i64[5, 8]\n  const w : i64[8, 6] = random(seed=1, low=0, high=5)\n"
		"  const b : i64[6] = [1, 2, 3, 4, 5, 6]\n  h = matmul(x, w)\n  a = add(h, b)\n  output a\n}\n",
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		Graph *g = check_canon(cases[i], 0, NULL);
		cr_assert_eq(t_count_op(g, OP_MATMUL), 1, "case %zu", i);
		cr_assert_eq(t_count_op(g, OP_GEMM), 0, "case %zu", i);
		graph_free(g);
	}
}

/* ---- arithmetic identities --------------------------------------------- */

Test(canonicalize, multiply_and_divide_by_one_removed)
{
	Graph *g = check_canon("graph g {\n  input x : f32[2, 3]\n  const one : f32[3] = fill(1)\n"
			       "  const ones : f32[2, 3] = [1, 1, 1, 1, 1, 1]\n  const s : f32[] = [1]\n  r = relu(x)\n"
			       "  a = mul(r, one)\n  b = mul(ones, a)\n  c = div(b, s)\n  y = neg(c)\n  output y\n}\n",
			       0, NULL);
	cr_assert_eq(count_compute(g), 2);
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 0);
	graph_free(g);
}

Test(canonicalize, add_zero_keeps_signed_zero_semantics)
{
	/* x + -0 is x for every x; x + +0 is not (-0 + +0 = +0) */
	const char *text = "graph g {\n  input x : f32[4]\n  const nz : f32[4] = fill(-0.0)\n  const z : f32[4] = zeros\n"
			   "  n = neg(x)\n  a = add(nz, n)\n  b = sub(a, z)\n  c = add(b, z)\n  output c\n}\n";
	Graph *g = check_canon(text, 0, NULL);
	cr_assert_eq(t_count_op(g, OP_ADD), 1, "only the add of +0 stays");
	cr_assert_eq(t_count_op(g, OP_SUB), 0);
	cr_assert_eq(g->outputs[0]->def->op, OP_ADD);
	cr_assert_eq(g->outputs[0]->def->in[0]->def->op, OP_NEG);
	/* and with a -0 input: the rewritten graph gives what the model does */
	Graph *g0 = t_model(text);
	Tensor *in = t_f32(1, DIMS(4), F32S(0.0f, -0.0f, 1.5f, -2.0f));
	Tensor **o0 = t_run(g0, &in), **o1 = t_run(g, &in);
	cr_assert(memcmp(o0[0]->data, o1[0]->data, 16) == 0);
	t_free_outputs(g0, o0);
	t_free_outputs(g, o1);
	tensor_free(in);
	graph_free(g0);
	graph_free(g);
}

Test(canonicalize, add_negative_zero_alone_exact_on_zeros)
{
	/* the -0 add removed; -0 and +0 inputs come out as they went in */
	const char *text = "graph g {\n  input x : f32[3]\n  const nz : f32[] = [-0.0]\n  r = neg(x)\n  a = add(r, nz)\n"
			   "  y = neg(a)\n  output y\n}\n";
	Graph *g0 = t_model(text), *g = t_model(text);
	canon(g);
	cr_assert_eq(t_count_op(g, OP_ADD), 0);
	Tensor *in = t_f32(1, DIMS(3), F32S(0.0f, -0.0f, 3.0f));
	Tensor **o0 = t_run(g0, &in), **o1 = t_run(g, &in);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(!signbit(f32(o0[0])[i]), !signbit(f32(o1[0])[i]));
	cr_assert(memcmp(o0[0]->data, o1[0]->data, 12) == 0);
	t_free_outputs(g0, o0);
	t_free_outputs(g, o1);
	tensor_free(in);
	graph_free(g0);
	graph_free(g);
}

Test(canonicalize, integer_add_and_sub_of_zero_removed)
{
	Graph *g = check_canon("graph g {\n  input x : i64[4]\n  const z : i64[4] = zeros\n  const z1 : i64[] = [0]\n"
			       "  n = neg(x)\n  a = add(z, n)\n  b = sub(a, z1)\n  y = abs(b)\n  output y\n}\n",
			       0, NULL);
	cr_assert_eq(count_compute(g), 2);
	graph_free(g);
}

Test(canonicalize, arithmetic_must_not_fire)
{
	const char *cases[] = {
		/* the constant broadcasts x to a bigger shape */
		"graph g {\n  input x : f32[3]\n  const one : f32[2, 3] = fill(1)\n  y = mul(x, one)\n  output y\n}\n",
		/* not all ones */
		"graph g {\n  input x : f32[3]\n  const k : f32[3] = [1, 1, 1.0000001]\n  y = mul(x, k)\n  output y\n}\n",
		/* 1 / x is not x */
		"graph g {\n  input x : f32[3]\n  const one : f32[3] = fill(1)\n  y = div(one, x)\n  output y\n}\n",
		/* 0 - x is not x */
		"graph g {\n  input x : f32[3]\n  const z : f32[3] = zeros\n  y = sub(z, x)\n  output y\n}\n",
		/* x - -0 turns -0 into +0 */
		"graph g {\n  input x : f32[3]\n  const z : f32[3] = fill(-0.0)\n  r = relu(x)\n  y = sub(r, z)\n  output y\n}\n",
		/* a random constant */
		"graph g {\n  input x : f32[3]\n  const k : f32[3] = random(seed=1)\n  y = mul(x, k)\n  output y\n}\n",
		/* x * 1 to an output, x an input */
		"graph g {\n  input x : f32[3]\n  const one : f32[3] = fill(1)\n  y = mul(x, one)\n  output y\n}\n",
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int ch;
		Graph *g = check_canon(cases[i], 0, &ch);
		cr_assert_eq(ch, 0, "case %zu", i);
		cr_assert_eq(count_compute(g), i == 4 ? 2 : 1, "case %zu", i);
		graph_free(g);
	}
}

Test(canonicalize, idempotent_and_involutive_unary)
{
	Graph *g = check_canon("graph g {\n  input x : f32[6]\n  a = relu(x)\n  b = relu(a)\n  c = relu(b)\n  d = abs(c)\n"
			       "  e = abs(d)\n  f = neg(e)\n  h = neg(f)\n  k = neg(h)\n  output k\n}\n",
			       0, NULL);
	cr_assert_eq(t_count_op(g, OP_RELU), 1);
	cr_assert_eq(t_count_op(g, OP_ABS), 1);
	cr_assert_eq(t_count_op(g, OP_NEG), 1);
	graph_free(g);
}

/* ---- the whole pass ---------------------------------------------------- */

Test(canonicalize, canonical_graph_unchanged)
{
	int ch;
	const char *text = "graph g {\n  input x : f32[4, 8]\n  const w : f32[8, 3] = random(seed=1)\n"
			   "  const b : f32[3] = random(seed=2)\n  y = gemm(x, w, b)\n  z = softmax(y)\n"
			   "  t = transpose(x)\n  output z, t\n}\n";
	Graph *g = check_canon(text, 0, &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(g->nnodes, 5);
	graph_free(g);
}

Test(canonicalize, outputs_keep_names_and_order)
{
	/* every output is rewritten: each keeps its name and place */
	Graph *g = check_canon("graph g {\n  input x : f32[2, 3]\n  r = relu(x)\n  c = identity(r)\n"
			       "  a = reshape(c, shape=[3, 2])\n  b = flatten(a, axis=0)\n  d = relu(r)\n  output b, d, c\n}\n",
			       0, NULL);
	cr_assert_str_eq(g->outputs[0]->name, "b");
	cr_assert_str_eq(g->outputs[1]->name, "d");
	cr_assert_str_eq(g->outputs[2]->name, "c");
	graph_free(g);
}

Test(canonicalize, every_rewrite_in_one_graph)
{
	opt = 2;
	int ch;
	Graph *g = check_canon(
		"graph g {\n  input x : f32[2, 3, 8]\n  input z : f32[4, 8]\n"
		"  const w : f32[8, 6] = normal(seed=1, mean=0, std=1)\n  const wt : f32[6, 8] = normal(seed=2, mean=0, std=1)\n"
		"  const b : f32[6] = random(seed=3)\n  const one : f32[6] = fill(1)\n  const nz : f32[] = [-0.0]\n"
		"  i = identity(x)\n  d = dropout(i)\n  r = relu(d)\n  h = matmul(r, w)\n  a = add(b, h)\n"
		"  m = mul(a, one)\n  q = add(m, nz)\n  v1 = reshape(q, shape=[6, 6])\n  v2 = flatten(v1, axis=0)\n"
		"  v3 = unsqueeze(v2, axes=[0])\n  t1 = transpose(v3, perm=[2, 0, 1])\n  t2 = transpose(t1, perm=[1, 2, 0])\n"
		"  g1 = gemm(z, wt, b, trans_b=1)\n  g2 = gemm(z, wt, trans_b=1)\n  tt = transpose(wt)\n  mm = matmul(z, tt)\n"
		"  n1 = neg(t2)\n  n2 = neg(n1)\n  s = sum(g1, g2, mm)\n  output n2, s\n}\n",
		1e-6, &ch);
	cr_assert_eq(ch, 12);
	cr_assert_eq(t_count_op(g, OP_IDENTITY) + t_count_op(g, OP_DROPOUT) + t_count_op(g, OP_MUL) + t_count_op(g, OP_ADD) +
			     t_count_op(g, OP_TRANSPOSE) + t_count_op(g, OP_NEG) + t_count_op(g, OP_FLATTEN) +
			     t_count_op(g, OP_UNSQUEEZE),
		     0);
	cr_assert_eq(t_count_op(g, OP_RESHAPE), 2, "the gemm's operand, and the output");
	cr_assert_eq(t_count_op(g, OP_GEMM), 3);
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 3, "w, b and one wt^T");
	/* a second run finds nothing left to do */
	cr_assert_eq(canon(g), 0);
	graph_free(g);
}

Test(canonicalize, counts_changes_into_the_context)
{
	Graph *g = t_model("graph g {\n  input x : f32[3]\n  a = identity(x)\n  b = relu(a)\n  c = identity(b)\n"
			   "  d = neg(c)\n  output d\n}\n");
	PassContext cx = {.opt_level = 1, .changes = 5};
	Diag d;
	diag_init(&d);
	cr_assert(pass_canonicalize(g, &cx, &d));
	diag_free(&d);
	cr_assert_eq(cx.changes, 7);
	graph_free(g);
}

Test(canonicalize, long_chains_in_linear_time)
{
	/* 60000 nodes, all rewritten away but one relu (five rewrites a block,
	 * the first block four); quadratic behaviour would take minutes */
	enum { BLOCKS = 10000 };
	size_t cap = (size_t)BLOCKS * 200 + 256, n = 0;
	char *text = xmalloc(cap);
	n += (size_t)snprintf(text + n, cap - n, "graph g {\n  input x : f32[4, 8]\n");
	const char *prev = "x";
	char pb[32];
	for (int i = 0; i < BLOCKS; i++) {
		n += (size_t)snprintf(text + n, cap - n,
				      "  a%d = identity(%s)\n  b%d = reshape(a%d, shape=[8, 4])\n  c%d = flatten(b%d, axis=0)\n"
				      "  d%d = reshape(c%d, shape=[4, 8])\n  e%d = relu(d%d)\n  f%d = relu(e%d)\n",
				      i, prev, i, i, i, i, i, i, i, i, i, i);
		cr_assert(n < cap, "the model text outgrew its buffer");
		snprintf(pb, sizeof pb, "f%d", i);
		prev = pb;
	}
	snprintf(text + n, cap - n, "  output %s\n}\n", prev);
	Graph *g = t_model(text);
	free(text);
	int ch = canon(g);
	cr_assert_eq(count_compute(g), 1, "one relu left of %d", 6 * BLOCKS);
	cr_assert_eq(ch, 5 * BLOCKS - 1);
	graph_free(g);
}

/* The erf GELU as PyTorch exports nn.GELU (opsets below 20): five ops. */
static const char *gelu_text(const char *first, const char *rest)
{
	static char buf[1024];
	snprintf(buf, sizeof buf,
		 "graph g {\n  input x : f32[4, 33]\n  const s2 : f32[] = [1.4142135381698608]\n"
		 "  const r2 : f32[] = [0.7071067690849304]\n  const one : f32[] = [1]\n  const half : f32[] = [0.5]\n"
		 "  const bad : f32[] = [0.6]\n%s%s  output y\n}\n",
		 first, rest);
	return buf;
}

Test(canonicalize, exported_gelu_becomes_gelu)
{
	opt = 2;
	static const char *const forms[] = {
		/* PyTorch: div, erf, add, mul by x, mul by 0.5 */
		"  d = div(x, s2)\n  e = erf(d)\n  a = add(e, one)\n  m = mul(x, a)\n  y = mul(m, half)\n",
		/* 0.5 first, x * (1 / sqrt 2), operands the other way round */
		"  d = mul(r2, x)\n  e = erf(d)\n  a = add(one, e)\n  m = mul(half, x)\n  y = mul(a, m)\n",
	};
	for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
		int ch;
		Graph *g = check_canon(gelu_text(forms[f], ""), 1e-6, &ch);
		cr_assert_eq(ch, 1, "form %zu", f);
		cr_assert_eq(count_compute(g), 1, "form %zu: one gelu left", f);
		cr_assert_eq(g->outputs[0]->def->op, OP_GELU);
		cr_assert_str_eq(g->outputs[0]->name, "y");
		cr_assert_str_eq(attr_s(g->outputs[0]->def, "approximate"), "none");
		graph_free(g);
	}
}

Test(canonicalize, exported_gelu_waits_for_O2_and_must_not_fire)
{
	const char *pytorch = "  d = div(x, s2)\n  e = erf(d)\n  a = add(e, one)\n  m = mul(x, a)\n  y = mul(m, half)\n";
	int ch;
	Graph *g = check_canon(gelu_text(pytorch, ""), 0, &ch);
	cr_assert_eq(t_count_op(g, OP_GELU), 0, "-O1: the five ops stay");
	graph_free(g);
	opt = 2;
	static const char *const kept[] = {
		/* not 0.5 */
		"  d = div(x, s2)\n  e = erf(d)\n  a = add(e, one)\n  m = mul(x, a)\n  y = mul(m, bad)\n",
		/* erf of another value than x / sqrt 2 */
		"  d = div(x, bad)\n  e = erf(d)\n  a = add(e, one)\n  m = mul(x, a)\n  y = mul(m, half)\n",
		/* an intermediate used twice */
		"  d = div(x, s2)\n  e = erf(d)\n  a = add(e, one)\n  m = mul(x, a)\n  z = mul(m, half)\n  y = add(z, e)\n",
		/* x * erf(...) of another x */
		"  d = div(x, s2)\n  e = erf(d)\n  a = add(e, one)\n  w = neg(x)\n  m = mul(w, a)\n  y = mul(m, half)\n",
	};
	for (size_t k = 0; k < sizeof kept / sizeof *kept; k++) {
		g = check_canon(gelu_text(kept[k], ""), 0, &ch);
		cr_assert_eq(t_count_op(g, OP_GELU), 0, "case %zu must not become a gelu", k);
		graph_free(g);
	}
}
