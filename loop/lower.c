/* Loop IR to selection trees (lir.h): the one place where loops become
 * labels and branches, accesses become address arithmetic, and each
 * statement's width (vector or scalar, lir.h) picks the operations. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lir.h"
#include "util.h"

typedef struct {
	const LirKernel *k;
	const LirLower *l;
	MFunc *f;
	int *tv;          /* per temporary: its vreg (-1: not yet) */
	Sort *ts;         /* ... and the sort it has lowered */
	int *xv;          /* per variable: its vreg */
	int *base;        /* per buffer: its base address vreg */
	int vvar;         /* the vector variable around, or -1 */
	int64_t masked;   /* in a masked loop: its lanes, else 0 */
	bool ok;
	int nmask;        /* lane masks made before the loops: of mlanes[i] lanes in vreg mreg[i] */
	int64_t mlanes[LIR_HOIST_MASKS_MAX];
	int mreg[LIR_HOIST_MASKS_MAX];
	/* indices computed in the straight-line code since the last loop
	 * boundary: their terms (variables' vregs and coefficients) and the
	 * vreg that holds them, reused by the accesses that differ only in
	 * their constant (an epilogue's rows) */
	struct IdxMemo {
		int n;
		int reg[LIR_MAX_TERMS];
		int64_t coef[LIR_MAX_TERMS];
		int vreg;
	} *memo;
	int nmemo, capmemo;
} Low;

/* The mask of the masked loop around: a vreg made before the loops, or
 * made here. */
static BursNode *lane_mask(Low *w)
{
	for (int i = 0; i < w->nmask; i++)
		if (w->mlanes[i] == w->masked)
			return sel_reg(w->f, w->mreg[i]);
	return w->l->first_lanes(w->l->ctx, w->masked);
}

typedef struct {
	BursNode *n;
	Sort s;
} Tree;

/* The scalar twin of a vector op (SEL_COUNT: none). */
static SelOp scalar_twin(SelOp op)
{
	switch (op) {
	case SEL_ADD_V: return SEL_ADD_F;
	case SEL_SUB_V: return SEL_SUB_F;
	case SEL_MUL_V: return SEL_MUL_F;
	case SEL_DIV_V: return SEL_DIV_F;
	case SEL_MAX_V: return SEL_MAX_F;
	case SEL_MIN_V: return SEL_MIN_F;
	case SEL_FMA_V: return SEL_FMA_F;
	case SEL_NEG_V: return SEL_NEG_F;
	case SEL_ABS_V: return SEL_ABS_F;
	case SEL_SQRT_V: return SEL_SQRT_F;
	default: return SEL_COUNT;
	}
}

/* t as sort want: f and v convert (broadcast; the lane of equal lanes) */
static BursNode *as_sort(Low *w, Tree t, Sort want)
{
	if (t.s == want || want == SORT_NONE)
		return t.n;
	if (t.s == SORT_F && want == SORT_V)
		return sel_op(w->f, SEL_BCAST_V, t.n, NULL, NULL);
	if (t.s == SORT_V && want == SORT_F) /* (redmax.v makes a NaN's bits canonical) */
		return sel_op(w->f, w->l->lane0 ? SEL_LANE0_V : SEL_REDMAX_V, t.n, NULL, NULL);
	w->ok = false; /* (the verifier rules this out) */
	return t.n;
}

/* sum coef * var of a's terms (NULL: none), a vreg computed once for the
 * same terms since the last loop boundary where it takes arithmetic */
static BursNode *index_of(Low *w, const LirAffine *a)
{
	MFunc *f = w->f;
	struct IdxMemo key = {0};
	for (int i = 0; i < a->n; i++)
		if (a->t[i].coef != 0) {
			key.reg[key.n] = w->xv[a->t[i].var];
			key.coef[key.n++] = a->t[i].coef;
		}
	if (key.n == 0)
		return NULL;
	if (key.n == 1 && key.coef[0] == 1)
		return sel_reg(f, key.reg[0]);
	for (int m = 0; m < w->nmemo; m++) {
		const struct IdxMemo *e = &w->memo[m];
		if (e->n == key.n && !memcmp(e->reg, key.reg, (size_t)key.n * sizeof *key.reg) &&
		    !memcmp(e->coef, key.coef, (size_t)key.n * sizeof *key.coef))
			return sel_reg(f, e->vreg);
	}
	BursNode *idx = NULL;
	for (int i = 0; i < key.n; i++) {
		BursNode *term = sel_reg(f, key.reg[i]);
		if (key.coef[i] != 1)
			term = sel_op(f, SEL_MUL_I, term, sel_consti(f, key.coef[i]), NULL);
		idx = idx ? sel_op(f, SEL_ADD_I, idx, term, NULL) : term;
	}
	key.vreg = mfunc_vreg(f, w->l->icls);
	sel_assign(f, key.vreg, idx);
	if (w->nmemo == w->capmemo) {
		w->capmemo = w->capmemo ? 2 * w->capmemo : 16;
		w->memo = xrealloc(w->memo, (size_t)w->capmemo * sizeof *w->memo);
	}
	w->memo[w->nmemo++] = key;
	return sel_reg(f, key.vreg);
}

/* base + esize * index (from a pointer temporary when hoisted) */
static BursNode *address(Low *w, int buf, const LirAffine *a, int ptr, const LirAffine *pa)
{
	MFunc *f = w->f;
	int es = w->k->bufs[buf].esize;
	const LirAffine *ix = ptr >= 0 ? pa : a;
	BursNode *base = sel_reg(f, ptr >= 0 ? w->tv[ptr] : w->base[buf]);
	BursNode *idx = index_of(w, ix);
	int shift = es == 8 ? 3 : es == 4 ? 2 : es == 2 ? 1 : 0;
	if (!idx)
		return ix->off ? sel_op(f, SEL_ADD_I, base, sel_consti(f, es * ix->off), NULL) : base;
	/* (base + index << shift) + esize * off: the target's addressing
	 * forms take the constant as a displacement */
	BursNode *ad = sel_op(f, SEL_ADD_I, base, shift ? sel_op(f, SEL_SHL_I, idx, sel_consti(f, shift), NULL) : idx, NULL);
	return ix->off ? sel_op(f, SEL_ADD_I, ad, sel_consti(f, es * ix->off), NULL) : ad;
}

static bool moves(const Low *w, const LirAffine *a)
{
	return w->vvar >= 0 && lir_coef(a, w->vvar) != 0;
}

static int temp_vreg(Low *w, int t, Sort s)
{
	if (w->tv[t] >= 0)
		return w->tv[t];
	int cls = s == SORT_I ? w->l->icls : s == SORT_F ? w->l->fcls : s == SORT_V ? w->l->vcls : s == SORT_W ? w->l->wcls
		: s == SORT_M ? w->l->mcls : -1;
	if (cls < 0) {
		w->ok = false;
		cls = w->l->icls;
	}
	w->tv[t] = mfunc_vreg(w->f, cls);
	w->ts[t] = s;
	return w->tv[t];
}

/* The sort temporary t has here, assigned a value of sort got: a v
 * temporary is a vector in vector context, and in scalar context what its
 * first value is (a scalar, or a vector of equal lanes); an extern one is
 * as declared. */
static Sort temp_sort(const Low *w, int t, Sort got)
{
	if (w->ts[t] != SORT_NONE)
		return w->ts[t];
	Sort s = w->k->temps[t].sort;
	if (w->k->temps[t].ext >= 0 || s != SORT_V || w->k->temps[t].wide)
		return s;
	return w->vvar >= 0 || got == SORT_V ? SORT_V : SORT_F;
}

/* e in its natural sort: the cheapest form, converted only where needed */
static Tree lx(Low *w, const LirExpr *e)
{
	MFunc *f = w->f;
	const LirKernel *k = w->k;
	switch (e->kind) {
	case LX_LOAD: {
		int es = k->bufs[e->buf].esize;
		BursNode *ad = address(w, e->buf, &e->a, e->ptr, &e->pa);
		if (e->as == LIR_AS_I32)
			return (Tree){sel_op(f, SEL_LOAD_I32, ad, NULL, NULL), SORT_I};
		if (es == 8)
			return (Tree){sel_op(f, SEL_LOAD_I, ad, NULL, NULL), SORT_I};
		if (es == 1)
			return (Tree){sel_op(f, SEL_LOAD_U8, ad, NULL, NULL), SORT_I};
		if (!moves(w, &e->a))
			return (Tree){sel_op(f, SEL_LOAD_F, ad, NULL, NULL), SORT_F};
		if (w->masked)
			return (Tree){sel_op(f, SEL_LOADM_V, ad, lane_mask(w), NULL), SORT_V};
		return (Tree){sel_op(f, SEL_LOAD_V, ad, NULL, NULL), SORT_V};
	}
	case LX_ADDR:
		return (Tree){address(w, e->buf, &e->a, -1, NULL), SORT_I};
	case LX_TEMP: {
		int t = e->temp;
		if (k->temps[t].ext >= 0)
			return (Tree){sel_reg(f, k->temps[t].ext), k->temps[t].sort};
		if (w->tv[t] < 0) {
			w->ok = false; /* (the verifier rules this out) */
			return (Tree){sel_consti(f, 0), SORT_I};
		}
		return (Tree){sel_reg(f, w->tv[t]), w->ts[t]};
	}
	case LX_CONSTF:
		return (Tree){sel_op(f, SEL_LOAD_F, sel_sym(f, w->l->const_f32(w->l->ctx, e->f)), NULL, NULL), SORT_F};
	case LX_CONSTW:
		return (Tree){sel_op(f, SEL_BITS_V_W, sel_op(f, SEL_LOAD_V, sel_sym(f, w->l->const_w(w->l->ctx, (int32_t)e->i)), NULL, NULL),
				     NULL, NULL), SORT_W};
	case LX_PTRADD:
		if (w->tv[e->temp] < 0) {
			w->ok = false;
			return (Tree){sel_consti(f, 0), SORT_I};
		}
		return (Tree){sel_op(f, SEL_ADD_I, sel_reg(f, w->tv[e->temp]), sel_consti(f, e->i * k->bufs[e->buf].esize), NULL),
			      SORT_I};
	case LX_CONSTI:
		return (Tree){w->l->const_i64 ? w->l->const_i64(w->l->ctx, e->i) : sel_consti(f, e->i), SORT_I};
	case LX_INDEX:
		return (Tree){sel_reg(f, w->xv[e->var]), SORT_I};
	case LX_OP: {
		const SelInfo *si = &sel_info[e->op];
		Tree kid[3] = {{0}};
		bool all_f = true;
		for (int i = 0; i < si->nkids; i++) {
			kid[i] = lx(w, e->k[i]);
			all_f &= kid[i].s == SORT_F;
		}
		SelOp op = e->op;
		SelOp twin = scalar_twin(op);
		if (twin != SEL_COUNT && all_f)
			op = twin; /* every operand one element: the scalar op */
		const SelInfo *oi = &sel_info[op];
		BursNode *b[3] = {NULL, NULL, NULL};
		for (int i = 0; i < oi->nkids; i++)
			b[i] = as_sort(w, kid[i], oi->kid[i]);
		if (w->masked && (op == SEL_REDSUM_V || op == SEL_REDMAX_V)) {
			/* a masked vector reduces its active lanes: the others
			 * become the identity */
			const char *id = w->l->const_f32(w->l->ctx, op == SEL_REDSUM_V ? 0.0 : -INFINITY);
			BursNode *idv = sel_op(f, SEL_BCAST_V, sel_op(f, SEL_LOAD_F, sel_sym(f, id), NULL, NULL), NULL, NULL);
			b[0] = sel_op(f, SEL_SELECT_V, lane_mask(w), b[0], idv);
		}
		return (Tree){sel_op(f, op, b[0], b[1], b[2]), oi->result};
	}
	}
	w->ok = false;
	return (Tree){sel_consti(f, 0), SORT_I};
}

static void lblock(Low *w, const LirBlock *b);

static void lstmt(Low *w, const LirStmt *s)
{
	MFunc *f = w->f;
	const LirKernel *k = w->k;
	switch (s->kind) {
	case LS_ASSIGN: {
		Tree t = lx(w, s->e);
		Sort want = temp_sort(w, s->temp, t.s);
		if (k->temps[s->temp].ext >= 0) {
			sel_assign(f, k->temps[s->temp].ext, as_sort(w, t, want));
			return;
		}
		int r = temp_vreg(w, s->temp, want);
		sel_assign(f, r, as_sort(w, t, w->ts[s->temp]));
		return;
	}
	case LS_STORE: {
		Tree t = lx(w, s->e);
		BursNode *ad = address(w, s->buf, &s->a, s->ptr, &s->pa);
		int es = k->bufs[s->buf].esize;
		if (es == 8)
			sel_effect(f, sel_op(f, SEL_STORE_I, ad, as_sort(w, t, SORT_I), NULL));
		else if (es == 1)
			sel_effect(f, sel_op(f, SEL_STORE_I8, ad, as_sort(w, t, SORT_I), NULL));
		else if (t.s == SORT_I)
			sel_effect(f, sel_op(f, SEL_STORE_I32, ad, as_sort(w, t, SORT_I), NULL)); /* an i32 element */
		else if (!moves(w, &s->a))
			sel_effect(f, sel_op(f, SEL_STORE_F, ad, as_sort(w, t, SORT_F), NULL));
		else if (w->masked)
			sel_effect(f, sel_op(f, SEL_STOREM_V, ad, as_sort(w, t, SORT_V), lane_mask(w)));
		else
			sel_effect(f, sel_op(f, SEL_STORE_V, ad, as_sort(w, t, SORT_V), NULL));
		return;
	}
	case LS_PREFETCH:
		if (w->l->prefetch)
			sel_effect(f, sel_op(f, SEL_PREFETCH, address(w, s->buf, &s->a, s->ptr, &s->pa), NULL, NULL));
		return;
	case LS_INDEX: {
		/* k = e; k < 0: k += n; then 0 <= k < n or return 1 */
		int64_t n = k->vars[s->var].hi;
		int v = mfunc_vreg(f, w->l->icls);
		w->xv[s->var] = v;
		sel_assign(f, v, as_sort(w, lx(w, s->e), SORT_I));
		if (w->l->err_label < 0) {
			w->ok = false;
			return;
		}
		int lneg = sel_new_label(f), lok = sel_new_label(f);
		sel_branch(f, sel_op(f, SEL_BRLT_I, sel_reg(f, v), sel_consti(f, 0), NULL), lneg);
		sel_branch(f, sel_op(f, SEL_BRLT_I, sel_reg(f, v), sel_consti(f, n), NULL), lok);
		sel_branch(f, sel_op(f, SEL_JUMP, NULL, NULL, NULL), w->l->err_label);
		sel_label(f, lneg);
		sel_assign(f, v, sel_op(f, SEL_ADD_I, sel_reg(f, v), sel_consti(f, n), NULL));
		sel_branch(f, sel_op(f, SEL_BRLT_I, sel_reg(f, v), sel_consti(f, 0), NULL), w->l->err_label);
		sel_label(f, lok);
		return;
	}
	case LS_LOOP: {
		const LirVar *x = &k->vars[s->var];
		if (x->hi <= x->lo)
			return; /* no iteration */
		int v = mfunc_vreg(f, w->l->icls);
		w->xv[s->var] = v;
		sel_assign(f, v, sel_consti(f, x->lo));
		w->nmemo = 0; /* (no index computed out of a loop is used in it, or after it) */
		int saved_v = w->vvar;
		int64_t saved_m = w->masked;
		if (x->kind == LIR_LOOP_MASKED) {
			/* one iteration, on the first hi - lo lanes */
			w->vvar = s->var;
			w->masked = x->hi - x->lo;
			lblock(w, &s->body);
			w->vvar = saved_v;
			w->masked = saved_m;
			w->nmemo = 0;
			return;
		}
		int label = sel_new_label(f);
		sel_label(f, label);
		int vl = -1;
		if (x->kind == LIR_LOOP_STRIP) {
			vl = mfunc_vreg(f, w->l->icls);
			sel_assign(f, vl, sel_op(f, SEL_SETVL, sel_op(f, SEL_SUB_I, sel_consti(f, x->hi), sel_reg(f, v), NULL),
						 sel_consti(f, f->lmul), NULL));
		}
		if (x->kind != LIR_LOOP_SCALAR)
			w->vvar = s->var;
		lblock(w, &s->body);
		w->vvar = saved_v;
		w->nmemo = 0;
		BursNode *step = vl >= 0 ? sel_reg(f, vl) : sel_consti(f, x->step);
		sel_assign(f, v, sel_op(f, SEL_ADD_I, sel_reg(f, v), step, NULL));
		sel_branch(f, sel_op(f, SEL_BRLT_I, sel_reg(f, v), sel_consti(f, x->hi), NULL), label);
		return;
	}
	}
}

static void lblock(Low *w, const LirBlock *b)
{
	for (int i = 0; i < b->n; i++)
		lstmt(w, b->s[i]);
}

/* The masked loops of b, counted by their lanes into cnt[lanes] */
static void count_masked(const LirKernel *k, const LirBlock *b, int *cnt, int64_t lanes)
{
	for (int i = 0; i < b->n; i++) {
		const LirStmt *s = b->s[i];
		if (s->kind != LS_LOOP)
			continue;
		const LirVar *x = &k->vars[s->var];
		if (x->kind == LIR_LOOP_MASKED && x->hi - x->lo > 0 && x->hi - x->lo < lanes)
			cnt[x->hi - x->lo]++;
		count_masked(k, &s->body, cnt, lanes);
	}
}

/* The lane masks of the most frequent masked loops, once before the
 * loops (l->hoist_masks of them at most): a masked copy in a loop then
 * reads a mask register, not the lane indices, a splat and a compare in
 * each iteration. */
static void hoist_masks(Low *w)
{
	int most = w->l->hoist_masks < LIR_HOIST_MASKS_MAX ? w->l->hoist_masks : LIR_HOIST_MASKS_MAX;
	if (most <= 0 || w->l->mcls < 0 || w->k->lanes < 2)
		return;
	int *cnt = xcalloc((size_t)w->k->lanes, sizeof *cnt);
	count_masked(w->k, &w->k->body, cnt, w->k->lanes);
	while (w->nmask < most) {
		int best = 0;
		for (int n = 1; n < w->k->lanes; n++)
			if (cnt[n] > cnt[best])
				best = n;
		if (!cnt[best])
			break;
		cnt[best] = 0;
		w->mlanes[w->nmask] = best;
		w->mreg[w->nmask] = mfunc_vreg(w->f, w->l->mcls);
		sel_assign(w->f, w->mreg[w->nmask], w->l->first_lanes(w->l->ctx, best));
		w->nmask++;
	}
	free(cnt);
}

bool lir_lower(const LirKernel *k, const LirLower *l)
{
	Low w = {.k = k, .l = l, .f = l->f, .vvar = k->outer_vector, .ok = true};
	w.tv = xmalloc(((size_t)k->ntemps + 1) * sizeof *w.tv);
	w.ts = xcalloc((size_t)k->ntemps + 1, sizeof *w.ts);
	for (int i = 0; i < k->ntemps; i++)
		w.tv[i] = -1;
	w.xv = xmalloc(((size_t)k->nvars + 1) * sizeof *w.xv);
	for (int i = 0; i < k->nvars; i++)
		w.xv[i] = k->vars[i].ext;
	/* the buffers' addresses, once, before the loops */
	w.base = xmalloc(((size_t)k->nbufs + 1) * sizeof *w.base);
	for (int i = 0; i < k->nbufs; i++) {
		if (k->bufs[i].sym) {
			w.base[i] = mfunc_vreg(w.f, l->icls);
			sel_assign(w.f, w.base[i], sel_sym(w.f, k->bufs[i].sym));
		} else {
			w.base[i] = l->base(l->ctx, k->bufs[i].id);
		}
	}
	hoist_masks(&w);
	lblock(&w, &k->body);
	free(w.tv);
	free(w.ts);
	free(w.xv);
	free(w.base);
	free(w.memo);
	return w.ok;
}
