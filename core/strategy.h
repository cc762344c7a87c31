/* The lowering strategies' params (core/lowerings.def: STRATEGY_PARAM,
 * STRATEGY_PARAM_CHOICE, STRATEGY_PARAM_SAME) as one table: gen/mdgen
 * checks every target that names a strategy against it, gdcc again after
 * --param overrides (target_check_strategy_params, core/target.h), and the
 * strategy reads its params without defaults.  No Target here: mdgen has
 * its own. */
#ifndef GDCC_STRATEGY_H
#define GDCC_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
	SPARAM_INT,      /* a whole number in [min, max] */
	SPARAM_FLOAT,    /* a number in [min, max] */
	SPARAM_FLOAT_GT, /* a number in (min, max] */
	SPARAM_CHOICE,   /* a string, one of words */
	SPARAM_SAME,     /* not a param: name must equal other */
} StrategyParamKind;

typedef struct {
	int strategy;              /* LegalStrategy (core/target.h): 1 + the STRATEGY line's index */
	const char *strategy_name;
	const char *name;
	StrategyParamKind kind;
	double min, max;
	bool required;
	const char *words;         /* CHOICE: "a|b|..." */
	const char *other;         /* SAME: the param it must equal */
	const char *what;
} StrategyParam;

extern const StrategyParam strategy_params[];
extern const int nstrategy_params;

/* What the param must be, for messages: "an integer in [1, 4096]", "a
 * number in (0, 1073741824]", "one of \"a\", \"b\"". */
void strategy_param_expect(const StrategyParam *p, char *buf, size_t size);
/* A number for an INT / FLOAT / FLOAT_GT param (is_int: a whole number). */
bool strategy_param_num_ok(const StrategyParam *p, double v, bool is_int);
/* A string for a CHOICE param. */
bool strategy_param_word_ok(const StrategyParam *p, const char *s);

#endif
