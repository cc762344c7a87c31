/* The Loop IR (lir.h): building, copying, the verifier and the printer. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lir.h"
#include "util.h"

/* ---- memory: the kernel's nodes live in an arena, freed with it ------- */
struct LirArena {
	struct LirArena *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

static void *alloc(LirKernel *k, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	LirArena *a = k->arena;
	if (!a || a->used + n > a->size) {
		size_t size = n > 65536 ? n : 65536;
		LirArena *b = xmalloc(sizeof *b + size);
		b->next = a;
		b->used = 0;
		b->size = size;
		k->arena = a = b;
	}
	void *p = a->data + a->used;
	a->used += n;
	memset(p, 0, n);
	return p;
}

LirKernel *lir_kernel_new(const char *name, int lanes, bool scalable)
{
	LirKernel *k = xcalloc(1, sizeof *k);
	k->name = xstrdup(name);
	k->lanes = lanes;
	k->scalable = scalable;
	k->outer_vector = -1;
	k->ok = true;
	return k;
}

LirKernel *lir_kernel_newf(int lanes, bool scalable, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *name = xvasprintf(fmt, ap);
	va_end(ap);
	LirKernel *k = lir_kernel_new(name, lanes, scalable);
	free(name);
	return k;
}

void lir_kernel_free(LirKernel *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->nbufs; i++)
		free(k->bufs[i].name);
	for (int i = 0; i < k->ntemps; i++)
		free(k->temps[i].name);
	for (int i = 0; i < k->nvars; i++)
		free(k->vars[i].name);
	for (int i = 0; i < k->nnotes; i++)
		free(k->notes[i]);
	free(k->bufs);
	free(k->temps);
	free(k->vars);
	free(k->notes);
	free(k->open);
	for (LirArena *a = k->arena, *n; a; a = n) {
		n = a->next;
		free(a);
	}
	free(k->name);
	free(k);
}

static void fail(LirKernel *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(LirKernel *k, const char *fmt, ...)
{
	if (!k->ok)
		return;
	k->ok = false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(k->err, sizeof k->err, fmt, ap);
	va_end(ap);
}

void lir_note(LirKernel *k, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	if (k->nnotes == k->capnotes) {
		k->capnotes = k->capnotes ? 2 * k->capnotes : 4;
		k->notes = xrealloc(k->notes, (size_t)k->capnotes * sizeof *k->notes);
	}
	k->notes[k->nnotes++] = s;
}

int lir_buffer(LirKernel *k, const char *name, int64_t numel, int esize, int id)
{
	int b = lir_buffer_of(k, id);
	if (b >= 0)
		return b;
	if (k->nbufs == k->capbufs) {
		k->capbufs = k->capbufs ? 2 * k->capbufs : 8;
		k->bufs = xrealloc(k->bufs, (size_t)k->capbufs * sizeof *k->bufs);
	}
	k->bufs[k->nbufs] = (LirBuf){xstrdup(name), numel, esize, id, NULL};
	return k->nbufs++;
}

int lir_data_buffer(LirKernel *k, const char *name, int64_t numel, int esize, const char *sym)
{
	for (int i = 0; i < k->nbufs; i++)
		if (k->bufs[i].sym == sym)
			return i;
	int b = lir_buffer(k, name, numel, esize, -1 - k->nbufs);
	k->bufs[b].id = -1;
	k->bufs[b].sym = sym;
	return b;
}

int lir_buffer_of(const LirKernel *k, int id)
{
	for (int i = 0; i < k->nbufs; i++)
		if (k->bufs[i].id == id && !k->bufs[i].sym)
			return i;
	return -1;
}

static int add_temp(LirKernel *k, Sort sort, int ext)
{
	if (k->ntemps == k->captemps) {
		k->captemps = k->captemps ? 2 * k->captemps : 16;
		k->temps = xrealloc(k->temps, (size_t)k->captemps * sizeof *k->temps);
	}
	k->temps[k->ntemps] = (LirTemp){sort, xasprintf("t%d", k->ntemps), ext, false};
	return k->ntemps++;
}

int lir_temp(LirKernel *k, Sort sort)
{
	return add_temp(k, sort, -1);
}

int lir_wide_temp(LirKernel *k)
{
	int t = add_temp(k, SORT_V, -1);
	k->temps[t].wide = true;
	return t;
}

int lir_extern_temp(LirKernel *k, int vreg, Sort sort)
{
	return add_temp(k, sort, vreg);
}

int lir_new_var(LirKernel *k, int64_t lo, int64_t hi, int64_t step, LirLoopKind kind, const char *name)
{
	if (k->nvars == k->capvars) {
		k->capvars = k->capvars ? 2 * k->capvars : 8;
		k->vars = xrealloc(k->vars, (size_t)k->capvars * sizeof *k->vars);
	}
	k->vars[k->nvars] = (LirVar){lo, hi, step, kind, name ? xstrdup(name) : xasprintf("i%d", k->nvars), -1};
	return k->nvars++;
}

int lir_extern_var(LirKernel *k, int vreg, int64_t lo, int64_t hi, int64_t step, bool vector)
{
	char name[32];
	snprintf(name, sizeof name, "v%d", vreg);
	int v = lir_new_var(k, lo, hi, step, vector ? (k->scalable ? LIR_LOOP_STRIP : LIR_LOOP_VECTOR) : LIR_LOOP_SCALAR, name);
	k->vars[v].ext = vreg;
	if (vector) {
		if (k->outer_vector >= 0)
			fail(k, "two vector variables around the kernel");
		k->outer_vector = v;
	}
	return v;
}

/* ---- statements --------------------------------------------------------- */
LirStmt *lir_stmt_new(LirKernel *k, LirStmtKind kind)
{
	LirStmt *s = alloc(k, sizeof *s);
	s->kind = kind;
	s->var = s->temp = s->buf = s->ptr = -1;
	return s;
}

void lir_block_insert(LirKernel *k, LirBlock *b, int at, LirStmt *s)
{
	if (b->n == b->cap) {
		int cap = b->cap ? 2 * b->cap : 4;
		LirStmt **n = alloc(k, (size_t)cap * sizeof *n);
		if (b->n)
			memcpy(n, b->s, (size_t)b->n * sizeof *n);
		b->s = n;
		b->cap = cap;
	}
	memmove(b->s + at + 1, b->s + at, (size_t)(b->n - at) * sizeof *b->s);
	b->s[at] = s;
	b->n++;
}

void lir_block_add(LirKernel *k, LirBlock *b, LirStmt *s)
{
	lir_block_insert(k, b, b->n, s);
}

static LirBlock *current(LirKernel *k)
{
	return k->nopen ? k->open[k->nopen - 1] : &k->body;
}

/* what the builder adds goes into b, until lir_end */
static void push_open(LirKernel *k, LirBlock *b)
{
	if (k->nopen == k->capopen) {
		k->capopen = k->capopen ? 2 * k->capopen : 8;
		k->open = xrealloc(k->open, (size_t)k->capopen * sizeof *k->open);
	}
	k->open[k->nopen++] = b;
}

int lir_for(LirKernel *k, int64_t lo, int64_t hi, int64_t step)
{
	int v = lir_new_var(k, lo, hi, step, LIR_LOOP_SCALAR, NULL);
	LirStmt *s = lir_stmt_new(k, LS_LOOP);
	s->var = v;
	lir_block_add(k, current(k), s);
	push_open(k, &s->body);
	return v;
}

/* Open the loop of var again (built and closed, perhaps transformed since):
 * what follows goes at the end of its body, until lir_end. */
bool lir_reopen(LirKernel *k, int var)
{
	LirBlock *parent;
	int at;
	LirStmt *s = var >= 0 && var < k->nvars ? lir_loop_of(k, var, &parent, &at) : NULL;
	if (!s)
		return false;
	push_open(k, &s->body);
	return true;
}

void lir_end(LirKernel *k)
{
	if (k->nopen == 0) {
		fail(k, "lir_end with no open loop");
		return;
	}
	k->nopen--;
}

void lir_assign(LirKernel *k, int temp, LirExpr *e)
{
	LirStmt *s = lir_stmt_new(k, LS_ASSIGN);
	s->temp = temp;
	s->e = e;
	lir_block_add(k, current(k), s);
}

void lir_store(LirKernel *k, int buf, const LirAffine *a, LirExpr *e)
{
	LirStmt *s = lir_stmt_new(k, LS_STORE);
	s->buf = buf;
	s->a = *a;
	s->e = e;
	lir_block_add(k, current(k), s);
}

void lir_prefetch(LirKernel *k, int buf, const LirAffine *a)
{
	LirStmt *s = lir_stmt_new(k, LS_PREFETCH);
	s->buf = buf;
	s->a = *a;
	lir_block_add(k, current(k), s);
}

int lir_data_index(LirKernel *k, LirExpr *e, int64_t n)
{
	int v = lir_new_var(k, 0, n, 1, LIR_INDEX_DATA, NULL);
	LirStmt *s = lir_stmt_new(k, LS_INDEX);
	s->var = v;
	s->e = e;
	lir_block_add(k, current(k), s);
	return v;
}

LirStmt *lir_last(LirKernel *k)
{
	LirBlock *b = current(k);
	return b->n ? b->s[b->n - 1] : NULL;
}

/* ---- expressions -------------------------------------------------------- */
static LirExpr *expr_new(LirKernel *k, LirExprKind kind)
{
	LirExpr *e = alloc(k, sizeof *e);
	e->kind = kind;
	e->buf = e->temp = e->var = e->ptr = -1;
	return e;
}

LirExpr *lir_load_as(LirKernel *k, int buf, const LirAffine *a, LirLoadAs as)
{
	LirExpr *e = expr_new(k, LX_LOAD);
	e->buf = buf;
	e->a = *a;
	e->as = as;
	return e;
}

LirExpr *lir_load(LirKernel *k, int buf, const LirAffine *a)
{
	return lir_load_as(k, buf, a, LIR_AS_ELEM);
}

LirExpr *lir_op(LirKernel *k, SelOp op, LirExpr *a, LirExpr *b, LirExpr *c)
{
	LirExpr *e = expr_new(k, LX_OP);
	e->op = op;
	e->k[0] = a;
	e->k[1] = b;
	e->k[2] = c;
	int n = op < SEL_COUNT ? sel_info[op].nkids : 0;
	for (int i = 0; i < 3; i++)
		if ((i < n) != (e->k[i] != NULL))
			fail(k, "%s takes %d operands", op < SEL_COUNT ? sel_info[op].name : "?", n);
	return e;
}

LirExpr *lir_constf(LirKernel *k, double v)
{
	LirExpr *e = expr_new(k, LX_CONSTF);
	e->f = v;
	return e;
}

LirExpr *lir_consti(LirKernel *k, int64_t v)
{
	LirExpr *e = expr_new(k, LX_CONSTI);
	e->i = v;
	return e;
}

LirExpr *lir_ptradd(LirKernel *k, int ptr, int buf, int64_t elems)
{
	LirExpr *e = expr_new(k, LX_PTRADD);
	e->temp = ptr;
	e->buf = buf;
	e->i = elems;
	return e;
}

LirExpr *lir_constw(LirKernel *k, int32_t v)
{
	LirExpr *e = expr_new(k, LX_CONSTW);
	e->i = v;
	return e;
}

LirExpr *lir_ref(LirKernel *k, int temp)
{
	LirExpr *e = expr_new(k, LX_TEMP);
	e->temp = temp;
	return e;
}

LirExpr *lir_index(LirKernel *k, int var)
{
	LirExpr *e = expr_new(k, LX_INDEX);
	e->var = var;
	return e;
}

LirExpr *lir_addr(LirKernel *k, int buf, const LirAffine *a)
{
	LirExpr *e = expr_new(k, LX_ADDR);
	e->buf = buf;
	e->a = *a;
	return e;
}

LirAffine lir_affine(int64_t off)
{
	LirAffine a;
	memset(&a, 0, sizeof a);
	a.off = off;
	return a;
}

bool lir_term(LirKernel *k, LirAffine *a, int var, int64_t coef)
{
	for (int i = 0; i < a->n; i++)
		if (a->t[i].var == var) {
			a->t[i].coef += coef;
			return true;
		}
	if (coef == 0)
		return true;
	if (a->n == LIR_MAX_TERMS) {
		fail(k, "an index of more than %d variables", LIR_MAX_TERMS);
		return false;
	}
	a->t[a->n++] = (LirTerm){var, coef};
	return true;
}

int64_t lir_coef(const LirAffine *a, int var)
{
	int64_t c = 0;
	for (int i = 0; i < a->n; i++)
		if (a->t[i].var == var)
			c += a->t[i].coef;
	return c;
}

/* ---- copying ------------------------------------------------------------ */
/* What a copy changes: variable `from` reads as `to` + shift, the copied
 * loops' variables as their copies (vmap), temporaries through tmap. */
typedef struct {
	int from, to;
	int64_t shift;
	int *tmap;
	int *vmap;      /* per variable: its copy, or -1 */
	int nvmap;
} Subst;

static int var_of(const Subst *s, int var)
{
	if (var == s->from)
		return s->to;
	if (var >= 0 && var < s->nvmap && s->vmap[var] >= 0)
		return s->vmap[var];
	return var;
}

static LirAffine affine_subst(LirKernel *k, const LirAffine *a, const Subst *s)
{
	LirAffine r = lir_affine(a->off);
	for (int i = 0; i < a->n; i++) {
		lir_term(k, &r, var_of(s, a->t[i].var), a->t[i].coef);
		if (a->t[i].var == s->from)
			r.off += a->t[i].coef * s->shift;
	}
	return r;
}

static LirExpr *copy_expr(LirKernel *k, const LirExpr *e, const Subst *s)
{
	if (!e)
		return NULL;
	if (e->kind == LX_INDEX && e->var == s->from && s->shift) {
		/* var + shift, as integer arithmetic */
		return lir_op(k, SEL_ADD_I, lir_index(k, s->to), lir_consti(k, s->shift), NULL);
	}
	LirExpr *c = expr_new(k, e->kind);
	*c = *e;
	for (int i = 0; i < 3; i++)
		c->k[i] = copy_expr(k, e->k[i], s);
	if (e->kind == LX_LOAD || e->kind == LX_ADDR) {
		c->a = affine_subst(k, &e->a, s);
		c->pa = affine_subst(k, &e->pa, s);
	}
	if (e->ptr >= 0 && s->tmap && s->tmap[e->ptr] >= 0)
		c->ptr = s->tmap[e->ptr];
	if ((e->kind == LX_TEMP || e->kind == LX_PTRADD) && s->tmap && s->tmap[e->temp] >= 0)
		c->temp = s->tmap[e->temp];
	if (e->kind == LX_INDEX)
		c->var = var_of(s, e->var);
	return c;
}

static LirStmt *copy_stmt(LirKernel *k, const LirStmt *s, Subst *sub)
{
	LirStmt *c = lir_stmt_new(k, s->kind);
	c->note = s->note;
	switch (s->kind) {
	case LS_LOOP: {
		/* a copied loop gets a variable of its own */
		LirVar v = k->vars[s->var];
		c->var = lir_new_var(k, v.lo, v.hi, v.step, v.kind, NULL);
		if (s->var >= sub->nvmap) {
			int n = k->nvars + 8;
			sub->vmap = xrealloc(sub->vmap, (size_t)n * sizeof *sub->vmap);
			for (int i = sub->nvmap; i < n; i++)
				sub->vmap[i] = -1;
			sub->nvmap = n;
		}
		sub->vmap[s->var] = c->var;
		for (int i = 0; i < s->body.n; i++)
			lir_block_add(k, &c->body, copy_stmt(k, s->body.s[i], sub));
		break;
	}
	case LS_ASSIGN:
		c->e = copy_expr(k, s->e, sub);
		c->temp = s->temp;
		if (sub->tmap) {
			if (sub->tmap[s->temp] == -1 && k->temps[s->temp].ext < 0)
				sub->tmap[s->temp] = lir_temp(k, k->temps[s->temp].sort);
			if (sub->tmap[s->temp] >= 0)
				c->temp = sub->tmap[s->temp];
		}
		break;
	case LS_INDEX: {
		LirVar v = k->vars[s->var];
		c->var = lir_new_var(k, v.lo, v.hi, v.step, v.kind, NULL);
		if (s->var >= sub->nvmap) {
			int n = k->nvars + 8;
			sub->vmap = xrealloc(sub->vmap, (size_t)n * sizeof *sub->vmap);
			for (int i = sub->nvmap; i < n; i++)
				sub->vmap[i] = -1;
			sub->nvmap = n;
		}
		sub->vmap[s->var] = c->var;
		c->e = copy_expr(k, s->e, sub);
		break;
	}
	case LS_STORE:
	case LS_PREFETCH:
		c->buf = s->buf;
		c->a = affine_subst(k, &s->a, sub);
		c->pa = affine_subst(k, &s->pa, sub);
		c->ptr = s->ptr >= 0 && sub->tmap && sub->tmap[s->ptr] >= 0 ? sub->tmap[s->ptr] : s->ptr;
		c->e = copy_expr(k, s->e, sub);
		break;
	}
	return c;
}

LirExpr *lir_expr_copy(LirKernel *k, const LirExpr *e, int from, int to, int64_t shift, const int *tmap)
{
	Subst s = {from, to, shift, (int *)tmap, NULL, 0};
	return copy_expr(k, e, &s);
}

/* tmap: assignments in s to temporaries not yet renamed get fresh ones */
LirStmt *lir_stmt_copy(LirKernel *k, const LirStmt *s, int from, int to, int64_t shift, int *tmap)
{
	Subst sub = {from, to, shift, tmap, NULL, 0};
	LirStmt *c = copy_stmt(k, s, &sub);
	free(sub.vmap);
	return c;
}

static LirStmt *find_loop(LirBlock *b, int var, LirBlock **parent, int *index)
{
	for (int i = 0; i < b->n; i++) {
		LirStmt *s = b->s[i];
		if (s->kind != LS_LOOP)
			continue;
		if (s->var == var) {
			if (parent)
				*parent = b;
			if (index)
				*index = i;
			return s;
		}
		LirStmt *r = find_loop(&s->body, var, parent, index);
		if (r)
			return r;
	}
	return NULL;
}

LirStmt *lir_loop_of(LirKernel *k, int var, LirBlock **parent, int *index)
{
	return find_loop(&k->body, var, parent, index);
}

/* ---- the verifier ------------------------------------------------------- */
typedef struct {
	const LirKernel *k;
	Diag *d;
	Loc loc;
	bool ok;
	int *scope;        /* the loop variables around the statement */
	int nscope;
	int vvar;          /* the vector variable around it, or -1 */
	bool *assigned;    /* per temporary */
	bool *var_used;    /* per variable: defined by a loop already */
	bool *varying;     /* per temporary: holds lanes that differ (vector context) */
} Verify;

static void verr(Verify *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verr(Verify *v, const char *fmt, ...)
{
	if (!v->ok)
		return; /* the first error tells */
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	diag_error(v->d, v->loc, "internal error: Loop IR of %s: %s", v->k->name, msg);
	free(msg);
	v->ok = false;
}

static bool in_scope(const Verify *v, int var)
{
	if (var >= 0 && var < v->k->nvars && v->k->vars[var].ext >= 0)
		return true;
	for (int i = 0; i < v->nscope; i++)
		if (v->scope[i] == var)
			return true;
	return false;
}

/* The last value a loop variable takes. */
static int64_t var_last(const LirVar *x)
{
	if (x->kind == LIR_LOOP_MASKED)
		return x->lo; /* one iteration */
	return x->lo + (x->hi - x->lo - 1) / x->step * x->step;
}

static bool empty_loop(const LirVar *x)
{
	return x->hi <= x->lo;
}

static void check_access(Verify *v, int buf, const LirAffine *a, bool store, const char *what)
{
	const LirKernel *k = v->k;
	if (buf < 0 || buf >= k->nbufs) {
		verr(v, "%s of buffer %d, which does not exist", what, buf);
		return;
	}
	const LirBuf *b = &k->bufs[buf];
	int64_t lo = a->off, hi = a->off;
	int64_t lanes = 1;
	for (int i = 0; i < a->n; i++) {
		int var = a->t[i].var;
		if (!in_scope(v, var)) {
			verr(v, "%s of %s: its index uses variable %d outside its loop", what, b->name, var);
			return;
		}
		const LirVar *x = &k->vars[var];
		if (empty_loop(x))
			return; /* never executed */
		int64_t c = a->t[i].coef;
		if (var == v->vvar) {
			if (c != 1 && (c != 0 || store)) {
				verr(v, "%s of %s moves by %" PRId64 " along vector variable %s (a vector access moves by %s)", what,
				     b->name, c, x->name, store ? "1" : "0 or 1");
				return;
			}
			if (c == 1 && x->kind == LIR_LOOP_VECTOR)
				lanes = k->lanes; /* each copy of an unrolled body: one vector */
			if (c == 1 && x->kind == LIR_LOOP_MASKED)
				lanes = x->hi - x->lo;
		}
		int64_t p = c * x->lo, q = c * var_last(x);
		lo += p < q ? p : q;
		hi += p < q ? q : p;
	}
	if (v->vvar >= 0 && store && lir_coef(a, v->vvar) != 1) {
		verr(v, "%s of %s does not move along vector variable %s", what, b->name, k->vars[v->vvar].name);
		return;
	}
	/* a vector loop's last vector starts at its last value; its lanes
	 * continue from there (a strip's end inside its range) */
	hi += lanes - 1;
	if (lo < 0 || hi >= b->numel)
		verr(v, "%s of %s at [%" PRId64 ", %" PRId64 "], outside [0, %" PRId64 ")", what, b->name, lo, hi, b->numel);
}

static void check_ptr(Verify *v, int ptr)
{
	if (ptr < 0)
		return;
	if (ptr >= v->k->ntemps || v->k->temps[ptr].sort != SORT_I)
		verr(v, "an access through %d, not an i-sort temporary", ptr);
	else if (!v->assigned[ptr])
		verr(v, "an access through %%%s before it is assigned", v->k->temps[ptr].name);
}

/* The sort an expression has as written (vector ops keep v in scalar
 * context: the lowering adapts). */
static Sort vexpr(Verify *v, const LirExpr *e)
{
	const LirKernel *k = v->k;
	switch (e->kind) {
	case LX_OP: {
		if (e->op >= SEL_COUNT) {
			verr(v, "an unknown selection op %d", (int)e->op);
			return SORT_NONE;
		}
		const SelInfo *si = &sel_info[e->op];
		for (int i = 0; i < 3; i++) {
			if ((i < si->nkids) != (e->k[i] != NULL)) {
				verr(v, "%s with a wrong number of operands", si->name);
				return SORT_NONE;
			}
			if (i >= si->nkids)
				continue;
			Sort s = vexpr(v, e->k[i]);
			Sort want = si->kid[i];
			/* f and v interchange (broadcast / lane extract); others must match */
			bool fv = (s == SORT_F || s == SORT_V) && (want == SORT_F || want == SORT_V);
			if (s != want && !fv && s != SORT_NONE) {
				verr(v, "operand %d of %s is %s, not %s", i + 1, si->name, sort_name(s), sort_name(want));
				return SORT_NONE;
			}
		}
		if (e->op == SEL_LOAD_F || e->op == SEL_LOAD_V || e->op == SEL_LOAD_I || e->op == SEL_STORE_F ||
		    e->op == SEL_STORE_V || e->op == SEL_STORE_I || e->op == SEL_LOADM_V || e->op == SEL_STOREM_V ||
		    e->op == SEL_LOAD_I32 || e->op == SEL_STORE_I8 || e->op == SEL_LOAD_U8 || si->result == SORT_X || e->op == SEL_SETVL ||
		    e->op == SEL_REG_I || e->op == SEL_REG_F || e->op == SEL_REG_V || e->op == SEL_CONST_I ||
		    e->op == SEL_CONST_F || e->op == SEL_ADDR_SYM || e->op == SEL_ADDR_FAR)
			verr(v, "%s in an expression (memory, effects and leaves are the IR's own)", si->name);
		return si->result;
	}
	case LX_LOAD: {
		check_access(v, e->buf, &e->a, false, "a load");
		check_ptr(v, e->ptr);
		if (e->buf < 0 || e->buf >= k->nbufs)
			return SORT_NONE;
		int es = k->bufs[e->buf].esize;
		if (e->as == LIR_AS_I32) {
			if (es != 4)
				verr(v, "an i32 load of %s, whose elements have %d bytes", k->bufs[e->buf].name, es);
			if (v->vvar >= 0 && lir_coef(&e->a, v->vvar) != 0)
				verr(v, "an i32 load of %s in vector context", k->bufs[e->buf].name);
			return SORT_I;
		}
		if (es == 8 || es == 1) {
			if (v->vvar >= 0 && lir_coef(&e->a, v->vvar) != 0)
				verr(v, "an %s load of %s in vector context", es == 8 ? "i64" : "8-bit", k->bufs[e->buf].name);
			return SORT_I;
		}
		if (es != 4)
			verr(v, "a load of %s, whose elements have %d bytes", k->bufs[e->buf].name, es);
		return SORT_V;
	}
	case LX_TEMP:
		if (e->temp < 0 || e->temp >= k->ntemps) {
			verr(v, "temporary %d does not exist", e->temp);
			return SORT_NONE;
		}
		if (!v->assigned[e->temp] && k->temps[e->temp].ext < 0)
			verr(v, "%%%s read before it is assigned", k->temps[e->temp].name);
		return k->temps[e->temp].sort;
	case LX_ADDR:
		if (e->buf < 0 || e->buf >= k->nbufs)
			verr(v, "the address of buffer %d, which does not exist", e->buf);
		for (int i = 0; i < e->a.n; i++)
			if (!in_scope(v, e->a.t[i].var))
				verr(v, "an address uses variable %d outside its loop", e->a.t[i].var);
		return SORT_I;
	case LX_CONSTF:
		return SORT_V;
	case LX_CONSTW:
		return SORT_W;
	case LX_PTRADD:
		check_ptr(v, e->temp);
		if (e->buf < 0 || e->buf >= k->nbufs)
			verr(v, "a pointer into buffer %d, which does not exist", e->buf);
		return SORT_I;
	case LX_CONSTI:
		return SORT_I;
	case LX_INDEX:
		if (!in_scope(v, e->var))
			verr(v, "the value of variable %d outside its loop", e->var);
		else if (e->var == v->vvar)
			verr(v, "the value of vector variable %s in its loop", k->vars[e->var].name);
		return SORT_I;
	}
	return SORT_NONE;
}

/* Do e's lanes differ in the vector context around it? */
static bool varies(const Verify *v, const LirExpr *e)
{
	if (!e)
		return false;
	switch (e->kind) {
	case LX_LOAD:
		return lir_coef(&e->a, v->vvar) != 0;
	case LX_TEMP:
		return e->temp >= 0 && e->temp < v->k->ntemps && v->varying[e->temp];
	case LX_OP:
		if (e->op == SEL_REDSUM_V || e->op == SEL_REDMAX_V)
			return false; /* one value from all the lanes */
		for (int i = 0; i < 3; i++)
			if (varies(v, e->k[i]))
				return true;
		return false;
	default:
		return false;
	}
}

static void vblock(Verify *v, const LirBlock *b);

static void vstmt(Verify *v, const LirStmt *s)
{
	const LirKernel *k = v->k;
	switch (s->kind) {
	case LS_LOOP: {
		if (s->var < 0 || s->var >= k->nvars) {
			verr(v, "a loop over variable %d, which does not exist", s->var);
			return;
		}
		const LirVar *x = &k->vars[s->var];
		if (v->var_used[s->var] || x->ext >= 0 || x->kind == LIR_INDEX_DATA) {
			verr(v, "variable %s has two loops (or is a data index)", x->name);
			return;
		}
		v->var_used[s->var] = true;
		if (x->step < 1) {
			verr(v, "loop %s has step %" PRId64, x->name, x->step);
			return;
		}
		bool vec = x->kind != LIR_LOOP_SCALAR;
		if (vec && v->vvar >= 0) {
			verr(v, "vector loop %s inside vector loop %s", x->name, k->vars[v->vvar].name);
			return;
		}
		if (x->kind == LIR_LOOP_VECTOR && (k->scalable || x->step % k->lanes != 0 ||
						   (!empty_loop(x) && (x->hi - x->lo) % x->step != 0)))
			verr(v, "vector loop %s: [%" PRId64 ", %" PRId64 ") is not whole vectors of %" PRId64, x->name, x->lo, x->hi,
			     x->step);
		if (x->kind == LIR_LOOP_STRIP && !k->scalable)
			verr(v, "strip-mined loop %s on fixed vectors", x->name);
		if (x->kind == LIR_LOOP_MASKED && (k->scalable || x->hi - x->lo >= k->lanes))
			verr(v, "masked loop %s over %" PRId64 " lanes (a vector has %d)", x->name, x->hi - x->lo, k->lanes);
		v->scope[v->nscope++] = s->var;
		int saved = v->vvar;
		if (vec)
			v->vvar = s->var;
		vblock(v, &s->body);
		v->vvar = saved;
		v->nscope--;
		return;
	}
	case LS_ASSIGN: {
		if (s->temp < 0 || s->temp >= k->ntemps) {
			verr(v, "an assignment to temporary %d, which does not exist", s->temp);
			return;
		}
		Sort got = vexpr(v, s->e), want = k->temps[s->temp].sort;
		bool fv = (got == SORT_F || got == SORT_V) && (want == SORT_F || want == SORT_V);
		if (got != want && !fv && got != SORT_NONE)
			verr(v, "%%%s (%s) assigned a %s value", k->temps[s->temp].name, sort_name(want), sort_name(got));
		/* an f temporary holds one element: not lanes that differ */
		bool var = v->vvar >= 0 && varies(v, s->e);
		if (var && want == SORT_F)
			verr(v, "%%%s (f) assigned a value whose lanes differ along vector variable %s", k->temps[s->temp].name,
			     k->vars[v->vvar].name);
		v->varying[s->temp] = var;
		v->assigned[s->temp] = true;
		return;
	}
	case LS_INDEX: {
		if (s->var < 0 || s->var >= k->nvars || k->vars[s->var].kind != LIR_INDEX_DATA || v->var_used[s->var]) {
			verr(v, "a data index over variable %d, which is not a fresh data index", s->var);
			return;
		}
		if (vexpr(v, s->e) != SORT_I)
			verr(v, "data index %s from a value that is not an integer", k->vars[s->var].name);
		v->var_used[s->var] = true;
		/* in scope for the rest of the block (vblock drops it) */
		v->scope[v->nscope++] = s->var;
		return;
	}
	case LS_STORE: {
		check_access(v, s->buf, &s->a, true, "a store");
		check_ptr(v, s->ptr);
		if (s->buf < 0 || s->buf >= k->nbufs)
			return;
		Sort got = vexpr(v, s->e);
		int es = k->bufs[s->buf].esize;
		/* (an i value into 4-byte elements: an i32, in scalar context) */
		bool ok = es == 4 ? got == SORT_F || got == SORT_V || got == SORT_I : got == SORT_I;
		if (!ok && got != SORT_NONE)
			verr(v, "a store of a %s value into %s, whose elements have %d bytes", sort_name(got), k->bufs[s->buf].name,
			     es);
		if ((es != 4 || got == SORT_I) && v->vvar >= 0)
			verr(v, "a %d-byte %sstore into %s in vector context", es, got == SORT_I ? "integer " : "",
			     k->bufs[s->buf].name);
		return;
	}
	case LS_PREFETCH:
		/* (its index may leave the buffer: a prefetch never faults) */
		if (s->buf < 0 || s->buf >= k->nbufs) {
			verr(v, "a prefetch of buffer %d, which does not exist", s->buf);
			return;
		}
		for (int i = 0; i < s->a.n; i++)
			if (!in_scope(v, s->a.t[i].var)) {
				verr(v, "a prefetch of %s: its index uses variable %d outside its loop", k->bufs[s->buf].name,
				     s->a.t[i].var);
				return;
			}
		if (v->vvar >= 0 && lir_coef(&s->a, v->vvar) != 0)
			verr(v, "a prefetch of %s moves along vector variable %s (one line, not a line a lane)", k->bufs[s->buf].name,
			     k->vars[v->vvar].name);
		check_ptr(v, s->ptr);
		return;
	}
}

static void vblock(Verify *v, const LirBlock *b)
{
	int depth = v->nscope;
	for (int i = 0; i < b->n && v->ok; i++)
		vstmt(v, b->s[i]);
	v->nscope = depth; /* (data indices end with their block) */
}

bool lir_verify(const LirKernel *k, Diag *d, Loc loc)
{
	if (!k->ok) {
		diag_error(d, loc, "internal error: Loop IR of %s: %s", k->name, k->err);
		return false;
	}
	Verify v = {k, d, loc, true, xcalloc((size_t)k->nvars + 1, sizeof(int)), 0, k->outer_vector,
		    xcalloc((size_t)k->ntemps + 1, sizeof(bool)), xcalloc((size_t)k->nvars + 1, sizeof(bool)),
		    xcalloc((size_t)k->ntemps + 1, sizeof(bool))};
	if (k->nopen)
		verr(&v, "%d loops not ended", k->nopen);
	vblock(&v, &k->body);
	free(v.scope);
	free(v.assigned);
	free(v.var_used);
	free(v.varying);
	return v.ok;
}

/* ---- the printer -------------------------------------------------------- */
static void print_affine(FILE *out, const LirKernel *k, const LirAffine *a)
{
	bool any = false;
	for (int i = 0; i < a->n; i++) {
		int64_t c = a->t[i].coef;
		if (c == 0)
			continue;
		const char *name = k->vars[a->t[i].var].name;
		if (any)
			fputs(c < 0 ? " - " : " + ", out);
		else if (c < 0)
			fputc('-', out);
		int64_t m = c < 0 ? -c : c;
		if (m == 1)
			fprintf(out, "%s", name);
		else
			fprintf(out, "%" PRId64 "*%s", m, name);
		any = true;
	}
	if (!any)
		fprintf(out, "%" PRId64, a->off);
	else if (a->off)
		fprintf(out, " %c %" PRId64, a->off < 0 ? '-' : '+', a->off < 0 ? -a->off : a->off);
}

static void print_ptr(FILE *out, const LirKernel *k, int ptr, const LirAffine *pa)
{
	if (ptr < 0)
		return;
	fprintf(out, "{%%%s + ", k->temps[ptr].name);
	print_affine(out, k, pa);
	fputc('}', out);
}

void lir_print_expr(FILE *out, const LirKernel *k, const LirExpr *e)
{
	switch (e->kind) {
	case LX_OP:
		fprintf(out, "%s(", sel_info[e->op].name);
		for (int i = 0; i < 3 && e->k[i]; i++) {
			if (i)
				fputs(", ", out);
			lir_print_expr(out, k, e->k[i]);
		}
		fputc(')', out);
		return;
	case LX_LOAD:
		fprintf(out, "%s%s[", e->as == LIR_AS_I32 ? "i32 " : "", k->bufs[e->buf].name);
		print_affine(out, k, &e->a);
		fputc(']', out);
		print_ptr(out, k, e->ptr, &e->pa);
		return;
	case LX_TEMP:
		fprintf(out, "%%%s", k->temps[e->temp].name);
		return;
	case LX_ADDR:
		fprintf(out, "&%s[", k->bufs[e->buf].name);
		print_affine(out, k, &e->a);
		fputc(']', out);
		return;
	case LX_CONSTF:
		fprintf(out, "%.9g", e->f);
		return;
	case LX_CONSTI:
		fprintf(out, "%" PRId64, e->i);
		return;
	case LX_CONSTW:
		fprintf(out, "w%" PRId64, e->i);
		return;
	case LX_PTRADD:
		fprintf(out, "%%%s + %" PRId64 " of %s", k->temps[e->temp].name, e->i, k->bufs[e->buf].name);
		return;
	case LX_INDEX:
		fprintf(out, "%s", k->vars[e->var].name);
		return;
	}
}

static void print_block(FILE *out, const LirKernel *k, const LirBlock *b, int depth);

static void print_stmt(FILE *out, const LirKernel *k, const LirStmt *s, int depth)
{
	for (int i = 0; i < depth; i++)
		fputs("  ", out);
	switch (s->kind) {
	case LS_LOOP: {
		const LirVar *x = &k->vars[s->var];
		fprintf(out, "for %s in [%" PRId64 ", %" PRId64 ")", x->name, x->lo, x->hi);
		switch (x->kind) {
		case LIR_LOOP_SCALAR:
			if (x->step != 1)
				fprintf(out, " step %" PRId64, x->step);
			break;
		case LIR_LOOP_VECTOR:
			fprintf(out, " vector step %" PRId64, x->step);
			break;
		case LIR_LOOP_STRIP:
			fprintf(out, " strips of vl = setvl(%" PRId64 " - %s)", x->hi, x->name);
			break;
		case LIR_LOOP_MASKED:
			fprintf(out, " masked: %" PRId64 " lanes", x->hi - x->lo);
			break;
		case LIR_INDEX_DATA:
			break; /* (not a loop: the verifier says so) */
		}
		break;
	}
	case LS_ASSIGN:
		fprintf(out, "%%%s = ", k->temps[s->temp].name);
		lir_print_expr(out, k, s->e);
		break;
	case LS_INDEX:
		fprintf(out, "%s = index(", k->vars[s->var].name);
		lir_print_expr(out, k, s->e);
		fprintf(out, ") in [0, %" PRId64 ") or return 1", k->vars[s->var].hi);
		break;
	case LS_STORE:
		fprintf(out, "%s[", k->bufs[s->buf].name);
		print_affine(out, k, &s->a);
		fputc(']', out);
		print_ptr(out, k, s->ptr, &s->pa);
		fputs(" = ", out);
		lir_print_expr(out, k, s->e);
		break;
	case LS_PREFETCH:
		fprintf(out, "prefetch %s[", k->bufs[s->buf].name);
		print_affine(out, k, &s->a);
		fputc(']', out);
		print_ptr(out, k, s->ptr, &s->pa);
		break;
	}
	if (s->note)
		fprintf(out, "    # %s", s->note);
	fputc('\n', out);
	if (s->kind == LS_LOOP)
		print_block(out, k, &s->body, depth + 1);
}

static void print_block(FILE *out, const LirKernel *k, const LirBlock *b, int depth)
{
	for (int i = 0; i < b->n; i++)
		print_stmt(out, k, b->s[i], depth);
}

void lir_print(FILE *out, const LirKernel *k)
{
	fprintf(out, "%s\n", k->name);
	for (int i = 0; i < k->nnotes; i++)
		fprintf(out, "  # %s\n", k->notes[i]);
	bool any = false;
	for (int i = 0; i < k->nbufs; i++) {
		const LirBuf *b = &k->bufs[i];
		fprintf(out, "%s%s[%" PRId64 "]%s%s", any ? ", " : "  buffers: ", b->name, b->numel,
			b->esize == 8 ? " i64" : b->esize == 1 ? " i8" : "", b->sym ? " (data)" : "");
		any = true;
	}
	if (any)
		fputc('\n', out);
	for (int i = 0; i < k->nvars; i++)
		if (k->vars[i].ext >= 0)
			fprintf(out, "  around: %s in [%" PRId64 ", %" PRId64 ")%s\n", k->vars[i].name, k->vars[i].lo, k->vars[i].hi,
				i == k->outer_vector ? " (vector)" : "");
	print_block(out, k, &k->body, 1);
}
