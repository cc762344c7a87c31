/* Legality decisions and the legality-table export. */
#include <string.h>

#include "config.h"
#include "legality.h"
#include "ops.h"

static void json_str(FILE *o, const char *s)
{
	if (!s) {
		fputs("null", o);
		return;
	}
	fputc('"', o);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(o, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", o);
		else if (c < 0x20)
			fprintf(o, "\\u%04x", c);
		else
			fputc(c, o);
	}
	fputc('"', o);
}

static void csv_str(FILE *o, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, o);
		return;
	}
	fputc('"', o);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', o);
		fputc(*s, o);
	}
	fputc('"', o);
}

static void md_str(FILE *o, const char *s)
{
	if (!s)
		return;
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", o);
		else
			fputc(*s, o);
	}
}

typedef struct {
	OpKind op;
	DType dt;
	const LegalEntry *e;
} Row;

/* Calls fn for every row deciding (op, dtype): the conditional rows that
 * match, up to and including the first unconditional one. */
static int collect(const Target *t, Row *rows, int cap)
{
	int n = 0;
	for (int op = 0; op < OP_COUNT; op++) {
		if (op == OP_CONSTANT)
			continue;
		for (int dt = DT_F32; dt < DT_COUNT; dt++) {
			if (!(t->dtypes & (1u << dt)))
				continue;
			for (int i = 0; i < t->nlegal && n < cap; i++) {
				const LegalEntry *e = &t->legal[i];
				if ((e->op >= 0 && e->op != op) || (e->dtype >= 0 && e->dtype != dt))
					continue;
				rows[n++] = (Row){(OpKind)op, (DType)dt, e};
				if (!e->when)
					break;
			}
		}
	}
	return n;
}

static void json_uses(FILE *o, const char *uses)
{
	if (!uses) {
		fputs("[]", o);
		return;
	}
	fputc('[', o);
	const char *s = uses;
	for (int k = 0; *s; k++) {
		const char *e = strchr(s, ' ');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		fprintf(o, "%s\"%.*s\"", k ? ", " : "", (int)len, s);
		s += len;
		while (*s == ' ')
			s++;
	}
	fputc(']', o);
}

/* A native row's strategy(NAME) (core/lowerings.def), or NULL. */
static const char *strategy_of(const LegalEntry *e)
{
	static const char *const names[] = {
		NULL,
#define STRATEGY(name, what) #name,
#include "lowerings.def"
	};
	return e->strategy > LEGAL_STRATEGY_NONE && e->strategy < LEGAL_STRATEGY_COUNT ? names[e->strategy] : NULL;
}

/* Where a row's nodes run: the target, its host (fallback), or nowhere. */
static const char *runs_on(const Target *t, const LegalEntry *e)
{
	if (e->action == LEGAL_NATIVE || e->action == LEGAL_EXPAND)
		return t->name;
	const ParamInfo *h = target_param(t, "host");
	return e->action == LEGAL_FALLBACK && h && h->str ? h->str : NULL;
}

void legality_export(FILE *o, const Target *t, LegalityFormat f)
{
	enum { CAP = 4096 };
	static Row rows[CAP];
	int n = collect(t, rows, CAP);
	if (f == LEGALITY_JSON) {
		fprintf(o, "{\n  \"schema\": \"gdcc.legality\",\n  \"schema_version\": %d,\n", LEGALITY_SCHEMA_VERSION);
		fprintf(o, "  \"generator\": \"gdcc %s\",\n  \"target\": {\n    \"name\": ", PACKAGE_VERSION);
		json_str(o, t->name);
		fputs(",\n    \"parent\": ", o);
		json_str(o, t->parent);
		fputs(",\n    \"isa\": ", o);
		json_str(o, t->isa);
		fputs(",\n    \"md_file\": ", o);
		json_str(o, t->md_file);
		fprintf(o, ",\n    \"md_hash\": \"%016llx\",\n", (unsigned long long)t->md_hash);
		if (t->scalable) {
			fprintf(o, "    \"vector\": {\"kind\": \"scalable\", \"vlen_min\": %d, \"vlen_max\": %d, \"lmul\": [",
				t->vector_bits, t->vlen_max);
			for (int i = 0; i < t->nlmul; i++)
				fprintf(o, "%s%d", i ? ", " : "", t->lmul[i]);
			fputs("]},\n", o);
		} else {
			fprintf(o, "    \"vector\": {\"kind\": \"fixed\", \"bits\": %d},\n", t->vector_bits);
		}
		fputs("    \"dtypes\": [", o);
		int k = 0;
		for (int dt = DT_F32; dt < DT_COUNT; dt++)
			if (t->dtypes & (1u << dt))
				fprintf(o, "%s\"%s\"", k++ ? ", " : "", dtype_name((DType)dt));
		fputs("]\n  },\n  \"entries\": [\n", o);
		for (int i = 0; i < n; i++) {
			const LegalEntry *e = rows[i].e;
			fprintf(o, "    {\"op\": \"%s\", \"dtype\": \"%s\", \"action\": \"%s\", \"constraint\": ",
				op_info[rows[i].op].name, dtype_name(rows[i].dt), legal_action_name(e->action));
			json_str(o, e->when_text);
			fputs(", \"rule\": ", o);
			json_str(o, e->rule);
			fputs(", \"reason\": ", o);
			json_str(o, e->reason);
			fputs(", \"uses\": ", o);
			json_uses(o, e->uses);
			fputs(", \"strategy\": ", o);
			json_str(o, strategy_of(e));
			if (e->cost >= 0)
				fprintf(o, ", \"estimated_cost\": %.6g", e->cost);
			else
				fputs(", \"estimated_cost\": null", o);
			fputs(", \"runs_on\": ", o);
			json_str(o, runs_on(t, e));
			fprintf(o, ", \"cost_unit\": \"%s\", \"source\": \"%s:%d\"}%s\n",
				e->cost_per_mac ? "cycles/mac" : "cycles/element", e->file, e->line, i + 1 < n ? "," : "");
		}
		fputs("  ]\n}\n", o);
	} else if (f == LEGALITY_CSV) {
		fputs("target,op,dtype,action,constraint,rule,reason,uses,estimated_cost,cost_unit,source,runs_on,strategy\n", o);
		for (int i = 0; i < n; i++) {
			const LegalEntry *e = rows[i].e;
			fprintf(o, "%s,%s,%s,%s,", t->name, op_info[rows[i].op].name, dtype_name(rows[i].dt),
				legal_action_name(e->action));
			csv_str(o, e->when_text);
			fputc(',', o);
			csv_str(o, e->rule);
			fputc(',', o);
			csv_str(o, e->reason);
			fputc(',', o);
			csv_str(o, e->uses);
			fputc(',', o);
			if (e->cost >= 0)
				fprintf(o, "%.6g", e->cost);
			fprintf(o, ",%s,%s:%d,", e->cost_per_mac ? "cycles/mac" : "cycles/element", e->file, e->line);
			csv_str(o, runs_on(t, e));
			fputc(',', o);
			csv_str(o, strategy_of(e));
			fputc('\n', o);
		}
	} else {
		fprintf(o, "# Legality of `%s` (%s)\n\n", t->name, t->isa);
		fprintf(o, "From `%s` (xxh3 %016llx), gdcc %s. Estimated cost in cycles per output element, or per\n"
			"multiply-accumulate where marked /mac.\n\n",
			t->md_file, (unsigned long long)t->md_hash, PACKAGE_VERSION);
		fputs("| op | dtype | action | when | rule / reason | uses | est. cost | source | runs on | strategy |\n", o);
		fputs("|---|---|---|---|---|---|---|---|---|---|\n", o);
		for (int i = 0; i < n; i++) {
			const LegalEntry *e = rows[i].e;
			fprintf(o, "| %s | %s | %s | ", op_info[rows[i].op].name, dtype_name(rows[i].dt),
				legal_action_name(e->action));
			md_str(o, e->when_text);
			fputs(" | ", o);
			md_str(o, e->rule ? e->rule : e->reason);
			fputs(" | ", o);
			md_str(o, e->uses);
			fputs(" | ", o);
			if (e->cost >= 0)
				fprintf(o, "%.3g%s", e->cost, e->cost_per_mac ? "/mac" : "");
			fprintf(o, " | %s:%d | ", e->file, e->line);
			md_str(o, runs_on(t, e));
			fputs(" | ", o);
			md_str(o, strategy_of(e));
			fputs(" |\n", o);
		}
	}
}

bool legality_check(const Graph *g, const Target *t, Diag *d, FILE *dump)
{
	return legality_decide(g, t, d, dump, NULL);
}

bool legality_decide(const Graph *g, const Target *t, Diag *d, FILE *dump, const LegalEntry **decided)
{
	bool ok = true;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = g->nodes[i];
		if (decided)
			decided[n->id] = NULL;
		if (n->op == OP_CONSTANT)
			continue;
		const LegalEntry *e = target_legality(t, n);
		if (decided)
			decided[n->id] = e;
		DType dt = n->nin ? n->in[0]->type.dtype : n->out[0]->type.dtype;
		char ty[160];
		type_str(n->nin ? &n->in[0]->type : &n->out[0]->type, ty, sizeof ty);
		if (!e) {
			diag_error(d, n->loc, "%s %s is unsupported on %s: the target's legality table has no row for %s %s",
				   op_info[n->op].name, ty, t->name, op_info[n->op].name, dtype_name(dt));
			ok = false;
			continue;
		}
		if (e->action == LEGAL_UNSUPPORTED) {
			diag_error(d, n->loc, "%s %s is unsupported on %s: %s (%s:%d)", op_info[n->op].name, ty, t->name,
				   e->reason, e->file, e->line);
			ok = false;
		}
		if (dump) {
			fprintf(dump, "%-16s %-12s %-20s %-11s", n->out[0]->name, op_info[n->op].name, ty,
				legal_action_name(e->action));
			if (e->rule)
				fprintf(dump, " %s", e->rule);
			if (e->reason)
				fprintf(dump, " \"%s\"", e->reason);
			if (e->uses)
				fprintf(dump, " uses(%s)", e->uses);
			if (strategy_of(e))
				fprintf(dump, " strategy(%s)", strategy_of(e));
			if (e->when_text)
				fprintf(dump, " when %s", e->when_text);
			fprintf(dump, "  [%s:%d]\n", e->file, e->line);
		}
	}
	return ok;
}
