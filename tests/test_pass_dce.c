/* pass_dce: dead-code elimination.  Each case runs the pass on a small
 * model, checks what went and what stayed, that the graph still checks
 * (with no dead node left to warn about), and that the reference
 * interpreter gives the same outputs before and after. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "passes.h"
#include "test_util.h"
#include "util.h"

/* Nothing dead is left: the verifier has nothing to warn about. */
static void assert_nothing_dead(Graph *g)
{
	Diag d;
	diag_init(&d);
	cr_assert(graph_verify(g, &d));
	cr_assert_null(diag_find(&d, "is computed but never used"));
	diag_free(&d);
}

static int dce(Graph *g)
{
	int changes = t_run_pass(g, pass_dce, (PassContext){.opt_level = 1});
	assert_nothing_dead(g);
	return changes;
}

/* The model before and after the pass compute the same, bit for bit. */
static Graph *dce_model(const char *text, int *changes)
{
	Graph *g = t_pass_model(text, pass_dce, (PassContext){.opt_level = 1}, 0, 0, changes);
	assert_nothing_dead(g);
	return g;
}

Test(dce, dead_nodes_go_inputs_and_live_results_stay)
{
	int ch;
	Graph *g = dce_model("graph g {\n  input x : f32[4]\n  input u : f32[4]\n  t = exp(x)\n  s = neg(t)\n"
			     "  const w : f32[4] = zeros\n  v = add(u, w)\n  a, _b = split(x, split=[1, 3])\n"
			     "  y = relu(a)\n  output y\n}\n",
			     &ch);
	cr_assert_eq(ch, 4); /* s, t, v, w */
	cr_assert_eq(t_count_op(g, OP_EXP), 0);
	cr_assert_eq(t_count_op(g, OP_NEG), 0);
	cr_assert_eq(t_count_op(g, OP_ADD), 0);
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 0);
	cr_assert_null(graph_find_value(g, "t"));
	cr_assert_null(graph_find_value(g, "w"));
	/* an unused input stays an input, in its place */
	cr_assert_eq(g->ninputs, 2);
	cr_assert_str_eq(g->inputs[1]->name, "u");
	cr_assert(t_val(g, "u")->is_input);
	/* a live node keeps its unused result */
	cr_assert_eq(t_count_op(g, OP_SPLIT), 1);
	Value *b = t_val(g, "_b");
	cr_assert_eq(b->def, t_val(g, "a")->def);
	cr_assert_eq(b->def->nout, 2);
	graph_free(g);
}

Test(dce, nothing_dead)
{
	int ch;
	Graph *g = dce_model("graph g {\n  input x : f32[2]\n  const a : f32[2] = [1, 2]\n  t = add(x, a)\n"
			     "  y = relu(t)\n  output t, y\n}\n",
			     &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(g->nnodes, 3);
	graph_free(g);
}

Test(dce, reader_of_an_output)
{
	/* the dead node reads an output: the output's node stays */
	int ch;
	Graph *g = dce_model("graph g {\n  input x : f32[2]\n  y = relu(x)\n  d = exp(y)\n  e = neg(d)\n  output y\n}\n",
			     &ch);
	cr_assert_eq(ch, 2);
	cr_assert_eq(g->nnodes, 1);
	cr_assert_eq(t_val(g, "y")->def->op, OP_RELU);
	graph_free(g);
}

Test(dce, dead_multi_result_node)
{
	int ch;
	Graph *g = dce_model("graph g {\n  input x : f32[4]\n  a, b = split(x)\n  p, q = split(x, split=[3, 1])\n"
			     "  y = relu(q)\n  output y\n}\n",
			     &ch);
	cr_assert_eq(ch, 1);
	cr_assert_eq(t_count_op(g, OP_SPLIT), 1);
	cr_assert_null(graph_find_value(g, "a"));
	cr_assert_null(graph_find_value(g, "b"));
	cr_assert_not_null(graph_find_value(g, "p"));
	graph_free(g);
}

Test(dce, long_dead_chain_is_linear, .timeout = 60)
{
	/* 100,000 dead nodes beside a live one: one walk */
	int n = 100000;
	size_t cap = (size_t)n * 40 + 200, len = 0;
	char *text = xmalloc(cap);
	len += (size_t)snprintf(text + len, cap - len, "graph g {\n  input x : f32[2]\n  y = relu(x)\n  d0 = neg(x)\n");
	for (int i = 1; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "  d%d = neg(d%d)\n", i, i - 1);
	snprintf(text + len, cap - len, "  output y\n}\n");
	Graph *g = t_model(text);
	free(text);
	clock_t t0 = clock();
	cr_assert_eq(dce(g), n);
	double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
	cr_assert_eq(g->nnodes, 1);
	cr_assert_eq(g->nvalues, 2);
	cr_assert(s < 20, "DCE of a 100,000-node dead chain took %.1f s", s);
	graph_free(g);
}
