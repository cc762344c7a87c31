/* BURS labeller and reducer over normalized rule tables (see burs.h). */
#include <stdlib.h>

#include "burs.h"
#include "sel.h"
#include "util.h"

static bool applies(const BursRule *r, const BursNode *n)
{
	if (r->op != n->op)
		return false;
	return !r->has_range || (n->ival >= r->lo && n->ival <= r->hi);
}

void burs_label(const BursGrammar *g, BursNode *n)
{
	int nkids = 0;
	for (int i = 0; i < 3; i++)
		if (n->kid[i]) {
			burs_label(g, n->kid[i]);
			nkids = i + 1;
		}
	free(n->cost);
	free(n->rule);
	n->cost = xmalloc(g->nnts * sizeof *n->cost);
	n->rule = xmalloc(g->nnts * sizeof *n->rule);
	for (int i = 0; i < g->nnts; i++) {
		n->cost[i] = BURS_INF;
		n->rule[i] = -1;
	}
	int lo = 0, hi = g->nrules;
	if (g->by_op && n->op >= 0 && n->op < SEL_COUNT) {
		lo = g->by_op[n->op];
		hi = g->by_op[n->op + 1];
	}
	for (int ri = lo; ri < hi; ri++) {
		int r = g->by_op ? g->op_rules[ri] : ri;
		const BursRule *rule = &g->rules[r];
		if (rule->op < 0 || rule->nkids != nkids || !applies(rule, n))
			continue;
		int32_t c = rule->cost;
		for (int k = 0; k < rule->nkids && c < BURS_INF; k++) {
			int32_t kc = n->kid[k]->cost[rule->kid[k]];
			c = kc >= BURS_INF ? BURS_INF : c + kc;
		}
		if (c < n->cost[rule->lhs]) {
			n->cost[rule->lhs] = c;
			n->rule[rule->lhs] = (int16_t)r;
		}
	}
	/* Close over chain rules; costs only fall, so this ends. */
	int clo = g->by_op ? g->by_op[SEL_COUNT] : 0, chi = g->by_op ? g->by_op[SEL_COUNT + 1] : g->nrules;
	for (bool changed = true; changed;) {
		changed = false;
		for (int ri = clo; ri < chi; ri++) {
			int r = g->by_op ? g->op_rules[ri] : ri;
			const BursRule *rule = &g->rules[r];
			if (rule->op >= 0)
				continue;
			int32_t from = n->cost[rule->kid[0]];
			if (from >= BURS_INF)
				continue;
			int32_t c = from + rule->cost;
			if (c < n->cost[rule->lhs]) {
				n->cost[rule->lhs] = c;
				n->rule[rule->lhs] = (int16_t)r;
				changed = true;
			}
		}
	}
}

void burs_unlabel(BursNode *n)
{
	for (int i = 0; i < 3; i++)
		if (n->kid[i])
			burs_unlabel(n->kid[i]);
	free(n->cost);
	free(n->rule);
	n->cost = NULL;
	n->rule = NULL;
}

int32_t burs_cost(const BursNode *n, int nt)
{
	return n->cost ? n->cost[nt] : BURS_INF;
}

bool burs_reduce(const BursGrammar *g, BursNode *n, int nt, BursVisit visit, void *ctx)
{
	if (!n->rule || n->rule[nt] < 0)
		return false;
	int r = n->rule[nt];
	const BursRule *rule = &g->rules[r];
	if (rule->op < 0) {
		if (!burs_reduce(g, n, rule->kid[0], visit, ctx))
			return false;
	} else {
		for (int k = 0; k < rule->nkids; k++)
			if (!burs_reduce(g, n->kid[k], rule->kid[k], visit, ctx))
				return false;
	}
	if (visit)
		visit(g, r, n, ctx);
	return true;
}
