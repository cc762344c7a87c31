/* gdcc reduce, private: what core/reduce.c (the command line, running the
 * command, trying candidates), core/reduce_model.c (the editable model, its
 * conversion to and from Graph, the measure) and core/reduce_pass.c (the
 * edits and the reduction passes) share.  core/reduce.h is the public
 * interface. */
#ifndef GDCC_REDUCE_INT_H
#define GDCC_REDUCE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"

/* ---- the editable model ------------------------------------------------- */
typedef struct {
	char *name;
	TensorType type; /* inferred by the last verification; leaves: declared */
} RValue;

typedef struct {
	OpKind op;
	int nin, nout;
	int *in, *out;   /* value indices */
	Attr *attrs;
	int nattrs;
	ConstInit init;  /* OP_CONSTANT (INIT_NPY paths are absolute) */
	bool dead;       /* removed in this candidate */
} RNode;

typedef struct {
	char *name;
	RValue *vals;
	int nvals;
	int *inputs;
	int ninputs;
	RNode *nodes;
	int nnodes;
	int *outputs;
	int noutputs;
} Model;

/* reduce_model.c */
int *dup_ints(const int *v, int n);
void init_clear(ConstInit *c);
void node_clear(RNode *n);
void model_free(Model *m);
Model *model_copy(const Model *m);
Model *model_from_graph(const Graph *g, const char **why);
bool type_eq(const TensorType *a, const TensorType *b);
Graph *model_build(const Model *m);
char *graph_text(const Graph *g, size_t *len);

/* ---- the measure ----------------------------------------------------------- */
enum { NMEASURE = 7 };
typedef struct {
	int64_t v[NMEASURE];
} Measure;

/* reduce_model.c */
Measure measure_of(const Graph *g);
bool measure_less(const Measure *a, const Measure *b);

/* ---- the condition and the search (reduce.c) -------------------------------- */
typedef enum { COND_NONE, COND_MISMATCH, COND_CRASH, COND_HANG, COND_ERROR, COND_EXIT } Condition;

typedef struct {
	Condition cond;
	const char *cond_arg;   /* --mismatch's target, --error's text */
	int exit_code;          /* --exit=N */
	double timeout, max_time;
	bool verbose;
	char **cmd;             /* the command, {} for the candidate's path */
	int ncmd;
	bool quiet_stdout;      /* the default -S command: its reproducer sends stdout to /dev/null */
	const char *prog;       /* argv0, for the reproduce line */
	const char *model_path, *out_path;
	char *cand_name;        /* the candidates' file name: OUT's */
	char *base, *work, *errfile;
	char *reproduce, *expect;
	/* the search */
	Model *cur;
	Graph *cur_graph;       /* verified */
	Measure cur_m;
	uint64_t *seen;
	int nseen, capseen;
	int tests, invalid;
	double t0;
	bool stop;              /* no more tests: interrupted, failed or --max-time */
	bool failed;            /* a test could not be run (reported) */
	char *cand_dir;
	/* npy paths: absolute (as candidates use them) -> as the model wrote them */
	char **npy_abs, **npy_orig;
	int nnpy;
} Reducer;

bool try_model(Reducer *r, Model *cand, const char *what, bool force);

/* ---- the passes (reduce_pass.c) --------------------------------------------- */
bool ddmin_nodes(Reducer *r);
bool ddmin_outputs(Reducer *r);
bool pass_nodes(Reducer *r);
bool pass_outputs(Reducer *r);
bool pass_inputs(Reducer *r);
bool pass_data(Reducer *r);
bool pass_attrs(Reducer *r);
bool pass_shapes(Reducer *r);

#endif
