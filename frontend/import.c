/* `gdcc import`: see import.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import.h"
#include "npy.h"
#include "ops.h"
#include "util.h"

enum { INLINE_MAX = 16 }; /* elements: at most this many are written in the model */

static bool is_ident(const char *s)
{
	static const char *const keywords[] = {"graph", "input", "output", "const", NULL};
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (const char *p = s + 1; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '_' || *p == '.'))
			return false;
	for (int i = 0; keywords[i]; i++)
		if (strcmp(s, keywords[i]) == 0)
			return false;
	return true;
}

/* "/layer1/Conv_output_0" -> "layer1.Conv_output_0"; "12" -> "v12". */
static char *to_ident(const char *s)
{
	size_t n = strlen(s);
	char *r = xmalloc(n + 3), *q = r;
	while (*s == '/' || *s == ':')
		s++;
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		*q++ = 'v';
	for (; *s; s++) {
		char c = *s;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
		*q++ = ok ? c : c == '/' ? '.' : '_';
	}
	*q = 0;
	if (!is_ident(r)) { /* a keyword */
		char *k = xasprintf("%s_", r);
		free(r);
		r = k;
	}
	return r;
}

static void log_push(char ***v, int *n, char *s)
{
	*v = xrealloc(*v, (size_t)(*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

static bool rename_values(Graph *g, ImportLog *log)
{
	for (int i = 0; i < g->nvalues; i++) {
		Value *v = g->values[i];
		if (is_ident(v->name))
			continue;
		char *base = to_ident(v->name), *name = xstrdup(base);
		for (int k = 2; graph_find_value(g, name); k++) {
			free(name);
			name = xasprintf("%s_%d", base, k);
		}
		free(base);
		log_push(&log->from, &log->nrenamed, v->name);
		log->to = xrealloc(log->to, (size_t)log->nrenamed * sizeof *log->to);
		log->to[log->nrenamed - 1] = xstrdup(name);
		v->name = name;
	}
	if (!is_ident(g->name)) {
		char *n = to_ident(g->name);
		free(g->name);
		g->name = n;
	}
	return true;
}

/* Exactly representable as written: floats print round-trip, integers
 * go through a double. */
static bool inlinable(const Tensor *t)
{
	int64_t n = tensor_numel(t);
	if (n > INLINE_MAX)
		return false;
	if (dtype_is_float(t->type.dtype))
		return true;
	for (int64_t i = 0; i < n; i++)
		if (llabs(tensor_get_i(t, i)) > (1LL << 53))
			return false;
	return true;
}

bool import_externalize(Graph *g, const char *ir_path, ImportLog *log, char **err)
{
	rename_values(g, log);
	char *dir = NULL, *stem = NULL;
	if (ir_path) {
		const char *slash = strrchr(ir_path, '/');
		dir = slash ? xstrndup(ir_path, (size_t)(slash - ir_path + 1)) : xstrdup("");
		const char *base = slash ? slash + 1 : ir_path;
		const char *dot = strrchr(base, '.');
		stem = dot && dot != base ? xstrndup(base, (size_t)(dot - base)) : xstrdup(base);
	}
	bool ok = true;
	for (int i = 0; ok && i < g->nnodes; i++) {
		Node *n = g->nodes[i];
		if (n->op != OP_CONSTANT || n->init.kind != INIT_TENSOR)
			continue;
		Tensor *t = n->init.data;
		if (inlinable(t)) {
			int64_t cnt = tensor_numel(t);
			n->init.values = xmalloc((size_t)(cnt ? cnt : 1) * sizeof(double));
			for (int64_t k = 0; k < cnt; k++)
				n->init.values[k] = dtype_is_float(t->type.dtype) ? tensor_get_f(t, k) : (double)tensor_get_i(t, k);
			n->init.nvalues = cnt;
			n->init.kind = INIT_INLINE;
		} else if (!ir_path) {
			*err = xasprintf("constant '%s' has %lld elements: give -o FILE.ir, and the weights are written beside it",
					 n->out[0]->name, (long long)tensor_numel(t));
			ok = false;
			break;
		} else {
			char *file = xasprintf("%s.%s.npy", stem, n->out[0]->name);
			char *full = xasprintf("%s%s", dir, file);
			if (!npy_write(full, t, err)) {
				free(file);
				free(full);
				ok = false;
				break;
			}
			log_push(&log->files, &log->nfiles, full);
			n->init.path = file;
			n->init.kind = INIT_NPY;
		}
		tensor_free(t);
		n->init.data = NULL;
	}
	free(dir);
	free(stem);
	return ok;
}

void import_print_header(FILE *out, const char *source, const ImportLog *log)
{
	fprintf(out, "# imported by gdcc from %s\n", source);
	if (log->nrenamed)
		fputs("# names that are not model.ir identifiers, renamed:\n", out);
	for (int i = 0; i < log->nrenamed; i++)
		fprintf(out, "#   %s -> %s\n", log->from[i], log->to[i]);
}

void import_print_io_names(FILE *out, const Graph *g)
{
	bool any = false;
	for (int pass = 0; pass < 2; pass++) {
		Value *const *vs = pass ? g->outputs : g->inputs;
		int n = pass ? g->noutputs : g->ninputs;
		for (int i = 0; i < n; i++) {
			if (!vs[i]->src_name)
				continue;
			if (!any)
				fputs("# inputs and outputs renamed from the ONNX graph's names:\n", out);
			any = true;
			fprintf(out, "#   %s %s -> %s\n", pass ? "output" : "input", vs[i]->src_name, vs[i]->name);
		}
	}
}

void import_log_remove_files(ImportLog *log)
{
	for (int i = 0; i < log->nfiles; i++)
		unlink(log->files[i]);
}

void import_log_free(ImportLog *log)
{
	for (int i = 0; i < log->nrenamed; i++) {
		free(log->from[i]);
		free(log->to[i]);
	}
	for (int i = 0; i < log->nfiles; i++)
		free(log->files[i]);
	free(log->from);
	free(log->to);
	free(log->files);
	memset(log, 0, sizeof *log);
}
