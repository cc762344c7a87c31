/* Shape rules and reference kernels of ops_elementwise.c: arithmetic with
 * broadcasting, variadic ops, unary activations, clip, identity, dropout,
 * softmax, reduce_mean, matmul and gemm.  Expected values are worked out by
 * hand in the comments; transcendental constants are the textbook values
 * (e^-1 = 0.36787944117, erf(1) = 0.84270079295, ...). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "util.h"

/* ---- helpers ----------------------------------------------------------- */

static Tensor *t_i32(int rank, const int64_t *dims, const int32_t *vals)
{
	Shape s = shape_make(rank, dims);
	Tensor *t = tensor_new(DT_I32, &s);
	if (tensor_bytes(t))
		memcpy(t->data, vals, tensor_bytes(t));
	return t;
}

static void assert_i32(const Tensor *got, int rank, const int64_t *dims, const int32_t *want)
{
	Shape s = shape_make(rank, dims);
	cr_assert_eq(got->type.dtype, DT_I32, "dtype %s, expected i32", dtype_name(got->type.dtype));
	cr_assert(shape_eq(&got->type.shape, &s), "wrong shape");
	const int32_t *g = got->data;
	for (int64_t i = 0; i < tensor_numel(got); i++)
		cr_assert_eq(g[i], want[i], "element %lld: got %d, expected %d", (long long)i, g[i], want[i]);
}

static void free_inputs(int nin, Tensor **in)
{
	for (int i = 0; i < nin; i++)
		tensor_free(in[i]);
}

/* Check a model's first output against f32 values; frees everything. */
static void check_f32(const char *model, int nin, Tensor **in, int rank, const int64_t *dims, const float *want,
		      double rtol, double atol)
{
	Graph *g = t_model(model);
	Tensor **o = t_run(g, in);
	t_assert_close(o[0], rank, dims, want, rtol, atol);
	t_free_outputs(g, o);
	graph_free(g);
	free_inputs(nin, in);
}

static void check_i64(const char *model, int nin, Tensor **in, int rank, const int64_t *dims, const int64_t *want)
{
	Graph *g = t_model(model);
	Tensor **o = t_run(g, in);
	t_assert_i64(o[0], rank, dims, want);
	t_free_outputs(g, o);
	graph_free(g);
	free_inputs(nin, in);
}

static void check_i32(const char *model, int nin, Tensor **in, int rank, const int64_t *dims, const int32_t *want)
{
	Graph *g = t_model(model);
	Tensor **o = t_run(g, in);
	assert_i32(o[0], rank, dims, want);
	t_free_outputs(g, o);
	graph_free(g);
	free_inputs(nin, in);
}

/* y = EXPR over one input x : f32[n]. */
static void check_unary(const char *expr, int n, const float *x, const float *want, double rtol, double atol)
{
	char model[256];
	snprintf(model, sizeof model, "graph t {\n  input x : f32[%d]\n  y = %s\n  output y\n}\n", n, expr);
	Tensor *in[] = {t_f32(1, DIMS(n), x)};
	check_f32(model, 1, in, 1, DIMS(n), want, rtol, atol);
}

/* Run a model expecting a run-time (kernel) error containing msg.  The
 * Diag that parsed the model stays alive while it runs: the graph's
 * locations point at the file name it interned. */
static void check_run_fails(const char *model, int nin, Tensor **in, const char *msg)
{
	Diag d;
	diag_init(&d);
	Graph *g = t_parse(model, &d);
	cr_assert(g != NULL && graph_verify(g, &d), "model did not check");
	Tensor **o = xcalloc(g->noutputs, sizeof *o);
	bool ok = interp_run(g, in, o, &d);
	bool found = diag_find(&d, msg) != NULL;
	if (!found)
		diag_print(&d, stderr);
	for (int i = 0; i < g->noutputs; i++)
		tensor_free(o[i]);
	free(o);
	diag_free(&d);
	graph_free(g);
	free_inputs(nin, in);
	cr_assert(!ok, "run succeeded, expected \"%s\"", msg);
	cr_assert(found, "no error containing \"%s\"", msg);
}

/* A single-op graph over inputs of the given types; expects verification
 * to fail with msg. */
static void check_verify_fails(OpKind op, int nin, const TensorType *types, int nout, const char *msg)
{
	Node *n;
	Graph *g = t_single_op(op, nin, types, nout, &n);
	t_verify_fails(g, msg);
	graph_free(g);
}

/* Empty tensors: a graph with an empty input, output or `zeros` constant
 * trips UBSan in interp.c / ops_const.c (memcpy/memset with a NULL pointer
 * and size 0), so empty results are checked by calling the kernel
 * directly on a verified single-op node; an empty operand feeding a
 * non-empty result comes from a fill(0) constant. */
static void check_empty_result(OpKind op, int nin, const TensorType *types, int rank, const int64_t *dims)
{
	Node *n;
	Graph *g = t_single_op(op, nin, types, 1, &n);
	t_verify_ok(g);
	Tensor *in[8];
	for (int i = 0; i < nin; i++)
		in[i] = tensor_new(n->in[i]->type.dtype, &n->in[i]->type.shape);
	Tensor *out[1] = {tensor_new(n->out[0]->type.dtype, &n->out[0]->type.shape)};
	Diag d;
	diag_init(&d);
	bool ok = op_info[op].kernel(n, in, out, &d);
	if (!ok)
		diag_print(&d, stderr);
	diag_free(&d);
	Shape want = shape_make(rank, dims);
	bool shape_ok = shape_eq(&out[0]->type.shape, &want);
	int64_t numel = tensor_numel(out[0]);
	bool all_nan = true;
	for (int64_t i = 0; i < numel; i++)
		all_nan &= isnan(tensor_get_f(out[0], i));
	free_inputs(nin, in);
	tensor_free(out[0]);
	graph_free(g);
	cr_assert(ok, "kernel failed");
	cr_assert(shape_ok, "wrong result shape");
	/* a non-empty result here is the mean of nothing: NaN */
	cr_assert(numel == 0 || all_nan, "expected an empty result or NaN");
}

#define BINARY_MODEL(op, ta, tb) \
	"graph t {\n  input a : " ta "\n  input b : " tb "\n  y = " op "(a, b)\n  output y\n}\n"

/* ---- add sub mul div: same shape and broadcasting --------------------- */

Test(elementwise, add_same_shape)
{
	Tensor *in[] = {t_f32(2, DIMS(2, 3), F32S(1, 2, 3, 4, 5, 6)),
			t_f32(2, DIMS(2, 3), F32S(10, 20, 30, 40, 50, 60))};
	check_f32(BINARY_MODEL("add", "f32[2,3]", "f32[2,3]"), 2, in, 2, DIMS(2, 3), F32S(11, 22, 33, 44, 55, 66), 1e-6,
		  1e-6);
}

Test(elementwise, sub_mul_div_same_shape)
{
	Tensor *a[] = {t_f32(1, DIMS(4), F32S(1, 2, -3, 0.5f)), t_f32(1, DIMS(4), F32S(4, -2, 0.5f, 0.25f))};
	check_f32(BINARY_MODEL("sub", "f32[4]", "f32[4]"), 2, a, 1, DIMS(4), F32S(-3, 4, -3.5f, 0.25f), 1e-6, 1e-6);
	Tensor *b[] = {t_f32(1, DIMS(4), F32S(1, 2, -3, 0.5f)), t_f32(1, DIMS(4), F32S(4, -2, 0.5f, 0.25f))};
	check_f32(BINARY_MODEL("mul", "f32[4]", "f32[4]"), 2, b, 1, DIMS(4), F32S(4, -4, -1.5f, 0.125f), 1e-6, 1e-6);
	Tensor *c[] = {t_f32(1, DIMS(4), F32S(1, 2, -3, 0.5f)), t_f32(1, DIMS(4), F32S(4, -2, 0.5f, 0.25f))};
	check_f32(BINARY_MODEL("div", "f32[4]", "f32[4]"), 2, c, 1, DIMS(4), F32S(0.25f, -1, -6, 2), 1e-6, 1e-6);
}

Test(elementwise, div_float_by_zero_is_inf_or_nan)
{
	Tensor *in[] = {t_f32(1, DIMS(3), F32S(1, -1, 0)), t_f32(1, DIMS(3), F32S(0, 0, 0))};
	check_f32(BINARY_MODEL("div", "f32[3]", "f32[3]"), 2, in, 1, DIMS(3), F32S(INFINITY, -INFINITY, NAN), 0, 0);
}

Test(elementwise, broadcast_scalar_rank0)
{
	/* [2,2] + scalar 10, and scalar - [2,2] (the scalar on the left). */
	Tensor *a[] = {t_f32(2, DIMS(2, 2), F32S(1, 2, 3, 4)), t_f32(0, NULL, F32S(10))};
	check_f32(BINARY_MODEL("add", "f32[2,2]", "f32[]"), 2, a, 2, DIMS(2, 2), F32S(11, 12, 13, 14), 1e-6, 1e-6);
	Tensor *b[] = {t_f32(0, NULL, F32S(10)), t_f32(2, DIMS(2, 2), F32S(1, 2, 3, 4))};
	check_f32(BINARY_MODEL("sub", "f32[]", "f32[2,2]"), 2, b, 2, DIMS(2, 2), F32S(9, 8, 7, 6), 1e-6, 1e-6);
	/* scalar op scalar stays rank 0 */
	Tensor *c[] = {t_f32(0, NULL, F32S(3)), t_f32(0, NULL, F32S(4))};
	check_f32(BINARY_MODEL("mul", "f32[]", "f32[]"), 2, c, 0, NULL, F32S(12), 1e-6, 1e-6);
}

Test(elementwise, broadcast_row_vector)
{
	/* [2,3] * [3]: each row scaled by [1, 10, 100]. */
	Tensor *in[] = {t_f32(2, DIMS(2, 3), F32S(1, 2, 3, 4, 5, 6)), t_f32(1, DIMS(3), F32S(1, 10, 100))};
	check_f32(BINARY_MODEL("mul", "f32[2,3]", "f32[3]"), 2, in, 2, DIMS(2, 3), F32S(1, 20, 300, 4, 50, 600), 1e-6,
		  1e-6);
	/* and [3] - [2,3] */
	Tensor *b[] = {t_f32(1, DIMS(3), F32S(1, 10, 100)), t_f32(2, DIMS(2, 3), F32S(1, 2, 3, 4, 5, 6))};
	check_f32(BINARY_MODEL("sub", "f32[3]", "f32[2,3]"), 2, b, 2, DIMS(2, 3), F32S(0, 8, 97, -3, 5, 94), 1e-6,
		  1e-6);
}

Test(elementwise, broadcast_column_with_row)
{
	/* [2,1] + [1,3] -> [2,3]: outer sum of [10, 20] and [1, 2, 3]. */
	Tensor *in[] = {t_f32(2, DIMS(2, 1), F32S(10, 20)), t_f32(2, DIMS(1, 3), F32S(1, 2, 3))};
	check_f32(BINARY_MODEL("add", "f32[2,1]", "f32[1,3]"), 2, in, 2, DIMS(2, 3), F32S(11, 12, 13, 21, 22, 23),
		  1e-6, 1e-6);
	/* [2,1] / [1,3] */
	Tensor *b[] = {t_f32(2, DIMS(2, 1), F32S(6, 12)), t_f32(2, DIMS(1, 3), F32S(1, 2, 3))};
	check_f32(BINARY_MODEL("div", "f32[2,1]", "f32[1,3]"), 2, b, 2, DIMS(2, 3), F32S(6, 3, 2, 12, 6, 4), 1e-6,
		  1e-6);
}

Test(elementwise, broadcast_rank4_batch)
{
	/* a : [2,1,1,3] with a[i,0,0,k] = 10i + k; b : [1,2,1,1] with
	 * b[0,j,0,0] = 100j.  y : [2,2,1,3], y[i,j,0,k] = 10i + k + 100j. */
	Tensor *in[] = {t_f32(4, DIMS(2, 1, 1, 3), F32S(0, 1, 2, 10, 11, 12)),
			t_f32(4, DIMS(1, 2, 1, 1), F32S(0, 100))};
	check_f32(BINARY_MODEL("add", "f32[2,1,1,3]", "f32[1,2,1,1]"), 2, in, 4, DIMS(2, 2, 1, 3),
		  F32S(0, 1, 2, 100, 101, 102, 10, 11, 12, 110, 111, 112), 1e-6, 1e-6);
}

Test(elementwise, broadcast_lower_rank_into_rank4)
{
	/* [2,3] broadcast against [2,1,1,1] (rank difference 2):
	 * y[i,0,j,k] = b[i] * a[j,k]. */
	Tensor *in[] = {t_f32(2, DIMS(2, 3), F32S(1, 2, 3, 4, 5, 6)), t_f32(4, DIMS(2, 1, 1, 1), F32S(1, -1))};
	check_f32(BINARY_MODEL("mul", "f32[2,3]", "f32[2,1,1,1]"), 2, in, 4, DIMS(2, 1, 2, 3),
		  F32S(1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6), 1e-6, 1e-6);
}

Test(elementwise, broadcast_empty)
{
	/* [0,3] + [3] -> [0,3]: nothing to compute, but must not fail. */
	check_empty_result(OP_ADD, 2, (TensorType[]){t_type(DT_F32, 2, DIMS(0, 3)), t_type(DT_F32, 1, DIMS(3))}, 2,
			   DIMS(0, 3));
	/* [1] * [0] -> [0]; i64 [2,1] - [0] -> [2,0] */
	check_empty_result(OP_MUL, 2, (TensorType[]){t_type(DT_F32, 1, DIMS(1)), t_type(DT_F32, 1, DIMS(0))}, 1,
			   DIMS(0));
	check_empty_result(OP_SUB, 2, (TensorType[]){t_type(DT_I64, 2, DIMS(2, 1)), t_type(DT_I64, 1, DIMS(0))}, 2,
			   DIMS(2, 0));
	check_empty_result(OP_SUM, 3,
			   (TensorType[]){t_type(DT_F32, 1, DIMS(0)), t_type(DT_F32, 0, NULL), t_type(DT_F32, 2, DIMS(1, 1))},
			   2, DIMS(1, 0));
}

Test(elementwise, same_value_twice)
{
	Tensor *in[] = {t_f32(1, DIMS(3), F32S(1, -2, 3))};
	check_f32("graph t {\n  input a : f32[3]\n  y = mul(a, a)\n  output y\n}\n", 1, in, 1, DIMS(3), F32S(1, 4, 9),
		  1e-6, 1e-6);
}

/* ---- integer arithmetic ------------------------------------------------- */

Test(elementwise, int64_add_sub_mul)
{
	Tensor *a[] = {t_i64(1, DIMS(3), I64S(1, -2, 3000000000LL)), t_i64(1, DIMS(3), I64S(10, 20, 3000000000LL))};
	check_i64(BINARY_MODEL("add", "i64[3]", "i64[3]"), 2, a, 1, DIMS(3), I64S(11, 18, 6000000000LL));
	Tensor *b[] = {t_i64(1, DIMS(3), I64S(1, -2, 5)), t_i64(0, NULL, I64S(7))};
	check_i64(BINARY_MODEL("sub", "i64[3]", "i64[]"), 2, b, 1, DIMS(3), I64S(-6, -9, -2));
	Tensor *c[] = {t_i64(2, DIMS(2, 1), I64S(2, -3)), t_i64(1, DIMS(2), I64S(4, 5))};
	check_i64(BINARY_MODEL("mul", "i64[2,1]", "i64[2]"), 2, c, 2, DIMS(2, 2), I64S(8, 10, -12, -15));
}

Test(elementwise, int64_div_truncates_toward_zero)
{
	/* 7/2 = 3.5 -> 3, -7/2 -> -3, 7/-2 -> -3, -7/-2 -> 3, 6/3 = 2, 1/5 -> 0 */
	Tensor *in[] = {t_i64(1, DIMS(6), I64S(7, -7, 7, -7, 6, 1)), t_i64(1, DIMS(6), I64S(2, 2, -2, -2, 3, 5))};
	check_i64(BINARY_MODEL("div", "i64[6]", "i64[6]"), 2, in, 1, DIMS(6), I64S(3, -3, -3, 3, 2, 0));
}

Test(elementwise, int32_div_and_add)
{
	Tensor *a[] = {t_i32(1, DIMS(4), (int32_t[]){9, -9, 100, -1}), t_i32(1, DIMS(4), (int32_t[]){4, 4, -7, 3})};
	/* 9/4 = 2.25 -> 2, -9/4 -> -2, 100/-7 = -14.28 -> -14, -1/3 -> 0 */
	check_i32(BINARY_MODEL("div", "i32[4]", "i32[4]"), 2, a, 1, DIMS(4), (int32_t[]){2, -2, -14, 0});
	Tensor *b[] = {t_i32(1, DIMS(2), (int32_t[]){1, 2}), t_i32(2, DIMS(2, 1), (int32_t[]){10, 20})};
	check_i32(BINARY_MODEL("add", "i32[2]", "i32[2,1]"), 2, b, 2, DIMS(2, 2), (int32_t[]){11, 12, 21, 22});
}

Test(elementwise, int_overflow_wraps)
{
	/* Two's complement: INT32_MAX + 1 = INT32_MIN; INT64_MIN / -1 wraps
	 * to INT64_MIN (no trap). */
	Tensor *a[] = {t_i32(1, DIMS(1), (int32_t[]){INT32_MAX}), t_i32(1, DIMS(1), (int32_t[]){1})};
	check_i32(BINARY_MODEL("add", "i32[1]", "i32[1]"), 2, a, 1, DIMS(1), (int32_t[]){INT32_MIN});
	Tensor *b[] = {t_i64(1, DIMS(2), I64S(INT64_MIN, 8)), t_i64(1, DIMS(2), I64S(-1, -1))};
	check_i64(BINARY_MODEL("div", "i64[2]", "i64[2]"), 2, b, 1, DIMS(2), I64S(INT64_MIN, -8));
}

Test(elementwise, int_div_by_zero_is_a_run_time_error)
{
	Tensor *a[] = {t_i64(1, DIMS(3), I64S(1, 2, 3)), t_i64(1, DIMS(3), I64S(1, 0, 1))};
	check_run_fails(BINARY_MODEL("div", "i64[3]", "i64[3]"), 2, a, "div: integer division by zero");
	Tensor *b[] = {t_i32(1, DIMS(2), (int32_t[]){1, 2}), t_i32(0, NULL, (int32_t[]){0})};
	check_run_fails(BINARY_MODEL("div", "i32[2]", "i32[]"), 2, b, "integer division by zero");
}

/* ---- pow ---------------------------------------------------------------- */

Test(elementwise, pow_float_exponent)
{
	/* 2^3 = 8, 4^0.5 = 2, 9^0.5 = 3, 2^-1 = 0.5, 5^0 = 1 */
	Tensor *in[] = {t_f32(1, DIMS(5), F32S(2, 4, 9, 2, 5)), t_f32(1, DIMS(5), F32S(3, 0.5f, 0.5f, -1, 0))};
	check_f32(BINARY_MODEL("pow", "f32[5]", "f32[5]"), 2, in, 1, DIMS(5), F32S(8, 2, 3, 0.5f, 1), 1e-6, 0);
}

Test(elementwise, pow_negative_base)
{
	/* Integer-valued f32 exponent: (-2)^3 = -8, (-2)^2 = 4; a fractional
	 * exponent of a negative base is NaN. */
	Tensor *a[] = {t_f32(1, DIMS(3), F32S(-2, -2, -8)), t_f32(1, DIMS(3), F32S(3, 2, 0.5f))};
	check_f32(BINARY_MODEL("pow", "f32[3]", "f32[3]"), 2, a, 1, DIMS(3), F32S(-8, 4, NAN), 1e-6, 0);
	/* i64 exponent: (-2)^3 = -8, (-2)^2 = 4, (-2)^-1 = -0.5,
	 * (-0.5)^-3 = -8, (-3)^0 = 1, 2^10 = 1024 */
	Tensor *b[] = {t_f32(1, DIMS(6), F32S(-2, -2, -2, -0.5f, -3, 2)), t_i64(1, DIMS(6), I64S(3, 2, -1, -3, 0, 10))};
	check_f32(BINARY_MODEL("pow", "f32[6]", "i64[6]"), 2, b, 1, DIMS(6), F32S(-8, 4, -0.5f, -8, 1, 1024), 1e-6, 0);
	/* i32 exponent */
	Tensor *c[] = {t_f32(1, DIMS(2), F32S(-3, 1.5f)), t_i32(1, DIMS(2), (int32_t[]){3, 2})};
	check_f32(BINARY_MODEL("pow", "f32[2]", "i32[2]"), 2, c, 1, DIMS(2), F32S(-27, 2.25f), 1e-6, 0);
}

Test(elementwise, pow_integers)
{
	/* exact, wrapping: 3^4 = 81, (-2)^3 = -8, 7^0 = 1, 2^-1 truncates to 0,
	 * (-1)^-3 = -1, 1^-5 = 1, 2^64 wraps to 0, 3^40 = 12157665459056928801
	 * wraps to 12157665459056928801 - 2^64 */
	Tensor *in[] = {t_i64(1, DIMS(8), I64S(3, -2, 7, 2, -1, 1, 2, 3)), t_i64(1, DIMS(8), I64S(4, 3, 0, -1, -3, -5, 64, 40))};
	check_i64(BINARY_MODEL("pow", "i64[8]", "i64[8]"), 2, in, 1, DIMS(8),
		  I64S(81, -8, 1, 0, -1, 1, 0, -6289078614652622815LL));
}

Test(elementwise, pow_broadcast)
{
	/* [2,3] ^ scalar 2 */
	Tensor *a[] = {t_f32(2, DIMS(2, 3), F32S(1, 2, 3, -1, -2, -3)), t_f32(0, NULL, F32S(2))};
	check_f32(BINARY_MODEL("pow", "f32[2,3]", "f32[]"), 2, a, 2, DIMS(2, 3), F32S(1, 4, 9, 1, 4, 9), 1e-6, 0);
	/* [2] ^ [2,1] (exponents 1 and 3 per row), i64 exponent */
	Tensor *b[] = {t_f32(1, DIMS(2), F32S(2, -3)), t_i64(2, DIMS(2, 1), I64S(1, 3))};
	check_f32(BINARY_MODEL("pow", "f32[2]", "i64[2,1]"), 2, b, 2, DIMS(2, 2), F32S(2, -3, 8, -27), 1e-6, 0);
}

/* ---- max min sum --------------------------------------------------------- */

Test(elementwise, variadic_one_operand)
{
	const char *fmt = "graph t {\n  input a : f32[3]\n  y = %s(a)\n  output y\n}\n";
	const char *ops[] = {"max", "min", "sum"};
	for (int i = 0; i < 3; i++) {
		char model[128];
		snprintf(model, sizeof model, fmt, ops[i]);
		Tensor *in[] = {t_f32(1, DIMS(3), F32S(3, -1, 2))};
		check_f32(model, 1, in, 1, DIMS(3), F32S(3, -1, 2), 0, 0);
	}
}

Test(elementwise, variadic_two_operands)
{
	Tensor *a[] = {t_f32(1, DIMS(3), F32S(1, 5, -2)), t_f32(1, DIMS(3), F32S(4, 2, -3))};
	check_f32(BINARY_MODEL("max", "f32[3]", "f32[3]"), 2, a, 1, DIMS(3), F32S(4, 5, -2), 0, 0);
	Tensor *b[] = {t_f32(1, DIMS(3), F32S(1, 5, -2)), t_f32(1, DIMS(3), F32S(4, 2, -3))};
	check_f32(BINARY_MODEL("min", "f32[3]", "f32[3]"), 2, b, 1, DIMS(3), F32S(1, 2, -3), 0, 0);
	Tensor *c[] = {t_f32(1, DIMS(3), F32S(1, 5, -2)), t_f32(1, DIMS(3), F32S(4, 2, -3))};
	check_f32(BINARY_MODEL("sum", "f32[3]", "f32[3]"), 2, c, 1, DIMS(3), F32S(5, 7, -5), 1e-6, 0);
}

#define VAR3_MODEL(op) \
	"graph t {\n  input a : f32[2,1]\n  input b : f32[3]\n  input c : f32[]\n  y = " op "(a, b, c)\n  output y\n}\n"

Test(elementwise, variadic_three_operands_broadcast)
{
	/* a = [[1],[4]] : [2,1], b = [0, 3, 6] : [3], c = 2 : scalar.
	 * row 0 compares 1 with (0,3,6) and 2; row 1 compares 4. */
	Tensor *a[] = {t_f32(2, DIMS(2, 1), F32S(1, 4)), t_f32(1, DIMS(3), F32S(0, 3, 6)), t_f32(0, NULL, F32S(2))};
	check_f32(VAR3_MODEL("max"), 3, a, 2, DIMS(2, 3), F32S(2, 3, 6, 4, 4, 6), 0, 0);
	Tensor *b[] = {t_f32(2, DIMS(2, 1), F32S(1, 4)), t_f32(1, DIMS(3), F32S(0, 3, 6)), t_f32(0, NULL, F32S(2))};
	check_f32(VAR3_MODEL("min"), 3, b, 2, DIMS(2, 3), F32S(0, 1, 1, 0, 2, 2), 0, 0);
	/* sum: 1+0+2, 1+3+2, 1+6+2; 4+0+2, 4+3+2, 4+6+2 */
	Tensor *c[] = {t_f32(2, DIMS(2, 1), F32S(1, 4)), t_f32(1, DIMS(3), F32S(0, 3, 6)), t_f32(0, NULL, F32S(2))};
	check_f32(VAR3_MODEL("sum"), 3, c, 2, DIMS(2, 3), F32S(3, 6, 9, 6, 9, 12), 1e-6, 0);
}

Test(elementwise, variadic_nan_propagates)
{
	Tensor *a[] = {t_f32(1, DIMS(2), F32S(NAN, 1)), t_f32(1, DIMS(2), F32S(1, NAN))};
	check_f32(BINARY_MODEL("max", "f32[2]", "f32[2]"), 2, a, 1, DIMS(2), F32S(NAN, NAN), 0, 0);
	Tensor *b[] = {t_f32(1, DIMS(2), F32S(NAN, 1)), t_f32(1, DIMS(2), F32S(1, NAN))};
	check_f32(BINARY_MODEL("min", "f32[2]", "f32[2]"), 2, b, 1, DIMS(2), F32S(NAN, NAN), 0, 0);
}

Test(elementwise, variadic_integers)
{
	Tensor *a[] = {t_i64(1, DIMS(3), I64S(1, -5, 7)), t_i64(1, DIMS(3), I64S(2, -6, 7)),
		       t_i64(1, DIMS(3), I64S(0, -4, 8))};
	check_i64("graph t {\n  input a : i64[3]\n  input b : i64[3]\n  input c : i64[3]\n"
		  "  y = max(a, b, c)\n  output y\n}\n",
		  3, a, 1, DIMS(3), I64S(2, -4, 8));
	Tensor *b[] = {t_i32(1, DIMS(2), (int32_t[]){1, -5}), t_i32(0, NULL, (int32_t[]){10})};
	check_i32(BINARY_MODEL("sum", "i32[2]", "i32[]"), 2, b, 1, DIMS(2), (int32_t[]){11, 5});
	Tensor *c[] = {t_i32(1, DIMS(2), (int32_t[]){1, -5}), t_i32(0, NULL, (int32_t[]){0})};
	check_i32(BINARY_MODEL("min", "i32[2]", "i32[]"), 2, c, 1, DIMS(2), (int32_t[]){0, -5});
}

/* ---- neg abs -------------------------------------------------------------- */

Test(elementwise, neg_abs_float)
{
	check_unary("neg(x)", 4, F32S(1, -2.5f, 0, INFINITY), F32S(-1, 2.5f, 0, -INFINITY), 0, 0);
	check_unary("abs(x)", 4, F32S(1, -2.5f, 0, -INFINITY), F32S(1, 2.5f, 0, INFINITY), 0, 0);
}

Test(elementwise, neg_abs_int)
{
	Tensor *a[] = {t_i64(1, DIMS(3), I64S(3, -4, 0))};
	check_i64("graph t {\n  input x : i64[3]\n  y = neg(x)\n  output y\n}\n", 1, a, 1, DIMS(3), I64S(-3, 4, 0));
	Tensor *b[] = {t_i64(1, DIMS(3), I64S(3, -4, 0))};
	check_i64("graph t {\n  input x : i64[3]\n  y = abs(x)\n  output y\n}\n", 1, b, 1, DIMS(3), I64S(3, 4, 0));
	Tensor *c[] = {t_i32(1, DIMS(3), (int32_t[]){-7, 7, INT32_MIN})};
	/* |INT32_MIN| does not fit: wraps to itself, as in two's complement */
	check_i32("graph t {\n  input x : i32[3]\n  y = abs(x)\n  output y\n}\n", 1, c, 1, DIMS(3),
		  (int32_t[]){7, 7, INT32_MIN});
}

/* ---- float unary ------------------------------------------------------------ */

Test(elementwise, exp_log_sqrt_reciprocal)
{
	/* e^0 = 1, e^1 = 2.718281828, e^-1 = 0.3678794412, e^-inf = 0 */
	check_unary("exp(x)", 4, F32S(0, 1, -1, -INFINITY), F32S(1, 2.718281828f, 0.3678794412f, 0), 1e-6, 0);
	/* ln 1 = 0, ln 2 = 0.6931471806, ln 0 = -inf, ln -1 = NaN */
	check_unary("log(x)", 4, F32S(1, 2, 0, -1), F32S(0, 0.6931471806f, -INFINITY, NAN), 1e-6, 0);
	check_unary("sqrt(x)", 4, F32S(4, 2, 0, -1), F32S(2, 1.414213562f, 0, NAN), 1e-6, 0);
	check_unary("reciprocal(x)", 4, F32S(4, -2, 0, 3), F32S(0.25f, -0.5f, INFINITY, 0.3333333333f), 1e-6, 0);
}

Test(elementwise, exp_large_overflows_to_inf)
{
	/* e^100 = 2.7e43 exceeds FLT_MAX: +inf; e^-200 underflows to 0 */
	check_unary("exp(x)", 2, F32S(100, -200), F32S(INFINITY, 0), 0, 0);
}

Test(elementwise, relu_leaky_relu)
{
	check_unary("relu(x)", 4, F32S(-1, 0, 2, -0.001f), F32S(0, 0, 2, 0), 0, 0);
	/* default alpha 0.01: -2 -> -0.02 */
	check_unary("leaky_relu(x)", 3, F32S(-2, 0, 3), F32S(-0.02f, 0, 3), 1e-6, 0);
	check_unary("leaky_relu(x, alpha=0.1)", 3, F32S(-5, 5, -0.5f), F32S(-0.5f, 5, -0.05f), 1e-6, 0);
}

Test(elementwise, sigmoid_points)
{
	/* sigmoid(0) = 0.5, (1) = 1/(1+e^-1) = 0.7310585786, (-1) =
	 * 0.2689414214, (100) = 1 - 3.7e-44 -> 1, (-100) = 3.7e-44 (~0),
	 * (+-1000) saturate without NaN. */
	check_unary("sigmoid(x)", 7, F32S(0, 1, -1, 100, -100, 1000, -1000),
		    F32S(0.5f, 0.7310585786f, 0.2689414214f, 1, 0, 1, 0), 1e-6, 1e-30);
}

Test(elementwise, tanh_points)
{
	/* tanh(1) = 0.7615941560, tanh(-0.5) = -0.4621171573, tanh(20) = 1 */
	check_unary("tanh(x)", 4, F32S(0, 1, -0.5f, 20), F32S(0, 0.7615941560f, -0.4621171573f, 1), 1e-6, 0);
}

Test(elementwise, erf_points)
{
	/* erf(0) = 0, erf(1) = 0.8427007929, erf(-0.5) = -0.5204998778,
	 * erf(3) = 0.9999779095, odd function */
	check_unary("erf(x)", 5, F32S(0, 1, -0.5f, 3, -1), F32S(0, 0.8427007929f, -0.5204998778f, 0.9999779095f,
								   -0.8427007929f),
		    1e-6, 0);
}

Test(elementwise, gelu_exact)
{
	/* 0.5 x (1 + erf(x / sqrt 2)): erf(1/sqrt 2) = 0.6826894921 (the
	 * one-sigma mass), erf(sqrt 2) = 0.9544997361 (two-sigma).
	 * x=1: 0.5 (1.6826894921) = 0.8413447461
	 * x=-1: -0.5 (1 - 0.6826894921) = -0.1586552539
	 * x=2: 1 + 0.9544997361 = 1.9544997361 */
	check_unary("gelu(x)", 4, F32S(0, 1, -1, 2), F32S(0, 0.8413447461f, -0.1586552539f, 1.9544997361f), 1e-6, 0);
	check_unary("gelu(x, approximate=\"none\")", 1, F32S(1), F32S(0.8413447461f), 1e-6, 0);
}

Test(elementwise, gelu_tanh)
{
	/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), sqrt(2/pi) =
	 * 0.7978845608.
	 * x=1: arg = 0.7978845608 * 1.044715 = 0.8335624; tanh = 0.6823840;
	 *      y = 0.5 * 1.6823840 = 0.8411920
	 * x=-1: odd arg, y = -0.5 (1 - 0.6823840) = -0.1588080
	 * x=2: arg = 0.7978845608 * (2 + 0.35772) = 1.8811884; tanh =
	 *      0.9545977; y = 2 * 0.5 * 1.9545977 = 1.9545977 */
	check_unary("gelu(x, approximate=\"tanh\")", 4, F32S(0, 1, -1, 2),
		    F32S(0, 0.8411920f, -0.1588080f, 1.9545977f), 2e-6, 0);
}

Test(elementwise, hardsigmoid_hardswish)
{
	/* default alpha 0.2, beta 0.5: -3 -> -0.1 -> 0; 0 -> 0.5; 1 -> 0.7;
	 * 3 -> 1.1 -> 1 */
	check_unary("hardsigmoid(x)", 4, F32S(-3, 0, 1, 3), F32S(0, 0.5f, 0.7f, 1), 1e-6, 0);
	/* alpha 0.5, beta 0.6: 0.5 -> 0.85; -2 -> -0.4 -> 0 */
	check_unary("hardsigmoid(x, alpha=0.5, beta=0.6)", 2, F32S(0.5f, -2), F32S(0.85f, 0), 1e-6, 0);
	/* x * clamp(x/6 + 1/2, 0, 1): -4 -> 0; -3 -> -3*0 = 0; -1 -> -1/3;
	 * 0 -> 0; 1 -> 2/3; 3 -> 3*1 = 3; 4 -> 4 */
	check_unary("hardswish(x)", 7, F32S(-4, -3, -1, 0, 1, 3, 4),
		    F32S(0, 0, -0.3333333333f, 0, 0.6666666667f, 3, 4), 1e-6, 0);
}

Test(elementwise, unary_float_on_rank0_and_empty)
{
	Tensor *a[] = {t_f32(0, NULL, F32S(-2))};
	check_f32("graph t {\n  input x : f32[]\n  y = relu(x)\n  output y\n}\n", 1, a, 0, NULL, F32S(0), 0, 0);
	check_empty_result(OP_EXP, 1, (TensorType[]){t_type(DT_F32, 2, DIMS(2, 0))}, 2, DIMS(2, 0));
	check_empty_result(OP_GELU, 1, (TensorType[]){t_type(DT_F32, 1, DIMS(0))}, 1, DIMS(0));
}

/* ---- clip ------------------------------------------------------------------ */

Test(elementwise, clip_bounds)
{
	check_unary("clip(x, min=-1, max=1)", 5, F32S(-2, -0.5f, 0.5f, 2, 1), F32S(-1, -0.5f, 0.5f, 1, 1), 0, 0);
	check_unary("clip(x, min=0)", 3, F32S(-2, 0.5f, 100), F32S(0, 0.5f, 100), 0, 0);
	check_unary("clip(x, max=0.25)", 3, F32S(-2, 0.5f, 0.25f), F32S(-2, 0.25f, 0.25f), 0, 0);
	check_unary("clip(x)", 3, F32S(-1e30f, 0, 1e30f), F32S(-1e30f, 0, 1e30f), 0, 0);
	/* ONNX: min > max gives max everywhere */
	check_unary("clip(x, min=2, max=1)", 3, F32S(0, 1.5f, 3), F32S(1, 1, 1), 0, 0);
}

Test(elementwise, clip_integers)
{
	Tensor *a[] = {t_i64(1, DIMS(4), I64S(-5, 0, 2, 5))};
	check_i64("graph t {\n  input x : i64[4]\n  y = clip(x, min=-1, max=3)\n  output y\n}\n", 1, a, 1, DIMS(4),
		  I64S(-1, 0, 2, 3));
	/* Fractional bounds: no integer below -1.5 or above 2.5 survives;
	 * the nearest integers inside are -1 and 2. */
	Tensor *b[] = {t_i32(1, DIMS(3), (int32_t[]){-5, 0, 5})};
	check_i32("graph t {\n  input x : i32[3]\n  y = clip(x, min=-1.5, max=2.5)\n  output y\n}\n", 1, b, 1,
		  DIMS(3), (int32_t[]){-1, 0, 2});
}

/* ---- identity, dropout -------------------------------------------------------- */

Test(elementwise, identity_any_dtype)
{
	Tensor *a[] = {t_f32(2, DIMS(1, 2), F32S(1.5f, -2))};
	check_f32("graph t {\n  input x : f32[1,2]\n  y = identity(x)\n  output y\n}\n", 1, a, 2, DIMS(1, 2),
		  F32S(1.5f, -2), 0, 0);
	Tensor *b[] = {t_i64(1, DIMS(2), I64S(INT64_MAX, -1))};
	check_i64("graph t {\n  input x : i64[2]\n  y = identity(x)\n  output y\n}\n", 1, b, 1, DIMS(2),
		  I64S(INT64_MAX, -1));

	Graph *g = t_model("graph t {\n  input x : bool[3]\n  y = identity(x)\n  output y\n}\n");
	Shape s = shape_make(1, DIMS(3));
	Tensor *x = tensor_new(DT_BOOL, &s);
	((uint8_t *)x->data)[1] = 1;
	Tensor *in[] = {x};
	Tensor **o = t_run(g, in);
	cr_assert_eq(o[0]->type.dtype, DT_BOOL);
	const uint8_t *y = o[0]->data;
	cr_assert(y[0] == 0 && y[1] == 1 && y[2] == 0);
	t_free_outputs(g, o);
	graph_free(g);
	tensor_free(x);
}

Test(elementwise, dropout_inference)
{
	Graph *g = t_model("graph t {\n  input x : f32[2,2]\n  y, m = dropout(x, ratio=0.3)\n  output y, m\n}\n");
	Tensor *in[] = {t_f32(2, DIMS(2, 2), F32S(1, -2, 3, 0))};
	Tensor **o = t_run(g, in);
	t_assert_close(o[0], 2, DIMS(2, 2), F32S(1, -2, 3, 0), 0, 0);
	cr_assert_eq(o[1]->type.dtype, DT_BOOL);
	cr_assert_eq(tensor_numel(o[1]), 4);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(((const uint8_t *)o[1]->data)[i], 1, "mask element %d not true", i);
	t_free_outputs(g, o);
	graph_free(g);
	free_inputs(1, in);

	/* one result only */
	Tensor *b[] = {t_f32(1, DIMS(2), F32S(5, 6))};
	check_f32("graph t {\n  input x : f32[2]\n  y = dropout(x)\n  output y\n}\n", 1, b, 1, DIMS(2), F32S(5, 6), 0,
		  0);
}

Test(elementwise, dropout_training_mode_rejected)
{
	Diag d;
	t_expect_errors("graph t {\n  input x : f32[2]\n  y = dropout(x, training_mode=1)\n  output y\n}\n", &d);
	t_assert_error_at(&d, "attribute 'training_mode' = 1 is out of range [0, 0]", 3, 18);
	diag_free(&d);
}

/* ---- softmax / logsoftmax ------------------------------------------------------- */

Test(elementwise, softmax_large_inputs)
{
	/* exp(x - 1002) = e^-2, e^-1, 1 with sum s = 1.5032147244:
	 * 0.1353352832/s = 0.0900305732, 0.3678794412/s = 0.2447284711,
	 * 1/s = 0.6652409558 */
	check_unary("softmax(x)", 3, F32S(1000, 1001, 1002), F32S(0.0900305732f, 0.2447284711f, 0.6652409558f), 1e-6,
		    0);
	/* logsoftmax = x - 1002 - ln s, ln s = 0.4076059644 */
	check_unary("logsoftmax(x)", 3, F32S(1000, 1001, 1002), F32S(-2.4076059644f, -1.4076059644f, -0.4076059644f),
		    1e-6, 0);
	/* very negative inputs do not underflow to 0/0 either */
	check_unary("softmax(x)", 2, F32S(-1000, -1000), F32S(0.5f, 0.5f), 1e-6, 0);
}

Test(elementwise, softmax_default_axis_rows)
{
	/* default axis -1, per row: [0, ln 3] -> [1, 3] / 4 = [1/4, 3/4];
	 * [5, 5] -> [1/2, 1/2] */
	Tensor *in[] = {t_f32(2, DIMS(2, 2), F32S(0, 1.0986122887f, 5, 5))};
	check_f32("graph t {\n  input x : f32[2,2]\n  y = softmax(x)\n  output y\n}\n", 1, in, 2, DIMS(2, 2),
		  F32S(0.25f, 0.75f, 0.5f, 0.5f), 1e-6, 0);
}

Test(elementwise, softmax_axis0)
{
	/* x = [[1, 2], [1, 4]] along axis 0 (columns): column 0 equal ->
	 * 1/2, 1/2; column 1: 1/(1+e^2) = 0.1192029220, e^2/(1+e^2) =
	 * 0.8807970780 */
	Tensor *in[] = {t_f32(2, DIMS(2, 2), F32S(1, 2, 1, 4))};
	check_f32("graph t {\n  input x : f32[2,2]\n  y = softmax(x, axis=0)\n  output y\n}\n", 1, in, 2, DIMS(2, 2),
		  F32S(0.5f, 0.1192029220f, 0.5f, 0.8807970780f), 1e-6, 0);
	/* logsoftmax along axis 0: ln(1/2) = -0.6931471806,
	 * ln 0.1192029220 = -2.1269280110, ln 0.8807970780 = -0.1269280110 */
	Tensor *b[] = {t_f32(2, DIMS(2, 2), F32S(1, 2, 1, 4))};
	check_f32("graph t {\n  input x : f32[2,2]\n  y = logsoftmax(x, axis=0)\n  output y\n}\n", 1, b, 2,
		  DIMS(2, 2), F32S(-0.6931471806f, -2.1269280110f, -0.6931471806f, -0.1269280110f), 1e-6, 0);
}

Test(elementwise, softmax_middle_and_negative_axis)
{
	/* x : [2,2,2], x[i,j,k]; axis 1 (= -2) pairs x[i,0,k] with x[i,1,k].
	 * Pairs with difference 0 give 1/2; difference 1 gives
	 * 1/(1+e) = 0.2689414214 and e/(1+e) = 0.7310585786. */
	const float x[] = {0, 5, 1, 5, /* i=0: (0,1) differ, (5,5) equal */
			   7, 2, 7, 3}; /* i=1: (7,7) equal, (2,3) differ */
	const float want[] = {0.2689414214f, 0.5f, 0.7310585786f, 0.5f, 0.5f, 0.2689414214f, 0.5f, 0.7310585786f};
	Tensor *a[] = {t_f32(3, DIMS(2, 2, 2), x)};
	check_f32("graph t {\n  input x : f32[2,2,2]\n  y = softmax(x, axis=1)\n  output y\n}\n", 1, a, 3,
		  DIMS(2, 2, 2), want, 1e-6, 0);
	Tensor *b[] = {t_f32(3, DIMS(2, 2, 2), x)};
	check_f32("graph t {\n  input x : f32[2,2,2]\n  y = softmax(x, axis=-2)\n  output y\n}\n", 1, b, 3,
		  DIMS(2, 2, 2), want, 1e-6, 0);
	/* logsoftmax axis -2: ln 0.2689414214 = -1.3132616875,
	 * ln 0.7310585786 = -0.3132616875, ln 0.5 = -0.6931471806 */
	Tensor *c[] = {t_f32(3, DIMS(2, 2, 2), x)};
	check_f32("graph t {\n  input x : f32[2,2,2]\n  y = logsoftmax(x, axis=-2)\n  output y\n}\n", 1, c, 3,
		  DIMS(2, 2, 2),
		  F32S(-1.3132616875f, -0.6931471806f, -0.3132616875f, -0.6931471806f, -0.6931471806f, -1.3132616875f,
		       -0.6931471806f, -0.3132616875f),
		  1e-6, 0);
}

Test(elementwise, softmax_with_neg_infinity)
{
	/* -inf contributes e^-inf = 0 */
	check_unary("softmax(x)", 3, F32S(-INFINITY, 0, 0), F32S(0, 0.5f, 0.5f), 1e-6, 0);
	check_unary("logsoftmax(x)", 3, F32S(-INFINITY, 0, 0), F32S(-INFINITY, -0.6931471806f, -0.6931471806f), 1e-6,
		    0);
}

Test(elementwise, softmax_empty)
{
	check_empty_result(OP_SOFTMAX, 1, (TensorType[]){t_type(DT_F32, 2, DIMS(0, 3))}, 2, DIMS(0, 3));
	/* along the empty axis */
	check_empty_result(OP_LOGSOFTMAX, 1, (TensorType[]){t_type(DT_F32, 2, DIMS(3, 0))}, 2, DIMS(3, 0));
}

/* ---- reduce_mean --------------------------------------------------------------- */

#define RM_MODEL(attrs) \
	"graph t {\n  input x : f32[2,3]\n  y = reduce_mean(x" attrs ")\n  output y\n}\n"

/* x = [[1, 2, 3], [4, 5, 6]]: row means 2, 5; column means 2.5, 3.5,
 * 4.5; overall mean 3.5. */
#define RM_X F32S(1, 2, 3, 4, 5, 6)

Test(elementwise, reduce_mean_keepdims)
{
	Tensor *a[] = {t_f32(2, DIMS(2, 3), RM_X)};
	check_f32(RM_MODEL(", axes=[1]"), 1, a, 2, DIMS(2, 1), F32S(2, 5), 1e-6, 0);
	Tensor *b[] = {t_f32(2, DIMS(2, 3), RM_X)};
	check_f32(RM_MODEL(", axes=[0], keepdims=1"), 1, b, 2, DIMS(1, 3), F32S(2.5f, 3.5f, 4.5f), 1e-6, 0);
}

Test(elementwise, reduce_mean_no_keepdims)
{
	Tensor *a[] = {t_f32(2, DIMS(2, 3), RM_X)};
	check_f32(RM_MODEL(", axes=[0], keepdims=0"), 1, a, 1, DIMS(3), F32S(2.5f, 3.5f, 4.5f), 1e-6, 0);
	Tensor *b[] = {t_f32(2, DIMS(2, 3), RM_X)};
	check_f32(RM_MODEL(", axes=[1], keepdims=0"), 1, b, 1, DIMS(2), F32S(2, 5), 1e-6, 0);
}

Test(elementwise, reduce_mean_negative_axes)
{
	Tensor *a[] = {t_f32(2, DIMS(2, 3), RM_X)};
	check_f32(RM_MODEL(", axes=[-1]"), 1, a, 2, DIMS(2, 1), F32S(2, 5), 1e-6, 0);
	Tensor *b[] = {t_f32(2, DIMS(2, 3), RM_X)};
	check_f32(RM_MODEL(", axes=[-2], keepdims=0"), 1, b, 1, DIMS(3), F32S(2.5f, 3.5f, 4.5f), 1e-6, 0);
}

Test(elementwise, reduce_mean_all_axes)
{
	Tensor *a[] = {t_f32(2, DIMS(2, 3), RM_X)};
	check_f32(RM_MODEL(""), 1, a, 2, DIMS(1, 1), F32S(3.5f), 1e-6, 0);
	Tensor *b[] = {t_f32(2, DIMS(2, 3), RM_X)};
	check_f32(RM_MODEL(", keepdims=0"), 1, b, 0, NULL, F32S(3.5f), 1e-6, 0);
	Tensor *c[] = {t_f32(2, DIMS(2, 3), RM_X)};
	check_f32(RM_MODEL(", axes=[1, 0], keepdims=0"), 1, c, 0, NULL, F32S(3.5f), 1e-6, 0);
}

/* The other reductions of x = [[1, -2, 3], [-4, 5, -6]] along axis 1:
 * sum 2, -5; max 3, 5; min -2, -6; prod -6, 120; l1 6, 15; sum_square 14,
 * 77; l2 sqrt 14 = 3.74165739, sqrt 77 = 8.77496439. */
static void check_reduce(const char *op, const char *attrs, int n, const float *x, int rank, const int64_t *dims,
			 const float *want, double rtol)
{
	char model[256];
	snprintf(model, sizeof model, "graph t {\n  input x : f32[2,%d]\n  y = %s(x%s)\n  output y\n}\n", n / 2, op, attrs);
	Tensor *in[] = {t_f32(2, DIMS(2, n / 2), x)};
	check_f32(model, 1, in, rank, dims, want, rtol, 0);
}

Test(elementwise, reductions_along_an_axis)
{
	const float *x = F32S(1, -2, 3, -4, 5, -6);
	check_reduce("reduce_sum", ", axes=[1], keepdims=0", 6, x, 1, DIMS(2), F32S(2, -5), 0);
	check_reduce("reduce_max", ", axes=[1], keepdims=0", 6, x, 1, DIMS(2), F32S(3, 5), 0);
	check_reduce("reduce_min", ", axes=[1], keepdims=0", 6, x, 1, DIMS(2), F32S(-2, -6), 0);
	check_reduce("reduce_prod", ", axes=[1], keepdims=0", 6, x, 1, DIMS(2), F32S(-6, 120), 0);
	check_reduce("reduce_l1", ", axes=[1], keepdims=0", 6, x, 1, DIMS(2), F32S(6, 15), 0);
	check_reduce("reduce_sum_square", ", axes=[1], keepdims=0", 6, x, 1, DIMS(2), F32S(14, 77), 0);
	check_reduce("reduce_l2", ", axes=[1]", 6, x, 2, DIMS(2, 1), F32S(3.74165739f, 8.77496439f), 1e-6);
	/* over axis 0: max 1, 5, 3; min -4, -2, -6 */
	check_reduce("reduce_max", ", axes=[0], keepdims=0", 6, x, 1, DIMS(3), F32S(1, 5, 3), 0);
	check_reduce("reduce_min", ", axes=[-2], keepdims=0", 6, x, 1, DIMS(3), F32S(-4, -2, -6), 0);
}

/* log_sum of [[1, 2, 3], [4, 5, 6]]: log 6 = 1.79175947, log 15 = 2.70805020;
 * log_sum_exp of [[1, 2, 3], [1000, 1000, -inf]]: log(e + e^2 + e^3) =
 * 3.40760596, and 1000 + log 2 = 1000.69315 (no overflow to inf) */
Test(elementwise, reduce_log_sum_and_log_sum_exp)
{
	check_reduce("reduce_log_sum", ", axes=[1], keepdims=0", 6, F32S(1, 2, 3, 4, 5, 6), 1, DIMS(2),
		     F32S(1.79175947f, 2.70805020f), 1e-6);
	check_reduce("reduce_log_sum_exp", ", axes=[1], keepdims=0", 6, F32S(1, 2, 3, 1000, 1000, -INFINITY), 1, DIMS(2),
		     F32S(3.40760596f, 1000.69315f), 1e-6);
}

/* An empty reduction is the identity of the accumulation: sum 0, max -inf,
 * min +inf, prod 1 */
Test(elementwise, reductions_of_nothing)
{
	static const char *ops[] = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"};
	const float want[] = {0, -INFINITY, INFINITY, 1};
	for (int i = 0; i < 4; i++) {
		char model[256];
		snprintf(model, sizeof model, "graph t {\n  input x : f32[2,0]\n  y = %s(x, axes=[1], keepdims=0)\n  output y\n}\n",
			 ops[i]);
		Tensor *in[] = {t_f32(2, DIMS(2, 0), NULL)};
		check_f32(model, 1, in, 1, DIMS(2), (float[]){want[i], want[i]}, 0, 0);
	}
}

Test(elementwise, reduce_mean_noop_with_empty_axes)
{
	Tensor *a[] = {t_f32(2, DIMS(2, 3), RM_X)};
	check_f32(RM_MODEL(", noop_with_empty_axes=1"), 1, a, 2, DIMS(2, 3), RM_X, 0, 0);
	/* with axes given, noop_with_empty_axes changes nothing */
	Tensor *b[] = {t_f32(2, DIMS(2, 3), RM_X)};
	check_f32(RM_MODEL(", axes=[1], noop_with_empty_axes=1"), 1, b, 2, DIMS(2, 1), F32S(2, 5), 1e-6, 0);
}

Test(elementwise, reduce_mean_two_of_three_axes)
{
	/* x[i,j,k] = 4i + 2j + k; reducing axes 0 and 2 leaves j:
	 * j=0: {0,1,4,5} -> 2.5; j=1: {2,3,6,7} -> 4.5 */
	Tensor *a[] = {t_f32(3, DIMS(2, 2, 2), F32S(0, 1, 2, 3, 4, 5, 6, 7))};
	check_f32("graph t {\n  input x : f32[2,2,2]\n  y = reduce_mean(x, axes=[0, -1])\n  output y\n}\n", 1, a, 3,
		  DIMS(1, 2, 1), F32S(2.5f, 4.5f), 1e-6, 0);
}

Test(elementwise, reduce_mean_empty_axis_is_nan)
{
	/* the mean of no elements is 0/0 */
	check_f32("graph t {\n  const x : f32[2,0] = fill(0)\n  y = reduce_mean(x, axes=[1], keepdims=0)\n"
		  "  output y\n}\n",
		  0, NULL, 1, DIMS(2), F32S(NAN, NAN), 0, 0);
	/* reducing the other axis of the same tensor gives an empty result
	 * (no axes given: all axes, keepdims -> [1,1], a NaN) */
	check_empty_result(OP_REDUCE_MEAN, 1, (TensorType[]){t_type(DT_F32, 2, DIMS(0, 2))}, 2, DIMS(1, 1));
}

/* ---- matmul ------------------------------------------------------------------- */

/* A = [[1,2,3],[4,5,6]], B = [[7,8],[9,10],[11,12]]:
 * AB = [[1*7+2*9+3*11, 1*8+2*10+3*12], [4*7+5*9+6*11, 4*8+5*10+6*12]]
 *    = [[58, 64], [139, 154]] */
#define MA F32S(1, 2, 3, 4, 5, 6)
#define MB F32S(7, 8, 9, 10, 11, 12)

Test(elementwise, matmul_2d)
{
	Tensor *in[] = {t_f32(2, DIMS(2, 3), MA), t_f32(2, DIMS(3, 2), MB)};
	check_f32(BINARY_MODEL("matmul", "f32[2,3]", "f32[3,2]"), 2, in, 2, DIMS(2, 2), F32S(58, 64, 139, 154), 1e-6,
		  0);
}

Test(elementwise, matmul_1d_operands)
{
	/* [3] x [3,2]: the row [1,2,3] times B -> [58, 64], shape [2] */
	Tensor *a[] = {t_f32(1, DIMS(3), F32S(1, 2, 3)), t_f32(2, DIMS(3, 2), MB)};
	check_f32(BINARY_MODEL("matmul", "f32[3]", "f32[3,2]"), 2, a, 1, DIMS(2), F32S(58, 64), 1e-6, 0);
	/* [2,3] x [3]: row sums of A with [1,1,1] -> [6, 15], shape [2] */
	Tensor *b[] = {t_f32(2, DIMS(2, 3), MA), t_f32(1, DIMS(3), F32S(1, 1, 1))};
	check_f32(BINARY_MODEL("matmul", "f32[2,3]", "f32[3]"), 2, b, 1, DIMS(2), F32S(6, 15), 1e-6, 0);
	/* [3] x [3]: dot product 4 + 10 + 18 = 32, rank 0 */
	Tensor *c[] = {t_f32(1, DIMS(3), F32S(1, 2, 3)), t_f32(1, DIMS(3), F32S(4, 5, 6))};
	check_f32(BINARY_MODEL("matmul", "f32[3]", "f32[3]"), 2, c, 0, NULL, F32S(32), 1e-6, 0);
	/* [3] x [2,3,1]: batch kept, promoted dims dropped -> [2,1];
	 * batch 0 column [1,0,0] -> 1, batch 1 column [0,1,1] -> 5 */
	Tensor *e[] = {t_f32(1, DIMS(3), F32S(1, 2, 3)), t_f32(3, DIMS(2, 3, 1), F32S(1, 0, 0, 0, 1, 1))};
	check_f32(BINARY_MODEL("matmul", "f32[3]", "f32[2,3,1]"), 2, e, 2, DIMS(2, 1), F32S(1, 5), 1e-6, 0);
}

Test(elementwise, matmul_batched_broadcast)
{
	/* a : [2,1,2,3], a[0] = [[1,0,0],[0,1,0]] (rows 0 and 1 of b),
	 *                a[1] = [[0,0,1],[1,1,1]] (row 2, sum of rows).
	 * b : [3,3,2], b[q] row r = [10q + 2r, 10q + 2r + 1].
	 * y : [2,3,2,2]:
	 *   y[0,q] = [[10q, 10q+1], [10q+2, 10q+3]]
	 *   y[1,q] = [[10q+4, 10q+5], [30q+6, 30q+9]] */
	const float a[] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
	const float b[] = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23, 24, 25};
	const float want[] = {0,  1,  2,  3,  10, 11, 12, 13, 20, 21, 22, 23,  /* p = 0, q = 0..2 */
			      4,  5,  6,  9,  14, 15, 36, 39, 24, 25, 66, 69}; /* p = 1 */
	Tensor *in[] = {t_f32(4, DIMS(2, 1, 2, 3), a), t_f32(3, DIMS(3, 3, 2), b)};
	check_f32(BINARY_MODEL("matmul", "f32[2,1,2,3]", "f32[3,3,2]"), 2, in, 4, DIMS(2, 3, 2, 2), want, 1e-6, 0);
}

Test(elementwise, matmul_batched_same_batch)
{
	/* [2,1,2] x [2,2,1]: batch 0: [1,2].[3,4] = 11; batch 1:
	 * [5,6].[7,8] = 83 */
	Tensor *in[] = {t_f32(3, DIMS(2, 1, 2), F32S(1, 2, 5, 6)), t_f32(3, DIMS(2, 2, 1), F32S(3, 4, 7, 8))};
	check_f32(BINARY_MODEL("matmul", "f32[2,1,2]", "f32[2,2,1]"), 2, in, 3, DIMS(2, 1, 1), F32S(11, 83), 1e-6, 0);
}

Test(elementwise, matmul_empty_inner)
{
	/* K = 0: every entry is an empty sum = 0 */
	check_f32("graph t {\n  const a : f32[2,0] = fill(0)\n  const b : f32[0,3] = fill(0)\n  y = matmul(a, b)\n"
		  "  output y\n}\n",
		  0, NULL, 2, DIMS(2, 3), F32S(0, 0, 0, 0, 0, 0), 0, 0);
	/* M = 0 and a batch of 0 */
	check_empty_result(OP_MATMUL, 2, (TensorType[]){t_type(DT_F32, 2, DIMS(0, 3)), t_type(DT_F32, 2, DIMS(3, 2))}, 2,
			   DIMS(0, 2));
	check_empty_result(OP_MATMUL, 2,
			   (TensorType[]){t_type(DT_F32, 3, DIMS(0, 2, 3)), t_type(DT_F32, 2, DIMS(3, 2))}, 3,
			   DIMS(0, 2, 2));
	check_empty_result(OP_GEMM, 2, (TensorType[]){t_type(DT_F32, 2, DIMS(0, 3)), t_type(DT_F32, 2, DIMS(3, 2))}, 2,
			   DIMS(0, 2));
}

Test(elementwise, matmul_int64)
{
	Tensor *in[] = {t_i64(2, DIMS(2, 3), I64S(1, 2, 3, 4, 5, 6)), t_i64(2, DIMS(3, 2), I64S(7, 8, 9, 10, 11, 12))};
	check_i64(BINARY_MODEL("matmul", "i64[2,3]", "i64[3,2]"), 2, in, 2, DIMS(2, 2), I64S(58, 64, 139, 154));
}

/* ---- gemm ------------------------------------------------------------------------ */

#define GEMM2(attrs) \
	"graph t {\n  input a : f32[2,3]\n  input b : f32[3,2]\n  y = gemm(a, b" attrs ")\n  output y\n}\n"
#define GEMM3(tc, attrs)                                                                           \
	"graph t {\n  input a : f32[2,3]\n  input b : f32[3,2]\n  input c : " tc "\n  y = gemm(a, b, c" attrs \
	")\n  output y\n}\n"

Test(elementwise, gemm_no_c)
{
	Tensor *in[] = {t_f32(2, DIMS(2, 3), MA), t_f32(2, DIMS(3, 2), MB)};
	check_f32(GEMM2(""), 2, in, 2, DIMS(2, 2), F32S(58, 64, 139, 154), 1e-6, 0);
}

Test(elementwise, gemm_trans_a)
{
	/* A^T given as [3,2] = [[1,4],[2,5],[3,6]] */
	Tensor *in[] = {t_f32(2, DIMS(3, 2), F32S(1, 4, 2, 5, 3, 6)), t_f32(2, DIMS(3, 2), MB)};
	check_f32("graph t {\n  input a : f32[3,2]\n  input b : f32[3,2]\n  y = gemm(a, b, trans_a=1)\n  output y\n}\n",
		  2, in, 2, DIMS(2, 2), F32S(58, 64, 139, 154), 1e-6, 0);
}

Test(elementwise, gemm_trans_b)
{
	/* B^T given as [2,3] = [[7,9,11],[8,10,12]] */
	Tensor *in[] = {t_f32(2, DIMS(2, 3), MA), t_f32(2, DIMS(2, 3), F32S(7, 9, 11, 8, 10, 12))};
	check_f32("graph t {\n  input a : f32[2,3]\n  input b : f32[2,3]\n  y = gemm(a, b, trans_b=1)\n  output y\n}\n",
		  2, in, 2, DIMS(2, 2), F32S(58, 64, 139, 154), 1e-6, 0);
}

Test(elementwise, gemm_alpha)
{
	/* 0.5 * [[58,64],[139,154]] */
	Tensor *in[] = {t_f32(2, DIMS(2, 3), MA), t_f32(2, DIMS(3, 2), MB)};
	check_f32(GEMM2(", alpha=0.5"), 2, in, 2, DIMS(2, 2), F32S(29, 32, 69.5f, 77), 1e-6, 0);
}

Test(elementwise, gemm_matrix_c_and_beta)
{
	/* AB + 2 * [[1,2],[3,4]] = [[60,68],[145,162]] */
	Tensor *a[] = {t_f32(2, DIMS(2, 3), MA), t_f32(2, DIMS(3, 2), MB), t_f32(2, DIMS(2, 2), F32S(1, 2, 3, 4))};
	check_f32(GEMM3("f32[2,2]", ", beta=2"), 3, a, 2, DIMS(2, 2), F32S(60, 68, 145, 162), 1e-6, 0);
	/* default beta 1: [[59,66],[142,158]] */
	Tensor *b[] = {t_f32(2, DIMS(2, 3), MA), t_f32(2, DIMS(3, 2), MB), t_f32(2, DIMS(2, 2), F32S(1, 2, 3, 4))};
	check_f32(GEMM3("f32[2,2]", ""), 3, b, 2, DIMS(2, 2), F32S(59, 66, 142, 158), 1e-6, 0);
	/* beta 0 drops C */
	Tensor *c[] = {t_f32(2, DIMS(2, 3), MA), t_f32(2, DIMS(3, 2), MB), t_f32(2, DIMS(2, 2), F32S(1, 2, 3, 4))};
	check_f32(GEMM3("f32[2,2]", ", beta=0"), 3, c, 2, DIMS(2, 2), F32S(58, 64, 139, 154), 1e-6, 0);
}

Test(elementwise, gemm_scalar_c)
{
	Tensor *a[] = {t_f32(2, DIMS(2, 3), MA), t_f32(2, DIMS(3, 2), MB), t_f32(0, NULL, F32S(10))};
	check_f32(GEMM3("f32[]", ""), 3, a, 2, DIMS(2, 2), F32S(68, 74, 149, 164), 1e-6, 0);
	/* a one-element vector works the same */
	Tensor *b[] = {t_f32(2, DIMS(2, 3), MA), t_f32(2, DIMS(3, 2), MB), t_f32(1, DIMS(1), F32S(-8))};
	check_f32(GEMM3("f32[1]", ""), 3, b, 2, DIMS(2, 2), F32S(50, 56, 131, 146), 1e-6, 0);
}

Test(elementwise, gemm_vector_c)
{
	/* C [2] = [1, -1] added to every row: [[59,63],[140,153]] */
	Tensor *a[] = {t_f32(2, DIMS(2, 3), MA), t_f32(2, DIMS(3, 2), MB), t_f32(1, DIMS(2), F32S(1, -1))};
	check_f32(GEMM3("f32[2]", ""), 3, a, 2, DIMS(2, 2), F32S(59, 63, 140, 153), 1e-6, 0);
	/* C [2,1] = [[100],[200]] added to every column: [[158,164],[339,354]] */
	Tensor *b[] = {t_f32(2, DIMS(2, 3), MA), t_f32(2, DIMS(3, 2), MB), t_f32(2, DIMS(2, 1), F32S(100, 200))};
	check_f32(GEMM3("f32[2,1]", ""), 3, b, 2, DIMS(2, 2), F32S(158, 164, 339, 354), 1e-6, 0);
}

Test(elementwise, gemm_all_attributes)
{
	/* A^T : [3,2], B^T : [2,3], alpha 2, beta -1, C [1,2] = [1, 2]:
	 * 2 * [[58,64],[139,154]] - [1,2] = [[115,126],[277,306]] */
	Tensor *in[] = {t_f32(2, DIMS(3, 2), F32S(1, 4, 2, 5, 3, 6)), t_f32(2, DIMS(2, 3), F32S(7, 9, 11, 8, 10, 12)),
			t_f32(2, DIMS(1, 2), F32S(1, 2))};
	check_f32("graph t {\n  input a : f32[3,2]\n  input b : f32[2,3]\n  input c : f32[1,2]\n"
		  "  y = gemm(a, b, c, alpha=2, beta=-1, trans_a=1, trans_b=1)\n  output y\n}\n",
		  3, in, 2, DIMS(2, 2), F32S(115, 126, 277, 306), 1e-6, 0);
}

Test(elementwise, gemm_non_square)
{
	/* [1,2] x [2,3] with trans_b (B^T [3,2]): [1,2] . rows of B^T:
	 * [1,0]->1, [0,1]->2, [1,1]->3 */
	Tensor *in[] = {t_f32(2, DIMS(1, 2), F32S(1, 2)), t_f32(2, DIMS(3, 2), F32S(1, 0, 0, 1, 1, 1))};
	check_f32("graph t {\n  input a : f32[1,2]\n  input b : f32[3,2]\n  y = gemm(a, b, trans_b=1)\n  output y\n}\n",
		  2, in, 2, DIMS(1, 3), F32S(1, 2, 3), 1e-6, 0);
}

/* ---- shape rules: results ----------------------------------------------------------- */

static void check_result_type(OpKind op, int nin, const TensorType *types, DType dt, int rank, const int64_t *dims)
{
	Node *n;
	Graph *g = t_single_op(op, nin, types, 1, &n);
	t_verify_ok(g);
	Shape want = shape_make(rank, dims);
	char a[128], b[128];
	cr_assert_eq(n->out[0]->type.dtype, dt, "dtype %s, expected %s", dtype_name(n->out[0]->type.dtype),
		     dtype_name(dt));
	cr_assert(shape_eq(&n->out[0]->type.shape, &want), "shape %s, expected %s",
		  shape_str(&n->out[0]->type.shape, a, sizeof a), shape_str(&want, b, sizeof b));
	graph_free(g);
}

Test(elementwise, infer_result_types)
{
	check_result_type(OP_ADD, 2,
			  (TensorType[]){t_type(DT_I32, 3, DIMS(5, 1, 4)), t_type(DT_I32, 2, DIMS(3, 1))}, DT_I32, 3,
			  DIMS(5, 3, 4));
	check_result_type(OP_POW, 2, (TensorType[]){t_type(DT_F32, 1, DIMS(4)), t_type(DT_I64, 0, NULL)}, DT_F32, 1,
			  DIMS(4));
	check_result_type(OP_MATMUL, 2,
			  (TensorType[]){t_type(DT_F32, 4, DIMS(2, 1, 5, 7)), t_type(DT_F32, 3, DIMS(3, 7, 6))},
			  DT_F32, 4, DIMS(2, 3, 5, 6));
	check_result_type(OP_MATMUL, 2, (TensorType[]){t_type(DT_F32, 1, DIMS(7)), t_type(DT_F32, 3, DIMS(3, 7, 6))},
			  DT_F32, 2, DIMS(3, 6));
	check_result_type(OP_GEMM, 2, (TensorType[]){t_type(DT_F32, 2, DIMS(4, 3)), t_type(DT_F32, 2, DIMS(3, 5))},
			  DT_F32, 2, DIMS(4, 5));
	check_result_type(OP_SUM, 3,
			  (TensorType[]){t_type(DT_F32, 1, DIMS(3)), t_type(DT_F32, 2, DIMS(2, 1)),
					 t_type(DT_F32, 3, DIMS(4, 1, 1))},
			  DT_F32, 3, DIMS(4, 2, 3));
	check_result_type(OP_CLIP, 1, (TensorType[]){t_type(DT_I64, 2, DIMS(2, 2))}, DT_I64, 2, DIMS(2, 2));
}

/* ---- shape rules: rejections ----------------------------------------------------------- */

Test(elementwise, reject_not_broadcastable)
{
	check_verify_fails(OP_ADD, 2, (TensorType[]){t_type(DT_F32, 2, DIMS(2, 3)), t_type(DT_F32, 1, DIMS(4))}, 1,
			   "add: shape mismatch: operand 1 ('x0') is f32[2,3] and operand 2 ('x1') is f32[4]: "
			   "not broadcastable");
	check_verify_fails(OP_DIV, 2, (TensorType[]){t_type(DT_F32, 2, DIMS(2, 3)), t_type(DT_F32, 2, DIMS(3, 1))},
			   1, "operand 1 ('x0') is f32[2,3] and operand 2 ('x1') is f32[3,1]: not broadcastable");
	check_verify_fails(OP_POW, 2, (TensorType[]){t_type(DT_F32, 1, DIMS(2)), t_type(DT_I64, 1, DIMS(3))}, 1,
			   "operand 1 ('x0') is f32[2] and operand 2 ('x1') is i64[3]: not broadcastable");
}

Test(elementwise, reject_not_broadcastable_located)
{
	Diag d;
	t_expect_errors("graph t {\n  input a : f32[2,3]\n  input b : f32[4]\n  y = add(a, b)\n  output y\n}\n", &d);
	t_assert_error_at(&d, "operand 1 ('a') is f32[2,3] and operand 2 ('b') is f32[4]: not broadcastable", 4, 14);
	diag_free(&d);
}

Test(elementwise, reject_variadic_not_broadcastable)
{
	/* operands 1 and 2 broadcast to [2,3]; operand 3 [2] conflicts with
	 * operand 1's 3 -- the message names the conflicting pair */
	check_verify_fails(OP_MAX, 3,
			   (TensorType[]){t_type(DT_F32, 1, DIMS(3)), t_type(DT_F32, 2, DIMS(2, 1)),
					  t_type(DT_F32, 1, DIMS(2))},
			   1, "max: shape mismatch: operand 1 ('x0') is f32[3] and operand 3 ('x2') is f32[2]: "
			      "not broadcastable");
}

Test(elementwise, reject_dtype_mismatch)
{
	check_verify_fails(OP_ADD, 2, (TensorType[]){t_type(DT_F32, 1, DIMS(3)), t_type(DT_I64, 1, DIMS(3))}, 1,
			   "add: dtype mismatch: operand 1 ('x0') is f32 but operand 2 ('x1') is i64");
	check_verify_fails(OP_MUL, 2, (TensorType[]){t_type(DT_BOOL, 1, DIMS(3)), t_type(DT_BOOL, 1, DIMS(3))}, 1,
			   "mul: dtype mismatch: operand 1 ('x0') is bool, expected f32, i32, i64");
	check_verify_fails(OP_SUM, 3,
			   (TensorType[]){t_type(DT_I32, 1, DIMS(3)), t_type(DT_I32, 1, DIMS(3)),
					  t_type(DT_I64, 1, DIMS(3))},
			   1, "sum: dtype mismatch: operand 1 ('x0') is i32 but operand 3 ('x2') is i64");
	check_verify_fails(OP_POW, 2, (TensorType[]){t_type(DT_I64, 1, DIMS(3)), t_type(DT_F32, 1, DIMS(3))}, 1,
			   "pow: dtype mismatch: operand 2 ('x1') is f32, expected i32, i64");
	check_verify_fails(OP_POW, 2, (TensorType[]){t_type(DT_BOOL, 1, DIMS(3)), t_type(DT_I64, 1, DIMS(3))}, 1,
			   "pow: dtype mismatch: operand 1 ('x0') is bool, expected f32, i32, i64");
	check_verify_fails(OP_EXP, 1, (TensorType[]){t_type(DT_I64, 1, DIMS(3))}, 1,
			   "exp: dtype mismatch: operand 1 ('x0') is i64, expected f32");
	check_verify_fails(OP_NEG, 1, (TensorType[]){t_type(DT_BOOL, 1, DIMS(3))}, 1, "neg: dtype mismatch");
	check_verify_fails(OP_SOFTMAX, 1, (TensorType[]){t_type(DT_I32, 1, DIMS(3))}, 1, "softmax: dtype mismatch");
	check_verify_fails(OP_REDUCE_MEAN, 1, (TensorType[]){t_type(DT_I64, 1, DIMS(3))}, 1,
			   "reduce_mean: dtype mismatch");
	check_verify_fails(OP_MATMUL, 2, (TensorType[]){t_type(DT_F32, 2, DIMS(2, 3)), t_type(DT_I32, 2, DIMS(3, 2))},
			   1, "matmul: dtype mismatch: operand 1 ('x0') is f32 but operand 2 ('x1') is i32");
	check_verify_fails(OP_GEMM, 2, (TensorType[]){t_type(DT_I64, 2, DIMS(2, 3)), t_type(DT_I64, 2, DIMS(3, 2))}, 1,
			   "gemm: dtype mismatch");
	check_verify_fails(OP_DROPOUT, 1, (TensorType[]){t_type(DT_I64, 1, DIMS(3))}, 1, "dropout: dtype mismatch");
}

Test(elementwise, reject_matmul_shapes)
{
	check_verify_fails(OP_MATMUL, 2, (TensorType[]){t_type(DT_F32, 2, DIMS(2, 3)), t_type(DT_F32, 2, DIMS(4, 5))},
			   1,
			   "matmul: shape mismatch: operand 1 ('x0') is f32[2,3] and operand 2 ('x1') is f32[4,5]: "
			   "inner dimensions differ (3 vs 4)");
	check_verify_fails(OP_MATMUL, 2, (TensorType[]){t_type(DT_F32, 1, DIMS(3)), t_type(DT_F32, 1, DIMS(4))}, 1,
			   "operand 1 ('x0') is f32[3] and operand 2 ('x1') is f32[4]: inner dimensions differ");
	check_verify_fails(OP_MATMUL, 2,
			   (TensorType[]){t_type(DT_F32, 3, DIMS(2, 2, 3)), t_type(DT_F32, 3, DIMS(3, 3, 2))}, 1,
			   "operand 1 ('x0') is f32[2,2,3] and operand 2 ('x1') is f32[3,3,2]: batch dimensions not "
			   "broadcastable");
	check_verify_fails(OP_MATMUL, 2, (TensorType[]){t_type(DT_F32, 0, NULL), t_type(DT_F32, 1, DIMS(3))}, 1,
			   "matmul: operand 1 ('x0') has type f32[]: expected rank 1 to 8");
}

Test(elementwise, reject_gemm_shapes)
{
	check_verify_fails(OP_GEMM, 2, (TensorType[]){t_type(DT_F32, 1, DIMS(3)), t_type(DT_F32, 2, DIMS(3, 2))}, 1,
			   "gemm: operand 1 ('x0') has type f32[3]: expected rank 2");
	check_verify_fails(OP_GEMM, 2,
			   (TensorType[]){t_type(DT_F32, 2, DIMS(2, 3)), t_type(DT_F32, 3, DIMS(1, 3, 2))}, 1,
			   "gemm: operand 2 ('x1') has type f32[1,3,2]: expected rank 2");
	check_verify_fails(OP_GEMM, 3,
			   (TensorType[]){t_type(DT_F32, 2, DIMS(2, 3)), t_type(DT_F32, 2, DIMS(3, 2)),
					  t_type(DT_F32, 3, DIMS(1, 2, 2))},
			   1, "gemm: operand 3 ('x2') has type f32[1,2,2]: expected rank 0 to 2");
	check_verify_fails(OP_GEMM, 2, (TensorType[]){t_type(DT_F32, 2, DIMS(2, 3)), t_type(DT_F32, 2, DIMS(4, 2))}, 1,
			   "gemm: shape mismatch: operand 1 ('x0') is f32[2,3] and operand 2 ('x1') is f32[4,2]: "
			   "inner dimensions differ (3 vs 4");
	check_verify_fails(OP_GEMM, 3,
			   (TensorType[]){t_type(DT_F32, 2, DIMS(2, 3)), t_type(DT_F32, 2, DIMS(3, 2)),
					  t_type(DT_F32, 1, DIMS(3))},
			   1, "gemm: shape mismatch: operand 3 ('x2') is f32[3] and the product is f32[2,2]");
	/* C may not be larger than the product (unidirectional broadcast) */
	check_verify_fails(OP_GEMM, 3,
			   (TensorType[]){t_type(DT_F32, 2, DIMS(1, 3)), t_type(DT_F32, 2, DIMS(3, 2)),
					  t_type(DT_F32, 2, DIMS(2, 2))},
			   1, "operand 3 ('x2') is f32[2,2] and the product is f32[1,2]");
}

Test(elementwise, reject_gemm_trans_mismatch)
{
	/* with trans_a, A [2,3] is [3,2]^T: K = 2 but B has 3 rows */
	Node *n;
	Graph *g = t_single_op(OP_GEMM, 2,
			       (TensorType[]){t_type(DT_F32, 2, DIMS(2, 3)), t_type(DT_F32, 2, DIMS(3, 2))}, 1, &n);
	node_set_int(n, "trans_a", 1);
	t_verify_fails(g, "inner dimensions differ (2 vs 3, trans_a=1, trans_b=0)");
	graph_free(g);
}

Test(elementwise, reject_softmax_axis)
{
	Diag d;
	t_expect_errors("graph t {\n  input x : f32[2,3]\n  y = softmax(x, axis=2)\n  output y\n}\n", &d);
	t_assert_error_at(&d, "softmax: attribute 'axis' = 2 is out of range [-2, 1]", 3, 18);
	diag_free(&d);
	t_expect_errors("graph t {\n  input x : f32[2,3]\n  y = logsoftmax(x, axis=-3)\n  output y\n}\n", &d);
	t_assert_error_at(&d, "logsoftmax: attribute 'axis' = -3 is out of range [-2, 1]", 3, 21);
	diag_free(&d);
	check_verify_fails(OP_SOFTMAX, 1, (TensorType[]){t_type(DT_F32, 0, NULL)}, 1,
			   "attribute 'axis' = -1 is out of range: the operand has rank 0");
}

Test(elementwise, reject_reduce_mean_axes)
{
	Diag d;
	t_expect_errors("graph t {\n  input x : f32[2,3]\n  y = reduce_mean(x, axes=[1, -1])\n  output y\n}\n", &d);
	t_assert_error_at(&d, "reduce_mean: attribute 'axes' lists axis 1 more than once", 3, 22);
	diag_free(&d);
	t_expect_errors("graph t {\n  input x : f32[2,3]\n  y = reduce_mean(x, axes=[0, 0])\n  output y\n}\n", &d);
	t_assert_error_at(&d, "lists axis 0 more than once", 3, 22);
	diag_free(&d);
	t_expect_errors("graph t {\n  input x : f32[2,3]\n  y = reduce_mean(x, axes=[2])\n  output y\n}\n", &d);
	t_assert_error_at(&d, "reduce_mean: attribute 'axes' = 2 is out of range [-2, 1]", 3, 22);
	diag_free(&d);
}

Test(elementwise, reject_bad_attributes_via_specs)
{
	Diag d;
	t_expect_errors("graph t {\n  input x : f32[2]\n  y = gelu(x, approximate=\"fast\")\n  output y\n}\n", &d);
	t_assert_error_at(&d, "attribute 'approximate' = \"fast\" is not one of none|tanh", 3, 15);
	diag_free(&d);
	t_expect_errors("graph t {\n  input x : f32[2,2]\n  input w : f32[2,2]\n  y = gemm(x, w, trans_b=2)\n"
			"  output y\n}\n",
			&d);
	t_assert_error_at(&d, "attribute 'trans_b' = 2 is out of range [0, 1]", 4, 18);
	diag_free(&d);
}
