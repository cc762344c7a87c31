/* The graph passes (stage 2 of the pipeline, core/pipeline.c runs them).
 * Each is one file, core/pass_NAME.c, whose first comment says what it
 * assumes and what it preserves.  Every pass:
 *   - takes a verified graph (every value typed, use lists exact: rewrite.h)
 *     and leaves one: g->nodes a topological order, graph_check_structure()
 *     and graph_verify() both pass after it, removed nodes compacted away
 *     (graph_compact);
 *   - keeps the graph's inputs and outputs, by name, type and order;
 *   - changes no result beyond the per-op tolerance (docs/design.md says
 *     which rewrites reassociate floating point);
 *   - returns false only after an error reported into d (an internal
 *     failure); "nothing to do" is true. */
#ifndef GDCC_PASSES_H
#define GDCC_PASSES_H

#include "ir.h"

typedef struct {
	int opt_level;            /* 0, 1 or 2 */
	uint64_t fold_limit_bytes; /* constant folding: largest result it computes */
	int changes;              /* a pass adds the rewrites it made (for --report) */
} PassContext;

bool pass_canonicalize(Graph *g, PassContext *cx, Diag *d);
bool pass_fold(Graph *g, PassContext *cx, Diag *d);
bool pass_cse(Graph *g, PassContext *cx, Diag *d);
bool pass_dce(Graph *g, PassContext *cx, Diag *d);
bool pass_bnfold(Graph *g, PassContext *cx, Diag *d);
/* Fusion grouping: sets every node's `group` (kernel number, 0..k-1, in
 * order; constants -1) and the graph's kernel count (returned by
 * graph_kernels()).  It rewrites nothing. */
bool pass_fuse(Graph *g, PassContext *cx, Diag *d);
/* Kernels of a grouped graph: 1 + the largest group (0 when ungrouped:
 * then every non-constant node is its own kernel). */
int graph_kernels(const Graph *g);

#endif
