/* ONNX signal-processing ops (see onnx_compose.h).
 *
 *   Hann/Hamming/BlackmanWindow  constants of the size (known when compiling).
 *   MelWeightMatrix    a constant of its parameters (known when compiling), as
 *                      the ONNX reference computes it.
 *   DFT, STFT          the axis moved last, re and im by `matmul`s with
 *                      constant cos and sin matrices (double, the inverse's
 *                      1/N in them), cut or zero-padded to dft_length;
 *                      STFT's frames a `gather` of constant positions, times
 *                      the window.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_compose.h"
#include "ops.h"
#include "util.h"

/* ---- window functions ------------------------------------------------------------------ */
/* Hann, Hamming, Blackman: constants of the size given (known when
 * compiling), in double as the ONNX reference, as f32. */
bool compose_window(Imp *im, const Onnx__NodeProto *np)
{
	const char *op = np->op_type;
	int kind = strcmp(op, "HannWindow") == 0 ? 0 : strcmp(op, "HammingWindow") == 0 ? 1 : 2;
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
	if (imp_attr_int(np, "output_datatype", 1) != 1) {
		imp_fail(im, "output_datatype %" PRId64 " is not supported (f32: 1)", imp_attr_int(np, "output_datatype", 1));
		return false;
	}
	bool periodic = imp_attr_int(np, "periodic", 1) != 0;
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
	if (!step_size_ok(im, DT_F32, &(Shape){2, {N, K}}, "its DFT matrix"))
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
		Value *p = step_slice(im, np, x, r - 1, c, c + 1, c ? "imag" : "real");
		p = step_reshape(im, np, p, s->dim, r - 1, c ? "imag" : "real");
		if (axis != r - 2)
			p = step_transpose(im, np, p, perm, r - 1, c ? "imag" : "real");
		if (p && n > N)
			p = step_slice(im, np, p, r - 2, 0, N, "cut");
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
	Value *re = step_binary(im, np, OP_MATMUL, part[0], C, "re"), *imv = step_binary(im, np, OP_MATMUL, part[0], S, "im");
	if (complex) {
		re = step_binary(im, np, OP_SUB, re, step_binary(im, np, OP_MATMUL, part[1], S, "im_sin"), "re");
		imv = step_binary(im, np, OP_ADD, imv, step_binary(im, np, OP_MATMUL, part[1], C, "im_cos"), "im");
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
			outs[c] = step_transpose(im, np, outs[c], inv, r - 1, c ? "im" : "re");
		outs[c] = step_reshape(im, np, outs[c], odims, r, c ? "im" : "re");
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

bool compose_dft(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "input");
	if (!x)
		return false;
	const Shape *s = &x->type.shape;
	int r = s->rank;
	if (x->type.dtype != DT_F32 || r < 2 || (s->dim[r - 1] != 1 && s->dim[r - 1] != 2)) {
		imp_fail(im, "its input must be f32 [..., 1] (real) or [..., 2] (complex)");
		return false;
	}
	int64_t axis = imp_attr_int(np, "axis", 1);
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r - 1) {
		imp_fail(im, "its axis %" PRId64 " is not one of the input's first %d", imp_attr_int(np, "axis", 1), r - 1);
		return false;
	}
	bool inverse = imp_attr_int(np, "inverse", 0) != 0, onesided = imp_attr_int(np, "onesided", 0) != 0;
	if (inverse && onesided) {
		imp_fail(im, "inverse and onesided together are not defined");
		return false;
	}
	int64_t N;
	if (!imp_known_int(im, np, 1, "dft_length", s->dim[axis], &N))
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
bool compose_stft(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "signal");
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
	if (!imp_known_int(im, np, 1, "frame_step", 0, &step) ||
	    !imp_known_int(im, np, 3, "frame_length", w ? w->type.shape.dim[0] : 0, &flen))
		return false;
	if (!imp_input_name(np, 1) || step < 1 || flen < 1 || flen > s->dim[1] || (w && w->type.shape.dim[0] != flen)) {
		imp_fail(im, "its frame_step (%" PRId64 ") and frame_length (%" PRId64 ") must be positive, the frame no longer "
			 "than the signal (%" PRId64 ") and the window's length", step, flen, s->dim[1]);
		return false;
	}
	int64_t frames = (s->dim[1] - flen) / step + 1;
	Shape is = {2, {frames, flen}};
	if (!step_size_ok(im, DT_I64, &is, "its frame positions"))
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
		fr = step_binary(im, np, OP_MUL, fr, step_reshape(im, np, w, (int64_t[]){flen, 1}, 2, "window"), "windowed");
	bool onesided = imp_attr_int(np, "onesided", 1) != 0;
	return fr && dft_of(im, np, fr, 2, flen, false, onesided && s->dim[2] == 1, true);
}

/* ---- MelWeightMatrix -------------------------------------------------------------------- */
/* A constant [dft_length / 2 + 1, num_mel_bins] of its parameters, known
 * when compiling, as the ONNX reference computes it: num_mel_bins + 2
 * points evenly spaced in mel (the edges and the step in f32, as the
 * reference's f32 scalars), as DFT bins ((dft_length + 1) f // sample_rate),
 * and a triangle per mel bin between its neighbours. */
bool compose_mel_weight_matrix(Imp *im, const Onnx__NodeProto *np)
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
	if (imp_attr_int(np, "output_datatype", 1) != 1) {
		imp_fail(im, "output_datatype %" PRId64 " is not supported (f32: 1)", imp_attr_int(np, "output_datatype", 1));
		return false;
	}
	if (!step_size_ok(im, DT_F32, &(Shape){2, {K, M}}, "its result"))
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
