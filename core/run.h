/* Running a compiled model (core/run.c). */
#ifndef GDCC_RUN_H
#define GDCC_RUN_H

#include "compile.h"

/* Run g on t: compiled (the graph passes have run on g already), linked
 * with the harness and run; or placed on t and its host (--host), each
 * segment compiled for where it runs, the device's through its simulator,
 * the values passed between them.  Fills outputs; 0 or an exit status
 * after reporting into d. */
int run_model(Session *s, const Graph *g, const Target *t, Tensor *const *inputs, Tensor **outputs, Diag *d);
/* A sharded, propagated g run on its mesh's devices: one program per
 * device (its segments compiled for t), launched with mpirun and the SPMD
 * runtime (runtime/spmd.c); the outputs joined from the devices' parts.
 * 0 or an exit status after reporting into d. */
typedef struct {
	double run_s;   /* the busiest device's compute segments (programs' start and file I/O included) */
	double coll_s;  /* the most any device spent in collectives and transfers (waiting included) */
	double wall_s;  /* mpirun, start to end */
} SpmdTimes;
int run_spmd(Session *s, const Graph *g, const Target *t, Tensor *const *inputs, Tensor **outputs, SpmdTimes *tm,
	     Diag *d);
/* gdcc -c: g compiled for t and assembled by the .md's param assemble
 * into the object `out` (staged), with the --header if asked for.  0 or
 * an exit status after reporting into d. */
int compile_to_object(Session *s, const Graph *g, const Target *t, const char *out, Diag *d);

#endif
