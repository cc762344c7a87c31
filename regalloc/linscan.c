/* Register allocation: liveness over the blocks, one live interval per
 * virtual register, linear scan (Poletto & Sarkar) over each physical
 * register pool (a class and the classes that alias it), spilling the
 * interval that ends last.  Spill code is selected from the target's own
 * load and store patterns on a stack-pointer address, then the scan runs
 * again.  Finally the frame: callee-saved registers the code uses, spill
 * slots, and the stack adjustment, also through the target's patterns. */
#include <stdlib.h>
#include <string.h>

#include "mir.h"
#include "util.h"

typedef struct {
	int start, end;
} Interval;

static int root_op_of_rule(const Target *t, int rule)
{
	for (int i = 0; i < t->grammar.nrules; i++)
		if (t->grammar.rules[i].origin == rule && t->grammar.rules[i].emits)
			return t->grammar.rules[i].op;
	return -1;
}

/* The virtual registers an instruction reads, in operand order (forms
 * nest, so their number has no fixed bound). */
typedef struct {
	int *v;
	int n, cap;
} Uses;

static void form_uses(const MFunc *f, const Opnd *op, Uses *u)
{
	if (op->kind == OPND_REG) {
		if (u->n == u->cap)
			u->v = xrealloc(u->v, (size_t)(u->cap = u->cap ? 2 * u->cap : 16) * sizeof *u->v);
		u->v[u->n++] = op->vreg;
	} else if (op->kind == OPND_FORM)
		for (int k = 0; k < f->t->rules[f->forms[op->form].rule].nops; k++)
			form_uses(f, &f->forms[op->form].ops[k], u);
}

static int uses_of(const MFunc *f, const MInst *mi, Uses *u)
{
	u->n = 0;
	if (mi->kind == MI_MOVE)
		form_uses(f, &(Opnd){.kind = OPND_REG, .vreg = mi->use}, u);
	else if (mi->kind == MI_RULE)
		for (int k = 0; k < f->t->rules[mi->rule].nops; k++)
			form_uses(f, &mi->ops[k], u);
	return u->n;
}

typedef struct {
	int first, last;   /* instruction range */
	int succ[2], nsucc;
} Block;

static int build_blocks(const MFunc *f, Block **out)
{
	int cap = 16, n = 0;
	Block *b = xmalloc(cap * sizeof *b);
	int *label_block = xmalloc((f->nlabels + 1) * sizeof *label_block);
	for (int i = 0; i < f->nlabels; i++)
		label_block[i] = -1;
	int start = 0;
	for (int i = 0; i <= f->ninsts; i++) {
		bool end_here = i == f->ninsts;
		if (!end_here && f->insts[i].kind == MI_LABEL && i > start)
			end_here = true;
		if (end_here && i > start) {
			if (n == cap)
				b = xrealloc(b, (cap *= 2) * sizeof *b);
			b[n++] = (Block){start, i - 1, {-1, -1}, 0};
			start = i;
		}
		if (i < f->ninsts) {
			const MInst *mi = &f->insts[i];
			bool branch = mi->kind == MI_RULE && (mi->label >= 0 || root_op_of_rule(f->t, mi->rule) == SEL_RET);
			if (branch) {
				if (n == cap)
					b = xrealloc(b, (cap *= 2) * sizeof *b);
				b[n++] = (Block){start, i, {-1, -1}, 0};
				start = i + 1;
			}
		}
	}
	for (int k = 0; k < n; k++)
		if (f->insts[b[k].first].kind == MI_LABEL)
			label_block[f->insts[b[k].first].label] = k;
	for (int k = 0; k < n; k++) {
		const MInst *last = &f->insts[b[k].last];
		int op = last->kind == MI_RULE ? root_op_of_rule(f->t, last->rule) : -1;
		if (op == SEL_RET)
			continue;
		if (last->kind == MI_RULE && last->label >= 0)
			b[k].succ[b[k].nsucc++] = label_block[last->label];
		if (op != SEL_JUMP && k + 1 < n)
			b[k].succ[b[k].nsucc++] = k + 1;
	}
	free(label_block);
	*out = b;
	return n;
}

/* Liveness one variable at a time (Appel & Palsberg, 10.1.x): from each
 * block that reads a vreg before writing it, walk the predecessors back
 * until a block that writes it.  This is the same least fixed point as the
 * iterative dataflow over bitsets, in time and memory proportional to the
 * code and to the live ranges themselves (bitsets of every vreg in every
 * block grew as blocks x vregs: gigabytes for a 20,000-node model).  Then
 * one interval each: the first and last instruction positions where the
 * vreg is used, defined, live into a block or live out of it. */
static void intervals(const MFunc *f, Interval *iv)
{
	int nv = f->nvregs;
	for (int v = 0; v < nv; v++)
		iv[v] = (Interval){-1, -1};
	Block *b;
	int nb = build_blocks(f, &b);
#define TOUCH(v, p)                                          \
	do {                                                 \
		if (iv[v].start < 0 || (p) < iv[v].start)    \
			iv[v].start = (p);                   \
		if ((p) > iv[v].end)                         \
			iv[v].end = (p);                     \
	} while (0)
	/* predecessors, as compressed rows */
	int *npred = xcalloc((size_t)nb + 1, sizeof *npred);
	for (int k = 0; k < nb; k++)
		for (int s = 0; s < b[k].nsucc; s++)
			if (b[k].succ[s] >= 0)
				npred[b[k].succ[s] + 1]++;
	for (int k = 0; k < nb; k++)
		npred[k + 1] += npred[k];
	int *pred = xmalloc(((size_t)npred[nb] + 1) * sizeof *pred), *fillp = xcalloc((size_t)nb, sizeof *fillp);
	for (int k = 0; k < nb; k++)
		for (int s = 0; s < b[k].nsucc; s++)
			if (b[k].succ[s] >= 0) {
				int t = b[k].succ[s];
				pred[npred[t] + fillp[t]++] = k;
			}
	free(fillp);
	/* per vreg: the blocks that read it before writing it (upward-exposed
	 * uses) and the blocks that write it, as (vreg, block) pairs sorted by
	 * vreg; positions of every use and def touched on the way */
	int *defblk = xmalloc((size_t)nv * sizeof *defblk), *ueblk = xmalloc((size_t)nv * sizeof *ueblk);
	for (int v = 0; v < nv; v++)
		defblk[v] = ueblk[v] = -1;
	size_t nue = 0, capue = 64, ndf = 0, capdf = 64;
	int (*ue)[2] = xmalloc(capue * sizeof *ue), (*df)[2] = xmalloc(capdf * sizeof *df);
	Uses tmp = {0};
	for (int k = 0; k < nb; k++)
		for (int i = b[k].first; i <= b[k].last; i++) {
			int nu = uses_of(f, &f->insts[i], &tmp);
			for (int j = 0; j < nu; j++) {
				int v = tmp.v[j];
				TOUCH(v, 2 * i);
				if (defblk[v] != k && ueblk[v] != k) {
					ueblk[v] = k;
					if (nue == capue)
						ue = xrealloc(ue, (capue *= 2) * sizeof *ue);
					ue[nue][0] = v;
					ue[nue++][1] = k;
				}
			}
			int dv = f->insts[i].def;
			if (dv >= 0) {
				TOUCH(dv, 2 * i + 1);
				if (defblk[dv] != k) {
					defblk[dv] = k;
					if (ndf == capdf)
						df = xrealloc(df, (capdf *= 2) * sizeof *df);
					df[ndf][0] = dv;
					df[ndf++][1] = k;
				}
			}
		}
	free(tmp.v);
	/* counting sort of both pair lists by vreg */
	int *uerow = xcalloc((size_t)nv + 1, sizeof *uerow), *dfrow = xcalloc((size_t)nv + 1, sizeof *dfrow);
	for (size_t i = 0; i < nue; i++)
		uerow[ue[i][0] + 1]++;
	for (size_t i = 0; i < ndf; i++)
		dfrow[df[i][0] + 1]++;
	for (int v = 0; v < nv; v++) {
		uerow[v + 1] += uerow[v];
		dfrow[v + 1] += dfrow[v];
	}
	int *uel = xmalloc((nue + 1) * sizeof *uel), *dfl = xmalloc((ndf + 1) * sizeof *dfl);
	int *at = xcalloc((size_t)nv, sizeof *at);
	for (size_t i = 0; i < nue; i++)
		uel[uerow[ue[i][0]] + at[ue[i][0]]++] = ue[i][1];
	memset(at, 0, (size_t)nv * sizeof *at);
	for (size_t i = 0; i < ndf; i++)
		dfl[dfrow[df[i][0]] + at[df[i][0]]++] = df[i][1];
	free(at);
	free(ue);
	free(df);
	/* the walk, one vreg at a time; marks are stamped with v + 1 so that
	 * nothing is cleared between vregs */
	int *defs = xcalloc((size_t)nb, sizeof *defs), *livein = xcalloc((size_t)nb, sizeof *livein);
	int *liveout = xcalloc((size_t)nb, sizeof *liveout), *work = xmalloc(((size_t)nb + 1) * sizeof *work);
	for (int v = 0; v < nv; v++) {
		if (uerow[v] == uerow[v + 1])
			continue; /* no block reads it before writing it: live only inside blocks */
		int stamp = v + 1, nw = 0;
		for (int i = dfrow[v]; i < dfrow[v + 1]; i++)
			defs[dfl[i]] = stamp;
		for (int i = uerow[v]; i < uerow[v + 1]; i++) {
			int k = uel[i];
			if (livein[k] != stamp) {
				livein[k] = stamp;
				TOUCH(v, 2 * b[k].first);
				work[nw++] = k;
			}
		}
		while (nw > 0) {
			int k = work[--nw];
			for (int j = npred[k]; j < npred[k + 1]; j++) {
				int p = pred[j];
				if (liveout[p] != stamp) {
					liveout[p] = stamp;
					TOUCH(v, 2 * b[p].last + 1);
				}
				if (defs[p] != stamp && livein[p] != stamp) {
					livein[p] = stamp;
					TOUCH(v, 2 * b[p].first);
					work[nw++] = p;
				}
			}
		}
	}
#undef TOUCH
	free(defs);
	free(livein);
	free(liveout);
	free(work);
	free(uerow);
	free(dfrow);
	free(uel);
	free(dfl);
	free(defblk);
	free(ueblk);
	free(npred);
	free(pred);
	free(b);
}

static Interval *sort_iv;
static int by_start(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	if (sort_iv[x].start != sort_iv[y].start)
		return sort_iv[x].start - sort_iv[y].start;
	return x - y;
}

static SelOp load_op(Sort s)
{
	return s == SORT_I ? SEL_LOAD_I : s == SORT_F ? SEL_LOAD_F : s == SORT_V ? SEL_LOAD_V : SEL_COUNT;
}

static SelOp store_op(Sort s)
{
	return s == SORT_I ? SEL_STORE_I : s == SORT_F ? SEL_STORE_F : s == SORT_V ? SEL_STORE_V : SEL_COUNT;
}

/* GDCC_MAX_REGS=N (a testing aid, docs/backend.md): allocate from at most
 * N registers of each pool, so that every program exercises spill code. */
int regalloc_max_regs(void)
{
	const char *e = getenv("GDCC_MAX_REGS");
	int n = e ? atoi(e) : 0;
	return n > 0 ? n : 1 << 20;
}

/* One scan; returns the number of registers spilled. */
static int scan(MFunc *f, Interval *iv)
{
	const Target *t = f->t;
	int limit = regalloc_max_regs();
	int *order = xmalloc((size_t)f->nvregs * sizeof *order), n = 0;
	for (int v = 0; v < f->nvregs; v++) {
		f->vregs[v].phys = f->vregs[v].preg >= 0 ? target_root_index(t, f->vregs[v].cls, f->vregs[v].preg) : -1;
		if (iv[v].start >= 0 && f->vregs[v].preg < 0 && f->vregs[v].slot < 0)
			order[n++] = v;
	}
	sort_iv = iv;
	qsort(order, (size_t)n, sizeof *order, by_start);
	int *active = xmalloc((size_t)(f->nvregs + 1) * sizeof *active), nact = 0, spills = 0;
	/* the vregs fixed to a register (arguments, results), listed once */
	int *fixed = xmalloc((size_t)(f->nvregs + 1) * sizeof *fixed), nfixed = 0;
	for (int w = 0; w < f->nvregs; w++)
		if (f->vregs[w].preg >= 0 && iv[w].start >= 0)
			fixed[nfixed++] = w;
	for (int oi = 0; oi < n; oi++) {
		int v = order[oi];
		int root = target_root_class(t, f->vregs[v].cls);
		const RegClassInfo *rc = &t->regclasses[root];
		const RegClassInfo *own = &t->regclasses[f->vregs[v].cls];
		/* expire */
		int k = 0;
		for (int a = 0; a < nact; a++)
			if (iv[active[a]].end >= iv[v].start)
				active[k++] = active[a];
		nact = k;
		bool *busy = xcalloc((size_t)rc->nregs, 1);
		for (int a = 0; a < nact; a++)
			if (target_root_class(t, f->vregs[active[a]].cls) == root)
				for (int g = 0; g < f->vregs[active[a]].group && f->vregs[active[a]].phys + g < rc->nregs; g++)
					busy[f->vregs[active[a]].phys + g] = true;
		for (int x = 0; x < nfixed; x++) { /* fixed registers alive here */
			int w = fixed[x];
			if (target_root_class(t, f->vregs[w].cls) == root && iv[w].start <= iv[v].end && iv[w].end >= iv[v].start)
				busy[f->vregs[w].phys] = true;
		}
		/* the class's own registers (an aliasing class may have fewer),
		 * caller-saved first */
		int pick = -1, usable = 0;
		for (int pass = 0; pass < 2 && pick < 0; pass++)
			for (int j = 0; j < own->nregs && pick < 0; j++) {
				if (own->reserved[j] || own->callee_saved[j] != (pass == 1))
					continue;
				int r = target_root_index(t, f->vregs[v].cls, j);
				int gsz = f->vregs[v].group;
				if (r < 0 || r % gsz || r + gsz > rc->nregs)
					continue; /* a register group starts at a multiple of its size */
				bool fits = true;
				for (int g = 1; g < gsz; g++)
					fits &= !rc->reserved[r + g];
				if (!fits)
					continue;
				if (usable++ >= limit)
					break;
				bool free_all = true;
				for (int g = 0; g < gsz; g++)
					free_all &= !busy[r + g];
				if (free_all)
					pick = r;
			}
		free(busy);
		if (pick >= 0) {
			f->vregs[v].phys = pick;
			active[nact++] = v;
			continue;
		}
		/* spill the interval of this pool that ends last (values of a
		 * sort the target cannot load and store stay in registers) */
#define SPILLABLE(x) (!f->vregs[x].no_spill && load_op(t->regclasses[f->vregs[x].cls].sort) != SEL_COUNT)
		int victim = SPILLABLE(v) ? v : -1;
		for (int a = 0; a < nact; a++) {
			int w = active[a];
			if (target_root_class(t, f->vregs[w].cls) != root || !SPILLABLE(w))
				continue;
			if (victim < 0 || iv[w].end > iv[victim].end)
				victim = w;
		}
#undef SPILLABLE
		if (victim < 0) {
			spills = -1; /* nothing can give way */
			break;
		}
		spills++;
		f->vregs[victim].slot = -2; /* marked: gets a slot in the rewrite */
		if (victim != v) {
			f->vregs[v].phys = f->vregs[victim].phys;
			f->vregs[victim].phys = -1;
			for (int a = 0; a < nact; a++)
				if (active[a] == victim)
					active[a] = v;
		}
	}
	free(order);
	free(active);
	free(fixed);
	return spills;
}

static BursNode *slot_addr(MFunc *f, int off)
{
	return sel_op(f, SEL_ADD_I, sel_reg(f, f->sp), sel_consti(f, off), NULL);
}

static void replace_in_opnd(MFunc *f, Opnd *op, int from, int to)
{
	if (op->kind == OPND_REG && op->vreg == from)
		op->vreg = to;
	else if (op->kind == OPND_FORM)
		for (int k = 0; k < f->t->rules[f->forms[op->form].rule].nops; k++)
			replace_in_opnd(f, &f->forms[op->form].ops[k], from, to);
}

/* Give marked registers slots; reload before each use, store after each def. */
static bool rewrite_spills(MFunc *f, Diag *d)
{
	const Target *t = f->t;
	for (int v = 0; v < f->nvregs; v++) {
		if (f->vregs[v].slot != -2)
			continue;
		const RegClassInfo *rc = &t->regclasses[f->vregs[v].cls];
		int bytes = rc->width / 8;
		if (t->scalable && (rc->sort == SORT_V || rc->sort == SORT_W || rc->sort == SORT_M))
			bytes = t->vlen_max / 8 * f->vregs[v].group; /* room for the largest VLEN */
		f->frame_bytes = (f->frame_bytes + bytes - 1) / bytes * bytes;
		f->vregs[v].slot = f->frame_bytes;
		f->frame_bytes += bytes;
		if (load_op(rc->sort) == SEL_COUNT) {
			diag_error(d, loc_at(NULL, 0, 0), "%s: out of %s registers and values of sort %s cannot be spilled",
				   f->name, rc->name, sort_name(rc->sort));
			return false;
		}
	}
	/* the instructions are rebuilt in one pass (inserting into the array
	 * would move its tail once per spill instruction) */
	MInst *old = f->insts;
	int nold = f->ninsts;
	f->insts = NULL;
	f->ninsts = f->capinsts = 0;
	bool ok = true;
	Uses tmp = {0};
	for (int i = 0; i < nold && ok; i++) {
		MInst cur = old[i];
		MInst *mi = &cur;
		int nu = uses_of(f, mi, &tmp);
		int def_reload = -1; /* a tied (read and written) spilled register keeps one temporary */
		for (int j = 0; j < nu; j++) {
			int v = tmp.v[j];
			if (f->vregs[v].slot < 0 || f->vregs[v].preg >= 0)
				continue;
			bool seen = false;
			for (int q = 0; q < j; q++)
				seen |= tmp.v[q] == v;
			if (seen)
				continue;
			int r = mfunc_vreg(f, f->vregs[v].cls);
			f->vregs[r].no_spill = true;
			f->vregs[r].group = f->vregs[v].group;
			Sort s = t->regclasses[f->vregs[v].cls].sort;
			if (isel_insert(f, f->ninsts, sel_op(f, load_op(s), slot_addr(f, f->vregs[v].slot), NULL, NULL), r, d) < 0) {
				ok = false;
				break;
			}
			if (mi->kind == MI_MOVE && mi->use == v)
				mi->use = r;
			if (mi->kind == MI_RULE)
				for (int k = 0; k < f->t->rules[mi->rule].nops; k++)
					replace_in_opnd(f, &mi->ops[k], v, r);
			if (mi->def == v)
				def_reload = r;
		}
		if (!ok)
			break;
		int dv = mi->def, store_from = -1;
		if (dv >= 0 && f->vregs[dv].slot >= 0 && f->vregs[dv].preg < 0) {
			int r = def_reload;
			if (r < 0) {
				r = mfunc_vreg(f, f->vregs[dv].cls);
				f->vregs[r].no_spill = true;
				f->vregs[r].group = f->vregs[dv].group;
			}
			mi->def = r;
			store_from = r;
		}
		mfunc_push(f, mi);
		if (store_from >= 0) {
			/* a tied use of the same register (two-address) is the new one */
			Sort s = t->regclasses[f->vregs[dv].cls].sort;
			if (isel_insert(f, f->ninsts, sel_op(f, store_op(s), slot_addr(f, f->vregs[dv].slot), sel_reg(f, store_from), NULL),
					-1, d) < 0)
				ok = false;
		}
	}
	free(old);
	free(tmp.v);
	return ok;
}

/* Tied two-address instructions read and write the same vreg; when that
 * vreg was spilled, the reload and the def are separate temporaries.  Join
 * them: the def's temporary takes the reload's register by a move. */
static void fix_tied(MFunc *f)
{
	(void)f; /* the move inserted by isel before a tied instruction keeps
		  * def and use distinct vregs, so nothing to do */
}

/* The frame's code: the stack adjustment and the callee-saved registers'
 * stores (saved[k] at save_off[k]) at entry, their loads and the
 * adjustment back before every return. */
static bool frame_code(MFunc *f, const int *saved, const int *save_off, int nsaved, int frame, Diag *d)
{
	const Target *t = f->t;
	f->vregs[f->sp].phys = target_root_index(t, f->vregs[f->sp].cls, f->vregs[f->sp].preg);
	/* prologue */
	int at = 0;
	int added = isel_insert(f, at, sel_op(f, SEL_SUB_I, sel_reg(f, f->sp), sel_consti(f, frame), NULL), f->sp, d);
	if (added < 0)
		return false;
	at += added;
	for (int k = 0; k < nsaved; k++) {
		Sort s = t->regclasses[f->vregs[saved[k]].cls].sort;
		added = isel_insert(f, at, sel_op(f, store_op(s), slot_addr(f, save_off[k]), sel_reg(f, saved[k]), NULL), -1, d);
		if (added < 0)
			return false;
		at += added;
	}
	/* epilogue before every return */
	for (int i = at; i < f->ninsts; i++) {
		const MInst *mi = &f->insts[i];
		if (mi->kind != MI_RULE || root_op_of_rule(t, mi->rule) != SEL_RET)
			continue;
		int n = 0;
		for (int k = 0; k < nsaved; k++) {
			Sort s = t->regclasses[f->vregs[saved[k]].cls].sort;
			added = isel_insert(f, i + n, sel_op(f, load_op(s), slot_addr(f, save_off[k]), NULL, NULL), saved[k], d);
			if (added < 0)
				return false;
			n += added;
		}
		added = isel_insert(f, i + n, sel_op(f, SEL_ADD_I, sel_reg(f, f->sp), sel_consti(f, frame), NULL), f->sp, d);
		if (added < 0)
			return false;
		i += n + added;
	}
	return true;
}

bool regalloc_function(MFunc *f, Diag *d)
{
	const Target *t = f->t;
	/* the stack pointer */
	if (f->sp < 0) {
		for (int c = 0; c < t->nregclasses && f->sp < 0; c++)
			for (int r = 0; r < t->regclasses[c].nregs; r++)
				if (t->abi.stack_pointer && strcmp(t->regclasses[c].regs[r], t->abi.stack_pointer) == 0) {
					f->sp = mfunc_vreg(f, c);
					f->vregs[f->sp].preg = r;
					break;
				}
		if (f->sp < 0) {
			diag_error(d, loc_at(NULL, 0, 0), "%s: the target's abi names no stack_pointer", t->name);
			return false;
		}
	}
	for (int round = 0;; round++) {
		Interval *iv = xmalloc((size_t)f->nvregs * sizeof *iv);
		intervals(f, iv);
		int spills = scan(f, iv);
		free(iv);
		if (spills == 0)
			break;
		if (spills < 0 || round > 20) {
			diag_error(d, loc_at(NULL, 0, 0), "%s: register allocation failed: too many values live at once", f->name);
			return false;
		}
		if (!rewrite_spills(f, d))
			return false;
	}
	fix_tied(f);
	/* callee-saved registers the code uses, each once (as many as the
	 * target has) */
	int maxregs = 0;
	for (int c = 0; c < t->nregclasses; c++)
		if (t->regclasses[c].nregs > maxregs)
			maxregs = t->regclasses[c].nregs;
	bool *marked = xcalloc((size_t)t->nregclasses * (size_t)maxregs + 1, sizeof *marked);
	int *saved = xmalloc(((size_t)t->nregclasses * (size_t)maxregs + 1) * sizeof *saved), nsaved = 0;
	for (int v = 0; v < f->nvregs; v++) {
		if (f->vregs[v].phys < 0 || f->vregs[v].preg >= 0)
			continue;
		int root = target_root_class(t, f->vregs[v].cls);
		const RegClassInfo *rc = &t->regclasses[root];
		int phys = f->vregs[v].phys;
		if (!rc->callee_saved[phys] || marked[(size_t)root * (size_t)maxregs + (size_t)phys])
			continue;
		marked[(size_t)root * (size_t)maxregs + (size_t)phys] = true;
		int s = mfunc_vreg(f, root);
		f->vregs[s].preg = f->vregs[s].phys = phys;
		saved[nsaved++] = s;
	}
	free(marked);
	int *save_off = xmalloc(((size_t)nsaved + 1) * sizeof *save_off);
	for (int k = 0; k < nsaved; k++) {
		int bytes = t->regclasses[f->vregs[saved[k]].cls].width / 8;
		f->frame_bytes = (f->frame_bytes + bytes - 1) / bytes * bytes;
		save_off[k] = f->frame_bytes;
		f->frame_bytes += bytes;
	}
	int align = t->abi.stack_align > 0 ? t->abi.stack_align : 16;
	int frame = (f->frame_bytes + align - 1) / align * align;
	f->frame_bytes = frame;
	bool ok = frame == 0 || frame_code(f, saved, save_off, nsaved, frame, d);
	free(saved);
	free(save_off);
	if (!ok)
		return false;
	if (frame == 0)
		return true;
	/* the registers the frame code introduced: fixed ones, and temporaries
	 * (a frame too large for an immediate) in a caller-saved register that
	 * holds neither the argument at entry nor the result at exit */
	for (int v = 0; v < f->nvregs; v++) {
		if (f->vregs[v].phys >= 0)
			continue;
		if (f->vregs[v].preg >= 0) {
			f->vregs[v].phys = target_root_index(t, f->vregs[v].cls, f->vregs[v].preg);
			continue;
		}
		const RegClassInfo *rc = &t->regclasses[f->vregs[v].cls];
		const char *arg0 = t->abi.nargs ? t->abi.args[0].regs[0] : "", *ret0 = t->abi.nret ? t->abi.ret[0].regs[0] : "";
		for (int j = 0; j < rc->nregs && f->vregs[v].phys < 0; j++)
			if (!rc->reserved[j] && !rc->callee_saved[j] && strcmp(rc->regs[j], arg0) != 0 &&
			    strcmp(rc->regs[j], ret0) != 0)
				f->vregs[v].phys = target_root_index(t, f->vregs[v].cls, j);
	}
	return true;
}
