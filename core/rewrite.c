/* Graph rewriting (see rewrite.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite.h"
#include "util.h"

static void push_user(Value *v, Node *n)
{
	if (v->nusers == v->capusers) {
		v->capusers = v->capusers ? 2 * v->capusers : 4;
		v->users = xrealloc(v->users, (size_t)v->capusers * sizeof *v->users);
	}
	v->users[v->nusers++] = n;
	v->nuses++;
}

void graph_build_uses(Graph *g)
{
	for (int i = 0; i < g->nvalues; i++)
		g->values[i]->nusers = g->values[i]->nuses = 0;
	for (int i = 0; i < g->nnodes; i++) {
		Node *n = g->nodes[i];
		if (n->removed)
			continue;
		for (int k = 0; k < n->nin; k++)
			push_user(n->in[k], n);
	}
	for (int i = 0; i < g->noutputs; i++)
		g->outputs[i]->nuses++;
}

void value_drop_user(Value *v, const Node *n)
{
	for (int i = v->nusers - 1; i >= 0; i--)
		if (v->users[i] == n) {
			v->users[i] = v->users[--v->nusers];
			v->nuses--;
			return;
		}
}

void node_set_operand(Node *n, int i, Value *v)
{
	if (n->in[i] == v)
		return;
	value_drop_user(n->in[i], n);
	n->in[i] = v;
	push_user(v, n);
}

Node *value_sole_user(const Value *v)
{
	return v->nusers == 1 && !v->is_output ? v->users[0] : NULL;
}

bool graph_can_replace(const Graph *g, const Value *from, const Value *to)
{
	(void)g;
	if (from == to)
		return false;
	if (!from->is_output)
		return true;
	/* an input that is also an output keeps its name: the name swap below
	 * would rename the input */
	return !from->is_input && to->def && to->def->op != OP_CONSTANT && !to->is_input && !to->is_output;
}

void value_replace_operands(Value *from, Value *to)
{
	if (from == to)
		return;
	while (from->nusers > 0) {
		Node *u = from->users[from->nusers - 1];
		for (int k = 0; k < u->nin; k++)
			if (u->in[k] == from) {
				node_set_operand(u, k, to);
				break;
			}
	}
}

bool graph_replace_uses(Graph *g, Value *from, Value *to)
{
	if (!graph_can_replace(g, from, to))
		return false;
	value_replace_operands(from, to);
	if (from->is_output) {
		/* The output keeps its name (the caller binds it): swap names. */
		char *nm = from->name, *src = from->src_name;
		from->name = to->name;
		from->src_name = to->src_name;
		to->name = nm;
		to->src_name = src;
		Loc l = from->loc;
		from->loc = to->loc;
		to->loc = l;
		strmap_set(&g->index, to->name, to);
		strmap_set(&g->index, from->name, from);
		for (int i = 0; i < g->noutputs; i++)
			if (g->outputs[i] == from) {
				g->outputs[i] = to;
				from->nuses--;
				to->nuses++;
			}
		from->is_output = false;
		to->is_output = true;
		/* what the model declared is the output's, whichever value has it */
		bool an = from->annotated;
		TensorType at = from->annot;
		from->annotated = to->annotated;
		from->annot = to->annot;
		to->annotated = an;
		to->annot = at;
	}
	return true;
}

void graph_take_name(Graph *g, Value *to, Value *from)
{
	if (to == from || to->is_input || to->is_output || from->is_input || from->is_output)
		return;
	char *nm = from->name, *src = from->src_name;
	from->name = to->name;
	from->src_name = to->src_name;
	to->name = nm;
	to->src_name = src;
	strmap_set(&g->index, to->name, to);
	strmap_set(&g->index, from->name, from);
}

char *graph_fresh_name(const Graph *g, const char *base)
{
	if (!graph_find_value(g, base))
		return xstrdup(base);
	for (unsigned long k = 1;; k++) {
		char *s = xasprintf("%s_%lu", base, k);
		if (!graph_find_value(g, s))
			return s;
		free(s);
	}
}

Node *graph_insert_node(Graph *g, int pos, OpKind op, Value **in, int nin, int nout, const char *base, Loc loc)
{
	char **names = xcalloc((size_t)nout + 1, sizeof *names);
	for (int i = 0; i < nout; i++) {
		char *b = nout == 1 ? xstrdup(base) : xasprintf("%s_%d", base, i);
		names[i] = graph_fresh_name(g, b);
		free(b);
	}
	Node *n = graph_add_node(g, op, in, nin, (const char *const *)names, nout, loc);
	for (int i = 0; i < nout; i++)
		free(names[i]);
	free(names);
	if (!n)
		return NULL;
	/* graph_add_node appended it: move it to pos */
	if (pos < g->nnodes - 1) {
		memmove(&g->nodes[pos + 1], &g->nodes[pos], (size_t)(g->nnodes - 1 - pos) * sizeof *g->nodes);
		g->nodes[pos] = n;
		for (int i = pos; i < g->nnodes; i++)
			g->nodes[i]->id = i;
	}
	return n;
}

Node *graph_insert_tensor(Graph *g, int pos, const char *base, Tensor *t, Loc loc)
{
	Node *n = graph_insert_node(g, pos, OP_CONSTANT, NULL, 0, 1, base, loc);
	n->init = (ConstInit){.kind = INIT_TENSOR, .data = t};
	Value *v = n->out[0];
	v->annotated = true;
	v->annot = t->type;
	v->type = t->type;
	v->typed = true;
	return n;
}

int graph_node_pos(const Graph *g, const Node *n)
{
	if (n->id >= 0 && n->id < g->nnodes && g->nodes[n->id] == n)
		return n->id;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i] == n)
			return i;
	return -1;
}

void graph_remove_node(Graph *g, Node *n)
{
	(void)g;
	if (n->removed)
		return;
	for (int k = 0; k < n->nin; k++)
		value_drop_user(n->in[k], n);
	n->removed = true;
}

bool node_removed(const Node *n) { return n->removed; }

void graph_compact(Graph *g)
{
	int kn = 0;
	for (int i = 0; i < g->nnodes; i++) {
		Node *n = g->nodes[i];
		if (!n->removed) {
			g->nodes[kn++] = n;
			continue;
		}
		for (int j = 0; j < n->nout; j++) {
			n->out[j]->def = NULL;
			n->out[j]->id = -1;
		}
		node_free(n);
	}
	g->nnodes = kn;
	for (int i = 0; i < g->nnodes; i++)
		g->nodes[i]->id = i;
	int k = 0;
	for (int i = 0; i < g->nvalues; i++) {
		Value *v = g->values[i];
		if (v->id < 0 || (!v->def && !v->is_input)) {
			free(v->name);
			free(v->src_name);
			free(v->users);
			free(v);
			continue;
		}
		v->id = k;
		g->values[k++] = v;
	}
	g->nvalues = k;
	graph_reindex(g);
}

bool graph_check_structure(const Graph *g, Diag *d)
{
	int before = d->nerrors;
	char *seen = xcalloc((size_t)g->nvalues + 1, 1);
	int *uses = xcalloc((size_t)g->nvalues + 1, sizeof *uses);
	for (int i = 0; i < g->ninputs; i++)
		if (g->inputs[i]->id >= 0 && g->inputs[i]->id < g->nvalues)
			seen[g->inputs[i]->id] = 1;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		if (n->removed) {
			diag_error(d, n->loc, "internal: removed node %d (%s) left in the graph", i, n->out[0]->name);
			continue;
		}
		if (n->id != i)
			diag_error(d, n->loc, "internal: node %d is numbered %d", i, n->id);
		for (int k = 0; k < n->nin; k++) {
			const Value *v = n->in[k];
			if (v->id < 0 || v->id >= g->nvalues || g->values[v->id] != v) {
				diag_error(d, n->in_loc[k], "internal: operand %d of '%s' is not a value of the graph", k,
					   n->nout ? n->out[0]->name : "?");
				continue;
			}
			if (!seen[v->id])
				diag_error(d, n->in_loc[k], "internal: '%s' is used before it is defined (not a topological order)",
					   v->name);
			uses[v->id]++;
		}
		for (int k = 0; k < n->nout; k++) {
			const Value *v = n->out[k];
			if (v->def != n || v->def_index != k)
				diag_error(d, n->loc, "internal: result %d of a %s names another definition", k,
					   n->nout ? n->out[0]->name : "?");
			if (v->id >= 0 && v->id < g->nvalues)
				seen[v->id] = 1;
		}
	}
	int *outs_of = xcalloc((size_t)g->nvalues + 1, sizeof *outs_of);
	for (int k = 0; k < g->noutputs; k++) {
		const Value *v = g->outputs[k];
		if (v->id >= 0 && v->id < g->nvalues && g->values[v->id] == v)
			outs_of[v->id]++;
		else
			diag_error(d, g->output_loc[k], "internal: output %d ('%s') is not a value of the graph", k, v->name);
	}
	for (int i = 0; i < g->nvalues; i++) {
		const Value *v = g->values[i];
		int outs = outs_of[i];
		if (v->nusers != uses[i] || v->nuses != uses[i] + outs)
			diag_error(d, v->loc, "internal: '%s' has %d operand uses and %d outputs, its use list says %d and %d",
				   v->name, uses[i], outs, v->nusers, v->nuses - v->nusers);
		if (v->is_output != (outs > 0))
			diag_error(d, v->loc, "internal: '%s' is%s marked an output", v->name, v->is_output ? "" : " not");
		if (!seen[i] && !v->is_input)
			diag_error(d, v->loc, "internal: '%s' is not defined", v->name);
	}
	free(seen);
	free(uses);
	free(outs_of);
	return d->nerrors == before;
}
