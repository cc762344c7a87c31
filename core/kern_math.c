/* The transcendental expansions, as Loop IR in vector code: exp_poly,
 * log_poly, tanh_exp, sigmoid_exp, erf_poly, gelu, pow_exp_log, trig_poly,
 * atan_poly.  Each
 * takes and returns v temporaries of the kernel being built; in scalar
 * context the lowering computes them on broadcasts (lir.h). */
#include "cg.h"

#undef R
#undef K
#undef OPV
#define R(t) lir_ref(k, (t))
#define K(x) lir_constf(k, (x))
#define OPV(op, a, b) lir_op(k, (op), (a), (b), NULL)

/* A value kept in a temporary: trees are trees, so a value used twice is
 * assigned first. */
static int keep(LirKernel *k, LirExpr *e)
{
	int t = lir_temp(k, SORT_V);
	lir_assign(k, t, e);
	return t;
}

/* ---- transcendental functions (vector code, exp_poly and friends) -------------- */

/* exp(x), Cody-Waite range reduction by ln 2 and the Cephes expf
 * polynomial on [-ln2/2, ln2/2]; relative error below 2e-7 over
 * [-87.3, 88.7] (inputs are clamped there: exp underflows to ~1e-38 and
 * overflows to ~1.7e38 instead of 0 and inf). */
int lm_exp(LirKernel *k, int x)
{
	int xc = keep(k, OPV(SEL_MIN_V, OPV(SEL_MAX_V, R(x), K(-87.33654)), K(88.72283)));
	int fx = keep(k, lir_op(k, SEL_ROUND_V, OPV(SEL_MUL_V, R(xc), K(1.44269504088896341)), NULL, NULL));
	/* r = x - fx * ln2, in two parts (0.693359375 is exact in f32) */
	int r = keep(k, lir_op(k, SEL_FMA_V, R(fx), K(-0.693359375), R(xc)));
	r = keep(k, lir_op(k, SEL_FMA_V, R(fx), K(2.12194440e-4), R(r)));
	static const double p[] = {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
				   1.6666665459e-1, 5.0000001201e-1};
	LirExpr *y = K(p[0]);
	for (int i = 1; i < 6; i++)
		y = lir_op(k, SEL_FMA_V, y, R(r), K(p[i]));
	int yv = keep(k, y);
	int z = keep(k, OPV(SEL_MUL_V, R(r), R(r)));
	/* y * z + r + 1 */
	LirExpr *e = OPV(SEL_ADD_V, lir_op(k, SEL_FMA_V, R(yv), R(z), R(r)), K(1.0));
	/* 2^fx: the exponent field (fx + 127) << 23 */
	LirExpr *n = lir_op(k, SEL_CVT_V_W, OPV(SEL_ADD_V, R(fx), K(127.0)), NULL, NULL);
	LirExpr *pow2 = lir_op(k, SEL_BITS_W_V, OPV(SEL_SHL_W, n, lir_consti(k, 23)), NULL, NULL);
	return keep(k, OPV(SEL_MUL_V, e, pow2));
}

/* log(x): x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s),
 * s = (m - 1) / (m + 1), |s| < 0.172, by its series to s^11 (relative
 * error below 1e-7); subnormals are scaled first; log 0 = -inf, log of a
 * negative number = nan, log inf = inf, log nan = nan. */
int lm_log(LirKernel *k, int x)
{
	LirExpr *tiny = lir_op(k, SEL_CMPLT_V, R(x), K(1.17549435e-38), NULL);
	int xs = keep(k, lir_op(k, SEL_SELECT_V, tiny, OPV(SEL_MUL_V, R(x), K(8388608.0)), R(x)));
	int eadj = keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, R(x), K(1.17549435e-38), NULL), K(-23.0), K(0.0)));
	LirExpr *ew = OPV(SEL_ADD_W, OPV(SEL_SHR_W, lir_op(k, SEL_BITS_V_W, R(xs), NULL, NULL), lir_consti(k, 23)), lir_constw(k, -127));
	int e = keep(k, OPV(SEL_ADD_V, lir_op(k, SEL_CVT_W_V, ew, NULL, NULL), R(eadj)));
	LirExpr *mw = OPV(SEL_OR_W, OPV(SEL_AND_W, lir_op(k, SEL_BITS_V_W, R(xs), NULL, NULL), lir_constw(k, 0x007fffff)),
			   lir_constw(k, 0x3f800000));
	int m = keep(k, lir_op(k, SEL_BITS_W_V, mw, NULL, NULL));
	int big = lir_temp(k, SORT_M);
	lir_assign(k, big, lir_op(k, SEL_CMPLT_V, K(1.41421356), R(m), NULL));
	int m2 = keep(k, lir_op(k, SEL_SELECT_V, R(big), OPV(SEL_MUL_V, R(m), K(0.5)), R(m)));
	int e2 = keep(k, lir_op(k, SEL_SELECT_V, R(big), OPV(SEL_ADD_V, R(e), K(1.0)), R(e)));
	int sv = keep(k, OPV(SEL_DIV_V, OPV(SEL_SUB_V, R(m2), K(1.0)), OPV(SEL_ADD_V, R(m2), K(1.0))));
	int s2 = keep(k, OPV(SEL_MUL_V, R(sv), R(sv)));
	LirExpr *pl = K(1.0 / 11.0);
	static const double q[] = {1.0 / 9.0, 1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0};
	for (int i = 0; i < 4; i++)
		pl = lir_op(k, SEL_FMA_V, pl, R(s2), K(q[i]));
	int p2 = keep(k, OPV(SEL_MUL_V, pl, R(s2)));
	/* 2 (s + s p) + e ln2 */
	int lm = keep(k, OPV(SEL_MUL_V, lir_op(k, SEL_FMA_V, R(sv), R(p2), R(sv)), K(2.0)));
	int y = keep(k, lir_op(k, SEL_FMA_V, R(e2), K(0.69314718055994531), R(lm)));
	/* x == 0: -inf; x < 0: nan; x = +inf or nan: x itself (every compare
	 * with nan is false) */
	int z = keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLE_V, R(x), K(0.0), NULL), K(-INFINITY), R(y)));
	int w = keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, R(x), K(0.0), NULL), K(NAN), R(z)));
	return keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, R(x), K(INFINITY), NULL), R(w), R(x)));
}

/* pow(a, b) as C's pow: |a|^b = exp(b log |a|); a negative base takes an
 * integer exponent's sign, else gives nan; b = 0 gives 1. */
int lm_pow(LirKernel *k, int a, int b)
{
	int la = lm_log(k, keep(k, lir_op(k, SEL_ABS_V, R(a), NULL, NULL)));
	int mag = lm_exp(k, keep(k, OPV(SEL_MUL_V, R(b), R(la))));
	int rb = keep(k, lir_op(k, SEL_ROUND_V, R(b), NULL, NULL));
	int hb = keep(k, OPV(SEL_MUL_V, R(b), K(0.5)));
	int rh = keep(k, lir_op(k, SEL_ROUND_V, R(hb), NULL, NULL));
	/* (one select per tree: a target may have a single mask register) */
	/* odd integer exponent: round(b / 2) != b / 2 */
	int neg = keep(k, lir_op(k, SEL_NEG_V, R(mag), NULL, NULL));
	int odd1 = keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, R(hb), R(rh), NULL), R(neg), R(mag)));
	int odd = keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, R(rh), R(hb), NULL), R(neg), R(odd1)));
	/* an integer exponent: round(b) == b */
	int ib1 = keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, R(b), R(rb), NULL), K(NAN), R(odd)));
	int ib = keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, R(rb), R(b), NULL), K(NAN), R(ib1)));
	int y = keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, R(a), K(0.0), NULL), R(ib), R(mag)));
	/* b == 0: 1 */
	int y1 = keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, K(0.0), R(b), NULL), R(y), K(1.0)));
	return keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, R(b), K(0.0), NULL), R(y), R(y1)));
}

/* 1 / (1 + exp(-x)) */
static int sigmoid_v(LirKernel *k, int x)
{
	int e = lm_exp(k, keep(k, lir_op(k, SEL_NEG_V, R(x), NULL, NULL)));
	return keep(k, OPV(SEL_DIV_V, K(1.0), OPV(SEL_ADD_V, K(1.0), R(e))));
}

/* Near zero, where a formula loses relative accuracy: the odd series
 * x (c0 + c1 x^2 + c2 x^4 + c3 x^6), chosen for |x| < 0.1. */
static int small_odd(LirKernel *k, int x, int formula, const double *cf)
{
	int x2 = keep(k, OPV(SEL_MUL_V, R(x), R(x)));
	LirExpr *p = lir_op(k, SEL_FMA_V, lir_op(k, SEL_FMA_V, lir_op(k, SEL_FMA_V, K(cf[3]), R(x2), K(cf[2])), R(x2), K(cf[1])),
			     R(x2), K(cf[0]));
	int series = keep(k, OPV(SEL_MUL_V, p, R(x)));
	LirExpr *small = lir_op(k, SEL_CMPLT_V, lir_op(k, SEL_ABS_V, R(x), NULL, NULL), K(0.1), NULL);
	return keep(k, lir_op(k, SEL_SELECT_V, small, R(series), R(formula)));
}

/* tanh x = 2 sigmoid(2x) - 1, and its series near 0 (relative error
 * below 1e-6 everywhere). */
static int tanh_v(LirKernel *k, int x)
{
	int s = sigmoid_v(k, keep(k, OPV(SEL_MUL_V, R(x), K(2.0))));
	int t = keep(k, lir_op(k, SEL_FMA_V, R(s), K(2.0), K(-1.0)));
	static const double cf[] = {1.0, -1.0 / 3.0, 2.0 / 15.0, -17.0 / 315.0};
	return small_odd(k, x, t, cf);
}

/* erf, Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7), and its series
 * near 0 for relative accuracy there. */
static int erf_v(LirKernel *k, int x)
{
	int ax = keep(k, lir_op(k, SEL_ABS_V, R(x), NULL, NULL));
	int t = keep(k, OPV(SEL_DIV_V, K(1.0), lir_op(k, SEL_FMA_V, R(ax), K(0.3275911), K(1.0))));
	static const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
	LirExpr *pl = K(a[0]);
	for (int i = 1; i < 5; i++)
		pl = lir_op(k, SEL_FMA_V, pl, R(t), K(a[i]));
	int poly = keep(k, OPV(SEL_MUL_V, pl, R(t)));
	int e = lm_exp(k, keep(k, lir_op(k, SEL_NEG_V, OPV(SEL_MUL_V, R(ax), R(ax)), NULL, NULL)));
	int y = keep(k, OPV(SEL_SUB_V, K(1.0), OPV(SEL_MUL_V, R(poly), R(e))));
	/* the sign of x */
	LirExpr *neg = lir_op(k, SEL_CMPLT_V, R(x), K(0.0), NULL);
	int r = keep(k, lir_op(k, SEL_SELECT_V, neg, lir_op(k, SEL_NEG_V, R(y), NULL, NULL), R(y)));
	/* near 0: 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42) */
	static const double s = 1.1283791670955126;
	static const double cf[] = {s, -s / 3.0, s / 10.0, -s / 42.0};
	return small_odd(k, x, r, cf);
}

static int gelu_v(LirKernel *k, const Node *n, int x)
{
	int inner;
	if (strcmp(attr_s(n, "approximate"), "tanh") == 0) {
		/* tanh(sqrt(2/pi) (x + 0.044715 x^3)) */
		int x3 = keep(k, OPV(SEL_MUL_V, OPV(SEL_MUL_V, R(x), R(x)), R(x)));
		int u = keep(k, OPV(SEL_MUL_V, lir_op(k, SEL_FMA_V, R(x3), K(0.044715), R(x)), K(0.7978845608028654)));
		inner = tanh_v(k, u);
	} else {
		inner = erf_v(k, keep(k, OPV(SEL_MUL_V, R(x), K(0.7071067811865476))));
	}
	return keep(k, OPV(SEL_MUL_V, OPV(SEL_MUL_V, R(x), K(0.5)), OPV(SEL_ADD_V, R(inner), K(1.0))));
}

/* A transcendental op of x (a v temporary): the temporary holding it. */
/* sin, cos or tan of x: j = round(x 2/pi), r = x - j pi/2 in three parts
 * (Cody-Waite; accurate for |x| up to about 1e4), the sine and cosine
 * polynomials on [-pi/4, pi/4] (Taylor to r^9 and r^8: relative error near
 * 1e-7), the quadrant q = j (+1 for cos) choosing cos(r) for odd q and the
 * sign by q & 2; tan is sin(r) / cos(r) or -cos(r) / sin(r). */
static int trig_v(LirKernel *k, OpKind op, int x)
{
	int j = keep(k, lir_op(k, SEL_ROUND_V, OPV(SEL_MUL_V, R(x), K(0.63661977236758134)), NULL, NULL));
	int r = keep(k, lir_op(k, SEL_FMA_V, R(j), K(-1.5703125), R(x)));
	r = keep(k, lir_op(k, SEL_FMA_V, R(j), K(-4.837512969970703125e-4), R(r)));
	r = keep(k, lir_op(k, SEL_FMA_V, R(j), K(-7.54978995489188216e-8), R(r)));
	int r2 = keep(k, OPV(SEL_MUL_V, R(r), R(r)));
	/* sin r = r + r^3 (-1/6 + r^2 (1/120 + r^2 (-1/5040 + r^2 / 362880))) */
	LirExpr *ps = lir_op(k, SEL_FMA_V, K(1.0 / 362880.0), R(r2), K(-1.0 / 5040.0));
	ps = lir_op(k, SEL_FMA_V, ps, R(r2), K(1.0 / 120.0));
	ps = lir_op(k, SEL_FMA_V, ps, R(r2), K(-1.0 / 6.0));
	int sr = keep(k, lir_op(k, SEL_FMA_V, OPV(SEL_MUL_V, ps, R(r2)), R(r), R(r)));
	/* cos r = 1 + r^2 (-1/2 + r^2 (1/24 + r^2 (-1/720 + r^2 / 40320))) */
	LirExpr *pc = lir_op(k, SEL_FMA_V, K(1.0 / 40320.0), R(r2), K(-1.0 / 720.0));
	pc = lir_op(k, SEL_FMA_V, pc, R(r2), K(1.0 / 24.0));
	pc = lir_op(k, SEL_FMA_V, pc, R(r2), K(-0.5));
	int cr = keep(k, lir_op(k, SEL_FMA_V, pc, R(r2), K(1.0)));
	/* the quadrant's bits as 0.0 or 1.0 */
	LirExpr *q = lir_op(k, SEL_CVT_V_W, op == OP_COS ? OPV(SEL_ADD_V, R(j), K(1.0)) : R(j), NULL, NULL);
	int qw = lir_temp(k, SORT_W);
	lir_assign(k, qw, q);
	int odd = keep(k, lir_op(k, SEL_CVT_W_V, OPV(SEL_AND_W, R(qw), lir_constw(k, 1)), NULL, NULL));
	int oddm = lir_temp(k, SORT_M);
	lir_assign(k, oddm, lir_op(k, SEL_CMPLT_V, K(0.5), R(odd), NULL));
	if (op == OP_TAN) {
		int t1 = keep(k, OPV(SEL_DIV_V, R(sr), R(cr)));
		int t2 = keep(k, OPV(SEL_DIV_V, OPV(SEL_SUB_V, K(0.0), R(cr)), R(sr)));
		return keep(k, lir_op(k, SEL_SELECT_V, R(oddm), R(t2), R(t1)));
	}
	int v = keep(k, lir_op(k, SEL_SELECT_V, R(oddm), R(cr), R(sr)));
	int two = keep(k, lir_op(k, SEL_CVT_W_V, OPV(SEL_AND_W, R(qw), lir_constw(k, 2)), NULL, NULL));
	/* q & 2: negated (sign 1 - 2 (q & 2) / 2) */
	return keep(k, OPV(SEL_MUL_V, R(v), lir_op(k, SEL_FMA_V, R(two), K(-1.0), K(1.0))));
}

/* atan, asin, acos.  atan(x): a = |x| reduced to [0, tan(pi/8)] (a >
 * tan(3pi/8): pi/2 + atan(-1/a); a > tan(pi/8): pi/4 + atan((a - 1) / (a +
 * 1))), the Cephes atanf polynomial, the sign of x; asin(x) = atan(x /
 * sqrt((1 - x)(1 + x))) (|x| = 1: pi/2, |x| > 1: nan); acos(x) = pi/2 -
 * asin(x). */
static int atan_v(LirKernel *k, int x)
{
	int a = keep(k, lir_op(k, SEL_ABS_V, R(x), NULL, NULL));
	int mid = lir_temp(k, SORT_M);
	lir_assign(k, mid, lir_op(k, SEL_CMPLT_V, K(0.41421356237309503), R(a), NULL));
	int t = keep(k, lir_op(k, SEL_SELECT_V, R(mid), OPV(SEL_DIV_V, OPV(SEL_SUB_V, R(a), K(1.0)), OPV(SEL_ADD_V, R(a), K(1.0))),
			      R(a)));
	int yb = keep(k, lir_op(k, SEL_SELECT_V, R(mid), K(0.78539816339744831), K(0.0)));
	int big = lir_temp(k, SORT_M);
	lir_assign(k, big, lir_op(k, SEL_CMPLT_V, K(2.4142135623730950), R(a), NULL));
	t = keep(k, lir_op(k, SEL_SELECT_V, R(big), OPV(SEL_DIV_V, K(-1.0), R(a)), R(t)));
	yb = keep(k, lir_op(k, SEL_SELECT_V, R(big), K(1.5707963267948966), R(yb)));
	int z = keep(k, OPV(SEL_MUL_V, R(t), R(t)));
	LirExpr *p = lir_op(k, SEL_FMA_V, K(8.05374449538e-2), R(z), K(-1.38776856032e-1));
	p = lir_op(k, SEL_FMA_V, p, R(z), K(1.99777106478e-1));
	p = lir_op(k, SEL_FMA_V, p, R(z), K(-3.33329491539e-1));
	int pr = keep(k, OPV(SEL_ADD_V, R(yb), lir_op(k, SEL_FMA_V, OPV(SEL_MUL_V, p, R(z)), R(t), R(t))));
	return keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, R(x), K(0.0), NULL), OPV(SEL_SUB_V, K(0.0), R(pr)), R(pr)));
}

static int asin_v(LirKernel *k, OpKind op, int x)
{
	LirExpr *d = lir_op(k, SEL_SQRT_V, OPV(SEL_MUL_V, OPV(SEL_SUB_V, K(1.0), R(x)), OPV(SEL_ADD_V, K(1.0), R(x))), NULL, NULL);
	int as = atan_v(k, keep(k, OPV(SEL_DIV_V, R(x), d)));
	return op == OP_ASIN ? as : keep(k, OPV(SEL_SUB_V, K(1.5707963267948966), R(as)));
}

int lm_transcendental(LirKernel *k, const Node *n, int xv)
{
	switch (n->op) {
	case OP_EXP: return lm_exp(k, xv);
	case OP_SIGMOID: return sigmoid_v(k, xv);
	case OP_TANH: return tanh_v(k, xv);
	case OP_ERF: return erf_v(k, xv);
	case OP_GELU: return gelu_v(k, n, xv);
	case OP_LEAKY_RELU:
		return keep(k, lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, R(xv), K(0.0), NULL),
				      OPV(SEL_MUL_V, R(xv), K(attr_f(n, "alpha"))), R(xv)));
	case OP_LOG: return lm_log(k, xv);
	case OP_SIN: case OP_COS: case OP_TAN: return trig_v(k, n->op, xv);
	case OP_ATAN: return atan_v(k, xv);
	case OP_ASIN: case OP_ACOS: return asin_v(k, n->op, xv);
	case OP_HARDSWISH: {
		/* x * max(0, min(1, x / 6 + 1 / 2)) */
		LirExpr *h = lir_op(k, SEL_FMA_V, R(xv), K(1.0 / 6.0), K(0.5));
		h = OPV(SEL_MAX_V, OPV(SEL_MIN_V, h, K(1.0)), K(0.0));
		return keep(k, OPV(SEL_MUL_V, R(xv), h));
	}
	default: return -1;
	}
}
