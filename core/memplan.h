/* Memory planning: where each intermediate value lives in the workspace.
 *
 * Assumes: a verified graph in topological order (node i runs before node
 * i+1), every value typed.  Values that are graph inputs or outputs live in
 * their argument buffers and constants in read-only data: the plan gives
 * them no workspace.  Every other value gets an offset (64-byte aligned)
 * such that two values whose lifetimes overlap never share bytes; a
 * value's lifetime runs from the node that defines it to its last user.
 *
 * With `reuse` false (-O0), every value has its own slot (no sharing), as
 * the backend did before planning.  With `reuse`, buffers are shared by
 * liveness, an elementwise node's result may take the buffer of an operand
 * of the same size that dies there (in place), and the result of a
 * reshape, flatten, squeeze, unsqueeze, identity or dropout (a view:
 * the same bytes in the same order) is its operand's storage (`alias`). */
#ifndef GDCC_MEMPLAN_H
#define GDCC_MEMPLAN_H

#include <stdio.h>

#include "ir.h"

typedef struct {
	int nvalues;
	int64_t *offset;     /* per value id: byte offset in the workspace, -1: none */
	int *alias;          /* per value id: the value whose storage it is (its own id when none) */
	int64_t bytes;       /* the planned part of the workspace (peak) */
	int64_t naive_bytes; /* what one slot per value would take */
	int nshared;         /* values placed in bytes another value used before */
	int ninplace;        /* results written over a dying operand */
	int naliased;        /* views that share their operand's storage */
} MemPlan;

MemPlan *memplan_build(const Graph *g, bool reuse);
void memplan_free(MemPlan *m);
/* A readable listing (--print-after=plan-memory). */
void memplan_print(FILE *out, const Graph *g, const MemPlan *m);

#endif
