/* The graph rewriting API (core/rewrite.h): use lists, replace-all-uses
 * (outputs keep their names), insertion in topological order, removal and
 * compaction, and the structure check that catches broken graphs. */
#include <stdlib.h>
#include <string.h>

#include "printer.h"
#include "rewrite.h"
#include "test_util.h"
#include "util.h"

static bool structure_ok(const Graph *g)
{
	Diag d;
	diag_init(&d);
	bool ok = graph_check_structure(g, &d);
	if (!ok)
		diag_print(&d, stderr);
	diag_free(&d);
	return ok;
}

/* The structure check fails with a message containing msg. */
static void structure_fails(const Graph *g, const char *msg)
{
	Diag d;
	diag_init(&d);
	bool ok = graph_check_structure(g, &d);
	bool found = diag_find(&d, msg) != NULL;
	if (ok || !found)
		diag_print(&d, stderr);
	diag_free(&d);
	cr_assert(!ok, "the structure check passed, expected \"%s\"", msg);
	cr_assert(found, "no error containing \"%s\"", msg);
}

static Value *val(const Graph *g, const char *name)
{
	Value *v = graph_find_value(g, name);
	cr_assert_not_null(v, "no value '%s'", name);
	return v;
}

static Node *insert_typed(Graph *g, int pos, OpKind op, Value **in, int nin, const char *base)
{
	Node *n = graph_insert_node(g, pos, op, in, nin, 1, base, (Loc){"t", 1, 1});
	cr_assert_not_null(n);
	Diag d;
	diag_init(&d);
	bool ok = graph_check_node(g, n, &d);
	diag_free(&d);
	cr_assert(ok);
	return n;
}

static void check_ids(const Graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		cr_assert_eq(g->nodes[i]->id, i);
	for (int i = 0; i < g->nvalues; i++)
		cr_assert_eq(g->values[i]->id, i);
}

Test(rewrite, parsed_graph_has_exact_use_lists)
{
	Graph *g = t_model("graph g {\n  input x : f32[3]\n  a = relu(x)\n  b = add(a, a)\n  c = neg(a)\n  output b, c, a\n}\n");
	Value *a = val(g, "a");
	cr_assert_eq(a->nusers, 3, "two operand slots of b, one of c");
	cr_assert_eq(a->nuses, 4, "and one output");
	cr_assert_eq(value_operand_uses(a), 3);
	cr_assert_null(value_sole_user(a));
	cr_assert_eq(value_sole_user(val(g, "x")), a->def);
	cr_assert_null(value_sole_user(val(g, "c")), "an output has no sole user");
	cr_assert(structure_ok(g));
	graph_free(g);
}

Test(rewrite, replace_all_uses)
{
	Graph *g = t_model("graph g {\n  input x : f32[4]\n  a = relu(x)\n  b = add(a, a)\n  c = neg(a)\n  d = mul(b, c)\n"
			   "  output d\n}\n");
	Value *x = val(g, "x"), *a = val(g, "a");
	Tensor *in = t_f32(1, DIMS(4), F32S(-1, 2, -3, 4));
	/* a2 = abs(x), right after a; every use of a becomes one of a2 */
	Node *n = insert_typed(g, graph_node_pos(g, a->def) + 1, OP_ABS, &x, 1, "a2");
	Value *a2 = n->out[0];
	cr_assert_str_eq(a2->name, "a2");
	cr_assert(graph_can_replace(g, a, a2));
	cr_assert(graph_replace_uses(g, a, a2));
	cr_assert_eq(a->nusers, 0);
	cr_assert_eq(a->nuses, 0);
	cr_assert_eq(a2->nusers, 3);
	const Node *b = val(g, "b")->def, *c = val(g, "c")->def;
	cr_assert(b->in[0] == a2 && b->in[1] == a2 && c->in[0] == a2);
	cr_assert(structure_ok(g));
	graph_remove_node(g, a->def);
	cr_assert(node_removed(a->def));
	graph_compact(g);
	cr_assert_null(graph_find_value(g, "a"));
	cr_assert(structure_ok(g));
	check_ids(g);
	t_verify_ok(g);
	Tensor **o = t_run(g, &in);
	/* (|x| + |x|) * -|x| */
	t_assert_close(o[0], 1, DIMS(4), F32S(-2, -8, -18, -32), 0, 0);
	t_free_outputs(g, o);
	tensor_free(in);
	graph_free(g);
}

Test(rewrite, replaced_output_keeps_its_name)
{
	Graph *g = t_model("graph g {\n  input x : f32[3]\n  a = relu(x)\n  y : f32[3] = neg(a)\n  z = abs(x)\n"
			   "  output z, y\n}\n");
	Value *a = val(g, "a"), *y = val(g, "y");
	/* y2 = abs(a) replaces y: it takes the name "y" and y's place */
	Node *n = insert_typed(g, graph_node_pos(g, y->def) + 1, OP_ABS, &a, 1, "y2");
	Value *y2 = n->out[0];
	cr_assert(graph_can_replace(g, y, y2));
	cr_assert(graph_replace_uses(g, y, y2));
	cr_assert_str_eq(y2->name, "y");
	cr_assert_str_eq(y->name, "y2", "the replaced value takes the other name");
	cr_assert(g->outputs[1] == y2 && y2->is_output && !y->is_output);
	cr_assert(graph_find_value(g, "y") == y2);
	cr_assert(graph_find_value(g, "y2") == y);
	cr_assert(graph_find_output(g, "y") == y2);
	cr_assert(y2->annotated, "the declared output type goes with the name");
	cr_assert_eq(y->nuses, 0);
	cr_assert(structure_ok(g));
	graph_remove_node(g, y->def);
	graph_compact(g);
	cr_assert(structure_ok(g));
	t_verify_ok(g);
	cr_assert_str_eq(g->outputs[0]->name, "z");
	cr_assert_str_eq(g->outputs[1]->name, "y");
	Tensor *in = t_f32(1, DIMS(3), F32S(-1, 2, -3));
	Tensor **o = t_run(g, &in);
	t_assert_close(o[1], 1, DIMS(3), F32S(0, 2, 0), 0, 0);
	t_free_outputs(g, o);
	tensor_free(in);
	/* and it prints back under the output's name */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	print_graph(f, g);
	fclose(f);
	cr_assert(strstr(buf, "y : f32[3] = abs(a)") != NULL, "%s", buf);
	free(buf);
	graph_free(g);
}

Test(rewrite, outputs_that_cannot_be_replaced)
{
	Graph *g = t_model("graph g {\n  input x : f32[3]\n  const k : f32[3] = fill(2)\n  a = relu(x)\n  b = neg(a)\n"
			   "  c = mul(b, k)\n  output b, c, x\n}\n");
	Value *x = val(g, "x"), *k = val(g, "k"), *a = val(g, "a"), *b = val(g, "b"), *c = val(g, "c");
	cr_assert_not(graph_can_replace(g, b, x), "an input cannot take an output's name");
	cr_assert_not(graph_can_replace(g, b, k), "nor a constant");
	cr_assert_not(graph_can_replace(g, b, c), "nor another output");
	cr_assert_not(graph_can_replace(g, b, b));
	cr_assert_not(graph_can_replace(g, x, a), "an input that is an output keeps its name");
	cr_assert(graph_can_replace(g, b, a));
	cr_assert(graph_can_replace(g, a, x), "a value that is no output can become anything");
	/* a refused replacement changes nothing */
	cr_assert_not(graph_replace_uses(g, b, x));
	cr_assert_not(graph_replace_uses(g, x, a));
	cr_assert_str_eq(x->name, "x");
	cr_assert(g->outputs[2] == x && g->inputs[0] == x);
	cr_assert_eq(b->nusers, 1);
	cr_assert(structure_ok(g));
	t_verify_ok(g);
	graph_free(g);
}

Test(rewrite, insertion_keeps_topological_order)
{
	Graph *g = t_model("graph g {\n  input x : f32[2]\n  a = relu(x)\n  b = neg(a)\n  c = abs(b)\n  output c\n}\n");
	Value *x = val(g, "x"), *a = val(g, "a");
	/* at the front (reads only an input), in the middle, at the end */
	Node *n0 = insert_typed(g, 0, OP_SQRT, &x, 1, "s");
	Node *n1 = insert_typed(g, 2, OP_EXP, &a, 1, "a");
	cr_assert_str_eq(n1->out[0]->name, "a_1", "a fresh name from the base");
	Node *n2 = insert_typed(g, g->nnodes, OP_NEG, &n1->out[0], 1, "a");
	cr_assert_str_eq(n2->out[0]->name, "a_2");
	cr_assert_eq(g->nnodes, 6);
	cr_assert(g->nodes[0] == n0 && g->nodes[2] == n1 && g->nodes[5] == n2);
	cr_assert_eq(g->nodes[1], a->def);
	for (int i = 0; i < g->nnodes; i++)
		cr_assert_eq(graph_node_pos(g, g->nodes[i]), i);
	check_ids(g);
	cr_assert(structure_ok(g));
	cr_assert(n1->out[0]->typed && n1->out[0]->type.shape.dim[0] == 2);
	cr_assert_eq(a->nusers, 2, "b and the exp");
	graph_free(g);
}

Test(rewrite, insertion_before_an_operand_is_caught)
{
	Graph *g = t_model("graph g {\n  input x : f32[2]\n  a = relu(x)\n  b = neg(a)\n  output b\n}\n");
	Value *a = val(g, "a");
	Node *n = graph_insert_node(g, 0, OP_EXP, &a, 1, 1, "e", (Loc){"t", 1, 1});
	cr_assert_not_null(n);
	structure_fails(g, "used before it is defined");
	graph_free(g);
}

Test(rewrite, inserted_tensor_is_a_typed_constant)
{
	Graph *g = t_model("graph g {\n  input x : f32[3]\n  y = relu(x)\n  output y\n}\n");
	Value *x = val(g, "x"), *y = val(g, "y");
	Tensor *t = t_f32(1, DIMS(3), F32S(10, 20, 30));
	Node *k = graph_insert_tensor(g, 0, "k", t, (Loc){"t", 1, 1});
	cr_assert_eq(k->op, OP_CONSTANT);
	cr_assert(k->out[0]->typed && k->out[0]->type.dtype == DT_F32 && k->out[0]->type.shape.dim[0] == 3);
	Value *in[2] = {x, k->out[0]};
	Node *s = insert_typed(g, 2, OP_ADD, in, 2, "s");
	cr_assert(graph_replace_uses(g, y, s->out[0]));
	graph_remove_node(g, y->def);
	graph_compact(g);
	cr_assert(structure_ok(g));
	t_verify_ok(g);
	Tensor *xi = t_f32(1, DIMS(3), F32S(1, 2, 3));
	Tensor **o = t_run(g, &xi);
	t_assert_close(o[0], 1, DIMS(3), F32S(11, 22, 33), 0, 0);
	t_free_outputs(g, o);
	tensor_free(xi);
	graph_free(g);
}

Test(rewrite, remove_and_compact)
{
	Graph *g = t_model("graph g {\n  input x : f32[2]\n  input unused : f32[2]\n  a = relu(x)\n  b = neg(a)\n"
			   "  c = abs(b)\n  d = exp(x)\n  y = add(c, d)\n  output y\n}\n");
	Value *x = val(g, "x"), *c = val(g, "c"), *d = val(g, "d");
	int nodes = g->nnodes, values = g->nvalues;
	/* y = add(c, d) becomes add(x, d): the chain a, b, c goes */
	node_set_operand(val(g, "y")->def, 0, x);
	cr_assert_eq(c->nuses, 0);
	graph_remove_node(g, c->def);
	graph_remove_node(g, val(g, "b")->def);
	graph_remove_node(g, val(g, "a")->def);
	graph_remove_node(g, val(g, "a")->def); /* twice: no-op */
	cr_assert_eq(x->nusers, 2, "d and y");
	cr_assert_eq(g->nnodes, nodes, "detached, not yet freed");
	structure_fails(g, "removed node");
	graph_compact(g);
	cr_assert_eq(g->nnodes, nodes - 3);
	cr_assert_eq(g->nvalues, values - 3);
	cr_assert_null(graph_find_value(g, "a"));
	cr_assert_null(graph_find_value(g, "b"));
	cr_assert_null(graph_find_value(g, "c"));
	cr_assert(graph_find_value(g, "unused") != NULL, "inputs stay, used or not");
	cr_assert_eq(g->ninputs, 2);
	cr_assert(graph_find_value(g, "d") == d);
	check_ids(g);
	cr_assert(structure_ok(g));
	t_verify_ok(g);
	graph_free(g);
}

Test(rewrite, build_uses_after_direct_edits)
{
	Graph *g = t_model("graph g {\n  input x : f32[2]\n  a = relu(x)\n  b = neg(a)\n  output b\n}\n");
	Value *x = val(g, "x"), *a = val(g, "a"), *b = val(g, "b");
	b->def->in[0] = x; /* behind the use lists' back */
	structure_fails(g, "use list says");
	graph_build_uses(g);
	cr_assert(structure_ok(g));
	cr_assert_eq(a->nuses, 0);
	cr_assert_eq(x->nusers, 2);
	cr_assert_eq(b->nuses, 1, "the output");
	graph_free(g);
}

Test(rewrite, structure_check_catches_broken_graphs)
{
	const char *text = "graph g {\n  input x : f32[2]\n  a = relu(x)\n  b = neg(a)\n  c = abs(b)\n  output c\n}\n";
	/* use counts */
	Graph *g = t_model(text);
	val(g, "a")->nuses++;
	structure_fails(g, "'a' has 1 operand uses and 0 outputs, its use list says 1 and 1");
	graph_free(g);
	/* an order that is not topological */
	g = t_model(text);
	Node *t = g->nodes[0];
	g->nodes[0] = g->nodes[1];
	g->nodes[1] = t;
	g->nodes[0]->id = 0;
	g->nodes[1]->id = 1;
	structure_fails(g, "'a' is used before it is defined");
	graph_free(g);
	/* node numbering */
	g = t_model(text);
	g->nodes[1]->id = 7;
	structure_fails(g, "node 1 is numbered 7");
	graph_free(g);
	/* an output flag without the output */
	g = t_model(text);
	val(g, "b")->is_output = true;
	structure_fails(g, "'b' is marked an output");
	graph_free(g);
	/* an operand that is not a value of the graph */
	g = t_model(text);
	Value stray = {.name = "stray", .id = -1};
	Value *old = g->nodes[1]->in[0];
	g->nodes[1]->in[0] = &stray;
	structure_fails(g, "not a value of the graph");
	g->nodes[1]->in[0] = old;
	graph_free(g);
	/* a result that names another definition */
	g = t_model(text);
	g->nodes[2]->out[0]->def_index = 1;
	structure_fails(g, "names another definition");
	graph_free(g);
}

Test(rewrite, fresh_names)
{
	Graph *g = t_model("graph g {\n  input x : f32[2]\n  t = relu(x)\n  t_1 = neg(t)\n  output t_1\n}\n");
	char *a = graph_fresh_name(g, "u"), *b = graph_fresh_name(g, "t");
	cr_assert_str_eq(a, "u");
	cr_assert_str_eq(b, "t_2");
	free(a);
	free(b);
	graph_free(g);
}

Test(rewrite, set_operand_moves_one_use)
{
	Graph *g = t_model("graph g {\n  input x : f32[2]\n  a = relu(x)\n  b = add(a, a)\n  output b\n}\n");
	Value *x = val(g, "x"), *a = val(g, "a");
	Node *b = val(g, "b")->def;
	node_set_operand(b, 1, x);
	cr_assert_eq(a->nusers, 1);
	cr_assert_eq(x->nusers, 2);
	node_set_operand(b, 1, x); /* the same value: nothing moves */
	cr_assert_eq(x->nusers, 2);
	cr_assert(structure_ok(g));
	graph_free(g);
}
