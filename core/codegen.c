/* Lowering of a verified graph to loop nests and selection trees: the
 * driver.  Each node becomes a kernel: its legality decision (legalize)
 * picks the builder, by op through core/lowerings.def for native rows and
 * by name through core/expansions.def for expand(NAME); the builders, by
 * family, are in the kern_*.c files (cg.h).  The trees use only the
 * vocabulary of sel.def; which instructions cover them is the target's
 * business (isel.c). */
#include <time.h>
#include <sys/resource.h>

#include "cg.h"

/* ---- the program ---------------------------------------------------------------- */
/* How many vector values a kernel keeps live at once, roughly: its
 * register pressure, for the LMUL choice. */
static int vector_pressure(const Node *n)
{
	switch (n->op) {
	case OP_POW: return 22;
	case OP_ERF: case OP_GELU: case OP_LOG: case OP_LOGSOFTMAX: case OP_REDUCE_LOG_SUM: case OP_REDUCE_LOG_SUM_EXP:
		return 16;
	case OP_EXP: case OP_SIGMOID: case OP_TANH: case OP_SOFTMAX: case OP_ELU: case OP_SELU: case OP_CELU: return 12;
	case OP_SINH: case OP_COSH: case OP_SOFTPLUS: case OP_ASINH: case OP_ACOSH: case OP_ATANH: return 16;
	case OP_SIN: case OP_COS: case OP_TAN: case OP_ASIN: case OP_ACOS: case OP_ATAN: return 16;
	case OP_LEAKY_RELU: case OP_HARDSWISH: case OP_HARDSIGMOID: case OP_CLIP: return 5;
	case OP_PRELU: case OP_SOFTSIGN: case OP_THRESHOLDED_RELU: return 5;
	case OP_SHRINK: case OP_SIGN: case OP_FLOOR: case OP_CEIL: return 6;
	case OP_LAYERNORM: case OP_BATCHNORM: return 6;
	default: return n->nin + 2;
	}
}

/* A scalable-vector kernel's register group: the largest of the .md's
 * `lmul` choices whose groups still hold the kernel's live vectors in the
 * allocatable vector registers (fixed-width targets: 1). */
static int choose_lmul(CG *c, const Node *n, int extra)
{
	if (!c->scalable)
		return 1;
	const RegClassInfo *vc = &c->t->regclasses[target_root_class(c->t, c->vcls)];
	int regs = 0;
	for (int r = 0; r < vc->nregs; r++)
		regs += !vc->reserved[r];
	int best = 1, p = vector_pressure(n) + extra;
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
	bool copy = cg_is_copy(n->op) || n->op == OP_IDENTITY;
	if (all_of(n, DT_F32) && (cg_is_elementwise(n->op) || cg_is_copy(n->op)) && !(n->op == OP_DROPOUT && n->nout > 1))
		return cg_ew_kernel(c, &n, 1, EW_F32);
	if (all_of(n, DT_I32) && (n->op == OP_ADD || n->op == OP_SUM || n->op == OP_MAX || n->op == OP_MIN || copy))
		return cg_ew_kernel(c, &n, 1, EW_I32);
	if (all_of(n, DT_I64) && (copy || n->op == OP_ADD || n->op == OP_SUB || n->op == OP_MUL || n->op == OP_MIN ||
				  n->op == OP_MAX || n->op == OP_SUM || n->op == OP_NEG))
		return cg_ew_kernel(c, &n, 1, EW_I64);
	if (all_of(n, DT_BOOL) && copy) {
		/* bools are bytes: copied one at a time */
		int64_t str[MAX_RANK];
		shape_strides(&n->out[0]->type.shape, str);
		cg_copy(c, n->in[0]->id, 0, str, n->out[0]->id, 0, str, &n->out[0]->type.shape);
		return c->ok;
	}
	return false;
}

/* expand(scalar_loop): an i64 elementwise op, a comparison, logic op,
 * where or cast as a scalar loop */
static bool ex_scalar_loop(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	if (cg_scalar_kernel(c, n) || cg_index_kernel(c, n))
		return true;
	if (!all_of(n, DT_I64) || !(n->op == OP_ABS || n->op == OP_CLIP || n->op == OP_NEG || n->op == OP_ADD ||
				    n->op == OP_SUB || n->op == OP_MUL || n->op == OP_MIN || n->op == OP_MAX ||
				    n->op == OP_SUM || n->op == OP_IDENTITY || cg_is_copy(n->op)))
		return false;
	return cg_ew_kernel(c, &n, 1, EW_I64);
}

/* the transcendental expansions (exp_poly, log_poly, tanh_exp, sigmoid_exp,
 * erf_poly, gelu_erf / gelu_tanh: the node's `approximate` picks, pow_exp_log),
 * inside the f32 elementwise loop */
static bool ex_transcendental(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	switch (n->op) {
	case OP_EXP: case OP_LOG: case OP_TANH: case OP_SIGMOID: case OP_ERF: case OP_GELU: case OP_POW:
	case OP_ELU: case OP_SELU: case OP_CELU: case OP_SOFTPLUS: case OP_SINH: case OP_COSH: /* through exp_poly */
	case OP_ASINH: case OP_ACOSH: case OP_ATANH: /* through log_poly */
	case OP_SIN: case OP_COS: case OP_TAN: case OP_ASIN: case OP_ACOS: case OP_ATAN: /* trig_poly, atan_poly */
		break;
	default:
		return false;
	}
	if (!all_of(n, DT_F32))
		return false;
	return cg_ew_kernel(c, &n, 1, EW_F32);
}

static bool lower_dropout(CG *c, const Node *n, const LegalEntry *e)
{
	if (n->nout != 2 || !all_of(n, DT_F32))
		return lower_elementwise(c, n, e);
	/* inference: y = x, and a mask of true bytes; one kernel */
	const Value *x = n->in[0], *y = n->out[0], *mask = n->out[1];
	int64_t str[MAX_RANK];
	shape_strides(&x->type.shape, str);
	LirKernel *k = lir_kernel_newf(c->lanes, c->scalable, "loops of %s, %s: dropout", y->name, mask->name);
	cg_lir_copy(c, k, x->id, 0, str, y->id, 0, str, &x->type.shape);
	int64_t numel = shape_numel(&mask->type.shape);
	if ((mask->nuses || mask->is_output) && numel > 0) {
		int bm = cg_lir_buffer(c, k, mask->id);
		int iv = lir_for(k, 0, numel, 1);
		LirAffine ma = lir_affine(0);
		lir_term(k, &ma, iv, 1);
		lir_store(k, bm, &ma, lir_consti(k, 1)); /* (1-byte elements: bytes, scalar) */
		lir_end(k);
	}
	bool ok = cg_lir_run(c, k, true);
	lir_kernel_free(k);
	return ok;
}

/* data movement copies bits: i32 as f32 lanes, i64 as scalars */
static bool lower_movement(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	DType dt = n->nin ? n->in[0]->type.dtype : n->out[0]->type.dtype;
	return (dt == DT_F32 || dt == DT_I32 || dt == DT_I64 || dt == DT_BOOL) && cg_movement(c, n);
}

/* gather moves bits: 4-byte elements (f32, i32) in f32 lanes, i64 and bool
 * (bytes) as scalars */
static bool lower_gather(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	DType t = n->in[0]->type.dtype;
	return (t == DT_F32 || t == DT_I32 || t == DT_I64 || t == DT_BOOL) && cg_gather(c, n);
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
	/* the dimensions, known when compiling: one store each */
	LirKernel *lk = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: shape", y->name);
	int by = cg_lir_buffer(c, lk, y->id);
	for (int64_t i = 0; i < k; i++) {
		LirAffine a = lir_affine(i);
		lir_store(lk, by, &a, lir_consti(lk, in[start + i]));
	}
	bool ok = cg_lir_run(c, lk, true);
	lir_kernel_free(lk);
	return ok;
}

/* size: the element count, known when compiling: one store */
static bool lower_size(CG *c, const Node *n, const LegalEntry *e)
{
	(void)e;
	const Value *y = n->out[0];
	LirKernel *lk = lir_kernel_newf(c->lanes, c->scalable, "loops of %s: size", y->name);
	LirAffine a = lir_affine(0);
	lir_store(lk, cg_lir_buffer(c, lk, y->id), &a, lir_consti(lk, shape_numel(&n->in[0]->type.shape)));
	bool ok = cg_lir_run(c, lk, true);
	lir_kernel_free(lk);
	return ok;
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
	return all_of(n, DT_F32) && cg_reduce(c, n);
}

/* expand(reduce_loop): the reductions over axes, and the global pools */
static bool ex_reduce_loop(CG *c, const Node *n, const LegalEntry *e)
{
	switch (n->op) {
	case OP_REDUCE_MEAN: case OP_REDUCE_SUM: case OP_REDUCE_MAX: case OP_REDUCE_MIN: case OP_REDUCE_PROD:
	case OP_REDUCE_L1: case OP_REDUCE_L2: case OP_REDUCE_LOG_SUM: case OP_REDUCE_LOG_SUM_EXP: case OP_REDUCE_SUM_SQUARE:
		return lower_reduce_mean(c, n, e);
	default:
		break;
	}
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
	if (cg_uses_tiles(c, n) && cg_tile_conv(c, n))
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
		const Node *mm = cg_sole_user(c, n->out[0]);
		int64_t ld, bstr[MAX_RANK];
		if (mm && cg_matmul_transposed_b(c, mm, &ld, bstr) == n) {
			if (c->p->loops) {
				cg_indent(c);
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
		cg_base_of(c, n->in[i]->id);
	if (n->out[0]->nuses || n->out[0]->is_output)
		cg_base_of(c, n->out[0]->id);
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

/* The start of a function of the program: the args array from the first
 * argument register, the return register, the error label, and on
 * scalable targets vl = VLMAX for vector code outside strips. */
static void func_open(CG *c, MFunc *f)
{
	c->f = f;
	int a0 = mfunc_vreg(f, c->acls);
	f->vregs[a0].preg = c->areg;
	c->args = mfunc_vreg(f, c->icls);
	sel_assign(f, c->args, sel_reg(f, a0));
	/* the return value: 0, or 1 after a run-time error */
	c->ret = -1;
	if (c->rcls >= 0) {
		c->ret = mfunc_vreg(f, c->rcls);
		f->vregs[c->ret].preg = c->rreg;
	}
	c->err_label = sel_new_label(f);
	if (c->scalable) {
		/* vector code outside the strip-mined loops (broadcast scalars) runs
		 * at the machine's length: vl = VLMAX */
		int vl = mfunc_vreg(f, c->icls);
		sel_assign(f, vl, sel_op(f, SEL_SETVL, sel_consti(f, 1 << 30), sel_consti(f, 1), NULL));
	}
}

/* Its end: return 0; the error label: return 1. */
static void func_close(CG *c)
{
	MFunc *f = c->f;
	if (c->ret >= 0)
		sel_assign(f, c->ret, sel_consti(f, 0));
	sel_effect(f, sel_op(f, SEL_RET, NULL, NULL, NULL));
	sel_label(f, c->err_label);
	if (c->ret >= 0)
		sel_assign(f, c->ret, sel_consti(f, 1));
	sel_effect(f, sel_op(f, SEL_RET, NULL, NULL, NULL));
}

/* A new kernel at position pos, of nodes mem[0..m): no base address
 * known, the workspace past the plan of the kernels before freed, the
 * vector type (scalable targets) chosen; its header in the loop dump. */
static void kernel_begin(CG *c, const Node *const *mem, int m, int pos)
{
	Program *p = c->p;
	if (p->nkernels == p->capk) {
		p->capk = p->capk ? 2 * p->capk : 16;
		p->kinfo = xrealloc(p->kinfo, (size_t)p->capk * sizeof *p->kinfo);
		if (p->split)
			p->kf = xrealloc(p->kf, (size_t)p->capk * sizeof *p->kf);
	}
	KernelInfo *ki = &p->kinfo[p->nkernels];
	ki->nodes = xmalloc((size_t)m * sizeof *ki->nodes);
	ki->nnodes = m;
	for (int i = 0; i < m; i++)
		ki->nodes[i] = mem[i]->id;
	ki->sym = NULL;
	if (p->split) {
		/* (--profile) the kernel as a function of its own */
		if (p->nkernels > 0)
			func_close(c);
		ki->sym = xasprintf("gdcc_kernel_%d", p->nkernels);
		p->kf[p->nkernels] = mfunc_new(c->t, ki->sym);
		func_open(c, p->kf[p->nkernels]);
	}
	MFunc *f = c->f;
	cg_bases_reset(c);
	c->node = mem[0];
	c->pos = pos;
	int kept = 0;
	for (int k = 0; k < c->nextra; k++)
		if (c->extra[k].until >= pos)
			c->extra[kept++] = c->extra[k];
	c->nextra = kept;
	/* a group keeps the values of its nodes live together: roughly the
	 * largest node's pressure and one register per further node */
	int lm = 1;
	for (int i = 0; i < m; i++) {
		int l = choose_lmul(c, mem[i], m - 1);
		lm = i == 0 || l < lm ? l : lm;
	}
	f->lmul = lm;
	if (c->scalable) /* the kernel's vector type, also for its vector code outside strips */
		sel_assign(f, mfunc_vreg(f, c->icls), sel_op(f, SEL_SETVL, sel_consti(f, 1 << 30), sel_consti(f, f->lmul), NULL));
	if (f->lmul > p->lmul)
		p->lmul = f->lmul;
	if (p->loops) {
		fprintf(p->loops, "kernel %d: %s =", p->nkernels, mem[m - 1]->out[0]->name);
		for (int i = 0; i < m; i++)
			fprintf(p->loops, "%s %s", i ? "," : "", op_info[mem[i]->op].name);
		fprintf(p->loops, "%s%s\n", m > 1 ? " (fusion group)" : "",
			c->scalable ? (f->lmul == 8 ? " (LMUL 8)" : f->lmul == 4 ? " (LMUL 4)" : f->lmul == 2 ? " (LMUL 2)" : " (LMUL 1)") : "");
	}
}

/* Can the group mem[0..m) be one kernel?  Every node lowerable by its
 * decision, f32; elementwise ops and views after an optional contraction
 * that is built by loops here (not on a matrix engine; matmul of 2-D or
 * more operands), or before a softmax, logsoftmax or layernorm (its
 * prologue: operands of its shape or of one element, its result in the
 * workspace, where the reduction's first pass leaves it). */
static bool group_fits(CG *c, const Node *const *mem, int m, bool *anchored, bool *reduction)
{
	*anchored = *reduction = false;
	for (int i = 0; i < m; i++) {
		const Node *n = mem[i];
		const LegalEntry *e = c->legal[n->id];
		if (!e || e->action == LEGAL_UNSUPPORTED || e->action == LEGAL_FALLBACK || !all_of(n, DT_F32))
			return false;
		if (i == 0 && (n->op == OP_CONV || n->op == OP_MATMUL || n->op == OP_GEMM)) {
			if (cg_uses_tiles(c, n))
				return false;
			if (n->op == OP_MATMUL && (n->in[0]->type.shape.rank < 2 || n->in[1]->type.shape.rank < 2))
				return false;
			LowerFn fn = e->action == LEGAL_NATIVE ? native_lowering[n->op].fn
				   : e->expansion > EXPANSION_NONE && e->expansion < EXPANSION_COUNT ? expansion_lowering[e->expansion]
												     : NULL;
			if (fn != lower_conv && fn != lower_matmul && fn != ex_conv_loop && fn != ex_loop_nest)
				return false;
			*anchored = true;
			continue;
		}
		if (i == m - 1 && i > 0 && !*anchored &&
		    (n->op == OP_SOFTMAX || n->op == OP_LOGSOFTMAX || n->op == OP_LAYERNORM)) {
			/* a reduction after its prologue, which it reads first (in
			 * its first pass over each row) */
			if (n->in[0] != mem[m - 2]->out[0] || !cg_prologue_fits(mem, m - 1) ||
			    c->buf[n->in[0]->id].kind != BUF_WS)
				return false; /* (the first pass stores it for the others) */
			*reduction = true;
			continue;
		}
		if (!(cg_is_elementwise(n->op) || cg_is_copy(n->op)) || (n->op == OP_DROPOUT && n->nout > 1))
			return false;
	}
	return true;
}

/* A fusion group of several nodes as one kernel: elementwise nodes as one
 * Loop IR loop nest, a contraction with the rest of its group as its
 * epilogue.  false: not done (the nodes are lowered one by one). */
static bool lower_group(CG *c, const Node *const *mem, int m, int pos)
{
	bool anchored, reduction;
	if (!group_fits(c, mem, m, &anchored, &reduction))
		return false;
	const Value *out = mem[m - 1]->out[0];
	for (int i = 1; i < m; i++)
		c->fused[mem[i]->id] = true;
	if (shape_numel(&out->type.shape) == 0) {
		for (int i = 0; i < m; i++)
			c->p->no_kernel[mem[i]->id] = "empty: no elements to compute";
		return true; /* nothing to compute */
	}
	kernel_begin(c, mem, m, pos);
	c->p->nkernels++;
	if (reduction) {
		/* the prologue's operands, addressed once before the loops */
		for (int i = 0; i < m - 1; i++)
			for (int k = 0; k < mem[i]->nin; k++)
				cg_base_of(c, mem[i]->in[k]->id);
		cg_base_of(c, mem[m - 2]->out[0]->id);
		c->pro = mem;
		c->npro = m - 1;
		c->pro_used = false;
		c->node = mem[m - 1];
		if (!lower_node(c, mem[m - 1]))
			c->ok = false;
		else if (!c->pro_used) {
			diag_error(c->d, mem[m - 1]->loc, "internal error: the kernel of %s did not compute its prologue",
				   mem[m - 1]->out[0]->name);
			c->ok = false;
		}
		c->pro = NULL;
		c->npro = 0;
		return true;
	}
	if (!anchored) {
		if (!cg_ew_kernel(c, mem, m, EW_F32) && c->ok) {
			diag_error(c->d, mem[0]->loc, "internal error: the fusion group of %s cannot be one loop nest", out->name);
			c->ok = false;
		}
		return true;
	}
	/* the epilogue's operands and the group's output: addressed once,
	 * before the contraction's loops */
	for (int i = 1; i < m; i++)
		for (int k = 0; k < mem[i]->nin; k++)
			cg_base_of(c, mem[i]->in[k]->id);
	cg_base_of(c, out->id);
	c->epi = mem + 1;
	c->nepi = m - 1;
	c->epi_used = false;
	if (!lower_node(c, mem[0]))
		c->ok = false;
	else if (!c->epi_used) {
		diag_error(c->d, mem[0]->loc, "internal error: the kernel of %s did not store through its epilogue", mem[0]->out[0]->name);
		c->ok = false;
	}
	c->epi = NULL;
	c->nepi = 0;
	return true;
}

Program *codegen_lower(const Graph *g, const Target *t, const LegalEntry *const *legal, const MemPlan *plan,
		       const char *entry, bool split, FILE *loops, Diag *d)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	Program *p = xcalloc(1, sizeof *p);
	p->t = t;
	p->g = g;
	p->loops = loops;
	p->split = split;
	p->entry = xstrdup(entry);
	p->no_kernel = xcalloc((size_t)g->nnodes + 1, sizeof *p->no_kernel);
	p->rest = split ? xasprintf("%s_rest", entry) : NULL;
	p->f = mfunc_new(t, split ? p->rest : entry); /* (which keeps the name) */
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
	c.tail = cg_tail(&c);
	p->masked_tails = c.tail == LIR_TAIL_MASKED;
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
	int nbuf = g->nvalues + 2 * g->nnodes + g->noutputs; /* (values, scratch, output slots, second scratch) */
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
			if (n->op == OP_CONSTANT && n->init.kind == INIT_TENSOR && n->init.data &&
			    tensor_bytes(n->init.data) == (size_t)numel * dtype_size(v->type.dtype)) {
				/* an imported constant's tensor: its bytes as they are, not
				 * copied (the graph outlives the program) */
				const char *sym = cg_add_data(p, n->init.data);
				p->data[p->ndata - 1].borrowed = true;
				c.buf[v->id] = (Buf){BUF_CONST, 0, sym, 0, numel, (int)dtype_size(v->type.dtype)};
			} else if (n->op == OP_CONSTANT) {
				Tensor *data = tensor_new(v->type.dtype, &v->type.shape);
				if (!materialize_constant(n, data, d)) {
					tensor_free(data);
					c.ok = false;
					continue;
				}
				c.buf[v->id] = (Buf){BUF_CONST, 0, cg_add_data(p, data), 0, numel, (int)dtype_size(v->type.dtype)};
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
	free(c.loops);
		memplan_free(own);
		return NULL;
	}
	c.acls = acls;
	c.areg = areg;
	/* the return value's register */
	c.rcls = c.rreg = -1;
	const AbiArgs *ra = t->abi.nret ? &t->abi.ret[0] : NULL;
	for (int i = 0; ra && i < t->nregclasses; i++)
		if (strcmp(t->regclasses[i].name, ra->cls) == 0 && t->regclasses[i].sort == SORT_I)
			for (int r = 0; r < t->regclasses[i].nregs; r++)
				if (strcmp(t->regclasses[i].regs[r], ra->regs[0]) == 0)
					c.rcls = i, c.rreg = r;
	if (!split)
		func_open(&c, f);
	if (loops)
		fprintf(loops, "function %s(args[%d]) on %s, %d lanes, workspace %lld bytes\n", entry, p->nargs, t->name,
			c.lanes, (long long)p->workspace_bytes);
	/* the fusion groups (pass_fuse): per group, its nodes in order */
	int ng = 0;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->group >= ng)
			ng = g->nodes[i]->group + 1;
	int *gstart = xcalloc((size_t)ng + 2, sizeof *gstart);
	const Node **gat = xcalloc((size_t)g->nnodes + 1, sizeof *gat);
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->group >= 0)
			gstart[g->nodes[i]->group + 1]++;
	for (int k = 0; k < ng; k++)
		gstart[k + 1] += gstart[k];
	int *fill = xmalloc(((size_t)ng + 1) * sizeof *fill);
	memcpy(fill, gstart, (size_t)ng * sizeof *fill);
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->group >= 0)
			gat[fill[g->nodes[i]->group]++] = g->nodes[i];
	free(fill);
	for (int i = 0; i < g->nnodes && c.ok; i++) {
		const Node *n = g->nodes[i];
		if (n->op == OP_CONSTANT || c.fused[n->id])
			continue;
		int gid = n->group;
		const Node **tail = NULL;
		int ntail = 0;
		if (gid >= 0 && gstart[gid + 1] - gstart[gid] > 1) {
			int m = gstart[gid + 1] - gstart[gid];
			if (lower_group(&c, gat + gstart[gid], m, i))
				continue;
			/* a contraction on a matrix engine: its kernel, then the
			 * rest of its group (what the engine did not take: a
			 * residual add and relu) as one elementwise kernel */
			if (gat[gstart[gid]] == n && cg_uses_tiles(&c, n)) {
				tail = gat + gstart[gid] + 1;
				ntail = m - 1;
			}
		}
		if (plan->alias[n->out[0]->id] != n->out[0]->id) {
			p->no_kernel[n->id] = "view: shares its operand's storage";
			if (loops)
				fprintf(loops, "view: %s = %s of %s (no kernel)\n", n->out[0]->name, op_info[n->op].name,
					g->values[plan->alias[n->out[0]->id]]->name);
			continue;
		}
		kernel_begin(&c, &n, 1, i);
		if (!lower_node(&c, n))
			c.ok = false;
		p->nkernels++;
		/* (the engine's kernel may have taken the group's next node: a
		 * relu on the way out) */
		while (ntail > 0 && c.fused[tail[0]->id])
			tail++, ntail--;
		if (c.ok && ntail > 1) {
			int pos = i + 1;
			while (pos < g->nnodes && g->nodes[pos] != tail[0])
				pos++;
			if (lower_group(&c, tail, ntail, pos))
				c.fused[tail[0]->id] = true; /* (computed: the loop skips it) */
		}
	}
	if (split) {
		/* the last kernel's function ends; what follows is the entry's */
		if (p->nkernels > 0)
			func_close(&c);
		func_open(&c, f);
	}
	/* outputs that are inputs or constants: copied into their slot */
	for (int i = 0; i < g->noutputs && c.ok; i++) {
		const Value *v = g->outputs[i];
		if (!v->is_input && (!v->def || v->def->op != OP_CONSTANT))
			continue;
		int es = (int)dtype_size(v->type.dtype);
		if (es != 4 && es != 8 && es != 1) {
			diag_error(d, v->loc, "output '%s' (%s) cannot be copied: the vocabulary has no %d-byte loads", v->name,
				   dtype_name(v->type.dtype), es);
			c.ok = false;
			break;
		}
		int slot = g->nvalues + g->nnodes + i;
		c.buf[slot] = (Buf){BUF_ARG, first_out + i, NULL, 0, shape_numel(&v->type.shape), es};
		cg_bases_reset(&c);
		static const Node no_node;
		c.node = v->def ? v->def : &no_node;
		c.pos = g->nnodes;
		cg_base_of(&c, v->id);
		cg_base_of(&c, slot);
		int64_t str[MAX_RANK];
		shape_strides(&v->type.shape, str);
		cg_copy(&c, v->id, 0, str, slot, 0, str, &v->type.shape);
	}
	func_close(&c);
	free(gstart);
	free(gat);
	free(c.buf);
	free(c.base);
	free(c.based);
	free(c.fused);
	free(c.moved);
	free(c.viewed);
	free(c.loops);
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

/* Constant data beyond the code's direct reach: more bytes than the
 * target's param near_data_bytes (x86-64's small code model addresses its
 * data from the code, +-2 GiB, with the libraries' code and data in the
 * same span): every data symbol's address becomes addr.far, which the .md
 * covers (x86-64: through the GOT, the medium code model's way), and the
 * data goes to param far_data_section (x86-64: .lrodata, which the linker
 * places after everything else).  A target without them says why it
 * cannot take the model. */
static bool codegen_far_data(Program *p, Diag *d)
{
	const Target *t = p->t;
	const ParamInfo *near = target_param(t, "near_data_bytes");
	int64_t bytes = program_weights_bytes(p);
	if (!near || near->str || near->n != 1 || (double)bytes <= near->values[0])
		return true;
	const ParamInfo *sec = target_param(t, "far_data_section");
	BursNode leaf;
	memset(&leaf, 0, sizeof leaf);
	leaf.form = -1;
	leaf.op = SEL_ADDR_FAR;
	leaf.sym = "gdcc_data";
	int icls = target_class_for(t, SORT_I);
	bool rule = icls >= 0 && isel_cost(t, &leaf, icls) < BURS_INF;
	if (!rule || !sec || !sec->str || !*sec->str) {
		diag_error(d, loc_at(NULL, 0, 0),
			   "the model's constant data (%lld bytes) is more than %s's code reaches directly (param near_data_bytes = "
			   "%.0f), and %s has no %s: a model this large cannot be compiled for it",
			   (long long)bytes, t->name, near->values[0], t->md_file ? t->md_file : t->name,
			   !rule ? "rule for addr.far (the address of a far data symbol)" : "param far_data_section");
		return false;
	}
	p->far_data = true;
	for (int i = 0; i < program_nfuncs(p); i++) {
		MFunc *f = program_func(p, i);
		for (int k = 0; k < f->nnodes; k++)
			if (f->nodes[k]->op == SEL_ADDR_SYM)
				f->nodes[k]->op = SEL_ADDR_FAR;
	}
	return true;
}

bool codegen_select(Program *p, Diag *d)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool ok = codegen_far_data(p, d);
	for (int i = 0; ok && i < program_nfuncs(p); i++) {
		ok = isel_function(program_func(p, i), d) && mfunc_verify(program_func(p, i), false, d);
		mfunc_free_trees(program_func(p, i));
	}
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
	bool ok = true;
	for (int i = 0; ok && i < program_nfuncs(p); i++)
		ok = regalloc_function(program_func(p, i), d) && mfunc_verify(program_func(p, i), true, d);
	p->seconds[2] = since(&t0);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	p->rss_kib[2] = ru.ru_maxrss;
	p->spill_slots = 0;
	for (int i = 0; i < program_nfuncs(p); i++) {
		const MFunc *f = program_func(p, i);
		for (int v = 0; v < f->nvregs; v++)
			p->spill_slots += f->vregs[v].slot >= 0;
	}
	return ok;
}

Program *codegen(const Graph *g, const Target *t, const MemPlan *plan, FILE *loops, Diag *d)
{
	Program *p = codegen_lower(g, t, NULL, plan, "gdcc_entry", false, loops, d);
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
		if (!p->data[i].borrowed)
			tensor_free(p->data[i].data);
	}
	free(p->data);
	free(p->text);
	mfunc_free(p->f);
	for (int i = 0; i < p->nkernels; i++) {
		free(p->kinfo[i].nodes);
		free(p->kinfo[i].sym);
		if (p->split)
			mfunc_free(p->kf[i]);
	}
	free(p->kinfo);
	free(p->kf);
	free(p->no_kernel);
	free(p->entry);
	free(p->rest);
	free(p);
}

int program_nfuncs(const Program *p) { return p->split ? p->nkernels + 1 : 1; }

MFunc *program_func(const Program *p, int i) { return p->split && i < p->nkernels ? p->kf[i] : p->f; }

