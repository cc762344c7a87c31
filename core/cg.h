/* The lowering's private interface: the state of the program being
 * lowered (CG), buffers, loops and affine accesses, and the functions the
 * kernel builders share.  core/codegen.c drives the lowering (one kernel
 * per node, dispatched on its legality decision); the builders live by
 * family: cg_base.c (buffers, loops, accesses, constants), kern_math.c
 * (the transcendental expansions), kern_elementwise.c, kern_rows.c
 * (reductions and normalizations), kern_movement.c (copies, gather),
 * kern_conv.c (convolution, pooling), kern_matmul.c, and sched_tiles.c
 * (the matrix-engine strategy, strategy(tiles)). */
#ifndef GDCC_CG_H
#define GDCC_CG_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "interp.h"
#include "legality.h"
#include "lir.h"
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
	LirTail tail;    /* how vector loops' remainders run here (cg_tail) */
	Loop *loops;     /* the open loops, outermost first (grown as they nest) */
	int nloops, caploops;
	int ret;         /* the return-value register (fixed to the abi's) */
	int acls, areg;  /* the abi's first argument register (class, index) */
	int rcls, rreg;  /* its return register, rcls -1: none */
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
	/* a contraction whose fusion group goes on: the group's nodes after
	 * it (its epilogue), applied before the store (cg_lir_result_store) */
	const Node *const *epi;
	int nepi;
	bool epi_used;     /* the kernel stored through the epilogue */
	/* a reduction whose group starts before it: the group's nodes before
	 * it (its prologue), computed in the reduction's first pass */
	const Node *const *pro;
	int npro;
	bool pro_used;
} CG;


/* An index space [outer, n, inner] over a value: row (o, j) is the n
 * elements at o * n * inner + j + i * inner. */
typedef struct {
	int64_t outer, n, inner;
} Rows;

typedef struct MatmulCtx {
	const Value *A, *B, *C, *Y;
	int64_t M, N, K, a_m, a_k, b_k;
	double alpha, beta;
	int64_t cstr[2];
	int nbatch;
	int bv[MAX_RANK];
	int64_t astr[MAX_RANK], bstr[MAX_RANK], ystr[MAX_RANK];
} MatmulCtx;

#define R(v) sel_reg(c->f, (v))
#define K(x) cg_splat(c, (x), true)
#define OPV(op, a, b) sel_op(c->f, (op), (a), (b), NULL)

/* cg_base.c */
int64_t cg_vend_of(CG *c, int64_t lo, int64_t hi);
const char *cg_add_data(Program *p, Tensor *t);
const Tensor *cg_const_data(CG *c, int value);
const char *cg_const_relayout(CG *c, int value, Tensor *t);
/* The same for data of another size (a transform of the constant): the
 * node must not read the value itself afterwards (its data may be t now). */
const char *cg_const_transform(CG *c, int value, Tensor *t);
BursNode *cg_const_i64(CG *c, int64_t v);
int64_t cg_int_bound(double v, bool lower);
void cg_indent(CG *c);
int cg_loop_begin(CG *c, int64_t lo, int64_t hi, int step);
int cg_vloop_begin(CG *c, int64_t lo, int64_t hi, bool vector);
void cg_loop_end(CG *c);
const char *cg_value_name(CG *c, int value);
void cg_check_access(CG *c, int value, const Affine *a, int lanes);
int64_t cg_extra_alloc(CG *c, int64_t bytes, int until);
int cg_base_of(CG *c, int value);
void cg_bases_reset(CG *c);
BursNode *cg_address(CG *c, int value, const Affine *a, int lanes);
bool cg_is_i64(CG *c, int value);
BursNode *cg_load(CG *c, int value, const Affine *a, bool vector);
void cg_store(CG *c, int value, const Affine *a, bool vector, BursNode *v);
BursNode *cg_splat(CG *c, double v, bool vector);

/* kern_elementwise.c */
BursNode *cg_bin(CG *c, SelOp vop, SelOp sop, bool vector, BursNode *a, BursNode *b);
bool cg_is_elementwise(OpKind op);
bool cg_is_copy(OpKind op);
typedef enum { EW_F32, EW_I64, EW_I32 } EwMode;
/* nodes[0..nn): one elementwise node, or an elementwise fusion group in
 * order, as one Loop IR kernel storing the last node's result; false: an
 * op or shape it cannot express (then nothing was emitted), or an error */
bool cg_ew_kernel(CG *c, const Node *const *nodes, int nn, EwMode mode);
bool cg_epilogue_heavy(const CG *c);
/* A comparison, logic op, where or cast (any of f32, i32, i64, bool) as a
 * scalar loop nest over the result's elements; false: an op or dtype it
 * does not lower (nothing emitted) */
bool cg_scalar_kernel(CG *c, const Node *n);
/* One element of value v at a, in scalar context: f32 as an f value, or
 * its bits as an i value (bits: moved as the 32-bit integer it is); i32
 * sign-extended, i64, bool 0 or 1 as i. */
LirExpr *cg_lir_elem(CG *c, LirKernel *k, const Value *v, const LirAffine *a, bool bits);
/* kern_index.c: range, argmax, argmin, hardmax, trilu, gather_elements,
 * tile as scalar loops; false: not one of them (nothing emitted) */
bool cg_index_kernel(CG *c, const Node *n);
/* A prologue of elementwise nodes whose operands from outside are of its
 * output's shape or of one element: its value at flat element index a,
 * appended to k, in a temporary (c->pro). */
bool cg_prologue_fits(const Node *const *pro, int npro);
int cg_lir_prologue_value(CG *c, LirKernel *k, const LirAffine *a);
/* The final store of a contraction's result y: appends to k the store of
 * y (in temporary acc, at index dims[d] along each axis of y), through the
 * epilogue when the kernel has one (c->epi: the group's output is stored
 * instead). */
void cg_lir_result_store(CG *c, LirKernel *k, const Value *y, int acc, const LirAffine *dims);

/* kern_rows.c */
Rows cg_rows_of(const Shape *s, int axis_from, int axis_to);
void cg_softmax(CG *c, const Node *n);
void cg_logsoftmax(CG *c, const Node *n);
/* reduce_mean, reduce_sum, ... reduce_sum_square (f32) */
bool cg_reduce(CG *c, const Node *n);
void cg_global_pool(CG *c, const Node *n);
bool cg_layernorm(CG *c, const Node *n);
bool cg_batchnorm(CG *c, const Node *n);

/* kern_movement.c: out[out_off + sum ocoef[d] i_d] = in[in_off + sum
 * icoef[d] i_d] over the index space shape, and a fill of numel elements
 * with v (i32: the bits of (int32_t)v), each appended to kernel k as a
 * loop nest (cg_lir_*) or as a kernel of its own, lowered here */
void cg_lir_copy(CG *c, LirKernel *k, int in_v, int64_t in_off, const int64_t *icoef, int out_v, int64_t out_off,
		 const int64_t *ocoef, const Shape *shape);
void cg_lir_fill(CG *c, LirKernel *k, int out_v, double v, int64_t numel);
void cg_copy(CG *c, int in_v, int64_t in_off, const int64_t *icoef, int out_v, int64_t out_off,
		    const int64_t *ocoef, const Shape *shape);
void cg_fill(CG *c, int out_v, double v, int64_t numel);
bool cg_movement(CG *c, const Node *n);
bool cg_gather(CG *c, const Node *n);

/* kern_conv.c */
int cg_scratch(CG *c, int64_t numel);
int cg_scratch2(CG *c, int64_t numel);
bool cg_conv(CG *c, const Node *n);
/* The register block of a convolution: mb output channels x rb output rows
 * x nv vectors along a row, chosen over the machine's figures (from the
 * target's .md) by the estimated cycles of the whole layer (*cycles; -1
 * when no block fits the registers). */
typedef struct {
	int mb, rb, nv;
} ConvBlock;
typedef struct {
	int regs;             /* vector registers the allocator may use */
	double fma_units, fma_latency, load_ports, store_ports;
	int lanes;
} ConvMachine;
ConvBlock cg_conv_block(const ConvMachine *m, int64_t Mg, int64_t oh, int64_t ow, double work, double *cycles);
/* the vector registers a block holds */
int cg_conv_block_regs(int mb, int rb, int nv);
bool cg_pool(CG *c, const Node *n);

/* kern_matmul.c */
BursNode *cg_gemm_epilogue(CG *c, const MatmulCtx *m, BursNode *v, const Affine *ca, bool vector);
void cg_matmul(CG *c, const Node *n);

/* sched_tiles.c */
const Node *cg_sole_user(CG *c, const Value *v);
bool cg_uses_tiles(CG *c, const Node *n);
const Node *cg_matmul_transposed_b(CG *c, const Node *mm, int64_t *ld, int64_t *bstr);
bool cg_tile_matmul(CG *c, const MatmulCtx *m, const Shape *batch, int tb, bool a1, bool b1);
bool cg_tile_conv(CG *c, const Node *n);
int cg_keep(CG *c, BursNode *v, bool vector);
BursNode *cg_first_lanes(CG *c, int64_t k);
bool cg_covers(CG *c, SelOp op, int cls);
bool cg_has_prefetch(CG *c);
LirTail cg_tail(CG *c);
bool cg_vectorize(CG *c, LirKernel *k, int var);
const Loop *cg_loop_of(CG *c, int var);
int cg_lir_buffer(CG *c, LirKernel *k, int id);
bool cg_lir_run(CG *c, LirKernel *k, bool print);

/* kern_math.c: the expansions as Loop IR (v temporaries in, out) */
int lm_exp(LirKernel *k, int x);
int lm_log(LirKernel *k, int x);
int lm_pow(LirKernel *k, int a, int b);
int lm_transcendental(LirKernel *k, const Node *n, int x);

#endif
