/* Data-movement ops (ops_shape.c): shape rules, reference kernels and the
 * errors of the rules.  Every expected value is worked out by hand in the
 * comments next to it. */
#include <stdint.h>
#include <string.h>

#include "test_util.h"

/* ---- helpers ------------------------------------------------------------ */
/* Verify and run a model without inputs. */
static Tensor **run(const char *text, Graph **g)
{
	*g = t_model(text);
	return t_run(*g, NULL);
}

static void done(Graph *g, Tensor **o)
{
	t_free_outputs(g, o);
	graph_free(g);
}

static void assert_shape_only(const Tensor *t, DType dt, int rank, const int64_t *dims)
{
	Shape want = shape_make(rank, dims);
	char a[128], b[128];
	cr_assert_eq(t->type.dtype, dt, "dtype %s, expected %s", dtype_name(t->type.dtype), dtype_name(dt));
	cr_assert(shape_eq(&t->type.shape, &want), "shape %s, expected %s", shape_str(&t->type.shape, a, sizeof a),
		  shape_str(&want, b, sizeof b));
}

static void assert_i32(const Tensor *t, int rank, const int64_t *dims, const int32_t *want)
{
	assert_shape_only(t, DT_I32, rank, dims);
	for (int64_t i = 0; i < tensor_numel(t); i++)
		cr_assert_eq(((const int32_t *)t->data)[i], want[i], "element %lld: got %d, expected %d", (long long)i,
			     ((const int32_t *)t->data)[i], want[i]);
}

static void assert_bool(const Tensor *t, int rank, const int64_t *dims, const uint8_t *want)
{
	assert_shape_only(t, DT_BOOL, rank, dims);
	for (int64_t i = 0; i < tensor_numel(t); i++)
		cr_assert_eq(((const uint8_t *)t->data)[i], want[i], "element %lld: got %d, expected %d", (long long)i,
			     ((const uint8_t *)t->data)[i], want[i]);
}

/* EMPTY: a result with no elements is checked by its shape (shape(v) is an
 * output), which also runs its kernel on the empty case. */

/* Expect verification of `text` to fail with an error containing msg,
 * located where `anchor` first occurs in the text. */
static void expect_error(const char *text, const char *msg, const char *anchor)
{
	const char *at = strstr(text, anchor);
	cr_assert(at != NULL, "anchor \"%s\" not in the model", anchor);
	int line = 1, col = 1;
	for (const char *p = text; p < at; p++) {
		if (*p == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	Diag d;
	t_expect_errors(text, &d);
	t_assert_error_at(&d, msg, line, col);
	diag_free(&d);
}

/* x[a][b][c] = 100a + 10b + c for a < 2, b < 3, c < 4 */
#define X234 \
	"  const x : f32[2,3,4] = [0,1,2,3, 10,11,12,13, 20,21,22,23,\n" \
	"    100,101,102,103, 110,111,112,113, 120,121,122,123]\n"
#define X234_VALUES \
	F32S(0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 100, 101, 102, 103, 110, 111, 112, 113, 120, 121, 122, 123)

/* ---- reshape ------------------------------------------------------------ */
Test(shape, reshape_zero_copies_and_minus_one_infers)
{
	Graph *g;
	Tensor **o = run("graph t {\n" X234
			 "  a = reshape(x, shape=[0,-1])\n"    /* [2, 24/2] = [2,12] */
			 "  b = reshape(x, shape=[-1,0,2])\n"  /* 0 copies 3: [24/6,3,2] = [4,3,2] */
			 "  c = reshape(x, shape=[24])\n"
			 "  d = reshape(x, shape=[0,0,-1,1])\n" /* [2,3,4,1] */
			 "  output a, b, c, d\n}\n",
			 &g);
	/* reshape never moves data: every result holds x's elements in order */
	t_assert_close(o[0], 2, DIMS(2, 12), X234_VALUES, 0, 0);
	t_assert_close(o[1], 3, DIMS(4, 3, 2), X234_VALUES, 0, 0);
	t_assert_close(o[2], 1, DIMS(24), X234_VALUES, 0, 0);
	t_assert_close(o[3], 4, DIMS(2, 3, 4, 1), X234_VALUES, 0, 0);
	done(g, o);
}

Test(shape, reshape_allowzero_keeps_zero)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const e : f32[0,3] = []\n"
			 "  const x : i64[2,3] = [1,2,3,4,5,6]\n"
			 "  a = reshape(e, shape=[3,0], allowzero=1)\n" /* a real 0: [3,0] */
			 "  b = reshape(e, shape=[-1,3])\n"            /* 0 elements / 3: [0,3] */
			 "  c = reshape(x, shape=[3,-1], allowzero=1)\n"
			 "  sa = shape(a)\n  sb = shape(b)\n"
			 "  output sa, c, sb\n}\n",
			 &g);
	/* empty results are checked through their shape (see EMPTY below) */
	t_assert_i64(o[0], 1, DIMS(2), I64S(3, 0));
	/* i64 data moves unchanged: [3,2] */
	t_assert_i64(o[1], 2, DIMS(3, 2), I64S(1, 2, 3, 4, 5, 6));
	t_assert_i64(o[2], 1, DIMS(2), I64S(0, 3));
	done(g, o);
}

Test(shape, reshape_scalar_and_empty)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const s : f32[] = [7]\n"
			 "  const v : f32[1,1] = [8]\n"
			 "  const e : f32[2,0] = []\n"
			 "  a = reshape(s, shape=[1,1,1])\n"
			 "  b = reshape(v, shape=[])\n"
			 "  c = reshape(e, shape=[0,5], allowzero=1)\n" /* 0 elements either way */
			 "  sc = shape(c)\n"
			 "  output a, b, sc\n}\n",
			 &g);
	t_assert_close(o[0], 3, DIMS(1, 1, 1), F32S(7), 0, 0);
	t_assert_close(o[1], 0, NULL, F32S(8), 0, 0);
	t_assert_i64(o[2], 1, DIMS(2), I64S(0, 5));
	done(g, o);
}

Test(shape, reshape_rejects)
{
	expect_error("graph t {\n  input x : f32[2,3]\n  y = reshape(x, shape=[4,2])\n  output y\n}\n",
		     "reshape: cannot reshape f32[2,3] (6 elements) to [4,2] (8 elements)", "shape=");
	expect_error("graph t {\n  input x : f32[2,3]\n  y = reshape(x, shape=[-1,-1])\n  output y\n}\n",
		     "reshape: attribute 'shape' = [-1,-1] has more than one -1", "shape=");
	expect_error("graph t {\n  input x : f32[2,3]\n  y = reshape(x, shape=[4,-1])\n  output y\n}\n",
		     "cannot reshape f32[2,3] (6 elements) to [4,-1]: 6 is not a multiple of 4", "shape=");
	/* 0 copies 3: [3,3] has 9 elements, not 6 */
	expect_error("graph t {\n  input x : f32[2,3]\n  y = reshape(x, shape=[3,0])\n  output y\n}\n",
		     "cannot reshape f32[2,3] (6 elements) to [3,0] (that is [3,3]) (9 elements)", "shape=");
	/* allowzero: 0 stays 0, and 0 with -1 is ambiguous */
	expect_error("graph t {\n  input x : f32[2,3]\n  y = reshape(x, shape=[0,-1], allowzero=1)\n  output y\n}\n",
		     "has both 0 and -1, which allowzero=1 forbids", "shape=");
	expect_error("graph t {\n  input x : f32[2,3]\n  y = reshape(x, shape=[0,3], allowzero=1)\n  output y\n}\n",
		     "cannot reshape f32[2,3] (6 elements) to [0,3] (0 elements)", "shape=");
	/* 0 beyond the input's rank has nothing to copy */
	expect_error("graph t {\n  input x : f32[6]\n  y = reshape(x, shape=[1,0])\n  output y\n}\n",
		     "entry 1 is 0 (copy the input dim) but operand 1 ('x') is f32[6], of rank 1", "shape=");
	expect_error("graph t {\n  input x : f32[6]\n  y = reshape(x, shape=[-2,3])\n  output y\n}\n",
		     "attribute 'shape' = -2 is out of range", "shape=");
	/* an overflowing product is an error, not undefined behaviour */
	expect_error("graph t {\n  input x : f32[6]\n"
		     "  y = reshape(x, shape=[4611686018427387904,4])\n  output y\n}\n",
		     "cannot reshape f32[6] (6 elements)", "shape=");
}

/* ---- transpose ---------------------------------------------------------- */
Test(shape, transpose_default_reverses)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const m : f32[2,3] = [1,2,3,4,5,6]\n" X234
			 "  a = transpose(m)\n"
			 "  b = transpose(x)\n"
			 "  output a, b\n}\n",
			 &g);
	/* [[1,2,3],[4,5,6]]^T = [[1,4],[2,5],[3,6]] */
	t_assert_close(o[0], 2, DIMS(3, 2), F32S(1, 4, 2, 5, 3, 6), 0, 0);
	/* out[c][b][a] = x[a][b][c] = 100a + 10b + c, a fastest */
	t_assert_close(o[1], 3, DIMS(4, 3, 2),
		       F32S(0, 100, 10, 110, 20, 120, 1, 101, 11, 111, 21, 121, 2, 102, 12, 112, 22, 122, 3, 103, 13,
			    113, 23, 123),
		       0, 0);
	done(g, o);
}

Test(shape, transpose_perm_rank3)
{
	Graph *g;
	Tensor **o = run("graph t {\n" X234
			 "  a = transpose(x, perm=[1,2,0])\n"
			 "  b = transpose(x, perm=[0,2,1])\n"
			 "  c = transpose(x, perm=[0,1,2])\n"
			 "  output a, b, c\n}\n",
			 &g);
	/* a[i][j][k] = x[k][i][j] = 100k + 10i + j, shape [3,4,2] */
	t_assert_close(o[0], 3, DIMS(3, 4, 2),
		       F32S(0, 100, 1, 101, 2, 102, 3, 103, 10, 110, 11, 111, 12, 112, 13, 113, 20, 120, 21, 121, 22,
			    122, 23, 123),
		       0, 0);
	/* b[a][c][b] = 100a + 10b + c, shape [2,4,3] */
	t_assert_close(o[1], 3, DIMS(2, 4, 3),
		       F32S(0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23, 100, 110, 120, 101, 111, 121, 102, 112, 122, 103,
			    113, 123),
		       0, 0);
	t_assert_close(o[2], 3, DIMS(2, 3, 4), X234_VALUES, 0, 0);
	done(g, o);
}

Test(shape, transpose_i32_and_empty)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const m : i32[3,1,2] = [1,2,3,4,5,6]\n"
			 "  const e : f32[0,3] = []\n"
			 "  a = transpose(m, perm=[2,0,1])\n"
			 "  b = transpose(e)\n"
			 "  sb = shape(b)\n"
			 "  output a, sb\n}\n",
			 &g);
	/* m[i][0][k] = 2i + k + 1; a[k][i][0] = m[i][0][k]: k=0: 1,3,5; k=1: 2,4,6 */
	assert_i32(o[0], 3, DIMS(2, 3, 1), (int32_t[]){1, 3, 5, 2, 4, 6});
	t_assert_i64(o[1], 1, DIMS(2), I64S(3, 0));
	done(g, o);
}

Test(shape, transpose_rejects)
{
	expect_error("graph t {\n  input x : f32[2,3,4]\n  y = transpose(x, perm=[0,0,1])\n  output y\n}\n",
		     "transpose: attribute 'perm' = [0,0,1] is not a permutation of 0..2 (operand 1 ('x') is f32[2,3,4])",
		     "perm=");
	expect_error("graph t {\n  input x : f32[2,3,4]\n  y = transpose(x, perm=[0,3,1])\n  output y\n}\n",
		     "attribute 'perm' = [0,3,1] is not a permutation of 0..2", "perm=");
	expect_error("graph t {\n  input x : f32[2,3,4]\n  y = transpose(x, perm=[0,-1,1])\n  output y\n}\n",
		     "attribute 'perm' = [0,-1,1] is not a permutation of 0..2", "perm=");
	expect_error("graph t {\n  input x : f32[2,3,4]\n  y = transpose(x, perm=[1,0])\n  output y\n}\n",
		     "attribute 'perm' = [1,0] has 2 entries but operand 1 ('x') is f32[2,3,4], of rank 3", "perm=");
}

/* ---- flatten ------------------------------------------------------------ */
Test(shape, flatten_axes)
{
	Graph *g;
	Tensor **o = run("graph t {\n" X234
			 "  a = flatten(x, axis=0)\n"  /* [1, 24] */
			 "  b = flatten(x, axis=-1)\n" /* [2*3, 4] */
			 "  c = flatten(x)\n"          /* axis 1: [2, 12] */
			 "  d = flatten(x, axis=3)\n"  /* [24, 1] */
			 "  e = flatten(x, axis=-3)\n" /* axis 0: [1, 24] */
			 "  output a, b, c, d, e\n}\n",
			 &g);
	t_assert_close(o[0], 2, DIMS(1, 24), X234_VALUES, 0, 0);
	t_assert_close(o[1], 2, DIMS(6, 4), X234_VALUES, 0, 0);
	t_assert_close(o[2], 2, DIMS(2, 12), X234_VALUES, 0, 0);
	t_assert_close(o[3], 2, DIMS(24, 1), X234_VALUES, 0, 0);
	t_assert_close(o[4], 2, DIMS(1, 24), X234_VALUES, 0, 0);
	done(g, o);
}

Test(shape, flatten_rejects_axis)
{
	expect_error("graph t {\n  input x : f32[2,3]\n  y = flatten(x, axis=3)\n  output y\n}\n",
		     "flatten: attribute 'axis' = 3 is out of range [-2, 2]", "axis=");
	expect_error("graph t {\n  input x : f32[2,3]\n  y = flatten(x, axis=-3)\n  output y\n}\n",
		     "attribute 'axis' = -3 is out of range [-2, 2]", "axis=");
}

/* ---- concat ------------------------------------------------------------- */
Test(shape, concat_rank2_each_axis)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const a : f32[2,2] = [1,2,3,4]\n"
			 "  const b : f32[1,2] = [5,6]\n"
			 "  const c : f32[2,1] = [7,8]\n"
			 "  p = concat(a, b, axis=0)\n"
			 "  q = concat(a, c, axis=1)\n"
			 "  r = concat(a, c, a, axis=-1)\n"
			 "  s = concat(b, a, axis=-2)\n"
			 "  output p, q, r, s\n}\n",
			 &g);
	/* rows of a then b */
	t_assert_close(o[0], 2, DIMS(3, 2), F32S(1, 2, 3, 4, 5, 6), 0, 0);
	/* [[1,2,7],[3,4,8]] */
	t_assert_close(o[1], 2, DIMS(2, 3), F32S(1, 2, 7, 3, 4, 8), 0, 0);
	/* [[1,2,7,1,2],[3,4,8,3,4]] */
	t_assert_close(o[2], 2, DIMS(2, 5), F32S(1, 2, 7, 1, 2, 3, 4, 8, 3, 4), 0, 0);
	t_assert_close(o[3], 2, DIMS(3, 2), F32S(5, 6, 1, 2, 3, 4), 0, 0);
	done(g, o);
}

Test(shape, concat_rank3_each_axis)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const a : f32[1,2,2] = [1,2,3,4]\n"
			 "  const b : f32[1,2,2] = [5,6,7,8]\n"
			 "  const c : f32[2,1,2] = [1,2,3,4]\n"
			 "  const d : f32[2,2,2] = [5,6,7,8,9,10,11,12]\n"
			 "  const e : f32[2,2,1] = [1,2,3,4]\n"
			 "  const f : f32[2,2,1] = [5,6,7,8]\n"
			 "  p = concat(a, b, axis=0)\n"
			 "  q = concat(c, d, axis=1)\n"
			 "  q2 = concat(c, d, axis=-2)\n"
			 "  r = concat(e, f, axis=2)\n"
			 "  r2 = concat(e, f, axis=-1)\n"
			 "  output p, q, q2, r, r2\n}\n",
			 &g);
	t_assert_close(o[0], 3, DIMS(2, 2, 2), F32S(1, 2, 3, 4, 5, 6, 7, 8), 0, 0);
	/* batch 0: [1,2] then [[5,6],[7,8]]; batch 1: [3,4] then [[9,10],[11,12]] */
	t_assert_close(o[1], 3, DIMS(2, 3, 2), F32S(1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12), 0, 0);
	t_assert_close(o[2], 3, DIMS(2, 3, 2), F32S(1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12), 0, 0);
	/* each row [e_ij, f_ij] */
	t_assert_close(o[3], 3, DIMS(2, 2, 2), F32S(1, 5, 2, 6, 3, 7, 4, 8), 0, 0);
	t_assert_close(o[4], 3, DIMS(2, 2, 2), F32S(1, 5, 2, 6, 3, 7, 4, 8), 0, 0);
	done(g, o);
}

Test(shape, concat_i64_single_and_empty_operands)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const a : i64[2] = [1,2]\n"
			 "  const z : i64[0] = []\n"
			 "  const b : i64[3] = [3,4,5]\n"
			 "  const e : f32[0,2] = []\n"
			 "  const m : f32[2,2] = [1,2,3,4]\n"
			 "  p = concat(a, z, b, axis=0)\n"
			 "  q = concat(a, axis=-1)\n"
			 "  r = concat(e, m, e, axis=0)\n"
			 "  output p, q, r\n}\n",
			 &g);
	t_assert_i64(o[0], 1, DIMS(5), I64S(1, 2, 3, 4, 5));
	t_assert_i64(o[1], 1, DIMS(2), I64S(1, 2));
	t_assert_close(o[2], 2, DIMS(2, 2), F32S(1, 2, 3, 4), 0, 0);
	done(g, o);
}

Test(shape, concat_rejects)
{
	expect_error("graph t {\n  input a : f32[2,2]\n  input b : f32[3,3]\n  y = concat(a, b, axis=0)\n  output y\n}\n",
		     "concat: shape mismatch: operand 1 ('a') is f32[2,2] and operand 2 ('b') is f32[3,3]: "
		     "sizes differ on axis 1 (concatenating on axis 0)",
		     "b, axis");
	expect_error("graph t {\n  input a : f32[2,2]\n  input b : f32[2]\n  y = concat(a, b, axis=0)\n  output y\n}\n",
		     "shape mismatch: operand 1 ('a') is f32[2,2] and operand 2 ('b') is f32[2]: ranks differ", "b, axis");
	expect_error("graph t {\n  input a : f32[2]\n  input b : i64[2]\n  y = concat(a, b, axis=0)\n  output y\n}\n",
		     "dtype mismatch: operand 1 ('a') is f32 but operand 2 ('b') is i64", "b, axis");
	expect_error("graph t {\n  input a : f32[2]\n  y = concat(a, a, axis=1)\n  output y\n}\n",
		     "attribute 'axis' = 1 is out of range [-1, 0]", "axis=");
	expect_error("graph t {\n  input a : f32[2]\n  y = concat(a, a)\n  output y\n}\n",
		     "missing required attribute 'axis'", "concat");
}

/* ---- split -------------------------------------------------------------- */
Test(shape, split_equal_and_variable)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[2,4] = [1,2,3,4,5,6,7,8]\n"
			 "  p, q = split(x, axis=1)\n"            /* 4 / 2: [2,2] each */
			 "  r, s = split(x, axis=-1, split=[1,3])\n"
			 "  u, v = split(x)\n"                     /* axis 0: rows */
			 "  output p, q, r, s, u, v\n}\n",
			 &g);
	t_assert_close(o[0], 2, DIMS(2, 2), F32S(1, 2, 5, 6), 0, 0);
	t_assert_close(o[1], 2, DIMS(2, 2), F32S(3, 4, 7, 8), 0, 0);
	t_assert_close(o[2], 2, DIMS(2, 1), F32S(1, 5), 0, 0);
	t_assert_close(o[3], 2, DIMS(2, 3), F32S(2, 3, 4, 6, 7, 8), 0, 0);
	t_assert_close(o[4], 2, DIMS(1, 4), F32S(1, 2, 3, 4), 0, 0);
	t_assert_close(o[5], 2, DIMS(1, 4), F32S(5, 6, 7, 8), 0, 0);
	done(g, o);
}

Test(shape, split_zero_size_and_uneven)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[2,4] = [1,2,3,4,5,6,7,8]\n"
			 "  const y : i64[5] = [1,2,3,4,5]\n"
			 "  const w : i64[9] = [1,2,3,4,5,6,7,8,9]\n"
			 "  p, q, r = split(x, axis=1, split=[0,4,0])\n"
			 "  a, b, c = split(y, num_outputs=3)\n" /* ceil(5/3) = 2: 2, 2, 1 */
			 "  d, e, f = split(y)\n"                /* the same from the result count */
			 "  h, i, j, k = split(w)\n"             /* ceil(9/4) = 3: 3, 3, 3, 0 */
			 "  sp = shape(p)\n  sr = shape(r)\n  sk = shape(k)\n"
			 "  output sp, q, sr, a, b, c, d, e, f, h, i, j, sk\n}\n",
			 &g);
	t_assert_i64(o[0], 1, DIMS(2), I64S(2, 0));
	t_assert_close(o[1], 2, DIMS(2, 4), F32S(1, 2, 3, 4, 5, 6, 7, 8), 0, 0);
	t_assert_i64(o[2], 1, DIMS(2), I64S(2, 0));
	t_assert_i64(o[3], 1, DIMS(2), I64S(1, 2));
	t_assert_i64(o[4], 1, DIMS(2), I64S(3, 4));
	t_assert_i64(o[5], 1, DIMS(1), I64S(5));
	t_assert_i64(o[6], 1, DIMS(2), I64S(1, 2));
	t_assert_i64(o[7], 1, DIMS(2), I64S(3, 4));
	t_assert_i64(o[8], 1, DIMS(1), I64S(5));
	t_assert_i64(o[9], 1, DIMS(3), I64S(1, 2, 3));
	t_assert_i64(o[10], 1, DIMS(3), I64S(4, 5, 6));
	t_assert_i64(o[11], 1, DIMS(3), I64S(7, 8, 9));
	t_assert_i64(o[12], 1, DIMS(1), I64S(0));
	done(g, o);
}

Test(shape, split_unused_result_is_fine)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[3,2] = [1,2,3,4,5,6]\n"
			 "  a, _b = split(x, split=[2,1])\n"
			 "  output a\n}\n",
			 &g);
	t_assert_close(o[0], 2, DIMS(2, 2), F32S(1, 2, 3, 4), 0, 0);
	done(g, o);
}

Test(shape, split_rejects)
{
	expect_error("graph t {\n  input x : f32[2,4]\n  p, q = split(x, axis=1, split=[1,2])\n  output p, q\n}\n",
		     "split: attribute 'split' = [1,2] does not sum to 4, the size of axis 1 of operand 1 ('x') f32[2,4]",
		     "split=");
	expect_error("graph t {\n  input x : f32[4]\n  p, q = split(x, split=[1,1,2])\n  output p, q\n}\n",
		     "attribute 'split' = [1,1,2] has 3 entries but there are 2 results", "split=");
	expect_error("graph t {\n  input x : f32[4]\n  p, q = split(x, num_outputs=3)\n  output p, q\n}\n",
		     "attribute 'num_outputs' = 3 but there are 2 results", "num_outputs=");
	expect_error("graph t {\n  input x : f32[4]\n  p, q = split(x, split=[2,2], num_outputs=2)\n  output p, q\n}\n",
		     "attributes 'split' and 'num_outputs' cannot both be given", "num_outputs=");
	/* ceil(5/4) = 2: 2 + 2 + 2 = 6 > 5 leaves nothing (-1) for the last */
	expect_error("graph t {\n  input x : f32[5]\n  a, b, c, d = split(x)\n  output a, b, c, d\n}\n",
		     "axis 0 of operand 1 ('x') f32[5] cannot be split into 4 parts", "split(");
	expect_error("graph t {\n  input x : f32[4]\n  p, q = split(x, split=[-1,5])\n  output p, q\n}\n",
		     "attribute 'split' = -1 is out of range", "split=");
	expect_error("graph t {\n  input x : f32[4]\n  p, q = split(x, axis=-2)\n  output p, q\n}\n",
		     "attribute 'axis' = -2 is out of range [-1, 0]", "axis=");
}

/* ---- slice -------------------------------------------------------------- */
/* x[i][j] = 4i + j */
#define X34 "  const x : f32[3,4] = [0,1,2,3, 4,5,6,7, 8,9,10,11]\n"

Test(shape, slice_default_axes_and_steps)
{
	Graph *g;
	Tensor **o = run("graph t {\n" X34
			 "  a = slice(x, starts=[1,1], ends=[3,3])\n"          /* rows 1-2, cols 1-2 */
			 "  b = slice(x, starts=[0], ends=[2])\n"              /* rows 0-1 */
			 "  c = slice(x, starts=[0,1], ends=[3,4], steps=[2,2])\n" /* rows 0,2; cols 1,3 */
			 "  output a, b, c\n}\n",
			 &g);
	t_assert_close(o[0], 2, DIMS(2, 2), F32S(5, 6, 9, 10), 0, 0);
	t_assert_close(o[1], 2, DIMS(2, 4), F32S(0, 1, 2, 3, 4, 5, 6, 7), 0, 0);
	t_assert_close(o[2], 2, DIMS(2, 2), F32S(1, 3, 9, 11), 0, 0);
	done(g, o);
}

Test(shape, slice_negative_steps)
{
	Graph *g;
	Tensor **o = run("graph t {\n" X34
			 /* cols: start -1 -> 3, end INT64_MIN -> clamped to -1: 3, 1 */
			 "  a = slice(x, starts=[-1], ends=[-9223372036854775808], axes=[1], steps=[-2])\n"
			 /* everything reversed */
			 "  b = slice(x, starts=[-1,-1], ends=[-9223372036854775808,-9223372036854775808], steps=[-1,-1])\n"
			 /* rows: start 10 -> clamped to 2, end 0 exclusive: 2, 1 */
			 "  c = slice(x, starts=[10], ends=[0], axes=[0], steps=[-1])\n"
			 /* cols 2 down to 1 (end -4 -> 0, exclusive) */
			 "  d = slice(x, starts=[2], ends=[-4], axes=[1], steps=[-1])\n"
			 /* step -1 with start <= end: empty */
			 "  e = slice(x, starts=[1], ends=[2], axes=[1], steps=[-1])\n"
			 "  se = shape(e)\n"
			 "  output a, b, c, d, se\n}\n",
			 &g);
	t_assert_close(o[0], 2, DIMS(3, 2), F32S(3, 1, 7, 5, 11, 9), 0, 0);
	t_assert_close(o[1], 2, DIMS(3, 4), F32S(11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), 0, 0);
	t_assert_close(o[2], 2, DIMS(2, 4), F32S(8, 9, 10, 11, 4, 5, 6, 7), 0, 0);
	t_assert_close(o[3], 2, DIMS(3, 2), F32S(2, 1, 6, 5, 10, 9), 0, 0);
	t_assert_i64(o[4], 1, DIMS(2), I64S(3, 0));
	done(g, o);
}

Test(shape, slice_out_of_bounds_and_negative_axes)
{
	Graph *g;
	Tensor **o = run("graph t {\n" X34
			 "  a = slice(x, starts=[1000], ends=[2000], axes=[0])\n"  /* start clamps to 3: empty */
			 "  b = slice(x, starts=[-1000], ends=[1000], axes=[1])\n" /* everything */
			 "  c = slice(x, starts=[1], ends=[9223372036854775807], axes=[-1])\n" /* cols 1.. */
			 "  d = slice(x, starts=[0], ends=[-1], axes=[-2])\n"      /* rows 0..1 */
			 "  e = slice(x, starts=[-2, 3], ends=[-1, 1000], axes=[-1, 0])\n" /* cols 2; rows 3..: empty */
			 "  f = slice(x, starts=[2], ends=[1], axes=[1])\n"        /* start > end, step 1: empty */
			 "  sa = shape(a)\n  se = shape(e)\n  sf = shape(f)\n"
			 "  output sa, b, c, d, se, sf\n}\n",
			 &g);
	t_assert_i64(o[0], 1, DIMS(2), I64S(0, 4));
	t_assert_close(o[1], 2, DIMS(3, 4), F32S(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), 0, 0);
	t_assert_close(o[2], 2, DIMS(3, 3), F32S(1, 2, 3, 5, 6, 7, 9, 10, 11), 0, 0);
	t_assert_close(o[3], 2, DIMS(2, 4), F32S(0, 1, 2, 3, 4, 5, 6, 7), 0, 0);
	t_assert_i64(o[4], 1, DIMS(2), I64S(0, 1));
	t_assert_i64(o[5], 1, DIMS(2), I64S(3, 0));
	done(g, o);
}

Test(shape, slice_bool_and_rank3)
{
	Graph *g;
	Tensor **o = run("graph t {\n" X234
			 "  const m : bool[5] = [1,0,0,1,1]\n"
			 "  a = slice(m, starts=[-1], ends=[-6], steps=[-2])\n" /* 4, 2, 0 */
			 /* a in 1..1, b in 0..2 step 2, c in 3 down to 1 */
			 "  b = slice(x, starts=[1,0,3], ends=[2,3,0], axes=[0,1,2], steps=[1,2,-1])\n"
			 "  output a, b\n}\n",
			 &g);
	assert_bool(o[0], 1, DIMS(3), (uint8_t[]){1, 0, 1});
	/* 100 + 10b + c for b in {0, 2}, c in {3, 2, 1} */
	t_assert_close(o[1], 3, DIMS(1, 2, 3), F32S(103, 102, 101, 123, 122, 121), 0, 0);
	done(g, o);
}

Test(shape, slice_rejects)
{
	expect_error("graph t {\n  input x : f32[3,4]\n  y = slice(x, starts=[0], ends=[2], steps=[0])\n  output y\n}\n",
		     "slice: attribute 'steps' = [0]: entry 0 is 0 (a step must not be 0)", "steps=");
	expect_error("graph t {\n  input x : f32[3,4]\n  y = slice(x, starts=[0,0], ends=[2,2], axes=[0,-2])\n"
		     "  output y\n}\n",
		     "attribute 'axes' = [0,-2] repeats axis 0", "axes=");
	expect_error("graph t {\n  input x : f32[3,4]\n  y = slice(x, starts=[0,0], ends=[2])\n  output y\n}\n",
		     "attribute 'ends' has 1 entries but 'starts' has 2", "ends=");
	expect_error("graph t {\n  input x : f32[3,4]\n  y = slice(x, starts=[0], ends=[2], axes=[2])\n  output y\n}\n",
		     "attribute 'axes' = 2 is out of range [-2, 1]", "axes=");
	expect_error("graph t {\n  input x : f32[3]\n  y = slice(x, starts=[0,0], ends=[1,1])\n  output y\n}\n",
		     "attribute 'starts' has 2 entries but operand 1 ('x') is f32[3], of rank 1", "starts=");
}

/* ---- squeeze / unsqueeze ------------------------------------------------ */
Test(shape, squeeze_and_unsqueeze)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[1,3,1,2] = [1,2,3,4,5,6]\n"
			 "  const s : i64[3,2] = [1,2,3,4,5,6]\n"
			 "  a = squeeze(x)\n"                 /* all size-1 axes: [3,2] */
			 "  b = squeeze(x, axes=[-2,0])\n"    /* unsorted, negative: [3,2] */
			 "  c = squeeze(x, axes=[2])\n"       /* [1,3,2] */
			 "  d = unsqueeze(s, axes=[0])\n"     /* [1,3,2] */
			 "  e = unsqueeze(s, axes=[3,-4])\n"  /* output rank 4: axes 3, 0: [1,3,2,1] */
			 "  f = unsqueeze(s, axes=[-1,1])\n"  /* axes 3, 1: [3,1,2,1] */
			 "  h = squeeze(x, axes=[])\n"        /* nothing */
			 "  output a, b, c, d, e, f, h\n}\n",
			 &g);
	t_assert_close(o[0], 2, DIMS(3, 2), F32S(1, 2, 3, 4, 5, 6), 0, 0);
	t_assert_close(o[1], 2, DIMS(3, 2), F32S(1, 2, 3, 4, 5, 6), 0, 0);
	t_assert_close(o[2], 3, DIMS(1, 3, 2), F32S(1, 2, 3, 4, 5, 6), 0, 0);
	t_assert_i64(o[3], 3, DIMS(1, 3, 2), I64S(1, 2, 3, 4, 5, 6));
	t_assert_i64(o[4], 4, DIMS(1, 3, 2, 1), I64S(1, 2, 3, 4, 5, 6));
	t_assert_i64(o[5], 4, DIMS(3, 1, 2, 1), I64S(1, 2, 3, 4, 5, 6));
	t_assert_close(o[6], 4, DIMS(1, 3, 1, 2), F32S(1, 2, 3, 4, 5, 6), 0, 0);
	done(g, o);
}

Test(shape, squeeze_to_scalar_and_unsqueeze_scalar)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[1,1] = [4]\n"
			 "  const s : f32[] = [5]\n"
			 "  a = squeeze(x)\n"
			 "  b = unsqueeze(s, axes=[0,-1])\n" /* output rank 2: [1,1] */
			 "  output a, b\n}\n",
			 &g);
	t_assert_close(o[0], 0, NULL, F32S(4), 0, 0);
	t_assert_close(o[1], 2, DIMS(1, 1), F32S(5), 0, 0);
	done(g, o);
}

Test(shape, squeeze_unsqueeze_reject)
{
	expect_error("graph t {\n  input x : f32[1,3]\n  y = squeeze(x, axes=[1])\n  output y\n}\n",
		     "squeeze: cannot squeeze axis 1 of operand 1 ('x') f32[1,3]: its size is 3, not 1", "axes=");
	expect_error("graph t {\n  input x : f32[1,3]\n  y = squeeze(x, axes=[0,-2])\n  output y\n}\n",
		     "attribute 'axes' = [0,-2] repeats axis 0", "axes=");
	expect_error("graph t {\n  input x : f32[1,3]\n  y = squeeze(x, axes=[2])\n  output y\n}\n",
		     "attribute 'axes' = 2 is out of range [-2, 1]", "axes=");
	expect_error("graph t {\n  input x : f32[3,2]\n  y = unsqueeze(x, axes=[1,-3])\n  output y\n}\n",
		     "unsqueeze: attribute 'axes' = [1,-3] repeats axis 1", "axes=");
	expect_error("graph t {\n  input x : f32[3,2]\n  y = unsqueeze(x, axes=[3])\n  output y\n}\n",
		     "attribute 'axes' = 3 is out of range [-3, 2]", "axes=");
	expect_error("graph t {\n  input x : f32[1,1,1,1,1,1,1]\n  y = unsqueeze(x, axes=[0,1])\n  output y\n}\n",
		     "rank 9, above the maximum 8", "axes=");
	expect_error("graph t {\n  input x : f32[3,2]\n  y = unsqueeze(x)\n  output y\n}\n",
		     "missing required attribute 'axes'", "unsqueeze");
}

/* ---- gather ------------------------------------------------------------- */
Test(shape, gather_axis0_axis1)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const d : f32[3,2] = [1,2, 3,4, 5,6]\n"
			 "  const i : i64[2,2] = [0,1, 1,2]\n"
			 "  const e : f32[3,3] = [1,1.5,1.75, 2,3,3.5, 4,5,5.5]\n"
			 "  const j : i64[1,2] = [0,2]\n"
			 "  a = gather(d, i)\n"          /* rows: [[r0,r1],[r1,r2]] -> [2,2,2] */
			 "  b = gather(e, j, axis=1)\n"  /* cols 0 and 2 of each row -> [3,1,2] */
			 "  c = gather(e, j, axis=-1)\n"
			 "  output a, b, c\n}\n",
			 &g);
	t_assert_close(o[0], 3, DIMS(2, 2, 2), F32S(1, 2, 3, 4, 3, 4, 5, 6), 0, 0);
	t_assert_close(o[1], 3, DIMS(3, 1, 2), F32S(1, 1.75f, 2, 3.5f, 4, 5.5f), 0, 0);
	t_assert_close(o[2], 3, DIMS(3, 1, 2), F32S(1, 1.75f, 2, 3.5f, 4, 5.5f), 0, 0);
	done(g, o);
}

Test(shape, gather_negative_i32_and_scalar_indices)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const d : i64[3,2] = [1,2, 3,4, 5,6]\n"
			 "  const i : i32[2] = [-1, 0]\n"
			 "  const s : i64[] = [-2]\n"
			 "  const e : i32[2,2] = [-2, 1, 0, -1]\n"
			 "  a = gather(d, i)\n"          /* rows 2, 0 */
			 "  b = gather(d, s)\n"          /* row 1, rank 1 */
			 "  c = gather(d, e, axis=1)\n"  /* cols [[0,1],[0,1]] of each row: [3,2,2] */
			 "  output a, b, c\n}\n",
			 &g);
	t_assert_i64(o[0], 2, DIMS(2, 2), I64S(5, 6, 1, 2));
	t_assert_i64(o[1], 1, DIMS(2), I64S(3, 4));
	t_assert_i64(o[2], 3, DIMS(3, 2, 2), I64S(1, 2, 1, 2, 3, 4, 3, 4, 5, 6, 5, 6));
	done(g, o);
}

Test(shape, gather_out_of_range_fails_at_run_time)
{
	const char *texts[] = {
		"graph t {\n  input d : f32[3,2]\n  const i : i64[2] = [0, 3]\n  y = gather(d, i)\n  output y\n}\n",
		"graph t {\n  input d : f32[3,2]\n  const i : i32[2] = [-4, 0]\n  y = gather(d, i)\n  output y\n}\n",
	};
	const char *msgs[] = {"gather: index 3 is out of range [-3, 2]", "gather: index -4 is out of range [-3, 2]"};
	for (int k = 0; k < 2; k++) {
		/* The Diag that parsed the model owns the file name that node
		 * locations point to, so it lives as long as the graph. */
		Diag d;
		diag_init(&d);
		Graph *g = t_parse(texts[k], &d);
		cr_assert(g != NULL && graph_verify(g, &d), "the model must check");
		Tensor *in = t_f32(2, DIMS(3, 2), F32S(1, 2, 3, 4, 5, 6));
		Tensor *out[1] = {NULL};
		bool ok = interp_run(g, &in, out, &d);
		cr_assert(!ok, "an out-of-range index must fail");
		cr_assert(diag_find(&d, msgs[k]) != NULL, "no error \"%s\"", msgs[k]);
		cr_assert(out[0] == NULL);
		tensor_free(in);
		graph_free(g);
		diag_free(&d);
	}
}

Test(shape, gather_rejects)
{
	expect_error("graph t {\n  input d : f32[3,2]\n  input i : f32[2]\n  y = gather(d, i)\n  output y\n}\n",
		     "gather: dtype mismatch: operand 2 ('i') is f32, expected i32, i64", "i)");
	expect_error("graph t {\n  input d : f32[3,2]\n  input i : i64[2]\n  y = gather(d, i, axis=2)\n  output y\n}\n",
		     "attribute 'axis' = 2 is out of range [-2, 1]", "axis=");
	expect_error("graph t {\n  input d : f32[]\n  input i : i64[2]\n  y = gather(d, i)\n  output y\n}\n",
		     "the operand has rank 0", "gather");
}

/* ---- expand ------------------------------------------------------------- */
Test(shape, expand_bidirectional)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[3,1] = [1,2,3]\n"
			 "  const b : bool[2] = [1,0]\n"
			 "  a = expand(x, shape=[2,1,6])\n" /* [3,1] vs [2,1,6] -> [2,3,6] */
			 "  c = expand(x, shape=[1])\n"     /* stays [3,1] */
			 "  d = expand(x, shape=[2])\n"     /* [3,2] */
			 "  e = expand(b, shape=[2,1])\n"   /* [2,2] */
			 "  f = expand(x, shape=[0,1,1])\n" /* [0,3,1] */
			 "  sf = shape(f)\n"
			 "  output a, c, d, e, sf\n}\n",
			 &g);
	t_assert_close(o[0], 3, DIMS(2, 3, 6),
		       F32S(1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3,
			    3, 3, 3, 3),
		       0, 0);
	t_assert_close(o[1], 2, DIMS(3, 1), F32S(1, 2, 3), 0, 0);
	t_assert_close(o[2], 2, DIMS(3, 2), F32S(1, 1, 2, 2, 3, 3), 0, 0);
	assert_bool(o[3], 2, DIMS(2, 2), (uint8_t[]){1, 0, 1, 0});
	t_assert_i64(o[4], 1, DIMS(3), I64S(0, 3, 1));
	done(g, o);
}

Test(shape, expand_rejects)
{
	expect_error("graph t {\n  input x : f32[3,2]\n  y = expand(x, shape=[4])\n  output y\n}\n",
		     "expand: shape mismatch: operand 1 ('x') is f32[3,2] and attribute 'shape' is [4]: not broadcastable",
		     "shape=");
	expect_error("graph t {\n  input x : f32[3]\n  y = expand(x, shape=[-1])\n  output y\n}\n",
		     "attribute 'shape' = -1 is out of range", "shape=");
}

/* ---- pad ---------------------------------------------------------------- */
Test(shape, pad_constant_and_negative)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[2,2] = [1,2,3,4]\n"
			 "  const y : f32[2,3] = [1,2,3,4,5,6]\n"
			 "  const z : i64[2] = [1,2]\n"
			 "  a = pad(x, pads=[1,0,0,1], value=9)\n"      /* row before, column after */
			 "  b = pad(y, pads=[0,-1,1,0])\n"              /* crop col 0, zero row after */
			 "  c = pad(y, pads=[1,1], axes=[-1], value=7)\n" /* one column each side */
			 "  d = pad(z, pads=[2,-1], value=-1)\n"        /* [-1,-1,1] */
			 "  e = pad(y, pads=[-1,-1,-1,-1])\n"           /* crop both ends of both axes */
			 "  f = pad(x, pads=[0,0,0,0])\n"
			 "  se = shape(e)\n"
			 "  output a, b, c, d, se, f\n}\n",
			 &g);
	/* [[9,9,9],[1,2,9],[3,4,9]] */
	t_assert_close(o[0], 2, DIMS(3, 3), F32S(9, 9, 9, 1, 2, 9, 3, 4, 9), 0, 0);
	/* [[2,3],[5,6],[0,0]] */
	t_assert_close(o[1], 2, DIMS(3, 2), F32S(2, 3, 5, 6, 0, 0), 0, 0);
	t_assert_close(o[2], 2, DIMS(2, 5), F32S(7, 1, 2, 3, 7, 7, 4, 5, 6, 7), 0, 0);
	t_assert_i64(o[3], 1, DIMS(3), I64S(-1, -1, 1));
	/* rows: 2 - 1 - 1 = 0 left; cols: 3 - 2 = 1: shape [0,1] */
	t_assert_i64(o[4], 1, DIMS(2), I64S(0, 1));
	t_assert_close(o[5], 2, DIMS(2, 2), F32S(1, 2, 3, 4), 0, 0);
	done(g, o);
}

Test(shape, pad_reflect_and_edge)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const y : f32[2,3] = [1,2,3,4,5,6]\n"
			 "  const r : f32[1,4] = [1,2,3,4]\n"
			 "  a = pad(y, pads=[0,2,0,1], mode=\"reflect\")\n"
			 "  b = pad(y, pads=[1,1,0,0], mode=\"edge\")\n"
			 "  c = pad(r, pads=[0,-1,0,2], mode=\"reflect\")\n" /* crop to [2,3,4], then reflect */
			 "  d = pad(y, pads=[1,0,1,0], mode=\"reflect\")\n"  /* rows: [r1, r0, r1, r0] */
			 "  e = pad(r, pads=[2,-3,0,2], mode=\"edge\")\n"    /* crop to [4]: rows 1+2, cols 1+2 */
			 "  output a, b, c, d, e\n}\n",
			 &g);
	/* row [1,2,3]: left -1 -> 2, -2 -> 3; right index 3 -> 2: [3,2,1,2,3,2] */
	t_assert_close(o[0], 2, DIMS(2, 6), F32S(3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5), 0, 0);
	/* row 0 repeated above, column 0 repeated on the left */
	t_assert_close(o[1], 2, DIMS(3, 4), F32S(1, 1, 2, 3, 1, 1, 2, 3, 4, 4, 5, 6), 0, 0);
	/* [2,3,4] + reflect 2 at the end: 3, 2 */
	t_assert_close(o[2], 2, DIMS(1, 5), F32S(2, 3, 4, 3, 2), 0, 0);
	t_assert_close(o[3], 2, DIMS(4, 3), F32S(4, 5, 6, 1, 2, 3, 4, 5, 6, 1, 2, 3), 0, 0);
	/* the single column [4] edge-padded by 2 to the right; rows: 2 copies above */
	t_assert_close(o[4], 2, DIMS(3, 3), F32S(4, 4, 4, 4, 4, 4, 4, 4, 4), 0, 0);
	done(g, o);
}

Test(shape, pad_rejects)
{
	/* reflecting needs pads < the size of the axis (3 here) */
	expect_error("graph t {\n  input y : f32[2,3]\n  z = pad(y, pads=[0,3,0,0], mode=\"reflect\")\n  output z\n}\n",
		     "pad: attribute 'pads' = [0,3,0,0]: mode \"reflect\" needs pads smaller than the size of the axis, "
		     "but axis 1 of operand 1 ('y') f32[2,3] has size 3 and is padded by 3 and 0",
		     "pads=");
	expect_error("graph t {\n  input y : f32[1,3]\n  z = pad(y, pads=[0,-2,0,1], mode=\"reflect\")\n  output z\n}\n",
		     "has size 1 after cropping and is padded by 0 and 1", "pads=");
	expect_error("graph t {\n  input y : f32[0,3]\n  z = pad(y, pads=[1,0,0,0], mode=\"edge\")\n  output z\n}\n",
		     "mode \"edge\" cannot pad axis 0 of operand 1 ('y') f32[0,3]: it is empty", "pads=");
	expect_error("graph t {\n  input y : f32[2,3]\n  z = pad(y, pads=[1,1])\n  output z\n}\n",
		     "attribute 'pads' = [1,1] has 2 entries, expected 4 (begin and end for each of 2 axes", "pads=");
	expect_error("graph t {\n  input y : f32[2,3]\n  z = pad(y, pads=[0,-2,0,-2])\n  output z\n}\n",
		     "attribute 'pads' = [0,-2,0,-2] crops more than the size 3 of axis 1", "pads=");
	expect_error("graph t {\n  input y : f32[2,3]\n  z = pad(y, pads=[1,1], axes=[1,-1])\n  output z\n}\n",
		     "attribute 'axes' = [1,-1] repeats axis 1", "axes=");
	expect_error("graph t {\n  input y : i64[2]\n  z = pad(y, pads=[1,1], value=0.5)\n  output z\n}\n",
		     "attribute 'value' = 0.5 is not a value of i64", "value=");
	expect_error("graph t {\n  input y : f32[2]\n  z = pad(y, pads=[1,1], mode=\"wrap\")\n  output z\n}\n",
		     "attribute 'mode' = \"wrap\" is not one of constant|reflect|edge", "mode=");
}

/* ---- shape -------------------------------------------------------------- */
Test(shape, shape_with_start_and_end)
{
	Graph *g;
	Tensor **o = run("graph t {\n" X234
			 "  const s : f32[] = [1]\n"
			 "  a = shape(x)\n"
			 "  b = shape(x, start=1)\n"
			 "  c = shape(x, start=-2, end=-1)\n" /* [1, 2) */
			 "  d = shape(x, start=-10, end=10)\n" /* clamped to [0, 3) */
			 "  e = shape(x, start=2, end=1)\n"    /* empty */
			 "  f = shape(s)\n"                    /* rank 0: empty */
			 "  h = shape(x, end=1)\n"
			 "  const k : i64[1] = [9]\n"
			 "  ek = concat(e, k, axis=0)\n" /* [] + [9] */
			 "  fk = concat(k, f, axis=0)\n"
			 "  output a, b, c, d, ek, fk, h\n}\n",
			 &g);
	t_assert_i64(o[0], 1, DIMS(3), I64S(2, 3, 4));
	t_assert_i64(o[1], 1, DIMS(2), I64S(3, 4));
	t_assert_i64(o[2], 1, DIMS(1), I64S(3));
	t_assert_i64(o[3], 1, DIMS(3), I64S(2, 3, 4));
	t_assert_i64(o[4], 1, DIMS(1), I64S(9));
	t_assert_i64(o[5], 1, DIMS(1), I64S(9));
	t_assert_i64(o[6], 1, DIMS(1), I64S(2));
	done(g, o);
}

/* ---- constant_of_shape -------------------------------------------------- */
Test(shape, constant_of_shape_dtypes)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  a = constant_of_shape(shape=[2,3], value=1.5)\n"
			 "  b = constant_of_shape(shape=[2], value=7, dtype=i64)\n"
			 "  c = constant_of_shape(shape=[])\n" /* scalar 0.0 */
			 "  d = constant_of_shape(shape=[3,0], value=2)\n"
			 "  e = constant_of_shape(shape=[2], value=-3, dtype=i32)\n"
			 "  f = constant_of_shape(shape=[2], value=1, dtype=bool)\n"
			 "  sd = shape(d)\n"
			 "  output a, b, c, sd, e, f\n}\n",
			 &g);
	t_assert_close(o[0], 2, DIMS(2, 3), F32S(1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f), 0, 0);
	t_assert_i64(o[1], 1, DIMS(2), I64S(7, 7));
	t_assert_close(o[2], 0, NULL, F32S(0), 0, 0);
	t_assert_i64(o[3], 1, DIMS(2), I64S(3, 0));
	assert_i32(o[4], 1, DIMS(2), (int32_t[]){-3, -3});
	assert_bool(o[5], 1, DIMS(2), (uint8_t[]){1, 1});
	done(g, o);
}

Test(shape, constant_of_shape_rejects)
{
	expect_error("graph t {\n  y = constant_of_shape(shape=[2], value=1.5, dtype=i64)\n  output y\n}\n",
		     "constant_of_shape: attribute 'value' = 1.5 is not a value of i64", "value=");
	expect_error("graph t {\n  y = constant_of_shape(shape=[2], value=2, dtype=bool)\n  output y\n}\n",
		     "attribute 'value' = 2 is not a bool (0 or 1)", "value=");
	expect_error("graph t {\n  y = constant_of_shape(shape=[2], value=3000000000, dtype=i32)\n  output y\n}\n",
		     "attribute 'value' = 3e+09 is not a value of i32", "value=");
	expect_error("graph t {\n  y = constant_of_shape(shape=[2], dtype=f16)\n  output y\n}\n",
		     "attribute 'dtype' = f16: no op supports that dtype yet", "dtype=");
	expect_error("graph t {\n  y = constant_of_shape(shape=[2,-1])\n  output y\n}\n",
		     "attribute 'shape' = -1 is out of range", "shape=");
	expect_error("graph t {\n  y = constant_of_shape(shape=[4294967296,4294967296])\n  output y\n}\n",
		     "the result shape [4294967296,4294967296] has too many elements", "constant_of_shape");
}

/* ---- single-op graphs through the builder API ---------------------------- */
Test(shape, builder_reshape_and_transpose)
{
	TensorType in = t_type(DT_F32, 2, DIMS(2, 3));
	Node *n;
	Graph *g = t_single_op(OP_RESHAPE, 1, &in, 1, &n);
	node_set_ints(n, "shape", I64S(3, 2), 2);
	t_verify_ok(g);
	cr_assert(shape_eq(&n->out[0]->type.shape, &(Shape){.rank = 2, .dim = {3, 2}}));
	graph_free(g);

	g = t_single_op(OP_TRANSPOSE, 1, &in, 1, &n);
	node_set_ints(n, "perm", I64S(1, 1), 2);
	t_verify_fails(g, "attribute 'perm' = [1,1] is not a permutation of 0..1");
	graph_free(g);

	g = t_single_op(OP_SPLIT, 1, &in, 2, &n);
	node_set_int(n, "axis", 1);
	node_set_ints(n, "split", I64S(2, 2), 2);
	t_verify_fails(g, "attribute 'split' = [2,2] does not sum to 3");
	graph_free(g);
}
