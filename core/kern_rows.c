/* Row kernels: reductions and normalizations along an axis (softmax,
 * logsoftmax, reduce_mean, the global pools, layernorm, batchnorm). */
#include "cg.h"

/* ---- rows: reductions and normalizations along one axis ------------------------- */

Rows cg_rows_of(const Shape *s, int axis_from, int axis_to)
{
	Rows r = {1, 1, 1};
	for (int d = 0; d < s->rank; d++) {
		if (d < axis_from)
			r.outer *= s->dim[d];
		else if (d < axis_to)
			r.n *= s->dim[d];
		else
			r.inner *= s->dim[d];
	}
	return r;
}

/* The start of row (ov, jv) (vregs of the outer and inner loop variables,
 * jv < 0 when inner == 1). */
static Affine row_start(const Rows *r, int ov, int jv)
{
	Affine a = {0, {{ov, r->n * r->inner}}, 1};
	if (jv >= 0)
		a.t[a.n++] = (Term){jv, 1};
	return a;
}

typedef enum { RED_SUM, RED_MAX } Reduce;

/* Reduce a row to a scalar vreg; with fn, reduce fn(x) instead and store
 * fn(x) into out (the row of the same shape in value `out`). */
typedef int (*RowFn)(CG *c, int xv, const void *ctx);

static int row_pass(CG *c, const Rows *r, Affine start, int in_v, int out_v, Reduce red, RowFn fn, const void *ctx,
		    double scale_by)
{
	MFunc *f = c->f;
	bool vec = r->inner == 1 && cg_vector_row(c, r->n);
	int64_t vend = vec ? cg_vend_of(c, 0, r->n) : 0;
	double init = red == RED_MAX ? -INFINITY : 0.0;
	SelOp vop = red == RED_MAX ? SEL_MAX_V : SEL_ADD_V, sop = red == RED_MAX ? SEL_MAX_F : SEL_ADD_F;
	int acc = cg_keep(c, cg_splat(c, init, false), false);
	if (vend > 0) {
		/* fixed vectors: lanes accumulate, one reduction at the end;
		 * scalable: each strip (its own length) reduces into acc */
		int accv = c->scalable ? -1 : cg_keep(c, cg_splat(c, init, true), true);
		SelOp rop = red == RED_MAX ? SEL_REDMAX_V : SEL_REDSUM_V;
		int iv = cg_vloop_begin(c, 0, vend, true);
		Affine a = start;
		a.t[a.n++] = (Term){iv, 1};
		BursNode *x = cg_load(c, in_v, &a, true);
		if (scale_by != 0) {
			cg_store(c, out_v, &a, true, OPV(SEL_MUL_V, x, sel_op(f, SEL_BCAST_V, R((int)scale_by), NULL, NULL)));
		} else {
			if (fn) {
				int y = fn(c, cg_keep(c, x, true), ctx);
				cg_store(c, out_v, &a, true, R(y));
				x = R(y);
			}
			if (c->scalable)
				sel_assign(f, acc, OPV(sop, R(acc), sel_op(f, rop, x, NULL, NULL)));
			else
				sel_assign(f, accv, OPV(vop, R(accv), x));
		}
		cg_loop_end(c);
		if (scale_by == 0 && !c->scalable)
			sel_assign(f, acc, sel_op(f, rop, R(accv), NULL, NULL));
	}
	if (vend < r->n) {
		int iv = cg_loop_begin(c, vend, r->n, 1);
		Affine a = start;
		a.t[a.n++] = (Term){iv, r->inner};
		BursNode *x = cg_load(c, in_v, &a, false);
		if (scale_by != 0) {
			cg_store(c, out_v, &a, false, OPV(SEL_MUL_F, x, R((int)scale_by)));
		} else {
			if (fn) {
				/* the vector function on a broadcast, read back by a lane max */
				int y = fn(c, cg_keep(c, sel_op(f, SEL_BCAST_V, x, NULL, NULL), true), ctx);
				int ys = cg_keep(c, sel_op(f, SEL_REDMAX_V, R(y), NULL, NULL), false);
				cg_store(c, out_v, &a, false, R(ys));
				x = R(ys);
			}
			sel_assign(f, acc, OPV(sop, R(acc), x));
		}
		cg_loop_end(c);
	}
	return acc;
}

typedef struct {
	int shift;   /* scalar vreg subtracted before exp */
} ExpShift;

static int exp_shifted(CG *c, int xv, const void *ctx)
{
	const ExpShift *e = ctx;
	int d = cg_keep(c, OPV(SEL_SUB_V, R(xv), sel_op(c->f, SEL_BCAST_V, R(e->shift), NULL, NULL)), true);
	return cg_exp_v(c, d);
}

/* softmax along one axis: max, then exp(x - max) stored with its sum, then
 * a multiplication by the reciprocal of the sum. */
void cg_softmax(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	int axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += x->type.shape.rank;
	Rows r = cg_rows_of(&x->type.shape, axis, axis + 1);
	int ov = cg_loop_begin(c, 0, r.outer, 1);
	int jv = r.inner > 1 ? cg_loop_begin(c, 0, r.inner, 1) : -1;
	Affine st = row_start(&r, ov, jv);
	int m = row_pass(c, &r, st, x->id, -1, RED_MAX, NULL, NULL, 0);
	ExpShift es = {m};
	int sum = row_pass(c, &r, st, x->id, y->id, RED_SUM, exp_shifted, &es, 0);
	int inv = cg_keep(c, OPV(SEL_DIV_F, cg_splat(c, 1.0, false), R(sum)), false);
	row_pass(c, &r, st, y->id, y->id, RED_SUM, NULL, NULL, inv);
	if (jv >= 0)
		cg_loop_end(c);
	cg_loop_end(c);
}

static int exp_shifted_only(CG *c, int xv, const void *ctx)
{
	const ExpShift *e = ctx;
	int d = cg_keep(c, OPV(SEL_SUB_V, R(xv), sel_op(c->f, SEL_BCAST_V, R(e->shift), NULL, NULL)), true);
	return cg_exp_v(c, d);
}

/* logsoftmax: x - max - log(sum(exp(x - max))). */
void cg_logsoftmax(CG *c, const Node *n)
{
	MFunc *f = c->f;
	const Value *x = n->in[0], *y = n->out[0];
	int axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += x->type.shape.rank;
	Rows r = cg_rows_of(&x->type.shape, axis, axis + 1);
	int ov = cg_loop_begin(c, 0, r.outer, 1);
	int jv = r.inner > 1 ? cg_loop_begin(c, 0, r.inner, 1) : -1;
	Affine st = row_start(&r, ov, jv);
	int m = row_pass(c, &r, st, x->id, -1, RED_MAX, NULL, NULL, 0);
	ExpShift es = {m};
	/* the exponentials go to y as scratch, overwritten below */
	int sum = row_pass(c, &r, st, x->id, y->id, RED_SUM, exp_shifted_only, &es, 0);
	int ls = cg_keep(c, sel_op(f, SEL_REDMAX_V, R(cg_log_v(c, cg_keep(c, sel_op(f, SEL_BCAST_V, R(sum), NULL, NULL), true))), NULL, NULL),
		      false);
	int shift = cg_keep(c, OPV(SEL_ADD_F, R(m), R(ls)), false);
	bool vec = r.inner == 1 && cg_vector_row(c, r.n);
	int64_t vend = vec ? cg_vend_of(c, 0, r.n) : 0;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : r.n;
		if (hi <= lo)
			continue;
		int iv = cg_vloop_begin(c, lo, hi, vector);
		Affine a = st;
		a.t[a.n++] = (Term){iv, vector ? 1 : r.inner};
		BursNode *sh = vector ? sel_op(f, SEL_BCAST_V, R(shift), NULL, NULL) : R(shift);
		cg_store(c, y->id, &a, vector, cg_bin(c, SEL_SUB_V, SEL_SUB_F, vector, cg_load(c, x->id, &a, vector), sh));
		cg_loop_end(c);
	}
	if (jv >= 0)
		cg_loop_end(c);
	cg_loop_end(c);
}

/* reduce_mean over the trailing axes from a (the common case); other axis
 * sets are reported as not lowered. */
bool cg_reduce_mean(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	int rank = x->type.shape.rank;
	bool red[MAX_RANK] = {false};
	const int64_t *axes;
	int na = attr_ints(n, "axes", &axes);
	if (na < 0 || na == 0) {
		if (attr_i(n, "noop_with_empty_axes")) { /* the identity */
			int64_t str[MAX_RANK];
			shape_strides(&x->type.shape, str);
			cg_copy(c, x->id, 0, str, y->id, 0, str, &x->type.shape);
			return true;
		}
		for (int d = 0; d < rank; d++)
			red[d] = true;
	} else {
		for (int i = 0; i < na; i++)
			red[axes[i] < 0 ? axes[i] + rank : axes[i]] = true;
	}
	int first = rank;
	for (int d = rank - 1; d >= 0 && red[d]; d--)
		first = d;
	bool trailing = true;
	for (int d = 0; d < rank; d++)
		trailing &= !(red[d] && d < first);
	Rows r = cg_rows_of(&x->type.shape, first, rank);
	if (trailing && r.n > 0) {
		int ov = cg_loop_begin(c, 0, r.outer, 1);
		Affine st = row_start(&r, ov, -1);
		int sum = row_pass(c, &r, st, x->id, -1, RED_SUM, NULL, NULL, 0);
		Affine ya = {0, {{ov, 1}}, 1};
		cg_store(c, y->id, &ya, false, OPV(SEL_MUL_F, R(sum), cg_splat(c, 1.0 / (double)r.n, false)));
		cg_loop_end(c);
		return true;
	}
	/* any axes: loops over the kept axes, then a scalar sum over the reduced
	 * ones (an empty reduction gives nan, 0 / 0, as the reference) */
	int64_t istr[MAX_RANK], count = 1, ostride = 1, ostr[MAX_RANK];
	shape_strides(&x->type.shape, istr);
	for (int d = rank - 1; d >= 0; d--) {
		if (red[d]) {
			count *= x->type.shape.dim[d];
		} else {
			ostr[d] = ostride;
			ostride *= x->type.shape.dim[d];
		}
	}
	int vars[MAX_RANK];
	Affine ia = {0, {{0}}, 0}, ya = {0, {{0}}, 0};
	for (int d = 0; d < rank; d++)
		if (!red[d]) {
			vars[d] = cg_loop_begin(c, 0, x->type.shape.dim[d], 1);
			ia.t[ia.n++] = (Term){vars[d], istr[d]};
			ya.t[ya.n++] = (Term){vars[d], ostr[d]};
		}
	int acc = cg_keep(c, cg_splat(c, 0.0, false), false);
	for (int d = 0; d < rank; d++)
		if (red[d]) {
			vars[d] = cg_loop_begin(c, 0, x->type.shape.dim[d], 1);
			ia.t[ia.n++] = (Term){vars[d], istr[d]};
		}
	sel_assign(c->f, acc, OPV(SEL_ADD_F, R(acc), cg_load(c, x->id, &ia, false)));
	for (int d = rank - 1; d >= 0; d--)
		if (red[d])
			cg_loop_end(c);
	cg_store(c, y->id, &ya, false, OPV(SEL_MUL_F, R(acc), cg_splat(c, count ? 1.0 / (double)count : NAN, false)));
	for (int d = rank - 1; d >= 0; d--)
		if (!red[d])
			cg_loop_end(c);
	return true;
}

/* global pools: a reduction of each (n, c) row of spatial elements */
void cg_global_pool(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	Rows r = cg_rows_of(&x->type.shape, 2, x->type.shape.rank);
	bool avg = n->op == OP_GLOBAL_AVGPOOL;
	int ov = cg_loop_begin(c, 0, r.outer, 1);
	Affine st = row_start(&r, ov, -1);
	int v = row_pass(c, &r, st, x->id, -1, avg ? RED_SUM : RED_MAX, NULL, NULL, 0);
	Affine ya = {0, {{ov, 1}}, 1};
	BursNode *val = R(v);
	if (avg)
		val = OPV(SEL_MUL_F, val, cg_splat(c, 1.0 / (double)r.n, false));
	cg_store(c, y->id, &ya, false, val);
	cg_loop_end(c);
}

/* layernorm over the trailing axes: mean, variance, then
 * (x - mean) * rsqrt(var + eps) * scale + bias; scale and bias must cover
 * the normalized block (or be one value). */
bool cg_layernorm(CG *c, const Node *n)
{
	MFunc *f = c->f;
	const Value *x = n->in[0], *sc = n->in[1], *bi = n->nin > 2 ? n->in[2] : NULL, *y = n->out[0];
	int rank = x->type.shape.rank, axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += rank;
	Rows r = cg_rows_of(&x->type.shape, axis, rank);
	int64_t sn = shape_numel(&sc->type.shape), bn = bi ? shape_numel(&bi->type.shape) : 0;
	if (r.n == 0 || (sn != r.n && sn != 1) || (bi && bn != r.n && bn != 1))
		return false;
	int ov = cg_loop_begin(c, 0, r.outer, 1);
	Affine st = row_start(&r, ov, -1);
	int sum = row_pass(c, &r, st, x->id, -1, RED_SUM, NULL, NULL, 0);
	int mean = cg_keep(c, OPV(SEL_MUL_F, R(sum), cg_splat(c, 1.0 / (double)r.n, false)), false);
	/* variance: sum of (x - mean)^2, written to y on the way */
	bool vec = cg_vector_row(c, r.n);
	int64_t vend = vec ? cg_vend_of(c, 0, r.n) : 0;
	int var = cg_keep(c, cg_splat(c, 0.0, false), false);
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : r.n;
		if (hi <= lo)
			continue;
		bool lanes_acc = vector && !c->scalable; /* scalable: each strip reduces into var */
		int acc = lanes_acc ? cg_keep(c, cg_splat(c, 0.0, true), true) : var;
		int iv = cg_vloop_begin(c, lo, hi, vector);
		Affine a = st;
		a.t[a.n++] = (Term){iv, 1};
		BursNode *m = vector ? sel_op(f, SEL_BCAST_V, R(mean), NULL, NULL) : R(mean);
		int d = cg_keep(c, cg_bin(c, SEL_SUB_V, SEL_SUB_F, vector, cg_load(c, x->id, &a, vector), m), vector);
		cg_store(c, y->id, &a, vector, R(d));
		if (vector && c->scalable)
			sel_assign(f, var, OPV(SEL_ADD_F, R(var), sel_op(f, SEL_REDSUM_V, OPV(SEL_MUL_V, R(d), R(d)), NULL, NULL)));
		else
			sel_assign(f, acc, sel_op(f, vector ? SEL_FMA_V : SEL_FMA_F, R(d), R(d), R(acc)));
		cg_loop_end(c);
		if (lanes_acc)
			sel_assign(f, var, sel_op(f, SEL_REDSUM_V, R(acc), NULL, NULL));
	}
	int rstd = cg_keep(c, OPV(SEL_DIV_F, cg_splat(c, 1.0, false),
			       sel_op(f, SEL_SQRT_F, sel_op(f, SEL_FMA_F, R(var), cg_splat(c, 1.0 / (double)r.n, false),
							    cg_splat(c, attr_f(n, "epsilon"), false)), NULL, NULL)), false);
	/* results 2 and 3: the mean and the inverse standard deviation per row */
	for (int k = 1; k < n->nout && k < 3; k++)
		if (n->out[k]->nuses || n->out[k]->is_output) {
			cg_base_of(c, n->out[k]->id);
			Affine ma = {0, {{ov, 1}}, 1};
			cg_store(c, n->out[k]->id, &ma, false, R(k == 1 ? mean : rstd));
		}
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : r.n;
		if (hi <= lo)
			continue;
		int iv = cg_vloop_begin(c, lo, hi, vector);
		Affine a = st;
		a.t[a.n++] = (Term){iv, 1};
		Affine sa = {0, {{iv, sn == 1 ? 0 : 1}}, 1}, ba = {0, {{iv, bn == 1 ? 0 : 1}}, 1};
		BursNode *rs = vector ? sel_op(f, SEL_BCAST_V, R(rstd), NULL, NULL) : R(rstd);
		BursNode *scv = (vector && sn == 1) ? sel_op(f, SEL_BCAST_V, cg_load(c, sc->id, &sa, false), NULL, NULL)
						    : cg_load(c, sc->id, &sa, vector);
		BursNode *v = cg_bin(c, SEL_MUL_V, SEL_MUL_F, vector, cg_bin(c, SEL_MUL_V, SEL_MUL_F, vector, cg_load(c, y->id, &a, vector), rs), scv);
		if (bi) {
			BursNode *bv = (vector && bn == 1) ? sel_op(f, SEL_BCAST_V, cg_load(c, bi->id, &ba, false), NULL, NULL)
							   : cg_load(c, bi->id, &ba, vector);
			v = cg_bin(c, SEL_ADD_V, SEL_ADD_F, vector, v, bv);
		}
		cg_store(c, y->id, &a, vector, v);
		cg_loop_end(c);
	}
	cg_loop_end(c);
	return true;
}

/* batchnorm (inference): per channel a = scale / sqrt(var + eps),
 * b = bias - mean a; then y = x a + b over the channel's elements. */
bool cg_batchnorm(CG *c, const Node *n)
{
	MFunc *f = c->f;
	bool training = attr_i(n, "training_mode") != 0;
	if (!training && n->nout > 1)
		return false;
	const Value *x = n->in[0], *y = n->out[0];
	Rows r = cg_rows_of(&x->type.shape, 2, x->type.shape.rank);
	int64_t N = x->type.shape.dim[0], C = x->type.shape.rank > 1 ? x->type.shape.dim[1] : 1;
	int bmean = -1, bvar = -1;
	if (training) {
		/* the batch's statistics per channel (population variance), and
		 * the running statistics input * momentum + batch * (1 - momentum) */
		if (N * r.n == 0)
			return false;
		double mom = attr_f(n, "momentum"), cnt = (double)(N * r.n);
		int mean_buf = cg_scratch(c, 2 * C);
		cg_base_of(c, mean_buf);
		int cv = cg_loop_begin(c, 0, C, 1);
		int sum = cg_keep(c, cg_splat(c, 0.0, false), false);
		int nv = cg_loop_begin(c, 0, N, 1);
		Rows row = {1, r.n, 1};
		Affine st = {0, {{nv, C * r.n}, {cv, r.n}}, 2};
		int part = row_pass(c, &row, st, x->id, -1, RED_SUM, NULL, NULL, 0);
		sel_assign(f, sum, OPV(SEL_ADD_F, R(sum), R(part)));
		cg_loop_end(c);
		int mean = cg_keep(c, OPV(SEL_MUL_F, R(sum), cg_splat(c, 1.0 / cnt, false)), false);
		int sq = cg_keep(c, cg_splat(c, 0.0, false), false);
		nv = cg_loop_begin(c, 0, N, 1);
		int iv = cg_loop_begin(c, 0, r.n, 1);
		Affine xa = {0, {{nv, C * r.n}, {cv, r.n}, {iv, 1}}, 3};
		int d = cg_keep(c, OPV(SEL_SUB_F, cg_load(c, x->id, &xa, false), R(mean)), false);
		sel_assign(f, sq, sel_op(f, SEL_FMA_F, R(d), R(d), R(sq)));
		cg_loop_end(c);
		cg_loop_end(c);
		Affine ma = {0, {{cv, 1}}, 1}, va = {C, {{cv, 1}}, 1};
		cg_store(c, mean_buf, &ma, false, R(mean));
		cg_store(c, mean_buf, &va, false, OPV(SEL_MUL_F, R(sq), cg_splat(c, 1.0 / cnt, false)));
		for (int k = 1; k < n->nout; k++)
			if (n->out[k]->nuses || n->out[k]->is_output) {
				cg_base_of(c, n->out[k]->id);
				Affine oa = {0, {{cv, 1}}, 1};
				BursNode *batch = cg_load(c, mean_buf, k == 1 ? &ma : &va, false);
				BursNode *input = cg_load(c, n->in[k == 1 ? 3 : 4]->id, &oa, false);
				cg_store(c, n->out[k]->id, &oa, false,
				      sel_op(f, SEL_FMA_F, input, cg_splat(c, mom, false), OPV(SEL_MUL_F, batch, cg_splat(c, 1.0 - mom, false))));
			}
		cg_loop_end(c);
		bmean = bvar = mean_buf;
	}
	/* inference with constant statistics: the per-channel scale and shift
	 * are folded now (no divide or square root at run time) */
	const Tensor *st[4] = {NULL, NULL, NULL, NULL};
	bool fold = !training;
	for (int k = 0; k < 4 && fold; k++)
		fold = (st[k] = cg_const_data(c, n->in[k + 1]->id)) != NULL;
	const char *folded = NULL;
	if (fold) {
		Shape fs = {1, {2 * C}};
		Tensor *ft = tensor_new(DT_F32, &fs);
		double eps = attr_f(n, "epsilon");
		for (int64_t k = 0; k < C; k++) {
			double sc = tensor_get_f(st[0], k) / sqrt(tensor_get_f(st[3], k) + eps);
			((float *)ft->data)[k] = (float)sc;
			((float *)ft->data)[C + k] = (float)(tensor_get_f(st[1], k) - tensor_get_f(st[2], k) * sc);
		}
		folded = cg_add_data(c->p, ft);
	}
	int nv = cg_loop_begin(c, 0, N, 1);
	int cv = cg_loop_begin(c, 0, C, 1);
	Affine ca = {0, {{cv, 1}}, 1}, cva = {C, {{cv, 1}}, 1};
	int a, b;
	if (folded) {
		a = cg_keep(c, sel_op(f, SEL_LOAD_F, OPV(SEL_ADD_I, sel_sym(f, folded), OPV(SEL_SHL_I, R(cv), sel_consti(f, 2))), NULL, NULL), false);
		b = cg_keep(c, sel_op(f, SEL_LOAD_F, OPV(SEL_ADD_I, sel_sym(f, folded), OPV(SEL_SHL_I, OPV(SEL_ADD_I, R(cv), sel_consti(f, C)), sel_consti(f, 2))), NULL, NULL), false);
	} else {
		BursNode *var = training ? cg_load(c, bvar, &cva, false) : cg_load(c, n->in[4]->id, &ca, false);
		BursNode *mu = training ? cg_load(c, bmean, &ca, false) : cg_load(c, n->in[3]->id, &ca, false);
		a = cg_keep(c, OPV(SEL_DIV_F, cg_load(c, n->in[1]->id, &ca, false),
				sel_op(f, SEL_SQRT_F, OPV(SEL_ADD_F, var, cg_splat(c, attr_f(n, "epsilon"), false)), NULL, NULL)), false);
		b = cg_keep(c, OPV(SEL_SUB_F, cg_load(c, n->in[2]->id, &ca, false), OPV(SEL_MUL_F, mu, R(a))), false);
	}
	int64_t vend = cg_vend_of(c, 0, r.n);
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : r.n;
		if (hi <= lo)
			continue;
		int iv = cg_vloop_begin(c, lo, hi, vector);
		Affine xa = {0, {{nv, C * r.n}, {cv, r.n}, {iv, 1}}, 3};
		BursNode *av = vector ? sel_op(f, SEL_BCAST_V, R(a), NULL, NULL) : R(a);
		BursNode *bv = vector ? sel_op(f, SEL_BCAST_V, R(b), NULL, NULL) : R(b);
		cg_store(c, y->id, &xa, vector, sel_op(f, vector ? SEL_FMA_V : SEL_FMA_F, cg_load(c, x->id, &xa, vector), av, bv));
		cg_loop_end(c);
	}
	cg_loop_end(c);
	cg_loop_end(c);
	return true;
}

