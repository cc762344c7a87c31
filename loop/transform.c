/* Loop IR transforms (lir.h): tile, interchange, unroll, unroll-and-jam,
 * hoisting of invariant address arithmetic.
 *
 * Each checks that it applies before it changes anything, so that false
 * (or 0) leaves the kernel as it was.  Unroll and tile keep the order of
 * every statement instance; interchange and unroll-and-jam reorder them
 * and so also check (conservatively) that no dependence is reversed: no
 * temporary carried from one iteration to the next, and every buffer
 * stored in the nest accessed at one index that tells the iterations that
 * could be reordered apart. */
#include <stdlib.h>
#include <string.h>

#include "lir.h"
#include "util.h"

/* ---- helpers ------------------------------------------------------------ */
static int64_t trips(const LirVar *x)
{
	return x->hi > x->lo ? (x->hi - x->lo + x->step - 1) / x->step : 0;
}

/* a without its zero terms */
static LirAffine affine_clean(const LirAffine *a)
{
	LirAffine r = *a;
	r.n = 0;
	for (int i = 0; i < a->n; i++)
		if (a->t[i].coef)
			r.t[r.n++] = a->t[i];
	return r;
}

static bool affine_eq(const LirAffine *a, const LirAffine *b)
{
	if (a->off != b->off)
		return false;
	for (int i = 0; i < a->n; i++)
		if (lir_coef(b, a->t[i].var) != lir_coef(a, a->t[i].var))
			return false;
	for (int i = 0; i < b->n; i++)
		if (lir_coef(b, b->t[i].var) != lir_coef(a, b->t[i].var))
			return false;
	return true;
}

/* ---- substitution in place: variable `var` reads as affine `to` -------- */
typedef struct {
	int var;
	LirAffine to;
} VSub;

static LirAffine aff_sub(LirKernel *k, const LirAffine *a, const VSub *s)
{
	LirAffine r = lir_affine(a->off);
	for (int i = 0; i < a->n; i++) {
		int64_t c = a->t[i].coef;
		if (a->t[i].var != s->var) {
			lir_term(k, &r, a->t[i].var, c);
			continue;
		}
		r.off += c * s->to.off;
		for (int j = 0; j < s->to.n; j++)
			lir_term(k, &r, s->to.t[j].var, c * s->to.t[j].coef);
	}
	return affine_clean(&r);
}

/* the value of an affine, as integer arithmetic */
static LirExpr *affine_value(LirKernel *k, const LirAffine *a)
{
	LirExpr *r = NULL;
	for (int i = 0; i < a->n; i++) {
		if (!a->t[i].coef)
			continue;
		LirExpr *t = lir_index(k, a->t[i].var);
		if (a->t[i].coef != 1)
			t = lir_op(k, SEL_MUL_I, t, lir_consti(k, a->t[i].coef), NULL);
		r = r ? lir_op(k, SEL_ADD_I, r, t, NULL) : t;
	}
	if (!r)
		return lir_consti(k, a->off);
	if (a->off)
		r = lir_op(k, SEL_ADD_I, r, lir_consti(k, a->off), NULL);
	return r;
}

/* e is a fresh (unshared) tree */
static void expr_rewrite(LirKernel *k, LirExpr *e, const VSub *s)
{
	if (!e)
		return;
	if (e->kind == LX_INDEX && e->var == s->var) {
		*e = *affine_value(k, &s->to);
		return;
	}
	for (int i = 0; i < 3; i++)
		expr_rewrite(k, e->k[i], s);
	if (e->kind == LX_LOAD || e->kind == LX_ADDR) {
		e->a = aff_sub(k, &e->a, s);
		e->pa = aff_sub(k, &e->pa, s);
	}
}

static LirExpr *expr_sub(LirKernel *k, const LirExpr *e, const VSub *s)
{
	LirExpr *c = lir_expr_copy(k, e, -1, -1, 0, NULL);
	expr_rewrite(k, c, s);
	return c;
}

/* The statements of b (kept, with their loops and variables) with var
 * reading as s->to. */
static void block_sub(LirKernel *k, LirBlock *b, const VSub *s)
{
	for (int i = 0; i < b->n; i++) {
		LirStmt *st = b->s[i];
		switch (st->kind) {
		case LS_LOOP:
			block_sub(k, &st->body, s);
			break;
		case LS_STORE:
		case LS_PREFETCH:
			st->a = aff_sub(k, &st->a, s);
			st->pa = aff_sub(k, &st->pa, s);
			if (st->kind == LS_PREFETCH)
				break;
			/* fall through */
		case LS_ASSIGN:
		case LS_INDEX:
			st->e = expr_sub(k, st->e, s);
			break;
		}
	}
}

static VSub shift_sub(int var, int64_t shift)
{
	VSub s = {var, lir_affine(shift)};
	s.to.n = 1;
	s.to.t[0] = (LirTerm){var, 1};
	return s;
}

/* ---- temporaries: what an iteration of a body does with each ----------- */
enum { T_NONE, T_READ_FIRST, T_ASSIGNED_FIRST };

typedef struct {
	signed char *first;  /* per temporary (of the n then): T_* */
	bool *assigned;
	int n;
} TUse;

static void tuse_mark_read(TUse *u, int t)
{
	if (t >= 0 && u->first[t] == T_NONE)
		u->first[t] = T_READ_FIRST;
}

static void tuse_expr(TUse *u, const LirExpr *e)
{
	if (!e)
		return;
	for (int i = 0; i < 3; i++)
		tuse_expr(u, e->k[i]);
	if (e->kind == LX_TEMP)
		tuse_mark_read(u, e->temp);
	if (e->kind == LX_LOAD)
		tuse_mark_read(u, e->ptr);
}

static void tuse_block(const LirKernel *k, TUse *u, const LirBlock *b)
{
	for (int i = 0; i < b->n; i++) {
		const LirStmt *s = b->s[i];
		switch (s->kind) {
		case LS_LOOP:
			if (k->vars[s->var].hi > k->vars[s->var].lo) /* an empty loop does nothing */
				tuse_block(k, u, &s->body);
			break;
		case LS_ASSIGN:
			tuse_expr(u, s->e);
			if (u->first[s->temp] == T_NONE)
				u->first[s->temp] = T_ASSIGNED_FIRST;
			u->assigned[s->temp] = true;
			break;
		case LS_STORE:
		case LS_PREFETCH:
			tuse_mark_read(u, s->ptr);
			tuse_expr(u, s->e);
			break;
		case LS_INDEX:
			tuse_expr(u, s->e);
			break;
		}
	}
}

static TUse tuse_of(const LirKernel *k, const LirBlock *b)
{
	TUse u = {xcalloc((size_t)k->ntemps + 1, 1), xcalloc((size_t)k->ntemps + 1, sizeof(bool)), k->ntemps};
	tuse_block(k, &u, b);
	return u;
}

static void tuse_free(TUse *u)
{
	free(u->first);
	free(u->assigned);
}

/* a temporary assigned in the body and read there before (a value carried
 * from one iteration to the next) */
static bool tuse_carried(const TUse *u)
{
	for (int t = 0; t < u->n; t++)
		if (u->first[t] == T_READ_FIRST && u->assigned[t])
			return true;
	return false;
}

/* the map for one copy of the body: an iteration's own values fresh */
static void tmap_init(const TUse *u, int *tmap, int n)
{
	for (int t = 0; t < n; t++)
		tmap[t] = u->first[t] == T_ASSIGNED_FIRST ? -1 : -2;
}

/* temporaries read anywhere in b but inside skip */
static void reads_outside(const LirBlock *b, const LirStmt *skip, bool *read);

static void reads_expr(const LirExpr *e, bool *read)
{
	if (!e)
		return;
	for (int i = 0; i < 3; i++)
		reads_expr(e->k[i], read);
	if (e->kind == LX_TEMP)
		read[e->temp] = true;
	if (e->kind == LX_LOAD && e->ptr >= 0)
		read[e->ptr] = true;
}

static void reads_outside(const LirBlock *b, const LirStmt *skip, bool *read)
{
	for (int i = 0; i < b->n; i++) {
		const LirStmt *s = b->s[i];
		if (s == skip)
			continue;
		if (s->kind == LS_LOOP)
			reads_outside(&s->body, skip, read);
		else
			reads_expr(s->e, read);
		if ((s->kind == LS_STORE || s->kind == LS_PREFETCH) && s->ptr >= 0)
			read[s->ptr] = true;
	}
}

/* A copy of loop s from `from` on, after s: its own values in temporaries
 * of its own, but those read after the loop (where the last iteration's
 * value must be found, whichever loop made it). */
static void add_remainder(LirKernel *k, LirStmt *s, const TUse *u, int64_t from, LirBlock *parent, int at)
{
	int n = u->n; /* the temporaries s has (copies made since add others) */
	bool *read = xcalloc((size_t)k->ntemps + 1, sizeof(bool));
	reads_outside(&k->body, s, read);
	int *tmap = xmalloc(((size_t)n + 1) * sizeof *tmap);
	for (int t = 0; t < n; t++)
		tmap[t] = u->first[t] == T_ASSIGNED_FIRST && !read[t] ? -1 : -2;
	LirStmt *r = lir_stmt_copy(k, s, -1, -1, 0, tmap);
	free(tmap);
	free(read);
	k->vars[r->var].lo = from;
	/* named after the loop it continues */
	free(k->vars[r->var].name);
	k->vars[r->var].name = xasprintf("%sr", k->vars[s->var].name);
	lir_block_insert(k, parent, at + 1, r);
}

/* ---- reordering: can the iterations be run in another order ------------ */
typedef struct {
	int buf;
	const LirAffine *a;
	bool store;
} Access;

typedef struct {
	Access *a;
	int n, cap;
	bool *inside;        /* per variable: a loop at or inside the nest */
} Accesses;

static void acc_add(Accesses *x, int buf, const LirAffine *a, bool store)
{
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 16;
		x->a = xrealloc(x->a, (size_t)x->cap * sizeof *x->a);
	}
	x->a[x->n++] = (Access){buf, a, store};
}

static void acc_expr(Accesses *x, const LirExpr *e)
{
	if (!e)
		return;
	for (int i = 0; i < 3; i++)
		acc_expr(x, e->k[i]);
	if (e->kind == LX_LOAD)
		acc_add(x, e->buf, &e->a, false);
}

static void acc_block(Accesses *x, const LirBlock *b)
{
	for (int i = 0; i < b->n; i++) {
		const LirStmt *s = b->s[i];
		switch (s->kind) {
		case LS_LOOP:
			x->inside[s->var] = true;
			acc_block(x, &s->body);
			break;
		case LS_ASSIGN:
			acc_expr(x, s->e);
			break;
		case LS_STORE:
			acc_add(x, s->buf, &s->a, true);
			acc_expr(x, s->e);
			break;
		case LS_PREFETCH:
			break; /* (reads nothing a statement sees, writes nothing) */
		case LS_INDEX:
			x->inside[s->var] = true;
			acc_expr(x, s->e);
			break;
		}
	}
}

typedef struct {
	int64_t step;   /* what one iteration adds to the index */
	int64_t count;  /* iterations */
} Radix;

static int radix_cmp(const void *a, const void *b)
{
	const Radix *x = a, *y = b;
	return x->step < y->step ? -1 : x->step > y->step;
}

/* Whether the terms of a over the nest's variables with a nonzero
 * coefficient tell their iterations apart (each step beyond the span of
 * the smaller ones). */
static bool injective(const LirKernel *k, const Accesses *x, const LirAffine *a)
{
	Radix r[LIR_MAX_TERMS];
	int n = 0;
	for (int i = 0; i < a->n; i++) {
		int v = a->t[i].var;
		int64_t c = a->t[i].coef < 0 ? -a->t[i].coef : a->t[i].coef;
		if (!c || !x->inside[v])
			continue;
		const LirVar *y = &k->vars[v];
		if (y->kind == LIR_LOOP_SCALAR)
			r[n++] = (Radix){c * y->step, trips(y)};
		else /* the lanes of a vector variable: every element */
			r[n++] = (Radix){c, y->hi > y->lo ? y->hi - y->lo : 0};
	}
	qsort(r, (size_t)n, sizeof *r, radix_cmp);
	int64_t span = 0;
	for (int i = 0; i < n; i++) {
		if (r[i].count <= 1)
			continue;
		if (r[i].step <= span)
			return false;
		span += r[i].step * (r[i].count - 1);
	}
	return true;
}

/* The nest at `outer` may run the iterations of v1 and v2 (v2 -1: of v1
 * alone, in blocks) in another order: every buffer stored in it is
 * accessed at one index, in which v1 (or v2, when given) moves and which
 * tells apart the iterations of the variables it moves with; and no
 * temporary is carried. */
static bool reorder_ok(const LirKernel *k, const LirStmt *outer, int v2)
{
	TUse u = tuse_of(k, &outer->body);
	bool carried = tuse_carried(&u);
	tuse_free(&u);
	if (carried)
		return false;
	Accesses x = {NULL, 0, 0, xcalloc((size_t)k->nvars + 1, sizeof(bool))};
	x.inside[outer->var] = true;
	acc_block(&x, &outer->body);
	bool ok = true;
	for (int i = 0; i < x.n && ok; i++) {
		if (!x.a[i].store)
			continue;
		const LirAffine *a = x.a[i].a;
		for (int j = 0; j < x.n && ok; j++)
			if (x.a[j].buf == x.a[i].buf && !affine_eq(x.a[j].a, a))
				ok = false;
		if (!ok)
			break;
		bool moves = lir_coef(a, outer->var) != 0 || (v2 >= 0 && lir_coef(a, v2) != 0);
		ok = moves && injective(k, &x, a);
	}
	free(x.a);
	free(x.inside);
	return ok;
}

/* ---- tile --------------------------------------------------------------- */
bool lir_tile(LirKernel *k, int var, int64_t size, int *inner)
{
	LirBlock *parent;
	int at;
	LirStmt *s = var >= 0 && var < k->nvars ? lir_loop_of(k, var, &parent, &at) : NULL;
	if (!s || size < 2)
		return false;
	LirVar x = k->vars[var];
	if (x.kind != LIR_LOOP_SCALAR || x.step != 1 || x.ext >= 0)
		return false;
	int64_t n = trips(&x), m = n / size;
	if (m < 1)
		return false;
	int64_t end = x.lo + m * size;
	if (end < x.hi) {
		TUse u = tuse_of(k, &s->body);
		add_remainder(k, s, &u, end, parent, at);
		tuse_free(&u);
	}
	int in = lir_new_var(k, 0, size, 1, LIR_LOOP_SCALAR, NULL);
	{
		char *name = xasprintf("%st", k->vars[var].name);
		free(k->vars[in].name);
		k->vars[in].name = name;
	}
	VSub sub = {var, lir_affine(0)};
	sub.to.n = 2;
	sub.to.t[0] = (LirTerm){var, 1};
	sub.to.t[1] = (LirTerm){in, 1};
	block_sub(k, &s->body, &sub);
	LirStmt *il = lir_stmt_new(k, LS_LOOP);
	il->var = in;
	il->body = s->body;
	s->body = (LirBlock){NULL, 0, 0};
	lir_block_add(k, &s->body, il);
	k->vars[var].hi = end;
	k->vars[var].step = size;
	if (inner)
		*inner = in;
	return true;
}

/* ---- interchange -------------------------------------------------------- */
bool lir_interchange(LirKernel *k, int var)
{
	LirStmt *s = var >= 0 && var < k->nvars ? lir_loop_of(k, var, NULL, NULL) : NULL;
	if (!s || s->body.n != 1 || s->body.s[0]->kind != LS_LOOP)
		return false;
	LirStmt *t = s->body.s[0];
	if (k->vars[s->var].kind != LIR_LOOP_SCALAR || k->vars[t->var].kind != LIR_LOOP_SCALAR)
		return false;
	if (!reorder_ok(k, s, t->var))
		return false;
	int v = s->var;
	s->var = t->var;
	t->var = v;
	const char *note = s->note;
	s->note = t->note;
	t->note = note;
	return true;
}

/* ---- unroll ------------------------------------------------------------- */
bool lir_unroll(LirKernel *k, int var, int factor)
{
	LirBlock *parent;
	int at;
	LirStmt *s = var >= 0 && var < k->nvars ? lir_loop_of(k, var, &parent, &at) : NULL;
	if (!s || factor < 2)
		return false;
	LirVar x = k->vars[var];
	if ((x.kind != LIR_LOOP_SCALAR && x.kind != LIR_LOOP_VECTOR) || x.ext >= 0)
		return false;
	int64_t n = trips(&x), m = n / factor;
	if (m < 1)
		return false;
	int64_t end = x.lo + m * factor * x.step;
	int ntemps = k->ntemps;
	TUse u = tuse_of(k, &s->body);
	/* copies 0 .. factor-2 fresh; the last one is the original statements,
	 * so that what the body leaves in its temporaries is the last
	 * iteration's */
	LirBlock body = {NULL, 0, 0};
	int *tmap = xmalloc(((size_t)ntemps + 1) * sizeof *tmap);
	for (int j = 0; j < factor - 1; j++) {
		tmap_init(&u, tmap, ntemps);
		for (int i = 0; i < s->body.n; i++)
			lir_block_add(k, &body, lir_stmt_copy(k, s->body.s[i], var, var, j * x.step, tmap));
	}
	free(tmap);
	if (end < x.hi)
		add_remainder(k, s, &u, end, parent, at);
	tuse_free(&u);
	VSub sub = shift_sub(var, (int64_t)(factor - 1) * x.step);
	block_sub(k, &s->body, &sub);
	for (int i = 0; i < s->body.n; i++)
		lir_block_add(k, &body, s->body.s[i]);
	s->body = body;
	k->vars[var].hi = end;
	k->vars[var].step = x.step * factor;
	return true;
}

/* ---- unroll and jam ----------------------------------------------------- */
bool lir_unroll_and_jam(LirKernel *k, int var, int factor)
{
	LirBlock *parent;
	int at;
	LirStmt *s = var >= 0 && var < k->nvars ? lir_loop_of(k, var, &parent, &at) : NULL;
	if (!s || factor < 2)
		return false;
	LirVar x = k->vars[var];
	if (x.kind != LIR_LOOP_SCALAR || x.step != 1 || x.ext >= 0)
		return false;
	int li = -1;
	for (int i = 0; i < s->body.n; i++)
		if (s->body.s[i]->kind == LS_LOOP) {
			if (li >= 0)
				return false;
			li = i;
		}
	if (li < 0)
		return false;
	int64_t n = trips(&x), m = n / factor;
	if (m < 1)
		return false;
	LirStmt *l = s->body.s[li];
	if (!reorder_ok(k, s, -1))
		return false;
	int64_t end = x.lo + m * factor;
	int ntemps = k->ntemps;
	TUse u = tuse_of(k, &s->body);
	LirBlock pre = {NULL, 0, 0}, lbody = {NULL, 0, 0}, post = {NULL, 0, 0};
	int *tmap = xmalloc(((size_t)ntemps + 1) * sizeof *tmap);
	for (int j = 0; j < factor - 1; j++) {
		tmap_init(&u, tmap, ntemps);
		for (int i = 0; i < li; i++)
			lir_block_add(k, &pre, lir_stmt_copy(k, s->body.s[i], var, var, j, tmap));
		for (int i = 0; i < l->body.n; i++)
			lir_block_add(k, &lbody, lir_stmt_copy(k, l->body.s[i], var, var, j, tmap));
		for (int i = li + 1; i < s->body.n; i++)
			lir_block_add(k, &post, lir_stmt_copy(k, s->body.s[i], var, var, j, tmap));
	}
	free(tmap);
	if (end < x.hi)
		add_remainder(k, s, &u, end, parent, at);
	tuse_free(&u);
	/* the last copy: the original statements */
	VSub sub = shift_sub(var, factor - 1);
	block_sub(k, &s->body, &sub);
	for (int i = 0; i < li; i++)
		lir_block_add(k, &pre, s->body.s[i]);
	for (int i = 0; i < l->body.n; i++)
		lir_block_add(k, &lbody, l->body.s[i]);
	for (int i = li + 1; i < s->body.n; i++)
		lir_block_add(k, &post, s->body.s[i]);
	l->body = lbody;
	LirBlock body = pre;
	lir_block_add(k, &body, l);
	for (int i = 0; i < post.n; i++)
		lir_block_add(k, &body, post.s[i]);
	s->body = body;
	k->vars[var].hi = end;
	k->vars[var].step = factor;
	return true;
}

/* ---- hoisting ----------------------------------------------------------- */
typedef struct {
	int buf;
	LirAffine inv;
	int temp;
} Ptr;

typedef struct {
	LirKernel *k;
	bool *inside;      /* the loop's variable and those of loops inside it */
	int vvar;          /* the vector variable around the loop, or -1 */
	Ptr *p;
	int np, cap;
} Hoist;

/* Splits a into its invariant part (inv) and the rest (the offset stays
 * with the rest, so that neighbouring accesses share a pointer); false
 * when the invariant part has no variable. */
static bool split(const Hoist *h, const LirAffine *a, LirAffine *inv, LirAffine *rest)
{
	*inv = lir_affine(0);
	*rest = lir_affine(a->off);
	for (int i = 0; i < a->n; i++) {
		int v = a->t[i].var;
		if (!a->t[i].coef)
			continue;
		bool variant = h->inside[v] || v == h->vvar || v == h->k->outer_vector;
		LirAffine *d = variant ? rest : inv;
		d->t[d->n++] = a->t[i];
	}
	return inv->n > 0;
}

static int pointer_for(Hoist *h, int buf, const LirAffine *inv)
{
	for (int i = 0; i < h->np; i++)
		if (h->p[i].buf == buf && affine_eq(&h->p[i].inv, inv))
			return h->p[i].temp;
	if (h->np == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 8;
		h->p = xrealloc(h->p, (size_t)h->cap * sizeof *h->p);
	}
	int t = lir_temp(h->k, SORT_I);
	h->p[h->np++] = (Ptr){buf, *inv, t};
	return t;
}

static void hoist_access(Hoist *h, int buf, const LirAffine *a, int *ptr, LirAffine *pa)
{
	LirAffine inv, rest;
	if (*ptr >= 0 || !split(h, a, &inv, &rest))
		return;
	*ptr = pointer_for(h, buf, &inv);
	*pa = rest;
}

static void hoist_expr(Hoist *h, LirExpr *e)
{
	if (!e)
		return;
	for (int i = 0; i < 3; i++)
		hoist_expr(h, e->k[i]);
	if (e->kind == LX_LOAD)
		hoist_access(h, e->buf, &e->a, &e->ptr, &e->pa);
}

static void hoist_body(Hoist *h, LirBlock *b)
{
	for (int i = 0; i < b->n; i++) {
		LirStmt *s = b->s[i];
		switch (s->kind) {
		case LS_LOOP:
			hoist_body(h, &s->body);
			break;
		case LS_STORE:
		case LS_PREFETCH:
			hoist_access(h, s->buf, &s->a, &s->ptr, &s->pa);
			/* fall through */
		case LS_ASSIGN:
		case LS_INDEX:
			hoist_expr(h, s->e);
			break;
		}
	}
}

static void mark_inside(bool *inside, const LirBlock *b)
{
	for (int i = 0; i < b->n; i++) {
		if (b->s[i]->kind == LS_INDEX)
			inside[b->s[i]->var] = true; /* (defined there: nothing of it hoists) */
		if (b->s[i]->kind == LS_LOOP) {
			inside[b->s[i]->var] = true;
			mark_inside(inside, &b->s[i]->body);
		}
	}
}

/* The pointers made for the loops of one block serve every later loop of
 * it (they depend only on the variables around the block). */
static int hoist_block(LirKernel *k, LirBlock *b, int vvar)
{
	int made = 0;
	Hoist h = {k, xcalloc((size_t)k->nvars + 1, sizeof(bool)), vvar, NULL, 0, 0};
	for (int i = 0; i < b->n; i++) {
		LirStmt *s = b->s[i];
		if (s->kind != LS_LOOP)
			continue;
		memset(h.inside, 0, ((size_t)k->nvars + 1) * sizeof(bool));
		h.inside[s->var] = true;
		mark_inside(h.inside, &s->body);
		int np = h.np;
		hoist_body(&h, &s->body);
		for (int j = np; j < h.np; j++) {
			LirStmt *as = lir_stmt_new(k, LS_ASSIGN);
			as->temp = h.p[j].temp;
			as->e = lir_addr(k, h.p[j].buf, &h.p[j].inv);
			lir_block_insert(k, b, i++, as);
		}
		made += h.np - np;
		made += hoist_block(k, &s->body, k->vars[s->var].kind != LIR_LOOP_SCALAR ? s->var : vvar);
	}
	free(h.p);
	free(h.inside);
	return made;
}

/* every statement's expression a tree of its own (a node shared by two
 * accesses would take one pointer for both) */
static void unshare(LirKernel *k, LirBlock *b)
{
	for (int i = 0; i < b->n; i++) {
		LirStmt *s = b->s[i];
		if (s->kind == LS_LOOP)
			unshare(k, &s->body);
		else
			s->e = lir_expr_copy(k, s->e, -1, -1, 0, NULL);
	}
}

int lir_hoist(LirKernel *k)
{
	unshare(k, &k->body);
	return hoist_block(k, &k->body, k->outer_vector);
}

/* ---- strength reduction ------------------------------------------------- */
typedef struct {
	int buf;
	LirAffine a;      /* the access's index less its offset */
	int64_t off;      /* the offset at the pointer's first iteration */
	int64_t coef;     /* along the loop's variable */
	int temp;
} SrPtr;

typedef struct {
	LirKernel *k;
	int var;
	const bool *outer;  /* variables of the loops around the loop */
	SrPtr *p;
	int np, cap;
} Sr;

static bool sr_terms_ok(const Sr *s, const LirAffine *a)
{
	for (int i = 0; i < a->n; i++)
		if (a->t[i].coef && a->t[i].var != s->var && !s->outer[a->t[i].var])
			return false; /* a variable made inside the loop */
	return true;
}

static bool same_terms(const LirAffine *x, const LirAffine *y)
{
	if (x->n != y->n)
		return false;
	for (int i = 0; i < x->n; i++)
		if (x->t[i].var != y->t[i].var || x->t[i].coef != y->t[i].coef)
			return false;
	return true;
}

static void sr_access(Sr *s, int buf, const LirAffine *a, int *ptr, LirAffine *pa)
{
	int64_t coef = lir_coef(a, s->var);
	if (*ptr >= 0 || coef == 0 || !sr_terms_ok(s, a))
		return;
	LirAffine terms = lir_affine(0);
	for (int i = 0; i < a->n; i++)
		if (a->t[i].coef)
			lir_term(s->k, &terms, a->t[i].var, a->t[i].coef);
	int j = 0;
	while (j < s->np && !(s->p[j].buf == buf && same_terms(&s->p[j].a, &terms)))
		j++;
	if (j == s->np) {
		if (s->np == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 8;
			s->p = xrealloc(s->p, (size_t)s->cap * sizeof *s->p);
		}
		s->p[s->np++] = (SrPtr){buf, terms, a->off, coef, lir_temp(s->k, SORT_I)};
	}
	*ptr = s->p[j].temp;
	*pa = lir_affine(a->off - s->p[j].off);
}

static void sr_expr(Sr *s, LirExpr *e)
{
	if (!e)
		return;
	for (int i = 0; i < 3; i++)
		sr_expr(s, e->k[i]);
	if (e->kind == LX_LOAD)
		sr_access(s, e->buf, &e->a, &e->ptr, &e->pa);
}

static bool mark_outer(const LirBlock *b, int var, bool *outer)
{
	for (int i = 0; i < b->n; i++) {
		const LirStmt *s = b->s[i];
		if (s->kind != LS_LOOP)
			continue;
		if (s->var == var)
			return true;
		outer[s->var] = true;
		if (mark_outer(&s->body, var, outer))
			return true;
		outer[s->var] = false;
	}
	return false;
}

int lir_strength_reduce(LirKernel *k, int var)
{
	LirBlock *parent;
	int at;
	LirStmt *L = lir_loop_of(k, var, &parent, &at);
	if (!L || k->vars[var].kind != LIR_LOOP_SCALAR || k->vars[var].hi <= k->vars[var].lo)
		return 0;
	bool *outer = xcalloc((size_t)k->nvars + 1, sizeof *outer);
	for (int v = 0; v < k->nvars; v++)
		outer[v] = k->vars[v].ext >= 0;
	mark_outer(&k->body, var, outer);
	Sr s = {k, var, outer, NULL, 0, 0};
	/* the accesses of the loop's own statements (not of loops inside) */
	for (int i = 0; i < L->body.n; i++) {
		LirStmt *st = L->body.s[i];
		if (st->kind == LS_LOOP)
			continue;
		sr_expr(&s, st->e);
		if (st->kind == LS_STORE || st->kind == LS_PREFETCH)
			sr_access(&s, st->buf, &st->a, &st->ptr, &st->pa);
	}
	const LirVar *x = &k->vars[var];
	for (int j = 0; j < s.np; j++) {
		/* before: p = &buf[the index at var = lo]; at the end of each
		 * iteration: p moves by coef * step elements */
		LirAffine first = lir_affine(s.p[j].off);
		for (int i = 0; i < s.p[j].a.n; i++)
			if (s.p[j].a.t[i].var == var)
				first.off += s.p[j].a.t[i].coef * x->lo;
			else
				lir_term(k, &first, s.p[j].a.t[i].var, s.p[j].a.t[i].coef);
		LirStmt *init = lir_stmt_new(k, LS_ASSIGN);
		init->temp = s.p[j].temp;
		init->e = lir_addr(k, s.p[j].buf, &first);
		lir_block_insert(k, parent, at++, init);
		LirStmt *bump = lir_stmt_new(k, LS_ASSIGN);
		bump->temp = s.p[j].temp;
		bump->e = lir_ptradd(k, s.p[j].temp, s.p[j].buf, s.p[j].coef * x->step);
		lir_block_add(k, &L->body, bump);
	}
	int n = s.np;
	free(s.p);
	free(outer);
	return n;
}
