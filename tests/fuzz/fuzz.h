/* Helpers shared by the fuzz targets (tests/fuzz/README.md): small
 * resource limits so that every input runs fast, the input filter that
 * keeps runs deterministic, and the oracles every target checks besides
 * "no crash, no sanitizer report". */
#ifndef GDCC_FUZZ_H
#define GDCC_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "ir.h"

/* The libFuzzer entry points (standalone.c calls them too). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The limits the fuzz targets run under (core/gdcc_limits.h), far below the
 * defaults: one tensor 4 MiB, all the tensors of a model 16 MiB. */
#define FUZZ_MAX_TENSOR_BYTES ((uint64_t)4 << 20)
#define FUZZ_MAX_WORKSPACE_BYTES ((uint64_t)16 << 20)

/* Set the limits above; read GDCC_FUZZ_ORACLES (0 turns the extra oracles
 * off, to triage plain crashes first) and GDCC_FUZZ_VERBOSE (1: print each
 * input's diagnostics to stderr). */
void fuzz_init(void);
extern bool fuzz_oracles, fuzz_verbose;

/* Inputs that name files the run must not read (device files, /proc, /sys:
 * they block or change between runs): skipped. */
bool fuzz_skip_model(const uint8_t *data, size_t size);

/* A stream that discards what is written ("/dev/null", opened once). */
FILE *fuzz_null(void);

/* Print d's diagnostics (exercises the caret printer), then check the
 * error contract: a failed stage (ok false) reported at least one error,
 * and every error names a file.  `what` names the stage in the abort
 * message. */
void fuzz_check_diags(const Diag *d, bool ok, const char *what);

/* At the end of an input: its diagnostics to stderr when verbose. */
void fuzz_done(const Diag *d);

/* A verified graph: every value's size is known and within the limits
 * (abort otherwise: the limits must have been checked before).  Returns the
 * total bytes of its values. */
uint64_t fuzz_check_graph(const Graph *g);

/* Abort with a message (an oracle failed): libFuzzer saves the input. */
_Noreturn void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
