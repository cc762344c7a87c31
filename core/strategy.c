/* The lowering strategies' params: core/lowerings.def as a table
 * (core/strategy.h). */
#include <stdio.h>
#include <string.h>

#include "strategy.h"

enum {
	STRATEGY_ID_NONE,
#define STRATEGY(name, what) STRATEGY_ID_##name,
#include "lowerings.def"
};

#define INT SPARAM_INT
#define FLOAT SPARAM_FLOAT
#define FLOAT_GT SPARAM_FLOAT_GT
#define REQUIRED true
#define OPTIONAL false
const StrategyParam strategy_params[] = {
#define STRATEGY_PARAM(s, n, type, lo, hi, need, what) {STRATEGY_ID_##s, #s, #n, (type), (lo), (hi), (need), NULL, NULL, (what)},
#define STRATEGY_PARAM_CHOICE(s, n, words, need, what) {STRATEGY_ID_##s, #s, #n, SPARAM_CHOICE, 0, 0, (need), (words), NULL, (what)},
#define STRATEGY_PARAM_SAME(s, n, other, why) {STRATEGY_ID_##s, #s, #n, SPARAM_SAME, 0, 0, true, NULL, #other, (why)},
#include "lowerings.def"
	{0, NULL, NULL, SPARAM_INT, 0, 0, false, NULL, NULL, NULL},
};
const int nstrategy_params = (int)(sizeof strategy_params / sizeof *strategy_params) - 1;

void strategy_param_expect(const StrategyParam *p, char *buf, size_t size)
{
	switch (p->kind) {
	case SPARAM_INT: snprintf(buf, size, "an integer in [%.17g, %.17g]", p->min, p->max); break;
	case SPARAM_FLOAT: snprintf(buf, size, "a number in [%.17g, %.17g]", p->min, p->max); break;
	case SPARAM_FLOAT_GT: snprintf(buf, size, "a number in (%.17g, %.17g]", p->min, p->max); break;
	case SPARAM_CHOICE: {
		size_t n = (size_t)snprintf(buf, size, "a string, one of ");
		for (const char *w = p->words; *w && n < size;) {
			size_t len = strcspn(w, "|");
			n += (size_t)snprintf(buf + n, size - n, "%s\"%.*s\"", w == p->words ? "" : ", ", (int)len, w);
			w += len + (w[len] == '|');
		}
		break;
	}
	case SPARAM_SAME: snprintf(buf, size, "equal to param %s", p->other); break;
	}
}

bool strategy_param_num_ok(const StrategyParam *p, double v, bool is_int)
{
	switch (p->kind) {
	case SPARAM_INT: return is_int && v >= p->min && v <= p->max;
	case SPARAM_FLOAT: return v >= p->min && v <= p->max;
	case SPARAM_FLOAT_GT: return v > p->min && v <= p->max;
	default: return false;
	}
}

bool strategy_param_word_ok(const StrategyParam *p, const char *s)
{
	if (p->kind != SPARAM_CHOICE || !s)
		return false;
	size_t sl = strlen(s);
	for (const char *w = p->words; *w;) {
		size_t len = strcspn(w, "|");
		if (len == sl && strncmp(w, s, len) == 0)
			return true;
		w += len + (w[len] == '|');
	}
	return false;
}
