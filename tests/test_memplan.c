/* test_memplan: memory planning (core/memplan.c): lifetimes, sharing,
 * in place, views, the one-slot layout, and a property over random graphs:
 * no two values that are live at once share bytes unless they are the
 * same data (a view) or one is written in place over the other where that
 * one dies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "memplan.h"
#include "target.h"
#include "test_util.h"

static int vid(const Graph *g, const char *name) { return t_val(g, name)->id; }

static int64_t vbytes(const Value *v)
{
	return shape_numel(&v->type.shape) * (int64_t)dtype_size(v->type.dtype);
}

static bool in_workspace(const Value *v)
{
	return v->def && v->def->op != OP_CONSTANT && !v->is_output && !v->is_input;
}

/* The position of each value's definition and last use; a node of a
 * group (Node.group) counts as anywhere from the group's first node to
 * its last (lo[i], hi[i]). */
static void own_lifetimes(const Graph *g, int *def, int *use, int *lo, int *hi)
{
	int n = g->nnodes;
	for (int i = 0; i < n; i++) {
		lo[i] = hi[i] = i;
		for (int j = 0; j < n; j++)
			if (g->nodes[i]->group >= 0 && g->nodes[j]->group == g->nodes[i]->group) {
				if (j < lo[i])
					lo[i] = j;
				if (j > hi[i])
					hi[i] = j;
			}
	}
	for (int v = 0; v < g->nvalues; v++)
		def[v] = use[v] = -1;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < g->nodes[i]->nout; k++) {
			def[g->nodes[i]->out[k]->id] = lo[i];
			use[g->nodes[i]->out[k]->id] = hi[i];
		}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < g->nodes[i]->nin; k++)
			if (use[g->nodes[i]->in[k]->id] < hi[i])
				use[g->nodes[i]->in[k]->id] = hi[i];
}

/* Does a node after position `after` read a (or a view of it)?  (Nodes
 * run one by one: even inside one kernel, a later node must still find it.) */
static bool read_after(const Graph *g, const MemPlan *m, int a, int after)
{
	for (int j = after + 1; j < g->nnodes; j++)
		for (int k = 0; k < g->nodes[j]->nin; k++)
			if (m->alias[g->nodes[j]->in[k]->id] == m->alias[a])
				return true;
	return false;
}

/* Was b (or what it is a view of) written in place over a's storage,
 * directly or through values written over it in turn, in a kernel where
 * a dies, with no node after b's reading a? */
static bool written_over(const Graph *g, const MemPlan *m, const int *use, const int *hi, int a, int b)
{
	for (int cur = m->alias[b]; m->inplace[cur] >= 0;) {
		int prev = m->alias[m->inplace[cur]];
		if (prev == m->alias[a])
			return use[a] <= hi[g->values[b]->def->id] && !read_after(g, m, a, g->values[b]->def->id);
		cur = prev;
	}
	return false;
}

/* The plan's contract, checked from the graph alone: every workspace value
 * has an aligned place inside the planned bytes; a view's bytes are its
 * storage's; two values live at once share no byte unless they are views
 * of the same storage, or one was written in place (by an elementwise node,
 * over an operand of its shape) over the other at the node where that one
 * dies.  Returns the number of pairs checked that share bytes. */
static int check_plan(const Graph *g, const MemPlan *m)
{
	int nv = g->nvalues, *def = calloc((size_t)nv + 1, sizeof *def), *use = calloc((size_t)nv + 1, sizeof *use);
	int *lo = calloc((size_t)g->nnodes + 1, sizeof *lo), *hi = calloc((size_t)g->nnodes + 1, sizeof *hi);
	own_lifetimes(g, def, use, lo, hi);
	cr_assert_eq(m->nvalues, nv);
	cr_assert_leq(m->bytes, m->naive_bytes);
	for (int v = 0; v < nv; v++) {
		const Value *x = g->values[v];
		if (!in_workspace(x)) {
			cr_assert_eq(m->offset[v], -1, "%s is no workspace value but has offset %lld", x->name, (long long)m->offset[v]);
			if (x->is_output)
				cr_assert_eq(m->alias[v], v, "output %s is a view", x->name);
			continue;
		}
		int r = m->alias[v];
		if (r != v) {
			cr_assert_eq(vbytes(g->values[r]), vbytes(x));
			cr_assert_eq(m->offset[v], in_workspace(g->values[r]) ? m->offset[r] : -1, "view %s", x->name);
			continue;
		}
		cr_assert_geq(m->offset[v], 0, "%s has no place", x->name);
		cr_assert_eq(m->offset[v] % 64, 0);
		cr_assert_leq(m->offset[v] + vbytes(x), m->bytes, "%s ends past the plan", x->name);
		cr_assert(m->first[v] <= def[v] && m->last[v] >= use[v], "%s: reserved [%d, %d], live [%d, %d]", x->name,
			  m->first[v], m->last[v], def[v], use[v]);
		if (m->inplace[v] >= 0) {
			const Value *o = g->values[m->inplace[v]];
			const Node *n = x->def;
			bool operand = false;
			for (int k = 0; k < n->nin; k++)
				operand |= n->in[k] == o;
			cr_assert(operand && shape_eq(&o->type.shape, &x->type.shape), "%s in place of %s", x->name, o->name);
		}
	}
	int shared = 0;
	for (int u = 0; u < nv; u++)
		for (int v = u + 1; v < nv; v++) {
			const Value *a = g->values[u], *b = g->values[v];
			if (m->offset[u] < 0 || m->offset[v] < 0 || vbytes(a) == 0 || vbytes(b) == 0)
				continue;
			if (m->offset[u] >= m->offset[v] + vbytes(b) || m->offset[v] >= m->offset[u] + vbytes(a))
				continue; /* no byte in common */
			shared++;
			if (m->alias[u] == m->alias[v])
				continue; /* the same data */
			if (def[u] > use[v] || def[v] > use[u])
				continue; /* one after the other */
			/* live at once: only where one dies and the other is written
			 * over it in place */
			bool ok = written_over(g, m, use, hi, u, v) || written_over(g, m, use, hi, v, u);
			cr_assert(ok, "%s [%d, %d] at %lld and %s [%d, %d] at %lld share bytes", a->name, def[u], use[u],
				  (long long)m->offset[u], b->name, def[v], use[v], (long long)m->offset[v]);
		}
	free(def);
	free(use);
	free(lo);
	free(hi);
	return shared;
}

Test(memplan, chain_peak_is_two_largest)
{
	/* 128, 256, 512 and 1024 bytes, one after the other */
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[16]\n"
			   "  a = concat(x, x, axis=0)\n"
			   "  b = concat(a, a, axis=0)\n"
			   "  c = concat(b, b, axis=0)\n"
			   "  d = concat(c, c, axis=0)\n"
			   "  e = transpose(d)\n"
			   "  output e\n"
			   "}\n");
	MemPlan *m = memplan_build(g, true);
	cr_assert_eq(m->bytes, 1024 + 512);
	cr_assert_eq(m->naive_bytes, 128 + 256 + 512 + 1024);
	cr_assert_eq(m->offset[vid(g, "d")], 0);
	cr_assert_eq(m->offset[vid(g, "c")], 1024);
	cr_assert_eq(m->offset[vid(g, "b")], 0);   /* d's bytes, before d */
	cr_assert_eq(m->offset[vid(g, "a")], 256); /* d's too, beside b */
	cr_assert_eq(m->nshared, 2);
	cr_assert_eq(m->ninplace, 0);
	cr_assert_eq(m->first[vid(g, "b")], 1);
	cr_assert_eq(m->last[vid(g, "b")], 2);
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, grow_then_shrink)
{
	/* 128, 1024, 256, 512: the peak is the largest neighbours, 1024 + 256 */
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[32]\n"
			   "  a = transpose(x)\n"
			   "  b = concat(a, a, a, a, a, a, a, a, axis=0)\n"
			   "  c = slice(b, starts=[0], ends=[64], axes=[0])\n"
			   "  d = concat(c, c, axis=0)\n"
			   "  e = transpose(d)\n"
			   "  output e\n"
			   "}\n");
	MemPlan *m = memplan_build(g, true);
	cr_assert_eq(m->bytes, 1024 + 256);
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, in_place_of_a_dying_operand)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[16]\n"
			   "  a = concat(x, x, axis=0)\n"
			   "  r = relu(a)\n"
			   "  s = neg(r)\n"
			   "  output s\n"
			   "}\n");
	MemPlan *m = memplan_build(g, true);
	int a = vid(g, "a"), r = vid(g, "r");
	cr_assert_eq(m->inplace[r], a);
	cr_assert_eq(m->offset[r], m->offset[a]);
	cr_assert_eq(m->ninplace, 1);
	cr_assert_eq(m->bytes, 128);
	cr_assert_eq(m->first[a], 0);
	cr_assert_eq(m->last[a], 2); /* a's bytes until s reads them as r */
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, not_in_place_of_a_value_used_later)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[16]\n"
			   "  a = concat(x, x, axis=0)\n"
			   "  r = relu(a)\n"
			   "  s = add(r, a)\n"
			   "  output s\n"
			   "}\n");
	MemPlan *m = memplan_build(g, true);
	int a = vid(g, "a"), r = vid(g, "r");
	cr_assert_eq(m->inplace[r], -1);
	cr_assert_neq(m->offset[r], m->offset[a]);
	cr_assert_eq(m->bytes, 256);
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, not_in_place_over_a_broadcast_operand)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[16]\n"
			   "  input y : f32[2, 16]\n"
			   "  a = neg(x)\n"
			   "  b = neg(y)\n"
			   "  s = add(a, b)\n"
			   "  t = transpose(s)\n"
			   "  output t\n"
			   "}\n");
	MemPlan *m = memplan_build(g, true);
	cr_assert_eq(m->inplace[vid(g, "s")], vid(g, "b")); /* b has s's shape, a is broadcast */
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, views_alias_their_storage)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[2, 16]\n"
			   "  xv = reshape(x, shape=[32])\n"
			   "  a = neg(xv)\n"
			   "  v = reshape(a, shape=[4, 8])\n"
			   "  w = flatten(v, axis=1)\n"
			   "  t = transpose(w)\n"
			   "  u = relu(v)\n"
			   "  output t, u\n"
			   "}\n");
	MemPlan *m = memplan_build(g, true);
	int x = vid(g, "x"), xv = vid(g, "xv"), a = vid(g, "a"), v = vid(g, "v"), w = vid(g, "w");
	cr_assert_eq(m->alias[xv], x); /* a view of an input: the input's bytes */
	cr_assert_eq(m->offset[xv], -1);
	cr_assert_eq(m->alias[v], a);
	cr_assert_eq(m->alias[w], a); /* a view of a view: the same storage */
	cr_assert_eq(m->offset[v], m->offset[a]);
	cr_assert_eq(m->offset[w], m->offset[a]);
	cr_assert_eq(m->naliased, 3);
	/* the storage lives as long as its last view */
	cr_assert_eq(m->last[a], 5);
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, view_in_place_chain)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[32]\n"
			   "  a = neg(x)\n"
			   "  v = reshape(a, shape=[2, 16])\n"
			   "  r = relu(v)\n"
			   "  t = transpose(r)\n"
			   "  output t\n"
			   "}\n");
	MemPlan *m = memplan_build(g, true);
	int a = vid(g, "a"), r = vid(g, "r");
	cr_assert_eq(m->inplace[r], vid(g, "v"));
	cr_assert_eq(m->offset[r], m->offset[a]);
	cr_assert_eq(m->bytes, 128);
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, a_view_that_is_an_output_has_its_own_buffer)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[32]\n"
			   "  a = neg(x)\n"
			   "  v = reshape(a, shape=[2, 16])\n"
			   "  output v\n"
			   "}\n");
	MemPlan *m = memplan_build(g, true);
	int v = vid(g, "v");
	cr_assert_eq(m->alias[v], v);
	cr_assert_eq(m->offset[v], -1);
	cr_assert_eq(m->naliased, 0);
	cr_assert_geq(m->offset[vid(g, "a")], 0);
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, dropout_with_a_used_mask_is_no_view)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[32]\n"
			   "  a = neg(x)\n"
			   "  y, mask = dropout(a)\n"
			   "  b = neg(y)\n"
			   "  output b, mask\n"
			   "}\n");
	MemPlan *m = memplan_build(g, true);
	cr_assert_eq(m->alias[vid(g, "y")], vid(g, "y"));
	cr_assert_eq(m->naliased, 0);
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, no_reuse_is_one_slot_per_value)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[16]\n"
			   "  const w : f32[16, 3] = random(1, -1, 1)\n"
			   "  a = concat(x, x, axis=0)\n"
			   "  r = relu(a)\n"
			   "  v = reshape(r, shape=[2, 16])\n"
			   "  m = matmul(v, w)\n"
			   "  e = relu(m)\n"
			   "  output e\n"
			   "}\n");
	MemPlan *m = memplan_build(g, false);
	/* in the order of the nodes, each 64-byte aligned: a 128, r 128, v 128, m 24 -> 64 */
	static const char *const names[] = {"a", "r", "v", "m"};
	static const int64_t at[] = {0, 128, 256, 384};
	for (int i = 0; i < 4; i++) {
		int v = vid(g, names[i]);
		cr_assert_eq(m->offset[v], at[i], "%s at %lld", names[i], (long long)m->offset[v]);
		cr_assert_eq(m->alias[v], v);
		cr_assert_eq(m->inplace[v], -1);
		cr_assert_eq(m->first[v], 0);
		cr_assert_eq(m->last[v], g->nnodes - 1);
	}
	cr_assert_eq(m->offset[vid(g, "w")], -1);
	cr_assert_eq(m->offset[vid(g, "e")], -1);
	cr_assert_eq(m->offset[vid(g, "x")], -1);
	cr_assert_eq(m->bytes, 448);
	cr_assert_eq(m->naive_bytes, 448);
	cr_assert_eq(m->nshared + m->ninplace + m->naliased, 0);
	check_plan(g, m);
	memplan_free(m);
	MemPlan *r = memplan_build(g, true);
	cr_assert_eq(r->naive_bytes, 448);
	cr_assert_lt(r->bytes, 448);
	check_plan(g, r);
	memplan_free(r);
	graph_free(g);
}

Test(memplan, a_kernel_of_several_nodes_keeps_its_operands)
{
	/* a group spanning m and the add: x2 (read by m alone) must stay until
	 * the group's last node, and the add may not take bytes of b (from
	 * outside a group with a contraction) */
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[4, 16]\n"
			   "  const w : f32[16, 16] = random(1, -1, 1)\n"
			   "  x2 = neg(x)\n"
			   "  b = neg(x)\n"
			   "  m = matmul(x2, w)\n"
			   "  s = add(b, m)\n"
			   "  t = transpose(s)\n"
			   "  output t\n"
			   "}\n");
	for (int i = 0; i < g->nnodes; i++)
		g->nodes[i]->group = -1;
	Node *mm = g->values[vid(g, "m")]->def, *add = g->values[vid(g, "s")]->def;
	mm->group = add->group = 0; /* one kernel */
	MemPlan *m = memplan_build(g, true);
	int x2 = vid(g, "x2"), b = vid(g, "b"), s = vid(g, "s");
	cr_assert_eq(m->last[x2], add->id);
	cr_assert_neq(m->inplace[s], b);
	cr_assert_eq(m->inplace[s], vid(g, "m")); /* its own kernel's value */
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, not_in_place_of_a_value_a_later_node_of_the_group_reads)
{
	/* x * sigmoid(x) as one elementwise kernel after fuse: s may not take
	 * t's bytes, since y (later in the same group) still reads t; the
	 * backend lowers a group node by node (found in review: y = s * s) */
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[4, 8]\n"
			   "  const w : f32[8, 8] = random(1, -1, 1)\n"
			   "  t = matmul(x, w)\n"
			   "  s = sigmoid(t)\n"
			   "  y = mul(t, s)\n"
			   "  u = transpose(x)\n"
			   "  a = exp(u)\n"
			   "  b = neg(u)\n"
			   "  c = add(a, b)\n"
			   "  z = add(c, u)\n"
			   "  output y, z\n"
			   "}\n");
	t_run_pass(g, pass_fuse, (PassContext){.opt_level = 2});
	cr_assert_eq(g->values[vid(g, "s")]->def->group, g->values[vid(g, "y")]->def->group, "one kernel");
	MemPlan *m = memplan_build(g, true);
	cr_assert_neq(m->inplace[vid(g, "s")], vid(g, "t"));
	cr_assert_neq(m->inplace[vid(g, "a")], vid(g, "u"));
	cr_assert_neq(m->inplace[vid(g, "b")], vid(g, "u"));
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, a_transpose_read_by_a_matmul_keeps_its_operand)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[4, 16]\n"
			   "  input y : f32[4, 16]\n"
			   "  k = neg(y)\n"
			   "  kt = transpose(k)\n"
			   "  q = neg(x)\n"
			   "  s = matmul(q, kt)\n"
			   "  t = transpose(s)\n"
			   "  output t\n"
			   "}\n");
	int k = vid(g, "k"), q = vid(g, "q"), s = g->values[vid(g, "s")]->def->id, kt = g->values[vid(g, "kt")]->def->id;
	/* any target, one with a matrix engine, or fixed vectors (the GEMM
	 * packs B^T into its panels): until the matmul */
	const Target *npu = target_lookup("npu-systolic"), *x86 = target_lookup("x86-avx2"), *rvv = target_lookup("riscv-rvv");
	cr_assert(npu && x86 && rvv);
	MemPlan *m = memplan_build(g, true), *mn = memplan_build_for(g, true, npu), *mx = memplan_build_for(g, true, x86);
	cr_assert_eq(m->last[k], s);
	cr_assert_eq(mn->last[k], s);
	cr_assert_eq(mx->last[k], s);
	cr_assert_neq(m->offset[k], m->offset[q]); /* (else q could take k's bytes) */
	check_plan(g, m);
	check_plan(g, mn);
	check_plan(g, mx);
	memplan_free(m);
	memplan_free(mn);
	memplan_free(mx);
	/* scalable vectors (strips need B contiguous along n) read kt itself */
	m = memplan_build_for(g, true, rvv);
	cr_assert_eq(m->last[k], kt);
	cr_assert_eq(m->offset[k], m->offset[q]);
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
}

/* ---- random graphs ------------------------------------------------------------- */
static uint64_t rng_state;

static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)(rng_state >> 33) % n;
}

typedef struct {
	char name[16];
	int r, c;
	bool used;
} GVal;

/* A random DAG of elementwise ops (some broadcasting), matmuls, reshapes,
 * transposes and concats over 2-d f32 values; every value nothing reads
 * is an output. */
static char *random_model(int nodes)
{
	static const int dims[] = {1, 2, 4, 8, 16};
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	GVal *v = calloc((size_t)nodes + 2, sizeof *v);
	int nv = 0;
	fputs("graph rnd {\n", o);
	for (int i = 0; i < 2; i++) {
		GVal *x = &v[nv++];
		snprintf(x->name, sizeof x->name, "in%d", i);
		x->r = dims[1 + rnd(4)];
		x->c = dims[1 + rnd(4)];
		fprintf(o, "  input %s : f32[%d, %d]\n", x->name, x->r, x->c);
	}
	for (int i = 0; i < nodes; i++) {
		/* operands: mostly recent values */
		int a = nv - 1 - (int)rnd(nv < 4 ? (unsigned)nv : 4);
		if (rnd(4) == 0)
			a = (int)rnd((unsigned)nv);
		GVal *x = &v[a], *y = &v[nv];
		snprintf(y->name, sizeof y->name, "v%d", i);
		int b = -1;
		for (int k = 0; k < nv && b < 0; k++) {
			int j = (int)rnd((unsigned)nv);
			if (j != a && v[j].r == x->r && v[j].c == x->c)
				b = j;
		}
		switch (rnd(7)) {
		case 0:
		case 1:
			fprintf(o, "  %s = %s(%s)\n", y->name, rnd(2) ? "relu" : "neg", x->name);
			y->r = x->r, y->c = x->c;
			break;
		case 2:
			if (b >= 0) {
				fprintf(o, "  %s = %s(%s, %s)\n", y->name, rnd(2) ? "add" : "mul", x->name, v[b].name);
				v[b].used = true;
			} else { /* broadcast a row */
				fprintf(o, "  const w%d : f32[1, %d] = random(%d, -1, 1)\n", i, x->c, i + 1);
				fprintf(o, "  %s = %s(w%d, %s)\n", y->name, rnd(2) ? "sub" : "add", i, x->name);
			}
			y->r = x->r, y->c = x->c;
			break;
		case 3: {
			int k = dims[1 + rnd(4)];
			fprintf(o, "  const w%d : f32[%d, %d] = random(%d, -1, 1)\n", i, x->c, k, i + 1);
			fprintf(o, "  %s = matmul(%s, w%d)\n", y->name, x->name, i);
			y->r = x->r, y->c = k;
			break;
		}
		case 4:
			fprintf(o, "  %s = reshape(%s, shape=[%d, %d])\n", y->name, x->name, x->c, x->r);
			y->r = x->c, y->c = x->r;
			break;
		case 5:
			fprintf(o, "  %s = transpose(%s)\n", y->name, x->name);
			y->r = x->c, y->c = x->r;
			break;
		default:
			if (b >= 0) {
				fprintf(o, "  %s = concat(%s, %s, axis=0)\n", y->name, x->name, v[b].name);
				v[b].used = true;
				y->r = 2 * x->r, y->c = x->c;
			} else {
				fprintf(o, "  %s = sum(%s, %s, %s)\n", y->name, x->name, x->name, x->name);
				y->r = x->r, y->c = x->c;
			}
			break;
		}
		x->used = true;
		nv++;
	}
	fputs("  output", o);
	bool first = true;
	for (int i = 2; i < nv; i++)
		if (!v[i].used || i == nv - 1) {
			fprintf(o, "%s %s", first ? "" : ",", v[i].name);
			first = false;
		}
	fputs("\n}\n", o);
	/* unused inputs are fine */
	fclose(o);
	free(v);
	return buf;
}

Test(memplan, random_graphs_never_share_live_bytes)
{
	int total_shared = 0, inplace = 0, views = 0;
	for (int seed = 1; seed <= 60; seed++) {
		rng_state = (uint64_t)seed * 0x9E3779B97F4A7C15ULL;
		char *text = random_model(5 + seed % 40);
		Graph *g = t_model(text);
		/* ungrouped, then grouped by the fuse pass (kernels of several
		 * nodes: their reads count at the kernel's end) */
		for (int pass = 0; pass < 4; pass++) {
			int reuse = pass & 1;
			if (pass == 2)
				t_run_pass(g, pass_fuse, (PassContext){.opt_level = 2});
			MemPlan *m = memplan_build(g, reuse);
			int shared = check_plan(g, m);
			if (reuse) {
				total_shared += shared;
				inplace += m->ninplace;
				views += m->naliased;
			} else {
				cr_assert_eq(shared, 0, "seed %d: one slot per value, yet bytes shared", seed);
			}
			memplan_free(m);
		}
		graph_free(g);
		free(text);
	}
	/* the graphs exercise what is checked */
	cr_assert_gt(total_shared, 50);
	cr_assert_gt(inplace, 10);
	cr_assert_gt(views, 10);
}

Test(memplan, print_lists_each_value)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[32]\n"
			   "  a = neg(x)\n"
			   "  v = reshape(a, shape=[2, 16])\n"
			   "  r = relu(v)\n"
			   "  t = transpose(r)\n"
			   "  output t\n"
			   "}\n");
	MemPlan *m = memplan_build(g, true);
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	memplan_print(o, g, m);
	fclose(o);
	cr_assert(strstr(buf, "# memory plan of g: 128 bytes (one slot per value: 384); 0 shared, 1 in place, 1 views\n"), "%s", buf);
	cr_assert(strstr(buf, "a        128 bytes at          0  live [0, 1]\n"), "%s", buf);
	cr_assert(strstr(buf, "v        128 bytes at          0  live [1, 2]  view of a\n"), "%s", buf);
	cr_assert(strstr(buf, "r        128 bytes at          0  live [2, 3]  in place of v\n"), "%s", buf);
	cr_assert(strstr(buf, "# peak: 128 bytes\n"), "%s", buf);
	cr_assert_null(strstr(buf, "\nt "), "%s", buf); /* an output: not planned */
	free(buf);
	memplan_free(m);
	graph_free(g);
}

Test(memplan, many_overlapping_lifetimes_first_fit_in_time)
{
	/* 2900 values live to the end (4.2 million pairs of overlapping
	 * lifetimes, past what greedy by size takes) beside a chain of 200 */
	enum { LONG = 2900, CHAIN = 200 };
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	fputs("graph many {\n  input x : f32[16]\n", o);
	for (int i = 0; i < LONG; i++)
		fprintf(o, "  l%d = neg(x)\n", i);
	fputs("  c0 = transpose(x)\n", o);
	for (int i = 1; i < CHAIN; i++)
		fprintf(o, "  c%d = transpose(c%d)\n", i, i - 1);
	fputs("  s = sum(", o);
	for (int i = 0; i < LONG; i++)
		fprintf(o, "l%d, ", i);
	fprintf(o, "c%d)\n  output s\n}\n", CHAIN - 1);
	fclose(o);
	Graph *g = t_model(buf);
	MemPlan *m = memplan_build(g, true);
	/* every long value has its own 64 bytes; the chain reuses two slots */
	cr_assert_eq(m->naive_bytes, (int64_t)(LONG + CHAIN) * 64);
	cr_assert_eq(m->bytes, (int64_t)(LONG + 2) * 64, "%lld", (long long)m->bytes);
	cr_assert_eq(m->nshared, CHAIN - 2);
	check_plan(g, m);
	memplan_free(m);
	graph_free(g);
	free(buf);
}

/* ---- the backend's use of the plan ------------------------------------------------ */
Test(memplan, codegen_lowers_no_kernel_for_a_view)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[4, 16]\n"
			   "  a = neg(x)\n"
			   "  v = reshape(a, shape=[64])\n"
			   "  r = relu(v)\n"
			   "  y = transpose(r)\n"
			   "  output y\n"
			   "}\n");
	const Target *t = target_lookup("x86-avx2");
	Diag d;
	diag_init(&d);
	MemPlan *m = memplan_build_for(g, true, t);
	Program *p = codegen(g, t, m, NULL, &d);
	memplan_free(m); /* (the program keeps nothing of it) */
	cr_assert_not_null(p);
	cr_assert_eq(p->nkernels, 3); /* neg, relu, transpose */
	cr_assert_eq(p->naliased, 1);
	cr_assert_eq(p->ninplace, 1);
	cr_assert_eq(p->planned_bytes, 256);
	cr_assert_eq(p->workspace_bytes, 256);
	cr_assert_eq(p->naive_bytes, 3 * 256);
	program_free(p);
	/* no plan: one slot per value, the view a copy */
	p = codegen(g, t, NULL, NULL, &d);
	cr_assert_not_null(p);
	cr_assert_eq(p->nkernels, 4);
	cr_assert_eq(p->workspace_bytes, 3 * 256);
	cr_assert_eq(p->naliased + p->ninplace + p->nshared, 0);
	program_free(p);
	diag_free(&d);
	graph_free(g);
}

Test(memplan, codegen_moves_a_result_written_before_its_lifetime)
{
	/* on the NPU the conv's kernel computes the relu too: were r given
	 * bytes of its own from its node on (here: t's, which the conv reads),
	 * the kernel would write them while t is still read; the backend
	 * moves r past the plan */
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[1, 16, 8, 8]\n"
			   "  const w : f32[16, 16, 3, 3] = normal(seed=1, mean=0, std=0.1)\n"
			   "  t = neg(x)\n"
			   "  c = conv(t, w, kernel_shape=[3, 3], pads=[1, 1, 1, 1])\n"
			   "  r = relu(c)\n"
			   "  y = transpose(r)\n"
			   "  output y\n"
			   "}\n");
	const Target *npu = target_lookup("npu-systolic");
	cr_assert_not_null(npu);
	MemPlan *m = memplan_build_for(g, true, npu);
	int t = vid(g, "t"), c = vid(g, "c"), r = vid(g, "r");
	cr_assert_eq(m->inplace[r], c);
	/* the plan without r in place: r over t's bytes from r's node on */
	m->inplace[r] = -1;
	m->offset[r] = m->offset[t];
	m->first[r] = g->values[r]->def->id;
	m->last[r] = g->values[vid(g, "y")]->def->id;
	int64_t planned = m->bytes;
	Diag d;
	diag_init(&d);
	char *loops = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&loops, &len);
	Program *p = codegen(g, npu, m, o, &d);
	fclose(o);
	cr_assert_not_null(p);
	cr_assert(strstr(loops, "fused into this kernel: relu r"), "%s", loops);
	cr_assert(strstr(loops, "(r written before its planned lifetime: moved to workspace offset"), "%s", loops);
	/* (and past it the conv's padded copy of t: 16 planes of 10 x 10) */
	cr_assert(strstr(loops, "padded copy by DMA: 16 planes of 8 x 8 into 10 x 10"), "%s", loops);
	cr_assert_eq(p->workspace_bytes, planned + 4096 + 16 * 10 * 10 * 4, "%lld", (long long)p->workspace_bytes);
	program_free(p);
	free(loops);
	memplan_free(m);
	diag_free(&d);
	graph_free(g);
}

/* --profile's build: each kernel a function of its own (gdcc_kernel_<i>),
 * the entry (ENTRY_rest) after them, the same kernels as the normal build
 * and each with its nodes; the view in no kernel, with its reason */
Test(memplan, codegen_split_makes_a_function_per_kernel)
{
	Graph *g = t_model("graph g {\n"
			   "  input x : f32[4, 16]\n"
			   "  a = neg(x)\n"
			   "  v = reshape(a, shape=[64])\n"
			   "  r = relu(v)\n"
			   "  y = transpose(r)\n"
			   "  output y\n"
			   "}\n");
	const Target *t = target_lookup("x86-avx2");
	Diag d;
	diag_init(&d);
	MemPlan *m = memplan_build_for(g, true, t);
	Program *n = codegen_lower(g, t, NULL, m, "gdcc_entry", false, NULL, &d);
	Program *p = codegen_lower(g, t, NULL, m, "gdcc_entry", true, NULL, &d);
	memplan_free(m);
	cr_assert_not_null(n);
	cr_assert_not_null(p);
	cr_assert(codegen_select(p, &d) && codegen_allocate(p, &d));
	cr_assert_eq(program_nfuncs(n), 1);
	cr_assert_str_eq(program_func(n, 0)->name, "gdcc_entry");
	cr_assert_eq(p->nkernels, n->nkernels);
	cr_assert_eq(p->nkernels, 3);
	cr_assert_eq(program_nfuncs(p), 4);
	static const char *const outs[] = {"a", "r", "y"};
	for (int k = 0; k < 3; k++) {
		char want[32];
		snprintf(want, sizeof want, "gdcc_kernel_%d", k);
		cr_assert_str_eq(program_func(p, k)->name, want);
		cr_assert_str_eq(p->kinfo[k].sym, want);
		cr_assert_gt(program_func(p, k)->ninsts, 0);
		cr_assert_eq(p->kinfo[k].nnodes, 1);
		cr_assert_eq(n->kinfo[k].nnodes, 1);
		cr_assert_eq(p->kinfo[k].nodes[0], n->kinfo[k].nodes[0]);
		cr_assert_null(n->kinfo[k].sym);
		const Node *node = NULL;
		for (int i = 0; i < g->nnodes; i++)
			if (g->nodes[i]->id == p->kinfo[k].nodes[0])
				node = g->nodes[i];
		cr_assert_not_null(node);
		cr_assert_str_eq(node->out[0]->name, outs[k]);
	}
	cr_assert_str_eq(program_func(p, 3)->name, "gdcc_entry_rest");
	const Node *view = NULL;
	for (int i = 0; i < g->nnodes; i++)
		if (strcmp(g->nodes[i]->out[0]->name, "v") == 0)
			view = g->nodes[i];
	cr_assert_not_null(view);
	cr_assert_not_null(p->no_kernel[view->id]);
	cr_assert(strncmp(p->no_kernel[view->id], "view", 4) == 0);
	program_free(n);
	program_free(p);
	diag_free(&d);
	graph_free(g);
}
