/* Linking and running compiled code: a program linked with the run
 * harness (or loaded by the NPU simulator) as the target's .md says
 * (params link, run, harness), inputs and outputs passed as raw files; a
 * placed model's segments run in turn, each where it was placed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "gdcc_limits.h"
#include "interp.h"
#include "ops.h"
#include "place.h"
#include "profile.h"
#include "hostcpu.h"
#include "run.h"
#include "shard.h"
#include "util.h"

/* The NPU simulator: $GDCC_NPUSIM, the build tree's, or the installed one. */
static const char *npusim_path(void)
{
	const char *env = getenv("GDCC_NPUSIM");
	if (env && *env)
		return env;
#ifdef GDCC_NPUSIM_BUILD
	struct stat st;
	if (stat(GDCC_NPUSIM_BUILD, &st) == 0)
		return GDCC_NPUSIM_BUILD;
#endif
	return GDCC_BINDIR "/npusim";
}

/* A target's command template with {name} replaced (values shell-quoted). */
/* A word for sh: in single quotes, each ' as '\'' */
static char *shell_quote(const char *v)
{
	size_t n = 3;
	for (const char *q = v; *q; q++)
		n += *q == '\'' ? 4 : 1;
	char *r = xmalloc(n), *o = r;
	*o++ = '\'';
	for (const char *q = v; *q; q++) {
		if (*q == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *q;
		}
	}
	*o++ = '\'';
	*o = 0;
	return r;
}

static char *fill_command(const char *tmpl, const char *const *keys, const char *const *vals, int n)
{
	size_t cap = 256, len = 0;
	char *out = xmalloc(cap);
	for (const char *s = tmpl; *s;) {
		const char *piece = s;
		size_t plen = 1;
		char *quoted = NULL;
		if (*s == '{') {
			for (int i = 0; i < n; i++) {
				size_t kl = strlen(keys[i]);
				if (strncmp(s + 1, keys[i], kl) == 0 && s[1 + kl] == '}') {
					piece = quoted = shell_quote(vals[i]);
					plen = strlen(quoted);
					s += kl + 1;
					break;
				}
			}
		}
		s++;
		if (len + plen + 1 > cap)
			out = xrealloc(out, cap = 2 * (len + plen + 1));
		memcpy(out + len, piece, plen);
		len += plen;
		free(quoted);
	}
	out[len] = 0;
	return out;
}

static const char *runtime_dir(void)
{
	const char *env = getenv("GDCC_RUNTIME_DIR");
	if (env && *env)
		return env;
	struct stat st;
	if (stat(GDCC_RUNTIME_BUILD, &st) == 0)
		return GDCC_RUNTIME_BUILD;
	return GDCC_RUNTIME_DIR;
}

static bool write_raw(const char *path, const Tensor *t)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	size_t n = tensor_bytes(t);
	bool ok = (n == 0 || fwrite(t->data, 1, n, f) == n);
	return (fclose(f) == 0) && ok;
}

static bool read_raw(const char *path, Tensor *t)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	size_t n = tensor_bytes(t);
	bool ok = (n == 0 || fread(t->data, 1, n, f) == n);
	fclose(f);
	return ok;
}

/* p's assembly to asm_path and its constant data to the weights file
 * `weights` (absolute, or relative to where the tools run; none without
 * data), which the .incbin directives name as given.  false after the
 * message. */
static bool write_program_files(const Program *p, const char *asm_path, const char *weights, Diag *d)
{
	bool bin = program_weights_bytes(p) > 0;
	if (bin) {
		FILE *wf = fopen(weights, "wb");
		if (!wf) {
			diag_error(d, loc_at(weights, 0, 0), "cannot create: %s", strerror(errno));
			return false;
		}
		bool ok = program_write_weights(wf, p);
		if (fclose(wf) != 0 || !ok) {
			diag_error(d, loc_at(weights, 0, 0), "cannot write: %s", strerror(errno));
			return false;
		}
	}
	FILE *af = fopen(asm_path, "w");
	if (!af) {
		diag_error(d, loc_at(asm_path, 0, 0), "cannot create: %s", strerror(errno));
		return false;
	}
	WeightsRef w = {weights, 0};
	program_emit(af, p, bin ? &w : NULL);
	if (fclose(af) != 0) {
		diag_error(d, loc_at(asm_path, 0, 0), "cannot write: %s", strerror(errno));
		return false;
	}
	return true;
}

/* A temporary folder in $TMPDIR (default /tmp), absolute; NULL after the
 * message. */
static char *make_temp_dir(const char *what, Diag *d)
{
	const char *tmpdir = getenv("TMPDIR");
	char *tmpl = xasprintf("%s/gdcc-%s-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp", what);
	if (!mkdtemp(tmpl)) {
		diag_error(d, loc_at(NULL, 0, 0), "cannot create a temporary folder in %s: %s",
			   tmpdir && *tmpdir ? tmpdir : "/tmp", strerror(errno));
		free(tmpl);
		return NULL;
	}
	char *abs = realpath(tmpl, NULL);
	if (!abs)
		return tmpl;
	free(tmpl);
	return abs;
}

typedef struct {
	const Program *p;
	const char *path;
} HeaderJob;

static void write_header_job(FILE *out, const void *ctx)
{
	const HeaderJob *j = ctx;
	program_header(out, j->p, j->path);
}

/* p (g compiled for t) linked with the run harness in dir as `stem`
 * (STEM.s, STEM.weights.bin, STEM), and the command that runs it with
 * files[] (g's inputs, then its outputs) as its arguments, the --profile
 * times to times_path when asked, the simulator's statistics to
 * stats_path.  NULL after the message. */
static char *link_program(Session *s, const Graph *g, const Target *t, const Program *p, const char *dir,
			  const char *stem, char *const *files, const char *times_path, const char *stats_path, Diag *d)
{
	const ParamInfo *link = target_param(t, "link"), *run = target_param(t, "run"), *harness = target_param(t, "harness");
	if (!link || !link->str || !run || !run->str || ((!harness || !harness->str) && strstr(link->str, "{harness}"))) {
		diag_error(d, loc_at(NULL, 0, 0), "%s: the .md does not say how to link and run a program (params link, run, harness)",
			   t->name);
		return NULL;
	}
	char *asm_path = xasprintf("%s/%s.s", dir, stem), *prog = xasprintf("%s/%s", dir, stem);
	char *weights = xasprintf("%s/%s.weights.bin", dir, stem);
	char *harness_path = xasprintf("%s/%s", runtime_dir(), harness && harness->str ? harness->str : "");
	char *full = NULL;
	if (!write_program_files(p, asm_path, weights, d))
		goto out;
	{
		const char *keys[] = {"out", "in", "harness"}, *vals[] = {prog, asm_path, harness_path};
		char *cmd = fill_command(link->str, keys, vals, 3);
		char *logged = xasprintf("%s 2>'%s/%s.link.log'", cmd, dir, stem);
		int st = system(logged);
		if (st != 0) {
			char *log = xasprintf("%s/%s.link.log", dir, stem);
			size_t len;
			char *text = read_file(log, &len);
			diag_error(d, loc_at(NULL, 0, 0), "%s: assembling and linking failed (%s):\n%s", t->name, cmd,
				   text ? text : "");
			free(text);
			free(log);
		}
		free(logged);
		free(cmd);
		if (st != 0)
			goto out;
	}
	size_t cap = 1024, len = 0;
	char *args = xmalloc(cap);
	args[0] = 0;
	for (int i = 0; i < g->ninputs + g->noutputs; i++) {
		bool in = i < g->ninputs;
		const Value *v = in ? g->inputs[i] : g->outputs[i - g->ninputs];
		char *a = xasprintf(" '%c:%s:%lld'", in ? 'i' : 'o', files[i],
				    (long long)(shape_numel(&v->type.shape) * (int64_t)dtype_size(v->type.dtype)));
		if (len + strlen(a) + 64 > cap)
			args = xrealloc(args, cap = 2 * (len + strlen(a) + 64));
		strcpy(args + len, a);
		len += strlen(a);
		free(a);
	}
	if (times_path) {
		/* the harness times each kernel (runtime/harness.c) */
		char *a = xasprintf(" 'p:%s:%d'", times_path, s->o->profile_runs > 0 ? s->o->profile_runs : 5);
		if (len + strlen(a) + 64 > cap)
			args = xrealloc(args, cap = 2 * (len + strlen(a) + 64));
		strcpy(args + len, a);
		len += strlen(a);
		free(a);
	}
	snprintf(args + len, cap - len, " 'w:%lld'", (long long)p->workspace_bytes);
	char vlen[32];
	const ParamInfo *vd = target_param(t, "vlen_default");
	snprintf(vlen, sizeof vlen, "%s", s->o->vlen ? s->o->vlen : vd && vd->n ? "" : "");
	if (!s->o->vlen && vd && vd->n)
		snprintf(vlen, sizeof vlen, "%d", (int)vd->values[0]);
	const char *keys[] = {"prog", "vlen", "npusim", "target", "stats"},
		   *vals[] = {prog, vlen, npusim_path(), t->name, stats_path};
	/* {params}: the --param overrides, for the simulator */
	char *tmpl = xstrdup(run->str), *at = strstr(tmpl, "{params}");
	if (at) {
		size_t tcap = strlen(tmpl) + 1;
		for (int i = 0; i < s->o->nparam_settings; i++)
			tcap += 4 * strlen(s->o->param_settings[i]) + 16;
		char *tt = xmalloc(tcap);
		size_t tl = (size_t)(at - tmpl);
		memcpy(tt, tmpl, tl);
		tt[tl] = 0;
		for (int i = 0; i < s->o->nparam_settings && t == s->o->param_target; i++) {
			/* shell-quoted: ' becomes '\'' */
			tl += (size_t)sprintf(tt + tl, " --param '");
			for (const char *q = s->o->param_settings[i]; *q; q++)
				tl += (size_t)(*q == '\'' ? sprintf(tt + tl, "'\\''") : sprintf(tt + tl, "%c", *q));
			tl += (size_t)sprintf(tt + tl, "'");
		}
		strcpy(tt + tl, at + strlen("{params}"));
		free(tmpl);
		tmpl = tt;
	}
	char *cmd = fill_command(tmpl, keys, vals, 5);
	free(tmpl);
	full = xasprintf("%s%s", cmd, args);
	free(cmd);
	free(args);
	/* the simulator checks its buffers against the same limits */
	char lim[32];
	snprintf(lim, sizeof lim, "%" PRIu64, limits()->max_tensor_bytes);
	setenv("GDCC_MAX_TENSOR_BYTES", lim, 1);
	snprintf(lim, sizeof lim, "%" PRIu64, limits()->max_workspace_bytes);
	setenv("GDCC_MAX_WORKSPACE_BYTES", lim, 1);
out:
	free(asm_path);
	free(prog);
	free(weights);
	free(harness_path);
	return full;
}

/* What link_program leaves in dir, removed. */
static void remove_program(const char *dir, const char *stem)
{
	static const char *const ext[] = {".s", ".weights.bin", "", ".link.log"};
	for (int i = 0; i < 4; i++) {
		char *f = xasprintf("%s/%s%s", dir, stem, ext[i]);
		remove(f);
		free(f);
	}
}

/* Compile g for t, link it with the run harness, run it on inputs; fills
 * outputs.  Returns 0 or an exit status, after reporting into d. */
static int run_on_target(Session *s, const Graph *g, const Target *t, Tensor *const *inputs, Tensor **outputs, Diag *d)
{
	char cannot[256];
	if (!target_runs_here(t, cannot, sizeof cannot)) {
		diag_error(d, loc_at(NULL, 0, 0),
			   "run -t %s: this machine cannot run %s's code (%s); compile it with -S or -c and run it where "
			   "it can (gdcc --list-targets)",
			   t->name, t->name, cannot);
		return EXIT_RUN;
	}
	Program *p = compile_program(s, g, t, NULL, NULL, d);
	if (!p)
		return s->status;
	/* in $TMPDIR (default /tmp), so that whoever runs us (gdcc reduce, a
	 * test) can keep what a killed run leaves behind in its own folder */
	char *dir = make_temp_dir("run", d);
	if (!dir) {
		program_free(p);
		return EXIT_RUN;
	}
	int rc = 0;
	const ParamInfo *run = target_param(t, "run");
	char *stats_path = xasprintf("%s/stats.json", dir);
	char *times_path = xasprintf("%s/profile.txt", dir);
	char **files = xcalloc((size_t)(g->ninputs + g->noutputs), sizeof *files);
	for (int i = 0; i < g->ninputs + g->noutputs; i++) {
		bool in = i < g->ninputs;
		files[i] = xasprintf("%s/%s%d.bin", dir, in ? "in" : "out", in ? i : i - g->ninputs);
		if (in && !write_raw(files[i], inputs[i])) {
			diag_error(d, loc_at(files[i], 0, 0), "cannot write: %s", strerror(errno));
			rc = EXIT_RUN;
		}
	}
	char *full = rc ? NULL : link_program(s, g, t, p, dir, "model", files, s->o->profile ? times_path : NULL, stats_path, d);
	if (!full)
		rc = EXIT_RUN;
	int st = rc ? 0 : system(full);
	if (st != 0 && WIFEXITED(st) && WEXITSTATUS(st) == 5 && s->o->profile) {
		diag_error(d, loc_at(NULL, 0, 0), "%s: --profile: the outputs differ between repeated runs of the "
			   "compiled model (%s): it reads bytes it has not written first, so it cannot be timed by repetition",
			   t->name, full);
		rc = EXIT_RUN;
	} else if (st != 0) {
		diag_error(d, loc_at(NULL, 0, 0), "%s: the compiled model failed (%s, status %d)", t->name, full,
			   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		rc = EXIT_RUN;
	}
	free(full);
	if (rc == 0 && run && run->str && strstr(run->str, "{stats}")) {
		size_t len;
		char *text = read_file(stats_path, &len);
		if (text) {
			s->sim_stats = xrealloc(s->sim_stats, (size_t)(s->nsim_stats + 1) * sizeof *s->sim_stats);
			s->sim_stats[s->nsim_stats++] = text;
		}
	}
	for (int i = 0; rc == 0 && i < g->noutputs; i++) {
		const Value *v = g->outputs[i];
		outputs[i] = tensor_new(v->type.dtype, &v->type.shape);
		if (!read_raw(files[g->ninputs + i], outputs[i])) {
			diag_error(d, loc_at(files[g->ninputs + i], 0, 0), "cannot read the output");
			rc = EXIT_RUN;
		}
	}
	if (rc == 0 && s->o->profile) {
		const char *vl = "";
		char vbuf[32];
		if (t->scalable) {
			const ParamInfo *vd = target_param(t, "vlen_default");
			snprintf(vbuf, sizeof vbuf, "%s", s->o->vlen ? s->o->vlen : "");
			if (!s->o->vlen && vd && vd->n)
				snprintf(vbuf, sizeof vbuf, "%d", (int)vd->values[0]);
			vl = vbuf;
		}
		rc = profile_report(s, p, times_path, vl, d);
	}
	for (int i = 0; i < g->ninputs + g->noutputs; i++) {
		if (files[i])
			remove(files[i]);
		free(files[i]);
	}
	remove(times_path);
	free(times_path);
	free(files);
	remove_program(dir, "model");
	remove(stats_path);
	free(stats_path);
	rmdir(dir);
	free(dir);
	program_free(p);
	return rc;
}

static Tensor *tensor_dup(const Tensor *t)
{
	Tensor *c = tensor_new(t->type.dtype, &t->type.shape);
	if (tensor_bytes(t))
		memcpy(c->data, t->data, tensor_bytes(t));
	return c;
}

/* Run a model on a target: directly, or placed on the target and its host
 * (each segment compiled for where it runs; the device's through its
 * simulator), passing the values between them. */
int run_model(Session *s, const Graph *g, const Target *t, Tensor *const *inputs, Tensor **outputs, Diag *d)
{
	const Target *host = place_host(t, s->o->host_name, d);
	if (diag_has_errors(d))
		return EXIT_INPUT;
	if (!host)
		return run_on_target(s, g, t, inputs, outputs, d);
	if (s->o->profile) {
		diag_error(d, loc_at(NULL, 0, 0), "--profile is not supported for a model placed on %s and its host %s: "
			   "profile it on one target (without --host)", t->name, host->name);
		return EXIT_USAGE;
	}
	Placement *pl = place_graph(g, t, host, d);
	if (!pl)
		return EXIT_INPUT;
	Tensor **env = xcalloc((size_t)g->nvalues, sizeof *env);
	bool *owned = xcalloc((size_t)g->nvalues, sizeof *owned);
	for (int i = 0; i < g->ninputs; i++)
		env[g->inputs[i]->id] = inputs[i];
	s->collect = s->o->report_path != NULL;
	int rc = 0;
	for (int k = 0; k < pl->nsegs && rc == 0; k++) {
		const Segment *sg = &pl->segs[k];
		Tensor **sin = xcalloc((size_t)sg->g->ninputs + 1, sizeof *sin);
		Tensor **sout = xcalloc((size_t)sg->g->noutputs + 1, sizeof *sout);
		for (int i = 0; i < sg->g->ninputs; i++)
			sin[i] = env[graph_find_value(g, sg->g->inputs[i]->name)->id];
		rc = run_on_target(s, sg->g, sg->t, sin, sout, d);
		for (int i = 0; i < sg->g->noutputs; i++) {
			int id = graph_find_value(g, sg->g->outputs[i]->name)->id;
			if (rc == 0) {
				env[id] = sout[i];
				owned[id] = true;
			} else {
				tensor_free(sout[i]);
			}
		}
		free(sin);
		free(sout);
	}
	for (int i = 0; i < g->noutputs && rc == 0; i++) {
		const Value *v = g->outputs[i];
		if (env[v->id]) {
			outputs[i] = tensor_dup(env[v->id]);
		} else {
			/* a constant output */
			outputs[i] = tensor_new(v->type.dtype, &v->type.shape);
			if (!v->def || !materialize_constant(v->def, outputs[i], d))
				rc = EXIT_RUN;
		}
	}
	if (rc == 0 && s->o->report_path && write_placed_report_file(s, pl, content_hash(g, t, s->o)) != 0)
		rc = EXIT_RUN;
	s->collect = false;
	for (int i = 0; i < g->nvalues; i++)
		if (owned[i])
			tensor_free(env[i]);
	free(env);
	free(owned);
	placement_free(pl);
	return rc;
}

/* ---- a sharded model on several devices, over MPI ---------------------------------
 * Each device's program (shard_device_program): its compute segments
 * compiled for t and linked in DIR/rR, its steps in DIR/rR.plan, its parts
 * of the inputs in DIR/rR/vID.bin; `mpirun -np N gdcc-spmd DIR` runs them
 * (runtime/spmd.c); the outputs' parts are joined. */
static const char *spmd_runner(void)
{
	const char *env = getenv("GDCC_SPMD");
	if (env && *env)
		return env;
	static char path[4096];
	snprintf(path, sizeof path, "%s/gdcc-spmd", runtime_dir());
	return path;
}

/* The file of value x of segment sp: the device's value file when it is
 * one of the segment's inputs or outputs, else the segment's own. */
/* (a pipeline's micro-batches: each file name carries "_m@MB@", which the
 * plan's copy for micro-batch j replaces with "_mJ") */
static const char *mb_suffix(const Graph *g) { return g->pipelined && g->micro_batches > 1 ? "_m@MB@" : ""; }

static char *spmd_file(const Graph *g, const SpmdStep *sp, const Value *x, const char *rdir, int k)
{
	const Graph *sg = sp->g;
	for (int i = 0; i < sg->ninputs; i++)
		if (sg->inputs[i] == x)
			return xasprintf("%s/v%d%s.bin", rdir, sp->in_ids[i], mb_suffix(g));
	for (int i = 0; i < sg->noutputs; i++)
		if (sg->outputs[i] == x)
			return xasprintf("%s/v%d%s.bin", rdir, sp->out_ids[i], mb_suffix(g));
	return xasprintf("%s/s%d_%d%s.bin", rdir, k, x->id, mb_suffix(g));
}

/* One graph (a segment, or a placed part of one) compiled for t, linked in
 * rdir as stem, its run line in the plan. */
static int spmd_program_line(Session *s, const Graph *g, const SpmdStep *sp, const Graph *pg, const Target *t,
			     const char *rdir, int k, const char *stem, FILE *pf, Diag *d)
{
	char **files = xcalloc((size_t)(pg->ninputs + pg->noutputs) + 1, sizeof *files);
	for (int i = 0; i < pg->ninputs + pg->noutputs; i++) {
		const Value *pv = i < pg->ninputs ? pg->inputs[i] : pg->outputs[i - pg->ninputs];
		files[i] = spmd_file(g, sp, graph_find_value(sp->g, pv->name), rdir, k);
	}
	char *stats = xasprintf("%s/%s.stats.json", rdir, stem), *cmd = NULL;
	Program *p = compile_program(s, pg, t, NULL, NULL, d);
	if (p)
		cmd = link_program(s, pg, t, p, rdir, stem, files, NULL, stats, d);
	program_free(p);
	int rc = 0;
	if (!cmd) {
		rc = EXIT_RUN;
	} else if (strchr(cmd, '\n')) {
		diag_error(d, loc_at(NULL, 0, 0), "internal error: a segment's command has a newline");
		rc = EXIT_RUN;
	} else {
		fprintf(pf, "run %s\n", cmd);
	}
	free(cmd);
	free(stats);
	for (int i = 0; i < pg->ninputs + pg->noutputs; i++)
		free(files[i]);
	free(files);
	return rc;
}

/* A device's compute segment k: the graph passes, then compiled for t, or
 * placed on t and its host (each part compiled for where it runs). */
static int spmd_segment(Session *s, const Graph *g, SpmdStep *sp, const Target *t, const char *rdir, int k, FILE *pf,
			Diag *d)
{
	if (!compile_graph(s, sp->g, d))
		return EXIT_INPUT;
	const Target *host = place_host(t, s->o->host_name, d);
	if (diag_has_errors(d))
		return EXIT_INPUT;
	char stem[32];
	if (!host) {
		snprintf(stem, sizeof stem, "s%d", k);
		return spmd_program_line(s, g, sp, sp->g, t, rdir, k, stem, pf, d);
	}
	Placement *pl = place_graph(sp->g, t, host, d);
	if (!pl)
		return EXIT_INPUT;
	int rc = 0;
	for (int j = 0; j < pl->nsegs && rc == 0; j++) {
		snprintf(stem, sizeof stem, "s%d_%d", k, j);
		rc = spmd_program_line(s, g, sp, pl->segs[j].g, pl->segs[j].t, rdir, k, stem, pf, d);
	}
	placement_free(pl);
	return rc;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int run_spmd(Session *s, const Graph *g, const Target *t, Tensor *const *inputs, Tensor **outputs, SpmdTimes *tm,
	     Diag *d)
{
	memset(tm, 0, sizeof *tm);
	const Mesh *m = &g->mesh;
	int64_t D = shard_mesh_devices(m);
	char cannot[256];
	if (!target_runs_here(t, cannot, sizeof cannot)) {
		diag_error(d, loc_at(NULL, 0, 0), "run -t %s: this machine cannot run %s's code (%s)", t->name, t->name, cannot);
		return EXIT_RUN;
	}
	struct stat st;
	if (stat(spmd_runner(), &st) != 0 || !(st.st_mode & S_IXUSR)) {
		diag_error(d, loc_at(NULL, 0, 0), "run -t %s on %" PRId64 " devices: no SPMD runtime at %s (gdcc was built "
			   "without MPI: install openmpi-bin and libopenmpi-dev, and reconfigure)", t->name, D, spmd_runner());
		return EXIT_RUN;
	}
	char *dir = make_temp_dir("spmd", d);
	if (!dir)
		return EXIT_RUN;
	int rc = 0;
	for (int64_t r = 0; r < D && rc == 0; r++) {
		SpmdProgram prog;
		if (!shard_device_program(g, r, &prog, d)) {
			rc = EXIT_INPUT;
			break;
		}
		char *rdir = xasprintf("%s/r%" PRId64, dir, r), *plan = xasprintf("%s/r%" PRId64 ".plan", dir, r);
		FILE *pf = mkdir(rdir, 0700) == 0 ? fopen(plan, "w") : NULL;
		if (!pf) {
			diag_error(d, loc_at(plan, 0, 0), "cannot create: %s", strerror(errno));
			rc = EXIT_RUN;
		} else {
			fprintf(pf, "gdcc-spmd 1\nmesh %d", m->naxes);
			for (int a = 0; a < m->naxes; a++)
				fprintf(pf, " %" PRId64, m->size[a]);
			fputc('\n', pf);
		}
		int mb = g->pipelined && g->micro_batches > 1 ? g->micro_batches : 1;
		Mesh mbm = {.naxes = 1, .size = {mb}};
		Sharding mbs = {.set = true, .dim = {0, -1, -1, -1, -1, -1, -1, -1}};
		for (int i = 0; rc == 0 && i < g->ninputs; i++)
			for (int j = 0; rc == 0 && j < mb; j++) {
				Tensor *whole = shard_part(m, &g->inputs[i]->shard, inputs[i], r);
				Tensor *part = mb > 1 ? shard_part(&mbm, &mbs, whole, j) : whole;
				char *f = mb > 1 ? xasprintf("%s/v%d_m%d.bin", rdir, g->inputs[i]->id, j)
						 : xasprintf("%s/v%d.bin", rdir, g->inputs[i]->id);
				if (!write_raw(f, part)) {
					diag_error(d, loc_at(f, 0, 0), "cannot write: %s", strerror(errno));
					rc = EXIT_RUN;
				}
				free(f);
				if (part != whole)
					tensor_free(part);
				tensor_free(whole);
			}
		char *stepbuf = NULL;
		size_t steplen = 0;
		FILE *steps = open_memstream(&stepbuf, &steplen);
		for (int k = 0; rc == 0 && k < prog.nsteps; k++) {
			SpmdStep *sp = &prog.steps[k];
			if (sp->coll && sp->coll->op == OP_SEND_RECV) {
				const Node *n = sp->coll;
				const Value *v = n->in[0];
				Shape ds = shard_device_shape(g, v);
				uint64_t bytes = (uint64_t)shape_numel(&ds) * dtype_size(v->type.dtype);
				if (attr_i(n, "from") == r)
					fprintf(steps, "send %d%s %" PRId64 " %" PRIu64 "\n", v->id, mb_suffix(g), attr_i(n, "to"), bytes);
				else
					fprintf(steps, "recv %d%s %" PRId64 " %" PRIu64 "\n", n->out[0]->id, mb_suffix(g), attr_i(n, "from"),
						bytes);
				continue;
			}
			if (sp->coll) {
				const Node *n = sp->coll;
				const Value *v = n->in[0];
				Shape l = shard_local_shape(m, &v->shard, &v->type.shape);
				bool a2a = n->op == OP_ALL_TO_ALL;
				fprintf(steps, "coll %s %d %d %s %d %lld %lld %d", op_info[n->op].name, v->id, n->out[0]->id,
					dtype_name(v->type.dtype), shard_mesh_axis(m, attr_s(n, "mesh_axis")),
					(long long)(a2a ? attr_i(n, "split_axis") : attr_present(n, "axis") ? attr_i(n, "axis") : 0),
					(long long)(a2a ? attr_i(n, "concat_axis") : 0), l.rank);
				for (int q = 0; q < l.rank; q++)
					fprintf(steps, " %" PRId64, l.dim[q]);
				fputc('\n', steps);
				continue;
			}
			rc = spmd_segment(s, g, sp, t, rdir, k, steps, d);
		}
		fclose(steps);
		/* the steps once per micro-batch (GPipe: stage k on micro-batch j
		 * while stage k + 1 is on j - 1) */
		for (int j = 0; pf && rc == 0 && j < mb; j++) {
			char tag[16];
			snprintf(tag, sizeof tag, "%d", j);
			for (const char *q = stepbuf; *q;) {
				const char *at = strstr(q, "@MB@");
				size_t n = at ? (size_t)(at - q) : strlen(q);
				fwrite(q, 1, n, pf);
				if (!at)
					break;
				fputs(tag, pf);
				q = at + 4;
			}
		}
		free(stepbuf);
		if (pf && fclose(pf) != 0 && rc == 0) {
			diag_error(d, loc_at(plan, 0, 0), "cannot write: %s", strerror(errno));
			rc = EXIT_RUN;
		}
		free(rdir);
		free(plan);
		spmd_program_free(&prog);
	}
	if (rc == 0) {
		char *qdir = shell_quote(dir), *qrun = shell_quote(spmd_runner());
		char *cmd = xasprintf("%s %s--oversubscribe -np %" PRId64 " %s %s 2>%s/mpirun.log", GDCC_MPIRUN,
				      getuid() == 0 ? "--allow-run-as-root " : "", D, qrun, qdir, qdir);
		double t0 = wall_now();
		int rs = system(cmd);
		tm->wall_s = wall_now() - t0;
		if (rs != 0) {
			char *log = xasprintf("%s/mpirun.log", dir);
			size_t len;
			char *text = read_file(log, &len);
			diag_error(d, loc_at(NULL, 0, 0), "%s on %" PRId64 " devices: the run failed (%s, status %d):\n%s", t->name, D,
				   cmd, WIFEXITED(rs) ? WEXITSTATUS(rs) : -1, text ? text : "");
			free(text);
			free(log);
			rc = EXIT_RUN;
		}
		free(cmd);
		free(qdir);
		free(qrun);
	}
	for (int64_t r = 0; r < D && rc == 0; r++) {
		char *f = xasprintf("%s/r%" PRId64 ".times", dir, r);
		FILE *tf = fopen(f, "r");
		double a, b;
		if (tf && fscanf(tf, "run %lf coll %lf", &a, &b) == 2) {
			tm->run_s = a > tm->run_s ? a : tm->run_s;
			tm->coll_s = b > tm->coll_s ? b : tm->coll_s;
		}
		if (tf)
			fclose(tf);
		free(f);
	}
	for (int i = 0; rc == 0 && i < g->noutputs; i++) {
		const Value *v = g->outputs[i];
		Tensor **parts = xcalloc((size_t)D, sizeof *parts);
		int64_t only = g->pipelined ? (v->def && v->def->stage > 0 ? v->def->stage : 0) : -1;
		int mb = g->pipelined && g->micro_batches > 1 ? g->micro_batches : 1;
		if (only >= 0 && mb > 1) { /* its micro-batches, joined along axis 0 */
			Shape ls = shard_device_shape(g, v);
			Tensor **mparts = xcalloc((size_t)mb, sizeof *mparts);
			Mesh mbm = {.naxes = 1, .size = {mb}};
			Value jv = *v;
			jv.shard = (Sharding){.set = true, .dim = {0, -1, -1, -1, -1, -1, -1, -1}};
			for (int j = 0; j < mb && rc == 0; j++) {
				mparts[j] = tensor_new(v->type.dtype, &ls);
				char *f = xasprintf("%s/r%" PRId64 "/v%d_m%d.bin", dir, only, v->id, j);
				if (!read_raw(f, mparts[j])) {
					diag_error(d, loc_at(f, 0, 0), "cannot read the output");
					rc = EXIT_RUN;
				}
				free(f);
			}
			if (rc == 0 && !(outputs[i] = shard_join(&mbm, &jv, mparts, d)))
				rc = EXIT_RUN;
			for (int j = 0; j < mb; j++)
				tensor_free(mparts[j]);
			free(mparts);
			free(parts);
			continue;
		}
		for (int64_t r = 0; r < D && rc == 0; r++) {
			if (only >= 0 && r != only)
				continue; /* a pipeline's output: on the stage that computed it */
			Shape l = shard_local_shape(m, &v->shard, &v->type.shape);
			parts[r] = tensor_new(v->type.dtype, &l);
			char *f = xasprintf("%s/r%" PRId64 "/v%d.bin", dir, r, v->id);
			if (!read_raw(f, parts[r])) {
				diag_error(d, loc_at(f, 0, 0), "cannot read the output");
				rc = EXIT_RUN;
			}
			free(f);
		}
		if (rc == 0 && only >= 0) {
			outputs[i] = parts[only];
			parts[only] = NULL;
		} else if (rc == 0 && !(outputs[i] = shard_join(m, v, parts, d))) {
			rc = EXIT_RUN;
		}
		for (int64_t r = 0; r < D; r++)
			tensor_free(parts[r]);
		free(parts);
	}
	if (!getenv("GDCC_KEEP_SPMD")) {
		char *q = shell_quote(dir), *cmd = xasprintf("rm -rf %s", q);
		if (system(cmd) != 0)
			diag_report(d, DIAG_WARNING, loc_at(NULL, 0, 0), "could not remove %s", dir);
		free(cmd);
		free(q);
	}
	free(dir);
	return rc;
}

/* ---- gdcc -c ------------------------------------------------------------------
 * The program's assembly and weights file written into a temporary folder,
 * assembled by the .md's `param assemble` ({in}: the .s, {out}: the
 * object, staged beside -o), the folder removed. */
int compile_to_object(Session *s, const Graph *g, const Target *t, const char *out, Diag *d)
{
	const ParamInfo *as = target_param(t, "assemble");
	if (!as || !as->str) {
		diag_error(d, loc_at(NULL, 0, 0), "-c: target '%s' has no object files (its .md has no param assemble)", t->name);
		return EXIT_USAGE;
	}
	Program *p = compile_program(s, g, t, s->o->entry, NULL, d);
	if (!p)
		return s->status;
	char *dir = make_temp_dir("obj", d);
	if (!dir) {
		program_free(p);
		return EXIT_RUN;
	}
	int rc = 0;
	char *asm_path = xasprintf("%s/model.s", dir), *weights = xasprintf("%s/model.weights.bin", dir);
	char *log = xasprintf("%s/assemble.log", dir);
	const char *obj = NULL;
	if (!write_program_files(p, asm_path, weights, d))
		rc = EXIT_RUN;
	else if (!(obj = stage_file(out, &rc)))
		; /* (the message is out) */
	else {
		const char *keys[] = {"out", "in"}, *vals[] = {obj, asm_path};
		char *cmd = fill_command(as->str, keys, vals, 2);
		char *full = xasprintf("%s 2>'%s'", cmd, log);
		int st = system(full);
		if (st != 0) {
			size_t len;
			char *text = read_file(log, &len);
			diag_error(d, loc_at(NULL, 0, 0), "%s: assembling failed (%s, status %d)%s%s", t->name, cmd,
				   WIFEXITED(st) ? WEXITSTATUS(st) : -1, text && *text ? ":\n" : "", text ? text : "");
			free(text);
			rc = EXIT_RUN;
		}
		free(full);
		free(cmd);
	}
	if (rc == 0 && s->o->header_path) {
		HeaderJob job = {p, s->o->header_path};
		rc = write_output(s->o->header_path, write_header_job, &job);
	}
	remove(asm_path);
	remove(weights);
	remove(log);
	rmdir(dir);
	free(asm_path);
	free(weights);
	free(log);
	free(dir);
	program_free(p);
	return rc;
}
