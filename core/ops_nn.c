/* Neural-network ops over N-d spatial layouts (N, C, spatial...): conv,
 * pooling and normalization; attribute specs, rules and reference kernels. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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
/* (also maxpool_argmax's: storage_order, ONNX's layout of the Indices
 * result, matters to it only: 1 is the spatial axes column-major) */
const AttrSpec maxpool_attrs[] = {
	{.name = "auto_pad", .kind = ATTR_STRING, .has_default = true, .def_s = "NOTSET", .choices = "NOTSET|SAME_UPPER|SAME_LOWER|VALID"},
	{.name = "ceil_mode", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
	{.name = "dilations", .kind = ATTR_INTS, .has_range = true, .min = 1, .max = INT32_MAX},
	{.name = "kernel_shape", .kind = ATTR_INTS, .required = true, .has_range = true, .min = 1, .max = INT32_MAX},
	{.name = "pads", .kind = ATTR_INTS, .has_range = true, .min = 0, .max = INT32_MAX},
	{.name = "storage_order", .kind = ATTR_INT, .has_default = true, .def_i = 0, .has_range = true, .min = 0, .max = 1},
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

/* ---- sliding windows (conv and pooling) -------------------------------
 * The spatial axes are handled as three: an operand with fewer spatial
 * axes gets leading axes of size 1 (kernel 1, stride 1, dilation 1, no
 * pads), which leaves the row-major layout unchanged.  Axis j of the
 * operand's spatial axes lives at index SP - ns + j. */
enum { SP = 3 };

typedef struct {
	int ns;              /* spatial rank of the operand, 1 to 3 */
	int64_t in[SP];      /* input size */
	int64_t k[SP];       /* kernel size */
	int64_t stride[SP];
	int64_t dil[SP];
	int64_t pb[SP], pe[SP]; /* pads at the beginning and at the end */
	int64_t out[SP];     /* output size */
} Win;

/* Where a window setup failed: the attribute to point at (NULL: the node)
 * and the message. */
typedef struct {
	const char *attr;
	char msg[400];
} WinErr;

static bool win_fail(WinErr *e, const char *attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool win_fail(WinErr *e, const char *attr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	e->attr = attr;
	return false;
}

static void ints_str(const int64_t *v, int n, char *buf, size_t size)
{
	size_t k = 0;
	k += (size_t)snprintf(buf, size, "[");
	for (int i = 0; i < n && k < size; i++)
		k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)v[i]);
	if (k < size)
		snprintf(buf + k, size - k, "]");
}

/* A list attribute with one entry per spatial axis (per == 1) or two
 * (per == 2, pads); absent: all `def`. */
static bool win_list(const Node *n, const char *name, int ns, int per, int64_t def, int64_t *dst, const char *xty,
		     WinErr *e)
{
	const int64_t *v;
	int cnt = attr_ints(n, name, &v);
	if (cnt < 0) {
		for (int i = 0; i < per * ns; i++)
			dst[i] = def;
		return true;
	}
	if (cnt != per * ns)
		return win_fail(e, name, "attribute '%s' has %d entries, expected %d (%s%d spatial axes of %s)", name, cnt,
				per * ns, per == 2 ? "begin and end for each of the " : "one for each of the ", ns, xty);
	for (int i = 0; i < cnt; i++)
		dst[i] = v[i];
	return true;
}

/* Sets up w for an operand of shape xs (rank 3 to 5) and a kernel of ns
 * sizes k, from the attributes strides, dilations, pads and auto_pad (and
 * ceil_mode when `ceil_mode`).  Output sizes follow ONNX: explicit pads
 * give floor (or ceil) of (in + pads - dilated kernel) / stride, plus one;
 * with ceil_mode the last window is dropped when it would start inside the
 * end padding.  VALID is no padding and always floor.  SAME_* give
 * ceil(in / stride) with the needed padding split evenly, the odd one at
 * the end (UPPER) or the beginning (LOWER). */
static bool win_setup(const Node *n, const Shape *xs, const int64_t *k, bool ceil_mode, Win *w, WinErr *e)
{
	int ns = xs->rank - 2, off = SP - ns;
	char xty[160];
	TensorType tt = {DT_F32, *xs};
	type_str(&tt, xty, sizeof xty);
	w->ns = ns;
	for (int i = 0; i < SP; i++) {
		w->in[i] = w->k[i] = w->stride[i] = w->dil[i] = w->out[i] = 1;
		w->pb[i] = w->pe[i] = 0;
	}
	int64_t strides[SP], dil[SP], pads[2 * SP];
	if (!win_list(n, "strides", ns, 1, 1, strides, xty, e) || !win_list(n, "dilations", ns, 1, 1, dil, xty, e) ||
	    !win_list(n, "pads", ns, 2, 0, pads, xty, e))
		return false;
	const char *ap = attr_s(n, "auto_pad");
	bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
	bool valid = strcmp(ap, "VALID") == 0; /* ONNX: floor, whatever ceil_mode says */
	if (strcmp(ap, "NOTSET") != 0)
		for (int i = 0; i < 2 * ns; i++)
			if (pads[i] != 0) {
				char ps[128];
				ints_str(pads, 2 * ns, ps, sizeof ps);
				return win_fail(e, "pads", "attribute 'pads' = %s cannot be used with auto_pad = %s", ps, ap);
			}
	for (int i = 0; i < ns; i++) {
		int j = off + i;
		int64_t in = xs->dim[2 + i], s = strides[i], d = dil[i];
		if (k[i] - 1 > (INT64_MAX / 2) / d)
			return win_fail(e, NULL,
					"the kernel's extent along spatial axis %d overflows (size %lld, dilation %lld)", i,
					(long long)k[i], (long long)d);
		int64_t eff = d * (k[i] - 1) + 1; /* extent of the dilated kernel */
		int64_t pb = pads[i], pe = pads[ns + i], out;
		if (same) {
			out = (in + s - 1) / s;
			int64_t total = (out - 1) * s + eff - in;
			if (total < 0)
				total = 0;
			if (strcmp(ap, "SAME_UPPER") == 0) {
				pb = total / 2;
				pe = total - pb;
			} else {
				pe = total / 2;
				pb = total - pe;
			}
		} else {
			int64_t span = in + pb + pe - eff;
			if (span < 0)
				return win_fail(e, NULL,
						"output would be empty: spatial axis %d of %s has size %lld (%lld with "
						"pads) but the kernel spans %lld (size %lld, dilation %lld)",
						i, xty, (long long)in, (long long)(in + pb + pe), (long long)eff,
						(long long)k[i], (long long)d);
			if (ceil_mode && !valid) {
				out = (span + s - 1) / s + 1;
				if ((out - 1) * s >= in + pb)
					out--;
			} else {
				out = span / s + 1;
			}
		}
		if (out < 1)
			return win_fail(e, NULL, "output would be empty: spatial axis %d of %s has size %lld", i, xty,
					(long long)in);
		w->in[j] = in;
		w->k[j] = k[i];
		w->stride[j] = s;
		w->dil[j] = d;
		w->pb[j] = pb;
		w->pe[j] = pe;
		w->out[j] = out;
	}
	return true;
}

bool conv_window(const Node *n, const Shape *xs, const int64_t *k, bool ceil_mode, ConvWindow *cw)
{
	Win w;
	WinErr e;
	if (!win_setup(n, xs, k, ceil_mode, &w, &e))
		return false;
	cw->ns = w.ns;
	for (int j = 0; j < w.ns; j++) {
		int i = SP - w.ns + j;
		cw->in[j] = w.in[i];
		cw->k[j] = w.k[i];
		cw->stride[j] = w.stride[i];
		cw->dil[j] = w.dil[i];
		cw->pb[j] = w.pb[i];
		cw->pe[j] = w.pe[i];
		cw->out[j] = w.out[i];
	}
	return true;
}

static bool win_report(InferCtx *cx, const WinErr *e)
{
	if (e->attr)
		return infer_error_at_attr(cx, e->attr, "%s", e->msg);
	return infer_error(cx, "%s", e->msg);
}

/* Result shape [N, channels, out...]. */
static Shape win_result(const Shape *xs, int64_t channels, const Win *w)
{
	Shape s = *xs;
	s.dim[1] = channels;
	for (int i = 0; i < w->ns; i++)
		s.dim[2 + i] = w->out[SP - w->ns + i];
	return s;
}

/* Input position of tap t of output position o along axis j. */
static inline int64_t win_pos(const Win *w, int j, int64_t o, int64_t t)
{
	return o * w->stride[j] - w->pb[j] + t * w->dil[j];
}

static inline bool win_inside(const Win *w, int j, int64_t p)
{
	return p >= 0 && p < w->in[j];
}

/* Does window o along axis j see an input element?  In O(1): its taps
 * are a, a + d, ..., a + (k - 1) d from a = o * stride - pad; the first one
 * at or after 0 is the one to test. */
static bool win_sees_input(const Win *w, int j, int64_t o)
{
	int64_t a = win_pos(w, j, o, 0), d = w->dil[j];
	int64_t t = a >= 0 ? 0 : (-a + d - 1) / d;
	return t < w->k[j] && win_inside(w, j, a + t * d);
}

/* The first window along axis j that covers only padding, or -1.  Windows
 * whose first tap lies inside the input see it; those that start at or
 * after its end see only padding.  So only the windows that start in the
 * padding before the input need a look, and when the input is at least as
 * long as the dilation the taps cannot step over it: the first tap at or
 * after 0 is inside, and the outermost window is the worst one. */
static int64_t win_padding_only(const Win *w, int j)
{
	int64_t s = w->stride[j], out = w->out[j];
	int64_t left = (w->pb[j] + s - 1) / s; /* windows starting before 0 */
	if (left > out)
		left = out;
	if (w->in[j] >= w->dil[j]) {
		if (left > 0 && !win_sees_input(w, j, 0))
			return 0;
	} else {
		for (int64_t o = 0; o < left; o++)
			if (!win_sees_input(w, j, o))
				return o;
	}
	int64_t right = (w->in[j] + w->pb[j] + s - 1) / s; /* the first starting at or after the end */
	return right < out ? right : -1;
}

/* ---- conv -------------------------------------------------------------- */
static void type_of(InferCtx *cx, int i, char *buf, size_t n)
{
	type_str(operand_type(cx, i), buf, n);
}

bool infer_conv(InferCtx *cx)
{
	Node *n = cx->n;
	if (!require_dtype(cx, 0, DTMASK_FLOAT) || !require_same_dtype(cx, 0, 1) ||
	    (n->nin == 3 && !require_same_dtype(cx, 0, 2)) || !require_rank(cx, 0, 3, 2 + SP))
		return false;
	const Shape *xs = &operand_type(cx, 0)->shape, *ws = &operand_type(cx, 1)->shape;
	char xty[160], wty[160];
	type_of(cx, 0, xty, sizeof xty);
	type_of(cx, 1, wty, sizeof wty);
	if (ws->rank != xs->rank)
		return infer_error_at_operand(cx, 1,
					      "shape mismatch: operand 2 ('%s') is %s and operand 1 ('%s') is %s: "
					      "the weights must have rank %d, [M, C/group, kernel...]",
					      n->in[1]->name, wty, n->in[0]->name, xty, xs->rank);
	int64_t group = attr_i(n, "group"), c = xs->dim[1], m = ws->dim[0];
	if (c % group != 0)
		return infer_error_at_attr(cx, "group",
					   "channels not divisible by group: operand 1 ('%s') is %s with %lld channels, "
					   "group = %lld",
					   n->in[0]->name, xty, (long long)c, (long long)group);
	if (m % group != 0)
		return infer_error_at_attr(cx, "group",
					   "output channels not divisible by group: operand 2 ('%s') is %s with %lld "
					   "output channels, group = %lld",
					   n->in[1]->name, wty, (long long)m, (long long)group);
	if (ws->dim[1] != c / group)
		return infer_error_at_operand(cx, 1,
					      "shape mismatch: operand 2 ('%s') is %s and operand 1 ('%s') is %s: the "
					      "weights have %lld input channels per group, expected %lld (%lld channels / "
					      "group %lld)",
					      n->in[1]->name, wty, n->in[0]->name, xty, (long long)ws->dim[1],
					      (long long)(c / group), (long long)c, (long long)group);
	if (n->nin == 3) {
		const Shape *bs = &operand_type(cx, 2)->shape;
		if (bs->rank != 1 || bs->dim[0] != m) {
			char bty[160];
			type_of(cx, 2, bty, sizeof bty);
			return infer_error_at_operand(cx, 2,
						      "shape mismatch: operand 3 ('%s') is %s and operand 2 ('%s') is %s: "
						      "the bias must be f32[%lld], one per output channel",
						      n->in[2]->name, bty, n->in[1]->name, wty, (long long)m);
		}
	}
	int ns = xs->rank - 2;
	const int64_t *ks;
	int nk = attr_ints(n, "kernel_shape", &ks);
	if (nk >= 0) {
		bool ok = nk == ns;
		for (int i = 0; ok && i < ns; i++)
			ok = ks[i] == ws->dim[2 + i];
		if (!ok) {
			char kstr[128];
			ints_str(ks, nk, kstr, sizeof kstr);
			return infer_error_at_attr(cx, "kernel_shape",
						   "attribute 'kernel_shape' = %s does not match the weights: operand 2 "
						   "('%s') is %s",
						   kstr, n->in[1]->name, wty);
		}
	}
	for (int i = 0; i < ns; i++)
		if (ws->dim[2 + i] < 1)
			return infer_error_at_operand(cx, 1, "operand 2 ('%s') is %s: the kernel has an empty axis",
						      n->in[1]->name, wty);
	Win w;
	WinErr e;
	if (!win_setup(n, xs, ws->dim + 2, false, &w, &e))
		return win_report(cx, &e);
	Shape rs = win_result(xs, m, &w);
	set_result(cx, 0, DT_F32, &rs);
	return true;
}

bool kernel_conv(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	const Shape *xs = &in[0]->type.shape, *ws = &in[1]->type.shape;
	Win w;
	WinErr e;
	if (!win_setup(n, xs, ws->dim + 2, false, &w, &e))
		return kernel_error(d, n, "%s", e.msg);
	const float *x = f32(in[0]), *wt = f32(in[1]), *b = n->nin == 3 ? f32(in[2]) : NULL;
	float *y = f32(out[0]);
	int64_t nb = xs->dim[0], c = xs->dim[1], m = ws->dim[0], group = attr_i(n, "group");
	int64_t cg = c / group, mg = m / group;
	int64_t yi = 0;
	for (int64_t bi = 0; bi < nb; bi++)
		for (int64_t oc = 0; oc < m; oc++) {
			int64_t g = oc / mg;
			for (int64_t o0 = 0; o0 < w.out[0]; o0++)
				for (int64_t o1 = 0; o1 < w.out[1]; o1++)
					for (int64_t o2 = 0; o2 < w.out[2]; o2++) {
						double acc = b ? (double)b[oc] : 0.0;
						for (int64_t ci = 0; ci < cg; ci++) {
							int64_t ic = g * cg + ci;
							int64_t xb = (bi * c + ic) * w.in[0] * w.in[1] * w.in[2];
							int64_t wb = (oc * cg + ci) * w.k[0] * w.k[1] * w.k[2];
							for (int64_t t0 = 0; t0 < w.k[0]; t0++) {
								int64_t p0 = win_pos(&w, 0, o0, t0);
								if (!win_inside(&w, 0, p0))
									continue;
								for (int64_t t1 = 0; t1 < w.k[1]; t1++) {
									int64_t p1 = win_pos(&w, 1, o1, t1);
									if (!win_inside(&w, 1, p1))
										continue;
									for (int64_t t2 = 0; t2 < w.k[2]; t2++) {
										int64_t p2 = win_pos(&w, 2, o2, t2);
										if (!win_inside(&w, 2, p2))
											continue;
										double xv = x[xb + (p0 * w.in[1] + p1) * w.in[2] + p2];
										double wv = wt[wb + (t0 * w.k[1] + t1) * w.k[2] + t2];
										acc += xv * wv;
									}
								}
							}
						}
						y[yi++] = (float)acc;
					}
		}
	return true;
}

/* ---- pooling ----------------------------------------------------------- */
bool infer_pool(InferCtx *cx)
{
	Node *n = cx->n;
	if (!require_dtype(cx, 0, DTMASK_FLOAT) || !require_rank(cx, 0, 3, 2 + SP))
		return false;
	const Shape *xs = &operand_type(cx, 0)->shape;
	int ns = xs->rank - 2;
	const int64_t *ks;
	int nk = attr_ints(n, "kernel_shape", &ks);
	if (nk != ns) {
		char xty[160];
		type_of(cx, 0, xty, sizeof xty);
		return infer_error_at_attr(cx, "kernel_shape",
					   "attribute 'kernel_shape' has %d entries, expected %d (one for each of the %d "
					   "spatial axes of %s)",
					   nk, ns, ns, xty);
	}
	Win w;
	WinErr e;
	if (!win_setup(n, xs, ks, attr_i(n, "ceil_mode") != 0, &w, &e))
		return win_report(cx, &e);
	/* Every window must see at least one element of the input, unless
	 * padding counts as zeros (avgpool with count_include_pad). */
	if (n->op != OP_AVGPOOL || attr_i(n, "count_include_pad") == 0)
		for (int j = SP - ns; j < SP; j++) {
			int64_t o = win_padding_only(&w, j);
			if (o >= 0) {
				char xty[160];
				type_of(cx, 0, xty, sizeof xty);
				return infer_error_at_attr(cx, "pads",
							   "window %lld along spatial axis %d of %s covers "
							   "only padding (pads %lld and %lld, kernel %lld, "
							   "dilation %lld)",
							   (long long)o, j - (SP - ns), xty, (long long)w.pb[j],
							   (long long)w.pe[j], (long long)w.k[j], (long long)w.dil[j]);
			}
		}
	Shape rs = win_result(xs, xs->dim[1], &w);
	set_result(cx, 0, n->op == OP_MAXPOOL_ARGMAX ? DT_I64 : DT_F32, &rs);
	return true;
}

/* Shared loop of the two pools: for each output element, visit the taps of
 * its window.  `avg` selects average pooling. */
static bool pool_run(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d, bool avg)
{
	const Shape *xs = &in[0]->type.shape;
	const int64_t *ks;
	attr_ints(n, "kernel_shape", &ks);
	Win w;
	WinErr e;
	if (!win_setup(n, xs, ks, attr_i(n, "ceil_mode") != 0, &w, &e))
		return kernel_error(d, n, "%s", e.msg);
	bool include_pad = avg && attr_i(n, "count_include_pad") != 0;
	const float *x = f32(in[0]);
	float *y = f32(out[0]);
	int64_t planes = xs->dim[0] * xs->dim[1], plane = w.in[0] * w.in[1] * w.in[2];
	int64_t yi = 0;
	for (int64_t pl = 0; pl < planes; pl++) {
		int64_t xb = pl * plane;
		for (int64_t o0 = 0; o0 < w.out[0]; o0++)
			for (int64_t o1 = 0; o1 < w.out[1]; o1++)
				for (int64_t o2 = 0; o2 < w.out[2]; o2++) {
					double sum = 0.0, best = -INFINITY;
					int64_t count = 0;
					for (int64_t t0 = 0; t0 < w.k[0]; t0++)
						for (int64_t t1 = 0; t1 < w.k[1]; t1++)
							for (int64_t t2 = 0; t2 < w.k[2]; t2++) {
								int64_t p[SP] = {win_pos(&w, 0, o0, t0), win_pos(&w, 1, o1, t1),
										 win_pos(&w, 2, o2, t2)};
								bool inside = true, padded = true;
								for (int j = 0; j < SP; j++) {
									inside &= win_inside(&w, j, p[j]);
									/* within the padded extent (windows
									 * that ceil_mode lets run past it are
									 * clipped) */
									padded &= p[j] >= -w.pb[j] && p[j] < w.in[j] + w.pe[j];
								}
								if (include_pad ? padded : inside)
									count++;
								if (!inside)
									continue;
								double v = x[xb + (p[0] * w.in[1] + p[1]) * w.in[2] + p[2]];
								sum += v;
								if (isnan(v) || v > best) /* NaN propagates */
									best = isnan(best) ? best : v;
							}
					if (avg)
						y[yi++] = count > 0 ? (float)(sum / (double)count) : NAN;
					else
						y[yi++] = (float)best;
				}
	}
	return true;
}

bool kernel_maxpool(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	return pool_run(n, in, out, d, false);
}

/* The window's first maximum (NaN is never one; a window of NaN only
 * gives its first position inside x), as a position in x: the plane's
 * offset plus the spatial position row-major, or column-major with
 * storage_order 1. */
bool kernel_maxpool_argmax(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	const Shape *xs = &in[0]->type.shape;
	const int64_t *ks;
	attr_ints(n, "kernel_shape", &ks);
	Win w;
	WinErr e;
	if (!win_setup(n, xs, ks, attr_i(n, "ceil_mode") != 0, &w, &e))
		return kernel_error(d, n, "%s", e.msg);
	bool colmajor = attr_i(n, "storage_order") != 0;
	const float *x = f32(in[0]);
	int64_t *y = (int64_t *)out[0]->data;
	int64_t planes = xs->dim[0] * xs->dim[1], plane = w.in[0] * w.in[1] * w.in[2], yi = 0;
	for (int64_t pl = 0; pl < planes; pl++)
		for (int64_t o0 = 0; o0 < w.out[0]; o0++)
			for (int64_t o1 = 0; o1 < w.out[1]; o1++)
				for (int64_t o2 = 0; o2 < w.out[2]; o2++) {
					int64_t best = -1, first = -1;
					float bv = 0;
					for (int64_t t0 = 0; t0 < w.k[0]; t0++)
						for (int64_t t1 = 0; t1 < w.k[1]; t1++)
							for (int64_t t2 = 0; t2 < w.k[2]; t2++) {
								int64_t p[SP] = {win_pos(&w, 0, o0, t0), win_pos(&w, 1, o1, t1),
										 win_pos(&w, 2, o2, t2)};
								if (!win_inside(&w, 0, p[0]) || !win_inside(&w, 1, p[1]) ||
								    !win_inside(&w, 2, p[2]))
									continue;
								int64_t at = colmajor ? p[0] + (p[1] + p[2] * w.in[1]) * w.in[0]
										      : (p[0] * w.in[1] + p[1]) * w.in[2] + p[2];
								float v = x[pl * plane + (p[0] * w.in[1] + p[1]) * w.in[2] + p[2]];
								if (first < 0)
									first = at;
								if (v == v && (best < 0 || v > bv))
									best = at, bv = v;
							}
					y[yi++] = pl * plane + (best >= 0 ? best : first);
				}
	return true;
}

/* The window arithmetic of maxpool_argmax for the compiled kernels: per
 * spatial slot (SP of them, leading ones of size 1), input size, kernel,
 * stride, dilation, leading pad and output size. */
void pool_window(const Node *n, int64_t *in, int64_t *k, int64_t *stride, int64_t *dil, int64_t *pb, int64_t *out)
{
	const int64_t *ks;
	attr_ints(n, "kernel_shape", &ks);
	Win w;
	WinErr e;
	win_setup(n, &n->in[0]->type.shape, ks, attr_i(n, "ceil_mode") != 0, &w, &e);
	for (int j = 0; j < SP; j++)
		in[j] = w.in[j], k[j] = w.k[j], stride[j] = w.stride[j], dil[j] = w.dil[j], pb[j] = w.pb[j], out[j] = w.out[j];
}

bool kernel_avgpool(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	return pool_run(n, in, out, d, true);
}

/* ---- global pooling ---------------------------------------------------- */
bool infer_global_pool(InferCtx *cx)
{
	if (!require_dtype(cx, 0, DTMASK_FLOAT) || !require_rank(cx, 0, 3, MAX_RANK))
		return false;
	Shape s = operand_type(cx, 0)->shape;
	for (int i = 2; i < s.rank; i++) {
		if (s.dim[i] == 0) {
			char xty[160];
			type_of(cx, 0, xty, sizeof xty);
			return infer_error_at_operand(cx, 0, "operand 1 ('%s') is %s: spatial axis %d is empty, nothing to pool",
						      cx->n->in[0]->name, xty, i - 2);
		}
		s.dim[i] = 1;
	}
	set_result(cx, 0, DT_F32, &s);
	return true;
}

static void global_pool_run(Tensor *const *in, Tensor *const *out, bool avg)
{
	const Shape *xs = &in[0]->type.shape;
	int64_t planes = xs->dim[0] * xs->dim[1], plane = 1;
	for (int i = 2; i < xs->rank; i++)
		plane *= xs->dim[i];
	const float *x = f32(in[0]);
	float *y = f32(out[0]);
	for (int64_t pl = 0; pl < planes; pl++) {
		double sum = 0.0, best = -INFINITY;
		for (int64_t i = 0; i < plane; i++) {
			double v = x[pl * plane + i];
			sum += v;
			if (isnan(v) || v > best) /* NaN propagates */
				best = isnan(best) ? best : v;
		}
		y[pl] = avg ? (float)(sum / (double)plane) : (float)best;
	}
}

bool kernel_global_avgpool(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	global_pool_run(in, out, true);
	return true;
}

bool kernel_global_maxpool(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)n;
	(void)d;
	global_pool_run(in, out, false);
	return true;
}

/* ---- batchnorm --------------------------------------------------------- */
bool infer_batchnorm(InferCtx *cx)
{
	Node *n = cx->n;
	static const char *const what[] = {"x", "scale", "bias", "mean", "var"};
	if (!require_dtype(cx, 0, DTMASK_FLOAT) || !require_rank(cx, 0, 2, MAX_RANK))
		return false;
	for (int i = 1; i < 5; i++)
		if (!require_same_dtype(cx, 0, i))
			return false;
	const Shape *xs = &operand_type(cx, 0)->shape;
	int64_t c = xs->dim[1];
	for (int i = 1; i < 5; i++) {
		const Shape *s = &operand_type(cx, i)->shape;
		if (s->rank != 1 || s->dim[0] != c) {
			char xty[160], ty[160];
			type_of(cx, 0, xty, sizeof xty);
			type_of(cx, i, ty, sizeof ty);
			return infer_error_at_operand(cx, i,
						      "shape mismatch: operand %d ('%s') is %s and operand 1 ('%s') is %s: "
						      "the %s must be f32[%lld], one per channel",
						      i + 1, n->in[i]->name, ty, n->in[0]->name, xty, what[i], (long long)c);
		}
	}
	bool training = attr_i(n, "training_mode") != 0;
	if (!training && n->nout != 1)
		return infer_error(cx, "training_mode = 0 gives exactly 1 result (y), got %d names", n->nout);
	if (training && n->nout == 2)
		return infer_error(cx, "training_mode = 1 gives 1 result (y) or 3 (y, running_mean, running_var), got 2 names");
	set_result(cx, 0, DT_F32, xs);
	Shape cs = shape_make(1, &c);
	for (int i = 1; i < n->nout; i++)
		set_result(cx, i, DT_F32, &cs);
	return true;
}

/* (x - mean) * inv, with an exact 0 for x == mean even when inv is
 * infinite (zero variance and epsilon 0). */
static inline double centered_scaled(double x, double mean, double inv)
{
	double dlt = x - mean;
	return dlt == 0.0 ? 0.0 : dlt * inv;
}

bool kernel_batchnorm(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *xs = &in[0]->type.shape;
	int64_t nb = xs->dim[0], c = xs->dim[1], inner = 1;
	for (int i = 2; i < xs->rank; i++)
		inner *= xs->dim[i];
	const float *x = f32(in[0]), *scale = f32(in[1]), *bias = f32(in[2]), *mean = f32(in[3]), *var = f32(in[4]);
	float *y = f32(out[0]);
	double eps = attr_f(n, "epsilon"), momentum = attr_f(n, "momentum");
	bool training = attr_i(n, "training_mode") != 0;
	int64_t cnt = nb * inner;
	for (int64_t ch = 0; ch < c; ch++) {
		double mu = mean[ch], v = var[ch];
		if (training) {
			double sum = 0.0, sq = 0.0;
			for (int64_t b = 0; b < nb; b++)
				for (int64_t i = 0; i < inner; i++)
					sum += x[(b * c + ch) * inner + i];
			mu = cnt > 0 ? sum / (double)cnt : NAN;
			for (int64_t b = 0; b < nb; b++)
				for (int64_t i = 0; i < inner; i++) {
					double dlt = x[(b * c + ch) * inner + i] - mu;
					sq += dlt * dlt;
				}
			v = cnt > 0 ? sq / (double)cnt : NAN; /* population variance */
			if (n->nout == 3) {
				f32(out[1])[ch] = (float)((double)mean[ch] * momentum + mu * (1.0 - momentum));
				f32(out[2])[ch] = (float)((double)var[ch] * momentum + v * (1.0 - momentum));
			}
		}
		double inv = 1.0 / sqrt(v + eps);
		for (int64_t b = 0; b < nb; b++)
			for (int64_t i = 0; i < inner; i++) {
				int64_t k = (b * c + ch) * inner + i;
				y[k] = (float)(centered_scaled(x[k], mu, inv) * scale[ch] + bias[ch]);
			}
	}
	return true;
}

/* ---- layernorm --------------------------------------------------------- */
bool infer_layernorm(InferCtx *cx)
{
	Node *n = cx->n;
	if (!require_dtype(cx, 0, DTMASK_FLOAT) || !require_same_dtype(cx, 0, 1) ||
	    (n->nin == 3 && !require_same_dtype(cx, 0, 2)) || !require_rank(cx, 0, 1, MAX_RANK))
		return false;
	const Shape *xs = &operand_type(cx, 0)->shape;
	int axis;
	if (!normalize_axis(cx, "axis", attr_i(n, "axis"), xs->rank, &axis))
		return false;
	Shape norm = {0};
	norm.rank = xs->rank - axis;
	for (int i = 0; i < norm.rank; i++)
		norm.dim[i] = xs->dim[axis + i];
	for (int k = 1; k < n->nin; k++) {
		const Shape *s = &operand_type(cx, k)->shape;
		bool ok = s->rank <= norm.rank;
		for (int i = 0; ok && i < s->rank; i++) {
			int64_t dk = s->dim[s->rank - 1 - i], dn = norm.dim[norm.rank - 1 - i];
			ok = dk == dn || dk == 1;
		}
		if (!ok) {
			char xty[160], ty[160], ns[128];
			type_of(cx, 0, xty, sizeof xty);
			type_of(cx, k, ty, sizeof ty);
			shape_str(&norm, ns, sizeof ns);
			return infer_error_at_operand(cx, k,
						      "shape mismatch: operand %d ('%s') is %s and operand 1 ('%s') is %s: "
						      "not broadcastable to the normalized shape %s (axis %d)",
						      k + 1, n->in[k]->name, ty, n->in[0]->name, xty, ns, axis);
		}
	}
	set_result(cx, 0, DT_F32, xs);
	Shape st = *xs;
	for (int i = axis; i < st.rank; i++)
		st.dim[i] = 1;
	for (int i = 1; i < n->nout; i++)
		set_result(cx, i, DT_F32, &st);
	return true;
}

bool kernel_layernorm(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d)
{
	(void)d;
	const Shape *xs = &in[0]->type.shape;
	int axis = (int)attr_i(n, "axis");
	if (axis < 0)
		axis += xs->rank;
	Shape norm = {0};
	norm.rank = xs->rank - axis;
	for (int i = 0; i < norm.rank; i++)
		norm.dim[i] = xs->dim[axis + i];
	int64_t outer = 1, inner = shape_numel(&norm);
	for (int i = 0; i < axis; i++)
		outer *= xs->dim[i];
	/* Offsets into scale and bias of each normalized element. */
	int64_t *soff = xcalloc(inner > 0 ? (size_t)inner : 1, sizeof *soff);
	int64_t *boff = xcalloc(inner > 0 ? (size_t)inner : 1, sizeof *boff);
	int64_t sst[MAX_RANK], bst[MAX_RANK], idx[MAX_RANK] = {0};
	broadcast_strides(&in[1]->type.shape, &norm, sst);
	if (n->nin == 3)
		broadcast_strides(&in[2]->type.shape, &norm, bst);
	for (int64_t i = 0; i < inner; i++) {
		for (int r = 0; r < norm.rank; r++) {
			soff[i] += idx[r] * sst[r];
			if (n->nin == 3)
				boff[i] += idx[r] * bst[r];
		}
		index_next(&norm, idx);
	}
	const float *x = f32(in[0]), *scale = f32(in[1]), *bias = n->nin == 3 ? f32(in[2]) : NULL;
	float *y = f32(out[0]);
	double eps = attr_f(n, "epsilon");
	for (int64_t o = 0; o < outer; o++) {
		int64_t row = o * inner;
		double sum = 0.0, sq = 0.0;
		for (int64_t i = 0; i < inner; i++)
			sum += x[row + i];
		double mean = inner > 0 ? sum / (double)inner : NAN;
		for (int64_t i = 0; i < inner; i++) {
			double dlt = x[row + i] - mean;
			sq += dlt * dlt;
		}
		double var = inner > 0 ? sq / (double)inner : NAN; /* population variance */
		double inv = 1.0 / sqrt(var + eps);
		for (int64_t i = 0; i < inner; i++) {
			double v = centered_scaled(x[row + i], mean, inv) * scale[soff[i]];
			if (bias)
				v += bias[boff[i]];
			y[o * inner + i] = (float)v;
		}
		if (n->nout >= 2)
			f32(out[1])[o] = (float)mean;
		if (n->nout >= 3)
			f32(out[2])[o] = (float)inv;
	}
	free(soff);
	free(boff);
	return true;
}
