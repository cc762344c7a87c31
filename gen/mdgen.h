/* mdgen: the machine-description generator.  Shared declarations of its
 * lexer, parser, and the generic syntax tree they build. */
#ifndef GDCC_MDGEN_H
#define GDCC_MDGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"

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
	MD_BINOP,    /* text: operator; kid[0], kid[1] */
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
	int depth;
	Diag *d;
	MdNode *items;   /* MD_LIST of the file's items */
} MdParser;

/* Parse one .md text; returns the list of items, or NULL after errors. */
MdNode *md_parse(const char *file, const char *text, size_t len, Diag *d);

#endif
