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
#include <unistd.h>

#include "driver.h"
#include "gdcc_limits.h"
#include "interp.h"
#include "ops.h"
#include "profile.h"
#include "hostcpu.h"
#include "run.h"
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

/* Compile g for t, link it with the run harness, run it on inputs; fills
 * outputs.  Returns 0 or an exit status, after reporting into d. */
static int run_on_target(Session *s, const Graph *g, const Target *t, Tensor *const *inputs, Tensor **outputs, Diag *d)
{
	/* (before compiling: a program this machine cannot run is not built) */
	char cannot[200];
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
	const ParamInfo *link = target_param(t, "link"), *run = target_param(t, "run"), *harness = target_param(t, "harness");
	if (!link || !link->str || !run || !run->str || ((!harness || !harness->str) && strstr(link->str, "{harness}"))) {
		diag_error(d, loc_at(NULL, 0, 0), "%s: the .md does not say how to link and run a program (params link, run, harness)",
			   t->name);
		program_free(p);
		return EXIT_RUN;
	}
	/* in $TMPDIR (default /tmp), so that whoever runs us (gdcc reduce, a
	 * test) can keep what a killed run leaves behind in its own folder */
	char *dir = make_temp_dir("run", d);
	if (!dir) {
		program_free(p);
		return EXIT_RUN;
	}
	int rc = 0;
	char *asm_path = xasprintf("%s/model.s", dir), *prog = xasprintf("%s/model", dir);
	char *weights = xasprintf("%s/model.weights.bin", dir);
	char *harness_path = xasprintf("%s/%s", runtime_dir(), harness && harness->str ? harness->str : "");
	char *stats_path = xasprintf("%s/stats.json", dir);
	char *times_path = xasprintf("%s/profile.txt", dir);
	char **files = xcalloc((size_t)(g->ninputs + g->noutputs), sizeof *files);
	if (!write_program_files(p, asm_path, weights, d)) {
		rc = EXIT_RUN;
		goto out;
	}
	{
		const char *keys[] = {"out", "in", "harness"}, *vals[] = {prog, asm_path, harness_path};
		char *cmd = fill_command(link->str, keys, vals, 3);
		char *full = xasprintf("%s 2>'%s/link.log'", cmd, dir);
		int st = system(full);
		if (st != 0) {
			char *log = xasprintf("%s/link.log", dir);
			size_t len;
			char *text = read_file(log, &len);
			diag_error(d, loc_at(NULL, 0, 0), "%s: assembling and linking failed (%s):\n%s", t->name, cmd,
				   text ? text : "");
			free(text);
			free(log);
			rc = EXIT_RUN;
		}
		free(full);
		free(cmd);
		if (rc)
			goto out;
	}
	{
		size_t cap = 1024, len = 0;
		char *args = xmalloc(cap);
		args[0] = 0;
		for (int i = 0; i < g->ninputs + g->noutputs; i++) {
			bool in = i < g->ninputs;
			files[i] = xasprintf("%s/%s%d.bin", dir, in ? "in" : "out", in ? i : i - g->ninputs);
			const Value *v = in ? g->inputs[i] : g->outputs[i - g->ninputs];
			if (in && !write_raw(files[i], inputs[i])) {
				diag_error(d, loc_at(files[i], 0, 0), "cannot write: %s", strerror(errno));
				rc = EXIT_RUN;
			}
			char *a = xasprintf(" '%c:%s:%lld'", in ? 'i' : 'o', files[i],
					    (long long)(shape_numel(&v->type.shape) * (int64_t)dtype_size(v->type.dtype)));
			if (len + strlen(a) + 64 > cap)
				args = xrealloc(args, cap = 2 * (len + strlen(a) + 64));
			strcpy(args + len, a);
			len += strlen(a);
			free(a);
		}
		if (s->o->profile) {
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
		char *full = xasprintf("%s%s", cmd, args);
		/* the simulator checks its buffers against the same limits */
		char lim[32];
		snprintf(lim, sizeof lim, "%" PRIu64, limits()->max_tensor_bytes);
		setenv("GDCC_MAX_TENSOR_BYTES", lim, 1);
		snprintf(lim, sizeof lim, "%" PRIu64, limits()->max_workspace_bytes);
		setenv("GDCC_MAX_WORKSPACE_BYTES", lim, 1);
		int st = rc ? 0 : system(full);
		if (st != 0 && WIFEXITED(st) && WEXITSTATUS(st) == 5 && s->o->profile) {
			diag_error(d, loc_at(NULL, 0, 0), "%s: --profile: the outputs differ between repeated runs of the "
				   "compiled model (%s): it reads bytes it has not written first, so it cannot be timed by repetition",
				   t->name, cmd);
			rc = EXIT_RUN;
		} else if (st != 0) {
			diag_error(d, loc_at(NULL, 0, 0), "%s: the compiled model failed (%s, status %d)", t->name, cmd,
				   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			rc = EXIT_RUN;
		}
		free(cmd);
		free(full);
		free(args);
	}
	if (rc == 0 && strstr(run->str, "{stats}")) {
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
out:
	for (int i = 0; i < g->ninputs + g->noutputs; i++) {
		if (files[i])
			remove(files[i]);
		free(files[i]);
	}
	remove(times_path);
	free(times_path);
	free(files);
	remove(asm_path);
	remove(weights);
	free(weights);
	remove(prog);
	char *log = xasprintf("%s/link.log", dir);
	remove(log);
	free(log);
	remove(stats_path);
	free(stats_path);
	rmdir(dir);
	free(dir);
	free(asm_path);
	free(prog);
	free(harness_path);
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
