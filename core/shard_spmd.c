/* One device's program of a sharded graph (shard.h): the nodes between two
 * collectives form a segment, a graph over the device's parts (local
 * types) that a target compiles; constants are cut to the device's part
 * (a partial sum's: whole at coordinate 0, zeros elsewhere) and compiled
 * in; attributes that spell a global size are given the local one
 * (reshape's shape, a grouped conv's group).  The collectives between the
 * segments are the SPMD runtime's (runtime/spmd.c, over MPI). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "ops.h"
#include "shard.h"
#include "util.h"
#include "verify.h"

void spmd_program_free(SpmdProgram *p)
{
	for (int i = 0; i < p->nsteps; i++) {
		graph_free(p->steps[i].g);
		free(p->steps[i].in_ids);
		free(p->steps[i].out_ids);
	}
	free(p->steps);
	memset(p, 0, sizeof *p);
}

typedef struct {
	const Graph *g;
	int64_t rank;
	Diag *d;
	int *last_use;   /* per global value: the last node position reading it (outputs: nnodes) */
	Graph *seg;      /* the segment being built */
	Value **local;   /* per global value: its value in seg */
	int *ins;        /* seg's inputs' global ids */
	int nins;
	int first;       /* position of seg's first node */
	SpmdProgram *out;
} Builder;

static SpmdStep *new_step(SpmdProgram *p)
{
	p->steps = xrealloc(p->steps, (size_t)(p->nsteps + 1) * sizeof *p->steps);
	SpmdStep *s = &p->steps[p->nsteps++];
	memset(s, 0, sizeof *s);
	return s;
}

/* Close the segment that ends before position `end`: its outputs are the
 * values it defines that a later node, a collective or the graph's
 * outputs read.  A segment nothing reads from is dropped. */
static void close_segment(Builder *b, int end)
{
	Graph *seg = b->seg;
	if (!seg)
		return;
	int *outs = xcalloc((size_t)b->g->nvalues + 1, sizeof *outs);
	int nouts = 0;
	for (int k = b->first; k < end; k++) {
		const Node *n = b->g->nodes[k];
		if (n->nin == 0)
			continue;
		for (int j = 0; j < n->nout; j++) {
			const Value *v = n->out[j];
			if (b->last_use[v->id] >= end && b->local[v->id]) {
				graph_add_output(seg, b->local[v->id], v->loc);
				outs[nouts++] = v->id;
			}
		}
	}
	if (nouts == 0) {
		graph_free(seg);
		free(outs);
		free(b->ins);
	} else {
		SpmdStep *s = new_step(b->out);
		s->g = seg;
		s->in_ids = b->ins;
		s->out_ids = outs;
	}
	b->seg = NULL;
	b->ins = NULL;
	b->nins = 0;
	memset(b->local, 0, (size_t)b->g->nvalues * sizeof *b->local);
}

/* v as seen inside the segment: a constant cut to the device's part, or
 * an input of the segment. */
static Value *operand(Builder *b, const Value *v)
{
	if (b->local[v->id])
		return b->local[v->id];
	const Mesh *m = &b->g->mesh;
	Shape l = shard_device_shape(b->g, v);
	const Node *def = v->def;
	if (def && def->nin == 0 && def->nout == 1) {
		Tensor *whole = tensor_new(v->type.dtype, &v->type.shape);
		Tensor *out[1] = {whole};
		if (!op_info[def->op].kernel(def, NULL, out, b->d)) {
			tensor_free(whole);
			return NULL;
		}
		Tensor *part = shard_part(m, &v->shard, whole, b->rank);
		tensor_free(whole);
		Node *c = graph_add_const(b->seg, v->name, v->type.dtype, &l, (ConstInit){.kind = INIT_TENSOR, .data = part},
					  v->loc);
		if (!c) {
			tensor_free(part);
			return NULL;
		}
		c->out[0]->type = c->out[0]->annot;
		c->out[0]->typed = true;
		return b->local[v->id] = c->out[0];
	}
	Value *in = graph_add_input(b->seg, v->name, v->type.dtype, &l, v->loc);
	b->ins = xrealloc(b->ins, (size_t)(b->nins + 1) * sizeof *b->ins);
	b->ins[b->nins++] = v->id;
	return b->local[v->id] = in;
}

static bool add_node(Builder *b, const Node *n)
{
	const Mesh *m = &b->g->mesh;
	if (!b->seg) {
		char name[32];
		snprintf(name, sizeof name, "%s_seg%d", b->g->name, b->out->nsteps);
		b->seg = graph_new(name);
		b->seg->file = b->g->file ? xstrdup(b->g->file) : NULL;
		b->seg->dir = b->g->dir ? xstrdup(b->g->dir) : NULL;
	}
	Value **in = xcalloc((size_t)n->nin + 1, sizeof *in);
	const char **names = xcalloc((size_t)n->nout + 1, sizeof *names);
	bool ok = true;
	for (int i = 0; i < n->nin && ok; i++)
		ok = (in[i] = operand(b, n->in[i])) != NULL;
	for (int j = 0; j < n->nout; j++)
		names[j] = n->out[j]->name;
	Node *c = ok ? graph_add_node(b->seg, n->op, in, n->nin, names, n->nout, n->loc) : NULL;
	free(in);
	free(names);
	if (!c) {
		if (ok)
			diag_error(b->d, n->loc, "internal error: the device program of '%s' has a name twice", n->out[0]->name);
		return false;
	}
	for (int k = 0; k < n->nattrs; k++)
		node_copy_attr(c, &n->attrs[k], n->attrs[k].loc);
	/* attributes that spell a global size */
	if (n->op == OP_RESHAPE) {
		Shape l = shard_device_shape(b->g, n->out[0]);
		node_set_ints(c, "shape", l.dim, l.rank);
	}
	if (n->op == OP_CONV && attr_i(n, "group") > 1 && n->in[0]->shard.dim[1] >= 0)
		node_set_int(c, "group", attr_i(n, "group") / m->size[n->in[0]->shard.dim[1]]);
	if (!graph_check_node(b->seg, c, b->d))
		return false;
	for (int j = 0; j < n->nout; j++) {
		const Value *v = n->out[j];
		Shape l = shard_device_shape(b->g, v);
		if (!shape_eq(&l, &c->out[j]->type.shape)) {
			char want[64], got[64];
			TensorType lt = {v->type.dtype, l};
			diag_error(b->d, n->loc, "internal error: on device %" PRId64 ", '%s' is %s, its sharding says %s", b->rank,
				   v->name, type_str(&c->out[j]->type, got, sizeof got), type_str(&lt, want, sizeof want));
			return false;
		}
		b->local[v->id] = c->out[j];
	}
	return true;
}

bool shard_device_program(const Graph *g, int64_t rank, SpmdProgram *out, Diag *d)
{
	memset(out, 0, sizeof *out);
	Builder b = {.g = g, .rank = rank, .d = d, .out = out};
	b.last_use = xcalloc((size_t)g->nvalues + 1, sizeof *b.last_use);
	b.local = xcalloc((size_t)g->nvalues + 1, sizeof *b.local);
	for (int i = 0; i < g->nvalues; i++)
		b.last_use[i] = -1;
	for (int k = 0; k < g->nnodes; k++)
		for (int i = 0; i < g->nodes[k]->nin; i++)
			b.last_use[g->nodes[k]->in[i]->id] = k;
	for (int i = 0; i < g->noutputs; i++)
		b.last_use[g->outputs[i]->id] = g->nnodes;
	bool ok = true;
	for (int k = 0; k < g->nnodes && ok; k++) {
		const Node *n = g->nodes[k];
		if (n->nin == 0)
			continue; /* constants: cut into the segments that read them */
		if (n->op == OP_SEND_RECV) { /* a pipeline's transfer: the sender's and the receiver's step */
			if (attr_i(n, "from") == rank || attr_i(n, "to") == rank) {
				close_segment(&b, k);
				new_step(out)->coll = n;
			}
			continue;
		}
		if (g->pipelined && n->stage != rank)
			continue; /* another stage's */
		if (op_info[n->op].shard == SHARD_COLLECTIVE) {
			close_segment(&b, k);
			SpmdStep *s = new_step(out);
			s->coll = n;
			continue;
		}
		if (!b.seg)
			b.first = k;
		ok = add_node(&b, n);
	}
	if (ok)
		close_segment(&b, g->nnodes);
	else if (b.seg) {
		graph_free(b.seg);
		free(b.ins);
	}
	for (int i = 0; ok && i < g->noutputs; i++)
		if (g->outputs[i]->def && g->outputs[i]->def->nin == 0) {
			diag_error(d, g->outputs[i]->loc, "output '%s' is a constant: not supported on several devices yet",
				   g->outputs[i]->name);
			ok = false;
		}
	free(b.last_use);
	free(b.local);
	if (!ok)
		spmd_program_free(out);
	return ok;
}
