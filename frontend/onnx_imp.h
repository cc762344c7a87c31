/* Between the ONNX importer (onnx.c) and its translations of the ONNX ops
 * that become several gdcc nodes (onnx_compose.h: Resize, ConvTranspose,
 * RNN, Einsum, DFT and more).
 * A translation adds its steps with imp_step/imp_done, each named after
 * the ONNX node's result plus a suffix, and its last node with
 * imp_step(..., NULL), which takes the result's own name, then
 * imp_finish.  Values the ONNX op takes as inputs but gdcc needs when
 * compiling (scales, sizes, roi) are read with imp_ints/imp_floats. */
#ifndef GDCC_ONNX_IMP_H
#define GDCC_ONNX_IMP_H

#include "ir.h"
#include "onnx.pb-c.h"

typedef struct Imp Imp;

int imp_opset(const Imp *im);
void imp_fail(Imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An ONNX name for messages (escaped; valid until six more calls). */
const char *imp_q(Imp *im, const char *s);
const Onnx__AttributeProto *imp_attr(const Onnx__NodeProto *np, const char *name);
/* Input i of np when present (not absent, not ""). */
const char *imp_input_name(const Onnx__NodeProto *np, size_t i);
/* The value of ONNX name `name`, NULL (with an error naming `what`) when it is not defined. */
Value *imp_value(Imp *im, const char *name, const char *what);
/* v's value when known at import time (a constant, or folded), else NULL. */
const Tensor *imp_known(Imp *im, const Value *v);
/* The values of input `name` when known when compiling (or specialized to
 * the test data): NULL after an error naming `what`; *n their count. */
int64_t *imp_ints(Imp *im, const char *name, int *n, const char *what);
double *imp_floats(Imp *im, const char *name, int *n, const char *what);
/* A node of the translation: `what` NULL gives it np's first result's
 * name (the last node), else that name + "." + what.  Set its attributes,
 * then imp_done (a step) or imp_finish (the last). */
Node *imp_step(Imp *im, const Onnx__NodeProto *np, OpKind op, Value **in, int nin, const char *what);
/* A step whose result takes the ONNX name `name` (made an IR name): a
 * translation's node for one of several results. */
Node *imp_step_named(Imp *im, OpKind op, Value **in, int nin, const char *name);
/* Type a step: its first result, NULL after an error. */
Value *imp_done(Imp *im, Node *n);
bool imp_finish(Imp *im, Node *n, const Onnx__NodeProto *np);
/* Bind ONNX name `name` (a result of the node) to v. */
bool imp_bind(Imp *im, const char *name, Value *v);
/* A constant step holding t (taken). */
Value *imp_const(Imp *im, const Onnx__NodeProto *np, const char *what, Tensor *t);

/* onnx_compose.c: true when np's op is one of these (then *ok tells
 * whether its translation succeeded). */
bool onnx_compose(Imp *im, const Onnx__NodeProto *np, bool *ok);

#endif
