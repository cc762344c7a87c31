/* The ONNX ops gdcc translates into several of its own ops, so that every
 * target runs them with kernels it already has; what each becomes is
 * told at the top of the file that translates it:
 *
 *   onnx_compose.c   the dispatch (onnx_compose, in onnx_imp.h), and
 *                    ConvTranspose, InstanceNormalization,
 *                    MeanVarianceNormalization, LRN, ScatterElements,
 *                    integer Pow, NegativeLogLikelihoodLoss,
 *                    SoftmaxCrossEntropyLoss, MaxUnpool, training-mode
 *                    Dropout, Compress, Det, CumSum
 *   onnx_sample.c    Resize, Upsample, GridSample, RoiAlign
 *   onnx_rnn.c       RNN, GRU, LSTM, ReverseSequence
 *   onnx_signal.c    Hann/Hamming/BlackmanWindow, DFT, STFT, MelWeightMatrix
 *   onnx_einsum.c    Einsum
 *   onnx_steps.c     the steps they share (below)
 */
#ifndef GDCC_ONNX_COMPOSE_H
#define GDCC_ONNX_COMPOSE_H

#include "onnx_imp.h"

/* ---- reading the ONNX node (onnx_steps.c) ---- */
/* A STRING attribute (absent or not a string: def) in buf[size] (size >= 4);
 * one that does not fit ends in "..." and so matches no value gdcc knows. */
const char *imp_attr_string(const Onnx__NodeProto *np, const char *name, const char *def, char *buf, size_t size);
int64_t imp_attr_int(const Onnx__NodeProto *np, const char *name, int64_t def);
double imp_attr_float(const Onnx__NodeProto *np, const char *name, double def);
/* An INTS attribute of exactly `want` entries (absent: *present false). */
bool imp_attr_ints(Imp *im, const Onnx__NodeProto *np, const char *name, int want, int64_t *out, bool *present);
/* Input i's value; NULL, after an error naming `what`, when absent or undefined. */
Value *imp_operand(Imp *im, const Onnx__NodeProto *np, size_t i, const char *what);
/* Input i as one integer known when compiling (absent: def). */
bool imp_known_int(Imp *im, const Onnx__NodeProto *np, size_t i, const char *what, int64_t def, int64_t *v);

/* ---- adding gdcc nodes (onnx_steps.c) ----
 * Each is a step named `what` (see imp_step); given a NULL operand it adds
 * nothing and gives NULL. */
/* A tensor the translation makes (a constant, or a result it sizes itself)
 * is within gdcc's limits: false after the message. */
bool step_size_ok(Imp *im, DType dt, const Shape *s, const char *what);
Value *step_unary(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *x, const char *what);
Value *step_binary(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *a, Value *b, const char *what);
/* The translation's last node, op(a, b), taking the ONNX result's name. */
bool step_last_binary(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *a, Value *b);
Value *step_reshape(Imp *im, const Onnx__NodeProto *np, Value *x, const int64_t *shape, int rank, const char *what);
Value *step_cast(Imp *im, const Onnx__NodeProto *np, Value *x, DType to, const char *what);
/* x[start:end] along axis. */
Value *step_slice(Imp *im, const Onnx__NodeProto *np, Value *x, int64_t axis, int64_t start, int64_t end,
		  const char *what);
Value *step_transpose(Imp *im, const Onnx__NodeProto *np, Value *x, const int64_t *perm, int rank, const char *what);
/* a [m, k] times b^T (b [n, k]). */
Value *step_matmul_t(Imp *im, const Onnx__NodeProto *np, Value *a, Value *b, const char *what);
/* in[0..nin) along axis (one operand: itself). */
Value *step_concat(Imp *im, const Onnx__NodeProto *np, Value **in, int nin, int64_t axis, const char *what);
/* x clipped to [lo, hi]. */
Value *step_clip(Imp *im, const Onnx__NodeProto *np, Value *x, double lo, double hi, const char *what);
/* A constant [1] of dtype dt holding v. */
Value *step_scalar(Imp *im, const Onnx__NodeProto *np, DType dt, double v, const char *what);

/* ---- the translations in their own files: true when they succeeded ---- */
bool compose_resize(Imp *im, const Onnx__NodeProto *np); /* Resize, Upsample */
bool compose_grid_sample(Imp *im, const Onnx__NodeProto *np);
bool compose_roi_align(Imp *im, const Onnx__NodeProto *np);
bool compose_rnn(Imp *im, const Onnx__NodeProto *np); /* RNN, GRU, LSTM */
bool compose_reverse_sequence(Imp *im, const Onnx__NodeProto *np);
bool compose_window(Imp *im, const Onnx__NodeProto *np); /* Hann-, Hamming-, BlackmanWindow */
bool compose_dft(Imp *im, const Onnx__NodeProto *np);
bool compose_stft(Imp *im, const Onnx__NodeProto *np);
bool compose_mel_weight_matrix(Imp *im, const Onnx__NodeProto *np);
bool compose_einsum(Imp *im, const Onnx__NodeProto *np);

#endif
