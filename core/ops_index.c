/* Ops of indices and positions: size, range, argmax / argmin, hardmax,
 * trilu, gather_elements and tile.  Attribute specs, shape/dtype rules and
 * reference kernels. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "util.h"

const AttrSpec range_attrs[] = {
	{.name = "start", .kind = ATTR_FLOAT, .required = true},
	{.name = "limit", .kind = ATTR_FLOAT, .required = true},
	{.name = "delta", .kind = ATTR_FLOAT, .required = true},
	{.name = "dtype", .kind = ATTR_DTYPE, .has_default = true, .def_dt = DT_F32},
	{0}};
const AttrSpec argmax_attrs[] = {
	{.name = "axis", .kind = ATTR_INT, .has_default = true, .def_i = 0},
	{.name = "keepdims", .kind = ATTR_INT, .has_default = true, .def_i = 1, .has_range = true, .min = 0, .max = 1},
	{.name = "select_last_index", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
	{0}};
const AttrSpec hardmax_attrs[] = {
	{.name = "axis", .kind = ATTR_INT, .has_default = true, .def_i = -1},
	{0}};
const AttrSpec trilu_attrs[] = {
	{.name = "upper", .kind = ATTR_INT, .has_default = true, .def_i = 1, .has_range = true, .min = 0, .max = 1},
	{.name = "k", .kind = ATTR_INT, .has_default = true, .def_i = 0},
	{0}};
const AttrSpec gather_elements_attrs[] = {
	{.name = "axis", .kind = ATTR_INT, .has_default = true, .def_i = 0},
	{0}};
const AttrSpec tile_attrs[] = {
	{.name = "repeats", .kind = ATTR_INTS, .required = true, .has_range = true, .min = 0, .max = INT64_MAX},
	{0}};

static bool mul_ok(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

static bool result_fits(InferCtx *cx, const Shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		if (!mul_ok(n, s->dim[i], &n)) {
			char sh[160];
			return infer_error(cx, "the result shape %s has too many elements", shape_str(s, sh, sizeof sh));
		}
	return true;
}

/* ---- size: the element count as i64[] ------------------------------------- */
bool infer_size(InferCtx *cx)
{
	Shape s = {.rank = 0};
	set_result(cx, 0, DT_I64, &s);
	return true;
}

bool kernel_size(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	((int64_t *)out[0]->data)[0] = tensor_numel(in[0]);
	return true;
}

/* ---- range: start, start + delta, ... while before limit ------------------ */
static int64_t range_count(const Node *n)
{
	double start = attr_f(n, "start"), limit = attr_f(n, "limit"), delta = attr_f(n, "delta");
	double c = ceil((limit - start) / delta);
	return c > 0 ? (int64_t)c : 0;
}

bool infer_range(InferCtx *cx)
{
	const Node *n = cx->n;
	DType dt = attr_dt(n, "dtype");
	if (!(DTMASK(dt) & DTMASK_NUM))
		return infer_error_at_attr(cx, "dtype", "attribute 'dtype' = %s: range makes f32, i32 or i64", dtype_name(dt));
	double start = attr_f(n, "start"), limit = attr_f(n, "limit"), delta = attr_f(n, "delta");
	if (delta == 0 || !isfinite(start) || !isfinite(limit) || !isfinite(delta))
		return infer_error(cx, "range(%g, %g, %g): the start, limit and delta must be finite and the delta not 0",
				   start, limit, delta);
	double c = ceil((limit - start) / delta);
	if (c > 4.0e18)
		return infer_error(cx, "range(%g, %g, %g) has too many elements", start, limit, delta);
	Shape s = {.rank = 1, .dim = {range_count(n)}};
	if (!result_fits(cx, &s))
		return false;
	set_result(cx, 0, dt, &s);
	return true;
}

bool kernel_range(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)in;
	(void)d;
	double start = attr_f(n, "start"), delta = attr_f(n, "delta");
	int64_t cnt = tensor_numel(out[0]);
	for (int64_t i = 0; i < cnt; i++) {
		if (out[0]->type.dtype == DT_F32)
			f32(out[0])[i] = (float)(start + (double)i * delta);
		else /* (wrapping) */
			tensor_set_i(out[0], i, (int64_t)((uint64_t)(int64_t)start + (uint64_t)i * (uint64_t)(int64_t)delta));
	}
	return true;
}

/* ---- argmax, argmin: i64 positions along axis ------------------------------- */
bool infer_argmax(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_NUM))
		return false;
	const Shape *s = &operand_type(cx, 0)->shape;
	int ax;
	if (!normalize_axis(cx, "axis", attr_i(cx->n, "axis"), s->rank, &ax))
		return false;
	if (s->rank && s->dim[ax] == 0)
		return infer_error_at_operand(cx, 0, "arg%s over an empty axis %d", cx->n->op == OP_ARGMAX ? "max" : "min",
					      ax);
	Shape r = {.rank = 0};
	for (int i = 0; i < s->rank; i++)
		if (i != ax)
			r.dim[r.rank++] = s->dim[i];
		else if (attr_i(cx->n, "keepdims"))
			r.dim[r.rank++] = 1;
	set_result(cx, 0, DT_I64, &r);
	return true;
}

/* (outer, n, inner): the elements before, along and after axis */
static void split3(const Shape *s, int ax, int64_t *outer, int64_t *n, int64_t *inner)
{
	*outer = *inner = 1;
	*n = s->rank ? s->dim[ax] : 1;
	for (int i = 0; i < s->rank; i++)
		if (i < ax)
			*outer *= s->dim[i];
		else if (i > ax)
			*inner *= s->dim[i];
}

/* The position of the first (or last) maximum (or minimum) of each row:
 * as the compiled loop compares, so NaN never wins. */
static int64_t arg_of(const Tensor *x, int64_t base, int64_t n, int64_t stride, bool max, bool last)
{
	int64_t best = 0;
	double bv = tensor_get_f(x, base);
	int64_t bi = tensor_get_i(x, base);
	bool fl = x->type.dtype == DT_F32;
	for (int64_t r = 1; r < n; r++) {
		int64_t at = base + r * stride;
		bool take;
		if (fl) {
			double v = tensor_get_f(x, at);
			take = max ? (last ? bv <= v : bv < v) : (last ? v <= bv : v < bv);
			if (take)
				bv = v;
		} else {
			int64_t v = tensor_get_i(x, at);
			take = max ? (last ? bi <= v : bi < v) : (last ? v <= bi : v < bi);
			if (take)
				bi = v;
		}
		if (take)
			best = r;
	}
	return best;
}

static bool arg_kernel(const Node *n, Tensor *const *in, Tensor *const *out)
{
	const Shape *s = &in[0]->type.shape;
	int ax = s->rank ? (int)(attr_i(n, "axis") < 0 ? attr_i(n, "axis") + s->rank : attr_i(n, "axis")) : 0;
	int64_t outer, cnt, inner;
	split3(s, ax, &outer, &cnt, &inner);
	bool last = attr_i(n, "select_last_index");
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++)
			((int64_t *)out[0]->data)[o * inner + i] =
				arg_of(in[0], o * cnt * inner + i, cnt, inner, n->op == OP_ARGMAX, last);
	return true;
}

bool kernel_argmax(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	return arg_kernel(n, in, out);
}

bool kernel_argmin(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	return arg_kernel(n, in, out);
}

/* ---- hardmax: 1 at the first maximum along axis, else 0 -------------------- */
bool infer_hardmax(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_FLOAT))
		return false;
	const Shape *s = &operand_type(cx, 0)->shape;
	int ax;
	if (s->rank && !normalize_axis(cx, "axis", attr_i(cx->n, "axis"), s->rank, &ax))
		return false;
	set_result(cx, 0, DT_F32, s);
	return true;
}

bool kernel_hardmax(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *s = &in[0]->type.shape;
	int ax = s->rank ? (int)(attr_i(n, "axis") < 0 ? attr_i(n, "axis") + s->rank : attr_i(n, "axis")) : 0;
	int64_t outer, cnt, inner;
	split3(s, ax, &outer, &cnt, &inner);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			int64_t base = o * cnt * inner + i;
			int64_t best = cnt ? arg_of(in[0], base, cnt, inner, true, false) : 0;
			for (int64_t r = 0; r < cnt; r++)
				f32(out[0])[base + r * inner] = r == best ? 1.0f : 0.0f;
		}
	return true;
}

/* ---- trilu: the upper (j - i >= k) or lower (j - i <= k) triangle -------- */
bool infer_trilu(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_ANY) || !require_rank(cx, 0, 2, MAX_RANK))
		return false;
	set_result(cx, 0, operand_type(cx, 0)->dtype, &operand_type(cx, 0)->shape);
	return true;
}

bool kernel_trilu(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *s = &in[0]->type.shape;
	int64_t rows = s->dim[s->rank - 2], cols = s->dim[s->rank - 1], k = attr_i(n, "k");
	bool upper = attr_i(n, "upper");
	size_t es = dtype_size(in[0]->type.dtype);
	int64_t total = tensor_numel(in[0]);
	if (total > 0) /* (an empty tensor may have no data at all) */
		memset(out[0]->data, 0, (size_t)total * es);
	for (int64_t e = 0; e < total; e++) {
		int64_t j = e % cols, i = e / cols % rows;
		/* j - i compared with k, without overflow for any k */
		bool keep = upper ? (j - i >= k) : (j - i <= k);
		if (keep)
			memcpy((char *)out[0]->data + (size_t)e * es, (const char *)in[0]->data + (size_t)e * es, es);
	}
	return true;
}

/* ---- gather_elements: out[..i..] = data[.. indices[..i..] at axis ..] ------ */
bool infer_gather_elements(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_ANY) || !require_dtype(cx, 1, DTMASK_INDEX))
		return false;
	const Shape *ds = &operand_type(cx, 0)->shape, *is = &operand_type(cx, 1)->shape;
	if (ds->rank != is->rank || ds->rank == 0) {
		char a[160], b[160];
		type_str(operand_type(cx, 0), a, sizeof a);
		type_str(operand_type(cx, 1), b, sizeof b);
		return infer_error_at_operand(cx, 1, "shape mismatch: indices ('%s') %s and data ('%s') %s need one rank, at least 1",
					      cx->n->in[1]->name, b, cx->n->in[0]->name, a);
	}
	int ax;
	if (!normalize_axis(cx, "axis", attr_i(cx->n, "axis"), ds->rank, &ax))
		return false;
	for (int i = 0; i < ds->rank; i++)
		if (i != ax && is->dim[i] > ds->dim[i])
			return infer_error_at_operand(cx, 1, "shape mismatch: indices axis %d has %lld entries, data only %lld", i,
						      (long long)is->dim[i], (long long)ds->dim[i]);
	set_result(cx, 0, operand_type(cx, 0)->dtype, is);
	return true;
}

bool kernel_gather_elements(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	const Shape *ds = &in[0]->type.shape, *is = &in[1]->type.shape;
	int ax = (int)(attr_i(n, "axis") < 0 ? attr_i(n, "axis") + ds->rank : attr_i(n, "axis"));
	int64_t dst[MAX_RANK], idx[MAX_RANK] = {0};
	shape_strides(ds, dst);
	size_t es = dtype_size(in[0]->type.dtype);
	int64_t total = tensor_numel(in[1]);
	for (int64_t e = 0; e < total; e++, index_next(is, idx)) {
		int64_t x = tensor_get_i(in[1], e), dim = ds->dim[ax];
		if (x < -dim || x >= dim)
			return kernel_error(d, n, "index %lld is out of range [%lld, %lld] for axis %d", (long long)x,
					    (long long)-dim, (long long)dim - 1, ax);
		if (x < 0)
			x += dim;
		int64_t off = 0;
		for (int a = 0; a < ds->rank; a++)
			off += (a == ax ? x : idx[a]) * dst[a];
		memcpy((char *)out[0]->data + (size_t)e * es, (const char *)in[0]->data + (size_t)off * es, es);
	}
	return true;
}

/* ---- tile: repeats[a] copies of x along each axis a -------------------------- */
bool infer_tile(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_ANY))
		return false;
	const Shape *s = &operand_type(cx, 0)->shape;
	const int64_t *rep;
	int nr = attr_ints(cx->n, "repeats", &rep);
	if (nr != s->rank)
		return infer_error_at_attr(cx, "repeats", "attribute 'repeats' has %d entries, the operand's rank is %d", nr,
					   s->rank);
	Shape r = *s;
	for (int i = 0; i < s->rank; i++)
		if (!mul_ok(s->dim[i], rep[i], &r.dim[i]))
			return infer_error(cx, "the result has too many elements");
	if (!result_fits(cx, &r))
		return false;
	set_result(cx, 0, operand_type(cx, 0)->dtype, &r);
	return true;
}

bool kernel_tile(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	const Shape *s = &in[0]->type.shape, *os = &out[0]->type.shape;
	int64_t st[MAX_RANK], idx[MAX_RANK] = {0};
	shape_strides(s, st);
	size_t es = dtype_size(in[0]->type.dtype);
	int64_t total = tensor_numel(out[0]);
	for (int64_t e = 0; e < total; e++, index_next(os, idx)) {
		int64_t off = 0;
		for (int a = 0; a < s->rank; a++)
			off += idx[a] % s->dim[a] * st[a];
		memcpy((char *)out[0]->data + (size_t)e * es, (const char *)in[0]->data + (size_t)off * es, es);
	}
	return true;
}

/* ---- one_hot(indices, values): values[1] where the index along axis is
 * the position (negative indices count from depth), values[0] elsewhere */
const AttrSpec one_hot_attrs[] = {
	{.name = "depth", .kind = ATTR_INT, .required = true, .has_range = true, .min = 1, .max = INT32_MAX},
	{.name = "axis", .kind = ATTR_INT, .has_default = true, .def_i = -1},
	{0}};

bool infer_one_hot(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_NUM) || !require_dtype(cx, 1, DTMASK_ANY))
		return false;
	const Shape *is = &operand_type(cx, 0)->shape, *vs = &operand_type(cx, 1)->shape;
	if (shape_numel(vs) != 2) {
		char t[160];
		type_str(operand_type(cx, 1), t, sizeof t);
		return infer_error_at_operand(cx, 1, "values ('%s') is %s: one_hot takes [off, on], two elements",
					      cx->n->in[1]->name, t);
	}
	if (is->rank + 1 > MAX_RANK)
		return infer_error_at_operand(cx, 0, "one_hot of a rank-%d operand gives rank %d, above the maximum %d", is->rank,
					      is->rank + 1, MAX_RANK);
	int ax;
	if (!normalize_axis(cx, "axis", attr_i(cx->n, "axis"), is->rank + 1, &ax))
		return false;
	Shape r = {.rank = is->rank + 1};
	for (int i = 0, j = 0; i < r.rank; i++)
		r.dim[i] = i == ax ? attr_i(cx->n, "depth") : is->dim[j++];
	if (!result_fits(cx, &r))
		return false;
	set_result(cx, 0, operand_type(cx, 1)->dtype, &r);
	return true;
}

bool kernel_one_hot(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *os = &out[0]->type.shape;
	int ax = (int)(attr_i(n, "axis") < 0 ? attr_i(n, "axis") + os->rank : attr_i(n, "axis"));
	int64_t depth = attr_i(n, "depth"), outer, cnt, inner;
	split3(os, ax, &outer, &cnt, &inner);
	size_t es = dtype_size(out[0]->type.dtype);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t p = 0; p < cnt; p++)
			for (int64_t i = 0; i < inner; i++) {
				int64_t x = tensor_get_i(in[0], o * inner + i); /* f32: truncated */
				if (x < 0)
					x += depth;
				int64_t e = (o * cnt + p) * inner + i;
				memcpy((char *)out[0]->data + (size_t)e * es, (const char *)in[1]->data + (x == p ? es : 0), es);
			}
	return true;
}

/* ---- eye_like: ones on the diagonal j - i = k of x's 2-D shape -------------- */
const AttrSpec eye_like_attrs[] = {
	{.name = "dtype", .kind = ATTR_DTYPE},
	{.name = "k", .kind = ATTR_INT, .has_default = true, .def_i = 0},
	{0}};

bool infer_eye_like(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_ANY) || !require_rank(cx, 0, 2, 2))
		return false;
	DType dt = attr_present(cx->n, "dtype") ? attr_dt(cx->n, "dtype") : operand_type(cx, 0)->dtype;
	if (!(DTMASK(dt) & DTMASK_ANY))
		return infer_error_at_attr(cx, "dtype", "attribute 'dtype' = %s: eye_like makes f32, i32, i64 or bool",
					   dtype_name(dt));
	set_result(cx, 0, dt, &operand_type(cx, 0)->shape);
	return true;
}

bool kernel_eye_like(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	int64_t rows = in[0]->type.shape.dim[0], cols = in[0]->type.shape.dim[1], k = attr_i(n, "k");
	for (int64_t i = 0; i < rows; i++)
		for (int64_t j = 0; j < cols; j++)
			tensor_set_i(out[0], i * cols + j, j - i == k);
	return true;
}

/* ---- depth_to_space, space_to_depth: blocks of b x b between the channels
 * and the spatial axes (NCHW) -------------------------------------------------- */
const AttrSpec depth_to_space_attrs[] = {
	{.name = "blocksize", .kind = ATTR_INT, .required = true, .has_range = true, .min = 1, .max = INT32_MAX},
	{.name = "mode", .kind = ATTR_STRING, .has_default = true, .def_s = "DCR", .choices = "DCR|CRD"},
	{0}};
const AttrSpec space_to_depth_attrs[] = {
	{.name = "blocksize", .kind = ATTR_INT, .required = true, .has_range = true, .min = 1, .max = INT32_MAX},
	{0}};

bool infer_depth_to_space(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_ANY) || !require_rank(cx, 0, 4, 4))
		return false;
	const Shape *s = &operand_type(cx, 0)->shape;
	int64_t b = attr_i(cx->n, "blocksize"), bb;
	if (!mul_ok(b, b, &bb))
		return infer_error_at_attr(cx, "blocksize", "attribute 'blocksize' = %lld is too large", (long long)b);
	Shape r = *s;
	if (cx->n->op == OP_DEPTH_TO_SPACE) {
		if (s->dim[1] % bb)
			return infer_error_at_operand(cx, 0, "depth_to_space: %lld channels are not a multiple of blocksize^2 = %lld",
						      (long long)s->dim[1], (long long)bb);
		r.dim[1] = s->dim[1] / bb;
		if (!mul_ok(s->dim[2], b, &r.dim[2]) || !mul_ok(s->dim[3], b, &r.dim[3]))
			return infer_error(cx, "the result has too many elements");
	} else {
		if (s->dim[2] % b || s->dim[3] % b)
			return infer_error_at_operand(cx, 0, "space_to_depth: the spatial size %lld x %lld is not a multiple of blocksize %lld",
						      (long long)s->dim[2], (long long)s->dim[3], (long long)b);
		r.dim[2] = s->dim[2] / b;
		r.dim[3] = s->dim[3] / b;
		if (!mul_ok(s->dim[1], bb, &r.dim[1]))
			return infer_error(cx, "the result has too many elements");
	}
	set_result(cx, 0, operand_type(cx, 0)->dtype, &r);
	return true;
}

/* The copy as a 6-D index space (n, c, h, i, w, j) of the space side [N, C,
 * H b, W b] and its coefficients on both sides: the depth side's channel is
 * (i b + j) C + c (DCR, and space_to_depth) or c b^2 + i b + j (CRD). */
void depth_space_copy(const Node *n, const Shape *space, const Shape *depth, Shape *ix, int64_t *scoef, int64_t *dcoef)
{
	int64_t b = attr_i(n, "blocksize");
	bool crd = n->op == OP_DEPTH_TO_SPACE && strcmp(attr_s(n, "mode"), "CRD") == 0;
	int64_t N = space->dim[0], C = space->dim[1], H = space->dim[2] / b, W = space->dim[3] / b;
	int64_t sH = space->dim[3], sC = space->dim[2] * sH, sN = C * sC;
	int64_t dW = 1, dH = depth->dim[3], dC = depth->dim[2] * dH, dN = depth->dim[1] * dC;
	*ix = (Shape){6, {N, C, H, b, W, b}};
	int64_t s6[6] = {sN, sC, b * sH, sH, b, 1};
	int64_t d6[6] = {dN, crd ? b * b * dC : dC, dH, crd ? b * dC : b * C * dC, dW, crd ? dC : C * dC};
	memcpy(scoef, s6, sizeof s6);
	memcpy(dcoef, d6, sizeof d6);
}

static bool depth_space_kernel(const Node *n, Tensor *const *in, Tensor *const *out)
{
	bool d2s = n->op == OP_DEPTH_TO_SPACE;
	const Tensor *sp = d2s ? out[0] : in[0], *dp = d2s ? in[0] : out[0];
	Shape ix;
	int64_t sc[6], dc[6], idx[6] = {0};
	depth_space_copy(n, &sp->type.shape, &dp->type.shape, &ix, sc, dc);
	size_t es = dtype_size(in[0]->type.dtype);
	int64_t total = shape_numel(&ix);
	for (int64_t e = 0; e < total; e++, index_next(&ix, idx)) {
		int64_t so = 0, dof = 0;
		for (int a = 0; a < 6; a++) {
			so += idx[a] * sc[a];
			dof += idx[a] * dc[a];
		}
		int64_t from = d2s ? dof : so, to = d2s ? so : dof;
		memcpy((char *)out[0]->data + (size_t)to * es, (const char *)in[0]->data + (size_t)from * es, es);
	}
	return true;
}

bool kernel_depth_to_space(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	return depth_space_kernel(n, in, out);
}

bool kernel_space_to_depth(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	return depth_space_kernel(n, in, out);
}

/* ---- scatter_nd(data, indices, updates): data with the slices that
 * indices[..., :] address replaced by (or, reduction add / mul / max /
 * min, combined with) updates ------------------------------------------------------------------ */
const AttrSpec scatter_nd_attrs[] = {
	{.name = "reduction", .kind = ATTR_STRING, .has_default = true, .def_s = "none", .choices = "none|add|mul|max|min"},
	{0}};

bool infer_scatter_nd(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_ANY) || !require_dtype(cx, 1, DTMASK_INDEX) || !require_dtype(cx, 2, DTMASK_ANY) ||
	    !require_same_dtype(cx, 0, 2) || !require_rank(cx, 0, 1, MAX_RANK) || !require_rank(cx, 1, 1, MAX_RANK))
		return false;
	const Shape *ds = &operand_type(cx, 0)->shape, *is = &operand_type(cx, 1)->shape, *us = &operand_type(cx, 2)->shape;
	int64_t kk = is->dim[is->rank - 1];
	if (kk < 1 || kk > ds->rank)
		return infer_error_at_operand(cx, 1, "indices' last axis (%lld) must be in [1, %d], data's rank", (long long)kk,
					      ds->rank);
	Shape want = {.rank = 0};
	for (int i = 0; i < is->rank - 1; i++)
		want.dim[want.rank++] = is->dim[i];
	for (int i = (int)kk; i < ds->rank; i++) {
		if (want.rank == MAX_RANK)
			return infer_error_at_operand(cx, 2, "updates would need rank %d, above the maximum %d",
						      is->rank - 1 + ds->rank - (int)kk, MAX_RANK);
		want.dim[want.rank++] = ds->dim[i];
	}
	if (!shape_eq(&want, us)) {
		char a[160], b[160];
		return infer_error_at_operand(cx, 2, "shape mismatch: updates ('%s') is %s, indices and data ask for %s",
					      cx->n->in[2]->name, type_str(operand_type(cx, 2), a, sizeof a),
					      shape_str(&want, b, sizeof b));
	}
	set_result(cx, 0, operand_type(cx, 0)->dtype, ds);
	return true;
}

bool kernel_scatter_nd(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	const Shape *ds = &in[0]->type.shape, *is = &in[1]->type.shape;
	if (tensor_bytes(in[0]))
		memcpy(out[0]->data, in[0]->data, tensor_bytes(in[0]));
	int kk = (int)is->dim[is->rank - 1];
	int64_t st[MAX_RANK], slice = 1, nidx = tensor_numel(in[1]) / kk;
	shape_strides(ds, st);
	for (int i = kk; i < ds->rank; i++)
		slice *= ds->dim[i];
	const char *red = attr_s(n, "reduction");
	bool add = strcmp(red, "add") == 0, mul = strcmp(red, "mul") == 0, max = strcmp(red, "max") == 0,
	     min = strcmp(red, "min") == 0;
	for (int64_t j = 0; j < nidx; j++) {
		int64_t off = 0;
		for (int t = 0; t < kk; t++) {
			int64_t x = tensor_get_i(in[1], j * kk + t), dim = ds->dim[t];
			if (x < -dim || x >= dim)
				return kernel_error(d, n, "index %lld is out of range [%lld, %lld] for axis %d", (long long)x,
						    (long long)-dim, (long long)dim - 1, t);
			off += (x < 0 ? x + dim : x) * st[t];
		}
		for (int64_t e = 0; e < slice; e++) {
			int64_t o = off + e, u = j * slice + e;
			if (out[0]->type.dtype == DT_F32) {
				float a = f32(out[0])[o], b = f32(in[2])[u];
				f32(out[0])[o] = add ? a + b : mul ? a * b : max ? (b > a ? b : a) : min ? (b < a ? b : a) : b;
			} else {
				int64_t a = tensor_get_i(out[0], o), b = tensor_get_i(in[2], u);
				tensor_set_i(out[0], o,
					     add   ? (int64_t)((uint64_t)a + (uint64_t)b)
					     : mul ? (int64_t)((uint64_t)a * (uint64_t)b)
					     : max ? (b > a ? b : a)
					     : min ? (b < a ? b : a)
						   : b);
			}
		}
	}
	return true;
}

/* ---- gather_nd(data, indices): per index tuple indices[..., :] (k
 * entries), the slice of data there; the first batch_dims axes of both are
 * shared (one tuple addresses its own batch) ------------------------------------ */
const AttrSpec gather_nd_attrs[] = {
	{.name = "batch_dims", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = MAX_RANK},
	{0}};

bool infer_gather_nd(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_ANY) || !require_dtype(cx, 1, DTMASK_INDEX) || !require_rank(cx, 0, 1, MAX_RANK) ||
	    !require_rank(cx, 1, 1, MAX_RANK))
		return false;
	const Shape *ds = &operand_type(cx, 0)->shape, *is = &operand_type(cx, 1)->shape;
	int b = (int)attr_i(cx->n, "batch_dims");
	if (b >= ds->rank || b >= is->rank)
		return infer_error_at_attr(cx, "batch_dims", "batch_dims %d must be below both ranks (%d, %d)", b, ds->rank,
					   is->rank);
	for (int i = 0; i < b; i++)
		if (ds->dim[i] != is->dim[i])
			return infer_error_at_operand(cx, 1, "shape mismatch: batch axis %d is %lld in data, %lld in indices", i,
						      (long long)ds->dim[i], (long long)is->dim[i]);
	int64_t kk = is->dim[is->rank - 1];
	if (kk < 1 || kk > ds->rank - b)
		return infer_error_at_operand(cx, 1, "indices' last axis (%lld) must be in [1, %d], data's rank less batch_dims",
					      (long long)kk, ds->rank - b);
	Shape r = {.rank = 0};
	for (int i = 0; i < is->rank - 1; i++)
		r.dim[r.rank++] = is->dim[i];
	for (int i = b + (int)kk; i < ds->rank; i++) {
		if (r.rank == MAX_RANK)
			return infer_error(cx, "the result would have rank %d, above the maximum %d",
					   is->rank - 1 + ds->rank - b - (int)kk, MAX_RANK);
		r.dim[r.rank++] = ds->dim[i];
	}
	set_result(cx, 0, operand_type(cx, 0)->dtype, &r);
	return true;
}

/* The counts gather_nd's loops take: batches, tuples per batch, the
 * tuple's length k, the elements of a slice, and data's elements per batch. */
void gather_nd_dims(const Node *n, int64_t *batches, int64_t *tuples, int *k, int64_t *slice, int64_t *per_batch)
{
	const Shape *ds = &n->in[0]->type.shape, *is = &n->in[1]->type.shape;
	int b = (int)attr_i(n, "batch_dims");
	*k = (int)is->dim[is->rank - 1];
	*batches = 1, *tuples = 1, *slice = 1, *per_batch = 1;
	for (int i = 0; i < b; i++)
		*batches *= ds->dim[i];
	for (int i = b; i < is->rank - 1; i++)
		*tuples *= is->dim[i];
	for (int i = b + *k; i < ds->rank; i++)
		*slice *= ds->dim[i];
	for (int i = b; i < ds->rank; i++)
		*per_batch *= ds->dim[i];
}

bool kernel_gather_nd(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	const Shape *ds = &in[0]->type.shape;
	int b = (int)attr_i(n, "batch_dims"), kk;
	int64_t batches, tuples, slice, per_batch, st[MAX_RANK];
	gather_nd_dims(n, &batches, &tuples, &kk, &slice, &per_batch);
	shape_strides(ds, st);
	size_t es = dtype_size(in[0]->type.dtype);
	for (int64_t bt = 0; bt < batches; bt++)
		for (int64_t t = 0; t < tuples; t++) {
			int64_t j = bt * tuples + t, off = bt * per_batch;
			for (int c = 0; c < kk; c++) {
				int64_t x = tensor_get_i(in[1], j * kk + c), dim = ds->dim[b + c];
				if (x < -dim || x >= dim)
					return kernel_error(d, n, "index %lld is out of range [%lld, %lld] for axis %d", (long long)x,
							    (long long)-dim, (long long)dim - 1, b + c);
				off += (x < 0 ? x + dim : x) * st[b + c];
			}
			memcpy((char *)out[0]->data + (size_t)(j * slice) * es, (const char *)in[0]->data + (size_t)off * es,
			       (size_t)slice * es);
		}
	return true;
}

/* ---- topk(x): the k largest (largest = 1) or smallest along axis, in
 * that order (sorted = 0 gives the same order), ties to the lower
 * position; result 2 their positions (i64) ------------------------------------- */
const AttrSpec topk_attrs[] = {
	{.name = "k", .kind = ATTR_INT, .required = true, .has_range = true, .min = 0, .max = INT64_MAX},
	{.name = "axis", .kind = ATTR_INT, .has_default = true, .def_i = -1},
	{.name = "largest", .kind = ATTR_INT, .has_default = true, .def_i = 1, .has_range = true, .min = 0, .max = 1},
	{.name = "sorted", .kind = ATTR_INT, .has_default = true, .def_i = 1, .has_range = true, .min = 0, .max = 1},
	{0}};

bool infer_topk(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_NUM) || !require_rank(cx, 0, 1, MAX_RANK))
		return false;
	const Shape *s = &operand_type(cx, 0)->shape;
	int ax;
	if (!normalize_axis(cx, "axis", attr_i(cx->n, "axis"), s->rank, &ax))
		return false;
	int64_t k = attr_i(cx->n, "k");
	if (k > s->dim[ax])
		return infer_error_at_attr(cx, "k", "k = %lld is more than axis %d's %lld elements", (long long)k, ax,
					   (long long)s->dim[ax]);
	Shape r = *s;
	r.dim[ax] = k;
	set_result(cx, 0, operand_type(cx, 0)->dtype, &r);
	if (cx->n->nout > 1)
		set_result(cx, 1, DT_I64, &r);
	return true;
}

/* Is x at position p before y at q in topk's order? */
static bool topk_before(double x, int64_t p, double y, int64_t q, bool largest)
{
	if (x != y)
		return largest ? x > y : x < y;
	return p < q;
}

bool kernel_topk(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *s = &in[0]->type.shape;
	int ax = (int)(attr_i(n, "axis") < 0 ? attr_i(n, "axis") + s->rank : attr_i(n, "axis"));
	int64_t outer = 1, cnt = s->dim[ax], inner = 1, k = attr_i(n, "k");
	for (int i = 0; i < ax; i++)
		outer *= s->dim[i];
	for (int i = ax + 1; i < s->rank; i++)
		inner *= s->dim[i];
	bool largest = attr_i(n, "largest") != 0;
	int64_t *pick = xcalloc((size_t)(k ? k : 1), sizeof *pick);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			int64_t base = o * cnt * inner + i;
			/* insertion into the k best so far */
			int64_t m = 0;
			for (int64_t e = 0; e < cnt; e++) {
				double v = tensor_get_f(in[0], base + e * inner);
				if (v != v)
					continue; /* (NaN is never picked) */
				int64_t at = m;
				while (at > 0 && topk_before(v, e, tensor_get_f(in[0], base + pick[at - 1] * inner), pick[at - 1], largest))
					at--;
				if (at >= k)
					continue;
				for (int64_t q = (m < k ? m : k - 1); q > at; q--)
					pick[q] = pick[q - 1];
				pick[at] = e;
				if (m < k)
					m++;
			}
			for (int64_t r = 0; r < k; r++) {
				int64_t p = r < m ? pick[r] : 0, oi = o * k * inner + r * inner + i;
				if (in[0]->type.dtype == DT_F32)
					f32(out[0])[oi] = f32(in[0])[base + p * inner];
				else
					tensor_set_i(out[0], oi, tensor_get_i(in[0], base + p * inner));
				if (n->nout > 1)
					tensor_set_i(out[1], oi, p);
			}
		}
	free(pick);
	return true;
}
