/* `gdcc import`: an imported graph made printable as model.ir text: the
 * weights held in memory become inline values (small ones) or .npy files
 * beside the output.  (The importer already gave every value a model.ir
 * identifier, remembering its ONNX name in Value.src_name.) */
#ifndef GDCC_IMPORT_H
#define GDCC_IMPORT_H

#include <stdio.h>

#include "ir.h"

typedef struct {
	char **files;       /* .npy files written (full paths), to remove on failure */
	int nfiles;
} ImportLog;

/* Turn each in-memory constant into an inline one or, with ir_path, into
 * STEM.NAME.npy beside ir_path (a constant too big to inline without
 * ir_path is an error).  false and
 * *err set on failure; files already written are listed in log. */
bool import_externalize(Graph *g, const char *ir_path, ImportLog *log, char **err);
/* A comment block naming the source, and each input and output whose
 * ONNX name differs from its model.ir name. */
void import_print_header(FILE *out, const char *source, const Graph *g);
void import_log_remove_files(ImportLog *log);
void import_log_free(ImportLog *log);

#endif
