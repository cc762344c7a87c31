/* Memory planning (see memplan.h).  Not written yet: one slot per value. */
#include <stdlib.h>

#include "memplan.h"
#include "util.h"

MemPlan *memplan_build(const Graph *g, bool reuse)
{
	(void)reuse;
	MemPlan *m = xcalloc(1, sizeof *m);
	m->nvalues = g->nvalues;
	m->offset = xcalloc((size_t)g->nvalues + 1, sizeof *m->offset);
	m->alias = xcalloc((size_t)g->nvalues + 1, sizeof *m->alias);
	for (int i = 0; i < g->nvalues; i++) {
		const Value *v = g->values[i];
		m->alias[i] = i;
		m->offset[i] = -1;
		if (v->is_input || v->is_output || !v->def || v->def->op == OP_CONSTANT)
			continue;
		m->offset[i] = m->bytes;
		m->bytes += ((int64_t)shape_numel(&v->type.shape) * (int64_t)dtype_size(v->type.dtype) + 63) / 64 * 64;
	}
	m->naive_bytes = m->bytes;
	return m;
}

void memplan_free(MemPlan *m)
{
	if (!m)
		return;
	free(m->offset);
	free(m->alias);
	free(m);
}

void memplan_print(FILE *out, const Graph *g, const MemPlan *m)
{
	fprintf(out, "# memory plan of %s: %lld bytes (one slot per value: %lld)\n", g->name, (long long)m->bytes,
		(long long)m->naive_bytes);
}
