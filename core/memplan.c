/* Memory planning (see memplan.h).
 *
 * 1. Spans and lifetimes: each node's kernel span (its Node.group's first
 *    and last node, or the node alone); a value is defined at the start of
 *    its defining node's span and last used at the end of the span of its
 *    last user (its own span when nothing reads it).
 * 2. Storage, in one walk over the nodes in order: a view joins its
 *    operand's storage, an elementwise result joins the storage of an
 *    operand that dies in its kernel; each storage keeps the last use of
 *    all its values.
 * 3. Placement of each storage's [start, end] and size: greedy by size
 *    over the pairs of overlapping lifetimes, or first fit in time when
 *    there are too many pairs. */
#include <stdlib.h>
#include <string.h>

#include "memplan.h"
#include "target.h"
#include "util.h"

enum { ALIGN = 64 };

/* Above this many pairs of overlapping lifetimes, place first fit in time
 * (the pair lists take 4 bytes a pair). */
static const int64_t max_pairs = (int64_t)1 << 22;

static int64_t value_bytes(const Value *v)
{
	return shape_numel(&v->type.shape) * (int64_t)dtype_size(v->type.dtype);
}

static int64_t aligned(int64_t bytes)
{
	return (bytes + ALIGN - 1) / ALIGN * ALIGN;
}

/* A workspace value: computed by a node, neither a constant nor an output. */
static bool in_workspace(const Value *v)
{
	return v->def && v->def->op != OP_CONSTANT && !v->is_output && !v->is_input;
}

/* The node's result 0 is its operand 0's bytes, and the node need not run. */
static bool is_view(const Node *n)
{
	switch (n->op) {
	case OP_RESHAPE:
	case OP_FLATTEN:
	case OP_SQUEEZE:
	case OP_UNSQUEEZE:
	case OP_IDENTITY:
		return n->nin >= 1 && n->nout == 1;
	case OP_DROPOUT: /* (a mask that something reads needs the node) */
		return n->nin >= 1 && (n->nout == 1 || (!n->out[1]->nuses && !n->out[1]->is_output));
	default:
		return false;
	}
}

/* Lowered by the backend's elementwise kernel: one pass, each result
 * element written after the operands' elements at its index are read. */
static bool is_elementwise(OpKind op)
{
	switch (op) {
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_POW: case OP_MAX: case OP_MIN: case OP_SUM:
	case OP_NEG: case OP_ABS: case OP_SQRT: case OP_RECIPROCAL: case OP_RELU: case OP_CLIP: case OP_HARDSIGMOID:
	case OP_EXP: case OP_LOG: case OP_SIGMOID: case OP_TANH: case OP_ERF: case OP_GELU: case OP_LEAKY_RELU:
	case OP_HARDSWISH:
		return true;
	default:
		return false;
	}
}

/* Per node: its kernel's span [lo, hi]; per kernel (group): whether all
 * its nodes are elementwise (or views), so that it may run as one pass. */
typedef struct {
	int *lo, *hi;
	bool *flat;
	int ngroups;
} Spans;

static void spans_build(const Graph *g, Spans *s)
{
	int n = g->nnodes, ng = 0;
	for (int i = 0; i < n; i++)
		if (g->nodes[i]->group >= ng)
			ng = g->nodes[i]->group + 1;
	s->ngroups = ng;
	s->lo = xmalloc(((size_t)n + 1) * sizeof *s->lo);
	s->hi = xmalloc(((size_t)n + 1) * sizeof *s->hi);
	s->flat = xmalloc(((size_t)ng + 1) * sizeof *s->flat);
	int *first = xmalloc(((size_t)ng + 1) * sizeof *first), *last = xmalloc(((size_t)ng + 1) * sizeof *last);
	for (int k = 0; k < ng; k++) {
		first[k] = last[k] = -1;
		s->flat[k] = true;
	}
	for (int i = 0; i < n; i++) {
		const Node *nd = g->nodes[i];
		int k = nd->group;
		if (k < 0)
			continue;
		if (first[k] < 0)
			first[k] = i;
		last[k] = i;
		s->flat[k] &= is_elementwise(nd->op) || is_view(nd);
	}
	for (int i = 0; i < n; i++) {
		int k = g->nodes[i]->group;
		s->lo[i] = k >= 0 ? first[k] : i;
		s->hi[i] = k >= 0 ? last[k] : i;
	}
	free(first);
	free(last);
}

static void spans_free(Spans *s)
{
	free(s->lo);
	free(s->hi);
	free(s->flat);
}

/* May the backend read B of this matmul through the transpose that
 * computes it (a matrix engine's mma.t: the legality row's lowering
 * strategy is tiles; fixed vectors: the GEMM kernel packs B^T into its
 * panels; codegen.c, matmul_transposed_b)?  Any target: perhaps. */
static bool reads_through_transpose(const Target *t, const Node *mm)
{
	if (!t)
		return true;
	const LegalEntry *e = target_legality(t, mm);
	return e && ((e->action == LEGAL_NATIVE && e->strategy == LEGAL_STRATEGY_tiles) || !t->scalable);
}

/* Each value's definition and last use (positions); graph inputs: -1.
 * The operand of a transpose whose only reader is a matmul, as its B,
 * counts as read by that matmul too where the target may read it as B^T
 * without computing the transpose. */
static void lifetimes(const Graph *g, const Target *t, const Spans *s, int *def, int *use, int *raw)
{
	int *reader = xmalloc(((size_t)g->nvalues + 1) * sizeof *reader); /* the last, -2: more than one */
	for (int v = 0; v < g->nvalues; v++) {
		def[v] = use[v] = raw[v] = -1;
		reader[v] = -1;
	}
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		for (int k = 0; k < n->nout; k++) {
			def[n->out[k]->id] = s->lo[i];
			use[n->out[k]->id] = s->hi[i];
		}
	}
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		for (int k = 0; k < n->nin; k++) {
			int v = n->in[k]->id;
			if (use[v] < s->hi[i])
				use[v] = s->hi[i];
			if (raw[v] < i)
				raw[v] = i;
			reader[v] = reader[v] == -1 ? i : -2;
		}
	}
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		if (n->op != OP_TRANSPOSE || n->nin < 1 || n->out[0]->is_output || reader[n->out[0]->id] < 0)
			continue;
		int j = reader[n->out[0]->id];
		const Node *mm = g->nodes[j];
		if (mm->op == OP_MATMUL && mm->nin == 2 && mm->in[1] == n->out[0] && use[n->in[0]->id] < s->hi[j] &&
		    reads_through_transpose(t, mm)) {
			use[n->in[0]->id] = s->hi[j];
			if (raw[n->in[0]->id] < j)
				raw[n->in[0]->id] = j;
		}
	}
	free(reader);
}

/* ---- placement ------------------------------------------------------------------ */
typedef struct {
	int start, end;  /* positions, inclusive */
	int64_t size;    /* bytes, aligned, > 0 */
	int64_t offset;
} Slot;

typedef struct {
	int64_t a, b;    /* sort keys */
	int i;
} Key;

static int key_cmp(const void *x, const void *y)
{
	const Key *p = x, *q = y;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return (p->i > q->i) - (p->i < q->i);
}

/* The slots' indices sorted by (a, b, index). */
static int *sorted(int n, const Slot *s, bool by_size)
{
	Key *k = xmalloc(((size_t)n + 1) * sizeof *k);
	for (int i = 0; i < n; i++)
		k[i] = by_size ? (Key){-s[i].size, s[i].start, i} : (Key){s[i].start, s[i].end, i};
	qsort(k, (size_t)n, sizeof *k, key_cmp);
	int *o = xmalloc(((size_t)n + 1) * sizeof *o);
	for (int i = 0; i < n; i++)
		o[i] = k[i].i;
	free(k);
	return o;
}

/* Sweep by start: for each slot a, the slots that started before it and
 * are still live overlap it; each pair is counted once, for the one of the
 * two placed later (cnt), or stored in its list (nb, at its pos). */
static int64_t sweep(int n, const Slot *s, const int *bystart, const int *rank, int *cnt, int *nb, int64_t *pos)
{
	int *act = xmalloc(((size_t)n + 1) * sizeof *act);
	int nact = 0;
	int64_t pairs = 0;
	for (int q = 0; q < n; q++) {
		int a = bystart[q], k = 0;
		for (int j = 0; j < nact; j++)
			if (s[act[j]].end >= s[a].start)
				act[k++] = act[j];
		nact = k;
		pairs += nact;
		if (pairs > max_pairs)
			break;
		for (int j = 0; j < nact; j++) {
			int b = act[j];
			int later = rank[a] > rank[b] ? a : b, other = later == a ? b : a;
			if (cnt)
				cnt[later]++;
			else
				nb[pos[later]++] = other;
		}
		act[nact++] = a;
	}
	free(act);
	return pairs;
}

typedef struct {
	int64_t off, size;
} Range;

static int range_cmp(const void *x, const void *y)
{
	const Range *p = x, *q = y;
	return (p->off > q->off) - (p->off < q->off);
}

/* Greedy by size; false (nothing placed) when the pairs are too many. */
static bool place_by_size(int n, Slot *s, int *nshared, int64_t *peak)
{
	int *bystart = sorted(n, s, false), *order = sorted(n, s, true);
	int *rank = xmalloc(((size_t)n + 1) * sizeof *rank), *cnt = xcalloc((size_t)n + 1, sizeof *cnt);
	for (int i = 0; i < n; i++)
		rank[order[i]] = i;
	int64_t pairs = sweep(n, s, bystart, rank, cnt, NULL, NULL);
	if (pairs > max_pairs) {
		free(bystart);
		free(order);
		free(rank);
		free(cnt);
		return false;
	}
	int64_t *at = xmalloc(((size_t)n + 1) * sizeof *at), *pos = xmalloc(((size_t)n + 1) * sizeof *pos);
	at[0] = 0;
	for (int i = 0; i < n; i++)
		at[i + 1] = at[i] + cnt[i];
	memcpy(pos, at, (size_t)n * sizeof *pos);
	int *nb = xmalloc(((size_t)pairs + 1) * sizeof *nb);
	sweep(n, s, bystart, rank, NULL, nb, pos);
	int maxdeg = 0;
	for (int i = 0; i < n; i++)
		if (cnt[i] > maxdeg)
			maxdeg = cnt[i];
	Range *r = xmalloc(((size_t)maxdeg + 1) * sizeof *r);
	for (int q = 0; q < n; q++) {
		int a = order[q], nr = 0;
		for (int64_t j = at[a]; j < at[a + 1]; j++)
			r[nr++] = (Range){s[nb[j]].offset, s[nb[j]].size};
		qsort(r, (size_t)nr, sizeof *r, range_cmp);
		/* the lowest gap that fits, below, between or above the
		 * neighbours' bytes */
		int64_t off = 0;
		for (int j = 0; j < nr; j++) {
			if (off + s[a].size <= r[j].off)
				break;
			if (r[j].off + r[j].size > off)
				off = r[j].off + r[j].size;
		}
		s[a].offset = off;
		/* (every slot so far starts at 0 or at the end of another, so
		 * the bytes below the peak were all some slot's) */
		*nshared += off < *peak;
		if (off + s[a].size > *peak)
			*peak = off + s[a].size;
	}
	free(r);
	free(nb);
	free(at);
	free(pos);
	free(bystart);
	free(order);
	free(rank);
	free(cnt);
	return true;
}

/* First fit in time: slots in order of start, each from the lowest free
 * block that holds it (or the top); a slot's block is free again after its
 * end (a min-heap by end). */
static void place_by_time(int n, Slot *s, int *nshared, int64_t *peak)
{
	int *bystart = sorted(n, s, false);
	int *heap = xmalloc(((size_t)n + 1) * sizeof *heap), nheap = 0;
	Range *fr = xmalloc(((size_t)n + 1) * sizeof *fr); /* free blocks below top, by offset, coalesced */
	int nfr = 0;
	int64_t top = 0;
	for (int q = 0; q < n; q++) {
		int a = bystart[q];
		while (nheap > 0 && s[heap[0]].end < s[a].start) {
			int d = heap[0];
			heap[0] = heap[--nheap];
			for (int i = 0;;) { /* sift down */
				int l = 2 * i + 1, m = i;
				if (l < nheap && s[heap[l]].end < s[heap[m]].end)
					m = l;
				if (l + 1 < nheap && s[heap[l + 1]].end < s[heap[m]].end)
					m = l + 1;
				if (m == i)
					break;
				int t = heap[i];
				heap[i] = heap[m];
				heap[m] = t;
				i = m;
			}
			/* free [off, off + size): merge with the blocks beside it */
			int64_t off = s[d].offset, end = off + s[d].size;
			int j = 0;
			while (j < nfr && fr[j].off < off)
				j++;
			bool left = j > 0 && fr[j - 1].off + fr[j - 1].size == off, right = j < nfr && fr[j].off == end;
			if (left && right) {
				fr[j - 1].size += s[d].size + fr[j].size;
				memmove(fr + j, fr + j + 1, (size_t)(nfr - j - 1) * sizeof *fr);
				nfr--;
			} else if (left) {
				fr[j - 1].size += s[d].size;
			} else if (right) {
				fr[j].off = off;
				fr[j].size += s[d].size;
			} else {
				memmove(fr + j + 1, fr + j, (size_t)(nfr - j) * sizeof *fr);
				fr[j] = (Range){off, s[d].size};
				nfr++;
			}
			/* a block that reaches the top lowers it */
			if (nfr > 0 && fr[nfr - 1].off + fr[nfr - 1].size == top)
				top = fr[--nfr].off;
		}
		int j = 0;
		while (j < nfr && fr[j].size < s[a].size)
			j++;
		if (j < nfr) {
			s[a].offset = fr[j].off;
			fr[j].off += s[a].size;
			fr[j].size -= s[a].size;
			if (fr[j].size == 0) {
				memmove(fr + j, fr + j + 1, (size_t)(nfr - j - 1) * sizeof *fr);
				nfr--;
			}
		} else {
			s[a].offset = top;
			top += s[a].size;
		}
		*nshared += s[a].offset < *peak;
		if (top > *peak)
			*peak = top;
		int i = nheap++; /* sift up */
		heap[i] = a;
		while (i > 0 && s[heap[(i - 1) / 2]].end > s[heap[i]].end) {
			int p = (i - 1) / 2, t = heap[p];
			heap[p] = heap[i];
			heap[i] = t;
			i = p;
		}
	}
	free(bystart);
	free(heap);
	free(fr);
}

/* ---- the plan ------------------------------------------------------------------- */
static MemPlan *plan_new(const Graph *g, bool reuse)
{
	MemPlan *m = xcalloc(1, sizeof *m);
	size_t n = (size_t)g->nvalues + 1;
	m->nvalues = g->nvalues;
	m->reuse = reuse;
	m->offset = xmalloc(n * sizeof *m->offset);
	m->alias = xmalloc(n * sizeof *m->alias);
	m->inplace = xmalloc(n * sizeof *m->inplace);
	m->first = xmalloc(n * sizeof *m->first);
	m->last = xmalloc(n * sizeof *m->last);
	for (int v = 0; v < g->nvalues; v++) {
		m->offset[v] = -1;
		m->alias[v] = v;
		m->inplace[v] = -1;
		m->first[v] = m->last[v] = -1;
	}
	return m;
}

/* One slot per workspace value, in the order of the nodes' results. */
static void plan_slots(const Graph *g, MemPlan *m)
{
	int end = g->nnodes > 0 ? g->nnodes - 1 : 0;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		for (int k = 0; k < n->nout; k++) {
			const Value *v = n->out[k];
			if (!in_workspace(v))
				continue;
			m->offset[v->id] = m->bytes;
			m->first[v->id] = 0;
			m->last[v->id] = end;
			m->bytes += aligned(value_bytes(v));
		}
	}
}

/* May n's result y take the bytes of operand k, whose storage is r?
 * gend[r]: the storage's last use as kernels go (a group's reads count at
 * its end); rend[r]: the last node that reads it.  Both bound it: no
 * kernel after n's reads those bytes, and no node after n either — the
 * backend still lowers a group node by node, so a later node of n's own
 * group that reads x (x * sigmoid(x)) must find x there (regression:
 * tests/backend/inplace_group.ir). */
static bool can_take(const Graph *g, const Spans *sp, const int *grp, const int *gend, const int *rend, int i, int k)
{
	const Node *n = g->nodes[i];
	const Value *x = n->in[k], *y = n->out[0];
	int r = grp[x->id];
	if (!in_workspace(g->values[r]) || gend[r] > sp->hi[i] || rend[r] > i)
		return false; /* not workspace, or read after this kernel or this node */
	if (!shape_eq(&x->type.shape, &y->type.shape) || dtype_size(x->type.dtype) != dtype_size(y->type.dtype))
		return false;
	/* in a kernel of several nodes with a contraction or a reduction, only
	 * bytes of its own values */
	if (n->group >= 0 && !sp->flat[n->group] && (!x->def || x->def->group != n->group))
		return false;
	/* another operand with the same bytes walks them in the same order */
	for (int j = 0; j < n->nin; j++)
		if (j != k && grp[n->in[j]->id] == r && shape_numel(&n->in[j]->type.shape) != shape_numel(&y->type.shape))
			return false;
	return true;
}

MemPlan *memplan_build(const Graph *g, bool reuse)
{
	return memplan_build_for(g, reuse, NULL);
}

MemPlan *memplan_build_for(const Graph *g, bool reuse, const Target *t)
{
	MemPlan *m = plan_new(g, reuse);
	m->t = t;
	plan_slots(g, m);
	m->naive_bytes = m->bytes;
	if (!reuse)
		return m;
	for (int v = 0; v < g->nvalues; v++)
		m->offset[v] = m->first[v] = m->last[v] = -1;
	m->bytes = 0;
	int nv = g->nvalues;
	Spans sp;
	spans_build(g, &sp);
	int *def = xmalloc(((size_t)nv + 1) * sizeof *def), *use = xmalloc(((size_t)nv + 1) * sizeof *use);
	int *raw = xmalloc(((size_t)nv + 1) * sizeof *raw);
	lifetimes(g, m->t, &sp, def, use, raw);
	/* storage: grp[v] the value holding v's bytes; gend[r] its last use,
	 * rend[r] the last node reading it */
	int *grp = xmalloc(((size_t)nv + 1) * sizeof *grp), *gend = xmalloc(((size_t)nv + 1) * sizeof *gend);
	int *rend = xmalloc(((size_t)nv + 1) * sizeof *rend);
	for (int v = 0; v < nv; v++) {
		grp[v] = v;
		gend[v] = use[v];
		rend[v] = raw[v];
	}
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		if (n->op == OP_CONSTANT || n->nout < 1)
			continue;
		const Value *y = n->out[0];
		if (is_view(n) && !y->is_output && value_bytes(y) == value_bytes(n->in[0]) &&
		    dtype_size(y->type.dtype) == dtype_size(n->in[0]->type.dtype)) {
			int r = grp[n->in[0]->id];
			m->alias[y->id] = m->alias[n->in[0]->id];
			grp[y->id] = r;
			if (gend[r] < use[y->id])
				gend[r] = use[y->id];
			if (rend[r] < raw[y->id])
				rend[r] = raw[y->id];
			m->naliased++;
			continue;
		}
		if (!is_elementwise(n->op) || !in_workspace(y))
			continue;
		for (int k = 0; k < n->nin; k++)
			if (can_take(g, &sp, grp, gend, rend, i, k)) {
				int r = grp[n->in[k]->id];
				grp[y->id] = r;
				m->inplace[y->id] = n->in[k]->id;
				if (gend[r] < use[y->id])
					gend[r] = use[y->id];
				if (rend[r] < raw[y->id])
					rend[r] = raw[y->id];
				m->ninplace++;
				break;
			}
	}
	/* one slot per storage (workspace, not empty) */
	int *slot_of = xmalloc(((size_t)nv + 1) * sizeof *slot_of), ns = 0;
	Slot *s = xmalloc(((size_t)nv + 1) * sizeof *s);
	for (int v = 0; v < nv; v++) {
		slot_of[v] = -1;
		const Value *val = g->values[v];
		if (grp[v] != v || !in_workspace(val) || value_bytes(val) == 0)
			continue;
		slot_of[v] = ns;
		s[ns++] = (Slot){def[v], gend[v], aligned(value_bytes(val)), 0};
	}
	if (!place_by_size(ns, s, &m->nshared, &m->bytes))
		place_by_time(ns, s, &m->nshared, &m->bytes);
	for (int v = 0; v < nv; v++) {
		int r = grp[v];
		if (!in_workspace(g->values[v]) || !in_workspace(g->values[r]))
			continue;
		m->offset[v] = slot_of[r] >= 0 ? s[slot_of[r]].offset : 0; /* (empty: no bytes) */
		m->first[v] = def[r];
		m->last[v] = gend[r];
	}
	free(slot_of);
	free(s);
	free(grp);
	free(gend);
	free(rend);
	free(def);
	free(use);
	free(raw);
	spans_free(&sp);
	return m;
}

void memplan_free(MemPlan *m)
{
	if (!m)
		return;
	free(m->offset);
	free(m->alias);
	free(m->inplace);
	free(m->first);
	free(m->last);
	free(m);
}

void memplan_print(FILE *out, const Graph *g, const MemPlan *m)
{
	fprintf(out, "# memory plan of %s%s: %lld bytes (one slot per value: %lld); %d shared, %d in place, %d views\n",
		g->name, m->reuse ? "" : " (no reuse)", (long long)m->bytes, (long long)m->naive_bytes, m->nshared, m->ninplace,
		m->naliased);
	Spans sp;
	spans_build(g, &sp);
	int *def = xmalloc(((size_t)g->nvalues + 1) * sizeof *def), *use = xmalloc(((size_t)g->nvalues + 1) * sizeof *use);
	int *raw = xmalloc(((size_t)g->nvalues + 1) * sizeof *raw);
	lifetimes(g, m->t, &sp, def, use, raw);
	free(raw);
	int w = 1;
	for (int v = 0; v < g->nvalues && v < m->nvalues; v++) {
		int len = (int)strlen(g->values[v]->name);
		if ((m->offset[v] >= 0 || m->alias[v] != v) && len > w)
			w = len;
	}
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		for (int k = 0; k < n->nout; k++) {
			int v = n->out[k]->id;
			if (v >= m->nvalues || (m->offset[v] < 0 && m->alias[v] == v))
				continue;
			fprintf(out, "%-*s %10lld bytes", w, g->values[v]->name, (long long)value_bytes(g->values[v]));
			if (m->offset[v] >= 0)
				fprintf(out, " at %10lld", (long long)m->offset[v]);
			else
				fprintf(out, " %13s", "");
			fprintf(out, "  live [%d, %d]", def[v], use[v]);
			if (m->alias[v] != v)
				fprintf(out, "  view of %s%s", g->values[m->alias[v]]->name, m->offset[v] < 0 ? " (no workspace)" : "");
			else if (m->inplace[v] >= 0)
				fprintf(out, "  in place of %s", g->values[m->inplace[v]]->name);
			fputc('\n', out);
		}
	}
	fprintf(out, "# peak: %lld bytes\n", (long long)m->bytes);
	free(def);
	free(use);
	spans_free(&sp);
}
