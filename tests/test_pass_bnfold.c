/* test_pass_bnfold: batchnorm folded into the conv or gemm before it: the
 * structure after the pass, the reference interpreter's results before and
 * after (within 1e-5 relative: the fold reassociates), and the cases where
 * it must not fire. */
#include <stdio.h>
#include <stdlib.h>

#include "passes.h"
#include "test_util.h"

/* The batchnorm's statistics, on channel count C (printf argument: C four
 * times), named bn.scale, bn.bias, bn.mean, bn.var. */
#define BN_CONSTS(C)                                                       \
	"  const bn.scale : f32[" C "] = random(seed=21, low=0.5, high=1.5)\n" \
	"  const bn.bias : f32[" C "] = normal(seed=22, mean=0, std=0.5)\n"   \
	"  const bn.mean : f32[" C "] = normal(seed=23, mean=0, std=0.5)\n"   \
	"  const bn.var : f32[" C "] = random(seed=24, low=0.2, high=2)\n"

/* Run the pass on text's graph (which must pass the structure check
 * before it); the graph after it must pass the structure check and the
 * verifier.  *changes: what the pass counted. */
static Graph *run_pass(const char *text, int *changes)
{
	Graph *g = t_model(text);
	t_check_graph(g);
	int ch = t_run_pass(g, pass_bnfold, (PassContext){.opt_level = 1, .fold_limit_bytes = 1 << 20});
	if (changes)
		*changes = ch;
	return g;
}

/* The folded graph's outputs equal the unfolded one's (reference
 * interpreter, seeded inputs) within 1e-5 relative. */
static void assert_same_results(const char *text, const Graph *folded)
{
	Graph *ref = t_model(text);
	t_assert_same_results(ref, folded, 100, 1e-5, 1e-6);
	graph_free(ref);
}

/* ---- conv ----------------------------------------------------------- */

static const char conv_bias[] =
	"graph g {\n"
	"  input x : f32[2, 3, 9, 9]\n"
	"  const w : f32[4, 3, 3, 3] = normal(seed=1, mean=0, std=0.5)\n"
	"  const b : f32[4] = normal(seed=2, mean=0, std=0.5)\n"
	BN_CONSTS("4")
	"  c = conv(x, w, b, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])\n"
	"  n = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var, epsilon=1e-3)\n"
	"  y = relu(n)\n"
	"  output y\n"
	"}\n";

Test(bnfold, conv_with_bias)
{
	int changes = 0;
	Graph *g = run_pass(conv_bias, &changes);
	cr_assert_eq(changes, 1);
	cr_assert_eq(t_count_op(g, OP_BATCHNORM), 0);
	cr_assert_eq(t_count_op(g, OP_CONV), 1);
	cr_assert_eq(t_count_op(g, OP_RELU), 1);
	/* 2 new constants; w, b and the 4 statistics are gone */
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 2);
	Node *cv = t_find_op(g, OP_CONV);
	cr_assert_eq(cv->nin, 3);
	cr_assert_str_eq(cv->in[0]->name, "x");
	cr_assert_str_eq(cv->in[1]->name, "w.folded");
	cr_assert_str_eq(cv->in[2]->name, "b.folded");
	cr_assert_eq(cv->in[1]->def->init.kind, INIT_TENSOR);
	/* the conv's attributes kept; its result takes the batchnorm's name */
	const int64_t *st;
	cr_assert_eq(attr_ints(cv, "strides", &st), 2);
	cr_assert_eq(st[0], 2);
	cr_assert_str_eq(cv->out[0]->name, "n");
	cr_assert_eq(t_find_op(g, OP_RELU)->in[0], cv->out[0]);
	cr_assert_null(graph_find_value(g, "w"));
	cr_assert_null(graph_find_value(g, "bn.var"));
	cr_assert_null(graph_find_value(g, "c"));
	assert_same_results(conv_bias, g);
	graph_free(g);
}

static const char conv_nobias[] =
	"graph g {\n"
	"  input x : f32[1, 3, 6, 5]\n"
	"  const w : f32[5, 3, 2, 3] = normal(seed=3, mean=0, std=0.5)\n"
	BN_CONSTS("5")
	"  c = conv(x, w, dilations=[2, 1], pads=[0, 1, 1, 0])\n"
	"  n = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var)\n"
	"  output n\n"
	"}\n";

Test(bnfold, conv_without_bias_gets_one)
{
	int changes = 0;
	Graph *g = run_pass(conv_nobias, &changes);
	cr_assert_eq(changes, 1);
	cr_assert_eq(g->nnodes, 3, "w', b', conv: %d nodes", g->nnodes);
	Node *cv = t_find_op(g, OP_CONV);
	cr_assert_eq(cv->nin, 3);
	cr_assert_str_eq(cv->in[2]->name, "c.bias");
	cr_assert(shape_eq(&cv->in[2]->type.shape, &(Shape){1, {5}}));
	/* the batchnorm's result was the output: the conv's is now, by name */
	cr_assert_eq(g->noutputs, 1);
	cr_assert_eq(g->outputs[0], cv->out[0]);
	cr_assert_str_eq(g->outputs[0]->name, "n");
	assert_same_results(conv_nobias, g);
	graph_free(g);
}

static const char conv_depthwise[] =
	"graph g {\n"
	"  input x : f32[2, 6, 7, 7]\n"
	"  const w : f32[6, 1, 3, 3] = normal(seed=4, mean=0, std=0.5)\n"
	"  const b : f32[6] = normal(seed=5, mean=0, std=0.5)\n"
	BN_CONSTS("6")
	"  c = conv(x, w, b, group=6, pads=[1, 1, 1, 1])\n"
	"  n = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var, epsilon=1e-5)\n"
	"  output n\n"
	"}\n";

Test(bnfold, conv_depthwise)
{
	Graph *g = run_pass(conv_depthwise, NULL);
	cr_assert_eq(t_count_op(g, OP_BATCHNORM), 0);
	Node *cv = t_find_op(g, OP_CONV);
	cr_assert_eq(attr_i(cv, "group"), 6);
	assert_same_results(conv_depthwise, g);
	graph_free(g);
}

static const char conv_groups[] =
	"graph g {\n"
	"  input x : f32[1, 4, 5, 5]\n"
	"  const w : f32[6, 2, 3, 3] = normal(seed=6, mean=0, std=0.5)\n"
	BN_CONSTS("6")
	"  c = conv(x, w, group=2)\n"
	"  n = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var, epsilon=0.01)\n"
	"  output n\n"
	"}\n";

Test(bnfold, conv_groups)
{
	Graph *g = run_pass(conv_groups, NULL);
	cr_assert_eq(t_count_op(g, OP_BATCHNORM), 0);
	cr_assert_eq(t_find_op(g, OP_CONV)->nin, 3);
	assert_same_results(conv_groups, g);
	graph_free(g);
}

/* conv 1-d and 3-d: the channel is axis 1 whatever the rank */
static const char conv_1d_3d[] =
	"graph g {\n"
	"  input x : f32[2, 3, 10]\n"
	"  input z : f32[1, 2, 4, 4, 4]\n"
	"  const w : f32[4, 3, 3] = normal(seed=7, mean=0, std=0.5)\n"
	"  const w3 : f32[4, 2, 2, 2, 2] = normal(seed=8, mean=0, std=0.5)\n"
	BN_CONSTS("4")
	"  c = conv(x, w)\n"
	"  n = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var)\n"
	"  c3 = conv(z, w3)\n"
	"  n3 = batchnorm(c3, bn.scale, bn.bias, bn.mean, bn.var)\n"
	"  output n, n3\n"
	"}\n";

Test(bnfold, conv_1d_and_3d_sharing_statistics)
{
	int changes = 0;
	Graph *g = run_pass(conv_1d_3d, &changes);
	cr_assert_eq(changes, 2);
	cr_assert_eq(t_count_op(g, OP_BATCHNORM), 0);
	cr_assert_null(graph_find_value(g, "bn.scale"), "shared statistics removed once unused");
	assert_same_results(conv_1d_3d, g);
	graph_free(g);
}

/* two convs share the weights: each fold gets its own; the shared one is
 * removed only after the second */
static const char shared_weights[] =
	"graph g {\n"
	"  input x : f32[1, 3, 5, 5]\n"
	"  input x2 : f32[1, 3, 5, 5]\n"
	"  const w : f32[4, 3, 1, 1] = normal(seed=9, mean=0, std=0.5)\n"
	BN_CONSTS("4")
	"  c = conv(x, w)\n"
	"  n = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var)\n"
	"  c2 = conv(x2, w)\n"
	"  d = add(c2, c2)\n"
	"  s = add(n, d)\n"
	"  output s\n"
	"}\n";

Test(bnfold, shared_weights_stay_while_used)
{
	int changes = 0;
	Graph *g = run_pass(shared_weights, &changes);
	cr_assert_eq(changes, 1);
	cr_assert_not_null(graph_find_value(g, "w"), "still used by c2");
	cr_assert_not_null(graph_find_value(g, "w.folded"));
	cr_assert_eq(t_count_op(g, OP_CONV), 2);
	assert_same_results(shared_weights, g);
	graph_free(g);
}

/* batchnorm after batchnorm: the second folds into the first's fold */
static const char bn_chain[] =
	"graph g {\n"
	"  input x : f32[1, 2, 4, 4]\n"
	"  const w : f32[3, 2, 3, 3] = normal(seed=10, mean=0, std=0.5)\n"
	BN_CONSTS("3")
	"  const s2 : f32[3] = [2, -1, 0.5]\n"
	"  const b2 : f32[3] = [0.1, 0.2, 0.3]\n"
	"  const m2 : f32[3] = [0.5, 0, -0.5]\n"
	"  const v2 : f32[3] = [1, 4, 0.25]\n"
	"  c = conv(x, w, pads=[1, 1, 1, 1])\n"
	"  n = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var)\n"
	"  n2 = batchnorm(n, s2, b2, m2, v2, epsilon=0)\n"
	"  output n2\n"
	"}\n";

Test(bnfold, batchnorm_chain)
{
	int changes = 0;
	Graph *g = run_pass(bn_chain, &changes);
	cr_assert_eq(changes, 2);
	cr_assert_eq(g->nnodes, 3);
	cr_assert_str_eq(g->outputs[0]->name, "n2");
	assert_same_results(bn_chain, g);
	graph_free(g);
}

/* ---- gemm ----------------------------------------------------------- */

static const char gemm_tb0[] =
	"graph g {\n"
	"  input a : f32[4, 6]\n"
	"  const B : f32[6, 5] = normal(seed=11, mean=0, std=0.5)\n"
	"  const C : f32[5] = normal(seed=12, mean=0, std=0.5)\n"
	BN_CONSTS("5")
	"  p = gemm(a, B, C, alpha=0.75, beta=1.5)\n"
	"  n = batchnorm(p, bn.scale, bn.bias, bn.mean, bn.var)\n"
	"  output n\n"
	"}\n";

Test(bnfold, gemm_trans_b_0)
{
	int changes = 0;
	Graph *g = run_pass(gemm_tb0, &changes);
	cr_assert_eq(changes, 1);
	cr_assert_eq(t_count_op(g, OP_BATCHNORM), 0);
	Node *gm = t_find_op(g, OP_GEMM);
	cr_assert_eq(gm->nin, 3);
	cr_assert_str_eq(gm->in[1]->name, "B.folded");
	cr_assert(shape_eq(&gm->in[1]->type.shape, &(Shape){2, {6, 5}}));
	cr_assert(shape_eq(&gm->in[2]->type.shape, &(Shape){1, {5}}));
	cr_assert_float_eq(attr_f(gm, "alpha"), 0.75, 0);
	cr_assert_float_eq(attr_f(gm, "beta"), 1.0, 0, "beta went into C'");
	assert_same_results(gemm_tb0, g);
	graph_free(g);
}

static const char gemm_tb1[] =
	"graph g {\n"
	"  input a : f32[6, 3]\n"
	"  const B : f32[5, 6] = normal(seed=13, mean=0, std=0.5)\n"
	BN_CONSTS("5")
	"  p = gemm(a, B, trans_a=1, trans_b=1)\n"
	"  n = batchnorm(p, bn.scale, bn.bias, bn.mean, bn.var)\n"
	"  r = relu(n)\n"
	"  output r\n"
	"}\n";

Test(bnfold, gemm_trans_b_1_without_c)
{
	Graph *g = run_pass(gemm_tb1, NULL);
	cr_assert_eq(t_count_op(g, OP_BATCHNORM), 0);
	Node *gm = t_find_op(g, OP_GEMM);
	cr_assert_eq(gm->nin, 3);
	cr_assert(shape_eq(&gm->in[1]->type.shape, &(Shape){2, {5, 6}}));
	cr_assert_eq(attr_i(gm, "trans_b"), 1);
	cr_assert_eq(attr_i(gm, "trans_a"), 1);
	cr_assert_str_eq(gm->out[0]->name, "n");
	assert_same_results(gemm_tb1, g);
	graph_free(g);
}

/* a C that varies along M: C' is [M, N] */
static const char gemm_rows[] =
	"graph g {\n"
	"  input a : f32[3, 4]\n"
	"  const B : f32[4, 5] = normal(seed=14, mean=0, std=0.5)\n"
	"  const C : f32[3, 1] = [1, -2, 0.5]\n"
	"  const C2 : f32[3, 5] = normal(seed=15, mean=0, std=0.5)\n"
	BN_CONSTS("5")
	"  p = gemm(a, B, C, beta=-2)\n"
	"  n = batchnorm(p, bn.scale, bn.bias, bn.mean, bn.var)\n"
	"  p2 = gemm(a, B, C2)\n"
	"  n2 = batchnorm(p2, bn.scale, bn.bias, bn.mean, bn.var)\n"
	"  output n, n2\n"
	"}\n";

Test(bnfold, gemm_c_along_rows)
{
	int changes = 0;
	Graph *g = run_pass(gemm_rows, &changes);
	cr_assert_eq(changes, 2);
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->op == OP_GEMM)
			cr_assert(shape_eq(&g->nodes[i]->in[2]->type.shape, &(Shape){2, {3, 5}}));
	assert_same_results(gemm_rows, g);
	graph_free(g);
}

/* ---- must not fire -------------------------------------------------- */

static void assert_unchanged(const char *text)
{
	int changes = -1;
	Graph *before = t_model(text);
	Graph *g = run_pass(text, &changes);
	cr_assert_eq(changes, 0);
	cr_assert_eq(g->nnodes, before->nnodes);
	for (int i = 0; i < g->nnodes; i++) {
		cr_assert_eq(g->nodes[i]->op, before->nodes[i]->op);
		cr_assert_str_eq(g->nodes[i]->out[0]->name, before->nodes[i]->out[0]->name);
		cr_assert_eq(g->nodes[i]->nin, before->nodes[i]->nin);
	}
	cr_assert_eq(t_count_op(g, OP_BATCHNORM), 1);
	graph_free(before);
	graph_free(g);
}

Test(bnfold, not_when_conv_result_used_twice)
{
	assert_unchanged("graph g {\n"
			 "  input x : f32[1, 2, 4, 4]\n"
			 "  const w : f32[3, 2, 1, 1] = fill(0.5)\n" BN_CONSTS("3")
			 "  c = conv(x, w)\n"
			 "  n = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var)\n"
			 "  s = add(n, c)\n"
			 "  output s\n"
			 "}\n");
}

Test(bnfold, not_when_conv_result_is_an_output)
{
	assert_unchanged("graph g {\n"
			 "  input x : f32[1, 2, 4, 4]\n"
			 "  const w : f32[3, 2, 1, 1] = fill(0.5)\n" BN_CONSTS("3")
			 "  c = conv(x, w)\n"
			 "  n = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var)\n"
			 "  output n, c\n"
			 "}\n");
}

Test(bnfold, not_with_statistics_known_at_run_time)
{
	assert_unchanged("graph g {\n"
			 "  input x : f32[1, 2, 4, 4]\n"
			 "  input mean : f32[3]\n"
			 "  const w : f32[3, 2, 1, 1] = fill(0.5)\n" BN_CONSTS("3")
			 "  c = conv(x, w)\n"
			 "  n = batchnorm(c, bn.scale, bn.bias, mean, bn.var)\n"
			 "  output n\n"
			 "}\n");
}

Test(bnfold, not_with_weights_known_at_run_time)
{
	assert_unchanged("graph g {\n"
			 "  input x : f32[1, 2, 4, 4]\n"
			 "  input w : f32[3, 2, 1, 1]\n" BN_CONSTS("3")
			 "  c = conv(x, w)\n"
			 "  n = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var)\n"
			 "  output n\n"
			 "}\n");
}

Test(bnfold, not_in_training_mode)
{
	assert_unchanged("graph g {\n"
			 "  input x : f32[2, 3, 4, 4]\n"
			 "  const w : f32[3, 3, 1, 1] = fill(0.5)\n" BN_CONSTS("3")
			 "  c = conv(x, w)\n"
			 "  n = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var, training_mode=1)\n"
			 "  output n\n"
			 "}\n");
	assert_unchanged("graph g {\n"
			 "  input x : f32[2, 3, 4, 4]\n"
			 "  const w : f32[3, 3, 1, 1] = fill(0.5)\n" BN_CONSTS("3")
			 "  c = conv(x, w)\n"
			 "  n, rm, rv = batchnorm(c, bn.scale, bn.bias, bn.mean, bn.var, training_mode=1)\n"
			 "  output n, rm, rv\n"
			 "}\n");
}

Test(bnfold, not_after_other_ops)
{
	assert_unchanged("graph g {\n"
			 "  input x : f32[4, 3]\n"
			 "  const B : f32[3, 3] = fill(0.5)\n" BN_CONSTS("3")
			 "  p = matmul(x, B)\n"
			 "  n = batchnorm(p, bn.scale, bn.bias, bn.mean, bn.var)\n"
			 "  output n\n"
			 "}\n");
}

/* zero variance with epsilon 0: s is infinite; the batchnorm's own kernel
 * gives 0 where x equals the mean, a folded weight could not */
Test(bnfold, not_with_infinite_scale)
{
	assert_unchanged("graph g {\n"
			 "  input x : f32[1, 2, 4, 4]\n"
			 "  const w : f32[3, 2, 1, 1] = fill(0.5)\n"
			 "  const s : f32[3] = [1, 1, 1]\n"
			 "  const b : f32[3] = [0, 0, 0]\n"
			 "  const m : f32[3] = [0, 0, 0]\n"
			 "  const v : f32[3] = [1, 0, 1]\n"
			 "  c = conv(x, w)\n"
			 "  n = batchnorm(c, s, b, m, v, epsilon=0)\n"
			 "  output n\n"
			 "}\n");
}

/* a fold that would overflow f32 is left alone */
Test(bnfold, not_when_a_weight_would_overflow)
{
	assert_unchanged("graph g {\n"
			 "  input x : f32[1, 2, 4, 4]\n"
			 "  const w : f32[3, 2, 1, 1] = fill(3e38)\n"
			 "  const s : f32[3] = [1, 4, 1]\n"
			 "  const b : f32[3] = [0, 0, 0]\n"
			 "  const m : f32[3] = [0, 0, 0]\n"
			 "  const v : f32[3] = [1, 1, 1]\n"
			 "  c = conv(x, w)\n"
			 "  n = batchnorm(c, s, b, m, v, epsilon=0)\n"
			 "  output n\n"
			 "}\n");
}

/* nothing to fold: true, no change, the graph as it was */
Test(bnfold, no_batchnorm)
{
	int changes = -1;
	Graph *g = run_pass("graph g {\n  input x : f32[2]\n  y = relu(x)\n  output y\n}\n", &changes);
	cr_assert_eq(changes, 0);
	cr_assert_eq(g->nnodes, 1);
	graph_free(g);
}
