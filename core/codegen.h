/* Code generation for one target: a verified graph becomes one function
 * `void gdcc_entry(void **args)` (args: the inputs, the outputs, then the
 * workspace), through loop nests (the Loop IR, checked for in-bounds
 * accesses), selection trees, instruction selection, register allocation
 * and emission from the target's templates. */
#ifndef GDCC_CODEGEN_H
#define GDCC_CODEGEN_H

#include <stdio.h>

#include "ir.h"
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
	int64_t workspace_bytes;
	int nargs;            /* inputs + outputs + 1 (the workspace) */
	FILE *loops;          /* --emit=loops: the Loop IR as it is built */
	FILE *after[3];       /* --print-after=lower|select|allocate */
	int nkernels;
	double seconds[3];    /* lowering, selection, allocation */
	long rss_kib[3];      /* peak resident memory after each */
	/* decisions taken from the .md (for the report) */
	int lanes;            /* f32 lanes of a vector (fixed), or per VLEN min (scalable) */
	int lmul;             /* register group of the vector loops (1) */
	int gemm_mr, gemm_kc; /* GEMM register block rows and K block (0: not used) */
	int spill_slots;
} Program;

/* The report (--report=FILE, schema gdcc.report v1, docs/reports.md). */
void program_report(FILE *out, const Program *p, uint64_t hash, const double *front_seconds);

/* Compile g for t; NULL after errors (an op not lowered yet for the target
 * is an error naming op, dtype and target).  `loops`, if given, receives a
 * dump of the loop nests. */
Program *codegen(const Graph *g, const Target *t, FILE *loops, Diag *d);
/* Where --print-after dumps go (NULL: none), set before codegen. */
extern FILE *codegen_print_after[3];
/* The entry function's name ("gdcc_entry"; segments of a placed model:
 * gdcc_segN), set before codegen. */
extern const char *codegen_entry;
void program_free(Program *p);
/* The whole assembly file. */
void program_emit(FILE *out, const Program *p);
/* The manifest (JSON): entry, arguments, dtypes, shapes, workspace, hash. */
void program_manifest(FILE *out, const Program *p, uint64_t model_hash);

#endif
