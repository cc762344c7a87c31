/* The Loop IR: a kernel as data, between the graph and the selection trees
 * (stage 4 of ARCHITECTURE.md).
 *
 * A kernel holds buffers (flat arrays of elements, each with its length),
 * temporaries (values in registers, one sort each), loop variables and a
 * body: a list of statements, each a loop (over a variable, with bounds and
 * a step), an assignment to a temporary, or a store to a buffer.  Values
 * are expression trees over the selection vocabulary (sel.def) whose leaves
 * are loads of buffers at affine indices, temporaries, constants and loop
 * variables.  Every index is affine in the loop variables: off + sum of
 * coef * var; the verifier checks that every access lies inside its buffer
 * over every iteration.
 *
 * Width.  Builders write f32 work in the vector vocabulary (add.v, fma.v,
 * round.v, cvt.v.w ...), i64 work in the integer one (add.i ...).  What a
 * statement computes per iteration is decided by its loops: inside a
 * vector, strip or masked loop (at most one encloses a statement) it works
 * on the lanes of that loop's variable, elsewhere on one element.  A load
 * whose index moves with the vector variable by 1 is a vector load, one
 * that does not move is a scalar load broadcast; in scalar context a vector
 * op with a scalar twin (add.v -> add.f) becomes the twin, one without
 * works on a broadcast and its lane is taken back (redmax.v of equal
 * lanes).  So a builder writes one body and vectorize() makes the vector
 * loop and its remainder (scalar loop, masked vector, or strips of a
 * scalable vector) from it.
 *
 * Transforms (loop/transform.c) rewrite the statements in place:
 * vectorize (with a scalar or masked remainder, or strip-mined for
 * scalable vectors), tile, interchange, unroll, unroll-and-jam, and the
 * hoisting of invariant address arithmetic.  lir_lower (loop/lower.c) is
 * the one conversion to selection trees; lir_print (--emit=loops) and
 * lir_verify are in loop/lir.c. */
#ifndef GDCC_LIR_H
#define GDCC_LIR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "mir.h"
#include "sel.h"

enum { LIR_MAX_TERMS = 16 };

/* off + sum t[i].coef * t[i].var (a variable at most once) */
typedef struct {
	int var;
	int64_t coef;
} LirTerm;

typedef struct {
	int64_t off;
	int n;
	LirTerm t[LIR_MAX_TERMS];
} LirAffine;

typedef struct {
	char *name;
	int64_t numel;
	int esize;     /* bytes per element: 1 (bool), 4 (f32, i32 as bits), 8 (i64) */
	int id;        /* the client's handle (the lowering's buffer index), -1: data */
	const char *sym; /* read-only data at this symbol (lir_data_buffer), else NULL */
} LirBuf;

typedef enum {
	LIR_LOOP_SCALAR,   /* one element per iteration, var += step */
	LIR_LOOP_VECTOR,   /* a fixed vector per iteration: step = lanes (x unroll) */
	LIR_LOOP_STRIP,    /* scalable vectors: each strip takes vl = setvl(hi - var) */
	LIR_LOOP_MASKED,   /* one iteration at lo, on hi - lo < lanes lanes (a mask) */
	LIR_INDEX_DATA,    /* not a loop: an index read from data (LS_INDEX), in [lo, hi) */
} LirLoopKind;

typedef struct {
	int64_t lo, hi;    /* [lo, hi) */
	int64_t step;      /* vector loops: elements per iteration */
	LirLoopKind kind;
	char *name;        /* printing: i0, i1, ... or what a transform made */
	int ext;           /* an external variable (lir_extern_var): its vreg, else -1 */
} LirVar;

/* LX_ADDR: the address of buf[a] (sort i; what lir_hoist computes once) */
/* LX_CONSTW: the i32 i in every lane of a w vector; LX_PTRADD: the
 * pointer temporary `temp` (an address into buf) moved by i elements
 * (what lir_strength_reduce bumps once per iteration) */
typedef enum { LX_OP, LX_LOAD, LX_TEMP, LX_CONSTF, LX_CONSTI, LX_INDEX, LX_ADDR, LX_CONSTW, LX_PTRADD } LirExprKind;

/* How a load reads its element (LX_LOAD). */
typedef enum {
	LIR_AS_ELEM,   /* by the buffer's element size: 8 bytes i64 (sort i), 4 bytes f32 lanes */
	LIR_AS_I32,    /* a 4-byte integer, sign-extended (sort i, scalar context only) */
} LirLoadAs;

typedef struct LirExpr {
	LirExprKind kind;
	SelOp op;                 /* LX_OP */
	struct LirExpr *k[3];
	int buf;                  /* LX_LOAD, LX_ADDR: buf[a] */
	LirAffine a;
	LirLoadAs as;
	int ptr;                  /* LX_LOAD: hoisted, the address is temporary ptr's (an */
	LirAffine pa;             /* i-sort address) + element size * pa; -1: from the base */
	int temp;                 /* LX_TEMP */
	double f;                 /* LX_CONSTF */
	int64_t i;                /* LX_CONSTI */
	int var;                  /* LX_INDEX */
} LirExpr;

/* LS_INDEX: var = e (an i-sort value read from data), plus hi when it is
 * negative (ONNX's negative indices); outside [0, hi) after that, the
 * function returns 1 (a run-time error) instead of going on.
 * LS_PREFETCH: buf[a]'s cache line asked for ahead of its use (a hint: no
 * value, nothing written; the address may lie past the buffer's ends, as a
 * prefetch never faults), where the target has a prefetch; in a vector loop
 * its index does not move with the loop (one line). */
typedef enum { LS_LOOP, LS_ASSIGN, LS_STORE, LS_INDEX, LS_PREFETCH } LirStmtKind;

typedef struct LirStmt LirStmt;

typedef struct {
	LirStmt **s;
	int n, cap;
} LirBlock;

struct LirStmt {
	LirStmtKind kind;
	int var;                  /* LS_LOOP, LS_INDEX: its variable */
	LirBlock body;
	int temp;                 /* LS_ASSIGN */
	int buf;                  /* LS_STORE: buf[a] = e; LS_PREFETCH: buf[a] */
	LirAffine a;
	int ptr;                  /* hoisted (as LirExpr.ptr), else -1 */
	LirAffine pa;
	LirExpr *e;
	const char *note;         /* printed after the statement (static text) */
};

typedef struct {
	Sort sort;                /* as written: i, f, v, w or m */
	char *name;
	int ext;                  /* bound to a vreg outside the kernel (lir_extern_temp), else -1 */
	bool wide;                /* a whole vector in any context (lir_wide_temp) */
} LirTemp;

typedef struct LirArena LirArena;

typedef struct {
	char *name;               /* "kernel 3: y = add(relu(x), relu(x))" */
	int lanes;                /* f32 lanes of a fixed vector; scalable: per VLEN min */
	bool scalable;
	LirBuf *bufs;
	int nbufs, capbufs;
	LirTemp *temps;
	int ntemps, captemps;
	LirVar *vars;
	int nvars, capvars;
	LirBlock body;
	LirBlock **open;          /* building: the blocks being appended to */
	int nopen, capopen;
	char **notes;             /* lines printed under the kernel's name */
	int nnotes, capnotes;
	LirArena *arena;
	int outer_vector;         /* an extern variable walked by vectors around the kernel, or -1 */
	bool ok;                  /* false after a build error (err says which) */
	char err[200];
} LirKernel;

/* ---- building ---------------------------------------------------------- */
LirKernel *lir_kernel_new(const char *name, int lanes, bool scalable);
/* the same, named by a format */
LirKernel *lir_kernel_newf(int lanes, bool scalable, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lir_kernel_free(LirKernel *k);
void lir_note(LirKernel *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int lir_buffer(LirKernel *k, const char *name, int64_t numel, int esize, int id);
/* the buffer of client handle id, or -1 */
int lir_buffer_of(const LirKernel *k, int id);
/* read-only data at a symbol (a table made while compiling) */
int lir_data_buffer(LirKernel *k, const char *name, int64_t numel, int esize, const char *sym);
int lir_temp(LirKernel *k, Sort sort);
/* A v temporary that is a whole vector in scalar context too (a vector
 * accumulator assigned before its loop: a scalar value is broadcast). */
int lir_wide_temp(LirKernel *k);
/* A variable defined outside the kernel's loops (the register vreg, over
 * [lo, hi) by step): lets an expression of this IR be lowered inside loops
 * the caller made; with vector true, the caller's loop is a vector loop
 * over it and the kernel's top level is in vector context (at most one). */
int lir_extern_var(LirKernel *k, int vreg, int64_t lo, int64_t hi, int64_t step, bool vector);
/* A temporary already in vreg (in vector context a vector). */
int lir_extern_temp(LirKernel *k, int vreg, Sort sort);

/* Statements append to the innermost open loop (or the body). */
int lir_for(LirKernel *k, int64_t lo, int64_t hi, int64_t step); /* opens a scalar loop; its variable */
void lir_end(LirKernel *k);
void lir_assign(LirKernel *k, int temp, LirExpr *e);
void lir_store(LirKernel *k, int buf, const LirAffine *a, LirExpr *e);
void lir_prefetch(LirKernel *k, int buf, const LirAffine *a);
/* An index from data (LS_INDEX): a variable in [0, n) usable in affine
 * indices after this statement, in the same block. */
int lir_data_index(LirKernel *k, LirExpr *e, int64_t n);
/* the last statement appended (to attach a note) */
LirStmt *lir_last(LirKernel *k);

LirExpr *lir_load(LirKernel *k, int buf, const LirAffine *a);
LirExpr *lir_load_as(LirKernel *k, int buf, const LirAffine *a, LirLoadAs as);
LirExpr *lir_op(LirKernel *k, SelOp op, LirExpr *a, LirExpr *b, LirExpr *c);
LirExpr *lir_constf(LirKernel *k, double v);
LirExpr *lir_consti(LirKernel *k, int64_t v);
LirExpr *lir_constw(LirKernel *k, int32_t v);
LirExpr *lir_ref(LirKernel *k, int temp);
LirExpr *lir_index(LirKernel *k, int var);
/* the address of buf[a] (LX_ADDR, sort i) */
LirExpr *lir_addr(LirKernel *k, int buf, const LirAffine *a);
LirExpr *lir_ptradd(LirKernel *k, int ptr, int buf, int64_t elems);

/* Affine indices. */
LirAffine lir_affine(int64_t off);
/* a += coef * var (merged with var's term); false (and k->ok false) when
 * a already has LIR_MAX_TERMS variables */
bool lir_term(LirKernel *k, LirAffine *a, int var, int64_t coef);
int64_t lir_coef(const LirAffine *a, int var);

/* ---- copying (the transforms) ------------------------------------------ */
/* A copy of e / s in which variable `from` reads as `to` * 1 + shift (to
 * may equal from: then only shifted), and temporaries are renamed through
 * tmap (NULL: kept): tmap[t] >= 0 reads and writes as that one; -1: the
 * first assignment in the copy makes a fresh one (an iteration's own
 * value), -2: kept (a value carried from one iteration to the next). */
LirExpr *lir_expr_copy(LirKernel *k, const LirExpr *e, int from, int to, int64_t shift, const int *tmap);
LirStmt *lir_stmt_copy(LirKernel *k, const LirStmt *s, int from, int to, int64_t shift, int *tmap);
LirStmt *lir_stmt_new(LirKernel *k, LirStmtKind kind);
void lir_block_add(LirKernel *k, LirBlock *b, LirStmt *s);
void lir_block_insert(LirKernel *k, LirBlock *b, int at, LirStmt *s);
int lir_new_var(LirKernel *k, int64_t lo, int64_t hi, int64_t step, LirLoopKind kind, const char *name);
/* The loop statement over var (NULL: none), and the block holding it. */
LirStmt *lir_loop_of(LirKernel *k, int var, LirBlock **parent, int *index);
/* Open var's loop again (after lir_end, after transforms): the builder's
 * statements go at the end of its body until lir_end; false: no such loop. */
bool lir_reopen(LirKernel *k, int var);

/* ---- checking and printing --------------------------------------------- */
/* Every access affine in the variables of loops around it, inside its
 * buffer over every iteration (vector accesses with all their lanes), with
 * a vector-context index moving by 0 or 1 along the vector variable (1 for
 * stores); every temporary assigned before it is read; sorts and operand
 * counts as sel.def says; steps positive.  Errors name the kernel. */
bool lir_verify(const LirKernel *k, Diag *d, Loc loc);
void lir_print(FILE *out, const LirKernel *k);
void lir_print_expr(FILE *out, const LirKernel *k, const LirExpr *e);

/* ---- transforms (loop/transform.c); false: not applicable (k unchanged) -- */
typedef enum {
	LIR_TAIL_SCALAR,   /* the remainder as a scalar loop */
	LIR_TAIL_MASKED,   /* the remainder as one masked vector (a reduction
			    * folds its active lanes into the accumulator) */
} LirTail;

/* The unit-step scalar loop over var, innermost around its statements,
 * becomes a vector loop over [lo, vend) plus its remainder (fixed
 * vectors), or strips over [lo, hi) (scalable); requires every index in it
 * to move by 0 or 1 along var (1 for stores), no lir_index(var), no nested
 * loop, and nothing assigned in it read after it. */
bool lir_vectorize(LirKernel *k, int var, LirTail tail);
/* var's loop as an outer loop by `size` and an inner one over [0, size),
 * plus a remainder loop when size does not divide the trip count; *inner
 * receives the inner variable. */
bool lir_tile(LirKernel *k, int var, int64_t size, int *inner);
/* Swaps var's loop with the one loop that is its whole body (a perfect
 * nest, bounds independent of each other). */
bool lir_interchange(LirKernel *k, int var);
/* The body `factor` times per iteration (temporaries renamed per copy),
 * plus a remainder loop. */
bool lir_unroll(LirKernel *k, int var, int factor);
/* Unrolls var's loop by factor and fuses the copies of the one loop in its
 * body (register blocking): statements before and after that loop are
 * copied around it. */
bool lir_unroll_and_jam(LirKernel *k, int var, int factor);
/* Per loop, the part of each access's address that does not depend on the
 * loop's variable (nor on loops inside it) computed once before the loop:
 * the access then reads through a pointer temporary. Returns the number of
 * pointers made. */
int lir_hoist(LirKernel *k);
/* Strength reduction of var's loop (scalar, any step): each access in
 * its body (not in loops inside it) that moves along var reads through a
 * pointer set before the loop and moved by coef * step elements at the end
 * of each iteration (accesses of a buffer differing only by a constant
 * share one, the constant their displacement); what does not move along
 * var is left to lir_hoist.  Returns the number of pointers made. */
int lir_strength_reduce(LirKernel *k, int var);

/* ---- lowering (loop/lower.c) ------------------------------------------- */
enum { LIR_HOIST_MASKS_MAX = 4 };
typedef struct {
	MFunc *f;
	int icls, fcls, vcls, wcls, mcls; /* register classes by sort (wcls, mcls: -1, none) */
	void *ctx;
	/* the base address of buffer id (a vreg), computed once before the kernel's loops */
	int (*base)(void *ctx, int id);
	/* a data symbol holding the f32 v / the i64 v */
	const char *(*const_f32)(void *ctx, double v);
	BursNode *(*const_i64)(void *ctx, int64_t v);
	/* a data symbol holding the i32 v in every lane of a vector */
	const char *(*const_w)(void *ctx, int32_t v);
	/* a mask of the first k lanes (masked loops) */
	BursNode *(*first_lanes)(void *ctx, int64_t k);
	int err_label;    /* LS_INDEX out of range: the function's `return 1` (-1: none) */
	bool lane0;       /* the target covers lane0.v: a vector of equal lanes becomes a
	                   * scalar by it (bits kept: an i32 in f32 lanes), else by redmax.v */
	bool prefetch;    /* the target covers prefetch (else LS_PREFETCH lowers to nothing) */
	int hoist_masks;  /* at most this many masked loops' lane masks (the most used
	                   * lane counts) made once before the loops, not in each
	                   * iteration: where masks have registers of their own */
} LirLower;

/* The kernel as selection statements appended to l->f. */
bool lir_lower(const LirKernel *k, const LirLower *l);

#endif
