/* Compiling (see compile.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "compile.h"
#include "config.h"
#include "driver.h"
#include "gdcc_limits.h"
#include "printer.h"
#include "util.h"

void session_init(Session *s, const Options *o)
{
	memset(s, 0, sizeof *s);
	s->o = o;
	s->graph_log.segment = -1;
	s->status = EXIT_INPUT;
}

static void collected_free(Session *s)
{
	for (int i = 0; i < s->nreports; i++)
		free(s->reports[i]);
	for (int i = 0; i < s->nsim_stats; i++)
		free(s->sim_stats[i]);
	free(s->reports);
	free(s->sim_stats);
	s->reports = s->sim_stats = NULL;
	s->nreports = s->nsim_stats = 0;
}

void session_free(Session *s)
{
	collected_free(s);
	passlog_free(&s->graph_log);
}

bool compile_graph(Session *s, Graph *g, Diag *d) { return pipeline_graph(g, s->o, &s->graph_log, d); }

uint64_t content_hash(const Graph *g, const Target *t, const Options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	print_graph(f, g);
	fprintf(f, "%016llx gdcc %s -O%d", (unsigned long long)t->md_hash, PACKAGE_VERSION, o->opt_level);
	for (int i = 0; i < o->ndisabled; i++)
		fprintf(f, " --disable-pass=%s", o->disabled[i]);
	if (o->profile)
		fputs(" --profile", f); /* (a function per kernel) */
	fclose(f);
	uint64_t h = XXH3_64bits(buf, len);
	free(buf);
	return h;
}

typedef struct {
	const Program *p;
	uint64_t hash;
	const Session *s;
	const PassLog *log;
	const WeightsRef *w;
} ProgramJob;

static void write_asm(FILE *out, const void *ctx)
{
	const ProgramJob *j = ctx;
	program_emit(out, j->p, j->w);
}
static void write_manifest(FILE *out, const void *ctx)
{
	const ProgramJob *j = ctx;
	program_manifest(out, j->p, j->hash, j->w);
}
static void write_weights(FILE *out, const void *ctx) { program_write_weights(out, ((const ProgramJob *)ctx)->p); }
static void write_header(FILE *out, const void *ctx)
{
	const ProgramJob *j = ctx;
	program_header(out, j->p, j->s->o->header_path);
}

/* ---- the weights file (docs/backend.md, "Constant data") ----------------------
 * -S writes a model's constant data into a weights file beside the
 * assembly, which names it by its absolute path in .incbin directives:
 * --weights=FILE names it; by default it is OUT without a trailing .s,
 * plus .weights.bin (M.s: M.weights.bin), written when there is data and
 * -o names a file (else, and with --weights=inline, the data is inline
 * text).  `stale`: the default name, to remove at commit when nothing is
 * written there. */
char *weights_path(const Options *o, const char *out, int64_t bytes, char **stale)
{
	*stale = NULL;
	if (o->weights && strcmp(o->weights, "inline") == 0)
		return NULL;
	if (o->weights)
		return xstrdup(o->weights);
	if (!names_a_file(out))
		return NULL;
	size_t n = strlen(out);
	char *def = n > 2 && strcmp(out + n - 2, ".s") == 0 ? xasprintf("%.*s.weights.bin", (int)(n - 2), out)
							     : xasprintf("%s.weights.bin", out);
	if (bytes > 0)
		return def;
	*stale = def;
	return NULL;
}

/* Stage the weights file `path` (NULL: none) with write_fn(ctx), and set
 * *abs to the name the .incbin directives give it.  0 or an exit status. */
static int stage_weights(const char *path, Writer write_fn, const void *ctx, char **abs)
{
	*abs = NULL;
	if (!path)
		return 0;
	int rc = write_output(path, write_fn, ctx);
	if (rc)
		return rc;
	if (!(*abs = output_resolve(path))) {
		errorf("cannot create '%s': %s", path, strerror(errno));
		return EXIT_RUN;
	}
	return 0;
}
static void write_mir(FILE *out, const void *ctx) { mfunc_dump(out, ((const ProgramJob *)ctx)->p->f); }

static void write_report(FILE *out, const void *ctx)
{
	const ProgramJob *j = ctx;
	const PassLog *logs[] = {&j->s->graph_log, j->log};
	program_report(out, j->p, j->hash, j->s->o->front_seconds, logs, 2);
}

Program *compile_program(Session *s, const Graph *g, const Target *t, const char *entry, FILE *loops, Diag *d)
{
	const Options *o = s->o;
	s->status = EXIT_INPUT;
	Options local = *o;
	local.entry = entry ? entry : "gdcc_entry";
	PassLog log = {.segment = 0};
	Program *p = pipeline_target(g, t, &local, &log, loops, d);
	if (p && (p->workspace_bytes < 0 || (uint64_t)p->workspace_bytes > limits()->max_workspace_bytes)) {
		char *w = bytes_str((uint64_t)p->workspace_bytes, NULL),
		     *l = bytes_str(limits()->max_workspace_bytes, "--max-workspace-bytes");
		if (p->workspace_bytes < 0)
			diag_error(d, o->model_loc, "the program compiled for %s needs a workspace larger than 2^63 bytes",
				   t->name);
		else
			diag_error(d, o->model_loc, "the program compiled for %s needs a workspace of %s, above the limit of %s",
				   t->name, w, l);
		free(w);
		free(l);
		program_free(p);
		p = NULL;
	}
	if (p && s->collect) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		ProgramJob job = {p, content_hash(g, t, o), s, &log, NULL};
		write_report(m, &job);
		fclose(m);
		s->reports = xrealloc(s->reports, (size_t)(s->nreports + 1) * sizeof *s->reports);
		s->reports[s->nreports++] = buf;
	} else if (p && o->report_path) {
		ProgramJob job = {p, content_hash(g, t, o), s, &log, NULL};
		int wrc = write_output(o->report_path, write_report, &job);
		if (wrc != 0) {
			s->status = wrc;
			program_free(p);
			p = NULL;
		}
	}
	passlog_free(&log);
	return p;
}

int compile_to_file(Session *s, const Graph *g, const Target *t, const char *emit, const char *out, Diag *d)
{
	bool loops = emit && strcmp(emit, "loops") == 0;
	char *lbuf = NULL;
	size_t llen = 0;
	FILE *lstream = loops ? open_memstream(&lbuf, &llen) : NULL;
	Program *p = compile_program(s, g, t, s->o->entry, lstream, d);
	if (lstream)
		fclose(lstream);
	int rc;
	if (!p) {
		rc = s->status;
	} else {
		WeightsRef w = {0};
		ProgramJob job = {p, content_hash(g, t, s->o), s, NULL, &w};
		if (!emit) {
			char *stale, *wpath = weights_path(s->o, out, program_weights_bytes(p), &stale), *abs = NULL;
			rc = stage_weights(wpath, write_weights, &job, &abs);
			w.path = abs;
			if (stale)
				stage_remove(stale);
			if (rc == 0)
				rc = write_output(out, write_asm, &job);
			if (rc == 0 && names_a_file(out)) {
				char *mpath = xasprintf("%s.json", out);
				rc = write_output(mpath, write_manifest, &job);
				free(mpath);
			}
			if (rc == 0 && s->o->header_path)
				rc = write_output(s->o->header_path, write_header, &job);
			free(wpath);
			free(stale);
			free(abs);
		} else if (loops) {
			rc = write_output(out, fputs_writer, lbuf);
		} else {
			rc = write_output(out, write_mir, &job);
		}
		program_free(p);
	}
	free(lbuf);
	return rc;
}

/* ---- placed models ---------------------------------------------------------- */
typedef struct {
	const Placement *pl;
	uint64_t hash;
	const Session *s;
} PlacedJob;

/* The report of a placed model: the placement, each segment's program
 * report, and the simulator's statistics of each device segment run. */
static void write_placed_report(FILE *o, const void *ctx)
{
	const PlacedJob *j = ctx;
	fprintf(o, "{\n  \"schema\": \"gdcc.report\",\n  \"schema_version\": 1,\n  \"generator\": \"gdcc %s\",\n",
		PACKAGE_VERSION);
	fprintf(o, "  \"model\": \"%s\",\n  \"target\": \"%s\",\n  \"content_hash\": \"%016llx\",\n  \"placement\": ",
		j->pl->g->name, j->pl->device->name, (unsigned long long)j->hash);
	placement_json(o, j->pl, "  ");
	fputs(",\n  \"segments\": [", o);
	for (int i = 0; i < j->s->nreports; i++)
		fprintf(o, "%s\n%s", i ? "," : "", j->s->reports[i]);
	fputs("],\n  \"simulator\": [", o);
	for (int i = 0; i < j->s->nsim_stats; i++)
		fprintf(o, "%s\n%s", i ? "," : "", j->s->sim_stats[i]);
	fputs("]\n}\n", o);
}

int write_placed_report_file(Session *s, const Placement *pl, uint64_t hash)
{
	PlacedJob job = {pl, hash, s};
	return write_output(s->o->report_path, write_placed_report, &job);
}

void write_placement(FILE *out, const void *ctx) { placement_print(out, ctx); }

typedef struct {
	const Placement *pl;
	Program **progs;
	uint64_t hash;
	bool host_part;   /* the host's segments, else the device's */
	WeightsRef *w;    /* each segment's data (NULL: inline) */
} PlacedAsmJob;

/* One weights file for all segments, each's at its WeightsRef offset. */
static void write_placed_weights(FILE *o, const void *ctx)
{
	const PlacedAsmJob *j = ctx;
	int64_t at = 0;
	for (int k = 0; k < j->pl->nsegs; k++) {
		for (; at < j->w[k].offset; at++)
			fputc(0, o);
		program_write_weights(o, j->progs[k]);
		at += program_weights_bytes(j->progs[k]);
	}
}

static void write_placed_asm(FILE *o, const void *ctx)
{
	const PlacedAsmJob *j = ctx;
	fprintf(o, "# %s part of %s placed on %s with host %s: segments run in order, values passed as listed in the manifest\n",
		j->host_part ? "host" : "device", j->pl->g->name, j->pl->device->name, j->pl->host->name);
	for (int k = 0; k < j->pl->nsegs; k++)
		if (j->pl->segs[k].host == j->host_part)
			program_emit(o, j->progs[k], j->w && j->w[k].path ? &j->w[k] : NULL);
}

static void write_placed_manifest(FILE *o, const void *ctx)
{
	const PlacedAsmJob *j = ctx;
	fprintf(o, "{\n  \"schema\": \"gdcc.manifest\",\n  \"schema_version\": 1,\n  \"generator\": \"gdcc %s\",\n",
		PACKAGE_VERSION);
	fprintf(o, "  \"target\": \"%s\",\n  \"host\": \"%s\",\n  \"model\": \"%s\",\n  \"content_hash\": \"%016llx\",\n",
		j->pl->device->name, j->pl->host->name, j->pl->g->name, (unsigned long long)j->hash);
	fputs("  \"placement\": ", o);
	placement_json(o, j->pl, "  ");
	fputs(",\n  \"programs\": [", o);
	for (int k = 0; k < j->pl->nsegs; k++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		program_manifest(m, j->progs[k], j->hash, j->w && j->w[k].path ? &j->w[k] : NULL);
		fclose(m);
		fprintf(o, "%s\n%s", k ? "," : "", buf);
		free(buf);
	}
	fputs("]\n}\n", o);
}

int compile_placed(Session *s, const Graph *g, const Target *t, const Target *host, const char *emit, const char *out,
		   Diag *d)
{
	Placement *pl = place_graph(g, t, host, d);
	if (!pl)
		return EXIT_INPUT;
	int rc = 0;
	Program **progs = xcalloc((size_t)pl->nsegs, sizeof *progs);
	char **names = xcalloc((size_t)pl->nsegs, sizeof *names);
	s->collect = s->o->report_path != NULL;
	bool loops = emit && strcmp(emit, "loops") == 0, mir = emit && strcmp(emit, "mir") == 0;
	char *text = NULL;
	size_t tlen = 0;
	FILE *ts = loops || mir ? open_memstream(&text, &tlen) : NULL;
	for (int k = 0; k < pl->nsegs && rc == 0; k++) {
		names[k] = xasprintf("gdcc_seg%d", k);
		if (ts)
			fprintf(ts, "# segment %d on %s%s\n", k, pl->segs[k].t->name, pl->segs[k].host ? " (host)" : "");
		progs[k] = compile_program(s, pl->segs[k].g, pl->segs[k].t, names[k], loops ? ts : NULL, d);
		if (!progs[k])
			rc = s->status;
		else if (mir)
			mfunc_dump(ts, progs[k]->f);
	}
	if (ts)
		fclose(ts);
	uint64_t hash = content_hash(g, t, s->o);
	if (rc == 0 && ts) {
		rc = write_output(out, fputs_writer, text);
	} else if (rc == 0 && emit) {
		rc = write_output(out, write_placement, pl);
	} else if (rc == 0) {
		bool any_host = false;
		for (int k = 0; k < pl->nsegs; k++)
			any_host |= pl->segs[k].host;
		WeightsRef *w = xcalloc((size_t)pl->nsegs, sizeof *w);
		int64_t total = 0;
		for (int k = 0; k < pl->nsegs; k++) {
			w[k].offset = total;
			total += (program_weights_bytes(progs[k]) + 63) / 64 * 64;
		}
		PlacedAsmJob job = {pl, progs, hash, false, w};
		char *stale, *wpath = weights_path(s->o, out, total, &stale), *abs = NULL;
		rc = stage_weights(wpath, write_placed_weights, &job, &abs);
		for (int k = 0; k < pl->nsegs; k++)
			w[k].path = abs;
		if (stale)
			stage_remove(stale);
		free(wpath);
		free(stale);
		if (rc == 0)
			rc = write_output(out, write_placed_asm, &job);
		if (rc == 0 && names_a_file(out)) {
			size_t n = strlen(out);
			char *hpath = n > 2 && strcmp(out + n - 2, ".s") == 0 ? xasprintf("%.*s.host.s", (int)(n - 2), out)
									    : xasprintf("%s.host.s", out);
			if (any_host) {
				job.host_part = true;
				rc = write_output(hpath, write_placed_asm, &job);
			} else {
				stage_remove(hpath); /* (a stale one from an earlier compile) */
			}
			free(hpath);
			char *mpath = xasprintf("%s.json", out);
			if (rc == 0)
				rc = write_output(mpath, write_placed_manifest, &job);
			free(mpath);
		} else if (rc == 0 && any_host) {
			job.host_part = true;
			rc = write_output(out, write_placed_asm, &job);
		}
		free(abs);
		free(w);
	}
	if (rc == 0 && s->o->report_path)
		rc = write_placed_report_file(s, pl, hash);
	s->collect = false;
	collected_free(s);
	free(text);
	for (int k = 0; k < pl->nsegs; k++) {
		program_free(progs[k]);
		free(names[k]);
	}
	free(progs);
	free(names);
	placement_free(pl);
	return rc;
}
