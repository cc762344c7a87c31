/* The model.ir front end: an re2c lexer and a bison parser (reentrant, with
 * locations) that build a Graph, resolving names as they go.  The language
 * is documented in docs/ir.md. */
#ifndef GDCC_FRONTEND_H
#define GDCC_FRONTEND_H

#include "ir.h"

/* Parse model text.  `file` names it in messages; `dir` (may be NULL) is
 * where relative .npy paths are looked up.  Returns NULL after reporting
 * errors into d.  The graph is not yet verified. */
Graph *parse_model(const char *file, const char *dir, const char *text, size_t len, Diag *d);
/* Read and parse a model file (also registers its text with d). */
Graph *load_model(const char *path, Diag *d);

/* ---- internal: shared by the lexer and the parser --------------------- */
typedef struct {
	bool is_float;
	int64_t i;
	double f;
} Num;

typedef struct {
	Num *v;
	int n, cap;
	bool any_float;
} NumList;

typedef enum { ARGV_NONE, ARGV_NUM, ARGV_STRING, ARGV_IDENT, ARGV_LIST } ArgValueKind;

/* One argument of a call: positional (`x`, `1.5`, `"f.npy"`) or keyword
 * (`axis = 1`). */
typedef struct {
	char *key;          /* NULL when positional */
	Loc loc;            /* of the key, or of the value when positional */
	Loc vloc;           /* of the value */
	ArgValueKind kind;
	Num num;
	char *str;          /* ARGV_STRING, ARGV_IDENT */
	NumList list;       /* ARGV_LIST */
} Arg;

typedef struct {
	Arg *v;
	int n, cap;
} ArgList;

typedef struct {
	char *name;
	Loc loc;
	bool typed;
	TensorType type;
} Result;

typedef struct {
	Result *v;
	int n, cap;
} ResultList;

/* One entry of a `mesh [dp=2, tp=2]` or `shard x [dp, _]` list. */
typedef struct {
	char *name;
	Loc loc;
	bool has_size;
	int64_t size;
} SpecItem;

typedef struct {
	SpecItem *v;
	int n, cap;
} SpecList;

typedef struct {
	/* lexer state */
	const char *file;
	const char *start, *cur, *lim, *tok, *line_start;
	int line;
	int depth;          /* ( and [ nesting: newlines inside are not tokens */
	/* parser state */
	Graph *g;
	Diag *d;
	const char *dir;
	int errors_at_start;
} Parser;

#endif
