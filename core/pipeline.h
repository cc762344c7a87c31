/* The pass manager: the whole pipeline as one table (core/pipeline.c).
 *
 *   graph passes   canonicalize, fold, bnfold, cse, dce, fuse   (on the Graph)
 *   target stages  legalize, plan-memory, lower, select, allocate, emit
 *
 * pipeline_graph() runs the graph passes the options ask for (-O level,
 * --disable-pass), verifying after each with --verify-each, printing after
 * the ones --print-after names; pipeline_target() takes a graph through
 * the target stages to a Program.  A model placed on a target and its host
 * runs pipeline_graph() once, then pipeline_target() per segment.  Every
 * pass's time and counts go into a PassLog for --report. */
#ifndef GDCC_PIPELINE_H
#define GDCC_PIPELINE_H

#include <stdio.h>

#include "codegen.h"
#include "ir.h"
#include "options.h"

typedef struct {
	const char *name;
	const char *skipped;     /* why it did not run ("-O0", "--disable-pass"), or NULL */
	double seconds;
	int nodes_before, nodes_after; /* graph nodes (graph passes, legalize) */
	int changes;             /* rewrites a graph pass made */
	long long count;         /* a target stage's own measure (see unit) */
	const char *unit;        /* "kernels", "instructions", "bytes", ... or NULL */
} PassStat;

typedef struct PassLog {
	PassStat *s;
	int n, cap;
	int segment;             /* placed models: which segment (-1: the whole graph) */
} PassLog;

/* The names the table knows, for --print-after / --disable-pass checks:
 * NULL when name is one, else a message listing them (malloc'd). */
char *pipeline_unknown_pass(const char *name, bool for_print);
/* The table, one line per pass (gdcc --list-passes). */
void pipeline_list(FILE *out);

/* The graph passes; false after an error in d (an internal one: a pass
 * that broke the graph, caught by --verify-each). */
bool pipeline_graph(Graph *g, const Options *o, PassLog *log, Diag *d);
/* Legalization to emission for one target; NULL after errors.  `loops`,
 * if given, receives the Loop IR as it is built (--emit=loops). */
Program *pipeline_target(const Graph *g, const Target *t, const Options *o, PassLog *log, FILE *loops, Diag *d);

void passlog_free(PassLog *log);

#endif
