/* mdgen: reads machine descriptions (the md/ files, the language of docs/md.md),
 * checks them, and writes the C tables of every target plus the registry
 * (the program is gen/mdgen_main.c: mdgen [-r ROOT] -o targets_gen.c
 * (LIST | FILE.md)..., each LIST naming .md files, one per line).
 * mdgen_check_text runs the same front end on a text in memory (the fuzz
 * target tests/fuzz/fuzz_md.c).  The limits are listed in mdgen.h.
 *
 * Stages, per target: parse the file (and the files it extends), expand
 * classes and foreach, build the model (header, registers, abi, params,
 * forms and instructions with their typed patterns, legality rows),
 * normalize the patterns into BURS rules, check (unknown names, types,
 * duplicates, operand constraints, ambiguous and unreachable rules,
 * native rows nothing can select, incomplete legality), then emit. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "burs.h"
#include "mdgen.h"
#include "ops.h"
#include "sel.h"
#include "strategy.h"
#include "util.h"

/* ---- an arena for the model: freed at once at the end ------------------ */
typedef struct Block {
	struct Block *next;
	size_t used, cap;
	_Alignas(16) char data[];
} Block;
static Block *arena;

static void *amalloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!arena || arena->used + n > arena->cap) {
		size_t cap = n > 65536 ? n : 65536;
		Block *b = xmalloc(sizeof *b + cap);
		b->next = arena;
		b->used = 0;
		b->cap = cap;
		arena = b;
	}
	void *p = arena->data + arena->used;
	arena->used += n;
	memset(p, 0, n);
	return p;
}

static char *astrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(amalloc(n), s, n);
}

static void arena_free(void)
{
	while (arena) {
		Block *b = arena->next;
		free(arena);
		arena = b;
	}
}

/* A growable array of pointers in the arena. */
typedef struct {
	void **v;
	int n, cap;
} Vec;

static void vpush(Vec *a, void *x)
{
	if (a->n == a->cap) {
		int cap = a->cap ? 2 * a->cap : 8;
		void **v = amalloc(cap * sizeof *v);
		if (a->n)
			memcpy(v, a->v, a->n * sizeof *v);
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
}

/* A sorted copy of a list of names, for lookups in O(log n). */
typedef struct {
	char **v;
	int n;
} NameSet;

/* ---- the model --------------------------------------------------------- */
typedef struct {
	char *name;
	Sort sort;
	int kind;          /* 0 stmt, 1 register class, 2 form, 3 helper */
	Loc loc;
	int used;          /* as a leaf of some rule */
	void *def;         /* RegClass or Form */
} Nt;

/* Another name of each register of a class (`view b [al, bl, ...]`). */
typedef struct {
	char *name;
	Loc loc;
	Vec regs;          /* char *, one per register of the class */
} View;

typedef struct {
	char *name;
	Loc loc;
	Sort sort;
	int width;
	Vec regs;          /* char * */
	Vec reserved, callee_saved;
	NameSet regset, rset, cset; /* the three, sorted */
	char *move;        /* template copying register {s} to {d} */
	char *aliases;     /* another class over the same physical registers */
	Vec views;         /* View *: `view NAME [...]`, the templates' {operand.NAME} */
	int nt;
	const char *file;  /* the file that defined it (for overrides) */
} RegClass;

typedef struct {
	char *name;
	Loc loc;
	int nt;            /* -1: an immediate */
	SelOp const_op;
	bool has_range;
	int64_t lo, hi;
	int depth;
	int8_t path[8];
} Operand;

typedef struct {
	char *name;
	Loc loc;
	bool is_form;
	const char *file;
	MdNode *pattern;   /* the typed pattern (borrowed from the tree) */
	MdNode *result;    /* BIND or NULL */
	int lhs;
	Sort sort;
	char *asm_template;
	Loc asm_loc;
	Vec ops;           /* Operand * */
	char *tied[2];
	Loc tied_loc;
	Vec clobbers;
	Loc clobbers_loc;
	double latency, throughput;
	Vec units;
	Loc units_loc;
	int size;
	int cost;
	bool bad;          /* already reported */
} Rule;

typedef struct {
	char *name;
	Loc loc;
	const char *file;
	MdNode *value;
} Param;

typedef struct {
	char *name;
	Loc loc;
	Sort sort;
	const char *file;
	Vec cases;         /* MdNode * (MATCH) */
	int nt;
} Form;

typedef struct {
	char *cls;
	Loc loc;
	Vec regs;
} AbiArgs_;

typedef enum { ACT_NATIVE, ACT_EXPAND, ACT_FALLBACK, ACT_UNSUPPORTED } Act;

typedef struct {
	Loc loc;
	int op;            /* OpKind or -1 */
	int dtype;         /* DType or -1 */
	Act act;
	char *rule;
	char *reason;
	Vec uses;          /* char * */
	Loc uses_loc;
	bool has_cost;
	double cost;
	bool per_mac;      /* cost is per multiply-accumulate, not per element */
	MdNode *when;
	char *when_c, *when_text;
	int file_index;
	int seq;           /* order of the rows of one line (foreach) */
	int expansion;     /* expand: index in core/expansions.def + 1 (Expansion) */
	int strategy;      /* native: strategy(NAME), index in core/lowerings.def + 1 */
	Loc strategy_loc;
} Legal;

typedef struct {
	char *name;
	Loc loc;
	const char *file;
	MdNode *node;      /* the instruction after expansion */
} InstDef;

typedef struct Env {
	const char *name;
	const MdNode *value;
	const struct Env *next;
} Env;

typedef struct {
	char *name;
	Loc loc;
	char *path;
	Vec files;         /* char *: the .md files, parent first */
	uint64_t hash;
	/* header */
	char *isa, *dialect, *abi_name, *reg_prefix;
	int pointer_bits;
	bool scalable;
	int vector_bits, vlen_max;
	Vec lmul;          /* intptr_t */
	unsigned dtypes;
	Vec units;         /* char * */
	char *parent;
	/* definitions */
	Vec classes;       /* MdNode * (CLASS) */
	Vec params;        /* Param * */
	Vec regclasses;    /* RegClass * */
	Vec forms;         /* Form * */
	Vec insts;         /* InstDef * */
	Vec legal;         /* Legal * */
	MdNode *abi;
	Vec abi_args, abi_ret; /* AbiArgs_ * */
	char *sp, *fp;
	int stack_align;
	/* derived */
	Vec nts;           /* Nt * */
	Vec rules;         /* Rule * */
	Vec burs;          /* BursRule * */
	Vec trees;         /* MdNode *: parsed and expanded trees, freed at the end */
	/* expansion budget (mdgen.h) */
	int nitems;        /* items after expansion */
	size_t nnodes;     /* nodes made by substitution */
	size_t nbytes;     /* bytes of strings made by substitution */
	bool over;         /* a budget was exceeded (and reported) */
	int nnames;        /* names listed (name_list) */
	NameSet allregs;   /* the registers of every class (is_register) */
	bool have_allregs;
	NameSet unitset;   /* units, sorted */
} Target;

/* The state of one run (mdgen_generate or mdgen_check_text): set up by
 * run_begin, released by run_end, so that nothing outlives a run. */
static Diag diag;
static int aux_counter;  /* numbers the helper nonterminals */
static const char *rel_root; /* -r: emitted file names are relative to it */

#define ERR(loc, ...) diag_error(&diag, (loc), __VA_ARGS__)

static void run_begin(const char *root_dir)
{
	diag_init(&diag);
	aux_counter = 0;
	rel_root = root_dir;
}

static void run_end(void)
{
	diag_free(&diag);
	arena_free();
	aux_counter = 0;
	rel_root = NULL;
}

/* ---- small helpers over the tree ----------------------------------------- */
static const char *kind_word(const MdNode *n)
{
	switch (n->kind) {
	case MD_IDENT: return "a name";
	case MD_VAR: return "a variable";
	case MD_STRING: return "a string";
	case MD_NUM: return "a number";
	case MD_LIST: return "a list";
	case MD_CALL: return "a call";
	case MD_RANGE: return "a register range";
	default: return "something else";
	}
}

static bool want(const MdNode *n, MdKind k, const char *what, const char *field)
{
	if (n && n->kind == k)
		return true;
	if (n && n->kind == MD_VAR)
		ERR(n->loc, "unknown variable '$%s'", n->text);
	else if (n)
		ERR(n->loc, "'%s' takes %s, not %s", field, what, kind_word(n));
	return false;
}

/* A node that must be a name (an instruction's, an operation's, a
 * nonterminal's): a variable left unreplaced, or a value of another kind
 * that a variable was replaced by, is reported. */
static bool want_name(const MdNode *n, const char *what)
{
	if (n->kind == MD_IDENT)
		return true;
	if (n->kind == MD_VAR)
		ERR(n->loc, "unknown variable '$%s'", n->text);
	else
		ERR(n->loc, "expected a name for %s, got %s", what, kind_word(n));
	return false;
}

/* The single value of a field, checked for kind. */
static const MdNode *field_value(const MdNode *f, MdKind k, const char *what)
{
	if (f->nkid != 1) {
		ERR(f->loc, "'%s' takes one value (%s), got %d", f->text, what, f->nkid);
		return NULL;
	}
	return want(f->kid[0], k, what, f->text) ? f->kid[0] : NULL;
}

static bool field_int(const MdNode *f, int64_t lo, int64_t hi, int64_t *out)
{
	const MdNode *v = field_value(f, MD_NUM, "an integer");
	if (!v)
		return false;
	if (!v->is_int || v->ival < lo || v->ival > hi) {
		ERR(v->loc, "'%s' must be an integer from %lld to %lld", f->text, (long long)lo, (long long)hi);
		return false;
	}
	*out = v->ival;
	return true;
}

static bool field_num(const MdNode *f, double *out)
{
	const MdNode *v = field_value(f, MD_NUM, "a number");
	if (!v)
		return false;
	if (v->num < 0) {
		ERR(v->loc, "'%s' must not be negative", f->text);
		return false;
	}
	if (v->num > MD_MAX_CYCLES) {
		ERR(v->loc, "'%s' must be at most %g cycles", f->text, MD_MAX_CYCLES);
		return false;
	}
	*out = v->num;
	return true;
}

/* Names in a list (with register ranges expanded) into vec: at most
 * MD_MAX_NAMES in one vec. */
static bool name_list(Target *t, const MdNode *list, Vec *out, const char *field)
{
	if (!want(list, MD_LIST, "a list of names", field))
		return false;
	bool ok = true;
	for (int i = 0; i < list->nkid; i++) {
		const MdNode *v = list->kid[i];
		int64_t count = v->kind == MD_RANGE ? (int64_t)v->num - v->ival + 1 : 1;
		if (count < 0)
			count = 0;
		if (out->n + count > MD_MAX_NAMES) {
			ERR(v->loc, "'%s' lists more than %d names", field, MD_MAX_NAMES);
			return false;
		}
		if (t->nnames + count > MD_MAX_TARGET_NAMES) {
			if (!t->over)
				ERR(v->loc, "the target lists more than %d names (registers, units, clobbers) in all",
				    MD_MAX_TARGET_NAMES);
			t->over = true;
			return false;
		}
		t->nnames += count;
		if (v->kind == MD_RANGE) {
			for (int64_t k = 0; k < count; k++) {
				char *name = xasprintf("%s%lld", v->text, (long long)(v->ival + k));
				vpush(out, astrdup(name));
				free(name);
			}
		} else if (want(v, MD_IDENT, "names", field)) {
			vpush(out, astrdup(v->text));
		} else {
			ok = false;
		}
	}
	return ok;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static NameSet name_set(const Vec *v)
{
	NameSet s = {amalloc((v->n ? v->n : 1) * sizeof *s.v), v->n};
	if (v->n)
		memcpy(s.v, v->v, v->n * sizeof *s.v);
	qsort(s.v, s.n, sizeof *s.v, cmp_str);
	return s;
}

static bool in_set(const NameSet *s, const char *name)
{
	return s->n && bsearch(&name, s->v, s->n, sizeof *s->v, cmp_str);
}

/* ---- expansion of classes and foreach ------------------------------------ */
static const MdNode *env_get(const Env *e, const char *name)
{
	for (; e; e = e->next)
		if (strcmp(e->name, name) == 0)
			return e->value;
	return NULL;
}

/* The text a variable's value stands for inside a string (malloc'd). */
static char *value_text(const MdNode *v)
{
	if (v->kind == MD_NUM)
		return v->is_int ? xasprintf("%lld", (long long)v->ival) : xasprintf("%g", v->num);
	return xstrdup(v->text ? v->text : "");
}

/* Replace $name in a string by the variables' values.  A string grows by
 * substitution to at most MD_MAX_STRING bytes, and all of them together to
 * MD_MAX_EXPANDED_BYTES: past that, the rest is cut, after an error. */
static char *subst_text(Target *t, Loc loc, const char *s, const Env *env)
{
	size_t cap = strlen(s) + 64, n = 0;
	char *out = xmalloc(cap);
	while (*s) {
		const MdNode *v = NULL;
		size_t len = 0;
		if (*s == '$') {
			while (s[1 + len] == '_' || (s[1 + len] >= 'a' && s[1 + len] <= 'z') ||
			       (s[1 + len] >= 'A' && s[1 + len] <= 'Z') || (s[1 + len] >= '0' && s[1 + len] <= '9'))
				len++;
			char *name = xstrndup(s + 1, len);
			v = env_get(env, name);
			free(name);
		}
		char *buf = NULL;
		const char *piece = s;
		size_t plen = 1;
		if (v) {
			buf = value_text(v);
			piece = buf;
			plen = strlen(buf);
			s += len + 1;
		} else {
			s++;
		}
		if ((v && n + plen > MD_MAX_STRING) || t->nbytes + plen > MD_MAX_EXPANDED_BYTES) {
			if (!t->over)
				ERR(loc, "substituting variables makes a string longer than %d bytes, or all strings longer "
				    "than %zu bytes together", MD_MAX_STRING, (size_t)MD_MAX_EXPANDED_BYTES);
			t->over = true;
			free(buf);
			break;
		}
		if (n + plen + 1 > cap) {
			cap = 2 * (n + plen + 1);
			out = xrealloc(out, cap);
		}
		memcpy(out + n, piece, plen);
		n += plen;
		t->nbytes += plen;
		free(buf);
	}
	out[n] = 0;
	return out;
}

static size_t md_count(const MdNode *n)
{
	size_t c = 1;
	for (int i = 0; i < n->nkid; i++)
		if (n->kid[i])
			c += md_count(n->kid[i]);
	return c;
}

/* Report (once) that the expansion budget is spent. */
static bool over_budget(Target *t, Loc loc, size_t more)
{
	if (!t->over && t->nnodes + more <= MD_MAX_NODES)
		return false;
	if (!t->over)
		ERR(loc, "expanding foreach and classes makes more than %d syntax nodes (the limit)", MD_MAX_NODES);
	t->over = true;
	return true;
}

/* A copy of n with the variables of env replaced by their values (counted
 * against the expansion budget: past it, a variable becomes 0). */
static MdNode *subst(Target *t, const MdNode *n, const Env *env)
{
	if (!n)
		return NULL;
	if (n->kind == MD_VAR) {
		const MdNode *v = env_get(env, n->text);
		if (v) {
			size_t more = md_count(v);
			MdNode *c;
			if (over_budget(t, n->loc, more)) {
				c = md_new(MD_NUM, n->loc);
				c->is_int = true;
			} else {
				c = md_clone(v);
			}
			t->nnodes += more;
			c->loc = n->loc;
			return c;
		}
	}
	MdNode *c = md_new(n->kind, n->loc);
	t->nnodes++;
	if (n->text)
		c->text = (n->kind == MD_STRING || n->kind == MD_IDENT) ? subst_text(t, n->loc, n->text, env) : xstrdup(n->text);
	c->num = n->num;
	c->ival = n->ival;
	c->is_int = n->is_int;
	for (int i = 0; i < n->nkid; i++)
		md_add(c, subst(t, n->kid[i], env));
	return c;
}

static MdNode *clone_counted(Target *t, const MdNode *n)
{
	if (n)
		t->nnodes += md_count(n);
	return md_clone(n);
}

static const MdNode *find_class(Target *t, const char *name)
{
	for (int i = t->classes.n - 1; i >= 0; i--) {
		const MdNode *c = t->classes.v[i];
		if (strcmp(c->text, name) == 0)
			return c;
	}
	return NULL;
}

static const char *line_key(const MdNode *line)
{
	return line->kind == MD_MATCH ? "match" : line->text;
}

/* An instruction that instantiates a class: the class body with the
 * arguments substituted, then the instruction's own lines replacing the
 * class's lines of the same key. */
static MdNode *instantiate(Target *t, MdNode *inst)
{
	MdNode *call = inst->kid[1];
	const MdNode *cls = find_class(t, call->text);
	if (!cls) {
		ERR(call->loc, "unknown class '%s'", call->text);
		return NULL;
	}
	const MdNode *params = cls->kid[0];
	if (params->nkid != call->nkid) {
		ERR(call->loc, "class '%s' takes %d arguments, got %d", cls->text, params->nkid, call->nkid);
		return NULL;
	}
	Env *env = NULL, *cells = xcalloc(params->nkid ? params->nkid : 1, sizeof *cells);
	for (int i = 0; i < params->nkid; i++) {
		cells[i] = (Env){params->kid[i]->text, call->kid[i], env};
		env = &cells[i];
	}
	MdNode *out = md_new(MD_INST, inst->loc);
	md_add(out, clone_counted(t, inst->kid[0]));
	md_add(out, NULL);
	for (int i = 1; i < cls->nkid; i++) {
		const char *key = line_key(cls->kid[i]);
		bool overridden = false;
		for (int k = 2; k < inst->nkid; k++)
			overridden |= strcmp(line_key(inst->kid[k]), key) == 0;
		if (!overridden)
			md_add(out, subst(t, cls->kid[i], env));
	}
	for (int k = 2; k < inst->nkid; k++)
		md_add(out, clone_counted(t, inst->kid[k]));
	free(cells);
	return out;
}

/* How many items a foreach nest makes (saturating at UINT64_MAX). */
static uint64_t expansion_items(const MdNode *item)
{
	if (item->kind != MD_FOREACH)
		return 1;
	uint64_t body = 0, n;
	for (int i = 2; i < item->nkid; i++)
		if (__builtin_add_overflow(body, expansion_items(item->kid[i]), &body))
			return UINT64_MAX;
	return __builtin_mul_overflow(body, (uint64_t)item->kid[1]->nkid, &n) ? UINT64_MAX : n;
}

static void expand(Target *t, const MdNode *item, const Env *env, Vec *out)
{
	if (over_budget(t, item->loc, 0))
		return;
	switch (item->kind) {
	case MD_FOREACH: {
		const MdNode *vars = item->kid[0], *tuples = item->kid[1];
		Env *cells = xcalloc(vars->nkid, sizeof *cells);
		for (int k = 0; k < tuples->nkid && !t->over; k++) {
			const MdNode *tup = tuples->kid[k];
			if (tup->nkid != vars->nkid) {
				ERR(tup->loc, "this tuple has %d values but foreach names %d variables", tup->nkid, vars->nkid);
				continue;
			}
			MdNode *vals = md_new(MD_LIST, tup->loc);
			for (int i = 0; i < vars->nkid; i++)
				md_add(vals, subst(t, tup->kid[i], env));
			vpush(&t->trees, vals);
			const Env *e = env;
			for (int i = 0; i < vars->nkid; i++) {
				cells[i] = (Env){vars->kid[i]->text, vals->kid[i], e};
				e = &cells[i];
			}
			for (int i = 2; i < item->nkid; i++)
				expand(t, item->kid[i], e, out);
		}
		free(cells);
		return;
	}
	case MD_CLASS: {
		MdNode *c = subst(t, item, env);
		vpush(&t->trees, c);
		const MdNode *old = find_class(t, c->text);
		if (old && old->loc.file == c->loc.file) {
			ERR(c->loc, "duplicate class '%s'", c->text);
			diag_note(&diag, old->loc, "'%s' was first defined here", c->text);
		}
		vpush(&t->classes, c);
		break;
	}
	case MD_INST: {
		MdNode *c = subst(t, item, env);
		vpush(&t->trees, c);
		if (c->kid[1]) {
			MdNode *x = instantiate(t, c);
			if (!x)
				break;
			vpush(&t->trees, x);
			c = x;
		}
		vpush(out, c);
		break;
	}
	default: {
		MdNode *c = subst(t, item, env);
		vpush(&t->trees, c);
		vpush(out, c);
	}
	}
	t->nitems++;
}

/* ---- loading a target and the targets it extends ------------------------- */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
}

char *md_read_file(const char *path, size_t *len, const char **why)
{
	/* O_NONBLOCK: opening a FIFO does not wait for a writer. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*why = strerror(errno);
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		*why = strerror(errno);
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file";
		close(fd);
		return NULL;
	}
	if ((uint64_t)st.st_size > MD_MAX_FILE_BYTES) {
		*why = "it is larger than the limit of 16 MiB";
		close(fd);
		return NULL;
	}
	/* one byte more than it had: it grew while we read it */
	bool grew;
	char *buf = read_fd_limited(fd, (uint64_t)st.st_size, len, &grew);
	if (!buf)
		*why = grew ? "it changed while it was read" : strerror(errno);
	close(fd);
	return buf;
}

/* Parse `path` (or, for the top file, `text` when not NULL) and what it
 * extends; append its expanded items (parents first) to out.  `stack`
 * holds the names being loaded, for cycles. */
static bool load(Target *t, const char *path, const char *mem, size_t memlen, Loc from, const char **stack, int depth,
		 Vec *out)
{
	if (depth >= MD_MAX_EXTENDS) {
		ERR(from, "'extends' is nested more than %d deep", MD_MAX_EXTENDS);
		return false;
	}
	size_t len = memlen;
	char *text = NULL;
	if (mem) {
		text = xmalloc(len + 1);
		if (len)
			memcpy(text, mem, len);
		text[len] = 0;
	} else {
		const char *why;
		text = md_read_file(path, &len, &why);
		if (!text) {
			ERR(from, "cannot read '%s': %s", path, why);
			return false;
		}
	}
	const char *file = diag_add_source(&diag, path, text, len); /* diag_print escapes raw bytes */
	t->hash = XXH3_64bits_withSeed(text, len, t->hash);
	MdNode *items = md_parse(file, text, len, &diag);
	free(text);
	if (!items)
		return false;
	vpush(&t->trees, items);
	vpush(&t->files, (void *)file);
	if (items->nkid == 0 || items->kid[0]->kind != MD_TARGET) {
		ERR(items->nkid ? items->kid[0]->loc : loc_at(file, 1, 1), "an .md file starts with its 'target' item");
		return false;
	}
	const MdNode *head = items->kid[0];
	stack[depth] = head->text;
	for (int i = 1; i < items->nkid; i++)
		if (items->kid[i]->kind == MD_TARGET)
			ERR(items->kid[i]->loc, "a second 'target' item (one target per file)");
	if (head->kid[0]) {
		const char *parent = head->kid[0]->text;
		for (int i = 0; i <= depth; i++)
			if (strcmp(stack[i], parent) == 0) {
				if (i == depth)
					ERR(head->kid[0]->loc, "'%s' extends itself", parent);
				else
					ERR(head->kid[0]->loc, "'%s' extends itself through '%s'", parent, head->text);
				return false;
			}
		char *dir = dir_of(path);
		char *ppath = xasprintf("%s/%s.md", dir, parent);
		free(dir);
		bool ok = load(t, ppath, NULL, 0, head->kid[0]->loc, stack, depth + 1, out);
		free(ppath);
		if (!ok)
			return false;
	}
	for (int i = 0; i < items->nkid && !t->over; i++) {
		const MdNode *item = items->kid[i];
		uint64_t n = expansion_items(item);
		if (n > (uint64_t)(MD_MAX_ITEMS - t->nitems)) {
			if (item->kind == MD_FOREACH && n > MD_MAX_ITEMS)
				ERR(item->loc, "this foreach makes %llu items, more than the limit of %d", (unsigned long long)n,
				    MD_MAX_ITEMS);
			else
				ERR(item->loc, "the target has more than %d items (the limit) after expanding foreach",
				    MD_MAX_ITEMS);
			t->over = true;
			break;
		}
		expand(t, item, NULL, out);
	}
	return true;
}

/* ---- building the model ------------------------------------------------- */
static int file_index(Target *t, const char *file)
{
	for (int i = 0; i < t->files.n; i++)
		if (t->files.v[i] == file)
			return i;
	return -1;
}

/* Files were pushed child first: a larger index is an older ancestor. */
static void header_field(Target *t, const MdNode *f)
{
	int64_t v;
	if (strcmp(f->text, "isa") == 0 || strcmp(f->text, "dialect") == 0 || strcmp(f->text, "abi") == 0) {
		const MdNode *s = field_value(f, MD_STRING, "a string");
		if (s)
			*(f->text[0] == 'i' ? &t->isa : f->text[0] == 'd' ? &t->dialect : &t->abi_name) = astrdup(s->text);
	} else if (strcmp(f->text, "reg_prefix") == 0) {
		const MdNode *p = field_value(f, MD_STRING, "a string");
		if (p)
			t->reg_prefix = astrdup(p->text);
	} else if (strcmp(f->text, "pointer_bits") == 0) {
		if (field_int(f, 32, 64, &v))
			t->pointer_bits = (int)v;
	} else if (strcmp(f->text, "vector") == 0) {
		if (f->nkid >= 1 && f->kid[0]->kind == MD_IDENT && strcmp(f->kid[0]->text, "fixed") == 0 &&
		    f->nkid == 2 && f->kid[1]->kind == MD_NUM && f->kid[1]->is_int && f->kid[1]->ival >= 32 &&
		    f->kid[1]->ival <= 65536 && f->kid[1]->ival % 32 == 0) {
			t->scalable = false;
			t->vector_bits = t->vlen_max = (int)f->kid[1]->ival;
		} else if (f->nkid == 3 && f->kid[0]->kind == MD_IDENT && strcmp(f->kid[0]->text, "scalable") == 0 &&
			   f->kid[1]->kind == MD_NUM && f->kid[2]->kind == MD_NUM && f->kid[1]->is_int &&
			   f->kid[2]->is_int && f->kid[1]->ival >= 32 && f->kid[2]->ival >= f->kid[1]->ival &&
			   f->kid[2]->ival <= 65536 && f->kid[1]->ival % 32 == 0 && f->kid[2]->ival % 32 == 0) {
			t->scalable = true;
			t->vector_bits = (int)f->kid[1]->ival;
			t->vlen_max = (int)f->kid[2]->ival;
		} else {
			ERR(f->loc, "'vector' is 'fixed BITS' or 'scalable MIN MAX' (bits, multiples of 32, at most 65536)");
		}
	} else if (strcmp(f->text, "lmul") == 0) {
		const MdNode *l = field_value(f, MD_LIST, "a list of integers");
		t->lmul.n = 0;
		for (int i = 0; l && i < l->nkid; i++) {
			const MdNode *x = l->kid[i];
			if (x->kind != MD_NUM || !x->is_int || x->ival < 1 || x->ival > 8 || (x->ival & (x->ival - 1)))
				ERR(x->loc, "an LMUL is 1, 2, 4 or 8");
			else
				vpush(&t->lmul, (void *)(intptr_t)x->ival);
		}
	} else if (strcmp(f->text, "dtypes") == 0) {
		const MdNode *l = field_value(f, MD_LIST, "a list of dtypes");
		t->dtypes = 0;
		for (int i = 0; l && i < l->nkid; i++) {
			const MdNode *x = l->kid[i];
			DType dt = x->kind == MD_IDENT ? dtype_from_name(x->text, strlen(x->text)) : DT_INVALID;
			if (dt == DT_INVALID)
				ERR(x->loc, "unknown dtype '%s'", x->text ? x->text : "?");
			else
				t->dtypes |= 1u << dt;
		}
	} else if (strcmp(f->text, "units") == 0) {
		t->units.n = 0;
		if (f->nkid == 1)
			name_list(t, f->kid[0], &t->units, "units");
		else
			ERR(f->loc, "'units' takes a list of execution-unit names");
	} else {
		ERR(f->loc, "unknown field '%s' in target (known: isa, dialect, abi, reg_prefix, pointer_bits, vector, lmul, dtypes, units)",
		    f->text);
	}
}

/* A definition by name: a later file (a child) replaces it; the same file
 * defining it twice is an error. */
static int find_named(Vec *v, size_t name_off, const char *name)
{
	for (int i = 0; i < v->n; i++)
		if (strcmp(*(char **)((char *)v->v[i] + name_off), name) == 0)
			return i;
	return -1;
}

static bool define_named(Vec *v, size_t name_off, size_t loc_off, void *def, const char *what)
{
	char *name = *(char **)((char *)def + name_off);
	Loc loc = *(Loc *)((char *)def + loc_off);
	int i = find_named(v, name_off, name);
	if (i < 0) {
		vpush(v, def);
		return true;
	}
	Loc old = *(Loc *)((char *)v->v[i] + loc_off);
	if (old.file == loc.file) {
		ERR(loc, "duplicate %s '%s'", what, name);
		diag_note(&diag, old, "'%s' was first defined here", name);
		return false;
	}
	v->v[i] = def; /* the child's replaces the parent's */
	return true;
}

#define DEFINE(vec, def, what) define_named(&(vec), offsetof(__typeof__(*(def)), name), offsetof(__typeof__(*(def)), loc), (def), (what))

static View *find_view(const RegClass *rc, const char *name)
{
	for (int v = 0; v < rc->views.n; v++)
		if (strcmp(((View *)rc->views.v[v])->name, name) == 0)
			return rc->views.v[v];
	return NULL;
}

static void build_regclass(Target *t, const MdNode *n)
{
	RegClass *rc = amalloc(sizeof *rc);
	rc->name = astrdup(n->text);
	rc->loc = n->loc;
	rc->file = n->loc.file;
	const MdNode *sort = n->kid[0];
	rc->sort = sort_lookup(sort->text, strlen(sort->text));
	if (rc->sort == SORT_NONE || rc->sort == SORT_X)
		ERR(sort->loc, "unknown sort '%s' for a register class (known: i, f, v, w, m, t)", sort->text);
	bool have_regs = false, have_width = false;
	for (int i = 1; i < n->nkid; i++) {
		const MdNode *f = n->kid[i];
		int64_t v;
		if (strcmp(f->text, "regs") == 0 && f->nkid == 1) {
			have_regs = name_list(t, f->kid[0], &rc->regs, "regs");
		} else if (strcmp(f->text, "width") == 0) {
			if (field_int(f, 1, 65536, &v))
				rc->width = (int)v, have_width = true;
		} else if (strcmp(f->text, "move") == 0) {
			const MdNode *m = field_value(f, MD_STRING, "a template");
			if (m && (!strstr(m->text, "{s}") || !strstr(m->text, "{d}")))
				ERR(m->loc, "a move template names the source {s} and the destination {d}");
			else if (m)
				rc->move = astrdup(m->text);
		} else if (strcmp(f->text, "aliases") == 0) {
			const MdNode *m = field_value(f, MD_IDENT, "a register class");
			if (m)
				rc->aliases = astrdup(m->text);
		} else if ((strcmp(f->text, "reserved") == 0 || strcmp(f->text, "callee_saved") == 0) && f->nkid == 1) {
			Vec *dst = f->text[0] == 'r' ? &rc->reserved : &rc->callee_saved;
			name_list(t, f->kid[0], dst, f->text);
		} else if (strcmp(f->text, "view") == 0) {
			/* view NAME [names]: another name of each register (x86's
			 * byte and 32-bit names of a 64-bit register) */
			if (f->nkid != 2 || f->kid[0]->kind != MD_IDENT) {
				ERR(f->loc, "a view is 'view NAME [register names]', one name per register of 'regs'");
				continue;
			}
			if (find_view(rc, f->kid[0]->text)) {
				ERR(f->kid[0]->loc, "view '%s' is defined twice in '%s'", f->kid[0]->text, rc->name);
				continue;
			}
			View *w = amalloc(sizeof *w);
			memset(w, 0, sizeof *w);
			w->name = astrdup(f->kid[0]->text);
			w->loc = f->loc;
			if (name_list(t, f->kid[1], &w->regs, "view"))
				vpush(&rc->views, w);
		} else {
			ERR(f->loc, "unknown field '%s' in register class '%s' (known: regs, width, reserved, callee_saved, move, aliases, view)",
			    f->text, rc->name);
		}
	}
	if (!have_regs)
		ERR(n->loc, "register class '%s' has no 'regs'", rc->name);
	if (!have_width)
		ERR(n->loc, "register class '%s' has no 'width'", rc->name);
	for (int v = 0; v < rc->views.n; v++) {
		const View *w = rc->views.v[v];
		if (have_regs && w->regs.n != rc->regs.n)
			ERR(w->loc, "view '%s' of '%s' names %d registers, but the class has %d", w->name, rc->name, w->regs.n,
			    rc->regs.n);
	}
	rc->regset = name_set(&rc->regs);
	rc->rset = name_set(&rc->reserved);
	rc->cset = name_set(&rc->callee_saved);
	for (int i = 1; i < rc->regset.n; i++) /* sorted: each extra copy is next to the first */
		if (strcmp(rc->regset.v[i], rc->regset.v[i - 1]) == 0)
			ERR(n->loc, "register '%s' is listed twice in '%s'", rc->regset.v[i], rc->name);
	Vec *subsets[] = {&rc->reserved, &rc->callee_saved};
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < subsets[s]->n; i++)
			if (!in_set(&rc->regset, subsets[s]->v[i]))
				ERR(n->loc, "unknown register '%s' in '%s' of class '%s'", (char *)subsets[s]->v[i],
				    s ? "callee_saved" : "reserved", rc->name);
	DEFINE(t->regclasses, rc, "register class");
}

static RegClass *find_regclass(Target *t, const char *name)
{
	int i = find_named(&t->regclasses, offsetof(RegClass, name), name);
	return i < 0 ? NULL : t->regclasses.v[i];
}

/* Called once every register class is built. */
static bool is_register(Target *t, const char *reg)
{
	if (!t->have_allregs) {
		Vec all = {0};
		for (int i = 0; i < t->regclasses.n; i++) {
			RegClass *rc = t->regclasses.v[i];
			for (int k = 0; k < rc->regs.n; k++)
				vpush(&all, rc->regs.v[k]);
		}
		t->allregs = name_set(&all);
		t->have_allregs = true;
	}
	return in_set(&t->allregs, reg);
}

static void check_class_regs(Target *t, const MdNode *where, const char *cls, const Vec *regs)
{
	RegClass *rc = find_regclass(t, cls);
	if (!rc) {
		ERR(where->loc, "unknown register class '%s'", cls);
		return;
	}
	for (int i = 0; i < regs->n; i++)
		if (!in_set(&rc->regset, regs->v[i]))
			ERR(where->loc, "'%s' is not a register of class '%s'", (char *)regs->v[i], cls);
}

static void build_abi(Target *t)
{
	const MdNode *n = t->abi;
	if (!n)
		return;
	for (int i = 0; i < n->nkid; i++) {
		const MdNode *f = n->kid[i];
		int64_t v;
		if ((strcmp(f->text, "args") == 0 || strcmp(f->text, "ret") == 0) && f->nkid == 2 &&
		    f->kid[0]->kind == MD_IDENT) {
			AbiArgs_ *a = amalloc(sizeof *a);
			a->cls = astrdup(f->kid[0]->text);
			a->loc = f->loc;
			if (f->kid[1]->kind == MD_IDENT)
				vpush(&a->regs, astrdup(f->kid[1]->text));
			else
				name_list(t, f->kid[1], &a->regs, f->text);
			check_class_regs(t, f, a->cls, &a->regs);
			vpush(f->text[0] == 'a' ? &t->abi_args : &t->abi_ret, a);
		} else if (strcmp(f->text, "stack_pointer") == 0 || strcmp(f->text, "frame_pointer") == 0) {
			const MdNode *r = field_value(f, MD_IDENT, "a register");
			if (r && !is_register(t, r->text))
				ERR(r->loc, "unknown register '%s'", r->text);
			else if (r)
				*(f->text[0] == 's' ? &t->sp : &t->fp) = astrdup(r->text);
		} else if (strcmp(f->text, "stack_align") == 0) {
			if (field_int(f, 1, 4096, &v))
				t->stack_align = (int)v;
		} else {
			ERR(f->loc, "unknown or malformed field '%s' in abi (known: args CLASS [regs], ret CLASS reg, "
			    "stack_pointer, frame_pointer, stack_align)", f->text);
		}
	}
}

/* ---- nonterminals and rules ---------------------------------------------- */
static int add_nt(Target *t, const char *name, Sort sort, int kind, Loc loc, void *def)
{
	Nt *nt = amalloc(sizeof *nt);
	nt->name = astrdup(name);
	nt->sort = sort;
	nt->kind = kind;
	nt->loc = loc;
	nt->def = def;
	vpush(&t->nts, nt);
	return t->nts.n - 1;
}

static int find_nt(Target *t, const char *name)
{
	for (int i = 0; i < t->nts.n; i++) {
		Nt *nt = t->nts.v[i];
		if (nt->kind != 3 && strcmp(nt->name, name) == 0)
			return i;
	}
	return -1;
}

static Operand *find_operand(Rule *r, const char *name)
{
	for (int i = 0; i < r->ops.n; i++)
		if (strcmp(((Operand *)r->ops.v[i])->name, name) == 0)
			return r->ops.v[i];
	return NULL;
}

/* Type-check a pattern; record its operands with their paths.  Returns the
 * sort it produces, SORT_NONE after an error. */
static Sort check_pattern(Target *t, Rule *r, const MdNode *p, int depth, int8_t *path)
{
	if (p->kind == MD_BIND) {
		const MdNode *what = p->kid[0];
		if (!want_name(what, "a nonterminal or constant"))
			return SORT_NONE;
		if (find_operand(r, p->text) || (r->result && strcmp(r->result->text, p->text) == 0)) {
			ERR(p->loc, "operand '%s' is bound twice in '%s'", p->text, r->name);
			return SORT_NONE;
		}
		Operand *op = amalloc(sizeof *op);
		op->name = astrdup(p->text);
		op->loc = p->loc;
		op->depth = depth;
		memcpy(op->path, path, (size_t)depth);
		int nt = find_nt(t, what->text);
		SelOp s = sel_lookup(what->text, strlen(what->text));
		Sort sort;
		if (nt >= 0) {
			op->nt = nt;
			sort = ((Nt *)t->nts.v[nt])->sort;
			if (p->nkid > 1 && p->kid[1]) {
				ERR(p->kid[1]->loc, "a range applies to immediates (const.i), not to '%s'", what->text);
				return SORT_NONE;
			}
		} else if (s == SEL_CONST_I || s == SEL_CONST_F || s == SEL_ADDR_SYM || s == SEL_ADDR_FAR) {
			op->nt = -1;
			op->const_op = s;
			sort = sel_info[s].result;
			if (p->nkid > 1 && p->kid[1]) {
				const MdNode *lo = p->kid[1]->kid[0], *hi = p->kid[1]->kid[1];
				if (s != SEL_CONST_I || !lo->is_int || !hi->is_int || lo->ival > hi->ival) {
					ERR(p->kid[1]->loc, "a range is two integers, low <= high, on a const.i");
					return SORT_NONE;
				}
				op->has_range = true;
				op->lo = lo->ival;
				op->hi = hi->ival;
			}
		} else if (s != SEL_COUNT) {
			ERR(what->loc, "'%s' is an operation, not a nonterminal: write %s(...) in the pattern", what->text,
			    what->text);
			return SORT_NONE;
		} else {
			ERR(what->loc, "unknown nonterminal '%s'", what->text);
			return SORT_NONE;
		}
		vpush(&r->ops, op);
		return sort;
	}
	/* an operation */
	const MdNode *w = p->kid[0];
	if (!want_name(w, "an operation"))
		return SORT_NONE;
	SelOp s = sel_lookup(w->text, strlen(w->text));
	if (s == SEL_COUNT) {
		ERR(w->loc, "unknown operation '%s' (see core/sel.def)", w->text);
		return SORT_NONE;
	}
	const SelInfo *si = &sel_info[s];
	if (s <= SEL_ADDR_FAR) {
		ERR(w->loc, "'%s' is a leaf: bind it to an operand (name: %s)", w->text,
		    s >= SEL_CONST_I ? w->text : "CLASS");
		return SORT_NONE;
	}
	if (p->nkid - 1 != si->nkids) {
		ERR(w->loc, "%s takes %d operand%s, got %d", si->name, si->nkids, si->nkids == 1 ? "" : "s", p->nkid - 1);
		return SORT_NONE;
	}
	if (depth >= 7) {
		ERR(w->loc, "pattern nested too deeply");
		return SORT_NONE;
	}
	bool ok = true;
	for (int i = 0; i < si->nkids; i++) {
		path[depth] = (int8_t)i;
		Sort k = check_pattern(t, r, p->kid[i + 1], depth + 1, path);
		if (k == SORT_NONE) {
			ok = false;
			continue;
		}
		if (k != si->kid[i]) {
			const MdNode *kp = p->kid[i + 1];
			ERR(kp->loc, "operand %d of %s is sort %s but '%s' has sort %s", i + 1, si->name, sort_name(si->kid[i]),
			    kp->kind == MD_BIND ? kp->text : kp->kid[0]->text, sort_name(k));
			ok = false;
		}
	}
	return ok ? si->result : SORT_NONE;
}

static int operand_nt(Rule *r, const char *name);

static bool check_template(Target *t, Rule *r)
{
	if (!r->asm_template)
		return true;
	bool ok = true;
	for (const char *s = r->asm_template; *s; s++) {
		if (s[0] == '{' && s[1] == '{') {
			s++;
			continue;
		}
		if (s[0] == '}' && s[1] == '}') {
			s++;
			continue;
		}
		if (*s != '{')
			continue;
		const char *e = strchr(s, '}');
		if (!e) {
			ERR(r->asm_loc, "unterminated '{' in the template of '%s'", r->name);
			return false;
		}
		char *name = xstrndup(s + 1, (size_t)(e - s - 1));
		char *view = strchr(name, '.'); /* {operand.VIEW}: the register's name in that view */
		if (view)
			*view++ = '\0';
		if (!find_operand(r, name) && !(r->result && strcmp(r->result->text, name) == 0)) {
			ERR(r->asm_loc, "the template of '%s' refers to unknown operand '{%s}'", r->name, name);
			ok = false;
		} else if (view) {
			int nt = operand_nt(r, name);
			const Nt *n = nt >= 0 ? t->nts.v[nt] : NULL;
			if (!n || n->kind != 1) {
				ERR(r->asm_loc, "the template of '%s' takes view '%s' of '{%s}', which is not a register", r->name,
				    view, name);
				ok = false;
			} else if (!find_view(n->def, view)) {
				ERR(r->asm_loc, "the template of '%s' takes view '%s' of '{%s}', but register class '%s' has no such view",
				    r->name, view, name, ((const RegClass *)n->def)->name);
				ok = false;
			}
		}
		free(name);
		s = e;
	}
	return ok;
}

/* The nonterminal of an operand or of the result, by name (-2: none). */
static int operand_nt(Rule *r, const char *name)
{
	if (r->result && strcmp(r->result->text, name) == 0)
		return r->lhs;
	Operand *o = find_operand(r, name);
	return o ? o->nt : -2;
}

static Rule *new_rule(const char *name, Loc loc, bool is_form)
{
	Rule *r = amalloc(sizeof *r);
	r->name = astrdup(name);
	r->loc = loc;
	r->file = loc.file;
	r->is_form = is_form;
	return r;
}

/* The pattern part shared by instructions and form cases. */
static bool type_rule(Target *t, Rule *r, const MdNode *match, int form_nt)
{
	r->result = match->kid[0];
	r->pattern = match->kid[1];
	int8_t path[8] = {0};
	if (r->result) {
		if (form_nt >= 0) {
			ERR(r->result->loc, "a form case has no result binding: its result is the form itself");
			return false;
		}
		if (r->result->kind != MD_BIND || r->result->kid[0]->kind != MD_IDENT ||
		    (r->result->nkid > 1 && r->result->kid[1])) {
			ERR(r->result->loc, "the result is written NAME: CLASS");
			return false;
		}
		int nt = find_nt(t, r->result->kid[0]->text);
		if (nt < 0) {
			ERR(r->result->kid[0]->loc, "unknown nonterminal '%s'", r->result->kid[0]->text);
			return false;
		}
		r->lhs = nt;
	} else {
		r->lhs = form_nt >= 0 ? form_nt : 0;
	}
	Sort s = check_pattern(t, r, r->pattern, 0, path);
	if (s == SORT_NONE)
		return false;
	Sort want_sort = ((Nt *)t->nts.v[r->lhs])->sort;
	if (s != want_sort) {
		if (!r->result && form_nt < 0)
			ERR(r->pattern->loc, "the pattern of '%s' gives a value of sort %s: name its result (match d: CLASS = ...)",
			    r->name, sort_name(s));
		else
			ERR(r->pattern->loc, "'%s' derives '%s' of sort %s but its pattern gives sort %s", r->name,
			    ((Nt *)t->nts.v[r->lhs])->name, sort_name(want_sort), sort_name(s));
		return false;
	}
	r->sort = s;
	return true;
}

static void build_form(Target *t, Form *f)
{
	for (int i = 0; i < f->cases.n; i++) {
		MdNode *m = f->cases.v[i];
		Rule *r = new_rule(f->name, m->loc, true);
		if (!type_rule(t, r, m, f->nt))
			continue;
		for (int k = 2; k + 1 < m->nkid + 1; k += 2) {
			const MdNode *key = m->kid[k];
			const MdNode *val = k + 1 < m->nkid ? m->kid[k + 1] : NULL;
			if (key->kind == MD_IDENT && strcmp(key->text, "asm") == 0 && val && val->kind == MD_STRING) {
				r->asm_template = astrdup(val->text);
				r->asm_loc = val->loc;
			} else if (key->kind == MD_IDENT && strcmp(key->text, "cost") == 0 && val && val->kind == MD_NUM &&
				   val->num >= 0 && val->num <= MD_MAX_CYCLES) {
				r->cost = (int)(val->num * 100 + 0.5);
			} else {
				ERR(key->loc, "a form case is 'match PATTERN [asm \"...\"] [cost N]' (N from 0 to %g)", MD_MAX_CYCLES);
				break;
			}
		}
		if (!r->asm_template)
			r->asm_template = astrdup("");
		check_template(t, r);
		vpush(&t->rules, r);
	}
}

static void build_inst(Target *t, InstDef *def)
{
	const MdNode *n = def->node;
	Rule *r = new_rule(def->name, def->loc, false);
	const MdNode *match = NULL;
	bool have_lat = false, have_tp = false, have_cost = false;
	for (int i = 2; i < n->nkid; i++) {
		const MdNode *f = n->kid[i];
		if (f->kind == MD_MATCH) {
			if (match) {
				ERR(f->loc, "instruction '%s' has a second 'match'", r->name);
				return;
			}
			match = f;
			if (f->nkid > 2) {
				ERR(f->kid[2]->loc, "an instruction's match line holds only the pattern");
				return;
			}
			continue;
		}
		int64_t v;
		double d;
		if (strcmp(f->text, "asm") == 0) {
			const MdNode *s = field_value(f, MD_STRING, "a string");
			if (s) {
				r->asm_template = astrdup(s->text);
				r->asm_loc = s->loc;
			}
		} else if (strcmp(f->text, "latency") == 0) {
			if (field_num(f, &d))
				r->latency = d, have_lat = true;
		} else if (strcmp(f->text, "throughput") == 0) {
			if (field_num(f, &d))
				r->throughput = d, have_tp = true;
		} else if (strcmp(f->text, "cost") == 0) {
			if (field_num(f, &d))
				r->cost = (int)(d * 100 + 0.5), have_cost = true;
		} else if (strcmp(f->text, "size") == 0) {
			if (field_int(f, 0, 64, &v))
				r->size = (int)v;
		} else if (strcmp(f->text, "units") == 0 && f->nkid == 1) {
			name_list(t, f->kid[0], &r->units, "units");
			r->units_loc = f->loc;
		} else if (strcmp(f->text, "clobbers") == 0 && f->nkid == 1) {
			name_list(t, f->kid[0], &r->clobbers, "clobbers");
			r->clobbers_loc = f->loc;
		} else if (strcmp(f->text, "tied") == 0) {
			if (f->nkid != 2 || f->kid[0]->kind != MD_IDENT || f->kid[1]->kind != MD_IDENT) {
				ERR(f->loc, "'tied' names two operands: tied d c");
				continue;
			}
			r->tied[0] = astrdup(f->kid[0]->text);
			r->tied[1] = astrdup(f->kid[1]->text);
			r->tied_loc = f->loc;
		} else {
			ERR(f->loc, "unknown field '%s' in instruction '%s' (known: match, asm, latency, throughput, units, "
			    "size, tied, clobbers, cost)", f->text, r->name);
		}
	}
	if (!match) {
		ERR(def->loc, "instruction '%s' has no 'match'", r->name);
		return;
	}
	if (!type_rule(t, r, match, -1))
		return;
	if (!r->asm_template)
		ERR(def->loc, "instruction '%s' has no 'asm' template", r->name);
	if (!have_lat)
		ERR(def->loc, "instruction '%s' has no 'latency' (cycles)", r->name);
	if (!have_tp)
		ERR(def->loc, "instruction '%s' has no 'throughput' (reciprocal throughput, cycles)", r->name);
	if (!have_cost)
		r->cost = (int)(r->throughput * 100 + 0.5);
	check_template(t, r);
	if (r->tied[0]) {
		int a = operand_nt(r, r->tied[0]), b = operand_nt(r, r->tied[1]);
		if (a == -2 || b == -2) {
			ERR(r->tied_loc, "'tied' names unknown operand '%s'", a == -2 ? r->tied[0] : r->tied[1]);
		} else if (a < 0 || b < 0) {
			ERR(r->tied_loc, "an immediate cannot be tied to a register ('%s')", a < 0 ? r->tied[0] : r->tied[1]);
		} else if (a != b || ((Nt *)t->nts.v[a])->kind != 1) {
			ERR(r->tied_loc, "tied operands '%s' and '%s' are in different classes ('%s' and '%s')", r->tied[0],
			    r->tied[1], ((Nt *)t->nts.v[a])->name, ((Nt *)t->nts.v[b])->name);
		}
	}
	for (int i = 0; i < r->clobbers.n; i++) {
		const char *c = r->clobbers.v[i];
		if (!is_register(t, c) && strcmp(c, "flags") != 0 && strcmp(c, "memory") != 0)
			ERR(r->clobbers_loc, "'%s' clobbers unknown register '%s'", r->name, c);
	}
	for (int i = 0; i < r->units.n; i++)
		if (!in_set(&t->unitset, r->units.v[i]))
			ERR(r->units_loc, "unknown execution unit '%s' (the target's 'units' lists them)", (char *)r->units.v[i]);
	vpush(&t->rules, r);
}

/* ---- normalization into BURS rules --------------------------------------- */

static BursRule *add_burs(Target *t, int lhs, int op, int origin, bool emits, int cost)
{
	BursRule *b = amalloc(sizeof *b);
	b->lhs = (int16_t)lhs;
	b->op = (int16_t)op;
	b->origin = origin;
	b->emits = emits;
	b->cost = cost;
	vpush(&t->burs, b);
	return b;
}

/* Returns the nonterminal that stands for pattern p. */
static int normalize(Target *t, Rule *r, int origin, const MdNode *p, bool root)
{
	if (p->kind == MD_BIND) {
		Operand *o = find_operand(r, p->text);
		if (o->nt >= 0 && !root)
			return o->nt;
		if (o->nt >= 0) { /* a chain rule: lhs <- nt */
			BursRule *b = add_burs(t, r->lhs, -1, origin, true, r->cost);
			b->nkids = 1;
			b->kid[0] = (int16_t)o->nt;
			return r->lhs;
		}
		int lhs = root ? r->lhs : -1;
		if (lhs < 0) {
			char *name = xasprintf("_%s_%d", r->name, ++aux_counter);
			lhs = add_nt(t, name, sel_info[o->const_op].result, 3, p->loc, NULL);
			free(name);
		}
		BursRule *b = add_burs(t, lhs, o->const_op, origin, root, root ? r->cost : 0);
		b->has_range = o->has_range;
		b->lo = o->has_range ? o->lo : INT64_MIN;
		b->hi = o->has_range ? o->hi : INT64_MAX;
		return lhs;
	}
	SelOp s = sel_lookup(p->kid[0]->text, strlen(p->kid[0]->text));
	int kids[3] = {0};
	for (int i = 0; i < sel_info[s].nkids; i++)
		kids[i] = normalize(t, r, origin, p->kid[i + 1], false);
	int lhs = r->lhs;
	if (!root) {
		char *name = xasprintf("_%s_%d", r->name, ++aux_counter);
		lhs = add_nt(t, name, sel_info[s].result, 3, p->loc, NULL);
		free(name);
	}
	BursRule *b = add_burs(t, lhs, s, origin, root, root ? r->cost : 0);
	b->nkids = (int16_t)sel_info[s].nkids;
	for (int i = 0; i < b->nkids; i++)
		b->kid[i] = (int16_t)kids[i];
	return lhs;
}

static BursGrammar grammar_of(Target *t, BursRule **flat)
{
	*flat = amalloc((t->burs.n ? t->burs.n : 1) * sizeof **flat);
	for (int i = 0; i < t->burs.n; i++)
		(*flat)[i] = *(BursRule *)t->burs.v[i];
	const char **names = amalloc(t->nts.n * sizeof *names);
	for (int i = 0; i < t->nts.n; i++)
		names[i] = ((Nt *)t->nts.v[i])->name;
	return (BursGrammar){t->nts.n, names, t->burs.n, *flat, NULL, NULL};
}

/* ---- rule checks ---------------------------------------------------------- */
static bool same_pattern(Rule *a, const MdNode *p, Rule *b, const MdNode *q)
{
	if (p->kind != q->kind)
		return false;
	if (p->kind == MD_BIND) {
		Operand *x = find_operand(a, p->text), *y = find_operand(b, q->text);
		return x->nt == y->nt && (x->nt >= 0 || (x->const_op == y->const_op && x->has_range == y->has_range &&
							  x->lo == y->lo && x->hi == y->hi));
	}
	if (strcmp(p->kid[0]->text, q->kid[0]->text) != 0 || p->nkid != q->nkid)
		return false;
	for (int i = 1; i < p->nkid; i++)
		if (!same_pattern(a, p->kid[i], b, q->kid[i]))
			return false;
	return true;
}

static void check_rules(Target *t)
{
	/* Ambiguous or dominated: the same pattern deriving the same
	 * nonterminal twice. */
	for (int i = 0; i < t->rules.n; i++)
		for (int k = 0; k < i; k++) {
			Rule *a = t->rules.v[k], *b = t->rules.v[i];
			if (a->lhs != b->lhs || !same_pattern(a, a->pattern, b, b->pattern))
				continue;
			if (a->cost == b->cost)
				ERR(b->loc, "ambiguous rules: '%s' and '%s' match the same pattern at the same cost", a->name, b->name);
			else
				ERR(b->loc, "unreachable rule: '%s' is never chosen, '%s' matches the same pattern more cheaply",
				    a->cost < b->cost ? b->name : a->name, a->cost < b->cost ? a->name : b->name);
		}
	/* Productive: derivable from some tree.  Register classes are (reg.*);
	 * a rule is productive when all its leaf nonterminals are. */
	int nn = t->nts.n;
	bool *prod = xcalloc(nn, 1), *reach = xcalloc(nn, 1);
	for (int i = 0; i < nn; i++)
		prod[i] = ((Nt *)t->nts.v[i])->kind == 1;
	for (bool changed = true; changed;) {
		changed = false;
		for (int i = 0; i < t->rules.n; i++) {
			Rule *r = t->rules.v[i];
			bool all = true;
			for (int k = 0; k < r->ops.n; k++) {
				Operand *o = r->ops.v[k];
				all &= o->nt < 0 || prod[o->nt];
			}
			if (all && !prod[r->lhs])
				prod[r->lhs] = changed = true;
		}
	}
	/* Reachable: from the goals (stmt and the register classes), through
	 * the leaves of rules whose result is reachable. */
	for (int i = 0; i < nn; i++)
		reach[i] = ((Nt *)t->nts.v[i])->kind <= 1;
	for (bool changed = true; changed;) {
		changed = false;
		for (int i = 0; i < t->rules.n; i++) {
			Rule *r = t->rules.v[i];
			if (!reach[r->lhs])
				continue;
			for (int k = 0; k < r->ops.n; k++) {
				Operand *o = r->ops.v[k];
				if (o->nt >= 0 && !reach[o->nt])
					reach[o->nt] = changed = true;
			}
		}
	}
	for (int i = 0; i < t->rules.n; i++) {
		Rule *r = t->rules.v[i];
		Nt *lhs = t->nts.v[r->lhs];
		if (!reach[r->lhs]) {
			ERR(r->loc, "unreachable rule: '%s' derives '%s', which no rule uses", r->name, lhs->name);
			continue;
		}
		for (int k = 0; k < r->ops.n; k++) {
			Operand *o = r->ops.v[k];
			if (o->nt >= 0 && !prod[o->nt]) {
				ERR(o->loc, "unreachable rule: '%s' needs '%s', which nothing derives", r->name,
				    ((Nt *)t->nts.v[o->nt])->name);
				break;
			}
		}
	}
	for (int i = 0; i < t->forms.n; i++) {
		Form *f = t->forms.v[i];
		if (f->cases.n == 0)
			ERR(f->loc, "form '%s' has no 'match' cases", f->name);
	}
	free(prod);
	free(reach);
}

/* ---- legality ------------------------------------------------------------- */
typedef struct {
	char *buf;
	size_t n, cap;
} Str;

static void sputs(Str *s, const char *x)
{
	size_t len = strlen(x);
	if (s->n + len + 1 > s->cap) {
		s->cap = 2 * (s->n + len + 1);
		s->buf = xrealloc(s->buf, s->cap);
	}
	memcpy(s->buf + s->n, x, len + 1);
	s->n += len;
}

static void sprintf_(Str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sprintf_(Str *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *x = xvasprintf(fmt, ap);
	va_end(ap);
	sputs(s, x);
	free(x);
}

static bool int_arg(const MdNode *call, int i, int64_t lo, int64_t hi, int64_t *out)
{
	const MdNode *a = call->kid[i];
	if (a->kind != MD_NUM || !a->is_int || a->ival < lo || a->ival > hi) {
		ERR(a->loc, "argument %d of %s() must be an integer from %lld to %lld", i + 1, call->text, (long long)lo,
		    (long long)hi);
		return false;
	}
	*out = a->ival;
	return true;
}

/* Translate a constraint into C (c) and back into text (txt). */
static bool constraint(const MdNode *e, int op, Str *c, Str *txt)
{
	switch (e->kind) {
	case MD_NUM:
		if (!e->is_int) {
			ERR(e->loc, "constraints compare integers");
			return false;
		}
		if (e->ival == INT64_MIN) /* -9223372036854775808 is not a C constant */
			sputs(c, "INT64_MIN");
		else
			sprintf_(c, "INT64_C(%lld)", (long long)e->ival);
		sprintf_(txt, "%lld", (long long)e->ival);
		return true;
	case MD_IDENT:
		if (strcmp(e->text, "rank") == 0) {
			sputs(c, "legal_rank(n, 0)");
		} else if (strcmp(e->text, "numel") == 0) {
			sputs(c, "legal_numel(n)");
		} else if (strncmp(e->text, "attr.", 5) == 0) {
			const char *name = e->text + 5;
			bool found = false;
			for (int o = 0; o < OP_COUNT; o++) {
				if (op >= 0 && o != op)
					continue;
				const AttrSpec *s = op_attr_spec((OpKind)o, name);
				if (s && s->kind == ATTR_INT)
					found = true;
				else if (s && op >= 0) {
					ERR(e->loc, "attribute '%s' of %s is %s %s: constraints compare integers", name,
					    op_info[op].name, s->kind == ATTR_INTS ? "an" : "a", attr_kind_name(s->kind));
					return false;
				}
			}
			if (!found) {
				ERR(e->loc, "unknown attribute '%s'%s%s", name, op >= 0 ? " of " : "", op >= 0 ? op_info[op].name : "");
				return false;
			}
			sprintf_(c, "legal_attr(n, \"%s\")", name);
		} else {
			ERR(e->loc, "unknown name '%s' in a constraint (known: rank, numel, attr.NAME, rank(K), dim(K, J), "
			    "outdim(J))", e->text);
			return false;
		}
		sputs(txt, e->text);
		return true;
	case MD_CALL: {
		int64_t a = 0, b = 0;
		int maxop = op >= 0 && op_info[op].max_in >= 0 ? op_info[op].max_in - 1 : 63;
		if (maxop < 0 && strcmp(e->text, "outdim") != 0) {
			ERR(e->loc, "%s() in a constraint names an operand, but %s has none", e->text, op_info[op].name);
			return false;
		}
		if (strcmp(e->text, "rank") == 0 && e->nkid == 1) {
			if (!int_arg(e, 0, 0, maxop, &a))
				return false;
			sprintf_(c, "legal_rank(n, %lld)", (long long)a);
			sprintf_(txt, "rank(%lld)", (long long)a);
		} else if (strcmp(e->text, "dim") == 0 && e->nkid == 2) {
			if (!int_arg(e, 0, 0, maxop, &a) || !int_arg(e, 1, -MAX_RANK, MAX_RANK - 1, &b))
				return false;
			sprintf_(c, "legal_dim(n, %lld, %lld)", (long long)a, (long long)b);
			sprintf_(txt, "dim(%lld, %lld)", (long long)a, (long long)b);
		} else if (strcmp(e->text, "constant") == 0 && e->nkid == 1) {
			if (!int_arg(e, 0, 0, maxop, &a))
				return false;
			sprintf_(c, "legal_const(n, %lld)", (long long)a);
			sprintf_(txt, "constant(%lld)", (long long)a);
		} else if (strcmp(e->text, "outdim") == 0 && e->nkid == 1) {
			if (!int_arg(e, 0, -MAX_RANK, MAX_RANK - 1, &a))
				return false;
			sprintf_(c, "legal_dim(n, -1, %lld)", (long long)a);
			sprintf_(txt, "outdim(%lld)", (long long)a);
		} else {
			ERR(e->loc, "unknown function '%s' with %d arguments in a constraint (known: rank(K), dim(K, J), "
			    "outdim(J), constant(K))", e->text, e->nkid);
			return false;
		}
		return true;
	}
	case MD_BINOP: {
		/* A chain k0 op k1 op k2 ... (left-associative), written as
		 * ((k0 op k1) op k2) ...  The C of + - * wraps around instead of
		 * overflowing, and / and % by zero (or INT64_MIN / -1) give 0:
		 * the legality test never has undefined behaviour. */
		const char *o = e->text;
		bool wrap = strcmp(o, "+") == 0 || strcmp(o, "-") == 0 || strcmp(o, "*") == 0;
		bool div = strcmp(o, "/") == 0 || strcmp(o, "%") == 0;
		for (int i = 1; i < e->nkid; i++) {
			sputs(c, wrap ? "(int64_t)((uint64_t)" : div ? (o[0] == '/' ? "legal_div_(" : "legal_mod_(") : "(");
			sputs(txt, "(");
		}
		for (int i = 0; i < e->nkid; i++) {
			if (i > 0) {
				if (wrap)
					sprintf_(c, " %s (uint64_t)", o);
				else if (div)
					sputs(c, ", ");
				else
					sprintf_(c, " %s ", o);
				sprintf_(txt, " %s ", o);
			}
			if (!constraint(e->kid[i], op, c, txt))
				return false;
			if (i > 0 && div && e->kid[i]->kind == MD_NUM && e->kid[i]->ival == 0) {
				ERR(e->kid[i]->loc, "division by zero in a constraint");
				return false;
			}
			if (i > 0) {
				sputs(c, ")");
				sputs(txt, ")");
			}
		}
		return true;
	}
	case MD_NOT:
		sputs(c, "(!");
		sputs(txt, "!");
		if (!constraint(e->kid[0], op, c, txt))
			return false;
		sputs(c, ")");
		return true;
	case MD_VAR:
		ERR(e->loc, "unknown variable '$%s'", e->text);
		return false;
	default:
		ERR(e->loc, "not a constraint expression");
		return false;
	}
}

/* The backend's expansions (core/expansions.def) and native lowerings
 * (core/lowerings.def): mdgen cannot link codegen, so it reads the same
 * tables for their names and what they cover. */
static const struct {
	const char *name;
	const char *fn;    /* the implementing function's name, or "NO_IMPL" */
} expansions[] = {
#define EXPANSION(name, fn, what) {#name, #fn},
#include "expansions.def"
#undef EXPANSION
};

static const char *const strategies[] = {
#define STRATEGY(name, what) #name,
#include "lowerings.def"
};

#define D(x) (1u << DT_##x)
#define S(x) (1u << (STRATEGY_ID_##x))
enum {
	STRATEGY_ID_NONE,
#define STRATEGY(name, what) STRATEGY_ID_##name,
#include "lowerings.def"
};
/* per op: the dtypes its native lowering handles, the strategies it takes */
static const struct {
	unsigned dtypes, strategies;
} natives[OP_COUNT] = {
#define LOWER(op, dtypes, fn, strats) [OP_##op] = {(dtypes), (strats)},
#include "lowerings.def"
};
#undef D
#undef S

static void build_legal(Target *t, const MdNode *n)
{
	Legal *l = amalloc(sizeof *l);
	l->loc = n->loc;
	l->file_index = file_index(t, n->loc.file);
	const MdNode *opw = n->kid[0], *dtw = n->kid[1], *words = n->kid[2];
	bool ok = true, op_known = true;
	if (!want_name(opw, "the op of a legality row") || !want_name(dtw, "the dtype of a legality row"))
		return;
	if (strcmp(opw->text, "*") == 0) {
		l->op = -1;
	} else {
		l->op = op_lookup(opw->text, strlen(opw->text));
		if (l->op == OP_COUNT) {
			ERR(opw->loc, "unknown op '%s' (gdcc --list-ops lists them)", opw->text);
			ok = op_known = false;
		}
	}
	if (strcmp(dtw->text, "*") == 0) {
		l->dtype = -1;
	} else {
		l->dtype = dtype_from_name(dtw->text, strlen(dtw->text));
		if (l->dtype == DT_INVALID) {
			ERR(dtw->loc, "unknown dtype '%s'", dtw->text);
			ok = false;
		} else if (!(t->dtypes & (1u << l->dtype))) {
			ERR(dtw->loc, "dtype '%s' is not in the target's dtypes", dtw->text);
			ok = false;
		}
	}
	if (words->nkid == 0) {
		ERR(n->loc, "a legality row needs an action: native, expand(RULE), fallback \"why\" or unsupported \"why\"");
		return;
	}
	const MdNode *a = words->kid[0];
	int k = 1;
	if (a->kind == MD_IDENT && strcmp(a->text, "native") == 0) {
		l->act = ACT_NATIVE;
	} else if (a->kind == MD_CALL && strcmp(a->text, "expand") == 0 && a->nkid == 1 && a->kid[0]->kind == MD_IDENT) {
		l->act = ACT_EXPAND;
		l->rule = astrdup(a->kid[0]->text);
		for (size_t i = 0; i < sizeof expansions / sizeof *expansions; i++)
			if (strcmp(expansions[i].name, l->rule) == 0)
				l->expansion = (int)i + 1;
		if (!l->expansion) {
			ERR(a->kid[0]->loc, "unknown expansion '%s' (core/expansions.def lists them)", l->rule);
			ok = false;
		} else if (strcmp(expansions[l->expansion - 1].fn, "NO_IMPL") == 0) {
			ERR(a->kid[0]->loc, "expansion '%s' has no implementation in the backend yet (core/expansions.def: NO_IMPL)",
			    l->rule);
			ok = false;
		}
	} else if (a->kind == MD_IDENT && (strcmp(a->text, "fallback") == 0 || strcmp(a->text, "unsupported") == 0)) {
		l->act = a->text[0] == 'f' ? ACT_FALLBACK : ACT_UNSUPPORTED;
		if (words->nkid < 2 || words->kid[1]->kind != MD_STRING) {
			ERR(a->loc, "'%s' needs its reason as a string", a->text);
			return;
		}
		l->reason = astrdup(words->kid[1]->text);
		k = 2;
	} else {
		ERR(a->loc, "unknown action (known: native, expand(RULE), fallback \"why\", unsupported \"why\")");
		return;
	}
	for (; k < words->nkid; k++) {
		const MdNode *w = words->kid[k];
		if (w->kind == MD_CALL && strcmp(w->text, "uses") == 0 && l->act == ACT_NATIVE) {
			l->uses_loc = w->loc;
			for (int i = 0; i < w->nkid; i++) {
				if (w->kid[i]->kind != MD_IDENT || sel_lookup(w->kid[i]->text, strlen(w->kid[i]->text)) == SEL_COUNT) {
					ERR(w->kid[i]->loc, "unknown operation '%s' in uses()", w->kid[i]->text ? w->kid[i]->text : "?");
					ok = false;
				} else {
					vpush(&l->uses, astrdup(w->kid[i]->text));
				}
			}
		} else if (w->kind == MD_CALL && strcmp(w->text, "strategy") == 0 && l->act == ACT_NATIVE && w->nkid == 1 &&
			   w->kid[0]->kind == MD_IDENT) {
			l->strategy_loc = w->kid[0]->loc;
			for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++)
				if (strcmp(strategies[i], w->kid[0]->text) == 0)
					l->strategy = (int)i + 1;
			if (!l->strategy) {
				ERR(w->kid[0]->loc, "unknown lowering strategy '%s' (core/lowerings.def lists them)", w->kid[0]->text);
				ok = false;
			}
		} else if (w->kind == MD_IDENT && strcmp(w->text, "cost") == 0 && k + 1 < words->nkid &&
			   words->kid[k + 1]->kind == MD_NUM && words->kid[k + 1]->num >= 0) {
			l->has_cost = true;
			l->cost = words->kid[++k]->num;
			if (k + 1 < words->nkid && words->kid[k + 1]->kind == MD_IDENT &&
			    (strcmp(words->kid[k + 1]->text, "per_mac") == 0 || strcmp(words->kid[k + 1]->text, "per_element") == 0))
				l->per_mac = words->kid[++k]->text[4] == 'm';
		} else {
			ERR(w->loc, "unexpected %s in a legality row (after the action: uses(...) and strategy(NAME) for native, cost N [per_mac])",
			    kind_word(w));
			ok = false;
		}
	}
	if (n->kid[3] && op_known) { /* an unknown op has no attributes or operands to check against */
		l->when = n->kid[3];
		Str c = {0}, txt = {0};
		if (constraint(l->when, l->op, &c, &txt)) {
			l->when_c = astrdup(c.buf);
			l->when_text = astrdup(txt.buf);
		} else {
			ok = false;
		}
		free(c.buf);
		free(txt.buf);
	}
	if (ok) {
		l->seq = t->legal.n;
		vpush(&t->legal, l);
	}
}

/* A probe tree: op over register leaves of its operand sorts. */
static int32_t probe_cost(Target *t, const BursGrammar *g, SelOp s)
{
	BursNode kids[3] = {0}, root = {0};
	root.op = s;
	for (int i = 0; i < sel_info[s].nkids; i++) {
		SelOp leaf = sel_reg_leaf(sel_info[s].kid[i]);
		if (leaf == SEL_COUNT)
			return BURS_INF;
		kids[i].op = leaf;
		root.kid[i] = &kids[i];
	}
	burs_label(g, &root);
	int32_t best = BURS_INF;
	for (int nt = 0; nt < t->nts.n; nt++) {
		Nt *x = t->nts.v[nt];
		bool goal = sel_info[s].result == SORT_X ? nt == 0 : (x->kind == 1 && x->sort == sel_info[s].result);
		if (goal && root.cost[nt] < best)
			best = root.cost[nt];
	}
	burs_unlabel(&root);
	return best;
}

/* A target that names a strategy defines every param the strategy reads
 * (core/lowerings.def: STRATEGY_PARAM...), of its type and in its range:
 * the strategy has no defaults.  A missing one is reported at the first
 * strategy(NAME) use, a wrong one at its value. */
static const Param *find_param(const Target *t, const char *name)
{
	int i = find_named((Vec *)&t->params, offsetof(Param, name), name);
	return i < 0 ? NULL : t->params.v[i];
}

static void param_value_str(const MdNode *v, char *buf, size_t size)
{
	if (v->kind == MD_NUM && v->is_int)
		snprintf(buf, size, "%lld", (long long)v->ival);
	else if (v->kind == MD_NUM) /* (a float as one: 4.0, not 4) */
		snprintf(buf, size, "%.17g%s", v->num, v->num == floor(v->num) && fabs(v->num) < 1e17 ? ".0" : "");
	else if (v->kind == MD_STRING)
		snprintf(buf, size, "\"%.200s\"", v->text);
	else
		snprintf(buf, size, "%s", kind_word(v));
}

/* Does the target's param satisfy the strategy's declaration? */
static bool strategy_param_ok(const StrategyParam *sp, const Param *p)
{
	const MdNode *v = p->value;
	if (sp->kind == SPARAM_CHOICE)
		return v->kind == MD_STRING && strategy_param_word_ok(sp, v->text);
	return v->kind == MD_NUM && strategy_param_num_ok(sp, v->num, v->is_int);
}

static const StrategyParam *strategy_param_decl(int strategy, const char *name)
{
	for (int i = 0; i < nstrategy_params; i++)
		if (strategy_params[i].strategy == strategy && strategy_params[i].kind != SPARAM_SAME &&
		    strcmp(strategy_params[i].name, name) == 0)
			return &strategy_params[i];
	return NULL;
}

static void check_strategy_params(const Target *t, const Legal *l)
{
	const char *sn = strategies[l->strategy - 1];
	char want[512], have[256];
	for (int i = 0; i < nstrategy_params; i++) {
		const StrategyParam *sp = &strategy_params[i];
		if (sp->strategy != l->strategy)
			continue;
		const Param *p = find_param(t, sp->name);
		if (sp->kind == SPARAM_SAME) {
			const Param *o = find_param(t, sp->other);
			const StrategyParam *pd = strategy_param_decl(l->strategy, sp->name), *od = strategy_param_decl(l->strategy, sp->other);
			/* (only between two good values: a missing or bad one is reported already) */
			if (p && o && pd && od && strategy_param_ok(pd, p) && strategy_param_ok(od, o) && p->value->num != o->value->num) {
				/* (at the one the more derived file sets: a child that changed it) */
				if (file_index((Target *)t, o->value->loc.file) < file_index((Target *)t, p->value->loc.file)) {
					const Param *x = p;
					p = o;
					o = x;
				}
				param_value_str(p->value, have, sizeof have);
				param_value_str(o->value, want, sizeof want);
				ERR(p->value->loc, "param %s = %s differs from param %s = %s: strategy(%s) needs them equal (%s)",
				    p->name, have, o->name, want, sn, sp->what);
			}
			continue;
		}
		strategy_param_expect(sp, want, sizeof want);
		if (!p) {
			if (sp->required)
				ERR(l->strategy_loc, "strategy(%s) needs param %s, %s (%s): target '%s' has no param %s", sn,
				    sp->name, want, sp->what, t->name, sp->name);
			continue;
		}
		if (!strategy_param_ok(sp, p)) {
			param_value_str(p->value, have, sizeof have);
			ERR(p->value->loc, "param %s %s %s: strategy(%s) needs %s (%s)", sp->name,
			    p->value->kind == MD_NUM || p->value->kind == MD_STRING ? "=" : "is", have, sn, want, sp->what);
		}
	}
}

static void check_legal(Target *t, const BursGrammar *g)
{
	unsigned strategies_checked = 0; /* bit per strategy whose params were checked */
	int32_t memo[SEL_COUNT]; /* probe_cost by operation, -1: not yet */
	for (int i = 0; i < SEL_COUNT; i++)
		memo[i] = -1;
	for (int i = 0; i < t->legal.n; i++) {
		Legal *l = t->legal.v[i];
		if (l->act != ACT_NATIVE)
			continue;
		if (l->op < 0) {
			ERR(l->loc, "a native row names its op (native lowering is per op)");
			continue;
		}
		if (l->uses.n == 0) {
			const char *u = op_info[l->op].native_uses;
			if (!*u) {
				ERR(l->loc, "%s has no direct lowering: mark it expand(RULE), fallback or unsupported",
				    op_info[l->op].name);
				continue;
			}
			char *copy = xstrdup(u);
			for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " "))
				vpush(&l->uses, astrdup(tok));
			free(copy);
		}
		/* the backend must lower it: every dtype this row decides (those
		 * no earlier unconditional row took) in core/lowerings.def */
		Str missing = {0};
		for (int d = DT_F32; d < DT_COUNT; d++) {
			if (!(t->dtypes & (1u << d)) || (l->dtype >= 0 && l->dtype != d))
				continue;
			bool taken = false;
			for (int j = 0; j < i && !taken; j++) {
				const Legal *e = t->legal.v[j];
				taken = (e->op < 0 || e->op == l->op) && (e->dtype < 0 || e->dtype == d) && !e->when;
			}
			if (!taken && !(natives[l->op].dtypes & (1u << d)))
				sprintf_(&missing, "%s%s", missing.n ? ", " : "", dtype_name((DType)d));
		}
		if (missing.n) {
			ERR(l->loc, "the backend has no native lowering of %s for %s (core/lowerings.def): mark it expand(NAME), "
			    "fallback or unsupported", op_info[l->op].name, missing.buf);
			free(missing.buf);
			continue;
		}
		if (l->strategy && !(natives[l->op].strategies & (1u << l->strategy))) {
			ERR(l->strategy_loc, "the native lowering of %s has no strategy '%s' (core/lowerings.def)",
			    op_info[l->op].name, strategies[l->strategy - 1]);
			continue;
		}
		if (l->strategy && !(strategies_checked & (1u << l->strategy))) {
			strategies_checked |= 1u << l->strategy;
			check_strategy_params(t, l);
		}
		bool vector = false, tiles = false;
		double total = 0;
		for (int k = 0; k < l->uses.n; k++) {
			const char *u = l->uses.v[k];
			SelOp s = sel_lookup(u, strlen(u));
			if (memo[s] < 0)
				memo[s] = probe_cost(t, g, s);
			int32_t c = memo[s];
			if (c >= BURS_INF) {
				Str sig = {0};
				sprintf_(&sig, "%s(", u);
				for (int j = 0; j < sel_info[s].nkids; j++)
					sprintf_(&sig, "%sreg.%s", j ? ", " : "", sort_name(sel_info[s].kid[j]));
				sputs(&sig, ")");
				ERR(l->loc, "legal %s %s is native but no rule chain selects %s", op_info[l->op].name,
				    l->dtype < 0 ? "*" : dtype_name((DType)l->dtype), sig.buf);
				free(sig.buf);
				total = -1;
				break;
			}
			total += c / 100.0;
			vector |= sel_info[s].result == SORT_V;
			tiles |= sel_info[s].result == SORT_T;
			for (int j = 0; j < sel_info[s].nkids; j++) {
				vector |= sel_info[s].kid[j] == SORT_V;
				tiles |= sel_info[s].kid[j] == SORT_T;
			}
		}
		/* A cover of tile operations is per tile, not per element: such
		 * rows give their cost themselves (or stay unknown). */
		if (total >= 0 && !l->has_cost && !tiles) {
			l->has_cost = true;
			l->cost = vector ? total / (t->vector_bits / 32.0) : total;
		}
	}
	/* Completeness: every op and declared dtype has an unconditional row. */
	for (int o = 0; o < OP_COUNT; o++) {
		if (o == OP_CONSTANT)
			continue; /* constants become data, on every target */
		Str missing = {0};
		for (int d = DT_F32; d < DT_COUNT; d++) {
			if (!(t->dtypes & (1u << d)))
				continue;
			bool covered = false;
			for (int i = 0; i < t->legal.n && !covered; i++) {
				Legal *l = t->legal.v[i];
				covered = (l->op < 0 || l->op == o) && (l->dtype < 0 || l->dtype == d) && !l->when;
			}
			if (!covered)
				sprintf_(&missing, "%s%s", missing.n ? ", " : "", dtype_name((DType)d));
		}
		if (missing.n)
			ERR(t->loc, "no legality row covers %s for %s (add a row without 'when', or a wildcard)",
			    op_info[o].name, missing.buf);
		free(missing.buf);
	}
}

/* ---- one target, start to end --------------------------------------------- */
static int cmp_legal(const void *a, const void *b)
{
	const Legal *x = *(const Legal *const *)a, *y = *(const Legal *const *)b;
	if (x->file_index != y->file_index)
		return x->file_index - y->file_index; /* the child's rows first */
	if (x->loc.line != y->loc.line)
		return x->loc.line - y->loc.line;
	return x->seq - y->seq;
}

static Target *build_target(const char *path, const char *text, size_t len, Loc from)
{
	Target *t = amalloc(sizeof *t);
	t->path = astrdup(path);
	t->stack_align = 16;
	const char *stack[MD_MAX_EXTENDS];
	Vec items = {0};
	int before = diag.nerrors;
	if (!load(t, path, text, len, from, stack, 0, &items))
		return t;
	/* header: the parents' fields, then the child's */
	for (int i = 0; i < items.n; i++) {
		MdNode *n = items.v[i];
		if (n->kind != MD_TARGET)
			continue;
		t->name = astrdup(n->text);
		t->loc = n->loc;
		t->parent = n->kid[0] ? astrdup(n->kid[0]->text) : t->parent;
		for (int k = 1; k < n->nkid; k++)
			header_field(t, n->kid[k]);
	}
	{
		/* the child's own parent, not a grandparent */
		MdNode *own = ((MdNode *)t->trees.v[0])->kid[0];
		t->parent = own->kid[0] ? astrdup(own->kid[0]->text) : NULL;
		t->name = astrdup(own->text);
		t->loc = own->loc;
	}
	t->unitset = name_set(&t->units);
	if (!t->isa || !t->dialect || !t->pointer_bits || !t->vector_bits || !t->dtypes)
		ERR(t->loc, "target '%s' needs isa, dialect, pointer_bits, vector and dtypes", t->name);
	for (int i = 0; i < items.n; i++) {
		MdNode *n = items.v[i];
		switch (n->kind) {
		case MD_PARAM: {
			Param *p = amalloc(sizeof *p);
			p->name = astrdup(n->text);
			p->loc = n->loc;
			p->value = n->kid[0];
			const MdNode *v = p->value;
			bool ok = v->kind == MD_NUM || v->kind == MD_STRING;
			if (v->kind == MD_LIST) {
				ok = true;
				for (int k = 0; k < v->nkid; k++)
					ok &= v->kid[k]->kind == MD_NUM;
			}
			if (!ok)
				ERR(v->loc, "a param is a number, a string or a list of numbers");
			else
				DEFINE(t->params, p, "param");
			break;
		}
		case MD_REGCLASS: build_regclass(t, n); break;
		case MD_ABI:
			if (t->abi && t->abi->loc.file == n->loc.file)
				ERR(n->loc, "duplicate abi");
			t->abi = n;
			break;
		case MD_FORM: {
			Form *f = amalloc(sizeof *f);
			f->name = astrdup(n->text);
			f->loc = n->loc;
			f->sort = sort_lookup(n->kid[0]->text, strlen(n->kid[0]->text));
			if (f->sort == SORT_NONE)
				ERR(n->kid[0]->loc, "unknown sort '%s' (known: i, f, v, w, m, t, x)", n->kid[0]->text);
			for (int k = 1; k < n->nkid; k++)
				vpush(&f->cases, n->kid[k]);
			DEFINE(t->forms, f, "form");
			break;
		}
		case MD_INST: {
			InstDef *d = amalloc(sizeof *d);
			if (!want_name(n->kid[0], "an instruction"))
				break;
			d->name = astrdup(n->kid[0]->text);
			d->loc = n->kid[0]->loc;
			d->node = n;
			DEFINE(t->insts, d, "instruction");
			break;
		}
		case MD_LEGAL: build_legal(t, n); break;
		default: break;
		}
	}
	build_abi(t);
	for (int i = 0; i < t->regclasses.n; i++) {
		RegClass *rc = t->regclasses.v[i];
		if (!rc->aliases)
			continue;
		RegClass *other = find_regclass(t, rc->aliases);
		if (!other)
			ERR(rc->loc, "register class '%s' aliases unknown class '%s'", rc->name, rc->aliases);
		else if (other == rc || other->aliases)
			ERR(rc->loc, "register class '%s' must alias a class that aliases none", rc->name);
		else if (other->regs.n != rc->regs.n) {
			/* fewer registers: each must be one of the other class's, by name */
			for (int k = 0; k < rc->regs.n; k++)
				if (!in_set(&other->regset, rc->regs.v[k]))
					ERR(rc->loc, "register class '%s' aliases '%s' but its register '%s' is not one of its",
					    rc->name, other->name, (char *)rc->regs.v[k]);
		}
	}
	/* nonterminals: stmt, the register classes, the forms */
	add_nt(t, "stmt", SORT_X, 0, t->loc, NULL);
	for (int i = 0; i < t->regclasses.n; i++) {
		RegClass *rc = t->regclasses.v[i];
		rc->nt = add_nt(t, rc->name, rc->sort, 1, rc->loc, rc);
	}
	for (int i = 0; i < t->forms.n; i++) {
		Form *f = t->forms.v[i];
		if (find_nt(t, f->name) >= 0) {
			ERR(f->loc, "duplicate nonterminal '%s': a register class has that name", f->name);
			continue;
		}
		f->nt = add_nt(t, f->name, f->sort, 2, f->loc, f);
	}
	for (int i = 0; i < t->forms.n; i++)
		build_form(t, t->forms.v[i]);
	for (int i = 0; i < t->insts.n; i++)
		build_inst(t, t->insts.v[i]);
	if (diag.nerrors != before)
		return t;
	/* BURS rules: a register leaf for each class, then the patterns */
	for (int i = 0; i < t->regclasses.n; i++) {
		RegClass *rc = t->regclasses.v[i];
		BursRule *b = add_burs(t, rc->nt, sel_reg_leaf(rc->sort), -1, false, 0);
		b->nkids = 0;
	}
	for (int i = 0; i < t->rules.n; i++) {
		Rule *r = t->rules.v[i];
		normalize(t, r, i, r->pattern, true);
	}
	/* The tables index nonterminals and rules with int16_t. */
	if (t->nts.n > 30000 || t->burs.n > 30000) {
		ERR(t->loc, "the patterns make %d nonterminals and %d normalized rules, more than the limit of 30000",
		    t->nts.n, t->burs.n);
		return t;
	}
	check_rules(t);
	if (t->legal.n > 1)
		qsort(t->legal.v, t->legal.n, sizeof *t->legal.v, cmp_legal);
	BursRule *flat;
	BursGrammar g = grammar_of(t, &flat);
	check_legal(t, &g);
	return t;
}

/* ---- emission ------------------------------------------------------------- */

static const char *rel(const char *path)
{
	size_t n = rel_root ? strlen(rel_root) : 0;
	if (n && strncmp(path, rel_root, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}

static void cstr(FILE *o, const char *s)
{
	if (!s) {
		fputs("NULL", o);
		return;
	}
	fputc('"', o);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(o, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", o);
		else if (*s == '\t')
			fputs("\\t", o);
		else if ((unsigned char)*s < 0x20)
			fprintf(o, "\\%03o", (unsigned char)*s);
		else
			fputc(*s, o);
	}
	fputc('"', o);
}

static void emit_names(FILE *o, const char *var, const Vec *v)
{
	fprintf(o, "static const char *const %s[] = {", var);
	for (int i = 0; i < v->n; i++) {
		fputs(i ? ", " : "", o);
		cstr(o, v->v[i]);
	}
	fprintf(o, "%s};\n", v->n ? "" : "NULL");
}

static const char *op_id(int op)
{
	static const char *const ids[] = {
#define OP(id, name, ...) "OP_" #id,
#include "ops.def"
#undef OP
	};
	return ids[op];
}

static const char *dtype_id(int dt)
{
	static const char *const ids[] = {
		"DT_INVALID",
#define DTYPE(id, name, size, npy) "DT_" #id,
#include "dtypes.def"
#undef DTYPE
	};
	return ids[dt];
}

static const char *sel_id(int s)
{
	static const char *const ids[] = {
#define SEL(id, ...) "SEL_" #id,
#include "sel.def"
#undef SEL
	};
	return ids[s];
}

static const char *sort_id(Sort s)
{
	static const char *const ids[] = {"SORT_NONE", "SORT_I", "SORT_F", "SORT_V", "SORT_W", "SORT_M", "SORT_T", "SORT_X"};
	return ids[s];
}

static void emit_target(FILE *o, Target *t, int k)
{
	fprintf(o, "\n/* ---- %s, from %s */\n", t->name, rel(t->path));
	/* register classes */
	for (int i = 0; i < t->regclasses.n; i++) {
		RegClass *rc = t->regclasses.v[i];
		char var[64];
		snprintf(var, sizeof var, "t%d_rc%d_regs", k, i);
		emit_names(o, var, &rc->regs);
		fprintf(o, "static const bool t%d_rc%d_reserved[] = {", k, i);
		for (int r = 0; r < rc->regs.n; r++)
			fprintf(o, "%s%d", r ? ", " : "", in_set(&rc->rset, rc->regs.v[r]));
		fprintf(o, "};\nstatic const bool t%d_rc%d_callee[] = {", k, i);
		for (int r = 0; r < rc->regs.n; r++)
			fprintf(o, "%s%d", r ? ", " : "", in_set(&rc->cset, rc->regs.v[r]));
		fputs("};\n", o);
		for (int v = 0; v < rc->views.n; v++) {
			snprintf(var, sizeof var, "t%d_rc%d_view%d", k, i, v);
			emit_names(o, var, &((View *)rc->views.v[v])->regs);
		}
		fprintf(o, "static const RegView t%d_rc%d_views[] = {", k, i);
		for (int v = 0; v < rc->views.n; v++) {
			fputs("{", o);
			cstr(o, ((View *)rc->views.v[v])->name);
			fprintf(o, ", t%d_rc%d_view%d}, ", k, i, v);
		}
		fputs(rc->views.n ? "};\n" : "{0}};\n", o);
	}
	fprintf(o, "static const RegClassInfo t%d_regclasses[] = {\n", k);
	for (int i = 0; i < t->regclasses.n; i++) {
		RegClass *rc = t->regclasses.v[i];
		fputs("\t{", o);
		cstr(o, rc->name);
		int alias = -1;
		for (int j = 0; rc->aliases && j < t->regclasses.n; j++)
			if (strcmp(((RegClass *)t->regclasses.v[j])->name, rc->aliases) == 0)
				alias = j;
		fprintf(o, ", %s, %d, %d, t%d_rc%d_regs, t%d_rc%d_reserved, t%d_rc%d_callee, ", sort_id(rc->sort),
			rc->width, rc->regs.n, k, i, k, i, k, i);
		cstr(o, rc->move);
		fprintf(o, ", %d, %d, %d, t%d_rc%d_views},\n", alias, rc->nt, rc->views.n, k, i);
	}
	fprintf(o, "%s};\n", t->regclasses.n ? "" : "\t{0}\n");
	/* abi */
	Vec *abis[] = {&t->abi_args, &t->abi_ret};
	for (int a = 0; a < 2; a++) {
		for (int i = 0; i < abis[a]->n; i++) {
			char var[64];
			snprintf(var, sizeof var, "t%d_abi%d_%d", k, a, i);
			emit_names(o, var, &((AbiArgs_ *)abis[a]->v[i])->regs);
		}
		fprintf(o, "static const AbiArgs t%d_abi%d[] = {", k, a);
		for (int i = 0; i < abis[a]->n; i++) {
			AbiArgs_ *x = abis[a]->v[i];
			fputs("{", o);
			cstr(o, x->cls);
			fprintf(o, ", %d, t%d_abi%d_%d}, ", x->regs.n, k, a, i);
		}
		fprintf(o, "%s};\n", abis[a]->n ? "" : "{0}");
	}
	/* params */
	for (int i = 0; i < t->params.n; i++) {
		Param *p = t->params.v[i];
		fprintf(o, "static const double t%d_param%d[] = {", k, i);
		if (p->value->kind == MD_NUM)
			fprintf(o, "%.17g", p->value->num);
		else if (p->value->kind == MD_LIST)
			for (int j = 0; j < p->value->nkid; j++)
				fprintf(o, "%s%.17g", j ? ", " : "", p->value->kid[j]->num);
		else
			fputs("0", o);
		fputs("};\n", o);
	}
	fprintf(o, "static const ParamInfo t%d_params[] = {\n", k);
	for (int i = 0; i < t->params.n; i++) {
		Param *p = t->params.v[i];
		fputs("\t{", o);
		cstr(o, p->name);
		fputs(", ", o);
		cstr(o, p->value->kind == MD_STRING ? p->value->text : NULL);
		int n = p->value->kind == MD_NUM ? 1 : p->value->kind == MD_LIST ? p->value->nkid : 0;
		fprintf(o, ", %d, t%d_param%d},\n", n, k, i);
	}
	fprintf(o, "%s};\n", t->params.n ? "" : "\t{0}\n");
	/* rules */
	for (int i = 0; i < t->rules.n; i++) {
		Rule *r = t->rules.v[i];
		for (int j = 0; j < r->ops.n; j++) {
			Operand *op = r->ops.v[j];
			fprintf(o, "static const int8_t t%d_r%d_p%d[] = {", k, i, j);
			for (int d = 0; d < op->depth; d++)
				fprintf(o, "%s%d", d ? ", " : "", op->path[d]);
			fprintf(o, "%s};\n", op->depth ? "" : "0");
		}
		fprintf(o, "static const OperandInfo t%d_r%d_ops[] = {", k, i);
		for (int j = 0; j < r->ops.n; j++) {
			Operand *op = r->ops.v[j];
			fputs("{", o);
			cstr(o, op->name);
			fprintf(o, ", %d, %d, t%d_r%d_p%d}, ", op->nt, op->depth, k, i, j);
		}
		fprintf(o, "%s};\n", r->ops.n ? "" : "{0}");
		char var[64];
		snprintf(var, sizeof var, "t%d_r%d_clobbers", k, i);
		emit_names(o, var, &r->clobbers);
		snprintf(var, sizeof var, "t%d_r%d_units", k, i);
		emit_names(o, var, &r->units);
	}
	fprintf(o, "static const RuleInfo t%d_rules[] = {\n", k);
	for (int i = 0; i < t->rules.n; i++) {
		Rule *r = t->rules.v[i];
		fputs("\t{", o);
		cstr(o, r->name);
		fprintf(o, ", %s, ", r->is_form ? "true" : "false");
		cstr(o, r->asm_template);
		fprintf(o, ", %d, ", r->lhs);
		cstr(o, r->result ? r->result->text : NULL);
		fprintf(o, ", %d, t%d_r%d_ops, {", r->ops.n, k, i);
		cstr(o, r->tied[0]);
		fputs(", ", o);
		cstr(o, r->tied[1]);
		fprintf(o, "}, %d, t%d_r%d_clobbers, %.17g, %.17g, %d, t%d_r%d_units, %d, %d, ", r->clobbers.n, k, i,
			r->latency, r->throughput, r->units.n, k, i, r->size, r->cost);
		cstr(o, rel(r->file));
		fprintf(o, ", %d},\n", r->loc.line);
	}
	fprintf(o, "%s};\n", t->rules.n ? "" : "\t{0}\n");
	/* the normalized grammar */
	fprintf(o, "static const char *const t%d_nts[] = {", k);
	for (int i = 0; i < t->nts.n; i++) {
		fputs(i ? ", " : "", o);
		cstr(o, ((Nt *)t->nts.v[i])->name);
	}
	fprintf(o, "};\nstatic const BursRule t%d_burs[] = {\n", k);
	for (int i = 0; i < t->burs.n; i++) {
		BursRule *b = t->burs.v[i];
		fprintf(o, "\t{%d, %s, %d, {%d, %d, %d}, %d, %s, INT64_C(%lld), INT64_C(%lld), %d, %s},\n", b->lhs,
			b->op < 0 ? "-1" : sel_id(b->op), b->nkids, b->kid[0], b->kid[1], b->kid[2], b->cost,
			b->has_range ? "true" : "false", (long long)(b->has_range ? b->lo : 0),
			(long long)(b->has_range ? b->hi : 0), b->origin, b->emits ? "true" : "false");
	}
	fprintf(o, "%s};\n", t->burs.n ? "" : "\t{0}\n");
	/* the rules by operator (chain rules last, at SEL_COUNT) for the labeler */
	fprintf(o, "static const int32_t t%d_byop[SEL_COUNT + 2] = {", k);
	int at = 0;
	for (int op = 0; op <= SEL_COUNT + 1; op++) {
		fprintf(o, "%s%d", op ? ", " : "", at);
		for (int i = 0; op <= SEL_COUNT && i < t->burs.n; i++) {
			const BursRule *b = t->burs.v[i];
			at += op < SEL_COUNT ? b->op == op : b->op < 0;
		}
	}
	fprintf(o, "};\nstatic const int32_t t%d_oprules[] = {", k);
	int nout = 0;
	for (int op = 0; op <= SEL_COUNT; op++)
		for (int i = 0; i < t->burs.n; i++) {
			const BursRule *b = t->burs.v[i];
			if (op < SEL_COUNT ? b->op == op : b->op < 0)
				fprintf(o, "%s%d", nout++ ? ", " : "", i);
		}
	fprintf(o, "%s};\n", nout ? "" : "0");
	/* legality */
	for (int i = 0; i < t->legal.n; i++) {
		Legal *l = t->legal.v[i];
		if (l->when_c)
			fprintf(o, "static bool t%d_when%d(const Node *n)\n{\n\treturn %s;\n}\n", k, i, l->when_c);
	}
	fprintf(o, "static const LegalEntry t%d_legal[] = {\n", k);
	static const char *const acts[] = {"LEGAL_NATIVE", "LEGAL_EXPAND", "LEGAL_FALLBACK", "LEGAL_UNSUPPORTED"};
	for (int i = 0; i < t->legal.n; i++) {
		Legal *l = t->legal.v[i];
		fprintf(o, "\t{%s, %s, %s, ", l->op < 0 ? "-1" : op_id(l->op), l->dtype < 0 ? "-1" : dtype_id(l->dtype),
			acts[l->act]);
		cstr(o, l->rule);
		fputs(", ", o);
		cstr(o, l->reason);
		fputs(", ", o);
		cstr(o, l->when_text);
		if (l->when_c)
			fprintf(o, ", t%d_when%d, ", k, i);
		else
			fputs(", NULL, ", o);
		Str uses = {0};
		for (int j = 0; j < l->uses.n; j++)
			sprintf_(&uses, "%s%s", j ? " " : "", (char *)l->uses.v[j]);
		cstr(o, l->uses.n ? uses.buf : NULL);
		free(uses.buf);
		fprintf(o, ", %.17g, %s, ", l->has_cost ? l->cost : -1.0, l->per_mac ? "true" : "false");
		cstr(o, rel(l->loc.file));
		fprintf(o, ", %d, ", l->loc.line);
		if (l->expansion)
			fprintf(o, "EXPANSION_%s, ", expansions[l->expansion - 1].name);
		else
			fputs("EXPANSION_NONE, ", o);
		if (l->strategy)
			fprintf(o, "LEGAL_STRATEGY_%s},\n", strategies[l->strategy - 1]);
		else
			fputs("LEGAL_STRATEGY_NONE},\n", o);
	}
	fprintf(o, "%s};\n", t->legal.n ? "" : "\t{0}\n");
	fprintf(o, "static const int t%d_lmul[] = {", k);
	for (int i = 0; i < t->lmul.n; i++)
		fprintf(o, "%s%d", i ? ", " : "", (int)(intptr_t)t->lmul.v[i]);
	fprintf(o, "%s};\n", t->lmul.n ? "" : "0");
	/* the target */
	fprintf(o, "static const Target t%d = {\n\t.name = ", k);
	cstr(o, t->name);
	fputs(",\n\t.parent = ", o);
	cstr(o, t->parent);
	fputs(",\n\t.isa = ", o);
	cstr(o, t->isa);
	fputs(",\n\t.dialect = ", o);
	cstr(o, t->dialect);
	fputs(",\n\t.abi_name = ", o);
	cstr(o, t->abi_name);
	fputs(",\n\t.reg_prefix = ", o);
	cstr(o, t->reg_prefix ? t->reg_prefix : "");
	fprintf(o, ",\n\t.pointer_bits = %d,\n\t.scalable = %s,\n\t.vector_bits = %d,\n\t.vlen_max = %d,\n", t->pointer_bits,
		t->scalable ? "true" : "false", t->vector_bits, t->vlen_max);
	fprintf(o, "\t.nlmul = %d,\n\t.lmul = t%d_lmul,\n\t.dtypes = 0x%xu,\n", t->lmul.n, k, t->dtypes);
	fprintf(o, "\t.nregclasses = %d,\n\t.regclasses = t%d_regclasses,\n", t->regclasses.n, k);
	fprintf(o, "\t.abi = {%d, t%d_abi0, %d, t%d_abi1, ", t->abi_args.n, k, t->abi_ret.n, k);
	cstr(o, t->sp);
	fputs(", ", o);
	cstr(o, t->fp);
	fprintf(o, ", %d},\n", t->stack_align);
	fprintf(o, "\t.nparams = %d,\n\t.params = t%d_params,\n", t->params.n, k);
	fprintf(o, "\t.nrules = %d,\n\t.rules = t%d_rules,\n", t->rules.n, k);
	fprintf(o, "\t.grammar = {%d, t%d_nts, %d, t%d_burs, t%d_byop, t%d_oprules},\n", t->nts.n, k, t->burs.n, k, k, k);
	fprintf(o, "\t.nlegal = %d,\n\t.legal = t%d_legal,\n\t.md_file = ", t->legal.n, k);
	cstr(o, rel(t->path));
	fprintf(o, ",\n\t.md_hash = UINT64_C(0x%016llx),\n};\n", (unsigned long long)t->hash);
}

/* ---- entry points --------------------------------------------------------- */
static void emit_all(FILE *o, const Vec *targets)
{
	fputs("/* Generated by gen/mdgen from the machine descriptions: do not edit. */\n"
	      "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n"
	      "#include \"ops.h\"\n#include \"target.h\"\n\n"
	      "/* Division in legality constraints: by zero (or INT64_MIN by -1) gives 0. */\n"
	      "static inline int64_t legal_div_(int64_t a, int64_t b)\n"
	      "{\n\treturn b == 0 || (a == INT64_MIN && b == -1) ? 0 : a / b;\n}\n"
	      "static inline int64_t legal_mod_(int64_t a, int64_t b)\n"
	      "{\n\treturn b == 0 || (a == INT64_MIN && b == -1) ? 0 : a % b;\n}\n",
	      o);
	for (int i = 0; i < targets->n; i++)
		emit_target(o, targets->v[i], i);
	fputs("\nconst Target *const gdcc_targets[] = {", o);
	for (int i = 0; i < targets->n; i++)
		fprintf(o, "%s&t%d", i ? ", " : "", i);
	fprintf(o, "%s};\nconst int gdcc_ntargets = %d;\n", targets->n ? "" : "NULL", targets->n);
}

static void free_targets(const Vec *targets)
{
	for (int i = 0; i < targets->n; i++) {
		Target *t = targets->v[i];
		for (int k = 0; k < t->trees.n; k++)
			md_free(t->trees.v[k]);
	}
}

int mdgen_check_text(const char *name, const char *text, size_t len, FILE *diag_out)
{
	run_begin(NULL);
	Vec targets = {0};
	Target *t = build_target(name, text ? text : "", text ? len : 0, loc_at(name, 0, 0));
	vpush(&targets, t);
	if (!diag_has_errors(&diag)) {
		/* The emitters run too, into nothing: only the file is not written. */
		FILE *sink = fopen("/dev/null", "w");
		if (sink) {
			emit_all(sink, &targets);
			fclose(sink);
		}
	}
	int nerrors = diag.nerrors;
	if (diag_out)
		diag_print(&diag, diag_out);
	free_targets(&targets);
	run_end();
	return nerrors;
}

int mdgen_generate(const char *const *inputs, int ninputs, const char *out, const char *root_dir)
{
	run_begin(root_dir);
	Vec targets = {0};
	for (int li = 0; li < ninputs; li++) {
		const char *list = inputs[li];
		size_t arglen = strlen(list);
		if (arglen > 3 && strcmp(list + arglen - 3, ".md") == 0) { /* a target file itself */
			vpush(&targets, build_target(list, NULL, 0, loc_at(list, 0, 0)));
			continue;
		}
		size_t len;
		const char *why;
		char *text = md_read_file(list, &len, &why);
		if (!text) {
			diag_error(&diag, loc_at(list, 0, 0), "cannot read: %s", why);
			continue;
		}
		const char *lfile = diag_add_source(&diag, list, text, len);
		char *dir = dir_of(list);
		int line = 0;
		for (char *s = text, *next, *end = text + len; s < end; s = next) {
			line++;
			next = memchr(s, '\n', (size_t)(end - s));
			if (next)
				*next++ = 0;
			else
				next = end;
			char *hash = strchr(s, '#');
			if (hash)
				*hash = 0;
			char *b = s;
			while (*b == ' ' || *b == '\t' || *b == '\r')
				b++;
			char *e = b;
			while (*e && *e != ' ' && *e != '\t' && *e != '\r')
				e++;
			if (e == b)
				continue;
			char *name = xstrndup(b, (size_t)(e - b));
			char *path = xasprintf("%s/%s.md", dir, name);
			Target *t = build_target(path, NULL, 0, loc_at(lfile, line, (int)(b - s) + 1));
			free(path);
			free(name);
			if (t->name)
				for (int k = 0; k < targets.n; k++) /* (one that failed has no name) */
					if (((Target *)targets.v[k])->name && strcmp(((Target *)targets.v[k])->name, t->name) == 0)
						diag_error(&diag, loc_at(lfile, line, 1), "target '%s' is listed twice", t->name);
			vpush(&targets, t);
		}
		free(dir);
		free(text);
	}
	int status = 0;
	if (diag_has_errors(&diag)) {
		status = 1;
	} else {
		char *tmp = xasprintf("%s.tmp", out);
		FILE *o = fopen(tmp, "w");
		if (!o) {
			fprintf(stderr, "mdgen: error: cannot create '%s': %s\n", tmp, strerror(errno));
			status = 1;
		} else {
			emit_all(o, &targets);
			if (fclose(o) != 0 || rename(tmp, out) != 0) {
				fprintf(stderr, "mdgen: error: cannot write '%s': %s\n", out, strerror(errno));
				remove(tmp);
				status = 1;
			}
		}
		free(tmp);
	}
	diag_print(&diag, stderr);
	free_targets(&targets);
	run_end();
	return status;
}
