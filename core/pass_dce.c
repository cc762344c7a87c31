/* pass_dce: dead-code elimination.
 * Assumes: a verified graph (passes.h): g->nodes a topological order, use
 * lists exact.
 * Does: removes every node none of whose results is used by a node or is a
 * graph output.  One walk from the last node back: a node's users all come
 * after it, so when the walk reaches it they are already gone if dead, and
 * a dead chain of any length goes in one linear pass.  A live node keeps
 * all its results, used or not (`a, _b = split(x)` keeps `_b`).
 * Preserves: the graph's inputs (an unused input stays an input), outputs,
 * and every result: every op is a function of its operands and attributes
 * (ops.def has no op with a side effect), so a node nothing reads can go.
 * Counts one change per node removed; compacts the graph. */
#include "passes.h"
#include "rewrite.h"

static bool node_live(const Node *n)
{
	for (int k = 0; k < n->nout; k++)
		if (n->out[k]->nuses > 0 || n->out[k]->is_output)
			return true;
	return false;
}

bool pass_dce(Graph *g, PassContext *cx, Diag *d)
{
	(void)d;
	int removed = 0;
	for (int i = g->nnodes - 1; i >= 0; i--) {
		Node *n = g->nodes[i];
		if (node_removed(n) || node_live(n))
			continue;
		graph_remove_node(g, n); /* its operands lose these uses */
		removed++;
	}
	graph_compact(g);
	cx->changes += removed;
	return true;
}
