/* pass_fuse: not written yet (every node its own kernel). */
#include "passes.h"

bool pass_fuse(Graph *g, PassContext *cx, Diag *d)
{
	(void)cx;
	(void)d;
	int k = 0;
	for (int i = 0; i < g->nnodes; i++)
		g->nodes[i]->group = g->nodes[i]->op == OP_CONSTANT ? -1 : k++;
	return true;
}

int graph_kernels(const Graph *g)
{
	int k = -1;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->group > k)
			k = g->nodes[i]->group;
	return k + 1;
}
