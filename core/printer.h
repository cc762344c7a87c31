/* Prints a graph back in model.ir syntax.  Printing a verified graph and
 * parsing the text gives the same graph (parse -> print -> parse is a fixed
 * point); results carry their inferred types as annotations. */
#ifndef GDCC_PRINTER_H
#define GDCC_PRINTER_H

#include <stdio.h>

#include "ir.h"

void print_graph(FILE *out, const Graph *g);
/* Shortest decimal text that reads back as the same double, always with a
 * '.', an exponent, "inf" or "nan" so that it reads back as a float. */
void format_double(double v, char *buf, size_t n);

#endif
