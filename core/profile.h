/* gdcc run --profile (docs/profile.md): the per-kernel times the run
 * harness measured in a program compiled with each kernel a function of
 * its own (codegen_lower's split), turned into a table (stdout) and a JSON
 * report, schema gdcc.profile v1. */
#ifndef GDCC_PROFILE_H
#define GDCC_PROFILE_H

#include "compile.h"

/* Can t be profiled?  NULL, or why not (its .md has no `param profile`). */
char *profile_unsupported(const Target *t);
/* The times file the harness wrote (times_path) for p, run at VLEN `vlen`
 * ("" for fixed-width targets): the table printed to stdout, and the JSON
 * written to s->o->profile_path when given (staged, as every output).  0,
 * or an exit status after reporting into d. */
int profile_report(Session *s, const Program *p, const char *times_path, const char *vlen, Diag *d);

#endif
