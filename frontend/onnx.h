/* The ONNX importer: a .onnx model (protobuf, opsets 1 to 17) becomes a
 * Graph, with shape-only subgraphs folded to the static attributes that
 * gdcc's ops take.  The protobuf code is generated at build time from
 * Debian's onnx.proto with protoc-c. */
#ifndef GDCC_ONNX_H
#define GDCC_ONNX_H

#include "ir.h"
#include "npy.h"

/* Read and import; NULL after errors (each names the file, and the node
 * with its op and the opset, or the input, output or initializer).  The
 * graph is not yet verified. */
Graph *onnx_load(const char *path, Diag *d);
/* The same from memory: `name` is the file name messages give (the fuzz
 * target's entry point).  The data need not outlive the call. */
Graph *onnx_load_buffer(const char *name, const uint8_t *data, size_t len, Diag *d);
/* The same, specialized to the integer inputs in DIR/input_N.pb (the ONNX
 * test data): shapes are static in gdcc, so integer inputs that carry
 * shapes become constants.  Graph.input_origin maps the remaining inputs to
 * their N. */
Graph *onnx_load_specialized(const char *path, const char *dir, Diag *d);
/* Values an ONNX model is specialized to (run's integer --input, -S / -c
 * --bind NAME=FILE.npy): a graph input of an integer type named `name`
 * becomes the constant t (its declared type must be t's), so that shapes
 * it decides are static; any input's value also answers where gdcc needs
 * a scalar when compiling (Clip's bounds, Resize's scales).  `used` is set
 * for each binding the import consumed. */
struct OnnxBinding {
	char *name;
	Tensor *t;
	bool used;
};
typedef struct OnnxBinding OnnxBinding;
Graph *onnx_load_bound(const char *path, const char *dir, OnnxBinding *binds, int nbinds, Diag *d);

/* A part of a test-data value (Graph.input_part, output_part): the whole
 * TensorProto, an OptionalProto's tensor, or element k >= 0 of a
 * SequenceProto (or of an OptionalProto's sequence).  gdcc's graphs hold
 * tensors: a sequence or optional input of the test data becomes one graph
 * input per tensor in it. */
enum { ONNX_WHOLE = -1, ONNX_OPTIONAL_TENSOR = -2 };
/* Part `part` of the value in a test-data file; NULL and *err on failure.
 * onnx_count_parts: a sequence's length (-1 and *err on failure). */
Tensor *onnx_load_part(const char *path, int part, char **err);
int onnx_count_parts(const char *path, char **err);

/* A TensorProto file (the ONNX test data's input_N.pb); NULL and *err set
 * on failure. */
Tensor *onnx_load_tensor(const char *path, char **err);
/* The same from memory. */
Tensor *onnx_tensor_from_buffer(const uint8_t *data, size_t len, char **err);
/* Does the path name an ONNX model (by its extension)? */
bool onnx_is_model(const char *path);

#endif
