/* Elementwise, normalizing, reducing and linear-algebra ops: attribute
 * specs, shape/dtype rules and reference kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "util.h"

const AttrSpec leaky_relu_attrs[] = {
	{.name = "alpha", .kind = ATTR_FLOAT, .has_default = true, .def_f = 0.01},
	{0}};
const AttrSpec gelu_attrs[] = {
	{.name = "approximate", .kind = ATTR_STRING, .has_default = true, .def_s = "none", .choices = "none|tanh"},
	{0}};
/* Absent min/max: unbounded on that side. */
const AttrSpec clip_attrs[] = {
	{.name = "min", .kind = ATTR_FLOAT},
	{.name = "max", .kind = ATTR_FLOAT},
	{0}};
const AttrSpec hardsigmoid_attrs[] = {
	{.name = "alpha", .kind = ATTR_FLOAT, .has_default = true, .def_f = 0.2},
	{.name = "beta", .kind = ATTR_FLOAT, .has_default = true, .def_f = 0.5},
	{0}};
const AttrSpec dropout_attrs[] = {
	{.name = "ratio", .kind = ATTR_FLOAT, .has_default = true, .def_f = 0.5, .has_frange = true, .fmin = 0, .fmax = 1},
	{.name = "training_mode", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 0},
	{.name = "seed", .kind = ATTR_INT},
	{0}};
const AttrSpec softmax_attrs[] = {
	{.name = "axis", .kind = ATTR_INT, .has_default = true, .def_i = -1},
	{0}};
/* Absent axes: all axes (unless noop_with_empty_axes). */
const AttrSpec reduce_attrs[] = {
	{.name = "axes", .kind = ATTR_INTS},
	{.name = "keepdims", .kind = ATTR_INT, .has_default = true, .def_i = 1, .has_range = true, .min = 0, .max = 1},
	{.name = "noop_with_empty_axes", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
	{0}};
const AttrSpec gemm_attrs[] = {
	{.name = "alpha", .kind = ATTR_FLOAT, .has_default = true, .def_f = 1.0},
	{.name = "beta", .kind = ATTR_FLOAT, .has_default = true, .def_f = 1.0},
	{.name = "trans_a", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
	{.name = "trans_b", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
	{0}};

/* ======================================================================
 * Shared helpers
 * ====================================================================== */

/* Offset of a multi-index under (possibly broadcast, 0-stride) strides. */
static int64_t bc_off(const int64_t *idx, const int64_t *st, int rank)
{
	int64_t off = 0;
	for (int i = 0; i < rank; i++)
		off += idx[i] * st[i];
	return off;
}

/* Store an integer result, wrapping to the tensor's width (i32 or i64). */
static void store_i(Tensor *t, int64_t i, int64_t v)
{
	if (t->type.dtype == DT_I32)
		((int32_t *)t->data)[i] = (int32_t)(uint32_t)(uint64_t)v;
	else
		((int64_t *)t->data)[i] = v;
}

/* Two's-complement wrapping arithmetic on int64 (no signed overflow). */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t wrap_neg(int64_t a) { return (int64_t)(0u - (uint64_t)a); }

/* "shape mismatch: operand 1 ('a') is f32[2,3] and operand 2 ('b') is
 * f32[4]: <why>", reported at operand j. */
static bool shape_mismatch(InferCtx *cx, int i, int j, const char *why)
{
	char ti[160], tj[160];
	type_str(operand_type(cx, i), ti, sizeof ti);
	type_str(operand_type(cx, j), tj, sizeof tj);
	return infer_error_at_operand(cx, j, "shape mismatch: operand %d ('%s') is %s and operand %d ('%s') is %s: %s",
				      i + 1, cx->n->in[i]->name, ti, j + 1, cx->n->in[j]->name, tj, why);
}

/* ======================================================================
 * Binary arithmetic: add sub mul div
 * ====================================================================== */

bool infer_binary(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_NUM) || !require_dtype(cx, 1, DTMASK_NUM) || !require_same_dtype(cx, 0, 1))
		return false;
	Shape r;
	if (!shape_broadcast(&operand_type(cx, 0)->shape, &operand_type(cx, 1)->shape, &r))
		return shape_mismatch(cx, 0, 1, "not broadcastable");
	set_result(cx, 0, operand_type(cx, 0)->dtype, &r);
	return true;
}

enum { B_ADD, B_SUB, B_MUL, B_DIV };

static double fbin(int op, double a, double b)
{
	switch (op) {
	case B_ADD: return a + b;
	case B_SUB: return a - b;
	case B_MUL: return a * b;
	default: return a / b;
	}
}

/* Integer a op b, wrapping on overflow; false on division by zero.
 * Division truncates toward zero; INT_MIN / -1 wraps to INT_MIN. */
static bool ibin(int op, int64_t a, int64_t b, int64_t *r)
{
	switch (op) {
	case B_ADD: *r = wrap_add(a, b); return true;
	case B_SUB: *r = wrap_sub(a, b); return true;
	case B_MUL: *r = wrap_mul(a, b); return true;
	default:
		if (b == 0)
			return false;
		*r = b == -1 ? wrap_neg(a) : a / b;
		return true;
	}
}

static bool binary_kernel(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d, int op)
{
	const Shape *os = &out[0]->type.shape;
	int64_t sa[MAX_RANK], sb[MAX_RANK], idx[MAX_RANK] = {0};
	broadcast_strides(&in[0]->type.shape, os, sa);
	broadcast_strides(&in[1]->type.shape, os, sb);
	int64_t total = shape_numel(os);
	bool is_float = out[0]->type.dtype == DT_F32;
	for (int64_t i = 0; i < total; i++, index_next(os, idx)) {
		int64_t ia = bc_off(idx, sa, os->rank), ib = bc_off(idx, sb, os->rank);
		if (is_float) {
			f32(out[0])[i] = (float)fbin(op, tensor_get_f(in[0], ia), tensor_get_f(in[1], ib));
		} else {
			int64_t r;
			if (!ibin(op, tensor_get_i(in[0], ia), tensor_get_i(in[1], ib), &r))
				return kernel_error(d, n, "integer division by zero (element %lld of the divisor)",
						    (long long)ib);
			store_i(out[0], i, r);
		}
	}
	return true;
}

bool kernel_add(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	return binary_kernel(n, in, out, d, B_ADD);
}

bool kernel_sub(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	return binary_kernel(n, in, out, d, B_SUB);
}

bool kernel_mul(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	return binary_kernel(n, in, out, d, B_MUL);
}

bool kernel_div(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	return binary_kernel(n, in, out, d, B_DIV);
}

/* ======================================================================
 * pow: f32 base, f32 / i32 / i64 exponent; result has the base's dtype
 * ====================================================================== */

/* An f32 base takes any exponent; an integer base an integer one (the
 * importer rewrites an integer base with an f32 exponent). */
bool infer_pow(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_NUM) || !require_dtype(cx, 1, DTMASK_NUM))
		return false;
	if (operand_type(cx, 0)->dtype != DT_F32 && !require_dtype(cx, 1, DTMASK_INDEX))
		return false;
	Shape r;
	if (!shape_broadcast(&operand_type(cx, 0)->shape, &operand_type(cx, 1)->shape, &r))
		return shape_mismatch(cx, 0, 1, "not broadcastable");
	set_result(cx, 0, operand_type(cx, 0)->dtype, &r);
	return true;
}

bool kernel_pow(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	const Shape *os = &out[0]->type.shape;
	int64_t sa[MAX_RANK], sb[MAX_RANK], idx[MAX_RANK] = {0};
	broadcast_strides(&in[0]->type.shape, os, sa);
	broadcast_strides(&in[1]->type.shape, os, sb);
	int64_t total = shape_numel(os);
	bool int_exp = in[1]->type.dtype != DT_F32;
	if (out[0]->type.dtype != DT_F32) { /* integers: exact, wrapping */
		for (int64_t i = 0; i < total; i++, index_next(os, idx)) {
			int64_t a = tensor_get_i(in[0], bc_off(idx, sa, os->rank)), e = tensor_get_i(in[1], bc_off(idx, sb, os->rank));
			uint64_t r = 1, b = (uint64_t)a;
			if (e < 0) {
				r = a == 1 ? 1 : a == -1 ? (e & 1 ? (uint64_t)-1 : 1) : 0;
			} else {
				for (uint64_t u = (uint64_t)e; u; u >>= 1, b *= b)
					if (u & 1)
						r *= b;
			}
			tensor_set_i(out[0], i, (int64_t)r);
		}
		return true;
	}
	for (int64_t i = 0; i < total; i++, index_next(os, idx)) {
		double a = tensor_get_f(in[0], bc_off(idx, sa, os->rank));
		int64_t ib = bc_off(idx, sb, os->rank);
		double r;
		if (int_exp) {
			/* The exponent's parity taken from the integer itself
			 * (exact even where the i64 does not fit a double). */
			int64_t e = tensor_get_i(in[1], ib);
			r = pow(fabs(a), (double)e);
			if (signbit(a) && e % 2 != 0)
				r = -r;
		} else {
			r = pow(a, tensor_get_f(in[1], ib));
		}
		f32(out[0])[i] = (float)r;
	}
	return true;
}

/* ======================================================================
 * Variadic max / min / sum
 * ====================================================================== */

bool infer_variadic(InferCtx *cx)
{
	int nin = cx->n->nin;
	for (int i = 0; i < nin; i++)
		if (!require_dtype(cx, i, DTMASK_NUM))
			return false;
	for (int i = 1; i < nin; i++)
		if (!require_same_dtype(cx, 0, i))
			return false;
	Shape r = operand_type(cx, 0)->shape;
	for (int i = 1; i < nin; i++) {
		Shape next;
		if (shape_broadcast(&r, &operand_type(cx, i)->shape, &next)) {
			r = next;
			continue;
		}
		/* Some earlier operand conflicts with this one on its own:
		 * pairwise compatibility of all operands implies joint. */
		for (int j = 0; j < i; j++)
			if (!shape_broadcast(&operand_type(cx, j)->shape, &operand_type(cx, i)->shape, &next))
				return shape_mismatch(cx, j, i, "not broadcastable");
		return shape_mismatch(cx, 0, i, "not broadcastable");
	}
	set_result(cx, 0, operand_type(cx, 0)->dtype, &r);
	return true;
}

enum { V_MAX, V_MIN, V_SUM };

static bool variadic_kernel(const Node *n, Tensor *const *in, Tensor *const *out, int op)
{
	const Shape *os = &out[0]->type.shape;
	int nin = n->nin;
	int64_t(*st)[MAX_RANK] = xcalloc((size_t)nin, sizeof *st);
	for (int k = 0; k < nin; k++)
		broadcast_strides(&in[k]->type.shape, os, st[k]);
	int64_t idx[MAX_RANK] = {0};
	int64_t total = shape_numel(os);
	bool is_float = out[0]->type.dtype == DT_F32;
	for (int64_t i = 0; i < total; i++, index_next(os, idx)) {
		if (is_float) {
			double acc = tensor_get_f(in[0], bc_off(idx, st[0], os->rank));
			for (int k = 1; k < nin; k++) {
				double v = tensor_get_f(in[k], bc_off(idx, st[k], os->rank));
				if (op == V_SUM)
					acc += v;
				else if (isnan(acc) || isnan(v))
					acc = NAN; /* NaN propagates, as numpy's maximum */
				else if (op == V_MAX ? v > acc : v < acc)
					acc = v;
			}
			f32(out[0])[i] = (float)acc;
		} else {
			int64_t acc = tensor_get_i(in[0], bc_off(idx, st[0], os->rank));
			for (int k = 1; k < nin; k++) {
				int64_t v = tensor_get_i(in[k], bc_off(idx, st[k], os->rank));
				if (op == V_SUM)
					acc = wrap_add(acc, v);
				else if (op == V_MAX ? v > acc : v < acc)
					acc = v;
			}
			store_i(out[0], i, acc);
		}
	}
	free(st);
	return true;
}

bool kernel_max(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	return variadic_kernel(n, in, out, V_MAX);
}

bool kernel_min(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	return variadic_kernel(n, in, out, V_MIN);
}

bool kernel_sum(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	return variadic_kernel(n, in, out, V_SUM);
}

/* ======================================================================
 * Unary ops
 * ====================================================================== */

bool infer_unary_num(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_NUM))
		return false;
	set_result(cx, 0, operand_type(cx, 0)->dtype, &operand_type(cx, 0)->shape);
	return true;
}

bool kernel_neg(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	int64_t total = tensor_numel(in[0]);
	for (int64_t i = 0; i < total; i++) {
		if (in[0]->type.dtype == DT_F32)
			f32(out[0])[i] = -f32(in[0])[i];
		else
			store_i(out[0], i, wrap_neg(tensor_get_i(in[0], i)));
	}
	return true;
}

bool kernel_abs(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	int64_t total = tensor_numel(in[0]);
	for (int64_t i = 0; i < total; i++) {
		if (in[0]->type.dtype == DT_F32) {
			f32(out[0])[i] = fabsf(f32(in[0])[i]);
		} else {
			int64_t v = tensor_get_i(in[0], i);
			store_i(out[0], i, v < 0 ? wrap_neg(v) : v); /* INT_MIN stays INT_MIN */
		}
	}
	return true;
}

bool infer_unary_float(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_FLOAT))
		return false;
	set_result(cx, 0, operand_type(cx, 0)->dtype, &operand_type(cx, 0)->shape);
	return true;
}

/* Apply f elementwise, computing in double; p holds attribute values. */
typedef double (*UnaryFn)(double x, const double *p);

static bool map_f32(Tensor *const *in, Tensor *const *out, UnaryFn f, const double *p)
{
	int64_t total = tensor_numel(in[0]);
	const float *x = f32(in[0]);
	float *y = f32(out[0]);
	for (int64_t i = 0; i < total; i++)
		y[i] = (float)f((double)x[i], p);
	return true;
}

static double u_exp(double x, const double *p) { (void)p; return exp(x); }
static double u_log(double x, const double *p) { (void)p; return log(x); }
static double u_sqrt(double x, const double *p) { (void)p; return sqrt(x); }
static double u_reciprocal(double x, const double *p) { (void)p; return 1.0 / x; }
/* Written so that NaN passes through. */
static double u_relu(double x, const double *p) { (void)p; return x < 0 ? 0.0 : x; }
static double u_leaky_relu(double x, const double *p) { return x < 0 ? p[0] * x : x; }
static double u_tanh(double x, const double *p) { (void)p; return tanh(x); }
static double u_erf(double x, const double *p) { (void)p; return erf(x); }

/* Never forms exp of a large positive number. */
static double u_sigmoid(double x, const double *p)
{
	(void)p;
	if (x >= 0)
		return 1.0 / (1.0 + exp(-x));
	double e = exp(x);
	return e / (1.0 + e);
}

/* p[0] = 1 for the tanh approximation, 0 for the exact form. */
static double u_gelu(double x, const double *p)
{
	if (p[0] != 0) {
		const double c = 0.79788456080286535588; /* sqrt(2 / pi) */
		return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
	}
	return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

/* max(0, min(1, alpha * x + beta)); NaN passes through. */
static double u_hardsigmoid(double x, const double *p)
{
	double v = p[0] * x + p[1];
	return v < 0 ? 0.0 : v > 1 ? 1.0 : v;
}

/* x * max(0, min(1, x / 6 + 1 / 2)); x / 6 (not x * (1/6)) keeps the
 * corners -3 and 3 exact. */
static double u_hardswish(double x, const double *p)
{
	(void)p;
	double v = x / 6.0 + 0.5;
	return x * (v < 0 ? 0.0 : v > 1 ? 1.0 : v);
}

bool kernel_exp(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	return map_f32(in, out, u_exp, NULL);
}

bool kernel_log(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	return map_f32(in, out, u_log, NULL);
}

bool kernel_sqrt(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	return map_f32(in, out, u_sqrt, NULL);
}

bool kernel_reciprocal(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	return map_f32(in, out, u_reciprocal, NULL);
}

bool kernel_relu(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	return map_f32(in, out, u_relu, NULL);
}

bool kernel_leaky_relu(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const double p[1] = {attr_f(n, "alpha")};
	return map_f32(in, out, u_leaky_relu, p);
}

bool kernel_sigmoid(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	return map_f32(in, out, u_sigmoid, NULL);
}

bool kernel_tanh(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	return map_f32(in, out, u_tanh, NULL);
}

bool kernel_erf(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	return map_f32(in, out, u_erf, NULL);
}

bool kernel_gelu(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const char *mode = attr_s(n, "approximate");
	const double p[1] = {mode && strcmp(mode, "tanh") == 0 ? 1.0 : 0.0};
	return map_f32(in, out, u_gelu, p);
}

bool kernel_hardsigmoid(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const double p[2] = {attr_f(n, "alpha"), attr_f(n, "beta")};
	return map_f32(in, out, u_hardsigmoid, p);
}

bool kernel_hardswish(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	return map_f32(in, out, u_hardswish, NULL);
}

/* ======================================================================
 * clip: y = min(max(x, min), max); an absent bound is no bound.  As in
 * ONNX, min > max gives max everywhere.
 * ====================================================================== */

bool infer_clip(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_NUM))
		return false;
	set_result(cx, 0, operand_type(cx, 0)->dtype, &operand_type(cx, 0)->shape);
	return true;
}

/* A float bound as an integer bound within [lo, hi]: ceil for a lower
 * bound, floor for an upper one, saturating (no out-of-range conversion). */
static int64_t int_bound(double v, bool lower, int64_t lo, int64_t hi)
{
	v = lower ? ceil(v) : floor(v);
	if (v <= (double)lo)
		return lo;
	if (v >= (double)hi)
		return hi;
	return (int64_t)v;
}

bool kernel_clip(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	/* A NaN bound compares false with everything: treat as absent. */
	bool has_min = attr_present(n, "min") && !isnan(attr_f(n, "min"));
	bool has_max = attr_present(n, "max") && !isnan(attr_f(n, "max"));
	double mn = attr_f(n, "min"), mx = attr_f(n, "max");
	int64_t total = tensor_numel(in[0]);
	DType dt = in[0]->type.dtype;
	if (dt == DT_F32) {
		for (int64_t i = 0; i < total; i++) {
			double v = f32(in[0])[i];
			if (has_min && v < mn)
				v = mn;
			if (has_max && v > mx)
				v = mx;
			f32(out[0])[i] = (float)v;
		}
		return true;
	}
	int64_t tlo = dt == DT_I32 ? INT32_MIN : INT64_MIN, thi = dt == DT_I32 ? INT32_MAX : INT64_MAX;
	int64_t lo = has_min ? int_bound(mn, true, tlo, thi) : tlo;
	int64_t hi = has_max ? int_bound(mx, false, tlo, thi) : thi;
	for (int64_t i = 0; i < total; i++) {
		int64_t v = tensor_get_i(in[0], i);
		if (v < lo)
			v = lo;
		if (v > hi)
			v = hi;
		store_i(out[0], i, v);
	}
	return true;
}

/* ======================================================================
 * identity, dropout (inference)
 * ====================================================================== */

bool infer_identity(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_ANY))
		return false;
	set_result(cx, 0, operand_type(cx, 0)->dtype, &operand_type(cx, 0)->shape);
	return true;
}

bool kernel_identity(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	if (tensor_bytes(in[0]))
		memcpy(out[0]->data, in[0]->data, tensor_bytes(in[0]));
	return true;
}

bool infer_dropout(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_FLOAT))
		return false;
	const Shape *s = &operand_type(cx, 0)->shape;
	set_result(cx, 0, operand_type(cx, 0)->dtype, s);
	if (cx->n->nout > 1)
		set_result(cx, 1, DT_BOOL, s);
	return true;
}

bool kernel_dropout(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	if (tensor_bytes(in[0]))
		memcpy(out[0]->data, in[0]->data, tensor_bytes(in[0]));
	if (n->nout > 1) {
		uint8_t *mask = out[1]->data;
		for (int64_t i = 0; i < tensor_numel(out[1]); i++)
			mask[i] = 1;
	}
	return true;
}

/* ======================================================================
 * softmax / logsoftmax along one axis (opset 13)
 * ====================================================================== */

bool infer_softmax(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_FLOAT))
		return false;
	const Shape *s = &operand_type(cx, 0)->shape;
	int axis;
	if (!normalize_axis(cx, "axis", attr_i(cx->n, "axis"), s->rank, &axis))
		return false;
	set_result(cx, 0, operand_type(cx, 0)->dtype, s);
	return true;
}

/* View the shape as [outer, len, inner] around the axis. */
static void split_at_axis(const Shape *s, int axis, int64_t *outer, int64_t *len, int64_t *inner)
{
	*outer = 1;
	*inner = 1;
	for (int i = 0; i < axis; i++)
		*outer *= s->dim[i];
	for (int i = axis + 1; i < s->rank; i++)
		*inner *= s->dim[i];
	*len = s->dim[axis];
}

static bool softmax_kernel(const Node *n, Tensor *const *in, Tensor *const *out, bool logsm)
{
	const Shape *s = &in[0]->type.shape;
	int64_t a = attr_i(n, "axis");
	int axis = (int)(a < 0 ? a + s->rank : a);
	int64_t outer, len, inner;
	split_at_axis(s, axis, &outer, &len, &inner);
	const float *x = f32(in[0]);
	float *y = f32(out[0]);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			int64_t base = o * len * inner + i;
			double m = -INFINITY;
			for (int64_t k = 0; k < len; k++)
				if (x[base + k * inner] > m)
					m = x[base + k * inner];
			double sum = 0;
			for (int64_t k = 0; k < len; k++)
				sum += exp((double)x[base + k * inner] - m);
			for (int64_t k = 0; k < len; k++) {
				double v = (double)x[base + k * inner] - m;
				y[base + k * inner] = (float)(logsm ? v - log(sum) : exp(v) / sum);
			}
		}
	return true;
}

bool kernel_softmax(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	return softmax_kernel(n, in, out, false);
}

bool kernel_logsoftmax(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	return softmax_kernel(n, in, out, true);
}

/* ======================================================================
 * reduce_mean
 * ====================================================================== */

/* Which axes a reduce node reduces (the node verified); returns false when
 * it is the identity (no axes and noop_with_empty_axes). */
static bool reduced_axes(const Node *n, int rank, bool *red)
{
	const int64_t *axes;
	int na = attr_ints(n, "axes", &axes);
	for (int i = 0; i < rank; i++)
		red[i] = na <= 0;
	if (na <= 0)
		return !attr_i(n, "noop_with_empty_axes");
	for (int k = 0; k < na; k++)
		red[axes[k] < 0 ? axes[k] + rank : axes[k]] = true;
	return true;
}

bool infer_reduce(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_FLOAT))
		return false;
	const Shape *s = &operand_type(cx, 0)->shape;
	const int64_t *axes;
	int na = attr_ints(cx->n, "axes", &axes);
	bool seen[MAX_RANK] = {false};
	for (int k = 0; k < na; k++) {
		int ax;
		if (!normalize_axis(cx, "axes", axes[k], s->rank, &ax))
			return false;
		if (seen[ax])
			return infer_error_at_attr(cx, "axes", "attribute 'axes' lists axis %d more than once", ax);
		seen[ax] = true;
	}
	bool red[MAX_RANK];
	if (!reduced_axes(cx->n, s->rank, red)) {
		set_result(cx, 0, operand_type(cx, 0)->dtype, s);
		return true;
	}
	bool keep = attr_i(cx->n, "keepdims") != 0;
	Shape r = {.rank = 0};
	for (int i = 0; i < s->rank; i++) {
		if (!red[i])
			r.dim[r.rank++] = s->dim[i];
		else if (keep)
			r.dim[r.rank++] = 1;
	}
	set_result(cx, 0, operand_type(cx, 0)->dtype, &r);
	return true;
}

/* The reductions over axes: per result element, the accumulation of
 * pre(x) from init by acc, then post (count: the elements reduced; an
 * empty reduction gives init through post: 0, -inf, +inf, 1, mean NaN).
 * In double; log_sum_exp takes the max out first (exp of large values
 * does not overflow). */
static bool reduce_kernel(const Node *n, Tensor *const *in, Tensor *const *out)
{
	const Shape *s = &in[0]->type.shape;
	bool red[MAX_RANK];
	if (!reduced_axes(n, s->rank, red)) {
		if (tensor_bytes(in[0]))
			memcpy(out[0]->data, in[0]->data, tensor_bytes(in[0]));
		return true;
	}
	/* The result laid out as the keepdims shape: reduced axes size 1. */
	Shape ks = *s;
	int64_t count = 1;
	for (int i = 0; i < s->rank; i++)
		if (red[i]) {
			count *= s->dim[i];
			ks.dim[i] = 1;
		}
	int64_t kst[MAX_RANK];
	broadcast_strides(&ks, s, kst); /* 0 on reduced axes */
	int64_t nout = tensor_numel(out[0]), total = tensor_numel(in[0]);
	size_t na = nout > 0 ? (size_t)nout : 1;
	double *acc = xmalloc(na * sizeof *acc), *mx = NULL;
	const float *x = f32(in[0]);
	OpKind op = n->op;
	double init = op == OP_REDUCE_MAX ? -INFINITY : op == OP_REDUCE_MIN ? INFINITY : op == OP_REDUCE_PROD ? 1.0 : 0.0;
	for (size_t j = 0; j < na; j++)
		acc[j] = init;
	int64_t idx[MAX_RANK] = {0};
	if (op == OP_REDUCE_LOG_SUM_EXP) {
		mx = xmalloc(na * sizeof *mx);
		for (size_t j = 0; j < na; j++)
			mx[j] = -INFINITY;
		for (int64_t i = 0; i < total; i++, index_next(s, idx)) {
			int64_t o = bc_off(idx, kst, s->rank);
			mx[o] = x[i] > mx[o] ? x[i] : mx[o];
		}
		memset(idx, 0, sizeof idx);
	}
	for (int64_t i = 0; i < total; i++, index_next(s, idx)) {
		int64_t o = bc_off(idx, kst, s->rank);
		double v = x[i];
		switch (op) {
		case OP_REDUCE_MAX: acc[o] = v > acc[o] || isnan(v) ? v : acc[o]; break;
		case OP_REDUCE_MIN: acc[o] = v < acc[o] || isnan(v) ? v : acc[o]; break;
		case OP_REDUCE_PROD: acc[o] *= v; break;
		case OP_REDUCE_L1: acc[o] += fabs(v); break;
		case OP_REDUCE_L2: case OP_REDUCE_SUM_SQUARE: acc[o] += v * v; break;
		case OP_REDUCE_LOG_SUM_EXP: acc[o] += isinf(mx[o]) ? exp(v) : exp(v - mx[o]); break;
		default: acc[o] += v; break; /* sum, mean, log_sum */
		}
	}
	for (int64_t j = 0; j < nout; j++) {
		double r = acc[j];
		switch (op) {
		case OP_REDUCE_MEAN: r /= (double)count; break; /* count 0: NaN */
		case OP_REDUCE_L2: r = sqrt(r); break;
		case OP_REDUCE_LOG_SUM: r = log(r); break;
		case OP_REDUCE_LOG_SUM_EXP: r = isinf(mx[j]) ? log(r) : mx[j] + log(r); break;
		default: break;
		}
		f32(out[0])[j] = (float)r;
	}
	free(acc);
	free(mx);
	return true;
}

#define REDUCE_KERNEL(name)                                                                    \
	bool kernel_##name(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)      \
	{                                                                                      \
		(void)d;                                                                       \
		return reduce_kernel(n, in, out);                                              \
	}
REDUCE_KERNEL(reduce_mean)
REDUCE_KERNEL(reduce_sum)
REDUCE_KERNEL(reduce_max)
REDUCE_KERNEL(reduce_min)
REDUCE_KERNEL(reduce_prod)
REDUCE_KERNEL(reduce_l1)
REDUCE_KERNEL(reduce_l2)
REDUCE_KERNEL(reduce_log_sum)
REDUCE_KERNEL(reduce_log_sum_exp)
REDUCE_KERNEL(reduce_sum_square)
#undef REDUCE_KERNEL

/* ======================================================================
 * matmul (numpy semantics)
 * ====================================================================== */

bool infer_matmul(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_NUM) || !require_dtype(cx, 1, DTMASK_NUM) || !require_same_dtype(cx, 0, 1))
		return false;
	if (!require_rank(cx, 0, 1, MAX_RANK) || !require_rank(cx, 1, 1, MAX_RANK))
		return false;
	const Shape *a = &operand_type(cx, 0)->shape, *b = &operand_type(cx, 1)->shape;
	int64_t ka = a->dim[a->rank - 1];
	int64_t kb = b->rank == 1 ? b->dim[0] : b->dim[b->rank - 2];
	if (ka != kb) {
		char why[96];
		snprintf(why, sizeof why, "inner dimensions differ (%lld vs %lld)", (long long)ka, (long long)kb);
		return shape_mismatch(cx, 0, 1, why);
	}
	Shape ba = {.rank = a->rank > 2 ? a->rank - 2 : 0}, bb = {.rank = b->rank > 2 ? b->rank - 2 : 0}, r;
	for (int i = 0; i < ba.rank; i++)
		ba.dim[i] = a->dim[i];
	for (int i = 0; i < bb.rank; i++)
		bb.dim[i] = b->dim[i];
	if (!shape_broadcast(&ba, &bb, &r))
		return shape_mismatch(cx, 0, 1, "batch dimensions not broadcastable");
	if (a->rank > 1)
		r.dim[r.rank++] = a->dim[a->rank - 2];
	if (b->rank > 1)
		r.dim[r.rank++] = b->dim[b->rank - 1];
	set_result(cx, 0, operand_type(cx, 0)->dtype, &r);
	return true;
}

bool kernel_matmul(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	const Shape *a = &in[0]->type.shape, *b = &in[1]->type.shape;
	/* 1-d operands promoted: a [K] -> [1,K], b [K] -> [K,1]. */
	int64_t M = a->rank > 1 ? a->dim[a->rank - 2] : 1, K = a->dim[a->rank - 1];
	int64_t N = b->rank > 1 ? b->dim[b->rank - 1] : 1;
	Shape ba = {.rank = a->rank > 2 ? a->rank - 2 : 0}, bb = {.rank = b->rank > 2 ? b->rank - 2 : 0}, bo;
	for (int i = 0; i < ba.rank; i++)
		ba.dim[i] = a->dim[i];
	for (int i = 0; i < bb.rank; i++)
		bb.dim[i] = b->dim[i];
	shape_broadcast(&ba, &bb, &bo);
	int64_t sa[MAX_RANK], sb[MAX_RANK], idx[MAX_RANK] = {0};
	broadcast_strides(&ba, &bo, sa);
	broadcast_strides(&bb, &bo, sb);
	int64_t nb = shape_numel(&bo);
	bool is_float = out[0]->type.dtype == DT_F32;
	for (int64_t t = 0; t < nb; t++, index_next(&bo, idx)) {
		int64_t oa = bc_off(idx, sa, bo.rank) * M * K, ob = bc_off(idx, sb, bo.rank) * K * N;
		int64_t oo = t * M * N;
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				if (is_float) {
					double acc = 0;
					for (int64_t k = 0; k < K; k++)
						acc += (double)f32(in[0])[oa + i * K + k] *
						       (double)f32(in[1])[ob + k * N + j];
					f32(out[0])[oo + i * N + j] = (float)acc;
				} else {
					int64_t acc = 0;
					for (int64_t k = 0; k < K; k++)
						acc = wrap_add(acc, wrap_mul(tensor_get_i(in[0], oa + i * K + k),
									     tensor_get_i(in[1], ob + k * N + j)));
					store_i(out[0], oo + i * N + j, acc);
				}
			}
	}
	return true;
}

/* ======================================================================
 * gemm: Y = alpha * op(A) op(B) + beta * C, rank-2 operands
 * ====================================================================== */

bool infer_gemm(InferCtx *cx)
{
	int nin = cx->n->nin;
	for (int i = 0; i < nin; i++)
		if (!require_dtype(cx, i, DTMASK_FLOAT))
			return false;
	for (int i = 1; i < nin; i++)
		if (!require_same_dtype(cx, 0, i))
			return false;
	if (!require_rank(cx, 0, 2, 2) || !require_rank(cx, 1, 2, 2))
		return false;
	if (nin > 2 && !require_rank(cx, 2, 0, 2))
		return false;
	const Shape *a = &operand_type(cx, 0)->shape, *b = &operand_type(cx, 1)->shape;
	bool ta = attr_i(cx->n, "trans_a") != 0, tb = attr_i(cx->n, "trans_b") != 0;
	int64_t M = a->dim[ta ? 1 : 0], K = a->dim[ta ? 0 : 1];
	int64_t K2 = b->dim[tb ? 1 : 0], N = b->dim[tb ? 0 : 1];
	if (K != K2) {
		char why[160];
		snprintf(why, sizeof why, "inner dimensions differ (%lld vs %lld, trans_a=%d, trans_b=%d)",
			 (long long)K, (long long)K2, ta, tb);
		return shape_mismatch(cx, 0, 1, why);
	}
	Shape r = {.rank = 2, .dim = {M, N}};
	if (nin > 2) {
		Shape bc;
		if (!shape_broadcast(&operand_type(cx, 2)->shape, &r, &bc) || !shape_eq(&bc, &r)) {
			char tc[160], tr[160];
			TensorType rt = {operand_type(cx, 0)->dtype, r};
			type_str(operand_type(cx, 2), tc, sizeof tc);
			type_str(&rt, tr, sizeof tr);
			return infer_error_at_operand(cx, 2,
						      "shape mismatch: operand 3 ('%s') is %s and the product is %s: "
						      "not broadcastable to it",
						      cx->n->in[2]->name, tc, tr);
		}
	}
	set_result(cx, 0, operand_type(cx, 0)->dtype, &r);
	return true;
}

bool kernel_gemm(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *a = &in[0]->type.shape;
	bool ta = attr_i(n, "trans_a") != 0, tb = attr_i(n, "trans_b") != 0;
	double alpha = attr_f(n, "alpha"), beta = attr_f(n, "beta");
	int64_t M = out[0]->type.shape.dim[0], N = out[0]->type.shape.dim[1];
	int64_t K = a->dim[ta ? 0 : 1];
	const float *A = f32(in[0]), *B = f32(in[1]);
	int64_t sc[MAX_RANK] = {0};
	if (n->nin > 2)
		broadcast_strides(&in[2]->type.shape, &out[0]->type.shape, sc);
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double acc = 0;
			for (int64_t k = 0; k < K; k++) {
				double av = A[ta ? k * M + i : i * K + k];
				double bv = B[tb ? j * K + k : k * N + j];
				acc += av * bv;
			}
			double y = alpha * acc;
			if (n->nin > 2)
				y += beta * (double)f32(in[2])[i * sc[0] + j * sc[1]];
			f32(out[0])[i * N + j] = (float)y;
		}
	return true;
}
