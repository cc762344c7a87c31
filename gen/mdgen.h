/* mdgen: the machine-description generator.  Shared declarations of its
 * lexer, parser, the generic syntax tree they build, and the library entry
 * points (gen/mdgen_main.c is the program; tests/fuzz/fuzz_md.c calls
 * mdgen_check_text).
 *
 * Resource limits.  Every one is a located error naming the limit, never a
 * crash, a silent truncation or an unbounded allocation:
 *   - an .md or list file is a regular file of at most MD_MAX_FILE_BYTES;
 *   - ( ), [ ] and { } nest at most MD_MAX_NEST deep (lists in lists,
 *     patterns in patterns, foreach in foreach), and a `when` expression is
 *     at most MD_MAX_EXPR_DEPTH operators deep.  A chain of one operator,
 *     `a && b && c ...`, is kept flat and has no depth limit, but at most
 *     MD_MAX_TERMS terms;
 *   - the items of one target after expanding `foreach` (every file it
 *     extends included) are at most MD_MAX_ITEMS: a foreach nest that would
 *     make more is rejected at the outer foreach with its count, before
 *     anything is expanded; and the syntax trees made by expanding foreach
 *     and class instances are at most MD_MAX_NODES nodes; a string made by
 *     substituting variables is at most MD_MAX_STRING bytes, and all of
 *     them together at most MD_MAX_EXPANDED_BYTES;
 *   - a list of names (registers with ranges expanded, units, clobbers) has
 *     at most MD_MAX_NAMES entries, and all the lists of a target together
 *     at most MD_MAX_TARGET_NAMES; register-range bounds are at most
 *     MD_MAX_RANGE_BOUND;
 *   - the patterns normalize into at most 30000 nonterminals and rules (the
 *     tables index them with 16 bits);
 *   - latencies, throughputs and costs are at most MD_MAX_CYCLES cycles, and
 *     every number is finite;
 *   - `extends` chains are at most MD_MAX_EXTENDS files deep. */
#ifndef GDCC_MDGEN_H
#define GDCC_MDGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"

#define MD_MAX_FILE_BYTES ((size_t)16 << 20)
#define MD_MAX_NEST 64
#define MD_MAX_EXPR_DEPTH 256
#define MD_MAX_TERMS 1000
#define MD_MAX_ITEMS 10000
#define MD_MAX_NODES 1000000
#define MD_MAX_STRING 65536
#define MD_MAX_EXPANDED_BYTES ((size_t)64 << 20)
#define MD_MAX_NAMES 4096
#define MD_MAX_TARGET_NAMES 100000
#define MD_MAX_RANGE_BOUND 1000000
#define MD_MAX_CYCLES 1000000.0
#define MD_MAX_EXTENDS 16

/* One generic tree for everything in an .md file. */
typedef enum {
	/* values */
	MD_IDENT,    /* text */
	MD_VAR,      /* text: the name without '$' */
	MD_STRING,   /* text */
	MD_NUM,      /* num, is_int, ival */
	MD_LIST,     /* kids */
	MD_TUPLE,    /* kids */
	MD_CALL,     /* text(kids) */
	MD_RANGE,    /* text{lo..hi}: ival = lo, num = hi */
	/* patterns */
	MD_PAT,      /* kid[0]: the operation (IDENT or VAR); kid[1..]: operands */
	MD_BIND,     /* text: operand name; kid[0]: nonterminal or const op; kid[1]: predicate or NULL */
	/* expressions (legality constraints) */
	MD_BINOP,    /* text: operator; kid[0] op kid[1] op kid[2] ...: a left-associative chain (2 kids or more) */
	MD_NOT,      /* kid[0] */
	/* lines and items */
	MD_FIELD,    /* text: key; kids: values */
	MD_MATCH,    /* kid[0]: result BIND or NULL; kid[1]: pattern; kid[2..]: fields (form cases) */
	MD_TARGET,   /* text: name; kid[0]: parent STRING or NULL; kid[1..]: fields */
	MD_PARAM,    /* text: name; kid[0]: value */
	MD_REGCLASS, /* text: name; kid[0]: sort IDENT; kid[1..]: fields */
	MD_ABI,      /* kids: fields */
	MD_FORM,     /* text: name; kid[0]: sort IDENT; kid[1..]: MATCH lines */
	MD_INST,     /* kid[0]: name (IDENT or VAR); kid[1]: CALL of a class or NULL; kid[2..]: body */
	MD_CLASS,    /* text: name; kid[0]: LIST of VAR; kid[1..]: body */
	MD_FOREACH,  /* kid[0]: LIST of VAR; kid[1]: LIST of TUPLE; kid[2..]: items */
	MD_LEGAL,    /* kid[0]: op; kid[1]: dtype; kid[2]: LIST of words; kid[3]: when or NULL */
} MdKind;

typedef struct MdNode {
	MdKind kind;
	Loc loc;
	char *text;
	double num;
	int64_t ival;
	bool is_int;
	int depth;           /* 0 for a leaf, else 1 + the deepest kid's */
	struct MdNode **kid;
	int nkid, capkid;
} MdNode;

MdNode *md_new(MdKind kind, Loc loc);
MdNode *md_add(MdNode *parent, MdNode *kid); /* returns parent; kid may be NULL */
MdNode *md_clone(const MdNode *n);
void md_free(MdNode *n);

typedef struct {
	const char *file;
	const char *start, *cur, *lim, *tok, *line_start;
	int line;
	int depth;       /* open ( and [: newlines inside do not end lines */
	int nest;        /* open ( [ and { together, at most MD_MAX_NEST */
	bool stopped;    /* nesting too deep: the rest of the file is skipped */
	bool too_deep;   /* an expression too deep was reported */
	bool too_long;   /* a chain of too many terms was reported */
	Diag *d;
	MdNode *items;   /* MD_LIST of the file's items */
} MdParser;

/* Parse one .md text; returns the list of items, or NULL after errors. */
MdNode *md_parse(const char *file, const char *text, size_t len, Diag *d);

/* Read a whole .md or list file: a regular file of at most
 * MD_MAX_FILE_BYTES.  NULL and *why (static text) on failure. */
char *md_read_file(const char *path, size_t *len, const char **why);

/* The front end on one machine description held in memory: parse it, load
 * what it extends (PARENT.md in the folder of `name`), expand classes and
 * foreach, build and check the model, the BURS grammar and the legality
 * table: everything short of writing the C file.  `name` is the file name
 * that messages give.  Diagnostics are printed to diag_out (when not NULL).
 * Returns the number of errors.  Leaves no state behind: it may be called
 * again and again. */
int mdgen_check_text(const char *name, const char *text, size_t len, FILE *diag_out);

/* The program: read each input (an .md file, or a list of target names one
 * per line, relative to the list's folder), check every target, and write
 * the tables of all of them to `out` (through out.tmp and a rename: nothing
 * is left behind after an error).  File names in the tables are relative to
 * root when not NULL.  Returns the exit status: 0, or 1 after errors. */
int mdgen_generate(const char *const *inputs, int ninputs, const char *out, const char *root);

#endif
