/* The constant op: its type comes from the declaration, its data from an
 * initializer (inline values, an .npy file, zeros, a fill value, or seeded
 * uniform / normal random numbers). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "npy.h"
#include "ops.h"
#include "rng.h"
#include "util.h"

bool infer_constant(InferCtx *cx)
{
	Node *n = cx->n;
	Value *v = n->out[0];
	const ConstInit *in = &n->init;
	char ty[160];
	type_str(&v->annot, ty, sizeof ty);
	int64_t numel = shape_numel(&v->annot.shape);
	if (!dtype_has_kernels(v->annot.dtype))
		return infer_error(cx, "constant '%s' has dtype %s, which no op supports yet", v->name,
				   dtype_name(v->annot.dtype));
	switch (in->kind) {
	case INIT_INLINE:
		if (in->nvalues != numel)
			return infer_error(cx, "constant '%s' is declared %s (%lld elements) but %lld values are given",
					   v->name, ty, (long long)numel, (long long)in->nvalues);
		for (int64_t i = 0; i < in->nvalues; i++) {
			double x = in->values[i];
			DType dt = v->annot.dtype;
			if (dtype_is_int(dt) && !in->ivalues && (x != floor(x) || !(fabs(x) < 9.2233720368547758e18)))
				return infer_error(cx, "constant '%s' is %s but value %lld (%g) is not an integer",
						   v->name, dtype_name(dt), (long long)i + 1, x);
			if (dt == DT_BOOL && x != 0 && x != 1)
				return infer_error(cx, "constant '%s' is bool but value %lld (%g) is not 0 or 1",
						   v->name, (long long)i + 1, x);
			if (!dtype_is_int(dt))
				continue;
			int64_t k = in->ivalues ? in->ivalues[i] : (int64_t)x;
			int64_t lo = dt == DT_I32 ? INT32_MIN : dt == DT_I8 ? INT8_MIN : INT64_MIN;
			int64_t hi = dt == DT_I32 ? INT32_MAX : dt == DT_I8 ? INT8_MAX : INT64_MAX;
			if (k < lo || k > hi)
				return infer_error(cx, "constant '%s' is %s but value %lld (%lld) is out of its range [%lld, %lld]",
						   v->name, dtype_name(dt), (long long)i + 1, (long long)k, (long long)lo,
						   (long long)hi);
		}
		break;
	case INIT_NPY: {
		TensorType t;
		char *err = NULL;
		if (!npy_read_header(in->resolved, &t, &err)) {
			bool r = infer_error(cx, "cannot read '%s': %s", in->path, err);
			free(err);
			return r;
		}
		if (t.dtype != v->annot.dtype || !shape_eq(&t.shape, &v->annot.shape)) {
			char got[160];
			type_str(&t, got, sizeof got);
			return infer_error(cx, "'%s' holds %s but '%s' is declared %s", in->path, got, v->name, ty);
		}
		break;
	}
	case INIT_RANDOM:
		if (!(in->a < in->b))
			return infer_error(cx, "random(): the range [%g, %g) is empty", in->a, in->b);
		break;
	case INIT_NORMAL:
		if (!(in->b >= 0))
			return infer_error(cx, "normal(): the standard deviation %g is negative", in->b);
		break;
	case INIT_ZEROS:
	case INIT_FILL:
		break;
	case INIT_TENSOR: {
		const Tensor *t = in->data;
		if (t->type.dtype != v->annot.dtype || !shape_eq(&t->type.shape, &v->annot.shape))
			return infer_error(cx, "constant '%s': its data does not have its declared type %s", v->name, ty);
		break;
	}
	case INIT_NONE:
		return infer_error(cx, "constant '%s' has no initializer", v->name);
	}
	set_result(cx, 0, v->annot.dtype, &v->annot.shape);
	return true;
}

bool materialize_constant(const Node *n, Tensor *out, Diag *d)
{
	const ConstInit *in = &n->init;
	int64_t numel = tensor_numel(out);
	Rng r;
	switch (in->kind) {
	case INIT_INLINE:
		for (int64_t i = 0; i < numel; i++)
			if (in->ivalues && !dtype_is_float(out->type.dtype))
				tensor_set_i(out, i, in->ivalues[i]);
			else
				tensor_set_f(out, i, in->values[i]);
		return true;
	case INIT_NPY: {
		Tensor *t;
		char *err = NULL;
		if (!npy_read(in->resolved, &t, &err)) {
			kernel_error(d, n, "cannot read '%s': %s", in->path, err);
			free(err);
			return false;
		}
		if (t->type.dtype != out->type.dtype || !shape_eq(&t->type.shape, &out->type.shape)) {
			tensor_free(t);
			return kernel_error(d, n, "'%s' changed since the model was checked", in->path);
		}
		if (tensor_bytes(t))
			memcpy(out->data, t->data, tensor_bytes(t));
		tensor_free(t);
		return true;
	}
	case INIT_ZEROS:
		if (tensor_bytes(out))
			memset(out->data, 0, tensor_bytes(out));
		return true;
	case INIT_FILL:
		for (int64_t i = 0; i < numel; i++)
			tensor_set_f(out, i, in->a);
		return true;
	case INIT_RANDOM:
		rng_seed(&r, in->seed);
		for (int64_t i = 0; i < numel; i++) {
			double x = in->a + (in->b - in->a) * rng_uniform(&r);
			tensor_set_f(out, i, dtype_is_int(out->type.dtype) ? floor(x) : x);
		}
		return true;
	case INIT_NORMAL:
		rng_seed(&r, in->seed);
		for (int64_t i = 0; i < numel; i++)
			tensor_set_f(out, i, in->a + in->b * rng_normal(&r));
		return true;
	case INIT_TENSOR:
		if (tensor_bytes(out))
			memcpy(out->data, ((const Tensor *)in->data)->data, tensor_bytes(out));
		return true;
	case INIT_NONE:
		break;
	}
	return kernel_error(d, n, "constant without initializer");
}

bool kernel_constant(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	return materialize_constant(n, out[0], d);
}

Tensor *constant_data(const Node *n)
{
	const Value *v = n->out[0];
	Tensor *t = tensor_new(v->type.dtype, &v->type.shape);
	Diag scratch;
	diag_init(&scratch);
	bool ok = materialize_constant(n, t, &scratch);
	diag_free(&scratch);
	if (!ok) {
		tensor_free(t);
		return NULL;
	}
	return t;
}
