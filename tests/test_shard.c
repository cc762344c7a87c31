/* Sharding (core/shard.c): the mesh and shard statements, and one test
 * per propagation rule: the shardings it gives and the collectives it
 * inserts.  The expected shardings are worked out by hand from the rule's
 * definition (docs/ir.md, "Sharding"), e.g. Megatron's MLP: w1 split by
 * columns, w2 by rows, one all-reduce. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "printer.h"
#include "shard.h"
#include "test_util.h"

/* The devices simulated (each on its part, collectives between them) give
 * what the whole graph gives, on seeded random inputs. */
static void spmd_matches(const Graph *g)
{
	Tensor **in = xcalloc((size_t)g->ninputs + 1, sizeof *in);
	Tensor **ref = xcalloc((size_t)g->noutputs + 1, sizeof *ref);
	Tensor **got = xcalloc((size_t)g->noutputs + 1, sizeof *got);
	for (int i = 0; i < g->ninputs; i++) {
		in[i] = tensor_new(g->inputs[i]->type.dtype, &g->inputs[i]->type.shape);
		fill_random_input(in[i], 100 + (uint64_t)i);
	}
	Diag d;
	diag_init(&d);
	bool ok = interp_run(g, in, ref, &d) && shard_simulate(g, in, got, &d);
	if (!ok)
		diag_print(&d, stderr);
	cr_assert(ok, "the simulated devices failed");
	for (int k = 0; k < g->noutputs; k++) {
		int64_t n = tensor_numel(ref[k]);
		cr_assert(shape_eq(&ref[k]->type.shape, &got[k]->type.shape));
		for (int64_t i = 0; i < n; i++) {
			double w = tensor_get_f(ref[k], i), v = tensor_get_f(got[k], i);
			cr_assert(fabs(v - w) <= 1e-5 + 1e-5 * fabs(w), "output %s[%" PRId64 "]: %g on the devices, %g whole",
				  g->outputs[k]->name, i, v, w);
		}
		tensor_free(ref[k]);
		tensor_free(got[k]);
	}
	for (int i = 0; i < g->ninputs; i++)
		tensor_free(in[i]);
	free(in);
	free(ref);
	free(got);
	diag_free(&d);
}

/* Parse, verify, resolve and propagate; fails the test on any error.
 * Every propagated graph is also run on its simulated devices. */
static Graph *sharded(const char *text, bool split_weights, ShardReport *r)
{
	Diag d;
	diag_init(&d);
	Graph *g = t_parse(text, &d);
	bool ok = g && graph_verify(g, &d) && shard_resolve(g, &d);
	*r = (ShardReport){.split_weights = split_weights};
	ok = ok && shard_propagate(g, r, &d);
	if (!ok)
		diag_print(&d, stderr);
	cr_assert(ok, "sharding failed");
	diag_free(&d);
	t_check_graph(g);
	spmd_matches(g);
	return g;
}

static const char *sh(const Graph *g, const char *name)
{
	static char buf[8][128];
	static int k;
	const Value *v = t_val(g, name);
	char *b = buf[k++ % 8];
	return sharding_str(&g->mesh, &v->shard, v->type.shape.rank, b, sizeof buf[0]);
}

#define SH_EQ(g, name, want) cr_assert_str_eq(sh(g, name), want, "'%s' is %s, not %s", name, sh(g, name), want)

static void done(Graph *g, ShardReport *r)
{
	shard_report_free(r);
	graph_free(g);
}

/* The sharding errors: located at the annotation. */
static void expect_shard_error(const char *text, const char *msg, int line, int col)
{
	Diag d;
	diag_init(&d);
	Graph *g = t_parse(text, &d);
	if (g && !diag_has_errors(&d)) {
		cr_assert(graph_verify(g, &d), "the model should verify");
		cr_assert_not(shard_resolve(g, &d), "no error for: %s", msg);
	}
	t_assert_error_at(&d, msg, line, col);
	diag_free(&d);
	graph_free(g);
}

static const char *MLP = "graph mlp {\n"
			 "  mesh [tp=2]\n"
			 "  input x : f32[8, 16]\n"
			 "  const w1 : f32[16, 32] = normal(1, 0, 0.1)\n"
			 "  const b1 : f32[32] = normal(2, 0, 0.1)\n"
			 "  const w2 : f32[32, 16] = normal(3, 0, 0.1)\n"
			 "  const b2 : f32[16] = normal(4, 0, 0.1)\n"
			 "  h = matmul(x, w1)\n"
			 "  hb = add(h, b1)\n"
			 "  r = relu(hb)\n"
			 "  o = matmul(r, w2)\n"
			 "  y = add(o, b2)\n"
			 "  output y\n"
			 "}\n";

Test(shard, matmul_column_then_row_parallel)
{
	ShardReport r;
	Graph *g = sharded(MLP, true, &r);
	SH_EQ(g, "w1", "[_, tp]");
	SH_EQ(g, "b1", "[tp]");
	SH_EQ(g, "h", "[_, tp]");
	SH_EQ(g, "r", "[_, tp]");
	SH_EQ(g, "w2", "[tp, _]");
	SH_EQ(g, "o", "[_, _] partial [tp]");
	/* the bias is added once: on the partial sum of one device */
	SH_EQ(g, "b2", "[_] partial [tp]");
	SH_EQ(g, "y", "[_, _]");
	cr_assert_eq(t_count_op(g, OP_ALL_REDUCE), 1);
	cr_assert_eq(t_count_op(g, OP_ALL_GATHER) + t_count_op(g, OP_REDUCE_SCATTER) + t_count_op(g, OP_ALL_TO_ALL), 0);
	/* 8 x 16 f32 = 512 bytes; a ring all-reduce over 2 sends 2 (n-1)/n of it */
	cr_assert_eq(shard_collective_bytes(g, t_find_op(g, OP_ALL_REDUCE)), 512);
	done(g, &r);
}

Test(shard, without_the_tensor_strategy_weights_stay_whole)
{
	ShardReport r;
	Graph *g = sharded(MLP, false, &r);
	SH_EQ(g, "w1", "[_, _]");
	SH_EQ(g, "y", "[_, _]");
	cr_assert_eq(t_count_op(g, OP_ALL_REDUCE) + t_count_op(g, OP_ALL_GATHER), 0);
	done(g, &r);
}

Test(shard, data_parallel_batch_follows_and_the_output_is_gathered)
{
	ShardReport r;
	char *text = xasprintf("%s", MLP);
	char *p = strstr(text, "tp=2");
	memcpy(p, "dp=4", 4);
	Diag d;
	diag_init(&d);
	Graph *g = t_parse(text, &d);
	cr_assert(g && graph_verify(g, &d));
	/* --parallel=data puts the annotation the statement would */
	ShardAnnot a = {.value = xstrdup("x"), .naxis = 2};
	a.axis = xcalloc(2, sizeof *a.axis);
	a.axis_loc = xcalloc(2, sizeof *a.axis_loc);
	a.axis[0] = xstrdup("dp");
	a.axis[1] = xstrdup("_");
	shard_add_annot(g, &a);
	r = (ShardReport){0};
	cr_assert(shard_resolve(g, &d) && shard_propagate(g, &r, &d));
	spmd_matches(g);
	SH_EQ(g, "x", "[dp, _]");
	SH_EQ(g, "h", "[dp, _]");
	SH_EQ(g, "w1", "[_, _]");
	SH_EQ(g, "b2", "[_]");
	SH_EQ(g, "y", "[_, _]");
	cr_assert_eq(t_count_op(g, OP_ALL_GATHER), 1);
	/* each device sends its 2 x 16 rows to the 3 others */
	cr_assert_eq(shard_collective_bytes(g, t_find_op(g, OP_ALL_GATHER)), 3 * 2 * 16 * 4);
	cr_assert_eq(t_count_op(g, OP_ALL_REDUCE), 0);
	diag_free(&d);
	free(text);
	done(g, &r);
}

Test(shard, elementwise_broadcast_operand_follows_its_axes)
{
	ShardReport r;
	Graph *g = sharded("graph g {\n  mesh [a=2, b=2]\n  input x : f32[4, 6]\n  input c : f32[6]\n"
			   "  y = mul(x, c)\n  z = sigmoid(y)\n  shard x [a, b]\n  shard z [a, b]\n  output z\n}\n",
			   false, &r);
	SH_EQ(g, "y", "[a, b]");
	SH_EQ(g, "z", "[a, b]");
	/* c is a whole input: the local part of it it needs costs nothing */
	cr_assert_eq(t_count_op(g, OP_SHARD_SLICE), 1);
	cr_assert_eq(t_count_op(g, OP_ALL_GATHER) + t_count_op(g, OP_ALL_REDUCE), 0);
	done(g, &r);
}

Test(shard, conflicting_operands_cheapest_resharding_and_a_note)
{
	ShardReport r;
	Graph *g = sharded("graph g {\n  mesh [d=2]\n  input a : f32[4, 8]\n  input b : f32[4, 8]\n"
			   "  y = add(a, b)\n  shard a [d, _]\n  shard b [_, d]\n  shard y [d, _]\n  output y\n}\n",
			   false, &r);
	SH_EQ(g, "y", "[d, _]");
	cr_assert_eq(t_count_op(g, OP_ALL_TO_ALL), 1, "b's split moves from axis 1 to axis 0");
	cr_assert_eq(r.nnotes, 0, "an annotated result decides, no conflict to resolve");
	done(g, &r);
	g = sharded("graph g {\n  mesh [d=2]\n  input a : f32[4, 8]\n  input b : f32[4, 8]\n"
		    "  y = add(a, b)\n  shard a [d, _]\n  shard b [_, d]\n  output y\n}\n",
		    false, &r);
	cr_assert_eq(r.nnotes, 1);
	cr_assert(strstr(r.notes[0], "sharded differently"), "%s", r.notes[0]);
	cr_assert_eq(t_count_op(g, OP_ALL_TO_ALL), 1);
	done(g, &r);
}

Test(shard, reduce_sum_over_a_split_axis_is_a_partial_sum)
{
	ShardReport r;
	Graph *g = sharded("graph g {\n  mesh [d=2]\n  input x : f32[4, 8]\n"
			   "  s = reduce_sum(x, axes=[1], keepdims=0)\n  m = reduce_max(x, axes=[1], keepdims=0)\n"
			   "  shard x [_, d]\n  output s, m\n}\n",
			   false, &r);
	SH_EQ(g, "s", "[_]");
	cr_assert_eq(t_count_op(g, OP_ALL_REDUCE), 1, "the sum: its partial sums added");
	cr_assert_eq(t_count_op(g, OP_ALL_GATHER), 1, "the max: x gathered first");
	done(g, &r);
}

Test(shard, softmax_axis_whole_others_follow)
{
	ShardReport r;
	Graph *g = sharded("graph g {\n  mesh [d=2, e=2]\n  input x : f32[4, 8]\n"
			   "  y = softmax(x, axis=1)\n  shard x [d, e]\n  shard y [d, _]\n  output y\n}\n",
			   false, &r);
	cr_assert_eq(t_count_op(g, OP_ALL_GATHER), 1);
	cr_assert_eq(attr_i(t_find_op(g, OP_ALL_GATHER), "axis"), 1);
	SH_EQ(g, "y", "[d, _]");
	done(g, &r);
}

Test(shard, concat_axis_whole)
{
	ShardReport r;
	Graph *g = sharded("graph g {\n  mesh [d=2]\n  input a : f32[4, 8]\n  input b : f32[4, 6]\n"
			   "  y = concat(a, b, axis=1)\n  shard a [d, _]\n  shard b [d, _]\n  shard y [d, _]\n  output y\n}\n",
			   false, &r);
	SH_EQ(g, "y", "[d, _]");
	cr_assert_eq(t_count_op(g, OP_ALL_GATHER) + t_count_op(g, OP_ALL_TO_ALL), 0);
	done(g, &r);
}

Test(shard, reshape_maps_a_split_to_the_outer_axis_of_its_group)
{
	ShardReport r;
	/* [8, 768] -> [8, 12, 64]: 768 split in 2 is 6 of the 12 heads each */
	Graph *g = sharded("graph g {\n  mesh [t=2]\n  input x : f32[8, 768]\n"
			   "  h = reshape(x, shape=[8, 12, 64])\n  b = reshape(h, shape=[8, 768])\n"
			   "  shard x [_, t]\n  shard b [_, t]\n  output b\n}\n",
			   false, &r);
	SH_EQ(g, "h", "[_, t, _]");
	cr_assert_eq(t_count_op(g, OP_ALL_GATHER) + t_count_op(g, OP_ALL_TO_ALL), 0);
	done(g, &r);
	/* an inner axis of its group cannot stay split: gathered */
	g = sharded("graph g {\n  mesh [t=2]\n  input x : f32[8, 12, 64]\n"
		    "  h = reshape(x, shape=[8, 768])\n  shard x [_, _, t]\n  output h\n}\n",
		    false, &r);
	SH_EQ(g, "h", "[_, _]");
	cr_assert_eq(t_count_op(g, OP_ALL_GATHER), 1);
	done(g, &r);
}

Test(shard, transpose_permutes_the_splits)
{
	ShardReport r;
	Graph *g = sharded("graph g {\n  mesh [d=2, t=2]\n  input x : f32[2, 8, 4, 6]\n"
			   "  y = transpose(x, perm=[0, 2, 1, 3])\n  shard x [d, _, t, _]\n  shard y [d, t, _, _]\n"
			   "  output y\n}\n",
			   false, &r);
	SH_EQ(g, "y", "[d, t, _, _]");
	cr_assert_eq(g->nnodes, 1, "no collective");
	done(g, &r);
}

Test(shard, batched_matmul_follows_heads)
{
	ShardReport r;
	Graph *g = sharded("graph g {\n  mesh [t=2]\n  input q : f32[1, 4, 8, 16]\n  input k : f32[1, 4, 16, 8]\n"
			   "  s = matmul(q, k)\n  shard q [_, t, _, _]\n  shard k [_, t, _, _]\n  shard s [_, t, _, _]\n"
			   "  output s\n}\n",
			   false, &r);
	SH_EQ(g, "s", "[_, t, _, _]");
	cr_assert_eq(g->nnodes, 1, "no collective");
	done(g, &r);
}

Test(shard, gemm_trans_b_column_split_and_row_split_with_bias)
{
	ShardReport r;
	Graph *g = sharded("graph g {\n  mesh [t=4]\n  input x : f32[2, 8]\n"
			   "  const w1 : f32[16, 8] = normal(1, 0, 0.1)\n  const b1 : f32[16] = zeros\n"
			   "  const w2 : f32[4, 16] = normal(2, 0, 0.1)\n  const b2 : f32[4] = zeros\n"
			   "  h = gemm(x, w1, b1, trans_b=1)\n  a = relu(h)\n  y = gemm(a, w2, b2, trans_b=1)\n  output y\n}\n",
			   true, &r);
	SH_EQ(g, "w1", "[t, _]");
	SH_EQ(g, "b1", "[t]");
	SH_EQ(g, "h", "[_, t]");
	SH_EQ(g, "w2", "[_, t]");
	SH_EQ(g, "b2", "[_] partial [t]");
	cr_assert_eq(t_count_op(g, OP_ALL_REDUCE), 1);
	done(g, &r);
}

Test(shard, reduce_scatter_when_the_result_is_wanted_split)
{
	ShardReport r;
	char *text = xasprintf("%.*s  shard y [tp, _]\n  output y\n}\n", (int)(strstr(MLP, "  output y") - MLP), MLP);
	Graph *g = sharded(text, true, &r);
	free(text);
	SH_EQ(g, "y", "[tp, _]");
	cr_assert_eq(t_count_op(g, OP_REDUCE_SCATTER), 1, "the partial sum scattered, not all-reduced");
	cr_assert_eq(t_count_op(g, OP_ALL_REDUCE), 0);
	done(g, &r);
}

Test(shard, conv_batch_output_channels_and_input_channels)
{
	ShardReport r;
	Graph *g = sharded("graph g {\n  mesh [d=2, t=2]\n  input x : f32[4, 4, 6, 6]\n"
			   "  const w : f32[8, 4, 3, 3] = normal(1, 0, 0.1)\n  const b : f32[8] = zeros\n"
			   "  const w2 : f32[8, 8, 1, 1] = normal(2, 0, 0.1)\n"
			   "  c = conv(x, w, b, pads=[1, 1, 1, 1])\n  r = relu(c)\n  p = maxpool(r, kernel_shape=[2, 2], strides=[2, 2])\n"
			   "  c2 = conv(p, w2)\n  shard x [d, _, _, _]\n  output c2\n}\n",
			   true, &r);
	SH_EQ(g, "w", "[t, _, _, _]");
	SH_EQ(g, "b", "[t]");
	SH_EQ(g, "c", "[d, t, _, _]");
	SH_EQ(g, "p", "[d, t, _, _]");
	SH_EQ(g, "w2", "[_, t, _, _]");
	cr_assert_eq(t_count_op(g, OP_ALL_REDUCE), 1, "the second conv's input channels split: a partial sum");
	cr_assert_eq(t_count_op(g, OP_ALL_GATHER), 1, "the batch gathered for the output");
	done(g, &r);
}

Test(shard, depthwise_conv_and_batchnorm_follow_channels)
{
	ShardReport r;
	Graph *g = sharded("graph g {\n  mesh [t=2]\n  input x : f32[1, 4, 6, 6]\n"
			   "  const w : f32[4, 1, 3, 3] = normal(1, 0, 0.1)\n"
			   "  const s : f32[4] = fill(1)\n  const o : f32[4] = zeros\n  const m : f32[4] = zeros\n  const v : f32[4] = fill(1)\n"
			   "  c = conv(x, w, group=4, pads=[1, 1, 1, 1])\n  n = batchnorm(c, s, o, m, v)\n"
			   "  shard x [_, t, _, _]\n  shard n [_, t, _, _]\n  output n\n}\n",
			   false, &r);
	SH_EQ(g, "w", "[t, _, _, _]");
	SH_EQ(g, "c", "[_, t, _, _]");
	SH_EQ(g, "s", "[t]");
	cr_assert_eq(g->nnodes, 7, "five constants, the conv, the batchnorm: no collective");
	done(g, &r);
}

Test(shard, layernorm_resolves_a_partial_sum_and_keeps_rows_split)
{
	ShardReport r;
	Graph *g = sharded("graph g {\n  mesh [d=2, t=2]\n  input x : f32[4, 8]\n  const w : f32[8, 8] = normal(1, 0, 0.1)\n"
			   "  const s : f32[8] = fill(1)\n"
			   "  h = matmul(x, w)\n  n = layernorm(h, s, axis=-1)\n  shard x [d, t]\n  shard n [d, _]\n  output n\n}\n",
			   false, &r);
	SH_EQ(g, "w", "[t, _]");
	SH_EQ(g, "h", "[d, _] partial [t]");
	SH_EQ(g, "n", "[d, _]");
	cr_assert_eq(t_count_op(g, OP_ALL_REDUCE), 1);
	done(g, &r);
}

Test(shard, statements_print_back)
{
	Graph *g = t_model("graph g {\n  mesh [d=2, t=2]\n  input x : f32[4, 8]\n  y = relu(x)\n"
			   "  shard x [d, _]\n  shard y [_, t] partial [d]\n  output y\n}\n");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	print_graph(f, g);
	fclose(f);
	cr_assert(strstr(buf, "  mesh [d=2, t=2]\n"), "%s", buf);
	cr_assert(strstr(buf, "  shard x [d, _]\n"), "%s", buf);
	cr_assert(strstr(buf, "  shard y [_, t] partial [d]\n"), "%s", buf);
	Graph *h = t_model(buf);
	cr_assert_eq(h->mesh.naxes, 2);
	cr_assert_eq(h->nannots, 2);
	free(buf);
	graph_free(g);
	graph_free(h);
}

Test(shard, located_errors)
{
	const char *head = "graph g {\n  mesh [d=2, t=3]\n  input x : f32[4, 8]\n";
	char *t;
#define ERR(body, msg, line, col)                                  \
	t = xasprintf("%s%s  output x\n}\n", head, body);          \
	expect_shard_error(t, msg, line, col);                     \
	free(t)
	ERR("  shard x [q, _]\n", "'q' is not an axis of the mesh", 4, 12);
	ERR("  shard x [d]\n", "the sharding of 'x' has 1 axes, its type f32[4,8] has rank 2", 4, 9);
	ERR("  shard x [_, t]\n", "axis 1 of 'x' (8) does not split evenly over mesh axis 't' (3)", 4, 15);
	ERR("  shard x [d, d]\n", "mesh axis 'd' splits 'x' twice", 4, 15);
	ERR("  shard x [d, _]\n  shard x [_, _]\n", "'x' is sharded twice", 5, 9);
	ERR("  shard x [d, _] partial [t]\n", "'x' is an input: a partial sum is what an op computes", 4, 9);
	ERR("  shard nope [d, _]\n", "'nope' is not defined before the shard statement", 4, 9);
	ERR("  mesh [e=2]\n", "a second mesh", 4, 3);
	ERR("  shard x [d=2, _]\n", "a sharding names mesh axes or _, without sizes", 4, 12);
	ERR("  sharded x [d, _]\n", "'sharded x [...]' is not a statement", 4, 3);
#undef ERR
	expect_shard_error("graph g {\n  input x : f32[4]\n  shard x [_]\n  output x\n}\n",
			   "a sharding before the graph's mesh", 3, 3);
	expect_shard_error("graph g {\n  mesh [d=0]\n  input x : f32[4]\n  output x\n}\n",
			   "mesh axis 'd' = 0: a size is 1 to 65536", 2, 9);
	expect_shard_error("graph g {\n  mesh [a=2, b=2, c=2, d=2, e=2]\n  input x : f32[4]\n  output x\n}\n",
			   "the mesh has 5 axes, at most 4 are supported", 2, 29);
	expect_shard_error("graph g {\n  mesh [a=2, a=2]\n  input x : f32[4]\n  output x\n}\n",
			   "mesh axis 'a' is named twice", 2, 14);
	expect_shard_error("graph g {\n  mesh [a]\n  input x : f32[4]\n  output x\n}\n",
			   "mesh axis 'a' needs a size: a=N", 2, 9);
}

Test(shard, collectives_are_not_written_by_hand)
{
	Diag d;
	diag_init(&d);
	Graph *g = t_parse("graph g {\n  mesh [d=2]\n  input x : f32[4]\n  y = all_reduce(x, mesh_axis=\"d\")\n  output y\n}\n", &d);
	cr_assert(g && graph_verify(g, &d) && shard_resolve(g, &d));
	ShardReport r = {0};
	cr_assert_not(shard_propagate(g, &r, &d));
	t_assert_error_at(&d, "all_reduce: collectives are inserted by the sharding pass", 4, 7);
	diag_free(&d);
	done(g, &r);
}

Test(shard, a_whole_value_added_to_a_partial_sum_joins_it_on_one_device)
{
	ShardReport r;
	/* the residual x is added once: shard_partial keeps it on coordinate 0 */
	Graph *g = sharded("graph g {\n  mesh [t=2]\n  input x : f32[4, 8]\n  input h : f32[4, 6]\n"
			   "  const w : f32[6, 8] = normal(1, 0, 0.3)\n"
			   "  p = matmul(h, w)\n  y = add(p, x)\n  shard h [_, t]\n  output y\n}\n",
			   false, &r);
	SH_EQ(g, "p", "[_, _] partial [t]");
	cr_assert_eq(t_count_op(g, OP_SHARD_PARTIAL), 1);
	cr_assert_eq(t_count_op(g, OP_ALL_REDUCE), 1);
	done(g, &r);
}

Test(shard, pipeline_stages_balance_the_work_and_send_what_crosses)
{
	/* four equal layers (matmul 8 x 16 x 16, relu) over 2 stages: two each;
	 * x is read by stage 0 only, h1 crosses once although read twice */
	Diag d;
	diag_init(&d);
	Graph *g = t_parse("graph g {\n  input x : f32[8, 16]\n  const w : f32[16, 16] = normal(1, 0, 0.3)\n"
			   "  a0 = matmul(x, w)\n  h0 = relu(a0)\n  a1 = matmul(h0, w)\n  h1 = relu(a1)\n"
			   "  a2 = matmul(h1, w)\n  h2 = relu(a2)\n  s = add(h2, h1)\n  a3 = matmul(s, w)\n  h3 = relu(a3)\n"
			   "  output h3\n}\n", &d);
	cr_assert(g && graph_verify(g, &d));
	cr_assert(shard_apply_strategy(g, PARALLEL_PIPELINE, 2, &d) && shard_resolve(g, &d));
	ShardReport r = {0};
	cr_assert(shard_propagate(g, &r, &d));
	t_check_graph(g);
	cr_assert_eq(t_val(g, "h1")->def->stage, 0);
	cr_assert_eq(t_val(g, "a2")->def->stage, 1);
	cr_assert_eq(t_count_op(g, OP_SEND_RECV), 1, "h1 sent once, read twice on stage 1");
	Node *sr = t_find_op(g, OP_SEND_RECV);
	cr_assert_eq(attr_i(sr, "from"), 0);
	cr_assert_eq(attr_i(sr, "to"), 1);
	cr_assert_eq(r.nnotes, 2);
	cr_assert(strstr(r.notes[0], "stage 0: a0 .. h1"), "%s", r.notes[0]);
	spmd_matches(g);
	diag_free(&d);
	done(g, &r);
}

Test(shard, layer_groups_data_then_tensor)
{
	/* --parallel=auto's mixed strategy: the first half batch-split, the
	 * second tensor-parallel (its input gathered whole, its weights split) */
	Diag d;
	diag_init(&d);
	Graph *g = t_parse("graph g {\n  input x : f32[8, 16]\n  const w0 : f32[16, 16] = normal(1, 0, 0.3)\n"
			   "  const w1 : f32[16, 16] = normal(2, 0, 0.3)\n  const w2 : f32[16, 16] = normal(3, 0, 0.3)\n"
			   "  const w3 : f32[16, 16] = normal(4, 0, 0.3)\n"
			   "  a0 = matmul(x, w0)\n  h0 = relu(a0)\n  a1 = matmul(h0, w1)\n  h1 = relu(a1)\n"
			   "  a2 = matmul(h1, w2)\n  h2 = relu(a2)\n  a3 = matmul(h2, w3)\n  h3 = relu(a3)\n  output h3\n}\n", &d);
	cr_assert(g && graph_verify(g, &d));
	bool tensor[2] = {false, true};
	cr_assert(shard_apply_groups(g, tensor, 2, 2, &d) && shard_resolve(g, &d));
	ShardReport r = {0};
	cr_assert(shard_propagate(g, &r, &d));
	t_check_graph(g);
	SH_EQ(g, "x", "[d, _]");
	SH_EQ(g, "h0", "[d, _]");
	SH_EQ(g, "w0", "[_, _]");
	SH_EQ(g, "w2", "[_, d]");
	SH_EQ(g, "w3", "[d, _]");
	SH_EQ(g, "h3", "[_, _]");
	cr_assert_eq(t_count_op(g, OP_ALL_GATHER), 1, "h1 gathered into the tensor-parallel group");
	cr_assert_eq(t_count_op(g, OP_ALL_REDUCE), 1, "its row-parallel matmul's partial sum");
	spmd_matches(g);
	diag_free(&d);
	done(g, &r);
}
