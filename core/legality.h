/* Legality: each node's decision on a target (from the generated legality
 * table), and the export of a target's whole table for the runtime team as
 * JSON (schema in docs/reports.md), CSV or Markdown. */
#ifndef GDCC_LEGALITY_H
#define GDCC_LEGALITY_H

#include <stdio.h>

#include "ir.h"
#include "target.h"

typedef enum { LEGALITY_JSON, LEGALITY_CSV, LEGALITY_MD } LegalityFormat;

enum { LEGALITY_SCHEMA_VERSION = 1 };

/* Write every op x dtype row of t's table. */
void legality_export(FILE *out, const Target *t, LegalityFormat f);
/* Decide every node of a verified graph; an unsupported node (or one no
 * row covers) is an error naming op, dtype, shape, target and reason.
 * With `dump`, print each decision. */
bool legality_check(const Graph *g, const Target *t, Diag *d, FILE *dump);
/* The same, storing each node's decision in decided[Node.id] (an array of
 * g->nnodes; NULL for constants and for nodes no row covers): the legalize
 * stage computes it once per target compile (per graph or segment graph),
 * and the lowering (codegen_lower) dispatches on it. */
bool legality_decide(const Graph *g, const Target *t, Diag *d, FILE *dump, const LegalEntry **decided);

#endif
