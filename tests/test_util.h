/* Helpers shared by the Criterion tests: build and run small graphs,
 * compare tensors with hand-computed values. */
#ifndef GDCC_TEST_UTIL_H
#define GDCC_TEST_UTIL_H

#include <criterion/criterion.h>

#include "frontend.h"
#include "interp.h"
#include "ops.h"
#include "verify.h"

/* Parse model text (named "test.ir"); the Diag collects messages. */
Graph *t_parse(const char *text, Diag *d);
/* Parse and verify; fails the test (printing the messages) on error. */
Graph *t_model(const char *text);
/* Parse and verify, expecting failure; returns the Diag (caller frees with
 * diag_free) after asserting there was at least one error. */
void t_expect_errors(const char *text, Diag *d);
/* Assert that some error has `msg` in its text at line:col. */
void t_assert_error_at(const Diag *d, const char *msg, int line, int col);

/* A tensor from literal values: t_f32(2, (int64_t[]){2, 3}, (float[]){...}). */
Tensor *t_f32(int rank, const int64_t *dims, const float *vals);
Tensor *t_i64(int rank, const int64_t *dims, const int64_t *vals);
/* Run g on inputs (in input order); returns output `k`; fails on error. */
Tensor **t_run(const Graph *g, Tensor *const *inputs);
void t_free_outputs(const Graph *g, Tensor **outs);
/* Assert shape equality and |got - want| <= atol + rtol * |want| for each
 * element (NaN matches NaN, infinities must match exactly). */
void t_assert_close(const Tensor *got, int rank, const int64_t *dims, const float *want, double rtol,
		    double atol);
void t_assert_i64(const Tensor *got, int rank, const int64_t *dims, const int64_t *want);

/* Build a graph with inputs of the given types, one node of `op` with the
 * given attributes already set by the caller through the returned node,
 * results r0..r(nout-1) all outputs.  Verify with t_verify_ok. */
Graph *t_single_op(OpKind op, int nin, const TensorType *in_types, int nout, Node **node);
void t_verify_ok(Graph *g);
/* Verify expecting an error whose message contains msg. */
void t_verify_fails(Graph *g, const char *msg);
TensorType t_type(DType dt, int rank, const int64_t *dims);

#define DIMS(...) ((int64_t[]){__VA_ARGS__})
#define F32S(...) ((float[]){__VA_ARGS__})
#define I64S(...) ((int64_t[]){__VA_ARGS__})

#endif
