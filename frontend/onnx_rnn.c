/* ONNX recurrences (see onnx_compose.h).
 *
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
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_compose.h"
#include "ops.h"
#include "util.h"

/* ---- RNN, GRU, LSTM ---------------------------------------------------------------- */
/* The `index`-th of a weight tensor's directions ([dirs, rest...]) as
 * [rest...]. */
static Value *rn_direction(Imp *im, const Onnx__NodeProto *np, Value *x, int index, const char *what)
{
	if (!x)
		return NULL;
	const Shape *s = &x->type.shape;
	Value *one = step_slice(im, np, x, 0, index, index + 1, what);
	return step_reshape(im, np, one, s->dim + 1, s->rank - 1, what);
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
	case A_SIGMOID: return step_unary(im, np, OP_SIGMOID, x, what);
	case A_TANH: return step_unary(im, np, OP_TANH, x, what);
	case A_RELU: return step_unary(im, np, OP_RELU, x, what);
	case A_SOFTSIGN: return step_unary(im, np, OP_SOFTSIGN, x, what);
	case A_SOFTPLUS: return step_unary(im, np, OP_SOFTPLUS, x, what);
	case A_SCALED_TANH: {
		Value *bx = step_binary(im, np, OP_MUL, x, step_scalar(im, np, DT_F32, a->beta, "act_beta"), what);
		return step_binary(im, np, OP_MUL, step_unary(im, np, OP_TANH, bx, what), step_scalar(im, np, DT_F32, a->alpha, "act_alpha"),
			      what);
	}
	case A_AFFINE: {
		Value *ax = step_binary(im, np, OP_MUL, x, step_scalar(im, np, DT_F32, a->alpha, "act_alpha"), what);
		return step_binary(im, np, OP_ADD, ax, step_scalar(im, np, DT_F32, a->beta, "act_beta"), what);
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

bool compose_rnn(Imp *im, const Onnx__NodeProto *np)
{
	const char *op = np->op_type;
	int kind = strcmp(op, "LSTM") == 0 ? RNN_LSTM : strcmp(op, "GRU") == 0 ? RNN_GRU : RNN_PLAIN;
	int G = kind == RNN_LSTM ? 4 : kind == RNN_GRU ? 3 : 1, nact = kind == RNN_LSTM ? 3 : kind == RNN_GRU ? 2 : 1;
	size_t max_in = kind == RNN_LSTM ? 8 : 6, max_out = kind == RNN_LSTM ? 3 : 2;
	if (np->n_input > max_in || np->n_output > max_out) {
		imp_fail(im, "it takes at most %zu inputs and %zu outputs (it has %zu and %zu)", max_in, max_out, np->n_input,
			 np->n_output);
		return false;
	}
	Value *X = imp_operand(im, np, 0, "input X"), *W = X ? imp_operand(im, np, 1, "weights W") : NULL,
	      *R = W ? imp_operand(im, np, 2, "recurrence weights R") : NULL;
	if (!R)
		return false;
	static const char *const opt_what[] = {"", "", "", "bias B", "sequence_lens", "initial_h", "initial_c", "peepholes P"};
	Value *opt[8] = {NULL};
	for (size_t i = 3; i < np->n_input; i++)
		if (imp_input_name(np, i) && !(opt[i] = imp_value(im, imp_input_name(np, i), opt_what[i])))
			return false;
	Value *B = opt[3], *lens = opt[4], *h0 = opt[5], *c0 = opt[6], *P = opt[7];
	char dbuf[32];
	const char *dir = imp_attr_string(np, "direction", "forward", dbuf, sizeof dbuf);
	int dirs = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
	if (dirs == 1 && strcmp(dir, "forward") != 0 && strcmp(dir, "reverse") != 0) {
		imp_fail(im, "direction '%s' is not forward, reverse or bidirectional", imp_q(im, dir));
		return false;
	}
	int64_t layout = imp_attr_int(np, "layout", 0);
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
	int64_t H = imp_attr_int(np, "hidden_size", R->type.shape.dim[2]);
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
	bool lbr = kind == RNN_GRU && imp_attr_int(np, "linear_before_reset", 0) != 0;
	bool couple = kind == RNN_LSTM && imp_attr_int(np, "input_forget", 0) != 0;
	Act acts[6];
	if (!rnn_activations(im, np, nact, dirs, acts))
		return false;
	if (!step_size_ok(im, DT_F32, &(Shape){2, {seq * batch, GH}}, "its input projection"))
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
	Value *lens2 = lens ? step_reshape(im, np, lens, (int64_t[]){batch, 1}, 2, "lengths") : NULL;
	if (lens && !lens2)
		return false;

	if (layout) {
		X = step_transpose(im, np, X, (int64_t[]){1, 0, 2}, 3, "time_major");
		h0 = h0 ? step_transpose(im, np, h0, (int64_t[]){1, 0, 2}, 3, "initial_h") : NULL;
		c0 = c0 ? step_transpose(im, np, c0, (int64_t[]){1, 0, 2}, 3, "initial_c") : NULL;
	}
	Value *X2 = step_reshape(im, np, X, (int64_t[]){seq * batch, I}, 2, "rows");
	Shape zs = {2, {batch, H}};
	Value *zeros = imp_const(im, np, "zeros", tensor_new(DT_F32, &zs));
	Value *one = step_scalar(im, np, DT_F32, 1.0, "one");
	bool want_y = np->n_output > 0 && np->output[0][0];
	Value **ys = xcalloc((size_t)(seq * dirs), sizeof *ys);
	Value *yh[2] = {NULL, NULL}, *yc[2] = {NULL, NULL};
	bool ok = X2 && zeros && one;
	for (int d = 0; ok && d < dirs; d++) {
		bool reverse = d == 1 || strcmp(dir, "reverse") == 0;
		Value *Wd = rn_direction(im, np, W, d, "W"), *Rd = rn_direction(im, np, R, d, "R");
		Value *xw = step_matmul_t(im, np, X2, Wd, "input_projection");
		Value *rbh = NULL; /* GRU, linear_before_reset: Rb's h part, added to H R_h^T */
		if (B) {
			Value *Bd = rn_direction(im, np, B, d, "B");
			Value *wb = step_slice(im, np, Bd, 0, 0, GH, "Wb"), *rb = step_slice(im, np, Bd, 0, GH, 2 * GH, "Rb");
			Value *bias;
			if (lbr) {
				Value *zr = step_binary(im, np, OP_ADD, step_slice(im, np, wb, 0, 0, 2 * H, "Wb_zr"),
						   step_slice(im, np, rb, 0, 0, 2 * H, "Rb_zr"), "bias_zr");
				Value *parts[2] = {zr, step_slice(im, np, wb, 0, 2 * H, 3 * H, "Wb_h")};
				bias = step_concat(im, np, parts, 2, 0, "bias");
				rbh = step_slice(im, np, rb, 0, 2 * H, 3 * H, "Rb_h");
				ok &= rbh != NULL;
			} else
				bias = step_binary(im, np, OP_ADD, wb, rb, "bias");
			xw = step_binary(im, np, OP_ADD, xw, bias, "input_projection");
		}
		xw = step_reshape(im, np, xw, (int64_t[]){seq, batch, GH}, 3, "input_projection");
		Value *Rzr = NULL, *Rh = NULL; /* GRU without linear_before_reset: (r H) R_h^T apart */
		if (kind == RNN_GRU && !lbr) {
			Rzr = step_slice(im, np, Rd, 0, 0, 2 * H, "R_zr");
			Rh = step_slice(im, np, Rd, 0, 2 * H, 3 * H, "R_h");
			ok &= Rzr && Rh;
		}
		Value *pi = NULL, *po = NULL, *pf = NULL;
		if (P) {
			Value *Pd = rn_direction(im, np, P, d, "P");
			pi = step_slice(im, np, Pd, 0, 0, H, "P_i");
			po = step_slice(im, np, Pd, 0, H, 2 * H, "P_o");
			pf = step_slice(im, np, Pd, 0, 2 * H, 3 * H, "P_f");
			ok &= pi && po && pf;
		}
		Value *h = h0 ? rn_direction(im, np, h0, d, "initial_h") : zeros;
		Value *c = kind != RNN_LSTM ? NULL : c0 ? rn_direction(im, np, c0, d, "initial_c") : zeros;
		ok &= xw && h && (kind != RNN_LSTM || c);
		const Act *f = &acts[d * nact], *g = &acts[d * nact + (nact > 1)], *hact = &acts[d * nact + (nact > 2) * 2];
		for (int64_t s = 0; ok && s < seq; s++) {
			int64_t t = reverse ? seq - 1 - s : s;
			Value *xt = step_reshape(im, np, step_slice(im, np, xw, 0, t, t + 1, "x_t"), (int64_t[]){batch, GH}, 2, "x_t");
			Value *hn = NULL, *cn = NULL;
#define CLIP(v) (clip_a ? step_clip(im, np, (v), -clip, clip, "clip") : (v))
			if (kind == RNN_PLAIN) {
				Value *gates = step_binary(im, np, OP_ADD, xt, step_matmul_t(im, np, h, Rd, "recurrence"), "gates");
				hn = rn_act(im, np, f, CLIP(gates), "h");
			} else if (kind == RNN_LSTM) {
				Value *gates = step_binary(im, np, OP_ADD, xt, step_matmul_t(im, np, h, Rd, "recurrence"), "gates");
				Value *gi = step_slice(im, np, gates, 1, 0, H, "gate_i"), *go = step_slice(im, np, gates, 1, H, 2 * H, "gate_o"),
				      *gf = step_slice(im, np, gates, 1, 2 * H, 3 * H, "gate_f"),
				      *gc = step_slice(im, np, gates, 1, 3 * H, 4 * H, "gate_c");
				if (P) {
					gi = step_binary(im, np, OP_ADD, gi, step_binary(im, np, OP_MUL, pi, c, "peephole_i"), "gate_i");
					gf = step_binary(im, np, OP_ADD, gf, step_binary(im, np, OP_MUL, pf, c, "peephole_f"), "gate_f");
				}
				Value *i = rn_act(im, np, f, CLIP(gi), "i");
				Value *fg = couple ? step_binary(im, np, OP_SUB, one, i, "f") : rn_act(im, np, f, CLIP(gf), "f");
				Value *cc = rn_act(im, np, g, CLIP(gc), "c_candidate");
				cn = step_binary(im, np, OP_ADD, step_binary(im, np, OP_MUL, fg, c, "c_kept"), step_binary(im, np, OP_MUL, i, cc, "c_new"), "c");
				if (P)
					go = step_binary(im, np, OP_ADD, go, step_binary(im, np, OP_MUL, po, cn, "peephole_o"), "gate_o");
				Value *o = rn_act(im, np, f, CLIP(go), "o");
				hn = step_binary(im, np, OP_MUL, o, rn_act(im, np, hact, cn, "c_out"), "h");
			} else {
				Value *rec = step_matmul_t(im, np, h, lbr ? Rd : Rzr, "recurrence");
				Value *zr = step_binary(im, np, OP_ADD, step_slice(im, np, xt, 1, 0, 2 * H, "x_zr"),
						   lbr ? step_slice(im, np, rec, 1, 0, 2 * H, "rec_zr") : rec, "gates_zr");
				Value *z = rn_act(im, np, f, CLIP(step_slice(im, np, zr, 1, 0, H, "gate_z")), "z");
				Value *r = rn_act(im, np, f, CLIP(step_slice(im, np, zr, 1, H, 2 * H, "gate_r")), "r");
				Value *xh = step_slice(im, np, xt, 1, 2 * H, 3 * H, "x_h"), *gh;
				if (lbr) {
					Value *rh = step_slice(im, np, rec, 1, 2 * H, 3 * H, "rec_h");
					if (rbh)
						rh = step_binary(im, np, OP_ADD, rh, rbh, "rec_h");
					gh = step_binary(im, np, OP_ADD, xh, step_binary(im, np, OP_MUL, r, rh, "reset"), "gate_h");
				} else
					gh = step_binary(im, np, OP_ADD, xh,
						    step_matmul_t(im, np, step_binary(im, np, OP_MUL, r, h, "reset"), Rh, "rec_h"), "gate_h");
				Value *hc = rn_act(im, np, g, CLIP(gh), "h_candidate");
				hn = step_binary(im, np, OP_ADD, step_binary(im, np, OP_MUL, step_binary(im, np, OP_SUB, one, z, "1-z"), hc, "h_new"),
					    step_binary(im, np, OP_MUL, z, h, "h_kept"), "h");
			}
#undef CLIP
			Value *yt = hn;
			if (lens2) {
				/* past its length a batch entry keeps its state, and its output is 0 */
				Value *in[3] = {step_binary(im, np, OP_LESS, step_scalar(im, np, lens->type.dtype, (double)t, "t"), lens2, "running"),
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
				ys[t * dirs + d] = step_reshape(im, np, yt, (int64_t[]){1, 1, batch, H}, 4, "y_t");
		}
		yh[d] = step_reshape(im, np, h, (int64_t[]){1, batch, H}, 3, "y_h");
		if (kind == RNN_LSTM)
			yc[d] = step_reshape(im, np, c, (int64_t[]){1, batch, H}, 3, "y_c");
		ok &= yh[d] && (kind != RNN_LSTM || yc[d]);
	}
	/* Y [seq, dirs, batch, H], Y_h and Y_c [dirs, batch, H]; layout 1:
	 * [batch, seq, dirs, H] and [batch, dirs, H] */
	Value *out[3] = {NULL, NULL, NULL};
	if (ok && want_y) {
		Value **rows = xcalloc((size_t)seq, sizeof *rows);
		for (int64_t t = 0; t < seq; t++)
			rows[t] = step_concat(im, np, ys + t * dirs, dirs, 1, "y_t");
		out[0] = step_concat(im, np, rows, (int)seq, 0, "Y");
		free(rows);
		if (layout)
			out[0] = step_transpose(im, np, out[0], (int64_t[]){2, 0, 1, 3}, 4, "Y");
		ok &= out[0] != NULL;
	}
	free(ys);
	for (int k = 1; ok && k < (kind == RNN_LSTM ? 3 : 2); k++) {
		out[k] = step_concat(im, np, k == 1 ? yh : yc, dirs, 0, k == 1 ? "Y_h" : "Y_c");
		if (layout)
			out[k] = step_transpose(im, np, out[k], (int64_t[]){1, 0, 2}, 3, k == 1 ? "Y_h" : "Y_c");
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
bool compose_reverse_sequence(Imp *im, const Onnx__NodeProto *np)
{
	Value *x = imp_operand(im, np, 0, "input"), *lens = x ? imp_operand(im, np, 1, "sequence_lens") : NULL;
	if (!lens)
		return false;
	const Shape *xs = &x->type.shape;
	int64_t ba = imp_attr_int(np, "batch_axis", 1), ta = imp_attr_int(np, "time_axis", 0);
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
	Value *L = step_reshape(im, np, lt == DT_I64 ? lens : step_cast(im, np, lens, DT_I64, "lengths"), ls.dim, 2, "lengths");
	Value *rev = step_binary(im, np, OP_SUB, step_binary(im, np, OP_SUB, L, step_scalar(im, np, DT_I64, 1, "one"), "last"), pos,
			    "reversed");
	Value *in[3] = {step_binary(im, np, OP_LESS, pos, L, "inside"), rev, pos};
	Value *idx = in[0] && rev && pos ? imp_done(im, imp_step(im, np, OP_WHERE, in, 3, "positions")) : NULL;
	int64_t one[MAX_RANK];
	for (int i = 0; i < xs->rank; i++)
		one[i] = i < 2 ? ps.dim[i] * ls.dim[i] : 1;
	idx = step_reshape(im, np, idx, one, xs->rank, "positions");
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
