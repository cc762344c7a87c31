/* Data-movement ops: attribute specs, shape rules and reference kernels. */
#include <float.h>
#include <math.h>
#include <stdio.h>
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

/* ---- shared helpers --------------------------------------------------- */
/* "[1,-1,3]" for an attribute list (n may be 0). */
static char *ints_str(const int64_t *v, int n, char *buf, size_t sz)
{
	size_t k = 0;
	k += snprintf(buf + k, sz - k, "[");
	for (int i = 0; i < n && k < sz; i++)
		k += snprintf(buf + k, sz - k, "%s%lld", i ? "," : "", (long long)v[i]);
	if (k < sz)
		snprintf(buf + k, sz - k, "]");
	return buf;
}

/* a * b for a, b >= 0; false on overflow. */
static bool mul_ok(int64_t a, int64_t b, int64_t *r)
{
	if (a != 0 && b > INT64_MAX / a)
		return false;
	*r = a * b;
	return true;
}

/* a + b; false on overflow. */
static bool add_ok(int64_t a, int64_t b, int64_t *r)
{
	if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
		return false;
	*r = a + b;
	return true;
}

/* A result shape whose element count fits in int64. */
static bool check_result_size(InferCtx *cx, const Shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		if (!mul_ok(n, s->dim[i], &n)) {
			char sh[160];
			return infer_error(cx, "the result shape %s has too many elements",
					   shape_str(s, sh, sizeof sh));
		}
	return true;
}

/* The operand's type as "f32[2,3]" in buf. */
static const char *optype(InferCtx *cx, int i, char *buf, size_t n)
{
	return type_str(operand_type(cx, i), buf, n);
}

/* A fill value (attribute `attr`) must be representable in dt. */
static bool check_fill_value(InferCtx *cx, const char *attr, double v, DType dt)
{
	switch (dt) {
	case DT_F32:
		if (isfinite(v) && fabs(v) > FLT_MAX)
			return infer_error_at_attr(cx, attr, "attribute '%s' = %g is out of the range of f32", attr, v);
		return true;
	case DT_I32:
	case DT_I64: {
		double lo = dt == DT_I32 ? -2147483648.0 : -9223372036854775808.0;
		double hi = dt == DT_I32 ? 2147483648.0 : 9223372036854775808.0;
		if (v != floor(v) || !(v >= lo && v < hi))
			return infer_error_at_attr(cx, attr, "attribute '%s' = %g is not a value of %s", attr, v,
						   dtype_name(dt));
		return true;
	}
	case DT_BOOL:
		if (v != 0 && v != 1)
			return infer_error_at_attr(cx, attr, "attribute '%s' = %g is not a bool (0 or 1)", attr, v);
		return true;
	default:
		return infer_error_at_attr(cx, attr, "dtype %s has no kernels", dtype_name(dt));
	}
}

static void copy_elem(void *dst, int64_t di, const void *src, int64_t si, size_t es)
{
	memcpy((char *)dst + di * (int64_t)es, (const char *)src + si * (int64_t)es, es);
}

/* ---- reshape ---------------------------------------------------------- */
bool infer_reshape(InferCtx *cx)
{
	const TensorType *t = operand_type(cx, 0);
	const int64_t *v;
	int n = attr_ints(cx->n, "shape", &v);
	bool allowzero = attr_i(cx->n, "allowzero") != 0;
	char ty[160], want[256];
	type_str(t, ty, sizeof ty);
	ints_str(v, n, want, sizeof want);
	if (n > MAX_RANK)
		return infer_error_at_attr(cx, "shape", "attribute 'shape' = %s has %d entries, above the maximum rank %d",
					   want, n, MAX_RANK);
	Shape s = {.rank = n};
	int minus = -1;
	bool zero = false, copied = false, overflow = false;
	int64_t known = 1;
	for (int i = 0; i < n; i++) {
		if (v[i] == -1) {
			if (minus >= 0)
				return infer_error_at_attr(cx, "shape",
							   "attribute 'shape' = %s has more than one -1 (entries %d and %d)",
							   want, minus, i);
			minus = i;
			s.dim[i] = -1;
			continue;
		}
		int64_t d = v[i];
		if (d == 0) {
			zero = true;
			if (!allowzero) {
				if (i >= t->shape.rank)
					return infer_error_at_attr(cx, "shape",
								   "attribute 'shape' = %s: entry %d is 0 (copy the input dim) "
								   "but operand 1 ('%s') is %s, of rank %d",
								   want, i, cx->n->in[0]->name, ty, t->shape.rank);
				d = t->shape.dim[i];
				copied = true;
			}
		}
		s.dim[i] = d;
		if (!mul_ok(known, d, &known))
			overflow = true;
	}
	if (allowzero && zero && minus >= 0)
		return infer_error_at_attr(cx, "shape", "attribute 'shape' = %s has both 0 and -1, which allowzero=1 forbids",
					   want);
	int64_t numel = shape_numel(&t->shape);
	char res[256] = "";
	if (copied) {
		char sh[160];
		snprintf(res, sizeof res, " (that is %s)", shape_str(&s, sh, sizeof sh));
	}
	if (minus >= 0) {
		if (known == 0)
			return infer_error_at_attr(cx, "shape",
						   "cannot reshape %s (%lld elements) to %s%s: the -1 cannot be inferred "
						   "when the other entries multiply to 0",
						   ty, (long long)numel, want, res);
		if (overflow || numel % known != 0)
			return infer_error_at_attr(cx, "shape",
						   "cannot reshape %s (%lld elements) to %s%s: %lld is not a multiple of %lld",
						   ty, (long long)numel, want, res, (long long)numel,
						   overflow ? (long long)INT64_MAX : (long long)known);
		s.dim[minus] = numel / known;
	} else if (overflow || known != numel) {
		if (overflow)
			return infer_error_at_attr(cx, "shape", "cannot reshape %s (%lld elements) to %s%s (too many elements)",
						   ty, (long long)numel, want, res);
		return infer_error_at_attr(cx, "shape", "cannot reshape %s (%lld elements) to %s%s (%lld elements)", ty,
					   (long long)numel, want, res, (long long)known);
	}
	set_result(cx, 0, t->dtype, &s);
	return true;
}

bool kernel_copy(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	size_t bytes = tensor_bytes(in[0]);
	if (bytes)
		memcpy(out[0]->data, in[0]->data, bytes);
	return true;
}

/* ---- transpose -------------------------------------------------------- */
/* The verified permutation (absent perm: reversed axes). */
void transpose_perm(const Node *n, int rank, int *perm)
{
	const int64_t *v;
	int k = attr_ints(n, "perm", &v);
	for (int i = 0; i < rank; i++)
		perm[i] = k < 0 ? rank - 1 - i : (int)v[i];
}

bool infer_transpose(InferCtx *cx)
{
	const TensorType *t = operand_type(cx, 0);
	int r = t->shape.rank;
	const int64_t *v;
	int k = attr_ints(cx->n, "perm", &v);
	if (k >= 0) {
		char ty[160], ps[256];
		type_str(t, ty, sizeof ty);
		ints_str(v, k, ps, sizeof ps);
		if (k != r)
			return infer_error_at_attr(cx, "perm",
						   "attribute 'perm' = %s has %d entries but operand 1 ('%s') is %s, of rank %d",
						   ps, k, cx->n->in[0]->name, ty, r);
		bool seen[MAX_RANK] = {false};
		for (int i = 0; i < k; i++) {
			if (v[i] < 0 || v[i] >= r || seen[v[i]])
				return infer_error_at_attr(cx, "perm",
							   "attribute 'perm' = %s is not a permutation of 0..%d "
							   "(operand 1 ('%s') is %s)",
							   ps, r - 1, cx->n->in[0]->name, ty);
			seen[v[i]] = true;
		}
	}
	int perm[MAX_RANK];
	transpose_perm(cx->n, r, perm);
	Shape s = {.rank = r};
	for (int i = 0; i < r; i++)
		s.dim[i] = t->shape.dim[perm[i]];
	set_result(cx, 0, t->dtype, &s);
	return true;
}

bool kernel_transpose(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *is = &in[0]->type.shape, *os = &out[0]->type.shape;
	size_t es = dtype_size(in[0]->type.dtype);
	if (tensor_numel(out[0]) == 0)
		return true;
	int perm[MAX_RANK];
	transpose_perm(n, is->rank, perm);
	int64_t st[MAX_RANK], idx[MAX_RANK] = {0}, i = 0;
	shape_strides(is, st);
	do {
		int64_t off = 0;
		for (int k = 0; k < os->rank; k++)
			off += idx[k] * st[perm[k]];
		copy_elem(out[0]->data, i++, in[0]->data, off, es);
	} while (index_next(os, idx));
	return true;
}

/* ---- flatten ---------------------------------------------------------- */
bool infer_flatten(InferCtx *cx)
{
	const TensorType *t = operand_type(cx, 0);
	int r = t->shape.rank;
	int64_t axis = attr_i(cx->n, "axis");
	if (axis < -r || axis > r)
		return infer_error_at_attr(cx, "axis", "attribute 'axis' = %lld is out of range [%d, %d]",
					   (long long)axis, -r, r);
	int a = (int)(axis < 0 ? axis + r : axis);
	Shape s = {.rank = 2, .dim = {1, 1}};
	for (int i = 0; i < r; i++)
		s.dim[i < a ? 0 : 1] *= t->shape.dim[i];
	set_result(cx, 0, t->dtype, &s);
	return true;
}

/* ---- concat ----------------------------------------------------------- */
bool infer_concat(InferCtx *cx)
{
	const Node *n = cx->n;
	const TensorType *t0 = operand_type(cx, 0);
	for (int i = 1; i < n->nin; i++)
		if (!require_same_dtype(cx, 0, i))
			return false;
	int r = t0->shape.rank;
	for (int i = 1; i < n->nin; i++)
		if (operand_type(cx, i)->shape.rank != r) {
			char a[160], b[160];
			return infer_error_at_operand(cx, i,
						      "shape mismatch: operand 1 ('%s') is %s and operand %d ('%s') is %s: "
						      "ranks differ",
						      n->in[0]->name, optype(cx, 0, a, sizeof a), i + 1, n->in[i]->name,
						      optype(cx, i, b, sizeof b));
		}
	int ax;
	if (!normalize_axis(cx, "axis", attr_i(n, "axis"), r, &ax))
		return false;
	Shape s = t0->shape;
	for (int i = 1; i < n->nin; i++) {
		const Shape *si = &operand_type(cx, i)->shape;
		for (int k = 0; k < r; k++)
			if (k != ax && si->dim[k] != s.dim[k]) {
				char a[160], b[160];
				return infer_error_at_operand(
					cx, i,
					"shape mismatch: operand 1 ('%s') is %s and operand %d ('%s') is %s: "
					"sizes differ on axis %d (concatenating on axis %d)",
					n->in[0]->name, optype(cx, 0, a, sizeof a), i + 1, n->in[i]->name,
					optype(cx, i, b, sizeof b), k, ax);
			}
		if (!add_ok(s.dim[ax], si->dim[ax], &s.dim[ax]))
			return infer_error(cx, "the result is too large on axis %d", ax);
	}
	set_result(cx, 0, t0->dtype, &s);
	return true;
}

bool kernel_concat(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *os = &out[0]->type.shape;
	int64_t axis = attr_i(n, "axis");
	int ax = (int)(axis < 0 ? axis + os->rank : axis);
	size_t es = dtype_size(out[0]->type.dtype);
	if (tensor_numel(out[0]) == 0)
		return true;
	int64_t outer = 1, inner = 1;
	for (int k = 0; k < ax; k++)
		outer *= os->dim[k];
	for (int k = ax + 1; k < os->rank; k++)
		inner *= os->dim[k];
	char *dst = out[0]->data;
	for (int64_t o = 0; o < outer; o++)
		for (int i = 0; i < n->nin; i++) {
			size_t chunk = (size_t)(in[i]->type.shape.dim[ax] * inner) * es;
			if (!chunk)
				continue;
			memcpy(dst, (const char *)in[i]->data + (size_t)o * chunk, chunk);
			dst += chunk;
		}
	return true;
}

/* ---- split ------------------------------------------------------------ */
bool infer_split(InferCtx *cx)
{
	const Node *n = cx->n;
	const TensorType *t = operand_type(cx, 0);
	int ax;
	if (!normalize_axis(cx, "axis", attr_i(n, "axis"), t->shape.rank, &ax))
		return false;
	int64_t dim = t->shape.dim[ax];
	int nout = n->nout;
	char ty[160];
	type_str(t, ty, sizeof ty);
	const int64_t *v;
	int k = attr_ints(n, "split", &v);
	bool has_num = attr_present(n, "num_outputs");
	int64_t *sizes = xcalloc(nout, sizeof *sizes);
	bool ok = true;
	if (k >= 0) {
		char ss[256];
		ints_str(v, k, ss, sizeof ss);
		int64_t sum = 0;
		if (has_num)
			ok = infer_error_at_attr(cx, "num_outputs",
						 "attributes 'split' and 'num_outputs' cannot both be given");
		else if (k != nout)
			ok = infer_error_at_attr(cx, "split", "attribute 'split' = %s has %d entries but there are %d results",
						 ss, k, nout);
		for (int i = 0; ok && i < k; i++) {
			if (!add_ok(sum, v[i], &sum)) {
				sum = -1;
				break;
			}
			sizes[i] = v[i];
		}
		if (ok && sum != dim)
			ok = infer_error_at_attr(cx, "split",
						 "attribute 'split' = %s does not sum to %lld, the size of axis %d of "
						 "operand 1 ('%s') %s",
						 ss, (long long)dim, ax, n->in[0]->name, ty);
	} else {
		int64_t parts = has_num ? attr_i(n, "num_outputs") : nout;
		if (parts != nout)
			ok = infer_error_at_attr(cx, "num_outputs", "attribute 'num_outputs' = %lld but there are %d results",
						 (long long)parts, nout);
		if (ok) {
			/* ONNX opset 18: chunks of ceil(dim / parts), the last one
			 * takes what is left (smaller, possibly 0). */
			int64_t chunk = dim / parts + (dim % parts != 0), used = 0;
			if (!mul_ok(chunk, parts - 1, &used) || used > dim)
				ok = infer_error(cx,
						 "axis %d of operand 1 ('%s') %s cannot be split into %lld parts: "
						 "chunks of ceil(%lld/%lld) = %lld leave nothing for the last one",
						 ax, n->in[0]->name, ty, (long long)parts, (long long)dim,
						 (long long)parts, (long long)chunk);
			for (int i = 0; ok && i < nout; i++)
				sizes[i] = i < nout - 1 ? chunk : dim - used;
		}
	}
	if (ok)
		for (int i = 0; i < nout; i++) {
			Shape s = t->shape;
			s.dim[ax] = sizes[i];
			set_result(cx, i, t->dtype, &s);
		}
	free(sizes);
	return ok;
}

bool kernel_split(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *is = &in[0]->type.shape;
	int64_t axis = attr_i(n, "axis");
	int ax = (int)(axis < 0 ? axis + is->rank : axis);
	size_t es = dtype_size(in[0]->type.dtype);
	if (tensor_numel(in[0]) == 0)
		return true;
	int64_t outer = 1, inner = 1;
	for (int k = 0; k < ax; k++)
		outer *= is->dim[k];
	for (int k = ax + 1; k < is->rank; k++)
		inner *= is->dim[k];
	const char *src = in[0]->data;
	for (int64_t o = 0; o < outer; o++)
		for (int j = 0; j < n->nout; j++) {
			size_t chunk = (size_t)(out[j]->type.shape.dim[ax] * inner) * es;
			if (!chunk)
				continue;
			memcpy((char *)out[j]->data + (size_t)o * chunk, src, chunk);
			src += chunk;
		}
	return true;
}

/* ---- slice ------------------------------------------------------------ */
/* ONNX clamping of one axis of size d: the first index read and the count. */
static void slice_axis(int64_t d, int64_t s, int64_t e, int64_t step, int64_t *start, int64_t *count)
{
	if (d == 0) {
		*start = 0;
		*count = 0;
		return;
	}
	if (s < 0)
		s += d;
	if (e < 0)
		e += d;
	if (step > 0) {
		s = s < 0 ? 0 : s > d ? d : s;
		e = e < 0 ? 0 : e > d ? d : e;
		*count = e > s ? (int64_t)((uint64_t)(e - s - 1) / (uint64_t)step + 1) : 0;
	} else {
		s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
		e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
		uint64_t mag = (uint64_t)0 - (uint64_t)step;
		*count = s > e ? (int64_t)((uint64_t)(s - e - 1) / mag + 1) : 0;
	}
	*start = s;
}

/* Per-axis first index, step and count of a verified slice of shape `in`. */
void slice_params(const Node *n, const Shape *in, int64_t *start, int64_t *step, int64_t *count)
{
	const int64_t *st, *en, *ax, *sp;
	int k = attr_ints(n, "starts", &st);
	attr_ints(n, "ends", &en);
	bool has_axes = attr_ints(n, "axes", &ax) >= 0, has_steps = attr_ints(n, "steps", &sp) >= 0;
	for (int i = 0; i < in->rank; i++) {
		start[i] = 0;
		step[i] = 1;
		count[i] = in->dim[i];
	}
	for (int i = 0; i < k; i++) {
		int a = has_axes ? (int)(ax[i] < 0 ? ax[i] + in->rank : ax[i]) : i;
		step[a] = has_steps ? sp[i] : 1;
		slice_axis(in->dim[a], st[i], en[i], step[a], &start[a], &count[a]);
	}
}

bool infer_slice(InferCtx *cx)
{
	const Node *n = cx->n;
	const TensorType *t = operand_type(cx, 0);
	int r = t->shape.rank;
	const int64_t *st, *en, *ax, *sp;
	int k = attr_ints(n, "starts", &st), ke = attr_ints(n, "ends", &en);
	int ka = attr_ints(n, "axes", &ax), ks = attr_ints(n, "steps", &sp);
	char ty[160], buf[256];
	type_str(t, ty, sizeof ty);
	if (ke != k)
		return infer_error_at_attr(cx, "ends", "attribute 'ends' has %d entries but 'starts' has %d", ke, k);
	if (ka >= 0 && ka != k)
		return infer_error_at_attr(cx, "axes", "attribute 'axes' has %d entries but 'starts' has %d", ka, k);
	if (ks >= 0 && ks != k)
		return infer_error_at_attr(cx, "steps", "attribute 'steps' has %d entries but 'starts' has %d", ks, k);
	if (ka < 0 && k > r)
		return infer_error_at_attr(cx, "starts",
					   "attribute 'starts' has %d entries but operand 1 ('%s') is %s, of rank %d", k,
					   n->in[0]->name, ty, r);
	bool seen[MAX_RANK] = {false};
	for (int i = 0; i < k; i++) {
		int a = i;
		if (ka >= 0 && !normalize_axis(cx, "axes", ax[i], r, &a))
			return false;
		if (seen[a])
			return infer_error_at_attr(cx, "axes", "attribute 'axes' = %s repeats axis %d",
						   ints_str(ax, ka, buf, sizeof buf), a);
		seen[a] = true;
		if (ks >= 0 && sp[i] == 0)
			return infer_error_at_attr(cx, "steps", "attribute 'steps' = %s: entry %d is 0 (a step must not be 0)",
						   ints_str(sp, ks, buf, sizeof buf), i);
	}
	int64_t start[MAX_RANK], step[MAX_RANK];
	Shape s = {.rank = r};
	slice_params(n, &t->shape, start, step, s.dim);
	set_result(cx, 0, t->dtype, &s);
	return true;
}

bool kernel_slice(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *is = &in[0]->type.shape, *os = &out[0]->type.shape;
	size_t es = dtype_size(in[0]->type.dtype);
	if (tensor_numel(out[0]) == 0)
		return true;
	int64_t start[MAX_RANK], step[MAX_RANK], count[MAX_RANK], st[MAX_RANK];
	slice_params(n, is, start, step, count);
	shape_strides(is, st);
	int64_t idx[MAX_RANK] = {0}, i = 0;
	do {
		int64_t off = 0;
		for (int k = 0; k < os->rank; k++)
			off += (start[k] + idx[k] * step[k]) * st[k];
		copy_elem(out[0]->data, i++, in[0]->data, off, es);
	} while (index_next(os, idx));
	return true;
}

/* ---- squeeze / unsqueeze ---------------------------------------------- */
bool infer_squeeze(InferCtx *cx)
{
	const Node *n = cx->n;
	const TensorType *t = operand_type(cx, 0);
	int r = t->shape.rank;
	const int64_t *v;
	int k = attr_ints(n, "axes", &v);
	bool drop[MAX_RANK] = {false};
	char ty[160], buf[256];
	type_str(t, ty, sizeof ty);
	if (k < 0) {
		for (int i = 0; i < r; i++)
			drop[i] = t->shape.dim[i] == 1;
	} else {
		ints_str(v, k, buf, sizeof buf);
		for (int i = 0; i < k; i++) {
			int a;
			if (!normalize_axis(cx, "axes", v[i], r, &a))
				return false;
			if (drop[a])
				return infer_error_at_attr(cx, "axes", "attribute 'axes' = %s repeats axis %d", buf, a);
			if (t->shape.dim[a] != 1)
				return infer_error_at_attr(cx, "axes",
							   "cannot squeeze axis %d of operand 1 ('%s') %s: its size is %lld, not 1",
							   a, n->in[0]->name, ty, (long long)t->shape.dim[a]);
			drop[a] = true;
		}
	}
	Shape s = {.rank = 0};
	for (int i = 0; i < r; i++)
		if (!drop[i])
			s.dim[s.rank++] = t->shape.dim[i];
	set_result(cx, 0, t->dtype, &s);
	return true;
}

bool infer_unsqueeze(InferCtx *cx)
{
	const Node *n = cx->n;
	const TensorType *t = operand_type(cx, 0);
	int r = t->shape.rank;
	const int64_t *v;
	int k = attr_ints(n, "axes", &v);
	char ty[160], buf[256];
	type_str(t, ty, sizeof ty);
	ints_str(v, k, buf, sizeof buf);
	if (r + k > MAX_RANK)
		return infer_error_at_attr(cx, "axes",
					   "attribute 'axes' = %s would give operand 1 ('%s') %s rank %d, above the maximum %d",
					   buf, n->in[0]->name, ty, r + k, MAX_RANK);
	int R = r + k;
	bool ins[MAX_RANK] = {false};
	for (int i = 0; i < k; i++) {
		int a;
		if (!normalize_axis(cx, "axes", v[i], R, &a))
			return false;
		if (ins[a])
			return infer_error_at_attr(cx, "axes", "attribute 'axes' = %s repeats axis %d", buf, a);
		ins[a] = true;
	}
	Shape s = {.rank = R};
	for (int i = 0, j = 0; i < R; i++)
		s.dim[i] = ins[i] ? 1 : t->shape.dim[j++];
	set_result(cx, 0, t->dtype, &s);
	return true;
}

/* ---- gather ----------------------------------------------------------- */
bool infer_gather(InferCtx *cx)
{
	const Node *n = cx->n;
	const TensorType *t = operand_type(cx, 0), *it = operand_type(cx, 1);
	if (!require_dtype(cx, 1, DTMASK_INDEX))
		return false;
	int r = t->shape.rank, q = it->shape.rank, ax;
	if (!normalize_axis(cx, "axis", attr_i(n, "axis"), r, &ax))
		return false;
	if (r - 1 + q > MAX_RANK) {
		char a[160], b[160];
		return infer_error(cx, "operand 1 ('%s') %s with indices %s gives rank %d, above the maximum %d",
				   n->in[0]->name, optype(cx, 0, a, sizeof a), optype(cx, 1, b, sizeof b), r - 1 + q,
				   MAX_RANK);
	}
	Shape s = {.rank = 0};
	for (int i = 0; i < ax; i++)
		s.dim[s.rank++] = t->shape.dim[i];
	for (int i = 0; i < q; i++)
		s.dim[s.rank++] = it->shape.dim[i];
	for (int i = ax + 1; i < r; i++)
		s.dim[s.rank++] = t->shape.dim[i];
	if (!check_result_size(cx, &s))
		return false;
	set_result(cx, 0, t->dtype, &s);
	return true;
}

bool kernel_gather(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	const Shape *ds = &in[0]->type.shape;
	int64_t axis = attr_i(n, "axis");
	int ax = (int)(axis < 0 ? axis + ds->rank : axis);
	int64_t dim = ds->dim[ax], nidx = tensor_numel(in[1]);
	for (int64_t j = 0; j < nidx; j++) {
		int64_t x = tensor_get_i(in[1], j);
		if (x < -dim || x >= dim)
			return kernel_error(d, n, "index %lld is out of range [%lld, %lld] for axis %d of %s data",
					    (long long)x, (long long)-dim, (long long)dim - 1, ax,
					    dtype_name(in[0]->type.dtype));
	}
	if (tensor_numel(out[0]) == 0)
		return true;
	int64_t outer = 1, inner = 1;
	for (int k = 0; k < ax; k++)
		outer *= ds->dim[k];
	for (int k = ax + 1; k < ds->rank; k++)
		inner *= ds->dim[k];
	size_t es = dtype_size(in[0]->type.dtype), chunk = (size_t)inner * es;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < nidx; j++) {
			int64_t x = tensor_get_i(in[1], j);
			if (x < 0)
				x += dim;
			memcpy((char *)out[0]->data + (size_t)(o * nidx + j) * chunk,
			       (const char *)in[0]->data + (size_t)(o * dim + x) * chunk, chunk);
		}
	return true;
}

/* ---- expand ----------------------------------------------------------- */
bool infer_expand(InferCtx *cx)
{
	const Node *n = cx->n;
	const TensorType *t = operand_type(cx, 0);
	const int64_t *v;
	int k = attr_ints(n, "shape", &v);
	char ty[160], buf[256];
	type_str(t, ty, sizeof ty);
	ints_str(v, k, buf, sizeof buf);
	if (k > MAX_RANK)
		return infer_error_at_attr(cx, "shape", "attribute 'shape' = %s has %d entries, above the maximum rank %d",
					   buf, k, MAX_RANK);
	Shape want = shape_make(k, v), s;
	if (!shape_broadcast(&t->shape, &want, &s))
		return infer_error_at_attr(cx, "shape",
					   "shape mismatch: operand 1 ('%s') is %s and attribute 'shape' is %s: not broadcastable",
					   n->in[0]->name, ty, buf);
	if (!check_result_size(cx, &s))
		return false;
	set_result(cx, 0, t->dtype, &s);
	return true;
}

bool kernel_expand(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	const Shape *os = &out[0]->type.shape;
	size_t es = dtype_size(in[0]->type.dtype);
	if (tensor_numel(out[0]) == 0)
		return true;
	int64_t st[MAX_RANK], idx[MAX_RANK] = {0}, i = 0;
	broadcast_strides(&in[0]->type.shape, os, st);
	do {
		int64_t off = 0;
		for (int k = 0; k < os->rank; k++)
			off += idx[k] * st[k];
		copy_elem(out[0]->data, i++, in[0]->data, off, es);
	} while (index_next(os, idx));
	return true;
}

/* ---- pad -------------------------------------------------------------- */
/* Per-axis begin and end pads of a verified pad node (0 for axes not in
 * `axes`). */
void pad_params(const Node *n, int rank, int64_t *begin, int64_t *end)
{
	const int64_t *p, *ax;
	int np = attr_ints(n, "pads", &p), na = attr_ints(n, "axes", &ax);
	for (int i = 0; i < rank; i++)
		begin[i] = end[i] = 0;
	int k = np / 2;
	for (int i = 0; i < k; i++) {
		int a = na >= 0 ? (int)(ax[i] < 0 ? ax[i] + rank : ax[i]) : i;
		begin[a] = p[i];
		end[a] = p[i + k];
	}
}

bool infer_pad(InferCtx *cx)
{
	const Node *n = cx->n;
	const TensorType *t = operand_type(cx, 0);
	int r = t->shape.rank;
	const int64_t *p, *ax;
	int np = attr_ints(n, "pads", &p), na = attr_ints(n, "axes", &ax);
	const char *mode = attr_s(n, "mode");
	char ty[160], ps[256], buf[256];
	type_str(t, ty, sizeof ty);
	ints_str(p, np, ps, sizeof ps);
	int k = na >= 0 ? na : r;
	if (na >= 0) {
		bool seen[MAX_RANK] = {false};
		ints_str(ax, na, buf, sizeof buf);
		for (int i = 0; i < na; i++) {
			int a;
			if (!normalize_axis(cx, "axes", ax[i], r, &a))
				return false;
			if (seen[a])
				return infer_error_at_attr(cx, "axes", "attribute 'axes' = %s repeats axis %d", buf, a);
			seen[a] = true;
		}
	}
	if (np != 2 * k)
		return infer_error_at_attr(cx, "pads",
					   "attribute 'pads' = %s has %d entries, expected %d (begin and end for each of %d "
					   "axes of operand 1 ('%s') %s)",
					   ps, np, 2 * k, k, n->in[0]->name, ty);
	if (strcmp(mode, "constant") == 0 && !check_fill_value(cx, "value", attr_f(n, "value"), t->dtype))
		return false;
	int64_t begin[MAX_RANK], end[MAX_RANK];
	pad_params(n, r, begin, end);
	Shape s = {.rank = r};
	for (int a = 0; a < r; a++) {
		int64_t d = t->shape.dim[a], b = begin[a], e = end[a];
		int64_t cb = b < 0 ? b : 0, ce = e < 0 ? e : 0, m;
		if (!add_ok(d, cb, &m) || !add_ok(m, ce, &m) || m < 0)
			return infer_error_at_attr(cx, "pads",
						   "attribute 'pads' = %s crops more than the size %lld of axis %d of operand 1 "
						   "('%s') %s",
						   ps, (long long)d, a, n->in[0]->name, ty);
		int64_t pb = b > 0 ? b : 0, pe = e > 0 ? e : 0;
		if (strcmp(mode, "reflect") == 0 && (pb >= m || pe >= m) && (pb || pe))
			return infer_error_at_attr(cx, "pads",
						   "attribute 'pads' = %s: mode \"reflect\" needs pads smaller than the size of "
						   "the axis, but axis %d of operand 1 ('%s') %s has size %lld%s and is padded by "
						   "%lld and %lld",
						   ps, a, n->in[0]->name, ty, (long long)m, m != d ? " after cropping" : "",
						   (long long)pb, (long long)pe);
		if (strcmp(mode, "edge") == 0 && m == 0 && (pb || pe))
			return infer_error_at_attr(cx, "pads",
						   "attribute 'pads' = %s: mode \"edge\" cannot pad axis %d of operand 1 ('%s') "
						   "%s: it is empty%s",
						   ps, a, n->in[0]->name, ty, d ? " after cropping" : "");
		if (!add_ok(m, pb, &m) || !add_ok(m, pe, &m))
			return infer_error_at_attr(cx, "pads", "attribute 'pads' = %s makes axis %d too large", ps, a);
		s.dim[a] = m;
	}
	if (!check_result_size(cx, &s))
		return false;
	set_result(cx, 0, t->dtype, &s);
	return true;
}

bool kernel_pad(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *is = &in[0]->type.shape, *os = &out[0]->type.shape;
	int r = is->rank;
	size_t es = dtype_size(in[0]->type.dtype);
	const char *mode = attr_s(n, "mode");
	int md = strcmp(mode, "reflect") == 0 ? 1 : strcmp(mode, "edge") == 0 ? 2 : 0;
	double value = attr_f(n, "value");
	if (tensor_numel(out[0]) == 0)
		return true;
	int64_t begin[MAX_RANK], end[MAX_RANK], lo[MAX_RANK], m[MAX_RANK], st[MAX_RANK];
	pad_params(n, r, begin, end);
	shape_strides(is, st);
	for (int a = 0; a < r; a++) {
		lo[a] = begin[a] < 0 ? -begin[a] : 0;
		m[a] = is->dim[a] - lo[a] - (end[a] < 0 ? -end[a] : 0);
	}
	int64_t idx[MAX_RANK] = {0}, i = 0;
	do {
		int64_t off = 0;
		bool inside = true;
		for (int a = 0; a < r; a++) {
			/* p: position in the cropped input along axis a */
			int64_t p = idx[a] - (begin[a] > 0 ? begin[a] : 0);
			if (p < 0 || p >= m[a]) {
				if (md == 0)
					inside = false;
				else if (md == 2)
					p = p < 0 ? 0 : m[a] - 1;
				else
					p = p < 0 ? -p : 2 * (m[a] - 1) - p;
			}
			off += (lo[a] + p) * st[a];
		}
		if (inside)
			copy_elem(out[0]->data, i, in[0]->data, off, es);
		else
			tensor_set_f(out[0], i, value);
		i++;
	} while (index_next(os, idx));
	return true;
}

/* ---- shape ------------------------------------------------------------ */
/* ONNX opset 15: negative counts from the end, then clamp to [0, rank]. */
static void shape_range(const Node *n, int r, int64_t *start, int64_t *len)
{
	int64_t s = attr_i(n, "start"), e = attr_present(n, "end") ? attr_i(n, "end") : r;
	if (s < 0)
		s += r;
	if (e < 0)
		e += r;
	s = s < 0 ? 0 : s > r ? r : s;
	e = e < 0 ? 0 : e > r ? r : e;
	*start = s;
	*len = e > s ? e - s : 0;
}

bool infer_shape(InferCtx *cx)
{
	int64_t start, len;
	shape_range(cx->n, operand_type(cx, 0)->shape.rank, &start, &len);
	Shape s = {.rank = 1, .dim = {len}};
	set_result(cx, 0, DT_I64, &s);
	return true;
}

bool kernel_shape(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *is = &in[0]->type.shape;
	int64_t start, len;
	shape_range(n, is->rank, &start, &len);
	for (int64_t i = 0; i < len; i++)
		((int64_t *)out[0]->data)[i] = is->dim[start + i];
	return true;
}

/* ---- constant_of_shape ------------------------------------------------ */
bool infer_constant_of_shape(InferCtx *cx)
{
	const Node *n = cx->n;
	const int64_t *v;
	int k = attr_ints(n, "shape", &v);
	DType dt = attr_dt(n, "dtype");
	char buf[256];
	if (k > MAX_RANK)
		return infer_error_at_attr(cx, "shape", "attribute 'shape' = %s has %d entries, above the maximum rank %d",
					   ints_str(v, k, buf, sizeof buf), k, MAX_RANK);
	if (!dtype_has_kernels(dt))
		return infer_error_at_attr(cx, "dtype", "attribute 'dtype' = %s: no op supports that dtype yet",
					   dtype_name(dt));
	if (!check_fill_value(cx, "value", attr_f(n, "value"), dt))
		return false;
	Shape s = shape_make(k, v);
	if (!check_result_size(cx, &s))
		return false;
	set_result(cx, 0, dt, &s);
	return true;
}

bool kernel_constant_of_shape(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)d;
	double value = attr_f(n, "value");
	int64_t numel = tensor_numel(out[0]);
	for (int64_t i = 0; i < numel; i++)
		tensor_set_f(out[0], i, value);
	return true;
}
