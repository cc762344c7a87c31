/* The backend's lists have no fixed size.  The register allocator, on a
 * test-only target (tests/md/toy-saved.md): every callee-saved register the
 * code uses is stored at entry and loaded back before the return, however
 * many (linscan.c once kept at most 64 and silently left the rest unsaved);
 * an instruction may read any number of registers through a nested form
 * (linscan.c once listed them in an array of 64, and wrote past it).
 * Instruction selection reports every kind of tree it cannot cover. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mir.h"
#include "test_util.h"

/* An address r + off (the toy's addr form). */
static BursNode *at(MFunc *f, int r, int64_t off)
{
	return sel_op(f, SEL_ADD_I, sel_reg(f, r), sel_consti(f, off), NULL);
}

/* Registers named in a line of assembly after its mnemonic, as "q5", "r12". */
static int regs_of(const char *line, char out[][8], int max)
{
	int n = 0;
	for (const char *s = line; *s; s++) {
		if ((*s == 'q' || *s == 'r' || *s == 'f') && s[1] >= '0' && s[1] <= '9' && (s == line || !isalnum((unsigned char)s[-1]))) {
			int len = 1;
			while (s[len] >= '0' && s[len] <= '9')
				len++;
			if (n < max && len < 8) {
				memcpy(out[n], s, (size_t)len);
				out[n++][len] = 0;
			}
			s += len - 1;
		}
	}
	return n;
}

static bool callee_saved(const Target *t, const char *reg)
{
	for (int c = 0; c < t->nregclasses; c++)
		for (int r = 0; r < t->regclasses[c].nregs; r++)
			if (strcmp(t->regclasses[c].regs[r], reg) == 0)
				return t->regclasses[c].callee_saved[r];
	return false;
}

/* A function on the named target, its first argument (r0) in vreg *arg. */
static MFunc *start(const char *target, int *arg)
{
	const Target *t = target_lookup(target);
	cr_assert_not_null(t, "no target %s", target);
	MFunc *f = mfunc_new(t, "f");
	*arg = mfunc_vreg(f, target_class_for(t, SORT_I));
	f->vregs[*arg].preg = 0;
	return f;
}

/* Return, select, allocate and emit f: its assembly text (to free). */
static char *finish(MFunc *f)
{
	sel_effect(f, sel_op(f, SEL_RET, NULL, NULL, NULL));
	Diag d;
	diag_init(&d);
	cr_assert(isel_function(f, &d));
	cr_assert(regalloc_function(f, &d));
	cr_assert_eq(d.nerrors, 0);
	diag_free(&d);
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	emit_function(m, f);
	fclose(m);
	return text;
}

Test(regalloc, saves_every_callee_saved_register)
{
	int a;
	MFunc *f = start("toy-saved", &a);
	const Target *t = f->t;
	int icls = target_class_for(t, SORT_I), vcls = target_class_for(t, SORT_V);
	/* 60 vectors and 12 integers live at once: with r1-r3 the only
	 * caller-saved registers free, 60 q's and 9 r's are callee-saved */
	enum { NV = 60, NI = 12 };
	int v[NV], x[NI];
	for (int i = 0; i < NV; i++) {
		v[i] = mfunc_vreg(f, vcls);
		sel_assign(f, v[i], sel_op(f, SEL_LOAD_V, at(f, a, 16 * i), NULL, NULL));
	}
	for (int i = 0; i < NI; i++) {
		x[i] = mfunc_vreg(f, icls);
		sel_assign(f, x[i], sel_op(f, SEL_LOAD_I, at(f, a, 1024 + 8 * i), NULL, NULL));
	}
	for (int i = NV - 1; i >= 0; i--)
		sel_effect(f, sel_op(f, SEL_STORE_V, at(f, a, 16 * i), sel_reg(f, v[i]), NULL));
	for (int i = NI - 1; i >= 0; i--)
		sel_effect(f, sel_op(f, SEL_STORE_I, at(f, a, 1024 + 8 * i), sel_reg(f, x[i]), NULL));
	char *text = finish(f);

	/* callee-saved registers: used by the body (what reads or writes
	 * [r0+...]), stored to the frame ([r63+...]) before it, loaded back
	 * after it */
	enum { MAXR = 256 };
	static char used[MAXR][8], saved[MAXR][8], restored[MAXR][8];
	int nused = 0, nsaved = 0, nrestored = 0, phase = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char r[4][8];
		int n = regs_of(line, r, 4);
		bool frame = strstr(line, "[r63+") != NULL, body = strstr(line, "[r0+") != NULL;
		if (body)
			phase = 1;
		else if (phase == 1 && frame)
			phase = 2;
		if (!frame && !body)
			continue;
		cr_assert(n >= 1, "no register in '%s'", line);
		if (!callee_saved(t, r[0]))
			continue;
		char (*list)[8] = body ? used : phase == 0 ? saved : restored;
		int *cnt = body ? &nused : phase == 0 ? &nsaved : &nrestored;
		bool dup = false;
		for (int k = 0; k < *cnt; k++)
			dup |= strcmp(list[k], r[0]) == 0;
		cr_assert(*cnt < MAXR);
		if (!dup)
			strcpy(list[(*cnt)++], r[0]);
	}
	cr_assert_eq(nused, NV + NI - 3, "%d callee-saved registers used", nused);
	cr_assert_eq(nsaved, nused, "%d of the %d callee-saved registers used are saved", nsaved, nused);
	cr_assert_eq(nrestored, nused, "%d of the %d callee-saved registers used are restored", nrestored, nused);
	for (int i = 0; i < nused; i++) {
		bool s = false, r = false;
		for (int k = 0; k < nsaved; k++)
			s |= strcmp(saved[k], used[i]) == 0;
		for (int k = 0; k < nrestored; k++)
			r |= strcmp(restored[k], used[i]) == 0;
		cr_assert(s && r, "%s: used, %s, %s", used[i], s ? "saved" : "not saved", r ? "restored" : "not restored");
	}
	free(text);
	mfunc_free(f);
}

Test(regalloc, instruction_reading_70_registers)
{
	int a;
	MFunc *f = start("toy-saved", &a);
	int icls = target_class_for(f->t, SORT_I);
	/* the load's address x0 + x1 + ... + x34 + x0 + ... + x34: one lds
	 * whose nested form reads 70 registers (35 values, each twice) */
	enum { NX = 35 };
	int x[NX];
	for (int i = 0; i < NX; i++) {
		x[i] = mfunc_vreg(f, icls);
		sel_assign(f, x[i], sel_op(f, SEL_LOAD_I, at(f, a, 8 * i), NULL, NULL));
	}
	BursNode *sum = sel_reg(f, x[NX - 1]);
	for (int k = 2 * NX - 2; k >= 0; k--)
		sum = sel_op(f, SEL_ADD_I, sel_reg(f, x[k % NX]), sum, NULL);
	int y = mfunc_vreg(f, icls);
	sel_assign(f, y, sel_op(f, SEL_LOAD_I, sum, NULL, NULL));
	sel_effect(f, sel_op(f, SEL_STORE_I, at(f, a, 0), sel_reg(f, y), NULL));
	char *text = finish(f);
	const char *lds = strstr(text, "lds ");
	cr_assert_not_null(lds, "no lds in:\n%s", text);
	char line[4096];
	size_t n = strcspn(lds, "\n");
	cr_assert(n < sizeof line);
	memcpy(line, lds, n);
	line[n] = 0;
	char r[80][8];
	int nr = regs_of(line, r, 80);
	cr_assert_eq(nr, 1 + 2 * NX, "%d registers in '%s'", nr, line);
	/* each x register appears twice in the address, 35 apart */
	for (int k = 0; k < NX; k++)
		cr_assert_str_eq(r[1 + k], r[1 + NX + k], "term %d: %s, term %d: %s", k, r[1 + k], NX + k, r[1 + NX + k]);
	free(text);
	mfunc_free(f);
}

/* Instruction selection reports each (operation, goal) no pattern covers,
 * however many: each operation of the vocabulary over registers, as a
 * value of each of the toy's three classes (most of them uncovered);
 * isel.c once counted at most 64 kinds and left the rest out of its
 * errors. */
Test(isel, every_uncovered_kind_reported)
{
	int a;
	MFunc *f = start("toy", &a);
	const Target *t = f->t;
	int cls[SORT_COUNT];
	for (int s = 0; s < SORT_COUNT; s++)
		cls[s] = s == SORT_I || s == SORT_F || s == SORT_V ? target_class_for(t, (Sort)s) : -1;
	int expect = 0;
	for (int op = 0; op < SEL_COUNT; op++) {
		const SelInfo *si = &sel_info[op];
		if (si->nkids == 0 || si->result >= SORT_COUNT || cls[si->result] < 0)
			continue;
		bool ok = true;
		for (int k = 0; k < si->nkids; k++)
			ok &= cls[si->kid[k]] >= 0;
		if (!ok)
			continue;
		for (Sort goal = SORT_I; goal <= SORT_V; goal++) {
			BursNode *kid[3] = {NULL, NULL, NULL};
			for (int k = 0; k < si->nkids; k++)
				kid[k] = sel_reg(f, mfunc_vreg(f, cls[si->kid[k]]));
			BursNode *tree = sel_op(f, (SelOp)op, kid[0], kid[1], kid[2]);
			if (isel_cost(t, tree, cls[goal]) >= BURS_INF)
				expect++;
			sel_assign(f, mfunc_vreg(f, cls[goal]), tree);
		}
	}
	cr_assert_gt(expect, 64, "only %d uncovered kinds: the test needs more than 64", expect);
	Diag d;
	diag_init(&d);
	cr_assert_not(isel_function(f, &d));
	cr_assert_eq(d.nerrors, expect, "%d errors for %d uncovered kinds", d.nerrors, expect);
	diag_free(&d);
	mfunc_free(f);
}
