/* Lowering of a verified graph to loop nests and selection trees.
 *
 * Each node becomes a kernel: a loop nest over its output (the Loop IR),
 * whose innermost loop is vectorized by the target's lanes with a scalar
 * remainder loop.  Every memory access is an affine function of the loop
 * variables and is checked against its buffer's bounds as it is built.
 * The trees use only the vocabulary of sel.def; which instructions cover
 * them is the target's business (isel.c). */
#include <math.h>
#include <time.h>
#include <sys/resource.h>
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
	int esize;       /* bytes per element */
} Buf;

typedef struct {
	int var;         /* vreg */
	int64_t lo, hi;
	int step;
	int label;
	bool dead;       /* no iteration (an empty dimension): jumped over */
	int vl;          /* a strip-mined loop: the vreg holding this strip's length, else -1 */
} Loop;

typedef struct {
	int var;
	int64_t coef;
} Term;

typedef struct {
	int64_t off;
	Term t[16];
	int n;
} Affine;

/* Workspace bytes past the plan, in use until the kernel at position
 * `until` is done: a kernel's scratch buffers, or a value moved there. */
typedef struct {
	int64_t off, size;
	int until;
} Extra;

typedef struct {
	Program *p;
	MFunc *f;
	const Target *t;
	Diag *d;
	Buf *buf;
	int args;        /* vreg holding the args array */
	int lanes;       /* fixed: f32 lanes of a vector; scalable: VLEN min / 32 */
	bool scalable;   /* vectors as long as the machine's: strips sized by setvl */
	int icls, fcls, vcls;
	Loop loops[16];
	int nloops;
	Loop ranges[8];  /* values that are not loop variables, with their range */
	int nranges;
	int ret;         /* the return-value register (fixed to the abi's) */
	int err_label;   /* `return 1`: a run-time error (an index out of range) */
	int *base;       /* per value: its base address vreg in this kernel, -1 */
	int *based;      /* the values whose base this kernel has set */
	int nbased, capbased;
	const Node *node;
	const LegalEntry *const *legal; /* per node (Node.id): the legalize stage's decision */
	bool int_mode;   /* the kernel being built works on i64 elements */
	bool w_mode;     /* ... on i32 elements, in vectors (W sort) */
	bool *fused;     /* per node: lowered as part of an earlier node's kernel */
	bool ok;
	/* the workspace: [0, plan->bytes) as the memory plan placed the
	 * values; above it, the bytes in use past the plan (extra) */
	const MemPlan *plan;
	int pos;         /* the position (node index) of the kernel being built */
	bool *moved;     /* per value: given bytes past the plan (see claim) */
	bool *viewed;    /* per value: the storage of some view too */
	Extra *extra;
	int nextra, capextra;
} CG;

static void cg_copy(CG *c, int in_v, int64_t in_off, const int64_t *icoef, int out_v, int64_t out_off,
		    const int64_t *ocoef, const Shape *shape);
static int scratch(CG *c, int64_t numel);

/* Where a vector loop over [lo, hi) ends and the scalar remainder starts:
 * with fixed vectors, after the last whole vector; with scalable ones, at
 * hi (the strips take it all). */
static int64_t vend_of(CG *c, int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return lo;
	if (c->scalable)
		return hi;
	return lo + (hi - lo) / c->lanes * c->lanes;
}

/* Is a row of n contiguous elements worth a vector loop? */
static bool vector_row(CG *c, int64_t n)
{
	return c->scalable ? n >= 1 : n >= c->lanes;
}

/* ---- data and buffers -------------------------------------------------- */
static const char *add_data(Program *p, Tensor *t)
{
	if (p->ndata == p->capdata) {
		p->capdata = p->capdata ? 2 * p->capdata : 16;
		p->data = xrealloc(p->data, (size_t)p->capdata * sizeof *p->data);
	}
	char *sym = strcmp(p->f->name, "gdcc_entry") == 0 ? xasprintf("gdcc_data_%d", p->ndata)
							       : xasprintf("%s_data_%d", p->f->name, p->ndata);
	p->data[p->ndata++] = (DataItem){sym, t, NULL};
	return sym;
}

/* The data of a constant value (its compile-time tensor), or NULL. */
static const Tensor *const_data(CG *c, int value)
{
	const Buf *b = &c->buf[value];
	for (int i = 0; b->kind == BUF_CONST && i < c->p->ndata; i++)
		if (strcmp(c->p->data[i].sym, b->sym) == 0)
			return c->p->data[i].data;
	return NULL;
}

/* Data laid out anew at compile time for the node reading `value` (a
 * transposed or reordered constant): it replaces the constant's own data
 * when nothing else reads that, else it is added beside it. */
static const char *const_relayout(CG *c, int value, Tensor *t)
{
	const Value *v = value < c->p->g->nvalues ? c->p->g->values[value] : NULL;
	const Buf *b = &c->buf[value];
	if (v && v->nuses == 1 && !v->is_output && b->kind == BUF_CONST && c->plan->alias[value] == value && !c->viewed[value])
		for (int i = 0; i < c->p->ndata; i++)
			if (strcmp(c->p->data[i].sym, b->sym) == 0 && tensor_bytes(c->p->data[i].data) == tensor_bytes(t)) {
				tensor_free(c->p->data[i].data);
				c->p->data[i].data = t;
				return c->p->data[i].sym;
			}
	return add_data(c->p, t);
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

/* An i64 constant: an immediate where it fits 32 bits (every target's
 * immediates do), else loaded from read-only data. */
static BursNode *const_i64(CG *c, int64_t v)
{
	if (v >= INT32_MIN && v <= INT32_MAX)
		return sel_consti(c->f, v);
	const char *sym = NULL;
	for (int i = 0; i < c->p->ndata && !sym; i++) {
		Tensor *t = c->p->data[i].data;
		if (t->type.shape.rank == 0 && t->type.dtype == DT_I64 && ((int64_t *)t->data)[0] == v)
			sym = c->p->data[i].sym;
	}
	if (!sym) {
		Shape s = {0};
		Tensor *t = tensor_new(DT_I64, &s);
		((int64_t *)t->data)[0] = v;
		sym = add_data(c->p, t);
	}
	return sel_op(c->f, SEL_LOAD_I, sel_sym(c->f, sym), NULL, NULL);
}

/* A float bound of an i64 clip as an integer: ceil for a lower bound,
 * floor for an upper one, saturating (kernel_clip's rule). */
static int64_t int_bound(double v, bool lower)
{
	v = lower ? ceil(v) : floor(v);
	if (v <= (double)INT64_MIN)
		return INT64_MIN;
	if (v >= (double)INT64_MAX)
		return INT64_MAX;
	return (int64_t)v;
}

/* ---- loops --------------------------------------------------------------- */
static void indent(CG *c)
{
	for (int i = 0; i < c->nloops + 1; i++)
		fputs("  ", c->p->loops);
}

static int loop_begin_(CG *c, int64_t lo, int64_t hi, int step, bool vector)
{
	MFunc *f = c->f;
	int v = mfunc_vreg(f, c->icls);
	sel_assign(f, v, sel_consti(f, lo));
	int label = sel_new_label(f);
	if (hi <= lo) {
		/* an empty dimension: the body is never run */
		sel_branch(f, sel_op(f, SEL_JUMP, NULL, NULL, NULL), label);
		c->loops[c->nloops++] = (Loop){v, lo, hi, step, label, true, -1};
		return v;
	}
	sel_label(f, label);
	if (c->scalable && vector) {
		/* strip mining: each strip takes vl = setvl(hi - i) elements */
		int vl = mfunc_vreg(f, c->icls);
		sel_assign(f, vl, sel_op(f, SEL_SETVL, sel_op(f, SEL_SUB_I, sel_consti(f, hi), sel_reg(f, v), NULL),
					 sel_consti(f, f->lmul), NULL));
		if (c->p->loops) {
			indent(c);
			fprintf(c->p->loops, "for %%v%d in [%lld, %lld) by strips of vl = setvl(%lld - %%v%d)\n", v, (long long)lo,
				(long long)hi, (long long)hi, v);
		}
		c->loops[c->nloops++] = (Loop){v, lo, hi, 1, label, false, vl};
		return v;
	}
	if (c->p->loops) {
		indent(c);
		fprintf(c->p->loops, "for %%v%d in [%lld, %lld) step %d%s\n", v, (long long)lo, (long long)hi, step,
			vector ? " (vector)" : step > 1 ? " (unrolled block)" : "");
	}
	c->loops[c->nloops++] = (Loop){v, lo, hi, step, label, false, -1};
	return v;
}

/* A scalar loop (any step), or a vector loop: by the lanes of a fixed
 * vector, or strip-mined by setvl with scalable vectors. */
static int loop_begin(CG *c, int64_t lo, int64_t hi, int step)
{
	return loop_begin_(c, lo, hi, step, false);
}

static int vloop_begin(CG *c, int64_t lo, int64_t hi, bool vector)
{
	return loop_begin_(c, lo, hi, vector ? c->lanes : 1, vector);
}

static void loop_end(CG *c)
{
	MFunc *f = c->f;
	Loop l = c->loops[--c->nloops];
	if (l.dead) {
		sel_label(f, l.label);
		return;
	}
	if (l.vl >= 0) {
		sel_assign(f, l.var, sel_op(f, SEL_ADD_I, sel_reg(f, l.var), sel_reg(f, l.vl), NULL));
		sel_branch(f, sel_op(f, SEL_BRLT_I, sel_reg(f, l.var), sel_consti(f, l.hi), NULL), l.label);
		return;
	}
	sel_assign(f, l.var, sel_op(f, SEL_ADD_I, sel_reg(f, l.var), sel_consti(f, l.step), NULL));
	sel_branch(f, sel_op(f, SEL_BRLT_I, sel_reg(f, l.var), sel_consti(f, l.hi), NULL), l.label);
}

static const Loop *loop_of(CG *c, int var)
{
	for (int i = 0; i < c->nloops; i++)
		if (c->loops[i].var == var)
			return &c->loops[i];
	for (int i = 0; i < c->nranges; i++)
		if (c->ranges[i].var == var)
			return &c->ranges[i];
	return NULL;
}

static const char *value_name(CG *c, int value)
{
	return value < c->p->g->nvalues ? c->p->g->values[value]->name : "(scratch)";
}

/* The Loop IR's contract: every access lies inside its buffer. */
static void check_access(CG *c, int value, const Affine *a, int lanes)
{
	for (int i = 0; i < c->nloops; i++)
		if (c->loops[i].dead)
			return; /* never executed */
	int64_t lo = a->off, hi = a->off;
	for (int i = 0; i < a->n; i++) {
		const Loop *l = loop_of(c, a->t[i].var);
		int64_t first = l->lo, last = l->lo + ((l->hi - l->lo - 1) / l->step) * l->step;
		int64_t x = a->t[i].coef * first, y = a->t[i].coef * last;
		lo += x < y ? x : y;
		hi += x < y ? y : x;
	}
	if (!c->scalable)
		hi += lanes - 1; /* (a strip's vector ends inside its loop's range) */
	if (lo < 0 || hi >= c->buf[value].numel) {
		diag_error(c->d, c->node->loc, "internal error: the loop nest of %s reads or writes '%s' at [%lld, %lld], outside [0, %lld)",
			   op_info[c->node->op].name, value_name(c, value), (long long)lo, (long long)hi,
			   (long long)c->buf[value].numel);
		c->ok = false;
	}
}

/* Bytes past the plan until the kernel at `until` is done: the lowest
 * offset there clear of the extras still in use (a few at a time). */
static int64_t extra_alloc(CG *c, int64_t bytes, int until)
{
	bytes = (bytes + 63) / 64 * 64;
	int64_t off = c->plan->bytes;
	for (bool clash = true; clash;) {
		clash = false;
		for (int i = 0; i < c->nextra; i++)
			if (c->extra[i].off < off + bytes && off < c->extra[i].off + c->extra[i].size) {
				off = c->extra[i].off + c->extra[i].size;
				clash = true;
			}
	}
	if (c->nextra == c->capextra) {
		c->capextra = c->capextra ? 2 * c->capextra : 8;
		c->extra = xrealloc(c->extra, (size_t)c->capextra * sizeof *c->extra);
	}
	c->extra[c->nextra++] = (Extra){off, bytes, until};
	if (off + bytes > c->p->workspace_bytes)
		c->p->workspace_bytes = off + bytes;
	return off;
}

/* The kernel at c->pos is about to address a workspace value: its bytes
 * must be its own now.  A kernel that computes a later node's result as
 * well (a relu folded into the conv before it) writes that result before
 * its planned lifetime starts: it moves to bytes of its own past the plan,
 * with its views, until its planned last use.  Reading a value after its
 * planned last use would read bytes another value may have overwritten:
 * an internal error. */
static void claim(CG *c, int value)
{
	const MemPlan *m = c->plan;
	if (value >= c->p->g->nvalues || c->buf[value].kind != BUF_WS)
		return;
	int root = m->alias[value];
	if (c->moved[root] || (c->pos >= m->first[root] && c->pos <= m->last[root]))
		return;
	if (c->pos > m->last[root]) {
		diag_error(c->d, c->node->loc, "internal error: the kernel of %s reads '%s' after its last planned use (node %d)",
			   op_info[c->node->op].name, value_name(c, value), m->last[root]);
		c->ok = false;
		return;
	}
	const Buf *b = &c->buf[root];
	int64_t off = extra_alloc(c, b->numel * b->esize, m->last[root]);
	c->moved[root] = true;
	for (int v = 0; v < c->p->g->nvalues; v++)
		if (m->alias[v] == root && c->buf[v].kind == BUF_WS)
			c->buf[v].offset = off;
	if (c->p->loops) {
		indent(c);
		fprintf(c->p->loops, "(%s written before its planned lifetime: moved to workspace offset %lld)\n",
			value_name(c, root), (long long)off);
	}
}

static int base_of(CG *c, int value)
{
	if (c->base[value] >= 0)
		return c->base[value];
	claim(c, value);
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
	if (c->nbased == c->capbased) {
		c->capbased = c->capbased ? 2 * c->capbased : 16;
		c->based = xrealloc(c->based, (size_t)c->capbased * sizeof *c->based);
	}
	c->based[c->nbased++] = value;
	return v;
}

/* A new kernel: no base address is known (linear in what the last kernel
 * used, not in the graph: a 100,000-node chain is 100,000 kernels). */
static void bases_reset(CG *c)
{
	for (int i = 0; i < c->nbased; i++)
		c->base[c->based[i]] = -1;
	c->nbased = 0;
}

static BursNode *address(CG *c, int value, const Affine *a, int lanes)
{
	MFunc *f = c->f;
	check_access(c, value, a, lanes);
	if (c->p->loops) {
		indent(c);
		fprintf(c->p->loops, "  %s %s[%lld", lanes > 1 ? "vector" : "scalar", value_name(c, value),
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
	int es = c->buf[value].esize ? c->buf[value].esize : 4;
	int shift = es == 8 ? 3 : es == 4 ? 2 : es == 2 ? 1 : 0;
	if (!idx)
		return a->off ? sel_op(f, SEL_ADD_I, base, sel_consti(f, es * a->off), NULL) : base;
	if (a->off)
		idx = sel_op(f, SEL_ADD_I, idx, sel_consti(f, a->off), NULL);
	return sel_op(f, SEL_ADD_I, base, shift ? sel_op(f, SEL_SHL_I, idx, sel_consti(f, shift), NULL) : idx, NULL);
}

static bool is_i64(CG *c, int value)
{
	return c->buf[value].esize == 8;
}

static BursNode *load(CG *c, int value, const Affine *a, bool vector)
{
	MFunc *f = c->f;
	if (is_i64(c, value))
		return sel_op(f, SEL_LOAD_I, address(c, value, a, 1), NULL, NULL);
	if (vector)
		return sel_op(f, SEL_LOAD_V, address(c, value, a, c->lanes), NULL, NULL);
	return sel_op(f, SEL_LOAD_F, address(c, value, a, 1), NULL, NULL);
}

static void store(CG *c, int value, const Affine *a, bool vector, BursNode *v)
{
	MFunc *f = c->f;
	if (is_i64(c, value)) {
		sel_effect(f, sel_op(f, SEL_STORE_I, address(c, value, a, 1), v, NULL));
		return;
	}
	sel_effect(f, sel_op(f, vector ? SEL_STORE_V : SEL_STORE_F, address(c, value, a, vector ? c->lanes : 1), v, NULL));
}

/* An i32 constant, loaded as the f32 with its bits (moves only, no arithmetic). */
static const char *const_i32_bits(CG *c, int32_t v)
{
	for (int i = 0; i < c->p->ndata; i++) {
		Tensor *t = c->p->data[i].data;
		if (t->type.shape.rank == 0 && t->type.dtype == DT_I32 && ((int32_t *)t->data)[0] == v)
			return c->p->data[i].sym;
	}
	Shape s = {0};
	Tensor *t = tensor_new(DT_I32, &s);
	((int32_t *)t->data)[0] = v;
	return add_data(c->p, t);
}

static BursNode *splat(CG *c, double v, bool vector)
{
	MFunc *f = c->f;
	BursNode *s = sel_op(f, SEL_LOAD_F, sel_sym(f, const_f32(c, v)), NULL, NULL);
	return vector ? sel_op(f, SEL_BCAST_V, s, NULL, NULL) : s;
}

static BursNode *splat_i32_bits(CG *c, int32_t v, bool vector)
{
	MFunc *f = c->f;
	BursNode *s = sel_op(f, SEL_LOAD_F, sel_sym(f, const_i32_bits(c, v)), NULL, NULL);
	return vector ? sel_op(f, SEL_BCAST_V, s, NULL, NULL) : s;
}

/* ---- transcendental functions (vector code, exp_poly and friends) -------------- */
/* A value kept in a register: trees are trees, so a value used twice is
 * assigned first. */
static int keep(CG *c, BursNode *v, bool vector)
{
	int r = mfunc_vreg(c->f, vector ? c->vcls : c->fcls);
	sel_assign(c->f, r, v);
	return r;
}

#define R(v) sel_reg(c->f, (v))
#define K(x) splat(c, (x), true)
#define OPV(op, a, b) sel_op(c->f, (op), (a), (b), NULL)

/* exp(x), Cody-Waite range reduction by ln 2 and the Cephes expf
 * polynomial on [-ln2/2, ln2/2]; relative error below 2e-7 over
 * [-87.3, 88.7] (inputs are clamped there: exp underflows to ~1e-38 and
 * overflows to ~1.7e38 instead of 0 and inf). */
static int exp_v(CG *c, int x)
{
	MFunc *f = c->f;
	int xc = keep(c, OPV(SEL_MIN_V, OPV(SEL_MAX_V, R(x), K(-87.33654)), K(88.72283)), true);
	int fx = keep(c, sel_op(f, SEL_ROUND_V, OPV(SEL_MUL_V, R(xc), K(1.44269504088896341)), NULL, NULL), true);
	/* r = x - fx * ln2, in two parts (0.693359375 is exact in f32) */
	int r = keep(c, sel_op(f, SEL_FMA_V, R(fx), K(-0.693359375), R(xc)), true);
	r = keep(c, sel_op(f, SEL_FMA_V, R(fx), K(2.12194440e-4), R(r)), true);
	static const double p[] = {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
				   1.6666665459e-1, 5.0000001201e-1};
	BursNode *y = K(p[0]);
	for (int i = 1; i < 6; i++)
		y = sel_op(f, SEL_FMA_V, y, R(r), K(p[i]));
	int yv = keep(c, y, true);
	int z = keep(c, OPV(SEL_MUL_V, R(r), R(r)), true);
	/* y * z + r + 1 */
	BursNode *e = OPV(SEL_ADD_V, sel_op(f, SEL_FMA_V, R(yv), R(z), R(r)), K(1.0));
	/* 2^fx: the exponent field (fx + 127) << 23 */
	BursNode *n = sel_op(f, SEL_CVT_V_W, OPV(SEL_ADD_V, R(fx), K(127.0)), NULL, NULL);
	BursNode *pow2 = sel_op(f, SEL_BITS_W_V, OPV(SEL_SHL_W, n, sel_consti(f, 23)), NULL, NULL);
	return keep(c, OPV(SEL_MUL_V, e, pow2), true);
}

/* A vector of lanes equal i32 values, from read-only data. */
static BursNode *wconst(CG *c, int32_t v)
{
	int n = c->scalable ? c->t->vlen_max / 32 : c->lanes;
	Shape s = {1, {n}};
	Tensor *t = tensor_new(DT_I32, &s);
	for (int i = 0; i < n; i++)
		((int32_t *)t->data)[i] = v;
	const char *sym = add_data(c->p, t);
	MFunc *f = c->f;
	return sel_op(f, SEL_BITS_V_W, sel_op(f, SEL_LOAD_V, sel_sym(f, sym), NULL, NULL), NULL, NULL);
}

/* log(x): x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s),
 * s = (m - 1) / (m + 1), |s| < 0.172, by its series to s^11 (relative
 * error below 1e-7); subnormals are scaled first; log 0 = -inf, log of a
 * negative number = nan. */
static int log_v(CG *c, int x)
{
	MFunc *f = c->f;
	BursNode *tiny = sel_op(f, SEL_CMPLT_V, R(x), K(1.17549435e-38), NULL);
	int xs = keep(c, sel_op(f, SEL_SELECT_V, tiny, OPV(SEL_MUL_V, R(x), K(8388608.0)), R(x)), true);
	int eadj = keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(x), K(1.17549435e-38), NULL), K(-23.0), K(0.0)), true);
	BursNode *ew = OPV(SEL_ADD_W, OPV(SEL_SHR_W, sel_op(f, SEL_BITS_V_W, R(xs), NULL, NULL), sel_consti(f, 23)), wconst(c, -127));
	int e = keep(c, OPV(SEL_ADD_V, sel_op(f, SEL_CVT_W_V, ew, NULL, NULL), R(eadj)), true);
	BursNode *mw = OPV(SEL_OR_W, OPV(SEL_AND_W, sel_op(f, SEL_BITS_V_W, R(xs), NULL, NULL), wconst(c, 0x007fffff)),
			   wconst(c, 0x3f800000));
	int m = keep(c, sel_op(f, SEL_BITS_W_V, mw, NULL, NULL), true);
	int big = mfunc_vreg(f, target_class_for(c->t, SORT_M));
	sel_assign(f, big, sel_op(f, SEL_CMPLT_V, K(1.41421356), R(m), NULL));
	int m2 = keep(c, sel_op(f, SEL_SELECT_V, R(big), OPV(SEL_MUL_V, R(m), K(0.5)), R(m)), true);
	int e2 = keep(c, sel_op(f, SEL_SELECT_V, R(big), OPV(SEL_ADD_V, R(e), K(1.0)), R(e)), true);
	int sv = keep(c, OPV(SEL_DIV_V, OPV(SEL_SUB_V, R(m2), K(1.0)), OPV(SEL_ADD_V, R(m2), K(1.0))), true);
	int s2 = keep(c, OPV(SEL_MUL_V, R(sv), R(sv)), true);
	BursNode *pl = K(1.0 / 11.0);
	static const double q[] = {1.0 / 9.0, 1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0};
	for (int i = 0; i < 4; i++)
		pl = sel_op(f, SEL_FMA_V, pl, R(s2), K(q[i]));
	int p2 = keep(c, OPV(SEL_MUL_V, pl, R(s2)), true);
	/* 2 (s + s p) + e ln2 */
	int lm = keep(c, OPV(SEL_MUL_V, sel_op(f, SEL_FMA_V, R(sv), R(p2), R(sv)), K(2.0)), true);
	int y = keep(c, sel_op(f, SEL_FMA_V, R(e2), K(0.69314718055994531), R(lm)), true);
	/* x == 0: -inf; x < 0: nan */
	int z = keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLE_V, R(x), K(0.0), NULL), K(-INFINITY), R(y)), true);
	return keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(x), K(0.0), NULL), K(NAN), R(z)), true);
}

/* pow(a, b) as C's pow: |a|^b = exp(b log |a|); a negative base takes an
 * integer exponent's sign, else gives nan; b = 0 gives 1. */
static int pow_v(CG *c, int a, int b)
{
	MFunc *f = c->f;
	int la = log_v(c, keep(c, sel_op(f, SEL_ABS_V, R(a), NULL, NULL), true));
	int mag = exp_v(c, keep(c, OPV(SEL_MUL_V, R(b), R(la)), true));
	int rb = keep(c, sel_op(f, SEL_ROUND_V, R(b), NULL, NULL), true);
	int hb = keep(c, OPV(SEL_MUL_V, R(b), K(0.5)), true);
	int rh = keep(c, sel_op(f, SEL_ROUND_V, R(hb), NULL, NULL), true);
	/* (one select per tree: a target may have a single mask register) */
	/* odd integer exponent: round(b / 2) != b / 2 */
	int neg = keep(c, sel_op(f, SEL_NEG_V, R(mag), NULL, NULL), true);
	int odd1 = keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(hb), R(rh), NULL), R(neg), R(mag)), true);
	int odd = keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(rh), R(hb), NULL), R(neg), R(odd1)), true);
	/* an integer exponent: round(b) == b */
	int ib1 = keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(b), R(rb), NULL), K(NAN), R(odd)), true);
	int ib = keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(rb), R(b), NULL), K(NAN), R(ib1)), true);
	int y = keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(a), K(0.0), NULL), R(ib), R(mag)), true);
	/* b == 0: 1 */
	int y1 = keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, K(0.0), R(b), NULL), R(y), K(1.0)), true);
	return keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(b), K(0.0), NULL), R(y), R(y1)), true);
}

/* 1 / (1 + exp(-x)) */
static int sigmoid_v(CG *c, int x)
{
	int e = exp_v(c, keep(c, sel_op(c->f, SEL_NEG_V, R(x), NULL, NULL), true));
	return keep(c, OPV(SEL_DIV_V, K(1.0), OPV(SEL_ADD_V, K(1.0), R(e))), true);
}

/* Near zero, where a formula loses relative accuracy: the odd series
 * x (c0 + c1 x^2 + c2 x^4 + c3 x^6), chosen for |x| < 0.1. */
static int small_odd(CG *c, int x, int formula, const double *cf)
{
	MFunc *f = c->f;
	int x2 = keep(c, OPV(SEL_MUL_V, R(x), R(x)), true);
	BursNode *p = sel_op(f, SEL_FMA_V, sel_op(f, SEL_FMA_V, sel_op(f, SEL_FMA_V, K(cf[3]), R(x2), K(cf[2])), R(x2), K(cf[1])),
			     R(x2), K(cf[0]));
	int series = keep(c, OPV(SEL_MUL_V, p, R(x)), true);
	BursNode *small = sel_op(f, SEL_CMPLT_V, sel_op(f, SEL_ABS_V, R(x), NULL, NULL), K(0.1), NULL);
	return keep(c, sel_op(f, SEL_SELECT_V, small, R(series), R(formula)), true);
}

/* tanh x = 2 sigmoid(2x) - 1, and its series near 0 (relative error
 * below 1e-6 everywhere). */
static int tanh_v(CG *c, int x)
{
	int s = sigmoid_v(c, keep(c, OPV(SEL_MUL_V, R(x), K(2.0)), true));
	int t = keep(c, sel_op(c->f, SEL_FMA_V, R(s), K(2.0), K(-1.0)), true);
	static const double cf[] = {1.0, -1.0 / 3.0, 2.0 / 15.0, -17.0 / 315.0};
	return small_odd(c, x, t, cf);
}

/* erf, Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7), and its series
 * near 0 for relative accuracy there. */
static int erf_v(CG *c, int x)
{
	MFunc *f = c->f;
	int ax = keep(c, sel_op(f, SEL_ABS_V, R(x), NULL, NULL), true);
	int t = keep(c, OPV(SEL_DIV_V, K(1.0), sel_op(f, SEL_FMA_V, R(ax), K(0.3275911), K(1.0))), true);
	static const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
	BursNode *pl = K(a[0]);
	for (int i = 1; i < 5; i++)
		pl = sel_op(f, SEL_FMA_V, pl, R(t), K(a[i]));
	int poly = keep(c, OPV(SEL_MUL_V, pl, R(t)), true);
	int e = exp_v(c, keep(c, sel_op(f, SEL_NEG_V, OPV(SEL_MUL_V, R(ax), R(ax)), NULL, NULL), true));
	int y = keep(c, OPV(SEL_SUB_V, K(1.0), OPV(SEL_MUL_V, R(poly), R(e))), true);
	/* the sign of x */
	BursNode *neg = sel_op(f, SEL_CMPLT_V, R(x), K(0.0), NULL);
	int r = keep(c, sel_op(f, SEL_SELECT_V, neg, sel_op(f, SEL_NEG_V, R(y), NULL, NULL), R(y)), true);
	/* near 0: 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42) */
	static const double k = 1.1283791670955126;
	static const double cf[] = {k, -k / 3.0, k / 10.0, -k / 42.0};
	return small_odd(c, x, r, cf);
}

static int gelu_v(CG *c, const Node *n, int x)
{
	MFunc *f = c->f;
	int inner;
	if (strcmp(attr_s(n, "approximate"), "tanh") == 0) {
		/* tanh(sqrt(2/pi) (x + 0.044715 x^3)) */
		int x3 = keep(c, OPV(SEL_MUL_V, OPV(SEL_MUL_V, R(x), R(x)), R(x)), true);
		int u = keep(c, OPV(SEL_MUL_V, sel_op(f, SEL_FMA_V, R(x3), K(0.044715), R(x)), K(0.7978845608028654)), true);
		inner = tanh_v(c, u);
	} else {
		inner = erf_v(c, keep(c, OPV(SEL_MUL_V, R(x), K(0.7071067811865476)), true));
	}
	return keep(c, OPV(SEL_MUL_V, OPV(SEL_MUL_V, R(x), K(0.5)), OPV(SEL_ADD_V, R(inner), K(1.0))), true);
}

/* The vector value of a transcendental op; a scalar is computed in all
 * lanes of a broadcast and read back by a (then exact) lane maximum. */
static BursNode *transcendental(CG *c, const Node *n, BursNode *x, bool vector)
{
	MFunc *f = c->f;
	int xv = keep(c, vector ? x : sel_op(f, SEL_BCAST_V, x, NULL, NULL), true);
	int y;
	switch (n->op) {
	case OP_EXP: y = exp_v(c, xv); break;
	case OP_SIGMOID: y = sigmoid_v(c, xv); break;
	case OP_TANH: y = tanh_v(c, xv); break;
	case OP_ERF: y = erf_v(c, xv); break;
	case OP_GELU: y = gelu_v(c, n, xv); break;
	case OP_LEAKY_RELU:
		y = keep(c, sel_op(f, SEL_SELECT_V, sel_op(f, SEL_CMPLT_V, R(xv), K(0.0), NULL),
				   OPV(SEL_MUL_V, R(xv), K(attr_f(n, "alpha"))), R(xv)), true);
		break;
	case OP_LOG: y = log_v(c, xv); break;
	case OP_HARDSWISH: {
		/* x * max(0, min(1, x / 6 + 1 / 2)) */
		BursNode *h = sel_op(f, SEL_FMA_V, R(xv), K(1.0 / 6.0), K(0.5));
		h = OPV(SEL_MAX_V, OPV(SEL_MIN_V, h, K(1.0)), K(0.0));
		y = keep(c, OPV(SEL_MUL_V, R(xv), h), true);
		break;
	}
	default: return NULL;
	}
	if (vector)
		return R(y);
	return sel_op(f, SEL_REDMAX_V, R(y), NULL, NULL);
}

/* ---- elementwise kernels --------------------------------------------------- */
static BursNode *bin(CG *c, SelOp vop, SelOp sop, bool vector, BursNode *a, BursNode *b)
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
	case OP_ADD: return bin(c, SEL_ADD_V, SEL_ADD_F, vector, x[0], x[1]);
	case OP_SUB: return bin(c, SEL_SUB_V, SEL_SUB_F, vector, x[0], x[1]);
	case OP_MUL: return bin(c, SEL_MUL_V, SEL_MUL_F, vector, x[0], x[1]);
	case OP_DIV: return bin(c, SEL_DIV_V, SEL_DIV_F, vector, x[0], x[1]);
	case OP_POW: {
		int a = keep(c, vector ? x[0] : sel_op(f, SEL_BCAST_V, x[0], NULL, NULL), true);
		int b = keep(c, vector ? x[1] : sel_op(f, SEL_BCAST_V, x[1], NULL, NULL), true);
		int y = pow_v(c, a, b);
		return vector ? R(y) : sel_op(f, SEL_REDMAX_V, R(y), NULL, NULL);
	}
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
	case OP_RECIPROCAL: return bin(c, SEL_DIV_V, SEL_DIV_F, vector, splat(c, 1.0, vector), x[0]);
	case OP_RELU: return bin(c, SEL_MAX_V, SEL_MAX_F, vector, x[0], splat(c, 0.0, vector));
	case OP_CLIP: {
		BursNode *v = x[0];
		if (c->int_mode) { /* the bounds as the reference takes them: ceil / floor, saturated; NaN: absent */
			double mn = attr_f(n, "min"), mx = attr_f(n, "max");
			if (attr_present(n, "min") && !isnan(mn))
				v = sel_op(f, SEL_MAX_I, v, const_i64(c, int_bound(mn, true)), NULL);
			if (attr_present(n, "max") && !isnan(mx))
				v = sel_op(f, SEL_MIN_I, v, const_i64(c, int_bound(mx, false)), NULL);
			return v;
		}
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
	case OP_EXP: case OP_SIGMOID: case OP_TANH: case OP_ERF: case OP_GELU: case OP_LEAKY_RELU: case OP_HARDSWISH:
	case OP_LOG:
		return transcendental(c, n, x[0], vector);
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

static bool is_copy(OpKind op)
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
		sym = add_data(c->p, t);
		c->p->data[c->p->ndata - 1].tag = iota_tag;
	}
	return sel_op(c->f, SEL_CMPLT_V, sel_op(c->f, SEL_LOAD_V, sel_sym(c->f, sym), NULL, NULL), splat(c, (double)k, true), NULL);
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

static void cg_elementwise(CG *c, const Node *n)
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
		if (is_copy(n->op))
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
		vars[d] = loop_begin(c, 0, s.dim[d], 1);
	int64_t inner = s.dim[r - 1];
	int64_t vend = c->int_mode ? 0 : vend_of(c, 0, inner);
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
		int iv = tail ? -1 : vloop_begin(c, lo, hi, vector);
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
				x[i] = sel_op(c->f, SEL_BCAST_V, load(c, n->in[i]->id, &a, false), NULL, NULL);
			else if (tail)
				x[i] = sel_op(c->f, SEL_LOADM_V, address(c, n->in[i]->id, &a, (int)(hi - lo)), mask, NULL);
			else
				x[i] = load(c, n->in[i]->id, &a, vector);
			if (c->w_mode)
				x[i] = sel_op(c->f, SEL_BITS_V_W, x[i], NULL, NULL);
		}
		BursNode *v = c->w_mode ? sel_op(c->f, SEL_BITS_W_V, elementwise_w(c, n, x), NULL, NULL) : elementwise(c, n, x, vector);
		Affine oa = {0};
		for (int d = 0; d < r - 1; d++)
			oa.t[oa.n++] = (Term){vars[d], ostr[d]};
		if (tail) {
			oa.off = lo;
			sel_effect(c->f, sel_op(c->f, SEL_STOREM_V, address(c, out->id, &oa, (int)(hi - lo)), v, mask));
			continue;
		}
		oa.t[oa.n++] = (Term){iv, 1};
		store(c, out->id, &oa, vector, v);
		loop_end(c);
	}
	for (int d = r - 2; d >= 0; d--)
		loop_end(c);
	free(istr);
	free(x);
}

/* ---- rows: reductions and normalizations along one axis ------------------------- */
/* An index space [outer, n, inner] over a value: row (o, j) is the n
 * elements at o * n * inner + j + i * inner. */
typedef struct {
	int64_t outer, n, inner;
} Rows;

static Rows rows_of(const Shape *s, int axis_from, int axis_to)
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

/* The start of row (ov, jv) (vregs of the outer and inner loop variables,
 * jv < 0 when inner == 1). */
static Affine row_start(const Rows *r, int ov, int jv)
{
	Affine a = {0, {{ov, r->n * r->inner}}, 1};
	if (jv >= 0)
		a.t[a.n++] = (Term){jv, 1};
	return a;
}

typedef enum { RED_SUM, RED_MAX } Reduce;

/* Reduce a row to a scalar vreg; with fn, reduce fn(x) instead and store
 * fn(x) into out (the row of the same shape in value `out`). */
typedef int (*RowFn)(CG *c, int xv, const void *ctx);

static int row_pass(CG *c, const Rows *r, Affine start, int in_v, int out_v, Reduce red, RowFn fn, const void *ctx,
		    double scale_by)
{
	MFunc *f = c->f;
	bool vec = r->inner == 1 && vector_row(c, r->n);
	int64_t vend = vec ? vend_of(c, 0, r->n) : 0;
	double init = red == RED_MAX ? -INFINITY : 0.0;
	SelOp vop = red == RED_MAX ? SEL_MAX_V : SEL_ADD_V, sop = red == RED_MAX ? SEL_MAX_F : SEL_ADD_F;
	int acc = keep(c, splat(c, init, false), false);
	if (vend > 0) {
		/* fixed vectors: lanes accumulate, one reduction at the end;
		 * scalable: each strip (its own length) reduces into acc */
		int accv = c->scalable ? -1 : keep(c, splat(c, init, true), true);
		SelOp rop = red == RED_MAX ? SEL_REDMAX_V : SEL_REDSUM_V;
		int iv = vloop_begin(c, 0, vend, true);
		Affine a = start;
		a.t[a.n++] = (Term){iv, 1};
		BursNode *x = load(c, in_v, &a, true);
		if (scale_by != 0) {
			store(c, out_v, &a, true, OPV(SEL_MUL_V, x, sel_op(f, SEL_BCAST_V, R((int)scale_by), NULL, NULL)));
		} else {
			if (fn) {
				int y = fn(c, keep(c, x, true), ctx);
				store(c, out_v, &a, true, R(y));
				x = R(y);
			}
			if (c->scalable)
				sel_assign(f, acc, OPV(sop, R(acc), sel_op(f, rop, x, NULL, NULL)));
			else
				sel_assign(f, accv, OPV(vop, R(accv), x));
		}
		loop_end(c);
		if (scale_by == 0 && !c->scalable)
			sel_assign(f, acc, sel_op(f, rop, R(accv), NULL, NULL));
	}
	if (vend < r->n) {
		int iv = loop_begin(c, vend, r->n, 1);
		Affine a = start;
		a.t[a.n++] = (Term){iv, r->inner};
		BursNode *x = load(c, in_v, &a, false);
		if (scale_by != 0) {
			store(c, out_v, &a, false, OPV(SEL_MUL_F, x, R((int)scale_by)));
		} else {
			if (fn) {
				/* the vector function on a broadcast, read back by a lane max */
				int y = fn(c, keep(c, sel_op(f, SEL_BCAST_V, x, NULL, NULL), true), ctx);
				int ys = keep(c, sel_op(f, SEL_REDMAX_V, R(y), NULL, NULL), false);
				store(c, out_v, &a, false, R(ys));
				x = R(ys);
			}
			sel_assign(f, acc, OPV(sop, R(acc), x));
		}
		loop_end(c);
	}
	return acc;
}

typedef struct {
	int shift;   /* scalar vreg subtracted before exp */
} ExpShift;

static int exp_shifted(CG *c, int xv, const void *ctx)
{
	const ExpShift *e = ctx;
	int d = keep(c, OPV(SEL_SUB_V, R(xv), sel_op(c->f, SEL_BCAST_V, R(e->shift), NULL, NULL)), true);
	return exp_v(c, d);
}

/* softmax along one axis: max, then exp(x - max) stored with its sum, then
 * a multiplication by the reciprocal of the sum. */
static void cg_softmax(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	int axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += x->type.shape.rank;
	Rows r = rows_of(&x->type.shape, axis, axis + 1);
	int ov = loop_begin(c, 0, r.outer, 1);
	int jv = r.inner > 1 ? loop_begin(c, 0, r.inner, 1) : -1;
	Affine st = row_start(&r, ov, jv);
	int m = row_pass(c, &r, st, x->id, -1, RED_MAX, NULL, NULL, 0);
	ExpShift es = {m};
	int sum = row_pass(c, &r, st, x->id, y->id, RED_SUM, exp_shifted, &es, 0);
	int inv = keep(c, OPV(SEL_DIV_F, splat(c, 1.0, false), R(sum)), false);
	row_pass(c, &r, st, y->id, y->id, RED_SUM, NULL, NULL, inv);
	if (jv >= 0)
		loop_end(c);
	loop_end(c);
}

static int exp_shifted_only(CG *c, int xv, const void *ctx)
{
	const ExpShift *e = ctx;
	int d = keep(c, OPV(SEL_SUB_V, R(xv), sel_op(c->f, SEL_BCAST_V, R(e->shift), NULL, NULL)), true);
	return exp_v(c, d);
}

/* logsoftmax: x - max - log(sum(exp(x - max))). */
static void cg_logsoftmax(CG *c, const Node *n)
{
	MFunc *f = c->f;
	const Value *x = n->in[0], *y = n->out[0];
	int axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += x->type.shape.rank;
	Rows r = rows_of(&x->type.shape, axis, axis + 1);
	int ov = loop_begin(c, 0, r.outer, 1);
	int jv = r.inner > 1 ? loop_begin(c, 0, r.inner, 1) : -1;
	Affine st = row_start(&r, ov, jv);
	int m = row_pass(c, &r, st, x->id, -1, RED_MAX, NULL, NULL, 0);
	ExpShift es = {m};
	/* the exponentials go to y as scratch, overwritten below */
	int sum = row_pass(c, &r, st, x->id, y->id, RED_SUM, exp_shifted_only, &es, 0);
	int ls = keep(c, sel_op(f, SEL_REDMAX_V, R(log_v(c, keep(c, sel_op(f, SEL_BCAST_V, R(sum), NULL, NULL), true))), NULL, NULL),
		      false);
	int shift = keep(c, OPV(SEL_ADD_F, R(m), R(ls)), false);
	bool vec = r.inner == 1 && vector_row(c, r.n);
	int64_t vend = vec ? vend_of(c, 0, r.n) : 0;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : r.n;
		if (hi <= lo)
			continue;
		int iv = vloop_begin(c, lo, hi, vector);
		Affine a = st;
		a.t[a.n++] = (Term){iv, vector ? 1 : r.inner};
		BursNode *sh = vector ? sel_op(f, SEL_BCAST_V, R(shift), NULL, NULL) : R(shift);
		store(c, y->id, &a, vector, bin(c, SEL_SUB_V, SEL_SUB_F, vector, load(c, x->id, &a, vector), sh));
		loop_end(c);
	}
	if (jv >= 0)
		loop_end(c);
	loop_end(c);
}

/* reduce_mean over the trailing axes from a (the common case); other axis
 * sets are reported as not lowered. */
static bool cg_reduce_mean(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
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
	Rows r = rows_of(&x->type.shape, first, rank);
	if (trailing && r.n > 0) {
		int ov = loop_begin(c, 0, r.outer, 1);
		Affine st = row_start(&r, ov, -1);
		int sum = row_pass(c, &r, st, x->id, -1, RED_SUM, NULL, NULL, 0);
		Affine ya = {0, {{ov, 1}}, 1};
		store(c, y->id, &ya, false, OPV(SEL_MUL_F, R(sum), splat(c, 1.0 / (double)r.n, false)));
		loop_end(c);
		return true;
	}
	/* any axes: loops over the kept axes, then a scalar sum over the reduced
	 * ones (an empty reduction gives nan, 0 / 0, as the reference) */
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
	int vars[MAX_RANK];
	Affine ia = {0, {{0}}, 0}, ya = {0, {{0}}, 0};
	for (int d = 0; d < rank; d++)
		if (!red[d]) {
			vars[d] = loop_begin(c, 0, x->type.shape.dim[d], 1);
			ia.t[ia.n++] = (Term){vars[d], istr[d]};
			ya.t[ya.n++] = (Term){vars[d], ostr[d]};
		}
	int acc = keep(c, splat(c, 0.0, false), false);
	for (int d = 0; d < rank; d++)
		if (red[d]) {
			vars[d] = loop_begin(c, 0, x->type.shape.dim[d], 1);
			ia.t[ia.n++] = (Term){vars[d], istr[d]};
		}
	sel_assign(c->f, acc, OPV(SEL_ADD_F, R(acc), load(c, x->id, &ia, false)));
	for (int d = rank - 1; d >= 0; d--)
		if (red[d])
			loop_end(c);
	store(c, y->id, &ya, false, OPV(SEL_MUL_F, R(acc), splat(c, count ? 1.0 / (double)count : NAN, false)));
	for (int d = rank - 1; d >= 0; d--)
		if (!red[d])
			loop_end(c);
	return true;
}

/* global pools: a reduction of each (n, c) row of spatial elements */
static void cg_global_pool(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	Rows r = rows_of(&x->type.shape, 2, x->type.shape.rank);
	bool avg = n->op == OP_GLOBAL_AVGPOOL;
	int ov = loop_begin(c, 0, r.outer, 1);
	Affine st = row_start(&r, ov, -1);
	int v = row_pass(c, &r, st, x->id, -1, avg ? RED_SUM : RED_MAX, NULL, NULL, 0);
	Affine ya = {0, {{ov, 1}}, 1};
	BursNode *val = R(v);
	if (avg)
		val = OPV(SEL_MUL_F, val, splat(c, 1.0 / (double)r.n, false));
	store(c, y->id, &ya, false, val);
	loop_end(c);
}

/* layernorm over the trailing axes: mean, variance, then
 * (x - mean) * rsqrt(var + eps) * scale + bias; scale and bias must cover
 * the normalized block (or be one value). */
static bool cg_layernorm(CG *c, const Node *n)
{
	MFunc *f = c->f;
	const Value *x = n->in[0], *sc = n->in[1], *bi = n->nin > 2 ? n->in[2] : NULL, *y = n->out[0];
	int rank = x->type.shape.rank, axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += rank;
	Rows r = rows_of(&x->type.shape, axis, rank);
	int64_t sn = shape_numel(&sc->type.shape), bn = bi ? shape_numel(&bi->type.shape) : 0;
	if (r.n == 0 || (sn != r.n && sn != 1) || (bi && bn != r.n && bn != 1))
		return false;
	int ov = loop_begin(c, 0, r.outer, 1);
	Affine st = row_start(&r, ov, -1);
	int sum = row_pass(c, &r, st, x->id, -1, RED_SUM, NULL, NULL, 0);
	int mean = keep(c, OPV(SEL_MUL_F, R(sum), splat(c, 1.0 / (double)r.n, false)), false);
	/* variance: sum of (x - mean)^2, written to y on the way */
	bool vec = vector_row(c, r.n);
	int64_t vend = vec ? vend_of(c, 0, r.n) : 0;
	int var = keep(c, splat(c, 0.0, false), false);
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : r.n;
		if (hi <= lo)
			continue;
		bool lanes_acc = vector && !c->scalable; /* scalable: each strip reduces into var */
		int acc = lanes_acc ? keep(c, splat(c, 0.0, true), true) : var;
		int iv = vloop_begin(c, lo, hi, vector);
		Affine a = st;
		a.t[a.n++] = (Term){iv, 1};
		BursNode *m = vector ? sel_op(f, SEL_BCAST_V, R(mean), NULL, NULL) : R(mean);
		int d = keep(c, bin(c, SEL_SUB_V, SEL_SUB_F, vector, load(c, x->id, &a, vector), m), vector);
		store(c, y->id, &a, vector, R(d));
		if (vector && c->scalable)
			sel_assign(f, var, OPV(SEL_ADD_F, R(var), sel_op(f, SEL_REDSUM_V, OPV(SEL_MUL_V, R(d), R(d)), NULL, NULL)));
		else
			sel_assign(f, acc, sel_op(f, vector ? SEL_FMA_V : SEL_FMA_F, R(d), R(d), R(acc)));
		loop_end(c);
		if (lanes_acc)
			sel_assign(f, var, sel_op(f, SEL_REDSUM_V, R(acc), NULL, NULL));
	}
	int rstd = keep(c, OPV(SEL_DIV_F, splat(c, 1.0, false),
			       sel_op(f, SEL_SQRT_F, sel_op(f, SEL_FMA_F, R(var), splat(c, 1.0 / (double)r.n, false),
							    splat(c, attr_f(n, "epsilon"), false)), NULL, NULL)), false);
	/* results 2 and 3: the mean and the inverse standard deviation per row */
	for (int k = 1; k < n->nout && k < 3; k++)
		if (n->out[k]->nuses || n->out[k]->is_output) {
			base_of(c, n->out[k]->id);
			Affine ma = {0, {{ov, 1}}, 1};
			store(c, n->out[k]->id, &ma, false, R(k == 1 ? mean : rstd));
		}
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : r.n;
		if (hi <= lo)
			continue;
		int iv = vloop_begin(c, lo, hi, vector);
		Affine a = st;
		a.t[a.n++] = (Term){iv, 1};
		Affine sa = {0, {{iv, sn == 1 ? 0 : 1}}, 1}, ba = {0, {{iv, bn == 1 ? 0 : 1}}, 1};
		BursNode *rs = vector ? sel_op(f, SEL_BCAST_V, R(rstd), NULL, NULL) : R(rstd);
		BursNode *scv = (vector && sn == 1) ? sel_op(f, SEL_BCAST_V, load(c, sc->id, &sa, false), NULL, NULL)
						    : load(c, sc->id, &sa, vector);
		BursNode *v = bin(c, SEL_MUL_V, SEL_MUL_F, vector, bin(c, SEL_MUL_V, SEL_MUL_F, vector, load(c, y->id, &a, vector), rs), scv);
		if (bi) {
			BursNode *bv = (vector && bn == 1) ? sel_op(f, SEL_BCAST_V, load(c, bi->id, &ba, false), NULL, NULL)
							   : load(c, bi->id, &ba, vector);
			v = bin(c, SEL_ADD_V, SEL_ADD_F, vector, v, bv);
		}
		store(c, y->id, &a, vector, v);
		loop_end(c);
	}
	loop_end(c);
	return true;
}

/* batchnorm (inference): per channel a = scale / sqrt(var + eps),
 * b = bias - mean a; then y = x a + b over the channel's elements. */
static bool cg_batchnorm(CG *c, const Node *n)
{
	MFunc *f = c->f;
	bool training = attr_i(n, "training_mode") != 0;
	if (!training && n->nout > 1)
		return false;
	const Value *x = n->in[0], *y = n->out[0];
	Rows r = rows_of(&x->type.shape, 2, x->type.shape.rank);
	int64_t N = x->type.shape.dim[0], C = x->type.shape.rank > 1 ? x->type.shape.dim[1] : 1;
	int bmean = -1, bvar = -1;
	if (training) {
		/* the batch's statistics per channel (population variance), and
		 * the running statistics input * momentum + batch * (1 - momentum) */
		if (N * r.n == 0)
			return false;
		double mom = attr_f(n, "momentum"), cnt = (double)(N * r.n);
		int mean_buf = scratch(c, 2 * C);
		base_of(c, mean_buf);
		int cv = loop_begin(c, 0, C, 1);
		int sum = keep(c, splat(c, 0.0, false), false);
		int nv = loop_begin(c, 0, N, 1);
		Rows row = {1, r.n, 1};
		Affine st = {0, {{nv, C * r.n}, {cv, r.n}}, 2};
		int part = row_pass(c, &row, st, x->id, -1, RED_SUM, NULL, NULL, 0);
		sel_assign(f, sum, OPV(SEL_ADD_F, R(sum), R(part)));
		loop_end(c);
		int mean = keep(c, OPV(SEL_MUL_F, R(sum), splat(c, 1.0 / cnt, false)), false);
		int sq = keep(c, splat(c, 0.0, false), false);
		nv = loop_begin(c, 0, N, 1);
		int iv = loop_begin(c, 0, r.n, 1);
		Affine xa = {0, {{nv, C * r.n}, {cv, r.n}, {iv, 1}}, 3};
		int d = keep(c, OPV(SEL_SUB_F, load(c, x->id, &xa, false), R(mean)), false);
		sel_assign(f, sq, sel_op(f, SEL_FMA_F, R(d), R(d), R(sq)));
		loop_end(c);
		loop_end(c);
		Affine ma = {0, {{cv, 1}}, 1}, va = {C, {{cv, 1}}, 1};
		store(c, mean_buf, &ma, false, R(mean));
		store(c, mean_buf, &va, false, OPV(SEL_MUL_F, R(sq), splat(c, 1.0 / cnt, false)));
		for (int k = 1; k < n->nout; k++)
			if (n->out[k]->nuses || n->out[k]->is_output) {
				base_of(c, n->out[k]->id);
				Affine oa = {0, {{cv, 1}}, 1};
				BursNode *batch = load(c, mean_buf, k == 1 ? &ma : &va, false);
				BursNode *input = load(c, n->in[k == 1 ? 3 : 4]->id, &oa, false);
				store(c, n->out[k]->id, &oa, false,
				      sel_op(f, SEL_FMA_F, input, splat(c, mom, false), OPV(SEL_MUL_F, batch, splat(c, 1.0 - mom, false))));
			}
		loop_end(c);
		bmean = bvar = mean_buf;
	}
	/* inference with constant statistics: the per-channel scale and shift
	 * are folded now (no divide or square root at run time) */
	const Tensor *st[4] = {NULL, NULL, NULL, NULL};
	bool fold = !training;
	for (int k = 0; k < 4 && fold; k++)
		fold = (st[k] = const_data(c, n->in[k + 1]->id)) != NULL;
	const char *folded = NULL;
	if (fold) {
		Shape fs = {1, {2 * C}};
		Tensor *ft = tensor_new(DT_F32, &fs);
		double eps = attr_f(n, "epsilon");
		for (int64_t k = 0; k < C; k++) {
			double sc = tensor_get_f(st[0], k) / sqrt(tensor_get_f(st[3], k) + eps);
			((float *)ft->data)[k] = (float)sc;
			((float *)ft->data)[C + k] = (float)(tensor_get_f(st[1], k) - tensor_get_f(st[2], k) * sc);
		}
		folded = add_data(c->p, ft);
	}
	int nv = loop_begin(c, 0, N, 1);
	int cv = loop_begin(c, 0, C, 1);
	Affine ca = {0, {{cv, 1}}, 1}, cva = {C, {{cv, 1}}, 1};
	int a, b;
	if (folded) {
		a = keep(c, sel_op(f, SEL_LOAD_F, OPV(SEL_ADD_I, sel_sym(f, folded), OPV(SEL_SHL_I, R(cv), sel_consti(f, 2))), NULL, NULL), false);
		b = keep(c, sel_op(f, SEL_LOAD_F, OPV(SEL_ADD_I, sel_sym(f, folded), OPV(SEL_SHL_I, OPV(SEL_ADD_I, R(cv), sel_consti(f, C)), sel_consti(f, 2))), NULL, NULL), false);
	} else {
		BursNode *var = training ? load(c, bvar, &cva, false) : load(c, n->in[4]->id, &ca, false);
		BursNode *mu = training ? load(c, bmean, &ca, false) : load(c, n->in[3]->id, &ca, false);
		a = keep(c, OPV(SEL_DIV_F, load(c, n->in[1]->id, &ca, false),
				sel_op(f, SEL_SQRT_F, OPV(SEL_ADD_F, var, splat(c, attr_f(n, "epsilon"), false)), NULL, NULL)), false);
		b = keep(c, OPV(SEL_SUB_F, load(c, n->in[2]->id, &ca, false), OPV(SEL_MUL_F, mu, R(a))), false);
	}
	int64_t vend = vend_of(c, 0, r.n);
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : r.n;
		if (hi <= lo)
			continue;
		int iv = vloop_begin(c, lo, hi, vector);
		Affine xa = {0, {{nv, C * r.n}, {cv, r.n}, {iv, 1}}, 3};
		BursNode *av = vector ? sel_op(f, SEL_BCAST_V, R(a), NULL, NULL) : R(a);
		BursNode *bv = vector ? sel_op(f, SEL_BCAST_V, R(b), NULL, NULL) : R(b);
		store(c, y->id, &xa, vector, sel_op(f, vector ? SEL_FMA_V : SEL_FMA_F, load(c, x->id, &xa, vector), av, bv));
		loop_end(c);
	}
	loop_end(c);
	loop_end(c);
	return true;
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
	bool can_vec = oc[r - 1] == 1 && (ic[r - 1] == 1 || ic[r - 1] == 0) && !is_i64(c, out_v);
	int64_t vend = can_vec ? vend_of(c, 0, inner) : 0;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : inner;
		if (hi <= lo)
			continue;
		int iv = vloop_begin(c, lo, hi, vector);
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
	if (is_i64(c, out_v)) {
		if (numel > 0) {
			int iv = loop_begin(c, 0, numel, 1);
			Affine oa = {0, {{iv, 1}}, 1};
			store(c, out_v, &oa, false, sel_consti(c->f, (int64_t)v));
			loop_end(c);
		}
		return;
	}
	bool i32 = out_v < c->p->g->nvalues && c->p->g->values[out_v]->type.dtype == DT_I32;
	int64_t vend = vend_of(c, 0, numel);
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : numel;
		if (hi <= lo)
			continue;
		int iv = vloop_begin(c, lo, hi, vector);
		Affine oa = {0, {{iv, 1}}, 1};
		store(c, out_v, &oa, vector, i32 ? splat_i32_bits(c, (int32_t)v, vector) : splat(c, v, vector));
		loop_end(c);
	}
}

/* pad in reflect or edge mode: per axis three regions (before, the data,
 * after), each an affine map of the output index (reflection runs the input
 * backwards, the edge repeats one element); every combination of regions
 * is one affine copy.  Negative pads crop first, as the reference does. */
static bool cg_pad_mirror(CG *c, const Node *n)
{
	const Value *x = n->in[0], *y = n->out[0];
	bool reflect = strcmp(attr_s(n, "mode"), "reflect") == 0;
	int r = x->type.shape.rank;
	int64_t begin[MAX_RANK], end[MAX_RANK], istr[MAX_RANK], ostr[MAX_RANK], base_off = 0;
	pad_params(n, r, begin, end);
	shape_strides(&x->type.shape, istr);
	shape_strides(&y->type.shape, ostr);
	int64_t len[MAX_RANK];
	for (int d = 0; d < r; d++) {
		int64_t cb = begin[d] < 0 ? -begin[d] : 0, ce = end[d] < 0 ? -end[d] : 0;
		base_off += cb * istr[d];
		len[d] = x->type.shape.dim[d] - cb - ce;
		if (begin[d] < 0)
			begin[d] = 0;
		if (end[d] < 0)
			end[d] = 0;
		if (len[d] <= 0 && (begin[d] || end[d]))
			return false;
	}
	int combos = 1;
	for (int d = 0; d < r; d++)
		combos *= 3;
	for (int k = 0; k < combos; k++) {
		Shape rs = {r, {0}};
		int64_t in_off = base_off, out_off = 0, ic[MAX_RANK] = {0};
		bool empty = false;
		for (int d = 0, q = k; d < r; d++, q /= 3) {
			int region = q % 3;
			int64_t o0 = region == 0 ? 0 : region == 1 ? begin[d] : begin[d] + len[d];
			int64_t cnt = region == 0 ? begin[d] : region == 1 ? len[d] : end[d];
			rs.dim[d] = cnt;
			empty |= cnt == 0;
			out_off += o0 * ostr[d];
			/* the input index p as a function of o = o0 + i */
			int64_t coef, off;
			if (region == 1) {
				coef = 1, off = 0;
			} else if (region == 0) { /* p = o - begin < 0 */
				if (reflect)
					coef = -1, off = begin[d] - o0; /* p = begin - o */
				else
					coef = 0, off = 0;
			} else { /* p = o - begin >= len */
				if (reflect)
					coef = -1, off = 2 * (len[d] - 1) - (o0 - begin[d]); /* 2 (len - 1) - p */
				else
					coef = 0, off = len[d] - 1;
			}
			in_off += off * istr[d];
			ic[d] = coef * istr[d];
		}
		if (!empty)
			cg_copy(c, x->id, in_off, ic, y->id, out_off, ostr, &rs);
	}
	return true;
}

static bool cg_movement(CG *c, const Node *n)
{
	if (n->nin == 0)
		return false;
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
			return cg_pad_mirror(c, n);
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

/* ---- convolution and pooling ------------------------------------------------------ */
/* A scratch buffer in the workspace for this node (index past the values),
 * past the plan: its bytes are free again after this kernel. */
static int scratch(CG *c, int64_t numel)
{
	int id = c->p->g->nvalues + c->node->id;
	c->buf[id] = (Buf){BUF_WS, 0, NULL, extra_alloc(c, numel * 4, c->pos), numel, 4};
	c->base[id] = -1;
	return id;
}

/* x padded by (pb, pe) on each spatial axis with `fill`, in a scratch
 * buffer; returns it (or x itself when there is nothing to pad) and the
 * padded spatial sizes. */
static int padded(CG *c, const Value *x, const ConvWindow *w, const int64_t *extra_end, double fill, int64_t *psize)
{
	const Shape *xs = &x->type.shape;
	bool any = false;
	Shape ps = *xs;
	for (int j = 0; j < w->ns; j++) {
		psize[j] = w->in[j] + w->pb[j] + w->pe[j] + extra_end[j];
		ps.dim[2 + j] = psize[j];
		any |= psize[j] != w->in[j];
	}
	if (!any)
		return x->id;
	int id = scratch(c, shape_numel(&ps));
	base_of(c, id);
	cg_fill(c, id, fill, shape_numel(&ps));
	int64_t istr[MAX_RANK], pstr[MAX_RANK], off = 0;
	shape_strides(xs, istr);
	shape_strides(&ps, pstr);
	for (int j = 0; j < w->ns; j++)
		off += w->pb[j] * pstr[2 + j];
	cg_copy(c, x->id, 0, istr, id, off, pstr, xs);
	return id;
}

/* Direct convolution over the padded input; the last output axis is
 * vectorized when its stride is 1. Groups split input and output channels. */
static bool cg_conv(CG *c, const Node *n)
{
	MFunc *f = c->f;
	const Value *x = n->in[0], *wv = n->in[1], *b = n->nin == 3 ? n->in[2] : NULL, *y = n->out[0];
	const Shape *xs = &x->type.shape, *ws = &wv->type.shape;
	ConvWindow w;
	if (!conv_window(n, xs, ws->dim + 2, false, &w))
		return false;
	int ns = w.ns;
	int64_t zero[3] = {0, 0, 0}, psize[3];
	int xp = padded(c, x, &w, zero, 0.0, psize);
	int64_t N = xs->dim[0], C = xs->dim[1], M = ws->dim[0], G = attr_i(n, "group");
	int64_t Cg = C / G, Mg = M / G;
	int64_t pstr[3], PS = 1, ostr[3], OS = 1, kstr[3], KS = 1;
	for (int j = ns - 1; j >= 0; j--) {
		pstr[j] = PS;
		PS *= psize[j];
		ostr[j] = OS;
		OS *= w.out[j];
		kstr[j] = KS;
		KS *= w.k[j];
	}
	int nv = loop_begin(c, 0, N, 1), gv = loop_begin(c, 0, G, 1), mv = loop_begin(c, 0, Mg, 1);
	int ov[3];
	for (int j = 0; j < ns - 1; j++)
		ov[j] = loop_begin(c, 0, w.out[j], 1);
	int last = ns - 1;
	int64_t vend = w.stride[last] == 1 ? vend_of(c, 0, w.out[last]) : 0;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : w.out[last];
		if (hi <= lo)
			continue;
		ov[last] = vloop_begin(c, lo, hi, vector);
		int acc = mfunc_vreg(f, vector ? c->vcls : c->fcls);
		if (b) {
			Affine ba = {0, {{gv, Mg}, {mv, 1}}, 2};
			BursNode *bv = load(c, b->id, &ba, false);
			sel_assign(f, acc, vector ? sel_op(f, SEL_BCAST_V, bv, NULL, NULL) : bv);
		} else {
			sel_assign(f, acc, splat(c, 0.0, vector));
		}
		int civ = loop_begin(c, 0, Cg, 1);
		int kv[3];
		for (int j = 0; j < ns; j++)
			kv[j] = loop_begin(c, 0, w.k[j], 1);
		Affine xa = {0, {{nv, C * PS}, {gv, Cg * PS}, {civ, PS}}, 3};
		Affine wa = {0, {{gv, Mg * Cg * KS}, {mv, Cg * KS}, {civ, KS}}, 3};
		for (int j = 0; j < ns; j++) {
			xa.t[xa.n++] = (Term){ov[j], w.stride[j] * pstr[j]};
			xa.t[xa.n++] = (Term){kv[j], w.dil[j] * pstr[j]};
			wa.t[wa.n++] = (Term){kv[j], kstr[j]};
		}
		BursNode *wt = load(c, wv->id, &wa, false);
		if (vector)
			wt = sel_op(f, SEL_BCAST_V, wt, NULL, NULL);
		sel_assign(f, acc, sel_op(f, vector ? SEL_FMA_V : SEL_FMA_F, wt, load(c, xp, &xa, vector), R(acc)));
		for (int j = ns - 1; j >= 0; j--)
			loop_end(c);
		loop_end(c);
		Affine ya = {0, {{nv, M * OS}, {gv, Mg * OS}, {mv, OS}}, 3};
		for (int j = 0; j < ns; j++)
			ya.t[ya.n++] = (Term){ov[j], ostr[j]};
		store(c, y->id, &ya, vector, R(acc));
		loop_end(c);
	}
	for (int j = ns - 2; j >= 0; j--)
		loop_end(c);
	loop_end(c);
	loop_end(c);
	loop_end(c);
	return true;
}

/* maxpool (padding is -inf) and avgpool (counting the padding, or with no
 * padding at all: the divisor is then the window size everywhere). */
static bool cg_pool(CG *c, const Node *n)
{
	MFunc *f = c->f;
	const Value *x = n->in[0], *y = n->out[0];
	const Shape *xs = &x->type.shape;
	const int64_t *ks;
	int nk = attr_ints(n, "kernel_shape", &ks);
	bool avg = n->op == OP_AVGPOOL;
	ConvWindow w;
	if (nk < 1 || !conv_window(n, xs, ks, attr_i(n, "ceil_mode") != 0, &w))
		return false;
	int ns = w.ns;
	/* windows that run past the padded end (ceil_mode) */
	int64_t extra[3] = {0, 0, 0}, psize[3];
	bool any_pad = false;
	for (int j = 0; j < ns; j++) {
		int64_t need = (w.out[j] - 1) * w.stride[j] + (w.k[j] - 1) * w.dil[j] + 1;
		int64_t have = w.in[j] + w.pb[j] + w.pe[j];
		extra[j] = need > have ? need - have : 0;
		any_pad |= w.pb[j] || w.pe[j] || extra[j];
	}
	(void)any_pad;
	int xp = padded(c, x, &w, extra, avg ? 0.0 : -INFINITY, psize);
	/* avgpool's divisor is a product over the axes of how many taps of the
	 * window count (inside the input, or inside the padded extent with
	 * count_include_pad): per axis a table of reciprocals, in read-only data */
	const char *rcp[3] = {NULL, NULL, NULL};
	bool include_pad = attr_i(n, "count_include_pad") != 0;
	for (int j = 0; avg && j < ns; j++) {
		Shape ts = {1, {w.out[j]}};
		Tensor *t = tensor_new(DT_F32, &ts);
		for (int64_t o = 0; o < w.out[j]; o++) {
			int64_t cnt = 0;
			for (int64_t k = 0; k < w.k[j]; k++) {
				int64_t pos = o * w.stride[j] - w.pb[j] + k * w.dil[j];
				cnt += include_pad ? (pos >= -w.pb[j] && pos < w.in[j] + w.pe[j]) : (pos >= 0 && pos < w.in[j]);
			}
			((float *)t->data)[o] = (float)(1.0 / (double)cnt);
		}
		rcp[j] = add_data(c->p, t);
	}
	int64_t NC = xs->dim[0] * xs->dim[1];
	int64_t pstr[3], PS = 1, ostr[3], OS = 1;
	for (int j = ns - 1; j >= 0; j--) {
		pstr[j] = PS;
		PS *= psize[j];
		ostr[j] = OS;
		OS *= w.out[j];
	}
	int ncv = loop_begin(c, 0, NC, 1);
	int ov[3];
	for (int j = 0; j < ns - 1; j++)
		ov[j] = loop_begin(c, 0, w.out[j], 1);
	int last = ns - 1;
	int64_t vend = w.stride[last] == 1 ? vend_of(c, 0, w.out[last]) : 0;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : w.out[last];
		if (hi <= lo)
			continue;
		ov[last] = vloop_begin(c, lo, hi, vector);
		int acc = keep(c, splat(c, avg ? 0.0 : -INFINITY, vector), vector);
		int kv[3];
		for (int j = 0; j < ns; j++)
			kv[j] = loop_begin(c, 0, w.k[j], 1);
		Affine xa = {0, {{ncv, PS}}, 1};
		for (int j = 0; j < ns; j++) {
			xa.t[xa.n++] = (Term){ov[j], w.stride[j] * pstr[j]};
			xa.t[xa.n++] = (Term){kv[j], w.dil[j] * pstr[j]};
		}
		sel_assign(f, acc, bin(c, avg ? SEL_ADD_V : SEL_MAX_V, avg ? SEL_ADD_F : SEL_MAX_F, vector, R(acc),
				       load(c, xp, &xa, vector)));
		for (int j = ns - 1; j >= 0; j--)
			loop_end(c);
		Affine ya = {0, {{ncv, OS}}, 1};
		for (int j = 0; j < ns; j++)
			ya.t[ya.n++] = (Term){ov[j], ostr[j]};
		BursNode *v = R(acc);
		for (int j = 0; avg && j < ns; j++) {
			/* the table entry of this output position on axis j */
			BursNode *addr = sel_op(f, SEL_ADD_I, sel_sym(f, rcp[j]),
						sel_op(f, SEL_SHL_I, sel_reg(f, ov[j]), sel_consti(f, 2), NULL), NULL);
			BursNode *r;
			if (j == last && vector)
				r = sel_op(f, SEL_LOAD_V, addr, NULL, NULL);
			else if (vector)
				r = sel_op(f, SEL_BCAST_V, sel_op(f, SEL_LOAD_F, addr, NULL, NULL), NULL, NULL);
			else
				r = sel_op(f, SEL_LOAD_F, addr, NULL, NULL);
			v = bin(c, SEL_MUL_V, SEL_MUL_F, vector, v, r);
		}
		store(c, y->id, &ya, vector, v);
		loop_end(c);
	}
	for (int j = ns - 2; j >= 0; j--)
		loop_end(c);
	loop_end(c);
	return true;
}

/* ---- gather ---------------------------------------------------------------------- */
/* out[o, p, i] = data[o, k, i] with k = indices[p] (+ n when negative); an
 * index outside [-n, n) makes the function return 1 (the harness reports
 * it) instead of reading outside data. */
static bool cg_gather(CG *c, const Node *n)
{
	MFunc *f = c->f;
	const Value *x = n->in[0], *idx = n->in[1], *y = n->out[0];
	if ((idx->type.dtype != DT_I64 && idx->type.dtype != DT_I32) || c->ret < 0)
		return false;
	int axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += x->type.shape.rank;
	Rows r = rows_of(&x->type.shape, axis, axis + 1);
	int64_t np = shape_numel(&idx->type.shape);
	int ov = loop_begin(c, 0, r.outer, 1);
	int pv = loop_begin(c, 0, np, 1);
	Affine ia = {0, {{pv, 1}}, 1};
	int k = mfunc_vreg(f, c->icls);
	if (idx->type.dtype == DT_I32)
		sel_assign(f, k, sel_op(f, SEL_LOAD_I32, address(c, idx->id, &ia, 1), NULL, NULL));
	else
		sel_assign(f, k, load(c, idx->id, &ia, false));
	int lneg = sel_new_label(f), lok = sel_new_label(f);
	sel_branch(f, sel_op(f, SEL_BRLT_I, R(k), sel_consti(f, 0), NULL), lneg);
	sel_branch(f, sel_op(f, SEL_BRLT_I, R(k), sel_consti(f, r.n), NULL), lok);
	sel_branch(f, sel_op(f, SEL_JUMP, NULL, NULL, NULL), c->err_label);
	sel_label(f, lneg);
	sel_assign(f, k, sel_op(f, SEL_ADD_I, R(k), sel_consti(f, r.n), NULL));
	sel_branch(f, sel_op(f, SEL_BRLT_I, R(k), sel_consti(f, 0), NULL), c->err_label);
	sel_label(f, lok);
	c->ranges[c->nranges++] = (Loop){k, 0, r.n, 1, -1, false, -1};
	/* i64 elements move as scalars: a vector of f32 lanes holds half as
	 * many (regression: tests/backend/gather_i64_rows.ir, found by the
	 * differential tester) */
	bool scalar = is_i64(c, x->id);
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t vend = scalar ? 0 : vend_of(c, 0, r.inner);
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : r.inner;
		if (hi <= lo)
			continue;
		int iv = vloop_begin(c, lo, hi, vector);
		Affine xa = {0, {{ov, r.n * r.inner}, {k, r.inner}, {iv, 1}}, 3};
		Affine ya = {0, {{ov, np * r.inner}, {pv, r.inner}, {iv, 1}}, 3};
		store(c, y->id, &ya, vector, load(c, x->id, &xa, vector));
		loop_end(c);
	}
	c->nranges--;
	loop_end(c);
	loop_end(c);
	return true;
}

/* ---- matmul and gemm -------------------------------------------------------- */
typedef struct MatmulCtx MatmulCtx;
static void matmul_rows_scalable(CG *c, const MatmulCtx *m, int nv, int mv, int mr);

typedef struct MatmulCtx {
	const Value *A, *B, *C, *Y;
	int64_t M, N, K, a_m, a_k, b_k;
	double alpha, beta;
	int64_t cstr[2];
	int nbatch;
	int bv[MAX_RANK];
	int64_t astr[MAX_RANK], bstr[MAX_RANK], ystr[MAX_RANK];
} MatmulCtx;

/* alpha v + beta C for a product v of Y (vector or scalar), C at ca (its
 * term along n has coefficient cstr[1]: 0 when C is broadcast along n) */
static BursNode *gemm_epilogue(CG *c, const MatmulCtx *m, BursNode *v, const Affine *ca, bool vector)
{
	if (m->alpha != 1.0)
		v = bin(c, SEL_MUL_V, SEL_MUL_F, vector, v, splat(c, m->alpha, vector));
	if (!m->C || m->beta == 0.0)
		return v;
	BursNode *cv = vector && m->cstr[1] == 0 ? sel_op(c->f, SEL_BCAST_V, load(c, m->C->id, ca, false), NULL, NULL)
						 : load(c, m->C->id, ca, vector);
	if (m->beta != 1.0)
		cv = bin(c, SEL_MUL_V, SEL_MUL_F, vector, cv, splat(c, m->beta, vector));
	return bin(c, SEL_ADD_V, SEL_ADD_F, vector, v, cv);
}

/* Scalable vectors: an N strip of vl columns times MR rows, MR accumulators
 * (register groups) across the k loop sharing one load of B per k: the
 * unrolling over rows, MR from the vector registers left by the kernel's
 * LMUL (`--emit=loops` and the report show both). */
static void cg_matmul_strips(CG *c, const MatmulCtx *m)
{
	const RegClassInfo *vc = &c->t->regclasses[target_root_class(c->t, c->vcls)];
	int regs = 0;
	for (int r = 0; r < vc->nregs; r++)
		regs += !vc->reserved[r];
	int mr = regs / c->f->lmul - 2;
	if (mr > 8)
		mr = 8;
	if (mr < 1)
		mr = 1;
	c->p->gemm_mr = mr;
	c->p->gemm_kc = 0;
	int64_t m_main = m->M / mr * mr;
	int nv = vloop_begin(c, 0, m->N, true);
	if (m_main > 0) {
		int mv = loop_begin(c, 0, m_main, mr);
		matmul_rows_scalable(c, m, nv, mv, mr);
		loop_end(c);
	}
	if (m_main < m->M) {
		int mv = loop_begin(c, m_main, m->M, 1);
		matmul_rows_scalable(c, m, nv, mv, 1);
		loop_end(c);
	}
	loop_end(c);
}

static void matmul_rows_scalable(CG *c, const MatmulCtx *m, int nv, int mv, int mr)
{
	MFunc *f = c->f;
	int acc[8];
	for (int i = 0; i < mr; i++)
		acc[i] = keep(c, splat(c, 0.0, true), true);
	int kv = loop_begin(c, 0, m->K, 1);
	Affine ba = {0, {{kv, m->b_k}, {nv, 1}}, 2};
	for (int q = 0; q < m->nbatch; q++)
		ba.t[ba.n++] = (Term){m->bv[q], m->bstr[q]};
	int b = keep(c, load(c, m->B->id, &ba, true), true);
	for (int i = 0; i < mr; i++) {
		Affine aa = {i * m->a_m, {{mv, m->a_m}, {kv, m->a_k}}, 2};
		for (int q = 0; q < m->nbatch; q++)
			aa.t[aa.n++] = (Term){m->bv[q], m->astr[q]};
		sel_assign(f, acc[i], sel_op(f, SEL_FMA_V, sel_op(f, SEL_BCAST_V, load(c, m->A->id, &aa, false), NULL, NULL), R(b),
					     R(acc[i])));
	}
	loop_end(c);
	for (int i = 0; i < mr; i++) {
		Affine ca = {i * m->cstr[0], {{mv, m->cstr[0]}, {nv, m->cstr[1]}}, 2};
		BursNode *v = gemm_epilogue(c, m, R(acc[i]), &ca, true);
		Affine ya = {i * m->N, {{mv, m->N}, {nv, 1}}, 2};
		for (int q = 0; q < m->nbatch; q++)
			ya.t[ya.n++] = (Term){m->bv[q], m->ystr[q]};
		store(c, m->Y->id, &ya, true, v);
	}
}

/* An access through a moving pointer (ptr + disp bytes), checked as the
 * affine access it stands for. */
static BursNode *ptr_access(CG *c, int value, const Affine *equiv, int lanes, int ptr, int64_t disp)
{
	check_access(c, value, equiv, lanes);
	if (c->p->loops) {
		indent(c);
		fprintf(c->p->loops, "  %s %s[%lld", lanes > 1 ? "vector" : "scalar", value_name(c, value), (long long)equiv->off);
		for (int i = 0; i < equiv->n; i++)
			fprintf(c->p->loops, " + %lld*%%v%d", (long long)equiv->t[i].coef, equiv->t[i].var);
		fprintf(c->p->loops, "] via pointer %%v%d%+lld\n", ptr, (long long)disp);
	}
	BursNode *p = sel_reg(c->f, ptr);
	return disp ? sel_op(c->f, SEL_ADD_I, p, sel_consti(c->f, disp), NULL) : p;
}

/* One register block: mr rows x nr vectors of Y, accumulators in registers
 * across the k loop; A and B walked by pointers (a broadcast of A and nr
 * loads of B feed mr * nr FMAs per k). */
static void matmul_block(CG *c, const MatmulCtx *m, int mv, int nv, int mr, int nr, int64_t k0, int64_t k1)
{
	MFunc *f = c->f;
	bool first = k0 == 0, last = k1 == m->K;
	int acc[8][2];
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++) {
			if (first) {
				acc[i][j] = keep(c, splat(c, 0.0, true), true);
			} else { /* the partial sums of the earlier k blocks */
				Affine ya = {i * m->N + j * c->lanes, {{mv, m->N}, {nv, 1}}, 2};
				for (int q = 0; q < m->nbatch; q++)
					ya.t[ya.n++] = (Term){m->bv[q], m->ystr[q]};
				acc[i][j] = keep(c, load(c, m->Y->id, &ya, true), true);
			}
		}
	/* pointers to A[m, k0] and B[k0, n] */
	Affine aa = {k0 * m->a_k, {{mv, m->a_m}}, 1}, ba = {k0 * m->b_k, {{nv, 1}}, 1};
	for (int i = 0; i < m->nbatch; i++) {
		aa.t[aa.n++] = (Term){m->bv[i], m->astr[i]};
		ba.t[ba.n++] = (Term){m->bv[i], m->bstr[i]};
	}
	int pa = mfunc_vreg(f, c->icls), pb = mfunc_vreg(f, c->icls);
	sel_assign(f, pa, address(c, m->A->id, &aa, 1));
	sel_assign(f, pb, address(c, m->B->id, &ba, c->lanes));
	aa.off -= k0 * m->a_k;
	ba.off -= k0 * m->b_k;
	int kv = loop_begin(c, k0, k1, 1);
	int b[2];
	for (int j = 0; j < nr; j++) {
		Affine e = ba;
		e.off += j * c->lanes;
		e.t[e.n++] = (Term){kv, m->b_k};
		b[j] = keep(c, sel_op(f, SEL_LOAD_V, ptr_access(c, m->B->id, &e, c->lanes, pb, 4 * j * c->lanes), NULL, NULL), true);
	}
	for (int i = 0; i < mr; i++) {
		Affine e = aa;
		e.off += i * m->a_m;
		e.t[e.n++] = (Term){kv, m->a_k};
		int a = keep(c, sel_op(f, SEL_BCAST_V, sel_op(f, SEL_LOAD_F, ptr_access(c, m->A->id, &e, 1, pa, 4 * i * m->a_m), NULL, NULL),
				       NULL, NULL), true);
		for (int j = 0; j < nr; j++)
			sel_assign(f, acc[i][j], sel_op(f, SEL_FMA_V, R(a), R(b[j]), R(acc[i][j])));
	}
	sel_assign(f, pa, sel_op(f, SEL_ADD_I, R(pa), sel_consti(f, 4 * m->a_k), NULL));
	sel_assign(f, pb, sel_op(f, SEL_ADD_I, R(pb), sel_consti(f, 4 * m->b_k), NULL));
	loop_end(c);
	/* epilogue: alpha, beta C, store (partial sums as they are) */
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++) {
			BursNode *v = R(acc[i][j]);
			if (!last) {
				Affine ya = {i * m->N + j * c->lanes, {{mv, m->N}, {nv, 1}}, 2};
				for (int q = 0; q < m->nbatch; q++)
					ya.t[ya.n++] = (Term){m->bv[q], m->ystr[q]};
				store(c, m->Y->id, &ya, true, v);
				continue;
			}
			Affine ca = {i * m->cstr[0] + j * c->lanes * m->cstr[1], {{mv, m->cstr[0]}, {nv, m->cstr[1]}}, 2};
			v = gemm_epilogue(c, m, v, &ca, true);
			Affine ya = {i * m->N + j * c->lanes, {{mv, m->N}, {nv, 1}}, 2};
			for (int q = 0; q < m->nbatch; q++)
				ya.t[ya.n++] = (Term){m->bv[q], m->ystr[q]};
			store(c, m->Y->id, &ya, true, v);
		}
}

/* Column blocks of 2 vectors, then 1; row blocks of MR rows, then 1. MR
 * comes from the register file: 2 * MR accumulators + 2 rows of B + 1
 * broadcast must fit the vector registers the target allocates. */
static void cg_matmul_blocked(CG *c, const MatmulCtx *m, int64_t vend)
{
	const RegClassInfo *vc = &c->t->regclasses[target_root_class(c->t, c->vcls)];
	int free_regs = 0;
	for (int r = 0; r < vc->nregs; r++)
		free_regs += !vc->reserved[r];
	int mr = (free_regs - 3) / 2;
	if (mr > 8)
		mr = 8;
	if (mr < 1)
		mr = 1;
	c->p->gemm_mr = mr;
	int64_t w2 = 2 * c->lanes;
	int64_t n2 = vend / w2 * w2;
	int64_t m_main = m->M / mr * mr;
	/* K blocks: the slice of a B panel (KC rows of 2 vectors) stays in half
	 * of the L1 data cache while every row block of A streams past it. */
	const ParamInfo *l1 = target_param(c->t, "l1d_bytes");
	int64_t kc = l1 && l1->n ? (int64_t)l1->values[0] / 2 / (w2 * 4) : m->K;
	if (kc < 16)
		kc = 16;
	c->p->gemm_kc = (int)kc;
	for (int64_t k0 = 0; k0 < m->K; k0 += kc) {
		int64_t k1 = k0 + kc < m->K ? k0 + kc : m->K;
		for (int cb = 0; cb < 2; cb++) {
			int nr = cb == 0 ? 2 : 1;
			int64_t lo = cb == 0 ? 0 : n2, hi = cb == 0 ? n2 : vend;
			if (hi <= lo)
				continue;
			int nv = loop_begin(c, lo, hi, nr * c->lanes);
			if (m_main > 0) {
				int mv = loop_begin(c, 0, m_main, mr);
				matmul_block(c, m, mv, nv, mr, nr, k0, k1);
				loop_end(c);
			}
			if (m_main < m->M) {
				int mv = loop_begin(c, m_main, m->M, 1);
				matmul_block(c, m, mv, nv, 1, nr, k0, k1);
				loop_end(c);
			}
			loop_end(c);
		}
	}
}

/* ---- array tiles (matrix engines) --------------------------------------------
 * A GEMM Y[m, j] = sum_k A[m, k] B[k, j] on an n x n systolic array whose
 * tiles live in a scratchpad filled by DMA (docs/npu.md).  The index spaces
 * are tiles: i (rows of A and Y, one dimension), j (columns of B and Y) and
 * k (the reduction), the last two as nested sub-dimensions so that a
 * convolution's im2col tiles are generated by DMA addresses (j = image,
 * output row, column tile; k = kernel row, kernel column, channel tile).
 * Each sub-dimension moves the DRAM address of A, B and Y by a fixed number
 * of bytes; the innermost one of j and k carries the edge (a partial tile).
 *
 * The schedule: a panel of bm row tiles of A (for a chunk of k) stays in the
 * scratchpad; the k-row of B tiles for each j streams in by DMA, double
 * buffered (the DMA of j overlaps the array's work on j - 1); bm accumulator
 * tiles collect the products; the results go out through a double-buffered
 * staging area.  bm and the k chunk are chosen by a cost model from the
 * .md's array, scratchpad, accumulator and DMA parameters. */
typedef struct {
	int64_t count;
	int64_t off[3]; /* bytes per step in A, B, Y */
} TDim;

/* B tiles gathered from an unpadded NCHW input (j = image, output row,
 * column tile; k = kernel row, kernel column, channel tile) */
typedef struct {
	bool on;
	int64_t C, H, W, pt, pl, sh, dh, dw;
	int64_t sw, Wd;        /* column stride; the input's columns per phase (W / sw, rounded up) */
} TileConv;

typedef struct {
	TDim di;
	int nj, nk;
	TDim dj[4], dk[4];     /* outer to inner */
	int64_t m_ext, n_ext, k_ext;
	int64_t ld[3];         /* DRAM bytes between rows of A, B and Y */
	int base[3];           /* their base address vregs */
	TileConv cv;           /* B is a convolution's input, read in place */
	bool bt;               /* B stored transposed: its tiles come in as n rows of k (mma.t) */
} TileGemm;

typedef struct {
	int n, slots, banks;
	int64_t spt, tb, rb;   /* tiles in the scratchpad, bytes per tile, per row */
	double bw, lat;
	bool os;               /* output-stationary dataflow (else weight-stationary) */
	bool bt;               /* B tiles transposed (mma.t) */
	int bm;                /* accumulator tiles per panel */
	int64_t kc;            /* outer k indices per chunk */
	double est;            /* estimated cycles */
} TilePlan;

static double tparam(const Target *t, const char *name, double dflt)
{
	const ParamInfo *p = target_param(t, name);
	return p && p->n ? p->values[0] : dflt;
}

/* The one node that reads v, if v is not a model output and only it does. */
static const Node *sole_user(CG *c, const Value *v)
{
	if (v->nuses != 1 || v->is_output)
		return NULL;
	const Graph *g = c->p->g;
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i]->nin; k++)
			if (g->nodes[i]->in[k] == v)
				return g->nodes[i];
	return NULL;
}

/* Does the target run this node on a matrix engine? (its legality row is
 * native with strategy(tiles), and the target has tile registers) */
static bool uses_tiles(CG *c, const Node *n)
{
	const LegalEntry *e = c->legal[n->id];
	return e && e->action == LEGAL_NATIVE && e->strategy == LEGAL_STRATEGY_tiles && target_class_for(c->t, SORT_T) >= 0;
}

static bool tile_plan(CG *c, const TileGemm *g, TilePlan *pl)
{
	const Target *t = c->t;
	int n = (int)tparam(t, "array_rows", 0);
	if (n <= 0 || n != (int)tparam(t, "array_cols", 0))
		return false;
	int tcls = target_class_for(t, SORT_T);
	const RegClassInfo *rc = &t->regclasses[tcls];
	int slots = 0;
	for (int r = 0; r < rc->nregs; r++)
		slots += !rc->reserved[r];
	pl->n = n;
	pl->slots = slots;
	const ParamInfo *df = target_param(t, "dataflow");
	pl->os = df && df->str && strcmp(df->str, "output_stationary") == 0;
	pl->bt = g->bt;
	pl->bm = 0;
	pl->kc = 0;
	pl->banks = (int)tparam(t, "scratchpad_banks", 1);
	pl->rb = (int64_t)n * 4;
	pl->tb = pl->rb * n;
	pl->spt = (int64_t)tparam(t, "scratchpad_bytes", 0) / pl->tb;
	pl->bw = tparam(t, "dma_bytes_per_cycle", 1);
	pl->lat = tparam(t, "dma_latency_cycles", 0);
	/* (k is chunked along its innermost sub-dimension: a chunk is all of
	 * the outer ones times a range of it) */
	int64_t Mt = (g->m_ext + n - 1) / n, Jt = 1, Kin = 1, Kout = g->dk[g->nk - 1].count;
	for (int i = 0; i < g->nj; i++)
		Jt *= g->dj[i].count;
	for (int i = 0; i < g->nk - 1; i++)
		Kin *= g->dk[i].count;
	if (Mt <= 0 || Jt <= 0 || Kout <= 0 || Kin <= 0)
		return false;
	double tdma = (double)pl->tb / pl->bw, best = -1;
	for (int bm = 1; bm <= slots && bm <= Mt && bm <= 64; bm++) {
		for (int64_t kc = Kout; kc >= 1; kc--) {
			int64_t Kc = kc * Kin, chunks = (Kout + kc - 1) / kc, panels = (Mt + bm - 1) / bm;
			int64_t need = bm * Kc + 2 * Kc + 2 * bm + (chunks > 1 ? bm : 0) + 1;
			if (need > pl->spt)
				continue;
			if (panels * chunks > 256)
				break;
			double load = (double)(bm * Kc) * tdma, compute = (double)(Jt * Kc * bm * n);
			if (pl->os) /* each accumulator switch drains the array and refills it */
				compute += (double)(Jt * bm * (3 * n - 2));
			double stream = (double)(Jt * (Kc + bm * (chunks > 1 ? 2 : 1))) * tdma;
			double est = (double)(panels * chunks) * (load + (compute > stream ? compute : stream) + pl->lat + 3.0 * n);
			if (best < 0 || est < best) {
				best = est;
				pl->bm = bm;
				pl->kc = kc;
			}
			break; /* (smaller chunks of the same bm only cost more) */
		}
	}
	pl->est = best;
	return best >= 0;
}

#define TI(k) sel_consti(c->f, (k))
#define TOP(o, a, b) sel_op(c->f, (o), (a), (b), NULL)

/* x * k, a shift when k is a power of two (the control core's multiply
 * takes 3 cycles, its shift 1) */
static BursNode *tmul(CG *c, BursNode *x, int64_t k)
{
	if (k > 0 && (k & (k - 1)) == 0) {
		int sh = 0;
		while ((1LL << sh) < k)
			sh++;
		return sh ? TOP(SEL_SHL_I, x, TI(sh)) : x;
	}
	return TOP(SEL_MUL_I, x, TI(k));
}

/* min(n, ext - idx * n): the rows or columns of a possibly partial tile */
static BursNode *tile_extent(CG *c, int idx, int64_t ext, int n)
{
	return TOP(SEL_MIN_I, TI(n), TOP(SEL_SUB_I, TI(ext), tmul(c, R(idx), n)));
}

/* base + sum idx * off[which] */
static BursNode *tile_addr(CG *c, BursNode *base, const TDim *d, const int *vars, int nd, int which)
{
	for (int i = 0; i < nd; i++)
		if (d[i].off[which])
			base = TOP(SEL_ADD_I, base, tmul(c, R(vars[i]), d[i].off[which]));
	return base;
}

static int tile_keep(CG *c, BursNode *v)
{
	int r = mfunc_vreg(c->f, c->icls);
	sel_assign(c->f, r, v);
	return r;
}

/* The accumulators before a j: zeros, or (a later k chunk) what the
 * earlier chunks wrote to Y, unless jn < 1 (no j yet: skipped; jn -1:
 * always). */
static void tile_init(CG *c, const TileGemm *g, const TilePlan *pl, int64_t p0, int bm, bool first, int64_t yin, int jn,
		      int yaddr, int cols, const int *acc)
{
	MFunc *f = c->f;
	int n = pl->n;
	for (int ii = 0; ii < bm; ii++)
		sel_assign(f, acc[ii], sel_op(f, SEL_TZERO, NULL, NULL, NULL));
	if (first)
		return;
	int skip = sel_new_label(f);
	if (jn >= 0)
		sel_branch(f, TOP(SEL_BRLT_I, R(jn), TI(1)), skip);
	sel_effect(f, sel_op(f, SEL_DMA_CFG, TOP(SEL_SHL_I, R(cols), TI(2)), TI(g->ld[2]), TI(0)));
	for (int ii = 0; ii < bm; ii++) {
		int64_t rows = g->m_ext - (p0 + ii) * n < n ? g->m_ext - (p0 + ii) * n : n;
		sel_effect(f, sel_op(f, SEL_DMA_IN, TI(yin + ii * pl->tb), TOP(SEL_ADD_I, R(yaddr), TI((p0 + ii) * g->di.off[2])),
				     TI(rows)));
		sel_assign(f, acc[ii], sel_op(f, SEL_TLOAD, TI(yin + ii * pl->tb), NULL, NULL));
	}
	sel_label(f, skip);
}

/* acc[ii] += panel tile (ii, k) x stream tile k, for from <= ii < to and
 * the k whose tile offset (k times the tile's bytes) is in vreg kofs */
static void tile_mmas(CG *c, const TilePlan *pl, int from, int to, int64_t Kc, int64_t panel, int buf, int kofs, const int *acc)
{
	MFunc *f = c->f;
	for (int ii = from; ii < to; ii++) {
		BursNode *a = TOP(SEL_ADD_I, TI(panel + ii * Kc * pl->tb), R(kofs));
		BursNode *b = TOP(SEL_ADD_I, R(buf), R(kofs));
		sel_assign(f, acc[ii], sel_op(f, pl->bt ? SEL_TMMA_T : SEL_TMMA, R(acc[ii]), a, b));
	}
}

/* The accumulators out: to the staging tiles, then by DMA to Y. */
static void tile_out(CG *c, const TileGemm *g, const TilePlan *pl, int64_t p0, int bm, int outbuf, int yaddr, int cols,
		     const int *acc)
{
	MFunc *f = c->f;
	int n = pl->n;
	for (int ii = 0; ii < bm; ii++)
		sel_effect(f, TOP(SEL_TSTORE, TOP(SEL_ADD_I, R(outbuf), TI(ii * pl->tb)), R(acc[ii])));
	sel_effect(f, sel_op(f, SEL_DMA_CFG, TOP(SEL_SHL_I, R(cols), TI(2)), TI(g->ld[2]), TI(0)));
	for (int ii = 0; ii < bm; ii++) {
		int64_t rows = g->m_ext - (p0 + ii) * n < n ? g->m_ext - (p0 + ii) * n : n;
		sel_effect(f, sel_op(f, SEL_DMA_OUT, TOP(SEL_ADD_I, R(outbuf), TI(ii * pl->tb)),
				     TOP(SEL_ADD_I, R(yaddr), TI((p0 + ii) * g->di.off[2])), TI(rows)));
	}
}

/* The k loops of one chunk: every outer sub-dimension, the innermost over
 * [k0, k1); from sub-dimension `from` on (the outer ones already open). */
static void tile_k_loops(CG *c, const TileGemm *g, int *kv, int from, int64_t k0, int64_t k1)
{
	for (int i = from; i < g->nk; i++)
		kv[i] = i == g->nk - 1 ? loop_begin(c, k0, k1, 1) : loop_begin(c, 0, g->dk[i].count, 1);
}

static void cg_tile_gemm(CG *c, const TileGemm *g, const TilePlan *pl)
{
	MFunc *f = c->f;
	int n = pl->n, tcls = target_class_for(c->t, SORT_T);
	int64_t Mt = (g->m_ext + n - 1) / n, Kin = 1, Kout = g->dk[g->nk - 1].count;
	for (int i = 0; i < g->nk - 1; i++)
		Kin *= g->dk[i].count;
	int64_t chunks = (Kout + pl->kc - 1) / pl->kc;
	if (c->p->loops) {
		indent(c);
		fprintf(c->p->loops, "tiles %dx%d: panels of %d row tiles x %lld k tiles in the scratchpad, k in %lld chunk(s), "
				     "B streamed by double-buffered DMA; estimated %.0f cycles\n",
			n, n, pl->bm, (long long)(pl->kc * Kin), (long long)chunks, pl->est);
	}
	int acc[64];
	for (int i = 0; i < pl->bm; i++)
		acc[i] = mfunc_vreg(f, tcls);
	for (int64_t p0 = 0; p0 < Mt; p0 += pl->bm) {
		int bm = (int)(Mt - p0 < pl->bm ? Mt - p0 : pl->bm);
		for (int64_t ch = 0; ch < chunks; ch++) {
			int64_t k0 = ch * pl->kc, k1 = k0 + pl->kc < Kout ? k0 + pl->kc : Kout, Kc = (k1 - k0) * Kin;
			/* the scratchpad: the panel one row off the banks of the rest */
			int64_t panel = pl->rb, s0 = (panel + bm * Kc * pl->tb + pl->tb - 1) / pl->tb * pl->tb;
			int64_t s1 = s0 + Kc * pl->tb, o0 = s1 + Kc * pl->tb, o1 = o0 + bm * pl->tb, yin = o1 + bm * pl->tb;
			/* load the panel: A rows of tiles p0..p0+bm, k chunk */
			int kcnt = tile_keep(c, TI(0));
			int kv[4];
			tile_k_loops(c, g, kv, 0, k0, k1);
			int kcols = tile_keep(c, tile_extent(c, kv[g->nk - 1], g->k_ext, n));
			sel_effect(f, sel_op(f, SEL_DMA_CFG, TOP(SEL_SHL_I, R(kcols), TI(2)), TI(g->ld[0]), TI(0)));
			int arow = tile_keep(c, tile_addr(c, R(g->base[0]), g->dk, kv, g->nk, 0));
			for (int ii = 0; ii < bm; ii++) {
				int64_t rows = g->m_ext - (p0 + ii) * n < n ? g->m_ext - (p0 + ii) * n : n;
				BursNode *sp = TOP(SEL_ADD_I, TI(panel + ii * Kc * pl->tb), R(kcnt));
				sel_effect(f, sel_op(f, SEL_DMA_IN, sp, TOP(SEL_ADD_I, R(arow), TI((p0 + ii) * g->di.off[0])), TI(rows)));
			}
			sel_assign(f, kcnt, TOP(SEL_ADD_I, R(kcnt), TI(pl->tb)));
			for (int i = g->nk - 1; i >= 0; i--)
				loop_end(c);
			/* stream B's k-rows over j, computing on the previous one */
			int cur = tile_keep(c, TI(s0)), prev = tile_keep(c, TI(s1));
			int ocur = tile_keep(c, TI(o0));
			int yprev = tile_keep(c, TI(0)), cprev = tile_keep(c, TI(0)), jn = tile_keep(c, TI(0));
			int jv[4];
			for (int i = 0; i < g->nj; i++)
				jv[i] = loop_begin(c, 0, g->dj[i].count, 1);
			int jcols = tile_keep(c, tile_extent(c, jv[g->nj - 1], g->n_ext, n));
			int brow = g->cv.on ? -1 : tile_keep(c, tile_addr(c, R(g->base[1]), g->dj, jv, g->nj, 1));
			/* software pipelined: the k-row of j streams in while the array
			 * works on j - 1 */
			tile_init(c, g, pl, p0, bm, ch == 0, yin, jn, yprev, cprev, acc);
			/* (two versions of the k loop: with the array's work on j - 1,
			 * and, for the first j, the loads alone) */
			int first_j = sel_new_label(f), k_done = sel_new_label(f);
			sel_branch(f, TOP(SEL_BRLT_I, R(jn), TI(1)), first_j);
			for (int pass = 0; pass < 2; pass++) {
				if (pass == 1)
					sel_label(f, first_j);
				/* output stationary: one accumulator at a time through the
				 * whole k row (each switch drains and refills the array);
				 * weight stationary: all of them at each k */
				int nsub = pass == 0 && pl->os ? bm : 1;
				for (int sub = 0; sub < nsub; sub++) {
				bool loads = sub == 0;
				sel_assign(f, kcnt, TI(0));
				BursNode *src = NULL, *nrows = NULL;
				if (!loads) {
					tile_k_loops(c, g, kv, 0, k0, k1);
				} else if (g->cv.on) {
					/* a convolution's B tile: channels ci0.. of input row ih at
					 * columns iw0.., clipped to the image; the DMA zero-fills
					 * the padding (rows outside: an empty transfer) */
					const TileConv *q = &g->cv;
					kv[0] = loop_begin(c, 0, g->dk[0].count, 1);
					BursNode *ih = TOP(SEL_SUB_I, TOP(SEL_ADD_I, tmul(c, R(jv[1]), q->sh), tmul(c, R(kv[0]), q->dh)), TI(q->pt));
					int ihv = tile_keep(c, ih);
					BursNode *ok1 = TOP(SEL_MIN_I, TOP(SEL_MAX_I, TOP(SEL_ADD_I, R(ihv), TI(1)), TI(0)), TI(1));
					BursNode *ok2 = TOP(SEL_MIN_I, TOP(SEL_MAX_I, TOP(SEL_SUB_I, TI(q->H), R(ihv)), TI(0)), TI(1));
					int ihok = tile_keep(c, TOP(SEL_MIN_I, ok1, ok2));
					BursNode *ihc = TOP(SEL_MIN_I, TOP(SEL_MAX_I, R(ihv), TI(0)), TI(q->H - 1));
					/* the input row: image, clamped row (phase rows of Wd for a column stride) */
					int rowbase = tile_keep(c, TOP(SEL_ADD_I, TOP(SEL_ADD_I, R(g->base[1]), tmul(c, R(jv[0]), q->C * q->H * q->sw * q->Wd * 4)),
								       tmul(c, ihc, q->sw * q->Wd * 4)));
					/* kernel columns unrolled: input column ow * sw + kw * dw - pl is
					 * column ow + qq of phase pp (a column stride reads the phases) */
					for (int64_t kwc = 0; kwc < g->dk[1].count; kwc++) {
						int64_t off = kwc * q->dw - q->pl, pp = ((off % q->sw) + q->sw) % q->sw, qq = (off - pp) / q->sw;
						int64_t wv = (q->W - pp + q->sw - 1) / q->sw; /* columns of phase pp */
						int iw0 = tile_keep(c, TOP(SEL_ADD_I, tmul(c, R(jv[2]), n), TI(qq)));
						int lo = tile_keep(c, TOP(SEL_MAX_I, R(iw0), TI(0)));
						int cnt = tile_keep(c, TOP(SEL_SUB_I, TOP(SEL_MIN_I, TOP(SEL_ADD_I, R(iw0), R(jcols)), TI(wv)), R(lo)));
						BursNode *ok3 = TOP(SEL_MIN_I, TOP(SEL_MAX_I, R(cnt), TI(0)), TI(1));
						int valid = tile_keep(c, TOP(SEL_MIN_I, R(ihok), ok3));
						int rowv = tile_keep(c, TOP(SEL_ADD_I, R(rowbase), TOP(SEL_SHL_I, TOP(SEL_ADD_I, R(lo), TI(pp * q->Wd)), TI(2))));
						sel_effect(f, sel_op(f, SEL_DMA_CFG, TOP(SEL_SHL_I, TOP(SEL_MAX_I, R(cnt), TI(1)), TI(2)), TI(q->H * q->sw * q->Wd * 4),
								     TOP(SEL_SHL_I, TOP(SEL_MIN_I, TOP(SEL_SUB_I, R(lo), R(iw0)), TI(n - 1)), TI(2))));
						kv[2] = loop_begin(c, k0, k1, 1);
						BursNode *csrc = TOP(SEL_ADD_I, R(rowv), tmul(c, R(kv[2]), n * q->H * q->sw * q->Wd * 4));
						BursNode *cn = TOP(SEL_MIN_I, tile_extent(c, kv[2], g->k_ext, n), tmul(c, R(valid), n));
						BursNode *csp = TOP(SEL_ADD_I, R(cur), R(kcnt));
						sel_effect(f, sel_op(f, SEL_DMA_IN, csp, csrc, cn));
						if (pass == 0)
							tile_mmas(c, pl, 0, pl->os ? 1 : bm, Kc, panel, prev, kcnt, acc);
						sel_assign(f, kcnt, TOP(SEL_ADD_I, R(kcnt), TI(pl->tb)));
						loop_end(c);
					}
					loop_end(c);
				} else if (g->bt) {
					/* B^T: rows are n, each k tile's row length its own */
					tile_k_loops(c, g, kv, 0, k0, k1);
					sel_effect(f, sel_op(f, SEL_DMA_CFG, TOP(SEL_SHL_I, tile_extent(c, kv[g->nk - 1], g->k_ext, n), TI(2)),
							     TI(g->ld[1]), TI(0)));
					src = tile_addr(c, R(brow), g->dk, kv, g->nk, 1);
					nrows = R(jcols);
				} else {
					sel_effect(f, sel_op(f, SEL_DMA_CFG, TOP(SEL_SHL_I, R(jcols), TI(2)), TI(g->ld[1]), TI(0)));
					tile_k_loops(c, g, kv, 0, k0, k1);
					src = tile_addr(c, R(brow), g->dk, kv, g->nk, 1);
					nrows = tile_extent(c, kv[g->nk - 1], g->k_ext, n);
				}
				if (loads && g->cv.on)
					continue; /* (loads and the array's work done above) */
				if (loads) {
					BursNode *sp = TOP(SEL_ADD_I, R(cur), R(kcnt));
					sel_effect(f, sel_op(f, SEL_DMA_IN, sp, src, nrows));
				}
				if (pass == 0)
					tile_mmas(c, pl, pl->os ? sub : 0, pl->os ? sub + 1 : bm, Kc, panel, prev, kcnt, acc);
				sel_assign(f, kcnt, TOP(SEL_ADD_I, R(kcnt), TI(pl->tb)));
				for (int i = g->nk - 1; i >= 0; i--)
					loop_end(c);
				}
				if (pass == 0)
					sel_branch(f, sel_op(f, SEL_JUMP, NULL, NULL, NULL), k_done);
			}
			sel_label(f, k_done);
			int skip = sel_new_label(f);
			sel_branch(f, TOP(SEL_BRLT_I, R(jn), TI(1)), skip);
			tile_out(c, g, pl, p0, bm, ocur, yprev, cprev, acc);
			sel_assign(f, ocur, TOP(SEL_SUB_I, TI(o0 + o1), R(ocur)));
			sel_label(f, skip);
			sel_assign(f, yprev, tile_addr(c, R(g->base[2]), g->dj, jv, g->nj, 2));
			sel_assign(f, cprev, R(jcols));
			sel_assign(f, prev, R(cur));
			sel_assign(f, cur, TOP(SEL_SUB_I, TI(s0 + s1), R(cur)));
			sel_assign(f, jn, TOP(SEL_ADD_I, R(jn), TI(1)));
			for (int i = g->nj - 1; i >= 0; i--)
				loop_end(c);
			/* the last j */
			tile_init(c, g, pl, p0, bm, ch == 0, yin, -1, yprev, cprev, acc);
			for (int sub = 0; sub < (pl->os ? bm : 1); sub++) {
				int kk = loop_begin(c, 0, Kc * pl->tb, (int)pl->tb);
				tile_mmas(c, pl, pl->os ? sub : 0, pl->os ? sub + 1 : bm, Kc, panel, prev, kk, acc);
				loop_end(c);
			}
			tile_out(c, g, pl, p0, bm, ocur, yprev, cprev, acc);
			/* (a later chunk reads Y back: its DMA must have landed) */
			sel_effect(f, sel_op(f, SEL_FENCE, NULL, NULL, NULL));
		}
	}
}

/* matmul / gemm on the array: A row-major (B may be a transposed constant:
 * transposed here, at compile time); batches are an outer loop; alpha, beta
 * and C in a vector pass over Y afterwards. */
/* The array plan of an M x N x K product exists (the scratchpad holds a
 * panel): what matmul_transposed_b needs to know before the matmul. */
static bool tile_gemm_fits(CG *c, int64_t M, int64_t N, int64_t K)
{
	int n = (int)tparam(c->t, "array_rows", 0);
	if (n <= 0 || M <= 0 || N <= 0 || K <= 0)
		return false;
	TileGemm g = {0};
	g.m_ext = M;
	g.n_ext = N;
	g.k_ext = K;
	g.di.count = (M + n - 1) / n;
	g.nj = g.nk = 1;
	g.dj[0].count = (N + n - 1) / n;
	g.dk[0].count = (K + n - 1) / n;
	TilePlan pl = {0};
	return tile_plan(c, &g, &pl);
}

/* A matmul on the array whose B is a transpose (read by nothing else) of
 * a value X in which B's k axis is contiguous: the array reads X's rows as
 * B^T tiles (mma.t) and the transpose is never materialized. Returns the
 * transpose node, the bytes between B's n rows in X and B's batch strides
 * in X (elements); NULL otherwise. */
static const Node *matmul_transposed_b(CG *c, const Node *mm, int64_t *ld, int64_t *bstr)
{
	if (mm->op != OP_MATMUL || !uses_tiles(c, mm))
		return NULL;
	const Value *A = mm->in[0], *B = mm->in[1], *Y = mm->out[0];
	const Node *tr = B->def;
	int r = B->type.shape.rank;
	if (!tr || tr->op != OP_TRANSPOSE || sole_user(c, B) != mm || r < 2 || A->type.shape.rank < 2 ||
	    Y->type.shape.rank != r || B->type.dtype != DT_F32)
		return NULL;
	/* the matmul reads the transpose's operand: its bytes must still be its own then */
	const Value *X = tr->in[0];
	if (c->buf[X->id].kind == BUF_WS && mm->id > c->plan->last[X->id])
		return NULL;
	for (int i = 0; i < r - 2; i++)
		if (B->type.shape.dim[i] != Y->type.shape.dim[i])
			return NULL; /* (a broadcast batch: not here) */
	int perm[MAX_RANK];
	transpose_perm(tr, r, perm);
	int64_t xs[MAX_RANK];
	shape_strides(&tr->in[0]->type.shape, xs);
	if (xs[perm[r - 2]] != 1)
		return NULL;
	const Shape *as = &A->type.shape;
	if (!tile_gemm_fits(c, as->dim[as->rank - 2], B->type.shape.dim[r - 1], B->type.shape.dim[r - 2]))
		return NULL;
	*ld = xs[perm[r - 1]] * 4;
	for (int i = 0; i < r - 2; i++)
		bstr[i] = xs[perm[i]];
	return tr;
}

static bool cg_tile_matmul(CG *c, const MatmulCtx *m, const Shape *batch, int tb, bool a1, bool b1)
{
	MFunc *f = c->f;
	if (m->a_k != 1 || m->M <= 0 || m->N <= 0 || m->K <= 0)
		return false;
	/* B^T: a constant is transposed at compile time; anything else comes
	 * in transposed (mma.t), as does a fused transpose's input */
	bool cbt = tb && c->buf[m->B->id].kind == BUF_CONST && !batch->rank && const_data(c, m->B->id);
	int64_t trld = 0, trstr[MAX_RANK] = {0};
	const Node *tr = !tb && !a1 && !b1 ? matmul_transposed_b(c, c->node, &trld, trstr) : NULL;
	bool bt = (tb && !cbt) || tr;
	int64_t lda = m->a_m * 4, ldb = tr ? trld : (tb ? (cbt ? m->N : m->K) : m->b_k) * 4, ldy = (b1 ? 1 : m->N) * 4;
	TileGemm g = {0};
	g.m_ext = m->M;
	g.n_ext = m->N;
	g.k_ext = m->K;
	g.ld[0] = lda;
	g.ld[1] = ldb;
	g.ld[2] = ldy;
	TilePlan pl = {0};
	int n = (int)tparam(c->t, "array_rows", 0);
	if (n <= 0)
		return false;
	g.di = (TDim){(m->M + n - 1) / n, {n * lda, 0, n * ldy}};
	g.nj = 1;
	g.dj[0] = (TDim){(m->N + n - 1) / n, {0, bt ? n * ldb : n * 4, n * 4}};
	g.nk = 1;
	g.dk[0] = (TDim){(m->K + n - 1) / n, {n * 4, bt ? n * 4 : n * ldb, 0}};
	g.bt = bt;
	if (!tile_plan(c, &g, &pl))
		return false;
	const char *bsym = NULL;
	if (cbt) {
		/* B^T, transposed now (the plan holds: nothing reads the old layout) */
		const Buf *bb = &c->buf[m->B->id];
		if (bb->kind != BUF_CONST || batch->rank)
			return false;
		const Tensor *src = const_data(c, m->B->id);
		if (!src)
			return false;
		Shape ts = {2, {m->K, m->N}};
		Tensor *tt = tensor_new(DT_F32, &ts);
		for (int64_t k = 0; k < m->K; k++)
			for (int64_t j = 0; j < m->N; j++)
				((float *)tt->data)[k * m->N + j] = ((const float *)src->data)[j * m->K + k];
		bsym = const_relayout(c, m->B->id, tt);
	}
	int bv[MAX_RANK];
	for (int i = 0; i < batch->rank; i++)
		bv[i] = loop_begin(c, 0, batch->dim[i], 1);
	const int64_t *strs[3] = {m->astr, tr ? trstr : m->bstr, m->ystr};
	int ids[3] = {m->A->id, tr ? tr->in[0]->id : m->B->id, m->Y->id};
	if (tr && c->p->loops) {
		indent(c);
		fprintf(c->p->loops, "fused into this kernel: transpose %s (B read transposed: mma.t)\n", m->B->name);
	}
	for (int o = 0; o < 3; o++) {
		BursNode *b = o == 1 && bsym ? sel_sym(f, bsym) : R(base_of(c, ids[o]));
		for (int i = 0; i < batch->rank; i++)
			if (strs[o][i])
				b = TOP(SEL_ADD_I, b, TOP(SEL_MUL_I, R(bv[i]), TI(strs[o][i] * 4)));
		g.base[o] = tile_keep(c, b);
	}
	cg_tile_gemm(c, &g, &pl);
	for (int i = batch->rank - 1; i >= 0; i--)
		loop_end(c);
	if (m->alpha == 1.0 && (!m->C || m->beta == 0.0))
		return true;
	/* Y = alpha Y + beta C, on the vector unit */
	for (int i = 0; i < batch->rank; i++)
		bv[i] = loop_begin(c, 0, batch->dim[i], 1);
	int mv = loop_begin(c, 0, m->M, 1);
	int64_t vend = vend_of(c, 0, m->N);
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : m->N;
		if (hi <= lo)
			continue;
		int nv = vloop_begin(c, lo, hi, vector);
		Affine ya = {0};
		for (int i = 0; i < batch->rank; i++)
			ya.t[ya.n++] = (Term){bv[i], m->ystr[i]};
		ya.t[ya.n++] = (Term){mv, a1 ? 0 : b1 ? 1 : m->N};
		ya.t[ya.n++] = (Term){nv, 1};
		Affine ca = {0, {{mv, m->cstr[0]}, {nv, m->cstr[1]}}, 2};
		store(c, m->Y->id, &ya, vector, gemm_epilogue(c, m, load(c, m->Y->id, &ya, vector), &ca, vector));
		loop_end(c);
	}
	loop_end(c);
	for (int i = batch->rank - 1; i >= 0; i--)
		loop_end(c);
	return true;
}

/* 2-D convolution (one group, constant weights) as a GEMM whose B tiles
 * the DMA gathers from the input (clipping rows: the padding; a column
 * stride reads the input split by column phase): the weights are reordered
 * at compile time to [M, kh, kw, C], so that a k tile is n channels of one
 * kernel position, rows one channel plane apart. */
static bool cg_tile_conv(CG *c, const Node *n)
{
	MFunc *f = c->f;
	const Value *x = n->in[0], *wv = n->in[1], *b = n->nin == 3 ? n->in[2] : NULL, *y = n->out[0];
	const Shape *xs = &x->type.shape, *ws = &wv->type.shape;
	ConvWindow w;
	if (xs->rank != 4 || attr_i(n, "group") != 1 || !conv_window(n, xs, ws->dim + 2, false, &w) || w.ns != 2)
		return false;
	const Tensor *src = const_data(c, wv->id);
	if (!src)
		return false;
	int64_t N = xs->dim[0], C = xs->dim[1], M = ws->dim[0], KH = w.k[0], KW = w.k[1];
	int64_t HO = w.out[0], WO = w.out[1], P = HO * WO, K2 = KH * KW * C;
	int nn = (int)tparam(c->t, "array_rows", 0);
	if (nn <= 0 || N <= 0 || M <= 0 || C <= 0 || P <= 0)
		return false;
	int64_t hp = w.in[0], wp = w.in[1]; /* the input's own size (the DMA pads) */
	TileGemm g = {0};
	g.m_ext = M;
	g.n_ext = WO;
	g.k_ext = C;
	g.ld[0] = K2 * 4;
	g.ld[1] = hp * wp * 4;
	g.ld[2] = P * 4;
	g.di = (TDim){(M + nn - 1) / nn, {nn * K2 * 4, 0, nn * P * 4}};
	g.nj = 3;
	g.dj[0] = (TDim){N, {0, C * hp * wp * 4, M * P * 4}};
	g.dj[1] = (TDim){HO, {0, w.stride[0] * wp * 4, WO * 4}};
	g.dj[2] = (TDim){(WO + nn - 1) / nn, {0, nn * 4, nn * 4}};
	g.nk = 3;
	g.dk[0] = (TDim){KH, {KW * C * 4, w.dil[0] * wp * 4, 0}};
	g.dk[1] = (TDim){KW, {C * 4, w.dil[1] * 4, 0}};
	g.dk[2] = (TDim){(C + nn - 1) / nn, {nn * 4, nn * hp * wp * 4, 0}};
	TilePlan pl = {0};
	if (!tile_plan(c, &g, &pl))
		return false;
	/* a relu right after folds into the bias pass.  (A batchnorm after the
	 * conv is the graph pass bnfold's to fold into the weights and bias;
	 * where it did not run, the batchnorm is its own per-channel
	 * multiply-add, batchnorm_affine.) */
	const Node *rl = sole_user(c, y);
	if (rl && rl->op != OP_RELU)
		rl = NULL;
	const Value *out = rl ? rl->out[0] : y;
	Shape rs = {4, {M, KH, KW, C}};
	Tensor *rt = tensor_new(DT_F32, &rs);
	for (int64_t m = 0; m < M; m++)
		for (int64_t ch = 0; ch < C; ch++)
			for (int64_t i = 0; i < KH; i++)
				for (int64_t j = 0; j < KW; j++)
					((float *)rt->data)[((m * KH + i) * KW + j) * C + ch] =
						((const float *)src->data)[((m * C + ch) * KH + i) * KW + j];
	if (rl) {
		c->fused[rl->id] = true;
		if (c->p->loops) {
			indent(c);
			fprintf(c->p->loops, "fused into this kernel: relu %s\n", rl->out[0]->name);
		}
	}
	const char *wsym = const_relayout(c, wv->id, rt);
	int64_t sw = w.stride[1], Wd = (w.in[1] + sw - 1) / sw;
	g.cv = (TileConv){true, C, w.in[0], w.in[1], w.pb[0], w.pb[1], w.stride[0], w.dil[0], w.dil[1], sw, Wd};
	int xin = x->id;
	if (sw > 1) {
		/* a column stride: the input split by column phase on the vector
		 * unit, [N, C, H, sw, Wd], so that each DMA row is contiguous */
		int64_t H = w.in[0], W = w.in[1];
		xin = scratch(c, N * C * H * sw * Wd);
		base_of(c, xin);
		if (W % sw)
			cg_fill(c, xin, 0.0, N * C * H * sw * Wd);
		for (int64_t ph = 0; ph < sw && ph < W; ph++) {
			Shape cs = {4, {N, C, H, (W - ph + sw - 1) / sw}};
			int64_t ic[MAX_RANK] = {C * H * W, H * W, W, sw}, oc[MAX_RANK] = {C * H * sw * Wd, H * sw * Wd, sw * Wd, 1};
			cg_copy(c, x->id, ph, ic, xin, ph * Wd, oc, &cs);
		}
	}
	g.base[0] = tile_keep(c, sel_sym(f, wsym));
	g.base[1] = tile_keep(c, R(base_of(c, xin)));
	g.base[2] = tile_keep(c, R(base_of(c, out->id)));
	cg_tile_gemm(c, &g, &pl);
	if (b || rl) {
		/* the bias (and relu), on the vector unit; the channel's bias
		 * loaded (and broadcast) once per channel */
		int nv = loop_begin(c, 0, N, 1), mv = loop_begin(c, 0, M, 1);
		int64_t vend = vend_of(c, 0, P);
		int bs = -1, bvec = -1;
		if (b) {
			Affine ba = {0, {{mv, 1}}, 1};
			bs = keep(c, load(c, b->id, &ba, false), false);
			if (vend > 0)
				bvec = keep(c, sel_op(f, SEL_BCAST_V, R(bs), NULL, NULL), true);
		}
		for (int pass = 0; pass < 2; pass++) {
			bool vector = pass == 0;
			int64_t lo = vector ? 0 : vend, hi = vector ? vend : P;
			if (hi <= lo)
				continue;
			int pv = vloop_begin(c, lo, hi, vector);
			Affine ya = {0, {{nv, M * P}, {mv, P}, {pv, 1}}, 3};
			BursNode *v = load(c, out->id, &ya, vector);
			if (b)
				v = bin(c, SEL_ADD_V, SEL_ADD_F, vector, v, R(vector ? bvec : bs));
			if (rl)
				v = bin(c, SEL_MAX_V, SEL_MAX_F, vector, v, splat(c, 0.0, vector));
			store(c, out->id, &ya, vector, v);
			loop_end(c);
		}
		loop_end(c);
		loop_end(c);
	}
	return true;
}

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
	MatmulCtx mc = {A, B, C, Y, M, N, K, a_m, a_k, b_k, alpha, beta, {cstr[0], cstr[1]}, batch.rank, {0}, {0}, {0}, {0}};
	for (int i = 0; i < batch.rank; i++) {
		mc.astr[i] = astr_b[i];
		mc.bstr[i] = bstr_b[i];
		mc.ystr[i] = ystr_b[i];
	}
	if (uses_tiles(c, n) && cg_tile_matmul(c, &mc, &batch, tb, a1, b1))
		return;
	int bv[MAX_RANK];
	for (int i = 0; i < batch.rank; i++)
		mc.bv[i] = bv[i] = loop_begin(c, 0, batch.dim[i], 1);
	int64_t vend = b_n == 1 ? vend_of(c, 0, N) : 0;
	if (vend > 0 && K > 0 && c->scalable && !a1 && !b1) {
		cg_matmul_strips(c, &mc);
		for (int i = batch.rank - 1; i >= 0; i--)
			loop_end(c);
		return;
	}
	if (vend > 0 && K > 0 && !c->scalable) {
		/* register-blocked micro-kernels over the vector columns */
		cg_matmul_blocked(c, &mc, vend);
	}
	if (vend > 0 && K > 0 && !c->scalable)
		vend = vend_of(c, 0, N); /* done: only the scalar columns remain */
	int mv = loop_begin(c, 0, M, 1);
	bool blocked = vend > 0 && K > 0 && !c->scalable;
	for (int pass = 0; pass < 2; pass++) {
		bool vector = pass == 0;
		int64_t lo = vector ? 0 : vend, hi = vector ? vend : N;
		if (hi <= lo || (vector && blocked))
			continue;
		int nv = vloop_begin(c, lo, hi, vector);
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
		Affine ca = {0, {{mv, cstr[0]}, {nv, cstr[1]}}, 2};
		BursNode *v = gemm_epilogue(c, &mc, sel_reg(f, acc), &ca, vector);
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
/* How many vector values a kernel keeps live at once, roughly: its
 * register pressure, for the LMUL choice. */
static int vector_pressure(const Node *n)
{
	switch (n->op) {
	case OP_POW: return 22;
	case OP_ERF: case OP_GELU: case OP_LOG: case OP_LOGSOFTMAX: return 16;
	case OP_EXP: case OP_SIGMOID: case OP_TANH: case OP_SOFTMAX: return 12;
	case OP_LEAKY_RELU: case OP_HARDSWISH: case OP_HARDSIGMOID: case OP_CLIP: return 5;
	case OP_LAYERNORM: case OP_BATCHNORM: return 6;
	default: return n->nin + 2;
	}
}

/* A scalable-vector kernel's register group: the largest of the .md's
 * `lmul` choices whose groups still hold the kernel's live vectors in the
 * allocatable vector registers (fixed-width targets: 1). */
static int choose_lmul(CG *c, const Node *n)
{
	if (!c->scalable)
		return 1;
	const RegClassInfo *vc = &c->t->regclasses[target_root_class(c->t, c->vcls)];
	int regs = 0;
	for (int r = 0; r < vc->nregs; r++)
		regs += !vc->reserved[r];
	int best = 1, p = vector_pressure(n);
	for (int i = 0; i < c->t->nlmul; i++) {
		int l = c->t->lmul[i];
		if (l > best && p * l <= regs)
			best = l;
	}
	return best;
}

/* ---- the lowering of one node: the legality decision dispatches ------------ */
/* A native row goes through its op's entry of core/lowerings.def, an
 * expand(NAME) row through NAME's function in core/expansions.def.  Each
 * function returns false for a node it does not lower (reported). */
typedef bool (*LowerFn)(CG *c, const Node *n, const LegalEntry *e);

/* every operand and the (first) result of dtype dt */
static bool all_of(const Node *n, DType dt)
{
	bool ok = n->out[0]->type.dtype == dt;
	for (int i = 0; i < n->nin; i++)
		ok &= n->in[i]->type.dtype == dt;
	return ok;
}

/* the elementwise kernels: f32 in vectors; i32 add/sum/max/min in W
 * vectors; i32 copies as the bits in f32 lanes; i64 as scalars */
static bool lower_elementwise(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	bool copy = is_copy(n->op) || n->op == OP_IDENTITY;
	if (all_of(n, DT_F32) && (is_elementwise(n->op) || is_copy(n->op)) && !(n->op == OP_DROPOUT && n->nout > 1)) {
		cg_elementwise(c, n);
		return true;
	}
	if (all_of(n, DT_I32) && (n->op == OP_ADD || n->op == OP_SUM || n->op == OP_MAX || n->op == OP_MIN)) {
		c->w_mode = true;
		cg_elementwise(c, n);
		c->w_mode = false;
		return true;
	}
	if (all_of(n, DT_I32) && copy) {
		cg_elementwise(c, n);
		return true;
	}
	if (all_of(n, DT_I64) && (copy || n->op == OP_ADD || n->op == OP_SUB || n->op == OP_MUL || n->op == OP_MIN ||
				  n->op == OP_MAX || n->op == OP_SUM || n->op == OP_NEG)) {
		c->int_mode = true;
		cg_elementwise(c, n);
		c->int_mode = false;
		return true;
	}
	return false;
}

/* expand(scalar_loop): an i64 elementwise op as a scalar loop */
static bool ex_scalar_loop(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	if (!all_of(n, DT_I64) || !(n->op == OP_ABS || n->op == OP_CLIP || n->op == OP_NEG || n->op == OP_ADD ||
				    n->op == OP_SUB || n->op == OP_MUL || n->op == OP_MIN || n->op == OP_MAX ||
				    n->op == OP_SUM || n->op == OP_IDENTITY || is_copy(n->op)))
		return false;
	c->int_mode = true;
	cg_elementwise(c, n);
	c->int_mode = false;
	return true;
}

/* the transcendental expansions (exp_poly, log_poly, tanh_exp, sigmoid_exp,
 * erf_poly, gelu_erf / gelu_tanh: the node's `approximate` picks, pow_exp_log),
 * inside the f32 elementwise loop */
static bool ex_transcendental(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	if (!all_of(n, DT_F32) || !(n->op == OP_EXP || n->op == OP_LOG || n->op == OP_TANH || n->op == OP_SIGMOID ||
				    n->op == OP_ERF || n->op == OP_GELU || n->op == OP_POW))
		return false;
	cg_elementwise(c, n);
	return true;
}

static bool lower_dropout(CG *c, const Node *n, const LegalEntry *e)
{
	if (n->nout != 2 || !all_of(n, DT_F32))
		return lower_elementwise(c, n, e);
	/* inference: y = x, and a mask of true bytes */
	const Value *x = n->in[0], *y = n->out[0], *mask = n->out[1];
	int64_t str[MAX_RANK];
	shape_strides(&x->type.shape, str);
	cg_copy(c, x->id, 0, str, y->id, 0, str, &x->type.shape);
	if (mask->nuses || mask->is_output) {
		base_of(c, mask->id);
		int64_t numel = shape_numel(&mask->type.shape);
		if (numel > 0) {
			int iv = loop_begin(c, 0, numel, 1);
			Affine ma = {0, {{iv, 1}}, 1};
			sel_effect(c->f, sel_op(c->f, SEL_STORE_I8, address(c, mask->id, &ma, 1), sel_consti(c->f, 1), NULL));
			loop_end(c);
		}
	}
	return true;
}

/* data movement copies bits: i32 as f32 lanes, i64 as scalars */
static bool lower_movement(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	DType dt = n->nin ? n->in[0]->type.dtype : n->out[0]->type.dtype;
	return (dt == DT_F32 || dt == DT_I32 || dt == DT_I64) && cg_movement(c, n);
}

/* gather moves bits: 4-byte elements (f32, i32) in f32 lanes, i64 as scalars */
static bool lower_gather(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	DType t = n->in[0]->type.dtype;
	return (t == DT_F32 || t == DT_I32 || t == DT_I64) && cg_gather(c, n);
}

static bool lower_shape(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	const Value *y = n->out[0];
	const int64_t *in = n->in[0]->type.shape.dim;
	int64_t k = shape_numel(&y->type.shape), start = attr_i(n, "start");
	if (start < 0)
		start += n->in[0]->type.shape.rank;
	if (start < 0)
		start = 0;
	for (int64_t i = 0; i < k; i++) {
		Affine a = {i, {{0}}, 0};
		store(c, y->id, &a, false, sel_consti(c->f, in[start + i]));
	}
	return true;
}

static bool lower_constant_of_shape(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	DType dt = n->out[0]->type.dtype;
	if (dt != DT_F32 && dt != DT_I64 && dt != DT_I32)
		return false;
	/* (i32: the value's bits, moved as f32 lanes) */
	cg_fill(c, n->out[0]->id, attr_f(n, "value"), shape_numel(&n->out[0]->type.shape));
	return true;
}

static bool lower_global_pool(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	if (!all_of(n, DT_F32))
		return false;
	cg_global_pool(c, n);
	return true;
}

static bool lower_reduce_mean(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	return all_of(n, DT_F32) && cg_reduce_mean(c, n);
}

/* expand(reduce_loop): reduce_mean, and the global pools */
static bool ex_reduce_loop(CG *c, const Node *n, const LegalEntry *e)
{
	if (n->op == OP_REDUCE_MEAN)
		return lower_reduce_mean(c, n, e);
	if (n->op == OP_GLOBAL_AVGPOOL || n->op == OP_GLOBAL_MAXPOOL)
		return lower_global_pool(c, n, e);
	return false;
}

/* native, and expand(batchnorm_affine) */
static bool lower_batchnorm(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	return n->op == OP_BATCHNORM && all_of(n, DT_F32) && cg_batchnorm(c, n);
}

/* native, and expand(pool_loop) */
static bool lower_pool(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	return (n->op == OP_MAXPOOL || n->op == OP_AVGPOOL) && all_of(n, DT_F32) && cg_pool(c, n);
}

static bool ex_softmax(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	if (n->op != OP_SOFTMAX || !all_of(n, DT_F32))
		return false;
	cg_softmax(c, n);
	return true;
}

static bool ex_logsoftmax(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	if (n->op != OP_LOGSOFTMAX || !all_of(n, DT_F32))
		return false;
	cg_logsoftmax(c, n);
	return true;
}

static bool ex_layernorm(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	return n->op == OP_LAYERNORM && all_of(n, DT_F32) && cg_layernorm(c, n);
}

/* matmul and gemm: on the matrix engine where the row says strategy(tiles)
 * (uses_tiles), else blocked vector loops */
static bool lower_matmul(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	if (!(n->op == OP_MATMUL || n->op == OP_GEMM) || !all_of(n, DT_F32))
		return false;
	cg_matmul(c, n);
	return true;
}

/* expand(depthwise_loop), and conv's loop nest */
static bool ex_conv_loop(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	return n->op == OP_CONV && all_of(n, DT_F32) && cg_conv(c, n);
}

static bool lower_conv(CG *c, const Node *n, const LegalEntry *e)
{
	if (n->op != OP_CONV || !all_of(n, DT_F32))
		return false;
	if (uses_tiles(c, n) && cg_tile_conv(c, n))
		return true;
	return ex_conv_loop(c, n, e);
}

/* expand(loop_nest): matmul, gemm and conv as loop nests */
static bool ex_loop_nest(CG *c, const Node *n, const LegalEntry *e)
{
	if (n->op == OP_CONV)
		return ex_conv_loop(c, n, e);
	return lower_matmul(c, n, e);
}

/* core/lowerings.def: per op, its native lowering and the dtypes it handles */
#define D(x) (1u << DT_##x)
static const struct {
	LowerFn fn;
	unsigned dtypes;
} native_lowering[OP_COUNT] = {
#define LOWER(op, dtypes, fn, strategies) [OP_##op] = {fn, (dtypes)},
#include "lowerings.def"
};
#undef D

/* core/expansions.def: per expansion, its function (NULL: none yet) */
#define NO_IMPL NULL
static const LowerFn expansion_lowering[EXPANSION_COUNT] = {
#define EXPANSION(name, fn, what) [EXPANSION_##name] = fn,
#include "expansions.def"
#undef EXPANSION
};
#undef NO_IMPL

static bool lower_node(CG *c, const Node *n)
{
	const Target *t = c->t;
	if (n->op == OP_CONSTANT)
		return true;
	const LegalEntry *e = c->legal[n->id];
	DType dt = n->nin ? n->in[0]->type.dtype : n->out[0]->type.dtype;
	char ty[160];
	type_str(n->nin ? &n->in[0]->type : &n->out[0]->type, ty, sizeof ty);
	if (!e || e->action == LEGAL_UNSUPPORTED || e->action == LEGAL_FALLBACK) {
		diag_error(c->d, n->loc, "%s %s cannot run on %s: %s", op_info[n->op].name, ty, t->name,
			   !e ? "no legality row" : e->action == LEGAL_FALLBACK ? "it falls back to the host (-S and run place the model; this output does not)" : e->reason);
		return false;
	}
	if (n->op == OP_TRANSPOSE) {
		const Node *mm = sole_user(c, n->out[0]);
		int64_t ld, bstr[MAX_RANK];
		if (mm && matmul_transposed_b(c, mm, &ld, bstr) == n) {
			if (c->p->loops) {
				indent(c);
				fprintf(c->p->loops, "(read transposed by %s: not materialized)\n", mm->out[0]->name);
			}
			return true;
		}
	}
	/* results with no elements: nothing to compute (the loop nests of
	 * row ops would still walk a row of an empty tensor; regression:
	 * tests/backend/empty_results.ir, found by the differential tester) */
	bool empty = true;
	for (int i = 0; i < n->nout; i++)
		empty &= shape_numel(&n->out[i]->type.shape) == 0;
	if (empty)
		return true;
	/* the kernel's buffers' addresses, once, before its loops */
	for (int i = 0; i < n->nin; i++)
		base_of(c, n->in[i]->id);
	if (n->out[0]->nuses || n->out[0]->is_output)
		base_of(c, n->out[0]->id);
	c->int_mode = false;
	LowerFn fn = NULL;
	if (e->action == LEGAL_NATIVE)
		fn = native_lowering[n->op].dtypes & (1u << dt) ? native_lowering[n->op].fn : NULL;
	else if (e->expansion > EXPANSION_NONE && e->expansion < EXPANSION_COUNT)
		fn = expansion_lowering[e->expansion];
	if (fn && fn(c, n, e))
		return true;
	diag_error(c->d, n->loc, "%s %s: the backend does not lower this op for %s yet (legality: %s%s%s)",
		   op_info[n->op].name, ty, t->name, legal_action_name(e->action), e->rule ? " " : "", e->rule ? e->rule : "");
	return false;
}

Program *codegen_lower(const Graph *g, const Target *t, const LegalEntry *const *legal, const MemPlan *plan,
		       const char *entry, FILE *loops, Diag *d)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	Program *p = xcalloc(1, sizeof *p);
	p->t = t;
	p->g = g;
	p->loops = loops;
	p->f = mfunc_new(t, entry);
	MFunc *f = p->f;
	/* no decisions given (codegen()): decide here; a node that cannot run
	 * is reported by lower_node, as the lowering's own error */
	const LegalEntry **own_legal = NULL;
	if (!legal) {
		Diag quiet;
		diag_init(&quiet);
		own_legal = xcalloc((size_t)g->nnodes + 1, sizeof *own_legal);
		legality_decide(g, t, &quiet, NULL, own_legal);
		diag_free(&quiet);
		legal = own_legal;
	}
	CG c = {.p = p, .f = f, .t = t, .d = d, .ok = true, .legal = legal};
	c.icls = target_class_for(t, SORT_I);
	c.fcls = target_class_for(t, SORT_F);
	c.vcls = target_class_for(t, SORT_V);
	c.lanes = t->vector_bits / 32;
	c.scalable = t->scalable;
	p->lanes = c.lanes;
	p->lmul = 1;
	if (c.icls < 0 || c.fcls < 0 || c.vcls < 0) {
		diag_error(d, loc_at(NULL, 0, 0), "the backend needs i, f and v register classes; %s lacks one", t->name);
		free(own_legal);
		program_free(p);
		return NULL;
	}
	/* buffers: inputs, outputs (arguments), constants (data), the rest
	 * (workspace, where the memory plan says; none: one slot per value) */
	MemPlan *own = NULL;
	if (!plan)
		plan = own = memplan_build(g, false);
	if (plan->nvalues != g->nvalues) {
		diag_error(d, loc_at(NULL, 0, 0), "internal error: a memory plan of %d values for graph '%s' of %d", plan->nvalues,
			   g->name, g->nvalues);
		memplan_free(own);
		free(own_legal);
		program_free(p);
		return NULL;
	}
	c.plan = plan;
	p->workspace_bytes = p->planned_bytes = plan->bytes;
	p->naive_bytes = plan->naive_bytes;
	p->nshared = plan->nshared;
	p->ninplace = plan->ninplace;
	p->naliased = plan->naliased;
	/* values, one scratch buffer per node, then the output slots of
	 * outputs that are inputs or constants */
	int nbuf = g->nvalues + g->nnodes + g->noutputs;
	c.buf = xcalloc((size_t)nbuf, sizeof *c.buf);
	c.fused = xcalloc((size_t)g->nnodes + 1, sizeof *c.fused);
	c.base = xmalloc((size_t)nbuf * sizeof *c.base);
	for (int v = 0; v < nbuf; v++)
		c.base[v] = -1;
	c.moved = xcalloc((size_t)g->nvalues + 1, sizeof *c.moved);
	c.viewed = xcalloc((size_t)g->nvalues + 1, sizeof *c.viewed);
	int arg = 0;
	for (int i = 0; i < g->ninputs; i++)
		c.buf[g->inputs[i]->id] = (Buf){BUF_ARG, arg++, NULL, 0, shape_numel(&g->inputs[i]->type.shape),
						(int)dtype_size(g->inputs[i]->type.dtype)};
	int first_out = arg;
	for (int i = 0; i < g->noutputs; i++) {
		const Value *v = g->outputs[i];
		if (!v->is_input)
			c.buf[v->id] = (Buf){BUF_ARG, first_out + i, NULL, 0, shape_numel(&v->type.shape),
					     (int)dtype_size(v->type.dtype)};
	}
	arg = first_out + g->noutputs;
	p->nargs = arg + 1;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		for (int k = 0; k < n->nout; k++) {
			const Value *v = n->out[k];
			if (v->is_output && n->op != OP_CONSTANT)
				continue; /* (a constant output is data, copied to its slot) */
			int64_t numel = shape_numel(&v->type.shape);
			if (n->op == OP_CONSTANT) {
				Tensor *data = tensor_new(v->type.dtype, &v->type.shape);
				if (!materialize_constant(n, data, d)) {
					tensor_free(data);
					c.ok = false;
					continue;
				}
				c.buf[v->id] = (Buf){BUF_CONST, 0, add_data(p, data), 0, numel, (int)dtype_size(v->type.dtype)};
			} else if (plan->alias[v->id] != v->id) {
				/* a view: its storage's buffer (defined before it) */
				int root = plan->alias[v->id];
				c.buf[v->id] = c.buf[root];
				c.buf[v->id].numel = numel;
				c.buf[v->id].esize = (int)dtype_size(v->type.dtype);
				c.viewed[root] = true;
			} else if (plan->offset[v->id] < 0) {
				diag_error(d, v->loc, "internal error: the memory plan has no place for '%s'", v->name);
				c.ok = false;
			} else {
				c.buf[v->id] = (Buf){BUF_WS, 0, NULL, plan->offset[v->id], numel, (int)dtype_size(v->type.dtype)};
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
		free(own_legal);
		program_free(p);
		free(c.buf);
		free(c.base);
		free(c.based);
		free(c.fused);
		free(c.moved);
		free(c.viewed);
		memplan_free(own);
		return NULL;
	}
	int a0 = mfunc_vreg(f, acls);
	f->vregs[a0].preg = areg;
	c.args = mfunc_vreg(f, c.icls);
	sel_assign(f, c.args, sel_reg(f, a0));
	/* the return value: 0, or 1 after a run-time error */
	c.ret = -1;
	const AbiArgs *ra = t->abi.nret ? &t->abi.ret[0] : NULL;
	for (int i = 0; ra && i < t->nregclasses; i++)
		if (strcmp(t->regclasses[i].name, ra->cls) == 0 && t->regclasses[i].sort == SORT_I)
			for (int r = 0; r < t->regclasses[i].nregs; r++)
				if (strcmp(t->regclasses[i].regs[r], ra->regs[0]) == 0) {
					c.ret = mfunc_vreg(f, i);
					f->vregs[c.ret].preg = r;
				}
	c.err_label = sel_new_label(f);
	if (c.scalable) {
		/* vector code outside the strip-mined loops (broadcast scalars) runs
		 * at the machine's length: vl = VLMAX */
		int vl = mfunc_vreg(f, c.icls);
		sel_assign(f, vl, sel_op(f, SEL_SETVL, sel_consti(f, 1 << 30), sel_consti(f, 1), NULL));
	}
	if (loops)
		fprintf(loops, "function %s(args[%d]) on %s, %d lanes, workspace %lld bytes\n", entry, p->nargs, t->name,
			c.lanes, (long long)p->workspace_bytes);
	for (int i = 0; i < g->nnodes && c.ok; i++) {
		const Node *n = g->nodes[i];
		if (n->op == OP_CONSTANT || c.fused[i])
			continue;
		if (plan->alias[n->out[0]->id] != n->out[0]->id) {
			if (loops)
				fprintf(loops, "view: %s = %s of %s (no kernel)\n", n->out[0]->name, op_info[n->op].name,
					g->values[plan->alias[n->out[0]->id]]->name);
			continue;
		}
		bases_reset(&c);
		c.node = n;
		c.pos = i;
		/* the extras of the kernels before that are done */
		int kept = 0;
		for (int k = 0; k < c.nextra; k++)
			if (c.extra[k].until >= i)
				c.extra[kept++] = c.extra[k];
		c.nextra = kept;
		f->lmul = choose_lmul(&c, n);
		if (c.scalable) /* the kernel's vector type, also for its vector code outside strips */
			sel_assign(f, mfunc_vreg(f, c.icls), sel_op(f, SEL_SETVL, sel_consti(f, 1 << 30), sel_consti(f, f->lmul), NULL));
		if (f->lmul > p->lmul)
			p->lmul = f->lmul;
		if (loops)
			fprintf(loops, "kernel %d: %s = %s%s\n", p->nkernels, n->out[0]->name, op_info[n->op].name,
				c.scalable ? (f->lmul == 8 ? " (LMUL 8)" : f->lmul == 4 ? " (LMUL 4)" : f->lmul == 2 ? " (LMUL 2)" : " (LMUL 1)") : "");
		if (!lower_node(&c, n))
			c.ok = false;
		p->nkernels++;
	}
	/* outputs that are inputs or constants: copied into their slot */
	for (int i = 0; i < g->noutputs && c.ok; i++) {
		const Value *v = g->outputs[i];
		if (!v->is_input && (!v->def || v->def->op != OP_CONSTANT))
			continue;
		int es = (int)dtype_size(v->type.dtype);
		if (es != 4 && es != 8) {
			diag_error(d, v->loc, "output '%s' (%s) cannot be copied: the vocabulary has no %d-byte loads", v->name,
				   dtype_name(v->type.dtype), es);
			c.ok = false;
			break;
		}
		int slot = g->nvalues + g->nnodes + i;
		c.buf[slot] = (Buf){BUF_ARG, first_out + i, NULL, 0, shape_numel(&v->type.shape), es};
		bases_reset(&c);
		static const Node no_node;
		c.node = v->def ? v->def : &no_node;
		c.pos = g->nnodes;
		base_of(&c, v->id);
		base_of(&c, slot);
		int64_t str[MAX_RANK];
		shape_strides(&v->type.shape, str);
		cg_copy(&c, v->id, 0, str, slot, 0, str, &v->type.shape);
	}
	if (c.ret >= 0)
		sel_assign(f, c.ret, sel_consti(f, 0));
	sel_effect(f, sel_op(f, SEL_RET, NULL, NULL, NULL));
	sel_label(f, c.err_label);
	if (c.ret >= 0)
		sel_assign(f, c.ret, sel_consti(f, 1));
	sel_effect(f, sel_op(f, SEL_RET, NULL, NULL, NULL));
	free(c.buf);
	free(c.base);
	free(c.based);
	free(c.fused);
	free(c.moved);
	free(c.viewed);
	free(c.extra);
	memplan_free(own); /* (nothing keeps the plan) */
	free(own_legal);
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	p->seconds[0] = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	p->rss_kib[0] = ru.ru_maxrss;
	if (!c.ok) {
		program_free(p);
		return NULL;
	}
	return p;
}

static double since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

bool codegen_select(Program *p, Diag *d)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool ok = isel_function(p->f, d) && mfunc_verify(p->f, false, d);
	p->seconds[1] = since(&t0);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	p->rss_kib[1] = ru.ru_maxrss;
	return ok;
}

bool codegen_allocate(Program *p, Diag *d)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool ok = regalloc_function(p->f, d) && mfunc_verify(p->f, true, d);
	p->seconds[2] = since(&t0);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	p->rss_kib[2] = ru.ru_maxrss;
	p->spill_slots = 0;
	for (int v = 0; v < p->f->nvregs; v++)
		p->spill_slots += p->f->vregs[v].slot >= 0;
	return ok;
}

Program *codegen(const Graph *g, const Target *t, const MemPlan *plan, FILE *loops, Diag *d)
{
	Program *p = codegen_lower(g, t, NULL, plan, "gdcc_entry", loops, d);
	if (p && (!codegen_select(p, d) || !codegen_allocate(p, d))) {
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
	free(p->text);
	mfunc_free(p->f);
	free(p);
}
