/* model.ir printer. */
#include <math.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "ops.h"
#include "passes.h"
#include "printer.h"
#include "util.h"

void format_double(double v, char *buf, size_t n)
{
	if (isnan(v)) {
		snprintf(buf, n, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, n, v < 0 ? "-inf" : "inf");
		return;
	}
	if (v == floor(v) && fabs(v) < 1e16) {
		snprintf(buf, n, "%.1f", v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".einn")) {
		size_t k = strlen(buf);
		snprintf(buf + k, n - k, ".0");
	}
}

/* The shortest decimal text that reads back (as the parser reads a value
 * for an f32 constant: a double, then rounded to float) as the same float;
 * the forms of format_double. */
static void format_float(float v, char *buf, size_t n)
{
	double x = v;
	if (isnan(x) || isinf(x) || (x == floor(x) && fabs(x) < 1e16)) {
		format_double(x, buf, n);
		return;
	}
	bool found = false;
	for (int prec = 1; prec <= 9 && !found; prec++) {
		snprintf(buf, n, "%.*g", prec, x);
		found = (float)strtod(buf, NULL) == v;
	}
	if (!found) { /* (not expected: 9 digits identify a float) the exact double */
		format_double(x, buf, n);
		return;
	}
	if (!strpbrk(buf, ".e")) {
		size_t k = strlen(buf);
		snprintf(buf + k, n - k, ".0");
	}
}

static void print_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		switch (*s) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		default: fputc(*s, out);
		}
	}
	fputc('"', out);
}

static void print_type(FILE *out, const TensorType *t)
{
	char buf[160];
	fputs(type_str(t, buf, sizeof buf), out);
}

static void print_attr(FILE *out, const Attr *a)
{
	char num[40];
	fprintf(out, "%s=", a->name);
	switch (a->kind) {
	case ATTR_INT: fprintf(out, "%lld", (long long)a->i); break;
	case ATTR_FLOAT: format_double(a->f, num, sizeof num); fputs(num, out); break;
	case ATTR_STRING: print_string(out, a->s); break;
	case ATTR_DTYPE: fputs(dtype_name(a->dt), out); break;
	case ATTR_INTS:
		fputc('[', out);
		for (int i = 0; i < a->n; i++)
			fprintf(out, "%s%lld", i ? ", " : "", (long long)a->ints[i]);
		fputc(']', out);
		break;
	case ATTR_FLOATS:
		fputc('[', out);
		for (int i = 0; i < a->n; i++) {
			format_double(a->floats[i], num, sizeof num);
			fprintf(out, "%s%s", i ? ", " : "", num);
		}
		fputc(']', out);
		break;
	}
}

/* Between the values of a list: eight to a line. */
static void put_separator(FILE *out, int64_t i)
{
	if (i && i % 8 == 0)
		fputs(",\n        ", out);
	else if (i)
		fputs(", ", out);
}

/* Data held in memory (INIT_TENSOR: made at compile time by folding and
 * canonicalization, or an imported model's weights; `gdcc import` turns
 * these into inline values or .npy files before it prints).  A small tensor
 * is printed as the inline values that read back to the same data; a large
 * one as `zeros` with a comment giving its size and hash, so that a dump
 * never passes off data it does not show as zeros without saying so. */
static void print_tensor_init(FILE *out, const Tensor *t)
{
	if (!t) {
		fputs("zeros  # compile-time data: missing", out);
		return;
	}
	int64_t n = tensor_numel(t);
	DType dt = t->type.dtype;
	if (n <= PRINT_INLINE_MAX && dtype_has_kernels(dt)) {
		char a[40];
		fputc('[', out);
		for (int64_t i = 0; i < n; i++) {
			put_separator(out, i);
			if (dt == DT_F32)
				format_float(f32(t)[i], a, sizeof a);
			else if (dtype_is_float(dt))
				format_double(tensor_get_f(t, i), a, sizeof a);
			else
				snprintf(a, sizeof a, "%lld", (long long)tensor_get_i(t, i));
			fputs(a, out);
		}
		fputc(']', out);
		return;
	}
	size_t bytes = tensor_bytes(t);
	fprintf(out, "zeros  # compile-time data: %zu bytes, xxh3 %016llx (not printed)", bytes,
		(unsigned long long)XXH3_64bits(t->data, bytes));
}

static void print_init(FILE *out, const ConstInit *c, DType dt)
{
	char a[40], b[40];
	switch (c->kind) {
	case INIT_INLINE:
		fputc('[', out);
		for (int64_t i = 0; i < c->nvalues; i++) {
			put_separator(out, i);
			if (dtype_is_float(dt))
				format_double(c->values[i], a, sizeof a);
			else if (c->ivalues)
				snprintf(a, sizeof a, "%lld", (long long)c->ivalues[i]);
			else if (fabs(c->values[i]) < 9.2233720368547758e18)
				snprintf(a, sizeof a, "%lld", (long long)c->values[i]);
			else /* not a valid integer: as written, for the verifier to report */
				format_double(c->values[i], a, sizeof a);
			fputs(a, out);
		}
		fputc(']', out);
		break;
	case INIT_NPY:
		fputs("npy(", out);
		print_string(out, c->path);
		fputc(')', out);
		break;
	case INIT_ZEROS: fputs("zeros", out); break;
	case INIT_FILL:
		format_double(c->a, a, sizeof a);
		fprintf(out, "fill(%s)", a);
		break;
	case INIT_RANDOM:
	case INIT_NORMAL:
		format_double(c->a, a, sizeof a);
		format_double(c->b, b, sizeof b);
		fprintf(out, c->kind == INIT_RANDOM ? "random(seed=%llu, low=%s, high=%s)" : "normal(seed=%llu, mean=%s, std=%s)",
			(unsigned long long)c->seed, a, b);
		break;
	case INIT_TENSOR: print_tensor_init(out, c->data); break;
	case INIT_NONE: fputs("zeros", out); break;
	}
}

/* The kernels of a grouped graph (pass_fuse): each group's nodes, in order,
 * as positions in g->nodes. */
typedef struct {
	int k;
	int *start; /* group j: at[start[j] .. start[j + 1]) */
	int *at;
} Groups;

static Groups groups_of(const Graph *g)
{
	Groups gr = {.k = graph_kernels(g)};
	if (gr.k == 0)
		return gr;
	gr.start = xcalloc((size_t)gr.k + 1, sizeof *gr.start);
	gr.at = xmalloc((size_t)(g->nnodes ? g->nnodes : 1) * sizeof *gr.at);
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->group >= 0)
			gr.start[g->nodes[i]->group + 1]++;
	for (int j = 0; j < gr.k; j++)
		gr.start[j + 1] += gr.start[j];
	int *fill = xmalloc((size_t)gr.k * sizeof *fill);
	memcpy(fill, gr.start, (size_t)gr.k * sizeof *fill);
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->group >= 0)
			gr.at[fill[g->nodes[i]->group]++] = i;
	free(fill);
	return gr;
}

enum { GROUP_NAMES_MAX = 12 }; /* ops named in a kernel comment; the count says the rest */

/* `  # kernel 3: gemm + add + relu (2 fused)` before the first node of a
 * group (a kernel's number is printed once, where its first node is). */
static void print_group_comment(FILE *out, const Graph *g, const Groups *gr, const Node *n, bool *seen)
{
	if (n->op == OP_CONSTANT)
		return;
	int j = n->group;
	if (j < 0 || j >= gr->k) {
		fputs("  # not in a kernel\n", out);
		return;
	}
	if (seen[j])
		return;
	seen[j] = true;
	int m = gr->start[j + 1] - gr->start[j];
	fprintf(out, "  # kernel %d: ", j);
	for (int i = 0; i < m && i < GROUP_NAMES_MAX; i++)
		fprintf(out, "%s%s", i ? " + " : "", op_info[g->nodes[gr->at[gr->start[j] + i]]->op].name);
	if (m > GROUP_NAMES_MAX)
		fputs(" + ...", out);
	if (m > 1)
		fprintf(out, " (%d fused)", m - 1);
	fputc('\n', out);
}

static void print_graph_with(FILE *out, const Graph *g, bool grouped)
{
	Groups gr = {0};
	bool *seen = NULL;
	if (grouped) {
		gr = groups_of(g);
		seen = xcalloc((size_t)gr.k + 1, sizeof *seen);
	}
	fprintf(out, "graph %s {\n", g->name);
	if (g->mesh.naxes) {
		fputs("  mesh [", out);
		for (int a = 0; a < g->mesh.naxes; a++)
			fprintf(out, "%s%s=%" PRId64, a ? ", " : "", g->mesh.name[a], g->mesh.size[a]);
		fputs("]\n", out);
	}
	for (int i = 0; i < g->ninputs; i++) {
		fprintf(out, "  input %s : ", g->inputs[i]->name);
		print_type(out, &g->inputs[i]->type);
		fputc('\n', out);
	}
	if (grouped && gr.k == 0)
		fputs("  # not grouped: every node is its own kernel\n", out);
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		if (grouped && gr.k > 0)
			print_group_comment(out, g, &gr, n, seen);
		if (n->op == OP_CONSTANT) {
			const Value *v = n->out[0];
			fprintf(out, "  const %s : ", v->name);
			print_type(out, &v->annot);
			fputs(" = ", out);
			print_init(out, &n->init, v->annot.dtype);
			fputc('\n', out);
			continue;
		}
		fputs("  ", out);
		for (int k = 0; k < n->nout; k++) {
			const Value *v = n->out[k];
			fprintf(out, "%s%s", k ? ", " : "", v->name);
			if (v->typed || v->annotated) {
				fputs(" : ", out);
				print_type(out, v->typed ? &v->type : &v->annot);
			}
		}
		fprintf(out, " = %s(", op_info[n->op].name);
		for (int k = 0; k < n->nin; k++)
			fprintf(out, "%s%s", k ? ", " : "", n->in[k]->name);
		for (int k = 0; k < n->nattrs; k++) {
			fputs(k || n->nin ? ", " : "", out);
			print_attr(out, &n->attrs[k]);
		}
		fputs(")\n", out);
	}
	for (int i = 0; i < g->nannots; i++) {
		const ShardAnnot *a = &g->annots[i];
		fprintf(out, "  shard %s [", a->value);
		for (int k = 0; k < a->naxis; k++)
			fprintf(out, "%s%s", k ? ", " : "", a->axis[k]);
		fputc(']', out);
		for (int k = 0; k < a->npartial; k++)
			fprintf(out, "%s%s", k ? ", " : " partial [", a->partial[k]);
		fputs(a->npartial ? "]\n" : "\n", out);
	}
	for (int i = 0; i < g->noutputs; i++)
		fprintf(out, "  output %s\n", g->outputs[i]->name);
	fputs("}\n", out);
	free(gr.start);
	free(gr.at);
	free(seen);
}

void print_graph(FILE *out, const Graph *g) { print_graph_with(out, g, false); }

void print_groups(FILE *out, const Graph *g) { print_graph_with(out, g, true); }
