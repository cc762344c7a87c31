/* Compiling: a model through the pass manager (core/pipeline.c) to
 * programs, and the files -S and --emit write (assembly, manifest,
 * report, loop and machine-IR dumps), for a model on one target or placed
 * on a target and its host. */
#ifndef GDCC_COMPILE_H
#define GDCC_COMPILE_H

#include "codegen.h"
#include "options.h"
#include "pipeline.h"
#include "place.h"

/* One command's compilations: its options, the graph passes' log, and for
 * a placed model the report of each segment and the simulator's
 * statistics of each device run. */
typedef struct {
	const Options *o;
	PassLog graph_log;
	bool collect;          /* gathering one report per segment */
	char **reports, **sim_stats;
	int nreports, nsim_stats;
	int status;            /* why compile_program returned NULL: EXIT_INPUT or EXIT_RUN */
} Session;

void session_init(Session *s, const Options *o);
void session_free(Session *s);

/* The graph passes on g (once per model, before it is placed). */
bool compile_graph(Session *s, Graph *g, Diag *d);
/* g through the target stages for t, with the entry function `entry`;
 * the --report written (or gathered when s->collect).  NULL after errors,
 * s->status the exit status. */
Program *compile_program(Session *s, const Graph *g, const Target *t, const char *entry, FILE *loops, Diag *d);
/* -S (emit NULL) or --emit=loops|mir of g on t alone, to `out`.  0 or an
 * exit status. */
int compile_to_file(Session *s, const Graph *g, const Target *t, const char *emit, const char *out, Diag *d);
/* The same, or --emit=placement, for g placed on t and host: OUT gets the
 * device's segments, OUT without .s plus .host.s the host's, OUT.json the
 * manifest (placement, transfers, each segment's arguments). */
int compile_placed(Session *s, const Graph *g, const Target *t, const Target *host, const char *emit, const char *out,
		   Diag *d);
/* The weights file -S to `out` writes for `bytes` of constant data
 * (malloc'd), or NULL for inline data; *stale: the default name when it is
 * not written (to remove at commit), else NULL.  docs/backend.md. */
char *weights_path(const Options *o, const char *out, int64_t bytes, char **stale);
/* A Writer of a Placement (ctx): --emit=placement. */
void write_placement(FILE *out, const void *ctx);
/* The report of a placed model run (run.c): 0 or an exit status. */
int write_placed_report_file(Session *s, const Placement *pl, uint64_t hash);
/* The content hash of a compilation: the model as compiled, the options
 * that change the code, the target's .md and the compiler's version. */
uint64_t content_hash(const Graph *g, const Target *t, const Options *o);

#endif
