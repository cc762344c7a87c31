/* Data-movement ops: attribute specs, shape rules and reference kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "util.h"

const AttrSpec reshape_attrs[] = {
	{.name = "shape", .kind = ATTR_INTS, .required = true, .has_range = true, .min = -1, .max = INT64_MAX},
	{.name = "allowzero", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
	{0}};
/* Absent perm: reverse the axes. */
const AttrSpec transpose_attrs[] = {
	{.name = "perm", .kind = ATTR_INTS},
	{0}};
const AttrSpec flatten_attrs[] = {
	{.name = "axis", .kind = ATTR_INT, .has_default = true, .def_i = 1},
	{0}};
const AttrSpec concat_attrs[] = {
	{.name = "axis", .kind = ATTR_INT, .required = true},
	{0}};
/* Absent split: equal parts, one per result (or num_outputs). */
const AttrSpec split_attrs[] = {
	{.name = "axis", .kind = ATTR_INT, .has_default = true, .def_i = 0},
	{.name = "split", .kind = ATTR_INTS, .has_range = true, .min = 0, .max = INT64_MAX},
	{.name = "num_outputs", .kind = ATTR_INT, .has_range = true, .min = 1, .max = INT32_MAX},
	{0}};
/* ONNX semantics: ends clamp; absent axes: 0..n-1; absent steps: 1. */
const AttrSpec slice_attrs[] = {
	{.name = "starts", .kind = ATTR_INTS, .required = true},
	{.name = "ends", .kind = ATTR_INTS, .required = true},
	{.name = "axes", .kind = ATTR_INTS},
	{.name = "steps", .kind = ATTR_INTS},
	{0}};
/* Absent axes: every size-1 axis. */
const AttrSpec squeeze_attrs[] = {
	{.name = "axes", .kind = ATTR_INTS},
	{0}};
const AttrSpec unsqueeze_attrs[] = {
	{.name = "axes", .kind = ATTR_INTS, .required = true},
	{0}};
const AttrSpec gather_attrs[] = {
	{.name = "axis", .kind = ATTR_INT, .has_default = true, .def_i = 0},
	{0}};
const AttrSpec expand_attrs[] = {
	{.name = "shape", .kind = ATTR_INTS, .required = true, .has_range = true, .min = 0, .max = INT64_MAX},
	{0}};
/* pads: begin for each axis (or each of axes), then end; may be negative
 * (crop).  value: the constant for mode "constant". */
const AttrSpec pad_attrs[] = {
	{.name = "pads", .kind = ATTR_INTS, .required = true},
	{.name = "mode", .kind = ATTR_STRING, .has_default = true, .def_s = "constant", .choices = "constant|reflect|edge"},
	{.name = "value", .kind = ATTR_FLOAT, .has_default = true, .def_f = 0.0},
	{.name = "axes", .kind = ATTR_INTS},
	{0}};
const AttrSpec shape_attrs[] = {
	{.name = "start", .kind = ATTR_INT, .has_default = true, .def_i = 0},
	{.name = "end", .kind = ATTR_INT},
	{0}};
const AttrSpec constant_of_shape_attrs[] = {
	{.name = "shape", .kind = ATTR_INTS, .required = true, .has_range = true, .min = 0, .max = INT64_MAX},
	{.name = "value", .kind = ATTR_FLOAT, .has_default = true, .def_f = 0.0},
	{.name = "dtype", .kind = ATTR_DTYPE, .has_default = true, .def_dt = DT_F32},
	{0}};

bool infer_reshape(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_copy(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_transpose(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_transpose(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_flatten(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool infer_concat(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_concat(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_split(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_split(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_slice(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_slice(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_squeeze(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool infer_unsqueeze(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool infer_gather(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_gather(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_expand(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_expand(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_pad(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_pad(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_shape(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_shape(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}

bool infer_constant_of_shape(InferCtx *cx)
{
	return infer_error(cx, "not implemented yet");
}

bool kernel_constant_of_shape(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)out;
	return kernel_error(d, n, "not implemented yet");
}
