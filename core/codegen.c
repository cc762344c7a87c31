/* Lowering of a verified graph to loop nests and selection trees.
 *
 * Each node becomes a kernel: a loop nest over its output (the Loop IR),
 * whose innermost loop is vectorized by the target's lanes with a scalar
 * remainder loop.  Every memory access is an affine function of the loop
 * variables and is checked against its buffer's bounds as it is built.
 * The trees use only the vocabulary of sel.def; which instructions cover
 * them is the target's business (isel.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "interp.h"
#include "legality.h"
#include "ops.h"
#include "util.h"

typedef enum { BUF_ARG, BUF_CONST, BUF_WS } BufKind;

typedef struct {
	BufKind kind;
	int arg;
	const char *sym;
	int64_t offset;  /* workspace bytes */
	int64_t numel;
} Buf;

typedef struct {
	int var;         /* vreg */
	int64_t lo, hi;
	int step;
	int label;
} Loop;

typedef struct {
	int var;
	int64_t coef;
} Term;

typedef struct {
	int64_t off;
	Term t[8];
	int n;
} Affine;

typedef struct {
	Program *p;
	MFunc *f;
	const Target *t;
	Diag *d;
	Buf *buf;
	int args;        /* vreg holding the args array */
	int lanes;
	int icls, fcls, vcls;
	Loop loops[16];
	int nloops;
	int *base;       /* per value: its base address vreg in this kernel, -1 */
	const Node *node;
	bool ok;
} CG;

/* ---- data and buffers -------------------------------------------------- */
static const char *add_data(Program *p, Tensor *t)
{
	if (p->ndata == p->capdata) {
		p->capdata = p->capdata ? 2 * p->capdata : 16;
		p->data = xrealloc(p->data, (size_t)p->capdata * sizeof *p->data);
	}
	char *sym = xasprintf("gdcc_data_%d", p->ndata);
	p->data[p->ndata++] = (DataItem){sym, t};
	return sym;
}

/* A scalar f32 in read-only data (the vocabulary has no vector constants). */
static const char *const_f32(CG *c, double v)
{
	for (int i = 0; i < c->p->ndata; i++) {
		Tensor *t = c->p->data[i].data;
		if (t->type.shape.rank == 0 && t->type.dtype == DT_F32 && ((float *)t->data)[0] == (float)v &&
		    signbit(((float *)t->data)[0]) == signbit((float)v))
			return c->p->data[i].sym;
	}
	Shape s = {0};
	Tensor *t = tensor_new(DT_F32, &s);
	((float *)t->data)[0] = (float)v;
	return add_data(c->p, t);
}

/* ---- loops --------------------------------------------------------------- */
static void indent(CG *c)
{
	for (int i = 0; i < c->nloops + 1; i++)
		fputs("  ", c->p->loops);
}

static int loop_begin(CG *c, int64_t lo, int64_t hi, int step)
{
	MFunc *f = c->f;
	int v = mfunc_vreg(f, c->icls);
	sel_assign(f, v, sel_consti(f, lo));
	int label = sel_new_label(f);
	sel_label(f, label);
	if (c->p->loops) {
		indent(c);
		fprintf(c->p->loops, "for %%v%d in [%lld, %lld) step %d%s\n", v, (long long)lo, (long long)hi, step,
			step > 1 ? " (vector)" : "");
	}
	c->loops[c->nloops++] = (Loop){v, lo, hi, step, label};
	return v;
}

static void loop_end(CG *c)
{
	MFunc *f = c->f;
	Loop l = c->loops[--c->nloops];
	sel_assign(f, l.var, sel_op(f, SEL_ADD_I, sel_reg(f, l.var), sel_consti(f, l.step), NULL));
	sel_branch(f, sel_op(f, SEL_BRLT_I, sel_reg(f, l.var), sel_consti(f, l.hi), NULL), l.label);
}

static const Loop *loop_of(CG *c, int var)
{
	for (int i = 0; i < c->nloops; i++)
		if (c->loops[i].var == var)
			return &c->loops[i];
	return NULL;
}

/* The Loop IR's contract: every access lies inside its buffer. */
static void check_access(CG *c, int value, const Affine *a, int lanes)
{
	int64_t lo = a->off, hi = a->off;
	for (int i = 0; i < a->n; i++) {
		const Loop *l = loop_of(c, a->t[i].var);
		int64_t first = l->lo, last = l->lo + ((l->hi - l->lo - 1) / l->step) * l->step;
		int64_t x = a->t[i].coef * first, y = a->t[i].coef * last;
		lo += x < y ? x : y;
		hi += x < y ? y : x;
	}
	hi += lanes - 1;
	if (lo < 0 || hi >= c->buf[value].numel) {
		diag_error(c->d, c->node->loc, "internal error: the loop nest of %s reads or writes '%s' at [%lld, %lld], outside [0, %lld)",
			   op_info[c->node->op].name, c->p->g->values[value]->name, (long long)lo, (long long)hi,
			   (long long)c->buf[value].numel);
		c->ok = false;
	}
}

static int base_of(CG *c, int value)
{
	if (c->base[value] >= 0)
		return c->base[value];
	MFunc *f = c->f;
	const Buf *b = &c->buf[value];
	int v = mfunc_vreg(f, c->icls);
	if (b->kind == BUF_CONST) {
		sel_assign(f, v, sel_sym(f, b->sym));
	} else {
		int arg = b->kind == BUF_ARG ? b->arg : c->p->nargs - 1;
		sel_assign(f, v, sel_op(f, SEL_LOAD_I, sel_op(f, SEL_ADD_I, sel_reg(f, c->args), sel_consti(f, 8 * arg), NULL), NULL, NULL));
		if (b->kind == BUF_WS && b->offset)
			sel_assign(f, v, sel_op(f, SEL_ADD_I, sel_reg(f, v), sel_consti(f, b->offset), NULL));
	}
	c->base[value] = v;
	return v;
}

static BursNode *address(CG *c, int value, const Affine *a, int lanes)
{
	MFunc *f = c->f;
	check_access(c, value, a, lanes);
	if (c->p->loops) {
		indent(c);
		fprintf(c->p->loops, "  %s %s[%lld", lanes > 1 ? "vector" : "scalar", c->p->g->values[value]->name,
			(long long)a->off);
		for (int i = 0; i < a->n; i++)
			fprintf(c->p->loops, " + %lld*%%v%d", (long long)a->t[i].coef, a->t[i].var);
		fputs("]\n", c->p->loops);
	}
	BursNode *idx = NULL;
	for (int i = 0; i < a->n; i++) {
		if (a->t[i].coef == 0)
			continue;
		BursNode *term = sel_reg(f, a->t[i].var);
		if (a->t[i].coef != 1)
			term = sel_op(f, SEL_MUL_I, term, sel_consti(f, a->t[i].coef), NULL);
		idx = idx ? sel_op(f, SEL_ADD_I, idx, term, NULL) : term;
	}
	BursNode *base = sel_reg(f, base_of(c, value));
	if (!idx)
		return a->off ? sel_op(f, SEL_ADD_I, base, sel_consti(f, 4 * a->off), NULL) : base;
	if (a->off)
		idx = sel_op(f, SEL_ADD_I, idx, sel_consti(f, a->off), NULL);
	return sel_op(f, SEL_ADD_I, base, sel_op(f, SEL_SHL_I, idx, sel_consti(f, 2), NULL), NULL);
}

static BursNode *load(CG *c, int value, const Affine *a, bool vector)
{
	MFunc *f = c->f;
	if (vector)
		return sel_op(f, SEL_LOAD_V, address(c, value, a, c->lanes), NULL, NULL);
	return sel_op(f, SEL_LOAD_F, address(c, value, a, 1), NULL, NULL);
}

static void store(CG *c, int value, const Affine *a, bool vector, BursNode *v)
{
	MFunc *f = c->f;
	sel_effect(f, sel_op(f, vector ? SEL_STORE_V : SEL_STORE_F, address(c, value, a, vector ? c->lanes : 1), v, NULL));
}

static BursNode *splat(CG *c, double v, bool vector)
{
	MFunc *f = c->f;
	BursNode *s = sel_op(f, SEL_LOAD_F, sel_sym(f, const_f32(c, v)), NULL, NULL);
	return vector ? sel_op(f, SEL_BCAST_V, s, NULL, NULL) : s;
}

/* ---- elementwise kernels --------------------------------------------------- */
static BursNode *bin(CG *c, SelOp vop, SelOp sop, bool vector, BursNode *a, BursNode *b)
{
	return sel_op(c->f, vector ? vop : sop, a, b, NULL);
}

/* The value of an elementwise node at one index, from its operands' values. */
static BursNode *elementwise(CG *c, const Node *n, BursNode **x, bool vector)
{
	MFunc *f = c->f;
	switch (n->op) {
	case OP_ADD: return bin(c, SEL_ADD_V, SEL_ADD_F, vector, x[0], x[1]);
	case OP_SUB: return bin(c, SEL_SUB_V, SEL_SUB_F, vector, x[0], x[1]);
	case OP_MUL: return bin(c, SEL_MUL_V, SEL_MUL_F, vector, x[0], x[1]);
	case OP_DIV: return bin(c, SEL_DIV_V, SEL_DIV_F, vector, x[0], x[1]);
	case OP_MAX:
	case OP_MIN:
	case OP_SUM: {
		SelOp vo = n->op == OP_MAX ? SEL_MAX_V : n->op == OP_MIN ? SEL_MIN_V : SEL_ADD_V;
		SelOp so = n->op == OP_MAX ? SEL_MAX_F : n->op == OP_MIN ? SEL_MIN_F : SEL_ADD_F;
		BursNode *acc = x[0];
		for (int i = 1; i < n->nin; i++)
			acc = bin(c, vo, so, vector, acc, x[i]);
		return acc;
	}
	case OP_NEG: return sel_op(f, vector ? SEL_NEG_V : SEL_NEG_F, x[0], NULL, NULL);
	case OP_ABS: return sel_op(f, vector ? SEL_ABS_V : SEL_ABS_F, x[0], NULL, NULL);
	case OP_SQRT: return sel_op(f, vector ? SEL_SQRT_V : SEL_SQRT_F, x[0], NULL, NULL);
	case OP_RECIPROCAL: return bin(c, SEL_DIV_V, SEL_DIV_F, vector, splat(c, 1.0, vector), x[0]);
	case OP_RELU: return bin(c, SEL_MAX_V, SEL_MAX_F, vector, x[0], splat(c, 0.0, vector));
	case OP_CLIP: {
		BursNode *v = x[0];
		if (attr_present(n, "min"))
			v = bin(c, SEL_MAX_V, SEL_MAX_F, vector, v, splat(c, attr_f(n, "min"), vector));
		if (attr_present(n, "max"))
			v = bin(c, SEL_MIN_V, SEL_MIN_F, vector, v, splat(c, attr_f(n, "max"), vector));
		return v;
	}
	case OP_HARDSIGMOID: {
		/* max(0, min(1, alpha x + beta)) */
		BursNode *v = bin(c, SEL_MUL_V, SEL_MUL_F, vector, x[0], splat(c, attr_f(n, "alpha"), vector));
		v = bin(c, SEL_ADD_V, SEL_ADD_F, vector, v, splat(c, attr_f(n, "beta"), vector));
		v = bin(c, SEL_MIN_V, SEL_MIN_F, vector, v, splat(c, 1.0, vector));
		return bin(c, SEL_MAX_V, SEL_MAX_F, vector, v, splat(c, 0.0, vector));
	}
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

static bool is_elementwise(OpKind op)
{
	switch (op) {
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_MAX: case OP_MIN: case OP_SUM:
	case OP_NEG: case OP_ABS: case OP_SQRT: case OP_RECIPROCAL: case OP_RELU: case OP_CLIP:
	case OP_HARDSIGMOID: case OP_IDENTITY: case OP_DROPOUT:
		return true;
	default:
		return false;
	}
}

static bool is_copy(OpKind op)
{
	return op == OP_RESHAPE || op == OP_FLATTEN || op == OP_SQUEEZE || op == OP_UNSQUEEZE;
}

/* Loops over the output's dims; the innermost is vectorized where every
 * operand is contiguous or broadcast along it. */
static void cg_elementwise(CG *c, const Node *n)
{
	const Value *out = n->out[0];
	Shape s = out->type.shape;
	if (s.rank == 0)
		s = (Shape){1, {1}};
	int r = s.rank;
	int64_t ostr[MAX_RANK], istr[8][MAX_RANK];
	shape_strides(&s, ostr);
	int nin = n->nin;
	for (int i = 0; i < nin; i++) {
		if (is_copy(n->op))
			memcpy(istr[i], ostr, sizeof ostr); /* same elements, same order */
		else
			broadcast_strides(&n->in[i]->type.shape, &s, istr[i]);
	}
	/* collapse nothing; loop over every dim but the last */
	int vars[MAX_RANK];
	for (int d = 0; d < r - 1; d++)
		vars[d] = loop_begin(c, 0, s.dim[d], 1);
	int64_t inner = s.dim[r - 1];
	int64_t vend = inner / c->lanes * c->lanes;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : inner;
		if (hi <= lo)
			continue;
		int iv = loop_begin(c, lo, hi, vector ? c->lanes : 1);
		BursNode *x[8];
		for (int i = 0; i < nin; i++) {
			Affine a = {0};
			for (int d = 0; d < r - 1; d++)
				a.t[a.n++] = (Term){vars[d], istr[i][d]};
			bool bcast = istr[i][r - 1] == 0;
			if (!bcast)
				a.t[a.n++] = (Term){iv, istr[i][r - 1]};
			if (vector && bcast)
				x[i] = sel_op(c->f, SEL_BCAST_V, load(c, n->in[i]->id, &a, false), NULL, NULL);
			else
				x[i] = load(c, n->in[i]->id, &a, vector);
		}
		BursNode *v = elementwise(c, n, x, vector);
		Affine oa = {0};
		for (int d = 0; d < r - 1; d++)
			oa.t[oa.n++] = (Term){vars[d], ostr[d]};
		oa.t[oa.n++] = (Term){iv, 1};
		store(c, out->id, &oa, vector, v);
		loop_end(c);
	}
	for (int d = r - 2; d >= 0; d--)
		loop_end(c);
}

/* ---- data movement: affine copies --------------------------------------------- */
/* out[out_off + sum ocoef[d] i_d] = in[in_off + sum icoef[d] i_d] over the
 * index space s; the innermost loop is vectorized when the output is
 * contiguous along it and the input contiguous or broadcast. */
static void cg_copy(CG *c, int in_v, int64_t in_off, const int64_t *icoef, int out_v, int64_t out_off,
		    const int64_t *ocoef, const Shape *shape)
{
	Shape s = *shape;
	int64_t ic[MAX_RANK], oc[MAX_RANK];
	memcpy(ic, icoef, sizeof ic);
	memcpy(oc, ocoef, sizeof oc);
	if (s.rank == 0) {
		s = (Shape){1, {1}};
		ic[0] = oc[0] = 0;
	}
	if (shape_numel(&s) == 0)
		return;
	int r = s.rank, vars[MAX_RANK];
	for (int d = 0; d < r - 1; d++)
		vars[d] = loop_begin(c, 0, s.dim[d], 1);
	int64_t inner = s.dim[r - 1];
	bool can_vec = oc[r - 1] == 1 && (ic[r - 1] == 1 || ic[r - 1] == 0);
	int64_t vend = can_vec ? inner / c->lanes * c->lanes : 0;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : inner;
		if (hi <= lo)
			continue;
		int iv = loop_begin(c, lo, hi, vector ? c->lanes : 1);
		Affine ia = {in_off, {{0}}, 0}, oa = {out_off, {{0}}, 0};
		for (int d = 0; d < r - 1; d++) {
			ia.t[ia.n++] = (Term){vars[d], ic[d]};
			oa.t[oa.n++] = (Term){vars[d], oc[d]};
		}
		ia.t[ia.n++] = (Term){iv, ic[r - 1]};
		oa.t[oa.n++] = (Term){iv, oc[r - 1]};
		BursNode *v;
		if (vector && ic[r - 1] == 0)
			v = sel_op(c->f, SEL_BCAST_V, load(c, in_v, &ia, false), NULL, NULL);
		else
			v = load(c, in_v, &ia, vector);
		store(c, out_v, &oa, vector, v);
		loop_end(c);
	}
	for (int d = r - 2; d >= 0; d--)
		loop_end(c);
}

/* Every element of a value set to v. */
static void cg_fill(CG *c, int out_v, double v, int64_t numel)
{
	int64_t vend = numel / c->lanes * c->lanes;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : numel;
		if (hi <= lo)
			continue;
		int iv = loop_begin(c, lo, hi, vector ? c->lanes : 1);
		Affine oa = {0, {{iv, 1}}, 1};
		store(c, out_v, &oa, vector, splat(c, v, vector));
		loop_end(c);
	}
}

static bool cg_movement(CG *c, const Node *n)
{
	const Value *x = n->in[0];
	Shape is = x->type.shape;
	int64_t istr[MAX_RANK], ostr[MAX_RANK], ic[MAX_RANK] = {0};
	shape_strides(&is, istr);
	switch (n->op) {
	case OP_TRANSPOSE: {
		const Value *y = n->out[0];
		int perm[MAX_RANK];
		transpose_perm(n, is.rank, perm);
		shape_strides(&y->type.shape, ostr);
		for (int d = 0; d < is.rank; d++)
			ic[d] = istr[perm[d]];
		cg_copy(c, x->id, 0, ic, y->id, 0, ostr, &y->type.shape);
		return true;
	}
	case OP_EXPAND: {
		const Value *y = n->out[0];
		shape_strides(&y->type.shape, ostr);
		broadcast_strides(&is, &y->type.shape, ic);
		cg_copy(c, x->id, 0, ic, y->id, 0, ostr, &y->type.shape);
		return true;
	}
	case OP_SLICE: {
		const Value *y = n->out[0];
		int64_t start[MAX_RANK], step[MAX_RANK], count[MAX_RANK], off = 0;
		slice_params(n, &is, start, step, count);
		for (int d = 0; d < is.rank; d++) {
			off += start[d] * istr[d];
			ic[d] = step[d] * istr[d];
		}
		shape_strides(&y->type.shape, ostr);
		cg_copy(c, x->id, off, ic, y->id, 0, ostr, &y->type.shape);
		return true;
	}
	case OP_CONCAT: {
		const Value *y = n->out[0];
		int axis = (int)attr_i(n, "axis");
		if (axis < 0)
			axis += y->type.shape.rank;
		shape_strides(&y->type.shape, ostr);
		int64_t at = 0;
		for (int i = 0; i < n->nin; i++) {
			const Value *xi = n->in[i];
			int64_t s2[MAX_RANK];
			shape_strides(&xi->type.shape, s2);
			base_of(c, xi->id);
			cg_copy(c, xi->id, 0, s2, y->id, at * ostr[axis], ostr, &xi->type.shape);
			at += xi->type.shape.dim[axis];
		}
		return true;
	}
	case OP_SPLIT: {
		int axis = (int)attr_i(n, "axis");
		if (axis < 0)
			axis += is.rank;
		int64_t at = 0;
		for (int k = 0; k < n->nout; k++) {
			const Value *y = n->out[k];
			shape_strides(&y->type.shape, ostr);
			if (y->nuses > 0) {
				base_of(c, y->id);
				cg_copy(c, x->id, at * istr[axis], istr, y->id, 0, ostr, &y->type.shape);
			}
			at += y->type.shape.dim[axis];
		}
		return true;
	}
	case OP_PAD: {
		if (strcmp(attr_s(n, "mode"), "constant") != 0)
			return false;
		const Value *y = n->out[0];
		int64_t begin[MAX_RANK], end[MAX_RANK], in_off = 0, out_off = 0;
		pad_params(n, is.rank, begin, end);
		shape_strides(&y->type.shape, ostr);
		Shape inner = is;
		for (int d = 0; d < is.rank; d++) {
			int64_t b = begin[d], e = end[d];
			if (b < 0) {
				in_off += -b * istr[d];
				inner.dim[d] += b;
				b = 0;
			}
			if (e < 0)
				inner.dim[d] += e;
			out_off += b * ostr[d];
		}
		cg_fill(c, y->id, attr_f(n, "value"), shape_numel(&y->type.shape));
		cg_copy(c, x->id, in_off, istr, y->id, out_off, ostr, &inner);
		return true;
	}
	default:
		return false;
	}
}

/* ---- matmul and gemm -------------------------------------------------------- */
/* Y[b.., m, n] = alpha * sum_k A[.., m, k] B[.., k, n] (+ beta C[m, n]).
 * n is vectorized (B contiguous along n) with a scalar remainder; the
 * accumulator stays in a register across the k loop. */
static void cg_matmul(CG *c, const Node *n)
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
	int bv[MAX_RANK];
	for (int i = 0; i < batch.rank; i++)
		bv[i] = loop_begin(c, 0, batch.dim[i], 1);
	int mv = loop_begin(c, 0, M, 1);
	int64_t vend = b_n == 1 ? N / c->lanes * c->lanes : 0;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : N;
		if (hi <= lo)
			continue;
		int nv = loop_begin(c, lo, hi, vector ? c->lanes : 1);
		int acc = mfunc_vreg(f, vector ? c->vcls : c->fcls);
		sel_assign(f, acc, splat(c, 0.0, vector));
		int kv = loop_begin(c, 0, K, 1);
		Affine aa = {0}, ba = {0};
		for (int i = 0; i < batch.rank; i++) {
			aa.t[aa.n++] = (Term){bv[i], astr_b[i]};
			ba.t[ba.n++] = (Term){bv[i], bstr_b[i]};
		}
		aa.t[aa.n++] = (Term){mv, a_m};
		aa.t[aa.n++] = (Term){kv, a_k};
		ba.t[ba.n++] = (Term){kv, b_k};
		ba.t[ba.n++] = (Term){nv, b_n};
		BursNode *av = load(c, A->id, &aa, false);
		if (vector)
			av = sel_op(f, SEL_BCAST_V, av, NULL, NULL);
		BursNode *bvv = load(c, B->id, &ba, vector);
		sel_assign(f, acc, sel_op(f, vector ? SEL_FMA_V : SEL_FMA_F, av, bvv, sel_reg(f, acc)));
		loop_end(c);
		BursNode *v = sel_reg(f, acc);
		if (alpha != 1.0)
			v = bin(c, SEL_MUL_V, SEL_MUL_F, vector, v, splat(c, alpha, vector));
		if (C && beta != 0.0) {
			Affine ca = {0};
			ca.t[ca.n++] = (Term){mv, cstr[0]};
			bool bcast = cstr[1] == 0;
			if (!bcast)
				ca.t[ca.n++] = (Term){nv, cstr[1]};
			BursNode *cv = (vector && bcast) ? sel_op(f, SEL_BCAST_V, load(c, C->id, &ca, false), NULL, NULL)
							 : load(c, C->id, &ca, vector);
			if (beta != 1.0)
				cv = bin(c, SEL_MUL_V, SEL_MUL_F, vector, cv, splat(c, beta, vector));
			v = bin(c, SEL_ADD_V, SEL_ADD_F, vector, v, cv);
		}
		Affine ya = {0};
		for (int i = 0; i < batch.rank; i++)
			ya.t[ya.n++] = (Term){bv[i], ystr_b[i]};
		ya.t[ya.n++] = (Term){mv, b1 ? 1 : N};
		ya.t[ya.n++] = (Term){nv, 1};
		if (a1) /* the M dim of a promoted 1-D A is not in the output */
			ya.t[ya.n - 2].coef = 0;
		store(c, Y->id, &ya, vector, v);
		loop_end(c);
	}
	loop_end(c);
	for (int i = batch.rank - 1; i >= 0; i--)
		loop_end(c);
}

/* ---- the program ---------------------------------------------------------------- */
static bool lower_node(CG *c, const Node *n)
{
	const Target *t = c->t;
	if (n->op == OP_CONSTANT)
		return true;
	const LegalEntry *e = target_legality(t, n);
	DType dt = n->nin ? n->in[0]->type.dtype : n->out[0]->type.dtype;
	bool f32 = dt == DT_F32 && n->out[0]->type.dtype == DT_F32;
	for (int i = 0; i < n->nin; i++)
		f32 &= n->in[i]->type.dtype == DT_F32;
	char ty[160];
	type_str(n->nin ? &n->in[0]->type : &n->out[0]->type, ty, sizeof ty);
	if (!e || e->action == LEGAL_UNSUPPORTED || e->action == LEGAL_FALLBACK) {
		diag_error(c->d, n->loc, "%s %s cannot run on %s: %s", op_info[n->op].name, ty, t->name,
			   !e ? "no legality row" : e->action == LEGAL_FALLBACK ? "its fallback to a host target is not built yet" : e->reason);
		return false;
	}
	/* the kernel's buffers' addresses, once, before its loops */
	for (int i = 0; i < n->nin; i++)
		base_of(c, n->in[i]->id);
	if (n->out[0]->nuses || n->out[0]->is_output)
		base_of(c, n->out[0]->id);
	if (f32 && (is_elementwise(n->op) || is_copy(n->op)) && !(n->op == OP_DROPOUT && n->nout > 1)) {
		cg_elementwise(c, n);
		return true;
	}
	if (f32 && (n->op == OP_MATMUL || n->op == OP_GEMM)) {
		cg_matmul(c, n);
		return true;
	}
	if (f32 && cg_movement(c, n))
		return true;
	diag_error(c->d, n->loc, "%s %s: the backend does not lower this op for %s yet (legality: %s%s%s)",
		   op_info[n->op].name, ty, t->name, legal_action_name(e->action), e->rule ? " " : "", e->rule ? e->rule : "");
	return false;
}

Program *codegen(const Graph *g, const Target *t, FILE *loops, Diag *d)
{
	Program *p = xcalloc(1, sizeof *p);
	p->t = t;
	p->g = g;
	p->loops = loops;
	p->f = mfunc_new(t, "gdcc_entry");
	MFunc *f = p->f;
	CG c = {.p = p, .f = f, .t = t, .d = d, .ok = true};
	c.icls = target_class_for(t, SORT_I);
	c.fcls = target_class_for(t, SORT_F);
	c.vcls = target_class_for(t, SORT_V);
	c.lanes = t->vector_bits / 32;
	if (c.icls < 0 || c.fcls < 0 || c.vcls < 0 || t->scalable) {
		diag_error(d, loc_at(NULL, 0, 0), "the backend needs fixed-width vectors and i, f and v registers; %s has %s",
			   t->name, t->scalable ? "scalable vectors (not supported by the backend yet)" : "too few register classes");
		program_free(p);
		return NULL;
	}
	/* buffers: inputs, outputs (arguments), constants (data), the rest (workspace) */
	c.buf = xcalloc((size_t)g->nvalues, sizeof *c.buf);
	c.base = xmalloc((size_t)g->nvalues * sizeof *c.base);
	int arg = 0;
	for (int i = 0; i < g->ninputs; i++)
		c.buf[g->inputs[i]->id] = (Buf){BUF_ARG, arg++, NULL, 0, shape_numel(&g->inputs[i]->type.shape)};
	int first_out = arg;
	for (int i = 0; i < g->noutputs; i++) {
		const Value *v = g->outputs[i];
		if (!v->is_input)
			c.buf[v->id] = (Buf){BUF_ARG, first_out + i, NULL, 0, shape_numel(&v->type.shape)};
	}
	arg = first_out + g->noutputs;
	p->nargs = arg + 1;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		for (int k = 0; k < n->nout; k++) {
			const Value *v = n->out[k];
			if (v->is_output)
				continue;
			int64_t numel = shape_numel(&v->type.shape);
			if (n->op == OP_CONSTANT) {
				Tensor *data = tensor_new(v->type.dtype, &v->type.shape);
				if (!materialize_constant(n, data, d)) {
					tensor_free(data);
					c.ok = false;
					continue;
				}
				c.buf[v->id] = (Buf){BUF_CONST, 0, add_data(p, data), 0, numel};
			} else {
				c.buf[v->id] = (Buf){BUF_WS, 0, NULL, p->workspace_bytes, numel};
				p->workspace_bytes += (numel * (int64_t)dtype_size(v->type.dtype) + 63) / 64 * 64;
			}
		}
	}
	/* entry: the args array from the first argument register */
	const AbiArgs *aa = t->abi.nargs ? &t->abi.args[0] : NULL;
	int acls = -1, areg = -1;
	for (int i = 0; aa && i < t->nregclasses; i++)
		if (strcmp(t->regclasses[i].name, aa->cls) == 0)
			for (int r = 0; r < t->regclasses[i].nregs; r++)
				if (strcmp(t->regclasses[i].regs[r], aa->regs[0]) == 0)
					acls = i, areg = r;
	if (acls < 0) {
		diag_error(d, loc_at(NULL, 0, 0), "%s: the abi has no argument register", t->name);
		program_free(p);
		free(c.buf);
		free(c.base);
		return NULL;
	}
	int a0 = mfunc_vreg(f, acls);
	f->vregs[a0].preg = areg;
	c.args = mfunc_vreg(f, c.icls);
	sel_assign(f, c.args, sel_reg(f, a0));
	if (loops)
		fprintf(loops, "function gdcc_entry(args[%d]) on %s, %d lanes, workspace %lld bytes\n", p->nargs, t->name,
			c.lanes, (long long)p->workspace_bytes);
	for (int i = 0; i < g->nnodes && c.ok; i++) {
		const Node *n = g->nodes[i];
		if (n->op == OP_CONSTANT)
			continue;
		for (int v = 0; v < g->nvalues; v++)
			c.base[v] = -1;
		c.node = n;
		if (loops)
			fprintf(loops, "kernel %d: %s = %s\n", p->nkernels, n->out[0]->name, op_info[n->op].name);
		if (!lower_node(&c, n))
			c.ok = false;
		p->nkernels++;
	}
	/* outputs that are inputs or constants: copy them */
	for (int i = 0; i < g->noutputs && c.ok; i++) {
		const Value *v = g->outputs[i];
		if (!v->is_input && (!v->def || v->def->op != OP_CONSTANT))
			continue;
		diag_error(d, v->loc, "output '%s' is an input or a constant: the backend does not copy it yet", v->name);
		c.ok = false;
	}
	sel_effect(f, sel_op(f, SEL_RET, NULL, NULL, NULL));
	free(c.buf);
	free(c.base);
	if (!c.ok || !isel_function(f, d) || !regalloc_function(f, d)) {
		program_free(p);
		return NULL;
	}
	return p;
}

void program_free(Program *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->ndata; i++) {
		free(p->data[i].sym);
		tensor_free(p->data[i].data);
	}
	free(p->data);
	mfunc_free(p->f);
	free(p);
}
