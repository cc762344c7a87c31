/* The reference interpreter: runs a verified graph on the CPU with the
 * op table's plain-C kernels.  It is the oracle for every target. */
#ifndef GDCC_INTERP_H
#define GDCC_INTERP_H

#include "ir.h"

/* inputs[i] is graph input i (its type must match); on success outputs[i]
 * is a new tensor for graph output i (caller frees).  Errors go to d. */
bool interp_run(const Graph *g, Tensor *const *inputs, Tensor **outputs, Diag *d);

/* Fill t with values drawn from the seed: floats uniform in [-1, 1),
 * integers uniform in [0, 8), bools fair coins. */
void fill_random_input(Tensor *t, uint64_t seed);

/* Materialize a constant node's data (inline, npy, zeros, fill, random). */
bool materialize_constant(const Node *n, Tensor *out, Diag *d);
/* Constant node n's data as a new tensor of its result's type, or NULL
 * when it cannot be read (an unreadable .npy: reported where the data is
 * used, not here).  For the graph passes. */
Tensor *constant_data(const Node *n);

#endif
