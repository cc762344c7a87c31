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

bool infer_binary(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_add(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_sub(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_mul(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_div(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_pow(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_pow(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_variadic(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_max(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_min(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_sum(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_unary_num(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_neg(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_abs(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_unary_float(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_exp(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_log(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_sqrt(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_reciprocal(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_relu(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_leaky_relu(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_sigmoid(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_tanh(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_erf(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_gelu(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_clip(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_clip(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_hardsigmoid(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_hardswish(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_identity(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_identity(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_dropout(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_dropout(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_softmax(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_softmax(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_logsoftmax(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_reduce(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_reduce_mean(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_matmul(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_matmul(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_gemm(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_gemm(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}
