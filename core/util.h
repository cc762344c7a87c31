/* Small allocation and string helpers that abort on out-of-memory. */
#ifndef GDCC_UTIL_H
#define GDCC_UTIL_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);
/* Read a whole file; NULL and errno set on failure. */
char *read_file(const char *path, size_t *len);

#endif
