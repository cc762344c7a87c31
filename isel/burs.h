/* A table-driven bottom-up rewrite (BURS / iburg-style) labeller.
 *
 * The grammar is normalized: every rule is either a chain rule
 * (lhs <- nonterminal, op == -1) or a base rule (lhs <- op(nt, ...)),
 * where op is a selection-tree operation (sel.h) and the kids are
 * nonterminals.  gen/mdgen normalizes each pattern of an .md file into such
 * rules (nested operators get helper nonterminals) and emits the tables;
 * mdgen itself also runs this labeller on probe trees to check that every
 * native operation can be selected.
 *
 * Labelling computes, for every node and nonterminal, the minimum cost of
 * deriving the node's subtree from that nonterminal (dynamic programming
 * over costs, closing over chain rules); reduction walks the chosen rules. */
#ifndef GDCC_BURS_H
#define GDCC_BURS_H

#include <stdbool.h>
#include <stdint.h>

enum { BURS_INF = 1 << 28 };

typedef struct {
	int16_t lhs;       /* nonterminal this rule derives */
	int16_t op;        /* SelOp, or -1 for a chain rule */
	int16_t nkids;     /* base: the op's arity; chain: 1 */
	int16_t kid[3];    /* base: the kids' nonterminals; chain: kid[0] = rhs */
	int32_t cost;      /* hundredths of a cycle */
	bool has_range;    /* const leaf: applies only when lo <= value <= hi */
	int64_t lo, hi;
	int32_t origin;    /* the .md rule this came from (-1: none) */
	bool emits;        /* the root of that rule's pattern: emit it here */
} BursRule;

typedef struct {
	int nnts;
	const char *const *nt_names;
	int nrules;
	const BursRule *rules;
	/* optional (NULL: every rule is tried at every node): the rules by
	 * operator, rules[op_rules[by_op[op] .. by_op[op + 1])] for op <
	 * SEL_COUNT, the chain rules at op = SEL_COUNT */
	const int32_t *by_op;
	const int32_t *op_rules;
} BursGrammar;

typedef struct BursNode {
	int op;                    /* SelOp */
	struct BursNode *kid[3];
	int64_t ival;              /* const.i value */
	double fval;               /* const.f value */
	const char *sym;           /* addr.sym symbol */
	int32_t vreg;              /* reg.* leaf: its virtual register; isel: the result's */
	int32_t form;              /* isel: the form instance derived here, or -1 */
	int32_t *cost;             /* [nnts], set by burs_label */
	int16_t *rule;             /* [nnts]: the chosen rule, -1 if none */
} BursNode;

/* Label the tree rooted at n (kids first).  Allocates n->cost/n->rule. */
void burs_label(const BursGrammar *g, BursNode *n);
/* Free what burs_label allocated, for the whole tree. */
void burs_unlabel(BursNode *n);
/* Cost of deriving n from nonterminal nt (BURS_INF when impossible). */
int32_t burs_cost(const BursNode *n, int nt);

/* Walk the chosen derivation of n from nt, calling visit(rule, node, ctx)
 * after the rule's kids have been visited (post-order).  Returns false if
 * n cannot be derived from nt. */
typedef void (*BursVisit)(const BursGrammar *g, int rule, BursNode *n, void *ctx);
bool burs_reduce(const BursGrammar *g, BursNode *n, int nt, BursVisit visit, void *ctx);

#endif
