/* Diagnostics: errors are values carrying a source location and a message.
 * Library code reports into a Diag sink; the driver prints them once, each
 * as `file:line:col: error: message`, then the source line and a caret. */
#ifndef GDCC_DIAG_H
#define GDCC_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct {
	const char *file;   /* interned by the Diag sink or static; may be NULL */
	int line, col;      /* 1-based; 0 means unknown */
} Loc;

static inline Loc loc_at(const char *file, int line, int col)
{
	Loc l = {file, line, col};
	return l;
}

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

typedef struct {
	DiagLevel level;
	Loc loc;
	char *msg;
} DiagEntry;

typedef struct DiagSource {
	char *file;
	char *text;
	size_t len;
	struct DiagSource *next;
} DiagSource;

typedef struct {
	DiagEntry *entries;
	int n, cap;
	int nerrors;
	int max_errors;      /* stop recording errors beyond this (default 50) */
	DiagSource *sources; /* source texts, for printing the offending line */
	char **names;        /* other file names messages refer to (interned) */
	int nnames;
} Diag;

void diag_init(Diag *d);
void diag_free(Diag *d);
/* Remember a file's text so that messages can quote its lines.  The file
 * name is interned: the returned pointer lives as long as the sink. */
const char *diag_add_source(Diag *d, const char *file, const char *text, size_t len);
void diag_report(Diag *d, DiagLevel lv, Loc loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void diag_vreport(Diag *d, DiagLevel lv, Loc loc, const char *fmt, va_list ap);
#define diag_error(d, loc, ...) diag_report((d), DIAG_ERROR, (loc), __VA_ARGS__)
#define diag_note(d, loc, ...) diag_report((d), DIAG_NOTE, (loc), __VA_ARGS__)
bool diag_has_errors(const Diag *d);
/* Print every entry, with the source line and a caret where known. */
void diag_print(const Diag *d, FILE *out);
/* Find the first entry whose message contains `needle` (for tests). */
const DiagEntry *diag_find(const Diag *d, const char *needle);

#endif
