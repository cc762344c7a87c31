/* The pass manager (see pipeline.h): the whole pipeline as one table, in
 * the order it runs.  A graph pass is a function over the Graph
 * (passes.h); a target stage works on one Unit: the graph, the target, the
 * memory plan and the Program being built.
 *
 * -O levels: a pass runs when the level is at least its `level`.  -O1 has
 * the rewrites that compute the same operations (canonicalize, fold, cse,
 * dce) and memory planning with reuse; -O2 adds what changes the
 * arithmetic within the per-op tolerance (bnfold; canonicalize's matmul +
 * bias -> gemm and GELU, which it gates on the level itself) and fusion
 * grouping (docs/design.md).  The target stages always run; plan-memory at
 * -O0 (or disabled) gives every value its own slot. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "legality.h"
#include "onnx.h"
#include "memplan.h"
#include "npusim.h"
#include "passes.h"
#include "pipeline.h"
#include "printer.h"
#include "rewrite.h"
#include "util.h"
#include "verify.h"

typedef struct {
	const Graph *g;
	const Target *t;
	const Options *o;
	FILE *loops;
	const LegalEntry **legal; /* legalize: each node's decision, by Node.id */
	MemPlan *plan;
	Program *p;
	long long count;     /* what the stage measured (PassStat.count) */
} Unit;

typedef bool (*GraphPassFn)(Graph *g, PassContext *cx, Diag *d);
typedef bool (*StageFn)(Unit *u, Diag *d);
typedef void (*DumpFn)(FILE *out, const Unit *u);

typedef struct {
	const char *name;
	int level;            /* runs at -O<level> and above */
	GraphPassFn graph;    /* a graph pass, or */
	StageFn stage;        /* a target stage */
	DumpFn dump;          /* a target stage's --print-after dump */
	const char *unit;     /* what a target stage counts (fuse: its kernels) */
	const char *what;
} Pass;

/* ---- the target stages ---------------------------------------------------- */
static bool st_legalize(Unit *u, Diag *d)
{
	free(u->legal);
	u->legal = xcalloc((size_t)u->g->nnodes + 1, sizeof *u->legal);
	if (!legality_decide(u->g, u->t, d, NULL, u->legal))
		return false;
	for (int i = 0; i < u->g->nnodes; i++) {
		const LegalEntry *e = u->legal[u->g->nodes[i]->id];
		u->count += e && e->action != LEGAL_NATIVE;
	}
	return true;
}
static void dump_legalize(FILE *out, const Unit *u)
{
	Diag d;
	diag_init(&d);
	legality_check(u->g, u->t, &d, out);
	diag_free(&d);
}

static bool st_plan(Unit *u, Diag *d)
{
	(void)d;
	bool reuse = u->o->opt_level >= 1 && !options_disabled(u->o, "plan-memory");
	u->plan = memplan_build_for(u->g, reuse, u->t);
	u->count = u->plan->bytes;
	return true;
}
static void dump_plan(FILE *out, const Unit *u) { memplan_print(out, u->g, u->plan); }

static bool st_lower(Unit *u, Diag *d)
{
	u->p = codegen_lower(u->g, u->t, u->legal, u->plan, u->o->entry, u->o->profile, u->loops, d);
	if (u->p)
		u->count = u->p->nkernels;
	return u->p != NULL;
}
static void dump_trees(FILE *out, const Unit *u)
{
	for (int i = 0; i < program_nfuncs(u->p); i++)
		mfunc_dump_trees(out, program_func(u->p, i));
}

static bool st_select(Unit *u, Diag *d)
{
	bool ok = codegen_select(u->p, d);
	u->count = 0;
	for (int i = 0; i < program_nfuncs(u->p); i++)
		u->count += program_func(u->p, i)->ninsts;
	return ok;
}
static void dump_mir(FILE *out, const Unit *u)
{
	for (int i = 0; i < program_nfuncs(u->p); i++)
		mfunc_dump(out, program_func(u->p, i));
}

static bool st_allocate(Unit *u, Diag *d)
{
	bool ok = codegen_allocate(u->p, d);
	u->count = u->p->spill_slots;
	return ok;
}

static bool st_emit(Unit *u, Diag *d)
{
	(void)d;
	return program_render(u->p, &u->count);
}
static void dump_asm(FILE *out, const Unit *u) { program_emit(out, u->p, NULL); }

/* ---- the table ------------------------------------------------------------------ */
static const Pass pipeline[] = {
	/* name           -O  graph pass         target stage  dump          counts */
	{"canonicalize",  1,  pass_canonicalize, NULL,         NULL,         NULL,
	 "identity/dropout removal, view chains, transposes, constant B layouts, matmul + bias -> gemm"},
	{"fold",          1,  pass_fold,         NULL,         NULL,         NULL,
	 "all-constant subgraphs evaluated by the reference kernels (size cap)"},
	{"bnfold",        2,  pass_bnfold,       NULL,         NULL,         NULL,
	 "batchnorm with constant statistics folded into the conv or gemm before it"},
	{"cse",           1,  pass_cse,          NULL,         NULL,         NULL,
	 "common subexpressions, by value numbering (xxHash)"},
	{"dce",           1,  pass_dce,          NULL,         NULL,         NULL,
	 "nodes whose results nothing uses"},
	{"fuse",          2,  pass_fuse,         NULL,         NULL,         "kernels",
	 "kernels: elementwise chains, epilogues of matmul/gemm/conv, prologues of reductions"},
	{"legalize",      0,  NULL,              st_legalize,  dump_legalize, "not_native",
	 "each node native, expanded, fallback or unsupported, from the target's legality table"},
	{"plan-memory",   0,  NULL,              st_plan,      dump_plan,    "bytes",
	 "workspace by liveness: reuse, in place, views (-O0: one slot per value)"},
	{"lower",         0,  NULL,              st_lower,     dump_trees,   "kernels",
	 "loop nests (Loop IR) and selection trees"},
	{"select",        0,  NULL,              st_select,    dump_mir,     "instructions",
	 "BURS instruction selection over the target's patterns; machine-IR verifier"},
	{"allocate",      0,  NULL,              st_allocate,  dump_mir,     "spill_slots",
	 "linear-scan register allocation, spills, frame; machine-IR verifier"},
	{"emit",          0,  NULL,              st_emit,      dump_asm,     "bytes",
	 "assembly from the target's templates"},
};
enum { NPASSES = sizeof pipeline / sizeof *pipeline };

char *pipeline_unknown_pass(const char *name, bool for_print)
{
	if (for_print && strcmp(name, "all") == 0)
		return NULL;
	for (int i = 0; i < NPASSES; i++)
		if (strcmp(pipeline[i].name, name) == 0)
			return NULL;
	char *list = xstrdup(for_print ? "all" : "");
	for (int i = 0; i < NPASSES; i++) {
		char *l = xasprintf("%s%s%s", list, *list ? ", " : "", pipeline[i].name);
		free(list);
		list = l;
	}
	char *m = xasprintf("unknown pass '%s' (known: %s)", name, list);
	free(list);
	return m;
}

void pipeline_list(FILE *out)
{
	fprintf(out, "%-14s %-4s %s\n", "pass", "-O", "what it does");
	for (int i = 0; i < NPASSES; i++)
		fprintf(out, "%-14s %-4d %s\n", pipeline[i].name, pipeline[i].level, pipeline[i].what);
}

/* ---- options ------------------------------------------------------------------- */
void options_init(Options *o)
{
	memset(o, 0, sizeof *o);
	o->opt_level = 2;
#ifdef GDCC_CHECKING
	o->verify_each = true;
#endif
	o->dump = stderr;
	o->fold_limit_bytes = (uint64_t)16 << 20;
	o->entry = "gdcc_entry";
}

void options_free(Options *o)
{
	free(o->print_after);
	free(o->disabled);
	for (int i = 0; i < o->nbinds; i++) {
		free(o->binds[i].name);
		tensor_free(o->binds[i].t);
	}
	free(o->binds);
	o->binds = NULL;
	o->nbinds = 0;
	free(o->param_settings);
	free(o->shard_texts);
	o->shard_texts = NULL;
	free(o->auto_table);
	o->auto_table = NULL;
	o->nshard_texts = 0;
	if (o->param_target)
		target_copy_free(o->param_target);
	o->print_after = o->disabled = o->param_settings = NULL;
	o->param_target = NULL;
}

bool options_prints_after(const Options *o, const char *name)
{
	if (o->print_all)
		return true;
	for (int i = 0; i < o->nprint_after; i++)
		if (strcmp(o->print_after[i], name) == 0)
			return true;
	return false;
}

bool options_disabled(const Options *o, const char *name)
{
	for (int i = 0; i < o->ndisabled; i++)
		if (strcmp(o->disabled[i], name) == 0)
			return true;
	return false;
}

/* ---- running ------------------------------------------------------------------- */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static PassStat *log_add(PassLog *log, const Pass *p)
{
	if (!log)
		return NULL;
	if (log->n == log->cap) {
		log->cap = log->cap ? 2 * log->cap : 16;
		log->s = xrealloc(log->s, (size_t)log->cap * sizeof *log->s);
	}
	PassStat *s = &log->s[log->n++];
	memset(s, 0, sizeof *s);
	s->name = p->name;
	s->unit = p->unit;
	return s;
}

static const char *why_skipped(const Pass *p, const Options *o)
{
	if (options_disabled(o, p->name))
		return "--disable-pass";
	if (o->opt_level < p->level)
		return o->opt_level == 0 ? "-O0" : "-O1";
	return NULL;
}

/* The verifier after a graph pass: the structure (order, use lists), then
 * the full verifier, whose inferred types must be the ones the pass left.
 * Its errors say which pass broke the graph. */
static bool verify_after(Graph *g, const char *pass, Diag *d)
{
	Diag v;
	diag_init(&v);
	bool ok = graph_check_structure(g, &v);
	TensorType *types = NULL;
	if (ok) {
		types = xmalloc(((size_t)g->nvalues + 1) * sizeof *types);
		for (int i = 0; i < g->nvalues; i++)
			types[i] = g->values[i]->type;
		ok = graph_verify(g, &v);
		for (int i = 0; ok && i < g->nvalues; i++) {
			const Value *x = g->values[i];
			if (x->type.dtype != types[i].dtype || !shape_eq(&x->type.shape, &types[i].shape)) {
				char a[128], b[128];
				diag_error(&v, x->loc, "'%s' has type %s, but its definition gives %s", x->name,
					   type_str(&types[i], a, sizeof a), type_str(&x->type, b, sizeof b));
				ok = false;
			}
		}
	}
	for (int i = 0; i < v.n; i++)
		if (v.entries[i].level == DIAG_ERROR)
			diag_error(d, v.entries[i].loc, "internal error after pass %s: %s", pass, v.entries[i].msg);
	free(types);
	diag_free(&v);
	return ok;
}

bool pipeline_graph(Graph *g, const Options *o, PassLog *log, Diag *d)
{
	graph_build_uses(g);
	for (int i = 0; i < NPASSES; i++) {
		const Pass *p = &pipeline[i];
		if (!p->graph)
			continue;
		PassStat *s = log_add(log, p);
		int before = g->nnodes;
		if (s)
			s->nodes_before = s->nodes_after = before;
		const char *skip = why_skipped(p, o);
		if (skip) {
			if (s)
				s->skipped = skip;
			continue;
		}
		PassContext cx = {.opt_level = o->opt_level, .fold_limit_bytes = o->fold_limit_bytes};
		double t0 = now();
		bool ok = p->graph(g, &cx, d);
		if (s) {
			s->seconds = now() - t0;
			s->nodes_after = g->nnodes;
			s->changes = cx.changes;
			if (p->unit) /* (fuse: the kernels it formed) */
				s->count = graph_kernels(g);
		}
		if (!ok)
			return false;
		if (o->verify_each && !verify_after(g, p->name, d))
			return false;
		if (options_prints_after(o, p->name)) {
			fprintf(o->dump, "# --- after %s (%d -> %d nodes, %d rewrites)\n", p->name, before, g->nnodes,
				cx.changes);
			if (graph_kernels(g) > 0)
				print_groups(o->dump, g);
			else
				print_graph(o->dump, g);
		}
	}
	return true;
}

Program *pipeline_target(const Graph *g, const Target *t, const Options *o, PassLog *log, FILE *loops, Diag *d)
{
	Unit u = {.g = g, .t = t, .o = o, .loops = loops};
	bool ok = true;
	for (int i = 0; i < NPASSES && ok; i++) {
		const Pass *p = &pipeline[i];
		if (!p->stage)
			continue;
		PassStat *s = log_add(log, p);
		if (s)
			s->nodes_before = s->nodes_after = g->nnodes;
		/* target stages always run: plan-memory reads the options itself */
		double t0 = now();
		u.count = 0;
		ok = p->stage(&u, d);
		if (s) {
			s->seconds = now() - t0;
			s->count = u.count;
		}
		if (ok && p->dump && options_prints_after(o, p->name)) {
			fprintf(o->dump, "# --- after %s on %s\n", p->name, t->name);
			p->dump(o->dump, &u);
		}
	}
	memplan_free(u.plan);
	free(u.legal);
	if (!ok) {
		program_free(u.p);
		return NULL;
	}
	return u.p;
}

void passlog_free(PassLog *log)
{
	free(log->s);
	memset(log, 0, sizeof *log);
}

