/* The transcendental expansions in vector code: exp_poly, log_poly,
 * tanh_exp, sigmoid_exp, erf_poly, gelu, pow_exp_log (cg.h). */
#include "cg.h"

/* ---- transcendental functions (vector code, exp_poly and friends) -------------- */

/* exp(x), Cody-Waite range reduction by ln 2 and the Cephes expf
 * polynomial on [-ln2/2, ln2/2]; relative error below 2e-7 over
 * [-87.3, 88.7] (inputs are clamped there: exp underflows to ~1e-38 and
 * overflows to ~1.7e38 instead of 0 and inf). */
int cg_exp_v(CG *c, int x)
{
	MFunc *f = c->f;
	int xc = cg_keep(c, OPV(SEL_MIN_V, OPV(SEL_MAX_V, R(x), K(-87.33654)), K(88.72283)), true);
	int fx = cg_keep(c, sel_op(f, SEL_ROUND_V, OPV(SEL_MUL_V, R(xc), K(1.44269504088896341)), NULL, NULL), true);
	/* r = x - fx * ln2, in two parts (0.693359375 is exact in f32) */
	int r = cg_keep(c, sel_op(f, SEL_FMA_V, R(fx), K(-0.693359375), R(xc)), true);
	r = cg_keep(c, sel_op(f, SEL_FMA_V, R(fx), K(2.12194440e-4), R(r)), true);
	static const double p[] = {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
				   1.6666665459e-1, 5.0000001201e-1};
	BursNode *y = K(p[0]);
	for (int i = 1; i < 6; i++)
		y = sel_op(f, SEL_FMA_V, y, R(r), K(p[i]));
	int yv = cg_keep(c, y, true);
	int z = cg_keep(c, OPV(SEL_MUL_V, R(r), R(r)), true);
	/* y * z + r + 1 */
	BursNode *e = OPV(SEL_ADD_V, sel_op(f, SEL_FMA_V, R(yv), R(z), R(r)), K(1.0));
	/* 2^fx: the exponent field (fx + 127) << 23 */
	BursNode *n = sel_op(f, SEL_CVT_V_W, OPV(SEL_ADD_V, R(fx), K(127.0)), NULL, NULL);
	BursNode *pow2 = sel_op(f, SEL_BITS_W_V, OPV(SEL_SHL_W, n, sel_consti(f, 23)), NULL, NULL);
	return cg_keep(c, OPV(SEL_MUL_V, e, pow2), true);
}

/* A vector of lanes equal i32 values, from read-only data. */
static BursNode *wconst(CG *c, int32_t v)
{
	int n = c->scalable ? c->t->vlen_max / 32 : c->lanes;
	Shape s = {1, {n}};
	Tensor *t = tensor_new(DT_I32, &s);
	for (int i = 0; i < n; i++)
		((int32_t *)t->data)[i] = v;
	const char *sym = cg_add_data(c->p, t);
	MFunc *f = c->f;
	return sel_op(f, SEL_BITS_V_W, sel_op(f, SEL_LOAD_V, sel_sym(f, sym), NULL, NULL), NULL, NULL);
}

/* log(x): x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s),
 * s = (m - 1) / (m + 1), |s| < 0.172, by its series to s^11 (relative
 * error below 1e-7); subnormals are scaled first; log 0 = -inf, log of a
 * negative number = nan. */
int cg_log_v(CG *c, int x)
{
	MFunc *f = c->f;
	BursNode *tiny = sel_op(f, SEL_CMPLT_V, R(x), K(1.17549435e-38), NULL);
	int xs = cg_keep(c, sel_op(f, SEL_SELECT_V, tiny, OPV(SEL_MUL_V, R(x), K(8388608.0)), R(x)), true);
	int eadj = cg_keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(x), K(1.17549435e-38), NULL), K(-23.0), K(0.0)), true);
	BursNode *ew = OPV(SEL_ADD_W, OPV(SEL_SHR_W, sel_op(f, SEL_BITS_V_W, R(xs), NULL, NULL), sel_consti(f, 23)), wconst(c, -127));
	int e = cg_keep(c, OPV(SEL_ADD_V, sel_op(f, SEL_CVT_W_V, ew, NULL, NULL), R(eadj)), true);
	BursNode *mw = OPV(SEL_OR_W, OPV(SEL_AND_W, sel_op(f, SEL_BITS_V_W, R(xs), NULL, NULL), wconst(c, 0x007fffff)),
			   wconst(c, 0x3f800000));
	int m = cg_keep(c, sel_op(f, SEL_BITS_W_V, mw, NULL, NULL), true);
	int big = mfunc_vreg(f, target_class_for(c->t, SORT_M));
	sel_assign(f, big, sel_op(f, SEL_CMPLT_V, K(1.41421356), R(m), NULL));
	int m2 = cg_keep(c, sel_op(f, SEL_SELECT_V, R(big), OPV(SEL_MUL_V, R(m), K(0.5)), R(m)), true);
	int e2 = cg_keep(c, sel_op(f, SEL_SELECT_V, R(big), OPV(SEL_ADD_V, R(e), K(1.0)), R(e)), true);
	int sv = cg_keep(c, OPV(SEL_DIV_V, OPV(SEL_SUB_V, R(m2), K(1.0)), OPV(SEL_ADD_V, R(m2), K(1.0))), true);
	int s2 = cg_keep(c, OPV(SEL_MUL_V, R(sv), R(sv)), true);
	BursNode *pl = K(1.0 / 11.0);
	static const double q[] = {1.0 / 9.0, 1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0};
	for (int i = 0; i < 4; i++)
		pl = sel_op(f, SEL_FMA_V, pl, R(s2), K(q[i]));
	int p2 = cg_keep(c, OPV(SEL_MUL_V, pl, R(s2)), true);
	/* 2 (s + s p) + e ln2 */
	int lm = cg_keep(c, OPV(SEL_MUL_V, sel_op(f, SEL_FMA_V, R(sv), R(p2), R(sv)), K(2.0)), true);
	int y = cg_keep(c, sel_op(f, SEL_FMA_V, R(e2), K(0.69314718055994531), R(lm)), true);
	/* x == 0: -inf; x < 0: nan */
	int z = cg_keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLE_V, R(x), K(0.0), NULL), K(-INFINITY), R(y)), true);
	return cg_keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(x), K(0.0), NULL), K(NAN), R(z)), true);
}

/* pow(a, b) as C's pow: |a|^b = exp(b log |a|); a negative base takes an
 * integer exponent's sign, else gives nan; b = 0 gives 1. */
int cg_pow_v(CG *c, int a, int b)
{
	MFunc *f = c->f;
	int la = cg_log_v(c, cg_keep(c, sel_op(f, SEL_ABS_V, R(a), NULL, NULL), true));
	int mag = cg_exp_v(c, cg_keep(c, OPV(SEL_MUL_V, R(b), R(la)), true));
	int rb = cg_keep(c, sel_op(f, SEL_ROUND_V, R(b), NULL, NULL), true);
	int hb = cg_keep(c, OPV(SEL_MUL_V, R(b), K(0.5)), true);
	int rh = cg_keep(c, sel_op(f, SEL_ROUND_V, R(hb), NULL, NULL), true);
	/* (one select per tree: a target may have a single mask register) */
	/* odd integer exponent: round(b / 2) != b / 2 */
	int neg = cg_keep(c, sel_op(f, SEL_NEG_V, R(mag), NULL, NULL), true);
	int odd1 = cg_keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(hb), R(rh), NULL), R(neg), R(mag)), true);
	int odd = cg_keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(rh), R(hb), NULL), R(neg), R(odd1)), true);
	/* an integer exponent: round(b) == b */
	int ib1 = cg_keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(b), R(rb), NULL), K(NAN), R(odd)), true);
	int ib = cg_keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(rb), R(b), NULL), K(NAN), R(ib1)), true);
	int y = cg_keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(a), K(0.0), NULL), R(ib), R(mag)), true);
	/* b == 0: 1 */
	int y1 = cg_keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, K(0.0), R(b), NULL), R(y), K(1.0)), true);
	return cg_keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(b), K(0.0), NULL), R(y), R(y1)), true);
}

/* 1 / (1 + exp(-x)) */
static int sigmoid_v(CG *c, int x)
{
	int e = cg_exp_v(c, cg_keep(c, sel_op(c->f, SEL_NEG_V, R(x), NULL, NULL), true));
	return cg_keep(c, OPV(SEL_DIV_V, K(1.0), OPV(SEL_ADD_V, K(1.0), R(e))), true);
}

/* Near zero, where a formula loses relative accuracy: the odd series
 * x (c0 + c1 x^2 + c2 x^4 + c3 x^6), chosen for |x| < 0.1. */
static int small_odd(CG *c, int x, int formula, const double *cf)
{
	MFunc *f = c->f;
	int x2 = cg_keep(c, OPV(SEL_MUL_V, R(x), R(x)), true);
	BursNode *p = sel_op(f, SEL_FMA_V, sel_op(f, SEL_FMA_V, sel_op(f, SEL_FMA_V, K(cf[3]), R(x2), K(cf[2])), R(x2), K(cf[1])),
			     R(x2), K(cf[0]));
	int series = cg_keep(c, OPV(SEL_MUL_V, p, R(x)), true);
	BursNode *small = sel_op(f, SEL_CMPLT_V, sel_op(f, SEL_ABS_V, R(x), NULL, NULL), K(0.1), NULL);
	return cg_keep(c, sel_op(f, SEL_SELECT_V, small, R(series), R(formula)), true);
}

/* tanh x = 2 sigmoid(2x) - 1, and its series near 0 (relative error
 * below 1e-6 everywhere). */
static int tanh_v(CG *c, int x)
{
	int s = sigmoid_v(c, cg_keep(c, OPV(SEL_MUL_V, R(x), K(2.0)), true));
	int t = cg_keep(c, sel_op(c->f, SEL_FMA_V, R(s), K(2.0), K(-1.0)), true);
	static const double cf[] = {1.0, -1.0 / 3.0, 2.0 / 15.0, -17.0 / 315.0};
	return small_odd(c, x, t, cf);
}

/* erf, Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7), and its series
 * near 0 for relative accuracy there. */
static int erf_v(CG *c, int x)
{
	MFunc *f = c->f;
	int ax = cg_keep(c, sel_op(f, SEL_ABS_V, R(x), NULL, NULL), true);
	int t = cg_keep(c, OPV(SEL_DIV_V, K(1.0), sel_op(f, SEL_FMA_V, R(ax), K(0.3275911), K(1.0))), true);
	static const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
	BursNode *pl = K(a[0]);
	for (int i = 1; i < 5; i++)
		pl = sel_op(f, SEL_FMA_V, pl, R(t), K(a[i]));
	int poly = cg_keep(c, OPV(SEL_MUL_V, pl, R(t)), true);
	int e = cg_exp_v(c, cg_keep(c, sel_op(f, SEL_NEG_V, OPV(SEL_MUL_V, R(ax), R(ax)), NULL, NULL), true));
	int y = cg_keep(c, OPV(SEL_SUB_V, K(1.0), OPV(SEL_MUL_V, R(poly), R(e))), true);
	/* the sign of x */
	BursNode *neg = sel_op(f, SEL_CMPLT_V, R(x), K(0.0), NULL);
	int r = cg_keep(c, sel_op(f, SEL_SELECT_V, neg, sel_op(f, SEL_NEG_V, R(y), NULL, NULL), R(y)), true);
	/* near 0: 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42) */
	static const double k = 1.1283791670955126;
	static const double cf[] = {k, -k / 3.0, k / 10.0, -k / 42.0};
	return small_odd(c, x, r, cf);
}

static int gelu_v(CG *c, const Node *n, int x)
{
	MFunc *f = c->f;
	int inner;
	if (strcmp(attr_s(n, "approximate"), "tanh") == 0) {
		/* tanh(sqrt(2/pi) (x + 0.044715 x^3)) */
		int x3 = cg_keep(c, OPV(SEL_MUL_V, OPV(SEL_MUL_V, R(x), R(x)), R(x)), true);
		int u = cg_keep(c, OPV(SEL_MUL_V, sel_op(f, SEL_FMA_V, R(x3), K(0.044715), R(x)), K(0.7978845608028654)), true);
		inner = tanh_v(c, u);
	} else {
		inner = erf_v(c, cg_keep(c, OPV(SEL_MUL_V, R(x), K(0.7071067811865476)), true));
	}
	return cg_keep(c, OPV(SEL_MUL_V, OPV(SEL_MUL_V, R(x), K(0.5)), OPV(SEL_ADD_V, R(inner), K(1.0))), true);
}

/* The vector value of a transcendental op; a scalar is computed in all
 * lanes of a broadcast and read back by a (then exact) lane maximum. */
BursNode *cg_transcendental(CG *c, const Node *n, BursNode *x, bool vector)
{
	MFunc *f = c->f;
	int xv = cg_keep(c, vector ? x : sel_op(f, SEL_BCAST_V, x, NULL, NULL), true);
	int y;
	switch (n->op) {
	case OP_EXP: y = cg_exp_v(c, xv); break;
	case OP_SIGMOID: y = sigmoid_v(c, xv); break;
	case OP_TANH: y = tanh_v(c, xv); break;
	case OP_ERF: y = erf_v(c, xv); break;
	case OP_GELU: y = gelu_v(c, n, xv); break;
	case OP_LEAKY_RELU:
		y = cg_keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(xv), K(0.0), NULL),
				   OPV(SEL_MUL_V, R(xv), K(attr_f(n, "alpha"))), R(xv)), true);
		break;
	case OP_LOG: y = cg_log_v(c, xv); break;
	case OP_HARDSWISH: {
		/* x * max(0, min(1, x / 6 + 1 / 2)) */
		BursNode *h = sel_op(f, SEL_FMA_V, R(xv), K(1.0 / 6.0), K(0.5));
		h = OPV(SEL_MAX_V, OPV(SEL_MIN_V, h, K(1.0)), K(0.0));
		y = cg_keep(c, OPV(SEL_MUL_V, R(xv), h), true);
		break;
	}
	default: return NULL;
	}
	if (vector)
		return R(y);
	return sel_op(f, SEL_REDMAX_V, R(y), NULL, NULL);
}

