/* The op table built from ops.def, attribute access with the specs'
 * defaults, and the helpers shared by shape rules and reference kernels. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "util.h"

const OpInfo op_info[OP_COUNT] = {
#define OP(id, nm, mini, maxi, mino, maxo, at, inf, ker, sum, uses, sh) \
	[OP_##id] = {nm, mini, maxi, mino, maxo, at, inf, ker, sum, uses, sh},
#include "ops.def"
#undef OP
};

const AttrSpec no_attrs[] = {{0}};
const AttrSpec collective_attrs[] = {
	{.name = "mesh_axis", .kind = ATTR_STRING, .required = true},
	{0}};
const AttrSpec collective_axis_attrs[] = {
	{.name = "axis", .kind = ATTR_INT, .required = true, .has_range = true, .min = 0, .max = MAX_RANK - 1},
	{.name = "mesh_axis", .kind = ATTR_STRING, .required = true},
	{0}};
const AttrSpec send_recv_attrs[] = {
	{.name = "from", .kind = ATTR_INT, .required = true, .has_range = true, .min = 0, .max = 65535},
	{.name = "to", .kind = ATTR_INT, .required = true, .has_range = true, .min = 0, .max = 65535},
	{.name = "mesh_axis", .kind = ATTR_STRING, .required = true},
	{0}};
const AttrSpec all_to_all_attrs[] = {
	{.name = "split_axis", .kind = ATTR_INT, .required = true, .has_range = true, .min = 0, .max = MAX_RANK - 1},
	{.name = "concat_axis", .kind = ATTR_INT, .required = true, .has_range = true, .min = 0, .max = MAX_RANK - 1},
	{.name = "mesh_axis", .kind = ATTR_STRING, .required = true},
	{0}};

OpKind op_lookup(const char *name, size_t len)
{
	for (int i = 0; i < OP_COUNT; i++)
		if (strlen(op_info[i].name) == len && memcmp(op_info[i].name, name, len) == 0)
			return (OpKind)i;
	return OP_COUNT;
}

const AttrSpec *op_attr_spec(OpKind op, const char *name)
{
	for (const AttrSpec *s = op_info[op].attrs; s->name; s++)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

/* ---- attribute access ------------------------------------------------- */
bool attr_present(const Node *n, const char *name) { return node_attr(n, name) != NULL; }

int64_t attr_i(const Node *n, const char *name)
{
	const Attr *a = node_attr(n, name);
	if (a && a->kind == ATTR_INT)
		return a->i;
	const AttrSpec *s = op_attr_spec(n->op, name);
	return s && s->has_default ? s->def_i : 0;
}

double attr_f(const Node *n, const char *name)
{
	const Attr *a = node_attr(n, name);
	if (a && a->kind == ATTR_FLOAT)
		return a->f;
	if (a && a->kind == ATTR_INT)
		return (double)a->i;
	const AttrSpec *s = op_attr_spec(n->op, name);
	return s && s->has_default ? s->def_f : 0.0;
}

const char *attr_s(const Node *n, const char *name)
{
	const Attr *a = node_attr(n, name);
	if (a && a->kind == ATTR_STRING)
		return a->s;
	const AttrSpec *s = op_attr_spec(n->op, name);
	return s && s->has_default ? s->def_s : NULL;
}

DType attr_dt(const Node *n, const char *name)
{
	const Attr *a = node_attr(n, name);
	if (a && a->kind == ATTR_DTYPE)
		return a->dt;
	const AttrSpec *s = op_attr_spec(n->op, name);
	return s && s->has_default ? s->def_dt : DT_INVALID;
}

int attr_ints(const Node *n, const char *name, const int64_t **v)
{
	const Attr *a = node_attr(n, name);
	if (a && a->kind == ATTR_INTS) {
		*v = a->ints;
		return a->n;
	}
	*v = NULL;
	return -1;
}

int attr_floats(const Node *n, const char *name, const double **v)
{
	const Attr *a = node_attr(n, name);
	if (a && a->kind == ATTR_FLOATS) {
		*v = a->floats;
		return a->n;
	}
	*v = NULL;
	return -1;
}

Loc attr_loc(const Node *n, const char *name)
{
	const Attr *a = node_attr(n, name);
	return a ? a->loc : n->loc;
}

/* ---- shape-rule helpers ----------------------------------------------- */
static bool vreport(InferCtx *cx, Loc loc, const char *fmt, va_list ap)
{
	char *msg = xvasprintf(fmt, ap);
	diag_error(cx->d, loc, "%s: %s", op_info[cx->n->op].name, msg);
	free(msg);
	return false;
}

bool infer_error(InferCtx *cx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(cx, cx->n->loc, fmt, ap);
	va_end(ap);
	return false;
}

bool infer_error_at_operand(InferCtx *cx, int i, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(cx, i < cx->n->nin ? cx->n->in_loc[i] : cx->n->loc, fmt, ap);
	va_end(ap);
	return false;
}

bool infer_error_at_attr(InferCtx *cx, const char *attr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(cx, attr_loc(cx->n, attr), fmt, ap);
	va_end(ap);
	return false;
}

const TensorType *operand_type(InferCtx *cx, int i)
{
	return &cx->n->in[i]->type;
}

void set_result(InferCtx *cx, int i, DType dt, const Shape *s)
{
	Value *v = cx->n->out[i];
	v->type.dtype = dt;
	v->type.shape = *s;
	v->typed = true;
}

static void mask_str(unsigned mask, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = 0;
	for (int t = DT_F32; t < DT_COUNT && k < n; t++)
		if (mask & DTMASK(t))
			k += snprintf(buf + k, n - k, "%s%s", k ? ", " : "", dtype_name((DType)t));
}

bool require_dtype(InferCtx *cx, int i, unsigned mask)
{
	DType t = operand_type(cx, i)->dtype;
	if (mask & DTMASK(t))
		return true;
	char allowed[96];
	mask_str(mask, allowed, sizeof allowed);
	return infer_error_at_operand(cx, i, "dtype mismatch: operand %d ('%s') is %s, expected %s",
				      i + 1, cx->n->in[i]->name, dtype_name(t), allowed);
}

bool require_same_dtype(InferCtx *cx, int i, int j)
{
	DType a = operand_type(cx, i)->dtype, b = operand_type(cx, j)->dtype;
	if (a == b)
		return true;
	return infer_error_at_operand(cx, j,
				      "dtype mismatch: operand %d ('%s') is %s but operand %d ('%s') is %s",
				      i + 1, cx->n->in[i]->name, dtype_name(a), j + 1,
				      cx->n->in[j]->name, dtype_name(b));
}

bool require_rank(InferCtx *cx, int i, int lo, int hi)
{
	const TensorType *t = operand_type(cx, i);
	if (t->shape.rank >= lo && t->shape.rank <= hi)
		return true;
	char ty[160];
	type_str(t, ty, sizeof ty);
	if (lo == hi)
		return infer_error_at_operand(cx, i, "operand %d ('%s') has type %s: expected rank %d",
					      i + 1, cx->n->in[i]->name, ty, lo);
	return infer_error_at_operand(cx, i, "operand %d ('%s') has type %s: expected rank %d to %d",
				      i + 1, cx->n->in[i]->name, ty, lo, hi);
}

bool normalize_axis(InferCtx *cx, const char *attr, int64_t axis, int rank, int *out)
{
	if (axis < -rank || axis >= rank || rank == 0) {
		if (rank == 0)
			return infer_error_at_attr(cx, attr, "attribute '%s' = %lld is out of range: the operand has rank 0",
						   attr, (long long)axis);
		return infer_error_at_attr(cx, attr, "attribute '%s' = %lld is out of range [%d, %d]",
					   attr, (long long)axis, -rank, rank - 1);
	}
	*out = (int)(axis < 0 ? axis + rank : axis);
	return true;
}

/* ---- kernel helpers --------------------------------------------------- */
void broadcast_strides(const Shape *from, const Shape *to, int64_t *strides)
{
	int64_t own[MAX_RANK];
	shape_strides(from, own);
	for (int i = 0; i < to->rank; i++) {
		int j = from->rank - to->rank + i;
		strides[i] = (j < 0 || from->dim[j] == 1) ? 0 : own[j];
	}
}

bool index_next(const Shape *s, int64_t *idx)
{
	for (int i = s->rank - 1; i >= 0; i--) {
		if (++idx[i] < s->dim[i])
			return true;
		idx[i] = 0;
	}
	return false;
}

bool kernel_error(Diag *d, const Node *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	diag_error(d, n->loc, "%s: %s", op_info[n->op].name, msg);
	free(msg);
	return false;
}
