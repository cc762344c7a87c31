/* gdcc run --profile: the table and the JSON report (see profile.h and
 * docs/profile.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "driver.h"
#include "ops.h"
#include "profile.h"
#include "util.h"

char *profile_unsupported(const Target *t)
{
	const ParamInfo *pr = target_param(t, "profile");
	if (pr && pr->str && *pr->str)
		return NULL;
	const ParamInfo *run = target_param(t, "run");
	return xasprintf("--profile is not supported for %s: its .md has no `param profile` (how its kernels are timed); "
			 "the profile links each kernel as a function into the run harness and times it on the host, "
			 "and %s programs run as `%s`",
			 t->name, t->name, run && run->str ? run->str : "(no param run)");
}

/* ---- what a kernel does, from the graph ---------------------------------------- */
static double numel_of(const Value *v) { return (double)shape_numel(&v->type.shape); }
static double bytes_of(const Value *v) { return numel_of(v) * (double)dtype_size(v->type.dtype); }

/* Floating-point operations of a node (docs/profile.md): 2 per
 * multiply-accumulate of a contraction (plus one per output for a bias or
 * C), one per input element of a pool or reduction, a few per element of
 * the normalizations, none for data movement, else one per output element
 * (a transcendental counts as one). */
static double node_flops(const Node *n)
{
	double out = numel_of(n->out[0]), in = n->nin ? numel_of(n->in[0]) : 0;
	switch (n->op) {
	case OP_MATMUL: {
		const Shape *a = &n->in[0]->type.shape;
		return 2 * out * (double)(a->rank ? a->dim[a->rank - 1] : 1);
	}
	case OP_GEMM: {
		const Shape *a = &n->in[0]->type.shape;
		double k = (double)(attr_i(n, "trans_a") ? a->dim[0] : a->dim[a->rank - 1]);
		return 2 * out * k + (n->nin > 2 ? out : 0);
	}
	case OP_CONV: {
		const Shape *w = &n->in[1]->type.shape;
		double k = 1;
		for (int i = 1; i < w->rank; i++)
			k *= (double)w->dim[i];
		return 2 * out * k + (n->nin > 2 ? out : 0);
	}
	case OP_MAXPOOL: case OP_AVGPOOL: case OP_GLOBAL_AVGPOOL: case OP_GLOBAL_MAXPOOL: case OP_REDUCE_MEAN:
	case OP_REDUCE_SUM: case OP_REDUCE_MAX: case OP_REDUCE_MIN: case OP_REDUCE_PROD: case OP_REDUCE_L1: case OP_REDUCE_L2:
	case OP_REDUCE_LOG_SUM: case OP_REDUCE_LOG_SUM_EXP: case OP_REDUCE_SUM_SQUARE:
		return in;
	case OP_SOFTMAX: case OP_LOGSOFTMAX: return 5 * out;
	case OP_LAYERNORM: return 8 * out;
	case OP_BATCHNORM: return 2 * out;
	case OP_IDENTITY: case OP_DROPOUT: case OP_RESHAPE: case OP_TRANSPOSE: case OP_FLATTEN: case OP_CONCAT:
	case OP_SPLIT: case OP_SLICE: case OP_SQUEEZE: case OP_UNSQUEEZE: case OP_GATHER: case OP_EXPAND: case OP_PAD:
	case OP_SHAPE: case OP_CONSTANT: case OP_CONSTANT_OF_SHAPE:
		return 0;
	default: return out;
	}
}

typedef struct {
	double med, min, max; /* seconds */
} Times;

typedef struct {
	const KernelInfo *ki;
	Times t;
	double flops, bytes, est; /* est < 0: the cost model gives none for some node */
} Row;

typedef struct {
	const Session *s;
	const Program *p;
	const Node **byid;
	Row *rows;
	int runs;
	Times rest, total;
	double sum;     /* the kernels' medians: the total the shares are of */
	double est;     /* the cost model's cycles of every kernel with one */
	double clock_ghz;
	const char *measured_on, *vlen;
} Profile;

static bool in_kernel(const Profile *pf, const KernelInfo *ki, int id)
{
	(void)pf;
	for (int i = 0; i < ki->nnodes; i++)
		if (ki->nodes[i] == id)
			return true;
	return false;
}

/* Bytes a kernel moves at least: every tensor it reads from outside the
 * kernel once (operands, constants included), every result the rest of
 * the graph reads (or an output) written once. */
static double kernel_bytes(const Profile *pf, const KernelInfo *ki)
{
	const Graph *g = pf->p->g;
	bool *seen = xcalloc((size_t)g->nvalues + 1, sizeof *seen);
	double b = 0;
	for (int i = 0; i < ki->nnodes; i++) {
		const Node *n = pf->byid[ki->nodes[i]];
		for (int k = 0; k < n->nin; k++) {
			const Value *v = n->in[k];
			if (seen[v->id] || (v->def && in_kernel(pf, ki, v->def->id)))
				continue;
			seen[v->id] = true;
			b += bytes_of(v);
		}
		for (int k = 0; k < n->nout; k++) {
			const Value *v = n->out[k];
			bool outside = v->is_output;
			for (int u = 0; u < v->nusers && !outside; u++)
				outside = !in_kernel(pf, ki, v->users[u]->id);
			if (outside)
				b += bytes_of(v);
		}
	}
	free(seen);
	return b;
}

/* ---- the times file ------------------------------------------------------------ */
static bool read_times(Profile *pf, const char *path, Diag *d)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		diag_error(d, loc_at(path, 0, 0), "the profile harness wrote no times: %s", strerror(errno));
		return false;
	}
	int version = 0, nk = -1, got = 0;
	bool ok = fscanf(f, "gdcc-profile-times %d runs %d kernels %d", &version, &pf->runs, &nk) == 3 && version == 1 &&
		  nk == pf->p->nkernels;
	for (int k = 0; ok && k <= nk + 1; k++) {
		char what[16];
		int idx = -1;
		long long med, mn, mx;
		if (k < nk)
			ok = fscanf(f, " %15s %d %lld %lld %lld", what, &idx, &med, &mn, &mx) == 5 && strcmp(what, "kernel") == 0 &&
			     idx == k;
		else
			ok = fscanf(f, " %15s %lld %lld %lld", what, &med, &mn, &mx) == 4 &&
			     strcmp(what, k == nk ? "rest" : "total") == 0;
		if (!ok)
			break;
		Times t = {1e-9 * (double)med, 1e-9 * (double)mn, 1e-9 * (double)mx};
		if (k < nk)
			pf->rows[k].t = t;
		else if (k == nk)
			pf->rest = t;
		else
			pf->total = t;
		got++;
	}
	fclose(f);
	if (!ok)
		diag_error(d, loc_at(path, 0, 0), "internal error: the profile harness's times are not what gdcc expects "
						 "(version 1, %d kernels; read %d records)", pf->p->nkernels, got);
	return ok;
}

/* ---- output --------------------------------------------------------------------- */
static void json_num(FILE *o, double v, const char *fmt)
{
	if (v < 0 || !isfinite(v))
		fputs("null", o);
	else
		fprintf(o, fmt, v);
}

static void write_json(FILE *o, const void *ctx)
{
	const Profile *pf = ctx;
	const Program *p = pf->p;
	const Graph *g = p->g;
	fprintf(o, "{\n  \"schema\": \"gdcc.profile\",\n  \"schema_version\": 1,\n  \"generator\": \"gdcc %s\",\n",
		PACKAGE_VERSION);
	fputs("  \"model\": ", o);
	json_string(o, g->name);
	fprintf(o, ",\n  \"target\": \"%s\",\n  \"md_hash\": \"%016llx\",\n  \"content_hash\": \"%016llx\",\n", p->t->name,
		(unsigned long long)p->t->md_hash, (unsigned long long)content_hash(g, p->t, pf->s->o));
	fputs("  \"vlen\": ", o);
	if (*pf->vlen)
		fputs(pf->vlen, o);
	else
		fputs("null", o);
	fputs(",\n  \"measured_on\": ", o);
	json_string(o, pf->measured_on);
	fprintf(o, ",\n  \"timer\": \"CLOCK_MONOTONIC\",\n  \"runs\": %d,\n  \"statistic\": \"median\",\n", pf->runs);
	fputs("  \"clock_ghz\": ", o);
	json_num(o, pf->clock_ghz > 0 ? pf->clock_ghz : -1, "%.9g");
	fprintf(o, ",\n  \"total_seconds\": %.9f,\n  \"run_seconds\": %.9f,\n  \"rest_seconds\": %.9f,\n", pf->sum,
		pf->total.med, pf->rest.med);
	fprintf(o, "  \"estimated_cycles\": %.0f,\n  \"measured_cycles\": ", pf->est);
	json_num(o, pf->clock_ghz > 0 ? pf->sum * pf->clock_ghz * 1e9 : -1, "%.0f");
	fputs(",\n  \"kernels\": [", o);
	for (int k = 0; k < p->nkernels; k++) {
		const Row *r = &pf->rows[k];
		const KernelInfo *ki = r->ki;
		fprintf(o, "%s\n    {\"index\": %d, \"symbol\": ", k ? "," : "", k);
		json_string(o, ki->sym ? ki->sym : "");
		fputs(", \"output\": ", o);
		json_string(o, pf->byid[ki->nodes[ki->nnodes - 1]]->out[0]->name);
		fputs(", \"nodes\": [", o);
		for (int i = 0; i < ki->nnodes; i++) {
			const Node *n = pf->byid[ki->nodes[i]];
			fputs(i ? ", {\"name\": " : "{\"name\": ", o);
			json_string(o, n->out[0]->name);
			fprintf(o, ", \"op\": \"%s\"}", op_info[n->op].name);
		}
		fprintf(o, "], \"seconds\": %.9f, \"min_seconds\": %.9f, \"max_seconds\": %.9f, \"share\": %.6f, ", r->t.med,
			r->t.min, r->t.max, pf->sum > 0 ? r->t.med / pf->sum : 0);
		fprintf(o, "\"flops\": %.0f, \"gflops_per_s\": ", r->flops);
		json_num(o, r->t.med > 0 ? r->flops / r->t.med * 1e-9 : -1, "%.6g");
		fprintf(o, ", \"bytes\": %.0f, \"gbytes_per_s\": ", r->bytes);
		json_num(o, r->t.med > 0 ? r->bytes / r->t.med * 1e-9 : -1, "%.6g");
		fputs(", \"estimated_cycles\": ", o);
		json_num(o, r->est, "%.0f");
		fputs(", \"measured_cycles\": ", o);
		json_num(o, pf->clock_ghz > 0 ? r->t.med * pf->clock_ghz * 1e9 : -1, "%.0f");
		fputc('}', o);
	}
	fputs("\n  ],\n  \"no_kernel\": [", o);
	int nn = 0;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		if (n->op == OP_CONSTANT || n->id > g->nnodes || !p->no_kernel[n->id])
			continue;
		fputs(nn++ ? ",\n    {\"name\": " : "\n    {\"name\": ", o);
		json_string(o, n->out[0]->name);
		fprintf(o, ", \"op\": \"%s\", \"reason\": ", op_info[n->op].name);
		json_string(o, p->no_kernel[n->id]);
		fputc('}', o);
	}
	fputs(nn ? "\n  ]\n}\n" : "]\n}\n", o);
}

static void fmt_time(char *buf, size_t n, double s)
{
	if (s >= 1)
		snprintf(buf, n, "%.3f s", s);
	else if (s >= 1e-3)
		snprintf(buf, n, "%.3f ms", s * 1e3);
	else
		snprintf(buf, n, "%.2f us", s * 1e6);
}

static void print_table(FILE *o, const Profile *pf)
{
	const Program *p = pf->p;
	fprintf(o, "profile of %s on %s%s%s: %d kernels, median of %d runs; times: %s\n", p->g->name, p->t->name,
		*pf->vlen ? " at VLEN " : "", pf->vlen, p->nkernels, pf->runs, pf->measured_on);
	fprintf(o, "%3s  %-34s %11s %6s %9s %10s %12s %12s\n", "#", "kernel: nodes", "time", "share", "GFLOP/s", "MB moved",
		"est. cycles", "meas. cycles");
	for (int k = 0; k < p->nkernels; k++) {
		const Row *r = &pf->rows[k];
		char names[256], t[32], est[32], meas[32], gf[32];
		size_t len = 0;
		names[0] = 0;
		for (int i = 0; i < r->ki->nnodes && len < sizeof names; i++) {
			const Node *n = pf->byid[r->ki->nodes[i]];
			len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? "," : "", op_info[n->op].name);
		}
		char label[300];
		snprintf(label, sizeof label, "%s: %s", pf->byid[r->ki->nodes[r->ki->nnodes - 1]]->out[0]->name, names);
		if (strlen(label) > 34)
			memcpy(label + 31, "...", 4);
		fmt_time(t, sizeof t, r->t.med);
		snprintf(est, sizeof est, r->est >= 0 ? "%.0f" : "-", r->est);
		snprintf(meas, sizeof meas, pf->clock_ghz > 0 ? "%.0f" : "-", r->t.med * pf->clock_ghz * 1e9);
		snprintf(gf, sizeof gf, r->t.med > 0 && r->flops > 0 ? "%.2f" : "-", r->t.med > 0 ? r->flops / r->t.med * 1e-9 : 0);
		fprintf(o, "%3d  %-34s %11s %5.1f%% %9s %10.3f %12s %12s\n", k, label, t,
			pf->sum > 0 ? 100 * r->t.med / pf->sum : 0, gf, r->bytes / 1e6, est, meas);
	}
	double flops = 0, bytes = 0;
	for (int k = 0; k < p->nkernels; k++)
		flops += pf->rows[k].flops, bytes += pf->rows[k].bytes;
	char t[32], meas[32], gf[32];
	fmt_time(t, sizeof t, pf->sum);
	snprintf(meas, sizeof meas, pf->clock_ghz > 0 ? "%.0f" : "-", pf->sum * pf->clock_ghz * 1e9);
	snprintf(gf, sizeof gf, pf->sum > 0 && flops > 0 ? "%.2f" : "-", pf->sum > 0 ? flops / pf->sum * 1e-9 : 0);
	fprintf(o, "%3s  %-34s %11s %5.1f%% %9s %10.3f %12.0f %12s\n", "", "total (kernels)", t, 100.0, gf, bytes / 1e6,
		pf->est, meas);
	char run[32];
	fmt_time(run, sizeof run, pf->total.med);
	fprintf(o, "(a whole run: %s median; measured cycles = time x clock_ghz %.3g of the .md)\n", run, pf->clock_ghz);
}

int profile_report(Session *s, const Program *p, const char *times_path, const char *vlen, Diag *d)
{
	const Graph *g = p->g;
	Profile pf = {.s = s, .p = p, .vlen = vlen ? vlen : ""};
	const ParamInfo *pr = target_param(p->t, "profile"), *clk = target_param(p->t, "clock_ghz");
	pf.measured_on = pr && pr->str ? pr->str : "";
	pf.clock_ghz = clk && !clk->str && clk->n ? clk->values[0] : -1;
	pf.byid = xcalloc((size_t)g->nnodes + 1, sizeof *pf.byid);
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->id >= 0 && g->nodes[i]->id <= g->nnodes)
			pf.byid[g->nodes[i]->id] = g->nodes[i];
	pf.rows = xcalloc((size_t)p->nkernels + 1, sizeof *pf.rows);
	int rc = 0;
	if (!read_times(&pf, times_path, d)) {
		rc = EXIT_RUN;
		goto out;
	}
	for (int k = 0; k < p->nkernels; k++) {
		Row *r = &pf.rows[k];
		r->ki = &p->kinfo[k];
		for (int i = 0; i < r->ki->nnodes; i++) {
			const Node *n = pf.byid[r->ki->nodes[i]];
			r->flops += node_flops(n);
			double c = program_node_cycles(p->t, n);
			r->est = i == 0 ? c : r->est < 0 || c < 0 ? -1 : r->est + c;
		}
		r->bytes = kernel_bytes(&pf, r->ki);
		pf.sum += r->t.med;
		if (r->est >= 0)
			pf.est += r->est;
	}
	bool json_out = s->o->profile_path && strcmp(s->o->profile_path, "-") == 0;
	print_table(json_out ? stderr : stdout, &pf);
	fflush(json_out ? stderr : stdout);
	if (json_out) {
		rc = write_output("-", write_json, &pf);
	} else if (s->o->profile_tmp) {
		/* staged by the driver before the run (main.c) */
		FILE *f = fopen(s->o->profile_tmp, "w");
		if (f)
			write_json(f, &pf);
		int e = !f ? errno : ferror(f) ? (errno ? errno : EIO) : 0;
		if (f && fclose(f) != 0 && !e)
			e = errno;
		if (e) {
			errorf("cannot write '%s': %s", s->o->profile_path, strerror(e));
			rc = EXIT_RUN;
		}
	}
out:
	free(pf.rows);
	free(pf.byid);
	return rc;
}
