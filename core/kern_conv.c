/* Convolution (direct, over a padded copy of the input) and pooling. */
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

/* Direct convolution over the padded input; the last output axis is
 * vectorized when its stride is 1. Groups split input and output channels. */
bool cg_conv(CG *c, const Node *n)
{
	MFunc *f = c->f;
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
	int64_t pstr[3], PS = 1, ostr[3], OS = 1, kstr[3], KS = 1;
	for (int j = ns - 1; j >= 0; j--) {
		pstr[j] = PS;
		PS *= psize[j];
		ostr[j] = OS;
		OS *= w.out[j];
		kstr[j] = KS;
		KS *= w.k[j];
	}
	int nv = cg_loop_begin(c, 0, N, 1), gv = cg_loop_begin(c, 0, G, 1), mv = cg_loop_begin(c, 0, Mg, 1);
	int ov[3];
	for (int j = 0; j < ns - 1; j++)
		ov[j] = cg_loop_begin(c, 0, w.out[j], 1);
	int last = ns - 1;
	int64_t vend = w.stride[last] == 1 ? cg_vend_of(c, 0, w.out[last]) : 0;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : w.out[last];
		if (hi <= lo)
			continue;
		ov[last] = cg_vloop_begin(c, lo, hi, vector);
		int acc = mfunc_vreg(f, vector ? c->vcls : c->fcls);
		if (b) {
			Affine ba = {0, {{gv, Mg}, {mv, 1}}, 2};
			BursNode *bv = cg_load(c, b->id, &ba, false);
			sel_assign(f, acc, vector ? sel_op(f, SEL_BCAST_V, bv, NULL, NULL) : bv);
		} else {
			sel_assign(f, acc, cg_splat(c, 0.0, vector));
		}
		int civ = cg_loop_begin(c, 0, Cg, 1);
		int kv[3];
		for (int j = 0; j < ns; j++)
			kv[j] = cg_loop_begin(c, 0, w.k[j], 1);
		Affine xa = {0, {{nv, C * PS}, {gv, Cg * PS}, {civ, PS}}, 3};
		Affine wa = {0, {{gv, Mg * Cg * KS}, {mv, Cg * KS}, {civ, KS}}, 3};
		for (int j = 0; j < ns; j++) {
			xa.t[xa.n++] = (Term){ov[j], w.stride[j] * pstr[j]};
			xa.t[xa.n++] = (Term){kv[j], w.dil[j] * pstr[j]};
			wa.t[wa.n++] = (Term){kv[j], kstr[j]};
		}
		BursNode *wt = cg_load(c, wv->id, &wa, false);
		if (vector)
			wt = sel_op(f, SEL_BCAST_V, wt, NULL, NULL);
		sel_assign(f, acc, sel_op(f, vector ? SEL_FMA_V : SEL_FMA_F, wt, cg_load(c, xp, &xa, vector), R(acc)));
		for (int j = ns - 1; j >= 0; j--)
			cg_loop_end(c);
		cg_loop_end(c);
		Affine ya = {0, {{nv, M * OS}, {gv, Mg * OS}, {mv, OS}}, 3};
		for (int j = 0; j < ns; j++)
			ya.t[ya.n++] = (Term){ov[j], ostr[j]};
		Affine dims[2 + 3] = {{0, {{nv, 1}}, 1}, {0, {{gv, Mg}, {mv, 1}}, 2}};
		for (int j = 0; j < ns; j++)
			dims[2 + j] = (Affine){0, {{ov[j], 1}}, 1};
		cg_result_store(c, y, &ya, dims, vector ? ov[last] : -1, R(acc));
		cg_loop_end(c);
	}
	for (int j = ns - 2; j >= 0; j--)
		cg_loop_end(c);
	cg_loop_end(c);
	cg_loop_end(c);
	cg_loop_end(c);
	return true;
}

/* maxpool (padding is -inf) and avgpool (counting the padding, or with no
 * padding at all: the divisor is then the window size everywhere). */
bool cg_pool(CG *c, const Node *n)
{
	MFunc *f = c->f;
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
	int ncv = cg_loop_begin(c, 0, NC, 1);
	int ov[3];
	for (int j = 0; j < ns - 1; j++)
		ov[j] = cg_loop_begin(c, 0, w.out[j], 1);
	int last = ns - 1;
	int64_t vend = w.stride[last] == 1 ? cg_vend_of(c, 0, w.out[last]) : 0;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : w.out[last];
		if (hi <= lo)
			continue;
		ov[last] = cg_vloop_begin(c, lo, hi, vector);
		int acc = cg_keep(c, cg_splat(c, avg ? 0.0 : -INFINITY, vector), vector);
		int kv[3];
		for (int j = 0; j < ns; j++)
			kv[j] = cg_loop_begin(c, 0, w.k[j], 1);
		Affine xa = {0, {{ncv, PS}}, 1};
		for (int j = 0; j < ns; j++) {
			xa.t[xa.n++] = (Term){ov[j], w.stride[j] * pstr[j]};
			xa.t[xa.n++] = (Term){kv[j], w.dil[j] * pstr[j]};
		}
		sel_assign(f, acc, cg_bin(c, avg ? SEL_ADD_V : SEL_MAX_V, avg ? SEL_ADD_F : SEL_MAX_F, vector, R(acc),
				       cg_load(c, xp, &xa, vector)));
		for (int j = ns - 1; j >= 0; j--)
			cg_loop_end(c);
		Affine ya = {0, {{ncv, OS}}, 1};
		for (int j = 0; j < ns; j++)
			ya.t[ya.n++] = (Term){ov[j], ostr[j]};
		BursNode *v = R(acc);
		for (int j = 0; avg && j < ns; j++) {
			/* the table entry of this output position on axis j */
			BursNode *addr = sel_op(f, SEL_ADD_I, sel_sym(f, rcp[j]),
						sel_op(f, SEL_SHL_I, sel_reg(f, ov[j]), sel_consti(f, 2), NULL), NULL);
			BursNode *r;
			if (j == last && vector)
				r = sel_op(f, SEL_LOAD_V, addr, NULL, NULL);
			else if (vector)
				r = sel_op(f, SEL_BCAST_V, sel_op(f, SEL_LOAD_F, addr, NULL, NULL), NULL, NULL);
			else
				r = sel_op(f, SEL_LOAD_F, addr, NULL, NULL);
			v = cg_bin(c, SEL_MUL_V, SEL_MUL_F, vector, v, r);
		}
		cg_store(c, y->id, &ya, vector, v);
		cg_loop_end(c);
	}
	for (int j = ns - 2; j >= 0; j--)
		cg_loop_end(c);
	cg_loop_end(c);
	return true;
}

