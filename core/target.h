/* What gen/mdgen generates for each md/ .md target, and the registry of
 * targets.  Everything a target is, the backend reads from here: nothing
 * in C names a target. */
#ifndef GDCC_TARGET_H
#define GDCC_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "burs.h"
#include "ir.h"
#include "sel.h"

/* another name of each register of a class: `view NAME [...]`, written
 * {operand.NAME} in a template (x86's byte and 32-bit registers) */
typedef struct {
	const char *name;
	const char *const *regs; /* [nregs of the class] */
} RegView;

typedef struct {
	const char *name;
	Sort sort;
	int width;               /* bits */
	int nregs;
	const char *const *regs;
	const bool *reserved;    /* [nregs] */
	const bool *callee_saved;/* [nregs] */
	const char *move;        /* template copying {s} to {d}, or NULL */
	int alias_of;            /* same physical registers as that class, or -1 */
	int nt;                  /* its nonterminal in the grammar */
	int nviews;
	const RegView *views;
} RegClassInfo;

typedef struct {
	const char *cls;         /* register class */
	int nregs;
	const char *const *regs;
} AbiArgs;

typedef struct {
	int nargs;
	const AbiArgs *args;
	int nret;
	const AbiArgs *ret;
	const char *stack_pointer, *frame_pointer;
	int stack_align;
} AbiInfo;

typedef struct {
	const char *name;
	const char *str;         /* a string value, else NULL */
	int n;                   /* number of numeric values (1 for a number) */
	const double *values;
} ParamInfo;

/* An operand of an instruction or form: where it sits in the pattern. */
typedef struct {
	const char *name;
	int nt;                  /* its nonterminal; -1 for an immediate leaf */
	int depth;
	const int8_t *path;      /* kid indices from the pattern's root */
} OperandInfo;

/* One rule of the .md (an instruction, or a case of a form). */
typedef struct {
	const char *name;        /* instruction or form name */
	bool is_form;
	const char *asm_template;
	int result_nt;           /* the nonterminal it derives */
	const char *result;      /* the result operand's name, or NULL */
	int nops;
	const OperandInfo *ops;
	const char *tied[2];     /* two operands that share a register, or NULLs */
	int nclobbers;
	const char *const *clobbers;
	double latency, throughput;
	int nunits;
	const char *const *units;
	int size;
	int cost;                /* selection cost, hundredths of a cycle */
	const char *file;
	int line;
} RuleInfo;

typedef enum { LEGAL_NATIVE, LEGAL_EXPAND, LEGAL_FALLBACK, LEGAL_UNSUPPORTED } LegalAction;

/* An expand row's decomposition (core/expansions.def), as data: the
 * lowering dispatches on it, never on the row's text. */
typedef enum {
	EXPANSION_NONE,
#define EXPANSION(name, fn, what) EXPANSION_##name,
#include "expansions.def"
#undef EXPANSION
	EXPANSION_COUNT
} Expansion;

/* A native row's lowering strategy, strategy(NAME) (core/lowerings.def). */
typedef enum {
	LEGAL_STRATEGY_NONE,
#define STRATEGY(name, what) LEGAL_STRATEGY_##name,
#include "lowerings.def"
	LEGAL_STRATEGY_COUNT
} LegalStrategy;

typedef struct {
	int op;                  /* OpKind, or -1 for any */
	int dtype;               /* DType, or -1 for any */
	LegalAction action;
	const char *rule;        /* expand: the decomposition */
	const char *reason;      /* fallback / unsupported */
	const char *when_text;   /* the constraint as written, or NULL */
	bool (*when)(const Node *n);
	const char *uses;        /* native: selection operations, space-separated */
	double cost;             /* estimated cycles; < 0 unknown */
	bool cost_per_mac;       /* per multiply-accumulate, else per output element */
	const char *file;
	int line;
	Expansion expansion;     /* expand: the decomposition's id (rule is its name) */
	LegalStrategy strategy;  /* native: strategy(NAME), or LEGAL_STRATEGY_NONE */
} LegalEntry;

typedef struct Target {
	const char *name;
	const char *parent;      /* extends, or NULL */
	const char *isa, *dialect, *abi_name;
	const char *reg_prefix;  /* printed before register names ("%" in AT&T) */
	int pointer_bits;
	bool scalable;
	int vector_bits;         /* fixed width, or the VLEN minimum */
	int vlen_max;            /* scalable: VLEN maximum */
	int nlmul;
	const int *lmul;
	unsigned dtypes;         /* bit per DType */
	int nregclasses;
	const RegClassInfo *regclasses;
	AbiInfo abi;
	int nparams;
	const ParamInfo *params;
	int nrules;
	const RuleInfo *rules;
	BursGrammar grammar;     /* normalized rules; origin indexes rules[] */
	int nlegal;
	const LegalEntry *legal;
	const char *md_file;
	uint64_t md_hash;        /* xxh3 of the .md text(s) it was built from */
} Target;

extern const Target *const gdcc_targets[];
extern const int gdcc_ntargets;

const Target *target_lookup(const char *name);
const ParamInfo *target_param(const Target *t, const char *name);
/* The params the strategies of t's native rows read (core/lowerings.def:
 * STRATEGY_PARAM...) are there, of their types and in range: what gen/mdgen
 * checked in the .md, again after --param overrides.  False after the
 * messages. */
bool target_check_strategy_params(const Target *t, Diag *d);
/* The first legality row that matches the node (NULL: none). */
const LegalEntry *target_legality(const Target *t, const Node *n);
/* The first row matching op and dtype whose constraint holds for some node
 * or has none: what an (op, dtype) pair can get at best (for reports). */
const LegalEntry *target_legality_for(const Target *t, OpKind op, DType dt, int *nrows);
const char *legal_action_name(LegalAction a);

/* Node queries that generated constraint code calls. */
int64_t legal_attr(const Node *n, const char *name);
int64_t legal_rank(const Node *n, int operand);
int64_t legal_dim(const Node *n, int operand, int64_t dim); /* operand -1: result 0 */
int64_t legal_numel(const Node *n);
int64_t legal_const(const Node *n, int operand); /* is operand K a constant? */

#endif
