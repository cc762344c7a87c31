/* test_loopir: the Loop IR (loop/lir.h): the printer, the verifier, the
 * interpreter of the tests (lir_eval.c) against plain C, and the
 * transforms: each one evaluated before and after on the same data must
 * leave bit-identical buffers and a kernel the verifier accepts, and each
 * refusal must leave the kernel as it was. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lir.h"
#include "lir_eval.h"

/* ---- helpers ------------------------------------------------------------ */
/* off + sum of n (var, coef) pairs */
static LirAffine ax(LirKernel *k, int64_t off, int n, ...)
{
	LirAffine a = lir_affine(off);
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		int v = va_arg(ap, int);
		int64_t c = va_arg(ap, int64_t);
		lir_term(k, &a, v, c);
	}
	va_end(ap);
	return a;
}
#define AX0(k, off) ax((k), (off), 0)
#define AX1(k, off, v, c) ax((k), (off), 1, (int)(v), (int64_t)(c))
#define AX2(k, off, v, c, w, d) ax((k), (off), 2, (int)(v), (int64_t)(c), (int)(w), (int64_t)(d))

static LirExpr *ld(LirKernel *k, int buf, LirAffine a)
{
	return lir_load(k, buf, &a);
}

static void st(LirKernel *k, int buf, LirAffine a, LirExpr *e)
{
	lir_store(k, buf, &a, e);
}

static char *print_str(const LirKernel *k)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	lir_print(f, k);
	fclose(f);
	return buf;
}

static bool verify(const LirKernel *k, const char *want_error)
{
	Diag d;
	diag_init(&d);
	bool ok = lir_verify(k, &d, loc_at(NULL, 0, 0));
	if (!want_error && !ok) {
		diag_print(&d, stderr);
		char *s = print_str(k);
		fputs(s, stderr);
		free(s);
	}
	bool found = want_error && diag_find(&d, want_error) != NULL;
	if (want_error && !found)
		diag_print(&d, stderr);
	diag_free(&d);
	return want_error ? !ok && found : ok;
}

/* buffers for a kernel, filled from a seed */
typedef struct {
	int n;
	void *p[16];
	size_t bytes[16];
} Data;

static uint32_t rng(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static Data data_new(const LirKernel *k, uint32_t seed)
{
	Data d = {k->nbufs, {0}, {0}};
	cr_assert(k->nbufs <= 16);
	for (int b = 0; b < k->nbufs; b++) {
		const LirBuf *x = &k->bufs[b];
		d.bytes[b] = (size_t)x->numel * (size_t)x->esize;
		d.p[b] = malloc(d.bytes[b] + 1);
		for (int64_t i = 0; i < x->numel; i++) {
			uint32_t r = rng(&seed);
			if (x->esize == 4)
				((float *)d.p[b])[i] = (float)((int)(r % 4001) - 2000) / 337.0f;
			else if (x->esize == 8)
				((int64_t *)d.p[b])[i] = (int64_t)(r % 1000) - 500;
			else
				((uint8_t *)d.p[b])[i] = (uint8_t)r;
		}
	}
	return d;
}

static void data_free(Data *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->p[i]);
}

/* Handles a builder returns: its loop variables (by name) */
typedef struct {
	int v[8];
} H;

typedef LirKernel *(*Build)(H *h);
typedef bool (*Xform)(LirKernel *k, const H *h);

/* Evaluates build() and build() transformed on the same data; they must
 * agree to the bit, and the transformed kernel must verify. */
static void check_same(Build build, Xform xf, uint32_t seed)
{
	H h0, h1;
	LirKernel *a = build(&h0);
	LirKernel *b = build(&h1);
	cr_assert(verify(a, NULL));
	cr_assert(xf(b, &h1), "transform not applied (%s, seed %u)", b->name, (unsigned)seed);
	cr_assert(verify(b, NULL), "transformed kernel rejected");
	Data da = data_new(a, seed), db = data_new(b, seed);
	cr_assert(lir_eval(a, da.p));
	cr_assert(lir_eval(b, db.p), "transformed kernel not evaluated");
	for (int i = 0; i < da.n; i++)
		cr_assert(memcmp(da.p[i], db.p[i], da.bytes[i]) == 0, "buffer %s differs after the transform",
			  a->bufs[i].name);
	data_free(&da);
	data_free(&db);
	lir_kernel_free(a);
	lir_kernel_free(b);
}

/* The transform refuses and the kernel prints as before. */
static void check_refused(Build build, Xform xf)
{
	H h;
	LirKernel *k = build(&h);
	char *before = print_str(k);
	cr_assert_not(xf(k, &h), "transform applied");
	char *after = print_str(k);
	cr_assert_str_eq(after, before);
	cr_assert(verify(k, NULL));
	free(before);
	free(after);
	lir_kernel_free(k);
}

/* ---- kernels ------------------------------------------------------------ */
enum { R = 5, C = 7 };

/* y[i][j] = x[i][j] * 2 + 1 */
static LirKernel *build_ew(H *h)
{
	LirKernel *k = lir_kernel_new("ew", 8, false);
	int x = lir_buffer(k, "x", R * C, 4, 0), y = lir_buffer(k, "y", R * C, 4, 1);
	int t = lir_temp(k, SORT_V);
	int i = lir_for(k, 0, R, 1), j = lir_for(k, 0, C, 1);
	lir_assign(k, t, lir_op(k, SEL_MUL_V, ld(k, x, AX2(k, 0, i, C, j, 1)), lir_constf(k, 2), NULL));
	st(k, y, AX2(k, 0, i, C, j, 1), lir_op(k, SEL_ADD_V, lir_ref(k, t), lir_constf(k, 1), NULL));
	lir_end(k);
	lir_end(k);
	h->v[0] = i, h->v[1] = j;
	return k;
}

/* the same over rows of 24 with a vector loop of 8 lanes, and a scale per
 * row (a broadcast load) */
enum { VC = 24 };
static LirKernel *build_vew(H *h)
{
	LirKernel *k = lir_kernel_new("vew", 8, false);
	int x = lir_buffer(k, "x", R * VC, 4, 0), s = lir_buffer(k, "s", R, 4, 1), y = lir_buffer(k, "y", R * VC, 4, 2);
	int t = lir_temp(k, SORT_V);
	int i = lir_for(k, 0, R, 1), j = lir_for(k, 0, VC, 8);
	k->vars[j].kind = LIR_LOOP_VECTOR;
	lir_assign(k, t, lir_op(k, SEL_MUL_V, ld(k, x, AX2(k, 0, i, VC, j, 1)), ld(k, s, AX1(k, 0, i, 1)), NULL));
	st(k, y, AX2(k, 0, i, VC, j, 1), lir_op(k, SEL_ADD_V, lir_ref(k, t), lir_constf(k, 1), NULL));
	lir_end(k);
	lir_end(k);
	h->v[0] = i, h->v[1] = j;
	return k;
}

/* y[r] = sum_i x[r][i] * w[i] (an accumulator per row) */
enum { RR = 6, RN = 13 };
static LirKernel *build_red(H *h)
{
	LirKernel *k = lir_kernel_new("red", 8, false);
	int x = lir_buffer(k, "x", RR * RN, 4, 0), w = lir_buffer(k, "w", RN, 4, 1), y = lir_buffer(k, "y", RR, 4, 2);
	int acc = lir_temp(k, SORT_V);
	int r = lir_for(k, 0, RR, 1);
	lir_assign(k, acc, lir_constf(k, 0));
	int i = lir_for(k, 0, RN, 1);
	lir_assign(k, acc, lir_op(k, SEL_FMA_V, ld(k, x, AX2(k, 0, r, RN, i, 1)), ld(k, w, AX1(k, 0, i, 1)), lir_ref(k, acc)));
	lir_end(k);
	st(k, y, AX1(k, 0, r, 1), lir_ref(k, acc));
	lir_end(k);
	h->v[0] = r, h->v[1] = i;
	return k;
}

/* s = sum_i x[i]^2 into s[0], with the accumulator read after the loop */
enum { SN = 29 };
static LirKernel *build_sum(H *h)
{
	LirKernel *k = lir_kernel_new("sum", 8, false);
	int x = lir_buffer(k, "x", SN, 4, 0), s = lir_buffer(k, "s", 2, 4, 1);
	int acc = lir_temp(k, SORT_V), sq = lir_temp(k, SORT_V);
	lir_assign(k, acc, lir_constf(k, 0));
	int i = lir_for(k, 0, SN, 1);
	lir_assign(k, sq, lir_op(k, SEL_MUL_V, ld(k, x, AX1(k, 0, i, 1)), ld(k, x, AX1(k, 0, i, 1)), NULL));
	lir_assign(k, acc, lir_op(k, SEL_ADD_V, lir_ref(k, acc), lir_ref(k, sq), NULL));
	lir_end(k);
	st(k, s, AX0(k, 0), lir_ref(k, acc));
	st(k, s, AX0(k, 1), lir_ref(k, sq)); /* the last iteration's own value */
	h->v[0] = i;
	return k;
}

/* C = A * B, an accumulator per element */
enum { MM = 5, MN = 6, MK = 7 };
/* (prefetch: the next row of A at each k too, past A's end on the last
 * row: a hint never faults, so the verifier allows it) */
static LirKernel *build_mm_with(H *h, const char *name, bool prefetch)
{
	LirKernel *k = lir_kernel_new(name, 8, false);
	int A = lir_buffer(k, "A", MM * MK, 4, 0), B = lir_buffer(k, "B", MK * MN, 4, 1),
	    Cb = lir_buffer(k, "C", MM * MN, 4, 2);
	int acc = lir_temp(k, SORT_V);
	int i = lir_for(k, 0, MM, 1), j = lir_for(k, 0, MN, 1);
	lir_assign(k, acc, lir_constf(k, 0));
	int kk = lir_for(k, 0, MK, 1);
	lir_assign(k, acc, lir_op(k, SEL_FMA_V, ld(k, A, AX2(k, 0, i, MK, kk, 1)), ld(k, B, AX2(k, 0, kk, MN, j, 1)),
				  lir_ref(k, acc)));
	if (prefetch) {
		LirAffine pa = AX2(k, MK, i, MK, kk, 1);
		lir_prefetch(k, A, &pa);
	}
	lir_end(k);
	st(k, Cb, AX2(k, 0, i, MN, j, 1), lir_ref(k, acc));
	lir_end(k);
	lir_end(k);
	h->v[0] = i, h->v[1] = j, h->v[2] = kk;
	return k;
}

static LirKernel *build_mm(H *h)
{
	return build_mm_with(h, "mm", false);
}

/* C += A * B accumulated in memory (a perfect nest of three) */
static LirKernel *build_mm_mem(H *h)
{
	LirKernel *k = lir_kernel_new("mm_mem", 8, false);
	int A = lir_buffer(k, "A", MM * MK, 4, 0), B = lir_buffer(k, "B", MK * MN, 4, 1),
	    Cb = lir_buffer(k, "C", MM * MN, 4, 2);
	int i = lir_for(k, 0, MM, 1), j = lir_for(k, 0, MN, 1), kk = lir_for(k, 0, MK, 1);
	st(k, Cb, AX2(k, 0, i, MN, j, 1),
	   lir_op(k, SEL_FMA_V, ld(k, A, AX2(k, 0, i, MK, kk, 1)), ld(k, B, AX2(k, 0, kk, MN, j, 1)),
		  ld(k, Cb, AX2(k, 0, i, MN, j, 1))));
	lir_end(k);
	lir_end(k);
	lir_end(k);
	h->v[0] = i, h->v[1] = j, h->v[2] = kk;
	return k;
}

/* s[0] += x[i][j] over a perfect nest (no order but the original) */
static LirKernel *build_nest_sum(H *h)
{
	LirKernel *k = lir_kernel_new("nest_sum", 8, false);
	int x = lir_buffer(k, "x", R * C, 4, 0), s = lir_buffer(k, "s", 1, 4, 1);
	int i = lir_for(k, 0, R, 1), j = lir_for(k, 0, C, 1);
	st(k, s, AX0(k, 0), lir_op(k, SEL_ADD_V, ld(k, s, AX0(k, 0)), ld(k, x, AX2(k, 0, i, C, j, 1)), NULL));
	lir_end(k);
	lir_end(k);
	h->v[0] = i, h->v[1] = j;
	return k;
}

/* an accumulator carried across a whole nest */
static LirKernel *build_nest_acc(H *h)
{
	LirKernel *k = lir_kernel_new("nest_acc", 8, false);
	int x = lir_buffer(k, "x", R * C, 4, 0), s = lir_buffer(k, "s", 1, 4, 1);
	int acc = lir_temp(k, SORT_V);
	lir_assign(k, acc, lir_constf(k, 0));
	int i = lir_for(k, 0, R, 1), j = lir_for(k, 0, C, 1);
	lir_assign(k, acc, lir_op(k, SEL_ADD_V, lir_ref(k, acc), ld(k, x, AX2(k, 0, i, C, j, 1)), NULL));
	lir_end(k);
	lir_end(k);
	st(k, s, AX0(k, 0), lir_ref(k, acc));
	h->v[0] = i, h->v[1] = j;
	return k;
}

/* two loops in one body */
static LirKernel *build_two(H *h)
{
	LirKernel *k = lir_kernel_new("two", 8, false);
	int x = lir_buffer(k, "x", R * C, 4, 0), y = lir_buffer(k, "y", R * C, 4, 1);
	int i = lir_for(k, 0, R, 1);
	int j = lir_for(k, 0, C, 1);
	st(k, y, AX2(k, 0, i, C, j, 1), ld(k, x, AX2(k, 0, i, C, j, 1)));
	lir_end(k);
	int j2 = lir_for(k, 0, C, 1);
	st(k, y, AX2(k, 0, i, C, j2, 1), lir_op(k, SEL_ADD_V, ld(k, y, AX2(k, 0, i, C, j2, 1)), lir_constf(k, 1), NULL));
	lir_end(k);
	lir_end(k);
	h->v[0] = i, h->v[1] = j, h->v[2] = j2;
	return k;
}

/* y[i] = x[i] + 1 as a masked loop (lanes 8, 5 elements) and a strip loop
 * of a scalable kernel */
static LirKernel *build_masked(H *h)
{
	LirKernel *k = lir_kernel_new("masked", 8, false);
	int x = lir_buffer(k, "x", 5, 4, 0), y = lir_buffer(k, "y", 5, 4, 1);
	int i = lir_for(k, 0, 5, 8);
	k->vars[i].kind = LIR_LOOP_MASKED;
	st(k, y, AX1(k, 0, i, 1), lir_op(k, SEL_ADD_V, ld(k, x, AX1(k, 0, i, 1)), lir_constf(k, 1), NULL));
	lir_end(k);
	h->v[0] = i;
	return k;
}

static LirKernel *build_strip(H *h)
{
	LirKernel *k = lir_kernel_new("strip", 8, true);
	int x = lir_buffer(k, "x", 21, 4, 0), y = lir_buffer(k, "y", 21, 4, 1);
	int i = lir_for(k, 0, 21, 8);
	k->vars[i].kind = LIR_LOOP_STRIP;
	st(k, y, AX1(k, 0, i, 1), lir_op(k, SEL_ADD_V, ld(k, x, AX1(k, 0, i, 1)), lir_constf(k, 1), NULL));
	lir_end(k);
	h->v[0] = i;
	return k;
}

/* ---- the printer -------------------------------------------------------- */
Test(loopir, print)
{
	LirKernel *k = lir_kernel_new("kernel 1: y = x * 2 + 1", 8, false);
	lir_note(k, "elementwise");
	int x = lir_buffer(k, "x", 12, 4, 0), y = lir_buffer(k, "y", 12, 4, 1), n = lir_buffer(k, "n", 3, 8, 2);
	int t = lir_temp(k, SORT_V);
	int i = lir_for(k, 0, 3, 1), j = lir_for(k, 0, 4, 2);
	lir_assign(k, t, lir_op(k, SEL_MUL_V, ld(k, x, AX2(k, 1, i, 4, j, 1)), lir_constf(k, 2), NULL));
	st(k, y, AX2(k, 3, j, -1, i, 4), lir_op(k, SEL_ADD_V, lir_ref(k, t), lir_constf(k, 0.5), NULL));
	lir_last(k)->note = "the store";
	lir_end(k);
	st(k, n, AX1(k, 0, i, 1), lir_op(k, SEL_ADD_I, lir_index(k, i), ld(k, n, AX1(k, 2, i, -1)), NULL));
	lir_end(k);
	cr_assert(verify(k, NULL));
	char *s = print_str(k);
	cr_assert_str_eq(s, "kernel 1: y = x * 2 + 1\n"
			    "  # elementwise\n"
			    "  buffers: x[12], y[12], n[3] i64\n"
			    "  for i0 in [0, 3)\n"
			    "    for i1 in [0, 4) step 2\n"
			    "      %t0 = mul.v(x[4*i0 + i1 + 1], 2)\n"
			    "      y[-i1 + 4*i0 + 3] = add.v(%t0, 0.5)    # the store\n"
			    "    n[i0] = add.i(i0, n[-i0 + 2])\n");
	free(s);
	lir_kernel_free(k);
}

/* y[2i] = -x[2i] for i in [0, 5), unrolled twice; *x_buf, *var: x and i */
static LirKernel *neg_unrolled(int *x_buf, int *var)
{
	LirKernel *k = lir_kernel_new("k", 8, false);
	int x = lir_buffer(k, "x", 10, 4, 0), y = lir_buffer(k, "y", 10, 4, 1);
	int t = lir_temp(k, SORT_V);
	int i = lir_for(k, 0, 5, 1);
	lir_assign(k, t, lir_op(k, SEL_NEG_V, ld(k, x, AX1(k, 0, i, 2)), NULL, NULL));
	st(k, y, AX1(k, 0, i, 2), lir_ref(k, t));
	lir_end(k);
	cr_assert(lir_unroll(k, i, 2));
	*x_buf = x;
	*var = i;
	return k;
}

#define NEG_UNROLLED_HEAD                                                                                            \
	"k\n"                                                                                                         \
	"  buffers: x[10], y[10]\n"                                                                                   \
	"  for i0 in [0, 4) step 2\n"                                                                                 \
	"    %t1 = neg.v(x[2*i0])\n"                                                                                  \
	"    y[2*i0] = %t1\n"                                                                                         \
	"    %t0 = neg.v(x[2*i0 + 2])\n"                                                                              \
	"    y[2*i0 + 2] = %t0\n"
#define NEG_UNROLLED_TAIL                                                                                            \
	"  for i0r in [4, 5)\n"                                                                                       \
	"    %t2 = neg.v(x[2*i0r])\n"                                                                                 \
	"    y[2*i0r] = %t2\n"

Test(loopir, print_transformed)
{
	int x, i;
	LirKernel *k = neg_unrolled(&x, &i);
	cr_assert(verify(k, NULL));
	char *s = print_str(k);
	cr_assert_str_eq(s, NEG_UNROLLED_HEAD NEG_UNROLLED_TAIL);
	free(s);
	lir_kernel_free(k);
}

/* A loop opened again after unrolling: what is added runs once an
 * iteration of the unrolled loop (not in its remainder), at the body's
 * end; an unknown variable is refused. */
Test(loopir, reopen_after_unroll)
{
	int x, i;
	LirKernel *k = neg_unrolled(&x, &i);
	cr_assert(lir_reopen(k, i));
	LirAffine pa = AX1(k, 1, i, 2);
	lir_prefetch(k, x, &pa);
	lir_end(k);
	cr_assert_not(lir_reopen(k, 99));
	cr_assert(verify(k, NULL));
	char *s = print_str(k);
	cr_assert_str_eq(s, NEG_UNROLLED_HEAD "    prefetch x[2*i0 + 1]\n" NEG_UNROLLED_TAIL);
	free(s);
	lir_kernel_free(k);
}

/* ---- the verifier ------------------------------------------------------- */
Test(loopir, verify_out_of_bounds)
{
	LirKernel *k = lir_kernel_new("oob", 8, false);
	int x = lir_buffer(k, "x", 10, 4, 0), y = lir_buffer(k, "y", 9, 4, 1);
	int i = lir_for(k, 0, 10, 1);
	st(k, y, AX1(k, 0, i, 1), ld(k, x, AX1(k, 0, i, 1)));
	lir_end(k);
	cr_assert(verify(k, "a store of y at [0, 9], outside [0, 9)"));
	lir_kernel_free(k);
}

Test(loopir, verify_vector_out_of_bounds)
{
	/* a vector's lanes count: the last vector at 8 reads x[8..15] */
	LirKernel *k = lir_kernel_new("voob", 8, false);
	int x = lir_buffer(k, "x", 15, 4, 0), y = lir_buffer(k, "y", 16, 4, 1);
	int i = lir_for(k, 0, 16, 8);
	k->vars[i].kind = LIR_LOOP_VECTOR;
	st(k, y, AX1(k, 0, i, 1), ld(k, x, AX1(k, 0, i, 1)));
	lir_end(k);
	cr_assert(verify(k, "a load of x at [0, 15], outside [0, 15)"));
	lir_kernel_free(k);
}

Test(loopir, verify_read_before_assign)
{
	LirKernel *k = lir_kernel_new("rba", 8, false);
	int y = lir_buffer(k, "y", 4, 4, 0);
	int t = lir_temp(k, SORT_V);
	int i = lir_for(k, 0, 4, 1);
	st(k, y, AX1(k, 0, i, 1), lir_ref(k, t));
	lir_assign(k, t, lir_constf(k, 1));
	lir_end(k);
	cr_assert(verify(k, "%t0 read before it is assigned"));
	lir_kernel_free(k);
}

Test(loopir, verify_vector_store_not_moving)
{
	LirKernel *k = lir_kernel_new("vsnm", 8, false);
	int x = lir_buffer(k, "x", 16, 4, 0), y = lir_buffer(k, "y", 16, 4, 1);
	int i = lir_for(k, 0, 16, 8);
	k->vars[i].kind = LIR_LOOP_VECTOR;
	st(k, y, AX0(k, 0), ld(k, x, AX1(k, 0, i, 1)));
	lir_end(k);
	cr_assert(verify(k, "does not move along vector variable i0"));
	lir_kernel_free(k);

	/* nor by 2 */
	k = lir_kernel_new("vsnm2", 8, false);
	x = lir_buffer(k, "x", 16, 4, 0), y = lir_buffer(k, "y", 32, 4, 1);
	i = lir_for(k, 0, 16, 8);
	k->vars[i].kind = LIR_LOOP_VECTOR;
	st(k, y, AX1(k, 0, i, 2), ld(k, x, AX1(k, 0, i, 1)));
	lir_end(k);
	cr_assert(verify(k, "moves by 2 along vector variable i0"));
	lir_kernel_free(k);
}

Test(loopir, verify_accepts)
{
	H h;
	Build all[] = {build_ew, build_vew, build_red, build_sum, build_mm, build_mm_mem, build_two, build_masked,
		       build_strip};
	for (size_t b = 0; b < sizeof all / sizeof *all; b++) {
		LirKernel *k = all[b](&h);
		cr_assert(verify(k, NULL), "%s rejected", k->name);
		lir_kernel_free(k);
	}
}

/* ---- the interpreter ---------------------------------------------------- */
Test(loopir, eval_against_c)
{
	H h;
	LirKernel *k = build_ew(&h);
	Data d = data_new(k, 7);
	float *x = d.p[0], *y = d.p[1];
	cr_assert(lir_eval(k, d.p));
	for (int i = 0; i < R * C; i++)
		cr_assert(y[i] == x[i] * 2.0f + 1.0f);
	data_free(&d);
	lir_kernel_free(k);

	k = build_mm(&h);
	d = data_new(k, 9);
	float *A = d.p[0], *B = d.p[1], *Cm = d.p[2];
	cr_assert(lir_eval(k, d.p));
	for (int i = 0; i < MM; i++)
		for (int j = 0; j < MN; j++) {
			float acc = 0;
			for (int q = 0; q < MK; q++)
				acc = fmaf(A[i * MK + q], B[q * MN + j], acc);
			cr_assert(Cm[i * MN + j] == acc);
		}
	data_free(&d);
	lir_kernel_free(k);

	k = build_vew(&h);
	d = data_new(k, 11);
	x = d.p[0];
	float *s = d.p[1];
	y = d.p[2];
	cr_assert(lir_eval(k, d.p));
	for (int i = 0; i < R; i++)
		for (int j = 0; j < VC; j++)
			cr_assert(y[i * VC + j] == x[i * VC + j] * s[i] + 1.0f);
	data_free(&d);
	lir_kernel_free(k);
}

Test(loopir, eval_masked_and_strips)
{
	H h;
	Build b[] = {build_masked, build_strip};
	for (int n = 0; n < 2; n++) {
		LirKernel *k = b[n](&h);
		Data d = data_new(k, 3);
		float *x = d.p[0], *y = d.p[1];
		cr_assert(lir_eval(k, d.p));
		for (int i = 0; i < k->bufs[0].numel; i++)
			cr_assert(y[i] == x[i] + 1.0f);
		data_free(&d);
		lir_kernel_free(k);
	}
}

Test(loopir, eval_ops)
{
	/* round, conversions, bits, comparisons, select, reductions, integers */
	LirKernel *k = lir_kernel_new("ops", 8, false);
	int x = lir_buffer(k, "x", 8, 4, 0), y = lir_buffer(k, "y", 8 * 6, 4, 1), n = lir_buffer(k, "n", 4, 8, 2);
	int i = lir_for(k, 0, 8, 8);
	k->vars[i].kind = LIR_LOOP_VECTOR;
	LirExpr *xv = ld(k, x, AX1(k, 0, i, 1));
	st(k, y, AX1(k, 0, i, 1), lir_op(k, SEL_ROUND_V, xv, NULL, NULL));
	st(k, y, AX1(k, 8, i, 1), lir_op(k, SEL_CVT_W_V, lir_op(k, SEL_CVT_V_W, xv, NULL, NULL), NULL, NULL));
	st(k, y, AX1(k, 16, i, 1),
	   lir_op(k, SEL_BITS_W_V,
		  lir_op(k, SEL_AND_W, lir_op(k, SEL_BITS_V_W, xv, NULL, NULL),
			 lir_op(k, SEL_CVT_V_W, lir_constf(k, 0x7fff0000), NULL, NULL), NULL),
		  NULL, NULL));
	st(k, y, AX1(k, 24, i, 1),
	   lir_op(k, SEL_SELECT_V, lir_op(k, SEL_CMPLT_V, xv, lir_constf(k, 0), NULL), lir_op(k, SEL_NEG_V, xv, NULL, NULL),
		  lir_op(k, SEL_SQRT_V, xv, NULL, NULL)));
	st(k, y, AX1(k, 32, i, 1), lir_op(k, SEL_REDSUM_V, xv, NULL, NULL));
	st(k, y, AX1(k, 40, i, 1), lir_op(k, SEL_REDMAX_V, xv, NULL, NULL));
	lir_end(k);
	st(k, n, AX0(k, 0),
	   lir_op(k, SEL_SHL_I, lir_op(k, SEL_SUB_I, lir_consti(k, 3), lir_consti(k, 5), NULL), lir_consti(k, 2), NULL));
	st(k, n, AX0(k, 1), lir_op(k, SEL_MAX_I, lir_load_as(k, x, &(LirAffine){0}, LIR_AS_I32), lir_consti(k, 7), NULL));
	cr_assert(verify(k, NULL));
	float xs[8] = {2.5f, -1.5f, 0.49f, 3.5f, -0.5f, 9.0f, 16.0f, -2.25f};
	float ys[48];
	int64_t ns[4] = {0};
	void *bufs[] = {xs, ys, ns};
	cr_assert(lir_eval(k, bufs));
	float sum = 0, mx = xs[0];
	for (int l = 0; l < 8; l++) {
		sum = l ? sum + xs[l] : xs[0];
		mx = fmaxf(mx, xs[l]);
	}
	for (int l = 0; l < 8; l++) {
		cr_assert(ys[l] == nearbyintf(xs[l]));
		cr_assert(ys[8 + l] == nearbyintf(xs[l]));
		uint32_t bits;
		memcpy(&bits, &xs[l], 4);
		bits &= 0x7fff0000u;
		float f;
		memcpy(&f, &bits, 4);
		cr_assert(ys[16 + l] == f);
		cr_assert(ys[24 + l] == (xs[l] < 0 ? -xs[l] : sqrtf(xs[l])));
		cr_assert(ys[32 + l] == sum);
		cr_assert(ys[40 + l] == mx);
	}
	cr_assert(ns[0] == -8);
	int32_t x0;
	memcpy(&x0, &xs[0], 4);
	cr_assert(ns[1] == (x0 > 7 ? x0 : 7));
	lir_kernel_free(k);
}

Test(loopir, eval_rejects)
{
	/* an external variable, and an access outside the buffer */
	LirKernel *k = lir_kernel_new("ext", 8, false);
	int y = lir_buffer(k, "y", 4, 4, 0);
	int v = lir_extern_var(k, 3, 0, 4, 1, false);
	st(k, y, AX1(k, 0, v, 1), lir_constf(k, 1));
	float ys[4];
	void *bufs[] = {ys};
	cr_assert_not(lir_eval(k, bufs));
	lir_kernel_free(k);

	k = lir_kernel_new("oob", 8, false);
	y = lir_buffer(k, "y", 4, 4, 0);
	int i = lir_for(k, 0, 5, 1);
	st(k, y, AX1(k, 0, i, 1), lir_constf(k, 1));
	lir_end(k);
	cr_assert_not(lir_eval(k, bufs));
	lir_kernel_free(k);
}

/* ---- unroll ------------------------------------------------------------- */
static bool unroll_j2(LirKernel *k, const H *h) { return lir_unroll(k, h->v[1], 2); }
static bool unroll_j3(LirKernel *k, const H *h) { return lir_unroll(k, h->v[1], 3); }
static bool unroll_j7(LirKernel *k, const H *h) { return lir_unroll(k, h->v[1], 7); }
static bool unroll_i2(LirKernel *k, const H *h) { return lir_unroll(k, h->v[0], 2); }
static bool unroll_i4(LirKernel *k, const H *h) { return lir_unroll(k, h->v[0], 4); }
static bool unroll_k3(LirKernel *k, const H *h) { return lir_unroll(k, h->v[2], 3); }
static bool unroll_twice(LirKernel *k, const H *h)
{
	return lir_unroll(k, h->v[1], 2) && lir_unroll(k, h->v[0], 2) && lir_unroll(k, h->v[1], 3);
}

Test(loopir, unroll)
{
	check_same(build_ew, unroll_j2, 1);
	check_same(build_ew, unroll_j3, 2);
	check_same(build_ew, unroll_j7, 3);
	check_same(build_ew, unroll_i2, 4);
	check_same(build_ew, unroll_twice, 5);
	check_same(build_red, unroll_j3, 6); /* the accumulator carried */
	check_same(build_red, unroll_i4, 7); /* an accumulator per row, renamed */
	check_same(build_sum, unroll_i4, 8); /* the own value read after the loop */
	check_same(build_mm, unroll_k3, 9);
	check_same(build_mm, unroll_j2, 10);
	check_same(build_two, unroll_i2, 11);
}

Test(loopir, unroll_vector)
{
	check_same(build_vew, unroll_j2, 12);  /* 3 vectors: 2 unrolled, 1 left */
	check_same(build_vew, unroll_j3, 13);  /* exactly */
	H h;
	LirKernel *k = build_vew(&h);
	cr_assert(lir_unroll(k, h.v[1], 2));
	cr_assert(k->vars[h.v[1]].kind == LIR_LOOP_VECTOR && k->vars[h.v[1]].step == 16 && k->vars[h.v[1]].hi == 16);
	lir_kernel_free(k);
}

static bool unroll_i1(LirKernel *k, const H *h) { return lir_unroll(k, h->v[0], 1); }
static bool unroll_i9(LirKernel *k, const H *h) { return lir_unroll(k, h->v[0], 9); }
static bool unroll_none(LirKernel *k, const H *h) { (void)h; return lir_unroll(k, 99, 2) || lir_unroll(k, -1, 2); }

Test(loopir, unroll_refused)
{
	check_refused(build_ew, unroll_i1);
	check_refused(build_ew, unroll_i9);   /* fewer iterations than the factor */
	check_refused(build_ew, unroll_none);
	check_refused(build_masked, unroll_i2);
	check_refused(build_strip, unroll_i2);
}

/* ---- tile --------------------------------------------------------------- */
static bool tile_j3(LirKernel *k, const H *h)
{
	int in = -1;
	return lir_tile(k, h->v[1], 3, &in) && in >= 0 && lir_loop_of(k, in, NULL, NULL);
}
static bool tile_j7(LirKernel *k, const H *h) { return lir_tile(k, h->v[1], 7, NULL); }
static bool tile_i2(LirKernel *k, const H *h) { return lir_tile(k, h->v[0], 2, NULL); }
static bool tile_k4(LirKernel *k, const H *h) { return lir_tile(k, h->v[2], 4, NULL); }
static bool tile_both(LirKernel *k, const H *h)
{
	int ii, jj;
	return lir_tile(k, h->v[0], 2, &ii) && lir_tile(k, h->v[1], 4, &jj) && lir_unroll(k, jj, 2) && lir_hoist(k) > 0;
}

Test(loopir, tile)
{
	check_same(build_ew, tile_j3, 21);
	check_same(build_ew, tile_j7, 22);
	check_same(build_ew, tile_i2, 23);
	check_same(build_ew, tile_both, 24);
	check_same(build_red, tile_j3, 25);
	check_same(build_mm, tile_k4, 26);
	check_same(build_mm, tile_j3, 27);
	H h;
	LirKernel *k = build_ew(&h);
	int in;
	cr_assert(lir_tile(k, h.v[1], 3, &in));
	cr_assert(k->vars[h.v[1]].lo == 0 && k->vars[h.v[1]].hi == 6 && k->vars[h.v[1]].step == 3);
	cr_assert(k->vars[in].lo == 0 && k->vars[in].hi == 3 && k->vars[in].step == 1);
	lir_kernel_free(k);
}

static bool tile_j1(LirKernel *k, const H *h) { return lir_tile(k, h->v[1], 1, NULL); }
static bool tile_j8(LirKernel *k, const H *h) { return lir_tile(k, h->v[1], 8, NULL); }
static bool tile_i2s(LirKernel *k, const H *h) { return lir_tile(k, h->v[0], 2, NULL); }

Test(loopir, tile_refused)
{
	check_refused(build_ew, tile_j1);
	check_refused(build_ew, tile_j8);    /* more than the trip count */
	check_refused(build_vew, tile_j3);   /* a vector loop */
	check_refused(build_masked, tile_i2s);
	/* a loop of step 2 */
	LirKernel *k = lir_kernel_new("step2", 8, false);
	int y = lir_buffer(k, "y", 16, 4, 0);
	int i = lir_for(k, 0, 16, 2);
	st(k, y, AX1(k, 0, i, 1), lir_constf(k, 1));
	lir_end(k);
	char *before = print_str(k);
	cr_assert_not(lir_tile(k, i, 2, NULL));
	char *after = print_str(k);
	cr_assert_str_eq(before, after);
	free(before);
	free(after);
	lir_kernel_free(k);
}

/* ---- interchange -------------------------------------------------------- */
static bool ich_i(LirKernel *k, const H *h) { return lir_interchange(k, h->v[0]); }
static bool ich_j(LirKernel *k, const H *h) { return lir_interchange(k, h->v[1]); }
static bool ich_k(LirKernel *k, const H *h) { return lir_interchange(k, h->v[2]); }
static bool ich_tiled(LirKernel *k, const H *h)
{
	/* tile i by 2, then bring the tile loop out: i, it -> it, i */
	return lir_tile(k, h->v[0], 2, NULL) && lir_interchange(k, h->v[0]);
}

Test(loopir, interchange)
{
	check_same(build_ew, ich_i, 31);
	check_same(build_mm, ich_i, 32);
	check_same(build_mm_mem, ich_i, 33);
	check_same(build_mm_mem, ich_j, 34);  /* j, k: the order per element kept */
	check_same(build_ew, ich_tiled, 35);
	H h;
	LirKernel *k = build_ew(&h);
	cr_assert(lir_interchange(k, h.v[0]));
	cr_assert(k->body.s[0]->var == h.v[1] && k->body.s[0]->body.s[0]->var == h.v[0]);
	lir_kernel_free(k);
}

Test(loopir, interchange_refused)
{
	check_refused(build_mm, ich_j);         /* not a perfect nest */
	check_refused(build_mm, ich_k);         /* no loop inside */
	check_refused(build_nest_sum, ich_i);   /* one element summed in order */
	check_refused(build_nest_acc, ich_i);   /* an accumulator carried */
	check_refused(build_two, ich_i);        /* two loops */
	check_refused(build_vew, ich_i);        /* a vector loop */
}

/* ---- unroll and jam ----------------------------------------------------- */
static bool jam_i2(LirKernel *k, const H *h) { return lir_unroll_and_jam(k, h->v[0], 2); }
static bool jam_i3(LirKernel *k, const H *h) { return lir_unroll_and_jam(k, h->v[0], 3); }
static bool jam_i5(LirKernel *k, const H *h) { return lir_unroll_and_jam(k, h->v[0], 5); }
static bool jam_j2(LirKernel *k, const H *h) { return lir_unroll_and_jam(k, h->v[1], 2); }
static bool jam_j4(LirKernel *k, const H *h) { return lir_unroll_and_jam(k, h->v[1], 4); }
static bool jam_block(LirKernel *k, const H *h)
{
	/* register blocking by 3 with the k loop unrolled, then hoisted */
	return lir_unroll_and_jam(k, h->v[1], 3) && lir_unroll(k, h->v[2], 2) && lir_hoist(k) > 0;
}

Test(loopir, unroll_and_jam)
{
	check_same(build_red, jam_i2, 41);    /* a row's accumulator each */
	check_same(build_red, jam_i3, 42);
	check_same(build_red, jam_i5, 43);
	check_same(build_mm, jam_i2, 44);
	check_same(build_mm, jam_j2, 45);
	check_same(build_mm, jam_j4, 46);
	check_same(build_mm, jam_block, 47);
	check_same(build_mm_mem, jam_i2, 48);
	check_same(build_mm_mem, jam_j2, 49);
	check_same(build_ew, jam_i2, 50);
	/* the shape: accumulators before the one k loop, stores after */
	H h;
	LirKernel *k = build_mm(&h);
	cr_assert(lir_unroll_and_jam(k, h.v[1], 2));
	LirStmt *j = k->body.s[0]->body.s[0];
	cr_assert(j->var == h.v[1] && k->vars[h.v[1]].step == 2 && k->vars[h.v[1]].hi == MN);
	cr_assert(j->body.n == 5);
	cr_assert(j->body.s[0]->kind == LS_ASSIGN && j->body.s[1]->kind == LS_ASSIGN);
	cr_assert(j->body.s[0]->temp != j->body.s[1]->temp);
	cr_assert(j->body.s[2]->kind == LS_LOOP && j->body.s[2]->var == h.v[2] && j->body.s[2]->body.n == 2);
	cr_assert(j->body.s[3]->kind == LS_STORE && j->body.s[4]->kind == LS_STORE);
	cr_assert(verify(k, NULL));
	lir_kernel_free(k);
}

static bool jam_k2(LirKernel *k, const H *h) { return lir_unroll_and_jam(k, h->v[2], 2); }
static bool jam_i1(LirKernel *k, const H *h) { return lir_unroll_and_jam(k, h->v[0], 1); }
static bool jam_i6(LirKernel *k, const H *h) { return lir_unroll_and_jam(k, h->v[0], 6); }

Test(loopir, unroll_and_jam_refused)
{
	check_refused(build_mm, jam_k2);        /* no loop inside */
	check_refused(build_two, jam_i2);       /* two loops inside */
	check_refused(build_mm, jam_i1);
	check_refused(build_mm, jam_i6);        /* fewer iterations than the factor */
	check_refused(build_nest_acc, jam_i2);  /* an accumulator carried */
	check_refused(build_nest_sum, jam_i2);  /* one element in order */
	check_refused(build_vew, jam_j2);       /* a vector loop, not unit step */
}

/* ---- hoisting ----------------------------------------------------------- */
static bool hoist_any(LirKernel *k, const H *h) { (void)h; return lir_hoist(k) > 0; }
static bool hoist_after_unroll(LirKernel *k, const H *h)
{
	return lir_unroll(k, h->v[1], 3) && lir_hoist(k) > 0;
}

Test(loopir, hoist)
{
	check_same(build_ew, hoist_any, 61);
	check_same(build_vew, hoist_any, 62);
	check_same(build_red, hoist_any, 63);
	check_same(build_mm, hoist_any, 64);
	check_same(build_mm_mem, hoist_any, 65);
	check_same(build_ew, hoist_after_unroll, 66);
	check_same(build_vew, hoist_after_unroll, 67);

	/* ew: x and y share nothing, each gets one pointer before the j loop;
	 * the unrolled copies share them */
	H h;
	LirKernel *k = build_ew(&h);
	cr_assert(lir_unroll(k, h.v[1], 3));
	cr_assert_eq(lir_hoist(k), 2);
	LirStmt *i = k->body.s[0];
	cr_assert(i->body.n == 4);  /* two pointers, the j loop and its remainder */
	cr_assert(i->body.s[0]->kind == LS_ASSIGN && i->body.s[0]->e->kind == LX_ADDR);
	cr_assert(i->body.s[1]->kind == LS_ASSIGN && i->body.s[1]->e->kind == LX_ADDR);
	cr_assert(verify(k, NULL));
	lir_kernel_free(k);

	/* mm: A[i][k] before j (i's pointer), B[k][j] before k (j's), C[i][j]
	 * before j */
	k = build_mm(&h);
	cr_assert_eq(lir_hoist(k), 3);
	char *s = print_str(k);
	cr_assert_str_eq(s, "mm\n"
			    "  buffers: A[35], B[42], C[30]\n"
			    "  for i0 in [0, 5)\n"
			    "    %t1 = &A[7*i0]\n"
			    "    %t2 = &C[6*i0]\n"
			    "    for i1 in [0, 6)\n"
			    "      %t0 = 0\n"
			    "      %t3 = &B[i1]\n"
			    "      for i2 in [0, 7)\n"
			    "        %t0 = fma.v(A[7*i0 + i2]{%t1 + i2}, B[6*i2 + i1]{%t3 + 6*i2}, %t0)\n"
			    "      C[6*i0 + i1]{%t2 + i1} = %t0\n");
	free(s);
	cr_assert(verify(k, NULL));
	/* again: nothing left */
	cr_assert_eq(lir_hoist(k), 0);
	lir_kernel_free(k);
}

Test(loopir, hoist_nothing)
{
	H h;
	LirKernel *k = build_sum(&h);
	char *before = print_str(k);
	cr_assert_eq(lir_hoist(k), 0);
	char *after = print_str(k);
	cr_assert_str_eq(before, after);
	free(before);
	free(after);
	lir_kernel_free(k);
}

/* ---- vectorize ---------------------------------------------------------- */
static int64_t g_n;
static bool g_scalable;

/* y[r][i] = fma(t, x[r][i], round(t)) with t = x[r][i] * s[r] over 3 rows of n */
static LirKernel *build_vec(H *h)
{
	LirKernel *k = lir_kernel_new("vec", 8, g_scalable);
	int64_t n = g_n;
	int x = lir_buffer(k, "x", 3 * n, 4, 0), s = lir_buffer(k, "s", 3, 4, 1), y = lir_buffer(k, "y", 3 * n, 4, 2);
	int t = lir_temp(k, SORT_V);
	int r = lir_for(k, 0, 3, 1), i = lir_for(k, 0, n, 1);
	lir_assign(k, t, lir_op(k, SEL_MUL_V, ld(k, x, AX2(k, 0, r, n, i, 1)), ld(k, s, AX1(k, 0, r, 1)), NULL));
	st(k, y, AX2(k, 0, r, n, i, 1),
	   lir_op(k, SEL_FMA_V, lir_ref(k, t), ld(k, x, AX2(k, 0, r, n, i, 1)), lir_op(k, SEL_ROUND_V, lir_ref(k, t), NULL, NULL)));
	lir_end(k);
	lir_end(k);
	h->v[0] = r, h->v[1] = i;
	return k;
}

static bool vec_scalar(LirKernel *k, const H *h) { return lir_vectorize(k, h->v[1], LIR_TAIL_SCALAR); }
static bool vec_masked(LirKernel *k, const H *h) { return lir_vectorize(k, h->v[1], LIR_TAIL_MASKED); }
static bool vec_unroll_hoist(LirKernel *k, const H *h)
{
	return lir_vectorize(k, h->v[1], LIR_TAIL_MASKED) && lir_unroll(k, h->v[1], 2) && lir_hoist(k) > 0;
}
static bool vec_jam(LirKernel *k, const H *h)
{
	/* rows jammed by 2, then the fused loop vectorized (a vector loop and
	 * its remainder make two loops: jam first) */
	return lir_unroll_and_jam(k, h->v[0], 2) && lir_vectorize(k, h->v[1], LIR_TAIL_MASKED) && lir_hoist(k) > 0;
}

/* the kinds of the loops in r's body */
static void loop_kinds(const LirKernel *k, LirLoopKind *kinds, int *n)
{
	const LirBlock *b = &k->body.s[0]->body;
	*n = 0;
	for (int i = 0; i < b->n; i++)
		if (b->s[i]->kind == LS_LOOP)
			kinds[(*n)++] = k->vars[b->s[i]->var].kind;
}

Test(loopir, vectorize_fixed)
{
	int64_t ns[] = {0, 5, 8, 21};
	for (int t = 0; t < 4; t++) {
		g_n = ns[t];
		g_scalable = false;
		check_same(build_vec, vec_scalar, 100 + (uint32_t)t);
		check_same(build_vec, vec_masked, 200 + (uint32_t)t);
		for (int m = 0; m < 2; m++) {
			H h;
			LirKernel *k = build_vec(&h);
			cr_assert(lir_vectorize(k, h.v[1], m ? LIR_TAIL_MASKED : LIR_TAIL_SCALAR));
			LirLoopKind kinds[4];
			int nl;
			loop_kinds(k, kinds, &nl);
			int whole = (int)(g_n / 8), rest = (int)(g_n % 8);
			LirLoopKind tail = m ? LIR_LOOP_MASKED : LIR_LOOP_SCALAR;
			if (rest == 0) {
				cr_assert(nl == 1 && kinds[0] == LIR_LOOP_VECTOR, "n %d", (int)g_n);
				cr_assert(k->vars[h.v[1]].hi == 8 * whole);
			} else if (whole == 0) {
				cr_assert(nl == 1 && kinds[0] == tail, "n %d", (int)g_n);
			} else {
				cr_assert(nl == 2 && kinds[0] == LIR_LOOP_VECTOR && kinds[1] == tail, "n %d", (int)g_n);
				cr_assert(k->vars[h.v[1]].hi == 8 * whole && k->vars[h.v[1]].step == 8);
			}
			lir_kernel_free(k);
		}
	}
	g_n = 21;
	check_same(build_vec, vec_unroll_hoist, 300);
	check_same(build_vec, vec_jam, 301);
	g_n = 37;
	check_same(build_vec, vec_unroll_hoist, 302);
}

Test(loopir, vectorize_scalable)
{
	int64_t ns[] = {0, 5, 8, 21};
	for (int t = 0; t < 4; t++) {
		g_n = ns[t];
		g_scalable = true;
		check_same(build_vec, vec_scalar, 400 + (uint32_t)t);
		H h;
		LirKernel *k = build_vec(&h);
		cr_assert(lir_vectorize(k, h.v[1], LIR_TAIL_SCALAR));
		cr_assert(k->vars[h.v[1]].kind == LIR_LOOP_STRIP);
		/* strips are not unrolled */
		char *before = print_str(k);
		cr_assert_not(lir_unroll(k, h.v[1], 2));
		char *after = print_str(k);
		cr_assert_str_eq(before, after);
		free(before);
		free(after);
		lir_kernel_free(k);
	}
	g_scalable = false;
}

static bool vec_i(LirKernel *k, const H *h) { return lir_vectorize(k, h->v[0], LIR_TAIL_SCALAR); }
static bool vec_j(LirKernel *k, const H *h) { return lir_vectorize(k, h->v[1], LIR_TAIL_MASKED); }

static bool vec_j_scalar(LirKernel *k, const H *h) { return lir_vectorize(k, h->v[1], LIR_TAIL_SCALAR); }

Test(loopir, vectorize_refused)
{
	check_refused(build_sum, vec_i);   /* a value read after the loop */
	check_refused(build_ew, vec_i);    /* x[C i + j] moves by C along i */
	check_refused(build_vew, vec_j);   /* already vectors */
}

/* An outer loop vectorized: C = A B with j in vectors, the k loop inside
 * working on the lanes (each lane the scalar fma chain: the same bits). */
Test(loopir, vectorize_outer)
{
	check_same(build_mm, vec_j, 601);
	check_same(build_mm, vec_j_scalar, 602);
}

/* m[r] = max_i x[r, i] and s[r] = sum_i x[r, i]: accumulators carried, in
 * vectors reduced after the loop, the remainder going on (a scalar loop,
 * or one masked vector folding its active lanes in) */
enum { QN = 29 };
static int64_t g_qn = QN;
static LirKernel *build_rowred(H *h)
{
	LirKernel *k = lir_kernel_new("rowred", 8, g_scalable);
	int x = lir_buffer(k, "x", RR * g_qn, 4, 0), m = lir_buffer(k, "m", RR, 4, 1), s = lir_buffer(k, "s", RR, 4, 2);
	int mx = lir_temp(k, SORT_V), sm = lir_temp(k, SORT_V);
	int r = lir_for(k, 0, RR, 1);
	lir_assign(k, mx, lir_constf(k, -INFINITY));
	lir_assign(k, sm, lir_constf(k, 0));
	int i = lir_for(k, 0, g_qn, 1);
	lir_assign(k, mx, lir_op(k, SEL_MAX_V, lir_ref(k, mx), ld(k, x, AX2(k, 0, r, g_qn, i, 1)), NULL));
	lir_assign(k, sm, lir_op(k, SEL_ADD_V, ld(k, x, AX2(k, 0, r, g_qn, i, 1)), lir_ref(k, sm), NULL));
	lir_end(k);
	st(k, m, AX1(k, 0, r, 1), lir_ref(k, mx));
	st(k, s, AX1(k, 0, r, 1), lir_ref(k, sm));
	lir_end(k);
	h->v[0] = r, h->v[1] = i;
	return k;
}

Test(loopir, vectorize_reduction)
{
	int64_t ns[] = {5, 8, 29};
	for (int sc = 0; sc < 2; sc++)
		for (int tm = 0; tm < 6; tm++) {
			int t = tm % 3;
			LirTail tail = tm < 3 ? LIR_TAIL_SCALAR : LIR_TAIL_MASKED;
			g_qn = ns[t];
			g_scalable = sc;
			H h0, h1;
			LirKernel *a = build_rowred(&h0), *b = build_rowred(&h1);
			cr_assert(lir_vectorize(b, h1.v[1], tail), "n %d", (int)g_qn);
			cr_assert(verify(b, NULL));
			cr_assert_not(lir_vectorize(a, h0.v[0], LIR_TAIL_SCALAR)); /* x moves by n along r */
			Data da = data_new(a, 700 + (uint32_t)t), db = data_new(b, 700 + (uint32_t)t);
			cr_assert(lir_eval(a, da.p));
			cr_assert(lir_eval(b, db.p));
			/* the max in any order is the max; the sum reassociated */
			cr_assert(memcmp(da.p[1], db.p[1], da.bytes[1]) == 0, "max differs (n %d)", (int)g_qn);
			for (int r = 0; r < RR; r++) {
				float p = ((float *)da.p[2])[r], q = ((float *)db.p[2])[r];
				cr_assert(fabsf(p - q) <= 1e-5f * (float)g_qn * 6.0f, "sum %g vs %g (n %d)", p, q, (int)g_qn);
			}
			if (!sc && g_qn % 8) { /* a vector loop, the fold, the remainder */
				LirLoopKind kinds[4], rk = tail == LIR_TAIL_MASKED ? LIR_LOOP_MASKED : LIR_LOOP_SCALAR;
				int nl;
				loop_kinds(b, kinds, &nl);
				cr_assert(g_qn < 8 ? nl == 1 && (tail == LIR_TAIL_SCALAR || kinds[0] == LIR_LOOP_MASKED)
						   : nl == 2 && kinds[0] == LIR_LOOP_VECTOR && kinds[1] == rk);
			}
			data_free(&da);
			data_free(&db);
			lir_kernel_free(a);
			lir_kernel_free(b);
		}
	g_scalable = false;
	g_qn = QN;
}

/* ---- transforms of loops that read their variable, and after hoisting --- */
/* n[i] = i * 3 + m[i]; y[i] = cvt(i) */
static LirKernel *build_idx(H *h)
{
	LirKernel *k = lir_kernel_new("idx", 8, false);
	int n = lir_buffer(k, "n", 11, 8, 0), m = lir_buffer(k, "m", 11, 8, 1), y = lir_buffer(k, "y", 11, 4, 2);
	int t = lir_temp(k, SORT_I);
	int i = lir_for(k, 0, 11, 1);
	lir_assign(k, t, lir_op(k, SEL_MUL_I, lir_index(k, i), lir_consti(k, 3), NULL));
	st(k, n, AX1(k, 0, i, 1), lir_op(k, SEL_ADD_I, lir_ref(k, t), ld(k, m, AX1(k, 0, i, 1)), NULL));
	st(k, y, AX1(k, 0, i, 1), lir_op(k, SEL_CVT_I_F, lir_index(k, i), NULL, NULL));
	lir_end(k);
	h->v[0] = i;
	return k;
}

static bool idx_tile_unroll(LirKernel *k, const H *h)
{
	int in;
	return lir_tile(k, h->v[0], 4, &in) && lir_unroll(k, in, 2) && lir_unroll(k, h->v[0], 2);
}
static bool hoist_unroll_j2(LirKernel *k, const H *h) { return lir_hoist(k) > 0 && lir_unroll(k, h->v[1], 2); }
static bool hoist_jam_j4(LirKernel *k, const H *h) { return lir_hoist(k) > 0 && lir_unroll_and_jam(k, h->v[1], 4); }
static bool hoist_tile_j4(LirKernel *k, const H *h) { return lir_hoist(k) > 0 && lir_tile(k, h->v[1], 4, NULL); }
static bool hoist_unroll_i2(LirKernel *k, const H *h) { return lir_hoist(k) > 0 && lir_unroll(k, h->v[0], 2); }

Test(loopir, index_and_hoisted)
{
	check_same(build_idx, unroll_i4, 501);
	check_same(build_idx, tile_i2, 502);
	check_same(build_idx, idx_tile_unroll, 503);
	check_same(build_mm, hoist_unroll_j2, 504);
	check_same(build_mm, hoist_jam_j4, 505);
	check_same(build_mm, hoist_tile_j4, 506);
	check_same(build_mm, hoist_unroll_i2, 507);
	check_same(build_vew, hoist_unroll_i2, 508);
}

/* ---- strength reduction -------------------------------------------------- */
static bool sr_k(LirKernel *k, const H *h) { return lir_strength_reduce(k, h->v[2]) == 2; }
static bool sr_j(LirKernel *k, const H *h) { return lir_strength_reduce(k, h->v[1]) > 0; }
static bool vec_j_sr_k(LirKernel *k, const H *h)
{
	return lir_vectorize(k, h->v[1], LIR_TAIL_SCALAR) && lir_strength_reduce(k, h->v[2]) == 2;
}
static bool jam_i_sr_k(LirKernel *k, const H *h)
{
	return lir_unroll_and_jam(k, h->v[0], 2) && lir_strength_reduce(k, h->v[2]) > 0 && lir_hoist(k) >= 0;
}

/* The pointers walk the k loop (A by 1, B by a row), the bits stay */
Test(loopir, strength_reduce)
{
	check_same(build_mm, sr_k, 801);
	check_same(build_mm, sr_j, 802);
	check_same(build_mm, vec_j_sr_k, 803);
	check_same(build_mm, jam_i_sr_k, 804);
	/* printed: a pointer per operand set before the loop, moved at its end */
	H h;
	LirKernel *k = build_mm(&h);
	cr_assert(lir_strength_reduce(k, h.v[2]) == 2);
	char *s = print_str(k);
	cr_assert(strstr(s, "= &A[7*i0]\n") && strstr(s, "= &B[i1]\n"), "%s", s);
	cr_assert(strstr(s, " + 1 of A\n") && strstr(s, " + 6 of B\n"), "%s", s);
	free(s);
	/* a loop whose accesses do not move along it: nothing to do */
	cr_assert(lir_strength_reduce(k, h.v[0]) == 0);
	lir_kernel_free(k);
}

/* An f temporary holds one element: in a vector loop it may not take a
 * value whose lanes differ (the lowering would keep one lane; regression:
 * logsoftmax across the inner axis), though a reduction of them it may. */
Test(loopir, verify_f_temp_of_lanes)
{
	LirKernel *k = lir_kernel_new("flanes", 8, false);
	int x = lir_buffer(k, "x", 16, 4, 0), y = lir_buffer(k, "y", 16, 4, 1);
	int f = lir_temp(k, SORT_F), g = lir_temp(k, SORT_F), v = lir_temp(k, SORT_V);
	int i = lir_for(k, 0, 16, 8);
	k->vars[i].kind = LIR_LOOP_VECTOR;
	lir_assign(k, v, lir_op(k, SEL_ADD_V, ld(k, x, AX1(k, 0, i, 1)), lir_constf(k, 1), NULL));
	lir_assign(k, g, lir_op(k, SEL_REDSUM_V, lir_ref(k, v), NULL, NULL)); /* one value: fine */
	lir_assign(k, f, lir_op(k, SEL_MUL_V, lir_ref(k, v), lir_ref(k, g), NULL));
	st(k, y, AX1(k, 0, i, 1), lir_ref(k, f));
	lir_end(k);
	cr_assert(verify(k, "%t0 (f) assigned a value whose lanes differ along vector variable i0"));
	lir_kernel_free(k);
}

/* ---- prefetch ----------------------------------------------------------- */
/* build_mm with the next row of A prefetched at each k */
static LirKernel *build_mm_pf(H *h)
{
	return build_mm_with(h, "mm_pf", true);
}

static bool unroll_k3_sr(LirKernel *k, const H *h)
{
	return lir_unroll(k, h->v[2], 3) && lir_strength_reduce(k, h->v[2]) == 2 && lir_hoist(k) >= 0;
}

/* A prefetch changes no value: the kernel computes what it does without
 * one, before and after the transforms (which copy, move and strength-
 * reduce its address like a store's); it prints; it may not move along a
 * vector loop (one line, not one a lane), nor use a variable outside its
 * loop. */
Test(loopir, prefetch)
{
	H h0, h1;
	LirKernel *a = build_mm(&h0), *b = build_mm_pf(&h1);
	cr_assert(verify(b, NULL));
	Data da = data_new(a, 901), db = data_new(b, 901);
	cr_assert(lir_eval(a, da.p) && lir_eval(b, db.p));
	for (int i = 0; i < da.n; i++)
		cr_assert(memcmp(da.p[i], db.p[i], da.bytes[i]) == 0, "buffer %s differs with a prefetch", a->bufs[i].name);
	data_free(&da);
	data_free(&db);
	char *s = print_str(b);
	cr_assert(strstr(s, "prefetch A[7*i0 + i2 + 7]\n"), "%s", s);
	free(s);
	lir_kernel_free(a);
	check_same(build_mm_pf, sr_k, 902);
	check_same(build_mm_pf, unroll_k3_sr, 903);
	check_same(build_mm_pf, vec_j_sr_k, 904);
	check_same(build_mm_pf, jam_i_sr_k, 905);
	/* strength-reduced: through the pointer of the load of A it is 7
	 * elements from */
	cr_assert(lir_strength_reduce(b, h1.v[2]) == 2);
	s = print_str(b);
	cr_assert(strstr(s, "prefetch A[7*i0 + i2 + 7]{%t1 + 7}\n"), "%s", s);
	free(s);
	lir_kernel_free(b);

	/* along a vector loop: rejected */
	LirKernel *k = lir_kernel_new("pfv", 8, false);
	int x = lir_buffer(k, "x", 16, 4, 0);
	int i = lir_for(k, 0, 16, 8);
	k->vars[i].kind = LIR_LOOP_VECTOR;
	LirAffine pa = AX1(k, 0, i, 1);
	lir_prefetch(k, x, &pa);
	lir_end(k);
	cr_assert(verify(k, "a prefetch of x moves along vector variable i0"));
	lir_kernel_free(k);
	/* a variable outside its loop: rejected */
	k = lir_kernel_new("pfs", 8, false);
	x = lir_buffer(k, "x", 16, 4, 0);
	i = lir_for(k, 0, 16, 1);
	lir_end(k);
	pa = AX1(k, 0, i, 1);
	lir_prefetch(k, x, &pa);
	cr_assert(verify(k, "a prefetch of x: its index uses variable"));
	lir_kernel_free(k);
}
