/* Vectorization of a Loop IR loop (lir.h): the body is written once, for
 * one element; the loop becomes a vector loop and a remainder (a scalar
 * loop or one masked vector) on fixed vectors, or strips of a scalable
 * vector, each strip as long as setvl says. */
#include <stdlib.h>
#include <string.h>

#include "lir.h"
#include "util.h"

typedef struct {
	const LirKernel *k;
	int var;
	bool ok;
	bool *assigned;   /* temporaries assigned in the loop so far */
	bool *inside;     /* temporaries assigned anywhere in the loop */
} Check;

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
	case LX_TEMP:
		/* read before it is assigned in the loop: carried from one
		 * iteration to the next (a reduction), not vectorized here */
		c->ok &= !c->inside[e->temp] || c->assigned[e->temp];
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
		if (s->kind == LS_STORE && s->ptr >= 0 && inside[s->ptr])
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

bool lir_vectorize(LirKernel *k, int var, LirTail tail)
{
	LirBlock *parent;
	int at;
	LirStmt *L = lir_loop_of(k, var, &parent, &at);
	if (!L || k->vars[var].kind != LIR_LOOP_SCALAR || k->vars[var].step != 1 || k->outer_vector >= 0 ||
	    under_vector(k, &k->body, var, false))
		return false;
	Check c = {k, var, true, xcalloc((size_t)k->ntemps + 1, sizeof(bool)), xcalloc((size_t)k->ntemps + 1, sizeof(bool))};
	mark_assigned(&L->body, c.inside);
	for (int i = 0; i < L->body.n && c.ok; i++) {
		const LirStmt *s = L->body.s[i];
		switch (s->kind) {
		case LS_LOOP:
			c.ok = false; /* the innermost loop only */
			break;
		case LS_ASSIGN:
			check_expr(&c, s->e);
			c.assigned[s->temp] = true;
			break;
		case LS_STORE:
			check_expr(&c, s->e);
			c.ok &= lir_coef(&s->a, var) == 1 && k->bufs[s->buf].esize == 4 && s->ptr < 0;
			break;
		}
	}
	c.ok = c.ok && !read_outside(&k->body, L, c.inside);
	free(c.assigned);
	free(c.inside);
	if (!c.ok)
		return false;
	LirVar *x = &k->vars[var];
	if (k->scalable) {
		x->kind = LIR_LOOP_STRIP;
		return true;
	}
	int64_t lo = x->lo, hi = x->hi, lanes = k->lanes;
	if (hi <= lo) {
		x->kind = LIR_LOOP_VECTOR;
		x->step = lanes;
		x->hi = lo;
		return true;
	}
	int64_t vend = lo + (hi - lo) / lanes * lanes;
	if (vend < hi) {
		/* the remainder: a copy of the body over a variable of its own,
		 * with its own temporaries */
		int r = lir_new_var(k, vend, hi, 1, tail == LIR_TAIL_MASKED ? LIR_LOOP_MASKED : LIR_LOOP_SCALAR, NULL);
		int *tmap = xmalloc(((size_t)k->ntemps + 1) * sizeof *tmap);
		for (int i = 0; i < k->ntemps; i++)
			tmap[i] = -1;
		LirStmt *R = lir_stmt_new(k, LS_LOOP);
		R->var = r;
		R->note = tail == LIR_TAIL_MASKED ? "remainder (masked)" : "remainder";
		for (int i = 0; i < L->body.n; i++)
			lir_block_add(k, &R->body, lir_stmt_copy(k, L->body.s[i], var, r, 0, tmap));
		free(tmap);
		lir_block_insert(k, parent, at + 1, R);
	}
	x = &k->vars[var];
	if (vend > lo) {
		x->kind = LIR_LOOP_VECTOR;
		x->step = lanes;
		x->hi = vend;
	} else {
		/* no whole vector: only the remainder */
		memmove(parent->s + at, parent->s + at + 1, (size_t)(parent->n - at - 1) * sizeof *parent->s);
		parent->n--;
	}
	return true;
}
