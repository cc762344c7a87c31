/* Data movement: affine copies (transpose, slice, concat, pad, expand ...),
 * fills, and gather. */
#include "cg.h"

/* ---- data movement: affine copies --------------------------------------------- */
/* out[out_off + sum ocoef[d] i_d] = in[in_off + sum icoef[d] i_d] over the
 * index space s; the innermost loop is vectorized when the output is
 * contiguous along it and the input contiguous or broadcast. */
void cg_copy(CG *c, int in_v, int64_t in_off, const int64_t *icoef, int out_v, int64_t out_off,
		    const int64_t *ocoef, const Shape *shape)
{
	Shape s = *shape;
	int64_t ic[MAX_RANK], oc[MAX_RANK];
	memcpy(ic, icoef, sizeof ic);
	memcpy(oc, ocoef, sizeof oc);
	if (s.rank == 0) {
		s = (Shape){1, {1}};
		ic[0] = oc[0] = 0;
	}
	if (shape_numel(&s) == 0)
		return;
	int r = s.rank, vars[MAX_RANK];
	for (int d = 0; d < r - 1; d++)
		vars[d] = cg_loop_begin(c, 0, s.dim[d], 1);
	int64_t inner = s.dim[r - 1];
	bool can_vec = oc[r - 1] == 1 && (ic[r - 1] == 1 || ic[r - 1] == 0) && !cg_is_i64(c, out_v);
	int64_t vend = can_vec ? cg_vend_of(c, 0, inner) : 0;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : inner;
		if (hi <= lo)
			continue;
		int iv = cg_vloop_begin(c, lo, hi, vector);
		Affine ia = {in_off, {{0}}, 0}, oa = {out_off, {{0}}, 0};
		for (int d = 0; d < r - 1; d++) {
			ia.t[ia.n++] = (Term){vars[d], ic[d]};
			oa.t[oa.n++] = (Term){vars[d], oc[d]};
		}
		ia.t[ia.n++] = (Term){iv, ic[r - 1]};
		oa.t[oa.n++] = (Term){iv, oc[r - 1]};
		BursNode *v;
		if (vector && ic[r - 1] == 0)
			v = sel_op(c->f, SEL_BCAST_V, cg_load(c, in_v, &ia, false), NULL, NULL);
		else
			v = cg_load(c, in_v, &ia, vector);
		cg_store(c, out_v, &oa, vector, v);
		cg_loop_end(c);
	}
	for (int d = r - 2; d >= 0; d--)
		cg_loop_end(c);
}

/* Every element of a value set to v. */
void cg_fill(CG *c, int out_v, double v, int64_t numel)
{
	if (cg_is_i64(c, out_v)) {
		if (numel > 0) {
			int iv = cg_loop_begin(c, 0, numel, 1);
			Affine oa = {0, {{iv, 1}}, 1};
			cg_store(c, out_v, &oa, false, sel_consti(c->f, (int64_t)v));
			cg_loop_end(c);
		}
		return;
	}
	bool i32 = out_v < c->p->g->nvalues && c->p->g->values[out_v]->type.dtype == DT_I32;
	int64_t vend = cg_vend_of(c, 0, numel);
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : numel;
		if (hi <= lo)
			continue;
		int iv = cg_vloop_begin(c, lo, hi, vector);
		Affine oa = {0, {{iv, 1}}, 1};
		cg_store(c, out_v, &oa, vector, i32 ? cg_splat_i32_bits(c, (int32_t)v, vector) : cg_splat(c, v, vector));
		cg_loop_end(c);
	}
}

/* pad in reflect or edge mode: per axis three regions (before, the data,
 * after), each an affine map of the output index (reflection runs the input
 * backwards, the edge repeats one element); every combination of regions
 * is one affine copy.  Negative pads crop first, as the reference does. */
static bool cg_pad_mirror(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	bool reflect = strcmp(attr_s(n, "mode"), "reflect") == 0;
	int r = x->type.shape.rank;
	int64_t begin[MAX_RANK], end[MAX_RANK], istr[MAX_RANK], ostr[MAX_RANK], base_off = 0;
	pad_params(n, r, begin, end);
	shape_strides(&x->type.shape, istr);
	shape_strides(&y->type.shape, ostr);
	int64_t len[MAX_RANK];
	for (int d = 0; d < r; d++) {
		int64_t cb = begin[d] < 0 ? -begin[d] : 0, ce = end[d] < 0 ? -end[d] : 0;
		base_off += cb * istr[d];
		len[d] = x->type.shape.dim[d] - cb - ce;
		if (begin[d] < 0)
			begin[d] = 0;
		if (end[d] < 0)
			end[d] = 0;
		if (len[d] <= 0 && (begin[d] || end[d]))
			return false;
	}
	int combos = 1;
	for (int d = 0; d < r; d++)
		combos *= 3;
	for (int k = 0; k < combos; k++) {
		Shape rs = {r, {0}};
		int64_t in_off = base_off, out_off = 0, ic[MAX_RANK] = {0};
		bool empty = false;
		for (int d = 0, q = k; d < r; d++, q /= 3) {
			int region = q % 3;
			int64_t o0 = region == 0 ? 0 : region == 1 ? begin[d] : begin[d] + len[d];
			int64_t cnt = region == 0 ? begin[d] : region == 1 ? len[d] : end[d];
			rs.dim[d] = cnt;
			empty |= cnt == 0;
			out_off += o0 * ostr[d];
			/* the input index p as a function of o = o0 + i */
			int64_t coef, off;
			if (region == 1) {
				coef = 1, off = 0;
			} else if (region == 0) { /* p = o - begin < 0 */
				if (reflect)
					coef = -1, off = begin[d] - o0; /* p = begin - o */
				else
					coef = 0, off = 0;
			} else { /* p = o - begin >= len */
				if (reflect)
					coef = -1, off = 2 * (len[d] - 1) - (o0 - begin[d]); /* 2 (len - 1) - p */
				else
					coef = 0, off = len[d] - 1;
			}
			in_off += off * istr[d];
			ic[d] = coef * istr[d];
		}
		if (!empty)
			cg_copy(c, x->id, in_off, ic, y->id, out_off, ostr, &rs);
	}
	return true;
}

bool cg_movement(CG *c, const Node *n)
{
	if (n->nin == 0)
		return false;
	const Value *x = n->in[0];
	Shape is = x->type.shape;
	int64_t istr[MAX_RANK], ostr[MAX_RANK], ic[MAX_RANK] = {0};
	shape_strides(&is, istr);
	switch (n->op) {
	case OP_TRANSPOSE: {
		const Value *y = n->out[0];
		int perm[MAX_RANK];
		transpose_perm(n, is.rank, perm);
		shape_strides(&y->type.shape, ostr);
		for (int d = 0; d < is.rank; d++)
			ic[d] = istr[perm[d]];
		cg_copy(c, x->id, 0, ic, y->id, 0, ostr, &y->type.shape);
		return true;
	}
	case OP_EXPAND: {
		const Value *y = n->out[0];
		shape_strides(&y->type.shape, ostr);
		broadcast_strides(&is, &y->type.shape, ic);
		cg_copy(c, x->id, 0, ic, y->id, 0, ostr, &y->type.shape);
		return true;
	}
	case OP_SLICE: {
		const Value *y = n->out[0];
		int64_t start[MAX_RANK], step[MAX_RANK], count[MAX_RANK], off = 0;
		slice_params(n, &is, start, step, count);
		for (int d = 0; d < is.rank; d++) {
			off += start[d] * istr[d];
			ic[d] = step[d] * istr[d];
		}
		shape_strides(&y->type.shape, ostr);
		cg_copy(c, x->id, off, ic, y->id, 0, ostr, &y->type.shape);
		return true;
	}
	case OP_CONCAT: {
		const Value *y = n->out[0];
		int axis = (int)attr_i(n, "axis");
		if (axis < 0)
			axis += y->type.shape.rank;
		shape_strides(&y->type.shape, ostr);
		int64_t at = 0;
		for (int i = 0; i < n->nin; i++) {
			const Value *xi = n->in[i];
			int64_t s2[MAX_RANK];
			shape_strides(&xi->type.shape, s2);
			cg_base_of(c, xi->id);
			cg_copy(c, xi->id, 0, s2, y->id, at * ostr[axis], ostr, &xi->type.shape);
			at += xi->type.shape.dim[axis];
		}
		return true;
	}
	case OP_SPLIT: {
		int axis = (int)attr_i(n, "axis");
		if (axis < 0)
			axis += is.rank;
		int64_t at = 0;
		for (int k = 0; k < n->nout; k++) {
			const Value *y = n->out[k];
			shape_strides(&y->type.shape, ostr);
			if (y->nuses > 0) {
				cg_base_of(c, y->id);
				cg_copy(c, x->id, at * istr[axis], istr, y->id, 0, ostr, &y->type.shape);
			}
			at += y->type.shape.dim[axis];
		}
		return true;
	}
	case OP_PAD: {
		if (strcmp(attr_s(n, "mode"), "constant") != 0)
			return cg_pad_mirror(c, n);
		const Value *y = n->out[0];
		int64_t begin[MAX_RANK], end[MAX_RANK], in_off = 0, out_off = 0;
		pad_params(n, is.rank, begin, end);
		shape_strides(&y->type.shape, ostr);
		Shape inner = is;
		for (int d = 0; d < is.rank; d++) {
			int64_t b = begin[d], e = end[d];
			if (b < 0) {
				in_off += -b * istr[d];
				inner.dim[d] += b;
				b = 0;
			}
			if (e < 0)
				inner.dim[d] += e;
			out_off += b * ostr[d];
		}
		cg_fill(c, y->id, attr_f(n, "value"), shape_numel(&y->type.shape));
		cg_copy(c, x->id, in_off, istr, y->id, out_off, ostr, &inner);
		return true;
	}
	default:
		return false;
	}
}

/* ---- gather ---------------------------------------------------------------------- */
/* out[o, p, i] = data[o, k, i] with k = indices[p] (+ n when negative); an
 * index outside [-n, n) makes the function return 1 (the harness reports
 * it) instead of reading outside data. */
bool cg_gather(CG *c, const Node *n)
{
	MFunc *f = c->f;
	const Value *x = n->in[0], *idx = n->in[1], *y = n->out[0];
	if ((idx->type.dtype != DT_I64 && idx->type.dtype != DT_I32) || c->ret < 0)
		return false;
	int axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += x->type.shape.rank;
	Rows r = cg_rows_of(&x->type.shape, axis, axis + 1);
	int64_t np = shape_numel(&idx->type.shape);
	int ov = cg_loop_begin(c, 0, r.outer, 1);
	int pv = cg_loop_begin(c, 0, np, 1);
	Affine ia = {0, {{pv, 1}}, 1};
	int k = mfunc_vreg(f, c->icls);
	if (idx->type.dtype == DT_I32)
		sel_assign(f, k, sel_op(f, SEL_LOAD_I32, cg_address(c, idx->id, &ia, 1), NULL, NULL));
	else
		sel_assign(f, k, cg_load(c, idx->id, &ia, false));
	int lneg = sel_new_label(f), lok = sel_new_label(f);
	sel_branch(f, sel_op(f, SEL_BRLT_I, R(k), sel_consti(f, 0), NULL), lneg);
	sel_branch(f, sel_op(f, SEL_BRLT_I, R(k), sel_consti(f, r.n), NULL), lok);
	sel_branch(f, sel_op(f, SEL_JUMP, NULL, NULL, NULL), c->err_label);
	sel_label(f, lneg);
	sel_assign(f, k, sel_op(f, SEL_ADD_I, R(k), sel_consti(f, r.n), NULL));
	sel_branch(f, sel_op(f, SEL_BRLT_I, R(k), sel_consti(f, 0), NULL), c->err_label);
	sel_label(f, lok);
	c->ranges[c->nranges++] = (Loop){k, 0, r.n, 1, -1, false, -1};
	/* i64 elements move as scalars: a vector of f32 lanes holds half as
	 * many (regression: tests/backend/gather_i64_rows.ir, found by the
	 * differential tester) */
	bool scalar = cg_is_i64(c, x->id);
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t vend = scalar ? 0 : cg_vend_of(c, 0, r.inner);
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : r.inner;
		if (hi <= lo)
			continue;
		int iv = cg_vloop_begin(c, lo, hi, vector);
		Affine xa = {0, {{ov, r.n * r.inner}, {k, r.inner}, {iv, 1}}, 3};
		Affine ya = {0, {{ov, np * r.inner}, {pv, r.inner}, {iv, 1}}, 3};
		cg_store(c, y->id, &ya, vector, cg_load(c, x->id, &xa, vector));
		cg_loop_end(c);
	}
	c->nranges--;
	cg_loop_end(c);
	cg_loop_end(c);
	return true;
}

