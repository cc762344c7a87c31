/* Shape rules and reference kernels of ops_logic.c (comparisons, NaN
 * comparing false; boolean logic; where and cast, with broadcasting) and
 * ops_activation.c.  Expected values are worked out by hand in the
 * comments. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"
#include "util.h"

static void assert_bools(const Tensor *got, int rank, const int64_t *dims, const uint8_t *want)
{
	Shape s = shape_make(rank, dims);
	cr_assert_eq(got->type.dtype, DT_BOOL, "dtype %s, expected bool", dtype_name(got->type.dtype));
	cr_assert(shape_eq(&got->type.shape, &s), "wrong shape");
	const uint8_t *g = got->data;
	for (int64_t i = 0; i < tensor_numel(got); i++)
		cr_assert_eq(g[i], want[i], "element %lld: got %d, expected %d", (long long)i, g[i], want[i]);
}

/* the model's outputs y0..yk, each compared with want[k] */
static Tensor **run(const char *model, Graph **g)
{
	*g = t_model(model);
	return t_run(*g, NULL);
}

/* a = [1, NaN, 3] against b = [[1], [2]] (broadcast to 2 x 3):
 *   row b=1: 1<1 0, NaN 0, 3<1 0 | row b=2: 1<2 1, NaN 0, 3<2 0 */
Test(logic, compare_f32_broadcast_nan)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const a : f32[3] = [1, nan, 3]\n"
			 "  const b : f32[2, 1] = [1, 2]\n"
			 "  lt = less(a, b)\n  le = less_equal(a, b)\n  gt = greater(a, b)\n"
			 "  ge = greater_equal(a, b)\n  eq = equal(a, b)\n"
			 "  output lt, le, gt, ge, eq\n}\n",
			 &g);
	int64_t d[] = {2, 3};
	assert_bools(o[0], 2, d, (uint8_t[]){0, 0, 0, 1, 0, 0});
	assert_bools(o[1], 2, d, (uint8_t[]){1, 0, 0, 1, 0, 0});
	assert_bools(o[2], 2, d, (uint8_t[]){0, 0, 1, 0, 0, 1});
	assert_bools(o[3], 2, d, (uint8_t[]){1, 0, 1, 0, 0, 1});
	assert_bools(o[4], 2, d, (uint8_t[]){1, 0, 0, 0, 0, 0});
	t_free_outputs(g, o);
	graph_free(g);
}

/* i64 beyond double precision: 2^53 + 1 and 2^53 differ, and compare so */
Test(logic, compare_i64_exact)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const a : i64[2] = [9007199254740993, -5]\n"
			 "  const b : i64[2] = [9007199254740992, -5]\n"
			 "  eq = equal(a, b)\n  gt = greater(a, b)\n  le = less_equal(a, b)\n"
			 "  output eq, gt, le\n}\n",
			 &g);
	int64_t d[] = {2};
	assert_bools(o[0], 1, d, (uint8_t[]){0, 1});
	assert_bools(o[1], 1, d, (uint8_t[]){1, 0});
	assert_bools(o[2], 1, d, (uint8_t[]){0, 1});
	t_free_outputs(g, o);
	graph_free(g);
}

/* truth tables: p = [0,0,1,1], q = [0,1,0,1] */
Test(logic, and_or_xor_not)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const p : bool[4] = [0, 0, 1, 1]\n"
			 "  const q : bool[4] = [0, 1, 0, 1]\n"
			 "  a = and(p, q)\n  o = or(p, q)\n  x = xor(p, q)\n  n = not(p)\n"
			 "  output a, o, x, n\n}\n",
			 &g);
	int64_t d[] = {4};
	assert_bools(o[0], 1, d, (uint8_t[]){0, 0, 0, 1});
	assert_bools(o[1], 1, d, (uint8_t[]){0, 1, 1, 1});
	assert_bools(o[2], 1, d, (uint8_t[]){0, 1, 1, 0});
	assert_bools(o[3], 1, d, (uint8_t[]){1, 1, 0, 0});
	t_free_outputs(g, o);
	graph_free(g);
}

/* where(c[2,1], x[3], y[]) : rows c=1 take x, c=0 take the scalar y */
Test(logic, where_broadcast)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const c : bool[2, 1] = [1, 0]\n"
			 "  const x : f32[3] = [1, 2, 3]\n"
			 "  const y : f32[] = [-1]\n"
			 "  const i : i64[3] = [7, 8, 9]\n"
			 "  const j : i64[2, 1] = [0, 1]\n"
			 "  w = where(c, x, y)\n  wi = where(c, i, j)\n"
			 "  output w, wi\n}\n",
			 &g);
	int64_t d[] = {2, 3};
	t_assert_close(o[0], 2, d, (float[]){1, 2, 3, -1, -1, -1}, 0, 0);
	t_assert_i64(o[1], 2, d, (int64_t[]){7, 8, 9, 1, 1, 1});
	t_free_outputs(g, o);
	graph_free(g);
}

/* f32 to integers truncates toward 0; to bool is != 0 (NaN true); i64 to
 * i32 wraps (2^32 + 5 -> 5, 2^31 -> -2^31); bool to f32 is 0 or 1 */
Test(logic, cast)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[5] = [2.7, -2.7, 0, -0.5, nan]\n"
			 "  const l : i64[3] = [4294967301, 2147483648, -1]\n"
			 "  const b : bool[2] = [1, 0]\n"
			 "  xi = cast(x, to=i64)\n  xb = cast(x, to=bool)\n  li = cast(l, to=i32)\n"
			 "  lf = cast(l, to=f32)\n  bf = cast(b, to=f32)\n"
			 "  output xi, xb, li, lf, bf\n}\n",
			 &g);
	cr_assert_eq(o[0]->type.dtype, DT_I64);
	const int64_t *xi = o[0]->data;
	cr_assert(xi[0] == 2 && xi[1] == -2 && xi[2] == 0 && xi[3] == 0, "got %lld %lld %lld %lld", (long long)xi[0],
		  (long long)xi[1], (long long)xi[2], (long long)xi[3]);
	assert_bools(o[1], 1, (int64_t[]){5}, (uint8_t[]){1, 1, 0, 1, 1});
	cr_assert_eq(o[2]->type.dtype, DT_I32);
	const int32_t *li = o[2]->data;
	cr_assert(li[0] == 5 && li[1] == INT32_MIN && li[2] == -1, "got %d %d %d", li[0], li[1], li[2]);
	t_assert_close(o[3], 1, (int64_t[]){3}, (float[]){4294967301.0f, 2147483648.0f, -1}, 0, 0);
	t_assert_close(o[4], 1, (int64_t[]){2}, (float[]){1, 0}, 0, 0);
	t_free_outputs(g, o);
	graph_free(g);
}

Test(logic, shape_rule_errors)
{
	static const struct {
		const char *body, *msg;
	} cases[] = {
		{"  input a : f32[3]\n  input b : i64[3]\n  y = less(a, b)\n", "dtype mismatch"},
		{"  input a : f32[3]\n  input b : f32[3]\n  y = and(a, b)\n", "operand 1"},
		{"  input a : bool[3]\n  input b : bool[2]\n  y = or(a, b)\n", "not broadcastable"},
		{"  input c : f32[3]\n  input x : f32[3]\n  y = where(c, x, x)\n", "operand 1"},
		{"  input c : bool[3]\n  input x : f32[3]\n  input z : i64[3]\n  y = where(c, x, z)\n", "dtype mismatch"},
		{"  input a : bool[3]\n  input b : bool[3]\n  y = less(a, b)\n", "operand 1"},
		{"  input x : f32[3]\n  y = cast(x)\n", "to"},
		{"  input x : f32[3]\n  y = cast(x, to=i8)\n", "not supported"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[512];
		snprintf(text, sizeof text, "graph t {\n%s  output y\n}\n", cases[i].body);
		Diag d;
		t_expect_errors(text, &d);
		bool found = false;
		for (int k = 0; k < d.n; k++)
			found |= strstr(d.entries[k].msg, cases[i].msg) != NULL;
		cr_assert(found, "case %zu: no error containing '%s'", i, cases[i].msg);
		diag_free(&d);
	}
}

/* ---- ops_activation.c: textbook values ----------------------------------- */
/* y = EXPR over x : f32[n] */
static void unary_case(const char *expr, int n, const float *x, const float *want, double rtol)
{
	char model[256];
	snprintf(model, sizeof model, "graph t {\n  input x : f32[%d]\n  y = %s\n  output y\n}\n", n, expr);
	Graph *g = t_model(model);
	Tensor *in[] = {t_f32(1, (int64_t[]){n}, x)};
	Tensor **o = t_run(g, in);
	t_assert_close(o[0], 1, (int64_t[]){n}, want, rtol, 1e-7);
	t_free_outputs(g, o);
	graph_free(g);
	tensor_free(in[0]);
}

/* elu(-1) = e^-1 - 1 = -0.63212056; selu(-1) = 1.05070102 * 1.67326324 *
 * (e^-1 - 1) = -1.11133074; celu(-1, alpha 2) = 2 (e^-0.5 - 1) =
 * -0.78693868; softplus(0) = ln 2, softplus(100) = 100 (no overflow) */
Test(activation, exponential_family)
{
	unary_case("elu(x)", 2, (float[]){-1, 3}, (float[]){-0.63212056f, 3}, 1e-6);
	unary_case("selu(x)", 2, (float[]){-1, 1}, (float[]){-1.11133074f, 1.05070102f}, 1e-6);
	unary_case("celu(x, alpha=2)", 2, (float[]){-1, 1}, (float[]){-0.78693868f, 1}, 1e-6);
	unary_case("softplus(x)", 3, (float[]){0, 100, -100}, (float[]){0.69314718f, 100, 3.72007598e-44f}, 1e-6);
}

/* softsign(3) = 0.75; thresholded_relu keeps x > alpha only; shrink with
 * lambd 0.5, bias 0.25: -2 -> -1.75, 0.3 -> 0, 2 -> 1.75; sign keeps 0 */
Test(activation, piecewise)
{
	unary_case("softsign(x)", 2, (float[]){3, -1}, (float[]){0.75f, -0.5f}, 1e-7);
	unary_case("thresholded_relu(x)", 3, (float[]){0.5f, 1, 2}, (float[]){0, 0, 2}, 0);
	unary_case("shrink(x, lambd=0.5, bias=0.25)", 3, (float[]){-2, 0.3f, 2}, (float[]){-1.75f, 0, 1.75f}, 0);
	unary_case("sign(x)", 3, (float[]){-3, 0, 0.1f}, (float[]){-1, 0, 1}, 0);
}

/* floor and ceil toward -inf / +inf; round halves to even: 2.5 -> 2,
 * -0.5 -> -0, 1.5 -> 2; 2^23 + 1 stays (no x - 0.5 trick) */
Test(activation, rounding)
{
	unary_case("floor(x)", 4, (float[]){-1.5f, 1.5f, 8388609, -0.25f}, (float[]){-2, 1, 8388609, -1}, 0);
	unary_case("ceil(x)", 4, (float[]){-1.5f, 1.5f, 8388609, -0.25f}, (float[]){-1, 2, 8388609, 0}, 0);
	unary_case("round(x)", 4, (float[]){2.5f, -0.5f, 1.5f, -2.7f}, (float[]){2, 0, 2, -3}, 0);
}

/* sinh 1 = 1.17520119, cosh 1 = 1.54308063, asinh 1 = 0.88137359,
 * acosh 2 = 1.31695790, atanh 0.5 = 0.54930614 */
Test(activation, hyperbolic)
{
	unary_case("sinh(x)", 1, (float[]){1}, (float[]){1.17520119f}, 1e-6);
	unary_case("cosh(x)", 1, (float[]){1}, (float[]){1.54308063f}, 1e-6);
	unary_case("asinh(x)", 2, (float[]){1, -1}, (float[]){0.88137359f, -0.88137359f}, 1e-6);
	unary_case("acosh(x)", 2, (float[]){2, 0.5f}, (float[]){1.31695790f, NAN}, 1e-6);
	unary_case("atanh(x)", 1, (float[]){0.5f}, (float[]){0.54930614f}, 1e-6);
}

/* prelu(-2, 0.25) = -0.5 with a per-column slope; mean(1, 2, 6) = 3;
 * isnan and isinf (positive only) of [nan, inf, -inf, 1] */
Test(activation, prelu_mean_isnan)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[2, 2] = [-2, 3, -4, -1]\n"
			 "  const s : f32[2] = [0.25, 2]\n"
			 "  const a : f32[] = [1]\n"
			 "  const b : f32[2] = [2, 4]\n"
			 "  const c : f32[2] = [6, 0]\n"
			 "  const v : f32[4] = [nan, inf, -inf, 1]\n"
			 "  p = prelu(x, s)\n  m = mean(a, b, c)\n  n = isnan(v)\n  i = isinf(v, detect_negative=0)\n"
			 "  output p, m, n, i\n}\n",
			 &g);
	t_assert_close(o[0], 2, (int64_t[]){2, 2}, (float[]){-0.5f, 3, -1, -2}, 0, 0);
	t_assert_close(o[1], 1, (int64_t[]){2}, (float[]){3, 5.0f / 3}, 1e-7, 0);
	assert_bools(o[2], 1, (int64_t[]){4}, (uint8_t[]){1, 0, 0, 0});
	assert_bools(o[3], 1, (int64_t[]){4}, (uint8_t[]){0, 1, 0, 0});
	t_free_outputs(g, o);
	graph_free(g);
}

/* ---- ops_index.c ---------------------------------------------------------- */
/* x = [[3, 1, 3], [0, 5, 5]]: argmax per row 0, 1 (first) and 2, 2 (last);
 * argmin per row 1, 0; along axis 0 (columns [3, 0], [1, 5], [3, 5]):
 * argmax 0, 1, 1 */
Test(index, argmax_argmin)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[2, 3] = [3, 1, 3, 0, 5, 5]\n"
			 "  a = argmax(x, axis=1, keepdims=0)\n  l = argmax(x, axis=1, keepdims=0, select_last_index=1)\n"
			 "  m = argmin(x, axis=-1)\n  c = argmax(x)\n"
			 "  output a, l, m, c\n}\n",
			 &g);
	t_assert_i64(o[0], 1, (int64_t[]){2}, (int64_t[]){0, 1});
	t_assert_i64(o[1], 1, (int64_t[]){2}, (int64_t[]){2, 2});
	t_assert_i64(o[2], 2, (int64_t[]){2, 1}, (int64_t[]){1, 0});
	t_assert_i64(o[3], 2, (int64_t[]){1, 3}, (int64_t[]){0, 1, 1});
	t_free_outputs(g, o);
	graph_free(g);
}

/* trilu of a 3 x 3 ramp: upper k=1 keeps j >= i + 1; lower k=-1 keeps
 * j <= i - 1; range 5, 3, 1 (negative delta); size 9; tile [1, 2] of
 * [[1, 2]] twice: [[1, 2, 1, 2]]; hardmax of [1, 3, 3] is [0, 1, 0] */
Test(index, trilu_range_size_tile_hardmax)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[3, 3] = [1, 2, 3, 4, 5, 6, 7, 8, 9]\n"
			 "  const p : f32[1, 2] = [1, 2]\n"
			 "  const h : f32[3] = [1, 3, 3]\n"
			 "  u = trilu(x, k=1)\n  l = trilu(x, upper=0, k=-1)\n"
			 "  r = range(start=5, limit=0, delta=-2, dtype=i64)\n  s = size(x)\n"
			 "  t = tile(p, repeats=[1, 2])\n  m = hardmax(h)\n"
			 "  output u, l, r, s, t, m\n}\n",
			 &g);
	t_assert_close(o[0], 2, (int64_t[]){3, 3}, (float[]){0, 2, 3, 0, 0, 6, 0, 0, 0}, 0, 0);
	t_assert_close(o[1], 2, (int64_t[]){3, 3}, (float[]){0, 0, 0, 4, 0, 0, 7, 8, 0}, 0, 0);
	t_assert_i64(o[2], 1, (int64_t[]){3}, (int64_t[]){5, 3, 1});
	t_assert_i64(o[3], 0, NULL, (int64_t[]){9});
	t_assert_close(o[4], 2, (int64_t[]){1, 4}, (float[]){1, 2, 1, 2}, 0, 0);
	t_assert_close(o[5], 1, (int64_t[]){3}, (float[]){0, 1, 0}, 0, 0);
	t_free_outputs(g, o);
	graph_free(g);
}

/* gather_elements along axis 1 of [[1, 2], [3, 4]] with [[0, 0], [1, -2]]:
 * [[1, 1], [4, 3]]; an index of 2 is a run-time error */
Test(index, gather_elements)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const x : f32[2, 2] = [1, 2, 3, 4]\n"
			 "  const i : i64[2, 2] = [0, 0, 1, -2]\n"
			 "  y = gather_elements(x, i, axis=1)\n"
			 "  output y\n}\n",
			 &g);
	t_assert_close(o[0], 2, (int64_t[]){2, 2}, (float[]){1, 1, 4, 3}, 0, 0);
	t_free_outputs(g, o);
	graph_free(g);
}

/* sin(pi/6) = 0.5, cos(pi/3) = 0.5, tan(pi/4) = 1, asin(0.5) = pi/6 =
 * 0.52359878, acos(0.5) = pi/3 = 1.04719755, atan(1) = pi/4 = 0.78539816,
 * asin(2) = NaN */
Test(activation, trigonometric)
{
	unary_case("sin(x)", 2, (float[]){0.52359878f, -3.14159265f}, (float[]){0.5f, 0}, 1e-6);
	unary_case("cos(x)", 1, (float[]){1.04719755f}, (float[]){0.5f}, 1e-6);
	unary_case("tan(x)", 1, (float[]){0.78539816f}, (float[]){1}, 1e-6);
	unary_case("asin(x)", 2, (float[]){0.5f, 2}, (float[]){0.52359878f, NAN}, 1e-6);
	unary_case("acos(x)", 1, (float[]){0.5f}, (float[]){1.04719755f}, 1e-6);
	unary_case("atan(x)", 2, (float[]){1, -1e30f}, (float[]){0.78539816f, -1.57079633f}, 1e-6);
}

/* one_hot of [1, -1] with depth 3 and values [0, 5]: [[0, 5, 0], [0, 0, 5]];
 * eye_like of a 2 x 3 with k = 1: [[0, 1, 0], [0, 0, 1]]; depth_to_space
 * of channels [a, b, c, d] (1 x 1 each), blocksize 2: DCR [[a, b], [c, d]],
 * CRD the same for one output channel; space_to_depth undoes DCR */
Test(index, one_hot_eye_like_depth_to_space)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const i : i64[2] = [1, -1]\n"
			 "  const v : f32[2] = [0, 5]\n"
			 "  const m : f32[2, 3] = zeros\n"
			 "  const x : f32[1, 4, 1, 1] = [1, 2, 3, 4]\n"
			 "  const z : f32[1, 8, 1, 1] = [1, 2, 3, 4, 5, 6, 7, 8]\n"
			 "  h = one_hot(i, v, depth=3)\n  e = eye_like(m, k=1)\n  d = depth_to_space(x, blocksize=2)\n"
			 "  dc = depth_to_space(z, blocksize=2, mode=\"CRD\")\n  dd = depth_to_space(z, blocksize=2)\n"
			 "  s = space_to_depth(d, blocksize=2)\n"
			 "  output h, e, d, dc, dd, s\n}\n",
			 &g);
	t_assert_close(o[0], 2, (int64_t[]){2, 3}, (float[]){0, 5, 0, 0, 0, 5}, 0, 0);
	t_assert_close(o[1], 2, (int64_t[]){2, 3}, (float[]){0, 1, 0, 0, 0, 1}, 0, 0);
	t_assert_close(o[2], 4, (int64_t[]){1, 1, 2, 2}, (float[]){1, 2, 3, 4}, 0, 0);
	/* 8 channels, 2 out: CRD: out channel c takes 4c .. 4c + 3; DCR: out
	 * channel c takes c, c + 2, c + 4, c + 6 */
	t_assert_close(o[3], 4, (int64_t[]){1, 2, 2, 2}, (float[]){1, 2, 3, 4, 5, 6, 7, 8}, 0, 0);
	t_assert_close(o[4], 4, (int64_t[]){1, 2, 2, 2}, (float[]){1, 3, 5, 7, 2, 4, 6, 8}, 0, 0);
	t_assert_close(o[5], 4, (int64_t[]){1, 4, 1, 1}, (float[]){1, 2, 3, 4}, 0, 0);
	t_free_outputs(g, o);
	graph_free(g);
}

/* mod: -7 mod 3 = 2 (the divisor's sign), fmod: -1 (the dividend's);
 * f32 fmod(5.5, -2) = 1.5; scatter_nd of rows 2 and 0 of a 3 x 2 zeros:
 * [[3, 4], [0, 0], [1, 2]] */
Test(index, mod_scatter_nd)
{
	Graph *g;
	Tensor **o = run("graph t {\n"
			 "  const a : i64[2] = [-7, 7]\n"
			 "  const b : i64[2] = [3, -3]\n"
			 "  const f : f32[1] = [5.5]\n"
			 "  const h : f32[1] = [-2]\n"
			 "  const z : f32[3, 2] = zeros\n"
			 "  const i : i64[2, 1] = [2, 0]\n"
			 "  const u : f32[2, 2] = [1, 2, 3, 4]\n"
			 "  m = mod(a, b)\n  c = mod(a, b, fmod=1)\n  q = mod(f, h, fmod=1)\n  s = scatter_nd(z, i, u)\n"
			 "  output m, c, q, s\n}\n",
			 &g);
	t_assert_i64(o[0], 1, (int64_t[]){2}, (int64_t[]){2, -2});
	t_assert_i64(o[1], 1, (int64_t[]){2}, (int64_t[]){-1, 1});
	t_assert_close(o[2], 1, (int64_t[]){1}, (float[]){1.5f}, 0, 0);
	t_assert_close(o[3], 2, (int64_t[]){3, 2}, (float[]){3, 4, 0, 0, 1, 2}, 0, 0);
	t_free_outputs(g, o);
	graph_free(g);
}
