/* Convolution (direct, over a padded copy of the input) and pooling, built
 * as Loop IR. */
#include "cg.h"

/* ---- convolution and pooling ------------------------------------------------------ */
/* A scratch buffer in the workspace for this node (index past the values),
 * past the plan: its bytes are free again after this kernel. */
int cg_scratch(CG *c, int64_t numel)
{
	int id = c->p->g->nvalues + c->node->id;
	c->buf[id] = (Buf){BUF_WS, 0, NULL, cg_extra_alloc(c, numel * 4, c->pos), numel, 4};
	c->base[id] = -1;
	return id;
}

/* A second scratch buffer for this node, as cg_scratch (a kernel that needs
 * two at once). */
int cg_scratch2(CG *c, int64_t numel)
{
	const Graph *g = c->p->g;
	int id = g->nvalues + g->nnodes + g->noutputs + c->node->id;
	c->buf[id] = (Buf){BUF_WS, 0, NULL, cg_extra_alloc(c, numel * 4, c->pos), numel, 4};
	c->base[id] = -1;
	return id;
}

/* x padded by (pb, pe) on each spatial axis with `fill`, in a scratch
 * buffer; returns it (or x itself when there is nothing to pad) and the
 * padded spatial sizes. */
static int padded(CG *c, const Value *x, const ConvWindow *w, const int64_t *extra_end, double fill, int64_t *psize)
{
	const Shape *xs = &x->type.shape;
	bool any = false;
	Shape ps = *xs;
	for (int j = 0; j < w->ns; j++) {
		psize[j] = w->in[j] + w->pb[j] + w->pe[j] + extra_end[j];
		ps.dim[2 + j] = psize[j];
		any |= psize[j] != w->in[j];
	}
	if (!any)
		return x->id;
	int id = cg_scratch(c, shape_numel(&ps));
	cg_base_of(c, id);
	cg_fill(c, id, fill, shape_numel(&ps));
	int64_t istr[MAX_RANK], pstr[MAX_RANK], off = 0;
	shape_strides(xs, istr);
	shape_strides(&ps, pstr);
	for (int j = 0; j < w->ns; j++)
		off += w->pb[j] * pstr[2 + j];
	cg_copy(c, x->id, 0, istr, id, off, pstr, xs);
	return id;
}

/* ---- register-blocked convolution ---------------------------------------- */
/* The input of a blocked convolution: padded, and split by stride phase so
 * that every tap reads a contiguous row.  Along spatial axis j with stride
 * s, padded position i s + p (phase p in [0, nph)) is element i of phase p:
 * the buffer is [N][C][nph0][nph1][P0][P1], and tap t of an output at o
 * reads phase (t dil) mod s, element o + (t dil) / s.  nph is 1 for a
 * one-tap axis (only phase 0 is read), s otherwise; P covers every
 * element an output reads. */
typedef struct {
	int id;                 /* the buffer (x itself when nothing changes) */
	int64_t nph[2], P[2];
} Phased;

static int64_t ceil_div(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* The phases' sizes; false when the input is read as it is (stride 1, no
 * padding). */
static bool phase_shape(const ConvWindow *w, Phased *ph)
{
	bool same = true;
	for (int j = 0; j < 2; j++) {
		int64_t s = w->stride[j];
		ph->nph[j] = w->k[j] == 1 ? 1 : s;
		ph->P[j] = w->out[j] + (w->k[j] - 1) * w->dil[j] / s;
		same &= s == 1 && w->pb[j] == 0 && ph->P[j] == w->in[j];
	}
	return !same;
}

/* Appends to k, where it is being built, the phase split of nch channels
 * of the input (buffer bx, the first channel's element at xa) into buffer
 * bs from its start: per phase, the fill value around the rectangle of
 * elements that come from the input, then that rectangle (a vector copy
 * when its rows are contiguous in the input, its remainder as `tail`
 * says, else four elements per iteration through pointers). */
static void phase_into(LirKernel *k, int bx, const LirAffine *xa, int bs, int64_t nch, const ConvWindow *w,
		       const Phased *ph, double fill, LirTail tail)
{
	int64_t H = w->in[0], W = w->in[1];
	int64_t plane = ph->P[0] * ph->P[1], nplanes = ph->nph[0] * ph->nph[1];
	for (int64_t q = 0; q < nplanes; q++) {
		int64_t p[2] = {q / ph->nph[1], q % ph->nph[1]}, i0[2], cnt[2], src0[2];
		for (int j = 0; j < 2; j++) {
			int64_t s = w->stride[j], in = j ? W : H;
			/* padded position i s + p is input element i s + p - pb */
			i0[j] = w->pb[j] > p[j] ? ceil_div(w->pb[j] - p[j], s) : 0;
			int64_t i1 = ceil_div(in + w->pb[j] - p[j], s);
			if (i1 > ph->P[j])
				i1 = ph->P[j];
			if (i0[j] > ph->P[j])
				i0[j] = ph->P[j];
			cnt[j] = i1 > i0[j] ? i1 - i0[j] : 0;
			src0[j] = i0[j] * s + p[j] - w->pb[j];
		}
		bool empty = cnt[0] == 0 || cnt[1] == 0;
		int64_t r0 = empty ? 0 : i0[0], r1 = empty ? 0 : i0[0] + cnt[0];
		int64_t c0 = empty ? ph->P[1] : i0[1], c1 = empty ? ph->P[1] : i0[1] + cnt[1];
		/* boxes: rows before, rows after (whole rows: one run each),
		 * columns before and after within the rectangle's rows */
		int64_t box[4][4] = {{0, empty ? ph->P[0] : r0, 0, ph->P[1]}, {r1, ph->P[0], 0, ph->P[1]}, {r0, r1, 0, c0},
				     {r0, r1, c1, ph->P[1]}};
		for (int b = 0; b < 4; b++) {
			int64_t nr = box[b][1] - box[b][0], ncol = box[b][3] - box[b][2];
			if (nr <= 0 || ncol <= 0)
				continue;
			bool runs = ncol == ph->P[1];
			int cv = lir_for(k, 0, nch, 1);
			int rv = runs ? -1 : lir_for(k, 0, nr, 1);
			int xv = lir_for(k, 0, runs ? nr * ncol : ncol, 1);
			LirAffine oa = lir_affine(q * plane + box[b][0] * ph->P[1] + box[b][2]);
			lir_term(k, &oa, cv, nplanes * plane);
			if (rv >= 0)
				lir_term(k, &oa, rv, ph->P[1]);
			lir_term(k, &oa, xv, 1);
			lir_store(k, bs, &oa, lir_constf(k, fill));
			lir_end(k);
			if (rv >= 0)
				lir_end(k);
			lir_end(k);
			lir_vectorize(k, xv, tail);
		}
		if (empty)
			continue;
		int cv = lir_for(k, 0, nch, 1), rv = lir_for(k, 0, cnt[0], 1), jv = lir_for(k, 0, cnt[1], 1);
		LirAffine ia = *xa, oa = lir_affine(q * plane + i0[0] * ph->P[1] + i0[1]);
		ia.off += src0[0] * W + src0[1];
		lir_term(k, &ia, cv, H * W);
		lir_term(k, &ia, rv, w->stride[0] * W);
		lir_term(k, &ia, jv, w->stride[1]);
		lir_term(k, &oa, cv, nplanes * plane);
		lir_term(k, &oa, rv, ph->P[1]);
		lir_term(k, &oa, jv, 1);
		lir_store(k, bs, &oa, lir_load(k, bx, &ia));
		lir_end(k);
		lir_end(k);
		lir_end(k);
		if (!lir_vectorize(k, jv, tail)) {
			if (cnt[1] >= 8)
				lir_unroll(k, jv, 4);
			lir_strength_reduce(k, jv);
		}
	}
}

static double param_or(const Target *t, const char *name, double dflt)
{
	const ParamInfo *p = target_param(t, name);
	return p && p->n ? p->values[0] : dflt;
}

static ConvMachine conv_machine(CG *c)
{
	ConvMachine m;
	const RegClassInfo *vc = &c->t->regclasses[target_root_class(c->t, c->vcls)];
	m.regs = 0;
	for (int r = 0; r < vc->nregs; r++)
		m.regs += !vc->reserved[r];
	m.fma_units = param_or(c->t, "fma_units", 1);
	m.fma_latency = param_or(c->t, "fma_latency", 4);
	m.load_ports = param_or(c->t, "load_ports", 1);
	m.store_ports = param_or(c->t, "store_ports", 1);
	m.lanes = c->lanes;
	return m;
}

/* Vector registers a block holds: its accumulators, the input vectors of
 * one tap (shared by the block's channels; one when there is one
 * channel: each is read by one FMA) and a broadcast weight. */
int cg_conv_block_regs(int mb, int rb, int nv)
{
	return mb * rb * nv + (mb > 1 ? rb * nv : 1) + 1;
}

/* Estimated cycles of one block over `work` taps (input channels x window
 * taps): per tap, FMAs on the FMA units, input loads and weight broadcasts
 * on the load ports, and no faster than the accumulators' chains allow:
 * each takes one FMA per tap, and the units stay busy only with half as
 * many chains again as latency x units (the loads and broadcasts feeding
 * each tap interleave with them; measured: a 6 x 2 x 1 block beats a
 * 2 x 1 x 4 one by 10-25 % though both have the FMAs to fill the units).
 * Then the block's stores and a loop overhead. */
static double block_cycles(const ConvMachine *m, int mb, int rb, int nv, double work)
{
	double f = (double)mb * rb * nv, l = (double)rb * nv + mb;
	double t = f / m->fma_units;
	if (l / m->load_ports > t)
		t = l / m->load_ports;
	if (1.5 * m->fma_latency > t)
		t = 1.5 * m->fma_latency;
	return work * t + f / m->store_ports + 8;
}

/* The blocks along an output row of ow elements with nv vectors per block:
 * full blocks, one block of the whole vectors left, a masked vector. */
static double row_cycles(const ConvMachine *m, int mb, int rb, int nv, int64_t ow, double work)
{
	int64_t wb = (int64_t)nv * m->lanes, full = ow / wb, rest = ow - full * wb;
	double cy = (double)full * block_cycles(m, mb, rb, nv, work);
	if (rest >= m->lanes)
		cy += block_cycles(m, mb, rb, (int)(rest / m->lanes), work);
	if (rest % m->lanes)
		cy += block_cycles(m, mb, rb, 1, work);
	return cy;
}

static double conv_cycles(const ConvMachine *m, int mb, int rb, int nv, int64_t Mg, int64_t oh, int64_t ow, double work)
{
	double cy = 0;
	for (int mi = 0; mi < 2; mi++) {
		int64_t nm = mi == 0 ? Mg / mb : 1;
		int b = mi == 0 ? mb : (int)(Mg % mb);
		if (!nm || !b)
			continue;
		for (int ri = 0; ri < 2; ri++) {
			int64_t nr = ri == 0 ? oh / rb : 1;
			int r = ri == 0 ? rb : (int)(oh % rb);
			if (!nr || !r)
				continue;
			cy += (double)nm * nr * row_cycles(m, b, r, nv, ow, work);
		}
	}
	return cy;
}

/* The block minimizing the estimated cycles among those whose registers
 * fit; *cycles receives its estimate (per image and group). */
ConvBlock cg_conv_block(const ConvMachine *m, int64_t Mg, int64_t oh, int64_t ow, double work, double *cycles)
{
	ConvBlock best = {1, 1, 1};
	double bc = -1;
	int64_t vecs = (ow + m->lanes - 1) / m->lanes;
	for (int mb = 1; mb <= 16 && mb <= Mg; mb++)
		for (int rb = 1; rb <= 8 && rb <= oh; rb++)
			for (int nv = 1; nv <= 6 && nv <= vecs; nv++) {
				if (cg_conv_block_regs(mb, rb, nv) > m->regs)
					continue;
				double cy = conv_cycles(m, mb, rb, nv, Mg, oh, ow, work);
				if (bc < 0 || cy < bc) {
					bc = cy;
					best = (ConvBlock){mb, rb, nv};
				}
			}
	*cycles = bc;
	return best;
}

/* The epilogue reads an operand of y's shape or one broadcast along both
 * spatial axes: then the rows of y can be one axis of oh * ow elements. */
static bool epilogue_merges_rows(const CG *c, const Value *y)
{
	const Shape *ys = &y->type.shape;
	for (int i = 0; i < c->nepi; i++) {
		const Node *e = c->epi[i];
		if (!cg_is_elementwise(e->op))
			return false;
		if (e->out[0]->type.shape.rank != ys->rank)
			return false;
		for (int k = 0; k < e->nin; k++) {
			const Shape *s = &e->in[k]->type.shape;
			int off = ys->rank - s->rank;
			int64_t h = off <= 2 ? s->dim[2 - off] : 1, w = off <= 3 ? s->dim[3 - off] : 1;
			if (s->rank < 1)
				continue;
			if (!((h == 1 && w == 1) || (h == ys->dim[2] && w == ys->dim[3])))
				return false;
		}
	}
	return true;
}

typedef struct {
	CG *c;
	LirKernel *k;
	const Value *y, *b;
	const ConvWindow *w;
	const Phased *ph;
	int bx, bw, bb;
	int64_t C, Cg, Mg, T;
	int64_t rows, cols;     /* the output rows and their length as the loops see them */
	bool merged;            /* rows of y merged into one (1 x oh * ow) */
	int nv, gv;
	/* the slice of input channels the blocks sum over: [c0, c0 + cn) plus
	 * the variable cbv (-1: none); the first slice starts from the bias,
	 * the others from the partial sums in y; the last one stores through
	 * the epilogue, the others their partial sums */
	int cbv;
	int64_t c0, cn;
	bool first, last;
	bool local;             /* bx is the phase split of group gv of image nv */
	int yb;                 /* the output's buffer, [N][G Mg][rows][cols] by ystr */
	int64_t ystr[4];
	bool plain;             /* the last slice stores too (no epilogue: y is NULL) */
	int64_t xoff, yoff;     /* where the input and the output start in bx and yb */
} ConvK;

/* y's index of block element (i, r, j) at (mv, rv, ov) */
static void y_dims(ConvK *q, int mv, int i, int rv, int r, int ov, int j, LirAffine *dims)
{
	LirKernel *k = q->k;
	dims[0] = lir_affine(0);
	lir_term(k, &dims[0], q->nv, 1);
	dims[1] = lir_affine(i);
	lir_term(k, &dims[1], q->gv, q->Mg);
	lir_term(k, &dims[1], mv, 1);
	dims[2] = lir_affine(q->merged ? 0 : r);
	if (!q->merged)
		lir_term(k, &dims[2], rv, 1);
	dims[3] = lir_affine((int64_t)j * q->c->lanes);
	lir_term(k, &dims[3], ov, 1);
	/* merged rows of one column: the flat index is the row's (an epilogue
	 * maps the index along y's axes of more than one element; regression:
	 * tests/backend/conv_one_column.ir) */
	if (q->merged && q->y && q->y->type.shape.rank == 4 && q->y->type.shape.dim[3] == 1) {
		dims[2] = dims[3];
		dims[3] = lir_affine(0);
	}
}

/* y's flat index of block element (i, r, j) */
static LirAffine y_flat(ConvK *q, int mv, int i, int rv, int r, int ov, int j)
{
	LirAffine dims[4], ya = lir_affine(q->yoff);
	y_dims(q, mv, i, rv, r, ov, j, dims);
	for (int d = 0; d < 4; d++) {
		ya.off += q->ystr[d] * dims[d].off;
		for (int t = 0; t < dims[d].n; t++)
			lir_term(q->k, &ya, dims[d].t[t].var, q->ystr[d] * dims[d].t[t].coef);
	}
	return ya;
}

/* One block at channel mv, row rv, column ov: accumulators across the
 * input channels' loop, every window tap unrolled inside it. */
static void conv_block(ConvK *q, int mv, int mb, int rv, int rb, int ov, int nv)
{
	CG *c = q->c;
	LirKernel *k = q->k;
	const ConvWindow *w = q->w;
	const Phased *ph = q->ph;
	int acc[16 * 8 * 6];
	int yb = q->yb;
#define ACC(i, r, j) acc[((i) * rb + (r)) * nv + (j)]
	for (int i = 0; i < mb; i++) {
		LirExpr *init = NULL;
		for (int r = 0; r < rb; r++)
			for (int j = 0; j < nv; j++) {
				ACC(i, r, j) = lir_temp(k, SORT_V);
				if (!q->first) {
					LirAffine ya = y_flat(q, mv, i, rv, r, ov, j);
					init = lir_load(k, yb, &ya);
				} else if (q->b) {
					LirAffine ba = lir_affine(i);
					lir_term(k, &ba, q->gv, q->Mg);
					lir_term(k, &ba, mv, 1);
					init = lir_load(k, q->bb, &ba);
				} else {
					init = lir_constf(k, 0.0);
				}
				lir_assign(k, ACC(i, r, j), init);
			}
	}
	int civ = lir_for(k, 0, q->cn, 1);
	int64_t plane = ph->P[0] * ph->P[1], nplanes = ph->nph[0] * ph->nph[1];
	for (int64_t t0 = 0; t0 < w->k[0]; t0++)
		for (int64_t t1 = 0; t1 < w->k[1]; t1++) {
			int64_t d0 = t0 * w->dil[0], d1 = t1 * w->dil[1];
			int64_t phase = ph->nph[0] == 1 && ph->nph[1] == 1 ? 0
				      : (d0 % w->stride[0]) * ph->nph[1] + d1 % w->stride[1];
			int64_t e0 = d0 / w->stride[0], e1 = d1 / w->stride[1];
			/* the tap's input vectors, shared by the block's channels */
			int xv[8 * 6];
			LirAffine xa_of[8 * 6];
			for (int r = 0; r < rb; r++)
				for (int j = 0; j < nv; j++) {
					LirAffine xa = lir_affine(q->xoff + q->c0 * nplanes * plane + phase * plane +
								  (q->merged ? 0 : (r + e0) * ph->P[1]) + (int64_t)j * c->lanes + e1);
					if (!q->local) { /* (a phase buffer holds one group of one image) */
						lir_term(k, &xa, q->nv, q->C * nplanes * plane);
						lir_term(k, &xa, q->gv, q->Cg * nplanes * plane);
					}
					lir_term(k, &xa, civ, nplanes * plane);
					if (q->cbv >= 0)
						lir_term(k, &xa, q->cbv, nplanes * plane);
					if (!q->merged)
						lir_term(k, &xa, rv, ph->P[1]);
					lir_term(k, &xa, ov, 1);
					xa_of[r * nv + j] = xa;
					if (mb > 1) { /* (one channel: each is read once, by its FMA) */
						xv[r * nv + j] = lir_temp(k, SORT_V);
						lir_assign(k, xv[r * nv + j], lir_load(k, q->bx, &xa));
					}
				}
			for (int i = 0; i < mb; i++) {
				LirAffine wa = lir_affine(i * q->Cg * q->T + q->c0 * q->T + t0 * w->k[1] + t1);
				lir_term(k, &wa, q->gv, q->Mg * q->Cg * q->T);
				lir_term(k, &wa, mv, q->Cg * q->T);
				lir_term(k, &wa, civ, q->T);
				if (q->cbv >= 0)
					lir_term(k, &wa, q->cbv, q->T);
				int wt = lir_temp(k, SORT_V);
				lir_assign(k, wt, lir_load(k, q->bw, &wa));
				for (int r = 0; r < rb; r++)
					for (int j = 0; j < nv; j++)
						lir_assign(k, ACC(i, r, j),
							   lir_op(k, SEL_FMA_V, lir_ref(k, wt),
								  mb > 1 ? lir_ref(k, xv[r * nv + j]) : lir_load(k, q->bx, &xa_of[r * nv + j]),
								  lir_ref(k, ACC(i, r, j))));
			}
		}
	lir_end(k);
	lir_strength_reduce(k, civ);
	if (!q->last || q->plain) { /* partial sums, or a plain result */
		for (int i = 0; i < mb; i++)
			for (int r = 0; r < rb; r++)
				for (int j = 0; j < nv; j++) {
					LirAffine ya = y_flat(q, mv, i, rv, r, ov, j);
					lir_store(k, yb, &ya, lir_ref(k, ACC(i, r, j)));
				}
		return;
	}
	/* the block through the group's epilogue; a heavy one (transcendentals)
	 * after the whole block is in y, one vector at a time */
	bool heavy = c->epi && cg_epilogue_heavy(c);
	LirAffine dims[4];
	for (int pass = heavy ? 0 : 1; pass < 2; pass++)
		for (int i = 0; i < mb; i++)
			for (int r = 0; r < rb; r++)
				for (int j = 0; j < nv; j++) {
					LirAffine ya = y_flat(q, mv, i, rv, r, ov, j);
					if (pass == 0) {
						lir_store(k, yb, &ya, lir_ref(k, ACC(i, r, j)));
						continue;
					}
					int v = ACC(i, r, j);
					if (heavy) {
						v = lir_temp(k, SORT_V);
						lir_assign(k, v, lir_load(k, yb, &ya));
					}
					y_dims(q, mv, i, rv, r, ov, j, dims);
					cg_lir_result_store(c, k, q->y, v, dims);
				}
#undef ACC
}

/* The blocks along a row (ov loops: full blocks, the whole vectors left,
 * a masked vector). */
static void conv_row(ConvK *q, int mv, int mb, int rv, int rb, int nv)
{
	LirKernel *k = q->k;
	int lanes = q->c->lanes;
	int64_t wb = (int64_t)nv * lanes, full = q->cols / wb * wb, rest = q->cols - full;
	if (full > 0) {
		int ov = lir_for(k, 0, full, wb);
		k->vars[ov].kind = LIR_LOOP_VECTOR;
		conv_block(q, mv, mb, rv, rb, ov, nv);
		lir_end(k);
	}
	int64_t whole = rest / lanes * lanes;
	if (whole > 0) {
		int ov = lir_for(k, full, full + whole, whole);
		k->vars[ov].kind = LIR_LOOP_VECTOR;
		conv_block(q, mv, mb, rv, rb, ov, (int)(whole / lanes));
		lir_end(k);
	}
	if (rest > whole) {
		int ov = lir_for(k, full + whole, q->cols, 1);
		k->vars[ov].kind = LIR_LOOP_MASKED;
		conv_block(q, mv, mb, rv, rb, ov, 1);
		lir_end(k);
	}
}

/* Every block of one slice of input channels: output channels, rows,
 * then the row's columns, each with its remainder. */
static void emit_blocks(ConvK *q, const ConvBlock *bk, int64_t Mg, int64_t rows)
{
	LirKernel *k = q->k;
	int64_t m_main = Mg / bk->mb * bk->mb, r_main = rows / bk->rb * bk->rb;
	for (int mi = 0; mi < 2; mi++) {
		int64_t mlo = mi ? m_main : 0, mhi = mi ? Mg : m_main;
		int mb = mi ? (int)(Mg - m_main) : bk->mb;
		if (mhi <= mlo)
			continue;
		int mv = lir_for(k, mlo, mhi, mb);
		for (int ri = 0; ri < 2; ri++) {
			int64_t rlo = ri ? r_main : 0, rhi = ri ? rows : r_main;
			int rb = ri ? (int)(rows - r_main) : bk->rb;
			if (rhi <= rlo)
				continue;
			int rv = lir_for(k, rlo, rhi, rb);
			conv_row(q, mv, mb, rv, rb, bk->nv);
			lir_end(k);
		}
		lir_end(k);
	}
}

/* Input channels per slice: a channel's rows under one band of output
 * rows (every phase) plus its weights of one channel block, in half of
 * the L2 cache (the .md's l2_bytes; none: one slice).  (Half of L1
 * instead made resnet18's 56 x 56 layers 10 % slower: five slices' partial
 * sums through y cost more than the band's rows coming from L2.) */
static int64_t slice_channels(CG *c, const ConvWindow *w, const Phased *ph, const ConvBlock *bk, int64_t Cg, int64_t T)
{
	double l2 = param_or(c->t, "l2_bytes", 0);
	if (l2 <= 0)
		return Cg;
	int64_t band = bk->rb + (w->k[0] - 1) * w->dil[0] / w->stride[0];
	int64_t per = ph->nph[0] * ph->nph[1] * band * ph->P[1] * 4 + (int64_t)bk->mb * T * 4;
	int64_t cb = (int64_t)(l2 / 2) / per;
	if (cb < 8)
		cb = 8;
	return cb < Cg ? cb : Cg;
}

/* The slices of input channels (in half of L2, partial sums through the
 * output), each with every block of the output: the first slice, a loop of
 * middle ones, the last. */
static void emit_slices(ConvK *q, const ConvBlock *bk, int64_t Mg, const char *yname)
{
	LirKernel *k = q->k;
	int64_t Cg = q->Cg, rows = q->rows;
	int64_t cb = slice_channels(q->c, q->w, q->ph, bk, Cg, q->T), nslices = (Cg + cb - 1) / cb;
	cb = (Cg + nslices - 1) / nslices;
	nslices = (Cg + cb - 1) / cb;
	if (nslices > 1)
		lir_note(k, "input channels in %lld slices of %lld (partial sums in %s)", (long long)nslices, (long long)cb,
			 yname);
	for (int part = 0; part < 3; part++) {
		int64_t lo = part == 0 ? 0 : part == 1 ? cb : (nslices - 1) * cb;
		if ((part == 1 && nslices < 3) || (part == 2 && nslices < 2))
			continue;
		q->first = part == 0;
		q->last = part == 2 || nslices == 1;
		q->c0 = part == 1 ? 0 : lo;
		q->cn = part == 2 ? Cg - lo : cb;
		q->cbv = part == 1 ? lir_for(k, cb, (nslices - 1) * cb, cb) : -1;
		emit_blocks(q, bk, Mg, rows);
		if (part == 1)
			lir_end(k);
	}
}

/* ---- Winograd F(2, 3) along the rows ------------------------------------- */
/* A 3x3, stride-1 convolution as F(2, 3) along the output rows and direct
 * along each row: per pair of output rows (2i, 2i + 1) and input channel,
 * the four input rows 2i .. 2i + 3 (of the padded input) become
 *   V0 = d0 - d2, V1 = d1 + d2, V2 = d2 - d1, V3 = d1 - d3     (B^T d)
 * and the weights' three rows per (m, c) become, at compile time,
 *   U0 = g0, U1 = (g0 + g1 + g2) / 2, U2 = (g0 - g1 + g2) / 2, U3 = g2 (G g);
 * each Vx row is convolved with the 1 x 3 row Ux over the channels (a
 * grouped 1 x 3 convolution of 4 groups, on the register-blocked kernel
 * above) into Mx, and the two output rows are
 *   y(2i) = M0 + M1 + M2,  y(2i + 1) = M1 - M2 - M3                 (A^T M)
 * (then the bias and the epilogue).  12 multiply-adds per channel for two
 * outputs instead of 18; the transforms are adds and subtractions only
 * (coefficients 1 and 1/2: no growth of rounding errors). */
static bool conv_winograd(CG *c, const Node *n)
{
	const Value *x = n->in[0], *wv = n->in[1], *b = n->nin == 3 ? n->in[2] : NULL, *y = n->out[0];
	const Shape *xs = &x->type.shape, *ws = &wv->type.shape;
	ConvWindow w;
	if (c->scalable || xs->rank != 4 || c->lanes < 2 || target_class_for(c->t, SORT_M) < 0 ||
	    !conv_window(n, xs, ws->dim + 2, false, &w) || w.ns != 2)
		return false;
	int64_t N = xs->dim[0], C = xs->dim[1], M = ws->dim[0], G = attr_i(n, "group");
	int64_t OH = w.out[0], OW = w.out[1];
	if (N != 1 || G != 1 || w.k[0] != 3 || w.k[1] != 3 || w.stride[0] != 1 || w.stride[1] != 1 || w.dil[0] != 1 ||
	    w.dil[1] != 1 || OH < 2 || C < 16 || M < 16)
		return false;
	const Tensor *g = cg_const_data(c, wv->id);
	if (!g || g->type.dtype != DT_F32)
		return false;
	int64_t th = (OH + 1) / 2, PW = OW + 2;
	/* the cost model: the direct blocks against the 1 x 3 ones and the
	 * transforms' loads and stores (V written and read, Mx written and read) */
	ConvMachine m = conv_machine(c);
	double direct, wino;
	cg_conv_block(&m, M, OH, OW, (double)C * 9, &direct);
	ConvBlock bk = cg_conv_block(&m, M, th, OW, (double)C * 3, &wino);
	if (direct < 0 || wino < 0)
		return false;
	double moves = (double)(C * (2 * th + 2) * PW * 2 + 4 * C * th * PW * 2 + 4 * M * th * OW * 2) / m.lanes / m.load_ports;
	double total = 4 * wino + moves;
	if (total > 0.9 * direct)
		return false;
	/* U [4 M][C][1][3] at compile time */
	Shape us = {4, {4 * M, C, 1, 3}};
	Tensor *ut = tensor_new(DT_F32, &us);
	const float *gw = g->data;
	float *u = ut->data;
	for (int64_t mm = 0; mm < M; mm++)
		for (int64_t cc = 0; cc < C; cc++)
			for (int kw = 0; kw < 3; kw++) {
				const float *gg = gw + ((mm * C + cc) * 3) * 3 + kw;
				double g0 = gg[0], g1 = gg[3], g2 = gg[6];
				double uv[4] = {g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2};
				for (int e = 0; e < 4; e++)
					u[((e * M + mm) * C + cc) * 3 + kw] = (float)uv[e];
			}
	const char *usym = cg_const_transform(c, wv->id, ut); /* (g is not read after this) */
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: conv", y->name);
	lir_note(k, "Winograd F(2, 3) along the rows: 4 x (1 x 3) convolutions of %lld channels, estimated %.0f cycles (direct: %.0f)",
		 (long long)C, total, direct);
	lir_note(k, "register block: %d channels x %d rows x %d vectors (%d registers of %d)", bk.mb, bk.rb, bk.nv,
		 cg_conv_block_regs(bk.mb, bk.rb, bk.nv), m.regs);
	/* the padded input: rows [0, 2 th + 2), columns [0, OW + 2) */
	ConvWindow wp = w;
	wp.out[0] = 2 * th;
	Phased pp;
	phase_shape(&wp, &pp);
	int bxin = cg_lir_buffer(c, k, x->id);
	/* one scratch (the node's): the padded input, V [4][C][th][PW], Mx [4][M][th][OW] */
	int64_t xn = C * pp.P[0] * pp.P[1], vn = 4 * C * th * PW, mn = 4 * M * th * OW;
	int sid = cg_scratch(c, xn + vn + mn);
	cg_base_of(c, sid);
	int bs = cg_lir_buffer(c, k, sid), bxp = bs, bv = bs, bm = bs;
	LirAffine xa0 = lir_affine(0);
	phase_into(k, bxin, &xa0, bs, C, &wp, &pp, 0.0, c->tail);
	{
		int cv = lir_for(k, 0, C, 1), iv = lir_for(k, 0, th, 1), jv = lir_for(k, 0, PW, 1);
		int d[4];
		for (int a = 0; a < 4; a++) {
			LirAffine da = lir_affine(a * pp.P[1]);
			lir_term(k, &da, cv, pp.P[0] * pp.P[1]);
			lir_term(k, &da, iv, 2 * pp.P[1]);
			lir_term(k, &da, jv, 1);
			d[a] = lir_temp(k, SORT_V);
			lir_assign(k, d[a], lir_load(k, bxp, &da));
		}
		static const int lhs[4] = {0, 1, 2, 1}, rhs[4] = {2, 2, 1, 3};
		static const SelOp op[4] = {SEL_SUB_V, SEL_ADD_V, SEL_SUB_V, SEL_SUB_V};
		for (int e = 0; e < 4; e++) {
			LirAffine va = lir_affine(xn + e * C * th * PW);
			lir_term(k, &va, cv, th * PW);
			lir_term(k, &va, iv, PW);
			lir_term(k, &va, jv, 1);
			lir_store(k, bv, &va, lir_op(k, op[e], lir_ref(k, d[lhs[e]]), lir_ref(k, d[rhs[e]]), NULL));
		}
		lir_end(k);
		lir_end(k);
		lir_end(k);
		lir_vectorize(k, jv, LIR_TAIL_MASKED);
	}
	/* Mx [4][M][th][OW]: a grouped 1 x 3 convolution of V by U */
	ConvWindow w3 = {2, {th, PW, 0}, {1, 3, 0}, {1, 1, 0}, {1, 1, 0}, {0, 0, 0}, {0, 0, 0}, {th, OW, 0}};
	Phased p3;
	phase_shape(&w3, &p3);
	ConvK q = {c, k, NULL, NULL, &w3, &p3, bv, lir_data_buffer(k, "(winograd weights)", 4 * M * C * 3, 4, usym), -1,
		   4 * C, C, M, 3, th, OW, false, -1, -1, -1, 0, 0, false, false, false, bm,
		   {4 * M * th * OW, th * OW, OW, 1}, true, xn, xn + vn};
	q.nv = lir_for(k, 0, 1, 1);
	q.gv = lir_for(k, 0, 4, 1);
	emit_slices(&q, &bk, M, "(winograd products)");
	lir_end(k);
	lir_end(k);
	/* y = A^T Mx (+ bias), through the epilogue */
	int bb = b ? cg_lir_buffer(c, k, b->id) : -1;
	for (int part = 0; part < 2; part++) {
		int64_t ilo = part ? OH / 2 : 0, ihi = part ? th : OH / 2;
		if (ihi <= ilo)
			continue;
		int mv = lir_for(k, 0, M, 1), iv = lir_for(k, ilo, ihi, 1), ov = lir_for(k, 0, OW, 1);
		int mx[4];
		for (int e = 0; e < 4; e++) {
			LirAffine ma = lir_affine(xn + vn + e * M * th * OW);
			lir_term(k, &ma, mv, th * OW);
			lir_term(k, &ma, iv, OW);
			lir_term(k, &ma, ov, 1);
			mx[e] = lir_temp(k, SORT_V);
			lir_assign(k, mx[e], lir_load(k, bm, &ma));
		}
		for (int a = 0; a < (part ? 1 : 2); a++) {
			LirExpr *v = a == 0 ? lir_op(k, SEL_ADD_V, lir_op(k, SEL_ADD_V, lir_ref(k, mx[0]), lir_ref(k, mx[1]), NULL),
						      lir_ref(k, mx[2]), NULL)
					    : lir_op(k, SEL_SUB_V, lir_op(k, SEL_SUB_V, lir_ref(k, mx[1]), lir_ref(k, mx[2]), NULL),
						      lir_ref(k, mx[3]), NULL);
			if (b) {
				LirAffine ba = lir_affine(0);
				lir_term(k, &ba, mv, 1);
				v = lir_op(k, SEL_ADD_V, v, lir_load(k, bb, &ba), NULL);
			}
			int t = lir_temp(k, SORT_V);
			lir_assign(k, t, v);
			LirAffine dims[4] = {lir_affine(0), lir_affine(0), lir_affine(a), lir_affine(0)};
			lir_term(k, &dims[1], mv, 1);
			lir_term(k, &dims[2], iv, 2);
			lir_term(k, &dims[3], ov, 1);
			cg_lir_result_store(c, k, y, t, dims);
		}
		lir_end(k);
		lir_end(k);
		lir_end(k);
		lir_vectorize(k, ov, LIR_TAIL_MASKED);
	}
	bool ok = cg_lir_run(c, k, true);
	lir_kernel_free(k);
	return ok;
}

/* Direct convolution with register blocks over output channels, rows and
 * vectors of a row (the block minimizing the cost model's estimate over
 * the target's vector registers, FMA units and latency, load ports): per
 * input channel every window tap is unrolled, each input vector read once
 * for the block's channels and each weight broadcast once for its
 * outputs.  Two spatial axes, fixed-width vectors with masks; false: not
 * this form (the plain nest is used). */
static bool conv_blocked(CG *c, const Node *n)
{
	const Value *x = n->in[0], *wv = n->in[1], *b = n->nin == 3 ? n->in[2] : NULL, *y = n->out[0];
	const Shape *xs = &x->type.shape, *ws = &wv->type.shape;
	if (c->scalable || xs->rank != 4 || c->lanes < 2 || target_class_for(c->t, SORT_M) < 0)
		return false;
	ConvWindow w;
	if (!conv_window(n, xs, ws->dim + 2, false, &w) || w.ns != 2)
		return false;
	int64_t N = xs->dim[0], C = xs->dim[1], M = ws->dim[0], G = attr_i(n, "group");
	int64_t Cg = C / G, Mg = M / G, T = w.k[0] * w.k[1];
	if (Cg <= 0 || Mg <= 0 || w.out[0] <= 0 || w.out[1] <= 0)
		return false;
	ConvMachine m = conv_machine(c);
	Phased ph;
	/* one-tap windows over rows the phases hold whole: the rows are one axis */
	bool merged = w.k[0] == 1 && w.k[1] == 1 && (!c->epi || epilogue_merges_rows(c, y));
	int64_t rows = w.out[0], cols = w.out[1];
	if (merged) {
		rows = 1;
		cols = w.out[0] * w.out[1];
	}
	double est;
	ConvBlock bk = cg_conv_block(&m, Mg, rows, cols, (double)Cg * (double)T, &est);
	if (est < 0)
		return false;
	bool split = phase_shape(&w, &ph);
	if (merged && ph.P[1] != w.out[1]) {
		/* (the phase rows are longer than the output's: not one axis) */
		merged = false;
		rows = w.out[0];
		cols = w.out[1];
		bk = cg_conv_block(&m, Mg, rows, cols, (double)Cg * (double)T, &est);
	}
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: conv", y->name);
	lir_note(k, "register block: %d channels x %d rows x %d vectors (%d registers of %d); estimated %.0f cycles",
		 bk.mb, bk.rb, bk.nv, cg_conv_block_regs(bk.mb, bk.rb, bk.nv), m.regs, est * (double)N * (double)G);
	int bxin = cg_lir_buffer(c, k, x->id), bx = bxin;
	if (split) {
		/* per group of each image, its channels split by phase into
		 * scratch (where the group's blocks find them in cache) */
		int sid = cg_scratch(c, Cg * ph.nph[0] * ph.nph[1] * ph.P[0] * ph.P[1]);
		cg_base_of(c, sid);
		bx = cg_lir_buffer(c, k, sid);
		lir_note(k, "input padded and split into %lld x %lld stride phases of %lld x %lld, a group at a time",
			 (long long)ph.nph[0], (long long)ph.nph[1], (long long)ph.P[0], (long long)ph.P[1]);
	}
	ConvK q = {c, k, y, b, &w, &ph, bx, cg_lir_buffer(c, k, wv->id),
		   b ? cg_lir_buffer(c, k, b->id) : -1, C, Cg, Mg, T, rows, cols, merged, -1, -1, -1, 0, 0, false, false, split,
		   cg_lir_buffer(c, k, y->id), {0}, false, 0, 0};
	shape_strides(&y->type.shape, q.ystr);
	q.nv = lir_for(k, 0, N, 1);
	q.gv = lir_for(k, 0, G, 1);
	if (split) {
		LirAffine xa = lir_affine(0);
		lir_term(k, &xa, q.nv, C * w.in[0] * w.in[1]);
		lir_term(k, &xa, q.gv, Cg * w.in[0] * w.in[1]);
		phase_into(k, bxin, &xa, bx, Cg, &w, &ph, 0.0, c->tail);
	}
	emit_slices(&q, &bk, Mg, y->name);
	lir_end(k);
	lir_end(k);
	bool ok = cg_lir_run(c, k, true);
	lir_kernel_free(k);
	return ok;
}

/* Direct convolution over the padded input, as Loop IR: loops over the
 * output, an accumulator per output element across the window's loops;
 * the last output axis is vectorized when its stride is 1 (the window's
 * loops inside work on its lanes).  Groups split input and output
 * channels.  The store goes through the fusion group's epilogue. */
bool cg_conv(CG *c, const Node *n)
{
	const Value *x = n->in[0], *wv = n->in[1], *b = n->nin == 3 ? n->in[2] : NULL, *y = n->out[0];
	const Shape *xs = &x->type.shape, *ws = &wv->type.shape;
	ConvWindow w;
	if (!conv_window(n, xs, ws->dim + 2, false, &w))
		return false;
	if (conv_winograd(c, n) || (c->ok && conv_blocked(c, n)))
		return true;
	int ns = w.ns;
	int64_t zero[3] = {0, 0, 0}, psize[3];
	int xp = padded(c, x, &w, zero, 0.0, psize);
	int64_t N = xs->dim[0], C = xs->dim[1], M = ws->dim[0], G = attr_i(n, "group");
	int64_t Cg = C / G, Mg = M / G;
	int64_t pstr[3], PS = 1, kstr[3], KS = 1;
	for (int j = ns - 1; j >= 0; j--) {
		pstr[j] = PS;
		PS *= psize[j];
		kstr[j] = KS;
		KS *= w.k[j];
	}
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: conv", y->name);
	int bx = cg_lir_buffer(c, k, xp), bw = cg_lir_buffer(c, k, wv->id);
	int nv = lir_for(k, 0, N, 1), gv = lir_for(k, 0, G, 1), mv = lir_for(k, 0, Mg, 1);
	int ov[3];
	for (int j = 0; j < ns; j++)
		ov[j] = lir_for(k, 0, w.out[j], 1);
	int acc = lir_temp(k, SORT_V);
	if (b) {
		LirAffine ba = lir_affine(0);
		lir_term(k, &ba, gv, Mg);
		lir_term(k, &ba, mv, 1);
		lir_assign(k, acc, lir_load(k, cg_lir_buffer(c, k, b->id), &ba));
	} else {
		lir_assign(k, acc, lir_constf(k, 0.0));
	}
	int civ = lir_for(k, 0, Cg, 1);
	int kv[3];
	for (int j = 0; j < ns; j++)
		kv[j] = lir_for(k, 0, w.k[j], 1);
	LirAffine xa = lir_affine(0), wa = lir_affine(0);
	lir_term(k, &xa, nv, C * PS);
	lir_term(k, &xa, gv, Cg * PS);
	lir_term(k, &xa, civ, PS);
	lir_term(k, &wa, gv, Mg * Cg * KS);
	lir_term(k, &wa, mv, Cg * KS);
	lir_term(k, &wa, civ, KS);
	for (int j = 0; j < ns; j++) {
		lir_term(k, &xa, ov[j], w.stride[j] * pstr[j]);
		lir_term(k, &xa, kv[j], w.dil[j] * pstr[j]);
		lir_term(k, &wa, kv[j], kstr[j]);
	}
	lir_assign(k, acc, lir_op(k, SEL_FMA_V, lir_load(k, bw, &wa), lir_load(k, bx, &xa), lir_ref(k, acc)));
	for (int j = 0; j < ns; j++)
		lir_end(k);
	lir_end(k);
	/* y[n, g Mg + m, o...] */
	LirAffine dims[2 + 3];
	dims[0] = lir_affine(0);
	lir_term(k, &dims[0], nv, 1);
	dims[1] = lir_affine(0);
	lir_term(k, &dims[1], gv, Mg);
	lir_term(k, &dims[1], mv, 1);
	for (int j = 0; j < ns; j++) {
		dims[2 + j] = lir_affine(0);
		lir_term(k, &dims[2 + j], ov[j], 1);
	}
	cg_lir_result_store(c, k, y, acc, dims);
	for (int j = 0; j < ns; j++)
		lir_end(k);
	lir_end(k);
	lir_end(k);
	lir_end(k);
	if (w.stride[ns - 1] == 1)
		cg_vectorize(c, k, ov[ns - 1]);
	bool ok = cg_lir_run(c, k, true);
	lir_kernel_free(k);
	return ok;
}

/* avgpool's divisor along axis j: per output position the reciprocal of
 * how many taps of the window count (inside the input, or inside the
 * padded extent with count_include_pad), as read-only data. */
static const char *pool_divisors(CG *c, const Node *n, const ConvWindow *w, int j)
{
	bool include_pad = attr_i(n, "count_include_pad") != 0;
	Shape ts = {1, {w->out[j]}};
	Tensor *t = tensor_new(DT_F32, &ts);
	for (int64_t o = 0; o < w->out[j]; o++) {
		int64_t cnt = 0;
		for (int64_t k = 0; k < w->k[j]; k++) {
			int64_t pos = o * w->stride[j] - w->pb[j] + k * w->dil[j];
			cnt += include_pad ? (pos >= -w->pb[j] && pos < w->in[j] + w->pe[j]) : (pos >= 0 && pos < w->in[j]);
		}
		((float *)t->data)[o] = (float)(1.0 / (double)cnt);
	}
	return cg_add_data(c->p, t);
}

/* A 2-D pool over the input split by stride phases (padding -inf for
 * max, 0 for average): every tap reads a contiguous row, so the output
 * row is vectorized (masked last vector) whatever the stride. */
static bool pool_phased(CG *c, const Node *n, const ConvWindow *w, bool avg)
{
	const Value *x = n->in[0], *y = n->out[0];
	const Shape *xs = &x->type.shape;
	Phased ph;
	bool split = phase_shape(w, &ph);
	int64_t NC = xs->dim[0] * xs->dim[1], plane = ph.P[0] * ph.P[1], nplanes = ph.nph[0] * ph.nph[1];
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: %s", y->name, op_info[n->op].name);
	int bxin = cg_lir_buffer(c, k, x->id), bx = bxin, by = cg_lir_buffer(c, k, y->id);
	if (split) {
		int sid = cg_scratch(c, nplanes * plane);
		cg_base_of(c, sid);
		bx = cg_lir_buffer(c, k, sid);
		lir_note(k, "input padded and split into %lld x %lld stride phases of %lld x %lld, a channel at a time",
			 (long long)ph.nph[0], (long long)ph.nph[1], (long long)ph.P[0], (long long)ph.P[1]);
	}
	int ncv = lir_for(k, 0, NC, 1);
	if (split) {
		LirAffine xa = lir_affine(0);
		lir_term(k, &xa, ncv, w->in[0] * w->in[1]);
		phase_into(k, bxin, &xa, bx, 1, w, &ph, avg ? 0.0 : -INFINITY, c->tail);
	}
	int ohv = lir_for(k, 0, w->out[0], 1), owv = lir_for(k, 0, w->out[1], 1);
	int acc = lir_temp(k, SORT_V);
	lir_assign(k, acc, lir_constf(k, avg ? 0.0 : -INFINITY));
	for (int64_t t0 = 0; t0 < w->k[0]; t0++)
		for (int64_t t1 = 0; t1 < w->k[1]; t1++) {
			int64_t d0 = t0 * w->dil[0], d1 = t1 * w->dil[1];
			int64_t phase = ph.nph[0] == 1 && ph.nph[1] == 1 ? 0 : (d0 % w->stride[0]) * ph.nph[1] + d1 % w->stride[1];
			LirAffine xa = lir_affine(phase * plane + d0 / w->stride[0] * ph.P[1] + d1 / w->stride[1]);
			if (!split)
				lir_term(k, &xa, ncv, nplanes * plane);
			lir_term(k, &xa, ohv, ph.P[1]);
			lir_term(k, &xa, owv, 1);
			lir_assign(k, acc, lir_op(k, avg ? SEL_ADD_V : SEL_MAX_V, lir_ref(k, acc), lir_load(k, bx, &xa), NULL));
		}
	LirExpr *v = lir_ref(k, acc);
	for (int j = 0; avg && j < 2; j++) {
		LirAffine ta = lir_affine(0);
		lir_term(k, &ta, j ? owv : ohv, 1);
		int tb = lir_data_buffer(k, "(divisors)", w->out[j], 4, pool_divisors(c, n, w, j));
		v = lir_op(k, SEL_MUL_V, v, lir_load(k, tb, &ta), NULL);
	}
	LirAffine ya = lir_affine(0);
	lir_term(k, &ya, ncv, w->out[0] * w->out[1]);
	lir_term(k, &ya, ohv, w->out[1]);
	lir_term(k, &ya, owv, 1);
	lir_store(k, by, &ya, v);
	lir_end(k);
	lir_end(k);
	lir_end(k);
	lir_vectorize(k, owv, LIR_TAIL_MASKED);
	bool ok = cg_lir_run(c, k, true);
	lir_kernel_free(k);
	return ok;
}

/* maxpool (padding is -inf) and avgpool (counting the padding, or with no
 * padding at all: the divisor is then the window size everywhere). */
bool cg_pool(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	const Shape *xs = &x->type.shape;
	const int64_t *ks;
	int nk = attr_ints(n, "kernel_shape", &ks);
	bool avg = n->op == OP_AVGPOOL;
	ConvWindow w;
	if (nk < 1 || !conv_window(n, xs, ks, attr_i(n, "ceil_mode") != 0, &w))
		return false;
	int ns = w.ns;
	/* windows that run past the padded end (ceil_mode) */
	int64_t extra[3] = {0, 0, 0}, psize[3];
	bool any_pad = false;
	for (int j = 0; j < ns; j++) {
		int64_t need = (w.out[j] - 1) * w.stride[j] + (w.k[j] - 1) * w.dil[j] + 1;
		int64_t have = w.in[j] + w.pb[j] + w.pe[j];
		extra[j] = need > have ? need - have : 0;
		any_pad |= w.pb[j] || w.pe[j] || extra[j];
	}
	(void)any_pad;
	if (!c->scalable && ns == 2 && xs->rank == 4 && c->lanes >= 2 && target_class_for(c->t, SORT_M) >= 0)
		return pool_phased(c, n, &w, avg);
	int xp = padded(c, x, &w, extra, avg ? 0.0 : -INFINITY, psize);
	/* avgpool's divisor is a product over the axes of how many taps of the
	 * window count (inside the input, or inside the padded extent with
	 * count_include_pad): per axis a table of reciprocals, in read-only data */
	const char *rcp[3] = {NULL, NULL, NULL};
	for (int j = 0; avg && j < ns; j++)
		rcp[j] = pool_divisors(c, n, &w, j);
	int64_t NC = xs->dim[0] * xs->dim[1];
	int64_t pstr[3], PS = 1, ostr[3], OS = 1;
	for (int j = ns - 1; j >= 0; j--) {
		pstr[j] = PS;
		PS *= psize[j];
		ostr[j] = OS;
		OS *= w.out[j];
	}
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: %s", y->name, op_info[n->op].name);
	int bx = cg_lir_buffer(c, k, xp), by = cg_lir_buffer(c, k, y->id);
	int ncv = lir_for(k, 0, NC, 1);
	int ov[3];
	for (int j = 0; j < ns; j++)
		ov[j] = lir_for(k, 0, w.out[j], 1);
	int acc = lir_temp(k, SORT_V);
	lir_assign(k, acc, lir_constf(k, avg ? 0.0 : -INFINITY));
	int kv[3];
	for (int j = 0; j < ns; j++)
		kv[j] = lir_for(k, 0, w.k[j], 1);
	LirAffine xa = lir_affine(0);
	lir_term(k, &xa, ncv, PS);
	for (int j = 0; j < ns; j++) {
		lir_term(k, &xa, ov[j], w.stride[j] * pstr[j]);
		lir_term(k, &xa, kv[j], w.dil[j] * pstr[j]);
	}
	lir_assign(k, acc, lir_op(k, avg ? SEL_ADD_V : SEL_MAX_V, lir_ref(k, acc), lir_load(k, bx, &xa), NULL));
	for (int j = 0; j < ns; j++)
		lir_end(k);
	LirAffine ya = lir_affine(0);
	lir_term(k, &ya, ncv, OS);
	for (int j = 0; j < ns; j++)
		lir_term(k, &ya, ov[j], ostr[j]);
	LirExpr *v = lir_ref(k, acc);
	for (int j = 0; avg && j < ns; j++) {
		/* the table entry of this output position on axis j */
		LirAffine ta = lir_affine(0);
		lir_term(k, &ta, ov[j], 1);
		int tb = lir_data_buffer(k, "(divisors)", w.out[j], 4, rcp[j]);
		v = lir_op(k, SEL_MUL_V, v, lir_load(k, tb, &ta), NULL);
	}
	lir_store(k, by, &ya, v);
	for (int j = 0; j < ns; j++)
		lir_end(k);
	lir_end(k);
	if (w.stride[ns - 1] == 1)
		cg_vectorize(c, k, ov[ns - 1]);
	bool ok = cg_lir_run(c, k, true);
	lir_kernel_free(k);
	return ok;
}


