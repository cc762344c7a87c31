/* Reading and writing numpy .npy files (format versions 1.0 to 3.0,
 * little-endian, C order; dtypes f32, i32, i64, bool, i8, f16). */
#ifndef GDCC_NPY_H
#define GDCC_NPY_H

#include "ir.h"

/* Read the header only: dtype and shape.  On failure returns false and sets
 * *err to a malloc'd message (without the file name). */
bool npy_read_header(const char *path, TensorType *type, char **err);
/* Read a whole file into a new tensor. */
bool npy_read(const char *path, Tensor **out, char **err);
/* Write a tensor; false and *err set on failure (no partial file is left). */
bool npy_write(const char *path, const Tensor *t, char **err);

#endif
