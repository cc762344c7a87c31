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

/* Length of the valid UTF-8 sequence at p (< end), or 0. */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
	int n = *p >= 0xf0 && *p <= 0xf4 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 && *p < 0xe0 ? 2 : 0;
	if (n == 0 || end - p < n)
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Writes text[0..n) with every byte that is not printable (controls but
 * tab, DEL, bytes that are not valid UTF-8) as \xNN, so that a binary
 * file's bytes never reach the terminal (newlines kept where asked).  Returns the columns written for
 * the first `upto` bytes (for the caret), via *cols when not NULL. */
static void put_escaped(FILE *out, const char *text, size_t n, size_t upto, size_t *cols, bool keep_newlines)
{
	const unsigned char *p = (const unsigned char *)text, *end = p + n;
	size_t col = 0;
	while (p < end) {
		int u = *p >= 0x80 ? utf8_len(p, end) : 0;
		size_t w;
		if (u) {
			fwrite(p, 1, (size_t)u, out);
			w = 1;
		} else if (*p == '\t' || (*p >= 0x20 && *p < 0x7f) || (*p == '\n' && keep_newlines)) {
			fputc(*p, out);
			w = 1;
			u = 1;
		} else {
			fprintf(out, "\\x%02x", *p);
			w = 4;
			u = 1;
		}
		if ((size_t)((const char *)p - text) < upto)
			col += w;
		p += u;
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
