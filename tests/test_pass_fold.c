/* pass_fold: constant folding.  Each case folds a small model, checks the
 * structure after it (what became a constant, what stayed), that the graph
 * still checks, and that the reference interpreter gives the same outputs,
 * bit for bit, before and after; and the cases where it must not fire. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "passes.h"
#include "test_util.h"
#include "util.h"

static PassContext fold_cx(uint64_t limit) { return (PassContext){.opt_level = 1, .fold_limit_bytes = limit}; }

static int fold(Graph *g, uint64_t limit) { return t_run_pass(g, pass_fold, fold_cx(limit)); }

/* Fold the model (limit as in PassContext), compare with the unfolded one
 * (bit for bit); returns the folded graph and the change count. */
static Graph *fold_model(const char *text, uint64_t limit, int *changes)
{
	return t_pass_model(text, pass_fold, fold_cx(limit), 0, 0, changes);
}

/* The data of a constant value. */
static Tensor *const_data(const Value *v)
{
	cr_assert(t_is_const(v), "'%s' is not a constant", v->name);
	Tensor *t = tensor_new(v->type.dtype, &v->type.shape);
	Diag d;
	diag_init(&d);
	cr_assert(materialize_constant(v->def, t, &d));
	diag_free(&d);
	return t;
}

Test(fold, chain_folds_in_one_walk)
{
	int ch;
	Graph *g = fold_model("graph g {\n  input x : f32[3]\n  const a : f32[3] = [1, 2, 3]\n"
			      "  const b : f32[3] = fill(0.5)\n  t = add(a, b)\n  u = mul(t, a)\n  e = neg(u)\n"
			      "  y = add(x, e)\n  output y\n}\n",
			      0, &ch);
	cr_assert_eq(ch, 3);
	cr_assert_eq(t_count_op(g, OP_ADD), 1);
	cr_assert_eq(t_count_op(g, OP_MUL), 0);
	cr_assert_eq(t_count_op(g, OP_NEG), 0);
	/* e is a constant under its own name; what only fed the fold is gone */
	Value *e = t_val(g, "e");
	cr_assert(t_is_const(e));
	cr_assert_eq(e->def->init.kind, INIT_TENSOR);
	cr_assert_eq(t_val(g, "y")->def->in[1], e);
	cr_assert_null(graph_find_value(g, "t"));
	cr_assert_null(graph_find_value(g, "u"));
	cr_assert_null(graph_find_value(g, "a"));
	cr_assert_eq(g->nnodes, 2);
	Tensor *t = const_data(e);
	t_assert_close(t, 1, DIMS(3), F32S(-1.5f, -5.0f, -10.5f), 0, 0);
	tensor_free(t);
	graph_free(g);
}

Test(fold, shape_of_an_input_is_known)
{
	int ch;
	Graph *g = fold_model("graph g {\n  input x : f32[2, 5]\n  input k : i64[2]\n  s = shape(x)\n"
			      "  const two : i64[] = [2]\n  t = mul(s, two)\n  y = add(k, t)\n  output y\n}\n",
			      0, &ch);
	cr_assert_eq(ch, 2);
	cr_assert_eq(t_count_op(g, OP_SHAPE), 0);
	cr_assert_eq(t_count_op(g, OP_MUL), 0);
	Tensor *t = const_data(t_val(g, "t"));
	t_assert_i64(t, 1, DIMS(2), I64S(4, 10));
	tensor_free(t);
	/* x is still an input (unused now), in its place */
	cr_assert_eq(g->ninputs, 2);
	cr_assert_str_eq(g->inputs[0]->name, "x");
	graph_free(g);
}

Test(fold, output_stays_computed)
{
	int ch;
	/* only an output: nothing to do */
	Graph *g = fold_model("graph g {\n  const a : f32[2] = [1, 2]\n  y = neg(a)\n  output y\n}\n", 0, &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(t_count_op(g, OP_NEG), 1);
	cr_assert_eq(t_val(g, "y")->def->op, OP_NEG);
	graph_free(g);
	/* an output that a node reads too: the node takes the constant, the
	 * output keeps its node and its name */
	g = fold_model("graph g {\n  input x : f32[2]\n  const a : f32[2] = [1, 2]\n  y = neg(a)\n"
		       "  z = mul(x, y)\n  output y, z\n}\n",
		       0, &ch);
	cr_assert_eq(ch, 1);
	Value *y = t_val(g, "y");
	cr_assert_eq(y->def->op, OP_NEG);
	cr_assert(y->is_output);
	cr_assert_eq(g->outputs[0], y);
	Value *c = t_val(g, "z")->def->in[1];
	cr_assert(t_is_const(c));
	cr_assert_neq(c, y);
	graph_free(g);
}

Test(fold, results_above_the_cap_stay)
{
	const char *m = "graph g {\n  input x : f32[4]\n  const a : f32[4] = [1, 2, 3, 4]\n  t = add(a, a)\n"
			"  y = mul(x, t)\n  output y\n}\n";
	int ch;
	Graph *g = fold_model(m, 8, &ch); /* t is 16 bytes */
	cr_assert_eq(ch, 0);
	cr_assert_eq(t_count_op(g, OP_ADD), 1);
	graph_free(g);
	g = fold_model(m, 16, &ch); /* at the cap: folds */
	cr_assert_eq(ch, 1);
	cr_assert_eq(t_count_op(g, OP_ADD), 0);
	graph_free(g);
	/* an operand above the cap: not materialized, not folded */
	g = fold_model("graph g {\n  input x : f32[1]\n  const a : f32[8] = [1, 2, 3, 4, 5, 6, 7, 8]\n"
		       "  const i : i64[1] = [3]\n  t = gather(a, i, axis=0)\n  y = add(x, t)\n  output y\n}\n",
		       16, &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(t_count_op(g, OP_GATHER), 1);
	graph_free(g);
}

Test(fold, default_cap_is_16_mib)
{
	/* 0 in the context: 16 MiB.  (Structure only: no interpreter runs.) */
	Graph *g = t_model("graph g {\n  input x : f32[1]\n  const c : f32[] = [2]\n"
			   "  t = expand(c, shape=[4194304])\n  y = add(x, t)\n  output y\n}\n");
	cr_assert_eq(fold(g, 0), 1);
	cr_assert_eq(t_count_op(g, OP_EXPAND), 0);
	graph_free(g);
	g = t_model("graph g {\n  input x : f32[1]\n  const c : f32[] = [2]\n"
		    "  t = expand(c, shape=[4194305])\n  y = add(x, t)\n  output y\n}\n");
	cr_assert_eq(fold(g, 0), 0);
	cr_assert_eq(t_count_op(g, OP_EXPAND), 1);
	graph_free(g);
}

Test(fold, kernel_error_leaves_the_node)
{
	/* an index out of range is the run time's error, not the compiler's */
	Graph *g = t_model("graph g {\n  input x : f32[1]\n  const data : f32[3] = [1, 2, 3]\n"
			   "  const idx : i64[1] = [5]\n  t = gather(data, idx, axis=0)\n  y = add(x, t)\n"
			   "  output y\n}\n");
	cr_assert_eq(fold(g, 0), 0);
	cr_assert_eq(t_count_op(g, OP_GATHER), 1);
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 2);
	graph_free(g);
}

Test(fold, multi_result_nodes)
{
	int ch;
	/* every result read: all become constants; an unused one (_r) needs none */
	Graph *g = fold_model("graph g {\n  input x : f32[2]\n  const c : f32[5] = [1, 2, 3, 4, 5]\n"
			      "  a, b, _r = split(c, split=[2, 2, 1])\n  t = add(x, a)\n  y = mul(t, b)\n"
			      "  output y\n}\n",
			      0, &ch);
	cr_assert_eq(ch, 1);
	cr_assert_eq(t_count_op(g, OP_SPLIT), 0);
	Tensor *t = const_data(t_val(g, "b"));
	t_assert_close(t, 1, DIMS(2), F32S(3, 4), 0, 0);
	tensor_free(t);
	cr_assert_null(graph_find_value(g, "_r"));
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 2);
	graph_free(g);
	/* dropout (inference: deterministic) with its mask */
	g = fold_model("graph g {\n  input x : f32[2]\n  input k : bool[2]\n  const c : f32[2] = [1, 2]\n"
		       "  o, m = dropout(c)\n  y = add(x, o)\n  z = concat(k, m, axis=0)\n  output y, z\n}\n",
		       0, &ch);
	cr_assert_eq(ch, 1);
	cr_assert_eq(t_count_op(g, OP_DROPOUT), 0);
	cr_assert(t_is_const(t_val(g, "m")));
	graph_free(g);
}

Test(fold, multi_result_node_with_an_output)
{
	/* a result that is an output keeps the node; the other result's reader
	 * takes a constant */
	int ch;
	Graph *g = fold_model("graph g {\n  input x : f32[2]\n  const c : f32[4] = [1, 2, 3, 4]\n"
			      "  a, b = split(c, split=[2, 2])\n  y = add(x, b)\n  output a, y\n}\n",
			      0, &ch);
	cr_assert_eq(ch, 1);
	cr_assert_eq(t_count_op(g, OP_SPLIT), 1);
	cr_assert_eq(t_val(g, "a")->def->op, OP_SPLIT);
	cr_assert(t_is_const(t_val(g, "b")));
	cr_assert_eq(t_val(g, "y")->def->in[1], t_val(g, "b"));
	graph_free(g);
}

Test(fold, constant_of_shape)
{
	int ch;
	Graph *g = fold_model("graph g {\n  input x : f32[2, 3]\n  z = constant_of_shape(shape=[2, 3], value=1.5)\n"
			      "  y = add(x, z)\n  output y\n}\n",
			      0, &ch);
	cr_assert_eq(ch, 1);
	cr_assert_eq(t_count_op(g, OP_CONSTANT_OF_SHAPE), 0);
	Value *z = t_val(g, "z");
	cr_assert(t_is_const(z));
	cr_assert_eq(z->def->init.kind, INIT_FILL); /* no data to hold */
	cr_assert_eq(z->def->init.a, 1.5);
	graph_free(g);
	g = fold_model("graph g {\n  input x : i64[3]\n  z = constant_of_shape(shape=[3], value=7, dtype=i64)\n"
		       "  w = mul(z, z)\n  y = add(x, w)\n  output y\n}\n",
		       0, &ch);
	cr_assert_eq(ch, 2);
	cr_assert_eq(t_count_op(g, OP_MUL), 0);
	Tensor *t = const_data(t_val(g, "w"));
	t_assert_i64(t, 1, DIMS(3), I64S(49, 49, 49));
	tensor_free(t);
	graph_free(g);
}

Test(fold, generated_constants)
{
	/* random, normal and zeros operands are materialized as the
	 * interpreter does */
	int ch;
	Graph *g = fold_model("graph g {\n  input x : f32[2, 4]\n  const w : f32[4, 4] = normal(seed=3)\n"
			      "  const r : f32[4] = random(seed=5, low=-2, high=2)\n  const z : f32[4] = zeros\n"
			      "  t = matmul(w, w)\n  s = add(r, z)\n  u = relu(s)\n  h = matmul(x, t)\n"
			      "  y = add(h, u)\n  output y\n}\n",
			      0, &ch);
	cr_assert_eq(ch, 3);
	cr_assert_eq(t_count_op(g, OP_MATMUL), 1);
	cr_assert_eq(t_count_op(g, OP_RELU), 0);
	graph_free(g);
}

Test(fold, nothing_to_fold)
{
	int ch;
	Graph *g = fold_model("graph g {\n  input x : f32[2]\n  const a : f32[2] = [1, 2]\n  t = add(x, a)\n"
			      "  y = relu(t)\n  output y\n}\n",
			      0, &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(g->nnodes, 3);
	graph_free(g);
}

/* A chain of n negations of a constant, added to an input. */
static char *neg_chain(int n)
{
	size_t cap = (size_t)n * 40 + 200, len = 0;
	char *s = xmalloc(cap);
	len += (size_t)snprintf(s + len, cap - len, "graph g {\n  input x : f32[2]\n  const c : f32[2] = [1, 2]\n");
	len += (size_t)snprintf(s + len, cap - len, "  v0 = neg(c)\n");
	for (int i = 1; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "  v%d = neg(v%d)\n", i, i - 1);
	snprintf(s + len, cap - len, "  y = add(x, v%d)\n  output y\n}\n", n - 1);
	return s;
}

Test(fold, long_chain_is_linear, .timeout = 60)
{
	char *text = neg_chain(100000);
	Graph *g = t_model(text);
	free(text);
	clock_t t0 = clock();
	cr_assert_eq(fold(g, 0), 100000);
	double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
	cr_assert_eq(g->nnodes, 2);
	Tensor *t = const_data(t_val(g, "v99999"));
	t_assert_close(t, 1, DIMS(2), F32S(1, 2), 0, 0); /* an even number of negations */
	tensor_free(t);
	cr_assert(s < 20, "folding a 100,000-node chain took %.1f s", s);
	graph_free(g);
}
