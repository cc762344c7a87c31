/* Prints a graph back in model.ir syntax.  Printing a verified graph and
 * parsing the text gives the same graph (parse -> print -> parse is a fixed
 * point); results carry their inferred types as annotations. */
#ifndef GDCC_PRINTER_H
#define GDCC_PRINTER_H

#include <stdio.h>

#include "ir.h"

/* Constants held in memory (INIT_TENSOR: made by folding and
 * canonicalization, or an imported model's weights) print as their values
 * when they have at most PRINT_INLINE_MAX elements (reading back to the
 * same data), else as `zeros` followed by a comment with their size and
 * XXH3 hash: a model.ir that parses, but not the same data. */
enum { PRINT_INLINE_MAX = 64 };
void print_graph(FILE *out, const Graph *g);
/* print_graph with the kernels of a grouped graph (pass_fuse): a comment
 * line before each kernel's first node, `  # kernel 3: gemm + add + relu
 * (2 fused)` (the ops of the kernel in order, the first twelve named).
 * The text still parses as model.ir (--print-after=fuse). */
void print_groups(FILE *out, const Graph *g);
/* Shortest decimal text that reads back as the same double, always with a
 * '.', an exponent, "inf" or "nan" so that it reads back as a float. */
void format_double(double v, char *buf, size_t n);

#endif
