/* Kernels of the ops of indices and positions (core/ops_index.c), built as
 * Loop IR scalar loops (expand(scalar_loop)): range, argmax / argmin,
 * hardmax, trilu, gather_elements and tile.  A loop's variable is also a
 * value (lir_index): positions are compared and stored as integers. */
#include <string.h>

#include "cg.h"

#define OP1(op, a) lir_op(k, (op), (a), NULL, NULL)
#define OP2(op, a, b) lir_op(k, (op), (a), (b), NULL)
#define IDX(v) lir_index(k, (v))
#define KI(v) lir_consti(k, (v))

static LirAffine aff(LirKernel *k, int64_t off, int var, int64_t coef)
{
	LirAffine a = lir_affine(off);
	if (var >= 0 && coef)
		lir_term(k, &a, var, coef);
	return a;
}

/* (outer, n, inner) around axis ax of s: cg_rows_of's rows of that axis */
static void split3(const Shape *s, int ax, int64_t *outer, int64_t *n, int64_t *inner)
{
	Rows r = cg_rows_of(s, ax, ax + 1); /* (rank 0: one row of one) */
	*outer = r.outer;
	*n = r.n;
	*inner = r.inner;
}

static int axis_of(const Node *n, const char *attr, int rank)
{
	int64_t a = attr_i(n, attr);
	return rank ? (int)(a < 0 ? a + rank : a) : 0;
}

static bool run(CG *c, LirKernel *k)
{
	bool ok = k->ok && cg_lir_run(c, k, true);
	lir_kernel_free(k);
	return ok;
}

/* y[i] = start + i delta: f32 from the index converted, integers exactly */
static bool k_range(CG *c, const Node *n)
{
	const Value *y = n->out[0];
	int64_t cnt = shape_numel(&y->type.shape);
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: range", y->name);
	int by = cg_lir_buffer(c, k, y->id);
	if (cnt > 0) {
		int i = lir_for(k, 0, cnt, 1);
		double start = attr_f(n, "start"), delta = attr_f(n, "delta");
		LirExpr *e;
		if (y->type.dtype == DT_F32)
			e = OP2(SEL_ADD_V, OP2(SEL_MUL_V, OP1(SEL_CVT_I_F, IDX(i)), lir_constf(k, delta)), lir_constf(k, start));
		else
			e = OP2(SEL_ADD_I, OP2(SEL_MUL_I, IDX(i), KI((int64_t)delta)), KI((int64_t)start));
		LirAffine a = aff(k, 0, i, 1);
		lir_store(k, by, &a, e);
		lir_end(k);
	}
	return run(c, k);
}

/* The first (or last) maximum (or minimum) of x's row at base (n
 * elements, stride apart) into the i temporary it returns: the row's
 * best so far in another temporary, a position taken where the compare
 * says so (NaN never does). */
static int arg_loop(CG *c, LirKernel *k, const Value *x, const LirAffine *base, int64_t n, int64_t stride, bool max,
		    bool last)
{
	bool fl = x->type.dtype == DT_F32;
	int best = lir_temp(k, fl ? SORT_V : SORT_I), pos = lir_temp(k, SORT_I);
	lir_assign(k, best, cg_lir_elem(c, k, x, base, false));
	lir_assign(k, pos, KI(0));
	if (n > 1) {
		int r = lir_for(k, 1, n, 1);
		LirAffine a = *base;
		lir_term(k, &a, r, stride);
		LirExpr *v = cg_lir_elem(c, k, x, &a, false), *b = lir_ref(k, best);
		/* take: best < v (max, first), best <= v (max, last); v < best, v <= best (min) */
		LirExpr *lo = max ? b : v, *hi = max ? v : b, *take;
		if (fl)
			take = OP2(last ? SEL_CMPLE_F : SEL_CMPLT_F, lo, hi);
		else
			take = last ? OP2(SEL_XOR_I, OP2(SEL_CMPLT_I, hi, lo), KI(1)) : OP2(SEL_CMPLT_I, lo, hi);
		lir_assign(k, pos, lir_op(k, SEL_SELECT_I, take, IDX(r), lir_ref(k, pos)));
		LirExpr *v2 = cg_lir_elem(c, k, x, &a, false);
		lir_assign(k, best, fl ? OP2(max ? SEL_MAX_V : SEL_MIN_V, lir_ref(k, best), v2)
				       : OP2(max ? SEL_MAX_I : SEL_MIN_I, lir_ref(k, best), v2));
		lir_end(k);
	}
	return pos;
}

/* argmax / argmin (positions, i64), hardmax (1.0 at the position) */
static bool k_arg(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	int64_t outer, cnt, inner;
	split3(&x->type.shape, axis_of(n, "axis", x->type.shape.rank), &outer, &cnt, &inner);
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: %s", y->name, op_info[n->op].name);
	int by = cg_lir_buffer(c, k, y->id);
	if (outer * inner > 0 && cnt > 0) {
		int o = outer > 1 ? lir_for(k, 0, outer, 1) : -1;
		int i = inner > 1 ? lir_for(k, 0, inner, 1) : -1;
		LirAffine base = aff(k, 0, o, cnt * inner);
		if (i >= 0)
			lir_term(k, &base, i, 1);
		bool hard = n->op == OP_HARDMAX;
		int pos = arg_loop(c, k, x, &base, cnt, inner, n->op != OP_ARGMIN, !hard && attr_i(n, "select_last_index"));
		if (hard) {
			int r = lir_for(k, 0, cnt, 1);
			LirAffine a = base;
			lir_term(k, &a, r, inner);
			lir_store(k, by, &a, OP1(SEL_CVT_I_F, OP2(SEL_CMPEQ_I, IDX(r), lir_ref(k, pos))));
			lir_end(k);
		} else {
			LirAffine ya = aff(k, 0, o, inner);
			if (i >= 0)
				lir_term(k, &ya, i, 1);
			lir_store(k, by, &ya, lir_ref(k, pos));
		}
		if (i >= 0)
			lir_end(k);
		if (o >= 0)
			lir_end(k);
	}
	return run(c, k);
}

/* trilu: each element kept where j - i >= k (upper) or j - i <= k (lower),
 * else 0: the element's bits through select.i */
static bool k_trilu(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	const Shape *s = &x->type.shape;
	int64_t rows = s->dim[s->rank - 2], cols = s->dim[s->rank - 1], kk = attr_i(n, "k");
	int64_t batch = rows > 0 && cols > 0 ? shape_numel(s) / (rows * cols) : 0;
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: trilu", y->name);
	int by = cg_lir_buffer(c, k, y->id);
	if (batch * rows * cols > 0) {
		int b = lir_for(k, 0, batch, 1), i = lir_for(k, 0, rows, 1), j = lir_for(k, 0, cols, 1);
		LirAffine a = aff(k, 0, b, rows * cols);
		lir_term(k, &a, i, cols);
		lir_term(k, &a, j, 1);
		/* d = j - i; k saturated into what d can be, so that no bound overflows */
		int64_t lim = rows + cols + 1;
		int64_t kc = kk > lim ? lim : kk < -lim ? -lim : kk;
		LirExpr *d = OP2(SEL_SUB_I, IDX(j), IDX(i));
		/* upper: keep unless d < k; lower: keep unless k < d */
		LirExpr *drop = attr_i(n, "upper") ? OP2(SEL_CMPLT_I, d, KI(kc)) : OP2(SEL_CMPLT_I, KI(kc), d);
		lir_store(k, by, &a, lir_op(k, SEL_SELECT_I, drop, KI(0), cg_lir_elem(c, k, x, &a, true)));
		lir_end(k);
		lir_end(k);
		lir_end(k);
	}
	return run(c, k);
}

/* gather_elements: per index element, the data element at it along axis
 * (negative from the end; outside [-n, n) the function returns 1) */
static bool k_gather_elements(CG *c, const Node *n)
{
	const Value *x = n->in[0], *idx = n->in[1], *y = n->out[0];
	if (c->ret < 0)
		return false;
	const Shape *ds = &x->type.shape, *is = &idx->type.shape;
	int ax = axis_of(n, "axis", ds->rank);
	int64_t dst[MAX_RANK], ist[MAX_RANK];
	shape_strides(ds, dst);
	shape_strides(is, ist);
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: gather_elements", y->name);
	int by = cg_lir_buffer(c, k, y->id), bi = cg_lir_buffer(c, k, idx->id), bx = cg_lir_buffer(c, k, x->id);
	if (shape_numel(is) > 0) {
		LirAffine ia = lir_affine(0), xa = lir_affine(0);
		int nl = 0;
		for (int d = 0; d < is->rank; d++) {
			if (is->dim[d] == 1)
				continue;
			int v = lir_for(k, 0, is->dim[d], 1);
			nl++;
			lir_term(k, &ia, v, ist[d]);
			if (d != ax)
				lir_term(k, &xa, v, dst[d]);
		}
		LirExpr *ie = lir_load_as(k, bi, &ia, idx->type.dtype == DT_I32 ? LIR_AS_I32 : LIR_AS_ELEM);
		int kv = lir_data_index(k, ie, ds->dim[ax]);
		lir_term(k, &xa, kv, dst[ax]);
		lir_store(k, by, &ia, lir_load(k, bx, &xa));
		for (int i = 0; i < nl; i++)
			lir_end(k);
	}
	return run(c, k);
}

/* tile: per axis a loop over the copies and one over the operand's
 * elements: y[(r d_a + e) ...] = x[e ...], all affine */
static bool k_tile(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	const Shape *s = &x->type.shape;
	const int64_t *rep;
	attr_ints(n, "repeats", &rep);
	int64_t ist[MAX_RANK], ost[MAX_RANK];
	shape_strides(s, ist);
	shape_strides(&y->type.shape, ost);
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: tile", y->name);
	int by = cg_lir_buffer(c, k, y->id), bx = cg_lir_buffer(c, k, x->id);
	if (shape_numel(&y->type.shape) > 0) {
		LirAffine xa = lir_affine(0), ya = lir_affine(0);
		int nl = 0, inner = -1;
		for (int a = 0; a < s->rank; a++) {
			if (rep[a] > 1) {
				int r = lir_for(k, 0, rep[a], 1);
				nl++;
				lir_term(k, &ya, r, s->dim[a] * ost[a]);
			}
			if (s->dim[a] > 1) {
				int e = lir_for(k, 0, s->dim[a], 1);
				nl++;
				lir_term(k, &ya, e, ost[a]);
				lir_term(k, &xa, e, ist[a]);
				inner = e;
			}
		}
		lir_store(k, by, &ya, lir_load(k, bx, &xa));
		for (int i = 0; i < nl; i++)
			lir_end(k);
		/* the last axis's elements are contiguous on both sides: vectors of
		 * 4-byte elements (when that loop is the innermost) */
		if (inner >= 0 && s->dim[s->rank - 1] > 1 && dtype_size(x->type.dtype) == 4)
			cg_vectorize(c, k, inner);
	}
	return run(c, k);
}

/* one_hot: per output position, values[1] where the (normalized) index is
 * the position along axis, else values[0]: the elements' bits by select.i */
static bool k_one_hot(CG *c, const Node *n)
{
	const Value *ix = n->in[0], *vals = n->in[1], *y = n->out[0];
	const Shape *os = &y->type.shape;
	int ax = axis_of(n, "axis", os->rank);
	int64_t depth = attr_i(n, "depth"), outer, cnt, inner;
	split3(os, ax, &outer, &cnt, &inner);
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: one_hot", y->name);
	int by = cg_lir_buffer(c, k, y->id);
	if (outer * cnt * inner > 0) {
		int o = outer > 1 ? lir_for(k, 0, outer, 1) : -1;
		int i = inner > 1 ? lir_for(k, 0, inner, 1) : -1;
		LirAffine ia = aff(k, 0, o, inner);
		if (i >= 0)
			lir_term(k, &ia, i, 1);
		LirExpr *e = cg_lir_elem(c, k, ix, &ia, false);
		if (ix->type.dtype == DT_F32)
			e = OP1(SEL_CVTT_F_I, e);
		int x = lir_temp(k, SORT_I);
		lir_assign(k, x, e);
		/* negative: from depth */
		lir_assign(k, x, lir_op(k, SEL_SELECT_I, OP2(SEL_CMPLT_I, lir_ref(k, x), KI(0)), OP2(SEL_ADD_I, lir_ref(k, x), KI(depth)),
					lir_ref(k, x)));
		int p = lir_for(k, 0, cnt, 1);
		LirAffine ya = aff(k, 0, o, cnt * inner);
		lir_term(k, &ya, p, inner);
		if (i >= 0)
			lir_term(k, &ya, i, 1);
		LirAffine on = lir_affine(1), off = lir_affine(0);
		lir_store(k, by, &ya, lir_op(k, SEL_SELECT_I, OP2(SEL_CMPEQ_I, lir_ref(k, x), IDX(p)), cg_lir_elem(c, k, vals, &on, true),
					     cg_lir_elem(c, k, vals, &off, true)));
		lir_end(k);
		if (i >= 0)
			lir_end(k);
		if (o >= 0)
			lir_end(k);
	}
	return run(c, k);
}

/* eye_like: (j - i == k) as the dtype's 0 or 1 */
static bool k_eye_like(CG *c, const Node *n)
{
	const Value *y = n->out[0];
	int64_t rows = y->type.shape.dim[0], cols = y->type.shape.dim[1];
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: eye_like", y->name);
	int by = cg_lir_buffer(c, k, y->id);
	if (rows * cols > 0) {
		int i = lir_for(k, 0, rows, 1), j = lir_for(k, 0, cols, 1);
		LirAffine a = aff(k, 0, i, cols);
		lir_term(k, &a, j, 1);
		int64_t lim = rows + cols + 1, kk = attr_i(n, "k");
		LirExpr *e = OP2(SEL_CMPEQ_I, OP2(SEL_SUB_I, IDX(j), IDX(i)), KI(kk > lim ? lim : kk < -lim ? -lim : kk));
		lir_store(k, by, &a, y->type.dtype == DT_F32 ? OP1(SEL_CVT_I_F, e) : e);
		lir_end(k);
		lir_end(k);
	}
	return run(c, k);
}

/* depth_to_space, space_to_depth: one affine copy over (n, c, h, i, w, j) */
static bool k_depth_space(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	bool d2s = n->op == OP_DEPTH_TO_SPACE;
	Shape ix;
	int64_t sc[6], dc[6];
	depth_space_copy(n, d2s ? &y->type.shape : &x->type.shape, d2s ? &x->type.shape : &y->type.shape, &ix, sc, dc);
	cg_copy(c, x->id, 0, d2s ? dc : sc, y->id, 0, d2s ? sc : dc, &ix);
	return c->ok;
}

/* scatter_nd: y = data, then per index tuple in order (a repeated index
 * takes the last update, or combines them all) the slice at it replaced
 * by (or combined with) its updates; an index outside [-n, n) returns 1 */
static LirExpr *combine(LirKernel *k, const char *red, bool fl, LirExpr *a, LirExpr *b)
{
	if (strcmp(red, "add") == 0)
		return OP2(fl ? SEL_ADD_V : SEL_ADD_I, a, b);
	if (strcmp(red, "mul") == 0)
		return OP2(fl ? SEL_MUL_V : SEL_MUL_I, a, b);
	bool max = strcmp(red, "max") == 0;
	if (fl)
		return OP2(max ? SEL_MAX_V : SEL_MIN_V, a, b);
	return lir_op(k, SEL_SELECT_I, max ? OP2(SEL_CMPLT_I, a, b) : OP2(SEL_CMPLT_I, b, a), b, a);
}

static bool k_scatter_nd(CG *c, const Node *n)
{
	const Value *x = n->in[0], *idx = n->in[1], *u = n->in[2], *y = n->out[0];
	if (c->ret < 0)
		return false;
	const Shape *ds = &x->type.shape, *is = &idx->type.shape;
	int kk = (int)is->dim[is->rank - 1];
	int64_t dst[MAX_RANK], slice = 1, nidx = shape_numel(is) / kk, numel = shape_numel(ds);
	shape_strides(ds, dst);
	for (int i = kk; i < ds->rank; i++)
		slice *= ds->dim[i];
	const char *red = attr_s(n, "reduction");
	bool fl = y->type.dtype == DT_F32;
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: scatter_nd", y->name);
	int by = cg_lir_buffer(c, k, y->id), bi = cg_lir_buffer(c, k, idx->id);
	if (numel > 0 && x->id != y->id) {
		Shape flat = {1, {numel}};
		int64_t one[1] = {1};
		cg_lir_copy(c, k, x->id, 0, one, y->id, 0, one, &flat);
	}
	if (nidx > 0 && slice > 0) {
		int j = lir_for(k, 0, nidx, 1);
		LirAffine ya = lir_affine(0);
		for (int t = 0; t < kk; t++) {
			LirAffine ia = aff(k, t, j, kk);
			LirExpr *ie = lir_load_as(k, bi, &ia, idx->type.dtype == DT_I32 ? LIR_AS_I32 : LIR_AS_ELEM);
			int kv = lir_data_index(k, ie, ds->dim[t]);
			lir_term(k, &ya, kv, dst[t]);
		}
		LirAffine ua = aff(k, 0, j, slice);
		int e = -1;
		if (slice > 1) {
			e = lir_for(k, 0, slice, 1);
			lir_term(k, &ya, e, 1);
			lir_term(k, &ua, e, 1);
		}
		LirExpr *v = cg_lir_elem(c, k, u, &ua, false);
		if (strcmp(red, "none") != 0)
			v = combine(k, red, fl, cg_lir_elem(c, k, y, &ya, false), v);
		lir_store(k, by, &ya, v);
		if (e >= 0)
			lir_end(k);
		lir_end(k);
	}
	return run(c, k);
}

/* gather_nd: per batch and index tuple, k data indices (checked), then
 * the slice there copied */
static bool k_gather_nd(CG *c, const Node *n)
{
	const Value *x = n->in[0], *idx = n->in[1], *y = n->out[0];
	if (c->ret < 0)
		return false;
	const Shape *ds = &x->type.shape;
	int b = (int)attr_i(n, "batch_dims"), kk;
	int64_t batches, tuples, slice, per_batch, dst[MAX_RANK];
	gather_nd_dims(n, &batches, &tuples, &kk, &slice, &per_batch);
	shape_strides(ds, dst);
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: gather_nd", y->name);
	int by = cg_lir_buffer(c, k, y->id), bi = cg_lir_buffer(c, k, idx->id), bx = cg_lir_buffer(c, k, x->id);
	if (batches * tuples > 0 && slice > 0) {
		int bv = batches > 1 ? lir_for(k, 0, batches, 1) : -1;
		int t = lir_for(k, 0, tuples, 1);
		LirAffine xa = aff(k, 0, bv, per_batch), ya = aff(k, 0, bv, tuples * slice);
		lir_term(k, &ya, t, slice);
		for (int j = 0; j < kk; j++) {
			LirAffine ia = aff(k, j, bv, tuples * kk);
			lir_term(k, &ia, t, kk);
			LirExpr *ie = lir_load_as(k, bi, &ia, idx->type.dtype == DT_I32 ? LIR_AS_I32 : LIR_AS_ELEM);
			int kv = lir_data_index(k, ie, ds->dim[b + j]);
			lir_term(k, &xa, kv, dst[b + j]);
		}
		int e = -1;
		if (slice > 1) {
			e = lir_for(k, 0, slice, 1);
			lir_term(k, &xa, e, 1);
			lir_term(k, &ya, e, 1);
		}
		lir_store(k, by, &ya, lir_load(k, bx, &xa));
		if (e >= 0)
			lir_end(k);
		lir_end(k);
		if (bv >= 0)
			lir_end(k);
	}
	return run(c, k);
}

/* topk: per row and rank r, the best element strictly after the previous
 * pick in the order (value, then position): eligible where prev < 0, or
 * v is after pv, or v == pv at a later position; better where none is
 * taken yet or v is before the best so far (compared by its value, read
 * back at the best's position).  No scratch, any dtype; NaN is never
 * picked (ordered compares). */
static bool k_topk(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0], *yi = n->nout > 1 ? n->out[1] : NULL;
	if (c->ret < 0)
		return false;
	int64_t outer, cnt, inner, kk = attr_i(n, "k");
	split3(&x->type.shape, axis_of(n, "axis", x->type.shape.rank), &outer, &cnt, &inner);
	bool largest = attr_i(n, "largest") != 0, fl = x->type.dtype == DT_F32;
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: topk", y->name);
	int by = cg_lir_buffer(c, k, y->id), byi = yi ? cg_lir_buffer(c, k, yi->id) : -1;
	if (outer * inner > 0 && kk > 0 && cnt > 0) {
		int o = outer > 1 ? lir_for(k, 0, outer, 1) : -1;
		int i = inner > 1 ? lir_for(k, 0, inner, 1) : -1;
		LirAffine base = aff(k, 0, o, cnt * inner), ybase = aff(k, 0, o, kk * inner);
		if (i >= 0) {
			lir_term(k, &base, i, 1);
			lir_term(k, &ybase, i, 1);
		}
		int prev = lir_temp(k, SORT_I), best = lir_temp(k, SORT_I);
		lir_assign(k, prev, KI(-1));
		int r = lir_for(k, 0, kk, 1);
		/* the previous pick's value (at position 0 before the first: unused) */
		int pv_at = lir_data_index(k, OP2(SEL_MAX_I, lir_ref(k, prev), KI(0)), cnt);
		LirAffine pa = base;
		lir_term(k, &pa, pv_at, inner);
		int pv = lir_temp(k, fl ? SORT_V : SORT_I);
		lir_assign(k, pv, cg_lir_elem(c, k, x, &pa, false));
		lir_assign(k, best, KI(-1));
		int e = lir_for(k, 0, cnt, 1);
		LirAffine ea = base;
		lir_term(k, &ea, e, inner);
		int bv_at = lir_data_index(k, OP2(SEL_MAX_I, lir_ref(k, best), KI(0)), cnt);
		LirAffine ba = base;
		lir_term(k, &ba, bv_at, inner);
		LirExpr *v = cg_lir_elem(c, k, x, &ea, false);
#define BEFORE(a, b) (fl ? OP2(SEL_CMPLT_F, largest ? (b) : (a), largest ? (a) : (b)) \
			 : OP2(SEL_CMPLT_I, largest ? (b) : (a), largest ? (a) : (b)))
#define EQUAL(a, b) (fl ? OP2(SEL_CMPEQ_F, (a), (b)) : OP2(SEL_CMPEQ_I, (a), (b)))
		LirExpr *eligible =
			OP2(SEL_OR_I, OP2(SEL_CMPLT_I, lir_ref(k, prev), KI(0)),
			    OP2(SEL_OR_I, BEFORE(lir_ref(k, pv), v),
				OP2(SEL_AND_I, EQUAL(cg_lir_elem(c, k, x, &ea, false), lir_ref(k, pv)),
				    OP2(SEL_CMPLT_I, lir_ref(k, prev), IDX(e)))));
		LirExpr *better = OP2(SEL_OR_I, OP2(SEL_CMPLT_I, lir_ref(k, best), KI(0)),
				      BEFORE(cg_lir_elem(c, k, x, &ea, false), cg_lir_elem(c, k, x, &ba, false)));
		/* (NaN: eligible only through prev < 0, never better than a number;
		 * a NaN first in the row is replaced by the first number) */
		LirExpr *isnum = fl ? EQUAL(cg_lir_elem(c, k, x, &ea, false), cg_lir_elem(c, k, x, &ea, false)) : KI(1);
		LirExpr *take = OP2(SEL_AND_I, OP2(SEL_AND_I, eligible, better), isnum);
		lir_assign(k, best, lir_op(k, SEL_SELECT_I, take, IDX(e), lir_ref(k, best)));
#undef BEFORE
#undef EQUAL
		lir_end(k);
		/* the pick (position 0 when only NaN was left) */
		lir_assign(k, prev, OP2(SEL_MAX_I, lir_ref(k, best), KI(0)));
		int at = lir_data_index(k, lir_ref(k, prev), cnt);
		LirAffine sa = base, ya = ybase;
		lir_term(k, &sa, at, inner);
		lir_term(k, &ya, r, inner);
		lir_store(k, by, &ya, cg_lir_elem(c, k, x, &sa, false));
		if (yi)
			lir_store(k, byi, &ya, lir_ref(k, prev));
		lir_end(k);
		if (i >= 0)
			lir_end(k);
		if (o >= 0)
			lir_end(k);
	}
	return run(c, k);
}

/* maxpool_argmax: per window, the first maximum's position.  Taps outside
 * x are read at a clamped position and never taken; the best so far is
 * kept as its position (and its plane offset, to read its value back).
 * NaN is never taken; a window of NaN only gives its first position. */
static bool k_maxpool_argmax(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	if (c->ret < 0)
		return false;
	enum { S = 3 };
	int64_t in[S], kw[S], st[S], dl[S], pb[S], out[S];
	pool_window(n, in, kw, st, dl, pb, out);
	bool colmajor = attr_i(n, "storage_order") != 0;
	const Shape *xs = &x->type.shape;
	int64_t planes = xs->dim[0] * xs->dim[1], plane = in[0] * in[1] * in[2];
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: maxpool_argmax", y->name);
	int by = cg_lir_buffer(c, k, y->id), bx = cg_lir_buffer(c, k, x->id);
	if (planes * out[0] * out[1] * out[2] > 0) {
		int pl = planes > 1 ? lir_for(k, 0, planes, 1) : -1;
		int o[S];
		LirAffine ya = aff(k, 0, pl, out[0] * out[1] * out[2]);
		int64_t ost[S] = {out[1] * out[2], out[2], 1};
		for (int j = 0; j < S; j++) {
			o[j] = out[j] > 1 ? lir_for(k, 0, out[j], 1) : -1;
			if (o[j] >= 0)
				lir_term(k, &ya, o[j], ost[j]);
		}
		int best = lir_temp(k, SORT_I), first = lir_temp(k, SORT_I), bflat = lir_temp(k, SORT_I);
		lir_assign(k, best, KI(-1));
		lir_assign(k, first, KI(-1));
		lir_assign(k, bflat, KI(0));
		int t[S], p[S];
		for (int j = 0; j < S; j++)
			t[j] = kw[j] > 1 ? lir_for(k, 0, kw[j], 1) : -1;
		LirExpr *inside = KI(1);
		for (int j = 0; j < S; j++) {
			p[j] = lir_temp(k, SORT_I);
			LirExpr *e = KI(-pb[j]);
			if (o[j] >= 0)
				e = OP2(SEL_ADD_I, e, OP2(SEL_MUL_I, IDX(o[j]), KI(st[j])));
			if (t[j] >= 0)
				e = OP2(SEL_ADD_I, e, OP2(SEL_MUL_I, IDX(t[j]), KI(dl[j])));
			lir_assign(k, p[j], e);
			LirExpr *ok = OP2(SEL_AND_I, OP2(SEL_XOR_I, OP2(SEL_CMPLT_I, lir_ref(k, p[j]), KI(0)), KI(1)),
					  OP2(SEL_CMPLT_I, lir_ref(k, p[j]), KI(in[j])));
			inside = OP2(SEL_AND_I, inside, ok);
		}
		int tin = lir_temp(k, SORT_I), flat = lir_temp(k, SORT_I), at = lir_temp(k, SORT_I);
		lir_assign(k, tin, inside);
		/* the clamped position, row-major in the plane */
		LirExpr *cl[S];
		for (int j = 0; j < S; j++)
			cl[j] = OP2(SEL_MAX_I, OP2(SEL_MIN_I, lir_ref(k, p[j]), KI(in[j] - 1)), KI(0));
		lir_assign(k, flat, OP2(SEL_ADD_I, OP2(SEL_MUL_I, OP2(SEL_ADD_I, OP2(SEL_MUL_I, cl[0], KI(in[1])), cl[1]), KI(in[2])),
					cl[2]));
		if (colmajor)
			lir_assign(k, at, OP2(SEL_ADD_I, lir_ref(k, p[0]),
					      OP2(SEL_MUL_I, OP2(SEL_ADD_I, lir_ref(k, p[1]), OP2(SEL_MUL_I, lir_ref(k, p[2]), KI(in[1]))),
						  KI(in[0]))));
		else
			lir_assign(k, at, lir_ref(k, flat));
		int dv = lir_data_index(k, lir_ref(k, flat), plane);
		LirAffine va = aff(k, 0, pl, plane);
		lir_term(k, &va, dv, 1);
		int bv = lir_data_index(k, lir_ref(k, bflat), plane);
		LirAffine ba = aff(k, 0, pl, plane);
		lir_term(k, &ba, bv, 1);
		LirExpr *isnum = OP2(SEL_CMPEQ_F, cg_lir_elem(c, k, x, &va, false), cg_lir_elem(c, k, x, &va, false));
		LirExpr *better = OP2(SEL_OR_I, OP2(SEL_CMPLT_I, lir_ref(k, best), KI(0)),
				      OP2(SEL_CMPLT_F, cg_lir_elem(c, k, x, &ba, false), cg_lir_elem(c, k, x, &va, false)));
		int take = lir_temp(k, SORT_I);
		lir_assign(k, take, OP2(SEL_AND_I, lir_ref(k, tin), OP2(SEL_AND_I, isnum, better)));
		lir_assign(k, first, lir_op(k, SEL_SELECT_I, OP2(SEL_AND_I, lir_ref(k, tin), OP2(SEL_CMPLT_I, lir_ref(k, first), KI(0))),
					    lir_ref(k, at), lir_ref(k, first)));
		lir_assign(k, best, lir_op(k, SEL_SELECT_I, lir_ref(k, take), lir_ref(k, at), lir_ref(k, best)));
		lir_assign(k, bflat, lir_op(k, SEL_SELECT_I, lir_ref(k, take), lir_ref(k, flat), lir_ref(k, bflat)));
		(void)bx;
		for (int j = S - 1; j >= 0; j--)
			if (t[j] >= 0)
				lir_end(k);
		LirExpr *pos = lir_op(k, SEL_SELECT_I, OP2(SEL_CMPLT_I, lir_ref(k, best), KI(0)), lir_ref(k, first), lir_ref(k, best));
		if (pl >= 0)
			pos = OP2(SEL_ADD_I, pos, OP2(SEL_MUL_I, IDX(pl), KI(plane)));
		lir_store(k, by, &ya, pos);
		for (int j = S - 1; j >= 0; j--)
			if (o[j] >= 0)
				lir_end(k);
		if (pl >= 0)
			lir_end(k);
	}
	return run(c, k);
}

bool cg_index_kernel(CG *c, const Node *n)
{
	switch (n->op) {
	case OP_ONE_HOT: return k_one_hot(c, n);
	case OP_EYE_LIKE: return k_eye_like(c, n);
	case OP_DEPTH_TO_SPACE: case OP_SPACE_TO_DEPTH: return k_depth_space(c, n);
	case OP_RANGE: return k_range(c, n);
	case OP_ARGMAX: case OP_ARGMIN: case OP_HARDMAX: return k_arg(c, n);
	case OP_TRILU: return k_trilu(c, n);
	case OP_GATHER_ELEMENTS: return k_gather_elements(c, n);
	case OP_TILE: return k_tile(c, n);
	case OP_SCATTER_ND: return k_scatter_nd(c, n);
	case OP_GATHER_ND: return k_gather_nd(c, n);
	case OP_TOPK: return k_topk(c, n);
	case OP_MAXPOOL_ARGMAX: return k_maxpool_argmax(c, n);
	default: return false;
	}
}
