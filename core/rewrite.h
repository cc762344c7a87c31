/* Graph rewriting: use lists, replace-all-uses, and node insertion and
 * removal that keep g->nodes a topological order.
 *
 * Every Value has its users (one entry per operand slot that reads it) and
 * nuses (those plus one per appearance among the graph's outputs).  The
 * functions here keep both exact; graph_build_uses() recomputes them from
 * the operands, for code that edits n->in directly.
 *
 * Removal is two-step: graph_remove_node() detaches a node (its operands
 * lose a use, the node is marked), graph_compact() frees the marked nodes
 * and the values nothing defines any more, and renumbers nodes and values.
 * Between the two, g->nodes may hold removed nodes (node_removed()). */
#ifndef GDCC_REWRITE_H
#define GDCC_REWRITE_H

#include "ir.h"

/* Recompute users and nuses of every value from the operands and outputs. */
void graph_build_uses(Graph *g);
/* Drop one user entry of n from v (and one use); no-op when absent. */
void value_drop_user(Value *v, const Node *n);
/* Operand i of n becomes v (uses moved). */
void node_set_operand(Node *n, int i, Value *v);
/* Number of uses of v that are operands (not outputs). */
static inline int value_operand_uses(const Value *v) { return v->nusers; }
/* The only node that uses v (once), when v is not an output; else NULL. */
Node *value_sole_user(const Value *v);

/* Every use of `from` becomes a use of `to`: operands, and the graph's
 * outputs.  An output keeps its name: when `from` is an output, `to` takes
 * over its name (and `from` gets `to`'s), so only a `to` that a node
 * computes and that is not an input, a constant or an output already can
 * replace an output; graph_can_replace() says whether the call will
 * succeed, and graph_replace_uses() does nothing and returns false when it
 * would not.  `to` must be defined before every user of `from`. */
bool graph_can_replace(const Graph *g, const Value *from, const Value *to);
/* Only the operand uses of `from` become uses of `to` (an output stays
 * `from`'s, under its name). */
void value_replace_operands(Value *from, Value *to);
bool graph_replace_uses(Graph *g, Value *from, Value *to);

/* Before graph_replace_uses(g, from, to) where `to` is a value the pass
 * just made (a fresh name) and `from` goes away: swap their names (and
 * source names), so that the value the model named keeps its name in
 * dumps, reports and messages.  Neither may be a graph input or output. */
void graph_take_name(Graph *g, Value *to, Value *from);
/* A name not used in g: `base`, else base_1, base_2, ... (malloc'd). */
char *graph_fresh_name(const Graph *g, const char *base);
/* A node inserted at position pos of g->nodes (0 <= pos <= g->nnodes),
 * with results named fresh from `base` (base, base_1, ...).  Its operands
 * must be defined before pos.  The results are untyped: type them with
 * graph_check_node(). */
Node *graph_insert_node(Graph *g, int pos, OpKind op, Value **in, int nin, int nout, const char *base, Loc loc);
/* A constant holding t (owned: INIT_TENSOR), typed, at position pos. */
Node *graph_insert_tensor(Graph *g, int pos, const char *base, Tensor *t, Loc loc);
/* Position of n in g->nodes (its id while the graph is not being edited
 * out of order; searched otherwise). */
int graph_node_pos(const Graph *g, const Node *n);

/* Detach n: its operands lose their uses.  Its results must be unused and
 * not outputs. */
void graph_remove_node(Graph *g, Node *n);
bool node_removed(const Node *n);
/* Free the removed nodes and the values left without a definition (graph
 * inputs stay), renumber, rebuild the name index. */
void graph_compact(Graph *g);

/* Is g->nodes a topological order with exact use counts?  Errors to d. */
bool graph_check_structure(const Graph *g, Diag *d);

#endif
