/* model.ir printer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "printer.h"

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

static void print_init(FILE *out, const ConstInit *c, DType dt)
{
	char a[40], b[40];
	switch (c->kind) {
	case INIT_INLINE:
		fputc('[', out);
		for (int64_t i = 0; i < c->nvalues; i++) {
			if (i && i % 8 == 0)
				fputs(",\n        ", out);
			else if (i)
				fputs(", ", out);
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
	case INIT_TENSOR: /* (the importer writes such data to .npy files before printing) */
	case INIT_NONE: fputs("zeros", out); break;
	}
}

void print_graph(FILE *out, const Graph *g)
{
	fprintf(out, "graph %s {\n", g->name);
	for (int i = 0; i < g->ninputs; i++) {
		fprintf(out, "  input %s : ", g->inputs[i]->name);
		print_type(out, &g->inputs[i]->type);
		fputc('\n', out);
	}
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
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
	for (int i = 0; i < g->noutputs; i++)
		fprintf(out, "  output %s\n", g->outputs[i]->name);
	fputs("}\n", out);
}
