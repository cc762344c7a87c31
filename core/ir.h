/* The graph IR: dtypes, shapes, tensors, attributes, values, nodes and graphs.
 * A graph is SSA over tensor values with static shapes; nodes are ops from the
 * declarative op table in ops.def.  Everything a graph owns is freed by
 * graph_free(). */
#ifndef GDCC_IR_H
#define GDCC_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "util.h"

/* ---- element types ---------------------------------------------------- */
typedef enum {
	DT_INVALID,
#define DTYPE(id, name, size, npy) DT_##id,
#include "dtypes.def"
#undef DTYPE
	DT_COUNT
} DType;

const char *dtype_name(DType t);          /* "f32", ... */
DType dtype_from_name(const char *s, size_t len);
size_t dtype_size(DType t);               /* bytes per element */
bool dtype_is_float(DType t);
bool dtype_is_int(DType t);
bool dtype_has_kernels(DType t);          /* does the reference interpreter run it? */
const char *dtype_npy_descr(DType t);     /* "<f4", ... or NULL */

/* ---- shapes ----------------------------------------------------------- */
enum { MAX_RANK = 8 };

typedef struct {
	int rank;
	int64_t dim[MAX_RANK];
} Shape;

typedef struct {
	DType dtype;
	Shape shape;
} TensorType;

int64_t shape_numel(const Shape *s);      /* 1 for rank 0 */
bool shape_eq(const Shape *a, const Shape *b);
/* Writes "[2,3,4]" into buf (always NUL-terminated); returns buf. */
char *shape_str(const Shape *s, char *buf, size_t n);
/* Writes "f32[2,3]"; returns buf. */
char *type_str(const TensorType *t, char *buf, size_t n);
/* Row-major strides in elements. */
void shape_strides(const Shape *s, int64_t *strides);
/* numpy broadcasting of a and b into out; false when incompatible. */
bool shape_broadcast(const Shape *a, const Shape *b, Shape *out);

/* ---- tensors (dense, row-major, owned data) --------------------------- */
typedef struct {
	TensorType type;
	void *data;     /* numel * dtype_size bytes, may be NULL when numel==0 */
} Tensor;

Tensor *tensor_new(DType dt, const Shape *s);  /* zero-filled */
void tensor_free(Tensor *t);
size_t tensor_bytes(const Tensor *t);
int64_t tensor_numel(const Tensor *t);
/* Element i converted to double / int64, whatever the dtype. */
double tensor_get_f(const Tensor *t, int64_t i);
int64_t tensor_get_i(const Tensor *t, int64_t i);
/* Element i set from a double (saturating into an integer dtype's range,
 * NaN as 0) or from an int64 (wrapping as C's conversions do). */
void tensor_set_f(Tensor *t, int64_t i, double v);
void tensor_set_i(Tensor *t, int64_t i, int64_t v);

/* ---- attributes ------------------------------------------------------- */
typedef enum {
	ATTR_INT,
	ATTR_FLOAT,
	ATTR_STRING,
	ATTR_INTS,
	ATTR_FLOATS,
	ATTR_DTYPE,
} AttrKind;

const char *attr_kind_name(AttrKind k);

typedef struct {
	char *name;
	AttrKind kind;
	Loc loc;
	int64_t i;         /* ATTR_INT */
	double f;          /* ATTR_FLOAT */
	char *s;           /* ATTR_STRING */
	DType dt;          /* ATTR_DTYPE */
	int64_t *ints;     /* ATTR_INTS, n entries */
	double *floats;    /* ATTR_FLOATS, n entries */
	int n;
} Attr;

/* ---- constants -------------------------------------------------------- */
typedef enum {
	INIT_NONE,      /* not a constant */
	INIT_INLINE,    /* values written in the model: `= [1, 2, 3]` */
	INIT_NPY,       /* `= npy("file.npy")`, path relative to the model */
	INIT_ZEROS,     /* `= zeros` */
	INIT_FILL,      /* `= fill(v)` */
	INIT_RANDOM,    /* `= random(seed, lo, hi)`: uniform in [lo, hi) */
	INIT_NORMAL,    /* `= normal(seed, mean, std)` */
	INIT_TENSOR,    /* data held in memory (an imported model's weights) */
} InitKind;

typedef struct {
	InitKind kind;
	double *values;   /* INIT_INLINE: n values as written */
	int64_t *ivalues; /* INIT_INLINE: the same values as integers when every one
			   * was written as one (exact beyond 2^53), else NULL */
	int64_t nvalues;
	char *path;       /* INIT_NPY: as written in the model */
	char *resolved;   /* INIT_NPY: path used to open the file */
	uint64_t seed;
	double a, b;      /* FILL: a; RANDOM: [a,b); NORMAL: mean a, std b */
	void *data;       /* INIT_TENSOR: a Tensor (owned unless borrowed) */
	bool borrowed;    /* INIT_TENSOR: the Tensor is another graph's, which outlives
			   * this one (a placed model's segments share the model's
			   * weights): not freed with this node */
} ConstInit;

/* ---- sharding (core/shard.h, docs/ir.md "Sharding") -------------------- */
enum { MAX_MESH_AXES = 4 };

/* The device mesh: named axes, each of a size; naxes 0: no mesh. */
typedef struct {
	int naxes;
	char *name[MAX_MESH_AXES];
	int64_t size[MAX_MESH_AXES];
	Loc loc;
} Mesh;

/* How a value is laid out over the mesh: per tensor axis the mesh axis it
 * is split over (-1: whole on every device), and the mesh axes over which
 * each device holds a partial sum (bit per mesh axis). */
typedef struct {
	bool set;
	int8_t dim[MAX_RANK];
	uint8_t partial;
} Sharding;

/* A `shard NAME [...]` statement (or --shard) as written, checked once the
 * graph is typed (shard_resolve). */
typedef struct {
	char *value;       /* the value's name */
	char **axis;       /* per tensor axis: a mesh axis name, or "_" */
	Loc *axis_loc;
	int naxis;
	char **partial;    /* mesh axes of a partial sum */
	Loc *partial_loc;
	int npartial;
	Loc loc;
} ShardAnnot;

/* ---- values, nodes, graphs -------------------------------------------- */
typedef struct Node Node;

typedef struct Value {
	char *name;
	char *src_name;     /* imported models: the source model's name, when it differs */
	TensorType type;
	bool typed;         /* type known (declared, annotated or inferred) */
	bool annotated;     /* the model wrote `name : type` on its definition */
	TensorType annot;   /* that annotation, checked against inference */
	Node *def;          /* defining node, NULL for graph inputs */
	int def_index;      /* which result of def */
	Loc loc;            /* where it is defined */
	int id;             /* index in Graph.values */
	int nuses;          /* operand uses + 1 per appearance among the outputs */
	Node **users;       /* the nodes that use it, one entry per operand slot
			     * (rewrite.h keeps these; graph_build_uses rebuilds them) */
	int nusers, capusers;
	bool is_input, is_output;
	Sharding shard;     /* its sharding (core/shard.c), when the graph has a mesh */
} Value;

enum OpKind {
#define OP(id, name, ...) OP_##id,
#include "ops.def"
#undef OP
	OP_COUNT
};
typedef enum OpKind OpKind;

struct Node {
	OpKind op;
	Loc loc;            /* the op name */
	Value **in;
	Loc *in_loc;        /* where each operand is written */
	int nin;
	Value **out;
	int nout;
	Attr *attrs;
	int nattrs;
	ConstInit init;     /* OP_CONSTANT only */
	int id;
	int group;          /* the kernel (fusion group) it belongs to, -1: none yet */
	int stage;          /* a pipelined graph's stage (the device that runs it; core/shard.c) */
	bool split_weights; /* sharding: its weights split (a tensor-parallel group of --parallel=auto) */
	bool removed;       /* detached by graph_remove_node (rewrite.h) */
};

typedef struct Graph {
	char *name;
	Loc loc;
	char *file;           /* the model file; every Loc in the graph points here */
	char *dir;            /* directory of the model file, for npy paths */
	Value **values;
	int nvalues, capvalues;
	Node **nodes;
	int nnodes, capnodes;
	Value **inputs;
	int ninputs, capinputs;
	Value **outputs;
	Loc *output_loc;
	int noutputs, capoutputs;
	int *input_origin;    /* imported models: each input's index in the source model */
	int *input_part;      /* ... and where in its value it sits: ONNX_WHOLE (-1), or an element of
			       * a sequence (frontend/onnx.h); NULL: all whole */
	int *output_origin;   /* imported models: each output's index in the source model (NULL: its own) */
	int *output_part;     /* ... and its part, as input_part */
	StrMap index;         /* values by name (keys: their names) */
	Mesh mesh;            /* the device mesh (naxes 0: none) */
	bool pipelined;       /* its one mesh axis is a pipeline's stages (Node.stage) */
	bool split_weights;   /* the tensor strategy: propagation splits constant weights */
	int micro_batches;    /* a pipeline's micro-batches along axis 0 (0 or 1: none) */
	ShardAnnot *annots;   /* sharding annotations as written, in order */
	int nannots;
} Graph;

Graph *graph_new(const char *name);
void graph_free(Graph *g);
void shard_annot_free(ShardAnnot *a);
/* A node and what it owns (not its operands' or results' values). */
void node_free(Node *n);
Value *graph_find_value(const Graph *g, const char *name); /* O(1): hashed */
/* Rebuild the name index after values were removed from g->values. */
void graph_reindex(Graph *g);
/* A graph input (outputs: an output) by its name or its source model's name. */
Value *graph_find_input(const Graph *g, const char *name);
Value *graph_find_output(const Graph *g, const char *name);
/* New value; returns NULL if the name is taken. */
Value *graph_new_value(Graph *g, const char *name, Loc loc);
Value *graph_add_input(Graph *g, const char *name, DType dt, const Shape *s, Loc loc);
/* A node with nin operands and results named out_names[0..nout-1];
 * returns NULL if a result name is taken. */
Node *graph_add_node(Graph *g, OpKind op, Value **in, int nin,
		     const char *const *out_names, int nout, Loc loc);
/* A constant node with declared type; its init describes the data. */
Node *graph_add_const(Graph *g, const char *name, DType dt, const Shape *s,
		      ConstInit init, Loc loc);
void graph_add_output(Graph *g, Value *v, Loc loc);

Attr *node_add_attr(Node *n, const char *name, AttrKind kind, Loc loc);
/* A deep copy of a into *to (uninitialized); what attr_free frees. */
void attr_copy(Attr *to, const Attr *a);
void attr_free(Attr *a);
/* A copy of attribute a (of another node) set on `to`, located at loc. */
void node_copy_attr(Node *to, const Attr *a, Loc loc);
void node_set_int(Node *n, const char *name, int64_t v);
void node_set_float(Node *n, const char *name, double v);
void node_set_string(Node *n, const char *name, const char *v);
void node_set_ints(Node *n, const char *name, const int64_t *v, int count);
void node_set_floats(Node *n, const char *name, const double *v, int count);
void node_set_dtype(Node *n, const char *name, DType v);
const Attr *node_attr(const Node *n, const char *name);

/* Shape helper for tests and examples: shape_of(3, (int64_t[]){2,3,4}). */
Shape shape_make(int rank, const int64_t *dims);

#endif
