/* pass_cse: value numbering.  Each case runs the pass on a small model,
 * checks what was merged and what was not, that the graph still checks,
 * and that the reference interpreter gives the same outputs, bit for bit,
 * before and after. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "passes.h"
#include "test_util.h"
#include "util.h"

static int cse(Graph *g) { return t_run_pass(g, pass_cse, (PassContext){.opt_level = 1}); }

/* The model before and after the pass compute the same, bit for bit. */
static Graph *cse_model(const char *text, int *changes)
{
	return t_pass_model(text, pass_cse, (PassContext){.opt_level = 1}, 0, 0, changes);
}

Test(cse, equal_nodes_merge_in_one_walk)
{
	int ch;
	Graph *g = cse_model("graph g {\n  input x : f32[2, 3]\n  a = relu(x)\n  b = relu(x)\n  c = exp(a)\n"
			     "  d = exp(b)\n  y = add(c, d)\n  output y\n}\n",
			     &ch);
	cr_assert_eq(ch, 2);
	cr_assert_eq(t_count_op(g, OP_RELU), 1);
	cr_assert_eq(t_count_op(g, OP_EXP), 1);
	Node *y = t_val(g, "y")->def;
	cr_assert_eq(y->in[0], t_val(g, "c"));
	cr_assert_eq(y->in[1], t_val(g, "c"));
	cr_assert_null(graph_find_value(g, "b"));
	cr_assert_null(graph_find_value(g, "d"));
	graph_free(g);
}

Test(cse, different_attribute_values_stay)
{
	int ch;
	Graph *g = cse_model("graph g {\n  input x : f32[2, 3]\n  a = softmax(x, axis=0)\n  b = softmax(x, axis=1)\n"
			     "  c = leaky_relu(x, alpha=0.1)\n  d = leaky_relu(x, alpha=0.2)\n"
			     "  e = gelu(x, approximate=\"tanh\")\n  f = gelu(x, approximate=\"none\")\n"
			     "  s = sum(a, b, c, d, e, f)\n  output s\n}\n",
			     &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(t_count_op(g, OP_SOFTMAX), 2);
	cr_assert_eq(t_count_op(g, OP_LEAKY_RELU), 2);
	cr_assert_eq(t_count_op(g, OP_GELU), 2);
	graph_free(g);
	/* list attributes: another perm, another split */
	g = cse_model("graph g {\n  input x : f32[2, 3, 4]\n  a = transpose(x, perm=[0, 2, 1])\n"
		      "  b = transpose(x, perm=[2, 0, 1])\n  p, q = split(x, axis=2, split=[1, 3])\n"
		      "  r, t = split(x, axis=2, split=[3, 1])\n  output a, b, p, q, r, t\n}\n",
		      &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(t_count_op(g, OP_TRANSPOSE), 2);
	cr_assert_eq(t_count_op(g, OP_SPLIT), 2);
	graph_free(g);
}

Test(cse, attribute_order_and_kind_do_not_matter)
{
	/* written in another order, an integer written for a float: equal */
	int ch;
	Graph *g = cse_model("graph g {\n  input a : f32[2, 3]\n  input b : f32[4, 3]\n"
			     "  p = gemm(a, b, alpha=2.0, trans_b=1)\n  q = gemm(a, b, trans_b=1, alpha=2)\n"
			     "  c = clip(a, min=0, max=1.5)\n  d = clip(a, max=1.5, min=0.0)\n"
			     "  y = add(p, q)\n  z = add(c, d)\n  output y, z\n}\n",
			     &ch);
	cr_assert_eq(ch, 2);
	cr_assert_eq(t_count_op(g, OP_GEMM), 1);
	cr_assert_eq(t_count_op(g, OP_CLIP), 1);
	graph_free(g);
}

Test(cse, commutative_operands_and_default_attributes)
{
	/* a + b and b + a, x * y and y * x are one (bit for bit in IEEE);
	 * an attribute left out is its default; sub, max and the variadic sum
	 * keep their operand order */
	int ch;
	Graph *g = cse_model("graph g {\n  input x : f32[2, 3]\n  input z : f32[2, 3]\n"
			     "  a = add(x, z)\n  b = add(z, x)\n  m = mul(z, x)\n  n = mul(x, z)\n"
			     "  s1 = softmax(x)\n  s2 = softmax(x, axis=-1)\n  g1 = gelu(z)\n  g2 = gelu(z, approximate=\"none\")\n"
			     "  p = sub(x, z)\n  q = sub(z, x)\n  u = max(x, z)\n  v = max(z, x)\n"
			     "  y = sum(a, b, m, n, s1, s2, g1, g2, p, q, u, v)\n  output y\n}\n",
			     &ch);
	cr_assert_eq(ch, 4);
	cr_assert_eq(t_count_op(g, OP_ADD), 1);
	cr_assert_eq(t_count_op(g, OP_MUL), 1);
	cr_assert_eq(t_count_op(g, OP_SOFTMAX), 1);
	cr_assert_eq(t_count_op(g, OP_GELU), 1);
	cr_assert_eq(t_count_op(g, OP_SUB), 2);
	cr_assert_eq(t_count_op(g, OP_MAX), 2, "max keeps its order (NaN: the first operand's rule)");
	graph_free(g);
}

Test(cse, different_operands_stay)
{
	int ch;
	Graph *g = cse_model("graph g {\n  input x : f32[2]\n  input z : f32[2]\n  a = sub(x, z)\n  b = sub(z, x)\n"
			     "  c = relu(x)\n  d = relu(z)\n  y = sum(a, b, c, d)\n  output y\n}\n",
			     &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(g->nnodes, 5);
	graph_free(g);
}

Test(cse, equal_constants_merge)
{
	int ch;
	Graph *g = cse_model("graph g {\n  input x : f32[2]\n  input k : i64[2]\n  input m : f32[2, 1]\n"
			     "  const a : f32[2] = [1, 2]\n  const b : f32[2] = [1, 2]\n  const c : f32[2] = [1, 3]\n"
			     "  const d : i64[2] = [1, 2]\n  const e : f32[2, 1] = [1, 2]\n"
			     "  const z0 : f32[2] = [0, 0]\n  const z1 : f32[2] = zeros\n  const z2 : f32[2] = [-0.0, 0]\n"
			     "  const r1 : f32[2] = random(seed=1)\n  const r2 : f32[2] = random(seed=1)\n"
			     "  const r3 : f32[2] = random(seed=2)\n"
			     "  p = add(x, a)\n  q = add(x, b)\n  s = sum(p, q, c, z0, z1, z2, r1, r2, r3)\n"
			     "  i = add(k, d)\n  j = add(m, e)\n  output s, i, j\n}\n",
			     &ch);
	/* b into a, then q into p (their operands are one now); z1 into z0 (the
	 * same bytes); r2 into r1.  -0.0 is not 0. */
	cr_assert_eq(ch, 4);
	cr_assert_null(graph_find_value(g, "b"));
	cr_assert_null(graph_find_value(g, "q"));
	cr_assert_null(graph_find_value(g, "z1"));
	cr_assert_null(graph_find_value(g, "r2"));
	cr_assert_not_null(graph_find_value(g, "z2"));
	cr_assert_not_null(graph_find_value(g, "r3"));
	cr_assert(t_is_const(t_val(g, "c")));
	cr_assert(t_is_const(t_val(g, "d")));
	cr_assert(t_is_const(t_val(g, "e")));
	cr_assert_eq(t_count_op(g, OP_ADD), 3);
	graph_free(g);
}

Test(cse, large_constants_by_initializer)
{
	/* above the data-compare size (2 MiB each): cheap initializers only */
	int ch;
	Graph *g = t_model("graph g {\n  input x : f32[512, 1024]\n  const a : f32[512, 1024] = zeros\n"
			   "  const b : f32[512, 1024] = zeros\n  const c : f32[512, 1024] = fill(1)\n"
			   "  const d : f32[512, 1024] = fill(2)\n  const e : f32[512, 1024] = random(seed=4)\n"
			   "  const f : f32[512, 1024] = random(seed=4)\n  const h : f32[512, 1024] = normal(seed=4)\n"
			   "  y = sum(x, a, b, c, d, e, f, h)\n  output y\n}\n");
	ch = cse(g);
	cr_assert_eq(ch, 2);
	cr_assert_null(graph_find_value(g, "b"));
	cr_assert_null(graph_find_value(g, "f"));
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 5);
	graph_free(g);
}

Test(cse, outputs_keep_their_names)
{
	int ch;
	/* both outputs: the later cannot become the earlier (an output already) */
	Graph *g = cse_model("graph g {\n  input x : f32[2]\n  a = relu(x)\n  b = relu(x)\n  output a, b\n}\n", &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(t_count_op(g, OP_RELU), 2);
	graph_free(g);
	/* the later is an output, the earlier is not: the earlier's node takes
	 * over the output under its name */
	g = cse_model("graph g {\n  input x : f32[2]\n  a = relu(x)\n  b = relu(x)\n  y = exp(a)\n  output y, b\n}\n",
		      &ch);
	cr_assert_eq(ch, 1);
	cr_assert_eq(t_count_op(g, OP_RELU), 1);
	Value *b = t_val(g, "b");
	cr_assert(b->is_output);
	cr_assert_eq(g->outputs[1], b);
	cr_assert_eq(t_val(g, "y")->def->in[0], b);
	cr_assert_null(graph_find_value(g, "a"));
	graph_free(g);
	/* a constant output stays */
	g = cse_model("graph g {\n  input x : f32[2]\n  const a : f32[2] = [1, 2]\n  const b : f32[2] = [1, 2]\n"
		      "  y = add(x, a)\n  output y, b\n}\n",
		      &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(t_count_op(g, OP_CONSTANT), 2);
	graph_free(g);
}

Test(cse, multi_result_nodes)
{
	int ch;
	Graph *g = cse_model("graph g {\n  input x : f32[4]\n  a1, b1 = split(x, split=[1, 3])\n"
			     "  a2, b2 = split(x, split=[1, 3])\n  s = concat(a1, b2, a2, b1, axis=0)\n  output s\n}\n",
			     &ch);
	cr_assert_eq(ch, 1);
	cr_assert_eq(t_count_op(g, OP_SPLIT), 1);
	Node *s = t_val(g, "s")->def;
	cr_assert_eq(s->in[0], s->in[2]);
	cr_assert_eq(s->in[1], s->in[3]);
	graph_free(g);
	/* a different number of results: not equal */
	g = cse_model("graph g {\n  input x : f32[4]\n  a, b = split(x)\n  p, q, r, t = split(x)\n"
		      "  s = concat(a, b, p, q, r, t, axis=0)\n  output s\n}\n",
		      &ch);
	cr_assert_eq(ch, 0);
	cr_assert_eq(t_count_op(g, OP_SPLIT), 2);
	graph_free(g);
}

Test(cse, long_graph_is_linear, .timeout = 60)
{
	/* two equal chains of 50,000 nodes: the second merges into the first */
	int n = 50000;
	size_t cap = (size_t)n * 60 + 200, len = 0;
	char *text = xmalloc(cap);
	len += (size_t)snprintf(text + len, cap - len, "graph g {\n  input x : f32[2]\n  v0 = relu(x)\n  w0 = relu(x)\n");
	for (int i = 1; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "  v%d = neg(v%d)\n  w%d = neg(w%d)\n", i, i - 1, i, i - 1);
	snprintf(text + len, cap - len, "  y = add(v%d, w%d)\n  output y\n}\n", n - 1, n - 1);
	Graph *g = t_model(text);
	free(text);
	clock_t t0 = clock();
	cr_assert_eq(cse(g), n);
	double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
	cr_assert_eq(g->nnodes, n + 1);
	cr_assert(s < 20, "CSE of a 100,000-node graph took %.1f s", s);
	graph_free(g);
}
