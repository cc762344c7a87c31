/* The lowering's common ground: data symbols and constants, loops,
 * buffers and their base addresses, checked affine accesses, loads and
 * stores (cg.h). */
#include "cg.h"

/* Where a vector loop over [lo, hi) ends and the scalar remainder starts:
 * with fixed vectors, after the last whole vector; with scalable ones, at
 * hi (the strips take it all). */
int64_t cg_vend_of(CG *c, int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return lo;
	if (c->scalable)
		return hi;
	return lo + (hi - lo) / c->lanes * c->lanes;
}

/* ---- data and buffers -------------------------------------------------- */
const char *cg_add_data(Program *p, Tensor *t)
{
	if (p->ndata == p->capdata) {
		p->capdata = p->capdata ? 2 * p->capdata : 16;
		p->data = xrealloc(p->data, (size_t)p->capdata * sizeof *p->data);
	}
	char *sym = strcmp(p->entry, "gdcc_entry") == 0 ? xasprintf("gdcc_data_%d", p->ndata)
							     : xasprintf("%s_data_%d", p->entry, p->ndata);
	p->data[p->ndata++] = (DataItem){sym, t, NULL, false};
	return sym;
}

/* The data of a constant value (its compile-time tensor), or NULL. */
const Tensor *cg_const_data(CG *c, int value)
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
static const char *relayout(CG *c, int value, Tensor *t, bool any_size)
{
	const Value *v = value < c->p->g->nvalues ? c->p->g->values[value] : NULL;
	const Buf *b = &c->buf[value];
	if (v && v->nuses == 1 && !v->is_output && b->kind == BUF_CONST && c->plan->alias[value] == value && !c->viewed[value])
		for (int i = 0; i < c->p->ndata; i++)
			if (strcmp(c->p->data[i].sym, b->sym) == 0 &&
			    (any_size || tensor_bytes(c->p->data[i].data) == tensor_bytes(t))) {
				if (!c->p->data[i].borrowed)
					tensor_free(c->p->data[i].data);
				c->p->data[i].data = t;
				c->p->data[i].borrowed = false;
				return c->p->data[i].sym;
			}
	return cg_add_data(c->p, t);
}

const char *cg_const_relayout(CG *c, int value, Tensor *t)
{
	return relayout(c, value, t, false);
}

const char *cg_const_transform(CG *c, int value, Tensor *t)
{
	return relayout(c, value, t, true);
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
	return cg_add_data(c->p, t);
}

/* An i64 constant: an immediate where it fits 32 bits (every target's
 * immediates do), else loaded from read-only data. */
BursNode *cg_const_i64(CG *c, int64_t v)
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
		sym = cg_add_data(c->p, t);
	}
	return sel_op(c->f, SEL_LOAD_I, sel_sym(c->f, sym), NULL, NULL);
}

/* A float bound of an i64 clip as an integer: ceil for a lower bound,
 * floor for an upper one, saturating (kernel_clip's rule). */
int64_t cg_int_bound(double v, bool lower)
{
	v = lower ? ceil(v) : floor(v);
	if (v <= (double)INT64_MIN)
		return INT64_MIN;
	if (v >= (double)INT64_MAX)
		return INT64_MAX;
	return (int64_t)v;
}

/* ---- loops --------------------------------------------------------------- */
void cg_indent(CG *c)
{
	for (int i = 0; i < c->nloops + 1; i++)
		fputs("  ", c->p->loops);
}

static void push_loop(CG *c, Loop l)
{
	if (c->nloops == c->caploops)
		c->loops = xrealloc(c->loops, (size_t)(c->caploops = c->caploops ? 2 * c->caploops : 16) * sizeof *c->loops);
	c->loops[c->nloops++] = l;
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
		push_loop(c, (Loop){v, lo, hi, step, label, true, -1});
		return v;
	}
	sel_label(f, label);
	if (c->scalable && vector) {
		/* strip mining: each strip takes vl = setvl(hi - i) elements */
		int vl = mfunc_vreg(f, c->icls);
		sel_assign(f, vl, sel_op(f, SEL_SETVL, sel_op(f, SEL_SUB_I, sel_consti(f, hi), sel_reg(f, v), NULL),
					 sel_consti(f, f->lmul), NULL));
		if (c->p->loops) {
			cg_indent(c);
			fprintf(c->p->loops, "for %%v%d in [%lld, %lld) by strips of vl = setvl(%lld - %%v%d)\n", v, (long long)lo,
				(long long)hi, (long long)hi, v);
		}
		push_loop(c, (Loop){v, lo, hi, 1, label, false, vl});
		return v;
	}
	if (c->p->loops) {
		cg_indent(c);
		fprintf(c->p->loops, "for %%v%d in [%lld, %lld) step %d%s\n", v, (long long)lo, (long long)hi, step,
			vector ? " (vector)" : step > 1 ? " (unrolled block)" : "");
	}
	push_loop(c, (Loop){v, lo, hi, step, label, false, -1});
	return v;
}

/* A scalar loop (any step), or a vector loop: by the lanes of a fixed
 * vector, or strip-mined by setvl with scalable vectors. */
int cg_loop_begin(CG *c, int64_t lo, int64_t hi, int step)
{
	return loop_begin_(c, lo, hi, step, false);
}

int cg_vloop_begin(CG *c, int64_t lo, int64_t hi, bool vector)
{
	return loop_begin_(c, lo, hi, vector ? c->lanes : 1, vector);
}

void cg_loop_end(CG *c)
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

const Loop *cg_loop_of(CG *c, int var)
{
	for (int i = 0; i < c->nloops; i++)
		if (c->loops[i].var == var)
			return &c->loops[i];
	return NULL;
}

const char *cg_value_name(CG *c, int value)
{
	return value < c->p->g->nvalues ? c->p->g->values[value]->name : "(scratch)";
}

/* The Loop IR's contract: every access lies inside its buffer. */
void cg_check_access(CG *c, int value, const Affine *a, int lanes)
{
	for (int i = 0; i < c->nloops; i++)
		if (c->loops[i].dead)
			return; /* never executed */
	int64_t lo = a->off, hi = a->off;
	for (int i = 0; i < a->n; i++) {
		const Loop *l = cg_loop_of(c, a->t[i].var);
		int64_t first = l->lo, last = l->lo + ((l->hi - l->lo - 1) / l->step) * l->step;
		int64_t x = a->t[i].coef * first, y = a->t[i].coef * last;
		lo += x < y ? x : y;
		hi += x < y ? y : x;
	}
	if (!c->scalable)
		hi += lanes - 1; /* (a strip's vector ends inside its loop's range) */
	if (lo < 0 || hi >= c->buf[value].numel) {
		diag_error(c->d, c->node->loc, "internal error: the loop nest of %s reads or writes '%s' at [%lld, %lld], outside [0, %lld)",
			   op_info[c->node->op].name, cg_value_name(c, value), (long long)lo, (long long)hi,
			   (long long)c->buf[value].numel);
		c->ok = false;
	}
}

/* Bytes past the plan until the kernel at `until` is done: the lowest
 * offset there clear of the extras still in use (a few at a time). */
int64_t cg_extra_alloc(CG *c, int64_t bytes, int until)
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
			   op_info[c->node->op].name, cg_value_name(c, value), m->last[root]);
		c->ok = false;
		return;
	}
	const Buf *b = &c->buf[root];
	int64_t off = cg_extra_alloc(c, b->numel * b->esize, m->last[root]);
	c->moved[root] = true;
	for (int v = 0; v < c->p->g->nvalues; v++)
		if (m->alias[v] == root && c->buf[v].kind == BUF_WS)
			c->buf[v].offset = off;
	if (c->p->loops) {
		cg_indent(c);
		fprintf(c->p->loops, "(%s written before its planned lifetime: moved to workspace offset %lld)\n",
			cg_value_name(c, root), (long long)off);
	}
}

int cg_base_of(CG *c, int value)
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
void cg_bases_reset(CG *c)
{
	for (int i = 0; i < c->nbased; i++)
		c->base[c->based[i]] = -1;
	c->nbased = 0;
}

BursNode *cg_address(CG *c, int value, const Affine *a, int lanes)
{
	MFunc *f = c->f;
	cg_check_access(c, value, a, lanes);
	if (c->p->loops) {
		cg_indent(c);
		fprintf(c->p->loops, "  %s %s[%lld", lanes > 1 ? "vector" : "scalar", cg_value_name(c, value),
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
	BursNode *base = sel_reg(f, cg_base_of(c, value));
	int es = c->buf[value].esize ? c->buf[value].esize : 4;
	int shift = es == 8 ? 3 : es == 4 ? 2 : es == 2 ? 1 : 0;
	if (!idx)
		return a->off ? sel_op(f, SEL_ADD_I, base, sel_consti(f, es * a->off), NULL) : base;
	if (a->off)
		idx = sel_op(f, SEL_ADD_I, idx, sel_consti(f, a->off), NULL);
	return sel_op(f, SEL_ADD_I, base, shift ? sel_op(f, SEL_SHL_I, idx, sel_consti(f, shift), NULL) : idx, NULL);
}

bool cg_is_i64(CG *c, int value)
{
	return c->buf[value].esize == 8;
}

BursNode *cg_load(CG *c, int value, const Affine *a, bool vector)
{
	MFunc *f = c->f;
	if (cg_is_i64(c, value))
		return sel_op(f, SEL_LOAD_I, cg_address(c, value, a, 1), NULL, NULL);
	if (vector)
		return sel_op(f, SEL_LOAD_V, cg_address(c, value, a, c->lanes), NULL, NULL);
	return sel_op(f, SEL_LOAD_F, cg_address(c, value, a, 1), NULL, NULL);
}

void cg_store(CG *c, int value, const Affine *a, bool vector, BursNode *v)
{
	MFunc *f = c->f;
	if (cg_is_i64(c, value)) {
		sel_effect(f, sel_op(f, SEL_STORE_I, cg_address(c, value, a, 1), v, NULL));
		return;
	}
	sel_effect(f, sel_op(f, vector ? SEL_STORE_V : SEL_STORE_F, cg_address(c, value, a, vector ? c->lanes : 1), v, NULL));
}

BursNode *cg_splat(CG *c, double v, bool vector)
{
	MFunc *f = c->f;
	BursNode *s = sel_op(f, SEL_LOAD_F, sel_sym(f, const_f32(c, v)), NULL, NULL);
	return vector ? sel_op(f, SEL_BCAST_V, s, NULL, NULL) : s;
}

/* A value kept in a register: trees are trees, so a value used twice is
 * assigned first. */
int cg_keep(CG *c, BursNode *v, bool vector)
{
	int r = mfunc_vreg(c->f, vector ? c->vcls : c->fcls);
	sel_assign(c->f, r, v);
	return r;
}

/* ---- kernels built as Loop IR ------------------------------------------- */
/* Does the target's .md cover op on operands already in registers (of
 * the sorts sel.def gives it), its result in class cls (-1: an effect)? */
bool cg_covers(CG *c, SelOp op, int cls)
{
	const SelInfo *si = &sel_info[op];
	BursNode n[4];
	memset(n, 0, sizeof n);
	for (int i = 0; i < 4; i++)
		n[i].form = -1;
	for (int i = 0; i < si->nkids; i++) {
		Sort k = si->kid[i];
		n[i].op = k == SORT_I ? SEL_REG_I : k == SORT_F ? SEL_REG_F : k == SORT_V ? SEL_REG_V : k == SORT_W ? SEL_REG_W
			: k == SORT_M ? SEL_REG_M : k == SORT_T ? SEL_REG_T : SEL_COUNT;
		if (n[i].op == SEL_COUNT)
			return false;
		n[3].kid[i] = &n[i];
	}
	n[3].op = op;
	return isel_cost(c->t, &n[3], cls) < BURS_INF;
}

/* Does the target cover lane0.v (a vector's first lane as a scalar)? */
static bool cg_has_lane0(CG *c)
{
	return c->fcls >= 0 && cg_covers(c, SEL_LANE0_V, c->fcls);
}

/* Does the target cover prefetch (a cache hint)? */
bool cg_has_prefetch(CG *c)
{
	return cg_covers(c, SEL_PREFETCH, -1);
}

/* Does the target make a mask of the first n lanes from a count (a rule
 * for maskn in its .md)? */
static bool cg_has_maskn(CG *c)
{
	int mcls = target_class_for(c->t, SORT_M);
	return mcls >= 0 && cg_covers(c, SEL_MASKN, mcls);
}

/* The first k lanes of a fixed vector, as a mask (k is known when
 * compiling): the target's maskn of k where it has one (npu-systolic's
 * vmask: two instructions), else lane index < k, the indices from
 * read-only data. */
BursNode *cg_first_lanes(CG *c, int64_t k)
{
	if (cg_has_maskn(c))
		return sel_op(c->f, SEL_MASKN, sel_consti(c->f, k), NULL, NULL);
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

static int lw_base(void *ctx, int id)
{
	return cg_base_of(ctx, id);
}

static const char *lw_const_f32(void *ctx, double v)
{
	return const_f32(ctx, v);
}

static BursNode *lw_const_i64(void *ctx, int64_t v)
{
	return cg_const_i64(ctx, v);
}

/* A vector of lanes equal i32 values, from read-only data: on a scalable
 * target as many as a register group of the largest LMUL holds at the
 * largest VLEN (a kernel at LMUL 8 loads VLEN / 4 lanes). */
static const char *lw_const_w(void *ctx, int32_t v)
{
	CG *c = ctx;
	int lmul = 1;
	for (int i = 0; i < c->t->nlmul; i++)
		lmul = c->t->lmul[i] > lmul ? c->t->lmul[i] : lmul;
	int n = c->scalable ? c->t->vlen_max / 32 * lmul : c->lanes;
	Shape s = {1, {n}};
	Tensor *t = tensor_new(DT_I32, &s);
	for (int i = 0; i < n; i++)
		((int32_t *)t->data)[i] = v;
	return cg_add_data(c->p, t);
}

/* How a fixed-vector loop's remainder (fewer elements than a vector) runs
 * here, by what the .md says each way costs: one masked vector (a mask of
 * its first lanes, a masked load, a masked store) where that is cheaper
 * than the scalar iterations it replaces, (lanes - 1) / 2 of them on
 * average (a scalar load, a store and the loop's step and branch each);
 * else, or without a mask register class, a scalar loop.  (AVX-512's
 * opmasks win; AVX2's masked store, microcoded on Zen, does not.) */
LirTail cg_tail(CG *c)
{
	int mcls = target_class_for(c->t, SORT_M);
	if (c->scalable || c->lanes < 2 || mcls < 0)
		return LIR_TAIL_SCALAR;
	const Target *t = c->t;
	BursNode n[12];
	memset(n, 0, sizeof n);
	for (int i = 0; i < 12; i++)
		n[i].form = -1;
	n[0].op = SEL_REG_I; /* an address */
	n[1].op = SEL_REG_V;
	n[2].op = SEL_REG_M;
	n[3].op = SEL_REG_F;
	/* the mask: lane indices < a splat of the count */
	n[4].op = SEL_CMPLT_V, n[4].kid[0] = &n[1], n[4].kid[1] = &n[1];
	n[5].op = SEL_LOADM_V, n[5].kid[0] = &n[0], n[5].kid[1] = &n[2];
	n[6].op = SEL_STOREM_V, n[6].kid[0] = &n[0], n[6].kid[1] = &n[1], n[6].kid[2] = &n[2];
	n[7].op = SEL_LOAD_F, n[7].kid[0] = &n[0];
	n[8].op = SEL_STORE_F, n[8].kid[0] = &n[0], n[8].kid[1] = &n[3];
	n[9].op = SEL_ADD_I, n[9].kid[0] = &n[0], n[9].kid[1] = &n[0];
	n[10].op = SEL_BRLT_I, n[10].kid[0] = &n[0], n[10].kid[1] = &n[0];
	int64_t masked = (int64_t)isel_cost(t, &n[4], mcls) + isel_cost(t, &n[5], c->vcls) + isel_cost(t, &n[6], -1);
	int64_t scalar = (int64_t)isel_cost(t, &n[7], c->fcls) + isel_cost(t, &n[8], -1) + isel_cost(t, &n[9], c->icls) +
			 isel_cost(t, &n[10], -1);
	if (masked >= BURS_INF)
		return LIR_TAIL_SCALAR;
	return 2 * masked < (c->lanes - 1) * scalar ? LIR_TAIL_MASKED : LIR_TAIL_SCALAR;
}

/* Vectorize loop var of k with the remainder cg_tail chose (a scalar
 * one where a masked remainder cannot carry the loop's reductions). */
bool cg_vectorize(CG *c, LirKernel *k, int var)
{
	LirTail t = c->tail;
	return lir_vectorize(k, var, t) || (t == LIR_TAIL_MASKED && lir_vectorize(k, var, LIR_TAIL_SCALAR));
}

/* How many lane masks a kernel may make once before its loops: where
 * masks have registers of their own (not a vector's, nor one register the
 * vector class reserves: AVX2, RVV) and a move between them, half of those
 * registers (they stay live across the whole kernel; x86-avx512: 3 of k1-k7). */
static int cg_hoist_masks(CG *c)
{
	const Target *t = c->t;
	int mcls = target_class_for(t, SORT_M);
	if (mcls < 0 || c->scalable)
		return 0;
	int root = target_root_class(t, mcls);
	if (root == target_root_class(t, c->vcls) || (c->fcls >= 0 && root == target_root_class(t, c->fcls)) ||
	    !t->regclasses[root].move)
		return 0;
	const RegClassInfo *mc = &t->regclasses[root];
	int n = 0;
	for (int r = 0; r < mc->nregs; r++)
		n += !mc->reserved[r];
	int lim = regalloc_max_regs();
	return (n < lim ? n : lim) / 2;
}

static BursNode *lw_first_lanes(void *ctx, int64_t k)
{
	return cg_first_lanes(ctx, k);
}

/* A buffer of the kernel: the lowering's buffer `id` (a value, or a
 * kernel's scratch). */
int cg_lir_buffer(CG *c, LirKernel *k, int id)
{
	const Buf *b = &c->buf[id];
	return lir_buffer(k, cg_value_name(c, id), b->numel, b->esize ? b->esize : 4, id);
}

/* Verify k, hoist its invariant address arithmetic, print it
 * (--emit=loops) when `print`, and lower it into the function at this
 * point. */
bool cg_lir_run(CG *c, LirKernel *k, bool print)
{
	/* as built, then with the invariant address arithmetic hoisted out of
	 * each loop (checked again: a transform's mistake is caught here) */
	if (!lir_verify(k, c->d, c->node->loc) || (lir_hoist(k) > 0 && !lir_verify(k, c->d, c->node->loc))) {
		c->ok = false;
		return false;
	}
	if (print && c->p->loops)
		lir_print(c->p->loops, k);
	LirLower l = {c->f, c->icls, c->fcls, c->vcls, target_class_for(c->t, SORT_W), target_class_for(c->t, SORT_M), c,
		      lw_base, lw_const_f32, lw_const_i64, lw_const_w, lw_first_lanes, c->ret >= 0 ? c->err_label : -1,
		      cg_has_lane0(c), cg_has_prefetch(c), cg_hoist_masks(c)};
	if (!lir_lower(k, &l)) {
		diag_error(c->d, c->node->loc, "internal error: the Loop IR of %s could not be lowered for %s", k->name, c->t->name);
		c->ok = false;
		return false;
	}
	return true;
}
