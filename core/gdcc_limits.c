/* Resource limits and overflow-checked size arithmetic (gdcc_limits.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdcc_limits.h"
#include "util.h"

static Limits current = {GDCC_DEFAULT_MAX_TENSOR_BYTES, GDCC_DEFAULT_MAX_WORKSPACE_BYTES};

const Limits *limits(void) { return &current; }
void limits_set(const Limits *l) { current = *l; }

bool mul_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_mul_overflow(a, b, out); }
bool add_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_add_overflow(a, b, out); }

bool parse_byte_size(const char *s, uint64_t *out)
{
	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
	default: break;
	}
	if (*end || v == 0)
		return false;
	uint64_t r;
	if (!mul_u64(v, (uint64_t)1 << shift, &r))
		return false;
	*out = r;
	return true;
}

static bool env_size(const char *name, uint64_t *dst, char **err)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return true;
	if (!parse_byte_size(s, dst)) {
		*err = xasprintf("%s='%s' is not a byte count (a positive number with an optional K, M, G or T suffix)", name, s);
		return false;
	}
	return true;
}

bool limits_from_env(char **err)
{
	Limits l = current;
	if (!env_size("GDCC_MAX_TENSOR_BYTES", &l.max_tensor_bytes, err) ||
	    !env_size("GDCC_MAX_WORKSPACE_BYTES", &l.max_workspace_bytes, err))
		return false;
	current = l;
	return true;
}

bool shape_numel_checked(const Shape *s, int64_t *numel)
{
	if (s->rank < 0 || s->rank > MAX_RANK)
		return false;
	int64_t n = 1;
	bool zero = false;
	for (int i = 0; i < s->rank; i++) {
		if (s->dim[i] < 0)
			return false;
		if (s->dim[i] == 0)
			zero = true;
	}
	if (zero) {
		*numel = 0;
		return true;
	}
	for (int i = 0; i < s->rank; i++)
		if (__builtin_mul_overflow(n, s->dim[i], &n))
			return false;
	*numel = n;
	return true;
}

bool type_bytes_checked(DType dt, const Shape *s, uint64_t *bytes)
{
	int64_t n;
	return shape_numel_checked(s, &n) && mul_u64((uint64_t)n, dtype_size(dt), bytes);
}

char *bytes_str(uint64_t b, const char *note)
{
	static const char *unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (b < 1024)
		return note ? xasprintf("%" PRIu64 " bytes (%s)", b, note) : xasprintf("%" PRIu64 " bytes", b);
	double v = (double)b / 1024;
	int u = 0;
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	return xasprintf("%" PRIu64 " bytes (%.3g %s%s%s)", b, v, unit[u], note ? "; " : "", note ? note : "");
}

char *tensor_size_error(DType dt, const Shape *s)
{
	char ty[256];
	TensorType t = {dt, *s};
	type_str(&t, ty, sizeof ty);
	for (int i = 0; i < s->rank; i++) {
		if (s->dim[i] < 0)
			return xasprintf("%s has a negative dimension", ty);
		if (s->dim[i] > GDCC_MAX_DIM)
			return xasprintf("%s: dimension %d (%" PRId64 ") is above the largest gdcc accepts (2^40)", ty, i + 1,
					 s->dim[i]);
	}
	int64_t numel;
	if (!shape_numel_checked(s, &numel))
		return xasprintf("%s has more elements than fit in 64 bits", ty);
	uint64_t bytes;
	if (!mul_u64((uint64_t)numel, dtype_size(dt), &bytes))
		return xasprintf("%s has more bytes than fit in 64 bits", ty);
	if (bytes > current.max_tensor_bytes) {
		char *h = bytes_str(bytes, NULL), *hl = bytes_str(current.max_tensor_bytes, "--max-tensor-bytes");
		char *msg = xasprintf("%s is %s, above the limit of %s", ty, h, hl);
		free(h);
		free(hl);
		return msg;
	}
	return NULL;
}
