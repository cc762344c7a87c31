/* ONNX ops that sample their input at positions computed when compiling
 * (see onnx_compose.h): gathers of the input, weighted and summed.
 *
 *   Resize, Upsample   per resized axis, from the last to the first: a sum of
 *                      `gather`s of the axis at constant positions, each
 *                      weighted by a constant (nearest: one gather, no
 *                      weight), plus a constant where tf_crop_and_resize
 *                      extrapolates.  The positions and weights are those of
 *                      the ONNX reference (interpolate_nd), computed here
 *                      in double.
 *   GridSample         per tap (1, 4 or 16) a `gather_elements` of the
 *                      flattened image at the grid's source coordinates,
 *                      padded as PyTorch's grid sampler pads them, weighted
 *                      (bilinear, cubic convolution) and summed.
 *   RoiAlign           per region and sample, X's four neighbours by a
 *                      `gather` of X as rows of channels, weighted, the
 *                      mean of each bin's samples.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_compose.h"
#include "ops.h"
#include "util.h"

/* ---- Resize and Upsample ------------------------------------------------------------- */
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
				*ok = step_last_binary(im, np, OP_MUL, gv, wc);
			else if (wc)
				gv = step_binary(im, np, OP_MUL, gv, wc, what);
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
			*ok = step_last_binary(im, np, OP_ADD, res, e);
		else
			res = step_binary(im, np, OP_ADD, res, e, what);
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
	const char *mode = imp_attr_string(np, "mode", "nearest", b1, sizeof b1);
	const char *coord = imp_attr_string(np, "coordinate_transformation_mode", old ? "asymmetric" : "half_pixel", b2, sizeof b2);
	const char *nearest = imp_attr_string(np, "nearest_mode", old ? "floor" : "round_prefer_floor", b3, sizeof b3);
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
	h->cubic_a = imp_attr_float(np, "cubic_coeff_a", -0.75);
	h->exclude_outside = imp_attr_int(np, "exclude_outside", 0) != 0;
	h->extrapolation = imp_attr_float(np, "extrapolation_value", 0.0);
	if (imp_attr_int(np, "antialias", 0) != 0) {
		imp_fail(im, "antialias = 1 is not supported");
		return false;
	}
	char b4[64];
	if (strcmp(imp_attr_string(np, "keep_aspect_ratio_policy", "stretch", b4, sizeof b4), "stretch") != 0) {
		imp_fail(im, "attribute 'keep_aspect_ratio_policy' = \"%s\" is not supported (only stretch)", imp_q(im, b4));
		return false;
	}
	return true;
}

bool compose_resize(Imp *im, const Onnx__NodeProto *np)
{
	bool upsample = strcmp(np->op_type, "Upsample") == 0;
	Value *x = imp_operand(im, np, 0, "input");
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
		ok = step_size_ok(im, x->type.dtype, &os, "its result");
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
	return step_scalar(g->im, g->np, DT_F32, v, "k");
}

static Value *gs_clip(Gs *g, Value *v, double lo, double hi)
{
	return step_clip(g->im, g->np, v, lo, hi, "clipped");
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
			return gs_clip(g, step_binary(im, np, OP_MUL, v, gs_const(g, 0), "reflected"), 0, 0);
		Value *d = step_unary(im, np, OP_ABS, step_binary(im, np, OP_SUB, v, gs_const(g, lo), "from_low"), "from_low");
		Value *flips = step_unary(im, np, OP_FLOOR, step_binary(im, np, OP_MUL, d, gs_const(g, 1 / span), "flips"), "flips");
		Value *extra = step_binary(im, np, OP_SUB, d, step_binary(im, np, OP_MUL, flips, gs_const(g, span), "whole"), "extra");
		Value *half = step_unary(im, np, OP_FLOOR, step_binary(im, np, OP_MUL, flips, gs_const(g, 0.5), "pairs"), "pairs");
		Value *odd = step_binary(im, np, OP_SUB, flips, step_binary(im, np, OP_MUL, half, gs_const(g, 2), "even"), "odd");
		Value *in[3] = {step_binary(im, np, OP_LESS, odd, gs_const(g, 0.5), "even_flips"),
				step_binary(im, np, OP_ADD, extra, gs_const(g, lo), "up"),
				step_binary(im, np, OP_SUB, gs_const(g, span + lo), extra, "down")};
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
	Value *flat = step_binary(im, np, OP_ADD, step_binary(im, np, OP_MUL, yc, gs_const(g, (double)g->W), "row"), xc, "flat");
	Value *idx = step_reshape(im, np, flat ? step_cast(im, np, flat, DT_I64, "flat") : NULL, (int64_t[]){g->N, 1, g->P}, 3,
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
	Value *inside = step_binary(im, np, OP_AND,
			       step_binary(im, np, OP_EQUAL, step_reshape(im, np, x, n1p, 3, "x"), step_reshape(im, np, xc, n1p, 3, "x"), "x_inside"),
			       step_binary(im, np, OP_EQUAL, step_reshape(im, np, y, n1p, 3, "y"), step_reshape(im, np, yc, n1p, 3, "y"), "y_inside"),
			       "inside");
	Value *in[3] = {inside, v, gs_const(g, 0)};
	return in[0] && in[2] ? imp_done(im, imp_step(im, np, OP_WHERE, in, 3, "tap")) : NULL;
}

/* w [N, P] times tap [N, C, P], added to acc. */
static Value *gs_acc(Gs *g, Value *acc, Value *w, Value *tap)
{
	Value *wv = step_reshape(g->im, g->np, w, (int64_t[]){g->N, 1, g->P}, 3, "weight");
	Value *t = step_binary(g->im, g->np, OP_MUL, tap, wv, "weighted");
	return acc ? step_binary(g->im, g->np, OP_ADD, acc, t, "sum") : t;
}

/* The cubic convolution weights (A = -0.75) of the taps at floor - 1 ...
 * floor + 2 for the fraction t. */
static void gs_cubic(Gs *g, Value *t, Value **w)
{
	Imp *im = g->im;
	const Onnx__NodeProto *np = g->np;
	const double A = -0.75;
	/* conv1(s) = ((A + 2) s - (A + 3)) s s + 1 (|s| <= 1); conv2(s) = ((A s - 5A) s + 8A) s - 4A (1 < |s| < 2) */
	Value *s[4] = {step_binary(im, np, OP_ADD, t, gs_const(g, 1), "s0"), t, step_binary(im, np, OP_SUB, gs_const(g, 1), t, "s2"),
		       step_binary(im, np, OP_SUB, gs_const(g, 2), t, "s3")};
	for (int k = 0; k < 4; k++) {
		Value *x = s[k];
		if (k == 1 || k == 2) {
			Value *a = step_binary(im, np, OP_SUB, step_binary(im, np, OP_MUL, x, gs_const(g, A + 2), "c"), gs_const(g, A + 3), "c");
			w[k] = step_binary(im, np, OP_ADD, step_binary(im, np, OP_MUL, step_binary(im, np, OP_MUL, a, x, "c"), x, "c"), gs_const(g, 1), "cubic");
		} else {
			Value *a = step_binary(im, np, OP_SUB, step_binary(im, np, OP_MUL, x, gs_const(g, A), "c"), gs_const(g, 5 * A), "c");
			Value *b = step_binary(im, np, OP_ADD, step_binary(im, np, OP_MUL, a, x, "c"), gs_const(g, 8 * A), "c");
			w[k] = step_binary(im, np, OP_SUB, step_binary(im, np, OP_MUL, b, x, "c"), gs_const(g, 4 * A), "cubic");
		}
	}
}

bool compose_grid_sample(Imp *im, const Onnx__NodeProto *np)
{
	Value *X = imp_operand(im, np, 0, "input X"), *G = X ? imp_operand(im, np, 1, "grid") : NULL;
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
	const char *mode = imp_attr_string(np, "mode", "bilinear", mb, sizeof mb), *pm = imp_attr_string(np, "padding_mode", "zeros", pb, sizeof pb);
	int m = strcmp(mode, "bilinear") == 0 || strcmp(mode, "linear") == 0 ? 1
		: strcmp(mode, "nearest") == 0				   ? 0
		: strcmp(mode, "bicubic") == 0 || strcmp(mode, "cubic") == 0 ? 2 : -1;
	Gs g = {im, np, NULL, xs->dim[0], xs->dim[1], xs->dim[2], xs->dim[3], gsh->dim[1] * gsh->dim[2],
		strcmp(pm, "zeros") == 0 ? 0 : strcmp(pm, "border") == 0 ? 1 : strcmp(pm, "reflection") == 0 ? 2 : -1,
		imp_attr_int(np, "align_corners", 0) != 0};
	if (m < 0 || g.pad < 0) {
		if (m < 0)
			imp_fail(im, "its mode '%s' is not bilinear, nearest or bicubic", imp_q(im, mode));
		else
			imp_fail(im, "its padding_mode '%s' is not zeros, border or reflection", imp_q(im, pm));
		return false;
	}
	g.xf = step_reshape(im, np, X, (int64_t[]){g.N, g.C, g.H * g.W}, 3, "flat");
	if (!g.xf)
		return false;
	/* the grid's x and y as source coordinates: g a + b, a = (size - 1) / 2
	 * with align_corners, size / 2 without; b = (size - 1) / 2 */
	Value *c[2];
	for (int k = 0; k < 2; k++) {
		int64_t size = k ? g.H : g.W;
		Value *v = step_reshape(im, np, step_slice(im, np, G, 3, k, k + 1, k ? "gy" : "gx"), (int64_t[]){g.N, g.P}, 2, k ? "gy" : "gx");
		double a = g.align ? (double)(size - 1) / 2 : (double)size / 2, b = (double)(size - 1) / 2;
		c[k] = step_binary(im, np, OP_ADD, step_binary(im, np, OP_MUL, v, gs_const(&g, a), "scaled"), gs_const(&g, b), k ? "iy" : "ix");
		if (m != 2)
			c[k] = gs_pad(&g, c[k], size);
	}
	Value *acc = NULL;
	if (m == 0) {
		acc = gs_tap(&g, step_unary(im, np, OP_ROUND, c[0], "x"), step_unary(im, np, OP_ROUND, c[1], "y"));
	} else {
		Value *f[2], *t[2];
		for (int k = 0; k < 2; k++) {
			f[k] = step_unary(im, np, OP_FLOOR, c[k], k ? "y0" : "x0");
			t[k] = step_binary(im, np, OP_SUB, c[k], f[k], k ? "ty" : "tx");
		}
		int ntap = m == 1 ? 2 : 4;
		Value *wx[4], *wy[4];
		if (m == 1) {
			wx[1] = t[0], wy[1] = t[1];
			wx[0] = step_binary(im, np, OP_SUB, gs_const(&g, 1), t[0], "wx0");
			wy[0] = step_binary(im, np, OP_SUB, gs_const(&g, 1), t[1], "wy0");
		} else {
			gs_cubic(&g, t[0], wx);
			gs_cubic(&g, t[1], wy);
		}
		int first = m == 1 ? 0 : -1;
		for (int j = 0; j < ntap; j++) {
			Value *y = step_binary(im, np, OP_ADD, f[1], gs_const(&g, first + j), "y");
			if (m == 2)
				y = gs_pad(&g, y, g.H);
			for (int i = 0; i < ntap; i++) {
				Value *x = step_binary(im, np, OP_ADD, f[0], gs_const(&g, first + i), "x");
				if (m == 2)
					x = gs_pad(&g, x, g.W);
				acc = gs_acc(&g, acc, step_binary(im, np, OP_MUL, wx[i], wy[j], "w"), gs_tap(&g, x, y));
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

/* ---- RoiAlign --------------------------------------------------------------------------- */
/* Per region r and sample s (output_height x output_width bins of
 * sampling_ratio^2 points each, all on [R, S] tensors: the regions may be
 * known only when running) the sample's position from the region's corners,
 * then X at its four neighbours by a `gather` of X as rows of channels
 * ([N H W, C], row b H W + y W + x), weighted as ONNX's reference (and
 * onnxruntime) weight them: 0 past a pixel outside, positions below 0 taken
 * as 0, the last row or column repeated.  avg: the mean of a bin's samples. */
bool compose_roi_align(Imp *im, const Onnx__NodeProto *np)
{
	Value *X = imp_operand(im, np, 0, "input X"), *rois = X ? imp_operand(im, np, 1, "rois") : NULL,
	      *bidx = rois ? imp_operand(im, np, 2, "batch_indices") : NULL;
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
	int64_t oh = imp_attr_int(np, "output_height", 1), ow = imp_attr_int(np, "output_width", 1), sr = imp_attr_int(np, "sampling_ratio", 0);
	double scale = imp_attr_float(np, "spatial_scale", 1.0);
	char mb[32], cb[32];
	const char *mode = imp_attr_string(np, "mode", "avg", mb, sizeof mb);
	const char *ctm = imp_attr_string(np, "coordinate_transformation_mode", imp_opset(im) >= 16 ? "half_pixel" : "output_half_pixel",
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
	if (!step_size_ok(im, DT_F32, &(Shape){3, {R, S, C}}, "its samples"))
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
		Value *lo = step_slice(im, np, rois, 1, 1 - k, 2 - k, k ? "x1" : "y1"), *hi = step_slice(im, np, rois, 1, 3 - k, 4 - k, k ? "x2" : "y2");
		lo = step_binary(im, np, OP_SUB, step_binary(im, np, OP_MUL, lo, step_scalar(im, np, DT_F32, scale, "scale"), "start"),
			    step_scalar(im, np, DT_F32, half ? 0.5 : 0, "offset"), "start");
		hi = step_binary(im, np, OP_SUB, step_binary(im, np, OP_MUL, hi, step_scalar(im, np, DT_F32, scale, "scale"), "end"),
			    step_scalar(im, np, DT_F32, half ? 0.5 : 0, "offset"), "end");
		Value *len = step_binary(im, np, OP_SUB, hi, lo, "extent");
		if (!half)
			len = step_binary(im, np, OP_MAX, len, step_scalar(im, np, DT_F32, 1, "one"), "extent");
		Value *bin = step_binary(im, np, OP_MUL, len, step_scalar(im, np, DT_F32, 1.0 / (double)bins, "per_bin"), "bin");
		Value *p = step_binary(im, np, OP_ADD, lo, step_binary(im, np, OP_MUL, frac[k], bin, "offset"), k ? "x" : "y");
		/* outside [-1, size]: no contribution */
		Value *in = step_binary(im, np, OP_AND, step_binary(im, np, OP_GREATER_EQUAL, p, step_scalar(im, np, DT_F32, -1, "low"), "above"),
				   step_binary(im, np, OP_LESS_EQUAL, p, step_scalar(im, np, DT_F32, (double)size, "high"), "below"), "inside");
		inside = k ? step_binary(im, np, OP_AND, inside, in, "inside") : in;
		pos[k] = step_clip(im, np, p, 0, (double)(size - 1), k ? "x" : "y");
	}
	/* rows of X: [N H W, C]; a region's base row b H W */
	Value *xt = step_transpose(im, np, X, (int64_t[]){0, 2, 3, 1}, 4, "channels_last");
	xt = step_reshape(im, np, xt, (int64_t[]){N * H * W, C}, 2, "pixels");
	Value *b = bidx->type.dtype == DT_I64 ? bidx : step_cast(im, np, bidx, DT_I64, "batch");
	b = step_binary(im, np, OP_MUL, step_reshape(im, np, b, (int64_t[]){R, 1}, 2, "batch"), step_scalar(im, np, DT_I64, (double)(H * W), "image"),
		   "base");
	Value *low[2], *high[2], *frw[2];
	for (int k = 0; k < 2; k++) {
		int64_t size = k ? W : H;
		low[k] = step_unary(im, np, OP_FLOOR, pos[k], k ? "x_low" : "y_low");
		Value *next = step_binary(im, np, OP_ADD, low[k], step_scalar(im, np, DT_F32, 1, "one"), "next");
		high[k] = step_clip(im, np, next, 0, (double)(size - 1), k ? "x_high" : "y_high");
		frw[k] = step_binary(im, np, OP_SUB, pos[k], low[k], k ? "lx" : "ly");
	}
	Value *acc = NULL;
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < 2; i++) {
			Value *yy = j ? high[0] : low[0], *xx = i ? high[1] : low[1];
			Value *wy = j ? frw[0] : step_binary(im, np, OP_SUB, step_scalar(im, np, DT_F32, 1, "one"), frw[0], "hy");
			Value *wx = i ? frw[1] : step_binary(im, np, OP_SUB, step_scalar(im, np, DT_F32, 1, "one"), frw[1], "hx");
			Value *row = step_binary(im, np, OP_ADD, step_binary(im, np, OP_MUL, yy, step_scalar(im, np, DT_F32, (double)W, "width"), "row"), xx, "pixel");
			Value *idx = step_binary(im, np, OP_ADD, b, row ? step_cast(im, np, row, DT_I64, "pixel") : NULL, "pixel");
			idx = step_reshape(im, np, idx, (int64_t[]){R * S}, 1, "pixel");
			Value *gin[2] = {xt, idx};
			Node *g = xt && idx ? imp_step(im, np, OP_GATHER, gin, 2, "tap") : NULL;
			if (g)
				node_set_int(g, "axis", 0);
			Value *v = step_reshape(im, np, imp_done(im, g), (int64_t[]){R, S, C}, 3, "tap");
			Value *w = step_reshape(im, np, step_binary(im, np, OP_MUL, wy, wx, "w"), (int64_t[]){R, S, 1}, 3, "w");
			Value *t = step_binary(im, np, OP_MUL, v, w, "weighted");
			acc = acc ? step_binary(im, np, OP_ADD, acc, t, "sum") : t;
		}
	Value *win[3] = {step_reshape(im, np, inside, (int64_t[]){R, S, 1}, 3, "inside"), acc, step_scalar(im, np, DT_F32, 0, "zero")};
	Value *v = win[0] && win[1] && win[2] ? imp_done(im, imp_step(im, np, OP_WHERE, win, 3, "samples")) : NULL;
	v = step_reshape(im, np, v, (int64_t[]){R, oh, ow, sr * sr, C}, 5, "samples");
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
