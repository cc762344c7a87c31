/* Printer: parse -> print -> parse is a fixed point, and numbers survive
 * the trip bit for bit. */
#include <math.h>
#include <stdio.h>
#include <string.h>

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
