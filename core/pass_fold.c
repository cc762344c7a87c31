/* pass_fold: constant folding.
 * Assumes: a verified graph (passes.h): every value typed, g->nodes a
 * topological order, use lists exact.
 * Does: evaluates, at compile time, every node whose operands are all
 * constants, and shape(x) whatever x is (its result is x's static shape),
 * with the op's reference kernel (the operands materialized), and makes
 * each of its results that a node reads a constant holding the computed
 * data (INIT_TENSOR; a constant_of_shape becomes a fill(v) constant, which
 * needs no data).  One walk in topological order, so a chain of foldable
 * nodes folds in that walk: a node's operands were folded before it.
 * Not folded (left as they are):
 *   - a node one of whose operands or results is above the size cap
 *     (cx->fold_limit_bytes, 16 MiB when 0), which bounds what the pass
 *     holds and computes;
 *   - a node whose kernel reports an error (a gather index out of range,
 *     an .npy file that cannot be read): the run-time check stays;
 *   - ops with a side effect or randomness (fold_safe; today only dropout
 *     in training mode, which the verifier rejects);
 *   - nothing reads the node (dead: pass_dce's business).
 * A result that is a graph output stays computed, with its name: its
 * readers take the constant, the node stays (graph_can_replace refuses to
 * make a constant an output).  A folded result's constant takes over its
 * name and location; the node goes when none of its results is left used,
 * and with it the constants that only it read (so a folded chain leaves
 * one constant).  Other nodes left unused (what shape(x) read) are
 * pass_dce's.
 * Preserves: inputs and outputs (names, types, order), every result bit for
 * bit (the kernels the reference interpreter runs compute them).
 * Time: linear in the graph plus the folded kernels' work.  Counts one
 * change per node folded; compacts the graph. */
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "ops.h"
#include "passes.h"
#include "rewrite.h"
#include "util.h"

enum { FOLD_DEFAULT_LIMIT = 16 << 20 };

/* May n be evaluated at compile time?  Every op of ops.def is a function of
 * its operands and attributes, except dropout in training mode (random). */
static bool fold_safe(const Node *n)
{
	switch (n->op) {
	case OP_CONSTANT: /* already one */
		return false;
	case OP_DROPOUT:
		return attr_i(n, "training_mode") == 0;
	default:
		return true;
	}
}

static uint64_t value_bytes(const Value *v)
{
	return (uint64_t)shape_numel(&v->type.shape) * dtype_size(v->type.dtype);
}

static bool is_const(const Value *v) { return v->def && v->def->op == OP_CONSTANT; }

/* A constant for result v of n (holding t, owned; or, t NULL, a fill(v)
 * constant), appended to g->nodes (put in place at the end of the pass). */
static Node *append_const(Graph *g, const Node *n, const Value *v, Tensor *t)
{
	if (t)
		return graph_insert_tensor(g, g->nnodes, v->name, t, n->loc);
	Node *c = graph_insert_node(g, g->nnodes, OP_CONSTANT, NULL, 0, 1, v->name, n->loc);
	c->init = (ConstInit){.kind = INIT_FILL, .a = attr_f(n, "value")};
	Value *cv = c->out[0];
	cv->annotated = cv->typed = true;
	cv->annot = cv->type = v->type;
	return c;
}

/* Every operand use of v becomes a use of c, and c takes v's name unless v
 * is an output (which keeps its name and its node). */
static void redirect(Graph *g, Value *v, Value *c)
{
	if (!v->is_output) {
		/* the folded value keeps its name and where it was defined */
		graph_take_name(g, c, v);
		c->loc = v->loc;
		graph_replace_uses(g, v, c);
		return;
	}
	value_replace_operands(v, c);
}

/* Evaluate n; on success out[k] holds result k (the caller owns them). */
static bool evaluate(const Node *n, Tensor **out, uint64_t limit)
{
	int nin = n->nin;
	Tensor **in = xcalloc((size_t)nin + 1, sizeof *in);
	bool *owned = xcalloc((size_t)nin + 1, sizeof *owned);
	Tensor *shape_only = NULL;
	Diag scratch; /* kernel errors are the run time's, not the pass's */
	diag_init(&scratch);
	bool ok = true;
	for (int k = 0; k < nin && ok; k++) {
		const Value *v = n->in[k];
		if (n->op == OP_SHAPE) { /* reads the type only */
			shape_only = xcalloc(1, sizeof *shape_only);
			shape_only->type = v->type;
			in[k] = shape_only;
			continue;
		}
		const Node *c = v->def;
		if (value_bytes(v) > limit) {
			ok = false;
		} else if (c->init.kind == INIT_TENSOR) {
			in[k] = c->init.data;
		} else {
			in[k] = tensor_new(v->type.dtype, &v->type.shape);
			owned[k] = true;
			ok = materialize_constant(c, in[k], &scratch);
		}
	}
	for (int k = 0; k < n->nout; k++)
		out[k] = ok ? tensor_new(n->out[k]->type.dtype, &n->out[k]->type.shape) : NULL;
	if (ok)
		ok = op_info[n->op].kernel(n, in, out, &scratch);
	if (!ok)
		for (int k = 0; k < n->nout; k++) {
			tensor_free(out[k]);
			out[k] = NULL;
		}
	for (int k = 0; k < nin; k++)
		if (owned[k])
			tensor_free(in[k]);
	free(shape_only);
	free(in);
	free(owned);
	diag_free(&scratch);
	return ok;
}

/* Fold node n if it can be; returns whether it did.  The constants made are
 * appended to g->nodes, and for each the position of n in *where. */
static bool fold_node(Graph *g, Node *n, uint64_t limit, int pos, int **where, int *nwhere, int *capwhere)
{
	if (!fold_safe(n))
		return false;
	bool read = false;
	for (int k = 0; k < n->nout; k++) {
		read |= n->out[k]->nusers > 0;
		if (value_bytes(n->out[k]) > limit)
			return false;
	}
	if (!read)
		return false; /* dead, or only outputs: nothing would change */
	if (n->op != OP_SHAPE)
		for (int k = 0; k < n->nin; k++)
			if (!is_const(n->in[k]))
				return false;
	Tensor **out = xcalloc((size_t)n->nout, sizeof *out);
	if (n->op != OP_CONSTANT_OF_SHAPE && !evaluate(n, out, limit)) {
		free(out);
		return false;
	}
	for (int k = 0; k < n->nout; k++) {
		Value *v = n->out[k];
		if (v->nusers == 0) {
			tensor_free(out[k]);
			continue;
		}
		Node *c = append_const(g, n, v, out[k]);
		if (*nwhere == *capwhere) {
			*capwhere = *capwhere ? 2 * *capwhere : 16;
			*where = xrealloc(*where, (size_t)*capwhere * sizeof **where);
		}
		(*where)[(*nwhere)++] = pos;
		redirect(g, v, c->out[0]);
	}
	free(out);
	bool live = false;
	for (int k = 0; k < n->nout; k++)
		live |= n->out[k]->nuses > 0;
	if (!live) {
		graph_remove_node(g, n);
		/* constants that only this node read are folded into it */
		for (int k = 0; k < n->nin; k++)
			if (is_const(n->in[k]) && n->in[k]->nuses == 0)
				graph_remove_node(g, n->in[k]->def);
	}
	return true;
}

bool pass_fold(Graph *g, PassContext *cx, Diag *d)
{
	(void)d;
	uint64_t limit = cx->fold_limit_bytes ? cx->fold_limit_bytes : FOLD_DEFAULT_LIMIT;
	int n0 = g->nnodes;
	int *where = NULL, nwhere = 0, capwhere = 0;
	for (int i = 0; i < n0; i++) {
		Node *n = g->nodes[i];
		if (!node_removed(n) && fold_node(g, n, limit, i, &where, &nwhere, &capwhere))
			cx->changes++;
	}
	/* The new constants, appended, go just before the node each replaces:
	 * merge the two runs (both are in node order). */
	if (nwhere > 0) {
		Node **order = xmalloc((size_t)g->nnodes * sizeof *order);
		int k = 0, j = 0;
		for (int i = 0; i < n0; i++) {
			while (j < nwhere && where[j] == i) {
				order[k++] = g->nodes[n0 + j];
				j++;
			}
			order[k++] = g->nodes[i];
		}
		memcpy(g->nodes, order, (size_t)k * sizeof *order);
		free(order);
		for (int i = 0; i < g->nnodes; i++)
			g->nodes[i]->id = i;
	}
	free(where);
	graph_compact(g);
	return true;
}
