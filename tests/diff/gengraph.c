/* gengraph: random valid model.ir graphs for differential testing
 * (tests/diff/run.sh, docs/testing.md).
 *
 *   gengraph SEED [-n NODES] [--op NAME]...   a graph on stdout
 *   gengraph --ops                            the ops it can generate
 *
 * A graph is a chain of NODES ops (default 8, plus the small conditioning
 * ops described below) drawn from the whole op table, each made by a
 * generator for its family (elementwise and broadcasting, variadic,
 * reductions, matmul/gemm, conv and pools over 1 to 3 spatial axes,
 * normalizations, data movement) with random shapes (odd, size-1 and
 * broadcast dimensions, ranks 0 to 6), random attributes within the op's
 * spec and random dtypes where the op takes several.  Results feed later
 * ops; whatever nothing uses becomes an output.  Operands are earlier
 * results, graph inputs (the runner fills those with floats in [-1, 1),
 * integers in [0, 8)) or constants.
 *
 * Every candidate node is checked with the op table's own rule
 * (graph_check_node) before it is kept; a rejected one is undone and
 * generated again.  The finished graph is verified, printed, parsed back
 * and verified again (and printed again, which must give the same text):
 * if any of that fails, gengraph exits 1.
 *
 * Numerics: each value carries a sound interval of what it can hold
 * (inputs, constant initializers and every op's range rule below).  Where
 * an op is ill-conditioned on part of its domain (log, sqrt, a divisor near
 * 0, pow's base, exp of a large value), its operand is conditioned first by
 * explicit ops (abs + add to keep it positive, a multiply by a scalar to
 * bound it), so that a correct target agrees with the reference within
 * `gdcc run --check`'s tolerance.  Gather indices are constants within the
 * axis.  Tensors stay small (at most MAX_NUMEL elements) so a graph runs in
 * well under a second on every target. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "ops.h"
#include "printer.h"
#include "rng.h"
#include "util.h"
#include "verify.h"

enum {
	MAX_NUMEL = 2048,      /* elements of one tensor */
	MAX_MACS = 200000,     /* multiply-adds of one conv / matmul / gemm */
	MAX_IN = 16,           /* operands of one generated node */
	MAX_OUT = 8,           /* results of one generated node */
	MAX_ATTRS = 8,
	MAX_LIST = 2 * MAX_RANK, /* entries of an ints attribute (pad's pads) */
	TRIES = 40,            /* attempts at one op before giving up on it */
	GEN_RANK = 6,          /* highest rank generated */
};

/* ---- the graph being generated ------------------------------------------ */
typedef struct {
	double lo, hi;
} Rg;

typedef enum { V_INPUT, V_CONST, V_NODE } VKind;

typedef struct {
	char name[24];
	TensorType t;
	Rg r;          /* every element lies in [lo, hi] */
	VKind kind;
	int uses;
	bool fresh;    /* an input or random constant (or elementwise of one): its values vary */
} GV;

typedef struct {
	char name[24];
	AttrKind kind;
	int64_t i;
	double f;
	const char *s;
	DType dt;
	int64_t v[MAX_LIST];
	int n;
} CAttr;

typedef struct {
	OpKind op;
	int in[MAX_IN];
	int nin;
	int out[MAX_OUT];
	int nout;
	CAttr a[MAX_ATTRS];
	int na;
	ConstInit init; /* OP_CONSTANT */
} GN;

typedef struct {
	Rng rng;
	GV *v;
	int nv, capv;
	GN *n;
	int nn, capn;
	int next_in, next_const, next_val;
	/* dtypes beyond f32 this graph may use for computations */
	bool ints, bools;
	uint64_t seed;
	uint64_t const_seed;
} Gen;

typedef struct {
	int nv, nn, next_in, next_const, next_val;
	uint64_t const_seed;
} Mark;

static Mark mark(const Gen *G)
{
	return (Mark){G->nv, G->nn, G->next_in, G->next_const, G->next_val, G->const_seed};
}

/* Undo everything added since m. */
static void rollback(Gen *G, Mark m)
{
	for (int i = m.nn; i < G->nn; i++) {
		for (int k = 0; k < G->n[i].nin; k++)
			G->v[G->n[i].in[k]].uses--;
		if (G->n[i].op == OP_CONSTANT)
			free(G->n[i].init.values);
	}
	G->nn = m.nn;
	G->nv = m.nv;
	G->next_in = m.next_in;
	G->next_const = m.next_const;
	G->next_val = m.next_val;
	G->const_seed = m.const_seed;
}

/* ---- random choices ------------------------------------------------------ */
static uint64_t rnd(Gen *G, uint64_t n) { return n ? rng_next(&G->rng) % n : 0; }
static int64_t rint_in(Gen *G, int64_t lo, int64_t hi) { return lo + (int64_t)rnd(G, (uint64_t)(hi - lo + 1)); }
static bool chance(Gen *G, double p) { return rng_uniform(&G->rng) < p; }
static double runif(Gen *G, double lo, double hi) { return lo + (hi - lo) * rng_uniform(&G->rng); }

/* A short decimal (so that the printed model reads well). */
static double round3(double x) { return round(x * 1000.0) / 1000.0; }

static int64_t rand_dim(Gen *G)
{
	static const int64_t small[] = {2, 3, 4, 5, 6, 7, 8};
	static const int64_t mid[] = {9, 10, 11, 12, 13, 15, 16, 17, 19, 23, 24};
	static const int64_t big[] = {31, 32, 33, 40, 48, 63, 64, 65, 100};
	double u = rng_uniform(&G->rng);
	if (u < 0.22)
		return 1;
	if (u < 0.75)
		return small[rnd(G, sizeof small / sizeof *small)];
	if (u < 0.93)
		return mid[rnd(G, sizeof mid / sizeof *mid)];
	return big[rnd(G, sizeof big / sizeof *big)];
}

static int64_t numel(const Shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		n *= s->dim[i];
	return n;
}

/* Halve random dimensions until the shape has at most cap elements. */
static void shrink(Gen *G, Shape *s, int64_t cap)
{
	while (numel(s) > cap) {
		int i = (int)rnd(G, (uint64_t)s->rank);
		if (s->dim[i] > 1)
			s->dim[i] = (s->dim[i] + 1) / 2;
	}
}

static int rand_rank(Gen *G, int lo, int hi)
{
	/* ranks 1 to 3 most of the time */
	static const double w[GEN_RANK + 1] = {0.05, 0.2, 0.3, 0.25, 0.12, 0.05, 0.03};
	double tot = 0;
	for (int r = lo; r <= hi && r <= GEN_RANK; r++)
		tot += w[r];
	double u = rng_uniform(&G->rng) * tot;
	for (int r = lo; r <= hi && r <= GEN_RANK; r++) {
		if (u < w[r])
			return r;
		u -= w[r];
	}
	return hi < GEN_RANK ? hi : GEN_RANK;
}

static Shape rand_shape(Gen *G, int rank)
{
	Shape s = {.rank = rank};
	for (int i = 0; i < rank; i++)
		s.dim[i] = rand_dim(G);
	shrink(G, &s, MAX_NUMEL / 2);
	return s;
}

/* ---- intervals ------------------------------------------------------------ */
static double rmag(Rg r) { return fmax(fabs(r.lo), fabs(r.hi)); }
static Rg rg(double lo, double hi) { return (Rg){fmin(lo, hi), fmax(lo, hi)}; }
static Rg rhull(Rg a, Rg b) { return (Rg){fmin(a.lo, b.lo), fmax(a.hi, b.hi)}; }
static Rg rsym(double m) { return (Rg){-m, m}; }
static Rg rmul(Rg a, Rg b)
{
	double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
	Rg r = {p[0], p[0]};
	for (int i = 1; i < 4; i++)
		r = rhull(r, (Rg){p[i], p[i]});
	return r;
}

/* ---- values ------------------------------------------------------------- */
static int add_value(Gen *G, const char *prefix, int *counter, DType dt, const Shape *s, Rg r, VKind kind)
{
	if (G->nv == G->capv) {
		G->capv = G->capv ? 2 * G->capv : 64;
		G->v = xrealloc(G->v, (size_t)G->capv * sizeof *G->v);
	}
	GV *v = &G->v[G->nv];
	memset(v, 0, sizeof *v);
	snprintf(v->name, sizeof v->name, "%s%d", prefix, (*counter)++);
	v->t.dtype = dt;
	v->t.shape = *s;
	v->r = r;
	v->kind = kind;
	v->fresh = kind != V_NODE;
	return G->nv++;
}

static GN *push_node(Gen *G)
{
	if (G->nn == G->capn) {
		G->capn = G->capn ? 2 * G->capn : 64;
		G->n = xrealloc(G->n, (size_t)G->capn * sizeof *G->n);
	}
	GN *n = &G->n[G->nn++];
	memset(n, 0, sizeof *n);
	return n;
}

static Rg input_range(DType dt)
{
	if (dt == DT_F32)
		return (Rg){-1, 1};
	if (dt == DT_BOOL)
		return (Rg){0, 1};
	return (Rg){0, 7};
}

static int new_input(Gen *G, DType dt, const Shape *s)
{
	return add_value(G, "x", &G->next_in, dt, s, input_range(dt), V_INPUT);
}

/* A constant whose elements lie in [lo, hi] (integers: lo and hi are
 * integers too).  Mostly random(); some zeros, fill, normal and inline
 * values to exercise the other initializers. */
static int new_const(Gen *G, DType dt, const Shape *s, double lo, double hi)
{
	ConstInit in = {0};
	in.seed = ++G->const_seed * 7919 + G->seed % 100003;
	Rg r;
	int64_t n = numel(s);
	double u = rng_uniform(&G->rng);
	bool isint = dt != DT_F32;
	if (lo == hi || (u < 0.05 && lo <= 0 && 0 <= hi && !isint)) {
		double v = lo == hi ? lo : 0;
		if (v == 0 && chance(G, 0.5)) {
			in.kind = INIT_ZEROS;
		} else {
			in.kind = INIT_FILL;
			in.a = v;
		}
		r = (Rg){v, v};
	} else if (u < 0.15 && n <= 16) {
		in.kind = INIT_INLINE;
		in.nvalues = n;
		in.values = xcalloc(n ? (size_t)n : 1, sizeof *in.values);
		r = (Rg){hi, lo};
		for (int64_t i = 0; i < n; i++) {
			double x = isint ? (double)rint_in(G, (int64_t)lo, (int64_t)hi) : round3(runif(G, lo, hi));
			if (x < lo)
				x = lo;
			if (x > hi)
				x = hi;
			in.values[i] = x;
			r = (Rg){fmin(r.lo, x), fmax(r.hi, x)};
		}
		if (n == 0)
			r = (Rg){lo, hi};
	} else if (u < 0.25 && !isint) {
		/* normal(): at most 8.6 std from the mean (53-bit uniforms) */
		in.kind = INIT_NORMAL;
		double sd = (hi - lo) / 2 / 8.6;
		in.a = round3((lo + hi) / 2);
		in.b = sd;
		r = (Rg){in.a - 8.6 * sd, in.a + 8.6 * sd};
		if (r.lo < lo || r.hi > hi) { /* rounding of the mean */
			in.kind = INIT_RANDOM;
			in.a = lo;
			in.b = hi;
			r = (Rg){lo, hi};
		}
	} else {
		in.kind = INIT_RANDOM;
		in.a = lo;
		/* random() is uniform in [low, high), integers floored */
		in.b = isint ? hi + 1 : hi;
		r = (Rg){lo, hi};
	}
	int id = add_value(G, "c", &G->next_const, dt, s, r, V_CONST);
	GN *nd = push_node(G);
	nd->op = OP_CONSTANT;
	nd->init = in;
	nd->nout = 1;
	nd->out[0] = id;
	G->v[id].fresh = in.kind == INIT_RANDOM || in.kind == INIT_NORMAL;
	return id;
}

/* A new leaf of type dt/s whose values lie in [lo, hi]: a graph input when
 * the runner's data fit, else a constant. */
static int new_leaf(Gen *G, DType dt, const Shape *s, double lo, double hi)
{
	Rg ir = input_range(dt);
	if (ir.lo >= lo && ir.hi <= hi && chance(G, 0.6))
		return new_input(G, dt, s);
	if (dt == DT_BOOL)
		return new_const(G, dt, s, 0, 1);
	return new_const(G, dt, s, lo, hi);
}

static int default_leaf(Gen *G, DType dt, const Shape *s)
{
	if (dt == DT_F32)
		return new_leaf(G, dt, s, -1, 1);
	if (dt == DT_BOOL)
		return new_leaf(G, dt, s, 0, 1);
	return new_leaf(G, dt, s, 0, 7);
}

/* ---- candidate nodes ------------------------------------------------------- */
static CAttr *attr_new(GN *c, const char *name, AttrKind kind)
{
	if (c->na == MAX_ATTRS) {
		fprintf(stderr, "gengraph: internal error: more than %d attributes\n", MAX_ATTRS);
		exit(1);
	}
	CAttr *a = &c->a[c->na++];
	memset(a, 0, sizeof *a);
	snprintf(a->name, sizeof a->name, "%s", name);
	a->kind = kind;
	return a;
}
static void set_i(GN *c, const char *name, int64_t v) { attr_new(c, name, ATTR_INT)->i = v; }
static void set_f(GN *c, const char *name, double v) { attr_new(c, name, ATTR_FLOAT)->f = v; }
static void set_s(GN *c, const char *name, const char *v) { attr_new(c, name, ATTR_STRING)->s = v; }
static void set_dt(GN *c, const char *name, DType v) { attr_new(c, name, ATTR_DTYPE)->dt = v; }
static void set_ints(GN *c, const char *name, const int64_t *v, int n)
{
	if (n > MAX_LIST) {
		fprintf(stderr, "gengraph: internal error: a list of %d entries\n", n);
		exit(1);
	}
	CAttr *a = attr_new(c, name, ATTR_INTS);
	if (n > 0)
		memcpy(a->v, v, (size_t)n * sizeof *v);
	a->n = n;
}

static const CAttr *cattr(const GN *c, const char *name)
{
	for (int i = 0; i < c->na; i++)
		if (strcmp(c->a[i].name, name) == 0)
			return &c->a[i];
	return NULL;
}
static double cattr_f(const GN *c, const char *name, double def)
{
	const CAttr *a = cattr(c, name);
	return !a ? def : a->kind == ATTR_INT ? (double)a->i : a->f;
}
static int64_t cattr_i(const GN *c, const char *name, int64_t def)
{
	const CAttr *a = cattr(c, name);
	return a ? a->i : def;
}

static void apply_attrs(Node *n, const GN *c)
{
	for (int i = 0; i < c->na; i++) {
		const CAttr *a = &c->a[i];
		switch (a->kind) {
		case ATTR_INT: node_set_int(n, a->name, a->i); break;
		case ATTR_FLOAT: node_set_float(n, a->name, a->f); break;
		case ATTR_STRING: node_set_string(n, a->name, a->s); break;
		case ATTR_DTYPE: node_set_dtype(n, a->name, a->dt); break;
		case ATTR_INTS: node_set_ints(n, a->name, a->v, a->n); break;
		case ATTR_FLOATS: break; /* no op takes one */
		}
	}
}

/* Check candidate c with the op's rule, in a scratch graph whose inputs
 * have the operands' types; on success the results' types go to out. */
static bool check_candidate(Gen *G, const GN *c, TensorType *out)
{
	Graph *s = graph_new("scratch");
	Value *ops[MAX_IN];
	char name[32];
	for (int i = 0; i < c->nin; i++) {
		snprintf(name, sizeof name, "in%d", i);
		const GV *v = &G->v[c->in[i]];
		ops[i] = graph_add_input(s, name, v->t.dtype, &v->t.shape, loc_at(NULL, 0, 0));
	}
	const char *names[MAX_OUT];
	char buf[MAX_OUT][16];
	for (int i = 0; i < c->nout; i++) {
		snprintf(buf[i], sizeof buf[i], "out%d", i);
		names[i] = buf[i];
	}
	Node *n = graph_add_node(s, c->op, ops, c->nin, names, c->nout, loc_at(NULL, 0, 0));
	apply_attrs(n, c);
	Diag d;
	diag_init(&d);
	bool ok = graph_check_node(s, n, &d);
	if (getenv("GENGRAPH_DEBUG") && !ok)
		diag_print(&d, stderr);
	for (int i = 0; ok && i < c->nout; i++) {
		out[i] = n->out[i]->type;
		if (numel(&out[i].shape) > MAX_NUMEL)
			ok = false;
	}
	diag_free(&d);
	graph_free(s);
	return ok;
}

/* The range of a node's result k, from its operands' ranges. */
static Rg result_range(Gen *G, const GN *c, int k, const TensorType *out)
{
	const GV *a = c->nin > 0 ? &G->v[c->in[0]] : NULL;
	const GV *b = c->nin > 1 ? &G->v[c->in[1]] : NULL;
	Rg ra = a ? a->r : (Rg){0, 0}, rb = b ? b->r : (Rg){0, 0};
	bool isint = out[k].dtype != DT_F32;
	switch (c->op) {
	case OP_ADD: return (Rg){ra.lo + rb.lo, ra.hi + rb.hi};
	case OP_SUB: return (Rg){ra.lo - rb.hi, ra.hi - rb.lo};
	case OP_MUL: return rmul(ra, rb);
	case OP_DIV:
		if (isint)
			return rsym(rmag(ra));
		if (rb.lo > 0 || rb.hi < 0)
			return rmul(ra, rg(1 / rb.lo, 1 / rb.hi));
		return rsym(1e30);
	case OP_POW: {
		Rg r = {INFINITY, -INFINITY};
		double bs[2] = {ra.lo, ra.hi}, es[2] = {rb.lo, rb.hi};
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++) {
				double p = pow(bs[i], es[j]);
				r = rhull(r, (Rg){p, p});
			}
		return r;
	}
	case OP_MAX:
	case OP_MIN:
	case OP_SUM: {
		Rg r = ra;
		for (int i = 1; i < c->nin; i++) {
			Rg x = G->v[c->in[i]].r;
			if (c->op == OP_MAX)
				r = (Rg){fmax(r.lo, x.lo), fmax(r.hi, x.hi)};
			else if (c->op == OP_MIN)
				r = (Rg){fmin(r.lo, x.lo), fmin(r.hi, x.hi)};
			else
				r = (Rg){r.lo + x.lo, r.hi + x.hi};
		}
		return r;
	}
	case OP_NEG: return (Rg){-ra.hi, -ra.lo};
	case OP_ABS:
		if (ra.lo >= 0)
			return ra;
		if (ra.hi <= 0)
			return (Rg){-ra.hi, -ra.lo};
		return (Rg){0, rmag(ra)};
	case OP_EXP: return (Rg){exp(ra.lo), exp(ra.hi)};
	case OP_LOG: return (Rg){log(ra.lo), log(ra.hi)};
	case OP_SQRT: return (Rg){sqrt(ra.lo), sqrt(ra.hi)};
	case OP_RECIPROCAL: return rg(1 / ra.lo, 1 / ra.hi);
	case OP_RELU: return (Rg){fmax(ra.lo, 0), fmax(ra.hi, 0)};
	case OP_LEAKY_RELU: {
		double al = cattr_f(c, "alpha", 0.01);
		double p[3] = {ra.lo < 0 ? al * ra.lo : ra.lo, ra.hi < 0 ? al * ra.hi : ra.hi, 0};
		int np = ra.lo < 0 && ra.hi > 0 ? 3 : 2;
		Rg r = {p[0], p[0]};
		for (int i = 1; i < np; i++)
			r = rhull(r, (Rg){p[i], p[i]});
		return r;
	}
	case OP_SIGMOID: return (Rg){1 / (1 + exp(-ra.lo)), 1 / (1 + exp(-ra.hi))};
	case OP_TANH: return (Rg){tanh(ra.lo), tanh(ra.hi)};
	case OP_ERF: return (Rg){erf(ra.lo), erf(ra.hi)};
	case OP_GELU: return (Rg){-0.2, fmax(ra.hi, 0)};
	case OP_CLIP: {
		const CAttr *mn = cattr(c, "min"), *mx = cattr(c, "max");
		Rg r = ra;
		if (mn)
			r = (Rg){fmax(r.lo, mn->f), fmax(r.hi, mn->f)};
		if (mx)
			r = (Rg){fmin(r.lo, mx->f), fmin(r.hi, mx->f)};
		if (isint) /* bounds rounded inward */
			r = (Rg){floor(r.lo), ceil(r.hi)};
		return r;
	}
	case OP_HARDSIGMOID: return (Rg){0, 1};
	case OP_HARDSWISH: return (Rg){-0.4, fmax(ra.hi, 0)};
	case OP_DROPOUT: return k == 0 ? ra : (Rg){0, 1};
	case OP_SOFTMAX: return (Rg){0, 1};
	case OP_LOGSOFTMAX: {
		int64_t ax = cattr_i(c, "axis", -1);
		const Shape *s = &a->t.shape;
		int64_t len = s->dim[ax < 0 ? ax + s->rank : ax];
		return (Rg){-(2 * rmag(ra) + log((double)len) + 1), 0};
	}
	case OP_REDUCE_MEAN: return ra;
	case OP_MATMUL: {
		const Shape *s = &a->t.shape;
		double K = (double)s->dim[s->rank - 1];
		return rsym(K * rmag(ra) * rmag(rb) + 1e-6);
	}
	case OP_GEMM: {
		const Shape *s = &a->t.shape;
		double K = (double)s->dim[cattr_i(c, "trans_a", 0) ? 0 : 1];
		double m = fabs(cattr_f(c, "alpha", 1)) * K * rmag(ra) * rmag(rb);
		if (c->nin > 2)
			m += fabs(cattr_f(c, "beta", 1)) * rmag(G->v[c->in[2]].r);
		return rsym(m + 1e-6);
	}
	case OP_CONV: {
		const Shape *ws = &b->t.shape;
		double taps = 1;
		for (int i = 1; i < ws->rank; i++)
			taps *= (double)ws->dim[i];
		double m = taps * rmag(ra) * rmag(rb);
		if (c->nin > 2)
			m += rmag(G->v[c->in[2]].r);
		return rsym(m + 1e-6);
	}
	case OP_MAXPOOL:
	case OP_GLOBAL_AVGPOOL:
	case OP_GLOBAL_MAXPOOL: return ra;
	case OP_AVGPOOL: return rhull(ra, (Rg){0, 0});
	case OP_MAXPOOL_ARGMAX: return (Rg){0, (double)numel(&a->t.shape)};
	case OP_BATCHNORM: {
		Rg sc = G->v[c->in[1]].r, bi = G->v[c->in[2]].r, mu = G->v[c->in[3]].r, var = G->v[c->in[4]].r;
		double eps = cattr_f(c, "epsilon", 1e-5);
		bool training = cattr_i(c, "training_mode", 0) != 0;
		if (k == 0) {
			double norm;
			if (training) {
				double cnt = (double)numel(&a->t.shape) / (double)a->t.shape.dim[1];
				norm = sqrt(cnt);
			} else {
				norm = (rmag(ra) + rmag(mu)) / sqrt(var.lo + eps);
			}
			return rsym(norm * rmag(sc) + rmag(bi) + 1e-6);
		}
		if (k == 1)
			return rhull(mu, ra);
		return (Rg){fmin(0, var.lo), fmax(var.hi, 4 * rmag(ra) * rmag(ra))};
	}
	case OP_LAYERNORM: {
		int64_t ax = cattr_i(c, "axis", -1);
		const Shape *s = &a->t.shape;
		int axn = (int)(ax < 0 ? ax + s->rank : ax);
		double cnt = 1;
		for (int i = axn; i < s->rank; i++)
			cnt *= (double)s->dim[i];
		if (k == 0) {
			double m = sqrt(cnt) * rmag(b->r);
			if (c->nin > 2)
				m += rmag(G->v[c->in[2]].r);
			return rsym(m + 1e-6);
		}
		if (k == 1)
			return ra;
		return (Rg){0, 1 / sqrt(cattr_f(c, "epsilon", 1e-5))};
	}
	case OP_PAD: {
		const CAttr *m = cattr(c, "mode");
		if (!m || strcmp(m->s, "constant") == 0) {
			double v = cattr_f(c, "value", 0);
			return rhull(ra, (Rg){v, v});
		}
		return ra;
	}
	case OP_SHAPE: {
		double m = 0;
		for (int i = 0; i < a->t.shape.rank; i++)
			m = fmax(m, (double)a->t.shape.dim[i]);
		return (Rg){0, m};
	}
	case OP_CONSTANT_OF_SHAPE: {
		double v = cattr_f(c, "value", 0);
		return (Rg){v, v};
	}
	case OP_CONCAT: {
		Rg r = ra;
		for (int i = 1; i < c->nin; i++)
			r = rhull(r, G->v[c->in[i]].r);
		return r;
	}
	case OP_EQUAL: case OP_LESS: case OP_LESS_EQUAL: case OP_GREATER: case OP_GREATER_EQUAL: case OP_AND:
	case OP_OR: case OP_XOR: case OP_NOT: case OP_ISNAN: case OP_ISINF: case OP_HARDMAX:
		return (Rg){0, 1};
	case OP_WHERE: return rhull(rb, G->v[c->in[2]].r);
	case OP_CAST:
		if (out[k].dtype == DT_BOOL || a->t.dtype == DT_BOOL)
			return (Rg){0, 1};
		return isint && a->t.dtype == DT_F32 ? (Rg){ceil(ra.lo) - 1, floor(ra.hi) + 1} : ra;
	case OP_PRELU: return rhull(ra, rmul(ra, rb));
	case OP_ELU: case OP_CELU: {
		double al = fabs(cattr_f(c, "alpha", 1.0));
		return (Rg){fmin(-al, ra.lo), fmax(ra.hi, 0)};
	}
	case OP_SELU: {
		double al = fabs(cattr_f(c, "alpha", 1.6733)), g = fabs(cattr_f(c, "gamma", 1.0508));
		return (Rg){-g * fmax(al, rmag(ra)), g * fmax(ra.hi, 0)};
	}
	case OP_SOFTPLUS: return (Rg){0, fmax(ra.hi, 0) + 0.7};
	case OP_SOFTSIGN: return (Rg){-1, 1};
	case OP_THRESHOLDED_RELU: return rhull(ra, (Rg){0, 0});
	case OP_SHRINK: {
		double bias = fabs(cattr_f(c, "bias", 0));
		return (Rg){fmin(ra.lo, 0) - bias, fmax(ra.hi, 0) + bias};
	}
	case OP_SIGN: return (Rg){-1, 1};
	case OP_FLOOR: case OP_CEIL: case OP_ROUND: return (Rg){ra.lo - 1, ra.hi + 1};
	case OP_SINH: return (Rg){sinh(ra.lo), sinh(ra.hi)};
	case OP_COSH: return (Rg){1, cosh(rmag(ra))};
	case OP_ASINH: return (Rg){asinh(ra.lo), asinh(ra.hi)};
	case OP_ACOSH: return (Rg){0, acosh(fmax(ra.hi, 1))};
	case OP_ATANH: return (Rg){atanh(fmax(ra.lo, -0.999)), atanh(fmin(ra.hi, 0.999))};
	case OP_SIN: case OP_COS: return (Rg){-1, 1};
	case OP_TAN: return (Rg){tan(fmax(ra.lo, -1.5)), tan(fmin(ra.hi, 1.5))};
	case OP_ASIN: case OP_ATAN: return (Rg){-1.5708, 1.5708};
	case OP_ACOS: return (Rg){0, 3.1416};
	case OP_MEAN: {
		Rg r = ra;
		for (int i = 1; i < c->nin; i++)
			r = rhull(r, G->v[c->in[i]].r);
		return r;
	}
	case OP_REDUCE_SUM: case OP_REDUCE_PROD: case OP_REDUCE_L1: case OP_REDUCE_L2: case OP_REDUCE_LOG_SUM:
	case OP_REDUCE_LOG_SUM_EXP: case OP_REDUCE_SUM_SQUARE: case OP_REDUCE_MAX: case OP_REDUCE_MIN: {
		double cnt = numel(&out[k].shape) ? (double)numel(&a->t.shape) / (double)numel(&out[k].shape) : 1;
		double m = rmag(ra);
		switch (c->op) {
		case OP_REDUCE_SUM: return rsym(m * cnt);
		case OP_REDUCE_PROD: return rsym(pow(fmax(m, 1), cnt));
		case OP_REDUCE_L1: return (Rg){0, m * cnt};
		case OP_REDUCE_L2: return (Rg){0, m * sqrt(cnt)};
		case OP_REDUCE_SUM_SQUARE: return (Rg){0, m * m * cnt};
		case OP_REDUCE_LOG_SUM: return (Rg){log(fmax(ra.lo, 1e-30)), log(fmax(ra.hi, 1e-30) * cnt)};
		case OP_REDUCE_LOG_SUM_EXP: return (Rg){ra.lo, ra.hi + log(cnt)};
		default: return ra;
		}
	}
	case OP_SIZE: {
		double n = (double)numel(&a->t.shape);
		return (Rg){n, n};
	}
	case OP_RANGE: {
		double st = cattr_f(c, "start", 0), de = cattr_f(c, "delta", 1);
		double last = st + de * (double)(numel(&out[k].shape) ? numel(&out[k].shape) - 1 : 0);
		return rg(st, last);
	}
	case OP_ARGMAX: case OP_ARGMIN: {
		double m = 0;
		for (int i = 0; i < a->t.shape.rank; i++)
			m = fmax(m, (double)a->t.shape.dim[i]);
		return (Rg){0, m};
	}
	case OP_TRILU: return rhull(ra, (Rg){0, 0});
	case OP_TOPK: {
		int r = a->t.shape.rank;
		int64_t ax = cattr_i(c, "axis", -1);
		return k == 0 ? ra : (Rg){0, (double)a->t.shape.dim[ax < 0 ? ax + r : ax]};
	}
	case OP_ONE_HOT: return rb;
	case OP_MOD: return rsym(rmag(rb));
	case OP_SCATTER_ND: return rhull(ra, G->v[c->in[2]].r);
	case OP_EYE_LIKE: return (Rg){0, 1};
	default: /* data movement, identity, gather_elements, tile */
		return ra;
	}
}

/* Would c compute a NaN from valid data?  A mean (or the statistics) of
 * nothing does: 0 / 0.  (NaN then meets ops whose NaN handling the
 * targets do not match yet, tests/diff/found/nan-propagation.ir; graphs
 * keep to finite values.) */
static bool makes_nan(const Gen *G, const GN *c, const TensorType *out)
{
	if (c->nin == 0 || numel(&G->v[c->in[0]].t.shape) != 0)
		return false;
	switch (c->op) {
	case OP_REDUCE_MEAN:
	case OP_GLOBAL_AVGPOOL:
	case OP_AVGPOOL:
	case OP_BATCHNORM:
	case OP_LAYERNORM:
		for (int k = 0; k < c->nout; k++)
			if (numel(&out[k].shape) != 0)
				return true;
		return false;
	default: return false;
	}
}

/* Check c and, when it passes, add it with its results; returns the first
 * result (or -1: rejected, nothing added). */
static int emit(Gen *G, GN *c)
{
	TensorType out[MAX_OUT];
	if (!check_candidate(G, c, out) || makes_nan(G, c, out))
		return -1;
	GN cn = *c;
	int first = -1;
	for (int k = 0; k < cn.nout; k++) {
		Rg r = result_range(G, &cn, k, out);
		if (!(r.lo <= r.hi)) /* NaN: an unbounded rule */
			r = rsym(1e30);
		int id = add_value(G, "t", &G->next_val, out[k].dtype, &out[k].shape, r, V_NODE);
		cn.out[k] = id;
		if (first < 0)
			first = id;
	}
	/* elementwise ops of a varied value keep it varied */
	bool fresh = cn.nin > 0;
	for (int i = 0; i < cn.nin; i++)
		fresh &= G->v[cn.in[i]].fresh && shape_eq(&G->v[cn.in[i]].t.shape, &out[0].shape);
	switch (cn.op) {
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_NEG: case OP_EXP: case OP_TANH:
	case OP_SIGMOID: case OP_ERF: case OP_IDENTITY: case OP_TRANSPOSE: case OP_RESHAPE:
		break;
	default: fresh = false;
	}
	G->v[first].fresh = fresh;
	for (int i = 0; i < cn.nin; i++)
		G->v[cn.in[i]].uses++;
	*push_node(G) = cn;
	return first;
}

static GN cand(OpKind op, int nout)
{
	GN c;
	memset(&c, 0, sizeof c);
	c.op = op;
	c.nout = nout;
	return c;
}

static int emit1(Gen *G, OpKind op, int a)
{
	GN c = cand(op, 1);
	c.in[c.nin++] = a;
	return emit(G, &c);
}

static int emit2(Gen *G, OpKind op, int a, int b)
{
	GN c = cand(op, 1);
	c.in[c.nin++] = a;
	c.in[c.nin++] = b;
	return emit(G, &c);
}

/* A scalar f32 constant, rank 0 or [1]. */
static int scalar_const(Gen *G, double v)
{
	Shape s = {.rank = chance(G, 0.5) ? 0 : 1, .dim = {1}};
	return new_const(G, DT_F32, &s, v, v);
}

/* ---- conditioning ------------------------------------------------------- */
/* v scaled so that |v| <= bound (f32; integers are left alone). */
static int bounded(Gen *G, int v, double bound)
{
	if (v < 0 || G->v[v].t.dtype != DT_F32 || rmag(G->v[v].r) <= bound)
		return v;
	double f = bound / rmag(G->v[v].r);
	/* a power of two below f: exact scaling */
	f = ldexp(1.0, (int)floor(log2(f)));
	return emit2(G, OP_MUL, v, scalar_const(G, f));
}

/* v made to lie in [lo, ...) (lo > 0): abs, then an added constant. */
static int positive(Gen *G, int v, double lo)
{
	if (v < 0 || G->v[v].r.lo >= lo)
		return v;
	if (G->v[v].r.lo < 0) {
		v = emit1(G, chance(G, 0.5) ? OP_ABS : OP_RELU, v);
		if (v < 0)
			return v;
	}
	double add = lo - G->v[v].r.lo;
	add = ceil(add * 16) / 16;
	return emit2(G, OP_ADD, v, scalar_const(G, add));
}

/* v kept at least m away from 0: positive, sometimes negated. */
static int nonzero(Gen *G, int v, double m)
{
	Rg r = G->v[v].r;
	if (r.lo >= m || r.hi <= -m)
		return v;
	v = positive(G, v, m);
	if (v >= 0 && chance(G, 0.3))
		v = emit1(G, OP_NEG, v);
	return v;
}

/* ---- picking operands ------------------------------------------------------ */
typedef struct {
	unsigned dtmask;
	int rmin, rmax;
	bool nonempty;   /* no zero-size dimension */
	bool need_fresh;
	bool need_one;   /* some dimension of size 1 */
	int min_rank_dim; /* at least this size on every axis from axis 2 (pools) */
} Want;

static bool fits(const GV *v, const Want *w)
{
	if (!(w->dtmask & DTMASK(v->t.dtype)) || v->t.shape.rank < w->rmin || v->t.shape.rank > w->rmax)
		return false;
	if (w->nonempty && numel(&v->t.shape) == 0)
		return false;
	if (w->need_fresh && !v->fresh)
		return false;
	if (w->need_one) {
		bool one = false;
		for (int i = 0; i < v->t.shape.rank; i++)
			one |= v->t.shape.dim[i] == 1;
		if (!one)
			return false;
	}
	return true;
}

/* An existing value that fits, or -1: results nothing uses yet first (so
 * that ops chain), then other results, then leaves. */
static int pick_existing(Gen *G, const Want *w)
{
	double tot = 0;
	double *wt = xcalloc((size_t)G->nv + 1, sizeof *wt);
	for (int i = 0; i < G->nv; i++) {
		const GV *v = &G->v[i];
		if (!fits(v, w))
			continue;
		wt[i] = v->kind == V_NODE ? (v->uses == 0 ? 8 : 2) : v->kind == V_INPUT ? 1 : 0.5;
		tot += wt[i];
	}
	int r = -1;
	double u = rng_uniform(&G->rng) * tot;
	for (int i = 0; i < G->nv && tot > 0; i++) {
		if (wt[i] == 0)
			continue;
		r = i;
		if (u < wt[i])
			break;
		u -= wt[i];
	}
	free(wt);
	return r;
}

/* A dtype from the mask: f32 mostly, others as this graph allows. */
static DType pick_dtype(Gen *G, unsigned mask)
{
	DType opts[DT_COUNT];
	int n = 0;
	if (G->ints && (mask & DTMASK(DT_I32)))
		opts[n++] = DT_I32;
	if (G->ints && (mask & DTMASK(DT_I64)))
		opts[n++] = DT_I64;
	if (G->bools && (mask & DTMASK(DT_BOOL)))
		opts[n++] = DT_BOOL;
	if ((mask & DTMASK(DT_F32)) && (n == 0 || chance(G, 0.75)))
		return DT_F32;
	if (n == 0) {
		for (int t = DT_F32; t < DT_COUNT; t++)
			if (mask & DTMASK(t))
				return (DType)t;
		return DT_F32;
	}
	return opts[rnd(G, (uint64_t)n)];
}

/* An operand as w describes: an existing value (mostly) or a new leaf. */
static int get_operand(Gen *G, Want w)
{
	unsigned allowed = DTMASK(DT_F32);
	if (G->ints)
		allowed |= DTMASK_INDEX;
	if (G->bools)
		allowed |= DTMASK(DT_BOOL);
	Want wa = w;
	wa.dtmask &= allowed;
	if (!wa.dtmask)
		wa.dtmask = w.dtmask;
	if (chance(G, 0.8)) {
		int v = pick_existing(G, &wa);
		if (v >= 0)
			return v;
	}
	DType dt = pick_dtype(G, wa.dtmask);
	int rank = rand_rank(G, w.rmin, w.rmax);
	Shape s = rand_shape(G, rank);
	if (w.need_one && rank > 0)
		s.dim[rnd(G, (uint64_t)rank)] = 1;
	for (int i = 2; i < rank && w.min_rank_dim; i++)
		if (s.dim[i] < w.min_rank_dim)
			s.dim[i] = w.min_rank_dim + (int64_t)rnd(G, 4);
	shrink(G, &s, MAX_NUMEL / 2);
	return default_leaf(G, dt, &s);
}

static Want want(unsigned mask, int rmin, int rmax)
{
	return (Want){.dtmask = mask, .rmin = rmin, .rmax = rmax};
}

/* An operand of exactly this type: an existing value of it sometimes,
 * else a new leaf with values in [lo, hi]. */
static int get_shaped(Gen *G, DType dt, const Shape *s, double lo, double hi)
{
	if (chance(G, 0.5)) {
		int *cands = xcalloc((size_t)G->nv + 1, sizeof *cands), nc = 0;
		for (int i = 0; i < G->nv; i++)
			if (G->v[i].t.dtype == dt && shape_eq(&G->v[i].t.shape, s) && G->v[i].r.lo >= lo &&
			    G->v[i].r.hi <= hi)
				cands[nc++] = i;
		int r = nc ? cands[rnd(G, (uint64_t)nc)] : -1;
		free(cands);
		if (r >= 0)
			return r;
	}
	return new_leaf(G, dt, s, lo, hi);
}

static int get_shaped_default(Gen *G, DType dt, const Shape *s)
{
	if (dt == DT_F32)
		return get_shaped(G, dt, s, -4, 4);
	if (dt == DT_BOOL)
		return get_shaped(G, dt, s, 0, 1);
	return get_shaped(G, dt, s, -64, 64);
}

/* ---- broadcasting shapes ------------------------------------------------ */
/* A broadcast result shape containing s: some size-1 axes widened, maybe
 * leading axes added. */
static Shape widen(Gen *G, const Shape *s)
{
	Shape r = *s;
	for (int i = 0; i < r.rank; i++)
		if (r.dim[i] == 1 && chance(G, 0.4))
			r.dim[i] = rand_dim(G);
	if (r.rank < GEN_RANK && chance(G, 0.2)) {
		int add = (int)rint_in(G, 1, GEN_RANK - r.rank < 2 ? GEN_RANK - r.rank : 2);
		memmove(r.dim + add, r.dim, (size_t)r.rank * sizeof *r.dim);
		for (int i = 0; i < add; i++)
			r.dim[i] = rand_dim(G);
		r.rank += add;
	}
	shrink(G, &r, MAX_NUMEL);
	/* shrinking may have changed a dimension s had: keep those */
	for (int i = 0; i < s->rank; i++) {
		int j = r.rank - s->rank + i;
		if (s->dim[i] != 1)
			r.dim[j] = s->dim[i];
	}
	return r;
}

/* s without its first `drop` axes (a loop: gcc's -Wstringop-overflow
 * cannot bound a memmove's length here). */
static void drop_leading(Shape *s, int drop)
{
	for (int i = 0; i + drop < s->rank; i++)
		s->dim[i] = s->dim[i + drop];
	s->rank -= drop;
}

/* An operand shape that broadcasts to r: leading axes dropped, some axes 1. */
static Shape narrow(Gen *G, const Shape *r)
{
	Shape s = *r;
	if (s.rank > 0 && chance(G, 0.3))
		drop_leading(&s, (int)rint_in(G, 1, s.rank));
	for (int i = 0; i < s.rank; i++)
		if (chance(G, 0.25))
			s.dim[i] = 1;
	return s;
}

/* ---- the op families ----------------------------------------------------- */
typedef bool (*GenFn)(Gen *G, OpKind op, GN *c);

static unsigned num_mask(void) { return DTMASK_NUM; }

/* Magnitude bounds on what an op may take as an operand. */
enum { B_ANY = 16, B_MUL = 6 };

static bool gen_binary(Gen *G, OpKind op, GN *c)
{
	unsigned mask = op == OP_POW ? DTMASK_FLOAT : num_mask();
	int a = get_operand(G, (Want){.dtmask = mask, .rmin = 0, .rmax = GEN_RANK});
	DType dt = G->v[a].t.dtype;
	bool isint = dt != DT_F32;
	if (isint && rmag(G->v[a].r) > 1e6)
		return false; /* keep integers far from wrapping */
	Shape r = widen(G, &G->v[a].t.shape);
	Shape bs = narrow(G, &r);
	int b;
	switch (op) {
	case OP_DIV:
		a = bounded(G, a, B_ANY);
		if (isint) {
			b = chance(G, 0.7) ? new_const(G, dt, &bs, 1, 4) : new_const(G, dt, &bs, -4, -1);
		} else {
			b = get_shaped_default(G, dt, &bs);
			b = nonzero(G, bounded(G, b, B_ANY), 0.5);
		}
		break;
	case OP_POW:
		a = bounded(G, positive(G, bounded(G, a, 2), 0.25), 3);
		if (!G->ints || chance(G, 0.5)) {
			b = bounded(G, get_shaped_default(G, DT_F32, &bs), 2);
		} else {
			DType et = chance(G, 0.5) ? DT_I32 : DT_I64;
			b = new_const(G, et, &bs, -2, 3);
		}
		break;
	case OP_MUL:
		a = bounded(G, a, B_MUL);
		b = bounded(G, get_shaped_default(G, dt, &bs), B_MUL);
		if (isint && rmag(G->v[a].r) * rmag(G->v[b].r) > 1e9)
			return false;
		break;
	default:
		a = bounded(G, a, B_ANY);
		b = bounded(G, get_shaped_default(G, dt, &bs), B_ANY);
	}
	if (a < 0 || b < 0)
		return false;
	bool swap = op != OP_POW && op != OP_DIV && chance(G, 0.3);
	c->in[c->nin++] = swap ? b : a;
	c->in[c->nin++] = swap ? a : b;
	return true;
}

static bool gen_variadic(Gen *G, OpKind op, GN *c)
{
	int a = get_operand(G, want(num_mask(), 0, GEN_RANK));
	DType dt = G->v[a].t.dtype;
	int n = chance(G, 0.05) ? (int)rint_in(G, 7, 12) : (int)rint_in(G, 1, 5);
	Shape r = widen(G, &G->v[a].t.shape);
	double bound = op == OP_SUM ? B_ANY / (double)n : B_ANY;
	a = bounded(G, a, bound);
	if (a < 0)
		return false;
	int pos = (int)rnd(G, (uint64_t)n);
	for (int i = 0; i < n; i++) {
		int v;
		if (i == pos) {
			v = a;
		} else {
			Shape s = narrow(G, &r);
			v = bounded(G, get_shaped_default(G, dt, &s), bound);
		}
		if (v < 0)
			return false;
		c->in[c->nin++] = v;
	}
	return true;
}

static bool gen_unary(Gen *G, OpKind op, GN *c)
{
	unsigned mask;
	switch (op) {
	case OP_NEG: case OP_ABS: case OP_CLIP: mask = num_mask(); break;
	case OP_IDENTITY: mask = DTMASK_ANY; break;
	default: mask = DTMASK_FLOAT;
	}
	int a = get_operand(G, want(mask, 0, GEN_RANK));
	switch (op) {
	case OP_EXP: a = bounded(G, a, 4); break;
	case OP_LOG: a = positive(G, bounded(G, a, 64), 0.05); break;
	case OP_SQRT: a = positive(G, bounded(G, a, 64), 0.01); break;
	case OP_RECIPROCAL: a = nonzero(G, bounded(G, a, B_ANY), 0.25); break;
	case OP_SIGMOID: case OP_TANH: case OP_ERF: case OP_GELU: a = bounded(G, a, 8); break;
	default:
		if (G->v[a].t.dtype == DT_F32)
			a = bounded(G, a, B_ANY);
	}
	if (a < 0)
		return false;
	c->in[c->nin++] = a;
	DType dt = G->v[a].t.dtype;
	switch (op) {
	case OP_LEAKY_RELU:
		if (chance(G, 0.7))
			set_f(c, "alpha", round3(runif(G, -0.5, 1.5)));
		break;
	case OP_GELU:
		if (chance(G, 0.6))
			set_s(c, "approximate", chance(G, 0.5) ? "none" : "tanh");
		break;
	case OP_CLIP: {
		bool has_min = chance(G, 0.7), has_max = chance(G, 0.7);
		double lo = round3(runif(G, -1.2, 0.5)), hi = round3(runif(G, -0.5, 1.2));
		if (dt != DT_F32) {
			lo = chance(G, 0.5) ? (double)rint_in(G, 0, 3) : lo + 2;
			hi = chance(G, 0.5) ? (double)rint_in(G, 4, 7) : hi + 5;
		}
		if (has_min && has_max && lo > hi) {
			double t = lo;
			lo = hi;
			hi = t;
		}
		if (has_min)
			set_f(c, "min", lo);
		if (has_max)
			set_f(c, "max", hi);
		break;
	}
	case OP_HARDSIGMOID:
		if (chance(G, 0.6))
			set_f(c, "alpha", round3(runif(G, 0.05, 1)));
		if (chance(G, 0.6))
			set_f(c, "beta", round3(runif(G, -0.5, 1)));
		break;
	case OP_DROPOUT:
		if (chance(G, 0.5))
			set_f(c, "ratio", round3(runif(G, 0, 1)));
		if (chance(G, 0.3))
			set_i(c, "training_mode", 0);
		if (chance(G, 0.3))
			set_i(c, "seed", rint_in(G, 0, 1000));
		c->nout = chance(G, 0.4) ? 2 : 1;
		break;
	default: break;
	}
	return true;
}

static bool gen_softmax(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int a = bounded(G, get_operand(G, (Want){.dtmask = DTMASK_FLOAT, .rmin = 1, .rmax = 5}), 8);
	if (a < 0)
		return false;
	c->in[c->nin++] = a;
	int r = G->v[a].t.shape.rank;
	if (chance(G, 0.7))
		set_i(c, "axis", rint_in(G, -r, r - 1));
	return true;
}

/* k distinct axes of rank r, each maybe written negative. */
static int rand_axes(Gen *G, int r, int k, int64_t *ax)
{
	int perm[MAX_RANK];
	for (int i = 0; i < r; i++)
		perm[i] = i;
	for (int i = r - 1; i > 0; i--) {
		int j = (int)rnd(G, (uint64_t)i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int i = 0; i < k; i++)
		ax[i] = chance(G, 0.3) ? perm[i] - r : perm[i];
	return k;
}

static bool gen_reduce(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int a = bounded(G, get_operand(G, want(DTMASK_FLOAT, 0, GEN_RANK)), B_ANY);
	if (a < 0)
		return false;
	c->in[c->nin++] = a;
	int r = G->v[a].t.shape.rank;
	double u = rng_uniform(&G->rng);
	if (u < 0.6 && r > 0) {
		int64_t ax[MAX_RANK];
		set_ints(c, "axes", ax, rand_axes(G, r, (int)rint_in(G, 1, r), ax));
	} else if (u < 0.7) {
		set_ints(c, "axes", NULL, 0);
	}
	if (chance(G, 0.5))
		set_i(c, "keepdims", rint_in(G, 0, 1));
	if (chance(G, 0.3))
		set_i(c, "noop_with_empty_axes", rint_in(G, 0, 1));
	return true;
}

static bool gen_matmul(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int a = get_operand(G, (Want){.dtmask = num_mask(), .rmin = 1, .rmax = 4, .nonempty = false});
	DType dt = G->v[a].t.dtype;
	a = bounded(G, a, 4);
	if (a < 0 || (dt != DT_F32 && rmag(G->v[a].r) > 1000))
		return false;
	const Shape asv = G->v[a].t.shape, *as = &asv;
	int64_t K = as->dim[as->rank - 1];
	if (K > 64)
		return false;
	Shape bs;
	if (chance(G, 0.15)) {
		bs = (Shape){.rank = 1, .dim = {K}};
	} else {
		/* batch: broadcast with a's */
		Shape ab = {.rank = as->rank > 2 ? as->rank - 2 : 0};
		for (int i = 0; i < ab.rank; i++)
			ab.dim[i] = as->dim[i];
		Shape bb = narrow(G, &ab);
		if (ab.rank == 0 && chance(G, 0.2)) {
			bb.rank = 1;
			bb.dim[0] = rint_in(G, 1, 3);
		}
		bs = bb;
		bs.dim[bs.rank++] = K;
		bs.dim[bs.rank++] = rand_dim(G);
	}
	shrink(G, &bs, MAX_NUMEL / 2);
	if (bs.dim[bs.rank == 1 ? 0 : bs.rank - 2] != K)
		return false;
	int b = dt == DT_F32 ? bounded(G, get_shaped(G, dt, &bs, -2, 2), 4) : get_shaped(G, dt, &bs, -8, 8);
	if (b < 0)
		return false;
	double macs = (double)numel(as) * (double)(bs.rank > 1 ? bs.dim[bs.rank - 1] : 1);
	if (macs > MAX_MACS)
		return false;
	c->in[c->nin++] = a;
	c->in[c->nin++] = b;
	return true;
}

static bool gen_gemm(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int a = bounded(G, get_operand(G, (Want){.dtmask = DTMASK_FLOAT, .rmin = 2, .rmax = 2}), 4);
	if (a < 0)
		return false;
	bool ta = chance(G, 0.4), tb = chance(G, 0.4);
	const Shape asv = G->v[a].t.shape, *as = &asv;
	int64_t M = as->dim[ta ? 1 : 0], K = as->dim[ta ? 0 : 1], N = rand_dim(G);
	if (K > 64 || M * K * N > MAX_MACS)
		return false;
	Shape bs = {.rank = 2, .dim = {tb ? N : K, tb ? K : N}};
	int b = bounded(G, get_shaped(G, DT_F32, &bs, -2, 2), 4);
	if (b < 0)
		return false;
	c->in[c->nin++] = a;
	c->in[c->nin++] = b;
	if (chance(G, 0.7)) {
		Shape cs;
		switch (rnd(G, 6)) {
		case 0: cs = (Shape){.rank = 0}; break;
		case 1: cs = (Shape){.rank = 1, .dim = {N}}; break;
		case 2: cs = (Shape){.rank = 1, .dim = {1}}; break;
		case 3: cs = (Shape){.rank = 2, .dim = {M, 1}}; break;
		case 4: cs = (Shape){.rank = 2, .dim = {1, N}}; break;
		default: cs = (Shape){.rank = 2, .dim = {M, N}};
		}
		int cv = bounded(G, get_shaped_default(G, DT_F32, &cs), B_ANY);
		if (cv < 0)
			return false;
		c->in[c->nin++] = cv;
	}
	if (ta || chance(G, 0.2))
		set_i(c, "trans_a", ta);
	if (tb || chance(G, 0.2))
		set_i(c, "trans_b", tb);
	if (chance(G, 0.5))
		set_f(c, "alpha", round3(runif(G, -2, 2)));
	if (chance(G, 0.5))
		set_f(c, "beta", round3(runif(G, -2, 2)));
	return true;
}

/* strides, dilations, pads and auto_pad for a window over ns spatial
 * axes of sizes in[] with kernel k[] (conv and pools). */
static void window_attrs(Gen *G, GN *c, int ns, const int64_t *in, const int64_t *k, bool dilations)
{
	int64_t st[3], dl[3], pd[6];
	bool any_pad = false;
	for (int i = 0; i < ns; i++) {
		st[i] = chance(G, 0.6) ? 1 : rint_in(G, 1, 3);
		dl[i] = dilations && chance(G, 0.3) ? rint_in(G, 1, 2) : 1;
		int64_t maxp = k[i] - 1 < 2 ? k[i] - 1 : 2;
		pd[i] = chance(G, 0.5) ? 0 : rint_in(G, 0, maxp < 0 ? 0 : maxp);
		pd[ns + i] = chance(G, 0.5) ? 0 : rint_in(G, 0, maxp < 0 ? 0 : maxp);
		any_pad |= pd[i] || pd[ns + i];
		(void)in;
	}
	if (chance(G, 0.7))
		set_ints(c, "strides", st, ns);
	if (dilations && chance(G, 0.5))
		set_ints(c, "dilations", dl, ns);
	double u = rng_uniform(&G->rng);
	if (u < 0.7) {
		if (any_pad || chance(G, 0.3))
			set_ints(c, "pads", pd, 2 * ns);
		if (chance(G, 0.2))
			set_s(c, "auto_pad", "NOTSET");
	} else {
		static const char *const modes[] = {"SAME_UPPER", "SAME_LOWER", "VALID"};
		set_s(c, "auto_pad", modes[rnd(G, 3)]);
	}
}

static bool gen_conv(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x;
	int rank = (int)rint_in(G, 3, 5);
	int64_t group, cg;
	if (chance(G, 0.5)) {
		x = get_operand(G, (Want){.dtmask = DTMASK_FLOAT, .rmin = 3, .rmax = 5, .nonempty = true});
		if (x < 0)
			return false;
		rank = G->v[x].t.shape.rank;
		int64_t C = G->v[x].t.shape.dim[1];
		/* a divisor of C as the group count */
		int64_t divs[64];
		int nd = 0;
		for (int64_t d = 1; d <= C && nd < 64; d++)
			if (C % d == 0)
				divs[nd++] = d;
		group = chance(G, 0.5) ? 1 : divs[rnd(G, (uint64_t)nd)];
		cg = C / group;
	} else {
		group = chance(G, 0.5) ? 1 : rint_in(G, 1, 4);
		cg = rint_in(G, 1, 4);
		Shape xs = {.rank = rank};
		xs.dim[0] = rint_in(G, 1, 2);
		xs.dim[1] = group * cg;
		for (int i = 2; i < rank; i++)
			xs.dim[i] = rank == 5 ? rint_in(G, 1, 6) : rint_in(G, 1, rank == 4 ? 12 : 24);
		shrink(G, &xs, MAX_NUMEL / 2);
		xs.dim[1] = group * cg;
		if (numel(&xs) > MAX_NUMEL)
			return false;
		x = new_leaf(G, DT_F32, &xs, -1, 1);
	}
	x = bounded(G, x, 4);
	if (x < 0)
		return false;
	const Shape *xs = &G->v[x].t.shape;
	int ns = rank - 2;
	int64_t mg = rint_in(G, 1, 3), M = group * mg;
	Shape ws = {.rank = rank, .dim = {M, cg}};
	int64_t k[3], in[3], taps = cg;
	for (int i = 0; i < ns; i++) {
		in[i] = xs->dim[2 + i];
		k[i] = rint_in(G, 1, in[i] + 1 < 3 ? in[i] + 1 : 3);
		ws.dim[2 + i] = k[i];
		taps *= k[i];
	}
	if (numel(&ws) > MAX_NUMEL || (double)numel(xs) / (double)xs->dim[1] * (double)M * (double)taps > MAX_MACS)
		return false;
	int w = bounded(G, get_shaped(G, DT_F32, &ws, -0.5, 0.5), 1);
	if (w < 0)
		return false;
	c->in[c->nin++] = x;
	c->in[c->nin++] = w;
	if (chance(G, 0.6)) {
		Shape bs = {.rank = 1, .dim = {M}};
		int b = bounded(G, get_shaped_default(G, DT_F32, &bs), B_ANY);
		if (b < 0)
			return false;
		c->in[c->nin++] = b;
	}
	if (group != 1 || chance(G, 0.2))
		set_i(c, "group", group);
	if (chance(G, 0.3))
		set_ints(c, "kernel_shape", k, ns);
	window_attrs(G, c, ns, in, k, true);
	return true;
}

static bool gen_pool(Gen *G, OpKind op, GN *c)
{
	int x = bounded(G, get_operand(G, (Want){.dtmask = DTMASK_FLOAT, .rmin = 3, .rmax = 5, .nonempty = true}), B_ANY);
	if (x < 0)
		return false;
	const Shape *xs = &G->v[x].t.shape;
	int ns = xs->rank - 2;
	int64_t k[3], in[3];
	for (int i = 0; i < ns; i++) {
		in[i] = xs->dim[2 + i];
		k[i] = rint_in(G, 1, in[i] + 1 < 3 ? in[i] + 1 : 3);
	}
	c->in[c->nin++] = x;
	set_ints(c, "kernel_shape", k, ns);
	window_attrs(G, c, ns, in, k, true);
	if (chance(G, 0.4))
		set_i(c, "ceil_mode", rint_in(G, 0, 1));
	if (op == OP_AVGPOOL && chance(G, 0.5))
		set_i(c, "count_include_pad", rint_in(G, 0, 1));
	if (op == OP_MAXPOOL && chance(G, 0.1))
		set_i(c, "storage_order", 0);
	if (op == OP_MAXPOOL_ARGMAX && chance(G, 0.5))
		set_i(c, "storage_order", rint_in(G, 0, 1));
	return true;
}

static bool gen_global_pool(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = bounded(G, get_operand(G, (Want){.dtmask = DTMASK_FLOAT, .rmin = 3, .rmax = 5, .nonempty = true}), B_ANY);
	if (x < 0)
		return false;
	c->in[c->nin++] = x;
	return true;
}

static bool gen_batchnorm(Gen *G, OpKind op, GN *c)
{
	(void)op;
	bool training = chance(G, 0.3);
	Want w = {.dtmask = DTMASK_FLOAT, .rmin = 2, .rmax = 5, .nonempty = true, .need_fresh = training};
	int x = bounded(G, get_operand(G, w), B_ANY);
	if (x < 0)
		return false;
	int64_t C = G->v[x].t.shape.dim[1];
	Shape cs = {.rank = 1, .dim = {C}};
	int sc = bounded(G, get_shaped(G, DT_F32, &cs, -2, 2), 4);
	int bi = bounded(G, get_shaped(G, DT_F32, &cs, -2, 2), 4);
	int mu = bounded(G, get_shaped(G, DT_F32, &cs, -1, 1), 4);
	int var = get_shaped(G, DT_F32, &cs, 0.25, 2);
	var = positive(G, bounded(G, var, 4), 0.25);
	if (sc < 0 || bi < 0 || mu < 0 || var < 0)
		return false;
	int ops[5] = {x, sc, bi, mu, var};
	for (int i = 0; i < 5; i++)
		c->in[c->nin++] = ops[i];
	if (chance(G, 0.5))
		set_f(c, "epsilon", round3(runif(G, 0.001, 0.1)));
	if (training) {
		set_i(c, "training_mode", 1);
		if (chance(G, 0.5))
			set_f(c, "momentum", round3(runif(G, 0, 1)));
		c->nout = chance(G, 0.5) ? 3 : 1;
	} else if (chance(G, 0.2)) {
		set_i(c, "training_mode", 0);
	}
	return true;
}

static bool gen_layernorm(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = bounded(G, get_operand(G, (Want){.dtmask = DTMASK_FLOAT, .rmin = 1, .rmax = 5, .nonempty = true,
						  .need_fresh = true}),
			B_ANY);
	if (x < 0)
		return false;
	const Shape *xs = &G->v[x].t.shape;
	int r = xs->rank;
	/* mostly the last axis (what every target lowers today) */
	int64_t axis = chance(G, 0.6) ? -1 : rint_in(G, -r, r - 1);
	int an = (int)(axis < 0 ? axis + r : axis);
	Shape norm = {.rank = r - an};
	for (int i = 0; i < norm.rank; i++)
		norm.dim[i] = xs->dim[an + i];
	c->in[c->nin++] = x;
	int nops = chance(G, 0.6) ? 2 : 1;
	for (int k = 0; k < nops; k++) {
		Shape s = norm;
		if (s.rank > 0 && chance(G, 0.3)) {
			drop_leading(&s, (int)rint_in(G, 1, s.rank));
		}
		for (int i = 0; i < s.rank; i++)
			if (chance(G, 0.15))
				s.dim[i] = 1;
		int v = bounded(G, get_shaped(G, DT_F32, &s, -2, 2), 4);
		if (v < 0)
			return false;
		c->in[c->nin++] = v;
	}
	if (axis != -1 || chance(G, 0.3))
		set_i(c, "axis", axis);
	if (chance(G, 0.5))
		set_f(c, "epsilon", round3(runif(G, 0.001, 0.1)));
	if (chance(G, 0.1))
		set_i(c, "stash_type", 1);
	c->nout = (int)rint_in(G, 1, 3);
	return true;
}

/* A random factorization of n into `rank` dimensions. */
static Shape factor_shape(Gen *G, int64_t n, int rank)
{
	Shape s = {.rank = rank};
	for (int i = 0; i < rank; i++)
		s.dim[i] = 1;
	if (rank == 0)
		return s;
	if (n == 0) {
		s.dim[rnd(G, (uint64_t)rank)] = 0;
		return s;
	}
	int64_t m = n;
	for (int64_t p = 2; m > 1;) {
		if (p * p > m)
			p = m;
		if (m % p == 0) {
			s.dim[rnd(G, (uint64_t)rank)] *= p;
			m /= p;
		} else {
			p++;
		}
	}
	return s;
}

static unsigned move_mask(Gen *G)
{
	(void)G;
	return DTMASK_ANY;
}

static bool gen_reshape(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(move_mask(G), 0, GEN_RANK));
	const Shape *xs = &G->v[x].t.shape;
	int64_t n = numel(xs);
	int rank = rand_rank(G, n == 1 ? 0 : 1, GEN_RANK);
	Shape s = factor_shape(G, n, rank);
	int64_t v[MAX_RANK];
	bool zero = false, minus = false;
	for (int i = 0; i < rank; i++) {
		v[i] = s.dim[i];
		zero |= s.dim[i] == 0;
	}
	bool allowzero = chance(G, 0.2);
	if (!allowzero)
		for (int i = 0; i < rank && i < xs->rank; i++)
			if (v[i] == xs->dim[i] && chance(G, 0.3))
				v[i] = 0; /* copy the input's dimension */
	if (rank > 0 && chance(G, 0.4) && !(allowzero && zero)) {
		int i = (int)rnd(G, (uint64_t)rank);
		if (v[i] != 0 || !allowzero) {
			v[i] = -1;
			minus = true;
		}
	}
	(void)minus;
	c->in[c->nin++] = x;
	set_ints(c, "shape", v, rank);
	if (allowzero || chance(G, 0.1))
		set_i(c, "allowzero", allowzero);
	return true;
}

static bool gen_transpose(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(move_mask(G), 0, GEN_RANK));
	int r = G->v[x].t.shape.rank;
	c->in[c->nin++] = x;
	if (chance(G, 0.8)) {
		int64_t p[MAX_RANK];
		int64_t tmp[MAX_RANK];
		rand_axes(G, r, r, tmp);
		for (int i = 0; i < r; i++)
			p[i] = tmp[i] < 0 ? tmp[i] + r : tmp[i];
		set_ints(c, "perm", p, r);
	}
	return true;
}

static bool gen_flatten(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(move_mask(G), 0, GEN_RANK));
	int r = G->v[x].t.shape.rank;
	c->in[c->nin++] = x;
	if (chance(G, 0.8))
		set_i(c, "axis", rint_in(G, -r, r));
	return true;
}

static bool gen_concat(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(move_mask(G), 1, GEN_RANK));
	const GV *xv = &G->v[x];
	int r = xv->t.shape.rank;
	int64_t axis = rint_in(G, -r, r - 1);
	int an = (int)(axis < 0 ? axis + r : axis);
	int n = (int)rint_in(G, 1, 5), pos = (int)rnd(G, (uint64_t)n);
	DType dt = xv->t.dtype;
	Shape base = xv->t.shape;
	for (int i = 0; i < n; i++) {
		int v = x;
		if (i != pos) {
			Shape s = base;
			s.dim[an] = chance(G, 0.05) ? 0 : rand_dim(G);
			shrink(G, &s, MAX_NUMEL / 4);
			for (int j = 0; j < r; j++)
				if (j != an)
					s.dim[j] = base.dim[j];
			v = get_shaped_default(G, dt, &s);
		}
		c->in[c->nin++] = v;
	}
	set_i(c, "axis", axis);
	return true;
}

static bool gen_split(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(move_mask(G), 1, GEN_RANK));
	const Shape *xs = &G->v[x].t.shape;
	int r = xs->rank;
	int64_t axis = rint_in(G, -r, r - 1);
	int an = (int)(axis < 0 ? axis + r : axis);
	int64_t dim = xs->dim[an];
	c->in[c->nin++] = x;
	if (axis != 0 || chance(G, 0.3))
		set_i(c, "axis", axis);
	double u = rng_uniform(&G->rng);
	if (u < 0.4) {
		int k = (int)rint_in(G, 1, dim < 5 ? (dim < 1 ? 1 : dim) : 5);
		int64_t sz[MAX_OUT] = {0}, left = dim;
		for (int i = 0; i < k - 1; i++) {
			sz[i] = rint_in(G, chance(G, 0.1) ? 0 : (left > 0 ? 1 : 0), left);
			left -= sz[i];
		}
		sz[k - 1] = left;
		set_ints(c, "split", sz, k);
		c->nout = k;
	} else if (u < 0.7) {
		int k = (int)rint_in(G, 1, 4);
		set_i(c, "num_outputs", k);
		c->nout = k;
	} else {
		int divs[MAX_OUT], nd = 0;
		for (int k = 1; k <= 6; k++)
			if (dim % k == 0)
				divs[nd++] = k;
		c->nout = divs[rnd(G, (uint64_t)nd)];
	}
	return true;
}

static int64_t slice_bound(Gen *G, int64_t d)
{
	double u = rng_uniform(&G->rng);
	if (u < 0.05)
		return INT64_MAX;
	if (u < 0.1)
		return INT64_MIN;
	return rint_in(G, -d - 2, d + 2);
}

static bool gen_slice(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(move_mask(G), 1, GEN_RANK));
	const Shape *xs = &G->v[x].t.shape;
	int r = xs->rank;
	int k = (int)rint_in(G, 1, r);
	int64_t ax[MAX_RANK], st[MAX_RANK], en[MAX_RANK], sp[MAX_RANK];
	bool has_axes = chance(G, 0.6);
	if (has_axes)
		rand_axes(G, r, k, ax);
	else
		for (int i = 0; i < k; i++)
			ax[i] = i;
	bool has_steps = chance(G, 0.6);
	for (int i = 0; i < k; i++) {
		int a = (int)(ax[i] < 0 ? ax[i] + r : ax[i]);
		int64_t d = xs->dim[a];
		static const int64_t steps[] = {1, 1, 1, 2, 3, -1, -1, -2, -3};
		sp[i] = has_steps ? steps[rnd(G, sizeof steps / sizeof *steps)] : 1;
		st[i] = slice_bound(G, d);
		en[i] = slice_bound(G, d);
		/* mostly non-empty: order start and end for the step's direction */
		if (chance(G, 0.85) && st[i] != INT64_MIN && en[i] != INT64_MIN && st[i] != INT64_MAX &&
		    en[i] != INT64_MAX) {
			int64_t s0 = st[i] < 0 ? st[i] + d : st[i], e0 = en[i] < 0 ? en[i] + d : en[i];
			if ((sp[i] > 0 && s0 > e0) || (sp[i] < 0 && s0 < e0)) {
				int64_t t = st[i];
				st[i] = en[i];
				en[i] = t;
			}
		}
	}
	c->in[c->nin++] = x;
	set_ints(c, "starts", st, k);
	set_ints(c, "ends", en, k);
	if (has_axes)
		set_ints(c, "axes", ax, k);
	if (has_steps)
		set_ints(c, "steps", sp, k);
	return true;
}

static bool gen_squeeze(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, (Want){.dtmask = move_mask(G), .rmin = 1, .rmax = GEN_RANK, .need_one = true});
	const Shape *xs = &G->v[x].t.shape;
	c->in[c->nin++] = x;
	if (chance(G, 0.7)) {
		int64_t ax[MAX_RANK];
		int k = 0;
		for (int i = 0; i < xs->rank; i++)
			if (xs->dim[i] == 1 && (k == 0 || chance(G, 0.6)))
				ax[k++] = chance(G, 0.3) ? i - xs->rank : i;
		set_ints(c, "axes", ax, k);
	}
	return true;
}

static bool gen_unsqueeze(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(move_mask(G), 0, GEN_RANK - 1));
	int r = G->v[x].t.shape.rank;
	int k = (int)rint_in(G, 1, GEN_RANK - r < 3 ? GEN_RANK - r : 3);
	int64_t ax[MAX_RANK];
	rand_axes(G, r + k, k, ax);
	c->in[c->nin++] = x;
	set_ints(c, "axes", ax, k);
	return true;
}

static bool gen_gather(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, (Want){.dtmask = move_mask(G), .rmin = 1, .rmax = 4, .nonempty = true});
	const Shape *xs = &G->v[x].t.shape;
	int r = xs->rank;
	int64_t axis = rint_in(G, -r, r - 1);
	int an = (int)(axis < 0 ? axis + r : axis);
	int64_t d = xs->dim[an];
	Shape is = rand_shape(G, (int)rint_in(G, 0, 2));
	shrink(G, &is, 64);
	DType it = chance(G, 0.6) ? DT_I64 : DT_I32;
	int idx;
	if (d >= 8 && chance(G, 0.3))
		idx = new_input(G, it, &is); /* the runner's integers: [0, 8) */
	else
		idx = new_const(G, it, &is, chance(G, 0.3) ? -d : 0, d - 1);
	c->in[c->nin++] = x;
	c->in[c->nin++] = idx;
	if (axis != 0 || chance(G, 0.3))
		set_i(c, "axis", axis);
	return true;
}

static bool gen_expand(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(move_mask(G), 0, GEN_RANK));
	Shape r = widen(G, &G->v[x].t.shape);
	/* the attribute may itself say 1 where x has a larger dimension, and
	 * may be shorter than x */
	Shape s = narrow(G, &r);
	if (s.rank < G->v[x].t.shape.rank && chance(G, 0.5))
		s = r;
	c->in[c->nin++] = x;
	set_ints(c, "shape", s.dim, s.rank);
	return true;
}

static bool gen_pad(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(move_mask(G), 1, GEN_RANK));
	const Shape *xs = &G->v[x].t.shape;
	DType dt = G->v[x].t.dtype;
	int r = xs->rank;
	static const char *const modes[] = {"constant", "reflect", "edge"};
	const char *mode = modes[rnd(G, 3)];
	bool has_axes = chance(G, 0.3);
	int64_t ax[MAX_RANK];
	int k = r;
	if (has_axes)
		k = rand_axes(G, r, (int)rint_in(G, 1, r), ax);
	int64_t p[2 * MAX_RANK];
	for (int i = 0; i < k; i++) {
		int a = has_axes ? (int)(ax[i] < 0 ? ax[i] + r : ax[i]) : i;
		int64_t d = xs->dim[a];
		for (int e = 0; e < 2; e++) {
			int64_t v = chance(G, 0.4) ? 0 : rint_in(G, -1, 3);
			if (strcmp(mode, "reflect") == 0 && v >= d)
				v = d - 1;
			if (v < 0 && d < 3)
				v = 0;
			p[e * k + i] = v;
		}
	}
	c->in[c->nin++] = x;
	set_ints(c, "pads", p, 2 * k);
	if (strcmp(mode, "constant") != 0 || chance(G, 0.3))
		set_s(c, "mode", mode);
	if (strcmp(mode, "constant") == 0 && chance(G, 0.6)) {
		double v = dt == DT_F32 ? round3(runif(G, -2, 2)) : dt == DT_BOOL ? (double)rint_in(G, 0, 1)
									       : (double)rint_in(G, -5, 5);
		set_f(c, "value", v);
	}
	if (has_axes)
		set_ints(c, "axes", ax, k);
	return true;
}

static bool gen_shape(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(move_mask(G), 0, GEN_RANK));
	int r = G->v[x].t.shape.rank;
	c->in[c->nin++] = x;
	if (chance(G, 0.4))
		set_i(c, "start", rint_in(G, -r - 1, r + 1));
	if (chance(G, 0.4))
		set_i(c, "end", rint_in(G, -r - 1, r + 1));
	return true;
}

static bool gen_constant_of_shape(Gen *G, OpKind op, GN *c)
{
	(void)op;
	Shape s = rand_shape(G, rand_rank(G, 0, 4));
	DType dt = pick_dtype(G, DTMASK_ANY);
	set_ints(c, "shape", s.dim, s.rank);
	double v = dt == DT_F32 ? round3(runif(G, -3, 3)) : dt == DT_BOOL ? (double)rint_in(G, 0, 1)
								     : (double)rint_in(G, -5, 9);
	if (chance(G, 0.8))
		set_f(c, "value", v);
	if (dt != DT_F32 || chance(G, 0.3))
		set_dt(c, "dtype", dt);
	return true;
}

/* The constant op: a constant made as an operand of some other op, then
 * used by a unary op so that it is not dead. */
static bool gen_constant(Gen *G, OpKind op, GN *c)
{
	(void)op;
	Shape s = rand_shape(G, rand_rank(G, 0, 4));
	int k = new_const(G, DT_F32, &s, -1, 1);
	c->op = OP_IDENTITY;
	c->in[c->nin++] = k;
	return true;
}

/* ---- the ops of issue 17 ---------------------------------------------------- */
/* f32 activations, rounding and hyperbolic functions: the operand kept
 * where the function is finite */
static bool gen_activation(Gen *G, OpKind op, GN *c)
{
	int a = get_operand(G, want(DTMASK_FLOAT, 0, GEN_RANK));
	switch (op) {
	case OP_ELU: case OP_SELU: case OP_CELU: case OP_SOFTPLUS: a = bounded(G, a, 8); break;
	case OP_SINH: case OP_COSH: a = bounded(G, a, 4); break;
	case OP_ACOSH: a = positive(G, bounded(G, a, 64), 1.0); break;
	case OP_ATANH: a = bounded(G, a, 0.5); break;
	case OP_TAN: case OP_ASIN: case OP_ACOS: a = bounded(G, a, 1); break;
	default: a = bounded(G, a, B_ANY);
	}
	if (a < 0)
		return false;
	c->in[c->nin++] = a;
	switch (op) {
	case OP_ELU: case OP_CELU: case OP_THRESHOLDED_RELU:
		if (chance(G, 0.7))
			set_f(c, "alpha", round3(runif(G, 0.25, 2)));
		break;
	case OP_SELU:
		if (chance(G, 0.5)) {
			set_f(c, "alpha", round3(runif(G, 0.5, 2)));
			set_f(c, "gamma", round3(runif(G, 0.5, 2)));
		}
		break;
	case OP_SHRINK:
		if (chance(G, 0.7)) {
			set_f(c, "lambd", round3(runif(G, 0, 2)));
			set_f(c, "bias", round3(runif(G, -1, 1)));
		}
		break;
	default:
		break;
	}
	return true;
}

/* prelu(x, slope): the slope's shape broadcasts to x's */
static bool gen_prelu(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int a = bounded(G, get_operand(G, want(DTMASK_FLOAT, 0, GEN_RANK)), B_ANY);
	if (a < 0)
		return false;
	Shape ss = narrow(G, &G->v[a].t.shape);
	int b = bounded(G, get_shaped_default(G, DT_F32, &ss), 4);
	if (b < 0)
		return false;
	c->in[c->nin++] = a;
	c->in[c->nin++] = b;
	return true;
}

/* comparisons of two values of one dtype (equal also of bools), broadcasting */
static bool gen_compare(Gen *G, OpKind op, GN *c)
{
	unsigned mask = op == OP_EQUAL ? DTMASK_ANY : num_mask();
	int a = get_operand(G, want(mask, 0, GEN_RANK));
	DType dt = G->v[a].t.dtype;
	Shape r = widen(G, &G->v[a].t.shape), bs = narrow(G, &r);
	int b = get_shaped_default(G, dt, &bs);
	if (dt == DT_F32 && chance(G, 0.3))
		b = a; /* some equal elements */
	if (a < 0 || b < 0)
		return false;
	c->in[c->nin++] = chance(G, 0.5) ? a : b;
	c->in[c->nin++] = c->in[0] == a ? b : a;
	return true;
}

/* and, or, xor of two bools, not of one; isnan and isinf of f32 */
static bool gen_logic(Gen *G, OpKind op, GN *c)
{
	unsigned mask = op == OP_ISNAN || op == OP_ISINF ? DTMASK_FLOAT : DTMASK(DT_BOOL);
	int a = get_operand(G, want(mask, 0, GEN_RANK));
	if (G->v[a].t.dtype != DT_F32 && G->v[a].t.dtype != DT_BOOL)
		return false;
	c->in[c->nin++] = a;
	if (op == OP_AND || op == OP_OR || op == OP_XOR) {
		Shape r = widen(G, &G->v[a].t.shape), bs = narrow(G, &r);
		int b = get_shaped_default(G, DT_BOOL, &bs);
		if (b < 0)
			return false;
		c->in[c->nin++] = b;
	}
	if (op == OP_ISINF && chance(G, 0.5))
		set_i(c, chance(G, 0.5) ? "detect_negative" : "detect_positive", 0);
	return true;
}

/* where(cond, x, y): a bool condition, x and y of one dtype, broadcasting */
static bool gen_where(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(DTMASK_ANY, 0, GEN_RANK));
	DType dt = G->v[x].t.dtype;
	Shape r = widen(G, &G->v[x].t.shape), ys = narrow(G, &r), cs = narrow(G, &r);
	int y = get_shaped_default(G, dt, &ys), cond = get_shaped_default(G, DT_BOOL, &cs);
	if (y < 0 || cond < 0)
		return false;
	c->in[c->nin++] = cond;
	c->in[c->nin++] = x;
	c->in[c->nin++] = y;
	return true;
}

/* mod: an integer by a nonzero constant (either fmod), or f32 with fmod 1 */
static bool gen_mod(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int a = get_operand(G, want(num_mask(), 0, GEN_RANK));
	DType dt = G->v[a].t.dtype;
	Shape r = widen(G, &G->v[a].t.shape), bs = narrow(G, &r);
	bool pos = chance(G, 0.5);
	int b = dt == DT_F32 ? nonzero(G, bounded(G, get_shaped_default(G, dt, &bs), B_ANY), 0.5)
			     : new_const(G, dt, &bs, pos ? 1 : -7, pos ? 7 : -1);
	if (dt == DT_F32)
		a = bounded(G, a, B_ANY);
	if (a < 0 || b < 0)
		return false;
	c->in[c->nin++] = a;
	c->in[c->nin++] = b;
	if (dt == DT_F32 || chance(G, 0.5))
		set_i(c, "fmod", dt == DT_F32 ? 1 : rint_in(G, 0, 1));
	return true;
}

/* scatter_nd: distinct first-axis rows of data replaced (k = 1) */
static bool gen_scatter_nd(Gen *G, OpKind op, GN *c)
{
	(void)op;
	Want w = want(move_mask(G), 1, 4);
	w.nonempty = true;
	int x = get_operand(G, w);
	const Shape *xs = &G->v[x].t.shape;
	int64_t n0 = xs->dim[0], m = rint_in(G, 1, n0 < 4 ? n0 : 4);
	/* m distinct rows: a run from a random start, wrapped */
	int64_t start = rint_in(G, 0, n0 - 1);
	Shape is = {2, {m, 1}};
	ConstInit in = {0};
	in.kind = INIT_INLINE;
	in.nvalues = m;
	in.values = xcalloc((size_t)m, sizeof *in.values);
	for (int64_t i = 0; i < m; i++)
		in.values[i] = (double)((start + i) % n0);
	int idx = add_value(G, "c", &G->next_const, DT_I64, &is, (Rg){0, (double)n0 - 1}, V_CONST);
	GN *nd = push_node(G);
	nd->op = OP_CONSTANT;
	nd->init = in;
	nd->nout = 1;
	nd->out[0] = idx;
	Shape us = *xs;
	us.dim[0] = m;
	int u = get_shaped_default(G, G->v[x].t.dtype, &us);
	if (u < 0)
		return false;
	c->in[c->nin++] = x;
	c->in[c->nin++] = idx;
	c->in[c->nin++] = u;
	return true;
}

/* cast between f32, i32, i64 and bool (f32 kept well inside i32) */
static bool gen_cast(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int a = get_operand(G, want(DTMASK_ANY, 0, GEN_RANK));
	if (G->v[a].t.dtype == DT_F32)
		a = bounded(G, a, B_ANY);
	if (a < 0)
		return false;
	c->in[c->nin++] = a;
	set_dt(c, "to", pick_dtype(G, DTMASK_ANY));
	return true;
}

/* the reductions beyond reduce_mean over a non-empty operand (their
 * identities are infinities or logs of 0): each operand kept where the
 * result stays finite */
static bool gen_reduce_more(Gen *G, OpKind op, GN *c)
{
	Want w = want(DTMASK_FLOAT, 0, GEN_RANK);
	w.nonempty = true;
	int a = get_operand(G, w);
	switch (op) {
	case OP_REDUCE_PROD: a = bounded(G, a, 1); break;
	case OP_REDUCE_LOG_SUM: a = positive(G, bounded(G, a, B_ANY), 0.05); break;
	case OP_REDUCE_LOG_SUM_EXP: a = bounded(G, a, 8); break;
	default: a = bounded(G, a, B_ANY);
	}
	if (a < 0)
		return false;
	c->in[c->nin++] = a;
	int r = G->v[a].t.shape.rank;
	if (chance(G, 0.6) && r > 0) {
		int64_t ax[MAX_RANK];
		set_ints(c, "axes", ax, rand_axes(G, r, (int)rint_in(G, 1, r), ax));
	}
	if (chance(G, 0.5))
		set_i(c, "keepdims", rint_in(G, 0, 1));
	return true;
}

/* size of anything; range from attributes */
static bool gen_size_range(Gen *G, OpKind op, GN *c)
{
	if (op == OP_SIZE) {
		c->in[c->nin++] = get_operand(G, want(DTMASK_ANY, 0, GEN_RANK));
		return true;
	}
	DType dt = pick_dtype(G, DTMASK_NUM);
	double start = (double)rint_in(G, -20, 20), delta = (double)(chance(G, 0.5) ? rint_in(G, 1, 4) : -rint_in(G, 1, 4));
	double limit = start + delta * (double)rint_in(G, -1, 40);
	if (dt == DT_F32 && chance(G, 0.5)) {
		start += 0.25;
		delta *= 0.5;
	}
	set_f(c, "start", start);
	set_f(c, "limit", limit);
	set_f(c, "delta", delta);
	if (dt != DT_F32 || chance(G, 0.3))
		set_dt(c, "dtype", dt);
	return true;
}

/* argmax, argmin (f32 and integers), hardmax (f32) along a non-empty axis */
static bool gen_arg(Gen *G, OpKind op, GN *c)
{
	Want w = want(op == OP_HARDMAX ? DTMASK_FLOAT : num_mask(), 0, GEN_RANK);
	w.nonempty = true;
	int a = get_operand(G, w);
	if (G->v[a].t.dtype == DT_F32)
		a = bounded(G, a, B_ANY);
	if (a < 0)
		return false;
	c->in[c->nin++] = a;
	int r = G->v[a].t.shape.rank;
	if (r > 0 && chance(G, 0.8))
		set_i(c, "axis", rint_in(G, -r, r - 1));
	if (op != OP_HARDMAX) {
		if (chance(G, 0.5))
			set_i(c, "keepdims", rint_in(G, 0, 1));
		if (chance(G, 0.5))
			set_i(c, "select_last_index", rint_in(G, 0, 1));
	}
	return true;
}

/* trilu over the last two axes, k around the diagonal (sometimes past it) */
static bool gen_trilu(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int a = get_operand(G, want(DTMASK_ANY, 2, GEN_RANK));
	c->in[c->nin++] = a;
	if (chance(G, 0.6))
		set_i(c, "upper", rint_in(G, 0, 1));
	if (chance(G, 0.7))
		set_i(c, "k", chance(G, 0.1) ? rint_in(G, -100, 100) : rint_in(G, -3, 3));
	return true;
}

/* gather_elements: indices of the data's rank, each axis at most the
 * data's, values in [-n, n) along the axis */
static bool gen_gather_elements(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, (Want){.dtmask = move_mask(G), .rmin = 1, .rmax = 4, .nonempty = true});
	const Shape *xs = &G->v[x].t.shape;
	int r = xs->rank;
	int64_t axis = rint_in(G, -r, r - 1);
	int an = (int)(axis < 0 ? axis + r : axis);
	Shape is = *xs;
	for (int i = 0; i < r; i++)
		is.dim[i] = i == an ? rint_in(G, 1, 6) : rint_in(G, 1, xs->dim[i]);
	shrink(G, &is, 64);
	DType it = chance(G, 0.6) ? DT_I64 : DT_I32;
	int idx = new_const(G, it, &is, chance(G, 0.3) ? -xs->dim[an] : 0, xs->dim[an] - 1);
	c->in[c->nin++] = x;
	c->in[c->nin++] = idx;
	if (axis != 0 || chance(G, 0.3))
		set_i(c, "axis", axis);
	return true;
}

/* gather_nd: tuples of k indices (in range for every axis they address),
 * sometimes batch_dims shared axes (the indices' leading ones equal) */
static bool gen_gather_nd(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, (Want){.dtmask = move_mask(G), .rmin = 1, .rmax = 4, .nonempty = true});
	const Shape *xs = &G->v[x].t.shape;
	int r = xs->rank;
	int b = r > 1 && chance(G, 0.3) ? 1 : 0;
	int kk = (int)rint_in(G, 1, r - b);
	int64_t lo = xs->dim[b];
	for (int i = b; i < b + kk; i++)
		lo = lo < xs->dim[i] ? lo : xs->dim[i];
	Shape is = {0};
	for (int i = 0; i < b; i++)
		is.dim[is.rank++] = xs->dim[i];
	int extra = (int)rint_in(G, 0, 2);
	for (int i = 0; i < extra && is.rank + 1 + r - b - kk <= 4; i++)
		is.dim[is.rank++] = rint_in(G, 1, 4);
	is.dim[is.rank++] = kk;
	DType it = chance(G, 0.6) ? DT_I64 : DT_I32;
	int idx = new_const(G, it, &is, chance(G, 0.3) ? -lo : 0, lo - 1);
	if (idx < 0)
		return false;
	c->in[c->nin++] = x;
	c->in[c->nin++] = idx;
	if (b || chance(G, 0.2))
		set_i(c, "batch_dims", b);
	return true;
}

/* topk: k from 0 to the axis's length, largest or smallest, values and
 * positions */
static bool gen_topk(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, (Want){.dtmask = DTMASK_NUM, .rmin = 1, .rmax = 4, .nonempty = true});
	const Shape *xs = &G->v[x].t.shape;
	int r = xs->rank;
	int64_t axis = rint_in(G, -r, r - 1);
	int an = (int)(axis < 0 ? axis + r : axis);
	c->in[c->nin++] = x;
	set_i(c, "k", rint_in(G, chance(G, 0.1) ? 0 : 1, xs->dim[an]));
	if (axis != -1 || chance(G, 0.3))
		set_i(c, "axis", axis);
	if (chance(G, 0.5))
		set_i(c, "largest", rint_in(G, 0, 1));
	c->nout = 2;
	return true;
}

/* one_hot: indices in [-depth, depth), values [off, on] */
static bool gen_one_hot(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int64_t depth = rint_in(G, 1, 6);
	Shape is = rand_shape(G, (int)rint_in(G, 0, 3));
	shrink(G, &is, 64);
	DType it = chance(G, 0.5) ? DT_I64 : chance(G, 0.5) ? DT_I32 : DT_F32;
	int idx = new_const(G, it, &is, -(double)depth, (double)depth - 1);
	Shape vs = {1, {2}};
	int v = get_shaped_default(G, pick_dtype(G, DTMASK_ANY), &vs);
	if (idx < 0 || v < 0)
		return false;
	c->in[c->nin++] = idx;
	c->in[c->nin++] = v;
	set_i(c, "depth", depth);
	if (chance(G, 0.6))
		set_i(c, "axis", rint_in(G, -is.rank - 1, is.rank));
	return true;
}

/* eye_like of a 2-D operand */
static bool gen_eye_like(Gen *G, OpKind op, GN *c)
{
	(void)op;
	c->in[c->nin++] = get_operand(G, want(DTMASK_ANY, 2, 2));
	if (chance(G, 0.6))
		set_i(c, "k", rint_in(G, -4, 4));
	if (chance(G, 0.5))
		set_dt(c, "dtype", pick_dtype(G, DTMASK_ANY));
	return true;
}

/* depth_to_space / space_to_depth of an NCHW operand of fitting sizes */
static bool gen_depth_space(Gen *G, OpKind op, GN *c)
{
	int64_t b = rint_in(G, 1, 3);
	Shape s = {4, {rint_in(G, 1, 2), rint_in(G, 1, 3), rint_in(G, 1, 4), rint_in(G, 1, 4)}};
	if (op == OP_DEPTH_TO_SPACE) {
		s.dim[1] *= b * b;
	} else {
		s.dim[2] *= b;
		s.dim[3] *= b;
	}
	int x = get_shaped_default(G, pick_dtype(G, move_mask(G)), &s);
	if (x < 0)
		return false;
	c->in[c->nin++] = x;
	set_i(c, "blocksize", b);
	if (op == OP_DEPTH_TO_SPACE && chance(G, 0.5))
		set_s(c, "mode", chance(G, 0.5) ? "DCR" : "CRD");
	return true;
}

/* tile: a few copies along some axes */
static bool gen_tile(Gen *G, OpKind op, GN *c)
{
	(void)op;
	int x = get_operand(G, want(move_mask(G), 0, 4));
	int r = G->v[x].t.shape.rank;
	int64_t rep[MAX_RANK];
	for (int i = 0; i < r; i++)
		rep[i] = chance(G, 0.5) ? 1 : rint_in(G, 0, 3);
	c->in[c->nin++] = x;
	set_ints(c, "repeats", rep, r);
	return true;
}

static GenFn family(OpKind op)
{
	switch (op) {
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_POW: return gen_binary;
	case OP_MAX: case OP_MIN: case OP_SUM: return gen_variadic;
	case OP_NEG: case OP_ABS: case OP_EXP: case OP_LOG: case OP_SQRT: case OP_RECIPROCAL:
	case OP_RELU: case OP_LEAKY_RELU: case OP_SIGMOID: case OP_TANH: case OP_ERF: case OP_GELU:
	case OP_CLIP: case OP_HARDSIGMOID: case OP_HARDSWISH: case OP_IDENTITY: case OP_DROPOUT:
		return gen_unary;
	case OP_SOFTMAX: case OP_LOGSOFTMAX: return gen_softmax;
	case OP_REDUCE_MEAN: return gen_reduce;
	case OP_MATMUL: return gen_matmul;
	case OP_GEMM: return gen_gemm;
	case OP_CONV: return gen_conv;
	case OP_MAXPOOL: case OP_AVGPOOL: case OP_MAXPOOL_ARGMAX: return gen_pool;
	case OP_GLOBAL_AVGPOOL: case OP_GLOBAL_MAXPOOL: return gen_global_pool;
	case OP_BATCHNORM: return gen_batchnorm;
	case OP_LAYERNORM: return gen_layernorm;
	case OP_RESHAPE: return gen_reshape;
	case OP_TRANSPOSE: return gen_transpose;
	case OP_FLATTEN: return gen_flatten;
	case OP_CONCAT: return gen_concat;
	case OP_SPLIT: return gen_split;
	case OP_SLICE: return gen_slice;
	case OP_SQUEEZE: return gen_squeeze;
	case OP_UNSQUEEZE: return gen_unsqueeze;
	case OP_GATHER: return gen_gather;
	case OP_EXPAND: return gen_expand;
	case OP_PAD: return gen_pad;
	case OP_SHAPE: return gen_shape;
	case OP_CONSTANT_OF_SHAPE: return gen_constant_of_shape;
	case OP_CONSTANT: return gen_constant;
	case OP_ELU: case OP_SELU: case OP_CELU: case OP_SOFTPLUS: case OP_SOFTSIGN: case OP_THRESHOLDED_RELU:
	case OP_SHRINK: case OP_SIGN: case OP_FLOOR: case OP_CEIL: case OP_ROUND: case OP_SINH: case OP_COSH:
	case OP_ASINH: case OP_ACOSH: case OP_ATANH: case OP_SIN: case OP_COS: case OP_TAN: case OP_ASIN: case OP_ACOS:
	case OP_ATAN:
		return gen_activation;
	case OP_PRELU: return gen_prelu;
	case OP_MEAN: return gen_variadic;
	case OP_EQUAL: case OP_LESS: case OP_LESS_EQUAL: case OP_GREATER: case OP_GREATER_EQUAL: return gen_compare;
	case OP_AND: case OP_OR: case OP_XOR: case OP_NOT: case OP_ISNAN: case OP_ISINF: return gen_logic;
	case OP_WHERE: return gen_where;
	case OP_CAST: return gen_cast;
	case OP_MOD: return gen_mod;
	case OP_SCATTER_ND: return gen_scatter_nd;
	case OP_REDUCE_SUM: case OP_REDUCE_MAX: case OP_REDUCE_MIN: case OP_REDUCE_PROD: case OP_REDUCE_L1:
	case OP_REDUCE_L2: case OP_REDUCE_LOG_SUM: case OP_REDUCE_LOG_SUM_EXP: case OP_REDUCE_SUM_SQUARE:
		return gen_reduce_more;
	case OP_SIZE: case OP_RANGE: return gen_size_range;
	case OP_ARGMAX: case OP_ARGMIN: case OP_HARDMAX: return gen_arg;
	case OP_TRILU: return gen_trilu;
	case OP_GATHER_ELEMENTS: return gen_gather_elements;
	case OP_GATHER_ND: return gen_gather_nd;
	case OP_TOPK: return gen_topk;
	case OP_TILE: return gen_tile;
	case OP_ONE_HOT: return gen_one_hot;
	case OP_EYE_LIKE: return gen_eye_like;
	case OP_DEPTH_TO_SPACE: case OP_SPACE_TO_DEPTH: return gen_depth_space;
	default: return NULL; /* an op this generator does not know yet */
	}
}

/* One node of op (plus what conditions its operands); false when TRIES
 * attempts were all rejected. */
static bool gen_op(Gen *G, OpKind op)
{
	GenFn fn = family(op);
	if (!fn)
		return false;
	for (int t = 0; t < TRIES; t++) {
		Mark m = mark(G);
		GN c = cand(op, 1);
		if (fn(G, op, &c) && emit(G, &c) >= 0)
			return true;
		rollback(G, m);
	}
	return false;
}

/* ---- the finished graph ----------------------------------------------------- */
static Graph *assemble(Gen *G)
{
	char name[64];
	snprintf(name, sizeof name, "diff_%llu", (unsigned long long)G->seed);
	Graph *g = graph_new(name);
	Value **map = xcalloc((size_t)G->nv + 1, sizeof *map);
	Loc nl = loc_at(NULL, 0, 0);
	for (int i = 0; i < G->nv; i++)
		if (G->v[i].kind == V_INPUT)
			map[i] = graph_add_input(g, G->v[i].name, G->v[i].t.dtype, &G->v[i].t.shape, nl);
	for (int i = 0; i < G->nn; i++) {
		GN *c = &G->n[i];
		if (c->op == OP_CONSTANT) {
			const GV *v = &G->v[c->out[0]];
			ConstInit in = c->init;
			if (in.kind == INIT_INLINE) { /* the graph takes ownership of a copy */
				in.values = xcalloc(in.nvalues ? (size_t)in.nvalues : 1, sizeof *in.values);
				memcpy(in.values, c->init.values, (size_t)in.nvalues * sizeof *in.values);
			}
			Node *n = graph_add_const(g, v->name, v->t.dtype, &v->t.shape, in, nl);
			map[c->out[0]] = n->out[0];
			continue;
		}
		Value *ins[MAX_IN];
		const char *outs[MAX_OUT];
		for (int k = 0; k < c->nin; k++)
			ins[k] = map[c->in[k]];
		for (int k = 0; k < c->nout; k++)
			outs[k] = G->v[c->out[k]].name;
		Node *n = graph_add_node(g, c->op, ins, c->nin, outs, c->nout, nl);
		apply_attrs(n, c);
		for (int k = 0; k < c->nout; k++)
			map[c->out[k]] = n->out[k];
	}
	/* Outputs: every result of a node none of whose results is used; of a
	 * used node, unused results sometimes and a used one rarely; rarely an
	 * input or a constant as it is. */
	for (int i = 0; i < G->nv; i++)
		if (G->v[i].kind != V_NODE && G->v[i].uses > 0 && chance(G, 0.03))
			graph_add_output(g, map[i], nl);
	for (int i = 0; i < G->nn; i++) {
		GN *c = &G->n[i];
		bool live = false;
		for (int k = 0; k < c->nout; k++)
			live |= G->v[c->out[k]].uses > 0;
		for (int k = 0; k < c->nout; k++) {
			const GV *v = &G->v[c->out[k]];
			bool out = !live || (v->uses == 0 && chance(G, 0.5)) || (v->uses > 0 && c->op != OP_CONSTANT && chance(G, 0.05));
			if (out)
				graph_add_output(g, map[c->out[k]], nl);
		}
	}
	free(map);
	return g;
}

static char *graph_text(const Graph *g, const char *header)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		fprintf(stderr, "gengraph: open_memstream: %s\n", strerror(errno));
		exit(1);
	}
	if (header)
		fputs(header, f);
	print_graph(f, g);
	fclose(f);
	return buf;
}

static void gen_free(Gen *G)
{
	for (int i = 0; i < G->nn; i++)
		if (G->n[i].op == OP_CONSTANT)
			free(G->n[i].init.values);
	free(G->n);
	free(G->v);
}

static void gen_init(Gen *G, uint64_t seed)
{
	memset(G, 0, sizeof *G);
	G->seed = seed;
	rng_seed(&G->rng, rng_derive(seed, 0x6e6e));
	double u = rng_uniform(&G->rng);
	/* most graphs f32 only (indices aside); some with integer and bool
	 * computations, which some targets declare unsupported */
	G->ints = u >= 0.7;
	G->bools = u >= 0.9;
}

/* Generate; NULL when the graph could not be made (a forced op that no
 * attempt got right). */
static Graph *generate(Gen *G, int nodes, const OpKind *force, int nforce)
{
	for (int i = 0; i < nforce; i++)
		if (!gen_op(G, force[i]))
			return NULL;
	for (int made = nforce, t = 0; made < nodes && t < 20 * nodes; t++) {
		OpKind op = (OpKind)rnd(G, OP_COUNT);
		if (op == OP_CONSTANT && chance(G, 0.7))
			continue; /* constants come with most ops anyway */
		if (gen_op(G, op))
			made++;
	}
	if (G->nn == 0 || G->nv == 0)
		return NULL;
	return assemble(G);
}

/* Verify g, print it, parse it back and verify that: the text, or NULL
 * after reporting why not. */
static char *self_check(Graph *g, const char *header)
{
	Diag d;
	diag_init(&d);
	if (!graph_verify(g, &d)) {
		fprintf(stderr, "gengraph: internal error: the generated graph does not verify:\n");
		diag_print(&d, stderr);
		char *t = graph_text(g, NULL);
		fprintf(stderr, "%s", t);
		free(t);
		diag_free(&d);
		return NULL;
	}
	diag_free(&d);
	char *text = graph_text(g, header);
	diag_init(&d);
	Graph *back = parse_model("<gengraph>", NULL, text, strlen(text), &d);
	bool ok = back && graph_verify(back, &d);
	char *again = ok ? graph_text(back, header) : NULL;
	if (!ok || strcmp(again, text) != 0) {
		fprintf(stderr, "gengraph: internal error: the printed graph %s:\n",
			ok ? "prints back differently" : "does not parse and verify");
		diag_print(&d, stderr);
		fprintf(stderr, "%s", text);
		free(text);
		text = NULL;
	}
	free(again);
	graph_free(back);
	diag_free(&d);
	return text;
}

static void usage(FILE *f)
{
	fputs("usage: gengraph SEED [-n NODES] [--op NAME]...\n"
	      "       gengraph --ops\n"
	      "Writes a random valid model.ir graph to stdout: NODES ops (default 8) drawn\n"
	      "from the whole op table, each checked by the op's rule; --op NAME makes the\n"
	      "graph contain NAME.  --ops lists the ops it can generate.  Exit status 1 if\n"
	      "the graph does not verify, parse back or print back the same (a bug).\n",
	      f);
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return false;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	uint64_t seed = 0, nodes = 8;
	bool have_seed = false, list = false;
	OpKind force[64];
	int nforce = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--ops") == 0) {
			list = true;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "-n") == 0 || strcmp(a, "--op") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "gengraph: error: %s needs an argument\n", a);
				return 2;
			}
			const char *v = argv[++i];
			if (a[1] == 'n') {
				if (!parse_u64(v, &nodes) || nodes < 1 || nodes > 1000) {
					fprintf(stderr, "gengraph: error: -n needs a number of nodes in [1, 1000], got '%s'\n", v);
					return 2;
				}
			} else {
				OpKind op = op_lookup(v, strlen(v));
				if (op == OP_COUNT) {
					fprintf(stderr, "gengraph: error: --op %s: no such op (gdcc --list-ops)\n", v);
					return 2;
				}
				if (nforce == 64) {
					fprintf(stderr, "gengraph: error: at most 64 --op\n");
					return 2;
				}
				force[nforce++] = op;
			}
		} else if (!have_seed && parse_u64(a, &seed)) {
			have_seed = true;
		} else {
			fprintf(stderr, "gengraph: error: unexpected argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (list) {
		/* An op is listed when some seed gives a verified graph with it. */
		int status = 0;
		for (int op = 0; op < OP_COUNT; op++) {
			bool ok = false;
			for (uint64_t s = 1; s <= 30 && !ok; s++) {
				Gen G;
				gen_init(&G, s);
				G.ints = G.bools = true;
				OpKind f = (OpKind)op;
				Graph *g = generate(&G, 1, &f, 1);
				if (g) {
					char *t = self_check(g, NULL);
					ok = t != NULL;
					if (!t)
						status = 1;
					free(t);
				}
				graph_free(g);
				gen_free(&G);
			}
			if (ok)
				printf("%s\n", op_info[op].name);
		}
		return status;
	}
	if (!have_seed) {
		usage(stderr);
		return 2;
	}
	Gen G;
	gen_init(&G, seed);
	Graph *g = generate(&G, (int)nodes, force, nforce);
	if (!g) {
		fprintf(stderr, "gengraph: seed %llu: could not generate the requested ops\n", (unsigned long long)seed);
		gen_free(&G);
		return 1;
	}
	char header[256];
	snprintf(header, sizeof header, "# gengraph %llu -n %llu (tests/diff/gengraph.c)\n", (unsigned long long)seed,
		 (unsigned long long)nodes);
	char *text = self_check(g, header);
	graph_free(g);
	gen_free(&G);
	if (!text)
		return 1;
	fputs(text, stdout);
	free(text);
	return fflush(stdout) == 0 ? 0 : 1;
}
