/* gdcc reduce: the editable model and the measure.
 *
 * Model (reduce_int.h) holds values by index and nodes with operand and
 * result indices, so that an edit is a change of indices; this file copies
 * and frees it, makes it from a verified Graph (model_from_graph) and
 * builds it back into one (model_build), and prints a Graph as model.ir
 * text (graph_text).
 *
 * Smaller means, compared in this order: fewer computing nodes, fewer
 * outputs, fewer leaves (inputs and constants), fewer inputs, fewer tensor
 * elements, fewer attributes, simpler constant data.  Every accepted step
 * makes this strictly smaller, so the passes reach a fixed point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdcc_limits.h"
#include "ops.h"
#include "printer.h"
#include "reduce_int.h"
#include "util.h"

/* ---- the editable model ------------------------------------------------- */
int *dup_ints(const int *v, int n)
{
	int *c = xmalloc((size_t)(n ? n : 1) * sizeof *c);
	if (n)
		memcpy(c, v, (size_t)n * sizeof *c);
	return c;
}

static ConstInit init_copy(const ConstInit *c)
{
	ConstInit r = *c;
	r.values = NULL;
	r.ivalues = NULL;
	if (c->values) {
		r.values = xmalloc((size_t)(c->nvalues ? c->nvalues : 1) * sizeof *r.values);
		if (c->nvalues)
			memcpy(r.values, c->values, (size_t)c->nvalues * sizeof *r.values);
	}
	if (c->ivalues) {
		r.ivalues = xmalloc((size_t)(c->nvalues ? c->nvalues : 1) * sizeof *r.ivalues);
		if (c->nvalues)
			memcpy(r.ivalues, c->ivalues, (size_t)c->nvalues * sizeof *r.ivalues);
	}
	r.path = c->path ? xstrdup(c->path) : NULL;
	r.resolved = c->resolved ? xstrdup(c->resolved) : NULL;
	r.data = NULL;
	return r;
}

void init_clear(ConstInit *c)
{
	free(c->values);
	free(c->ivalues);
	free(c->path);
	free(c->resolved);
	memset(c, 0, sizeof *c);
}

void node_clear(RNode *n)
{
	free(n->in);
	free(n->out);
	for (int k = 0; k < n->nattrs; k++)
		attr_free(&n->attrs[k]);
	free(n->attrs);
	init_clear(&n->init);
	memset(n, 0, sizeof *n);
}

void model_free(Model *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nvals; i++)
		free(m->vals[i].name);
	for (int i = 0; i < m->nnodes; i++)
		node_clear(&m->nodes[i]);
	free(m->vals);
	free(m->nodes);
	free(m->inputs);
	free(m->outputs);
	free(m->name);
	free(m);
}

Model *model_copy(const Model *m)
{
	Model *c = xcalloc(1, sizeof *c);
	c->name = xstrdup(m->name);
	c->nvals = m->nvals;
	c->vals = xcalloc((size_t)m->nvals + 1, sizeof *c->vals);
	for (int i = 0; i < m->nvals; i++) {
		c->vals[i] = m->vals[i];
		c->vals[i].name = xstrdup(m->vals[i].name);
	}
	c->ninputs = m->ninputs;
	c->inputs = dup_ints(m->inputs, m->ninputs);
	c->noutputs = m->noutputs;
	c->outputs = dup_ints(m->outputs, m->noutputs);
	c->nnodes = m->nnodes;
	c->nodes = xcalloc((size_t)m->nnodes + 1, sizeof *c->nodes);
	for (int i = 0; i < m->nnodes; i++) {
		const RNode *n = &m->nodes[i];
		RNode *d = &c->nodes[i];
		*d = *n;
		d->in = dup_ints(n->in, n->nin);
		d->out = dup_ints(n->out, n->nout);
		d->attrs = xcalloc((size_t)n->nattrs + 1, sizeof *d->attrs);
		for (int k = 0; k < n->nattrs; k++)
			attr_copy(&d->attrs[k], &n->attrs[k]);
		d->init = init_copy(&n->init);
	}
	return c;
}

/* The editable form of a verified graph.  NULL (and *why) when it holds
 * something a model.ir cannot say (data held only in memory). */
Model *model_from_graph(const Graph *g, const char **why)
{
	for (int i = 0; i < g->nvalues; i++)
		if (g->values[i]->id != i) {
			*why = "internal error: value numbering";
			return NULL;
		}
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->op == OP_CONSTANT && g->nodes[i]->init.kind == INIT_TENSOR) {
			*why = "it holds constant data that model.ir cannot print (an imported model: use 'gdcc import -o' first)";
			return NULL;
		}
	Model *m = xcalloc(1, sizeof *m);
	m->name = xstrdup(g->name);
	m->nvals = g->nvalues;
	m->vals = xcalloc((size_t)g->nvalues + 1, sizeof *m->vals);
	for (int i = 0; i < g->nvalues; i++) {
		const Value *v = g->values[i];
		m->vals[i].name = xstrdup(v->name);
		m->vals[i].type = v->typed ? v->type : v->annot;
	}
	m->ninputs = g->ninputs;
	m->inputs = xmalloc((size_t)(g->ninputs + 1) * sizeof *m->inputs);
	for (int i = 0; i < g->ninputs; i++)
		m->inputs[i] = g->inputs[i]->id;
	m->noutputs = g->noutputs;
	m->outputs = xmalloc((size_t)(g->noutputs + 1) * sizeof *m->outputs);
	for (int i = 0; i < g->noutputs; i++)
		m->outputs[i] = g->outputs[i]->id;
	m->nnodes = g->nnodes;
	m->nodes = xcalloc((size_t)g->nnodes + 1, sizeof *m->nodes);
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		RNode *d = &m->nodes[i];
		d->op = n->op;
		d->nin = n->nin;
		d->nout = n->nout;
		d->in = xmalloc((size_t)(n->nin + 1) * sizeof *d->in);
		d->out = xmalloc((size_t)(n->nout + 1) * sizeof *d->out);
		for (int k = 0; k < n->nin; k++)
			d->in[k] = n->in[k]->id;
		for (int k = 0; k < n->nout; k++)
			d->out[k] = n->out[k]->id;
		d->nattrs = n->nattrs;
		d->attrs = xcalloc((size_t)n->nattrs + 1, sizeof *d->attrs);
		for (int k = 0; k < n->nattrs; k++)
			attr_copy(&d->attrs[k], &n->attrs[k]);
		if (n->op == OP_CONSTANT) {
			d->init = init_copy(&n->init);
			if (d->init.kind == INIT_NPY) {
				/* candidates run in other folders: absolute paths */
				char *abs = realpath(n->init.resolved, NULL);
				free(d->init.path);
				free(d->init.resolved);
				d->init.path = xstrdup(abs ? abs : n->init.resolved);
				d->init.resolved = xstrdup(d->init.path);
				free(abs);
			}
		}
	}
	return m;
}

bool type_eq(const TensorType *a, const TensorType *b)
{
	return a->dtype == b->dtype && shape_eq(&a->shape, &b->shape);
}

/* Build the model as a Graph: only what the outputs need (dead nodes and
 * unused inputs go), outputs deduplicated, and an output that has become
 * an input dropped unless nothing else is left.  Results carry no written
 * types, so shape inference decides them.  NULL when the edit left a use
 * without its definition or a name twice. */
Graph *model_build(const Model *m)
{
	int nv = m->nvals;
	bool *live = xcalloc((size_t)nv + 1, sizeof *live);
	bool *is_input = xcalloc((size_t)nv + 1, sizeof *is_input);
	bool *node_live = xcalloc((size_t)m->nnodes + 1, sizeof *node_live);
	Value **vm = xcalloc((size_t)nv + 1, sizeof *vm);
	int *outs = xmalloc((size_t)(m->noutputs + 1) * sizeof *outs);
	int nouts = 0;
	Graph *g = graph_new(m->name);
	bool ok = true;
	for (int i = 0; i < m->ninputs; i++)
		is_input[m->inputs[i]] = true;
	int computed = 0;
	for (int i = 0; i < m->noutputs; i++)
		computed += !is_input[m->outputs[i]];
	for (int i = 0; i < m->noutputs; i++) {
		int o = m->outputs[i];
		bool seen = false;
		for (int k = 0; k < nouts; k++)
			seen |= outs[k] == o;
		if (!seen && (!is_input[o] || computed == 0)) {
			outs[nouts++] = o;
			live[o] = true;
		}
	}
	for (int i = m->nnodes - 1; i >= 0; i--) {
		const RNode *n = &m->nodes[i];
		if (n->dead)
			continue;
		for (int k = 0; k < n->nout; k++)
			node_live[i] |= live[n->out[k]];
		if (node_live[i])
			for (int k = 0; k < n->nin; k++)
				live[n->in[k]] = true;
	}
	Loc nowhere = loc_at(NULL, 0, 0);
	for (int i = 0; ok && i < m->ninputs; i++) {
		int id = m->inputs[i];
		if (!live[id] || vm[id])
			continue;
		const RValue *v = &m->vals[id];
		ok = (vm[id] = graph_add_input(g, v->name, v->type.dtype, &v->type.shape, nowhere)) != NULL;
	}
	for (int i = 0; ok && i < m->nnodes; i++) {
		const RNode *n = &m->nodes[i];
		if (!node_live[i])
			continue;
		if (n->op == OP_CONSTANT) {
			const RValue *v = &m->vals[n->out[0]];
			ConstInit init = init_copy(&n->init);
			Node *c = graph_add_const(g, v->name, v->type.dtype, &v->type.shape, init, nowhere);
			if (!c) {
				init_clear(&init);
				ok = false;
				break;
			}
			vm[n->out[0]] = c->out[0];
			continue;
		}
		Value **ins = xmalloc((size_t)(n->nin + 1) * sizeof *ins);
		const char **names = xmalloc((size_t)(n->nout + 1) * sizeof *names);
		for (int k = 0; k < n->nin; k++)
			ok &= (ins[k] = vm[n->in[k]]) != NULL;
		for (int k = 0; k < n->nout; k++)
			names[k] = m->vals[n->out[k]].name;
		Node *b = ok ? graph_add_node(g, n->op, ins, n->nin, names, n->nout, nowhere) : NULL;
		free(ins);
		free(names);
		if (!b) {
			ok = false;
			break;
		}
		for (int k = 0; k < n->nout; k++)
			vm[n->out[k]] = b->out[k];
		for (int k = 0; k < n->nattrs; k++) {
			node_copy_attr(b, &n->attrs[k], nowhere);
		}
	}
	for (int i = 0; ok && i < nouts; i++) {
		if (!vm[outs[i]])
			ok = false;
		else
			graph_add_output(g, vm[outs[i]], nowhere);
	}
	if (ok && g->noutputs == 0)
		ok = false;
	free(live);
	free(is_input);
	free(node_live);
	free(vm);
	free(outs);
	if (!ok) {
		graph_free(g);
		return NULL;
	}
	return g;
}

char *graph_text(const Graph *g, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f) {
		fprintf(stderr, "gdcc: error: out of memory\n");
		abort();
	}
	print_graph(f, g);
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

/* ---- the measure ----------------------------------------------------------- */
static int data_complexity(const ConstInit *c)
{
	switch (c->kind) {
	case INIT_ZEROS: return 0;
	case INIT_FILL: return 1;
	case INIT_INLINE: return c->nvalues > 1 ? 2 : 1;
	case INIT_RANDOM:
	case INIT_NORMAL: return 3;
	default: return 4;
	}
}

Measure measure_of(const Graph *g)
{
	Measure m = {{0}};
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		if (n->op == OP_CONSTANT) {
			m.v[2]++;
			m.v[6] += data_complexity(&n->init);
		} else {
			m.v[0]++;
		}
		m.v[5] += n->nattrs;
	}
	m.v[1] = g->noutputs;
	m.v[2] += g->ninputs;
	m.v[3] = g->ninputs;
	for (int i = 0; i < g->nvalues; i++) {
		int64_t k;
		if (!shape_numel_checked(&g->values[i]->type.shape, &k) || k > INT64_MAX / 4 - m.v[4])
			k = INT64_MAX / 4 - m.v[4];
		m.v[4] += k;
	}
	return m;
}

bool measure_less(const Measure *a, const Measure *b)
{
	for (int i = 0; i < NMEASURE; i++)
		if (a->v[i] != b->v[i])
			return a->v[i] < b->v[i];
	return false;
}
