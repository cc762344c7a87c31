# The ONNX backend-test layout the generators here write (gen_einsum.py,
# gen_rnn.py, gen_dft.py): DIR/model.onnx, DIR/test_data_set_0/input_N.pb
# and output_N.pb, each a TensorProto named after its graph input or output.
import os
import onnx
from onnx import numpy_helper

def write_case(d, model, feeds, outs):
    """feeds, outs: [(name, numpy array)] in the graph's order."""
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, pairs in (("input", feeds), ("output", outs)):
        for i, (k, v) in enumerate(pairs):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(numpy_helper.from_array(v, k).SerializeToString())
