/* A Loop IR interpreter for the tests (lir_eval.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lir_eval.h"

enum { MAXL = 64 };

typedef union {
	float f;
	int32_t w;
	int64_t i;
	bool m;
} Lane;

typedef struct {
	int n;             /* lanes (scalars: the context's, all equal) */
	Lane l[MAXL];
} Val;

typedef struct {
	const LirKernel *k;
	void **bufs;
	int64_t *var;      /* per variable: its value (a vector's first lane) */
	Val *temp;
	bool *set;
	int width;         /* lanes of the context */
	int vvar;          /* the vector variable around, or -1 */
} Ev;

/* An address (LX_ADDR): buffer and element index in one integer. */
#define ADDR_SHIFT 44
static int64_t addr_make(int buf, int64_t idx)
{
	return ((int64_t)(buf + 1) << ADDR_SHIFT) + idx;
}

static bool addr_split(int64_t a, int *buf, int64_t *idx)
{
	int64_t half = (int64_t)1 << (ADDR_SHIFT - 1);
	int64_t b = ((a + half) >> ADDR_SHIFT) - 1;
	if (b < 0 || b > 1 << 16)
		return false;
	*buf = (int)b;
	*idx = a - ((b + 1) << ADDR_SHIFT);
	return true;
}

static int64_t affine_at(const Ev *ev, const LirAffine *a)
{
	int64_t r = a->off;
	for (int i = 0; i < a->n; i++)
		r += a->t[i].coef * ev->var[a->t[i].var];
	return r;
}

/* The element index of an access's first lane and its move per lane. */
static bool access(const Ev *ev, int buf, const LirAffine *a, int ptr, const LirAffine *pa, int64_t *base,
		   int64_t *move)
{
	const LirKernel *k = ev->k;
	if (buf < 0 || buf >= k->nbufs)
		return false;
	const LirAffine *ix = a;
	*base = 0;
	if (ptr >= 0) {
		if (ptr >= k->ntemps || !ev->set[ptr])
			return false;
		int pb;
		int64_t idx;
		if (!addr_split(ev->temp[ptr].l[0].i, &pb, &idx) || pb != buf)
			return false;
		*base = idx;
		ix = pa;
	}
	*base += affine_at(ev, ix);
	*move = ev->vvar >= 0 ? lir_coef(ix, ev->vvar) : 0;
	if (*move != 0 && *move != 1)
		return false;
	int64_t last = *base + *move * (ev->width - 1);
	return *base >= 0 && last < k->bufs[buf].numel;
}

static void splat(Val *v, int n)
{
	v->n = n;
	for (int i = 1; i < n; i++)
		v->l[i] = v->l[0];
}

static bool f1(SelOp op, float a, float *r)
{
	switch (op) {
	case SEL_NEG_F: case SEL_NEG_V: *r = -a; return true;
	case SEL_ABS_F: case SEL_ABS_V: *r = fabsf(a); return true;
	case SEL_SQRT_F: case SEL_SQRT_V: *r = sqrtf(a); return true;
	case SEL_ROUND_V: *r = nearbyintf(a); return true;
	default: return false;
	}
}

static bool f2(SelOp op, float a, float b, float *r)
{
	switch (op) {
	case SEL_ADD_F: case SEL_ADD_V: *r = a + b; return true;
	case SEL_SUB_F: case SEL_SUB_V: *r = a - b; return true;
	case SEL_MUL_F: case SEL_MUL_V: *r = a * b; return true;
	case SEL_DIV_F: case SEL_DIV_V: *r = a / b; return true;
	case SEL_MAX_F: case SEL_MAX_V: *r = fmaxf(a, b); return true;
	case SEL_MIN_F: case SEL_MIN_V: *r = fminf(a, b); return true;
	default: return false;
	}
}

static int32_t to_i32(float x)
{
	float r = nearbyintf(x);
	if (!(r >= -2147483648.0f && r < 2147483648.0f))
		return INT32_MIN;
	return (int32_t)r;
}

static bool eval_expr(Ev *ev, const LirExpr *e, Val *out);

static bool reads_wide(const LirKernel *k, const LirExpr *e)
{
	if (!e)
		return false;
	if (e->kind == LX_TEMP && e->temp >= 0 && e->temp < k->ntemps && k->temps[e->temp].wide)
		return true;
	for (int i = 0; i < 3; i++)
		if (reads_wide(k, e->k[i]))
			return true;
	return false;
}

static bool eval_op(Ev *ev, const LirExpr *e, Val *out)
{
	if (e->op >= SEL_COUNT)
		return false;
	int nk = sel_info[e->op].nkids;
	Val *kv = malloc(3 * sizeof *kv);
	bool ok = true;
	/* a reduction of a wide temporary in scalar context: over its lanes */
	int saved = ev->width;
	if ((e->op == SEL_REDSUM_V || e->op == SEL_REDMAX_V) && ev->width == 1 && reads_wide(ev->k, e->k[0]))
		ev->width = ev->k->lanes;
	for (int i = 0; i < nk && ok; i++)
		ok = e->k[i] && eval_expr(ev, e->k[i], &kv[i]);
	int kn = ev->width;
	ev->width = saved;
	int n = ev->width;
	out->n = n;
	Lane *a = kv[0].l, *b = kv[1].l, *c = kv[2].l, *r = out->l;
	SelOp op = e->op;
	for (int l = 0; l < n && ok; l++) {
		switch (op) {
		case SEL_ADD_I: r[l].i = (int64_t)((uint64_t)a[l].i + (uint64_t)b[l].i); break;
		case SEL_SUB_I: r[l].i = (int64_t)((uint64_t)a[l].i - (uint64_t)b[l].i); break;
		case SEL_MUL_I: r[l].i = (int64_t)((uint64_t)a[l].i * (uint64_t)b[l].i); break;
		case SEL_SHL_I: r[l].i = (int64_t)((uint64_t)a[l].i << (b[l].i & 63)); break;
		case SEL_MIN_I: r[l].i = a[l].i < b[l].i ? a[l].i : b[l].i; break;
		case SEL_MAX_I: r[l].i = a[l].i > b[l].i ? a[l].i : b[l].i; break;
		case SEL_FMA_F: case SEL_FMA_V: r[l].f = fmaf(a[l].f, b[l].f, c[l].f); break;
		case SEL_CVT_I_F: r[l].f = (float)a[l].i; break;
		case SEL_CVT_F_I: r[l].i = (int64_t)nearbyintf(a[l].f); break;
		case SEL_BCAST_V: r[l].f = a[0].f; break;
		case SEL_CMPLT_V: r[l].m = a[l].f < b[l].f; break;
		case SEL_CMPLE_V: r[l].m = a[l].f <= b[l].f; break;
		case SEL_SELECT_V: r[l].f = a[l].m ? b[l].f : c[l].f; break;
		case SEL_MASKN: r[l].m = l < a[l].i; break;
		case SEL_REDSUM_V:
		case SEL_REDMAX_V: {
			float s = a[0].f;
			for (int j = 1; j < kn; j++)
				s = op == SEL_REDSUM_V ? s + a[j].f : fmaxf(s, a[j].f);
			for (int j = 0; j < n; j++)
				r[j].f = s;
			l = n;
			break;
		}
		case SEL_CVT_V_W: r[l].w = to_i32(a[l].f); break;
		case SEL_CVT_W_V: r[l].f = (float)a[l].w; break;
		case SEL_ADD_W: r[l].w = (int32_t)((uint32_t)a[l].w + (uint32_t)b[l].w); break;
		case SEL_MAX_W: r[l].w = a[l].w > b[l].w ? a[l].w : b[l].w; break;
		case SEL_MIN_W: r[l].w = a[l].w < b[l].w ? a[l].w : b[l].w; break;
		case SEL_SHL_W: r[l].w = (int32_t)((uint32_t)a[l].w << (b[l].i & 31)); break;
		case SEL_SHR_W: r[l].w = (int32_t)((uint32_t)a[l].w >> (b[l].i & 31)); break;
		case SEL_AND_W: r[l].w = a[l].w & b[l].w; break;
		case SEL_OR_W: r[l].w = a[l].w | b[l].w; break;
		case SEL_BITS_W_V: memcpy(&r[l].f, &a[l].w, 4); break;
		case SEL_BITS_V_W: memcpy(&r[l].w, &a[l].f, 4); break;
		default:
			if (nk == 1)
				ok = f1(op, a[l].f, &r[l].f);
			else if (nk == 2)
				ok = f2(op, a[l].f, b[l].f, &r[l].f);
			else
				ok = false;
		}
	}
	free(kv);
	return ok;
}

static bool eval_expr(Ev *ev, const LirExpr *e, Val *out)
{
	const LirKernel *k = ev->k;
	int n = ev->width;
	memset(out->l, 0, sizeof out->l[0]);
	out->n = n;
	switch (e->kind) {
	case LX_OP:
		return eval_op(ev, e, out);
	case LX_LOAD: {
		int64_t base, move;
		if (!access(ev, e->buf, &e->a, e->ptr, &e->pa, &base, &move))
			return false;
		int es = k->bufs[e->buf].esize;
		for (int l = 0; l < n; l++) {
			int64_t x = base + move * l;
			if (e->as == LIR_AS_I32) {
				if (es != 4)
					return false;
				int32_t w;
				memcpy(&w, (float *)ev->bufs[e->buf] + x, 4);
				out->l[l].i = w;
			} else if (es == 4)
				out->l[l].f = ((float *)ev->bufs[e->buf])[x];
			else if (es == 8)
				out->l[l].i = ((int64_t *)ev->bufs[e->buf])[x];
			else
				return false;
		}
		return true;
	}
	case LX_TEMP: {
		if (e->temp < 0 || e->temp >= k->ntemps || !ev->set[e->temp])
			return false;
		const Val *t = &ev->temp[e->temp];
		for (int l = 0; l < n; l++) {
			if (t->n == 1 || n == 1)
				out->l[l] = t->l[0];
			else if (l < t->n)
				out->l[l] = t->l[l];
			else
				return false;
		}
		return true;
	}
	case LX_ADDR:
		if (e->buf < 0 || e->buf >= k->nbufs)
			return false;
		out->l[0].i = addr_make(e->buf, affine_at(ev, &e->a));
		splat(out, n);
		return true;
	case LX_PTRADD: {
		/* (addresses count elements here: moved by e->i of them) */
		if (e->temp < 0 || e->temp >= k->ntemps || !ev->set[e->temp])
			return false;
		int b;
		int64_t idx;
		if (!addr_split(ev->temp[e->temp].l[0].i, &b, &idx) || b != e->buf)
			return false;
		out->l[0].i = addr_make(b, idx + e->i);
		splat(out, n);
		return true;
	}
	case LX_CONSTF:
		out->l[0].f = (float)e->f;
		splat(out, n);
		return true;
	case LX_CONSTI:
		out->l[0].i = e->i;
		splat(out, n);
		return true;
	case LX_CONSTW:
		out->l[0].w = (int32_t)e->i;
		splat(out, n);
		return true;
	case LX_INDEX:
		if (e->var < 0 || e->var >= k->nvars || e->var == ev->vvar)
			return false;
		out->l[0].i = ev->var[e->var];
		splat(out, n);
		return true;
	}
	return false;
}

static bool eval_block(Ev *ev, const LirBlock *b);

static bool eval_loop(Ev *ev, const LirStmt *s)
{
	const LirKernel *k = ev->k;
	if (s->var < 0 || s->var >= k->nvars)
		return false;
	const LirVar *x = &k->vars[s->var];
	int saved_w = ev->width, saved_v = ev->vvar;
	bool ok = true;
	if (x->step < 1)
		return false;
	switch (x->kind) {
	case LIR_INDEX_DATA:
		return false; /* (not a loop) */
	case LIR_LOOP_SCALAR:
		for (int64_t v = x->lo; v < x->hi && ok; v += x->step) {
			ev->var[s->var] = v;
			ok = eval_block(ev, &s->body);
		}
		break;
	case LIR_LOOP_VECTOR:
	case LIR_LOOP_STRIP:
	case LIR_LOOP_MASKED:
		if (ev->vvar >= 0 || k->lanes < 1 || k->lanes > MAXL)
			return false;
		ev->vvar = s->var;
		for (int64_t v = x->lo; v < x->hi && ok;) {
			int64_t w = x->kind == LIR_LOOP_VECTOR ? k->lanes
				    : x->kind == LIR_LOOP_MASKED ? x->hi - x->lo
				    : (x->hi - v < k->lanes ? x->hi - v : k->lanes);
			if (w > MAXL)
				return false;
			ev->width = (int)w;
			ev->var[s->var] = v;
			ok = eval_block(ev, &s->body);
			if (x->kind == LIR_LOOP_MASKED)
				break;
			v += x->kind == LIR_LOOP_STRIP ? w : x->step;
		}
		break;
	}
	ev->width = saved_w;
	ev->vvar = saved_v;
	return ok;
}

static bool eval_store(Ev *ev, const LirStmt *s)
{
	const LirKernel *k = ev->k;
	int64_t base, move;
	if (!access(ev, s->buf, &s->a, s->ptr, &s->pa, &base, &move))
		return false;
	if (ev->vvar >= 0 && move != 1)
		return false;
	Val *v = malloc(sizeof *v);
	bool ok = eval_expr(ev, s->e, v);
	int es = k->bufs[s->buf].esize;
	for (int l = 0; l < ev->width && ok; l++) {
		int64_t x = base + move * l;
		if (es == 4)
			((float *)ev->bufs[s->buf])[x] = v->l[l].f;
		else if (es == 8)
			((int64_t *)ev->bufs[s->buf])[x] = v->l[l].i;
		else if (es == 1)
			((uint8_t *)ev->bufs[s->buf])[x] = (uint8_t)v->l[l].i;
		else
			ok = false;
	}
	free(v);
	return ok;
}

static bool eval_block(Ev *ev, const LirBlock *b)
{
	for (int i = 0; i < b->n; i++) {
		const LirStmt *s = b->s[i];
		switch (s->kind) {
		case LS_LOOP:
			if (!eval_loop(ev, s))
				return false;
			break;
		case LS_INDEX: {
			/* the index, made non-negative; outside [0, n): the run-time error */
			Val *v = malloc(sizeof *v);
			int saved = ev->width;
			ev->width = 1;
			bool ok = eval_expr(ev, s->e, v);
			ev->width = saved;
			int64_t x = v->l[0].i, n = ev->k->vars[s->var].hi;
			free(v);
			if (x < 0)
				x += n;
			if (!ok || x < 0 || x >= n)
				return false;
			ev->var[s->var] = x;
			break;
		}
		case LS_ASSIGN: {
			/* into a value of its own: the expression may read the temporary */
			Val *v = malloc(sizeof *v);
			/* a wide temporary holds a whole vector in any context */
			int saved = ev->width;
			if (s->temp >= 0 && s->temp < ev->k->ntemps && ev->k->temps[s->temp].wide && ev->width == 1)
				ev->width = ev->k->lanes;
			bool ok = s->temp >= 0 && s->temp < ev->k->ntemps && eval_expr(ev, s->e, v);
			ev->width = saved;
			if (ok) {
				ev->temp[s->temp] = *v;
				ev->set[s->temp] = true;
			}
			free(v);
			if (!ok)
				return false;
			break;
		}
		case LS_STORE:
			if (!eval_store(ev, s))
				return false;
			break;
		case LS_PREFETCH:
			break; /* a hint: nothing to do */
		}
	}
	return true;
}

bool lir_eval(const LirKernel *k, void **bufs)
{
	if (!k->ok || k->outer_vector >= 0)
		return false;
	for (int i = 0; i < k->nvars; i++)
		if (k->vars[i].ext >= 0)
			return false;
	for (int i = 0; i < k->ntemps; i++)
		if (k->temps[i].ext >= 0)
			return false;
	Ev ev = {k, bufs, calloc((size_t)k->nvars + 1, sizeof(int64_t)), calloc((size_t)k->ntemps + 1, sizeof(Val)),
		 calloc((size_t)k->ntemps + 1, sizeof(bool)), 1, -1};
	bool ok = ev.var && ev.temp && ev.set && eval_block(&ev, &k->body);
	free(ev.var);
	free(ev.temp);
	free(ev.set);
	return ok;
}
