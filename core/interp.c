/* Reference interpreter: walks nodes in order (a topological order), gives
 * each value a tensor, calls the op's kernel, frees values after their
 * last use. */
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "ops.h"
#include "rng.h"
#include "util.h"

void fill_random_input(Tensor *t, uint64_t seed)
{
	Rng r;
	rng_seed(&r, seed);
	int64_t n = tensor_numel(t);
	for (int64_t i = 0; i < n; i++) {
		double u = rng_uniform(&r);
		if (dtype_is_float(t->type.dtype))
			tensor_set_f(t, i, 2.0 * u - 1.0);
		else if (t->type.dtype == DT_BOOL)
			tensor_set_f(t, i, u < 0.5);
		else
			tensor_set_f(t, i, (double)(int)(u * 8));
	}
}

bool interp_run(const Graph *g, Tensor *const *inputs, Tensor **outputs, Diag *d)
{
	Tensor **val = xcalloc(g->nvalues, sizeof *val);
	int *last = xcalloc(g->nvalues, sizeof *last); /* last node using a value */
	bool ok = true;
	for (int i = 0; i < g->nvalues; i++)
		last[i] = -1;
	for (int i = 0; i < g->nnodes; i++)
		for (int k = 0; k < g->nodes[i]->nin; k++)
			last[g->nodes[i]->in[k]->id] = i;
	for (int i = 0; i < g->noutputs; i++)
		last[g->outputs[i]->id] = g->nnodes; /* never freed here */
	for (int i = 0; i < g->ninputs; i++) {
		const Value *v = g->inputs[i];
		const TensorType *t = &inputs[i]->type;
		if (t->dtype != v->type.dtype || !shape_eq(&t->shape, &v->type.shape)) {
			char want[160], got[160];
			type_str(&v->type, want, sizeof want);
			type_str(t, got, sizeof got);
			diag_error(d, v->loc, "input '%s' is %s but the value given is %s", v->name, want, got);
			ok = false;
			continue;
		}
		val[v->id] = tensor_new(t->dtype, &t->shape);
		if (tensor_bytes(inputs[i]))
			memcpy(val[v->id]->data, inputs[i]->data, tensor_bytes(inputs[i]));
	}
	for (int i = 0; ok && i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		Tensor *in[n->nin > 0 ? n->nin : 1];
		Tensor *out[n->nout];
		for (int k = 0; k < n->nin; k++)
			in[k] = val[n->in[k]->id];
		for (int k = 0; k < n->nout; k++) {
			const Value *v = n->out[k];
			out[k] = val[v->id] = tensor_new(v->type.dtype, &v->type.shape);
		}
		ok = op_info[n->op].kernel(n, in, out, d);
		for (int k = 0; k < n->nin; k++) {
			int id = n->in[k]->id;
			if (last[id] == i && val[id]) {
				tensor_free(val[id]);
				val[id] = NULL;
			}
		}
		for (int k = 0; k < n->nout; k++) {
			int id = n->out[k]->id;
			if (last[id] < 0) { /* an unused extra result */
				tensor_free(val[id]);
				val[id] = NULL;
			}
		}
	}
	for (int i = 0; i < g->noutputs; i++) {
		int id = g->outputs[i]->id;
		if (ok) {
			/* The same value may be listed once only (the verifier
			 * checks), but an input may be an output: copy it. */
			outputs[i] = tensor_new(val[id]->type.dtype, &val[id]->type.shape);
			if (tensor_bytes(val[id]))
				memcpy(outputs[i]->data, val[id]->data, tensor_bytes(val[id]));
		}
	}
	for (int i = 0; i < g->nvalues; i++)
		tensor_free(val[i]);
	free(val);
	free(last);
	return ok;
}
