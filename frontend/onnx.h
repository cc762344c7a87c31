/* The ONNX importer: a .onnx model (protobuf, opsets 1 to 17) becomes a
 * Graph, with shape-only subgraphs folded to the static attributes that
 * gdcc's ops take.  The protobuf code is generated at build time from
 * Debian's onnx.proto with protoc-c. */
#ifndef GDCC_ONNX_H
#define GDCC_ONNX_H

#include "ir.h"
#include "npy.h"

/* Read and import; NULL after errors (each names the node, its op and the
 * opset).  The graph is not yet verified. */
Graph *onnx_load(const char *path, Diag *d);
/* The same, specialized to the integer inputs in DIR/input_N.pb (the ONNX
 * test data): shapes are static in gdcc, so integer inputs that carry
 * shapes become constants.  Graph.input_origin maps the remaining inputs to
 * their N. */
Graph *onnx_load_specialized(const char *path, const char *dir, Diag *d);
/* A TensorProto file (the ONNX test data's input_N.pb); NULL and *err set
 * on failure. */
Tensor *onnx_load_tensor(const char *path, char **err);
/* Does the path name an ONNX model (by its extension)? */
bool onnx_is_model(const char *path);

#endif
