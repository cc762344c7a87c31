/* .npy reader and writer.  The header is a Python dict literal; we accept
 * exactly the keys numpy writes ('descr', 'fortran_order', 'shape') and
 * reject anything we cannot read faithfully (big-endian, Fortran order). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "gdcc_limits.h"
#include "npy.h"
#include "util.h"

static bool fail(char **err, const char *fmt, const char *arg)
{
	*err = xasprintf(fmt, arg);
	return false;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return p;
}

/* Parse the dict in hdr (NUL-terminated). */
static bool parse_header(const char *hdr, TensorType *type, char **err)
{
	bool have_descr = false, have_order = false, have_shape = false;
	const char *p = skip_ws(hdr);
	if (*p++ != '{')
		return fail(err, "malformed header: expected '{'%s", "");
	for (;;) {
		p = skip_ws(p);
		if (*p == '}')
			break;
		char q = *p;
		if (q != '\'' && q != '"')
			return fail(err, "malformed header: expected a quoted key%s", "");
		const char *k = ++p;
		while (*p && *p != q)
			p++;
		if (!*p)
			return fail(err, "malformed header: unterminated key%s", "");
		size_t klen = (size_t)(p - k);
		p = skip_ws(p + 1);
		if (*p++ != ':')
			return fail(err, "malformed header: expected ':'%s", "");
		p = skip_ws(p);
		if ((klen == 5 && memcmp(k, "descr", 5) == 0 && have_descr) ||
		    (klen == 13 && memcmp(k, "fortran_order", 13) == 0 && have_order) ||
		    (klen == 5 && memcmp(k, "shape", 5) == 0 && have_shape)) {
			*err = xasprintf("malformed header: key '%.*s' is given twice", (int)klen, k);
			return false;
		}
		if (klen == 5 && memcmp(k, "descr", 5) == 0) {
			char dq = *p;
			if (dq != '\'' && dq != '"')
				return fail(err, "malformed header: 'descr' must be a string%s", "");
			const char *v = ++p;
			while (*p && *p != dq)
				p++;
			if (!*p)
				return fail(err, "malformed header: unterminated 'descr'%s", "");
			char descr[16] = {0};
			size_t vlen = (size_t)(p - v);
			if (vlen >= sizeof descr)
				return fail(err, "unsupported dtype (descr too long)%s", "");
			memcpy(descr, v, vlen);
			p++;
			type->dtype = DT_INVALID;
			for (int t = DT_F32; t < DT_COUNT; t++) {
				const char *nd = dtype_npy_descr((DType)t);
				if (!nd)
					continue;
				/* numpy writes '|b1' and '|i1'; accept '<' and '=' too. */
				if (strcmp(nd + 1, descr + 1) == 0 &&
				    (descr[0] == nd[0] || descr[0] == '=' || descr[0] == '|' || descr[0] == '<'))
					type->dtype = (DType)t;
			}
			if (type->dtype == DT_INVALID)
				return fail(err, "unsupported dtype '%s' (gdcc reads <f4, <i4, <i8, |b1, |i1, <f2; for float64 save with .astype(numpy.float32))",
					    descr);
			have_descr = true;
		} else if (klen == 13 && memcmp(k, "fortran_order", 13) == 0) {
			if (strncmp(p, "False", 5) == 0) {
				p += 5;
			} else if (strncmp(p, "True", 4) == 0) {
				return fail(err, "Fortran-order arrays are not supported (save with C order)%s", "");
			} else {
				return fail(err, "malformed header: 'fortran_order' must be True or False%s", "");
			}
			have_order = true;
		} else if (klen == 5 && memcmp(k, "shape", 5) == 0) {
			if (*p++ != '(')
				return fail(err, "malformed header: 'shape' must be a tuple%s", "");
			type->shape.rank = 0;
			for (;;) {
				p = skip_ws(p);
				if (*p == ')') {
					p++;
					break;
				}
				if (!isdigit((unsigned char)*p))
					return fail(err, "malformed header: bad dimension in 'shape'%s", "");
				if (type->shape.rank == MAX_RANK)
					return fail(err, "rank above the maximum of 8%s", "");
				char *end;
				errno = 0;
				long long dim = strtoll(p, &end, 10);
				if (errno || dim < 0 || dim > (1LL << 40))
					return fail(err, "malformed header: dimension out of range%s", "");
				type->shape.dim[type->shape.rank++] = dim;
				p = skip_ws(end);
				if (*p == 'L')
					p++;
				p = skip_ws(p);
				if (*p == ',')
					p++;
				else if (*p != ')')
					return fail(err, "malformed header: expected ',' or ')' in 'shape'%s", "");
			}
			have_shape = true;
		} else {
			return fail(err, "malformed header: unexpected key (the keys are 'descr', 'fortran_order' and 'shape')%s", "");
		}
		p = skip_ws(p);
		if (*p == ',')
			p++;
		else if (*p != '}')
			return fail(err, "malformed header: expected ',' or '}'%s", "");
	}
	if (!have_descr || !have_order || !have_shape)
		return fail(err, "malformed header: needs 'descr', 'fortran_order' and 'shape'%s", "");
	return true;
}

/* Opens path, parses the header; leaves f positioned at the data. */
static FILE *open_npy(const char *path, TensorType *type, char **err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		*err = xasprintf("cannot open: %s", strerror(errno));
		return NULL;
	}
	struct stat ds;
	if (fstat(fileno(f), &ds) == 0 && S_ISDIR(ds.st_mode)) {
		fail(err, "is a directory, not a .npy file%s", "");
		goto bad;
	}
	unsigned char pre[12];
	if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
		fail(err, "not a .npy file (bad magic)%s", "");
		goto bad;
	}
	size_t hlen;
	if (pre[6] == 1) {
		hlen = pre[8] | (size_t)pre[9] << 8;
	} else if (pre[6] == 2 || pre[6] == 3) {
		if (fread(pre + 10, 1, 2, f) != 2) {
			fail(err, "truncated header%s", "");
			goto bad;
		}
		hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
	} else {
		*err = xasprintf("unsupported .npy format version %d.%d", pre[6], pre[7]);
		goto bad;
	}
	if (hlen > (1u << 20)) {
		fail(err, "header too long%s", "");
		goto bad;
	}
	char *hdr = xmalloc(hlen + 1);
	if (fread(hdr, 1, hlen, f) != hlen) {
		free(hdr);
		fail(err, "truncated header%s", "");
		goto bad;
	}
	hdr[hlen] = 0;
	if (memchr(hdr, 0, hlen)) {
		free(hdr);
		fail(err, "malformed header: it holds a NUL byte%s", "");
		goto bad;
	}
	bool ok = parse_header(hdr, type, err);
	free(hdr);
	if (!ok)
		goto bad;
	char *big = tensor_size_error(type->dtype, &type->shape);
	if (big) {
		*err = xasprintf("the header's %s", big);
		free(big);
		goto bad;
	}
	/* The data must be exactly what the header says: a regular file's size
	 * tells before anything is read. */
	struct stat st;
	uint64_t want;
	type_bytes_checked(type->dtype, &type->shape, &want);
	long at = ftell(f);
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && at >= 0) {
		uint64_t have = (uint64_t)st.st_size - (uint64_t)at;
		char ty[160];
		if ((uint64_t)st.st_size < (uint64_t)at || have < want) {
			*err = xasprintf("truncated data: the header's %s needs %llu bytes, the file holds %llu after its header",
					 type_str(type, ty, sizeof ty), (unsigned long long)want,
					 (unsigned long long)((uint64_t)st.st_size < (uint64_t)at ? 0 : have));
			goto bad;
		}
		if (have > want) {
			*err = xasprintf("%llu bytes after the data that the header's %s describes (%llu bytes)",
					 (unsigned long long)(have - want), type_str(type, ty, sizeof ty),
					 (unsigned long long)want);
			goto bad;
		}
	}
	return f;
bad:
	fclose(f);
	return NULL;
}

bool npy_read_header(const char *path, TensorType *type, char **err)
{
	FILE *f = open_npy(path, type, err);
	if (!f)
		return false;
	fclose(f);
	return true;
}

bool npy_read(const char *path, Tensor **out, char **err)
{
	TensorType type;
	FILE *f = open_npy(path, &type, err);
	if (!f)
		return false;
	Tensor *t = tensor_new(type.dtype, &type.shape);
	size_t bytes = tensor_bytes(t);
	if (bytes && fread(t->data, 1, bytes, f) != bytes) {
		*err = xasprintf("truncated data: expected %zu bytes", bytes);
		fclose(f);
		tensor_free(t);
		return false;
	}
	if (fgetc(f) != EOF) { /* not a regular file: open_npy could not tell */
		*err = xasprintf("bytes after the data that the header describes (%zu bytes)", bytes);
		fclose(f);
		tensor_free(t);
		return false;
	}
	fclose(f);
	*out = t;
	return true;
}

bool npy_write(const char *path, const Tensor *t, char **err)
{
	const char *descr = dtype_npy_descr(t->type.dtype);
	if (!descr) {
		*err = xasprintf("dtype %s cannot be written as .npy", dtype_name(t->type.dtype));
		return false;
	}
	char dict[512];
	int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
	for (int i = 0; i < t->type.shape.rank; i++)
		k += snprintf(dict + k, sizeof dict - k, "%lld,%s", (long long)t->type.shape.dim[i],
			      i + 1 < t->type.shape.rank ? " " : "");
	if (t->type.shape.rank > 1)
		k--; /* numpy writes (2, 3) but (2,) */
	k += snprintf(dict + k, sizeof dict - k, "), }");
	/* Pad with spaces so that the data starts on a 64-byte boundary. */
	size_t total = 10 + (size_t)k + 1;
	size_t pad = (64 - total % 64) % 64;
	size_t hlen = (size_t)k + pad + 1;
	char *tmp = xasprintf("%s.tmp%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		*err = xasprintf("cannot create: %s", strerror(errno));
		free(tmp);
		return false;
	}
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
				 (unsigned char)(hlen >> 8)};
	bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)k, f) == (size_t)k;
	for (size_t i = 0; ok && i < pad; i++)
		ok = fputc(' ', f) != EOF;
	ok = ok && fputc('\n', f) != EOF;
	size_t bytes = tensor_bytes(t);
	ok = ok && (bytes == 0 || fwrite(t->data, 1, bytes, f) == bytes);
	ok = (fclose(f) == 0) && ok;
	if (ok && rename(tmp, path) != 0)
		ok = false;
	if (!ok) {
		*err = xasprintf("write failed: %s", strerror(errno));
		remove(tmp);
	}
	free(tmp);
	return ok;
}
