/* Graph IR construction and the dtype, shape and tensor basics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "ops.h"
#include "util.h"

/* ---- dtypes ----------------------------------------------------------- */
static const struct {
	const char *name;
	size_t size;
	const char *npy;
} dtype_tab[DT_COUNT] = {
	[DT_INVALID] = {"invalid", 0, NULL},
#define DTYPE(id, name, size, npy) [DT_##id] = {name, size, npy},
#include "dtypes.def"
#undef DTYPE
};

const char *dtype_name(DType t) { return t < DT_COUNT ? dtype_tab[t].name : "invalid"; }
size_t dtype_size(DType t) { return t < DT_COUNT ? dtype_tab[t].size : 0; }
const char *dtype_npy_descr(DType t) { return t < DT_COUNT ? dtype_tab[t].npy : NULL; }
bool dtype_is_float(DType t) { return t == DT_F32 || t == DT_F16 || t == DT_BF16; }
bool dtype_is_int(DType t) { return t == DT_I32 || t == DT_I64 || t == DT_I8; }
bool dtype_has_kernels(DType t) { return t == DT_F32 || t == DT_I32 || t == DT_I64 || t == DT_BOOL; }

DType dtype_from_name(const char *s, size_t len)
{
	for (int t = DT_F32; t < DT_COUNT; t++)
		if (strlen(dtype_tab[t].name) == len && memcmp(dtype_tab[t].name, s, len) == 0)
			return (DType)t;
	return DT_INVALID;
}

const char *attr_kind_name(AttrKind k)
{
	static const char *names[] = {"int", "float", "string", "int list", "float list", "dtype"};
	return names[k];
}

/* ---- shapes ----------------------------------------------------------- */
/* Saturates at INT64_MAX (the verifier rejects such shapes: gdcc_limits.h),
 * so that no caller overflows on a shape not yet checked. */
int64_t shape_numel(const Shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		if (s->dim[i] == 0)
			return 0;
	for (int i = 0; i < s->rank; i++)
		if (s->dim[i] < 0 || __builtin_mul_overflow(n, s->dim[i], &n))
			return INT64_MAX;
	return n;
}

bool shape_eq(const Shape *a, const Shape *b)
{
	if (a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->dim[i] != b->dim[i])
			return false;
	return true;
}

char *shape_str(const Shape *s, char *buf, size_t n)
{
	size_t k = 0;
	k += snprintf(buf + k, n - k, "[");
	for (int i = 0; i < s->rank && k < n; i++)
		k += snprintf(buf + k, n - k, "%s%lld", i ? "," : "", (long long)s->dim[i]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
	return buf;
}

char *type_str(const TensorType *t, char *buf, size_t n)
{
	char sh[128];
	snprintf(buf, n, "%s%s", dtype_name(t->dtype), shape_str(&t->shape, sh, sizeof sh));
	return buf;
}

void shape_strides(const Shape *s, int64_t *strides)
{
	int64_t st = 1;
	for (int i = s->rank - 1; i >= 0; i--) {
		strides[i] = st;
		st *= s->dim[i];
	}
}

bool shape_broadcast(const Shape *a, const Shape *b, Shape *out)
{
	Shape r;
	r.rank = a->rank > b->rank ? a->rank : b->rank;
	for (int i = 0; i < r.rank; i++) {
		int ia = a->rank - r.rank + i, ib = b->rank - r.rank + i;
		int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;
		if (da == db || db == 1)
			r.dim[i] = da;
		else if (da == 1)
			r.dim[i] = db;
		else
			return false;
	}
	*out = r;
	return true;
}

Shape shape_make(int rank, const int64_t *dims)
{
	Shape s = {.rank = rank};
	for (int i = 0; i < rank; i++)
		s.dim[i] = dims[i];
	return s;
}

/* ---- tensors ---------------------------------------------------------- */
Tensor *tensor_new(DType dt, const Shape *s)
{
	Tensor *t = xcalloc(1, sizeof *t);
	t->type.dtype = dt;
	t->type.shape = *s;
	/* callers check the size first (tensor_size_error); an unchecked one
	 * that overflows must not wrap into a small allocation */
	size_t bytes;
	if (__builtin_mul_overflow((size_t)shape_numel(s), dtype_size(dt), &bytes) || shape_numel(s) == INT64_MAX) {
		fprintf(stderr, "gdcc: fatal: a tensor of %d dimensions is too large to allocate\n", s->rank);
		abort();
	}
	t->data = bytes ? xcalloc(1, bytes) : NULL;
	return t;
}

void tensor_free(Tensor *t)
{
	if (!t)
		return;
	free(t->data);
	free(t);
}

int64_t tensor_numel(const Tensor *t) { return shape_numel(&t->type.shape); }
size_t tensor_bytes(const Tensor *t) { return (size_t)tensor_numel(t) * dtype_size(t->type.dtype); }

double tensor_get_f(const Tensor *t, int64_t i)
{
	switch (t->type.dtype) {
	case DT_F32: return ((const float *)t->data)[i];
	case DT_I32: return ((const int32_t *)t->data)[i];
	case DT_I64: return (double)((const int64_t *)t->data)[i];
	case DT_BOOL: return ((const uint8_t *)t->data)[i] != 0;
	case DT_I8: return ((const int8_t *)t->data)[i];
	default: return NAN;
	}
}

int64_t tensor_get_i(const Tensor *t, int64_t i)
{
	switch (t->type.dtype) {
	case DT_I32: return ((const int32_t *)t->data)[i];
	case DT_I64: return ((const int64_t *)t->data)[i];
	case DT_BOOL: return ((const uint8_t *)t->data)[i] != 0;
	case DT_I8: return ((const int8_t *)t->data)[i];
	case DT_F32: return (int64_t)((const float *)t->data)[i];
	default: return 0;
	}
}

/* v rounded toward 0 and clamped to [lo, hi]; NaN is 0 (a double-to-int
 * conversion out of range is undefined in C). */
static int64_t clamp_int(double v, double lo, double hi)
{
	if (!(v == v))
		return 0;
	if (v <= lo)
		return (int64_t)lo;
	if (v >= hi)
		return hi >= 9.2233720368547758e18 ? INT64_MAX : (int64_t)hi;
	return (int64_t)v;
}

void tensor_set_f(Tensor *t, int64_t i, double v)
{
	switch (t->type.dtype) {
	case DT_F32: ((float *)t->data)[i] = (float)v; break;
	case DT_I32: ((int32_t *)t->data)[i] = (int32_t)clamp_int(v, INT32_MIN, INT32_MAX); break;
	case DT_I64: ((int64_t *)t->data)[i] = clamp_int(v, -9.2233720368547758e18, 9.2233720368547758e18); break;
	case DT_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
	case DT_I8: ((int8_t *)t->data)[i] = (int8_t)clamp_int(v, INT8_MIN, INT8_MAX); break;
	default: break;
	}
}

void tensor_set_i(Tensor *t, int64_t i, int64_t v)
{
	switch (t->type.dtype) {
	case DT_F32: ((float *)t->data)[i] = (float)v; break;
	case DT_I32: ((int32_t *)t->data)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
	case DT_I64: ((int64_t *)t->data)[i] = v; break;
	case DT_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
	case DT_I8: ((int8_t *)t->data)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
	default: break;
	}
}

/* ---- graphs ----------------------------------------------------------- */
#define PUSH(arr, n, cap, x)                                             \
	do {                                                             \
		if ((n) == (cap)) {                                      \
			(cap) = (cap) ? 2 * (cap) : 8;                   \
			(arr) = xrealloc((arr), (cap) * sizeof *(arr));  \
		}                                                        \
		(arr)[(n)++] = (x);                                      \
	} while (0)

Graph *graph_new(const char *name)
{
	Graph *g = xcalloc(1, sizeof *g);
	g->name = xstrdup(name ? name : "model");
	return g;
}

void attr_copy(Attr *to, const Attr *a)
{
	*to = *a;
	to->name = xstrdup(a->name);
	to->s = a->s ? xstrdup(a->s) : NULL;
	to->ints = NULL;
	to->floats = NULL;
	if (a->ints) {
		to->ints = xmalloc((size_t)(a->n ? a->n : 1) * sizeof *to->ints);
		if (a->n)
			memcpy(to->ints, a->ints, (size_t)a->n * sizeof *to->ints);
	}
	if (a->floats) {
		to->floats = xmalloc((size_t)(a->n ? a->n : 1) * sizeof *to->floats);
		if (a->n)
			memcpy(to->floats, a->floats, (size_t)a->n * sizeof *to->floats);
	}
}

void node_copy_attr(Node *to, const Attr *a, Loc loc)
{
	Attr *b = node_add_attr(to, a->name, a->kind, loc);
	char *name = b->name;
	attr_copy(b, a);
	free(b->name);
	b->name = name;
	b->loc = loc;
}

void attr_free(Attr *a)
{
	free(a->name);
	free(a->s);
	free(a->ints);
	free(a->floats);
}

void node_free(Node *n)
{
	for (int k = 0; k < n->nattrs; k++)
		attr_free(&n->attrs[k]);
	free(n->attrs);
	free(n->in);
	free(n->in_loc);
	free(n->out);
	free(n->init.values);
	free(n->init.ivalues);
	free(n->init.path);
	free(n->init.resolved);
	if (!n->init.borrowed)
		tensor_free(n->init.data);
	free(n);
}

void graph_free(Graph *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->nnodes; i++)
		node_free(g->nodes[i]);
	for (int i = 0; i < g->nvalues; i++) {
		free(g->values[i]->name);
		free(g->values[i]->src_name);
		free(g->values[i]->users);
		free(g->values[i]);
	}
	free(g->values);
	free(g->nodes);
	free(g->inputs);
	free(g->outputs);
	free(g->output_loc);
	free(g->name);
	free(g->dir);
	free(g->file);
	free(g->input_origin);
	free(g->input_part);
	free(g->output_origin);
	free(g->output_part);
	strmap_free(&g->index);
	for (int i = 0; i < g->mesh.naxes; i++)
		free(g->mesh.name[i]);
	for (int i = 0; i < g->nannots; i++)
		shard_annot_free(&g->annots[i]);
	free(g->annots);
	free(g);
}

void shard_annot_free(ShardAnnot *a)
{
	free(a->value);
	for (int i = 0; i < a->naxis; i++)
		free(a->axis[i]);
	free(a->axis);
	free(a->axis_loc);
	for (int i = 0; i < a->npartial; i++)
		free(a->partial[i]);
	free(a->partial);
	free(a->partial_loc);
	memset(a, 0, sizeof *a);
}

static Value *find_among(Value *const *vs, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(vs[i]->name, name) == 0)
			return vs[i];
	for (int i = 0; i < n; i++)
		if (vs[i]->src_name && strcmp(vs[i]->src_name, name) == 0)
			return vs[i];
	return NULL;
}

Value *graph_find_input(const Graph *g, const char *name) { return find_among(g->inputs, g->ninputs, name); }
Value *graph_find_output(const Graph *g, const char *name) { return find_among(g->outputs, g->noutputs, name); }

void graph_reindex(Graph *g)
{
	strmap_free(&g->index);
	for (int i = 0; i < g->nvalues; i++)
		strmap_add(&g->index, g->values[i]->name, g->values[i]);
}

Value *graph_find_value(const Graph *g, const char *name) { return strmap_get(&g->index, name); }

Value *graph_new_value(Graph *g, const char *name, Loc loc)
{
	if (graph_find_value(g, name))
		return NULL;
	Value *v = xcalloc(1, sizeof *v);
	v->name = xstrdup(name);
	v->loc = loc;
	v->id = g->nvalues;
	PUSH(g->values, g->nvalues, g->capvalues, v);
	strmap_add(&g->index, v->name, v);
	return v;
}

Value *graph_add_input(Graph *g, const char *name, DType dt, const Shape *s, Loc loc)
{
	Value *v = graph_new_value(g, name, loc);
	if (!v)
		return NULL;
	v->type.dtype = dt;
	v->type.shape = *s;
	v->typed = true;
	v->is_input = true;
	PUSH(g->inputs, g->ninputs, g->capinputs, v);
	return v;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Is a name given twice?  (Sorted: a split may have thousands of results.) */
static bool names_repeat(const char *const *names, int n)
{
	const char **s = xmalloc((size_t)n * sizeof *s);
	memcpy(s, names, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, cmp_name);
	bool rep = false;
	for (int i = 1; i < n && !rep; i++)
		rep = strcmp(s[i - 1], s[i]) == 0;
	free(s);
	return rep;
}

Node *graph_add_node(Graph *g, OpKind op, Value **in, int nin,
		     const char *const *out_names, int nout, Loc loc)
{
	for (int i = 0; i < nout; i++)
		if (graph_find_value(g, out_names[i]))
			return NULL;
	if (nout > 1 && names_repeat(out_names, nout))
		return NULL;
	Node *n = xcalloc(1, sizeof *n);
	n->op = op;
	n->loc = loc;
	n->group = -1;
	n->nin = nin;
	n->in = xcalloc(nin, sizeof *n->in);
	n->in_loc = xcalloc(nin, sizeof *n->in_loc);
	for (int i = 0; i < nin; i++) {
		n->in[i] = in[i];
		n->in_loc[i] = loc;
		in[i]->nuses++;
		PUSH(in[i]->users, in[i]->nusers, in[i]->capusers, n);
	}
	n->nout = nout;
	n->out = xcalloc(nout, sizeof *n->out);
	for (int i = 0; i < nout; i++) {
		Value *v = graph_new_value(g, out_names[i], loc);
		v->def = n;
		v->def_index = i;
		n->out[i] = v;
	}
	n->id = g->nnodes;
	PUSH(g->nodes, g->nnodes, g->capnodes, n);
	return n;
}

Node *graph_add_const(Graph *g, const char *name, DType dt, const Shape *s,
		      ConstInit init, Loc loc)
{
	const char *names[] = {name};
	Node *n = graph_add_node(g, OP_CONSTANT, NULL, 0, names, 1, loc);
	if (!n)
		return NULL;
	n->init = init;
	n->out[0]->annotated = true;
	n->out[0]->annot.dtype = dt;
	n->out[0]->annot.shape = *s;
	return n;
}

void graph_add_output(Graph *g, Value *v, Loc loc)
{
	int cap = g->capoutputs;
	PUSH(g->outputs, g->noutputs, g->capoutputs, v);
	if (cap != g->capoutputs)
		g->output_loc = xrealloc(g->output_loc, g->capoutputs * sizeof *g->output_loc);
	g->output_loc[g->noutputs - 1] = loc;
	v->is_output = true;
	v->nuses++;
}

/* ---- attributes ------------------------------------------------------- */
Attr *node_add_attr(Node *n, const char *name, AttrKind kind, Loc loc)
{
	for (int i = 0; i < n->nattrs; i++)
		if (strcmp(n->attrs[i].name, name) == 0) {
			attr_free(&n->attrs[i]);
			memset(&n->attrs[i], 0, sizeof n->attrs[i]);
			n->attrs[i].name = xstrdup(name);
			n->attrs[i].kind = kind;
			n->attrs[i].loc = loc;
			return &n->attrs[i];
		}
	n->attrs = xrealloc(n->attrs, (n->nattrs + 1) * sizeof *n->attrs);
	Attr *a = &n->attrs[n->nattrs++];
	memset(a, 0, sizeof *a);
	a->name = xstrdup(name);
	a->kind = kind;
	a->loc = loc;
	return a;
}

void node_set_int(Node *n, const char *name, int64_t v) { node_add_attr(n, name, ATTR_INT, n->loc)->i = v; }
void node_set_float(Node *n, const char *name, double v) { node_add_attr(n, name, ATTR_FLOAT, n->loc)->f = v; }
void node_set_string(Node *n, const char *name, const char *v) { node_add_attr(n, name, ATTR_STRING, n->loc)->s = xstrdup(v); }
void node_set_dtype(Node *n, const char *name, DType v) { node_add_attr(n, name, ATTR_DTYPE, n->loc)->dt = v; }

void node_set_ints(Node *n, const char *name, const int64_t *v, int count)
{
	Attr *a = node_add_attr(n, name, ATTR_INTS, n->loc);
	a->n = count;
	a->ints = xcalloc(count, sizeof *a->ints);
	if (count)
		memcpy(a->ints, v, count * sizeof *v);
}

void node_set_floats(Node *n, const char *name, const double *v, int count)
{
	Attr *a = node_add_attr(n, name, ATTR_FLOATS, n->loc);
	a->n = count;
	a->floats = xcalloc(count, sizeof *a->floats);
	if (count)
		memcpy(a->floats, v, count * sizeof *v);
}

const Attr *node_attr(const Node *n, const char *name)
{
	for (int i = 0; i < n->nattrs; i++)
		if (strcmp(n->attrs[i].name, name) == 0)
			return &n->attrs[i];
	return NULL;
}
