/* ONNX Einsum (see onnx_compose.h).
 *
 *   Einsum             pairwise, left to right: labels no later operand nor the
 *                      output needs summed (`reduce_sum`), then one `matmul`
 *                      of [batch..., left, contracted] by [batch..., contracted,
 *                      right] (transposes and reshapes around it); the output
 *                      order by a `transpose`.  No diagonals (a subscript twice
 *                      in one term).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_compose.h"
#include "ops.h"
#include "util.h"

/* ---- Einsum ------------------------------------------------------------------------- */
/* Labels: the letters (0..51) and, for "...", one label per broadcast
 * axis (52 on). */
enum { EIN_LABELS = 52 + MAX_RANK, EIN_MAX_OPS = 16 };

typedef struct {
	Value *v;
	int n;
	int lab[MAX_RANK];
} EinTerm;

static int ein_letter(char c)
{
	return c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + c - 'A' : -1;
}

/* One term of the equation (s[0..len)) for an operand of `rank` axes
 * (rank < 0: the output, whose "..." has `ell` axes); false after the
 * message. */
static bool ein_term(Imp *im, const char *s, size_t len, int rank, int *ell, int *lab, int *n)
{
	int letters = 0, dots = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ')
			continue;
		if (s[i] == '.') {
			if (!(i + 2 < len && s[i + 1] == '.' && s[i + 2] == '.')) {
				imp_fail(im, "equation: a '.' that is not part of \"...\"");
				return false;
			}
			dots++;
			i += 2;
			continue;
		}
		if (ein_letter(s[i]) < 0) {
			imp_fail(im, "equation: '%c' is not a letter (subscripts are a-z, A-Z and one \"...\")", s[i]);
			return false;
		}
		letters++;
	}
	if (dots > 1) {
		imp_fail(im, "equation: a term has \"...\" twice");
		return false;
	}
	int e = rank < 0 ? *ell : rank - letters;
	if (rank >= 0 && (e < 0 || (!dots && e != 0))) {
		imp_fail(im, "equation: a term has %d subscripts for an operand of rank %d", letters, rank);
		return false;
	}
	if (rank >= 0 && dots)
		*ell = e > *ell ? e : *ell;
	*n = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ')
			continue;
		if (s[i] == '.') {
			for (int k = 0; k < e; k++) /* right-aligned broadcast axes */
				lab[(*n)++] = 52 + (MAX_RANK - e) + k;
			i += 2;
			continue;
		}
		if (*n >= MAX_RANK) {
			imp_fail(im, "equation: a term has more than %d subscripts", MAX_RANK);
			return false;
		}
		lab[(*n)++] = ein_letter(s[i]);
	}
	for (int a = 0; a < *n; a++)
		for (int b = a + 1; b < *n; b++)
			if (lab[a] == lab[b]) {
				imp_fail(im, "equation: a subscript repeated in one term (a diagonal) is not supported");
				return false;
			}
	return true;
}

static Value *ein_transpose(Imp *im, const Onnx__NodeProto *np, EinTerm *t, const int *order, int n, const char *what)
{
	int64_t perm[MAX_RANK];
	bool same = n == t->n;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < t->n; j++)
			if (t->lab[j] == order[i])
				perm[i] = j;
		same &= perm[i] == i;
	}
	if (same)
		return t->v;
	Node *tn = imp_step(im, np, OP_TRANSPOSE, &t->v, 1, what);
	if (tn)
		node_set_ints(tn, "perm", perm, n);
	return imp_done(im, tn);
}

/* Sum t over the labels that no later term nor the output needs. */
static bool ein_reduce(Imp *im, const Onnx__NodeProto *np, EinTerm *t, const bool *keep, const char *what)
{
	int64_t axes[MAX_RANK];
	int na = 0, m = 0;
	for (int i = 0; i < t->n; i++) {
		if (!keep[t->lab[i]])
			axes[na++] = i;
		else
			t->lab[m++] = t->lab[i];
	}
	if (!na)
		return true;
	Node *rn = imp_step(im, np, OP_REDUCE_SUM, &t->v, 1, what);
	if (rn) {
		node_set_ints(rn, "axes", axes, na);
		node_set_int(rn, "keepdims", 0);
	}
	t->n = m;
	return (t->v = imp_done(im, rn)) != NULL;
}

/* ord = x, y, z (the labels of three groups, in order); their count. */
static int ein_order(int *ord, const int *x, int nx, const int *y, int ny, const int *z, int nz)
{
	int n = 0;
	for (int i = 0; i < nx; i++)
		ord[n++] = x[i];
	for (int i = 0; i < ny; i++)
		ord[n++] = y[i];
	for (int i = 0; i < nz; i++)
		ord[n++] = z[i];
	return n;
}

/* The product of two terms over their shared labels (batch: kept, in
 * both; contracted: in both, not kept): one matmul of [batch..., left,
 * contracted] by [batch..., contracted, right] (batch axes broadcast). */
static bool ein_pair(Imp *im, const Onnx__NodeProto *np, EinTerm *a, EinTerm *b, const bool *keep, int step)
{
	/* first each sums what neither the other nor later terms need */
	char what[32];
	bool ka[EIN_LABELS], kb[EIN_LABELS];
	memcpy(ka, keep, sizeof ka);
	memcpy(kb, keep, sizeof kb);
	for (int i = 0; i < b->n; i++)
		ka[b->lab[i]] = true;
	for (int i = 0; i < a->n; i++)
		kb[a->lab[i]] = true;
	snprintf(what, sizeof what, "sum%da", step);
	if (!ein_reduce(im, np, a, ka, what))
		return false;
	snprintf(what, sizeof what, "sum%db", step);
	if (!ein_reduce(im, np, b, kb, what))
		return false;
	bool inb[EIN_LABELS] = {false}, ina[EIN_LABELS] = {false};
	int64_t size[EIN_LABELS] = {0};
	for (int i = 0; i < b->n; i++)
		inb[b->lab[i]] = true, size[b->lab[i]] = b->v->type.shape.dim[i];
	for (int i = 0; i < a->n; i++) {
		ina[a->lab[i]] = true;
		int64_t d = a->v->type.shape.dim[i];
		size[a->lab[i]] = size[a->lab[i]] > d ? size[a->lab[i]] : d;
	}
	int batch[MAX_RANK], left[MAX_RANK], con[MAX_RANK], right[MAX_RANK], nb = 0, nl = 0, nc = 0, nr = 0;
	for (int i = 0; i < a->n; i++) {
		int l = a->lab[i];
		if (inb[l] && keep[l])
			batch[nb++] = l;
		else if (inb[l])
			con[nc++] = l;
		else
			left[nl++] = l;
	}
	for (int i = 0; i < b->n; i++)
		if (!ina[b->lab[i]])
			right[nr++] = b->lab[i];
	int64_t L = 1, C = 1, R = 1;
	for (int i = 0; i < nl; i++)
		L *= size[left[i]];
	for (int i = 0; i < nc; i++) {
		/* (a contracted axis broadcast in one operand: sum it there first) */
		int64_t da = 0, db = 0;
		for (int j = 0; j < a->n; j++)
			if (a->lab[j] == con[i])
				da = a->v->type.shape.dim[j];
		for (int j = 0; j < b->n; j++)
			if (b->lab[j] == con[i])
				db = b->v->type.shape.dim[j];
		if (da != db) {
			imp_fail(im, "equation: subscript of sizes %" PRId64 " and %" PRId64 " summed over: they must be equal", da, db);
			return false;
		}
		C *= size[con[i]];
	}
	for (int i = 0; i < nr; i++)
		R *= size[right[i]];
	/* a as [batch, left, contracted], b as [batch, contracted, right] */
	int ord[MAX_RANK], n = ein_order(ord, batch, nb, left, nl, con, nc);
	snprintf(what, sizeof what, "a%d", step);
	Value *av = ein_transpose(im, np, a, ord, n, what);
	n = ein_order(ord, batch, nb, con, nc, right, nr);
	snprintf(what, sizeof what, "b%d", step);
	Value *bv = av ? ein_transpose(im, np, b, ord, n, what) : NULL;
	if (!bv)
		return false;
	int64_t sa[MAX_RANK], sb[MAX_RANK];
	for (int i = 0; i < nb; i++) {
		for (int j = 0; j < a->n; j++)
			if (a->lab[j] == batch[i])
				sa[i] = a->v->type.shape.dim[j];
		for (int j = 0; j < b->n; j++)
			if (b->lab[j] == batch[i])
				sb[i] = b->v->type.shape.dim[j];
	}
	sa[nb] = L, sa[nb + 1] = C, sb[nb] = C, sb[nb + 1] = R;
	snprintf(what, sizeof what, "a%dmat", step);
	av = step_reshape(im, np, av, sa, nb + 2, what);
	snprintf(what, sizeof what, "b%dmat", step);
	bv = av ? step_reshape(im, np, bv, sb, nb + 2, what) : NULL;
	snprintf(what, sizeof what, "ab%d", step);
	Value *p = bv ? step_binary(im, np, OP_MATMUL, av, bv, what) : NULL;
	if (!p)
		return false;
	int64_t sr[MAX_RANK];
	int nn = 0;
	for (int i = 0; i < nb; i++) {
		sr[nn] = p->type.shape.dim[i];
		a->lab[nn++] = batch[i];
	}
	for (int i = 0; i < nl; i++) {
		sr[nn] = size[left[i]];
		a->lab[nn++] = left[i];
	}
	for (int i = 0; i < nr; i++) {
		if (nn >= MAX_RANK) {
			imp_fail(im, "equation: an intermediate product would have rank above %d", MAX_RANK);
			return false;
		}
		sr[nn] = size[right[i]];
		a->lab[nn++] = right[i];
	}
	snprintf(what, sizeof what, "p%d", step);
	a->n = nn;
	return (a->v = step_reshape(im, np, p, sr, nn, what)) != NULL;
}

static bool einsum_of(Imp *im, const Onnx__NodeProto *np, const char *eq, size_t len);

bool compose_einsum(Imp *im, const Onnx__NodeProto *np)
{
	const Onnx__AttributeProto *ea = imp_attr(np, "equation");
	if (!ea || ea->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING || !ea->s.data) {
		imp_fail(im, "attribute 'equation' is missing");
		return false;
	}
	size_t len = ea->s.len;
	char *eq = xstrndup((const char *)ea->s.data, len); /* (NUL-terminated) */
	bool ok = einsum_of(im, np, eq, len);
	free(eq);
	return ok;
}

static bool einsum_of(Imp *im, const Onnx__NodeProto *np, const char *eq, size_t len)
{
	int nops = (int)np->n_input;
	if (nops < 1 || nops > EIN_MAX_OPS) {
		imp_fail(im, "it has %d operands (gdcc takes 1 to %d)", nops, EIN_MAX_OPS);
		return false;
	}
	size_t arrow = len;
	for (size_t i = 0; i + 1 < len; i++)
		if (eq[i] == '-' && eq[i + 1] == '>')
			arrow = i;
	EinTerm t[EIN_MAX_OPS];
	int ell = 0, count[EIN_LABELS] = {0};
	size_t at = 0;
	for (int k = 0; k < nops; k++) {
		size_t end = at;
		while (end < arrow && eq[end] != ',')
			end++;
		if ((end == arrow) != (k == nops - 1)) {
			imp_fail(im, "equation \"%s\": its terms do not match the %d operands", imp_q(im, eq), nops);
			return false;
		}
		if (!(t[k].v = imp_operand(im, np, (size_t)k, "operand")))
			return false;
		if (t[k].v->type.dtype != DT_F32) {
			imp_fail(im, "operand %d is %s (gdcc's einsum takes f32)", k + 1, dtype_name(t[k].v->type.dtype));
			return false;
		}
		if (!ein_term(im, eq + at, end - at, t[k].v->type.shape.rank, &ell, t[k].lab, &t[k].n))
			return false;
		for (int i = 0; i < t[k].n; i++)
			count[t[k].lab[i]]++;
		at = end + 1;
	}
	/* the output: given, or the labels seen once, in order ("..." first) */
	int out[MAX_RANK], no = 0;
	if (arrow < len) {
		if (!ein_term(im, eq + arrow + 2, len - arrow - 2, -1, &ell, out, &no))
			return false;
		for (int i = 0; i < no; i++)
			if (!count[out[i]]) {
				imp_fail(im, "equation: output subscript '%c' is in no operand",
					 out[i] < 26 ? 'a' + out[i] : out[i] < 52 ? 'A' + out[i] - 26 : '.');
				return false;
			}
	} else {
		for (int l = 52; l < EIN_LABELS; l++)
			if (count[l] && no < MAX_RANK)
				out[no++] = l;
		for (int l = 0; l < 52; l++)
			if (count[l] == 1 && no < MAX_RANK)
				out[no++] = l;
	}
	/* pairwise, left to right; a label is kept while the output or a
	 * later operand has it */
	bool keep[EIN_LABELS];
	for (int k = 1; k < nops; k++) {
		memset(keep, 0, sizeof keep);
		for (int i = 0; i < no; i++)
			keep[out[i]] = true;
		for (int j = k + 1; j < nops; j++)
			for (int i = 0; i < t[j].n; i++)
				keep[t[j].lab[i]] = true;
		if (!ein_pair(im, np, &t[0], &t[k], keep, k))
			return false;
	}
	memset(keep, 0, sizeof keep);
	for (int i = 0; i < no; i++)
		keep[out[i]] = true;
	if (!ein_reduce(im, np, &t[0], keep, "sum"))
		return false;
	/* the output order: a transpose (or an identity) under the result's name */
	int64_t perm[MAX_RANK];
	bool same = true;
	for (int i = 0; i < no; i++) {
		for (int j = 0; j < t[0].n; j++)
			if (t[0].lab[j] == out[i])
				perm[i] = j;
		same &= perm[i] == i;
	}
	Node *ln = imp_step(im, np, same ? OP_IDENTITY : OP_TRANSPOSE, &t[0].v, 1, NULL);
	if (ln && !same)
		node_set_ints(ln, "perm", perm, no);
	return imp_finish(im, ln, np);
}
