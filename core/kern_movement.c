/* Data movement: affine copies (transpose, slice, concat, pad, expand ...),
 * fills, and gather, built as Loop IR (lir.h): each node is one kernel
 * whose loop nests move the elements; the innermost loop of a nest is
 * vectorized (lir_vectorize: a scalar remainder on fixed vectors, strips
 * on scalable ones) when it moves 4-byte elements (f32, i32 as bits) that
 * the output stores contiguously and the input reads contiguously or
 * broadcasts; i64 elements and bools (bytes) move as scalars. */
#include <inttypes.h>

#include "cg.h"

/* ---- data movement: affine copies --------------------------------------------- */
/* Appends to k the loop nest of out[out_off + sum ocoef[d] i_d] = in[in_off
 * + sum icoef[d] i_d] over the index space `shape`.  Axes of size 1 are
 * dropped and adjacent axes that both sides walk as one (the outer's
 * stride the inner's times its size, a broadcast along both included) are
 * one loop: a contiguous copy is one flat loop, with one remainder. */
void cg_lir_copy(CG *c, LirKernel *k, int in_v, int64_t in_off, const int64_t *icoef, int out_v, int64_t out_off,
		 const int64_t *ocoef, const Shape *shape)
{
	if (shape_numel(shape) == 0)
		return;
	int64_t dim[MAX_RANK], ic[MAX_RANK], oc[MAX_RANK];
	int r = 0;
	for (int d = 0; d < shape->rank; d++) {
		int64_t n = shape->dim[d];
		if (n == 1)
			continue;
		if (r > 0 && oc[r - 1] == ocoef[d] * n && ic[r - 1] == icoef[d] * n) {
			dim[r - 1] *= n;
			oc[r - 1] = ocoef[d];
			ic[r - 1] = icoef[d];
			continue;
		}
		dim[r] = n;
		ic[r] = icoef[d];
		oc[r] = ocoef[d];
		r++;
	}
	if (r == 0) { /* one element */
		dim[0] = 1;
		ic[0] = oc[0] = 0;
		r = 1;
	}
	int bi = cg_lir_buffer(c, k, in_v), bo = cg_lir_buffer(c, k, out_v);
	LirAffine ia = lir_affine(in_off), oa = lir_affine(out_off);
	int var = -1;
	for (int d = 0; d < r; d++) {
		var = lir_for(k, 0, dim[d], 1);
		lir_term(k, &ia, var, ic[d]);
		lir_term(k, &oa, var, oc[d]);
	}
	lir_store(k, bo, &oa, lir_load(k, bi, &ia));
	for (int d = 0; d < r; d++)
		lir_end(k);
	/* (false, the nest unchanged, where the innermost loop does not
	 * store contiguously or does not read contiguously or broadcast) */
	if (!cg_is_i64(c, out_v) && !cg_is_i64(c, in_v) && cg_vectorize(c, k, var))
		return;
	/* element by element (a strided read): four per iteration, through
	 * pointers moved once per iteration */
	if (dim[r - 1] >= 8)
		lir_unroll(k, var, 4);
	lir_strength_reduce(k, var);
}

/* Appends to k: every element of out_v (numel of them) set to v; i32
 * elements to the bits of (int32_t)v, moved as an f32 lane. */
void cg_lir_fill(CG *c, LirKernel *k, int out_v, double v, int64_t numel)
{
	if (numel <= 0)
		return;
	int bo = cg_lir_buffer(c, k, out_v);
	LirExpr *e;
	bool i64 = cg_is_i64(c, out_v), byte = c->buf[out_v].esize == 1;
	bool i32 = out_v < c->p->g->nvalues && c->p->g->values[out_v]->type.dtype == DT_I32;
	if (i64 || byte) {
		e = lir_consti(k, byte ? v != 0 : (int64_t)v); /* (bools: bytes of 0 or 1) */
	} else if (i32) {
		/* the i32's bits as an f32 in read-only data, loaded (and
		 * broadcast) as one: a move, no arithmetic on them */
		int32_t bits = (int32_t)v;
		const char *sym = NULL;
		for (int i = 0; i < c->p->ndata && !sym; i++) {
			const Tensor *t = c->p->data[i].data;
			if (t->type.shape.rank == 0 && t->type.dtype == DT_I32 && ((const int32_t *)t->data)[0] == bits)
				sym = c->p->data[i].sym;
		}
		if (!sym) {
			Shape s = {0};
			Tensor *t = tensor_new(DT_I32, &s);
			((int32_t *)t->data)[0] = bits;
			sym = cg_add_data(c->p, t);
		}
		char name[40];
		snprintf(name, sizeof name, "(i32 %" PRId32 ")", bits);
		LirAffine z = lir_affine(0);
		e = lir_load(k, lir_data_buffer(k, name, 1, 4, sym), &z);
	} else {
		e = lir_constf(k, v);
	}
	int var = lir_for(k, 0, numel, 1);
	LirAffine oa = lir_affine(0);
	lir_term(k, &oa, var, 1);
	lir_store(k, bo, &oa, e);
	lir_end(k);
	if (!i64 && !byte)
		cg_vectorize(c, k, var);
}

/* Verify, print and lower k here; false on an error */
static bool run_kernel(CG *c, LirKernel *k)
{
	bool ok = cg_lir_run(c, k, true); /* (it reports a build error) */
	lir_kernel_free(k);
	return ok;
}

static LirKernel *new_kernel(CG *c, const char *what, int out_v)
{
	char *name = xasprintf("loops of %s: %s", cg_value_name(c, out_v), what);
	LirKernel *k = lir_kernel_new(name, c->lanes, c->scalable);
	free(name);
	return k;
}

void cg_copy(CG *c, int in_v, int64_t in_off, const int64_t *icoef, int out_v, int64_t out_off,
	     const int64_t *ocoef, const Shape *shape)
{
	if (shape_numel(shape) == 0)
		return;
	/* (out_v past the values: a kernel's scratch, or an output's slot) */
	bool slot = out_v >= c->p->g->nvalues && c->buf[out_v].kind == BUF_ARG;
	char what[200];
	snprintf(what, sizeof what, "copy of %s", cg_value_name(c, in_v));
	LirKernel *k = new_kernel(c, what, out_v);
	cg_lir_copy(c, k, in_v, in_off, icoef, out_v, out_off, ocoef, shape);
	int bo = lir_buffer_of(k, out_v);
	if (slot && bo >= 0) {
		free(k->bufs[bo].name);
		k->bufs[bo].name = xasprintf("(output %s)", cg_value_name(c, in_v));
		free(k->name);
		k->name = xasprintf("loops of (output %s): copy", cg_value_name(c, in_v));
	}
	run_kernel(c, k);
}

void cg_fill(CG *c, int out_v, double v, int64_t numel)
{
	if (numel <= 0)
		return;
	LirKernel *k = new_kernel(c, "fill", out_v);
	cg_lir_fill(c, k, out_v, v, numel);
	run_kernel(c, k);
}

/* pad in reflect or edge mode: per axis three regions (before, the data,
 * after), each an affine map of the output index (reflection runs the input
 * backwards, the edge repeats one element); every combination of regions
 * is one affine copy, all of them nests of one kernel.  Negative pads
 * crop first, as the reference does. */
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
	LirKernel *lk = new_kernel(c, reflect ? "pad (reflect)" : "pad (edge)", y->id);
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
			cg_lir_copy(c, lk, x->id, in_off, ic, y->id, out_off, ostr, &rs);
	}
	return run_kernel(c, lk);
}

bool cg_movement(CG *c, const Node *n)
{
	if (n->nin == 0)
		return false;
	const Value *x = n->in[0];
	Shape is = x->type.shape;
	int64_t istr[MAX_RANK], ostr[MAX_RANK], ic[MAX_RANK] = {0};
	shape_strides(&is, istr);
	const char *what = op_info[n->op].name;
	switch (n->op) {
	case OP_TRANSPOSE: {
		const Value *y = n->out[0];
		int perm[MAX_RANK];
		transpose_perm(n, is.rank, perm);
		shape_strides(&y->type.shape, ostr);
		for (int d = 0; d < is.rank; d++)
			ic[d] = istr[perm[d]];
		LirKernel *k = new_kernel(c, what, y->id);
		cg_lir_copy(c, k, x->id, 0, ic, y->id, 0, ostr, &y->type.shape);
		return run_kernel(c, k);
	}
	case OP_EXPAND: {
		const Value *y = n->out[0];
		shape_strides(&y->type.shape, ostr);
		broadcast_strides(&is, &y->type.shape, ic);
		LirKernel *k = new_kernel(c, what, y->id);
		cg_lir_copy(c, k, x->id, 0, ic, y->id, 0, ostr, &y->type.shape);
		return run_kernel(c, k);
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
		LirKernel *k = new_kernel(c, what, y->id);
		cg_lir_copy(c, k, x->id, off, ic, y->id, 0, ostr, &y->type.shape);
		return run_kernel(c, k);
	}
	case OP_CONCAT: {
		/* one nest per input, at its offset along the axis */
		const Value *y = n->out[0];
		int axis = (int)attr_i(n, "axis");
		if (axis < 0)
			axis += y->type.shape.rank;
		shape_strides(&y->type.shape, ostr);
		LirKernel *k = new_kernel(c, what, y->id);
		int64_t at = 0;
		for (int i = 0; i < n->nin; i++) {
			const Value *xi = n->in[i];
			int64_t s2[MAX_RANK];
			shape_strides(&xi->type.shape, s2);
			cg_lir_copy(c, k, xi->id, 0, s2, y->id, at * ostr[axis], ostr, &xi->type.shape);
			at += xi->type.shape.dim[axis];
		}
		return run_kernel(c, k);
	}
	case OP_SPLIT: {
		/* one nest per output that is read */
		int axis = (int)attr_i(n, "axis");
		if (axis < 0)
			axis += is.rank;
		LirKernel *k = new_kernel(c, what, n->out[0]->id);
		int64_t at = 0;
		for (int i = 0; i < n->nout; i++) {
			const Value *y = n->out[i];
			shape_strides(&y->type.shape, ostr);
			if (y->nuses > 0)
				cg_lir_copy(c, k, x->id, at * istr[axis], istr, y->id, 0, ostr, &y->type.shape);
			at += y->type.shape.dim[axis];
		}
		return run_kernel(c, k);
	}
	case OP_PAD: {
		if (strcmp(attr_s(n, "mode"), "constant") != 0)
			return cg_pad_mirror(c, n);
		/* the fill, then the data over it */
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
		LirKernel *k = new_kernel(c, what, y->id);
		cg_lir_fill(c, k, y->id, attr_f(n, "value"), shape_numel(&y->type.shape));
		cg_lir_copy(c, k, x->id, in_off, istr, y->id, out_off, ostr, &inner);
		return run_kernel(c, k);
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
	const Value *x = n->in[0], *idx = n->in[1], *y = n->out[0];
	if ((idx->type.dtype != DT_I64 && idx->type.dtype != DT_I32) || c->ret < 0)
		return false;
	int axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += x->type.shape.rank;
	Rows r = cg_rows_of(&x->type.shape, axis, axis + 1);
	int64_t np = shape_numel(&idx->type.shape);
	LirKernel *k = new_kernel(c, "gather", y->id);
	int bx = cg_lir_buffer(c, k, x->id), bi = cg_lir_buffer(c, k, idx->id), by = cg_lir_buffer(c, k, y->id);
	/* (no loop over an axis of one element) */
	int ov = r.outer == 1 ? -1 : lir_for(k, 0, r.outer, 1);
	int pv = np == 1 ? -1 : lir_for(k, 0, np, 1);
	LirAffine ia = lir_affine(0);
	if (pv >= 0)
		lir_term(k, &ia, pv, 1);
	LirExpr *ie = lir_load_as(k, bi, &ia, idx->type.dtype == DT_I32 ? LIR_AS_I32 : LIR_AS_ELEM);
	int kv = lir_data_index(k, ie, r.n);
	int iv = r.inner == 1 ? -1 : lir_for(k, 0, r.inner, 1);
	LirAffine xa = lir_affine(0), ya = lir_affine(0);
	int vars[3] = {ov, pv, iv};
	int64_t xc[3] = {r.n * r.inner, 0, 1}, yc[3] = {np * r.inner, r.inner, 1};
	for (int i = 0; i < 3; i++)
		if (vars[i] >= 0) {
			lir_term(k, &xa, vars[i], xc[i]);
			lir_term(k, &ya, vars[i], yc[i]);
		}
	lir_term(k, &xa, kv, r.inner);
	lir_store(k, by, &ya, lir_load(k, bx, &xa));
	for (int i = 0; i < 3; i++)
		if (vars[i] >= 0)
			lir_end(k);
	/* i64 elements move as scalars: a vector of f32 lanes holds half as
	 * many (regression: tests/backend/gather_i64_rows.ir, found by the
	 * differential tester) */
	if (iv >= 0 && !cg_is_i64(c, x->id))
		cg_vectorize(c, k, iv);
	return run_kernel(c, k);
}
