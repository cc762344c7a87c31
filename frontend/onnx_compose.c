/* ONNX ops that gdcc translates into several of its own ops (see
 * onnx_compose.h for the others and the steps they share), and the
 * dispatch to every translation.
 *
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
 *   NegativeLogLikelihoodLoss  -x[n, t, d...] by `gather_elements` along the
 *                      classes, times weight[t] (`gather`), 0 at ignore_index
 *                      (`where`, `equal`); sum or mean (over the weights, or
 *                      the count, of the positions kept) by `reduce_sum`.
 *   SoftmaxCrossEntropyLoss  `logsoftmax` along the classes, then that.
 *   MaxUnpool          X scattered (`scatter_nd`) to the flat positions I names in
 *                      a zero tensor (`constant_of_shape`) of the output's shape.
 *   Pow                an integer base with an f32 exponent: where the exponent
 *                      is whole, the exact integer `pow` of its cast; else the
 *                      f32 `pow` truncated.
 *   Det                the Leibniz formula for n <= 5: a `gather` of each
 *                      permutation's entries, `reduce_prod`, times its sign,
 *                      `reduce_sum`.
 *   CumSum             log2(n) steps of y += y shifted by 1, 2, 4, ... along
 *                      the axis (a `pad` of that many zeros in front and as
 *                      many elements cut at the end: Hillis and Steele's
 *                      scan); exclusive: x shifted by one first; reverse:
 *                      the axis reversed (`slice`, step -1) before and after.
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
#include <stdlib.h>
#include <string.h>

#include "onnx_compose.h"
#include "ops.h"
#include "util.h"

/* ---- ConvTranspose ------------------------------------------------------------------- */
static bool import_conv_transpose(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "input"), *w = x ? imp_operand(im, np, 1, "weights") : NULL, *b = NULL;
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
	int64_t group = imp_attr_int(np, "group", 1);
	int64_t C = xs->dim[1], Mg = ws->dim[1];
	if (group < 1 || C % group != 0 || ws->dim[0] != C) {
		imp_fail(im, "its weights [%" PRId64 ", ...] do not match %" PRId64 " input channels in %" PRId64 " groups",
			 ws->dim[0], C, group);
		return false;
	}
	int64_t M = Mg * group, Cg = C / group;
	int64_t k[3], d[3] = {1, 1, 1}, s[3] = {1, 1, 1}, op[3] = {0, 0, 0}, pads[6] = {0}, oshape[5];
	bool has_k, has_d, has_s, has_op, has_pads, has_os = false;
	if (!imp_attr_ints(im, np, "kernel_shape", ns, k, &has_k) || !imp_attr_ints(im, np, "dilations", ns, d, &has_d) ||
	    !imp_attr_ints(im, np, "strides", ns, s, &has_s) || !imp_attr_ints(im, np, "output_padding", ns, op, &has_op) ||
	    !imp_attr_ints(im, np, "pads", 2 * ns, pads, &has_pads))
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
	const char *auto_pad = imp_attr_string(np, "auto_pad", "NOTSET", buf, sizeof buf);
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
		if (!step_size_ok(im, DT_F32, &dil, "its input spread by the strides"))
			return false;
		int64_t sh[MAX_RANK];
		int r2 = 2 + 2 * ns;
		sh[0] = xs->dim[0], sh[1] = C;
		int64_t pp[2 * MAX_RANK] = {0};
		for (int i = 0; i < ns; i++) {
			sh[2 + 2 * i] = xs->dim[2 + i], sh[3 + 2 * i] = 1;
			pp[r2 + 3 + 2 * i] = s[i] - 1;
		}
		if (!(z = step_reshape(im, np, z, sh, r2, "spread")))
			return false;
		Node *pn = imp_step(im, np, OP_PAD, &z, 1, "zeros");
		if (pn)
			node_set_ints(pn, "pads", pp, 2 * r2);
		if (!(z = imp_done(im, pn)))
			return false;
		if (!(z = step_reshape(im, np, z, sh2, rank, "dilated")))
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
	Value *wv = step_reshape(im, np, w, sh, rank + 1, "wgroups");
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
	if (!(wv = step_reshape(im, np, wv, wsh, rank, "wconv")))
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
	Value *x = imp_operand(im, np, 0, "input"), *sc = x ? imp_operand(im, np, 1, "scale") : NULL,
	      *bi = sc ? imp_operand(im, np, 2, "bias") : NULL;
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
		node_set_float(ln, "epsilon", imp_attr_float(np, "epsilon", 1e-5));
	}
	Value *y = imp_done(im, ln);
	int64_t cs[MAX_RANK];
	cs[0] = C;
	for (int i = 1; i < rank - 1; i++)
		cs[i] = 1;
	Value *scv = y ? step_reshape(im, np, sc, cs, rank - 1, "scale") : NULL;
	Value *biv = scv ? step_reshape(im, np, bi, cs, rank - 1, "bias") : NULL;
	Value *m = biv ? step_binary(im, np, OP_MUL, y, scv, "scaled") : NULL;
	return m && step_last_binary(im, np, OP_ADD, m, biv);
}

static bool import_mvn(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "input");
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
	Value *dv = mean ? step_binary(im, np, OP_SUB, x, mean, "centered") : NULL;
	Value *sq = dv ? step_binary(im, np, OP_MUL, dv, dv, "squared") : NULL;
	Node *vn = sq ? imp_step(im, np, OP_REDUCE_MEAN, &sq, 1, "variance") : NULL;
	if (vn) {
		node_set_ints(vn, "axes", axes, nax);
		node_set_int(vn, "keepdims", 1);
	}
	Value *var = imp_done(im, vn);
	Value *sd = var ? step_unary(im, np, OP_SQRT, var, "std") : NULL;
	Shape s0 = {0};
	Tensor *eps = tensor_new(DT_F32, &s0);
	((float *)eps->data)[0] = 1e-9f;
	Value *ev = sd ? imp_const(im, np, "epsilon", eps) : (tensor_free(eps), NULL);
	Value *den = ev ? step_binary(im, np, OP_ADD, sd, ev, "denominator") : NULL;
	return den && step_last_binary(im, np, OP_DIV, dv, den);
}

static bool import_lrn(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "input");
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
	double alpha = imp_attr_float(np, "alpha", 1e-4), beta = imp_attr_float(np, "beta", 0.75), bias = imp_attr_float(np, "bias", 1.0);
	int64_t rest = 1;
	for (int i = 2; i < rank; i++)
		rest *= x->type.shape.dim[i];
	Value *sq = step_binary(im, np, OP_MUL, x, x, "squared");
	int64_t sh[4] = {x->type.shape.dim[0], 1, x->type.shape.dim[1], rest};
	Value *r = sq ? step_reshape(im, np, sq, sh, 4, "channels") : NULL;
	Node *pn = r ? imp_step(im, np, OP_AVGPOOL, &r, 1, "window") : NULL;
	if (pn) {
		int64_t ks[2] = {size, 1}, pads[4] = {(size - 1) / 2, 0, size - 1 - (size - 1) / 2, 0};
		node_set_ints(pn, "kernel_shape", ks, 2);
		node_set_ints(pn, "pads", pads, 4);
		node_set_int(pn, "count_include_pad", 1);
	}
	Value *avg = imp_done(im, pn);
	Value *back = avg ? step_reshape(im, np, avg, x->type.shape.dim, rank, "sums") : NULL;
	Shape s0 = {0};
	Tensor *ta = tensor_new(DT_F32, &s0), *tb = tensor_new(DT_F32, &s0), *tp = tensor_new(DT_F32, &s0);
	((float *)ta->data)[0] = (float)alpha;
	((float *)tb->data)[0] = (float)bias;
	((float *)tp->data)[0] = (float)-beta;
	Value *av = back ? imp_const(im, np, "alpha", ta) : (tensor_free(ta), NULL);
	Value *bv = av ? imp_const(im, np, "bias", tb) : (tensor_free(tb), NULL);
	Value *pv = bv ? imp_const(im, np, "beta", tp) : (tensor_free(tp), NULL);
	Value *m = pv ? step_binary(im, np, OP_MUL, back, av, "scaled") : NULL;
	Value *base = m ? step_binary(im, np, OP_ADD, m, bv, "base") : NULL;
	Value *f = base ? step_binary(im, np, OP_POW, base, pv, "factor") : NULL;
	return f && step_last_binary(im, np, OP_MUL, x, f);
}

/* ---- ScatterElements ------------------------------------------------------------------ */
/* scatter_nd with full coordinates: position p of indices addresses data
 * at p with axis `axis` replaced by indices[p]; the coordinates are a
 * constant grid of the other axes plus indices times the axis's unit
 * vector, [..., rank]. */
static bool import_scatter_elements(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "data"), *idx = x ? imp_operand(im, np, 1, "indices") : NULL,
	      *upd = idx ? imp_operand(im, np, 2, "updates") : NULL;
	if (!upd)
		return false;
	const Shape *ds = &x->type.shape, *is = &idx->type.shape;
	int rank = ds->rank;
	if (rank < 1 || rank >= MAX_RANK || is->rank != rank || (idx->type.dtype != DT_I64 && idx->type.dtype != DT_I32)) {
		imp_fail(im, "its indices must be i32 or i64 of data's rank (1 to %d)", MAX_RANK - 1);
		return false;
	}
	int64_t axis = imp_attr_int(np, "axis", 0);
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
	const char *red = imp_attr_string(np, "reduction", "none", buf, sizeof buf);
	if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") && strcmp(red, "min")) {
		imp_fail(im, "attribute 'reduction' = \"%s\" is not one of none, add, mul, max, min", imp_q(im, red));
		return false;
	}
	Shape gs = *is;
	gs.dim[gs.rank++] = rank;
	if (!step_size_ok(im, DT_I64, &gs, "its coordinates"))
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
	Value *along = col ? step_binary(im, np, OP_MUL, col, uv, "along") : NULL;
	Value *coords = along ? step_binary(im, np, OP_ADD, along, gv, "coords") : NULL;
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

static bool import_int_pow(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "base"), *y = x ? imp_operand(im, np, 1, "exponent") : NULL;
	if (!y)
		return false;
	DType dt = x->type.dtype;
	Value *yi = step_cast(im, np, y, dt, "whole_exponent");
	Value *pi = yi ? step_binary(im, np, OP_POW, x, yi, "exact") : NULL;
	Value *xf = pi ? step_cast(im, np, x, DT_F32, "f32_base") : NULL;
	Value *pf = xf ? step_binary(im, np, OP_POW, xf, y, "f32_pow") : NULL;
	Value *ci = pf ? step_cast(im, np, pf, dt, "truncated") : NULL;
	Value *fl = ci ? step_unary(im, np, OP_FLOOR, y, "floor") : NULL;
	Value *whole = fl ? step_binary(im, np, OP_EQUAL, y, fl, "whole") : NULL;
	Value *in[3] = {whole, pi, ci};
	return whole && imp_finish(im, imp_step(im, np, OP_WHERE, in, 3, NULL), np);
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ------------------------------ */
/* loss = -x[n, t, d...] (times weight[t]) as gather_elements along the
 * classes; an ignore_index position gives 0 and leaves the mean's
 * denominator (the sum of the weights taken, or the count). */
static Value *nll_of(Imp *im, const Onnx__NodeProto *np, Value *x, Value *t, Value *w, bool last)
{
	char buf[8];
	const char *red = imp_attr_string(np, "reduction", "mean", buf, sizeof buf);
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
	if (t->type.dtype != DT_I64 && !(tc = step_cast(im, np, t, DT_I64, "target")))
		return NULL;
	if (ia) {
		Shape s0 = {0};
		Tensor *iv = tensor_new(DT_I64, &s0), *zero = tensor_new(DT_I64, &s0);
		((int64_t *)iv->data)[0] = ia->i;
		Value *ic = imp_const(im, np, "ignore_index", iv);
		Value *zc = ic ? imp_const(im, np, "zero", zero) : (tensor_free(zero), NULL);
		Value *eq = zc ? step_binary(im, np, OP_EQUAL, tc, ic, "ignored") : NULL;
		Value *keep = eq ? step_unary(im, np, OP_NOT, eq, "kept") : NULL;
		Value *win[3] = {keep, tc, zc};
		Value *t2 = keep ? imp_done(im, imp_step(im, np, OP_WHERE, win, 3, "class")) : NULL;
		mf = t2 ? step_cast(im, np, keep, DT_F32, "kept_f32") : NULL;
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
		den = wt && mf ? step_binary(im, np, OP_MUL, wt, mf, "weights_kept") : wt;
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
		Value *nl = step_unary(im, np, OP_NEG, l, "negated");
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
	Value *x = imp_operand(im, np, 0, "input"), *t = x ? imp_operand(im, np, 1, "target") : NULL, *w = NULL;
	if (!t)
		return false;
	if (imp_input_name(np, 2) && !(w = imp_operand(im, np, 2, "weight")))
		return false;
	return nll_of(im, np, x, t, w, true) != NULL;
}

/* log_softmax along the classes, then the NLL of it; result 2, when
 * named, the log-probabilities */
static bool import_sce(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "scores"), *t = x ? imp_operand(im, np, 1, "labels") : NULL, *w = NULL;
	if (!t)
		return false;
	if (imp_input_name(np, 2) && !(w = imp_operand(im, np, 2, "weights")))
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
	Value *x = imp_operand(im, np, 0, "input"), *ix = x ? imp_operand(im, np, 1, "indices") : NULL;
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
	if (!imp_attr_ints(im, np, "kernel_shape", ns, k, &has_k) || !imp_attr_ints(im, np, "strides", ns, st, &has_s) ||
	    !imp_attr_ints(im, np, "pads", 2 * ns, pads, &has_p))
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
		if (!step_size_ok(im, x->type.dtype, &want, "its output_shape"))
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
	if (!step_size_ok(im, x->type.dtype, &os, "its result"))
		return false;
	int64_t total = shape_numel(&os), n = shape_numel(xs), one = 1;
	Node *zn = imp_step(im, np, OP_CONSTANT_OF_SHAPE, NULL, 0, "zeros");
	if (zn) {
		node_set_ints(zn, "shape", &total, 1);
		node_set_dtype(zn, "dtype", x->type.dtype);
	}
	Value *zv = imp_done(im, zn);
	int64_t is[2] = {n, one};
	Value *iv = zv ? step_reshape(im, np, ix, is, 2, "positions") : NULL;
	Value *uv = iv ? step_reshape(im, np, x, &n, 1, "values") : NULL;
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
	Value *x = imp_operand(im, np, 0, "input");
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
	if (!fv || !step_last_binary(im, np, OP_MUL, x, fv)) {
		tensor_free(mask);
		return false;
	}
	if (mask) {
		Value *mv = imp_const(im, np, "mask", mask);
		return mv && imp_bind(im, np->output[1], mv);
	}
	return true;
}

/* ---- Compress ------------------------------------------------------------------------- */
/* A `gather` along axis (no axis: of the flattened input) at the positions
 * the condition selects, which must be known when compiling: a constant, or
 * an input given a value (--bind, run's --input, the test data): it decides
 * the result's shape.  Positions past the condition's length are dropped. */
static bool import_compress(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "input");
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
	Value *data = aa ? x : step_reshape(im, np, x, &len, 1, "flat");
	Value *in[2] = {data, imp_const(im, np, "selected", idx)};
	Node *g = in[0] && in[1] ? imp_step(im, np, OP_GATHER, in, 2, NULL) : NULL;
	if (g)
		node_set_int(g, "axis", axis);
	return imp_finish(im, g, np);
}

/* ---- Det ------------------------------------------------------------------------------ */
/* The determinant of [..., n, n] by the Leibniz formula: a `gather` of the n
 * entries of each of the n! permutations from the flattened matrices, their
 * `reduce_prod`, times the permutation's sign, `reduce_sum`med.  n <= 5
 * (120 products of 5): beyond, LU with pivoting would be needed. */
enum { DET_MAX = 5 };

static bool import_det(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "input");
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
	Value *flat = step_reshape(im, np, x, dims, r - 1, "entries");
	Value *gin[2] = {flat, imp_const(im, np, "permutations", idx)};
	Node *g = flat && gin[1] ? imp_step(im, np, OP_GATHER, gin, 2, "terms") : NULL;
	if (g)
		node_set_int(g, "axis", r - 2);
	dims[r - 2] = nperm, dims[r - 1] = n;
	Value *terms = step_reshape(im, np, imp_done(im, g), dims, r, "terms");
	int64_t last = -1;
	Node *pr = terms ? imp_step(im, np, OP_REDUCE_PROD, &terms, 1, "products") : NULL;
	if (pr) {
		node_set_ints(pr, "axes", &last, 1);
		node_set_int(pr, "keepdims", 0);
	}
	Value *signed_ = step_binary(im, np, OP_MUL, imp_done(im, pr), imp_const(im, np, "signs", sign), "signed");
	Node *sum = signed_ ? imp_step(im, np, OP_REDUCE_SUM, &signed_, 1, NULL) : NULL;
	if (sum) {
		node_set_ints(sum, "axes", &last, 1);
		node_set_int(sum, "keepdims", 0);
	}
	return imp_finish(im, sum, np);
}

/* ---- CumSum ----------------------------------------------------------------------------- */
/* x shifted by k along axis: k zeros in front, the last k cut (a `pad`). */
static Value *shifted(Imp *im, const Onnx__NodeProto *np, Value *x, int axis, int64_t k, const char *what)
{
	int rank = x->type.shape.rank;
	int64_t pads[2 * MAX_RANK] = {0};
	pads[axis] = k;
	pads[rank + axis] = -k;
	Node *n = imp_step(im, np, OP_PAD, &x, 1, what);
	if (n)
		node_set_ints(n, "pads", pads, 2 * rank);
	return imp_done(im, n);
}

/* x with its axis reversed: a `slice` with step -1. */
static Value *reversed(Imp *im, const Onnx__NodeProto *np, Value *x, int axis, const char *what)
{
	int64_t start = -1, end = INT64_MIN, ax = axis, step = -1;
	Node *n = x ? imp_step(im, np, OP_SLICE, &x, 1, what) : NULL;
	if (n) {
		node_set_ints(n, "starts", &start, 1);
		node_set_ints(n, "ends", &end, 1);
		node_set_ints(n, "axes", &ax, 1);
		node_set_ints(n, "steps", &step, 1);
	}
	return imp_done(im, n);
}

static bool import_cumsum(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "input");
	int64_t axis;
	if (!x || !imp_input_name(np, 1)) {
		if (x)
			imp_fail(im, "its axis (input 2) is missing");
		return false;
	}
	if (!imp_known_int(im, np, 1, "axis", 0, &axis))
		return false;
	DType dt = x->type.dtype;
	int rank = x->type.shape.rank;
	if (dt != DT_F32 && dt != DT_I32 && dt != DT_I64) {
		imp_fail(im, "its input is %s: CumSum sums f32, i32 or i64", dtype_name(dt));
		return false;
	}
	if (axis < -rank || axis >= rank) {
		imp_fail(im, "its axis %" PRId64 " is out of range for rank %d", axis, rank);
		return false;
	}
	int a = (int)(axis < 0 ? axis + rank : axis);
	int64_t n = x->type.shape.dim[a];
	bool exclusive = imp_attr_int(np, "exclusive", 0) != 0, reverse = imp_attr_int(np, "reverse", 0) != 0;
	Value *y = x;
	if (n > 0) {
		if (reverse)
			y = reversed(im, np, y, a, "reversed");
		if (y && exclusive)
			y = shifted(im, np, y, a, 1, "exclusive");
		/* the inclusive scan (Hillis and Steele): after the step of k, y[i]
		 * is the sum of the 2k elements up to i */
		char shift[32], scan[32];
		for (int64_t k = 1; y && k < n; k *= 2) {
			snprintf(shift, sizeof shift, "shift%" PRId64, k);
			snprintf(scan, sizeof scan, "scan%" PRId64, k);
			y = step_binary(im, np, OP_ADD, y, shifted(im, np, y, a, k, shift), scan);
		}
		if (y && reverse)
			y = reversed(im, np, y, a, "unreversed");
	}
	return y && imp_finish(im, imp_step(im, np, OP_IDENTITY, &y, 1, NULL), np);
}

/* ---- the dispatch ------------------------------------------------------------------------ */
static const struct {
	const char *op;
	bool (*translate)(Imp *im, const Onnx__NodeProto *np);
} composed[] = {
	{"Resize", compose_resize},
	{"Upsample", compose_resize},
	{"GridSample", compose_grid_sample},
	{"RoiAlign", compose_roi_align},
	{"ConvTranspose", import_conv_transpose},
	{"InstanceNormalization", import_instancenorm},
	{"MeanVarianceNormalization", import_mvn},
	{"LRN", import_lrn},
	{"NegativeLogLikelihoodLoss", import_nll},
	{"SoftmaxCrossEntropyLoss", import_sce},
	{"MaxUnpool", import_maxunpool},
	{"ScatterElements", import_scatter_elements},
	{"Scatter", import_scatter_elements},
	{"Compress", import_compress},
	{"Det", import_det},
	{"CumSum", import_cumsum},
	{"Einsum", compose_einsum},
	{"RNN", compose_rnn},
	{"GRU", compose_rnn},
	{"LSTM", compose_rnn},
	{"ReverseSequence", compose_reverse_sequence},
	{"HannWindow", compose_window},
	{"HammingWindow", compose_window},
	{"BlackmanWindow", compose_window},
	{"DFT", compose_dft},
	{"STFT", compose_stft},
	{"MelWeightMatrix", compose_mel_weight_matrix},
};

bool onnx_compose(Imp *im, const Onnx__NodeProto *np, bool *ok)
{
	const char *op = np->op_type;
	if (strcmp(op, "Dropout") == 0) {
		/* training mode only (else the `dropout` op, in onnx.c) */
		double ratio;
		int train = training_dropout(im, np, &ratio);
		if (train)
			*ok = train > 0 && import_training_dropout(im, np, ratio);
		return train != 0;
	}
	if (strcmp(op, "Pow") == 0) {
		/* an integer base with an f32 exponent only */
		if (!is_int_pow(im, np))
			return false;
		*ok = import_int_pow(im, np);
		return true;
	}
	for (size_t i = 0; i < sizeof composed / sizeof composed[0]; i++)
		if (strcmp(op, composed[i].op) == 0) {
			*ok = composed[i].translate(im, np);
			return true;
		}
	return false;
}
