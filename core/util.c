/* Allocation and string helpers. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "util.h"

static void oom(void)
{
	fputs("gdcc: fatal: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	char *p = xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (n + 1 < cap)
			break;
		cap *= 2;
		buf = xrealloc(buf, cap);
	}
	int err = ferror(f);
	fclose(f);
	if (err) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

/* The length of the printable character at s (a tab, a newline, printable
 * ASCII or a well-formed UTF-8 sequence that is not a C1 control), or 0. */
size_t utf8_printable_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t';
	size_t len;
	unsigned lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		lo = c == 0xe0 ? 0xa0 : lo;
		hi = c == 0xed ? 0x9f : hi;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		lo = c == 0xf0 ? 0x90 : lo;
		hi = c == 0xf4 ? 0x8f : hi;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi || (c == 0xc2 && s[1] < 0xa0))
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

void fput_escaped(FILE *out, const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_printable_len(s + i, n - i);
		if (k) {
			fwrite(s + i, 1, k, out);
			i += k;
		} else {
			fprintf(out, "\\x%02x", s[i]);
			i++;
		}
	}
}

char *read_fd_limited(int fd, uint64_t limit, size_t *len, bool *too_long)
{
	*too_long = false;
	if (limit > SIZE_MAX / 4)
		limit = SIZE_MAX / 4;
	/* read at most limit + 1 bytes: one more than the limit says it is too long */
	size_t cap = limit + 1 < (1 << 16) ? (size_t)limit + 1 : 1 << 16, n = 0;
	char *buf = xmalloc(cap + 1);
	while ((uint64_t)n <= limit) {
		if (n == cap) {
			cap = (uint64_t)cap * 2 > limit + 1 ? (size_t)limit + 1 : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return NULL;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	if ((uint64_t)n > limit) {
		*too_long = true;
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

struct StrMapSlot {
	const char *key;
	void *val;
	uint64_t hash;
};

static uint64_t strmap_hash(const char *s) { return XXH3_64bits(s, strlen(s)); }

void *strmap_get(const StrMap *m, const char *key)
{
	if (!m->cap)
		return NULL;
	uint64_t h = strmap_hash(key);
	size_t mask = m->cap - 1;
	for (size_t i = h & mask; m->slots[i].key; i = (i + 1) & mask)
		if (m->slots[i].hash == h && strcmp(m->slots[i].key, key) == 0)
			return m->slots[i].val;
	return NULL;
}

bool strmap_add(StrMap *m, const char *key, void *val)
{
	if (strmap_get(m, key))
		return false;
	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct StrMapSlot *s = xcalloc(cap, sizeof *s);
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->slots[i].key)
				continue;
			size_t j = m->slots[i].hash & (cap - 1);
			while (s[j].key)
				j = (j + 1) & (cap - 1);
			s[j] = m->slots[i];
		}
		free(m->slots);
		m->slots = s;
		m->cap = cap;
	}
	uint64_t h = strmap_hash(key);
	size_t i = h & (m->cap - 1);
	while (m->slots[i].key)
		i = (i + 1) & (m->cap - 1);
	m->slots[i] = (struct StrMapSlot){m->owns_keys ? xstrdup(key) : key, val, h};
	m->n++;
	return true;
}

void strmap_set(StrMap *m, const char *key, void *val)
{
	if (m->cap) {
		uint64_t h = strmap_hash(key);
		size_t mask = m->cap - 1;
		for (size_t i = h & mask; m->slots[i].key; i = (i + 1) & mask)
			if (m->slots[i].hash == h && strcmp(m->slots[i].key, key) == 0) {
				m->slots[i].val = val;
				return;
			}
	}
	strmap_add(m, key, val);
}

void strmap_free(StrMap *m)
{
	if (m->owns_keys)
		for (size_t i = 0; i < m->cap; i++)
			free((char *)m->slots[i].key);
	free(m->slots);
	bool owns = m->owns_keys;
	memset(m, 0, sizeof *m);
	m->owns_keys = owns;
}

void json_string(FILE *o, const char *s)
{
	fputc('"', o);
	for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(o, "\\%c", *c);
		else if (*c < 0x20)
			fprintf(o, "\\u%04x", *c);
		else
			fputc(*c, o);
	}
	fputc('"', o);
}
