/* Placement of a model's nodes on a target and its host (place.h). */
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "legality.h"
#include "ops.h"
#include "place.h"
#include "util.h"
#include "verify.h"

const Target *place_host(const Target *t, const char *host, Diag *d)
{
	const ParamInfo *p = target_param(t, "host");
	const char *name = host ? host : p && p->str ? p->str : NULL;
	if (!name)
		return NULL;
	const Target *h = target_lookup(name);
	if (!h) {
		diag_error(d, loc_at(NULL, 0, 0), "%s: its host target '%s' is not built into gdcc (see --list-targets)", t->name,
			   name);
		return NULL;
	}
	if (h == t) {
		diag_error(d, loc_at(NULL, 0, 0), "%s cannot be its own host", t->name);
		return NULL;
	}
	return h;
}

/* A fusion group split between segments may leave several of its nodes in
 * one segment with results that leave it (a tree of elementwise ops whose
 * last node runs elsewhere: sigmoid and tanh here, their product on the
 * device).  A kernel has one result, its group's last node's, so the nodes
 * of such a group become kernels of their own in this segment. */
static void split_escaping_groups(Graph *s)
{
	int ng = 0;
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i]->group >= ng)
			ng = s->nodes[i]->group + 1;
	if (ng == 0)
		return;
	int *last = xmalloc((size_t)ng * sizeof *last);
	bool *split = xcalloc((size_t)ng, sizeof *split);
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i]->group >= 0)
			last[s->nodes[i]->group] = i;
	for (int i = 0; i < s->nnodes; i++) {
		const Node *n = s->nodes[i];
		if (n->group >= 0 && last[n->group] != i)
			for (int j = 0; j < n->nout; j++)
				split[n->group] |= n->out[j]->is_output;
	}
	int next = ng;
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i]->group >= 0 && split[s->nodes[i]->group])
			s->nodes[i]->group = next++;
	free(last);
	free(split);
}

/* Nodes first..last of g as a graph; `used_after[v]`: the value is read
 * outside the segment (or is a model output). */
static Graph *segment_graph(const Graph *g, int first, int last, int k, const int *seg_of, const bool *outside,
			    Diag *d)
{
	char *name = xasprintf("%s.seg%d", g->name, k);
	Graph *s = graph_new(name);
	free(name);
	s->file = g->file ? xstrdup(g->file) : NULL;
	s->dir = g->dir ? xstrdup(g->dir) : NULL;
	s->loc = g->loc;
	Value **map = xcalloc((size_t)g->nvalues, sizeof *map);
	bool ok = true;
	for (int i = first; i <= last && ok; i++) {
		const Node *n = g->nodes[i];
		if (seg_of[i] != k) /* a constant, or dead */
			continue;
		Value **in = xcalloc((size_t)(n->nin ? n->nin : 1), sizeof *in);
		const char **names = xcalloc((size_t)n->nout, sizeof *names);
		for (int j = 0; j < n->nin; j++) {
			const Value *v = n->in[j];
			if (!map[v->id]) {
				const Tensor *wt = v->def && v->def->op == OP_CONSTANT && v->def->init.kind == INIT_TENSOR
							   ? v->def->init.data : NULL;
				if (wt && tensor_bytes(wt) == (size_t)shape_numel(&v->type.shape) * dtype_size(v->type.dtype)) {
					/* the model's weights, shared, not copied (the model
					 * outlives its placement) */
					ConstInit init = {.kind = INIT_TENSOR, .data = (void *)wt, .borrowed = true};
					Node *cn = graph_add_const(s, v->name, v->type.dtype, &v->type.shape, init, v->loc);
					map[v->id] = cn->out[0];
				} else if (v->def && v->def->op == OP_CONSTANT) {
					Tensor *t = tensor_new(v->type.dtype, &v->type.shape);
					if (!materialize_constant(v->def, t, d)) {
						tensor_free(t);
						ok = false;
						break;
					}
					ConstInit init = {.kind = INIT_TENSOR, .data = t};
					Node *cn = graph_add_const(s, v->name, v->type.dtype, &v->type.shape, init, v->loc);
					map[v->id] = cn->out[0];
				} else {
					map[v->id] = graph_add_input(s, v->name, v->type.dtype, &v->type.shape, v->loc);
				}
			}
			in[j] = map[v->id];
		}
		if (!ok) {
			free(in);
			free(names);
			break;
		}
		for (int j = 0; j < n->nout; j++)
			names[j] = n->out[j]->name;
		Node *c = graph_add_node(s, n->op, in, n->nin, names, n->nout, n->loc);
		/* (its fusion group: a segment runs the target stages only, and
		 * its kernels are the groups pass_fuse made, or what of one lies
		 * in the segment) */
		c->group = n->group;
		for (int j = 0; j < n->nattrs; j++)
			node_copy_attr(c, &n->attrs[j], n->attrs[j].loc);
		for (int j = 0; j < n->nout; j++)
			map[n->out[j]->id] = c->out[j];
		free(in);
		free(names);
	}
	for (int i = first; i <= last && ok; i++) {
		const Node *n = g->nodes[i];
		if (seg_of[i] != k)
			continue;
		for (int j = 0; j < n->nout; j++)
			if (outside[n->out[j]->id])
				graph_add_output(s, map[n->out[j]->id], n->out[j]->loc);
	}
	free(map);
	if (ok)
		split_escaping_groups(s);
	if (!ok || !graph_verify(s, d)) {
		graph_free(s);
		return NULL;
	}
	return s;
}

Placement *place_graph(const Graph *g, const Target *t, const Target *host, Diag *d)
{
	Placement *p = xcalloc(1, sizeof *p);
	p->g = g;
	p->device = t;
	p->host = host;
	p->node_target = xcalloc((size_t)g->nnodes, sizeof *p->node_target);
	p->node_reason = xcalloc((size_t)g->nnodes, sizeof *p->node_reason);
	bool ok = true;
	/* Dead nodes (a model at -O0 may have them: the verifier only warns)
	 * are placed nowhere: nothing reads them, so they are not computed.
	 * One walk back from the last node: a node is live when one of its
	 * results is an output or read by a live node. */
	bool *live = xcalloc((size_t)g->nvalues + 1, sizeof *live);
	bool *node_live = xcalloc((size_t)g->nnodes + 1, sizeof *node_live);
	for (int i = 0; i < g->noutputs; i++)
		live[g->outputs[i]->id] = true;
	for (int i = g->nnodes - 1; i >= 0; i--) {
		const Node *n = g->nodes[i];
		for (int j = 0; j < n->nout && !node_live[i]; j++)
			node_live[i] = live[n->out[j]->id];
		for (int j = 0; node_live[i] && j < n->nin; j++)
			live[n->in[j]->id] = true;
	}
	free(live);
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		if (n->op == OP_CONSTANT || !node_live[i])
			continue;
		const LegalEntry *e = target_legality(t, n);
		if (!e || e->action == LEGAL_UNSUPPORTED) {
			ok = false; /* (legality_check reports it) */
			continue;
		}
		if (e->action == LEGAL_FALLBACK) {
			char ty[160];
			type_str(n->nin ? &n->in[0]->type : &n->out[0]->type, ty, sizeof ty);
			if (!host) {
				diag_error(d, n->loc, "%s %s is unsupported on %s (%s) and %s names no host target to run it",
					   op_info[n->op].name, ty, t->name, e->reason, t->name);
				ok = false;
				continue;
			}
			const LegalEntry *he = target_legality(host, n);
			if (!he || he->action == LEGAL_UNSUPPORTED || he->action == LEGAL_FALLBACK) {
				diag_error(d, n->loc, "%s %s is unsupported on %s (%s) and on its host %s (%s)", op_info[n->op].name, ty,
					   t->name, e->reason, host->name, he && he->reason ? he->reason : "no legality row");
				ok = false;
				continue;
			}
			p->node_target[i] = host;
			p->node_reason[i] = e->reason;
		} else {
			p->node_target[i] = t;
			p->node_reason[i] = e->action == LEGAL_NATIVE ? "native" : e->rule ? e->rule : "expanded";
		}
	}
	free(node_live);
	if (!legality_check(g, t, d, NULL) || !ok) {
		placement_free(p);
		return NULL;
	}
	/* segments: runs of consecutive nodes with one placement */
	int *seg_of = xmalloc((size_t)g->nnodes * sizeof *seg_of);
	int cap = 4;
	p->segs = xcalloc((size_t)cap, sizeof *p->segs);
	for (int i = 0; i < g->nnodes; i++) {
		seg_of[i] = -1;
		if (!p->node_target[i])
			continue;
		Segment *last = p->nsegs ? &p->segs[p->nsegs - 1] : NULL;
		if (!last || last->t != p->node_target[i]) {
			if (p->nsegs == cap)
				p->segs = xrealloc(p->segs, (size_t)(cap *= 2) * sizeof *p->segs);
			p->segs[p->nsegs++] = (Segment){p->node_target[i], p->node_target[i] == host, NULL, i, i};
			last = &p->segs[p->nsegs - 1];
		}
		last->last = i;
		seg_of[i] = p->nsegs - 1;
	}
	/* what each segment reads from elsewhere, and the transfers */
	bool *outside = xcalloc((size_t)g->nvalues, sizeof *outside);
	int xcap = 8;
	p->xfers = xcalloc((size_t)xcap, sizeof *p->xfers);
	for (int k = 0; k < p->nsegs && ok; k++) {
		memset(outside, 0, (size_t)g->nvalues * sizeof *outside);
		for (int i = 0; i < g->nnodes; i++) {
			const Node *n = g->nodes[i];
			if (!p->node_target[i] || seg_of[i] == k)
				continue;
			for (int j = 0; j < n->nin; j++)
				outside[n->in[j]->id] = true;
		}
		for (int i = 0; i < g->noutputs; i++)
			outside[g->outputs[i]->id] = true;
		Segment *s = &p->segs[k];
		s->g = segment_graph(g, s->first, s->last, k, seg_of, outside, d);
		if (!s->g) {
			ok = false;
			break;
		}
		/* its inputs: from the model (host memory) or another segment */
		for (int i = 0; i < s->g->ninputs; i++) {
			const Value *v = graph_find_value(g, s->g->inputs[i]->name);
			int from = v->def ? seg_of[v->def->id] : -1;
			bool from_host = from < 0 || p->segs[from].host;
			if (from_host == s->host)
				continue;
			if (p->nxfers == xcap)
				p->xfers = xrealloc(p->xfers, (size_t)(xcap *= 2) * sizeof *p->xfers);
			p->xfers[p->nxfers++] = (Transfer){v->name, from, k,
							   shape_numel(&v->type.shape) * (int64_t)dtype_size(v->type.dtype)};
		}
	}
	/* model outputs computed on the device go back to host memory */
	for (int i = 0; i < g->noutputs && ok; i++) {
		const Value *v = g->outputs[i];
		int from = v->def && v->def->op != OP_CONSTANT ? seg_of[v->def->id] : -1;
		bool done = from < 0 || p->segs[from].host;
		for (int x = 0; x < p->nxfers && !done; x++)
			done = strcmp(p->xfers[x].value, v->name) == 0 && p->segs[p->xfers[x].to].host;
		if (done)
			continue;
		if (p->nxfers == xcap)
			p->xfers = xrealloc(p->xfers, (size_t)(xcap *= 2) * sizeof *p->xfers);
		p->xfers[p->nxfers++] = (Transfer){v->name, from, -1,
						   shape_numel(&v->type.shape) * (int64_t)dtype_size(v->type.dtype)};
	}
	free(outside);
	free(seg_of);
	if (!ok) {
		placement_free(p);
		return NULL;
	}
	return p;
}

void placement_free(Placement *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nsegs; i++)
		graph_free(p->segs[i].g);
	free(p->segs);
	free(p->xfers);
	free(p->node_target);
	free(p->node_reason);
	free(p);
}

static const char *xfer_end(const Placement *p, int seg)
{
	return seg < 0 ? (p->host ? p->host->name : "host") : p->segs[seg].t->name;
}

void placement_print(FILE *o, const Placement *p)
{
	const Graph *g = p->g;
	fprintf(o, "# placement of %s on %s (host: %s): %d segment(s), %d transfer(s)\n", g->name, p->device->name,
		p->host ? p->host->name : "none", p->nsegs, p->nxfers);
	for (int k = 0; k < p->nsegs; k++) {
		const Segment *s = &p->segs[k];
		for (int x = 0; x < p->nxfers; x++)
			if (p->xfers[x].to == k)
				fprintf(o, "transfer %s: %s -> %s, %lld bytes\n", p->xfers[x].value, xfer_end(p, p->xfers[x].from),
					s->t->name, (long long)p->xfers[x].bytes);
		fprintf(o, "segment %d on %s%s:\n", k, s->t->name, s->host ? " (host)" : "");
		for (int i = s->first; i <= s->last; i++) {
			const Node *n = g->nodes[i];
			if (!p->node_target[i]) /* a constant, or dead */
				continue;
			fprintf(o, "  %-20s %-14s %s\n", n->out[0]->name, op_info[n->op].name, p->node_reason[i]);
		}
	}
	for (int x = 0; x < p->nxfers; x++)
		if (p->xfers[x].to < 0)
			fprintf(o, "transfer %s: %s -> %s, %lld bytes (model output)\n", p->xfers[x].value,
				xfer_end(p, p->xfers[x].from), xfer_end(p, -1), (long long)p->xfers[x].bytes);
}

void placement_json(FILE *o, const Placement *p, const char *ind)
{
	fprintf(o, "{\n%s  \"device\": \"%s\", \"host\": %s%s%s,\n%s  \"nodes\": [", ind, p->device->name,
		p->host ? "\"" : "", p->host ? p->host->name : "null", p->host ? "\"" : "", ind);
	int k = 0;
	for (int i = 0; i < p->g->nnodes; i++) {
		if (!p->node_target[i])
			continue;
		const Node *n = p->g->nodes[i];
		int seg = 0;
		for (int s = 0; s < p->nsegs; s++)
			if (i >= p->segs[s].first && i <= p->segs[s].last)
				seg = s;
		fprintf(o, "%s\n%s    {\"name\": ", k++ ? "," : "", ind);
		json_string(o, n->out[0]->name);
		fprintf(o, ", \"op\": \"%s\", \"runs_on\": \"%s\", \"segment\": %d, \"reason\": ", op_info[n->op].name,
			p->node_target[i]->name, seg);
		json_string(o, p->node_reason[i]);
		fputc('}', o);
	}
	fprintf(o, "\n%s  ],\n%s  \"segments\": [", ind, ind);
	for (int s = 0; s < p->nsegs; s++)
		fprintf(o, "%s\n%s    {\"index\": %d, \"runs_on\": \"%s\", \"host\": %s, \"inputs\": %d, \"outputs\": %d}",
			s ? "," : "", ind, s, p->segs[s].t->name, p->segs[s].host ? "true" : "false", p->segs[s].g->ninputs,
			p->segs[s].g->noutputs);
	fprintf(o, "\n%s  ],\n%s  \"transfers\": [", ind, ind);
	for (int x = 0; x < p->nxfers; x++) {
		fprintf(o, "%s\n%s    {\"value\": ", x ? "," : "", ind);
		json_string(o, p->xfers[x].value);
		fprintf(o, ", \"from\": \"%s\", \"to\": \"%s\", \"bytes\": %lld}", xfer_end(p, p->xfers[x].from),
			xfer_end(p, p->xfers[x].to), (long long)p->xfers[x].bytes);
	}
	fprintf(o, "\n%s  ]\n%s}", ind, ind);
}
