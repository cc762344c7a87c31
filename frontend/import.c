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

static void log_push(char ***v, int *n, char *s)
{
	*v = xrealloc(*v, (size_t)(*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
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
	for (int64_t i = 0; i < n; i++) {
		int64_t v = tensor_get_i(t, i);
		if (v > (1LL << 53) || v < -(1LL << 53))
			return false;
	}
	return true;
}

bool import_externalize(Graph *g, const char *ir_path, ImportLog *log, char **err)
{
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
			if (!dtype_is_float(t->type.dtype)) { /* exact, whatever the magnitude */
				n->init.ivalues = xmalloc((size_t)(cnt ? cnt : 1) * sizeof *n->init.ivalues);
				for (int64_t k = 0; k < cnt; k++)
					n->init.ivalues[k] = tensor_get_i(t, k);
			}
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

/* s in a comment line: printable ASCII as is, other bytes (a newline would
 * end the comment) as \xNN. */
static void put_escaped(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			fputc(*p, out);
		else
			fprintf(out, "\\x%02x", *p);
}

void import_print_header(FILE *out, const char *source, const Graph *g)
{
	fputs("# imported by gdcc from ", out);
	put_escaped(out, source);
	fputc('\n', out);
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
			fprintf(out, "#   %s ", pass ? "output" : "input");
			put_escaped(out, vs[i]->src_name);
			fprintf(out, " -> %s\n", vs[i]->name);
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
	for (int i = 0; i < log->nfiles; i++)
		free(log->files[i]);
	free(log->files);
	memset(log, 0, sizeof *log);
}
