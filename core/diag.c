/* Diagnostics sink: collects located messages, prints them with the
 * offending source line and a caret under the column. */
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "util.h"

void diag_init(Diag *d)
{
	memset(d, 0, sizeof *d);
	d->max_errors = 50;
}

void diag_free(Diag *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->entries[i].msg);
	free(d->entries);
	for (int i = 0; i < d->nnames; i++)
		free(d->names[i]);
	free(d->names);
	for (DiagSource *s = d->sources, *next; s; s = next) {
		next = s->next;
		free(s->file);
		free(s->text);
		free(s);
	}
	memset(d, 0, sizeof *d);
}

const char *diag_add_source(Diag *d, const char *file, const char *text, size_t len)
{
	for (DiagSource *s = d->sources; s; s = s->next)
		if (strcmp(s->file, file) == 0)
			return s->file;
	DiagSource *s = xcalloc(1, sizeof *s);
	s->file = xstrdup(file);
	s->text = xmalloc(len + 1);
	if (len)
		memcpy(s->text, text, len);
	s->text[len] = 0;
	s->len = len;
	s->next = d->sources;
	d->sources = s;
	return s->file;
}

/* Messages outlive the strings their callers built locations from: keep a
 * copy of every file name. */
static const char *intern(Diag *d, const char *file)
{
	if (!file)
		return NULL;
	for (DiagSource *s = d->sources; s; s = s->next)
		if (s->file == file || strcmp(s->file, file) == 0)
			return s->file;
	for (int i = 0; i < d->nnames; i++)
		if (strcmp(d->names[i], file) == 0)
			return d->names[i];
	d->names = xrealloc(d->names, (d->nnames + 1) * sizeof *d->names);
	return d->names[d->nnames++] = xstrdup(file);
}

void diag_vreport(Diag *d, DiagLevel lv, Loc loc, const char *fmt, va_list ap)
{
	loc.file = intern(d, loc.file);
	if (lv == DIAG_ERROR) {
		d->nerrors++;
		if (d->nerrors > d->max_errors)
			return;
	}
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 16;
		d->entries = xrealloc(d->entries, d->cap * sizeof *d->entries);
	}
	DiagEntry *e = &d->entries[d->n++];
	e->level = lv;
	e->loc = loc;
	e->msg = xvasprintf(fmt, ap);
}

void diag_report(Diag *d, DiagLevel lv, Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vreport(d, lv, loc, fmt, ap);
	va_end(ap);
}

bool diag_has_errors(const Diag *d)
{
	return d->nerrors > 0;
}

static const DiagSource *find_source(const Diag *d, const char *file)
{
	if (!file)
		return NULL;
	for (const DiagSource *s = d->sources; s; s = s->next)
		if (strcmp(s->file, file) == 0)
			return s;
	return NULL;
}

/* Writes text[0..n) escaped (util.h: fput_escaped's rule, newlines too
 * unless keep_newlines), and the columns the first `upto` bytes take, for
 * the caret, in *cols when not NULL. */
static void put_escaped(FILE *out, const char *text, size_t n, size_t upto, size_t *cols, bool keep_newlines)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t col = 0;
	for (size_t i = 0; i < n;) {
		size_t k = p[i] == '\n' && !keep_newlines ? 0 : utf8_printable_len(p + i, n - i);
		size_t w = k ? 1 : 4;
		if (k)
			fwrite(p + i, 1, k, out);
		else
			fprintf(out, "\\x%02x", p[i]);
		if (i < upto)
			col += w;
		i += k ? k : 1;
	}
	if (cols)
		*cols = col;
}

/* The offending line and a caret under the column.  A long line (a
 * generated model's) is shown as a window of it around the column. */
static void print_line(const DiagSource *src, Loc loc, FILE *out)
{
	enum { WIDE = 160, SIDE = 70 };
	const char *p = src->text, *end = src->text + src->len;
	for (int line = 1; line < loc.line && p < end; p++)
		if (*p == '\n')
			line++;
	if (p >= end && loc.line > 1)
		return;
	const char *eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		eol = end;
	size_t len = (size_t)(eol - p), at = loc.col > 0 ? (size_t)loc.col - 1 : 0;
	if (at > len)
		at = len;
	size_t from = 0, to = len;
	if (len > WIDE) {
		from = at > SIDE ? at - SIDE : 0;
		to = at + SIDE < len ? at + SIDE : len;
	}
	fputs("  ", out);
	if (from > 0)
		fputs("...", out);
	size_t cols;
	put_escaped(out, p + from, to - from, at - from, &cols, false);
	if (to < len)
		fputs("...", out);
	fputs("\n  ", out);
	if (from > 0)
		cols += 3;
	/* tabs before the column stay tabs, so the caret lines up */
	size_t tabs = 0;
	for (const char *q = p + from; q < p + at; q++)
		tabs += *q == '\t';
	for (size_t i = 0; i < tabs; i++)
		fputc('\t', out);
	for (size_t i = tabs; i < cols; i++)
		fputc(' ', out);
	fputs("^\n", out);
}

void diag_print(const Diag *d, FILE *out)
{
	static const char *level[] = {"error", "warning", "note"};
	for (int i = 0; i < d->n; i++) {
		const DiagEntry *e = &d->entries[i];
		if (e->loc.file) {
			put_escaped(out, e->loc.file, strlen(e->loc.file), 0, NULL, false);
			if (e->loc.line > 0)
				fprintf(out, ":%d:%d", e->loc.line, e->loc.col);
			fputs(": ", out);
		} else {
			fputs("gdcc: ", out);
		}
		fprintf(out, "%s: ", level[e->level]);
		/* a message may span lines (a linker's log): those stay lines */
		put_escaped(out, e->msg, strlen(e->msg), 0, NULL, true);
		fputc('\n', out);
		const DiagSource *src = find_source(d, e->loc.file);
		if (src && e->loc.line > 0)
			print_line(src, e->loc, out);
	}
	if (d->nerrors > d->max_errors)
		fprintf(out, "gdcc: note: %d more errors not shown\n", d->nerrors - d->max_errors);
}

const DiagEntry *diag_find(const Diag *d, const char *needle)
{
	for (int i = 0; i < d->n; i++)
		if (strstr(d->entries[i].msg, needle))
			return &d->entries[i];
	return NULL;
}
