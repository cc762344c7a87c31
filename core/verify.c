/* Graph verification and shape/dtype inference.
 * Assumes: values are defined before use (the parser and the builder API
 * guarantee it), so node order is a topological order.
 * Establishes: every value typed, every attribute known, of the right kind
 * and in range, every node's operands and results consistent with its
 * rule, at least one output.  Dead nodes (no result used or an output) and
 * unused inputs are warnings. */
#include <stdlib.h>
#include <string.h>

#include "gdcc_limits.h"
#include "rewrite.h"
#include "ops.h"
#include "util.h"
#include "verify.h"

static bool in_choices(const char *choices, const char *s)
{
	size_t len = strlen(s);
	for (const char *p = choices; *p;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == len && memcmp(p, s, n) == 0)
			return true;
		if (!bar)
			break;
		p = bar + 1;
	}
	return false;
}

static void list_attrs(OpKind op, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = 0;
	for (const AttrSpec *s = op_info[op].attrs; s->name && k < n; s++)
		k += snprintf(buf + k, n - k, "%s%s", k ? ", " : "", s->name);
	if (k == 0)
		snprintf(buf, n, "none");
}

static bool check_attrs(Node *n, Diag *d)
{
	const char *opname = op_info[n->op].name;
	bool ok = true;
	for (int i = 0; i < n->nattrs; i++) {
		Attr *a = &n->attrs[i];
		const AttrSpec *s = op_attr_spec(n->op, a->name);
		if (!s) {
			char acc[256];
			list_attrs(n->op, acc, sizeof acc);
			diag_error(d, a->loc, "%s: unknown attribute '%s' (accepted: %s)", opname, a->name, acc);
			ok = false;
			continue;
		}
		/* An integer literal is a fine float, and one number a fine
		 * one-element list: normalize before checking. */
		if (s->kind == ATTR_FLOAT && a->kind == ATTR_INT) {
			a->kind = ATTR_FLOAT;
			a->f = (double)a->i;
		} else if (s->kind == ATTR_INTS && a->kind == ATTR_INT) {
			a->ints = xcalloc(1, sizeof *a->ints);
			a->ints[0] = a->i;
			a->n = 1;
			a->kind = ATTR_INTS;
		} else if (s->kind == ATTR_FLOATS && (a->kind == ATTR_INT || a->kind == ATTR_FLOAT)) {
			a->floats = xcalloc(1, sizeof *a->floats);
			a->floats[0] = a->kind == ATTR_INT ? (double)a->i : a->f;
			a->n = 1;
			a->kind = ATTR_FLOATS;
		} else if (s->kind == ATTR_FLOATS && a->kind == ATTR_INTS) {
			a->floats = xcalloc(a->n, sizeof *a->floats);
			for (int k = 0; k < a->n; k++)
				a->floats[k] = (double)a->ints[k];
			free(a->ints);
			a->ints = NULL;
			a->kind = ATTR_FLOATS;
		}
		if (a->kind != s->kind) {
			diag_error(d, a->loc, "%s: attribute '%s' must be %s %s, got %s %s", opname, a->name,
				   s->kind == ATTR_INT || s->kind == ATTR_INTS ? "an" : "a", attr_kind_name(s->kind),
				   a->kind == ATTR_INT || a->kind == ATTR_INTS ? "an" : "a", attr_kind_name(a->kind));
			ok = false;
			continue;
		}
		if (s->has_range) {
			const int64_t *v = a->kind == ATTR_INT ? &a->i : a->ints;
			int cnt = a->kind == ATTR_INT ? 1 : a->n;
			for (int k = 0; k < cnt; k++)
				if (v[k] < s->min || v[k] > s->max) {
					diag_error(d, a->loc, "%s: attribute '%s' = %lld is out of range [%lld, %lld]",
						   opname, a->name, (long long)v[k], (long long)s->min,
						   (long long)s->max);
					ok = false;
					break;
				}
		}
		if (s->has_frange) {
			const double *v = a->kind == ATTR_FLOAT ? &a->f : a->floats;
			int cnt = a->kind == ATTR_FLOAT ? 1 : a->n;
			for (int k = 0; k < cnt; k++)
				if (!(v[k] >= s->fmin && v[k] <= s->fmax)) {
					diag_error(d, a->loc, "%s: attribute '%s' = %g is out of range [%g, %g]",
						   opname, a->name, v[k], s->fmin, s->fmax);
					ok = false;
					break;
				}
		}
		if (s->choices && a->kind == ATTR_STRING && !in_choices(s->choices, a->s)) {
			diag_error(d, a->loc, "%s: attribute '%s' = \"%s\" is not one of %s", opname, a->name,
				   a->s, s->choices);
			ok = false;
		}
	}
	for (const AttrSpec *s = op_info[n->op].attrs; s->name; s++)
		if (s->required && !node_attr(n, s->name)) {
			diag_error(d, n->loc, "%s: missing required attribute '%s' (%s)", opname, s->name,
				   attr_kind_name(s->kind));
			ok = false;
		}
	return ok;
}

static bool check_arity(const Node *n, Diag *d)
{
	const OpInfo *oi = &op_info[n->op];
	bool ok = true;
	if (n->nin < oi->min_in || (oi->max_in >= 0 && n->nin > oi->max_in)) {
		if (oi->max_in < 0)
			diag_error(d, n->loc, "%s: wrong operand count: takes at least %d, got %d", oi->name,
				   oi->min_in, n->nin);
		else if (oi->min_in == oi->max_in)
			diag_error(d, n->loc, "%s: wrong operand count: takes %d, got %d", oi->name, oi->min_in,
				   n->nin);
		else
			diag_error(d, n->loc, "%s: wrong operand count: takes %d to %d, got %d", oi->name,
				   oi->min_in, oi->max_in, n->nin);
		ok = false;
	}
	if (n->nout < oi->min_out || (oi->max_out >= 0 && n->nout > oi->max_out)) {
		if (oi->max_out < 0)
			diag_error(d, n->loc, "%s: wrong result count: gives at least %d, got %d names", oi->name,
				   oi->min_out, n->nout);
		else if (oi->min_out == oi->max_out)
			diag_error(d, n->loc, "%s: wrong result count: gives %d, got %d names", oi->name,
				   oi->min_out, n->nout);
		else
			diag_error(d, n->loc, "%s: wrong result count: gives %d to %d, got %d names", oi->name,
				   oi->min_out, oi->max_out, n->nout);
		ok = false;
	}
	return ok;
}

/* Every value's size against the limits (gdcc_limits.h); untyped on failure. */
static bool check_size(Value *v, const TensorType *t, Diag *d)
{
	char *err = tensor_size_error(t->dtype, &t->shape);
	if (!err)
		return true;
	diag_error(d, v->loc, "'%s': %s", v->name, err);
	free(err);
	v->typed = false;
	return false;
}

bool graph_check_node(Graph *g, Node *n, Diag *d)
{
	for (int i = 0; i < n->nin; i++)
		if (!n->in[i]->typed)
			return false; /* already reported where it was defined */
	bool ok = check_arity(n, d);
	ok &= check_attrs(n, d);
	if (!ok)
		return false;
	for (int i = 0; i < n->nin; i++)
		if (!dtype_has_kernels(n->in[i]->type.dtype)) {
			diag_error(d, n->in_loc[i], "%s: operand %d ('%s') has dtype %s, which no op supports yet",
				   op_info[n->op].name, i + 1, n->in[i]->name, dtype_name(n->in[i]->type.dtype));
			return false;
		}
	/* A constant's declared size is checked before its data is looked at
	 * (an npy file's header, an inline list's length). */
	if (n->op == OP_CONSTANT && n->nout == 1 && n->out[0]->annotated &&
	    !check_size(n->out[0], &n->out[0]->annot, d))
		return false;
	InferCtx cx = {g, n, d};
	if (!op_info[n->op].infer(&cx))
		return false;
	for (int i = 0; i < n->nout; i++) {
		Value *v = n->out[i];
		if (!v->typed) {
			diag_error(d, n->loc, "internal error: %s left result %d untyped", op_info[n->op].name, i + 1);
			return false;
		}
		if (!check_size(v, &v->type, d))
			return false;
		if (v->annotated && (v->annot.dtype != v->type.dtype || !shape_eq(&v->annot.shape, &v->type.shape))) {
			char want[160], got[160];
			type_str(&v->annot, want, sizeof want);
			type_str(&v->type, got, sizeof got);
			bool dt = v->annot.dtype != v->type.dtype;
			diag_error(d, v->loc, "%s mismatch: '%s' is declared %s but %s gives %s",
				   dt ? "dtype" : "shape", v->name, want, op_info[n->op].name, got);
			v->typed = false;
			return false;
		}
	}
	return true;
}

bool graph_verify(Graph *g, Diag *d)
{
	int before = d->nerrors;
	for (int i = 0; i < g->ninputs; i++)
		if (g->inputs[i]->typed)
			check_size(g->inputs[i], &g->inputs[i]->type, d);
	for (int i = 0; i < g->nnodes; i++)
		graph_check_node(g, g->nodes[i], d);
	if (g->noutputs == 0)
		diag_error(d, g->loc, "graph '%s' has no outputs", g->name);
	/* Repeated outputs, in one pass: mark each value's first appearance. */
	int *first = xcalloc((size_t)g->nvalues + 1, sizeof *first);
	for (int i = 0; i < g->noutputs; i++) {
		int id = g->outputs[i]->id;
		if (id < 0 || id >= g->nvalues)
			continue;
		if (first[id])
			diag_error(d, g->output_loc[i], "'%s' is already an output", g->outputs[i]->name);
		else
			first[id] = i + 1;
	}
	free(first);
	/* All the model's tensors together (what the reference interpreter
	 * holds at once, and a bound on any target's buffers). */
	uint64_t total = 0;
	bool over = false;
	for (int i = 0; i < g->nvalues && !over; i++) {
		uint64_t b;
		if (g->values[i]->typed && type_bytes_checked(g->values[i]->type.dtype, &g->values[i]->type.shape, &b))
			over = !add_u64(total, b, &total);
	}
	if ((over || total > limits()->max_workspace_bytes) && d->nerrors == before)
		diag_error(d, g->loc,
			   "graph '%s': its tensors total %s%llu bytes, above the limit of %llu bytes (--max-workspace-bytes)",
			   g->name, over ? "more than " : "", (unsigned long long)total,
			   (unsigned long long)limits()->max_workspace_bytes);
	/* Dead nodes: no result is used or an output.  A warning, not an
	 * error: the model still compiles (pass_dce removes such nodes at -O1
	 * and above; at -O0 the backend copes with them).  Only the
	 * node nothing reads is named, not the chain feeding it.  (Results of
	 * a node that is live may go unused: `a, _b = split(x)` is fine.) */
	for (int i = 0; i < g->nnodes; i++) {
		Node *n = g->nodes[i];
		bool live = false;
		for (int k = 0; k < n->nout; k++)
			live |= n->out[k]->nuses > 0;
		if (!live && n->nout > 0)
			diag_report(d, DIAG_WARNING, n->out[0]->loc,
				    "'%s' is computed but never used and is not an output (removed at -O1 and above)",
				    n->out[0]->name);
	}
	for (int i = 0; i < g->ninputs; i++)
		if (g->inputs[i]->nuses == 0)
			diag_report(d, DIAG_WARNING, g->inputs[i]->loc, "input '%s' is never used",
				    g->inputs[i]->name);
	return d->nerrors == before;
}

void graph_prune(Graph *g)
{
	/* Nodes are in topological order, so one walk from the last node back
	 * sees every use of a node's results before the node itself: a dead
	 * chain of any length goes in one linear pass.  (The use lists first:
	 * a front end may have set operands directly.) */
	graph_build_uses(g);
	for (int i = g->nnodes - 1; i >= 0; i--) {
		Node *n = g->nodes[i];
		bool live = false;
		for (int j = 0; j < n->nout; j++)
			live |= n->out[j]->nuses > 0 || n->out[j]->is_output;
		if (!live)
			graph_remove_node(g, n); /* (its operands lose their uses) */
	}
	graph_compact(g); /* the nodes, and their results with them */
}
