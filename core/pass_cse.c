/* pass_cse: common-subexpression elimination by value numbering.
 * Assumes: a verified graph (passes.h): every value typed, every attribute
 * known to its op's spec and of the spec's kind (the verifier normalizes
 * kinds), g->nodes a topological order, use lists exact.
 * Does: one walk in topological order with a hash table (XXH3) of the
 * nodes kept so far.  A node's key is its op, its operand values (by
 * identity: an operand replaced earlier in the walk is already the value
 * that replaced it), its number of results and its attributes (taken in
 * the order of the op's spec, so the order they were written in does not
 * matter; kind and value, floats bit for bit; an absent attribute counts as
 * its spec's default, so `softmax(x)` and `softmax(x, axis=-1)` are one).
 * The two operands of add and mul are taken in a fixed order (their ids):
 * a + b and b + a are the same IEEE operation, bit for bit.  A
 * constant's key is its dtype, shape and data: the data itself (what
 * materialize_constant gives) up to CSE_CONST_BYTES, above that only the
 * initializers that are cheap to compare (zeros, fill, random and normal
 * with their parameters, one .npy file).  On a hash match the keys are
 * compared exactly; an equal later node's results are replaced by the
 * earlier node's, and the later node goes.
 * Not merged: ops with randomness or a side effect (cse_safe: dropout in
 * training mode, which the verifier rejects); a result that is a graph
 * output and whose replacement cannot become one (graph_can_replace: the
 * earlier value is a constant or an output already): then that result's
 * node stays, computing the output under its name.
 * Preserves: inputs and outputs (names, types, order; an output replaced
 * by an equal earlier value passes its name to it), every result bit for
 * bit (equal keys compute equal data).
 * Time: linear in the graph's size plus the constants' data considered.
 * Counts one change per node merged away; compacts the graph. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "interp.h"
#include "ops.h"
#include "passes.h"
#include "rewrite.h"
#include "util.h"

/* Constants up to this size are compared by their data. */
enum { CSE_CONST_BYTES = 1 << 20 };

static bool cse_safe(const Node *n)
{
	return n->op != OP_DROPOUT || attr_i(n, "training_mode") == 0;
}

static uint64_t mix(uint64_t h, const void *p, size_t len) { return XXH3_64bits_withSeed(p, len, h); }
static uint64_t mix_i(uint64_t h, int64_t v) { return mix(h, &v, sizeof v); }

static uint64_t mix_type(uint64_t h, const TensorType *t)
{
	h = mix_i(h, t->dtype);
	h = mix_i(h, t->shape.rank);
	return mix(h, t->shape.dim, (size_t)t->shape.rank * sizeof t->shape.dim[0]);
}

/* ---- op nodes ----------------------------------------------------------- */
static uint64_t attr_hash(uint64_t h, const Attr *a)
{
	h = mix_i(h, a->kind);
	switch (a->kind) {
	case ATTR_INT: return mix_i(h, a->i);
	case ATTR_FLOAT: return mix(h, &a->f, sizeof a->f);
	case ATTR_STRING: return a->s ? mix(h, a->s, strlen(a->s)) : h;
	case ATTR_DTYPE: return mix_i(h, a->dt);
	case ATTR_INTS: return a->n > 0 ? mix(mix_i(h, a->n), a->ints, (size_t)a->n * sizeof *a->ints) : h;
	case ATTR_FLOATS: return a->n > 0 ? mix(mix_i(h, a->n), a->floats, (size_t)a->n * sizeof *a->floats) : h;
	}
	return h;
}

static bool attr_equal(const Attr *a, const Attr *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case ATTR_INT: return a->i == b->i;
	case ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
	case ATTR_STRING: return (!a->s && !b->s) || (a->s && b->s && strcmp(a->s, b->s) == 0);
	case ATTR_DTYPE: return a->dt == b->dt;
	case ATTR_INTS: return a->n == b->n && (a->n <= 0 || memcmp(a->ints, b->ints, (size_t)a->n * sizeof *a->ints) == 0);
	case ATTR_FLOATS:
		return a->n == b->n && (a->n <= 0 || memcmp(a->floats, b->floats, (size_t)a->n * sizeof *a->floats) == 0);
	}
	return false;
}

/* n's operand k in the key's order: the operands of add and mul (binary,
 * commutative bit for bit) by id, the others as written. */
static const Value *key_operand(const Node *n, int k)
{
	if ((n->op == OP_ADD || n->op == OP_MUL) && n->nin == 2 && n->in[0]->id > n->in[1]->id)
		return n->in[1 - k];
	return n->in[k];
}

/* n's attribute for spec s: as written, else its default (in *tmp) when the
 * spec has one, else NULL. */
static const Attr *key_attr(const Node *n, const AttrSpec *s, Attr *tmp)
{
	const Attr *a = node_attr(n, s->name);
	if (a || !s->has_default)
		return a;
	memset(tmp, 0, sizeof *tmp);
	tmp->kind = s->kind;
	switch (s->kind) {
	case ATTR_INT: tmp->i = s->def_i; return tmp;
	case ATTR_FLOAT: tmp->f = s->def_f; return tmp;
	case ATTR_STRING: tmp->s = (char *)s->def_s; return tmp;
	case ATTR_DTYPE: tmp->dt = s->def_dt; return tmp;
	default: return NULL; /* (list defaults: the rule's; compared as absent) */
	}
}

/* The key of an op node; false when it takes no part (an attribute its
 * spec does not know: not a verified graph's). */
static bool node_hash(const Node *n, uint64_t *out)
{
	uint64_t h = mix_i(0, n->op);
	h = mix_i(h, n->nin);
	h = mix_i(h, n->nout);
	for (int k = 0; k < n->nin; k++)
		h = mix_i(h, key_operand(n, k)->id);
	int seen = 0, j = 0;
	for (const AttrSpec *s = op_info[n->op].attrs; s->name; s++, j++) {
		Attr tmp;
		seen += node_attr(n, s->name) != NULL;
		const Attr *a = key_attr(n, s, &tmp);
		if (a)
			h = attr_hash(mix_i(h, j), a);
	}
	*out = h;
	return seen == n->nattrs;
}

static bool node_equal(const Node *a, const Node *b)
{
	if (a->op != b->op || a->nin != b->nin || a->nout != b->nout)
		return false;
	for (int k = 0; k < a->nin; k++)
		if (key_operand(a, k) != key_operand(b, k))
			return false;
	for (const AttrSpec *s = op_info[a->op].attrs; s->name; s++) {
		Attr ta, tb;
		const Attr *x = key_attr(a, s, &ta), *y = key_attr(b, s, &tb);
		if (!x != !y || (x && !attr_equal(x, y)))
			return false;
	}
	return true;
}

/* ---- constants ------------------------------------------------------------ */
static uint64_t const_bytes(const Value *v)
{
	return (uint64_t)shape_numel(&v->type.shape) * dtype_size(v->type.dtype);
}

static bool by_data(const Node *c) { return const_bytes(c->out[0]) <= CSE_CONST_BYTES; }

/* The data of a constant compared by its data: in place (INIT_TENSOR, *own
 * NULL) or materialized into *own; NULL when it cannot be read. */
static const Tensor *const_data(const Node *c, Tensor **own)
{
	*own = NULL;
	if (c->init.kind == INIT_TENSOR)
		return c->init.data;
	return *own = constant_data(c);
}

/* A large constant's initializer, when cheap to compare. */
static bool cheap_init(const ConstInit *in)
{
	return in->kind == INIT_ZEROS || in->kind == INIT_FILL || in->kind == INIT_RANDOM || in->kind == INIT_NORMAL ||
	       (in->kind == INIT_NPY && in->resolved);
}

static uint64_t init_hash(uint64_t h, const ConstInit *in)
{
	h = mix_i(h, in->kind);
	switch (in->kind) {
	case INIT_RANDOM:
	case INIT_NORMAL:
		h = mix(h, &in->seed, sizeof in->seed);
		h = mix(h, &in->b, sizeof in->b);
		/* fall through */
	case INIT_FILL: return mix(h, &in->a, sizeof in->a);
	case INIT_NPY: return mix(h, in->resolved, strlen(in->resolved));
	default: return h;
	}
}

static bool init_equal(const ConstInit *x, const ConstInit *y)
{
	if (x->kind != y->kind)
		return false;
	switch (x->kind) {
	case INIT_RANDOM:
	case INIT_NORMAL:
		if (x->seed != y->seed || memcmp(&x->b, &y->b, sizeof x->b) != 0)
			return false;
		/* fall through */
	case INIT_FILL: return memcmp(&x->a, &y->a, sizeof x->a) == 0;
	case INIT_NPY: return strcmp(x->resolved, y->resolved) == 0;
	case INIT_ZEROS: return true;
	default: return false;
	}
}

/* ---- the table -------------------------------------------------------------- */
typedef struct {
	uint64_t hash;
	Node *n;
} Slot;

typedef struct {
	Slot *slots;
	size_t mask;
} Table;

/* The first kept node with this hash that `same` accepts, else NULL (and
 * *free_slot where to keep n). */
typedef bool (*SameFn)(const Node *kept, const Node *n, void *ctx);

static Node *table_find(Table *t, uint64_t h, const Node *n, SameFn same, void *ctx, size_t *free_slot)
{
	size_t i = h & t->mask;
	for (; t->slots[i].n; i = (i + 1) & t->mask)
		if (t->slots[i].hash == h && same(t->slots[i].n, n, ctx))
			return t->slots[i].n;
	*free_slot = i;
	return NULL;
}

static bool same_node(const Node *kept, const Node *n, void *ctx)
{
	(void)ctx;
	return kept->op != OP_CONSTANT && node_equal(kept, n);
}

/* ctx: the data of n (a constant compared by its data), or NULL. */
static bool same_const(const Node *kept, const Node *n, void *ctx)
{
	const Value *a = kept->out[0], *b = n->out[0];
	if (kept->op != OP_CONSTANT || a->type.dtype != b->type.dtype || !shape_eq(&a->type.shape, &b->type.shape))
		return false;
	if (!ctx)
		return init_equal(&kept->init, &n->init);
	Tensor *own;
	const Tensor *x = const_data(kept, &own), *y = ctx;
	bool eq = x && (tensor_bytes(y) == 0 || memcmp(x->data, y->data, tensor_bytes(y)) == 0);
	tensor_free(own);
	return eq;
}

/* n's results replaced by kept's where they can be; n goes when none of its
 * results is left used.  Returns whether anything changed. */
static bool merge(Graph *g, Node *kept, Node *n)
{
	bool changed = false, live = false;
	for (int k = 0; k < n->nout; k++) {
		Value *v = n->out[k];
		if (v->nuses > 0 && graph_replace_uses(g, v, kept->out[k]))
			changed = true;
		live |= v->nuses > 0;
	}
	if (!live && changed)
		graph_remove_node(g, n);
	return changed;
}

bool pass_cse(Graph *g, PassContext *cx, Diag *d)
{
	(void)d;
	size_t cap = 16;
	while (cap < 2 * (size_t)g->nnodes + 2)
		cap *= 2;
	Table t = {xcalloc(cap, sizeof(Slot)), cap - 1};
	for (int i = 0; i < g->nnodes; i++) {
		Node *n = g->nodes[i];
		if (node_removed(n))
			continue;
		uint64_t h;
		Node *kept;
		size_t slot = 0;
		if (n->op == OP_CONSTANT) {
			if (n->nout != 1 || !n->out[0]->typed)
				continue;
			Tensor *own = NULL;
			const Tensor *data = NULL;
			h = mix_type(mix_i(0, -1), &n->out[0]->type);
			if (by_data(n)) {
				if (!(data = const_data(n, &own)))
					continue;
				h = mix(mix_i(h, 1), data->data, tensor_bytes(data));
			} else if (cheap_init(&n->init)) {
				h = init_hash(mix_i(h, 2), &n->init);
			} else {
				continue;
			}
			kept = table_find(&t, h, n, same_const, (void *)data, &slot);
			tensor_free(own);
		} else {
			if (!cse_safe(n) || !node_hash(n, &h))
				continue;
			kept = table_find(&t, h, n, same_node, NULL, &slot);
		}
		if (!kept)
			t.slots[slot] = (Slot){h, n};
		else if (merge(g, kept, n))
			cx->changes++;
	}
	free(t.slots);
	graph_compact(g);
	return true;
}
