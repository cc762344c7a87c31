/* Elementwise kernels: one loop nest over the output, the innermost loop
 * vectorized with a scalar (or masked) remainder (cg.h). */
#include "cg.h"

/* ---- elementwise kernels --------------------------------------------------- */
BursNode *cg_bin(CG *c, SelOp vop, SelOp sop, bool vector, BursNode *a, BursNode *b)
{
	if (c->int_mode) {
		SelOp iop = sop == SEL_ADD_F ? SEL_ADD_I : sop == SEL_SUB_F ? SEL_SUB_I : sop == SEL_MUL_F ? SEL_MUL_I
			  : sop == SEL_MIN_F ? SEL_MIN_I : sop == SEL_MAX_F ? SEL_MAX_I : SEL_COUNT;
		return iop == SEL_COUNT ? NULL : sel_op(c->f, iop, a, b, NULL);
	}
	return sel_op(c->f, vector ? vop : sop, a, b, NULL);
}

/* The value of an elementwise node at one index, from its operands' values. */
static BursNode *elementwise(CG *c, const Node *n, BursNode **x, bool vector)
{
	MFunc *f = c->f;
	switch (n->op) {
	case OP_ADD: return cg_bin(c, SEL_ADD_V, SEL_ADD_F, vector, x[0], x[1]);
	case OP_SUB: return cg_bin(c, SEL_SUB_V, SEL_SUB_F, vector, x[0], x[1]);
	case OP_MUL: return cg_bin(c, SEL_MUL_V, SEL_MUL_F, vector, x[0], x[1]);
	case OP_DIV: return cg_bin(c, SEL_DIV_V, SEL_DIV_F, vector, x[0], x[1]);
	case OP_POW: {
		int a = cg_keep(c, vector ? x[0] : sel_op(f, SEL_BCAST_V, x[0], NULL, NULL), true);
		int b = cg_keep(c, vector ? x[1] : sel_op(f, SEL_BCAST_V, x[1], NULL, NULL), true);
		int y = cg_pow_v(c, a, b);
		return vector ? R(y) : sel_op(f, SEL_REDMAX_V, R(y), NULL, NULL);
	}
	case OP_MAX:
	case OP_MIN:
	case OP_SUM: {
		SelOp vo = n->op == OP_MAX ? SEL_MAX_V : n->op == OP_MIN ? SEL_MIN_V : SEL_ADD_V;
		SelOp so = n->op == OP_MAX ? SEL_MAX_F : n->op == OP_MIN ? SEL_MIN_F : SEL_ADD_F;
		BursNode *acc = x[0];
		for (int i = 1; i < n->nin; i++)
			acc = cg_bin(c, vo, so, vector, acc, x[i]);
		return acc;
	}
	case OP_NEG:
		if (c->int_mode)
			return sel_op(f, SEL_SUB_I, sel_consti(f, 0), x[0], NULL);
		return sel_op(f, vector ? SEL_NEG_V : SEL_NEG_F, x[0], NULL, NULL);
	case OP_ABS:
		if (c->int_mode) { /* max(x, 0 - x): INT64_MIN stays INT64_MIN, as in the reference */
			int r = mfunc_vreg(f, c->icls);
			sel_assign(f, r, x[0]);
			return sel_op(f, SEL_MAX_I, R(r), sel_op(f, SEL_SUB_I, sel_consti(f, 0), R(r), NULL), NULL);
		}
		return sel_op(f, vector ? SEL_ABS_V : SEL_ABS_F, x[0], NULL, NULL);
	case OP_SQRT: return sel_op(f, vector ? SEL_SQRT_V : SEL_SQRT_F, x[0], NULL, NULL);
	case OP_RECIPROCAL: return cg_bin(c, SEL_DIV_V, SEL_DIV_F, vector, cg_splat(c, 1.0, vector), x[0]);
	case OP_RELU: return cg_bin(c, SEL_MAX_V, SEL_MAX_F, vector, x[0], cg_splat(c, 0.0, vector));
	case OP_CLIP: {
		BursNode *v = x[0];
		if (c->int_mode) { /* the bounds as the reference takes them: ceil / floor, saturated; NaN: absent */
			double mn = attr_f(n, "min"), mx = attr_f(n, "max");
			if (attr_present(n, "min") && !isnan(mn))
				v = sel_op(f, SEL_MAX_I, v, cg_const_i64(c, cg_int_bound(mn, true)), NULL);
			if (attr_present(n, "max") && !isnan(mx))
				v = sel_op(f, SEL_MIN_I, v, cg_const_i64(c, cg_int_bound(mx, false)), NULL);
			return v;
		}
		if (attr_present(n, "min"))
			v = cg_bin(c, SEL_MAX_V, SEL_MAX_F, vector, v, cg_splat(c, attr_f(n, "min"), vector));
		if (attr_present(n, "max"))
			v = cg_bin(c, SEL_MIN_V, SEL_MIN_F, vector, v, cg_splat(c, attr_f(n, "max"), vector));
		return v;
	}
	case OP_HARDSIGMOID: {
		/* max(0, min(1, alpha x + beta)) */
		BursNode *v = cg_bin(c, SEL_MUL_V, SEL_MUL_F, vector, x[0], cg_splat(c, attr_f(n, "alpha"), vector));
		v = cg_bin(c, SEL_ADD_V, SEL_ADD_F, vector, v, cg_splat(c, attr_f(n, "beta"), vector));
		v = cg_bin(c, SEL_MIN_V, SEL_MIN_F, vector, v, cg_splat(c, 1.0, vector));
		return cg_bin(c, SEL_MAX_V, SEL_MAX_F, vector, v, cg_splat(c, 0.0, vector));
	}
	case OP_EXP: case OP_SIGMOID: case OP_TANH: case OP_ERF: case OP_GELU: case OP_LEAKY_RELU: case OP_HARDSWISH:
	case OP_LOG:
		return cg_transcendental(c, n, x[0], vector);
	case OP_IDENTITY:
	case OP_DROPOUT:
	case OP_RESHAPE:
	case OP_FLATTEN:
	case OP_SQUEEZE:
	case OP_UNSQUEEZE:
		return x[0];
	default: return NULL;
	}
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
	default:
		return false;
	}
}

bool cg_is_copy(OpKind op)
{
	return op == OP_RESHAPE || op == OP_FLATTEN || op == OP_SQUEEZE || op == OP_UNSQUEEZE;
}

/* Loops over the output's dims; the innermost is vectorized where every
 * operand is contiguous or broadcast along it. */
/* The first k lanes of a fixed vector, as a mask: lane index < k, the
 * indices from read-only data (k is known when compiling). */
static BursNode *first_lanes(CG *c, int64_t k)
{
	static const char iota_tag[] = "lane indices";
	const char *sym = NULL;
	for (int i = 0; i < c->p->ndata && !sym; i++)
		if (c->p->data[i].tag == iota_tag)
			sym = c->p->data[i].sym;
	if (!sym) {
		Shape s = {1, {c->lanes}};
		Tensor *t = tensor_new(DT_F32, &s);
		for (int i = 0; i < c->lanes; i++)
			((float *)t->data)[i] = (float)i;
		sym = cg_add_data(c->p, t);
		c->p->data[c->p->ndata - 1].tag = iota_tag;
	}
	return sel_op(c->f, SEL_CMPLT_V, sel_op(c->f, SEL_LOAD_V, sel_sym(c->f, sym), NULL, NULL), cg_splat(c, (double)k, true), NULL);
}

/* i32 elementwise (add, sum, max, min) over W vectors */
static BursNode *elementwise_w(CG *c, const Node *n, BursNode **x)
{
	SelOp op = n->op == OP_MAX ? SEL_MAX_W : n->op == OP_MIN ? SEL_MIN_W : SEL_ADD_W;
	BursNode *v = x[0];
	for (int i = 1; i < n->nin; i++)
		v = sel_op(c->f, op, v, x[i], NULL);
	return v;
}

void cg_elementwise(CG *c, const Node *n)
{
	const Value *out = n->out[0];
	Shape s = out->type.shape;
	if (s.rank == 0)
		s = (Shape){1, {1}};
	int r = s.rank;
	int nin = n->nin;
	/* one stride row and one loaded operand per operand: variadic ops
	 * (sum, max, min) take any number */
	int64_t ostr[MAX_RANK], (*istr)[MAX_RANK] = xcalloc((size_t)nin, sizeof *istr);
	BursNode **x = xcalloc((size_t)nin, sizeof *x);
	shape_strides(&s, ostr);
	for (int i = 0; i < nin; i++) {
		if (cg_is_copy(n->op))
			memcpy(istr[i], ostr, sizeof ostr); /* same elements, same order */
		else
			broadcast_strides(&n->in[i]->type.shape, &s, istr[i]);
	}
	/* merge adjacent dims that the result and every operand walk
	 * contiguously (or that an operand broadcasts along both): a
	 * same-shape elementwise op is one flat loop, with no remainder per row */
	for (int d = r - 2; d >= 0; d--) {
		bool merge = ostr[d] == ostr[d + 1] * s.dim[d + 1];
		for (int i = 0; i < nin; i++)
			merge &= istr[i][d] == istr[i][d + 1] * s.dim[d + 1];
		if (!merge)
			continue;
		s.dim[d] *= s.dim[d + 1];
		ostr[d] = ostr[d + 1];
		for (int i = 0; i < nin; i++)
			istr[i][d] = istr[i][d + 1];
		for (int e = d + 1; e + 1 < r; e++) {
			s.dim[e] = s.dim[e + 1];
			ostr[e] = ostr[e + 1];
			for (int i = 0; i < nin; i++)
				istr[i][e] = istr[i][e + 1];
		}
		r--;
		s.rank = r;
	}
	/* loop over every dim but the last */
	int vars[MAX_RANK];
	for (int d = 0; d < r - 1; d++)
		vars[d] = cg_loop_begin(c, 0, s.dim[d], 1);
	int64_t inner = s.dim[r - 1];
	int64_t vend = c->int_mode ? 0 : cg_vend_of(c, 0, inner);
	if (shape_numel(&s) == 0)
		vend = inner = 0;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : inner;
		if (hi <= lo)
			continue;
		/* i32 in W vectors: the remainder is one masked vector */
		bool tail = c->w_mode && !vector;
		BursNode *mask = tail ? first_lanes(c, hi - lo) : NULL;
		int iv = tail ? -1 : cg_vloop_begin(c, lo, hi, vector);
		for (int i = 0; i < nin; i++) {
			Affine a = {0};
			for (int d = 0; d < r - 1; d++)
				a.t[a.n++] = (Term){vars[d], istr[i][d]};
			bool bcast = istr[i][r - 1] == 0;
			if (!bcast && tail)
				a.off = lo * istr[i][r - 1];
			else if (!bcast)
				a.t[a.n++] = (Term){iv, istr[i][r - 1]};
			if ((vector || tail) && bcast)
				x[i] = sel_op(c->f, SEL_BCAST_V, cg_load(c, n->in[i]->id, &a, false), NULL, NULL);
			else if (tail)
				x[i] = sel_op(c->f, SEL_LOADM_V, cg_address(c, n->in[i]->id, &a, (int)(hi - lo)), mask, NULL);
			else
				x[i] = cg_load(c, n->in[i]->id, &a, vector);
			if (c->w_mode)
				x[i] = sel_op(c->f, SEL_BITS_V_W, x[i], NULL, NULL);
		}
		BursNode *v = c->w_mode ? sel_op(c->f, SEL_BITS_W_V, elementwise_w(c, n, x), NULL, NULL) : elementwise(c, n, x, vector);
		Affine oa = {0};
		for (int d = 0; d < r - 1; d++)
			oa.t[oa.n++] = (Term){vars[d], ostr[d]};
		if (tail) {
			oa.off = lo;
			sel_effect(c->f, sel_op(c->f, SEL_STOREM_V, cg_address(c, out->id, &oa, (int)(hi - lo)), v, mask));
			continue;
		}
		oa.t[oa.n++] = (Term){iv, 1};
		cg_store(c, out->id, &oa, vector, v);
		cg_loop_end(c);
	}
	for (int d = r - 2; d >= 0; d--)
		cg_loop_end(c);
	free(istr);
	free(x);
}

