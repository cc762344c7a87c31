/* matmul and gemm: register-blocked micro-kernels (fixed vectors), strips
 * of scalable vectors, and the plain loop nest for what remains. */
#include "cg.h"

/* ---- matmul and gemm -------------------------------------------------------- */
static void matmul_rows_scalable(CG *c, const MatmulCtx *m, int nv, int mv, int mr);


/* Y's index along each of its axes: the batch loops, then m and n (no
 * epilogue is given for a 1-D operand's product: codegen.c) */
static void matmul_dims(const MatmulCtx *m, Affine *dims, Affine mi, Affine ni)
{
	for (int q = 0; q < m->nbatch; q++)
		dims[q] = (Affine){0, {{m->bv[q], 1}}, 1};
	dims[m->nbatch] = mi;
	dims[m->nbatch + 1] = ni;
}

/* alpha v + beta C for a product v of Y (vector or scalar), C at ca (its
 * term along n has coefficient cstr[1]: 0 when C is broadcast along n) */
BursNode *cg_gemm_epilogue(CG *c, const MatmulCtx *m, BursNode *v, const Affine *ca, bool vector)
{
	if (m->alpha != 1.0)
		v = cg_bin(c, SEL_MUL_V, SEL_MUL_F, vector, v, cg_splat(c, m->alpha, vector));
	if (!m->C || m->beta == 0.0)
		return v;
	BursNode *cv = vector && m->cstr[1] == 0 ? sel_op(c->f, SEL_BCAST_V, cg_load(c, m->C->id, ca, false), NULL, NULL)
						 : cg_load(c, m->C->id, ca, vector);
	if (m->beta != 1.0)
		cv = cg_bin(c, SEL_MUL_V, SEL_MUL_F, vector, cv, cg_splat(c, m->beta, vector));
	return cg_bin(c, SEL_ADD_V, SEL_ADD_F, vector, v, cv);
}

/* Scalable vectors: an N strip of vl columns times MR rows, MR accumulators
 * (register groups) across the k loop sharing one load of B per k: the
 * unrolling over rows, MR from the vector registers left by the kernel's
 * LMUL (`--emit=loops` and the report show both). */
static void cg_matmul_strips(CG *c, const MatmulCtx *m)
{
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
	int64_t m_main = m->M / mr * mr;
	int nv = cg_vloop_begin(c, 0, m->N, true);
	if (m_main > 0) {
		int mv = cg_loop_begin(c, 0, m_main, mr);
		matmul_rows_scalable(c, m, nv, mv, mr);
		cg_loop_end(c);
	}
	if (m_main < m->M) {
		int mv = cg_loop_begin(c, m_main, m->M, 1);
		matmul_rows_scalable(c, m, nv, mv, 1);
		cg_loop_end(c);
	}
	cg_loop_end(c);
}

static void matmul_rows_scalable(CG *c, const MatmulCtx *m, int nv, int mv, int mr)
{
	MFunc *f = c->f;
	int acc[8];
	for (int i = 0; i < mr; i++)
		acc[i] = cg_keep(c, cg_splat(c, 0.0, true), true);
	int kv = cg_loop_begin(c, 0, m->K, 1);
	Affine ba = {0, {{kv, m->b_k}, {nv, 1}}, 2};
	for (int q = 0; q < m->nbatch; q++)
		ba.t[ba.n++] = (Term){m->bv[q], m->bstr[q]};
	int b = cg_keep(c, cg_load(c, m->B->id, &ba, true), true);
	for (int i = 0; i < mr; i++) {
		Affine aa = {i * m->a_m, {{mv, m->a_m}, {kv, m->a_k}}, 2};
		for (int q = 0; q < m->nbatch; q++)
			aa.t[aa.n++] = (Term){m->bv[q], m->astr[q]};
		sel_assign(f, acc[i], sel_op(f, SEL_FMA_V, sel_op(f, SEL_BCAST_V, cg_load(c, m->A->id, &aa, false), NULL, NULL), R(b),
					     R(acc[i])));
	}
	cg_loop_end(c);
	for (int i = 0; i < mr; i++) {
		Affine ca = {i * m->cstr[0], {{mv, m->cstr[0]}, {nv, m->cstr[1]}}, 2};
		BursNode *v = cg_gemm_epilogue(c, m, R(acc[i]), &ca, true);
		Affine ya = {i * m->N, {{mv, m->N}, {nv, 1}}, 2};
		for (int q = 0; q < m->nbatch; q++)
			ya.t[ya.n++] = (Term){m->bv[q], m->ystr[q]};
		Affine dims[MAX_RANK];
		matmul_dims(m, dims, (Affine){i, {{mv, 1}}, 1}, (Affine){0, {{nv, 1}}, 1});
		cg_result_store(c, m->Y, &ya, dims, nv, v);
	}
}

/* An access through a moving pointer (ptr + disp bytes), checked as the
 * affine access it stands for. */
static BursNode *ptr_access(CG *c, int value, const Affine *equiv, int lanes, int ptr, int64_t disp)
{
	cg_check_access(c, value, equiv, lanes);
	if (c->p->loops) {
		cg_indent(c);
		fprintf(c->p->loops, "  %s %s[%lld", lanes > 1 ? "vector" : "scalar", cg_value_name(c, value), (long long)equiv->off);
		for (int i = 0; i < equiv->n; i++)
			fprintf(c->p->loops, " + %lld*%%v%d", (long long)equiv->t[i].coef, equiv->t[i].var);
		fprintf(c->p->loops, "] via pointer %%v%d%+lld\n", ptr, (long long)disp);
	}
	BursNode *p = sel_reg(c->f, ptr);
	return disp ? sel_op(c->f, SEL_ADD_I, p, sel_consti(c->f, disp), NULL) : p;
}

/* One register block: mr rows x nr vectors of Y, accumulators in registers
 * across the k loop; A and B walked by pointers (a broadcast of A and nr
 * loads of B feed mr * nr FMAs per k). */
static void matmul_block(CG *c, const MatmulCtx *m, int mv, int nv, int mr, int nr, int64_t k0, int64_t k1)
{
	MFunc *f = c->f;
	bool first = k0 == 0, last = k1 == m->K;
	int acc[8][2];
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++) {
			if (first) {
				acc[i][j] = cg_keep(c, cg_splat(c, 0.0, true), true);
			} else { /* the partial sums of the earlier k blocks */
				Affine ya = {i * m->N + j * c->lanes, {{mv, m->N}, {nv, 1}}, 2};
				for (int q = 0; q < m->nbatch; q++)
					ya.t[ya.n++] = (Term){m->bv[q], m->ystr[q]};
				acc[i][j] = cg_keep(c, cg_load(c, m->Y->id, &ya, true), true);
			}
		}
	/* pointers to A[m, k0] and B[k0, n] */
	Affine aa = {k0 * m->a_k, {{mv, m->a_m}}, 1}, ba = {k0 * m->b_k, {{nv, 1}}, 1};
	for (int i = 0; i < m->nbatch; i++) {
		aa.t[aa.n++] = (Term){m->bv[i], m->astr[i]};
		ba.t[ba.n++] = (Term){m->bv[i], m->bstr[i]};
	}
	int pa = mfunc_vreg(f, c->icls), pb = mfunc_vreg(f, c->icls);
	sel_assign(f, pa, cg_address(c, m->A->id, &aa, 1));
	sel_assign(f, pb, cg_address(c, m->B->id, &ba, c->lanes));
	aa.off -= k0 * m->a_k;
	ba.off -= k0 * m->b_k;
	int kv = cg_loop_begin(c, k0, k1, 1);
	int b[2];
	for (int j = 0; j < nr; j++) {
		Affine e = ba;
		e.off += j * c->lanes;
		e.t[e.n++] = (Term){kv, m->b_k};
		b[j] = cg_keep(c, sel_op(f, SEL_LOAD_V, ptr_access(c, m->B->id, &e, c->lanes, pb, 4 * j * c->lanes), NULL, NULL), true);
	}
	for (int i = 0; i < mr; i++) {
		Affine e = aa;
		e.off += i * m->a_m;
		e.t[e.n++] = (Term){kv, m->a_k};
		int a = cg_keep(c, sel_op(f, SEL_BCAST_V, sel_op(f, SEL_LOAD_F, ptr_access(c, m->A->id, &e, 1, pa, 4 * i * m->a_m), NULL, NULL),
				       NULL, NULL), true);
		for (int j = 0; j < nr; j++)
			sel_assign(f, acc[i][j], sel_op(f, SEL_FMA_V, R(a), R(b[j]), R(acc[i][j])));
	}
	sel_assign(f, pa, sel_op(f, SEL_ADD_I, R(pa), sel_consti(f, 4 * m->a_k), NULL));
	sel_assign(f, pb, sel_op(f, SEL_ADD_I, R(pb), sel_consti(f, 4 * m->b_k), NULL));
	cg_loop_end(c);
	/* A heavy fusion epilogue (transcendentals: many registers of its own)
	 * would spill the accumulators still waiting: the block goes to Y
	 * first, then the epilogue reads it back (from L1) one vector at a
	 * time. */
	bool staged = last && c->epi && cg_epilogue_heavy(c);
	for (int i = 0; staged && i < mr; i++)
		for (int j = 0; j < nr; j++) {
			Affine ca = {i * m->cstr[0] + j * c->lanes * m->cstr[1], {{mv, m->cstr[0]}, {nv, m->cstr[1]}}, 2};
			Affine ya = {i * m->N + j * c->lanes, {{mv, m->N}, {nv, 1}}, 2};
			for (int q = 0; q < m->nbatch; q++)
				ya.t[ya.n++] = (Term){m->bv[q], m->ystr[q]};
			cg_store(c, m->Y->id, &ya, true, cg_gemm_epilogue(c, m, R(acc[i][j]), &ca, true));
		}
	for (int i = 0; staged && i < mr; i++)
		for (int j = 0; j < nr; j++) {
			Affine ya = {i * m->N + j * c->lanes, {{mv, m->N}, {nv, 1}}, 2};
			for (int q = 0; q < m->nbatch; q++)
				ya.t[ya.n++] = (Term){m->bv[q], m->ystr[q]};
			Affine dims[MAX_RANK];
			matmul_dims(m, dims, (Affine){i, {{mv, 1}}, 1}, (Affine){j * c->lanes, {{nv, 1}}, 1});
			cg_result_store(c, m->Y, &ya, dims, nv, cg_load(c, m->Y->id, &ya, true));
		}
	if (staged)
		return;
	/* epilogue: alpha, beta C, cg_store (partial sums as they are) */
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++) {
			BursNode *v = R(acc[i][j]);
			if (!last) {
				Affine ya = {i * m->N + j * c->lanes, {{mv, m->N}, {nv, 1}}, 2};
				for (int q = 0; q < m->nbatch; q++)
					ya.t[ya.n++] = (Term){m->bv[q], m->ystr[q]};
				cg_store(c, m->Y->id, &ya, true, v);
				continue;
			}
			Affine ca = {i * m->cstr[0] + j * c->lanes * m->cstr[1], {{mv, m->cstr[0]}, {nv, m->cstr[1]}}, 2};
			v = cg_gemm_epilogue(c, m, v, &ca, true);
			Affine ya = {i * m->N + j * c->lanes, {{mv, m->N}, {nv, 1}}, 2};
			for (int q = 0; q < m->nbatch; q++)
				ya.t[ya.n++] = (Term){m->bv[q], m->ystr[q]};
			Affine dims[MAX_RANK];
			matmul_dims(m, dims, (Affine){i, {{mv, 1}}, 1}, (Affine){j * c->lanes, {{nv, 1}}, 1});
			cg_result_store(c, m->Y, &ya, dims, nv, v);
		}
}

/* Column blocks of 2 vectors, then 1; row blocks of MR rows, then 1. MR
 * comes from the register file: 2 * MR accumulators + 2 rows of B + 1
 * broadcast must fit the vector registers the target allocates. */
static void cg_matmul_blocked(CG *c, const MatmulCtx *m, int64_t vend)
{
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
			int nv = cg_loop_begin(c, lo, hi, nr * c->lanes);
			if (m_main > 0) {
				int mv = cg_loop_begin(c, 0, m_main, mr);
				matmul_block(c, m, mv, nv, mr, nr, k0, k1);
				cg_loop_end(c);
			}
			if (m_main < m->M) {
				int mv = cg_loop_begin(c, m_main, m->M, 1);
				matmul_block(c, m, mv, nv, 1, nr, k0, k1);
				cg_loop_end(c);
			}
			cg_loop_end(c);
		}
	}
}

/* Y[b.., m, n] = alpha * sum_k A[.., m, k] B[.., k, n] (+ beta C[m, n]).
 * n is vectorized (B contiguous along n) with a scalar remainder; the
 * accumulator stays in a register across the k loop. */
void cg_matmul(CG *c, const Node *n)
{
	MFunc *f = c->f;
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
	int bv[MAX_RANK];
	for (int i = 0; i < batch.rank; i++)
		mc.bv[i] = bv[i] = cg_loop_begin(c, 0, batch.dim[i], 1);
	int64_t vend = b_n == 1 ? cg_vend_of(c, 0, N) : 0;
	if (vend > 0 && K > 0 && c->scalable && !a1 && !b1) {
		cg_matmul_strips(c, &mc);
		for (int i = batch.rank - 1; i >= 0; i--)
			cg_loop_end(c);
		return;
	}
	if (vend > 0 && K > 0 && !c->scalable) {
		/* register-blocked micro-kernels over the vector columns */
		cg_matmul_blocked(c, &mc, vend);
	}
	if (vend > 0 && K > 0 && !c->scalable)
		vend = cg_vend_of(c, 0, N); /* done: only the scalar columns remain */
	int mv = cg_loop_begin(c, 0, M, 1);
	bool blocked = vend > 0 && K > 0 && !c->scalable;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : N;
		if (hi <= lo || (vector && blocked))
			continue;
		int nv = cg_vloop_begin(c, lo, hi, vector);
		int acc = mfunc_vreg(f, vector ? c->vcls : c->fcls);
		sel_assign(f, acc, cg_splat(c, 0.0, vector));
		int kv = cg_loop_begin(c, 0, K, 1);
		Affine aa = {0}, ba = {0};
		for (int i = 0; i < batch.rank; i++) {
			aa.t[aa.n++] = (Term){bv[i], astr_b[i]};
			ba.t[ba.n++] = (Term){bv[i], bstr_b[i]};
		}
		aa.t[aa.n++] = (Term){mv, a_m};
		aa.t[aa.n++] = (Term){kv, a_k};
		ba.t[ba.n++] = (Term){kv, b_k};
		ba.t[ba.n++] = (Term){nv, b_n};
		BursNode *av = cg_load(c, A->id, &aa, false);
		if (vector)
			av = sel_op(f, SEL_BCAST_V, av, NULL, NULL);
		BursNode *bvv = cg_load(c, B->id, &ba, vector);
		sel_assign(f, acc, sel_op(f, vector ? SEL_FMA_V : SEL_FMA_F, av, bvv, sel_reg(f, acc)));
		cg_loop_end(c);
		Affine ca = {0, {{mv, cstr[0]}, {nv, cstr[1]}}, 2};
		BursNode *v = cg_gemm_epilogue(c, &mc, sel_reg(f, acc), &ca, vector);
		Affine ya = {0};
		for (int i = 0; i < batch.rank; i++)
			ya.t[ya.n++] = (Term){bv[i], ystr_b[i]};
		ya.t[ya.n++] = (Term){mv, b1 ? 1 : N};
		ya.t[ya.n++] = (Term){nv, 1};
		if (a1) /* the M dim of a promoted 1-D A is not in the output */
			ya.t[ya.n - 2].coef = 0;
		Affine dims[MAX_RANK];
		matmul_dims(&mc, dims, (Affine){0, {{mv, 1}}, 1}, (Affine){0, {{nv, 1}}, 1});
		cg_result_store(c, Y, &ya, dims, vector ? nv : -1, v);
		cg_loop_end(c);
	}
	cg_loop_end(c);
	for (int i = batch.rank - 1; i >= 0; i--)
		cg_loop_end(c);
}

