/* The graph verifier: arity, attributes, dtypes and shapes (by each op's
 * rule from the op table), declared types, outputs and dead values.
 * Fills in every value's type; reports every error it can find. */
#ifndef GDCC_VERIFY_H
#define GDCC_VERIFY_H

#include "ir.h"

/* True when the graph is valid; errors go to d. */
bool graph_verify(Graph *g, Diag *d);
/* One node: arity, attributes, its rule; types its results (for front ends
 * that need types while they build, such as the ONNX importer). */
bool graph_check_node(Graph *g, Node *n, Diag *d);
/* Remove the nodes whose results nothing uses (not outputs), repeatedly;
 * renumbers values and nodes. */
void graph_prune(Graph *g);

#endif
