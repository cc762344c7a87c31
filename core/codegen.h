/* Code generation for one target: a verified graph becomes one function
 * `void gdcc_entry(void **args)` (args: the inputs, the outputs, then the
 * workspace), through loop nests (the Loop IR, checked for in-bounds
 * accesses), selection trees, instruction selection, register allocation
 * and emission from the target's templates. */
#ifndef GDCC_CODEGEN_H
#define GDCC_CODEGEN_H

#include <stdio.h>

#include "ir.h"
#include "memplan.h"
#include "mir.h"
#include "target.h"

typedef struct {
	char *sym;
	Tensor *data;
	const char *tag;      /* a table the backend reuses (identity compared), or NULL */
	bool borrowed;        /* data is the graph's (an imported constant's tensor): not freed */
} DataItem;

/* A kernel of the program: the graph nodes it computes (Node ids, in
 * order: a fusion group's, or one node), and under --profile the symbol of
 * its own function. */
typedef struct {
	int *nodes;
	int nnodes;
	char *sym;            /* split: gdcc_kernel_<i>, else NULL */
} KernelInfo;

typedef struct {
	const Target *t;
	const Graph *g;
	MFunc *f;             /* the entry function; split: what follows the kernels */
	char *entry;          /* the entry's name as asked (names the data symbols) */
	char *rest;           /* split: the entry function's name, ENTRY_rest */
	bool split;           /* --profile: each kernel its own function (kf) */
	MFunc **kf;           /* split: the kernels' functions, nkernels of them */
	KernelInfo *kinfo;    /* per kernel, nkernels of them */
	int capk;
	const char **no_kernel; /* per node (Node.id): why it is in no kernel ("view", "empty"), else NULL */
	DataItem *data;
	int ndata, capdata;
	int64_t workspace_bytes;  /* planned_bytes + what the kernels need past it (scratch) */
	int64_t planned_bytes, naive_bytes; /* the memory plan's (MemPlan.bytes, .naive_bytes) */
	int nshared, ninplace, naliased;    /* ... and its counts */
	int nargs;            /* inputs + outputs + 1 (the workspace) */
	FILE *loops;          /* --emit=loops: the Loop IR as it is built */
	int nkernels;
	double seconds[3];    /* lowering, selection, allocation */
	long rss_kib[3];      /* peak resident memory after each */
	/* decisions taken from the .md (for the report) */
	int lanes;            /* f32 lanes of a vector (fixed), or per VLEN min (scalable) */
	int lmul;             /* register group of the vector loops (1) */
	int gemm_mr, gemm_kc, gemm_nc; /* GEMM register block rows, K block and N block (0: not used) */
	bool masked_tails;       /* fixed vectors: loop remainders as one masked vector */
	bool far_data;           /* the constants beyond the code's direct reach: addr.far, param far_data_section */
	int spill_slots;
	char *text;           /* the code's assembly, once rendered (program_render) */
	size_t textlen;
	/* what the reports say of the code, counted by program_render before
	 * it frees the instructions (with the assembly text, they are no
	 * longer needed; a large model's were most of its compile's memory) */
	bool rendered;
	int code_insts, code_bytes, code_frame; /* every function: instructions, bytes, largest frame */
	int entry_insts, entry_frame;           /* the entry function's */
} Program;

/* The report (--report=FILE, schema gdcc.report v1, docs/reports.md). */
struct PassLog;
/* (the passes: each log's entries in order, after parse+verify) */
void program_report(FILE *out, const Program *p, uint64_t hash, const double *front_seconds,
		    const struct PassLog *const *logs, int nlogs);

/* Compile g for t, in three stages (the pass manager, core/pipeline.c,
 * runs them): lowering to loop nests (the Loop IR) and selection trees,
 * with the workspace as `plan` says (NULL: one slot per value; nothing of
 * the plan is kept: the caller may free it after lowering); the entry
 * function named `entry`; `loops`, if given, receives a dump of the loop
 * nests.  NULL after errors (an op not lowered yet for the target is an
 * error naming op, dtype and target).  Then instruction selection and
 * register allocation, each followed by the machine-IR verifier.
 * `legal` is the legalize stage's decision per node, by Node.id
 * (legality_decide): the lowering dispatches on it and decides nothing
 * again (NULL: decided here, as for codegen()). */
/* split (--profile): each kernel becomes a function of its own,
 * `int gdcc_kernel_<i>(void **args)` on the same arguments, and the entry
 * function `ENTRY_rest` holds what follows the kernels (outputs that are
 * inputs or constants copied to their slots); the emitted table
 * gdcc_profile_kernels lists them all in order, gdcc_profile_nkernels
 * counts the kernels (runtime/harness.c calls and times them). */
Program *codegen_lower(const Graph *g, const Target *t, const LegalEntry *const *legal, const MemPlan *plan,
		       const char *entry, bool split, FILE *loops, Diag *d);
/* The functions of p, in emission order (split: the kernels, then the
 * entry; else the entry alone): how many, and the i-th. */
int program_nfuncs(const Program *p);
MFunc *program_func(const Program *p, int i);
/* The cost model's cycles of node n (the legality row's cost times its
 * work), or -1 when the row gives none; the report's estimated_cycles. */
double program_node_cycles(const Target *t, const Node *n);
bool codegen_select(Program *p, Diag *d);
bool codegen_allocate(Program *p, Diag *d);
/* All three, entry gdcc_entry (tests, fuzzing). */
Program *codegen(const Graph *g, const Target *t, const MemPlan *plan, FILE *loops, Diag *d);
void program_free(Program *p);
/* Where a program's constant data lives: NULL path, inline in the
 * assembly (.long directives); else in a weights file, named in the
 * .incbin directives by `path` (as the assembler will open it), this
 * program's data starting at `offset` (a multiple of 64). */
typedef struct {
	const char *path;
	int64_t offset;
} WeightsRef;
/* The whole assembly file: the code (as rendered, or rendered now), then
 * the constant data as w says (NULL: inline). */
void program_emit(FILE *out, const Program *p, const WeightsRef *w);
/* Render the code's assembly into p->text (the emit stage); its size in *bytes. */
bool program_render(Program *p, long long *bytes);
/* The weights file's bytes for p (its data symbols, each 32-byte aligned;
 * 0 when it has none), and writing them; false on a write error. */
int64_t program_weights_bytes(const Program *p);
bool program_write_weights(FILE *out, const Program *p);
/* The manifest (JSON): entry, arguments, dtypes, shapes, workspace,
 * weights (w as for program_emit), hash. */
void program_manifest(FILE *out, const Program *p, uint64_t model_hash, const WeightsRef *w);
/* The C header of p's entry point (core/header.c, docs/c-api.md); `path`
 * (NULL or "-": standard output) gives its prefix. */
void program_header(FILE *out, const Program *p, const char *path);

#endif
