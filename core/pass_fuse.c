/* pass_fuse: fusion grouping, the partition of the graph into kernels.
 * Assumes: a verified graph (passes.h): g->nodes a topological order, every
 * value typed, use lists exact.
 * Does: sets n->group of every node: the kernel it belongs to, numbered
 * 0..k-1 in the order of each kernel's first node in g->nodes; constants
 * get -1 (they are data, not kernels).  graph_kernels() then returns k.
 * Preserves: everything else.  It rewrites nothing (no node, value, operand
 * or attribute changes, cx->changes untouched), so results are the same
 * bit for bit; until the Loop IR executes a group as one loop nest, the
 * backend lowers node by node and the grouping is only information.
 *
 * The groups:
 *   - elementwise ops: add sub mul div pow max min sum, neg abs exp log sqrt
 *     reciprocal relu leaky_relu sigmoid tanh erf gelu clip hardsigmoid
 *     hardswish identity, prelu elu selu celu softplus softsign
 *     thresholded_relu shrink sign floor ceil round sinh cosh asinh acosh
 *     atanh sin cos tan asin acos atan mean, dropout with one result, inference batchnorm with
 *     one result (a per-channel affine map: its parameters index the
 *     channel axis), and the views that only add or drop size-1 axes
 *     (reshape, flatten, squeeze, unsqueeze whose result has the operand's
 *     dimensions other than 1, in order: the same data in the same order).
 *   - anchors: matmul, gemm, conv (a contraction), and softmax, logsoftmax,
 *     layernorm, reduce_mean (a reduction).  A group holds at most one.
 *   - "the same shape" below is equality up to size-1 axes ([128, 768] and
 *     [1, 128, 768]): one iteration space, one layout.
 *   - an elementwise node n joins the group of an operand v when v is the
 *     result of that group's last node, n is v's only user (it may read v
 *     more than once) and v is not a graph output, the group is open (no
 *     reduction, no other kind of op in it), and n's result has v's shape:
 *     so an elementwise chain is one group, and a contraction takes an
 *     epilogue (bias add, scale/shift, activation, residual add ...) whose
 *     results keep its output shape; operands from outside the group may
 *     have any broadcast shape.  When several operands qualify, n joins all
 *     of them (a tree of elementwise ops) if at most one holds an anchor,
 *     else the first that works (contractions preferred).
 *   - a reduction joins the group of its data operand (operand 0) under the
 *     same conditions when that group is purely elementwise (a prologue,
 *     e.g. a residual add before layernorm); a reduction closes its group:
 *     nothing joins it afterwards.
 *   - every other op is a group of its own, and closed: data movement, the
 *     pools, and the views that regroup dimensions (a reshape [128, 768] ->
 *     [1, 128, 12, 64]: another iteration space; memory planning may make
 *     such a view no kernel at all).
 *   - the schedule rule: every operand of a group's nodes that the group
 *     does not compute is a graph input, a constant, or the result of a node
 *     before the group's first node.  A join that would break it is not
 *     made (a residual add whose other operand is computed after its conv
 *     started joins the other operand's group, or none).
 * Consequences: only the group's last node has results used outside it
 * (every other node's result has one user, a later node of the group), so
 * no intermediate escapes; no path leaves a group and re-enters it (it
 * would have to re-enter through an operand computed after the group's
 * first node); and numbering the groups by their first node is a
 * topological order of the kernels: a kernel can run when its first node
 * would, every operand it reads from outside being ready by then.  A
 * group's output is its last node's results (the ones used outside it or
 * listed as graph outputs).
 * Time and memory linear in the graph: each node looks at its operands
 * once and at their users until the first one that is not itself. */
#include <stdlib.h>

#include "passes.h"
#include "rewrite.h"
#include "ops.h"

enum { ANCHOR_NONE, ANCHOR_CONTRACT, ANCHOR_REDUCE };

/* Equal up to size-1 axes: the dimensions other than 1 agree, in order. */
static bool same_modulo_units(const Shape *a, const Shape *b)
{
	int i = 0, j = 0;
	for (;;) {
		while (i < a->rank && a->dim[i] == 1)
			i++;
		while (j < b->rank && b->dim[j] == 1)
			j++;
		if (i == a->rank || j == b->rank)
			return i == a->rank && j == b->rank;
		if (a->dim[i++] != b->dim[j++])
			return false;
	}
}

static bool is_elementwise(const Node *n)
{
	switch (n->op) {
	case OP_RESHAPE: case OP_FLATTEN: case OP_SQUEEZE: case OP_UNSQUEEZE:
		return n->nout == 1 && same_modulo_units(&n->in[0]->type.shape, &n->out[0]->type.shape);
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_POW:
	case OP_MAX: case OP_MIN: case OP_SUM:
	case OP_NEG: case OP_ABS: case OP_EXP: case OP_LOG: case OP_SQRT: case OP_RECIPROCAL:
	case OP_RELU: case OP_LEAKY_RELU: case OP_SIGMOID: case OP_TANH: case OP_ERF: case OP_GELU:
	case OP_CLIP: case OP_HARDSIGMOID: case OP_HARDSWISH: case OP_IDENTITY:
	case OP_DROPOUT:
	case OP_PRELU: case OP_ELU: case OP_SELU: case OP_CELU: case OP_SOFTPLUS: case OP_SOFTSIGN: case OP_THRESHOLDED_RELU:
	case OP_SHRINK: case OP_SIGN: case OP_FLOOR: case OP_CEIL: case OP_ROUND: case OP_SINH: case OP_COSH: case OP_ASINH:
	case OP_ACOSH: case OP_ATANH: case OP_MEAN:
	case OP_SIN: case OP_COS: case OP_TAN: case OP_ASIN: case OP_ACOS: case OP_ATAN:
		return n->nout == 1;
	case OP_BATCHNORM:
		return n->nout == 1 && attr_i(n, "training_mode") == 0;
	default:
		return false;
	}
}

static int anchor_kind(const Node *n)
{
	switch (n->op) {
	case OP_MATMUL: case OP_GEMM: case OP_CONV:
		return ANCHOR_CONTRACT;
	case OP_SOFTMAX: case OP_LOGSOFTMAX: case OP_LAYERNORM: case OP_REDUCE_MEAN:
		return ANCHOR_REDUCE;
	default:
		return ANCHOR_NONE;
	}
}

/* Per position in g->nodes.  A group is represented by its last node (the
 * root); the arrays hold the group's state at its root. */
typedef struct {
	int *parent;   /* the position of a later node of the same group, or itself at the root */
	int *first;    /* root: position of the group's first node */
	int *ext;      /* root: latest position defining an operand from outside (-1: none) */
	signed char *anchor; /* root: ANCHOR_* of the group */
	bool *closed;  /* root: nothing may join */
	int *stamp;    /* the node that last looked at this one as an operand's definition */
	int *mark;     /* the node that last took this one's group as a candidate */
	int *cand;     /* scratch: the candidate roots of the node being placed */
} Fuse;

/* Position of the node defining v; -1 for graph inputs and constants
 * (ready before any kernel runs).  During the pass n->group holds n's
 * position. */
static int def_pos(const Value *v)
{
	return v->def && v->def->op != OP_CONSTANT ? v->def->group : -1;
}

/* Every use of v is an operand of n (at least one), and v is no output. */
static bool only_used_by(const Value *v, const Node *n)
{
	if (v->is_output || v->nusers == 0 || v->nusers != v->nuses)
		return false;
	for (int i = 0; i < v->nusers; i++)
		if (v->users[i] != n)
			return false;
	return true;
}

/* Can the group whose root is at position r take n (at position p), v (an
 * operand of n) being the root's result? */
static bool joinable(const Fuse *f, int r, const Node *n, const Value *v)
{
	if (f->parent[r] != r || f->closed[r] || !only_used_by(v, n))
		return false;
	return same_modulo_units(&v->type.shape, &n->out[0]->type.shape);
}

/* The largest def_pos over n's operands not defined at position `skip`. */
static int max_def_except(const Node *n, int skip)
{
	int m = -1;
	for (int k = 0; k < n->nin; k++) {
		int d = def_pos(n->in[k]);
		if (d != skip && d > m)
			m = d;
	}
	return m;
}

static void merge_into(Fuse *f, int p, const int *roots, int nroots, int anchor, int ext, bool closed)
{
	int first = p;
	for (int i = 0; i < nroots; i++) {
		if (f->first[roots[i]] < first)
			first = f->first[roots[i]];
		if (f->anchor[roots[i]] != ANCHOR_NONE)
			anchor = f->anchor[roots[i]];
		f->parent[roots[i]] = p;
	}
	f->parent[p] = p;
	f->first[p] = first;
	f->ext[p] = ext;
	f->anchor[p] = (signed char)anchor;
	f->closed[p] = closed;
}

/* An elementwise node at p: join the groups of its operands that allow it. */
static void place_elementwise(Fuse *f, const Node *n, int p)
{
	int nc = 0;
	int top1 = -1, top2 = -1; /* the two largest distinct def_pos over the operands */
	for (int k = 0; k < n->nin; k++) {
		const Value *v = n->in[k];
		int d = def_pos(v);
		if (d > top1) {
			top2 = top1;
			top1 = d;
		} else if (d < top1 && d > top2) {
			top2 = d;
		}
		if (d < 0 || f->stamp[d] == p)
			continue;
		f->stamp[d] = p;
		if (joinable(f, d, n, v)) {
			f->cand[nc++] = d;
			f->mark[d] = p;
		}
	}
	/* All of them: at most one anchor, the schedule rule. */
	int anchors = 0, first = p, ext = -1;
	for (int i = 0; i < nc; i++) {
		int r = f->cand[i];
		anchors += f->anchor[r] != ANCHOR_NONE;
		if (f->first[r] < first)
			first = f->first[r];
		if (f->ext[r] > ext)
			ext = f->ext[r];
	}
	if (nc > 0 && anchors <= 1) {
		/* the operands the candidates do not define */
		for (int k = 0; k < n->nin; k++) {
			int d = def_pos(n->in[k]);
			if (d > ext && !(d >= 0 && f->mark[d] == p))
				ext = d;
		}
		if (ext < first) {
			merge_into(f, p, f->cand, nc, ANCHOR_NONE, ext, false);
			return;
		}
	}
	/* One of them: contractions first, then in operand order. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < nc; i++) {
			int r = f->cand[i];
			if ((f->anchor[r] != ANCHOR_NONE) != (pass == 0))
				continue;
			int e = r == top1 ? top2 : top1;
			if (f->ext[r] > e)
				e = f->ext[r];
			if (e < f->first[r]) {
				merge_into(f, p, &r, 1, ANCHOR_NONE, e, false);
				return;
			}
		}
	merge_into(f, p, NULL, 0, ANCHOR_NONE, top1, false);
}

/* A reduction at p: take the purely elementwise group of its data operand. */
static void place_reduction(Fuse *f, const Node *n, int p)
{
	const Value *v = n->in[0];
	int r = def_pos(v);
	if (r >= 0 && f->parent[r] == r && !f->closed[r] && f->anchor[r] == ANCHOR_NONE && only_used_by(v, n)) {
		int e = max_def_except(n, r);
		if (f->ext[r] > e)
			e = f->ext[r];
		if (e < f->first[r]) {
			merge_into(f, p, &r, 1, ANCHOR_REDUCE, e, true);
			return;
		}
	}
	merge_into(f, p, NULL, 0, ANCHOR_REDUCE, max_def_except(n, -2), true);
}

bool pass_fuse(Graph *g, PassContext *cx, Diag *d)
{
	(void)cx;
	(void)d;
	int nn = g->nnodes;
	size_t cnt = (size_t)(nn ? nn : 1);
	int maxin = 1;
	for (int i = 0; i < nn; i++) {
		g->nodes[i]->group = i; /* position, until the numbering below */
		if (g->nodes[i]->nin > maxin)
			maxin = g->nodes[i]->nin;
	}
	Fuse f = {
		.parent = xmalloc(cnt * sizeof(int)),
		.first = xmalloc(cnt * sizeof(int)),
		.ext = xmalloc(cnt * sizeof(int)),
		.anchor = xmalloc(cnt),
		.closed = xmalloc(cnt * sizeof(bool)),
		.stamp = xmalloc(cnt * sizeof(int)),
		.mark = xmalloc(cnt * sizeof(int)),
		.cand = xmalloc((size_t)maxin * sizeof(int)),
	};
	for (int p = 0; p < nn; p++) {
		const Node *n = g->nodes[p];
		f.stamp[p] = f.mark[p] = -1;
		f.parent[p] = -1;
		if (n->op == OP_CONSTANT || node_removed(n))
			continue;
		int a = anchor_kind(n);
		if (is_elementwise(n))
			place_elementwise(&f, n, p);
		else if (a == ANCHOR_REDUCE)
			place_reduction(&f, n, p);
		else /* a contraction stays open for its epilogue; anything else is closed */
			merge_into(&f, p, NULL, 0, a, max_def_except(n, -2), a != ANCHOR_CONTRACT);
	}
	/* Roots: parents lie later, so a walk from the end resolves each node's
	 * root after its parent's.  f.ext is free now: it holds the root, then
	 * f.first the kernel number of a root (-1: not numbered yet). */
	int *root = f.ext;
	for (int p = nn - 1; p >= 0; p--)
		if (f.parent[p] >= 0)
			root[p] = f.parent[p] == p ? p : root[f.parent[p]];
	for (int p = 0; p < nn; p++)
		f.first[p] = -1;
	int k = 0;
	for (int p = 0; p < nn; p++) {
		Node *n = g->nodes[p];
		if (f.parent[p] < 0) {
			n->group = -1;
			continue;
		}
		int r = root[p];
		if (f.first[r] < 0)
			f.first[r] = k++;
		n->group = f.first[r];
	}
	free(f.parent);
	free(f.first);
	free(f.ext);
	free(f.anchor);
	free(f.closed);
	free(f.stamp);
	free(f.mark);
	free(f.cand);
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
