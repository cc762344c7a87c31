/* Placement: which nodes a target runs and which go to its host.
 *
 * A target's legality rows say `fallback "why"` for what it cannot run;
 * such nodes run on the host target its .md names (`param host`, or
 * --host).  The graph is cut, in node order, into segments of consecutive
 * nodes with one placement; each segment is a graph of its own whose
 * inputs are the values it reads from elsewhere and whose outputs are what
 * other segments (or the model) read.  A value crossing between the
 * device and the host is a transfer, listed with its bytes. */
#ifndef GDCC_PLACE_H
#define GDCC_PLACE_H

#include <stdio.h>

#include "ir.h"
#include "target.h"

typedef struct {
	const Target *t;     /* where it runs */
	bool host;
	Graph *g;            /* the segment as a graph (values keep their names) */
	int first, last;     /* its node range in the model */
} Segment;

typedef struct {
	const char *value;   /* the model's value name */
	int from, to;        /* segment indices; -1: the model's inputs (host memory) or outputs */
	int64_t bytes;
} Transfer;

typedef struct {
	const Graph *g;
	const Target *device, *host;
	const Target **node_target; /* per node id (NULL for constants) */
	const char **node_reason;   /* per node id: why it is where it is */
	Segment *segs;
	int nsegs;
	Transfer *xfers;
	int nxfers;
} Placement;

/* The host a target falls back to: `host` (a name) or the .md's `param
 * host`; NULL (with an error in d) when the target needs one and has none. */
const Target *place_host(const Target *t, const char *host, Diag *d);
/* Place every node of g. NULL after errors (an unsupported node, or a
 * fallback with no host). */
Placement *place_graph(const Graph *g, const Target *t, const Target *host, Diag *d);
void placement_free(Placement *p);
/* Human-readable plan (--emit=placement) and its JSON (reports). */
void placement_print(FILE *out, const Placement *p);
void placement_json(FILE *out, const Placement *p, const char *indent);

#endif
