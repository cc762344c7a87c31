/* npusim: gdcc's cycle-approximate simulator of the npu-systolic family of
 * targets.  It assembles the text gdcc emits (GNU-as-like, dialect
 * "gdcc-npu"), executes it functionally in program order, and times it with
 * a model whose every figure comes from the Target: its params and the
 * latency / throughput / units of its rules (docs/npusim.md). */
#ifndef GDCC_NPUSIM_H
#define GDCC_NPUSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "target.h"

typedef struct NpuSim NpuSim;

/* A simulator for target t (params and rules from the generated tables).
 * NULL with a message in d on a bad configuration.  t must outlive it. */
NpuSim *npusim_new(const Target *t, Diag *d);
/* Assemble the program text; false after errors reported to d
 * (file:line:col).  A second call replaces the program. */
bool npusim_load(NpuSim *s, const char *text, const char *file, Diag *d);
/* Does the loaded program define a function `entry`? */
bool npusim_has_function(const NpuSim *s, const char *entry);
/* Call `entry` with a0 = the address of an args array of nbufs pointers to
 * copies of bufs[i] (sizes[i] bytes, 64-byte aligned, zero-filled if bufs[i]
 * is NULL); copy every buffer back into bufs[i] (when non-NULL) after.
 * Returns false on a simulation error (reported to d); *ret = a0 at ret. */
bool npusim_run(NpuSim *s, const char *entry, int nbufs, void *const *bufs, const size_t *sizes,
		int64_t *ret, Diag *d);
/* The statistics of the last run as a JSON object (schema "gdcc.npusim",
 * version 1; docs/npusim.md). */
void npusim_stats_json(const NpuSim *s, FILE *out);

/* Stop a run with an error after this many instructions (default 2e10). */
void npusim_set_max_instructions(NpuSim *s, uint64_t n);

/* Getters on the last run. */
double npusim_cycles(const NpuSim *s);
double npusim_macs(const NpuSim *s);
double npusim_utilization(const NpuSim *s);       /* macs / (cycles * rows * cols) */
double npusim_array_busy(const NpuSim *s);        /* cycles the array was occupied */
uint64_t npusim_instructions(const NpuSim *s);
/* A stall counter by its JSON name ("dependency", "structural",
 * "queue_full", "dma", "fence", "bank_conflict"); -1 for an unknown name. */
double npusim_stall(const NpuSim *s, const char *name);
/* A traffic counter by its JSON name ("dram_read_bytes", ...); -1 if unknown. */
double npusim_traffic(const NpuSim *s, const char *name);
/* The busy cycles of a unit by name (the targets' unit names); -1 if unknown. */
double npusim_unit_busy(const NpuSim *s, const char *unit);

void npusim_free(NpuSim *s);

/* A copy of t whose params are overridden by settings "NAME=VALUE" (n of
 * them): a string param takes the text (quotes optional), a numeric one a
 * number or a comma-separated list of as many numbers.  NULL with a message
 * in d for an unknown param or a bad value.  Free with target_copy_free. */
Target *target_with_params(const Target *t, int n, const char *const *settings, Diag *d);
void target_copy_free(Target *t);

#endif
