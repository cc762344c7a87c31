/* gdcc reduce: delta debugging over a model.ir graph.
 *
 * The model is held as a small editable form (Model: values by index,
 * nodes with operand and result indices).  Every candidate is an edited
 * copy of the current model, built into a Graph, printed as model.ir
 * (print_graph), parsed back and verified; only a candidate that verifies,
 * is smaller by the measure (reduce_model.c) and still meets the condition
 * (the command run on it in a fresh temporary folder) becomes the current
 * model.
 *
 * This file holds the command line, running the command and judging its
 * outcome against the condition, trying candidates, and writing the
 * result.  The editable Model, its conversion to and from Graph and the
 * measure are in reduce_model.c; the edits and the reduction passes in
 * reduce_pass.c; what the three share in reduce_int.h. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "frontend.h"
#include "onnx.h"
#include "ops.h"
#include "reduce.h"
#include "reduce_int.h"
#include "target.h"
#include "util.h"
#include "verify.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_RUN = 3, EXIT_MISMATCH = 4 };

/* ---- running the command ---------------------------------------------------- */
/* (Condition and the Reducer: reduce_int.h) */
typedef struct {
	bool timed_out, signaled, sanitizer, text_found;
	bool interrupted;   /* by SIGINT, SIGTERM or SIGHUP */
	bool failed;        /* could not run it at all (reported) */
	int status; /* the exit status, or 128 + the signal */
	int sig;
} Outcome;

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void rm_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		if (d) {
			struct dirent *e;
			while ((e = readdir(d))) {
				if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
					continue;
				char *sub = xasprintf("%s/%s", path, e->d_name);
				rm_tree(sub);
				free(sub);
			}
			closedir(d);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

static bool mem_contains(const char *hay, size_t n, const char *needle, size_t m)
{
	if (m == 0)
		return true;
	for (size_t i = 0; i + m <= n; i++)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0)
			return true;
	return false;
}

static const char *const sanitizer_marks[] = {
	"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "ERROR: MemorySanitizer",
	"WARNING: ThreadSanitizer", "ERROR: UndefinedBehaviorSanitizer", ": runtime error: ",
};
enum { NMARKS = sizeof sanitizer_marks / sizeof sanitizer_marks[0] };

/* Look for the sanitizer marks and --error's text in the command's stderr,
 * reading it in pieces (it may be of any size). */
static void scan_stderr(const Reducer *r, Outcome *o)
{
	FILE *f = fopen(r->errfile, "rb");
	if (!f)
		return;
	size_t keep = 0;
	for (int i = 0; i < NMARKS; i++)
		keep = strlen(sanitizer_marks[i]) > keep ? strlen(sanitizer_marks[i]) : keep;
	if (r->cond == COND_ERROR && strlen(r->cond_arg) > keep)
		keep = strlen(r->cond_arg);
	size_t cap = 65536 + keep, have = 0;
	char *buf = xmalloc(cap);
	if (r->cond == COND_ERROR && !*r->cond_arg)
		o->text_found = true;
	for (;;) {
		size_t got = fread(buf + have, 1, cap - have, f);
		if (got == 0)
			break;
		have += got;
		for (int i = 0; i < NMARKS; i++)
			o->sanitizer |= mem_contains(buf, have, sanitizer_marks[i], strlen(sanitizer_marks[i]));
		if (r->cond == COND_ERROR)
			o->text_found |= mem_contains(buf, have, r->cond_arg, strlen(r->cond_arg));
		/* keep the tail: a mark may straddle two pieces */
		size_t tail = have < keep ? have : keep;
		memmove(buf, buf + have - tail, tail);
		have = tail;
	}
	free(buf);
	fclose(f);
}

/* The command's argv with {} replaced by path. */
static char **command_for(const Reducer *r, const char *path)
{
	char **argv = xcalloc((size_t)r->ncmd + 1, sizeof *argv);
	for (int i = 0; i < r->ncmd; i++) {
		const char *s = r->cmd[i];
		size_t cap = strlen(s) + 1, len = 0;
		for (const char *p = s; (p = strstr(p, "{}")); p += 2)
			cap += strlen(path);
		char *a = xmalloc(cap);
		while (*s) {
			if (s[0] == '{' && s[1] == '}') {
				memcpy(a + len, path, strlen(path));
				len += strlen(path);
				s += 2;
			} else {
				a[len++] = *s++;
			}
		}
		a[len] = 0;
		argv[i] = a;
	}
	return argv;
}

static void free_argv(char **argv)
{
	for (int i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* Run the command on `path` in a fresh folder, with the time limit. */
static Outcome run_test(Reducer *r, const char *path)
{
	Outcome o = {0};
	r->tests++;
	rm_tree(r->work);
	if (mkdir(r->work, 0700) != 0) {
		fprintf(stderr, "gdcc: error: cannot create '%s': %s\n", r->work, strerror(errno));
		o.failed = r->failed = r->stop = true;
		return o;
	}
	char **argv = command_for(r, path);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "gdcc: error: cannot start '%s': %s\n", argv[0], strerror(errno));
		free_argv(argv);
		o.failed = r->failed = r->stop = true;
		return o;
	}
	if (pid == 0) {
		setpgid(0, 0);
		int in = open("/dev/null", O_RDONLY), out = open("/dev/null", O_WRONLY);
		int err = open(r->errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (in < 0 || out < 0 || err < 0 || chdir(r->work) != 0)
			_exit(127);
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		close(in);
		close(out);
		close(err);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(argv[0], argv);
		dprintf(2, "gdcc reduce: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	double deadline = now() + r->timeout;
	long nap = 100000; /* ns, doubling up to 10 ms */
	int st = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			st = 0;
			break;
		}
		if (interrupted || now() >= deadline) {
			o.interrupted = interrupted != 0;
			o.timed_out = !interrupted;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		struct timespec ts = {0, nap};
		nanosleep(&ts, NULL);
		nap = nap * 2 > 10000000 ? 10000000 : nap * 2;
	}
	kill(-pid, SIGKILL); /* whatever the command left running */
	free_argv(argv);
	if (!o.timed_out && !o.interrupted) {
		if (WIFSIGNALED(st)) {
			o.signaled = true;
			o.sig = WTERMSIG(st);
			o.status = 128 + o.sig;
		} else {
			o.status = WEXITSTATUS(st);
		}
	}
	scan_stderr(r, &o);
	rm_tree(r->work);
	if (o.interrupted)
		r->stop = true;
	return o;
}

static bool meets(const Reducer *r, const Outcome *o)
{
	if (o->interrupted || o->failed)
		return false;
	switch (r->cond) {
	case COND_MISMATCH: return !o->timed_out && !o->signaled && o->status == EXIT_MISMATCH;
	case COND_CRASH: return !o->timed_out && (o->signaled || o->status >= 128 || o->sanitizer);
	case COND_HANG: return o->timed_out;
	case COND_ERROR: return !o->timed_out && o->text_found;
	case COND_EXIT: return !o->timed_out && o->status == r->exit_code;
	case COND_NONE: break;
	}
	return false;
}

static char *describe(const Reducer *r, const Outcome *o)
{
	if (o->timed_out)
		return xasprintf("did not finish within %g s", r->timeout);
	char *s = o->signaled ? xasprintf("was killed by signal %d (%s)", o->sig, strsignal(o->sig))
			      : xasprintf("exited with status %d", o->status);
	if (o->sanitizer) {
		char *t = xasprintf("%s, with a sanitizer report", s);
		free(s);
		s = t;
	}
	if (r->cond == COND_ERROR && !o->text_found) {
		char *t = xasprintf("%s, and its stderr does not contain \"%s\"", s, r->cond_arg);
		free(s);
		s = t;
	}
	return s;
}

/* ---- shell words for the reproduce line ------------------------------------ */
static void append(char **s, size_t *len, size_t *cap, const char *t)
{
	size_t n = strlen(t);
	if (*len + n + 1 > *cap) {
		*cap = 2 * (*len + n + 1);
		*s = xrealloc(*s, *cap);
	}
	memcpy(*s + *len, t, n + 1);
	*len += n;
}

static void append_word(char **s, size_t *len, size_t *cap, const char *w)
{
	bool plain = *w != 0;
	for (const char *p = w; *p; p++)
		plain &= (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			 strchr("_-./=:,+@%", *p) != NULL;
	if (*len)
		append(s, len, cap, " ");
	if (plain) {
		append(s, len, cap, w);
		return;
	}
	append(s, len, cap, "'");
	for (const char *p = w; *p; p++) {
		char c[2] = {*p, 0};
		append(s, len, cap, *p == '\'' ? "'\\''" : *p == '\n' ? " " : c);
	}
	append(s, len, cap, "'");
}

static char *command_line(const Reducer *r, const char *path, bool display)
{
	char **argv = command_for(r, path);
	size_t len = 0, cap = 64;
	char *s = xmalloc(cap);
	s[0] = 0;
	for (int i = 0; argv[i]; i++)
		append_word(&s, &len, &cap, i == 0 && display ? r->prog : argv[i]);
	if (display && r->quiet_stdout)
		append(&s, &len, &cap, " >/dev/null");
	free_argv(argv);
	return s;
}

/* ---- trying candidates ----------------------------------------------------- */
static bool seen_before(Reducer *r, uint64_t h)
{
	for (int i = 0; i < r->nseen; i++)
		if (r->seen[i] == h)
			return true;
	if (r->nseen == r->capseen) {
		r->capseen = r->capseen ? 2 * r->capseen : 256;
		r->seen = xrealloc(r->seen, (size_t)r->capseen * sizeof *r->seen);
	}
	r->seen[r->nseen++] = h;
	return false;
}

static char *header(const Reducer *r, const char *first)
{
	return xasprintf("# gdcc reduce: %s\n# reproduce: %s\n# expect: %s\n", first, r->reproduce, r->expect);
}

static bool write_text(const char *path, const char *a, const char *b)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	fputs(a, f);
	fputs(b, f);
	bool ok = !ferror(f);
	return (fclose(f) == 0) && ok;
}

static int count_compute(const Graph *g)
{
	int n = 0;
	for (int i = 0; i < g->nnodes; i++)
		n += g->nodes[i]->op != OP_CONSTANT;
	return n;
}

/* Try a candidate (taken and freed): print, parse, verify, measure, run.
 * True when it became the current model.  `force`: accept any verified
 * candidate that fails, smaller or not (the model as first printed). */
bool try_model(Reducer *r, Model *cand, const char *what, bool force)
{
	if (r->stop || interrupted) {
		r->stop = true;
		model_free(cand);
		return false;
	}
	if (r->max_time > 0 && now() - r->t0 > r->max_time) {
		if (r->verbose)
			fprintf(stderr, "gdcc reduce: --max-time of %g s reached: stopping\n", r->max_time);
		r->stop = true;
		model_free(cand);
		return false;
	}
	Graph *b = model_build(cand);
	model_free(cand);
	if (!b) {
		if (force)
			fprintf(stderr, "gdcc: error: %s: internal error: the model cannot be rebuilt for reducing\n", r->model_path);
		r->invalid++;
		return false;
	}
	size_t len;
	char *text = graph_text(b, &len);
	graph_free(b);
	Diag d;
	diag_init(&d);
	Graph *g = parse_model(r->cand_name, NULL, text, len, &d);
	free(text);
	bool ok = g && graph_verify(g, &d);
	if (!ok && force) {
		diag_print(&d, stderr);
		fprintf(stderr, "gdcc: error: %s printed back as model.ir does not verify (a printer or parser bug): cannot reduce\n",
			r->model_path);
	}
	diag_free(&d);
	if (!ok) {
		r->invalid++;
		graph_free(g);
		return false;
	}
	Measure m = measure_of(g);
	if (!force && !measure_less(&m, &r->cur_m)) {
		graph_free(g);
		return false;
	}
	char *body = graph_text(g, &len);
	/* as many header lines as the result will have, so that line numbers
	 * agree, but without its text, which a grep in the command could see */
	char *head = xstrdup("# gdcc reduce: a candidate\n#\n#\n");
	uint64_t h = XXH3_64bits_withSeed(body, len, 0);
	if (seen_before(r, h)) {
		free(body);
		free(head);
		graph_free(g);
		return false;
	}
	Outcome o = {0};
	char *path = xasprintf("%s/%s", r->cand_dir, r->cand_name);
	if (!write_text(path, head, body)) {
		fprintf(stderr, "gdcc: error: cannot write '%s': %s\n", path, strerror(errno));
		o.failed = r->failed = r->stop = true;
	} else {
		o = run_test(r, path);
	}
	remove(path);
	free(path);
	free(head);
	free(body);
	bool hit = meets(r, &o);
	const char *why = NULL;
	Model *next = hit ? model_from_graph(g, &why) : NULL;
	if (!next) {
		if (force && !o.interrupted && !o.failed) {
			char *desc = describe(r, &o);
			fprintf(stderr, "gdcc: error: %s fails as given, but not once printed back as model.ir: %s\n",
				r->model_path, why ? why : desc);
			free(desc);
		}
		graph_free(g);
		return false;
	}
	if (r->verbose && r->cur_graph)
		fprintf(stderr, "gdcc reduce: test %d: %s: %d -> %d nodes (%d -> %d computing), %d -> %d inputs, %d -> %d outputs\n",
			r->tests, what, r->cur_graph->nnodes, g->nnodes, count_compute(r->cur_graph), count_compute(g),
			r->cur_graph->ninputs, g->ninputs, r->cur_graph->noutputs, g->noutputs);
	else if (r->verbose)
		fprintf(stderr, "gdcc reduce: test %d: %s: %d nodes (%d computing), %d inputs, %d outputs\n", r->tests, what,
			g->nnodes, count_compute(g), g->ninputs, g->noutputs);
	model_free(r->cur);
	graph_free(r->cur_graph);
	r->cur = next;
	r->cur_graph = g;
	r->cur_m = m;
	return true;
}

/* ---- the result ------------------------------------------------------------ */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xstrdup(".");
	return xstrndup(path, (size_t)(slash - path + (slash == path)));
}

static bool same_dir(const char *a, const char *b)
{
	char *da = dir_of(a), *db = dir_of(b);
	struct stat sa, sb;
	bool same = stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	free(da);
	free(db);
	return same;
}

/* Write text to path whole or not at all: through a temporary file beside
 * it, renamed over it; a path that is not a regular file (a FIFO, a
 * device) is written in place. */
static bool write_result(const char *path, const char *a, const char *b)
{
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return write_text(path, a, b);
	char *tmp = xasprintf("%s.tmp%ld", path, (long)getpid());
	bool ok = write_text(tmp, a, b);
	int saved = errno;
	if (!ok || rename(tmp, path) != 0) {
		saved = ok ? errno : saved;
		remove(tmp);
		free(tmp);
		errno = saved;
		return false;
	}
	free(tmp);
	return true;
}

/* ---- the command line ------------------------------------------------------- */
static int usage_error(const char *fmt, const char *arg)
{
	fputs("gdcc: error: reduce: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\ngdcc: try 'gdcc reduce --help'\n", stderr);
	return EXIT_USAGE;
}

static void reduce_usage(FILE *out)
{
	fputs("usage: gdcc reduce MODEL.ir CONDITION [OPTIONS] [-- COMMAND ARG... {} ARG...]\n"
	      "\n"
	      "Shrink a failing model to the smallest model.ir that still fails: remove\n"
	      "nodes, outputs and inputs, shrink shapes, drop attributes, simplify constants.\n"
	      "\n"
	      "Conditions (exactly one):\n"
	      "      --mismatch=TARGET  'gdcc run MODEL -t TARGET --check' reports a mismatch\n"
	      "                       (exit status 4)\n"
	      "      --crash          the command is killed by a signal, exits with status\n"
	      "                       128 or more, or prints a sanitizer report\n"
	      "      --hang           the command does not finish within --timeout\n"
	      "      --error=TEXT     the command's stderr contains TEXT\n"
	      "      --exit=N         the command exits with status N (a signal S counts as\n"
	      "                       128 + S)\n"
	      "\n"
	      "The command: what follows '--', with {} for the candidate's path; without\n"
	      "'--', gdcc itself: 'gdcc -S -t TARGET {}' (stdout discarded). Each test runs\n"
	      "in a fresh temporary folder, stdin from /dev/null.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output=FILE    write the result to FILE (default MODEL.reduced.ir)\n"
	      "  -t, --target=TARGET  the target of the default command\n"
	      "      --timeout=SECONDS  limit of each test (default 30); past it, a hang\n"
	      "      --max-time=SECONDS stop reducing after this long and write the best\n"
	      "                       model so far\n"
	      "      --vlen=N         --mismatch on a scalable-vector target: run at VLEN N\n"
	      "      --seed=N         --mismatch: the seed of the generated inputs (default 0)\n"
	      "  -v, --verbose        print each step that shrinks the model\n"
	      "  -h, --help           show this help and exit\n"
	      "\n"
	      "Exit status: 0 reduced, 1 invalid model or one that does not fail,\n"
	      "2 bad command line, 3 failure (temporary files, the output file).\n",
	      out);
}

static bool parse_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 1e7)
		return false;
	*out = v;
	return true;
}

static bool parse_uint(const char *s, long long max, long long *out)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-' || *s == '+')
		return false;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v < 0 || v > max)
		return false;
	*out = v;
	return true;
}

static char *self_exe(const char *argv0)
{
	char buf[PATH_MAX + 1];
	ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX);
	if (n <= 0)
		return xstrdup(argv0);
	buf[n] = 0;
	return xstrdup(buf);
}

static void cleanup(Reducer *r)
{
	if (r->work)
		rm_tree(r->work);
	if (r->base)
		rm_tree(r->base);
	free(r->base);
	free(r->work);
	free(r->errfile);
	free(r->cand_dir);
	free(r->cand_name);
	free(r->reproduce);
	free(r->expect);
	free(r->seen);
	model_free(r->cur);
	graph_free(r->cur_graph);
	for (int i = 0; i < r->nnpy; i++)
		free(r->npy_abs[i]), free(r->npy_orig[i]);
	free(r->npy_abs);
	free(r->npy_orig);
}

static char *expectation(const Reducer *r)
{
	switch (r->cond) {
	case COND_MISMATCH: return xasprintf("exit status 4: a mismatch against the reference on %s", r->cond_arg);
	case COND_CRASH: return xstrdup("a crash: killed by a signal, exit status 128 or more, or a sanitizer report");
	case COND_HANG: return xasprintf("a hang: no exit within %g s", r->timeout);
	case COND_ERROR: {
		size_t len = 0, cap = 64;
		char *s = xmalloc(cap);
		s[0] = 0;
		append(&s, &len, &cap, "stderr contains \"");
		for (const char *p = r->cond_arg; *p; p++) {
			char c[2] = {*p, 0};
			append(&s, &len, &cap, *p == '\n' ? "\\n" : *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : c);
		}
		append(&s, &len, &cap, "\"");
		return s;
	}
	case COND_EXIT: return xasprintf("exit status %d", r->exit_code);
	case COND_NONE: break;
	}
	return xstrdup("");
}

/* Print the first lines of the command's last stderr, for a message. */
static void show_stderr(const Reducer *r)
{
	FILE *f = fopen(r->errfile, "r");
	if (!f)
		return;
	char line[512];
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		if (n == 8) {
			fputs("  | ...\n", stderr);
			break;
		}
		size_t l = strlen(line);
		fprintf(stderr, "  | %s%s", line, l && line[l - 1] == '\n' ? "" : "\n");
		n++;
	}
	fclose(f);
}

/* What the command line gives, before it becomes the Reducer's. */
typedef struct {
	const char *target, *vlen, *seed, *model;
	char **cmd; /* after "--" */
	int ncmd, nconds;
	bool dashdash;
} Args;

/* -1 to go on, else the exit status (after the message). */
static int parse_args(Reducer *r, Args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"target", required_argument, NULL, 't'},
		{"mismatch", required_argument, NULL, 'M'},
		{"crash", no_argument, NULL, 'C'},
		{"hang", no_argument, NULL, 'H'},
		{"error", required_argument, NULL, 'E'},
		{"exit", required_argument, NULL, 'X'},
		{"timeout", required_argument, NULL, 'T'},
		{"max-time", required_argument, NULL, 'm'},
		{"vlen", required_argument, NULL, 'L'},
		{"seed", required_argument, NULL, 'S'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	opterr = 0;
	optind = 1;
	/* '+': stop at each operand, so that "--" can be told apart */
	while (optind < argc) {
		int prev = optind;
		int c = getopt_long(argc, argv, "+:o:t:vh", opts, NULL);
		if (c == -1) {
			if (optind > prev) { /* it took "--": the command follows */
				a->dashdash = true;
				a->cmd = argv + optind;
				a->ncmd = argc - optind;
				break;
			}
			if (a->model)
				return usage_error("more than one model given ('%s' too)", argv[optind]);
			a->model = argv[optind++];
			continue;
		}
		long long v;
		switch (c) {
		case 'o': r->out_path = optarg; break;
		case 't': a->target = optarg; break;
		case 'M': r->cond = COND_MISMATCH, r->cond_arg = optarg, a->nconds++; break;
		case 'C': r->cond = COND_CRASH, a->nconds++; break;
		case 'H': r->cond = COND_HANG, a->nconds++; break;
		case 'E': r->cond = COND_ERROR, r->cond_arg = optarg, a->nconds++; break;
		case 'X':
			if (!parse_uint(optarg, 255, &v))
				return usage_error("--exit needs an exit status from 0 to 255, got '%s'", optarg);
			r->cond = COND_EXIT, r->exit_code = (int)v, a->nconds++;
			break;
		case 'T':
			if (!parse_seconds(optarg, &r->timeout))
				return usage_error("--timeout needs a positive number of seconds, got '%s'", optarg);
			break;
		case 'm':
			if (!parse_seconds(optarg, &r->max_time))
				return usage_error("--max-time needs a positive number of seconds, got '%s'", optarg);
			break;
		case 'L':
			if (!parse_uint(optarg, 65536, &v) || v < 32 || (v & (v - 1)))
				return usage_error("--vlen needs a power of two number of bits, got '%s'", optarg);
			a->vlen = optarg;
			break;
		case 'S':
			if (!parse_uint(optarg, LLONG_MAX, &v))
				return usage_error("--seed needs a non-negative integer, got '%s'", optarg);
			a->seed = optarg;
			break;
		case 'v': r->verbose = true; break;
		case 'h': reduce_usage(stdout); return 0;
		case ':': return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	return -1;
}

/* The checks that need all of the command line: -1 or the exit status. */
static int check_args(Reducer *r, const Args *a)
{
	if (!a->model)
		return usage_error("no model given%s", "");
	if (a->nconds == 0)
		return usage_error("no condition given: --mismatch=TARGET, --crash, --hang, --error=TEXT or --exit=N%s", "");
	if (a->nconds > 1)
		return usage_error("more than one condition given: choose one of --mismatch, --crash, --hang, --error, --exit%s", "");
	if (a->dashdash && a->ncmd == 0)
		return usage_error("no command after '--'%s", "");
	if (r->cond == COND_MISMATCH && a->dashdash)
		return usage_error("--mismatch runs 'gdcc run -t TARGET --check' itself: give no command after '--'%s", "");
	if (r->cond == COND_MISMATCH && a->target && strcmp(a->target, r->cond_arg) != 0)
		return usage_error("-t %s and --mismatch name different targets", a->target);
	if ((a->vlen || a->seed) && r->cond != COND_MISMATCH)
		return usage_error("--%s applies to --mismatch", a->vlen ? "vlen" : "seed");
	if (r->cond != COND_MISMATCH && !a->dashdash && !a->target)
		return usage_error("give the command to test after '--' (with {} for the model), or -t TARGET for 'gdcc -S -t TARGET {}'%s", "");
	if (a->dashdash && a->target)
		return usage_error("-t is the target of the default command: with a command after '--', put -t %s in it", a->target);
	const char *tname = r->cond == COND_MISMATCH ? r->cond_arg : a->target;
	if (tname && !target_lookup(tname)) {
		fprintf(stderr, "gdcc: error: reduce: unknown target '%s' (known:", tname);
		for (int i = 0; i < gdcc_ntargets; i++)
			fprintf(stderr, " %s", gdcc_targets[i]->name);
		fprintf(stderr, ")\n");
		return EXIT_USAGE;
	}
	bool slot = false;
	for (int i = 0; i < a->ncmd; i++)
		slot |= strstr(a->cmd[i], "{}") != NULL;
	if (a->dashdash && !slot)
		return usage_error("the command after '--' has no {} for the model's path%s", "");
	if (onnx_is_model(a->model))
		return usage_error("'%s' is an ONNX model: reduce works on model.ir (convert it with 'gdcc import -o M.ir' first)",
				   a->model);
	if (strcmp(r->out_path, "-") == 0 || !*r->out_path)
		return usage_error("-o needs a file name (the reproduce command names it)%s", "");
	struct stat sm, so;
	if (stat(a->model, &sm) == 0 && stat(r->out_path, &so) == 0 && sm.st_dev == so.st_dev && sm.st_ino == so.st_ino)
		return usage_error("-o %s is the model itself", r->out_path);
	/* fail now, not after the whole reduction */
	char *out_dir = dir_of(r->out_path);
	int ok = access(out_dir, W_OK);
	free(out_dir);
	if (ok != 0) {
		fprintf(stderr, "gdcc: error: cannot write '%s': %s\n", r->out_path, strerror(errno));
		return EXIT_RUN;
	}
	return -1;
}

/* Load the model; the first Model (NULL after the message). */
static Model *load(Reducer *r, Measure *m0, int *before)
{
	Diag d;
	diag_init(&d);
	Graph *g = load_model(r->model_path, &d);
	if (g && !graph_verify(g, &d)) {
		graph_free(g);
		g = NULL;
	}
	diag_print(&d, stderr);
	diag_free(&d);
	if (!g) {
		fprintf(stderr, "gdcc: error: %s: reduce needs a model that verifies\n", r->model_path);
		return NULL;
	}
	const char *why = NULL;
	Model *first = model_from_graph(g, &why);
	if (!first) {
		fprintf(stderr, "gdcc: error: %s: cannot reduce: %s\n", r->model_path, why);
		graph_free(g);
		return NULL;
	}
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->op == OP_CONSTANT && g->nodes[i]->init.kind == INIT_NPY) {
			r->npy_abs = xrealloc(r->npy_abs, (size_t)(r->nnpy + 1) * sizeof *r->npy_abs);
			r->npy_orig = xrealloc(r->npy_orig, (size_t)(r->nnpy + 1) * sizeof *r->npy_orig);
			r->npy_abs[r->nnpy] = xstrdup(first->nodes[i].init.path);
			r->npy_orig[r->nnpy++] = xstrdup(g->nodes[i]->init.path);
		}
	*m0 = measure_of(g);
	before[0] = g->nnodes, before[1] = count_compute(g), before[2] = g->ninputs, before[3] = g->noutputs;
	graph_free(g);
	return first;
}

static bool make_dirs(Reducer *r)
{
	const char *tmpdir = getenv("TMPDIR");
	r->base = xasprintf("%s/gdcc-reduce-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(r->base)) {
		fprintf(stderr, "gdcc: error: cannot create a temporary folder '%s': %s\n", r->base, strerror(errno));
		free(r->base);
		r->base = NULL;
		return false;
	}
	r->work = xasprintf("%s/w", r->base);
	r->errfile = xasprintf("%s/stderr", r->base);
	r->cand_dir = xasprintf("%s/c", r->base);
	if (mkdir(r->cand_dir, 0700) != 0) {
		fprintf(stderr, "gdcc: error: cannot create '%s': %s\n", r->cand_dir, strerror(errno));
		return false;
	}
	return true;
}

/* Write the result, check it once more, print the summary. */
static int finish(Reducer *r, const int *before)
{
	/* npy paths as the model wrote them when the result sits in the
	 * model's folder, else absolute */
	Graph *fg = r->cur_graph;
	if (same_dir(r->model_path, r->out_path))
		for (int i = 0; i < fg->nnodes; i++) {
			ConstInit *c = &fg->nodes[i]->init;
			if (fg->nodes[i]->op != OP_CONSTANT || c->kind != INIT_NPY)
				continue;
			for (int k = 0; k < r->nnpy; k++)
				if (strcmp(r->npy_abs[k], c->path) == 0) {
					free(c->path);
					c->path = xstrdup(r->npy_orig[k]);
					break;
				}
		}
	char *first_line = xasprintf("reduced from %s: %d -> %d nodes (%d -> %d computing), %d tests, %.1f s",
				     r->model_path, before[0], fg->nnodes, before[1], count_compute(fg), r->tests,
				     now() - r->t0);
	char *head = header(r, first_line);
	char *body = graph_text(fg, NULL);
	bool ok = write_result(r->out_path, head, body);
	if (!ok)
		fprintf(stderr, "gdcc: error: cannot write '%s': %s\n", r->out_path, strerror(errno));
	free(first_line);
	free(head);
	free(body);
	if (!ok)
		return EXIT_RUN;
	/* the file as written reproduces */
	struct stat st;
	char *abs_out = realpath(r->out_path, NULL);
	if (abs_out && stat(abs_out, &st) == 0 && S_ISREG(st.st_mode)) {
		Outcome f = run_test(r, abs_out);
		if (!meets(r, &f) && !f.interrupted) {
			char *desc = describe(r, &f);
			fprintf(stderr, "gdcc: warning: %s as written does not fail: %s (a flaky condition?)\n", r->out_path, desc);
			free(desc);
		}
	}
	free(abs_out);
	fprintf(stderr,
		"gdcc reduce: %s: %d -> %d nodes (%d -> %d computing), %d -> %d inputs, %d -> %d outputs; "
		"%d tests (%d candidates rejected by the verifier) in %.1f s%s; wrote %s\n",
		r->model_path, before[0], fg->nnodes, before[1], count_compute(fg), before[2], fg->ninputs, before[3],
		fg->noutputs, r->tests, r->invalid, now() - r->t0, r->stop ? " (stopped at --max-time)" : "", r->out_path);
	return 0;
}

/* Check that the model fails, reduce it, write the result. */
static int reduce(Reducer *r)
{
	Measure m0;
	int before[4];
	Model *first = load(r, &m0, before);
	if (!first)
		return EXIT_INPUT;
	if (!make_dirs(r)) {
		model_free(first);
		return EXIT_RUN;
	}
	/* the model as given must fail, and so must its printed form */
	char *abs_model = realpath(r->model_path, NULL);
	Outcome o = run_test(r, abs_model ? abs_model : r->model_path);
	free(abs_model);
	if (!meets(r, &o)) {
		model_free(first);
		if (o.interrupted)
			return 128 + (int)interrupted;
		if (o.failed)
			return EXIT_RUN;
		char *desc = describe(r, &o);
		char *line = command_line(r, r->model_path, false);
		fprintf(stderr, "gdcc: error: %s does not fail: '%s' %s (wanted: %s)\n", r->model_path, line, desc, r->expect);
		show_stderr(r);
		free(desc);
		free(line);
		return EXIT_INPUT;
	}
	r->cur_m = m0;
	if (!try_model(r, first, "printed back", true))
		return interrupted ? 128 + (int)interrupted : r->failed ? EXIT_RUN : EXIT_INPUT;
	ddmin_outputs(r);
	ddmin_nodes(r);
	for (bool changed = true; changed && !r->stop;) {
		changed = pass_nodes(r);
		changed |= pass_outputs(r);
		changed |= pass_inputs(r);
		changed |= pass_data(r);
		changed |= pass_attrs(r);
		changed |= pass_shapes(r);
	}
	if (interrupted || r->failed) {
		fprintf(stderr, "gdcc reduce: %s: no output written\n", interrupted ? "interrupted" : "stopped");
		return interrupted ? 128 + (int)interrupted : EXIT_RUN;
	}
	return finish(r, before);
}

int cmd_reduce(const char *argv0, int argc, char **argv)
{
	Reducer r = {0};
	Args a = {0};
	r.timeout = 30;
	int rc = parse_args(&r, &a, argc, argv);
	if (rc >= 0)
		return rc;
	char *default_out = NULL;
	if (!r.out_path && a.model) {
		size_t ml = strlen(a.model);
		default_out = ml > 3 && strcmp(a.model + ml - 3, ".ir") == 0 ? xasprintf("%.*s.reduced.ir", (int)(ml - 3), a.model)
									     : xasprintf("%s.reduced.ir", a.model);
		r.out_path = default_out;
	}
	if ((rc = check_args(&r, &a)) >= 0) {
		free(default_out);
		return rc;
	}
	/* the command: gdcc run ... --check, gdcc -S ..., or the one after -- */
	char *exe = self_exe(argv0);
	char *own[12];
	int n = 0;
	if (r.cond == COND_MISMATCH) {
		own[n++] = exe, own[n++] = "run", own[n++] = "{}", own[n++] = "-t", own[n++] = (char *)r.cond_arg;
		own[n++] = "--check";
		if (a.vlen)
			own[n++] = "--vlen", own[n++] = (char *)a.vlen;
		if (a.seed)
			own[n++] = "--seed", own[n++] = (char *)a.seed;
		r.cmd = own, r.ncmd = n;
	} else if (!a.dashdash) {
		own[n++] = exe, own[n++] = "-S", own[n++] = "-t", own[n++] = (char *)a.target, own[n++] = "{}";
		r.cmd = own, r.ncmd = n;
		r.quiet_stdout = true;
	} else {
		r.cmd = a.cmd, r.ncmd = a.ncmd;
	}
	r.prog = a.dashdash ? a.cmd[0] : argv0;
	r.model_path = a.model;
	const char *slash = strrchr(r.out_path, '/');
	r.cand_name = xstrdup(slash ? slash + 1 : r.out_path);
	r.reproduce = command_line(&r, r.out_path, true);
	r.expect = expectation(&r);
	r.t0 = now();

	/* stop cleanly on these (the test's process group killed, the
	 * temporary files removed), unless they were ignored on entry */
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa = {0}, old[3];
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	for (int i = 0; i < 3; i++) {
		sigaction(sigs[i], NULL, &old[i]);
		if (old[i].sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
	rc = reduce(&r);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	cleanup(&r);
	free(exe);
	free(default_out);
	return rc;
}
