/* model.ir parser (bison, pure, with locations).  Builds the Graph as it
 * reads, resolving names on the spot: a value must be defined before it is
 * used.  Errors are reported with their location; after a syntax error the
 * parser skips to the end of the line and goes on. */
%code requires {
#include "frontend.h"
}

%code provides {
int yylex(YYSTYPE *lval, YYLTYPE *lloc, Parser *p);
}

%code {
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "shard.h"
#include "util.h"

static void yyerror(YYLTYPE *loc, Parser *p, const char *msg);
static Loc mkloc(Parser *p, YYLTYPE l);
static void numlist_push(NumList *l, Num v);
static void arglist_push(ArgList *l, Arg a);
static void arg_free(Arg *a);
static void args_free(ArgList *l);
static void results_free(ResultList *l);
static TensorType make_type(Parser *p, char *dtype, YYLTYPE dl, NumList *dims, YYLTYPE sl);
static void declare_input(Parser *p, char *name, YYLTYPE nl, TensorType t);
static void declare_const(Parser *p, char *name, YYLTYPE nl, TensorType t, Arg *init);
static void declare_node(Parser *p, ResultList *res, char *op, YYLTYPE ol, ArgList *args);
static void declare_output(Parser *p, char *name, YYLTYPE nl);
static void speclist_push(SpecList *l, SpecItem it);
static void speclist_free(SpecList *l);
static void declare_mesh(Parser *p, char *kw, YYLTYPE kl, SpecList *items);
static void declare_shard(Parser *p, char *kw, YYLTYPE kl, char *name, YYLTYPE nl, SpecList *axes, char *pkw,
			  YYLTYPE pl, SpecList *partial);
static void poison_line(Parser *p, int line);
}

%define api.pure full
%define parse.error detailed
%locations
%parse-param {Parser *p}
%lex-param {Parser *p}

%union {
	int64_t i;
	double f;
	char *s;
	Num num;
	NumList nums;
	Arg arg;
	ArgList args;
	Result res;
	ResultList results;
	TensorType type;
	SpecItem item;
	SpecList items;
}

%token END 0 "end of file"
%token NL "end of line"
%token GRAPH "'graph'" INPUT "'input'" OUTPUT "'output'" CONST "'const'"
%token <i> INT "integer"
%token <f> FLOAT "number"
%token <s> IDENT "name" STRING "string"

%type <num> number
%type <nums> numbers numlist
%type <arg> arg value init
%type <args> args arglist
%type <res> result
%type <results> results
%type <type> type
%type <item> specitem
%type <items> specs speclist

%destructor { free($$); } <s>
%destructor { free($$.v); } <nums>
%destructor { arg_free(&$$); } <arg>
%destructor { args_free(&$$); } <args>
%destructor { free($$.name); } <res>
%destructor { results_free(&$$); } <results>
%destructor { free($$.name); } <item>
%destructor { speclist_free(&$$); } <items>

%%

file
	: nls GRAPH IDENT '{' NL body '}' nls {
		free(p->g->name);
		p->g->name = $3;
		p->g->loc = mkloc(p, @3);
	}
	;

nls
	: %empty
	| nls NL
	;

body
	: %empty
	| body stmt
	;

stmt
	: NL
	| decl NL
	| error NL { poison_line(p, @1.first_line); yyerrok; }
	;

decl
	: INPUT IDENT ':' type            { declare_input(p, $2, @2, $4); }
	| CONST IDENT ':' type '=' init   { declare_const(p, $2, @2, $4, &$6); }
	| results '=' IDENT '(' args ')'  { declare_node(p, &$1, $3, @3, &$5); }
	| OUTPUT outputs
	| IDENT '[' specs ']'     { declare_mesh(p, $1, @1, &$3); }
	| IDENT IDENT '[' specs ']' {
		declare_shard(p, $1, @1, $2, @2, &$4, NULL, @1, NULL);
	}
	| IDENT IDENT '[' specs ']' IDENT '[' specs ']' {
		declare_shard(p, $1, @1, $2, @2, &$4, $6, @6, &$8);
	}
	;

specs
	: %empty                 { $$ = (SpecList){0}; }
	| speclist               { $$ = $1; }
	| speclist ','           { $$ = $1; }
	;

speclist
	: specitem               { $$ = (SpecList){0}; speclist_push(&$$, $1); }
	| speclist ',' specitem  { $$ = $1; speclist_push(&$$, $3); }
	;

specitem
	: IDENT                  { $$ = (SpecItem){.name = $1, .loc = mkloc(p, @1)}; }
	| IDENT '=' INT          { $$ = (SpecItem){.name = $1, .loc = mkloc(p, @1), .has_size = true, .size = $3}; }
	;

outputs
	: IDENT                  { declare_output(p, $1, @1); }
	| outputs ',' IDENT      { declare_output(p, $3, @3); }
	;

results
	: result                 { $$ = (ResultList){0}; $$.v = xmalloc(sizeof *$$.v); $$.v[0] = $1; $$.n = $$.cap = 1; }
	| results ',' result     {
		$$ = $1;
		if ($$.n == $$.cap) { $$.cap *= 2; $$.v = xrealloc($$.v, $$.cap * sizeof *$$.v); }
		$$.v[$$.n++] = $3;
	}
	;

result
	: IDENT                  { $$ = (Result){.name = $1, .loc = mkloc(p, @1)}; }
	| IDENT ':' type         { $$ = (Result){.name = $1, .loc = mkloc(p, @1), .typed = true, .type = $3}; }
	;

type
	: IDENT '[' ']'          { $$ = make_type(p, $1, @1, NULL, @2); }
	| IDENT '[' numlist ']'  { $$ = make_type(p, $1, @1, &$3, @3); }
	;

init
	: '[' ']'                { $$ = (Arg){.kind = ARGV_LIST, .loc = mkloc(p, @1), .vloc = mkloc(p, @1)}; }
	| '[' numlist ']'        { $$ = (Arg){.kind = ARGV_LIST, .loc = mkloc(p, @1), .vloc = mkloc(p, @1), .list = $2}; }
	| IDENT                  { $$ = (Arg){.kind = ARGV_IDENT, .str = $1, .loc = mkloc(p, @1), .vloc = mkloc(p, @1)}; }
	| IDENT '(' args ')'     {
		/* An initializer call: its name in .str, its arguments in
		 * .list's place is not enough, so keep them as a list of args
		 * hung off a heap copy. */
		$$ = (Arg){.kind = ARGV_IDENT, .str = $1, .loc = mkloc(p, @1), .vloc = mkloc(p, @1)};
		$$.list.v = (Num *)xmalloc(sizeof(ArgList));
		memcpy($$.list.v, &$3, sizeof(ArgList));
		$$.list.n = -1; /* marks: list.v holds an ArgList */
	}
	;

args
	: %empty                 { $$ = (ArgList){0}; }
	| arglist                { $$ = $1; }
	;

arglist
	: arg                    { $$ = (ArgList){0}; arglist_push(&$$, $1); }
	| arglist ',' arg        { $$ = $1; arglist_push(&$$, $3); }
	;

arg
	: value                  { $$ = $1; }
	| IDENT '=' value        { $$ = $3; $$.key = $1; $$.loc = mkloc(p, @1); }
	;

value
	: number                 { $$ = (Arg){.kind = ARGV_NUM, .num = $1, .loc = mkloc(p, @1), .vloc = mkloc(p, @1)}; }
	| STRING                 { $$ = (Arg){.kind = ARGV_STRING, .str = $1, .loc = mkloc(p, @1), .vloc = mkloc(p, @1)}; }
	| IDENT                  { $$ = (Arg){.kind = ARGV_IDENT, .str = $1, .loc = mkloc(p, @1), .vloc = mkloc(p, @1)}; }
	| '[' ']'                { $$ = (Arg){.kind = ARGV_LIST, .loc = mkloc(p, @1), .vloc = mkloc(p, @1)}; }
	| '[' numlist ']'        { $$ = (Arg){.kind = ARGV_LIST, .list = $2, .loc = mkloc(p, @1), .vloc = mkloc(p, @1)}; }
	;

numlist
	: numbers                { $$ = $1; }
	| numbers ','            { $$ = $1; }
	;

numbers
	: number                 { $$ = (NumList){0}; numlist_push(&$$, $1); }
	| numbers ',' number     { $$ = $1; numlist_push(&$$, $3); }
	;

number
	: INT                    { $$ = (Num){.i = $1, .f = (double)$1}; }
	| FLOAT                  { $$ = (Num){.is_float = true, .f = $1}; }
	;

%%

#include "ops.h"

static Loc mkloc(Parser *p, YYLTYPE l)
{
	return (Loc){p->file, l.first_line, l.first_column};
}

static void yyerror(YYLTYPE *loc, Parser *p, const char *msg)
{
	diag_error(p->d, mkloc(p, *loc), "%s", msg);
}

static void numlist_push(NumList *l, Num v)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = v;
	l->any_float |= v.is_float;
}

static void arglist_push(ArgList *l, Arg a)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = a;
}

static void arg_free(Arg *a)
{
	free(a->key);
	free(a->str);
	if (a->list.n == -1) {
		args_free((ArgList *)a->list.v);
	}
	free(a->list.v);
	memset(a, 0, sizeof *a);
}

static void args_free(ArgList *l)
{
	for (int i = 0; i < l->n; i++)
		arg_free(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

static void speclist_push(SpecList *l, SpecItem it)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = it;
}

static void speclist_free(SpecList *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* `mesh [dp=2, tp=2]`: the device mesh, once, before any shard statement. */
static void declare_mesh(Parser *p, char *kw, YYLTYPE kl, SpecList *items)
{
	Loc loc = mkloc(p, kl);
	Mesh *m = &p->g->mesh;
	if (strcmp(kw, "mesh") != 0) {
		diag_error(p->d, loc, "'%s [...]' is not a statement (a device mesh is 'mesh [NAME=SIZE, ...]')", kw);
	} else if (m->naxes) {
		diag_error(p->d, loc, "a second mesh (the graph has one device mesh)");
		diag_note(p->d, m->loc, "the mesh is declared here");
	} else if (items->n == 0) {
		diag_error(p->d, loc, "the mesh has no axes");
	} else if (items->n > MAX_MESH_AXES) {
		diag_error(p->d, items->v[MAX_MESH_AXES].loc, "the mesh has %d axes, at most %d are supported", items->n,
			   MAX_MESH_AXES);
	} else {
		bool ok = true;
		for (int i = 0; i < items->n; i++) {
			SpecItem *it = &items->v[i];
			char *e = it->has_size ? shard_mesh_axis_error(m, it->name, it->size)
					       : xasprintf("mesh axis '%s' needs a size: %s=N", it->name, it->name);
			if (e) {
				diag_error(p->d, it->loc, "%s", e);
				free(e);
				ok = false;
			} else if (ok) {
				m->name[m->naxes] = it->name;
				m->size[m->naxes++] = it->size;
				it->name = NULL;
			}
		}
		if (!ok) {
			for (int i = 0; i < m->naxes; i++)
				free(m->name[i]);
			m->naxes = 0;
		} else {
			m->loc = loc;
		}
	}
	free(kw);
	speclist_free(items);
}

/* `shard NAME [ax, _, ...] [partial [ax, ...]]`: recorded as written,
 * checked against the typed graph by shard_resolve. */
static void declare_shard(Parser *p, char *kw, YYLTYPE kl, char *name, YYLTYPE nl, SpecList *axes, char *pkw,
			  YYLTYPE pl, SpecList *partial)
{
	Loc loc = mkloc(p, kl);
	if (strcmp(kw, "shard") != 0) {
		diag_error(p->d, loc, "'%s %s [...]' is not a statement (a sharding is 'shard NAME [AXIS or _, ...]')", kw, name);
	} else if (pkw && strcmp(pkw, "partial") != 0) {
		diag_error(p->d, mkloc(p, pl), "expected 'partial [AXIS, ...]' after the sharding, not '%s'", pkw);
	} else if (!p->g->mesh.naxes) {
		diag_error(p->d, loc, "a sharding before the graph's mesh (declare 'mesh [NAME=SIZE, ...]' first)");
	} else if (!graph_find_value(p->g, name)) {
		diag_error(p->d, mkloc(p, nl), "'%s' is not defined before the shard statement", name);
	} else {
		bool ok = true;
		for (int i = 0; i < axes->n; i++)
			if (axes->v[i].has_size)
				diag_error(p->d, axes->v[i].loc, "a sharding names mesh axes or _, without sizes"), ok = false;
		for (int i = 0; partial && i < partial->n; i++)
			if (partial->v[i].has_size)
				diag_error(p->d, partial->v[i].loc, "'partial' names mesh axes, without sizes"), ok = false;
		if (ok) {
			ShardAnnot a = {.value = name, .loc = mkloc(p, nl), .naxis = axes->n};
			name = NULL;
			a.axis = xcalloc((size_t)axes->n + 1, sizeof *a.axis);
			a.axis_loc = xcalloc((size_t)axes->n + 1, sizeof *a.axis_loc);
			for (int i = 0; i < axes->n; i++) {
				a.axis[i] = axes->v[i].name;
				axes->v[i].name = NULL;
				a.axis_loc[i] = axes->v[i].loc;
			}
			a.npartial = partial ? partial->n : 0;
			a.partial = xcalloc((size_t)a.npartial + 1, sizeof *a.partial);
			a.partial_loc = xcalloc((size_t)a.npartial + 1, sizeof *a.partial_loc);
			for (int i = 0; i < a.npartial; i++) {
				a.partial[i] = partial->v[i].name;
				partial->v[i].name = NULL;
				a.partial_loc[i] = partial->v[i].loc;
			}
			shard_add_annot(p->g, &a);
		}
	}
	free(kw);
	free(name);
	free(pkw);
	speclist_free(axes);
	if (partial)
		speclist_free(partial);
}

static void results_free(ResultList *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof *l);
}

static TensorType make_type(Parser *p, char *dtype, YYLTYPE dl, NumList *dims, YYLTYPE sl)
{
	TensorType t = {0};
	t.dtype = dtype_from_name(dtype, strlen(dtype));
	if (t.dtype == DT_INVALID)
		diag_error(p->d, mkloc(p, dl), "unknown dtype '%s' (known: f32, i32, i64, bool, i8, f16, bf16)", dtype);
	free(dtype);
	if (!dims)
		return t;
	if (dims->n > MAX_RANK) {
		diag_error(p->d, mkloc(p, sl), "rank %d is above the maximum of %d", dims->n, MAX_RANK);
	} else {
		t.shape.rank = dims->n;
		for (int i = 0; i < dims->n; i++) {
			if (dims->v[i].is_float || dims->v[i].i < 0 || dims->v[i].i > (1LL << 40)) {
				diag_error(p->d, mkloc(p, sl), "dimension %d must be a non-negative integer", i + 1);
				t.dtype = DT_INVALID;
			}
			t.shape.dim[i] = dims->v[i].i;
		}
	}
	free(dims->v);
	return t;
}

/* A name being defined: report a redefinition with the earlier place. */
static Value *define(Parser *p, const char *name, Loc loc)
{
	Value *old = graph_find_value(p->g, name);
	if (old) {
		diag_error(p->d, loc, "redefinition of '%s'", name);
		diag_note(p->d, old->loc, "'%s' was first defined here", name);
		return NULL;
	}
	return graph_new_value(p->g, name, loc);
}

static void declare_input(Parser *p, char *name, YYLTYPE nl, TensorType t)
{
	Loc loc = mkloc(p, nl);
	if (graph_find_value(p->g, name)) {
		define(p, name, loc);
	} else if (t.dtype != DT_INVALID) {
		graph_add_input(p->g, name, t.dtype, &t.shape, loc);
	} else {
		graph_new_value(p->g, name, loc); /* poisoned: untyped */
	}
	free(name);
}

static double num_f(const Num *n) { return n->is_float ? n->f : (double)n->i; }

/* Named or positional parameters of an initializer call, by position. */
static const Arg *init_param(Parser *p, ArgList *a, const char *fn, const char *const *names, int nnames, int k)
{
	const Arg *pos = NULL;
	int npos = 0;
	for (int i = 0; i < a->n; i++) {
		if (!a->v[i].key) {
			if (npos++ == k)
				pos = &a->v[i];
			continue;
		}
		if (strcmp(a->v[i].key, names[k]) == 0)
			return &a->v[i];
	}
	(void)p;
	(void)fn;
	(void)nnames;
	return pos;
}

static bool init_number(Parser *p, const Arg *a, const char *fn, const char *what, double *out)
{
	if (a->kind != ARGV_NUM) {
		diag_error(p->d, a->vloc, "%s(): '%s' must be a number", fn, what);
		return false;
	}
	*out = num_f(&a->num);
	return true;
}

static bool check_init_args(Parser *p, ArgList *a, const char *fn, const char *const *names, int nnames)
{
	int npos = 0;
	bool ok = true;
	for (int i = 0; i < a->n; i++) {
		if (!a->v[i].key) {
			if (npos++ >= nnames) {
				diag_error(p->d, a->v[i].loc, "%s(): too many arguments", fn);
				ok = false;
			}
			continue;
		}
		bool known = false;
		for (int k = 0; k < nnames; k++)
			known |= strcmp(a->v[i].key, names[k]) == 0;
		if (!known) {
			diag_error(p->d, a->v[i].loc, "%s(): unknown parameter '%s'", fn, a->v[i].key);
			ok = false;
		}
	}
	return ok;
}

static bool make_init(Parser *p, Arg *init, ConstInit *ci)
{
	memset(ci, 0, sizeof *ci);
	if (init->kind == ARGV_LIST) {
		ci->kind = INIT_INLINE;
		ci->nvalues = init->list.n;
		ci->values = xcalloc(init->list.n, sizeof *ci->values);
		bool ints = true;
		for (int i = 0; i < init->list.n; i++) {
			ci->values[i] = num_f(&init->list.v[i]);
			ints &= !init->list.v[i].is_float;
		}
		/* integers as written, too: a double holds them exactly only up
		 * to 2^53 */
		if (ints && init->list.n > 0) {
			ci->ivalues = xcalloc(init->list.n, sizeof *ci->ivalues);
			for (int i = 0; i < init->list.n; i++)
				ci->ivalues[i] = init->list.v[i].i;
		}
		return true;
	}
	const char *fn = init->str;
	ArgList empty = {0}, *a = init->list.n == -1 ? (ArgList *)init->list.v : &empty;
	bool call = init->list.n == -1;
	if (strcmp(fn, "zeros") == 0) {
		if (call && a->n) {
			diag_error(p->d, init->loc, "zeros takes no arguments");
			return false;
		}
		ci->kind = INIT_ZEROS;
		return true;
	}
	static const char *const fill_p[] = {"value"};
	static const char *const npy_p[] = {"path"};
	static const char *const random_p[] = {"seed", "low", "high"};
	static const char *const normal_p[] = {"seed", "mean", "std"};
	const char *const *names;
	int nnames;
	if (strcmp(fn, "fill") == 0) {
		ci->kind = INIT_FILL, names = fill_p, nnames = 1;
	} else if (strcmp(fn, "npy") == 0) {
		ci->kind = INIT_NPY, names = npy_p, nnames = 1;
	} else if (strcmp(fn, "random") == 0) {
		ci->kind = INIT_RANDOM, names = random_p, nnames = 3;
		ci->a = -1, ci->b = 1;
	} else if (strcmp(fn, "normal") == 0) {
		ci->kind = INIT_NORMAL, names = normal_p, nnames = 3;
		ci->a = 0, ci->b = 1;
	} else {
		diag_error(p->d, init->loc,
			   "unknown initializer '%s' (expected [values], zeros, fill(v), npy(\"file\"), random(seed, low, high) or normal(seed, mean, std))",
			   fn);
		return false;
	}
	if (!call) {
		diag_error(p->d, init->loc, "%s needs arguments: %s(...)", fn, fn);
		return false;
	}
	if (!check_init_args(p, a, fn, names, nnames))
		return false;
	const Arg *x;
	switch (ci->kind) {
	case INIT_FILL:
		x = init_param(p, a, fn, names, nnames, 0);
		if (!x) {
			diag_error(p->d, init->loc, "fill(): missing the value");
			return false;
		}
		return init_number(p, x, fn, "value", &ci->a);
	case INIT_NPY:
		x = init_param(p, a, fn, names, nnames, 0);
		if (!x || x->kind != ARGV_STRING) {
			diag_error(p->d, x ? x->vloc : init->loc, "npy(): expected a file name string");
			return false;
		}
		ci->path = xstrdup(x->str);
		if (x->str[0] == '/' || !p->dir)
			ci->resolved = xstrdup(x->str);
		else
			ci->resolved = xasprintf("%s/%s", p->dir, x->str);
		return true;
	default: {
		x = init_param(p, a, fn, names, nnames, 0);
		if (!x) {
			diag_error(p->d, init->loc, "%s(): missing the seed", fn);
			return false;
		}
		if (x->kind != ARGV_NUM || x->num.is_float || x->num.i < 0) {
			diag_error(p->d, x->vloc, "%s(): the seed must be a non-negative integer", fn);
			return false;
		}
		ci->seed = (uint64_t)x->num.i;
		double *dst[] = {&ci->a, &ci->b};
		for (int k = 1; k < 3; k++)
			if ((x = init_param(p, a, fn, names, nnames, k)) && !init_number(p, x, fn, names[k], dst[k - 1]))
				return false;
		return true;
	}
	}
}

static void declare_const(Parser *p, char *name, YYLTYPE nl, TensorType t, Arg *init)
{
	Loc loc = mkloc(p, nl);
	ConstInit ci;
	if (graph_find_value(p->g, name)) {
		define(p, name, loc);
	} else if (t.dtype == DT_INVALID || !make_init(p, init, &ci)) {
		graph_new_value(p->g, name, loc);
	} else {
		Node *n = graph_add_const(p->g, name, t.dtype, &t.shape, ci, loc);
		n->loc = init->loc;
	}
	free(name);
	arg_free(init);
}

/* Edit distance, for "did you mean" on unknown ops. */
static int distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b);
	if (la > 40 || lb > 40)
		return 99;
	int d[41][41];
	for (int i = 0; i <= la; i++)
		d[i][0] = i;
	for (int j = 0; j <= lb; j++)
		d[0][j] = j;
	for (int i = 1; i <= la; i++)
		for (int j = 1; j <= lb; j++) {
			int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			d[i][j] = c;
		}
	return d[la][lb];
}

static void poison_results(Parser *p, ResultList *res)
{
	for (int i = 0; i < res->n; i++)
		if (!graph_find_value(p->g, res->v[i].name))
			graph_new_value(p->g, res->v[i].name, res->v[i].loc);
}

static bool set_attr(Parser *p, Node *n, Arg *a)
{
	Attr *at;
	switch (a->kind) {
	case ARGV_NUM:
		at = node_add_attr(n, a->key, a->num.is_float ? ATTR_FLOAT : ATTR_INT, a->loc);
		at->i = a->num.i;
		at->f = a->num.f;
		return true;
	case ARGV_STRING:
		at = node_add_attr(n, a->key, ATTR_STRING, a->loc);
		at->s = xstrdup(a->str);
		return true;
	case ARGV_IDENT: {
		DType dt = dtype_from_name(a->str, strlen(a->str));
		if (dt == DT_INVALID) {
			diag_error(p->d, a->vloc, "attribute '%s': '%s' is not a dtype (strings are written in quotes)",
				   a->key, a->str);
			return false;
		}
		at = node_add_attr(n, a->key, ATTR_DTYPE, a->loc);
		at->dt = dt;
		return true;
	}
	case ARGV_LIST:
		if (a->list.any_float) {
			at = node_add_attr(n, a->key, ATTR_FLOATS, a->loc);
			at->floats = xcalloc(a->list.n, sizeof *at->floats);
			for (int i = 0; i < a->list.n; i++)
				at->floats[i] = num_f(&a->list.v[i]);
		} else {
			at = node_add_attr(n, a->key, ATTR_INTS, a->loc);
			at->ints = xcalloc(a->list.n, sizeof *at->ints);
			for (int i = 0; i < a->list.n; i++)
				at->ints[i] = a->list.v[i].i;
		}
		at->n = a->list.n;
		return true;
	case ARGV_NONE:
		break;
	}
	return false;
}

static void declare_node(Parser *p, ResultList *res, char *op, YYLTYPE ol, ArgList *args)
{
	Loc oploc = mkloc(p, ol);
	OpKind kind = op_lookup(op, strlen(op));
	bool ok = true;
	if (kind == OP_COUNT) {
		const char *best = NULL;
		int bd = 3;
		for (int i = 0; i < OP_COUNT; i++) {
			int dd = distance(op, op_info[i].name);
			if (dd < bd)
				bd = dd, best = op_info[i].name;
		}
		if (best)
			diag_error(p->d, oploc, "unknown op '%s' (did you mean '%s'?)", op, best);
		else
			diag_error(p->d, oploc, "unknown op '%s'", op);
		ok = false;
	} else if (kind == OP_CONSTANT) {
		diag_error(p->d, oploc, "constants are declared with 'const NAME : TYPE = INIT'");
		ok = false;
	}
	/* Operands: positional names before any keyword attribute. */
	Value **in = xcalloc(args->n, sizeof *in);
	Loc *inloc = xcalloc(args->n, sizeof *inloc);
	int nin = 0;
	bool seen_attr = false;
	for (int i = 0; i < args->n; i++) {
		Arg *a = &args->v[i];
		if (a->key) {
			seen_attr = true;
			for (int j = 0; j < i; j++)
				if (args->v[j].key && strcmp(args->v[j].key, a->key) == 0) {
					diag_error(p->d, a->loc, "attribute '%s' given twice", a->key);
					ok = false;
				}
			continue;
		}
		if (seen_attr) {
			diag_error(p->d, a->loc, "operand after an attribute: operands come first");
			ok = false;
			continue;
		}
		if (a->kind != ARGV_IDENT) {
			diag_error(p->d, a->loc, "operand %d must be a value name (give numbers as attributes or constants)", nin + 1);
			ok = false;
			continue;
		}
		Value *v = graph_find_value(p->g, a->str);
		if (!v) {
			diag_error(p->d, a->loc, "use of undefined value '%s'", a->str);
			ok = false;
			continue;
		}
		inloc[nin] = a->loc;
		in[nin++] = v;
	}
	for (int i = 0; i < res->n; i++) {
		Value *old = graph_find_value(p->g, res->v[i].name);
		if (old) {
			define(p, res->v[i].name, res->v[i].loc);
			ok = false;
		}
		for (int j = 0; j < i; j++)
			if (strcmp(res->v[i].name, res->v[j].name) == 0) {
				diag_error(p->d, res->v[i].loc, "'%s' is named twice among the results", res->v[i].name);
				ok = false;
			}
		if (res->v[i].typed && res->v[i].type.dtype == DT_INVALID)
			ok = false;
	}
	if (ok) {
		const char **names = xcalloc(res->n, sizeof *names);
		for (int i = 0; i < res->n; i++)
			names[i] = res->v[i].name;
		Node *n = graph_add_node(p->g, kind, in, nin, names, res->n, oploc);
		free(names);
		for (int i = 0; i < nin; i++)
			n->in_loc[i] = inloc[i];
		for (int i = 0; i < res->n; i++) {
			n->out[i]->loc = res->v[i].loc;
			if (res->v[i].typed) {
				n->out[i]->annotated = true;
				n->out[i]->annot = res->v[i].type;
			}
		}
		for (int i = 0; i < args->n; i++)
			if (args->v[i].key)
				set_attr(p, n, &args->v[i]);
	} else {
		poison_results(p, res);
	}
	free(in);
	free(inloc);
	free(op);
	args_free(args);
	results_free(res);
}

static void declare_output(Parser *p, char *name, YYLTYPE nl)
{
	Loc loc = mkloc(p, nl);
	Value *v = graph_find_value(p->g, name);
	if (!v)
		diag_error(p->d, loc, "use of undefined value '%s'", name);
	else if (v->is_output)
		diag_error(p->d, loc, "'%s' is already an output", name);
	else
		graph_add_output(p->g, v, loc);
	free(name);
}

/* After a syntax error in a statement, define the names it was about to
 * define (untyped), so that later uses do not each report them undefined. */
static void poison_line(Parser *p, int line)
{
	const char *s = p->start;
	for (int l = 1; l < line && s < p->lim; s++)
		if (*s == '\n')
			l++;
	if (s >= p->lim)
		return;
	const char *line_start = s;
	const char *eol = memchr(s, '\n', (size_t)(p->lim - s));
	if (!eol)
		eol = p->lim;
	while (s < eol && (*s == ' ' || *s == '\t'))
		s++;
	bool keyword = false;
	if ((eol - s > 6 && memcmp(s, "input ", 6) == 0) || (eol - s > 6 && memcmp(s, "const ", 6) == 0)) {
		keyword = true;
		s += 6;
	} else if (!memchr(s, '=', (size_t)(eol - s))) {
		return;
	}
	bool in_type = false;
	while (s < eol && *s != '=') {
		if (isalpha((unsigned char)*s) || *s == '_') {
			const char *b = s;
			while (s < eol && (isalnum((unsigned char)*s) || *s == '_' || *s == '.'))
				s++;
			if (!in_type) {
				char *name = xstrndup(b, (size_t)(s - b));
				if (!graph_find_value(p->g, name))
					graph_new_value(p->g, name, loc_at(p->file, line, (int)(b - line_start) + 1));
				free(name);
				if (keyword)
					return;
			}
			continue;
		}
		if (*s == ':')
			in_type = true;
		else if (*s == ',' && in_type)
			in_type = false;
		else if (*s == '[') /* skip the dims of a type */
			while (s < eol && *s != ']')
				s++;
		else if (*s == '(')
			return; /* not a definition */
		s++;
	}
}

Graph *parse_model(const char *file, const char *dir, const char *text, size_t len, Diag *d)
{
	Parser p = {0};
	/* The lexer needs a NUL after the last byte. */
	char *buf = xmalloc(len + 1);
	if (len)
		memcpy(buf, text, len);
	buf[len] = 0;
	diag_add_source(d, file, text, len);
	p.start = p.cur = p.line_start = buf;
	p.lim = buf + len;
	p.line = 1;
	p.g = graph_new(NULL);
	p.g->file = xstrdup(file);
	p.file = p.g->file;
	p.g->dir = dir ? xstrdup(dir) : NULL;
	p.dir = p.g->dir;
	p.g->loc = loc_at(p.file, 1, 1);
	p.d = d;
	int before = d->nerrors;
	int rc = yyparse(&p);
	free(buf);
	if (rc != 0 || d->nerrors != before) {
		graph_free(p.g);
		return NULL;
	}
	return p.g;
}

Graph *load_model(const char *path, Diag *d)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text) {
		diag_error(d, loc_at(path, 0, 0), "cannot read model: %s", strerror(errno));
		return NULL;
	}
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, (size_t)(slash - path + (slash == path))) : NULL;
	Graph *g = parse_model(path, dir, text, len, d);
	free(dir);
	free(text);
	return g;
}
