/* pass_bnfold: fold an inference batchnorm into the conv or gemm before it.
 *
 * Assumes: a verified graph (passes.h): every value typed, use lists exact,
 * g->nodes a topological order.
 *
 * Rewrites, for every y = batchnorm(p, scale, bias, mean, var) with
 * training_mode 0, one result, and scale, bias, mean, var f32 constants,
 * where p is the f32 result of
 *   conv(x, W [, b])        W and b constants, or
 *   gemm(A, B [, C])        B and C constants (the channel is gemm's N:
 *                           batchnorm over [M, N] with channel axis 1),
 * and the batchnorm is p's only user (p not an output):
 *   s[c]    = scale[c] / sqrt(var[c] + epsilon)
 *   conv:   W'[o, ...] = W[o, ...] s[o],  b'[o] = (b[o] - mean[o]) s[o] + bias[o]
 *   gemm:   B'[:, n] (B'[n, :] with trans_b) = B s[n],
 *           C'[m, n] = (beta C[m, n] - mean[n]) s[n] + bias[n], beta := 1
 * into y = conv(x, W', b') (a conv without bias gets b' as its third
 * operand) or y = gemm(A, B', C').  W', b', B', C' are new INIT_TENSOR
 * constants computed in double and rounded once to f32; C' is [N] unless C
 * varies along M, then [M, N].  A fold is skipped when a constant cannot
 * be read, when some s is not finite (zero variance with epsilon 0) or when
 * a finite weight or bias would overflow.  The constants nothing reads any
 * more are removed.
 *
 * Preserves: the graph's inputs and outputs (names, types, order); the
 * folded result takes the batchnorm result's name; every other node; the
 * verified state (every new node typed with graph_check_node, compacted).
 * Numerics: the fold reassociates (W x) s into (W s) x: the result
 * differs from the unfolded one by a few f32 roundings of the products,
 * within conv's and gemm's per-op tolerance (docs/design.md).
 * cx->changes counts the folds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "ops.h"
#include "passes.h"
#include "rewrite.h"
#include "verify.h"

/* v's data when a constant node computes it as f32 (its own copy), else NULL. */
static Tensor *const_f32(const Value *v)
{
	const Node *def = v->def;
	if (!def || def->removed || def->op != OP_CONSTANT || !v->typed || v->type.dtype != DT_F32)
		return NULL;
	return constant_data(def);
}

static bool is_f32_const(const Value *v)
{
	return v->def && !v->def->removed && v->def->op == OP_CONSTANT && v->typed && v->type.dtype == DT_F32;
}

static float *fdata(Tensor *t) { return (float *)t->data; }

/* A double rounded to f32 into *out; false when a finite input overflowed. */
static bool store_f32(float *out, double v, bool input_finite)
{
	*out = (float)v;
	return isfinite(*out) || !input_finite;
}

/* Does the pattern at bn match (everything but the constants' data)? */
static bool matches(const Node *bn)
{
	if (bn->removed || bn->op != OP_BATCHNORM || bn->nout != 1 || attr_i(bn, "training_mode") != 0)
		return false;
	for (int k = 1; k < 5; k++)
		if (!is_f32_const(bn->in[k]))
			return false;
	const Value *p = bn->in[0];
	const Node *prod = p->def;
	if (!prod || prod->removed || value_sole_user(p) != bn || p->type.dtype != DT_F32 || !bn->out[0]->typed)
		return false;
	if (prod->op == OP_CONV)
		return is_f32_const(prod->in[1]) && (prod->nin < 3 || is_f32_const(prod->in[2]));
	if (prod->op == OP_GEMM)
		return p->type.shape.rank == 2 && is_f32_const(prod->in[1]) && prod->in[1]->type.shape.rank == 2 &&
		       (prod->nin < 3 || is_f32_const(prod->in[2]));
	return false;
}

/* C[i, j] of a gemm's C broadcast to [M, N] (rank 0, 1 or 2). */
static double c_at(Tensor *c, int64_t i, int64_t j)
{
	const Shape *s = &c->type.shape;
	int64_t ci = s->rank == 2 && s->dim[0] != 1 ? i : 0;
	int64_t cj = s->rank >= 1 && s->dim[s->rank - 1] != 1 ? j : 0;
	int64_t ncol = s->rank >= 1 ? s->dim[s->rank - 1] : 1;
	return fdata(c)[ci * ncol + cj];
}

/* The folded operands: new[0] the weights, new[1] the bias; false (and
 * nothing allocated) when the fold is skipped.  s[c], shift[c] as above. */
static bool fold_conv(const Node *prod, const double *s, const double *mean, const double *beta, int64_t M,
		      Tensor *nw[2])
{
	Tensor *w = const_f32(prod->in[1]), *b = prod->nin == 3 ? const_f32(prod->in[2]) : NULL;
	bool ok = w && (prod->nin < 3 || b);
	Tensor *w2 = NULL, *b2 = NULL;
	if (ok) {
		w2 = tensor_new(DT_F32, &w->type.shape);
		Shape bs = shape_make(1, &M);
		b2 = tensor_new(DT_F32, &bs);
		int64_t per = M > 0 ? tensor_numel(w) / M : 0;
		for (int64_t o = 0; o < M && ok; o++) {
			for (int64_t k = 0; k < per && ok; k++) {
				double wv = fdata(w)[o * per + k];
				ok = store_f32(&fdata(w2)[o * per + k], wv * s[o], isfinite(wv));
			}
			double bv = b ? fdata(b)[o] : 0.0;
			ok = ok && store_f32(&fdata(b2)[o], (bv - mean[o]) * s[o] + beta[o], isfinite(bv));
		}
	}
	tensor_free(w);
	tensor_free(b);
	if (!ok) {
		tensor_free(w2);
		tensor_free(b2);
		return false;
	}
	nw[0] = w2;
	nw[1] = b2;
	return true;
}

static bool fold_gemm(const Node *prod, const PassContext *cx, const double *s, const double *mean,
		      const double *beta, int64_t M, int64_t N, Tensor *nw[2])
{
	bool tb = attr_i(prod, "trans_b") != 0;
	double gbeta = attr_f(prod, "beta");
	const Value *cv = prod->nin == 3 ? prod->in[2] : NULL;
	/* C' varies along M only when C does */
	bool rows = cv && cv->type.shape.rank == 2 && cv->type.shape.dim[0] != 1;
	if (rows && cx && cx->fold_limit_bytes && (uint64_t)(M * N) * 4 > cx->fold_limit_bytes &&
	    shape_numel(&cv->type.shape) < M * N)
		return false; /* a [M, 1] C would grow past the folding limit */
	Tensor *b = const_f32(prod->in[1]), *c = cv ? const_f32(cv) : NULL;
	bool ok = b && (!cv || c);
	Tensor *b2 = NULL, *c2 = NULL;
	if (ok) {
		b2 = tensor_new(DT_F32, &b->type.shape);
		int64_t K = tensor_numel(b) / (N > 0 ? N : 1);
		for (int64_t k = 0; k < K && ok; k++)
			for (int64_t j = 0; j < N && ok; j++) {
				int64_t at = tb ? j * K + k : k * N + j;
				double bv = fdata(b)[at];
				ok = store_f32(&fdata(b2)[at], bv * s[j], isfinite(bv));
			}
		Shape cs = rows ? shape_make(2, (int64_t[]){M, N}) : shape_make(1, &N);
		c2 = tensor_new(DT_F32, &cs);
		for (int64_t i = 0; i < (rows ? M : 1) && ok; i++)
			for (int64_t j = 0; j < N && ok; j++) {
				double v = c ? gbeta * c_at(c, i, j) : 0.0;
				ok = store_f32(&fdata(c2)[i * N + j], (v - mean[j]) * s[j] + beta[j], isfinite(v));
			}
	}
	tensor_free(b);
	tensor_free(c);
	if (!ok) {
		tensor_free(b2);
		tensor_free(c2);
		return false;
	}
	nw[0] = b2;
	nw[1] = c2;
	return true;
}

/* The per-channel scale s and the statistics, in double; false when some
 * s is not finite or a constant cannot be read. */
static bool bn_stats(const Node *bn, int64_t C, double *s, double *mean, double *beta)
{
	Tensor *st[4];
	bool ok = true;
	for (int k = 0; k < 4; k++) {
		st[k] = const_f32(bn->in[k + 1]);
		ok &= st[k] != NULL && tensor_numel(st[k]) == C;
	}
	double eps = attr_f(bn, "epsilon");
	for (int64_t c = 0; c < C && ok; c++) {
		s[c] = (double)fdata(st[0])[c] * (1.0 / sqrt((double)fdata(st[3])[c] + eps));
		beta[c] = fdata(st[1])[c];
		mean[c] = fdata(st[2])[c];
		ok = isfinite(s[c]);
	}
	for (int k = 0; k < 4; k++)
		tensor_free(st[k]);
	return ok;
}

static void remove_if_dead_const(Graph *g, Value *v)
{
	if (v->nuses == 0 && v->def && v->def->op == OP_CONSTANT)
		graph_remove_node(g, v->def);
}

/* to takes from's name (from, about to be freed, gets to's): the folded
 * result keeps the name the model gave the batchnorm's. */
static void take_name(Graph *g, Value *to, Value *from)
{
	char *nm = from->name, *src = from->src_name;
	Loc l = from->loc;
	from->name = to->name;
	from->src_name = to->src_name;
	from->loc = to->loc;
	to->name = nm;
	to->src_name = src;
	to->loc = l;
	strmap_set(&g->index, to->name, to);
	strmap_set(&g->index, from->name, from);
}

/* Fold at bn: 1 folded, 0 skipped, -1 an internal error (reported). */
static int fold_one(Graph *g, PassContext *cx, Node *bn, Diag *d)
{
	if (!matches(bn))
		return 0;
	Value *p = bn->in[0], *y = bn->out[0];
	Node *prod = p->def;
	int64_t C = p->type.shape.dim[1];
	if (!graph_can_replace(g, y, p)) /* (the new result will be like p) */
		return 0;
	size_t nc = C > 0 ? (size_t)C : 1;
	double *s = xcalloc(nc, sizeof *s), *mean = xcalloc(nc, sizeof *mean), *beta = xcalloc(nc, sizeof *beta);
	Tensor *nw[2] = {NULL, NULL};
	bool ok = bn_stats(bn, C, s, mean, beta);
	if (ok && prod->op == OP_CONV)
		ok = prod->in[1]->type.shape.dim[0] == C && fold_conv(prod, s, mean, beta, C, nw);
	else if (ok)
		ok = fold_gemm(prod, cx, s, mean, beta, p->type.shape.dim[0], C, nw);
	free(s);
	free(mean);
	free(beta);
	if (!ok)
		return 0;

	int pos = graph_node_pos(g, bn);
	char *wname = xasprintf("%s.folded", prod->in[1]->name);
	char *bname = prod->nin == 3 ? xasprintf("%s.folded", prod->in[2]->name) : xasprintf("%s.bias", p->name);
	Node *wc = graph_insert_tensor(g, pos, wname, nw[0], prod->in_loc[1]);
	Node *bc = graph_insert_tensor(g, pos + 1, bname, nw[1], prod->nin == 3 ? prod->in_loc[2] : bn->loc);
	free(wname);
	free(bname);
	Value *ins[3] = {prod->in[0], wc->out[0], bc->out[0]};
	Node *nn = graph_insert_node(g, pos + 2, prod->op, ins, 3, 1, y->name, prod->loc);
	for (int i = 0; i < prod->nattrs; i++)
		node_copy_attr(nn, &prod->attrs[i], prod->attrs[i].loc);
	if (prod->op == OP_GEMM)
		node_set_float(nn, "beta", 1.0);
	nn->in_loc[0] = prod->in_loc[0];
	nn->in_loc[1] = prod->in_loc[1];
	nn->in_loc[2] = prod->nin == 3 ? prod->in_loc[2] : bn->loc;
	nn->group = prod->group;
	Value *ny = nn->out[0];
	if (!graph_check_node(g, nn, d) || ny->type.dtype != y->type.dtype || !shape_eq(&ny->type.shape, &y->type.shape)) {
		diag_error(d, bn->loc, "internal: bnfold: the folded %s for '%s' does not type as the batchnorm's result",
			   op_info[prod->op].name, y->name);
		return -1;
	}
	bool was_output = y->is_output;
	if (!graph_replace_uses(g, y, ny)) {
		diag_error(d, bn->loc, "internal: bnfold: cannot replace '%s'", y->name);
		return -1;
	}
	if (!was_output) /* (an output's name moved already) */
		take_name(g, ny, y);
	Value *old[7];
	int nold = 0;
	for (int k = 1; k < prod->nin; k++)
		old[nold++] = prod->in[k];
	for (int k = 1; k < 5; k++)
		old[nold++] = bn->in[k];
	graph_remove_node(g, bn);
	graph_remove_node(g, prod);
	for (int k = 0; k < nold; k++)
		remove_if_dead_const(g, old[k]);
	return 1;
}

bool pass_bnfold(Graph *g, PassContext *cx, Diag *d)
{
	/* the candidates first: folding inserts nodes; a batchnorm after a
	 * batchnorm sees the first one's fold (they come in order) */
	int nbn = 0;
	Node **bns = xcalloc((size_t)g->nnodes + 1, sizeof *bns);
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->op == OP_BATCHNORM)
			bns[nbn++] = g->nodes[i];
	int folds = 0;
	bool ok = true;
	for (int i = 0; i < nbn && ok; i++) {
		int r = fold_one(g, cx, bns[i], d);
		ok = r >= 0;
		folds += r > 0;
	}
	free(bns);
	graph_compact(g);
	if (cx)
		cx->changes += folds;
	return ok;
}
