/* Whether this machine runs a target's programs, and how (core/hostcpu.c). */
#ifndef GDCC_HOSTCPU_H
#define GDCC_HOSTCPU_H

#include <stdbool.h>
#include <stddef.h>

#include "target.h"

/* "native", "qemu" or "simulator" (the .md's runs_on; native by default) */
const char *target_runs_on(const Target *t);
/* true when it can run here; else false with the reason in why */
bool target_runs_here(const Target *t, char *why, size_t n);
/* the native target with the widest vectors that runs here, or NULL */
const Target *target_native(void);

#endif
