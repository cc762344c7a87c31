/* BURS labeller tests.  The labeller is proved optimal on a small x86-style
 * addressing-mode grammar: on thousands of seeded random trees, the cost it
 * finds for every nonterminal equals the minimum over all covers found by
 * an independent exhaustive search, and the derivation burs_reduce walks is
 * a valid cover whose rule costs add up to exactly that cost. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "burs.h"
#include "sel.h"
#include "test_util.h"

/* ---- the grammar ----------------------------------------------------------
 * Nonterminal 0 is deliberately unused: nothing derives it, so its cost is
 * always BURS_INF.  _scaled is a helper nonterminal made by normalizing the
 * pattern addr <- add.i(reg, shl.i(reg, scale)). */
enum { NT_NONE, NT_STMT, NT_REG, NT_IMM, NT_ADDR, NT_ACC, NT_SCALED, NT_SCALE, NNT };

static const char *const nt_names[NNT] = {"(none)", "stmt", "reg", "imm", "addr", "acc", "_scaled", "scale"};

enum {
	R_REG_LEAF,   /* reg     <- reg.i                      0 */
	R_IMM,        /* imm     <- const.i [INT32_MIN, INT32_MAX] 0 */
	R_MOV,        /* reg     <- const.i                  100  (mov r, imm64) */
	R_ZERO,       /* reg     <- const.i [0, 0]            50  (xor r, r) */
	R_SCALE,      /* scale   <- const.i [0, 3]             0 */
	R_ADD_RR,     /* reg     <- add.i(reg, reg)          100 */
	R_ADD_RI,     /* reg     <- add.i(reg, imm)           80 */
	R_ADD_IR,     /* reg     <- add.i(imm, reg)           80 */
	R_ADDR_REG,   /* addr    <- reg                        0  chain */
	R_LEA,        /* reg     <- addr                     100  chain: cycle with R_ADDR_REG */
	R_ADDR_IMM,   /* addr    <- imm                        0  chain */
	R_ADDR_DISP,  /* addr    <- add.i(reg, imm)            0 */
	R_ADDR_INDEX, /* addr    <- add.i(reg, _scaled)        0  (pattern root) */
	R_SCALED,     /* _scaled <- shl.i(reg, scale)          0  (helper, emits=false) */
	R_LOAD,       /* reg     <- load.i(addr)             300 */
	R_MUL,        /* reg     <- mul.i(reg, reg)          300 */
	R_SHL_IMM,    /* reg     <- shl.i(reg, imm)          100 */
	R_SHL_SCALE,  /* reg     <- shl.i(reg, scale)        100  ties with R_SHL_IMM */
	R_ACC_REG,    /* acc     <- reg                       50  chain */
	R_REG_ACC,    /* reg     <- acc                       50  chain: cycle with R_ACC_REG */
	R_ACC_MUL,    /* acc     <- mul.i(acc, reg)          200 */
	R_ACC_ADD,    /* acc     <- add.i(acc, reg)           50 */
	R_STORE,      /* stmt    <- store.i(addr, reg)       300 */
	R_STORE_IMM,  /* stmt    <- store.i(addr, imm)       300 */
	R_STMT_REG,   /* stmt    <- reg                       10  chain (expression statement) */
	NRULES
};

#define BASE2(l, o, a, b, c) {.lhs = (l), .op = (o), .nkids = 2, .kid = {(a), (b), 0}, .cost = (c), .origin = -1, .emits = true}
#define BASE1(l, o, a, c) {.lhs = (l), .op = (o), .nkids = 1, .kid = {(a), 0, 0}, .cost = (c), .origin = -1, .emits = true}
#define LEAF(l, o, c) {.lhs = (l), .op = (o), .nkids = 0, .cost = (c), .origin = -1, .emits = true}
#define RLEAF(l, o, c, l_, h_)                                                                                         \
	{.lhs = (l), .op = (o), .nkids = 0, .cost = (c), .has_range = true, .lo = (l_), .hi = (h_), .origin = -1,      \
	 .emits = true}
#define CHAIN(l, r, c) {.lhs = (l), .op = -1, .nkids = 1, .kid = {(r), 0, 0}, .cost = (c), .origin = -1, .emits = true}

static const BursRule rules[NRULES] = {
	[R_REG_LEAF] = LEAF(NT_REG, SEL_REG_I, 0),
	[R_IMM] = RLEAF(NT_IMM, SEL_CONST_I, 0, INT32_MIN, INT32_MAX),
	[R_MOV] = LEAF(NT_REG, SEL_CONST_I, 100),
	[R_ZERO] = RLEAF(NT_REG, SEL_CONST_I, 50, 0, 0),
	[R_SCALE] = RLEAF(NT_SCALE, SEL_CONST_I, 0, 0, 3),
	[R_ADD_RR] = BASE2(NT_REG, SEL_ADD_I, NT_REG, NT_REG, 100),
	[R_ADD_RI] = BASE2(NT_REG, SEL_ADD_I, NT_REG, NT_IMM, 80),
	[R_ADD_IR] = BASE2(NT_REG, SEL_ADD_I, NT_IMM, NT_REG, 80),
	[R_ADDR_REG] = CHAIN(NT_ADDR, NT_REG, 0),
	[R_LEA] = CHAIN(NT_REG, NT_ADDR, 100),
	[R_ADDR_IMM] = CHAIN(NT_ADDR, NT_IMM, 0),
	[R_ADDR_DISP] = BASE2(NT_ADDR, SEL_ADD_I, NT_REG, NT_IMM, 0),
	[R_ADDR_INDEX] = {.lhs = NT_ADDR, .op = SEL_ADD_I, .nkids = 2, .kid = {NT_REG, NT_SCALED, 0}, .cost = 0,
			  .origin = 7, .emits = true},
	[R_SCALED] = {.lhs = NT_SCALED, .op = SEL_SHL_I, .nkids = 2, .kid = {NT_REG, NT_SCALE, 0}, .cost = 0,
		      .origin = 7, .emits = false},
	[R_LOAD] = BASE1(NT_REG, SEL_LOAD_I, NT_ADDR, 300),
	[R_MUL] = BASE2(NT_REG, SEL_MUL_I, NT_REG, NT_REG, 300),
	[R_SHL_IMM] = BASE2(NT_REG, SEL_SHL_I, NT_REG, NT_IMM, 100),
	[R_SHL_SCALE] = BASE2(NT_REG, SEL_SHL_I, NT_REG, NT_SCALE, 100),
	[R_ACC_REG] = CHAIN(NT_ACC, NT_REG, 50),
	[R_REG_ACC] = CHAIN(NT_REG, NT_ACC, 50),
	[R_ACC_MUL] = BASE2(NT_ACC, SEL_MUL_I, NT_ACC, NT_REG, 200),
	[R_ACC_ADD] = BASE2(NT_ACC, SEL_ADD_I, NT_ACC, NT_REG, 50),
	[R_STORE] = BASE2(NT_STMT, SEL_STORE_I, NT_ADDR, NT_REG, 300),
	[R_STORE_IMM] = BASE2(NT_STMT, SEL_STORE_I, NT_ADDR, NT_IMM, 300),
	[R_STMT_REG] = CHAIN(NT_STMT, NT_REG, 10),
};

static const BursGrammar grammar = {.nnts = NNT, .nt_names = nt_names, .nrules = NRULES, .rules = rules};

/* ---- trees ---------------------------------------------------------------- */

static BursNode *mk(int op, int64_t ival, BursNode *a, BursNode *b)
{
	BursNode *n = calloc(1, sizeof *n);
	cr_assert_not_null(n);
	n->op = op;
	n->ival = ival;
	n->kid[0] = a;
	n->kid[1] = b;
	return n;
}

static BursNode *reg(void) { return mk(SEL_REG_I, 0, NULL, NULL); }
static BursNode *cst(int64_t v) { return mk(SEL_CONST_I, v, NULL, NULL); }
static BursNode *add(BursNode *a, BursNode *b) { return mk(SEL_ADD_I, 0, a, b); }
static BursNode *mul(BursNode *a, BursNode *b) { return mk(SEL_MUL_I, 0, a, b); }
static BursNode *shl(BursNode *a, BursNode *b) { return mk(SEL_SHL_I, 0, a, b); }
static BursNode *load(BursNode *a) { return mk(SEL_LOAD_I, 0, a, NULL); }
static BursNode *store(BursNode *a, BursNode *b) { return mk(SEL_STORE_I, 0, a, b); }

static void free_tree(BursNode *n)
{
	if (!n)
		return;
	for (int i = 0; i < 3; i++)
		free_tree(n->kid[i]);
	free(n->cost);
	free(n->rule);
	free(n);
}

static int tree_size(const BursNode *n)
{
	if (!n)
		return 0;
	return 1 + tree_size(n->kid[0]) + tree_size(n->kid[1]) + tree_size(n->kid[2]);
}

static int tree_depth(const BursNode *n)
{
	if (!n)
		return 0;
	int d = 0;
	for (int i = 0; i < 3; i++) {
		int k = tree_depth(n->kid[i]);
		d = k > d ? k : d;
	}
	return d + 1;
}

static int arity(const BursNode *n)
{
	int k = 0;
	for (int i = 0; i < 3; i++)
		if (n->kid[i])
			k = i + 1;
	return k;
}

/* xorshift64*: fixed seeds, so every failing tree can be rebuilt. */
typedef struct {
	uint64_t s;
} Rng;

static uint64_t rnd(Rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1DULL;
}

static unsigned pick(Rng *r, unsigned n) { return (unsigned)(rnd(r) >> 33) % n; }

static Rng rng_seed(uint64_t seed)
{
	Rng r = {seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL};
	if (!r.s)
		r.s = 1;
	rnd(&r);
	return r;
}

static int64_t random_const(Rng *r)
{
	/* Values on both sides of every range bound in the grammar. */
	static const int64_t interesting[] = {
		0, 1, 2, 3, 4, -1, 8, 4096, -4096, INT32_MAX, INT32_MIN, (int64_t)INT32_MAX + 1, (int64_t)INT32_MIN - 1,
		(int64_t)1 << 40, INT64_MIN, INT64_MAX,
	};
	if (pick(r, 4) == 0)
		return (int64_t)pick(r, 200) - 100;
	return interesting[pick(r, sizeof interesting / sizeof *interesting)];
}

static BursNode *gen_leaf(Rng *r) { return pick(r, 5) < 2 ? reg() : cst(random_const(r)); }

/* A value (sort i) tree at most depth edges deep. */
static BursNode *gen_value(Rng *r, int depth)
{
	if (depth == 0 || pick(r, 100) < 25)
		return gen_leaf(r);
	switch (pick(r, 10)) {
	case 0: case 1: case 2: case 3: {
		BursNode *a = gen_value(r, depth - 1);
		return add(a, pick(r, 3) == 0 ? cst(random_const(r)) : gen_value(r, depth - 1));
	}
	case 4: case 5: {
		BursNode *a = gen_value(r, depth - 1);
		return mul(a, gen_value(r, depth - 1));
	}
	case 6: case 7: {
		/* Mostly constant shift amounts; a computed one is underivable. */
		BursNode *a = gen_value(r, depth - 1);
		return shl(a, pick(r, 12) ? cst(random_const(r)) : gen_value(r, depth - 1));
	}
	default:
		return load(gen_value(r, depth - 1));
	}
}

/* A well-sorted tree, at most maxdepth edges deep: a store (sort x) at the
 * root, or a value. */
static BursNode *gen_tree(Rng *r, int maxdepth)
{
	int depth = 1 + (int)pick(r, (unsigned)maxdepth);
	if (pick(r, 4) == 0) {
		BursNode *a = gen_value(r, depth - 1);
		return store(a, gen_value(r, depth - 1));
	}
	return gen_value(r, depth);
}

/* ---- the independent oracle: exhaustive search over covers ----------------
 * bf_min tries every rule whose lhs is nt at n: for a base rule whose op and
 * range match, every derivation of each kid from the rule's kid
 * nonterminal (the kids' covers are chosen independently, so the cheapest
 * cover through that rule pairs the kids' cheapest covers); for a chain
 * rule, every derivation of n from its rhs, never repeating a nonterminal on
 * one node's chain (a repeat is a cycle of nonnegative cost, never
 * cheaper), which makes the search finite.  No tables, no memo. */

static bool rule_matches(const BursRule *r, const BursNode *n)
{
	if (r->op != n->op || r->nkids != arity(n))
		return false;
	if (r->has_range && (n->ival < r->lo || n->ival > r->hi))
		return false;
	return true;
}

static int64_t bf_min(const BursGrammar *g, const BursNode *n, int nt, unsigned seen)
{
	int64_t best = BURS_INF;
	seen |= 1u << nt;
	for (int i = 0; i < g->nrules; i++) {
		const BursRule *r = &g->rules[i];
		if (r->lhs != nt)
			continue;
		int64_t c = r->cost;
		if (r->op < 0) {
			if (seen & (1u << r->kid[0]))
				continue;
			c += bf_min(g, n, r->kid[0], seen);
		} else {
			if (!rule_matches(r, n))
				continue;
			for (int k = 0; k < r->nkids && c < best; k++)
				c += bf_min(g, n->kid[k], r->kid[k], 0);
		}
		if (c < best)
			best = c;
	}
	return best >= BURS_INF ? BURS_INF : best;
}

/* The literal version: enumerate every complete cover one at a time by
 * backtracking over a stack of pending (node, nonterminal) goals, counting
 * them.  Exponential, so only for small trees. */
enum { MAXGOALS = 256 };

typedef struct {
	const BursNode *n;
	int nt;
	unsigned seen;
} Goal;

typedef struct {
	const BursGrammar *g;
	Goal goal[MAXGOALS];
	int ngoals;
	int64_t cost;
	int64_t best;
	long covers, cap;
} Enum;

static void enumerate(Enum *e)
{
	if (e->covers >= e->cap)
		return;
	if (e->ngoals == 0) {
		e->covers++;
		if (e->cost < e->best)
			e->best = e->cost;
		return;
	}
	Goal goal = e->goal[--e->ngoals];
	for (int i = 0; i < e->g->nrules; i++) {
		const BursRule *r = &e->g->rules[i];
		if (r->lhs != goal.nt)
			continue;
		int saved = e->ngoals;
		if (r->op < 0) {
			if (goal.seen & (1u << r->kid[0]))
				continue;
			e->goal[e->ngoals++] = (Goal){goal.n, r->kid[0], goal.seen | 1u << r->kid[0]};
		} else {
			if (!rule_matches(r, goal.n))
				continue;
			cr_assert_leq(e->ngoals + r->nkids, MAXGOALS);
			for (int k = 0; k < r->nkids; k++)
				e->goal[e->ngoals++] = (Goal){goal.n->kid[k], r->kid[k], 1u << r->kid[k]};
		}
		e->cost += r->cost;
		enumerate(e);
		e->cost -= r->cost;
		e->ngoals = saved;
	}
	e->goal[e->ngoals++] = goal;
}

/* Minimum over all covers of n from nt (BURS_INF if none); *covers gets
 * their number.  Returns false if there were more than cap. */
static bool enum_min(const BursGrammar *g, const BursNode *n, int nt, long cap, int64_t *min, long *covers)
{
	Enum *e = calloc(1, sizeof *e);
	cr_assert_not_null(e);
	e->g = g;
	e->best = BURS_INF;
	e->cap = cap + 1;
	e->goal[e->ngoals++] = (Goal){n, nt, 1u << nt};
	enumerate(e);
	bool ok = e->covers <= cap;
	*min = e->best;
	*covers = e->covers;
	free(e);
	return ok;
}

/* ---- checking burs_reduce's walk ------------------------------------------
 * The visits come in post-order, so a stack rebuilds the derivation: each
 * visited rule pops the (node, nonterminal) results its kids derived and
 * pushes its own.  Each result must cost what the labeller claims. */
enum { MAXSTACK = 1024 };

typedef struct {
	BursNode *n;
	int nt;
	int rule;
	int64_t cost;
} Derived;

typedef struct {
	Derived st[MAXSTACK];
	int sp;
	int64_t sum;
	int visits;
	int seq[64]; /* first visited rules, for the hand-written trees */
} Walk;

static Derived pop(Walk *w)
{
	cr_assert_gt(w->sp, 0, "a rule was visited before the derivations of its kids");
	return w->st[--w->sp];
}

static void check_visit(const BursGrammar *g, int ri, BursNode *n, void *ctx)
{
	Walk *w = ctx;
	cr_assert(ri >= 0 && ri < g->nrules, "visited rule %d out of range", ri);
	const BursRule *r = &g->rules[ri];
	if (w->visits < 64)
		w->seq[w->visits] = ri;
	w->visits++;
	w->sum += r->cost;
	int64_t c = r->cost;
	if (r->op < 0) {
		Derived d = pop(w);
		cr_assert_eq(d.n, n, "chain rule %d visited at another node than its rhs", ri);
		cr_assert_eq(d.nt, r->kid[0], "chain rule %d: rhs %s, derived %s", ri, nt_names[r->kid[0]],
			     nt_names[d.nt]);
		cr_assert(g->rules[d.rule].emits, "helper rule %d consumed by a chain rule", d.rule);
		c += d.cost;
	} else {
		cr_assert_eq(r->op, n->op, "rule %d (op %s) visited at a %s node", ri, sel_info[r->op].name,
			     sel_info[n->op].name);
		cr_assert_eq(r->nkids, arity(n));
		if (r->has_range)
			cr_assert(n->ival >= r->lo && n->ival <= r->hi, "rule %d: const %lld outside [%lld, %lld]", ri,
				  (long long)n->ival, (long long)r->lo, (long long)r->hi);
		for (int k = r->nkids - 1; k >= 0; k--) {
			Derived d = pop(w);
			cr_assert_eq(d.n, n->kid[k], "rule %d: kid %d not derived before it", ri, k);
			cr_assert_eq(d.nt, r->kid[k], "rule %d: kid %d wants %s, derived %s", ri, k,
				     nt_names[r->kid[k]], nt_names[d.nt]);
			const BursRule *kr = &g->rules[d.rule];
			if (!kr->emits)
				cr_assert_eq(kr->origin, r->origin, "helper rule %d consumed outside its pattern", d.rule);
			c += d.cost;
		}
	}
	cr_assert_eq(c, burs_cost(n, r->lhs), "rule %d: sub-derivation of %s costs %lld, labelled %d", ri,
		     nt_names[r->lhs], (long long)c, burs_cost(n, r->lhs));
	cr_assert_lt(w->sp, MAXSTACK);
	w->st[w->sp++] = (Derived){n, r->lhs, ri, c};
}

/* Reduce root from nt, checking the walk; returns what burs_reduce did. */
static bool reduce_checked(BursNode *root, int nt, Walk *w)
{
	memset(w, 0, sizeof *w);
	bool ok = burs_reduce(&grammar, root, nt, check_visit, w);
	if (ok) {
		cr_assert_eq(w->sp, 1, "the walk left %d derivations, not one", w->sp);
		cr_assert_eq(w->st[0].n, root);
		cr_assert_eq(w->st[0].nt, nt);
		cr_assert_eq(w->sum, burs_cost(root, nt), "visited rules cost %lld, burs_cost says %d",
			     (long long)w->sum, burs_cost(root, nt));
	}
	return ok;
}

/* ---- tests ------------------------------------------------------------------ */

enum { NTREES = 5000, MAXDEPTH = 6 };

Test(burs, grammar_is_normalized)
{
	for (int i = 0; i < NRULES; i++) {
		const BursRule *r = &rules[i];
		cr_assert(r->lhs > NT_NONE && r->lhs < NNT, "rule %d", i);
		if (r->op < 0) {
			cr_assert_eq(r->nkids, 1, "rule %d", i);
			cr_assert(r->kid[0] > NT_NONE && r->kid[0] < NNT && r->kid[0] != r->lhs, "rule %d", i);
		} else {
			cr_assert_eq(r->nkids, sel_info[r->op].nkids, "rule %d", i);
			for (int k = 0; k < r->nkids; k++)
				cr_assert(r->kid[k] > NT_NONE && r->kid[k] < NNT, "rule %d", i);
		}
		cr_assert_geq(r->cost, 0);
	}
}

Test(burs, optimal_on_random_trees)
{
	long derivable = 0, impossible = 0, nodes = 0, deep_derivable = 0;
	int deepest = 0;
	for (uint64_t seed = 1; seed <= NTREES; seed++) {
		Rng r = rng_seed(seed);
		BursNode *t = gen_tree(&r, MAXDEPTH);
		nodes += tree_size(t);
		int d = tree_depth(t);
		deepest = d > deepest ? d : deepest;
		burs_label(&grammar, t);
		for (int nt = 0; nt < NNT; nt++) {
			int64_t want = bf_min(&grammar, t, nt, 0);
			int32_t got = burs_cost(t, nt);
			/* A rule is chosen exactly when there is a derivation. */
			cr_assert_eq(t->rule[nt] >= 0, got < BURS_INF, "seed %llu, nt %s: rule %d, cost %d",
				     (unsigned long long)seed, nt_names[nt], t->rule[nt], got);
			cr_assert_eq(got, want, "seed %llu, nt %s: labeller %d, exhaustive search %lld",
				     (unsigned long long)seed, nt_names[nt], got, (long long)want);
			if (want < BURS_INF)
				derivable++;
			else
				impossible++;
		}
		if (d > MAXDEPTH - 2 && burs_cost(t, NT_STMT) < BURS_INF)
			deep_derivable++;
		burs_unlabel(t);
		free_tree(t);
	}
	/* The trees exercised both outcomes, reached the depth asked for, and
	 * many deep ones have covers. */
	cr_assert_gt(derivable, 2 * NTREES);
	cr_assert_gt(impossible, 2 * NTREES);
	cr_assert_eq(deepest, MAXDEPTH + 1);
	cr_assert_gt(deep_derivable, NTREES / 10);
	cr_log_info("burs: %d trees, %ld nodes, up to %d levels; (tree, nt) pairs: %ld derivable, %ld impossible; "
		    "%ld derivable trees of %d+ levels",
		    NTREES, nodes, deepest, derivable, impossible, deep_derivable, MAXDEPTH - 1);
}

Test(burs, optimal_against_every_cover)
{
	/* Small trees: list every cover explicitly. */
	long checked = 0, covers_total = 0, maxcovers = 0;
	for (uint64_t seed = 1; seed <= NTREES; seed++) {
		Rng r = rng_seed(seed ^ 0xABCDEF);
		BursNode *t = gen_tree(&r, 4);
		burs_label(&grammar, t);
		for (int nt = 0; nt < NNT; nt++) {
			int64_t want;
			long covers;
			if (!enum_min(&grammar, t, nt, 200000, &want, &covers))
				continue;
			cr_assert_eq(burs_cost(t, nt), want, "seed %llu, nt %s: labeller %d, best of %ld covers %lld",
				     (unsigned long long)seed, nt_names[nt], burs_cost(t, nt), covers,
				     (long long)want);
			cr_assert_eq(covers == 0, want >= BURS_INF);
			checked++;
			covers_total += covers;
			maxcovers = covers > maxcovers ? covers : maxcovers;
		}
		burs_unlabel(t);
		free_tree(t);
	}
	cr_assert_gt(checked, NTREES * NNT * 9 / 10);
	cr_log_info("burs: %ld (tree, nt) pairs against %ld covers (at most %ld)", checked, covers_total, maxcovers);
}

Test(burs, reduce_walks_an_optimal_cover)
{
	long reduced = 0;
	for (uint64_t seed = 1; seed <= NTREES; seed++) {
		Rng r = rng_seed(seed);
		BursNode *t = gen_tree(&r, MAXDEPTH);
		burs_label(&grammar, t);
		for (int nt = 0; nt < NNT; nt++) {
			Walk *w = malloc(sizeof *w);
			cr_assert_not_null(w);
			bool ok = reduce_checked(t, nt, w);
			cr_assert_eq(ok, burs_cost(t, nt) < BURS_INF, "seed %llu, nt %s", (unsigned long long)seed,
				     nt_names[nt]);
			if (!ok)
				cr_assert_eq(w->visits, 0);
			reduced += ok;
			free(w);
		}
		/* A NULL visitor walks the same derivation. */
		cr_assert_eq(burs_reduce(&grammar, t, NT_STMT, NULL, NULL), burs_cost(t, NT_STMT) < BURS_INF);
		burs_unlabel(t);
		free_tree(t);
	}
	cr_assert_gt(reduced, NTREES);
}

/* Label, check cost and walk from nt, and compare the visited rules. */
static void expect(BursNode *t, int nt, int32_t cost, int nseq, const int *seq)
{
	burs_label(&grammar, t);
	cr_assert_eq(burs_cost(t, nt), cost, "cost from %s: %d, expected %d", nt_names[nt], burs_cost(t, nt), cost);
	cr_assert_eq(bf_min(&grammar, t, nt, 0), cost);
	Walk *w = malloc(sizeof *w);
	cr_assert_not_null(w);
	cr_assert(reduce_checked(t, nt, w));
	if (seq) {
		cr_assert_eq(w->visits, nseq);
		for (int i = 0; i < nseq; i++)
			cr_assert_eq(w->seq[i], seq[i], "visit %d: rule %d, expected %d", i, w->seq[i], seq[i]);
	}
	free(w);
	burs_unlabel(t);
}

#define ANY 0, NULL
#define SEQ(...) (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), ((int[]){__VA_ARGS__})

Test(burs, load_folds_displacement)
{
	/* load.i(add.i(reg.i, 8)): one addressing mode, [r + 8]. */
	BursNode *t = load(add(reg(), cst(8)));
	expect(t, NT_REG, 300, SEQ(R_REG_LEAF, R_IMM, R_ADDR_DISP, R_LOAD));
	/* As a value the add costs 80 (add r, imm); its address is free. */
	burs_label(&grammar, t);
	cr_assert_eq(burs_cost(t->kid[0], NT_REG), 80);
	cr_assert_eq(t->kid[0]->rule[NT_REG], R_ADD_RI);
	cr_assert_eq(burs_cost(t->kid[0], NT_ADDR), 0);
	cr_assert_eq(t->kid[0]->rule[NT_ADDR], R_ADDR_DISP);
	cr_assert_eq(burs_cost(t, NT_STMT), 310);
	cr_assert_eq(t->rule[NT_STMT], R_STMT_REG);
	cr_assert_eq(burs_cost(t, NT_ACC), 350);
	cr_assert_eq(burs_cost(t, NT_IMM), BURS_INF);
	cr_assert_eq(burs_cost(t, NT_NONE), BURS_INF);
	burs_unlabel(t);
	free_tree(t);
}

Test(burs, wide_displacement_needs_mov)
{
	/* 1 << 40 is no imm32: mov it into a register, add, then load. */
	BursNode *t = load(add(reg(), cst((int64_t)1 << 40)));
	expect(t, NT_REG, 500, SEQ(R_REG_LEAF, R_MOV, R_ADD_RR, R_ADDR_REG, R_LOAD));
	free_tree(t);
	/* The range bounds are inclusive. */
	t = load(add(reg(), cst(INT32_MAX)));
	expect(t, NT_REG, 300, SEQ(R_REG_LEAF, R_IMM, R_ADDR_DISP, R_LOAD));
	free_tree(t);
	t = load(add(reg(), cst((int64_t)INT32_MAX + 1)));
	expect(t, NT_REG, 500, ANY);
	free_tree(t);
	t = load(add(reg(), cst(INT32_MIN)));
	expect(t, NT_REG, 300, ANY);
	free_tree(t);
}

Test(burs, scaled_index_through_helper)
{
	/* load.i(add.i(reg.i, shl.i(reg.i, 3))): [r + r*8] via _scaled. */
	BursNode *t = load(add(reg(), shl(reg(), cst(3))));
	expect(t, NT_REG, 300, SEQ(R_REG_LEAF, R_REG_LEAF, R_SCALE, R_SCALED, R_ADDR_INDEX, R_LOAD));
	free_tree(t);
	/* A shift of 5 has no scale: shl r, 5 then add r, r. */
	t = load(add(reg(), shl(reg(), cst(5))));
	expect(t, NT_REG, 500, SEQ(R_REG_LEAF, R_REG_LEAF, R_IMM, R_SHL_IMM, R_ADD_RR, R_ADDR_REG, R_LOAD));
	free_tree(t);
	/* A computed shift amount cannot be derived at all. */
	t = shl(reg(), reg());
	burs_label(&grammar, t);
	for (int nt = 0; nt < NNT; nt++)
		cr_assert_eq(burs_cost(t, nt), BURS_INF, "nt %s", nt_names[nt]);
	burs_unlabel(t);
	free_tree(t);
}

Test(burs, constants_and_ties)
{
	/* Zero: xor (50) beats mov (100); an imm32 via lea [imm] ties mov. */
	BursNode *t = cst(0);
	expect(t, NT_REG, 50, SEQ(R_ZERO));
	expect(t, NT_ADDR, 0, SEQ(R_IMM, R_ADDR_IMM));
	expect(t, NT_SCALE, 0, SEQ(R_SCALE));
	free_tree(t);
	t = cst(5);
	expect(t, NT_REG, 100, ANY);
	expect(t, NT_ACC, 150, ANY);
	cr_assert_eq(bf_min(&grammar, t, NT_SCALE, 0), BURS_INF);
	free_tree(t);
	t = cst(INT64_MIN);
	expect(t, NT_REG, 100, SEQ(R_MOV));
	expect(t, NT_ADDR, 100, SEQ(R_MOV, R_ADDR_REG));
	burs_label(&grammar, t);
	cr_assert_eq(burs_cost(t, NT_IMM), BURS_INF);
	burs_unlabel(t);
	free_tree(t);
	/* shl by 2 matches both shift rules at equal cost. */
	t = shl(reg(), cst(2));
	expect(t, NT_REG, 100, ANY);
	expect(t, NT_SCALED, 0, SEQ(R_REG_LEAF, R_SCALE, R_SCALED));
	burs_label(&grammar, t);
	cr_assert(t->rule[NT_REG] == R_SHL_IMM || t->rule[NT_REG] == R_SHL_SCALE);
	burs_unlabel(t);
	free_tree(t);
	/* mul: reg <- mul.i (300) ties acc <- reg, acc <- mul.i, reg <- acc. */
	t = mul(reg(), reg());
	expect(t, NT_REG, 300, ANY);
	expect(t, NT_ACC, 250, SEQ(R_REG_LEAF, R_ACC_REG, R_REG_LEAF, R_ACC_MUL));
	free_tree(t);
	/* The accumulator chain pays off over two multiplies: 250 + 200 + 50. */
	t = mul(mul(reg(), reg()), reg());
	expect(t, NT_REG, 500, ANY);
	free_tree(t);
}

Test(burs, chain_cycles_terminate)
{
	/* reg <-> addr and reg <-> acc are cycles of positive cost. */
	BursNode *t = reg();
	expect(t, NT_REG, 0, SEQ(R_REG_LEAF));
	expect(t, NT_ADDR, 0, SEQ(R_REG_LEAF, R_ADDR_REG));
	expect(t, NT_ACC, 50, SEQ(R_REG_LEAF, R_ACC_REG));
	expect(t, NT_STMT, 10, SEQ(R_REG_LEAF, R_STMT_REG));
	burs_label(&grammar, t);
	cr_assert_eq(burs_cost(t, NT_IMM), BURS_INF);
	cr_assert_eq(burs_cost(t, NT_SCALED), BURS_INF);
	burs_unlabel(t);
	free_tree(t);
}

Test(burs, store_forms)
{
	/* store.i(add.i(reg, 16), 7): mov [r + 16], imm. */
	BursNode *t = store(add(reg(), cst(16)), cst(7));
	expect(t, NT_STMT, 300, SEQ(R_REG_LEAF, R_IMM, R_ADDR_DISP, R_IMM, R_STORE_IMM));
	free_tree(t);
	/* store.i(4096, load.i(reg)): absolute address, value from a load. */
	t = store(cst(4096), load(reg()));
	expect(t, NT_STMT, 600, SEQ(R_IMM, R_ADDR_IMM, R_REG_LEAF, R_ADDR_REG, R_LOAD, R_STORE));
	free_tree(t);
}

Test(burs, reduce_fails_when_underivable)
{
	/* A store derives only stmt: not a value. */
	BursNode *t = store(reg(), reg());
	burs_label(&grammar, t);
	cr_assert_eq(burs_cost(t, NT_STMT), 300);
	for (int nt = 0; nt < NNT; nt++) {
		if (nt == NT_STMT)
			continue;
		cr_assert_eq(burs_cost(t, nt), BURS_INF);
		int visits = 0;
		Walk *w = malloc(sizeof *w);
		cr_assert_not_null(w);
		cr_assert_not(reduce_checked(t, nt, w), "store reduced from %s", nt_names[nt]);
		visits = w->visits;
		free(w);
		cr_assert_eq(visits, 0);
	}
	burs_unlabel(t);
	free_tree(t);
	/* Underivable deep inside: the shift amount is computed. */
	t = store(reg(), add(reg(), shl(reg(), load(reg()))));
	burs_label(&grammar, t);
	for (int nt = 0; nt < NNT; nt++) {
		cr_assert_eq(burs_cost(t, nt), BURS_INF);
		cr_assert_not(burs_reduce(&grammar, t, nt, NULL, NULL));
	}
	burs_unlabel(t);
	/* Unlabelled trees have no derivation. */
	cr_assert_eq(burs_cost(t, NT_STMT), BURS_INF);
	cr_assert_not(burs_reduce(&grammar, t, NT_STMT, NULL, NULL));
	free_tree(t);
}

Test(burs, relabel_is_idempotent)
{
	Rng r = rng_seed(4242);
	BursNode *t = gen_tree(&r, MAXDEPTH);
	burs_label(&grammar, t);
	int32_t before[NNT];
	for (int nt = 0; nt < NNT; nt++)
		before[nt] = burs_cost(t, nt);
	burs_label(&grammar, t); /* frees and recomputes */
	for (int nt = 0; nt < NNT; nt++)
		cr_assert_eq(burs_cost(t, nt), before[nt]);
	burs_unlabel(t);
	burs_unlabel(t);
	free_tree(t);
}
