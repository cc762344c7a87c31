/* Resource limits: every tensor size that comes from input (a declared or
 * inferred shape, a constant, an .npy or TensorProto header, an ONNX
 * initializer) is checked against these before anything is allocated, and
 * every element count and byte count is computed with overflow checks.
 *
 * The limits are process-wide settings, made once by the driver from
 * --max-tensor-bytes / --max-workspace-bytes or the environment variables
 * GDCC_MAX_TENSOR_BYTES / GDCC_MAX_WORKSPACE_BYTES (docs/testing.md). */
#ifndef GDCC_LIMITS_H
#define GDCC_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"

/* Defaults, sized for a 24 GiB machine: one tensor at most 4 GiB, all the
 * tensors of one model (constants, inputs, outputs, workspace) at most 16 GiB. */
#define GDCC_DEFAULT_MAX_TENSOR_BYTES ((uint64_t)4 << 30)
#define GDCC_DEFAULT_MAX_WORKSPACE_BYTES ((uint64_t)16 << 30)
/* Upper bound on any single dimension (keeps index arithmetic in int64). */
#define GDCC_MAX_DIM ((int64_t)1 << 40)

typedef struct {
	uint64_t max_tensor_bytes;
	uint64_t max_workspace_bytes;
} Limits;

/* The current limits (defaults until limits_set or limits_from_env). */
const Limits *limits(void);
void limits_set(const Limits *l);
/* Read GDCC_MAX_TENSOR_BYTES / GDCC_MAX_WORKSPACE_BYTES; false and *err
 * (malloc'd) when one is set but not a valid size. */
bool limits_from_env(char **err);
/* Parse a byte count: a decimal number with an optional K, M, G or T suffix
 * (powers of 1024).  False on anything else, on 0 and on overflow. */
bool parse_byte_size(const char *s, uint64_t *out);

/* A byte count for messages (malloc'd): "1234 bytes (1.21 KiB)", with a note
 * "1234 bytes (1.21 KiB; NOTE)", and below 1 KiB "100 bytes" or
 * "100 bytes (NOTE)". */
char *bytes_str(uint64_t b, const char *note);

/* Overflow-checked arithmetic: false when the result does not fit. */
bool mul_u64(uint64_t a, uint64_t b, uint64_t *out);
bool add_u64(uint64_t a, uint64_t b, uint64_t *out);
/* Element count of a shape: false when a dimension is negative or the
 * product overflows int64. */
bool shape_numel_checked(const Shape *s, int64_t *numel);
/* Bytes of a tensor of this type: false on overflow. */
bool type_bytes_checked(DType dt, const Shape *s, uint64_t *bytes);

/* Is a tensor of this type allowed?  NULL when it is; otherwise a malloc'd
 * message without the value's name, such as
 *   "f32[4294967296,4294967296] has 18446744073709551616 elements, more than fit in 64 bits"
 *   "f32[100000,100000,100] is 4000000000000 bytes (3.64 TiB), above the limit of 4294967296 bytes (4 GiB; --max-tensor-bytes)"
 * Callers prefix the value's name and location. */
char *tensor_size_error(DType dt, const Shape *s);

#endif
