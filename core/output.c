/* Messages and output files of the driver (see driver.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "util.h"

void errorf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	char *line = xasprintf("gdcc: error: %s\n", m);
	fput_escaped(stderr, line, strlen(line));
	free(line);
	free(m);
}

double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void fputs_writer(FILE *out, const void *text) { fputs(text ? text : "", out); }

/* ---- output files ----------------------------------------------------------------
 * Every file a command writes (-o, the .s.json manifest, .host.s, --report,
 * run's .npy outputs, import's weights) is staged, and all of them are
 * committed together when the command succeeds (main: outputs_commit), or
 * all removed when it fails (outputs_abort): a command writes all of its
 * outputs or none.  By what the path names:
 *  - nothing, or a regular file: a temporary file beside it (PATH.tmpPID),
 *    renamed over it at commit (a file it replaces keeps its mode);
 *  - a symlink: its target (followed to the end, also when that does not
 *    exist yet) is written as above, and the link stays a link;
 *  - an existing file that is not a regular one (a device such as /dev/null
 *    or /dev/full, a FIFO, a terminal): staged in $TMPDIR, then written into
 *    it at commit, opened for writing but neither created nor truncated
 *    (what gcc -o /dev/null does);
 *  - standard output (no -o, or -o -): staged in memory, written at commit;
 *  - a directory: an error.
 * Write errors (ENOSPC, EIO) name the path and fail the command (status 3).
 * The temporaries are also removed at exit and on SIGINT, SIGTERM, SIGHUP,
 * SIGPIPE and SIGABRT. */
typedef enum { OUT_RENAME, OUT_COPY, OUT_STDOUT, OUT_REMOVE, OUT_RMDIR } OutKind;

typedef struct {
	OutKind kind;
	char *path;      /* as given, for messages */
	char *final;     /* the file written (symlinks resolved, its folder canonical) */
	char *tmp;       /* the staged file (OUT_RENAME, OUT_COPY) */
	char *mem;       /* OUT_STDOUT: the text */
	size_t memlen;
	bool keep_mode;  /* OUT_RENAME over an existing file: give the new one its mode */
	mode_t mode;
	bool done;       /* committed */
} Output;

static Output **staged;
static int nstaged;
static volatile sig_atomic_t staged_count; /* what the signal handler may walk */

static void remove_temps(void)
{
	for (int i = 0; i < staged_count; i++) {
		Output *o = staged[i];
		if (o->tmp && !o->done && o->kind != OUT_RMDIR)
			unlink(o->tmp);
	}
	for (int i = 0; i < staged_count; i++)
		if (staged[i]->kind == OUT_RMDIR)
			rmdir(staged[i]->final);
}

static void on_fatal_signal(int sig)
{
	remove_temps();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void staged_push(Output *o)
{
	static bool handlers;
	if (!handlers) {
		handlers = true;
		static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGABRT};
		for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = on_fatal_signal;
			sigemptyset(&sa.sa_mask);
			struct sigaction old;
			if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
				continue; /* (nohup) */
			sigaction(sigs[i], &sa, NULL);
		}
		atexit(remove_temps);
	}
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	staged = xrealloc(staged, (size_t)(nstaged + 1) * sizeof *staged);
	staged[nstaged++] = o;
	staged_count = nstaged;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void output_free(Output *o)
{
	free(o->path);
	free(o->final);
	free(o->tmp);
	free(o->mem);
	free(o);
}

static void staged_clear(void)
{
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	for (int i = 0; i < nstaged; i++)
		output_free(staged[i]);
	free(staged);
	staged = NULL;
	nstaged = 0;
	staged_count = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Remove everything staged, and what a commit already put in place. */
void outputs_abort(void)
{
	for (int i = 0; i < nstaged; i++) {
		Output *o = staged[i];
		if ((o->kind == OUT_RENAME || o->kind == OUT_COPY) && !o->done)
			unlink(o->tmp);
		else if (o->kind == OUT_RENAME && o->done)
			unlink(o->final);
	}
	for (int i = 0; i < nstaged; i++)
		if (staged[i]->kind == OUT_RMDIR)
			rmdir(staged[i]->final);
	staged_clear();
}

/* The folder part and the last component of a path ("." for none). */
void split_path(const char *path, char **dir, char **base)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		*dir = xstrdup(".");
		*base = xstrdup(path);
	} else {
		*dir = slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
		*base = xstrdup(slash + 1);
	}
}

/* The file writing `path` writes: symlinks followed (a dangling one to the
 * name it points at), the folder made canonical.  NULL with errno set when
 * that cannot be found. */
static char *resolve_output(const char *path)
{
	char *cur = xstrdup(path);
	int hops = 0;
	for (;;) {
		struct stat st;
		if (lstat(cur, &st) != 0) {
			if (errno != ENOENT) {
				free(cur);
				return NULL;
			}
			break;
		}
		if (!S_ISLNK(st.st_mode))
			break;
		if (++hops > 40) {
			free(cur);
			errno = ELOOP;
			return NULL;
		}
		size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 256;
		char *target;
		ssize_t n;
		for (;;) {
			target = xmalloc(cap);
			n = readlink(cur, target, cap);
			if (n < 0 || (size_t)n < cap)
				break;
			free(target);
			cap *= 2;
		}
		if (n < 0) {
			int e = errno;
			free(target);
			free(cur);
			errno = e;
			return NULL;
		}
		target[n] = 0;
		char *next;
		if (target[0] == '/') {
			next = target;
		} else {
			char *dir, *base;
			split_path(cur, &dir, &base);
			next = xasprintf("%s/%s", dir, target);
			free(dir);
			free(base);
			free(target);
		}
		free(cur);
		cur = next;
	}
	char *dir, *base;
	split_path(cur, &dir, &base);
	free(cur);
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		free(dir);
		free(base);
		errno = EISDIR;
		return NULL;
	}
	char *canon = realpath(dir, NULL);
	int e = errno;
	free(dir);
	if (!canon) {
		free(base);
		errno = e;
		return NULL;
	}
	char *r = xasprintf("%s%s%s", canon, canon[strlen(canon) - 1] == '/' ? "" : "/", base);
	free(canon);
	free(base);
	return r;
}

char *output_resolve(const char *path) { return resolve_output(path); }

/* Stage an output.  stdout_dash: "-" (and NULL) mean standard output.
 * adopt: an already written file to commit as `path` (import's weights,
 * written into a staging folder beside it).  NULL and *rc after the message. */
static Output *stage(const char *path, bool stdout_dash, const char *adopt, int *rc)
{
	Output *o = xcalloc(1, sizeof *o);
	if (!path || (stdout_dash && strcmp(path, "-") == 0)) {
		o->kind = OUT_STDOUT;
		o->path = xstrdup("standard output");
		staged_push(o);
		return o;
	}
	o->path = xstrdup(path);
	o->final = resolve_output(path);
	struct stat st;
	if (!o->final) {
		errorf("cannot create '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (lstat(o->final, &st) != 0) {
		if (errno != ENOENT) {
			errorf("cannot create '%s': %s", path, strerror(errno));
			goto fail;
		}
		o->kind = OUT_RENAME;
	} else if (S_ISDIR(st.st_mode)) {
		errorf("cannot write '%s': %s", path, strerror(EISDIR));
		goto fail;
	} else if (S_ISREG(st.st_mode)) {
		o->kind = OUT_RENAME;
		o->keep_mode = true;
		o->mode = st.st_mode & 07777;
	} else {
		o->kind = OUT_COPY;
	}
	for (int i = 0; i < nstaged; i++) {
		const Output *p = staged[i];
		if (p->kind == OUT_RENAME && o->kind == OUT_RENAME && strcmp(p->final, o->final) == 0) {
			if (strcmp(p->path, path) == 0)
				errorf("'%s' is named for two outputs", path);
			else
				errorf("'%s' and '%s' name the same file, for two outputs", p->path, path);
			output_free(o);
			*rc = EXIT_USAGE;
			return NULL;
		}
	}
	if (adopt) {
		o->tmp = xstrdup(adopt);
		staged_push(o);
		return o;
	}
	if (o->kind == OUT_COPY) {
		const char *td = getenv("TMPDIR");
		o->tmp = xasprintf("%s/gdcc-out-XXXXXX", td && *td ? td : "/tmp");
		int fd = mkstemp(o->tmp);
		if (fd < 0) {
			errorf("cannot create a temporary file for '%s' (%s): %s", path, o->tmp, strerror(errno));
			goto fail;
		}
		close(fd);
	} else {
		for (int k = 0;; k++) {
			o->tmp = k ? xasprintf("%s.tmp%ld.%d", o->final, (long)getpid(), k)
				   : xasprintf("%s.tmp%ld", o->final, (long)getpid());
			int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
			if (fd >= 0) {
				close(fd);
				break;
			}
			if (errno != EEXIST || k == 100) {
				errorf("cannot create '%s': %s", path, strerror(errno));
				goto fail;
			}
			free(o->tmp);
		}
	}
	staged_push(o);
	return o;
fail:
	free(o->tmp);
	o->tmp = NULL;
	output_free(o);
	*rc = EXIT_RUN;
	return NULL;
}

/* Stage `path` for a writer that takes a file name (npy_write): the name
 * to write, or NULL and *rc after the message. */
bool stage_adopt(const char *path, const char *adopt, int *rc) { return stage(path, false, adopt, rc) != NULL; }

const char *stage_file(const char *path, int *rc)
{
	Output *o = stage(path, false, NULL, rc);
	return o ? o->tmp : NULL;
}

/* At commit, remove `path` if it is a regular file (a stale output). */
void stage_remove(const char *path)
{
	Output *o = xcalloc(1, sizeof *o);
	o->kind = OUT_REMOVE;
	o->path = xstrdup(path);
	o->final = xstrdup(path);
	staged_push(o);
}

/* A staging folder, removed at the end (after its files are committed). */
void stage_rmdir(const char *dir)
{
	Output *o = xcalloc(1, sizeof *o);
	o->kind = OUT_RMDIR;
	o->path = xstrdup(dir);
	o->final = xstrdup(dir);
	staged_push(o);
}

/* Write through fn into the staged file for `path` (no path, or "-":
 * standard output).  0, or an exit status after the message. */
int write_output(const char *path, Writer fn, const void *ctx)
{
	int rc = 0;
	Output *o = stage(path, true, NULL, &rc);
	if (!o)
		return rc;
	FILE *f = o->kind == OUT_STDOUT ? open_memstream(&o->mem, &o->memlen) : fopen(o->tmp, "wb");
	if (!f) {
		errorf("cannot create '%s': %s", o->kind == OUT_STDOUT ? "standard output" : path, strerror(errno));
		return EXIT_RUN;
	}
	fn(f, ctx);
	int e = 0;
	if (ferror(f))
		e = errno ? errno : EIO;
	if (fclose(f) != 0 && !e)
		e = errno;
	if (e) {
		errorf("cannot write '%s': %s", o->path, strerror(e));
		return EXIT_RUN;
	}
	return 0;
}

/* Does -o name a file that can have others beside it (the .s.json
 * manifest, the .host.s)?  Not standard output, nor a device or FIFO
 * (gdcc -S -o /dev/null writes nothing else). */
bool names_a_file(const char *out)
{
	struct stat st;
	if (!out || strcmp(out, "-") == 0)
		return false;
	return stat(out, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode);
}

/* Copy a staged file into an existing non-regular file. */
static bool copy_into(const char *from, const char *to, int *err)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		*err = errno;
		return false;
	}
	int out = open(to, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (out < 0) {
		*err = errno;
		close(in);
		return false;
	}
	char buf[1 << 16];
	bool ok = true;
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0) {
				*err = errno;
				ok = false;
			}
			break;
		}
		for (ssize_t w = 0; ok && w < n;) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				*err = k < 0 ? errno : EIO;
				ok = false;
			} else {
				w += k;
			}
		}
		if (!ok)
			break;
	}
	close(in);
	if (close(out) != 0 && ok) {
		*err = errno;
		ok = false;
	}
	return ok;
}

/* Put every staged output in place: standard output first, then the
 * devices and FIFOs, then the renames.  0, or EXIT_RUN after the message
 * with nothing left behind. */
int outputs_commit(void)
{
	int rc = 0;
	for (int i = 0; rc == 0 && i < nstaged; i++) {
		Output *o = staged[i];
		if (o->kind != OUT_STDOUT)
			continue;
		if ((o->memlen && fwrite(o->mem, 1, o->memlen, stdout) != o->memlen) || fflush(stdout) != 0) {
			errorf("cannot write to standard output: %s", strerror(errno));
			rc = EXIT_RUN;
		}
		o->done = true;
	}
	for (int i = 0; rc == 0 && i < nstaged; i++) {
		Output *o = staged[i];
		int e = 0;
		if (o->kind != OUT_COPY)
			continue;
		if (!copy_into(o->tmp, o->final, &e)) {
			errorf("cannot write '%s': %s", o->path, strerror(e));
			rc = EXIT_RUN;
		}
		unlink(o->tmp);
		o->done = true;
	}
	for (int i = 0; rc == 0 && i < nstaged; i++) {
		Output *o = staged[i];
		if (o->kind != OUT_RENAME)
			continue;
		if (o->keep_mode)
			chmod(o->tmp, o->mode);
		if (rename(o->tmp, o->final) != 0) {
			errorf("cannot write '%s': %s", o->path, strerror(errno));
			rc = EXIT_RUN;
		} else {
			o->done = true;
		}
	}
	if (rc) {
		outputs_abort();
		return rc;
	}
	for (int i = 0; i < nstaged; i++) {
		Output *o = staged[i];
		struct stat st;
		if (o->kind == OUT_REMOVE && lstat(o->final, &st) == 0 && S_ISREG(st.st_mode))
			unlink(o->final);
	}
	for (int i = 0; i < nstaged; i++)
		if (staged[i]->kind == OUT_RMDIR)
			rmdir(staged[i]->final);
	staged_clear();
	return 0;
}
