/* ONNX ops that gdcc translates into several of its own ops (see
 * onnx_imp.h), so that every target runs them with kernels it already has:
 *
 *   Resize, Upsample   per resized axis, from the last to the first: a sum of
 *                      `gather`s of the axis at constant positions, each
 *                      weighted by a constant (nearest: one gather, no
 *                      weight), plus a constant where tf_crop_and_resize
 *                      extrapolates.  The positions and weights are those of
 *                      the ONNX reference (interpolate_nd), computed here
 *                      in double.
 *   ConvTranspose      a `conv` over the input with stride - 1 zeros
 *                      between its elements (reshape, pad, reshape), padded
 *                      by dilation * (kernel - 1) less the ONNX pads (a
 *                      negative amount crops), with the weights' in and out
 *                      channels swapped per group and the kernel reversed.
 *   InstanceNormalization   `layernorm` over the spatial axes, then the
 *                      per-channel scale and bias.
 *   MeanVarianceNormalization   (x - mean) / (std + 1e-9) over axes.
 *   LRN                x / (bias + alpha * avg) ** beta, where avg is the
 *                      mean of x^2 over the channel window: an `avgpool`
 *                      that counts the padding, over [N, 1, C, rest].
 *   ScatterElements    `scatter_nd` with full coordinates: a constant grid of
 *                      the positions plus the indices along axis.
 *   Einsum             pairwise, left to right: labels no later operand nor the
 *                      output needs summed (`reduce_sum`), then one `matmul`
 *                      of [batch..., left, contracted] by [batch..., contracted,
 *                      right] (transposes and reshapes around it); the output
 *                      order by a `transpose`.  No diagonals (a subscript twice
 *                      in one term).
 *   NegativeLogLikelihoodLoss  -x[n, t, d...] by `gather_elements` along the
 *                      classes, times weight[t] (`gather`), 0 at ignore_index
 *                      (`where`, `equal`); sum or mean (over the weights, or
 *                      the count, of the positions kept) by `reduce_sum`.
 *   SoftmaxCrossEntropyLoss  `logsoftmax` along the classes, then that.
 *   MaxUnpool          X scattered (`scatter_nd`) to the flat positions I names in
 *                      a zero tensor (`constant_of_shape`) of the output's shape.
 *   Hann/Hamming/BlackmanWindow  constants of the size (known when compiling).
 *   Pow                an integer base with an f32 exponent: where the exponent
 *                      is whole, the exact integer `pow` of its cast; else the
 *                      f32 `pow` truncated.
 *   Dropout, training  x times a constant: the mask drawn when compiling
 *                      from the seed, as the ONNX reference draws it
 *                      (numpy's legacy MT19937 generator: uniform [0, 1)
 *                      >= ratio), times 1 / (1 - ratio); the mask result a
 *                      constant.  (Inference, or a ratio of 0: `dropout`.)
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gdcc_limits.h"
#include "onnx_imp.h"
#include "ops.h"
#include "util.h"

/* ---- small helpers -------------------------------------------------------------------- */
/* A tensor the translation makes (a constant, or a result it sizes
 * itself) is within gdcc's limits: false after the message. */
static bool size_ok(Imp *im, DType dt, const Shape *s, const char *what)
{
	char *e = tensor_size_error(dt, s);
	if (e)
		imp_fail(im, "%s: %s", what, e);
	free(e);
	return !e;
}

/* f32 values v[n] shaped to broadcast along axis `axis` of a rank-`rank`
 * tensor: [n, 1, ..., 1]. */
static Tensor *along_axis_f32(const double *v, int64_t n, int axis, int rank)
{
	Shape s = {rank - axis, {0}};
	for (int d = 0; d < s.rank; d++)
		s.dim[d] = d ? 1 : n;
	Tensor *t = tensor_new(DT_F32, &s);
	for (int64_t i = 0; i < n; i++)
		((float *)t->data)[i] = (float)v[i];
	return t;
}

static Value *unary(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *x, const char *what)
{
	return imp_done(im, imp_step(im, np, op, &x, 1, what));
}

static Value *binary(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *a, Value *b, const char *what)
{
	Value *in[2] = {a, b};
	return imp_done(im, imp_step(im, np, op, in, 2, what));
}

static bool last_binary(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *a, Value *b)
{
	Value *in[2] = {a, b};
	return imp_finish(im, imp_step(im, np, op, in, 2, NULL), np);
}

static Value *reshape(Imp *im, const Onnx__NodeProto *np, Value *x, const int64_t *shape, int rank, const char *what)
{
	Node *n = imp_step(im, np, OP_RESHAPE, &x, 1, what);
	if (n)
		node_set_ints(n, "shape", shape, rank);
	return imp_done(im, n);
}

static const char *attr_string(const Onnx__NodeProto *np, const char *name, const char *def, char *buf, size_t size)
{
	const Onnx__AttributeProto *a = imp_attr(np, name);
	if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
		return def;
	size_t len = a->s.data ? a->s.len : 0;
	if (len >= size)
		len = size - 1;
	memcpy(buf, len ? (const char *)a->s.data : "", len);
	buf[len] = 0;
	return buf;
}

static int64_t attr_int(const Onnx__NodeProto *np, const char *name, int64_t def)
{
	const Onnx__AttributeProto *a = imp_attr(np, name);
	return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ? a->i : def;
}

static double attr_float(const Onnx__NodeProto *np, const char *name, double def)
{
	const Onnx__AttributeProto *a = imp_attr(np, name);
	return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT ? a->f : def;
}

/* An INTS attribute of exactly `want` entries (absent: *present false). */
static bool want_ints(Imp *im, const Onnx__NodeProto *np, const char *name, int want, int64_t *out, bool *present)
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

static Value *operand(Imp *im, const Onnx__NodeProto *np, size_t i, const char *what)
{
	const char *nm = imp_input_name(np, i);
	if (!nm) {
		imp_fail(im, "its %s (input %zu) is missing", what, i + 1);
		return NULL;
	}
	return imp_value(im, nm, what);
}

/* ---- Resize and Upsample ------------------------------------------------------------- */
typedef enum { R_NEAREST, R_LINEAR, R_CUBIC } RMode;
typedef enum { C_HALF_PIXEL, C_PYTORCH_HALF_PIXEL, C_ALIGN_CORNERS, C_ASYMMETRIC, C_TF_HALF_PIXEL_FOR_NN, C_TF_CROP_AND_RESIZE } CMode;
typedef enum { N_ROUND_PREFER_FLOOR, N_ROUND_PREFER_CEIL, N_FLOOR, N_CEIL } NMode;

typedef struct {
	RMode mode;
	CMode coord;
	NMode nearest;
	double cubic_a;
	bool exclude_outside;
	double extrapolation;
} ResizeHow;

/* One resized axis: for each output position o, taps idx[o * k + j] with
 * weights w[o * k + j], plus extra[o]. */
typedef struct {
	int axis;
	int64_t in, out;
	int k;
	int64_t *idx;
	double *w;
	double *extra;
	bool has_extra, weighted;
} AxisPlan;

static int coeffs_of(const ResizeHow *h, double r, double *c)
{
	switch (h->mode) {
	case R_NEAREST:
		if (r == 1.0) { /* (an integer position) */
			c[0] = 0, c[1] = 1;
		} else {
			bool up = h->nearest == N_ROUND_PREFER_FLOOR ? r > 0.5
				  : h->nearest == N_ROUND_PREFER_CEIL ? r >= 0.5
				  : h->nearest == N_CEIL;
			c[0] = !up, c[1] = up;
		}
		return 2;
	case R_LINEAR:
		c[0] = 1 - r, c[1] = r;
		return 2;
	case R_CUBIC: {
		double A = h->cubic_a, s = 1 - r;
		c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
		c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
		c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
		c[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
		return 4;
	}
	}
	return 0;
}

/* The n positions of [0, limit) nearest to x (ties: the smaller), in order. */
static void nearest_positions(double x, int n, int64_t limit, int64_t *out)
{
	int64_t cand[16];
	int nc = 0;
	int64_t f = (int64_t)floor(x);
	for (int64_t c = f - n - 1; c <= f + n + 1 && nc < 16; c++)
		if (c >= 0 && c < limit)
			cand[nc++] = c;
	for (int i = 1; i < nc; i++) /* by distance, then position */
		for (int j = i; j > 0; j--) {
			double da = fabs(x - (double)cand[j - 1]), db = fabs(x - (double)cand[j]);
			if (db < da || (db == da && cand[j] < cand[j - 1])) {
				int64_t t = cand[j];
				cand[j] = cand[j - 1];
				cand[j - 1] = t;
			}
		}
	if (nc > n)
		nc = n;
	for (int i = 1; i < nc; i++) /* back in order */
		for (int j = i; j > 0 && cand[j] < cand[j - 1]; j--) {
			int64_t t = cand[j];
			cand[j] = cand[j - 1];
			cand[j - 1] = t;
		}
	for (int i = 0; i < n; i++)
		out[i] = i < nc ? cand[i] : (nc ? cand[nc - 1] : 0);
}

static void plan_axis(const ResizeHow *h, int64_t in, int64_t out, double scale, double roi_start, double roi_end,
		      AxisPlan *p)
{
	int n = h->mode == R_CUBIC ? 4 : 2;
	p->in = in, p->out = out;
	p->k = n;
	p->idx = xcalloc((size_t)(out * n), sizeof *p->idx);
	p->w = xcalloc((size_t)(out * n), sizeof *p->w);
	p->extra = xcalloc((size_t)out, sizeof *p->extra);
	double out_w = scale * (double)in; /* (as the reference has it) */
	int pad = (n + 1) / 2;
	for (int64_t o = 0; o < out; o++) {
		double x = (double)o, xo;
		bool outside = false;
		switch (h->coord) {
		case C_ALIGN_CORNERS: xo = out_w == 1 ? 0 : x * (double)(in - 1) / (out_w - 1); break;
		case C_ASYMMETRIC: xo = x / scale; break;
		case C_TF_CROP_AND_RESIZE:
			xo = out_w == 1 ? (roi_end - roi_start) * (double)(in - 1) / 2
					: x * (roi_end - roi_start) * (double)(in - 1) / (out_w - 1);
			xo += roi_start * (double)(in - 1);
			outside = xo < 0 || xo > (double)(in - 1);
			break;
		case C_PYTORCH_HALF_PIXEL: xo = out_w == 1 ? -0.5 : (x + 0.5) / scale - 0.5; break;
		case C_TF_HALF_PIXEL_FOR_NN: xo = (x + 0.5) / scale; break;
		case C_HALF_PIXEL:
		default: xo = (x + 0.5) / scale - 0.5; break;
		}
		int64_t *idx = p->idx + o * n;
		double *w = p->w + o * n;
		if (outside) {
			p->extra[o] = h->extrapolation;
			p->has_extra |= h->extrapolation != 0;
			continue; /* weights 0 */
		}
		double fl = floor(xo), r = xo == fl ? 1.0 : xo - fl;
		double c[4];
		coeffs_of(h, r, c);
		int64_t pos[4];
		nearest_positions(xo + pad, n, in + 2 * pad, pos);
		double sum = 0;
		for (int j = 0; j < n; j++) {
			int64_t q = pos[j] - pad;
			if (h->exclude_outside && (q < 0 || q >= in))
				c[j] = 0;
			sum += c[j];
			idx[j] = q < 0 ? 0 : q >= in ? in - 1 : q;
		}
		for (int j = 0; j < n; j++)
			w[j] = h->exclude_outside && sum != 0 ? c[j] / sum : c[j];
	}
	/* taps of one position merged, the zero ones dropped: the fewest taps */
	int kmax = 0;
	for (int64_t o = 0; o < out; o++) {
		int64_t *idx = p->idx + o * n;
		double *w = p->w + o * n;
		int m = 0;
		for (int j = 0; j < n; j++) {
			if (w[j] == 0)
				continue;
			int at = -1;
			for (int i = 0; i < m; i++)
				if (idx[i] == idx[j])
					at = i;
			if (at >= 0) {
				w[at] += w[j];
			} else {
				idx[m] = idx[j];
				w[m++] = w[j];
			}
		}
		for (int j = m; j < n; j++)
			idx[j] = 0, w[j] = 0;
		kmax = m > kmax ? m : kmax;
	}
	if (kmax == 0)
		kmax = 1;
	/* compact to kmax taps per position */
	for (int64_t o = 0; o < out; o++)
		for (int j = 0; j < kmax; j++) {
			p->idx[o * kmax + j] = p->idx[o * n + j];
			p->w[o * kmax + j] = p->w[o * n + j];
		}
	p->k = kmax;
	p->weighted = p->has_extra || kmax > 1;
	for (int64_t o = 0; o < out * kmax; o++)
		p->weighted |= p->w[o] != 1.0;
}

static bool plan_identity(const AxisPlan *p)
{
	if (p->in != p->out || p->k != 1 || p->weighted)
		return false;
	for (int64_t o = 0; o < p->out; o++)
		if (p->idx[o] != o)
			return false;
	return true;
}

static void plan_free(AxisPlan *p)
{
	free(p->idx), free(p->w), free(p->extra);
}

/* Resize x along `axis` by plan p; the last step takes the result's name. */
static Value *emit_axis(Imp *im, const Onnx__NodeProto *np, Value *x, int axis, const AxisPlan *p, bool last, bool *ok)
{
	int rank = x->type.shape.rank;
	Value **terms = xcalloc((size_t)p->k + 1, sizeof *terms);
	int nt = 0;
	Value *res = NULL;
	*ok = false;
	for (int j = 0; j < p->k; j++) {
		int64_t *pos = xcalloc((size_t)p->out, sizeof *pos);
		double *wv = xcalloc((size_t)p->out, sizeof *wv);
		for (int64_t o = 0; o < p->out; o++)
			pos[o] = p->idx[o * p->k + j], wv[o] = p->w[o * p->k + j];
		char what[48];
		snprintf(what, sizeof what, "axis%d.at%d", axis, j);
		Shape s1 = {1, {p->out}};
		Tensor *pt = tensor_new(DT_I64, &s1);
		memcpy(pt->data, pos, (size_t)p->out * sizeof *pos);
		Value *iv = imp_const(im, np, what, pt);
		bool gather_last = last && !p->weighted;
		Value *gin[2] = {x, iv};
		snprintf(what, sizeof what, "axis%d.tap%d", axis, j);
		Node *g = iv ? imp_step(im, np, OP_GATHER, gin, 2, gather_last ? NULL : what) : NULL;
		if (g)
			node_set_int(g, "axis", axis);
		Value *gv = NULL;
		if (gather_last) {
			*ok = imp_finish(im, g, np);
		} else {
			gv = imp_done(im, g);
		}
		if (gv && p->weighted) {
			snprintf(what, sizeof what, "axis%d.w%d", axis, j);
			Value *wc = imp_const(im, np, what, along_axis_f32(wv, p->out, axis, rank));
			bool mul_last = last && p->k == 1 && !p->has_extra;
			snprintf(what, sizeof what, "axis%d.term%d", axis, j);
			if (wc && mul_last)
				*ok = last_binary(im, np, OP_MUL, gv, wc);
			else if (wc)
				gv = binary(im, np, OP_MUL, gv, wc, what);
			else
				gv = NULL;
		}
		free(pos), free(wv);
		if (!gv)
			goto out;
		terms[nt++] = gv;
	}
	if (p->k == 1) {
		res = terms[0];
	} else {
		char what[48];
		snprintf(what, sizeof what, "axis%d.sum", axis);
		bool sum_last = last && !p->has_extra;
		Node *s = imp_step(im, np, OP_SUM, terms, nt, sum_last ? NULL : what);
		if (sum_last) {
			*ok = imp_finish(im, s, np);
			goto out;
		}
		res = imp_done(im, s);
	}
	if (res && p->has_extra) {
		char what[48];
		snprintf(what, sizeof what, "axis%d.outside", axis);
		Value *e = imp_const(im, np, what, along_axis_f32(p->extra, p->out, axis, rank));
		snprintf(what, sizeof what, "axis%d.ext", axis);
		if (!e)
			res = NULL;
		else if (last)
			*ok = last_binary(im, np, OP_ADD, res, e);
		else
			res = binary(im, np, OP_ADD, res, e, what);
	}
	if (!last)
		*ok = res != NULL;
out:
	free(terms);
	return last ? NULL : res;
}

static bool parse_resize_how(Imp *im, const Onnx__NodeProto *np, bool upsample, ResizeHow *h)
{
	char b1[64], b2[64], b3[64];
	bool old = upsample || imp_opset(im) < 11;
	const char *mode = attr_string(np, "mode", "nearest", b1, sizeof b1);
	const char *coord = attr_string(np, "coordinate_transformation_mode", old ? "asymmetric" : "half_pixel", b2, sizeof b2);
	const char *nearest = attr_string(np, "nearest_mode", old ? "floor" : "round_prefer_floor", b3, sizeof b3);
	memset(h, 0, sizeof *h);
	if (strcmp(mode, "nearest") == 0)
		h->mode = R_NEAREST;
	else if (strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0)
		h->mode = R_LINEAR;
	else if (strcmp(mode, "cubic") == 0 && !old)
		h->mode = R_CUBIC;
	else {
		imp_fail(im, "attribute 'mode' = \"%s\" is not one of nearest, linear%s", imp_q(im, mode), old ? "" : ", cubic");
		return false;
	}
	static const char *const cnames[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
					     "tf_half_pixel_for_nn", "tf_crop_and_resize"};
	int ci = -1;
	for (int i = 0; i < 6; i++)
		if (strcmp(coord, cnames[i]) == 0)
			ci = i;
	if (ci < 0) {
		imp_fail(im, "attribute 'coordinate_transformation_mode' = \"%s\" is not one of half_pixel, "
			     "pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize",
			 imp_q(im, coord));
		return false;
	}
	h->coord = (CMode)ci;
	static const char *const nnames[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
	int ni = -1;
	for (int i = 0; i < 4; i++)
		if (strcmp(nearest, nnames[i]) == 0)
			ni = i;
	if (ni < 0) {
		imp_fail(im, "attribute 'nearest_mode' = \"%s\" is not one of round_prefer_floor, round_prefer_ceil, floor, ceil",
			 imp_q(im, nearest));
		return false;
	}
	h->nearest = (NMode)ni;
	h->cubic_a = attr_float(np, "cubic_coeff_a", -0.75);
	h->exclude_outside = attr_int(np, "exclude_outside", 0) != 0;
	h->extrapolation = attr_float(np, "extrapolation_value", 0.0);
	if (attr_int(np, "antialias", 0) != 0) {
		imp_fail(im, "antialias = 1 is not supported");
		return false;
	}
	char b4[64];
	if (strcmp(attr_string(np, "keep_aspect_ratio_policy", "stretch", b4, sizeof b4), "stretch") != 0) {
		imp_fail(im, "attribute 'keep_aspect_ratio_policy' = \"%s\" is not supported (only stretch)", imp_q(im, b4));
		return false;
	}
	return true;
}

static bool import_resize(Imp *im, const Onnx__NodeProto *np, bool upsample)
{
	Value *x = operand(im, np, 0, "input");
	if (!x)
		return false;
	ResizeHow h;
	if (!parse_resize_how(im, np, upsample, &h))
		return false;
	int rank = x->type.shape.rank;
	if (rank < 1) {
		imp_fail(im, "its input is a scalar (nothing to resize)");
		return false;
	}
	/* the axes resized (opset 18's axes; before, all) */
	int64_t axes[MAX_RANK];
	int nax = rank;
	const Onnx__AttributeProto *aa = imp_attr(np, "axes");
	if (aa) {
		if (aa->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS || aa->n_ints < 1 || aa->n_ints > (size_t)rank) {
			imp_fail(im, "attribute 'axes' must hold 1 to %d axes", rank);
			return false;
		}
		nax = (int)aa->n_ints;
		for (int i = 0; i < nax; i++) {
			int64_t a = aa->ints[i] < 0 ? aa->ints[i] + rank : aa->ints[i];
			if (a < 0 || a >= rank) {
				imp_fail(im, "axis %" PRId64 " is out of range for rank %d", aa->ints[i], rank);
				return false;
			}
			for (int j = 0; j < i; j++)
				if (axes[j] == a) {
					imp_fail(im, "axis %" PRId64 " is given twice", aa->ints[i]);
					return false;
				}
			axes[i] = a;
		}
	} else {
		for (int i = 0; i < rank; i++)
			axes[i] = i;
	}
	/* scales, sizes and roi: known when compiling */
	double *scales = NULL, *roi = NULL;
	int64_t *sizes = NULL;
	int nsc = 0, nsz = 0, nroi = 0;
	const char *nm;
	bool ok = true;
	if (upsample && imp_opset(im) < 9) {
		const Onnx__AttributeProto *a = imp_attr(np, "scales");
		if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS) {
			imp_fail(im, "attribute 'scales' is missing");
			return false;
		}
		nsc = (int)(a->n_floats < 1000 ? a->n_floats : 1000);
		scales = xcalloc((size_t)nsc + 1, sizeof *scales);
		for (int i = 0; i < nsc; i++)
			scales[i] = a->floats[i];
	} else if (upsample || imp_opset(im) < 11) {
		if (!(nm = imp_input_name(np, 1))) {
			imp_fail(im, "its scales (input 2) are missing");
			return false;
		}
		scales = imp_floats(im, nm, &nsc, "scales");
		ok = scales != NULL;
	} else {
		if ((nm = imp_input_name(np, 1)) && h.coord == C_TF_CROP_AND_RESIZE)
			ok = (roi = imp_floats(im, nm, &nroi, "roi")) != NULL;
		if (ok && (nm = imp_input_name(np, 2)))
			ok = (scales = imp_floats(im, nm, &nsc, "scales")) != NULL;
		if (ok && (nm = imp_input_name(np, 3)))
			ok = (sizes = imp_ints(im, nm, &nsz, "sizes")) != NULL;
	}
	if (ok && nsz && nsc) {
		imp_fail(im, "it has both scales and sizes (one of them must be empty)");
		ok = false;
	}
	if (ok && !nsz && !nsc) {
		imp_fail(im, "it has neither scales nor sizes");
		ok = false;
	}
	if (ok && nsc && nsc != nax) {
		imp_fail(im, "it has %d scales for %d axes", nsc, nax);
		ok = false;
	}
	if (ok && nsz && nsz != nax) {
		imp_fail(im, "it has %d sizes for %d axes", nsz, nax);
		ok = false;
	}
	if (ok && h.coord == C_TF_CROP_AND_RESIZE && nroi != 2 * nax) {
		imp_fail(im, "tf_crop_and_resize needs a roi of %d values (it has %d)", 2 * nax, nroi);
		ok = false;
	}
	/* the output's shape first: within the limits before anything is planned */
	Shape os = x->type.shape;
	for (int i = 0; ok && i < nax; i++) {
		int64_t in = x->type.shape.dim[axes[i]];
		double rs = roi ? roi[i] : 0, re = roi ? roi[nax + i] : 1;
		double o = nsz ? (double)sizes[i] : floor((double)in * (h.coord == C_TF_CROP_AND_RESIZE ? re - rs : 1) * scales[i]);
		if (!(o >= 1 && o <= (double)((int64_t)1 << 40))) {
			imp_fail(im, "axis %" PRId64 " resizes %" PRId64 " elements to %g (gdcc resizes between sizes of at least 1)",
				 axes[i], in, o);
			ok = false;
			break;
		}
		os.dim[axes[i]] = (int64_t)o;
	}
	if (ok)
		ok = size_ok(im, x->type.dtype, &os, "its result");
	AxisPlan plans[MAX_RANK];
	int nplans = 0;
	for (int i = 0; ok && i < nax; i++) {
		int64_t in = x->type.shape.dim[axes[i]], out;
		double scale;
		double rs = roi ? roi[i] : 0, re = roi ? roi[nax + i] : 1;
		if (nsz) {
			out = sizes[i];
			scale = in ? (double)out / (double)in : 1;
		} else {
			scale = scales[i];
			double o = floor((double)in * (h.coord == C_TF_CROP_AND_RESIZE ? re - rs : 1) * scale);
			if (!(scale > 0) || !(o < 1e12)) {
				imp_fail(im, "scale %g of axis %" PRId64 " is not a positive factor gdcc can size", scale, axes[i]);
				ok = false;
				break;
			}
			out = (int64_t)o;
		}
		if (out < 1 || in < 1 || out > ((int64_t)1 << 40)) {
			imp_fail(im, "axis %" PRId64 " resizes %" PRId64 " to %" PRId64 " elements (gdcc resizes between sizes of at least 1)",
				 axes[i], in, out);
			ok = false;
			break;
		}
		AxisPlan *p = &plans[nplans];
		memset(p, 0, sizeof *p);
		plan_axis(&h, in, out, scale, rs, re, p);
		if (plan_identity(p)) {
			plan_free(p);
			continue;
		}
		if (p->weighted && x->type.dtype != DT_F32) {
			imp_fail(im, "a %s resize of %s data is not supported (linear, cubic and extrapolation take f32)",
				 h.mode == R_NEAREST ? "nearest" : h.mode == R_LINEAR ? "linear" : "cubic", dtype_name(x->type.dtype));
			plan_free(p);
			ok = false;
			break;
		}
		p->axis = (int)axes[i];
		nplans++;
	}
	free(scales), free(roi), free(sizes);
	if (ok && nplans == 0) {
		ok = imp_finish(im, imp_step(im, np, OP_IDENTITY, &x, 1, NULL), np);
	} else if (ok) {
		/* the last axis first: tf_crop_and_resize's extrapolated values are
		 * then mixed by the outer axes as in the reference's recursion */
		Value *cur = x;
		for (int i = nplans - 1; i >= 0 && ok; i--) {
			bool last = i == 0;
			Value *nx = emit_axis(im, np, cur, plans[i].axis, &plans[i], last, &ok);
			if (!last)
				cur = nx;
		}
	}
	for (int i = 0; i < nplans; i++)
		plan_free(&plans[i]);
	return ok;
}

/* ---- ConvTranspose ------------------------------------------------------------------- */
static bool import_conv_transpose(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "input"), *w = x ? operand(im, np, 1, "weights") : NULL, *b = NULL;
	if (!w)
		return false;
	if (imp_input_name(np, 2) && !(b = imp_value(im, imp_input_name(np, 2), "bias")))
		return false;
	const Shape *xs = &x->type.shape, *ws = &w->type.shape;
	int rank = xs->rank, ns = rank - 2;
	if (rank < 3 || rank > 5 || ws->rank != rank) {
		imp_fail(im, "its input (rank %d) and weights (rank %d) must both be N, C and 1 to 3 spatial axes", rank, ws->rank);
		return false;
	}
	if (x->type.dtype != DT_F32 || w->type.dtype != DT_F32 || (b && b->type.dtype != DT_F32)) {
		imp_fail(im, "its operands must be f32");
		return false;
	}
	int64_t group = attr_int(np, "group", 1);
	int64_t C = xs->dim[1], Mg = ws->dim[1];
	if (group < 1 || C % group != 0 || ws->dim[0] != C) {
		imp_fail(im, "its weights [%" PRId64 ", ...] do not match %" PRId64 " input channels in %" PRId64 " groups",
			 ws->dim[0], C, group);
		return false;
	}
	int64_t M = Mg * group, Cg = C / group;
	int64_t k[3], d[3] = {1, 1, 1}, s[3] = {1, 1, 1}, op[3] = {0, 0, 0}, pads[6] = {0}, oshape[5];
	bool has_k, has_d, has_s, has_op, has_pads, has_os = false;
	if (!want_ints(im, np, "kernel_shape", ns, k, &has_k) || !want_ints(im, np, "dilations", ns, d, &has_d) ||
	    !want_ints(im, np, "strides", ns, s, &has_s) || !want_ints(im, np, "output_padding", ns, op, &has_op) ||
	    !want_ints(im, np, "pads", 2 * ns, pads, &has_pads))
		return false;
	const Onnx__AttributeProto *osa = imp_attr(np, "output_shape");
	if (osa) {
		if (osa->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS ||
		    (osa->n_ints != (size_t)ns && osa->n_ints != (size_t)rank)) {
			imp_fail(im, "attribute 'output_shape' must hold %d (or %d) integers", ns, rank);
			return false;
		}
		for (int i = 0; i < ns; i++)
			oshape[i] = osa->ints[osa->n_ints - (size_t)ns + (size_t)i];
		has_os = true;
	}
	char buf[32];
	const char *auto_pad = attr_string(np, "auto_pad", "NOTSET", buf, sizeof buf);
	bool same_upper = strcmp(auto_pad, "SAME_UPPER") == 0, same_lower = strcmp(auto_pad, "SAME_LOWER") == 0;
	if (!same_upper && !same_lower && strcmp(auto_pad, "NOTSET") != 0 && strcmp(auto_pad, "VALID") != 0) {
		imp_fail(im, "attribute 'auto_pad' = \"%s\" is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", imp_q(im, auto_pad));
		return false;
	}
	for (int i = 0; i < ns; i++) {
		if (has_k && k[i] != ws->dim[2 + i]) {
			imp_fail(im, "kernel_shape[%d] = %" PRId64 " is not the weights' %" PRId64, i, k[i], ws->dim[2 + i]);
			return false;
		}
		k[i] = ws->dim[2 + i];
		if (d[i] < 1 || s[i] < 1 || d[i] > INT32_MAX || s[i] > INT32_MAX || op[i] < 0 || op[i] >= (s[i] > d[i] ? s[i] : d[i]) ||
		    pads[i] < 0 || pads[ns + i] < 0 || pads[i] > INT32_MAX || pads[ns + i] > INT32_MAX) {
			imp_fail(im, "spatial axis %d: dilation %" PRId64 ", stride %" PRId64 ", output_padding %" PRId64
				     " or pads %" PRId64 "/%" PRId64 " out of range",
				 i, d[i], s[i], op[i], pads[i], pads[ns + i]);
			return false;
		}
		if (xs->dim[2 + i] < 1) {
			imp_fail(im, "spatial axis %d of its input is empty", i);
			return false;
		}
		int64_t ke = (k[i] - 1) * d[i] + 1;
		if (has_os || same_upper || same_lower) {
			int64_t out = has_os ? oshape[i] : xs->dim[2 + i] * s[i];
			int64_t total = s[i] * (xs->dim[2 + i] - 1) + op[i] + ke - out;
			int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); /* floor */
			if (same_upper) {
				pads[i] = half, pads[ns + i] = total - half;
			} else {
				pads[i] = total - half, pads[ns + i] = half;
			}
		}
	}
	/* 1. stride - 1 zeros after every input element: [N, C, D, 1, ...] padded to [N, C, D, s, ...] */
	Value *z = x;
	bool strided = false;
	for (int i = 0; i < ns; i++)
		strided |= s[i] > 1;
	if (strided) {
		int64_t sh2[MAX_RANK] = {xs->dim[0], C};
		for (int i = 0; i < ns; i++)
			if (__builtin_mul_overflow(xs->dim[2 + i], s[i], &sh2[2 + i])) {
				imp_fail(im, "spatial axis %d: %" PRId64 " elements at stride %" PRId64 " are too many", i,
					 xs->dim[2 + i], s[i]);
				return false;
			}
		Shape dil = {rank, {0}};
		memcpy(dil.dim, sh2, sizeof sh2);
		if (!size_ok(im, DT_F32, &dil, "its input spread by the strides"))
			return false;
		int64_t sh[MAX_RANK];
		int r2 = 2 + 2 * ns;
		sh[0] = xs->dim[0], sh[1] = C;
		int64_t pp[2 * MAX_RANK] = {0};
		for (int i = 0; i < ns; i++) {
			sh[2 + 2 * i] = xs->dim[2 + i], sh[3 + 2 * i] = 1;
			pp[r2 + 3 + 2 * i] = s[i] - 1;
		}
		if (!(z = reshape(im, np, z, sh, r2, "spread")))
			return false;
		Node *pn = imp_step(im, np, OP_PAD, &z, 1, "zeros");
		if (pn)
			node_set_ints(pn, "pads", pp, 2 * r2);
		if (!(z = imp_done(im, pn)))
			return false;
		if (!(z = reshape(im, np, z, sh2, rank, "dilated")))
			return false;
	}
	/* 2. the full convolution's padding, less the ONNX pads (negative: crop);
	 * the zeros after the last element count against the end */
	int64_t cp[2 * MAX_RANK] = {0};
	bool padded = false;
	for (int i = 0; i < ns; i++) {
		int64_t full = d[i] * (k[i] - 1);
		cp[2 + i] = full - pads[i];
		cp[rank + 2 + i] = full - pads[ns + i] + op[i] - (s[i] - 1);
		padded |= cp[2 + i] || cp[rank + 2 + i];
	}
	if (padded) {
		Node *pn = imp_step(im, np, OP_PAD, &z, 1, "padded");
		if (pn)
			node_set_ints(pn, "pads", cp, 2 * rank);
		if (!(z = imp_done(im, pn)))
			return false;
	}
	/* 3. weights [C, M/g, k...] as [M, C/g, k...], the kernel reversed */
	int64_t sh[MAX_RANK + 1], perm[MAX_RANK + 1];
	sh[0] = group, sh[1] = Cg, sh[2] = Mg;
	for (int i = 0; i < ns; i++)
		sh[3 + i] = k[i];
	Value *wv = reshape(im, np, w, sh, rank + 1, "wgroups");
	perm[0] = 0, perm[1] = 2, perm[2] = 1;
	for (int i = 0; i < ns; i++)
		perm[3 + i] = 3 + i;
	Node *tn = wv ? imp_step(im, np, OP_TRANSPOSE, &wv, 1, "wswap") : NULL;
	if (tn)
		node_set_ints(tn, "perm", perm, rank + 1);
	if (!(wv = imp_done(im, tn)))
		return false;
	int64_t wsh[MAX_RANK] = {M, Cg};
	for (int i = 0; i < ns; i++)
		wsh[2 + i] = k[i];
	if (!(wv = reshape(im, np, wv, wsh, rank, "wconv")))
		return false;
	int64_t st[3], en[3], ax[3], sp[3];
	for (int i = 0; i < ns; i++)
		st[i] = -1, en[i] = INT64_MIN, ax[i] = 2 + i, sp[i] = -1;
	Node *rn = imp_step(im, np, OP_SLICE, &wv, 1, "wflip");
	if (rn) {
		node_set_ints(rn, "starts", st, ns);
		node_set_ints(rn, "ends", en, ns);
		node_set_ints(rn, "axes", ax, ns);
		node_set_ints(rn, "steps", sp, ns);
	}
	if (!(wv = imp_done(im, rn)))
		return false;
	/* 4. the convolution */
	Value *cin[3] = {z, wv, b};
	Node *cn = imp_step(im, np, OP_CONV, cin, b ? 3 : 2, NULL);
	if (cn) {
		node_set_int(cn, "group", group);
		node_set_ints(cn, "dilations", d, ns);
	}
	return imp_finish(im, cn, np);
}

/* ---- normalizations ------------------------------------------------------------------- */
static bool import_instancenorm(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "input"), *sc = x ? operand(im, np, 1, "scale") : NULL,
	      *bi = sc ? operand(im, np, 2, "bias") : NULL;
	if (!bi)
		return false;
	int rank = x->type.shape.rank;
	if (rank < 3 || x->type.dtype != DT_F32) {
		imp_fail(im, "its input must be f32 of rank 3 or more (N, C, spatial axes)");
		return false;
	}
	int64_t C = x->type.shape.dim[1];
	if (sc->type.shape.rank != 1 || sc->type.shape.dim[0] != C || bi->type.shape.rank != 1 || bi->type.shape.dim[0] != C) {
		imp_fail(im, "its scale and bias must hold one value per channel (%" PRId64 ")", C);
		return false;
	}
	Shape ones_s = {rank - 2, {0}};
	for (int i = 2; i < rank; i++)
		ones_s.dim[i - 2] = x->type.shape.dim[i];
	Tensor *ones = tensor_new(DT_F32, &ones_s);
	for (int64_t i = 0; i < tensor_numel(ones); i++)
		((float *)ones->data)[i] = 1;
	Value *one = imp_const(im, np, "ones", ones);
	Value *lin[2] = {x, one};
	Node *ln = one ? imp_step(im, np, OP_LAYERNORM, lin, 2, "normalized") : NULL;
	if (ln) {
		node_set_int(ln, "axis", 2);
		node_set_float(ln, "epsilon", attr_float(np, "epsilon", 1e-5));
	}
	Value *y = imp_done(im, ln);
	int64_t cs[MAX_RANK];
	cs[0] = C;
	for (int i = 1; i < rank - 1; i++)
		cs[i] = 1;
	Value *scv = y ? reshape(im, np, sc, cs, rank - 1, "scale") : NULL;
	Value *biv = scv ? reshape(im, np, bi, cs, rank - 1, "bias") : NULL;
	Value *m = biv ? binary(im, np, OP_MUL, y, scv, "scaled") : NULL;
	return m && last_binary(im, np, OP_ADD, m, biv);
}

static bool import_mvn(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "input");
	if (!x)
		return false;
	int rank = x->type.shape.rank;
	int64_t axes[MAX_RANK] = {0, 2, 3};
	int nax = 3;
	const Onnx__AttributeProto *a = imp_attr(np, "axes");
	if (a) {
		if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS || a->n_ints > (size_t)rank) {
			imp_fail(im, "attribute 'axes' must hold at most %d axes", rank);
			return false;
		}
		nax = (int)a->n_ints;
		for (int i = 0; i < nax; i++)
			axes[i] = a->ints[i];
	}
	if (x->type.dtype != DT_F32) {
		imp_fail(im, "its input must be f32");
		return false;
	}
	Node *mn = imp_step(im, np, OP_REDUCE_MEAN, &x, 1, "mean");
	if (mn) {
		node_set_ints(mn, "axes", axes, nax);
		node_set_int(mn, "keepdims", 1);
	}
	Value *mean = imp_done(im, mn);
	Value *dv = mean ? binary(im, np, OP_SUB, x, mean, "centered") : NULL;
	Value *sq = dv ? binary(im, np, OP_MUL, dv, dv, "squared") : NULL;
	Node *vn = sq ? imp_step(im, np, OP_REDUCE_MEAN, &sq, 1, "variance") : NULL;
	if (vn) {
		node_set_ints(vn, "axes", axes, nax);
		node_set_int(vn, "keepdims", 1);
	}
	Value *var = imp_done(im, vn);
	Value *sd = var ? unary(im, np, OP_SQRT, var, "std") : NULL;
	Shape s0 = {0};
	Tensor *eps = tensor_new(DT_F32, &s0);
	((float *)eps->data)[0] = 1e-9f;
	Value *ev = sd ? imp_const(im, np, "epsilon", eps) : (tensor_free(eps), NULL);
	Value *den = ev ? binary(im, np, OP_ADD, sd, ev, "denominator") : NULL;
	return den && last_binary(im, np, OP_DIV, dv, den);
}

static bool import_lrn(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "input");
	if (!x)
		return false;
	int rank = x->type.shape.rank;
	const Onnx__AttributeProto *sa = imp_attr(np, "size");
	if (!sa || sa->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT || sa->i < 1 || sa->i > INT32_MAX) {
		imp_fail(im, "attribute 'size' (a positive window) is missing");
		return false;
	}
	if (rank < 2 || x->type.dtype != DT_F32) {
		imp_fail(im, "its input must be f32 of rank 2 or more (N, C, ...)");
		return false;
	}
	int64_t size = sa->i;
	double alpha = attr_float(np, "alpha", 1e-4), beta = attr_float(np, "beta", 0.75), bias = attr_float(np, "bias", 1.0);
	int64_t rest = 1;
	for (int i = 2; i < rank; i++)
		rest *= x->type.shape.dim[i];
	Value *sq = binary(im, np, OP_MUL, x, x, "squared");
	int64_t sh[4] = {x->type.shape.dim[0], 1, x->type.shape.dim[1], rest};
	Value *r = sq ? reshape(im, np, sq, sh, 4, "channels") : NULL;
	Node *pn = r ? imp_step(im, np, OP_AVGPOOL, &r, 1, "window") : NULL;
	if (pn) {
		int64_t ks[2] = {size, 1}, pads[4] = {(size - 1) / 2, 0, size - 1 - (size - 1) / 2, 0};
		node_set_ints(pn, "kernel_shape", ks, 2);
		node_set_ints(pn, "pads", pads, 4);
		node_set_int(pn, "count_include_pad", 1);
	}
	Value *avg = imp_done(im, pn);
	Value *back = avg ? reshape(im, np, avg, x->type.shape.dim, rank, "sums") : NULL;
	Shape s0 = {0};
	Tensor *ta = tensor_new(DT_F32, &s0), *tb = tensor_new(DT_F32, &s0), *tp = tensor_new(DT_F32, &s0);
	((float *)ta->data)[0] = (float)alpha;
	((float *)tb->data)[0] = (float)bias;
	((float *)tp->data)[0] = (float)-beta;
	Value *av = back ? imp_const(im, np, "alpha", ta) : (tensor_free(ta), NULL);
	Value *bv = av ? imp_const(im, np, "bias", tb) : (tensor_free(tb), NULL);
	Value *pv = bv ? imp_const(im, np, "beta", tp) : (tensor_free(tp), NULL);
	Value *m = pv ? binary(im, np, OP_MUL, back, av, "scaled") : NULL;
	Value *base = m ? binary(im, np, OP_ADD, m, bv, "base") : NULL;
	Value *f = base ? binary(im, np, OP_POW, base, pv, "factor") : NULL;
	return f && last_binary(im, np, OP_MUL, x, f);
}

/* ---- ScatterElements ------------------------------------------------------------------ */
/* scatter_nd with full coordinates: position p of indices addresses data
 * at p with axis `axis` replaced by indices[p]; the coordinates are a
 * constant grid of the other axes plus indices times the axis's unit
 * vector, [..., rank]. */
static bool import_scatter_elements(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "data"), *idx = x ? operand(im, np, 1, "indices") : NULL,
	      *upd = idx ? operand(im, np, 2, "updates") : NULL;
	if (!upd)
		return false;
	const Shape *ds = &x->type.shape, *is = &idx->type.shape;
	int rank = ds->rank;
	if (rank < 1 || rank >= MAX_RANK || is->rank != rank || (idx->type.dtype != DT_I64 && idx->type.dtype != DT_I32)) {
		imp_fail(im, "its indices must be i32 or i64 of data's rank (1 to %d)", MAX_RANK - 1);
		return false;
	}
	int64_t axis = attr_int(np, "axis", 0);
	if (axis < -rank || axis >= rank) {
		imp_fail(im, "axis %" PRId64 " is out of range for rank %d", axis, rank);
		return false;
	}
	if (axis < 0)
		axis += rank;
	for (int d = 0; d < rank; d++)
		if (d != axis && is->dim[d] > ds->dim[d]) {
			imp_fail(im, "indices' axis %d (%" PRId64 ") is longer than data's (%" PRId64 ")", d, is->dim[d], ds->dim[d]);
			return false;
		}
	char buf[16];
	const char *red = attr_string(np, "reduction", "none", buf, sizeof buf);
	if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") && strcmp(red, "min")) {
		imp_fail(im, "attribute 'reduction' = \"%s\" is not one of none, add, mul, max, min", imp_q(im, red));
		return false;
	}
	Shape gs = *is;
	gs.dim[gs.rank++] = rank;
	if (!size_ok(im, DT_I64, &gs, "its coordinates"))
		return false;
	int64_t n = shape_numel(is);
	Tensor *grid = tensor_new(DT_I64, &gs);
	int64_t pos[MAX_RANK] = {0};
	for (int64_t e = 0; e < n; e++) {
		for (int d = 0; d < rank; d++)
			((int64_t *)grid->data)[e * rank + d] = d == axis ? 0 : pos[d];
		for (int d = rank - 1; d >= 0 && ++pos[d] == is->dim[d]; d--)
			pos[d] = 0;
	}
	Shape us = {1, {rank}};
	Tensor *unit = tensor_new(DT_I64, &us);
	((int64_t *)unit->data)[axis] = 1;
	Value *gv = imp_const(im, np, "grid", grid);
	Value *uv = gv ? imp_const(im, np, "unit", unit) : (tensor_free(unit), NULL);
	Value *iv = idx;
	if (uv && idx->type.dtype != DT_I64) {
		Node *cn = imp_step(im, np, OP_CAST, &iv, 1, "i64");
		if (cn)
			node_set_dtype(cn, "to", DT_I64);
		iv = imp_done(im, cn);
	}
	int64_t last = rank;
	Node *un = uv && iv ? imp_step(im, np, OP_UNSQUEEZE, &iv, 1, "column") : NULL;
	if (un)
		node_set_ints(un, "axes", &last, 1);
	Value *col = imp_done(im, un);
	Value *along = col ? binary(im, np, OP_MUL, col, uv, "along") : NULL;
	Value *coords = along ? binary(im, np, OP_ADD, along, gv, "coords") : NULL;
	Value *in[3] = {x, coords, upd};
	Node *sn = coords ? imp_step(im, np, OP_SCATTER_ND, in, 3, NULL) : NULL;
	if (sn)
		node_set_string(sn, "reduction", red);
	return imp_finish(im, sn, np);
}

/* ---- Pow of an integer base with an f32 exponent ------------------------------------ */
/* The result is the base's type: where the exponent is a whole number,
 * gdcc's exact integer pow (base ** cast(exponent)); elsewhere the f32 pow
 * truncated (numpy's (int)pow(double, double)). */
static bool is_int_pow(Imp *im, const Onnx__NodeProto *np)
{
	const char *a = imp_input_name(np, 0), *b = imp_input_name(np, 1);
	if (np->n_input != 2 || !a || !b)
		return false;
	Value *x = imp_value(im, a, "base"), *y = x ? imp_value(im, b, "exponent") : NULL;
	return y && dtype_is_int(x->type.dtype) && y->type.dtype == DT_F32;
}

static Value *cast_to(Imp *im, const Onnx__NodeProto *np, Value *x, DType to, const char *what)
{
	Node *n = imp_step(im, np, OP_CAST, &x, 1, what);
	if (n)
		node_set_dtype(n, "to", to);
	return imp_done(im, n);
}

static bool import_int_pow(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "base"), *y = x ? operand(im, np, 1, "exponent") : NULL;
	if (!y)
		return false;
	DType dt = x->type.dtype;
	Value *yi = cast_to(im, np, y, dt, "whole_exponent");
	Value *pi = yi ? binary(im, np, OP_POW, x, yi, "exact") : NULL;
	Value *xf = pi ? cast_to(im, np, x, DT_F32, "f32_base") : NULL;
	Value *pf = xf ? binary(im, np, OP_POW, xf, y, "f32_pow") : NULL;
	Value *ci = pf ? cast_to(im, np, pf, dt, "truncated") : NULL;
	Value *fl = ci ? unary(im, np, OP_FLOOR, y, "floor") : NULL;
	Value *whole = fl ? binary(im, np, OP_EQUAL, y, fl, "whole") : NULL;
	Value *in[3] = {whole, pi, ci};
	return whole && imp_finish(im, imp_step(im, np, OP_WHERE, in, 3, NULL), np);
}

/* ---- Einsum ------------------------------------------------------------------------- */
/* Labels: the letters (0..51) and, for "...", one label per broadcast
 * axis (52 on). */
enum { EIN_LABELS = 52 + MAX_RANK, EIN_MAX_OPS = 16 };

typedef struct {
	Value *v;
	int n;
	int lab[MAX_RANK];
} EinTerm;

static int ein_letter(char c)
{
	return c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + c - 'A' : -1;
}

/* One term of the equation (s[0..len)) for an operand of `rank` axes
 * (rank < 0: the output, whose "..." has `ell` axes); false after the
 * message. */
static bool ein_term(Imp *im, const char *s, size_t len, int rank, int *ell, int *lab, int *n)
{
	int letters = 0, dots = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ')
			continue;
		if (s[i] == '.') {
			if (!(i + 2 < len && s[i + 1] == '.' && s[i + 2] == '.')) {
				imp_fail(im, "equation: a '.' that is not part of \"...\"");
				return false;
			}
			dots++;
			i += 2;
			continue;
		}
		if (ein_letter(s[i]) < 0) {
			imp_fail(im, "equation: '%c' is not a letter (subscripts are a-z, A-Z and one \"...\")", s[i]);
			return false;
		}
		letters++;
	}
	if (dots > 1) {
		imp_fail(im, "equation: a term has \"...\" twice");
		return false;
	}
	int e = rank < 0 ? *ell : rank - letters;
	if (rank >= 0 && (e < 0 || (!dots && e != 0))) {
		imp_fail(im, "equation: a term has %d subscripts for an operand of rank %d", letters, rank);
		return false;
	}
	if (rank >= 0 && dots)
		*ell = e > *ell ? e : *ell;
	*n = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ')
			continue;
		if (s[i] == '.') {
			for (int k = 0; k < e; k++) /* right-aligned broadcast axes */
				lab[(*n)++] = 52 + (MAX_RANK - e) + k;
			i += 2;
			continue;
		}
		if (*n >= MAX_RANK) {
			imp_fail(im, "equation: a term has more than %d subscripts", MAX_RANK);
			return false;
		}
		lab[(*n)++] = ein_letter(s[i]);
	}
	for (int a = 0; a < *n; a++)
		for (int b = a + 1; b < *n; b++)
			if (lab[a] == lab[b]) {
				imp_fail(im, "equation: a subscript repeated in one term (a diagonal) is not supported");
				return false;
			}
	return true;
}

static Value *ein_transpose(Imp *im, const Onnx__NodeProto *np, EinTerm *t, const int *order, int n, const char *what)
{
	int64_t perm[MAX_RANK];
	bool same = n == t->n;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < t->n; j++)
			if (t->lab[j] == order[i])
				perm[i] = j;
		same &= perm[i] == i;
	}
	if (same)
		return t->v;
	Node *tn = imp_step(im, np, OP_TRANSPOSE, &t->v, 1, what);
	if (tn)
		node_set_ints(tn, "perm", perm, n);
	return imp_done(im, tn);
}

/* Sum t over the labels that no later term nor the output needs. */
static bool ein_reduce(Imp *im, const Onnx__NodeProto *np, EinTerm *t, const bool *keep, const char *what)
{
	int64_t axes[MAX_RANK];
	int na = 0, m = 0;
	for (int i = 0; i < t->n; i++) {
		if (!keep[t->lab[i]])
			axes[na++] = i;
		else
			t->lab[m++] = t->lab[i];
	}
	if (!na)
		return true;
	Node *rn = imp_step(im, np, OP_REDUCE_SUM, &t->v, 1, what);
	if (rn) {
		node_set_ints(rn, "axes", axes, na);
		node_set_int(rn, "keepdims", 0);
	}
	t->n = m;
	return (t->v = imp_done(im, rn)) != NULL;
}

/* The product of two terms over their shared labels (batch: kept, in
 * both; contracted: in both, not kept): one matmul of [batch..., left,
 * contracted] by [batch..., contracted, right] (batch axes broadcast). */
static bool ein_pair(Imp *im, const Onnx__NodeProto *np, EinTerm *a, EinTerm *b, const bool *keep, int step)
{
	/* first each sums what neither the other nor later terms need */
	char what[32];
	bool ka[EIN_LABELS], kb[EIN_LABELS];
	memcpy(ka, keep, sizeof ka);
	memcpy(kb, keep, sizeof kb);
	for (int i = 0; i < b->n; i++)
		ka[b->lab[i]] = true;
	for (int i = 0; i < a->n; i++)
		kb[a->lab[i]] = true;
	snprintf(what, sizeof what, "sum%da", step);
	if (!ein_reduce(im, np, a, ka, what))
		return false;
	snprintf(what, sizeof what, "sum%db", step);
	if (!ein_reduce(im, np, b, kb, what))
		return false;
	bool inb[EIN_LABELS] = {false}, ina[EIN_LABELS] = {false};
	int64_t size[EIN_LABELS] = {0};
	for (int i = 0; i < b->n; i++)
		inb[b->lab[i]] = true, size[b->lab[i]] = b->v->type.shape.dim[i];
	for (int i = 0; i < a->n; i++) {
		ina[a->lab[i]] = true;
		int64_t d = a->v->type.shape.dim[i];
		size[a->lab[i]] = size[a->lab[i]] > d ? size[a->lab[i]] : d;
	}
	int batch[MAX_RANK], left[MAX_RANK], con[MAX_RANK], right[MAX_RANK], nb = 0, nl = 0, nc = 0, nr = 0;
	for (int i = 0; i < a->n; i++) {
		int l = a->lab[i];
		if (inb[l] && keep[l])
			batch[nb++] = l;
		else if (inb[l])
			con[nc++] = l;
		else
			left[nl++] = l;
	}
	for (int i = 0; i < b->n; i++)
		if (!ina[b->lab[i]])
			right[nr++] = b->lab[i];
	int64_t L = 1, C = 1, R = 1;
	for (int i = 0; i < nl; i++)
		L *= size[left[i]];
	for (int i = 0; i < nc; i++) {
		/* (a contracted axis broadcast in one operand: sum it there first) */
		int64_t da = 0, db = 0;
		for (int j = 0; j < a->n; j++)
			if (a->lab[j] == con[i])
				da = a->v->type.shape.dim[j];
		for (int j = 0; j < b->n; j++)
			if (b->lab[j] == con[i])
				db = b->v->type.shape.dim[j];
		if (da != db) {
			imp_fail(im, "equation: subscript of sizes %" PRId64 " and %" PRId64 " summed over: they must be equal", da, db);
			return false;
		}
		C *= size[con[i]];
	}
	for (int i = 0; i < nr; i++)
		R *= size[right[i]];
	int ord[MAX_RANK], n = 0;
	for (int i = 0; i < nb; i++)
		ord[n++] = batch[i];
	for (int i = 0; i < nl; i++)
		ord[n++] = left[i];
	for (int i = 0; i < nc; i++)
		ord[n++] = con[i];
	snprintf(what, sizeof what, "a%d", step);
	Value *av = ein_transpose(im, np, a, ord, n, what);
	n = 0;
	for (int i = 0; i < nb; i++)
		ord[n++] = batch[i];
	for (int i = 0; i < nc; i++)
		ord[n++] = con[i];
	for (int i = 0; i < nr; i++)
		ord[n++] = right[i];
	snprintf(what, sizeof what, "b%d", step);
	Value *bv = av ? ein_transpose(im, np, b, ord, n, what) : NULL;
	if (!bv)
		return false;
	int64_t sa[MAX_RANK], sb[MAX_RANK];
	for (int i = 0; i < nb; i++) {
		for (int j = 0; j < a->n; j++)
			if (a->lab[j] == batch[i])
				sa[i] = a->v->type.shape.dim[j];
		for (int j = 0; j < b->n; j++)
			if (b->lab[j] == batch[i])
				sb[i] = b->v->type.shape.dim[j];
	}
	sa[nb] = L, sa[nb + 1] = C, sb[nb] = C, sb[nb + 1] = R;
	snprintf(what, sizeof what, "a%dmat", step);
	av = reshape(im, np, av, sa, nb + 2, what);
	snprintf(what, sizeof what, "b%dmat", step);
	bv = av ? reshape(im, np, bv, sb, nb + 2, what) : NULL;
	snprintf(what, sizeof what, "ab%d", step);
	Value *p = bv ? binary(im, np, OP_MATMUL, av, bv, what) : NULL;
	if (!p)
		return false;
	int64_t sr[MAX_RANK];
	int nn = 0;
	for (int i = 0; i < nb; i++) {
		sr[nn] = p->type.shape.dim[i];
		a->lab[nn++] = batch[i];
	}
	for (int i = 0; i < nl; i++) {
		sr[nn] = size[left[i]];
		a->lab[nn++] = left[i];
	}
	for (int i = 0; i < nr; i++) {
		if (nn >= MAX_RANK) {
			imp_fail(im, "equation: an intermediate product would have rank above %d", MAX_RANK);
			return false;
		}
		sr[nn] = size[right[i]];
		a->lab[nn++] = right[i];
	}
	snprintf(what, sizeof what, "p%d", step);
	a->n = nn;
	return (a->v = reshape(im, np, p, sr, nn, what)) != NULL;
}

static bool einsum_of(Imp *im, const Onnx__NodeProto *np, const char *eq, size_t len);

static bool import_einsum(Imp *im, const Onnx__NodeProto *np)
{
	const Onnx__AttributeProto *ea = imp_attr(np, "equation");
	if (!ea || ea->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING || !ea->s.data) {
		imp_fail(im, "attribute 'equation' is missing");
		return false;
	}
	size_t len = ea->s.len;
	char *eq = xstrndup((const char *)ea->s.data, len); /* (NUL-terminated) */
	bool ok = einsum_of(im, np, eq, len);
	free(eq);
	return ok;
}

static bool einsum_of(Imp *im, const Onnx__NodeProto *np, const char *eq, size_t len)
{
	int nops = (int)np->n_input;
	if (nops < 1 || nops > EIN_MAX_OPS) {
		imp_fail(im, "it has %d operands (gdcc takes 1 to %d)", nops, EIN_MAX_OPS);
		return false;
	}
	size_t arrow = len;
	for (size_t i = 0; i + 1 < len; i++)
		if (eq[i] == '-' && eq[i + 1] == '>')
			arrow = i;
	EinTerm t[EIN_MAX_OPS];
	int ell = 0, count[EIN_LABELS] = {0};
	size_t at = 0;
	for (int k = 0; k < nops; k++) {
		size_t end = at;
		while (end < arrow && eq[end] != ',')
			end++;
		if ((end == arrow) != (k == nops - 1)) {
			imp_fail(im, "equation \"%s\": its terms do not match the %d operands", imp_q(im, eq), nops);
			return false;
		}
		if (!(t[k].v = operand(im, np, (size_t)k, "operand")))
			return false;
		if (t[k].v->type.dtype != DT_F32) {
			imp_fail(im, "operand %d is %s (gdcc's einsum takes f32)", k + 1, dtype_name(t[k].v->type.dtype));
			return false;
		}
		if (!ein_term(im, eq + at, end - at, t[k].v->type.shape.rank, &ell, t[k].lab, &t[k].n))
			return false;
		for (int i = 0; i < t[k].n; i++)
			count[t[k].lab[i]]++;
		at = end + 1;
	}
	/* the output: given, or the labels seen once, in order ("..." first) */
	int out[MAX_RANK], no = 0;
	if (arrow < len) {
		if (!ein_term(im, eq + arrow + 2, len - arrow - 2, -1, &ell, out, &no))
			return false;
		for (int i = 0; i < no; i++)
			if (!count[out[i]]) {
				imp_fail(im, "equation: output subscript '%c' is in no operand",
					 out[i] < 26 ? 'a' + out[i] : out[i] < 52 ? 'A' + out[i] - 26 : '.');
				return false;
			}
	} else {
		for (int l = 52; l < EIN_LABELS; l++)
			if (count[l] && no < MAX_RANK)
				out[no++] = l;
		for (int l = 0; l < 52; l++)
			if (count[l] == 1 && no < MAX_RANK)
				out[no++] = l;
	}
	/* pairwise, left to right; a label is kept while the output or a
	 * later operand has it */
	bool keep[EIN_LABELS];
	for (int k = 1; k < nops; k++) {
		memset(keep, 0, sizeof keep);
		for (int i = 0; i < no; i++)
			keep[out[i]] = true;
		for (int j = k + 1; j < nops; j++)
			for (int i = 0; i < t[j].n; i++)
				keep[t[j].lab[i]] = true;
		if (!ein_pair(im, np, &t[0], &t[k], keep, k))
			return false;
	}
	memset(keep, 0, sizeof keep);
	for (int i = 0; i < no; i++)
		keep[out[i]] = true;
	if (!ein_reduce(im, np, &t[0], keep, "sum"))
		return false;
	/* the output order: a transpose (or an identity) under the result's name */
	int64_t perm[MAX_RANK];
	bool same = true;
	for (int i = 0; i < no; i++) {
		for (int j = 0; j < t[0].n; j++)
			if (t[0].lab[j] == out[i])
				perm[i] = j;
		same &= perm[i] == i;
	}
	Node *ln = imp_step(im, np, same ? OP_IDENTITY : OP_TRANSPOSE, &t[0].v, 1, NULL);
	if (ln && !same)
		node_set_ints(ln, "perm", perm, no);
	return imp_finish(im, ln, np);
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ------------------------------ */
/* loss = -x[n, t, d...] (times weight[t]) as gather_elements along the
 * classes; an ignore_index position gives 0 and leaves the mean's
 * denominator (the sum of the weights taken, or the count). */
static Value *nll_of(Imp *im, const Onnx__NodeProto *np, Value *x, Value *t, Value *w, bool last)
{
	char buf[8];
	const char *red = attr_string(np, "reduction", "mean", buf, sizeof buf);
	if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean")) {
		imp_fail(im, "attribute 'reduction' = \"%s\" is not one of none, sum, mean", imp_q(im, red));
		return NULL;
	}
	const Shape *xs = &x->type.shape, *ts = &t->type.shape;
	bool shapes = xs->rank >= 2 && ts->rank == xs->rank - 1 && ts->dim[0] == xs->dim[0];
	for (int i = 2; shapes && i < xs->rank; i++)
		shapes = ts->dim[i - 1] == xs->dim[i];
	if (x->type.dtype != DT_F32 || !shapes || !dtype_is_int(t->type.dtype)) {
		imp_fail(im, "its input must be f32 [N, C, d...] and its target integers [N, d...]");
		return NULL;
	}
	if (w && (w->type.dtype != DT_F32 || w->type.shape.rank != 1 || w->type.shape.dim[0] != xs->dim[1])) {
		imp_fail(im, "its weight must be f32 [C] (C = %" PRId64 ")", xs->dim[1]);
		return NULL;
	}
	const Onnx__AttributeProto *ia = imp_attr(np, "ignore_index");
	Value *tc = t, *mf = NULL;
	if (t->type.dtype != DT_I64 && !(tc = cast_to(im, np, t, DT_I64, "target")))
		return NULL;
	if (ia) {
		Shape s0 = {0};
		Tensor *iv = tensor_new(DT_I64, &s0), *zero = tensor_new(DT_I64, &s0);
		((int64_t *)iv->data)[0] = ia->i;
		Value *ic = imp_const(im, np, "ignore_index", iv);
		Value *zc = ic ? imp_const(im, np, "zero", zero) : (tensor_free(zero), NULL);
		Value *eq = zc ? binary(im, np, OP_EQUAL, tc, ic, "ignored") : NULL;
		Value *keep = eq ? unary(im, np, OP_NOT, eq, "kept") : NULL;
		Value *win[3] = {keep, tc, zc};
		Value *t2 = keep ? imp_done(im, imp_step(im, np, OP_WHERE, win, 3, "class")) : NULL;
		mf = t2 ? cast_to(im, np, keep, DT_F32, "kept_f32") : NULL;
		if (!mf)
			return NULL;
		tc = t2;
	}
	int64_t one = 1;
	Node *un = imp_step(im, np, OP_UNSQUEEZE, &tc, 1, "class_axis");
	if (un)
		node_set_ints(un, "axes", &one, 1);
	Value *ti = imp_done(im, un);
	Value *gin[2] = {x, ti};
	Node *gn = ti ? imp_step(im, np, OP_GATHER_ELEMENTS, gin, 2, "picked") : NULL;
	if (gn)
		node_set_int(gn, "axis", 1);
	Value *g = imp_done(im, gn);
	Node *sn = g ? imp_step(im, np, OP_SQUEEZE, &g, 1, "picked_flat") : NULL;
	if (sn)
		node_set_ints(sn, "axes", &one, 1);
	Value *l = imp_done(im, sn);
	Value *wt = NULL, *den = mf;
	if (l && w) {
		Value *win[2] = {w, tc};
		Node *wn = imp_step(im, np, OP_GATHER, win, 2, "weights");
		if (wn)
			node_set_int(wn, "axis", 0);
		wt = imp_done(im, wn);
		den = wt && mf ? binary(im, np, OP_MUL, wt, mf, "weights_kept") : wt;
		if (!den)
			return NULL;
	}
	bool none = strcmp(red, "none") == 0, mean = strcmp(red, "mean") == 0;
	/* -x[t] times the weight (times 1 where kept, 0 where ignored) */
	Value *f = den;
	if (!l)
		return NULL;
	Node *ln;
	if (f) {
		Value *nl = unary(im, np, OP_NEG, l, "negated");
		Value *in2[2] = {nl, f};
		ln = nl ? imp_step(im, np, OP_MUL, in2, 2, last && none ? NULL : "losses") : NULL;
	} else {
		ln = imp_step(im, np, OP_NEG, &l, 1, last && none ? NULL : "losses");
	}
	if (last && none)
		return imp_finish(im, ln, np) ? l : NULL;
	Value *loss = imp_done(im, ln);
	if (!loss || none)
		return loss;
	Node *rn = imp_step(im, np, OP_REDUCE_SUM, &loss, 1, last && !mean ? NULL : "total");
	if (rn)
		node_set_int(rn, "keepdims", 0);
	if (last && !mean)
		return imp_finish(im, rn, np) ? loss : NULL;
	Value *tot = imp_done(im, rn);
	if (!tot || !mean)
		return tot;
	Value *dv;
	if (den) {
		Node *dn = imp_step(im, np, OP_REDUCE_SUM, &den, 1, "denominator");
		if (dn)
			node_set_int(dn, "keepdims", 0);
		dv = imp_done(im, dn);
	} else {
		Shape s0 = {0};
		Tensor *c = tensor_new(DT_F32, &s0);
		((float *)c->data)[0] = (float)shape_numel(ts);
		dv = imp_const(im, np, "count", c);
	}
	Value *in2[2] = {tot, dv};
	Node *mn = dv ? imp_step(im, np, OP_DIV, in2, 2, last ? NULL : "mean") : NULL;
	if (last)
		return imp_finish(im, mn, np) ? tot : NULL;
	return imp_done(im, mn);
}

static bool import_nll(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "input"), *t = x ? operand(im, np, 1, "target") : NULL, *w = NULL;
	if (!t)
		return false;
	if (imp_input_name(np, 2) && !(w = operand(im, np, 2, "weight")))
		return false;
	return nll_of(im, np, x, t, w, true) != NULL;
}

/* log_softmax along the classes, then the NLL of it; result 2, when
 * named, the log-probabilities */
static bool import_sce(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "scores"), *t = x ? operand(im, np, 1, "labels") : NULL, *w = NULL;
	if (!t)
		return false;
	if (imp_input_name(np, 2) && !(w = operand(im, np, 2, "weights")))
		return false;
	if (x->type.shape.rank < 2 || x->type.dtype != DT_F32) {
		imp_fail(im, "its scores must be f32 [N, C, d...]");
		return false;
	}
	Node *sn = imp_step(im, np, OP_LOGSOFTMAX, &x, 1, "log_prob");
	if (sn)
		node_set_int(sn, "axis", 1);
	Value *lp = imp_done(im, sn);
	if (!lp || !nll_of(im, np, lp, t, w, true))
		return false;
	if (np->n_output > 1 && np->output[1][0]) {
		Node *idn = imp_step(im, np, OP_IDENTITY, &lp, 1, "log_prob_out");
		Value *v = imp_done(im, idn);
		return v && imp_bind(im, np->output[1], v);
	}
	return true;
}

/* ---- MaxUnpool ------------------------------------------------------------------------ */
/* X's values scattered to the flat positions I names in a zero tensor of
 * the output's shape: constant_of_shape, scatter_nd over the flat view,
 * reshape. */
static bool import_maxunpool(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "input"), *ix = x ? operand(im, np, 1, "indices") : NULL;
	if (!ix)
		return false;
	const Shape *xs = &x->type.shape;
	int rank = xs->rank, ns = rank - 2;
	if (rank < 3 || rank > 5 || !shape_eq(xs, &ix->type.shape) || !dtype_is_int(ix->type.dtype)) {
		imp_fail(im, "its input must be N, C and 1 to 3 spatial axes, its indices integers of the same shape");
		return false;
	}
	int64_t k[3], st[3] = {1, 1, 1}, pads[6] = {0};
	bool has_k, has_s, has_p;
	if (!want_ints(im, np, "kernel_shape", ns, k, &has_k) || !want_ints(im, np, "strides", ns, st, &has_s) ||
	    !want_ints(im, np, "pads", 2 * ns, pads, &has_p))
		return false;
	if (!has_k) {
		imp_fail(im, "attribute 'kernel_shape' is missing");
		return false;
	}
	/* the positions address the default shape; an output_shape given pads
	 * (or crops) that, the extra split as the ONNX reference does */
	Shape os = *xs, want;
	for (int i = 0; i < ns; i++) {
		if (k[i] < 1 || st[i] < 1 || k[i] > INT32_MAX || st[i] > INT32_MAX || pads[i] < 0 || pads[ns + i] < 0 ||
		    pads[i] > INT32_MAX || pads[ns + i] > INT32_MAX ||
		    __builtin_mul_overflow(xs->dim[2 + i] - 1, st[i], &os.dim[2 + i])) {
			imp_fail(im, "spatial axis %d: kernel, stride or pads out of range", i);
			return false;
		}
		os.dim[2 + i] += k[i] - pads[i] - pads[ns + i];
	}
	want = os;
	const char *on = imp_input_name(np, 2);
	if (on) {
		int cnt;
		int64_t *v = imp_ints(im, on, &cnt, "output_shape");
		if (!v)
			return false;
		if (cnt != rank) {
			imp_fail(im, "its output_shape has %d entries, not %d", cnt, rank);
			free(v);
			return false;
		}
		for (int i = 0; i < rank; i++)
			want.dim[i] = v[i];
		free(v);
		if (!size_ok(im, x->type.dtype, &want, "its output_shape"))
			return false;
	}
	if (want.dim[0] != xs->dim[0] || want.dim[1] != xs->dim[1]) {
		imp_fail(im, "its output_shape must keep N and C (%" PRId64 ", %" PRId64 ")", xs->dim[0], xs->dim[1]);
		return false;
	}
	for (int i = 2; i < rank; i++)
		if (os.dim[i] < 1 || want.dim[i] < 1) {
			imp_fail(im, "its output would have %" PRId64 " elements along axis %d", os.dim[i], i);
			return false;
		}
	if (!size_ok(im, x->type.dtype, &os, "its result"))
		return false;
	int64_t total = shape_numel(&os), n = shape_numel(xs), one = 1;
	Node *zn = imp_step(im, np, OP_CONSTANT_OF_SHAPE, NULL, 0, "zeros");
	if (zn) {
		node_set_ints(zn, "shape", &total, 1);
		node_set_dtype(zn, "dtype", x->type.dtype);
	}
	Value *zv = imp_done(im, zn);
	int64_t is[2] = {n, one};
	Value *iv = zv ? reshape(im, np, ix, is, 2, "positions") : NULL;
	Value *uv = iv ? reshape(im, np, x, &n, 1, "values") : NULL;
	Value *in[3] = {zv, iv, uv};
	Value *flat = uv ? imp_done(im, imp_step(im, np, OP_SCATTER_ND, in, 3, "flat")) : NULL;
	bool same = shape_eq(&os, &want);
	Node *rn = flat ? imp_step(im, np, OP_RESHAPE, &flat, 1, same ? NULL : "unpooled") : NULL;
	if (rn)
		node_set_ints(rn, "shape", os.dim, rank);
	if (same)
		return imp_finish(im, rn, np);
	Value *r = imp_done(im, rn);
	int64_t pp[2 * MAX_RANK] = {0};
	for (int i = 2; i < rank; i++) {
		int64_t extra = want.dim[i] - os.dim[i], half = extra >= 0 ? extra / 2 : -((-extra + 1) / 2);
		pp[i] = half, pp[rank + i] = extra - half;
	}
	Node *pn = r ? imp_step(im, np, OP_PAD, &r, 1, NULL) : NULL;
	if (pn)
		node_set_ints(pn, "pads", pp, 2 * rank);
	return imp_finish(im, pn, np);
}

/* ---- window functions ------------------------------------------------------------------ */
/* Hann, Hamming, Blackman: constants of the size given (known when
 * compiling), in double as the ONNX reference, as f32. */
static bool import_window(Imp *im, const Onnx__NodeProto *np, int kind)
{
	const char *sn = imp_input_name(np, 0);
	int cnt;
	int64_t *sz = sn ? imp_ints(im, sn, &cnt, "size") : NULL;
	if (!sn)
		imp_fail(im, "its size (input 1) is missing");
	if (!sz)
		return false;
	int64_t size = sz[0];
	free(sz);
	if (cnt != 1 || size < 0 || size > ((int64_t)1 << 30)) {
		imp_fail(im, "its size must be one count in [0, 2^30]");
		return false;
	}
	if (attr_int(np, "output_datatype", 1) != 1) {
		imp_fail(im, "output_datatype %" PRId64 " is not supported (f32: 1)", attr_int(np, "output_datatype", 1));
		return false;
	}
	bool periodic = attr_int(np, "periodic", 1) != 0;
	double d = periodic ? (double)size : (double)size - 1;
	Shape s1 = {1, {size}};
	Tensor *t = tensor_new(DT_F32, &s1);
	for (int64_t n = 0; n < size; n++) {
		double x = (double)n, w;
		switch (kind) {
		case 0: w = pow(sin(x * M_PI / d), 2); break;                                     /* Hann */
		case 1: w = 25.0 / 46.0 - cos(x * 2 * M_PI / d) * (1 - 25.0 / 46.0); break;     /* Hamming */
		default: w = cos(x * 2 * M_PI / d) * -0.5 + cos(x * 4 * M_PI / d) * 0.08 + 0.42; /* Blackman */
		}
		((float *)t->data)[n] = (float)w;
	}
	Value *c = imp_const(im, np, "window", t);
	return c && imp_finish(im, imp_step(im, np, OP_IDENTITY, &c, 1, NULL), np);
}

/* ---- training-mode Dropout ---------------------------------------------------------- */
/* MT19937 (Matsumoto and Nishimura), seeded as numpy's RandomState(seed). */
typedef struct {
	uint32_t mt[624];
	int i;
} Mt;

static void mt_seed(Mt *m, uint32_t seed)
{
	m->mt[0] = seed;
	for (int i = 1; i < 624; i++)
		m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t)i;
	m->i = 624;
}

static uint32_t mt_next(Mt *m)
{
	if (m->i >= 624) {
		for (int k = 0; k < 624; k++) {
			uint32_t y = (m->mt[k] & 0x80000000u) | (m->mt[(k + 1) % 624] & 0x7fffffffu);
			m->mt[k] = m->mt[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0);
		}
		m->i = 0;
	}
	uint32_t y = m->mt[m->i++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	return y ^ (y >> 18);
}

/* A double in [0, 1) from 53 random bits (numpy's random_sample). */
static double mt_uniform(Mt *m)
{
	uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
	return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

/* Dropout: 1 when training_mode is 1 and the ratio above 0, 0 when not
 * (the inference translation), -1 after an error (either not known when
 * compiling). */
static int training_dropout(Imp *im, const Onnx__NodeProto *np, double *ratio)
{
	const char *tn = imp_input_name(np, 2), *rn = imp_input_name(np, 1);
	if (!tn)
		return 0;
	int cnt;
	int64_t *t = imp_ints(im, tn, &cnt, "training_mode");
	if (!t)
		return -1;
	bool on = cnt == 1 && t[0];
	free(t);
	if (!on)
		return 0;
	*ratio = 0.5;
	if (rn) {
		double *r = imp_floats(im, rn, &cnt, "ratio");
		if (!r)
			return -1;
		if (cnt != 1) {
			imp_fail(im, "its ratio has %d values, not one", cnt);
			free(r);
			return -1;
		}
		*ratio = r[0];
		free(r);
	}
	return *ratio != 0;
}

static bool import_training_dropout(Imp *im, const Onnx__NodeProto *np, double ratio)
{
	Value *x = operand(im, np, 0, "input");
	if (!x)
		return false;
	const Onnx__AttributeProto *sa = imp_attr(np, "seed");
	if (!sa || sa->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
		imp_fail(im, "training_mode = 1 needs a seed (gdcc draws the mask when compiling)");
		return false;
	}
	if (sa->i < 0 || sa->i > UINT32_MAX) {
		imp_fail(im, "its seed %" PRId64 " is not in [0, 2^32)", sa->i);
		return false;
	}
	float r = (float)ratio;
	if (!(r > 0 && r < 1)) {
		imp_fail(im, "its ratio %g is not in [0, 1)", ratio);
		return false;
	}
	if (x->type.dtype != DT_F32) {
		imp_fail(im, "its input must be f32");
		return false;
	}
	float scale = 1.0f / (1.0f - r);
	Mt mt;
	mt_seed(&mt, (uint32_t)sa->i);
	Tensor *f = tensor_new(DT_F32, &x->type.shape);
	Tensor *mask = np->n_output > 1 && np->output[1][0] ? tensor_new(DT_BOOL, &x->type.shape) : NULL;
	for (int64_t i = 0; i < tensor_numel(f); i++) {
		bool keep = mt_uniform(&mt) >= (double)r;
		((float *)f->data)[i] = keep ? scale : 0.0f;
		if (mask)
			tensor_set_f(mask, i, keep);
	}
	Value *fv = imp_const(im, np, "kept", f);
	if (!fv || !last_binary(im, np, OP_MUL, x, fv)) {
		tensor_free(mask);
		return false;
	}
	if (mask) {
		Value *mv = imp_const(im, np, "mask", mask);
		return mv && imp_bind(im, np->output[1], mv);
	}
	return true;
}

bool onnx_compose(Imp *im, const Onnx__NodeProto *np, bool *ok)
{
	double ratio;
	int train = strcmp(np->op_type, "Dropout") == 0 ? training_dropout(im, np, &ratio) : 0;
	if (train) {
		*ok = train > 0 && import_training_dropout(im, np, ratio);
		return true;
	}
	const char *op = np->op_type;
	if (strcmp(op, "Resize") == 0 || strcmp(op, "Upsample") == 0)
		*ok = import_resize(im, np, op[0] == 'U');
	else if (strcmp(op, "ConvTranspose") == 0)
		*ok = import_conv_transpose(im, np);
	else if (strcmp(op, "InstanceNormalization") == 0)
		*ok = import_instancenorm(im, np);
	else if (strcmp(op, "MeanVarianceNormalization") == 0)
		*ok = import_mvn(im, np);
	else if (strcmp(op, "LRN") == 0)
		*ok = import_lrn(im, np);
	else if (strcmp(op, "Pow") == 0 && is_int_pow(im, np))
		*ok = import_int_pow(im, np);
	else if (strcmp(op, "NegativeLogLikelihoodLoss") == 0)
		*ok = import_nll(im, np);
	else if (strcmp(op, "SoftmaxCrossEntropyLoss") == 0)
		*ok = import_sce(im, np);
	else if (strcmp(op, "MaxUnpool") == 0)
		*ok = import_maxunpool(im, np);
	else if (strcmp(op, "HannWindow") == 0 || strcmp(op, "HammingWindow") == 0 || strcmp(op, "BlackmanWindow") == 0)
		*ok = import_window(im, np, op[1] == 'a' && op[2] == 'n' ? 0 : op[1] == 'a' ? 1 : 2);
	else if (strcmp(op, "Einsum") == 0)
		*ok = import_einsum(im, np);
	else if (strcmp(op, "ScatterElements") == 0 || strcmp(op, "Scatter") == 0)
		*ok = import_scatter_elements(im, np);
	else
		return false;
	return true;
}
