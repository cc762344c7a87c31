/* Generated target tables, through the test-only targets of tests/md (the
 * unit tests link their registry): lookup, parameters, inheritance, the
 * legality decision of real nodes with constraints, and the generated
 * selector choosing fused forms by cost. */
#include <string.h>

#include "target.h"
#include "test_util.h"

static int nt_of(const Target *t, const char *name)
{
	for (int i = 0; i < t->grammar.nnts; i++)
		if (strcmp(t->grammar.nt_names[i], name) == 0)
			return i;
	cr_assert_fail("no nonterminal %s", name);
	return -1;
}

/* The instruction emitted at the root of the cover of n from nt. */
typedef struct {
	const Target *t;
	const char *names[16];
	int n;
} Emitted;

static void collect(const BursGrammar *g, int rule, BursNode *n, void *ctx)
{
	(void)n;
	Emitted *e = ctx;
	const BursRule *r = &g->rules[rule];
	if (r->emits && r->origin >= 0 && e->n < 16)
		e->names[e->n++] = e->t->rules[r->origin].name;
}

Test(target, registry_and_params)
{
	const Target *toy = target_lookup("toy"), *wide = target_lookup("toy-wide");
	cr_assert_not_null(toy);
	cr_assert_not_null(wide);
	cr_assert_null(target_lookup("no-such-target"));
	cr_assert_str_eq(toy->isa, "toy-1");
	cr_assert_eq(toy->vector_bits, 128);
	cr_assert_eq(wide->vector_bits, 256);
	cr_assert_str_eq(wide->parent, "toy");
	cr_assert_str_eq(wide->isa, "toy-1 + wide vectors");
	cr_assert_str_eq(wide->dialect, "gnu"); /* inherited */
	const ParamInfo *p = target_param(toy, "l1d_bytes");
	cr_assert_not_null(p);
	cr_assert_eq(p->n, 1);
	cr_assert_float_eq(p->values[0], 4096.0, 0);
	cr_assert_null(target_param(toy, "nope"));
	cr_assert_str_eq(toy->md_file, "tests/md/toy.md");
	cr_assert_neq(toy->md_hash, wide->md_hash);
}

Test(target, registers_and_abi)
{
	const Target *toy = target_lookup("toy"), *wide = target_lookup("toy-wide");
	const RegClassInfo *r = &toy->regclasses[0];
	cr_assert_str_eq(r->name, "r");
	cr_assert_eq(r->nregs, 8);
	cr_assert_str_eq(r->regs[7], "r7");
	cr_assert(r->reserved[7] && !r->reserved[0]);
	cr_assert(r->callee_saved[4] && r->callee_saved[5] && !r->callee_saved[3]);
	cr_assert_eq(toy->abi.nargs, 1);
	cr_assert_str_eq(toy->abi.args[0].cls, "r");
	cr_assert_eq(toy->abi.args[0].nregs, 4);
	cr_assert_str_eq(toy->abi.stack_pointer, "r7");
	/* toy-wide replaces the vector class: 16 registers of 256 bits */
	const RegClassInfo *q = NULL;
	for (int i = 0; i < wide->nregclasses; i++)
		if (strcmp(wide->regclasses[i].name, "q") == 0)
			q = &wide->regclasses[i];
	cr_assert_not_null(q);
	cr_assert_eq(q->nregs, 16);
	cr_assert_eq(q->width, 256);
}

Test(target, inherited_instruction_overridden)
{
	const Target *toy = target_lookup("toy"), *wide = target_lookup("toy-wide");
	double toy_lat = -1, wide_lat = -1;
	for (int i = 0; i < toy->nrules; i++)
		if (strcmp(toy->rules[i].name, "vdiv") == 0)
			toy_lat = toy->rules[i].latency;
	for (int i = 0; i < wide->nrules; i++)
		if (strcmp(wide->rules[i].name, "vdiv") == 0)
			wide_lat = wide->rules[i].latency;
	cr_assert_float_eq(toy_lat, 1.0, 0);  /* from class bin */
	cr_assert_float_eq(wide_lat, 6.0, 0); /* toy-wide's own */
}

static Node *node_of(Graph *g, const char *value)
{
	return graph_find_value(g, value)->def;
}

Test(target, legality_decisions_with_constraints)
{
	const Target *toy = target_lookup("toy");
	Graph *g = t_model("graph m {\n  input x : f32[1, 4, 8, 8]\n  input i : i64[3]\n"
			   "  const w : f32[4, 1, 3, 3] = zeros\n  const w1 : f32[4, 4, 1, 1] = zeros\n"
			   "  a = relu(x)\n  b = conv(a, w, group=4, pads=[1, 1, 1, 1])\n  c = conv(b, w1)\n"
			   "  e = exp(c)\n  j = add(i, i)\n  k = neg(i)\n  output e, j, k\n}\n");
	const LegalEntry *e = target_legality(toy, node_of(g, "a"));
	cr_assert_eq(e->action, LEGAL_NATIVE);
	cr_assert_str_eq(e->uses, "max.v");
	cr_assert_float_eq(e->cost, 0.25, 1e-12); /* one vmax (1 cycle) for 4 lanes */
	e = target_legality(toy, node_of(g, "b"));
	cr_assert_eq(e->action, LEGAL_FALLBACK);
	cr_assert_str_eq(e->reason, "grouped convolution runs on the host");
	e = target_legality(toy, node_of(g, "c"));
	cr_assert_eq(e->action, LEGAL_EXPAND);
	cr_assert_str_eq(e->rule, "loop_nest");
	cr_assert_str_eq(e->when_text, "((attr.group == 1) && (rank == 4))");
	e = target_legality(toy, node_of(g, "e"));
	cr_assert_eq(e->action, LEGAL_UNSUPPORTED);
	cr_assert_str_eq(e->reason, "not on the toy");
	e = target_legality(toy, node_of(g, "j"));
	cr_assert_eq(e->action, LEGAL_NATIVE);
	cr_assert_str_eq(e->uses, "add.i");
	e = target_legality(toy, node_of(g, "k"));
	cr_assert_eq(e->action, LEGAL_UNSUPPORTED);
	cr_assert_str_eq(e->reason, "the toy has no integer vector unit");
	int rows = 0;
	e = target_legality_for(toy, OP_CONV, DT_F32, &rows);
	cr_assert_eq(rows, 2);
	cr_assert_eq(e->action, LEGAL_EXPAND);
	graph_free(g);
}

Test(target, legality_query_helpers)
{
	Graph *g = t_model("graph m {\n  input x : f32[2, 3, 5]\n  y = softmax(x, axis=1)\n  output y\n}\n");
	const Node *n = g->nodes[0];
	cr_assert_eq(legal_rank(n, 0), 3);
	cr_assert_eq(legal_rank(n, 1), -1);
	cr_assert_eq(legal_dim(n, 0, -1), 5);
	cr_assert_eq(legal_dim(n, 0, 1), 3);
	cr_assert_eq(legal_dim(n, 0, 3), -1);
	cr_assert_eq(legal_dim(n, -1, 0), 2);
	cr_assert_eq(legal_numel(n), 30);
	cr_assert_eq(legal_attr(n, "axis"), 1);
	graph_free(g);
}

Test(target, selector_folds_broadcast_into_fma)
{
	/* fma.v(reg.v, bcast.v(reg.f), reg.v): vfma_bcast (1 cycle) beats
	 * vbcast + vfma (1 + 1). */
	const Target *toy = target_lookup("toy");
	BursNode a = {.op = SEL_REG_V}, s = {.op = SEL_REG_F}, c = {.op = SEL_REG_V};
	BursNode b = {.op = SEL_BCAST_V, .kid = {&s}};
	BursNode root = {.op = SEL_FMA_V, .kid = {&a, &b, &c}};
	burs_label(&toy->grammar, &root);
	int q = nt_of(toy, "q");
	cr_assert_eq(burs_cost(&root, q), 100);
	Emitted em = {toy, {0}, 0};
	cr_assert(burs_reduce(&toy->grammar, &root, q, collect, &em));
	cr_assert_eq(em.n, 1);
	cr_assert_str_eq(em.names[0], "vfma_bcast");
	burs_unlabel(&root);
}

Test(target, selector_folds_displacement_into_load)
{
	/* load.v(add.i(reg.i, const 16)): one vld with [r+16]; with an offset
	 * outside the 12-bit range it needs li + add + vld. */
	const Target *toy = target_lookup("toy");
	int q = nt_of(toy, "q");
	BursNode base = {.op = SEL_REG_I}, k = {.op = SEL_CONST_I, .ival = 16};
	BursNode sum = {.op = SEL_ADD_I, .kid = {&base, &k}};
	BursNode ld = {.op = SEL_LOAD_V, .kid = {&sum}};
	burs_label(&toy->grammar, &ld);
	cr_assert_eq(burs_cost(&ld, q), 100);
	Emitted em = {toy, {0}, 0};
	cr_assert(burs_reduce(&toy->grammar, &ld, q, collect, &em));
	cr_assert_eq(em.n, 2);
	cr_assert_str_eq(em.names[0], "addr"); /* the form [b+o] */
	cr_assert_str_eq(em.names[1], "vld");
	burs_unlabel(&ld);
	k.ival = 1 << 20;
	burs_label(&toy->grammar, &ld);
	cr_assert_eq(burs_cost(&ld, q), BURS_INF, "no rule materializes a 21-bit constant on the toy");
	burs_unlabel(&ld);
}

Test(target, store_is_a_statement)
{
	const Target *toy = target_lookup("toy");
	BursNode p = {.op = SEL_REG_I}, v = {.op = SEL_REG_V};
	BursNode st = {.op = SEL_STORE_V, .kid = {&p, &v}};
	burs_label(&toy->grammar, &st);
	cr_assert_eq(burs_cost(&st, nt_of(toy, "stmt")), 100);
	cr_assert_eq(burs_cost(&st, nt_of(toy, "q")), BURS_INF);
	burs_unlabel(&st);
}

/* The generated index of rules by operator (what burs_label tries at a
 * node): every rule once, under its own operator (chain rules under
 * SEL_COUNT), in the grammar's order; and labeling through it gives the
 * costs and rules of trying every rule. */
Test(target, rules_by_operator_index)
{
	const char *names[] = {"toy", "toy-wide"};
	for (int ti = 0; ti < 2; ti++) {
		const BursGrammar *g = &target_lookup(names[ti])->grammar;
		cr_assert_not_null(g->by_op);
		cr_assert_eq(g->by_op[0], 0);
		cr_assert_eq(g->by_op[SEL_COUNT + 1], g->nrules);
		int *seen = calloc((size_t)g->nrules, sizeof *seen);
		for (int op = 0; op <= SEL_COUNT; op++)
			for (int i = g->by_op[op]; i < g->by_op[op + 1]; i++) {
				int r = g->op_rules[i];
				cr_assert(r >= 0 && r < g->nrules);
				cr_assert_eq(g->rules[r].op, op < SEL_COUNT ? op : -1);
				cr_assert(i == g->by_op[op] || g->op_rules[i - 1] < r, "rules keep their order");
				seen[r]++;
			}
		for (int r = 0; r < g->nrules; r++)
			cr_assert_eq(seen[r], 1, "rule %d listed %d times", r, seen[r]);
		free(seen);
		BursGrammar flat = *g;
		flat.by_op = flat.op_rules = NULL;
		BursNode a = {.op = SEL_REG_V}, s = {.op = SEL_REG_F};
		BursNode b = {.op = SEL_BCAST_V, .kid = {&s}};
		BursNode base = {.op = SEL_REG_I}, k = {.op = SEL_CONST_I, .ival = 16};
		BursNode sum = {.op = SEL_ADD_I, .kid = {&base, &k}};
		BursNode ld = {.op = SEL_LOAD_V, .kid = {&sum}};
		BursNode fma = {.op = SEL_FMA_V, .kid = {&a, &b, &ld}};
		BursNode st = {.op = SEL_STORE_V, .kid = {&base, &fma}};
		BursNode *all[] = {&a, &s, &b, &base, &k, &sum, &ld, &fma, &st};
		burs_label(&flat, &st);
		int32_t cost[9][64];
		int16_t rule[9][64];
		cr_assert(g->nnts <= 64);
		for (int i = 0; i < 9; i++)
			for (int nt = 0; nt < g->nnts; nt++) {
				cost[i][nt] = all[i]->cost[nt];
				rule[i][nt] = all[i]->rule[nt];
			}
		burs_unlabel(&st);
		burs_label(g, &st);
		for (int i = 0; i < 9; i++)
			for (int nt = 0; nt < g->nnts; nt++) {
				cr_assert_eq(all[i]->cost[nt], cost[i][nt]);
				cr_assert_eq(all[i]->rule[nt], rule[i][nt]);
			}
		burs_unlabel(&st);
	}
}
