/* Small allocation and string helpers that abort on out-of-memory. */
#ifndef GDCC_UTIL_H
#define GDCC_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);
/* Text that quotes input (a name, a source line, a binary file's bytes)
 * is written with every byte that is not printable as \xHH: the length of
 * the printable character at s (a tab, a newline, printable ASCII or a
 * well-formed UTF-8 sequence that is not a C1 control), or 0; and the
 * writer that uses it. */
size_t utf8_printable_len(const unsigned char *s, size_t n);
void fput_escaped(FILE *out, const char *text, size_t n);
/* s as a JSON string: quotes, " and \ escaped, control characters as \u00XX
 * (NULL: as the empty string) */
void json_string(FILE *o, const char *s);
/* A string -> pointer hash map (open addressing, linear probing, at most
 * half full; XXH3 of the key).  Zero-initialized is empty.  The keys are
 * the caller's unless the map owns them (a copy of each is taken). */
typedef struct {
	struct StrMapSlot *slots;
	size_t cap, n; /* cap: 0 or a power of two */
	bool owns_keys;
} StrMap;
void *strmap_get(const StrMap *m, const char *key);
/* Add key -> val (val not NULL); false, and nothing changed, when key is
 * already there. */
bool strmap_add(StrMap *m, const char *key, void *val);
/* key -> val whether or not key was there (val not NULL). */
void strmap_set(StrMap *m, const char *key, void *val);
void strmap_free(StrMap *m);   /* empty again */
/* Read fd to its end (a file, a pipe, a device), at most limit bytes: the
 * bytes, NUL-terminated, and their count in *len; NULL with errno set on a
 * read error, or with *too_long set when there is more than limit. */
char *read_fd_limited(int fd, uint64_t limit, size_t *len, bool *too_long);
/* Read a whole file; NULL and errno set on failure. */
char *read_file(const char *path, size_t *len);

#endif
