/* What the driver's files share (core/main.c: the command line;
 * core/compile.c: compiling; core/run.c: linking and running;
 * core/output.c: messages and output files). */
#ifndef GDCC_DRIVER_H
#define GDCC_DRIVER_H

#include <stdbool.h>
#include <stdio.h>

/* Exit statuses: 0 success, 1 invalid input (model, .npy), 2 bad command
 * line, 3 failure while running (a kernel error, an unwritable file),
 * 4 results that differ from the reference (run --check). */
enum { EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_RUN = 3, EXIT_MISMATCH = 4 };

/* "gdcc: error: MESSAGE" on stderr, escaped (util.h fput_escaped). */
void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Seconds on the monotonic clock. */
double now_seconds(void);

/* ---- output files (core/output.c) ----------------------------------------
 * Every file a command writes is staged, and all of them are committed
 * together when the command succeeds (outputs_commit), or all removed when
 * it fails (outputs_abort): a command writes all of its outputs or none. */
typedef void (*Writer)(FILE *out, const void *ctx);
/* Write through fn into the staged file for `path` (no path, or "-":
 * standard output).  0, or an exit status after the message. */
int write_output(const char *path, Writer fn, const void *ctx);
/* Stage `path` for a writer that takes a file name (npy_write): the name
 * to write, or NULL and *rc after the message. */
const char *stage_file(const char *path, int *rc);
/* Stage `path` to become the already written file `adopt` at commit
 * (renamed); false and *rc after the message. */
bool stage_adopt(const char *path, const char *adopt, int *rc);
/* The folder part and the last component of a path ("." for none). */
void split_path(const char *path, char **dir, char **base);
/* At commit, remove `path` if it is a regular file (a stale output). */
void stage_remove(const char *path);
/* A staging folder, removed at the end (after its files are committed). */
void stage_rmdir(const char *dir);
/* Does -o name a file that can have others beside it (the .s.json
 * manifest, the .host.s)?  Not standard output, nor a device or FIFO. */
bool names_a_file(const char *out);
/* The file writing `path` writes, as an absolute path (symlinks followed,
 * its folder canonical; malloc'd), or NULL with errno set. */
char *output_resolve(const char *path);
/* Put every staged output in place; 0, or EXIT_RUN after the message
 * with nothing left behind. */
int outputs_commit(void);
/* Remove everything staged, and what a commit already put in place. */
void outputs_abort(void);
/* A Writer of a NUL-terminated text (ctx). */
void fputs_writer(FILE *out, const void *text);

#endif
