/* Vectorization of a Loop IR loop (lir.h): the body is written once, for
 * one element; the loop becomes a vector loop and a remainder (a scalar
 * loop or one masked vector) on fixed vectors, or strips of a scalable
 * vector, each strip as long as setvl says.  The loop may hold loops of its
 * own (they stay scalar, their statements working on the lanes: a conv's
 * window loops inside its vectorized output row), and reductions: an
 * accumulator T carried from one iteration to the next as T = op(T, e),
 * op add.v or max.v, or as a sum of products T = fma.v(a, b, T).  On fixed vectors the lanes accumulate in a vector
 * V (V = op(V, e)), reduced into T after the loop, where the scalar
 * remainder goes on; on scalable vectors each strip reduces into T. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lir.h"
#include "util.h"

typedef struct {
	const LirKernel *k;
	int var;
	bool ok;
	bool *assigned;   /* temporaries assigned in the loop so far (program order) */
	bool *inside;     /* temporaries assigned anywhere in the loop */
	bool *reduction;  /* the loop's reduction accumulators */
} Check;

static bool refers(const LirExpr *e, int temp)
{
	if (!e)
		return false;
	if ((e->kind == LX_TEMP && e->temp == temp) || e->ptr == temp)
		return true;
	for (int i = 0; i < 3; i++)
		if (refers(e->k[i], temp))
			return true;
	return false;
}

/* T = op(T, e) or op(e, T), op add.v / max.v, e free of T: the operand e;
 * T = fma.v(a, b, T), a and b free of T (a sum of products): fma.v, *b */
static const LirExpr *reduction_operand(const LirStmt *s, const LirExpr **b2)
{
	*b2 = NULL;
	if (s->kind != LS_ASSIGN || s->e->kind != LX_OP)
		return NULL;
	const LirExpr *a = s->e->k[0], *b = s->e->k[1];
	if (s->e->op == SEL_FMA_V) {
		const LirExpr *c = s->e->k[2];
		if (c->kind != LX_TEMP || c->temp != s->temp || refers(a, s->temp) || refers(b, s->temp))
			return NULL;
		*b2 = b;
		return a;
	}
	if (s->e->op != SEL_ADD_V && s->e->op != SEL_MAX_V)
		return NULL;
	if (a->kind == LX_TEMP && a->temp == s->temp && !refers(b, s->temp))
		return b;
	if (b->kind == LX_TEMP && b->temp == s->temp && !refers(a, s->temp))
		return a;
	return NULL;
}

/* how the accumulator's lanes are folded together: add.v (add, fma) or max.v */
static SelOp fold_op(const LirStmt *s)
{
	return s->e->op == SEL_MAX_V ? SEL_MAX_V : SEL_ADD_V;
}

static void check_expr(Check *c, const LirExpr *e)
{
	if (!e || !c->ok)
		return;
	for (int i = 0; i < 3; i++)
		check_expr(c, e->k[i]);
	switch (e->kind) {
	case LX_LOAD: {
		int64_t coef = lir_coef(&e->a, c->var);
		int es = c->k->bufs[e->buf].esize;
		if ((coef != 0 && coef != 1) || (coef && (es != 4 || e->as != LIR_AS_ELEM)) || e->ptr >= 0)
			c->ok = false;
		break;
	}
	case LX_ADDR:
		c->ok &= lir_coef(&e->a, c->var) == 0;
		break;
	case LX_INDEX:
		c->ok &= e->var != c->var;
		break;
	case LX_PTRADD:
		c->ok = false; /* (strength reduction comes after vectorizing) */
		break;
	case LX_TEMP:
		/* read before it is assigned in the loop: carried from one
		 * iteration to the next; only as a reduction */
		c->ok &= !c->inside[e->temp] || c->assigned[e->temp] || c->reduction[e->temp];
		break;
	default:
		break;
	}
}

static void mark_assigned(const LirBlock *b, bool *inside)
{
	for (int i = 0; i < b->n; i++) {
		if (b->s[i]->kind == LS_ASSIGN)
			inside[b->s[i]->temp] = true;
		if (b->s[i]->kind == LS_LOOP)
			mark_assigned(&b->s[i]->body, inside);
	}
}

static void check_block(Check *c, const LirBlock *b, bool top)
{
	for (int i = 0; i < b->n && c->ok; i++) {
		const LirStmt *s = b->s[i];
		switch (s->kind) {
		case LS_LOOP:
			c->ok &= c->k->vars[s->var].kind == LIR_LOOP_SCALAR;
			check_block(c, &s->body, false);
			break;
		case LS_ASSIGN:
			if (c->reduction[s->temp]) {
				/* the accumulator: only its own statement, at the top */
				const LirExpr *b2, *a2 = reduction_operand(s, &b2);
				c->ok &= top && a2 != NULL;
				check_expr(c, a2);
				check_expr(c, b2);
				break;
			}
			check_expr(c, s->e);
			c->assigned[s->temp] = true;
			break;
		case LS_STORE:
			check_expr(c, s->e);
			c->ok &= lir_coef(&s->a, c->var) == 1 && c->k->bufs[s->buf].esize == 4 && s->ptr < 0;
			break;
		case LS_INDEX:
			c->ok = false; /* an index per lane: a gather */
			break;
		case LS_PREFETCH:
			/* one line for every lane */
			c->ok &= lir_coef(&s->a, c->var) == 0 && s->ptr < 0;
			break;
		}
	}
}

/* Does anything outside `skip` read one of the temporaries in `inside`? */
static bool read_outside(const LirBlock *b, const LirStmt *skip, const bool *inside);

static bool expr_reads(const LirExpr *e, const bool *inside)
{
	if (!e)
		return false;
	if (e->kind == LX_TEMP && inside[e->temp])
		return true;
	if (e->ptr >= 0 && inside[e->ptr])
		return true;
	for (int i = 0; i < 3; i++)
		if (expr_reads(e->k[i], inside))
			return true;
	return false;
}

static bool read_outside(const LirBlock *b, const LirStmt *skip, const bool *inside)
{
	for (int i = 0; i < b->n; i++) {
		const LirStmt *s = b->s[i];
		if (s == skip)
			continue;
		if (s->kind == LS_LOOP ? read_outside(&s->body, skip, inside) : expr_reads(s->e, inside))
			return true;
		if ((s->kind == LS_STORE || s->kind == LS_PREFETCH) && s->ptr >= 0 && inside[s->ptr])
			return true;
	}
	return false;
}

/* Is var's loop inside a vector loop? */
static bool under_vector(const LirKernel *k, const LirBlock *b, int var, bool vec)
{
	for (int i = 0; i < b->n; i++) {
		const LirStmt *s = b->s[i];
		if (s->kind != LS_LOOP)
			continue;
		if (s->var == var)
			return vec;
		if (under_vector(k, &s->body, var, vec || k->vars[s->var].kind != LIR_LOOP_SCALAR))
			return true;
	}
	return false;
}

/* The loop's reductions: top-level T = op(T, e) whose T is read in the
 * loop before it is assigned there, assigned nowhere else in it. */
static void find_reductions(const LirKernel *k, const LirStmt *L, bool *red)
{
	int *count = xcalloc((size_t)k->ntemps + 1, sizeof *count);
	bool *nested = xcalloc((size_t)k->ntemps + 1, sizeof *nested);
	for (int i = 0; i < L->body.n; i++) {
		const LirStmt *s = L->body.s[i];
		if (s->kind == LS_ASSIGN)
			count[s->temp]++;
		else if (s->kind == LS_LOOP)
			mark_assigned(&s->body, nested);
	}
	for (int i = 0; i < L->body.n; i++) {
		const LirStmt *s = L->body.s[i];
		const LirExpr *b2;
		if (s->kind == LS_ASSIGN && count[s->temp] == 1 && !nested[s->temp] && reduction_operand(s, &b2))
			red[s->temp] = true;
	}
	/* read elsewhere in the loop: not a plain accumulator */
	for (int i = 0; i < L->body.n; i++) {
		const LirStmt *s = L->body.s[i];
		for (int t = 0; t < k->ntemps; t++) {
			if (!red[t])
				continue;
			bool own = s->kind == LS_ASSIGN && s->temp == t;
			if (!own && s->kind != LS_LOOP && refers(s->e, t))
				red[t] = false;
			if (s->kind == LS_LOOP) {
				bool *only = xcalloc((size_t)k->ntemps + 1, sizeof *only);
				only[t] = true;
				if (read_outside(&s->body, NULL, only))
					red[t] = false;
				free(only);
			}
		}
	}
	free(count);
	free(nested);
}

/* The reductions of a strip or of a masked vector: each folds its
 * (active) lanes into the scalar accumulator at once, T = op(T, reduce(e));
 * red: per temporary below nred, is it an accumulator (the copy's own
 * temporaries come after). */
static void reduce_lanes(LirKernel *k, LirBlock *body, const bool *red, int nred)
{
	for (int i = 0; i < body->n; i++) {
		LirStmt *s = body->s[i];
		if (s->kind != LS_ASSIGN || s->temp >= nred || !red[s->temp])
			continue;
		const LirExpr *b2, *e = reduction_operand(s, &b2);
		SelOp op = fold_op(s), rop = op == SEL_ADD_V ? SEL_REDSUM_V : SEL_REDMAX_V;
		LirExpr *prod = b2 ? lir_op(k, SEL_MUL_V, (LirExpr *)e, (LirExpr *)b2, NULL) : (LirExpr *)e;
		s->e = lir_op(k, op, lir_ref(k, s->temp), lir_op(k, rop, prod, NULL, NULL), NULL);
	}
}

bool lir_vectorize(LirKernel *k, int var, LirTail tail)
{
	LirBlock *parent;
	int at;
	LirStmt *L = lir_loop_of(k, var, &parent, &at);
	if (!L || k->vars[var].kind != LIR_LOOP_SCALAR || k->vars[var].step != 1 || k->outer_vector >= 0 ||
	    under_vector(k, &k->body, var, false))
		return false;
	size_t nt = (size_t)k->ntemps + 1;
	Check c = {k, var, true, xcalloc(nt, sizeof(bool)), xcalloc(nt, sizeof(bool)), xcalloc(nt, sizeof(bool))};
	mark_assigned(&L->body, c.inside);
	find_reductions(k, L, c.reduction);
	check_block(&c, &L->body, true);
	/* what the loop assigns is its own, but for the accumulators */
	bool *own = xcalloc(nt, sizeof(bool));
	for (int t = 0; t < k->ntemps; t++) {
		own[t] = c.inside[t] && !c.reduction[t];
	}
	c.ok = c.ok && !read_outside(&k->body, L, own);
	free(own);
	free(c.assigned);
	free(c.inside);
	bool *red = c.reduction;
	if (!c.ok) {
		free(red);
		return false;
	}
	LirVar *x = &k->vars[var];
	if (k->scalable && x->hi - x->lo == 1) {
		/* one element: not worth a strip (nor a vector context in which
		 * an index that cannot move, along an axis of one, is refused) */
		free(red);
		return false;
	}
	if (k->scalable) {
		reduce_lanes(k, &L->body, red, (int)nt);
		x->kind = LIR_LOOP_STRIP;
		free(red);
		return true;
	}
	int64_t lo = x->lo, hi = x->hi, lanes = k->lanes;
	if (hi <= lo) {
		x->kind = LIR_LOOP_VECTOR;
		x->step = lanes;
		x->hi = lo;
		free(red);
		return true;
	}
	int64_t vend = lo + (hi - lo) / lanes * lanes;
	if (vend == lo) {
		/* no whole vector: the loop is its own remainder */
		if (tail == LIR_TAIL_MASKED) {
			reduce_lanes(k, &L->body, red, (int)nt);
			x->kind = LIR_LOOP_MASKED;
		}
		free(red);
		return true;
	}
	LirStmt *R = NULL;
	if (vend < hi) {
		/* the remainder: a copy of the body over a variable of its own,
		 * with its own temporaries; the accumulators go on */
		int r = lir_new_var(k, vend, hi, 1, tail == LIR_TAIL_MASKED ? LIR_LOOP_MASKED : LIR_LOOP_SCALAR, NULL);
		int *tmap = xmalloc(nt * sizeof *tmap);
		for (int i = 0; i < k->ntemps; i++)
			tmap[i] = red[i] ? -2 : -1;
		R = lir_stmt_new(k, LS_LOOP);
		R->var = r;
		R->note = tail == LIR_TAIL_MASKED ? "remainder (masked)" : "remainder";
		for (int i = 0; i < L->body.n; i++)
			lir_block_add(k, &R->body, lir_stmt_copy(k, L->body.s[i], var, r, 0, tmap));
		free(tmap);
		if (tail == LIR_TAIL_MASKED)
			reduce_lanes(k, &R->body, red, (int)nt);
	}
	/* the accumulators in vectors: V = identity before, V = op(V, e) in,
	 * T = op(T, reduce(V)) after the vector loop */
	int after = at + 1;
	for (int i = 0; i < L->body.n; i++) {
		LirStmt *s = L->body.s[i];
		if (s->kind != LS_ASSIGN || !red[s->temp])
			continue;
		SelOp op = fold_op(s);
		const LirExpr *b2, *e = reduction_operand(s, &b2);
		int v = lir_wide_temp(k);
		LirStmt *init = lir_stmt_new(k, LS_ASSIGN);
		init->temp = v;
		init->e = lir_constf(k, op == SEL_ADD_V ? 0.0 : -INFINITY);
		lir_block_insert(k, parent, at++, init);
		after++;
		LirStmt *fold = lir_stmt_new(k, LS_ASSIGN);
		fold->temp = s->temp;
		fold->e = lir_op(k, op, lir_ref(k, s->temp),
				 lir_op(k, op == SEL_ADD_V ? SEL_REDSUM_V : SEL_REDMAX_V, lir_ref(k, v), NULL, NULL), NULL);
		lir_block_insert(k, parent, after++, fold);
		s->temp = v;
		s->e = b2 ? lir_op(k, SEL_FMA_V, (LirExpr *)e, (LirExpr *)b2, lir_ref(k, v))
			  : lir_op(k, op, lir_ref(k, v), (LirExpr *)e, NULL);
	}
	if (R)
		lir_block_insert(k, parent, after, R);
	x = &k->vars[var];
	x->kind = LIR_LOOP_VECTOR;
	x->step = lanes;
	x->hi = vend;
	free(red);
	return true;
}
