/* Sharding: the mesh and annotations, propagation by the op table's rules,
 * collectives where shardings change (see shard.h). */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "rewrite.h"
#include "shard.h"
#include "util.h"
#include "verify.h"

/* ---- the mesh and annotations ----------------------------------------------- */
int shard_mesh_axis(const Mesh *m, const char *name)
{
	for (int i = 0; i < m->naxes; i++)
		if (strcmp(m->name[i], name) == 0)
			return i;
	return -1;
}

int64_t shard_mesh_devices(const Mesh *m)
{
	int64_t n = 1;
	for (int i = 0; i < m->naxes; i++)
		n *= m->size[i];
	return n;
}

enum { MAX_DEVICES = 1 << 16 };

char *shard_mesh_axis_error(const Mesh *m, const char *name, int64_t size)
{
	if (strcmp(name, "_") == 0 || strcmp(name, "partial") == 0)
		return xasprintf("'%s' cannot name a mesh axis", name);
	if (shard_mesh_axis(m, name) >= 0)
		return xasprintf("mesh axis '%s' is named twice", name);
	if (m->naxes >= MAX_MESH_AXES)
		return xasprintf("more than %d mesh axes", MAX_MESH_AXES);
	if (size < 1 || size > MAX_DEVICES)
		return xasprintf("mesh axis '%s' = %" PRId64 ": a size is 1 to %d", name, size, MAX_DEVICES);
	if (shard_mesh_devices(m) * size > MAX_DEVICES)
		return xasprintf("the mesh has more than %d devices", MAX_DEVICES);
	return NULL;
}

void shard_add_annot(Graph *g, ShardAnnot *a)
{
	g->annots = xrealloc(g->annots, (size_t)(g->nannots + 1) * sizeof *g->annots);
	g->annots[g->nannots++] = *a;
	memset(a, 0, sizeof *a);
}

/* Comma-separated items of a command-line list, brackets optional. */
static char **split_items(const char *text, int *n)
{
	const char *s = text, *e = text + strlen(text);
	while (s < e && isspace((unsigned char)*s))
		s++;
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	if (s < e && *s == '[' && e[-1] == ']')
		s++, e--;
	char **v = NULL;
	*n = 0;
	for (const char *p = s; p <= e;) {
		const char *q = p;
		while (q < e && *q != ',')
			q++;
		const char *a = p, *b = q;
		while (a < b && isspace((unsigned char)*a))
			a++;
		while (b > a && isspace((unsigned char)b[-1]))
			b--;
		if (b > a || q < e || *n > 0) {
			v = xrealloc(v, (size_t)(*n + 1) * sizeof *v);
			v[(*n)++] = xstrndup(a, (size_t)(b - a));
		}
		p = q + 1;
	}
	return v;
}

static void free_items(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

bool shard_mesh_from_text(Graph *g, const char *text, Diag *d)
{
	Loc loc = loc_at(NULL, 0, 0);
	if (g->mesh.naxes) {
		diag_error(d, loc, "--mesh %s: the model declares a mesh already", text);
		return false;
	}
	int n;
	char **it = split_items(text, &n);
	Mesh m = {0};
	bool ok = n > 0;
	if (!ok)
		diag_error(d, loc, "--mesh %s: no axes (give NAME=SIZE, ...)", text);
	for (int i = 0; ok && i < n; i++) {
		char *eq = strchr(it[i], '='), *end = NULL;
		long long v = eq ? strtoll(eq + 1, &end, 10) : 0;
		if (!eq || eq == it[i] || !eq[1] || *end) {
			diag_error(d, loc, "--mesh %s: '%s' is not NAME=SIZE", text, it[i]);
			ok = false;
			break;
		}
		*eq = 0;
		bool name_ok = isalpha((unsigned char)it[i][0]) || it[i][0] == '_';
		for (const char *c = it[i]; *c; c++)
			name_ok &= isalnum((unsigned char)*c) || *c == '_';
		char *e = name_ok ? shard_mesh_axis_error(&m, it[i], v) : xasprintf("'%s' is not a name", it[i]);
		if (e) {
			diag_error(d, loc, "--mesh %s: %s", text, e);
			free(e);
			ok = false;
			break;
		}
		m.name[m.naxes] = xstrdup(it[i]);
		m.size[m.naxes++] = v;
	}
	free_items(it, n);
	if (!ok) {
		for (int i = 0; i < m.naxes; i++)
			free(m.name[i]);
		return false;
	}
	m.loc = loc;
	g->mesh = m;
	return true;
}

bool shard_annot_from_text(Graph *g, const char *text, Diag *d)
{
	Loc loc = loc_at(NULL, 0, 0);
	const char *eq = strchr(text, '=');
	if (!eq || eq == text) {
		diag_error(d, loc, "--shard needs NAME=[AXIS or _, ...], got '%s'", text);
		return false;
	}
	char *name = xstrndup(text, (size_t)(eq - text));
	Value *v = graph_find_value(g, name);
	for (int i = 0; !v && i < g->nvalues; i++) /* an imported model's own name */
		if (g->values[i]->src_name && strcmp(g->values[i]->src_name, name) == 0)
			v = g->values[i];
	if (!v) {
		diag_error(d, loc, "--shard %s: the model has no value '%s'", text, name);
		free(name);
		return false;
	}
	free(name);
	int n;
	char **it = split_items(eq + 1, &n);
	ShardAnnot a = {.value = xstrdup(v->name), .loc = loc, .naxis = n, .axis = it};
	a.axis_loc = xcalloc((size_t)n + 1, sizeof *a.axis_loc);
	for (int i = 0; i < n; i++)
		a.axis_loc[i] = loc;
	shard_add_annot(g, &a);
	return true;
}

bool shard_apply_strategy(Graph *g, Parallel par, int devices, Diag *d)
{
	Loc loc = loc_at(NULL, 0, 0);
	if (par == PARALLEL_NONE)
		return true;
	if (g->mesh.naxes) {
		diag_error(d, g->mesh.loc, "--parallel: the model declares its own mesh");
		return false;
	}
	const char *axis = par == PARALLEL_DATA ? "dp" : par == PARALLEL_TENSOR ? "tp" : "pp";
	char *e = shard_mesh_axis_error(&g->mesh, axis, devices);
	if (e) {
		diag_error(d, loc, "--devices %d: %s", devices, e);
		free(e);
		return false;
	}
	g->mesh.name[0] = xstrdup(axis);
	g->pipelined = par == PARALLEL_PIPELINE;
	g->split_weights = par == PARALLEL_TENSOR;
	g->mesh.size[0] = devices;
	g->mesh.naxes = 1;
	g->mesh.loc = loc;
	if (par == PARALLEL_DATA)
		for (int i = 0; i < g->ninputs; i++) {
			Value *v = g->inputs[i];
			if (v->type.shape.rank < 1 || v->type.shape.dim[0] % devices != 0) {
				char tb[64];
				diag_report(d, DIAG_WARNING, v->loc, "--parallel=data: input '%s' (%s) is not split: its axis 0 "
					    "does not divide over %d devices", v->name, type_str(&v->type, tb, sizeof tb), devices);
				continue;
			}
			ShardAnnot a = {.value = xstrdup(v->name), .loc = v->loc, .naxis = v->type.shape.rank};
			a.axis = xcalloc((size_t)a.naxis, sizeof *a.axis);
			a.axis_loc = xcalloc((size_t)a.naxis, sizeof *a.axis_loc);
			for (int k = 0; k < a.naxis; k++) {
				a.axis[k] = xstrdup(k == 0 ? "dp" : "_");
				a.axis_loc[k] = v->loc;
			}
			shard_add_annot(g, &a);
		}
	return true;
}

static void annotate(Graph *g, Value *v, bool split0)
{
	ShardAnnot a = {.value = xstrdup(v->name), .loc = v->loc, .naxis = v->type.shape.rank};
	a.axis = xcalloc((size_t)a.naxis + 1, sizeof *a.axis);
	a.axis_loc = xcalloc((size_t)a.naxis + 1, sizeof *a.axis_loc);
	for (int k = 0; k < a.naxis; k++) {
		a.axis[k] = xstrdup(k == 0 && split0 ? g->mesh.name[0] : "_");
		a.axis_loc[k] = v->loc;
	}
	shard_add_annot(g, &a);
}

bool shard_apply_groups(Graph *g, const bool *tensor, int ngroups, int devices, Diag *d)
{
	if (g->mesh.naxes) {
		diag_error(d, g->mesh.loc, "--parallel: the model declares its own mesh");
		return false;
	}
	char *e = shard_mesh_axis_error(&g->mesh, "d", devices);
	if (e) {
		diag_error(d, loc_at(NULL, 0, 0), "--devices %d: %s", devices, e);
		free(e);
		return false;
	}
	g->mesh.name[0] = xstrdup("d");
	g->mesh.size[0] = devices;
	g->mesh.naxes = 1;
	g->mesh.loc = loc_at(NULL, 0, 0);
	double *work = xcalloc((size_t)ngroups + 1, sizeof *work);
	int *first = xcalloc((size_t)ngroups + 1, sizeof *first), *last = xcalloc((size_t)ngroups + 1, sizeof *last);
	shard_group_nodes(g, ngroups, work, first, last);
	bool *done = xcalloc((size_t)g->nvalues + 1, sizeof *done);
	for (int q = 0; q < ngroups; q++) {
		if (first[q] < 0)
			continue;
		/* the values a group reads from before it: split by batch (data) or whole (tensor) */
		for (int k = first[q]; k <= last[q]; k++) {
			Node *n = g->nodes[k];
			if (n->nin == 0)
				continue;
			n->split_weights = tensor[q];
			for (int i = 0; i < n->nin; i++) {
				Value *v = n->in[i];
				bool before = !v->def || (v->def->nin > 0 && v->def->stage >= 0 && v->def->stage < q);
				if (!before || done[v->id])
					continue;
				done[v->id] = true;
				bool split = !tensor[q] && v->type.shape.rank >= 1 && v->type.shape.dim[0] % devices == 0;
				annotate(g, v, split);
			}
		}
	}
	for (int k = 0; k < g->nnodes; k++)
		g->nodes[k]->stage = 0;
	free(done);
	free(work), free(first), free(last);
	return true;
}

static Sharding sh_whole(void)
{
	Sharding s = {.set = true};
	memset(s.dim, -1, sizeof s.dim);
	return s;
}

static bool sh_eq(const Sharding *a, const Sharding *b, int rank)
{
	if (a->partial != b->partial)
		return false;
	for (int i = 0; i < rank; i++)
		if (a->dim[i] != b->dim[i])
			return false;
	return true;
}

static bool sh_is_whole(const Sharding *s, int rank)
{
	Sharding w = sh_whole();
	return sh_eq(s, &w, rank);
}

/* Is mesh axis a used by a dim of s (or its partial sum)? */
static bool sh_uses(const Sharding *s, int rank, int a)
{
	if (s->partial & (1u << a))
		return true;
	for (int i = 0; i < rank; i++)
		if (s->dim[i] == a)
			return true;
	return false;
}

bool sharding_splits(const Sharding *s, int rank, int a)
{
	for (int i = 0; i < rank; i++)
		if (s->dim[i] == a)
			return true;
	return false;
}

static bool divides(const Mesh *m, int a, int64_t dim) { return dim > 0 && dim % m->size[a] == 0; }

bool shard_resolve(Graph *g, Diag *d)
{
	bool ok = true;
	for (int k = 0; k < g->nannots; k++) {
		const ShardAnnot *a = &g->annots[k];
		Value *v = graph_find_value(g, a->value);
		if (!v || !v->typed) {
			diag_error(d, a->loc, "'%s' is not a value of the graph", a->value);
			ok = false;
			continue;
		}
		const Shape *s = &v->type.shape;
		if (a->naxis != s->rank) {
			diag_error(d, a->loc, "the sharding of '%s' has %d axes, its type %s has rank %d", a->value, a->naxis,
				   type_str(&v->type, (char[64]){0}, 64), s->rank);
			ok = false;
			continue;
		}
		Sharding sh = sh_whole();
		bool good = true;
		for (int i = 0; i < a->naxis && good; i++) {
			if (strcmp(a->axis[i], "_") == 0)
				continue;
			int ax = shard_mesh_axis(&g->mesh, a->axis[i]);
			if (ax < 0) {
				diag_error(d, a->axis_loc[i], "'%s' is not an axis of the mesh", a->axis[i]);
				good = false;
			} else if (sh_uses(&sh, s->rank, ax)) {
				diag_error(d, a->axis_loc[i], "mesh axis '%s' splits '%s' twice", a->axis[i], a->value);
				good = false;
			} else if (!divides(&g->mesh, ax, s->dim[i])) {
				diag_error(d, a->axis_loc[i],
					   "axis %d of '%s' (%" PRId64 ") does not split evenly over mesh axis '%s' (%" PRId64 ")", i,
					   a->value, s->dim[i], a->axis[i], g->mesh.size[ax]);
				good = false;
			} else {
				sh.dim[i] = (int8_t)ax;
			}
		}
		for (int i = 0; i < a->npartial && good; i++) {
			int ax = shard_mesh_axis(&g->mesh, a->partial[i]);
			if (ax < 0) {
				diag_error(d, a->partial_loc[i], "'%s' is not an axis of the mesh", a->partial[i]);
				good = false;
			} else if (sh_uses(&sh, s->rank, ax)) {
				diag_error(d, a->partial_loc[i], "mesh axis '%s' both splits '%s' and sums it", a->partial[i], a->value);
				good = false;
			} else {
				sh.partial |= (uint8_t)(1u << ax);
			}
		}
		if (good && sh.partial && (v->is_input || (v->def && v->def->op == OP_CONSTANT))) {
			diag_error(d, a->loc, "'%s' is a%s: a partial sum is what an op computes", a->value,
				   v->is_input ? "n input" : " constant");
			good = false;
		}
		if (good && v->shard.set) {
			diag_error(d, a->loc, "'%s' is sharded twice", a->value);
			good = false;
		}
		if (!good) {
			ok = false;
			continue;
		}
		v->shard = sh;
	}
	return ok;
}

/* ---- printing ---------------------------------------------------------------- */
char *sharding_str(const Mesh *m, const Sharding *s, int rank, char *buf, size_t n)
{
	size_t k = 0;
#define PUT(...) (k += (size_t)snprintf(buf + (k < n ? k : n), k < n ? n - k : 0, __VA_ARGS__))
	PUT("[");
	for (int i = 0; i < rank; i++)
		PUT("%s%s", i ? ", " : "", s->dim[i] >= 0 ? m->name[s->dim[i]] : "_");
	PUT("]");
	if (s->partial) {
		PUT(" partial [");
		bool first = true;
		for (int a = 0; a < m->naxes; a++)
			if (s->partial & (1u << a)) {
				PUT("%s%s", first ? "" : ", ", m->name[a]);
				first = false;
			}
		PUT("]");
	}
#undef PUT
	return buf;
}

Shape shard_local_shape(const Mesh *m, const Sharding *s, const Shape *global)
{
	Shape l = *global;
	for (int i = 0; i < l.rank; i++)
		if (s->set && s->dim[i] >= 0)
			l.dim[i] /= m->size[s->dim[i]];
	return l;
}

Shape shard_device_shape(const Graph *g, const Value *v)
{
	Shape l = shard_local_shape(&g->mesh, &v->shard, &v->type.shape);
	bool constant = v->def && v->def->nin == 0;
	if (g->pipelined && g->micro_batches > 1 && !constant && l.rank >= 1)
		l.dim[0] /= g->micro_batches;
	return l;
}

/* Does node n keep axis 0 of its operands and results (the batch, b) apart:
 * each batch element's result from that element's operands alone?  By its
 * sharding rule; NULL, or why not. */
static const char *batch_apart(const Node *n, int64_t b)
{
	for (int j = 0; j < n->nout; j++)
		if (n->out[j]->type.shape.rank < 1 || n->out[j]->type.shape.dim[0] != b)
			return "a result whose axis 0 is not the batch";
	for (int i = 0; i < n->nin; i++) {
		const Value *v = n->in[i];
		bool constant = v->def && v->def->nin == 0;
		if (!constant && (v->type.shape.rank < 1 || v->type.shape.dim[0] != b))
			return "an operand whose axis 0 is not the batch";
	}
	int r = n->out[0]->type.shape.rank;
	switch (op_info[n->op].shard) {
	case SHARD_ELEMENTWISE:
	case SHARD_LINEAR:
		for (int i = 0; i < n->nin; i++) { /* a constant that is not broadcast over the batch */
			const Shape *s = &n->in[i]->type.shape;
			bool constant = n->in[i]->def && n->in[i]->def->nin == 0;
			if (constant && s->rank == r && s->dim[0] != 1)
				return "a constant operand along the batch";
		}
		return NULL;
	case SHARD_MATMUL:
		if (n->in[0]->type.shape.rank < 2)
			return "a vector operand";
		if (!(n->in[1]->def && n->in[1]->def->nin == 0) && n->in[1]->type.shape.rank < 3)
			return "a computed right operand without a batch axis";
		return NULL;
	case SHARD_GEMM:
		return attr_i(n, "trans_a") || !(n->in[1]->def && n->in[1]->def->nin == 0) ? "A transposed or B computed" : NULL;
	case SHARD_CONV:
	case SHARD_POOL:
	case SHARD_CHANNEL:
		return NULL;
	case SHARD_LAYERNORM:
	case SHARD_AXIS: {
		int64_t a = attr_i(n, "axis");
		return (a < 0 ? a + n->in[0]->type.shape.rank : a) == 0 ? "its axis is the batch" : NULL;
	}
	case SHARD_REDUCE: {
		const int64_t *axes;
		int na = attr_ints(n, "axes", &axes);
		if (na <= 0)
			return "it reduces every axis";
		for (int k = 0; k < na; k++)
			if ((axes[k] < 0 ? axes[k] + n->in[0]->type.shape.rank : axes[k]) == 0)
				return "it reduces the batch axis";
		return NULL;
	}
	case SHARD_RESHAPE:
		return NULL; /* axis 0 is the batch on both sides (checked above) */
	case SHARD_TRANSPOSE: {
		int perm[MAX_RANK];
		transpose_perm(n, n->in[0]->type.shape.rank, perm);
		return perm[0] == 0 ? NULL : "it moves the batch axis";
	}
	default:
		return "its op is not known to keep the batch apart";
	}
}

bool shard_set_micro_batches(Graph *g, int m, Diag *d)
{
	if (m <= 1)
		return true;
	if (!g->pipelined || g->ninputs < 1 || g->inputs[0]->type.shape.rank < 1) {
		diag_error(d, loc_at(NULL, 0, 0), "--micro-batches: for a pipeline (--parallel=pipeline) of a model with a batch axis");
		return false;
	}
	int64_t b = g->inputs[0]->type.shape.dim[0];
	if (b % m != 0) {
		diag_error(d, g->inputs[0]->loc, "--micro-batches %d: the batch (%" PRId64 ", axis 0 of '%s') does not divide into %d",
			   m, b, g->inputs[0]->name, m);
		return false;
	}
	for (int i = 0; i < g->ninputs; i++)
		if (g->inputs[i]->type.shape.rank < 1 || g->inputs[i]->type.shape.dim[0] != b) {
			diag_error(d, g->inputs[i]->loc, "--micro-batches: input '%s' has no batch axis of %" PRId64, g->inputs[i]->name, b);
			return false;
		}
	for (int k = 0; k < g->nnodes; k++) {
		const Node *n = g->nodes[k];
		if (n->nin == 0)
			continue;
		const char *why = batch_apart(n, b);
		if (why) {
			diag_error(d, n->loc, "--micro-batches: %s does not keep the batch apart: %s", op_info[n->op].name, why);
			return false;
		}
	}
	g->micro_batches = m;
	return true;
}

static uint64_t local_bytes(const Mesh *m, const Sharding *s, const TensorType *t)
{
	Shape l = shard_local_shape(m, s, &t->shape);
	return (uint64_t)shape_numel(&l) * dtype_size(t->dtype);
}

/* Bytes each device sends for op over mesh axis a, L the bytes it holds
 * before (ring algorithms). */
static uint64_t step_bytes(OpKind op, int64_t nd, uint64_t L)
{
	uint64_t n = (uint64_t)nd;
	switch (op) {
	case OP_ALL_REDUCE: return 2 * (n - 1) * L / n;
	case OP_ALL_GATHER: return (n - 1) * L;
	case OP_REDUCE_SCATTER:
	case OP_ALL_TO_ALL: return (n - 1) * L / n;
	default: return 0;
	}
}

uint64_t shard_collective_bytes(const Graph *g, const Node *n)
{
	if (op_info[n->op].shard != SHARD_COLLECTIVE || !n->in[0]->shard.set)
		return 0;
	int a = shard_mesh_axis(&g->mesh, attr_s(n, "mesh_axis"));
	if (a < 0)
		return 0;
	return step_bytes(n->op, g->mesh.size[a], local_bytes(&g->mesh, &n->in[0]->shard, &n->in[0]->type));
}

/* ---- resharding ---------------------------------------------------------------- */
typedef struct {
	OpKind op;
	int axis, axis2; /* all_to_all: split_axis, concat_axis */
	int mesh;
	Sharding after;
} Step;

enum { MAX_STEPS = 2 * MAX_RANK + 2 * MAX_MESH_AXES };

/* The collectives that take a value of shape s from `from` to `to`:
 * partial sums first (reduce_scatter where `to` splits an axis over the
 * same mesh axis, else all_reduce), then splits that move (all_to_all) or
 * go (all_gather), then new splits and partial sums (local). */
static int plan_reshard(const Mesh *m, int rank, Sharding from, const Sharding *to, Step *st)
{
	int ns = 0;
	Sharding c = from;
	for (int a = 0; a < m->naxes; a++) {
		if (!(c.partial & (1u << a)) || (to->partial & (1u << a)))
			continue;
		c.partial &= (uint8_t) ~(1u << a);
		int d = -1;
		for (int i = 0; i < rank; i++)
			if (to->dim[i] == a && c.dim[i] < 0)
				d = i;
		if (d >= 0 && !sh_uses(&c, rank, a)) {
			c.dim[d] = (int8_t)a;
			st[ns++] = (Step){OP_REDUCE_SCATTER, d, 0, a, c};
		} else {
			st[ns++] = (Step){OP_ALL_REDUCE, 0, 0, a, c};
		}
	}
	for (int i = 0; i < rank; i++) {
		int a = c.dim[i];
		if (a < 0 || to->dim[i] == a)
			continue;
		int e = -1;
		for (int j = 0; j < rank; j++)
			if (j != i && to->dim[j] == a && c.dim[j] < 0)
				e = j;
		c.dim[i] = -1;
		if (e >= 0) {
			c.dim[e] = (int8_t)a;
			st[ns++] = (Step){OP_ALL_TO_ALL, e, i, a, c};
		} else {
			st[ns++] = (Step){OP_ALL_GATHER, i, 0, a, c};
		}
	}
	for (int i = 0; i < rank; i++) {
		int a = to->dim[i];
		if (a < 0 || c.dim[i] == a)
			continue;
		c.dim[i] = (int8_t)a;
		st[ns++] = (Step){OP_SHARD_SLICE, i, 0, a, c};
	}
	for (int a = 0; a < m->naxes; a++)
		if ((to->partial & (1u << a)) && !(c.partial & (1u << a))) {
			c.partial |= (uint8_t)(1u << a);
			st[ns++] = (Step){OP_SHARD_PARTIAL, 0, 0, a, c};
		}
	return ns;
}

static uint64_t reshard_cost(const Mesh *m, const TensorType *t, const Sharding *from, const Sharding *to)
{
	Step st[MAX_STEPS];
	int ns = plan_reshard(m, t->shape.rank, *from, to, st);
	uint64_t bytes = 0;
	Sharding c = *from;
	for (int i = 0; i < ns; i++) {
		bytes += step_bytes(st[i].op, m->size[st[i].mesh], local_bytes(m, &c, t));
		c = st[i].after;
	}
	return bytes;
}

/* ---- propagation ---------------------------------------------------------------- */
typedef struct {
	Value *from, *to;
	Sharding want;
} Resharded;

typedef struct {
	Graph *g;
	const Mesh *m;
	ShardReport *r;
	Diag *d;
	Resharded *done; /* reshardings made, reused by later users */
	int ndone, capdone;
} Prop;

typedef struct {
	Prop *p;
	Node *n;
	Sharding *cur;   /* operands' shardings (free ones: whole) */
	bool *free;      /* a constant no user has sharded yet: takes its want */
	const Sharding **req; /* results' annotations, or NULL */
	Sharding *want;  /* each operand's sharding the node needs */
	Sharding *res;   /* each result's sharding */
} RuleCx;

static const Shape *in_shape(const RuleCx *c, int i) { return &c->n->in[i]->type.shape; }
static const Shape *out_shape(const RuleCx *c, int j) { return &c->n->out[j]->type.shape; }

static void note_to(ShardReport *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_to(ShardReport *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	r->notes = xrealloc(r->notes, (size_t)(r->nnotes + 1) * sizeof *r->notes);
	r->notes[r->nnotes++] = s;
}

#define note(p, ...) note_to((p)->r, __VA_ARGS__)

/* Operand i's sharding for a result sharded C (numpy broadcasting: an axis
 * that broadcasts is whole). */
static Sharding bcast_want(const RuleCx *c, int i, const Sharding *C)
{
	Sharding w = sh_whole();
	const Shape *is = in_shape(c, i), *os = out_shape(c, 0);
	for (int j = 0; j < is->rank; j++) {
		int k = j + os->rank - is->rank;
		if (k >= 0 && is->dim[j] == os->dim[k])
			w.dim[j] = C->dim[k];
	}
	w.partial = C->partial;
	return w;
}

/* The result sharding operand i's sharding implies (partial sums dropped). */
static Sharding bcast_cand(const RuleCx *c, int i)
{
	Sharding C = sh_whole();
	const Shape *is = in_shape(c, i), *os = out_shape(c, 0);
	for (int j = 0; j < is->rank; j++) {
		int k = j + os->rank - is->rank;
		if (k >= 0 && is->dim[j] == os->dim[k])
			C.dim[k] = c->cur[i].dim[j];
	}
	return C;
}

static void all_results(RuleCx *c, const Sharding *C)
{
	for (int j = 0; j < c->n->nout; j++)
		c->res[j] = *C;
}

static void rule_replicate(RuleCx *c)
{
	Sharding w = sh_whole();
	for (int i = 0; i < c->n->nin; i++)
		c->want[i] = w;
	all_results(c, &w);
}

/* elementwise ops: the result follows the operand whose sharding costs the
 * least resharding of the others; linear ops keep a partial sum. */
static void rule_elementwise(RuleCx *c, bool linear)
{
	Node *n = c->n;
	int r = out_shape(c, 0)->rank;
	Sharding C = sh_whole();
	if (c->req[0]) {
		C = *c->req[0];
		if (!linear)
			C.partial = 0;
	} else {
		uint64_t best = UINT64_MAX;
		int chosen = -1, distinct = 0;
		Sharding seen = sh_whole();
		for (int i = 0; i < n->nin; i++) {
			if (c->free[i])
				continue;
			Sharding cand = bcast_cand(c, i);
			if (!sh_is_whole(&cand, r) && !sh_eq(&cand, &seen, r)) {
				distinct++;
				seen = cand;
			}
			uint64_t cost = 0;
			for (int k = 0; k < n->nin; k++)
				if (!c->free[k]) {
					Sharding w = bcast_want(c, k, &cand);
					w.partial = 0;
					Sharding from = c->cur[k];
					if (linear)
						from.partial = 0; /* partial sums are resolved alike */
					cost += reshard_cost(c->p->m, &n->in[k]->type, &from, &w);
				}
			if (cost < best) {
				best = cost;
				chosen = i;
				C = cand;
			}
		}
		if (distinct > 1) {
			char b[128];
			note(c->p, "%s (%s): its operands are sharded differently; the result is %s, following '%s' "
				   "(%" PRIu64 " bytes resharded per device)", n->out[0]->name, op_info[n->op].name,
			     sharding_str(c->p->m, &C, r, b, sizeof b), n->in[chosen]->name, best);
		}
		if (linear) {
			uint8_t P = 0;
			bool same = true;
			for (int i = 0; i < n->nin; i++)
				if (!c->free[i] && c->cur[i].partial) {
					if (P && c->cur[i].partial != P)
						same = false;
					P = c->cur[i].partial;
				}
			for (int a = 0; a < c->p->m->naxes; a++)
				if ((P & (1u << a)) && sh_uses(&C, r, a))
					same = false;
			C.partial = same ? P : 0;
		}
	}
	for (int i = 0; i < n->nin; i++)
		c->want[i] = bcast_want(c, i, &C);
	all_results(c, &C);
}

/* The sharding a node that follows its first operand starts from: its
 * annotated result's, else operand 0's (whole when free), partial sums
 * resolved. */
static Sharding followed(const RuleCx *c)
{
	Sharding C = c->req[0] ? *c->req[0] : c->free[0] ? sh_whole() : c->cur[0];
	C.partial = 0;
	return C;
}

/* softmax, concat, split, hardmax: the axis whole, the rest follows
 * operand 0 (or the annotated result); every operand and result has the
 * same rank. */
static void rule_axis(RuleCx *c)
{
	Node *n = c->n;
	int r = in_shape(c, 0)->rank;
	int64_t ax = attr_i(n, "axis");
	if (ax < 0)
		ax += r;
	Sharding C = followed(c);
	if (ax >= 0 && ax < r)
		C.dim[ax] = -1;
	for (int i = 0; i < n->nin; i++)
		c->want[i] = C;
	all_results(c, &C);
}

static void rule_reduce(RuleCx *c)
{
	Node *n = c->n;
	int r = in_shape(c, 0)->rank;
	bool red[MAX_RANK] = {0};
	const int64_t *axes;
	int na = attr_ints(n, "axes", &axes);
	if (na <= 0 && !(na == 0 && attr_i(n, "noop_with_empty_axes")))
		for (int i = 0; i < r; i++)
			red[i] = true;
	for (int k = 0; k < na; k++)
		red[axes[k] < 0 ? axes[k] + r : axes[k]] = true;
	bool keep = attr_i(n, "keepdims") != 0;
	Sharding w = c->free[0] ? sh_whole() : c->cur[0], C = sh_whole();
	bool sum = n->op == OP_REDUCE_SUM;
	if (!sum)
		w.partial = 0;
	for (int i = 0; i < r; i++)
		if (red[i] && w.dim[i] >= 0) {
			if (sum)
				C.partial |= (uint8_t)(1u << w.dim[i]);
			else
				w.dim[i] = -1;
		}
	C.partial |= w.partial;
	for (int i = 0, k = 0; i < r; i++) {
		if (!red[i])
			C.dim[keep ? i : k] = w.dim[i];
		if (!red[i] || keep)
			k++;
	}
	c->want[0] = w;
	all_results(c, &C);
}

/* matmul / gemm: A's rows am and reduction ak, B's reduction bk and
 * columns bn; batch axes (matmul) broadcast like elementwise ones. */
static void rule_contract(RuleCx *c, int am, int ak, int bk, int bn, bool batched)
{
	Node *n = c->n;
	const Mesh *m = c->p->m;
	int ra = in_shape(c, 0)->rank, rb = in_shape(c, 1)->rank, r = out_shape(c, 0)->rank;
	const Shape *os = out_shape(c, 0);
	Sharding C = sh_whole(), wa = sh_whole(), wb = sh_whole();
	int K = -1;
	if (c->req[0]) {
		C = *c->req[0];
		for (int a = 0; a < m->naxes; a++)
			if (C.partial & (1u << a)) {
				K = a;
				break;
			}
		C.partial = K >= 0 ? (uint8_t)(1u << K) : 0;
	} else {
		const Sharding *A = c->free[0] ? NULL : &c->cur[0], *B = c->free[1] ? NULL : &c->cur[1];
		if (batched)
			for (int k = 0; k < r - 2; k++) {
				int ja = k - (r - ra), jb = k - (r - rb);
				if (A && ja >= 0 && ja < ra - 2 && in_shape(c, 0)->dim[ja] == os->dim[k] && A->dim[ja] >= 0)
					C.dim[k] = A->dim[ja];
				else if (B && jb >= 0 && jb < rb - 2 && in_shape(c, 1)->dim[jb] == os->dim[k] && B->dim[jb] >= 0)
					C.dim[k] = B->dim[jb];
			}
		int M = A ? A->dim[am] : -1, N = B ? B->dim[bn] : -1;
		int kA = A ? A->dim[ak] : -1, kB = B ? B->dim[bk] : -1;
		if (kA >= 0 && (!B || kB == kA))
			K = kA;
		else if (kB >= 0 && !A)
			K = kB;
		if (M >= 0 && sh_uses(&C, r - 2, M))
			M = -1;
		if (M >= 0 && M == K)
			M = -1;
		if (N >= 0 && (sh_uses(&C, r - 2, N) || N == M || N == K))
			N = -1;
		if (K >= 0 && sh_uses(&C, r - 2, K))
			K = -1;
		if (!B && (c->p->r->split_weights || c->p->g->split_weights || n->split_weights) && K < 0 && N < 0)
			for (int a = 0; a < m->naxes && N < 0; a++)
				if (a != M && !sh_uses(&C, r - 2, a) && divides(m, a, in_shape(c, 1)->dim[bn]))
					N = a;
		C.dim[r - 2] = (int8_t)M;
		C.dim[r - 1] = (int8_t)N;
		C.partial = K >= 0 ? (uint8_t)(1u << K) : 0;
	}
	if (batched)
		for (int k = 0; k < r - 2; k++) {
			int ja = k - (r - ra), jb = k - (r - rb);
			if (ja >= 0 && ja < ra - 2 && in_shape(c, 0)->dim[ja] == os->dim[k])
				wa.dim[ja] = C.dim[k];
			if (jb >= 0 && jb < rb - 2 && in_shape(c, 1)->dim[jb] == os->dim[k])
				wb.dim[jb] = C.dim[k];
		}
	wa.dim[am] = C.dim[r - 2];
	wa.dim[ak] = (int8_t)K;
	wb.dim[bk] = (int8_t)K;
	wb.dim[bn] = C.dim[r - 1];
	c->want[0] = wa;
	c->want[1] = wb;
	for (int i = 2; i < n->nin; i++) /* gemm's C: added once, to the partial sum of one device */
		c->want[i] = bcast_want(c, i, &C);
	all_results(c, &C);
}

static void rule_conv(RuleCx *c)
{
	Node *n = c->n;
	const Mesh *m = c->p->m;
	int r = in_shape(c, 0)->rank;
	int64_t groups = attr_i(n, "group");
	int64_t cout = in_shape(c, 1)->dim[0];
	Sharding C = sh_whole(), wx = sh_whole(), ww = sh_whole();
	int K = -1;
	if (c->req[0]) {
		C = *c->req[0];
		for (int a = 0; a < m->naxes && groups == 1; a++)
			if (C.partial & (1u << a)) {
				K = a;
				break;
			}
		C.partial = K >= 0 ? (uint8_t)(1u << K) : 0;
		for (int i = 2; i < r; i++)
			C.dim[i] = -1;
		if (groups > 1 && C.dim[1] >= 0 && groups % m->size[C.dim[1]] != 0)
			C.dim[1] = -1;
	} else {
		const Sharding *X = c->free[0] ? NULL : &c->cur[0], *W = c->free[1] ? NULL : &c->cur[1];
		C.dim[0] = X ? X->dim[0] : -1;
		int cin = X ? X->dim[1] : -1, O = W ? W->dim[0] : -1;
		if (groups == 1) {
			if (cin >= 0 && (!W || W->dim[1] == cin) && cin != C.dim[0])
				K = cin;
			if (O >= 0 && (O == K || O == C.dim[0]))
				O = -1;
			if (!W && (c->p->r->split_weights || c->p->g->split_weights || n->split_weights) && K < 0 && O < 0)
				for (int a = 0; a < m->naxes && O < 0; a++)
					if (a != C.dim[0] && divides(m, a, cout))
						O = a;
		} else {
			O = cin >= 0 && groups % m->size[cin] == 0 && divides(m, cin, cout) && (!W || W->dim[0] == cin) ? cin : -1;
		}
		C.dim[1] = (int8_t)O;
		C.partial = K >= 0 ? (uint8_t)(1u << K) : 0;
	}
	wx.dim[0] = C.dim[0];
	wx.dim[1] = groups == 1 ? (int8_t)K : C.dim[1];
	ww.dim[0] = C.dim[1];
	ww.dim[1] = (int8_t)K;
	c->want[0] = wx;
	c->want[1] = ww;
	if (n->nin > 2) {
		Sharding wb = sh_whole();
		wb.dim[0] = C.dim[1];
		wb.partial = C.partial;
		c->want[2] = wb;
	}
	all_results(c, &C);
}

/* pools: batch and channels follow, spatial axes whole; batchnorm
 * (spatial too follows) with its per-channel operands on axis 1. */
static void rule_channels(RuleCx *c, bool spatial)
{
	Node *n = c->n;
	int r = in_shape(c, 0)->rank;
	if (n->nout > 1 || n->op == OP_MAXPOOL_ARGMAX) {
		rule_replicate(c);
		return;
	}
	Sharding C = followed(c);
	for (int i = 2; i < r && !spatial; i++)
		C.dim[i] = -1;
	c->want[0] = C;
	for (int i = 1; i < n->nin; i++) {
		Sharding w = sh_whole();
		w.dim[0] = C.dim[1];
		c->want[i] = w;
	}
	all_results(c, &C);
}

static void rule_layernorm(RuleCx *c)
{
	Node *n = c->n;
	int r = in_shape(c, 0)->rank;
	int64_t ax = attr_i(n, "axis");
	if (ax < 0)
		ax += r;
	Sharding C = followed(c);
	for (int i = (int)ax; i < r; i++)
		if (i >= 0)
			C.dim[i] = -1;
	c->want[0] = C;
	for (int i = 1; i < n->nin; i++)
		c->want[i] = sh_whole();
	all_results(c, &C);
}

/* reshape and its kin: the axes of in and out grouped by equal products;
 * a split axis maps only as the outermost (non-1) axis of its group, onto
 * the group's outermost out axis when the mesh axis divides it. */
static void rule_reshape(RuleCx *c)
{
	const Mesh *m = c->p->m;
	const Shape *I = in_shape(c, 0), *O = out_shape(c, 0);
	if (shape_numel(I) == 0) {
		rule_replicate(c);
		return;
	}
	int gin[MAX_RANK], gout[MAX_RANK]; /* each axis' group */
	int outer_in[MAX_RANK + 1], outer_out[MAX_RANK + 1];
	int ng = 0, i = 0, j = 0;
	while (i < I->rank || j < O->rank) {
		int64_t pi = 1, po = 1;
		outer_in[ng] = outer_out[ng] = -1;
		bool took = false;
		while (!took || pi != po) {
			took = true;
			if ((pi <= po || j >= O->rank) && i < I->rank) {
				if (I->dim[i] > 1 && outer_in[ng] < 0)
					outer_in[ng] = i;
				gin[i] = ng;
				pi *= I->dim[i++];
			} else if (j < O->rank) {
				if (O->dim[j] > 1 && outer_out[ng] < 0)
					outer_out[ng] = j;
				gout[j] = ng;
				po *= O->dim[j++];
			} else {
				break;
			}
		}
		/* size-1 axes that follow belong to this group */
		while (i < I->rank && I->dim[i] == 1 && (j >= O->rank || O->dim[j] != 1))
			gin[i++] = ng;
		while (j < O->rank && O->dim[j] == 1 && (i >= I->rank || I->dim[i] != 1))
			gout[j++] = ng;
		ng++;
	}
	Sharding w = sh_whole(), C = sh_whole();
	if (c->req[0]) {
		C = *c->req[0];
		for (int e = 0; e < O->rank; e++) {
			int a = C.dim[e];
			if (a < 0)
				continue;
			int g = gout[e], d = outer_in[g];
			if (outer_out[g] == e && d >= 0 && divides(m, a, I->dim[d]))
				w.dim[d] = (int8_t)a;
			else
				C.dim[e] = -1; /* fixed up after the node */
		}
		w.partial = C.partial;
	} else {
		Sharding cur = c->free[0] ? sh_whole() : c->cur[0];
		for (int d = 0; d < I->rank; d++) {
			int a = cur.dim[d];
			if (a < 0)
				continue;
			int g = gin[d], e = outer_out[g];
			if (outer_in[g] == d && e >= 0 && divides(m, a, O->dim[e])) {
				w.dim[d] = (int8_t)a;
				C.dim[e] = (int8_t)a;
			}
		}
		w.partial = C.partial = cur.partial;
	}
	c->want[0] = w;
	for (int k = 1; k < c->n->nin; k++)
		c->want[k] = sh_whole();
	all_results(c, &C);
}

static void rule_transpose(RuleCx *c)
{
	int r = in_shape(c, 0)->rank;
	int perm[MAX_RANK];
	transpose_perm(c->n, r, perm);
	Sharding w = sh_whole(), C = sh_whole();
	if (c->req[0]) {
		C = *c->req[0];
		for (int i = 0; i < r; i++)
			w.dim[perm[i]] = C.dim[i];
		w.partial = C.partial;
	} else {
		w = c->free[0] ? sh_whole() : c->cur[0];
		for (int i = 0; i < r; i++)
			C.dim[i] = w.dim[perm[i]];
		C.partial = w.partial;
	}
	c->want[0] = w;
	all_results(c, &C);
}

static void apply_rule(RuleCx *c)
{
	Node *n = c->n;
	switch (op_info[n->op].shard) {
	case SHARD_ELEMENTWISE: rule_elementwise(c, false); break;
	case SHARD_LINEAR: rule_elementwise(c, true); break;
	case SHARD_MATMUL:
		if (in_shape(c, 0)->rank < 2 || in_shape(c, 1)->rank < 2) {
			rule_replicate(c);
			break;
		}
		rule_contract(c, in_shape(c, 0)->rank - 2, in_shape(c, 0)->rank - 1, in_shape(c, 1)->rank - 2,
			      in_shape(c, 1)->rank - 1, true);
		break;
	case SHARD_GEMM: {
		bool ta = attr_i(n, "trans_a") != 0, tb = attr_i(n, "trans_b") != 0;
		rule_contract(c, ta ? 1 : 0, ta ? 0 : 1, tb ? 1 : 0, tb ? 0 : 1, false);
		break;
	}
	case SHARD_CONV: rule_conv(c); break;
	case SHARD_POOL: rule_channels(c, false); break;
	case SHARD_CHANNEL: rule_channels(c, true); break;
	case SHARD_LAYERNORM: rule_layernorm(c); break;
	case SHARD_AXIS: rule_axis(c); break;
	case SHARD_REDUCE: rule_reduce(c); break;
	case SHARD_RESHAPE: rule_reshape(c); break;
	case SHARD_TRANSPOSE: rule_transpose(c); break;
	case SHARD_SOURCE:
	case SHARD_COLLECTIVE:
	case SHARD_REPLICATE: rule_replicate(c); break;
	}
}

static const char *const step_suffix[] = {
	[OP_ALL_REDUCE] = "ar", [OP_ALL_GATHER] = "ag", [OP_REDUCE_SCATTER] = "rs",
	[OP_ALL_TO_ALL] = "a2a", [OP_SHARD_SLICE] = "slice", [OP_SHARD_PARTIAL] = "part",
};

/* v resharded to `want`, as nodes inserted before position pos (shared with
 * an earlier user that needed the same); NULL after an error. */
static Value *reshard(Prop *p, Value *v, const Sharding *want, int pos, Loc loc, bool cached)
{
	int rank = v->type.shape.rank;
	for (int i = 0; cached && i < p->ndone; i++)
		if (p->done[i].from == v && sh_eq(&p->done[i].want, want, rank))
			return p->done[i].to;
	Step st[MAX_STEPS];
	int ns = plan_reshard(p->m, rank, v->shard, want, st);
	Value *cur = v;
	for (int k = 0; k < ns; k++) {
		char *base = xasprintf("%s.%s", v->name, step_suffix[st[k].op]);
		Node *c = graph_insert_node(p->g, pos++, st[k].op, &cur, 1, 1, base, loc);
		free(base);
		if (!c) {
			diag_error(p->d, loc, "internal error: no name for a collective");
			return NULL;
		}
		if (st[k].op == OP_ALL_TO_ALL) {
			node_set_int(c, "split_axis", st[k].axis);
			node_set_int(c, "concat_axis", st[k].axis2);
		} else if (st[k].op != OP_ALL_REDUCE && st[k].op != OP_SHARD_PARTIAL) {
			node_set_int(c, "axis", st[k].axis);
		}
		node_set_string(c, "mesh_axis", p->m->name[st[k].mesh]);
		if (!graph_check_node(p->g, c, p->d))
			return NULL;
		c->out[0]->shard = st[k].after;
		cur = c->out[0];
	}
	if (p->ndone == p->capdone) {
		p->capdone = p->capdone ? 2 * p->capdone : 16;
		p->done = xrealloc(p->done, (size_t)p->capdone * sizeof *p->done);
	}
	p->done[p->ndone++] = (Resharded){v, cur, *want};
	return cur;
}

/* v resharded to `want` by nodes inserted at position pos, right after
 * its definition; the graph's output v becomes the resharded value (under
 * v's name), and, when move_operands, so do v's operand uses (its users
 * come later and need `want`). */
static bool reshard_result(Prop *p, Value *v, const Sharding *want, int pos, Loc loc, bool move_operands)
{
	Graph *g = p->g;
	int before = g->nnodes;
	Value *to = reshard(p, v, want, pos, loc, false); /* a fresh chain: its first node is at pos */
	if (!to)
		return false;
	if (to == v || g->nnodes == before)
		return true;
	Node *head = g->nodes[pos];
	struct Use {
		Node *n;
		int i;
	} *uses = xcalloc((size_t)v->nusers + 1, sizeof *uses);
	int nu = 0;
	for (int k = 0; k < v->nusers; k++) {
		Node *u = v->users[k];
		for (int i = 0; i < u->nin; i++)
			if (u->in[i] == v) {
				bool dup = false;
				for (int q = 0; q < nu; q++)
					dup |= uses[q].n == u && uses[q].i == i;
				if (!dup && nu <= v->nusers)
					uses[nu++] = (struct Use){u, i};
			}
	}
	if (v->is_output)
		graph_replace_uses(g, v, to);
	else
		value_replace_operands(v, to);
	for (int q = 0; q < nu; q++)
		if (!move_operands || uses[q].n == head)
			node_set_operand(uses[q].n, uses[q].i, v);
	free(uses);
	return true;
}

/* A node's work for the pipeline's balance: multiply-adds for matmul,
 * gemm and conv, else the elements it writes. */
static double node_work(const Node *n)
{
	double out = (double)shape_numel(&n->out[0]->type.shape);
	const Shape *a = n->nin > 0 ? &n->in[0]->type.shape : NULL, *b = n->nin > 1 ? &n->in[1]->type.shape : NULL;
	switch (n->op) {
	case OP_MATMUL: return a && a->rank ? out * (double)a->dim[a->rank - 1] : out;
	case OP_GEMM: return a && a->rank == 2 ? out * (double)a->dim[attr_i(n, "trans_a") ? 0 : 1] : out;
	case OP_CONV: return b && b->rank ? out * (double)shape_numel(b) / (double)(b->dim[0] ? b->dim[0] : 1) : out;
	default: return out;
	}
}

void shard_group_nodes(Graph *g, int N, double *work, int *first, int *last)
{
	double total = 0, cum = 0;
	for (int k = 0; k < g->nnodes; k++)
		if (g->nodes[k]->nin > 0)
			total += node_work(g->nodes[k]);
	int prev = 0;
	for (int k = 0; k < N; k++) {
		first[k] = last[k] = -1;
		work[k] = 0;
	}
	for (int k = 0; k < g->nnodes; k++) {
		Node *n = g->nodes[k];
		if (n->nin == 0) {
			n->stage = -1;
			continue;
		}
		double w = node_work(n);
		int s = total > 0 ? (int)((cum + w / 2) * N / total) : 0;
		s = s < prev ? prev : s >= N ? N - 1 : s;
		n->stage = prev = s;
		cum += w;
		work[s] += w / (total > 0 ? total : 1);
		if (first[s] < 0)
			first[s] = k;
		last[s] = k;
	}
}

/* The pipeline: N stages of consecutive nodes, each about 1/N of the
 * work; every value whole; a send_recv where a value (an input: from stage
 * 0) is read on another stage than its own. */
static bool pipeline_partition(Graph *g, ShardReport *r, Diag *d)
{
	int N = (int)g->mesh.size[0];
	for (int k = 0; k < g->nnodes; k++)
		if (op_info[g->nodes[k]->op].shard == SHARD_COLLECTIVE) {
			diag_error(d, g->nodes[k]->loc, "%s: collectives are inserted by the sharding pass, not written in the model",
				   op_info[g->nodes[k]->op].name);
			return false;
		}
	double *work = xcalloc((size_t)N + 1, sizeof *work);
	int *first = xcalloc((size_t)N + 1, sizeof *first), *last = xcalloc((size_t)N + 1, sizeof *last);
	shard_group_nodes(g, N, work, first, last);
	for (int i = 0; i < g->nvalues; i++)
		g->values[i]->shard = sh_whole();
	for (int s = 0; s < N; s++)
		note_to(r, "stage %d: %s%s%s, %.1f%% of the work", s, first[s] >= 0 ? g->nodes[first[s]]->out[0]->name : "no node",
			first[s] >= 0 ? " .. " : "", first[s] >= 0 ? g->nodes[last[s]]->out[0]->name : "", 100 * work[s]);
	free(work), free(first), free(last);
	/* the transfers, one per value and stage that reads it */
	graph_build_uses(g);
	int nn = g->nnodes;
	Node **nodes = xmalloc((size_t)(nn + 1) * sizeof *nodes);
	memcpy(nodes, g->nodes, (size_t)nn * sizeof *nodes);
	struct Sent {
		Value *v, *to;
		int stage;
	} *sent = NULL;
	int nsent = 0;
	bool ok = true;
	for (int k = 0; k < nn && ok; k++) {
		Node *n = nodes[k];
		if (n->nin == 0)
			continue;
		for (int i = 0; i < n->nin && ok; i++) {
			Value *v = n->in[i];
			int from = v->def ? v->def->stage : 0;
			if (from < 0 || from == n->stage)
				continue;
			Value *to = NULL;
			for (int q = 0; q < nsent; q++)
				if (sent[q].v == v && sent[q].stage == n->stage)
					to = sent[q].to;
			if (!to) {
				char *base = xasprintf("%s.to%d", v->name, n->stage);
				Node *c = graph_insert_node(g, graph_node_pos(g, n), OP_SEND_RECV, &v, 1, 1, base, n->loc);
				free(base);
				if (!c) {
					diag_error(d, n->loc, "internal error: no name for a transfer");
					ok = false;
					break;
				}
				node_set_int(c, "from", from);
				node_set_int(c, "to", n->stage);
				node_set_string(c, "mesh_axis", g->mesh.name[0]);
				c->stage = n->stage;
				if (!(ok = graph_check_node(g, c, d)))
					break;
				to = c->out[0];
				to->shard = sh_whole();
				sent = xrealloc(sent, (size_t)(nsent + 1) * sizeof *sent);
				sent[nsent++] = (struct Sent){v, to, n->stage};
			}
			node_set_operand(n, i, to);
		}
	}
	free(sent);
	free(nodes);
	return ok && graph_check_structure(g, d);
}

bool shard_propagate(Graph *g, ShardReport *r, Diag *d)
{
	if (!g->mesh.naxes)
		return true;
	if (g->pipelined)
		return pipeline_partition(g, r, d);
	Prop p = {.g = g, .m = &g->mesh, .r = r, .d = d};
	graph_build_uses(g);
	for (int i = 0; i < g->ninputs; i++)
		if (!g->inputs[i]->shard.set)
			g->inputs[i]->shard = sh_whole();
	/* the nodes as the model has them (inserted collectives are not visited) */
	int nn = g->nnodes;
	Node **nodes = xmalloc((size_t)(nn + 1) * sizeof *nodes);
	memcpy(nodes, g->nodes, (size_t)nn * sizeof *nodes);
	bool ok = true;
	for (int k = 0; k < nn && ok; k++) {
		Node *n = nodes[k];
		if (op_info[n->op].shard == SHARD_COLLECTIVE) {
			diag_error(d, n->loc, "%s: collectives are inserted by the sharding pass, not written in the model",
				   op_info[n->op].name);
			ok = false;
			break;
		}
		if (op_info[n->op].shard == SHARD_SOURCE)
			continue; /* constants: their users decide, unless annotated */
		int nin = n->nin, nout = n->nout;
		RuleCx c = {.p = &p, .n = n};
		c.cur = xcalloc((size_t)nin + 1, sizeof *c.cur);
		c.free = xcalloc((size_t)nin + 1, sizeof *c.free);
		c.want = xcalloc((size_t)nin + 1, sizeof *c.want);
		c.req = xcalloc((size_t)nout + 1, sizeof *c.req);
		c.res = xcalloc((size_t)nout + 1, sizeof *c.res);
		Sharding *ann = xcalloc((size_t)nout + 1, sizeof *ann);
		for (int i = 0; i < nin; i++) {
			Value *v = n->in[i];
			c.free[i] = !v->shard.set;
			c.cur[i] = v->shard.set ? v->shard : sh_whole();
		}
		for (int j = 0; j < nout; j++)
			if (n->out[j]->shard.set) {
				ann[j] = n->out[j]->shard;
				c.req[j] = &ann[j];
			}
		apply_rule(&c);
		for (int i = 0; i < nin && ok; i++) {
			Value *v = n->in[i];
			int rank = v->type.shape.rank;
			if (c.free[i]) {
				v->shard = c.want[i];
				continue;
			}
			if (sh_eq(&v->shard, &c.want[i], rank))
				continue;
			Value *to = reshard(&p, v, &c.want[i], graph_node_pos(g, n), n->loc, true);
			if (!to)
				ok = false;
			else
				node_set_operand(n, i, to);
		}
		for (int j = 0; j < nout && ok; j++) {
			Value *v = n->out[j];
			v->shard = c.res[j];
			if (c.req[j] && !sh_eq(&c.res[j], c.req[j], v->type.shape.rank))
				ok = reshard_result(&p, v, c.req[j], graph_node_pos(g, n) + 1, n->loc, true);
		}
		free(c.cur);
		free(c.free);
		free(c.want);
		free(c.req);
		free(c.res);
		free(ann);
	}
	free(nodes);
	/* constants no user sharded (unused ones) are whole */
	for (int i = 0; i < g->nvalues; i++)
		if (!g->values[i]->shard.set)
			g->values[i]->shard = sh_whole();
	/* outputs: whole, unless annotated (partial sums always resolved) */
	for (int k = 0; k < g->noutputs && ok; k++) {
		Value *v = g->outputs[k];
		bool annotated = false;
		for (int a = 0; a < g->nannots; a++)
			if (strcmp(g->annots[a].value, v->name) == 0)
				annotated = true;
		Sharding want = annotated ? v->shard : sh_whole();
		want.partial = 0;
		if (sh_eq(&v->shard, &want, v->type.shape.rank))
			continue;
		if (!v->def) { /* an input given as an output: whole by the harness */
			continue;
		}
		ok = reshard_result(&p, v, &want, graph_node_pos(g, v->def) + 1, v->loc, false);
	}
	free(p.done);
	return ok && graph_check_structure(g, d);
}

void shard_report_free(ShardReport *r)
{
	free(r->alternatives);
	r->alternatives = NULL;
	for (int i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	free(r->notes);
	r->notes = NULL;
	r->nnotes = 0;
}
