/* The op table's C face: per-op descriptors built from ops.def, attribute
 * specs, and the helpers that shape rules and reference kernels share. */
#ifndef GDCC_OPS_H
#define GDCC_OPS_H

#include "ir.h"

/* One accepted attribute of an op.  An attribute that is absent takes its
 * default (when has_default) or is "unset" (the rule decides). */
typedef struct {
	const char *name;
	AttrKind kind;
	bool required;
	bool has_default;
	int64_t def_i;        /* ATTR_INT default */
	double def_f;         /* ATTR_FLOAT default */
	const char *def_s;    /* ATTR_STRING default */
	DType def_dt;         /* ATTR_DTYPE default */
	bool has_range;       /* ATTR_INT/INTS: each value in [min, max] */
	int64_t min, max;
	bool has_frange;      /* ATTR_FLOAT/FLOATS: each value in [fmin, fmax] */
	double fmin, fmax;
	const char *choices;  /* ATTR_STRING: "a|b|c" */
} AttrSpec;

/* Context of a shape/dtype rule: the node, whose operands are typed; the
 * rule sets every result's type or reports an error and returns false. */
typedef struct {
	Graph *g;
	Node *n;
	Diag *d;
} InferCtx;

typedef bool (*InferFn)(InferCtx *cx);
/* Reference kernel: operands and results are allocated with the verified
 * types; returns false after reporting a run-time error into d. */
typedef bool (*KernelFn)(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d);

/* How an op's operands' and results' shardings relate (core/shard.c). */
typedef enum {
	SHARD_REPLICATE,   /* every operand and result whole on every device */
	SHARD_ELEMENTWISE, /* results follow the operands (broadcasting); partial sums resolved */
	SHARD_LINEAR,      /* the same, and partial sums pass through (add, sub, sum, neg, identity) */
	SHARD_MATMUL,      /* batch, rows of A, columns of B; a split K gives a partial sum */
	SHARD_GEMM,        /* the same through transA/transB; C follows the result */
	SHARD_CONV,        /* batch, output channels (weights' axis 0); split input channels give a partial sum */
	SHARD_POOL,        /* batch and channels follow; the spatial axes whole */
	SHARD_CHANNEL,     /* batchnorm: the input's sharding; the per-channel operands follow axis 1 */
	SHARD_LAYERNORM,   /* the axes from `axis` on whole; the others follow */
	SHARD_AXIS,        /* the axis attribute's axis whole; the others follow (softmax, concat, split) */
	SHARD_REDUCE,      /* reduced axes whole (reduce_sum over a split axis: a partial sum) */
	SHARD_RESHAPE,     /* a split axis maps to the outermost axis of its group (reshape, flatten, squeeze) */
	SHARD_TRANSPOSE,   /* the split axes permuted */
	SHARD_SOURCE,      /* no operands: the users decide (constants) */
	SHARD_COLLECTIVE,  /* inserted by the pass */
} ShardRule;

typedef struct {
	const char *name;
	int min_in, max_in;    /* max -1: variadic */
	int min_out, max_out;
	const AttrSpec *attrs; /* terminated by {0} */
	InferFn infer;
	KernelFn kernel;
	const char *summary;
	const char *native_uses; /* selection operations of the direct lowering */
	ShardRule shard;         /* sharding rule */
} OpInfo;

extern const OpInfo op_info[OP_COUNT];
/* OP_COUNT when unknown. */
OpKind op_lookup(const char *name, size_t len);
const AttrSpec *op_attr_spec(OpKind op, const char *name);

/* Declarations of every spec, rule and kernel named in ops.def. */
#define OP(id, name, mini, maxi, mino, maxo, attrs, infer, kernel, summary, uses, shard) \
	extern const AttrSpec attrs[];                                     \
	bool infer(InferCtx *cx);                                          \
	bool kernel(const Node *n, Tensor *const *in, Tensor *const *out, Diag *d);
#include "ops.def"
#undef OP

/* ---- attribute access (absent: the spec's default, else 0/NULL) ------- */
bool attr_present(const Node *n, const char *name);
int64_t attr_i(const Node *n, const char *name);
double attr_f(const Node *n, const char *name);
const char *attr_s(const Node *n, const char *name);
DType attr_dt(const Node *n, const char *name);
/* Number of entries and *v set; -1 (and *v NULL) when absent. */
int attr_ints(const Node *n, const char *name, const int64_t **v);
int attr_floats(const Node *n, const char *name, const double **v);
/* Location of the attribute if written, else of the node. */
Loc attr_loc(const Node *n, const char *name);

/* ---- helpers for shape rules ----------------------------------------- */
/* Report an error at the node / an operand / an attribute.  These return
 * false so that a rule can `return infer_error(...)`. */
bool infer_error(InferCtx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool infer_error_at_operand(InferCtx *cx, int i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool infer_error_at_attr(InferCtx *cx, const char *attr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const TensorType *operand_type(InferCtx *cx, int i);
void set_result(InferCtx *cx, int i, DType dt, const Shape *s);
/* Operand i's dtype is one of mask (bit per DType, see DTMASK); else a
 * "dtype mismatch" error naming the operand, its dtype and what is allowed. */
#define DTMASK(t) (1u << (t))
#define DTMASK_FLOAT (DTMASK(DT_F32))
#define DTMASK_INDEX (DTMASK(DT_I32) | DTMASK(DT_I64))
#define DTMASK_NUM (DTMASK_FLOAT | DTMASK_INDEX)
#define DTMASK_ANY (DTMASK_NUM | DTMASK(DT_BOOL))
bool require_dtype(InferCtx *cx, int i, unsigned mask);
/* Operands i and j have one dtype; else "dtype mismatch" naming both. */
bool require_same_dtype(InferCtx *cx, int i, int j);
/* Operand i has rank in [lo, hi]. */
bool require_rank(InferCtx *cx, int i, int lo, int hi);
/* Normalize an axis attribute value against rank (negative counts from the
 * end; `extra` widens the range, e.g. 1 for unsqueeze); reports
 * "attribute 'axis' = 5 is out of range [-3, 2]" on failure. */
bool normalize_axis(InferCtx *cx, const char *attr, int64_t axis, int rank, int *out);

/* ---- attribute interpretation shared by kernels and the backend -------- */
/* transpose: result axis i is operand axis perm[i]. */
void transpose_perm(const Node *n, int rank, int *perm);
/* slice: per operand axis, the first index, the step and the count taken. */
void slice_params(const Node *n, const Shape *in, int64_t *start, int64_t *step, int64_t *count);
/* gather_nd's loop counts: batches, index tuples per batch, a tuple's
 * length k, a slice's elements, data's elements per batch. */
void gather_nd_dims(const Node *n, int64_t *batches, int64_t *tuples, int *k, int64_t *slice, int64_t *per_batch);
/* depth_to_space / space_to_depth as a copy over a 6-D index space (n, c,
 * h, i, w, j): the coefficients of the space side [N, C, H b, W b] and of
 * the depth side [N, C b^2, H, W]. */
void depth_space_copy(const Node *n, const Shape *space, const Shape *depth, Shape *ix, int64_t *scoef, int64_t *dcoef);
/* pad: per axis, the elements added before and after (negative: cropped). */
void pad_params(const Node *n, int rank, int64_t *begin, int64_t *end);

/* conv and pools: per spatial axis (ns of them), the window after
 * auto_pad and defaults, as the reference kernels use it; false when the
 * node's attributes do not describe a valid window. */
typedef struct {
	int ns;
	int64_t in[3], k[3], stride[3], dil[3], pb[3], pe[3], out[3];
} ConvWindow;
bool conv_window(const Node *n, const Shape *xs, const int64_t *k, bool ceil_mode, ConvWindow *w);
/* A verified pool's window over three spatial slots (leading ones of size
 * 1): input size, kernel, stride, dilation, leading pad, output size. */
void pool_window(const Node *n, int64_t *in, int64_t *k, int64_t *stride, int64_t *dil, int64_t *pb, int64_t *out);

/* ---- helpers for kernels ---------------------------------------------- */
/* Strides (in elements) for reading a tensor of shape `from` broadcast to
 * `to` (0 stride on broadcast axes), right-aligned; `to` must be the
 * broadcast result. */
void broadcast_strides(const Shape *from, const Shape *to, int64_t *strides);
/* Advance a multi-index over shape s; returns false after the last one. */
bool index_next(const Shape *s, int64_t *idx);
static inline float *f32(const Tensor *t) { return (float *)t->data; }
bool kernel_error(Diag *d, const Node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
