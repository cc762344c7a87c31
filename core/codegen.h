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
} DataItem;

typedef struct {
	const Target *t;
	const Graph *g;
	MFunc *f;
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
	int gemm_mr, gemm_kc, gemm_mc; /* GEMM register block rows and K block (0: not used) */
	int spill_slots;
	char *text;           /* the assembly, once rendered (program_render) */
	size_t textlen;
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
Program *codegen_lower(const Graph *g, const Target *t, const LegalEntry *const *legal, const MemPlan *plan,
		       const char *entry, FILE *loops, Diag *d);
bool codegen_select(Program *p, Diag *d);
bool codegen_allocate(Program *p, Diag *d);
/* All three, entry gdcc_entry (tests, fuzzing). */
Program *codegen(const Graph *g, const Target *t, const MemPlan *plan, FILE *loops, Diag *d);
void program_free(Program *p);
/* The whole assembly file: as rendered, or rendered now. */
void program_emit(FILE *out, const Program *p);
/* Render the assembly into p->text (the emit stage); its size in *bytes. */
bool program_render(Program *p, long long *bytes);
/* The manifest (JSON): entry, arguments, dtypes, shapes, workspace, hash. */
void program_manifest(FILE *out, const Program *p, uint64_t model_hash);

#endif
