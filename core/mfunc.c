/* MFunc: virtual registers, selection-tree construction and a dump. */
#include <stdlib.h>
#include <string.h>

#include "mir.h"
#include "util.h"

#define GROW(arr, n, cap)                                                  \
	do {                                                               \
		if ((n) == (cap)) {                                        \
			(cap) = (cap) ? 2 * (cap) : 64;                    \
			(arr) = xrealloc((arr), (size_t)(cap) * sizeof *(arr)); \
		}                                                          \
	} while (0)

MFunc *mfunc_new(const Target *t, const char *name)
{
	MFunc *f = xcalloc(1, sizeof *f);
	f->t = t;
	f->name = name;
	f->sp = -1;
	f->lmul = 1;
	return f;
}

void mfunc_free_trees(MFunc *f)
{
	for (int i = 0; i < f->nnodes; i++) {
		free(f->nodes[i]->cost);
		free(f->nodes[i]->rule);
		free(f->nodes[i]);
	}
	free(f->nodes);
	f->nodes = NULL;
	f->nnodes = f->capnodes = 0;
	free(f->stmts);
	f->stmts = NULL;
	f->nstmts = f->capstmts = 0;
}

void mfunc_free_code(MFunc *f)
{
	free(f->insts);
	f->insts = NULL;
	f->ninsts = f->capinsts = 0;
	free(f->forms);
	f->forms = NULL;
	f->nforms = f->capforms = 0;
}

void mfunc_free(MFunc *f)
{
	if (!f)
		return;
	mfunc_free_trees(f);
	free(f->vregs);
	free(f->insts);
	free(f->forms);
	free(f);
}

int target_root_class(const Target *t, int cls)
{
	return t->regclasses[cls].alias_of >= 0 ? t->regclasses[cls].alias_of : cls;
}

int target_root_index(const Target *t, int cls, int reg)
{
	const RegClassInfo *rc = &t->regclasses[cls];
	if (rc->alias_of < 0)
		return reg;
	const RegClassInfo *root = &t->regclasses[rc->alias_of];
	if (root->nregs == rc->nregs)
		return reg; /* index by index (x86's xmm3 is ymm3) */
	for (int i = 0; i < root->nregs; i++)
		if (strcmp(root->regs[i], rc->regs[reg]) == 0)
			return i; /* by name (RVV's mask register v0) */
	return -1;
}

const char *target_reg_name(const Target *t, int cls, int phys)
{
	const RegClassInfo *rc = &t->regclasses[cls];
	if (rc->alias_of < 0 || t->regclasses[rc->alias_of].nregs == rc->nregs)
		return rc->regs[phys];
	return t->regclasses[rc->alias_of].regs[phys];
}

int target_class_for(const Target *t, Sort s)
{
	for (int i = 0; i < t->nregclasses; i++)
		if (t->regclasses[i].sort == s && t->regclasses[i].alias_of < 0)
			return i;
	for (int i = 0; i < t->nregclasses; i++)
		if (t->regclasses[i].sort == s)
			return i;
	return -1;
}

int mfunc_vreg(MFunc *f, int cls)
{
	GROW(f->vregs, f->nvregs, f->capvregs);
	Sort s = f->t->regclasses[cls].sort;
	f->vregs[f->nvregs] = (VReg){cls, -1, -1, -1, false, (s == SORT_V || s == SORT_W) ? f->lmul : 1};
	return f->nvregs++;
}

static BursNode *node(MFunc *f, int op)
{
	BursNode *n = xcalloc(1, sizeof *n);
	n->op = op;
	n->vreg = -1;
	n->form = -1;
	GROW(f->nodes, f->nnodes, f->capnodes);
	f->nodes[f->nnodes++] = n;
	return n;
}

BursNode *sel_reg(MFunc *f, int vreg)
{
	Sort s = f->t->regclasses[f->vregs[vreg].cls].sort;
	BursNode *n = node(f, sel_reg_leaf(s));
	n->vreg = vreg;
	return n;
}

BursNode *sel_consti(MFunc *f, int64_t v)
{
	BursNode *n = node(f, SEL_CONST_I);
	n->ival = v;
	return n;
}

BursNode *sel_constf(MFunc *f, double v)
{
	BursNode *n = node(f, SEL_CONST_F);
	n->fval = v;
	return n;
}

BursNode *sel_sym(MFunc *f, const char *sym)
{
	BursNode *n = node(f, SEL_ADDR_SYM);
	n->sym = sym;
	return n;
}

BursNode *sel_op(MFunc *f, SelOp op, BursNode *a, BursNode *b, BursNode *c)
{
	BursNode *n = node(f, op);
	n->kid[0] = a;
	n->kid[1] = b;
	n->kid[2] = c;
	return n;
}

static void stmt(MFunc *f, BursNode *tree, int dest, int label)
{
	GROW(f->stmts, f->nstmts, f->capstmts);
	f->stmts[f->nstmts++] = (SelStmt){tree, dest, label, f->lmul};
}

void sel_assign(MFunc *f, int dest, BursNode *tree) { stmt(f, tree, dest, -1); }
void sel_effect(MFunc *f, BursNode *tree) { stmt(f, tree, -1, -1); }
int sel_new_label(MFunc *f) { return f->nlabels++; }
void sel_label(MFunc *f, int label) { stmt(f, NULL, -1, label); }
void sel_branch(MFunc *f, BursNode *tree, int label) { stmt(f, tree, -1, label); }

static void dump_opnd(FILE *o, const MFunc *f, const Opnd *op)
{
	switch (op->kind) {
	case OPND_REG: fprintf(o, "%%v%d", op->vreg); break;
	case OPND_IMM: fprintf(o, "%lld", (long long)op->imm); break;
	case OPND_FIMM: fprintf(o, "%g", op->fimm); break;
	case OPND_SYM: fprintf(o, "%s", op->sym); break;
	case OPND_FORM: {
		const FormInst *fi = &f->forms[op->form];
		fprintf(o, "%s[", f->t->rules[fi->rule].name);
		for (int i = 0; i < f->t->rules[fi->rule].nops; i++) {
			fputs(i ? ", " : "", o);
			dump_opnd(o, f, &fi->ops[i]);
		}
		fputc(']', o);
		break;
	}
	case OPND_NONE: break;
	}
}

void mfunc_dump(FILE *o, const MFunc *f)
{
	fprintf(o, "function %s (%d vregs, frame %d bytes)\n", f->name, f->nvregs, f->frame_bytes);
	for (int i = 0; i < f->ninsts; i++) {
		const MInst *mi = &f->insts[i];
		if (mi->kind == MI_LABEL) {
			fprintf(o, ".L%d:\n", mi->label);
			continue;
		}
		fputs("  ", o);
		if (mi->def >= 0) {
			fprintf(o, "%%v%d", mi->def);
			if (f->vregs[mi->def].phys >= 0)
				fprintf(o, "(%s)", target_reg_name(f->t, f->vregs[mi->def].cls, f->vregs[mi->def].phys));
			fputs(" = ", o);
		}
		if (mi->kind == MI_MOVE) {
			fprintf(o, "move %%v%d\n", mi->use);
			continue;
		}
		const RuleInfo *r = &f->t->rules[mi->rule];
		fprintf(o, "%s", r->name);
		for (int k = 0; k < r->nops; k++) {
			fputs(k ? ", " : " ", o);
			dump_opnd(o, f, &mi->ops[k]);
		}
		if (mi->label >= 0)
			fprintf(o, " -> .L%d", mi->label);
		fputc('\n', o);
	}
}

static void dump_tree(FILE *o, const MFunc *f, const BursNode *n)
{
	if (n->op == SEL_CONST_I) {
		fprintf(o, "%lld", (long long)n->ival);
		return;
	}
	if (n->op == SEL_CONST_F) {
		fprintf(o, "%g", n->fval);
		return;
	}
	if (n->op == SEL_ADDR_SYM || n->op == SEL_ADDR_FAR) {
		fprintf(o, "%s%s", n->op == SEL_ADDR_FAR ? "&far " : "&", n->sym);
		return;
	}
	if (n->op < SEL_CONST_I) {
		fprintf(o, "%%v%d", n->vreg);
		return;
	}
	fprintf(o, "%s(", sel_info[n->op].name);
	for (int i = 0; i < sel_info[n->op].nkids; i++) {
		fputs(i ? ", " : "", o);
		dump_tree(o, f, n->kid[i]);
	}
	fputc(')', o);
}

void mfunc_dump_trees(FILE *o, const MFunc *f)
{
	fprintf(o, "function %s: %d selection trees\n", f->name, f->nstmts);
	for (int i = 0; i < f->nstmts; i++) {
		const SelStmt *s = &f->stmts[i];
		if (!s->tree) {
			fprintf(o, ".L%d:\n", s->label);
			continue;
		}
		fputs("  ", o);
		if (s->dest >= 0)
			fprintf(o, "%%v%d:%s = ", s->dest, f->t->regclasses[f->vregs[s->dest].cls].name);
		dump_tree(o, f, s->tree);
		if (s->label >= 0)
			fprintf(o, " -> .L%d", s->label);
		fputc('\n', o);
	}
}

/* The machine IR's contract: every register operand names a virtual
 * register of the class its rule expects; after allocation every one has a
 * physical register of its class. */
static bool check_opnd(const MFunc *f, const Opnd *op, int nt, bool allocated, Diag *d, int at)
{
	const Target *t = f->t;
	if (op->kind == OPND_REG) {
		if (op->vreg < 0 || op->vreg >= f->nvregs) {
			diag_error(d, loc_at(NULL, 0, 0), "%s: instruction %d names no virtual register", f->name, at);
			return false;
		}
		const VReg *v = &f->vregs[op->vreg];
		if (nt >= 0 && t->regclasses[v->cls].nt != nt) {
			diag_error(d, loc_at(NULL, 0, 0), "%s: instruction %d: %%v%d is a %s, the rule wants a %s", f->name, at,
				   op->vreg, t->regclasses[v->cls].name, t->grammar.nt_names[nt]);
			return false;
		}
		if (allocated && (v->phys < 0 || v->phys >= t->regclasses[target_root_class(t, v->cls)].nregs)) {
			diag_error(d, loc_at(NULL, 0, 0), "%s: instruction %d: %%v%d has no register", f->name, at, op->vreg);
			return false;
		}
	} else if (op->kind == OPND_FORM) {
		const FormInst *fi = &f->forms[op->form];
		const RuleInfo *r = &t->rules[fi->rule];
		for (int k = 0; k < r->nops; k++)
			if (!check_opnd(f, &fi->ops[k], r->ops[k].nt, allocated, d, at))
				return false;
	}
	return true;
}

bool mfunc_verify(const MFunc *f, bool allocated, Diag *d)
{
	const Target *t = f->t;
	for (int i = 0; i < f->ninsts; i++) {
		const MInst *mi = &f->insts[i];
		if (mi->kind == MI_LABEL)
			continue;
		if (mi->def >= 0) {
			Opnd dd = {.kind = OPND_REG, .vreg = mi->def};
			int nt = mi->kind == MI_RULE ? t->rules[mi->rule].result_nt : -1;
			if (!check_opnd(f, &dd, nt, allocated, d, i))
				return false;
		}
		if (mi->kind == MI_MOVE) {
			Opnd u = {.kind = OPND_REG, .vreg = mi->use};
			if (!check_opnd(f, &u, -1, allocated, d, i))
				return false;
			if (target_root_class(t, f->vregs[mi->use].cls) != target_root_class(t, f->vregs[mi->def].cls)) {
				diag_error(d, loc_at(NULL, 0, 0), "%s: instruction %d moves between register files", f->name, i);
				return false;
			}
			continue;
		}
		const RuleInfo *r = &t->rules[mi->rule];
		for (int k = 0; k < r->nops; k++)
			if (!check_opnd(f, &mi->ops[k], r->ops[k].nt, allocated, d, i))
				return false;
	}
	return true;
}

void mfunc_push(MFunc *f, const MInst *mi)
{
	if (f->ninsts == f->capinsts) {
		f->capinsts = f->capinsts ? 2 * f->capinsts : 256;
		f->insts = xrealloc(f->insts, (size_t)f->capinsts * sizeof *f->insts);
	}
	f->insts[f->ninsts++] = *mi;
}
