/* ONNX import.  Nodes are translated in order; each new node is typed at
 * once (graph_check_node), so that inputs that ONNX passes as tensors but
 * gdcc takes as attributes (shapes, axes, pads, bounds) can be evaluated:
 * from initializers, Constant nodes, Shape of a static shape, or small
 * integer subgraphs run through the reference kernels.  The nodes that only
 * computed such values are pruned at the end. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "onnx.pb-c.h"
#include "ops.h"
#include "onnx.h"
#include "util.h"
#include "verify.h"

typedef struct {
	char *onnx;       /* the ONNX name */
	Value *v;
} Sym;

typedef struct {
	Diag *d;
	Graph *g;
	const char *file;
	int opset;
	Sym *syms;
	int nsyms, capsyms;
	int uniq;
	bool ok;
	const Onnx__NodeProto *node; /* being translated, for messages */
	const char *spec_dir;        /* test data to specialize inputs to, or NULL */
} Imp;

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
	if (im->node)
		diag_error(im->d, where(im), "node '%s' (%s, opset %d): %s", im->node->name ? im->node->name : "",
			   im->node->op_type, im->opset, msg);
	else
		diag_error(im->d, where(im), "%s", msg);
	free(msg);
	im->ok = false;
}

/* ---- names ----------------------------------------------------------------- */
static Value *sym_value(Imp *im, const char *name)
{
	for (int i = im->nsyms - 1; i >= 0; i--)
		if (strcmp(im->syms[i].onnx, name) == 0)
			return im->syms[i].v;
	return NULL;
}

static void sym_bind(Imp *im, const char *name, Value *v)
{
	if (im->nsyms == im->capsyms) {
		im->capsyms = im->capsyms ? 2 * im->capsyms : 64;
		im->syms = xrealloc(im->syms, (size_t)im->capsyms * sizeof *im->syms);
	}
	im->syms[im->nsyms++] = (Sym){xstrdup(name), v};
	if (v && !v->src_name && strcmp(v->name, name) != 0)
		v->src_name = xstrdup(name);
}

/* A model.ir name for an ONNX name: letters, digits, '_' and '.', unique. */
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
	if (graph_find_value(im->g, s) || strcmp(s, "inf") == 0 || strcmp(s, "nan") == 0 || strcmp(s, "graph") == 0 ||
	    strcmp(s, "input") == 0 || strcmp(s, "output") == 0 || strcmp(s, "const") == 0)
		snprintf(s + k, 24, "_%d", ++im->uniq);
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

static Tensor *tensor_of(const Onnx__TensorProto *tp, char **err)
{
	DType dt = dtype_of(tp->data_type);
	if (dt == DT_INVALID) {
		*err = xasprintf("tensor '%s' has ONNX data type %s (%d), which gdcc does not support (f32, i32, i64, bool)",
				 tp->name ? tp->name : "", onnx_dtype_name(tp->data_type), tp->data_type);
		return NULL;
	}
	if (tp->n_dims > MAX_RANK) {
		*err = xasprintf("tensor '%s' has rank %zu (at most %d)", tp->name ? tp->name : "", tp->n_dims, MAX_RANK);
		return NULL;
	}
	if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		*err = xasprintf("tensor '%s' keeps its data in an external file, which gdcc does not read", tp->name ? tp->name : "");
		return NULL;
	}
	Shape s = {(int)tp->n_dims, {0}};
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0 || tp->dims[i] > (1LL << 40)) {
			*err = xasprintf("tensor '%s' has a bad dimension %lld", tp->name ? tp->name : "", (long long)tp->dims[i]);
			return NULL;
		}
		s.dim[i] = tp->dims[i];
	}
	Tensor *t = tensor_new(dt, &s);
	int64_t n = tensor_numel(t);
	size_t bytes = tensor_bytes(t);
	if (tp->has_raw_data) {
		if (tp->raw_data.len != bytes) {
			*err = xasprintf("tensor '%s' holds %zu bytes of raw data, its shape needs %zu", tp->name ? tp->name : "",
					 tp->raw_data.len, bytes);
			tensor_free(t);
			return NULL;
		}
		if (bytes)
			memcpy(t->data, tp->raw_data.data, bytes);
		return t;
	}
	size_t have = dt == DT_F32 ? tp->n_float_data : dt == DT_I64 ? tp->n_int64_data : tp->n_int32_data;
	if ((int64_t)have != n) {
		*err = xasprintf("tensor '%s' holds %zu values, its shape needs %lld", tp->name ? tp->name : "", have, (long long)n);
		tensor_free(t);
		return NULL;
	}
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

Tensor *onnx_load_tensor(const char *path, char **err)
{
	size_t len;
	char *buf = read_file(path, &len);
	if (!buf) {
		*err = xasprintf("cannot open: %s", strerror(errno));
		return NULL;
	}
	Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, (const uint8_t *)buf);
	free(buf);
	if (!tp) {
		*err = xstrdup("not a TensorProto (malformed protobuf)");
		return NULL;
	}
	Tensor *t = tensor_of(tp, err);
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return t;
}

/* A constant node holding t (taken). */
static Value *constant(Imp *im, const char *onnx_name, Tensor *t)
{
	char *name = ir_name(im, onnx_name);
	ConstInit ci = {.kind = INIT_TENSOR, .data = t};
	Node *n = graph_add_const(im->g, name, t->type.dtype, &t->type.shape, ci, where(im));
	free(name);
	if (!graph_check_node(im->g, n, im->d)) {
		im->ok = false;
		return NULL;
	}
	return n->out[0];
}

/* ---- evaluating values at import time --------------------------------------------- */
/* The value of v if it can be computed without the graph's inputs (small
 * integer subgraphs: Shape, Gather, Concat, Unsqueeze, Cast ...). */
static Tensor *evaluate(Imp *im, const Value *v, int depth)
{
	if (!v || !v->def || depth > 64)
		return NULL;
	const Node *n = v->def;
	if (n->op == OP_CONSTANT) {
		Tensor *t = tensor_new(v->type.dtype, &v->type.shape);
		if (!materialize_constant(n, t, im->d)) {
			tensor_free(t);
			return NULL;
		}
		return t;
	}
	if (n->op == OP_SHAPE) { /* only the operand's static shape */
		Tensor *t = tensor_new(DT_I64, &v->type.shape);
		const Shape *s = &n->in[0]->type.shape;
		int64_t start = attr_i(n, "start");
		if (start < 0)
			start += s->rank;
		if (start < 0)
			start = 0;
		for (int64_t i = 0; i < tensor_numel(t); i++)
			((int64_t *)t->data)[i] = s->dim[start + i];
		return t;
	}
	if (shape_numel(&v->type.shape) > 4096)
		return NULL;
	Tensor *in[16] = {0}, *out[8] = {0};
	bool ok = n->nin <= 16 && n->nout <= 8;
	for (int i = 0; ok && i < n->nin; i++)
		ok = (in[i] = evaluate(im, n->in[i], depth + 1)) != NULL;
	if (ok) {
		for (int i = 0; i < n->nout; i++)
			out[i] = tensor_new(n->out[i]->type.dtype, &n->out[i]->type.shape);
		ok = op_info[n->op].kernel(n, in, out, im->d);
	}
	for (int i = 0; i < n->nin && i < 16; i++)
		tensor_free(in[i]);
	Tensor *r = NULL;
	for (int i = 0; i < n->nout && i < 8; i++) {
		if (ok && n->out[i] == v)
			r = out[i];
		else
			tensor_free(out[i]);
	}
	return r;
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
	return i < np->n_input && np->input[i] && np->input[i][0] ? np->input[i] : NULL;
}

/* An input that gdcc takes as an attribute: its values as integers. */
static int64_t *const_ints(Imp *im, const char *name, int *n, const char *what)
{
	Value *v = sym_value(im, name);
	if (!v) {
		fail(im, "unknown input '%s'", name);
		return NULL;
	}
	Tensor *t = evaluate(im, v, 0);
	if (!t) {
		fail(im, "its %s ('%s') is not known when compiling: dynamic shapes are not supported", what, name);
		return NULL;
	}
	*n = (int)tensor_numel(t);
	int64_t *r = xcalloc((size_t)(*n ? *n : 1), sizeof *r);
	for (int i = 0; i < *n; i++)
		r[i] = tensor_get_i(t, i);
	tensor_free(t);
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

/* A graph input's value in the test data being specialized to. */
static Tensor *spec_input(Imp *im, const Value *v)
{
	if (!im->spec_dir || !v || !v->is_input)
		return NULL;
	for (int i = 0; i < im->g->ninputs; i++)
		if (im->g->inputs[i] == v) {
			char *p = xasprintf("%s/input_%d.pb", im->spec_dir, im->g->input_origin[i]), *err = NULL;
			Tensor *t = onnx_load_tensor(p, &err);
			free(p);
			free(err);
			return t;
		}
	return NULL;
}

static bool const_float(Imp *im, const char *name, double *out, const char *what)
{
	Value *v = sym_value(im, name);
	Tensor *t = v ? evaluate(im, v, 0) : NULL;
	if (!t)
		t = spec_input(im, v);
	if (!t || tensor_numel(t) != 1) {
		fail(im, "its %s ('%s') must be a constant scalar", what, name);
		tensor_free(t);
		return false;
	}
	*out = tensor_get_f(t, 0);
	tensor_free(t);
	return true;
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
		if (!spec || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)
			continue; /* handled by the translation, or ignorable (checked there) */
		switch (a->type) {
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: node_set_int(n, name, a->i); break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: node_set_float(n, name, a->f); break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
			char *s = xstrndup((const char *)a->s.data, a->s.len);
			node_set_string(n, name, s);
			free(s);
			break;
		}
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: node_set_ints(n, name, a->ints, (int)a->n_ints); break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
			double *f = xcalloc(a->n_floats ? a->n_floats : 1, sizeof *f);
			for (size_t k = 0; k < a->n_floats; k++)
				f[k] = a->floats[k];
			node_set_floats(n, name, f, (int)a->n_floats);
			free(f);
			break;
		}
		default: fail(im, "attribute '%s' has a type gdcc does not read", a->name);
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
	{"MatMul", OP_MATMUL, -1}, {"Gemm", OP_GEMM, -1}, {"Conv", OP_CONV, -1}, {"MaxPool", OP_MAXPOOL, -1},
	{"AveragePool", OP_AVGPOOL, -1}, {"GlobalAveragePool", OP_GLOBAL_AVGPOOL, -1},
	{"GlobalMaxPool", OP_GLOBAL_MAXPOOL, -1}, {"BatchNormalization", OP_BATCHNORM, -1},
	{"LayerNormalization", OP_LAYERNORM, -1}, {"Reshape", OP_RESHAPE, 1}, {"Transpose", OP_TRANSPOSE, -1},
	{"Flatten", OP_FLATTEN, -1}, {"Concat", OP_CONCAT, -1}, {"Split", OP_SPLIT, 1}, {"Slice", OP_SLICE, 1},
	{"Squeeze", OP_SQUEEZE, 1}, {"Unsqueeze", OP_UNSQUEEZE, 1}, {"Gather", OP_GATHER, -1}, {"Expand", OP_EXPAND, 1},
	{"Pad", OP_PAD, 1}, {"Shape", OP_SHAPE, -1}, {"ConstantOfShape", OP_CONSTANT_OF_SHAPE, 0},
};

static Node *add_node(Imp *im, OpKind op, Value **in, int nin, const Onnx__NodeProto *np, int nout_used)
{
	const char *names[8] = {0};
	char *owned[8] = {0};
	int nout = nout_used < 8 ? nout_used : 8;
	for (int i = 0; i < nout; i++) {
		const char *o = i < (int)np->n_output && np->output[i][0] ? np->output[i] : "unused";
		owned[i] = ir_name(im, o);
		names[i] = owned[i];
	}
	Node *n = graph_add_node(im->g, op, in, nin, names, nout, where(im));
	for (int i = 0; i < nout; i++)
		free(owned[i]);
	return n;
}

/* Bind the node's results, type it. */
static bool finish(Imp *im, Node *n, const Onnx__NodeProto *np)
{
	if (!graph_check_node(im->g, n, im->d)) {
		im->ok = false;
		return false;
	}
	for (int i = 0; i < n->nout && i < (int)np->n_output; i++)
		if (np->output[i][0])
			sym_bind(im, np->output[i], n->out[i]);
	return true;
}

/* softmax and logsoftmax before opset 13: over the 2-D view at axis. */
static bool old_softmax(Imp *im, const Onnx__NodeProto *np, OpKind op, Value *x)
{
	const Onnx__AttributeProto *a = att(np, "axis");
	int rank = x->type.shape.rank;
	int64_t axis = a ? a->i : 1;
	if (axis < 0)
		axis += rank;
	if (axis < 0 || axis > rank) {
		fail(im, "axis %lld is out of range", (long long)(a ? a->i : 1));
		return false;
	}
	if (axis == rank - 1 || rank == 0) {
		Node *n = add_node(im, op, &x, 1, np, 1);
		node_set_int(n, "axis", -1);
		return finish(im, n, np);
	}
	int64_t rows = 1, cols = 1;
	for (int i = 0; i < rank; i++)
		*(i < axis ? &rows : &cols) *= x->type.shape.dim[i];
	char *t1 = xasprintf("%s.rows", np->output[0]), *t2 = xasprintf("%s.soft", np->output[0]);
	char *n1 = ir_name(im, t1);
	const char *names1[] = {n1};
	Node *r = graph_add_node(im->g, OP_RESHAPE, &x, 1, names1, 1, where(im));
	int64_t shp[2] = {rows, cols};
	node_set_ints(r, "shape", shp, 2);
	free(n1);
	if (!graph_check_node(im->g, r, im->d)) {
		free(t1), free(t2);
		im->ok = false;
		return false;
	}
	char *n2 = ir_name(im, t2);
	const char *names2[] = {n2};
	Value *rv = r->out[0];
	Node *s = graph_add_node(im->g, op, &rv, 1, names2, 1, where(im));
	node_set_int(s, "axis", 1);
	free(n2);
	free(t1), free(t2);
	if (!graph_check_node(im->g, s, im->d)) {
		im->ok = false;
		return false;
	}
	Value *sv = s->out[0];
	Node *back = add_node(im, OP_RESHAPE, &sv, 1, np, 1);
	node_set_ints(back, "shape", x->type.shape.dim, rank);
	return finish(im, back, np);
}

static bool import_node(Imp *im, const Onnx__NodeProto *np)
{
	im->node = np;
	if (np->domain && np->domain[0] && strcmp(np->domain, "ai.onnx") != 0) {
		fail(im, "domain '%s' is not supported", np->domain);
		return false;
	}
	const char *op = np->op_type;
	if (strcmp(op, "Constant") == 0) {
		Tensor *t = NULL;
		char *err = NULL;
		const Onnx__AttributeProto *a;
		if ((a = att(np, "value")) && a->t) {
			t = tensor_of(a->t, &err);
		} else if ((a = att(np, "value_float"))) {
			Shape s0 = {0};
			t = tensor_new(DT_F32, &s0);
			((float *)t->data)[0] = a->f;
		} else if ((a = att(np, "value_floats"))) {
			Shape s1 = {1, {(int64_t)a->n_floats}};
			t = tensor_new(DT_F32, &s1);
			for (size_t i = 0; i < a->n_floats; i++)
				((float *)t->data)[i] = a->floats[i];
		} else if ((a = att(np, "value_int"))) {
			Shape s0 = {0};
			t = tensor_new(DT_I64, &s0);
			((int64_t *)t->data)[0] = a->i;
		} else if ((a = att(np, "value_ints"))) {
			Shape s1 = {1, {(int64_t)a->n_ints}};
			t = tensor_new(DT_I64, &s1);
			for (size_t i = 0; i < a->n_ints; i++)
				((int64_t *)t->data)[i] = a->ints[i];
		} else {
			err = xstrdup("a Constant without a value gdcc can read (value, value_float(s), value_int(s))");
		}
		if (!t) {
			fail(im, "%s", err);
			free(err);
			return false;
		}
		Value *v = constant(im, np->output[0], t);
		if (v)
			sym_bind(im, np->output[0], v);
		return v != NULL;
	}
	const OpMap *m = NULL;
	for (size_t i = 0; i < sizeof op_map / sizeof *op_map; i++)
		if (strcmp(op_map[i].onnx, op) == 0)
			m = &op_map[i];
	if (!m) {
		fail(im, "op '%s' is not supported by gdcc", op);
		return false;
	}
	/* operands */
	Value *in[16];
	int nin = 0;
	int ndata = m->ndata < 0 ? (int)np->n_input : m->ndata;
	for (int i = 0; i < ndata && i < (int)np->n_input && nin < 16; i++) {
		const char *nm = input_name(np, (size_t)i);
		if (!nm) {
			if (m->op == OP_GEMM || m->op == OP_CONV || m->op == OP_LAYERNORM)
				continue; /* an optional bias left out */
			fail(im, "input %d is empty", i + 1);
			return false;
		}
		Value *v = sym_value(im, nm);
		if (!v) {
			fail(im, "input '%s' is not defined before the node", nm);
			return false;
		}
		in[nin++] = v;
	}
	if (m->op == OP_POW && nin == 2 && in[0]->type.dtype == DT_F32 && dtype_is_int(in[1]->type.dtype)) {
		/* an integer exponent known at import time: the same pow with it as f32 */
		Tensor *e = evaluate(im, in[1], 0);
		if (e) {
			Tensor *f = tensor_new(DT_F32, &e->type.shape);
			for (int64_t k = 0; k < tensor_numel(e); k++)
				tensor_set_f(f, k, (double)tensor_get_i(e, k));
			tensor_free(e);
			char *nm = xasprintf("%s_f32", in[1]->name);
			Value *c = constant(im, nm, f);
			free(nm);
			if (!c)
				return false;
			in[1] = c;
		}
	}
	if (m->op == OP_POW && nin == 2 && in[0]->type.dtype != DT_F32) {
		fail(im, "a base of %s is not supported (gdcc's pow takes an f32 base)", dtype_name(in[0]->type.dtype));
		return false;
	}
	if ((m->op == OP_SOFTMAX || m->op == OP_LOGSOFTMAX) && im->opset < 13)
		return old_softmax(im, np, m->op, in[0]);
	/* results gdcc can give */
	int nout = (int)np->n_output;
	while (nout > 1 && !np->output[nout - 1][0])
		nout--;
	if (m->op == OP_MAXPOOL && nout > 1) {
		fail(im, "its Indices result is not supported");
		return false;
	}
	Node *n = add_node(im, m->op, in, nin, np, nout);
	if (!n) {
		fail(im, "a result name is defined twice");
		return false;
	}
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
			if (tm && cnt == 1 && tm[0]) {
				free(tm);
				fail(im, "training_mode = 1 is not supported (inference only)");
				return false;
			}
			free(tm);
		}
		break;
	case OP_REDUCE_MEAN:
		ints_operand(im, np, 1, n, "axes");
		break;
	case OP_RESHAPE:
		if (!ints_operand(im, np, 1, n, "shape") && !att(np, "shape"))
			fail(im, "no shape");
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
			if (a)
				node_set_ints(n, "pads", a->ints, (int)a->n_ints);
		}
		break;
	case OP_CONSTANT_OF_SHAPE: {
		ints_operand(im, np, 0, n, "shape");
		const Onnx__AttributeProto *a = att(np, "value");
		if (a && a->t) {
			char *err = NULL;
			Tensor *t = tensor_of(a->t, &err);
			if (!t) {
				fail(im, "%s", err);
				free(err);
				return false;
			}
			node_set_float(n, "value", tensor_get_f(t, 0));
			node_set_dtype(n, "dtype", t->type.dtype);
			tensor_free(t);
		}
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
static bool is_initializer(const Onnx__GraphProto *gp, const char *name)
{
	for (size_t i = 0; i < gp->n_initializer; i++)
		if (gp->initializer[i]->name && strcmp(gp->initializer[i]->name, name) == 0)
			return true;
	return false;
}

Graph *onnx_load(const char *path, Diag *d)
{
	return onnx_load_specialized(path, NULL, d);
}

Graph *onnx_load_specialized(const char *path, const char *dir, Diag *d)
{
	/* (see spec_input: scalars that gdcc takes as attributes, such as Clip's
	 * bounds and Pad's value, are read from the same test data) */
	size_t len;
	char *buf = read_file(path, &len);
	if (!buf) {
		diag_error(d, loc_at(path, 0, 0), "cannot read model: %s", strerror(errno));
		return NULL;
	}
	Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, (const uint8_t *)buf);
	free(buf);
	if (!mp || !mp->graph) {
		diag_error(d, loc_at(path, 0, 0), "not an ONNX model (malformed protobuf, or no graph)");
		if (mp)
			onnx__model_proto__free_unpacked(mp, NULL);
		return NULL;
	}
	Imp im = {.d = d, .file = path, .opset = 1, .ok = true, .spec_dir = dir};
	for (size_t i = 0; i < mp->n_opset_import; i++) {
		const char *dom = mp->opset_import[i]->domain;
		if (!dom || !dom[0] || strcmp(dom, "ai.onnx") == 0)
			im.opset = (int)mp->opset_import[i]->version;
	}
	const Onnx__GraphProto *gp = mp->graph;
	char *gname = xstrdup(gp->name && gp->name[0] ? gp->name : "model");
	for (char *p = gname; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			*p = '_';
	if (!((gname[0] >= 'a' && gname[0] <= 'z') || (gname[0] >= 'A' && gname[0] <= 'Z') || gname[0] == '_'))
		gname[0] = '_';
	im.g = graph_new(gname);
	free(gname);
	im.g->file = xstrdup(path);
	im.file = im.g->file;
	const char *slash = strrchr(path, '/');
	im.g->dir = slash ? xstrndup(path, (size_t)(slash - path)) : NULL;
	/* inputs (not the initializers old models also list) */
	int origin = -1;
	im.g->input_origin = xcalloc(gp->n_input ? gp->n_input : 1, sizeof *im.g->input_origin);
	for (size_t i = 0; i < gp->n_input && im.ok; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		if (is_initializer(gp, vi->name))
			continue;
		origin++;
		if (dir && vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && vi->type->tensor_type &&
		    (dtype_of(vi->type->tensor_type->elem_type) == DT_I64 || dtype_of(vi->type->tensor_type->elem_type) == DT_I32)) {
			char *p = xasprintf("%s/input_%d.pb", dir, origin), *err = NULL;
			Tensor *t = onnx_load_tensor(p, &err);
			free(p);
			free(err);
			if (t) {
				Value *v = constant(&im, vi->name, t);
				if (v)
					sym_bind(&im, vi->name, v);
				continue;
			}
		}
		if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type) {
			diag_error(d, loc_at(path, 0, 0), "input '%s' is a %s, not a tensor: not supported by gdcc", vi->name,
				   !vi->type ? "value without a type"
				   : vi->type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? "sequence"
				   : vi->type->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE ? "optional"
				   : vi->type->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE ? "map" : "non-tensor value");
			im.ok = false;
			break;
		}
		const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
		DType dt = dtype_of(tt->elem_type);
		Shape s = {0};
		if (dt == DT_INVALID || !tt->shape || tt->shape->n_dim > MAX_RANK) {
			char what[64];
			snprintf(what, sizeof what, "ONNX data type %s", onnx_dtype_name(tt->elem_type));
			diag_error(d, loc_at(path, 0, 0), "input '%s': %s is not supported (gdcc takes f32, i32, i64, bool, rank 0 to %d, a known shape)",
				   vi->name, dt == DT_INVALID ? what : !tt->shape ? "a tensor of unknown rank" : "its rank",
				   MAX_RANK);
			im.ok = false;
			break;
		}
		s.rank = (int)tt->shape->n_dim;
		for (int k = 0; k < s.rank; k++) {
			const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
			if (dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || dm->dim_value < 0) {
				diag_error(d, loc_at(path, 0, 0), "input '%s': dimension %d is not a number (dynamic shapes are not supported)",
					   vi->name, k + 1);
				im.ok = false;
				break;
			}
			s.dim[k] = dm->dim_value;
		}
		if (!im.ok)
			break;
		char *name = ir_name(&im, vi->name);
		Value *v = graph_add_input(im.g, name, dt, &s, loc_at(path, 0, 0));
		free(name);
		sym_bind(&im, vi->name, v);
		im.g->input_origin[im.g->ninputs - 1] = origin;
	}
	for (size_t i = 0; i < gp->n_initializer && im.ok; i++) {
		char *err = NULL;
		Tensor *t = tensor_of(gp->initializer[i], &err);
		if (!t) {
			diag_error(d, loc_at(path, 0, 0), "initializer: %s", err);
			free(err);
			im.ok = false;
			break;
		}
		Value *v = constant(&im, gp->initializer[i]->name, t);
		if (v)
			sym_bind(&im, gp->initializer[i]->name, v);
	}
	for (size_t i = 0; i < gp->n_node && im.ok; i++)
		import_node(&im, gp->node[i]);
	im.node = NULL;
	for (size_t i = 0; i < gp->n_output && im.ok; i++) {
		Value *v = sym_value(&im, gp->output[i]->name);
		if (!v) {
			diag_error(d, loc_at(path, 0, 0), "output '%s' is not computed by the graph", gp->output[i]->name);
			im.ok = false;
		} else if (v->is_output) {
			diag_error(d, loc_at(path, 0, 0), "output '%s' is listed twice", gp->output[i]->name);
			im.ok = false;
		} else {
			graph_add_output(im.g, v, loc_at(path, 0, 0));
		}
	}
	for (int i = 0; i < im.nsyms; i++)
		free(im.syms[i].onnx);
	free(im.syms);
	onnx__model_proto__free_unpacked(mp, NULL);
	if (!im.ok) {
		graph_free(im.g);
		return NULL;
	}
	graph_prune(im.g);
	return im.g;
}
