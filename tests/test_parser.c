/* Parser: the graph it builds, and its syntax and name errors with their
 * locations. */
#include <string.h>

#include "test_util.h"

Test(parser, builds_inputs_constants_nodes_outputs)
{
	Diag d;
	diag_init(&d);
	Graph *g = t_parse("# comment line\n"
			   "graph mlp {\n"
			   "  input x : f32[2, 3]\n"
			   "  const w : f32[3] = [1, 2.5, -3]\n"
			   "  y : f32[2,3] = add(x, w)\n"
			   "  a, b = split(y, axis=1, split=[1, 2])\n"
			   "  output a, b\n"
			   "}\n",
			   &d);
	cr_assert_not_null(g);
	cr_assert_str_eq(g->name, "mlp");
	cr_assert_eq(g->ninputs, 1);
	cr_assert_str_eq(g->inputs[0]->name, "x");
	cr_assert_eq(g->inputs[0]->type.dtype, DT_F32);
	cr_assert_eq(g->inputs[0]->type.shape.rank, 2);
	cr_assert_eq(g->inputs[0]->type.shape.dim[1], 3);
	cr_assert_eq(g->nnodes, 3);
	const Node *c = g->nodes[0];
	cr_assert_eq(c->op, OP_CONSTANT);
	cr_assert_eq(c->init.kind, INIT_INLINE);
	cr_assert_eq(c->init.nvalues, 3);
	cr_assert_float_eq(c->init.values[1], 2.5, 0);
	cr_assert_float_eq(c->init.values[2], -3.0, 0);
	const Node *add = g->nodes[1];
	cr_assert_eq(add->op, OP_ADD);
	cr_assert_eq(add->nin, 2);
	cr_assert_eq(add->in[1], c->out[0]);
	cr_assert(add->out[0]->annotated);
	cr_assert_eq(add->out[0]->annot.shape.dim[0], 2);
	cr_assert_eq(add->loc.line, 5);
	cr_assert_eq(add->loc.col, 18);
	cr_assert_eq(add->in_loc[1].col, 25);
	const Node *sp = g->nodes[2];
	cr_assert_eq(sp->op, OP_SPLIT);
	cr_assert_eq(sp->nout, 2);
	cr_assert_eq(sp->nattrs, 2);
	cr_assert_str_eq(sp->attrs[0].name, "axis");
	cr_assert_eq(sp->attrs[0].kind, ATTR_INT);
	cr_assert_eq(sp->attrs[1].kind, ATTR_INTS);
	cr_assert_eq(sp->attrs[1].n, 2);
	cr_assert_eq(sp->attrs[1].ints[1], 2);
	cr_assert_eq(g->noutputs, 2);
	cr_assert_str_eq(g->outputs[1]->name, "b");
	graph_free(g);
	diag_free(&d);
}

Test(parser, attribute_kinds)
{
	Diag d;
	diag_init(&d);
	Graph *g = t_parse("graph g {\n  input x : f32[1]\n"
			   "  y = gelu(x, approximate=\"tanh\")\n"
			   "  z = constant_of_shape(shape=[2], value=1.5, dtype=i64)\n"
			   "  w = clip(x, min=-1, max=2.5)\n"
			   "  v = leaky_relu(x, alpha=[0.5, 1])\n"
			   "  output y, z, w, v\n}\n",
			   &d);
	cr_assert_not_null(g);
	cr_assert_eq(g->nodes[0]->attrs[0].kind, ATTR_STRING);
	cr_assert_str_eq(g->nodes[0]->attrs[0].s, "tanh");
	cr_assert_eq(g->nodes[1]->attrs[0].kind, ATTR_INTS);
	cr_assert_eq(g->nodes[1]->attrs[1].kind, ATTR_FLOAT);
	cr_assert_eq(g->nodes[1]->attrs[2].kind, ATTR_DTYPE);
	cr_assert_eq(g->nodes[1]->attrs[2].dt, DT_I64);
	cr_assert_eq(g->nodes[2]->attrs[0].kind, ATTR_INT);
	cr_assert_eq(g->nodes[2]->attrs[0].i, -1);
	/* A list with any float is a float list. */
	cr_assert_eq(g->nodes[3]->attrs[0].kind, ATTR_FLOATS);
	cr_assert_float_eq(g->nodes[3]->attrs[0].floats[1], 1.0, 0);
	graph_free(g);
	diag_free(&d);
}

Test(parser, initializers)
{
	Diag d;
	diag_init(&d);
	Graph *g = t_parse("graph g {\n"
			   "  const a : f32[2] = zeros\n"
			   "  const b : f32[2] = fill(0.5)\n"
			   "  const c : f32[2] = random(seed=7, low=-2, high=2)\n"
			   "  const e : f32[2] = normal(9, std=0.1)\n"
			   "  const f : f32[] = [4]\n"
			   "  const h : f32[2] = npy(\"weights/h.npy\")\n"
			   "  s = sum(a, b, c, e, f, h)\n"
			   "  output s\n}\n",
			   &d);
	cr_assert_not_null(g);
	cr_assert_eq(g->nodes[0]->init.kind, INIT_ZEROS);
	cr_assert_eq(g->nodes[1]->init.kind, INIT_FILL);
	cr_assert_float_eq(g->nodes[1]->init.a, 0.5, 0);
	cr_assert_eq(g->nodes[2]->init.kind, INIT_RANDOM);
	cr_assert_eq(g->nodes[2]->init.seed, 7);
	cr_assert_float_eq(g->nodes[2]->init.a, -2.0, 0);
	cr_assert_float_eq(g->nodes[2]->init.b, 2.0, 0);
	cr_assert_eq(g->nodes[3]->init.kind, INIT_NORMAL);
	cr_assert_eq(g->nodes[3]->init.seed, 9);
	cr_assert_float_eq(g->nodes[3]->init.a, 0.0, 0); /* mean defaults to 0 */
	cr_assert_float_eq(g->nodes[3]->init.b, 0.1, 0);
	cr_assert_eq(g->nodes[4]->out[0]->annot.shape.rank, 0);
	cr_assert_eq(g->nodes[5]->init.kind, INIT_NPY);
	cr_assert_str_eq(g->nodes[5]->init.path, "weights/h.npy");
	graph_free(g);
	diag_free(&d);
}

Test(parser, statements_span_lines_inside_brackets)
{
	Diag d;
	diag_init(&d);
	Graph *g = t_parse("graph g {\n  input x : f32[1,\n 2]\n  y = add(x,\n    x)\n  output y\n}", &d);
	cr_assert_not_null(g);
	cr_assert_eq(g->nodes[0]->in_loc[1].line, 5);
	graph_free(g);
	diag_free(&d);
}

/* ---- errors ------------------------------------------------------------- */
static void expect(const char *text, const char *msg, int line, int col)
{
	Diag d;
	t_expect_errors(text, &d);
	t_assert_error_at(&d, msg, line, col);
	diag_free(&d);
}

Test(parser, error_syntax)
{
	expect("graph g {\n  input x : f32[2]\n  y = add(x, , x)\n  output y\n}\n",
	       "syntax error, unexpected ','", 3, 14);
}

Test(parser, error_syntax_missing_brace)
{
	expect("graph g \n  input x : f32[2]\n}\n", "syntax error, unexpected end of line, expecting '{'", 1, 9);
}

Test(parser, error_recovery_reports_several)
{
	Diag d;
	t_expect_errors("graph g {\n  input x : f32[2]\n  y = add(x x)\n  z = ) relu(x)\n"
			"  w = relu(q)\n  output y\n}\n",
			&d);
	t_assert_error_at(&d, "syntax error, unexpected name", 3, 13);
	t_assert_error_at(&d, "syntax error, unexpected ')'", 4, 7);
	t_assert_error_at(&d, "use of undefined value 'q'", 5, 12);
	cr_assert_eq(d.nerrors, 3);
	diag_free(&d);
}

Test(parser, error_unknown_op_suggests)
{
	expect("graph g {\n  input x : f32[2]\n  y = sigmiod(x)\n  output y\n}\n",
	       "unknown op 'sigmiod' (did you mean 'sigmoid'?)", 3, 7);
}

Test(parser, error_unknown_op_far_from_any)
{
	expect("graph g {\n  input x : f32[2]\n  y = frobnicate(x)\n  output y\n}\n", "unknown op 'frobnicate'", 3, 7);
}

Test(parser, error_undefined_value)
{
	expect("graph g {\n  input x : f32[2]\n  y = add(x, x2)\n  output y\n}\n", "use of undefined value 'x2'", 3, 14);
}

Test(parser, error_undefined_output)
{
	expect("graph g {\n  input x : f32[2]\n  y = relu(x)\n  output y, zz\n}\n", "use of undefined value 'zz'", 4, 13);
}

Test(parser, error_use_before_definition)
{
	expect("graph g {\n  input x : f32[2]\n  y = add(x, z)\n  z = relu(x)\n  output y\n}\n",
	       "use of undefined value 'z'", 3, 14);
}

Test(parser, error_redefinition)
{
	Diag d;
	t_expect_errors("graph g {\n  input x : f32[2]\n  x = relu(x)\n  output x\n}\n", &d);
	t_assert_error_at(&d, "redefinition of 'x'", 3, 3);
	const DiagEntry *note = diag_find(&d, "'x' was first defined here");
	cr_assert_not_null(note);
	cr_assert_eq(note->level, DIAG_NOTE);
	cr_assert_eq(note->loc.line, 2);
	cr_assert_eq(note->loc.col, 9);
	diag_free(&d);
}

Test(parser, error_unknown_dtype)
{
	expect("graph g {\n  input x : f64[2]\n  y = relu(x)\n  output y\n}\n", "unknown dtype 'f64'", 2, 13);
}

Test(parser, error_operand_after_attribute)
{
	expect("graph g {\n  input x : f32[2]\n  y = add(x, axis=1, x)\n  output y\n}\n",
	       "operand after an attribute", 3, 22);
}

Test(parser, error_attribute_twice)
{
	expect("graph g {\n  input x : f32[2]\n  y = softmax(x, axis=0, axis=0)\n  output y\n}\n",
	       "attribute 'axis' given twice", 3, 26);
}

Test(parser, error_number_as_operand)
{
	expect("graph g {\n  input x : f32[2]\n  y = add(x, 1.0)\n  output y\n}\n", "operand 2 must be a value name", 3, 14);
}

Test(parser, error_bad_initializer)
{
	expect("graph g {\n  const w : f32[2] = ones\n  output w\n}\n", "unknown initializer 'ones'", 2, 22);
	expect("graph g {\n  const w : f32[2] = random(seed=-1)\n  output w\n}\n", "the seed must be a non-negative integer",
	       2, 34);
	expect("graph g {\n  const w : f32[2] = normal(1, sigma=2)\n  output w\n}\n", "unknown parameter 'sigma'", 2, 32);
	expect("graph g {\n  const w : f32[2] = npy(3)\n  output w\n}\n", "npy(): expected a file name string", 2, 26);
}

Test(parser, error_negative_dimension)
{
	expect("graph g {\n  input x : f32[2, -1]\n  output x\n}\n", "dimension 2 must be a non-negative integer", 2, 17);
}

Test(parser, error_dtype_name_expected_in_attribute)
{
	expect("graph g {\n  input x : f32[2]\n  y = gelu(x, approximate=tanh)\n  output y\n}\n",
	       "'tanh' is not a dtype (strings are written in quotes)", 3, 27);
}
