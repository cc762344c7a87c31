/* A Loop IR interpreter for the tests: runs a kernel on buffers in memory.
 *
 * bufs[i] points at buffer i's elements: float for esize 4, int64_t for
 * esize 8, uint8_t for esize 1.  Widths as lir.h says: inside a vector loop
 * a statement works on k->lanes lanes, inside a strip on min(k->lanes,
 * hi - var) (k->lanes standing for the vector length of a scalable
 * kernel), inside a masked loop on hi - lo; elsewhere on one.  f32
 * arithmetic per op in float.  False on anything it does not model (an
 * external variable or temporary, an op outside the f32/i32/i64/mask
 * vocabulary, more than 64 lanes) and on an access outside its buffer. */
#ifndef GDCC_LIR_EVAL_H
#define GDCC_LIR_EVAL_H

#include <stdbool.h>

#include "lir.h"

bool lir_eval(const LirKernel *k, void **bufs);

#endif
