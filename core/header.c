/* The C header of a compiled model (--header=FILE, docs/c-api.md): the
 * entry point's prototype, a macro set per input and output (its argument
 * index, dtype, C type, shape, elements and bytes), the workspace size and
 * the buffers' alignment, and a typed wrapper PREFIX_run(inputs...,
 * outputs..., workspace).
 *
 * Names.  PREFIX is the header file's name without its folder and
 * extension (mlp.h: mlp; the model's name when the header goes to standard
 * output), macros are PREFIX_ in upper case.  Each input and output gets a
 * C identifier from its value name: every character outside [A-Za-z0-9_]
 * becomes '_', runs of '_' become one, leading and trailing ones are
 * dropped, a name that is then empty or starts with a digit gets a 'v'
 * before it, and a C or C++ keyword (or "args", "workspace", which the
 * wrapper uses) a '_' after it.  Names equal to an earlier one ignoring case
 * (the macros are upper case), in the order inputs then outputs, get _2,
 * _3, ... (the first free). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "config.h"
#include "util.h"

static const char *const reserved[] = {
	"args", "workspace",
	/* C17 */
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float",
	"for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof",
	"static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false",
	/* C++ */
	"alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "catch", "class", "compl", "concept", "consteval",
	"constexpr", "constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete", "dynamic_cast",
	"explicit", "export", "friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator",
	"or", "or_eq", "private", "protected", "public", "reinterpret_cast", "requires", "static_assert", "static_cast",
	"template", "this", "thread_local", "throw", "try", "typeid", "typename", "using", "virtual", "wchar_t", "xor",
	"xor_eq", "char8_t", "char16_t", "char32_t",
	NULL,
};

/* name as a C identifier (malloc'd), before collisions. */
static char *c_ident(const char *name)
{
	size_t n = strlen(name);
	char *r = xmalloc(n + 3), *o = r;
	if (!*name || isdigit((unsigned char)name[0]))
		*o++ = 'v';
	for (const char *s = name; *s; s++) {
		char c = isalnum((unsigned char)*s) && !((unsigned char)*s & 0x80) ? *s : '_';
		if (c == '_' && (o == r || o[-1] == '_'))
			continue;
		*o++ = c;
	}
	while (o > r && o[-1] == '_')
		o--;
	*o = 0;
	if (!*r || isdigit((unsigned char)r[0])) {
		memmove(r + 1, r, strlen(r) + 1);
		r[0] = 'v';
	}
	for (int i = 0; reserved[i]; i++)
		if (strcmp(r, reserved[i]) == 0) {
			strcat(r, "_");
			break;
		}
	return r;
}

static bool same_nocase(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (toupper((unsigned char)*a) != toupper((unsigned char)*b))
			return false;
	return *a == *b;
}

/* The identifiers of the inputs then the outputs, collisions resolved. */
static char **value_idents(const Graph *g)
{
	int n = g->ninputs + g->noutputs;
	char **id = xcalloc((size_t)n + 1, sizeof *id);
	for (int i = 0; i < n; i++) {
		const Value *v = i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs];
		char *base = c_ident(v->name), *cand = xstrdup(base);
		for (int k = 2;; k++) {
			bool taken = false;
			for (int j = 0; j < i && !taken; j++)
				taken = same_nocase(id[j], cand);
			if (!taken)
				break;
			free(cand);
			cand = xasprintf("%s_%d", base, k);
		}
		free(base);
		id[i] = cand;
	}
	return id;
}

static void put_upper(FILE *o, const char *s)
{
	for (; *s; s++)
		fputc(toupper((unsigned char)*s), o);
}

static const char *c_type(DType t)
{
	switch (t) {
	case DT_F32: return "float";
	case DT_I32: return "int32_t";
	case DT_I64: return "int64_t";
	case DT_BOOL: return "uint8_t";
	case DT_I8: return "int8_t";
	default: return "uint16_t"; /* f16, bf16: the bits */
	}
}

/* A C comment's text: no end of comment, nothing unprintable. */
static void put_comment_text(FILE *o, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '*' && s[1] == '/')
			fputs("*\\", o);
		else
			fputc(c < 0x20 || c == 0x7f ? '?' : c, o);
	}
}

/* A C string literal's contents. */
static void put_c_string(FILE *o, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(o, "\\%c", *c);
		else if (*c < 0x20 || *c >= 0x7f)
			fprintf(o, "\\%03o", *c);
		else if (*c == '?' && c[1] == '?')
			fputs("?\\", o); /* (no trigraphs) */
		else
			fputc(*c, o);
	}
}

/* The prefix: the header's file name without folder and extension, as an
 * identifier (the model's name for standard output). */
static char *header_prefix(const char *path, const Graph *g)
{
	if (!path || strcmp(path, "-") == 0)
		return c_ident(g->name);
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	const char *dot = strrchr(b, '.');
	char *stem = dot && dot != b ? xstrndup(b, (size_t)(dot - b)) : xstrdup(b);
	char *r = c_ident(stem);
	free(stem);
	return r;
}

void program_header(FILE *o, const Program *p, const char *path)
{
	const Graph *g = p->g;
	char *pre = header_prefix(path, g);
	char **id = value_idents(g);
	const char *entry = p->f->name;
	fprintf(o, "/* Generated by gdcc %s for %s from ", PACKAGE_VERSION, p->t->name);
	put_comment_text(o, g->file ? g->file : g->name);
	fputs(": do not edit.\n * The C interface of model '", o);
	put_comment_text(o, g->name);
	fprintf(o, "' (docs/c-api.md): link the object of\n * gdcc -c (or the assembly of gdcc -S) with the program that includes this. */\n");
	fputs("#ifndef GDCC_", o);
	put_upper(o, pre);
	fputs("_H\n#define GDCC_", o);
	put_upper(o, pre);
	fputs("_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", o);
#define M(fmt, ...) (fputs("#define ", o), put_upper(o, pre), fprintf(o, "_" fmt "\n", __VA_ARGS__))
	fputs("/* Every buffer (each input, each output, the workspace) must be this aligned\n"
	      " * (bytes) and not overlap another. */\n", o);
	M("ALIGNMENT %d", 64);
	fputs("/* The arguments: the inputs, the outputs, then the workspace. */\n", o);
	M("NARGS %d", p->nargs);
	M("NINPUTS %d", g->ninputs);
	M("NOUTPUTS %d", g->noutputs);
	M("WORKSPACE_ARG %d", p->nargs - 1);
	M("WORKSPACE_BYTES ((size_t)%lldu)", (long long)p->workspace_bytes);
	for (int i = 0; i < g->ninputs + g->noutputs; i++) {
		bool in = i < g->ninputs;
		const Value *v = in ? g->inputs[i] : g->outputs[i - g->ninputs];
		const Shape *s = &v->type.shape;
		char *up = xstrdup(id[i]);
		for (char *c = up; *c; c++)
			*c = (char)toupper((unsigned char)*c);
		fprintf(o, "\n/* %s %d '", in ? "input" : "output", in ? i : i - g->ninputs);
		put_comment_text(o, v->name);
		fprintf(o, "': %s[", dtype_name(v->type.dtype));
		for (int k = 0; k < s->rank; k++)
			fprintf(o, "%s%lld", k ? ", " : "", (long long)s->dim[k]);
		fprintf(o, "], args[%d] */\n", i);
		M("%s_ARG %d", up, i);
		fputs("#define ", o);
		put_upper(o, pre);
		fprintf(o, "_%s_NAME \"", up);
		put_c_string(o, v->name);
		fputs("\"\n", o);
		M("%s_DTYPE \"%s\"", up, dtype_name(v->type.dtype));
		M("%s_TYPE %s", up, c_type(v->type.dtype));
		M("%s_RANK %d", up, s->rank);
		if (s->rank) {
			fputs("#define ", o);
			put_upper(o, pre);
			fprintf(o, "_%s_SHAPE {", up);
			for (int k = 0; k < s->rank; k++)
				fprintf(o, "%s%lld", k ? ", " : "", (long long)s->dim[k]);
			fputs("}\n", o);
		}
		for (int k = 0; k < s->rank; k++)
			M("%s_DIM%d %lld", up, k, (long long)s->dim[k]);
		M("%s_NUMEL ((size_t)%lldu)", up, (long long)shape_numel(s));
		M("%s_BYTES ((size_t)%lldu)", up, (long long)(shape_numel(s) * (int64_t)dtype_size(v->type.dtype)));
		free(up);
	}
#undef M
	fprintf(o, "\n/* The entry point: args[0 .. %d] as above.  Returns 0, or 1 after a run-time\n"
		   " * error (an index out of range). */\nint %s(void **args);\n\n",
		p->nargs - 1, entry);
	fprintf(o, "/* %s with typed arguments. */\nstatic inline int %s_run(", entry, pre);
	for (int i = 0; i < g->ninputs + g->noutputs; i++) {
		bool in = i < g->ninputs;
		const Value *v = in ? g->inputs[i] : g->outputs[i - g->ninputs];
		fprintf(o, "%s%s%s *%s", i ? ", " : "", in ? "const " : "", c_type(v->type.dtype), id[i]);
	}
	fprintf(o, "%svoid *workspace)\n{\n\tvoid *args[%d];\n", g->ninputs + g->noutputs ? ", " : "", p->nargs);
	for (int i = 0; i < g->ninputs + g->noutputs; i++) {
		if (i < g->ninputs)
			fprintf(o, "\targs[%d] = (void *)(uintptr_t)%s;\n", i, id[i]);
		else
			fprintf(o, "\targs[%d] = %s;\n", i, id[i]);
	}
	fprintf(o, "\targs[%d] = workspace;\n\treturn %s(args);\n}\n", p->nargs - 1, entry);
	fputs("\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n", o);
	for (int i = 0; id[i]; i++)
		free(id[i]);
	free(id);
	free(pre);
}
