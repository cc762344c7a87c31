/* Verifier: every error class, with its message and location, and the
 * types it infers. */
#include <string.h>

#include "gdcc_limits.h"
#include "npy.h"
#include "verify.h"
#include "test_util.h"

static void expect(const char *text, const char *msg, int line, int col)
{
	Diag d;
	t_expect_errors(text, &d);
	t_assert_error_at(&d, msg, line, col);
	diag_free(&d);
}

Test(verify, infers_types)
{
	Graph *g = t_model("graph g {\n  input x : f32[4, 3]\n  const w : f32[3, 5] = zeros\n"
			   "  h = matmul(x, w)\n  s = shape(h)\n  output h, s\n}\n");
	cr_assert_eq(g->outputs[0]->type.dtype, DT_F32);
	cr_assert_eq(g->outputs[0]->type.shape.rank, 2);
	cr_assert_eq(g->outputs[0]->type.shape.dim[0], 4);
	cr_assert_eq(g->outputs[0]->type.shape.dim[1], 5);
	cr_assert_eq(g->outputs[1]->type.dtype, DT_I64);
	cr_assert_eq(g->outputs[1]->type.shape.dim[0], 2);
	graph_free(g);
}

Test(verify, wrong_operand_count)
{
	expect("graph g {\n  input x : f32[2]\n  y = add(x)\n  output y\n}\n", "add: wrong operand count: takes 2, got 1", 3, 7);
	expect("graph g {\n  input x : f32[2]\n  y = gemm(x, x, x, x)\n  output y\n}\n",
	       "gemm: wrong operand count: takes 2 to 3, got 4", 3, 7);
	expect("graph g {\n  y = concat(axis=0)\n  output y\n}\n", "concat: wrong operand count: takes at least 1, got 0", 2,
	       7);
}

Test(verify, wrong_result_count)
{
	expect("graph g {\n  input x : f32[2]\n  y, z = relu(x)\n  output y\n}\n", "relu: wrong result count: gives 1, got 2 names",
	       3, 10);
}

Test(verify, unknown_attribute)
{
	expect("graph g {\n  input x : f32[2]\n  y = relu(x, alpha=0.1)\n  output y\n}\n",
	       "relu: unknown attribute 'alpha' (accepted: none)", 3, 15);
	expect("graph g {\n  input x : f32[2]\n  y = leaky_relu(x, alpah=0.1)\n  output y\n}\n",
	       "leaky_relu: unknown attribute 'alpah' (accepted: alpha)", 3, 21);
}

Test(verify, attribute_out_of_range)
{
	expect("graph g {\n  input x : f32[1, 2, 4, 4]\n  const w : f32[2, 2, 1, 1] = zeros\n"
	       "  y = conv(x, w, group=0)\n  output y\n}\n",
	       "conv: attribute 'group' = 0 is out of range [1, 2147483647]", 4, 18);
	expect("graph g {\n  input x : f32[2]\n  y = dropout(x, ratio=1.5)\n  output y\n}\n",
	       "dropout: attribute 'ratio' = 1.5 is out of range [0, 1]", 3, 18);
	expect("graph g {\n  input x : f32[2]\n  y = gelu(x, approximate=\"fast\")\n  output y\n}\n",
	       "gelu: attribute 'approximate' = \"fast\" is not one of none|tanh", 3, 15);
}

Test(verify, attribute_wrong_kind)
{
	expect("graph g {\n  input x : f32[2, 2]\n  y = softmax(x, axis=1.5)\n  output y\n}\n",
	       "softmax: attribute 'axis' must be an int, got a float", 3, 18);
	expect("graph g {\n  input x : f32[2, 2]\n  y = transpose(x, perm=\"10\")\n  output y\n}\n",
	       "transpose: attribute 'perm' must be an int list, got a string", 3, 20);
}

Test(verify, one_number_is_a_one_element_list)
{
	Graph *g = t_model("graph g {\n  input x : f32[2, 1]\n  y = squeeze(x, axes=1)\n  output y\n}\n");
	const Attr *a = node_attr(g->nodes[0], "axes");
	cr_assert_eq(a->kind, ATTR_INTS);
	cr_assert_eq(a->n, 1);
	cr_assert_eq(a->ints[0], 1);
	cr_assert_eq(g->outputs[0]->type.shape.rank, 1);
	graph_free(g);
}

Test(verify, missing_required_attribute)
{
	expect("graph g {\n  input x : f32[1, 1, 4, 4]\n  y = maxpool(x)\n  output y\n}\n",
	       "maxpool: missing required attribute 'kernel_shape'", 3, 7);
}

Test(verify, shape_mismatch_prints_both_shapes)
{
	Diag d;
	t_expect_errors("graph g {\n  input a : f32[2, 3]\n  input b : f32[4]\n  y = add(a, b)\n  output y\n}\n", &d);
	const DiagEntry *e = diag_find(&d, "shape mismatch");
	cr_assert_not_null(e);
	cr_assert(strstr(e->msg, "f32[2,3]") && strstr(e->msg, "f32[4]"), "message: %s", e->msg);
	cr_assert_eq(e->loc.line, 4);
	diag_free(&d);
}

Test(verify, declared_shape_mismatch)
{
	expect("graph g {\n  input x : f32[2, 3]\n  y : f32[3, 2] = relu(x)\n  output y\n}\n",
	       "shape mismatch: 'y' is declared f32[3,2] but relu gives f32[2,3]", 3, 3);
}

Test(verify, dtype_mismatch)
{
	Diag d;
	t_expect_errors("graph g {\n  input a : f32[2]\n  input b : i64[2]\n  y = add(a, b)\n  output y\n}\n", &d);
	const DiagEntry *e = diag_find(&d, "dtype mismatch");
	cr_assert_not_null(e);
	cr_assert(strstr(e->msg, "f32") && strstr(e->msg, "i64"), "message: %s", e->msg);
	cr_assert_eq(e->loc.line, 4);
	cr_assert_eq(e->loc.col, 14);
	diag_free(&d);
	expect("graph g {\n  input x : i64[2]\n  y = exp(x)\n  output y\n}\n", "exp: dtype mismatch: operand 1 ('x') is i64, expected f32",
	       3, 11);
	expect("graph g {\n  input x : f32[2]\n  y : i64[2] = relu(x)\n  output y\n}\n",
	       "dtype mismatch: 'y' is declared i64[2] but relu gives f32[2]", 3, 3);
}

Test(verify, dtype_without_kernels_yet)
{
	expect("graph g {\n  input x : bf16[2]\n  y = relu(x)\n  output y\n}\n",
	       "relu: operand 1 ('x') has dtype bf16, which no op supports yet", 3, 12);
}

/* A dead node is a warning at the node (the model compiles; pass_dce
 * removes it at -O1 and above), not an error. */
static void expect_dead_warning(const char *text, const char *msg, int line, int col)
{
	Diag d;
	diag_init(&d);
	Graph *g = t_parse(text, &d);
	cr_assert_not_null(g);
	bool ok = graph_verify(g, &d);
	if (!ok)
		diag_print(&d, stderr);
	cr_assert(ok, "a dead node must not be an error");
	cr_assert_eq(d.nerrors, 0);
	const DiagEntry *e = diag_find(&d, msg);
	cr_assert_not_null(e, "no warning \"%s\"", msg);
	cr_assert_eq(e->level, DIAG_WARNING);
	cr_assert_eq(e->loc.line, line);
	cr_assert_eq(e->loc.col, col);
	cr_assert(strstr(e->msg, "removed at -O1 and above"), "message: %s", e->msg);
	graph_free(g);
	diag_free(&d);
}

Test(verify, unused_value_is_a_warning)
{
	expect_dead_warning("graph g {\n  input x : f32[2]\n  t = relu(x)\n  y = exp(x)\n  output y\n}\n",
			    "'t' is computed but never used and is not an output", 3, 3);
	expect_dead_warning("graph g {\n  input x : f32[2]\n  const w : f32[2] = zeros\n  y = exp(x)\n  output y\n}\n",
			    "'w' is computed but never used and is not an output", 3, 9);
}

Test(verify, dead_chain_warns_once)
{
	/* Only the node nothing reads is named, not the chain feeding it. */
	Diag d;
	diag_init(&d);
	Graph *g = t_parse("graph g {\n  input x : f32[2]\n  t = relu(x)\n  u = neg(t)\n  y = exp(x)\n  output y\n}\n", &d);
	cr_assert(graph_verify(g, &d));
	cr_assert_not_null(diag_find(&d, "'u' is computed but never used"));
	cr_assert_null(diag_find(&d, "'t' is computed"));
	graph_free(g);
	diag_free(&d);
}

Test(verify, unused_extra_result_is_fine)
{
	Graph *g = t_model("graph g {\n  input x : f32[4]\n  a, b = split(x, split=[1, 3])\n  output a\n}\n");
	graph_free(g);
}

Test(verify, unused_input_is_a_warning)
{
	Diag d;
	diag_init(&d);
	Graph *g = t_parse("graph g {\n  input x : f32[2]\n  input u : f32[2]\n  y = relu(x)\n  output y\n}\n", &d);
	cr_assert(graph_verify(g, &d));
	const DiagEntry *e = diag_find(&d, "input 'u' is never used");
	cr_assert_not_null(e);
	cr_assert_eq(e->level, DIAG_WARNING);
	graph_free(g);
	diag_free(&d);
}

Test(verify, no_outputs)
{
	expect("graph g {\n  input x : f32[2]\n}\n", "graph 'g' has no outputs", 1, 7);
}

Test(verify, output_twice)
{
	expect("graph g {\n  input x : f32[2]\n  output x, x\n}\n", "'x' is already an output", 3, 13);
}

Test(verify, constant_value_count)
{
	expect("graph g {\n  const w : f32[2, 2] = [1, 2, 3]\n  output w\n}\n",
	       "constant 'w' is declared f32[2,2] (4 elements) but 3 values are given", 2, 25);
	expect("graph g {\n  const w : i64[2] = [1, 2.5]\n  output w\n}\n", "value 2 (2.5) is not an integer", 2, 22);
}

Test(verify, missing_npy_file)
{
	expect("graph g {\n  const w : f32[2] = npy(\"no/such/file.npy\")\n  output w\n}\n",
	       "cannot read 'no/such/file.npy': cannot open: No such file or directory", 2, 22);
}

Test(verify, malformed_npy_file)
{
	FILE *f = fopen("bad_magic.npy", "wb");
	fputs("this is not numpy", f);
	fclose(f);
	expect("graph g {\n  const w : f32[2] = npy(\"bad_magic.npy\")\n  output w\n}\n",
	       "cannot read 'bad_magic.npy': not a .npy file (bad magic)", 2, 22);
	remove("bad_magic.npy");
}

Test(verify, npy_type_mismatch)
{
	Shape s = shape_make(1, (int64_t[]){3});
	Tensor *t = tensor_new(DT_F32, &s);
	char *err = NULL;
	cr_assert(npy_write("three.npy", t, &err));
	tensor_free(t);
	expect("graph g {\n  const w : f32[2] = npy(\"three.npy\")\n  output w\n}\n",
	       "'three.npy' holds f32[3] but 'w' is declared f32[2]", 2, 22);
	remove("three.npy");
}

Test(verify, several_errors_in_one_run)
{
	Diag d;
	t_expect_errors("graph g {\n  input a : f32[2, 3]\n  input b : f32[4]\n  y = add(a, b)\n"
			"  z = softmax(a, axis=5)\n  w = matmul(a, a)\n  output y, z, w\n}\n",
			&d);
	cr_assert_eq(d.nerrors, 3, "got %d errors", d.nerrors);
	t_assert_error_at(&d, "attribute 'axis' = 5 is out of range [-2, 1]", 5, 18);
	diag_free(&d);
}

Test(verify, no_cascade_from_a_failed_node)
{
	Diag d;
	t_expect_errors("graph g {\n  input a : f32[2, 3]\n  input b : f32[4]\n  y = add(a, b)\n"
			"  z = relu(y)\n  output z\n}\n",
			&d);
	cr_assert_eq(d.nerrors, 1);
	diag_free(&d);
}

/* ---- resource limits and overflow (regression cases of the 2026-12-01
 * fuzzing run: ../shared/bugs/fuzz-2026-12-01, copied into tests/bad-inputs) */
Test(verify, shape_product_overflow_is_located)
{
	expect("graph g {\n  input x : f32[4294967296, 4294967296]\n  y = relu(x)\n  output y\n}\n",
	       "'x': f32[4294967296,4294967296] has more elements than fit in 64 bits", 2, 9);
	expect("graph g {\n  input x : f32[2]\n  const c : f32[4294967296, 4294967296] = zeros\n  output c\n}\n",
	       "'c': f32[4294967296,4294967296] has more elements than fit in 64 bits", 3, 9);
	/* 16777232 * 1099510579201 = 2^64 + 16: wraps to a small number */
	expect("graph g {\n  input x : f32[16777232, 1099510579201]\n  y = transpose(x, perm=[1, 0])\n  output y\n}\n",
	       "has more elements than fit in 64 bits", 2, 9);
	expect("graph g {\n  input x : f32[1099511627776, 4194304]\n  y = relu(x)\n  output y\n}\n",
	       "'x': f32[1099511627776,4194304] has more bytes than fit in 64 bits", 2, 9);
}

Test(verify, tensor_above_the_limit_before_allocation)
{
	expect("graph g {\n  const c : f32[100000, 100000, 100] = zeros\n  y = relu(c)\n  output y\n}\n",
	       "'c': f32[100000,100000,100] is 4000000000000 bytes (3.64 TiB), above the limit of 4294967296 bytes "
	       "(4 GiB; --max-tensor-bytes)", 2, 9);
	/* an inferred result above the limit: expand to 2^31 floats */
	expect("graph g {\n  input x : f32[1]\n  y = expand(x, shape=[2147483648])\n  output y\n}\n",
	       "'y': f32[2147483648] is 8589934592 bytes (8 GiB), above the limit", 3, 3);
}

Test(verify, limits_are_configurable)
{
	Limits saved = *limits(), small = {1024, 4096};
	limits_set(&small);
	expect("graph g {\n  input x : f32[257]\n  y = relu(x)\n  output y\n}\n",
	       "'x': f32[257] is 1028 bytes (1 KiB), above the limit of 1024 bytes", 2, 9);
	expect("graph g {\n  input x : f32[200]\n  y = relu(x)\n  z = relu(y)\n  w = relu(z)\n  v = relu(w)\n"
	       "  u = relu(v)\n  output u\n}\n",
	       "graph 'g': its tensors total 4800 bytes, above the limit of 4096 bytes (--max-workspace-bytes)", 1, 7);
	limits_set(&saved);
	uint64_t b;
	cr_assert(parse_byte_size("4G", &b) && b == (uint64_t)4 << 30);
	cr_assert(parse_byte_size("123", &b) && b == 123);
	cr_assert_not(parse_byte_size("0", &b));
	cr_assert_not(parse_byte_size("4X", &b));
	cr_assert_not(parse_byte_size("-1", &b));
	cr_assert_not(parse_byte_size("99999999999999999999", &b));
	cr_assert_not(parse_byte_size("17179869184T", &b)); /* 2^34 * 2^40 overflows */
}

/* A maxpool over 2^40 elements hung in shape inference (every window
 * walked): with the limit raised it now takes O(1) per axis. */
Test(verify, pool_window_check_is_not_linear_in_the_size, .timeout = 10)
{
	Limits saved = *limits(), big = {(uint64_t)1 << 44, (uint64_t)1 << 46};
	limits_set(&big);
	Graph *g = t_model("graph g {\n  input x : f32[1, 1, 1099511627776]\n  y = maxpool(x, kernel_shape=[1])\n"
			   "  output y\n}\n");
	cr_assert_eq(g->outputs[0]->type.shape.dim[2], (int64_t)1 << 40);
	graph_free(g);
	limits_set(&saved);
	/* the windows that cover only padding are still found, on either side
	 * and with a dilation that steps over the input */
	expect("graph g {\n  input x : f32[1, 1, 5]\n  y = maxpool(x, kernel_shape=[2], pads=[2, 0])\n  output y\n}\n",
	       "window 0 along spatial axis 0 of f32[1,1,5] covers only padding", 3, 36);
	expect("graph g {\n  input x : f32[1, 1, 5]\n  y = maxpool(x, kernel_shape=[2], pads=[0, 3], strides=[2])\n"
	       "  output y\n}\n",
	       "window 3 along spatial axis 0 of f32[1,1,5] covers only padding", 3, 36);
	expect("graph g {\n  input x : f32[1, 1, 1]\n  y = maxpool(x, kernel_shape=[2], pads=[2, 2], dilations=[3])\n"
	       "  output y\n}\n",
	       "window 0 along spatial axis 0 of f32[1,1,1] covers only padding", 3, 36);
}

/* graph_prune of a long dead chain: one pass (it was quadratic). */
Test(verify, prune_long_dead_chain, .timeout = 10)
{
	enum { N = 50000 };
	size_t cap = (size_t)N * 40 + 200, k = 0;
	char *text = malloc(cap);
	k += (size_t)snprintf(text + k, cap - k, "graph g {\n  input x : f32[2]\n  y = relu(x)\n  v0 = neg(x)\n");
	for (int i = 1; i < N; i++)
		k += (size_t)snprintf(text + k, cap - k, "  v%d = neg(v%d)\n", i, i - 1);
	k += (size_t)snprintf(text + k, cap - k, "  output y, v%d\n}\n", N - 1);
	Graph *g = t_model(text);
	free(text);
	g->outputs[1]->is_output = false;
	g->outputs[1]->nuses--;
	g->noutputs = 1;
	graph_prune(g);
	cr_assert_eq(g->nnodes, 1);
	cr_assert_eq(g->nvalues, 2);
	cr_assert_not_null(graph_find_value(g, "y"));
	cr_assert_null(graph_find_value(g, "v7"));
	graph_free(g);
}

/* Inline integer constants are exact and range-checked (regression: the
 * fuzzer's tests/fuzz/corpus/ir/ir-i32-const-out-of-range-ub.ir and
 * ir-i64-const-*.ir: values were doubles, cast without a range check). */
Test(verify, inline_integer_constants_exact_and_in_range)
{
	expect("graph g {\n  const b : i32[1] = [-3147483648]\n  output b\n}\n",
	       "constant 'b' is i32 but value 1 (-3147483648) is out of its range [-2147483648, 2147483647]", 2, 22);
	expect("graph g {\n  const b : i64[2] = [1, 1e300]\n  output b\n}\n",
	       "constant 'b' is i64 but value 2 (1e+300) is not an integer", 2, 22);
	Graph *g = t_model("graph g {\n  const a : i64[3] = [9223372036854775807, -9223372036854775808, 9007199254740993]\n"
			   "  output a\n}\n");
	Tensor *t = tensor_new(DT_I64, &g->outputs[0]->type.shape);
	Diag d;
	diag_init(&d);
	cr_assert(materialize_constant(g->nodes[0], t, &d));
	const int64_t *v = t->data;
	cr_assert_eq(v[0], INT64_MAX);
	cr_assert_eq(v[1], INT64_MIN);
	cr_assert_eq(v[2], 9007199254740993LL);
	diag_free(&d);
	tensor_free(t);
	graph_free(g);
}
