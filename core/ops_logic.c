/* Comparisons, boolean logic, where and cast: the ops that make and take
 * bool tensors (one byte per element, 0 or 1), with numpy broadcasting.
 * Attribute specs, shape/dtype rules and reference kernels. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops.h"
#include "util.h"

const AttrSpec cast_attrs[] = {
	{.name = "to", .kind = ATTR_DTYPE, .required = true},
	{0}};

/* ---- shared ------------------------------------------------------------- */
/* "shape mismatch: operand 1 ('a') is f32[2,3] and operand 2 ('b') is f32[4]:
 * not broadcastable" */
static bool not_broadcastable(InferCtx *cx, int i, int j)
{
	char ti[160], tj[160];
	type_str(operand_type(cx, i), ti, sizeof ti);
	type_str(operand_type(cx, j), tj, sizeof tj);
	return infer_error_at_operand(cx, j, "shape mismatch: operand %d ('%s') is %s and operand %d ('%s') is %s: not broadcastable",
				      i + 1, cx->n->in[i]->name, ti, j + 1, cx->n->in[j]->name, tj);
}

/* The broadcast of every operand's shape into *r. */
static bool broadcast_all(InferCtx *cx, Shape *r)
{
	*r = operand_type(cx, 0)->shape;
	for (int i = 1; i < cx->n->nin; i++) {
		Shape next;
		if (!shape_broadcast(r, &operand_type(cx, i)->shape, &next)) {
			for (int j = 0; j < i; j++)
				if (!shape_broadcast(&operand_type(cx, j)->shape, &operand_type(cx, i)->shape, &next))
					return not_broadcastable(cx, j, i);
			return not_broadcastable(cx, 0, i);
		}
		*r = next;
	}
	return true;
}

/* Walks the result's elements with each operand's broadcast offset. */
typedef struct {
	const Shape *os;
	int nin;
	int64_t st[3][MAX_RANK];
	int64_t idx[MAX_RANK];
	int64_t off[3];
} Walk;

static void walk_init(Walk *w, Tensor *const *in, int nin, const Tensor *out)
{
	w->os = &out->type.shape;
	w->nin = nin;
	for (int i = 0; i < nin; i++)
		broadcast_strides(&in[i]->type.shape, w->os, w->st[i]);
	for (int d = 0; d < MAX_RANK; d++)
		w->idx[d] = 0;
}

static void walk_at(Walk *w)
{
	for (int i = 0; i < w->nin; i++) {
		w->off[i] = 0;
		for (int d = 0; d < w->os->rank; d++)
			w->off[i] += w->idx[d] * w->st[i][d];
	}
}

static uint8_t *bools(const Tensor *t) { return (uint8_t *)t->data; }

/* ---- comparisons: equal, less, less_equal, greater, greater_equal --------- */
/* Two operands of one dtype (bool too for equal), broadcast; the result is
 * bool.  A comparison with NaN is false. */
bool infer_compare(InferCtx *cx)
{
	unsigned mask = cx->n->op == OP_EQUAL ? DTMASK_ANY : DTMASK_NUM;
	if (!require_dtype(cx, 0, mask) || !require_dtype(cx, 1, mask) || !require_same_dtype(cx, 0, 1))
		return false;
	Shape r;
	if (!broadcast_all(cx, &r))
		return false;
	set_result(cx, 0, DT_BOOL, &r);
	return true;
}

static bool compare(const Node *n, Tensor *const *in, Tensor *const *out)
{
	Walk w;
	walk_init(&w, in, 2, out[0]);
	int64_t total = tensor_numel(out[0]);
	bool fl = in[0]->type.dtype == DT_F32;
	for (int64_t i = 0; i < total; i++, index_next(w.os, w.idx)) {
		walk_at(&w);
		int lt, eq, gt; /* a < b, a == b, a > b (all 0 when unordered) */
		if (fl) {
			float a = f32(in[0])[w.off[0]], b = f32(in[1])[w.off[1]];
			lt = a < b;
			eq = a == b;
			gt = a > b;
		} else {
			int64_t a = tensor_get_i(in[0], w.off[0]), b = tensor_get_i(in[1], w.off[1]);
			lt = a < b;
			eq = a == b;
			gt = a > b;
		}
		int r;
		switch (n->op) {
		case OP_EQUAL: r = eq; break;
		case OP_LESS: r = lt; break;
		case OP_LESS_EQUAL: r = lt || eq; break;
		case OP_GREATER: r = gt; break;
		default: r = gt || eq; break;
		}
		bools(out[0])[i] = (uint8_t)r;
	}
	return true;
}

#define COMPARE_KERNEL(name)                                                              \
	bool kernel_##name(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)    \
	{                                                                                    \
		(void)d;                                                                     \
		return compare(n, in, out);                                                       \
	}
COMPARE_KERNEL(equal)
COMPARE_KERNEL(less)
COMPARE_KERNEL(less_equal)
COMPARE_KERNEL(greater)
COMPARE_KERNEL(greater_equal)
#undef COMPARE_KERNEL

/* ---- logic: and, or, xor, not -------------------------------------------- */
bool infer_logic(InferCtx *cx)
{
	for (int i = 0; i < cx->n->nin; i++)
		if (!require_dtype(cx, i, DTMASK(DT_BOOL)))
			return false;
	Shape r;
	if (!broadcast_all(cx, &r))
		return false;
	set_result(cx, 0, DT_BOOL, &r);
	return true;
}

static bool logic(const Node *n, Tensor *const *in, Tensor *const *out)
{
	Walk w;
	walk_init(&w, in, n->nin, out[0]);
	int64_t total = tensor_numel(out[0]);
	for (int64_t i = 0; i < total; i++, index_next(w.os, w.idx)) {
		walk_at(&w);
		int a = bools(in[0])[w.off[0]] != 0, b = n->nin > 1 ? bools(in[1])[w.off[1]] != 0 : 0;
		int r = n->op == OP_AND ? a & b : n->op == OP_OR ? a | b : n->op == OP_XOR ? a ^ b : !a;
		bools(out[0])[i] = (uint8_t)r;
	}
	return true;
}

#define LOGIC_KERNEL(name)                                                              \
	bool kernel_##name(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)    \
	{                                                                                    \
		(void)d;                                                                     \
		return logic(n, in, out);                                                       \
	}
LOGIC_KERNEL(and)
LOGIC_KERNEL(or)
LOGIC_KERNEL(xor)
LOGIC_KERNEL(not)
#undef LOGIC_KERNEL

/* ---- where(cond, x, y) ----------------------------------------------------- */
bool infer_where(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK(DT_BOOL)) || !require_dtype(cx, 1, DTMASK_ANY) ||
	    !require_same_dtype(cx, 1, 2))
		return false;
	Shape r;
	if (!broadcast_all(cx, &r))
		return false;
	set_result(cx, 0, operand_type(cx, 1)->dtype, &r);
	return true;
}

bool kernel_where(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	Walk w;
	walk_init(&w, in, 3, out[0]);
	int64_t total = tensor_numel(out[0]);
	size_t es = dtype_size(out[0]->type.dtype);
	for (int64_t i = 0; i < total; i++, index_next(w.os, w.idx)) {
		walk_at(&w);
		const Tensor *src = bools(in[0])[w.off[0]] ? in[1] : in[2];
		int64_t at = bools(in[0])[w.off[0]] ? w.off[1] : w.off[2];
		memcpy((char *)out[0]->data + (size_t)i * es, (const char *)src->data + (size_t)at * es, es);
	}
	return true;
}

/* ---- cast ------------------------------------------------------------------ */
/* Between f32, i32, i64 and bool.  f32 to an integer truncates toward zero
 * (NaN and values out of the integer's range are undefined in ONNX: here
 * they go through the i64 conversion, saturated, and then wrap to i32);
 * an integer to i32 wraps; anything to bool is != 0 (NaN is true). */
bool infer_cast(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_ANY))
		return false;
	DType to = attr_dt(cx->n, "to");
	if (!(DTMASK(to) & DTMASK_ANY))
		return infer_error_at_attr(cx, "to", "a cast to %s is not supported (f32, i32, i64 and bool are)",
					   dtype_name(to));
	set_result(cx, 0, to, &operand_type(cx, 0)->shape);
	return true;
}

/* f32 to i64 rounded toward 0, saturated; NaN is INT64_MIN (x86's
 * "integer indefinite" value) */
static int64_t f32_to_i64(float v)
{
	if (isnan(v) || v < -9.2233720368547758e18f)
		return INT64_MIN;
	if (v >= 9.2233720368547758e18f)
		return INT64_MAX;
	return (int64_t)v;
}

bool kernel_cast(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	int64_t total = tensor_numel(in[0]);
	DType from = in[0]->type.dtype, to = out[0]->type.dtype;
	for (int64_t i = 0; i < total; i++) {
		if (to == DT_BOOL) {
			bools(out[0])[i] = from == DT_F32 ? f32(in[0])[i] != 0 : tensor_get_i(in[0], i) != 0;
		} else if (to == DT_F32) {
			f32(out[0])[i] = from == DT_F32 ? f32(in[0])[i] : (float)tensor_get_i(in[0], i);
		} else {
			int64_t v = from == DT_F32 ? f32_to_i64(f32(in[0])[i]) : tensor_get_i(in[0], i);
			tensor_set_i(out[0], i, v); /* (i32: wraps) */
		}
	}
	return true;
}

/* ---- mod(a, b): the remainder, broadcasting ----------------------------------
 * Integers: fmod 0 takes the divisor's sign (Python's %), fmod 1 the
 * dividend's (C's %); f32 needs fmod 1 (C's fmodf).  A zero divisor is a
 * run-time error. */
const AttrSpec mod_attrs[] = {
	{.name = "fmod", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
	{0}};

bool infer_mod(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_NUM) || !require_dtype(cx, 1, DTMASK_NUM) || !require_same_dtype(cx, 0, 1))
		return false;
	if (operand_type(cx, 0)->dtype == DT_F32 && !attr_i(cx->n, "fmod"))
		return infer_error_at_attr(cx, "fmod", "mod of f32 needs fmod = 1 (C's fmod), as ONNX says");
	Shape r;
	if (!broadcast_all(cx, &r))
		return false;
	set_result(cx, 0, operand_type(cx, 0)->dtype, &r);
	return true;
}

bool kernel_mod(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	Walk w;
	walk_init(&w, in, 2, out[0]);
	int64_t total = tensor_numel(out[0]);
	bool cmod = attr_i(n, "fmod");
	for (int64_t i = 0; i < total; i++, index_next(w.os, w.idx)) {
		walk_at(&w);
		if (out[0]->type.dtype == DT_F32) {
			f32(out[0])[i] = fmodf(f32(in[0])[w.off[0]], f32(in[1])[w.off[1]]);
			continue;
		}
		int64_t a = tensor_get_i(in[0], w.off[0]), b = tensor_get_i(in[1], w.off[1]);
		if (b == 0)
			return kernel_error(d, n, "integer mod by zero");
		int64_t r = b == -1 ? 0 : a % b; /* (INT64_MIN % -1 overflows in C) */
		if (!cmod && r != 0 && (r < 0) != (b < 0))
			r += b;
		tensor_set_i(out[0], i, r);
	}
	return true;
}
