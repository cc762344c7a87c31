/* Row kernels: reductions and normalizations along an axis (softmax,
 * logsoftmax, reduce_mean, the global pools, layernorm, batchnorm), built
 * as Loop IR.  Each kernel is one loop nest over its rows; a pass over a
 * row is a loop over its elements written for one element, vectorized
 * (lir_vectorize) when the row is contiguous: a reduction T = op(T, e)
 * accumulates in a vector reduced after the vector loop, the scalar
 * remainder going on (fixed vectors), or each strip reduces into T
 * (scalable vectors). */
#include "cg.h"

#undef R
#undef K
#undef OPV
#define R(t) lir_ref(k, (t))
#define K(x) lir_constf(k, (x))
#define OP1(op, a) lir_op(k, (op), (a), NULL, NULL)
#define OP2(op, a, b) lir_op(k, (op), (a), (b), NULL)

/* ---- rows: reductions and normalizations along one axis ------------------------- */

Rows cg_rows_of(const Shape *s, int axis_from, int axis_to)
{
	Rows r = {1, 1, 1};
	for (int d = 0; d < s->rank; d++) {
		if (d < axis_from)
			r.outer *= s->dim[d];
		else if (d < axis_to)
			r.n *= s->dim[d];
		else
			r.inner *= s->dim[d];
	}
	return r;
}

/* A kernel being built: the row loops to vectorize once it is complete. */
typedef struct {
	CG *c;
	LirKernel *k;
	int vec[8];
	int nvec;
} RowK;

static void rowk_begin(RowK *rk, CG *c, const Node *n)
{
	rk->c = c;
	rk->k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: %s", n->out[0]->name, op_info[n->op].name);
	rk->nvec = 0;
}

/* In scalar context a v temporary holds what its first value is: the
 * result of an expansion (lm_exp) is a vector of equal lanes there, and
 * every use would go on in vectors (a reduction's add too, its lane taken
 * back each time).  A v temporary that a store in scalar context reads,
 * assigned only in scalar context, becomes an f one: its lane taken back
 * once, where it is assigned. */
static void mark_vector_assigned(const LirKernel *k, const LirBlock *b, bool vec, bool *inv)
{
	for (int i = 0; i < b->n; i++) {
		const LirStmt *s = b->s[i];
		if (s->kind == LS_LOOP)
			mark_vector_assigned(k, &s->body, vec || k->vars[s->var].kind != LIR_LOOP_SCALAR, inv);
		else if (s->kind == LS_ASSIGN && vec)
			inv[s->temp] = true;
	}
}

static void scalar_results(LirKernel *k, const LirBlock *b, bool vec, const bool *inv)
{
	for (int i = 0; i < b->n; i++) {
		const LirStmt *s = b->s[i];
		if (s->kind == LS_LOOP) {
			scalar_results(k, &s->body, vec || k->vars[s->var].kind != LIR_LOOP_SCALAR, inv);
			continue;
		}
		if (s->kind != LS_STORE || vec || s->e->kind != LX_TEMP)
			continue;
		LirTemp *t = &k->temps[s->e->temp];
		if (t->sort == SORT_V && t->ext < 0 && !t->wide && !inv[s->e->temp])
			t->sort = SORT_F;
	}
}

/* Vectorize the row loops (a scalar remainder: the reductions go on in
 * it), then verify, print and lower the kernel. */
static bool rowk_end(RowK *rk)
{
	LirKernel *k = rk->k;
	for (int i = 0; i < rk->nvec && k->ok; i++)
		cg_vectorize(rk->c, k, rk->vec[i]);
	bool *inv = xcalloc((size_t)k->ntemps + 1, sizeof *inv);
	mark_vector_assigned(k, &k->body, k->outer_vector >= 0, inv);
	scalar_results(k, &k->body, k->outer_vector >= 0, inv);
	free(inv);
	bool ok = cg_lir_run(rk->c, k, true);
	lir_kernel_free(k);
	return ok;
}

/* A value kept in a temporary (trees are trees: a value used twice). */
static int keep(LirKernel *k, LirExpr *e)
{
	int t = lir_temp(k, SORT_V);
	lir_assign(k, t, e);
	return t;
}

/* an accumulator starting at v */
static int acc_init(LirKernel *k, double v)
{
	return keep(k, K(v));
}

static LirAffine affine1(LirKernel *k, int64_t off, int var, int64_t coef)
{
	LirAffine a = lir_affine(off);
	if (var >= 0 && coef)
		lir_term(k, &a, var, coef);
	return a;
}

/* The start of row (o, j) (variables of the outer and inner loops, j < 0
 * when inner == 1). */
static LirAffine row_start(LirKernel *k, const Rows *r, int o, int j)
{
	LirAffine a = affine1(k, 0, o, r->n * r->inner);
	if (j >= 0)
		lir_term(k, &a, j, 1);
	return a;
}

/* Opens a pass over the row at `start` (its elements i * inner apart):
 * *a receives element i's index; the loop is vectorized at the end when
 * the row is contiguous. */
static int row_loop(RowK *rk, const Rows *r, const LirAffine *start, LirAffine *a)
{
	LirKernel *k = rk->k;
	int i = lir_for(k, 0, r->n, 1);
	*a = *start;
	lir_term(k, a, i, r->inner);
	if (r->inner == 1 && rk->nvec < (int)(sizeof rk->vec / sizeof rk->vec[0]))
		rk->vec[rk->nvec++] = i;
	return i;
}

typedef enum { RED_SUM, RED_MAX } Reduce;

/* A reduction of the row of buffer xb at start: the accumulator. */
static int row_reduce(RowK *rk, const Rows *r, const LirAffine *start, int xb, Reduce red)
{
	LirKernel *k = rk->k;
	int acc = acc_init(k, red == RED_MAX ? -INFINITY : 0.0);
	LirAffine a;
	row_loop(rk, r, start, &a);
	LirExpr *x = lir_load(k, xb, &a);
	if (rk->c->pro && !rk->c->pro_used) {
		/* the fusion group's prologue, computed here once and stored for
		 * the passes after this one */
		int v = cg_lir_prologue_value(rk->c, k, &a);
		lir_store(k, xb, &a, R(v));
		x = R(v);
	}
	lir_assign(k, acc, OP2(red == RED_MAX ? SEL_MAX_V : SEL_ADD_V, R(acc), x));
	lir_end(k);
	return acc;
}

/* y = exp(x - m) over the row, stored; their sum (the accumulator). */
static int row_exp_sum(RowK *rk, const Rows *r, const LirAffine *start, int xb, int yb, int m)
{
	LirKernel *k = rk->k;
	int sum = acc_init(k, 0.0);
	LirAffine a;
	row_loop(rk, r, start, &a);
	int d = keep(k, OP2(SEL_SUB_V, lir_load(k, xb, &a), R(m)));
	int e = lm_exp(k, d);
	lir_store(k, yb, &a, R(e));
	lir_assign(k, sum, OP2(SEL_ADD_V, R(sum), R(e)));
	lir_end(k);
	return sum;
}

/* The softmax family's rows: (outer, inner) loops around, axis `axis`. */
static Rows open_rows(RowK *rk, const Node *n, int *o, int *j, LirAffine *st)
{
	const Value *x = n->in[0];
	int axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += x->type.shape.rank;
	Rows r = cg_rows_of(&x->type.shape, axis, axis + 1);
	*o = lir_for(rk->k, 0, r.outer, 1);
	*j = r.inner > 1 ? lir_for(rk->k, 0, r.inner, 1) : -1;
	/* rows inner elements apart: vectors across the inner axis, each lane
	 * reducing its own row in the row's order (the row loops inside work
	 * on the lanes) */
	if (*j >= 0 && rk->nvec < (int)(sizeof rk->vec / sizeof rk->vec[0]))
		rk->vec[rk->nvec++] = *j;
	*st = row_start(rk->k, &r, *o, *j);
	return r;
}

/* softmax along one axis: max, then exp(x - max) stored with its sum, then
 * a multiplication by the reciprocal of the sum. */
void cg_softmax(CG *c, const Node *n)
{
	RowK rk;
	rowk_begin(&rk, c, n);
	LirKernel *k = rk.k;
	int xb = cg_lir_buffer(c, k, n->in[0]->id), yb = cg_lir_buffer(c, k, n->out[0]->id);
	int o, j;
	LirAffine st, a;
	Rows r = open_rows(&rk, n, &o, &j, &st);
	int m = row_reduce(&rk, &r, &st, xb, RED_MAX);
	int sum = row_exp_sum(&rk, &r, &st, xb, yb, m);
	int inv = keep(k, OP2(SEL_DIV_V, K(1.0), R(sum)));
	row_loop(&rk, &r, &st, &a);
	lir_store(k, yb, &a, OP2(SEL_MUL_V, lir_load(k, yb, &a), R(inv)));
	lir_end(k);
	if (j >= 0)
		lir_end(k);
	lir_end(k);
	rowk_end(&rk);
}

/* logsoftmax: x - max - log(sum(exp(x - max))). */
void cg_logsoftmax(CG *c, const Node *n)
{
	RowK rk;
	rowk_begin(&rk, c, n);
	LirKernel *k = rk.k;
	int xb = cg_lir_buffer(c, k, n->in[0]->id), yb = cg_lir_buffer(c, k, n->out[0]->id);
	int o, j;
	LirAffine st, a;
	Rows r = open_rows(&rk, n, &o, &j, &st);
	int m = row_reduce(&rk, &r, &st, xb, RED_MAX);
	/* the exponentials go to y as scratch, overwritten below */
	int sum = row_exp_sum(&rk, &r, &st, xb, yb, m);
	/* log of the sum (on a broadcast), its lane read back: a scalar */
	int ls = lir_temp(k, r.inner > 1 ? SORT_V : SORT_F); /* (rows across the lanes: one each) */
	lir_assign(k, ls, R(lm_log(k, sum)));
	int shift = keep(k, OP2(SEL_ADD_V, R(m), R(ls)));
	row_loop(&rk, &r, &st, &a);
	lir_store(k, yb, &a, OP2(SEL_SUB_V, lir_load(k, xb, &a), R(shift)));
	lir_end(k);
	if (j >= 0)
		lir_end(k);
	lir_end(k);
	rowk_end(&rk);
}

/* The reductions over axes (reduce_mean, reduce_sum ... reduce_sum_square):
 * mean, sum and max over the trailing axes from one (the common case) in
 * vectors; the others, and any other axis set, as scalar loops. */

/* the element x before it is accumulated */
static LirExpr *reduce_pre(LirKernel *k, OpKind op, LirExpr *x, int mx)
{
	switch (op) {
	case OP_REDUCE_L1: return OP1(SEL_ABS_V, x);
	case OP_REDUCE_L2: case OP_REDUCE_SUM_SQUARE: {
		int t = keep(k, x);
		return OP2(SEL_MUL_V, R(t), R(t));
	}
	case OP_REDUCE_LOG_SUM_EXP: return R(lm_exp(k, keep(k, OP2(SEL_SUB_V, x, R(mx)))));
	default: return x;
	}
}

static SelOp reduce_acc(OpKind op)
{
	return op == OP_REDUCE_MAX ? SEL_MAX_V : op == OP_REDUCE_MIN ? SEL_MIN_V : op == OP_REDUCE_PROD ? SEL_MUL_V : SEL_ADD_V;
}

static double reduce_init(OpKind op)
{
	return op == OP_REDUCE_MAX ? -INFINITY : op == OP_REDUCE_MIN ? INFINITY : op == OP_REDUCE_PROD ? 1.0 : 0.0;
}

/* the accumulated value acc of count elements as the result */
static LirExpr *reduce_post(LirKernel *k, OpKind op, int acc, int64_t count, int mx)
{
	switch (op) {
	case OP_REDUCE_MEAN: return OP2(SEL_MUL_V, R(acc), K(count ? 1.0 / (double)count : NAN)); /* 0 / 0 */
	case OP_REDUCE_L2: return OP1(SEL_SQRT_V, R(acc));
	case OP_REDUCE_LOG_SUM: return R(lm_log(k, acc));
	case OP_REDUCE_LOG_SUM_EXP: return OP2(SEL_ADD_V, R(mx), R(lm_log(k, acc)));
	default: return R(acc);
	}
}

bool cg_reduce(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	OpKind op = n->op;
	int rank = x->type.shape.rank;
	bool red[MAX_RANK] = {false};
	const int64_t *axes;
	int na = attr_ints(n, "axes", &axes);
	if (na < 0 || na == 0) {
		if (attr_i(n, "noop_with_empty_axes")) { /* the identity */
			int64_t str[MAX_RANK];
			shape_strides(&x->type.shape, str);
			cg_copy(c, x->id, 0, str, y->id, 0, str, &x->type.shape);
			return true;
		}
		for (int d = 0; d < rank; d++)
			red[d] = true;
	} else {
		for (int i = 0; i < na; i++)
			red[axes[i] < 0 ? axes[i] + rank : axes[i]] = true;
	}
	int first = rank;
	for (int d = rank - 1; d >= 0 && red[d]; d--)
		first = d;
	bool trailing = true;
	for (int d = 0; d < rank; d++)
		trailing &= !(red[d] && d < first);
	Rows r = cg_rows_of(&x->type.shape, first, rank);
	RowK rk;
	rowk_begin(&rk, c, n);
	LirKernel *k = rk.k;
	int xb = cg_lir_buffer(c, k, x->id), yb = cg_lir_buffer(c, k, y->id);
	if (trailing && r.n > 0 && (op == OP_REDUCE_MEAN || op == OP_REDUCE_SUM || op == OP_REDUCE_MAX)) {
		/* contiguous rows: vector partial sums (or maxima) */
		int o = lir_for(k, 0, r.outer, 1);
		LirAffine st = row_start(k, &r, o, -1);
		int acc = row_reduce(&rk, &r, &st, xb, op == OP_REDUCE_MAX ? RED_MAX : RED_SUM);
		LirAffine ya = affine1(k, 0, o, 1);
		lir_store(k, yb, &ya, reduce_post(k, op, acc, r.n, -1));
		lir_end(k);
		return rowk_end(&rk);
	}
	/* any axes: loops over the kept axes, then scalar loops over the
	 * reduced ones (log_sum_exp: twice, the max first) */
	int64_t istr[MAX_RANK], count = 1, ostride = 1, ostr[MAX_RANK];
	shape_strides(&x->type.shape, istr);
	for (int d = rank - 1; d >= 0; d--) {
		if (red[d]) {
			count *= x->type.shape.dim[d];
		} else {
			ostr[d] = ostride;
			ostride *= x->type.shape.dim[d];
		}
	}
	LirAffine ia = lir_affine(0), ya = lir_affine(0);
	for (int d = 0; d < rank; d++)
		if (!red[d]) {
			int v = lir_for(k, 0, x->type.shape.dim[d], 1);
			lir_term(k, &ia, v, istr[d]);
			lir_term(k, &ya, v, ostr[d]);
		}
	int mx = -1;
	for (int pass = op == OP_REDUCE_LOG_SUM_EXP ? 0 : 1; pass < 2; pass++) {
		int acc = acc_init(k, pass ? reduce_init(op) : -INFINITY);
		LirAffine ea = ia;
		for (int d = 0; d < rank; d++)
			if (red[d])
				lir_term(k, &ea, lir_for(k, 0, x->type.shape.dim[d], 1), istr[d]);
		LirExpr *e = lir_load(k, xb, &ea);
		lir_assign(k, acc, pass ? OP2(reduce_acc(op), R(acc), reduce_pre(k, op, e, mx)) : OP2(SEL_MAX_V, R(acc), e));
		for (int d = rank - 1; d >= 0; d--)
			if (red[d])
				lir_end(k);
		if (!pass) {
			/* all -inf (or none): 0, so that the sum of exp(x - 0) is 0 and its log -inf */
			LirExpr *fin = OP2(SEL_MAX_V, OP2(SEL_MIN_V, R(acc), K(3.4028234663852886e38)), K(-3.4028234663852886e38));
			mx = keep(k, fin);
			continue;
		}
		lir_store(k, yb, &ya, reduce_post(k, op, acc, count, mx));
	}
	for (int d = rank - 1; d >= 0; d--)
		if (!red[d])
			lir_end(k);
	return rowk_end(&rk);
}

/* global pools: a reduction of each (n, c) row of spatial elements */
void cg_global_pool(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	Rows r = cg_rows_of(&x->type.shape, 2, x->type.shape.rank);
	bool avg = n->op == OP_GLOBAL_AVGPOOL;
	RowK rk;
	rowk_begin(&rk, c, n);
	LirKernel *k = rk.k;
	int xb = cg_lir_buffer(c, k, x->id), yb = cg_lir_buffer(c, k, y->id);
	int o = lir_for(k, 0, r.outer, 1);
	LirAffine st = row_start(k, &r, o, -1);
	int v = row_reduce(&rk, &r, &st, xb, avg ? RED_SUM : RED_MAX);
	LirAffine ya = affine1(k, 0, o, 1);
	LirExpr *val = R(v);
	if (avg)
		val = OP2(SEL_MUL_V, val, K(1.0 / (double)r.n));
	lir_store(k, yb, &ya, val);
	lir_end(k);
	rowk_end(&rk);
}

/* layernorm over the trailing axes: mean, variance, then
 * (x - mean) * rsqrt(var + eps) * scale + bias; scale and bias must cover
 * the normalized block (or be one value). */
bool cg_layernorm(CG *c, const Node *n)
{
	const Value *x = n->in[0], *sc = n->in[1], *bi = n->nin > 2 ? n->in[2] : NULL, *y = n->out[0];
	int rank = x->type.shape.rank, axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += rank;
	Rows r = cg_rows_of(&x->type.shape, axis, rank);
	int64_t sn = shape_numel(&sc->type.shape), bn = bi ? shape_numel(&bi->type.shape) : 0;
	if (r.n == 0 || (sn != r.n && sn != 1) || (bi && bn != r.n && bn != 1))
		return false;
	RowK rk;
	rowk_begin(&rk, c, n);
	LirKernel *k = rk.k;
	int xb = cg_lir_buffer(c, k, x->id), yb = cg_lir_buffer(c, k, y->id), sb = cg_lir_buffer(c, k, sc->id);
	int bb = bi ? cg_lir_buffer(c, k, bi->id) : -1;
	int o = lir_for(k, 0, r.outer, 1);
	LirAffine st = row_start(k, &r, o, -1), a;
	int sum = row_reduce(&rk, &r, &st, xb, RED_SUM);
	int mean = keep(k, OP2(SEL_MUL_V, R(sum), K(1.0 / (double)r.n)));
	/* variance: sum of (x - mean)^2 by fmas, x - mean written to y on the
	 * way (each strip's squares summed by redsum: lir_vectorize) */
	int var = acc_init(k, 0.0);
	row_loop(&rk, &r, &st, &a);
	int d = keep(k, OP2(SEL_SUB_V, lir_load(k, xb, &a), R(mean)));
	lir_store(k, yb, &a, R(d));
	lir_assign(k, var, lir_op(k, SEL_FMA_V, R(d), R(d), R(var)));
	lir_end(k);
	int rstd = keep(k, OP2(SEL_DIV_V, K(1.0),
			       OP1(SEL_SQRT_V, lir_op(k, SEL_FMA_V, R(var), K(1.0 / (double)r.n), K(attr_f(n, "epsilon"))))));
	/* results 2 and 3: the mean and the inverse standard deviation per row */
	for (int q = 1; q < n->nout && q < 3; q++)
		if (n->out[q]->nuses || n->out[q]->is_output) {
			LirAffine ma = affine1(k, 0, o, 1);
			lir_store(k, cg_lir_buffer(c, k, n->out[q]->id), &ma, R(q == 1 ? mean : rstd));
		}
	int i = row_loop(&rk, &r, &st, &a);
	LirAffine sa = affine1(k, 0, i, sn == 1 ? 0 : 1), ba = affine1(k, 0, i, bn == 1 ? 0 : 1);
	LirExpr *v = OP2(SEL_MUL_V, OP2(SEL_MUL_V, lir_load(k, yb, &a), R(rstd)), lir_load(k, sb, &sa));
	if (bi)
		v = OP2(SEL_ADD_V, v, lir_load(k, bb, &ba));
	lir_store(k, yb, &a, v);
	lir_end(k);
	lir_end(k);
	return rowk_end(&rk);
}

/* batchnorm (inference): per channel a = scale / sqrt(var + eps),
 * b = bias - mean a; then y = x a + b over the channel's elements. */
bool cg_batchnorm(CG *c, const Node *n)
{
	bool training = attr_i(n, "training_mode") != 0;
	if (!training && n->nout > 1)
		return false;
	const Value *x = n->in[0], *y = n->out[0];
	Rows r = cg_rows_of(&x->type.shape, 2, x->type.shape.rank);
	int64_t N = x->type.shape.dim[0], C = x->type.shape.rank > 1 ? x->type.shape.dim[1] : 1;
	if (training && N * r.n == 0)
		return false;
	/* inference with constant statistics: the per-channel scale and shift
	 * are folded now (no divide or square root at run time) */
	const Tensor *stt[4] = {NULL, NULL, NULL, NULL};
	bool fold = !training;
	for (int q = 0; q < 4 && fold; q++)
		fold = (stt[q] = cg_const_data(c, n->in[q + 1]->id)) != NULL;
	const char *folded = NULL;
	if (fold) {
		Shape fs = {1, {2 * C}};
		Tensor *ft = tensor_new(DT_F32, &fs);
		double eps = attr_f(n, "epsilon");
		for (int64_t q = 0; q < C; q++) {
			double s = tensor_get_f(stt[0], q) / sqrt(tensor_get_f(stt[3], q) + eps);
			((float *)ft->data)[q] = (float)s;
			((float *)ft->data)[C + q] = (float)(tensor_get_f(stt[1], q) - tensor_get_f(stt[2], q) * s);
		}
		folded = cg_add_data(c->p, ft);
	}
	RowK rk;
	rowk_begin(&rk, c, n);
	LirKernel *k = rk.k;
	int xb = cg_lir_buffer(c, k, x->id), yb = cg_lir_buffer(c, k, y->id);
	int statb = -1; /* training: the batch's mean [0, C) and variance [C, 2C) */
	if (training) {
		/* the batch's statistics per channel (population variance), and
		 * the running statistics input * momentum + batch * (1 - momentum) */
		double mom = attr_f(n, "momentum"), cnt = (double)(N * r.n);
		statb = cg_lir_buffer(c, k, cg_scratch(c, 2 * C));
		int cv = lir_for(k, 0, C, 1);
		int sum = acc_init(k, 0.0);
		int nv = lir_for(k, 0, N, 1);
		Rows row = {1, r.n, 1};
		LirAffine st = affine1(k, 0, nv, C * r.n);
		lir_term(k, &st, cv, r.n);
		int part = row_reduce(&rk, &row, &st, xb, RED_SUM);
		lir_assign(k, sum, OP2(SEL_ADD_V, R(sum), R(part)));
		lir_end(k);
		int mean = keep(k, OP2(SEL_MUL_V, R(sum), K(1.0 / cnt)));
		/* (a scalar loop: the fma chain of the squares) */
		int sq = acc_init(k, 0.0);
		nv = lir_for(k, 0, N, 1);
		int iv = lir_for(k, 0, r.n, 1);
		LirAffine xa = affine1(k, 0, nv, C * r.n);
		lir_term(k, &xa, cv, r.n);
		lir_term(k, &xa, iv, 1);
		int d = keep(k, OP2(SEL_SUB_V, lir_load(k, xb, &xa), R(mean)));
		lir_assign(k, sq, lir_op(k, SEL_FMA_V, R(d), R(d), R(sq)));
		lir_end(k);
		lir_end(k);
		LirAffine ma = affine1(k, 0, cv, 1), va = affine1(k, C, cv, 1);
		lir_store(k, statb, &ma, R(mean));
		lir_store(k, statb, &va, OP2(SEL_MUL_V, R(sq), K(1.0 / cnt)));
		for (int q = 1; q < n->nout; q++)
			if (n->out[q]->nuses || n->out[q]->is_output) {
				LirAffine oa = affine1(k, 0, cv, 1);
				LirExpr *batch = lir_load(k, statb, q == 1 ? &ma : &va);
				LirExpr *input = lir_load(k, cg_lir_buffer(c, k, n->in[q == 1 ? 3 : 4]->id), &oa);
				lir_store(k, cg_lir_buffer(c, k, n->out[q]->id), &oa,
					  lir_op(k, SEL_FMA_V, input, K(mom), OP2(SEL_MUL_V, batch, K(1.0 - mom))));
			}
		lir_end(k);
	}
	int nv = lir_for(k, 0, N, 1);
	int cv = lir_for(k, 0, C, 1);
	LirAffine ca = affine1(k, 0, cv, 1), cva = affine1(k, C, cv, 1);
	int a, b;
	if (folded) {
		int fb = lir_data_buffer(k, "folded", 2 * C, 4, folded);
		a = keep(k, lir_load(k, fb, &ca));
		b = keep(k, lir_load(k, fb, &cva));
	} else {
		LirExpr *var = training ? lir_load(k, statb, &cva) : lir_load(k, cg_lir_buffer(c, k, n->in[4]->id), &ca);
		LirExpr *mu = training ? lir_load(k, statb, &ca) : lir_load(k, cg_lir_buffer(c, k, n->in[3]->id), &ca);
		a = keep(k, OP2(SEL_DIV_V, lir_load(k, cg_lir_buffer(c, k, n->in[1]->id), &ca),
				 OP1(SEL_SQRT_V, OP2(SEL_ADD_V, var, K(attr_f(n, "epsilon"))))));
		b = keep(k, OP2(SEL_SUB_V, lir_load(k, cg_lir_buffer(c, k, n->in[2]->id), &ca), OP2(SEL_MUL_V, mu, R(a))));
	}
	Rows row = {1, r.n, 1};
	LirAffine st = affine1(k, 0, nv, C * r.n), xa;
	lir_term(k, &st, cv, r.n);
	row_loop(&rk, &row, &st, &xa);
	lir_store(k, yb, &xa, lir_op(k, SEL_FMA_V, lir_load(k, xb, &xa), R(a), R(b)));
	lir_end(k);
	lir_end(k);
	lir_end(k);
	return rowk_end(&rk);
}
