/* Memory planning: where each intermediate value lives in the workspace.
 *
 * Assumes: a verified graph in topological order (node i runs before node
 * i+1), every value typed.  Values that are graph inputs or outputs live in
 * their argument buffers and constants in read-only data: the plan gives
 * them no workspace.  Every other value gets an offset (64-byte aligned)
 * such that two values whose lifetimes overlap never share bytes; a
 * value's lifetime runs from the node that defines it to its last user
 * (positions are indices in g->nodes; a node in a kernel of several nodes,
 * Node.group from pass_fuse, counts as anywhere in that kernel's span, from
 * its first node to its last; the operand of a transpose that only a
 * matmul reads, as its B, lives until that matmul where the target may run
 * the matmul on a matrix engine, which reads it in place of the
 * transpose's result: on any target without one named).
 *
 * With `reuse` false (-O0), every value has its own slot (no sharing), as
 * the backend did before planning, in the order of the nodes' results.
 * With `reuse`:
 *   - views: the result of a reshape, flatten, squeeze, unsqueeze, identity
 *     or dropout (whose mask nothing reads) is the same bytes in the same
 *     order as its operand: `alias` names the value that holds them (a
 *     graph input, a constant, an output or a workspace value), and the
 *     backend emits no kernel for the node.  A view that is itself a graph
 *     output is not one (it is copied into its output buffer).
 *   - in place: the result of an elementwise op (add sub mul div pow max
 *     min sum, neg abs sqrt reciprocal relu clip hardsigmoid exp log
 *     sigmoid tanh erf gelu leaky_relu hardswish) may take the bytes of an
 *     operand of the same shape and element size whose storage nothing
 *     reads after this node's kernel (`inplace`).  The backend's
 *     elementwise kernel reads every element of every operand before it
 *     writes that element of the result, and at no other index (a kernel
 *     that computes several nodes must keep that, or take results in place
 *     only from values of its own kernel: in a kernel with a contraction or
 *     a reduction, a result takes no bytes of a value from outside it).
 *   - sharing: storage (a value with its views and the results written in
 *     place over it) is placed greedily by size, the biggest first, each at
 *     the lowest offset clear of every placed one whose lifetime overlaps
 *     (TFLite's "greedy by size"); the overlapping pairs come from one sweep
 *     in time.  Graphs with more than a few million overlapping pairs are
 *     placed first fit in time order instead (a free list), in time linear
 *     in the graph times the free list's length.
 *
 * The backend (codegen.c) uses `first`/`last` to check that every kernel
 * touches a value's bytes only while they are the value's. */
#ifndef GDCC_MEMPLAN_H
#define GDCC_MEMPLAN_H

#include <stdio.h>

#include "ir.h"

struct Target;

typedef struct {
	int nvalues;
	bool reuse;          /* what memplan_build was asked for */
	int64_t *offset;     /* per value id: byte offset in the workspace, -1: none
			      * (a view: its storage's offset, or -1 when that is no
			      * workspace value) */
	int *alias;          /* per value id: the value whose storage it is (its own id when none) */
	int *inplace;        /* per value id: the operand whose bytes it took, -1: none */
	int *first, *last;   /* per value id: the positions (node indices) between
			      * which its bytes are reserved for it and the values it
			      * shares them with (the whole graph without reuse); -1
			      * where offset is -1 */
	int64_t bytes;       /* the planned part of the workspace (peak) */
	int64_t naive_bytes; /* what one slot per value would take */
	int nshared;         /* storage placed in bytes that other storage used before */
	int ninplace;        /* results written over a dying operand */
	int naliased;        /* views that share their operand's storage */
	const struct Target *t; /* the target planned for, or NULL (any) */
} MemPlan;

MemPlan *memplan_build(const Graph *g, bool reuse);
/* The same for one target: what its backend reads of the graph (see
 * above); t NULL: any target (memplan_build). */
MemPlan *memplan_build_for(const Graph *g, bool reuse, const struct Target *t);
void memplan_free(MemPlan *m);
/* A readable listing (--print-after=plan-memory). */
void memplan_print(FILE *out, const Graph *g, const MemPlan *m);

#endif
