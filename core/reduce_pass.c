/* gdcc reduce: the edits and the reduction passes.
 *
 * Each pass makes edited copies of the current model (r->cur) and hands
 * them to try_model (reduce.c), which keeps one only when it verifies, is
 * smaller and still meets the condition.
 *
 * Passes: ddmin-style chunk removal over the outputs and over the nodes
 * (halving the chunk size down to 2), then greedy passes to a fixed point:
 * each node alone (its uses rewired to an operand, its operands exposed as
 * outputs, its results turned into inputs or constants), each output,
 * inputs into constants, constant data (npy/random/normal/inline into
 * zeros or fill), each attribute (dropped: its default), and shapes (a dim
 * of an input or constant set to 1 or halved, alone or everywhere it
 * occurs; shape inference follows and the verifier rejects what no longer
 * fits). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "reduce_int.h"
#include "util.h"

/* ---- edits ---------------------------------------------------------------- */
typedef enum {
	RM_BYPASS,  /* results -> an operand of the same type, else an input */
	RM_EXPOSE,  /* results -> inputs; the operands computed elsewhere become outputs */
	RM_INPUT,   /* results -> inputs */
	RM_OPERAND, /* results -> operand `pick` where its dtype fits (shapes may differ), else an input */
	RM_ZEROS,   /* one result -> a constant of zeros */
	RM_RANDOM,  /* one result -> a constant of random data */
} RemoveMode;

static void add_input(Model *m, int id)
{
	m->inputs = xrealloc(m->inputs, (size_t)(m->ninputs + 1) * sizeof *m->inputs);
	m->inputs[m->ninputs++] = id;
}

static void add_output(Model *m, int id)
{
	for (int i = 0; i < m->noutputs; i++)
		if (m->outputs[i] == id)
			return;
	m->outputs = xrealloc(m->outputs, (size_t)(m->noutputs + 1) * sizeof *m->outputs);
	m->outputs[m->noutputs++] = id;
}

static ConstInit random_init(DType dt, uint64_t seed)
{
	ConstInit c = {0};
	if (dt == DT_BOOL) {
		c.kind = INIT_FILL;
		c.a = 1;
		return c;
	}
	c.kind = INIT_RANDOM;
	c.seed = seed;
	c.a = dtype_is_int(dt) ? 0 : -1;
	c.b = dtype_is_int(dt) ? 8 : 1;
	return c;
}

/* Turn node i of m into a constant with init (one result only). */
static void make_constant(Model *m, int i, ConstInit init)
{
	RNode *n = &m->nodes[i];
	int out = n->out[0];
	node_clear(n);
	n->op = OP_CONSTANT;
	n->nout = 1;
	n->out = dup_ints(&out, 1);
	n->in = dup_ints(NULL, 0);
	n->attrs = xcalloc(1, sizeof *n->attrs);
	n->init = init;
}

/* A copy of m without the nodes marked in rm (NULL when an edit does not apply). */
static Model *remove_nodes(const Model *m, const bool *rm, RemoveMode mode, int pick)
{
	Model *c = model_copy(m);
	int *sub = xmalloc((size_t)(c->nvals + 1) * sizeof *sub);
	int *def = xmalloc((size_t)(c->nvals + 1) * sizeof *def); /* defining node, -1 for inputs */
	for (int i = 0; i < c->nvals; i++)
		sub[i] = i, def[i] = -1;
	for (int i = 0; i < c->nnodes; i++)
		for (int k = 0; k < c->nodes[i].nout; k++)
			def[c->nodes[i].out[k]] = i;
	bool ok = true;
	for (int i = 0; ok && i < c->nnodes; i++) {
		RNode *n = &c->nodes[i];
		for (int k = 0; k < n->nin; k++)
			n->in[k] = sub[n->in[k]];
		if (!rm[i])
			continue;
		if (mode == RM_ZEROS || mode == RM_RANDOM) {
			if (n->nout != 1 || n->op == OP_CONSTANT) {
				ok = false;
				break;
			}
			DType dt = c->vals[n->out[0]].type.dtype;
			ConstInit init = mode == RM_ZEROS ? (ConstInit){.kind = INIT_ZEROS} : random_init(dt, (uint64_t)i + 1);
			make_constant(c, i, init);
			continue;
		}
		for (int k = 0; k < n->nout; k++) {
			int res = n->out[k], rep = -1;
			const TensorType *t = &c->vals[res].type;
			if (mode == RM_BYPASS) {
				for (int j = 0; j < n->nin && rep < 0; j++)
					if (type_eq(&c->vals[n->in[j]].type, t))
						rep = n->in[j];
			} else if (mode == RM_OPERAND && pick < n->nin && c->vals[n->in[pick]].type.dtype == t->dtype) {
				rep = n->in[pick];
			}
			if (rep >= 0)
				sub[res] = rep;
			else
				add_input(c, res);
		}
		if (mode == RM_EXPOSE)
			for (int j = 0; j < n->nin; j++) {
				int d = def[n->in[j]];
				if (d >= 0 && !rm[d] && c->nodes[d].op != OP_CONSTANT)
					add_output(c, n->in[j]);
			}
		n->dead = true;
	}
	for (int i = 0; i < c->noutputs; i++)
		c->outputs[i] = sub[c->outputs[i]];
	free(sub);
	free(def);
	if (!ok) {
		model_free(c);
		return NULL;
	}
	return c;
}

static bool try_remove(Reducer *r, const bool *rm, RemoveMode mode, int pick, const char *what)
{
	Model *c = remove_nodes(r->cur, rm, mode, pick);
	return c && try_model(r, c, what, false);
}

/* Node indices of the computing nodes of the current model. */
static int compute_nodes(const Model *m, int *idx)
{
	int n = 0;
	for (int i = 0; i < m->nnodes; i++)
		if (m->nodes[i].op != OP_CONSTANT)
			idx[n++] = i;
	return n;
}

static const char *const mode_names[] = {"rewired to an operand", "operands exposed as outputs", "results made inputs",
					 "rewired to an operand", "made zeros", "made random"};

/* ddmin-style: remove chunks of consecutive computing nodes, halving the
 * chunk size when no chunk of a size goes. */
bool ddmin_nodes(Reducer *r)
{
	bool any = false;
	int *idx = xmalloc((size_t)(r->cur->nnodes + 1) * sizeof *idx);
	int n = compute_nodes(r->cur, idx);
	for (int chunk = n / 2; chunk >= 2 && !r->stop;) {
		bool progress = false;
		for (int start = n - chunk; start > -chunk && !r->stop;) {
			int lo = start < 0 ? 0 : start, hi = start + chunk;
			bool *rm = xcalloc((size_t)r->cur->nnodes + 1, sizeof *rm);
			for (int k = lo; k < hi && k < n; k++)
				rm[idx[k]] = true;
			char what[96];
			bool done = false;
			static const RemoveMode modes[] = {RM_BYPASS, RM_EXPOSE, RM_INPUT};
			for (int mi = 0; mi < 3 && !done; mi++) {
				int k = (hi < n ? hi : n) - lo;
				snprintf(what, sizeof what, "removed %d node%s (%s)", k, k == 1 ? "" : "s", mode_names[modes[mi]]);
				done = try_remove(r, rm, modes[mi], 0, what);
			}
			free(rm);
			if (done) {
				progress = any = true;
				idx = xrealloc(idx, (size_t)(r->cur->nnodes + 1) * sizeof *idx);
				n = compute_nodes(r->cur, idx);
				if (start > n - chunk)
					start = n - chunk;
			} else {
				start -= chunk;
			}
		}
		if (!progress)
			chunk /= 2;
		else if (chunk > n / 2)
			chunk = n / 2;
	}
	free(idx);
	return any;
}

static Model *without_outputs(const Model *m, int lo, int hi)
{
	Model *c = model_copy(m);
	int k = 0;
	for (int i = 0; i < c->noutputs; i++)
		if (i < lo || i >= hi)
			c->outputs[k++] = c->outputs[i];
	c->noutputs = k;
	return c;
}

bool ddmin_outputs(Reducer *r)
{
	bool any = false;
	for (int chunk = r->cur->noutputs / 2; chunk >= 1 && !r->stop;) {
		bool progress = false;
		for (int start = 0; start < r->cur->noutputs && !r->stop;) {
			int hi = start + chunk > r->cur->noutputs ? r->cur->noutputs : start + chunk;
			if (hi - start >= r->cur->noutputs)
				break;
			char what[64];
			snprintf(what, sizeof what, "removed %d output%s", hi - start, hi - start == 1 ? "" : "s");
			if (try_model(r, without_outputs(r->cur, start, hi), what, false))
				progress = any = true;
			else
				start += chunk;
		}
		if (!progress)
			chunk /= 2;
		else if (chunk > r->cur->noutputs / 2)
			chunk = r->cur->noutputs / 2;
	}
	return any;
}

/* Greedy: each computing node alone, from the last, with every way of removing it. */
bool pass_nodes(Reducer *r)
{
	bool any = false;
	for (int i = r->cur->nnodes - 1; i >= 0 && !r->stop; i--) {
		if (i >= r->cur->nnodes)
			i = r->cur->nnodes - 1;
		if (i < 0)
			break;
		if (r->cur->nodes[i].op == OP_CONSTANT)
			continue;
		/* (an accepted candidate replaces r->cur: keep copies) */
		const char *op = op_info[r->cur->nodes[i].op].name;
		int nin = r->cur->nodes[i].nin;
		int *in = dup_ints(r->cur->nodes[i].in, nin);
		TensorType *tin = xmalloc((size_t)(nin + 1) * sizeof *tin);
		for (int j = 0; j < nin; j++)
			tin[j] = r->cur->vals[in[j]].type;
		TensorType tout = r->cur->vals[r->cur->nodes[i].out[0]].type;
		bool *rm = xcalloc((size_t)r->cur->nnodes + 1, sizeof *rm);
		rm[i] = true;
		char what[128];
		bool done = false;
		/* operands of the result's own type first, then any of its dtype */
		for (int same = 1; same >= 0 && !done; same--)
			for (int j = 0; !done && j < nin; j++) {
				if (type_eq(&tin[j], &tout) != (same == 1) || tin[j].dtype != tout.dtype)
					continue;
				bool dup = false;
				for (int k = 0; k < j; k++)
					dup |= in[k] == in[j];
				if (dup)
					continue;
				snprintf(what, sizeof what, "removed %s (uses rewired to operand %d)", op, j + 1);
				done = try_remove(r, rm, RM_OPERAND, j, what);
			}
		static const RemoveMode modes[] = {RM_EXPOSE, RM_INPUT, RM_ZEROS, RM_RANDOM};
		for (int mi = 0; mi < 4 && !done; mi++) {
			snprintf(what, sizeof what, "removed %s (%s)", op, mode_names[modes[mi]]);
			done = try_remove(r, rm, modes[mi], 0, what);
		}
		free(rm);
		free(in);
		free(tin);
		any |= done;
	}
	return any;
}

bool pass_outputs(Reducer *r)
{
	bool any = false;
	for (int i = r->cur->noutputs - 1; i >= 0 && r->cur->noutputs > 1 && !r->stop; i--) {
		if (i >= r->cur->noutputs)
			continue;
		char what[160];
		snprintf(what, sizeof what, "removed output %s", r->cur->vals[r->cur->outputs[i]].name);
		any |= try_model(r, without_outputs(r->cur, i, i + 1), what, false);
	}
	return any;
}

/* Inputs into constants (random data, then zeros). */
bool pass_inputs(Reducer *r)
{
	bool any = false;
	for (int i = r->cur->ninputs - 1; i >= 0 && !r->stop; i--) {
		if (i >= r->cur->ninputs)
			continue;
		for (int kind = 0; kind < 2; kind++) {
			Model *c = model_copy(r->cur);
			int id = c->inputs[i];
			memmove(c->inputs + i, c->inputs + i + 1, (size_t)(c->ninputs - i - 1) * sizeof *c->inputs);
			c->ninputs--;
			/* the constant goes first: before every use */
			c->nodes = xrealloc(c->nodes, (size_t)(c->nnodes + 1) * sizeof *c->nodes);
			memmove(c->nodes + 1, c->nodes, (size_t)c->nnodes * sizeof *c->nodes);
			c->nnodes++;
			memset(&c->nodes[0], 0, sizeof c->nodes[0]);
			c->nodes[0].out = dup_ints(&id, 1);
			c->nodes[0].nout = 1;
			c->nodes[0].op = OP_CONSTANT;
			c->nodes[0].in = dup_ints(NULL, 0);
			c->nodes[0].attrs = xcalloc(1, sizeof *c->nodes[0].attrs);
			c->nodes[0].init = kind == 0 ? random_init(c->vals[id].type.dtype, (uint64_t)i + 1) : (ConstInit){.kind = INIT_ZEROS};
			char what[160];
			snprintf(what, sizeof what, "input %s made a constant (%s)", c->vals[id].name, kind ? "zeros" : "random");
			if (try_model(r, c, what, false)) {
				any = true;
				break;
			}
		}
	}
	return any;
}

/* Constant data: zeros, fill(1), or (for npy) random. */
bool pass_data(Reducer *r)
{
	bool any = false;
	for (int i = 0; i < r->cur->nnodes && !r->stop; i++) {
		if (r->cur->nodes[i].op != OP_CONSTANT)
			continue;
		for (int kind = 0; kind < 3; kind++) {
			Model *c = model_copy(r->cur);
			RNode *n = &c->nodes[i];
			if (kind == 2 && n->init.kind != INIT_NPY) {
				model_free(c);
				break;
			}
			DType dt = c->vals[n->out[0]].type.dtype;
			ConstInit init = kind == 0 ? (ConstInit){.kind = INIT_ZEROS}
				       : kind == 1 ? (ConstInit){.kind = INIT_FILL, .a = 1}
						   : random_init(dt, (uint64_t)i + 1);
			init_clear(&n->init);
			n->init = init;
			char what[160];
			snprintf(what, sizeof what, "constant %s made %s", c->vals[n->out[0]].name,
				 kind == 0 ? "zeros" : kind == 1 ? "fill(1)" : "random");
			if (try_model(r, c, what, false)) {
				any = true;
				break;
			}
		}
	}
	return any;
}

/* Attributes dropped (to their defaults). */
bool pass_attrs(Reducer *r)
{
	bool any = false;
	for (int i = 0; i < r->cur->nnodes && !r->stop; i++)
		for (int k = r->cur->nodes[i].nattrs - 1; k >= 0 && !r->stop; k--) {
			if (i >= r->cur->nnodes || k >= r->cur->nodes[i].nattrs)
				continue;
			Model *c = model_copy(r->cur);
			RNode *n = &c->nodes[i];
			char what[160];
			snprintf(what, sizeof what, "dropped attribute %s of %s", n->attrs[k].name, c->vals[n->out[0]].name);
			attr_free(&n->attrs[k]);
			memmove(n->attrs + k, n->attrs + k + 1, (size_t)(n->nattrs - k - 1) * sizeof *n->attrs);
			n->nattrs--;
			any |= try_model(r, c, what, false);
		}
	return any;
}

/* The leaves (inputs and constants) whose shape may change: value ids, and
 * their constant node (-1 for inputs). */
static int leaves(const Model *m, int *ids, int *node)
{
	int n = 0;
	for (int i = 0; i < m->ninputs; i++)
		ids[n] = m->inputs[i], node[n++] = -1;
	for (int i = 0; i < m->nnodes; i++)
		if (m->nodes[i].op == OP_CONSTANT && m->nodes[i].init.kind != INIT_NPY)
			ids[n] = m->nodes[i].out[0], node[n++] = i;
	return n;
}

/* Set dimension `axis` of leaf k to d (axis -1: every dimension equal to
 * `from` of every leaf). */
static void set_dim(Model *c, int id, int node, int axis, int64_t from, int64_t d)
{
	Shape *s = &c->vals[id].type.shape;
	for (int a = 0; a < s->rank; a++)
		if (a == axis || (axis < 0 && s->dim[a] == from))
			s->dim[a] = d;
	if (node >= 0 && c->nodes[node].init.kind == INIT_INLINE) {
		int64_t numel = shape_numel(s);
		if (numel < c->nodes[node].init.nvalues)
			c->nodes[node].init.nvalues = numel;
	}
}

bool pass_shapes(Reducer *r)
{
	bool any = false;
	int cap = r->cur->ninputs + r->cur->nnodes + 1;
	int *ids = xmalloc((size_t)cap * sizeof *ids), *node = xmalloc((size_t)cap * sizeof *node);
	/* every occurrence of a dimension value at once (dims that must agree) */
	for (bool again = true; again && !r->stop;) {
		again = false;
		int n = leaves(r->cur, ids, node);
		int64_t best = 1;
		for (int k = 0; k < n; k++) {
			const Shape *s = &r->cur->vals[ids[k]].type.shape;
			for (int a = 0; a < s->rank; a++)
				best = s->dim[a] > best ? s->dim[a] : best;
		}
		/* from the largest value down */
		for (int64_t v = best; v > 1 && !r->stop;) {
			for (int t = 0; t < 2 && !again; t++) {
				int64_t to = t == 0 ? 1 : v / 2;
				if (t == 1 && to <= 1)
					break;
				Model *c = model_copy(r->cur);
				for (int k = 0; k < n; k++)
					set_dim(c, ids[k], node[k], -1, v, to);
				char what[96];
				snprintf(what, sizeof what, "every dimension %lld made %lld", (long long)v, (long long)to);
				again = try_model(r, c, what, false);
			}
			if (again) {
				any = true;
				break;
			}
			int64_t next = 1;
			for (int k = 0; k < n; k++) {
				const Shape *s = &r->cur->vals[ids[k]].type.shape;
				for (int a = 0; a < s->rank; a++)
					if (s->dim[a] < v && s->dim[a] > next)
						next = s->dim[a];
			}
			v = next;
		}
	}
	/* each dimension of each leaf */
	int n = leaves(r->cur, ids, node);
	for (int k = 0; k < n && !r->stop; k++) {
		for (int a = 0; !r->stop; a++) {
			n = leaves(r->cur, ids, node);
			if (k >= n || a >= r->cur->vals[ids[k]].type.shape.rank)
				break;
			int64_t v = r->cur->vals[ids[k]].type.shape.dim[a];
			for (int t = 0; t < 2 && v > 1; t++) {
				int64_t to = t == 0 ? 1 : v / 2;
				if (t == 1 && to <= 1)
					break;
				Model *c = model_copy(r->cur);
				set_dim(c, ids[k], node[k], a, 0, to);
				char what[192];
				snprintf(what, sizeof what, "dimension %d of %s made %lld", a, r->cur->vals[ids[k]].name, (long long)to);
				if (try_model(r, c, what, false)) {
					any = true;
					a--; /* this dimension again */
					break;
				}
			}
		}
	}
	free(ids);
	free(node);
	return any;
}
