/* Test helpers (see test_util.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite.h"
#include "test_util.h"
#include "util.h"

Graph *t_parse(const char *text, Diag *d)
{
	return parse_model("test.ir", NULL, text, strlen(text), d);
}

static void dump(const Diag *d)
{
	diag_print(d, stderr);
}

Graph *t_model(const char *text)
{
	Diag d;
	diag_init(&d);
	Graph *g = t_parse(text, &d);
	if (g && !graph_verify(g, &d)) {
		graph_free(g);
		g = NULL;
	}
	if (!g)
		dump(&d);
	cr_assert(g != NULL, "model did not check");
	diag_free(&d);
	return g;
}

void t_expect_errors(const char *text, Diag *d)
{
	diag_init(d);
	Graph *g = t_parse(text, d);
	if (g) {
		graph_verify(g, d);
		graph_free(g);
	}
	cr_assert(d->nerrors > 0, "expected an error");
}

void t_assert_error_at(const Diag *d, const char *msg, int line, int col)
{
	for (int i = 0; i < d->n; i++) {
		const DiagEntry *e = &d->entries[i];
		if (e->level == DIAG_ERROR && strstr(e->msg, msg) && e->loc.line == line && e->loc.col == col)
			return;
	}
	dump(d);
	cr_assert_fail("no error containing \"%s\" at %d:%d", msg, line, col);
}

Tensor *t_f32(int rank, const int64_t *dims, const float *vals)
{
	Shape s = shape_make(rank, dims);
	Tensor *t = tensor_new(DT_F32, &s);
	if (tensor_bytes(t))
		memcpy(t->data, vals, tensor_bytes(t));
	return t;
}

Tensor *t_i64(int rank, const int64_t *dims, const int64_t *vals)
{
	Shape s = shape_make(rank, dims);
	Tensor *t = tensor_new(DT_I64, &s);
	if (tensor_bytes(t))
		memcpy(t->data, vals, tensor_bytes(t));
	return t;
}

Tensor **t_run(const Graph *g, Tensor *const *inputs)
{
	Diag d;
	diag_init(&d);
	Tensor **outs = xcalloc(g->noutputs, sizeof *outs);
	bool ok = interp_run(g, inputs, outs, &d);
	if (!ok)
		dump(&d);
	diag_free(&d);
	cr_assert(ok, "interpreter failed");
	return outs;
}

void t_free_outputs(const Graph *g, Tensor **outs)
{
	for (int i = 0; i < g->noutputs; i++)
		tensor_free(outs[i]);
	free(outs);
}

static void assert_shape(const Tensor *got, int rank, const int64_t *dims)
{
	Shape want = shape_make(rank, dims);
	char a[128], b[128];
	cr_assert(shape_eq(&got->type.shape, &want), "shape %s, expected %s", shape_str(&got->type.shape, a, sizeof a),
		  shape_str(&want, b, sizeof b));
}

/* x is w within atol + rtol * |w|; NaN matches NaN, an infinity only
 * itself. */
static bool close_to(double x, double w, double rtol, double atol)
{
	if (isnan(w))
		return isnan(x);
	if (isinf(w))
		return x == w;
	return fabs(x - w) <= atol + rtol * fabs(w);
}

void t_assert_close(const Tensor *got, int rank, const int64_t *dims, const float *want, double rtol, double atol)
{
	cr_assert_eq(got->type.dtype, DT_F32, "dtype %s, expected f32", dtype_name(got->type.dtype));
	assert_shape(got, rank, dims);
	const float *g = got->data;
	for (int64_t i = 0; i < tensor_numel(got); i++) {
		double w = want[i], x = g[i];
		cr_assert(close_to(x, w, rtol, atol), "element %lld: got %.9g, expected %.9g", (long long)i, x, w);
	}
}

void t_assert_i64(const Tensor *got, int rank, const int64_t *dims, const int64_t *want)
{
	cr_assert_eq(got->type.dtype, DT_I64, "dtype %s, expected i64", dtype_name(got->type.dtype));
	assert_shape(got, rank, dims);
	const int64_t *g = got->data;
	for (int64_t i = 0; i < tensor_numel(got); i++)
		cr_assert_eq(g[i], want[i], "element %lld: got %lld, expected %lld", (long long)i, (long long)g[i],
			     (long long)want[i]);
}

TensorType t_type(DType dt, int rank, const int64_t *dims)
{
	TensorType t = {dt, shape_make(rank, dims)};
	return t;
}

Graph *t_single_op(OpKind op, int nin, const TensorType *in_types, int nout, Node **node)
{
	Graph *g = graph_new("t");
	Value *in[16];
	const char *names[16];
	char buf[16][16];
	for (int i = 0; i < nin; i++) {
		snprintf(buf[i], sizeof buf[i], "x%d", i);
		in[i] = graph_add_input(g, buf[i], in_types[i].dtype, &in_types[i].shape, (Loc){"t", 1, 1});
	}
	char rb[16][16];
	for (int i = 0; i < nout; i++) {
		snprintf(rb[i], sizeof rb[i], "r%d", i);
		names[i] = rb[i];
	}
	Node *n = graph_add_node(g, op, in, nin, names, nout, (Loc){"t", 2, 1});
	for (int i = 0; i < nout; i++)
		graph_add_output(g, n->out[i], (Loc){"t", 3, 1});
	*node = n;
	return g;
}

void t_verify_ok(Graph *g)
{
	Diag d;
	diag_init(&d);
	bool ok = graph_verify(g, &d);
	if (!ok)
		dump(&d);
	diag_free(&d);
	cr_assert(ok, "verification failed");
}

void t_verify_fails(Graph *g, const char *msg)
{
	Diag d;
	diag_init(&d);
	bool ok = graph_verify(g, &d);
	bool found = diag_find(&d, msg) != NULL;
	if (ok || !found)
		dump(&d);
	diag_free(&d);
	cr_assert(!ok, "verification passed, expected \"%s\"", msg);
	cr_assert(found, "no error containing \"%s\"", msg);
}

int t_count_op(const Graph *g, OpKind op)
{
	int k = 0;
	for (int i = 0; i < g->nnodes; i++)
		k += g->nodes[i]->op == op;
	return k;
}

Node *t_find_op(const Graph *g, OpKind op)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->op == op)
			return g->nodes[i];
	return NULL;
}

Value *t_val(const Graph *g, const char *name)
{
	Value *v = graph_find_value(g, name);
	cr_assert_not_null(v, "no value '%s'", name);
	return v;
}

bool t_is_const(const Value *v)
{
	return v->def && v->def->op == OP_CONSTANT;
}

void t_check_graph(Graph *g)
{
	Diag d;
	diag_init(&d);
	bool ok = graph_check_structure(g, &d) && graph_verify(g, &d);
	if (!ok)
		dump(&d);
	diag_free(&d);
	cr_assert(ok, "the graph does not check (structure or verifier)");
}

int t_run_pass(Graph *g, TPassFn *pass, PassContext cx)
{
	Diag d;
	diag_init(&d);
	bool ok = pass(g, &cx, &d);
	int nerrors = d.nerrors;
	if (!ok || nerrors)
		dump(&d);
	diag_free(&d);
	cr_assert(ok, "the pass failed");
	cr_assert_eq(nerrors, 0, "the pass reported an error");
	t_check_graph(g);
	return cx.changes;
}

Tensor **t_random_inputs(const Graph *g, uint64_t seed)
{
	Tensor **in = xcalloc((size_t)g->ninputs + 1, sizeof *in);
	for (int i = 0; i < g->ninputs; i++) {
		in[i] = tensor_new(g->inputs[i]->type.dtype, &g->inputs[i]->type.shape);
		fill_random_input(in[i], seed + (uint64_t)i);
	}
	return in;
}

void t_free_inputs(const Graph *g, Tensor **in)
{
	for (int i = 0; i < g->ninputs; i++)
		tensor_free(in[i]);
	free(in);
}

/* The values (inputs or outputs: `what`) of b are a's, by name, type and
 * order. */
static void assert_same_values(const char *what, Value *const *a, int na, Value *const *b, int nb)
{
	cr_assert_eq(nb, na, "%d %ss, expected %d", nb, what, na);
	for (int i = 0; i < na; i++) {
		cr_assert_str_eq(b[i]->name, a[i]->name, "%s %d", what, i);
		cr_assert_eq(b[i]->type.dtype, a[i]->type.dtype, "%s '%s''s dtype", what, a[i]->name);
		cr_assert(shape_eq(&b[i]->type.shape, &a[i]->type.shape), "%s '%s''s shape", what, a[i]->name);
	}
}

void t_assert_same_results(const Graph *a, const Graph *b, uint64_t seed, double rtol, double atol)
{
	assert_same_values("input", a->inputs, a->ninputs, b->inputs, b->ninputs);
	assert_same_values("output", a->outputs, a->noutputs, b->outputs, b->noutputs);
	for (int i = 0; i < a->noutputs; i++)
		cr_assert(graph_find_value(b, a->outputs[i]->name) == b->outputs[i], "output '%s' is not found by its name",
			  a->outputs[i]->name);
	Tensor **in = t_random_inputs(a, seed);
	Tensor **want = t_run(a, in), **got = t_run(b, in);
	for (int i = 0; i < a->noutputs; i++) {
		const char *name = a->outputs[i]->name;
		const Tensor *w = want[i], *x = got[i];
		char s1[128], s2[128];
		cr_assert_eq(x->type.dtype, w->type.dtype, "output '%s': dtype %s, expected %s", name,
			     dtype_name(x->type.dtype), dtype_name(w->type.dtype));
		cr_assert(shape_eq(&x->type.shape, &w->type.shape), "output '%s': shape %s, expected %s", name,
			  shape_str(&x->type.shape, s1, sizeof s1), shape_str(&w->type.shape, s2, sizeof s2));
		if (rtol == 0 && atol == 0) {
			/* (an empty tensor may have no data at all: no memcmp of NULL) */
			size_t n = tensor_bytes(w);
			cr_assert(n == 0 || memcmp(x->data, w->data, n) == 0, "output '%s' changed", name);
			continue;
		}
		for (int64_t k = 0; k < tensor_numel(w); k++) {
			double u = tensor_get_f(w, k), v = tensor_get_f(x, k);
			cr_assert(close_to(v, u, rtol, atol), "output '%s'[%lld]: %.9g before, %.9g after", name, (long long)k,
				  u, v);
		}
	}
	t_free_outputs(a, want);
	t_free_outputs(b, got);
	t_free_inputs(a, in);
}

Graph *t_pass_model(const char *text, TPassFn *pass, PassContext cx, double rtol, double atol, int *changes)
{
	Graph *before = t_model(text), *after = t_model(text);
	int ch = t_run_pass(after, pass, cx);
	if (changes)
		*changes = ch;
	t_assert_same_results(before, after, 100, rtol, atol);
	graph_free(before);
	return after;
}

/* diag_print never writes a binary file's bytes to the terminal, and shows
 * a window of a very long line (regression: the 2026-12-01 fuzzing run's
 * "raw bytes from a binary file" finding). */
static char *printed(const char *text, size_t len, Loc at, const char *msg)
{
	Diag d;
	diag_init(&d);
	const char *f = diag_add_source(&d, "m.ir", text, len);
	at.file = f;
	diag_error(&d, at, "%s", msg);
	char *buf = NULL;
	size_t n = 0;
	FILE *o = open_memstream(&buf, &n);
	diag_print(&d, o);
	fclose(o);
	diag_free(&d);
	return buf;
}

Test(diag, escapes_bytes_that_are_not_text)
{
	char *s = printed("\x7f" "ELF\x02\x01\n", 7, loc_at(NULL, 1, 2), "bad \x01 byte");
	cr_assert_str_eq(s, "m.ir:1:2: error: bad \\x01 byte\n  \\x7fELF\\x02\\x01\n      ^\n");
	free(s);
	/* valid UTF-8 stays as it is and counts as one column */
	s = printed("# \xc3\xa9t\xc3\xa9 x\n", 10, loc_at(NULL, 1, 9), "here");
	cr_assert_str_eq(s, "m.ir:1:9: error: here\n  # \xc3\xa9t\xc3\xa9 x\n        ^\n");
	free(s);
}

Test(diag, long_lines_are_windowed)
{
	size_t n = 100000;
	char *text = malloc(n + 1);
	memset(text, 'a', n);
	text[50000] = 'X';
	text[n] = 0;
	char *s = printed(text, n, loc_at(NULL, 1, 50001), "at X");
	char *l2 = strchr(s, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
	cr_assert_lt((size_t)(l3 - l2), 200u);
	cr_assert(strncmp(l2, "  ...", 5) == 0);
	cr_assert_eq(l2[strchr(l3, '^') - l3], 'X', "the caret is under the column");
	free(s);
	free(text);
}

Test(util, strmap)
{
	StrMap m = {0};
	cr_assert_null(strmap_get(&m, "a"));
	static int vals[1000];
	char key[16];
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof key, "k%d", i);
		m.owns_keys = true;
		cr_assert(strmap_add(&m, key, &vals[i]));
	}
	cr_assert_not(strmap_add(&m, "k7", &vals[0]), "a key already there is not added again");
	cr_assert_eq(m.n, 1000u);
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof key, "k%d", i);
		cr_assert_eq(strmap_get(&m, key), &vals[i]);
	}
	cr_assert_null(strmap_get(&m, "k1000"));
	strmap_free(&m);
	cr_assert_null(strmap_get(&m, "k1"));
	cr_assert(m.owns_keys);
}
