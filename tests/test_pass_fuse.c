/* test_pass_fuse: the kernels pass_fuse forms on small graphs (the group of
 * each node), the properties every partition must have (checked on each
 * graph independently of the pass: numbering, constants outside, convex
 * groups, the numbers a topological order of the kernels, no intermediate
 * escaping, at most one anchor, the anchor's shape), that the pass rewrites nothing, linear time on large graphs,
 * and print_groups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "passes.h"
#include "printer.h"
#include "test_util.h"

static char *print_to_string(const Graph *g, bool groups)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (groups)
		print_groups(f, g);
	else
		print_graph(f, g);
	fclose(f);
	return buf;
}

static bool is_anchor(OpKind op)
{
	return op == OP_MATMUL || op == OP_GEMM || op == OP_CONV || op == OP_SOFTMAX || op == OP_LOGSOFTMAX ||
	       op == OP_LAYERNORM || op == OP_REDUCE_MEAN;
}

/* The dimensions other than 1, in order, agree. */
static bool same_dims(const Shape *a, const Shape *b)
{
	int64_t da[MAX_RANK], db[MAX_RANK];
	int na = 0, nb = 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dim[i] != 1)
			da[na++] = a->dim[i];
	for (int i = 0; i < b->rank; i++)
		if (b->dim[i] != 1)
			db[nb++] = b->dim[i];
	return na == nb && memcmp(da, db, (size_t)na * sizeof *da) == 0;
}

static bool is_contraction(OpKind op) { return op == OP_MATMUL || op == OP_GEMM || op == OP_CONV; }

/* The properties of any partition, checked from the definitions (quadratic:
 * for small graphs). */
static void check_partition(const Graph *g)
{
	int k = graph_kernels(g), next = 0;
	int nn = g->nnodes;
	for (int i = 0; i < nn; i++) {
		const Node *n = g->nodes[i];
		if (n->op == OP_CONSTANT) {
			cr_assert_eq(n->group, -1, "constant '%s' in kernel %d", n->out[0]->name, n->group);
			continue;
		}
		cr_assert(n->group >= 0 && n->group < k, "node %d: group %d of %d", i, n->group, k);
		/* numbered in the order of the first nodes */
		cr_assert(n->group <= next, "node %d ('%s') opens kernel %d before kernel %d", i, n->out[0]->name,
			  n->group, next);
		if (n->group == next)
			next++;
		/* the numbers are an order the kernels can run in */
		for (int a = 0; a < n->nin; a++) {
			const Node *d = n->in[a]->def;
			if (d && d->op != OP_CONSTANT && d->group != n->group)
				cr_assert_lt(d->group, n->group, "kernel %d reads '%s' of the later kernel %d", n->group,
					     n->in[a]->name, d->group);
		}
	}
	cr_assert_eq(next, k);
	bool *reach = malloc((size_t)nn + 1);
	for (int j = 0; j < k; j++) {
		int anchors = 0, last = -1, first = -1;
		const Node *contraction = NULL;
		for (int i = 0; i < nn; i++) {
			const Node *n = g->nodes[i];
			if (n->group != j)
				continue;
			if (first < 0)
				first = i;
			last = i;
			anchors += is_anchor(n->op);
			if (is_contraction(n->op))
				contraction = n;
		}
		cr_assert_leq(anchors, 1, "kernel %d has %d anchors", j, anchors);
		/* only the last node's results leave the kernel */
		for (int i = first; i < last; i++) {
			const Node *n = g->nodes[i];
			if (n->group != j)
				continue;
			for (int r = 0; r < n->nout; r++) {
				const Value *v = n->out[r];
				cr_assert(!v->is_output, "kernel %d: '%s' is a graph output", j, v->name);
				for (int u = 0; u < v->nusers; u++)
					cr_assert_eq(v->users[u]->group, j, "kernel %d: '%s' is used outside", j, v->name);
			}
		}
		/* an epilogue keeps the contraction's output shape (up to size-1 axes) */
		if (contraction)
			for (int i = 0; i < nn; i++)
				if (g->nodes[i]->group == j)
					cr_assert(same_dims(&g->nodes[i]->out[0]->type.shape, &contraction->out[0]->type.shape),
						  "kernel %d: '%s' has another shape than its contraction", j,
						  g->nodes[i]->out[0]->name);
		/* convex: nothing reachable from outside users of the kernel is in it */
		memset(reach, 0, (size_t)nn + 1);
		for (int i = 0; i < nn; i++) {
			const Node *n = g->nodes[i];
			bool from = false;
			for (int a = 0; a < n->nin && !from; a++) {
				const Node *d = n->in[a]->def;
				if (d && d->group >= 0 && (reach[d->id] || (d->group == j && n->group != j)))
					from = true;
			}
			if (from) {
				cr_assert_neq(n->group, j, "kernel %d: a path leaves it and re-enters at '%s'", j,
					      n->out[0]->name);
				reach[i] = true;
			}
		}
	}
	free(reach);
}

/* Parse and verify text, run pass_fuse (which must leave the printed graph
 * and its structure unchanged), check the partition. */
static Graph *fused(const char *text)
{
	Graph *g = t_model(text);
	char *before = print_to_string(g, false);
	cr_assert_eq(t_run_pass(g, pass_fuse, (PassContext){.opt_level = 2, .fold_limit_bytes = 1 << 20}), 0);
	char *after = print_to_string(g, false);
	cr_assert_str_eq(before, after, "pass_fuse changed the graph");
	free(before);
	free(after);
	check_partition(g);
	return g;
}

static int group_of(const Graph *g, const char *name)
{
	const Value *v = graph_find_value(g, name);
	cr_assert(v && v->def, "no node defines '%s'", name);
	return v->def->group;
}

/* Every name in the NULL-terminated list in one kernel, and nothing else in it. */
static void assert_kernel(const Graph *g, const char *const *names)
{
	int j = group_of(g, names[0]), count = 0;
	for (int i = 0; names[i]; i++) {
		cr_assert_eq(group_of(g, names[i]), j, "'%s' is in kernel %d, '%s' in kernel %d", names[i],
			     group_of(g, names[i]), names[0], j);
		count++;
	}
	int members = 0;
	for (int i = 0; i < g->nnodes; i++)
		members += g->nodes[i]->group == j;
	cr_assert_eq(members, count, "kernel %d has %d nodes, not %d", j, members, count);
}
#define KERNEL(g, ...) assert_kernel(g, (const char *const[]){__VA_ARGS__, NULL})

Test(fuse, gemm_bias_relu_is_one_kernel)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[4, 8]\n"
			 "  const w : f32[8, 3] = random(seed=1)\n"
			 "  const b : f32[3] = [0.5, -0.25, 0]\n"
			 "  h = gemm(x, w)\n"
			 "  a = add(h, b)\n"
			 "  r = relu(a)\n"
			 "  output r\n"
			 "}\n");
	KERNEL(g, "h", "a", "r");
	cr_assert_eq(group_of(g, "h"), 0);
	cr_assert_eq(g->nodes[0]->group, -1, "the constants are no kernel");
	cr_assert_eq(g->nodes[1]->group, -1);
	cr_assert_eq(graph_kernels(g), 1);
	graph_free(g);
}

Test(fuse, conv_scale_shift_relu_is_one_kernel)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[1, 3, 8, 8]\n"
			 "  const w : f32[4, 3, 3, 3] = random(seed=1)\n"
			 "  const s : f32[1, 4, 1, 1] = random(seed=2)\n"
			 "  const t : f32[4, 1, 1] = random(seed=3)\n"
			 "  c = conv(x, w, pads=[1, 1, 1, 1])\n"
			 "  m = mul(c, s)\n"
			 "  a = add(t, m)\n"
			 "  r = relu(a)\n"
			 "  output r\n"
			 "}\n");
	KERNEL(g, "c", "m", "a", "r");
	cr_assert_eq(graph_kernels(g), 1);
	graph_free(g);
}

Test(fuse, matmul_epilogues_of_every_activation)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[2, 4, 8]\n"
			 "  const w : f32[8, 6] = random(seed=1)\n"
			 "  h = matmul(x, w)\n"
			 "  a = clip(h, min=0, max=6)\n"
			 "  b = leaky_relu(a, alpha=0.1)\n"
			 "  c = hardswish(b)\n"
			 "  d = sigmoid(c)\n"
			 "  e = gelu(d)\n"
			 "  output e\n"
			 "}\n");
	KERNEL(g, "h", "a", "b", "c", "d", "e");
	graph_free(g);
}

Test(fuse, elementwise_chain_is_one_kernel)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[4, 5]\n"
			 "  input y : f32[5]\n"
			 "  a = neg(x)\n"
			 "  b = exp(a)\n"
			 "  c = add(b, y)\n" /* an operand of broadcast shape */
			 "  d = sigmoid(c)\n"
			 "  e = tanh(d)\n"
			 "  f = mul(e, e)\n" /* its only user, twice */
			 "  output f\n"
			 "}\n");
	KERNEL(g, "a", "b", "c", "d", "e", "f");
	cr_assert_eq(graph_kernels(g), 1);
	graph_free(g);
}

Test(fuse, an_intermediate_used_twice_splits_the_chain)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[4, 5]\n"
			 "  a = relu(x)\n"
			 "  b = exp(a)\n"
			 "  c = add(a, b)\n"
			 "  d = neg(c)\n"
			 "  output d\n"
			 "}\n");
	KERNEL(g, "a");
	KERNEL(g, "b", "c", "d");
	cr_assert_eq(group_of(g, "a"), 0);
	cr_assert_eq(graph_kernels(g), 2);
	graph_free(g);
}

Test(fuse, an_intermediate_that_is_an_output_ends_the_chain)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[4, 5]\n"
			 "  a = relu(x)\n"
			 "  b = exp(a)\n"
			 "  c = neg(b)\n"
			 "  output a, c\n"
			 "}\n");
	KERNEL(g, "a");
	KERNEL(g, "b", "c");
	graph_free(g);
}

Test(fuse, a_broadcast_that_grows_the_result_ends_the_chain)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[5]\n"
			 "  input y : f32[4, 5]\n"
			 "  a = relu(x)\n"
			 "  b = add(a, y)\n"
			 "  c = neg(b)\n"
			 "  output c\n"
			 "}\n");
	KERNEL(g, "a");
	KERNEL(g, "b", "c");
	graph_free(g);
}

Test(fuse, two_chains_meeting_in_an_elementwise_op_are_one_kernel)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[4, 5]\n"
			 "  input y : f32[4, 5]\n"
			 "  a = relu(x)\n"
			 "  b = sigmoid(y)\n"
			 "  c = add(a, b)\n"
			 "  output c\n"
			 "}\n");
	KERNEL(g, "a", "b", "c");
	graph_free(g);
}

Test(fuse, residual_add_joins_the_conv_and_its_other_operand_stays_outside)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[1, 4, 8, 8]\n"
			 "  const w : f32[4, 4, 3, 3] = random(seed=1)\n"
			 "  const b : f32[4] = random(seed=2)\n"
			 "  s = relu(x)\n"
			 "  y = conv(s, w, b, pads=[1, 1, 1, 1])\n"
			 "  z = add(y, s)\n"
			 "  r = relu(z)\n"
			 "  output r\n"
			 "}\n");
	KERNEL(g, "s");
	KERNEL(g, "y", "z", "r");
	cr_assert_eq(graph_kernels(g), 2);
	graph_free(g);
}

/* ResNet's downsampling block: the add meets two convs; it joins the one
 * whose other operand is ready when it starts (the shortcut's conv comes
 * after the main path's second conv). */
Test(fuse, residual_add_of_two_convs_joins_one_of_them)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[1, 4, 8, 8]\n"
			 "  const w1 : f32[8, 4, 3, 3] = random(seed=1)\n"
			 "  const w2 : f32[8, 8, 3, 3] = random(seed=2)\n"
			 "  const ws : f32[8, 4, 1, 1] = random(seed=3)\n"
			 "  c1 = conv(x, w1, pads=[1, 1, 1, 1], strides=[2, 2])\n"
			 "  r1 = relu(c1)\n"
			 "  c2 = conv(r1, w2, pads=[1, 1, 1, 1])\n"
			 "  cs = conv(x, ws, strides=[2, 2])\n"
			 "  a = add(c2, cs)\n"
			 "  r = relu(a)\n"
			 "  output r\n"
			 "}\n");
	KERNEL(g, "c1", "r1");
	KERNEL(g, "c2");
	KERNEL(g, "cs", "a", "r");
	cr_assert_eq(graph_kernels(g), 3);
	graph_free(g);
}

Test(fuse, add_before_layernorm_is_its_prologue)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[2, 4, 8]\n"
			 "  input y : f32[2, 4, 8]\n"
			 "  const s : f32[8] = fill(1)\n"
			 "  const b : f32[8] = zeros\n"
			 "  h = add(x, y)\n"
			 "  m = mul(h, s)\n"
			 "  n = layernorm(m, s, b, axis=-1)\n"
			 "  r = relu(n)\n" /* a reduction closes its kernel */
			 "  output r\n"
			 "}\n");
	KERNEL(g, "h", "m", "n");
	KERNEL(g, "r");
	cr_assert_eq(graph_kernels(g), 2);
	graph_free(g);
}

Test(fuse, reduce_mean_takes_a_prologue_of_its_input_shape)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[2, 4, 8]\n"
			 "  a = mul(x, x)\n"
			 "  m = reduce_mean(a, axes=[2])\n"
			 "  output m\n"
			 "}\n");
	KERNEL(g, "a", "m");
	graph_free(g);
}

Test(fuse, softmax_after_a_gemm_is_alone)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[4, 8]\n"
			 "  const w : f32[8, 3] = random(seed=1)\n"
			 "  h = gemm(x, w)\n"
			 "  p = softmax(h)\n"
			 "  q = logsoftmax(p)\n"
			 "  output q\n"
			 "}\n");
	KERNEL(g, "h");
	KERNEL(g, "p");
	KERNEL(g, "q");
	cr_assert_eq(graph_kernels(g), 3);
	graph_free(g);
}

Test(fuse, two_gemms_never_share_a_kernel)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[4, 8]\n"
			 "  const w1 : f32[8, 8] = random(seed=1)\n"
			 "  const w2 : f32[8, 8] = random(seed=2)\n"
			 "  h1 = gemm(x, w1)\n"
			 "  h2 = gemm(h1, w2)\n"
			 "  h3 = gemm(x, w2)\n"
			 "  a = add(h2, h3)\n"
			 "  output a\n"
			 "}\n");
	KERNEL(g, "h1");
	KERNEL(g, "h2");
	KERNEL(g, "h3", "a");
	cr_assert_eq(graph_kernels(g), 3);
	graph_free(g);
}

Test(fuse, views_that_regroup_dimensions_and_data_movement_are_kernels_of_their_own)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[2, 3, 4]\n"
			 "  a = relu(x)\n"
			 "  b = reshape(a, shape=[6, 4])\n"
			 "  c = neg(b)\n"
			 "  d = transpose(c)\n"
			 "  e = exp(d)\n"
			 "  f = flatten(e, axis=0)\n"
			 "  h = neg(f)\n"
			 "  output h\n"
			 "}\n");
	KERNEL(g, "a");
	KERNEL(g, "b");
	KERNEL(g, "c");
	KERNEL(g, "d");
	KERNEL(g, "e");
	KERNEL(g, "f");
	KERNEL(g, "h");
	cr_assert_eq(graph_kernels(g), 7);
	graph_free(g);
}

/* What canonicalization makes of a 3-d matmul + bias: a 2-d gemm between
 * reshapes that only add or drop a size-1 axis; the epilogue goes on
 * through them. */
Test(fuse, views_that_add_or_drop_size_1_axes_join_the_epilogue)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[1, 4, 8]\n"
			 "  const w : f32[8, 6] = random(seed=1)\n"
			 "  const b : f32[6] = random(seed=2)\n"
			 "  x2 = reshape(x, shape=[4, 8])\n"
			 "  h = gemm(x2, w, b)\n"
			 "  h3 = reshape(h, shape=[1, 4, 6])\n"
			 "  a = gelu(h3)\n"
			 "  r = add(a, b)\n"
			 "  u = unsqueeze(r, axes=[3])\n"
			 "  s = squeeze(u, axes=[0])\n"
			 "  f = flatten(s, axis=1)\n"
			 "  e = exp(f)\n"
			 "  output e\n"
			 "}\n");
	KERNEL(g, "x2");
	KERNEL(g, "h", "h3", "a", "r", "u", "s", "f", "e");
	cr_assert_eq(graph_kernels(g), 2);
	graph_free(g);
}

Test(fuse, bert_attention_and_ffn)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[1, 4, 8]\n"
			 "  const wq : f32[8, 8] = random(seed=1)\n"
			 "  const bq : f32[8] = random(seed=2)\n"
			 "  const scale : f32[] = [0.125]\n"
			 "  const w1 : f32[8, 16] = random(seed=3)\n"
			 "  const w2 : f32[16, 8] = random(seed=4)\n"
			 "  const g1 : f32[8] = fill(1)\n"
			 "  q0 = matmul(x, wq)\n"
			 "  q1 = add(q0, bq)\n"
			 "  q2 = reshape(q1, shape=[1, 4, 2, 4])\n"
			 "  q = transpose(q2, perm=[0, 2, 1, 3])\n"
			 "  kt = transpose(q2, perm=[0, 2, 3, 1])\n"
			 "  s0 = matmul(q, kt)\n"
			 "  s1 = mul(s0, scale)\n"
			 "  p = softmax(s1)\n"
			 "  c0 = matmul(p, q)\n"
			 "  c1 = transpose(c0, perm=[0, 2, 1, 3])\n"
			 "  c2 = reshape(c1, shape=[1, 4, 8])\n"
			 "  h0 = add(x, c2)\n"
			 "  h = layernorm(h0, g1)\n"
			 "  f0 = matmul(h, w1)\n"
			 "  f1 = gelu(f0)\n"
			 "  f2 = matmul(f1, w2)\n"
			 "  y0 = add(h, f2)\n"
			 "  y = layernorm(y0, g1)\n"
			 "  output y\n"
			 "}\n");
	KERNEL(g, "q0", "q1");
	KERNEL(g, "s0", "s1");
	KERNEL(g, "p");
	KERNEL(g, "h0", "h");
	KERNEL(g, "f0", "f1");
	KERNEL(g, "f2", "y0");
	KERNEL(g, "y");
	cr_assert_eq(graph_kernels(g), 13);
	graph_free(g);
}

Test(fuse, batchnorm_and_variadic_ops_are_elementwise)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[1, 2, 4, 4]\n"
			 "  input y : f32[1, 2, 4, 4]\n"
			 "  const w : f32[2, 2, 1, 1] = random(seed=1)\n"
			 "  const s : f32[2] = fill(1)\n"
			 "  const b : f32[2] = zeros\n"
			 "  c = conv(x, w)\n"
			 "  n = batchnorm(c, s, b, b, s)\n"
			 "  e = exp(y)\n"
			 "  t = sum(n, x, e)\n"
			 "  m = max(t, y)\n"
			 "  output m\n"
			 "}\n");
	KERNEL(g, "c", "n", "e", "t", "m");
	graph_free(g);
}

Test(fuse, graph_kernels_counts)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[4, 8]\n"
			   "  const w : f32[8, 8] = random(seed=1)\n"
			   "  h = matmul(x, w)\n"
			   "  r = relu(h)\n"
			   "  t = transpose(r)\n"
			   "  u = transpose(t)\n"
			   "  v = add(u, r)\n"
			   "  output v\n"
			   "}\n");
	cr_assert_eq(graph_kernels(g), 0, "ungrouped");
	Diag d;
	diag_init(&d);
	PassContext cx = {0};
	cr_assert(pass_fuse(g, &cx, &d));
	check_partition(g);
	/* h + r; t; u; v (r is used twice, u is a transpose's: v starts anew) */
	KERNEL(g, "h", "r");
	KERNEL(g, "t");
	KERNEL(g, "u");
	KERNEL(g, "v");
	cr_assert_eq(graph_kernels(g), 4);
	/* again: the same partition */
	cr_assert(pass_fuse(g, &cx, &d));
	cr_assert_eq(graph_kernels(g), 4);
	diag_free(&d);
	graph_free(g);
}

Test(fuse, empty_of_kernels_when_only_constants)
{
	Graph *g = fused("graph g {\n  const c : f32[2] = [1, 2]\n  output c\n}\n");
	cr_assert_eq(graph_kernels(g), 0);
	graph_free(g);
}

/* A text of n nodes built by line(i, buf) each. */
static char *big_model(const char *head, int n, void (*line)(int, FILE *), const char *tail)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fputs(head, f);
	for (int i = 0; i < n; i++)
		line(i, f);
	fputs(tail, f);
	fclose(f);
	return buf;
}

static void chain_line(int i, FILE *f)
{
	if (i == 0)
		fprintf(f, "  v0 = relu(x)\n");
	else
		fprintf(f, "  v%d = %s(v%d)\n", i, i % 2 ? "neg" : "relu", i - 1);
}

static void star_line(int i, FILE *f) { fprintf(f, "  v%d = relu(x0)\n", i); }

static double seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

Test(fuse, linear_time_on_a_100000_node_chain, .timeout = 60)
{
	char *text = big_model("graph g {\n  input x : f32[4]\n", 100000, chain_line, "  output v99999\n}\n");
	Graph *g = t_model(text);
	free(text);
	Diag d;
	diag_init(&d);
	PassContext cx = {0};
	double t0 = seconds();
	cr_assert(pass_fuse(g, &cx, &d));
	double t = seconds() - t0;
	cr_assert_lt(t, 1.0, "%.2f s", t);
	cr_assert_eq(graph_kernels(g), 1);
	for (int i = 0; i < g->nnodes; i++)
		cr_assert_eq(g->nodes[i]->group, 0);
	char *p = print_to_string(g, true);
	cr_assert(strstr(p, "  # kernel 0: relu + neg + relu + neg + relu + neg + relu + neg + relu + neg + relu + neg + "
			    "... (99999 fused)\n  v0 : f32[4] = relu(x)\n"),
		  "%.300s", p);
	free(p);
	diag_free(&d);
	graph_free(g);
}

/* One value read by 50,000 nodes that a 50,000-operand sum joins: no use
 * list or operand list is walked once per user. */
Test(fuse, linear_time_on_a_wide_fan_in_and_out, .timeout = 60)
{
	int n = 50000;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fputs("  s = sum(", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%sv%d", i ? ", " : "", i);
	fputs(")\n  output s\n}\n", f);
	fclose(f);
	char *text = big_model("graph g {\n  input x : f32[4]\n  x0 = neg(x)\n", n, star_line, buf);
	free(buf);
	Graph *g = t_model(text);
	free(text);
	Diag d;
	diag_init(&d);
	PassContext cx = {0};
	double t0 = seconds();
	cr_assert(pass_fuse(g, &cx, &d));
	double t = seconds() - t0;
	cr_assert_lt(t, 1.0, "%.2f s", t);
	/* x0 (read 50,000 times), then the relus and the sum */
	cr_assert_eq(graph_kernels(g), 2);
	cr_assert_eq(group_of(g, "x0"), 0);
	cr_assert_eq(group_of(g, "v0"), 1);
	cr_assert_eq(group_of(g, "v49999"), 1);
	cr_assert_eq(group_of(g, "s"), 1);
	diag_free(&d);
	graph_free(g);
}

Test(fuse, print_groups_names_the_kernels_and_parses_back)
{
	const char *text = "graph g {\n"
			   "  input x : f32[4, 8]\n"
			   "  const w : f32[8, 3] = random(seed=1)\n"
			   "  const b : f32[3] = [0.5, -0.25, 0]\n"
			   "  h = gemm(x, w)\n"
			   "  a = add(h, b)\n"
			   "  r = relu(a)\n"
			   "  p = softmax(r)\n"
			   "  output p\n"
			   "}\n";
	Graph *g = fused(text);
	char *p = print_to_string(g, true);
	cr_assert(strstr(p, "  const b : f32[3] = [0.5, -0.25, 0.0]\n"
			    "  # kernel 0: gemm + add + relu (2 fused)\n"
			    "  h : f32[4,3] = gemm(x, w)\n"
			    "  a : f32[4,3] = add(h, b)\n"
			    "  r : f32[4,3] = relu(a)\n"
			    "  # kernel 1: softmax\n"
			    "  p : f32[4,3] = softmax(r)\n"),
		  "printed:\n%s", p);
	/* model.ir: it parses, verifies, and prints as print_graph did */
	Diag d;
	diag_init(&d);
	Graph *g2 = t_parse(p, &d);
	cr_assert_not_null(g2, "print_groups output does not parse:\n%s", p);
	cr_assert(graph_verify(g2, &d));
	char *plain = print_to_string(g, false), *again = print_to_string(g2, false);
	cr_assert_str_eq(again, plain);
	/* not grouped: said once */
	char *ungrouped = print_to_string(g2, true);
	cr_assert(strstr(ungrouped, "  input x : f32[4,8]\n  # not grouped: every node is its own kernel\n"), "%s", ungrouped);
	free(ungrouped);
	free(plain);
	free(again);
	diag_free(&d);
	graph_free(g2);
	free(p);
	graph_free(g);
}

/* A kernel whose nodes are not contiguous gets one comment, at its first. */
Test(fuse, print_groups_comments_a_kernel_once)
{
	Graph *g = fused("graph g {\n"
			 "  input x : f32[4, 5]\n"
			 "  input y : f32[4, 5]\n"
			 "  a = relu(x)\n"
			 "  t = transpose(y)\n"
			 "  b = sigmoid(y)\n"
			 "  c = add(a, b)\n"
			 "  output c, t\n"
			 "}\n");
	KERNEL(g, "a", "b", "c");
	char *p = print_to_string(g, true);
	cr_assert(strstr(p, "  # kernel 0: relu + sigmoid + add (2 fused)\n"
			    "  a : f32[4,5] = relu(x)\n"
			    "  # kernel 1: transpose\n"
			    "  t : f32[5,4] = transpose(y)\n"
			    "  b : f32[4,5] = sigmoid(y)\n"
			    "  c : f32[4,5] = add(a, b)\n"),
		  "printed:\n%s", p);
	Diag d;
	diag_init(&d);
	Graph *g2 = t_parse(p, &d);
	cr_assert(g2 && graph_verify(g2, &d), "%s", p);
	graph_free(g2);
	diag_free(&d);
	free(p);
	graph_free(g);
}
