/* The .md parser (bison, pure, with locations).  It builds a generic tree
 * (mdgen.h); meaning is given later by mdgen.c.  After a syntax error it
 * skips to the end of the line and goes on. */
%code requires {
#include "mdgen.h"
}

%code provides {
int mdlex(MDSTYPE *lval, MDLTYPE *lloc, MdParser *p);
}

%code {
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* bison's stack (the default, made explicit): a file deeper than this is
 * an error located at the token that did not fit (mderror). */
#define YYMAXDEPTH 10000

static void mderror(YYLTYPE *loc, MdParser *p, const char *msg);
static Loc L(MdParser *p, YYLTYPE l) { return loc_at(p->file, l.first_line, l.first_column); }
static MdNode *leaf(MdParser *p, MdKind k, YYLTYPE l, char *text)
{
	MdNode *n = md_new(k, L(p, l));
	n->text = text;
	return n;
}
static MdNode *num(MdParser *p, YYLTYPE l, double f, int64_t i, bool is_int)
{
	MdNode *n = md_new(MD_NUM, L(p, l));
	n->num = f;
	n->ival = i;
	n->is_int = is_int;
	return n;
}
/* An expression deeper than MD_MAX_EXPR_DEPTH is reported once per file
 * and replaced by a leaf, so that no tree walk recurses without bound. */
static MdNode *bounded(MdParser *p, YYLTYPE l, MdNode *n)
{
	if (n->depth <= MD_MAX_EXPR_DEPTH)
		return n;
	if (!p->too_deep)
		diag_error(p->d, L(p, l), "expression nested deeper than %d operators", MD_MAX_EXPR_DEPTH);
	p->too_deep = true;
	md_free(n);
	return num(p, l, 0, 0, true);
}
/* A chain of one operator stays flat: (a && b) && c is one node with three
 * operands (the operators are left-associative), so that a long chain is
 * neither deep nor slow to walk; it has at most MD_MAX_TERMS operands. */
static MdNode *binop(MdParser *p, YYLTYPE l, const char *op, MdNode *a, MdNode *b)
{
	if (a->kind == MD_BINOP && strcmp(a->text, op) == 0) {
		/* a constraint is a few terms; a chain of thousands is a
		 * generated file gone wrong (and as many tests at compile time) */
		if (a->nkid >= MD_MAX_TERMS) {
			if (!p->too_long)
				diag_error(p->d, L(p, l), "a chain of more than %d '%s' terms in one expression", MD_MAX_TERMS,
					   op);
			p->too_long = true;
			md_free(b);
			return a;
		}
		return bounded(p, l, md_add(a, b));
	}
	MdNode *n = leaf(p, MD_BINOP, l, xstrdup(op));
	md_add(n, a);
	return bounded(p, l, md_add(n, b));
}
}

%define api.pure full
%define api.prefix {md}
%define parse.error detailed
%locations
%parse-param {MdParser *p}
%lex-param {MdParser *p}

%union {
	char *s;
	struct { double f; int64_t ival; bool is_int; } num;
	struct { char *name; int64_t lo, hi; } range;
	MdNode *node;
}

%token END 0 "end of file"
%token NL "end of line"
%token TARGET "'target'" EXTENDS "'extends'" PARAM "'param'" REGCLASS "'regclass'" ABI "'abi'"
%token FORM "'form'" INST "'inst'" CLASS "'class'" FOREACH "'foreach'" IN "'in'" LEGAL "'legal'"
%token MATCH "'match'" WHEN "'when'"
%token EQ "'=='" NE "'!='" LE "'<='" GE "'>='" AND "'&&'" OR "'||'"
%token <s> IDENT "name" VAR "variable" STRING "string"
%token <num> NUM "number"
%token <range> RANGE "register range"

%type <node> item target opt_extends fields field values value list param regclass abi form
%type <node> formcases match_line pattern patterns word inst opt_instance body bodyline class
%type <node> opt_line varlist foreach tuples tuple items legal lword opt_when expr args

%destructor { free($$); } <s>
%destructor { free($$.name); } <range>
%destructor { md_free($$); } <node>

%left OR
%left AND
%left EQ NE
%left '<' '>' LE GE
%left '+' '-'
%left '*' '/' '%'
%precedence '!' UMINUS

%%

file
	: items                { p->items = $1; }
	;

items
	: %empty               { $$ = md_new(MD_LIST, loc_at(p->file, 1, 1)); }
	| items NL             { $$ = $1; }
	| items item NL        { $$ = md_add($1, $2); }
	| items error NL       { $$ = $1; yyerrok; }
	;

item
	: target | param | regclass | abi | form | inst | class | foreach | legal
	;

target
	: TARGET STRING opt_extends '{' NL fields '}' {
		$$ = leaf(p, MD_TARGET, @1, $2);
		md_add($$, $3);
		for (int i = 0; i < $6->nkid; i++)
			md_add($$, $6->kid[i]);
		$6->nkid = 0;
		md_free($6);
	}
	;

opt_extends
	: %empty               { $$ = NULL; }
	| EXTENDS STRING       { $$ = leaf(p, MD_STRING, @2, $2); }
	;

fields
	: %empty               { $$ = md_new(MD_LIST, L(p, @$)); }
	| fields NL            { $$ = $1; }
	| fields field NL      { $$ = md_add($1, $2); }
	| fields error NL      { $$ = $1; yyerrok; }
	;

field
	: IDENT values {
		$$ = $2;
		$$->kind = MD_FIELD;
		$$->text = $1;
		$$->loc = L(p, @1);
	}
	| ABI values {
		$$ = $2;
		$$->kind = MD_FIELD;
		$$->text = xstrdup("abi");
		$$->loc = L(p, @1);
	}
	;

values
	: %empty               { $$ = md_new(MD_LIST, L(p, @$)); }
	| values value         { $$ = md_add($1, $2); }
	;

value
	: IDENT                { $$ = leaf(p, MD_IDENT, @1, $1); }
	| VAR                  { $$ = leaf(p, MD_VAR, @1, $1); }
	| STRING               { $$ = leaf(p, MD_STRING, @1, $1); }
	| NUM                  { $$ = num(p, @1, $1.f, $1.ival, $1.is_int); }
	| RANGE                {
		$$ = leaf(p, MD_RANGE, @1, $1.name);
		$$->ival = $1.lo;
		$$->num = (double)$1.hi;
	}
	| '[' ']'              { $$ = md_new(MD_LIST, L(p, @1)); }
	| '[' list ']'         { $$ = $2; $$->loc = L(p, @1); }
	| IDENT '(' ')'        { $$ = leaf(p, MD_CALL, @1, $1); }
	| IDENT '(' list ')'   { $$ = $3; $$->kind = MD_CALL; $$->text = $1; $$->loc = L(p, @1); }
	;

list
	: value                { $$ = md_add(md_new(MD_LIST, L(p, @1)), $1); }
	| list ',' value       { $$ = md_add($1, $3); }
	| list ','             { $$ = $1; }
	;

param
	: PARAM IDENT '=' value { $$ = md_add(leaf(p, MD_PARAM, @2, $2), $4); }
	;

regclass
	: REGCLASS IDENT ':' IDENT '{' NL fields '}' {
		$$ = leaf(p, MD_REGCLASS, @2, $2);
		md_add($$, leaf(p, MD_IDENT, @4, $4));
		for (int i = 0; i < $7->nkid; i++)
			md_add($$, $7->kid[i]);
		$7->nkid = 0;
		md_free($7);
	}
	;

abi
	: ABI '{' NL fields '}' { $$ = $4; $$->kind = MD_ABI; $$->loc = L(p, @1); }
	;

form
	: FORM IDENT ':' IDENT '{' NL formcases '}' {
		$$ = $7;
		$$->kind = MD_FORM;
		$$->text = $2;
		$$->loc = L(p, @2);
		/* the sort goes first */
		MdNode *sort = leaf(p, MD_IDENT, @4, $4);
		md_add($$, NULL);
		memmove($$->kid + 1, $$->kid, ($$->nkid - 1) * sizeof *$$->kid);
		$$->kid[0] = sort;
	}
	;

formcases
	: %empty                   { $$ = md_new(MD_LIST, L(p, @$)); }
	| formcases NL             { $$ = $1; }
	| formcases match_line NL  { $$ = md_add($1, $2); }
	| formcases error NL       { $$ = $1; yyerrok; }
	;

match_line
	: MATCH pattern values {
		$$ = md_add(md_add(md_new(MD_MATCH, L(p, @1)), NULL), $2);
		for (int i = 0; i < $3->nkid; i++)
			md_add($$, $3->kid[i]);
		$3->nkid = 0;
		md_free($3);
	}
	| MATCH pattern '=' pattern {
		$$ = md_add(md_add(md_new(MD_MATCH, L(p, @1)), $2), $4);
	}
	;

pattern
	: word ':' word                      { $$ = md_add(leaf(p, MD_BIND, @1, $1->text), $3); $1->text = NULL; md_free($1); }
	| word ':' word '(' NUM ',' NUM ')'  {
		$$ = md_add(leaf(p, MD_BIND, @1, $1->text), $3);
		$1->text = NULL;
		md_free($1);
		MdNode *pred = md_new(MD_LIST, L(p, @4));
		md_add(pred, num(p, @5, $5.f, $5.ival, $5.is_int));
		md_add(pred, num(p, @7, $7.f, $7.ival, $7.is_int));
		md_add($$, pred);
	}
	| word '(' patterns ')'              { $$ = $3; $$->kid[0] = $1; $$->loc = $1->loc; }
	| word '(' ')'                       { $$ = md_add(md_new(MD_PAT, $1->loc), $1); }
	| word                               { $$ = md_add(md_new(MD_PAT, $1->loc), $1); }
	;

patterns
	: pattern                  { $$ = md_add(md_add(md_new(MD_PAT, L(p, @1)), NULL), $1); }
	| patterns ',' pattern     { $$ = md_add($1, $3); }
	;

word
	: IDENT                    { $$ = leaf(p, MD_IDENT, @1, $1); }
	| VAR                      { $$ = leaf(p, MD_VAR, @1, $1); }
	;

inst
	: INST word opt_instance           { $$ = md_add(md_add(md_new(MD_INST, $2->loc), $2), $3); }
	| INST word opt_instance '{' body opt_line '}' {
		$$ = md_add(md_add(md_new(MD_INST, $2->loc), $2), $3);
		for (int i = 0; i < $5->nkid; i++)
			md_add($$, $5->kid[i]);
		$5->nkid = 0;
		md_free($5);
		if ($6)
			md_add($$, $6);
	}
	;

opt_instance
	: %empty                   { $$ = NULL; }
	| '=' IDENT '(' ')'        { $$ = leaf(p, MD_CALL, @2, $2); }
	| '=' IDENT '(' list ')'   { $$ = $4; $$->kind = MD_CALL; $$->text = $2; $$->loc = L(p, @2); }
	;

body
	: %empty                   { $$ = md_new(MD_LIST, L(p, @$)); }
	| body NL                  { $$ = $1; }
	| body bodyline NL         { $$ = md_add($1, $2); }
	| body error NL            { $$ = $1; yyerrok; }
	;

bodyline
	: field
	| match_line
	;

opt_line
	: %empty                   { $$ = NULL; }
	| bodyline                 { $$ = $1; }
	;

class
	: CLASS IDENT '(' varlist ')' '{' NL body '}' {
		$$ = leaf(p, MD_CLASS, @2, $2);
		md_add($$, $4);
		for (int i = 0; i < $8->nkid; i++)
			md_add($$, $8->kid[i]);
		$8->nkid = 0;
		md_free($8);
	}
	;

varlist
	: VAR                      { $$ = md_add(md_new(MD_LIST, L(p, @1)), leaf(p, MD_VAR, @1, $1)); }
	| varlist ',' VAR          { $$ = md_add($1, leaf(p, MD_VAR, @3, $3)); }
	;

foreach
	: FOREACH varlist IN '[' tuples ']' '{' NL items '}' {
		$$ = md_add(md_add(md_new(MD_FOREACH, L(p, @1)), $2), $5);
		for (int i = 0; i < $9->nkid; i++)
			md_add($$, $9->kid[i]);
		$9->nkid = 0;
		md_free($9);
	}
	;

tuples
	: tuple                    { $$ = md_add(md_new(MD_LIST, L(p, @1)), $1); }
	| tuples ',' tuple         { $$ = md_add($1, $3); }
	| tuples ','               { $$ = $1; }
	;

tuple
	: '(' list ')'             { $$ = $2; $$->kind = MD_TUPLE; $$->loc = L(p, @1); }
	| value                    { $$ = md_add(md_new(MD_TUPLE, $1->loc), $1); }
	;

legal
	: LEGAL lword lword values opt_when {
		$$ = md_add(md_add(md_add(md_add(md_new(MD_LEGAL, L(p, @1)), $2), $3), $4), $5);
	}
	;

lword
	: IDENT                    { $$ = leaf(p, MD_IDENT, @1, $1); }
	| VAR                      { $$ = leaf(p, MD_VAR, @1, $1); }
	| '*'                      { $$ = leaf(p, MD_IDENT, @1, xstrdup("*")); }
	;

opt_when
	: %empty                   { $$ = NULL; }
	| WHEN expr                { $$ = $2; }
	;

expr
	: NUM                      { $$ = num(p, @1, $1.f, $1.ival, $1.is_int); }
	| IDENT                    { $$ = leaf(p, MD_IDENT, @1, $1); }
	| VAR                      { $$ = leaf(p, MD_VAR, @1, $1); }
	| IDENT '(' args ')'       { $$ = $3; $$->kind = MD_CALL; $$->text = $1; $$->loc = L(p, @1); }
	| '(' expr ')'             { $$ = $2; }
	| expr OR expr             { $$ = binop(p, @2, "||", $1, $3); }
	| expr AND expr            { $$ = binop(p, @2, "&&", $1, $3); }
	| expr EQ expr             { $$ = binop(p, @2, "==", $1, $3); }
	| expr NE expr             { $$ = binop(p, @2, "!=", $1, $3); }
	| expr '<' expr            { $$ = binop(p, @2, "<", $1, $3); }
	| expr '>' expr            { $$ = binop(p, @2, ">", $1, $3); }
	| expr LE expr             { $$ = binop(p, @2, "<=", $1, $3); }
	| expr GE expr             { $$ = binop(p, @2, ">=", $1, $3); }
	| expr '+' expr            { $$ = binop(p, @2, "+", $1, $3); }
	| expr '-' expr            { $$ = binop(p, @2, "-", $1, $3); }
	| expr '*' expr            { $$ = binop(p, @2, "*", $1, $3); }
	| expr '/' expr            { $$ = binop(p, @2, "/", $1, $3); }
	| expr '%' expr            { $$ = binop(p, @2, "%", $1, $3); }
	| '!' expr                 { $$ = bounded(p, @1, md_add(md_new(MD_NOT, L(p, @1)), $2)); }
	| '-' expr %prec UMINUS    { $$ = binop(p, @1, "-", num(p, @1, 0, 0, true), $2); }
	;

args
	: expr                     { $$ = md_add(md_new(MD_LIST, L(p, @1)), $1); }
	| args ',' expr            { $$ = md_add($1, $3); }
	;

%%

static void mderror(YYLTYPE *loc, MdParser *p, const char *msg)
{
	if (p->stopped)
		return; /* the lexer reported why it stopped */
	if (strcmp(msg, "memory exhausted") == 0)
		diag_error(p->d, L(p, *loc), "nested too deeply: more than %d levels of the parser's stack", YYMAXDEPTH);
	else
		diag_error(p->d, L(p, *loc), "%s", msg);
}

MdNode *md_new(MdKind kind, Loc loc)
{
	MdNode *n = xcalloc(1, sizeof *n);
	n->kind = kind;
	n->loc = loc;
	return n;
}

MdNode *md_add(MdNode *parent, MdNode *kid)
{
	if (parent->nkid == parent->capkid) {
		parent->capkid = parent->capkid ? 2 * parent->capkid : 4;
		parent->kid = xrealloc(parent->kid, parent->capkid * sizeof *parent->kid);
	}
	parent->kid[parent->nkid++] = kid;
	if (kid && kid->depth >= parent->depth)
		parent->depth = kid->depth + 1;
	return parent;
}

MdNode *md_clone(const MdNode *n)
{
	if (!n)
		return NULL;
	MdNode *c = md_new(n->kind, n->loc);
	c->text = n->text ? xstrdup(n->text) : NULL;
	c->num = n->num;
	c->ival = n->ival;
	c->is_int = n->is_int;
	for (int i = 0; i < n->nkid; i++)
		md_add(c, md_clone(n->kid[i]));
	return c;
}

void md_free(MdNode *n)
{
	if (!n)
		return;
	for (int i = 0; i < n->nkid; i++)
		md_free(n->kid[i]);
	free(n->kid);
	free(n->text);
	free(n);
}

MdNode *md_parse(const char *file, const char *text, size_t len, Diag *d)
{
	MdParser p = {0};
	char *buf = xmalloc(len + 1);
	if (len)
		memcpy(buf, text, len);
	buf[len] = 0;
	p.file = file;
	p.start = p.cur = p.line_start = buf;
	p.lim = buf + len;
	p.line = 1;
	p.d = d;
	int before = d->nerrors;
	int rc = mdparse(&p);
	free(buf);
	if (rc != 0 || d->nerrors != before) {
		md_free(p.items);
		return NULL;
	}
	return p.items;
}
