/* `gdcc import`: an imported graph made printable as model.ir text.  Names
 * that are not model.ir identifiers ("input.1", "/conv/Conv_output_0") are
 * renamed, and weights held in memory become inline values (small ones) or
 * .npy files beside the output. */
#ifndef GDCC_IMPORT_H
#define GDCC_IMPORT_H

#include <stdio.h>

#include "ir.h"

typedef struct {
	char **from, **to;  /* the renamings, for the header comment */
	int nrenamed;
	char **files;       /* .npy files written (full paths), to remove on failure */
	int nfiles;
} ImportLog;

/* Rename values to identifiers, and turn each in-memory constant into an
 * inline one or, with ir_path, into STEM.NAME.npy beside ir_path (a
 * constant too big to inline without ir_path is an error).  false and
 * *err set on failure; files already written are listed in log. */
bool import_externalize(Graph *g, const char *ir_path, ImportLog *log, char **err);
/* A comment block naming the source and each renaming. */
void import_print_header(FILE *out, const char *source, const ImportLog *log);
/* Comments naming each input and output whose ONNX name differs. */
void import_print_io_names(FILE *out, const Graph *g);
void import_log_remove_files(ImportLog *log);
void import_log_free(ImportLog *log);

#endif
