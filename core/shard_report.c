/* The sharding cost model and --emit=sharding's report (shard.h): apart
 * from core/shard.c, which the model.ir parser needs, so that what reads
 * models does not link the code generator's cost tables. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "ops.h"
#include "shard.h"
#include "util.h"

/* The steps of latency a collective over n devices takes (ring). */
static int latency_steps(OpKind op, int64_t n)
{
	switch (op) {
	case OP_ALL_REDUCE: return (int)(2 * (n - 1));
	case OP_ALL_GATHER:
	case OP_REDUCE_SCATTER:
	case OP_ALL_TO_ALL: return (int)(n - 1);
	case OP_SEND_RECV: return 1;
	default: return 0;
	}
}

bool shard_estimate(const Graph *g, const Target *t, const LinkModel *l, ShardEstimate *e)
{
	memset(e, 0, sizeof *e);
	const ParamInfo *clk = t ? target_param(t, "clock_ghz") : NULL;
	if (!clk || clk->n < 1 || clk->values[0] <= 0)
		return false;
	double hz = clk->values[0] * 1e9, bps = l->gbps * 1e9 / 8, lat = l->latency_us * 1e-6;
	const Mesh *m = &g->mesh;
	int stages = g->pipelined ? (int)m->size[0] : 1;
	double *stage_s = xcalloc((size_t)stages + 1, sizeof *stage_s);
	double slowest_transfer = 0; /* a micro-batch's, of a pipeline */
	for (int k = 0; k < g->nnodes; k++) {
		const Node *n = g->nodes[k];
		if (n->nin == 0)
			continue;
		if (op_info[n->op].shard == SHARD_COLLECTIVE) {
			const Value *v = n->in[0];
			int a = shard_mesh_axis(m, attr_s(n, "mesh_axis"));
			uint64_t bytes = n->op == OP_SEND_RECV ? (uint64_t)shape_numel(&v->type.shape) * dtype_size(v->type.dtype)
							       : shard_collective_bytes(g, n);
			double ts = latency_steps(n->op, a >= 0 ? m->size[a] : 1) * lat + (double)bytes / bps;
			e->comm_s += ts;
			if (n->op == OP_SEND_RECV && g->micro_batches > 1) {
				double tm = lat + (double)bytes / (double)g->micro_batches / bps;
				slowest_transfer = tm > slowest_transfer ? tm : slowest_transfer;
			}
			continue;
		}
		double c = program_node_cycles(t, n);
		if (c < 0) {
			c = (double)shape_numel(&n->out[0]->type.shape);
			e->nuncosted++;
		}
		e->single_s += c / hz;
		/* this device's share: its part of the result, and of K for a partial sum */
		const Value *o = n->out[0];
		double f = 1;
		if (!g->pipelined) {
			Shape ls = shard_local_shape(m, &o->shard, &o->type.shape);
			int64_t gn = shape_numel(&o->type.shape);
			f = gn ? (double)shape_numel(&ls) / (double)gn : 1;
			for (int a = 0; a < m->naxes; a++)
				if (o->shard.partial & (1u << a))
					f /= (double)m->size[a];
		}
		stage_s[g->pipelined && n->stage >= 0 ? n->stage : 0] += f * c / hz;
	}
	if (g->pipelined && g->micro_batches > 1) {
		/* GPipe: M micro-batches through N stages take M + N - 1 slots of
		 * the slowest stage's micro-batch time, and of the slowest
		 * micro-batch transfer (latency and its bytes) */
		double slow = 0;
		for (int s = 0; s < stages; s++)
			slow = stage_s[s] > slow ? stage_s[s] : slow;
		int mbs = g->micro_batches;
		e->compute_s = (double)(mbs + stages - 1) * slow / mbs;
		e->comm_s = (double)(mbs + stages - 1) * slowest_transfer;
	} else {
		for (int s = 0; s < stages; s++)
			e->compute_s += stage_s[s]; /* a pipeline without micro-batches: one stage after the other */
	}
	free(stage_s);
	e->step_s = e->compute_s + e->comm_s;
	return true;
}

void shard_print(FILE *out, const Graph *g, const ShardReport *r)
{
	const Mesh *m = &g->mesh;
	char mb[256], sb[256], tb[64], lb[64];
	size_t k = 0;
	for (int a = 0; a < m->naxes; a++)
		k += (size_t)snprintf(mb + k, sizeof mb - k, "%s%s=%" PRId64, a ? ", " : "", m->name[a], m->size[a]);
	fprintf(out, "# graph %s on mesh [%s]: %" PRId64 " devices\n", g->name, mb, shard_mesh_devices(m));
	fprintf(out, "# %-22s %-22s %-26s %s\n", "value", "type", "sharding", "on each device");
	for (int i = 0; i < g->ninputs; i++) {
		const Value *v = g->inputs[i];
		Shape l = shard_local_shape(m, &v->shard, &v->type.shape);
		TensorType lt = {v->type.dtype, l};
		fprintf(out, "  %-22s %-22s %-26s %s  (input)\n", v->name, type_str(&v->type, tb, sizeof tb),
			sharding_str(m, &v->shard, v->type.shape.rank, sb, sizeof sb), type_str(&lt, lb, sizeof lb));
	}
	uint64_t total = 0;
	int ncoll = 0;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		for (int j = 0; j < n->nout; j++) {
			const Value *v = n->out[j];
			Shape l = shard_local_shape(m, &v->shard, &v->type.shape);
			TensorType lt = {v->type.dtype, l};
			fprintf(out, "  %-22s %-22s %-26s %-20s %s", v->name, type_str(&v->type, tb, sizeof tb),
				sharding_str(m, &v->shard, v->type.shape.rank, sb, sizeof sb), type_str(&lt, lb, sizeof lb),
				op_info[n->op].name);
			if (g->pipelined && n->nin > 0 && n->op != OP_SEND_RECV)
				fprintf(out, " (stage %d)", n->stage);
			if (op_info[n->op].shard == SHARD_COLLECTIVE) {
				uint64_t b = shard_collective_bytes(g, n);
				total += b;
				ncoll += n->op != OP_SHARD_SLICE && n->op != OP_SHARD_PARTIAL;
				if (n->op == OP_SEND_RECV)
					total += (uint64_t)shape_numel(&v->type.shape) * dtype_size(v->type.dtype);
				if (n->op == OP_SEND_RECV)
					fprintf(out, "(%s) from stage %" PRId64 " to %d: %" PRIu64 " bytes", n->in[0]->name, attr_i(n, "from"), n->stage,
						(uint64_t)shape_numel(&v->type.shape) * dtype_size(v->type.dtype));
				else
					fprintf(out, "(%s) over %s: %" PRIu64 " bytes sent per device", n->in[0]->name,
						attr_s(n, "mesh_axis"), b);
			}
			fputc('\n', out);
		}
	}
	if (g->pipelined)
		fprintf(out, "# %d transfers between stages, %" PRIu64 " bytes in all\n", ncoll, total);
	else
		fprintf(out, "# %d collectives, %" PRIu64 " bytes sent per device\n", ncoll, total);
	ShardEstimate e;
	if (r->target && shard_estimate(g, r->target, &r->link, &e)) {
		int64_t D = shard_mesh_devices(m);
		fprintf(out, "# estimate on %s (the .md's cost model and clock), links %g Gb/s and %g us: compute %.3f ms, "
			"communication %.3f ms, step %.3f ms; one device %.3f ms: speedup %.2fx on %" PRId64 " devices "
			"(efficiency %.0f%%)%s\n", r->target->name, r->link.gbps, r->link.latency_us, e.compute_s * 1e3,
			e.comm_s * 1e3, e.step_s * 1e3, e.single_s * 1e3, e.single_s / e.step_s, D,
			100 * e.single_s / e.step_s / (double)D, e.nuncosted ? " (nodes without a cost row: 1 cycle per element)" : "");
	}
	if (r->alternatives)
		fputs(r->alternatives, out);
	for (int i = 0; i < r->nnotes; i++)
		fprintf(out, "# note: %s\n", r->notes[i]);
}
