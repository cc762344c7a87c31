/* Elementwise kernels, built as Loop IR: one node, or a whole fusion group
 * of elementwise nodes (pass_fuse), is one loop nest over the group's
 * output whose body computes every node of the group in registers and
 * stores only the output; the innermost loop is vectorized (lir_vectorize)
 * with a scalar remainder, a masked one for i32, strips on scalable
 * vectors.  The same expression builder gives a contraction's epilogue:
 * the rest of its group applied to the accumulators before the store
 * (cg_epilogue_store). */
#include "cg.h"

BursNode *cg_bin(CG *c, SelOp vop, SelOp sop, bool vector, BursNode *a, BursNode *b)
{
	if (c->int_mode) {
		SelOp iop = sop == SEL_ADD_F ? SEL_ADD_I : sop == SEL_SUB_F ? SEL_SUB_I : sop == SEL_MUL_F ? SEL_MUL_I
			  : sop == SEL_MIN_F ? SEL_MIN_I : sop == SEL_MAX_F ? SEL_MAX_I : SEL_COUNT;
		return iop == SEL_COUNT ? NULL : sel_op(c->f, iop, a, b, NULL);
	}
	return sel_op(c->f, vector ? vop : sop, a, b, NULL);
}

bool cg_is_elementwise(OpKind op)
{
	switch (op) {
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_MAX: case OP_MIN: case OP_SUM: case OP_POW:
	case OP_NEG: case OP_ABS: case OP_SQRT: case OP_RECIPROCAL: case OP_RELU: case OP_CLIP:
	case OP_HARDSIGMOID: case OP_IDENTITY: case OP_DROPOUT:
		return true;
	case OP_EXP: case OP_SIGMOID: case OP_TANH: case OP_ERF: case OP_GELU: case OP_LEAKY_RELU: case OP_HARDSWISH:
	case OP_LOG:
		return true;
	case OP_PRELU: case OP_ELU: case OP_SELU: case OP_CELU: case OP_SOFTPLUS: case OP_SOFTSIGN: case OP_THRESHOLDED_RELU:
	case OP_SHRINK: case OP_SIGN: case OP_FLOOR: case OP_CEIL: case OP_ROUND: case OP_SINH: case OP_COSH: case OP_ASINH:
	case OP_ACOSH: case OP_ATANH: case OP_MEAN:
	case OP_SIN: case OP_COS: case OP_TAN: case OP_ASIN: case OP_ACOS: case OP_ATAN:
		return true;
	default:
		return false;
	}
}

bool cg_is_copy(OpKind op)
{
	return op == OP_RESHAPE || op == OP_FLATTEN || op == OP_SQUEEZE || op == OP_UNSQUEEZE;
}

/* ---- the expression of a group at one index ----------------------------- */
/* The index space is the group output's shape S (rank 0 as [1]); a node's
 * output has S's dimensions other than 1, in order (pass_fuse), so an
 * operand's broadcast strides over its node's output map onto S. */
typedef struct {
	CG *c;
	LirKernel *k;
	EwMode mode;
	const Node *const *nodes;
	int nn;
	Shape S;
	LirAffine idx[MAX_RANK];  /* the index along each axis of S */
	const Value *anchor;      /* an epilogue: the contraction's result ... */
	int anchor_temp;          /* ... in this temporary */
	int *memo;                /* per value id: its temporary, or -1 */
	int *reads;               /* per value id: reads inside the group */
	const LirAffine *flat;    /* a prologue: the element's flat index (operands of
	                           * the output's shape or of one element), else NULL */
	bool ok;
} Ew;

static bool in_group(const Ew *b, const Value *v)
{
	for (int i = 0; i < b->nn; i++)
		for (int j = 0; j < b->nodes[i]->nout; j++)
			if (b->nodes[i]->out[j] == v)
				return true;
	return false;
}

/* Operand k of n as strides over S (false: the shapes do not map). */
static bool strides_over_S(const Ew *b, const Node *n, int k, int64_t *row)
{
	Shape sn = n->out[0]->type.shape;
	if (sn.rank == 0)
		sn = (Shape){1, {1}};
	int64_t str[MAX_RANK];
	if (cg_is_copy(n->op)) {
		shape_strides(&sn, str); /* same elements, same order */
	} else {
		if (n->in[k]->type.shape.rank > sn.rank)
			return false;
		broadcast_strides(&n->in[k]->type.shape, &sn, str);
	}
	int d = 0;
	for (int e = 0; e < b->S.rank; e++) {
		row[e] = 0;
		if (b->S.dim[e] == 1)
			continue;
		while (d < sn.rank && sn.dim[d] == 1)
			d++;
		if (d == sn.rank || sn.dim[d] != b->S.dim[e])
			return false;
		row[e] = str[d++];
	}
	while (d < sn.rank && sn.dim[d] == 1)
		d++;
	return d == sn.rank;
}

static LirExpr *leaf(Ew *b, const Node *n, int k)
{
	if (b->flat) {
		LirAffine z = lir_affine(0);
		bool one = shape_numel(&n->in[k]->type.shape) == 1;
		return lir_load(b->k, cg_lir_buffer(b->c, b->k, n->in[k]->id), one ? &z : b->flat);
	}
	int64_t row[MAX_RANK];
	if (!strides_over_S(b, n, k, row)) {
		b->ok = false;
		return lir_constf(b->k, 0.0);
	}
	LirAffine a = lir_affine(0);
	for (int e = 0; e < b->S.rank; e++) {
		if (!row[e])
			continue;
		const LirAffine *ix = &b->idx[e];
		a.off += row[e] * ix->off;
		for (int i = 0; i < ix->n; i++)
			lir_term(b->k, &a, ix->t[i].var, row[e] * ix->t[i].coef);
	}
	int buf = cg_lir_buffer(b->c, b->k, n->in[k]->id);
	return lir_load(b->k, buf, &a);
}

static int keep(Ew *b, LirExpr *e)
{
	int t = lir_temp(b->k, b->mode == EW_I64 ? SORT_I : SORT_V);
	lir_assign(b->k, t, e);
	return t;
}

/* An i64 clip bound: ceil for a lower bound, floor for an upper one, saturated. */
static LirExpr *int_bound(Ew *b, double v, bool lower)
{
	return lir_consti(b->k, cg_int_bound(v, lower));
}

static LirExpr *value(Ew *b, const Value *v);

/* The activations, rounding and hyperbolic functions beyond Tier 1, mean */
static LirExpr *node_f32_more(Ew *b, const Node *n, LirExpr **x)
{
	LirKernel *k = b->k;
#define OP2(op, p, q) lir_op(k, (op), (p), (q), NULL)
#define OP1(op, p) lir_op(k, (op), (p), NULL, NULL)
#define KF(v) lir_constf(k, (v))
#define REF(t) lir_ref(k, (t))
#define SEL(m, p, q) lir_op(k, SEL_SELECT_V, (m), (p), (q))
#define LT(p, q) OP2(SEL_CMPLT_V, (p), (q))
	switch (n->op) {
	case OP_PRELU: /* max(x, 0) + slope * min(x, 0) */
		{
			int t = keep(b, x[0]);
			return OP2(SEL_ADD_V, OP2(SEL_MAX_V, REF(t), KF(0.0)), OP2(SEL_MUL_V, x[1], OP2(SEL_MIN_V, REF(t), KF(0.0))));
		}
	case OP_ELU: case OP_SELU: case OP_CELU: {
		/* max(x, 0) + alpha (e ** min(x, 0) - 1) (celu: e ** (min(x, 0) / alpha));
		 * selu: all times gamma */
		int t = keep(b, x[0]);
		double a = attr_f(n, "alpha");
		LirExpr *neg = OP2(SEL_MIN_V, REF(t), KF(0.0));
		if (n->op == OP_CELU)
			neg = OP2(SEL_MUL_V, neg, KF(1.0 / a));
		int e = lm_exp(k, keep(b, neg));
		LirExpr *v = OP2(SEL_ADD_V, OP2(SEL_MAX_V, REF(t), KF(0.0)), OP2(SEL_MUL_V, KF(a), OP2(SEL_SUB_V, REF(e), KF(1.0))));
		return n->op == OP_SELU ? OP2(SEL_MUL_V, v, KF(attr_f(n, "gamma"))) : v;
	}
	case OP_SOFTPLUS: {
		/* max(x, 0) + log(1 + e ** -|x|): no overflow */
		int t = keep(b, x[0]);
		int e = lm_exp(k, keep(b, OP1(SEL_NEG_V, OP1(SEL_ABS_V, REF(t)))));
		int l = lm_log(k, keep(b, OP2(SEL_ADD_V, REF(e), KF(1.0))));
		return OP2(SEL_ADD_V, OP2(SEL_MAX_V, REF(t), KF(0.0)), REF(l));
	}
	case OP_SOFTSIGN: {
		int t = keep(b, x[0]);
		return OP2(SEL_DIV_V, REF(t), OP2(SEL_ADD_V, OP1(SEL_ABS_V, REF(t)), KF(1.0)));
	}
	case OP_THRESHOLDED_RELU: {
		int t = keep(b, x[0]);
		return SEL(LT(KF(attr_f(n, "alpha")), REF(t)), REF(t), KF(0.0));
	}
	case OP_SHRINK: {
		int t = keep(b, x[0]);
		double l = attr_f(n, "lambd"), bias = attr_f(n, "bias");
		/* (one select per tree: a target may have a single mask register) */
		int hi = keep(b, SEL(LT(KF(l), REF(t)), OP2(SEL_SUB_V, REF(t), KF(bias)), KF(0.0)));
		return SEL(LT(REF(t), KF(-l)), OP2(SEL_ADD_V, REF(t), KF(bias)), REF(hi));
	}
	case OP_SIGN: { /* 1, -1, or x itself (0, -0, NaN) */
		int t = keep(b, x[0]);
		int lo = keep(b, SEL(LT(REF(t), KF(0.0)), KF(-1.0), REF(t)));
		return SEL(LT(KF(0.0), REF(t)), KF(1.0), REF(lo));
	}
	case OP_FLOOR: case OP_CEIL: {
		/* r = round(x) (to even), one step back where it went past x */
		int t = keep(b, x[0]);
		int r = keep(b, OP1(SEL_ROUND_V, REF(t)));
		if (n->op == OP_FLOOR)
			return OP2(SEL_SUB_V, REF(r), SEL(LT(REF(t), REF(r)), KF(1.0), KF(0.0)));
		return OP2(SEL_ADD_V, REF(r), SEL(LT(REF(r), REF(t)), KF(1.0), KF(0.0)));
	}
	case OP_ROUND: return OP1(SEL_ROUND_V, x[0]);
	case OP_SINH: case OP_COSH: {
		/* (e ** x -+ e ** -x) / 2 */
		int t = keep(b, x[0]);
		int p = lm_exp(k, t), q = lm_exp(k, keep(b, OP1(SEL_NEG_V, REF(t))));
		return OP2(SEL_MUL_V, OP2(n->op == OP_SINH ? SEL_SUB_V : SEL_ADD_V, REF(p), REF(q)), KF(0.5));
	}
	case OP_ASINH: {
		/* sign(x) log(|x| + sqrt(x^2 + 1)) */
		int t = keep(b, x[0]);
		int a = keep(b, OP1(SEL_ABS_V, REF(t)));
		int l = lm_log(k, keep(b, OP2(SEL_ADD_V, REF(a), OP1(SEL_SQRT_V, lir_op(k, SEL_FMA_V, REF(a), REF(a), KF(1.0))))));
		return SEL(LT(REF(t), KF(0.0)), OP1(SEL_NEG_V, REF(l)), REF(l));
	}
	case OP_ACOSH: { /* log(x + sqrt(x^2 - 1)) */
		int t = keep(b, x[0]);
		int l = lm_log(k, keep(b, OP2(SEL_ADD_V, REF(t), OP1(SEL_SQRT_V, lir_op(k, SEL_FMA_V, REF(t), REF(t), KF(-1.0))))));
		return REF(l);
	}
	case OP_ATANH: { /* log((1 + x) / (1 - x)) / 2 */
		int t = keep(b, x[0]);
		int l = lm_log(k, keep(b, OP2(SEL_DIV_V, OP2(SEL_ADD_V, KF(1.0), REF(t)), OP2(SEL_SUB_V, KF(1.0), REF(t)))));
		return OP2(SEL_MUL_V, REF(l), KF(0.5));
	}
	case OP_MEAN: {
		LirExpr *acc = x[0];
		for (int i = 1; i < n->nin; i++)
			acc = OP2(SEL_ADD_V, acc, x[i]);
		return OP2(SEL_MUL_V, acc, KF(1.0 / n->nin));
	}
	default:
		return NULL;
	}
#undef OP2
#undef OP1
#undef KF
#undef SEL
#undef REF
#undef LT
}

/* f32: the vector vocabulary (scalar where the lowering finds one element) */
static LirExpr *node_f32(Ew *b, const Node *n, LirExpr **x)
{
	LirKernel *k = b->k;
#define OP2(op, p, q) lir_op(k, (op), (p), (q), NULL)
#define OP1(op, p) lir_op(k, (op), (p), NULL, NULL)
#define KF(v) lir_constf(k, (v))
	switch (n->op) {
	case OP_ADD: return OP2(SEL_ADD_V, x[0], x[1]);
	case OP_SUB: return OP2(SEL_SUB_V, x[0], x[1]);
	case OP_MUL: return OP2(SEL_MUL_V, x[0], x[1]);
	case OP_DIV: return OP2(SEL_DIV_V, x[0], x[1]);
	case OP_POW: {
		int p = keep(b, x[0]), q = keep(b, x[1]);
		return lir_ref(k, lm_pow(k, p, q));
	}
	case OP_MAX: case OP_MIN: case OP_SUM: {
		SelOp op = n->op == OP_MAX ? SEL_MAX_V : n->op == OP_MIN ? SEL_MIN_V : SEL_ADD_V;
		LirExpr *acc = x[0];
		for (int i = 1; i < n->nin; i++)
			acc = OP2(op, acc, x[i]);
		return acc;
	}
	case OP_NEG: return OP1(SEL_NEG_V, x[0]);
	case OP_ABS: return OP1(SEL_ABS_V, x[0]);
	case OP_SQRT: return OP1(SEL_SQRT_V, x[0]);
	case OP_RECIPROCAL: return OP2(SEL_DIV_V, KF(1.0), x[0]);
	case OP_RELU: return OP2(SEL_MAX_V, x[0], KF(0.0));
	case OP_CLIP: {
		LirExpr *v = x[0];
		if (attr_present(n, "min"))
			v = OP2(SEL_MAX_V, v, KF(attr_f(n, "min")));
		if (attr_present(n, "max"))
			v = OP2(SEL_MIN_V, v, KF(attr_f(n, "max")));
		return v;
	}
	case OP_HARDSIGMOID: {
		/* max(0, min(1, alpha x + beta)) */
		LirExpr *v = OP2(SEL_ADD_V, OP2(SEL_MUL_V, x[0], KF(attr_f(n, "alpha"))), KF(attr_f(n, "beta")));
		return OP2(SEL_MAX_V, OP2(SEL_MIN_V, v, KF(1.0)), KF(0.0));
	}
	case OP_EXP: case OP_SIGMOID: case OP_TANH: case OP_ERF: case OP_GELU: case OP_LEAKY_RELU: case OP_HARDSWISH:
	case OP_LOG: case OP_SIN: case OP_COS: case OP_TAN: case OP_ASIN: case OP_ACOS: case OP_ATAN:
		return lir_ref(k, lm_transcendental(k, n, keep(b, x[0])));
	case OP_IDENTITY: case OP_DROPOUT: case OP_RESHAPE: case OP_FLATTEN: case OP_SQUEEZE: case OP_UNSQUEEZE:
		return x[0];
	default:
		return node_f32_more(b, n, x);
	}
}

/* i64: scalar integer ops */
static LirExpr *node_i64(Ew *b, const Node *n, LirExpr **x)
{
	LirKernel *k = b->k;
	switch (n->op) {
	case OP_ADD: return OP2(SEL_ADD_I, x[0], x[1]);
	case OP_SUB: return OP2(SEL_SUB_I, x[0], x[1]);
	case OP_MUL: return OP2(SEL_MUL_I, x[0], x[1]);
	case OP_MAX: case OP_MIN: case OP_SUM: {
		SelOp op = n->op == OP_MAX ? SEL_MAX_I : n->op == OP_MIN ? SEL_MIN_I : SEL_ADD_I;
		LirExpr *acc = x[0];
		for (int i = 1; i < n->nin; i++)
			acc = OP2(op, acc, x[i]);
		return acc;
	}
	case OP_NEG: return OP2(SEL_SUB_I, lir_consti(k, 0), x[0]);
	case OP_ABS: {
		/* max(x, 0 - x): INT64_MIN stays INT64_MIN, as in the reference */
		int r = keep(b, x[0]);
		return OP2(SEL_MAX_I, lir_ref(k, r), OP2(SEL_SUB_I, lir_consti(k, 0), lir_ref(k, r)));
	}
	case OP_CLIP: {
		/* the bounds as the reference takes them: ceil / floor, saturated; NaN: absent */
		LirExpr *v = x[0];
		double mn = attr_f(n, "min"), mx = attr_f(n, "max");
		if (attr_present(n, "min") && !isnan(mn))
			v = OP2(SEL_MAX_I, v, int_bound(b, mn, true));
		if (attr_present(n, "max") && !isnan(mx))
			v = OP2(SEL_MIN_I, v, int_bound(b, mx, false));
		return v;
	}
	case OP_IDENTITY: case OP_DROPOUT: case OP_RESHAPE: case OP_FLATTEN: case OP_SQUEEZE: case OP_UNSQUEEZE:
		return x[0];
	default:
		return NULL;
	}
}

/* i32: add, sum, max, min over w vectors; copies move the bits */
static LirExpr *node_i32(Ew *b, const Node *n, LirExpr **x)
{
	LirKernel *k = b->k;
	if (cg_is_copy(n->op) || n->op == OP_IDENTITY || n->op == OP_DROPOUT)
		return x[0];
	SelOp op = n->op == OP_MAX ? SEL_MAX_W : n->op == OP_MIN ? SEL_MIN_W : n->op == OP_ADD || n->op == OP_SUM ? SEL_ADD_W
											       : SEL_COUNT;
	if (op == SEL_COUNT)
		return NULL;
	LirExpr *v = OP1(SEL_BITS_V_W, x[0]);
	for (int i = 1; i < n->nin; i++)
		v = OP2(op, v, OP1(SEL_BITS_V_W, x[i]));
	return OP1(SEL_BITS_W_V, v);
}
#undef OP1
#undef OP2
#undef KF

static LirExpr *node_value(Ew *b, const Node *n)
{
	LirExpr **x = xcalloc((size_t)n->nin + 1, sizeof *x);
	for (int i = 0; i < n->nin; i++)
		x[i] = in_group(b, n->in[i]) || n->in[i] == b->anchor ? value(b, n->in[i]) : leaf(b, n, i);
	LirExpr *e = b->mode == EW_F32 ? node_f32(b, n, x) : b->mode == EW_I64 ? node_i64(b, n, x) : node_i32(b, n, x);
	free(x);
	if (!e)
		b->ok = false;
	return e ? e : lir_constf(b->k, 0.0);
}

/* v (computed in the group) at the index; a value read twice is kept in a
 * temporary once */
static LirExpr *value(Ew *b, const Value *v)
{
	if (v == b->anchor)
		return lir_ref(b->k, b->anchor_temp);
	if (b->memo[v->id] >= 0)
		return lir_ref(b->k, b->memo[v->id]);
	LirExpr *e = node_value(b, v->def);
	if (b->reads[v->id] > 1) {
		b->memo[v->id] = keep(b, e);
		return lir_ref(b->k, b->memo[v->id]);
	}
	return e;
}

static void ew_init(Ew *b, CG *c, LirKernel *k, const Node *const *nodes, int nn, EwMode mode)
{
	memset(b, 0, sizeof *b);
	b->c = c;
	b->k = k;
	b->mode = mode;
	b->nodes = nodes;
	b->nn = nn;
	b->ok = true;
	b->anchor_temp = -1;
	const Value *out = nodes[nn - 1]->out[0];
	b->S = out->type.shape;
	if (b->S.rank == 0)
		b->S = (Shape){1, {1}};
	int nv = c->p->g->nvalues;
	b->memo = xmalloc(((size_t)nv + 1) * sizeof *b->memo);
	b->reads = xcalloc((size_t)nv + 1, sizeof *b->reads);
	for (int i = 0; i < nv; i++)
		b->memo[i] = -1;
	for (int i = 0; i < nn; i++)
		for (int j = 0; j < nodes[i]->nin; j++)
			b->reads[nodes[i]->in[j]->id]++;
}

static void ew_free(Ew *b)
{
	free(b->memo);
	free(b->reads);
}

/* ---- the kernels ------------------------------------------------------- */
/* "loops of OUT: op op ...", the group's ops in order */
static LirKernel *group_kernel(CG *c, const Node *const *nodes, int nn)
{
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s:", nodes[nn - 1]->out[0]->name);
	for (int i = 0; i < nn; i++) {
		char *name = xasprintf("%s %s", k->name, op_info[nodes[i]->op].name);
		free(k->name);
		k->name = name;
	}
	return k;
}

bool cg_ew_kernel(CG *c, const Node *const *nodes, int nn, EwMode mode)
{
	LirKernel *k = group_kernel(c, nodes, nn);
	Ew b;
	ew_init(&b, c, k, nodes, nn, mode);
	const Value *out = nodes[nn - 1]->out[0];
	/* merge adjacent axes that the output and every operand walk
	 * contiguously (or that an operand broadcasts along both): a
	 * same-shape chain is one flat loop, with no remainder per row */
	int nleaf = 0;
	for (int i = 0; i < nn; i++)
		nleaf += nodes[i]->nin;
	int64_t (*rows)[MAX_RANK] = xcalloc((size_t)nleaf + 1, sizeof *rows);
	int64_t ostr[MAX_RANK];
	Shape s = b.S;
	shape_strides(&s, ostr);
	int nr = 0;
	for (int i = 0; i < nn && b.ok; i++)
		for (int j = 0; j < nodes[i]->nin; j++)
			if (!in_group(&b, nodes[i]->in[j]) && !strides_over_S(&b, nodes[i], j, rows[nr++]))
				b.ok = false;
	int r = s.rank;
	bool merged[MAX_RANK] = {false}; /* axis d+1 merged into d */
	for (int d = r - 2; d >= 0 && b.ok; d--) {
		bool merge = ostr[d] == ostr[d + 1] * s.dim[d + 1];
		for (int i = 0; i < nr; i++)
			merge &= rows[i][d] == rows[i][d + 1] * s.dim[d + 1];
		merged[d] = merge;
	}
	free(rows);
	/* one loop per run of merged axes, its variable on the run's last
	 * axis: in a run every access's stride along an axis is its stride
	 * along the next times that axis's size, so the variable times the
	 * last axis's stride addresses the whole run */
	int inner = -1;
	int nloops = 0;
	for (int d = 0; d < r && b.ok; d++) {
		int64_t ext = s.dim[d];
		int e = d;
		while (e + 1 < r && merged[e]) {
			e++;
			ext *= s.dim[e];
		}
		int v = lir_for(k, 0, ext, 1);
		nloops++;
		for (int q = d; q < e; q++)
			b.idx[q] = lir_affine(0);
		b.idx[e] = lir_affine(0);
		lir_term(k, &b.idx[e], v, 1);
		inner = v;
		d = e;
	}
	LirAffine oa = lir_affine(0);
	for (int e = 0; e < r; e++)
		if (b.idx[e].n)
			lir_term(k, &oa, b.idx[e].t[0].var, ostr[e]);
	LirExpr *v = b.ok ? value(&b, out) : NULL;
	int ob = cg_lir_buffer(c, k, out->id);
	if (b.ok)
		lir_store(k, ob, &oa, v);
	for (int i = 0; i < nloops; i++)
		lir_end(k);
	bool ok = b.ok && k->ok;
	ew_free(&b);
	if (ok && mode != EW_I64)
		(mode == EW_I32 ? lir_vectorize(k, inner, LIR_TAIL_MASKED) : cg_vectorize(c, k, inner));
	if (ok && nn > 1)
		for (int i = 0; i < nn; i++)
			lir_note(k, "%s = %s", nodes[i]->out[0]->name, op_info[nodes[i]->op].name);
	if (ok)
		ok = cg_lir_run(c, k, true);
	lir_kernel_free(k);
	return ok;
}

/* ---- epilogues --------------------------------------------------------- */
/* Does the epilogue hold an op that takes many registers of its own? */
bool cg_epilogue_heavy(const CG *c)
{
	for (int i = 0; i < c->nepi; i++)
		switch (c->epi[i]->op) {
		case OP_EXP: case OP_LOG: case OP_TANH: case OP_SIGMOID: case OP_ERF: case OP_GELU: case OP_POW:
			return true;
		default:
			break;
		}
	return false;
}

/* Appends to k the store of the group's output, computed from y (the
 * contraction's result, in temporary acc) at y's index yidx[d] along each
 * axis d: the epilogue's statements, then the store.  false: the group
 * does not fit y's index space (an internal error is reported). */
static bool epilogue_into(CG *c, LirKernel *k, const Value *y, int acc, const LirAffine *yidx)
{
	const Node *last = c->epi[c->nepi - 1];
	Ew b;
	ew_init(&b, c, k, c->epi, c->nepi, EW_F32);
	b.anchor = y;
	b.anchor_temp = acc;
	/* y's index along each axis of the group's output S (y has S's
	 * dimensions other than 1, in order) */
	const Shape *ys = &y->type.shape;
	int d = 0;
	for (int e = 0; e < b.S.rank; e++) {
		b.idx[e] = lir_affine(0);
		if (b.S.dim[e] == 1)
			continue;
		while (d < ys->rank && ys->dim[d] == 1)
			d++;
		if (d == ys->rank) {
			b.ok = false;
			break;
		}
		b.idx[e] = yidx[d++];
	}
	int64_t ostr[MAX_RANK];
	shape_strides(&b.S, ostr);
	LirAffine oa = lir_affine(0);
	for (int e = 0; e < b.S.rank; e++) {
		oa.off += ostr[e] * b.idx[e].off;
		for (int i = 0; i < b.idx[e].n; i++)
			lir_term(k, &oa, b.idx[e].t[i].var, ostr[e] * b.idx[e].t[i].coef);
	}
	/* a loop over an axis of one element (a vector loop of one lane over a
	 * one-column output) indexes y there with 0 at every iteration: its
	 * variable stays in the store's index (at stride 1, adding 0), so the
	 * store still moves along it (regression: tests/backend/conv_one_column.ir) */
	for (int e = 0; e < ys->rank && b.ok; e++)
		if (ys->dim[e] == 1)
			for (int i = 0; i < yidx[e].n; i++)
				if (lir_coef(&oa, yidx[e].t[i].var) == 0)
					lir_term(k, &oa, yidx[e].t[i].var, yidx[e].t[i].coef);
	LirExpr *val = b.ok ? value(&b, last->out[0]) : NULL;
	bool ok = b.ok;
	if (ok)
		lir_store(k, cg_lir_buffer(c, k, last->out[0]->id), &oa, val);
	else {
		diag_error(c->d, c->node->loc, "internal error: the epilogue of %s does not fit its index space",
			   op_info[c->node->op].name);
		c->ok = false;
	}
	c->epi_used = true;
	ew_free(&b);
	return ok;
}

void cg_lir_result_store(CG *c, LirKernel *k, const Value *y, int acc, const LirAffine *dims)
{
	if (c->epi) {
		epilogue_into(c, k, y, acc, dims);
		return;
	}
	int64_t str[MAX_RANK];
	shape_strides(&y->type.shape, str);
	LirAffine ya = lir_affine(0);
	for (int d = 0; d < y->type.shape.rank; d++) {
		ya.off += str[d] * dims[d].off;
		for (int i = 0; i < dims[d].n; i++)
			lir_term(k, &ya, dims[d].t[i].var, str[d] * dims[d].t[i].coef);
	}
	lir_store(k, cg_lir_buffer(c, k, y->id), &ya, lir_ref(k, acc));
}

/* ---- prologues --------------------------------------------------------- */
bool cg_prologue_fits(const Node *const *pro, int npro)
{
	const Value *x = pro[npro - 1]->out[0];
	int64_t numel = shape_numel(&x->type.shape);
	for (int i = 0; i < npro; i++)
		for (int k = 0; k < pro[i]->nin; k++) {
			const Value *v = pro[i]->in[k];
			bool inside = false;
			for (int j = 0; j < i && !inside; j++)
				inside = pro[j]->out[0] == v;
			int64_t m = shape_numel(&v->type.shape);
			if (!inside && m != numel && m != 1)
				return false;
		}
	return true;
}

int cg_lir_prologue_value(CG *c, LirKernel *k, const LirAffine *a)
{
	Ew b;
	ew_init(&b, c, k, c->pro, c->npro, EW_F32);
	b.flat = a;
	int t = lir_temp(k, SORT_V);
	lir_assign(k, t, value(&b, c->pro[c->npro - 1]->out[0]));
	if (!b.ok) {
		diag_error(c->d, c->node->loc, "internal error: the prologue of %s does not fit its rows", op_info[c->node->op].name);
		c->ok = false;
	}
	c->pro_used = true;
	ew_free(&b);
	return t;
}

/* ---- comparisons, logic, where and cast: scalar loops ------------------- */
LirExpr *cg_lir_elem(CG *c, LirKernel *k, const Value *v, const LirAffine *a, bool bits)
{
	int buf = cg_lir_buffer(c, k, v->id);
	DType dt = v->type.dtype;
	if (dt == DT_I32 || (dt == DT_F32 && bits))
		return lir_load_as(k, buf, a, LIR_AS_I32);
	return lir_load(k, buf, a);
}

/* a op b as 0 or 1: f32 by the ordered compares (false on NaN), the
 * integers signed; greater swaps, "or equal" of integers is not less */
static LirExpr *scalar_compare(LirKernel *k, OpKind op, bool fl, LirExpr *a, LirExpr *b)
{
#define OP2(o, p, q) lir_op(k, (o), (p), (q), NULL)
	LirExpr *one = lir_consti(k, 1);
	switch (op) {
	case OP_EQUAL: return fl ? OP2(SEL_CMPEQ_F, a, b) : OP2(SEL_CMPEQ_I, a, b);
	case OP_LESS: return fl ? OP2(SEL_CMPLT_F, a, b) : OP2(SEL_CMPLT_I, a, b);
	case OP_GREATER: return fl ? OP2(SEL_CMPLT_F, b, a) : OP2(SEL_CMPLT_I, b, a);
	case OP_LESS_EQUAL: return fl ? OP2(SEL_CMPLE_F, a, b) : OP2(SEL_XOR_I, OP2(SEL_CMPLT_I, b, a), one);
	case OP_GREATER_EQUAL: return fl ? OP2(SEL_CMPLE_F, b, a) : OP2(SEL_XOR_I, OP2(SEL_CMPLT_I, a, b), one);
	default: return NULL;
	}
}

/* x (of dtype from) converted to dtype to */
static LirExpr *scalar_cast(LirKernel *k, DType from, DType to, LirExpr *x)
{
	bool fl = from == DT_F32;
	if (to == DT_BOOL) /* x != 0: NaN is true */
		return OP2(SEL_XOR_I, fl ? OP2(SEL_CMPEQ_F, x, lir_constf(k, 0.0)) : OP2(SEL_CMPEQ_I, x, lir_consti(k, 0)),
			   lir_consti(k, 1));
	if (to == DT_F32)
		return fl ? x : lir_op(k, SEL_CVT_I_F, x, NULL, NULL);
	/* to an integer: f32 truncates; i32 stores keep the low 32 bits */
	return fl ? lir_op(k, SEL_CVTT_F_I, x, NULL, NULL) : x;
}

/* Integer a ** e, wrapping: binary exponentiation over e's bits (31 for
 * an i32 exponent, 63 for i64), unrolled; a negative e gives 1 for a = 1,
 * +-1 by parity for a = -1, else 0 (1 / a^|e| truncated). */
static LirExpr *scalar_ipow(LirKernel *k, LirExpr *a, LirExpr *e, int bits)
{
	int ta = lir_temp(k, SORT_I), te = lir_temp(k, SORT_I), tb = lir_temp(k, SORT_I), tr = lir_temp(k, SORT_I);
	lir_assign(k, ta, a);
	lir_assign(k, te, e);
	lir_assign(k, tb, lir_ref(k, ta));
	lir_assign(k, tr, lir_consti(k, 1));
	for (int i = 0; i < bits; i++) {
		LirExpr *off = OP2(SEL_CMPEQ_I, OP2(SEL_AND_I, lir_ref(k, te), lir_consti(k, (int64_t)1 << i)), lir_consti(k, 0));
		lir_assign(k, tr, lir_op(k, SEL_SELECT_I, off, lir_ref(k, tr), OP2(SEL_MUL_I, lir_ref(k, tr), lir_ref(k, tb))));
		if (i + 1 < bits)
			lir_assign(k, tb, OP2(SEL_MUL_I, lir_ref(k, tb), lir_ref(k, tb)));
	}
	/* e < 0: a = 1 -> 1, a = -1 -> 1 - 2 (e & 1), else 0 */
	LirExpr *odd = OP2(SEL_AND_I, lir_ref(k, te), lir_consti(k, 1));
	LirExpr *neg = lir_op(k, SEL_SELECT_I, OP2(SEL_CMPEQ_I, lir_ref(k, ta), lir_consti(k, 1)), lir_consti(k, 1),
			      lir_op(k, SEL_SELECT_I, OP2(SEL_CMPEQ_I, lir_ref(k, ta), lir_consti(k, -1)),
				     OP2(SEL_SUB_I, lir_consti(k, 1), OP2(SEL_MUL_I, odd, lir_consti(k, 2))), lir_consti(k, 0)));
	return lir_op(k, SEL_SELECT_I, OP2(SEL_CMPLT_I, lir_ref(k, te), lir_consti(k, 0)), neg, lir_ref(k, tr));
}

/* Integer a mod b (the divisor's sign; fmod: the dividend's), without a
 * divide instruction: the quotient estimated through f32 (24 bits right
 * per step: q += trunc(f32(a - q b) / f32(b)), four steps reach +-1 of
 * the truncated quotient for any i64), the remainder then moved into
 * (-|b|, |b|) with the dividend's sign.  b = 0 gives 0 (the reference
 * stops with an error). */
static LirExpr *scalar_imod(LirKernel *k, LirExpr *a, LirExpr *b, bool fmod)
{
	int ta = lir_temp(k, SORT_I), tb = lir_temp(k, SORT_I), tq = lir_temp(k, SORT_I), tr = lir_temp(k, SORT_I),
	    tm = lir_temp(k, SORT_I), tz = lir_temp(k, SORT_I);
	lir_assign(k, ta, a);
	lir_assign(k, tb, b);
	/* b = 0 divides as 1 (the result is replaced by 0 at the end) */
	lir_assign(k, tz, OP2(SEL_CMPEQ_I, lir_ref(k, tb), lir_consti(k, 0)));
	lir_assign(k, tb, lir_op(k, SEL_SELECT_I, lir_ref(k, tz), lir_consti(k, 1), lir_ref(k, tb)));
	lir_assign(k, tq, lir_consti(k, 0));
	lir_assign(k, tr, lir_ref(k, ta));
	for (int step = 0; step < 4; step++) {
		LirExpr *est = lir_op(k, SEL_CVTT_F_I,
				      OP2(SEL_DIV_V, lir_op(k, SEL_CVT_I_F, lir_ref(k, tr), NULL, NULL),
					  lir_op(k, SEL_CVT_I_F, lir_ref(k, tb), NULL, NULL)),
				      NULL, NULL);
		lir_assign(k, tq, OP2(SEL_ADD_I, lir_ref(k, tq), est));
		lir_assign(k, tr, OP2(SEL_SUB_I, lir_ref(k, ta), OP2(SEL_MUL_I, lir_ref(k, tq), lir_ref(k, tb))));
	}
	/* |b|, then r into [0, |b|) for a >= 0 or (-|b|, 0] for a < 0 */
	lir_assign(k, tm, lir_op(k, SEL_SELECT_I, OP2(SEL_CMPLT_I, lir_ref(k, tb), lir_consti(k, 0)),
				 OP2(SEL_SUB_I, lir_consti(k, 0), lir_ref(k, tb)), lir_ref(k, tb)));
	for (int pass = 0; pass < 2; pass++) {
		LirExpr *aneg = OP2(SEL_CMPLT_I, lir_ref(k, ta), lir_consti(k, 0));
		/* a >= 0: r < 0 -> + |b|; r >= |b| -> - |b| */
		LirExpr *lo = OP2(SEL_CMPLT_I, lir_ref(k, tr), lir_consti(k, 0));
		LirExpr *hi = OP2(SEL_XOR_I, OP2(SEL_CMPLT_I, lir_ref(k, tr), lir_ref(k, tm)), lir_consti(k, 1));
		LirExpr *pos_fix = lir_op(k, SEL_SELECT_I, lo, lir_ref(k, tm),
					  lir_op(k, SEL_SELECT_I, hi, OP2(SEL_SUB_I, lir_consti(k, 0), lir_ref(k, tm)),
						 lir_consti(k, 0)));
		/* a < 0: r > 0 -> - |b|; r <= -|b| -> + |b| */
		LirExpr *gt = OP2(SEL_CMPLT_I, lir_consti(k, 0), lir_ref(k, tr));
		LirExpr *le = OP2(SEL_XOR_I, OP2(SEL_CMPLT_I, OP2(SEL_SUB_I, lir_consti(k, 0), lir_ref(k, tm)), lir_ref(k, tr)),
				  lir_consti(k, 1));
		LirExpr *neg_fix = lir_op(k, SEL_SELECT_I, gt, OP2(SEL_SUB_I, lir_consti(k, 0), lir_ref(k, tm)),
					  lir_op(k, SEL_SELECT_I, le, lir_ref(k, tm), lir_consti(k, 0)));
		lir_assign(k, tr, OP2(SEL_ADD_I, lir_ref(k, tr), lir_op(k, SEL_SELECT_I, aneg, neg_fix, pos_fix)));
	}
	if (!fmod) { /* the divisor's sign: r != 0 with the other sign -> + b */
		LirExpr *nz = OP2(SEL_XOR_I, OP2(SEL_CMPEQ_I, lir_ref(k, tr), lir_consti(k, 0)), lir_consti(k, 1));
		LirExpr *differ = OP2(SEL_XOR_I, OP2(SEL_CMPLT_I, lir_ref(k, tr), lir_consti(k, 0)),
				      OP2(SEL_CMPLT_I, lir_ref(k, tb), lir_consti(k, 0)));
		lir_assign(k, tr, OP2(SEL_ADD_I, lir_ref(k, tr),
				      lir_op(k, SEL_SELECT_I, OP2(SEL_AND_I, nz, differ), lir_ref(k, tb), lir_consti(k, 0))));
	}
	return lir_op(k, SEL_SELECT_I, lir_ref(k, tz), lir_consti(k, 0), lir_ref(k, tr));
}

/* f32 fmod(a, b): r = a - trunc(a / b) b by one fma (exact when the
 * quotient is right: fmod's result is representable), then moved by |b|
 * into the dividend's side of zero, |r| < |b|.  The quotient is right to
 * +-1 while |a / b| < 2^24; beyond, f32's quotient has lost the integer
 * (x86's fprem reduces in steps; gdcc does not yet). */
static LirExpr *scalar_fmod(LirKernel *k, LirExpr *a, LirExpr *b)
{
	int ta = lir_temp(k, SORT_V), tb = lir_temp(k, SORT_V), tr = lir_temp(k, SORT_V), tm = lir_temp(k, SORT_V);
	lir_assign(k, ta, a);
	lir_assign(k, tb, b);
	LirExpr *q = lir_op(k, SEL_CVT_I_F, lir_op(k, SEL_CVTT_F_I, OP2(SEL_DIV_V, lir_ref(k, ta), lir_ref(k, tb)), NULL, NULL),
			    NULL, NULL);
	lir_assign(k, tr, lir_op(k, SEL_FMA_V, lir_op(k, SEL_NEG_V, q, NULL, NULL), lir_ref(k, tb), lir_ref(k, ta)));
	lir_assign(k, tm, lir_op(k, SEL_ABS_V, lir_ref(k, tb), NULL, NULL));
	/* a >= 0 and r < 0: + |b|; a < 0 and r > 0: - |b| (as 0.0 / 1.0 times |b|) */
	LirExpr *up = OP2(SEL_AND_I, OP2(SEL_CMPLE_F, lir_constf(k, 0.0), lir_ref(k, ta)),
			  OP2(SEL_CMPLT_F, lir_ref(k, tr), lir_constf(k, 0.0)));
	LirExpr *down = OP2(SEL_AND_I, OP2(SEL_CMPLT_F, lir_ref(k, ta), lir_constf(k, 0.0)),
			    OP2(SEL_CMPLT_F, lir_constf(k, 0.0), lir_ref(k, tr)));
	LirExpr *steps = lir_op(k, SEL_CVT_I_F, OP2(SEL_SUB_I, up, down), NULL, NULL);
	return lir_op(k, SEL_FMA_V, steps, lir_ref(k, tm), lir_ref(k, tr));
}

bool cg_scalar_kernel(CG *c, const Node *n)
{
	const unsigned ok_dt = 1u << DT_F32 | 1u << DT_I32 | 1u << DT_I64 | 1u << DT_BOOL;
	for (int i = 0; i < n->nin; i++)
		if (!(ok_dt >> n->in[i]->type.dtype & 1))
			return false;
	const Value *y = n->out[0];
	if (!(ok_dt >> y->type.dtype & 1))
		return false;
	switch (n->op) {
	case OP_EQUAL: case OP_LESS: case OP_LESS_EQUAL: case OP_GREATER: case OP_GREATER_EQUAL:
	case OP_AND: case OP_OR: case OP_XOR: case OP_NOT: case OP_WHERE: case OP_CAST: case OP_ISNAN: case OP_ISINF:
	case OP_MOD:
		break;
	case OP_POW:
		if (y->type.dtype == DT_F32)
			return false; /* (f32: expand(pow_exp_log)) */
		break;
	default:
		return false;
	}
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: %s", y->name, op_info[n->op].name);
	Shape s = y->type.shape;
	if (s.rank == 0)
		s = (Shape){1, {1}};
	int64_t ost[MAX_RANK], st[3][MAX_RANK];
	shape_strides(&s, ost);
	for (int i = 0; i < n->nin; i++)
		broadcast_strides(&n->in[i]->type.shape, &s, st[i]);
	/* one loop per axis, the operands' offsets affine in them */
	LirAffine ya = lir_affine(0), xa[3] = {lir_affine(0), lir_affine(0), lir_affine(0)};
	int nloops = 0;
	for (int d = 0; d < s.rank; d++) {
		if (s.dim[d] == 1)
			continue;
		int v = lir_for(k, 0, s.dim[d], 1);
		nloops++;
		lir_term(k, &ya, v, ost[d]);
		for (int i = 0; i < n->nin; i++)
			if (st[i][d])
				lir_term(k, &xa[i], v, st[i][d]);
	}
	bool where = n->op == OP_WHERE;
	LirExpr *x[3] = {NULL, NULL, NULL};
	for (int i = 0; i < n->nin; i++)
		x[i] = cg_lir_elem(c, k, n->in[i], &xa[i], where && i > 0);
	DType dt = n->in[0]->type.dtype;
	LirExpr *e;
	switch (n->op) {
	case OP_AND: e = OP2(SEL_AND_I, x[0], x[1]); break;
	case OP_OR: e = OP2(SEL_OR_I, x[0], x[1]); break;
	case OP_XOR: e = OP2(SEL_XOR_I, x[0], x[1]); break;
	case OP_NOT: e = OP2(SEL_XOR_I, x[0], lir_consti(k, 1)); break;
	case OP_WHERE: e = lir_op(k, SEL_SELECT_I, x[0], x[1], x[2]); break;
	case OP_CAST: e = scalar_cast(k, dt, y->type.dtype, x[0]); break;
	case OP_ISNAN: /* x != x */
		e = OP2(SEL_XOR_I, OP2(SEL_CMPEQ_F, x[0], cg_lir_elem(c, k, n->in[0], &xa[0], false)), lir_consti(k, 1));
		break;
	case OP_ISINF: { /* |x| == inf, or x == +inf, or x == -inf */
		bool neg = attr_i(n, "detect_negative"), pos = attr_i(n, "detect_positive");
		if (neg && pos)
			e = OP2(SEL_CMPEQ_F, lir_op(k, SEL_ABS_V, x[0], NULL, NULL), lir_constf(k, INFINITY));
		else if (neg || pos)
			e = OP2(SEL_CMPEQ_F, x[0], lir_constf(k, pos ? INFINITY : -INFINITY));
		else
			e = lir_consti(k, 0);
		break;
	}
	case OP_POW: e = scalar_ipow(k, x[0], x[1], n->in[1]->type.dtype == DT_I32 ? 31 : 63); break;
	case OP_MOD:
		e = dt == DT_F32 ? scalar_fmod(k, x[0], x[1]) : scalar_imod(k, x[0], x[1], attr_i(n, "fmod") != 0);
		break;
	default: e = scalar_compare(k, n->op, dt == DT_F32, x[0], x[1]); break;
	}
#undef OP2
	lir_store(k, cg_lir_buffer(c, k, y->id), &ya, e);
	for (int i = 0; i < nloops; i++)
		lir_end(k);
	bool ok = k->ok && cg_lir_run(c, k, true);
	lir_kernel_free(k);
	return ok;
}
