/* Helpers shared by the Criterion tests: build and run small graphs,
 * compare tensors with hand-computed values, run graph passes and compare
 * the graphs before and after. */
#ifndef GDCC_TEST_UTIL_H
#define GDCC_TEST_UTIL_H

#include <criterion/criterion.h>

#include "frontend.h"
#include "interp.h"
#include "ops.h"
#include "passes.h"
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

/* The number of nodes of kind `op` in g. */
int t_count_op(const Graph *g, OpKind op);
/* The first node of kind `op` in g (in node order), or NULL. */
Node *t_find_op(const Graph *g, OpKind op);
/* The value named `name`; fails the test if g has none. */
Value *t_val(const Graph *g, const char *name);
/* Whether v is the result of a constant node. */
bool t_is_const(const Value *v);

/* Assert that g passes graph_check_structure and graph_verify (warnings
 * allowed); prints the messages otherwise. */
void t_check_graph(Graph *g);
/* A graph pass, as passes.h declares them (pass_cse, pass_fold, ...). */
typedef bool TPassFn(Graph *g, PassContext *cx, Diag *d);
/* Run `pass` on g with the context cx: asserts that it succeeds and
 * reports no error, then t_check_graph(g).  Returns cx.changes after it. */
int t_run_pass(Graph *g, TPassFn *pass, PassContext cx);

/* Inputs for g, in input order, filled by fill_random_input with seed
 * seed + i for input i (one NULL slot after them); free with
 * t_free_inputs. */
Tensor **t_random_inputs(const Graph *g, uint64_t seed);
void t_free_inputs(const Graph *g, Tensor **in);
/* Assert that b has a's interface (the inputs' and outputs' names, dtypes,
 * shapes and order; each output found under its name) and, run on the
 * same t_random_inputs(a, seed), computes a's outputs: the same dtype and
 * shape, and bit for bit when rtol and atol are both 0, else each element
 * within atol + rtol * |a's| (NaN matches NaN, an infinity only itself).
 * Empty outputs are compared without touching their data. */
void t_assert_same_results(const Graph *a, const Graph *b, uint64_t seed, double rtol, double atol);
/* Parse text twice, run `pass` on one copy (t_run_pass with cx) and assert
 * it computes what the other does (t_assert_same_results, seed 100, rtol,
 * atol).  Returns the rewritten graph; *changes (unless NULL): what the
 * pass counted. */
Graph *t_pass_model(const char *text, TPassFn *pass, PassContext cx, double rtol, double atol, int *changes);

#define DIMS(...) ((int64_t[]){__VA_ARGS__})
#define F32S(...) ((float[]){__VA_ARGS__})
#define I64S(...) ((int64_t[]){__VA_ARGS__})

#endif
