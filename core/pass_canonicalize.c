/* pass_canonicalize: local rewrites to a canonical, cheaper graph.
 *
 * Assumes: a verified graph (every value typed, use lists exact, g->nodes a
 * topological order, no dead nodes).
 * Preserves: the graph's inputs and outputs (names, types, order); every
 * result bit for bit, except at -O2 (opt_level >= 2) matmul + add -> gemm,
 * where the reference gemm adds the bias before rounding the product to f32
 * instead of after (one rounding fewer, within the matmul tolerance; the
 * compiled code adds in the same order either way), and the exported GELU
 * -> gelu (the gelu kernel's rounding, within its error bound); the topological order;
 * no dead nodes (what a rewrite leaves unused is removed); every new node
 * typed.
 *
 * Rewrites, applied at each node in topological order, sweeps repeated
 * until one changes nothing (each rewrite removes a node or an operation,
 * so this ends).  A sweep is linear in the graph, plus the nodes inserted
 * (each insertion moves the nodes after it; most rewrites edit in place):
 *   identity(x), dropout(x) in inference with its mask unused -> x
 *   a view (reshape, flatten, squeeze, unsqueeze) of a view -> one reshape
 *     of the first operand; a view, expand, single-operand concat,
 *     single-result split, slice taking everything, pad by nothing or
 *     transpose by the identity permutation, whose result has the
 *     operand's type -> the operand
 *   transpose(transpose(x)) -> one transpose with the composed permutation,
 *     or x when it is the identity
 *   gemm(a, transpose(x), trans_b=1) -> gemm(a, x)
 *   gemm(a, W, trans_b=1), W constant -> gemm(a, W^T), W^T a new constant
 *     computed here (once per W; W goes when nothing else reads it, so no
 *     fold size limit applies).  The backend's register-blocked GEMM needs
 *     B contiguous along n: with trans_b=1 it falls back to scalar loops
 *   matmul / gemm(trans_b=0) of b = transpose(constant) -> the transposed
 *     constant (once per transpose)
 *   -O2: add(matmul(a, W), bias), W constant [K,N], bias constant
 *     broadcast along rows ([N], [1,N], [1], []), the product used only by
 *     the add, f32 -> gemm(a, W, bias) (the bias in the GEMM's epilogue); a
 *     of rank r > 2 goes through reshapes to [prod(batch)*M, K] and back
 *     (views: free under memory planning)
 *   x * 1, 1 * x, x / 1 -> x (exact in IEEE arithmetic, signed zeros,
 *     infinities and NaN included);
 *   x + c, c + x with c all -0.0 -> x and x - c with c all +0.0 -> x (exact:
 *     x + -0 is x for every x, while x + +0 turns -0 into +0, so an add of
 *     ordinary zeros is kept); integer x + 0, x - 0 -> x
 *   relu(relu x) -> relu x, abs(abs x) -> abs x, neg(neg x) -> x
 *   -O2: x * (erf(x / sqrt(2)) + 1) * 0.5 (the erf GELU as PyTorch exports
 *     nn.GELU; 0.5 first or last, or x * (1 / sqrt(2))) -> gelu(x)
 * A rewrite that would replace a graph output by a value that cannot take
 * its name (an input, a constant, another output) is not made. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "ops.h"
#include "passes.h"
#include "rewrite.h"
#include "verify.h"

typedef struct {
	Graph *g;
	Diag *d;
	int opt_level;
	int changes;
	bool failed;
	Node **stack; /* dead-node sweep */
	int nstack, capstack;
	/* by value id: a constant's transpose (gemm trans_b), a transpose's
	 * folded constant (matmul of a transposed constant) */
	Value **tcache, **fcache;
	int ncache;
} Canon;

/* ---- helpers ----------------------------------------------------------- */
static bool live_node(const Node *n) { return n && !node_removed(n); }

static bool is_const(const Value *v) { return live_node(v->def) && v->def->op == OP_CONSTANT; }

static const Node *def_op(const Value *v, OpKind op)
{
	return live_node(v->def) && v->def->op == op ? v->def : NULL;
}

static bool is_view(OpKind op)
{
	return op == OP_RESHAPE || op == OP_FLATTEN || op == OP_SQUEEZE || op == OP_UNSQUEEZE;
}

static bool same_type(const Value *a, const Value *b)
{
	return a->type.dtype == b->type.dtype && shape_eq(&a->type.shape, &b->type.shape);
}

static void push_node(Canon *c, Node *n)
{
	if (c->nstack == c->capstack) {
		c->capstack = c->capstack ? 2 * c->capstack : 16;
		c->stack = xrealloc(c->stack, (size_t)c->capstack * sizeof *c->stack);
	}
	c->stack[c->nstack++] = n;
}

/* Remove n if none of its results is used (or an output), then the
 * definitions of its operands that this leaves dead. */
static void sweep_dead(Canon *c, Node *n)
{
	c->nstack = 0;
	if (n)
		push_node(c, n);
	while (c->nstack > 0) {
		Node *m = c->stack[--c->nstack];
		if (!live_node(m))
			continue;
		bool used = false;
		for (int k = 0; k < m->nout; k++)
			used |= m->out[k]->nuses > 0;
		if (used)
			continue;
		graph_remove_node(c->g, m);
		for (int k = 0; k < m->nin; k++)
			if (live_node(m->in[k]->def))
				push_node(c, m->in[k]->def);
	}
}

/* Every use of n's result `from` becomes `to`; n (and what only it used)
 * goes when that leaves it dead.  False (nothing changed) when from is an
 * output that `to` cannot replace. */
static bool forward(Canon *c, Node *n, Value *from, Value *to)
{
	if (from->nuses == 0) { /* nothing to move: only n may go */
		sweep_dead(c, n);
		return node_removed(n);
	}
	if (!graph_replace_uses(c->g, from, to))
		return false;
	sweep_dead(c, n);
	return true;
}

/* Types n's results again (after its operands or attributes changed). */
static bool retype(Canon *c, Node *n)
{
	if (graph_check_node(c->g, n, c->d))
		return true;
	diag_error(c->d, n->loc, "internal: canonicalize left a %s it cannot type", op_info[n->op].name);
	c->failed = true;
	return false;
}

static void grow_caches(Canon *c)
{
	if (c->g->nvalues <= c->ncache)
		return;
	int n = c->g->nvalues * 2;
	c->tcache = xrealloc(c->tcache, (size_t)n * sizeof *c->tcache);
	c->fcache = xrealloc(c->fcache, (size_t)n * sizeof *c->fcache);
	memset(c->tcache + c->ncache, 0, (size_t)(n - c->ncache) * sizeof *c->tcache);
	memset(c->fcache + c->ncache, 0, (size_t)(n - c->ncache) * sizeof *c->fcache);
	c->ncache = n;
}

/* A cached constant still usable by n: alive and placed before it. */
static Value *cached(Canon *c, Value *const *cache, const Value *key, const Node *n)
{
	if (key->id < 0 || key->id >= c->ncache || !cache[key->id])
		return NULL;
	Value *v = cache[key->id];
	if (!live_node(v->def) || graph_node_pos(c->g, v->def) >= graph_node_pos(c->g, n))
		return NULL;
	return v;
}

/* The data of constant v, or NULL (after no message) when it cannot be
 * read now. */
static Tensor *const_data(const Value *v) { return constant_data(v->def); }

/* Is every element of constant v within rel * |x| of x (rel 0: equal to x,
 * and for floats of the sign of x's zero when x is 0)?  Looked at only when
 * cheap: fill and zeros, and data of at most 64 Ki elements. */
static bool const_near(const Value *v, double x, double rel)
{
	const Node *n = v->def;
	DType dt = v->type.dtype;
	if (dt != DT_F32 && dt != DT_I32 && dt != DT_I64)
		return false;
	Shape one = {0};
	const Shape *s = &v->type.shape;
	if (n->init.kind == INIT_FILL || n->init.kind == INIT_ZEROS)
		s = &one; /* one element says it all */
	else if (n->init.kind == INIT_RANDOM || n->init.kind == INIT_NORMAL || shape_numel(s) > 65536)
		return false;
	Tensor *t = tensor_new(dt, s);
	Diag d;
	diag_init(&d);
	bool ok = materialize_constant(n, t, &d);
	diag_free(&d);
	for (int64_t i = 0; ok && i < tensor_numel(t); i++) {
		if (dt == DT_F32) {
			float f = f32(t)[i];
			ok = rel > 0 ? fabs((double)f - x) <= rel * fabs(x)
				     : f == (float)x && (f != 0 || !signbit(f) == !signbit(x));
		} else {
			ok = tensor_get_i(t, i) == (int64_t)x;
		}
	}
	tensor_free(t);
	return ok;
}

static bool const_all(const Value *v, double x) { return const_near(v, x, 0); }

/* Shape attribute of a reshape to exactly s. */
static void set_reshape_shape(Node *n, const Shape *s)
{
	bool zero = false;
	for (int i = 0; i < s->rank; i++)
		zero |= s->dim[i] == 0;
	node_set_ints(n, "shape", s->dim, s->rank);
	if (zero)
		node_set_int(n, "allowzero", 1); /* 0 is a size here, not "copy" */
}

/* A reshape of x to s inserted at pos, typed; NULL after an error. */
static Node *insert_reshape(Canon *c, int pos, Value *x, const Shape *s, const char *base, Loc loc)
{
	Node *r = graph_insert_node(c->g, pos, OP_RESHAPE, &x, 1, 1, base, loc);
	set_reshape_shape(r, s);
	return retype(c, r) ? r : NULL;
}

/* ---- the rewrites: each returns true when it changed the graph --------- */

/* Ops whose result is their operand. */
static bool passes_through(const Node *n)
{
	if (n->nin < 1 || n->nout < 1 || !same_type(n->in[0], n->out[0]))
		return false;
	const Shape *s = &n->in[0]->type.shape;
	switch (n->op) {
	case OP_IDENTITY:
	case OP_RESHAPE:
	case OP_FLATTEN:
	case OP_SQUEEZE:
	case OP_UNSQUEEZE:
	case OP_EXPAND:
		return true;
	case OP_DROPOUT:
		return attr_i(n, "training_mode") == 0 && (n->nout == 1 || n->out[1]->nuses == 0);
	case OP_CONCAT:
		return n->nin == 1;
	case OP_SPLIT:
		return n->nout == 1;
	case OP_SLICE: {
		int64_t start[MAX_RANK], step[MAX_RANK], count[MAX_RANK];
		slice_params(n, s, start, step, count);
		for (int i = 0; i < s->rank; i++)
			if (count[i] != s->dim[i] || (step[i] != 1 && s->dim[i] > 1))
				return false;
		return true;
	}
	case OP_PAD: {
		int64_t b[MAX_RANK], e[MAX_RANK];
		pad_params(n, s->rank, b, e);
		for (int i = 0; i < s->rank; i++)
			if (b[i] != 0 || e[i] != 0)
				return false;
		return true;
	}
	case OP_TRANSPOSE: {
		int perm[MAX_RANK];
		transpose_perm(n, s->rank, perm);
		for (int i = 0; i < s->rank; i++)
			if (perm[i] != i)
				return false;
		return true;
	}
	default:
		return false;
	}
}

/* view(view(...view(x))) -> reshape(x), or x */
static bool rw_view_chain(Canon *c, Node *n, int pos)
{
	Value *u = n->in[0], *root = u;
	while (live_node(root->def) && is_view(root->def->op))
		root = root->def->in[0];
	if (root == u)
		return false;
	Value *y = n->out[0];
	if (shape_eq(&root->type.shape, &y->type.shape) && forward(c, n, y, root))
		return true;
	Node *inner = u->def;
	if (n->op == OP_RESHAPE) {
		node_set_operand(n, 0, root);
		set_reshape_shape(n, &y->type.shape);
		if (!retype(c, n))
			return false;
	} else if (inner->op == OP_RESHAPE && inner->in[0] == root && value_sole_user(u) == n) {
		/* the reshape before n, read by n alone, makes n's shape (no
		 * node inserted: insertion moves every node after it); its
		 * result changes type, so a type the model wrote for it goes */
		set_reshape_shape(inner, &y->type.shape);
		u->annotated = false;
		if (!retype(c, inner))
			return false;
		if (!forward(c, n, y, u))
			return false; /* (cannot happen: u is computed, not an output) */
		return true;
	} else {
		Node *r = insert_reshape(c, pos, root, &y->type.shape, y->name, n->loc);
		if (!r)
			return false;
		graph_take_name(c->g, r->out[0], y); /* (n goes) */
		if (!forward(c, n, y, r->out[0]))
			return false;
	}
	sweep_dead(c, u->def);
	return true;
}

/* transpose(transpose(x)) */
static bool rw_transposes(Canon *c, Node *n)
{
	Value *u = n->in[0];
	const Node *t = def_op(u, OP_TRANSPOSE);
	if (!t)
		return false;
	int r = u->type.shape.rank, p1[MAX_RANK], p2[MAX_RANK];
	transpose_perm(t, r, p1);
	transpose_perm(n, r, p2);
	int64_t comp[MAX_RANK];
	bool ident = true;
	for (int j = 0; j < r; j++) {
		comp[j] = p1[p2[j]];
		ident &= comp[j] == j;
	}
	Value *x = t->in[0];
	if (ident && forward(c, n, n->out[0], x))
		return true;
	node_set_operand(n, 0, x);
	node_set_ints(n, "perm", comp, r);
	if (!retype(c, n))
		return false;
	sweep_dead(c, u->def);
	return true;
}

/* The transpose of 2-D constant w ([R,C] -> [C,R]), a new constant at pos
 * (once per w); NULL when its data cannot be read. */
static Value *transposed_const(Canon *c, Value *w, Node *user, int pos)
{
	grow_caches(c);
	Value *k = cached(c, c->tcache, w, user);
	if (k)
		return k;
	Tensor *src = const_data(w);
	if (!src)
		return NULL;
	int64_t R = w->type.shape.dim[0], C = w->type.shape.dim[1];
	Shape s = {2, {C, R}};
	Tensor *t = tensor_new(w->type.dtype, &s);
	size_t es = dtype_size(w->type.dtype);
	const char *a = src->data;
	char *b = t->data;
	enum { TILE = 32 };
	for (int64_t i0 = 0; i0 < R; i0 += TILE)
		for (int64_t j0 = 0; j0 < C; j0 += TILE)
			for (int64_t i = i0; i < R && i < i0 + TILE; i++)
				for (int64_t j = j0; j < C && j < j0 + TILE; j++)
					memcpy(b + (size_t)(j * R + i) * es, a + (size_t)(i * C + j) * es, es);
	tensor_free(src);
	char *base = xasprintf("%s.T", w->name);
	Node *kn = graph_insert_tensor(c->g, pos, base, t, w->def->loc);
	free(base);
	grow_caches(c);
	c->tcache[w->id] = kn->out[0];
	return kn->out[0];
}

/* The constant that transpose t of a constant computes, a new constant at
 * pos (once per t); NULL when its data cannot be read. */
static Value *folded_transpose(Canon *c, const Node *t, Node *user, int pos)
{
	Value *tv = t->out[0];
	if (tv->type.shape.rank == 2 && tv->type.dtype == DT_F32) {
		int perm[2];
		transpose_perm(t, 2, perm);
		if (perm[0] == 1) /* W^T: the one gemm's trans_b uses too */
			return transposed_const(c, t->in[0], user, pos);
	}
	grow_caches(c);
	Value *k = cached(c, c->fcache, tv, user);
	if (k)
		return k;
	Tensor *src = const_data(t->in[0]);
	if (!src)
		return NULL;
	Tensor *dst = tensor_new(tv->type.dtype, &tv->type.shape);
	Diag d;
	diag_init(&d);
	bool ok = op_info[OP_TRANSPOSE].kernel(t, &src, &dst, &d);
	diag_free(&d);
	tensor_free(src);
	if (!ok) {
		tensor_free(dst);
		return NULL;
	}
	char *base = xasprintf("%s.T", t->in[0]->name);
	Node *kn = graph_insert_tensor(c->g, pos, base, dst, t->loc);
	free(base);
	grow_caches(c);
	c->fcache[tv->id] = kn->out[0];
	return kn->out[0];
}

/* gemm(a, transpose(x), trans_b=1) -> gemm(a, x); gemm(a, W, trans_b=1)
 * -> gemm(a, W^T); matmul/gemm(a, transpose(W)) -> the folded constant */
static bool rw_matmul_b(Canon *c, Node *n, int pos)
{
	Value *b = n->in[1];
	bool gemm = n->op == OP_GEMM;
	bool tb = gemm && attr_i(n, "trans_b") != 0;
	const Node *t = def_op(b, OP_TRANSPOSE);
	Value *nb = NULL;
	if (tb && t) {
		int perm[2];
		transpose_perm(t, 2, perm);
		if (perm[0] == 1 && perm[1] == 0)
			nb = t->in[0];
	}
	if (!nb && tb && is_const(b) && b->type.dtype == DT_F32)
		nb = transposed_const(c, b, n, pos);
	if (nb) {
		node_set_operand(n, 1, nb);
		node_set_int(n, "trans_b", 0);
	} else if (!tb && t && is_const(t->in[0])) {
		if (!(nb = folded_transpose(c, t, n, pos)))
			return false;
		node_set_operand(n, 1, nb);
	} else {
		return false;
	}
	if (!retype(c, n))
		return false;
	sweep_dead(c, b->def);
	return true;
}

/* add(matmul(a, W), bias) -> gemm(a, W, bias), through 2-D views of a and
 * of the product when a has rank > 2 */
static bool rw_matmul_bias(Canon *c, Node *n, int pos)
{
	Value *y = n->out[0];
	if (y->type.dtype != DT_F32)
		return false;
	for (int side = 0; side < 2; side++) {
		Value *m = n->in[side], *bias = n->in[1 - side];
		Node *mm = m->def;
		if (!live_node(mm) || mm->op != OP_MATMUL || value_sole_user(m) != n || !is_const(bias))
			continue;
		Value *a = mm->in[0], *w = mm->in[1];
		const Shape *as = &a->type.shape, *ws = &w->type.shape, *bs = &bias->type.shape;
		if (!is_const(w) || ws->rank != 2 || as->rank < 2 || !shape_eq(&y->type.shape, &m->type.shape))
			continue;
		int64_t N = ws->dim[1];
		if (bs->rank > 2 || (bs->rank == 2 && bs->dim[0] != 1) ||
		    (bs->rank >= 1 && bs->dim[bs->rank - 1] != N && bs->dim[bs->rank - 1] != 1))
			continue;
		Loc loc = n->loc;
		Value *a2 = a;
		int at = pos;
		if (as->rank > 2) {
			int64_t rows = 1;
			for (int i = 0; i < as->rank - 1; i++)
				rows *= as->dim[i];
			Shape s2 = {2, {rows, as->dim[as->rank - 1]}};
			Value *root = a;
			while (live_node(root->def) && is_view(root->def->op))
				root = root->def->in[0];
			if (shape_eq(&root->type.shape, &s2)) {
				a2 = root; /* a is a view of the 2-D operand itself */
			} else {
				char *base = xasprintf("%s.2d", a->name);
				Node *r = insert_reshape(c, at++, a, &s2, base, loc);
				free(base);
				if (!r)
					return false;
				a2 = r->out[0];
			}
		}
		Value *in[3] = {a2, w, bias};
		char *base = xasprintf("%s.gemm", y->name), *nd = xasprintf("%s.nd", y->name);
		Node *gm = graph_insert_node(c->g, at++, OP_GEMM, in, 3, 1, base, loc);
		free(base);
		/* the gemm (the kernel) has the add's name, unless the add's
		 * result is an output: then the value replacing it takes it */
		graph_take_name(c->g, gm->out[0], y); /* (n goes) */
		Node *r = NULL;
		if (retype(c, gm) && as->rank > 2)
			r = insert_reshape(c, at++, gm->out[0], &y->type.shape, nd, loc);
		free(nd);
		if (c->failed)
			return false;
		Value *res = r ? r->out[0] : gm->out[0];
		if (!forward(c, n, y, res)) { /* (a new value can always take an output's place) */
			diag_error(c->d, loc, "internal: canonicalize could not replace '%s'", y->name);
			c->failed = true;
			return false;
		}
		return true;
	}
	return false;
}

/* x * 1, x / 1, x + -0, x - +0 (and integer zeros) */
static bool rw_arith_identity(Canon *c, Node *n)
{
	Value *y = n->out[0];
	bool fl = y->type.dtype == DT_F32;
	for (int side = 0; side < 2; side++) {
		Value *x = n->in[side], *k = n->in[1 - side];
		if (!is_const(k) || !same_type(x, y))
			continue;
		bool hit = false;
		switch (n->op) {
		case OP_MUL: hit = const_all(k, 1.0); break;
		case OP_DIV: hit = side == 0 && const_all(k, 1.0); break;
		case OP_ADD: hit = const_all(k, fl ? -0.0 : 0.0); break;
		case OP_SUB: hit = side == 0 && const_all(k, 0.0); break;
		default: break;
		}
		if (hit && forward(c, n, y, x))
			return true;
	}
	return false;
}

/* relu(relu x), abs(abs x) -> the inner one; neg(neg x) -> x */
static bool rw_idempotent(Canon *c, Node *n)
{
	Value *u = n->in[0];
	const Node *inner = def_op(u, n->op);
	if (!inner)
		return false;
	return forward(c, n, n->out[0], n->op == OP_NEG ? inner->in[0] : u);
}

/* Operand of binary n other than the one defined by op (its sole use);
 * *inner gets that definition.  NULL when neither is. */
static Value *other_than(const Node *n, OpKind op, const Node **inner)
{
	for (int side = 0; side < 2; side++) {
		const Node *m = def_op(n->in[side], op);
		if (m && value_sole_user(n->in[side]) == n) {
			*inner = m;
			return n->in[1 - side];
		}
	}
	return NULL;
}

/* The erf form of GELU as exporters write it (PyTorch's nn.GELU at
 * opsets below 20): x * (erf(x / sqrt(2)) + 1) * 0.5, the 0.5 applied
 * first or last, x / sqrt(2) also as x * (1 / sqrt(2)) -> gelu(x).  -O2:
 * the gelu kernel rounds differently from the five ops (within its
 * documented error bound).  n is the last mul. */
static bool rw_gelu(Canon *c, Node *n, int pos)
{
	Value *y = n->out[0];
	if (y->type.dtype != DT_F32)
		return false;
	const Node *m1 = NULL, *a = NULL, *e = NULL, *dv = NULL;
	Value *x = NULL, *k;
	/* mul(mul(x, add(...)), 0.5) or mul(mul(x, 0.5), add(...)) */
	if ((k = other_than(n, OP_MUL, &m1)) && is_const(k) && const_all(k, 0.5)) {
		Value *t = other_than(m1, OP_ADD, &a);
		x = t;
	} else if ((k = other_than(n, OP_ADD, &a)) && (m1 = def_op(k, OP_MUL)) && value_sole_user(k) == n) {
		for (int side = 0; side < 2 && !x; side++)
			if (is_const(m1->in[1 - side]) && const_all(m1->in[1 - side], 0.5))
				x = m1->in[side];
	}
	if (!x || !a || !same_type(x, y))
		return false;
	/* a = add(erf(...), 1) */
	Value *one = other_than(a, OP_ERF, &e);
	if (!one || !is_const(one) || !const_all(one, 1.0))
		return false;
	Value *u = e->in[0];
	if (value_sole_user(u) != e)
		return false;
	if ((dv = def_op(u, OP_DIV))) {
		if (dv->in[0] != x || !is_const(dv->in[1]) || !const_near(dv->in[1], sqrt(2.0), 1e-6))
			return false;
	} else if ((dv = def_op(u, OP_MUL))) {
		int side = dv->in[0] == x ? 0 : dv->in[1] == x ? 1 : -1;
		if (side < 0 || !is_const(dv->in[1 - side]) || !const_near(dv->in[1 - side], sqrt(0.5), 1e-6))
			return false;
	} else {
		return false;
	}
	char *base = xasprintf("%s.gelu", y->name);
	Node *gl = graph_insert_node(c->g, pos, OP_GELU, &x, 1, 1, base, n->loc);
	free(base);
	graph_take_name(c->g, gl->out[0], y);
	if (!retype(c, gl))
		return false;
	if (!forward(c, n, y, gl->out[0])) {
		diag_error(c->d, n->loc, "internal: canonicalize could not replace '%s'", y->name);
		c->failed = true;
		return false;
	}
	return true;
}

static bool rewrite_node(Canon *c, Node *n, int pos)
{
	if (passes_through(n) && forward(c, n, n->out[0], n->in[0]))
		return true;
	switch (n->op) {
	case OP_RESHAPE:
	case OP_FLATTEN:
	case OP_SQUEEZE:
	case OP_UNSQUEEZE:
		return rw_view_chain(c, n, pos);
	case OP_TRANSPOSE:
		return rw_transposes(c, n);
	case OP_MATMUL:
	case OP_GEMM:
		return rw_matmul_b(c, n, pos);
	case OP_ADD:
		return (c->opt_level >= 2 && rw_matmul_bias(c, n, pos)) || (!c->failed && rw_arith_identity(c, n));
	case OP_MUL:
		return (c->opt_level >= 2 && rw_gelu(c, n, pos)) || (!c->failed && rw_arith_identity(c, n));
	case OP_DIV:
	case OP_SUB:
		return rw_arith_identity(c, n);
	case OP_RELU:
	case OP_ABS:
	case OP_NEG:
		return rw_idempotent(c, n);
	default:
		return false;
	}
}

bool pass_canonicalize(Graph *g, PassContext *cx, Diag *d)
{
	Canon c = {.g = g, .d = d, .opt_level = cx ? cx->opt_level : 1};
	/* every rewrite removes a node or an operation; this bound only
	 * guards against a rewrite that would undo another */
	long budget = 16L * g->nnodes + 1024;
	bool changed = true;
	while (changed && !c.failed && budget > 0) {
		changed = false;
		for (int i = 0; i < g->nnodes && !c.failed && budget > 0; i++) {
			Node *n = g->nodes[i];
			if (node_removed(n) || n->op == OP_CONSTANT)
				continue;
			if (!rewrite_node(&c, n, i))
				continue;
			c.changes++;
			budget--;
			changed = true;
			/* look at position i again: the node as rewritten, or the
			 * nodes inserted in its place */
			i--;
		}
	}
	free(c.stack);
	free(c.tcache);
	free(c.fcache);
	graph_compact(g);
	if (cx)
		cx->changes += c.changes;
	return !c.failed;
}
