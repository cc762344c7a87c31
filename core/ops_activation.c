/* The activations, rounding and hyperbolic functions beyond Tier 1 (prelu,
 * elu, selu, celu, softplus, softsign, thresholded_relu, shrink, sign,
 * floor, ceil, round, sinh, cosh, asinh, acosh, atanh, the trigonometric
 * functions), mean, and the
 * NaN / infinity tests: attribute specs, shape/dtype rules and reference
 * kernels (in double, rounded to f32 once). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ops.h"
#include "util.h"

const AttrSpec elu_attrs[] = {
	{.name = "alpha", .kind = ATTR_FLOAT, .has_default = true, .def_f = 1.0},
	{0}};
/* ONNX's defaults, to f32 precision as the spec writes them */
const AttrSpec selu_attrs[] = {
	{.name = "alpha", .kind = ATTR_FLOAT, .has_default = true, .def_f = 1.67326319217681884765625},
	{.name = "gamma", .kind = ATTR_FLOAT, .has_default = true, .def_f = 1.05070102214813232421875},
	{0}};
const AttrSpec celu_attrs[] = {
	{.name = "alpha", .kind = ATTR_FLOAT, .has_default = true, .def_f = 1.0, .has_frange = true, .fmin = 1e-30,
	 .fmax = 1e30},
	{0}};
const AttrSpec thresholded_relu_attrs[] = {
	{.name = "alpha", .kind = ATTR_FLOAT, .has_default = true, .def_f = 1.0},
	{0}};
const AttrSpec shrink_attrs[] = {
	{.name = "bias", .kind = ATTR_FLOAT, .has_default = true, .def_f = 0.0},
	{.name = "lambd", .kind = ATTR_FLOAT, .has_default = true, .def_f = 0.5},
	{0}};
const AttrSpec isinf_attrs[] = {
	{.name = "detect_negative", .kind = ATTR_INT, .has_default = true, .def_i = 1, .has_range = true, .min = 0, .max = 1},
	{.name = "detect_positive", .kind = ATTR_INT, .has_default = true, .def_i = 1, .has_range = true, .min = 0, .max = 1},
	{0}};

/* ---- one f32 operand ------------------------------------------------------ */
static double activation(const Node *n, double x)
{
	switch (n->op) {
	case OP_ELU: return x < 0 ? attr_f(n, "alpha") * (exp(x) - 1) : x;
	case OP_SELU: {
		double g = attr_f(n, "gamma"), a = attr_f(n, "alpha");
		return x <= 0 ? g * (a * exp(x) - a) : g * x;
	}
	case OP_CELU: {
		double a = attr_f(n, "alpha");
		return fmax(0, x) + fmin(0, a * (exp(x / a) - 1));
	}
	case OP_SOFTPLUS: return isnan(x) ? x : fmax(x, 0) + log1p(exp(-fabs(x))); /* log(1 + e^x), stably */
	case OP_SOFTSIGN: return x / (1 + fabs(x));
	case OP_THRESHOLDED_RELU: return x > attr_f(n, "alpha") ? x : 0;
	case OP_SHRINK: {
		double l = attr_f(n, "lambd"), b = attr_f(n, "bias");
		return x < -l ? x + b : x > l ? x - b : 0;
	}
	case OP_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x; /* 0 and NaN stay */
	case OP_FLOOR: return floor(x);
	case OP_CEIL: return ceil(x);
	case OP_ROUND: return nearbyint(x); /* halves to even */
	case OP_SINH: return sinh(x);
	case OP_COSH: return cosh(x);
	case OP_ASINH: return asinh(x);
	case OP_ACOSH: return acosh(x);
	case OP_ATANH: return atanh(x);
	case OP_SIN: return sin(x);
	case OP_COS: return cos(x);
	case OP_TAN: return tan(x);
	case OP_ASIN: return asin(x);
	case OP_ACOS: return acos(x);
	case OP_ATAN: return atan(x);
	default: return NAN;
	}
}

static bool map_activation(const Node *n, Tensor *const *in, Tensor *const *out)
{
	int64_t total = tensor_numel(in[0]);
	for (int64_t i = 0; i < total; i++)
		f32(out[0])[i] = (float)activation(n, f32(in[0])[i]);
	return true;
}

#define ACTIVATION_KERNEL(name)                                                                 \
	bool kernel_##name(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)       \
	{                                                                                       \
		(void)d;                                                                        \
		return map_activation(n, in, out);                                              \
	}
ACTIVATION_KERNEL(elu)
ACTIVATION_KERNEL(selu)
ACTIVATION_KERNEL(celu)
ACTIVATION_KERNEL(softplus)
ACTIVATION_KERNEL(softsign)
ACTIVATION_KERNEL(thresholded_relu)
ACTIVATION_KERNEL(shrink)
ACTIVATION_KERNEL(floor)
ACTIVATION_KERNEL(ceil)
ACTIVATION_KERNEL(round)
ACTIVATION_KERNEL(sinh)
ACTIVATION_KERNEL(cosh)
ACTIVATION_KERNEL(asinh)
ACTIVATION_KERNEL(acosh)
ACTIVATION_KERNEL(atanh)
ACTIVATION_KERNEL(sin)
ACTIVATION_KERNEL(cos)
ACTIVATION_KERNEL(tan)
ACTIVATION_KERNEL(asin)
ACTIVATION_KERNEL(acos)
ACTIVATION_KERNEL(atan)
#undef ACTIVATION_KERNEL

/* sign also of integers: -1, 0 or 1 */
bool kernel_sign(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	if (in[0]->type.dtype == DT_F32)
		return map_activation(n, in, out);
	int64_t total = tensor_numel(in[0]);
	for (int64_t i = 0; i < total; i++) {
		int64_t v = tensor_get_i(in[0], i);
		tensor_set_i(out[0], i, v > 0 ? 1 : v < 0 ? -1 : 0);
	}
	return true;
}

/* ---- prelu(x, slope): slope broadcasts to x (unidirectionally) ------------ */
bool infer_prelu(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_FLOAT) || !require_dtype(cx, 1, DTMASK_FLOAT))
		return false;
	const Shape *x = &operand_type(cx, 0)->shape, *s = &operand_type(cx, 1)->shape;
	Shape r;
	if (!shape_broadcast(x, s, &r) || !shape_eq(&r, x)) {
		char tx[160], ts[160];
		type_str(operand_type(cx, 0), tx, sizeof tx);
		type_str(operand_type(cx, 1), ts, sizeof ts);
		return infer_error_at_operand(cx, 1, "shape mismatch: slope ('%s') is %s, which does not broadcast to x ('%s'), %s",
					      cx->n->in[1]->name, ts, cx->n->in[0]->name, tx);
	}
	set_result(cx, 0, DT_F32, x);
	return true;
}

bool kernel_prelu(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	const Shape *os = &out[0]->type.shape;
	int64_t st[MAX_RANK], idx[MAX_RANK] = {0};
	broadcast_strides(&in[1]->type.shape, os, st);
	int64_t total = shape_numel(os);
	for (int64_t i = 0; i < total; i++, index_next(os, idx)) {
		int64_t o = 0;
		for (int a = 0; a < os->rank; a++)
			o += idx[a] * st[a];
		float x = f32(in[0])[i];
		f32(out[0])[i] = x < 0 ? f32(in[1])[o] * x : x;
	}
	return true;
}

/* ---- mean(a, ...): the elementwise average, broadcasting -------------------- */
bool infer_mean(InferCtx *cx)
{
	for (int i = 0; i < cx->n->nin; i++)
		if (!require_dtype(cx, i, DTMASK_FLOAT))
			return false;
	return infer_variadic(cx);
}

bool kernel_mean(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *os = &out[0]->type.shape;
	int64_t total = shape_numel(os);
	int64_t (*st)[MAX_RANK] = xcalloc((size_t)n->nin, sizeof *st);
	for (int k = 0; k < n->nin; k++)
		broadcast_strides(&in[k]->type.shape, os, st[k]);
	int64_t idx[MAX_RANK] = {0};
	for (int64_t i = 0; i < total; i++, index_next(os, idx)) {
		double s = 0;
		for (int k = 0; k < n->nin; k++) {
			int64_t o = 0;
			for (int a = 0; a < os->rank; a++)
				o += idx[a] * st[k][a];
			s += f32(in[k])[o];
		}
		f32(out[0])[i] = (float)(s / n->nin);
	}
	free(st);
	return true;
}

/* ---- isnan, isinf: f32 -> bool -------------------------------------------- */
bool infer_isnan(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_FLOAT))
		return false;
	set_result(cx, 0, DT_BOOL, &operand_type(cx, 0)->shape);
	return true;
}

bool kernel_isnan(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	int64_t total = tensor_numel(in[0]);
	bool neg = n->op == OP_ISINF && attr_i(n, "detect_negative"), pos = n->op == OP_ISINF && attr_i(n, "detect_positive");
	for (int64_t i = 0; i < total; i++) {
		float x = f32(in[0])[i];
		((uint8_t *)out[0]->data)[i] = n->op == OP_ISNAN ? isnan(x) != 0 : (isinf(x) && ((x > 0 && pos) || (x < 0 && neg)));
	}
	return true;
}

bool kernel_isinf(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	return kernel_isnan(n, in, out, d);
}
