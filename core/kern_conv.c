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
		lir_vectorize(k, ov[ns - 1], LIR_TAIL_SCALAR);
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
	int xp = padded(c, x, &w, extra, avg ? 0.0 : -INFINITY, psize);
	/* avgpool's divisor is a product over the axes of how many taps of the
	 * window count (inside the input, or inside the padded extent with
	 * count_include_pad): per axis a table of reciprocals, in read-only data */
	const char *rcp[3] = {NULL, NULL, NULL};
	bool include_pad = attr_i(n, "count_include_pad") != 0;
	for (int j = 0; avg && j < ns; j++) {
		Shape ts = {1, {w.out[j]}};
		Tensor *t = tensor_new(DT_F32, &ts);
		for (int64_t o = 0; o < w.out[j]; o++) {
			int64_t cnt = 0;
			for (int64_t k = 0; k < w.k[j]; k++) {
				int64_t pos = o * w.stride[j] - w.pb[j] + k * w.dil[j];
				cnt += include_pad ? (pos >= -w.pb[j] && pos < w.in[j] + w.pe[j]) : (pos >= 0 && pos < w.in[j]);
			}
			((float *)t->data)[o] = (float)(1.0 / (double)cnt);
		}
		rcp[j] = cg_add_data(c->p, t);
	}
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
		lir_vectorize(k, ov[ns - 1], LIR_TAIL_SCALAR);
	bool ok = cg_lir_run(c, k, true);
	lir_kernel_free(k);
	return ok;
}


