/* Verifier: every error class, with its message and location, and the
 * types it infers. */
#include <string.h>

#include "npy.h"
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

Test(verify, unused_value)
{
	expect("graph g {\n  input x : f32[2]\n  t = relu(x)\n  y = exp(x)\n  output y\n}\n",
	       "'t' is computed but never used and is not an output", 3, 3);
	expect("graph g {\n  input x : f32[2]\n  const w : f32[2] = zeros\n  y = exp(x)\n  output y\n}\n",
	       "'w' is computed but never used and is not an output", 3, 9);
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
