/* The steps ONNX translations (onnx_compose.h) are made of: reading an
 * ONNX node's operands and attributes, and adding gdcc nodes.  A step
 * given a NULL operand (an earlier step failed, after its message) adds
 * nothing and gives NULL, so that a chain of steps stops at its first
 * failure and the translation checks only its end. */
#include <stdlib.h>
#include <string.h>

#include "gdcc_limits.h"
#include "onnx_compose.h"
#include "ops.h"
#include "util.h"

/* ---- reading the ONNX node ------------------------------------------------------------ */
const char *imp_attr_string(const Onnx__NodeProto *np, const char *name, const char *def, char *buf, size_t size)
{
	const Onnx__AttributeProto *a = imp_attr(np, name);
	if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
		return def;
	size_t len = a->s.data ? a->s.len : 0;
	bool cut = len >= size;
	if (cut)
		len = size - 4;
	memcpy(buf, len ? (const char *)a->s.data : "", len);
	strcpy(buf + len, cut ? "..." : "");
	return buf;
}

int64_t imp_attr_int(const Onnx__NodeProto *np, const char *name, int64_t def)
{
	const Onnx__AttributeProto *a = imp_attr(np, name);
	return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ? a->i : def;
}

double imp_attr_float(const Onnx__NodeProto *np, const char *name, double def)
{
	const Onnx__AttributeProto *a = imp_attr(np, name);
	return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT ? a->f : def;
}

bool imp_attr_ints(Imp *im, const Onnx__NodeProto *np, const char *name, int want, int64_t *out, bool *present)
{
	const Onnx__AttributeProto *a = imp_attr(np, name);
	*present = a != NULL;
	if (!a)
		return true;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS || a->n_ints != (size_t)want) {
		imp_fail(im, "attribute '%s' must hold %d integers (it has %zu)", name, want,
			 a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS ? a->n_ints : (size_t)0);
		return false;
	}
	for (int i = 0; i < want; i++)
		out[i] = a->ints[i];
	return true;
}

Value *imp_operand(Imp *im, const Onnx__NodeProto *np, size_t i, const char *what)
{
	const char *nm = imp_input_name(np, i);
	if (!nm) {
		imp_fail(im, "its %s (input %zu) is missing", what, i + 1);
		return NULL;
	}
	return imp_value(im, nm, what);
}

bool imp_known_int(Imp *im, const Onnx__NodeProto *np, size_t i, const char *what, int64_t def, int64_t *v)
{
	const char *nm = imp_input_name(np, i);
	*v = def;
	if (!nm)
		return true;
	int cnt;
	int64_t *vals = imp_ints(im, nm, &cnt, what);
	if (!vals)
		return false;
	bool ok = cnt == 1;
	if (ok)
		*v = vals[0];
	else
		imp_fail(im, "its %s must be one integer (it has %d)", what, cnt);
	free(vals);
	return ok;
}

/* ---- adding gdcc nodes ----------------------------------------------------------------- */
bool step_size_ok(Imp *im, DType dt, const Shape *s, const char *what)
{
	char *e = tensor_size_error(dt, s);
	if (e)
		imp_fail(im, "%s: %s", what, e);
	free(e);
	return !e;
}

Value *step_unary(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *x, const char *what)
{
	return x ? imp_done(im, imp_step(im, np, op, &x, 1, what)) : NULL;
}

Value *step_binary(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *a, Value *b, const char *what)
{
	Value *in[2] = {a, b};
	return a && b ? imp_done(im, imp_step(im, np, op, in, 2, what)) : NULL;
}

bool step_last_binary(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *a, Value *b)
{
	Value *in[2] = {a, b};
	return a && b && imp_finish(im, imp_step(im, np, op, in, 2, NULL), np);
}

Value *step_reshape(Imp *im, const Onnx__NodeProto *np, Value *x, const int64_t *shape, int rank, const char *what)
{
	Node *n = x ? imp_step(im, np, OP_RESHAPE, &x, 1, what) : NULL;
	if (n)
		node_set_ints(n, "shape", shape, rank);
	return imp_done(im, n);
}

Value *step_cast(Imp *im, const Onnx__NodeProto *np, Value *x, DType to, const char *what)
{
	Node *n = x ? imp_step(im, np, OP_CAST, &x, 1, what) : NULL;
	if (n)
		node_set_dtype(n, "to", to);
	return imp_done(im, n);
}

Value *step_slice(Imp *im, const Onnx__NodeProto *np, Value *x, int64_t axis, int64_t start, int64_t end,
		  const char *what)
{
	Node *n = x ? imp_step(im, np, OP_SLICE, &x, 1, what) : NULL;
	if (n) {
		node_set_ints(n, "starts", &start, 1);
		node_set_ints(n, "ends", &end, 1);
		node_set_ints(n, "axes", &axis, 1);
	}
	return imp_done(im, n);
}

Value *step_transpose(Imp *im, const Onnx__NodeProto *np, Value *x, const int64_t *perm, int rank, const char *what)
{
	Node *n = x ? imp_step(im, np, OP_TRANSPOSE, &x, 1, what) : NULL;
	if (n)
		node_set_ints(n, "perm", perm, rank);
	return imp_done(im, n);
}

Value *step_matmul_t(Imp *im, const Onnx__NodeProto *np, Value *a, Value *b, const char *what)
{
	Value *in[2] = {a, b};
	Node *n = a && b ? imp_step(im, np, OP_GEMM, in, 2, what) : NULL;
	if (n)
		node_set_int(n, "trans_b", 1);
	return imp_done(im, n);
}

Value *step_concat(Imp *im, const Onnx__NodeProto *np, Value **in, int nin, int64_t axis, const char *what)
{
	for (int i = 0; i < nin; i++)
		if (!in[i])
			return NULL;
	if (nin == 1)
		return in[0];
	Node *n = imp_step(im, np, OP_CONCAT, in, nin, what);
	if (n)
		node_set_int(n, "axis", axis);
	return imp_done(im, n);
}

Value *step_clip(Imp *im, const Onnx__NodeProto *np, Value *x, double lo, double hi, const char *what)
{
	Node *n = x ? imp_step(im, np, OP_CLIP, &x, 1, what) : NULL;
	if (n) {
		node_set_float(n, "min", lo);
		node_set_float(n, "max", hi);
	}
	return imp_done(im, n);
}

Value *step_scalar(Imp *im, const Onnx__NodeProto *np, DType dt, double v, const char *what)
{
	Shape s = {1, {1}};
	Tensor *t = tensor_new(dt, &s);
	if (dt == DT_F32)
		tensor_set_f(t, 0, v);
	else
		tensor_set_i(t, 0, (int64_t)v);
	return imp_const(im, np, what, t);
}
