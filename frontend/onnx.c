/* ONNX import.  Nodes are translated in order; each new node is typed at
 * once (graph_check_node), so that inputs that ONNX passes as tensors but
 * gdcc takes as attributes (shapes, axes, pads, bounds) can be known: small
 * values are folded as the nodes that compute them are added (initializers,
 * Constant nodes, Shape of a static shape, and small subgraphs over them run
 * through the reference kernels).  The nodes that only computed such values
 * are pruned at the end.
 *
 * The file is untrusted: every name may be missing, every count and
 * dimension may be absurd.  Names are looked up in hash maps (util.h StrMap: the importer
 * is linear in the model's size), every tensor's size is checked with
 * core/gdcc_limits.h before anything is allocated, and every message names the
 * file and the node, input, initializer or attribute (by its 1-based index
 * when it has no name), with non-printable bytes escaped. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "gdcc_limits.h"
#include "onnx.pb-c.h"
#include "ops.h"
#include "onnx.h"
#include "onnx_imp.h"
#include "util.h"
#include "verify.h"

/* Values folded at import time: at most this many elements each, at most
 * FOLD_BUDGET bytes in all (beyond, values are simply not known). */
enum { FOLD_MAX = 4096 };
#define FOLD_BUDGET ((uint64_t)64 << 20)
/* An operand taken as an integer-list attribute has at most this many entries. */
enum { CONST_INTS_MAX = 1 << 16 };
/* Protobuf messages nest at most this deep (protobuf-c's parser recurses). */
enum { MAX_NESTING = 100 };

/* ---- names in messages ------------------------------------------------------------------ */
enum { SHOW_MAX = 120 };

/* s for a message: printable ASCII as is, other bytes as \xNN, at most
 * SHOW_MAX characters of it (then "..."). */
static char *escape_to(char *buf, size_t size, const char *s)
{
	size_t k = 0, shown = 0;
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && k + 8 < size; p++, shown++) {
		if (shown == SHOW_MAX) {
			memcpy(buf + k, "...", 3);
			k += 3;
			break;
		}
		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			buf[k++] = (char)*p;
		else
			k += (size_t)snprintf(buf + k, size - k, "\\x%02x", *p);
	}
	buf[k] = 0;
	return buf;
}

typedef struct {
	Tensor *t;         /* the value, when known at import time */
	bool owned;        /* t belongs to the importer (else to a constant node) */
	char *why;         /* why it is not known, when folding it failed */
	int input;         /* graph input index + 1, or 0 */
} Known;

/* A sequence value: its tensors, known in number when importing (from the
 * test data being specialized to). */
typedef struct Seq {
	int n;
	Value **v;
} Seq;

struct Imp;
static Seq *seq_new(struct Imp *im, int n);

struct Imp {
	Diag *d;
	Graph *g;
	const char *file;
	int opset;
	StrMap syms;      /* ONNX name -> Value (keys: the model's strings) */
	StrMap irnames;   /* model.ir names handed out (owned keys) */
	StrMap inits;     /* initializer names -> their TensorProto */
	StrMap seqs;      /* ONNX names of sequences -> their Seq (owned by seqlist) */
	struct Seq **seqlist;
	int nseqs;
	Known *known;      /* by Value.id */
	int nknown;
	uint64_t folded_bytes;
	int uniq;
	bool ok;
	const Onnx__NodeProto *node; /* being translated, for messages */
	size_t node_index;
	const char *spec_dir;        /* test data to specialize inputs to, or NULL */
	char *data_dir;              /* the model file's directory (external data), or NULL */
	OnnxBinding *binds;          /* values to specialize inputs to, by name */
	int nbinds;
	int if_depth;                /* branches of Ifs being imported */
	char ring[6][SHOW_MAX * 4 + 16];
	int ring_next;
};

/* An escaped copy of s for one message (a ring of six buffers). */
static const char *Q(Imp *im, const char *s)
{
	char *b = im->ring[im->ring_next];
	im->ring_next = (im->ring_next + 1) % 6;
	return escape_to(b, sizeof im->ring[0], s);
}

bool onnx_is_model(const char *path)
{
	size_t n = strlen(path);
	return n > 5 && strcmp(path + n - 5, ".onnx") == 0;
}

static Loc where(Imp *im)
{
	return loc_at(im->file, 0, 0);
}

static void fail(Imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(Imp *im, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	const Onnx__NodeProto *np = im->node;
	if (np && np->name && np->name[0])
		diag_error(im->d, where(im), "node '%s' (%s, opset %d): %s", Q(im, np->name), Q(im, np->op_type),
			   im->opset, msg);
	else if (np)
		diag_error(im->d, where(im), "node %zu (%s, opset %d): %s", im->node_index + 1, Q(im, np->op_type),
			   im->opset, msg);
	else
		diag_error(im->d, where(im), "%s", msg);
	free(msg);
	im->ok = false;
}

/* ---- names ----------------------------------------------------------------- */
static Value *sym_value(Imp *im, const char *name)
{
	return strmap_get(&im->syms, name);
}

/* Bind an ONNX name (a string of the model, which outlives the map) to v;
 * false after an error when the name is already defined. */
static bool sym_bind(Imp *im, const char *name, Value *v)
{
	if (!strmap_add(&im->syms, name, v)) {
		fail(im, "'%s' is defined twice (ONNX values are assigned once)", Q(im, name));
		return false;
	}
	if (!v->src_name && strcmp(v->name, name) != 0)
		v->src_name = xstrdup(name);
	return true;
}

/* model.ir's keywords, and the words that read as numbers. */
static bool ir_keyword(const char *s)
{
	return strcmp(s, "inf") == 0 || strcmp(s, "nan") == 0 || strcmp(s, "graph") == 0 || strcmp(s, "input") == 0 ||
	       strcmp(s, "output") == 0 || strcmp(s, "const") == 0;
}

static bool ir_name_taken(Imp *im, const char *s)
{
	return strmap_get(&im->irnames, s) || graph_find_value(im->g, s) || ir_keyword(s);
}

/* A model.ir name for an ONNX name: letters, digits, '_' and '.', unique
 * (also among the names handed out for a node not yet added). */
static char *ir_name(Imp *im, const char *onnx)
{
	size_t n = strlen(onnx);
	char *s = xmalloc(n + 24);
	size_t k = 0;
	if (n == 0 || !((onnx[0] >= 'a' && onnx[0] <= 'z') || (onnx[0] >= 'A' && onnx[0] <= 'Z') || onnx[0] == '_'))
		s[k++] = 'v';
	for (size_t i = 0; i < n; i++) {
		char ch = onnx[i];
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.';
		s[k++] = ok ? ch : '_';
	}
	s[k] = 0;
	while (ir_name_taken(im, s))
		snprintf(s + k, 24, "_%d", ++im->uniq);
	strmap_add(&im->irnames, s, (void *)1);
	return s;
}

/* ---- tensors --------------------------------------------------------------------- */
static DType dtype_of(int32_t t)
{
	switch (t) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return DT_F32;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return DT_I32;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return DT_I64;
	case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return DT_BOOL;
	default: return DT_INVALID;
	}
}

/* TensorProto.DataType's names, as onnx.proto gives them. */
static const char *onnx_dtype_name(int32_t t)
{
	static const char *const names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32",
					    "int64", "string", "bool", "float16", "double", "uint32", "uint64",
					    "complex64", "complex128", "bfloat16"};
	return t >= 0 && t < (int32_t)(sizeof names / sizeof *names) ? names[t] : "unknown";
}

/* The tensor of a TensorProto, its size checked before anything is
 * allocated and its data length checked exactly.  NULL and *err (without
 * the tensor's name: callers say which tensor) on failure. */
static Tensor *tensor_of_proto(const Onnx__TensorProto *tp, Onnx__TensorProto *steal, const char *dir, char **err);
static Tensor *tensor_of(const Onnx__TensorProto *tp, char **err) { return tensor_of_proto(tp, NULL, NULL, err); }

/* Is an external data location a plain relative path that stays inside the
 * model's directory (as ONNX's checker requires: no absolute path, no ".."
 * component)? */
static bool external_location_ok(const char *loc)
{
	if (!loc[0] || loc[0] == '/')
		return false;
	for (const char *p = loc; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += n;
		p += *p == '/';
	}
	return true;
}

/* A decimal count of bytes (external_data's "offset" and "length"). */
static bool parse_bytes(const char *s, uint64_t *v)
{
	if (!*s)
		return false;
	uint64_t x = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return true;
}

/* The bytes of a tensor kept in an external file (TensorProto.external_data:
 * "location" relative to dir, the model's directory; "offset", "length";
 * "checksum" is not verified), read into t's data.  false and *err on
 * failure. */
static bool read_external(const Onnx__TensorProto *tp, const char *dir, Tensor *t, uint64_t bytes, char **err)
{
	const char *loc = NULL, *off = NULL, *len = NULL;
	for (size_t i = 0; i < tp->n_external_data; i++) {
		const Onnx__StringStringEntryProto *e = tp->external_data[i];
		const char *k = e->key ? e->key : "", *v = e->value ? e->value : "";
		if (strcmp(k, "location") == 0)
			loc = v;
		else if (strcmp(k, "offset") == 0)
			off = v;
		else if (strcmp(k, "length") == 0)
			len = v;
	}
	char vb[SHOW_MAX * 4 + 16];
	if (!dir) {
		*err = xstrdup("its data is in an external file (gdcc reads external data only for the tensors of a model file)");
		return false;
	}
	if (!loc) {
		*err = xstrdup("its data is external but external_data has no \"location\"");
		return false;
	}
	if (!external_location_ok(loc)) {
		*err = xasprintf("external data location \"%s\" is not a relative path inside the model's directory",
				 escape_to(vb, sizeof vb, loc));
		return false;
	}
	uint64_t o = 0, l = bytes;
	if (off && !parse_bytes(off, &o)) {
		*err = xasprintf("external data offset \"%s\" is not a byte count", escape_to(vb, sizeof vb, off));
		return false;
	}
	if (len && !parse_bytes(len, &l)) {
		*err = xasprintf("external data length \"%s\" is not a byte count", escape_to(vb, sizeof vb, len));
		return false;
	}
	if (l != bytes) {
		*err = xasprintf("its external data is %" PRIu64 " bytes, its shape needs %" PRIu64, l, bytes);
		return false;
	}
	char *path = xasprintf("%s/%s", dir, loc);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	bool ok = false;
	if (fd < 0 || fstat(fd, &st) != 0) {
		*err = xasprintf("cannot read its external data %s: %s", escape_to(vb, sizeof vb, path), strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		*err = xasprintf("its external data %s is not a regular file", escape_to(vb, sizeof vb, path));
	} else if (o > (uint64_t)st.st_size || (uint64_t)st.st_size - o < bytes) {
		*err = xasprintf("its external data %s holds %" PRIu64 " bytes, the tensor needs %" PRIu64 " at offset %" PRIu64,
				 escape_to(vb, sizeof vb, path), (uint64_t)st.st_size, bytes, o);
	} else {
		uint8_t *p = t->data;
		uint64_t done = 0;
		while (done < bytes) {
			size_t want = bytes - done > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)(bytes - done);
			ssize_t r = pread(fd, p + done, want, (off_t)(o + done));
			if (r <= 0) {
				*err = xasprintf("cannot read its external data %s: %s", escape_to(vb, sizeof vb, path),
						 r < 0 ? strerror(errno) : "the file is shorter than it was");
				break;
			}
			done += (uint64_t)r;
		}
		ok = done == bytes;
	}
	if (fd >= 0)
		close(fd);
	free(path);
	return ok;
}

/* The same; `steal` (tp itself, or NULL): raw data is taken from the
 * message instead of copied (an initializer, read once: a large model's
 * weights are not copied again); dir: the model's directory, where external
 * data is looked for (NULL: external data is an error). */
static Tensor *tensor_of_proto(const Onnx__TensorProto *tp, Onnx__TensorProto *steal, const char *dir, char **err)
{
	DType dt = dtype_of(tp->data_type);
	if (dt == DT_INVALID) {
		*err = xasprintf("ONNX data type %s (%d) is not supported by gdcc (f32, i32, i64, bool)",
				 onnx_dtype_name(tp->data_type), tp->data_type);
		return NULL;
	}
	if (tp->n_dims > MAX_RANK) {
		*err = xasprintf("rank %zu is not supported (at most %d)", tp->n_dims, MAX_RANK);
		return NULL;
	}
	if (tp->segment) {
		*err = xstrdup("a segment of a tensor is not supported");
		return NULL;
	}
	Shape s = {(int)tp->n_dims, {0}};
	for (size_t i = 0; i < tp->n_dims; i++)
		s.dim[i] = tp->dims[i];
	char *e = tensor_size_error(dt, &s);
	if (e) {
		*err = e;
		return NULL;
	}
	int64_t n;
	uint64_t bytes;
	if (!shape_numel_checked(&s, &n) || !type_bytes_checked(dt, &s, &bytes)) {
		*err = xstrdup("its size does not fit in 64 bits");
		return NULL;
	}
	if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		Tensor *t = tensor_new(dt, &s);
		if (!read_external(tp, dir, t, bytes, err)) {
			tensor_free(t);
			return NULL;
		}
		if (dt == DT_BOOL)
			for (uint64_t i = 0; i < bytes; i++)
				((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
		return t;
	}
	if (tp->has_raw_data) {
		if (tp->raw_data.len != bytes) {
			*err = xasprintf("it holds %zu bytes of raw data, its shape needs %" PRIu64, tp->raw_data.len, bytes);
			return NULL;
		}
		Tensor *t;
		if (steal && bytes) {
			/* (protobuf-c's default allocator is malloc: tensor_free frees it) */
			t = xcalloc(1, sizeof *t);
			t->type.dtype = dt;
			t->type.shape = s;
			t->data = steal->raw_data.data;
			steal->raw_data.data = NULL;
			steal->raw_data.len = 0;
			steal->has_raw_data = false;
		} else {
			t = tensor_new(dt, &s);
			if (bytes)
				memcpy(t->data, tp->raw_data.data, bytes);
		}
		if (dt == DT_BOOL)
			for (uint64_t i = 0; i < bytes; i++)
				((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
		return t;
	}
	size_t have = dt == DT_F32 ? tp->n_float_data : dt == DT_I64 ? tp->n_int64_data : tp->n_int32_data;
	if ((uint64_t)have != (uint64_t)n) {
		*err = xasprintf("it holds %zu values, its shape needs %" PRId64, have, n);
		return NULL;
	}
	Tensor *t = tensor_new(dt, &s);
	for (int64_t i = 0; i < n; i++) {
		if (dt == DT_F32)
			((float *)t->data)[i] = tp->float_data[i];
		else if (dt == DT_I64)
			((int64_t *)t->data)[i] = tp->int64_data[i];
		else if (dt == DT_I32)
			((int32_t *)t->data)[i] = tp->int32_data[i];
		else
			((uint8_t *)t->data)[i] = tp->int32_data[i] != 0;
	}
	return t;
}

/* Is every length-delimited field that holds a message nested at most
 * MAX_NESTING deep?  (protobuf-c's parser recurses on nested messages; a
 * deep one would overflow the stack.)  Malformed data is left to the parser
 * to report. */
static bool nesting_ok(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len)
{
	struct {
		const ProtobufCMessageDescriptor *desc;
		const uint8_t *end;
	} stack[MAX_NESTING + 1];
	int depth = 0;
	stack[0].desc = desc;
	stack[0].end = data + len;
	const uint8_t *p = data;
	for (;;) {
		while (depth > 0 && p >= stack[depth].end)
			depth--;
		if (p >= stack[depth].end)
			return true;
		uint64_t tag = 0, v = 0;
		int sh = 0;
		const uint8_t *end = stack[depth].end;
		do {
			if (p >= end || sh > 63)
				return true;
			tag |= (uint64_t)(*p & 0x7f) << sh;
			sh += 7;
		} while (*p++ & 0x80);
		switch (tag & 7) {
		case 0:
			do {
				if (p >= end)
					return true;
			} while (*p++ & 0x80);
			break;
		case 1:
			if ((size_t)(end - p) < 8)
				return true;
			p += 8;
			break;
		case 5:
			if ((size_t)(end - p) < 4)
				return true;
			p += 4;
			break;
		case 2: {
			sh = 0;
			do {
				if (p >= end || sh > 63)
					return true;
				v |= (uint64_t)(*p & 0x7f) << sh;
				sh += 7;
			} while (*p++ & 0x80);
			if (v > (uint64_t)(end - p))
				return true;
			const ProtobufCFieldDescriptor *f =
				tag >> 3 <= UINT32_MAX
					? protobuf_c_message_descriptor_get_field(stack[depth].desc, (unsigned)(tag >> 3))
					: NULL;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				if (depth == MAX_NESTING)
					return false;
				depth++;
				stack[depth].desc = f->descriptor;
				stack[depth].end = p + v;
			} else {
				p += v;
			}
			break;
		}
		default:
			return true; /* groups and bad wire types: the parser rejects them */
		}
	}
}

static Tensor *tensor_from_buffer(const uint8_t *data, size_t len, char **err)
{
	if (!nesting_ok(&onnx__tensor_proto__descriptor, data, len)) {
		*err = xasprintf("not a TensorProto: messages nested more than %d deep", MAX_NESTING);
		return NULL;
	}
	Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, data);
	if (!tp) {
		*err = xstrdup("not a TensorProto (malformed protobuf)");
		return NULL;
	}
	char *e = NULL;
	Tensor *t = tensor_of(tp, &e);
	if (!t) {
		char nb[SHOW_MAX * 4 + 16];
		*err = tp->name && tp->name[0] ? xasprintf("tensor '%s': %s", escape_to(nb, sizeof nb, tp->name), e)
					       : xasprintf("tensor: %s", e);
		free(e);
	}
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return t;
}

Tensor *onnx_tensor_from_buffer(const uint8_t *data, size_t len, char **err)
{
	return tensor_from_buffer(data, len, err);
}

Tensor *onnx_load_tensor(const char *path, char **err)
{
	size_t len;
	char *buf = read_file(path, &len);
	if (!buf) {
		*err = xasprintf("cannot open: %s", strerror(errno));
		return NULL;
	}
	Tensor *t = tensor_from_buffer((const uint8_t *)buf, len, err);
	free(buf);
	return t;
}

/* ---- sequences and optionals of the test data ----------------------------------------
 * SequenceProto and OptionalProto are onnx-data.proto's, which Debian's
 * onnx.proto lacks: their fields are read off the wire here.  Both hold
 * their tensors at field 3 (SequenceProto.tensor_values, repeated;
 * OptionalProto.tensor_value) and OptionalProto its sequence at field 5. */
static bool wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* The length-delimited fields 3 (up to max of them, *n3 counted) and the
 * last field 5 of a message; false when it is not well-formed. */
static bool wire_fields(const uint8_t *p, size_t len, const uint8_t **f3, size_t *l3, int max, int *n3,
			const uint8_t **f5, size_t *l5)
{
	const uint8_t *end = p + len;
	*n3 = 0;
	*f5 = NULL;
	while (p < end) {
		uint64_t key, v;
		if (!wire_varint(&p, end, &key))
			return false;
		switch (key & 7) {
		case 0:
			if (!wire_varint(&p, end, &v))
				return false;
			break;
		case 1:
			if (end - p < 8)
				return false;
			p += 8;
			break;
		case 5:
			if (end - p < 4)
				return false;
			p += 4;
			break;
		case 2:
			if (!wire_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return false;
			if (key >> 3 == 3) {
				if (*n3 < max)
					f3[*n3] = p, l3[*n3] = (size_t)v;
				++*n3;
			} else if (key >> 3 == 5) {
				*f5 = p, *l5 = (size_t)v;
			}
			p += v;
			break;
		default: return false;
		}
	}
	return true;
}

/* Element `part` (or the count, part = INT32_MIN) of the tensors in buf. */
static Tensor *part_of(const uint8_t *buf, size_t len, int part, int *count, char **err)
{
	enum { MAX_ELEMS = 1 << 16 };
	const uint8_t *f3[1], *f5;
	size_t l3[1], l5;
	int n3;
	int want = part >= 0 ? part : 0;
	/* (a pass for the count, then one that keeps element want) */
	const uint8_t *p = buf;
	size_t l = len;
	for (int depth = 0; depth < 2; depth++) {
		if (!wire_fields(p, l, f3, l3, 1, &n3, &f5, &l5)) {
			*err = xstrdup("not a SequenceProto or OptionalProto (malformed protobuf)");
			return NULL;
		}
		if (n3 == 0 && f5) { /* an OptionalProto's sequence */
			p = f5, l = l5;
			continue;
		}
		break;
	}
	if (count) {
		*count = n3 > MAX_ELEMS ? -1 : n3;
		if (*count < 0)
			*err = xasprintf("a sequence of more than %d tensors", MAX_ELEMS);
		return NULL;
	}
	if (want >= n3) {
		*err = xasprintf("it holds %d tensor%s, not element %d", n3, n3 == 1 ? "" : "s", want + 1);
		return NULL;
	}
	/* element want: walk again keeping it */
	const uint8_t *end = p + l, *q = p;
	int k = 0;
	while (q < end) {
		uint64_t key, v;
		wire_varint(&q, end, &key);
		if ((key & 7) == 2) {
			wire_varint(&q, end, &v);
			if (key >> 3 == 3 && k++ == want)
				return tensor_from_buffer(q, (size_t)v, err);
			q += v;
		} else if ((key & 7) == 0) {
			wire_varint(&q, end, &v);
		} else {
			q += (key & 7) == 1 ? 8 : 4;
		}
	}
	*err = xstrdup("element not found");
	return NULL;
}

Tensor *onnx_load_part(const char *path, int part, char **err)
{
	if (part == ONNX_WHOLE)
		return onnx_load_tensor(path, err);
	size_t len;
	char *buf = read_file(path, &len);
	if (!buf) {
		*err = xasprintf("cannot open: %s", strerror(errno));
		return NULL;
	}
	Tensor *t = part_of((const uint8_t *)buf, len, part, NULL, err);
	free(buf);
	return t;
}

int onnx_count_parts(const char *path, char **err)
{
	size_t len;
	char *buf = read_file(path, &len);
	if (!buf) {
		*err = xasprintf("cannot open: %s", strerror(errno));
		return -1;
	}
	int n = -1;
	part_of((const uint8_t *)buf, len, 0, &n, err);
	free(buf);
	return n;
}

/* ---- values known at import time ----------------------------------------------- */
static Known *known(Imp *im, const Value *v)
{
	if (v->id >= im->nknown) {
		int n = im->nknown ? im->nknown : 64;
		while (n <= v->id)
			n *= 2;
		im->known = xrealloc(im->known, (size_t)n * sizeof *im->known);
		memset(im->known + im->nknown, 0, (size_t)(n - im->nknown) * sizeof *im->known);
		im->nknown = n;
	}
	return &im->known[v->id];
}

static const Tensor *value_of(Imp *im, const Value *v)
{
	return v ? known(im, v)->t : NULL;
}

static bool small(const TensorType *t)
{
	int64_t n;
	return shape_numel_checked(&t->shape, &n) && n <= FOLD_MAX;
}

/* After n is typed: remember its results' values when they can be computed
 * now (its operands known, every tensor small, the op cheap). */
static void fold_failed(Imp *im, Node *n, const char *why)
{
	for (int i = 0; i < n->nout; i++) {
		Known *k = known(im, n->out[i]);
		free(k->why);
		k->why = why ? xstrdup(why) : NULL;
	}
}

static void fold(Imp *im, Node *n)
{
	if (n->op == OP_CONSTANT) {
		if (n->init.kind == INIT_TENSOR)
			known(im, n->out[0])->t = n->init.data;
		return;
	}
	if (n->op == OP_MATMUL || n->op == OP_GEMM || n->op == OP_CONV || n->op == OP_MAXPOOL || n->op == OP_AVGPOOL)
		return; /* work not bounded by the sizes of the tensors */
	uint64_t bytes = 0;
	for (int i = 0; i < n->nout; i++) {
		uint64_t b;
		if (!small(&n->out[i]->type) || !type_bytes_checked(n->out[i]->type.dtype, &n->out[i]->type.shape, &b))
			return;
		bytes += b;
	}
	for (int i = 0; n->op != OP_SHAPE && i < n->nin; i++) {
		Known *k = known(im, n->in[i]);
		if (!k->t || !small(&k->t->type)) {
			if (k->why) /* why an operand is not known is why this is not */
				fold_failed(im, n, k->why);
			return;
		}
	}
	if (im->folded_bytes + bytes > FOLD_BUDGET) {
		fold_failed(im, n, "the values computed when compiling are above their budget (64 MiB)");
		return;
	}
	Tensor **in = xcalloc((size_t)n->nin, sizeof *in);
	Tensor shape_of = {0};
	for (int i = 0; i < n->nin; i++) {
		if (n->op == OP_SHAPE) { /* only the operand's static shape */
			shape_of.type = n->in[0]->type;
			in[i] = &shape_of;
		} else {
			in[i] = known(im, n->in[i])->t;
		}
	}
	Tensor **out = xcalloc((size_t)n->nout, sizeof *out);
	for (int i = 0; i < n->nout; i++)
		out[i] = tensor_new(n->out[i]->type.dtype, &n->out[i]->type.shape);
	Diag scratch;
	diag_init(&scratch);
	bool ok = op_info[n->op].kernel(n, in, out, &scratch);
	if (ok) {
		for (int i = 0; i < n->nout; i++) {
			Known *k = known(im, n->out[i]);
			k->t = out[i];
			k->owned = true;
		}
		im->folded_bytes += bytes;
	} else {
		for (int i = 0; i < n->nout; i++)
			tensor_free(out[i]);
		fold_failed(im, n, scratch.n ? scratch.entries[0].msg : NULL);
	}
	diag_free(&scratch);
	free(in);
	free(out);
}

/* Type a new node and fold it; false after an error. */
static bool typed(Imp *im, Node *n)
{
	if (!graph_check_node(im->g, n, im->d)) {
		const Onnx__NodeProto *np = im->node;
		if (np && np->name && np->name[0])
			diag_note(im->d, where(im), "in node '%s' (%s, opset %d)", Q(im, np->name), Q(im, np->op_type), im->opset);
		else if (np)
			diag_note(im->d, where(im), "in node %zu (%s, opset %d)", im->node_index + 1, Q(im, np->op_type), im->opset);
		im->ok = false;
		return false;
	}
	fold(im, n);
	return true;
}

/* A constant node holding t (taken). */
static Value *constant(Imp *im, const char *onnx_name, Tensor *t)
{
	char *name = ir_name(im, onnx_name);
	ConstInit ci = {.kind = INIT_TENSOR, .data = t};
	Node *n = graph_add_const(im->g, name, t->type.dtype, &t->type.shape, ci, where(im));
	free(name);
	return typed(im, n) ? n->out[0] : NULL;
}

/* ---- attributes ---------------------------------------------------------------------- */
static const Onnx__AttributeProto *att(const Onnx__NodeProto *np, const char *name)
{
	for (size_t i = 0; i < np->n_attribute; i++)
		if (strcmp(np->attribute[i]->name, name) == 0)
			return np->attribute[i];
	return NULL;
}

static const char *input_name(const Onnx__NodeProto *np, size_t i)
{
	return i < np->n_input && np->input[i][0] ? np->input[i] : NULL;
}

static Tensor *spec_input(Imp *im, const Value *v);

/* An operand gdcc needs when compiling is not known then. */
static void not_known(Imp *im, const Value *v, const char *name, const char *what)
{
	if (v->is_input)
		fail(im, "its %s ('%s') is not known when compiling: it is the model's input '%s' (shapes are static in "
			 "gdcc: give its value with --bind %s=FILE.npy, or run's --input)",
		     what, Q(im, name), Q(im, v->src_name ? v->src_name : v->name), Q(im, v->src_name ? v->src_name : v->name));
	else
		fail(im, "its %s ('%s') is not known when compiling: dynamic shapes are not supported", what, Q(im, name));
}

/* v's value when compiling: known, or the test data's / a binding's (then
 * *owned, to free); NULL after the message naming `what`. */
static const Tensor *compile_time_value(Imp *im, const Value *v, const char *name, const char *what, Tensor **owned)
{
	const Tensor *t = value_of(im, v);
	*owned = t ? NULL : spec_input(im, v);
	if (*owned)
		return *owned;
	if (!t) {
		const char *why = known(im, v)->why;
		if (why)
			fail(im, "its %s ('%s') cannot be computed when compiling: %s", what, Q(im, name), why);
		else
			not_known(im, v, name, what);
	}
	return t;
}

/* An input that gdcc takes as an attribute: its values as integers. */
static int64_t *const_ints(Imp *im, const char *name, int *n, const char *what)
{
	Value *v = sym_value(im, name);
	if (!v) {
		fail(im, "its %s ('%s') is not defined before the node", what, Q(im, name));
		return NULL;
	}
	Tensor *owned;
	const Tensor *t = compile_time_value(im, v, name, what, &owned);
	if (!t)
		return NULL;
	int64_t *r = NULL;
	int64_t cnt = tensor_numel(t);
	if (!dtype_is_int(t->type.dtype) && t->type.dtype != DT_BOOL) {
		fail(im, "its %s ('%s') must hold integers, not %s", what, Q(im, name), dtype_name(t->type.dtype));
	} else if (cnt > CONST_INTS_MAX) {
		fail(im, "its %s ('%s') has %" PRId64 " entries, more than gdcc takes (%d)", what, Q(im, name), cnt,
		     CONST_INTS_MAX);
	} else {
		*n = (int)cnt;
		r = xcalloc((size_t)(cnt ? cnt : 1), sizeof *r);
		for (int64_t i = 0; i < cnt; i++)
			r[i] = tensor_get_i(t, i);
	}
	tensor_free(owned);
	return r;
}

/* Operand `at` of np, when present and a constant list of integers, as
 * attribute `attr` of n (where later opsets moved an attribute to an
 * input); an operand that is not constant is reported by const_ints. */
static bool ints_operand(Imp *im, const Onnx__NodeProto *np, size_t at, Node *n, const char *attr)
{
	const char *nm = input_name(np, at);
	int k;
	int64_t *v = nm ? const_ints(im, nm, &k, attr) : NULL;
	if (v)
		node_set_ints(n, attr, v, k);
	free(v);
	return v != NULL;
}

static Tensor *copy_of(const Tensor *t)
{
	Tensor *c = tensor_new(t->type.dtype, &t->type.shape);
	if (tensor_bytes(t))
		memcpy(c->data, t->data, tensor_bytes(t));
	return c;
}

/* The binding for ONNX input name, or NULL. */
static OnnxBinding *binding_of(Imp *im, const char *name)
{
	for (int i = 0; i < im->nbinds; i++)
		if (strcmp(im->binds[i].name, name) == 0)
			return &im->binds[i];
	return NULL;
}

/* A graph input's value in the test data or the bindings being
 * specialized to (a copy). */
static Tensor *spec_input(Imp *im, const Value *v)
{
	if (!v || !v->is_input || !known(im, v)->input)
		return NULL;
	OnnxBinding *b = binding_of(im, v->src_name ? v->src_name : v->name);
	if (b && b->t->type.dtype == v->type.dtype && shape_eq(&b->t->type.shape, &v->type.shape)) {
		b->used = true;
		return copy_of(b->t);
	}
	if (!im->spec_dir)
		return NULL;
	int k = known(im, v)->input - 1;
	char *p = xasprintf("%s/input_%d.pb", im->spec_dir, im->g->input_origin[k]), *err = NULL;
	Tensor *t = onnx_load_tensor(p, &err);
	free(p);
	free(err);
	return t;
}

static bool const_float(Imp *im, const char *name, double *out, const char *what)
{
	Value *v = sym_value(im, name);
	const Tensor *t = value_of(im, v);
	Tensor *owned = t ? NULL : spec_input(im, v);
	if (owned)
		t = owned;
	if (!t || tensor_numel(t) != 1) {
		fail(im, "its %s ('%s') must be a constant scalar", what, Q(im, name));
		tensor_free(owned);
		return false;
	}
	*out = tensor_get_f(t, 0);
	tensor_free(owned);
	return true;
}

/* An attribute for messages: its name. */
static const char *attr_what(Imp *im, const Onnx__AttributeProto *a)
{
	return Q(im, a->name);
}

/* Copy ONNX attributes onto a gdcc node by the op's attribute specs (with
 * the renames the two vocabularies need). */
static void copy_attrs(Imp *im, const Onnx__NodeProto *np, Node *n)
{
	for (size_t i = 0; i < np->n_attribute; i++) {
		const Onnx__AttributeProto *a = np->attribute[i];
		const char *name = a->name;
		if (strcmp(name, "transA") == 0)
			name = "trans_a";
		else if (strcmp(name, "transB") == 0)
			name = "trans_b";
		const AttrSpec *spec = op_attr_spec(n->op, name);
		if (!spec || spec->kind == ATTR_DTYPE || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)
			continue; /* handled by the translation, or ignorable (checked there) */
		switch (a->type) {
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: node_set_int(n, name, a->i); break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: node_set_float(n, name, a->f); break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
			size_t len = a->s.data ? a->s.len : 0;
			bool printable = true;
			for (size_t k = 0; k < len; k++)
				printable &= a->s.data[k] >= 0x20 && a->s.data[k] < 0x7f;
			if (!printable) {
				char *raw = xstrndup(len ? (const char *)a->s.data : "", len);
				for (size_t k = 0; k < len; k++)
					raw[k] = raw[k] ? raw[k] : '\x01'; /* an embedded NUL shows as \x01 */
				fail(im, "attribute '%s' = \"%s\" is not a printable string", attr_what(im, a), Q(im, raw));
				free(raw);
				break;
			}
			char *s = xstrndup(len ? (const char *)a->s.data : "", len);
			node_set_string(n, name, s);
			free(s);
			break;
		}
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
			if (a->n_ints > CONST_INTS_MAX) {
				fail(im, "attribute '%s' has %zu entries, more than gdcc takes (%d)", attr_what(im, a), a->n_ints,
				     CONST_INTS_MAX);
				break;
			}
			node_set_ints(n, name, a->ints, (int)a->n_ints);
			break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
			if (a->n_floats > CONST_INTS_MAX) {
				fail(im, "attribute '%s' has %zu entries, more than gdcc takes (%d)", attr_what(im, a),
				     a->n_floats, CONST_INTS_MAX);
				break;
			}
			double *f = xcalloc(a->n_floats ? a->n_floats : 1, sizeof *f);
			for (size_t k = 0; k < a->n_floats; k++)
				f[k] = a->floats[k];
			node_set_floats(n, name, f, (int)a->n_floats);
			free(f);
			break;
		}
		default: fail(im, "attribute '%s' has a type gdcc does not read", attr_what(im, a));
		}
	}
}

/* ---- nodes ------------------------------------------------------------------------------ */
typedef struct {
	const char *onnx;
	OpKind op;
	int ndata;        /* inputs that stay operands (the rest become attributes or are folded); -1 all */
} OpMap;

static const OpMap op_map[] = {
	{"Add", OP_ADD, -1}, {"Sub", OP_SUB, -1}, {"Mul", OP_MUL, -1}, {"Div", OP_DIV, -1}, {"Pow", OP_POW, -1},
	{"Max", OP_MAX, -1}, {"Min", OP_MIN, -1}, {"Sum", OP_SUM, -1}, {"Neg", OP_NEG, -1}, {"Abs", OP_ABS, -1},
	{"Exp", OP_EXP, -1}, {"Log", OP_LOG, -1}, {"Sqrt", OP_SQRT, -1}, {"Reciprocal", OP_RECIPROCAL, -1},
	{"Relu", OP_RELU, -1}, {"LeakyRelu", OP_LEAKY_RELU, -1}, {"Sigmoid", OP_SIGMOID, -1}, {"Tanh", OP_TANH, -1},
	{"Erf", OP_ERF, -1}, {"Gelu", OP_GELU, -1}, {"Clip", OP_CLIP, 1}, {"HardSigmoid", OP_HARDSIGMOID, -1},
	{"HardSwish", OP_HARDSWISH, -1}, {"Identity", OP_IDENTITY, -1}, {"Dropout", OP_DROPOUT, 1},
	{"Softmax", OP_SOFTMAX, -1}, {"LogSoftmax", OP_LOGSOFTMAX, -1}, {"ReduceMean", OP_REDUCE_MEAN, 1},
	{"ReduceSum", OP_REDUCE_SUM, 1}, {"ReduceMax", OP_REDUCE_MAX, 1}, {"ReduceMin", OP_REDUCE_MIN, 1},
	{"ReduceProd", OP_REDUCE_PROD, 1}, {"ReduceL1", OP_REDUCE_L1, 1}, {"ReduceL2", OP_REDUCE_L2, 1},
	{"ReduceLogSum", OP_REDUCE_LOG_SUM, 1}, {"ReduceLogSumExp", OP_REDUCE_LOG_SUM_EXP, 1},
	{"ReduceSumSquare", OP_REDUCE_SUM_SQUARE, 1},
	{"MatMul", OP_MATMUL, -1}, {"Gemm", OP_GEMM, -1}, {"Conv", OP_CONV, -1}, {"MaxPool", OP_MAXPOOL, -1},
	{"AveragePool", OP_AVGPOOL, -1}, {"GlobalAveragePool", OP_GLOBAL_AVGPOOL, -1},
	{"GlobalMaxPool", OP_GLOBAL_MAXPOOL, -1}, {"BatchNormalization", OP_BATCHNORM, -1},
	{"LayerNormalization", OP_LAYERNORM, -1}, {"Reshape", OP_RESHAPE, 1}, {"Transpose", OP_TRANSPOSE, -1},
	{"Flatten", OP_FLATTEN, -1}, {"Concat", OP_CONCAT, -1}, {"Split", OP_SPLIT, 1}, {"Slice", OP_SLICE, 1},
	{"Squeeze", OP_SQUEEZE, 1}, {"Unsqueeze", OP_UNSQUEEZE, 1}, {"Gather", OP_GATHER, -1}, {"Expand", OP_EXPAND, 1},
	{"Pad", OP_PAD, 1}, {"Shape", OP_SHAPE, -1}, {"ConstantOfShape", OP_CONSTANT_OF_SHAPE, 0},
	{"Equal", OP_EQUAL, -1}, {"Less", OP_LESS, -1}, {"LessOrEqual", OP_LESS_EQUAL, -1}, {"Greater", OP_GREATER, -1},
	{"GreaterOrEqual", OP_GREATER_EQUAL, -1}, {"And", OP_AND, -1}, {"Or", OP_OR, -1}, {"Xor", OP_XOR, -1},
	{"Not", OP_NOT, -1}, {"Where", OP_WHERE, -1}, {"Cast", OP_CAST, -1}, {"CastLike", OP_CAST, 1},
	{"PRelu", OP_PRELU, -1}, {"Elu", OP_ELU, -1}, {"Selu", OP_SELU, -1}, {"Celu", OP_CELU, -1},
	{"Softplus", OP_SOFTPLUS, -1}, {"Softsign", OP_SOFTSIGN, -1}, {"ThresholdedRelu", OP_THRESHOLDED_RELU, -1},
	{"Shrink", OP_SHRINK, -1}, {"Sign", OP_SIGN, -1}, {"Floor", OP_FLOOR, -1}, {"Ceil", OP_CEIL, -1},
	{"Round", OP_ROUND, -1}, {"Sinh", OP_SINH, -1}, {"Cosh", OP_COSH, -1}, {"Asinh", OP_ASINH, -1},
	{"Acosh", OP_ACOSH, -1}, {"Atanh", OP_ATANH, -1}, {"Mean", OP_MEAN, -1}, {"IsNaN", OP_ISNAN, -1},
	{"IsInf", OP_ISINF, -1}, {"Mod", OP_MOD, -1}, {"ScatterND", OP_SCATTER_ND, -1}, {"Sin", OP_SIN, -1}, {"Cos", OP_COS, -1}, {"Tan", OP_TAN, -1},
	{"Asin", OP_ASIN, -1}, {"Acos", OP_ACOS, -1}, {"Atan", OP_ATAN, -1},
	{"Size", OP_SIZE, -1}, {"Range", OP_RANGE, 0}, {"ArgMax", OP_ARGMAX, -1}, {"ArgMin", OP_ARGMIN, -1},
	{"Hardmax", OP_HARDMAX, -1}, {"Trilu", OP_TRILU, 1}, {"GatherElements", OP_GATHER_ELEMENTS, -1},
	{"Tile", OP_TILE, 1}, {"OneHot", OP_ONE_HOT, -1}, {"EyeLike", OP_EYE_LIKE, -1},
	{"DepthToSpace", OP_DEPTH_TO_SPACE, -1}, {"SpaceToDepth", OP_SPACE_TO_DEPTH, -1},
	{"GatherND", OP_GATHER_ND, -1}, {"TopK", OP_TOPK, 1}, {"OptionalGetElement", OP_IDENTITY, -1},
	{"Optional", OP_IDENTITY, -1},
};

/* A node of np's results: result i named after np's output i (absent or
 * empty: "unused"). */
static Node *add_node(Imp *im, OpKind op, Value **in, int nin, const Onnx__NodeProto *np, int nout)
{
	char **names = xcalloc((size_t)(nout ? nout : 1), sizeof *names);
	for (int i = 0; i < nout; i++)
		names[i] = ir_name(im, i < (int)np->n_output && np->output[i][0] ? np->output[i] : "unused");
	Node *n = graph_add_node(im->g, op, in, nin, (const char *const *)names, nout, where(im));
	for (int i = 0; i < nout; i++)
		free(names[i]);
	free(names);
	if (!n)
		fail(im, "internal error: a result name is taken");
	return n;
}

/* Bind the node's results, type it. */
static bool finish(Imp *im, Node *n, const Onnx__NodeProto *np)
{
	if (!typed(im, n))
		return false;
	for (int i = 0; i < n->nout && i < (int)np->n_output; i++)
		if (np->output[i][0] && !sym_bind(im, np->output[i], n->out[i]))
			return false;
	return true;
}

/* softmax and logsoftmax before opset 13: over the 2-D view at axis. */
static bool old_softmax(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *x)
{
	const Onnx__AttributeProto *a = att(np, "axis");
	int rank = x->type.shape.rank;
	int64_t axis = a ? a->i : 1;
	if (axis < 0 && axis >= -rank)
		axis += rank;
	if (axis < 0 || axis > rank) {
		fail(im, "axis %" PRId64 " is out of range", a ? a->i : 1);
		return false;
	}
	if (axis == rank - 1 || rank == 0) {
		Node *n = add_node(im, op, &x, 1, np, 1);
		if (!n)
			return false;
		node_set_int(n, "axis", -1);
		return finish(im, n, np);
	}
	int64_t rows = 1, cols = 1;
	for (int i = 0; i < rank; i++) {
		int64_t *p = i < axis ? &rows : &cols;
		if (__builtin_mul_overflow(*p, x->type.shape.dim[i], p)) {
			fail(im, "the 2-D view of its operand has too many elements");
			return false;
		}
	}
	char *t1 = xasprintf("%s.rows", np->output[0]), *t2 = xasprintf("%s.soft", np->output[0]);
	char *n1 = ir_name(im, t1), *n2 = ir_name(im, t2);
	free(t1), free(t2);
	const char *names1[] = {n1}, *names2[] = {n2};
	Node *r = graph_add_node(im->g, OP_RESHAPE, &x, 1, names1, 1, where(im));
	int64_t shp[2] = {rows, cols};
	node_set_ints(r, "shape", shp, 2);
	free(n1);
	if (!typed(im, r)) {
		free(n2);
		return false;
	}
	Value *rv = r->out[0];
	Node *s = graph_add_node(im->g, op, &rv, 1, names2, 1, where(im));
	node_set_int(s, "axis", 1);
	free(n2);
	if (!typed(im, s))
		return false;
	Value *sv = s->out[0];
	Node *back = add_node(im, OP_RESHAPE, &sv, 1, np, 1);
	if (!back)
		return false;
	node_set_ints(back, "shape", x->type.shape.dim, rank);
	return finish(im, back, np);
}

static bool import_constant(Imp *im, const Onnx__NodeProto *np)
{
	if (np->n_output != 1 || !np->output[0][0]) {
		fail(im, "a Constant needs exactly one named result (it has %zu)", np->n_output);
		return false;
	}
	if (np->n_input) {
		fail(im, "a Constant takes no inputs (it has %zu)", np->n_input);
		return false;
	}
	Tensor *t = NULL;
	char *err = NULL;
	const Onnx__AttributeProto *a;
	if ((a = att(np, "value"))) {
		if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR || !a->t)
			err = xstrdup("attribute 'value' holds no tensor");
		else if (!(t = tensor_of_proto(a->t, NULL, im->data_dir, &err))) {
			char *e = xasprintf("attribute 'value': %s", err);
			free(err);
			err = e;
		}
	} else if ((a = att(np, "value_float"))) {
		Shape s0 = {0};
		t = tensor_new(DT_F32, &s0);
		((float *)t->data)[0] = a->f;
	} else if ((a = att(np, "value_floats"))) {
		Shape s1 = {1, {(int64_t)a->n_floats}};
		if (!(err = tensor_size_error(DT_F32, &s1))) {
			t = tensor_new(DT_F32, &s1);
			for (size_t i = 0; i < a->n_floats; i++)
				((float *)t->data)[i] = a->floats[i];
		}
	} else if ((a = att(np, "value_int"))) {
		Shape s0 = {0};
		t = tensor_new(DT_I64, &s0);
		((int64_t *)t->data)[0] = a->i;
	} else if ((a = att(np, "value_ints"))) {
		Shape s1 = {1, {(int64_t)a->n_ints}};
		if (!(err = tensor_size_error(DT_I64, &s1))) {
			t = tensor_new(DT_I64, &s1);
			for (size_t i = 0; i < a->n_ints; i++)
				((int64_t *)t->data)[i] = a->ints[i];
		}
	} else {
		err = xstrdup("a Constant without a value gdcc can read (value, value_float(s), value_int(s))");
	}
	if (!t) {
		fail(im, "%s", err);
		free(err);
		return false;
	}
	Value *v = constant(im, np->output[0], t);
	return v && sym_bind(im, np->output[0], v);
}

/* ---- for the translations in onnx_compose.h (onnx_imp.h) ---------------------------------- */
int imp_opset(const Imp *im)
{
	return im->opset;
}

void imp_fail(Imp *im, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	fail(im, "%s", msg);
	free(msg);
}

const char *imp_q(Imp *im, const char *s)
{
	return Q(im, s);
}

const Onnx__AttributeProto *imp_attr(const Onnx__NodeProto *np, const char *name)
{
	return att(np, name);
}

const char *imp_input_name(const Onnx__NodeProto *np, size_t i)
{
	return input_name(np, i);
}

Value *imp_value(Imp *im, const char *name, const char *what)
{
	Value *v = sym_value(im, name);
	if (!v)
		fail(im, "its %s ('%s') is not defined before the node", what, Q(im, name));
	return v;
}

const Tensor *imp_known(Imp *im, const Value *v)
{
	return value_of(im, v);
}

int64_t *imp_ints(Imp *im, const char *name, int *n, const char *what)
{
	return const_ints(im, name, n, what);
}

double *imp_floats(Imp *im, const char *name, int *n, const char *what)
{
	Value *v = sym_value(im, name);
	if (!v) {
		fail(im, "its %s ('%s') is not defined before the node", what, Q(im, name));
		return NULL;
	}
	Tensor *owned;
	const Tensor *t = compile_time_value(im, v, name, what, &owned);
	if (!t)
		return NULL;
	int64_t cnt = tensor_numel(t);
	if (cnt > CONST_INTS_MAX) {
		fail(im, "its %s ('%s') has %" PRId64 " entries, more than gdcc takes (%d)", what, Q(im, name), cnt,
		     CONST_INTS_MAX);
		tensor_free(owned);
		return NULL;
	}
	*n = (int)cnt;
	double *r = xcalloc((size_t)(cnt ? cnt : 1), sizeof *r);
	for (int64_t i = 0; i < cnt; i++)
		r[i] = tensor_get_f(t, i);
	tensor_free(owned);
	return r;
}

/* What a translation's steps are named after: the node's first result
 * that is not omitted (an RNN's Y may be, its Y_h not), else its name. */
static const char *step_base(const Onnx__NodeProto *np)
{
	for (size_t i = 0; i < np->n_output; i++)
		if (np->output[i][0])
			return np->output[i];
	return np->name && np->name[0] ? np->name : "unused";
}

Node *imp_step(Imp *im, const Onnx__NodeProto *np, OpKind op, Value **in, int nin, const char *what)
{
	if (!what)
		return add_node(im, op, in, nin, np, 1);
	char *t = xasprintf("%s.%s", step_base(np), what);
	Node *n = imp_step_named(im, op, in, nin, t);
	free(t);
	return n;
}

Node *imp_step_named(Imp *im, OpKind op, Value **in, int nin, const char *name)
{
	char *nm = ir_name(im, name);
	const char *names[] = {nm};
	Node *n = graph_add_node(im->g, op, in, nin, names, 1, where(im));
	free(nm);
	if (!n)
		fail(im, "internal error: a result name is taken");
	return n;
}

Value *imp_done(Imp *im, Node *n)
{
	return n && typed(im, n) ? n->out[0] : NULL;
}

bool imp_finish(Imp *im, Node *n, const Onnx__NodeProto *np)
{
	return n && finish(im, n, np);
}

bool imp_bind(Imp *im, const char *name, Value *v)
{
	return sym_bind(im, name, v);
}

Value *imp_const(Imp *im, const Onnx__NodeProto *np, const char *what, Tensor *t)
{
	char *nm = xasprintf("%s.%s", step_base(np), what);
	Value *v = constant(im, nm, t);
	free(nm);
	return v;
}

static bool import_node(Imp *im, const Onnx__NodeProto *np);

/* ---- sequence ops: at import time (a sequence is a list of values whose
 * length is known then) ------------------------------------------------------------- */
static const char *const seq_ops[] = {"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceErase",
				      "SequenceAt", "SequenceLength", "ConcatFromSequence", "SplitToSequence"};
enum { S_EMPTY, S_CONSTRUCT, S_INSERT, S_ERASE, S_AT, S_LENGTH, S_CONCAT, S_SPLIT };

static int seq_op_kind(const char *op)
{
	for (int i = 0; i < (int)(sizeof seq_ops / sizeof *seq_ops); i++)
		if (strcmp(op, seq_ops[i]) == 0)
			return i;
	return -1;
}

/* A position operand (one integer known when compiling) in [-n, n + end). */
static bool seq_position(Imp *im, const Onnx__NodeProto *np, size_t at, int n, bool end, int *pos)
{
	const char *nm = input_name(np, at);
	if (!nm) {
		*pos = end ? n : n - 1;
		return true;
	}
	int cnt;
	int64_t *v = const_ints(im, nm, &cnt, "position");
	if (!v)
		return false;
	int64_t p = v[0];
	free(v);
	if (cnt != 1 || p < -(int64_t)n || p > (int64_t)n - (end ? 0 : 1)) {
		fail(im, "its position %" PRId64 " is outside the sequence of %d", p, n);
		return false;
	}
	*pos = (int)(p < 0 ? p + n : p);
	return true;
}

static bool bind_seq(Imp *im, const Onnx__NodeProto *np, Seq *q)
{
	if (np->n_output < 1 || !np->output[0][0]) {
		fail(im, "it has no result");
		return false;
	}
	if (!strmap_add(&im->seqs, np->output[0], q)) {
		fail(im, "'%s' is defined twice (ONNX values are assigned once)", Q(im, np->output[0]));
		return false;
	}
	return true;
}

static bool import_seq_op(Imp *im, const Onnx__NodeProto *np, int kind)
{
	Seq *in = np->n_input && np->input[0][0] ? strmap_get(&im->seqs, np->input[0]) : NULL;
	bool wants_seq = kind != S_EMPTY && kind != S_CONSTRUCT && kind != S_SPLIT;
	if (wants_seq && !in) {
		fail(im, "input 1 is not a sequence");
		return false;
	}
	switch (kind) {
	case S_EMPTY: return bind_seq(im, np, seq_new(im, 0));
	case S_CONSTRUCT: {
		Seq *q = seq_new(im, (int)np->n_input);
		for (size_t i = 0; i < np->n_input; i++)
			if (!(q->v[i] = np->input[i][0] ? sym_value(im, np->input[i]) : NULL)) {
				fail(im, "input %zu is not a tensor defined before the node", i + 1);
				return false;
			}
		return bind_seq(im, np, q);
	}
	case S_INSERT: case S_ERASE: {
		int pos;
		if (!seq_position(im, np, kind == S_INSERT ? 2 : 1, in->n, kind == S_INSERT, &pos))
			return false;
		Value *t = NULL;
		if (kind == S_INSERT && !(t = np->n_input > 1 && np->input[1][0] ? sym_value(im, np->input[1]) : NULL)) {
			fail(im, "its tensor (input 2) is missing");
			return false;
		}
		Seq *q = seq_new(im, in->n + (kind == S_INSERT ? 1 : -1));
		for (int i = 0, j = 0; i < in->n; i++) {
			if (kind == S_INSERT && i == pos)
				q->v[j++] = t;
			if (kind == S_ERASE && i == pos)
				continue;
			q->v[j++] = in->v[i];
		}
		if (kind == S_INSERT && pos == in->n)
			q->v[in->n] = t;
		return bind_seq(im, np, q);
	}
	case S_AT: {
		int pos;
		if (!input_name(np, 1)) {
			fail(im, "its position (input 2) is missing");
			return false;
		}
		if (!seq_position(im, np, 1, in->n, false, &pos))
			return false;
		Node *n = add_node(im, OP_IDENTITY, &in->v[pos], 1, np, 1);
		return n && finish(im, n, np);
	}
	case S_LENGTH: {
		Shape s0 = {0};
		Tensor *t = tensor_new(DT_I64, &s0);
		((int64_t *)t->data)[0] = in->n;
		Value *v = constant(im, np->output[0], t);
		return v && sym_bind(im, np->output[0], v);
	}
	case S_CONCAT: {
		if (in->n < 1) {
			fail(im, "it concatenates an empty sequence");
			return false;
		}
		const Onnx__AttributeProto *aa = att(np, "axis"), *na = att(np, "new_axis");
		if (!aa) {
			fail(im, "attribute 'axis' is missing");
			return false;
		}
		int64_t axis = aa->i;
		bool new_axis = na && na->i;
		Value **items = xcalloc((size_t)in->n, sizeof *items);
		bool ok = true;
		for (int i = 0; ok && i < in->n; i++) {
			items[i] = in->v[i];
			if (new_axis) { /* each item gains the axis first */
				int r = items[i]->type.shape.rank + 1;
				int64_t a = axis < 0 ? axis + r : axis;
				char *b = xasprintf("%s.item%d", np->output[0], i);
				char *nm = ir_name(im, b);
				free(b);
				const char *names[] = {nm};
				Node *u = graph_add_node(im->g, OP_UNSQUEEZE, &items[i], 1, names, 1, where(im));
				free(nm);
				if (u)
					node_set_ints(u, "axes", &a, 1);
				ok = u && typed(im, u);
				if (ok)
					items[i] = u->out[0];
			}
		}
		Node *n = ok ? add_node(im, OP_CONCAT, items, in->n, np, 1) : NULL;
		free(items);
		if (!n)
			return false;
		node_set_int(n, "axis", axis);
		return finish(im, n, np);
	}
	case S_SPLIT: {
		Value *x = np->n_input && np->input[0][0] ? sym_value(im, np->input[0]) : NULL;
		if (!x) {
			fail(im, "its input is not a tensor defined before the node");
			return false;
		}
		const Onnx__AttributeProto *aa = att(np, "axis"), *ka = att(np, "keepdims");
		int rank = x->type.shape.rank;
		int64_t axis = aa ? aa->i : 0;
		if (axis < -rank || axis >= rank) {
			fail(im, "axis %" PRId64 " is out of range for rank %d", axis, rank);
			return false;
		}
		if (axis < 0)
			axis += rank;
		int64_t len = x->type.shape.dim[axis];
		int64_t *parts = NULL;
		int np_ = 0;
		const char *sn = input_name(np, 1);
		bool squeeze = false;
		if (sn) {
			int cnt;
			int64_t *v = const_ints(im, sn, &cnt, "split");
			if (!v)
				return false;
			Value *sv = sym_value(im, sn);
			if (sv && sv->type.shape.rank == 0) { /* chunks of v[0], the last shorter */
				if (v[0] < 1) {
					fail(im, "its split %" PRId64 " is not a positive length", v[0]);
					free(v);
					return false;
				}
				np_ = (int)((len + v[0] - 1) / v[0]);
				parts = xcalloc((size_t)(np_ ? np_ : 1), sizeof *parts);
				for (int i = 0; i < np_; i++)
					parts[i] = i < np_ - 1 ? v[0] : len - v[0] * (np_ - 1);
				free(v);
			} else {
				parts = v;
				np_ = cnt;
			}
		} else { /* pieces of one; keepdims 0 drops the axis */
			np_ = (int)len;
			parts = xcalloc((size_t)(np_ ? np_ : 1), sizeof *parts);
			for (int i = 0; i < np_; i++)
				parts[i] = 1;
			squeeze = ka && ka->i == 0;
		}
		Seq *q = seq_new(im, np_);
		bool ok = np_ > 0;
		Node *sp = NULL;
		if (ok) {
			char **names = xcalloc((size_t)np_, sizeof *names);
			for (int i = 0; i < np_; i++) {
				char *b = xasprintf("%s.part%d", np->output[0], i);
				names[i] = ir_name(im, b);
				free(b);
			}
			sp = graph_add_node(im->g, OP_SPLIT, &x, 1, (const char *const *)names, np_, where(im));
			for (int i = 0; i < np_; i++)
				free(names[i]);
			free(names);
			if (sp) {
				node_set_int(sp, "axis", axis);
				node_set_ints(sp, "split", parts, np_);
			}
			ok = sp && typed(im, sp);
		} else {
			fail(im, "it splits an empty axis");
		}
		free(parts);
		for (int i = 0; ok && i < np_; i++) {
			q->v[i] = sp->out[i];
			if (squeeze) {
				char *b = xasprintf("%s.item%d", np->output[0], i);
				char *nm = ir_name(im, b);
				free(b);
				const char *names1[] = {nm};
				Node *u = graph_add_node(im->g, OP_SQUEEZE, &q->v[i], 1, names1, 1, where(im));
				free(nm);
				if (u)
					node_set_ints(u, "axes", &axis, 1);
				ok = u && typed(im, u);
				if (ok)
					q->v[i] = u->out[0];
			}
		}
		return ok && bind_seq(im, np, q);
	}
	}
	return false;
}

/* If with a condition known when compiling (exporters test shapes so): the
 * branch taken, its nodes inline (they see the enclosing names), its
 * results bound to the If's.  A condition known only when running is an
 * error (gdcc's graphs have no control flow). */
static bool import_if(Imp *im, const Onnx__NodeProto *np)
{
	const char *cn = input_name(np, 0);
	if (!cn) {
		fail(im, "its condition (input 1) is missing");
		return false;
	}
	int cnt;
	/* (a graph input: its value may be given, --bind; else gdcc's graphs,
	 * which have no control flow, cannot take it) */
	int64_t *c = const_ints(im, cn, &cnt, "condition");
	if (!c)
		return false;
	bool take = cnt == 1 && c[0] != 0;
	free(c);
	if (cnt != 1) {
		fail(im, "its condition ('%s') has %d values, not one", Q(im, cn), cnt);
		return false;
	}
	const char *bname = take ? "then_branch" : "else_branch";
	const Onnx__AttributeProto *a = att(np, bname);
	if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH || !a->g) {
		fail(im, "attribute '%s' (a graph) is missing", bname);
		return false;
	}
	const Onnx__GraphProto *gp = a->g;
	if (gp->n_output != np->n_output) {
		fail(im, "its %s has %zu results, the If %zu", bname, gp->n_output, np->n_output);
		return false;
	}
	if (im->if_depth >= MAX_NESTING) {
		fail(im, "Ifs nest more than %d deep", MAX_NESTING);
		return false;
	}
	for (size_t i = 0; i < gp->n_initializer; i++) {
		Onnx__TensorProto *tp = gp->initializer[i];
		char *err = NULL;
		Tensor *t = tp->name ? tensor_of_proto(tp, NULL, im->data_dir, &err) : NULL;
		if (!t) {
			fail(im, "%s: initializer %zu: %s", bname, i + 1, err ? err : "it has no name");
			free(err);
			return false;
		}
		Value *v = constant(im, tp->name, t);
		if (!v || !sym_bind(im, tp->name, v))
			return false;
	}
	const Onnx__NodeProto *outer = im->node;
	size_t outer_index = im->node_index;
	im->if_depth++;
	bool ok = true;
	for (size_t i = 0; ok && i < gp->n_node; i++) {
		if (!gp->node[i]->op_type) {
			fail(im, "%s: node %zu has no op_type", bname, i + 1);
			ok = false;
			break;
		}
		im->node = gp->node[i];
		im->node_index = i;
		ok = import_node(im, gp->node[i]) && im->ok;
		if (!ok)
			diag_note(im->d, where(im), "in the %s of node %zu (If)", bname, outer_index + 1);
	}
	im->if_depth--;
	im->node = outer;
	im->node_index = outer_index;
	for (size_t i = 0; ok && i < gp->n_output; i++) {
		const char *on = gp->output[i]->name;
		Seq *bq = on ? strmap_get(&im->seqs, on) : NULL;
		if (bq) { /* a sequence: the If's result is the same list */
			if (np->output[i][0] && !strmap_add(&im->seqs, np->output[i], bq)) {
				fail(im, "'%s' is defined twice (ONNX values are assigned once)", Q(im, np->output[i]));
				ok = false;
			}
			continue;
		}
		Value *v = on ? sym_value(im, on) : NULL;
		if (!v) {
			fail(im, "%s: result %zu ('%s') is not computed by the branch", bname, i + 1, on ? Q(im, on) : "");
			ok = false;
		} else if (np->output[i][0]) {
			/* (an identity keeps the If's result name, which the
			 * graph's outputs may use; the optimizer removes it) */
			char *nm = ir_name(im, np->output[i]);
			const char *names[] = {nm};
			Node *idn = graph_add_node(im->g, OP_IDENTITY, &v, 1, names, 1, where(im));
			free(nm);
			ok = idn && typed(im, idn) && sym_bind(im, np->output[i], idn->out[0]);
		}
	}
	return ok;
}

static bool import_node(Imp *im, const Onnx__NodeProto *np)
{
	if (np->domain && np->domain[0] && strcmp(np->domain, "ai.onnx") != 0) {
		fail(im, "domain '%s' is not supported", Q(im, np->domain));
		return false;
	}
	const char *op = np->op_type;
	if (strcmp(op, "Constant") == 0)
		return import_constant(im, np);
	if (strcmp(op, "If") == 0)
		return import_if(im, np);
	Seq *sq = np->n_input == 1 && np->input[0][0] ? strmap_get(&im->seqs, np->input[0]) : NULL;
	if (strcmp(op, "OptionalHasElement") == 0 && np->n_input == 1 && np->n_output == 1 && np->output[0][0]) {
		/* a value that is there (gdcc takes no empty optional): true */
		if (!sq && !(np->input[0][0] && sym_value(im, np->input[0]))) {
			fail(im, "input 1 ('%s') is not defined before the node (an empty optional is not supported by gdcc)",
			     Q(im, np->input[0]));
			return false;
		}
		Shape s0 = {0};
		Tensor *t = tensor_new(DT_BOOL, &s0);
		tensor_set_f(t, 0, 1);
		Value *v = constant(im, np->output[0], t);
		return v && sym_bind(im, np->output[0], v);
	}
	if (sq && (strcmp(op, "Identity") == 0 || strcmp(op, "OptionalGetElement") == 0 || strcmp(op, "Optional") == 0) &&
	    np->n_output == 1 && np->output[0][0]) {
		/* a sequence's identity: one per tensor */
		Seq *r = seq_new(im, sq->n);
		for (int k = 0; k < sq->n; k++) {
			char *t = xasprintf("%s_%d", np->output[0], k);
			char *nm = ir_name(im, t);
			free(t);
			const char *names[] = {nm};
			Node *n = graph_add_node(im->g, OP_IDENTITY, &sq->v[k], 1, names, 1, where(im));
			free(nm);
			if (!n || !typed(im, n))
				return false;
			r->v[k] = n->out[0];
		}
		if (!strmap_add(&im->seqs, np->output[0], r)) {
			fail(im, "'%s' is defined twice (ONNX values are assigned once)", Q(im, np->output[0]));
			return false;
		}
		return true;
	}
	int sop = seq_op_kind(op);
	if (sop >= 0)
		return import_seq_op(im, np, sop);
	for (size_t i = 0; i < np->n_input; i++)
		if (np->input[i][0] && strmap_get(&im->seqs, np->input[i])) {
			fail(im, "input %zu ('%s') is a sequence: %s of a sequence is not supported by gdcc (its graphs hold "
				 "tensors; Identity is)", i + 1, Q(im, np->input[i]), Q(im, op));
			return false;
		}
	bool composed_ok;
	if (onnx_compose(im, np, &composed_ok))
		return composed_ok && im->ok;
	const OpMap *m = NULL;
	for (size_t i = 0; i < sizeof op_map / sizeof *op_map; i++)
		if (strcmp(op_map[i].onnx, op) == 0)
			m = &op_map[i];
	if (!m) {
		fail(im, "op '%s' is not supported by gdcc", Q(im, op));
		return false;
	}
	if (np->n_output == 0) {
		fail(im, "it has no results");
		return false;
	}
	/* operands */
	int ndata = m->ndata < 0 || (size_t)m->ndata > np->n_input ? (int)np->n_input : m->ndata;
	Value **in = xcalloc((size_t)(ndata ? ndata : 1), sizeof *in);
	int nin = 0;
	bool ok = true;
	for (int i = 0; ok && i < ndata; i++) {
		const char *nm = input_name(np, (size_t)i);
		if (!nm) {
			/* an optional bias left out (the last operand) */
			if ((m->op == OP_GEMM || m->op == OP_CONV || m->op == OP_LAYERNORM) && i == 2 && i == ndata - 1)
				continue;
			fail(im, "input %d is empty", i + 1);
			ok = false;
			break;
		}
		Value *v = sym_value(im, nm);
		if (!v) {
			fail(im, "input %d ('%s') is not defined before the node", i + 1, Q(im, nm));
			ok = false;
			break;
		}
		in[nin++] = v;
	}
	if (ok && nin < op_info[m->op].min_in) {
		fail(im, "it has %d input%s, %s takes at least %d", nin, nin == 1 ? "" : "s", Q(im, op),
		     op_info[m->op].min_in);
		ok = false;
	}
	if (ok && m->op == OP_POW && nin == 2 && in[0]->type.dtype == DT_F32 && dtype_is_int(in[1]->type.dtype)) {
		/* an integer exponent known at import time: the same pow with it as f32 */
		const Tensor *e = value_of(im, in[1]);
		if (e) {
			Tensor *f = tensor_new(DT_F32, &e->type.shape);
			for (int64_t k = 0; k < tensor_numel(e); k++)
				tensor_set_f(f, k, (double)tensor_get_i(e, k));
			char *nm = xasprintf("%s_f32", in[1]->name);
			Value *c = constant(im, nm, f);
			free(nm);
			if (!c)
				ok = false;
			else
				in[1] = c;
		}
	}
	if (ok && m->op == OP_PRELU && nin == 2 && im->opset < 7 && in[1]->type.shape.rank == 1 &&
	    in[0]->type.shape.rank >= 3 && in[1]->type.shape.dim[0] == in[0]->type.shape.dim[1] &&
	    in[1]->type.shape.dim[0] != 1) {
		/* before opset 7 a slope of C values is per channel (axis 1): as
		 * [C, 1, ...] it broadcasts so */
		Shape cs = {in[0]->type.shape.rank - 1, {0}};
		for (int d = 0; d < cs.rank; d++)
			cs.dim[d] = d ? 1 : in[1]->type.shape.dim[0];
		char *t = xasprintf("%s.channels", in[1]->name);
		char *nm = ir_name(im, t);
		free(t);
		const char *names[] = {nm};
		Node *r = graph_add_node(im->g, OP_RESHAPE, &in[1], 1, names, 1, where(im));
		free(nm);
		node_set_ints(r, "shape", cs.dim, cs.rank);
		if (!typed(im, r))
			ok = false;
		else
			in[1] = r->out[0];
	}
	int64_t onehot_depth = 0;
	if (ok && m->op == OP_ONE_HOT) {
		/* (indices, depth, values): depth known when compiling becomes the
		 * attribute, the operands are indices and values */
		double dv;
		const char *dn = input_name(np, 1);
		if (nin != 3 || !dn) {
			fail(im, "OneHot takes indices, depth and values (it has %d inputs)", nin);
			ok = false;
		} else if (!const_float(im, dn, &dv, "depth")) {
			ok = false;
		} else if (!(dv >= 1 && dv <= 2147483647.0)) {
			fail(im, "its depth (%g) is not a count from 1", dv);
			ok = false;
		} else {
			onehot_depth = (int64_t)dv;
			in[1] = in[2];
			nin = 2;
		}
	}
	if (ok && (m->op == OP_SOFTMAX || m->op == OP_LOGSOFTMAX || m->op == OP_HARDMAX) && im->opset < 13) {
		ok = old_softmax(im, np, m->op, in[0]);
		free(in);
		return ok;
	}
	if (!ok) {
		free(in);
		return false;
	}
	/* results gdcc can give */
	int nout = (int)np->n_output;
	while (nout > 1 && !np->output[nout - 1][0])
		nout--;
	if (m->op == OP_MAXPOOL && nout > 1) {
		/* Indices: a maxpool_argmax beside the maxpool, same attributes */
		char *t = xasprintf("%s", np->output[1]);
		char *nm2 = ir_name(im, t);
		free(t);
		const char *names[] = {nm2};
		Node *an = graph_add_node(im->g, OP_MAXPOOL_ARGMAX, in, 1, names, 1, where(im));
		free(nm2);
		if (!an) {
			free(in);
			fail(im, "internal error: a result name is taken");
			return false;
		}
		copy_attrs(im, np, an);
		if (!im->ok || !typed(im, an) || !sym_bind(im, np->output[1], an->out[0])) {
			free(in);
			return false;
		}
		nout = 1;
	}
	Node *n = add_node(im, m->op, in, nin, np, nout);
	free(in);
	if (!n)
		return false;
	copy_attrs(im, np, n);
	const char *nm;
	switch (m->op) {
	case OP_CLIP:
		if (im->opset >= 11) {
			double x;
			if ((nm = input_name(np, 1)) && const_float(im, nm, &x, "min"))
				node_set_float(n, "min", x);
			if ((nm = input_name(np, 2)) && const_float(im, nm, &x, "max"))
				node_set_float(n, "max", x);
		}
		break;
	case OP_DROPOUT:
		if ((nm = input_name(np, 2))) {
			int cnt;
			int64_t *tm = const_ints(im, nm, &cnt, "training_mode");
			/* training with ratio 0 drops nothing: the identity (and a mask of
			 * all true), as in inference (swin_t exports its attention dropout
			 * so) */
			double ratio = 0.5;
			const char *rn = input_name(np, 1);
			if (tm && cnt == 1 && tm[0] && !(rn && const_float(im, rn, &ratio, "ratio") && ratio == 0)) {
				free(tm);
				fail(im, "training_mode = 1 is not supported (inference only; a ratio of 0 is)");
				return false;
			}
			free(tm);
		}
		break;
	case OP_REDUCE_MEAN: case OP_REDUCE_SUM: case OP_REDUCE_MAX: case OP_REDUCE_MIN: case OP_REDUCE_PROD:
	case OP_REDUCE_L1: case OP_REDUCE_L2: case OP_REDUCE_LOG_SUM: case OP_REDUCE_LOG_SUM_EXP: case OP_REDUCE_SUM_SQUARE:
		ints_operand(im, np, 1, n, "axes");
		break;
	case OP_RESHAPE:
		if (!input_name(np, 1) && !att(np, "shape"))
			fail(im, "no shape");
		else
			ints_operand(im, np, 1, n, "shape");
		break;
	case OP_EXPAND:
		ints_operand(im, np, 1, n, "shape");
		break;
	case OP_SPLIT:
		ints_operand(im, np, 1, n, "split");
		break;
	case OP_SQUEEZE:
	case OP_UNSQUEEZE:
		ints_operand(im, np, 1, n, "axes");
		break;
	case OP_SLICE:
		if (im->opset >= 10) {
			static const char *const names[] = {"starts", "ends", "axes", "steps"};
			for (int i = 0; i < 4; i++)
				ints_operand(im, np, (size_t)i + 1, n, names[i]);
		}
		break;
	case OP_PAD:
		if (im->opset >= 11) {
			ints_operand(im, np, 1, n, "pads");
			double x;
			if ((nm = input_name(np, 2)) && const_float(im, nm, &x, "constant_value"))
				node_set_float(n, "value", x);
			ints_operand(im, np, 3, n, "axes");
		} else {
			const Onnx__AttributeProto *a = att(np, "paddings");
			if (a && a->n_ints <= CONST_INTS_MAX)
				node_set_ints(n, "pads", a->ints, (int)a->n_ints);
		}
		break;
	case OP_CONSTANT_OF_SHAPE: {
		ints_operand(im, np, 0, n, "shape");
		const Onnx__AttributeProto *a = att(np, "value");
		if (a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && a->t) {
			char *err = NULL;
			Tensor *t = tensor_of_proto(a->t, NULL, im->data_dir, &err);
			if (!t) {
				fail(im, "attribute 'value': %s", err);
				free(err);
				return false;
			}
			if (tensor_numel(t) != 1) {
				fail(im, "attribute 'value' has %" PRId64 " elements, not one", tensor_numel(t));
				tensor_free(t);
				return false;
			}
			node_set_float(n, "value", tensor_get_f(t, 0));
			node_set_dtype(n, "dtype", t->type.dtype);
			tensor_free(t);
		} else if (a) {
			fail(im, "attribute 'value' holds no tensor");
			return false;
		}
		break;
	}
	case OP_TRILU:
		if ((nm = input_name(np, 1))) {
			int cnt;
			int64_t *kv = const_ints(im, nm, &cnt, "k");
			if (kv && cnt == 1)
				node_set_int(n, "k", kv[0]);
			else if (kv)
				fail(im, "its k ('%s') has %d values, not one", Q(im, nm), cnt);
			free(kv);
		}
		break;
	case OP_TILE:
		ints_operand(im, np, 1, n, "repeats");
		break;
	case OP_TOPK:
		if (im->opset >= 10) { /* k: input 2, one value */
			int cnt;
			int64_t *kv = (nm = input_name(np, 1)) ? const_ints(im, nm, &cnt, "k") : NULL;
			if (!nm)
				fail(im, "its k (input 2) is missing");
			else if (kv && cnt == 1)
				node_set_int(n, "k", kv[0]);
			else if (kv)
				fail(im, "its k ('%s') has %d values, not one", Q(im, nm), cnt);
			free(kv);
		}
		break;
	case OP_ONE_HOT:
		node_set_int(n, "depth", onehot_depth);
		break;
	case OP_EYE_LIKE: {
		const Onnx__AttributeProto *a = att(np, "dtype");
		if (a) {
			DType to = a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT && a->i == (int32_t)a->i ? dtype_of((int32_t)a->i)
														: DT_INVALID;
			if (to == DT_INVALID) {
				fail(im, "its dtype (ONNX data type %s) is not supported by gdcc (f32, i32, i64, bool)",
				     onnx_dtype_name(a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ? (int32_t)a->i : -1));
				return false;
			}
			node_set_dtype(n, "dtype", to);
		}
		break;
	}
	case OP_RANGE: {
		/* start, limit and delta: scalars known when compiling (or
		 * specialized to the test data); the dtype is start's */
		static const char *const names[] = {"start", "limit", "delta"};
		for (int i = 0; i < 3; i++) {
			double x;
			if (!(nm = input_name(np, (size_t)i)))
				fail(im, "its %s is missing", names[i]);
			else if (const_float(im, nm, &x, names[i]))
				node_set_float(n, names[i], x);
		}
		const Value *sv = (nm = input_name(np, 0)) ? sym_value(im, nm) : NULL;
		if (sv)
			node_set_dtype(n, "dtype", sv->type.dtype);
		break;
	}
	case OP_CAST: {
		/* Cast's `to` is a TensorProto.DataType; CastLike's the dtype of its
		 * second input */
		DType to = DT_INVALID;
		int32_t onnx_to = -1;
		if (strcmp(np->op_type, "CastLike") == 0) {
			const Value *like = (nm = input_name(np, 1)) ? sym_value(im, nm) : NULL;
			if (!like) {
				fail(im, "input 2 (the target type) is %s", nm ? "not defined before the node" : "missing");
				return false;
			}
			to = like->type.dtype;
		} else {
			const Onnx__AttributeProto *a = att(np, "to");
			if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
				fail(im, "attribute 'to' (an integer data type) is missing");
				return false;
			}
			onnx_to = (int32_t)a->i;
			if (a->i == onnx_to)
				to = dtype_of(onnx_to);
		}
		if (to == DT_INVALID) {
			fail(im, "a cast to ONNX data type %s (%d) is not supported by gdcc (f32, i32, i64, bool)",
			     onnx_dtype_name(onnx_to), onnx_to);
			return false;
		}
		node_set_dtype(n, "to", to);
		break;
	}
	case OP_BATCHNORM:
		if (im->opset < 7 && att(np, "spatial") && att(np, "spatial")->i == 0) {
			fail(im, "spatial = 0 is not supported");
			return false;
		}
		break;
	default:
		break;
	}
	if (!im->ok)
		return false;
	return finish(im, n, np);
}

/* ---- the model ---------------------------------------------------------------------------- */
/* Every name the translation reads is there (protobuf leaves an absent
 * string NULL; an absent optional input is "", which is fine). */
static bool names_present(Imp *im, const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_input; i++)
		if (!gp->input[i]->name)
			fail(im, "graph input %zu has no name", i + 1);
	for (size_t i = 0; i < gp->n_output; i++)
		if (!gp->output[i]->name)
			fail(im, "graph output %zu has no name", i + 1);
	for (size_t i = 0; i < gp->n_initializer; i++)
		if (!gp->initializer[i]->name)
			fail(im, "initializer %zu has no name", i + 1);
	for (size_t i = 0; i < gp->n_node && im->ok; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		if (!np->op_type) {
			if (np->name && np->name[0])
				fail(im, "node '%s' has no op_type", Q(im, np->name));
			else
				fail(im, "node %zu has no op_type", i + 1);
			continue;
		}
		im->node = np;
		im->node_index = i;
		for (size_t k = 0; k < np->n_input; k++)
			if (!np->input[k])
				fail(im, "input %zu has no name", k + 1);
		for (size_t k = 0; k < np->n_output; k++)
			if (!np->output[k])
				fail(im, "result %zu has no name", k + 1);
		for (size_t k = 0; k < np->n_attribute; k++)
			if (!np->attribute[k]->name)
				fail(im, "attribute %zu has no name", k + 1);
		im->node = NULL;
	}
	return im->ok;
}

/* A graph input just added: where its value comes from. */
static void note_input(Imp *im, Value *v, int origin, int part)
{
	Graph *g = im->g;
	int k = g->ninputs - 1;
	g->input_origin = xrealloc(g->input_origin, (size_t)g->ninputs * sizeof *g->input_origin);
	g->input_part = xrealloc(g->input_part, (size_t)g->ninputs * sizeof *g->input_part);
	g->input_origin[k] = origin;
	g->input_part[k] = part;
	known(im, v)->input = g->ninputs;
}

static Seq *seq_new(Imp *im, int n)
{
	Seq *q = xcalloc(1, sizeof *q);
	q->n = n;
	q->v = xcalloc((size_t)(n ? n : 1), sizeof *q->v);
	im->seqlist = xrealloc(im->seqlist, (size_t)(im->nseqs + 1) * sizeof *im->seqlist);
	im->seqlist[im->nseqs++] = q;
	return q;
}

/* A sequence or optional input of the test data: one graph input per
 * tensor in it (NAME_0, NAME_1, ...: an optional tensor is NAME itself). */
static bool import_seq_input(Imp *im, const Onnx__ValueInfoProto *vi, int origin)
{
	const Onnx__TypeProto *ty = vi->type;
	bool opt = ty->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
	const Onnx__TypeProto *inner = opt && ty->optional_type ? ty->optional_type->elem_type : NULL;
	bool opt_tensor = opt && inner && inner->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	bool seq = !opt || (inner && inner->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE);
	if (!opt_tensor && !seq) {
		fail(im, "input '%s': an optional of this type is not supported by gdcc (tensors and sequences of them)",
		     Q(im, vi->name));
		return false;
	}
	char *p = xasprintf("%s/input_%d.pb", im->spec_dir, origin), *err = NULL;
	int n = onnx_count_parts(p, &err); /* (an optional tensor: 1, or 0 when it has no value) */
	bool ok = n >= 0;
	if (ok && opt_tensor && n != 1) {
		fail(im, "input '%s': an optional without a value is not supported by gdcc (its graphs hold tensors)",
		     Q(im, vi->name));
		free(p);
		return false;
	}
	Seq *q = ok && !opt_tensor ? seq_new(im, n) : NULL;
	for (int k = 0; ok && k < n; k++) {
		int part = opt_tensor ? ONNX_OPTIONAL_TENSOR : k;
		Tensor *t = onnx_load_part(p, part, &err);
		if (!t) {
			ok = false;
			break;
		}
		char *nm0 = opt_tensor ? xstrdup(vi->name) : xasprintf("%s_%d", vi->name, k);
		char *nm = ir_name(im, nm0);
		Value *v = graph_add_input(im->g, nm, t->type.dtype, &t->type.shape, where(im));
		free(nm);
		free(nm0);
		tensor_free(t);
		note_input(im, v, origin, part);
		if (opt_tensor)
			ok = sym_bind(im, vi->name, v);
		else
			q->v[k] = v;
	}
	if (!ok && err)
		fail(im, "input '%s': its test data %s: %s", Q(im, vi->name), p, err);
	free(err);
	free(p);
	if (ok && q && !strmap_add(&im->seqs, vi->name, q)) {
		fail(im, "'%s' is defined twice", Q(im, vi->name));
		ok = false;
	}
	return ok && im->ok;
}

static bool import_input(Imp *im, const Onnx__GraphProto *gp, size_t i, int origin)
{
	const Onnx__ValueInfoProto *vi = gp->input[i];
	const char *dir = im->spec_dir;
	if (dir && vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && vi->type->tensor_type &&
	    (dtype_of(vi->type->tensor_type->elem_type) == DT_I64 || dtype_of(vi->type->tensor_type->elem_type) == DT_I32)) {
		char *p = xasprintf("%s/input_%d.pb", dir, origin), *err = NULL;
		Tensor *t = onnx_load_tensor(p, &err);
		free(p);
		free(err);
		if (t) {
			Value *v = constant(im, vi->name, t);
			return v && sym_bind(im, vi->name, v);
		}
	}
	OnnxBinding *b = binding_of(im, vi->name);
	if (b && vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && vi->type->tensor_type &&
	    (dtype_of(vi->type->tensor_type->elem_type) == DT_I64 || dtype_of(vi->type->tensor_type->elem_type) == DT_I32)) {
		/* an integer input given a value: a constant of it, when it is of
		 * the declared type */
		const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
		bool same = dtype_of(tt->elem_type) == b->t->type.dtype && tt->shape &&
			    (int)tt->shape->n_dim == b->t->type.shape.rank;
		for (size_t k = 0; same && k < tt->shape->n_dim; k++)
			same = tt->shape->dim[k]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
			       tt->shape->dim[k]->dim_value == b->t->type.shape.dim[k];
		if (!same) {
			char got[160];
			type_str(&b->t->type, got, sizeof got);
			fail(im, "input '%s': the value given for it is %s, not of the model's declared type", Q(im, vi->name),
			     got);
			return false;
		}
		b->used = true;
		Value *v = constant(im, vi->name, copy_of(b->t));
		return v && sym_bind(im, vi->name, v);
	}
	if (vi->type && (vi->type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
			 vi->type->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE) &&
	    dir)
		return import_seq_input(im, vi, origin);
	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type) {
		fail(im, "input '%s' is a %s, not a tensor: not supported by gdcc%s", Q(im, vi->name),
		     !vi->type ? "value without a type"
		     : vi->type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? "sequence"
		     : vi->type->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE ? "optional"
		     : vi->type->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE ? "map" : "non-tensor value",
		     vi->type && (vi->type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
				  vi->type->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)
			     ? " (its length is data: with --onnx-test, the test data's)"
			     : "");
		return false;
	}
	const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
	DType dt = dtype_of(tt->elem_type);
	Shape s = {0};
	if (dt == DT_INVALID || !tt->shape || tt->shape->n_dim > MAX_RANK) {
		char what[64];
		snprintf(what, sizeof what, "ONNX data type %s", onnx_dtype_name(tt->elem_type));
		fail(im, "input '%s': %s is not supported (gdcc takes f32, i32, i64, bool, rank 0 to %d, a known shape)",
		     Q(im, vi->name), dt == DT_INVALID ? what : !tt->shape ? "a tensor of unknown rank" : "its rank",
		     MAX_RANK);
		return false;
	}
	s.rank = (int)tt->shape->n_dim;
	for (int k = 0; k < s.rank; k++) {
		const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
		if (dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			fail(im, "input '%s': dimension %d is not a number (dynamic shapes are not supported)",
			     Q(im, vi->name), k + 1);
			return false;
		}
		s.dim[k] = dm->dim_value;
	}
	char *e = tensor_size_error(dt, &s);
	if (e) {
		fail(im, "input '%s': %s", Q(im, vi->name), e);
		free(e);
		return false;
	}
	char *name = ir_name(im, vi->name);
	Value *v = graph_add_input(im->g, name, dt, &s, where(im));
	free(name);
	if (!sym_bind(im, vi->name, v))
		return false;
	note_input(im, v, origin, ONNX_WHOLE);
	return true;
}

/* A graph output's declared type, when it gives one, must be a size gdcc
 * could hold (the type itself comes from inference). */
static bool check_output_type(Imp *im, const Onnx__ValueInfoProto *vi)
{
	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type ||
	    !vi->type->tensor_type->shape)
		return true;
	const Onnx__TensorShapeProto *sp = vi->type->tensor_type->shape;
	DType dt = dtype_of(vi->type->tensor_type->elem_type);
	if (sp->n_dim > MAX_RANK || dt == DT_INVALID)
		return true; /* checked against what the graph computes by inference, not here */
	Shape s = {(int)sp->n_dim, {0}};
	for (size_t k = 0; k < sp->n_dim; k++) {
		if (sp->dim[k]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			return true;
		s.dim[k] = sp->dim[k]->dim_value;
	}
	char *e = tensor_size_error(dt, &s);
	if (e) {
		fail(im, "output '%s': its declared type: %s", Q(im, vi->name), e);
		free(e);
		return false;
	}
	return true;
}

static Graph *import_model(const char *path, bool on_disk, const uint8_t *data, size_t len, const char *dir,
			   OnnxBinding *binds, int nbinds, Diag *d)
{
	if (!nesting_ok(&onnx__model_proto__descriptor, data, len)) {
		diag_error(d, loc_at(path, 0, 0), "not an ONNX model: messages nested more than %d deep", MAX_NESTING);
		return NULL;
	}
	Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, data);
	if (!mp || !mp->graph) {
		diag_error(d, loc_at(path, 0, 0), "not an ONNX model (malformed protobuf, or no graph)");
		if (mp)
			onnx__model_proto__free_unpacked(mp, NULL);
		return NULL;
	}
	Imp im = {.d = d, .opset = 1, .ok = true, .spec_dir = dir, .binds = binds, .nbinds = nbinds};
	if (on_disk) {
		const char *slash = strrchr(path, '/');
		im.data_dir = slash ? xasprintf("%.*s", (int)(slash == path ? 1 : slash - path), path) : xstrdup(".");
	}
	im.irnames.owns_keys = true;
	const Onnx__GraphProto *gp = mp->graph;
	char *gname = xstrdup(gp->name && gp->name[0] ? gp->name : "model");
	for (char *p = gname; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			*p = '_';
	if (!((gname[0] >= 'a' && gname[0] <= 'z') || (gname[0] >= 'A' && gname[0] <= 'Z') || gname[0] == '_'))
		gname[0] = '_';
	if (ir_keyword(gname)) { /* `graph graph {` does not parse */
		char *k = xasprintf("%s_", gname);
		free(gname);
		gname = k;
	}
	im.g = graph_new(gname);
	free(gname);
	im.g->file = xstrdup(path);
	im.file = im.g->file;
	im.g->loc = where(&im);
	const char *slash = strrchr(path, '/');
	im.g->dir = slash ? xstrndup(path, (size_t)(slash - path)) : NULL;
	for (size_t i = 0; i < mp->n_opset_import; i++) {
		const char *dom = mp->opset_import[i]->domain;
		if (!dom || !dom[0] || strcmp(dom, "ai.onnx") == 0) {
			int64_t ver = mp->opset_import[i]->version;
			if (ver < 1 || ver > 1000) {
				fail(&im, "opset version %" PRId64 " is not supported", ver);
				break;
			}
			im.opset = (int)ver;
		}
	}
	if (im.ok)
		names_present(&im, gp);
	if (im.ok && gp->n_output == 0) {
		if (gp->name && gp->name[0])
			fail(&im, "graph '%s' has no outputs", Q(&im, gp->name));
		else
			fail(&im, "the graph has no outputs");
	}
	/* initializers by name (old models also list them among the inputs) */
	for (size_t i = 0; i < gp->n_initializer && im.ok; i++)
		if (!strmap_add(&im.inits, gp->initializer[i]->name, gp->initializer[i]))
			fail(&im, "initializer '%s' is given twice", Q(&im, gp->initializer[i]->name));
	/* inputs (not the initializers) */
	int origin = -1;
	for (size_t i = 0; i < gp->n_input && im.ok; i++) {
		if (strmap_get(&im.inits, gp->input[i]->name))
			continue;
		import_input(&im, gp, i, ++origin);
	}
	for (size_t i = 0; i < gp->n_initializer && im.ok; i++) {
		Onnx__TensorProto *tp = gp->initializer[i];
		char *err = NULL;
		Tensor *t = tensor_of_proto(tp, tp, im.data_dir, &err);
		if (!t) {
			fail(&im, "initializer '%s': %s", Q(&im, tp->name), err);
			free(err);
			break;
		}
		Value *v = constant(&im, tp->name, t);
		if (v)
			sym_bind(&im, tp->name, v);
	}
	for (size_t i = 0; i < gp->n_node && im.ok; i++) {
		im.node = gp->node[i];
		im.node_index = i;
		import_node(&im, gp->node[i]);
	}
	im.node = NULL;
	for (size_t i = 0; i < gp->n_output && im.ok; i++) {
		const char *name = gp->output[i]->name;
		Value *v = sym_value(&im, name);
		Seq *sq = strmap_get(&im.seqs, name);
		{
			/* where each output's value sits in the source's outputs */
			Graph *g = im.g;
			int at = g->noutputs, n = sq ? sq->n : 1;
			g->output_origin = xrealloc(g->output_origin, (size_t)(at + n + 1) * sizeof *g->output_origin);
			g->output_part = xrealloc(g->output_part, (size_t)(at + n + 1) * sizeof *g->output_part);
			for (int k = 0; k < n; k++) {
				g->output_origin[at + k] = (int)i;
				g->output_part[at + k] = !sq ? (gp->output[i]->type && gp->output[i]->type->value_case ==
									 ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE
									 ? ONNX_OPTIONAL_TENSOR
									 : ONNX_WHOLE)
							      : k;
			}
		}
		if (sq) {
			for (int k = 0; k < sq->n && im.ok; k++) {
				if (sq->v[k]->is_output || sq->v[k]->is_input) { /* (an output once: a copy) */
					char *t = xasprintf("%s_%d", name, k);
					char *nm = ir_name(&im, t);
					free(t);
					const char *names[] = {nm};
					Node *n = graph_add_node(im.g, OP_IDENTITY, &sq->v[k], 1, names, 1, where(&im));
					free(nm);
					if (!n || !typed(&im, n))
						break;
					sq->v[k] = n->out[0];
				}
				graph_add_output(im.g, sq->v[k], where(&im));
			}
			continue;
		}
		if (!check_output_type(&im, gp->output[i]))
			break;
		if (!v)
			fail(&im, "output '%s' is not computed by the graph", Q(&im, name));
		else if (v->is_output)
			fail(&im, "output '%s' is listed twice", Q(&im, name));
		else
			graph_add_output(im.g, v, where(&im));
	}
	strmap_free(&im.syms);
	strmap_free(&im.irnames);
	strmap_free(&im.inits);
	strmap_free(&im.seqs);
	for (int i = 0; i < im.nseqs; i++) {
		free(im.seqlist[i]->v);
		free(im.seqlist[i]);
	}
	free(im.seqlist);
	for (int i = 0; i < im.nknown; i++) {
		if (im.known[i].owned)
			tensor_free(im.known[i].t);
		free(im.known[i].why);
	}
	free(im.known);
	free(im.data_dir);
	onnx__model_proto__free_unpacked(mp, NULL);
	if (!im.ok) {
		graph_free(im.g);
		return NULL;
	}
	graph_prune(im.g);
	return im.g;
}

Graph *onnx_load_buffer(const char *name, const uint8_t *data, size_t len, Diag *d)
{
	return import_model(name, false, data, len, NULL, NULL, 0, d);
}

Graph *onnx_load(const char *path, Diag *d)
{
	return onnx_load_specialized(path, NULL, d);
}

Graph *onnx_load_specialized(const char *path, const char *dir, Diag *d)
{
	return onnx_load_bound(path, dir, NULL, 0, d);
}

Graph *onnx_load_bound(const char *path, const char *dir, OnnxBinding *binds, int nbinds, Diag *d)
{
	/* (see spec_input: scalars that gdcc takes as attributes, such as Clip's
	 * bounds and Pad's value, are read from the same test data) */
	/* a regular file is mapped (its pages are the page cache's, not
	 * copied), anything else read */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (m != MAP_FAILED) {
			Graph *g = import_model(path, true, m, (size_t)st.st_size, dir, binds, nbinds, d);
			munmap(m, (size_t)st.st_size);
			return g;
		}
	} else if (fd >= 0) {
		close(fd);
	}
	size_t len;
	char *buf = read_file(path, &len);
	if (!buf) {
		diag_error(d, loc_at(path, 0, 0), "cannot read model: %s", strerror(errno));
		return NULL;
	}
	Graph *g = import_model(path, true, (const uint8_t *)buf, len, dir, binds, nbinds, d);
	free(buf);
	return g;
}
