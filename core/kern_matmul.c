/* matmul and gemm, built as Loop IR: register-blocked micro-kernels on
 * fixed vectors (MR rows x 2 vectors of accumulators across a K block,
 * A and B walked by pointers: strength reduction), strips of scalable
 * vectors unrolled over rows, and the plain loop nest for what remains.
 * The final stores go through the fusion group's epilogue. */
#include "cg.h"

/* The kernel's buffers and batch loop variables. */
typedef struct {
	CG *c;
	const MatmulCtx *m;
	LirKernel *k;
	int A, B, C, Y;
	int bvar[MAX_RANK];
	bool a1, b1;
	int64_t b_n;
} Mm;

static void add_batch(const Mm *x, LirAffine *a, const int64_t *str)
{
	for (int q = 0; q < x->m->nbatch; q++)
		lir_term(x->k, a, x->bvar[q], str[q]);
}

/* off + coef * var, as an affine */
static LirAffine at(Mm *x, int var, int64_t off)
{
	LirAffine a = lir_affine(off);
	if (var >= 0)
		lir_term(x->k, &a, var, 1);
	return a;
}

static void add_scaled(Mm *x, LirAffine *to, const LirAffine *a, int64_t s)
{
	to->off += a->off * s;
	for (int i = 0; i < a->n; i++)
		lir_term(x->k, to, a->t[i].var, a->t[i].coef * s);
}

/* A[.., mi, kv], B[.., kv, ni], Y[.., mi, ni], C[mi, ni] */
static LirExpr *load_a(Mm *x, const LirAffine *mi, int kv)
{
	LirAffine a = lir_affine(0);
	add_batch(x, &a, x->m->astr);
	add_scaled(x, &a, mi, x->m->a_m);
	lir_term(x->k, &a, kv, x->m->a_k);
	return lir_load(x->k, x->A, &a);
}

static LirExpr *load_b(Mm *x, int kv, const LirAffine *ni)
{
	LirAffine a = lir_affine(0);
	add_batch(x, &a, x->m->bstr);
	lir_term(x->k, &a, kv, x->m->b_k);
	add_scaled(x, &a, ni, x->b_n);
	return lir_load(x->k, x->B, &a);
}

static LirAffine y_index(Mm *x, const LirAffine *mi, const LirAffine *ni)
{
	LirAffine a = lir_affine(0);
	add_batch(x, &a, x->m->ystr);
	/* (a promoted 1-D operand's axis is not in Y: M or N is 1 then) */
	add_scaled(x, &a, mi, x->b1 ? 1 : x->m->N);
	add_scaled(x, &a, ni, 1);
	return a;
}

/* alpha acc + beta C: the temporary holding it (acc itself when there is
 * nothing to add) */
static int alpha_beta(Mm *x, int acc, const LirAffine *mi, const LirAffine *ni)
{
	const MatmulCtx *m = x->m;
	LirKernel *k = x->k;
	if (m->alpha == 1.0 && !(m->C && m->beta != 0.0))
		return acc;
	LirExpr *v = lir_ref(k, acc);
	if (m->alpha != 1.0)
		v = lir_op(k, SEL_MUL_V, v, lir_constf(k, m->alpha), NULL);
	if (m->C && m->beta != 0.0) {
		LirAffine ca = lir_affine(0);
		add_scaled(x, &ca, mi, m->cstr[0]);
		add_scaled(x, &ca, ni, m->cstr[1]);
		LirExpr *cv = lir_load(k, x->C, &ca);
		if (m->beta != 1.0)
			cv = lir_op(k, SEL_MUL_V, cv, lir_constf(k, m->beta), NULL);
		v = lir_op(k, SEL_ADD_V, v, cv, NULL);
	}
	int t = lir_temp(k, SORT_V);
	lir_assign(k, t, v);
	return t;
}

/* Y's value t stored: through the group's epilogue when there is one. */
static void result(Mm *x, int t, const LirAffine *mi, const LirAffine *ni)
{
	const MatmulCtx *m = x->m;
	if (x->c->epi) {
		LirAffine dims[MAX_RANK];
		for (int q = 0; q < m->nbatch; q++)
			dims[q] = at(x, x->bvar[q], 0);
		dims[m->nbatch] = *mi;
		dims[m->nbatch + 1] = *ni;
		cg_lir_result_store(x->c, x->k, m->Y, t, dims);
		return;
	}
	LirAffine ya = y_index(x, mi, ni);
	lir_store(x->k, x->Y, &ya, lir_ref(x->k, t));
}

static void final_store(Mm *x, int acc, const LirAffine *mi, const LirAffine *ni)
{
	result(x, alpha_beta(x, acc, mi, ni), mi, ni);
}

/* One register block: mr rows x nr vectors of Y, accumulators across the
 * k loop over [k0, k1); nr loads of B and mr broadcasts of A feed mr * nr
 * FMAs per k.  Partial sums (K blocks) go through Y. */
static void block(Mm *x, int mv, int nv, int mr, int nr, int64_t k0, int64_t k1)
{
	const MatmulCtx *m = x->m;
	LirKernel *k = x->k;
	CG *c = x->c;
	bool first = k0 == 0, last = k1 == m->K;
	int acc[8][2];
	LirAffine mi[8], ni[2];
	for (int i = 0; i < mr; i++)
		mi[i] = at(x, mv, i);
	for (int j = 0; j < nr; j++)
		ni[j] = at(x, nv, j * c->lanes);
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++) {
			acc[i][j] = lir_temp(k, SORT_V);
			if (first) {
				lir_assign(k, acc[i][j], lir_constf(k, 0.0));
			} else { /* the partial sums of the earlier k blocks */
				LirAffine ya = y_index(x, &mi[i], &ni[j]);
				lir_assign(k, acc[i][j], lir_load(k, x->Y, &ya));
			}
		}
	int kv = lir_for(k, k0, k1, 1);
	int b[2];
	for (int j = 0; j < nr; j++) {
		b[j] = lir_temp(k, SORT_V);
		lir_assign(k, b[j], load_b(x, kv, &ni[j]));
	}
	for (int i = 0; i < mr; i++) {
		int a = lir_temp(k, SORT_V);
		lir_assign(k, a, load_a(x, &mi[i], kv));
		for (int j = 0; j < nr; j++)
			lir_assign(k, acc[i][j], lir_op(k, SEL_FMA_V, lir_ref(k, a), lir_ref(k, b[j]), lir_ref(k, acc[i][j])));
	}
	lir_end(k);
	lir_strength_reduce(k, kv);
	if (!last) {
		for (int i = 0; i < mr; i++)
			for (int j = 0; j < nr; j++) {
				LirAffine ya = y_index(x, &mi[i], &ni[j]);
				lir_store(k, x->Y, &ya, lir_ref(k, acc[i][j]));
			}
		return;
	}
	/* A heavy fusion epilogue (transcendentals: many registers of its own)
	 * would spill the accumulators still waiting: the block goes to Y
	 * first, then the epilogue reads it back (from L1) one vector at a
	 * time. */
	if (c->epi && cg_epilogue_heavy(c)) {
		for (int i = 0; i < mr; i++)
			for (int j = 0; j < nr; j++) {
				LirAffine ya = y_index(x, &mi[i], &ni[j]);
				lir_store(k, x->Y, &ya, lir_ref(k, alpha_beta(x, acc[i][j], &mi[i], &ni[j])));
			}
		for (int i = 0; i < mr; i++)
			for (int j = 0; j < nr; j++) {
				LirAffine ya = y_index(x, &mi[i], &ni[j]);
				int t = lir_temp(k, SORT_V);
				lir_assign(k, t, lir_load(k, x->Y, &ya));
				result(x, t, &mi[i], &ni[j]);
			}
		return;
	}
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++)
			final_store(x, acc[i][j], &mi[i], &ni[j]);
}

/* Column blocks of 2 vectors, then 1; row blocks of MR rows, then 1. MR
 * comes from the register file: 2 * MR accumulators + 2 rows of B + 1
 * broadcast must fit the vector registers the target allocates. */
static void blocked(Mm *x, int64_t vend)
{
	CG *c = x->c;
	const MatmulCtx *m = x->m;
	LirKernel *k = x->k;
	const RegClassInfo *vc = &c->t->regclasses[target_root_class(c->t, c->vcls)];
	int free_regs = 0;
	for (int r = 0; r < vc->nregs; r++)
		free_regs += !vc->reserved[r];
	int mr = (free_regs - 3) / 2;
	if (mr > 8)
		mr = 8;
	if (mr < 1)
		mr = 1;
	c->p->gemm_mr = mr;
	int64_t w2 = 2 * c->lanes;
	int64_t n2 = vend / w2 * w2;
	int64_t m_main = m->M / mr * mr;
	/* K blocks: the slice of a B panel (KC rows of 2 vectors) stays in half
	 * of the L1 data cache while every row block of A streams past it. */
	const ParamInfo *l1 = target_param(c->t, "l1d_bytes");
	int64_t kc = l1 && l1->n ? (int64_t)l1->values[0] / 2 / (w2 * 4) : m->K;
	if (kc < 16)
		kc = 16;
	c->p->gemm_kc = (int)kc;
	for (int64_t k0 = 0; k0 < m->K; k0 += kc) {
		int64_t k1 = k0 + kc < m->K ? k0 + kc : m->K;
		for (int cb = 0; cb < 2; cb++) {
			int nr = cb == 0 ? 2 : 1;
			int64_t lo = cb == 0 ? 0 : n2, hi = cb == 0 ? n2 : vend;
			if (hi <= lo)
				continue;
			/* a vector loop of nr vectors per iteration */
			int nv = lir_for(k, lo, hi, nr * c->lanes);
			k->vars[nv].kind = LIR_LOOP_VECTOR;
			if (m_main > 0) {
				int mv = lir_for(k, 0, m_main, mr);
				block(x, mv, nv, mr, nr, k0, k1);
				lir_end(k);
			}
			if (m_main < m->M) {
				int mv = lir_for(k, m_main, m->M, 1);
				block(x, mv, nv, 1, nr, k0, k1);
				lir_end(k);
			}
			lir_end(k);
		}
	}
}

/* Scalable vectors: an N strip of vl columns times MR rows, MR accumulators
 * (register groups) across the k loop sharing one load of B per k: the
 * unrolling over rows, MR from the vector registers left by the kernel's
 * LMUL (`--emit=loops` and the report show both). */
static void strips_rows(Mm *x, int nv, int mv, int mr)
{
	LirKernel *k = x->k;
	int acc[8];
	LirAffine mi[8], ni = at(x, nv, 0);
	for (int i = 0; i < mr; i++) {
		mi[i] = at(x, mv, i);
		acc[i] = lir_temp(k, SORT_V);
		lir_assign(k, acc[i], lir_constf(k, 0.0));
	}
	int kv = lir_for(k, 0, x->m->K, 1);
	int b = lir_temp(k, SORT_V);
	lir_assign(k, b, load_b(x, kv, &ni));
	for (int i = 0; i < mr; i++)
		lir_assign(k, acc[i], lir_op(k, SEL_FMA_V, load_a(x, &mi[i], kv), lir_ref(k, b), lir_ref(k, acc[i])));
	lir_end(k);
	lir_strength_reduce(k, kv);
	for (int i = 0; i < mr; i++)
		final_store(x, acc[i], &mi[i], &ni);
}

static void strips(Mm *x)
{
	CG *c = x->c;
	LirKernel *k = x->k;
	const RegClassInfo *vc = &c->t->regclasses[target_root_class(c->t, c->vcls)];
	int regs = 0;
	for (int r = 0; r < vc->nregs; r++)
		regs += !vc->reserved[r];
	int mr = regs / c->f->lmul - 2;
	if (mr > 8)
		mr = 8;
	if (mr < 1)
		mr = 1;
	c->p->gemm_mr = mr;
	c->p->gemm_kc = 0;
	int64_t m_main = x->m->M / mr * mr;
	int nv = lir_for(k, 0, x->m->N, 1);
	k->vars[nv].kind = LIR_LOOP_STRIP;
	if (m_main > 0) {
		int mv = lir_for(k, 0, m_main, mr);
		strips_rows(x, nv, mv, mr);
		lir_end(k);
	}
	if (m_main < x->m->M) {
		int mv = lir_for(k, m_main, x->m->M, 1);
		strips_rows(x, nv, mv, 1);
		lir_end(k);
	}
	lir_end(k);
}

/* The plain nest over columns [n0, N): an accumulator per element across
 * k; vectorized along n when B is contiguous there (and no block took the
 * vector columns). */
static void plain(Mm *x, int64_t n0, bool vector)
{
	LirKernel *k = x->k;
	int mv = lir_for(k, 0, x->m->M, 1), nv = lir_for(k, n0, x->m->N, 1);
	LirAffine mi = at(x, mv, 0), ni = at(x, nv, 0);
	int acc = lir_temp(k, SORT_V);
	lir_assign(k, acc, lir_constf(k, 0.0));
	int kv = lir_for(k, 0, x->m->K, 1);
	lir_assign(k, acc, lir_op(k, SEL_FMA_V, load_a(x, &mi, kv), load_b(x, kv, &ni), lir_ref(k, acc)));
	lir_end(k);
	final_store(x, acc, &mi, &ni);
	lir_end(k);
	lir_end(k);
	if (vector)
		lir_vectorize(k, nv, LIR_TAIL_SCALAR);
	lir_strength_reduce(k, kv);
}

/* Y[b.., m, n] = alpha * sum_k A[.., m, k] B[.., k, n] (+ beta C[m, n]). */
void cg_matmul(CG *c, const Node *n)
{
	const Value *A = n->in[0], *B = n->in[1], *Y = n->out[0];
	bool gemm = n->op == OP_GEMM;
	int ta = gemm ? (int)attr_i(n, "trans_a") : 0, tb = gemm ? (int)attr_i(n, "trans_b") : 0;
	double alpha = gemm ? attr_f(n, "alpha") : 1.0, beta = gemm ? attr_f(n, "beta") : 1.0;
	const Value *C = gemm && n->nin == 3 ? n->in[2] : NULL;
	/* Shapes as [batch..., M, K] x [batch..., K, N]; 1-D operands promoted. */
	Shape as = A->type.shape, bs = B->type.shape, ys = Y->type.shape;
	bool a1 = as.rank == 1, b1 = bs.rank == 1;
	if (a1)
		as = (Shape){2, {1, as.dim[0]}};
	if (b1)
		bs = (Shape){2, {bs.dim[0], 1}};
	int64_t M = ta ? as.dim[as.rank - 1] : as.dim[as.rank - 2];
	int64_t K = ta ? as.dim[as.rank - 2] : as.dim[as.rank - 1];
	int64_t N = tb ? bs.dim[bs.rank - 2] : bs.dim[bs.rank - 1];
	/* batch: the output's leading dims (ys without the trailing M, N) */
	Shape batch = {0};
	int yr = ys.rank;
	int nb = yr - (a1 ? 0 : 1) - (b1 ? 0 : 1);
	for (int i = 0; i < nb; i++)
		batch.dim[batch.rank++] = ys.dim[i];
	Shape abatch = {as.rank - 2, {0}}, bbatch = {bs.rank - 2, {0}};
	for (int i = 0; i < abatch.rank; i++)
		abatch.dim[i] = as.dim[i];
	for (int i = 0; i < bbatch.rank; i++)
		bbatch.dim[i] = bs.dim[i];
	int64_t astr_b[MAX_RANK] = {0}, bstr_b[MAX_RANK] = {0}, ystr_b[MAX_RANK] = {0};
	broadcast_strides(&abatch, &batch, astr_b);
	broadcast_strides(&bbatch, &batch, bstr_b);
	shape_strides(&batch, ystr_b);
	for (int i = 0; i < batch.rank; i++) {
		astr_b[i] *= M * K;
		bstr_b[i] *= K * N;
		ystr_b[i] *= M * N;
	}
	int64_t a_m = ta ? 1 : K, a_k = ta ? M : 1, b_k = tb ? 1 : N, b_n = tb ? K : 1;
	int64_t cstr[2] = {0, 0};
	if (C) {
		Shape mn = {2, {M, N}};
		broadcast_strides(&C->type.shape, &mn, cstr);
	}
	MatmulCtx mc = {A, B, C, Y, M, N, K, a_m, a_k, b_k, alpha, beta, {cstr[0], cstr[1]}, batch.rank, {0}, {0}, {0}, {0}};
	for (int i = 0; i < batch.rank; i++) {
		mc.astr[i] = astr_b[i];
		mc.bstr[i] = bstr_b[i];
		mc.ystr[i] = ystr_b[i];
	}
	if (cg_uses_tiles(c, n) && cg_tile_matmul(c, &mc, &batch, tb, a1, b1))
		return;
	Mm x = {c, &mc, lir_kernel_newf(c->lanes, c->scalable, "loops of %s: %s", Y->name, op_info[n->op].name), -1, -1, -1, -1, {0},
		a1, b1, b_n};
	LirKernel *k = x.k;
	x.A = cg_lir_buffer(c, k, A->id);
	x.B = cg_lir_buffer(c, k, B->id);
	x.C = C ? cg_lir_buffer(c, k, C->id) : -1;
	x.Y = cg_lir_buffer(c, k, Y->id);
	for (int i = 0; i < batch.rank; i++)
		x.bvar[i] = lir_for(k, 0, batch.dim[i], 1);
	int64_t vend = b_n == 1 ? cg_vend_of(c, 0, N) : 0;
	if (vend > 0 && K > 0 && c->scalable && !a1 && !b1 && N > 1) {
		strips(&x);
	} else if (vend > 0 && K > 0 && !c->scalable) {
		/* register-blocked micro-kernels over the vector columns, then
		 * the scalar columns */
		blocked(&x, vend);
		if (vend < N)
			plain(&x, vend, false);
	} else {
		plain(&x, 0, b_n == 1);
	}
	for (int i = 0; i < batch.rank; i++)
		lir_end(k);
	cg_lir_run(c, k, true);
	lir_kernel_free(k);
}
