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
 *   MelWeightMatrix    a constant of its parameters (known when compiling), as
 *                      the ONNX reference computes it.
 *   Pow                an integer base with an f32 exponent: where the exponent
 *                      is whole, the exact integer `pow` of its cast; else the
 *                      f32 `pow` truncated.
 *   RNN, GRU, LSTM     unrolled over the sequence (its length is known when
 *                      compiling): per direction, the input projection of
 *                      every step at once (one `gemm` by W^T, plus Wb + Rb),
 *                      then per step a `gemm` of the state by R^T, the gates
 *                      as `slice`s, their activations (every function ONNX
 *                      names, with activation_alpha / _beta), clip, peepholes,
 *                      input_forget, linear_before_reset; sequence_lens by
 *                      `where` on `less(t, length)` (a finished entry keeps its
 *                      state and outputs 0), unless every length is the whole
 *                      sequence; Y, Y_h, Y_c by `concat`, layout 1 by `transpose`.
 *   ReverseSequence    `gather_elements` along time at positions L - 1 - t
 *                      where t < L, else t (`less`, `sub`, `where` on the
 *                      lengths), `expand`ed over the other axes.
 *   DFT, STFT          the axis moved last, re and im by `matmul`s with
 *                      constant cos and sin matrices (double, the inverse's
 *                      1/N in them), cut or zero-padded to dft_length;
 *                      STFT's frames a `gather` of constant positions, times
 *                      the window.
 *   GridSample         per tap (1, 4 or 16) a `gather_elements` of the
 *                      flattened image at the grid's source coordinates,
 *                      padded as PyTorch's grid sampler pads them, weighted
 *                      (bilinear, cubic convolution) and summed.
 *   RoiAlign           per region and sample, X's four neighbours by a
 *                      `gather` of X as rows of channels, weighted, the
 *                      mean of each bin's samples.
 *   Det                the Leibniz formula for n <= 5: a `gather` of each
 *                      permutation's entries, `reduce_prod`, times its sign,
 *                      `reduce_sum`.
 *   Compress           a `gather` (of the flattened input without an axis) at
 *                      the positions the condition selects, known when
 *                      compiling (it decides the result's shape).
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
#include <strings.h>

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

/* ---- RNN, GRU, LSTM ---------------------------------------------------------------- */
/* Steps of a recurrent translation: each takes NULL operands after an
 * error and gives NULL, so that a chain stops at its first failure. */
static Value *rn_un(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *x, const char *what)
{
	return x ? unary(im, np, op, x, what) : NULL;
}

static Value *rn_bin(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *a, Value *b, const char *what)
{
	return a && b ? binary(im, np, op, a, b, what) : NULL;
}

/* x[start:end] along axis. */
static Value *rn_slice(Imp *im, const Onnx__NodeProto *np, Value *x, int64_t axis, int64_t start, int64_t end,
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

static Value *rn_reshape(Imp *im, const Onnx__NodeProto *np, Value *x, const int64_t *shape, int rank, const char *what)
{
	return x ? reshape(im, np, x, shape, rank, what) : NULL;
}

static Value *rn_transpose(Imp *im, const Onnx__NodeProto *np, Value *x, const int64_t *perm, int rank, const char *what)
{
	Node *n = x ? imp_step(im, np, OP_TRANSPOSE, &x, 1, what) : NULL;
	if (n)
		node_set_ints(n, "perm", perm, rank);
	return imp_done(im, n);
}

/* a [m, k] times b^T (b [n, k]). */
static Value *rn_matmul_t(Imp *im, const Onnx__NodeProto *np, Value *a, Value *b, const char *what)
{
	Value *in[2] = {a, b};
	Node *n = a && b ? imp_step(im, np, OP_GEMM, in, 2, what) : NULL;
	if (n)
		node_set_int(n, "trans_b", 1);
	return imp_done(im, n);
}

static Value *rn_concat(Imp *im, const Onnx__NodeProto *np, Value **in, int nin, int64_t axis, const char *what)
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

/* The `index`-th of a weight tensor's directions ([dirs, rest...]) as
 * [rest...]. */
static Value *rn_direction(Imp *im, const Onnx__NodeProto *np, Value *x, int index, const char *what)
{
	if (!x)
		return NULL;
	const Shape *s = &x->type.shape;
	Value *one = rn_slice(im, np, x, 0, index, index + 1, what);
	return rn_reshape(im, np, one, s->dim + 1, s->rank - 1, what);
}

/* x clipped to [lo, hi]. */
static Value *rn_clip(Imp *im, const Onnx__NodeProto *np, Value *x, double lo, double hi, const char *what)
{
	Node *n = x ? imp_step(im, np, OP_CLIP, &x, 1, what) : NULL;
	if (n) {
		node_set_float(n, "min", lo);
		node_set_float(n, "max", hi);
	}
	return imp_done(im, n);
}

static Value *rn_scalar(Imp *im, const Onnx__NodeProto *np, DType dt, double v, const char *what)
{
	Shape s = {1, {1}};
	Tensor *t = tensor_new(dt, &s);
	if (dt == DT_F32)
		tensor_set_f(t, 0, v);
	else
		tensor_set_i(t, 0, (int64_t)v);
	return imp_const(im, np, what, t);
}

typedef enum { A_SIGMOID, A_TANH, A_RELU, A_LEAKY_RELU, A_THRESHOLDED_RELU, A_SCALED_TANH, A_HARD_SIGMOID, A_ELU,
	       A_SOFTSIGN, A_SOFTPLUS, A_AFFINE } ActKind;

/* The activations ONNX's recurrent ops name, how many of activation_alpha
 * (1) and activation_beta (2) each takes, and their defaults (those of the
 * ONNX operator of the name; ScaledTanh and Affine: 1, 1 and 1, 0). */
static const struct {
	const char *name;
	ActKind kind;
	int params;
	double alpha, beta;
} rnn_acts[] = {
	{"Sigmoid", A_SIGMOID, 0, 0, 0},        {"Tanh", A_TANH, 0, 0, 0},
	{"Relu", A_RELU, 0, 0, 0},              {"LeakyRelu", A_LEAKY_RELU, 1, 0.01, 0},
	{"ThresholdedRelu", A_THRESHOLDED_RELU, 1, 1.0, 0}, {"ScaledTanh", A_SCALED_TANH, 2, 1.0, 1.0},
	{"HardSigmoid", A_HARD_SIGMOID, 2, 0.2, 0.5}, {"Elu", A_ELU, 1, 1.0, 0},
	{"Softsign", A_SOFTSIGN, 0, 0, 0},      {"Softplus", A_SOFTPLUS, 0, 0, 0},
	{"Affine", A_AFFINE, 2, 1.0, 0.0},
};

typedef struct {
	ActKind kind;
	double alpha, beta;
} Act;

static Value *rn_act(Imp *im, const Onnx__NodeProto *np, const Act *a, Value *x, const char *what)
{
	if (!x)
		return NULL;
	OpKind op;
	switch (a->kind) {
	case A_SIGMOID: return unary(im, np, OP_SIGMOID, x, what);
	case A_TANH: return unary(im, np, OP_TANH, x, what);
	case A_RELU: return unary(im, np, OP_RELU, x, what);
	case A_SOFTSIGN: return unary(im, np, OP_SOFTSIGN, x, what);
	case A_SOFTPLUS: return unary(im, np, OP_SOFTPLUS, x, what);
	case A_SCALED_TANH: {
		Value *bx = rn_bin(im, np, OP_MUL, x, rn_scalar(im, np, DT_F32, a->beta, "act_beta"), what);
		return rn_bin(im, np, OP_MUL, rn_un(im, np, OP_TANH, bx, what), rn_scalar(im, np, DT_F32, a->alpha, "act_alpha"),
			      what);
	}
	case A_AFFINE: {
		Value *ax = rn_bin(im, np, OP_MUL, x, rn_scalar(im, np, DT_F32, a->alpha, "act_alpha"), what);
		return rn_bin(im, np, OP_ADD, ax, rn_scalar(im, np, DT_F32, a->beta, "act_beta"), what);
	}
	case A_LEAKY_RELU: op = OP_LEAKY_RELU; break;
	case A_THRESHOLDED_RELU: op = OP_THRESHOLDED_RELU; break;
	case A_ELU: op = OP_ELU; break;
	default: op = OP_HARDSIGMOID; break;
	}
	Node *n = imp_step(im, np, op, &x, 1, what);
	if (n) {
		node_set_float(n, "alpha", a->alpha);
		if (op == OP_HARDSIGMOID)
			node_set_float(n, "beta", a->beta);
	}
	return imp_done(im, n);
}

/* The activations attribute: nact per direction (f; f, g; f, g, h), for
 * every direction, or (two directions) one set for both; absent: the
 * defaults (Tanh; Sigmoid, Tanh; Sigmoid, Tanh, Tanh). */
static bool rnn_activations(Imp *im, const Onnx__NodeProto *np, int nact, int dirs, Act *acts)
{
	for (int d = 0; d < dirs; d++)
		for (int k = 0; k < nact; k++)
			acts[d * nact + k] = (Act){nact == 1 || k > 0 ? A_TANH : A_SIGMOID, 0, 0};
	const Onnx__AttributeProto *a = imp_attr(np, "activations");
	if (!a)
		return true;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS ||
	    (a->n_strings != (size_t)(nact * dirs) && a->n_strings != (size_t)nact)) {
		imp_fail(im, "attribute 'activations' must name %d function%s (it has %zu)", nact * dirs,
			 nact * dirs == 1 ? "" : "s", a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS ? a->n_strings : (size_t)0);
		return false;
	}
	const Onnx__AttributeProto *al = imp_attr(np, "activation_alpha"), *be = imp_attr(np, "activation_beta");
	size_t nal = al && al->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS ? al->n_floats : 0;
	size_t nbe = be && be->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS ? be->n_floats : 0;
	size_t ia = 0, ib = 0;
	for (size_t i = 0; i < a->n_strings; i++) {
		const ProtobufCBinaryData *s = &a->strings[i];
		size_t k = 0, n = sizeof rnn_acts / sizeof *rnn_acts;
		while (k < n && !(strlen(rnn_acts[k].name) == s->len && strncasecmp(rnn_acts[k].name, (const char *)s->data, s->len) == 0))
			k++;
		if (k == n) {
			char buf[64];
			size_t len = s->len < sizeof buf - 1 ? s->len : sizeof buf - 1;
			memcpy(buf, len ? (const char *)s->data : "", len);
			buf[len] = 0;
			imp_fail(im, "activation '%s' is not one of ONNX's (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
				 "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)", imp_q(im, buf));
			return false;
		}
		Act act = {rnn_acts[k].kind, rnn_acts[k].alpha, rnn_acts[k].beta};
		if (rnn_acts[k].params >= 1 && ia < nal)
			act.alpha = al->floats[ia++];
		if (rnn_acts[k].params >= 2 && ib < nbe)
			act.beta = be->floats[ib++];
		acts[i] = act;
	}
	if (a->n_strings == (size_t)nact)
		for (int k = 0; k < nact * (dirs - 1); k++)
			acts[nact + k] = acts[k];
	if (ia < nal || ib < nbe) {
		imp_fail(im, "%zu of activation_alpha's and %zu of activation_beta's values are left over (the activations take %zu and %zu)",
			 nal - ia, nbe - ib, ia, ib);
		return false;
	}
	return true;
}

/* A weight-like operand: f32 of the given shape (rank dims). */
static bool rnn_shape_ok(Imp *im, const Value *v, const char *what, const int64_t *dims, int rank)
{
	TensorType want = {DT_F32, {rank, {0}}};
	for (int i = 0; i < rank; i++)
		want.shape.dim[i] = dims[i];
	bool ok = v->type.dtype == DT_F32 && shape_eq(&v->type.shape, &want.shape);
	if (!ok) {
		char w[160], got[160];
		imp_fail(im, "its %s must be %s (it is %s)", what, type_str(&want, w, sizeof w), type_str(&v->type, got, sizeof got));
	}
	return ok;
}

enum { RNN_PLAIN, RNN_GRU, RNN_LSTM };
/* Steps an unrolled recurrence may have: about 20 nodes each, and on x86-avx2
 * about 12 KiB of assembly and 0.3 MB of compiler memory (an LSTM of 4,096
 * steps: 5 s, 1.3 GB) */
enum { RNN_MAX_STEPS = 8192 };

static bool import_rnn(Imp *im, const Onnx__NodeProto *np, int kind)
{
	int G = kind == RNN_LSTM ? 4 : kind == RNN_GRU ? 3 : 1, nact = kind == RNN_LSTM ? 3 : kind == RNN_GRU ? 2 : 1;
	size_t max_in = kind == RNN_LSTM ? 8 : 6, max_out = kind == RNN_LSTM ? 3 : 2;
	if (np->n_input > max_in || np->n_output > max_out) {
		imp_fail(im, "it takes at most %zu inputs and %zu outputs (it has %zu and %zu)", max_in, max_out, np->n_input,
			 np->n_output);
		return false;
	}
	Value *X = operand(im, np, 0, "input X"), *W = X ? operand(im, np, 1, "weights W") : NULL,
	      *R = W ? operand(im, np, 2, "recurrence weights R") : NULL;
	if (!R)
		return false;
	static const char *const opt_what[] = {"", "", "", "bias B", "sequence_lens", "initial_h", "initial_c", "peepholes P"};
	Value *opt[8] = {NULL};
	for (size_t i = 3; i < np->n_input; i++)
		if (imp_input_name(np, i) && !(opt[i] = imp_value(im, imp_input_name(np, i), opt_what[i])))
			return false;
	Value *B = opt[3], *lens = opt[4], *h0 = opt[5], *c0 = opt[6], *P = opt[7];
	char dbuf[32];
	const char *dir = attr_string(np, "direction", "forward", dbuf, sizeof dbuf);
	int dirs = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
	if (dirs == 1 && strcmp(dir, "forward") != 0 && strcmp(dir, "reverse") != 0) {
		imp_fail(im, "direction '%s' is not forward, reverse or bidirectional", imp_q(im, dir));
		return false;
	}
	int64_t layout = attr_int(np, "layout", 0);
	if (layout != 0 && layout != 1) {
		imp_fail(im, "layout %" PRId64 " is not 0 or 1", layout);
		return false;
	}
	if (X->type.dtype != DT_F32 || X->type.shape.rank != 3) {
		imp_fail(im, "its input X must be f32 of rank 3 ([seq_length, batch_size, input_size]%s)",
			 layout ? ", as layout 1: [batch_size, seq_length, input_size]" : "");
		return false;
	}
	const int64_t *xd = X->type.shape.dim;
	int64_t seq = layout ? xd[1] : xd[0], batch = layout ? xd[0] : xd[1], I = xd[2];
	if (R->type.shape.rank != 3) {
		imp_fail(im, "its recurrence weights R must be of rank 3 ([num_directions, %d*hidden_size, hidden_size])", G);
		return false;
	}
	int64_t H = attr_int(np, "hidden_size", R->type.shape.dim[2]);
	if (H <= 0 || seq <= 0 || batch <= 0 || I <= 0) {
		imp_fail(im, "its sizes must be positive (hidden_size %" PRId64 ", sequence %" PRId64 ", batch %" PRId64 ", input %" PRId64 ")",
			 H, seq, batch, I);
		return false;
	}
	if (seq * dirs > RNN_MAX_STEPS) {
		imp_fail(im, "its %" PRId64 " steps (%" PRId64 " long, %d direction%s): gdcc unrolls a recurrence and takes at most %d",
			 seq * dirs, seq, dirs, dirs > 1 ? "s" : "", RNN_MAX_STEPS);
		return false;
	}
	int64_t GH = G * H;
	if (!rnn_shape_ok(im, W, "weights W", (int64_t[]){dirs, GH, I}, 3) ||
	    !rnn_shape_ok(im, R, "recurrence weights R", (int64_t[]){dirs, GH, H}, 3) ||
	    (B && !rnn_shape_ok(im, B, "bias B", (int64_t[]){dirs, 2 * GH}, 2)) ||
	    (h0 && !rnn_shape_ok(im, h0, "initial_h", layout ? (int64_t[]){batch, dirs, H} : (int64_t[]){dirs, batch, H}, 3)) ||
	    (c0 && !rnn_shape_ok(im, c0, "initial_c", layout ? (int64_t[]){batch, dirs, H} : (int64_t[]){dirs, batch, H}, 3)) ||
	    (P && !rnn_shape_ok(im, P, "peepholes P", (int64_t[]){dirs, 3 * H}, 2)))
		return false;
	if (lens && (!(lens->type.dtype == DT_I32 || lens->type.dtype == DT_I64) || lens->type.shape.rank != 1 ||
		     lens->type.shape.dim[0] != batch)) {
		imp_fail(im, "its sequence_lens must be int32[%" PRId64 "] (one length per batch entry)", batch);
		return false;
	}
	const Onnx__AttributeProto *clip_a = imp_attr(np, "clip");
	double clip = clip_a ? clip_a->f : 0;
	if (clip_a && !(clip > 0)) {
		imp_fail(im, "its clip %g is not positive", clip);
		return false;
	}
	bool lbr = kind == RNN_GRU && attr_int(np, "linear_before_reset", 0) != 0;
	bool couple = kind == RNN_LSTM && attr_int(np, "input_forget", 0) != 0;
	Act acts[6];
	if (!rnn_activations(im, np, nact, dirs, acts))
		return false;
	if (!size_ok(im, DT_F32, &(Shape){2, {seq * batch, GH}}, "its input projection"))
		return false;
	/* sequence_lens: none where every length is the whole sequence */
	const Tensor *known = lens ? imp_known(im, lens) : NULL;
	if (known) {
		bool whole = true;
		for (int64_t b = 0; b < batch; b++) {
			int64_t L = tensor_get_i(known, b);
			if (L < 0 || L > seq) {
				imp_fail(im, "its sequence_lens[%" PRId64 "] = %" PRId64 " is outside [0, %" PRId64 "]", b, L, seq);
				return false;
			}
			whole &= L == seq;
		}
		if (whole)
			lens = NULL;
	}
	Value *lens2 = lens ? rn_reshape(im, np, lens, (int64_t[]){batch, 1}, 2, "lengths") : NULL;
	if (lens && !lens2)
		return false;

	if (layout) {
		X = rn_transpose(im, np, X, (int64_t[]){1, 0, 2}, 3, "time_major");
		h0 = h0 ? rn_transpose(im, np, h0, (int64_t[]){1, 0, 2}, 3, "initial_h") : NULL;
		c0 = c0 ? rn_transpose(im, np, c0, (int64_t[]){1, 0, 2}, 3, "initial_c") : NULL;
	}
	Value *X2 = rn_reshape(im, np, X, (int64_t[]){seq * batch, I}, 2, "rows");
	Shape zs = {2, {batch, H}};
	Value *zeros = imp_const(im, np, "zeros", tensor_new(DT_F32, &zs));
	Value *one = rn_scalar(im, np, DT_F32, 1.0, "one");
	bool want_y = np->n_output > 0 && np->output[0][0];
	Value **ys = xcalloc((size_t)(seq * dirs), sizeof *ys);
	Value *yh[2] = {NULL, NULL}, *yc[2] = {NULL, NULL};
	bool ok = X2 && zeros && one;
	for (int d = 0; ok && d < dirs; d++) {
		bool reverse = d == 1 || strcmp(dir, "reverse") == 0;
		Value *Wd = rn_direction(im, np, W, d, "W"), *Rd = rn_direction(im, np, R, d, "R");
		Value *xw = rn_matmul_t(im, np, X2, Wd, "input_projection");
		Value *rbh = NULL; /* GRU, linear_before_reset: Rb's h part, added to H R_h^T */
		if (B) {
			Value *Bd = rn_direction(im, np, B, d, "B");
			Value *wb = rn_slice(im, np, Bd, 0, 0, GH, "Wb"), *rb = rn_slice(im, np, Bd, 0, GH, 2 * GH, "Rb");
			Value *bias;
			if (lbr) {
				Value *zr = rn_bin(im, np, OP_ADD, rn_slice(im, np, wb, 0, 0, 2 * H, "Wb_zr"),
						   rn_slice(im, np, rb, 0, 0, 2 * H, "Rb_zr"), "bias_zr");
				Value *parts[2] = {zr, rn_slice(im, np, wb, 0, 2 * H, 3 * H, "Wb_h")};
				bias = rn_concat(im, np, parts, 2, 0, "bias");
				rbh = rn_slice(im, np, rb, 0, 2 * H, 3 * H, "Rb_h");
				ok &= rbh != NULL;
			} else
				bias = rn_bin(im, np, OP_ADD, wb, rb, "bias");
			xw = rn_bin(im, np, OP_ADD, xw, bias, "input_projection");
		}
		xw = rn_reshape(im, np, xw, (int64_t[]){seq, batch, GH}, 3, "input_projection");
		Value *Rzr = NULL, *Rh = NULL; /* GRU without linear_before_reset: (r H) R_h^T apart */
		if (kind == RNN_GRU && !lbr) {
			Rzr = rn_slice(im, np, Rd, 0, 0, 2 * H, "R_zr");
			Rh = rn_slice(im, np, Rd, 0, 2 * H, 3 * H, "R_h");
			ok &= Rzr && Rh;
		}
		Value *pi = NULL, *po = NULL, *pf = NULL;
		if (P) {
			Value *Pd = rn_direction(im, np, P, d, "P");
			pi = rn_slice(im, np, Pd, 0, 0, H, "P_i");
			po = rn_slice(im, np, Pd, 0, H, 2 * H, "P_o");
			pf = rn_slice(im, np, Pd, 0, 2 * H, 3 * H, "P_f");
			ok &= pi && po && pf;
		}
		Value *h = h0 ? rn_direction(im, np, h0, d, "initial_h") : zeros;
		Value *c = kind != RNN_LSTM ? NULL : c0 ? rn_direction(im, np, c0, d, "initial_c") : zeros;
		ok &= xw && h && (kind != RNN_LSTM || c);
		const Act *f = &acts[d * nact], *g = &acts[d * nact + (nact > 1)], *hact = &acts[d * nact + (nact > 2) * 2];
		for (int64_t s = 0; ok && s < seq; s++) {
			int64_t t = reverse ? seq - 1 - s : s;
			Value *xt = rn_reshape(im, np, rn_slice(im, np, xw, 0, t, t + 1, "x_t"), (int64_t[]){batch, GH}, 2, "x_t");
			Value *hn = NULL, *cn = NULL;
#define CLIP(v) (clip_a ? rn_clip(im, np, (v), -clip, clip, "clip") : (v))
			if (kind == RNN_PLAIN) {
				Value *gates = rn_bin(im, np, OP_ADD, xt, rn_matmul_t(im, np, h, Rd, "recurrence"), "gates");
				hn = rn_act(im, np, f, CLIP(gates), "h");
			} else if (kind == RNN_LSTM) {
				Value *gates = rn_bin(im, np, OP_ADD, xt, rn_matmul_t(im, np, h, Rd, "recurrence"), "gates");
				Value *gi = rn_slice(im, np, gates, 1, 0, H, "gate_i"), *go = rn_slice(im, np, gates, 1, H, 2 * H, "gate_o"),
				      *gf = rn_slice(im, np, gates, 1, 2 * H, 3 * H, "gate_f"),
				      *gc = rn_slice(im, np, gates, 1, 3 * H, 4 * H, "gate_c");
				if (P) {
					gi = rn_bin(im, np, OP_ADD, gi, rn_bin(im, np, OP_MUL, pi, c, "peephole_i"), "gate_i");
					gf = rn_bin(im, np, OP_ADD, gf, rn_bin(im, np, OP_MUL, pf, c, "peephole_f"), "gate_f");
				}
				Value *i = rn_act(im, np, f, CLIP(gi), "i");
				Value *fg = couple ? rn_bin(im, np, OP_SUB, one, i, "f") : rn_act(im, np, f, CLIP(gf), "f");
				Value *cc = rn_act(im, np, g, CLIP(gc), "c_candidate");
				cn = rn_bin(im, np, OP_ADD, rn_bin(im, np, OP_MUL, fg, c, "c_kept"), rn_bin(im, np, OP_MUL, i, cc, "c_new"), "c");
				if (P)
					go = rn_bin(im, np, OP_ADD, go, rn_bin(im, np, OP_MUL, po, cn, "peephole_o"), "gate_o");
				Value *o = rn_act(im, np, f, CLIP(go), "o");
				hn = rn_bin(im, np, OP_MUL, o, rn_act(im, np, hact, cn, "c_out"), "h");
			} else {
				Value *rec = rn_matmul_t(im, np, h, lbr ? Rd : Rzr, "recurrence");
				Value *zr = rn_bin(im, np, OP_ADD, rn_slice(im, np, xt, 1, 0, 2 * H, "x_zr"),
						   lbr ? rn_slice(im, np, rec, 1, 0, 2 * H, "rec_zr") : rec, "gates_zr");
				Value *z = rn_act(im, np, f, CLIP(rn_slice(im, np, zr, 1, 0, H, "gate_z")), "z");
				Value *r = rn_act(im, np, f, CLIP(rn_slice(im, np, zr, 1, H, 2 * H, "gate_r")), "r");
				Value *xh = rn_slice(im, np, xt, 1, 2 * H, 3 * H, "x_h"), *gh;
				if (lbr) {
					Value *rh = rn_slice(im, np, rec, 1, 2 * H, 3 * H, "rec_h");
					if (rbh)
						rh = rn_bin(im, np, OP_ADD, rh, rbh, "rec_h");
					gh = rn_bin(im, np, OP_ADD, xh, rn_bin(im, np, OP_MUL, r, rh, "reset"), "gate_h");
				} else
					gh = rn_bin(im, np, OP_ADD, xh,
						    rn_matmul_t(im, np, rn_bin(im, np, OP_MUL, r, h, "reset"), Rh, "rec_h"), "gate_h");
				Value *hc = rn_act(im, np, g, CLIP(gh), "h_candidate");
				hn = rn_bin(im, np, OP_ADD, rn_bin(im, np, OP_MUL, rn_bin(im, np, OP_SUB, one, z, "1-z"), hc, "h_new"),
					    rn_bin(im, np, OP_MUL, z, h, "h_kept"), "h");
			}
#undef CLIP
			Value *yt = hn;
			if (lens2) {
				/* past its length a batch entry keeps its state, and its output is 0 */
				Value *in[3] = {rn_bin(im, np, OP_LESS, rn_scalar(im, np, lens->type.dtype, (double)t, "t"), lens2, "running"),
						hn, zeros};
				Node *n = in[0] && hn ? imp_step(im, np, OP_WHERE, in, 3, "y") : NULL;
				yt = imp_done(im, n);
				in[2] = h;
				hn = in[0] && hn ? imp_done(im, imp_step(im, np, OP_WHERE, in, 3, "h")) : NULL;
				if (kind == RNN_LSTM) {
					in[1] = cn;
					in[2] = c;
					cn = in[0] && cn ? imp_done(im, imp_step(im, np, OP_WHERE, in, 3, "c")) : NULL;
				}
			}
			ok &= hn && yt && (kind != RNN_LSTM || cn);
			h = hn;
			c = cn;
			if (want_y)
				ys[t * dirs + d] = rn_reshape(im, np, yt, (int64_t[]){1, 1, batch, H}, 4, "y_t");
		}
		yh[d] = rn_reshape(im, np, h, (int64_t[]){1, batch, H}, 3, "y_h");
		if (kind == RNN_LSTM)
			yc[d] = rn_reshape(im, np, c, (int64_t[]){1, batch, H}, 3, "y_c");
		ok &= yh[d] && (kind != RNN_LSTM || yc[d]);
	}
	/* Y [seq, dirs, batch, H], Y_h and Y_c [dirs, batch, H]; layout 1:
	 * [batch, seq, dirs, H] and [batch, dirs, H] */
	Value *out[3] = {NULL, NULL, NULL};
	if (ok && want_y) {
		Value **rows = xcalloc((size_t)seq, sizeof *rows);
		for (int64_t t = 0; t < seq; t++)
			rows[t] = rn_concat(im, np, ys + t * dirs, dirs, 1, "y_t");
		out[0] = rn_concat(im, np, rows, (int)seq, 0, "Y");
		free(rows);
		if (layout)
			out[0] = rn_transpose(im, np, out[0], (int64_t[]){2, 0, 1, 3}, 4, "Y");
		ok &= out[0] != NULL;
	}
	free(ys);
	for (int k = 1; ok && k < (kind == RNN_LSTM ? 3 : 2); k++) {
		out[k] = rn_concat(im, np, k == 1 ? yh : yc, dirs, 0, k == 1 ? "Y_h" : "Y_c");
		if (layout)
			out[k] = rn_transpose(im, np, out[k], (int64_t[]){1, 0, 2}, 3, k == 1 ? "Y_h" : "Y_c");
		ok &= out[k] != NULL;
	}
	/* each result under its ONNX name */
	for (size_t k = 0; ok && k < np->n_output; k++)
		if (np->output[k][0]) {
			Value *v = imp_done(im, imp_step_named(im, OP_IDENTITY, &out[k], 1, np->output[k]));
			ok = v && imp_bind(im, np->output[k], v);
		}
	return ok;
}

/* ---- ReverseSequence ------------------------------------------------------------------ */
/* y = gather_elements(x, idx, time axis): idx[t, b] = L[b] - 1 - t where
 * t < L[b], else t (by less, sub and where on the lengths: they may be
 * known only when running), expanded over the other axes. */
static bool import_reverse_sequence(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "input"), *lens = x ? operand(im, np, 1, "sequence_lens") : NULL;
	if (!lens)
		return false;
	const Shape *xs = &x->type.shape;
	int64_t ba = attr_int(np, "batch_axis", 1), ta = attr_int(np, "time_axis", 0);
	if (xs->rank < 2 || !((ba == 0 && ta == 1) || (ba == 1 && ta == 0))) {
		imp_fail(im, "its batch_axis (%" PRId64 ") and time_axis (%" PRId64 ") must be 0 and 1, either way round, of a "
			 "tensor of rank 2 or more", ba, ta);
		return false;
	}
	int64_t T = xs->dim[ta], Bn = xs->dim[ba];
	DType lt = lens->type.dtype;
	if (!(lt == DT_I64 || lt == DT_I32) || lens->type.shape.rank != 1 || lens->type.shape.dim[0] != Bn) {
		imp_fail(im, "its sequence_lens must be int64[%" PRId64 "] (one length per batch entry)", Bn);
		return false;
	}
	const Tensor *known = imp_known(im, lens);
	for (int64_t b = 0; known && b < Bn; b++)
		if (tensor_get_i(known, b) < 0 || tensor_get_i(known, b) > T) {
			imp_fail(im, "its sequence_lens[%" PRId64 "] = %" PRId64 " is outside [0, %" PRId64 "]", b,
				 tensor_get_i(known, b), T);
			return false;
		}
	Shape ps = {2, {0}}, ls = {2, {0}};
	ps.dim[ta] = T, ps.dim[ba] = 1, ls.dim[ta] = 1, ls.dim[ba] = Bn;
	Tensor *pt = tensor_new(DT_I64, &ps);
	for (int64_t t = 0; t < T; t++)
		tensor_set_i(pt, t, t);
	Value *pos = imp_const(im, np, "positions", pt);
	Value *L = rn_reshape(im, np, lt == DT_I64 ? lens : cast_to(im, np, lens, DT_I64, "lengths"), ls.dim, 2, "lengths");
	Value *rev = rn_bin(im, np, OP_SUB, rn_bin(im, np, OP_SUB, L, rn_scalar(im, np, DT_I64, 1, "one"), "last"), pos,
			    "reversed");
	Value *in[3] = {rn_bin(im, np, OP_LESS, pos, L, "inside"), rev, pos};
	Value *idx = in[0] && rev && pos ? imp_done(im, imp_step(im, np, OP_WHERE, in, 3, "positions")) : NULL;
	int64_t one[MAX_RANK];
	for (int i = 0; i < xs->rank; i++)
		one[i] = i < 2 ? ps.dim[i] * ls.dim[i] : 1;
	idx = rn_reshape(im, np, idx, one, xs->rank, "positions");
	Node *e = idx ? imp_step(im, np, OP_EXPAND, &idx, 1, "positions") : NULL;
	if (e)
		node_set_ints(e, "shape", xs->dim, xs->rank);
	idx = imp_done(im, e);
	if (!idx)
		return false;
	Value *gin[2] = {x, idx};
	Node *g = imp_step(im, np, OP_GATHER_ELEMENTS, gin, 2, NULL);
	if (g)
		node_set_int(g, "axis", ta);
	return imp_finish(im, g, np);
}

/* ---- DFT and STFT ---------------------------------------------------------------------- */
/* x [..., n at axis, ..., 1 or 2] (real, or complex as re, im): its DFT of
 * length N along axis (the axis cut or zero-padded to N), the first K bins
 * (onesided: N / 2 + 1), [..., K at axis, ..., 2].  With the axis moved
 * last: re and im by `matmul`s with constant cos and sin matrices [N, K]
 * (computed in double; the inverse's 1/N in them), then moved back.  The
 * last step takes the node's result name when `last`. */
static Value *dft_of(Imp *im, const Onnx__NodeProto *np, Value *x, int axis, int64_t N, bool inverse, bool onesided,
		     bool last)
{
	const Shape *s = &x->type.shape;
	int r = s->rank;
	bool complex = s->dim[r - 1] == 2;
	int64_t n = s->dim[axis], K = onesided ? N / 2 + 1 : N;
	if (!size_ok(im, DT_F32, &(Shape){2, {N, K}}, "its DFT matrix"))
		return NULL;
	/* the parts as [..., n] with the axis last */
	int64_t perm[MAX_RANK];
	int k = 0;
	for (int i = 0; i < r - 1; i++)
		if (i != axis)
			perm[k++] = i;
	perm[k++] = axis;
	Value *part[2] = {NULL, NULL};
	for (int c = 0; c < (complex ? 2 : 1); c++) {
		Value *p = rn_slice(im, np, x, r - 1, c, c + 1, c ? "imag" : "real");
		p = rn_reshape(im, np, p, s->dim, r - 1, c ? "imag" : "real");
		if (axis != r - 2)
			p = rn_transpose(im, np, p, perm, r - 1, c ? "imag" : "real");
		if (p && n > N)
			p = rn_slice(im, np, p, r - 2, 0, N, "cut");
		else if (p && n < N) {
			int64_t pads[2 * MAX_RANK] = {0};
			pads[(r - 1) + (r - 2)] = N - n;
			Node *pn = imp_step(im, np, OP_PAD, &p, 1, "padded");
			if (pn)
				node_set_ints(pn, "pads", pads, 2 * (r - 1));
			p = imp_done(im, pn);
		}
		part[c] = p;
	}
	Shape ms = {2, {N, K}};
	Tensor *ct = tensor_new(DT_F32, &ms), *st = tensor_new(DT_F32, &ms);
	double scale = inverse ? 1.0 / (double)N : 1.0, sign = inverse ? 1.0 : -1.0;
	for (int64_t j = 0; j < N; j++)
		for (int64_t q = 0; q < K; q++) {
			double a = 2 * M_PI * (double)((j * q) % N) / (double)N;
			tensor_set_f(ct, j * K + q, scale * cos(a));
			tensor_set_f(st, j * K + q, scale * sign * sin(a));
		}
	/* e^(sign i a) = cos a + sign i sin a: re = xr C - xi S', im = xr S' + xi C
	 * with S' = sign sin */
	Value *C = imp_const(im, np, "cos", ct), *S = imp_const(im, np, "sin", st);
	Value *re = rn_bin(im, np, OP_MATMUL, part[0], C, "re"), *imv = rn_bin(im, np, OP_MATMUL, part[0], S, "im");
	if (complex) {
		re = rn_bin(im, np, OP_SUB, re, rn_bin(im, np, OP_MATMUL, part[1], S, "im_sin"), "re");
		imv = rn_bin(im, np, OP_ADD, imv, rn_bin(im, np, OP_MATMUL, part[1], C, "im_cos"), "im");
	}
	/* back: the axis in place, a last axis of 1, then re and im side by side */
	int64_t inv[MAX_RANK], odims[MAX_RANK];
	for (int i = 0; i < r - 1; i++)
		inv[perm[i]] = i;
	for (int i = 0; i < r - 1; i++)
		odims[i] = i == axis ? K : s->dim[i];
	odims[r - 1] = 1;
	Value *outs[2] = {re, imv};
	for (int c = 0; c < 2; c++) {
		if (axis != r - 2)
			outs[c] = rn_transpose(im, np, outs[c], inv, r - 1, c ? "im" : "re");
		outs[c] = rn_reshape(im, np, outs[c], odims, r, c ? "im" : "re");
	}
	if (!outs[0] || !outs[1])
		return NULL;
	Node *cn = imp_step(im, np, OP_CONCAT, outs, 2, last ? NULL : "dft");
	if (cn)
		node_set_int(cn, "axis", r - 1);
	if (last)
		return imp_finish(im, cn, np) ? outs[0] : NULL;
	return imp_done(im, cn);
}

/* A scalar integer input known when compiling (absent: def). */
static bool known_int(Imp *im, const Onnx__NodeProto *np, size_t i, const char *what, int64_t def, int64_t *v)
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

static bool import_dft(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "input");
	if (!x)
		return false;
	const Shape *s = &x->type.shape;
	int r = s->rank;
	if (x->type.dtype != DT_F32 || r < 2 || (s->dim[r - 1] != 1 && s->dim[r - 1] != 2)) {
		imp_fail(im, "its input must be f32 [..., 1] (real) or [..., 2] (complex)");
		return false;
	}
	int64_t axis = attr_int(np, "axis", 1);
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r - 1) {
		imp_fail(im, "its axis %" PRId64 " is not one of the input's first %d", attr_int(np, "axis", 1), r - 1);
		return false;
	}
	bool inverse = attr_int(np, "inverse", 0) != 0, onesided = attr_int(np, "onesided", 0) != 0;
	if (inverse && onesided) {
		imp_fail(im, "inverse and onesided together are not defined");
		return false;
	}
	int64_t N;
	if (!known_int(im, np, 1, "dft_length", s->dim[axis], &N))
		return false;
	if (N < 1) {
		imp_fail(im, "its dft_length %" PRId64 " is not positive", N);
		return false;
	}
	return dft_of(im, np, x, (int)axis, N, inverse, onesided, true) != NULL;
}

/* Frames of the signal [batch, length, 1 or 2] (a `gather` of constant
 * positions: [batch, frames, frame_length, c]), times the window, then
 * their DFT along the frame. */
static bool import_stft(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "signal");
	if (!x)
		return false;
	const Shape *s = &x->type.shape;
	if (x->type.dtype != DT_F32 || s->rank != 3 || (s->dim[2] != 1 && s->dim[2] != 2)) {
		imp_fail(im, "its signal must be f32 [batch, length, 1 or 2]");
		return false;
	}
	int64_t step, flen;
	const char *wn = imp_input_name(np, 2);
	Value *w = wn ? imp_value(im, wn, "window") : NULL;
	if (wn && !w)
		return false;
	if (w && (w->type.dtype != DT_F32 || w->type.shape.rank != 1)) {
		imp_fail(im, "its window must be f32 of rank 1");
		return false;
	}
	if (!known_int(im, np, 1, "frame_step", 0, &step) ||
	    !known_int(im, np, 3, "frame_length", w ? w->type.shape.dim[0] : 0, &flen))
		return false;
	if (!imp_input_name(np, 1) || step < 1 || flen < 1 || flen > s->dim[1] || (w && w->type.shape.dim[0] != flen)) {
		imp_fail(im, "its frame_step (%" PRId64 ") and frame_length (%" PRId64 ") must be positive, the frame no longer "
			 "than the signal (%" PRId64 ") and the window's length", step, flen, s->dim[1]);
		return false;
	}
	int64_t frames = (s->dim[1] - flen) / step + 1;
	Shape is = {2, {frames, flen}};
	if (!size_ok(im, DT_I64, &is, "its frame positions"))
		return false;
	Tensor *pt = tensor_new(DT_I64, &is);
	for (int64_t f = 0; f < frames; f++)
		for (int64_t j = 0; j < flen; j++)
			tensor_set_i(pt, f * flen + j, f * step + j);
	Value *gin[2] = {x, imp_const(im, np, "frame_positions", pt)};
	Node *g = gin[1] ? imp_step(im, np, OP_GATHER, gin, 2, "frames") : NULL;
	if (g)
		node_set_int(g, "axis", 1);
	Value *fr = imp_done(im, g);
	if (w)
		fr = rn_bin(im, np, OP_MUL, fr, rn_reshape(im, np, w, (int64_t[]){flen, 1}, 2, "window"), "windowed");
	bool onesided = attr_int(np, "onesided", 1) != 0;
	return fr && dft_of(im, np, fr, 2, flen, false, onesided && s->dim[2] == 1, true);
}

/* ---- Compress ------------------------------------------------------------------------- */
/* A `gather` along axis (no axis: of the flattened input) at the positions
 * the condition selects, which must be known when compiling: a constant, or
 * an input given a value (--bind, run's --input, the test data): it decides
 * the result's shape.  Positions past the condition's length are dropped. */
static bool import_compress(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "input");
	const char *cn = x ? imp_input_name(np, 1) : NULL;
	if (x && !cn)
		imp_fail(im, "its condition (input 2) is missing");
	if (!cn)
		return false;
	int n;
	int64_t *cond = imp_ints(im, cn, &n, "condition");
	if (!cond)
		return false;
	const Shape *s = &x->type.shape;
	const Onnx__AttributeProto *aa = imp_attr(np, "axis");
	int64_t axis = aa ? aa->i : 0;
	if (aa && axis < 0)
		axis += s->rank;
	if (aa && (axis < 0 || axis >= s->rank)) {
		imp_fail(im, "its axis %" PRId64 " is outside the input's %d axes", aa->i, s->rank);
		free(cond);
		return false;
	}
	int64_t len = aa ? s->dim[axis] : shape_numel(s), count = 0;
	for (int i = 0; i < n; i++)
		count += cond[i] != 0;
	if (n > len) {
		imp_fail(im, "its condition has %d entries, more than the %" PRId64 " it selects from", n, len);
		free(cond);
		return false;
	}
	if (count == 0) {
		imp_fail(im, "its condition selects nothing: the result would be empty, and gdcc's tensors have no empty dimension");
		free(cond);
		return false;
	}
	Tensor *idx = tensor_new(DT_I64, &(Shape){1, {count}});
	for (int i = 0, k = 0; i < n; i++)
		if (cond[i])
			tensor_set_i(idx, k++, i);
	free(cond);
	Value *data = aa ? x : rn_reshape(im, np, x, &len, 1, "flat");
	Value *in[2] = {data, imp_const(im, np, "selected", idx)};
	Node *g = in[0] && in[1] ? imp_step(im, np, OP_GATHER, in, 2, NULL) : NULL;
	if (g)
		node_set_int(g, "axis", axis);
	return imp_finish(im, g, np);
}

/* ---- MelWeightMatrix -------------------------------------------------------------------- */
/* A constant [dft_length / 2 + 1, num_mel_bins] of its parameters, known
 * when compiling, as the ONNX reference computes it: num_mel_bins + 2
 * points evenly spaced in mel (the edges and the step in f32, as the
 * reference's f32 scalars), as DFT bins ((dft_length + 1) f // sample_rate),
 * and a triangle per mel bin between its neighbours. */
static bool import_mel_weight_matrix(Imp *im, const Onnx__NodeProto *np)
{
	static const char *const what[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
	int64_t iv[3];
	double fv[2];
	for (int k = 0; k < 5; k++) {
		const char *nm = imp_input_name(np, (size_t)k);
		if (!nm) {
			imp_fail(im, "its %s (input %d) is missing", what[k], k + 1);
			return false;
		}
		int cnt;
		if (k < 3) {
			int64_t *v = imp_ints(im, nm, &cnt, what[k]);
			if (!v)
				return false;
			iv[k] = v[0];
			free(v);
		} else {
			double *v = imp_floats(im, nm, &cnt, what[k]);
			if (!v)
				return false;
			fv[k - 3] = v[0];
			free(v);
		}
		if (cnt != 1) {
			imp_fail(im, "its %s must be one value (it has %d)", what[k], cnt);
			return false;
		}
	}
	int64_t M = iv[0], N = iv[1], rate = iv[2], K = N / 2 + 1;
	if (M < 1 || N < 1 || rate < 1 || !(fv[0] >= 0 && fv[0] < fv[1]) || M > ((int64_t)1 << 20) || N > ((int64_t)1 << 30)) {
		imp_fail(im, "its num_mel_bins (%" PRId64 "), dft_length (%" PRId64 ") and sample_rate (%" PRId64 ") must be positive, "
			 "0 <= lower_edge_hertz (%g) < upper_edge_hertz (%g)", M, N, rate, fv[0], fv[1]);
		return false;
	}
	if (attr_int(np, "output_datatype", 1) != 1) {
		imp_fail(im, "output_datatype %" PRId64 " is not supported (f32: 1)", attr_int(np, "output_datatype", 1));
		return false;
	}
	if (!size_ok(im, DT_F32, &(Shape){2, {K, M}}, "its result"))
		return false;
	float lo = 2595.0f * log10f(1.0f + (float)fv[0] / 700.0f), hi = 2595.0f * log10f(1.0f + (float)fv[1] / 700.0f);
	float step = (hi - lo) / (float)(M + 2);
	int64_t *bin = xmalloc((size_t)(M + 2) * sizeof *bin);
	for (int64_t i = 0; i < M + 2; i++) {
		double mel = (double)i * (double)step + (double)lo, hz = 700 * (pow(10, mel / 2595) - 1);
		bin[i] = (int64_t)floor((double)(N + 1) * hz / (double)rate);
		if (bin[i] < 0 || bin[i] >= K) {
			imp_fail(im, "its upper_edge_hertz %g is past what dft_length %" PRId64 " at sample_rate %" PRId64
				 " resolves (bin %" PRId64 " of %" PRId64 ")", fv[1], N, rate, bin[i], K);
			free(bin);
			return false;
		}
	}
	Tensor *t = tensor_new(DT_F32, &(Shape){2, {K, M}});
	for (int64_t i = 0; i < M; i++) {
		int64_t l = bin[i], c = bin[i + 1], r = bin[i + 2];
		if (c == l)
			tensor_set_f(t, c * M + i, 1);
		else
			for (int64_t j = l; j <= c; j++)
				tensor_set_f(t, j * M + i, (double)(j - l) / (double)(c - l));
		for (int64_t j = c; j < r; j++)
			tensor_set_f(t, j * M + i, (double)(r - j) / (double)(r - c));
	}
	free(bin);
	Value *v = imp_const(im, np, "weights", t);
	return v && imp_finish(im, imp_step(im, np, OP_IDENTITY, &v, 1, NULL), np);
}

/* ---- GridSample ------------------------------------------------------------------------- */
typedef struct {
	Imp *im;
	const Onnx__NodeProto *np;
	Value *xf;       /* X as [N, C, H W] */
	int64_t N, C, H, W, P;
	int pad;         /* 0 zeros, 1 border, 2 reflection */
	bool align;
} Gs;

static Value *gs_const(Gs *g, double v)
{
	return rn_scalar(g->im, g->np, DT_F32, v, "k");
}

static Value *gs_clip(Gs *g, Value *v, double lo, double hi)
{
	return rn_clip(g->im, g->np, v, lo, hi, "clipped");
}

/* A source coordinate in [0, size) after border or reflection padding (as
 * PyTorch's grid sampler: reflection about the edges, or the pixels'
 * outer edges without align_corners, then clipped); zeros: as it is. */
static Value *gs_pad(Gs *g, Value *v, int64_t size)
{
	Imp *im = g->im;
	const Onnx__NodeProto *np = g->np;
	if (g->pad == 0 || !v)
		return v;
	if (g->pad == 2) {
		double lo = g->align ? 0 : -0.5, span = g->align ? (double)(size - 1) : (double)size;
		if (span <= 0)
			return gs_clip(g, rn_bin(im, np, OP_MUL, v, gs_const(g, 0), "reflected"), 0, 0);
		Value *d = rn_un(im, np, OP_ABS, rn_bin(im, np, OP_SUB, v, gs_const(g, lo), "from_low"), "from_low");
		Value *flips = rn_un(im, np, OP_FLOOR, rn_bin(im, np, OP_MUL, d, gs_const(g, 1 / span), "flips"), "flips");
		Value *extra = rn_bin(im, np, OP_SUB, d, rn_bin(im, np, OP_MUL, flips, gs_const(g, span), "whole"), "extra");
		Value *half = rn_un(im, np, OP_FLOOR, rn_bin(im, np, OP_MUL, flips, gs_const(g, 0.5), "pairs"), "pairs");
		Value *odd = rn_bin(im, np, OP_SUB, flips, rn_bin(im, np, OP_MUL, half, gs_const(g, 2), "even"), "odd");
		Value *in[3] = {rn_bin(im, np, OP_LESS, odd, gs_const(g, 0.5), "even_flips"),
				rn_bin(im, np, OP_ADD, extra, gs_const(g, lo), "up"),
				rn_bin(im, np, OP_SUB, gs_const(g, span + lo), extra, "down")};
		v = in[0] && in[1] && in[2] ? imp_done(im, imp_step(im, np, OP_WHERE, in, 3, "reflected")) : NULL;
	}
	return gs_clip(g, v, 0, (double)(size - 1));
}

/* X at integral coordinates (x, y) [N, P], as [N, C, P]: 0 outside with
 * zeros padding. */
static Value *gs_tap(Gs *g, Value *x, Value *y)
{
	Imp *im = g->im;
	const Onnx__NodeProto *np = g->np;
	Value *xc = gs_clip(g, x, 0, (double)(g->W - 1)), *yc = gs_clip(g, y, 0, (double)(g->H - 1));
	Value *flat = rn_bin(im, np, OP_ADD, rn_bin(im, np, OP_MUL, yc, gs_const(g, (double)g->W), "row"), xc, "flat");
	Value *idx = rn_reshape(im, np, flat ? cast_to(im, np, flat, DT_I64, "flat") : NULL, (int64_t[]){g->N, 1, g->P}, 3,
				"flat");
	Node *e = idx ? imp_step(im, np, OP_EXPAND, &idx, 1, "flat") : NULL;
	if (e)
		node_set_ints(e, "shape", (int64_t[]){g->N, g->C, g->P}, 3);
	idx = imp_done(im, e);
	Value *gin[2] = {g->xf, idx};
	Node *gn = g->xf && idx ? imp_step(im, np, OP_GATHER_ELEMENTS, gin, 2, "tap") : NULL;
	if (gn)
		node_set_int(gn, "axis", 2);
	Value *v = imp_done(im, gn);
	if (g->pad != 0 || !v)
		return v;
	/* zeros: a tap outside is 0 (clipping x or y moved it); the test on
	 * [N, 1, P] views, so that the mask is made in the shape it is used */
	int64_t n1p[3] = {g->N, 1, g->P};
	Value *inside = rn_bin(im, np, OP_AND,
			       rn_bin(im, np, OP_EQUAL, rn_reshape(im, np, x, n1p, 3, "x"), rn_reshape(im, np, xc, n1p, 3, "x"), "x_inside"),
			       rn_bin(im, np, OP_EQUAL, rn_reshape(im, np, y, n1p, 3, "y"), rn_reshape(im, np, yc, n1p, 3, "y"), "y_inside"),
			       "inside");
	Value *in[3] = {inside, v, gs_const(g, 0)};
	return in[0] && in[2] ? imp_done(im, imp_step(im, np, OP_WHERE, in, 3, "tap")) : NULL;
}

/* w [N, P] times tap [N, C, P], added to acc. */
static Value *gs_acc(Gs *g, Value *acc, Value *w, Value *tap)
{
	Value *wv = rn_reshape(g->im, g->np, w, (int64_t[]){g->N, 1, g->P}, 3, "weight");
	Value *t = rn_bin(g->im, g->np, OP_MUL, tap, wv, "weighted");
	return acc ? rn_bin(g->im, g->np, OP_ADD, acc, t, "sum") : t;
}

/* The cubic convolution weights (A = -0.75) of the taps at floor - 1 ...
 * floor + 2 for the fraction t. */
static void gs_cubic(Gs *g, Value *t, Value **w)
{
	Imp *im = g->im;
	const Onnx__NodeProto *np = g->np;
	const double A = -0.75;
	/* conv1(s) = ((A + 2) s - (A + 3)) s s + 1 (|s| <= 1); conv2(s) = ((A s - 5A) s + 8A) s - 4A (1 < |s| < 2) */
	Value *s[4] = {rn_bin(im, np, OP_ADD, t, gs_const(g, 1), "s0"), t, rn_bin(im, np, OP_SUB, gs_const(g, 1), t, "s2"),
		       rn_bin(im, np, OP_SUB, gs_const(g, 2), t, "s3")};
	for (int k = 0; k < 4; k++) {
		Value *x = s[k];
		if (k == 1 || k == 2) {
			Value *a = rn_bin(im, np, OP_SUB, rn_bin(im, np, OP_MUL, x, gs_const(g, A + 2), "c"), gs_const(g, A + 3), "c");
			w[k] = rn_bin(im, np, OP_ADD, rn_bin(im, np, OP_MUL, rn_bin(im, np, OP_MUL, a, x, "c"), x, "c"), gs_const(g, 1), "cubic");
		} else {
			Value *a = rn_bin(im, np, OP_SUB, rn_bin(im, np, OP_MUL, x, gs_const(g, A), "c"), gs_const(g, 5 * A), "c");
			Value *b = rn_bin(im, np, OP_ADD, rn_bin(im, np, OP_MUL, a, x, "c"), gs_const(g, 8 * A), "c");
			w[k] = rn_bin(im, np, OP_SUB, rn_bin(im, np, OP_MUL, b, x, "c"), gs_const(g, 4 * A), "cubic");
		}
	}
}

static bool import_grid_sample(Imp *im, const Onnx__NodeProto *np)
{
	Value *X = operand(im, np, 0, "input X"), *G = X ? operand(im, np, 1, "grid") : NULL;
	if (!G)
		return false;
	const Shape *xs = &X->type.shape, *gsh = &G->type.shape;
	if (X->type.dtype != DT_F32 || G->type.dtype != DT_F32 || xs->rank != 4 || gsh->rank != 4 || gsh->dim[3] != 2 ||
	    gsh->dim[0] != xs->dim[0]) {
		imp_fail(im, "its input must be f32 [N, C, H, W] and its grid f32 [N, H_out, W_out, 2] (2-D sampling)");
		return false;
	}
	for (int i = 0; i < 4; i++)
		if (xs->dim[i] < 1 || gsh->dim[i] < 1) {
			imp_fail(im, "its input and grid must not be empty");
			return false;
		}
	char mb[32], pb[32];
	const char *mode = attr_string(np, "mode", "bilinear", mb, sizeof mb), *pm = attr_string(np, "padding_mode", "zeros", pb, sizeof pb);
	int m = strcmp(mode, "bilinear") == 0 || strcmp(mode, "linear") == 0 ? 1
		: strcmp(mode, "nearest") == 0				   ? 0
		: strcmp(mode, "bicubic") == 0 || strcmp(mode, "cubic") == 0 ? 2 : -1;
	Gs g = {im, np, NULL, xs->dim[0], xs->dim[1], xs->dim[2], xs->dim[3], gsh->dim[1] * gsh->dim[2],
		strcmp(pm, "zeros") == 0 ? 0 : strcmp(pm, "border") == 0 ? 1 : strcmp(pm, "reflection") == 0 ? 2 : -1,
		attr_int(np, "align_corners", 0) != 0};
	if (m < 0 || g.pad < 0) {
		if (m < 0)
			imp_fail(im, "its mode '%s' is not bilinear, nearest or bicubic", imp_q(im, mode));
		else
			imp_fail(im, "its padding_mode '%s' is not zeros, border or reflection", imp_q(im, pm));
		return false;
	}
	g.xf = rn_reshape(im, np, X, (int64_t[]){g.N, g.C, g.H * g.W}, 3, "flat");
	if (!g.xf)
		return false;
	/* the grid's x and y as source coordinates: g a + b, a = (size - 1) / 2
	 * with align_corners, size / 2 without; b = (size - 1) / 2 */
	Value *c[2];
	for (int k = 0; k < 2; k++) {
		int64_t size = k ? g.H : g.W;
		Value *v = rn_reshape(im, np, rn_slice(im, np, G, 3, k, k + 1, k ? "gy" : "gx"), (int64_t[]){g.N, g.P}, 2, k ? "gy" : "gx");
		double a = g.align ? (double)(size - 1) / 2 : (double)size / 2, b = (double)(size - 1) / 2;
		c[k] = rn_bin(im, np, OP_ADD, rn_bin(im, np, OP_MUL, v, gs_const(&g, a), "scaled"), gs_const(&g, b), k ? "iy" : "ix");
		if (m != 2)
			c[k] = gs_pad(&g, c[k], size);
	}
	Value *acc = NULL;
	if (m == 0) {
		acc = gs_tap(&g, rn_un(im, np, OP_ROUND, c[0], "x"), rn_un(im, np, OP_ROUND, c[1], "y"));
	} else {
		Value *f[2], *t[2];
		for (int k = 0; k < 2; k++) {
			f[k] = rn_un(im, np, OP_FLOOR, c[k], k ? "y0" : "x0");
			t[k] = rn_bin(im, np, OP_SUB, c[k], f[k], k ? "ty" : "tx");
		}
		int ntap = m == 1 ? 2 : 4;
		Value *wx[4], *wy[4];
		if (m == 1) {
			wx[1] = t[0], wy[1] = t[1];
			wx[0] = rn_bin(im, np, OP_SUB, gs_const(&g, 1), t[0], "wx0");
			wy[0] = rn_bin(im, np, OP_SUB, gs_const(&g, 1), t[1], "wy0");
		} else {
			gs_cubic(&g, t[0], wx);
			gs_cubic(&g, t[1], wy);
		}
		int first = m == 1 ? 0 : -1;
		for (int j = 0; j < ntap; j++) {
			Value *y = rn_bin(im, np, OP_ADD, f[1], gs_const(&g, first + j), "y");
			if (m == 2)
				y = gs_pad(&g, y, g.H);
			for (int i = 0; i < ntap; i++) {
				Value *x = rn_bin(im, np, OP_ADD, f[0], gs_const(&g, first + i), "x");
				if (m == 2)
					x = gs_pad(&g, x, g.W);
				acc = gs_acc(&g, acc, rn_bin(im, np, OP_MUL, wx[i], wy[j], "w"), gs_tap(&g, x, y));
			}
		}
	}
	if (!acc)
		return false;
	Node *r = imp_step(im, np, OP_RESHAPE, &acc, 1, NULL);
	if (r)
		node_set_ints(r, "shape", (int64_t[]){g.N, g.C, gsh->dim[1], gsh->dim[2]}, 4);
	return imp_finish(im, r, np);
}

/* ---- Det ------------------------------------------------------------------------------ */
/* The determinant of [..., n, n] by the Leibniz formula: a `gather` of the n
 * entries of each of the n! permutations from the flattened matrices, their
 * `reduce_prod`, times the permutation's sign, `reduce_sum`med.  n <= 5
 * (120 products of 5): beyond, LU with pivoting would be needed. */
enum { DET_MAX = 5 };

static bool import_det(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = operand(im, np, 0, "input");
	if (!x)
		return false;
	const Shape *s = &x->type.shape;
	int r = s->rank;
	if (x->type.dtype != DT_F32 || r < 2 || s->dim[r - 1] != s->dim[r - 2]) {
		imp_fail(im, "its input must be f32 square matrices [..., n, n]");
		return false;
	}
	int64_t n = s->dim[r - 1];
	if (n < 1 || n > DET_MAX) {
		imp_fail(im, "its matrices are %" PRId64 " x %" PRId64 ": gdcc's Det (the Leibniz formula) takes at most %d x %d", n,
			 n, DET_MAX, DET_MAX);
		return false;
	}
	/* the permutations of 0..n-1 in lexicographic order, with their signs */
	int64_t nperm = 1;
	for (int64_t i = 2; i <= n; i++)
		nperm *= i;
	Tensor *idx = tensor_new(DT_I64, &(Shape){1, {nperm * n}}), *sign = tensor_new(DT_F32, &(Shape){1, {nperm}});
	int p[DET_MAX];
	for (int i = 0; i < n; i++)
		p[i] = i;
	for (int64_t q = 0; q < nperm; q++) {
		int inv = 0;
		for (int i = 0; i < n; i++) {
			tensor_set_i(idx, q * n + i, i * n + p[i]);
			for (int j = i + 1; j < n; j++)
				inv += p[i] > p[j];
		}
		tensor_set_f(sign, q, inv % 2 ? -1 : 1);
		/* next permutation */
		int i = (int)n - 2;
		while (i >= 0 && p[i] > p[i + 1])
			i--;
		if (i < 0)
			break;
		int j = (int)n - 1;
		while (p[j] < p[i])
			j--;
		int t = p[i];
		p[i] = p[j], p[j] = t;
		for (int a = i + 1, b = (int)n - 1; a < b; a++, b--)
			t = p[a], p[a] = p[b], p[b] = t;
	}
	int64_t dims[MAX_RANK];
	for (int i = 0; i < r - 2; i++)
		dims[i] = s->dim[i];
	dims[r - 2] = n * n;
	Value *flat = rn_reshape(im, np, x, dims, r - 1, "entries");
	Value *gin[2] = {flat, imp_const(im, np, "permutations", idx)};
	Node *g = flat && gin[1] ? imp_step(im, np, OP_GATHER, gin, 2, "terms") : NULL;
	if (g)
		node_set_int(g, "axis", r - 2);
	dims[r - 2] = nperm, dims[r - 1] = n;
	Value *terms = rn_reshape(im, np, imp_done(im, g), dims, r, "terms");
	int64_t last = -1;
	Node *pr = terms ? imp_step(im, np, OP_REDUCE_PROD, &terms, 1, "products") : NULL;
	if (pr) {
		node_set_ints(pr, "axes", &last, 1);
		node_set_int(pr, "keepdims", 0);
	}
	Value *signed_ = rn_bin(im, np, OP_MUL, imp_done(im, pr), imp_const(im, np, "signs", sign), "signed");
	Node *sum = signed_ ? imp_step(im, np, OP_REDUCE_SUM, &signed_, 1, NULL) : NULL;
	if (sum) {
		node_set_ints(sum, "axes", &last, 1);
		node_set_int(sum, "keepdims", 0);
	}
	return imp_finish(im, sum, np);
}

/* ---- RoiAlign --------------------------------------------------------------------------- */
/* Per region r and sample s (output_height x output_width bins of
 * sampling_ratio^2 points each, all on [R, S] tensors: the regions may be
 * known only when running) the sample's position from the region's corners,
 * then X at its four neighbours by a `gather` of X as rows of channels
 * ([N H W, C], row b H W + y W + x), weighted as ONNX's reference (and
 * onnxruntime) weight them: 0 past a pixel outside, positions below 0 taken
 * as 0, the last row or column repeated.  avg: the mean of a bin's samples. */
static bool import_roi_align(Imp *im, const Onnx__NodeProto *np)
{
	Value *X = operand(im, np, 0, "input X"), *rois = X ? operand(im, np, 1, "rois") : NULL,
	      *bidx = rois ? operand(im, np, 2, "batch_indices") : NULL;
	if (!bidx)
		return false;
	const Shape *xs = &X->type.shape;
	int64_t R = rois->type.shape.dim[0];
	if (X->type.dtype != DT_F32 || xs->rank != 4 || rois->type.dtype != DT_F32 || rois->type.shape.rank != 2 ||
	    rois->type.shape.dim[1] != 4 || !(bidx->type.dtype == DT_I64 || bidx->type.dtype == DT_I32) ||
	    bidx->type.shape.rank != 1 || bidx->type.shape.dim[0] != R) {
		imp_fail(im, "its X must be f32 [N, C, H, W], rois f32 [R, 4] and batch_indices int64 [R]");
		return false;
	}
	int64_t N = xs->dim[0], C = xs->dim[1], H = xs->dim[2], W = xs->dim[3];
	int64_t oh = attr_int(np, "output_height", 1), ow = attr_int(np, "output_width", 1), sr = attr_int(np, "sampling_ratio", 0);
	double scale = attr_float(np, "spatial_scale", 1.0);
	char mb[32], cb[32];
	const char *mode = attr_string(np, "mode", "avg", mb, sizeof mb);
	const char *ctm = attr_string(np, "coordinate_transformation_mode", imp_opset(im) >= 16 ? "half_pixel" : "output_half_pixel",
				      cb, sizeof cb);
	bool half = strcmp(ctm, "half_pixel") == 0;
	if (N < 1 || C < 1 || H < 1 || W < 1 || R < 1 || oh < 1 || ow < 1 || oh > (1 << 16) || ow > (1 << 16)) {
		imp_fail(im, "its input, its regions and its output_height / output_width must not be empty");
		return false;
	}
	if (strcmp(mode, "avg") != 0) {
		imp_fail(im, "its mode '%s' is not supported: gdcc takes avg (max is defined differently by ONNX's reference "
			 "and onnxruntime)", imp_q(im, mode));
		return false;
	}
	if (!half && strcmp(ctm, "output_half_pixel") != 0) {
		imp_fail(im, "its coordinate_transformation_mode '%s' is not half_pixel or output_half_pixel", imp_q(im, ctm));
		return false;
	}
	if (sr < 1 || sr > 64) {
		imp_fail(im, "its sampling_ratio %" PRId64 " is not one of 1 to 64 (0, adaptive, makes the number of samples "
			 "depend on each region's size, known only when running)", sr);
		return false;
	}
	int64_t S = oh * ow * sr * sr;
	if (!size_ok(im, DT_F32, &(Shape){3, {R, S, C}}, "its samples"))
		return false;
	/* each sample's bin and place in it, in bins: ph + (iy + 0.5) / sr */
	Tensor *fy = tensor_new(DT_F32, &(Shape){2, {1, S}}), *fx = tensor_new(DT_F32, &(Shape){2, {1, S}});
	for (int64_t s = 0; s < S; s++) {
		int64_t ph = s / (ow * sr * sr), pw = s / (sr * sr) % ow, iy = s / sr % sr, ix = s % sr;
		tensor_set_f(fy, s, (double)ph + ((double)iy + 0.5) / (double)sr);
		tensor_set_f(fx, s, (double)pw + ((double)ix + 0.5) / (double)sr);
	}
	Value *frac[2] = {imp_const(im, np, "bin_y", fy), imp_const(im, np, "bin_x", fx)};
	Value *pos[2], *inside = NULL;
	for (int k = 0; k < 2; k++) { /* k 0: y (rois' columns 1, 3), 1: x (0, 2) */
		int64_t size = k ? W : H, bins = k ? ow : oh;
		Value *lo = rn_slice(im, np, rois, 1, 1 - k, 2 - k, k ? "x1" : "y1"), *hi = rn_slice(im, np, rois, 1, 3 - k, 4 - k, k ? "x2" : "y2");
		lo = rn_bin(im, np, OP_SUB, rn_bin(im, np, OP_MUL, lo, rn_scalar(im, np, DT_F32, scale, "scale"), "start"),
			    rn_scalar(im, np, DT_F32, half ? 0.5 : 0, "offset"), "start");
		hi = rn_bin(im, np, OP_SUB, rn_bin(im, np, OP_MUL, hi, rn_scalar(im, np, DT_F32, scale, "scale"), "end"),
			    rn_scalar(im, np, DT_F32, half ? 0.5 : 0, "offset"), "end");
		Value *len = rn_bin(im, np, OP_SUB, hi, lo, "extent");
		if (!half)
			len = rn_bin(im, np, OP_MAX, len, rn_scalar(im, np, DT_F32, 1, "one"), "extent");
		Value *bin = rn_bin(im, np, OP_MUL, len, rn_scalar(im, np, DT_F32, 1.0 / (double)bins, "per_bin"), "bin");
		Value *p = rn_bin(im, np, OP_ADD, lo, rn_bin(im, np, OP_MUL, frac[k], bin, "offset"), k ? "x" : "y");
		/* outside [-1, size]: no contribution */
		Value *in = rn_bin(im, np, OP_AND, rn_bin(im, np, OP_GREATER_EQUAL, p, rn_scalar(im, np, DT_F32, -1, "low"), "above"),
				   rn_bin(im, np, OP_LESS_EQUAL, p, rn_scalar(im, np, DT_F32, (double)size, "high"), "below"), "inside");
		inside = k ? rn_bin(im, np, OP_AND, inside, in, "inside") : in;
		pos[k] = rn_clip(im, np, p, 0, (double)(size - 1), k ? "x" : "y");
	}
	/* rows of X: [N H W, C]; a region's base row b H W */
	Value *xt = rn_transpose(im, np, X, (int64_t[]){0, 2, 3, 1}, 4, "channels_last");
	xt = rn_reshape(im, np, xt, (int64_t[]){N * H * W, C}, 2, "pixels");
	Value *b = bidx->type.dtype == DT_I64 ? bidx : cast_to(im, np, bidx, DT_I64, "batch");
	b = rn_bin(im, np, OP_MUL, rn_reshape(im, np, b, (int64_t[]){R, 1}, 2, "batch"), rn_scalar(im, np, DT_I64, (double)(H * W), "image"),
		   "base");
	Value *low[2], *high[2], *frw[2];
	for (int k = 0; k < 2; k++) {
		int64_t size = k ? W : H;
		low[k] = rn_un(im, np, OP_FLOOR, pos[k], k ? "x_low" : "y_low");
		Value *next = rn_bin(im, np, OP_ADD, low[k], rn_scalar(im, np, DT_F32, 1, "one"), "next");
		high[k] = rn_clip(im, np, next, 0, (double)(size - 1), k ? "x_high" : "y_high");
		frw[k] = rn_bin(im, np, OP_SUB, pos[k], low[k], k ? "lx" : "ly");
	}
	Value *acc = NULL;
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < 2; i++) {
			Value *yy = j ? high[0] : low[0], *xx = i ? high[1] : low[1];
			Value *wy = j ? frw[0] : rn_bin(im, np, OP_SUB, rn_scalar(im, np, DT_F32, 1, "one"), frw[0], "hy");
			Value *wx = i ? frw[1] : rn_bin(im, np, OP_SUB, rn_scalar(im, np, DT_F32, 1, "one"), frw[1], "hx");
			Value *row = rn_bin(im, np, OP_ADD, rn_bin(im, np, OP_MUL, yy, rn_scalar(im, np, DT_F32, (double)W, "width"), "row"), xx, "pixel");
			Value *idx = rn_bin(im, np, OP_ADD, b, row ? cast_to(im, np, row, DT_I64, "pixel") : NULL, "pixel");
			idx = rn_reshape(im, np, idx, (int64_t[]){R * S}, 1, "pixel");
			Value *gin[2] = {xt, idx};
			Node *g = xt && idx ? imp_step(im, np, OP_GATHER, gin, 2, "tap") : NULL;
			if (g)
				node_set_int(g, "axis", 0);
			Value *v = rn_reshape(im, np, imp_done(im, g), (int64_t[]){R, S, C}, 3, "tap");
			Value *w = rn_reshape(im, np, rn_bin(im, np, OP_MUL, wy, wx, "w"), (int64_t[]){R, S, 1}, 3, "w");
			Value *t = rn_bin(im, np, OP_MUL, v, w, "weighted");
			acc = acc ? rn_bin(im, np, OP_ADD, acc, t, "sum") : t;
		}
	Value *win[3] = {rn_reshape(im, np, inside, (int64_t[]){R, S, 1}, 3, "inside"), acc, rn_scalar(im, np, DT_F32, 0, "zero")};
	Value *v = win[0] && win[1] && win[2] ? imp_done(im, imp_step(im, np, OP_WHERE, win, 3, "samples")) : NULL;
	v = rn_reshape(im, np, v, (int64_t[]){R, oh, ow, sr * sr, C}, 5, "samples");
	int64_t ax = 3;
	Node *m = v ? imp_step(im, np, OP_REDUCE_MEAN, &v, 1, "bins") : NULL;
	if (m) {
		node_set_ints(m, "axes", &ax, 1);
		node_set_int(m, "keepdims", 0);
	}
	Value *bins = imp_done(im, m);
	if (!bins)
		return false;
	Node *t = imp_step(im, np, OP_TRANSPOSE, &bins, 1, NULL);
	if (t)
		node_set_ints(t, "perm", (int64_t[]){0, 3, 1, 2}, 4);
	return imp_finish(im, t, np);
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
	else if (strcmp(op, "RNN") == 0 || strcmp(op, "GRU") == 0 || strcmp(op, "LSTM") == 0)
		*ok = import_rnn(im, np, op[0] == 'R' ? RNN_PLAIN : op[0] == 'G' ? RNN_GRU : RNN_LSTM);
	else if (strcmp(op, "ReverseSequence") == 0)
		*ok = import_reverse_sequence(im, np);
	else if (strcmp(op, "DFT") == 0)
		*ok = import_dft(im, np);
	else if (strcmp(op, "STFT") == 0)
		*ok = import_stft(im, np);
	else if (strcmp(op, "Compress") == 0)
		*ok = import_compress(im, np);
	else if (strcmp(op, "MelWeightMatrix") == 0)
		*ok = import_mel_weight_matrix(im, np);
	else if (strcmp(op, "GridSample") == 0)
		*ok = import_grid_sample(im, np);
	else if (strcmp(op, "Det") == 0)
		*ok = import_det(im, np);
	else if (strcmp(op, "RoiAlign") == 0)
		*ok = import_roi_align(im, np);
	else
		return false;
	return true;
}
