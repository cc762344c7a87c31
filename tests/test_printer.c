/* Printer: parse -> print -> parse is a fixed point, and numbers survive
 * the trip bit for bit. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "printer.h"
#include "test_util.h"

static char *print_to_string(const Graph *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	print_graph(f, g);
	fclose(f);
	return buf;
}

static void assert_fixed_point(const char *text)
{
	Graph *g1 = t_model(text);
	char *p1 = print_to_string(g1);
	Graph *g2 = t_model(p1);
	char *p2 = print_to_string(g2);
	cr_assert_str_eq(p1, p2, "first print:\n%s\nsecond print:\n%s", p1, p2);
	/* Same structure, not only the same text. */
	cr_assert_eq(g1->nnodes, g2->nnodes);
	cr_assert_eq(g1->nvalues, g2->nvalues);
	for (int i = 0; i < g1->nnodes; i++) {
		cr_assert_eq(g1->nodes[i]->op, g2->nodes[i]->op);
		cr_assert_eq(g1->nodes[i]->nattrs, g2->nodes[i]->nattrs);
		for (int k = 0; k < g1->nodes[i]->nout; k++) {
			const Value *a = g1->nodes[i]->out[k], *b = g2->nodes[i]->out[k];
			cr_assert_str_eq(a->name, b->name);
			cr_assert_eq(a->type.dtype, b->type.dtype);
			cr_assert(shape_eq(&a->type.shape, &b->type.shape));
		}
	}
	free(p1);
	free(p2);
	graph_free(g1);
	graph_free(g2);
}

Test(printer, fixed_point_small_model)
{
	assert_fixed_point("graph mlp {\n"
			   "  input x : f32[4, 8]\n"
			   "  const w : f32[8, 2] = normal(seed=3, mean=0, std=0.125)\n"
			   "  const b : f32[2] = [0.1, -2.5e-7]\n"
			   "  h = matmul(x, w)\n"
			   "  a = add(h, b)\n"
			   "  r = leaky_relu(a, alpha=0.2)\n"
			   "  p, q = split(r, axis=1, split=[1, 1])\n"
			   "  c = clip(p, min=-inf, max=6)\n"
			   "  output c, q\n"
			   "}\n");
}

Test(printer, fixed_point_every_initializer_and_attribute_kind)
{
	assert_fixed_point("graph g {\n"
			   "  input x : f32[2, 3]\n"
			   "  const z : f32[3] = zeros\n"
			   "  const f : f32[3] = fill(1e-30)\n"
			   "  const r : f32[3] = random(seed=42, low=-0.5, high=0.5)\n"
			   "  const i : i64[3] = [1, -2, 3]\n"
			   "  s = sum(x, z, f, r)\n"
			   "  g1 = gelu(s, approximate=\"tanh\")\n"
			   "  k = constant_of_shape(shape=[2, 2], value=3, dtype=i64)\n"
			   "  t = transpose(g1, perm=[1, 0])\n"
			   "  output t, k, i\n"
			   "}\n");
}

Test(printer, annotates_inferred_types)
{
	Graph *g = t_model("graph g {\n  input x : f32[2, 3]\n  y = transpose(x)\n  output y\n}\n");
	char *p = print_to_string(g);
	cr_assert(strstr(p, "  y : f32[3,2] = transpose(x)\n"), "printed:\n%s", p);
	free(p);
	graph_free(g);
}

Test(printer, doubles_round_trip_exactly)
{
	double cases[] = {0.1, 1.0 / 3.0, 1e-300, 5e-324, 1.7976931348623157e308, -0.0, 123456789.0, 2.5e-7, 100.0};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char buf[40];
		format_double(cases[i], buf, sizeof buf);
		cr_assert_eq(strtod(buf, NULL), cases[i], "%s", buf);
		cr_assert(strpbrk(buf, ".e"), "'%s' would read back as an integer", buf);
	}
	char buf[40];
	format_double(0.1, buf, sizeof buf);
	cr_assert_str_eq(buf, "0.1");
	format_double(100.0, buf, sizeof buf);
	cr_assert_str_eq(buf, "100.0");
	format_double(-INFINITY, buf, sizeof buf);
	cr_assert_str_eq(buf, "-inf");
	format_double(NAN, buf, sizeof buf);
	cr_assert_str_eq(buf, "nan");
}

Test(printer, strings_are_escaped)
{
	Graph *g = graph_new("g");
	Shape s = shape_make(1, (int64_t[]){2});
	ConstInit ci = {.kind = INIT_NPY, .path = strdup("a \"b\"\\c.npy"), .resolved = strdup("x")};
	graph_add_const(g, "w", DT_F32, &s, ci, loc_at("t", 1, 1));
	graph_add_output(g, g->nodes[0]->out[0], loc_at("t", 1, 1));
	char *p = print_to_string(g);
	cr_assert(strstr(p, "npy(\"a \\\"b\\\"\\\\c.npy\")"), "printed:\n%s", p);
	Diag d;
	diag_init(&d);
	Graph *g2 = t_parse(p, &d);
	cr_assert_not_null(g2);
	cr_assert_str_eq(g2->nodes[0]->init.path, "a \"b\"\\c.npy");
	graph_free(g2);
	diag_free(&d);
	free(p);
	graph_free(g);
}

/* ---- constants made at compile time (INIT_TENSOR) ----------------------- */

/* A graph `y = add(x, c)` whose constant c holds t (owned) in memory, as
 * folding and canonicalization leave one. */
static Graph *graph_with_tensor(Tensor *t)
{
	char ty[160], text[512];
	type_str(&t->type, ty, sizeof ty);
	snprintf(text, sizeof text,
		 "graph g {\n  input x : %s\n  const c : %s = zeros\n  y = add(x, c)\n  output y\n}\n", ty, ty);
	Graph *g = t_model(text);
	Node *c = g->nodes[0];
	cr_assert_eq(c->op, OP_CONSTANT);
	c->init = (ConstInit){.kind = INIT_TENSOR, .data = t};
	t_verify_ok(g);
	return g;
}

/* Print g, parse and verify the text, and return the constant's data. */
static Tensor *reparsed_constant(const Graph *g, char **text)
{
	*text = print_to_string(g);
	Graph *g2 = t_model(*text);
	Node *c = g2->nodes[0];
	cr_assert_eq(c->op, OP_CONSTANT, "%s", *text);
	Tensor *t = tensor_new(c->out[0]->type.dtype, &c->out[0]->type.shape);
	Diag d;
	diag_init(&d);
	cr_assert(materialize_constant(c, t, &d));
	diag_free(&d);
	graph_free(g2);
	return t;
}

Test(printer, small_compile_time_float_data_prints_inline_and_reads_back)
{
	float v[] = {0.1f, -0.0f, 1e-30f, 3.4028235e38f, -1.17549435e-38f, 1.4e-45f, 1.0f / 3.0f, 16777217.0f,
		     -2.5f, INFINITY, NAN, 7.0f};
	int64_t n = (int64_t)(sizeof v / sizeof *v);
	Tensor *t = t_f32(2, DIMS(3, 4), v);
	Graph *g = graph_with_tensor(t);
	char *text;
	Tensor *back = reparsed_constant(g, &text);
	cr_assert(strstr(text, "  const c : f32[3,4] = [0.1, -0.0, "), "printed:\n%s", text);
	cr_assert_null(strstr(text, "compile-time data"), "printed:\n%s", text);
	for (int64_t i = 0; i < n; i++) {
		float a = f32(t)[i], b = f32(back)[i];
		if (isnan(a))
			cr_assert(isnan(b), "element %lld", (long long)i);
		else
			cr_assert(memcmp(&a, &b, sizeof a) == 0, "element %lld: %.9g printed, %.9g read back:\n%s",
				  (long long)i, (double)a, (double)b, text);
	}
	/* printing the parsed model gives the same text */
	Graph *g2 = t_model(text);
	char *again = print_to_string(g2);
	cr_assert_str_eq(again, text);
	free(again);
	graph_free(g2);
	tensor_free(back);
	free(text);
	graph_free(g);
}

Test(printer, small_compile_time_integer_data_prints_exactly)
{
	int64_t v[] = {INT64_MAX, INT64_MIN, (1LL << 53) + 1, -((1LL << 53) + 1), 0, -1, 42};
	int64_t n = (int64_t)(sizeof v / sizeof *v);
	Tensor *t = t_i64(1, DIMS(n), v);
	Graph *g = graph_with_tensor(t);
	char *text;
	Tensor *back = reparsed_constant(g, &text);
	cr_assert(strstr(text, "= [9223372036854775807, -9223372036854775808, 9007199254740993, -9007199254740993, 0, -1, 42]"),
		  "printed:\n%s", text);
	for (int64_t i = 0; i < n; i++)
		cr_assert_eq(((int64_t *)back->data)[i], v[i], "element %lld", (long long)i);
	tensor_free(back);
	free(text);
	graph_free(g);
}

Test(printer, compile_time_data_of_64_elements_is_inline_65_is_a_comment)
{
	for (int64_t n = 64; n <= 65; n++) {
		Shape s = shape_make(1, DIMS(n));
		Tensor *t = tensor_new(DT_F32, &s);
		for (int64_t i = 0; i < n; i++)
			f32(t)[i] = (float)i * 0.5f;
		Graph *g = graph_with_tensor(t);
		char *text = print_to_string(g);
		if (n == 64) {
			cr_assert(strstr(text, "= [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5,\n        4.0, "), "printed:\n%s", text);
			cr_assert(strstr(text, "31.5]\n"), "printed:\n%s", text);
		} else {
			char want[160];
			snprintf(want, sizeof want,
				 "  const c : f32[65] = zeros  # compile-time data: 260 bytes, xxh3 %016llx (not printed)\n",
				 (unsigned long long)XXH3_64bits(t->data, 260));
			cr_assert(strstr(text, want), "want:\n%s\nprinted:\n%s", want, text);
		}
		/* either way a model.ir: it parses and verifies */
		Graph *g2 = t_model(text);
		cr_assert_eq(g2->nodes[0]->init.kind, n == 64 ? INIT_INLINE : INIT_ZEROS);
		graph_free(g2);
		free(text);
		graph_free(g);
	}
}

Test(printer, large_compile_time_data_hash_tells_data_apart)
{
	Shape s = shape_make(2, DIMS(10, 10));
	Tensor *a = tensor_new(DT_F32, &s), *b = tensor_new(DT_F32, &s);
	f32(b)[99] = 1.0f;
	Graph *ga = graph_with_tensor(a), *gb = graph_with_tensor(b);
	char *ta = print_to_string(ga), *tb = print_to_string(gb);
	cr_assert(strstr(ta, "compile-time data: 400 bytes, xxh3 "), "printed:\n%s", ta);
	cr_assert_str_neq(ta, tb);
	free(ta);
	free(tb);
	graph_free(ga);
	graph_free(gb);
}

Test(printer, empty_compile_time_data_prints_as_an_empty_list)
{
	Shape s = shape_make(2, DIMS(0, 3));
	Graph *g = graph_with_tensor(tensor_new(DT_F32, &s));
	char *text;
	Tensor *back = reparsed_constant(g, &text);
	cr_assert(strstr(text, "  const c : f32[0,3] = []\n"), "printed:\n%s", text);
	cr_assert_eq(tensor_numel(back), 0);
	tensor_free(back);
	free(text);
	graph_free(g);
}
