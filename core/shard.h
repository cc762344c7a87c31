/* Sharding over a device mesh (GSPMD-style; docs/ir.md "Sharding").
 *
 * A graph may declare a mesh (`mesh [dp=2, tp=2]`) and annotate values
 * (`shard x [dp, _]`); the command line can do the same for an ONNX model
 * (--mesh, --shard) or choose a strategy (--parallel=data|tensor
 * --devices N).  shard_resolve() checks the annotations against the typed
 * graph; shard_propagate() gives every value a sharding by the op table's
 * per-op rules (ops.def, ShardRule), forwards through the graph, with an
 * annotated result deciding its node's operands and constants taking what
 * their first user needs, and inserts the collectives (all_reduce,
 * all_gather, reduce_scatter, all_to_all) and the local reshapes
 * (shard_slice, shard_partial) where a value's sharding must change.  In
 * the global view every collective is the identity, so the graph still
 * computes what the model does. */
#ifndef GDCC_SHARD_H
#define GDCC_SHARD_H

#include <stdio.h>

#include "ir.h"

/* Adding axis name=size to m: NULL, or the problem (malloc'd). */
char *shard_mesh_axis_error(const Mesh *m, const char *name, int64_t size);
/* Index of a mesh axis, -1 when m has none by that name. */
int shard_mesh_axis(const Mesh *m, const char *name);
/* Devices of the whole mesh. */
int64_t shard_mesh_devices(const Mesh *m);
/* g takes *a (its strings); *a is cleared. */
void shard_add_annot(Graph *g, ShardAnnot *a);

/* The command line's forms: --mesh "dp=2,tp=2" (brackets optional) and
 * --shard "NAME=[dp,_]" (brackets optional); errors into d, false. */
bool shard_mesh_from_text(Graph *g, const char *text, Diag *d);
bool shard_annot_from_text(Graph *g, const char *text, Diag *d);

typedef enum { PARALLEL_NONE, PARALLEL_DATA, PARALLEL_TENSOR, PARALLEL_PIPELINE, PARALLEL_AUTO } Parallel;

/* --parallel=data: mesh [dp=N] and every input split along its axis 0
 * (those whose axis 0 N divides); tensor: mesh [tp=N], weights split by
 * the rules (Megatron: column-parallel, then row-parallel); pipeline: mesh
 * [pp=N], the nodes cut into N stages of consecutive nodes with about the
 * same work, one a device, the values that cross sent between them.  false
 * and an error when the graph has a mesh already. */
bool shard_apply_strategy(Graph *g, Parallel par, int devices, Diag *d);
/* A pipeline's micro-batches: every value not a constant split along axis
 * 0 (the batch) into m, each stage running them one after the other (the
 * next stage on micro-batch j while this one does j + 1).  false and an
 * error naming the node when the model does not keep its batch axis apart
 * (or m does not divide it). */
bool shard_set_micro_batches(Graph *g, int m, Diag *d);

/* Nodes into N groups of consecutive nodes with about the same work
 * (Node.stage; constants -1): work[k] the share, first[k]..last[k] the
 * positions (-1: empty). */
void shard_group_nodes(Graph *g, int N, double *work, int *first, int *last);
/* --parallel=auto's mixed strategy: mesh [d=devices], the nodes in
 * ngroups groups (shard_group_nodes), group k data-parallel (what it
 * reads from earlier groups split by batch) or, when tensor[k],
 * tensor-parallel (read whole, its weights split by the rules). */
bool shard_apply_groups(Graph *g, const bool *tensor, int ngroups, int devices, Diag *d);

/* Check each annotation (the value exists, rank, axes, divisibility, no
 * axis twice) and set Value.shard; errors located at the annotation. */
bool shard_resolve(Graph *g, Diag *d);

/* The links between devices (--link-gbps, --link-latency-us). */
typedef struct {
	double gbps;        /* each device's link, gigabits per second */
	double latency_us;  /* per message */
} LinkModel;

/* The cost model's step time of a propagated graph: each device's compute
 * from the target's .md (legality rows' cost times the node's work on that
 * device, at the .md's clock_ghz; a node whose row gives no cost: one cycle
 * per element written), each collective as latency per ring step plus the
 * bytes a device sends over the link, no overlap of the two; a pipeline's
 * stages one after the other (no micro-batches). */
typedef struct {
	double compute_s;   /* the busiest device's compute (a pipeline: every stage's) */
	double comm_s;      /* the collectives' or transfers' time */
	double step_s;      /* compute + communication */
	double single_s;    /* the whole model on one device */
	int nuncosted;      /* nodes the .md gives no cost for */
} ShardEstimate;

typedef struct {
	char **notes;      /* conflicts met and how they were resolved */
	int nnotes;
	bool split_weights; /* the tensor strategy: rules split constant weights */
	const struct Target *target; /* for the estimate (NULL: none) */
	LinkModel link;
	char *alternatives; /* --parallel=auto: each strategy's estimate (owned) */
} ShardReport;

bool shard_estimate(const Graph *g, const struct Target *t, const LinkModel *l, ShardEstimate *e);

/* Give every value a sharding and insert the collectives (see above).
 * The graph's outputs end whole unless annotated.  false after an error. */
bool shard_propagate(Graph *g, ShardReport *r, Diag *d);
void shard_report_free(ShardReport *r);

/* Does a mesh axis split one of s's tensor axes? */
bool sharding_splits(const Sharding *s, int rank, int mesh_axis);

/* Run a propagated graph on every device of its mesh, simulated in this
 * process with the reference kernels: inputs are whole (each device takes
 * its part), outputs[i] comes back whole (parts joined; the copies of a
 * whole output must agree).  false after an error into d. */
bool shard_simulate(const Graph *g, Tensor *const *inputs, Tensor **outputs, Diag *d);

/* Device `rank`'s coordinates on the mesh (axis 0 outermost). */
void shard_coords(const Mesh *m, int64_t rank, int64_t *coord);
/* Device rank's part of a whole tensor by sharding s (a partial sum: the
 * whole at coordinate 0 of its axes, zeros elsewhere). */
Tensor *shard_part(const Mesh *m, const Sharding *s, const Tensor *whole, int64_t rank);
/* The whole value v from every device's part (parts[rank]); the copies of
 * an unsplit value must agree bit for bit.  NULL after an error into d. */
Tensor *shard_join(const Mesh *m, const Value *v, Tensor *const *parts, Diag *d);

/* One device's program: compute segments (graphs of local types, run on
 * a target) between the collectives (run by the SPMD runtime over MPI). */
typedef struct {
	Graph *g;        /* a segment, or NULL: the collective `coll` */
	int *in_ids;     /* the segment's inputs' global value ids */
	int *out_ids;    /* its outputs' */
	const Node *coll;
} SpmdStep;

typedef struct {
	SpmdStep *steps;
	int nsteps;
} SpmdProgram;

/* Device rank's program of a propagated graph g.  false after an error. */
bool shard_device_program(const Graph *g, int64_t rank, SpmdProgram *out, Diag *d);
void spmd_program_free(SpmdProgram *p);

/* "[dp, _] partial [tp]" into buf. */
char *sharding_str(const Mesh *m, const Sharding *s, int rank, char *buf, size_t n);
/* A value's shape on one device. */
Shape shard_local_shape(const Mesh *m, const Sharding *s, const Shape *global);
/* ... as a device's program holds it: the local shape, and a pipeline's
 * micro-batch (axis 0 over Graph.micro_batches) for what is not a constant. */
Shape shard_device_shape(const Graph *g, const Value *v);
/* Bytes each device sends for a collective node (0 for the local ones). */
uint64_t shard_collective_bytes(const Graph *g, const Node *n);
/* --emit=sharding: every value's sharding and local type, every
 * collective with its bytes, the notes. */
void shard_print(FILE *out, const Graph *g, const ShardReport *r);

#endif
