/* Instruction selection: each statement's tree is labelled with the
 * target's BURS grammar and reduced; every rule that emits becomes an
 * instruction (or, for a form, an operand such as an addressing mode).
 * Tied operands get a copy into the result first. */
#include <stdlib.h>
#include <string.h>

#include "mir.h"
#include "util.h"

typedef struct {
	MFunc *f;
	BursNode *root;
	int dest;
	int label;
	MInst *out;
	int nout, capout;
	bool failed;
	int uncovered_op, uncovered_goal; /* after "no pattern covers it" */
} Ctx;

static void push(Ctx *c, MInst mi)
{
	if (c->nout == c->capout) {
		c->capout = c->capout ? 2 * c->capout : 16;
		c->out = xrealloc(c->out, (size_t)c->capout * sizeof *c->out);
	}
	c->out[c->nout++] = mi;
}

static int new_form(MFunc *f)
{
	if (f->nforms == f->capforms) {
		f->capforms = f->capforms ? 2 * f->capforms : 64;
		f->forms = xrealloc(f->forms, (size_t)f->capforms * sizeof *f->forms);
	}
	memset(&f->forms[f->nforms], 0, sizeof f->forms[0]);
	return f->nforms++;
}

static int class_of_nt(const Target *t, int nt)
{
	for (int i = 0; i < t->nregclasses; i++)
		if (t->regclasses[i].nt == nt)
			return i;
	return -1;
}

static void visit(const BursGrammar *g, int r, BursNode *n, void *vctx)
{
	Ctx *c = vctx;
	MFunc *f = c->f;
	const Target *t = f->t;
	const BursRule *br = &g->rules[r];
	if (br->origin < 0 || !br->emits)
		return;
	const RuleInfo *ri = &t->rules[br->origin];
	Opnd ops[MI_MAXOPS] = {{0}};
	if (ri->nops > MI_MAXOPS) {
		c->failed = true;
		return;
	}
	for (int k = 0; k < ri->nops; k++) {
		const OperandInfo *oi = &ri->ops[k];
		BursNode *m = n;
		for (int d = 0; d < oi->depth; d++)
			m = m->kid[oi->path[d]];
		if (oi->nt < 0) {
			if (m->op == SEL_CONST_F)
				ops[k] = (Opnd){.kind = OPND_FIMM, .fimm = m->fval};
			else if (m->op == SEL_ADDR_SYM || m->op == SEL_ADDR_FAR)
				ops[k] = (Opnd){.kind = OPND_SYM, .sym = m->sym};
			else
				ops[k] = (Opnd){.kind = OPND_IMM, .imm = m->ival};
		} else if (class_of_nt(t, oi->nt) >= 0) {
			ops[k] = (Opnd){.kind = OPND_REG, .vreg = m->vreg};
		} else {
			ops[k] = (Opnd){.kind = OPND_FORM, .form = m->form};
		}
	}
	if (ri->is_form) {
		int fi = new_form(f);
		f->forms[fi].rule = br->origin;
		memcpy(f->forms[fi].ops, ops, sizeof ops);
		n->form = fi;
		return;
	}
	MInst mi = {.kind = MI_RULE, .rule = br->origin, .def = -1, .label = -1};
	if (ri->result) {
		int cls = class_of_nt(t, ri->result_nt);
		const char *other = !ri->tied[0] ? NULL
				    : strcmp(ri->tied[0], ri->result) == 0 ? ri->tied[1]
				    : strcmp(ri->tied[1], ri->result) == 0 ? ri->tied[0] : NULL;
		bool into_dest = n == c->root && c->dest >= 0 && f->vregs[c->dest].cls == cls;
		/* A tied result is first a copy of its tied operand: it cannot be
		 * the destination when another operand reads the destination (t =
		 * select(c, a, t), t = min(a, t)): the copy would overwrite it
		 * before it is read.  Then the result goes to a new register and
		 * a move to the destination follows (select_tree). */
		for (int k = 0; into_dest && other && k < ri->nops; k++)
			if (ops[k].kind == OPND_REG && ops[k].vreg == c->dest && strcmp(ri->ops[k].name, other) != 0)
				into_dest = false;
		mi.def = into_dest ? c->dest : mfunc_vreg(f, cls);
		n->vreg = mi.def;
		if (ri->tied[0]) {
			for (int k = 0; other && k < ri->nops; k++)
				if (strcmp(ri->ops[k].name, other) == 0 && ops[k].kind == OPND_REG) {
					if (ops[k].vreg != mi.def)
						push(c, (MInst){.kind = MI_MOVE, .def = mi.def, .use = ops[k].vreg, .label = -1});
					ops[k].vreg = mi.def;
				}
		}
	}
	memcpy(mi.ops, ops, sizeof ops);
	if (n == c->root)
		mi.label = c->label;
	push(c, mi);
}

int32_t isel_cost(const Target *t, BursNode *tree, int cls)
{
	int goal = cls >= 0 ? t->regclasses[cls].nt : 0;
	burs_label(&t->grammar, tree);
	int32_t c = burs_cost(tree, goal);
	burs_unlabel(tree);
	return c;
}

/* report_uncovered false: a tree no pattern covers is left to the caller
 * (c->uncovered_op) to report. */
static bool select_tree(MFunc *f, BursNode *tree, int dest, int label, Ctx *c, Diag *d, bool report_uncovered)
{
	const Target *t = f->t;
	int goal = 0; /* stmt */
	if (dest >= 0)
		goal = t->regclasses[f->vregs[dest].cls].nt;
	burs_label(&t->grammar, tree);
	*c = (Ctx){.f = f, .root = tree, .dest = dest, .label = label, .uncovered_op = -1};
	if (burs_cost(tree, goal) >= BURS_INF) {
		c->uncovered_op = tree->op;
		c->uncovered_goal = goal;
		if (report_uncovered)
			diag_error(d, loc_at(NULL, 0, 0), "%s: cannot select %s (as %s) on %s: no pattern covers it", f->name,
				   sel_info[tree->op].name, t->grammar.nt_names[goal], t->name);
		return false;
	}
	burs_reduce(&t->grammar, tree, goal, visit, c);
	if (c->failed) {
		diag_error(d, loc_at(NULL, 0, 0), "%s: a rule has more than %d operands", f->name, MI_MAXOPS);
		return false;
	}
	if (dest >= 0 && tree->vreg != dest)
		push(c, (MInst){.kind = MI_MOVE, .def = dest, .use = tree->vreg, .label = -1});
	return true;
}

static void append(MFunc *f, const MInst *src, int n, int at)
{
	while (f->ninsts + n > f->capinsts) {
		f->capinsts = f->capinsts ? 2 * f->capinsts : 256;
		f->insts = xrealloc(f->insts, (size_t)f->capinsts * sizeof *f->insts);
	}
	memmove(f->insts + at + n, f->insts + at, (size_t)(f->ninsts - at) * sizeof *f->insts);
	memcpy(f->insts + at, src, (size_t)n * sizeof *src);
	f->ninsts += n;
}

int isel_insert(MFunc *f, int at, BursNode *tree, int dest, Diag *d)
{
	Ctx c;
	if (!select_tree(f, tree, dest, -1, &c, d, true)) {
		free(c.out);
		return -1;
	}
	append(f, c.out, c.nout, at);
	free(c.out);
	return c.nout;
}

bool isel_function(MFunc *f, Diag *d)
{
	bool ok = true;
	/* trees no pattern covers, reported once per (operator, goal) with a count */
	struct Uncovered {
		int op, goal, count;
	} *unc = NULL;
	int nunc = 0, capunc = 0;
	for (int i = 0; i < f->nstmts; i++) {
		const SelStmt *s = &f->stmts[i];
		if (!s->tree) {
			MInst mi = {.kind = MI_LABEL, .def = -1, .label = s->label};
			append(f, &mi, 1, f->ninsts);
			continue;
		}
		Ctx c;
		f->lmul = s->lmul; /* the temporaries it creates are groups of the same size */
		if (!select_tree(f, s->tree, s->dest, s->label, &c, d, false)) {
			ok = false;
			if (c.uncovered_op >= 0) {
				int k = 0;
				while (k < nunc && !(unc[k].op == c.uncovered_op && unc[k].goal == c.uncovered_goal))
					k++;
				if (k == nunc) {
					if (nunc == capunc)
						unc = xrealloc(unc, (size_t)(capunc = capunc ? 2 * capunc : 16) * sizeof *unc);
					unc[nunc++] = (struct Uncovered){c.uncovered_op, c.uncovered_goal, 0};
				}
				unc[k].count++;
			}
		} else
			append(f, c.out, c.nout, f->ninsts);
		free(c.out);
		burs_unlabel(s->tree);
	}
	for (int k = 0; k < nunc; k++)
		diag_error(d, loc_at(NULL, 0, 0), "%s: cannot select %s (as %s) on %s: no pattern covers it (%d tree%s)",
			   f->name, sel_info[unc[k].op].name, f->t->grammar.nt_names[unc[k].goal], f->t->name, unc[k].count,
			   unc[k].count == 1 ? "" : "s");
	free(unc);
	return ok;
}
