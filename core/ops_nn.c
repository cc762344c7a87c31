/* Neural-network ops over N-d spatial layouts (N, C, spatial...): conv,
 * pooling and normalization; attribute specs, rules and reference kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "util.h"

/* Absent kernel_shape: the weights' spatial dims; absent strides and
 * dilations: 1; absent pads: 0 (begin..., end...). */
const AttrSpec conv_attrs[] = {
	{.name = "auto_pad", .kind = ATTR_STRING, .has_default = true, .def_s = "NOTSET", .choices = "NOTSET|SAME_UPPER|SAME_LOWER|VALID"},
	{.name = "dilations", .kind = ATTR_INTS, .has_range = true, .min = 1, .max = INT32_MAX},
	{.name = "group", .kind = ATTR_INT, .has_default = true, .def_i = 1, .has_range = true, .min = 1, .max = INT32_MAX},
	{.name = "kernel_shape", .kind = ATTR_INTS, .has_range = true, .min = 1, .max = INT32_MAX},
	{.name = "pads", .kind = ATTR_INTS, .has_range = true, .min = 0, .max = INT32_MAX},
	{.name = "strides", .kind = ATTR_INTS, .has_range = true, .min = 1, .max = INT32_MAX},
	{0}};
const AttrSpec maxpool_attrs[] = {
	{.name = "auto_pad", .kind = ATTR_STRING, .has_default = true, .def_s = "NOTSET", .choices = "NOTSET|SAME_UPPER|SAME_LOWER|VALID"},
	{.name = "ceil_mode", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
	{.name = "dilations", .kind = ATTR_INTS, .has_range = true, .min = 1, .max = INT32_MAX},
	{.name = "kernel_shape", .kind = ATTR_INTS, .required = true, .has_range = true, .min = 1, .max = INT32_MAX},
	{.name = "pads", .kind = ATTR_INTS, .has_range = true, .min = 0, .max = INT32_MAX},
	{.name = "storage_order", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 0},
	{.name = "strides", .kind = ATTR_INTS, .has_range = true, .min = 1, .max = INT32_MAX},
	{0}};
const AttrSpec avgpool_attrs[] = {
	{.name = "auto_pad", .kind = ATTR_STRING, .has_default = true, .def_s = "NOTSET", .choices = "NOTSET|SAME_UPPER|SAME_LOWER|VALID"},
	{.name = "ceil_mode", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
	{.name = "count_include_pad", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
	{.name = "dilations", .kind = ATTR_INTS, .has_range = true, .min = 1, .max = INT32_MAX},
	{.name = "kernel_shape", .kind = ATTR_INTS, .required = true, .has_range = true, .min = 1, .max = INT32_MAX},
	{.name = "pads", .kind = ATTR_INTS, .has_range = true, .min = 0, .max = INT32_MAX},
	{.name = "strides", .kind = ATTR_INTS, .has_range = true, .min = 1, .max = INT32_MAX},
	{0}};
/* training_mode 1 normalizes with the batch's statistics and gives the
 * updated running mean and variance as results 2 and 3. */
const AttrSpec batchnorm_attrs[] = {
	{.name = "epsilon", .kind = ATTR_FLOAT, .has_default = true, .def_f = 1e-5, .has_frange = true, .fmin = 0, .fmax = 1e30},
	{.name = "momentum", .kind = ATTR_FLOAT, .has_default = true, .def_f = 0.9, .has_frange = true, .fmin = 0, .fmax = 1},
	{.name = "training_mode", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
	{0}};
/* Results 2 and 3, when named: mean and inverse standard deviation. */
const AttrSpec layernorm_attrs[] = {
	{.name = "axis", .kind = ATTR_INT, .has_default = true, .def_i = -1},
	{.name = "epsilon", .kind = ATTR_FLOAT, .has_default = true, .def_f = 1e-5, .has_frange = true, .fmin = 0, .fmax = 1e30},
	{.name = "stash_type", .kind = ATTR_INT, .has_default = true, .def_i = 1, .has_range = true, .min = 1, .max = 1},
	{0}};

bool infer_conv(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_conv(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_pool(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_maxpool(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_avgpool(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_global_pool(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_global_avgpool(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool kernel_global_maxpool(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_batchnorm(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_batchnorm(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_layernorm(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_layernorm(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}
