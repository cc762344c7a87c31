/* The devices of a sharded graph simulated in this process (shard.h):
 * every device holds its part of every value (by the value's sharding) and
 * runs each node's reference kernel on its parts, the collectives move
 * data between the devices of a mesh axis' groups.  It checks the
 * partitioning itself: the shardings, the rules and the collectives the
 * propagation chose must give what the whole graph gives. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "ops.h"
#include "shard.h"
#include "util.h"

typedef struct {
	const Mesh *m;
	int64_t ndev;
	int64_t (*coord)[MAX_MESH_AXES]; /* each device's coordinates (axis 0 outermost) */
} Devices;

static int64_t device_of(const Devices *ds, const int64_t *coord)
{
	int64_t r = 0;
	for (int a = 0; a < ds->m->naxes; a++)
		r = r * ds->m->size[a] + coord[a];
	return r;
}

/* Copy the block of src at offset `off` (per axis) of dst's shape into
 * dst (to_dst) or dst into src at off (!to_dst). */
static void copy_block(Tensor *big, const int64_t *off, Tensor *small, bool to_small)
{
	const Shape *bs = &big->type.shape, *ss = &small->type.shape;
	int64_t n = shape_numel(ss);
	if (n == 0)
		return;
	size_t es = dtype_size(big->type.dtype);
	int64_t bstr[MAX_RANK], idx[MAX_RANK] = {0};
	shape_strides(bs, bstr);
	for (int64_t i = 0; i < n; i++) {
		int64_t o = 0;
		for (int k = 0; k < ss->rank; k++)
			o += (idx[k] + off[k]) * bstr[k];
		char *b = (char *)big->data + (size_t)o * es, *s = (char *)small->data + (size_t)i * es;
		if (to_small)
			memcpy(s, b, es);
		else
			memcpy(b, s, es);
		index_next(ss, idx);
	}
}

void shard_coords(const Mesh *m, int64_t rank, int64_t *coord)
{
	for (int a = m->naxes - 1; a >= 0; a--) {
		coord[a] = rank % m->size[a];
		rank /= m->size[a];
	}
}

Tensor *shard_part(const Mesh *m, const Sharding *s, const Tensor *t, int64_t rank)
{
	int64_t c[MAX_MESH_AXES];
	shard_coords(m, rank, c);
	Shape l = shard_local_shape(m, s, &t->type.shape);
	Tensor *p = tensor_new(t->type.dtype, &l);
	for (int a = 0; a < m->naxes; a++)
		if ((s->partial & (1u << a)) && c[a] != 0)
			return p;
	int64_t off[MAX_RANK] = {0};
	for (int k = 0; k < l.rank; k++)
		if (s->dim[k] >= 0)
			off[k] = c[s->dim[k]] * l.dim[k];
	copy_block((Tensor *)t, off, p, true);
	return p;
}

static Tensor *part_of(const Devices *ds, const Sharding *s, const Tensor *t, int64_t r)
{
	return shard_part(ds->m, s, t, r);
}

Tensor *shard_join(const Mesh *m, const Value *v, Tensor *const *parts, Diag *d)
{
	int64_t D = shard_mesh_devices(m);
	Tensor *t = tensor_new(v->type.dtype, &v->type.shape);
	bool ok = true;
	for (int pass = 0; pass < 2 && ok; pass++) /* the first device of each part, then the copies */
		for (int64_t r = 0; r < D && ok; r++) {
			int64_t c[MAX_MESH_AXES];
			shard_coords(m, r, c);
			bool first = true;
			for (int a = 0; a < m->naxes; a++)
				if (c[a] != 0 && !sharding_splits(&v->shard, v->type.shape.rank, a))
					first = false;
			if (first != (pass == 0))
				continue;
			int64_t off[MAX_RANK] = {0};
			Tensor *p = parts[r];
			for (int k = 0; k < p->type.shape.rank; k++)
				if (v->shard.dim[k] >= 0)
					off[k] = c[v->shard.dim[k]] * p->type.shape.dim[k];
			if (pass == 0) {
				copy_block(t, off, p, false);
				continue;
			}
			Tensor *q = tensor_new(p->type.dtype, &p->type.shape);
			copy_block(t, off, q, true);
			if (tensor_bytes(q) && memcmp(q->data, p->data, tensor_bytes(q)) != 0) {
				diag_error(d, v->loc, "output '%s': device %" PRId64 "'s copy differs from the others'", v->name, r);
				ok = false;
			}
			tensor_free(q);
		}
	if (!ok) {
		tensor_free(t);
		return NULL;
	}
	return t;
}

/* The devices of r's group over mesh axis a, in coordinate order. */
static void group_of(const Devices *ds, int64_t r, int a, int64_t *members)
{
	int64_t c[MAX_MESH_AXES];
	memcpy(c, ds->coord[r], sizeof c);
	for (int64_t k = 0; k < ds->m->size[a]; k++) {
		c[a] = k;
		members[k] = device_of(ds, c);
	}
}

static void add_into(Tensor *acc, const Tensor *t)
{
	int64_t n = tensor_numel(acc);
	if (acc->type.dtype == DT_F32)
		for (int64_t i = 0; i < n; i++)
			f32(acc)[i] += f32(t)[i];
	else
		for (int64_t i = 0; i < n; i++)
			tensor_set_i(acc, i, tensor_get_i(acc, i) + tensor_get_i(t, i));
}

/* Parts joined along axis k in group order. */
static Tensor *join(Tensor *const *parts, int64_t n, int k)
{
	Shape s = parts[0]->type.shape;
	int64_t step = s.dim[k];
	s.dim[k] *= n;
	Tensor *t = tensor_new(parts[0]->type.dtype, &s);
	int64_t off[MAX_RANK] = {0};
	for (int64_t i = 0; i < n; i++) {
		off[k] = i * step;
		copy_block(t, off, parts[i], false);
	}
	return t;
}

/* Part i of n of t along axis k. */
static Tensor *cut(const Tensor *t, int64_t n, int k, int64_t i)
{
	Shape s = t->type.shape;
	s.dim[k] /= n;
	Tensor *p = tensor_new(t->type.dtype, &s);
	int64_t off[MAX_RANK] = {0};
	off[k] = i * s.dim[k];
	copy_block((Tensor *)t, off, p, true);
	return p;
}

static void collective(const Devices *ds, const Node *n, Tensor **in, Tensor **out)
{
	int a = shard_mesh_axis(ds->m, attr_s(n, "mesh_axis"));
	int64_t gs = ds->m->size[a];
	int64_t *mem = xcalloc((size_t)gs, sizeof *mem);
	Tensor **parts = xcalloc((size_t)gs, sizeof *parts);
	for (int64_t r = 0; r < ds->ndev; r++) {
		int64_t me = ds->coord[r][a];
		group_of(ds, r, a, mem);
		for (int64_t k = 0; k < gs; k++)
			parts[k] = in[mem[k]];
		Tensor *t = NULL;
		switch (n->op) {
		case OP_ALL_REDUCE:
		case OP_REDUCE_SCATTER:
			t = tensor_new(in[r]->type.dtype, &in[r]->type.shape);
			for (int64_t k = 0; k < gs; k++)
				add_into(t, parts[k]);
			if (n->op == OP_REDUCE_SCATTER) {
				Tensor *c = cut(t, gs, (int)attr_i(n, "axis"), me);
				tensor_free(t);
				t = c;
			}
			break;
		case OP_ALL_GATHER: t = join(parts, gs, (int)attr_i(n, "axis")); break;
		case OP_ALL_TO_ALL: {
			Tensor *j = join(parts, gs, (int)attr_i(n, "concat_axis"));
			t = cut(j, gs, (int)attr_i(n, "split_axis"), me);
			tensor_free(j);
			break;
		}
		case OP_SHARD_SLICE: t = cut(in[r], gs, (int)attr_i(n, "axis"), me); break;
		default: /* OP_SHARD_PARTIAL */
			t = tensor_new(in[r]->type.dtype, &in[r]->type.shape);
			if (me == 0 && tensor_bytes(t))
				memcpy(t->data, in[r]->data, tensor_bytes(t));
			break;
		}
		out[r] = t;
	}
	free(mem);
	free(parts);
}

bool shard_simulate(const Graph *g, Tensor *const *inputs, Tensor **outputs, Diag *d)
{
	const Mesh *m = &g->mesh;
	Devices ds = {m, shard_mesh_devices(m), NULL};
	ds.coord = xcalloc((size_t)ds.ndev, sizeof *ds.coord);
	for (int64_t r = 0; r < ds.ndev; r++)
		shard_coords(m, r, ds.coord[r]);
	int64_t D = ds.ndev;
	Tensor ***val = xcalloc((size_t)g->nvalues, sizeof *val); /* [value][device] */
	bool ok = true;
	for (int i = 0; i < g->ninputs; i++) {
		const Value *v = g->inputs[i];
		val[v->id] = xcalloc((size_t)D, sizeof **val);
		for (int64_t r = 0; r < D; r++)
			val[v->id][r] = part_of(&ds, &v->shard, inputs[i], r);
	}
	for (int i = 0; ok && i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		for (int k = 0; k < n->nout; k++)
			val[n->out[k]->id] = xcalloc((size_t)D, sizeof **val);
		if (n->nin == 0) { /* constants and the like: the whole value, then each part */
			Tensor *out[n->nout > 0 ? n->nout : 1];
			for (int k = 0; k < n->nout; k++)
				out[k] = tensor_new(n->out[k]->type.dtype, &n->out[k]->type.shape);
			ok = op_info[n->op].kernel(n, NULL, out, d);
			for (int k = 0; k < n->nout; k++) {
				for (int64_t r = 0; ok && r < D; r++)
					val[n->out[k]->id][r] = part_of(&ds, &n->out[k]->shard, out[k], r);
				tensor_free(out[k]);
			}
			continue;
		}
		if (n->op == OP_SEND_RECV) { /* the receiver gets the sender's copy */
			Tensor *x = val[n->in[0]->id][attr_i(n, "from")];
			Tensor *c = tensor_new(x->type.dtype, &x->type.shape);
			if (tensor_bytes(x))
				memcpy(c->data, x->data, tensor_bytes(x));
			val[n->out[0]->id][attr_i(n, "to")] = c;
			continue;
		}
		if (op_info[n->op].shard == SHARD_COLLECTIVE) {
			collective(&ds, n, val[n->in[0]->id], val[n->out[0]->id]);
			continue;
		}
		/* a grouped conv whose channels are split holds group / parts groups */
		Node local = *n;
		Attr *attrs = NULL;
		if (n->op == OP_CONV && attr_i(n, "group") > 1 && n->in[0]->shard.dim[1] >= 0) {
			attrs = xcalloc((size_t)n->nattrs + 1, sizeof *attrs);
			memcpy(attrs, n->attrs, (size_t)n->nattrs * sizeof *attrs);
			for (int k = 0; k < n->nattrs; k++)
				if (strcmp(attrs[k].name, "group") == 0)
					attrs[k].i /= m->size[n->in[0]->shard.dim[1]];
			local.attrs = attrs;
		}
		for (int64_t r = 0; ok && r < D; r++) {
			if (g->pipelined && n->stage != r)
				continue; /* another stage's node */
			Tensor *in[n->nin];
			Tensor *out[n->nout > 0 ? n->nout : 1];
			for (int k = 0; k < n->nin; k++)
				in[k] = val[n->in[k]->id][r];
			for (int k = 0; k < n->nout; k++) {
				Shape l = shard_local_shape(m, &n->out[k]->shard, &n->out[k]->type.shape);
				out[k] = val[n->out[k]->id][r] = tensor_new(n->out[k]->type.dtype, &l);
			}
			ok = op_info[n->op].kernel(&local, in, out, d);
		}
		free(attrs);
	}
	/* outputs: whole (every device's copy the same) or joined from the parts */
	for (int i = 0; ok && i < g->noutputs; i++) {
		const Value *v = g->outputs[i];
		if (g->pipelined) { /* on the stage that computed it */
			Tensor *x = val[v->id][v->def && v->def->stage > 0 ? v->def->stage : 0];
			outputs[i] = tensor_new(x->type.dtype, &x->type.shape);
			if (tensor_bytes(x))
				memcpy(outputs[i]->data, x->data, tensor_bytes(x));
			continue;
		}
		ok = (outputs[i] = shard_join(m, v, val[v->id], d)) != NULL;
	}
	for (int i = 0; i < g->nvalues; i++) {
		if (!val[i])
			continue;
		for (int64_t r = 0; r < D; r++)
			tensor_free(val[i][r]);
		free(val[i]);
	}
	free(val);
	free(ds.coord);
	return ok;
}
