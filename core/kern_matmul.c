/* matmul and gemm, built as Loop IR: register-blocked micro-kernels on
 * fixed vectors in every layout (MR rows x 2 vectors of accumulators
 * across a K block, A and B walked by pointers: strength reduction; K and
 * N cache blocks from the .md's l1d_bytes and l2_bytes; B in panel order,
 * packed at compile time when constant, at run time when transposed or
 * large; A's register blocks copied where they would fight over L1 sets;
 * the N edge as a masked vector),
 * strips of scalable vectors unrolled over rows, and the plain loop nest
 * for what remains.  The final stores go through the fusion group's
 * epilogue (docs/backend.md, GEMM). */
#include "cg.h"

/* The most rows of a register block: fixed vectors (2 * 14 accumulators
 * fill 32 registers), and strips (each row a register group). */
enum { GEMM_MR_MAX = 16, STRIP_MR_MAX = 8, GEMM_K_UNROLL = 4, GEMM_LANES_MAX = 16 };

/* The kernel's buffers and batch loop variables. */
typedef struct {
	CG *c;
	const MatmulCtx *m;
	LirKernel *k;
	int A, B, C, Y;
	int bvar[MAX_RANK];
	bool a1, b1;
	int64_t b_n;
	bool pack_nn;    /* B contiguous along n packed at run time too */
	bool pack_a;     /* A's register blocks copied at run time (micro-panels) */
	int Bp;          /* B in panel order (compile time), else -1 */
	int64_t Bp_end;  /* ... its panels end there: [Bp_end, N) is one of N - Bp_end columns */
	bool masks;      /* the target has lane masks */
	/* A register block's rows of a K block copied into a scratch micro-
	 * panel: row r (from the block's first, ap_row) and k at Ap[ap_blk +
	 * r * ap_m + (k - ap_kb) * ap_k], in A's orientation: row-major A row
	 * by row (ap_m the K block's length, ap_k 1), column-major A the
	 * block's rows side by side at each k (ap_m 1, ap_k the block's rows),
	 * so that its broadcasts read one contiguous run; -1: A in place */
	int Ap;
	LirAffine ap_row;
	int64_t ap_m, ap_k, ap_kb, ap_off;
	/* A column-major (its rows side by side at each k, a row of A a large
	 * stride from the next): the next register block's rows prefetched at
	 * each k, lines the hardware does not see coming, once, in the k loop
	 * of one column panel (rows_cols; pf_a: the target has a prefetch;
	 * pf_now: this block) */
	bool pf_a, pf_now;
	/* B transposed, packed at run time: each k line (pf_line k's: a cache
	 * line of each of a group's rows of B^T) of the copy prefetches the next
	 * group's rows at that line, a few a k (0: none) */
	int64_t pf_line;
	/* ... and that copy goes bt_rows rows of B^T at a time (a line of k's
	 * of those rows, k by k, then the next rows), not k by k across a
	 * group's rows: where the group's rows at one k are more lines in one
	 * L1 set than its ways (0: k by k across the group) */
	int64_t bt_rows;
	/* ... and that copy transposes lanes x lanes tiles in registers (a
	 * vector load along k of each of a tile's rows, the target's lane
	 * permutations, a vector store a k): where the .md has them */
	bool bt_vec;
	/* B's panels (packed) read pf_b k's ahead in the k loop, a prefetch a
	 * vector (the .md's prefetch_bytes over a panel's row; 0: none): the
	 * panel streams from L2 and the hardware's next-line prefetch into L1
	 * does not keep up with 2 lines every 14 cycles */
	int64_t pf_b;
	/* Y's lines of a register block prefetched in (or before) the k loop
	 * of every K block but the first (the partial sums it adds after the
	 * loop): a cache line's floats (0: no prefetch) */
	int64_t pf_y;
	bool tr;         /* B read through a transpose (from its operand) */
	int64_t nc;      /* N block (columns), 0: none */
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
static LirAffine a_index(Mm *x, const LirAffine *mi, int kv)
{
	LirAffine a = lir_affine(0);
	add_batch(x, &a, x->m->astr);
	add_scaled(x, &a, mi, x->m->a_m);
	lir_term(x->k, &a, kv, x->m->a_k);
	return a;
}

static LirExpr *load_a(Mm *x, const LirAffine *mi, int kv)
{
	if (x->Ap >= 0) {
		LirAffine a = lir_affine(x->ap_off - x->ap_kb * x->ap_k);
		add_scaled(x, &a, mi, x->ap_m);
		add_scaled(x, &a, &x->ap_row, -x->ap_m);
		lir_term(x->k, &a, kv, x->ap_k);
		return lir_load(x->k, x->Ap, &a);
	}
	LirAffine a = a_index(x, mi, kv);
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

/* B packed in panel order (compile time for a constant B, else per K
 * block into the kernel's scratch): column c of a group [g0, g0 + w) at
 * P[bat + g0 * kp + (k - kb) * w + c - g0], so a register block's k step
 * reads its w columns contiguously and a K block of a panel is one run. */
typedef struct {
	int buf;         /* -1: B read in place */
	int64_t kp, kb;  /* rows of a panel; the first k it holds */
	bool batched;    /* B's batch strides apply (a compile-time pack) */
	/* The panels held start at column base (+ basevar, an N block's loop
	 * variable, where >= 0): a run-time pack of one N block at a time */
	int64_t base;
	int basevar;
} Pack;


/* The columns a register block takes: lo + g w + lv + j lanes, g a scalar
 * loop over the groups of width w, lv a vector (or masked) loop of one
 * iteration inside it. */
typedef struct {
	int g, lv;
	int64_t lo, w;
	int nr;          /* vectors across (1 for a masked group) */
	int nb;          /* an N block's first column (a loop over them), or -1 */
} Cols;

static LirAffine col_at(Mm *x, const Cols *cl, int j)
{
	LirAffine a = lir_affine(cl->lo + j * x->c->lanes);
	if (cl->g >= 0)
		lir_term(x->k, &a, cl->g, cl->w);
	if (cl->nb >= 0)
		lir_term(x->k, &a, cl->nb, 1);
	lir_term(x->k, &a, cl->lv, 1);
	return a;
}

/* The panel address of column lo + ... of a group at k: P[(col0 - base) kp
 * + (k - kb) w + lane] without its k, group, lane and N block terms */
static LirAffine panel_at(Mm *x, const Pack *pk, const Cols *cl, int j)
{
	LirAffine a = lir_affine((cl->lo - pk->base) * pk->kp - pk->kb * cl->w + j * x->c->lanes);
	if (pk->batched)
		add_batch(x, &a, x->m->bstr);
	if (cl->g >= 0)
		lir_term(x->k, &a, cl->g, cl->w * pk->kp);
	if (cl->nb >= 0 && cl->nb != pk->basevar)
		lir_term(x->k, &a, cl->nb, pk->kp);
	return a;
}

/* B[k, columns j of cl], in place or from the panels */
static LirExpr *load_bcol(Mm *x, const Pack *pk, int kv, const Cols *cl, int j)
{
	if (pk->buf < 0) {
		LirAffine ni = col_at(x, cl, j);
		return load_b(x, kv, &ni);
	}
	LirAffine a = panel_at(x, pk, cl, j);
	lir_term(x->k, &a, kv, cl->w);
	lir_term(x->k, &a, cl->lv, 1);
	return lir_load(x->k, pk->buf, &a);
}

/* The lines of Y a register block adds its partial sums to, prefetched
 * in its k loop: the block's loads of Y come after the loop, where lines
 * from L3 (Y larger than L2; a row of it a page or more from the next)
 * would hold up the epilogue.  Each row's columns [lo, lo + w) of the
 * group: a prefetch a line, and one more at its last column where the run
 * may start inside a line.  rows: the rows mi[0 .. rows) at once (before
 * the loop); kv >= 0 instead: row (kv - k0) / kstep of the block at each
 * iteration of kv's loop (stepping kstep k's) -- spread, they do not take
 * every fill buffer at once (28 prefetches in a row stalled the loop
 * behind them); the iterations past the block's last row ask for the next
 * row block's lines of the same columns (or past Y's end: a hint). */
static void prefetch_y(Mm *x, const Cols *cl, const LirAffine *mi, int rows, int kv, int64_t k0, int64_t kstep)
{
	int64_t line = x->pf_y;
	bool aligned = x->m->N % line == 0 && cl->lo % line == 0 && cl->w % line == 0;
	/* (a run that starts inside a line ends in one more: its last column) */
	bool last_col = !aligned && (cl->w - 1) % line != 0;
	for (int i = 0; i < rows; i++)
		for (int64_t o = 0; o < cl->w + (last_col ? line : 0); o += line) {
			/* (the group's columns without its lane variable: that
			 * loop has one iteration, at 0) */
			LirAffine nj = lir_affine(cl->lo + (o < cl->w ? o : cl->w - 1));
			if (cl->g >= 0)
				lir_term(x->k, &nj, cl->g, cl->w);
			if (cl->nb >= 0)
				lir_term(x->k, &nj, cl->nb, 1);
			LirAffine ya = y_index(x, &mi[i], &nj);
			if (kv >= 0) {
				lir_term(x->k, &ya, kv, x->m->N / kstep);
				ya.off -= k0 * (x->m->N / kstep);
			}
			lir_prefetch(x->k, x->Y, &ya);
		}
}

/* One register block: mr rows (from row r0) x nr vectors of Y,
 * accumulators across the k loop over [k0, k1); nr loads of B and mr
 * broadcasts of A feed mr * nr FMAs per k.  Partial sums (K blocks) go
 * through Y. */
static void block(Mm *x, const Pack *pk, const LirAffine *r0, int mr, const Cols *cl, int64_t k0, int64_t k1)
{
	const MatmulCtx *m = x->m;
	LirKernel *k = x->k;
	CG *c = x->c;
	int nr = cl->nr;
	bool first = k0 == 0, last = k1 == m->K;
	int acc[GEMM_MR_MAX][2];
	LirAffine mi[GEMM_MR_MAX], ni[2];
	for (int i = 0; i < mr; i++) {
		mi[i] = *r0;
		mi[i].off += i;
	}
	for (int j = 0; j < nr; j++)
		ni[j] = col_at(x, cl, j);
	/* The accumulators start at 0 in every K block; the partial sums of
	 * the earlier ones are added after its k loop, so that no load of Y
	 * (from L2 or further) holds up the loop's first FMAs. */
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++) {
			acc[i][j] = lir_temp(k, SORT_V);
			lir_assign(k, acc[i][j], lir_constf(k, 0.0));
		}
	/* Y's lines for the partial sums: a row an iteration of the k loop
	 * unrolled (N a multiple of the unrolling: row (kv - k0) / 4 has an
	 * affine address), where it has an iteration for each row; else all
	 * before the loop */
	bool unroll = k1 - k0 >= 2 * GEMM_K_UNROLL;
	bool pf_y = !first && x->pf_y > 0;
	bool spread = pf_y && unroll && !x->b1 && (k1 - k0) / GEMM_K_UNROLL >= mr && x->m->N % GEMM_K_UNROLL == 0;
	if (pf_y && !spread)
		prefetch_y(x, cl, mi, mr, -1, 0, 1);
	int kv = lir_for(k, k0, k1, 1);
	int b[2];
	for (int j = 0; j < nr; j++) {
		b[j] = lir_temp(k, SORT_V);
		lir_assign(k, b[j], load_bcol(x, pk, kv, cl, j));
	}
	for (int i = 0; i < mr; i++) {
		int a = lir_temp(k, SORT_V);
		lir_assign(k, a, load_a(x, &mi[i], kv));
		for (int j = 0; j < nr; j++)
			lir_assign(k, acc[i][j], lir_op(k, SEL_FMA_V, lir_ref(k, a), lir_ref(k, b[j]), lir_ref(k, acc[i][j])));
	}
	if (x->pf_b > 0 && pk->buf >= 0 && nr == 2)
		for (int j = 0; j < nr; j++) {
			LirAffine a = panel_at(x, pk, cl, j);
			lir_term(k, &a, kv, cl->w); /* (its lane 0: lv is 0 in a group of 2 vectors) */
			a.off += x->pf_b * cl->w; /* (past the panels' end near the last k: a hint) */
			lir_prefetch(k, pk->buf, &a);
		}
	if (x->pf_now) {
		/* the next block's last row at this k: the line its rows
		 * (mr * 4 <= 64 bytes) do not share with this block's, which the
		 * block after reads (its address may be past A's end: a hint) */
		LirAffine nx = mi[mr - 1];
		nx.off += mr;
		LirAffine pa = a_index(x, &nx, kv);
		lir_prefetch(k, x->A, &pa);
	}
	lir_end(k);
	/* k unrolled 4 times: the loop's counter, compare and pointer bumps
	 * once per 4 k steps, off the ports the FMAs need */
	if (unroll)
		lir_unroll(k, kv, GEMM_K_UNROLL);
	if (spread && lir_reopen(k, kv)) {
		prefetch_y(x, cl, mi, 1, kv, k0, GEMM_K_UNROLL);
		lir_end(k);
	}
	lir_strength_reduce(k, kv);
	if (!first)
		for (int i = 0; i < mr; i++)
			for (int j = 0; j < nr; j++) {
				LirAffine ya = y_index(x, &mi[i], &ni[j]);
				lir_assign(k, acc[i][j], lir_op(k, SEL_ADD_V, lir_load(k, x->Y, &ya), lir_ref(k, acc[i][j]), NULL));
			}
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

/* The column groups of Y: groups of 2 vectors over [0, n2), one of 1
 * vector over [n2, vend), and the last N - vend columns as one masked
 * vector (where the target has masks; else vend = the end here and a
 * scalar loop takes them after). */
typedef struct {
	int64_t lo, hi, w;
	int nr;
	bool masked;
} ColClass;

static int col_classes(Mm *x, int64_t vend, int64_t nend, ColClass *cc)
{
	int64_t w2 = 2 * x->c->lanes, n2 = vend / w2 * w2;
	int n = 0;
	if (n2 > 0)
		cc[n++] = (ColClass){0, n2, w2, 2, false};
	if (vend > n2)
		cc[n++] = (ColClass){n2, vend, vend - n2, 1, false};
	if (nend > vend)
		cc[n++] = (ColClass){vend, nend, nend - vend, 1, true};
	return n;
}

/* Opens the loops of a column class (the group loop, then the one vector
 * or masked iteration); closes with close_cols. */
static Cols open_cols(Mm *x, const ColClass *cc)
{
	LirKernel *k = x->k;
	Cols cl = {-1, -1, cc->lo, cc->w, cc->nr, -1};
	if (cc->hi - cc->lo > cc->w)
		cl.g = lir_for(k, 0, (cc->hi - cc->lo) / cc->w, 1);
	cl.lv = lir_for(k, 0, cc->w, cc->w);
	k->vars[cl.lv].kind = cc->masked ? LIR_LOOP_MASKED : LIR_LOOP_VECTOR;
	return cl;
}

static void close_cols(Mm *x, const Cols *cl)
{
	lir_end(x->k);
	if (cl->g >= 0)
		lir_end(x->k);
}

/* B's K block [k0, k1) into the panels of P at run time (pk: kb = k0):
 * vector copies when B is contiguous along n, else a scalar transpose
 * (each column of a group read along k). */
/* B's element at column col of group g of cl (from the N block nb where
 * nb >= 0), kt its index's k terms: B in place, read by the copies of a
 * transposed B */
static LirAffine bt_at(Mm *x, const Cols *cl, int nb, int64_t col, const LirAffine *kt)
{
	LirAffine a = lir_affine((cl->lo + col) * x->b_n);
	add_batch(x, &a, x->m->bstr);
	add_scaled(x, &a, kt, 1);
	if (cl->g >= 0)
		lir_term(x->k, &a, cl->g, cl->w * x->b_n);
	if (nb >= 0)
		lir_term(x->k, &a, nb, x->b_n);
	return a;
}

/* A new vector temporary: op(a, b) of two others */
static int op2(LirKernel *k, SelOp op, int a, int b)
{
	int t = lir_temp(k, SORT_V);
	lir_assign(k, t, lir_op(k, op, lir_ref(k, a), lir_ref(k, b), NULL));
	return t;
}

/* v[0..L) (a tile's rows, L lanes each: 8 or 16) into its columns, in
 * place: within each segment of 4 lanes, pairs of rows zipped (ziplo /
 * ziphi), then pairs of those (ziplo2 / ziphi2): u[4g + q]'s segment s is
 * column 4 s + q of rows 4 g .. 4 g + 3; then the segments gathered across
 * the vectors (halflo / halfhi; at 16 lanes segev / segod after them). */
static void transpose(LirKernel *k, int *v, int L)
{
	int t[GEMM_LANES_MAX], u[GEMM_LANES_MAX];
	for (int j = 0; j < L; j += 2) {
		t[j] = op2(k, SEL_ZIPLO_V, v[j], v[j + 1]);
		t[j + 1] = op2(k, SEL_ZIPHI_V, v[j], v[j + 1]);
	}
	for (int g = 0; g < L; g += 4) {
		u[g] = op2(k, SEL_ZIPLO2_V, t[g], t[g + 2]);
		u[g + 1] = op2(k, SEL_ZIPHI2_V, t[g], t[g + 2]);
		u[g + 2] = op2(k, SEL_ZIPLO2_V, t[g + 1], t[g + 3]);
		u[g + 3] = op2(k, SEL_ZIPHI2_V, t[g + 1], t[g + 3]);
	}
	for (int q = 0; q < 4; q++) {
		if (L == 8) {
			v[q] = op2(k, SEL_HALFLO_V, u[q], u[4 + q]);
			v[4 + q] = op2(k, SEL_HALFHI_V, u[q], u[4 + q]);
			continue;
		}
		int va = op2(k, SEL_HALFLO_V, u[q], u[4 + q]), vb = op2(k, SEL_HALFHI_V, u[q], u[4 + q]);
		int wa = op2(k, SEL_HALFLO_V, u[8 + q], u[12 + q]), wb = op2(k, SEL_HALFHI_V, u[8 + q], u[12 + q]);
		v[q] = op2(k, SEL_SEGEV_V, va, wa);
		v[4 + q] = op2(k, SEL_SEGOD_V, va, wa);
		v[8 + q] = op2(k, SEL_SEGEV_V, vb, wb);
		v[12 + q] = op2(k, SEL_SEGOD_V, vb, wb);
	}
}

/* The next group's rows rv n .. rv n + n - 1 (of B^T, for the copy of the
 * group of cl) at k k0 + kstep ko: prefetched (past B's last row: a hint) */
static void prefetch_next(Mm *x, const Cols *cl, int nb, int64_t k0, int ko, int64_t kstep, int rv, int64_t n)
{
	LirAffine fk = lir_affine(k0 * x->m->b_k);
	lir_term(x->k, &fk, ko, kstep * x->m->b_k);
	for (int64_t r = 0; r < n; r++) {
		LirAffine fa = bt_at(x, cl, nb, cl->w + r, &fk);
		lir_term(x->k, &fa, rv, n * x->b_n);
		lir_prefetch(x->k, x->B, &fa);
	}
}

/* Whether the target transposes a tile of fixed vectors in registers (8 or
 * 16 lanes: the lane permutations transpose() takes).  GDCC_NO_LANE_PERMUTES
 * (a testing aid, docs/backend.md): as if it had none, so that the tests run
 * the scalar copies a target without them gets. */
static bool has_transpose(CG *c)
{
	static const SelOp ops[] = {SEL_ZIPLO_V, SEL_ZIPHI_V, SEL_ZIPLO2_V, SEL_ZIPHI2_V, SEL_HALFLO_V, SEL_HALFHI_V,
				    SEL_SEGEV_V, SEL_SEGOD_V};
	const char *off = getenv("GDCC_NO_LANE_PERMUTES");
	if ((c->lanes != 8 && c->lanes != 16) || (off && *off))
		return false;
	for (int i = 0; i < (c->lanes == 8 ? 6 : 8); i++)
		if (!cg_covers(c, ops[i], c->vcls))
			return false;
	return true;
}

static void pack_b(Mm *x, const Pack *pk, const ColClass *cc, int ncc, int nb, int64_t k0, int64_t k1)
{
	LirKernel *k = x->k;
	for (int q = 0; q < ncc; q++) {
		Cols cl = {-1, -1, cc[q].lo, cc[q].w, cc[q].nr, nb};
		if (x->b_n == 1) {
			cl = open_cols(x, &cc[q]);
			cl.nb = nb;
			int kv = lir_for(k, k0, k1, 1);
			for (int j = 0; j < cl.nr; j++) {
				LirAffine pa = panel_at(x, pk, &cl, j);
				lir_term(k, &pa, kv, cl.w);
				lir_term(k, &pa, cl.lv, 1);
				LirAffine ni = col_at(x, &cl, j);
				lir_store(k, pk->buf, &pa, load_b(x, kv, &ni));
			}
			lir_end(k);
			lir_strength_reduce(k, kv);
			close_cols(x, &cl);
			continue;
		}
		/* along k, the w columns of group g at each k (w loads from
		 * B's rows, each column walked along its row; w contiguous
		 * stores) */
		if (cc[q].hi - cc[q].lo > cc[q].w)
			cl.g = lir_for(k, 0, (cc[q].hi - cc[q].lo) / cc[q].w, 1);
		int64_t lf = x->pf_line;
		int64_t L = x->c->lanes;
		if (x->bt_vec && !cc[q].masked && cl.w % L == 0 && (k1 - k0) % L == 0) {
			/* tiles of lanes rows x lanes k's: rb the tile's rows
			 * (of the group's w), ko its k's; each row a vector
			 * along k (the lane loop lv: k there, the row in the
			 * panel's stores), transposed in registers, stored a
			 * vector a k.  Each row prefetches the next group's row
			 * at that line. */
			int rb = lir_for(k, 0, cl.w / L, 1), ko = lir_for(k, 0, (k1 - k0) / L, 1);
			int lv = lir_for(k, 0, L, L);
			k->vars[lv].kind = LIR_LOOP_VECTOR;
			LirAffine kk = lir_affine(k0);
			lir_term(k, &kk, ko, L);
			int v[GEMM_LANES_MAX];
			for (int64_t i = 0; i < L; i++) {
				LirAffine bk = lir_affine(0);
				add_scaled(x, &bk, &kk, x->m->b_k);
				lir_term(k, &bk, lv, 1);
				LirAffine ba = bt_at(x, &cl, nb, i, &bk);
				lir_term(k, &ba, rb, L * x->b_n);
				v[i] = lir_temp(k, SORT_V);
				lir_assign(k, v[i], lir_load(k, x->B, &ba));
			}
			transpose(k, v, (int)L);
			for (int64_t j = 0; j < L; j++) {
				LirAffine pa = panel_at(x, pk, &cl, 0), kj = kk;
				kj.off += j;
				add_scaled(x, &pa, &kj, cl.w);
				lir_term(k, &pa, rb, L);
				lir_term(k, &pa, lv, 1);
				lir_store(k, pk->buf, &pa, lir_ref(k, v[j]));
			}
			if (lf > 0)
				prefetch_next(x, &cl, nb, k0, ko, L, rb, L);
			lir_end(k);
			lir_end(k);
			lir_strength_reduce(k, ko);
			lir_end(k);
			if (cl.g >= 0)
				lir_end(k);
			continue;
		}
		int64_t sr = x->bt_rows;
		if (lf > 0 && sr > 0 && !cc[q].masked && cl.w % lf == 0 && cl.w % sr == 0 && (k1 - k0) % lf == 0) {
			/* k = k0 + lf ko + ki: a cache line of k's (lf) at a
			 * time, sr rows of B^T (columns j) at a time, k by k:
			 * their lf k's sr lines, each read once, and at each k
			 * sr contiguous stores (two a cycle where they share a
			 * line: one row at a time stored a line a k); the w
			 * rows of a group all at one k would be w lines at B's
			 * row stride, as many in one L1 set where the stride is
			 * a multiple of 4 KiB (2048 k's: 32 lines in a 12-way
			 * set, each read again from L2 at each k).  Each row
			 * prefetches the next group's row j at that line, so
			 * that the next group's copy finds it in L1 or L2, not
			 * in L3 at a stride the hardware does not follow (the
			 * rows past B's last: a hint). */
			int ko = lir_for(k, 0, (k1 - k0) / lf, 1), jv = lir_for(k, 0, cl.w / sr, 1);
			for (int64_t ki = 0; ki < lf; ki++) {
				LirAffine kk = lir_affine(k0 + ki);
				lir_term(k, &kk, ko, lf);
				for (int64_t r = 0; r < sr; r++) {
					LirAffine pa = panel_at(x, pk, &cl, 0);
					add_scaled(x, &pa, &kk, cl.w);
					lir_term(k, &pa, jv, sr);
					pa.off += r;
					LirAffine bk = lir_affine(0);
					add_scaled(x, &bk, &kk, x->m->b_k);
					LirAffine ba = bt_at(x, &cl, nb, r, &bk);
					lir_term(k, &ba, jv, sr * x->b_n);
					lir_store(k, pk->buf, &pa, lir_load(k, x->B, &ba));
				}
			}
			prefetch_next(x, &cl, nb, k0, ko, lf, jv, sr);
			lir_end(k);
			lir_strength_reduce(k, jv);
			lir_end(k);
			if (cl.g >= 0)
				lir_end(k);
			continue;
		}
		if (lf > 0 && !cc[q].masked && cl.w % lf == 0 && (k1 - k0) % lf == 0) {
			/* k = k0 + lf ko + ki: at each k, w / lf rows of the
			 * next group (its first column w on), line ko of each, so
			 * that over a line's lf k's every row's line is asked
			 * for: that group's copy then finds B^T in L1, not a line
			 * at a time from L3 at a 4 KiB-ish stride the hardware
			 * does not follow (the rows past B's last: a hint) */
			int ko = lir_for(k, 0, (k1 - k0) / lf, 1), ki = lir_for(k, 0, lf, 1);
			/* (k's terms: k0 + lf ko + ki) */
			LirAffine kk = lir_affine(k0);
			lir_term(k, &kk, ko, lf);
			lir_term(k, &kk, ki, 1);
			for (int64_t j = 0; j < cl.w; j++) {
				LirAffine pa = panel_at(x, pk, &cl, 0);
				pa.off += j;
				add_scaled(x, &pa, &kk, cl.w);
				LirAffine bk = lir_affine(0);
				add_scaled(x, &bk, &kk, x->m->b_k);
				LirAffine ba = bt_at(x, &cl, nb, j, &bk);
				lir_store(k, pk->buf, &pa, lir_load(k, x->B, &ba));
			}
			/* (line ko of rows w / lf ki + r of the next group) */
			LirAffine fk = lir_affine(k0 * x->m->b_k);
			lir_term(k, &fk, ko, lf * x->m->b_k);
			lir_term(k, &fk, ki, cl.w / lf * x->b_n);
			for (int64_t r = 0; r < cl.w / lf; r++) {
				LirAffine fa = bt_at(x, &cl, nb, cl.w + r, &fk);
				lir_prefetch(k, x->B, &fa);
			}
			lir_end(k);
			lir_strength_reduce(k, ki);
			lir_end(k);
			if (cl.g >= 0)
				lir_end(k);
			continue;
		}
		int kv = lir_for(k, k0, k1, 1);
		for (int64_t j = 0; j < cl.w; j++) {
			LirAffine pa = panel_at(x, pk, &cl, 0);
			pa.off += j;
			lir_term(k, &pa, kv, cl.w);
			LirAffine bk = lir_affine(0);
			lir_term(k, &bk, kv, x->m->b_k);
			LirAffine ba = bt_at(x, &cl, nb, j, &bk);
			lir_store(k, pk->buf, &pa, lir_load(k, x->B, &ba));
		}
		lir_end(k);
		lir_strength_reduce(k, kv);
		if (cl.g >= 0)
			lir_end(k);
	}
}

/* A register block's `rows` rows from row `base` (an affine) of the K
 * block [k0, k1) into the scratch Ap (a micro-panel), vector copies along
 * A's contiguous axis (the remainder masked where the target has masks). */
static void pack_a(Mm *x, const LirAffine *base, int64_t rows, int64_t k0, int64_t k1)
{
	LirKernel *k = x->k;
	const MatmulCtx *m = x->m;
	bool by_rows = m->a_k == 1; /* A row-major: each row along k */
	x->ap_row = *base;
	x->ap_kb = k0;
	x->ap_m = by_rows ? k1 - k0 : 1;
	x->ap_k = by_rows ? 1 : rows;
	int outer = by_rows ? lir_for(k, 0, rows, 1) : lir_for(k, k0, k1, 1);
	int inner = by_rows ? lir_for(k, k0, k1, 1) : lir_for(k, 0, rows, 1);
	int mv = by_rows ? outer : inner, kv = by_rows ? inner : outer;
	LirAffine mi = *base;
	lir_term(k, &mi, mv, 1);
	LirAffine pa = lir_affine(x->ap_off - k0 * x->ap_k);
	lir_term(k, &pa, mv, x->ap_m);
	lir_term(k, &pa, kv, x->ap_k);
	int Ap = x->Ap;
	x->Ap = -1;
	lir_store(k, Ap, &pa, load_a(x, &mi, kv));
	x->Ap = Ap;
	lir_end(k);
	lir_end(k);
	lir_vectorize(k, inner, x->masks ? LIR_TAIL_MASKED : LIR_TAIL_SCALAR);
	lir_strength_reduce(k, outer);
}

/* The rows [r0, r1) register block by register block, each across every
 * column class (from the N block nb where nb >= 0): the block's rows of A
 * (copied first into a micro-panel when x->Ap >= 0) stay in L1 while B's
 * panels stream past from L2, and Y is walked along its rows (a few pages,
 * lines the hardware prefetches), not down its columns. */
static void rows_cols(Mm *x, const Pack *pk, const ColClass *cc, int ncc, int nb, int64_t r0, int64_t r1, int mr,
		      int64_t k0, int64_t k1)
{
	LirKernel *k = x->k;
	int64_t rm = r0 + (r1 - r0) / mr * mr;
	for (int part = 0; part < 2; part++) {
		int64_t lo = part ? rm : r0, hi = part ? r1 : rm;
		if (hi <= lo)
			continue;
		int rows = part ? (int)(r1 - rm) : mr;
		int mv = part ? -1 : lir_for(k, r0, rm, mr);
		LirAffine ra = at(x, mv, part ? rm : 0);
		/* A transposed, the next block's rows prefetched (pf_a) at each k,
		 * once: in the k loop of the column panel one micro-kernel before
		 * the next block's copy reads them (the second-to-last; the first
		 * of two).  Earlier, the lines (a k's stride a multiple of 4 KiB
		 * apart: 12 a set of L2) are evicted from L2 by B's N block before
		 * the copy comes (and every panel's k loop had prefetched them: 32
		 * times a block at 2048^3); later, they are not there yet
		 * (3136 x 64 x 576 TT, 2 panels, the last: 1.4 % slower; the
		 * copy itself: 5-7 %). */
		if (x->Ap >= 0)
			pack_a(x, &ra, rows, k0, k1);
		int64_t ng = ncc > 0 ? (cc[0].hi - cc[0].lo) / cc[0].w : 0;
		int64_t pg = !x->pf_a || part || ng < 1 ? -1 : ncc > 1 || ng == 1 ? ng - 1 : ng - 2;
		for (int q = 0; q < ncc; q++) {
			/* (class 0 in up to 3 pieces: the groups before pg, pg, after) */
			ColClass piece[3] = {cc[q], cc[q], cc[q]};
			int np = 1;
			if (q == 0 && pg >= 0) {
				int64_t at = cc[0].lo + pg * cc[0].w;
				piece[0].hi = at;
				piece[1].lo = at;
				piece[1].hi = at + cc[0].w;
				piece[2].lo = at + cc[0].w;
				np = 3;
			}
			for (int h = 0; h < np; h++) {
				if (piece[h].hi <= piece[h].lo)
					continue;
				Cols cl = open_cols(x, &piece[h]);
				cl.nb = nb;
				x->pf_now = np == 3 && h == 1;
				block(x, pk, &ra, rows, &cl, k0, k1);
				x->pf_now = false;
				close_cols(x, &cl);
			}
		}
		if (!part)
			lir_end(k);
	}
}

/* The N blocks of the 2-vector columns (cc[0]): *nblk blocks, the first
 * *nfull columns in blocks of *nc (a loop over equal blocks), the rest
 * after; nblk <= 1: none. */
static void nblocks(const Mm *x, const ColClass *cc, int ncc, int64_t *nblk, int64_t *nc, int64_t *nfull)
{
	int64_t n2 = ncc > 0 && cc[0].nr == 2 ? cc[0].hi - cc[0].lo : 0, w = ncc > 0 ? cc[0].w : 1;
	*nblk = x->nc > 0 ? (n2 + x->nc - 1) / x->nc : 1;
	*nc = *nblk > 1 ? (n2 / *nblk + w - 1) / w * w : n2;
	*nfull = *nblk > 1 ? n2 / *nc * *nc : n2;
}

/* Every row for the K block [k0, k1): the 2-vector columns in N blocks of
 * about x->nc (a loop over equal blocks, the rest after), so that B's K
 * block of an N block stays in L2 while every row block passes.  A run-
 * time pack (pack: B's K block copied into pk's panels here) packs one N
 * block at a time, just before the rows read it (in L2 then). */
static void kblock(Mm *x, Pack *pk, bool pack, const ColClass *cc, int ncc, int mr, int64_t k0, int64_t k1)
{
	LirKernel *k = x->k;
	int64_t nblk, nc, nfull, w = ncc > 0 ? cc[0].w : 1;
	nblocks(x, cc, ncc, &nblk, &nc, &nfull);
	if (nblk <= 1) {
		if (pack)
			pack_b(x, pk, cc, ncc, -1, k0, k1);
		rows_cols(x, pk, cc, ncc, -1, 0, x->m->M, mr, k0, k1);
		return;
	}
	if (k0 == 0)
		lir_note(k, "N blocks of %lld columns (B's K block of one in half of L2): %lld, then %lld", (long long)nc,
			 (long long)(nfull / nc), (long long)(cc[0].hi - cc[0].lo - nfull));
	ColClass blk = {cc[0].lo, cc[0].lo + nc, w, 2, false};
	int nb = lir_for(k, 0, nfull, nc);
	if (pack) {
		pk->base = cc[0].lo;
		pk->basevar = nb;
		pack_b(x, pk, &blk, 1, nb, k0, k1);
	}
	rows_cols(x, pk, &blk, 1, nb, 0, x->m->M, mr, k0, k1);
	lir_end(k);
	ColClass rest[3];
	int nrest = 0;
	if (nfull < cc[0].hi - cc[0].lo)
		rest[nrest++] = (ColClass){cc[0].lo + nfull, cc[0].hi, w, 2, false};
	for (int q = 1; q < ncc; q++)
		rest[nrest++] = cc[q];
	if (nrest) {
		if (pack) {
			pk->base = rest[0].lo;
			pk->basevar = -1;
			pack_b(x, pk, rest, nrest, -1, k0, k1);
		}
		rows_cols(x, pk, rest, nrest, -1, 0, x->m->M, mr, k0, k1);
	}
	pk->base = 0;
	pk->basevar = -1;
}

static int64_t param_or(const Target *t, const char *name, int64_t dflt)
{
	const ParamInfo *p = target_param(t, name);
	return p && p->n ? (int64_t)p->values[0] : dflt;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The most of n cache lines a stride bytes apart that fall in one set of
 * the .md's L1 (l1d_bytes / l1d_ways / 64 sets; 8 ways where it does not
 * say); 0 where it has no l1d_bytes */
static int64_t set_most(const Target *t, int64_t n, int64_t stride)
{
	int64_t l1 = param_or(t, "l1d_bytes", 0), ways = param_or(t, "l1d_ways", 8);
	int64_t sets = ways > 0 ? l1 / ways / 64 : 0, most = 0;
	if (sets < 1)
		return 0;
	int64_t *cnt = xcalloc((size_t)sets, sizeof *cnt);
	for (int64_t i = 0; i < n; i++) {
		int64_t c = ++cnt[i * stride / 64 % sets];
		most = c > most ? c : most;
	}
	free(cnt);
	return most;
}

/* Whether a register block's rows of A, read in place across a K block,
 * would not stay in L1: more of their cache lines in one set than half of
 * its ways (l1d_bytes / l1d_ways / 64 sets; 8 ways where the .md does not
 * say), e.g. 14 rows 4 KiB apart all in one set of a 12-way L1. */
static bool a_conflicts(Mm *x, int mr, int64_t kc)
{
	const Target *t = x->c->t;
	int64_t l1 = param_or(t, "l1d_bytes", 0), ways = param_or(t, "l1d_ways", 8);
	int64_t sets = ways > 0 ? l1 / ways / 64 : 0;
	if (sets < 1)
		return false;
	int64_t n = (int64_t)mr * kc, *line = xmalloc((size_t)n * sizeof *line), *cnt = xcalloc((size_t)sets, sizeof *cnt);
	for (int64_t i = 0; i < mr; i++)
		for (int64_t kk = 0; kk < kc; kk++)
			line[i * kc + kk] = (i * x->m->a_m + kk * x->m->a_k) * 4 / 64;
	qsort(line, (size_t)n, sizeof *line, cmp_i64);
	int64_t most = 0;
	for (int64_t i = 0; i < n; i++)
		if (i == 0 || line[i] != line[i - 1]) {
			int64_t c = ++cnt[line[i] % sets];
			most = c > most ? c : most;
		}
	free(line);
	free(cnt);
	return 2 * most > ways;
}

/* Register blocks over the vector columns [0, nend), cache blocks around
 * them (the loops of the GotoBLAS/BLIS design, A's and B's roles as this
 * kernel broadcasts A and loads B).  MR comes from the register file: 2 *
 * MR accumulators + 2 rows of B + 1 broadcast must fit the vector registers
 * the target allocates.  K blocks: a register block's K block of A (MR
 * rows) stays in L1 across the column panels, KC from half of l1d_bytes
 * over a 2-vector panel's row; N blocks: B's K block of an N block stays
 * in half of L2 while every row block passes.  B is read from panels
 * (packed once at compile time when it is a constant, per K block at run
 * time when it is transposed or large), else in place; A's block rows are
 * copied into a micro-panel where in place they would fight over L1 sets. */
static void blocked(Mm *x, int64_t vend, int64_t nend)
{
	CG *c = x->c;
	const MatmulCtx *m = x->m;
	LirKernel *k = x->k;
	const RegClassInfo *vc = &c->t->regclasses[target_root_class(c->t, c->vcls)];
	int free_regs = 0;
	for (int r = 0; r < vc->nregs; r++)
		free_regs += !vc->reserved[r];
	int mr = (free_regs - 3) / 2;
	if (mr > GEMM_MR_MAX)
		mr = GEMM_MR_MAX;
	if (mr < 1)
		mr = 1;
	c->p->gemm_mr = mr;
	int64_t w2 = 2 * c->lanes;
	int64_t kc = param_or(c->t, "l1d_bytes", 0) / 2 / (w2 * 4);
	if (kc <= 0)
		kc = m->K;
	if (kc < 16)
		kc = 16;
	if (kc > m->K)
		kc = m->K;
	int64_t l2 = param_or(c->t, "l2_bytes", 0);
	/* One N block where a K block shorter by at most a third (a multiple
	 * of the vector) puts B's K block of every column in half of L2: each
	 * N block copies A's micro-panels again (a masked load from L2 a k
	 * where A is transposed) and passes over the rows of A and Y once
	 * more, which costs more than the half more K blocks' partial sums
	 * through Y (2048^3 on x86-avx512, KC 192 -> 128: TN/TT/NT 1.5-3 %
	 * faster).  Where N blocks stay, KC stays. */
	int64_t nall = (nend + w2 - 1) / w2 * w2;
	if (l2 > 0 && kc < m->K && kc * 4 * nall > l2 / 2) {
		int64_t k1 = l2 / 2 / (nall * 4) / c->lanes * c->lanes;
		if (3 * k1 >= 2 * kc)
			kc = k1;
	}
	x->nc = l2 / 2 / (kc * 4) / w2 * w2;
	c->p->gemm_kc = (int)kc;
	c->p->gemm_nc = x->nc > 0 && x->nc < nend ? (int)x->nc : (int)nend;
	/* Run-time packing, where it pays: a register block's rows of A into
	 * a micro-panel when in place they would not stay in L1 and at least
	 * two column panels read them; B into panels when it does not fit in
	 * half of L2 and at least two row blocks read each panel (the copy is
	 * 1 / M of the work). */
	x->pack_a = nend >= 2 * w2 && a_conflicts(x, mr, kc);
	x->pf_a = m->a_m == 1 && m->a_k > 1 && m->M > mr && cg_has_prefetch(c);
	x->pf_line = x->b_n != 1 && cg_has_prefetch(c) ? param_or(c->t, "cache_line", 0) / 4 : 0;
	/* (rows of B^T copied together: the most, a power of 2, whose lines
	 * at one k take at most half of a set's ways) */
	x->bt_rows = 0;
	if (x->b_n != 1 && set_most(c->t, w2, x->b_n * 4) > param_or(c->t, "l1d_ways", 8)) {
		x->bt_rows = 1;
		while (x->bt_rows * 2 < w2 && 2 * set_most(c->t, x->bt_rows * 2, x->b_n * 4) <= param_or(c->t, "l1d_ways", 8))
			x->bt_rows *= 2;
	}
	x->bt_vec = x->b_n != 1 && m->b_k == 1 && has_transpose(c);
	x->pack_nn = l2 > 0 && m->K * m->N * 4 > l2 / 2 && m->M > mr;
	x->pf_b = cg_has_prefetch(c) ? param_or(c->t, "prefetch_bytes", 0) / (4 * w2) : 0;
	x->pf_y = cg_has_prefetch(c) ? param_or(c->t, "cache_line", 0) / 4 : 0;
	ColClass cc[3];
	int ncc = col_classes(x, vend, nend, cc);
	Pack pk = {-1, 0, 0, false, 0, -1};
	const Tensor *bt = x->b1 || x->tr ? NULL : cg_const_data(c, m->B->id);
	if (bt && bt->type.dtype == DT_F32) {
		/* every K x N matrix of B in panel order, now */
		int64_t nmat = tensor_numel(bt) / (m->K * m->N);
		Tensor *t = tensor_new(DT_F32, &bt->type.shape);
		const float *src = bt->data;
		float *dst = t->data;
		for (int64_t q = 0; q < nmat; q++)
			for (int64_t n = 0; n < m->N; n++)
				for (int64_t kk = 0; kk < m->K; kk++) {
					int64_t pos = n;
					for (int i = 0; i < ncc; i++)
						if (n >= cc[i].lo && n < cc[i].hi) {
							int64_t g0 = cc[i].lo + (n - cc[i].lo) / cc[i].w * cc[i].w;
							pos = g0 * m->K + kk * cc[i].w + n - g0;
						}
					if (n >= nend)
						pos = nend * m->K + kk * (m->N - nend) + n - nend;
					dst[q * m->K * m->N + pos] = src[q * m->K * m->N + kk * m->b_k + n * x->b_n];
				}
		const char *sym = cg_const_relayout(c, m->B->id, t);
		pk = (Pack){lir_data_buffer(k, "B (panels)", nmat * m->K * m->N, 4, sym), m->K, 0, true, 0, -1};
		x->Bp = pk.buf;
		x->Bp_end = nend;
		lir_note(k, "B packed at compile time: panels of %lld columns x %lld k", (long long)w2, (long long)m->K);
	}
	/* One scratch buffer for the node: B's K block in panels, then A's
	 * micro-panel. */
	bool pack_b_now = pk.buf < 0 && (x->b_n != 1 || x->pack_nn);
	/* (packed an N block at a time: the widest of the blocks and the rest) */
	int64_t nblk, nc, nfull, pw = nend;
	nblocks(x, cc, ncc, &nblk, &nc, &nfull);
	if (nblk > 1)
		pw = nc > nend - cc[0].lo - nfull ? nc : nend - cc[0].lo - nfull;
	int64_t bsize = pack_b_now ? kc * pw : 0, asize = x->pack_a ? mr * kc : 0;
	int scratch = bsize + asize > 0 ? cg_lir_buffer(c, k, cg_scratch(c, bsize + asize)) : -1;
	if (pack_b_now) {
		pk = (Pack){scratch, kc, 0, false, 0, -1};
		lir_note(k, "B packed per K block at run time (%s): panels of %lld columns x %lld k%s",
			 x->b_n != 1 ? "transposed" : "larger than half of L2", (long long)w2, (long long)pk.kp,
			 nblk > 1 ? ", an N block at a time" : "");
	}
	if (x->pack_a) {
		x->Ap = scratch;
		x->ap_off = bsize;
		lir_note(k, "A's rows copied at run time into a micro-panel a register block: %d rows x %lld k "
			    "(in place they would not stay in L1)", mr, (long long)kc);
	}
	for (int64_t k0 = 0; k0 < m->K; k0 += kc) {
		int64_t k1 = k0 + kc < m->K ? k0 + kc : m->K;
		pk.kb = pack_b_now ? k0 : pk.kb;
		kblock(x, &pk, pack_b_now, cc, ncc, mr, k0, k1);
	}
	x->Ap = -1; /* (the plain loop after reads A in place) */
}

/* Scalable vectors: an N strip of vl columns times MR rows, MR accumulators
 * (register groups) across the k loop sharing one load of B per k: the
 * unrolling over rows, MR from the vector registers left by the kernel's
 * LMUL (`--emit=loops` and the report show both). */
static void strips_rows(Mm *x, int nv, int mv, int mr)
{
	LirKernel *k = x->k;
	int acc[STRIP_MR_MAX];
	LirAffine mi[STRIP_MR_MAX], ni = at(x, nv, 0);
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
	if (mr > STRIP_MR_MAX)
		mr = STRIP_MR_MAX;
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
	LirExpr *bv;
	if (x->Bp >= 0) { /* the columns after the panels, packed as one group */
		int64_t e = x->Bp_end, w = x->m->N - e;
		LirAffine pa = lir_affine(e * x->m->K - e);
		add_batch(x, &pa, x->m->bstr);
		lir_term(k, &pa, kv, w);
		lir_term(k, &pa, nv, 1);
		bv = lir_load(k, x->Bp, &pa);
	} else {
		bv = load_b(x, kv, &ni);
	}
	lir_assign(k, acc, lir_op(k, SEL_FMA_V, load_a(x, &mi, kv), bv, lir_ref(k, acc)));
	lir_end(k);
	final_store(x, acc, &mi, &ni);
	lir_end(k);
	lir_end(k);
	if (vector)
		cg_vectorize(x->c, k, nv);
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
	/* B a transpose read by nothing else, of an X with B's k axis
	 * contiguous (attention's k^T): B^T read from X (packed into panels),
	 * the transpose not materialized (codegen.c skips it) */
	int64_t trld = 0, trstr[MAX_RANK] = {0};
	const Node *tr = !gemm && !a1 && !b1 ? cg_matmul_transposed_b(c, n, &trld, trstr) : NULL;
	if (tr) {
		B = tr->in[0];
		mc.B = B;
		mc.b_k = 1;
		b_n = trld / 4;
		for (int i = 0; i < batch.rank; i++)
			mc.bstr[i] = trstr[i];
	}
	Mm x = {.c = c, .m = &mc, .k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: %s", Y->name, op_info[n->op].name),
		.A = -1, .B = -1, .C = -1, .Y = -1, .a1 = a1, .b1 = b1, .b_n = b_n, .Bp = -1, .Ap = -1};
	LirKernel *k = x.k;
	x.A = cg_lir_buffer(c, k, A->id);
	x.B = cg_lir_buffer(c, k, B->id);
	x.tr = tr != NULL;
	if (tr)
		lir_note(k, "fused into this kernel: transpose %s (B^T read from %s)", tr->out[0]->name, B->name);
	x.C = C ? cg_lir_buffer(c, k, C->id) : -1;
	x.Y = cg_lir_buffer(c, k, Y->id);
	for (int i = 0; i < batch.rank; i++)
		x.bvar[i] = lir_for(k, 0, batch.dim[i], 1);
	/* fixed vectors: register-blocked micro-kernels over the vector
	 * columns and a masked vector for the rest (where the target has
	 * masks; else the plain loop takes those columns) */
	int64_t vend = cg_vend_of(c, 0, N);
	bool masks = !c->scalable && target_class_for(c->t, SORT_M) >= 0;
	int64_t nend = masks && N > 1 ? N : vend;
	x.masks = masks;
	if (b_n == 1 && vend > 0 && K > 0 && c->scalable && !a1 && !b1 && N > 1) {
		strips(&x);
	} else if (nend > 0 && K > 0 && !c->scalable && !b1 && N > 1) {
		blocked(&x, vend, nend);
		if (nend < N)
			plain(&x, nend, false);
	} else {
		plain(&x, 0, b_n == 1);
	}
	for (int i = 0; i < batch.rank; i++)
		lir_end(k);
	cg_lir_run(c, k, true);
	lir_kernel_free(k);
}
