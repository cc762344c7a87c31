/* The pass manager (core/pipeline.c): which graph passes run at each -O
 * level and with --disable-pass, what the log records, the names it knows,
 * and the target stages producing a program. */
#include <string.h>

#include "passes.h"
#include "pipeline.h"
#include "rewrite.h"
#include "test_util.h"

static const char *model = "graph p {\n"
			   "  input x : f32[4, 8]\n"
			   "  const w : f32[6, 8] = random(seed=1)\n"
			   "  const b : f32[6] = random(seed=2)\n"
			   "  i = identity(x)\n"
			   "  h = gemm(i, w, b, trans_b=1)\n"
			   "  r1 = relu(h)\n"
			   "  r2 = relu(h)\n"
			   "  dead = neg(x)\n"
			   "  y = add(r1, r2)\n"
			   "  output y\n"
			   "}\n";

static const PassStat *stat(const PassLog *log, const char *name)
{
	for (int i = 0; i < log->n; i++)
		if (strcmp(log->s[i].name, name) == 0)
			return &log->s[i];
	cr_assert_fail("no log entry for %s", name);
	return NULL;
}

static Graph *graph_at(int level, const char *disabled, PassLog *log)
{
	Graph *g = t_model(model);
	Options o;
	options_init(&o);
	o.opt_level = level;
	o.verify_each = true;
	const char *dis[1] = {disabled};
	if (disabled) {
		o.disabled = xmalloc(sizeof *o.disabled);
		o.disabled[0] = dis[0];
		o.ndisabled = 1;
	}
	Diag d;
	diag_init(&d);
	bool ok = pipeline_graph(g, &o, log, &d);
	if (!ok)
		diag_print(&d, stderr);
	cr_assert(ok);
	diag_free(&d);
	options_free(&o);
	return g;
}

Test(pipeline, O0_runs_no_graph_pass)
{
	PassLog log = {0};
	Graph *g = graph_at(0, NULL, &log);
	static const char *const names[] = {"canonicalize", "fold", "bnfold", "cse", "dce", "fuse"};
	cr_assert_eq(log.n, 6);
	for (int i = 0; i < 6; i++) {
		cr_assert_str_eq(log.s[i].name, names[i]);
		cr_assert_str_eq(log.s[i].skipped, "-O0");
		cr_assert_eq(log.s[i].nodes_before, log.s[i].nodes_after);
	}
	cr_assert_eq(g->nnodes, 8, "the graph as written (2 constants, 6 ops)");
	passlog_free(&log);
	graph_free(g);
}

Test(pipeline, O2_runs_every_graph_pass_and_logs_it)
{
	PassLog log = {0};
	Graph *g = graph_at(2, NULL, &log);
	for (int i = 0; i < log.n; i++)
		cr_assert_null(log.s[i].skipped, "%s skipped", log.s[i].name);
	/* identity gone and the transposed weight (canonicalize), one relu (cse),
	 * the dead neg (dce), and one kernel for gemm + relu + add (fuse) */
	cr_assert_gt(stat(&log, "canonicalize")->changes, 0);
	cr_assert_gt(stat(&log, "cse")->changes, 0);
	cr_assert_eq(stat(&log, "dce")->nodes_after, stat(&log, "dce")->nodes_before - 1);
	for (int i = 1; i < log.n; i++)
		cr_assert_eq(log.s[i].nodes_before, log.s[i - 1].nodes_after);
	cr_assert_eq(g->nnodes, stat(&log, "fuse")->nodes_after);
	cr_assert_eq(stat(&log, "fuse")->count, graph_kernels(g));
	int relus = 0;
	for (int i = 0; i < g->nnodes; i++)
		relus += g->nodes[i]->op == OP_RELU;
	cr_assert_eq(relus, 1);
	cr_assert_null(graph_find_value(g, "dead"));
	cr_assert_str_eq(g->outputs[0]->name, "y");
	passlog_free(&log);
	graph_free(g);
}

Test(pipeline, O1_leaves_out_the_O2_passes)
{
	PassLog log = {0};
	Graph *g = graph_at(1, NULL, &log);
	cr_assert_null(stat(&log, "canonicalize")->skipped);
	cr_assert_null(stat(&log, "dce")->skipped);
	cr_assert_str_eq(stat(&log, "bnfold")->skipped, "-O1");
	cr_assert_str_eq(stat(&log, "fuse")->skipped, "-O1");
	cr_assert_eq(graph_kernels(g), 0, "not grouped");
	passlog_free(&log);
	graph_free(g);
}

Test(pipeline, disable_pass_skips_one)
{
	PassLog log = {0};
	Graph *g = graph_at(2, "cse", &log);
	cr_assert_str_eq(stat(&log, "cse")->skipped, "--disable-pass");
	int relus = 0;
	for (int i = 0; i < g->nnodes; i++)
		relus += g->nodes[i]->op == OP_RELU;
	cr_assert_eq(relus, 2, "both relus without cse");
	passlog_free(&log);
	graph_free(g);
}

Test(pipeline, pass_names)
{
	cr_assert_null(pipeline_unknown_pass("fuse", false));
	cr_assert_null(pipeline_unknown_pass("plan-memory", false));
	cr_assert_null(pipeline_unknown_pass("all", true));
	char *m = pipeline_unknown_pass("all", false);
	cr_assert_not_null(m, "'all' is only for --print-after");
	free(m);
	m = pipeline_unknown_pass("fusion", true);
	cr_assert_not_null(m);
	cr_assert(strstr(m, "unknown pass 'fusion'") && strstr(m, "canonicalize") && strstr(m, "emit"), "%s", m);
	free(m);
}

Test(pipeline, target_stages_make_a_program_and_log_each)
{
	PassLog glog = {0}, tlog = {0};
	for (int level = 0; level <= 2; level += 2) {
		Graph *g = graph_at(level, NULL, &glog);
		Options o;
		options_init(&o);
		o.opt_level = level;
		Diag d;
		diag_init(&d);
		Program *p = pipeline_target(g, target_lookup("x86-avx2"), &o, &tlog, NULL, &d);
		if (!p)
			diag_print(&d, stderr);
		cr_assert_not_null(p);
		static const char *const names[] = {"legalize", "plan-memory", "lower", "select", "allocate", "emit"};
		cr_assert_eq(tlog.n, 6);
		for (int i = 0; i < 6; i++)
			cr_assert_str_eq(tlog.s[i].name, names[i]);
		cr_assert_eq(stat(&tlog, "lower")->count, p->nkernels);
		cr_assert_eq(stat(&tlog, "emit")->count, (long long)p->textlen);
		cr_assert_eq(stat(&tlog, "plan-memory")->count, p->planned_bytes);
		cr_assert(p->text && strstr(p->text, "gdcc_entry:"));
		program_free(p);
		diag_free(&d);
		options_free(&o);
		passlog_free(&glog);
		passlog_free(&tlog);
		graph_free(g);
	}
}
